#!/usr/bin/env bash
# batch_sustained.sh - a long batch put into a fresh server, builds
# alternating, and where the server's CPU went: the snapshot worker's
# share (the thread sluiced-snap) and the task-fill thread's beside the
# whole process's, per task.
#
# Each round, for each build in turn: a fresh sluiced (--fsync always,
# huge pages as it runs by default, SERVER_ARGS appended), then
#   sluice-bench --target libsluice --workload put -c 32 -s 100
#                --batch 100 -n N
# and, read from /proc before the server stops: its CPU (user + system)
# per task, the snapshot worker's and task-fill's CPU per task and the
# worker's minor page faults (fresh memory the kernel zeroed for it), the
# bytes the server wrote per task (wrote_b: the log, the spares' zeros,
# the snapshots; /proc/PID/io) and those of the preallocator alone
# (alloc_b: the spares' zeros), the snapshots written and how many
# started from the state the worker kept (base=kept). Ends with each build's medians. On a shared machine the
# rates are noisy: compare builds within one run, over several rounds.
#
# Usage: bench/batch_sustained.sh [--build DIR]... [-n N] [--rounds R]
#                                 [--server-args "ARGS"]
#   --build DIR  a build to measure (repeat to alternate; default build)
#   -n N         tasks per run (default 5000000)
#   --rounds R   rounds (default 3)
#   --server-args "ARGS"  more sluiced arguments (split at spaces)
# A benchmark, never a test.
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/alternate.sh
N=5000000
R=3
SARGS=
alt_option() {
	case $1 in
	--server-args)
		SARGS=$2
		return 2
		;;
	esac
	return 0
}
alt_args "$0" "$@"
alt_check "$0" sluiced sluice-bench
alt_tmp batch_sustained

# thread_awk PID NAME FILE PROGRAM NONE: PROGRAM (awk) run over
# /proc/PID/task/TID/FILE of the thread called NAME, or NONE printed when
# there is no such thread.
thread_awk() {
	local t
	for t in /proc/"$1"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ]; then
			awk "$4" "$t/$3"
			return
		fi
	done
	echo "$5"
}

# The CPU ticks (user + system) of thread $2 of process $1 by its name,
# and its minor faults: "TICKS FAULTS" (0 0 when there is none).
thread_cpu() {
	thread_awk "$1" "$2" stat '{ print $14 + $15, $10 }' "0 0"
}

# The bytes thread $2 of process $1 wrote (write_bytes of its io; 0 when
# there is none).
thread_wrote() {
	thread_awk "$1" "$2" io '$1 == "write_bytes:" { print $2 }' 0
}

tick=$(getconf CLK_TCK)
ns() { echo $(($1 * 1000000000 / tick / N)); }

run() {
	local b=$1 d=$TMP/data port out tot snap fill rate
	rm -rf "$d"
	port=$(free_port)
	# shellcheck disable=SC2086 # SARGS is split at spaces on purpose
	"$b/bin/sluiced" --data "$d" --listen "tcp://127.0.0.1:$port" \
		--fsync always $SARGS >"$TMP/server.log" 2>&1 &
	SP=$!
	for _ in $(seq 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.05
	done
	out=$("$b/bin/sluice-bench" --target libsluice \
		--url "tcp://127.0.0.1:$port" --workload put -c 32 -s 100 \
		--batch 100 -n "$N" 2>&1)
	tot=$(awk '{ print $14 + $15 }' "/proc/$SP/stat")
	snap=$(thread_cpu "$SP" sluiced-snap)
	fill=$(thread_cpu "$SP" task-fill)
	wrote=$(awk '$1 == "write_bytes:" { print $2 }' "/proc/$SP/io")
	zeros=$(thread_wrote "$SP" wal-alloc)
	kill -TERM "$SP"
	wait "$SP" || true
	SP=
	rate=$(echo "$out" | grep -o '[0-9.]* ops/s' | cut -d' ' -f1)
	echo "$b rate=${rate:-0} cpu_ns=$(ns "$tot")" \
		"snap_ns=$(ns "${snap% *}") snap_faults=${snap#* }" \
		"fill_ns=$(ns "${fill% *}")" \
		"wrote_b=$((wrote / N)) alloc_b=$((zeros / N))" \
		"snapshots=$(grep -c 'snapshot written' "$TMP/server.log" || true)" \
		"kept=$(grep -c 'base=kept' "$TMP/server.log" || true)" \
		"load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$TMP/runs"
}

for _ in $(seq "$R"); do
	for b in "${BUILDS[@]}"; do
		run "$b"
	done
done
echo "medians over $R rounds, $N tasks a run:"
alt_medians rate cpu_ns snap_ns snap_faults fill_ns wrote_b alloc_b
