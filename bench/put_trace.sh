#!/usr/bin/env bash
# put_trace.sh - where the time of one client's durable put goes, in
# sluiced (--fsync always, its default commit) and in beanstalkd -f 0
# side by side: for each server, put at C = 1 (sluice-bench; libsluice
# against sluiced, the beanstalk generator against beanstalkd), `perf
# record -a` of the scheduler's, the block layer's, io_uring's and the
# workqueues' tracepoints for --secs seconds, and for every put its
# steps: the request wakes the server, the write is issued (for sluiced
# the log's write request on its ring, which carries the sockets' sends
# and receives too), the write on disk until the cache flush is issued,
# the flush on disk until the server's thread is woken (by the interrupt
# for beanstalkd's fdatasync; by the kernel worker that completes a
# durable direct write on a disk without FUA for sluiced), and the reply
# wakes the client. The disk's own completions are not timed: this VM's
# virtio disk completes most requests without the block_rq_complete
# tracepoint. Prints the median and mean of each
# step, in µs, then, per put, the system calls and context switches of
# the server and of the client (perf stat), counts that hold on a busy
# machine where the times do not. Needs root (perf) and python3.
#
# Usage: bench/put_trace.sh [--secs N] [--rounds R] [--old DIR]
#   --old DIR  also an older build (DIR/sluiced and DIR/sluice-bench),
#              the servers taking turns in each round
# Environment: BUILD (default build), BENCH_TMPDIR (default BUILD; a real
# disk, not tmpfs).
set -euo pipefail

SECS=1
ROUNDS=1
OLD=""
. "$(dirname "$0")/trace.sh"
trace_args "$0" secs=SECS:count rounds=ROUNDS:count old=OLD -- "$@"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BEANSTALKD=$(command -v beanstalkd) || {
	echo "put_trace.sh: beanstalkd not found" >&2
	exit 1
}
trace_tmp put-trace

