"""sluice's messages (docs/protocol.md sections 2-4), without any I/O.

Every operation is written once, here, in the Operations mixin: a method
encodes its request into a Request (op, flags, body, how to decode the
reply, whether it is safe to send again) and hands it to self._do(). The
blocking Client's _do sends it and returns the decoded result; the
asyncio client's _do is a coroutine, so the same methods return
awaitables there. Integers of the body are little-endian; the SP framing
around it (big-endian) is in transport.py.
"""

import struct
from typing import Callable, NamedTuple

from . import errors as E
from .types import (After, Cluster, ClusterMap, Counts, Dist, ErrorGroup,
                    Group, GroupLimits, Groups, History, Hour,
                    ItemResult, Limit, Limits, MapCluster, MapEntry, Member,
                    MemberRole, Order, Outcome, Pending, PutResult, Role,
                    Schedule, Setting, Settings, State, Stats, Switchover,
                    Task, TaskPage)

MAGIC = 0x53
VERSION = 1

OPS = {
    "put": 0x01, "put_batch": 0x02, "take": 0x03, "ack": 0x04,
    "release": 0x05, "fail": 0x06, "touch": 0x07, "bury": 0x08,
    "kick": 0x09, "kick_id": 0x0A, "delete": 0x0B, "delete_key": 0x0C,
    "flush": 0x0D, "peek": 0x0E, "peek_key": 0x0F, "peek_next": 0x10,
    "stats": 0x11, "list": 0x12, "errors": 0x13, "pause": 0x14,
    "snapshot": 0x15, "promote": 0x16, "follow": 0x17, "release_all": 0x18,
    "ack_batch": 0x19, "delete_batch": 0x1A, "update": 0x1B,
    "stats_hourly": 0x1C, "delete_where": 0x1D, "tube_set": 0x1E,
    "tube_show": 0x1F, "job": 0x20, "tube_delete": 0x21, "cluster": 0x22,
    "switchover": 0x23, "history": 0x24, "auth": 0x28, "groups": 0x29,
    "group": 0x2A, "batch_show": 0x2B, "batch_set": 0x2C, "cancel": 0x2D, "wait": 0x2E, "sched_set": 0x2F,
    "sched_list": 0x30, "sched_ctl": 0x31, "map": 0x32, "map_set": 0x33,
    "map_delete": 0x34, "move_out": 0x35, "move_in": 0x36,
    "move_end": 0x37,
}
OP_NAMES = {v: k for k, v in OPS.items()}

_PUT_REPLACE, _PUT_AT, _PUT_IF_NEWER, _PUT_GROUP = 0x01, 0x02, 0x04, 0x08
_PUT_THROTTLE, _PUT_DEBOUNCE = 0x40, 0x80
_PUT_EXT = 0x10  # tagged fields: the parents
_REC_GROUP, _REC_DEPS = 0x20, 0x40
_RULES = ("fail", "ignore", "cancel")
_OUTCOMES = ("pending", "done", "failed")
AFTER_MAX, RESULT_MAX = 1000, 65535
_MESSAGES = 0x01  # put_batch, ack_batch, delete_batch
_LEASE_REPORT, _LEASE_FORCE = 0x40, 0x80
_REC_DETACHED, _REC_PENDING, _REC_DONE = 0x01, 0x02, 0x04
_REC_VERSIONS, _REC_HOLDER, _REC_CANCELLED = 0x08, 0x10, 0x80
_ENDS = {16: "deleted", 17: "cancelled", 18: "dead_lettered"}
WAIT_MAX_MS = 3600 * 1000  # wait's longest, an hour
_REC_MIN = 101  # the bytes of a record after its length, at least

HISTORY_KINDS = ("puts", "takes", "acks", "fails", "buries", "ttr_expired",
                 "ready", "delayed", "taken", "buried")


# The requests safe to send again that change something (the others are
# reads).
_CHANGES = frozenset(("put", "put_batch", "tube_set", "group", "sched_set",
                      "cancel", "map_set", "move_out", "move_in",
                      "move_end"))


class Request(NamedTuple):
    """One request: its name (for messages), op, flags, body, the decoder
    of its reply body, whether it is safe to send again after a lost
    connection (docs/protocol.md section 7), and how long the server may
    wait before answering (a take's wait), in ms."""
    name: str
    flags: int
    body: bytes
    decode: Callable
    safe: bool = False
    wait_ms: int = 0
    parts: tuple = ()  # put_batch: each item's bytes (flags and fields)

    @property
    def op(self):
        return OPS[self.name]

    @property
    def changes(self):
        """Whether it is safe to send again and changes something: sent
        again and refused, it may still have been done the first time."""
        return self.safe and self.name in _CHANGES

    def message(self):
        return struct.pack("<BBBB", MAGIC, VERSION, self.op,
                           self.flags) + self.body

    def items(self, idx):
        """A put_batch of the items idx of this one (their parts). Items
        refused MovingIn have keys: safe to send again."""
        parts = tuple(self.parts[i] for i in idx)
        return self._replace(body=struct.pack("<I", len(parts))
                             + b"".join(parts), parts=parts, safe=True)


# ---- reading ------------------------------------------------------------


class Reader:
    """Reads little-endian fields from a reply; running short is
    Malformed."""

    __slots__ = ("data", "off", "end")

    def __init__(self, data, off=0, end=None):
        self.data = data
        self.off = off
        self.end = len(data) if end is None else end

    def take(self, n):
        if self.off + n > self.end:
            raise E.Malformed("the reply ends too early (%d bytes more "
                              "needed at byte %d)" % (n, self.off))
        b = self.data[self.off:self.off + n]
        self.off += n
        return b

    def unpack(self, fmt):
        s = struct.Struct("<" + fmt)
        return s.unpack(self.take(s.size))

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return self.unpack("H")[0]

    def u32(self):
        return self.unpack("I")[0]

    def u64(self):
        return self.unpack("Q")[0]

    def str16(self):
        return bytes(self.take(self.u16())).decode("utf-8", "replace")

    def opt16(self):
        """A str16 where empty means none."""
        return self.str16() or None

    def blob(self):
        return bytes(self.take(self.u32()))

    def done(self, value=None):
        if self.off != self.end:
            raise E.Malformed("%d bytes left over in the reply"
                              % (self.end - self.off))
        return value


