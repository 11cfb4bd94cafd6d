sluice_test(metrics LIBS sluice_server TIMEOUT 30)
