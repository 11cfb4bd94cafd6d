# sluice-log, the offline tool for a data directory (verify, dump, stats,
# state, repair). It links the log and queue libraries only: no network.
# The code is an archive too, so tests and the segment fuzz target can
# reach the walker and the directory checks.
add_library(sluice_logtool STATIC
	${CMAKE_CURRENT_LIST_DIR}/sluice_log_dir.c
	${CMAKE_CURRENT_LIST_DIR}/sluice_log_dump.c
	${CMAKE_CURRENT_LIST_DIR}/sluice_log_out.c
	${CMAKE_CURRENT_LIST_DIR}/sluice_log_salvage.c
	${CMAKE_CURRENT_LIST_DIR}/sluice_log_stats.c
	${CMAKE_CURRENT_LIST_DIR}/sluice_log_verify.c
	${CMAKE_CURRENT_LIST_DIR}/sluice_log_walk.c)
target_include_directories(sluice_logtool PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sluice_logtool PUBLIC sluice_log sluice_queue
	sluice_util)

add_executable(sluice-log ${CMAKE_CURRENT_LIST_DIR}/sluice_log.c)
target_link_libraries(sluice-log PRIVATE sluice_logtool)
include(GNUInstallDirs)
install(TARGETS sluice-log RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