def reply(name, data, off=0):
    """Checks a reply's header: returns (flags, a Reader on its body), or
    raises the error it carries."""
    r = Reader(data, off)
    magic, version, op, flags, status = r.unpack("BBBBH")
    if magic != MAGIC:
        raise E.Malformed("a reply without sluice's magic byte (0x%02x)"
                          % magic)
    if version != VERSION:
        raise E.BadVersion("a reply of protocol version %d" % version)
    if status != 0:
        message, leader = r.str16(), r.str16()
        if status == E.EUNKNOWNOP:
            message = ("the server does not have the operation %s (0x%02x):"
                       " it is older than this client (%s)"
                       % (name, OPS[name], message))
        e = E.error_for(status, message, leader)
        e.refusal = True  # the server's answer, not what the client met
        raise e
    if op != OPS[name]:
        raise E.Malformed("a reply to op 0x%02x for %s" % (op, name))
    return flags, r


def _task(r):
    n = r.u32()
    if n < _REC_MIN or r.off + n > r.end:
        raise E.Malformed("a task record of %d bytes" % n)
    s = Reader(r.data, r.off, r.off + n)
    r.off += n
    tid, lease, state, flags = s.unpack("QQBB")
    nums = s.unpack("IIIQQQQQQQI")
    t = Task(tid, lease, State(state), bool(flags & _REC_DETACHED), *nums,
             tube=s.str16(), key=s.opt16(), last_error=s.opt16(),
             payload=s.blob())
    if flags & _REC_PENDING:
        t.pending = Pending(*s.unpack("IIQQQI"), payload=s.blob())
    if flags & _REC_DONE:
        t.finished_at, t.kept_until, t.duration_ms = s.unpack("QQQ")
        t.result = s.opt16()
    if flags & _REC_VERSIONS:
        t.version, t.pending_version = s.unpack("QQ")
    if flags & _REC_HOLDER:
        t.session = s.u32()
        t.peer = s.opt16()
    if flags & _REC_GROUP:
        t.group = s.opt16()
    if flags & _REC_DEPS:
        rule, t.parents_pending, n = s.unpack("BIH")
        t.on_parent_failure = _RULES[rule] if rule < 3 else str(rule)
        for _ in range(n):
            pid, outcome = s.unpack("QB")
            res = s.blob()
            t.parents[pid] = res if outcome == 1 and res else None
            t.parent_outcomes[pid] = (_OUTCOMES[outcome] if outcome < 3
                                      else str(outcome))
        t.children_count, shown = s.unpack("IH")
        t.children = list(s.unpack("%dQ" % shown)) if shown else []
    t.cancelled = bool(flags & _REC_CANCELLED)
    return t


def _tasks(rflags, r):
    return r.done([_task(r) for _ in range(r.u32())])


def _one_task(rflags, r):
    return r.done(_task(r))


def _after(rflags, r):
    tid, state, run_at, deadline = r.unpack("QBQQ")
    return r.done(After(tid, State(state), run_at, deadline,
                        bool(rflags & 0x01)))


def _outcome(rflags, r):
    tid, state, final, when = r.unpack("QBBQ")
    tube, text = r.opt16(), r.opt16()
    try:
        name = _ENDS.get(state) or str(State(state))
    except ValueError:  # a state this client does not know yet
        name = str(state)
    done = bool(final) and state == State.DONE
    return r.done(Outcome(tid, name, bool(final), when, tube,
                          text if done else None,
                          None if done else text, bool(rflags & 0x01)))


def _u64(rflags, r):
    return r.done(r.u64())


def _nothing(rflags, r):
    return r.done(None)


def _nothing_list(rflags, r):
    """A reply of n items where none is expected (sched_ctl's delete)."""
    n = r.u32()
    if n != 0:
        raise E.Malformed("a delete's reply holds %d schedules" % n)
    return r.done(None)


def _item_error(status, rflags, r):
    message = r.str16() if rflags & _MESSAGES else ""
    return E.error_for(status, message) if status else None


def _put_results(rflags, r):
    out = []
    for _ in range(r.u32()):
        status, created, tid = r.unpack("HBQ")
        err = _item_error(status, rflags, r)
        out.append(PutResult(tid, created == 1, created == 2, err,
                             created == 3))
    return r.done(out)


def _put_result(rflags, r):
    status, created, tid = r.unpack("HBQ")
    return r.done(PutResult(tid, created == 1, created == 2,
                            throttled=created == 3))


def _items(ids):
    def decode(rflags, r):
        n = r.u32()
        if n != len(ids):
            raise E.Malformed("%d results for %d items" % (n, len(ids)))
        return r.done([ItemResult(i, _item_error(r.u16(), rflags, r))
                       for i in ids])
    return decode


def _kvs(r):
    return dict((r.str16(), r.u64()) for _ in range(r.u16()))


def _settings_body(r, tube):
    own, ttr, ma, base, cap, keep, lost = r.unpack("BQIQQQB")
    return Settings(tube, Setting(own), ttr, ma, base, cap, keep,
                    bool(lost), r.opt16())


def _settings(rflags, r):
    return r.done(_settings_body(r, r.str16()))


def _limits(rflags, r):
    tube = r.str16()
    _settings_body(r, tube)
    if not rflags & 0x01:
        raise E.Malformed("the reply carries no limits (a server older "
                          "than flow limits)")
    own, rate, per, burst, conc, tokens, taken, held = r.unpack("BIIIIQQQ")
    return r.done(Limits(tube, Limit(own), rate, per, burst, conc, tokens,
                         taken, held))


_GROUP_VERBS = {"show": 0, "set": 1, "pause": 2, "resume": 3}
_GROUP_HOLDS = ("none", "rate", "concurrency", "paused")


def _group(rflags, r):
    def lim():
        s, rate, per, burst, conc = r.unpack("BIIII")
        return Limit(s), rate, per, burst, conc

    tube = r.str16()
    group = r.str16()
    every = lim()
    overrides, paused_groups, held_groups, gflags = r.unpack("IIIB")
    own = lim()
    now = lim()
    ready, taken, tokens, holding = r.unpack("IIQB")
    return r.done(GroupLimits(
        tube, group, every, overrides, paused_groups, held_groups,
        bool(gflags & 0x01), bool(gflags & 0x02), bool(gflags & 0x04),
        own, now, ready, taken, tokens,
        _GROUP_HOLDS[holding] if holding < 4 else "?"))
