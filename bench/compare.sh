#!/usr/bin/env bash
# compare.sh - sluice against beanstalkd, client workloads, in one run.
#
# Starts, for every measurement, a fresh server on a temporary directory and
# a free port on 127.0.0.1:
#   sluice       build/bin/sluiced --fsync always (fdatasync before a reply,
#                group commit)
#   sluice-bs    the same sluiced driven through its beanstalk face
#                (--beanstalk): the beanstalkd load generator, unchanged
#   bs-f0        beanstalkd -b DIR -f 0 (binlog, fsync after every write:
#                durable like sluice)
#   bs-nolog     beanstalkd without -b (no binlog: nothing survives a crash)
# and runs build/bin/sluice-bench on it: put, drain and mixed, at C = 1 and
# C = 32 connections, 100-byte payloads. Then it prints a table, writes it
# (with the command, the date and the raw JSON lines) into
# docs/benchmarks.md between the client-workloads markers, and draws
# docs/benchmarks-clients.png with gnuplot.
#
# Sizing, so each run takes a few seconds whatever the server's speed:
#   put    stops after --secs (default 5) or 1,000,000 tasks;
#   drain  drains N = 3 s worth of that set-up's put rate at the same C
#          (1,000..300,000), preloaded untimed, until the tube is empty or
#          3 x --secs passed (the disk's speed may change in between);
#   mixed  runs --secs after a preload of 3 s of the set-up's C = 1 put
#          rate (500..10,000).
#
# Usage: bench/compare.sh [--skip-sluice] [--secs N] [--repeat R] [--no-docs]
#                         [--keep]
#   --skip-sluice  measure only the two beanstalkd set-ups (sluice columns
#                  show "-"); without it a missing build/bin/sluiced is an
#                  error
#   --secs N       seconds per put and mixed run (default 5)
#   --repeat R     run each measurement R times, each on a fresh server,
#                  and keep the run of median ops/s (default 1)
#   --no-docs      print the table, leave docs/ alone
#   --keep         keep the temporary directory (server logs, raw results)
# Environment: BUILD (default build), BENCH_TMPDIR (where the servers' data
# goes; default BUILD; must be a real disk, not tmpfs, or fsync is free).
# Build first: `make build` (or `make bench`, which installs gnuplot, builds
# and runs this script).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
BENCH=$BUILD/bin/sluice-bench
SLUICED=$BUILD/bin/sluiced
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
	--keep) keep=1 ;;
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

die() {
	echo "compare.sh: $*" >&2
	exit 1
}

# ---- what is needed ---------------------------------------------------

[ -x "$BENCH" ] || die "$BENCH not found: build first (make build, or make bench)"
if [ $skip_sluice = 0 ] && [ ! -x "$SLUICED" ]; then
	die "$SLUICED not found: sluiced is not built (make build). To measure only beanstalkd, run bench/compare.sh --skip-sluice"
fi
BEANSTALKD=$(command -v beanstalkd || true)
[ -n "$BEANSTALKD" ] || die "beanstalkd not found (apt-get install beanstalkd, or make bench-deps)"
GNUPLOT=$(command -v gnuplot || true)

mkdir -p "${BENCH_TMPDIR:-$BUILD}"
TMP=$(mktemp -d "${BENCH_TMPDIR:-$BUILD}/compare.XXXXXX")
TMP=$(cd "$TMP" && pwd)
if [ "$(stat -f -c %T "$TMP")" = tmpfs ]; then
	echo "compare.sh: warning: $TMP is on tmpfs, where fsync costs nothing; set BENCH_TMPDIR to a directory on a disk" >&2
fi

# ---- processes: every one started is killed on the way out ------------

PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
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

SERVER_PID=
SERVER_URL=
SERVER_LOG=
# Starts a fresh server of kind $1 on a new directory and port.
start_server() {
	local kind=$1 dir port
	dir=$(mktemp -d "$TMP/$kind.XXXXXX")
	port=$(free_port)
	SERVER_LOG=$dir.log
	case $kind in
	sluice)
		"$SLUICED" --data "$dir" --listen "tcp://127.0.0.1:$port" \
			--fsync always >"$SERVER_LOG" 2>&1 &
		;;
	sluice-bs)
		# clients use the beanstalk port; the nng one is not used
		"$SLUICED" --data "$dir" --listen "tcp://127.0.0.1:$(free_port)" \
			--beanstalk "127.0.0.1:$port" --fsync always \
			>"$SERVER_LOG" 2>&1 &
		;;
	bs-f0)
		"$BEANSTALKD" -l 127.0.0.1 -p "$port" -b "$dir" -f 0 \
			>"$SERVER_LOG" 2>&1 &
		;;
	bs-nolog)
		"$BEANSTALKD" -l 127.0.0.1 -p "$port" >"$SERVER_LOG" 2>&1 &
		;;
	esac
	SERVER_PID=$!
	PIDS+=("$SERVER_PID")
	SERVER_URL=tcp://127.0.0.1:$port
	wait_listening "$SERVER_PID" "$port" "$SERVER_LOG"
}

