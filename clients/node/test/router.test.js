'use strict';
// The Node client's Router against two clusters of one node each and one
// etcd (as tests/integration/test_clustermap.c runs them): the map set and
// read through a node, a put of another cluster's tube refused Moved with
// the owner named; puts, split batches, takes and acks routed by tube,
// stats summed; a take that waits on both clusters getting each task once
// (a task a cancelled wait took is released at once); a draining cluster's
// old tasks taken first; a routed Worker over both clusters; Routers with
// a stale map (a put, a take, a batch) corrected by the Moved error; wait,
// cancel, batches and schedules routed to the cluster of their task, batch
// or tube; a put, a batch and a take right after a map change served by
// a new owner that had not read it yet (its Moved sent again, not
// rejected); a tube moved from one cluster to the other through the
// Router (every task once, keys, states, settings, limits and group
// settings carried, a taken task ended at the source, the reservations
// of keys completed there carried and counted), and one that goes on
// over a SIGKILL of the source's node; a key unique across a move (a put
// of a key taken at the source answering the id its copy gets at the
// target), a keyed put refused MovingIn while the target's keys are
// pending sent again (Client, Router, putBatch), and a putBatch whose
// sending again fails as a whole (the node killed) answering each item,
// its unkeyed one put; bad input refused; a
// put, a batch and a take through a node behind the map for seconds
// (a third cluster, sluiced-fault's pause mapwatch) sent again with a
// backoff until it caught up.
// Skipped (ctest: 77) without `etcd`,
// which make test installs.

const { test, before, after } = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const sluice = require('..');
const { freePort, waitFor, sleep, cli, SLUICED, SEGMENT } =
  require('./harness');

const SCALE = process.env.SLUICE_SANITIZED ? 2 : 1;
const procs = [];
const urls = {};
const direct = {};
const argvs = {};
const nodes = {};
const routers = [];
let dir;

function start(name, argv, env = process.env) {
  const log = fs.openSync(path.join(dir, `${name}.log`), 'a');
  const args = argv.slice(1);
  // a sluiced's segments as the harness's (not etcd's flags)
  if (args.includes('--data') && !args.includes('--segment-size'))
    args.push('--segment-size', SEGMENT);
  const p = spawn(argv[0], args, { stdio: ['ignore', log, log], env });
  procs.push(p);
  return p;
}

function router(url, options = {}) {
  const r = new sluice.Router(url, { timeoutMs: 10000, ...options });
  routers.push(r);
  return r;
}

// Both nodes know revision rev, with every cluster's leader.
async function knows(rev) {
  assert.ok(await waitFor(async () => {
    for (const c of Object.values(direct)) {
      const m = await c.clusterMap().catch(() => null);
      if (!m || m.revision < rev || Object.values(m.clusters).some((x) =>
        !x.leader)) {
        return false;
      }
    }
    return true;
  }, 10000 * SCALE, 20), `the nodes did not learn revision ${rev}`);
}

async function counts(name, tube) {
  const t = (await direct[name].stats(tube).catch(() => null))?.tubes[tube];
  return t || { ready: 0, delayed: 0, taken: 0, buried: 0 };
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-router-'));
  const etcd = `http://127.0.0.1:${await freePort()}`;
  const peer = `http://127.0.0.1:${await freePort()}`;
  start('etcd', ['etcd', '--name', 'e0', '--data-dir',
    path.join(dir, 'etcd'), '--listen-client-urls', etcd,
    '--advertise-client-urls', etcd, '--listen-peer-urls', peer,
    '--initial-advertise-peer-urls', peer, '--initial-cluster',
    `e0=${peer}`, '--initial-cluster-token', 'node-router']);
  assert.ok(await waitFor(async () => {
    try {
      const r = await fetch(`${etcd}/health`);
      return (await r.text()).includes('"health":"true"');
    } catch (e) { return false; }
  }, 30000, 100), 'etcd did not become healthy');
  argvs.etcd = etcd;
  for (const name of ['p1', 'p2']) {
    urls[name] = `tcp://127.0.0.1:${await freePort()}`;
    // a lease in etcd shorter than the default 3 s in plain builds: a
    // node killed and started again leads once its old lease ends
    argvs[name] = [SLUICED, '--data', path.join(dir, name), '--listen',
      urls[name], '--repl-listen', `tcp://127.0.0.1:${await freePort()}`,
      '--etcd', etcd, '--cluster', name, '--node', name, '--leader-ttl',
      SCALE === 1 ? '2s' : '3s'];
    nodes[name] = start(name, argvs[name]);
    direct[name] = new sluice.Client(urls[name], { timeoutMs: 10000 });
  }
  for (const c of Object.values(direct)) {
    assert.ok(await waitFor(async () => (await c.stats().catch(() => ({})))
      .role === 'leader', 30000 * SCALE, 50), `${c.url} does not lead`);
  }
  await knows(await direct.p1.mapSet('', 'p1'));
  await knows(await direct.p1.mapSet('two.', 'p2'));
});

