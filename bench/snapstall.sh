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
BUILDS=()
N=3000000
R=3
SECS=6
SNAP=1
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
	--secs)
		SECS=$2
		shift
		;;
	--no-snapshot) SNAP=0 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "snapstall.sh: unknown argument '$1' (--help)" >&2
		exit 2
		;;
	esac
	shift
done
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build)
for v in "$N" "$R" "$SECS"; do
	case $v in
	'' | *[!0-9]* | 0)
		echo "snapstall.sh: -n, --rounds and --secs want whole numbers > 0" >&2
		exit 2
		;;
	esac
done
for b in "${BUILDS[@]}"; do
	if [ ! -x "$b/bin/sluiced" ] || [ ! -x "$b/bin/sluice-bench" ] ||
		[ ! -x "$b/bin/sluice" ]; then
		echo "snapstall.sh: $b/bin/sluiced, sluice-bench or sluice not found" >&2
		exit 1
	fi
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/snapstall.XXXXXX")
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
for b in "${BUILDS[@]}"; do
	python3 - "$b" "$TMP/runs" <<'EOF'
import re, statistics, sys
b, path = sys.argv[1], sys.argv[2]
rows = [l for l in open(path) if l.split()[0] == b]
keys = ["rate", "p50_us", "p99_us", "max_us", "snap_ms"]
med = {k: statistics.median(float(re.search(k + r"=([0-9.]+)", l).group(1))
                            for l in rows) for k in keys}
print("  " + b + " " + " ".join("%s=%.0f" % (k, med[k]) for k in keys))
EOF
done
