"""Routing by the cluster map (docs/scaling.md): several clusters share
the tubes, a map in etcd says which cluster owns which, and a Router sends
each request to the cluster that owns its tube, as libsluice's routing
handle (sluice_open_map) and the Node client's Router do.

A Router is given any node of any cluster (which serves the map, op 0x32:
the client needs no access to etcd). It reads the map when it is over a
second old and at once when a node answers Moved (the tube moved: the
Router's map was older; while the node it reads from knows a revision
older than the refusal's, it reads again), then sends the request
again, to the owner: the refused request was done nowhere.
A Moved naming an older revision than the Router's (the refusing node
is behind: the new owner in a move's first moments, before its poll of
the map, every 200 ms, or later on a loaded machine) sends the request
to that node again after 50 ms, then after waits doubled up to 400 ms,
as libsluice does; so does a map read again that is no newer than the
one the request went by. The call's timeout (the Router's `timeout`,
30 s when None), from its start, bounds all of it: past it the Moved is
raised. Puts, batch puts and takes are what a node refuses so.
It keeps one Client per cluster it uses, opened with that cluster's
members (new members join its URLs as the map names them), which follows
its cluster's failover as any Client does. A tube no entry matches goes
to the cluster of the node the Router was given.

Task ids are per cluster: a put's result and a task taken through a
Router carry their cluster (.cluster), and ack, release, fail, touch,
bury, wait, cancel and batch_of take them (or {"id", "cluster"} or
{"id", "tube"}) and go there; a bare id is refused. A take over tubes of
several clusters (each tube's draining clusters first) asks them in turn
without waiting, then waits on all of them at once and takes from
whichever answers first (router_wait.py: a thread and a connection per
cluster; the other waits are cancelled, a task one of them took is
released at once; a cluster that fails is left out). A batch put,
ack_batch and cancel_batch are split by cluster, one request (one
commit) per cluster. stats and clusters ask
every cluster; stats sums their counts.

What names no tube is routed by what it names. A batch lives on each
cluster that owns a tube of its tasks (the name is per cluster):
batch_show and batches ask every cluster and sum the parts; batch_set,
batch_close and batch_cancel go to every cluster holding a part, and a
batch not made yet to the owner of tube= (or of its callback's tube). A
schedule fires on the cluster that holds it: schedule_set goes to the
owner of the schedule's tube and deletes the name elsewhere (one name,
one schedule); the others find it by name on every cluster. move runs a
tube's move between clusters (move.py).
"""

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Dict, Optional

from . import errors as E
from .client import Client
from .move import BATCH_DEFAULT, TIMEOUT_DEFAULT_S, move
from .router_wait import Waits
from .transport import Url
from .types import ItemResult, PutResult

REFRESH_S = 1.0
BEHIND_S = 0.05  # the first wait for a node behind the map
BEHIND_MAX_S = 0.4  # the longest: about two of its polls
ROUTE_TIMEOUT_S = 30.0  # a call's retries after Moved when timeout is None
_COUNTS = ("ready", "delayed", "taken", "buried")
_BATCH_SUMS = ("total", "waiting", "ready", "delayed", "taken", "buried",
               "acked", "failed")


@dataclass
class RoutedStats:
    """Every cluster's stats and the sum of their counts: clusters holds
    each one's Stats (None when it does not have the tube, or failed:
    errors holds its exception)."""
    ready: int = 0
    delayed: int = 0
    taken: int = 0
    buried: int = 0
    clusters: Dict[str, Optional[object]] = field(default_factory=dict)
    errors: Dict[str, Exception] = field(default_factory=dict)


def _moved_revision(e):
    """The map revision a Moved error names ("CLUSTER REVISION URL,...")."""
    parts = (e.leader or "").split(" ")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


