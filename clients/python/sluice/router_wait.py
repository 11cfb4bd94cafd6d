"""A take over tubes of several clusters (Router.take), which waits on
all of them at once and takes from whichever answers first, as
libsluice's routing handle (src/client/router_wait.c) and the Node.js
Router do.

The take first asks each cluster in turn without waiting, on the
Router's connection of the cluster (in the busy case a task is ready
somewhere and nothing else is needed); a cluster whose last take failed
(down) is left out of this pass, so that a node that does not answer
holds up no take. Then, while its wait is not over, it waits on every
cluster at once: each cluster has a waiter, a thread with a connection
of its own (never the one acks go through), which takes with waits of
at most SLICE_MS, again and again, until the take has its tasks or its
wait is over.

Whatever a waiter's take brings is offered to the take: the first
offer wins, and the take returns it at once. The other waits are
cancelled. No request cancels a waiting take on the wire (closing its
connection would, but a reply the server wrote just before becomes a
lost lease, back only after the retry backoff), so a cancelled wait
ends after its current slice; a task it took meanwhile is refused by
the take and given back at once, its take undone (release with untake,
docs/protocol.md: back at its place, its attempt uncounted, as if never
taken), by the waiter on the connection that took it, as libsluice
does. So no task is returned twice, none stays taken, and none counts
an attempt nobody made. A waiter still in a
slice when the next take of the same tubes (and options) begins serves
that take: what the slice brings is that take's, not released. Takes
over several clusters take turns on one Router (as a Client's calls
do); a thread that takes in parallel has a Router of its own.

A cluster that fails (a node down, a failover, a refusal) is left out
of the rest of the take, and the others go on: the take returns the
first tasks any of them gives, [] when its wait is over and at least
one cluster answered, and raises only when every cluster failed. While
no cluster has answered yet, it waits for their calls (each bounded by
the Router's timeout, as a Client's take is). A Moved answer cancels
the take and is raised to the Router, which reads the map again and
takes anew, with what is left of the wait.
"""

import threading
import time

from . import errors as E
from .client import Client

SLICE_MS = 200
CLOSE_JOIN_S = SLICE_MS / 1000.0 + 1.0


class _Take:
    """One take: its tubes by cluster, its options, its deadline, and
    what came of it."""

    __slots__ = ("groups", "kwargs", "deadline", "done", "got", "errors",
                 "answered")

    def __init__(self, groups, kwargs, deadline):
        self.groups = groups
        self.kwargs = kwargs
        self.deadline = deadline
        self.done = False
        self.got = None  # (cluster, tasks)
        self.errors = {}  # cluster: the exception it raised
        self.answered = set()  # the clusters that answered it

    def asks_as(self, other, cluster):
        """Whether this take asks cluster what other asked it."""
        return (self.kwargs == other.kwargs and
                self.groups.get(cluster) == other.groups.get(cluster))


class _Waiter:
    __slots__ = ("cluster", "client", "thread", "served", "retired")

    def __init__(self, cluster, client):
        self.cluster = cluster
        self.client = client
        self.thread = None
        self.served = None  # the take its thread asked last
        self.retired = False  # closed: its thread ends, closing it


def _give_back(client, tasks):
    """Gives back tasks nobody takes, their takes undone (untake: at
    their place, their attempts uncounted); to a server older than
    untake, released at their place (their attempts stay counted)."""
    for t in tasks:
        try:
            client.untake(t.id, t.lease)
        except E.Malformed:
            try:
                client.release(t.id, t.lease, front=True)
            except E.SluiceError:
                pass  # the lease ended already: the task is back anyway
        except E.SluiceError:
            pass  # the lease ended already: the task is back anyway


