sluice_test(snap LIBS sluice_log)
