"""Tests of src/python/sluice.py, the client written from docs/protocol.md
alone, against a real sluiced on 127.0.0.1: the SP-over-TCP framing, put,
take, ack, release, fail, touch, bury, peek, errors, and session versus
detached leases. Every wait is bounded.

Run by ctest (python_client): test_sluice.py SLUICED_PATH. Exits 77
(skipped) without a sluiced to run.
"""

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "python"))

import sluice  # noqa: E402

SLUICED = None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A sluiced of its own, in a temporary directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sluice-py-")
        self.port = free_port()
        self.url = "tcp://127.0.0.1:%d" % self.port
        self.log = open(os.path.join(self.dir, "sluiced.log"), "wb")
        self.proc = subprocess.Popen(
            [SLUICED, "--data", os.path.join(self.dir, "data"),
             "--listen", self.url],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            try:
                sluice.Client(self.url, timeout=2).close()
                return
            except sluice.SluiceError:
                if self.proc.poll() is not None or \
                        time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("sluiced did not start")
                time.sleep(0.02)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_for(pred, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.srv = Server()
        self.c = sluice.Client(self.srv.url, timeout=10)

    def tearDown(self):
        self.c.close()
        self.srv.stop()

    def client(self):
        c = sluice.Client(self.srv.url, timeout=10)
        self.addCleanup(c.close)
        return c

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

    def test_put_take_ack(self):
        tid, created = self.c.put("emails", b"send welcome")
        self.assertTrue(created)
        [t] = self.c.take("emails", wait_ms=1000)
        self.assertEqual(t.id, tid)
        self.assertEqual(t.payload, b"send welcome")
        self.assertEqual(t.tube, "emails")
        self.assertEqual(t.state, 3)
        self.assertEqual(t.attempts, 1)
        self.assertGreater(t.lease, 0)
        self.assertGreater(t.deadline, t.taken_at)
        a = self.c.ack(t.id, t.lease)
        self.assertEqual(a.state, 0)
        self.assertFalse(a.replaced)
        with self.assertRaises(sluice.SluiceError) as e:
            self.c.peek(tid)
        self.assertEqual(e.exception.name, "ENOTFOUND")
        # nothing left: an empty list once the wait is over
        t0 = time.monotonic()
        self.assertEqual(self.c.take("emails", wait_ms=200), [])
        self.assertGreaterEqual(time.monotonic() - t0, 0.15)

    def test_keys_priority_and_several_tubes(self):
        a, created = self.c.put("k", "a", key="order-1")
        b, created2 = self.c.put("k", "again", key="order-1")
        self.assertEqual((b, created2), (a, False))
        self.assertEqual(self.c.peek_key("order-1", "k").id, a)
        # keys are per tube: the same key in another tube is another task
        c, created3 = self.c.put("k2", "b", key="order-1")
        self.assertTrue(created3)
        self.assertNotEqual(c, a)
        self.assertEqual(self.c.peek_key("order-1", "k2").id, c)
        with self.assertRaises(sluice.SluiceError) as e:
            self.c.peek_key("order-1")
        self.assertEqual(e.exception.name, "ENOTFOUND")
        low, _ = self.c.put("low", "l", priority=500)
        high, _ = self.c.put("high", "h", priority=0)
        got = self.c.take(["low", "high"], max=2)
        self.assertEqual([t.id for t in got], [high, low])
        for t in got:
            self.c.release(t.id, t.lease)
        got = self.c.take(["low", "high"], max=2, strict_order=True)
        self.assertEqual([t.id for t in got], [low, high])

    def test_release_fail_touch_bury(self):
        tid, _ = self.c.put("w", b"\x00\xffbinary")
        [t] = self.c.take("w")
        self.assertEqual(t.payload, b"\x00\xffbinary")
        a = self.c.release(t.id, t.lease, delay_ms=60000, priority=7)
        self.assertEqual(a.state, 2)
        self.assertGreater(a.run_at, 0)
        p = self.c.peek(tid)
        self.assertEqual((p.state, p.priority), (2, 7))
        self.assertEqual(self.c.take("w"), [])

        tid, _ = self.c.put("w2", "x", max_attempts=2)
        [t] = self.c.take("w2")
        a = self.c.fail(t.id, t.lease, "disk full", delay_ms=0)
        self.assertEqual(a.state, 1)
        [t] = self.c.take("w2")
        self.assertEqual(t.last_error, "disk full")
        self.assertEqual(t.attempts, 2)
        before = t.deadline
        time.sleep(0.01)
        a = self.c.touch(t.id, t.lease)
        self.assertEqual(a.state, 3)
        self.assertGreaterEqual(a.deadline, before)
        a = self.c.fail(t.id, t.lease, "again")
        self.assertEqual(a.state, 4)  # buried at max_attempts

        tid, _ = self.c.put("w3", "y")
        [t] = self.c.take("w3")
        self.assertEqual(self.c.bury(t.id, t.lease).state, 4)

    def test_errors(self):
        tid, _ = self.c.put("e", "x")
        with self.assertRaises(sluice.SluiceError) as e:
            self.c.put("bad tube", "x")
        self.assertEqual(e.exception.code, sluice.ETUBE)
        # not taken: ESTATE, naming its state, with or without a lease
        with self.assertRaises(sluice.SluiceError) as e:
            self.c.ack(tid, 1)
        self.assertEqual(e.exception.name, "ESTATE")
        self.assertIn("the task is ready, not taken", e.exception.message)
        [t] = self.c.take("e")
        other = self.client()
        with self.assertRaises(sluice.SluiceError) as e:
            other.ack(tid, 0, force=False)
        self.assertEqual(e.exception.name, "ESTALE")
        self.assertIn("a lease is required", e.exception.message)
        with self.assertRaises(sluice.SluiceError) as e:
            other.ack(tid, t.lease + 1)
        self.assertEqual(e.exception.name, "ESTALE")
        # the operator's override
        self.assertEqual(other.release(tid, None, force=True).state, 1)
        with self.assertRaises(sluice.SluiceError) as e:
            self.c.peek(10 ** 12)
        self.assertEqual(e.exception.name, "ENOTFOUND")

    def test_session_lease_ends_with_the_connection(self):
        tid, _ = self.c.put("s", "x")
        worker = sluice.Client(self.srv.url, timeout=10)
        [t] = worker.take("s")
        self.assertFalse(t.detached)
        self.assertEqual(self.c.peek(tid).state, 3)
        worker.close()
        self.assertTrue(wait_for(lambda: self.c.peek(tid).state == 1))
        self.assertEqual(self.c.peek(tid).attempts, 1)

    def test_detached_lease_outlives_the_connection(self):
        tid, _ = self.c.put("d", "x")
        worker = sluice.Client(self.srv.url, timeout=10)
        [t] = worker.take("d", detach=True)
        self.assertTrue(t.detached)
        worker.close()
        time.sleep(0.2)
        self.assertEqual(self.c.peek(tid).state, 3)
        later = self.client()
        self.assertEqual(later.ack(t.id, t.lease).state, 0)

    def test_replace_of_a_taken_task(self):
        tid, _ = self.c.put("r", "v1", key="k")
        [t] = self.c.take("r")
        self.c.put("r", "v2", key="k", replace=True, priority=3)
        p = self.c.peek(tid)
        self.assertEqual(p.payload, b"v1")
        self.assertEqual(p.pending["payload"], b"v2")
        self.assertEqual(p.pending["priority"], 3)
        a = self.c.ack(t.id, t.lease)
        self.assertTrue(a.replaced)
        self.assertEqual(a.state, 1)
        self.assertEqual(self.c.peek(tid).payload, b"v2")


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        print("usage: test_sluice.py SLUICED (skipped)", file=sys.stderr)
        sys.exit(77)
    SLUICED = sys.argv.pop(1)
    unittest.main(verbosity=2)
