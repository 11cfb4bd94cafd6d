#!/usr/bin/env bash
# batch_ir.sh - instructions per task of libsluice's batch put, in the
# server and in the client, counted by valgrind's callgrind: exact where
# the wall-clock figures of a shared machine are not.
#
# Server: sluiced runs under callgrind with instrumentation off until it
# serves (start-up and recovery are not counted), then on; sluice-bench
# puts N tasks (-n, default 100,000) in batches of 100 from C connections
# (-c, default 8), 100-byte payloads; the counts are dumped before the
# server stops (its shutdown is not counted either). Everything the server
# process did in between is divided by N: decoding, the queue, the log's
# records and checksums, replies, the event loop, every thread.
# Client: sluice-bench runs under callgrind counting only inside
# sluice_put_batch (the request's encoding, the exchange, the results'
# decoding), against a plain sluiced; divided by N.
#
# Usage: bench/batch_ir.sh [--build DIR] [-n N] [-c C] [--keep]
#                          [--server-args "ARGS"] [--threads]
#   --build DIR  the build to measure (default build); DIR/bin/sluiced
#                and DIR/bin/sluice-bench
#   --keep       keep the callgrind files (printed) for callgrind_annotate
#   --server-args "ARGS"  more arguments for the measured sluiced (split
#                at spaces), e.g. "--snapshot-records 30000" to have the
#                snapshot worker run during the load
#   --threads    also the server's count per task of each thread (by its
#                name: the loop, sluiced-snap, task-fill, wal-alloc ...)
# Prints two lines: "server Ir/task X" and "client Ir/task Y". Needs
# valgrind (callgrind_control comes with it). A benchmark, never a test.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=build
N=100000
C=8
keep=0
SARGS=
threads=0
while [ $# -gt 0 ]; do
	case $1 in
	--build)
		BUILD=$2
		shift
		;;
	-n)
		N=$2
		shift
		;;
	-c)
		C=$2
		shift
		;;
	--keep) keep=1 ;;
	--server-args)
		SARGS=$2
		shift
		;;
	--threads) threads=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "batch_ir.sh: unknown argument '$1' (--help)" >&2
		exit 2
		;;
	esac
	shift
done
for v in "$N" "$C"; do
	case $v in
	'' | *[!0-9]* | 0)
		echo "batch_ir.sh: -n and -c want whole numbers > 0" >&2
		exit 2
		;;
	esac
done
SLUICED=$BUILD/bin/sluiced
BENCH=$BUILD/bin/sluice-bench
[ -x "$SLUICED" ] && [ -x "$BENCH" ] || {
	echo "batch_ir.sh: $SLUICED or $BENCH not found: build first" >&2
	exit 1
}
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || {
	echo "batch_ir.sh: valgrind not found (apt-get install valgrind)" >&2
	exit 1
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/batch_ir.XXXXXX")
SP=
cleanup() {
	if [ -n "$SP" ] && kill -0 "$SP" 2>/dev/null; then
		kill -TERM "$SP" 2>/dev/null || true
		wait "$SP" 2>/dev/null || true
	fi
	[ $keep = 1 ] || rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits (at most 60 s: a server under valgrind starts slowly) until
# something listens on port $1.
wait_port() {
	for _ in $(seq 600); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$SP" 2>/dev/null || break
		sleep 0.1
	done
	echo "batch_ir.sh: the server did not listen on $1" >&2
	exit 1
}

bench() {
	"$@" --target libsluice --url "tcp://127.0.0.1:$port" --workload put \
		-c "$C" -s 100 -n "$N" --batch 100 --timeout 60s --limit 20m \
		--duration 600s --json >/dev/null
}

total() {
	callgrind_annotate "$1" 2>/dev/null |
		awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}

# ---- the server -------------------------------------------------------
port=$(free_port)
sep=no
[ $threads = 0 ] || sep=yes
# shellcheck disable=SC2086 # SARGS is split at spaces on purpose
SLUICE_NO_HUGEPAGES=1 valgrind --tool=callgrind --instr-atstart=no \
	--separate-threads=$sep \
	--callgrind-out-file="$TMP/server.%p" "$SLUICED" --data "$TMP/data1" \
	--listen "tcp://127.0.0.1:$port" --fsync always $SARGS \
	>"$TMP/server1.log" 2>&1 &
SP=$!
wait_port "$port"
callgrind_control -i on "$SP" >/dev/null 2>&1
bench "$BENCH"
callgrind_control -d "$SP" >/dev/null 2>&1
kill -TERM "$SP"
wait "$SP" || true
SP=
if [ $threads = 1 ]; then
	# one file per thread (server.PID.1-NN), named by what it ran
	sir=0
	for f in "$TMP"/server.*.1-*; do
		callgrind_annotate "$f" >"$f.txt" 2>/dev/null || true
		t=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' "$f.txt")
		sir=$((sir + t))
		if grep -q 'snap_writer_add\|queue_snapshot_write' "$f.txt"; then
			name="the snapshot worker"
		elif grep -q 'core_commit' "$f.txt"; then
			name="the loop"
		else
			name="thread ${f##*-}"
		fi
		echo "  $name: Ir/task $((t / N))"
	done
else
	sir=$(total "$(ls "$TMP"/server.*.1)")
fi
echo "server Ir/task $((sir / N)) ($sir instructions, $N tasks, C=$C)"

# ---- the client -------------------------------------------------------
port=$(free_port)
"$SLUICED" --data "$TMP/data2" --listen "tcp://127.0.0.1:$port" \
	--fsync always >"$TMP/server2.log" 2>&1 &
SP=$!
wait_port "$port"
bench valgrind --tool=callgrind --toggle-collect=sluice_put_batch \
	--callgrind-out-file="$TMP/client.out" "$BENCH" 2>/dev/null
cir=$(total "$TMP/client.out")
echo "client Ir/task $((cir / N)) ($cir instructions in sluice_put_batch)"
[ $keep = 0 ] || echo "batch_ir.sh: callgrind files in $TMP" >&2
