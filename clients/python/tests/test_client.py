"""The Python client (clients/python/sluice, written from docs/protocol.md
alone) against a real sluiced on 127.0.0.1: the SP-over-TCP framing, every
operation of the protocol compared with what the C CLI (libsluice) says
of the same tasks (`sluice ... --json`): the same ids, states, fields and
errors; session versus detached leases; the asyncio client. Every wait is
bounded.

Run by ctest (python_client): test_client.py SLUICED SLUICE_CLI.
"""

import asyncio
import socket
import struct
import json
import time

from harness import ServerTest, main, sluice, wait_for

# The task fields the CLI prints, by their name in its JSON.
_CLI_FIELDS = {"id": "id", "lease": "lease", "tube": "tube",
               "attempts": "attempts", "priority": "priority",
               "run_at": "run_at", "last_error": "last_error", "key": "key",
               "max_attempts": "max_attempts", "ttr": "ttr_ms",
               "period": "period_ms", "created_at": "created_at",
               "updated_at": "updated_at", "taken_at": "taken_at",
               "deadline": "deadline", "size": "size"}


def as_cli(t):
    """A Task as the CLI's JSON shows one."""
    d = {k: getattr(t, a) for k, a in _CLI_FIELDS.items()}
    d["state"] = str(t.state)
    return d


