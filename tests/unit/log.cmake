# Tests of src/log.
sluice_test(rec LIBS sluice_log TIMEOUT 30)
sluice_test(seg LIBS sluice_log TIMEOUT 30)
sluice_test(logdir LIBS sluice_log TIMEOUT 30)
sluice_test(wal LIBS sluice_log TIMEOUT 60)
sluice_test(torn LIBS sluice_log TIMEOUT 60)
sluice_test(fault LIBS sluice_log_fault TIMEOUT 120)
