"""The Python client against peers that misbehave, and servers it must
refuse or that refuse it: a connection closed in the middle of a reply, a
port answering garbage (HTTP, random bytes, a frame that does not
decode), an oversized reply, a silent peer, a wrong token, TLS on one
side only or with the wrong CA. Each gives a clear exception of its class
within the client's timeout, never a hang or a silent success. Also: a
follower named first is followed to the leader, a lost connection
retries what is safe and only that, and a change sent again and refused
is ConnectionLost (its outcome unknown), not the refusal.

Run by ctest (python_badinput): test_badinput.py SLUICED SLUICE_CLI.
"""

import os
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time
import unittest

import harness
from harness import Server, free_port, main, sluice, wait_for

GREETING = b"\x00SP\x00\x00\x31\x00\x00"


class FakeServer:
    """A listener on 127.0.0.1 whose connections are served by
    serve(conn), each in a thread; closed at the end of the test."""

    def __init__(self, serve):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = "tcp://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.serve = serve
        self.conns = []
        self.requests = 0
        self.dropped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._one, args=(conn,),
                             daemon=True).start()

    def _one(self, conn):
        try:
            conn.settimeout(20)
            self.serve(self, conn)
        except (OSError, struct.error):  # the client went away
            pass

    def read_request(self, conn):
        """Reads the greeting (once) or a request; returns its id."""
        (n,) = struct.unpack(">Q", conn.recv(8, socket.MSG_WAITALL))
        body = conn.recv(n, socket.MSG_WAITALL)
        self.requests += 1
        return body[:4]

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def greet(conn):
    assert conn.recv(8, socket.MSG_WAITALL)[:4] == b"\x00SP\x00"
    conn.sendall(GREETING)


# Peers that misbehave, each serving one connection.

def cut_mid_reply(f, conn):
    greet(conn)
    rid = f.read_request(conn)
    conn.sendall(struct.pack(">Q", 40) + rid + b"\x53\x01")
    conn.close()


def drop_then_refuse(status, text):
    """A peer whose first connection takes a request and closes without
    answering, and whose next ones refuse every request with status (the
    leader gone, its election not over: the first sending may have been
    committed)."""
    def serve(f, conn):
        greet(conn)
        first = not f.dropped
        f.dropped = True
        while True:
            (n,) = struct.unpack(">Q", conn.recv(8, socket.MSG_WAITALL))
            body = conn.recv(n, socket.MSG_WAITALL)
            f.requests += 1
            if first:
                conn.close()
                return
            err = (b"\x53\x01" + body[6:7] + b"\x00"
                   + struct.pack("<HH", status, len(text)) + text
                   + b"\x00\x00")
            conn.sendall(struct.pack(">Q", 4 + len(err)) + body[:4] + err)
    return serve


def huge_reply(f, conn):
    greet(conn)
    rid = f.read_request(conn)
    conn.sendall(struct.pack(">Q", 1 << 40) + rid)
    time.sleep(5)


def http_greeting(f, conn):
    conn.recv(8)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")


def no_reply(f, conn):
    greet(conn)
    f.read_request(conn)
    time.sleep(10)


