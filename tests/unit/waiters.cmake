# The index of waiting takes (src/server/core/waiters.c).
sluice_test(waiters LIBS sluice_server TIMEOUT 30)
