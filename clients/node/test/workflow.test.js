'use strict';
// The Node client's workflows against a real sluiced: a diamond (A -> B,
// A -> C, B+C -> D) run by a Worker, D once with both parents' results;
// each rule of a parent failing; wait on a task acked before the wait
// began, woken by an ack, and timed out; cancel of a taken task seen by
// a Worker's handler as an aborted signal; a batch of ten with its
// callbacks, then one cancelled; schedules set, listed, paused, resumed
// and deleted, as the CLI sees them; bad input refused with the class
// and text that name it, changing nothing. Every wait is bounded.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const path = require('path');
const sluice = require('..');
const codec = require('../lib/codec');
const flows = require('../lib/flows');
const { startServer, waitFor } = require('./harness');

// The messages of the example of docs/protocol.md section 9 whose text
// holds marker: its code block's bytes (the hex before each line's
// comment), one Buffer per message (blank lines part them). "00 .. 00"
// stands for the zeros its comment counts ("6 x u64 0").
const PROTOCOL = fs.readFileSync(path.join(__dirname, '..', '..', '..',
  'docs', 'protocol.md'), 'utf8');
function example(marker) {
  const at = PROTOCOL.indexOf(marker, PROTOCOL.indexOf('## 9. Examples'));
  assert.ok(at > 0, `no example "${marker}" in docs/protocol.md`);
  const open = PROTOCOL.indexOf('```\n', at);
  const block = PROTOCOL.slice(open + 4, PROTOCOL.indexOf('```', open + 4));
  const zeros = /(\d+) x u64 0/.exec(block);
  const msgs = [[]];
  for (const line of block.split('\n')) {
    if (!line.trim()) { if (msgs[msgs.length - 1].length) msgs.push([]); continue; }
    if (/^\s/.test(line)) continue; // a comment's next line
    const hex = line.split(/\s{2,}/)[0];
    if (hex === '00 .. 00') { msgs[msgs.length - 1].push(null); continue; }
    for (const tok of hex.split(' ')) {
      if (/^[0-9a-f]{2}$/.test(tok)) msgs[msgs.length - 1].push(tok);
    }
  }
  return msgs.filter((m) => m.length).map((m) => {
    const gap = m.indexOf(null);
    if (gap >= 0) {
      m.splice(gap, 1, ...Array(8 * Number(zeros[1])).fill('00'));
    }
    return Buffer.from(m.join(''), 'hex');
  });
}
const sent = (q) => codec.message(q);
const decoded = (q, buf) => { const [f, r] = codec.reply(q, buf, 0);
  return q.decode(f, r); };

