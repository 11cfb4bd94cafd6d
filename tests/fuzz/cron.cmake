# A schedule's inputs: the cron expression a client sends, and its zone
# (a TZif file, or the footer's POSIX rule). The seed corpus is written by
# hand ('c' first: good and bad expressions; 'r': rules; 'z': the TZif
# files of two zones and cuts of them).
sluice_fuzz(cron LIBS sluice_util)
