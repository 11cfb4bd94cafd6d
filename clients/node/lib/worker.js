'use strict';
// The Worker: runs handlers for the tasks of their tubes.
//
//   const worker = new Worker('tcp://127.0.0.1:7711', { concurrency: 8 });
//   worker.task('emails', async (task) => { await send(task); return 'sent'; });
//   await worker.run();   // until SIGTERM or SIGINT
//
// `concurrency` loops, each with its own connection (its session), take
// one task at a time from the tubes that have a handler. A handler's
// returned value (or its promise's) acks the task, as its result (a
// string as is, a Buffer decoded, anything else as JSON; undefined or
// null: none; over 65535 bytes: a Fatal, never cut, since the tasks put
// after it read it); a throw (or rejection) fails it with the error's
// message as its last error, retried after the server's backoff; a Fatal
// buries it at once. While a handler runs, its lease is touched every
// third of the task's ttr. A touch refused with Cancelled (Client.cancel,
// or the task's batch cancelled) stops the touches and aborts the
// AbortSignal the handler got as `signal` of its second argument
// (task.cancelled becomes true); once the handler returns or throws, a
// release ends the lease, which removes the task. A stop (stop(), or
// SIGTERM/SIGINT during run()) takes nothing more: the takes waiting are cut (the server undoes a take whose
// connection is gone), running handlers get `graceMs` to finish and ack,
// and the leases of those still running are released.
//
// With `routed`, the urls are any node(s) of clusters that share the
// tubes by a cluster map (docs/scaling.md): each loop is a Router, which
// takes from the tubes' clusters (waiting on all of them at once) and
// sends each lease call where its task came from.

const E = require('./errors');
const { Client } = require('./client');
const { Router } = require('./router');

const TEXT_MAX = 1024; // an error text's limit, bytes
const RESULT_MAX = 65535; // an ack's result's

class Fatal extends Error {}
Object.defineProperty(Fatal.prototype, 'name', { value: 'Fatal' });

function clip(text) {
  const b = Buffer.from(text, 'utf8');
  if (b.length <= TEXT_MAX) return text;
  return b.subarray(0, TEXT_MAX).toString('utf8').replace(/\uFFFD$/, '');
}

// A handler's value as the ack's result (null: none); a result over the
// server's limit is a Fatal (a retry would produce it again), never cut:
// the tasks put after this one read it.
function resultText(v) {
  if (v === undefined || v === null) return null;
  if (Buffer.isBuffer(v)) v = v.toString('utf8');
  else if (typeof v !== 'string') v = JSON.stringify(v);
  const n = Buffer.byteLength(v ?? '', 'utf8');
  if (n > RESULT_MAX) {
    throw new Fatal(`a result of ${n} bytes: over the limit of ` +
      `${RESULT_MAX}`);
  }
  return v || null;
}

// A lease call on a Client (by id and lease) or a Router (by the task,
// sent to its cluster).
function lease(c, verb, task, ...args) {
  return c instanceof Router ? c[verb](task, ...args) :
    c[verb](task.id, task.lease, ...args);
}

const errorText = (e) => clip(String((e && e.message) || e ||
  (e && e.name) || 'Error'));

class Worker {
  // urls and options.token, .timeoutMs, .tls: as Client's; concurrency
  // (4), waitMs (1000: one take's wait), graceMs (30000), detach (false);
  // maxTasks: stop once that many tasks were taken and handled; idleMs:
  // stop once no task came for that long (as `sluice work --max-tasks`
  // and `--wait`); neither: run until stopped. routed: each loop routes
  // by the cluster map (a Router; options.refreshMs as its).
  constructor(urls, options = {}) {
    this.urls = urls;
    this.options = options;
    this.routed = Boolean(options.routed);
    this.concurrency = options.concurrency ?? 4;
    this.waitMs = options.waitMs ?? 1000;
    this.graceMs = options.graceMs ?? 30000;
    this.detach = Boolean(options.detach);
    this.maxTasks = options.maxTasks ?? null;
    this.idleMs = options.idleMs ?? null;
    this.reserved = 0;
    this.lastTask = 0;
    this.handlers = new Map();
    this.stopping = false;
    this.idle = new Set();
    this.running = new Set();
    this.processed = 0;
    this.failed = 0;
    this.cancelled = 0;
  }

  // The handler of the tasks of tube: (task, { signal }) => value or a
  // promise; signal aborts when the task is cancelled.
  task(tube, handler) {
    this.handlers.set(tube, handler);
    return this;
  }

