# Benchmark of the write-ahead log: the writer (fsync always, closed-loop
# producers) against pwrite + fdatasync of the same batches, and the
# preallocation methods (--prealloc). Run: build/bin/log_bench --prealloc
add_executable(log_bench ${CMAKE_CURRENT_SOURCE_DIR}/log_bench.c)
target_link_libraries(log_bench PRIVATE sluice_log)