class BadPeers(unittest.TestCase):
    TIMEOUT = 2.0

    def fake(self, serve):
        f = FakeServer(serve)
        self.addCleanup(f.close)
        return f

    def client(self, url, **kw):
        kw.setdefault("timeout", self.TIMEOUT)
        kw.setdefault("connect_timeout", 1.0)
        c = sluice.Client(url, **kw)
        self.addCleanup(c.close)
        return c

    def malformed(self, serve, **kw):
        """The Malformed a stats gets at once from a fake server."""
        return self.bounded(sluice.Malformed, self.client(
            self.fake(serve).url, **kw).stats, within=0.5)

    def bounded(self, exc, fn, *args, within=None, **kw):
        """fn raises exc within the timeout (plus a margin)."""
        t0 = time.monotonic()
        with self.assertRaises(exc) as e:
            fn(*args, **kw)
        took = time.monotonic() - t0
        self.assertLess(took, (within or self.TIMEOUT) + 1.5, str(e.exception))
        return e.exception

    def test_closed_in_the_middle_of_a_reply(self):
        f = self.fake(cut_mid_reply)
        e = self.bounded(sluice.ConnectionLost, self.client(f.url).put, "t",
                         "x")
        self.assertIn("in the middle of a reply", e.message)
        self.assertIn("may have been executed: not sent again", e.message)
        self.assertEqual(f.requests, 1)  # a put without a key: once
        # a read is safe: tried again until the deadline, then the error
        e = self.bounded(sluice.ConnectionLost, self.client(f.url).peek, 1)
        self.assertGreater(f.requests, 2)

    def test_a_resend_refused_leaves_a_change_unknown(self):
        # A keyed put is sent again after the lost connection; refused
        # then (not leader until the deadline, or the log full), it may
        # still have been done the first time: ConnectionLost naming the
        # refusal, not the refusal, which would say nothing was done.
        for status, text, cls in (
                (17, b"not leader", sluice.NotLeader),
                (13, b"the log is full", sluice.LogFull)):
            f = self.fake(drop_then_refuse(status, text))
            e = self.bounded(sluice.ConnectionLost, self.client(
                f.url, timeout=1.0).put, "t", "x", key="order-1")
            self.assertIn("put sent again", e.message)
            self.assertIn(text.decode(), e.message)
            self.assertIn("may or may not have been done", e.message)
            self.assertIsInstance(e.__cause__, cls)
            self.assertGreaterEqual(f.requests, 2)
            # a read refused the second time: its refusal stands
            f = self.fake(drop_then_refuse(status, text))
            self.bounded(cls, self.client(f.url, timeout=1.0).stats)
            self.assertGreaterEqual(f.requests, 2)
        # the asyncio client shares the rule
        e = AsyncBadPeers.run_async(self, sluice.ConnectionLost,
                                    drop_then_refuse(17, b"not leader"),
                                    "cancel", 5)
        self.assertIn("cancel sent again", e.message)

    def test_garbage_instead_of_a_greeting(self):
        e = self.malformed(http_greeting)
        self.assertIn("speaks HTTP", e.message)

        def noise(f, conn):
            conn.sendall(bytes(range(1, 65)))
        e = self.malformed(noise)
        self.assertIn("does not speak the sluice protocol", e.message)

    def test_garbage_reply(self):
        def serve(f, conn):
            greet(conn)
            while True:
                rid = f.read_request(conn)
                junk = b"\x53\x01\x11\x00\x00\x00" + b"\x07" * 9
                conn.sendall(struct.pack(">Q", 4 + len(junk)) + rid + junk)
        e = self.malformed(serve)
        self.assertIn("reply", e.message)

        def wrong_op(f, conn):
            greet(conn)
            rid = f.read_request(conn)
            conn.sendall(struct.pack(">Q", 10) + rid + b"\x53\x01\x01\x00\x00"
                         b"\x00")
        e = self.malformed(wrong_op)
        self.assertIn("a reply to op 0x01 for stats", e.message)

    def test_oversized_reply(self):
        e = self.malformed(huge_reply, max_reply=1 << 20)
        self.assertIn("over this client's limit", e.message)

    def test_silent_peers(self):
        def mute(f, conn):
            time.sleep(10)
        e = self.bounded(sluice.SluiceError, self.client(
            self.fake(mute).url).stats)
        self.assertIn("no sluice greeting", str(e))

        e = self.bounded(sluice.TimedOut, self.client(
            self.fake(no_reply).url).put, "t", "x")
        self.assertIn("its outcome is unknown", e.message)

    def test_a_late_reply_is_skipped(self):
        def serve(f, conn):
            greet(conn)
            rid = f.read_request(conn)
            late = struct.pack(">I", struct.unpack(">I", rid)[0] - 1)
            ok = b"\x53\x01\x15\x00\x00\x00" + struct.pack("<Q", 77)
            for r in (late, rid):
                conn.sendall(struct.pack(">Q", 4 + len(ok)) + r + ok)
            time.sleep(1)
        self.assertEqual(self.client(self.fake(serve).url).snapshot(), 77)

    def test_an_older_server_says_so(self):
        def serve(f, conn):
            greet(conn)
            rid = f.read_request(conn)
            text = b"unknown op 0x24"
            err = (b"\x53\x01\x24\x00" + struct.pack("<HH", 12, len(text))
                   + text + b"\x00\x00")
            conn.sendall(struct.pack(">Q", 4 + len(err)) + rid + err)
            time.sleep(1)
        with self.assertRaises(sluice.UnknownOperation) as e:
            self.client(self.fake(serve).url).history()
        self.assertIn("does not have the operation history (0x24): it is "
                      "older than this client", e.exception.message)

    def test_nothing_listening(self):
        e = self.bounded(sluice.ConnectionLost, self.client(
            "tcp://127.0.0.1:%d" % free_port()).stats)
        self.assertIn("cannot connect", e.message)
        with self.assertRaises(sluice.Invalid):
            sluice.Client("http://127.0.0.1:7711")


