"""Tests of the HTTP task API (/v1/, docs/http-api.md) against real
sluiced processes on 127.0.0.1, through Python's urllib only: every route,
the error paths (bad tube, unknown id, stale lease, oversized payload, a
follower, a cross-site write, --auth without a token or with the wrong
role, an admin write without --http-admin), states checked with the
`sluice` CLI; 10,000 tasks drained exactly once by 8 threads; and
GET /v1/openapi.json checked by an OpenAPI validator (tests/openapi).
Every wait is bounded.

Run by ctest (httpapi): test_httpapi.py SLUICED SLUICE. Exits 77
(skipped) without them.
"""

import base64
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

SLUICED = SLUICE = None
HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATOR = os.path.join(HERE, "..", "openapi")
# the wire protocol's Python client, for a lease held by a session
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
import sluice  # noqa: E402
# ports as every test takes them (below the ephemeral range)
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python",
                                "tests"))
from harness import free_port  # noqa: E402




class Server:
    """A sluiced of its own with --http, in a temporary directory."""

    def __init__(self, *flags, prog=None, env=None):
        self.dir = tempfile.mkdtemp(prefix="sluice-httpapi-")
        self.port = free_port()
        self.http = free_port()
        self.url = "tcp://127.0.0.1:%d" % self.port
        self.base = "http://127.0.0.1:%d" % self.http
        self.log = open(os.path.join(self.dir, "sluiced.log"), "wb")
        prog = os.path.join(os.path.dirname(SLUICED), prog) if prog \
            else SLUICED
        self.proc = subprocess.Popen(
            [prog, "--data", os.path.join(self.dir, "data"),
             "--listen", self.url, "--http", "127.0.0.1:%d" % self.http,
             "--fsync", "never"] + list(flags),
            stdout=self.log, stderr=subprocess.STDOUT,
            env=dict(os.environ, **(env or {})))
        deadline = time.monotonic() + 15
        while True:  # serving: /v1/stats answers (401 with --auth)
            try:
                with urllib.request.urlopen(self.base + "/v1/stats",
                                            timeout=2) as r:
                    if r.status == 200:
                        return
            except urllib.error.HTTPError as e:
                if e.code == 401:
                    return
            except (urllib.error.URLError, OSError):
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("sluiced did not start")
            time.sleep(0.05)

    def stop(self, want=0):
        """Stops it; raises when it does not exit with `want` (0 after
        SIGTERM: a sanitizer's report makes it fail)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        with open(os.path.join(self.dir, "sluiced.log"), "rb") as f:
            log = f.read().decode(errors="replace")
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.proc.returncode != want:
            raise AssertionError("sluiced exited %d; its log ends:\n%s" %
                                 (self.proc.returncode, log[-4000:]))

    def call(self, method, path, body=None, headers=None):
        """(status, headers, JSON or text) of one request."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        req = urllib.request.Request(self.base + path, data=body,
                                     method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, hdrs, raw = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, hdrs, raw = e.code, e.headers, e.read()
        try:
            return status, hdrs, json.loads(raw)
        except ValueError:
            return status, hdrs, raw.decode(errors="replace")

    def ok(self, method, path, body=None, want=200, headers=None):
        status, _, out = self.call(method, path, body, headers)
        if status != want:
            raise AssertionError("%s %s: %d %r (wanted %d)" %
                                 (method, path, status, out, want))
        return out

    def cli(self, *args):
        """The JSON `sluice --json` prints for the task or stats asked."""
        out = subprocess.run([SLUICE, "-s", self.url] + list(args) +
                             ["--json"], capture_output=True, timeout=30)
        return out.returncode, (json.loads(out.stdout) if out.stdout
                                else None)


def put(s, tube, payload, query=""):
    return s.ok("POST", "/v1/tubes/%s/tasks%s" % (tube, query), payload,
                want=201)["id"]


def take(s, tube, query="?wait=2s"):
    tasks = s.ok("POST", "/v1/tubes/%s/take%s" % (tube, query))["tasks"]
    return tasks