# one KIND (new, old, beanstalkd): a fresh server, the trace, the steps
one() {
	local kind=$1 dir port bin target i
	dir=$(mktemp -d "$TMP/$kind.XXXXXX")
	port=$(free_port)
	bin=$BUILD/bin
	[ "$kind" = old ] && bin=$OLD
	if [ "$kind" = beanstalkd ]; then
		"$BEANSTALKD" -l 127.0.0.1 -p "$port" -b "$dir" -f 0 \
			>"$dir.log" 2>&1 &
		target=beanstalkd
	else
		"$bin/sluiced" --data "$dir/data" --fsync always \
			--listen "tcp://127.0.0.1:$port" >"$dir.log" 2>&1 &
		target=libsluice
	fi
	PID=$!
	for i in $(seq 1 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.05
	done
	perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "$PID" \
		-o "$dir.sstat" 2>/dev/null &
	local stat=$!
	perf stat -x, -e raw_syscalls:sys_enter,context-switches \
		-o "$dir.cstat" "$bin/sluice-bench" --target "$target" \
		--url "tcp://127.0.0.1:$port" --workload put -c 1 -s 100 \
		-n 100000000 --duration "$((SECS + 2))s" --json \
		>"$dir.bench" 2>&1 &
	local bench=$!
	sleep 1
	perf record -a -q -o "$dir.perf" -e sched:sched_switch,sched:sched_wakeup,block:block_rq_issue,block:block_rq_complete,io_uring:io_uring_submit_req,workqueue:workqueue_execute_start \
		-- sleep "$SECS" >/dev/null 2>&1
	wait "$bench"
	kill -INT "$stat"
	wait "$stat" 2>/dev/null || true
	kill -TERM "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
	perf script -i "$dir.perf" -F comm,pid,tid,cpu,time,event,trace \
		2>/dev/null >"$dir.txt"
	echo "== $kind: $(grep -o '[0-9.]* ops/s' "$dir.bench" | head -1)"
	python3 - "$dir.txt" "$dir.bench" "$dir.sstat" "$dir.cstat" <<'EOF'
import collections, json, re, statistics, sys

path, bench, sstat, cstat = sys.argv[1:5]
pat = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)')
ev = []
for line in open(path):
    m = pat.match(line)
    if m:
        comm, pid, tid, _, t, name, rest = m.groups()
        ev.append((float(t), comm, pid, tid, name, rest + ' '))
ev.sort(key=lambda e: e[0])
# the server: the process that issues the writes; the client: the
# thread the server wakes most
srv = collections.Counter(pid for _, c, pid, _, n, r in ev
                          if n in ('io_uring:io_uring_submit_req',)
                          or (n == 'block:block_rq_issue' and ' WS' in r
                              and not c.startswith('kworker')))
if not srv:
    sys.exit('no write traced')
srv = srv.most_common(1)[0][0]
woken = collections.Counter()
for _, _, pid, _, n, r in ev:
    m = re.search(r' pid=(\d+) ', r)
    if n == 'sched:sched_wakeup' and pid == srv and m:
        woken[m.group(1)] += 1
cli = woken.most_common(1)[0][0]
puts, cur = [], None
for t, comm, pid, tid, name, rest in ev:
    if (name == 'sched:sched_wakeup' and tid == cli
            and (' pid=' + srv + ' ') in rest):
        cur = {'req': t}
        continue
    if cur is None:
        continue
    if (name == 'sched:sched_switch' and 'run' not in cur
            and ('next_pid=' + srv + ' ') in rest):
        cur['run'] = t
    elif ('sub' not in cur and pid == srv
          and ((name == 'io_uring:io_uring_submit_req'
                and re.search(r'opcode (WRITE|WRITEV|WRITE_FIXED|FSYNC),',
                              rest))
               or (name == 'block:block_rq_issue' and ' WS' in rest))):
        cur['sub'] = t
    elif (name == 'block:block_rq_issue' and ' FF ' in rest
          and 'sub' in cur and 'fl' not in cur):
        cur['fl'] = t
    elif (name == 'sched:sched_wakeup' and 'fl' in cur
          and 'xwake' not in cur and ('pid=' + srv + ' ') in rest):
        cur['xwake'] = t
    elif (name == 'sched:sched_wakeup' and pid == srv and 'xwake' in cur
          and (' pid=' + cli + ' ') in rest):
        cur['reply'] = t
        puts.append(cur)
        cur = None
print('puts traced: %d' % len(puts))
for a, b, what in [
        ('req', 'sub', 'request -> write issued'),
        ('sub', 'fl', 'write on disk -> flush issued'),
        ('fl', 'xwake', 'flush on disk -> server woken'),
        ('xwake', 'reply', 'server woken -> client woken'),
        ('req', 'reply', 'request -> reply')]:
    v = [(c[b] - c[a]) * 1e6 for c in puts if a in c and b in c]
    if v:
        print('  %-30s median %7.1f us  mean %7.1f us' %
              (what, statistics.median(v), statistics.mean(v)))
ops = None
for line in open(bench):
    if line.startswith('{'):
        ops = json.loads(line).get('ops')
def per(f):
    d = {}
    for line in open(f):
        p = line.split(',')
        if len(p) > 2 and p[0].replace('.', '').isdigit():
            d[p[2]] = float(p[0])
    return d
if ops:
    s, c = per(sstat), per(cstat)
    print('  per put: server %.2f syscalls %.2f switches; client %.2f '
          'syscalls %.2f switches' % (
              s.get('raw_syscalls:sys_enter', 0) / ops,
              s.get('context-switches', 0) / ops,
              c.get('raw_syscalls:sys_enter', 0) / ops,
              c.get('context-switches', 0) / ops))
EOF
}

for round in $(seq 1 "$ROUNDS"); do
	echo "round $round: raw 100-byte pwrite + fdatasync p50 $("$BUILD/bin/fsync_probe" --dir "$TMP" --count 1000 --bytes 100 --json | tail -n 1 | sed -n 's/.*"p50_us":\([0-9.]*\).*/\1/p') µs"
	one new
	[ -z "$OLD" ] || one old
	one beanstalkd
done
