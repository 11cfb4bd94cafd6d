#!/usr/bin/env bash
# commit_trace.sh - where the time of a commit through io_uring goes: one
# sluiced (--wal-commit uring) under put at C = 32 (sluice-bench
# --target libsluice), `perf record -a` of the kernel's tracepoints for
# --secs seconds, and for every commit (the log's write on the ring,
# which carries the sockets' sends and receives too) its steps from
# submission to the completion the server reaps: until the kernel worker
# that completes a durable direct write on a disk without FUA
# (iomap_dio_complete_work) runs (the O_DIRECT write on disk, then, when
# the worker slept, its wake-up and its wait for a CPU), the cache flush
# it issues, until the server's loop is woken (the flush on disk and the
# worker's completion of the write), the loop's wait for a CPU. The
# disk's own completions are not timed: this VM's virtio disk completes
# most requests without the block_rq_complete tracepoint. Prints the
# median and mean of each step, in µs. Needs root (perf) and python3.
#
# Usage: bench/commit_trace.sh [--secs N] [--keep DIR]
# Environment: BUILD (default build), BENCH_TMPDIR (default BUILD; a real
# disk, not tmpfs).
set -euo pipefail

SECS=2
KEEP=""
. "$(dirname "$0")/trace.sh"
trace_args "$0" secs=SECS:count keep=KEEP -- "$@"
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
trace_tmp commit-trace

port=$(free_port)
"$BUILD/bin/sluiced" --data "$TMP/data" --listen "tcp://127.0.0.1:$port" \
	--wal-commit uring >"$TMP/server.log" 2>&1 &
PID=$!
sleep 0.7
"$BUILD/bin/sluice-bench" --target libsluice --url "tcp://127.0.0.1:$port" \
	--workload put -c 32 -n 100000000 -s 100 --duration "$((SECS + 2))s" \
	>"$TMP/bench" 2>&1 &
BENCH=$!
sleep 1
perf record -a -q -o "$TMP/perf.data" -e io_uring:io_uring_submit_req,io_uring:io_uring_complete,block:block_rq_issue,block:block_rq_complete,workqueue:workqueue_execute_start,sched:sched_wakeup,sched:sched_switch \
	-- sleep "$SECS" >/dev/null 2>&1
wait "$BENCH"
grep 'ops/s' "$TMP/bench" || true
perf script -i "$TMP/perf.data" 2>/dev/null >"$TMP/script.txt"
[ -n "$KEEP" ] && cp "$TMP/script.txt" "$KEEP/"
python3 - "$TMP/script.txt" "$PID" <<'EOF'
import re
import statistics
import sys

loop = sys.argv[2]
events, workers = [], set()
pat = re.compile(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)')
for line in open(sys.argv[1]):
    m = pat.match(line)
    if not m:
        continue
    comm, pid, _, t, name, rest = m.groups()
    if 'iomap_dio_complete_work' in rest:
        workers.add(pid)
    events.append((float(t), comm, pid, name, rest + ' '))
events.sort()


def wakes(rest, pids):
    return any(' pid=' + p + ' ' in rest for p in pids)


# The loop's rings carry its sockets' sends and receives too: a commit is
# the log's write (or its fdatasync op), and ends with that request's own
# completion.
req = re.compile(r'req (0x[0-9a-f]+),')
commits, cur = [], None
for t, comm, pid, name, rest in events:
    if (name == 'io_uring:io_uring_submit_req' and pid == loop
            and re.search(r'opcode (WRITE|WRITEV|WRITE_FIXED|FSYNC),', rest)):
        # one commit followed at a time; one whose completion the trace
        # lost (a full buffer) is given up after 100 ms
        if cur is None or t - cur['sub'] > 0.1:
            cur = {'sub': t, 'req': req.search(rest).group(1)}
        continue
    if cur is None:
        continue
    if (name == 'sched:sched_wakeup' and 'kwake' not in cur
            and 'kw' not in cur and wakes(rest, workers)):
        cur['kwake'] = t
    elif (name == 'workqueue:workqueue_execute_start'
          and 'iomap_dio_complete_work' in rest and 'kw' not in cur):
        cur['kw'] = t
    elif (name == 'block:block_rq_issue' and 'kw' in cur
          and 'fl' not in cur and pid != loop):
        cur['fl'] = t
    elif (name == 'sched:sched_wakeup' and 'fl' in cur and 'xwake' not in cur
          and 'pid=' + loop + ' ' in rest):
        cur['xwake'] = t
    elif (name == 'sched:sched_switch' and 'xwake' in cur
          and 'xrun' not in cur and 'next_pid=' + loop + ' ' in rest):
        cur['xrun'] = t
    elif (name == 'io_uring:io_uring_complete' and pid == loop
          and req.search(rest) and req.search(rest).group(1) == cur['req']):
        cur['done'] = t
        commits.append(cur)
        cur = None

print('commits traced: %d; the workers completing them: %s' %
      (len(commits), ' '.join(sorted(workers)) or 'none'))
steps = [
    ('sub', 'kw', 'submitted -> the worker runs'),
    ('sub', 'kwake', '  of which: -> worker woken (when asleep)'),
    ('kwake', 'kw', '  of which: worker waits for a CPU'),
    ('kw', 'fl', 'worker issues the flush'),
    ('fl', 'xwake', 'flush issued -> loop woken'),
    ('xwake', 'xrun', 'loop waits for a CPU'),
    ('xrun', 'done', 'loop posts the completion'),
    ('sub', 'done', 'submitted -> completion'),
]
for a, b, what in steps:
    v = [(c[b] - c[a]) * 1e6 for c in commits
         if a in c and b in c and c[b] >= c[a]]
    if v:
        print('%-38s n=%5d  median %8.1f us  mean %8.1f us' %
              (what, len(v), statistics.median(v), statistics.mean(v)))
EOF
