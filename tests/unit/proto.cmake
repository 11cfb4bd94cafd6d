# The wire codec.
sluice_test(msg LIBS sluice_proto TIMEOUT 60)
# The replication protocol's codec (the fetch's token).
sluice_test(replcodec LIBS sluice_proto TIMEOUT 60)
# The cluster map in memory and its messages.
sluice_test(cmap LIBS sluice_proto TIMEOUT 60)
# A tube's move: move_out, move_in, move_end and their replies.
sluice_test(msg_move LIBS sluice_proto TIMEOUT 60)
# A message decoded and sent on encodes to the bytes it came as.
sluice_test(msg_relay LIBS sluice_proto TIMEOUT 60)