test('the wire layouts of docs/protocol.md\'s examples', () => {
  const put = example('**put** `D` to tube `t` after tasks 2 and 3');
  assert.deepStrictEqual(sent(codec.encode.put('t', 'D', { after: [2, 3],
    onParentFailure: 'ignore' })), put[0]);
  const peek = example('A **peek** reply of task 4, ready, which waited');
  const t4 = decoded(codec.encode.peek(4), peek[0]);
  assert.deepStrictEqual([t4.id, t4.state, t4.onParentFailure,
    t4.parentsPending, t4.parents, t4.childrenCount, t4.children],
  [4, 'ready', 'fail', 0, [{ id: 2, outcome: 'done', result: 'ok' }], 1,
    [9]]);

  const wait = example('**wait** for task 42 up to 30 s');
  const wq = flows.encode.wait(42, 30000);
  assert.deepStrictEqual(sent(wq), wait[0]);
  assert.strictEqual(wq.waitMs, 30000);
  assert.deepStrictEqual(decoded(wq, wait[1]), { id: 42, state: 'done',
    final: true, time: 1700000001000, tube: 'emails', result: 'ok',
    error: null, cancelled: false });

  // cancel asks for the items' messages (flag 0x01): the body is the
  // example's
  const cancel = example('**cancel** of tasks 42 and 43');
  const cq = flows.encode.cancelBatch([42, 43]);
  assert.deepStrictEqual(sent(cq).subarray(0, 3), cancel[0].subarray(0, 3));
  assert.strictEqual(cq.flags, 0x01);
  assert.deepStrictEqual(sent(cq).subarray(4), cancel[0].subarray(4));
  assert.deepStrictEqual(decoded(cq, cancel[1]).map((x) => x.error &&
    x.error.constructor), [null, sluice.NotFound]);

  const bset = example('**batch_set** of `b1`');
  assert.deepStrictEqual(sent(flows.encode.batchSet('b1', { onSuccess:
    { tube: 'ok', payload: 'hi' }, close: true })), bset[0]);
  assert.deepStrictEqual(sent(flows.encode.batchShow('b1')), bset[1]);
  const bshow = example('Its reply once the batch ended');
  const b = decoded(flows.encode.batchShow('b1'), bshow[0]);
  assert.deepStrictEqual([b.name, b.total, b.acked, b.startedAt, b.endedAt,
    b.closed, b.ended, b.onSuccess, b.onComplete], ['b1', 2, 2,
    1700000000000, 1700000001000, true, true, { tube: 'ok', task: 9,
      owed: false, fired: true }, null]);
  assert.deepStrictEqual(sent(flows.encode.batchList({ limit: 50 })),
    example('**batch_show** with flag 0x01')[0]);

  const sset = example('**sched_set** of schedule `nightly`');
  const sq = flows.encode.scheduleSet('nightly', 'reports', '30 2 * * *',
    '{}', { tz: 'Europe/Paris' });
  assert.deepStrictEqual(sent(sq), sset[0]);
  assert.throws(() => decoded(sq, example('A bad hour refused')[0]), (e) =>
    e instanceof sluice.BadSchedule && /hour field: 25 is out of 0-23/
      .test(e.detail));
  const sctl = example('**sched_ctl** pausing it');
  const pq = flows.encode.schedulePause('nightly');
  assert.deepStrictEqual(sent(pq), sctl[0]);
  const s = decoded(pq, sctl[1]);
  assert.deepStrictEqual([s.name, s.tube, s.tz, s.catchUp, s.paused,
    s.ttrMs, s.nextAt, s.lastSlot, s.lastId, s.fired, s.payload.toString()],
  ['nightly', 'reports', 'Europe/Paris', 'one', true, 60000, 0,
    1699925400000, 42, 3, '{}']);
});

async function server(t) {
  const srv = await startServer();
  const c = new sluice.Client(srv.url, { timeoutMs: 5000 });
  t.after(() => { c.close(); return srv.stop(); });
  return { srv, c };
}

// Runs a Worker over tube until pred() (bounded), then stops it.
async function work(url, tube, handler, pred, options = {}) {
  const w = new sluice.Worker(url, { concurrency: 2, waitMs: 100,
    graceMs: 2000, ...options });
  w.task(tube, handler);
  const running = w.run({ signals: false });
  const ok = await waitFor(pred, 5000);
  w.stop();
  await running;
  assert.ok(ok, `the worker of ${tube} did not finish`);
  return w;
}

