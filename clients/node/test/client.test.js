'use strict';
// The Node client against a real sluiced: every kind of operation
// compared with what the C CLI (libsluice) says of the same tasks, the
// errors as classes, a follower followed to its leader, tokens, TLS, and
// peers that misbehave (a reply cut short, garbage, an oversized reply,
// silence): a clear error within the timeout; a change sent again after
// a lost connection and refused is ConnectionLost (its outcome unknown),
// not the refusal. Every wait is bounded.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { execSync } = require('child_process');
const sluice = require('..');
const { startServer, freePort, waitFor } = require('./harness');

// The fields the CLI prints, by their name in its JSON.
const CLI = { id: 'id', lease: 'lease', tube: 'tube', state: 'state',
  attempts: 'attempts', priority: 'priority', run_at: 'runAt',
  last_error: 'lastError', key: 'key', max_attempts: 'maxAttempts',
  ttr: 'ttrMs', period: 'periodMs', created_at: 'createdAt',
  updated_at: 'updatedAt', taken_at: 'takenAt', deadline: 'deadline',
  size: 'size' };

function sameTask(t, cli) {
  for (const [k, a] of Object.entries(CLI)) {
    assert.deepStrictEqual(t[a], cli[k], `${k}: ${JSON.stringify(cli)}`);
  }
}

