#!/usr/bin/env bash
# limits.sh - a tube's flow limits measured (bench/limits_bench.c):
#   rate   32 greedy workers on a tube limited to 1,000/s, each of 10
#          seconds after a second of warm-up counted: the worst deviation
#          from 1,000 (the goal: within 2 %);
#   cap    32 workers on a tube capped at 10, each holding its task 1 ms:
#          the most held at once (never above 10) and the tasks a second;
#   drain  32 workers drain 50,000 tasks from a tube without limits, and
#          50,000 from a tube whose limits never hold; with --baseline
#          SLUICED (a sluiced built from before the limits) the same drain
#          without limits on it, in interleaved rounds (--repeat R, 3 by
#          default), each drain on a fresh server: the median of each.
#   path   the queue's own instructions per put + take + ack, counted by
#          valgrind's cachegrind (exact where timings on a shared machine
#          are not): build/bin/take-path-bench without limits and with
#          limits that never hold, and with --baseline-take BIN the same
#          program built against a tree from before the limits:
#            cc -O2 -I OLD/src -I OLD/include bench/take_path_bench.c \
#              OLD/build/src/queue/libsluice_queue.a \
#              OLD/build/src/util/libsluice_util.a -lnng -lxxhash -lpthread
# The rate runs --repeat times too, each on a fresh server. Each server:
# build/bin/sluiced on a temporary directory and a free port of 127.0.0.1,
# --fsync always (fdatasync before a reply). With --write the figures go
# into docs/benchmarks.md between the flow-limits markers.
set -euo pipefail
cd "$(dirname "$0")/.."

SLUICED=build/bin/sluiced
BENCH=build/bin/limits-bench
BASELINE=""
BASE_TAKE=""
REPEAT=3
WRITE=0
while [ $# -gt 0 ]; do
	case "$1" in
	--baseline) BASELINE="$2"; shift 2 ;;
	--baseline-take) BASE_TAKE="$2"; shift 2 ;;
	--repeat) REPEAT="$2"; shift 2 ;;
	--write) WRITE=1; shift ;;
	*) echo "usage: bench/limits.sh [--baseline SLUICED] [--baseline-take BIN] [--repeat R] [--write]" >&2; exit 2 ;;
	esac
done

TMP=$(mktemp -d)
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

free_port() {
	python3 -c 'import socket,random
for _ in range(100):
    p = random.randint(20000, 30000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); s.close(); print(p); break
    except OSError: pass'
}

# start BINARY: a fresh server; sets URL and PID
start() {
	local port dir
	port=$(free_port)
	dir=$(mktemp -d -p "$TMP")
	"$1" --data "$dir" --listen "tcp://127.0.0.1:$port" >"$dir.log" 2>&1 &
	PID=$!
	URL="tcp://127.0.0.1:$port"
	for _ in $(seq 1 100); do
		build/bin/sluice -s "$URL" stats >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "limits.sh: $1 did not start" >&2
	exit 1
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""; }

json_field() { python3 -c "import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])['$1'])"; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "== rate ($REPEAT runs) and cap"
RATES=()
for r in $(seq 1 "$REPEAT"); do
	start "$SLUICED"
	out=$("$BENCH" --url "$URL" --mode rate --json)
	stop
	echo "$out"
	RATES+=("$(echo "$out" | json_field rate_min)-$(echo "$out" | json_field rate_max) ($(echo "$out" | json_field rate_worst_pct) %), $(echo "$out" | json_field rate_total) in all")
done
start "$SLUICED"
CAP_OUT=$("$BENCH" --url "$URL" --mode cap --secs 5 --json)
echo "$CAP_OUT"
stop

IR_FREE=""; IR_OPEN=""; IR_BASE=""
ir() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 | awk '/I +refs/ {gsub(",", "", $4); print $4}'; }
if command -v valgrind >/dev/null; then
	echo "== the take path (cachegrind, 100,000 tasks)"
	IR_FREE=$(ir build/bin/take-path-bench 100000)
	IR_OPEN=$(ir build/bin/take-path-bench 100000 --limited)
	[ -n "$BASE_TAKE" ] && IR_BASE=$(ir "$BASE_TAKE" 100000)
	echo "instructions: no limits $IR_FREE, limits that never hold $IR_OPEN${BASE_TAKE:+, before the limits $IR_BASE}"
fi

echo "== drain (tasks/s), $REPEAT rounds"
FREE=(); OPEN=(); BASE=()
for r in $(seq 1 "$REPEAT"); do
	start "$SLUICED"
	out=$("$BENCH" --url "$URL" --mode free --json)
	stop
	FREE+=("$(echo "$out" | json_field drain_free_s)")
	start "$SLUICED"
	out=$("$BENCH" --url "$URL" --mode open --json)
	stop
	OPEN+=("$(echo "$out" | json_field drain_open_s)")
	if [ -n "$BASELINE" ]; then
		start "$BASELINE"
		out=$("$BENCH" --url "$URL" --mode free --json)
		stop
		BASE+=("$(echo "$out" | json_field drain_free_s)")
	fi
	echo "round $r: no limits ${FREE[-1]}, limits that never hold ${OPEN[-1]}${BASELINE:+, before the limits ${BASE[-1]}}"
done
M_FREE=$(median "${FREE[@]}")
M_OPEN=$(median "${OPEN[@]}")
M_BASE=""
[ -n "$BASELINE" ] && M_BASE=$(median "${BASE[@]}")

SUMMARY=$(cat <<EOF
Command: \`bench/limits.sh${BASELINE:+ --baseline BEFORE/sluiced} --repeat $REPEAT\`
(commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d), $(nproc) cores,
\`--fsync always\`).

| what | figure |
|---|---|
| rate 1,000/s, 32 greedy workers, 10 s: the slowest and fastest second of each run (worst deviation), and the 10 s together (10,000 exact) | $(printf '%s; ' "${RATES[@]}" | sed 's/; $//') |
| cap 10, 32 workers holding 1 ms, 5 s: most held at once | $(echo "$CAP_OUT" | json_field cap_most) ($(echo "$CAP_OUT" | json_field cap_tasks_s) tasks/s) |
| drain of 50,000 at 32 workers, no limits (median of $REPEAT) | $M_FREE tasks/s |
| the same, limits that never hold (concurrency 1,000,000) | $M_OPEN tasks/s |
EOF
)
if [ -n "$M_BASE" ]; then
	SUMMARY="$SUMMARY
| the same, no limits, a build from before the limits | $M_BASE tasks/s |"
fi
per_op() { python3 -c "print('%.1f' % ($1 / 100000))"; }
if [ -n "$IR_FREE" ]; then
	SUMMARY="$SUMMARY
| the queue's instructions per put + take + ack, no limits (cachegrind) | $(per_op "$IR_FREE") |
| the same, limits that never hold | $(per_op "$IR_OPEN") |"
fi
if [ -n "$IR_BASE" ]; then
	SUMMARY="$SUMMARY
| the same, no limits, a build from before the limits | $(per_op "$IR_BASE") |"
fi
echo
echo "$SUMMARY"
if [ "$WRITE" = 1 ]; then
	python3 - "$SUMMARY" <<'PY'
import sys
p = "docs/benchmarks.md"
s = open(p).read()
b, e = "<!-- flow-limits:begin -->", "<!-- flow-limits:end -->"
i, j = s.index(b) + len(b), s.index(e)
s = s[:i] + "\n" + sys.argv[1] + "\n" + s[j:]
open(p, "w").write(s)
PY
fi
