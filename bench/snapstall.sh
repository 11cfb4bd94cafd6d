#!/usr/bin/env bash
# snapstall.sh - what a snapshot's build and write cost one client's puts:
# builds alternating, each round on a fresh server.
#
# Each round, for each build in turn: a fresh sluiced (--fsync always,
# snapshots only when asked: --snapshot-records and --snapshot-bytes out
# of reach), N tasks put in batches of 100 by 32 connections, then one
# client's puts into tube `lat` for --secs seconds
#   sluice-bench --target libsluice --workload put -c 1 -s 100 --tube lat
# with `sluice snapshot` asked 1.5 s into them. Prints, per build and
# round, the client's rate, p50, p99 and slowest put, and the snapshot's
# time (ms=) as the server logged it; then each build's medians. With
# --no-snapshot the snapshot is not asked (the yardstick).
#
# Usage: bench/snapstall.sh [--build DIR]... [-n N] [--rounds R]
#                           [--secs S] [--no-snapshot]
#   --build DIR  a build to measure (repeat to alternate; default build)
#   -n N         tasks in the server before the client's puts
#                (default 3000000)
#   --rounds R   rounds (default 3)
#   --secs S     the client's run (default 6; the snapshot is asked at
#                1.5 s)
# A benchmark, never a test.
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/alternate.sh
N=3000000
R=3
SECS=6
SNAP=1
alt_option() {
	case $1 in
	--secs)
		SECS=$2
		return 2
		;;
	--no-snapshot)
		SNAP=0
		return 1
		;;
	esac
	return 0
}
alt_args "$0" "$@"
alt_check "$0" sluiced sluice-bench sluice
case $SECS in
'' | *[!0-9]* | 0)
	echo "snapstall.sh: --secs wants a whole number > 0" >&2
	exit 2
	;;
esac
alt_tmp snapstall

# A latency figure of sluice-bench's line, in µs: "p50 283 us" or "1.2 ms".
field() {
	echo "$2" | grep -o "$1 [0-9.]* [mu]s" | awk '{ print $3 == "ms" ? $2 * 1000 : $2 }'
}

run() {
	local b=$1 d=$TMP/data port url out lat snap_ms
	rm -rf "$d"
	port=$(free_port)
	url=tcp://127.0.0.1:$port
	"$b/bin/sluiced" --data "$d" --listen "$url" --fsync always \
		--snapshot-records 1000000000 --snapshot-bytes 1099511627776 \
		>"$TMP/server.log" 2>&1 &
	SP=$!
	for _ in $(seq 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.05
	done
	"$b/bin/sluice-bench" --target libsluice --url "$url" --workload put \
		-c 32 -s 100 --batch 100 -n "$N" >/dev/null
	sleep 1
	"$b/bin/sluice-bench" --target libsluice --url "$url" --workload put \
		-c 1 -s 100 -n 100000000 --duration "${SECS}s" --tube lat \
		>"$TMP/lat" 2>&1 &
	local bp=$!
	sleep 1.5
	if [ "$SNAP" = 1 ]; then
		"$b/bin/sluice" -s "$url" snapshot >/dev/null
	fi
	wait "$bp"
	sleep 0.5
	out=$(cat "$TMP/lat")
	lat=$(echo "$out" | grep 'latency per op')
	snap_ms=$(grep -o 'snapshot written.* ms=[0-9]*' "$TMP/server.log" |
		grep -o 'ms=[0-9]*' | cut -d= -f2 | tail -1 || true)
	kill -TERM "$SP"
	wait "$SP" || true
	SP=
	echo "$b rate=$(echo "$out" | grep -o '[0-9.]* ops/s' | cut -d' ' -f1)" \
		"p50_us=$(field p50 "$lat") p99_us=$(field p99 "$lat")" \
		"max_us=$(field max "$lat") snap_ms=${snap_ms:-0}" |
		tee -a "$TMP/runs"
}

for _ in $(seq "$R"); do
	for b in "${BUILDS[@]}"; do
		run "$b"
	done
done
echo "medians over $R rounds, $N tasks in the server:"
alt_medians rate p50_us p99_us max_us snap_ms
