# The beanstalk command parser on arbitrary bytes.
sluice_fuzz(bsproto LIBS sluice_server)
