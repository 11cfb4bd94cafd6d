'use strict';
// The Node Worker against a real sluiced: 4 processes of 8 loops drain
// 4,000 tasks exactly once; a handler that throws leaves its message as
// the task's last error (a Fatal buries); a handler longer than the ttr
// is kept alive by touches; SIGTERM during work lets the running tasks
// finish, takes nothing more and exits 0; kill -9 mid-task gives the task
// back. Every wait is bounded.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const sluice = require('..');
const { startServer, waitFor, sleep } = require('./harness');

// A worker process: each handler start and end is a line of OUT.
const PROGRAM = `
const fs = require('fs');
const { Worker } = require(${JSON.stringify(path.join(__dirname, '..'))});
const out = fs.openSync(process.env.OUT, 'a');
const worker = new Worker(process.env.SLUICE_URL, {
  concurrency: Number(process.env.CONCURRENCY), waitMs: 200 });
worker.task('jobs', async (task) => {
  fs.writeSync(out, 'start ' + task.id + '\\n');
  await new Promise((res) => setTimeout(res, Number(process.env.SLEEP)));
  fs.writeSync(out, 'end ' + task.id + '\\n');
  return 'done by ' + process.pid;
});
worker.run(); // exits once stopped: nothing is left to wait for
`;

function spawnWorker(t, srv, name, concurrency, sleepMs) {
  const prog = path.join(srv.dir, 'worker.js');
  fs.writeFileSync(prog, PROGRAM);
  const out = path.join(srv.dir, `${name}.out`);
  const p = spawn(process.execPath, [prog], { stdio: 'inherit', env: {
    ...process.env, SLUICE_URL: srv.url, OUT: out,
    CONCURRENCY: String(concurrency), SLEEP: String(sleepMs) } });
  t.after(() => { if (p.exitCode === null) p.kill('SIGKILL'); });
  const lines = (word) => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8')
    .split('\n').filter((l) => l.startsWith(`${word} `))
    .map((l) => Number(l.split(' ')[1])) : []);
  const exited = new Promise((res) => p.once('exit', (code) => res(code)));
  return { p, lines, exited };
}

test('4 processes of 8 drain 4,000 tasks exactly once', async (t) => {
  const srv = await startServer({ args: ['--keep-done', '1h'] });
  const c = new sluice.Client(srv.url);
  t.after(() => { c.close(); return srv.stop(); });
  const n = 4000;
  for (let b = 0; b < n / 1000; b++) {
    await c.putBatch(Array.from({ length: 1000 }, () => ({ tube: 'jobs',
      payload: 'x' })));
  }
  const t0 = Date.now();
  const ws = [0, 1, 2, 3].map((i) => spawnWorker(t, srv, `w${i}`, 8, 0));
  assert.ok(await waitFor(async () => {
    const s = (await c.stats('jobs')).tubes.jobs;
    return s.ready + s.taken === 0;
  }, 60000, 100));
  process.stderr.write(`drained ${n} tasks in ${Date.now() - t0} ms\n`);
  for (const w of ws) w.p.kill('SIGTERM');
  for (const w of ws) assert.strictEqual(await w.exited, 0);
  const seen = new Map();
  for (const w of ws) {
    const ends = w.lines('end');
    assert.ok(ends.length > 0, 'a process took nothing');
    for (const id of ends) seen.set(id, (seen.get(id) || 0) + 1);
  }
  assert.strictEqual(seen.size, n);
  assert.ok([...seen.values()].every((v) => v === 1), 'a task ran twice');
  const counters = (await c.stats('jobs')).tubes.jobs.counters;
  assert.deepStrictEqual([counters.takes, counters.acks], [n, n]);
  assert.match((await c.peek(n)).result, /^done by \d+$/);
});

