'use strict';
// A tube moved between clusters (docs/scaling.md, "Move a tube"), as
// `sluice tube move` and libsluice's sluice_router_move do it: the
// messages (move_out 0x35, move_in 0x36, move_end 0x37: docs/protocol.md,
// "Moving a tube") and the mover, which Router.move runs.
//
// The move's state lives where it cannot be lost, so the mover keeps none
// of its own and running it again resumes it: the map entry's draining
// mark (in etcd) says a move is under way and from where; the source's
// log holds the batch held for the mover until it is dropped (a hold sent
// again answers that batch); the target's log holds the source ids it
// copied, so a batch copied twice makes nothing twice.
//
// Around the rounds (as libsluice's move.c): the tube's settings and its
// groups' (every group's, and each group's own, found by op group's verb
// next) are copied first; the reservations of its keys at the source
// (keys of tasks completed there, in their dedup window: move_out's keys,
// then move_in of each as a task in state done) before the rounds and
// again after them, when the source holds no task of the tube and no ack
// can make another.
//
// The key window (docs/scaling.md, "Keys"): before the map changes the
// source is marked keep (its drain ends only by the mover's move_end) and
// the target pend (a keyed put of the tube is refused MovingIn, which the
// clients send again); once the source knows the map, the keys of its
// live tasks of the tube go to the target as placeholders (each under the
// id its copy will get: a put of the key answers that id), then the
// target takes keyed puts (ready). A resumed move marks both again
// (nothing changes if they are) and sends the keys again (those held
// answer their ids). The tubes under the moved one go first, the moved
// tube last: its move_end at the source lifts the keep mark.
//
// Rounds, per source: hold up to `batch` tasks at the source (one
// commit), copy them to the target (one commit), drop them at the source
// (one commit). A round that holds nothing while the source still has
// taken tasks of the tube waits for them (50 ms, again): their acks are
// honoured at the source, and an expired lease makes its task ready there
// for a later round. Every request is safe to send again: a node gone
// (a failover) is asked again, with the map read again, until timeoutMs.

const E = require('./errors');
const { Writer, req, task, STATE } = require('./codec');

const BATCH_DEFAULT = 500;
const MOVE_MAX = 1000;
const TIMEOUT_DEFAULT_MS = 60000;
const HOLD = 1;
const DROP = 2;
const KEYS = 3; // move_out's kinds
const LIVE = 4;
const KEEP = 5;
const PLACE = 0x01; // move_in's kinds, in the header's flags
const PEND = 0x02;
const READY = 0x04;
const KEYS_PENDING = 1; // MoveProgress.stage
const KEYS_HELD = 2;
const GROUP_SET = 1; // op group's verbs
const GROUP_PAUSE = 2;
const GROUP_NEXT = 4;
const TS_TTR = 0x01; // tube_set's unset bit of the ttr: makes the tube
const TUBE_RE = /^[A-Za-z0-9_.:/-]{1,200}$/;
const CLUSTER_RE = /^[A-Za-z0-9_.:-]{1,64}$/;
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// ---- messages

const count = (f, r) => r.done(r.u32());

function held(f, r) {
  const out = [];
  if (f & 0x01) for (let n = r.u32(); n > 0; n--) out.push(task(r));
  else r.u32();
  return r.done(out);
}

function copies(f, r) {
  const out = [];
  const n = r.u32();
  if (!(f & 0x02) && n) throw new E.Malformed('move_in\'s reply without ' +
    'its results');
  for (let k = 0; k < n; k++) out.push({ status: r.u16(), id: r.u64() });
  return r.done(out);
}

// A task as the target copies it: what a copy carries (the fields of the
// record as the hold gave them), none of what describes the source's
// lease, pending content or graph.
function plain(w, t) {
  const inner = new Writer().u64(t.id).u64(0).u8(STATE[t.state])
    .u8(t.group ? 0x20 : 0).u32(t.priority).u32(t.attempts)
    .u32(t.maxAttempts).u64(t.ttrMs).u64(t.runAt).u64(t.periodMs)
    .u64(t.createdAt).u64(t.updatedAt).u64(0).u64(0).u32(t.payload.length)
    .str16(t.tube).str16(t.key || '').str16(t.lastError || '')
    .blob(t.payload);
  if (t.group) inner.str16(t.group);
  const b = inner.bytes();
  w.u32(b.length).raw(b);
}

