"""The Python Worker against a real sluiced: 4 worker processes of 8
threads drain 10,000 tasks exactly once; a worker killed with kill -9
mid-task gives its task back (a session lease); SIGTERM during work lets
the running tasks finish and takes nothing more, exit 0; a raising
handler leaves its text as the task's last error (sluice.Fatal buries);
a handler longer than the ttr is kept alive by touches; an async handler;
the return value as the ack's result. Worker processes are run as
`python -m sluice worker MODULE:worker`. Every wait is bounded.

Run by ctest (python_worker): test_worker.py SLUICED SLUICE_CLI.
"""

import collections
import os
import signal
import subprocess
import sys
import threading
import time

from harness import (PACKAGE, SCALE, Server, ServerTest, main, sluice,
                     wait_for)

# The worker module the processes run: each handler start and end is a
# line of OUT, written with O_APPEND (whole lines, whatever the threads).
MODULE = """
import os, time, sluice
worker = sluice.Worker(wait_ms=200, grace=float(os.environ["GRACE"]))
fd = os.open(os.environ["OUT"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
SLEEP = float(os.environ["SLEEP"])

@worker.task("jobs")
def handle(task):
    os.write(fd, b"start %d\\n" % task.id)
    time.sleep(SLEEP)
    os.write(fd, b"end %d\\n" % task.id)
    return "done by %d" % os.getpid()
"""


