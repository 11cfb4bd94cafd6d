add_executable(recovery_bench recovery_bench.c)
target_link_libraries(recovery_bench PRIVATE sluice_log sluice_queue
	sluice_util)
add_executable(snapjob_bench snapjob_bench.c)
target_link_libraries(snapjob_bench PRIVATE sluice_log sluice_queue
	sluice_util)
add_executable(fault_probe fault_probe.c)