_CATCH_UP = ("none", "one", "all")


def _schedule(r):
    name, tube, cron, tz = r.str16(), r.str16(), r.str16(), r.str16()
    mode, paused, pri, ttr, ma = r.unpack("BBIQI")
    (created, updated, next_at, last_slot, last_id, fired, skipped,
     size) = r.unpack("QQQQQQQI")
    payload = r.blob()
    if mode > 2:
        raise E.Malformed("a schedule's catch-up of %d" % mode)
    return Schedule(name, tube, cron, tz or "UTC", _CATCH_UP[mode],
                    bool(paused), pri, ttr, ma, created, updated, next_at,
                    last_slot, last_id, fired, skipped, size,
                    payload if payload or size == 0 else None)


def _schedules(rflags, r):
    return r.done([_schedule(r) for _ in range(r.u32())])


def _one_schedule(rflags, r):
    v = _schedules(rflags, r)
    return v[0] if v else None


_BATCH_COUNTS = ("total", "waiting", "ready", "delayed", "taken", "buried",
                 "acked", "failed", "started_at", "ended_at")


def _batch_fields(r):
    """A batch (batch_show, batch_set) as a dict: its counts by state,
    started_at, ended_at, closed, ended, and on_success, on_complete
    ({"tube": T, "task": ID} or None)."""
    b = {"name": r.str16()}
    for k in _BATCH_COUNTS:
        b[k] = r.u64()
    state = r.u8()
    r.u8()  # owed
    r.u8()  # fired
    b["closed"], b["ended"] = bool(state & 1), bool(state & 2)
    for k in ("on_success", "on_complete"):
        tube, task = r.str16(), r.u64()
        b[k] = {"tube": tube, "task": task} if tube else None
    return b


def _batch(rflags, r):
    return r.done(_batch_fields(r))


_BATCH_LIST = 0x01  # batch_show: the list of batches, request and reply


def _batch_list(rflags, r):
    """batch_show's list: {"batches": [...], "total": N}."""
    if not rflags & _BATCH_LIST:
        raise E.Malformed("a batch list's reply without its flag")
    total, n = r.u64(), r.u32()
    if n > total:
        raise E.Malformed("%d batches of %d" % (n, total))
    return r.done({"batches": [_batch_fields(r) for _ in range(n)],
                   "total": total})


_PEEK_BATCH = 0x01  # peek: the task's batch after it, request and reply


def _task_batch(rflags, r):
    """A peek's reply with flag 0x01: the batch name after the task."""
    if not rflags & _PEEK_BATCH:
        raise E.Malformed("a peek's reply without the batch asked for")
    _task(r)
    return r.done(r.opt16())


_PER_MS = {"s": 1000, "sec": 1000, "m": 60000, "min": 60000,
           "h": 3600000, "hour": 3600000}


def parse_rate(text):
    """ "100/s" (also /m, /h) -> (100, 1000). The unit is required: a bare
    number is a ValueError, as the CLI refuses it."""
    n, sep, unit = str(text).partition("/")
    if not sep or not n.isdigit() or unit not in _PER_MS:
        raise ValueError("a rate is a whole count per s, m or h (100/s, "
                         "20/m, 3/h), not %r" % (text,))
    return int(n), _PER_MS[unit]


_DUR_MS = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000, "d": 86400000}
DUR_SYNTAX = ("a number with a unit, ms, s, m, h or d (500ms, 2s, 1.5m, "
              "1h, 30d), or 0")


def parse_duration(text):
    """ "250ms", "2s", "1.5m", "1h", "30d" or "0" -> milliseconds (int), as
    sluice and sluiced read a duration a person types. A bare number
    other than 0 is a ValueError whose text says the two readings ("30: a
    duration needs a unit: say 30s or 30000ms ..."), as the CLI refuses
    it; so is anything else that is not a duration."""
    s = str(text)
    i = 0
    while i < len(s) and s[i].isdigit() and s[i].isascii():
        i += 1
    whole = s[:i]
    frac = ""
    if i < len(s) and s[i] == ".":
        j = i + 1
        while j < len(s) and s[j].isdigit() and s[j].isascii():
            j += 1
        frac, i = s[i + 1:j], j
    unit = s[i:]
    if not whole and not frac:
        raise ValueError("%r is not a duration: %s" % (s, DUR_SYNTAX))
    value = int(whole or "0") * 10 ** len(frac) + int(frac or "0")
    if unit == "":
        if value == 0:
            return 0
        raise ValueError("%s: a duration needs a unit: %s" % (s,
                                                              _dur_hint(s)))
    if unit not in _DUR_MS or (unit == "ms" and frac):
        raise ValueError("%r is not a duration: %s" % (s, DUR_SYNTAX))
    return value * _DUR_MS[unit] // 10 ** len(frac)


def _dur_hint(s):
    """What a person who typed the bare number `s` should say instead."""
    secs = s + "s"
    ms = parse_duration(secs)
    if "." in s:
        return "say %s or %dms" % (secs, ms)
    return "say %s or %dms (%sms if milliseconds were meant)" % (secs, ms, s)


def _counts(r):
    return Counts(*r.unpack("QQQQQQ"), _kvs(r))


def _stats(rflags, r):
    role, epoch, lsn, durable, now = r.unpack("BQQQQ")
    leader = r.opt16()
    totals, node = _counts(r), _kvs(r)
    tubes = {}
    for _ in range(r.u32()):
        name = r.str16()
        tubes[name] = _counts(r)
        if rflags & 0x01:
            tubes[name].settings = _settings_body(r, name)
    return r.done(Stats(Role(role), epoch, lsn, durable, now, leader,
                        totals, node, tubes))


def _error_groups(rflags, r):
    out = []
    for _ in range(r.u32()):
        g = ErrorGroup(r.str16(), r.u64())
        if rflags & 0x01:
            g.ids = list(r.unpack("Q" * r.u8()))
        out.append(g)
    return r.done(out)


