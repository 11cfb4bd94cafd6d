"""A tube moved between clusters (docs/scaling.md, "Move a tube"), as
`sluice tube move` and libsluice's sluice_router_move do it: the messages
(move_out 0x35, move_in 0x36, move_end 0x37: docs/protocol.md, "Moving a
tube") and the mover that Router.move runs.

The move's state lives where it cannot be lost, so the mover keeps none
of its own and running it again resumes it: the map entry's draining mark
(in etcd) says a move is under way and from where; the source's log holds
the batch held for the mover until it is dropped (a hold sent again
answers that batch); the target's log holds the source ids it copied, so
a batch copied twice makes nothing twice.

Around the rounds (as libsluice's move.c): the tube's settings and its
groups' (every group's, and each group's own, found by op group's verb
next) are copied first; the reservations of its keys at the source (keys
of tasks completed there, in their dedup window: move_out's keys, then
move_in of each as a task in state done) before the rounds and again
after them, when the source holds no task of the tube and no ack can
make another.

The key window (docs/scaling.md, "Keys"): before the map changes the
source is marked keep (its drain ends only by the mover's move_end) and
the target pend (a keyed put of the tube is refused MovingIn, which the
clients send again); once the source knows the map, the keys of its live
tasks of the tube go to the target as placeholders (each under the id its
copy will get: a put of the key answers that id), then the target takes
keyed puts (ready). A resumed move marks both again (nothing changes if
they are) and sends the keys again (those held answer their ids). The
tubes under the moved one go first, the moved tube last: its move_end at
the source lifts the keep mark.

Rounds, per source: hold up to `batch` tasks at the source (one commit),
copy them to the target (one commit), drop them at the source (one
commit). A round that holds nothing while the source still has taken
tasks of the tube waits for them (50 ms, again): their acks are honoured
at the source, and an expired lease makes its task ready there for a
later round. Every request is safe to send again: a node gone (a
failover) is asked again, with the map read again, until timeout.
"""

import re
import struct
import time
from dataclasses import dataclass, replace

from . import errors as E
from .codec import Request, _group, _settings_body, _task, str16, blob

BATCH_DEFAULT = 500
MOVE_MAX = 1000
TIMEOUT_DEFAULT_S = 60.0
_HOLD, _DROP, _KEYS, _LIVE, _KEEP = 1, 2, 3, 4, 5  # move_out's kinds
_PLACE, _PEND, _READY = 0x01, 0x02, 0x04  # move_in's, in the header's flags
MOVE_KEYS_PENDING, MOVE_KEYS_HELD = 1, 2  # MoveProgress.stage
_TS_TTR = 0x01  # tube_set's unset bit of the ttr: makes the tube
_TUBE = re.compile(r"[A-Za-z0-9_.:/-]{1,200}\Z")
_CLUSTER = re.compile(r"[A-Za-z0-9_.:-]{1,64}\Z")
_GROUP = 0x20  # a task record's flag: its group follows
_VERSIONS = 0x08  # a task record's flag: its versions follow
_DONE = 5  # a task record's state: a key's reservation in a move
_GROUP_SET, _GROUP_PAUSE, _GROUP_NEXT = 1, 2, 4  # op group's verbs


@dataclass
class MoveProgress:
    """How a move stands (Router.move's report and result): the tube
    being copied and from where, tasks copied (made, or folded into a
    task of their key the target had) and dropped at their source,
    rounds, rounds that found only taken tasks at the source (or a
    workflow of the tube under way there: waits), the map's revision
    after the last change, done: the map names the target alone; keys:
    the key reservations the target holds for the sources' (keys of
    tasks completed there, within their dedup window), as of the last
    pass, after the tasks; groups: the groups whose own settings were
    copied; stage: the key window, MOVE_KEYS_PENDING after the map
    change until the source's live keys are held at the target (a keyed
    put there is sent again meanwhile), MOVE_KEYS_HELD once they are,
    just before the target takes keyed puts, 0 otherwise (as libsluice's
    struct sluice_move_progress)."""
    tube: str
    source: str
    target: str
    copied: int = 0
    dropped: int = 0
    batches: int = 0
    waits: int = 0
    revision: int = 0
    done: bool = False
    keys: int = 0
    groups: int = 0
    stage: int = 0


