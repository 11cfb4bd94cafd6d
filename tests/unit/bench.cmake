# The pure parts of sluice-bench (bench/): histogram, options, beanstalkd
# and Redis reply parsers. The benchmarks themselves never run under ctest.
if(TARGET sluice_benchlib)
	sluice_test(bench LIBS sluice_benchlib TIMEOUT 30)
endif()