test('a diamond runs its join once, with both results', async (t) => {
  const { srv, c } = await server(t);
  const a = (await c.put('etl', 'A', { key: 'extract' })).id;
  // parents by id and by key (a task of the same tube)
  const [b, cc] = (await c.putBatch([
    { tube: 'etl', payload: 'B', after: [a] },
    { tube: 'etl', payload: 'C', after: ['extract'] },
  ])).map((r) => r.id);
  const d = (await c.put('etl', 'D', { after: [b, cc] })).id;
  const pd = await c.peek(d);
  assert.strictEqual(pd.state, 'waiting');
  assert.strictEqual(pd.parentsPending, 2);
  assert.strictEqual(pd.onParentFailure, 'fail');
  assert.deepStrictEqual(pd.parents, [
    { id: b, outcome: 'pending', result: null },
    { id: cc, outcome: 'pending', result: null }]);
  assert.deepStrictEqual((await c.peek(a)).children, [b, cc]);
  assert.strictEqual(srv.cli('peek', String(d)).state, 'waiting');
  assert.strictEqual((await c.stats('etl')).tubes.etl.counters.waiting, 3);

  const runs = [];
  await work(srv.url, 'etl', async (task) => {
    const name = task.payload.toString();
    runs.push({ name, parents: task.parents });
    if (name === 'D') {
      return { sum: task.parents.map((p) => p.result).join('+') };
    }
    return `${name}:${task.parents.map((p) => p.result).join(',')}`;
  }, () => runs.length === 4);
  assert.deepStrictEqual(runs.map((r) => r.name).slice(0, 1), ['A']);
  assert.deepStrictEqual(runs.map((r) => r.name).sort(), ['A', 'B', 'C',
    'D']);
  const join = runs.find((r) => r.name === 'D');
  assert.deepStrictEqual(join.parents, [
    { id: b, outcome: 'done', result: 'B:A:' },
    { id: cc, outcome: 'done', result: 'C:A:' }]);
  assert.strictEqual(runs.length, 4);
  assert.deepStrictEqual(await c.take('etl'), []);
  assert.strictEqual((await c.stats('etl')).tubes.etl.counters.waiting, 0);
  // D was acked before this wait began: its outcome is kept
  const o = await c.wait(d, 1000);
  assert.deepStrictEqual(o, { id: d, state: 'done', final: true,
    time: o.time, tube: 'etl', result: '{"sum":"B:A:+C:A:"}', error: null,
    cancelled: false });
  assert.ok(o.time > 0);
  assert.strictEqual(srv.cli('wait', String(d)).result, o.result);
});

test('a parent failing for good: fail, ignore, cancel', async (t) => {
  const { c } = await server(t);
  const p = (await c.put('jobs', 'parent')).id;
  const kids = {};
  for (const rule of ['fail', 'ignore', 'cancel']) {
    kids[rule] = (await c.put('jobs', rule, { after: [p],
      onParentFailure: rule })).id;
  }
  const [t0] = await c.take('jobs');
  assert.strictEqual(t0.id, p);
  await c.fail(p, t0.lease, 'disk on fire', { fatal: true });
  const fail = await c.peek(kids.fail);
  assert.strictEqual(fail.state, 'buried');
  assert.strictEqual(fail.lastError, `task ${p} failed: disk on fire`);
  assert.strictEqual((await c.peek(kids.ignore)).state, 'ready');
  await assert.rejects(c.peek(kids.cancel), sluice.NotFound);
  const gone = await c.wait(kids.cancel);
  assert.ok(gone.final && ['cancelled', 'deleted'].includes(gone.state),
    JSON.stringify(gone));
  // a parent failed already: the rule applies at the put
  const late = await c.put('jobs', 'late', { after: [p] });
  assert.strictEqual((await c.peek(late.id)).state, 'buried');
  const [ig] = await c.take('jobs');
  assert.strictEqual(ig.id, kids.ignore);
  assert.deepStrictEqual(ig.parents, [{ id: p, outcome: 'failed',
    result: null }]);
});

test('wait: woken by the ack, or its state at the timeout', async (t) => {
  const { srv, c } = await server(t);
  const other = new sluice.Client(srv.url, { timeoutMs: 5000 });
  t.after(() => other.close());
  const id = (await c.put('w', 'x')).id;
  const [task] = await c.take('w');
  const t0 = Date.now();
  const still = await c.wait(id, 200);
  assert.ok(Date.now() - t0 >= 150);
  assert.deepStrictEqual([still.state, still.final, still.result],
    ['taken', false, null]);
  const waiting = other.wait(id, 5000);
  await new Promise((res) => setTimeout(res, 100));
  await c.ack(id, task.lease, { result: 'ok' });
  const o = await waiting;
  assert.deepStrictEqual([o.state, o.final, o.result], ['done', true, 'ok']);
  // a task that failed for good: its last error
  const b = (await c.put('w', 'y', { maxAttempts: 1 })).id;
  const [tb] = await c.take('w');
  await c.fail(b, tb.lease, 'bad row');
  const ob = await c.wait(b, 1000);
  assert.deepStrictEqual([ob.state, ob.final, ob.error, ob.result],
    ['buried', true, 'bad row', null]);
});

