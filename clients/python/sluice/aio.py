"""The asyncio client: the operations of the blocking Client
(codec.Operations), each a coroutine, over asyncio streams.

The encoding, the framing and the rules for trying again are the blocking
client's (codec.py, transport.py); only the waiting differs. Calls on one
AsyncClient take turns (one request at a time on a connection, the REQ
socket's rule); open one per concurrent worker task that takes, since a
lease that is not detached belongs to the connection.
"""

import asyncio
import ssl

from . import codec
from . import errors as E
from . import transport as T
from .move import MoveOperations


class AsyncClient(T.Endpoints, codec.Operations, MoveOperations):
    """The asyncio twin of sluice.Client, with the same arguments:
    `await c.put(...)`, `async with sluice.AsyncClient(url) as c:`."""

    def __init__(self, urls=None, **options):
        super().__init__(urls, **options)
        self._reader = self._writer = None
        self._lock = None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def close(self):
        """Ends the session (its leases that are not detached end)."""
        self._drop()

    async def connect(self):
        await self._do(None)

    def _drop(self):
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def _do(self, req):
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            plan = T.Plan(self, req or codec.auth_request(""))
            while True:
                try:
                    if self._writer is None:
                        await self._open(plan)
                    if req is None:
                        return None
                    done, out = plan.settle(
                        await self._exchange(plan.req, plan))
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
                await asyncio.sleep(delay)

    async def _open(self, plan):
        url = self.url
        limit = plan.remaining(self.connect_timeout)
        ctx = None
        if url.tls:
            ctx = self.ssl_context or ssl.create_default_context()
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(url.host, url.port, ssl=ctx,
                                        server_hostname=url.host
                                        if ctx else None), limit)
            self._writer.write(T.HELLO_REQ)
            got = await asyncio.wait_for(self._reader.readexactly(8), limit)
            T.check_hello(got, url)
            if self.token is not None:
                await self._exchange(codec.auth_request(self.token), plan)
        except Exception as e:
            self._drop()
            raise T.open_failed(url, e, limit) from None

    async def _exchange(self, req, plan):
        url = self.url
        rid = self._next_rid()
        try:
            # one deadline for the whole exchange (cheaper than a
            # wait_for per read)
            async with asyncio.timeout(plan.remaining()):
                self._writer.write(T.frame(rid, req.message()))
                await self._writer.drain()
                while True:
                    head = await self._reader.readexactly(8)
                    n = T.frame_length(head, self.max_reply, url)
                    body = await self._reader.readexactly(n)
                    if T.frame_id(body) == rid:
                        break
        except TimeoutError:
            self._drop()
            raise E.TimedOut("%s: no reply to %s within %.1f s: its outcome "
                             "is unknown" % (url, req.name,
                                             plan.timeout or 0)) from None
        except asyncio.IncompleteReadError as e:
            self._drop()
            raise T.lost(url, "the server closed the connection%s" % (
                " in the middle of a reply" if e.partial else ""),
                True) from None
        except OSError as e:
            self._drop()
            raise T.lost(url, str(e), True) from None
        except E.SluiceError:
            self._drop()
            raise
        flags, r = codec.reply(req.name, body, 4)
        return req.decode(flags, r)