class ClientTest(ServerTest):
    ARGS = ("--keep-done", "1h")

    def same_task(self, t, cli):
        want = as_cli(t)
        self.assertEqual(want, {k: cli[k] for k in want}, cli)

    def cli_error(self, *args):
        code, err = self.srv.cli(*args, check=False)
        self.assertEqual(code, 1, err)
        return err

    def test_framing_is_as_documented(self):
        # The handshake and a stats request, byte for byte as section 1.1
        # shows them.
        with socket.create_connection(("127.0.0.1", self.srv.port), 5) as s:
            s.sendall(b"\x00\x53\x50\x00\x00\x30\x00\x00")
            self.assertEqual(s.recv(8, socket.MSG_WAITALL),
                             b"\x00\x53\x50\x00\x00\x31\x00\x00")
            s.sendall(bytes.fromhex("000000000000000a" "80000001"
                                    "530111000000"))
            (n,) = struct.unpack(">Q", s.recv(8, socket.MSG_WAITALL))
            body = s.recv(n, socket.MSG_WAITALL)
            self.assertEqual(body[:4], b"\x80\x00\x00\x01")
            self.assertEqual(body[4:10], b"\x53\x01\x11\x00\x00\x00")

    def test_put_take_ack_as_the_cli_sees_them(self):
        r = self.c.put("emails", b"send welcome", key="w1", priority=7)
        self.assertEqual((r.id, r.created), (1, True))
        self.assertEqual(self.srv.cli("put", "-t", "emails", "x", "--key",
                                      "w1"), {"id": 1, "created": False})
        self.assertFalse(self.c.put("emails", b"again", key="w1").created)
        [t] = self.c.take("emails", wait_ms=1000)
        self.assertEqual((t.id, t.payload, t.state), (1, b"send welcome",
                                                      sluice.State.TAKEN))
        self.assertEqual((t.attempts, t.priority, t.key), (1, 7, "w1"))
        self.assertGreater(t.deadline, t.taken_at)
        self.same_task(t, self.srv.cli("peek", "1"))
        self.same_task(self.c.peek(1), self.srv.cli("peek", "1"))
        self.same_task(self.c.peek_key("emails", "w1"),
                       self.srv.cli("peek", "--key", "w1", "-t", "emails"))
        a = self.c.ack(t.id, t.lease, result="sent")
        self.assertEqual(a.state, sluice.State.DONE)  # --keep-done
        done = self.c.peek(1)
        self.assertEqual((done.result, done.state), ("sent", 5))
        self.assertGreater(done.finished_at, 0)
        self.same_task(done, self.srv.cli("peek", "1"))
        self.same_task(self.c.peek_next("emails", sluice.State.DONE),
                       self.srv.cli("peek", "-t", "emails", "--done"))
        # nothing left: an empty list once the wait is over
        t0 = time.monotonic()
        self.assertEqual(self.c.take("emails", wait_ms=200), [])
        self.assertGreaterEqual(time.monotonic() - t0, 0.15)

    def test_lease_operations_and_their_errors(self):
        self.c.put("w", "task 0", max_attempts=3)
        [t] = self.c.take("w")
        # a stale lease: the same error, and text, as libsluice's
        with self.assertRaises(sluice.StaleLease) as e:
            self.c.ack(t.id, t.lease + 1)
        self.assertIn(e.exception.message,
                      self.cli_error("ack", str(t.id), "--lease",
                                     str(t.lease + 1)))
        self.assertEqual((e.exception.code, e.exception.name), (2,
                                                                "stale_lease"))
        a = self.c.release(t.id, t.lease, delay_ms=60000, priority=3)
        self.assertEqual(a.state, sluice.State.DELAYED)
        self.assertEqual(self.srv.cli("peek", str(t.id))["priority"], 3)
        with self.assertRaises(sluice.BadState) as e:
            self.c.ack(t.id, 1)
        self.assertIn("not taken", e.exception.message)
        self.assertEqual(self.c.kick("w", 5, delayed=True), 1)
        [t] = self.c.take("w")
        a = self.c.fail(t.id, t.lease, "disk full", delay_ms=0)
        self.assertEqual(a.state, sluice.State.READY)
        [t] = self.c.take("w")
        self.assertEqual((t.last_error, t.attempts), ("disk full", 3))
        before = t.deadline
        time.sleep(0.01)
        self.assertGreaterEqual(self.c.touch(t.id, t.lease).deadline, before)
        self.assertEqual(self.c.fail(t.id, t.lease, "again").state,
                         sluice.State.BURIED)  # max_attempts
        self.c.put("w", "task 1")
        self.c.put("w", "task 2")
        [t] = self.c.take("w")
        self.assertEqual(t.id, 2)
        [t] = self.c.take("w")
        self.assertEqual(self.c.bury(t.id, t.lease, error="poison").state,
                         sluice.State.BURIED)
        self.assertEqual(self.c.errors("w"), [
            sluice.ErrorGroup("again", 1, [1]),
            sluice.ErrorGroup("poison", 1, [3])])
        self.assertEqual(self.srv.cli("errors", "-t", "w")["errors"], [
            {"error": "again", "count": 1, "ids": [1]},
            {"error": "poison", "count": 1, "ids": [3]}])
        self.assertEqual(self.c.kick("w", 1), 1)
        self.assertEqual(self.c.kick_id(3).state, sluice.State.READY)
        [t] = self.c.take("w", detach=True)
        with self.assertRaises(sluice.BadState):
            self.c.kick_id(t.id)
        # fatal: buried at once, with the text
        self.assertEqual(self.c.fail(t.id, t.lease, "bad input",
                                     fatal=True).state, sluice.State.BURIED)
        self.assertEqual(self.srv.cli("peek", str(t.id))["last_error"],
                         "bad input")
        self.assertEqual(self.c.job(sluice.Verb.TAKE, t.id).state,
                         sluice.State.TAKEN)
        self.assertIsNone(self.c.job(sluice.Verb.DELETE, t.id))
        with self.assertRaises(sluice.NotFound):
            self.c.peek(t.id)

    def test_batches_update_and_deletes(self):
        res = self.c.put_batch([
            dict(tube="b", payload="one", key="k1"),
            dict(tube="bad tube", payload="x"),
            dict(tube="b", payload="two", priority=5)])
        self.assertEqual([(r.id, r.created) for r in res],
                         [(1, True), (0, False), (2, True)])
        self.assertIsInstance(res[1].error, sluice.BadTube)
        tasks = self.c.take("b", max=2)
        self.assertEqual([t.id for t in tasks], [2, 1])
        acked = self.c.ack_batch([(tasks[0].id, tasks[0].lease),
                                  (tasks[1].id, tasks[1].lease + 1)])
        self.assertIsNone(acked[0].error)
        self.assertIsInstance(acked[1].error, sluice.StaleLease)
        self.assertIn("stale", acked[1].error.message)
        self.c.release(tasks[1].id, tasks[1].lease)
        a = self.c.update(1, priority=9, payload=b"one'", ttr_ms=5000)
        self.assertEqual(a.state, sluice.State.READY)
        cli = self.srv.cli("peek", "1")
        self.assertEqual((cli["priority"], cli["payload"], cli["ttr"]),
                         (9, "one'", 5000))
        self.c.put("b", "three")
        page = self.c.list("b", limit=1)
        self.assertEqual([t.id for t in page.tasks], [1])
        self.assertEqual(page.next, 1)
        cli = self.srv.cli("list", "-t", "b", "--after", "1", "--limit", "1")
        page = self.c.list("b", limit=1, after=1, payloads=True)
        self.assertEqual(cli["next"], page.next)
        self.assertEqual([t["id"] for t in cli["tasks"]],
                         [t.id for t in page.tasks])
        self.assertEqual(page.tasks[0].payload, b"two")
        full = self.c.list("b", limit=10)
        self.assertIsNone(full.next)
        self.assertEqual([as_cli(t) for t in full.tasks], [
            {k: t[k] for k in as_cli(full.tasks[0])}
            for t in self.srv.cli("list", "-t", "b")["tasks"]])
        self.assertEqual(self.c.delete_key("b", "k1"), 1)
        self.assertEqual(self.c.delete_batch([3, 99])[1].error.name,
                         "not_found")
        self.assertEqual(self.c.delete_where("b", sluice.State.DONE, 0), 1)
        self.assertEqual(self.srv.cli("stats", "-t", "b")["tubes"]["b"][
            "counters"]["done"], 0)
        self.c.put("b", "four")
        self.assertEqual(self.c.flush("b"), 1)
        with self.assertRaises(sluice.NotFound):
            self.c.delete(1)
        self.assertIn("no such task", self.cli_error("delete", "1"))

    def test_tube_limits(self):
        # Limits on a tube that does not exist, or out of range: refused
        # with the server's reason, nothing changed; a bare number is not
        # a rate.
        with self.assertRaises(sluice.NotFound):
            self.c.tube_limit("lim", concurrency=2)
        self.c.put("lim", "a")
        self.c.put("lim", "b")
        self.c.put("lim", "c")
        with self.assertRaises(sluice.Invalid) as e:
            self.c.tube_limit("lim", rate="0/s")
        self.assertIn("rate of 0", str(e.exception))
        with self.assertRaises(ValueError):
            self.c.tube_limit("lim", rate="100")
        self.assertEqual(self.c.tube_limits("lim").own, sluice.Limit(0))
        lim = self.c.tube_limit("lim", rate="2/m", burst=1, concurrency=5)
        self.assertEqual((lim.rate_text, lim.burst, lim.concurrency,
                          lim.tokens), ("2/m", 1, 5, 1))
        cli = self.srv.cli("tube", "show", "lim")
        self.assertEqual(cli["limits"]["rate"], "2/m")
        self.assertEqual(len(self.c.take("lim", detach=True)), 1)
        self.assertEqual(self.c.take("lim"), [])  # no token: as empty
        now = self.c.tube_limits("lim")
        self.assertEqual((now.tokens, now.taken, now.held), (0, 1, 2))
        lim = self.c.tube_limit("lim", unset=sluice.Limit.RATE)
        self.assertEqual((lim.own, lim.rate), (sluice.Limit.CONCURRENCY, 0))
        self.assertEqual(len(self.c.take("lim", max=5)), 2)

    def test_group_limits(self):
        # Every group's cap, one group's own, a pause: a held group is
        # skipped while the others flow; bad input is refused and
        # changes nothing; the settings stay without tasks.
        with self.assertRaises(sluice.NotFound):
            self.c.group_set("gl", concurrency=1)
        for g in ("a", "a", "a", "b", "b", "c"):
            self.c.put("gl", g, group=g)
        with self.assertRaises(sluice.Invalid):
            self.c.group_set("gl", "a", rate="0/s")
        with self.assertRaises(sluice.BadGroup):
            self.c.group_set("gl", "a b", concurrency=1)
        every = self.c.group_set("gl", concurrency=1)
        self.assertEqual(every.every[4], 1)
        a = self.c.group_set("gl", "a", concurrency=2)
        self.assertEqual((a.own_settings, a.concurrency), (True, 2))
        self.assertTrue(self.c.group_pause("gl", "c").paused)
        got = sorted(t.payload.decode()
                     for t in self.c.take("gl", max=10, detach=True))
        self.assertEqual(got, ["a", "a", "b"])
        self.assertEqual(self.c.take("gl"), [])
        b = self.c.group_limits("gl", "b")
        self.assertEqual((b.taken, b.ready, b.held_by), (1, 1,
                                                         "concurrency"))
        self.assertEqual(self.c.group_resume("gl", "c").paused, False)
        self.assertEqual([t.payload for t in self.c.take("gl")], [b"c"])
        self.c.group_clear("gl", "a")
        self.assertEqual(self.c.group_limits("gl", "a").concurrency, 1)
        z = self.c.group_pause("gl", "z")
        self.assertEqual((z.paused, z.live), (True, False))

    def test_batches(self):
        # Tasks put with a batch name, closed, drained: the callbacks are
        # put once with the counts; a later put is BatchClosed; the CLI
        # reads the same batch.
        b = self.c.batch_set("py", on_success=("ok", b"yes"),
                             on_complete="done")
        self.assertEqual((b["total"], b["closed"]), (0, False))
        first = self.c.put("w", b"a", batch="py")
        self.c.put_batch([dict(tube="w", payload=b"b", batch="py")])
        self.assertEqual(self.c.batch_of(first.id), "py")
        self.assertIsNone(self.c.batch_of(self.c.put("v", b"none").id))
        with self.assertRaises(sluice.NotFound):
            self.c.batch_of(424242)
        # listed, open, with its counts; "py2" started later goes first
        self.c.put("w2", b"z", batch="py2")
        lst = self.c.batches()
        self.assertEqual(lst["total"], 2)
        self.assertEqual([b["name"] for b in lst["batches"]], ["py2", "py"])
        self.assertEqual((lst["batches"][1]["ready"],
                          lst["batches"][1]["closed"]), (2, False))
        self.assertEqual(len(self.c.batches(limit=1)["batches"]), 1)
        with self.assertRaises(sluice.Invalid):
            self.c.batches(limit=0)
        b = self.c.batch_close("py")
        self.assertEqual((b["total"], b["ready"], b["closed"]),
                         (2, 2, True))
        acked = 0
        for _ in range(50):
            for t in self.c.take(["w"], max=2, wait_ms=100):
                self.c.ack(t.id, t.lease)
                acked += 1
            if acked == 2:
                break
        for _ in range(500):
            b = self.c.batch_show("py")
            if b["on_complete"]["task"]:
                break
            time.sleep(0.02)
        self.assertTrue(b["ended"])
        self.assertEqual(b["acked"], 2)
        # ended, it is listed after the open one
        self.assertEqual([(x["name"], x["ended"])
                          for x in self.c.batches()["batches"]],
                         [("py2", False), ("py", True)])
        got = json.loads(self.c.take(["ok"])[0].payload)
        self.assertEqual((got["event"], got["acked"], got["payload"]),
                         ("success", 2, "yes"))
        with self.assertRaises(sluice.BatchClosed):
            self.c.put("w", b"c", batch="py")
        with self.assertRaises(sluice.NotFound):
            self.c.batch_show("nope")
        with self.assertRaises(sluice.NotFound):
            self.c.batch_close("nope")
        with self.assertRaises(sluice.BadTube):
            self.c.batch_set("x", on_complete="no spaces")
        self.assertTrue(self.srv.cli("batch", "show", "py")["ended"])
        # cancelled: its ready task gone at once, its taken one when
        # the lease ends (the touch is Cancelled); on_complete alone
        self.c.batch_set("pc", on_success="ok", on_complete="done")
        self.c.put("pc", b"x", batch="pc")
        self.c.put("pc", b"y", batch="pc")
        t = self.c.take(["pc"])[0]
        b = self.c.batch_cancel("pc")
        self.assertEqual((b["closed"], b["ready"], b["taken"]),
                         (True, 0, 1))
        with self.assertRaises(sluice.Cancelled):
            self.c.touch(t.id, t.lease)
        self.c.ack(t.id, t.lease)
        for _ in range(500):
            b = self.c.batch_show("pc")
            if b["on_complete"]["task"]:
                break
            time.sleep(0.02)
        self.assertEqual((b["ended"], b["failed"], b["on_success"]["task"]),
                         (True, 2, 0))
        with self.assertRaises(sluice.NotFound):
            self.c.batch_cancel("nope")

    def test_schedules(self):
        # A schedule set, listed with its next firing, shown with its
        # payload, paused, resumed and deleted; the CLI sees the same; a
        # bad expression or zone is BadSchedule naming it, nothing set.
        with self.assertRaises(sluice.BadSchedule) as e:
            self.c.schedule_set("n", "reports", "0 25 * * *", b"x")
        self.assertIn("hour field: 25 is out of 0-23", str(e.exception))
        with self.assertRaises(sluice.BadSchedule) as e:
            self.c.schedule_set("n", "reports", "@daily", b"x",
                                tz="Mars/Olympus")
        self.assertIn("unknown time zone", str(e.exception))
        with self.assertRaises(sluice.Invalid):
            self.c.schedule_set("n", "reports", "@daily", b"x",
                                catch_up="some")
        self.assertEqual(self.c.schedule_list(), [])
        s = self.c.schedule_set("nightly", "reports", "30 2 * * *",
                                b"report", tz="Europe/Paris",
                                catch_up="all", priority=7)
        self.assertEqual((s.name, s.tube, s.cron, s.tz, s.catch_up,
                          s.priority, s.payload, s.fired),
                         ("nightly", "reports", "30 2 * * *",
                          "Europe/Paris", "all", 7, b"report", 0))
        self.assertGreater(s.next_at, int(time.time() * 1000))
        self.assertLess(s.next_at, int(time.time() * 1000) + 26 * 3600000)
        listed = self.c.schedule_list()
        self.assertEqual([x.name for x in listed], ["nightly"])
        self.assertIsNone(listed[0].payload)
        self.assertEqual(listed[0].next_at, s.next_at)
        cli = self.srv.cli("schedule", "list")
        self.assertEqual(cli["schedules"][0]["next_at"], s.next_at)
        self.assertEqual(cli["schedules"][0]["catch_up"], "all")
        p = self.c.schedule_pause("nightly")
        self.assertTrue(p.paused)
        self.assertEqual(p.next_at, 0)
        self.assertFalse(self.c.schedule_resume("nightly").paused)
        self.assertEqual(self.c.schedule_show("nightly").payload, b"report")
        self.assertIsNone(self.c.schedule_delete("nightly"))
        with self.assertRaises(sluice.NotFound):
            self.c.schedule_show("nightly")
        self.assertEqual(self.c.schedule_list(), [])

    def test_fair_groups(self):
        # A put names its group; take, peek and the CLI show it; equal
        # priorities go round the groups; a bad name is BadGroup, in a
        # batch for that item alone.
        for i in range(3):
            self.c.put("fair", "a%d" % i, group="a")
        self.c.put("fair", "b0", group="b")
        self.c.put("fair", "n0")
        got = []
        for _ in range(3):
            [t] = self.c.take("fair")
            got.append(t.group)
            self.c.ack(t.id, t.lease)
        self.assertEqual(got, ["a", "b", None])
        peeked = self.c.peek(1)
        self.assertEqual(peeked.group, "a")
        self.assertEqual(self.srv.cli("peek", "1")["group"], "a")
        with self.assertRaises(sluice.BadGroup):
            self.c.put("fair", "x", group="a b")
        with self.assertRaises(sluice.BadGroup):
            self.c.put("fair", "x", group="g" * 201)
        res = self.c.put_batch([dict(tube="fair", payload="y", group="ok"),
                                dict(tube="fair", payload="z",
                                     group="not ok")])
        self.assertIsNone(res[0].error)
        self.assertIsNotNone(res[1].error)
        self.assertEqual(self.c.peek(res[0].id).group, "ok")

    def test_groups_listing(self):
        # The server lists the groups by backlog, as the CLI prints them;
        # a limit cuts the list, the total counts them all.
        for g, n in (("big", 3), ("small", 1), (None, 2)):
            for i in range(n):
                self.c.put("gl", "x", group=g)
        [t] = self.c.take("gl")  # big's first: big has 2 ready, 1 taken
        gs = self.c.groups("gl")
        self.assertEqual(gs.total, 3)
        self.assertEqual([(g.group, g.ready, g.taken) for g in gs.groups],
                         [("big", 2, 1), (None, 2, 0), ("small", 1, 0)])
        self.assertTrue(all(g.tube == "gl" for g in gs.groups))
        cli = self.srv.cli("groups", "gl")
        self.assertEqual(cli["total"], 3)
        self.assertEqual([(g["group"], g["ready"], g["taken"])
                          for g in cli["groups"]],
                         [(g.group, g.ready, g.taken) for g in gs.groups])
        top = self.c.groups("gl", limit=1)
        self.assertEqual((len(top.groups), top.total), (1, 3))
        self.assertEqual(top.groups[0].group, "big")
        self.assertIn("gl", {g.tube for g in self.c.groups("").groups})
        with self.assertRaises(sluice.NotFound):
            self.c.groups("nope")
        with self.assertRaises(ValueError):
            self.c.groups("gl", limit=0)
        self.c.ack(t.id, t.lease)

    def test_dependencies(self):
        # A diamond: D waits for B and C, which wait for A; D's take
        # carries both results; a parent failing buries its child (rule
        # fail) or lets it run (ignore); bad input is refused.
        a = self.c.put("dag", "A").id
        b = self.c.put("dag", "B", after=[a]).id
        c = self.c.put("dag", "C", after=[a]).id
        d = self.c.put("dag", "D", after=[b, c]).id
        w = self.c.peek(d)
        self.assertEqual(w.state, sluice.State.WAITING)
        self.assertEqual((w.parents_pending, sorted(w.parents)), (2, [b, c]))
        self.assertEqual(self.srv.cli("peek", str(d))["state"], "waiting")
        self.assertEqual(sorted(self.c.peek(a).children), [b, c])
        results = {a: "ra", b: "rb", c: "rc"}
        order = []
        for _ in range(3):
            [t] = self.c.take("dag", wait_ms=1000)
            order.append(t.id)
            if t.id != a:
                self.assertEqual(t.parents, {a: b"ra"})
            self.c.ack(t.id, t.lease, result=results[t.id])
        self.assertEqual(order[0], a)
        [t] = self.c.take("dag", wait_ms=1000)
        self.assertEqual(t.id, d)
        self.assertEqual(t.parents, {b: b"rb", c: b"rc"})
        self.assertEqual(t.parent_outcomes, {b: "done", c: "done"})
        self.c.ack(t.id, t.lease)
        self.assertEqual(self.c.take("dag", wait_ms=100), [])
        # a parent fails for good
        p = self.c.put("dagf", "P").id
        f = self.c.put("dagf", "F", after=[p]).id
        i = self.c.put("dagf", "I", after=[p],
                       on_parent_failure="ignore").id
        [t] = self.c.take("dagf", wait_ms=1000)
        self.c.fail(t.id, t.lease, "boom", fatal=True)
        self.assertEqual(self.c.peek(f).state, sluice.State.BURIED)
        self.assertEqual(self.c.peek(f).last_error,
                         "task %d failed: boom" % p)
        self.assertEqual(self.c.peek(i).state, sluice.State.READY)
        # by key, and in a batch
        k = self.c.put("dagk", "K", key="parent").id
        res = self.c.put_batch([dict(tube="dagk", payload="x",
                                     after_keys=["parent"])])
        self.assertEqual(self.c.peek(res[0].id).parents_pending, 1)
        self.assertEqual(list(self.c.peek(res[0].id).parents), [k])
        # bad input
        with self.assertRaises(sluice.NotFound):
            self.c.put("dag", "x", after=[99999])
        with self.assertRaises(sluice.LimitExceeded):
            self.c.put("dag", "x", after=list(range(1, 1002)))
        with self.assertRaises(sluice.Invalid):
            self.c.put("dag", "x", after=[a], on_parent_failure="maybe")
        k = self.c.put("dag", "R").id
        [t] = self.c.take("dag", wait_ms=1000)
        with self.assertRaises(sluice.ResultTooLarge):
            self.c.ack(t.id, t.lease, result="r" * 65536)
        self.c.ack(t.id, t.lease, result="r" * 65535)
        self.assertEqual(len(self.c.peek(k).result), 65535)

    def test_tubes_stats_and_history(self):
        s = self.c.tube_set("m", ttr_ms=30000, max_attempts=5,
                            dead_letter="dead",
                            unset=sluice.Setting.BACKOFF)
        self.assertEqual((s.ttr_ms, s.max_attempts, s.dead_letter,
                          s.backoff_base_ms), (30000, 5, "dead", 1000))
        cli = self.srv.cli("tube", "show", "m")
        self.assertEqual((cli["ttr_ms"], cli["max_attempts"],
                          cli["dead_letter"], sorted(cli["own"])),
                         (30000, 5, "dead", ["dead_letter", "max_attempts",
                                             "ttr"]))
        self.assertEqual(self.c.tube_show("m"), s)
        self.c.put("m", "x")
        [t] = self.c.take("m", detach=True)
        self.assertEqual(t.ttr_ms, 30000)
        self.c.ack(t.id, t.lease)
        self.c.put("m", "y")
        until = self.c.pause("m", 60000)
        self.assertGreater(until, time.time() * 1000)
        self.assertEqual(self.c.take("m"), [])
        st = self.c.stats()
        cli = self.srv.cli("stats")
        self.assertEqual((st.role, st.epoch, st.lsn), (
            sluice.Role.LEADER, cli["epoch"], cli["lsn"]))
        m = st.tubes["m"]
        self.assertEqual((m.ready, m.paused_until, m.counters["acks"]),
                         (1, until, 1))
        self.assertEqual(m.counters, {k: v for k, v in cli["tubes"]["m"][
            "counters"].items() if k in m.counters})
        self.assertEqual(m.settings.ttr_ms, 30000)
        self.assertEqual(self.c.pause("m", 0), 0)
        top = self.c.stats_top(1)
        self.assertEqual(list(top.tubes), ["m"])
        page = self.c.stats_page(10)
        self.assertIn("m", page.tubes)
        [hour] = self.c.stats_hourly("m")
        cli = self.srv.cli("stats", "--hourly", "-t", "m")["hours"][0]
        self.assertEqual((hour.start, hour.acks, hour.work.count),
                         (cli["start"], cli["acks"], cli["work"]["count"]))
        h = self.c.history("", 5)
        self.assertEqual(h.step_ms, 1000)
        self.assertEqual(len(h.puts), 5)
        self.assertEqual(sum(h.puts), 2)
        self.assertEqual(h.ready[-1], 1)
        self.assertEqual(self.c.release_all("m"), 0)
        with self.assertRaises(sluice.NotEmpty):
            self.c.tube_delete("m")
        self.assertEqual(self.c.tube_delete("m", force=True), 1)
        self.assertGreater(self.c.snapshot(), 0)
        with self.assertRaises(sluice.BadState) as e:
            self.c.cluster()
        self.assertIn("without --etcd", e.exception.message)
        self.assertIn("without --etcd", self.cli_error("cluster"))
        with self.assertRaises(sluice.BadState):
            self.c.promote()  # a leader already

    def test_bad_arguments_are_the_servers_errors(self):
        with self.assertRaises(sluice.BadTube):
            self.c.put("bad tube", "x")
        with self.assertRaises(sluice.Invalid):
            self.c.put("t", "x", replace=True)  # without a key
        with self.assertRaises(sluice.Invalid):
            self.c.ack(1, 0)  # a lease is needed
        with self.assertRaises(sluice.SluiceError) as e:
            self.c.peek(10 ** 12)
        self.assertIsInstance(e.exception, sluice.NotFound)
        # a payload near the server's limit, and one over it
        big = b"x" * 999997 + b"end"
        tid = self.c.put("big", big).id
        self.assertEqual(self.c.peek(tid).payload, big)
        with self.assertRaises(sluice.PayloadTooLarge):
            self.c.put("big", bytes(2 << 20))

    def test_wait_and_cancel(self):
        # wait: a task acked before the wait, as the CLI says it; a wait
        # that times out; cancel of a ready and of a taken task (its
        # holder's touch raises Cancelled); bad input.
        tid = self.c.put("wc", "a").id
        [t] = self.c.take("wc")
        self.c.ack(t.id, t.lease, result="r!")
        o = self.c.wait(tid)
        self.assertEqual((o.final, o.state, o.result, o.tube),
                         (True, "done", "r!", "wc"))
        cli = self.srv.cli("wait", str(tid))
        self.assertEqual((cli["state"], cli["result"], cli["time"]),
                         ("done", "r!", o.time))
        rid = self.c.put("wc", "b").id
        o = self.c.wait(rid, 100)
        self.assertEqual((o.final, o.state), (False, "ready"))
        self.c.cancel(rid)
        self.assertEqual(self.c.wait(rid).state, "cancelled")
        with self.assertRaises(sluice.NotFound):
            self.c.peek(rid)
        kid = self.c.put("wc", "c").id
        [t] = self.c.take("wc")
        self.c.cancel(kid)
        self.assertTrue(self.c.peek(kid).cancelled)
        with self.assertRaises(sluice.Cancelled):
            self.c.touch(kid, t.lease)
        with self.assertRaises(sluice.Cancelled):
            self.c.fail(kid, t.lease, "late")
        self.assertEqual(self.c.wait(kid).state, "cancelled")
        with self.assertRaises(sluice.NotFound):
            self.c.cancel(424242)
        with self.assertRaises(sluice.NotFound):
            self.c.wait(424242)
        with self.assertRaises(sluice.Invalid):
            self.c.wait(kid, 3600 * 1000 + 1)
        res = self.c.cancel_batch([kid, 424242])
        self.assertIsInstance(res[0].error, sluice.NotFound)

    def test_session_lease_ends_with_the_connection(self):
        tid = self.c.put("s", "x").id
        worker = self.srv.client()
        [t] = worker.take("s")
        self.assertFalse(t.detached)
        self.assertEqual(self.c.peek(tid).session, t.session or
                         self.c.peek(tid).session)
        self.assertTrue(self.c.peek(tid).peer.startswith("127.0.0.1:"))
        worker.close()
        self.assertTrue(wait_for(lambda: self.c.peek(tid).state != 3))
        self.assertIn("worker disconnected", self.c.peek(tid).last_error)

    def test_detached_lease_outlives_the_connection(self):
        tid = self.c.put("d", "x").id
        worker = self.srv.client()
        [t] = worker.take("d", detach=True)
        self.assertTrue(t.detached)
        worker.close()
        time.sleep(0.2)
        self.assertEqual(self.c.peek(tid).state, sluice.State.TAKEN)
        self.assertEqual(self.client().ack(t.id, t.lease).state,
                         sluice.State.DONE)

    def test_replace_if_newer_of_a_taken_task(self):
        tid = self.c.put("r", "v1", key="k", version=None).id
        [t] = self.c.take("r")
        self.c.put("r", "v2", key="k", replace=True, priority=3, version=5)
        r = self.c.put("r", "v0", key="k", replace=True, version=4)
        self.assertTrue(r.not_newer)
        p = self.c.peek(tid)
        self.assertEqual((p.payload, p.pending.payload, p.pending.priority,
                          p.pending_version), (b"v1", b"v2", 3, 5))
        a = self.c.ack(t.id, t.lease)
        self.assertTrue(a.replaced)
        self.assertEqual(a.state, sluice.State.READY)
        self.assertEqual(self.c.peek(tid).payload, b"v2")

    def test_debounce_and_throttle(self):
        first = self.c.put("dm", "a", key="k", debounce_ms=300)
        r = self.c.put("dm", "b", key="k", debounce_ms=300)
        self.assertEqual((r.id, r.created), (first.id, False))
        self.assertEqual(self.c.take("dm"), [])  # not due yet
        [t] = self.c.take("dm", wait_ms=5000)
        self.assertEqual((t.id, t.payload), (first.id, b"b"))
        self.c.ack(t.id, t.lease)
        r1 = self.c.put("dt", "a", key="k", throttle_ms=60000)
        self.assertTrue(r1.created and not r1.throttled)
        r = self.c.put("dt", "b", key="k", throttle_ms=60000)
        self.assertTrue(r.throttled)
        self.assertEqual((r.id, r.created), (r1.id, False))
        [r] = self.c.put_batch([dict(tube="dt", payload="c", key="k",
                                     throttle_ms=60000)])
        self.assertTrue(r.throttled and r.error is None)
        with self.assertRaises(sluice.Invalid) as e:
            self.c.put("dt", "x", throttle_ms=1000)  # without a key
        self.assertIn("throttle needs a key", str(e.exception))
        with self.assertRaises(sluice.Invalid):
            self.c.put("dt", "x", key="k", debounce_ms=5, throttle_ms=5)

    def test_release_front_keeps_the_place(self):
        ids = [self.c.put("q", "t%d" % i).id for i in range(3)]
        [t] = self.c.take("q")
        self.assertEqual(t.id, ids[0])
        # a plain release goes behind the tasks already due
        self.c.release(t.id, t.lease)
        [t] = self.c.take("q")
        self.assertEqual(t.id, ids[1])
        # front: back at the place it had before the take
        self.assertEqual(self.c.release(t.id, t.lease, front=True).state,
                         sluice.State.READY)
        [t] = self.c.take("q")
        self.assertEqual(t.id, ids[1])
        with self.assertRaises(sluice.Invalid):
            self.c.release(t.id, t.lease, front=True, delay_ms=1000)

    def test_untake_uncounts_the_attempt(self):
        ids = [self.c.put("u", "t%d" % i).id for i in range(2)]
        [t] = self.c.take("u")
        self.assertEqual((t.id, t.attempts), (ids[0], 1))
        # undone: ready at its place, as if never taken
        self.assertEqual(self.c.untake(t.id, t.lease).state,
                         sluice.State.READY)
        p = self.c.peek(ids[0])
        self.assertEqual((p.attempts, p.last_error), (0, None))
        with self.assertRaises(sluice.BadState):
            self.c.untake(t.id, t.lease)  # the lease is void
        [t2] = self.c.take("u")
        self.assertEqual((t2.id, t2.attempts), (ids[0], 1))
        with self.assertRaises(sluice.StaleLease):
            self.c.untake(t.id, t.lease)
        # the server refuses untake with anything of a release's, and
        # with force (the holder's only), naming it
        from sluice.codec import Request, _after, _lease
        for flags, delay, pri, what in ((0x02, 0, 0, "front"),
                                        (0x01, 0, 7, "priority"),
                                        (0, 1000, 0, "delay")):
            body = _lease(t2.id, t2.lease, False) + struct.pack(
                "<QI", delay, pri)
            with self.assertRaises(sluice.Invalid) as e:
                self.c._do(Request("release", 0x04 | flags, body, _after))
            self.assertIn(what, str(e.exception))
        body = struct.pack("<QQQI", t2.id, 0, 0, 0)
        with self.assertRaises(sluice.Invalid) as e:
            self.c._do(Request("release", 0x04 | 0x80, body, _after))
        self.assertIn("force", str(e.exception))
        self.c.untake(t2.id, t2.lease)
        [t3] = self.c.take("u")
        self.assertEqual((t3.id, t3.attempts), (ids[0], 1))

    def test_errors_count_the_buried_by_default(self):
        self.c.put("e", "a")
        self.c.put("e", "b")
        [t] = self.c.take("e")
        self.c.fail(t.id, t.lease, "retry me", delay_ms=60000)
        [t] = self.c.take("e")
        self.c.bury(t.id, t.lease, error="poison")
        self.assertEqual([(g.error, g.count) for g in self.c.errors("e")],
                         [("poison", 1)])
        self.assertEqual(
            [g.error for g in self.c.errors("e",
                                            state=sluice.State.DELAYED)],
            ["retry me"])
        self.assertEqual(
            sorted(g.error for g in self.c.errors("e", state=0)),
            ["poison", "retry me"])

    def test_asyncio_client(self):
        async def run():
            async with sluice.AsyncClient(self.srv.url, timeout=10) as c:
                r = await c.put("a", b"async", key="x")
                [t] = await c.take("a", wait_ms=1000)
                self.assertEqual((t.id, t.payload), (r.id, b"async"))
                peeked, stats = await asyncio.gather(c.peek(r.id),
                                                     c.stats("a"))
                self.assertEqual(peeked.state, sluice.State.TAKEN)
                self.assertEqual(stats.tubes["a"].taken, 1)
                with self.assertRaises(sluice.StaleLease):
                    await c.ack(t.id, t.lease + 1)
                self.assertEqual((await c.ack(t.id, t.lease)).state,
                                 sluice.State.DONE)
                self.assertEqual(await c.take("a", wait_ms=100), [])
        asyncio.run(asyncio.wait_for(run(), 30))
        self.same_task(self.c.peek(1), self.srv.cli("peek", "1"))


if __name__ == "__main__":
    main()
