#!/usr/bin/env bash
# compare.sh - sluice against beanstalkd and Redis, client workloads, in
# one run.
#
# Starts, for every measurement, a fresh server on a temporary directory and
# a free port of 127.0.0.1 below the ephemeral range:
#   libsluice    build/bin/sluiced --fsync always (fdatasync before a reply,
#                group commit), driven through libsluice: a thread and a
#                handle per connection (sluice-bench --target libsluice)
#   sluice-bs    the same sluiced driven through its beanstalk face
#                (--beanstalk) by the beanstalkd load generator
#   bs-f0        beanstalkd -b DIR -f 0 (binlog, fsync after every write:
#                durable like sluice)
#   redis        redis-server --appendonly yes --appendfsync always --save ''
#                (AOF fsync'd before replies): a stream and a consumer
#                group (XADD; XREADGROUP COUNT 1; XACK + XDEL pipelined)
#   http         the same sluiced with --http, driven through its task API
#                (POST /v1/tubes/T/tasks over keep-alive HTTP/1.1, one
#                request in flight per connection): put at C = 32 only,
#                against libsluice's put at C = 32 of the same run
# and runs build/bin/sluice-bench on it: put, drain and mixed, at C = 1 and
# C = 32 connections, 100-byte payloads, plus put at C = 32 with libsluice's
# batch put of 100 tasks and a drain at C = 32 that takes up to 100 tasks
# and acks them with one batch ack. Each run also reports the server
# process's CPU time (user + system) per op, and the load generator's own
# (every thread of it: for libsluice, the client library's work).
# build/bin/fsync_probe measures one raw 100-byte pwrite + fdatasync (p50
# of 2000) before and after everything.
#
# With --repeat R the whole set runs R times in interleaved rounds (round
# 1 of every cell, then round 2, ...), each run on a fresh server, and each
# figure is the median of its R values. Then it prints a table, writes it
# (with the command, the commit, the date, the raw fsync p50s and the raw
# JSON lines) into docs/benchmarks.md between the client-workloads markers,
# and draws docs/benchmarks-clients.png with gnuplot.
#
# Sizing, so each run takes a few seconds whatever the server's speed:
#   put    stops after --secs (default 5) or 1,000,000 tasks (batch put:
#          10,000,000);
#   drain  drains N = (put rate of that set-up at the same C, round 1) x
#          --secs / 2 tasks (1,000..300,000), preloaded untimed, until the
#          tube is empty or 3 x --secs passed;
#   drain-b100 drains N = (the batch put's rate, round 1) x --secs / 2
#          tasks (10,000..1,000,000), as drain does;
#   mixed  runs --secs after a preload of 3 s of the set-up's C = 1 put
#          rate (500..10,000).
#
# Usage: bench/compare.sh [--skip-sluice] [--secs N] [--repeat R] [--no-docs]
#                         [--keep] [--fsync never|DUR] [http]
#   http           only the HTTP target: libsluice's and HTTP's put at
#                  C = 32, side by side, and their ratio (docs/ untouched)
#   --skip-sluice  measure only beanstalkd and Redis (sluice's columns show
#                  "-"); without it a missing build/bin/sluiced is an error
#   --secs N       seconds per put and mixed run (default 5)
#   --repeat R     R interleaved rounds; each figure is the median of R
#                  (default 1)
#   --no-docs      print the table, leave docs/ alone
#   --keep         keep the temporary directory (server logs, raw results)
#   --fsync P      every server with a policy that waits for no disk: never
#                  (sluiced --fsync never, beanstalkd -F, Redis appendfsync
#                  no) or a duration (sluiced --fsync DUR, beanstalkd -f MS,
#                  Redis appendfsync everysec, its only interval); the
#                  columns keep their names; implies --no-docs
# Environment: BUILD (default build), BENCH_TMPDIR (where the servers' data
# goes; default BUILD; must be a real disk, not tmpfs, or fsync is free),
# SLUICED_ARGS (more arguments for every sluiced, e.g. "--wal-commit
# uring-auto" to measure another commit; use --no-docs with it).
# Build first: `make build` (or `make bench`, which installs beanstalkd,
# redis-server and gnuplot, builds and runs this script).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
BENCH=$BUILD/bin/sluice-bench
PROBE=$BUILD/bin/fsync_probe
SLUICED=$BUILD/bin/sluiced
SLUICED_ARGS=${SLUICED_ARGS:-}
DOC=docs/benchmarks.md
PNG=docs/benchmarks-clients.png
BEGIN_MARK='<!-- client-workloads:begin -->'
END_MARK='<!-- client-workloads:end -->'
CMDLINE="bench/compare.sh${*:+ $*}"

