#!/usr/bin/env bash
# commit.sh - the log's commits side by side: sluiced with --wal-commit
# uring (O_DIRECT writes made durable with RWF_DSYNC through io_uring, the
# loop serving meanwhile), --wal-commit uring-fsync (the same writes, each
# linked to an fdatasync op) and --wal-commit inline (pwrite + fdatasync
# on the loop's thread), and optionally an older sluiced, taking
# turns so that all see the same machine and disk. For each: put at C = 1
# and C = 32 and mixed at C = 32 (build/bin/sluice-bench --target
# libsluice, 100-byte payloads, --secs seconds each), and for put at C = 32
# the server's own counters (/metrics): commits, mean commit latency,
# records per commit. build/bin/fsync_probe gives the raw disk before and
# after.
#
# --modes chooses the commits (default "uring uring-fsync inline"); an
# entry uring:N is uring with up to N batches in flight at once
# (--wal-inflight N). --face drives the server through its beanstalk face
# with the beanstalkd load generator (one epoll loop) instead of
# libsluice's thread per connection.
#
# With --perf, put at C = 32 also runs `perf stat` on the server and
# gives what each commit and each record cost it, counts that hold on a
# busy machine where throughput does not: system calls, context switches
# and hand-offs to io_uring's workers per commit, and per record the
# system calls, switches and CPU time of the server (every thread).
#
# Usage: bench/commit.sh [--secs N] [--rounds R] [--old PATH-TO-SLUICED]
#                        [--modes "M ..."] [--face] [--perf]
# Environment: BUILD (default build), BENCH_TMPDIR (default BUILD; a real
# disk, not tmpfs).
set -euo pipefail

SECS=3
ROUNDS=2
OLD=""
PERF=0
MODES="uring uring-fsync inline"
FACE=0
while [ $# -gt 0 ]; do
	case $1 in
	--modes) MODES=$2; shift ;;
	--face) FACE=1 ;;
	--secs) SECS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--old) OLD=$2; shift ;;
	--perf) PERF=1 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "commit.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
TMP=$(mktemp -d "${BENCH_TMPDIR:-$BUILD}/commit-bench.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

one() { # label sluiced extra-args workload conns
	local label=$1 bin=$2 extra=$3 wl=$4 c=$5 port hport pre="" out m
	local perfpid="" p="" nr="0 0" bport target=libsluice url
	port=$(free_port)
	hport=$(free_port)
	bport=$(free_port)
	url="tcp://127.0.0.1:$port"
	if [ "$FACE" = 1 ]; then
		extra="$extra --beanstalk 127.0.0.1:$bport"
		target=beanstalkd
		url="tcp://127.0.0.1:$bport"
	fi
	rm -rf "$TMP/data"
	# shellcheck disable=SC2086
	"$bin" --data "$TMP/data" --listen "tcp://127.0.0.1:$port" \
		--http "127.0.0.1:$hport" $extra >"$TMP/server.log" 2>&1 &
	PID=$!
	sleep 0.7
	[ "$wl" = mixed ] && pre="--preload 2000"
	if [ "$PERF" = 1 ] && [ "$wl" = put ] && [ "$c" -gt 1 ]; then
		perf stat -x, -o "$TMP/perf" -e task-clock,context-switches,raw_syscalls:sys_enter,io_uring:io_uring_queue_async_work \
			-p "$PID" >/dev/null 2>&1 &
		perfpid=$!
	fi
	# shellcheck disable=SC2086
	if ! out=$("$BUILD/bin/sluice-bench" --target "$target" \
		--url "$url" --workload "$wl" -c "$c" \
		-n 1000000 -s 100 --duration "${SECS}s" $pre \
		--server-pid "$PID" 2>&1); then
		# said, not a silent stop of the whole script (set -e)
		echo "commit.sh: $label $wl C=$c: sluice-bench failed: $out" >&2
		echo "commit.sh: the server's log ends:" >&2
		tail -n 5 "$TMP/server.log" >&2
		exit 1
	fi
	out=$(grep -E 'ops/s|CPU' <<<"$out" | tr -s ' \n' ' ')
	m=""
	if [ "$wl" = put ] && [ "$c" -gt 1 ]; then
		m=$(curl -s "127.0.0.1:$hport/metrics" | awk '
			/^sluice_log_commit_seconds_sum/ {s=$2}
			/^sluice_log_commit_seconds_count/ {n=$2}
			/^sluice_log_batch_records_sum/ {r=$2}
			/^sluice_log_pads_total/ {p=$2}
			/^sluice_log_batches_beside_total/ {b=$2}
			/^sluice_log_written_bytes_total/ {w=$2}
			END { if (n > 0) printf "| commits %d, mean %.2f ms, %.1f records each, %d beside others, %d pads, %.0f log bytes a record", n, s / n * 1000, r / n, b, p, (r > 0 ? w / r : 0) }')
		nr=$(curl -s "127.0.0.1:$hport/metrics" | awk '
			/^sluice_log_commit_seconds_count/ {n=$2}
			/^sluice_log_batch_records_sum/ {r=$2}
			END {print n + 0, r + 0}')
	fi
	if [ -n "$perfpid" ]; then
		kill -INT "$perfpid"
		wait "$perfpid" 2>/dev/null || true
		p=$(awk -F, -v n="${nr% *}" -v r="${nr#* }" '
			$3 == "task-clock" {tc=$1}
			$3 == "context-switches" {cs=$1}
			$3 == "raw_syscalls:sys_enter" {sc=$1}
			$3 == "io_uring:io_uring_queue_async_work" {aw=$1}
			END { if (n > 0 && r > 0) printf "| per commit: %.1f syscalls, %.1f switches, %.2f io-wq hand-offs; per record: %.2f syscalls, %.2f switches, %.1f us server CPU", sc / n, cs / n, aw / n, sc / r, cs / r, tc * 1000 / r }' "$TMP/perf")
	fi
	# each run's server is stopped before the next starts on the same
	# directory: left running, its preallocator went on making spares
	# in the next one's
	kill -TERM "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
	PID=""
	echo "$label $wl C=$c: $out $m $p"
}

"$BUILD/bin/fsync_probe" --dir "$TMP" --count 2000
for _ in $(seq "$ROUNDS"); do
	for w in "put 1" "put 32" "mixed 32"; do
		# shellcheck disable=SC2086
		set -- $w
		[ -n "$OLD" ] && one old "$OLD" "" "$1" "$2"
		for m in $MODES; do
			case $m in
			uring:*) one "uring-x${m#uring:}" "$BUILD/bin/sluiced" \
				"--wal-commit uring --wal-inflight ${m#uring:}" \
				"$1" "$2" ;;
			*) one "$m" "$BUILD/bin/sluiced" "--wal-commit $m" \
				"$1" "$2" ;;
			esac
		done
	done
done
"$BUILD/bin/fsync_probe" --dir "$TMP" --count 2000
