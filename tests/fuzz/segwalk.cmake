# sluice-log's walk of a segment (tools/sluice-log/sluice_log_walk.c), which goes on
# past damage, checked against the segment reader it must agree with
# (seg_scan_mem). The seed corpus is written by
# `test_logtool --corpus tests/fuzz/corpus/segwalk`.
sluice_fuzz(segwalk LIBS sluice_log)
foreach(t fuzz_segwalk_replay fuzz_segwalk)
	if(TARGET ${t})
		target_sources(${t} PRIVATE
			${PROJECT_SOURCE_DIR}/tools/sluice-log/sluice_log_walk.c)
		target_include_directories(${t} PRIVATE
			${PROJECT_SOURCE_DIR}/tools/sluice-log)
	endif()
endforeach()
