'use strict';
// sluice's messages (docs/protocol.md sections 2-4), without any I/O.
// Each operation is encoded once, here, into a request object: its name,
// op, flags, body, the decoder of its reply body, whether it is safe to
// send again after a lost connection (docs/protocol.md section 7), and
// how long the server may wait before answering (a take's wait). Integers
// of the body are little-endian; the SP framing around it (big-endian) is
// in client.js. Numbers are JavaScript numbers (ids, leases and times stay
// far below 2^53); payloads are Buffers.

const E = require('./errors');

const OPS = {
  put: 0x01, put_batch: 0x02, take: 0x03, ack: 0x04, release: 0x05,
  fail: 0x06, touch: 0x07, bury: 0x08, kick: 0x09, kick_id: 0x0a,
  delete: 0x0b, delete_key: 0x0c, flush: 0x0d, peek: 0x0e, peek_key: 0x0f,
  peek_next: 0x10, stats: 0x11, list: 0x12, errors: 0x13, pause: 0x14,
  snapshot: 0x15, promote: 0x16, follow: 0x17, release_all: 0x18,
  ack_batch: 0x19, delete_batch: 0x1a, update: 0x1b, stats_hourly: 0x1c,
  delete_where: 0x1d, tube_set: 0x1e, tube_show: 0x1f, job: 0x20,
  tube_delete: 0x21, cluster: 0x22, switchover: 0x23, history: 0x24,
  auth: 0x28, groups: 0x29, group: 0x2a, batch_show: 0x2b, batch_set: 0x2c,
  cancel: 0x2d, wait: 0x2e, sched_set: 0x2f, sched_list: 0x30,
  sched_ctl: 0x31, map: 0x32, map_set: 0x33, map_delete: 0x34,
  move_out: 0x35, move_in: 0x36, move_end: 0x37,
};
const STATES = ['gone', 'ready', 'delayed', 'taken', 'buried', 'done',
  'waiting'];
const STATE = Object.fromEntries(STATES.map((s, i) => [s, i]));
const ORDERS = { attempts: 1, oldest: 2, run_at: 3, id: 4 };
const MEMBER_ROLES = ['follower', 'leader', 'candidate', 'fenced'];
const SETTINGS = { ttr: 0x01, max_attempts: 0x02, backoff: 0x04,
  keep_done: 0x08, lost_lease: 0x10, dead_letter: 0x20 };
const VERBS = { delete: 1, release: 2, bury: 3, touch: 4, take: 5 };
const HISTORY = ['puts', 'takes', 'acks', 'fails', 'buries', 'ttrExpired',
  'ready', 'delayed', 'taken', 'buried'];
const REPORT = 0x40;
const FORCE = 0x80;
// a put's dependencies (docs/protocol.md, put: tagged fields)
const RULES = ['fail', 'ignore', 'cancel'];
const OUTCOMES = ['pending', 'done', 'failed'];
const AFTER_MAX = 1000;
const NAME_MAX = 200;

// ---- reading

class Reader {
  constructor(buf, off = 0, end = buf.length) {
    this.buf = buf;
    this.off = off;
    this.end = end;
  }

  need(n) {
    if (this.off + n > this.end) {
      throw new E.Malformed(`the reply ends too early (${n} bytes more ` +
        `needed at byte ${this.off})`);
    }
    const at = this.off;
    this.off += n;
    return at;
  }

  u8() { return this.buf.readUInt8(this.need(1)); }
  u16() { return this.buf.readUInt16LE(this.need(2)); }
  u32() { return this.buf.readUInt32LE(this.need(4)); }
  u64() { return Number(this.buf.readBigUInt64LE(this.need(8))); }
  i64() { return Number(this.buf.readBigInt64LE(this.need(8))); }
  bytes(n) { const at = this.need(n); return this.buf.subarray(at, at + n); }
  str16() { return this.bytes(this.u16()).toString('utf8'); }
  opt16() { return this.str16() || null; }
  blob() { return Buffer.from(this.bytes(this.u32())); }

  done(value) {
    if (this.off !== this.end) {
      throw new E.Malformed(`${this.end - this.off} bytes left over in ` +
        'the reply');
    }
    return value;
  }
}