  stop() {
    if (this.stopping) return;
    this.stopping = true;
    for (const c of this.idle) c.drop();
  }

  // Runs until stop() (or SIGTERM/SIGINT when options.signals is not
  // false); resolves once every loop ended.
  async run({ signals = true } = {}) {
    if (!this.handlers.size) throw new Error('no handler: add one with task()');
    const onSignal = () => this.stop();
    if (signals) { process.on('SIGTERM', onSignal); process.on('SIGINT', onSignal); }
    const clients = Array.from({ length: this.concurrency }, () =>
      (this.routed ? new Router(this.urls, this.options) :
        new Client(this.urls, this.options)));
    this.reserved = 0;
    this.lastTask = Date.now();
    try {
      const loops = Promise.all(clients.map((c) => this.loop(c)));
      let poll;
      await Promise.race([loops, new Promise((res) => {
        poll = setInterval(() => { if (this.stopping) res(); }, 20);
      })]);
      clearInterval(poll);
      this.stop();
      let timer;
      const grace = new Promise((res) => {
        timer = setTimeout(res, this.graceMs, 'late');
      });
      const ended = await Promise.race([loops.then(() => 'done'), grace]);
      clearTimeout(timer);
      if (ended === 'late') {
        await Promise.all([...this.running].map((r) => {
          r.late = true;
          return lease(r.client, 'release', r.task).catch(() => {});
        }));
      }
    } finally {
      if (signals) { process.off('SIGTERM', onSignal); process.off('SIGINT', onSignal); }
      for (const c of clients) c.close();
    }
  }

  async loop(client) {
    const tubes = [...this.handlers.keys()];
    while (this.mayTake()) {
      let tasks;
      this.idle.add(client);
      try {
        tasks = await client.take(tubes, { waitMs: this.waitMs,
          detach: this.detach });
        this.took(tasks.length, true);
      } catch (e) {
        this.took(0, false);
        if (!this.stopping) {
          process.emitWarning(`sluice worker: take: ${e.message}`);
          await new Promise((res) => setTimeout(res, 200));
        }
        continue;
      } finally {
        this.idle.delete(client);
      }
      for (const t of tasks) {
        if (this.stopping) {
          await lease(client, 'release', t).catch(() => {});
        } else {
          await this.one(client, t);
        }
      }
    }
  }

  // Whether a loop may take one more task (counted now).
  mayTake() {
    if (this.stopping || (this.maxTasks !== null &&
        this.reserved >= this.maxTasks)) return false;
    this.reserved++;
    return true;
  }

  // After a take of n tasks: an empty one gives its count back, and
  // stops the worker once nothing came for idleMs.
  took(n, idle) {
    if (n) { this.lastTask = Date.now(); return; }
    this.reserved--;
    if (idle && this.idleMs !== null && Date.now() - this.lastTask >=
        this.idleMs) this.stop();
  }

  async one(client, task) {
    const r = { client, task, late: false };
    const abort = new AbortController();
    this.running.add(r);
    const every = Math.max(50, task.ttrMs / 3);
    const toucher = setInterval(() => {
      lease(client, 'touch', task).catch((e) => {
        if (!(e instanceof E.Cancelled) || task.cancelled) return;
        task.cancelled = true;
        clearInterval(toucher);
        abort.abort(e);
      });
    }, every);
    let result;
    let error = null;
    try {
      result = resultText(await this.handlers.get(task.tube)(task,
        { signal: abort.signal }));
    } catch (e) {
      error = e;
    } finally {
      clearInterval(toucher);
      this.running.delete(r);
    }
    if (r.late) return;
    try {
      if (task.cancelled) {
        // the release ends the lease, which removes the task: the
        // server answers Cancelled (NotFound once it is gone), as it should
        this.cancelled++;
        await lease(client, 'release', task).catch((e) => {
          if (!(e instanceof E.Cancelled || e instanceof E.NotFound)) throw e;
        });
      } else if (error) {
        this.failed++;
        await lease(client, 'fail', task, errorText(error),
          { fatal: error instanceof Fatal });
      } else {
        await lease(client, 'ack', task, result === null ? {} : { result });
        this.processed++;
      }
    } catch (e) {
      if (!(e instanceof E.SluiceError)) throw e;
      process.emitWarning(`sluice worker: task ${task.id}: ${e.message}`);
    }
  }
}

module.exports = { Worker, Fatal };
