"""SP over TCP (docs/protocol.md section 1.1) and the rules for trying
again (docs/client.md, "Several servers" and "Lost connections"), without
any I/O: what the blocking client (client.py) and the asyncio client
(aio.py) share.

A connection sends the 8-byte greeting of a REQ v0 socket and must get a
REP v0's; then every message is a big-endian u64 length and a frame body
made of a 4-byte big-endian request id (top bit set) and the sluice
message. A reply with another id answers a request given up on: skipped.

The Plan of one call decides, after each failure, whether to try again
and where: a follower's NotLeader sends the request to the leader it
names (the follower executed nothing); a connection that could not be
opened tries the next URL; a connection lost once the request was sent
is retried only for the requests docs/protocol.md section 7 calls safe
(reads, tube_set, puts whose tasks all have keys) and is reported as
ConnectionLost for the others, since they may have been executed. A
change sent again that way and then refused (a keyed put answered
NotLeader until the deadline, while the leader that died may have
committed the first sending) is ConnectionLost too, naming the refusal:
the refusal speaks only for the second sending. A put refused MovingIn
(its tube moving in from another cluster, its key not there yet: nothing
was done) goes again after 10 ms, doubled up to 200 ms; a put_batch's
items refused so go again by themselves, the others keeping their
results (as libsluice does); when such a sending again fails as a whole
(a lost connection, no leader, the deadline), those items alone carry
its error and the call returns every item's result: the batch was
answered, some items done. Every retry happens within the call's
deadline: timeout (plus a take's wait) from the call's start.
"""

import os
import random
import ssl
import struct
import time
from urllib.parse import urlsplit

from . import errors as E
from .types import PutResult

DEFAULT_URL = "tcp://127.0.0.1:7711"
HELLO_REQ = b"\x00SP\x00\x00\x30\x00\x00"  # REQ v0 (0x0030)
HELLO_REP = b"\x00SP\x00\x00\x31\x00\x00"  # REP v0 (0x0031)
# The largest reply accepted: the protocol's 64 MiB message, its 4-byte
# request id, and room for a take's larger layout.
MAX_REPLY = (64 << 20) + 4096
_BACKOFF_FIRST, _BACKOFF_MAX = 0.05, 1.0
_MOVING_FIRST, _MOVING_MAX = 0.01, 0.2  # a put refused MovingIn


class Url:
    """One server: tcp://HOST:PORT or tls+tcp://HOST:PORT."""

    __slots__ = ("text", "host", "port", "tls")

    def __init__(self, text):
        text = text.strip()
        u = urlsplit(text)
        if u.scheme not in ("tcp", "tls+tcp") or not u.hostname or \
                u.path not in ("", "/"):
            raise E.Invalid("%r is not a tcp://HOST:PORT or "
                            "tls+tcp://HOST:PORT URL" % text)
        try:
            port = u.port
        except ValueError:
            port = None
        if not port:
            raise E.Invalid("%r has no port" % text)
        self.text, self.host, self.port = text, u.hostname, port
        self.tls = u.scheme == "tls+tcp"

    def __str__(self):
        return self.text


def parse_urls(urls):
    """The servers to try, in order: a list of URLs, or one string with
    commas between them (as libsluice and $SLUICE_URL take them); None:
    $SLUICE_URL, else the default."""
    if urls is None:
        urls = os.environ.get("SLUICE_URL") or DEFAULT_URL
    if isinstance(urls, str):
        urls = urls.split(",")
    out = [Url(u) for u in urls if u.strip()]
    if not out:
        raise E.Invalid("no URL to connect to")
    return out


def frame(rid, message):
    """A request's bytes on the wire."""
    return struct.pack(">QI", 4 + len(message), rid) + message


def frame_length(header, limit, url):
    """The length of the frame body that follows an 8-byte header."""
    (n,) = struct.unpack(">Q", header)
    if n < 4:
        raise E.Malformed("%s sent a frame of %d bytes, without its request"
                          " id" % (url, n))
    if n > limit:
        raise E.Malformed("%s sent a reply of %d bytes, over this client's "
                          "limit of %d (max_reply)" % (url, n, limit))
    return n