class Router:
    """Requests routed by the cluster map.

    urls: any node(s) of any cluster, as Client takes them; refresh_s:
    how old the map may grow before it is read again (None: only on a
    Moved error); options: Client's (token, timeout, ...), used for every
    connection."""

    def __init__(self, urls, refresh_s=REFRESH_S, **options):
        self._options = options
        self._refresh_s = refresh_s
        self._seed = Client(urls, **options)
        self._clients = {}
        self._map = None
        self._read_at = 0.0
        self._lock = threading.RLock()
        self._waits = Waits(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._waits.close()
        with self._lock:
            for c in self._clients.values():
                c.close()
            self._clients.clear()
            self._seed.close()

    # ---- the map

    def cluster_map(self, refresh=True):
        """The map as the Router knows it (read now unless refresh is
        False and it is under refresh_s old)."""
        with self._lock:
            if refresh or self._map is None or (
                    self._refresh_s is not None and
                    time.monotonic() - self._read_at >= self._refresh_s):
                self._learn(self._seed.cluster_map())
            return self._map

    def _learn(self, m):
        self._map = m
        self._read_at = time.monotonic()
        # a cluster's new members join its open connections' URLs
        for name, c in list(self._clients.items()) + self._waits.named():
            mc = m.clusters.get(name)
            known = {u.text for u in c.urls}
            for url in (mc.members if mc else []):
                if url not in known:
                    c.urls.append(Url(url))

    def _retry(self):
        """The state a call's attempts share (_again): its deadline, the
        Router's timeout from now, and the next wait for a node behind
        the map."""
        t = self._options.get("timeout", ROUTE_TIMEOUT_S)
        if t is None or t < 0:
            t = ROUTE_TIMEOUT_S
        return {"until": time.monotonic() + t, "backoff": BEHIND_S}

    def _again(self, e, st):
        """After a Moved error e: whether to send the request again (st:
        _retry's, shared by a call's attempts), as libsluice's routing
        handle does. A newer map, read again (_moved), routes it again at
        once; a node behind the Router's map (e names an older revision
        than the Router knows: the new owner in a move's first moments,
        before its poll) or a map no newer than the one the request went
        by sends it again after a backoff (BEHIND_S doubled up to
        BEHIND_MAX_S). Never past the call's deadline, but the first
        Moved is always followed."""
        now = time.monotonic()
        first = not st.get("refused")
        st["refused"] = True
        if not first and now >= st["until"]:
            return False
        known = self._map.revision if self._map else 0
        if not 0 < _moved_revision(e) < known:
            self._moved(e, st["until"])
            if self._map.revision > known:
                return True  # a newer map: routed again at once
        wait = min(st["backoff"], st["until"] - time.monotonic())
        if wait > 0:
            time.sleep(wait)
        st["backoff"] = min(st["backoff"] * 2, BEHIND_MAX_S)
        return True

    def _moved(self, e, until):
        """After a Moved error: the map read again, and again while the
        node read knows an older revision than the refusing one (a node
        reads the map every 200 ms), until `until` (monotonic)."""
        rev = _moved_revision(e)
        while True:
            m = self.cluster_map(refresh=True)
            if m.revision >= rev or time.monotonic() >= until:
                return
            time.sleep(0.05)

    def _owner(self, tube, m=None):
        m = m or self.cluster_map(refresh=False)
        e = m.owner(tube)
        return e.cluster if e is not None else m.cluster

    def _names(self):
        """The clusters the map names, and the given node's."""
        m = self.cluster_map(refresh=False)
        names = {m.cluster} if m.cluster else set()
        for e in m.entries:
            names.add(e.cluster)
            names.update(e.draining)
        return sorted(names)

    def client(self, cluster):
        """The Client of a cluster (one of the map's, or the given
        node's own)."""
        with self._lock:
            c = self._clients.get(cluster)
            if c is not None:
                return c
            m = self.cluster_map(refresh=False)
            mc = m.clusters.get(cluster)
            if cluster == m.cluster and (mc is None or not mc.members):
                return self._seed
            if mc is None or not mc.members:
                raise E.ConnectionLost(
                    "cluster %s: no member known (none in etcd under "
                    "/sluice/%s/members/)" % (cluster, cluster))
            c = Client(mc.members, **self._options)
            self._clients[cluster] = c
            return c

    def connections(self):
        """The Clients open now (the given node's and one per cluster
        used)."""
        with self._lock:
            return ([self._seed] + list(self._clients.values()) +
                    self._waits.clients())

    def client_for(self, tube):
        """The Client of the cluster that owns tube, for the calls the
        Router does not route (peek, list, tube settings, ...)."""
        return self.client(self._owner(tube))

    def _routed(self, tube, call):
        """call(client) on tube's cluster; again after Moved as _again
        says."""
        st = self._retry()
        while True:
            cluster = self._owner(tube)
            try:
                return cluster, call(self.client(cluster))
            except E.Moved as e:
                if not self._again(e, st):
                    raise

    def map_set(self, prefix, cluster, draining=()):
        """Client.map_set through the node the Router was given; the map
        is read again. Returns the new revision."""
        rev = self._seed.map_set(prefix, cluster, draining)
        self.cluster_map(refresh=True)
        return rev

    def map_delete(self, prefix):
        rev = self._seed.map_delete(prefix)
        self.cluster_map(refresh=True)
        return rev

    # ---- producing

    def put(self, tube, payload, **kwargs):
        """Client.put, sent to the cluster that owns tube; the result
        names it (.cluster)."""
        cluster, r = self._routed(tube, lambda c: c.put(tube, payload,
                                                        **kwargs))
        r.cluster = cluster
        return r

    def put_batch(self, items):
        """Client.put_batch split by cluster: the items of each cluster in
        one request, one commit there; the whole is not atomic across
        clusters. One PutResult per item, in order, each with its
        cluster; the items of a part that failed whole carry its error
        (id 0). Raises only when every part failed (the first one's
        error)."""
        items = list(items)
        if not items:
            raise E.Invalid("put_batch: a list of at least one item")
        out = [None] * len(items)
        whole = set()
        self._put_parts(items, range(len(items)), out, whole, self._retry())
        if len(whole) == len(items):
            raise out[0].error
        return out

    def _put_parts(self, items, idx, out, whole, st):
        """Puts items[idx] by their owners, one request per cluster; a
        part refused Moved goes again as _again says (st: the call's
        _retry)."""
        m = self.cluster_map(refresh=False)
        parts = {}
        for i in idx:
            parts.setdefault(self._owner(items[i]["tube"], m), []).append(i)
        for cluster, part in parts.items():
            try:
                res = self.client(cluster).put_batch([items[i] for i in part])
            except E.Moved as e:
                if self._again(e, st):
                    self._put_parts(items, part, out, whole, st)
                    continue
                res = e
            except E.SluiceError as e:
                res = e
            for k, i in enumerate(part):
                if isinstance(res, Exception):
                    out[i] = self._put_failed(res, cluster)
                    whole.add(i)
                else:
                    out[i] = replace(res[k], cluster=cluster)

    @staticmethod
    def _put_failed(e, cluster):
        return PutResult(0, False, error=e, cluster=cluster)

    # ---- working

    def _groups(self, tubes):
        """The tubes of a take by cluster: each tube's draining clusters
        first (their old tasks are not starved; one whose members are not
        known is left out), then its owner."""
        m = self.cluster_map(refresh=False)
        groups = {}
        for t in tubes:
            e = m.owner(t)
            for d in (e.draining if e is not None else ()):
                mc = m.clusters.get(d)
                if mc is not None and mc.members:
                    groups.setdefault(d, [])
                    if t not in groups[d]:
                        groups[d].append(t)
            owner = e.cluster if e is not None else m.cluster
            groups.setdefault(owner, [])
            if t not in groups[owner]:
                groups[owner].append(t)
        return groups

    def take(self, tubes, *, wait_ms=0, **kwargs):
        """Client.take over tubes of one or several clusters; each task's
        cluster is set. Several: asked in turn without waiting, then
        waited on at once, the first that answers winning (router_wait:
        no task is returned twice, a task a cancelled wait took is
        released at once); a cluster that fails is left out, and the
        take raises only when every cluster failed."""
        if isinstance(tubes, (str, bytes)):
            tubes = [tubes]
        end = time.monotonic() + wait_ms / 1000.0
        st = self._retry()
        while True:
            try:
                return self._take(self._groups(tubes), end, kwargs)
            except E.Moved as e:
                if not self._again(e, st):
                    raise

    def _take(self, groups, end, kwargs):
        if len(groups) == 1:
            (cluster, ts), = groups.items()
            left = max(0, int((end - time.monotonic()) * 1000))
            return self._mark(self.client(cluster).take(
                ts, wait_ms=left, **kwargs), cluster)
        cluster, tasks = self._waits.take(groups, end, kwargs)
        return self._mark(tasks, cluster)

    def down(self):
        """The clusters whose last take through this Router failed (a
        take over several clusters leaves them out of its first pass and
        asks them in the background until they answer again)."""
        return self._waits.down()

    @staticmethod
    def _mark(tasks, cluster):
        for t in tasks:
            t.cluster = cluster
        return tasks

    def _of(self, task):
        return self.client(task.cluster or self._owner(task.tube))

    def ack(self, task, **kwargs):
        return self._of(task).ack(task.id, task.lease, **kwargs)

    def release(self, task, **kwargs):
        return self._of(task).release(task.id, task.lease, **kwargs)

    def fail(self, task, *args, **kwargs):
        return self._of(task).fail(task.id, task.lease, *args, **kwargs)

    def touch(self, task, **kwargs):
        return self._of(task).touch(task.id, task.lease, **kwargs)

    def bury(self, task, *args, **kwargs):
        return self._of(task).bury(task.id, task.lease, *args, **kwargs)

    def _split(self, what, refs, call):
        """call(client, [refs of one cluster]) per cluster: one result per
        ref, in order, each with its cluster (a cluster that failed: its
        error on each of its refs)."""
        refs = list(refs)
        if not refs:
            raise E.Invalid("%s: a list of at least one task" % what)
        parts = {}
        for i, ref in enumerate(refs):
            parts.setdefault(self._ref(what, ref)[0], []).append(i)
        out = [None] * len(refs)
        for cluster, part in parts.items():
            try:
                res = call(self.client(cluster), [refs[i] for i in part])
                for k, i in enumerate(part):
                    out[i] = replace(res[k], cluster=cluster)
            except E.SluiceError as e:
                for i in part:
                    out[i] = ItemResult(self._ref(what, refs[i])[1], e,
                                        cluster=cluster)
        return out

    def ack_batch(self, tasks):
        """Client.ack_batch of tasks taken through the Router, one request
        per cluster: one ItemResult per task, in order, with its
        cluster."""
        return self._split("ack_batch", tasks, lambda c, ts: c.ack_batch(
            [(t.id, t.lease) for t in ts]))

    # ---- a task's end: wait and cancel

    def _ref(self, what, ref):
        """(cluster, id) of a task reference: a put's result or a task
        of this Router, or {"id", "cluster"} / {"id", "tube"}."""
        get = ref.get if isinstance(ref, dict) else (
            lambda k: getattr(ref, k, None))
        tid = get("id")
        if isinstance(ref, (int, str)) or not isinstance(tid, int) or \
                tid < 1:
            raise E.Invalid(
                "%s: a task or a put's result of this Router, or {'id', "
                "'cluster'}: ids are per cluster, so a bare id does not say "
                "where its task is (%r)" % (what, ref))
        if get("cluster"):
            return get("cluster"), tid
        if get("tube"):
            return self._owner(get("tube")), tid
        raise E.Invalid("%s: task %d names neither its cluster nor its tube"
                        % (what, tid))

    def wait(self, task, timeout_ms=0):
        """Client.wait on the task's cluster; the Outcome names it. A wait
        that waits (timeout_ms > 0) goes on a connection of its own: it
        holds up none of the Router's other calls."""
        cluster, tid = self._ref("wait", task)
        c = self.client(cluster)
        if not timeout_ms:
            return replace(c.wait(tid, 0), cluster=cluster)
        own = Client([u.text for u in c.urls], **self._options)
        try:
            return replace(own.wait(tid, timeout_ms), cluster=cluster)
        finally:
            own.close()

    def cancel(self, task):
        """Client.cancel on the task's cluster."""
        cluster, tid = self._ref("cancel", task)
        return self.client(cluster).cancel(tid)

    def cancel_batch(self, tasks):
        """Client.cancel_batch, one request per cluster: one ItemResult
        per task, in order, with its cluster."""
        return self._split("cancel_batch", tasks, lambda c, ts: c.cancel_batch(
            [self._ref("cancel_batch", t)[1] for t in ts]))

    def batch_of(self, task):
        """The batch of a task (Client.batch_of on its cluster), or
        None."""
        cluster, tid = self._ref("batch_of", task)
        return self.client(cluster).batch_of(tid)

    # ---- batches and schedules: by name, on the clusters that hold them

    def _everywhere(self, call):
        """call(client, cluster) on every cluster: [(cluster, value)] of
        those that answered, NotFound left out; a cluster that failed
        otherwise fails the whole (a batch or schedule there would go
        unseen)."""
        out = []
        for name in self._names():
            try:
                out.append((name, call(self.client(name), name)))
            except E.NotFound:
                continue
            except E.SluiceError as e:
                raise type(e)("cluster %s: %s" % (name, e.message),
                              e.leader) from None
        return out

    @staticmethod
    def _batch_sum(name, parts):
        """A batch as its parts on several clusters show it: counts
        summed, closed and ended when every part is, started at the
        first part's start, ended at the last part's end; "parts":
        {cluster: batch}; "cluster": the one part's, or None."""
        b = {"name": name, "started_at": 0, "ended_at": 0, "closed": True,
             "ended": True, "on_success": None, "on_complete": None,
             "cluster": parts[0][0] if len(parts) == 1 else None,
             "parts": {}}
        for k in _BATCH_SUMS:
            b[k] = 0
        for cl, p in parts:
            b["parts"][cl] = p
            for k in _BATCH_SUMS:
                b[k] += p[k]
            if p["started_at"] and (not b["started_at"] or
                                    p["started_at"] < b["started_at"]):
                b["started_at"] = p["started_at"]
            b["ended_at"] = max(b["ended_at"], p["ended_at"])
            b["closed"] = b["closed"] and p["closed"]
            b["ended"] = b["ended"] and p["ended"]
            b["on_success"] = b["on_success"] or p["on_success"]
            b["on_complete"] = b["on_complete"] or p["on_complete"]
        if not b["ended"]:
            b["ended_at"] = 0
        return b

    def batch_show(self, name):
        """The batch as the clusters that hold a part of it show it
        (summed: see _batch_sum); NotFound when none does."""
        parts = self._everywhere(lambda c, cl: c.batch_show(name))
        if not parts:
            raise E.NotFound("batch '%s' is known to no cluster" % name)
        return self._batch_sum(name, parts)

    def batches(self, limit=100):
        """Every cluster's batches (up to limit each), each with its
        "cluster", by name; "total": summed."""
        out = {"batches": [], "total": 0}
        for cl, lst in self._everywhere(lambda c, _: c.batches(limit)):
            out["total"] += lst["total"]
            out["batches"] += [dict(b, cluster=cl) for b in lst["batches"]]
        out["batches"].sort(key=lambda b: (b["name"], b["cluster"]))
        return out

    def _batch_clusters(self, what, name, tube, fallback=None):
        """Where a batch call goes: every cluster holding a part of the
        batch; none: tube's owner (the tube its tasks will be put into),
        else fallback's, else NotFound."""
        held = self._everywhere(lambda c, cl: c.batch_show(name))
        if held:
            return [cl for cl, _ in held]
        if tube or fallback:
            return [self._owner(tube or fallback)]
        raise E.NotFound("%s: batch '%s' is known to no cluster: say the "
                         "tube of its tasks (tube=)" % (what, name))

    def batch_set(self, name, *, tube=None, **kwargs):
        """Client.batch_set on every cluster that holds a part of the
        batch (each part fires its own callbacks, into its own cluster);
        a batch not made yet goes to tube's owner (the tube its tasks
        will be put into), or to its callback tube's. The batch as
        batch_show sums it."""
        cb = kwargs.get("on_success") or kwargs.get("on_complete")
        cb = cb if isinstance(cb, str) or cb is None else cb[0]
        names = self._batch_clusters("batch_set", name, tube, cb)
        return self._batch_sum(name, [(cl, self.client(cl).batch_set(
            name, **kwargs)) for cl in names])

    def batch_close(self, name, *, tube=None):
        """Client.batch_close on every part (tube: where a batch not made
        yet goes)."""
        names = self._batch_clusters("batch_close", name, tube)
        return self._batch_sum(name, [(cl, self.client(cl).batch_close(
            name)) for cl in names])

    def batch_cancel(self, name, *, tube=None):
        names = self._batch_clusters("batch_cancel", name, tube)
        return self._batch_sum(name, [(cl, self.client(cl).batch_cancel(
            name)) for cl in names])

    def schedule_set(self, name, tube, cron, payload, **kwargs):
        """Client.schedule_set on the cluster that owns tube (it fires
        there); the same name on any other cluster is deleted after, so
        that one name is one schedule: setting a schedule again after its
        tube moved moves it. The Schedule names its cluster."""
        owner, s = self._routed(tube, lambda c: c.schedule_set(
            name, tube, cron, payload, **kwargs))
        self._everywhere(lambda c, cl: None if cl == owner else
                         c.schedule_delete(name))
        return replace(s, cluster=owner)

    def schedule_list(self):
        """Every cluster's schedules, each with its cluster, by name."""
        out = []
        for cl, lst in self._everywhere(lambda c, _: c.schedule_list()):
            out += [replace(s, cluster=cl) for s in lst]
        return sorted(out, key=lambda s: (s.name, s.cluster))

    def _on_schedule(self, what, name, call):
        def one(c, cl):
            c.schedule_show(name)
            return call(c)
        got = self._everywhere(one)
        if not got:
            raise E.NotFound("%s: schedule '%s' is known to no cluster"
                             % (what, name))
        cl, s = got[0]
        return None if s is None else replace(s, cluster=cl)

    def schedule_show(self, name):
        return self._on_schedule("schedule_show", name,
                                 lambda c: c.schedule_show(name))

    def schedule_pause(self, name):
        return self._on_schedule("schedule_pause", name,
                                 lambda c: c.schedule_pause(name))

    def schedule_resume(self, name):
        return self._on_schedule("schedule_resume", name,
                                 lambda c: c.schedule_resume(name))

    def schedule_delete(self, name):
        return self._on_schedule("schedule_delete", name,
                                 lambda c: c.schedule_delete(name))

    # ---- reading

    def stats(self, tube="", **kwargs):
        """Client.stats of every cluster, and the sum of their ready,
        delayed, taken and buried (RoutedStats)."""
        out = RoutedStats()
        for name in self._names():
            out.clusters[name] = None
            try:
                s = self.client(name).stats(tube, **kwargs)
            except E.SluiceError as e:
                if not (tube and isinstance(e, E.NotFound)):
                    out.errors[name] = e
                continue
            out.clusters[name] = s
            for k in _COUNTS:
                setattr(out, k, getattr(out, k) + getattr(s.totals, k))
        return out

    def clusters(self):
        """Client.cluster of every cluster: {name: Cluster, or the
        exception it raised}."""
        out = {}
        for name in self._names():
            try:
                out[name] = self.client(name).cluster()
            except E.SluiceError as e:
                out[name] = e
        return out

    # ---- moving a tube

    def move(self, tube, cluster, *, batch=BATCH_DEFAULT,
             timeout=TIMEOUT_DEFAULT_S, wait=0, report=None):
        """Moves tube to cluster (docs/scaling.md, "Move a tube"; as
        `sluice tube move`): the map marks it draining from its owner and
        new puts go to the target; the source's ready, delayed and buried
        tasks are copied in batches (ids mapped; keys, attempts, last
        errors, run and creation times, priorities, ttrs, periods,
        groups; the tube's settings and flow limits first), each copy one
        commit at the target and its drop one at the source; taken tasks
        finish (or expire and are copied) at the source; then the map
        names the target alone. Every tube whose name tube starts and
        whose entry is tube's moves with it. Run again after any
        interruption (a kill -9 of a node or of the mover), it resumes.

        batch: tasks a round (1-1000); timeout: seconds a node may stay
        unreachable (a failover); wait: seconds to wait for taken tasks
        to end (0: as long as it takes); report(progress): after each
        round and at each stage of the key window (MoveProgress.stage:
        keyed puts at the target wait for the source's live keys, which
        are held there under the ids their copies will get). Returns the
        MoveProgress (done True). Raises BadTube,
        Invalid (a cluster name), BadState (the tube moves to another
        cluster already: finish that move first), TimedOut (run it
        again), or a node's error. The admin's token with --auth."""
        return move(self, tube, cluster, batch=batch, timeout=timeout,
                    wait=wait, report=report)


__all__ = ["Router", "RoutedStats"]