class ApiTest(unittest.TestCase):
    s = None

    @classmethod
    def setUpClass(cls):
        cls.s = Server("--http-admin", "--max-payload", "1000")

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def state(self, tid):
        rc, t = self.s.cli("peek", str(tid))
        return t["state"] if rc == 0 else None

    def test_put_take_ack(self):
        s = self.s
        tid = put(s, "pta", "hello", "?priority=3&ttr=5s&max_attempts=4")
        self.assertEqual(self.state(tid), "ready")
        [t] = take(s, "pta")
        self.assertEqual((t["id"], t["payload"], t["priority"]),
                         (tid, "hello", 3))
        self.assertTrue(t["detached"])
        self.assertEqual(t["ttr"], 5000)
        self.assertEqual(self.state(tid), "taken")
        after = s.ok("POST", "/v1/tasks/%d/ack?lease=%d" % (tid, t["lease"]))
        self.assertEqual(after["state"], "gone")
        self.assertIsNone(self.state(tid))

    def test_a_taken_task_names_its_holder(self):
        """A lease a wire protocol client holds names that client's
        connection (its id and address) in peek, list and the CLI's JSON;
        a detached lease and a ready task name none; the connection's end
        ends the lease."""
        s = self.s
        held, free = put(s, "hold", "a"), put(s, "hold", "b")
        c = sluice.Client(s.url)
        try:
            [t] = c.take(["hold"])
            self.assertEqual(t.id, held)
            me = "127.0.0.1:%d" % c._sock.getsockname()[1]
            peek = s.ok("GET", "/v1/tasks/%d" % held)
            self.assertFalse(peek["detached"])
            self.assertGreater(peek["session"], 0)
            self.assertEqual(peek["peer"], me)
            _, cli = s.cli("peek", str(held))
            self.assertEqual((cli["session"], cli["peer"]),
                             (peek["session"], me))
            listed = s.ok("GET", "/v1/tubes/hold/tasks?state=taken")
            self.assertEqual(
                [(x["id"], x["session"], x["peer"]) for x in listed["tasks"]],
                [(held, peek["session"], me)])
            ready = s.ok("GET", "/v1/tasks/%d" % free)
            self.assertNotIn("session", ready)
            self.assertNotIn("peer", ready)
            [d] = take(s, "hold")  # HTTP: a detached lease
            self.assertEqual(d["id"], free)
            self.assertTrue(d["detached"])
            self.assertNotIn("session", s.ok("GET", "/v1/tasks/%d" % free))
        finally:
            c.close()
        deadline = time.monotonic() + 10
        while self.state(held) == "taken" and time.monotonic() < deadline:
            time.sleep(0.05)
        after = s.ok("GET", "/v1/tasks/%d" % held)
        self.assertNotEqual(after["state"], "taken")
        self.assertNotIn("session", after)
        self.assertIn("worker disconnected (%s)" % me, after["last_error"])

    def test_put_options_and_peek(self):
        s = self.s
        tid = put(s, "opts", "later", "?delay=1h&key=k-opts")
        status, _, out = s.call("POST", "/v1/tubes/opts/tasks?key=k-opts",
                                "again")
        self.assertEqual((status, out), (200, {"id": tid, "created": False}))
        t = s.ok("GET", "/v1/tasks/%d" % tid)
        self.assertEqual((t["state"], t["key"]), ("delayed", "k-opts"))
        self.assertEqual(s.ok("GET", "/v1/keys/k-opts?tube=opts")["id"], tid)
        # keys are per tube: the key's tube is named, or the answer says so
        status, _, out = s.call("GET", "/v1/keys/k-opts")
        self.assertEqual(status, 400, out)
        self.assertIn("tube", out["message"])
        status, _, out = s.call("GET", "/v1/keys/k-opts?tube=other")
        self.assertEqual(status, 404, out)
        self.assertEqual(
            s.ok("GET", "/v1/tubes/opts/tasks?key=k-opts")["tasks"][0]["id"],
            tid)
        self.assertEqual(
            s.ok("GET", "/v1/tubes/other/tasks?key=k-opts"), {"tasks": []})
        self.assertEqual(s.ok("GET", "/v1/tubes/opts/tasks?key=none"),
                         {"tasks": []})
        self.assertEqual(
            s.ok("GET", "/v1/tubes/opts/next?state=delayed")["id"], tid)
        at = put(s, "opts", "at", "?run_at=%d" % (time.time() * 1000 + 9e6))
        self.assertEqual(self.state(at), "delayed")
        rec = put(s, "opts", "tick", "?every=1h")
        self.assertEqual(s.ok("GET", "/v1/tasks/%d" % rec)["period"],
                         3600000)
        # binary payloads come back as payload_base64
        bid = put(s, "bin", b"\xff\x00\xfe")
        self.assertEqual(s.ok("GET", "/v1/tasks/%d" % bid)["payload_base64"],
                         "/wD+")

    def test_put_and_update_read_the_task_options_alike(self):
        # priority, delay, run_at, ttr and max_attempts are read alike for
        # a put and an update; each judges delay with run_at as it always
        # has, and a bad value is named in the 400
        s = self.s
        later = int(time.time() * 1000 + 9e6)
        tid = put(s, "tao", "x", "?priority=5&delay=0&run_at=%d&ttr=7s"
                  "&max_attempts=2" % later)
        t = s.ok("GET", "/v1/tasks/%d" % tid)
        self.assertEqual((t["state"], t["priority"], t["run_at"], t["ttr"],
                          t["max_attempts"]), ("delayed", 5, later, 7000, 2))
        after = s.ok("POST", "/v1/tasks/%d/update?priority=9&run_at=now"
                     "&ttr=1m&max_attempts=3" % tid)
        self.assertEqual(after["state"], "ready")
        t = s.ok("GET", "/v1/tasks/%d" % tid)
        self.assertEqual((t["priority"], t["ttr"], t["max_attempts"]),
                         (9, 60000, 3))
        s.ok("POST", "/v1/tasks/%d/update?delay=1h" % tid)
        self.assertEqual(self.state(tid), "delayed")
        for method, path, message in (
                ("POST", "/v1/tubes/tao/tasks?delay=1s&run_at=%d" % later,
                 "run_at: give delay or run_at, not both"),
                ("POST", "/v1/tubes/tao/tasks?run_at=now",
                 "run_at: a whole number 0..18446744073709551615"),
                ("POST", "/v1/tubes/tao/tasks?max_attempts=4294967296",
                 "max_attempts: a whole number 0..4294967295"),
                ("POST", "/v1/tasks/%d/update?run_at=now&delay=1s" % tid,
                 "delay: give delay or run_at"),
                ("POST", "/v1/tasks/%d/update?run_at=%d&delay=0" %
                 (tid, later), "delay: give delay or run_at"),
                ("POST", "/v1/tasks/%d/update?priority=high" % tid,
                 "priority: a whole number 0..4294967295"),
                ("POST", "/v1/tasks/%d/update?ttr=soon" % tid,
                 "ttr: ")):
            status, _, out = s.call(method, path)
            self.assertEqual((status, out["error"]), (400, "invalid"),
                             (path, out))
            self.assertTrue(out["message"].startswith(message),
                            (path, out["message"]))
        self.assertEqual(self.state(tid), "delayed")

    def test_batch_put_refuses_bad_items_alone(self):
        s = self.s
        out = s.ok("POST", "/v1/tubes/batch/tasks?batch=1", [
            {"payload": "a", "priority": 1},
            {"payload_base64": "AAE="},
            {"priority": 2},
            {"payload": "x", "tube": "bad tube"},
            {"payload": "y" * 2000},
            {"payload": "d", "delay": "1h"},
        ])["results"]
        self.assertTrue(out[0]["created"] and out[1]["created"])
        self.assertEqual(out[2]["error"], "invalid")
        self.assertEqual(out[3]["error"], "bad_tube")
        self.assertEqual(out[4]["error"], "payload_too_large")
        self.assertEqual(self.state(out[5]["id"]), "delayed")
        tasks = take(s, "batch", "?n=10")
        self.assertEqual([t["id"] for t in tasks],
                         [out[0]["id"], out[1]["id"]])
        res = s.ok("POST", "/v1/tasks/ack", [
            {"id": tasks[0]["id"], "lease": tasks[0]["lease"]},
            {"id": tasks[1]["id"], "lease": 1}])["results"]
        self.assertEqual(res[0], {"id": tasks[0]["id"]})
        self.assertEqual(res[1]["error"], "stale_lease")
        status, _, out = s.call("POST", "/v1/tubes/batch/tasks?batch=1",
                                "not json")
        self.assertEqual(status, 400)

    def test_take_several_tubes_and_nothing(self):
        s = self.s
        a = put(s, "ta", "a", "?priority=9")
        b = put(s, "tb", "b", "?priority=1")
        # the most urgent across them, or strictly in the order given
        [t] = take(s, "ta,tb", "?order=strict")
        self.assertEqual(t["id"], a)
        [t] = take(s, "ta,tb")
        self.assertEqual(t["id"], b)
        self.assertEqual(take(s, "ta,tb", "?wait=0"), [])
        t0 = time.monotonic()
        self.assertEqual(take(s, "ta", "?wait=300ms"), [])
        self.assertGreaterEqual(time.monotonic() - t0, 0.2)
        status, _, out = s.call("POST", "/v1/tubes/ta/take?wait=2m")
        self.assertEqual((status, out["error"]), (400, "invalid"))

    def test_long_poll_wakes_on_put(self):
        s = self.s
        got = []
        th = threading.Thread(
            target=lambda: got.extend(take(s, "lp", "?wait=20s")))
        th.start()
        time.sleep(0.2)
        tid = put(s, "lp", "late")
        th.join(25)
        self.assertEqual([t["id"] for t in got], [tid])

    def waiting(self):
        return self.s.ok("GET", "/v1/stats")["node"]["waiting_takes"]

    def until_waiting(self, want):
        deadline = time.monotonic() + 10
        while self.waiting() != want:
            if time.monotonic() > deadline:
                self.fail("waiting takes %d, not %d" % (self.waiting(), want))
            time.sleep(0.02)

    def raw_take(self, tube):
        """A long-poll take on a socket of its own, as it waits."""
        base = self.waiting()
        c = socket.create_connection(("127.0.0.1", self.s.http), timeout=10)
        c.sendall(b"POST /v1/tubes/%s/take?wait=30s HTTP/1.1\r\n"
                  b"Host: 127.0.0.1\r\nContent-Length: 0\r\n\r\n" %
                  tube.encode())
        self.until_waiting(base + 1)
        return c, base

    def test_a_waiting_take_whose_client_left_takes_nothing(self):
        s = self.s
        c, base = self.raw_take("left")
        c.close()
        self.until_waiting(base)  # dropped: the server saw it leave
        tid = put(s, "left", "for a worker that is there")
        self.assertEqual(self.state(tid), "ready")
        # one that stays gets its task; the answer closes its connection
        c, base = self.raw_take("left2")
        tid = put(s, "left2", "yours")
        raw = b""
        for _ in range(1000):  # until the server closes it
            chunk = c.recv(65536)
            if not chunk:
                break
            raw += chunk
        c.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        self.assertIn(b"Connection: close", head)
        [t] = json.loads(body)["tasks"]
        self.assertEqual(t["id"], tid)
        self.assertEqual(self.state(tid), "taken")
        # a take answered at once keeps its connection
        conn = http.client.HTTPConnection("127.0.0.1", s.http, timeout=10)
        put(s, "left3", "now")
        for path in ("/v1/tubes/left3/take?wait=5s", "/v1/stats"):
            conn.request("POST" if "take" in path else "GET", path)
            r = conn.getresponse()
            r.read()
            self.assertEqual((r.status, r.getheader("Connection")),
                             (200, None))
        conn.close()

    def test_release_fail_touch_bury_kick(self):
        s = self.s
        tid = put(s, "rf", "x")
        [t] = take(s, "rf")
        s.ok("POST", "/v1/tasks/%d/touch?lease=%d" % (tid, t["lease"]))
        after = s.ok("POST", "/v1/tasks/%d/release?lease=%d&delay=1h"
                     "&priority=7" % (tid, t["lease"]))
        self.assertEqual(after["state"], "delayed")
        self.assertEqual(self.s.cli("peek", str(tid))[1]["priority"], 7)
        s.ok("POST", "/v1/tasks/%d/update?run_at=now" % tid)
        self.assertEqual(self.state(tid), "ready")
        [t] = take(s, "rf")
        after = s.ok("POST", "/v1/tasks/%d/fail?lease=%d" % (tid, t["lease"]),
                     "it broke")
        self.assertEqual(after["state"], "delayed")
        _, peek = self.s.cli("peek", str(tid))
        self.assertEqual(peek["last_error"], "it broke")
        s.ok("POST", "/v1/tasks/%d/update?run_at=now&priority=2" % tid)
        [t] = take(s, "rf")
        after = s.ok("POST", "/v1/tasks/%d/fail?lease=%d&fatal=1" %
                     (tid, t["lease"]), "fatal")
        self.assertEqual(after["state"], "buried")
        errs = s.ok("GET", "/v1/tubes/rf/errors")["errors"]
        self.assertEqual(errs, [{"error": "fatal", "count": 1,
                                 "ids": [tid]}])
        self.assertEqual(s.ok("POST", "/v1/tasks/%d/kick" % tid)["state"],
                         "ready")
        [t] = take(s, "rf")
        s.ok("POST", "/v1/tasks/%d/bury?lease=%d" % (tid, t["lease"]), "park")
        self.assertEqual(self.state(tid), "buried")
        self.assertEqual(s.ok("POST", "/v1/tubes/rf/kick?n=5"), {"kicked": 1})
        self.assertEqual(self.state(tid), "ready")
        [t] = take(s, "rf")
        after = s.ok("POST", "/v1/tasks/%d/ack?lease=%d&to=rf2" %
                     (tid, t["lease"]))
        self.assertEqual(after["state"], "ready")
        self.assertEqual(self.s.cli("peek", str(tid))[1]["tube"], "rf2")
        # an operator's override
        [t] = take(s, "rf2")
        s.ok("POST", "/v1/tasks/%d/release?force=1" % tid)
        self.assertEqual(self.state(tid), "ready")

    def test_history_counts_and_depths(self):
        """/v1/history: per 5 s for a tube, per second for every tube:
        the events of each slot, then the depth by state at its end (the
        last slot: now), as arrays of numbers of one length."""
        s = self.s
        ids = [put(s, "hist", "x") for _ in range(3)]
        [t] = take(s, "hist")
        [u] = take(s, "hist")
        s.ok("POST", "/v1/tasks/%d/bury?lease=%d" % (u["id"], u["lease"]),
             "park")
        self.assertIn(t["id"], ids)
        h = s.ok("GET", "/v1/history?tube=hist&secs=60")
        self.assertEqual(h["step_ms"], 5000)
        kinds = ("puts", "takes", "acks", "fails", "buries", "ttr_expired",
                 "ready", "delayed", "taken", "buried")
        for k in kinds:
            self.assertEqual(len(h[k]), 12, k)
            self.assertTrue(all(isinstance(v, int) for v in h[k]), k)
        self.assertEqual((sum(h["puts"]), sum(h["takes"]), sum(h["buries"])),
                         (3, 2, 1))
        self.assertEqual([h[k][-1] for k in kinds[6:]], [1, 0, 1, 1])
        self.assertEqual(h["start"] % 5000, 0)
        every = s.ok("GET", "/v1/history?secs=10")
        self.assertEqual((every["step_ms"], len(every["ready"])), (1000, 10))
        self.assertGreaterEqual(every["buried"][-1], 1)
        self.assertEqual(len(s.ok("GET", "/v1/history")["taken"]), 900)
        for path, want in (("/v1/history?secs=0", 400),
                           ("/v1/history?secs=3601", 400),
                           ("/v1/history?tube=nosuch", 404),
                           ("/v1/history?tube=bad%20tube", 400)):
            status, _, out = s.call("GET", path)
            self.assertEqual(status, want, (path, out))

    def test_delete_forms(self):
        s = self.s
        a, b, c = (put(s, "del", str(i)) for i in range(3))
        k = put(s, "del", "k", "?key=k-del")
        self.assertEqual(s.ok("DELETE", "/v1/tasks/%d" % a),
                         {"deleted": 1, "id": a})
        self.assertIsNone(self.state(a))
        self.assertEqual(s.ok("DELETE", "/v1/keys/k-del?tube=del")["id"], k)
        self.assertIsNone(self.state(k))
        res = s.ok("POST", "/v1/tasks/delete", [b, 999999])["results"]
        self.assertEqual(res[0], {"id": b})
        self.assertEqual(res[1]["error"], "not_found")
        d = put(s, "del", "later", "?delay=1h")
        self.assertEqual(
            s.ok("DELETE", "/v1/tubes/del/tasks?state=delayed"),
            {"deleted": 1})
        self.assertIsNone(self.state(d))
        self.assertEqual(s.ok("DELETE", "/v1/tubes/del/tasks?all=1"),
                         {"deleted": 1})
        self.assertIsNone(self.state(c))

    def test_list_stats_pause_settings_snapshot(self):
        s = self.s
        ids = [put(s, "ls", str(i)) for i in range(3)]
        out = s.ok("GET", "/v1/tubes/ls/tasks?state=ready&order=age&limit=2")
        self.assertEqual([t["id"] for t in out["tasks"]], ids[:2])
        self.assertIsNone(out["tasks"][0]["payload"])
        out = s.ok("GET", "/v1/tubes/ls/tasks?payloads=1")
        self.assertEqual(out["tasks"][0]["payload"], "0")
        st = s.ok("GET", "/v1/stats")
        self.assertEqual(st["role"], "leader")
        self.assertEqual(st["tubes"]["ls"]["ready"], 3)
        _, cli = s.cli("stats")
        self.assertEqual(cli["tubes"]["ls"]["ready"], 3)
        self.assertEqual(s.ok("GET", "/v1/tubes/ls/stats")["tubes"]["ls"]
                         ["ready"], 3)
        self.assertIn("hours", s.ok("GET", "/v1/tubes/ls/hourly"))
        self.assertIn("hours", s.ok("GET", "/v1/hourly"))
        until = s.ok("POST", "/v1/tubes/ls/pause?for=1h")["paused_until"]
        self.assertGreater(until, 0)
        self.assertEqual(take(s, "ls", "?wait=0"), [])
        s.ok("POST", "/v1/tubes/ls/pause?for=0")
        self.assertEqual(len(take(s, "ls", "?wait=0")), 1)
        conf = s.ok("PUT", "/v1/tubes/ls?ttr=7s&max_attempts=3"
                    "&dead_letter=ls-dead")
        self.assertEqual((conf["ttr_ms"], conf["max_attempts"],
                          conf["dead_letter"]), (7000, 3, "ls-dead"))
        self.assertEqual(s.ok("GET", "/v1/tubes/ls")["own"],
                         ["ttr", "max_attempts", "dead_letter"])
        conf = s.ok("PUT", "/v1/tubes/ls?unset=ttr,dead_letter")
        self.assertEqual(conf["own"], ["max_attempts"])
        status, _, out = s.call("DELETE", "/v1/tubes/ls")
        self.assertEqual((status, out["error"]), (409, "not_empty"))
        self.assertEqual(s.ok("DELETE", "/v1/tubes/ls?force=1"),
                         {"deleted": 3})
        self.assertGreater(s.ok("POST", "/v1/snapshot")["lsn"], 0)

    def test_list_pages_through_every_task_once(self):
        s = self.s
        want = []
        for b in range(25):  # 2,500 tasks, in batches of 100
            out = s.ok("POST", "/v1/tubes/pages/tasks?batch=1",
                       [{"payload": str(b * 100 + i)} for i in range(100)])
            want += [r["id"] for r in out["results"]]
        self.assertEqual(len(set(want)), 2500)
        seen, after, pages = [], 0, 0
        while pages < 20:  # 9 pages of at most 300
            out = s.ok("GET", "/v1/tubes/pages/tasks?limit=300&after=%d" %
                       after)
            pages += 1
            ids = [t["id"] for t in out["tasks"]]
            self.assertEqual(ids, sorted(ids))
            self.assertTrue(all(i > after for i in ids))
            seen += ids
            if out["next"] is None:
                break
            self.assertEqual((len(ids), out["next"]), (300, ids[-1]))
            after = out["next"]
        self.assertEqual((pages, seen), (9, sorted(want)))
        # a full last page says "next"; the page after it is empty
        out = s.ok("GET", "/v1/tubes/pages/tasks?order=id&limit=500"
                   "&state=ready&after=%d" % seen[-501])
        self.assertEqual(([t["id"] for t in out["tasks"]], out["next"]),
                         (seen[-500:], seen[-1]))
        out = s.ok("GET", "/v1/tubes/pages/tasks?after=%d" % seen[-1])
        self.assertEqual(out, {"tasks": [], "next": None})
        # the other orders have no cursor and say no "next"
        self.assertNotIn("next", s.ok("GET", "/v1/tubes/pages/tasks"))
        status, _, out = s.call("GET", "/v1/tubes/pages/tasks?after=1"
                                "&order=age")
        self.assertEqual((status, out["error"]), (400, "invalid"))
        self.assertIn("order=id", out["message"])
        status, _, out = s.call("GET", "/v1/tubes/pages/tasks?after=x")
        self.assertEqual((status, out["error"]), (400, "invalid"))
        s.ok("DELETE", "/v1/tubes/pages/tasks?all=1")

    def test_error_paths(self):
        s = self.s
        cases = [
            ("POST", "/v1/tubes/bad%20tube/tasks", "x", 400, "bad_tube"),
            ("GET", "/v1/tasks/987654", None, 404, "not_found"),
            ("GET", "/v1/tasks/abc", None, 400, "invalid"),
            ("GET", "/v1/keys/nobody?tube=t", None, 404, "not_found"),
            ("GET", "/v1/keys/nobody", None, 400, "invalid"),
            ("POST", "/v1/tubes/e/tasks", "y" * 1001, 413,
             "payload_too_large"),
            ("POST", "/v1/tubes/e/tasks?priority=-1", "x", 400, "invalid"),
            ("POST", "/v1/tubes/e/tasks?delay=soon", "x", 400, "invalid"),
            ("POST", "/v1/tasks/1/ack", None, 400, "invalid"),
            ("GET", "/v1/nothing", None, 404, "not_found"),
            ("PATCH", "/v1/stats", None, 405, None),
            ("POST", "/v1/tubes/e/pause", None, 400, "invalid"),
            ("GET", "/v1/tubes/e/tasks?after=5&order=age", None, 400,
             "invalid"),
            ("GET", "/v1/tubes/e/tasks?state=done", None, 400, "invalid"),
            ("POST", "/v1/tubes/e/take?n=0", None, 400, "invalid"),
            ("POST", "/v1/tubes/e/take?order=random", None, 400, "invalid"),
            ("POST", "/v1/tubes/e/tasks?batch=1", "[]", 400, "invalid"),
            ("POST", "/v1/tasks/ack", "[{\"id\":1}]", 400, "invalid"),
            ("PUT", "/v1/tubes/e?lost_lease=never", None, 400, "invalid"),
        ]
        for method, path, body, want, name in cases:
            status, _, out = s.call(method, path, body)
            self.assertEqual(status, want, (method, path, out))
            if name is not None:
                self.assertEqual(out["error"], name, (method, path))
                self.assertIsInstance(out["code"], int)
                self.assertTrue(out["message"])
        tid = put(s, "e", "x")
        [t] = take(s, "e")
        status, _, out = s.call("POST", "/v1/tasks/%d/ack?lease=%d" %
                                (tid, t["lease"] + 1000))
        self.assertEqual((status, out["error"], out["code"]),
                         (409, "stale_lease", 2))
        self.assertEqual(self.state(tid), "taken")
        # keys are per tube: a replace of a key another tube holds puts a
        # task of its own, and says nothing of the other
        status, _, first = s.call("POST", "/v1/tubes/e/tasks?key=k-e", "x")
        status, _, out = s.call("POST", "/v1/tubes/e2/tasks?key=k-e"
                                "&replace=1", "x")
        self.assertEqual(status, 201, out)
        self.assertNotEqual(out["id"], first["id"])
        tube = "a%2Fb:c"  # a / in a tube name, escaped in the path
        tid = put(s, tube, "slash")
        self.assertEqual(s.ok("GET", "/v1/tasks/%d" % tid)["tube"], "a/b:c")

    def test_cross_site_writes_are_refused(self):
        s = self.s
        host = "127.0.0.1:%d" % s.http
        for headers in ({"Origin": "http://evil.example"},
                        {"Origin": "null"},
                        {"Sec-Fetch-Site": "cross-site"}):
            status, _, out = s.call("POST", "/v1/tubes/cs/tasks", "x",
                                    headers)
            self.assertEqual(status, 403, headers)
            self.assertIn("cross-site", out["message"])
        self.assertEqual(s.ok("GET", "/v1/stats")["totals"]["ready"] >= 0,
                         True)
        rc, st = s.cli("stats")
        self.assertNotIn("cs", st["tubes"])
        # the server's own page may write
        put(s, "cs", "x", "")
        s.ok("POST", "/v1/tubes/cs/tasks", "y", want=201,
             headers={"Origin": "http://" + host,
                      "Sec-Fetch-Site": "same-origin"})
        # a cross-site GET reads nothing the browser lets the page see
        s.ok("GET", "/v1/stats", headers={"Origin": "http://evil.example"})

    def test_chunked_bodies_from_http_client(self):
        """http.client sends a generator's body chunked: it is stored
        whole, and the keep-alive connection serves the next request; over
        --max-payload it is refused before the rest is read."""
        s = self.s
        parts = [b"ab", b"c" * 300, b"\x00\xff" * 250]
        c = http.client.HTTPConnection("127.0.0.1", s.http, timeout=10)
        c.request("POST", "/v1/tubes/chunked/tasks", body=iter(parts))
        r = c.getresponse()
        out = json.loads(r.read())
        self.assertEqual(r.status, 201, out)
        c.request("GET", "/v1/tasks/%d" % out["id"])
        r = c.getresponse()
        t = json.loads(r.read())
        self.assertEqual(r.status, 200)
        self.assertEqual(t["size"], sum(len(p) for p in parts))
        self.assertEqual(t["payload_base64"], base64.b64encode(
            b"".join(parts)).decode())
        c.request("POST", "/v1/tubes/chunked/tasks",
                  body=iter([b"x" * 600, b"y" * 600]))
        r = c.getresponse()
        out = json.loads(r.read())
        self.assertEqual((r.status, out["error"]),
                         (413, "payload_too_large"))
        self.assertEqual(r.getheader("Connection"), "close")
        c.close()


