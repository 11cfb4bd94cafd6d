# The snapshot cadence (src/server/core/snapdue.c).
sluice_test(snapdue LIBS sluice_server TIMEOUT 30)
