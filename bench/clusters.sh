#!/usr/bin/env bash
# clusters.sh - what a second cluster gives: put at C clients (32) into one
# cluster, beside the same C spread over two clusters of one node each
# (C/2 on each, at the same time), in the same run, with the cluster map
# in the path; and what bounds the figure on this machine.
#
# Set-up: one etcd, two sluiced nodes started with --etcd and --cluster
# c1 / c2 (each its own leader, its own log on the same disk), the map
# giving the default to c1 and the prefix `b.` to c2, so that every put
# is checked against the map (a put sent to the wrong cluster would be
# refused EMOVED and the run would fail). build/bin/sluice-bench
# --target libsluice --workload put (100-byte payloads, fsync always)
# runs against c1 alone (tube a.N, C connections), then as two processes
# at once against c1 (tube a.N) and c2 (tube b.N), C/2 connections each;
# each round alternates the order. Each run reports:
#   - puts/s (summed over the two processes);
#   - each server's CPU per put (user + system from /proc, --server-pid);
#   - the clients' CPU per put (the bench processes' own, getrusage);
#   - the machine's busy CPU over the run (/proc/stat: 100 % = every
#     core), which says whether the cores bound it.
# Then log_bench --commit direct (the server's default commit: one
# O_DIRECT RWF_DSYNC write through io_uring) at C producers, alone and as
# two writers at once into two directories of the same disk at C/2 each:
# the disk's share of the bound.
#
# What two machines would give: two clusters share nothing (no request
# of one waits for the other), so on two machines each would do what one
# cluster does alone on one: 2 x the one-cluster figure, at least (here
# the one cluster shares its cores with its own clients too). The
# ceiling of one cluster's core thread is 1e6 / (server CPU us per put).
#
# Usage: bench/clusters.sh [--secs N] [--conns C] [--rounds R]
# Environment: BUILD (default build), BENCH_TMPDIR (default BUILD; a real
# disk, not tmpfs). Needs etcd (the map); without it the nodes run
# without --etcd and the script says so.
set -euo pipefail

SECS=3
CONNS=32
ROUNDS=3
while [[ $# -gt 0 ]]; do
	case "$1" in
	--secs) SECS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	*) echo "usage: bench/clusters.sh [--secs N] [--conns C] [--rounds R]" >&2; exit 2 ;;
	esac
done
if ((CONNS < 2 || CONNS % 2)); then
	echo "clusters.sh: --conns must be even (C/2 per cluster)" >&2
	exit 2
fi

BUILD=${BUILD:-build}
BIN=$BUILD/bin
for b in sluiced sluice sluice-bench log_bench; do
	[[ -x $BIN/$b ]] || { echo "clusters.sh: no $BIN/$b: build it first" >&2; exit 1; }
done
TMP=$(mktemp -d "${BENCH_TMPDIR:-$BUILD}/clusters-bench.XXXXXX")
TMP=$(cd "$TMP" && pwd)
if [[ $(stat -f -c %T "$TMP") == tmpfs ]]; then
	echo "clusters.sh: warning: $TMP is on tmpfs, where fsync costs nothing" >&2
fi
PIDS=()
cleanup() {
	local p i
	for p in "${PIDS[@]+"${PIDS[@]}"}"; do
		kill "$p" 2>/dev/null || continue
		for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	echo "clusters.sh: no free port" >&2
	exit 1
}

wait_port() {
	for _ in $(seq 1 500); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.02
	done
	echo "clusters.sh: nothing listens on port $1" >&2
	exit 1
}

# ---- etcd and the two clusters ---------------------------------------

ETCD_ARGS=()
if command -v etcd >/dev/null; then
	ep=$(free_port)
	pp=$(free_port)
	etcd --name e0 --data-dir "$TMP/etcd" \
		--listen-client-urls "http://127.0.0.1:$ep" \
		--advertise-client-urls "http://127.0.0.1:$ep" \
		--listen-peer-urls "http://127.0.0.1:$pp" \
		--initial-advertise-peer-urls "http://127.0.0.1:$pp" \
		--initial-cluster "e0=http://127.0.0.1:$pp" \
		--initial-cluster-token clusters-bench >"$TMP/etcd.log" 2>&1 &
	PIDS+=($!)
	wait_port "$ep"
	ETCD_ARGS=(--etcd "http://127.0.0.1:$ep")
