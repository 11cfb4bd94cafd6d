# The arithmetic of the log's reservation (src/server/core/reserve.c).
sluice_test(reserve LIBS sluice_server TIMEOUT 30)
