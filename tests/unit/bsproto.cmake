# The beanstalk protocol's parser and tube-name mapping (pure).
sluice_test(bs_proto LIBS sluice_server TIMEOUT 60)