class AsyncBadPeers(unittest.TestCase):
    """The asyncio client against the same peers."""

    TIMEOUT = BadPeers.TIMEOUT
    fake = BadPeers.fake

    def run_async(self, exc, serve, op, *args, **kw):
        import asyncio
        url = self.fake(serve).url

        async def go():
            async with sluice.AsyncClient(url, timeout=self.TIMEOUT,
                                          connect_timeout=1.0, **kw) as c:
                return await getattr(c, op)(*args)
        t0 = time.monotonic()
        with self.assertRaises(exc) as e:
            asyncio.run(go())
        self.assertLess(time.monotonic() - t0, self.TIMEOUT + 1.5)
        return e.exception

    def test_async_bad_peers(self):
        e = self.run_async(sluice.ConnectionLost, cut_mid_reply, "put", "t",
                           "x")
        self.assertIn("in the middle of a reply", e.message)
        e = self.run_async(sluice.Malformed, huge_reply, "stats",
                           max_reply=1 << 20)
        self.assertIn("over this client's limit", e.message)
        e = self.run_async(sluice.Malformed, http_greeting, "stats")
        self.assertIn("speaks HTTP", e.message)
        e = self.run_async(sluice.TimedOut, no_reply, "put", "t", "x")
        self.assertIn("its outcome is unknown", e.message)


class Tokens(unittest.TestCase):
    def test_wrong_token_and_roles(self):
        srv = Server(tokens={"ops": ("admin", "*", "s3cret"),
                             "mailer": ("producer", "emails*", "m41l")})
        self.addCleanup(srv.stop)
        for token in (None, "wrong"):
            c = srv.client(token=token, timeout=3)
            self.addCleanup(c.close)
            t0 = time.monotonic()
            with self.assertRaises(sluice.Unauthenticated) as e:
                c.put("emails", "x")
            self.assertLess(time.monotonic() - t0, 4)
            self.assertIn("unauthenticated", e.exception.message)
        producer = srv.client(token="m41l")
        self.addCleanup(producer.close)
        tid = producer.put("emails", "x").id
        with self.assertRaises(sluice.NotAllowed):
            producer.put("billing", "x")
        with self.assertRaises(sluice.NotAllowed):
            producer.take("emails")
        admin = srv.client(token="s3cret")
        self.addCleanup(admin.close)
        self.assertEqual(admin.peek(tid).tube, "emails")
        # the token goes again on a new connection
        admin.close()
        self.assertEqual(admin.stats().tubes["emails"].ready, 1)


