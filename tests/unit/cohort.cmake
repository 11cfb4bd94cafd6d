# The group commit's hold for its cohort (src/server/core/cohort.c).
sluice_test(cohort LIBS sluice_server TIMEOUT 30)
