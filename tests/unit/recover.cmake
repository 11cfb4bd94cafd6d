# Recovery: where it starts (snapshot or LSN 1).
sluice_test(recover LIBS sluice_log TIMEOUT 30)
