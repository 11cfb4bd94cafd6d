sluice_test(net LIBS sluice_server TIMEOUT 60)
