"""The Python client's Router against two clusters of one node each and
one etcd (as tests/integration/test_clustermap.c runs them): the map set
and read through a node, puts and takes routed by tube and acked where
each task came from, a take over both clusters getting each task once, a
Router with a stale map corrected by the Moved error, and map_set's bad
input refused; a tube moved between the clusters through the Router
(resumed after a mover that stopped between its hold and its drop, and
going on over a kill -9 of the source's node), every task once with its
key, state and settings, its groups' settings, and the reservations of
the keys of tasks acked at the source (before the move, and during it)
counted and refusing a put of their key at the target; a key unique
across a move (a put of a key taken at the source answering the id its
copy gets at the target), a keyed put refused MovingIn while the
target's keys are pending sent again (Client, Router, put_batch), and
a put_batch whose sending again fails as a whole (the node killed)
answering each item, its unkeyed one put; a put
and a batch put right after a map change served by a new owner that had
not read it yet (its Moved sent again, not raised), and a put, a batch
put and a take through a node behind the map for seconds
(sluiced-fault's pause mapwatch: sent again with a backoff until it
caught up); put_batch split by cluster, a draining cluster's tasks taken
first, stats summed; wait, cancel, batches and schedules routed to the
cluster of their task, batch or tube; a routed Worker handling the
tasks of both clusters, each once; a take over both clusters waiting on
both at once (a task that comes to either taken at once, tasks that
come to both together each taken once, what a cancelled wait took
released at once, none left taken) and going on while one cluster is
killed (raising only once both are). Exits 77 when `etcd` is not
installed.

Run by ctest (python_router): test_router.py SLUICED SLUICE_CLI.
"""

import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

import harness
from harness import SCALE, free_port, main, sluice, wait_for
from test_failover import Etcd

BEHIND_PAUSE_MS = 3000  # over the 2 s a Router waited for such a node