class ReadOnlyTest(unittest.TestCase):
    """Without --http-admin, only the workers' and producers' routes."""

    def test_admin_writes_need_http_admin(self):
        s = Server()
        try:
            tid = put(s, "ro", "x")
            for method, path in (("POST", "/v1/tasks/%d/kick" % tid),
                                 ("DELETE", "/v1/tasks/%d" % tid),
                                 ("POST", "/v1/tasks/%d/update?run_at=now"
                                  % tid),
                                 ("POST", "/v1/tubes/ro/pause?for=1s"),
                                 ("PUT", "/v1/tubes/ro?ttr=1s"),
                                 ("DELETE", "/v1/tubes/ro/tasks?all=1"),
                                 ("POST", "/v1/snapshot")):
                status, _, out = s.call(method, path)
                self.assertEqual((status, out["error"]), (403, "not_allowed"),
                                 path)
                self.assertIn("--http-admin", out["message"])
            [t] = take(s, "ro")
            status, _, _ = s.call("POST", "/v1/tasks/%d/release?force=1"
                                  % tid)
            self.assertEqual(status, 403)
            s.ok("POST", "/v1/tasks/%d/ack?lease=%d" % (tid, t["lease"]))
            rc, _ = s.cli("peek", str(tid))
            self.assertNotEqual(rc, 0)
        finally:
            s.stop()