test('every operation, as the CLI sees it', async (t) => {
  const srv = await startServer({ args: ['--keep-done', '1h'] });
  const c = new sluice.Client(srv.url, { timeoutMs: 10000 });
  t.after(() => { c.close(); return srv.stop(); });

  const r = await c.put('emails', 'send welcome', { key: 'w1', priority: 7 });
  assert.deepStrictEqual(r, { id: 1, created: true, notNewer: false,
    throttled: false });
  assert.deepStrictEqual(srv.cli('put', '-t', 'emails', 'x', '--key', 'w1'),
    { id: 1, created: false });
  const [task] = await c.take('emails', { waitMs: 1000 });
  assert.strictEqual(task.payload.toString(), 'send welcome');
  sameTask(task, srv.cli('peek', '1'));
  sameTask(await c.peekKey('emails', 'w1'), srv.cli('peek', '--key', 'w1',
    '-t', 'emails'));
  await assert.rejects(c.ack(1, task.lease + 1), (e) => e instanceof
    sluice.StaleLease && e.code === 2 && e.errname === 'stale_lease' &&
    srv.cli('ack', '1', '--lease', String(task.lease + 1)).stderr
      .includes(e.detail));
  const a = await c.ack(1, task.lease, { result: 'sent' });
  assert.strictEqual(a.state, 'done');
  const done = await c.peek(1);
  assert.strictEqual(done.result, 'sent');
  sameTask(done, srv.cli('peek', '1'));
  assert.deepStrictEqual(await c.take('emails', { waitMs: 100 }), []);

  // the lease operations
  await c.put('w', 'x', { maxAttempts: 3 });
  let [w] = await c.take('w');
  assert.strictEqual((await c.release(w.id, w.lease, { delayMs: 60000,
    priority: 3 })).state, 'delayed');
  assert.strictEqual(srv.cli('peek', String(w.id)).priority, 3);
  await assert.rejects(c.ack(w.id, 1), sluice.BadState);
  assert.strictEqual(await c.kick('w', 5, { delayed: true }), 1);
  [w] = await c.take('w');
  assert.strictEqual((await c.fail(w.id, w.lease, 'disk full',
    { delayMs: 0 })).state, 'ready');
  [w] = await c.take('w');
  assert.deepStrictEqual([w.lastError, w.attempts], ['disk full', 3]);
  assert.ok((await c.touch(w.id, w.lease)).deadline >= w.deadline);
  assert.strictEqual((await c.bury(w.id, w.lease, { error: 'poison' }))
    .state, 'buried');
  assert.deepStrictEqual(await c.errors('w'), [{ error: 'poison', count: 1,
    ids: [w.id] }]);
  assert.deepStrictEqual(srv.cli('errors', '-t', 'w').errors,
    [{ error: 'poison', count: 1, ids: [w.id] }]);
  assert.strictEqual((await c.kickId(w.id)).state, 'ready');
  assert.strictEqual((await c.job('take', w.id)).state, 'taken');
  assert.strictEqual(await c.job('delete', w.id), null);
  await assert.rejects(c.peek(w.id), sluice.NotFound);

  // batches, update, list, deletes
  const res = await c.putBatch([{ tube: 'b', payload: 'one', key: 'k1' },
    { tube: 'bad tube', payload: 'x' }, { tube: 'b', payload: 'two' }]);
  assert.ok(res[1].error instanceof sluice.BadTube);
  const ids = [res[0].id, res[2].id];
  const taken = await c.take('b', { max: 2 });
  const acked = await c.ackBatch([[taken[0].id, taken[0].lease],
    [taken[1].id, taken[1].lease + 1]]);
  assert.strictEqual(acked[0].error, null);
  assert.ok(acked[1].error instanceof sluice.StaleLease);
  await c.release(taken[1].id, taken[1].lease);
  assert.deepStrictEqual(taken.map((x) => x.id), ids);
  await c.update(ids[1], { priority: 9, payload: "two'" });
  assert.strictEqual(srv.cli('peek', String(ids[1])).payload, "two'");
  const page = await c.list('b', { limit: 1, after: 0, payloads: true });
  const cliPage = srv.cli('list', '-t', 'b', '--after', '0', '--limit', '1');
  assert.deepStrictEqual([page.tasks.map((x) => x.id), page.next],
    [cliPage.tasks.map((x) => x.id), cliPage.next]);
  assert.strictEqual(await c.deleteWhere('b', 'done', 0), 1);
  await assert.rejects(c.deleteKey('b', 'k1'), sluice.NotFound);
  const { id: k2 } = await c.put('b', 'k2', { key: 'k2' });
  assert.strictEqual(await c.deleteKey('b', 'k2'), k2);
  assert.ok((await c.deleteBatch([ids[1], 999]))[1].error instanceof
    sluice.NotFound);
  await c.put('b', 'three');
  assert.strictEqual(await c.flush('b'), 1);

  // tubes, stats, history
  const s = await c.tubeSet('m', { ttrMs: 30000, maxAttempts: 5,
    deadLetter: 'dead', unset: ['backoff'] });
  const show = srv.cli('tube', 'show', 'm');
  assert.deepStrictEqual([s.ttrMs, s.maxAttempts, s.deadLetter, s.own],
    [show.ttr_ms, show.max_attempts, show.dead_letter, show.own]);
  assert.deepStrictEqual(await c.tubeShow('m'), s);
  await c.put('m', 'y');
  const until = await c.pause('m', 60000);
  const st = await c.stats();
  const cst = srv.cli('stats');
  assert.deepStrictEqual([st.role, st.epoch, st.tubes.m.ready,
    st.tubes.m.pausedUntil, st.tubes.m.settings.ttrMs],
  [cst.role, cst.epoch, 1, until, 30000]);
  assert.strictEqual(await c.pause('m', 0), 0);
  assert.deepStrictEqual(Object.keys((await c.stats('', { top: 1 })).tubes),
    ['m']);
  const [hour] = await c.statsHourly('emails');
  const chour = srv.cli('stats', '--hourly', '-t', 'emails').hours[0];
  assert.deepStrictEqual([hour.start, hour.acks], [chour.start, chour.acks]);
  const h = await c.history('', 5);
  assert.strictEqual(h.puts.length, 5);
  assert.strictEqual(await c.releaseAll('m'), 0);
  await assert.rejects(c.tubeDelete('m'), sluice.NotEmpty);
  assert.strictEqual(await c.tubeDelete('m', { force: true }), 1);
  assert.ok(await c.snapshot() > 0);
  await assert.rejects(c.cluster(), (e) => e instanceof sluice.BadState &&
    /without --etcd/.test(e.detail));
  await assert.rejects(c.promote(), sluice.BadState);
  await assert.rejects(c.put('t', 'x', { replace: true }), sluice.Invalid);
  // a payload near the server's limit, in many TCP segments both ways
  const big = Buffer.alloc(1000000, 'x');
  big.write('end', big.length - 3);
  const bigId = (await c.put('big', big)).id;
  assert.ok((await c.peek(bigId)).payload.equals(big));
  await assert.rejects(c.put('big', Buffer.alloc(2 << 20)),
    sluice.PayloadTooLarge);
});

