# The replication protocol's decoders. The seed corpus is one encoding of
# each message (written by hand, one file per message and kind).
sluice_fuzz(repl LIBS sluice_proto)
