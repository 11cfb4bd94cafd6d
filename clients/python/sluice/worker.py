"""The Worker: runs handlers for the tasks of their tubes.

    worker = sluice.Worker("tcp://127.0.0.1:7711", concurrency=8)

    @worker.task("emails")
    def send(task):
        deliver(task.payload)
        return "sent"          # the ack's result

    worker.run()               # until SIGTERM or SIGINT

Each of the `concurrency` threads has its own connection (its session)
and takes one task at a time from the tubes that have a handler. A
handler's return acks the task, with the returned value as its result
(str as is, bytes decoded, anything else as JSON; None: no result); a
raise fails it with the exception's text as its last error (retried after
the server's backoff, buried at max_attempts); sluice.Fatal buries it at
once. When every handler is an `async def`, the worker runs `concurrency`
asyncio tasks on one event loop instead of threads, each with its own
AsyncClient (with handlers of both kinds, each thread runs the async ones
on an event loop of its own). While a handler runs, the task's lease is
touched every third of its ttr, so a handler may take longer than the
ttr. A touch that says the task was cancelled (Client.cancel) stops its
handler: an async one is cancelled (asyncio), a thread's sees
task.cancelled become True (a long handler looks at it and returns);
either way its end is neither an ack nor a failure: the lease's release
removes the cancelled task.

A stop (stop(), or SIGTERM/SIGINT while run() installed its handlers)
takes nothing more: the takes waiting are cut (the server undoes a take
whose connection is gone), the handlers running get `grace` seconds to
finish and ack, and the leases of those still running after it are
released (ready again at once, their attempt counted). run() then
returns 0.
"""

import asyncio
import contextlib
import inspect
import json
import logging
import signal
import socket
import threading
import time

from . import errors as E
from .client import Client
from .router import Router

log = logging.getLogger("sluice.worker")

_TEXT_MAX = 1024  # the server's limit of an error text, bytes
_RESULT_MAX = 65535  # the server's limit of an ack's result, bytes


class Fatal(Exception):
    """Raised by a handler for a failure no retry can mend: the task is
    buried at once with this exception's text as its last error."""


