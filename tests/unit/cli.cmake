# The sluice tool: its pure helpers, then the real binary against a fake
# server inside the test.
sluice_test(cli LIBS sluice_cli sluice_proto nng::nng Threads::Threads)
target_sources(test_cli PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/lib/t_fake.c)
target_compile_definitions(test_cli PRIVATE
	SLUICE_CLI="$<TARGET_FILE:sluice_cmd>")
add_dependencies(test_cli sluice_cmd)
