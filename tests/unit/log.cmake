# Tests of src/log.
sluice_test(rec LIBS sluice_log TIMEOUT 30)
