#!/usr/bin/env bash
# groups.sh - what fair groups cost (bench/groups_bench.c): 32 workers
# drain 100,000 tasks of a tube without groups and 100,000 spread over
# 10,000 groups, alternating, --rounds times (3 by default), on one fresh
# build/bin/sluiced (a temporary directory, a free port of 127.0.0.1,
# --fsync always: fdatasync before a reply); prints each drain's tasks a
# second and the ratio of the medians (the goal: at least 0.9).
# --fairness runs the fairness scenario instead: 100,000 ready tasks of
# one group and a task of another every 10 ms, 32 workers: the small
# group's wait, ready to taken, p50 and p99 (the goal: p99 under 20 ms),
# then the same without groups as the control.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=3
FAIR=""
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS="$2"; shift 2 ;;
	--fairness) FAIR=--fairness; shift ;;
	*) echo "usage: bench/groups.sh [--rounds R] [--fairness]" >&2; exit 2 ;;
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
if [ -n "$FAIR" ]; then
	build/bin/groups-bench --url "$URL" --workers 32 --tasks 100000 \
		--fairness --json
	exit
fi
build/bin/groups-bench --url "$URL" --workers 32 --tasks 100000 \
	--groups 10000 --rounds "$ROUNDS" --json
