# The wire decoders. The seed corpus is written by `test_msg --corpus DIR`
# (the encodings of every sample message plus broken ones) and
# `test_msg_relay --corpus DIR` (q-relay-*, r-relay-*: a message of every
# list, those that cover code the others do not).
sluice_fuzz(msg LIBS sluice_proto)
