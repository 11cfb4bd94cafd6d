'use strict';
// The Node.js clients' workloads for bench/clients.sh: put, and drain
// (take + ack), closed-loop, over C connections, with sluice's client, or
// with ioredis against Redis (a stream and a consumer group, as
// sluice-bench's redis target: XADD; XREADGROUP COUNT 1, then XACK + XDEL
// pipelined) for reference.
//
//   node bench_client.js sluice|redis URL put|drain CONNS TASKS SECONDS
//
// Prints one JSON line, as bench_client.py does.

const path = require('path');
const { Client } = require(path.join(__dirname, '..', '..', 'clients', 'node'));

const PAYLOAD = Buffer.alloc(100, 'x');
const TUBE = 'bench';

async function main() {
  const [client, url, workload, c, n, s] = process.argv.slice(2);
  const conns = Number(c);
  const secs = Number(s);
  let left = Number(n);
  let done = 0;
  const end = Date.now() + (workload === 'put' ? secs : 3 * secs) * 1000;
  const one = () => (left > 0 && Date.now() < end ? (left--, true) : false);
  let loop;
  if (client === 'sluice') {
    if (workload === 'drain') {
      const p = new Client(url);
      for (let i = 0; i < left; i += 1000) {
        await p.putBatch(Array.from({ length: Math.min(1000, left - i) },
          () => ({ tube: TUBE, payload: PAYLOAD })));
      }
      p.close();
    }
    loop = async () => {
      const k = new Client(url);
      while (one()) {
        if (workload === 'put') {
          await k.put(TUBE, PAYLOAD);
        } else {
          const [t] = await k.take(TUBE);
          if (!t) break;
          await k.ack(t.id, t.lease);
        }
        done++;
      }
      k.close();
    };
  } else {
    const Redis = require('ioredis');
    const [host, port] = url.split('//')[1].split(':');
    const conn = () => new Redis({ host, port: Number(port) });
    if (workload === 'drain') {
      const r = conn();
      await r.xgroup('CREATE', 'stream', 'g', '0', 'MKSTREAM');
      for (let i = 0; i < left; i += 1000) {
        const p = r.pipeline();
        for (let j = 0; j < Math.min(1000, left - i); j++) {
          p.xadd('stream', '*', 'payload', PAYLOAD);
        }
        await p.exec();
      }
      r.disconnect();
    }
    let next = 0;
    loop = async () => {
      const r = conn();
      const me = `c${next++}`;
      while (one()) {
        if (workload === 'put') {
          await r.xadd('stream', '*', 'payload', PAYLOAD);
        } else {
          const got = await r.xreadgroup('GROUP', 'g', me, 'COUNT', 1,
            'STREAMS', 'stream', '>');
          if (!got) break;
          const id = got[0][1][0][0];
          await r.pipeline().xack('stream', 'g', id).xdel('stream', id).exec();
        }
        done++;
      }
      r.disconnect();
    };
  }
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conns }, loop));
  const took = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ client: `${client}-node`, workload, conns,
    ops: done, secs: Number(took.toFixed(3)),
    ops_per_s: Math.round(done / took) }));
}

main();
