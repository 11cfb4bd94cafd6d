#!/usr/bin/env bash
# flow.sh - what workflows cost (bench/flow_bench.c), on one fresh
# build/bin/sluiced (a temporary directory, a free port of 127.0.0.1,
# --fsync always: fdatasync before a reply):
#  - dependencies: 1,000 graphs of a parent, 100 children after it and a
#    join after the 100 (102,000 tasks) put and drained by 32 workers,
#    against 102,000 plain tasks put and drained the same way;
#  - batches: one batch of --batch N tasks (100,000 by default; 0: not
#    run) with an on_success and an on_complete callback, put, closed and
#    drained by 32 workers until both callbacks are put (each checked
#    there exactly once), against N plain tasks;
# each alternating with its plain tasks, --rounds times (3 by default).
# Prints each run's put and drain times and each cost: the medians'
# total over the plain one's (the goal: at most 20 %).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=3
BATCH=100000
GRAPHS=1000
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS="$2"; shift 2 ;;
	--batch) BATCH="$2"; shift 2 ;;
	--graphs) GRAPHS="$2"; shift 2 ;;
	*) echo "usage: bench/flow.sh [--rounds R] [--batch N] [--graphs G]" >&2; exit 2 ;;
	esac
done

TMP=$(mktemp -d)
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

PORT=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
URL="tcp://127.0.0.1:$PORT"
build/bin/sluiced --listen "$URL" --data "$TMP/data" >"$TMP/log" 2>&1 &
PID=$!
for _ in $(seq 100); do
	build/bin/sluice -s "$URL" stats >/dev/null 2>&1 && break
	sleep 0.1
done
rc=0
if [ "$GRAPHS" -gt 0 ]; then
	build/bin/flow-bench --url "$URL" --workers 32 --graphs "$GRAPHS" \
		--fanout 100 --rounds "$ROUNDS" --json || rc=1
fi
if [ "$BATCH" -gt 0 ]; then
	build/bin/flow-bench --url "$URL" --workers 32 --batch "$BATCH" \
		--rounds "$ROUNDS" --json || rc=1
fi
exit $rc
