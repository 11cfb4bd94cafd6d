# The HTTP face's head parser and chunked decoder (the first byte of an
# input picks one: even the head, odd the chunks).
sluice_fuzz(http_head LIBS sluice_server)
