# The token file of --auth, its hash and what each role may do
# (src/util/tokens.c).
sluice_test(tokens LIBS sluice_tokens sluice_util TIMEOUT 30)
