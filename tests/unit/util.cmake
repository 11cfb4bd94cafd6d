sluice_test(util LIBS sluice_util)
