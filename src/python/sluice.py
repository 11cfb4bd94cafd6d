"""sluice - a client of the sluice job queue server, in Python with the
standard library only.

It is written from docs/protocol.md alone: the SP-over-TCP framing of
section 1.1 (a handshake, then big-endian length-prefixed frames whose body
starts with a request id), and sluice's own messages of sections 2-4
(little-endian). One Client is one TCP connection, that is one sluice
session: tasks taken without detach return to ready when it closes.

    import sluice

    with sluice.Client("tcp://127.0.0.1:7711") as c:
        tid, created = c.put("emails", b"send welcome")
        [task] = c.take(["emails"], wait_ms=5000)
        c.ack(task.id, task.lease)

Every call sends one request and waits for its reply; an error reply
raises SluiceError (its .code is the SLUICE_E* number, .name its name).
A Client must not be used by two threads at once.
"""

import socket
import struct
import time

__all__ = ["Client", "SluiceError", "Task", "After", "DEFAULT_URL"]

DEFAULT_URL = "tcp://127.0.0.1:7711"

# ---- the transport: SP over TCP (docs/protocol.md 1.1), big-endian ------

_HELLO_REQ = b"\x00SP\x00\x00\x30\x00\x00"  # REQ v0 (0x0030)
_HELLO_REP = b"\x00SP\x00\x00\x31\x00\x00"  # REP v0 (0x0031)
_FRAME_MAX = (64 << 20) + 4  # a reply body, plus its request id

# ---- sluice messages (docs/protocol.md 2-4), little-endian --------------

_MAGIC = 0x53
_VERSION = 1

OP_PUT = 0x01
OP_TAKE = 0x03
OP_ACK = 0x04
OP_RELEASE = 0x05
OP_FAIL = 0x06
OP_TOUCH = 0x07
OP_BURY = 0x08
OP_PEEK = 0x0E
OP_PEEK_KEY = 0x0F

_PUT_REPLACE = 0x01
_PUT_AT = 0x02
_TAKE_DETACH = 0x01
_TAKE_STRICT = 0x02
_RELEASE_PRIORITY = 0x01
_FAIL_DELAY = 0x01
_LEASE_REPORT = 0x40
_LEASE_FORCE = 0x80
_KEY_TUBE = 0x01  # peek_key, delete_key: the key's tube follows the key
_REPLY_REPLACED = 0x01
_TASK_DETACHED = 0x01
_TASK_PENDING = 0x02

# the status codes of section 6
ERRORS = {
    1: "ENOTFOUND", 2: "ESTALE", 3: "ESTATE", 4: "EINVAL", 5: "ETUBE",
    6: "EKEY", 7: "ETOOBIG", 8: "EMSGSIZE", 9: "EPROTO", 10: "ETRUNC",
    11: "EVERSION", 12: "EUNKNOWNOP", 13: "ENOSPC", 14: "ELOG",
    15: "ECORRUPT", 16: "ETIMEDOUT", 17: "ENOTLEADER", 18: "EREPLICA",
    19: "EEPOCH", 20: "ECONN", 21: "ENOMEM", 22: "ESHUTDOWN", 23: "EEXIST",
    24: "EPAUSED", 25: "ELIMIT", 28: "ENOTEMPTY",
}
for _code, _name in ERRORS.items():
    globals()[_name] = _code

STATES = {0: "gone", 1: "ready", 2: "delayed", 3: "taken", 4: "buried"}


class SluiceError(Exception):
    """An error reply (code is a SLUICE_E* number), or a local failure:
    ECONN (the connection failed or was lost: the request's outcome is
    unknown), ETIMEDOUT (no reply in time), EPROTO (a reply that does not
    decode)."""

    def __init__(self, code, message="", leader=""):
        self.code = code
        self.name = ERRORS.get(code, "E%d" % code)
        self.message = message
        self.leader = leader  # ENOTLEADER: the leader's client URL
        super().__init__("%s: %s" % (self.name, message) if message
                         else self.name)