// Checks a reply's header: returns [flags, a Reader on its body], or
// throws the error it carries.
function reply(req, buf, off) {
  const r = new Reader(buf, off);
  const [magic, version, op, flags, status] =
    [r.u8(), r.u8(), r.u8(), r.u8(), r.u16()];
  if (magic !== 0x53) {
    throw new E.Malformed(`a reply without sluice's magic byte (${magic})`);
  }
  if (version !== 1) throw new E.BadVersion(`a reply of version ${version}`);
  if (status !== 0) {
    let message = r.str16();
    const leader = r.str16();
    if (status === 12) {
      message = `the server does not have the operation ${req.name} ` +
        `(0x${OPS[req.name].toString(16)}): it is older than this client ` +
        `(${message})`;
    }
    const e = E.errorFor(status, message, leader);
    e.refusal = true; // the server's answer, not what the client met
    throw e;
  }
  if (op !== OPS[req.name]) {
    throw new E.Malformed(`a reply to op 0x${op.toString(16).padStart(2,
      '0')} for ${req.name}`);
  }
  return [flags, r];
}

function task(r) {
  const n = r.u32();
  if (n < 101 || r.off + n > r.end) {
    throw new E.Malformed(`a task record of ${n} bytes`);
  }
  const s = new Reader(r.buf, r.off, r.off + n);
  r.off += n;
  const t = { id: s.u64(), lease: s.u64(), state: STATES[s.u8()] };
  const flags = s.u8();
  Object.assign(t, {
    detached: Boolean(flags & 0x01), priority: s.u32(), attempts: s.u32(),
    maxAttempts: s.u32(), ttrMs: s.u64(), runAt: s.u64(),
    periodMs: s.u64(), createdAt: s.u64(), updatedAt: s.u64(),
    takenAt: s.u64(), deadline: s.u64(), size: s.u32(), tube: s.str16(),
    key: s.opt16(), lastError: s.opt16(), payload: s.blob(),
    pending: null, result: null, version: 0, session: 0, peer: null,
    group: null, parents: [], parentsPending: 0, onParentFailure: null,
    children: [], childrenCount: 0, cancelled: false,
  });
  if (flags & 0x02) {
    t.pending = { priority: s.u32(), maxAttempts: s.u32(), ttrMs: s.u64(),
      runAt: s.u64(), periodMs: s.u64(), size: s.u32(), payload: s.blob() };
  }
  if (flags & 0x04) {
    Object.assign(t, { finishedAt: s.u64(), keptUntil: s.u64(),
      durationMs: s.u64(), result: s.opt16() });
  }
  if (flags & 0x08) Object.assign(t, { version: s.u64(),
    pendingVersion: s.u64() });
  if (flags & 0x10) Object.assign(t, { session: s.u32(), peer: s.opt16() });
  if (flags & 0x20) t.group = s.opt16();
  if (flags & 0x40) {
    const rule = s.u8();
    t.onParentFailure = RULES[rule] ?? String(rule);
    t.parentsPending = s.u32();
    for (let k = s.u16(); k > 0; k--) {
      const id = s.u64();
      const outcome = s.u8();
      const res = s.bytes(s.u32());
      t.parents.push({ id, outcome: OUTCOMES[outcome] ?? String(outcome),
        result: outcome === 1 && res.length ? res.toString('utf8') : null });
    }
    t.childrenCount = s.u32();
    for (let k = s.u16(); k > 0; k--) t.children.push(s.u64());
  }
  t.cancelled = Boolean(flags & 0x80);
  return t;
}

const tasks = (f, r) => {
  const out = [];
  for (let n = r.u32(); n > 0; n--) out.push(task(r));
  return r.done(out);
};
const oneTask = (f, r) => r.done(task(r));
const after = (f, r) => r.done({ id: r.u64(), state: STATES[r.u8()],
  runAt: r.u64(), deadline: r.u64(), replaced: Boolean(f & 0x01) });
const u64 = (f, r) => r.done(r.u64());
const nothing = (f, r) => r.done(undefined);

function itemError(status, f, r) {
  const message = f & 0x01 ? r.str16() : '';
  return status ? E.errorFor(status, message) : null;
}

function putResults(f, r) {
  const out = [];
  for (let n = r.u32(); n > 0; n--) {
    const status = r.u16();
    const created = r.u8();
    const id = r.u64();
    out.push({ id, created: created === 1, notNewer: created === 2,
      throttled: created === 3, error: itemError(status, f, r) });
  }
  return r.done(out);
}