stop_server() {
	kill "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
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
declare -A OPS P99 PUTRATE

# run KIND WORKLOAD C ARGS...: the measurement, $repeat times, each on a
# fresh server; keeps the run of median ops/s (its ops/s and its p99).
run() {
	local kind=$1 workload=$2 c=$3 target line i lines=()
	shift 3
	target=sluice
	[ "$kind" = sluice ] || target=beanstalkd
	printf '  %-8s %-5s C=%-2s ' "$kind" "$workload" "$c" >&2
	for i in $(seq 1 "$repeat"); do
		start_server "$kind"
		if ! line=$(timeout 600 "$BENCH" --target "$target" \
			--url "$SERVER_URL" --workload "$workload" -c "$c" \
			-s 100 --timeout 10s --limit 5m --json "$@" | tail -n 1); then
			echo >&2
			echo "compare.sh: sluice-bench failed on $kind ($workload, C=$c); the server's log:" >&2
			tail -n 20 "$SERVER_LOG" >&2 || true
			exit 1
		fi
		stop_server
		case $line in
		'{'*) ;;
		*) die "sluice-bench printed no JSON line for $kind $workload C=$c" ;;
		esac
		echo "{\"server\":\"$kind\",${line#\{}" >>"$RESULTS"
		lines+=("$(json_field "$line" ops_per_sec) $line")
	done
	line=$(printf '%s\n' "${lines[@]}" | sort -n | sed -n "$(((repeat + 1) / 2))p")
	line=${line#* }
	OPS[$kind/$workload/$c]=$(json_field "$line" ops_per_sec)
	P99[$kind/$workload/$c]=$(json_field "$line" p99_us)
	printf '%10.0f ops/s  p99 %8.0f us\n' "${OPS[$kind/$workload/$c]}" \
		"${P99[$kind/$workload/$c]}" >&2
}

clamp() { # clamp VALUE LO HI (integers)
	local v=$1
	[ "$v" -ge "$2" ] || v=$2
	[ "$v" -le "$3" ] || v=$3
	echo "$v"
}

KINDS=(sluice sluice-bs bs-f0 bs-nolog)
[ $skip_sluice = 0 ] || KINDS=(bs-f0 bs-nolog)
CONNS=(1 32)
WORKLOADS=(put drain mixed)

# The disk, for reading the durable columns: the mean time of one O_DSYNC
# 100-byte write, before and after the runs (a shared virtual disk can
# change speed several times over within minutes).
dsync_ms() {
	local out s
	out=$(dd if=/dev/zero of="$TMP/dsync" bs=100 count=300 oflag=dsync 2>&1 | tail -n 1)
	rm -f "$TMP/dsync"
	s=$(sed -n 's/.* copied, \([0-9.]*\) s.*/\1/p' <<<"$out")
	awk -v s="${s:-0}" 'BEGIN { printf "%.2f", s * 1000 / 300 }'
}

echo "compare.sh: ${KINDS[*]}; put, drain, mixed at C = ${CONNS[*]}; 100-byte payloads; median of $repeat; data in $TMP" >&2
FSYNC_BEFORE=$(dsync_ms)
echo "compare.sh: one 100-byte O_DSYNC write takes $FSYNC_BEFORE ms on this disk" >&2
# The set-ups take turns at each measurement, so a change in the disk's
# speed during the run hits them alike.
for c in "${CONNS[@]}"; do
	for kind in "${KINDS[@]}"; do
		run "$kind" put "$c" -n 1000000 --duration "${secs}s"
		PUTRATE[$kind/$c]=${OPS[$kind/put/$c]%.*}
	done
	for kind in "${KINDS[@]}"; do
		rate=${PUTRATE[$kind/$c]}
		run "$kind" drain "$c" -n "$(clamp $((rate * 3)) 1000 300000)" \
			--duration "$((secs * 3))s"
	done
	for kind in "${KINDS[@]}"; do
		rate=${PUTRATE[$kind/1]:-${PUTRATE[$kind/$c]}}
		run "$kind" mixed "$c" --duration "${secs}s" \
			--preload "$(clamp $((rate * 3)) 500 10000)"
	done
