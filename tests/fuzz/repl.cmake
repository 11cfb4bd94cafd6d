# The replication protocol's decoders. The seed corpus is one encoding of
# each message (written by hand, one file per message and kind; fetch_token*
# are a fetch with its replication token, whole, empty and cut).
sluice_fuzz(repl LIBS sluice_proto)