// A key's reservation (as move_out's keys gave it) as the target takes
// it: state done, the task's id and key, runAt the end of the
// reservation, its version (flag 0x08); no payload.
function reservation(w, t) {
  const version = t.version || 0;
  // a reservation without an end reads past 2^53 as a Number: no end
  const end = t.runAt >= 2 ** 63 ? 0xffffffffffffffffn : t.runAt;
  const inner = new Writer().u64(t.id).u64(0).u8(STATE.done)
    .u8(version ? 0x08 : 0).u32(0).u32(0).u32(0).u64(0).u64(end)
    .u64(0).u64(0).u64(0).u64(0).u64(0).u32(0)
    .str16(t.tube).str16(t.key || '').str16('').blob(Buffer.alloc(0));
  if (version) inner.u64(version).u64(0);
  const b = inner.bytes();
  w.u32(b.length).raw(b);
}

// Op group's reply, what a move needs of it: the group found (verb next;
// '' when none is left), every group's limits and the group's own, and
// whether it is paused.
function group(f, r) {
  const lim = () => ({ set: r.u8(), rate: r.u32(), per: r.u32(),
    burst: r.u32(), concurrency: r.u32() });
  const g = { tube: r.str16(), group: r.str16(), every: lim() };
  r.u32(); r.u32(); r.u32();
  g.paused = Boolean(r.u8() & 0x02);
  g.own = lim();
  lim(); // the limits in force
  r.u32(); r.u32(); r.u64(); r.u8();
  return r.done(g);
}

const groupOp = (tube, name, verb, l = null) => req('group', 0,
  new Writer().str16(tube).str16(name).u8(verb).u8(0).u8(l ? l.set : 0)
    .u32(l ? l.rate : 0).u32(l ? l.per : 0).u32(l ? l.burst : 0)
    .u32(l ? l.concurrency : 0), group, { safe: true });

function limits(f, r) {
  r.str16(); // the tube, then its settings (tube_show's)
  r.u8(); r.u64(); r.u32(); r.u64(); r.u64(); r.u64(); r.u8(); r.str16();
  if (!(f & 0x01)) throw new E.Malformed('the reply carries no limits');
  const l = { own: r.u8(), rate: r.u32(), per: r.u32(), burst: r.u32(),
    concurrency: r.u32() };
  r.u64(); r.u64(); r.u64();
  return r.done(l);
}

const encode = {
  // hold up to max (1-1000) of tube's ready, delayed and buried tasks at
  // a source (the batch held before, if one was not dropped): the tasks,
  // each with its state before the hold and the hold's lease
  moveHold: (tube, max) => req('move_out', 0, new Writer().u8(HOLD)
    .str16(tube).u32(max), held, { safe: true }),
  // the reservations of tube's keys at a source (keys of tasks completed
  // there, within their dedup window) of tasks whose ids are above
  // after, lowest first, up to max (1-1000): tasks in state done, runAt
  // the reservation's end; nothing changes
  moveKeys: (tube, max, after = 0n) => req('move_out', 0, new Writer()
    .u8(KEYS).str16(tube).u32(max).u64(after), held, { safe: true }),
  // make the reservations moveKeys gave at a target, each until the same
  // time: per one { status, id } (id 0: it had expired)
  moveKeysIn(tube, source, list) {
    const w = new Writer().str16(tube).str16(source).u32(list.length);
    for (const t of list) reservation(w, t);
    return req('move_in', 0, w, copies, { safe: true });
  },
  // mark a source keep for tube: its drain of the tube ends only by the
  // mover's move_end there (1: marked now, 0: it was)
  moveKeep: (tube) => req('move_out', 0, new Writer().u8(KEEP).str16(tube),
    count, { safe: true }),
  // the keys of tube's live tasks at a source (ready, delayed, buried,
  // taken, waiting) of ids above after, lowest first, up to max
  // (1-1000): tasks with their id, tube, key and state now, no payload;
  // none: no more; nothing changes
  moveLive: (tube, max, after = 0n) => req('move_out', 0, new Writer()
    .u8(LIVE).str16(tube).u32(max).u64(after), held, { safe: true }),
  // hold the keys of tasks (as moveLive gave them) at a target as
  // placeholders, each under the id its copy will get (a put of the key
  // answers it): per one { status, id }; sent again, the same ids
  movePlace(tube, source, tasks) {
    const w = new Writer().str16(tube).str16(source).u32(tasks.length);
    for (const t of tasks) plain(w, t);
    return req('move_in', PLACE, w, copies, { safe: true });
  },
  // a target refuses keyed puts of tube (and of the tubes under it) with
  // MovingIn until moveReady for that source (1: marked now, 0: it was)
  movePend: (tube, source) => req('move_in', PEND, new Writer().str16(tube)
    .str16(source).u32(0), count, { safe: true }),
  // the keys of tube from source are held at a target: keyed puts are
  // taken again (1: the mark went now, 0: there was none)
  moveReady: (tube, source) => req('move_in', READY, new Writer()
    .str16(tube).str16(source).u32(0), count, { safe: true }),
  // drop the held tasks of pairs [[id, lease], ...]: how many went
  moveDrop(tube, pairs) {
    const w = new Writer().u8(DROP).str16(tube).u32(pairs.length);
    for (const [id, lease] of pairs) w.u64(id).u64(lease);
    return req('move_out', 0, w, count, { safe: true });
  },
  // copy tasks (as a hold gave them) into a target: per task
  // { status, id } (status 0 and the copy's id, or the refusing code)
  moveIn(tube, source, tasks) {
    const w = new Writer().str16(tube).str16(source).u32(tasks.length);
    for (const t of tasks) plain(w, t);
    return req('move_in', 0, w, copies, { safe: true });
  },
  // a move of tube is over here: a target forgets its source ids (their
  // count), a source lifts its mark
  moveEnd: (tube) => req('move_end', 0, new Writer().str16(tube), count,
    { safe: true }),
};

