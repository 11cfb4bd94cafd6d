"""The Python client's Router against two clusters of one node each and
one etcd (as tests/integration/test_clustermap.c runs them): the map set
and read through a node, puts and takes routed by tube and acked where
each task came from, a take over both clusters getting each task once, a
Router with a stale map corrected by the Moved error, and map_set's bad
input refused. Exits 77 when `etcd` is not installed.

Run by ctest (python_router): test_router.py SLUICED SLUICE_CLI.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import unittest

import harness
from harness import SCALE, free_port, main, sluice, wait_for
from test_failover import Etcd


class Router(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sluice-py-router-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.etcd = Etcd(self.dir)
        self.addCleanup(self.etcd.stop)
        self.urls = {}
        for name in ("p1", "p2"):
            url = "tcp://127.0.0.1:%d" % free_port()
            log = open(os.path.join(self.dir, name + ".log"), "wb")
            self.addCleanup(log.close)
            p = subprocess.Popen(
                [harness.SLUICED, "--data", os.path.join(self.dir, name),
                 "--listen", url, "--repl-listen",
                 "tcp://127.0.0.1:%d" % free_port(), "--etcd",
                 self.etcd.client, "--cluster", name, "--node", name],
                stdout=log, stderr=subprocess.STDOUT)
            self.addCleanup(self.stop_node, p)
            self.urls[name] = url
        self.c = {n: sluice.Client(u, timeout=10) for n, u in
                  self.urls.items()}
        for c in self.c.values():
            self.addCleanup(c.close)
            self.assertTrue(wait_for(lambda: self.leads(c), 30 * SCALE, 0.05))

    @staticmethod
    def stop_node(p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    @staticmethod
    def leads(c):
        try:
            return c.stats().role == sluice.Role.LEADER
        except sluice.SluiceError:
            return False

    def knows(self, rev):
        def both():
            for c in self.c.values():
                m = c.cluster_map()
                if m.revision < rev or any(
                        not mc.leader for mc in m.clusters.values()):
                    return False
            return True
        self.assertTrue(wait_for(both, 10 * SCALE, 0.02))

    def ready(self, name, tube):
        t = self.c[name].stats(tube).tubes.get(tube)
        return t.ready if t else 0

    def test_routes_and_corrects(self):
        self.knows(self.c["p1"].map_set("", "p1"))
        self.knows(self.c["p1"].map_set("two.", "p2"))
        with self.assertRaises(sluice.Moved) as cm:
            self.c["p1"].put("two.x", b"no")
        self.assertIn("p2", cm.exception.message)
        r = sluice.Router(self.urls["p1"], timeout=10)
        self.addCleanup(r.close)
        for i in range(10):
            r.put("one.x", b"1")
            r.put("two.x", b"2")
        self.assertEqual(self.ready("p1", "one.x"), 10)
        self.assertEqual(self.ready("p2", "two.x"), 10)
        seen = set()
        for _ in range(40):
            tasks = r.take(["one.x", "two.x"], wait_ms=100, max=3)
            if not tasks:
                break
            for t in tasks:
                key = (t.cluster, t.id)
                self.assertNotIn(key, seen)
                seen.add(key)
                self.assertEqual(t.cluster, "p1" if t.tube == "one.x"
                                 else "p2")
                r.ack(t)
        self.assertEqual(len(seen), 20)
        self.assertEqual(self.ready("p1", "one.x"), 0)
        self.assertEqual(self.ready("p2", "two.x"), 0)

        # a stale Router (never refreshed by age) corrected by Moved
        stale = sluice.Router(self.urls["p2"], refresh_s=None, timeout=10)
        self.addCleanup(stale.close)
        stale.put("m.t", b"before")
        self.assertEqual(self.ready("p1", "m.t"), 1)
        self.knows(self.c["p2"].map_set("m.", "p2"))
        stale.put("m.t", b"after")
        self.assertEqual(self.ready("p1", "m.t"), 1)
        self.assertEqual(self.ready("p2", "m.t"), 1)

        # bad input: specific errors
        with self.assertRaises(sluice.BadTube):
            self.c["p1"].map_set("bad tube", "p2")
        with self.assertRaises(sluice.Invalid):
            self.c["p1"].map_set("x.", "bad name")
        with self.assertRaises(sluice.NotFound):
            self.c["p1"].map_delete("nothere")


if __name__ == "__main__":
    if shutil.which("etcd") is None:
        print("etcd is not installed: skipped")
        raise SystemExit(77)
    main()