class AuthTest(unittest.TestCase):
    """--auth: every /v1 request carries a bearer token, checked by its
    operation's role."""

    def test_bearer_and_roles(self):
        d = tempfile.mkdtemp(prefix="sluice-httpapi-auth-")
        tokens = {"adm": ("admin", "*"), "wrk": ("worker", "jobs*"),
                  "mon": ("monitor", "*")}
        path = os.path.join(d, "tokens")
        with open(path, "w") as f:
            for name, (role, tubes) in tokens.items():
                f.write("%s %s %s %s\n" % (
                    name, role, tubes,
                    hashlib.sha256(("secret-" + name).encode()).hexdigest()))
        s = Server("--auth", path, "--http-admin")
        try:
            def bearer(name):
                return {"Authorization": "Bearer secret-" + name}
            status, hdrs, out = s.call("POST", "/v1/tubes/jobs/tasks", "x")
            self.assertEqual((status, out["error"]), (401, "unauthenticated"))
            self.assertEqual(hdrs["WWW-Authenticate"], "Bearer")
            status, _, out = s.call("GET", "/v1/stats",
                                    headers=bearer("nobody"))
            self.assertEqual(status, 401)
            tid = s.ok("POST", "/v1/tubes/jobs/tasks", "x", want=201,
                       headers=bearer("wrk"))["id"]
            for method, p, who in (("POST", "/v1/tubes/other/tasks", "wrk"),
                                   ("POST", "/v1/tasks/%d/kick" % tid, "wrk"),
                                   ("DELETE", "/v1/tasks/%d" % tid, "wrk"),
                                   ("POST", "/v1/tubes/jobs/take", "mon")):
                status, _, out = s.call(method, p, "x", bearer(who))
                self.assertEqual((status, out["error"]), (403, "not_allowed"),
                                 (method, p, who))
            s.ok("GET", "/v1/stats", headers=bearer("mon"))
            [t] = s.ok("POST", "/v1/tubes/jobs/take",
                       headers=bearer("wrk"))["tasks"]
            s.ok("POST", "/v1/tasks/%d/ack?lease=%d" % (tid, t["lease"]),
                 headers=bearer("wrk"))
            s.ok("POST", "/v1/tubes/jobs/pause?for=1s",
                 headers=bearer("adm"))
            # the description holds no data: open, as /health
            self.assertEqual(s.ok("GET", "/v1/openapi.json")["openapi"],
                             "3.0.3")
        finally:
            s.stop()
            shutil.rmtree(d, ignore_errors=True)