// tube_show and tube_set with their flag 0x01 (flow limits), raw: what a
// move copies.
const limitsShow = (tube) => req('tube_show', 0x01,
  new Writer().str16(tube), limits, { safe: true });
const limitsSet = (tube, l) => req('tube_set', 0x01, new Writer()
  .str16(tube).u8(0).u8(0).u64(0).u32(0).u64(0).u64(0).u64(0).u8(0)
  .str16('').u8(0).u8(l.own).u32(l.rate).u32(l.per).u32(l.burst)
  .u32(l.concurrency), limits, { safe: true });

// ---- the mover

// A failure that a moment may cure: a node gone, a failover.
const transient = (e) => e instanceof E.ConnectionLost ||
  e instanceof E.TimedOut || e instanceof E.NotLeader ||
  e instanceof E.ShuttingDown || e instanceof E.TooFewReplicas ||
  e instanceof E.StaleEpoch || e instanceof E.LogFailed;

class Mover {
  constructor(router, tube, target, o) {
    this.r = router;
    this.o = o;
    this.timeoutMs = o.timeoutMs > 0 ? o.timeoutMs : TIMEOUT_DEFAULT_MS;
    this.batch = Math.min(o.batch > 0 ? o.batch : BATCH_DEFAULT, MOVE_MAX);
    this.p = { tube, source: '', target, copied: 0, dropped: 0, batches: 0,
      waits: 0, revision: 0, done: false, keys: 0, groups: 0, stage: 0 };
  }

  // the caller's report, awaited when it answers a promise
  async report() { if (this.o.report) await this.o.report({ ...this.p }); }

  // q (a request) on cluster name, again while the failure is transient,
  // until timeoutMs.
  async call(name, q) {
    const until = performance.now() + this.timeoutMs;
    for (;;) {
      try {
        return await this.r.client(name)._do(q);
      } catch (e) {
        if (!transient(e) || performance.now() >= until) {
          e.message = `cluster ${name}: ${e.message}`;
          throw e;
        }
      }
      await sleep(100);
      await this.r.fresh(true).catch(() => {}); // members may have changed
    }
  }

  async mapSet(prefix, cluster, draining) {
    const until = performance.now() + this.timeoutMs;
    for (;;) {
      try {
        this.p.revision = await this.r.seed.mapSet(prefix, cluster,
          draining);
        break;
      } catch (e) {
        if (!transient(e) || performance.now() >= until) throw e;
      }
      await sleep(100);
    }
    await this.r.fresh(true);
  }

  // Waits until the leader of cluster name knows the map at rev or later:
  // from then on it refuses the tube's puts.
  async known(name, rev) {
    const until = performance.now() + this.timeoutMs;
    for (;;) {
      let m = null;
      try { // any failure: again (a node started again has no map yet)
        m = await this.r.client(name).clusterMap();
      } catch (e) {
        m = null;
      }
      if (m && m.revision >= rev) return;
      if (performance.now() >= until) {
        throw new E.TimedOut(`cluster ${name} did not learn the map's ` +
          `revision ${rev} within ${this.timeoutMs} ms`);
      }
      await sleep(50);
      if (!m) await this.r.fresh(true).catch(() => {});
    }
  }