class WorkerProcesses(ServerTest):
    ARGS = ("--keep-done", "1h")

    def spawn(self, name, concurrency, sleep, grace=30, extra=(),
              stderr=None):
        d = self.srv.dir
        with open(os.path.join(d, "jobs_worker.py"), "w") as f:
            f.write(MODULE)
        out = os.path.join(d, name + ".out")
        env = dict(os.environ, OUT=out, SLEEP=str(sleep), GRACE=str(grace),
                   PYTHONPATH=PACKAGE)
        p = subprocess.Popen(
            [sys.executable, "-m", "sluice", "worker", "jobs_worker:worker",
             "--url", self.srv.url, "--concurrency", str(concurrency)]
            + list(extra), cwd=d, env=env, stderr=stderr)

        def reap():
            if p.poll() is None:
                p.kill()
                p.wait(10)
        self.addCleanup(reap)
        return p, out

    @staticmethod
    def lines(path, word):
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [int(line.split()[1]) for line in f
                    if line.startswith(word + " ")]

    def test_four_processes_drain_their_tasks_exactly_once(self):
        # 10,000 keep the 32 threads of the 4 processes taking at once
        # from start to end (for seconds, plainly and under the
        # sanitizers); each task is counted, so more of them repeat the
        # same check.
        n = 10000
        for b in range(n // 1000):
            res = self.c.put_batch([dict(tube="jobs", payload=b"x")
                                    for _ in range(1000)])
            self.assertTrue(all(r.created for r in res))
        t0 = time.monotonic()
        procs = [self.spawn("w%d" % i, 8, 0) for i in range(4)]

        def drained():
            s = self.c.stats("jobs").tubes["jobs"]
            return s.ready + s.taken == 0
        self.assertTrue(wait_for(drained, 120 * SCALE, 0.1))
        took = time.monotonic() - t0
        print("drained %d tasks in %.1f s (%.0f/s)" % (n, took, n / took),
              file=sys.stderr)
        for p, _ in procs:
            p.send_signal(signal.SIGTERM)
        for p, _ in procs:
            self.assertEqual(p.wait(30), 0)
        seen = collections.Counter()
        per = []
        for _, out in procs:
            ends = self.lines(out, "end")
            per.append(len(ends))
            seen.update(ends)
        self.assertEqual(len(seen), n)
        self.assertEqual(max(seen.values()), 1, "a task ran twice")
        self.assertTrue(all(per), "a process took nothing: %s" % per)
        c = self.c.stats("jobs").tubes["jobs"].counters
        self.assertEqual((c["takes"], c["acks"], c["done"]), (n, n, n))
        self.assertIn("done by", self.c.peek(n).result)

    def test_kill_9_mid_task_gives_the_task_back(self):
        tid = self.c.put("jobs", "slow").id
        p, out = self.spawn("killed", 2, 60)
        self.assertTrue(wait_for(lambda: self.lines(out, "start"), 15))
        self.assertEqual(self.c.peek(tid).state, sluice.State.TAKEN)
        p.kill()
        p.wait(10)
        self.assertTrue(wait_for(
            lambda: self.c.peek(tid).state != sluice.State.TAKEN, 10))
        self.assertIn("worker disconnected", self.c.peek(tid).last_error)
        self.c.update(tid, delay_ms=0)  # skip the lost lease's backoff
        p2, out2 = self.spawn("second", 2, 0)
        self.assertTrue(wait_for(
            lambda: self.c.peek(tid).state == sluice.State.DONE, 15))
        self.assertEqual(self.c.peek(tid).attempts, 2)
        self.assertEqual(self.lines(out2, "end"), [tid])

    def test_command_line_durations_say_their_unit(self):
        # a bare number other than 0 is refused with both readings, as
        # sluice and sluiced refuse it, and nothing is taken
        tid = self.c.put("jobs", "x").id
        for extra, hint in (
                (("--wait", "5"), "argument --wait: 5: a duration needs a "
                 "unit: say 5s or 5000ms (5ms if milliseconds were meant)"),
                (("--grace", "1.5"), "argument --grace: 1.5: a duration "
                 "needs a unit: say 1.5s or 1500ms"),
                (("--wait", "5x"), "argument --wait: '5x' is not a "
                 "duration: a number with a unit, ms, s, m, h or d"),
                (("--max-tasks", "0"), "argument --max-tasks: a whole "
                 "number of at least 1, not '0'")):
            p, _ = self.spawn("bare", 1, 0, extra=extra,
                              stderr=subprocess.PIPE)
            _, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 2, extra)
            self.assertIn(hint, err.decode())
        self.assertEqual(self.c.peek(tid).state, sluice.State.READY)
        # with units: --max-tasks 2 ends the run after two, --wait 300ms
        # once the tube is empty, each by itself with exit 0
        ids = [tid] + [self.c.put("jobs", "x").id for _ in range(2)]
        p, out = self.spawn("units", 1, 0, extra=(
            "--wait", "1m", "--grace", "0", "--max-tasks", "2"))
        self.assertEqual(p.wait(60 * SCALE), 0)
        self.assertEqual(len(self.lines(out, "end")), 2)
        p, out = self.spawn("idle", 1, 0, grace="0", extra=(
            "--wait", "300ms", "--grace", "2.5s"))
        self.assertEqual(p.wait(60 * SCALE), 0)
        self.assertEqual(len(self.lines(out, "end")), 1)
        self.assertEqual([self.c.peek(i).state for i in ids],
                         [sluice.State.DONE] * 3)
        self.assertEqual(sluice.parse_duration("1.5m"), 90000)
        self.assertEqual(sluice.parse_duration("0"), 0)
        with self.assertRaises(ValueError):
            sluice.parse_duration("30")

    def test_sigterm_lets_running_tasks_finish_and_takes_nothing_more(self):
        ids = [self.c.put("jobs", "t%d" % i).id for i in range(10)]
        p, out = self.spawn("term", 3, 1.0)
        self.assertTrue(wait_for(lambda: len(self.lines(out, "start")) == 3,
                                 15))
        p.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        self.assertEqual(p.wait(20), 0)
        self.assertLess(time.monotonic() - t0, 10)
        started = self.lines(out, "start")
        self.assertEqual(len(started), 3, "taken after the signal")
        self.assertEqual(sorted(self.lines(out, "end")), sorted(started))
        for tid in ids:
            t = self.c.peek(tid)
            if tid in started:
                self.assertEqual((t.state, t.attempts), (
                    sluice.State.DONE, 1))
            else:
                self.assertEqual((t.state, t.attempts), (
                    sluice.State.READY, 0))

    def test_sigterm_past_the_grace_releases_the_leases(self):
        tid = self.c.put("jobs", "long").id
        p, out = self.spawn("grace", 1, 30, grace=0.5)
        self.assertTrue(wait_for(lambda: self.lines(out, "start"), 15))
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(10), 0)
        t = self.c.peek(tid)
        self.assertEqual((t.state, t.attempts), (sluice.State.READY, 1))


