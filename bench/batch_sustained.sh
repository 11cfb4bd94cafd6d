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
BUILDS=()
N=5000000
R=3
SARGS=
while [ $# -gt 0 ]; do
	case $1 in
	--build)
		BUILDS+=("$2")
		shift
		;;
	-n)
		N=$2
		shift
		;;
	--rounds)
		R=$2
		shift
		;;
	--server-args)
		SARGS=$2
		shift
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "batch_sustained.sh: unknown argument '$1' (--help)" >&2
		exit 2
		;;
	esac
	shift
done
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build)
for v in "$N" "$R"; do
	case $v in
	'' | *[!0-9]* | 0)
		echo "batch_sustained.sh: -n and --rounds want whole numbers > 0" >&2
		exit 2
		;;
	esac
done
for b in "${BUILDS[@]}"; do
	[ -x "$b/bin/sluiced" ] && [ -x "$b/bin/sluice-bench" ] || {
		echo "batch_sustained.sh: $b/bin/sluiced or sluice-bench not found" >&2
		exit 1
	}
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/batch_sustained.XXXXXX")
SP=
cleanup() {
	if [ -n "$SP" ] && kill -0 "$SP" 2>/dev/null; then
		kill -TERM "$SP" 2>/dev/null || true
		wait "$SP" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The CPU ticks (user + system) of thread $2 of process $1 by its name,
# and its minor faults: "TICKS FAULTS" (0 0 when there is none).
# Bytes a thread of process $1 named $2 wrote (write_bytes of its io).
thread_wrote() {
	local t
	for t in /proc/"$1"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ]; then
			awk '$1 == "write_bytes:" { print $2 }' "$t/io"
			return
		fi
	done
	echo 0
}

thread_cpu() {
	local t
	for t in /proc/"$1"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ]; then
			awk '{ print $14 + $15, $10 }' "$t/stat"
			return
		fi
	done
	echo 0 0
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
for b in "${BUILDS[@]}"; do
	python3 - "$b" "$TMP/runs" <<'EOF'
import re, statistics, sys
b, path = sys.argv[1], sys.argv[2]
rows = [l for l in open(path) if l.split()[0] == b]
keys = ["rate", "cpu_ns", "snap_ns", "snap_faults", "fill_ns", "wrote_b",
        "alloc_b"]
med = {k: statistics.median(float(re.search(k + r"=([0-9.]+)", l).group(1))
                            for l in rows) for k in keys}
print("  " + b + " " + " ".join("%s=%.0f" % (k, med[k]) for k in keys))
EOF
done
