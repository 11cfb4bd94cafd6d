# libsluice without a server: URL lists, and every call against a fake
# responder inside the test (redirection, connection loss, timeouts).
sluice_test(client LIBS sluice_client_objs TIMEOUT 60)
target_sources(test_client PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/lib/t_fake.c)