class WorkerInProcess(ServerTest):
    """Workers run in this process, stopped at the end of each case: one
    server for every case (a start and a stop each spared), each case
    with tubes of its own."""
    ARGS = ("--keep-done", "1h")

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(cls.ARGS)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()

    def setUp(self):
        self.c = self.client()

    def run_worker(self, worker, until, seconds=20):
        """Runs the worker in a thread until until() holds."""
        th = threading.Thread(target=worker.run, kwargs={"signals": False})
        th.start()
        try:
            self.assertTrue(wait_for(until, seconds, 0.02))
        finally:
            worker.stop()
            th.join(seconds)
        self.assertFalse(th.is_alive())

    def test_a_raise_is_the_last_error_and_fatal_buries(self):
        w = sluice.Worker(self.srv.url, concurrency=2, wait_ms=100)

        @w.task("raise")
        def fails(task):
            raise ValueError("cannot parse %s" % task.text())

        @w.task("fatal")
        def fatal(task):
            raise sluice.Fatal("no such user")

        a = self.c.put("raise", "row 7", max_attempts=1).id
        b = self.c.put("fatal", "u1").id
        self.run_worker(w, lambda: self.c.peek(a).state == 4 and
                        self.c.peek(b).state == 4)
        self.assertEqual(self.c.peek(a).last_error, "cannot parse row 7")
        t = self.c.peek(b)
        self.assertEqual((t.last_error, t.attempts), ("no such user", 1))
        self.assertEqual(self.srv.cli("peek", str(a))["last_error"],
                         "cannot parse row 7")

    def test_max_tasks_and_idle_end_the_run(self):
        ids = [self.c.put("n", "x").id for _ in range(5)]
        w = sluice.Worker(self.srv.url, concurrency=2, wait_ms=100,
                          max_tasks=3)
        w.task("n")(lambda task: None)
        t0 = time.monotonic()
        self.assertEqual(w.run(signals=False), 0)  # returns by itself
        states = sorted((self.c.peek(i).state, self.c.peek(i).attempts)
                        for i in ids)
        self.assertEqual(states, [(1, 0), (1, 0), (5, 1), (5, 1), (5, 1)])
        w = sluice.Worker(self.srv.url, concurrency=2, wait_ms=100, idle=0.5)
        w.task("n")(lambda task: None)
        self.assertEqual(w.run(signals=False), 0)
        self.assertEqual(self.c.stats("n").tubes["n"].ready, 0)
        self.assertLess(time.monotonic() - t0, 20)

    def test_touches_keep_a_handler_longer_than_its_ttr(self):
        w = sluice.Worker(self.srv.url, concurrency=1, wait_ms=100)

        @w.task("slow")
        def slow(task):
            time.sleep(2.5)
            return {"slept": 2.5}

        tid = self.c.put("slow", "x", ttr_ms=1000).id
        self.run_worker(w, lambda: self.c.peek(tid).state == 5)
        t = self.c.peek(tid)
        self.assertEqual((t.attempts, t.result), (1, '{"slept": 2.5}'))
        self.assertGreaterEqual(t.duration_ms, 2400)
        c = self.c.stats("slow").tubes["slow"].counters
        self.assertEqual((c["ttr_expired"], c["takes"]), (0, 1))

    def test_a_long_result_is_whole_and_one_over_the_limit_buries(self):
        w = sluice.Worker(self.srv.url, concurrency=1, wait_ms=100)

        @w.task("long")
        def long(task):
            return "r" * int(task.payload)

        a = self.c.put("long", "5000").id
        b = self.c.put("long", "70000").id
        self.run_worker(w, lambda: self.c.peek(a).state == 5
                        and self.c.peek(b).state == 4)
        self.assertEqual(self.c.peek(a).result, "r" * 5000)
        self.assertEqual(self.c.peek(b).last_error,
                         "result of 70000 bytes is over the limit of 65535")

    def test_async_handlers(self):
        w = sluice.Worker(self.srv.url, concurrency=2, wait_ms=100)

        @w.task("aio")
        async def handle(task):
            import asyncio
            await asyncio.sleep(0.01)
            return task.payload

        ids = [self.c.put("aio", "p%d" % i).id for i in range(6)]
        self.run_worker(w, lambda: all(self.c.peek(i).state == 5
                                       for i in ids))
        self.assertEqual([self.c.peek(i).result for i in ids],
                         ["p%d" % i for i in range(6)])

    def test_async_stop_lets_running_handlers_finish(self):
        import asyncio
        w = sluice.Worker(self.srv.url, concurrency=2, wait_ms=100)
        started = []

        @w.task("aiostop")
        async def handle(task):
            started.append(task.id)
            await asyncio.sleep(0.5)
            if task.id == ids[1]:
                raise sluice.Fatal("second")

        ids = [self.c.put("aiostop", "p%d" % i).id for i in range(3)]
        self.run_worker(w, lambda: len(started) == 2)
        self.assertEqual(sorted(started), ids[:2])
        t = [self.c.peek(i) for i in ids]
        self.assertEqual([(x.state, x.attempts) for x in t], [
            (sluice.State.DONE, 1), (sluice.State.BURIED, 1),
            (sluice.State.READY, 0)])
        self.assertEqual(t[1].last_error, "second")

    def test_a_cancel_stops_the_handler(self):
        # A thread's handler sees task.cancelled once a touch says so; an
        # async one is cancelled; neither end acks or fails: the task goes,
        # and wait says cancelled.
        import asyncio
        w = sluice.Worker(self.srv.url, concurrency=1, wait_ms=100)
        seen = []

        @w.task("cancel")
        def long(task):
            deadline = time.monotonic() + 30
            while not task.cancelled and time.monotonic() < deadline:
                time.sleep(0.02)
            seen.append(("thread", task.cancelled))
            return "should not be the result"

        tid = self.c.put("cancel", "x", ttr_ms=600).id
        self.assertEqual(self.c.peek(tid).state, sluice.State.READY)
        th = threading.Thread(target=w.run, kwargs={"signals": False})
        th.start()
        try:
            self.assertTrue(wait_for(
                lambda: self.c.peek(tid).state == sluice.State.TAKEN, 10,
                0.02))
            self.c.cancel(tid)
            self.assertTrue(wait_for(lambda: seen, 10, 0.02))
            o = self.c.wait(tid, 10000)
        finally:
            w.stop()
            th.join(20)
        self.assertEqual(seen, [("thread", True)])
        self.assertEqual((o.final, o.state, o.result), (True, "cancelled",
                                                        None))
        self.assertEqual((w.processed, w.failed), (0, 0))

        a = sluice.Worker(self.srv.url, concurrency=1, wait_ms=100)

        @a.task("along")
        async def along(task):
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                seen.append(("async", task.cancelled))
                raise

        tid = self.c.put("along", "x", ttr_ms=600).id
        th = threading.Thread(target=a.run, kwargs={"signals": False})
        th.start()
        try:
            self.assertTrue(wait_for(
                lambda: self.c.peek(tid).state == sluice.State.TAKEN, 10,
                0.02))
            self.c.cancel(tid)
            o = self.c.wait(tid, 10000)
        finally:
            a.stop()
            th.join(20)
        self.assertEqual(seen[1:], [("async", True)])
        self.assertEqual((o.final, o.state), (True, "cancelled"))

    def test_sync_and_async_handlers_together(self):
        w = sluice.Worker(self.srv.url, concurrency=2, wait_ms=100)

        @w.task("sync")
        def plain(task):
            return "sync"

        @w.task("async")
        async def coro(task):
            return "async"

        a = self.c.put("sync", "x").id
        b = self.c.put("async", "y").id
        self.run_worker(w, lambda: self.c.peek(a).state == 5 and
                        self.c.peek(b).state == 5)
        self.assertEqual((self.c.peek(a).result, self.c.peek(b).result),
                         ("sync", "async"))


if __name__ == "__main__":
    main()