skip_sluice=0
secs=5
repeat=1
write_docs=1
keep=0
only_http=0
policy=always
while [ $# -gt 0 ]; do
	case $1 in
	--skip-sluice) skip_sluice=1 ;;
	--secs)
		[ $# -ge 2 ] || { echo "compare.sh: --secs needs a value" >&2; exit 2; }
		secs=$2
		shift
		;;
	--repeat)
		[ $# -ge 2 ] || { echo "compare.sh: --repeat needs a value" >&2; exit 2; }
		repeat=$2
		shift
		;;
	--no-docs) write_docs=0 ;;
	--fsync)
		[ $# -ge 2 ] || { echo "compare.sh: --fsync needs a value" >&2; exit 2; }
		policy=$2
		write_docs=0
		shift
		;;
	--keep) keep=1 ;;
	http) only_http=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "compare.sh: unknown argument '$1' (--help)" >&2
		exit 2
		;;
	esac
	shift
done
for v in "$secs" "$repeat"; do
	case $v in
	'' | *[!0-9]* | 0)
		echo "compare.sh: --secs and --repeat want whole numbers > 0" >&2
		exit 2
		;;
	esac
done
# What each server is given for the policy.
if [ "$policy" = always ]; then
	bs_sync=(-f 0) redis_sync=always
elif [ "$policy" = never ]; then
	bs_sync=(-F) redis_sync=no
elif [[ $policy =~ ^([1-9][0-9]{0,5})(ms|s)$ ]]; then
	ms=${BASH_REMATCH[1]}
	[ "${BASH_REMATCH[2]}" = ms ] || ms=$((ms * 1000))
	bs_sync=(-f "$ms") redis_sync=everysec
else
	echo "compare.sh: --fsync takes never or a duration (10ms, 1s), not '$policy'" >&2
	exit 2
fi
[ "$secs" -le 600 ] && [ "$repeat" -le 99 ] || {
	echo "compare.sh: --secs at most 600, --repeat at most 99" >&2
	exit 2
}

die() {
	echo "compare.sh: $*" >&2
	exit 1
}

# ---- what is needed ---------------------------------------------------

[ -x "$BENCH" ] || die "$BENCH not found: build first (make build, or make bench)"
[ -x "$PROBE" ] || die "$PROBE not found: build first (make build, or make bench)"
if [ $skip_sluice = 0 ] && [ ! -x "$SLUICED" ]; then
	die "$SLUICED not found: sluiced is not built (make build). To measure only beanstalkd and Redis, run bench/compare.sh --skip-sluice"
fi
BEANSTALKD=$(command -v beanstalkd || true)
[ -n "$BEANSTALKD" ] || [ $only_http = 1 ] || die "beanstalkd not found (apt-get install beanstalkd, or make bench-deps)"
REDIS=$(command -v redis-server || true)
[ -n "$REDIS" ] || [ $only_http = 1 ] || die "redis-server not found (apt-get install redis-server, or make bench-deps)"
GNUPLOT=$(command -v gnuplot || true)