def _text(value):
    """A handler's result as the ack's result text (None: none). One
    over the server's 65,535 bytes raises Fatal: the task is buried with
    the reason, never acked with a result cut short (a child reads it)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    elif not isinstance(value, str):
        value = json.dumps(value, default=str)
    size = len(value.encode("utf-8"))
    if size > _RESULT_MAX:
        raise Fatal("result of %d bytes is over the limit of %d"
                    % (size, _RESULT_MAX))
    return value or None


def _clip(text):
    """An error text of at most the server's 1024 bytes, cut on a
    character boundary."""
    b = text.encode("utf-8")
    if len(b) <= _TEXT_MAX:
        return text
    return b[:_TEXT_MAX].decode("utf-8", "ignore")


def error_text(exc):
    """The last error a raise records: the exception's text (its class's
    name when it has none)."""
    return _clip(str(exc) or type(exc).__name__)


class _Running:
    """A task a handler works on, and when its lease is next touched."""

    __slots__ = ("client", "task", "next_touch", "done", "handler")

    def __init__(self, client, task):
        self.client = client
        self.task = task
        self.next_touch = time.monotonic() + max(0.05, task.ttr_ms / 3000.0)
        self.done = False
        self.handler = None  # an async handler's asyncio task


class Worker:
    """Handlers by tube, run by `concurrency` threads.

    urls, token, ssl_context, timeout: as sluice.Client's. wait_ms: how
    long one take waits before a thread looks again (the stop does not
    wait for it). grace: seconds running handlers get after a stop.
    detach: take under detached leases (they outlive a lost connection,
    and end only by their ttr); by default a lease ends with its
    connection, so a killed worker's tasks come back (after the retry
    backoff, as a failure's).
    max_tasks: stop once that many tasks were taken and handled; idle:
    stop once no task came for that many seconds (as `sluice work
    --max-tasks` and `--wait` do); both None: run until stopped.
    routed: the urls are nodes of clusters sharing a cluster map
    (docs/scaling.md): each thread is a Router, which takes from the
    clusters of the tubes (waiting on all of them at once, each on a
    connection of its own) and acks, fails and touches each task on its
    cluster's connection (async handlers then run on each thread's
    event loop)."""

    def __init__(self, urls=None, *, concurrency=4, token=None,
                 ssl_context=None, timeout=30.0, wait_ms=1000, grace=30.0,
                 detach=False, max_tasks=None, idle=None, routed=False):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.urls = urls
        self.concurrency = concurrency
        self.client_options = dict(token=token, ssl_context=ssl_context,
                                   timeout=timeout)
        self.wait_ms = wait_ms
        self.grace = grace
        self.detach = detach
        self.max_tasks = max_tasks
        self.idle = idle
        self.routed = routed
        self._reserved = 0
        self._last_task = 0.0
        self.handlers = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._running = []
        self._idle = set()
        self.processed = 0
        self.failed = 0

    def task(self, tube):
        """Decorator: the handler of the tasks of tube."""
        def register(fn):
            self.handlers[tube] = fn
            return fn
        return register

    def stop(self):
        """Asks for a graceful stop (thread-safe, signal-safe)."""
        self._stop.set()

    @property
    def stopping(self):
        return self._stop.is_set()

    # ---- running

    def run(self, *, signals=True):
        """Runs until stop() (or SIGTERM/SIGINT when signals: installed
        for the time of the run, in the main thread only); returns 0."""
        if not self.handlers:
            raise ValueError("no handler: add one with @worker.task(tube)")
        self._reserved, self._last_task = 0, time.monotonic()
        old = {}
        if signals and threading.current_thread() is \
                threading.main_thread():
            for s in (signal.SIGTERM, signal.SIGINT):
                old[s] = signal.signal(s, lambda *_: self.stop())
        try:
            if not self.routed and all(inspect.iscoroutinefunction(h)
                                       for h in self.handlers.values()):
                asyncio.run(self._run_async())
            else:
                self._run_threads()
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        return 0

    def _run_threads(self):
        threads = [threading.Thread(target=self._thread, daemon=True,
                                    name="sluice-worker-%d" % i)
                   for i in range(self.concurrency)]
        for t in threads:
            t.start()
        while not self._stop.wait(0.05):
            self._touch_due()
            if not any(t.is_alive() for t in threads):
                break  # max_tasks reached
        self._wind_down(threads)

    def _wind_down(self, threads):
        with self._lock:
            idle = list(self._idle)
        for c in idle:
            _cut(c)
        deadline = time.monotonic() + self.grace
        for t in threads:
            while t.is_alive() and time.monotonic() < deadline:
                self._touch_due()
                t.join(0.05)
        for r in self._late():
            _call(r.client.release, r.task.id, r.task.lease)

    def _touch_due(self):
        for r in self._due():
            try:
                r.client.touch(r.task.id, r.task.lease)
            except E.Cancelled:
                self._cancelled(r)
            except E.SluiceError as e:
                log.warning("touch of task %d: %s", r.task.id, e)

    def _cancelled(self, r):
        """The task was cancelled: its handler is told (or cancelled),
        and no more touches."""
        log.info("task %d was cancelled: stopping its handler", r.task.id)
        r.task.cancelled = True
        r.next_touch = float("inf")
        if r.handler is not None:
            r.handler.cancel()

    def _thread(self):
        if self.routed:
            client = Router(self.urls, **self.client_options)
        else:
            client = Client(self.urls, **self.client_options)
        loop = None
        tubes = list(self.handlers)
        try:
            while self._may_take():
                try:
                    with self._idle_in(client):
                        if self._stop.is_set():
                            break
                        tasks = client.take(tubes, wait_ms=self.wait_ms,
                                            detach=self.detach)
                except E.SluiceError as e:
                    self._stop.wait(self._take_failed(e))
                    continue
                self._took(len(tasks))
                for task in tasks:
                    if self.routed:  # on its cluster's connection
                        loop = self._one_of(client.client(task.cluster),
                                            task, loop)
                        continue
                    if self._stop.is_set():
                        _call(client.release, task.id, task.lease)
                        continue
                    handler = self.handlers[task.tube]
                    if inspect.iscoroutinefunction(handler) and loop is None:
                        loop = asyncio.new_event_loop()
                    self._one(client, task, handler, loop)
        finally:
            if loop is not None:
                loop.close()
            client.close()

    def _one_of(self, client, task, loop):
        """A routed thread's task, on its cluster's connection; returns
        the thread's event loop (made for the first async handler)."""
        if self._stop.is_set():
            _call(client.release, task.id, task.lease)
            return loop
        handler = self.handlers[task.tube]
        if inspect.iscoroutinefunction(handler) and loop is None:
            loop = asyncio.new_event_loop()
        self._one(client, task, handler, loop)
        return loop

    @contextlib.contextmanager
    def _idle_in(self, client):
        """client waits in a take meanwhile: a stop cuts it."""
        with self._lock:
            self._idle.add(client)
        try:
            yield
        finally:
            with self._lock:
                self._idle.discard(client)

    def _may_take(self):
        """Whether a loop may take one more task: not stopping, and
        max_tasks not reached (the task is counted now)."""
        with self._lock:
            if self._stop.is_set() or (self.max_tasks is not None and
                                       self._reserved >= self.max_tasks):
                return False
            self._reserved += 1
            return True

    def _took(self, n, idle=True):
        """After a take of n tasks (0 or 1): an empty one gives its count
        back, and stops the worker once nothing came for idle seconds."""
        now = time.monotonic()
        with self._lock:
            if n:
                self._last_task = now
                return
            self._reserved -= 1
            if idle and self.idle is not None and \
                    now - self._last_task >= self.idle:
                self._stop.set()

    def _take_failed(self, e):
        """Seconds to wait after a take failed (none once stopping)."""
        self._took(0, idle=False)
        if self._stop.is_set():
            return 0
        log.warning("take: %s", e)
        return 0.2

    def _begin(self, client, task):
        r = _Running(client, task)
        with self._lock:
            self._running.append(r)
        return r

    def _end(self, r):
        with self._lock:
            self._running.remove(r)
            r.done = True

    def _late(self):
        """The tasks still running after the grace, to release."""
        with self._lock:
            late = [r for r in self._running if not r.done]
        for r in late:
            log.warning("task %d still running after %.1f s: released",
                        r.task.id, self.grace)
        return late

    def _due(self):
        """The running tasks whose lease is to be touched now."""
        now = time.monotonic()
        with self._lock:
            due = [r for r in self._running if r.next_touch <= now]
        for r in due:
            r.next_touch = now + max(0.05, r.task.ttr_ms / 3000.0)
        return due

    def _one(self, client, task, handler, loop):
        r = self._begin(client, task)
        try:
            if loop is not None and inspect.iscoroutinefunction(handler):
                result = _text(loop.run_until_complete(handler(task)))
            else:
                result = _text(handler(task))
        except Exception as exc:
            if task.cancelled:
                _ended_cancelled(client, task)
                return
            self.failed += 1
            _call(client.fail, task.id, task.lease, error_text(exc),
                  fatal=isinstance(exc, Fatal))
            return
        finally:
            self._end(r)
        if task.cancelled:
            _ended_cancelled(client, task)
        elif _call(client.ack, task.id, task.lease, result=result):
            self.processed += 1

    # ---- asyncio: for async handlers only, one event loop

    async def _run_async(self):
        from .aio import AsyncClient
        clients = [AsyncClient(self.urls, **self.client_options)
                   for _ in range(self.concurrency)]
        takers = [asyncio.create_task(self._taker(c)) for c in clients]
        while not self._stop.is_set() and not all(t.done() for t in takers):
            await asyncio.sleep(0.05)
            await self._touch_due_async()
        with self._lock:
            idle = list(self._idle)
        for c in idle:
            c._drop()  # the server undoes the take it waits in
        deadline = time.monotonic() + self.grace
        while not all(t.done() for t in takers) and \
                time.monotonic() < deadline:
            await asyncio.wait(takers, timeout=0.05)
            await self._touch_due_async()
        for r in self._late():
            await _acall(r.client.release, r.task.id, r.task.lease)
        for t in takers:
            t.cancel()
        await asyncio.gather(*takers, return_exceptions=True)
        for c in clients:
            await c.close()

    async def _touch_due_async(self):
        for r in self._due():
            try:
                await r.client.touch(r.task.id, r.task.lease)
            except E.Cancelled:
                self._cancelled(r)
            except E.SluiceError as e:
                log.warning("touch of task %d: %s", r.task.id, e)

    async def _taker(self, client):
        tubes = list(self.handlers)
        while self._may_take():
            try:
                with self._idle_in(client):
                    tasks = await client.take(tubes, wait_ms=self.wait_ms,
                                              detach=self.detach)
            except E.SluiceError as e:
                await asyncio.sleep(self._take_failed(e))
                continue
            self._took(len(tasks))
            for task in tasks:
                if self._stop.is_set():
                    await _acall(client.release, task.id, task.lease)
                else:
                    await self._one_async(client, task)

    async def _one_async(self, client, task):
        r = self._begin(client, task)
        try:
            r.handler = asyncio.ensure_future(self.handlers[task.tube](task))
            result = _text(await r.handler)
        except asyncio.CancelledError:
            if not task.cancelled:
                raise
            self._end(r)
            await _aended_cancelled(client, task)
            return
        except Exception as exc:
            if task.cancelled:
                self._end(r)
                await _aended_cancelled(client, task)
                return
            self.failed += 1
            await _acall(client.fail, task.id, task.lease, error_text(exc),
                         fatal=isinstance(exc, Fatal))
            return
        finally:
            if not r.done:
                self._end(r)
        if task.cancelled:
            await _aended_cancelled(client, task)
        elif await _acall(client.ack, task.id, task.lease, result=result):
            self.processed += 1