  // The target has a leader the map knows of, and it answers: else the
  // move goes no further (a cluster name mistyped would send the tube's
  // puts nowhere).
  async targetOk(target) {
    const c = this.r.map.clusters[target];
    if (!c || !c.leader) {
      throw new E.ConnectionLost(`cluster ${target} has no leader in etcd ` +
        `(/sluice/${target}/leader): start its nodes first; the map is ` +
        'left as it was');
    }
    try {
      await this.r.client(target).clusterMap();
    } catch (e) {
      e.message = `cluster ${target} does not answer: ${e.message}; the ` +
        'map is left as it was';
      throw e;
    }
  }

  // The settings and flow limits of tube at src, made dst's.
  async copySettings(src, dst, tube) {
    const s = this.r.client(src);
    const d = this.r.client(dst);
    const conf = await s.tubeShow(tube);
    const o = {};
    for (const k of conf.own) {
      if (k === 'ttr') o.ttrMs = conf.ttrMs;
      if (k === 'max_attempts') o.maxAttempts = conf.maxAttempts;
      if (k === 'backoff') o.backoff = [conf.backoffBaseMs, conf.backoffCapMs];
      if (k === 'keep_done') o.keepDoneMs = conf.keepDoneMs;
      if (k === 'lost_lease') o.lostLeaseImmediate = conf.lostLeaseImmediate;
      if (k === 'dead_letter') o.deadLetter = conf.deadLetter || '';
    }
    if (conf.own.length) await d.tubeSet(tube, o);
    const l = await s._do(limitsShow(tube));
    if (!l.own) return;
    if (!conf.own.length) {
      await d._do(req('tube_set', 0, new Writer().str16(tube).u8(TS_TTR)
        .u8(0).u64(0).u32(0).u64(0).u64(0).u64(0).u8(0).str16(''),
      (f, r) => undefined, { safe: true })); // makes the tube
    }
    await d._do(limitsSet(tube, l));
  }

  // q at the target d, the tube made first when it has none there (its
  // settings were all defaults: nothing made it before).
  static async made(d, tube, q) {
    try {
      return await d._do(q);
    } catch (e) {
      if (!(e instanceof E.NotFound)) throw e;
      await d._do(req('tube_set', 0, new Writer().str16(tube).u8(TS_TTR)
        .u8(0).u64(0).u32(0).u64(0).u64(0).u64(0).u8(0).str16(''),
      (f, r) => undefined, { safe: true }));
      return d._do(q);
    }
  }

  // The group settings of tube at src made dst's: every named group's
  // limits, then each group's own limits and pause, found one at a time
  // in the order of their names (op group's verb next). A group the
  // target has settings for and the source not keeps them.
  async copyGroups(src, dst, tube) {
    const s = this.r.client(src);
    const d = this.r.client(dst);
    let after = '';
    for (let first = true; ; first = false) {
      let g;
      try {
        g = await s._do(groupOp(tube, after, GROUP_NEXT));
      } catch (e) {
        if (e instanceof E.NotFound) return; // no such tube there
        throw e;
      }
      if (first && g.every.set) {
        await Mover.made(d, tube, groupOp(tube, '', GROUP_SET, g.every));
      }
      if (!g.group) return;
      if (g.own.set) {
        await Mover.made(d, tube, groupOp(tube, g.group, GROUP_SET, g.own));
      }
      if (g.paused) {
        await Mover.made(d, tube, groupOp(tube, g.group, GROUP_PAUSE));
      }
      this.p.groups++;
      after = g.group;
    }
  }

  // One round of tube from src: 1 when tasks were copied, 0 when the
  // source holds none of the tube (taken ones too), 2 when only taken
  // ones are left.
  async round(src, dst, tube) {
    const tasks = await this.call(src, encode.moveHold(tube, this.batch));
    if (!tasks.length) {
      let st;
      try {
        st = await this.r.client(src).stats(tube);
      } catch (e) {
        if (e instanceof E.NotFound) return 0; // never had the tube
        if (transient(e)) return 2;
        throw e;
      }
      const t = st.tubes[tube];
      return t && (t.taken || t.ready || t.delayed || t.buried) ? 2 : 0;
    }
    const res = await this.call(dst, encode.moveIn(tube, src, tasks));
    res.forEach((x, i) => {
      if (x.status) {
        const e = E.errorFor(x.status, `cluster ${dst} refused the copy of ` +
          `task ${tasks[i].id} of tube '${tube}' from ${src} (nothing is ` +
          `lost: it stays held at ${src}; fix the cause and run the move ` +
          'again)');
        throw e;
      }
    });
    const dropped = await this.call(src, encode.moveDrop(tube,
      tasks.map((t) => [t.id, t.lease])));
    this.p.copied += tasks.length;
    this.p.dropped += dropped;
    this.p.batches++;
    return 1;
  }