mkdir -p "${BENCH_TMPDIR:-$BUILD}"
TMP=$(mktemp -d "${BENCH_TMPDIR:-$BUILD}/compare.XXXXXX")
TMP=$(cd "$TMP" && pwd)
if [ "$(stat -f -c %T "$TMP")" = tmpfs ]; then
	echo "compare.sh: warning: $TMP is on tmpfs, where fsync costs nothing; set BENCH_TMPDIR to a directory on a disk" >&2
fi

# ---- processes: every one started is stopped on the way out ------------

PIDS=()

# Stops `pid` (one this script started): TERM, up to 10 s to exit (a
# server may sync on its way out), then KILL.
stop_pid() {
	local pid=$1 i
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 1 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	local pid
	for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
		stop_pid "$pid"
	done
	PIDS=()
	if [ $keep = 1 ]; then
		echo "compare.sh: kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A TCP port nothing listens on now, below the ephemeral range (32768+),
# so that no client's outgoing connection holds it when a server binds.
free_port() {
	local p i
	for i in $(seq 1 100); do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	die "no free port found"
}

# Waits until $1 (a pid) accepts connections on port $2, at most 10 s.
wait_listening() {
	local pid=$1 port=$2 log=$3 i
	for i in $(seq 1 200); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "compare.sh: the server exited at start; its log:" >&2
			tail -n 20 "$log" >&2 || true
			exit 1
		fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
		sleep 0.05
	done
	echo "compare.sh: the server does not listen on port $port after 10 s; its log:" >&2
	tail -n 20 "$log" >&2 || true
	exit 1
}

# Waits until the HTTP face on port $1 serves (/health answers 200: the
# port listens during recovery already), at most 10 s.
wait_http_serving() {
	local port=$1 i line
	for i in $(seq 1 200); do
		if exec 3<>"/dev/tcp/127.0.0.1/$port"; then
			printf 'GET /health HTTP/1.0\r\n\r\n' >&3
			read -r -t 2 line <&3 || line=
			exec 3>&-
			case $line in *" 200 "*) return 0 ;; esac
		fi 2>/dev/null
		sleep 0.05
	done
	die "the HTTP face on port $port does not serve after 10 s"
}

SERVER_PID=
SERVER_URL=
SERVER_LOG=
# Starts a fresh server of kind $1 on a new directory and port. Each is
# started directly (no wrapper), so $! is the server's own pid, the one
# whose CPU time sluice-bench reads.
start_server() {
	local kind=$1 dir port
	dir=$(mktemp -d "$TMP/$kind.XXXXXX")
	port=$(free_port)
	SERVER_LOG=$dir.log
	case $kind in
	libsluice)
		# shellcheck disable=SC2086
		"$SLUICED" --data "$dir" --listen "tcp://127.0.0.1:$port" \
			--fsync "$policy" $SLUICED_ARGS >"$SERVER_LOG" 2>&1 &
		;;
	http)
		# clients use the HTTP port; the nng one is not used
		# shellcheck disable=SC2086
		"$SLUICED" --data "$dir" --listen "tcp://127.0.0.1:$(free_port)" \
			--http "127.0.0.1:$port" --fsync "$policy" $SLUICED_ARGS \
			>"$SERVER_LOG" 2>&1 &
		;;
	sluice-bs)
		# clients use the beanstalk port; the nng one is not used
		# shellcheck disable=SC2086
		"$SLUICED" --data "$dir" --listen "tcp://127.0.0.1:$(free_port)" \
			--beanstalk "127.0.0.1:$port" --fsync "$policy" $SLUICED_ARGS \
			>"$SERVER_LOG" 2>&1 &
		;;
	bs-f0)
		"$BEANSTALKD" -l 127.0.0.1 -p "$port" -b "$dir" "${bs_sync[@]}" \
			>"$SERVER_LOG" 2>&1 &
		;;
	redis)
		"$REDIS" --port "$port" --bind 127.0.0.1 --dir "$dir" \
			--appendonly yes --appendfsync "$redis_sync" --save '' \
			--daemonize no >"$SERVER_LOG" 2>&1 &
		;;
	esac
	SERVER_PID=$!
	PIDS+=("$SERVER_PID")
	SERVER_URL=tcp://127.0.0.1:$port
	wait_listening "$SERVER_PID" "$port" "$SERVER_LOG"
	[ "$kind" != http ] || wait_http_serving "$port"
}

