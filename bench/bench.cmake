# sluice-bench: closed-loop client workloads against sluiced or beanstalkd
# (bench/compare.sh runs both and writes docs/benchmarks.md). The pure
# parts (histogram, options, beanstalkd reply parser) form a library the
# unit tests link too.
add_library(sluice_benchlib STATIC
	${CMAKE_CURRENT_LIST_DIR}/bench_hist.c
	${CMAKE_CURRENT_LIST_DIR}/bench_opts.c
	${CMAKE_CURRENT_LIST_DIR}/bench_bsreply.c)
target_include_directories(sluice_benchlib PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sluice_benchlib PUBLIC m)

add_executable(sluice-bench
	${CMAKE_CURRENT_LIST_DIR}/sluice_bench.c
	${CMAKE_CURRENT_LIST_DIR}/bench_result.c
	${CMAKE_CURRENT_LIST_DIR}/bench_sluice.c
	${CMAKE_CURRENT_LIST_DIR}/bench_lib.c
	${CMAKE_CURRENT_LIST_DIR}/bench_beanstalk.c)
# libsluice as applications link it: the archive, whose internal names are
# local, so its copy of the codec does not clash with sluice_proto's. It
# comes first so that sluice_strerror, public in both, is taken from it.
target_link_libraries(sluice-bench PRIVATE sluice_benchlib sluice_static
	sluice_proto sluice_util nng::nng Threads::Threads)
