sluice_test(http_body LIBS sluice_server TIMEOUT 30)
