# The token file of --auth, its hash and what each role may do
# (src/server/auth.c).
sluice_test(tokens LIBS sluice_auth sluice_util TIMEOUT 30)