class Waits:
    """The waiters of a Router and the take they serve."""

    def __init__(self, router):
        self._router = router
        self._cv = threading.Condition()
        self._turn = threading.Lock()
        self._cur = None
        self._waiters = {}
        self._down = set()

    def clients(self):
        """The waiters' connections."""
        return [c for _, c in self.named()]

    def named(self):
        """(cluster, connection) of each waiter."""
        with self._cv:
            return [(w.cluster, w.client) for w in self._waiters.values()]

    def down(self):
        """The clusters whose last take failed."""
        with self._cv:
            return set(self._down)

    def cancel(self):
        """Ends the take under way: it returns [] (or what came first)."""
        with self._cv:
            if self._cur is not None:
                self._cur.done = True
            self._cv.notify_all()

    def close(self):
        """Cancels the take under way; each waiter's thread is given its
        slice to end (releasing what it took), then its connection is
        closed (a thread stuck longer closes its own when it ends). The
        next take opens new ones, as a Client connects anew."""
        with self._cv:
            if self._cur is not None:
                self._cur.done = True
            retired = list(self._waiters.values())
            self._waiters.clear()
            for w in retired:
                w.retired = True
            self._cv.notify_all()
        end = time.monotonic() + CLOSE_JOIN_S
        for w in retired:
            t = w.thread
            if t is not None:
                t.join(max(0.0, end - time.monotonic()))
        with self._cv:
            idle = [w.client for w in retired if w.thread is None]
        for c in idle:
            c.close()

    # ---- the take

    def take(self, groups, end, kwargs):
        """Tasks of one of the clusters of groups ({cluster: [tube]}),
        waiting until end (time.monotonic()); see the module's comment.
        Returns (cluster, tasks), (None, []) when nothing came."""
        with self._turn:
            s = _Take(groups, kwargs, end)
            with self._cv:
                self._cur = s
            try:
                return self._take(s)
            finally:
                with self._cv:
                    s.done = True
                    if self._cur is s:
                        self._cur = None
                    self._cv.notify_all()

    def _take(self, s):
        for cluster, tubes in s.groups.items():
            with self._cv:
                if s.done:
                    break  # a waiter still in its slice handed tasks over
                if cluster in self._down:
                    continue
            try:
                c = self._router.client(cluster)
                tasks = c.take(tubes, wait_ms=0, **s.kwargs)
            except E.Moved:
                raise
            except E.SluiceError as e:
                with self._cv:
                    self._failed(s, cluster, e)
                continue
            with self._cv:
                won = self._offer(s, s, cluster, tasks)
            if not won:
                _give_back(c, tasks)
        waiting = time.monotonic() < s.deadline
        for cluster in s.groups:
            with self._cv:
                if s.done:
                    break
                needed = cluster not in s.errors and (
                    waiting or cluster not in s.answered)
            if needed:
                self._serve(s, cluster)
        with self._cv:
            while True:
                if s.got is not None:
                    return s.got
                if s.done:  # cancelled
                    return None, []
                for e in s.errors.values():
                    if isinstance(e, E.Moved):
                        raise e
                if len(s.errors) == len(s.groups):
                    raise self._all_failed(s)
                left = s.deadline - time.monotonic()
                if left <= 0 and s.answered:
                    return None, []
                self._cv.wait(left if left > 0 else None)

    @staticmethod
    def _all_failed(s):
        first = next(iter(s.errors.values()))
        text = "; ".join("cluster %s: %s" % (cl, getattr(e, "message", e))
                         for cl, e in s.errors.items())
        if isinstance(first, E.SluiceError):
            return type(first)("every cluster failed: %s" % text,
                               first.leader)
        return E.ConnectionLost("every cluster failed: %s" % text)

    def _failed(self, s, cluster, e):
        """Under the lock: cluster failed take s."""
        s.errors.setdefault(cluster, e)
        if not isinstance(e, E.Moved):
            self._down.add(cluster)
        self._cv.notify_all()

    def _offer(self, s, asked, cluster, tasks):
        """Under the lock: what cluster answered take `asked`, offered to
        s (the take under way, or asked itself). False: refused (another
        cluster won; the caller releases them)."""
        asked.answered.add(cluster)
        self._down.discard(cluster)
        self._cv.notify_all()
        if not tasks:
            return True
        if s is None or s.done or not (s is asked or s.asks_as(asked,
                                                                cluster)):
            return False
        s.done = True
        s.got = (cluster, tasks)
        return True

    # ---- the waiters

    def _serve(self, s, cluster):
        """cluster's waiter serves s: its thread started unless one is
        still in a slice (it takes s up after it)."""
        try:
            w = self._waiter(cluster)
        except E.SluiceError as e:
            with self._cv:
                self._failed(s, cluster, e)
            return
        with self._cv:
            if w.thread is not None:
                return
            w.thread = threading.Thread(
                target=self._run, args=(w,), daemon=True,
                name="sluice-router-wait-%s" % cluster)
            w.thread.start()

    def _waiter(self, cluster):
        with self._cv:
            w = self._waiters.get(cluster)
        if w is not None:
            return w
        c = self._router.client(cluster)
        own = Client([u.text for u in c.urls], **self._router._options)
        with self._cv:
            w = self._waiters.setdefault(cluster, _Waiter(cluster, own))
        if w.client is not own:
            own.close()
        return w

    def _next(self, w):
        """Under the lock: the take w's thread asks next, or None (the
        thread ends)."""
        s = self._cur
        if w.retired or s is None or s.done or \
                w.cluster not in s.groups or w.cluster in s.errors:
            return None
        if s is w.served and time.monotonic() >= s.deadline:
            return None  # asked once at least, and its wait is over
        return s

    def _run(self, w):
        while True:
            with self._cv:
                s = self._next(w)
                if s is None:
                    w.thread = None
                    closing = w.retired
                    break
                w.served = s
                left = int((s.deadline - time.monotonic()) * 1000)
                tubes = s.groups[w.cluster]
                kwargs = s.kwargs
            tasks, err = [], None
            try:
                tasks = w.client.take(tubes, wait_ms=max(
                    0, min(left, SLICE_MS)), **kwargs)
            except Exception as e:  # any: the take must hear of it
                err = e
            with self._cv:
                if err is not None:
                    self._failed(s, w.cluster, err)
                    cur = self._cur
                    if cur is not None and cur is not s and \
                            cur.asks_as(s, w.cluster) and \
                            w.cluster not in cur.answered:
                        self._failed(cur, w.cluster, err)  # as fresh
                    won = True
                else:
                    won = self._offer(self._cur, s, w.cluster, tasks)
            if not won:
                _give_back(w.client, tasks)
        if closing:
            w.client.close()