def _cut(client):
    """Ends the take a thread waits in: its connection is shut down (a
    Router's: each of its connections, its take over several clusters
    cancelled), so the server undoes the take if it found a task
    meanwhile."""
    if isinstance(client, Router):
        client._waits.cancel()
        for c in client.connections():
            _cut(c)
        return
    sock = client._sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _call(op, id, lease, *args, **kw):
    """A lease operation of the worker's own; a refusal (the lease
    ended meanwhile, the connection was lost) is logged. True when done."""
    try:
        op(id, lease, *args, **kw)
        return True
    except E.SluiceError as e:
        log.warning("%s of task %d: %s", op.__name__, id, e)
        return False


async def _acall(op, id, lease, *args, **kw):
    """_call's asyncio twin."""
    try:
        await op(id, lease, *args, **kw)
        return True
    except E.SluiceError as e:
        log.warning("%s of task %d: %s", op.__name__, id, e)
        return False


def _ended_cancelled(client, task):
    """A cancelled task's handler ended: the release ends its lease, which
    removes the task (the server answers Cancelled, as it should)."""
    try:
        client.release(task.id, task.lease)
    except (E.Cancelled, E.NotFound):
        pass
    except E.SluiceError as e:
        log.warning("release of cancelled task %d: %s", task.id, e)


async def _aended_cancelled(client, task):
    """_ended_cancelled's asyncio twin."""
    try:
        await client.release(task.id, task.lease)
    except (E.Cancelled, E.NotFound):
        pass
    except E.SluiceError as e:
        log.warning("release of cancelled task %d: %s", task.id, e)
