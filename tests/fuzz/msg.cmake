# The wire decoders. The seed corpus is written by `test_msg --corpus DIR`
# (the encodings of every sample message plus broken ones).
sluice_fuzz(msg LIBS sluice_proto)
