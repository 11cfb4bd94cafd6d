#!/usr/bin/env bash
# failover.sh - how long writes stop when the leader dies: an etcd and
# three sluiced with --etcd and --sync-replicas 1 (default --leader-ttl,
# 3 s), a steady put load through every node's URL, and the leader killed
# with kill -9 N times. Each round measures the time from the kill to the
# first put that succeeds, sent after the kill through
# `sluice -s URL0,URL1,URL2 --timeout 30s put` (what an application with
# libsluice sees), then brings the killed node back as a follower and
# waits until it has caught up. Prints each round, then the p50 and the
# max.
#
# Everything runs on 127.0.0.1: etcd and the nodes on free ports, their
# data in a temporary directory removed on exit (kept, with the logs,
# when a round fails), with every process this script started.
#
# Usage: bench/failover.sh [--rounds N]   (default 5)
# Environment: BUILD (default build), BENCH_TMPDIR (default BUILD), ETCD
# (default: etcd on the PATH; make test-deps installs etcd-server).
set -euo pipefail

ROUNDS=5
while [[ $# -gt 0 ]]; do
	case "$1" in
	--rounds) ROUNDS=$2; shift 2 ;;
	*) echo "usage: bench/failover.sh [--rounds N]" >&2; exit 2 ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "failover.sh: --rounds takes a positive count" >&2; exit 2; }

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=$BUILD/bin
ETCD=${ETCD:-$(command -v etcd || true)}
for p in "$BIN/sluiced" "$BIN/sluice"; do
	[[ -x $p ]] || { echo "failover.sh: $p is missing: build first (make build)" >&2; exit 1; }
done
[[ -n $ETCD && -x $ETCD ]] || { echo "failover.sh: no etcd (make test-deps installs etcd-server)" >&2; exit 1; }

TMP=$(mktemp -d "${BENCH_TMPDIR:-$BUILD}/failover-bench.XXXXXX")
PIDS=()
cleanup() {
	local rc=$?
	for p in "${PIDS[@]:-}"; do [[ -n $p ]] && kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if ((rc == 0)); then rm -rf "$TMP"; else echo "failover.sh: logs kept in $TMP" >&2; fi
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_until SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds
wait_until() {
	local end=$(($(now_ms) + $1 * 1000)); shift
	until "$@" >/dev/null 2>&1; do
		(($(now_ms) < end)) || return 1
		sleep 0.05
	done
}

# etcd
EC=$(port); EP=$(port)
"$ETCD" --name failover-bench --data-dir "$TMP/etcd" \
	--listen-client-urls "http://127.0.0.1:$EC" --advertise-client-urls "http://127.0.0.1:$EC" \
	--listen-peer-urls "http://127.0.0.1:$EP" --initial-advertise-peer-urls "http://127.0.0.1:$EP" \
	--initial-cluster "failover-bench=http://127.0.0.1:$EP" >"$TMP/etcd.log" 2>&1 &
PIDS+=($!)
etcd_healthy() { python3 -c 'import sys,urllib.request; sys.exit(0 if b"true" in urllib.request.urlopen(sys.argv[1], timeout=1).read() else 1)' "http://127.0.0.1:$EC/health"; }
wait_until 30 etcd_healthy || { echo "failover.sh: etcd did not start; see $TMP/etcd.log" >&2; cat "$TMP/etcd.log" >&2; exit 1; }

# the nodes: NODE_PID[i], NODE_URL[i], NODE_HTTP[i] (port), NODE_ARGS_i
declare -a NODE_PID NODE_URL NODE_HTTP
for i in 0 1 2; do
	NODE_URL[i]="tcp://127.0.0.1:$(port)"
	NODE_HTTP[i]=$(port)
	eval "NODE_ARGS_$i=(--data \"\$TMP/node$i\" --listen \"\${NODE_URL[i]}\" \
		--repl-listen \"tcp://127.0.0.1:\$(port)\" --http \"127.0.0.1:\${NODE_HTTP[i]}\" \
		--etcd \"http://127.0.0.1:\$EC\" --cluster bench --node node$i --sync-replicas 1)"
done
URLS="${NODE_URL[0]},${NODE_URL[1]},${NODE_URL[2]}"

start_node() {
	local -n args="NODE_ARGS_$1"
	"$BIN/sluiced" "${args[@]}" 2>>"$TMP/node$1.log" &
	NODE_PID[$1]=$!
	PIDS+=($!)
}

# role I: "leader" when node I leads and takes writes (/health 200)
role() {
	"$BIN/sluice" -s "${NODE_URL[$1]}" --timeout 2s stats --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin).get("role",""))'
}
health() { python3 -c 'import sys,urllib.request
try: urllib.request.urlopen(sys.argv[1], timeout=2); sys.exit(0)
except Exception: sys.exit(1)' "http://127.0.0.1:${NODE_HTTP[$1]}/health"; }
leads() { [[ $(role "$1") == leader ]] && health "$1"; }
find_leader() {
	local end=$(($(now_ms) + 30000))
	while (($(now_ms) < end)); do
		for i in 0 1 2; do
			[[ -n ${NODE_PID[i]} ]] && leads "$i" && { echo "$i"; return 0; }
		done
		sleep 0.05
	done
	echo "failover.sh: no leader within 30 s" >&2
	return 1
}
put() { "$BIN/sluice" -s "$URLS" --timeout 30s put -t "$1" "$2" >/dev/null 2>&1; }

for i in 0 1 2; do start_node "$i"; done
LEADER=$(find_leader)
# a follower has caught up when it follows (its /health is 200), at the
# leader's epoch, with every record the leader had a moment before
lsn() { "$BIN/sluice" -s "${NODE_URL[$1]}" --timeout 2s stats --json 2>/dev/null |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["epoch"], d["lsn"])'; }
caught_up() {
	local le ll fe fl
	[[ $(role "$1") == follower ]] && health "$1" || return 1
	read -r le ll < <(lsn "$2") && read -r fe fl < <(lsn "$1") || return 1
	[[ $fe == "$le" ]] && ((fl >= ll))
}

# the steady load: 4 loops of puts through every URL
load() {
	local n=0
	while :; do put load "$1-$n" || sleep 0.01; n=$((n + 1)); done
}
for l in 1 2 3 4; do load "l$l" & PIDS+=($!); done

echo "etcd + 3 x sluiced --sync-replicas 1, default --leader-ttl; a put load of 4 CLI loops; $ROUNDS rounds"
TOOK=()
for r in $(seq 1 "$ROUNDS"); do
	sleep 1
	victim=$LEADER
	t0=$(now_ms)
	kill -9 "${NODE_PID[victim]}"
	wait "${NODE_PID[victim]}" 2>/dev/null || true
	NODE_PID[victim]=""
	put probe "round $r" || { echo "failover.sh: round $r: no write within 30 s" >&2; exit 1; }
	ms=$(($(now_ms) - t0))
	TOOK+=("$ms")
	LEADER=$(find_leader)
	printf "round %d: node%d killed, node%d leads; first write %d ms after the kill\n" "$r" "$victim" "$LEADER" "$ms"
	start_node "$victim"
	wait_until 60 caught_up "$victim" "$LEADER" ||
		{ echo "failover.sh: node$victim did not rejoin within 60 s" >&2; exit 1; }
done
printf "%s\n" "${TOOK[@]}" | sort -n | awk '{ v[NR] = $1 } END {
	printf "kill -9 to first write, %d rounds: p50 %d ms, max %d ms\n", NR, v[int((NR + 1) / 2)], v[NR] }'