function putResult(f, r) {
  r.u16();
  const created = r.u8();
  return r.done({ id: r.u64(), created: created === 1,
    notNewer: created === 2, throttled: created === 3 });
}

const items = (ids) => (f, r) => {
  const n = r.u32();
  if (n !== ids.length) {
    throw new E.Malformed(`${n} results for ${ids.length} items`);
  }
  return r.done(ids.map((id) => ({ id, error: itemError(r.u16(), f, r) })));
};

function kvs(r) {
  const out = {};
  for (let n = r.u16(); n > 0; n--) out[r.str16()] = r.u64();
  return out;
}

function settingsBody(r, tube) {
  const own = r.u8();
  return { tube, own: Object.keys(SETTINGS).filter((k) => own & SETTINGS[k]),
    ttrMs: r.u64(), maxAttempts: r.u32(), backoffBaseMs: r.u64(),
    backoffCapMs: r.u64(), keepDoneMs: r.u64(),
    lostLeaseImmediate: Boolean(r.u8()), deadLetter: r.opt16() };
}

const settings = (f, r) => r.done(settingsBody(r, r.str16()));

const counts = (r) => ({ ready: r.u64(), delayed: r.u64(), taken: r.u64(),
  buried: r.u64(), pausedUntil: r.u64(), oldestReadyAgeMs: r.u64(),
  counters: kvs(r) });

function stats(f, r) {
  const s = { role: r.u8() === 1 ? 'leader' : 'follower', epoch: r.u64(),
    lsn: r.u64(), durableLsn: r.u64(), now: r.u64(), leader: r.opt16(),
    totals: counts(r), node: kvs(r), tubes: {} };
  for (let n = r.u32(); n > 0; n--) {
    const name = r.str16();
    s.tubes[name] = counts(r);
    if (f & 0x01) s.tubes[name].settings = settingsBody(r, name);
  }
  return r.done(s);
}

function errorGroups(f, r) {
  const out = [];
  for (let n = r.u32(); n > 0; n--) {
    const g = { error: r.str16(), count: r.u64(), ids: [] };
    if (f & 0x01) for (let k = r.u8(); k > 0; k--) g.ids.push(r.u64());
    out.push(g);
  }
  return r.done(out);
}

const dist = (r) => ({ count: r.u64(), totalMs: r.u64(), maxMs: r.u64(),
  p50Ms: r.u64(), p99Ms: r.u64() });

function groupList(f, r) {
  const total = r.u64();
  const groups = [];
  for (let n = r.u32(); n > 0; n--) {
    groups.push({ tube: r.str16(), group: r.opt16(), ready: r.u64(),
      taken: r.u64(), oldestReadyMs: r.u64() });
  }
  return r.done({ groups, total });
}

function hours(f, r) {
  const out = [];
  for (let n = r.u32(); n > 0; n--) {
    out.push({ start: r.u64(), acks: r.u64(), fails: r.u64(),
      buries: r.u64(), ttrExpired: r.u64(), work: dist(r), wait: dist(r) });
  }
  return r.done(out);
}

function history(f, r) {
  const h = { start: r.u64(), stepMs: r.u32() };
  const kinds = r.u8();
  const n = r.u32();
  for (let k = 0; k < kinds; k++) {
    const values = [];
    for (let i = 0; i < n; i++) values.push(r.u32());
    if (k < HISTORY.length) h[HISTORY[k]] = values;
  }
  return r.done(h);
}

function cluster(f, r) {
  const c = { cluster: r.str16(), node: r.str16(), leader: r.opt16(),
    ttlMs: r.u32(), etcdError: r.opt16(), members: [] };
  for (let n = r.u32(); n > 0; n--) {
    const m = { name: r.str16(), clientUrl: r.opt16(), replUrl: r.opt16(),
      role: MEMBER_ROLES[r.u8()] };
    const flags = r.u8();
    Object.assign(m, { sync: Boolean(flags & 1), lease: Boolean(flags & 2),
      epoch: r.u64(), durableLsn: r.u64(), lagRecords: r.u64(),
      leaseUntil: r.i64(), ageMs: r.u64() });
    c.members.push(m);
  }
  return r.done(c);
}

