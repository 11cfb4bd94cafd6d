sluice_test(util LIBS sluice_util)
sluice_test(cron LIBS sluice_util)