after(async () => {
  for (const r of routers) r.close();
  for (const c of Object.values(direct)) c.close();
  const ended = (p) => p.exitCode !== null || p.signalCode !== null;
  for (const p of procs.reverse()) {
    if (!ended(p)) p.kill('SIGTERM');
    if (!await waitFor(() => ended(p), 10000)) p.kill('SIGKILL');
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a node serves the map and refuses another cluster\'s tube, naming ' +
  'the owner', async () => {
  const m = await direct.p2.clusterMap();
  assert.strictEqual(m.cluster, 'p2');
  assert.deepStrictEqual(m.entries, [
    { prefix: '', cluster: 'p1', draining: [] },
    { prefix: 'two.', cluster: 'p2', draining: [] }]);
  assert.deepStrictEqual(m.clusters.p1, { leader: urls.p1,
    members: [urls.p1] });
  await assert.rejects(direct.p1.put('two.x', 'no'), (e) =>
    e instanceof sluice.Moved && e.code === 33 && e.cluster === 'p2' &&
    e.revision === m.revision && e.urls.length === 1 &&
    e.urls[0] === urls.p2 && e.message.includes(`owner: p2 at ${urls.p2}`));
  await assert.rejects(direct.p2.take(['one.x', 'two.x']), sluice.Moved);
  assert.strictEqual((await counts('p2', 'two.x')).ready, 0);
});

test('puts, batches, takes and acks routed by tube; stats summed',
  async () => {
    const r = router(urls.p1);
    for (let i = 0; i < 10; i++) {
      assert.strictEqual((await r.put('one.x', `1-${i}`)).cluster, 'p1');
      assert.strictEqual((await r.put('two.x', `2-${i}`)).cluster, 'p2');
    }
    const items = [];
    for (let i = 0; i < 20; i++) {
      items.push({ tube: i % 2 ? 'two.x' : 'one.x', payload: `b-${i}` });
    }
    const res = await r.putBatch(items);
    assert.strictEqual(res.length, 20);
    res.forEach((x, i) => {
      assert.strictEqual(x.error, null);
      assert.ok(x.created && x.id > 0);
      assert.strictEqual(x.cluster, i % 2 ? 'p2' : 'p1');
    });
    assert.strictEqual((await counts('p1', 'one.x')).ready, 20);
    assert.strictEqual((await counts('p2', 'two.x')).ready, 20);
    const s = await r.stats();
    assert.strictEqual(s.ready, 40);
    assert.deepStrictEqual(Object.keys(s.clusters).sort(), ['p1', 'p2']);
    assert.strictEqual(s.clusters.p2.stats.totals.ready, 20);
    const st = await r.stats('two.x');
    assert.strictEqual(st.ready, 20);
    assert.strictEqual(st.clusters.p1.stats, null);
    assert.strictEqual(st.clusters.p1.error, null);
    const cl = await r.clusters();
    assert.strictEqual(cl.p2.cluster.cluster, 'p2');

    const seen = new Set();
    let batch = [];
    for (let round = 0; round < 100 && seen.size < 40; round++) {
      const tasks = await r.take(['one.x', 'two.x'], { waitMs: 500, max: 3 });
      for (const t of tasks) {
        const key = `${t.cluster}/${t.id}`;
        assert.ok(!seen.has(key), `${key} taken twice`);
        seen.add(key);
        assert.strictEqual(t.cluster, t.tube === 'one.x' ? 'p1' : 'p2');
        if (seen.size % 2) {
          assert.strictEqual((await r.ack(t)).state, 'gone');
        } else {
          batch.push(t);
        }
      }
      if (batch.length >= 4) {
        const acked = await r.ackBatch(batch);
        acked.forEach((a, i) => {
          assert.strictEqual(a.error, null);
          assert.strictEqual(a.id, batch[i].id);
          assert.strictEqual(a.cluster, batch[i].cluster);
        });
        batch = [];
      }
    }
    for (const a of await r.ackBatch(batch)) assert.strictEqual(a.error, null);
    assert.strictEqual(seen.size, 40);
    for (const [name, tube] of [['p1', 'one.x'], ['p2', 'two.x']]) {
      const c = await counts(name, tube);
      assert.strictEqual(c.ready + c.taken, 0, `${name} ${tube}`);
    }
    // the lease calls go where the task came from
    await r.put('two.y', 'lease');
    let [t] = await r.take('two.y', { waitMs: 1000 });
    assert.strictEqual((await r.touch(t)).state, 'taken');
    assert.strictEqual((await r.release(t)).state, 'ready');
    [t] = await r.take('two.y', { waitMs: 1000 });
    await r.fail(t, 'boom', { fatal: true });
    assert.strictEqual((await counts('p2', 'two.y')).buried, 1);
    assert.strictEqual((await direct.p2.peek(t.id)).lastError, 'boom');
  });

test('a take waiting on both clusters gets each task once', async () => {
  const r = router(urls.p2);
  // the wait is over as soon as either cluster has a task
  for (const [name, tube] of [['p2', 'two.w'], ['p1', 'one.w']]) {
    const t0 = performance.now();
    const taking = r.take(['one.w', 'two.w'], { waitMs: 8000 });
    await sleep(300);
    await direct[name].put(tube, `late-${name}`);
    const got = await taking;
    const ms = performance.now() - t0;
    assert.strictEqual(got.length, 1);
    assert.strictEqual(got[0].cluster, name);
    assert.strictEqual(got[0].payload.toString(), `late-${name}`);
    assert.ok(ms < 6000, `the take waited ${ms} ms`);
    await r.ack(got[0]);
  }
  // a task the other cluster's wait took after the first answered is
  // given back at once (it would stay taken until its ttr otherwise), its
  // take undone: its attempt uncounted
  let untakenSeen = 0;
  for (let i = 0; i < 3; i++) {
    const takes0 = (await counts('p1', 'one.w')).counters.takes;
    const taking = r.take(['one.w', 'two.w'], { waitMs: 8000 });
    await sleep(100);
    await direct.p2.put('two.w', 'first');
    const [won] = await taking;
    assert.strictEqual(won.cluster, 'p2');
    const { id } = await direct.p1.put('one.w', 'meanwhile');
    assert.ok(await waitFor(async () => {
      const c = await counts('p1', 'one.w');
      return c.ready === 1 && c.taken === 0;
    }, 3000 * SCALE, 20), 'the task a cancelled wait took is not ready');
    if ((await counts('p1', 'one.w')).counters.takes > takes0) untakenSeen++;
    assert.strictEqual((await direct.p1.peek(id)).attempts, 0);
    await r.ack(won);
    const [back] = await r.take('one.w', { waitMs: 1000 });
    assert.strictEqual(back.id, id);
    assert.strictEqual(back.attempts, 1);
    await r.ack(back);
  }
  process.stderr.write(`tasks taken by a cancelled wait and given back ` +
    `uncounted: ${untakenSeen} of 3\n`);

  // four workers over both clusters, a producer putting into both
  const N = 200;
  const got = new Map();
  let stop = false;
  const workers = [0, 1, 2, 3].map(async (w) => {
    const wr = router(w % 2 ? urls.p1 : urls.p2);
    while (!stop) {
      const tasks = await wr.take(['one.w', 'two.w'], { waitMs: 300,
        max: 2 });
      for (const t of tasks) {
        const p = t.payload.toString();
        got.set(p, (got.get(p) || 0) + 1);
        await wr.ack(t);
      }
    }
  });
  const producer = router(urls.p1);
  for (let i = 0; i < N; i++) {
    await producer.put(i % 2 ? 'two.w' : 'one.w', `w-${i}`);
    if (i % 20 === 0) await sleep(50);
  }
  const all = await waitFor(() => got.size >= N, 60000 * SCALE, 50);
  stop = true;
  await Promise.all(workers);
  assert.ok(all, `${got.size} of ${N} tasks taken`);
  for (const [p, n] of got) assert.strictEqual(n, 1, `${p} taken ${n} times`);
  for (const [name, tube] of [['p1', 'one.w'], ['p2', 'two.w']]) {
    const c = await counts(name, tube);
    assert.strictEqual(c.ready + c.taken, 0, `${name} ${tube}`);
  }
});

test('a draining cluster\'s tasks are taken first, new puts go to the ' +
  'owner', async () => {
  await direct.p1.put('dr.t', 'old');
  await knows(await direct.p1.mapSet('dr.', 'p2', ['p1']));
  const r = router(urls.p1);
  assert.strictEqual((await r.put('dr.t', 'new')).cluster, 'p2');
  const [a] = await r.take('dr.t', { waitMs: 1000 });
  assert.deepStrictEqual([a.cluster, a.payload.toString()], ['p1', 'old']);
  const [b] = await r.take('dr.t', { waitMs: 1000 });
  assert.deepStrictEqual([b.cluster, b.payload.toString()], ['p2', 'new']);
  await r.ack(a);
  await r.ack(b);
  assert.strictEqual((await counts('p1', 'dr.t')).taken, 0);
  await knows(await direct.p1.mapDelete('dr.'));
});

test('Routers with a stale map are corrected by the Moved error',
  async () => {
    // a put
    const stale = router(urls.p2, { refreshMs: 0 });
    await stale.put('m.t', 'before');
    assert.strictEqual((await counts('p1', 'm.t')).ready, 1);
    await knows(await direct.p2.mapSet('m.', 'p2'));
    assert.strictEqual((await stale.put('m.t', 'after')).cluster, 'p2');
    assert.strictEqual((await counts('p1', 'm.t')).ready, 1);
    assert.strictEqual((await counts('p2', 'm.t')).ready, 1);

    // a take
    const taker = router(urls.p1, { refreshMs: 0 });
    await taker.clusterMap();
    await knows(await direct.p1.mapSet('k.', 'p2'));
    await direct.p2.put('k.t', 'here');
    const [t] = await taker.take('k.t', { waitMs: 1000 });
    assert.deepStrictEqual([t.cluster, t.payload.toString()], ['p2', 'here']);
    await taker.ack(t);

    // a batch: the refused part put again where the map now says
    const batcher = router(urls.p1, { refreshMs: 0 });
    await batcher.clusterMap();
    await knows(await direct.p1.mapSet('mb.', 'p2'));
    const res = await batcher.putBatch([{ tube: 'mb.x', payload: 'a' },
      { tube: 'one.b', payload: 'b' }, { tube: 'two.b', payload: 'c' }]);
    assert.deepStrictEqual(res.map((x) => [x.cluster, x.error]),
      [['p2', null], ['p1', null], ['p2', null]]);
    assert.strictEqual((await counts('p2', 'mb.x')).ready, 1);
    assert.strictEqual((await counts('p1', 'one.b')).ready, 1);
    assert.strictEqual((await counts('p1', 'mb.x')).ready, 0);
  });

test('a put, a batch and a take right after a map change, sent by a ' +
  'Router that read it before the new owner did, are served', async () => {
  // the node that makes a change knows it at once, the other within its
  // poll (200 ms): its Moved names an older revision than the Router's,
  // and the request goes to it again once it knows, not rejected
  const r = { p1: router(urls.p1), p2: router(urls.p2) };
  const behind = [];
  for (const x of Object.values(r)) {
    const again = x.again.bind(x);
    x.again = (e, st) => {
      if (e.revision > 0 && e.revision < x.map.revision) behind.push(e);
      return again(e, st);
    };
  }
  for (let i = 0; i < 6; i++) {
    const [to, by] = i % 2 === 0 ? ['p2', 'p1'] : ['p1', 'p2'];
    await r[by].mapSet('ra.', to);
    if (i < 2) {
      assert.strictEqual((await r[by].put('ra.x', `${i}`)).cluster, to);
    } else if (i < 4) {
      const [res] = await r[by].putBatch([{ tube: 'ra.x', payload: `${i}` }]);
      assert.deepStrictEqual([res.cluster, res.error], [to, null]);
    } else {
      const got = await r[by].take('ra.x', { waitMs: 0 });
      assert.deepStrictEqual(got.map((t) => t.cluster), [to]);
      await r[by].ack(got[0]);
    }
  }
  assert.ok(behind.length > 0, 'no node was behind the Router\'s map');
  const n = (await counts('p1', 'ra.x')).ready +
    (await counts('p2', 'ra.x')).ready;
  assert.strictEqual(n, 2); // 4 put, one taken and acked at each
});

test('a routed Worker handles the tasks of both clusters, each once',
  async () => {
    const r = router(urls.p1);
    const items = [];
    for (let i = 0; i < 40; i++) {
      items.push({ tube: i % 2 ? 'two.k' : 'one.k', payload: `k-${i}` });
    }
    items.push({ tube: 'two.k', payload: 'fatal' });
    await r.putBatch(items);
    const seen = new Map();
    const worker = new sluice.Worker(urls.p2, { routed: true,
      concurrency: 3, waitMs: 300, idleMs: 1500, timeoutMs: 10000 });
    const handle = (task) => {
      const p = task.payload.toString();
      seen.set(p, (seen.get(p) || 0) + 1);
      if (p === 'fatal') throw new sluice.Fatal('no');
      return `done ${p}`;
    };
    worker.task('one.k', handle).task('two.k', handle);
    await worker.run({ signals: false });
    assert.strictEqual(seen.size, 41);
    for (const [p, n] of seen) assert.strictEqual(n, 1, `${p} ${n} times`);
    assert.strictEqual(worker.processed, 40);
    for (const [name, tube, buried] of [['p1', 'one.k', 0],
      ['p2', 'two.k', 1]]) {
      const c = await counts(name, tube);
      assert.deepStrictEqual([c.ready, c.taken, c.buried], [0, 0, buried],
        `${name} ${tube}`);
    }
  });

test('wait, cancel, batches and schedules go to the cluster of their ' +
  'task, batch or tube', async () => {
  const r = router(urls.p1); // given p1's node: p2's calls are routed
  const [tube, ztube] = ['two.f', 'two.z'];
  // wait: on the task's cluster, on a connection of its own
  const a = await r.put(tube, 'a');
  assert.strictEqual(a.cluster, 'p2');
  const waiting = r.wait(a, 8000 * SCALE);
  const other = await r.put(tube, 'during the wait');
  assert.strictEqual(other.cluster, 'p2');
  let [t] = await r.take(tube, { waitMs: 1000 });
  assert.strictEqual(t.id, a.id);
  await r.ack(t, { result: 'ok' });
  const out = await waiting;
  assert.deepStrictEqual([out.final, out.state, out.result, out.tube,
    out.cluster], [true, 'done', 'ok', tube, 'p2']);
  assert.strictEqual((await r.wait({ id: a.id, tube }, 0)).result, 'ok');
  await assert.rejects(r.wait(a.id, 0), sluice.Invalid);
  await assert.rejects(r.cancel({ id: a.id }), sluice.Invalid);

  // cancel: the task's cluster; cancelBatch split by cluster
  assert.strictEqual(await r.cancel(other), undefined);
  assert.strictEqual((await r.wait(other, 0)).state, 'cancelled');
  const one = await r.put('one.f', 'x');
  const two = await r.put(tube, 'y');
  const res = await r.cancelBatch([one, two]);
  assert.deepStrictEqual(res.map((x) => [x.id, x.error, x.cluster]),
    [[one.id, null, 'p1'], [two.id, null, 'p2']]);
  assert.strictEqual((await counts('p1', 'one.f')).ready, 0);
  assert.strictEqual((await counts('p2', tube)).ready, 0);

  // a batch of p2's tube: made, shown, listed, closed there alone
  for (let i = 0; i < 3; i++) await r.put(tube, `b${i}`, { batch: 'bf' });
  const set = await r.batchSet('bf', { onSuccess: 'two.done' });
  assert.deepStrictEqual([set.cluster, set.total, set.ready],
    ['p2', 3, 3]);
  await assert.rejects(direct.p1.batchShow('bf'), sluice.NotFound);
  assert.strictEqual((await direct.p2.batchShow('bf')).total, 3);
  const listed = (await r.batchList()).batches.filter((b) =>
    b.name === 'bf');
  assert.deepStrictEqual(listed.map((b) => b.cluster), ['p2']);
  for (let i = 0; i < 3; i++) {
    [t] = await r.take(tube, { waitMs: 1000 });
    assert.strictEqual(await r.batchOf(t), 'bf');
    await r.ack(t);
  }
  const closed = await r.batchClose('bf');
  assert.deepStrictEqual([closed.closed, closed.ended, closed.acked],
    [true, true, 3]);
  assert.ok(await waitFor(async () => (await counts('p2', 'two.done'))
    .ready === 1, 5000 * SCALE), 'the batch\'s callback did not fire on p2');
  await assert.rejects(r.batchShow('nobatch'), sluice.NotFound);
  await assert.rejects(r.batchClose('nobatch'), sluice.NotFound);

  // a batch made before its tasks: where its tube says; cancelled there
  const made = await r.batchSet('bc', { onComplete: 'two.done',
    tube: ztube });
  assert.strictEqual(made.cluster, 'p2');
  await r.put(ztube, 'c1', { batch: 'bc' });
  await r.put(ztube, 'c2', { batch: 'bc' });
  const cancelled = await r.batchCancel('bc');
  assert.strictEqual(cancelled.cluster, 'p2');
  assert.ok(await waitFor(async () => (await counts('p2', ztube)).ready ===
    0, 5000 * SCALE), 'the cancelled batch\'s tasks are still ready');

  // a batch over both clusters: its parts summed, closed on both
  await r.put('one.s', 's1', { batch: 'span' });
  await r.put('two.s', 's2', { batch: 'span' });
  const span = await r.batchShow('span');
  assert.deepStrictEqual([span.cluster, span.total, Object.keys(span.parts)
    .sort()], [null, 2, ['p1', 'p2']]);
  const sc = await r.batchClose('span');
  assert.ok(sc.parts.p1.closed && sc.parts.p2.closed && sc.closed);

  // schedules: set where their tube is, found by name
  const s = await r.scheduleSet('sf', ztube, '0 3 * * *', 'tick');
  assert.strictEqual(s.cluster, 'p2');
  assert.strictEqual((await direct.p2.scheduleShow('sf')).tube, ztube);
  await assert.rejects(direct.p1.scheduleShow('sf'), sluice.NotFound);
  assert.strictEqual((await r.scheduleShow('sf')).cluster, 'p2');
  assert.strictEqual((await r.schedulePause('sf')).paused, true);
  assert.strictEqual((await direct.p2.scheduleShow('sf')).paused, true);
  assert.strictEqual((await r.scheduleResume('sf')).paused, false);
  assert.deepStrictEqual((await r.scheduleList()).filter((x) =>
    x.name === 'sf').map((x) => x.cluster), ['p2']);
  // one name, one schedule: set again for a tube of p2, p1's goes
  await direct.p1.scheduleSet('sx', 'one.z', '0 4 * * *', 'old');
  assert.strictEqual((await r.scheduleSet('sx', ztube, '0 4 * * *',
    'new')).cluster, 'p2');
  await assert.rejects(direct.p1.scheduleShow('sx'), sluice.NotFound);
  assert.strictEqual((await direct.p2.scheduleShow('sx')).payload
    .toString(), 'new');
  for (const nm of ['sf', 'sx']) await r.scheduleDelete(nm);
  await assert.rejects(direct.p2.scheduleShow('sf'), sluice.NotFound);
  await assert.rejects(r.scheduleShow('sf'), sluice.NotFound);
});

test('a tube moved through the Router keeps every task, once, with its ' +
  'key, state and settings', async () => {
  const r = router(urls.p2); // the tube is p1's (the default)
  const tube = 'mvn';
  const N = 300;
  await direct.p1.tubeSet(tube, { ttrMs: 45000, maxAttempts: 7 });
  const items = [];
  for (let i = 0; i < N; i++) {
    items.push({ tube, payload: `m-${i}`, key: `k${i}`,
      delayMs: i < 20 ? 600000 : 0, priority: i % 5,
      group: i % 3 ? null : 'g3' });
  }
  for (let i = 0; i < N; i += 100) {
    const res = await direct.p1.putBatch(items.slice(i, i + 100));
    for (const x of res) assert.ok(x.created, String(x.error));
  }
  const lim = cli(urls.p1, 'tube', 'set', tube, '--concurrency', '100');
  assert.ok(!lim || !lim.code, lim && lim.stderr);
  // a group's own settings and another's pause
  for (const a of [['set', tube, 'g3', '--concurrency', '50'],
    ['pause', tube, 'idle']]) {
    const g = cli(urls.p1, 'group', ...a);
    assert.ok(!g || !g.code, g && g.stderr);
  }
  // one buried (with its last error), one taken: it ends at the source
  let [b] = await direct.p1.take(tube, { waitMs: 1000 });
  await direct.p1.bury(b.id, b.lease, { error: 'kept' });
  const holder = new sluice.Client(urls.p1, { timeoutMs: 10000 });
  const [taken] = await holder.take(tube, { waitMs: 1000 });
  const reports = [];
  let acked = null;
  const p = await r.move(tube, 'p2', { batch: 64, report: (x) => {
    reports.push(x);
    // the mover waits for the taken task: its ack is honoured there
    if (x.waits > 0 && !acked) acked = holder.ack(taken.id, taken.lease);
  } });
  await acked;
  holder.close();
  assert.deepStrictEqual([p.done, p.copied, p.target, p.source],
    [true, N - 1, 'p2', 'p1']);
  assert.ok(p.batches >= Math.ceil((N - 1) / 64), `${p.batches} rounds`);
  assert.ok(p.waits > 0, 'the move did not wait for the taken task');
  assert.strictEqual(p.groups, 2); // g3's settings, idle's pause
  assert.strictEqual(p.keys, 1); // the task acked at the source
  assert.ok(reports.length >= p.batches);
  const m = await r.clusterMap();
  assert.deepStrictEqual(m.entries.find((e) => e.prefix === tube),
    { prefix: tube, cluster: 'p2', draining: [] });
  const src = await counts('p1', tube);
  assert.deepStrictEqual([src.ready, src.delayed, src.taken, src.buried],
    [0, 0, 0, 0]);
  const dst = await counts('p2', tube);
  assert.deepStrictEqual([dst.ready, dst.delayed, dst.taken, dst.buried],
    [N - 22, 20, 0, 1]);
  const conf = await direct.p2.tubeShow(tube);
  assert.deepStrictEqual([conf.ttrMs, conf.maxAttempts], [45000, 7]);
  assert.strictEqual((await direct.p2.stats(tube)).tubes[tube].counters
    .limit_concurrency, 100);
  const g3 = cli(urls.p2, 'group', 'show', tube, 'g3');
  assert.deepStrictEqual([g3.own, g3.own_limits], [true, { concurrency: 50 }]);
  assert.strictEqual(cli(urls.p2, 'group', 'show', tube, 'idle').paused,
    true);
  // the key of the task acked at the source during the move is reserved
  // at the target: a put of it makes nothing
  const done = await r.put(tube, 'again', { key: taken.key });
  assert.deepStrictEqual([done.cluster, done.created], ['p2', false]);
  // the keys came along: a put of a moved key is that task
  const again = await r.put(tube, 'dup', { key: 'k150' });
  assert.deepStrictEqual([again.cluster, again.created], ['p2', false]);
  // every ready task once, through the Router, from p2
  const seen = new Set();
  for (let round = 0; round < 100 && seen.size < N - 22; round++) {
    const got = await r.take(tube, { waitMs: 300, max: 50 });
    for (const t of got) {
      assert.strictEqual(t.cluster, 'p2');
      const i = Number(t.payload.toString().slice(2));
      assert.ok(!seen.has(i), `task ${i} twice`);
      assert.strictEqual(t.key, `k${i}`);
      assert.strictEqual(t.priority, i % 5);
      assert.strictEqual(t.group, i % 3 ? null : 'g3');
      assert.strictEqual(t.ttrMs, 45000);
      seen.add(i);
    }
    if (got.length) await r.ackBatch(got);
  }
  assert.strictEqual(seen.size, N - 22);
  assert.ok(!seen.has(Number(b.payload.toString().slice(2))));
  assert.ok(!seen.has(Number(taken.payload.toString().slice(2))));
  [b] = (await direct.p2.list(tube, { state: 'buried' })).tasks;
  assert.strictEqual(b.lastError, 'kept');
  // moved already: nothing more to do; a second move elsewhere refused
  assert.strictEqual((await r.move(tube, 'p2')).done, true);
  await assert.rejects(r.move('bad tube', 'p2'), sluice.BadTube);
  await assert.rejects(r.move(tube, 'bad name'), sluice.Invalid);
});

test('a move through the Router goes on over a SIGKILL of the source\'s ' +
  'node', async () => {
  const r = router(urls.p2);
  const tube = 'mvk';
  const N = 400;
  for (const key of ['a0', 'a1']) { // keyed tasks completed before the move
    await direct.p1.put(tube, 'done', { key });
    const [t] = await direct.p1.take(tube, { waitMs: 1000 });
    await direct.p1.ack(t.id, t.lease);
  }
  for (let i = 0; i < N; i += 100) {
    const items = [];
    for (let j = i; j < i + 100; j++) {
      items.push({ tube, payload: String(j), key: `k${j}` });
    }
    for (const x of await direct.p1.putBatch(items)) assert.ok(x.created);
  }
  let killed = null;
  let restarted = null;
  const p = await r.move(tube, 'p2', { batch: 50, timeoutMs: 60000 * SCALE,
    report: (x) => {
      if (killed !== null || x.batches !== 1) return;
      killed = x.copied;
      const victim = nodes.p1;
      victim.kill('SIGKILL');
      restarted = (async () => {
        await waitFor(() => victim.signalCode !== null, 10000);
        nodes.p1 = start('p1', argvs.p1);
      })();
    } });
  await restarted;
  assert.strictEqual(killed, 50);
  assert.deepStrictEqual([p.done, p.copied, p.keys], [true, N, 2]);
  for (const key of ['a0', 'a1']) { // their reservations, at the target
    const again = await r.put(tube, 'again', { key });
    assert.deepStrictEqual([again.cluster, again.created], ['p2', false]);
  }
  assert.strictEqual((await counts('p2', tube)).ready, N);
  const src = await counts('p1', tube);
  assert.strictEqual(src.ready + src.delayed + src.taken + src.buried, 0);
  const seen = new Set();
  for (let round = 0; round < 40 && seen.size < N; round++) {
    const got = await r.take(tube, { waitMs: 300, max: 100 });
    for (const t of got) {
      assert.deepStrictEqual([t.cluster, t.key], ['p2', `k${t.payload}`]);
      assert.ok(!seen.has(String(t.payload)), `${t.payload} twice`);
      seen.add(String(t.payload));
    }
    if (got.length) await r.ackBatch(got);
  }
  assert.strictEqual(seen.size, N);
  assert.ok(await waitFor(async () => (await direct.p1.stats().catch(
    () => ({}))).role === 'leader', 30000 * SCALE, 50), 'p1 leads again');
});

test('a keyed put refused MovingIn while the target\'s keys are pending ' +
  'goes again until they are there', async () => {
  const tube = 'two.mw'; // p2's
  assert.strictEqual(await direct.p2.movePend(tube, 'p1'), 1); // marked now
  const short = new sluice.Client(urls.p2, { timeoutMs: 300 });
  const t0 = performance.now();
  await assert.rejects(short.put(tube, 'no', { key: 'k0' }), (e) =>
    e instanceof sluice.MovingIn && e.code === 35 &&
    e.errname === 'moving_in');
  assert.ok(performance.now() - t0 > 100, 'not sent again');
  short.close();
  const ca = new sluice.Client(urls.p2, { timeoutMs: 10000 });
  const cb = new sluice.Client(urls.p2, { timeoutMs: 10000 });
  const r = router(urls.p1);
  const out = {};
  const calls = {
    put: ca.put(tube, 'a', { key: 'k1' }),
    routed: r.put(tube, 'b', { key: 'k2' }),
    batch: cb.putBatch([{ tube, payload: 'c', key: 'k3' },
      { tube, payload: 'd' }]),
  };
  for (const [k, pr] of Object.entries(calls)) pr.then((v) => { out[k] = v; });
  // while the keys are pending only the unkeyed item is in
  assert.ok(await waitFor(async () => (await counts('p2', tube)).ready === 1,
    5000 * SCALE, 10));
  await sleep(400);
  assert.deepStrictEqual(out, {});
  assert.strictEqual((await counts('p2', tube)).ready, 1);
  assert.strictEqual(await direct.p2.moveReady(tube, 'p1'), 1);
  const [put, routed, batch] = await Promise.all(Object.values(calls));
  ca.close();
  cb.close();
  assert.strictEqual(put.created, true);
  assert.deepStrictEqual([routed.cluster, routed.created], ['p2', true]);
  assert.deepStrictEqual(batch.map((x) => [x.error, x.created]),
    [[null, true], [null, true]]);
  assert.strictEqual((await counts('p2', tube)).ready, 4); // d once
  assert.strictEqual((await direct.p2.peekKey(tube, 'k3')).id, batch[0].id);
});

test('a putBatch whose items sent again fail as a whole (the node ' +
  'killed) answers each item, its unkeyed one put', async () => {
  const tube = 'two.mb'; // p2's
  assert.strictEqual(await direct.p2.movePend(tube, 'p1'), 1); // marked now
  const cb = new sluice.Client(urls.p2, { timeoutMs: 1500 * SCALE });
  let out = null;
  let err = null;
  const call = cb.putBatch([{ tube, payload: 'c', key: 'k3' },
    { tube, payload: 'd' }]).then((v) => { out = v; }, (e) => { err = e; });
  // the unkeyed item is in, the keyed one goes again
  assert.ok(await waitFor(async () => (await counts('p2', tube)).ready === 1,
    5000 * SCALE, 10));
  await sleep(100); // its reply reaches the client
  const victim = nodes.p2;
  victim.kill('SIGKILL');
  await waitFor(() => victim.signalCode !== null, 10000);
  await call;
  cb.close();
  nodes.p2 = start('p2', argvs.p2);
  // before, the whole call rejected with the sending again's failure
  assert.strictEqual(err, null, `the call rejected: ${err}`);
  const [keyed, plain] = out;
  assert.deepStrictEqual([plain.error, plain.created], [null, true]);
  assert.ok(keyed.error instanceof sluice.ConnectionLost ||
    keyed.error instanceof sluice.TimedOut, `${keyed.error}`);
  assert.strictEqual(keyed.id, 0);
  assert.ok(await waitFor(async () => (await direct.p2.stats().catch(
    () => ({}))).role === 'leader', 30000 * SCALE, 50), 'p2 leads again');
  assert.strictEqual(String((await direct.p2.peek(plain.id)).payload), 'd');
  assert.strictEqual((await counts('p2', tube)).ready, 1);
  await knows(0); // etcd names p2's leader again, for the tests after
});

test('a move keeps a key unique: a put of a key taken at the source ' +
  'answers the id its copy gets', async () => {
  const tube = 'mvw'; // p1's (the default)
  await direct.p1.put(tube, 'taken', { key: 'kt', priority: 0 });
  await direct.p1.put(tube, 'ready', { key: 'kr' });
  const holder = new sluice.Client(urls.p1, { timeoutMs: 10000 });
  const [taken] = await holder.take(tube, { waitMs: 1000 });
  assert.strictEqual(taken.key, 'kt');
  const r = router(urls.p2);
  const seen = {};
  let late = null;
  const p = await r.move(tube, 'p2', { batch: 64, waitMs: 20000 * SCALE,
    report: async (x) => {
      if (x.stage === sluice.MOVE_KEYS_PENDING && !late) {
        // the target refuses keyed puts now: one sent by a Router that
        // reads the changed map goes through once the keys are held
        await knows(x.revision);
        late = (async () => {
          const res = await router(urls.p2, { timeoutMs: 10000 * SCALE })
            .put(tube, 'late', { key: 'kn' });
          return { res, held: Boolean(seen.held) };
        })();
        await sleep(200);
      }
      if (x.stage === sluice.MOVE_KEYS_HELD) seen.held = true;
      if (x.waits > 0 && !seen.kt) {
        // the mover waits for the taken task: its key, and the key of a
        // ready task not copied yet, put at the target
        seen.kt = await direct.p2.put(tube, 'dup', { key: 'kt' });
        seen.kr = await direct.p2.put(tube, 'dup', { key: 'kr' });
        await holder.release(taken.id, taken.lease);
      }
    } });
  holder.close();
  assert.strictEqual(p.done, true);
  const l = await late;
  assert.ok(l.held, 'a keyed put went through before the keys were held');
  assert.deepStrictEqual([l.res.cluster, l.res.created], ['p2', true]);
  for (const k of ['kt', 'kr']) {
    assert.strictEqual(seen[k].created, false, k);
    assert.strictEqual((await direct.p2.peekKey(tube, k)).id, seen[k].id);
    const again = await r.put(tube, 'again', { key: k });
    assert.deepStrictEqual([again.created, again.id], [false, seen[k].id]);
  }
  const src = await counts('p1', tube);
  assert.strictEqual(src.ready + src.delayed + src.taken + src.buried, 0);
  assert.strictEqual((await counts('p2', tube)).ready, 3);
  const got = await r.take(tube, { waitMs: 300, max: 10 });
  assert.deepStrictEqual(got.map((t) => [t.key, String(t.payload)]).sort(),
    [['kn', 'late'], ['kr', 'ready'], ['kt', 'taken']]);
});

test('bad input is refused with a specific error', async () => {
  const r = router(urls.p1);
  await assert.rejects(r.mapSet('bad tube', 'p2'), sluice.BadTube);
  await assert.rejects(r.mapSet('x.', 'bad name'), sluice.Invalid);
  await assert.rejects(r.mapSet('x.', 'p2', ['p2']), sluice.Invalid);
  await assert.rejects(r.mapDelete('nothere'), sluice.NotFound);
  await assert.rejects(r.putBatch([]), sluice.Invalid);
  await assert.rejects(r.put('bad tube', 'x'), sluice.BadTube);
  await assert.rejects(r.ack({ id: 999999, lease: 1, cluster: 'nope',
    tube: 'one.x' }), (e) => e instanceof sluice.ConnectionLost &&
    /cluster nope: no member known/.test(e.message));
});

// sluiced-fault, next to sluiced (ctest names it).
const FAULT = process.env.SLUICED_FAULT ||
  path.join(path.dirname(SLUICED || '.'), 'sluiced-fault');
const BEHIND_PAUSE_MS = 3000; // over the 2 s a Router waited for such a node

test('a put, a batch and a take through a node behind the map for ' +
  'seconds are sent again until it has caught up', {
  skip: !fs.existsSync(FAULT) && 'no sluiced-fault (SLUICED_FAULT)',
}, async () => {
  // p3, a cluster of its own, holds each change of the map it polls
  // BEHIND_PAUSE_MS before it serves by it (a loaded machine, a slow
  // etcd): right after prefix "v" (tubes "v1.x", "v2.x", "v3.x") moves
  // to it, it refuses the three tubes again and again. What comes before
  // goes through p3 itself, which knows a change it made at once; the
  // move goes through p1, and the three calls are sent at once, each
  // through a Router of its own that read the changed map from p1
  // (which made it): one wait for p3 to catch up serves the three.
  const url = `tcp://127.0.0.1:${await freePort()}`;
  start('p3', [FAULT, '--data', path.join(dir, 'p3'), '--listen', url,
    '--repl-listen', `tcp://127.0.0.1:${await freePort()}`, '--etcd',
    argvs.etcd, '--cluster', 'p3', '--node', 'p3'], { ...process.env,
    SLUICE_FAULT_PAUSE: `mapwatch:${BEHIND_PAUSE_MS}` });
  const p3 = new sluice.Client(url, { timeoutMs: 10000 });
  try {
    assert.ok(await waitFor(async () => (await p3.stats().catch(() => ({})))
      .role === 'leader', 30000 * SCALE, 50), 'p3 does not lead');
    // the task the take gets, put while "v" is p3's
    await p3.mapSet('v', 'p3');
    await p3.put('v3.x', 't');
    await p3.mapSet('u.', 'p1');
    await p3.mapSet('v', 'p1');
    assert.ok(await waitFor(async () => { // p3 knows it
      try {
        await p3.put('v3.probe', 'x');
        return false;
      } catch (e) {
        return e instanceof sluice.Moved;
      }
    }, 30000 * SCALE, 50), 'p3 never refuses v3.probe');
    // the three at p3 in one change, p1 knowing it at once
    const rev = await direct.p1.mapSet('v', 'p3');
    const counted = async () => { // a Router counting p3's refusals
      const r = router(urls.p1, { timeoutMs: 20000 * SCALE });
      r.behind = [];
      const again = r.again.bind(r);
      r.again = (e, st) => {
        if (e.revision > 0 && e.revision < r.map.revision) r.behind.push(e);
        return again(e, st);
      };
      assert.strictEqual((await r.clusterMap()).revision, rev);
      return r;
    };
    const rs = { put: await counted(), batch: await counted(),
      take: await counted() };
    const [put, res, got] = await Promise.all([
      rs.put.put('v1.x', 'p'),
      rs.batch.putBatch([{ tube: 'v2.x', payload: 'b' },
        { tube: 'u.x', payload: 'b' }]),
      // v3.x's cluster asked first: its refusals come first
      rs.take.take(['v3.x', 'u.x'], { waitMs: 0 })]);
    assert.strictEqual(put.cluster, 'p3');
    assert.deepStrictEqual(res.map((x) => [x.cluster, x.error]),
      [['p3', null], ['p1', null]]);
    assert.deepStrictEqual(got.map((t) => [t.cluster, t.tube]),
      [['p3', 'v3.x']]);
    await rs.take.ack(got[0]);
    for (const [k, r] of Object.entries(rs)) {
      assert.ok(r.behind.length > 1, `${k}: refused ${r.behind.length} ` +
        'times');
    }
    assert.strictEqual((await p3.stats('v1.x')).tubes['v1.x'].ready, 1);
    assert.strictEqual((await p3.stats('v2.x')).tubes['v2.x'].ready, 1);
  } finally {
    p3.close();
  }
});

if (!spawnSync('sh', ['-c', 'command -v etcd']).stdout.length) {
  process.stderr.write('no etcd (make test installs etcd-server): skipped\n');
  process.exit(77);
}
