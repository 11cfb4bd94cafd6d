# Tests of src/log.
sluice_test(rec LIBS sluice_log TIMEOUT 30)
sluice_test(seg LIBS sluice_log TIMEOUT 30)
sluice_test(logdir LIBS sluice_log TIMEOUT 30)
sluice_test(epochs LIBS sluice_log TIMEOUT 30)
sluice_test(durable LIBS sluice_log TIMEOUT 30)
sluice_test(wal LIBS sluice_log TIMEOUT 60)
sluice_test(wal_inflight LIBS sluice_log TIMEOUT 60)
sluice_test(torn LIBS sluice_log TIMEOUT 120)
sluice_test(fault LIBS sluice_log_fault TIMEOUT 120)

# torn and fault check what the log does with the bytes (cuts, injected
# errors), not what the disk does with an fdatasync; thousands of those
# cost tens of seconds on a busy disk. They run in memory (tmpfs) where
# the machine has one; rec..wal run on the disk of TMPDIR.
if(IS_DIRECTORY /dev/shm)
	set_tests_properties(${TEST_PREFIX}torn ${TEST_PREFIX}fault PROPERTIES
		ENVIRONMENT TMPDIR=/dev/shm)
endif()