def _groups(rflags, r):
    total, n = r.unpack("QI")
    out = []
    for _ in range(n):
        tube, group = r.str16(), r.opt16()
        ready, taken, age = r.unpack("QQQ")
        out.append(Group(tube, group, ready, taken, age))
    return r.done(Groups(out, total))


def _hours(rflags, r):
    out = []
    for _ in range(r.u32()):
        v = r.unpack("Q" * 15)
        out.append(Hour(*v[:5], Dist(*v[5:10]), Dist(*v[10:15])))
    return r.done(out)


def _history(rflags, r):
    start, step, kinds, n = r.unpack("QIBI")
    series = {}
    for k in range(kinds):
        values = list(r.unpack("I" * n))
        if k < len(HISTORY_KINDS):
            series[HISTORY_KINDS[k]] = values
    if kinds < 6:
        raise E.Malformed("a history of %d kinds" % kinds)
    return r.done(History(start, step, **series))


def _cluster(rflags, r):
    c = Cluster(r.str16(), r.str16(), r.opt16(), r.u32(), r.opt16(), [])
    for _ in range(r.u32()):
        name, client, repl = r.str16(), r.opt16(), r.opt16()
        role, flags, epoch, lsn, lag, until, age = r.unpack("BBQQQqQ")
        c.members.append(Member(name, client, repl, MemberRole(role),
                                bool(flags & 0x01), bool(flags & 0x02),
                                epoch, lsn, lag, until, age))
    return r.done(c)


def _map(rflags, r):
    """The cluster map (docs/protocol.md, "The cluster map")."""
    m = ClusterMap(r.u64(), r.str16(), [], {})
    for _ in range(r.u32()):
        prefix, cluster = r.str16(), r.str16()
        m.entries.append(MapEntry(prefix, cluster,
                                  [r.str16() for _ in range(r.u8())]))
    for _ in range(r.u32()):
        name, leader = r.str16(), r.str16()
        m.clusters[name] = MapCluster(leader,
                                      [r.str16() for _ in range(r.u32())])
    return r.done(m)


def _map_entry(prefix, cluster, draining):
    draining = list(draining)
    return (str16(prefix or "") + str16(cluster)
            + struct.pack("<B", len(draining))
            + b"".join(str16(d) for d in draining))


def _switchover(rflags, r):
    return r.done(Switchover(r.str16(), r.u64()))


def _page(limit):
    def decode(rflags, r):
        tasks = _tasks(rflags, r)
        return TaskPage(tasks, tasks[-1].id if len(tasks) >= limit and
                        tasks else None)
    return decode


# ---- writing ------------------------------------------------------------


def str16(s):
    b = s.encode() if isinstance(s, str) else bytes(s or b"")
    if len(b) > 0xFFFF:
        raise E.Invalid("a text of %d bytes: at most 65535" % len(b))
    return struct.pack("<H", len(b)) + b


def blob(b):
    b = b.encode() if isinstance(b, str) else bytes(b)
    return struct.pack("<I", len(b)) + b


def _put_fields(tube, payload, priority=1024, delay_ms=0, at=None, ttr_ms=0,
                max_attempts=0, period_ms=0, key=None, replace=False,
                version=None, debounce_ms=0, throttle_ms=0, group=None,
                after=(), after_keys=(), on_parent_failure="fail",
                batch=None):
    """(flags, fields) of one put or batch item."""
    if debounce_ms < 0 or throttle_ms < 0:  # the server checks the rest
        raise E.Invalid("debounce_ms, throttle_ms: a window of 1 ms to "
                        "30 days")
    ext = _after_fields(list(after or ()), list(after_keys or ()),
                        on_parent_failure, batch)
    flags = ((_PUT_REPLACE if replace else 0) | (_PUT_AT if at else 0)
             | (_PUT_IF_NEWER if version is not None else 0)
             | (_PUT_DEBOUNCE if debounce_ms else 0)
             | (_PUT_THROTTLE if throttle_ms else 0)
             | (_PUT_GROUP if group else 0) | (_PUT_EXT if ext else 0))
    body = (str16(tube) + struct.pack("<IQQIQ", priority, at or delay_ms,
                                      ttr_ms, max_attempts, period_ms)
            + str16(key or "") + blob(payload))
    if version is not None:
        body += struct.pack("<Q", version)
    if debounce_ms:
        body += struct.pack("<Q", debounce_ms)
    if throttle_ms:
        body += struct.pack("<Q", throttle_ms)
    if group:
        body += str16(group)
    return flags, body + ext


def _after_fields(after, keys, rule, batch=None):
    """A put's tagged fields (docs/protocol.md, put): its parents by id
    (tag 1, with the rule), by key (tag 2), its batch (tag 3); b"" when
    it has none."""
    bt = b""
    if batch:
        name = batch.encode() if isinstance(batch, str) else bytes(batch)
        if len(name) > 200:
            raise E.Invalid("batch: a name of 1-200 bytes")
        bt = struct.pack("<BI", 3, len(name)) + name
    if not after and not keys:
        return struct.pack("<I", len(bt)) + bt if bt else b""
    if rule not in _RULES:
        raise E.Invalid("on_parent_failure: fail, ignore or cancel, not %r"
                        % (rule,))
    if len(after) + len(keys) > AFTER_MAX:
        raise E.LimitExceeded("%d parents: a task waits for at most %d"
                      % (len(after) + len(keys), AFTER_MAX))
    if any(not isinstance(i, int) or i < 1 for i in after):
        raise E.Invalid("after: task ids of at least 1")
    tags = struct.pack("<BIB", 1, 1 + 8 * len(after), _RULES.index(rule))
    tags += struct.pack("<%dQ" % len(after), *after)
    if keys:
        kb = struct.pack("<H", len(keys)) + b"".join(str16(k) for k in keys)
        tags += struct.pack("<BI", 2, len(kb)) + kb
    tags += bt
    return struct.pack("<I", len(tags)) + tags


def _lease(tid, lease, force):
    if not lease and not force:
        raise E.Invalid("a lease is needed: the one the take returned "
                        "(force is an operator's override)")
    return struct.pack("<QQ", tid, lease or 0)


def _flag(cond, bit):
    return bit if cond else 0


