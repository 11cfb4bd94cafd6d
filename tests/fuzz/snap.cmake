sluice_fuzz(snap LIBS sluice_log)
