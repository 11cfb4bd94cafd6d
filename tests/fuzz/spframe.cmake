# The SP-over-TCP framing the tcp:// face reads (face/sp_frame.c): the
# peer's header, lengths against the limit (the 4 KiB pre-auth cap
# included), backtraces. The seed corpus is real frames: nng's req0
# header and libsluice's requests (the msg corpus) in SP messages.
sluice_fuzz(spframe LIBS sluice_server)
