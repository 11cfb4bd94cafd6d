# The arithmetic of the log's reservation (src/server/reserve.c).
sluice_test(reserve LIBS sluice_server TIMEOUT 30)