test('untake undoes the take: its attempt uncounted', async (t) => {
  const srv = await startServer();
  const c = new sluice.Client(srv.url, { timeoutMs: 10000 });
  t.after(() => { c.close(); return srv.stop(); });
  const ids = [];
  for (let i = 0; i < 2; i++) ids.push((await c.put('u', `t${i}`)).id);
  const [w] = await c.take('u');
  assert.strictEqual(w.attempts, 1);
  assert.strictEqual((await c.untake(w.id, w.lease)).state, 'ready');
  assert.strictEqual((await c.peek(ids[0])).attempts, 0);
  await assert.rejects(c.untake(w.id, w.lease), sluice.BadState);
  const [again] = await c.take('u');
  assert.strictEqual(again.id, ids[0]); // at its place, before t1
  assert.strictEqual(again.attempts, 1);
  await assert.rejects(c.untake(w.id, w.lease), sluice.StaleLease);
});

test('release front keeps the place the task had', async (t) => {
  const srv = await startServer();
  const c = new sluice.Client(srv.url, { timeoutMs: 10000 });
  t.after(() => { c.close(); return srv.stop(); });
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await c.put('q', `t${i}`)).id);
  let [w] = await c.take('q');
  assert.strictEqual(w.id, ids[0]);
  await c.release(w.id, w.lease); // behind the tasks already due
  [w] = await c.take('q');
  assert.strictEqual(w.id, ids[1]);
  await c.release(w.id, w.lease, { front: true });
  [w] = await c.take('q');
  assert.strictEqual(w.id, ids[1]);
  // errors: the buried tasks by default, any live state on request
  await c.fail(w.id, w.lease, 'retry me', { delayMs: 60000 });
  [w] = await c.take('q');
  await c.bury(w.id, w.lease, { error: 'poison' });
  assert.deepStrictEqual((await c.errors('q')).map((g) => g.error),
    ['poison']);
  assert.deepStrictEqual((await c.errors('q', { state: 'delayed' }))
    .map((g) => g.error), ['retry me']);
  assert.deepStrictEqual((await c.errors('q', { state: 'all' }))
    .map((g) => g.error).sort(), ['poison', 'retry me']);
});

test('fair groups: a put names its group, takes go round the groups', async (t) => {
  const srv = await startServer();
  const c = new sluice.Client(srv.url, { timeoutMs: 10000 });
  t.after(() => { c.close(); return srv.stop(); });
  for (let i = 0; i < 3; i++) await c.put('f', `a${i}`, { group: 'a' });
  await c.put('f', 'b0', { group: 'b' });
  await c.put('f', 'n0');
  const got = [];
  for (let i = 0; i < 3; i++) {
    const [w] = await c.take('f');
    got.push(w.group);
    await c.ack(w.id, w.lease);
  }
  assert.deepStrictEqual(got, ['a', 'b', null]);
  assert.strictEqual((await c.peek(2)).group, 'a'); // a1, still ready
  await assert.rejects(c.put('f', 'x', { group: 'a b' }), sluice.BadGroup);
});

test('groups: the server lists a tube\'s groups by backlog, as the CLI does', async (t) => {
  const srv = await startServer();
  const c = new sluice.Client(srv.url, { timeoutMs: 10000 });
  t.after(() => { c.close(); return srv.stop(); });
  for (const [g, n] of [['big', 3], ['small', 1], [null, 2]]) {
    for (let i = 0; i < n; i++) {
      await c.put('gl', 'x', g ? { group: g } : {});
    }
  }
  const [w] = await c.take('gl'); // big's: 2 ready, 1 taken
  assert.strictEqual(w.group, 'big');
  const gs = await c.groups('gl');
  assert.strictEqual(gs.total, 3);
  assert.deepStrictEqual(gs.groups.map((g) => [g.group, g.ready, g.taken]),
    [['big', 2, 1], [null, 2, 0], ['small', 1, 0]]);
  assert.ok(gs.groups.every((g) => g.tube === 'gl' && g.oldestReadyMs >= 0));
  const cli = srv.cli('groups', 'gl');
  assert.strictEqual(cli.total, 3);
  assert.deepStrictEqual(cli.groups.map((g) => [g.group, g.ready, g.taken]),
    gs.groups.map((g) => [g.group, g.ready, g.taken]));
  const top = await c.groups('gl', { limit: 1 });
  assert.deepStrictEqual([top.groups.length, top.total, top.groups[0].group],
    [1, 3, 'big']);
  assert.ok((await c.groups('')).groups.some((g) => g.tube === 'gl'));
  await assert.rejects(c.groups('nope'), sluice.NotFound);
  await assert.rejects(c.groups('gl', { limit: 0 }), sluice.Invalid);
  await c.ack(w.id, w.lease);
});