def frame_id(body):
    return struct.unpack(">I", body[:4])[0]


def check_hello(got, url):
    """Raises a clear error when a port's greeting is not a sluice
    server's (as libsluice says what answers instead). A port that says
    nothing first (a beanstalk port: it waits for a command line) costs
    the connect timeout."""
    if got == HELLO_REP:
        return
    if got[:4] == b"HTTP":
        what = "speaks HTTP, not the sluice protocol; is this the --http port?"
    elif got[:1] in (b"\x15", b"\x16") and got[1:2] == b"\x03":
        what = "speaks TLS: use a tls+tcp:// URL"
    elif got[:4] == b"\x00SP\x00":
        what = ("is an SP socket of another protocol (0x%04x), not a sluice "
                "client port" % struct.unpack(">H", got[4:6])[0])
    else:
        what = "does not speak the sluice protocol (it sent %s)" % got.hex()
    raise E.Malformed("%s %s" % (url, what))


def lost(url, what, sent, permanent=False):
    """ConnectionLost, marked with whether the request may have left, and
    whether trying the same URL again would be in vain."""
    e = E.ConnectionLost("%s: %s" % (url, what))
    e.sent = sent
    e.permanent = permanent
    return e


def open_failed(url, e, limit):
    """The error to raise for exception e met while opening a connection
    to url (TCP, TLS, greeting; limit: its time): marked as sent
    nowhere, so that any request may try elsewhere."""
    if isinstance(e, E.SluiceError):
        e.sent = False
        return e
    if isinstance(e, ssl.SSLError):
        return lost(url, "TLS handshake failed: %s (is it a TLS port, and "
                    "the right CA?)" % (getattr(e, "reason", None) or e),
                    False, True)
    if isinstance(e, TimeoutError):
        return lost(url, "no sluice greeting within %.1f s" % limit, False)
    if isinstance(e, EOFError):  # asyncio's IncompleteReadError
        return lost(url, "the server closed the connection during the "
                    "greeting", False, True)
    if isinstance(e, OSError):
        return lost(url, "cannot connect: %s" % (e.strerror or e), False)
    raise e


