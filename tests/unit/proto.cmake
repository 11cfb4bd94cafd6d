# The wire codec.
sluice_test(msg LIBS sluice_proto TIMEOUT 60)
# The replication protocol's codec (the fetch's token).
sluice_test(replcodec LIBS sluice_proto TIMEOUT 60)
# The cluster map in memory and its messages.
sluice_test(cmap LIBS sluice_proto TIMEOUT 60)