test('debounce and throttle: the last put of a burst runs; a throttled put is ignored', async (t) => {
  const srv = await startServer();
  const c = new sluice.Client(srv.url, { timeoutMs: 10000 });
  t.after(() => { c.close(); return srv.stop(); });
  // debounce: three puts of one key, one task, the last payload, due a
  // window after the last put
  const d1 = await c.put('d', 'v1', { key: 'k', debounceMs: 60000 });
  const d2 = await c.put('d', 'v2', { key: 'k', debounceMs: 60000 });
  const d3 = await c.put('d', 'v3', { key: 'k', debounceMs: 60000 });
  assert.strictEqual(d1.created, true);
  assert.strictEqual(d2.id, d1.id);
  assert.strictEqual(d3.id, d1.id);
  const deb = await c.peek(d1.id);
  assert.strictEqual(deb.state, 'delayed');
  assert.strictEqual(deb.payload.toString(), 'v3');
  assert.ok(deb.runAt > Date.now() + 50000);
  assert.strictEqual(srv.cli('peek', String(d1.id)).state, 'delayed');
  // throttle: a put within the window is ignored, answered with the
  // window's task; another key is not
  const t1 = await c.put('th', 'a', { key: 'q', throttleMs: 60000 });
  const t2 = await c.put('th', 'b', { key: 'q', throttleMs: 60000 });
  assert.deepStrictEqual([t1.created, t1.throttled], [true, false]);
  assert.deepStrictEqual([t2.id, t2.created, t2.throttled],
    [t1.id, false, true]);
  assert.strictEqual((await c.peek(t1.id)).payload.toString(), 'a');
  const t3 = await c.put('th', 'c', { key: 'other', throttleMs: 60000 });
  assert.strictEqual(t3.created, true);
  // in a batch, each item its own mode
  const res = await c.putBatch([
    { tube: 'th', payload: 'd', key: 'q', throttleMs: 60000 },
    { tube: 'd', payload: 'v4', key: 'k', debounceMs: 60000 }]);
  assert.deepStrictEqual(res.map((x) => [x.id, x.throttled]),
    [[t1.id, true], [d1.id, false]]);
  assert.strictEqual((await c.peek(d1.id)).payload.toString(), 'v4');
  // misuse: no key, both modes, a bad window, each refused
  await assert.rejects(c.put('d', 'x', { debounceMs: 1000 }), sluice.Invalid);
  await assert.rejects(c.put('d', 'x', { key: 'z', debounceMs: 1000,
    throttleMs: 1000 }), sluice.Invalid);
  await assert.rejects(c.put('d', 'x', { key: 'z', debounceMs: -1 }),
    sluice.Invalid);
  assert.strictEqual((await c.stats('d')).tubes.d.ready ?? 0, 0);
});

test('a follower named first sends writes to the leader', async (t) => {
  const repl = `tcp://127.0.0.1:${await freePort()}`;
  const leader = await startServer({ args: ['--repl-listen', repl] });
  const follower = await startServer({ args: ['--follow', repl] });
  const c = new sluice.Client([follower.url, leader.url]);
  t.after(async () => { c.close(); await follower.stop(); await leader.stop(); });
  assert.strictEqual((await c.stats()).role, 'follower');
  const { id } = await c.put('f', 'x', { key: 'k' });
  assert.strictEqual(c.url, leader.url);
  assert.strictEqual(leader.cli('peek', String(id)).key, 'k');
  assert.strictEqual(await c.follow(repl).catch((e) => e.constructor),
    sluice.Invalid);  // a leader that learned of no newer epoch
});

