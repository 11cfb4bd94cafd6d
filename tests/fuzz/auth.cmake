# --auth's inputs from others: the wire auth request (looked up in a token
# table) and the token file. The seed corpus is written by hand: requests
# ('q' first: a known token, near misses, the longest, too long, empty,
# cut, trailing bytes, a flag) and token files ('f' first: good, and one
# of each error).
sluice_fuzz(auth LIBS sluice_proto sluice_tokens)