test('cancel: a taken task stops its Worker\'s handler', async (t) => {
  const { srv, c } = await server(t);
  const id = (await c.put('long', 'x', { ttrMs: 1500 })).id;
  const seen = [];
  let started = false;
  const w = new sluice.Worker(srv.url, { concurrency: 1, waitMs: 100,
    graceMs: 2000 });
  w.task('long', (task, { signal }) => new Promise((res, rej) => {
    started = true;
    const limit = setTimeout(() => res('not cancelled'), 5000);
    signal.addEventListener('abort', () => {
      clearTimeout(limit);
      seen.push({ id: task.id, cancelled: task.cancelled,
        reason: signal.reason });
      rej(new Error('stopped'));
    });
  }));
  const running = w.run({ signals: false });
  assert.ok(await waitFor(() => started, 5000));
  await c.cancel(id);
  assert.strictEqual((await c.peek(id)).cancelled, true);
  assert.ok(await waitFor(() => seen.length === 1, 5000),
    'the handler was not aborted');
  w.stop();
  await running;
  assert.strictEqual(seen[0].id, id);
  assert.strictEqual(seen[0].cancelled, true);
  assert.ok(seen[0].reason instanceof sluice.Cancelled);
  assert.deepStrictEqual([w.cancelled, w.failed, w.processed], [1, 0, 0]);
  await assert.rejects(c.peek(id), sluice.NotFound);
  const o = await c.wait(id, 1000);
  assert.deepStrictEqual([o.state, o.final], ['cancelled', true]);
  // a ready task goes at once; many, each on its own
  const r = (await c.put('long', 'y')).id;
  const res = await c.cancelBatch([r, 424242]);
  assert.deepStrictEqual(res.map((x) => x.error && x.error.constructor),
    [null, sluice.NotFound]);
  await assert.rejects(c.cancel(r), sluice.NotFound);
  // a taken one cancelled twice is no error; its holder's touch says so
  const h = (await c.put('long', 'z')).id;
  const [th] = await c.take('long');
  await c.cancel(h);
  await c.cancel(h);
  await assert.rejects(c.touch(h, th.lease), sluice.Cancelled);
  assert.strictEqual((await c.ack(h, th.lease)).state, 'gone');
  await assert.rejects(c.peek(h), sluice.NotFound);
});

test('a batch with callbacks, closed, then one cancelled', async (t) => {
  const { srv, c } = await server(t);
  const put = await c.putBatch(Array.from({ length: 10 }, (_, i) => ({
    tube: 'import', payload: `row ${i}`, batch: 'import-7' })));
  assert.ok(put.every((r) => r.created && !r.error));
  assert.strictEqual(await c.batchOf(put[0].id), 'import-7');
  let b = await c.batchSet('import-7', { onSuccess: { tube: 'done',
    payload: 'all rows' }, onComplete: 'audit', close: true });
  assert.deepStrictEqual([b.total, b.ready, b.closed, b.ended],
    [10, 10, true, false]);
  await assert.rejects(c.put('import', 'late', { batch: 'import-7' }),
    (e) => e instanceof sluice.BatchClosed && /import-7/.test(e.detail));
  for (let n = 0; n < 10; n++) {
    const [task] = await c.take('import');
    await c.ack(task.id, task.lease);
  }
  b = await c.batchShow('import-7');
  assert.deepStrictEqual([b.acked, b.failed, b.ended], [10, 0, true]);
  assert.ok(b.endedAt >= b.startedAt && b.startedAt > 0);
  const [cb] = await c.take('done', { waitMs: 2000 });
  assert.strictEqual(cb.id, b.onSuccess.task);
  const body = JSON.parse(cb.payload);
  assert.deepStrictEqual([body.batch, body.event, body.total, body.acked,
    body.payload], ['import-7', 'success', 10, 10, 'all rows']);
  const [ca] = await c.take('audit', { waitMs: 2000 });
  assert.strictEqual(JSON.parse(ca.payload).event, 'complete');
  assert.strictEqual(srv.cli('batch', 'show', 'import-7').acked, 10);

  // cancelled: its live tasks go (a taken one at its lease's end), and it
  // ends with on_complete alone
  const ids = [];
  for (const p of ['a', 'b']) {
    ids.push((await c.put('cx', p, { batch: 'cx-1' })).id);
  }
  await c.batchSet('cx-1', { onSuccess: 'done', onComplete: 'audit' });
  const [tk] = await c.take('cx');
  b = await c.batchCancel('cx-1');
  assert.strictEqual(b.closed, true);
  await assert.rejects(c.touch(tk.id, tk.lease), sluice.Cancelled);
  await c.release(tk.id, tk.lease).catch((e) => assert.ok(
    e instanceof sluice.Cancelled, e.message));
  b = await c.batchShow('cx-1');
  assert.deepStrictEqual([b.failed, b.ended], [2, true]);
  const [cc] = await c.take('audit', { waitMs: 2000 });
  assert.strictEqual(JSON.parse(cc.payload).batch, 'cx-1');
  assert.deepStrictEqual(await c.take('done'), []);
  const list = await c.batchList({ limit: 10 });
  assert.strictEqual(list.total, 2);
  assert.deepStrictEqual(list.batches.map((x) => x.name).sort(),
    ['cx-1', 'import-7']);
});

