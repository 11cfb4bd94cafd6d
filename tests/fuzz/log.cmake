# Fuzz targets of src/log: the record decoder and the segment scanner.
sluice_fuzz(rec LIBS sluice_log)
sluice_fuzz(seg LIBS sluice_log)