// The cluster map (docs/protocol.md, "map, map_set, map_delete"): its
// revision, the answering node's cluster, the entries sorted by prefix
// ('' the default) and where each cluster the entries name is.
function clusterMap(f, r) {
  const m = { revision: r.u64(), cluster: r.str16(), entries: [],
    clusters: {} };
  for (let n = r.u32(); n > 0; n--) {
    const e = { prefix: r.str16(), cluster: r.str16(), draining: [] };
    for (let k = r.u8(); k > 0; k--) e.draining.push(r.str16());
    m.entries.push(e);
  }
  for (let n = r.u32(); n > 0; n--) {
    const name = r.str16();
    const c = { leader: r.opt16(), members: [] };
    for (let k = r.u32(); k > 0; k--) c.members.push(r.str16());
    m.clusters[name] = c;
  }
  return r.done(m);
}

const page = (limit) => (f, r) => {
  const ts = tasks(f, r);
  return { tasks: ts, next: ts.length >= limit && ts.length ?
    ts[ts.length - 1].id : null };
};

// ---- writing

class Writer {
  constructor() { this.parts = []; }
  put(n, fn, v) { const b = Buffer.alloc(n); b[fn](v); this.parts.push(b); return this; }
  u8(v) { return this.put(1, 'writeUInt8', v); }
  u16(v) { return this.put(2, 'writeUInt16LE', v); }
  u32(v) { return this.put(4, 'writeUInt32LE', v); }
  u64(v) { return this.put(8, 'writeBigUInt64LE', BigInt(v)); }
  str16(s) {
    const b = Buffer.from(s || '', 'utf8');
    if (b.length > 0xffff) throw new E.Invalid(`a text of ${b.length} bytes`);
    return this.u16(b.length).raw(b);
  }
  blob(p) {
    const b = Buffer.isBuffer(p) ? p : Buffer.from(String(p ?? ''), 'utf8');
    return this.u32(b.length).raw(b);
  }
  raw(b) { this.parts.push(b); return this; }
  bytes() { return Buffer.concat(this.parts); }
}

const req = (name, flags, w, decode, extra = {}) =>
  ({ name, op: OPS[name], flags, body: w ? w.bytes() : Buffer.alloc(0),
    decode, safe: false, waitMs: 0, ...extra });
const bit = (cond, b) => (cond ? b : 0);

// After the payload: the version (flag 0x04), the debounce window (0x80),
// the throttle window (0x40), the group (0x08), in that order. The server
// checks the modes' rules (a key, one mode, no replace or delay, at most
// 30 days); a window must be a whole number of ms.
function putFields(w, o) {
  for (const k of ['debounceMs', 'throttleMs']) {
    if (o[k] != null && !(Number.isInteger(o[k]) && o[k] >= 0)) {
      throw new E.Invalid(`${k}: a window of 1 ms to 30 days, not ${o[k]}`);
    }
  }
  const ext = tagged(o);
  const flags = bit(o.replace, 0x01) | bit(o.at != null, 0x02) |
    bit(o.version != null, 0x04) | bit(Boolean(o.group), 0x08) |
    bit(ext !== null, 0x10) | bit(Boolean(o.throttleMs), 0x40) |
    bit(Boolean(o.debounceMs), 0x80);
  w.str16(o.tube).u32(o.priority ?? 1024).u64(o.at ?? o.delayMs ?? 0)
    .u64(o.ttrMs ?? 0).u32(o.maxAttempts ?? 0).u64(o.periodMs ?? 0)
    .str16(o.key || '').blob(o.payload);
  if (o.version != null) w.u64(o.version);
  if (o.debounceMs) w.u64(o.debounceMs);
  if (o.throttleMs) w.u64(o.throttleMs);
  if (o.group) w.str16(o.group);
  if (ext !== null) w.u32(ext.length).raw(ext);
  return flags;
}

