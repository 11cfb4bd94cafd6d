# What each --auth role may send (src/server/ops/auth.c).
sluice_test(ops_auth LIBS sluice_server TIMEOUT 30)
