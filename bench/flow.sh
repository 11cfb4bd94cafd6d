#!/usr/bin/env bash
# flow.sh - what workflows cost (bench/flow_bench.c; needs the targets
# sluiced, sluice_cmd and flow-bench built in build/), on one fresh
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
# Prints each run's put and drain times, the server's CPU seconds, and
# each cost: the medians' total over the plain one's (the goal: at most
# 20 %).
#
# --instructions: instead, what the server executes (valgrind's
# cachegrind, instructions in user space: the same on a busy machine as
# on an idle one), one round, each kind on a fresh server of its own
# (plain, then the graphs or the batch; --graphs 0 or --batch 0 leaves
# one out): the server's instructions per task and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=3
BATCH=100000
GRAPHS=1000
INSTR=0
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS="$2"; shift 2 ;;
	--batch) BATCH="$2"; shift 2 ;;
	--graphs) GRAPHS="$2"; shift 2 ;;
	--instructions) INSTR=1; shift ;;
	*) echo "usage: bench/flow.sh [--rounds R] [--batch N] [--graphs G] [--instructions]" >&2; exit 2 ;;
	esac
done

TMP=$(mktemp -d)
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

PORT=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
URL="tcp://127.0.0.1:$PORT"

# Starts a fresh server ($1: a command to run it under, or ""), waits
# until it answers.
start() {
	rm -rf "$TMP/data"
	$1 build/bin/sluiced --listen "$URL" --data "$TMP/data" >"$TMP/log" 2>&1 &
	PID=$!
	for _ in $(seq 600); do
		build/bin/sluice -s "$URL" stats >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "flow.sh: the server did not start" >&2
	cat "$TMP/log" >&2
	exit 1
}

if [ "$INSTR" = 1 ]; then
	command -v valgrind >/dev/null || { echo "flow.sh: needs valgrind" >&2; exit 2; }
	# (the server re-executes itself for huge pages, which valgrind
	# cannot follow: SLUICE_NO_HUGEPAGES keeps it one process)
	VG="env SLUICE_NO_HUGEPAGES=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null"
	rc=0
	# $1: graphs or batch; $2: the arguments of flow-bench; $3: tasks
	measure() {
		local what=$1 args=$2 tasks=$3 k ir plain=""
		for k in plain work; do
			start "$VG"
			build/bin/flow-bench --url "$URL" --workers 32 $args \
				--rounds 1 --only "$k" >"$TMP/out" || rc=1
			kill -TERM "$PID"; wait "$PID" || true; PID=""
			ir=$(awk '/I +refs/ {gsub(",", "", $4); print $4}' "$TMP/log")
			[ "$k" = work ] && k=$what
			printf "%-6s %s: server instructions %s, %.0f per task\n" \
				"$k" "$what" "$ir" "$(echo "$ir / $tasks" | bc -l)"
			if [ -z "$plain" ]; then plain=$ir; else
				printf "%s over plain: %+.1f %%\n" "$what" \
					"$(echo "100 * ($ir / $plain - 1)" | bc -l)"
			fi
		done
	}
	if [ "$GRAPHS" -gt 0 ]; then
		measure graphs "--graphs $GRAPHS --fanout 100" $((GRAPHS * 102))
	fi
	if [ "$BATCH" -gt 0 ]; then
		measure batch "--batch $BATCH" "$BATCH"
	fi
	exit $rc
fi

start ""
rc=0
if [ "$GRAPHS" -gt 0 ]; then
	build/bin/flow-bench --url "$URL" --workers 32 --graphs "$GRAPHS" \
		--fanout 100 --rounds "$ROUNDS" --server-pid "$PID" --json || rc=1
fi
if [ "$BATCH" -gt 0 ]; then
	build/bin/flow-bench --url "$URL" --workers 32 --batch "$BATCH" \
		--rounds "$ROUNDS" --server-pid "$PID" --json || rc=1
fi
exit $rc