test('tokens: a wrong one is refused, a role is kept to', async (t) => {
  const srv = await startServer({ tokens: { ops: ['admin', '*', 's3cret'],
    mailer: ['producer', 'emails*', 'm41l'] } });
  t.after(() => srv.stop());
  for (const token of [undefined, 'wrong']) {
    const c = new sluice.Client(srv.url, { token, timeoutMs: 3000 });
    await assert.rejects(c.put('emails', 'x'), sluice.Unauthenticated);
    c.close();
  }
  const p = new sluice.Client(srv.url, { token: 'm41l' });
  t.after(() => p.close());
  await p.put('emails', 'x');
  await assert.rejects(p.put('billing', 'x'), sluice.NotAllowed);
});

test('TLS, and a CA that did not sign the server', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-tls-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const cmd of [
    'openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt ' +
      '-days 2 -subj /CN=sluice-test-ca',
    'openssl req -x509 -newkey rsa:2048 -nodes -keyout ca2.key -out ca2.crt ' +
      '-days 2 -subj /CN=another-ca',
    'openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr ' +
      '-subj /CN=127.0.0.1',
    "printf 'subjectAltName=IP:127.0.0.1,DNS:127.0.0.1\\n' >san",
    'openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial ' +
      '-out srv.crt -days 2 -extfile san']) {
    execSync(cmd, { cwd: dir, stdio: 'ignore', timeout: 60000 });
  }
  const srv = await startServer({ tls: [path.join(dir, 'srv.crt'),
    path.join(dir, 'srv.key')] });
  t.after(() => srv.stop());
  const ca = (f) => ({ ca: fs.readFileSync(path.join(dir, f)) });
  const good = new sluice.Client(srv.url, { tls: ca('ca.crt') });
  t.after(() => good.close());
  const { id } = await good.put('tls', 'over TLS');
  assert.strictEqual((await good.peek(id)).payload.toString(), 'over TLS');
  const t0 = Date.now();
  const bad = new sluice.Client(srv.url, { tls: ca('ca2.crt'),
    timeoutMs: 3000 });
  await assert.rejects(bad.stats(), (e) => e instanceof
    sluice.ConnectionLost && /TLS handshake failed/.test(e.message));
  const plain = new sluice.Client(srv.url.replace('tls+tcp', 'tcp'),
    { timeoutMs: 3000 });
  await assert.rejects(plain.stats(), sluice.SluiceError);
  assert.ok(Date.now() - t0 < 8000);
});

// A fake server whose connections serve(sock) handles.
async function fake(t, serve) {
  const server = net.createServer((sock) => {
    sock.on('error', () => {});
    serve(sock);
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  t.after(() => { server.close(); });
  return `tcp://127.0.0.1:${server.address().port}`;
}

const GREETING = Buffer.from([0, 0x53, 0x50, 0, 0, 0x31, 0, 0]);

// Greets, then answers the first request's id with reply(rid).
const answering = (reply) => (sock) => {
  let buf = Buffer.alloc(0);
  let greeted = false;
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    if (!greeted && buf.length >= 8) {
      greeted = true;
      buf = buf.subarray(8);
      sock.write(GREETING);
    }
    if (greeted && buf.length >= 12) {
      const rid = buf.subarray(8, 12);
      buf = Buffer.alloc(0);
      reply(sock, rid);
    }
  });
};

async function bounded(promise, cls, ms, check = () => true) {
  const t0 = Date.now();
  await assert.rejects(promise, (e) => e instanceof cls && check(e));
  assert.ok(Date.now() - t0 < ms, `took ${Date.now() - t0} ms`);
}