test('schedules: set, list, show, pause, resume, delete', async (t) => {
  const { srv, c } = await server(t);
  const s = await c.scheduleSet('nightly', 'reports', '30 2 * * *',
    'build', { tz: 'Europe/Paris', catchUp: 'none', priority: 5 });
  assert.deepStrictEqual([s.name, s.tube, s.cron, s.tz, s.catchUp, s.paused,
    s.priority, s.payload.toString()], ['nightly', 'reports', '30 2 * * *',
    'Europe/Paris', 'none', false, 5, 'build']);
  const now = Date.now();
  assert.ok(s.nextAt > now - 60000 && s.nextAt <= now + 86400000 + 3600000,
    `next at ${s.nextAt}`);
  assert.strictEqual(s.nextAt % 60000, 0);
  const m = await c.scheduleSet('minutely', 'ticks', '* * * * *', '');
  assert.strictEqual(m.tz, 'UTC');
  assert.ok(m.nextAt > now - 60000 && m.nextAt <= now + 61000);
  const list = await c.scheduleList();
  assert.deepStrictEqual(list.map((x) => [x.name, x.payload]),
    [['minutely', Buffer.alloc(0)], ['nightly', null]]);
  // as the CLI (libsluice) sees it, field by field
  const cli = srv.cli('schedule', 'show', 'nightly');
  for (const [k, v] of Object.entries({ name: 'name', tube: 'tube',
    cron: 'cron', tz: 'tz', catch_up: 'catchUp', paused: 'paused',
    priority: 'priority', ttr: 'ttrMs', max_attempts: 'maxAttempts',
    created_at: 'createdAt', updated_at: 'updatedAt', next_at: 'nextAt',
    last_slot: 'lastSlot', last_id: 'lastId', fired: 'fired',
    skipped: 'skipped', size: 'size' })) {
    assert.strictEqual(s[v], cli[k], `${k}: ${JSON.stringify(cli)}`);
  }
  assert.strictEqual(cli.payload, 'build');
  assert.strictEqual((await c.scheduleShow('nightly')).payload.toString(),
    'build');
  const p = await c.schedulePause('nightly');
  assert.deepStrictEqual([p.paused, p.nextAt], [true, 0]);
  const r = await c.scheduleResume('nightly');
  assert.deepStrictEqual([r.paused, r.nextAt], [false, s.nextAt]);
  assert.strictEqual(await c.scheduleDelete('nightly'), undefined);
  await assert.rejects(c.scheduleShow('nightly'), sluice.NotFound);
  await assert.rejects(c.scheduleDelete('nightly'), sluice.NotFound);
  assert.deepStrictEqual((await c.scheduleList()).map((x) => x.name),
    ['minutely']);
});