# ---- messages ------------------------------------------------------------


def _held(rflags, r):
    if rflags & 0x01:
        return r.done([_task(r) for _ in range(r.u32())])
    r.u32()
    return r.done([])


def _copies(rflags, r):
    n = r.u32()
    if n and not rflags & 0x02:
        raise E.Malformed("move_in's reply without its results")
    return r.done([r.unpack("HQ") for _ in range(n)])


def _count(rflags, r):
    return r.done(r.u32())


def _plain(t):
    """A task record as the target copies it: what a copy carries (the
    fields as the hold gave them), none of what describes the source's
    lease, pending content or graph."""
    inner = (struct.pack("<QQBBIIIQQQQQQQI", t.id, 0, int(t.state),
                         _GROUP if t.group else 0, t.priority, t.attempts,
                         t.max_attempts, t.ttr_ms, t.run_at, t.period_ms,
                         t.created_at, t.updated_at, 0, 0, len(t.payload))
             + str16(t.tube) + str16(t.key or "") + str16(t.last_error or "")
             + blob(t.payload))
    if t.group:
        inner += str16(t.group)
    return struct.pack("<I", len(inner)) + inner


def _reservation(t):
    """A key's reservation (as move_out's keys gave it) as the target
    takes it: state done, the task's id and key, run_at the end of the
    reservation, its version; no payload."""
    version = getattr(t, "version", 0) or 0
    inner = (struct.pack("<QQBBIIIQQQQQQQI", t.id, 0, _DONE,
                         _VERSIONS if version else 0, 0, 0, 0, 0, t.run_at,
                         0, 0, 0, 0, 0, 0)
             + str16(t.tube) + str16(t.key or "") + str16("") + blob(b""))
    if version:
        inner += struct.pack("<QQ", version, 0)
    return struct.pack("<I", len(inner)) + inner


def _limits(rflags, r):
    _settings_body(r, r.str16())
    if not rflags & 0x01:
        raise E.Malformed("the reply carries no limits")
    own, rate, per, burst, conc = r.unpack("BIIII")
    r.unpack("QQQ")
    return r.done((own, rate, per, burst, conc))


_NO_SETTINGS = struct.pack("<BBQIQQQB", 0, 0, 0, 0, 0, 0, 0, 0) + str16("")


