# The segment reader (seg_scan_mem), and sluice-log's walk of a segment
# checked against it. The seed corpus is written by
# `test_logtool --corpus tests/fuzz/corpus/seg`.
sluice_fuzz(seg LIBS sluice_log)
foreach(t fuzz_seg_replay fuzz_seg)
	if(TARGET ${t})
		target_sources(${t} PRIVATE
			${PROJECT_SOURCE_DIR}/tools/sluice_log_walk.c)
		target_include_directories(${t} PRIVATE
			${PROJECT_SOURCE_DIR}/tools)
	endif()
endforeach()