stop_server() {
	stop_pid "$SERVER_PID"
	local keep_pids=() pid
	for pid in "${PIDS[@]}"; do
		[ "$pid" = "$SERVER_PID" ] || keep_pids+=("$pid")
	done
	PIDS=("${keep_pids[@]+"${keep_pids[@]}"}")
}

# A number field of a JSON line: json_field LINE NAME
json_field() {
	sed -n "s/.*\"$2\":\\([-0-9.]*\\).*/\\1/p" <<<"$1"
}

RESULTS=$TMP/results.jsonl
: >"$RESULTS"
# VALS[figure/cell]: the values of every round, space-separated; a cell is
# kind/workload/C. Figures: ops (ops/s), cpu (server CPU us per op), ccpu
# (the load generator's own CPU us per op), p50 and p99 (us).
declare -A VALS
# Sizes fixed in round 1 and kept for the others, so that every round
# runs the same workload.
declare -A DRAIN_N MIXED_PRELOAD

target_of() {
	case $1 in
	libsluice) echo libsluice ;;
	sluice-bs | bs-f0) echo beanstalkd ;;
	redis) echo redis ;;
	http) echo http ;;
	esac
}

# run ROUND KIND WORKLOAD C LABEL ARGS...: one run on a fresh server; LABEL
# names the cell's workload (put, put-b100, drain, drain-b100, mixed).
run() {
	local round=$1 kind=$2 workload=$3 c=$4 label=$5 line cell f v
	shift 5
	printf '  round %s/%s  %-9s %-8s C=%-2s ' "$round" "$repeat" "$kind" \
		"$label" "$c" >&2
	start_server "$kind"
	if ! line=$(timeout -k 5 600 "$BENCH" --target "$(target_of "$kind")" \
		--url "$SERVER_URL" --workload "$workload" -c "$c" \
		-s 100 --timeout 10s --limit 5m --server-pid "$SERVER_PID" \
		--json "$@" | tail -n 1); then
		echo >&2
		echo "compare.sh: sluice-bench failed on $kind ($label, C=$c); the server's log:" >&2
		tail -n 20 "$SERVER_LOG" >&2 || true
		exit 1
	fi
	stop_server
	case $line in
	'{'*) ;;
	*) die "sluice-bench printed no JSON line for $kind $label C=$c" ;;
	esac
	echo "{\"server\":\"$kind\",\"round\":$round,${line#\{}" >>"$RESULTS"
	cell=$kind/$label/$c
	for f in ops:ops_per_sec cpu:server_cpu_us_per_op \
		ccpu:client_cpu_us_per_op p50:p50_us p99:p99_us; do
		v=$(json_field "$line" "${f#*:}")
		case $v in
		'' | -*) continue ;; # unknown (the CPU time could not be read)
		esac
		VALS[${f%%:*}/$cell]="${VALS[${f%%:*}/$cell]:-} $v"
	done
	printf '%10.0f ops/s  server CPU %6s us/op  p50 %6.0f us\n' \
		"$(json_field "$line" ops_per_sec)" \
		"$(json_field "$line" server_cpu_us_per_op)" \
		"$(json_field "$line" p50_us)" >&2
}

clamp() { # clamp VALUE LO HI (integers)
	local v=$1
	[ "$v" -ge "$2" ] || v=$2
	[ "$v" -le "$3" ] || v=$3
	echo "$v"
}