class MoveOperations:
    """The move's messages, step by step (Router.move sends them; the
    admin's role with --auth). A mixin of the clients: self._do sends."""

    def move_hold(self, tube, max):
        """Holds up to max (1-1000) of tube's ready, delayed and buried
        tasks at a source (or answers the batch held before and not
        dropped): the Tasks, each with its state before the hold and the
        hold's lease."""
        return self._do(Request("move_out", 0, bytes([_HOLD]) + str16(tube)
                                + struct.pack("<I", max), _held, safe=True))

    def move_keys(self, tube, max, after=0):
        """The reservations of tube's keys at a source (keys of tasks
        completed there, within their dedup window) of tasks whose ids
        are above after, lowest first, up to max (1-1000): Tasks in state
        done, run_at the reservation's end. Nothing changes."""
        return self._move_page(_KEYS, tube, max, after)

    def move_keys_in(self, tube, source, reservations):
        """Makes the reservations move_keys gave at a target, each until
        the same time: per one (status, id): 0 and the id it carries (0:
        it had expired), or the code that refused it."""
        return self._move_in(0, tube, source, reservations, _reservation)

    def move_keep(self, tube):
        """Marks a source keep for tube: its drain of the tube ends only
        by the mover's move_end there. 1: marked now, 0: it was."""
        return self._do(Request("move_out", 0, bytes([_KEEP]) + str16(tube),
                                _count, safe=True))

    def move_live(self, tube, max, after=0):
        """The keys of tube's live tasks at a source (ready, delayed,
        buried, taken, waiting) of ids above after, lowest first, up to
        max (1-1000): Tasks with their id, tube, key and state now, no
        payload; none: no more. Nothing changes."""
        return self._move_page(_LIVE, tube, max, after)

    def move_place(self, tube, source, tasks):
        """Holds the keys of tasks (as move_live gave them) at a target as
        placeholders, each under the id its copy will get (a put of the
        key answers it): per one (status, id). Sent again, the same
        ids."""
        return self._move_in(_PLACE, tube, source, tasks, _plain)

    def move_pend(self, tube, source):
        """A target refuses keyed puts of tube (and of the tubes under
        it) with MovingIn until move_ready for that source. 1: marked
        now, 0: it was."""
        return self._move_in(_PEND, tube, source, (), None, _count)

    def move_ready(self, tube, source):
        """The keys of tube from source are held at a target: keyed puts
        are taken again. 1: the mark went now, 0: there was none."""
        return self._move_in(_READY, tube, source, (), None, _count)

    def move_drop(self, tube, pairs):
        """Drops the held tasks of pairs [(id, lease)]: how many went."""
        pairs = list(pairs)
        body = (bytes([_DROP]) + str16(tube) + struct.pack("<I", len(pairs))
                + b"".join(struct.pack("<QQ", i, lease)
                           for i, lease in pairs))
        return self._do(Request("move_out", 0, body, _count, safe=True))

    def move_in(self, tube, source, tasks):
        """Copies tasks (as a hold gave them) into a target: per task
        (status, id): 0 and its copy's id, or the code that refused it."""
        return self._move_in(0, tube, source, tasks, _plain)

    def move_end(self, tube):
        """The move of tube is over here: a target forgets its source ids
        (their count), a source lifts its mark."""
        return self._do(Request("move_end", 0, str16(tube), _count,
                                safe=True))

    def _move_page(self, kind, tube, max, after):
        return self._do(Request("move_out", 0, bytes([kind]) + str16(tube)
                                + struct.pack("<IQ", max, after), _held,
                                safe=True))

    def _move_in(self, flags, tube, source, items, enc, parse=_copies):
        items = list(items)
        body = (str16(tube) + str16(source) + struct.pack("<I", len(items))
                + b"".join(enc(t) for t in items))
        return self._do(Request("move_in", flags, body, parse, safe=True))

    def _move_limits(self, tube):
        return self._do(Request("tube_show", 0x01, str16(tube), _limits,
                                safe=True))

    def _move_set_limits(self, tube, lim):
        body = str16(tube) + _NO_SETTINGS + struct.pack("<BBIIII", 0, *lim)
        return self._do(Request("tube_set", 0x01, body, _limits, safe=True))

    def _move_group(self, tube, group, verb, lim=(0, 0, 0, 0, 0)):
        body = (str16(tube) + str16(group or "")
                + struct.pack("<BBBIIII", verb, 0, *lim))
        return self._do(Request("group", 0, body, _group, safe=True))

    def _move_make_tube(self, tube):
        body = str16(tube) + struct.pack("<BBQIQQQB", _TS_TTR, 0, 0, 0, 0, 0,
                                         0, 0) + str16("")
        return self._do(Request("tube_set", 0, body,
                                lambda f, r: r.done(_settings_body(
                                    r, r.str16())), safe=True))


# ---- the mover -----------------------------------------------------------

_TRANSIENT = (E.ConnectionLost, E.TimedOut, E.NotLeader, E.ShuttingDown,
              E.TooFewReplicas, E.StaleEpoch, E.LogFailed)


