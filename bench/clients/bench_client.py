"""The Python clients' workloads for bench/clients.sh: put, and drain
(take + ack), closed-loop, over C connections, with sluice's client in
threads or in asyncio, or with redis-py (threads, asyncio) against Redis
for reference: a stream and a consumer group, as sluice-bench's redis
target (XADD; XREADGROUP COUNT 1, then XACK + XDEL pipelined).

    bench_client.py CLIENT URL put|drain CONNS TASKS SECONDS

CLIENT: sluice-threads, sluice-asyncio, redis-threads or redis-asyncio
(redis-py's redis.asyncio).

Prints one JSON line: {"client":..., "workload":..., "conns":...,
"ops":N, "secs":S, "ops_per_s":R}. put stops after TASKS tasks or
SECONDS; drain preloads TASKS tasks (untimed) and stops once they are
all taken and acked, or after 3 x SECONDS.
"""

import asyncio
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "clients", "python"))
import sluice  # noqa: E402

PAYLOAD = b"x" * 100
TUBE = "bench"


class Budget:
    """The tasks left to put or take, shared by the connections."""

    def __init__(self, n, secs):
        self.left = n
        self.end = time.monotonic() + secs
        self.lock = threading.Lock()
        self.done = 0

    def one(self):
        with self.lock:
            if self.left <= 0 or time.monotonic() > self.end:
                return False
            self.left -= 1
            return True

    def count(self):
        with self.lock:
            self.done += 1


def preload(url, n):
    with sluice.Client(url) as c:
        for i in range(0, n, 1000):
            c.put_batch([dict(tube=TUBE, payload=PAYLOAD)
                         for _ in range(min(1000, n - i))])


def sluice_threads(url, workload, conns, b):
    def run():
        with sluice.Client(url) as c:
            while b.one():
                if workload == "put":
                    c.put(TUBE, PAYLOAD)
                else:
                    tasks = c.take(TUBE)
                    if not tasks:
                        return
                    c.ack(tasks[0].id, tasks[0].lease)
                b.count()
    threads = [threading.Thread(target=run) for _ in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def sluice_asyncio(url, workload, conns, b):
    async def one():
        async with sluice.AsyncClient(url) as c:
            while b.one():
                if workload == "put":
                    await c.put(TUBE, PAYLOAD)
                else:
                    tasks = await c.take(TUBE)
                    if not tasks:
                        return
                    await c.ack(tasks[0].id, tasks[0].lease)
                b.count()

    async def run():
        await asyncio.gather(*(one() for _ in range(conns)))
    asyncio.run(run())


def redis_address(url):
    host, port = url.rsplit("//", 1)[1].split(":")
    return dict(host=host, port=int(port), single_connection_client=True)


def redis_preload(url, n):
    """The stream, its group and n entries, untimed (pipelined)."""
    import redis
    r = redis.Redis(**redis_address(url))
    r.xgroup_create("stream", "g", id="0", mkstream=True)
    for i in range(0, n, 1000):
        p = r.pipeline(transaction=False)
        for _ in range(min(1000, n - i)):
            p.xadd("stream", {"payload": PAYLOAD})
        p.execute()
    r.close()


def redis_ack(r, got):
    """The pipeline that acks and deletes the entry XREADGROUP gave."""
    mid = got[0][1][0][0]
    return r.pipeline(transaction=False).xack("stream", "g", mid).xdel(
        "stream", mid)


def redis_asyncio(url, workload, conns, b):
    import redis.asyncio as aredis

    async def one(i):
        r = aredis.Redis(**redis_address(url))
        while b.one():
            if workload == "put":
                await r.xadd("stream", {"payload": PAYLOAD})
            else:
                got = await r.xreadgroup("g", "c%d" % i, {"stream": ">"},
                                         count=1)
                if not got:
                    break
                await redis_ack(r, got).execute()
            b.count()
        await r.close()

    async def run():
        await asyncio.gather(*(one(i) for i in range(conns)))
    asyncio.run(run())


def redis_threads(url, workload, conns, b):
    import redis

    def run(i):
        r = redis.Redis(**redis_address(url))
        while b.one():
            if workload == "put":
                r.xadd("stream", {"payload": PAYLOAD})
            else:
                got = r.xreadgroup("g", "c%d" % i, {"stream": ">"}, count=1)
                if not got:
                    return
                redis_ack(r, got).execute()
            b.count()
        r.close()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main():
    client, url, workload, conns, n, secs = sys.argv[1:7]
    conns, n, secs = int(conns), int(n), float(secs)
    if workload == "drain":
        (preload if client.startswith("sluice") else redis_preload)(url, n)
    b = Budget(n, secs if workload == "put" else 3 * secs)
    t0 = time.monotonic()
    {"sluice-threads": sluice_threads, "sluice-asyncio": sluice_asyncio,
     "redis-threads": redis_threads,
     "redis-asyncio": redis_asyncio}[client](url, workload, conns, b)
    took = time.monotonic() - t0
    print(json.dumps({"client": client, "workload": workload, "conns": conns,
                      "ops": b.done, "secs": round(took, 3),
                      "ops_per_s": round(b.done / took)}))


if __name__ == "__main__":
    main()