else
	echo "clusters.sh: no etcd: the nodes run without the map" >&2
fi

declare -A URL PID
for c in c1 c2; do
	p=$(free_port)
	args=(--data "$TMP/$c" --listen "tcp://127.0.0.1:$p")
	if [[ ${#ETCD_ARGS[@]} -gt 0 ]]; then
		args+=(--repl-listen "tcp://127.0.0.1:$(free_port)" "${ETCD_ARGS[@]}" --cluster "$c" --node "$c")
	fi
	"$BIN/sluiced" "${args[@]}" >"$TMP/$c.log" 2>&1 &
	PIDS+=($!)
	PID[$c]=$!
	URL[$c]="tcp://127.0.0.1:$p"
	wait_port "$p"
done

role() { "$BIN/sluice" -s "$1" stats --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin).get("role",""))' 2>/dev/null || true; }
for c in c1 c2; do
	for _ in $(seq 1 300); do
		[[ $(role "${URL[$c]}") == leader ]] && break
		sleep 0.1
	done
	[[ $(role "${URL[$c]}") == leader ]] || { echo "clusters.sh: $c does not lead; its log:" >&2; tail -n 20 "$TMP/$c.log" >&2; exit 1; }
done
if [[ ${#ETCD_ARGS[@]} -gt 0 ]]; then
	"$BIN/sluice" -s "${URL[c1]}" map set '' c1 >/dev/null
	"$BIN/sluice" -s "${URL[c1]}" map set b. c2 >/dev/null
	# both nodes know the map: a put of b.* refused by c1
	for _ in $(seq 1 100); do
		if "$BIN/sluice" -s "${URL[c1]}" put -t b.probe x 2>&1 | grep -q moved &&
			"$BIN/sluice" -s "${URL[c2]}" put -t a.probe x 2>&1 | grep -q moved; then
			break
		fi
		sleep 0.1
	done
fi

# ---- one run -----------------------------------------------------------

# The machine's busy and total jiffies (every core).
cpu_jiffies() { awk '/^cpu /{b=$2+$3+$4+$7+$8+$9; print b, b+$5+$6}' /proc/stat; }

# bench OUT URL PID TUBE C: one sluice-bench put in the background; its
# JSON to OUT.json and its own CPU seconds (getrusage) to OUT.cpu
bench() {
	python3 - "$1" "$BIN/sluice-bench" --target libsluice --url "$2" \
		--workload put -c "$5" -n 100000000 --duration "${SECS}s" \
		--tube "$4" --server-pid "$3" --json <<'EOF' &
import resource, subprocess, sys
out = sys.argv[1]
with open(out + ".json", "w") as f:
    rc = subprocess.call(sys.argv[2:], stdout=f)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(out + ".cpu", "w").write("%f\n" % (u.ru_utime + u.ru_stime))
sys.exit(rc)
EOF
}

jf() { python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(d[sys.argv[2]])' "$1" "$2"; }

# run KIND ROUND: prints "ops server_cpu_us client_cpu_us busy_pct"
run() {
	local kind=$1 r=$2 b0 t0 b1 t1
	read -r b0 t0 < <(cpu_jiffies)
	if [[ $kind == one ]]; then
		bench "$TMP/one$r" "${URL[c1]}" "${PID[c1]}" "a.one$r" "$CONNS"
		wait $! || { echo "clusters.sh: the bench failed" >&2; exit 1; }
	else
		bench "$TMP/two$r-c1" "${URL[c1]}" "${PID[c1]}" "a.two$r" $((CONNS / 2))
		local p1=$!
		bench "$TMP/two$r-c2" "${URL[c2]}" "${PID[c2]}" "b.two$r" $((CONNS / 2))
		local p2=$!
		wait $p1 || { echo "clusters.sh: the bench against c1 failed" >&2; exit 1; }
		wait $p2 || { echo "clusters.sh: the bench against c2 failed" >&2; exit 1; }
	fi
	read -r b1 t1 < <(cpu_jiffies)
	python3 - "$kind" "$TMP" "$r" "$b0" "$t0" "$b1" "$t1" <<'EOF'
import json, sys
kind, tmp, r = sys.argv[1:4]
b0, t0, b1, t1 = map(int, sys.argv[4:8])
outs = [f"{tmp}/one{r}"] if kind == "one" else [f"{tmp}/two{r}-c1", f"{tmp}/two{r}-c2"]
ops = srv = cli = secs = 0.0
for o in outs:
    d = json.loads(open(o + ".json").read().strip().splitlines()[-1])
    ops += d["ops"]
    secs = max(secs, d["seconds"])
    srv += d["server_cpu_us_per_op"] * d["ops"]
    cli += float(open(o + ".cpu").read()) * 1e6
print("%.0f %.1f %.1f %.0f %s" % (ops / secs, srv / ops, cli / ops,
      100.0 * (b1 - b0) / max(1, t1 - t0),
      " ".join("%.0f" % json.loads(open(o + ".json").read().strip().splitlines()[-1])["ops_per_sec"] for o in outs)))
EOF
}

echo "put, 100-byte payloads, fsync always, ${SECS}s per run, C=$CONNS; $(nproc) cores," \
	"load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ ${#ETCD_ARGS[@]} -gt 0 ]] && echo "two clusters of one node each, one etcd, the map: '' -> c1, b. -> c2"
echo
echo "| round | set-up | puts/s | per cluster | server CPU us/put | client CPU us/put | machine busy |"
echo "|---|---|--:|---|--:|--:|--:|"
ONE=()
TWO=()
for r in $(seq 1 "$ROUNDS"); do
	order=(one two)
	((r % 2)) || order=(two one)
	for k in "${order[@]}"; do
		read -r ops srv cli busy per < <(run "$k" "$r")
		if [[ $k == one ]]; then
			ONE+=("$ops $srv")
			printf "| %d | one cluster, C=%d | %s | %s | %s | %s | %s %% |\n" "$r" "$CONNS" "$ops" "$per" "$srv" "$cli" "$busy"
		else
			TWO+=("$ops $srv")
			printf "| %d | two clusters, C=%d each | %s | %s | %s | %s | %s %% |\n" "$r" $((CONNS / 2)) "$ops" "${per/ / + }" "$srv" "$cli" "$busy"
		fi
	done
done
echo
python3 - "${ONE[@]}" -- "${TWO[@]}" <<'EOF'
import statistics, sys
a = sys.argv[1:]
i = a.index("--")
one = [tuple(map(float, s.split())) for s in a[:i]]
two = [tuple(map(float, s.split())) for s in a[i + 1:]]
o = statistics.median(x[0] for x in one)
t = statistics.median(x[0] for x in two)
cpu = statistics.median(x[1] for x in one)
print("medians: one cluster %.0f puts/s, two clusters %.0f puts/s: %.2f x" % (o, t, t / o))
print("same-run ratios, round by round: " + ", ".join("%.2f" % (y[0] / x[0]) for x, y in zip(one, two)))
print("one cluster's server CPU: %.1f us per put: its core thread's ceiling %.0f puts/s" % (cpu, 1e6 / cpu))
print("two machines (one cluster each, sharing nothing): at least 2 x %.0f = %.0f puts/s" % (o, 2 * o))
EOF

# ---- the disk: log_bench alone and two at once -------------------------
echo
lb() { "$BIN/log_bench" --dir "$1" --seconds "$SECS" --producers "$2" --commit direct 2>/dev/null | tail -n 1; }
rps() { python3 -c 'import json,sys; print("%.0f" % json.loads(sys.stdin.read())["runs"][0]["records_per_s"])'; }
alone=$(lb "$TMP/lb0" "$CONNS" | rps)
lb "$TMP/lb1" $((CONNS / 2)) | rps >"$TMP/lb1.out" &
l1=$!
lb "$TMP/lb2" $((CONNS / 2)) | rps >"$TMP/lb2.out" &
l2=$!
wait $l1 $l2
w1=$(cat "$TMP/lb1.out")
w2=$(cat "$TMP/lb2.out")
echo "log_bench --commit direct (the log writer alone, no server): one writer at $CONNS producers $alone records/s;" \
	"two writers at once into the same disk at $((CONNS / 2)) each $w1 + $w2 = $((w1 + w2)) records/s"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