# The median of the values of VALS[$1] (the lower middle one for an even
# count), or nothing.
median() {
	local vals=${VALS[$1]:-} n
	[ -n "$vals" ] || return 0
	n=$(wc -w <<<"$vals")
	tr ' ' '\n' <<<"$vals" | sed '/^$/d' | sort -g | sed -n "$(((n + 1) / 2))p"
}

KINDS=(libsluice sluice-bs bs-f0 redis)
[ $skip_sluice = 0 ] || KINDS=(bs-f0 redis)
if [ $only_http = 1 ] && [ $skip_sluice = 1 ]; then
	die "http measures sluice: it does not go with --skip-sluice"
fi
CONNS=(1 32)
WORKLOADS=(put drain mixed)

# The disk, for reading the durable columns: p50 of a raw 100-byte pwrite +
# fdatasync (a shared virtual disk can change speed several times over
# within minutes).
fsync_p50() {
	local line
	line=$(timeout -k 5 120 "$PROBE" --dir "$TMP" --count 2000 \
		--bytes 100 --max-time 60s --json | tail -n 1) ||
		die "fsync_probe failed in $TMP"
	json_field "$line" p50_us
}

[ $only_http = 0 ] || echo "compare.sh: http: put at C = 32 through libsluice and through the HTTP task API; 100-byte payloads; $repeat interleaved round(s); data in $TMP" >&2
[ $only_http = 1 ] || echo "compare.sh: ${KINDS[*]}; put, drain, mixed at C = ${CONNS[*]}$([ $skip_sluice = 1 ] || echo ", put --batch 100 and drain --batch 100 at C = 32 (libsluice)"); 100-byte payloads; $repeat interleaved round(s); data in $TMP" >&2
[ "$policy" = always ] || echo "compare.sh: every server without a sync before its replies: sluiced --fsync $policy, beanstalkd ${bs_sync[*]}, Redis appendfsync $redis_sync" >&2
FSYNC_BEFORE=$(fsync_p50)
echo "compare.sh: raw 100-byte pwrite + fdatasync, p50 $FSYNC_BEFORE us" >&2

# HTTP put at C = 32 against libsluice's put at C = 32, same run.
http_line() {
	echo "put over HTTP (POST /v1/tubes/T/tasks, keep-alive) at C = 32: $(fig ops http/put/32) ops/s, server CPU $(fig cpu http/put/32) µs/op, p50 / p99 $(fig p50 http/put/32) / $(fig p99 http/put/32) µs: $(ratio ops http/put/32 libsluice/put/32) x libsluice's put at C = 32"
}
if [ $only_http = 1 ]; then
	for round in $(seq 1 "$repeat"); do
		run "$round" libsluice put 32 put -n 1000000 --duration "${secs}s"
		run "$round" http put 32 put -n 1000000 --duration "${secs}s"
	done
fi
for round in $(seq 1 "$repeat"); do
	[ $only_http = 0 ] || break
	for c in "${CONNS[@]}"; do
		for kind in "${KINDS[@]}"; do
			run "$round" "$kind" put "$c" put -n 1000000 \
				--duration "${secs}s"
		done
		for kind in "${KINDS[@]}"; do
			if [ -z "${DRAIN_N[$kind/$c]:-}" ]; then
				rate=$(median "ops/$kind/put/$c")
				rate=${rate%.*}
				DRAIN_N[$kind/$c]=$(clamp $((${rate:-0} * secs / 2)) 1000 300000)
			fi
			run "$round" "$kind" drain "$c" drain \
				-n "${DRAIN_N[$kind/$c]}" --duration "$((secs * 3))s"
		done
		for kind in "${KINDS[@]}"; do
			if [ -z "${MIXED_PRELOAD[$kind]:-}" ]; then
				rate=$(median "ops/$kind/put/1")
				rate=${rate%.*}
				MIXED_PRELOAD[$kind]=$(clamp $((${rate:-0} * 3)) 500 10000)
			fi
			run "$round" "$kind" mixed "$c" mixed \
				--duration "${secs}s" --preload "${MIXED_PRELOAD[$kind]}"
		done
	done
	if [ $skip_sluice = 0 ]; then
		run "$round" libsluice put 32 put-b100 -n 10000000 --batch 100 \
			--duration "${secs}s"
		if [ -z "${DRAIN_N[libsluice/b100]:-}" ]; then
			rate=$(median "ops/libsluice/put-b100/32")
			rate=${rate%.*}
			DRAIN_N[libsluice/b100]=$(clamp $((${rate:-0} * secs / 2)) 10000 1000000)
		fi
		run "$round" libsluice drain 32 drain-b100 \
			-n "${DRAIN_N[libsluice/b100]}" --batch 100 \
			--duration "$((secs * 3))s"
		run "$round" http put 32 put -n 1000000 --duration "${secs}s"
	fi