  // Every round of tube from src, to the end.
  async drain(src, dst, tube) {
    this.p.tube = tube;
    this.p.source = src;
    let waitUntil = 0;
    for (;;) {
      const rc = await this.round(src, dst, tube);
      if (rc === 0) return;
      if (rc === 1) {
        waitUntil = 0;
        await this.report();
        continue;
      }
      this.p.waits++;
      if (!waitUntil && this.o.waitMs > 0) {
        waitUntil = performance.now() + this.o.waitMs;
      }
      if (waitUntil && performance.now() >= waitUntil) {
        throw new E.TimedOut(`tube '${tube}' still has taken tasks at ` +
          `${src} after ${this.o.waitMs} ms; run the move again to go on`);
      }
      if (this.p.waits % 20 === 1) await this.report();
      await sleep(50);
    }
  }

  // The tubes of cluster name that the entry of prefix governs (the
  // longer names it starts).
  async tubesOf(name, prefix) {
    const out = [];
    let after = 0;
    do { // a page of every tube's stats at a time (tubes_next: the next)
      const st = await this.r.client(name).stats('', { settings: false,
        limit: 1000, after });
      for (const t of Object.keys(st.tubes)) {
        if (t === prefix || !t.startsWith(prefix)) continue;
        const e = this.r.constructor.entry(this.r.map, t);
        if (e && e.prefix === prefix) out.push(t);
      }
      after = st.node.tubes_next || 0;
    } while (after);
    return out.sort();
  }

  // The key window opens for tube from src: the source keeps its drain
  // for the mover (keep), the target refuses keyed puts (pend); both
  // idempotent.
  async windowOpen(src, dst, tube, keep = true, pend = true) {
    if (keep) await this.call(src, encode.moveKeep(tube));
    if (pend) await this.call(dst, encode.movePend(tube, src));
  }

  // A new move: the target must answer before anything changes (a
  // cluster name mistyped would send the tube's puts nowhere); then the
  // key window opens, then the map changes. The Router reads the map
  // from a node, which knows only the clusters the map names: a target it
  // does not name yet is reached once it does, so the map changes first
  // (and goes back if the target does not answer) and the target's
  // window opens right after (a keyed put that reaches it in between is
  // not held back), as libsluice does.
  async openAndMap(sources, target, tube, e) {
    const r = this.r;
    const late = !r.map.clusters[target];
    if (!late) await this.targetOk(target);
    for (const src of sources) {
      await this.windowOpen(src, target, tube, true, !late);
    }
    const before = e && e.prefix === tube ? e.cluster : null;
    await this.mapSet(tube, target, sources);
    if (!late) return;
    try {
      await this.targetOk(target);
    } catch (err) {
      // nothing was copied: the map goes back as it was
      if (before) await r.seed.mapSet(tube, before, []).catch(() => {});
      else await r.seed.mapDelete(tube).catch(() => {});
      await r.fresh(true).catch(() => {});
      throw err;
    }
    for (const src of sources) {
      await this.windowOpen(src, target, tube, false, true);
    }
  }

  // A list of tube at src, a page at a time by id, made at dst: the keys
  // of its live tasks held as placeholders (keys false; sent again, a
  // page answers the ids given before), or the reservations of its keys
  // (keys of tasks completed there, within their dedup window) made until
  // the same time (keys true; sent again, a page makes nothing twice).
  // count: the pass whose reservations the progress counts (the last).
  async copyPages(src, dst, tube, keys, count = false) {
    const list = keys ? encode.moveKeys : encode.moveLive;
    const make = keys ? encode.moveKeysIn : encode.movePlace;
    let after = 0n;
    for (;;) {
      let page;
      try {
        page = await this.call(src, list(tube, this.batch, after));
      } catch (e) {
        if (e instanceof E.NotFound) return;
        throw e;
      }
      if (!page.length) return;
      for (const t of page) if (BigInt(t.id) > after) after = BigInt(t.id);
      const res = await this.call(dst, make(tube, src, page));
      res.forEach((x, i) => {
        if (x.status && keys) {
          throw E.errorFor(x.status, `cluster ${dst} refused the ` +
            `reservation of a key of tube '${tube}' from ${src} (run the ` +
            'move again once the cause is fixed)');
        }
        if (x.status) {
          throw E.errorFor(x.status, `cluster ${dst} refused to hold the ` +
            `key of task ${page[i].id} of tube '${tube}' from ${src} (keyed ` +
            'puts there wait; run the move again once the cause is fixed)');
        }
        if (x.id && count) this.p.keys++;
      });
    }
  }

