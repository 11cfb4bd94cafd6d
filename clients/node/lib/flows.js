'use strict';
// The workflow operations of docs/protocol.md, without any I/O: a task's
// end (wait 0x2e, cancel 0x2d), batches with callbacks (batch_show 0x2b,
// batch_set 0x2c, and peek's flag 0x01 for the batch of a task) and
// schedules (sched_set, sched_list, sched_ctl: 0x2f-0x31). Each encoder
// gives a request object as codec.js's do; the client turns each into a
// method. Dependencies (a put's parents and batch) are put fields, in
// codec.js.
//
// Checks made here, before anything is sent, are those the server would
// refuse anyway with the same class (Invalid, LimitExceeded): an id that
// is not a positive integer, a wait over an hour, a catch-up mode or a
// batch call that asks for nothing. The rest (a cron field, a time zone,
// a tube name) is the server's to judge, and its message names what it
// refused.

const E = require('./errors');
const { Writer, req, bit, task, items, STATES } = require('./codec');

const WAIT_MAX_MS = 3600 * 1000;
const LIST_MAX = 1000;
// wait's final states beyond the task states
const ENDS = { 16: 'deleted', 17: 'cancelled', 18: 'dead_lettered' };
const CATCH_UP = ['none', 'one', 'all'];
const SCHED = { pause: 1, resume: 2, delete: 3 };
const BATCH = { success: 0x01, complete: 0x02, close: 0x04, cancel: 0x08 };
const BATCH_LIST = 0x01;
const PEEK_BATCH = 0x01;

function taskId(what, id) {
  if (!Number.isSafeInteger(id) || id < 1) {
    throw new E.Invalid(`${what}: a task id (an integer of at least 1), ` +
      `not ${JSON.stringify(id)}`);
  }
  return id;
}

function name(what, text) {
  if (typeof text !== 'string' || !text) {
    throw new E.Invalid(`${what}: a name, not ${JSON.stringify(text)}`);
  }
  return text;
}

// ---- replies

// How a task stands (wait): final once it ended, with its result (done)
// or its last error (failed for good), else its state now.
function outcome(f, r) {
  const id = r.u64();
  const state = r.u8();
  const final = r.u8() === 1;
  const time = r.u64();
  const tube = r.opt16();
  const text = r.opt16();
  const done = final && state === 5;
  return r.done({ id, state: ENDS[state] ?? STATES[state] ?? String(state),
    final, time, tube, result: done ? text : null,
    error: done ? null : text, cancelled: Boolean(f & 0x01) });
}

function schedule(r) {
  const s = { name: r.str16(), tube: r.str16(), cron: r.str16(),
    tz: r.str16() || 'UTC' };
  const mode = r.u8();
  if (mode >= CATCH_UP.length) {
    throw new E.Malformed(`a schedule's catch-up of ${mode}`);
  }
  Object.assign(s, { catchUp: CATCH_UP[mode], paused: r.u8() === 1,
    priority: r.u32(), ttrMs: r.u64(), maxAttempts: r.u32(),
    createdAt: r.u64(), updatedAt: r.u64(), nextAt: r.u64(),
    lastSlot: r.u64(), lastId: r.u64(), fired: r.u64(), skipped: r.u64(),
    size: r.u32() });
  const payload = r.blob();
  s.payload = payload.length || s.size === 0 ? payload : null;
  return s;
}

const schedules = (f, r) => {
  const out = [];
  for (let n = r.u32(); n > 0; n--) out.push(schedule(r));
  return r.done(out);
};

function oneSchedule(f, r) {
  const out = schedules(f, r);
  if (out.length !== 1) {
    throw new E.Malformed(`${out.length} schedules where one was asked for`);
  }
  return out[0];
}

function noSchedule(f, r) {
  const n = r.u32();
  if (n !== 0) throw new E.Malformed(`a delete's reply holds ${n} schedules`);
  return r.done(undefined);
}

const COUNTS = ['total', 'waiting', 'ready', 'delayed', 'taken', 'buried',
  'acked', 'failed', 'startedAt', 'endedAt'];

function batchFields(r) {
  const b = { name: r.str16() };
  for (const k of COUNTS) b[k] = r.u64();
  const state = r.u8();
  const owed = r.u8();
  const fired = r.u8();
  Object.assign(b, { closed: Boolean(state & 0x01),
    ended: Boolean(state & 0x02) });
  for (const [k, bitv] of [['onSuccess', BATCH.success],
    ['onComplete', BATCH.complete]]) {
    const tube = r.str16();
    const id = r.u64();
    b[k] = tube ? { tube, task: id, owed: Boolean(owed & bitv),
      fired: Boolean(fired & bitv) } : null;
  }
  return b;
}

const batch = (f, r) => r.done(batchFields(r));

function batchList(f, r) {
  if (!(f & BATCH_LIST)) {
    throw new E.Malformed('a batch list\'s reply without its flag');
  }
  const total = r.u64();
  const n = r.u32();
  if (n > total) throw new E.Malformed(`${n} batches of ${total}`);
  const batches = [];
  for (let k = 0; k < n; k++) batches.push(batchFields(r));
  return r.done({ batches, total });
}

function taskBatch(f, r) {
  if (!(f & PEEK_BATCH)) {
    throw new E.Malformed('a peek\'s reply without the batch asked for');
  }
  task(r);
  return r.done(r.opt16());
}

