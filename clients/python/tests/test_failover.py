"""The Python client across a failover: three sluiced nodes on 127.0.0.1
elect their leader through a real etcd (--etcd, --sync-replicas 1, as
tests/integration/test_failover.c runs them); a producer putting keyed
tasks and a Worker, both given every node's URL, keep going while the
leader is killed with kill -9, and no put the producer saw acknowledged
is lost: each one is handled by the worker by the end. The time from the
kill to the first put acknowledged after it is printed, not asserted.
Exits 77 when `etcd` is not installed (make test installs etcd-server).

Run by ctest (python_failover): test_failover.py SLUICED SLUICE_CLI.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

import harness
from harness import SCALE, free_port, main, sluice, wait_for


class Etcd:
    """A single-member etcd on fresh ports."""

    def __init__(self, dir):
        self.client = "http://127.0.0.1:%d" % free_port()
        peer = "http://127.0.0.1:%d" % free_port()
        self.log = open(os.path.join(dir, "etcd.log"), "wb")
        self.proc = subprocess.Popen(
            ["etcd", "--name", "e0", "--data-dir", os.path.join(dir, "etcd"),
             "--listen-client-urls", self.client, "--advertise-client-urls",
             self.client, "--listen-peer-urls", peer,
             "--initial-advertise-peer-urls", peer, "--initial-cluster",
             "e0=" + peer, "--initial-cluster-token", "py-failover"],
            stdout=self.log, stderr=subprocess.STDOUT)
        if not wait_for(self.healthy, 30, 0.1):
            self.stop()
            raise RuntimeError("etcd did not become healthy")

    def healthy(self):
        try:
            with urllib.request.urlopen(self.client + "/health", timeout=1) \
                    as r:
                return b'"health":"true"' in r.read()
        except OSError:
            return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


class Failover(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sluice-py-failover-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.etcd = Etcd(self.dir)
        self.addCleanup(self.etcd.stop)
        self.nodes, self.urls, self.logs = [], [], []
        for i in range(3):
            url = "tcp://127.0.0.1:%d" % free_port()
            log = open(os.path.join(self.dir, "node%d.log" % i), "wb")
            self.logs.append(log)
            self.addCleanup(log.close)
            p = subprocess.Popen(
                [harness.SLUICED, "--data", os.path.join(self.dir, "n%d" % i),
                 "--listen", url, "--repl-listen",
                 "tcp://127.0.0.1:%d" % free_port(), "--etcd",
                 self.etcd.client, "--cluster", "py", "--node", "node%d" % i,
                 "--sync-replicas", "1", "--segment-size",
                 harness.SEGMENT], stdout=log,
                stderr=subprocess.STDOUT)
            self.nodes.append(p)
            self.urls.append(url)
            self.addCleanup(self.stop_node, p)

    @staticmethod
    def stop_node(p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    def leader(self, skip=None):
        """The index of the node that leads (waits for an election)."""
        found = []

        def one():
            found[:] = []
            for i, url in enumerate(self.urls):
                if i == skip:
                    continue
                try:
                    with sluice.Client(url, timeout=1) as c:
                        if c.stats().role == sluice.Role.LEADER:
                            found.append(i)
                except sluice.SluiceError:
                    pass
            return len(found) == 1
        self.assertTrue(wait_for(one, 30 * SCALE, 0.1), "no single leader")
        return found[0]

    def test_producer_and_worker_keep_going_across_a_kill_9(self):
        t0 = time.monotonic()
        first = self.leader()
        print("a leader after %.1f s" % (time.monotonic() - t0),
              file=sys.stderr)
        handled = set()
        lock = threading.Lock()
        worker = sluice.Worker(self.urls, concurrency=2, wait_ms=200,
                               timeout=30)

        @worker.task("orders")
        def handle(task):
            with lock:
                handled.add(task.text())

        wt = threading.Thread(target=worker.run, kwargs={"signals": False})
        wt.start()
        self.addCleanup(wt.join, 60)
        self.addCleanup(worker.stop)

        acked, killed_at, first_after = [], [], []
        stop = threading.Event()

        def produce():
            with sluice.Client(self.urls, timeout=30) as c:
                for n in range(100000):
                    if stop.is_set():
                        return
                    key = "order-%d" % n
                    for attempt in range(5):  # the same key: one task
                        try:
                            c.put("orders", key, key=key)
                            break
                        except sluice.SluiceError as e:
                            print("put %s: %s" % (key, e), file=sys.stderr)
                    else:
                        continue
                    acked.append(key)
                    if killed_at and not first_after:
                        first_after.append(time.monotonic())
        pt = threading.Thread(target=produce)
        pt.start()
        self.addCleanup(pt.join, 60)
        self.addCleanup(stop.set)

        self.assertTrue(wait_for(lambda: len(acked) >= 50, 30 * SCALE))
        self.nodes[first].kill()
        self.nodes[first].wait(10)
        killed_at.append(time.monotonic())
        before = len(acked)
        self.assertTrue(wait_for(lambda: len(acked) >= before + 50,
                                 60 * SCALE),
                        "the producer did not go on after the kill")
        print("first put acknowledged %.2f s after the kill -9 of the "
              "leader" % (first_after[0] - killed_at[0]), file=sys.stderr)
        stop.set()
        pt.join(60)
        print("%d puts acknowledged, %.1f s" % (len(acked),
                                                time.monotonic() - t0),
              file=sys.stderr)
        new = self.leader(skip=first)
        self.assertNotEqual(new, first)
        with sluice.Client(self.urls[new], timeout=10) as c:
            def drained():
                t = c.stats("orders").tubes["orders"]
                with lock:
                    return t.ready + t.delayed + t.taken == 0 and \
                        set(acked) <= handled
            ok = wait_for(drained, 60 * SCALE, 0.1)
            with lock:
                lost = sorted(set(acked) - handled)
            self.assertTrue(ok, "%d acknowledged puts not handled: %s"
                            % (len(lost), lost[:10]))
        worker.stop()
        wt.join(60)
        self.assertFalse(wt.is_alive())
        self.cluster_view_and_switchover(new, first)

    def cluster_view_and_switchover(self, lead, dead):
        """cluster and switchover, as the CLI (libsluice) sees them."""
        c = sluice.Client(self.urls[lead], timeout=30)
        self.addCleanup(c.close)
        def cli(*args):
            return harness.cli(self.urls[lead], *args)
        view, want = c.cluster(), cli("cluster")
        self.assertEqual((view.cluster, view.node, view.leader),
                         (want["cluster"], want["node"], want["leader"]))
        self.assertEqual(view.leader, "node%d" % lead)
        self.assertEqual(
            sorted((m.name, m.role.name.lower(), m.client_url)
                   for m in view.members),
            sorted((m["name"], m["role"], m["client_url"])
                   for m in want["members"]))
        to = [i for i in range(3) if i not in (lead, dead)][0]
        t0 = time.monotonic()
        res = c.switchover("node%d" % to, 20000)
        print("switchover to node%d in %.2f s" % (to, time.monotonic() - t0),
              file=sys.stderr)
        self.assertEqual(res.leader, self.urls[to])
        self.assertEqual(self.leader(skip=dead), to)
        self.assertEqual(cli("cluster")["leader"], "node%d" % to)
        # the client goes on with the new leader
        self.assertTrue(c.put("orders", "after", key="after").created)
        self.assertEqual(c.url.text, self.urls[to])


if __name__ == "__main__":
    if not shutil.which("etcd"):
        print("no etcd (make test installs etcd-server): skipped",
              file=sys.stderr)
        sys.exit(77)
    main()
