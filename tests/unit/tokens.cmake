# The token file of --auth, its hash, the roles' names and the limit on
# failed attempts (src/util/tokens.c).
sluice_test(tokens LIBS sluice_tokens sluice_util TIMEOUT 30)
