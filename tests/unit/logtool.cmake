# sluice-log (tools/sluice-log/) on directories built by the tests, and
# sluiced started on damaged ones. Needs the sluice-log and sluiced
# programs; skipped (77) when sluice-log is not built.
if(TARGET sluice_logtool)
	sluice_test(logtool LIBS sluice_logtool sluice_client_objs TIMEOUT 300)
	add_dependencies(test_logtool sluice-log sluiced)
	# fuzz_segwalk's check of the walk against seg_scan, run on
	# mutations.
	target_sources(test_logtool PRIVATE
		${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_segwalk.c)
endif()