done
FSYNC_AFTER=$(fsync_p50)
echo "compare.sh: raw 100-byte pwrite + fdatasync, p50 $FSYNC_AFTER us" >&2

# ---- the table --------------------------------------------------------

fig() { # fig FIGURE CELL: the median, rounded (below 10: to 0.1), or "-"
	local m
	m=$(median "$1/$2")
	if [ -n "$m" ]; then
		awk -v m="$m" 'BEGIN { printf(m < 10 ? "%.1f" : "%.0f", m) }'
	else
		printf -- '-'
	fi
}

ratio() { # ratio FIGURE CELL_A CELL_B: a / b with two decimals, or "-"
	local a b
	a=$(median "$1/$2")
	b=$(median "$1/$3")
	if [ -n "$a" ] && [ -n "$b" ]; then
		awk -v a="$a" -v b="$b" \
			'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'
	else
		printf -- '-'
	fi
}

# The workload as the table names it.
wname() {
	case $1 in
	put-b100) echo "put, batch of 100" ;;
	drain-b100) echo "drain, take 100 + batch ack" ;;
	*) echo "$1" ;;
	esac
}

# row WORKLOAD C FIGURE NAME: one line of the table, with the ratios of
# that figure
row() {
	local w=$1 c=$2 f=$3 name=$4 k cells=
	for k in libsluice sluice-bs bs-f0 redis; do
		cells="$cells | $(fig "$f" "$k/$w/$c")"
	done
	echo "| $(wname "$w") | $c | $name$cells | $(ratio "$f" "libsluice/$w/$c" "redis/$w/$c") | $(ratio "$f" "sluice-bs/$w/$c" "redis/$w/$c") |"
}

# the latencies, "p50 / p99"
lat_row() {
	local w=$1 c=$2 k cells=
	for k in libsluice sluice-bs bs-f0 redis; do
		if [ -n "${VALS[p50/$k/$w/$c]:-}" ]; then
			cells="$cells | $(fig p50 "$k/$w/$c") / $(fig p99 "$k/$w/$c")"
		else
			cells="$cells | -"
		fi
	done
	echo "| $(wname "$w") | $c | p50 / p99 µs$cells | | |"
}

if [ $only_http = 1 ]; then
	echo >&2
	http_line
	echo "raw 100-byte pwrite + fdatasync p50: $FSYNC_BEFORE us before, $FSYNC_AFTER us after"
	exit 0
fi

TABLE=$TMP/table.md
{
	echo "| workload | C | figure | libsluice | sluice beanstalk face | beanstalkd -f0 | Redis always | libsluice / Redis | face / Redis |"
	echo "|---|--:|---|--:|--:|--:|--:|--:|--:|"
	for w in "${WORKLOADS[@]}"; do
		for c in "${CONNS[@]}"; do
			row "$w" "$c" ops "ops/s"
			row "$w" "$c" cpu "server CPU µs/op"
			row "$w" "$c" ccpu "client CPU µs/op"
			lat_row "$w" "$c"
		done
	done
	row put-b100 32 ops "tasks/s"
	row put-b100 32 cpu "server CPU µs/task"
	lat_row put-b100 32
	row drain-b100 32 ops "tasks/s"
	row drain-b100 32 cpu "server CPU µs/task"
	lat_row drain-b100 32
} >"$TABLE"
echo >&2
cat "$TABLE"
[ $skip_sluice = 1 ] || http_line
echo "raw 100-byte pwrite + fdatasync p50: $FSYNC_BEFORE us before, $FSYNC_AFTER us after"

