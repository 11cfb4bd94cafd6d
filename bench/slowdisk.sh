#!/usr/bin/env bash
# slowdisk.sh - a slow disk stalls only what must wait for it, at 32
# clients: build/bin/sluiced-fault with every flush of the log late by
# --flush-ms (SLUICE_FAULT_PAUSE=fsync:MS: a durable write, or an
# fdatasync, starts that much later), under sluice-bench's mixed load at
# C = 32 (16 connections put, 16 take + ack, through libsluice), while
# build/bin/read-probe measures the requests that need no new durability
# on connections of their own: a take (of its own tube, preloaded), a
# peek, a tube's stats and GET /metrics, one each every 2 ms.
#
# Each round runs the slow disk and, for the yardstick, the same server
# and load on the disk as it is; --inline also runs the slow disk with
# --wal-commit inline, where the loop itself waits in every flush. Every
# run is a fresh server on a fresh directory and a free port of 127.0.0.1.
# Prints, per run, the load's rate and its put and take + ack p50 / p99
# (which must wait for the flush), then each probe's count, p50, p99 and
# max, in µs.
#
# Usage: bench/slowdisk.sh [--secs S] [--rounds R] [--flush-ms MS] [--inline]
# Environment: BUILD (default build), BENCH_TMPDIR (where the servers'
# data goes; default BUILD; a real disk, not tmpfs).
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=5
ROUNDS=1
FLUSH_MS=50
INLINE=0
while [ $# -gt 0 ]; do
	case "$1" in
	--secs) SECS="$2"; shift 2 ;;
	--rounds) ROUNDS="$2"; shift 2 ;;
	--flush-ms) FLUSH_MS="$2"; shift 2 ;;
	--inline) INLINE=1; shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "slowdisk.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
BUILD=${BUILD:-build}
for p in sluiced-fault sluice-bench read-probe; do
	[ -x "$BUILD/bin/$p" ] || {
		echo "slowdisk.sh: $BUILD/bin/$p not built" >&2
		exit 1
	}
done
. bench/trace.sh # free_port, and TMP removed with the server in PID
trace_tmp slowdisk

# one NAME PAUSE COMMIT: a fresh server, the load and the probe beside it
one() {
	local name=$1 pause=$2 commit=$3 port http dir
	port=$(free_port)
	http=$(free_port)
	dir=$(mktemp -d "$TMP/$name.XXXXXX")
	SLUICE_FAULT_PAUSE=$pause "$BUILD/bin/sluiced-fault" \
		--data "$dir/data" --listen "tcp://127.0.0.1:$port" \
		--http "127.0.0.1:$http" --wal-commit "$commit" \
		>"$dir/log" 2>&1 &
	PID=$!
	for _ in $(seq 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$http") 2>/dev/null && break
		sleep 0.05
	done
	"$BUILD/bin/sluice-bench" --target libsluice \
		--url "tcp://127.0.0.1:$port" --workload mixed -c 32 \
		--preload 20000 --duration "${SECS}s" --server-pid "$PID" \
		--json >"$dir/load" 2>&1 &
	local load=$!
	sleep 0.5 # the load's preload first: the probe times its run
	"$BUILD/bin/read-probe" --url "tcp://127.0.0.1:$port" \
		--http "127.0.0.1:$http" --secs "$((SECS - 1))" >"$dir/probe"
	wait "$load"
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
	python3 - "$name" "$dir/load" "$dir/probe" <<'EOF'
import json, sys
name, load, probe = sys.argv[1:]
j = next(json.loads(l) for l in open(load) if l.startswith("{"))
print(f"{name}: mixed C=32 {j['ops_per_sec']:.0f} ops/s; "
      f"put p50 {j['p50_us']:.0f} p99 {j['put_p99_us']:.0f} us; "
      f"take+ack p99 {j['take_ack_p99_us']:.0f} us")
for l in open(probe):
    p = json.loads(l)
    print(f"  {p['probe']:8} {p['count']:6} requests: p50 {p['p50_us']:8.1f}"
          f"  p99 {p['p99_us']:8.1f}  max {p['max_us']:8.1f} us")
EOF
	rm -rf "$dir"
}

echo "slowdisk.sh: every flush ${FLUSH_MS} ms late; mixed load at C = 32, ${SECS} s a run"
for r in $(seq 1 "$ROUNDS"); do
	echo "== round $r"
	one slow "fsync:$FLUSH_MS" uring
	one calm "" uring
	[ "$INLINE" = 1 ] && one slow-inline "fsync:$FLUSH_MS" inline
done