class FollowerTest(unittest.TestCase):
    def test_follower_answers_421_with_the_leader(self):
        repl = free_port()
        leader = Server("--repl-listen", "tcp://127.0.0.1:%d" % repl)
        try:
            follower = Server("--follow", "tcp://127.0.0.1:%d" % repl)
            try:
                # once it knows its leader (bounded wait)
                deadline = time.monotonic() + 15
                while follower.ok("GET", "/v1/stats")["leader"] is None:
                    self.assertLess(time.monotonic(), deadline)
                    time.sleep(0.05)
                status, _, out = follower.call("POST", "/v1/tubes/f/tasks",
                                               "x")
                self.assertEqual((status, out["error"]), (421, "not_leader"))
                self.assertEqual(out["leader"], leader.url)
                self.assertEqual(follower.ok("GET", "/v1/stats")["role"],
                                 "follower")
            finally:
                follower.stop()
        finally:
            leader.stop()


class LogRefusesTest(unittest.TestCase):
    def test_503_with_retry_after_when_the_log_fails(self):
        # sluiced-fault: the log's second write fails, and stays failed
        s = Server(prog="sluiced-fault",
                   env={"SLUICE_FAULT": "wal_write:2:EIO:sticky"})
        try:
            deadline = time.monotonic() + 15
            while True:  # the first writes may still succeed
                status, hdrs, out = s.call("POST", "/v1/tubes/lf/tasks", "x")
                if status != 201 or time.monotonic() > deadline:
                    break
            self.assertEqual(status, 503, out)
            self.assertEqual(out["error"], "log_failed")
            self.assertEqual(hdrs["Retry-After"], "1")
            # reads still answer
            self.assertEqual(s.ok("GET", "/v1/stats")["role"], "leader")
        finally:
            s.stop(want=1)  # after a log error, sluiced exits 1


