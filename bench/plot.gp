# plot.gp - the chart of bench/compare.sh: ops/s by workload and number of
# connections, one bar per server set-up, log scale (the set-ups differ by
# orders of magnitude). Called as
#   gnuplot -e "datafile='chart.dat'; outfile='out.png'; nosluice=0" bench/plot.gp
# where chart.dat has one line per workload (lines starting # are skipped):
#   "put C=1" LIBSLUICE SLUICE_BS BS_F0 REDIS  ("-": not measured)
set terminal pngcairo size 960,540 font "sans,10"
set output outfile
set title "Client workloads, every server durable: ops/s (100-byte payloads, closed loop; higher is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [10:*]
set ylabel "ops/s (log scale)"
set grid ytics
set key outside bottom center horizontal maxrows 1
set datafile missing "-"
set xtics nomirror
# nosluice=1: sluice was not measured; leave its bars out.
if (!exists("nosluice")) nosluice = 0
if (nosluice) {
	plot datafile using 4:xtic(1) title "beanstalkd -f0 (binlog, fsync per write)" lc rgb "#d1495b", \
	     ''       using 5 title "Redis (appendfsync always)" lc rgb "#edae49"
} else {
	plot datafile using 2:xtic(1) title "sluice via libsluice (fsync always)" lc rgb "#1b6ca8", \
	     ''       using 3 title "sluice, beanstalk face" lc rgb "#00798c", \
	     ''       using 4 title "beanstalkd -f0 (binlog, fsync per write)" lc rgb "#d1495b", \
	     ''       using 5 title "Redis (appendfsync always)" lc rgb "#edae49"
}