test('SIGTERM: running tasks finish, nothing more is taken', async (t) => {
  const srv = await startServer({ args: ['--keep-done', '1h'] });
  const c = new sluice.Client(srv.url);
  t.after(() => { c.close(); return srv.stop(); });
  const ids = [];
  for (let i = 0; i < 10; i++) ids.push((await c.put('jobs', `t${i}`)).id);
  const w = spawnWorker(t, srv, 'term', 3, 1000);
  assert.ok(await waitFor(() => w.lines('start').length === 3, 15000));
  w.p.kill('SIGTERM');
  assert.strictEqual(await w.exited, 0);
  const started = w.lines('start');
  assert.strictEqual(started.length, 3);
  assert.deepStrictEqual(w.lines('end').sort(), started.sort());
  for (const id of ids) {
    const task = await c.peek(id);
    assert.deepStrictEqual([task.state, task.attempts], started.includes(id) ?
      ['done', 1] : ['ready', 0]);
  }
});

test('kill -9 mid-task gives the task back', async (t) => {
  const srv = await startServer();
  const c = new sluice.Client(srv.url);
  t.after(() => { c.close(); return srv.stop(); });
  const { id } = await c.put('jobs', 'slow');
  const w = spawnWorker(t, srv, 'killed', 1, 60000);
  assert.ok(await waitFor(() => w.lines('start').length === 1, 15000));
  w.p.kill('SIGKILL');
  await w.exited;
  assert.ok(await waitFor(async () => (await c.peek(id)).state !== 'taken',
    10000));
  assert.match((await c.peek(id)).lastError, /worker disconnected/);
});

test('maxTasks and idleMs end the run', async (t) => {
  const srv = await startServer({ args: ['--keep-done', '1h'] });
  const c = new sluice.Client(srv.url);
  t.after(() => { c.close(); return srv.stop(); });
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await c.put('n', 'x')).id);
  let w = new sluice.Worker(srv.url, { concurrency: 2, waitMs: 100,
    maxTasks: 3 });
  w.task('n', () => null);
  await w.run({ signals: false }); // resolves by itself
  const states = [];
  for (const id of ids) {
    const x = await c.peek(id);
    states.push(`${x.state}/${x.attempts}`);
  }
  assert.deepStrictEqual(states.sort(), ['done/1', 'done/1', 'done/1',
    'ready/0', 'ready/0']);
  w = new sluice.Worker(srv.url, { concurrency: 2, waitMs: 100,
    idleMs: 500 });
  w.task('n', () => null);
  await w.run({ signals: false });
  assert.strictEqual((await c.stats('n')).tubes.n.ready, 0);
});

test('a throw, a Fatal, and touches past the ttr', async (t) => {
  const srv = await startServer({ args: ['--keep-done', '1h'] });
  const c = new sluice.Client(srv.url);
  t.after(() => { c.close(); return srv.stop(); });
  const w = new sluice.Worker(srv.url, { concurrency: 3, waitMs: 100 });
  w.task('raise', async (task) => {
    throw new Error(`cannot parse ${task.payload}`);
  });
  w.task('fatal', () => { throw new sluice.Fatal('no such user'); });
  w.task('slow', async () => { await sleep(2500); return { slept: 2.5 }; });
  const a = (await c.put('raise', 'row 7', { maxAttempts: 1 })).id;
  const b = (await c.put('fatal', 'u1')).id;
  const s = (await c.put('slow', 'x', { ttrMs: 1000 })).id;
  const running = w.run({ signals: false });
  assert.ok(await waitFor(async () => (await c.peek(a)).state === 'buried' &&
    (await c.peek(b)).state === 'buried' &&
    (await c.peek(s)).state === 'done', 20000));
  w.stop();
  await running;
  assert.strictEqual((await c.peek(a)).lastError, 'cannot parse row 7');
  assert.deepStrictEqual([(await c.peek(b)).lastError,
    (await c.peek(b)).attempts], ['no such user', 1]);
  const slow = await c.peek(s);
  assert.deepStrictEqual([slow.attempts, slow.result], [1, '{"slept":2.5}']);
  assert.strictEqual((await c.stats('slow')).tubes.slow.counters.ttr_expired,
    0);
});