  // Its settings and groups', its keys' reservations (before the tasks,
  // and after, for the keys of the tasks acked there meanwhile), its
  // tasks, then the source's mark goes.
  async moveOne(src, dst, t) {
    await this.copySettings(src, dst, t);
    await this.copyGroups(src, dst, t);
    await this.copyPages(src, dst, t, true);
    await this.drain(src, dst, t);
    await this.copyPages(src, dst, t, true, true);
    await this.call(src, encode.moveEnd(t));
  }

  async moveFrom(src, dst, tube) {
    // once src takes no more puts of the tube, the keys of its live tasks
    // are held at dst, and dst takes keyed puts; then the reservations,
    // so that a key completed at src is answered at dst as it would have
    // been at src as soon as it can be
    this.p.tube = tube;
    this.p.source = src;
    this.p.stage = KEYS_PENDING;
    await this.report();
    await this.known(src, this.p.revision);
    const more = await this.tubesOf(src, tube);
    for (const t of [tube, ...more]) await this.copyPages(src, dst, t, false);
    this.p.stage = KEYS_HELD;
    await this.report();
    this.p.stage = 0;
    await this.call(dst, encode.moveReady(tube, src));
    await this.copyPages(src, dst, tube, true);
    // the tube itself last: its move_end at src lifts the keep mark
    for (const t of [...more, tube]) await this.moveOne(src, dst, t);
    // the tables (and placeholders left) of the tubes under it at dst go
    // now: another source may move them next
    for (const t of more) await this.call(dst, encode.moveEnd(t));
  }

  // The target's tables of source ids for the tube (and the tubes its
  // entry governs there) are no longer needed.
  async endTables(dst, tube) {
    await this.call(dst, encode.moveEnd(tube));
    for (const t of await this.tubesOf(dst, tube)) {
      await this.call(dst, encode.moveEnd(t));
    }
  }

  async run() {
    const { tube, target } = this.p;
    const r = this.r;
    const m = await r.fresh(true);
    this.p.revision = m.revision;
    const e = r.constructor.entry(m, tube);
    let sources;
    if (e && e.prefix === tube && e.draining.length) {
      // a move (or a drain) under way: resumed
      if (e.cluster !== target) {
        throw new E.BadState(`tube '${tube}' is moving to ${e.cluster} ` +
          `already (the map drains it from ${e.draining[0]}): finish that ` +
          'move first');
      }
      sources = [...e.draining];
      for (const src of sources) await this.windowOpen(src, target, tube);
    } else {
      const owner = e ? e.cluster : m.cluster;
      if (owner === target && (!e || e.prefix === tube)) {
        this.p.done = true; // nothing to move
        return this.p;
      }
      sources = owner === target ? [] : [owner];
      await this.openAndMap(sources, target, tube, e);
    }
    for (const src of sources) {
      await this.moveFrom(src, target, tube);
      await this.report();
    }
    await this.endTables(target, tube);
    await this.mapSet(tube, target, []);
    this.p.done = true;
    await this.report();
    return { ...this.p };
  }
}

// Moves tube to cluster target through router (Router.move says what it
// does and answers).
async function move(router, tube, target, o = {}) {
  if (typeof tube !== 'string' || !TUBE_RE.test(tube)) {
    throw new E.BadTube('move: a tube name is 1-200 bytes of A-Z a-z 0-9 ' +
      `_ . : / -, not ${JSON.stringify(tube)}`);
  }
  if (typeof target !== 'string' || !CLUSTER_RE.test(target)) {
    throw new E.Invalid('move: a cluster name is 1-64 bytes of A-Z a-z ' +
      `0-9 _ . : -, not ${JSON.stringify(target)}`);
  }
  return new Mover(router, tube, target, o).run();
}

module.exports = { encode, move, KEYS_PENDING, KEYS_HELD };
