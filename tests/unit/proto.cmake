# The wire codec.
sluice_test(msg LIBS sluice_proto TIMEOUT 60)