// A put's tagged fields (flag 0x10), or null when it has none: its
// parents by id (tag 1, with the rule; sent whenever it has parents, so
// that the rule goes with parents named by key alone), by key (tag 2:
// tasks of the put's tube) and the batch it joins (tag 3). o.after holds
// ids (numbers) and keys (strings); o.afterKeys more keys.
function tagged(o) {
  const after = o.after == null ? [] : [].concat(o.after);
  const ids = after.filter((p) => typeof p !== 'string');
  const keys = after.filter((p) => typeof p === 'string')
    .concat(o.afterKeys == null ? [] : [].concat(o.afterKeys));
  const w = new Writer();
  if (ids.length || keys.length) {
    const rule = RULES.indexOf(o.onParentFailure ?? 'fail');
    if (rule < 0) {
      throw new E.Invalid('onParentFailure: fail, ignore or cancel, not ' +
        `${JSON.stringify(o.onParentFailure)}`);
    }
    if (ids.length + keys.length > AFTER_MAX) {
      throw new E.LimitExceeded(`${ids.length + keys.length} parents: a ` +
        `task waits for at most ${AFTER_MAX}`);
    }
    for (const id of ids) {
      if (!Number.isSafeInteger(id) || id < 1) {
        throw new E.Invalid(`after: task ids (integers of at least 1) or ` +
          `keys (strings), not ${JSON.stringify(id)}`);
      }
    }
    w.u8(1).u32(1 + 8 * ids.length).u8(rule);
    for (const id of ids) w.u64(id);
    if (keys.length) {
      const kw = new Writer().u16(keys.length);
      for (const k of keys) {
        if (!k) throw new E.Invalid('after: a key of 1-200 bytes, not ""');
        kw.str16(k);
      }
      const kb = kw.bytes();
      w.u8(2).u32(kb.length).raw(kb);
    }
  } else if (o.onParentFailure != null) {
    throw new E.Invalid('onParentFailure without parents (after)');
  }
  if (o.batch != null) {
    const name = Buffer.from(String(o.batch), 'utf8');
    if (!name.length || name.length > NAME_MAX) {
      throw new E.Invalid(`batch: a name of 1-${NAME_MAX} bytes, not ` +
        `${name.length}`);
    }
    w.u8(3).u32(name.length).raw(name);
  }
  const b = w.bytes();
  return b.length ? b : null;
}

function lease(w, id, l, force) {
  if (!l && !force) {
    throw new E.Invalid('a lease is needed: the one the take returned');
  }
  return w.u64(id).u64(l || 0);
}

const byTube = (name, tube, decode, extra) =>
  req(name, 0, new Writer().str16(tube), decode, extra);
const byId = (name, id, decode, extra) =>
  req(name, 0, new Writer().u64(id), decode, extra);