def etcd_empty(etcd):
    """Deletes every key of etcd (the leaders, members and map of the
    case before, whose nodes are stopped): as a fresh etcd to the next
    case's nodes."""
    everything = base64.b64encode(b"\0").decode()
    req = urllib.request.Request(
        etcd.client + "/v3/kv/deleterange",
        data=json.dumps(dict(key=everything,
                             range_end=everything)).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        r.read()
    with urllib.request.urlopen(
            urllib.request.Request(
                etcd.client + "/v3/kv/range",
                data=json.dumps(dict(key=everything, range_end=everything,
                                     count_only=True)).encode(),
                headers={"Content-Type": "application/json"}),
            timeout=10) as r:
        left = int(json.loads(r.read()).get("count", 0))
    if left:
        raise RuntimeError("etcd kept %d keys" % left)


class Router(unittest.TestCase):
    # One etcd for every case (its start costs a second or two), emptied
    # before each: each case's nodes are its own and start on an etcd
    # that holds nothing, as a fresh one would.
    @classmethod
    def setUpClass(cls):
        cls.etcd_dir = tempfile.mkdtemp(prefix="sluice-py-router-etcd-")
        try:
            cls.etcd = Etcd(cls.etcd_dir)
        except BaseException:
            shutil.rmtree(cls.etcd_dir, True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.etcd.stop()
        shutil.rmtree(cls.etcd_dir, True)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sluice-py-router-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        etcd_empty(self.etcd)
        self.urls, self.argv, self.logs, self.procs = {}, {}, {}, {}
        for name in ("p1", "p2"):
            url = "tcp://127.0.0.1:%d" % free_port()
            self.logs[name] = open(os.path.join(self.dir, name + ".log"),
                                   "ab")
            self.addCleanup(self.logs[name].close)
            # a short lease in etcd (2 s; the default 3 s under the
            # sanitizers): a node killed and started again leads once
            # its old lease ends
            self.argv[name] = [
                harness.SLUICED, "--data", os.path.join(self.dir, name),
                "--listen", url, "--repl-listen",
                "tcp://127.0.0.1:%d" % free_port(), "--etcd",
                self.etcd.client, "--cluster", name, "--node", name,
                "--leader-ttl", "2s" if SCALE == 1 else "3s",
                "--segment-size", harness.SEGMENT]
            self.start(name)
            self.urls[name] = url
        self.c = {n: sluice.Client(u, timeout=10) for n, u in
                  self.urls.items()}
        for c in self.c.values():
            self.addCleanup(c.close)
            self.assertTrue(wait_for(lambda: self.leads(c), 30 * SCALE, 0.05))

    def start(self, name, env=None):
        p = subprocess.Popen(self.argv[name], stdout=self.logs[name],
                             stderr=subprocess.STDOUT, env=env)
        self.addCleanup(self.stop_node, p)
        self.procs[name] = p
        return p

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
        try:
            t = self.c[name].stats(tube).tubes.get(tube)
        except sluice.NotFound:  # a tube the node never had
            return 0
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
        # a take and a split batch, each corrected the same way
        taker = sluice.Router(self.urls["p1"], refresh_s=None, timeout=10)
        self.addCleanup(taker.close)
        taker.cluster_map()
        self.knows(self.c["p1"].map_set("k.", "p2"))
        self.c["p2"].put("k.t", b"here")
        [t] = taker.take("k.t", wait_ms=1000)
        self.assertEqual((t.cluster, t.payload), ("p2", b"here"))
        taker.ack(t)
        self.knows(self.c["p1"].map_set("mb.", "p2"))
        res = taker.put_batch([dict(tube="mb.x", payload=b"a"),
                               dict(tube="one.b", payload=b"b")])
        self.assertEqual([(x.cluster, x.error) for x in res],
                         [("p2", None), ("p1", None)])
        self.assertEqual((self.ready("p2", "mb.x"), self.ready("p1", "mb.x"),
                          self.ready("p1", "one.b")), (1, 0, 1))

        self.put_right_after_a_map_change()

        # bad input: specific errors
        with self.assertRaises(sluice.BadTube):
            self.c["p1"].map_set("bad tube", "p2")
        with self.assertRaises(sluice.Invalid):
            self.c["p1"].map_set("x.", "bad name")
        with self.assertRaises(sluice.NotFound):
            self.c["p1"].map_delete("nothere")
        # on the same nodes (sparing a start of etcd and two nodes)
        self.take_waits_on_both_clusters()

    def put_right_after_a_map_change(self):
        """A put and a batch put through a Router that read the map's
        change (from the node that made it, which knows it at once)
        before the new owner's node did (its poll: every 200 ms): the
        owner's Moved names an older revision than the Router's, and the
        request is sent to it again once it knows, not raised (nor sent
        at once to be refused again). Four rounds, each way twice."""
        r = {n: sluice.Router(self.urls[n], timeout=10) for n in self.urls}
        behind = []
        for x in r.values():
            self.addCleanup(x.close)
            again = x._again

            def counted(e, st, x=x, again=again):
                if 0 < int(e.leader.split(" ")[1]) < x._map.revision:
                    behind.append(e)
                return again(e, st)
            x._again = counted
        for i in range(4):
            to, by = ("p2", "p1") if i % 2 == 0 else ("p1", "p2")
            r[by].map_set("ra.", to)
            if i < 2:
                self.assertEqual(r[by].put("ra.x", b"%d" % i).cluster, to)
            else:
                [res] = r[by].put_batch([dict(tube="ra.x",
                                              payload=b"%d" % i)])
                self.assertEqual((res.cluster, res.error), (to, None))
        self.assertGreater(len(behind), 0)  # provoked, at least once
        self.assertEqual((self.ready("p1", "ra.x"), self.ready("p2", "ra.x")),
                         (2, 2))

    def put_later(self, name, tube, payload, delay):
        """A put into cluster name after delay seconds (on a thread
        joined before the nodes stop)."""
        th = threading.Timer(delay, self.c[name].put, (tube, payload))
        th.start()
        self.addCleanup(th.join, 10)

    def take_waits_on_both_clusters(self):
        """A take over tubes of p1 and p2 waits on both at once: a task
        put into p2's tube after it began comes at once, and one whose
        tube the map gives to p2 meanwhile (Moved, followed); when both
        get a task at the same moment, one is returned and the other, if
        a cancelled wait took it, is given back at once, its take undone
        (untake): every task taken once, at attempt 1, none left taken.
        With p2 killed, the take goes on with p1."""
        self.knows(self.c["p1"].map_set("", "p1"))
        self.knows(self.c["p1"].map_set("two.", "p2"))
        r = sluice.Router(self.urls["p1"], timeout=10)
        self.addCleanup(r.close)
        tubes = ["one.w", "two.w"]
        self.assertEqual(r.take(tubes, wait_ms=50), [])
        self.put_later("p2", "two.w", b"late", 0.3)
        t0 = time.monotonic()
        [t] = r.take(tubes, wait_ms=20000)
        took = time.monotonic() - t0
        self.assertEqual((t.cluster, t.payload), ("p2", b"late"))
        self.assertLess(took, 5 * SCALE)  # not the 20 s wait
        r.ack(t)

        # the map changed during the wait: Moved, followed
        st = sluice.Router(self.urls["p1"], refresh_s=None, timeout=10)
        self.addCleanup(st.close)
        st.cluster_map()

        def move_then_put():
            time.sleep(0.3)
            self.knows(self.c["p1"].map_set("zq.", "p2"))
            self.c["p2"].put("zq.t", b"moved")
        th = threading.Thread(target=move_then_put)
        th.start()
        self.addCleanup(th.join, 20)
        [t] = st.take(["zq.t", "two.w"], wait_ms=20000)
        self.assertEqual((t.cluster, t.payload), ("p2", b"moved"))
        st.ack(t)
        st.close()  # its waits end: none takes the race's tasks below

        # the race: a task into each cluster at once, many times
        rounds, seen = 20, {}

        def takes():
            n = 0
            for name, tube in (("p1", "one.w"), ("p2", "two.w")):
                try:
                    n += self.c[name].stats(tube).tubes[tube].counters[
                        "takes"]
                except sluice.NotFound:  # a tube the node never had
                    pass
            return n
        takes0 = takes()
        put2 = {n: sluice.Client(u, timeout=10) for n, u in self.urls.items()}
        for c in put2.values():
            self.addCleanup(c.close)
        for i in range(rounds):
            go = threading.Barrier(2, timeout=10)

            def put(name, tube, payload):
                time.sleep(0.05)  # the take waits on both by then
                go.wait()
                put2[name].put(tube, payload)
            ths = [threading.Thread(target=put, args=(
                "p1", "one.w", b"a%d" % i)), threading.Thread(
                target=put, args=("p2", "two.w", b"b%d" % i))]
            for th in ths:
                th.start()
            got = r.take(tubes, wait_ms=10000)
            self.assertEqual(len(got), 1)
            # the other comes back at once if a cancelled wait took it
            more = r.take(tubes, wait_ms=5000)
            self.assertEqual(len(more), 1)
            for th in ths:
                th.join(10)
            for t in got + more:
                seen[t.payload] = seen.get(t.payload, 0) + 1
                self.assertEqual(t.cluster, "p1" if t.tube == "one.w"
                                 else "p2")
                # a cancelled wait's take is undone: never counted
                self.assertEqual(t.attempts, 1)
                r.ack(t)
        self.assertEqual(r.take(tubes, wait_ms=100), [])
        r.close()  # its waits ended: what they took is released
        self.assertEqual(len(seen), 2 * rounds)
        self.assertEqual(set(seen.values()), {1})
        for name, tube in (("p1", "one.w"), ("p2", "two.w")):
            c = self.c[name].stats(tube).tubes[tube]
            self.assertEqual((c.ready, c.delayed, c.taken, c.buried),
                             (0, 0, 0, 0))
        # every take beyond the two of each round was a cancelled wait's
        bounced = takes() - takes0 - 2 * rounds
        print("race: %d rounds, %d tasks taken by a cancelled wait and "
              "given back uncounted" % (rounds, bounced))
        self.assertGreater(bounced, 0)  # the race happened, at least once

        # p2 killed: a take over both still gets p1's tasks, promptly;
        # it returns [] when p1 answered nothing, and raises only once
        # p1 is gone too
        r = sluice.Router(self.urls["p1"], refresh_s=None,
                          timeout=2 * SCALE)
        self.addCleanup(r.close)
        tubes = ["two.d", "one.d"]  # the dead cluster's first
        self.assertEqual(r.take(tubes, wait_ms=50), [])
        self.procs["p2"].kill()
        self.procs["p2"].wait(10)
        self.put_later("p1", "one.d", b"x", 0.3)
        t0 = time.monotonic()
        [t] = r.take(tubes, wait_ms=20000)
        self.assertLess(time.monotonic() - t0, 5 * SCALE)
        self.assertEqual((t.cluster, t.payload), ("p1", b"x"))
        r.ack(t)
        self.assertIn("p2", r.down())
        # a ready task while p2 stays down: the take is not held up
        self.c["p1"].put("one.d", b"y")
        t0 = time.monotonic()
        [t] = r.take(tubes, wait_ms=20000)
        self.assertLess(time.monotonic() - t0, 1.5 * SCALE)  # < timeout
        self.assertEqual(t.payload, b"y")
        r.ack(t)
        self.assertEqual(r.take(tubes, wait_ms=200), [])
        # every cluster down: the error
        self.procs["p1"].kill()
        self.procs["p1"].wait(10)
        t0 = time.monotonic()
        with self.assertRaises(sluice.SluiceError) as cm:
            r.take(tubes, wait_ms=500)
        self.assertIn("every cluster failed", cm.exception.message)
        print("all down: raised after %.2f s" % (time.monotonic() - t0))
        self.assertLess(time.monotonic() - t0, 15 * SCALE)

    def test_move_resumed_carries_every_task_once(self):
        """A tube moved from p1 to p2 by a Router, resumed after a mover
        that stopped between its hold and its drop with part of the
        batch copied: every task once at p2 with its key, priority,
        group, state and the tube's settings and limits; the task taken
        at the source during the move is acked there; the source is
        empty and the map names p2 alone."""
        self.knows(self.c["p1"].map_set("", "p1"))
        c1, c2 = self.c["p1"], self.c["p2"]
        tube, n = "mvp", 300
        c1.tube_set(tube, ttr_ms=45000, max_attempts=7)
        c1.tube_limit(tube, rate="500/s", burst=50)
        c1.group_set(tube, "g3", concurrency=50)  # a group's own settings
        c1.group_pause(tube, "idle")              # and one's pause
        items = [dict(tube=tube, payload=b"m-%d" % i, key="k%d" % i,
                      delay_ms=600000 if i < 20 else 0, priority=i % 5,
                      group=None if i % 3 else "g3") for i in range(n)]
        for i in range(0, n, 100):
            for res in c1.put_batch(items[i:i + 100]):
                self.assertTrue(res.created, res.error)
        [b] = c1.take(tube, wait_ms=1000)
        c1.bury(b.id, b.lease, error="kept")
        holder = sluice.Client(self.urls["p1"], timeout=10)
        self.addCleanup(holder.close)
        [taken] = holder.take(tube, wait_ms=1000)

        # a mover that stopped: the map marked, a batch held at the
        # source, ten of it copied to the target, nothing dropped
        r = sluice.Router(self.urls["p2"], timeout=10)
        self.addCleanup(r.close)
        self.knows(r.map_set(tube, "p2", ["p1"]))
        held = c1.move_hold(tube, 50)
        self.assertEqual(len(held), 50)
        self.assertEqual(c1.move_hold(tube, 50), held)  # the same batch
        first = c2.move_in(tube, "p1", held[:10])
        self.assertTrue(all(st == 0 and i > 0 for st, i in first))
        self.assertEqual(self.ready("p2", tube), 10)

        reports, acked = [], []

        def report(x):
            reports.append(x)
            if x.waits and not acked:  # the mover waits for the taken task
                acked.append(holder.ack(taken.id, taken.lease))
        p = r.move(tube, "p2", batch=64, report=report)
        self.assertEqual(len(acked), 1)  # honoured at the source
        self.assertTrue(p.done)
        self.assertEqual((p.source, p.target), ("p1", "p2"))
        self.assertEqual(p.copied, n - 1)  # the held 50 again, then the rest
        self.assertGreater(p.waits, 0)     # for the taken task to end
        self.assertEqual(p.groups, 2)      # g3's settings, idle's pause
        self.assertEqual(p.keys, 1)        # the task acked at the source
        self.assertGreaterEqual(len(reports), p.batches)
        m = r.cluster_map()
        [e] = [e for e in m.entries if e.prefix == tube]
        self.assertEqual((e.cluster, list(e.draining)), ("p2", []))
        src = c1.stats(tube).tubes.get(tube)
        self.assertFalse(src and (src.ready or src.delayed or src.taken or
                                  src.buried))
        dst = c2.stats(tube).tubes[tube]
        self.assertEqual((dst.ready, dst.delayed, dst.taken, dst.buried),
                         (n - 22, 20, 0, 1))
        conf = c2.tube_show(tube)
        self.assertEqual((conf.ttr_ms, conf.max_attempts), (45000, 7))
        lim = c2.tube_limits(tube)
        self.assertEqual((lim.rate, lim.per_ms, lim.burst), (500, 1000, 50))
        self.assertEqual(c2.group_limits(tube, "g3").own[4], 50)
        self.assertTrue(c2.group_limits(tube, "idle").paused)
        # the key of the task acked at the source during the move is
        # reserved at the target: a put of it makes nothing
        done = r.put(tube, b"again", key=taken.key)
        self.assertEqual((done.cluster, done.created), ("p2", False))
        again = r.put(tube, b"dup", key="k150")
        self.assertEqual((again.cluster, again.created), ("p2", False))
        seen = set()  # the rate limit (500/s) came along: takes paced
        end = time.monotonic() + 30 * SCALE
        while len(seen) < n - 22 and time.monotonic() < end:
            got = r.take(tube, wait_ms=300, max=50)
            for t in got:
                self.assertEqual(t.cluster, "p2")
                i = int(t.payload[2:])
                self.assertNotIn(i, seen)
                seen.add(i)
                self.assertEqual((t.key, t.priority, t.group, t.ttr_ms),
                                 ("k%d" % i, i % 5,
                                  None if i % 3 else "g3", 45000))
            for res in r.ack_batch(got) if got else ():
                self.assertIsNone(res.error)
        self.assertEqual(len(seen), n - 22)
        self.assertNotIn(int(b.payload[2:]), seen)
        self.assertNotIn(int(taken.payload[2:]), seen)
        [bt] = c2.list(tube, state=sluice.State.BURIED).tasks
        self.assertEqual(bt.last_error, "kept")
        self.assertTrue(r.move(tube, "p2").done)  # nothing left to move
        with self.assertRaises(sluice.BadTube):
            r.move("bad tube", "p2")
        with self.assertRaises(sluice.Invalid):
            r.move(tube, "bad name")

    def test_keyed_put_refused_moving_in_goes_again(self):
        """A keyed put at a target whose keys are pending (move_in's pend,
        by hand) is refused MovingIn and sent again until the keys are
        there (ready): by a Client, a Router, and a put_batch whose
        unkeyed item is put at once and not again; a client whose
        timeout ends first raises MovingIn."""
        self.knows(self.c["p1"].map_set("", "p1"))
        self.knows(self.c["p1"].map_set("mw", "p2"))
        c2, tube = self.c["p2"], "mw"
        self.assertEqual(c2.move_pend(tube, "p1"), 1)  # marked now
        short = sluice.Client(self.urls["p2"], timeout=0.3)
        self.addCleanup(short.close)
        t0 = time.monotonic()
        with self.assertRaises(sluice.MovingIn) as cm:
            short.put(tube, b"no", key="k0")
        self.assertEqual((cm.exception.code, cm.exception.name),
                         (35, "moving_in"))
        self.assertGreater(time.monotonic() - t0, 0.1)  # sent again
        ca = sluice.Client(self.urls["p2"], timeout=10)
        cb = sluice.Client(self.urls["p2"], timeout=10)
        r = sluice.Router(self.urls["p1"], timeout=10)
        for x in (ca, cb, r):
            self.addCleanup(x.close)
        out = {}
        calls = {
            "put": lambda: ca.put(tube, b"a", key="k1"),
            "routed": lambda: r.put(tube, b"b", key="k2"),
            "batch": lambda: cb.put_batch([
                dict(tube=tube, payload=b"c", key="k3"),
                dict(tube=tube, payload=b"d")]),
        }
        ths = [threading.Thread(target=lambda k=k, f=f: out.__setitem__(
            k, f())) for k, f in calls.items()]
        for th in ths:
            th.start()
        # while the keys are pending only the unkeyed item is in
        self.assertTrue(wait_for(lambda: self.ready("p2", tube) == 1,
                                 5 * SCALE))
        time.sleep(0.4)
        self.assertEqual(out, {})
        self.assertEqual(self.ready("p2", tube), 1)
        self.assertEqual(c2.move_ready(tube, "p1"), 1)
        for th in ths:
            th.join(10 * SCALE)
        self.assertTrue(out["put"].created)
        self.assertEqual((out["routed"].cluster, out["routed"].created),
                         ("p2", True))
        self.assertEqual([(x.error, x.created) for x in out["batch"]],
                         [(None, True), (None, True)])
        self.assertEqual(self.ready("p2", tube), 4)  # d once
        self.assertEqual(c2.peek_key(tube, "k3").id, out["batch"][0].id)

    def test_batch_sent_again_fails_alone(self):
        """A put_batch at a target whose keys are pending: its unkeyed
        item is put at once, its keyed one refused MovingIn and sent
        again, while the node is killed with SIGKILL (and started again
        only after the call): the sending again fails as a whole, and
        the call returns both results, the unkeyed item put (the node
        holds it once it leads again), the keyed one with that failure.
        Before, the whole call raised that failure, a task made."""
        self.knows(self.c["p1"].map_set("", "p1"))
        self.knows(self.c["p1"].map_set("mb", "p2"))
        c2, tube = self.c["p2"], "mb"
        self.assertEqual(c2.move_pend(tube, "p1"), 1)  # marked now
        cb = sluice.Client(self.urls["p2"], timeout=1.5 * SCALE)
        self.addCleanup(cb.close)
        out = {}

        def run():
            try:
                out["batch"] = cb.put_batch([
                    dict(tube=tube, payload=b"c", key="k3"),
                    dict(tube=tube, payload=b"d")])
            except sluice.SluiceError as e:
                out["error"] = e
        th = threading.Thread(target=run)
        th.start()
        self.assertTrue(wait_for(lambda: self.ready("p2", tube) == 1,
                                 5 * SCALE))
        time.sleep(0.1)  # its reply reaches the client
        victim = self.procs["p2"]
        victim.kill()
        victim.wait(10)
        th.join(20 * SCALE)
        self.assertFalse(th.is_alive())
        self.assertNotIn("error", out)
        keyed, plain = out["batch"]
        self.assertIsNone(plain.error)
        self.assertTrue(plain.created)
        self.assertIsInstance(keyed.error, (sluice.ConnectionLost,
                                            sluice.TimedOut))
        self.assertEqual(keyed.id, 0)
        self.start("p2")
        self.assertTrue(wait_for(lambda: self.leads(c2), 30 * SCALE, 0.05))
        self.assertEqual(c2.peek(plain.id).payload, b"d")
        self.assertEqual(self.ready("p2", tube), 1)
        self.knows(0)  # etcd names p2's leader again

    def test_move_keeps_a_key_unique(self):
        """A tube moved by a Router while a keyed task of it is taken at
        the source: a put of that key (and of a ready task's key) at the
        target during the move answers created False with the id the copy
        gets there; a keyed put sent while the keys are pending goes
        through once they are held; one task per key at the end."""
        self.knows(self.c["p1"].map_set("", "p1"))
        c1, c2, tube = self.c["p1"], self.c["p2"], "mvw"
        c1.put(tube, b"taken", key="kt", priority=0)
        c1.put(tube, b"ready", key="kr")
        holder = sluice.Client(self.urls["p1"], timeout=10)
        self.addCleanup(holder.close)
        [taken] = holder.take(tube, wait_ms=1000)
        self.assertEqual(taken.key, "kt")
        r = sluice.Router(self.urls["p2"], timeout=10)
        self.addCleanup(r.close)
        seen, late = {}, {}

        def late_put():  # a Router that reads the changed map
            lr = sluice.Router(self.urls["p2"], timeout=10 * SCALE)
            try:
                res = lr.put(tube, b"late", key="kn")
                late["res"], late["held"] = res, "held" in seen
            finally:
                lr.close()

        def report(p):
            if p.stage == sluice.MOVE_KEYS_PENDING and "late" not in seen:
                self.knows(p.revision)
                seen["late"] = threading.Thread(target=late_put)
                seen["late"].start()
                time.sleep(0.2)
            if p.stage == sluice.MOVE_KEYS_HELD:
                seen["held"] = True
            if p.waits and "kt" not in seen:
                # the mover waits for the taken task: its key, and the
                # key of a ready task not copied yet, put at the target
                seen["kt"] = c2.put(tube, b"dup", key="kt")
                seen["kr"] = c2.put(tube, b"dup", key="kr")
                holder.release(taken.id, taken.lease)
        p = r.move(tube, "p2", batch=64, report=report, wait=20 * SCALE)
        self.assertTrue(p.done)
        seen["late"].join(10 * SCALE)
        self.assertTrue(late["held"])  # refused until the keys were held
        self.assertEqual((late["res"].cluster, late["res"].created),
                         ("p2", True))
        for k in ("kt", "kr"):
            self.assertFalse(seen[k].created)
            self.assertEqual(c2.peek_key(tube, k).id, seen[k].id)
            again = r.put(tube, b"again", key=k)
            self.assertEqual((again.created, again.id), (False, seen[k].id))
        src = c1.stats(tube).tubes.get(tube)
        self.assertFalse(src and (src.ready or src.delayed or src.taken or
                                  src.buried))
        self.assertEqual(self.ready("p2", tube), 3)
        got = r.take(tube, wait_ms=300, max=10)
        self.assertEqual(sorted((t.key, t.payload) for t in got),
                         [("kn", b"late"), ("kr", b"ready"),
                          ("kt", b"taken")])

    def test_move_goes_on_over_a_killed_source(self):
        """A move through the Router whose source node is killed with
        SIGKILL after the first round and started again: the mover asks
        again until it leads, and every task is at p2 once."""
        self.knows(self.c["p1"].map_set("", "p1"))
        tube, n = "mvk", 400
        for k in ("a0", "a1"):  # two keyed tasks completed before the move
            self.c["p1"].put(tube, b"done", key=k)
            [t] = self.c["p1"].take(tube, wait_ms=1000)
            self.c["p1"].ack(t.id, t.lease)
        for i in range(0, n, 100):
            for res in self.c["p1"].put_batch(
                    [dict(tube=tube, payload=b"%d" % j, key="k%d" % j)
                     for j in range(i, i + 100)]):
                self.assertTrue(res.created, res.error)
        r = sluice.Router(self.urls["p2"], timeout=10)
        self.addCleanup(r.close)
        killed = []

        def report(p):
            if killed or p.batches != 1:
                return
            victim = self.procs["p1"]
            victim.kill()
            victim.wait(10)
            killed.append(p.copied)
            self.start("p1")
        p = r.move(tube, "p2", batch=50, report=report, timeout=60 * SCALE)
        self.assertEqual(killed, [50])
        self.assertTrue(p.done)
        self.assertEqual(p.copied, n)
        self.assertEqual(p.keys, 2)  # their reservations, at the target
        for k in ("a0", "a1"):
            again = r.put(tube, b"again", key=k)
            self.assertEqual((again.cluster, again.created), ("p2", False))
        self.assertEqual(self.ready("p2", tube), n)
        src = self.c["p1"].stats(tube).tubes.get(tube)
        self.assertFalse(src and (src.ready or src.delayed or src.taken or
                                  src.buried))
        seen = set()
        for _ in range(20):
            got = r.take(tube, wait_ms=300, max=100)
            if not got:
                break
            for t in got:
                self.assertEqual((t.cluster, t.key), ("p2", "k%s" %
                                                      t.payload.decode()))
                self.assertNotIn(t.payload, seen)
                seen.add(t.payload)
            r.ack_batch(got)
        self.assertEqual(len(seen), n)

    def test_routes_what_names_no_tube(self):
        """Batches split by cluster, a draining cluster's tasks taken
        first, stats summed; wait, cancel, batches and schedules through
        a Router given p1's node reach p2 for p2's tube."""
        self.knows(self.c["p1"].map_set("", "p1"))
        self.knows(self.c["p1"].map_set("two.", "p2"))
        r = sluice.Router(self.urls["p1"], timeout=10)
        self.addCleanup(r.close)
        res = r.put_batch([dict(tube="two.b" if i % 2 else "one.b",
                                payload=b"%d" % i) for i in range(10)])
        self.assertEqual([x.cluster for x in res], ["p1", "p2"] * 5)
        self.assertTrue(all(x.created and x.error is None for x in res))
        self.assertEqual((self.ready("p1", "one.b"),
                          self.ready("p2", "two.b")), (5, 5))
        st = r.stats()
        self.assertEqual(st.ready, 10)
        self.assertEqual(st.clusters["p2"].totals.ready, 5)
        self.assertIsNone(r.stats("two.b").clusters["p1"])
        self.assertEqual(r.clusters()["p2"].cluster, "p2")
        with self.assertRaises(sluice.Invalid):
            r.put_batch([])

        # a draining cluster's old task first, the new one at the owner
        self.c["p1"].put("dr.t", b"old")
        self.knows(r.map_set("dr.", "p2", ["p1"]))
        self.assertEqual(r.put("dr.t", b"new").cluster, "p2")
        [a] = r.take("dr.t", wait_ms=1000)
        [b] = r.take("dr.t", wait_ms=1000)
        self.assertEqual([(a.cluster, a.payload), (b.cluster, b.payload)],
                         [("p1", b"old"), ("p2", b"new")])
        for t in (a, b):
            r.ack(t)

        # wait on a connection of its own, on the task's cluster
        tube = "two.f"
        put = r.put(tube, b"a")
        self.assertEqual(put.cluster, "p2")
        out = {}
        waiter = threading.Thread(target=lambda: out.update(
            o=r.wait(put, 8000 * SCALE)))
        waiter.start()
        time.sleep(0.2)
        self.assertEqual(r.put(tube, b"during").cluster, "p2")
        [t] = r.take(tube, wait_ms=1000)
        self.assertEqual(t.id, put.id)
        r.ack(t, result="ok")
        waiter.join(10 * SCALE)
        o = out["o"]
        self.assertEqual((o.final, o.state, o.result, o.tube, o.cluster),
                         (True, "done", "ok", tube, "p2"))
        self.assertEqual(r.wait({"id": put.id, "tube": tube}).result, "ok")
        with self.assertRaises(sluice.Invalid):
            r.wait(put.id)
        # cancel, one and split by cluster
        [left] = self.c["p2"].take(tube, wait_ms=1000)
        self.c["p2"].release(left.id, left.lease)
        r.cancel({"id": left.id, "cluster": "p2"})
        self.assertEqual(r.wait({"id": left.id, "cluster": "p2"}).state,
                         "cancelled")
        one, two = r.put("one.f", b"x"), r.put(tube, b"y")
        got = r.cancel_batch([one, two])
        self.assertEqual([(x.id, x.error, x.cluster) for x in got],
                         [(one.id, None, "p1"), (two.id, None, "p2")])
        self.assertEqual((self.ready("p1", "one.f"), self.ready("p2", tube)),
                         (0, 0))

        # a batch of p2's tube: made, shown, listed, closed there alone
        for i in range(3):
            r.put(tube, b"b%d" % i, batch="bf")
        bs = r.batch_set("bf", on_success="two.done")
        self.assertEqual((bs["cluster"], bs["total"], bs["ready"]),
                         ("p2", 3, 3))
        with self.assertRaises(sluice.NotFound):
            self.c["p1"].batch_show("bf")
        self.assertEqual([b["cluster"] for b in r.batches()["batches"]
                          if b["name"] == "bf"], ["p2"])
        for _ in range(3):
            [t] = r.take(tube, wait_ms=1000)
            self.assertEqual(r.batch_of(t), "bf")
            r.ack(t)
        done = r.batch_close("bf")
        self.assertEqual((done["closed"], done["ended"], done["acked"]),
                         (True, True, 3))
        self.assertTrue(wait_for(lambda: self.ready("p2", "two.done") == 1,
                                 5 * SCALE, 0.02))
        with self.assertRaises(sluice.NotFound):
            r.batch_show("nobatch")
        with self.assertRaises(sluice.NotFound):
            r.batch_close("nobatch")
        made = r.batch_set("bc", on_complete="two.done", tube="two.z")
        self.assertEqual(made["cluster"], "p2")
        r.put("two.z", b"c1", batch="bc")
        self.assertEqual(r.batch_cancel("bc")["cluster"], "p2")
        self.assertTrue(wait_for(lambda: self.ready("p2", "two.z") == 0,
                                 5 * SCALE, 0.02))
        # a batch over both clusters: its parts summed, closed on both
        r.put("one.s", b"s1", batch="span")
        r.put("two.s", b"s2", batch="span")
        span = r.batch_show("span")
        self.assertEqual((span["cluster"], span["total"],
                          sorted(span["parts"])), (None, 2, ["p1", "p2"]))
        closed = r.batch_close("span")
        self.assertTrue(closed["parts"]["p1"]["closed"] and
                        closed["parts"]["p2"]["closed"])

        # schedules: set where their tube is, found by name
        s = r.schedule_set("sf", "two.z", "0 3 * * *", b"tick")
        self.assertEqual(s.cluster, "p2")
        self.assertEqual(self.c["p2"].schedule_show("sf").tube, "two.z")
        with self.assertRaises(sluice.NotFound):
            self.c["p1"].schedule_show("sf")
        self.assertEqual(r.schedule_show("sf").cluster, "p2")
        self.assertTrue(r.schedule_pause("sf").paused)
        self.assertTrue(self.c["p2"].schedule_show("sf").paused)
        self.assertFalse(r.schedule_resume("sf").paused)
        self.assertEqual([x.cluster for x in r.schedule_list()
                          if x.name == "sf"], ["p2"])
        self.c["p1"].schedule_set("sx", "one.z", "0 4 * * *", b"old")
        self.assertEqual(r.schedule_set("sx", "two.z", "0 4 * * *",
                                        b"new").cluster, "p2")
        with self.assertRaises(sluice.NotFound):
            self.c["p1"].schedule_show("sx")
        self.assertEqual(self.c["p2"].schedule_show("sx").payload, b"new")
        for name in ("sf", "sx"):
            r.schedule_delete(name)
        with self.assertRaises(sluice.NotFound):
            r.schedule_show("sf")

        # a routed Worker: the tasks of both clusters, each once
        r.put_batch([dict(tube="two.k" if i % 2 else "one.k",
                          payload=b"k-%d" % i) for i in range(40)]
                    + [dict(tube="two.k", payload=b"fatal")])
        seen = {}
        lock = threading.Lock()
        w = sluice.Worker(self.urls["p2"], routed=True, concurrency=3,
                          wait_ms=300, idle=1.5, timeout=10)

        def handle(task):
            with lock:
                seen[task.payload] = seen.get(task.payload, 0) + 1
            if task.payload == b"fatal":
                raise sluice.Fatal("no")
            return "done"
        w.task("one.k")(handle)
        w.task("two.k")(handle)
        w.run(signals=False)
        self.assertEqual(len(seen), 41)
        self.assertEqual(set(seen.values()), {1})
        self.assertEqual((w.processed, w.failed), (40, 1))
        for name, tube, buried in (("p1", "one.k", 0), ("p2", "two.k", 1)):
            c = self.c[name].stats(tube).tubes[tube]
            self.assertEqual((c.ready, c.taken, c.buried), (0, 0, buried))

    def test_routed_while_a_node_is_behind(self):
        """A node behind the Router's map for seconds after each change
        (p2 as sluiced-fault, its map thread holding each change it polls
        BEHIND_PAUSE_MS before it serves by it: a loaded machine, a slow
        etcd): a put, a batch put with a part for each cluster and a take
        over tubes of both, right after their tubes ("v1.x", "v2.x",
        "v3.x", under prefix "v") moved to p2, are refused Moved by p2
        again and again and sent again with a backoff until p2 has caught
        up; none raises. A wait of 2 s at most, as before, was not
        enough. The prefix is given to p1 before p2 starts, which reads
        that map as it starts (its first read is not held); then to p2,
        in one change, and the three calls are sent at once, each
        through a Router of its own that read the changed map from p1
        (which made it): one wait for p2 to catch up serves the three."""
        fault = os.environ.get("SLUICED_FAULT") or os.path.join(
            os.path.dirname(harness.SLUICED), "sluiced-fault")
        if not os.access(fault, os.X_OK):
            self.skipTest("no sluiced-fault next to sluiced (the fault "
                          "build): SLUICED_FAULT names it")
        # the task the take gets, put while no entry of the map covers it
        self.c["p2"].put("v3.x", b"t")
        self.stop_node(self.procs["p2"])
        # the map p2 reads as it starts (its first read is not held)
        for prefix in ("u.", "v"):
            self.c["p1"].map_set(prefix, "p1")
        self.argv["p2"][0] = fault
        self.start("p2", dict(os.environ, SLUICE_FAULT_PAUSE="mapwatch:%d"
                              % BEHIND_PAUSE_MS))
        self.assertTrue(wait_for(lambda: self.leads(self.c["p2"]),
                                 30 * SCALE, 0.05))

        def refused():
            """p2 read that map."""
            try:
                self.c["p2"].put("v3.probe", b"x")
            except sluice.Moved:
                return True
            return False
        self.assertTrue(wait_for(refused, 30 * SCALE, 0.05))

        def router():
            """A Router of p1's that counts the Moved errors of a node
            behind its map (naming an older revision than it knows)."""
            r = sluice.Router(self.urls["p1"], timeout=20 * SCALE)
            self.addCleanup(r.close)
            r.behind = []
            again = r._again

            def counted(e, st):
                if 0 < int(e.leader.split(" ")[1]) < r._map.revision:
                    r.behind.append(e)
                return again(e, st)
            r._again = counted
            return r

        # the three at p2, p1 knowing it at once (it made the change)
        rev = self.c["p1"].map_set("v", "p2")
        # v3.x's cluster asked first: its refusals come first
        calls = {
            "put": lambda r: r.put("v1.x", b"p"),
            "batch": lambda r: r.put_batch([dict(tube="v2.x", payload=b"b"),
                                            dict(tube="u.x", payload=b"b")]),
            "take": lambda r: r.take(["v3.x", "u.x"]),
        }
        rs, out = {}, {}
        for k in calls:
            rs[k] = router()
            self.assertEqual(rs[k].cluster_map().revision, rev)

        def run(k):
            try:
                out[k] = calls[k](rs[k])
            except sluice.SluiceError as e:
                out[k] = e
        ths = [threading.Thread(target=run, args=(k,)) for k in calls]
        for th in ths:
            th.start()
        for th in ths:
            th.join(30 * SCALE)
        for k in calls:  # each returned (none raised)
            self.assertFalse(isinstance(out.get(k, k), (str, Exception)),
                             "%s: %s" % (k, out.get(k, "did not return")))
        self.assertEqual(out["put"].cluster, "p2")
        self.assertEqual([(x.cluster, x.error) for x in out["batch"]],
                         [("p2", None), ("p1", None)])
        [t] = out["take"]
        self.assertEqual((t.cluster, t.tube, t.payload), ("p2", "v3.x", b"t"))
        rs["take"].ack(t)
        for k in calls:
            self.assertGreater(len(rs[k].behind), 1, k)
        self.assertEqual((self.ready("p2", "v1.x"), self.ready("p2", "v2.x"),
                          self.ready("p1", "u.x")), (1, 1, 1))


if __name__ == "__main__":
    if shutil.which("etcd") is None:
        print("etcd is not installed: skipped")
        raise SystemExit(77)
    main()