class DrainTest(unittest.TestCase):
    """A worker written with the standard library only: 8 threads drain
    10,000 tasks, each acked exactly once."""

    N = 10000

    def test_eight_threads_drain_exactly_once(self):
        s = Server()
        try:
            for i in range(0, self.N, 1000):
                out = s.ok("POST", "/v1/tubes/drain/tasks?batch=1",
                           [{"payload": str(j)}
                            for j in range(i, i + 1000)])["results"]
                self.assertTrue(all(r.get("created") for r in out))
            acked = {}
            lock = threading.Lock()
            errors = []

            def worker():
                try:
                    deadline = time.monotonic() + 240
                    while time.monotonic() < deadline:
                        tasks = s.ok("POST",
                                     "/v1/tubes/drain/take?n=20&wait=200ms")
                        tasks = tasks["tasks"]
                        if not tasks:
                            return
                        for t in tasks:
                            s.ok("POST", "/v1/tasks/%d/ack?lease=%d" %
                                 (t["id"], t["lease"]))
                            with lock:
                                acked[t["payload"]] = \
                                    acked.get(t["payload"], 0) + 1
                except Exception as e:  # reported below
                    errors.append(e)

            threads = [threading.Thread(target=worker) for _ in range(8)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(300)
            self.assertEqual(errors, [])
            self.assertEqual(len(acked), self.N)
            self.assertEqual(set(acked.values()), {1})
            rc, st = s.cli("stats")
            t = st["tubes"].get("drain", {"ready": 0, "taken": 0})
            self.assertEqual((t["ready"], t["taken"]), (0, 0))
        finally:
            s.stop()


class OpenApiTest(unittest.TestCase):
    def test_openapi_validates(self):
        node = shutil.which("node")
        if node is None or not os.path.isdir(
                os.path.join(VALIDATOR, "node_modules")):
            self.skipTest("the OpenAPI validator is not installed "
                          "(make test-deps)")
        s = Server()
        try:
            doc = s.ok("GET", "/v1/openapi.json")
            self.assertTrue(doc["openapi"].startswith("3.0"))
            with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
                json.dump(doc, f)
                f.flush()
                out = subprocess.run(
                    [node, os.path.join(VALIDATOR, "validate.js"), f.name],
                    capture_output=True, timeout=60)
            self.assertEqual(out.returncode, 0,
                             out.stdout.decode() + out.stderr.decode())
            # every route the API serves is described
            paths = doc["paths"]
            for p in ("/v1/tubes/{tube}/tasks", "/v1/tubes/{tubes}/take",
                      "/v1/tasks/{id}/ack", "/v1/tasks/{id}", "/v1/stats",
                      "/v1/keys/{key}", "/v1/tubes/{tube}", "/v1/history",
                      "/v1/tubes/{tube}/release",
                      "/v1/tubes/{tube}/groups", "/v1/schedules",
                      "/v1/schedules/{name}", "/v1/batches",
                      "/v1/batches/{name}", "/v1/batches/{name}/close"):
                self.assertIn(p, paths)
        finally:
            s.stop()


if __name__ == "__main__":
    if len(sys.argv) < 3 or not os.access(sys.argv[1], os.X_OK):
        print("usage: test_httpapi.py SLUICED SLUICE")
        sys.exit(77)
    SLUICED, SLUICE = sys.argv[1], sys.argv[2]
    del sys.argv[1:3]
    unittest.main(verbosity=2)