test('peers that misbehave: a clear error within the timeout', async (t) => {
  const opts = { timeoutMs: 2000, connectTimeoutMs: 1000 };
  const cut = await fake(t, answering((sock, rid) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(40n);
    sock.end(Buffer.concat([b, rid, Buffer.from([0x53, 1])]));
  }));
  await bounded(new sluice.Client(cut, opts).put('t', 'x'),
    sluice.ConnectionLost, 1000, (e) => /in the middle of a reply/.test(
      e.message) && /not sent again/.test(e.message));
  // The cases that wait for the timeout run side by side, each timed on
  // its own; the others follow.
  const mute = await fake(t, answering(() => {}));
  const silent = await fake(t, () => {});
  const waiting = Promise.all([
    bounded(new sluice.Client(cut, opts).peek(1), sluice.ConnectionLost,
      3500),
    bounded(new sluice.Client(mute, opts).put('t', 'x'), sluice.TimedOut,
      3500, (e) => /outcome is unknown/.test(e.message)),
    bounded(new sluice.Client(silent, opts).stats(), sluice.ConnectionLost,
      3500, (e) => /no sluice greeting/.test(e.message)),
  ]);
  const http = await fake(t, (sock) => sock.end('HTTP/1.1 400 Bad\r\n\r\n'));
  await bounded(new sluice.Client(http, opts).stats(), sluice.Malformed, 1000,
    (e) => /speaks HTTP/.test(e.message));
  const huge = await fake(t, answering((sock, rid) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(1n << 40n);
    sock.write(Buffer.concat([b, rid]));
  }));
  await bounded(new sluice.Client(huge, { ...opts, maxReply: 1 << 20 })
    .stats(), sluice.Malformed, 1000, (e) => /over this client's limit/.test(
    e.message));
  const junk = await fake(t, answering((sock, rid) => {
    const body = Buffer.from('5301110000000707070707', 'hex');
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(4 + body.length));
    sock.write(Buffer.concat([b, rid, body]));
  }));
  await bounded(new sluice.Client(junk, opts).stats(), sluice.Malformed, 1000);
  await waiting;
});

// Greets; its first connection takes a request and closes without
// answering, the next ones refuse every request with status (the leader
// gone, its election not over: the first sending may have been
// committed). count.n: the requests received.
const dropThenRefuse = (status, text, count) => {
  let dropped = false;
  return (sock) => {
    const first = !dropped;
    dropped = true;
    let buf = Buffer.alloc(0);
    let greeted = false;
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (!greeted && buf.length >= 8) {
        greeted = true;
        buf = buf.subarray(8);
        sock.write(GREETING);
      }
      while (greeted && buf.length >= 8) {
        const n = Number(buf.readBigUInt64BE(0));
        if (buf.length < 8 + n) break;
        const body = buf.subarray(8, 8 + n);
        buf = buf.subarray(8 + n);
        count.n++;
        if (first) { sock.destroy(); return; }
        const msg = Buffer.from(text);
        const err = Buffer.alloc(10 + msg.length);
        err.set([0x53, 1, body[6], 0]);
        err.writeUInt16LE(status, 4);
        err.writeUInt16LE(msg.length, 6);
        msg.copy(err, 8);
        const head = Buffer.alloc(8);
        head.writeBigUInt64BE(BigInt(4 + err.length));
        sock.write(Buffer.concat([head, body.subarray(0, 4), err]));
      }
    });
  };
};

// A keyed put is sent again after the lost connection; refused then (not
// leader until the deadline, or the log full), it may still have been
// done the first time: ConnectionLost naming the refusal, not the
// refusal, which would say nothing was done. A read keeps its refusal.
test('a change sent again and refused is unknown', async (t) => {
  const opts = { timeoutMs: 1000, connectTimeoutMs: 1000 };
  for (const [status, text, cls] of [[17, 'not leader', sluice.NotLeader],
    [13, 'the log is full', sluice.LogFull]]) {
    const count = { n: 0 };
    const url = await fake(t, dropThenRefuse(status, text, count));
    const c = new sluice.Client(url, opts);
    t.after(() => c.close());
    await bounded(c.put('t', 'x', { key: 'order-1' }),
      sluice.ConnectionLost, 2500, (e) =>
      /put sent again/.test(e.message) && e.message.includes(text) &&
      /may or may not have been done/.test(e.message) &&
      e.cause instanceof cls);
    assert.ok(count.n >= 2, `${count.n} requests`);
    const reads = { n: 0 };
    const url2 = await fake(t, dropThenRefuse(status, text, reads));
    const r = new sluice.Client(url2, opts);
    t.after(() => r.close());
    await bounded(r.stats(), cls, 2500);
    assert.ok(reads.n >= 2, `${reads.n} requests`);
  }
  const url = await fake(t, dropThenRefuse(17, 'not leader', { n: 0 }));
  const c = new sluice.Client(url, opts);
  t.after(() => c.close());
  await bounded(c.cancel(5), sluice.ConnectionLost, 2500, (e) => /cancel sent again/.test(e.message));
});