class Task:
    """A task as take and peek return it (the task record)."""

    __slots__ = ("id", "lease", "state", "detached", "priority", "attempts",
                 "max_attempts", "ttr", "run_at", "period", "created_at",
                 "updated_at", "taken_at", "deadline", "size", "tube", "key",
                 "last_error", "payload", "pending")

    def __repr__(self):
        return "Task(id=%d, lease=%d, tube=%r, state=%s, payload=%r)" % (
            self.id, self.lease, self.tube, STATES.get(self.state, "?"),
            self.payload)


class After:
    """Where a task is after ack, release, fail, touch or bury."""

    __slots__ = ("id", "state", "run_at", "deadline", "replaced")

    def __repr__(self):
        return "After(id=%d, state=%s, replaced=%s)" % (
            self.id, STATES.get(self.state, "?"), self.replaced)


class _Reader:
    """Reads little-endian fields from a reply body; running short is
    EPROTO."""

    def __init__(self, data, off=0, end=None):
        self.data = data
        self.off = off
        self.end = len(data) if end is None else end

    def take(self, n):
        if self.off + n > self.end:
            raise SluiceError(EPROTO, "reply ends too early")
        b = self.data[self.off:self.off + n]
        self.off += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def str16(self):
        return self.take(self.u16())

    def blob(self):
        return self.take(self.u32())


def _str16(b):
    if isinstance(b, str):
        b = b.encode()
    if len(b) > 0xFFFF:
        raise SluiceError(EINVAL, "a string over 65535 bytes")
    return struct.pack("<H", len(b)) + b