test('bad input: a specific error, and nothing changes', async (t) => {
  const { c } = await server(t);
  const refuses = async (p, cls, re) => assert.rejects(p, (e) => {
    assert.ok(e instanceof cls, `${e.name}: ${e.message}`);
    assert.match(e.message, re);
    return true;
  });
  // schedules: the field and the value, the zone, the mode
  await refuses(c.scheduleSet('s', 'q', '* 25 * * *', 'x'),
    sluice.BadSchedule, /hour field: 25/);
  await refuses(c.scheduleSet('s', 'q', '61 * * * *', 'x'),
    sluice.BadSchedule, /minute field: 61/);
  await refuses(c.scheduleSet('s', 'q', '* * * * *', 'x',
    { tz: 'Mars/Olympus' }), sluice.BadSchedule, /Mars\/Olympus/);
  await refuses(c.scheduleSet('s', 'q', '* * * * *', 'x',
    { catchUp: 'some' }), sluice.Invalid, /catchUp/);
  await refuses(c.scheduleSet('s', 'bad tube!', '* * * * *', 'x'),
    sluice.BadTube, /tube/);
  assert.deepStrictEqual(await c.scheduleList(), []);
  // parents
  await refuses(c.put('q', 'x', { after: [424242] }), sluice.NotFound,
    /waits for/);
  await refuses(c.put('q', 'x', { after: ['no-such-key'] }),
    sluice.NotFound, /waits for/);
  await refuses(c.put('q', 'x', { after: [0] }), sluice.Invalid, /after/);
  await refuses(c.put('q', 'x', { after: Array.from({ length: 1001 },
    (_, i) => i + 1) }), sluice.LimitExceeded, /1001 parents/);
  const p = (await c.put('q', 'p')).id;
  await refuses(c.put('q', 'x', { after: [p], onParentFailure: 'shrug' }),
    sluice.Invalid, /onParentFailure/);
  await refuses(c.put('q', 'x', { after: [p, p] }), sluice.Invalid, /./);
  await refuses(c.put('q', 'x', { after: [p], periodMs: 1000 }),
    sluice.Invalid, /./);
  // results
  const [tk] = await c.take('q');
  await refuses(c.ack(tk.id, tk.lease, { result: 'r'.repeat(65536) }),
    sluice.ResultTooLarge, /65536 bytes/);
  await refuses(c.ack(tk.id, tk.lease, { result: '' }), sluice.Invalid,
    /result/);
  assert.strictEqual((await c.peek(tk.id)).state, 'taken');
  // a Worker's handler whose result is over the limit: buried, not cut
  const big = (await c.put('big', 'x')).id;
  const w = await work(c.urls[0].text, 'big', () => 'r'.repeat(70000),
    async () => (await c.peek(big)).state === 'buried');
  assert.strictEqual(w.failed, 1);
  assert.match((await c.peek(big)).lastError, /result of 70000 bytes/);
  // batches
  await refuses(c.batchSet('b', { onSuccess: 'bad tube!' }), sluice.BadTube,
    /tube/);
  await refuses(c.batchSet('b', {}), sluice.Invalid, /batchSet/);
  await refuses(c.batchClose('never-made'), sluice.NotFound, /./);
  await refuses(c.batchShow('never-made'), sluice.NotFound, /./);
  await refuses(c.put('q', 'x', { batch: 'b'.repeat(201) }), sluice.Invalid,
    /batch/);
  await refuses(c.batchList({ limit: 0 }), sluice.Invalid, /limit/);
  assert.strictEqual((await c.batchList()).total, 0);
  // cancel and wait
  await refuses(c.cancel(424242), sluice.NotFound, /424242/);
  await refuses(c.cancel(0), sluice.Invalid, /task id/);
  await refuses(c.wait(424242), sluice.NotFound, /./);
  await refuses(c.wait(p, 3600001), sluice.Invalid, /timeout/);
  await refuses(c.wait('7'), sluice.Invalid, /task id/);
  assert.strictEqual((await c.stats('q')).tubes.q.counters.waiting ?? 0, 0);
});