[ $write_docs = 1 ] || exit 0

# ---- the chart --------------------------------------------------------

DAT=$TMP/chart.dat
{
	echo "# label libsluice sluice-bs bs-f0 redis"
	for w in "${WORKLOADS[@]}"; do
		for c in "${CONNS[@]}"; do
			echo "\"$w C=$c\" $(fig ops "libsluice/$w/$c") $(fig ops "sluice-bs/$w/$c") $(fig ops "bs-f0/$w/$c") $(fig ops "redis/$w/$c")"
		done
	done
} >"$DAT"
chart="and the chart into $PNG"
if [ -n "$GNUPLOT" ]; then
	timeout 60 "$GNUPLOT" -e "datafile='$DAT'; outfile='$ROOT/$PNG'; nosluice=$skip_sluice" \
		bench/plot.gp ||
		die "gnuplot failed"
else
	chart="($PNG was not redrawn)"
	echo "compare.sh: warning: gnuplot not found (apt-get install gnuplot-nox, or make bench-deps): $PNG not redrawn" >&2
fi

# ---- docs/benchmarks.md -----------------------------------------------

SECTION=$TMP/section.md
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD -- . ':(exclude)docs' 2>/dev/null; then
	rev="$rev (with local changes)"
fi
{
	echo "$BEGIN_MARK"
	echo "Measured $(date -u +%Y-%m-%d) with \`$CMDLINE\` at commit $rev:"
	echo "$(nproc) cores, Linux $(uname -r), data on $(df --output=fstype "$TMP" | tail -n 1);"
	echo "raw 100-byte \`pwrite\` + \`fdatasync\` p50 (\`fsync_probe\`, 2000 writes): **$FSYNC_BEFORE µs** before the runs, **$FSYNC_AFTER µs** after;"
	echo "$("$BEANSTALKD" -v 2>&1 | head -n 1), Redis $("$REDIS" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p');"
	echo "${secs} s per put and mixed run; median of $repeat interleaved round(s) per figure, each run on a fresh server."
	[ $skip_sluice = 0 ] || echo "sluice was not measured in this run (\`--skip-sluice\`): its columns show \"-\"."
	echo
	cat "$TABLE"
	echo
	[ $skip_sluice = 1 ] || { http_line; echo; }
	echo "![ops/s by workload](benchmarks-clients.png)"
	echo
	echo "<details><summary>Raw results (one sluice-bench JSON line per run)</summary>"
	echo
	echo '```'
	cat "$RESULTS"
	echo '```'
	echo "</details>"
	echo "$END_MARK"
} >"$SECTION"

if [ ! -f "$DOC" ]; then
	die "$DOC not found: it holds the section this script fills in"
fi
if ! grep -qF "$BEGIN_MARK" "$DOC" || ! grep -qF "$END_MARK" "$DOC"; then
	die "$DOC has no '$BEGIN_MARK' ... '$END_MARK' markers to replace"
fi
awk -v section="$SECTION" -v b="$BEGIN_MARK" -v e="$END_MARK" '
	$0 == b { while ((getline l < section) > 0) print l; skip = 1; next }
	$0 == e { skip = 0; next }
	!skip { print }
' "$DOC" >"$TMP/doc.md"
cp "$TMP/doc.md" "$DOC"
echo "compare.sh: wrote the table into $DOC $chart" >&2