def _blob(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack("<I", len(b)) + bytes(b)


def _task(r):
    """One task record: its own length, the fields version 1 defines,
    then whatever later servers append (skipped)."""
    n = r.u32()
    end = r.off + n
    if end > r.end:
        raise SluiceError(EPROTO, "task record longer than the reply")
    s = _Reader(r.data, r.off, end)
    t = Task()
    t.id, t.lease = s.u64(), s.u64()
    t.state, flags = s.u8(), s.u8()
    t.detached = bool(flags & _TASK_DETACHED)
    t.priority, t.attempts, t.max_attempts = s.u32(), s.u32(), s.u32()
    (t.ttr, t.run_at, t.period, t.created_at, t.updated_at, t.taken_at,
     t.deadline) = (s.u64() for _ in range(7))
    t.size = s.u32()
    t.tube = s.str16().decode()
    t.key = s.str16().decode(errors="replace") or None
    t.last_error = s.str16().decode(errors="replace") or None
    t.payload = bytes(s.blob())
    t.pending = None
    if flags & _TASK_PENDING:
        p = {}
        p["priority"], p["max_attempts"] = s.u32(), s.u32()
        p["ttr"], p["run_at"], p["period"] = s.u64(), s.u64(), s.u64()
        p["size"] = s.u32()
        p["payload"] = bytes(s.blob())
        t.pending = p
    r.off = end
    return t


def _check_done(r):
    if r.off != r.end:
        raise SluiceError(EPROTO, "bytes left over in the reply")


class Client:
    """One connection (one session) to a sluice server.

    url: "tcp://HOST:PORT". timeout: seconds a call waits for its reply,
    on top of a take's own wait (None: for ever)."""

    def __init__(self, url=DEFAULT_URL, timeout=30.0):
        if not url.startswith("tcp://"):
            raise SluiceError(EINVAL, "only tcp:// URLs: %r" % url)
        host, _, port = url[len("tcp://"):].rpartition(":")
        if not host or not port.isdigit():
            raise SluiceError(EINVAL, "not HOST:PORT: %r" % url)
        self.url = url
        self.timeout = timeout
        self._sock = None
        self._next_id = int(time.monotonic_ns()) & 0x7FFFFFFF
        try:
            self._sock = socket.create_connection(
                (host.strip("[]"), int(port)), timeout=timeout)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock.sendall(_HELLO_REQ)
            hello = self._recv_exact(8)
        except OSError as e:
            self.close()
            raise SluiceError(ECONN, "%s: %s" % (url, e)) from None
        except SluiceError:
            self.close()
            raise
        if hello != _HELLO_REP:
            self.close()
            raise SluiceError(ECONN, "%s does not speak SP REP v0 (got %s)"
                              % (url, hello.hex()))

    def close(self):
        """Ends the session: tasks it took without detach are ready
        again."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- the transport ------------------------------------------------

    def _recv_exact(self, n):
        parts = []
        while n > 0:
            b = self._sock.recv(n)
            if not b:
                raise SluiceError(ECONN, "the server closed the connection")
            parts.append(b)
            n -= len(b)
        return b"".join(parts)

    def _call(self, op, flags, body, extra_wait_ms=0):
        """Sends one request, returns (reply flags, a reader on its body).
        An error reply raises SluiceError."""
        if self._sock is None:
            raise SluiceError(ECONN, "the client is closed")
        self._next_id = (self._next_id + 1) & 0x7FFFFFFF
        rid = 0x80000000 | self._next_id
        msg = struct.pack("<BBBB", _MAGIC, _VERSION, op, flags) + body
        frame = struct.pack(">QI", 4 + len(msg), rid) + msg
        timeout = None
        if self.timeout is not None:
            timeout = self.timeout + extra_wait_ms / 1000.0
        try:
            self._sock.settimeout(timeout)
            self._sock.sendall(frame)
            while True:
                (n,) = struct.unpack(">Q", self._recv_exact(8))
                if n < 4 or n > _FRAME_MAX:
                    raise SluiceError(EPROTO, "a frame of %d bytes" % n)
                data = self._recv_exact(n)
                (got,) = struct.unpack(">I", data[:4])
                if got == rid:
                    break
                # the late reply of a request given up on: not ours
        except socket.timeout:
            self.close()  # its reply may still come: start afresh
            raise SluiceError(ETIMEDOUT, "no reply within %.1f s" % timeout)
        except OSError as e:
            self.close()
            raise SluiceError(ECONN, str(e)) from None
        except SluiceError:
            self.close()  # the stream is lost or out of step
            raise
        return self._reply(op, data, 4)

    @staticmethod
    def _reply(op, data, off):
        r = _Reader(data, off)
        magic, version, rop, flags, status = struct.unpack(
            "<BBBBH", r.take(6))
        if magic != _MAGIC:
            raise SluiceError(EPROTO, "bad magic in the reply")
        if version != _VERSION:
            raise SluiceError(EVERSION, "reply of version %d" % version)
        if status != 0:
            message = r.str16().decode(errors="replace")
            leader = r.str16().decode(errors="replace")
            raise SluiceError(status, message, leader)
        if rop != op:
            raise SluiceError(EPROTO, "a reply to op %d for op %d"
                              % (rop, op))
        return flags, r

    # ---- operations ---------------------------------------------------

    def put(self, tube, payload, priority=1024, delay_ms=0, run_at=None,
            ttr_ms=0, max_attempts=0, period_ms=0, key=None, replace=False):
        """Puts a task; returns (id, created). created is False when the
        key belongs to a live task of the tube (or one completed there
        within the dedup window; keys are per tube): id is that task's,
        nothing new was made; with replace, the live task gets this
        content."""
        flags = (_PUT_REPLACE if replace else 0) | (
            _PUT_AT if run_at is not None else 0)
        body = (_str16(tube)
                + struct.pack("<IQQIQ", priority,
                              run_at if run_at is not None else delay_ms,
                              ttr_ms, max_attempts, period_ms)
                + _str16(key or b"") + _blob(payload))
        _, r = self._call(OP_PUT, flags, body)
        status, created, tid = r.u16(), r.u8(), r.u64()
        _check_done(r)
        if status != 0:
            raise SluiceError(EPROTO, "a put result with status %d" % status)
        return tid, bool(created)

    def take(self, tubes, wait_ms=0, max=1, detach=False,
             strict_order=False):
        """Takes up to max tasks from the tubes (a name or a list): the
        most urgent across them, or with strict_order the first tube in
        the order given that has one. Waits up to wait_ms when none is
        ready. Returns a list of Task, empty when nothing came in time.

        The lease of each task is a session lease, ended when this client
        closes, unless detach: a detached lease ends only by ttr (or ack,
        release, ...), for a worker that may reconnect."""
        if isinstance(tubes, (str, bytes)):
            tubes = [tubes]
        flags = (_TAKE_DETACH if detach else 0) | (
            _TAKE_STRICT if strict_order else 0)
        body = struct.pack("<QIH", wait_ms, max, len(tubes)) + b"".join(
            _str16(t) for t in tubes)
        _, r = self._call(OP_TAKE, flags, body, extra_wait_ms=wait_ms)
        tasks = [_task(r) for _ in range(r.u32())]
        _check_done(r)
        return tasks

    def _after(self, op, flags, body):
        rflags, r = self._call(op, flags | _LEASE_REPORT, body)
        a = After()
        a.id, a.state, a.run_at, a.deadline = r.u64(), r.u8(), r.u64(), r.u64()
        a.replaced = bool(rflags & _REPLY_REPLACED)
        _check_done(r)
        return a

    @staticmethod
    def _lease(tid, lease, force):
        if lease is None and not force:
            raise SluiceError(EINVAL, "a lease is needed (or force)")
        return struct.pack("<QQ", tid, 0 if lease is None else lease)

    def ack(self, tid, lease, to_tube=None, force=False):
        """Done: deleted (a recurring task waits for its next run), or
        moved to to_tube as a ready task. force: an operator's override
        of the lease check, logged by the server."""
        return self._after(OP_ACK, _LEASE_FORCE if force else 0,
                           self._lease(tid, lease, force)
                           + _str16(to_tube or b""))

    def release(self, tid, lease, delay_ms=0, priority=None, force=False):
        """Back to ready, or delayed by delay_ms; priority: a new one."""
        flags = (_RELEASE_PRIORITY if priority is not None else 0) | (
            _LEASE_FORCE if force else 0)
        return self._after(OP_RELEASE, flags,
                           self._lease(tid, lease, force)
                           + struct.pack("<QI", delay_ms, priority or 0))

    def fail(self, tid, lease, error="", delay_ms=None, force=False):
        """Failed with error: retried after the server's backoff (or
        delay_ms), buried once attempts reach max_attempts."""
        flags = (_FAIL_DELAY if delay_ms is not None else 0) | (
            _LEASE_FORCE if force else 0)
        return self._after(OP_FAIL, flags,
                           self._lease(tid, lease, force)
                           + struct.pack("<Q", delay_ms or 0)
                           + _str16(error))

    def touch(self, tid, lease, force=False):
        """Extends the lease by the task's ttr from now."""
        _, r = self._call(OP_TOUCH, _LEASE_FORCE if force else 0,
                          self._lease(tid, lease, force))
        a = After()
        a.id, a.state, a.run_at, a.deadline = r.u64(), r.u8(), r.u64(), r.u64()
        a.replaced = False
        _check_done(r)
        return a

    def bury(self, tid, lease, force=False):
        """Parks the task until kicked."""
        return self._after(OP_BURY, _LEASE_FORCE if force else 0,
                           self._lease(tid, lease, force))

    def peek(self, tid):
        """The task with that id (ENOTFOUND when there is none)."""
        _, r = self._call(OP_PEEK, 0, struct.pack("<Q", tid))
        t = _task(r)
        _check_done(r)
        return t

    def peek_key(self, key, tube="default"):
        """The task with that key in `tube` (keys are per tube): a live
        one, or a done one while its key is reserved."""
        _, r = self._call(OP_PEEK_KEY, _KEY_TUBE, _str16(key) + _str16(tube))
        t = _task(r)
        _check_done(r)
        return t
