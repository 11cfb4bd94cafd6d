#!/usr/bin/env bash
# clients.sh - the language clients against libsluice, and each against a
# well-written client of its language for Redis, in one run.
#
# For every measurement a fresh server on a temporary directory (on disk,
# under BUILD) and a free port of 127.0.0.1:
#   sluiced --fsync always (the default: fdatasync before a reply, group
#           commit), driven by
#     libsluice       build/bin/sluice-bench --target libsluice (a thread
#                     and a handle per connection)
#     python-threads  clients/python: a thread and a Client per connection
#     python-asyncio  clients/python: an asyncio task and an AsyncClient
#                     per connection, one event loop
#     node            clients/node: a loop and a Client per connection
#   redis-server --appendonly yes --appendfsync always --save '' (durable
#           like sluice), a stream and a consumer group, driven by
#     redis-py        Debian's python3-redis, a thread and a connection
#                     per connection
#     redis-py-asyncio  its redis.asyncio, a task and a connection per
#                     connection, one event loop
#     ioredis         npm's ioredis (bench/clients/node_modules), a
#                     connection per loop
# Workloads, closed loop, 100-byte payloads, at C = 1 and C = 32:
#   put    C connections put for SECS seconds (at most 200,000 tasks)
#   drain  TASKS tasks preloaded untimed (put_batch; Redis: pipelined
#          XADD), then C connections take + ack (Redis: XREADGROUP COUNT 1,
#          then XACK + XDEL pipelined) until none is left; 1 op = take + ack
# Prints one line per run (JSON) and a table of operations per second.
#
# Usage: bench/clients.sh [SECS] [TASKS]   (defaults 3 and 5000)
# Needs: make build, the target sluice-bench (cmake --build build --target
# sluice-bench), redis-server, python3-redis, node and
# `npm install --prefix bench/clients` (make bench-deps does all but the
# build).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SECS=${1:-3}
TASKS=${2:-5000}
PY=/usr/bin/python3
TMP=$(mktemp -d "$PWD/$BUILD/clients-bench.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT

port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
	for _ in $(seq 100); do
		$PY -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "no server on port $1" >&2
	return 1
}

start_sluiced() {
	P=$(port)
	rm -rf "$TMP/data"
	"$BUILD/bin/sluiced" --data "$TMP/data" --listen "tcp://127.0.0.1:$P" \
		>"$TMP/sluiced.log" 2>&1 &
	SRV=$!
	wait_port "$P"
	URL="tcp://127.0.0.1:$P"
}

start_redis() {
	P=$(port)
	rm -rf "$TMP/redis"
	mkdir -p "$TMP/redis"
	redis-server --port "$P" --bind 127.0.0.1 --dir "$TMP/redis" \
		--appendonly yes --appendfsync always --save '' \
		>"$TMP/redis.log" 2>&1 &
	SRV=$!
	wait_port "$P"
	URL="tcp://127.0.0.1:$P"
}

stop() { kill "$SRV"; wait "$SRV" 2>/dev/null || true; }

n_for() { if [ "$1" = put ]; then echo 200000; else echo "$TASKS"; fi; }

run() { # NAME WORKLOAD CONNS
	local n
	n=$(n_for "$2")
	case $1 in
	libsluice)
		start_sluiced
		"$BUILD/bin/sluice-bench" --target libsluice --url "$URL" \
			--workload "$2" -c "$3" -n "$n" --duration "${SECS}s" --json |
			tail -n1 | $PY -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({"client":"libsluice","workload":sys.argv[1],"conns":int(sys.argv[2]),"ops_per_s":round(d["ops_per_sec"])}))' "$2" "$3"
		;;
	python-threads | python-asyncio)
		start_sluiced
		$PY bench/clients/bench_client.py "sluice-${1#python-}" "$URL" "$2" "$3" "$n" "$SECS"
		;;
	node)
		start_sluiced
		node bench/clients/bench_client.js sluice "$URL" "$2" "$3" "$n" "$SECS"
		;;
	redis-py)
		start_redis
		$PY bench/clients/bench_client.py redis-threads "$URL" "$2" "$3" "$n" "$SECS"
		;;
	redis-py-asyncio)
		start_redis
		$PY bench/clients/bench_client.py redis-asyncio "$URL" "$2" "$3" "$n" "$SECS"
		;;
	ioredis)
		start_redis
		node bench/clients/bench_client.js redis "$URL" "$2" "$3" "$n" "$SECS"
		;;
	esac
	stop
}

for w in put drain; do
	for c in 1 32; do
		for name in libsluice python-threads python-asyncio node redis-py \
			redis-py-asyncio ioredis; do
			run "$name" "$w" "$c" | tee -a "$TMP/results.jsonl"
		done
	done
done

$PY - "$TMP/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
names = ["libsluice", "python-threads", "python-asyncio", "node",
         "redis-py", "redis-py-asyncio", "ioredis"]
key = {"sluice-threads": "python-threads", "sluice-asyncio":
       "python-asyncio", "sluice-node": "node", "redis-threads": "redis-py",
       "redis-asyncio": "redis-py-asyncio",
       "redis-node": "ioredis", "libsluice": "libsluice"}
got = {(key[r["client"]], r["workload"], r["conns"]): r["ops_per_s"]
       for r in rows}
print("| workload | C | " + " | ".join(names) + " |")
print("|---|---|" + "---|" * len(names))
for w in ("put", "drain"):
    for c in (1, 32):
        print("| %s | %d | %s |" % (w, c, " | ".join(
            str(got.get((n, w, c), "-")) for n in names)))
PY