class Tls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("openssl"):
            raise AssertionError("no openssl to make certificates (make "
                                 "test installs it)")
        cls.dir = tempfile.mkdtemp(prefix="sluice-py-tls-")
        for cmd in (
                "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key "
                "-out ca.crt -days 2 -subj /CN=sluice-test-ca",
                "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca2.key "
                "-out ca2.crt -days 2 -subj /CN=another-ca",
                "openssl req -newkey rsa:2048 -nodes -keyout srv.key "
                "-out srv.csr -subj /CN=127.0.0.1",
                "printf 'subjectAltName=IP:127.0.0.1,DNS:127.0.0.1\\n' >san",
                "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key "
                "-CAcreateserial -out srv.crt -days 2 -extfile san"):
            subprocess.run(cmd, shell=True, cwd=cls.dir, check=True,
                           capture_output=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def ctx(self, ca):
        return ssl.create_default_context(cafile=os.path.join(self.dir, ca))

    def test_tls_and_its_mismatches(self):
        srv = Server(tls=(os.path.join(self.dir, "srv.crt"),
                          os.path.join(self.dir, "srv.key")))
        self.addCleanup(srv.stop)
        good = srv.client(ssl_context=self.ctx("ca.crt"), timeout=3)
        self.addCleanup(good.close)
        tid = good.put("tls", "over TLS").id
        self.assertEqual(good.peek(tid).payload, b"over TLS")
        # a CA that did not sign the server's certificate
        bad = srv.client(ssl_context=self.ctx("ca2.crt"), timeout=3)
        self.addCleanup(bad.close)
        t0 = time.monotonic()
        with self.assertRaises(sluice.ConnectionLost) as e:
            bad.stats()
        self.assertIn("TLS handshake failed", e.exception.message)
        self.assertIn("CERTIFICATE_VERIFY_FAILED", e.exception.message)
        self.assertLess(time.monotonic() - t0, 4)
        # a plain client on the TLS port
        plain = sluice.Client(srv.url.replace("tls+tcp", "tcp"), timeout=3)
        self.addCleanup(plain.close)
        t0 = time.monotonic()
        with self.assertRaises(sluice.SluiceError) as e:
            plain.stats()
        self.assertLess(time.monotonic() - t0, 4)
        self.assertIsInstance(e.exception, (sluice.Malformed,
                                            sluice.ConnectionLost))
        # a TLS client on a plain port
        srv2 = Server()
        self.addCleanup(srv2.stop)
        tls = sluice.Client(srv2.url.replace("tcp", "tls+tcp"), timeout=3,
                            ssl_context=self.ctx("ca.crt"))
        self.addCleanup(tls.close)
        t0 = time.monotonic()
        with self.assertRaises(sluice.ConnectionLost) as e:
            tls.stats()
        self.assertIn("TLS handshake failed", e.exception.message)
        self.assertLess(time.monotonic() - t0, 4)


class Followers(unittest.TestCase):
    def test_a_follower_named_first_sends_writes_to_the_leader(self):
        repl = "tcp://127.0.0.1:%d" % free_port()
        leader = Server(["--repl-listen", repl])
        self.addCleanup(leader.stop)
        follower = Server(["--follow", repl])
        self.addCleanup(follower.stop)
        c = sluice.Client([follower.url, leader.url], timeout=10)
        self.addCleanup(c.close)
        self.assertEqual(c.stats().role, sluice.Role.FOLLOWER)
        tid = c.put("f", "x", key="k").id
        self.assertEqual(c.url.text, leader.url)
        direct = leader.client()
        self.addCleanup(direct.close)
        self.assertEqual(direct.peek(tid).key, "k")
        ro = sluice.Client(follower.url, timeout=10)
        self.addCleanup(ro.close)
        self.assertTrue(wait_for(lambda: ro.stats().totals.ready == 1, 10))
        # given the follower alone, the client goes where it points
        self.assertEqual(ro.put("f", "y").id, tid + 1)
        self.assertEqual(ro.url.text, leader.url)
        # follow re-points a follower (here to the same leader), as the
        # CLI's follow does
        with sluice.Client(follower.url, timeout=10) as f:
            self.assertIsNone(f.follow(repl))
        self.assertEqual(follower.cli("-s", follower.url, "follow", repl),
                         {"following": repl})
        self.assertTrue(wait_for(lambda: ro.stats(
            ).totals.ready == 2 and ro.url.text == leader.url or
            sluice.Client(follower.url, timeout=5).stats(
            ).totals.ready == 2, 10))


if __name__ == "__main__":
    main()
