"""The blocking client: one connection (one session) to a sluice server,
with every operation of docs/protocol.md (codec.Operations).

It connects on first use to the first of its URLs that answers, sends
its token first on every connection it opens, follows a follower to the
leader, and tries again only what is safe to (transport.Plan). Every
socket operation is bounded by the call's deadline: connect_timeout for
opening one connection (TCP, TLS, greeting, token), timeout for a whole
call (plus a take's wait). A Client may be shared by threads (calls take
turns); a worker thread usually has its own, since a lease that is not
detached belongs to the connection that took it.
"""

import socket
import ssl
import threading
import time

from . import codec
from . import errors as E
from . import transport as T
from .move import MoveOperations


class Client(T.Endpoints, codec.Operations, MoveOperations):
    """A connection to sluice.

    urls: "tcp://HOST:PORT", several as a list or separated by commas
    (tls+tcp:// for TLS), None for $SLUICE_URL or tcp://127.0.0.1:7711.
    token: sent first on every connection (servers with --auth).
    timeout: seconds a call may take, retries included, on top of a take's
    wait (None: no bound). connect_timeout: seconds to open one connection.
    ssl_context: for tls+tcp:// URLs (default: ssl.create_default_context(),
    which checks the server's certificate against the system's CAs).
    max_reply: the largest reply accepted, in bytes."""

    def __init__(self, urls=None, **options):
        super().__init__(urls, **options)
        self._sock = None
        self._rbuf = bytearray()
        self._lock = threading.Lock()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Ends the session: the tasks it took without detach are ready
        again. The next call connects anew."""
        with self._lock:
            self._drop()

    def connect(self):
        """Connects now (calls connect on their first use anyway)."""
        with self._lock:
            self._run(None)

    # ---- the transport

    def _drop(self):
        self._rbuf = bytearray()
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None

    def _do(self, req):
        with self._lock:
            return self._run(req)

    def _run(self, req):
        plan = T.Plan(self, req or codec.auth_request(""))
        while True:
            try:
                if self._sock is None:
                    self._open(plan)
                if req is None:
                    return None
                done, out = plan.settle(self._exchange(plan.req, plan))
                if done:
                    return out
                delay = out  # items refused MovingIn go again
            except E.SluiceError as e:
                try:
                    delay = plan.failed(e)
                except E.SluiceError as f:
                    out = plan.partial(f)
                    if out is None:
                        raise
                    return out
            time.sleep(delay)

    def _open(self, plan):
        url = self.url
        limit = plan.remaining(self.connect_timeout)
        end = time.monotonic() + limit
        try:
            self._sock = socket.create_connection((url.host, url.port),
                                                  limit)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if url.tls:
                ctx = self.ssl_context or ssl.create_default_context()
                self._sock.settimeout(max(0.001, end - time.monotonic()))
                try:
                    self._sock = ctx.wrap_socket(self._sock,
                                                 server_hostname=url.host)
                except (OSError, ValueError) as e:
                    raise ssl.SSLError(getattr(e, "reason", None) or
                                       str(e) or type(e).__name__) from None
            self._sock.settimeout(max(0.001, end - time.monotonic()))
            self._sock.sendall(T.HELLO_REQ)
            T.check_hello(self._recv(8, url, False), url)
            if self.token is not None:
                self._exchange(codec.auth_request(self.token), plan)
        except Exception as e:
            self._drop()
            raise T.open_failed(url, e, limit) from None

    def _recv(self, n, url, sent=True):
        """The next n bytes. What the socket has is read in large pieces
        and kept, so that a reply (its length and its body) usually
        costs one recv: each call into the socket gives up the GIL, which
        threads then wait for."""
        buf = self._rbuf
        while len(buf) < n:
            b = self._sock.recv(max(1 << 16, min(n - len(buf), 1 << 20)))
            if not b:
                raise T.lost(url, "the server closed the connection%s" % (
                    " in the middle of a reply" if buf else
                    "" if sent else " during the greeting"), sent,
                    not sent)
            buf += b
        out = bytes(buf[:n])
        del buf[:n]
        return out

    def _exchange(self, req, plan):
        url = self.url
        rid = self._next_rid()
        try:
            self._sock.settimeout(plan.remaining())
            self._sock.sendall(T.frame(rid, req.message()))
            while True:
                self._sock.settimeout(plan.remaining())
                n = T.frame_length(self._recv(8, url), self.max_reply, url)
                if len(self._rbuf) < n:
                    self._sock.settimeout(plan.remaining())
                body = self._recv(n, url)
                if T.frame_id(body) == rid:
                    break
        except socket.timeout:
            self._drop()  # its reply may still come: start afresh
            raise E.TimedOut("%s: no reply to %s within %.1f s: its outcome "
                             "is unknown" % (url, req.name,
                                             plan.timeout or 0)) from None
        except OSError as e:
            self._drop()
            raise T.lost(url, str(e), True) from None
        except E.SluiceError:
            self._drop()  # the stream is lost or out of step
            raise
        flags, r = codec.reply(req.name, body, 4)
        return req.decode(flags, r)
