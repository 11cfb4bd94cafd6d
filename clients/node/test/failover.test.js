'use strict';
// The Node client across a failover: three sluiced nodes elect their
// leader through a real etcd (--etcd, --sync-replicas 1, as
// tests/integration/test_failover.c runs them); a producer putting keyed
// tasks and a Worker, both given every node's URL, keep going while the
// leader is killed with kill -9, and every put the producer saw
// acknowledged is handled by the worker by the end. Skipped (ctest: 77)
// without `etcd`, which make test installs.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const sluice = require('..');
const { freePort, waitFor, SLUICED, SEGMENT } = require('./harness');

const SCALE = process.env.SLUICE_SANITIZED ? 2 : 1;

function start(t, dir, name, argv) {
  const log = fs.openSync(path.join(dir, `${name}.log`), 'w');
  // a sluiced's segments as the harness's (not etcd's flags)
  const args = argv[0] === SLUICED
    ? [...argv.slice(1), '--segment-size', SEGMENT] : argv.slice(1);
  const p = spawn(argv[0], args, { stdio: ['ignore', log, log] });
  t.after(() => { if (p.exitCode === null) p.kill('SIGKILL'); });
  return p;
}

async function leader(urls, skip) {
  let found = [];
  const one = async () => {
    found = [];
    for (let i = 0; i < urls.length; i++) {
      if (i === skip) continue;
      const c = new sluice.Client(urls[i], { timeoutMs: 1000 });
      try {
        if ((await c.stats()).role === 'leader') found.push(i);
      } catch (e) { /* down, or electing */ }
      c.close();
    }
    return found.length === 1;
  };
  assert.ok(await waitFor(one, 30000 * SCALE, 100), 'no single leader');
  return found[0];
}

test('a producer and a worker keep going across a kill -9 of the leader',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-fo-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const etcd = `http://127.0.0.1:${await freePort()}`;
    const peer = `http://127.0.0.1:${await freePort()}`;
    start(t, dir, 'etcd', ['etcd', '--name', 'e0', '--data-dir',
      path.join(dir, 'etcd'), '--listen-client-urls', etcd,
      '--advertise-client-urls', etcd, '--listen-peer-urls', peer,
      '--initial-advertise-peer-urls', peer, '--initial-cluster',
      `e0=${peer}`, '--initial-cluster-token', 'node-failover']);
    assert.ok(await waitFor(async () => {
      try {
        const r = await fetch(`${etcd}/health`);
        return (await r.text()).includes('"health":"true"');
      } catch (e) { return false; }
    }, 30000, 100), 'etcd did not become healthy');
    const urls = [];
    const nodes = [];
    for (let i = 0; i < 3; i++) {
      urls.push(`tcp://127.0.0.1:${await freePort()}`);
      nodes.push(start(t, dir, `node${i}`, [SLUICED, '--data',
        path.join(dir, `n${i}`), '--listen', urls[i], '--repl-listen',
        `tcp://127.0.0.1:${await freePort()}`, '--etcd', etcd, '--cluster',
        'js', '--node', `node${i}`, '--sync-replicas', '1']));
    }
    const T0 = Date.now();
    const first = await leader(urls);
    process.stderr.write(`leader after ${Date.now() - T0} ms\n`);

    const handled = new Set();
    const worker = new sluice.Worker(urls, { concurrency: 2, waitMs: 200 });
    worker.task('orders', (task) => { handled.add(task.payload.toString()); });
    const working = worker.run({ signals: false });
    t.after(() => worker.stop());

    const acked = [];
    let killedAt = 0;
    let firstAfter = 0;
    let stop = false;
    const producer = (async () => {
      const c = new sluice.Client(urls, { timeoutMs: 30000 });
      for (let n = 0; !stop && n < 100000; n++) {
        const key = `order-${n}`;
        for (let attempt = 0; attempt < 5; attempt++) {
          try {
            await c.put('orders', key, { key });
            acked.push(key);
            if (killedAt && !firstAfter) firstAfter = Date.now();
            break;
          } catch (e) {
            process.stderr.write(`put ${key}: ${e.message}\n`);
          }
        }
      }
      c.close();
    })();

    assert.ok(await waitFor(() => acked.length >= 50, 30000 * SCALE));
    nodes[first].kill('SIGKILL');
    killedAt = Date.now();
    const before = acked.length;
    assert.ok(await waitFor(() => acked.length >= before + 50,
      60000 * SCALE), 'the producer did not go on after the kill');
    process.stderr.write(`first put acknowledged ${firstAfter - killedAt} ` +
      'ms after the kill -9 of the leader\n');
    stop = true;
    await producer;
    process.stderr.write(`${acked.length} puts at ${Date.now() - T0} ms\n`);
    const now = await leader(urls, first);
    const c = new sluice.Client(urls[now], { timeoutMs: 10000 });
    t.after(() => c.close());
    const drained = await waitFor(async () => {
      const s = (await c.stats('orders')).tubes.orders;
      return s.ready + s.delayed + s.taken === 0 &&
        acked.every((k) => handled.has(k));
    }, 60000 * SCALE, 100);
    const lost = acked.filter((k) => !handled.has(k));
    assert.ok(drained, `${lost.length} acknowledged puts not handled: ` +
      lost.slice(0, 10).join(' '));
    process.stderr.write(`drained at ${Date.now() - T0} ms\n`);
    worker.stop();
    await working;
    process.stderr.write(`stopped at ${Date.now() - T0} ms\n`);
  });

if (!spawnSync('sh', ['-c', 'command -v etcd']).stdout.length) {
  process.stderr.write('no etcd (make test installs etcd-server): skipped\n');
  process.exit(77);
}
