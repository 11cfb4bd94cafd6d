#!/usr/bin/env bash
# repl.sh - what replication costs: put throughput and latency with 0, 1
# and 2 followers, asynchronous and with --sync-replicas 1, and the
# followers' lag under the mixed workload. beanstalkd -f 0 (durable, no
# replication at all) runs in the same script as the anchor.
#
# Every set-up starts fresh servers on temporary directories and free
# ports on 127.0.0.1 (all nodes on this one machine, sharing its disk and
# cores: a real deployment puts them on separate disks), all with
# --fsync always, and runs build/bin/sluice-bench put at C = 32,
# 100-byte payloads, for --secs seconds. The mixed run samples the
# followers' lag (sluice stats) every 100 ms and reports the largest.
#
# Usage: bench/repl.sh [--secs N] [--conns C]
# Environment: BUILD (default build), BENCH_TMPDIR (default BUILD; a real
# disk, not tmpfs).
set -euo pipefail

SECS=5
CONNS=32
while [[ $# -gt 0 ]]; do
	case "$1" in
	--secs) SECS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	*) echo "usage: bench/repl.sh [--secs N] [--conns C]" >&2; exit 2 ;;
	esac
done

BUILD=${BUILD:-build}
BIN=$BUILD/bin
TMP=$(mktemp -d "${BENCH_TMPDIR:-$BUILD}/repl-bench.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]:-}"; do [[ -n $p ]] && kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

wait_port() {
	for _ in $(seq 1 500); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.02
	done
	echo "repl.sh: nothing listens on port $1" >&2
	exit 1
}

# start NAME [args...]: prints "client_url repl_url"
start() {
	local name=$1; shift
	local cp rp
	cp=$(port); rp=$(port)
	"$BIN/sluiced" --data "$TMP/$name" --listen "tcp://127.0.0.1:$cp" \
		--repl-listen "tcp://127.0.0.1:$rp" "$@" 2>"$TMP/$name.log" &
	PIDS+=($!)
	wait_port "$cp"
	echo "tcp://127.0.0.1:$cp tcp://127.0.0.1:$rp"
}

stop_all() {
	for p in "${PIDS[@]:-}"; do [[ -n $p ]] && kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	PIDS=()
	rm -rf "${TMP:?}"/*
}

field() { tail -n 1 | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d.get(sys.argv[1], ""))' "$1"; }

# setup FOLLOWERS SYNC: runs put, prints one table row
run_put() {
	local nf=$1 sync=$2 args=()
	[[ $sync -gt 0 ]] && args=(--sync-replicas "$sync")
	read -r lc lr < <(start leader "${args[@]}")
	for i in $(seq 1 "$nf"); do
		start "f$i" --follow "$lr" >/dev/null
	done
	sleep 0.5
	local out
	out=$("$BIN/sluice-bench" --target sluice --url "$lc" --workload put \
		-c "$CONNS" -n 1000000 --duration "${SECS}s" --json)
	printf "| %d | %s | %s | %s | %s |\n" "$nf" \
		"$([[ $sync -gt 0 ]] && echo "sync $sync" || echo async)" \
		"$(echo "$out" | field ops_per_sec)" \
		"$(echo "$out" | field p50_us)" "$(echo "$out" | field p99_us)"
	stop_all
}

run_lag() {
	read -r lc lr < <(start leader)
	read -r fc _ < <(start f1 --follow "$lr")
	sleep 0.5
	"$BIN/sluice-bench" --target sluice --url "$lc" --workload mixed \
		-c "$CONNS" --duration "${SECS}s" --preload 2000 --json \
		>"$TMP/mixed.json" &
	local bench=$! max_rec=0 max_ms=0
	while kill -0 "$bench" 2>/dev/null; do
		read -r r m < <("$BIN/sluice" -s "$fc" stats --json | python3 -c '
import json,sys; d=json.load(sys.stdin); n=d.get("node",{})
print(n.get("lag_records",0), n.get("lag_ms",0))') || true
		[[ ${r:-0} -gt $max_rec ]] && max_rec=$r
		[[ ${m:-0} -gt $max_ms ]] && max_ms=$m
		sleep 0.1
	done
	wait "$bench" || true
	read -r ack ackmax < <("$BIN/sluice" -s "$lc" stats --json | python3 -c '
import json,sys; n=json.load(sys.stdin).get("node",{})
f=[k[:-len("_acked_lsn")] for k in n if k.startswith("follower_") and k.endswith("_acked_lsn")]
print(n.get(f[0]+"_ack_ms",0) if f else 0, n.get(f[0]+"_ack_ms_max",0) if f else 0)')
	echo "mixed C=$CONNS with 1 async follower: $(field ops_per_sec <"$TMP/mixed.json") ops/s;" \
		"follower lag sampled every 100 ms: at most $max_rec records, $max_ms ms;" \
		"append on the leader to durable on the follower: last $ack ms, at most $ackmax ms"
	stop_all
}

run_beanstalkd() {
	local p
	p=$(port)
	mkdir -p "$TMP/bs"
	beanstalkd -l 127.0.0.1 -p "$p" -b "$TMP/bs" -f 0 &
	PIDS+=($!)
	wait_port "$p"
	local out
	out=$("$BIN/sluice-bench" --target beanstalkd --url "tcp://127.0.0.1:$p" \
		--workload put -c "$CONNS" -n 1000000 --duration "${SECS}s" --json)
	printf "| beanstalkd -f 0 | - | %s | %s | %s |\n" \
		"$(echo "$out" | field ops_per_sec)" \
		"$(echo "$out" | field p50_us)" "$(echo "$out" | field p99_us)"
	stop_all
}

echo "put, C=$CONNS, 100-byte payloads, ${SECS}s per row, fsync always"
echo
echo "| followers | mode | puts/s | p50 us | p99 us |"
echo "|---|---|---|---|---|"
run_put 0 0
run_put 1 0
run_put 2 0
run_put 1 1
run_put 2 1
if command -v beanstalkd >/dev/null; then run_beanstalkd; fi
echo
run_lag