class Operations:
    """Every operation of docs/protocol.md. Each returns what
    self._do(request) returns: the result, or an awaitable of it."""

    def _do(self, req):
        raise NotImplementedError

    # -- producing

    def put(self, tube, payload, *, priority=1024, delay_ms=0, at=None,
            ttr_ms=0, max_attempts=0, period_ms=0, key=None, replace=False,
            version=None, debounce_ms=0, throttle_ms=0, group=None,
            after=(), after_keys=(), on_parent_failure="fail", batch=None):
        """Puts a task; returns a PutResult. With a key live in the tube,
        nothing is created (created False, the live task's id); replace
        gives that task this content; version (with replace: if_newer)
        replaces only when newer. at: a unix ms time instead of delay_ms.
        With a key, debounce_ms replaces the key's waiting task and makes
        it due that long from now (of a burst only the last runs);
        throttle_ms ignores a put within that long of the key's last
        accepted one (throttled True, the id of that task); 1 ms to 30
        days, one of them, not with replace, version, delay_ms or at.
        group: its fair group (a tenant's id, 1-200 bytes of A-Z a-z 0-9
        _ . : / -, else BadGroup): tasks of equal priority are handed out
        in turn across the tube's groups.
        after, after_keys: the tasks it waits for (ids; keys of tasks of
        the tube; 1..1000 in all): it stays WAITING until each is acked,
        and its take carries their results (Task.parents); an unknown one
        is NotFound. on_parent_failure: "fail" (buried with "task N
        failed: ERROR"), "ignore" (counts as done) or "cancel" (deleted)
        when a parent fails for good.
        batch: the batch it joins (batch_set; BatchClosed once closed).
        A put with a key is retried after a lost connection (safe: the
        key finds the task); one without is not. A keyed put refused
        MovingIn (its tube is moving in from another cluster and the key
        is not here yet: nothing was done) is sent again after 10 ms,
        doubled up to 200 ms, until the timeout."""
        flags, body = _put_fields(tube, payload, priority, delay_ms, at,
                                  ttr_ms, max_attempts, period_ms, key,
                                  replace, version, debounce_ms,
                                  throttle_ms, group, after, after_keys,
                                  on_parent_failure, batch)
        return self._do(Request("put", flags, body, _put_result,
                                safe=bool(key)))

    def put_batch(self, items):
        """Puts many tasks in one request: items are dicts of put's
        arguments (tube, payload, key, ...). Returns one PutResult per
        item; a refused item has its error and id 0, the others are put.
        The items refused MovingIn are sent again by themselves, as put
        does, until the timeout; then they keep that error."""
        items = list(items)
        parts = []
        for item in items:
            flags, fields = _put_fields(**item)
            parts.append(struct.pack("<B", flags) + fields)
        return self._do(Request("put_batch", _MESSAGES,
                                struct.pack("<I", len(parts))
                                + b"".join(parts), _put_results,
                                safe=all(i.get("key") for i in items),
                                parts=tuple(parts)))

    # -- working

    def take(self, tubes, *, wait_ms=0, max=1, detach=False, strict=False,
             durable=False):
        """Takes up to max tasks of the tubes (a name or a list), waiting
        up to wait_ms when none is ready; returns a list of Task (empty
        when none came). The lease belongs to this connection unless
        detach."""
        if isinstance(tubes, (str, bytes)):
            tubes = [tubes]
        flags = (_flag(detach, 0x01) | _flag(strict, 0x02)
                 | _flag(durable, 0x04))
        body = struct.pack("<QIH", wait_ms, max, len(tubes)) + b"".join(
            str16(t) for t in tubes)
        return self._do(Request("take", flags, body, _tasks,
                                wait_ms=wait_ms))

    def ack(self, id, lease, *, to_tube=None, result=None, force=False):
        """Done (deleted, or kept as done; a recurring task is
        rescheduled), or moved to to_tube. result: a text kept with a
        done task, and for the tasks put after it (at most 65535 bytes,
        else ResultTooLarge)."""
        if result is not None and len(
                result.encode() if isinstance(result, str) else result
        ) > RESULT_MAX:
            raise E.ResultTooLarge("a result of at most %d bytes"
                                   % RESULT_MAX)
        flags = (_LEASE_REPORT | _flag(result is not None, 0x01)
                 | _flag(force, _LEASE_FORCE))
        body = _lease(id, lease, force) + str16(to_tube or "")
        if result is not None:
            body += str16(result)
        return self._do(Request("ack", flags, body, _after))

    def release(self, id, lease, *, delay_ms=0, priority=None, force=False,
                front=False):
        """Back to ready, or delayed by delay_ms; priority: a new one.
        front: ready at once at the place it had before the take (its
        original order among the tasks of its priority), not behind the
        tasks already due; not with delay_ms."""
        flags = (_LEASE_REPORT | _flag(priority is not None, 0x01)
                 | _flag(front, 0x02) | _flag(force, _LEASE_FORCE))
        body = _lease(id, lease, force) + struct.pack("<QI", delay_ms,
                                                      priority or 0)
        return self._do(Request("release", flags, body, _after))

    def untake(self, id, lease):
        """The take of lease undone, as if it never happened: the task
        waits again where it was before it, its attempt uncounted, its
        last error unchanged (release with untake). For a task taken and
        not worked on; the lease holder's only. Raises Malformed from a
        server older than it."""
        body = _lease(id, lease, False) + struct.pack("<QI", 0, 0)
        return self._do(Request("release", _LEASE_REPORT | 0x04, body,
                                _after))

    def fail(self, id, lease, error="", *, delay_ms=None, fatal=False,
             force=False):
        """Failed with error (its last error): retried after the backoff
        (or delay_ms), buried at max_attempts, or at once when fatal."""
        flags = (_LEASE_REPORT | _flag(delay_ms is not None, 0x01)
                 | _flag(fatal, 0x02) | _flag(force, _LEASE_FORCE))
        body = (_lease(id, lease, force) + struct.pack("<Q", delay_ms or 0)
                + str16(error))
        return self._do(Request("fail", flags, body, _after))

    def touch(self, id, lease, *, force=False):
        """Extends the lease by the task's ttr from now."""
        return self._do(Request("touch", _flag(force, _LEASE_FORCE),
                                _lease(id, lease, force), _after))

    def bury(self, id, lease, *, error=None, force=False):
        """Parks the task until kicked; error: its last error."""
        flags = (_LEASE_REPORT | _flag(error is not None, 0x01)
                 | _flag(force, _LEASE_FORCE))
        body = _lease(id, lease, force)
        if error is not None:
            body += str16(error)
        return self._do(Request("bury", flags, body, _after))

    def ack_batch(self, items):
        """Acks many (id, lease) pairs at once: one ItemResult each."""
        items = list(items)
        body = struct.pack("<I", len(items)) + b"".join(
            struct.pack("<QQ", i, lease) for i, lease in items)
        return self._do(Request("ack_batch", _MESSAGES, body,
                                _items([i for i, _ in items])))

    # -- managing tasks

    def kick(self, tube, n=1, *, delayed=False):
        """Up to n buried tasks (or, with delayed and none buried, delayed
        ones) back to ready; returns how many."""
        return self._do(Request("kick", _flag(delayed, 0x01),
                                str16(tube) + struct.pack("<I", n), _u64))

    def kick_id(self, id):
        return self._do(Request("kick_id", 0, struct.pack("<Q", id),
                                _after))

    def delete(self, id):
        return self._do(Request("delete", 0, struct.pack("<Q", id),
                                _nothing))

    def delete_key(self, tube, key):
        """Deletes the task with that key in tube; returns its id."""
        return self._do(Request("delete_key", 0x01, str16(key) + str16(tube),
                                _u64))

    def delete_batch(self, ids):
        ids = list(ids)
        body = struct.pack("<I", len(ids)) + b"".join(
            struct.pack("<Q", i) for i in ids)
        return self._do(Request("delete_batch", _MESSAGES, body,
                                _items(ids)))

    def cancel_batch(self, ids):
        """Cancels many tasks by id, each on its own: one ItemResult
        each (NotFound for an unknown or finished one)."""
        ids = list(ids)
        body = struct.pack("<I", len(ids)) + b"".join(
            struct.pack("<Q", i) for i in ids)
        return self._do(Request("cancel", _MESSAGES, body, _items(ids),
                                safe=True))

    def cancel(self, id):
        """Cancels a task: a ready, delayed or buried one is deleted at
        once; a taken one goes when its lease ends, and its holder's
        touch, release, fail and bury raise Cancelled. Raises NotFound
        for an unknown or finished task."""
        body = struct.pack("<IQ", 1, id)

        def one(rflags, r):
            err = _items([id])(rflags, r)[0].error
            if err is not None:
                raise err
            return None
        return self._do(Request("cancel", _MESSAGES, body, one, safe=True))

    def wait(self, id, timeout_ms=0):
        """How task id stands: an Outcome, final once it ended (done
        with its result, or failed for good), else its state when
        timeout_ms (at most an hour) passed first. The outcome of a task
        that ended is kept by the server for its dedup window (10 minutes
        by default), so a late wait still gets it. NotFound: no such
        task."""
        if timeout_ms < 0 or timeout_ms > WAIT_MAX_MS:
            raise E.Invalid("wait: the timeout is 0 to 3600000 ms")
        return self._do(Request("wait", 0, struct.pack("<QQ", id,
                                                      timeout_ms),
                                _outcome, safe=True, wait_ms=timeout_ms))

    def delete_where(self, tube, state, older_ms):
        """Deletes the tube's tasks in state at least older_ms old."""
        return self._do(Request("delete_where", 0, str16(tube)
                                + struct.pack("<BQ", state, older_ms), _u64))

    def flush(self, tube):
        return self._do(Request("flush", 0, str16(tube), _u64))

    def update(self, id, *, priority=None, delay_ms=None, at=None,
               ttr_ms=None, max_attempts=None, payload=None):
        """Changes the fields given of a task in place."""
        flags = (_flag(priority is not None, 0x01)
                 | _flag(delay_ms is not None, 0x02) | _flag(at is not None,
                                                             0x04)
                 | _flag(ttr_ms is not None, 0x08)
                 | _flag(max_attempts is not None, 0x10)
                 | _flag(payload is not None, 0x20))
        when = at if at is not None else delay_ms
        body = struct.pack("<QIQQI", id, priority or 0, when or 0,
                           ttr_ms or 0, max_attempts or 0) + blob(
            payload or b"")
        return self._do(Request("update", flags, body, _after))

    def job(self, verb, id, *, priority=0, delay_ms=0):
        """A beanstalk verb on a task (Verb); returns the task, or None
        once deleted."""
        body = struct.pack("<BQIQ", verb, id, priority, delay_ms)
        return self._do(Request("job", 0, body, lambda f, r: (
            _tasks(f, r) or [None])[0]))

    def release_all(self, tube):
        return self._do(Request("release_all", 0, str16(tube), _u64))

    # -- reading

    def peek(self, id):
        return self._do(Request("peek", 0, struct.pack("<Q", id),
                                _one_task, safe=True))

    def peek_key(self, tube, key):
        """The task with that key in tube (keys are per tube)."""
        return self._do(Request("peek_key", 0x01, str16(key) + str16(tube),
                                _one_task, safe=True))

    def peek_next(self, tube, state=State.READY):
        """The task of tube that would leave state next."""
        return self._do(Request("peek_next", 0, str16(tube) + bytes([state]),
                                _one_task, safe=True))

    def list(self, tube, *, state=0, order=Order.ID, limit=100,
             payloads=False, after=None):
        """A TaskPage of up to limit tasks of tube in state (0: any).
        after: a cursor (the id order only); the page's next is the
        cursor of the next page."""
        flags = _flag(payloads, 0x01) | _flag(after is not None, 0x02)
        body = str16(tube) + struct.pack("<BBI", state, order, limit)
        if after is not None:
            body += struct.pack("<Q", after)
        return self._do(Request("list", flags, body, _page(limit),
                                safe=True))

    def stats(self, tube="", *, settings=True, durations=False):
        """The node's and the tubes' statistics (every tube's when tube is
        empty), with each tube's settings."""
        flags = _flag(settings, 0x01) | _flag(durations, 0x02)
        return self._do(Request("stats", flags, str16(tube), _stats,
                                safe=True))

    def stats_page(self, limit, after=0, *, settings=True):
        """A part of every tube's stats: node["tubes_next"] is the next
        cursor (0: none)."""
        return self._do(Request("stats", 0x04 | _flag(settings, 0x01),
                                str16("") + struct.pack("<II", limit, after),
                                _stats, safe=True))

    def stats_top(self, limit=0, *, settings=True):
        """The limit deepest tubes' stats."""
        return self._do(Request("stats", 0x08 | _flag(settings, 0x01),
                                str16("") + struct.pack("<I", limit), _stats,
                                safe=True))

    def stats_hourly(self, tube=""):
        return self._do(Request("stats_hourly", 0, str16(tube), _hours,
                                safe=True))

    def history(self, tube="", secs=60):
        return self._do(Request("history", 0, str16(tube)
                                + struct.pack("<I", secs), _history,
                                safe=True))

    def errors(self, tube, *, ids=True, state=None):
        """The last errors of the tube's buried tasks (a retried task
        keeps its last error), grouped, most frequent first; state: of
        the tasks in that State instead, 0 of every live task."""
        other = state is not None and int(state) != 4
        body = str16(tube) + (struct.pack("<B", int(state)) if other
                              else b"")
        return self._do(Request("errors", _flag(ids, 0x01)
                                | _flag(other, 0x02), body,
                                _error_groups, safe=True))

    def groups(self, tube, limit=100):
        """The tube's fair groups with ready or taken tasks, the largest
        backlog first: the first limit (1..1000) and the total (Groups).
        tube "" lists the groups of every tube that has fair groups."""
        if not 1 <= limit <= 1000:
            raise ValueError("groups: limit is 1..1000, not %r" % (limit,))
        return self._do(Request("groups", 0, str16(tube)
                                + struct.pack("<I", limit), _groups,
                                safe=True))

    # -- tubes

    def pause(self, tube, duration_ms, *, create=False):
        """No task of tube is handed out for duration_ms (0: resume);
        returns the unix ms the pause ends."""
        return self._do(Request("pause", _flag(create, 0x01), str16(tube)
                                + struct.pack("<Q", duration_ms), _u64))

    def tube_set(self, tube, *, ttr_ms=None, max_attempts=None,
                 backoff=None, keep_done_ms=None, lost_lease_immediate=None,
                 dead_letter=None, unset=Setting(0)):
        """Sets the settings given (backoff: (base_ms, cap_ms)); those in
        unset (Setting bits) go back to the server's defaults. Returns
        the Settings in force."""
        s = (_flag(ttr_ms is not None, Setting.TTR)
             | _flag(max_attempts is not None, Setting.MAX_ATTEMPTS)
             | _flag(backoff is not None, Setting.BACKOFF)
             | _flag(keep_done_ms is not None, Setting.KEEP_DONE)
             | _flag(lost_lease_immediate is not None, Setting.LOST_LEASE)
             | _flag(dead_letter is not None, Setting.DEAD_LETTER))
        base, cap = backoff or (0, 0)
        body = (str16(tube) + struct.pack("<BBQIQQQB", int(unset), s,
                                          ttr_ms or 0, max_attempts or 0,
                                          base, cap, keep_done_ms or 0,
                                          bool(lost_lease_immediate))
                + str16(dead_letter or ""))
        return self._do(Request("tube_set", 0, body, _settings, safe=True))

    def tube_show(self, tube):
        return self._do(Request("tube_show", 0, str16(tube), _settings,
                                safe=True))

    def tube_limit(self, tube, *, rate=None, burst=0, concurrency=None,
                   unset=Limit(0)):
        """Sets a tube's flow limits: rate as "100/s" (also /m, /h; the
        unit is required) with its burst (0: the server's, 100 ms of
        tokens), concurrency as tasks taken at once; those in unset
        (Limit bits) are lifted. The tube must exist (NotFound); a bad
        limit is Invalid and changes nothing. Returns the Limits."""
        n, per = parse_rate(rate) if rate is not None else (0, 0)
        s = (_flag(rate is not None, Limit.RATE)
             | _flag(concurrency is not None, Limit.CONCURRENCY))
        body = (str16(tube) + struct.pack("<BBQIQQQB", 0, 0, 0, 0, 0, 0, 0,
                                          0) + str16("")
                + struct.pack("<BBIIII", int(unset), s, n, per,
                              burst if rate is not None else 0,
                              concurrency or 0))
        return self._do(Request("tube_set", 0x01, body, _limits, safe=True))

    def tube_limits(self, tube):
        """A tube's flow limits and where they stand."""
        return self._do(Request("tube_show", 0x01, str16(tube), _limits,
                                safe=True))

    def _group_op(self, tube, group, verb, rate=None, burst=0,
                  concurrency=None, unset=Limit(0)):
        n, per = parse_rate(rate) if rate is not None else (0, 0)
        s = (_flag(rate is not None, Limit.RATE)
             | _flag(concurrency is not None, Limit.CONCURRENCY))
        body = (str16(tube) + str16(group or "")
                + struct.pack("<BBBIIII", _GROUP_VERBS[verb], int(unset), s,
                              n, per, burst if rate is not None else 0,
                              concurrency or 0))
        # setting values is idempotent: safe to send again
        return self._do(Request("group", 0, body, _group, safe=True))

    def group_set(self, tube, group=None, *, rate=None, burst=0,
                  concurrency=None, unset=Limit(0)):
        """Sets the limits of one fair group of a tube (its own, which
        replace every group's limit by limit), or with group None those
        every named group of the tube gets: rate as "10/s" (also /m, /h)
        with its burst (0: 100 ms of tokens), concurrency as tasks taken
        at once; those in unset (Limit bits) are lifted. The tube must
        exist (NotFound); a bad limit is Invalid, a bad group name
        BadGroup, and nothing changes. Returns the GroupLimits."""
        return self._group_op(tube, group, "set", rate, burst, concurrency,
                              unset)

    def group_clear(self, tube, group):
        """Lifts one group's own limits (its pause stays)."""
        return self._group_op(tube, group, "set",
                              unset=Limit.RATE | Limit.CONCURRENCY)

    def group_pause(self, tube, group):
        """Pauses one fair group: its tasks stay ready, the other groups'
        are handed out, until group_resume."""
        return self._group_op(tube, group, "pause")

    def group_resume(self, tube, group):
        return self._group_op(tube, group, "resume")

    def group_limits(self, tube, group=None):
        """A tube's group limits and, with group, where that group
        stands (GroupLimits)."""
        return self._group_op(tube, group, "show")

    def tube_delete(self, tube, *, force=False):
        """Removes a tube (with force, its tasks too); returns the tasks
        deleted."""
        return self._do(Request("tube_delete", _flag(force, 0x01),
                                str16(tube), _u64))

    # -- schedules

    def schedule_set(self, name, tube, cron, payload, *, tz="",
                     catch_up="one", priority=1024, ttr_ms=0,
                     max_attempts=0, paused=False):
        """Creates or replaces schedule name: at each slot of cron ("M H
        DOM MON DOW" or @daily, ...; local times of zoneinfo zone tz,
        UTC when empty) a task with payload is put into tube, once per
        slot across restarts and failovers. catch_up: "none", "one" or
        "all", for the slots missed while no leader ran. A bad expression
        or an unknown zone is BadSchedule, naming it. Returns the
        Schedule."""
        if catch_up not in _CATCH_UP:
            raise E.Invalid("catch_up is none, one or all")
        body = (str16(name) + str16(tube) + str16(cron) + str16(tz)
                + struct.pack("<BIQI", _CATCH_UP.index(catch_up), priority,
                              ttr_ms, max_attempts) + blob(payload))
        return self._do(Request("sched_set", _flag(paused, 0x01), body,
                                _one_schedule, safe=True))

    def schedule_list(self):
        """Every schedule, by name, with its next firing (payload
        None)."""
        return self._do(Request("sched_list", 0, str16(""), _schedules,
                                safe=True))

    def schedule_show(self, name):
        """One schedule with its payload (NotFound)."""
        return self._do(Request("sched_list", 0x02, str16(name),
                                _one_schedule, safe=True))

    def schedule_pause(self, name):
        return self._do(Request("sched_ctl", 0, str16(name) + b"\x01",
                                _one_schedule))

    def schedule_resume(self, name):
        """The slots of the pause are skipped; those after it fire."""
        return self._do(Request("sched_ctl", 0, str16(name) + b"\x02",
                                _one_schedule))

    def schedule_delete(self, name):
        """The schedule goes; the tasks it put stay (NotFound)."""
        return self._do(Request("sched_ctl", 0, str16(name) + b"\x03",
                                _nothing_list))

    # -- batches

    def batch_show(self, name):
        """A batch's counts by state, its start and end (NotFound)."""
        return self._do(Request("batch_show", 0, str16(name), _batch,
                                safe=True))

    def batches(self, limit=100):
        """The batches the server holds, {"batches": [...], "total": N}:
        the open ones first (the latest started first), then the ended
        ones kept for the dedup window (the latest ended first); at most
        limit (1..1000), each as batch_show gives it."""
        if not 1 <= limit <= 1000:
            raise E.Invalid("batches: limit 1..1000")
        return self._do(Request("batch_show", _BATCH_LIST,
                                struct.pack("<I", limit), _batch_list,
                                safe=True))

    def batch_of(self, id):
        """The name of the batch task id is in while it is live there, or
        None (NotFound: no such task)."""
        return self._do(Request("peek", _PEEK_BATCH, struct.pack("<Q", id),
                                _task_batch, safe=True))

    def batch_close(self, name):
        """Closes the batch: it takes no more tasks and ends once none is
        live, its callbacks put then (NotFound: no such batch). Returns
        the batch."""
        return self.batch_set(name, close=True)

    def batch_set(self, name, *, on_success=None, on_complete=None,
                  close=False):
        """Sets a batch's callbacks, each (tube, payload) or a tube ("":
        remove it; None: leave it), and closes it with close: it takes
        no more tasks and ends when none is live; then on_success (every
        task acked) and on_complete are put once, their payload a JSON
        object of the counts. Returns the batch."""
        what, fields = 0, b""
        for bit, cb in ((0x01, on_success), (0x02, on_complete)):
            tube, payload = "", b""
            if cb is not None:
                what |= bit
                tube, payload = (cb, b"") if isinstance(cb, str) else cb
            fields += str16(tube) + blob(payload)
        if close:
            what |= 0x04
        if not what:
            raise E.Invalid("batch_set: on_success, on_complete or close")
        return self._do(Request("batch_set", 0,
                                str16(name) + bytes([what]) + fields, _batch))

    def batch_cancel(self, name):
        """Cancels a batch: closes it and cancels each of its live tasks
        (a taken one when its lease ends, its worker's touch refused with
        Cancelled); it ends then and puts on_complete alone. Returns the
        batch (NotFound: no such batch)."""
        empty = str16("") + blob(b"")
        return self._do(Request("batch_set", 0,
                                str16(name) + bytes([0x08]) + empty + empty,
                                _batch))

    # -- the node

    def snapshot(self):
        return self._do(Request("snapshot", 0, b"", _u64))

    def promote(self):
        return self._do(Request("promote", 0, b"", _u64))

    def follow(self, url):
        return self._do(Request("follow", 0, str16(url), _nothing))

    def cluster(self):
        return self._do(Request("cluster", 0, b"", _cluster, safe=True))

    def switchover(self, node, timeout_ms=0):
        return self._do(Request("switchover", 0, str16(node)
                                + struct.pack("<I", timeout_ms),
                                _switchover))


    # -- the cluster map (docs/scaling.md)

    def cluster_map(self):
        """The cluster map the node serves (a ClusterMap): its entries,
        revision and each cluster's members. A node without --etcd
        raises BadState."""
        return self._do(Request("map", 0, b"", _map, safe=True))

    def map_set(self, prefix, cluster, draining=()):
        """Maps the tubes of prefix ("" the default) to cluster, with the
        draining clusters still holding some (the admin's with --auth).
        Returns the map's new revision."""
        return self._do(Request("map_set", 0,
                                _map_entry(prefix, cluster, draining), _u64,
                                safe=True))

    def map_delete(self, prefix):
        """Removes the entry of prefix; NotFound when there is none.
        Returns the map's new revision."""
        return self._do(Request("map_delete", 0, str16(prefix or ""), _u64))


def auth_request(token):
    """The auth request a connection opens with."""
    return Request("auth", 0, str16(token), _nothing)


__all__ = ["Operations", "Request", "Reader", "reply", "auth_request"]
