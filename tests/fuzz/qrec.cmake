# Queue records, apply and snapshot entries (see fuzz_qrec.c for the
# input format).
sluice_fuzz(qrec LIBS sluice_queue)
