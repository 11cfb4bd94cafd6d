# sluice-bench: closed-loop client workloads against sluiced, beanstalkd
# or Redis (bench/compare.sh runs them all and writes docs/benchmarks.md).
# Its pure parts are sluice_benchlib (CMakeLists.txt). libsluice is linked
# into the benchmark only, as a program using it would.
add_executable(sluice-bench
	${CMAKE_CURRENT_LIST_DIR}/sluice_bench.c
	${CMAKE_CURRENT_LIST_DIR}/bench_result.c
	${CMAKE_CURRENT_LIST_DIR}/bench_sluice.c
	${CMAKE_CURRENT_LIST_DIR}/bench_libsluice.c
	${CMAKE_CURRENT_LIST_DIR}/bench_tcp.c
	${CMAKE_CURRENT_LIST_DIR}/bench_beanstalk.c
	${CMAKE_CURRENT_LIST_DIR}/bench_redis.c
	${CMAKE_CURRENT_LIST_DIR}/bench_http.c)
target_link_libraries(sluice-bench PRIVATE sluice_benchlib sluice_static
	sluice_proto sluice_util nng::nng Threads::Threads)

# The raw disk, the yardstick compare.sh prints before and after its runs:
# one small pwrite + fdatasync into a zero-filled file.
add_executable(fsync_probe ${CMAKE_CURRENT_LIST_DIR}/fsync_probe.c)
target_link_libraries(fsync_probe PRIVATE sluice_benchlib sluice_util PkgConfig::URING)

# limits-bench: a tube's flow limits against a running sluiced (rate
# exactness, a concurrency cap, the take path with and without limits);
# bench/limits.sh runs it and writes docs/benchmarks.md.
add_executable(limits-bench ${CMAKE_CURRENT_LIST_DIR}/limits_bench.c
	${CMAKE_CURRENT_LIST_DIR}/bench_client.c)
target_link_libraries(limits-bench PRIVATE sluice_static sluice_util
	Threads::Threads)
target_include_directories(limits-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR})

# take-path-bench: the queue's own cost of a take and an ack (no server),
# with and without limits; limits.sh builds it against an older tree too.
add_executable(take-path-bench ${CMAKE_CURRENT_LIST_DIR}/take_path_bench.c)
target_compile_definitions(take-path-bench PRIVATE TAKE_PATH_LIMITS)
target_link_libraries(take-path-bench PRIVATE sluice_queue)
# groups-bench: a drain with fair groups against one without, against a
# running sluiced; bench/groups.sh runs it and writes docs/benchmarks.md.
add_executable(groups-bench ${CMAKE_CURRENT_LIST_DIR}/groups_bench.c
	${CMAKE_CURRENT_LIST_DIR}/bench_client.c)
target_link_libraries(groups-bench PRIVATE sluice_static sluice_util
	Threads::Threads)
target_include_directories(groups-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR})
# flow-bench: graphs of dependencies (1 parent -> 100 children -> 1 join)
# drained against a plain tube of as many tasks, against a running sluiced;
# bench/flow.sh runs it and writes docs/benchmarks.md.
add_executable(flow-bench ${CMAKE_CURRENT_LIST_DIR}/flow_bench.c
	${CMAKE_CURRENT_LIST_DIR}/bench_client.c)
target_link_libraries(flow-bench PRIVATE sluice_static sluice_util
	Threads::Threads)
target_include_directories(flow-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR})

# read-probe: the latency of takes, peeks, stats and GET /metrics against
# a running sluiced under load; bench/slowdisk.sh runs it beside a mixed
# load on a server whose every flush is late.
add_executable(read-probe ${CMAKE_CURRENT_LIST_DIR}/read_probe.c
	${CMAKE_CURRENT_LIST_DIR}/bench_client.c)
target_link_libraries(read-probe PRIVATE sluice_benchlib sluice_static
	sluice_util Threads::Threads)
target_include_directories(read-probe PRIVATE ${CMAKE_CURRENT_LIST_DIR})
