sluice_test(snap LIBS sluice_log)
sluice_test(replay LIBS sluice_log sluice_queue TIMEOUT 300)
