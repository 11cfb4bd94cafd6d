"""Routing by the cluster map (docs/scaling.md): several clusters share
the tubes, a map in etcd says which cluster owns which, and a Router sends
each put and take to the cluster that owns its tube.

A Router is given any node of any cluster (which serves the map, op 0x32:
the client needs no access to etcd). It reads the map when it is over a
second old and at once when a node answers Moved (the tube moved: the
Router's map was older), then sends the request once more, to the owner:
the refused request was done nowhere. It keeps one Client per cluster it
uses, opened with that cluster's members, which follows its cluster's
failover as any Client does. A tube no entry matches goes to the cluster
of the node the Router was given.

Task ids are per cluster: a task taken through a Router carries its
cluster (task.cluster), and ack, release, fail, touch and bury take the
task and go there. A take over tubes of several clusters asks them in
turn, first without waiting, then with waits of at most 50 ms each, so
that no task is taken twice (as libsluice's routing handle does).
"""

import threading
import time

from . import errors as E
from .client import Client

REFRESH_S = 1.0
TAKE_SLICE_MS = 50


class Router:
    """Puts and takes routed by the cluster map.

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

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        with self._lock:
            for c in self._clients.values():
                c.close()
            self._clients.clear()
            self._seed.close()

    # ---- the map

    def cluster_map(self, refresh=True):
        """The map as the Router knows it (read now unless refresh is
        False and it is under a second old)."""
        with self._lock:
            if refresh or self._map is None or (
                    self._refresh_s is not None and
                    time.monotonic() - self._read_at >= self._refresh_s):
                self._map = self._seed.cluster_map()
                self._read_at = time.monotonic()
            return self._map

    def _owner(self, tube):
        m = self.cluster_map(refresh=False)
        e = m.owner(tube)
        return e.cluster if e is not None else m.cluster

    def client(self, cluster):
        """The Client of a cluster (one of the map's, or the given
        node's own)."""
        with self._lock:
            c = self._clients.get(cluster)
            if c is not None:
                return c
            m = self.cluster_map(refresh=False)
            if cluster == m.cluster and cluster not in m.clusters:
                return self._seed
            mc = m.clusters.get(cluster)
            if mc is None or not mc.members:
                raise E.ConnectionLost("cluster %s: no member known"
                                       % cluster)
            c = Client(mc.members, **self._options)
            self._clients[cluster] = c
            return c

    def _routed(self, tube, call):
        """call(client) on tube's cluster; once more after Moved."""
        for attempt in (0, 1):
            cluster = self._owner(tube)
            try:
                return cluster, call(self.client(cluster))
            except E.SluiceError as e:
                if e.code != 33 or attempt == 1:
                    raise
                self.cluster_map(refresh=True)

    # ---- producing and working

    def put(self, tube, payload, **kwargs):
        """Client.put, sent to the cluster that owns tube."""
        return self._routed(tube, lambda c: c.put(tube, payload,
                                                  **kwargs))[1]

    def take(self, tubes, *, wait_ms=0, **kwargs):
        """Client.take over tubes of one or several clusters; each task's
        cluster is set."""
        if isinstance(tubes, (str, bytes)):
            tubes = [tubes]
        groups = {}
        for t in tubes:
            groups.setdefault(self._owner(t), []).append(t)
        if len(groups) == 1:
            (cluster, ts), = groups.items()
            cluster, tasks = self._routed(ts[0], lambda c: c.take(
                ts, wait_ms=wait_ms, **kwargs))
            return self._mark(tasks, cluster)
        end = time.monotonic() + wait_ms / 1000.0
        first = True
        while True:
            for cluster, ts in groups.items():
                left = int((end - time.monotonic()) * 1000)
                wait = 0 if first or left <= 0 else min(left, TAKE_SLICE_MS)
                tasks = self.client(cluster).take(ts, wait_ms=wait, **kwargs)
                if tasks:
                    return self._mark(tasks, cluster)
            first = False
            if time.monotonic() >= end:
                return []

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


__all__ = ["Router"]