// Every operation: encode[name](...args) gives its request.
const encode = {
  put(tube, payload, o = {}) {
    const w = new Writer();
    const flags = putFields(w, { ...o, tube, payload });
    return req('put', flags, w, putResult, { safe: Boolean(o.key) });
  },
  putBatch(list) {
    const w = new Writer().u32(list.length);
    const parts = list.map((item) => {
      const iw = new Writer();
      const flags = putFields(iw, item);
      return Buffer.concat([Buffer.from([flags]), iw.bytes()]);
    });
    for (const b of parts) w.raw(b);
    return req('put_batch', 0x01, w, putResults,
      { safe: list.every((i) => i.key), parts });
  },
  take(tubes, o = {}) {
    tubes = Array.isArray(tubes) ? tubes : [tubes];
    const w = new Writer().u64(o.waitMs ?? 0).u32(o.max ?? 1)
      .u16(tubes.length);
    for (const t of tubes) w.str16(t);
    return req('take', bit(o.detach, 1) | bit(o.strict, 2) |
      bit(o.durable, 4), w, tasks, { waitMs: o.waitMs ?? 0 });
  },
  ack(id, l, o = {}) {
    const w = lease(new Writer(), id, l, o.force).str16(o.toTube || '');
    if (o.result != null) {
      if (o.result === '') {
        throw new E.Invalid('ack: a result of 1-65535 bytes, not empty');
      }
      const n = Buffer.byteLength(o.result, 'utf8');
      if (n > 0xffff) {
        throw new E.ResultTooLarge(`ack: a result of ${n} bytes, over the ` +
          'limit of 65535');
      }
      w.str16(o.result);
    }
    return req('ack', REPORT | bit(o.result != null, 1) |
      bit(o.force, FORCE), w, after);
  },
  release(id, l, o = {}) {
    const w = lease(new Writer(), id, l, o.force).u64(o.delayMs ?? 0)
      .u32(o.priority ?? 0);
    return req('release', REPORT | bit(o.priority != null, 1) |
      bit(o.front, 2) | bit(o.force, FORCE), w, after);
  },
  // The take of lease l undone, as if it never happened: the task waits
  // again where it was, its attempt uncounted (release with untake); the
  // lease holder's only. Rejects with Malformed from an older server.
  untake(id, l) {
    const w = lease(new Writer(), id, l, false).u64(0).u32(0);
    return req('release', REPORT | 4, w, after);
  },
  fail(id, l, error = '', o = {}) {
    const w = lease(new Writer(), id, l, o.force).u64(o.delayMs ?? 0)
      .str16(error);
    return req('fail', REPORT | bit(o.delayMs != null, 1) |
      bit(o.fatal, 2) | bit(o.force, FORCE), w, after);
  },
  touch(id, l, o = {}) {
    return req('touch', bit(o.force, FORCE),
      lease(new Writer(), id, l, o.force), after);
  },
  bury(id, l, o = {}) {
    const w = lease(new Writer(), id, l, o.force);
    if (o.error != null) w.str16(o.error);
    return req('bury', REPORT | bit(o.error != null, 1) |
      bit(o.force, FORCE), w, after);
  },
  ackBatch(pairs) {
    const w = new Writer().u32(pairs.length);
    for (const [id, l] of pairs) w.u64(id).u64(l);
    return req('ack_batch', 0x01, w, items(pairs.map((p) => p[0])));
  },
  kick(tube, n = 1, o = {}) {
    return req('kick', bit(o.delayed, 1), new Writer().str16(tube).u32(n),
      u64);
  },
  kickId: (id) => byId('kick_id', id, after),
  delete: (id) => byId('delete', id, nothing),
  deleteKey: (tube, key) => req('delete_key', 0x01,
    new Writer().str16(key).str16(tube), u64),
  deleteBatch(ids) {
    const w = new Writer().u32(ids.length);
    for (const id of ids) w.u64(id);
    return req('delete_batch', 0x01, w, items(ids));
  },
  deleteWhere: (tube, state, olderMs) => req('delete_where', 0,
    new Writer().str16(tube).u8(STATE[state] ?? state).u64(olderMs), u64),
  flush: (tube) => byTube('flush', tube, u64),
  update(id, o = {}) {
    const flags = bit(o.priority != null, 0x01) |
      bit(o.delayMs != null, 0x02) | bit(o.at != null, 0x04) |
      bit(o.ttrMs != null, 0x08) | bit(o.maxAttempts != null, 0x10) |
      bit(o.payload != null, 0x20);
    const w = new Writer().u64(id).u32(o.priority ?? 0)
      .u64(o.at ?? o.delayMs ?? 0).u64(o.ttrMs ?? 0)
      .u32(o.maxAttempts ?? 0).blob(o.payload ?? '');
    return req('update', flags, w, after);
  },
  job(verb, id, o = {}) {
    const w = new Writer().u8(VERBS[verb] ?? verb).u64(id)
      .u32(o.priority ?? 0).u64(o.delayMs ?? 0);
    return req('job', 0, w, (f, r) => tasks(f, r)[0] || null);
  },
  releaseAll: (tube) => byTube('release_all', tube, u64),
  peek: (id) => byId('peek', id, oneTask, { safe: true }),
  peekKey: (tube, key) => req('peek_key', 0x01,
    new Writer().str16(key).str16(tube), oneTask, { safe: true }),
  peekNext: (tube, state = 'ready') => req('peek_next', 0,
    new Writer().str16(tube).u8(STATE[state] ?? state), oneTask,
    { safe: true }),
  list(tube, o = {}) {
    const limit = o.limit ?? 100;
    const w = new Writer().str16(tube).u8(STATE[o.state] ?? o.state ?? 0)
      .u8(ORDERS[o.order] ?? o.order ?? 4).u32(limit);
    if (o.after != null) w.u64(o.after);
    return req('list', bit(o.payloads, 1) | bit(o.after != null, 2), w,
      page(limit), { safe: true });
  },
  stats(tube = '', o = {}) {
    const w = new Writer().str16(tube);
    let flags = bit(o.settings !== false, 1) | bit(o.durations, 2);
    if (o.top != null) { flags |= 0x08; w.u32(o.top); }
    if (o.limit != null) { flags |= 0x04; w.u32(o.limit).u32(o.after ?? 0); }
    return req('stats', flags, w, stats, { safe: true });
  },
  statsHourly: (tube = '') => byTube('stats_hourly', tube, hours,
    { safe: true }),
  history: (tube = '', secs = 60) => req('history', 0,
    new Writer().str16(tube).u32(secs), history, { safe: true }),
  // o.state: 'ready' .. 'buried', or 'all' (every live task); none: the
  // buried tasks (a retried task keeps its last error)
  errors(tube, o = {}) {
    const w = new Writer().str16(tube);
    const st = o.state === 'all' ? 0 : STATE[o.state] ?? o.state;
    const other = st != null && st !== STATE.buried;
    if (other) w.u8(st);
    return req('errors', bit(o.ids !== false, 1) | bit(other, 2), w,
      errorGroups, { safe: true });
  },
  // a tube's fair groups by backlog; tube '' lists every tube's
  groups(tube, o = {}) {
    const limit = o.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new E.Invalid(`groups: a limit of 1..1000, not ${limit}`);
    }
    return req('groups', 0, new Writer().str16(tube).u32(limit), groupList,
      { safe: true });
  },
  pause: (tube, durationMs, o = {}) => req('pause', bit(o.create, 1),
    new Writer().str16(tube).u64(durationMs), u64),
  tubeSet(tube, o = {}) {
    const set = bit(o.ttrMs != null, 0x01) |
      bit(o.maxAttempts != null, 0x02) | bit(o.backoff != null, 0x04) |
      bit(o.keepDoneMs != null, 0x08) |
      bit(o.lostLeaseImmediate != null, 0x10) |
      bit(o.deadLetter != null, 0x20);
    const unset = (o.unset || []).reduce((a, k) => a | SETTINGS[k], 0);
    const [base, cap] = o.backoff || [0, 0];
    const w = new Writer().str16(tube).u8(unset).u8(set).u64(o.ttrMs ?? 0)
      .u32(o.maxAttempts ?? 0).u64(base).u64(cap).u64(o.keepDoneMs ?? 0)
      .u8(o.lostLeaseImmediate ? 1 : 0).str16(o.deadLetter || '');
    return req('tube_set', 0, w, settings, { safe: true });
  },
  tubeShow: (tube) => byTube('tube_show', tube, settings, { safe: true }),
  tubeDelete: (tube, o = {}) => req('tube_delete', bit(o.force, 1),
    new Writer().str16(tube), u64),
  snapshot: () => req('snapshot', 0, null, u64),
  promote: () => req('promote', 0, null, u64),
  follow: (url) => byTube('follow', url, nothing),
  cluster: () => req('cluster', 0, null, cluster, { safe: true }),
  switchover: (node, timeoutMs = 0) => req('switchover', 0,
    new Writer().str16(node).u32(timeoutMs),
    (f, r) => r.done({ leader: r.str16(), epoch: r.u64() })),
  auth: (token) => byTube('auth', token, nothing),
  clusterMap: () => req('map', 0, null, clusterMap, { safe: true }),
  // prefix '' (or null): the default; draining: clusters that still hold
  // tasks of these tubes (0-8)
  mapSet(prefix, cluster, draining = []) {
    if (draining.length > 0xff) {
      throw new E.LimitExceeded(`${draining.length} draining clusters`);
    }
    const w = new Writer().str16(prefix || '').str16(cluster)
      .u8(draining.length);
    for (const d of draining) w.str16(d);
    return req('map_set', 0, w, u64, { safe: true });
  },
  mapDelete: (prefix) => req('map_delete', 0,
    new Writer().str16(prefix || ''), u64),
};

// A request's sluice message.
// A put_batch of the items idx of q (their parts: flags and fields).
// Items refused MovingIn have keys: safe to send again.
function itemsOf(q, idx) {
  const parts = idx.map((i) => q.parts[i]);
  const w = new Writer().u32(parts.length);
  for (const b of parts) w.raw(b);
  return { ...q, body: w.bytes(), parts, safe: true };
}

const message = (q) => Buffer.concat([Buffer.from([0x53, 1, q.op, q.flags]),
  q.body]);

module.exports = { encode, reply, message, OPS, STATES, STATE, Reader,
  Writer, req, bit, task, items, u64, NAME_MAX, itemsOf };