// A callback of batchSet: a tube, { tube, payload }, or '' (removes it);
// [what bit or 0, tube, payload].
function callback(what, cb, bitv) {
  if (cb == null) return [0, '', ''];
  if (typeof cb === 'string') return [bitv, cb, ''];
  if (typeof cb === 'object' && typeof cb.tube === 'string') {
    return [bitv, cb.tube, cb.payload ?? ''];
  }
  throw new E.Invalid(`${what}: a tube or { tube, payload }, not ` +
    `${JSON.stringify(cb)}`);
}

function batchSet(label, nm, what, success = ['', ''], complete = ['', '']) {
  const w = new Writer().str16(name(label, nm)).u8(what)
    .str16(success[0]).blob(success[1]).str16(complete[0]).blob(complete[1]);
  return req('batch_set', 0, w, batch);
}

// ---- requests

const encode = {
  // how task id stands, waiting up to timeoutMs (at most an hour) for it
  // to end; a task that ended before is still answered (the server keeps
  // outcomes for its dedup window)
  wait(id, timeoutMs = 0) {
    taskId('wait', id);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0 ||
        timeoutMs > WAIT_MAX_MS) {
      throw new E.Invalid(`wait: a timeout of 0 to ${WAIT_MAX_MS} ms, not ` +
        `${timeoutMs}`);
    }
    return req('wait', 0, new Writer().u64(id).u64(timeoutMs), outcome,
      { safe: true, waitMs: timeoutMs });
  },
  // cancels one task: rejects with the item's error (NotFound: unknown or
  // ended)
  cancel(id) {
    taskId('cancel', id);
    const one = items([id]);
    return req('cancel', 0x01, new Writer().u32(1).u64(id), (f, r) => {
      const [res] = one(f, r);
      if (res.error) throw res.error;
      return undefined;
    }, { safe: true });
  },
  // cancels many, each on its own: one { id, error } each
  cancelBatch(ids) {
    if (!Array.isArray(ids) || !ids.length || ids.length > LIST_MAX) {
      throw new E.Invalid(`cancelBatch: 1 to ${LIST_MAX} ids`);
    }
    const w = new Writer().u32(ids.length);
    for (const id of ids) w.u64(taskId('cancelBatch', id));
    return req('cancel', 0x01, w, items(ids), { safe: true });
  },

  // -- batches
  batchShow: (nm) => req('batch_show', 0,
    new Writer().str16(name('batchShow', nm)), batch, { safe: true }),
  batchList(o = {}) {
    const limit = o.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX) {
      throw new E.Invalid(`batchList: a limit of 1..${LIST_MAX}, not ` +
        `${limit}`);
    }
    return req('batch_show', BATCH_LIST, new Writer().u32(limit), batchList,
      { safe: true });
  },
  // the batch task id is in while it is live there, or null
  batchOf: (id) => req('peek', PEEK_BATCH,
    new Writer().u64(taskId('batchOf', id)), taskBatch, { safe: true }),
  // o.onSuccess, o.onComplete: a tube, { tube, payload }, or '' to
  // remove it; o.close: it takes no more tasks (and ends once none is
  // live)
  batchSet(nm, o = {}) {
    const s = callback('onSuccess', o.onSuccess, BATCH.success);
    const c = callback('onComplete', o.onComplete, BATCH.complete);
    const what = s[0] | c[0] | bit(o.close, BATCH.close);
    if (!what) {
      throw new E.Invalid('batchSet: onSuccess, onComplete or close');
    }
    return batchSet('batchSet', nm, what, s.slice(1), c.slice(1));
  },
  batchClose: (nm) => batchSet('batchClose', nm, BATCH.close),
  batchCancel: (nm) => batchSet('batchCancel', nm, BATCH.cancel),

  // -- schedules
  scheduleSet(nm, tube, cron, payload = '', o = {}) {
    const mode = CATCH_UP.indexOf(o.catchUp ?? 'one');
    if (mode < 0) {
      throw new E.Invalid('scheduleSet: catchUp is none, one or all, not ' +
        `${JSON.stringify(o.catchUp)}`);
    }
    const w = new Writer().str16(name('scheduleSet', nm)).str16(tube)
      .str16(cron).str16(o.tz || '').u8(mode).u32(o.priority ?? 1024)
      .u64(o.ttrMs ?? 0).u32(o.maxAttempts ?? 0).blob(payload);
    return req('sched_set', bit(o.paused, 0x01), w, oneSchedule,
      { safe: true });
  },
  scheduleList: () => req('sched_list', 0, new Writer().str16(''),
    schedules, { safe: true }),
  scheduleShow: (nm) => req('sched_list', 0x02,
    new Writer().str16(name('scheduleShow', nm)), oneSchedule,
    { safe: true }),
  schedulePause: (nm) => req('sched_ctl', 0,
    new Writer().str16(name('schedulePause', nm)).u8(SCHED.pause),
    oneSchedule),
  scheduleResume: (nm) => req('sched_ctl', 0,
    new Writer().str16(name('scheduleResume', nm)).u8(SCHED.resume),
    oneSchedule),
  scheduleDelete: (nm) => req('sched_ctl', 0,
    new Writer().str16(name('scheduleDelete', nm)).u8(SCHED.delete),
    noSchedule),
};

module.exports = { encode, WAIT_MAX_MS };