class Plan:
    """One call's deadline and retries (see the module's comment). The
    client gives it each failure; it answers how long to wait before the
    next try, having pointed the client at the URL to try, or raises."""

    def __init__(self, client, req):
        self.client = client
        self.req = req
        self.timeout = client.timeout
        self.deadline = None
        if client.timeout is not None:
            self.deadline = (time.monotonic() + client.timeout
                             + req.wait_ms / 1000.0)
        self.tries = 0
        self.bad = set()
        self.resent = False  # sent again after a lost connection
        self.pause = _MOVING_FIRST  # before a put refused MovingIn again
        self.whole = None  # put_batch: every item's result so far
        self.at = None     # and where the items of self.req are in it
        self.first = req

    def moving(self):
        """The pause before a put refused MovingIn goes again (10 ms,
        doubled up to 200 ms), or None when the call's time is up."""
        d = self.pause
        if self.deadline is not None and \
                time.monotonic() + d >= self.deadline:
            return None
        self.pause = min(_MOVING_MAX, d * 2)
        return d

    def settle(self, out):
        """A reply's result: (True, the call's result), or (False, the
        pause) when items of a put_batch were refused MovingIn and go
        again by themselves, self.req being them from now on."""
        if self.req.name != "put_batch" or not self.first.parts:
            return True, out
        if self.whole is None:
            self.whole = list(out)
        else:
            for k, i in enumerate(self.at):
                self.whole[i] = out[k]
        idx = [i for i, x in enumerate(self.whole)
               if isinstance(x.error, E.MovingIn)]
        d = self.moving() if idx else None
        if d is None:
            return True, self.whole
        self.at = idx
        self.req = self.first.items(idx)
        return False, d

    def partial(self, e):
        """The result of a put_batch answered in part whose items sent
        again (refused MovingIn) failed as a whole with e (raised by
        failed): those items carry e (ConnectionLost, TimedOut: unknown;
        a refusal: not done), the others their results. None when no
        reply came yet: e is the call's."""
        if self.whole is None:
            return None
        for i in self.at:
            self.whole[i] = PutResult(0, False, error=e)
        return self.whole

    def remaining(self, cap=None):
        """Seconds left (at most cap); a call past its deadline raises
        TimedOut."""
        if self.deadline is None:
            return cap
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise E.TimedOut("%s: no reply within %.1f s" % (
                self.req.name, self.timeout + self.req.wait_ms / 1000.0))
        return left if cap is None else min(left, cap)

    def failed(self, e):
        c = self.client
        self.tries += 1
        sent = getattr(e, "sent", True)
        if isinstance(e, E.MovingIn) and self.req.name == "put":
            d = self.moving()
            if d is None:
                raise self.unknown(e)
            return d
        if isinstance(e, E.NotLeader):
            if e.leader:
                c._point_at(e.leader)
            else:
                c._next_url()
        elif not sent and isinstance(e, (E.ConnectionLost, E.Malformed)):
            # nothing left: any request may go elsewhere, or again once
            # the server listens (a restart, a failover); but a port that
            # answers something else is not tried again
            if isinstance(e, E.Malformed) or getattr(e, "permanent", False):
                self.bad.add(c.url.text)
                if len(self.bad) >= len(c.urls):
                    raise e
            c._next_url()
            while c.url.text in self.bad:
                c._next_url()
        elif isinstance(e, E.ConnectionLost):
            c._next_url()
            if not self.req.safe:
                raise E.ConnectionLost(
                    "%s; %s may have been executed: not sent again"
                    % (e.message, self.req.name)) from None
            self.resent = True
        else:
            raise self.unknown(e)
        delay = 0.0
        if self.tries >= len(c.urls):
            delay = min(_BACKOFF_MAX, _BACKOFF_FIRST * 2 ** (
                self.tries - len(c.urls)))
        if self.deadline is not None and \
                time.monotonic() + delay >= self.deadline:
            raise self.unknown(e)
        return delay

    def unknown(self, e):
        """The error to raise for e: a server's refusal of a change sent
        again after a lost connection is ConnectionLost (the first sending
        may have been done), naming the refusal; any other stands."""
        if not (self.resent and self.req.changes and
                getattr(e, "refusal", False)):
            return e
        u = E.ConnectionLost(
            "connection lost before the reply, and %s sent again: %s: it "
            "may or may not have been done" % (self.req.name, e))
        u.__cause__ = e
        return u


class Endpoints:
    """The settings of a client, its URLs and the one in use (a mixin of
    both clients; their arguments are documented by sluice.Client)."""

    def __init__(self, urls=None, *, token=None, timeout=30.0,
                 connect_timeout=2.0, ssl_context=None, max_reply=MAX_REPLY):
        self.urls = parse_urls(urls)
        self._cur = 0
        self.token = token
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.ssl_context = ssl_context
        self.max_reply = max_reply
        self._rid = random.getrandbits(31)

    def __repr__(self):
        return "sluice.%s(%r)" % (type(self).__name__,
                                  ",".join(u.text for u in self.urls))

    def _next_rid(self):
        """A new request id: counting up, top bit set."""
        self._rid = (self._rid + 1) & 0x7FFFFFFF
        return 0x80000000 | self._rid

    @property
    def url(self):
        """The URL in use (or to be tried next)."""
        return self.urls[self._cur]

    def _next_url(self):
        self._drop()
        self._cur = (self._cur + 1) % len(self.urls)

    def _point_at(self, leader):
        """Follows a follower's pointer to the leader."""
        self._drop()
        for i, u in enumerate(self.urls):
            if u.text == leader:
                self._cur = i
                return
        self.urls.append(Url(leader))
        self._cur = len(self.urls) - 1