done
FSYNC_AFTER=$(dsync_ms)
echo "compare.sh: one 100-byte O_DSYNC write takes $FSYNC_AFTER ms on this disk" >&2

# ---- the table --------------------------------------------------------

cell() { # cell MAP KEY: the figure, rounded, or "-"
	local -n map=$1
	if [ -n "${map[$2]+x}" ]; then
		printf '%.0f' "${map[$2]}"
	else
		printf -- '-'
	fi
}

ratio() { # ratio KEY_A KEY_B: OPS[a] / OPS[b] with two decimals, or "-"
	if [ -n "${OPS[$1]+x}" ] && [ -n "${OPS[$2]+x}" ]; then
		awk -v a="${OPS[$1]}" -v b="${OPS[$2]}" \
			'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'
	else
		printf -- '-'
	fi
}

TABLE=$TMP/table.md
{
	echo "| workload | C | sluice ops/s | sluice beanstalk face ops/s | beanstalkd -f0 ops/s | beanstalkd (no binlog) ops/s | sluice / beanstalkd -f0 | sluice beanstalk face / beanstalkd -f0 | p99 sluice (us) | p99 sluice beanstalk face (us) | p99 beanstalkd -f0 (us) | p99 beanstalkd no binlog (us) |"
	echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
	for w in "${WORKLOADS[@]}"; do
		for c in "${CONNS[@]}"; do
			echo "| $w | $c | $(cell OPS sluice/$w/$c) | $(cell OPS sluice-bs/$w/$c) | $(cell OPS bs-f0/$w/$c) | $(cell OPS bs-nolog/$w/$c) | $(ratio sluice/$w/$c bs-f0/$w/$c) | $(ratio sluice-bs/$w/$c bs-f0/$w/$c) | $(cell P99 sluice/$w/$c) | $(cell P99 sluice-bs/$w/$c) | $(cell P99 bs-f0/$w/$c) | $(cell P99 bs-nolog/$w/$c) |"
		done
	done
} >"$TABLE"
echo >&2
cat "$TABLE"

[ $write_docs = 1 ] || exit 0

# ---- the chart --------------------------------------------------------

DAT=$TMP/chart.dat
{
	echo "# label sluice bs-f0 bs-nolog sluice-bs"
	for w in "${WORKLOADS[@]}"; do
		for c in "${CONNS[@]}"; do
			echo "\"$w C=$c\" $(cell OPS sluice/$w/$c) $(cell OPS bs-f0/$w/$c) $(cell OPS bs-nolog/$w/$c) $(cell OPS sluice-bs/$w/$c)"
		done
	done
} >"$DAT"
if [ -n "$GNUPLOT" ]; then
	"$GNUPLOT" -e "datafile='$DAT'; outfile='$ROOT/$PNG'; nosluice=$skip_sluice" \
		bench/plot.gp ||
		die "gnuplot failed"
else
	echo "compare.sh: warning: gnuplot not found (apt-get install gnuplot-nox, or make bench-deps): $PNG not redrawn" >&2
fi

# ---- docs/benchmarks.md -----------------------------------------------

SECTION=$TMP/section.md
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
	echo "$BEGIN_MARK"
	echo "Measured $(date -u +%Y-%m-%d) with \`$CMDLINE\` at commit $rev:"
	echo "$(nproc) cores, Linux $(uname -r), data on $(df --output=fstype "$TMP" | tail -n 1); one 100-byte O_DSYNC write took $FSYNC_BEFORE ms before the runs, $FSYNC_AFTER ms after;"
	echo "$("$BEANSTALKD" -v 2>&1 | head -n 1); ${secs} s per put and mixed run; median of $repeat run(s) per cell."
	[ $skip_sluice = 0 ] || echo "sluice was not measured in this run (\`--skip-sluice\`): its columns show \"-\"."
	echo
	cat "$TABLE"
	echo
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
echo "compare.sh: wrote the table into $DOC and the chart into $PNG" >&2