class Mover:
    def __init__(self, router, tube, target, batch, timeout, wait, report):
        self.r = router
        self.timeout = timeout if timeout and timeout > 0 else \
            TIMEOUT_DEFAULT_S
        self.batch = min(batch if batch and batch > 0 else BATCH_DEFAULT,
                         MOVE_MAX)
        self.wait = wait
        self.on_report = report
        self.p = MoveProgress(tube, "", target)

    def report(self):
        if self.on_report is not None:
            self.on_report(replace(self.p))

    def call(self, name, fn):
        """fn(client of cluster name), again while the failure is
        transient, until the timeout."""
        until = time.monotonic() + self.timeout
        while True:
            try:
                return fn(self.r.client(name))
            except _TRANSIENT as e:
                if time.monotonic() >= until:
                    raise type(e)("cluster %s: %s" % (name, e.message),
                                  e.leader) from None
            time.sleep(0.1)
            try:
                self.r.cluster_map(refresh=True)  # members may have changed
            except E.SluiceError:
                pass

    def map_set(self, prefix, cluster, draining):
        until = time.monotonic() + self.timeout
        while True:
            try:
                self.p.revision = self.r._seed.map_set(prefix, cluster,
                                                       draining)
                break
            except _TRANSIENT:
                if time.monotonic() >= until:
                    raise
            time.sleep(0.1)
        self.r.cluster_map(refresh=True)

    def known(self, name, rev):
        """Waits until the leader of cluster name knows the map at rev or
        later: from then on it refuses the tube's puts."""
        until = time.monotonic() + self.timeout
        while True:
            try:  # any failure: again (a node started again has no map)
                if self.r.client(name).cluster_map().revision >= rev:
                    return
                failed = False
            except E.SluiceError:
                failed = True
            if time.monotonic() >= until:
                raise E.TimedOut("cluster %s did not learn the map's "
                                 "revision %d within %.0f s"
                                 % (name, rev, self.timeout))
            time.sleep(0.05)
            if failed:
                try:
                    self.r.cluster_map(refresh=True)  # members may change
                except E.SluiceError:
                    pass

    def target_ok(self, target):
        """The target has a leader the map knows of, and it answers: else
        the move goes no further (a cluster name mistyped would send the
        tube's puts nowhere)."""
        mc = self.r.cluster_map(refresh=False).clusters.get(target)
        if mc is None or not mc.leader:
            raise E.ConnectionLost(
                "cluster %s has no leader in etcd (/sluice/%s/leader): "
                "start its nodes first; the map is left as it was"
                % (target, target))
        try:
            self.r.client(target).cluster_map()
        except E.SluiceError as e:
            raise type(e)("cluster %s does not answer: %s; the map is left "
                          "as it was" % (target, e.message)) from None

    def copy_settings(self, src, dst, tube):
        """The settings and flow limits of tube at src, made dst's."""
        s, d = self.r.client(src), self.r.client(dst)
        conf = s.tube_show(tube)
        o = conf.own
        kw = {}
        if o & 0x01:
            kw["ttr_ms"] = conf.ttr_ms
        if o & 0x02:
            kw["max_attempts"] = conf.max_attempts
        if o & 0x04:
            kw["backoff"] = (conf.backoff_base_ms, conf.backoff_cap_ms)
        if o & 0x08:
            kw["keep_done_ms"] = conf.keep_done_ms
        if o & 0x10:
            kw["lost_lease_immediate"] = conf.lost_lease_immediate
        if o & 0x20:
            kw["dead_letter"] = conf.dead_letter or ""
        if kw:
            d.tube_set(tube, **kw)
        lim = s._move_limits(tube)
        if lim[0]:
            if not kw:
                d._move_make_tube(tube)
            d._move_set_limits(tube, lim)
        self.copy_groups(s, d, tube)

    @staticmethod
    def _made(d, tube, fn):
        """fn() at the target, the tube made first when it has none there
        (its settings were all defaults: nothing made it before)."""
        try:
            return fn()
        except E.NotFound:
            d._move_make_tube(tube)
            return fn()

    def copy_groups(self, s, d, tube):
        """The group settings of tube at the source made the target's:
        every named group's limits, then each group's own limits and
        pause, found one at a time in the order of their names (op
        group's verb next). A group the target has settings for and the
        source not keeps them."""
        after, first = "", True
        while True:
            try:
                g = s._move_group(tube, after, _GROUP_NEXT)
            except E.NotFound:
                return  # no such tube there: no groups
            if first and g.every[0]:
                self._made(d, tube, lambda: d._move_group(
                    tube, "", _GROUP_SET, tuple(g.every)))
            first = False
            if not g.group:
                return
            if g.own[0]:
                self._made(d, tube, lambda: d._move_group(
                    tube, g.group, _GROUP_SET, tuple(g.own)))
            if g.paused:
                self._made(d, tube, lambda: d._move_group(
                    tube, g.group, _GROUP_PAUSE))
            self.p.groups += 1
            after = g.group

    def window_open(self, src, dst, tube, keep=True, pend=True):
        """The key window opens for tube from src: the source keeps its
        drain for the mover (keep), the target refuses keyed puts (pend);
        both idempotent."""
        if keep:
            self.call(src, lambda c: c.move_keep(tube))
        if pend:
            self.call(dst, lambda c: c.move_pend(tube, src))

    def open_and_map(self, sources, target, tube, e):
        """A new move: the target must answer before anything changes (a
        cluster name mistyped would send the tube's puts nowhere); then
        the key window opens, then the map changes. The Router reads the
        map from a node, which knows only the clusters the map names: a
        target it does not name yet is reached once it does, so the map
        changes first (and goes back if the target does not answer) and
        the target's window opens right after (a keyed put that reaches
        it in between is not held back), as libsluice does."""
        late = target not in self.r.cluster_map(refresh=False).clusters
        if not late:
            self.target_ok(target)
        for src in sources:
            self.window_open(src, target, tube, True, not late)
        before = e.cluster if e is not None and e.prefix == tube else None
        self.map_set(tube, target, sources)
        if not late:
            return
        try:
            self.target_ok(target)
        except E.SluiceError:
            # nothing was copied: the map goes back as it was
            try:
                if before:
                    self.r._seed.map_set(tube, before)
                else:
                    self.r._seed.map_delete(tube)
                self.r.cluster_map(refresh=True)
            except E.SluiceError:
                pass
            raise
        for src in sources:
            self.window_open(src, target, tube, False, True)

    def copy_pages(self, src, dst, tube, keys, count=False):
        """A list of tube at src, a page at a time by id, made at dst: the
        keys of its live tasks held as placeholders (keys false; sent
        again, a page answers the ids given before), or the reservations
        of its keys (keys of tasks completed there, within their dedup
        window) made until the same time (keys true; sent again, a page
        makes nothing twice). count: the pass whose reservations the
        progress counts (the last)."""
        after = 0
        while True:
            try:
                page = self.call(src, lambda c: (
                    c.move_keys if keys else c.move_live)(
                        tube, self.batch, after))
            except E.NotFound:
                return
            if not page:
                return
            after = max(after, max(t.id for t in page))
            res = self.call(dst, lambda c: (
                c.move_keys_in if keys else c.move_place)(tube, src, page))
            for t, (status, tid) in zip(page, res):
                if status and keys:
                    raise E.error_for(status, (
                        "cluster %s refused the reservation of a key of "
                        "tube '%s' from %s (run the move again once the "
                        "cause is fixed)") % (dst, tube, src))
                if status:
                    raise E.error_for(status, (
                        "cluster %s refused to hold the key of task %d of "
                        "tube '%s' from %s (keyed puts there wait; run the "
                        "move again once the cause is fixed)")
                        % (dst, t.id, tube, src))
                if tid and count:
                    self.p.keys += 1

    def round(self, src, dst, tube):
        """One round: 1 when tasks were copied, 0 when the source holds
        none of the tube (taken ones too), 2 when only taken ones are
        left."""
        tasks = self.call(src, lambda c: c.move_hold(tube, self.batch))
        if not tasks:
            try:
                t = self.r.client(src).stats(tube).tubes.get(tube)
            except E.NotFound:
                return 0  # the source never had the tube
            except _TRANSIENT:
                return 2
            return 2 if t and (t.taken or t.ready or t.delayed or
                               t.buried) else 0
        res = self.call(dst, lambda c: c.move_in(tube, src, tasks))
        for t, (status, _) in zip(tasks, res):
            if status:
                raise E.error_for(status, (
                    "cluster %s refused the copy of task %d of tube '%s' "
                    "from %s (nothing is lost: it stays held at %s; fix the "
                    "cause and run the move again)")
                    % (dst, t.id, tube, src, src))
        dropped = self.call(src, lambda c: c.move_drop(
            tube, [(t.id, t.lease) for t in tasks]))
        self.p.copied += len(tasks)
        self.p.dropped += dropped
        self.p.batches += 1
        return 1

    def drain(self, src, dst, tube):
        self.p.tube, self.p.source = tube, src
        wait_until = None
        while True:
            rc = self.round(src, dst, tube)
            if rc == 0:
                return
            if rc == 1:
                wait_until = None
                self.report()
                continue
            self.p.waits += 1
            if wait_until is None and self.wait:
                wait_until = time.monotonic() + self.wait
            if wait_until is not None and time.monotonic() >= wait_until:
                raise E.TimedOut("tube '%s' still has taken tasks at %s "
                                 "after %.1f s; run the move again to go on"
                                 % (tube, src, self.wait))
            if self.p.waits % 20 == 1:
                self.report()
            time.sleep(0.05)

    def tubes_of(self, name, prefix):
        """The tubes of cluster name that the entry of prefix governs
        (the longer names it starts), a page of stats at a time."""
        out, after = [], 0
        m = self.r.cluster_map(refresh=False)
        while True:
            st = self.r.client(name).stats_page(1000, after, settings=False)
            for t in st.tubes:
                if t != prefix and t.startswith(prefix):
                    e = m.owner(t)
                    if e is not None and e.prefix == prefix:
                        out.append(t)
            after = st.node.get("tubes_next", 0)
            if not after:
                return sorted(out)

    def move_one(self, src, dst, t):
        """Its settings, its keys' reservations (before the tasks, and
        after, for the keys of the tasks acked there meanwhile), its
        tasks, then the source's mark goes."""
        self.copy_settings(src, dst, t)
        self.copy_pages(src, dst, t, True)
        self.drain(src, dst, t)
        self.copy_pages(src, dst, t, True, True)
        self.call(src, lambda c: c.move_end(t))

    def move_from(self, src, dst, tube):
        # once src takes no more puts of the tube, the keys of its live
        # tasks are held at dst, and dst takes keyed puts; then the
        # reservations, so that a key completed at src is answered at dst
        # as it would have been at src as soon as it can be
        self.p.tube, self.p.source = tube, src
        self.p.stage = MOVE_KEYS_PENDING
        self.report()
        self.known(src, self.p.revision)
        more = self.tubes_of(src, tube)
        for t in [tube] + more:
            self.copy_pages(src, dst, t, False)
        self.p.stage = MOVE_KEYS_HELD
        self.report()
        self.p.stage = 0
        self.call(dst, lambda c: c.move_ready(tube, src))
        self.copy_pages(src, dst, tube, True)
        # the tube itself last: its move_end at src lifts the keep mark
        for t in more + [tube]:
            self.move_one(src, dst, t)
        # the tables (and placeholders left) of the tubes under it at dst
        # go now: another source may move them next
        for t in more:
            self.call(dst, lambda c: c.move_end(t))

    def end_tables(self, dst, tube):
        """The target's tables of source ids for the tube (and the tubes
        its entry governs there) are no longer needed."""
        for t in [tube] + self.tubes_of(dst, tube):
            self.call(dst, lambda c: c.move_end(t))

    def run(self):
        tube, target = self.p.tube, self.p.target
        m = self.r.cluster_map(refresh=True)
        self.p.revision = m.revision
        e = m.owner(tube)
        if e is not None and e.prefix == tube and e.draining:
            # a move (or a drain) under way: resumed
            if e.cluster != target:
                raise E.BadState(
                    "tube '%s' is moving to %s already (the map drains it "
                    "from %s): finish that move first"
                    % (tube, e.cluster, e.draining[0]))
            sources = list(e.draining)
            for src in sources:
                self.window_open(src, target, tube)
        else:
            owner = e.cluster if e is not None else m.cluster
            if owner == target and (e is None or e.prefix == tube):
                self.p.done = True  # nothing to move
                return self.p
            sources = [] if owner == target else [owner]
            self.open_and_map(sources, target, tube, e)
        for src in sources:
            self.move_from(src, target, tube)
            self.report()
        self.end_tables(target, tube)
        self.map_set(tube, target, ())
        self.p.done = True
        self.report()
        return replace(self.p)


def move(router, tube, target, *, batch=BATCH_DEFAULT,
         timeout=TIMEOUT_DEFAULT_S, wait=0, report=None):
    """Router.move: checks the names, then runs the Mover."""
    if not isinstance(tube, str) or not _TUBE.match(tube):
        raise E.BadTube("move: a tube name is 1-200 bytes of A-Z a-z 0-9 "
                        "_ . : / -, not %r" % (tube,))
    if not isinstance(target, str) or not _CLUSTER.match(target):
        raise E.Invalid("move: a cluster name is 1-64 bytes of A-Z a-z 0-9 "
                        "_ . : -, not %r" % (target,))
    return Mover(router, tube, target, batch, timeout, wait, report).run()


__all__ = ["MoveProgress", "MOVE_KEYS_PENDING", "MOVE_KEYS_HELD"]
