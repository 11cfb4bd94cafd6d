'use strict';
// The Router: several clusters share the tubes, a map in etcd says which
// cluster owns which (docs/scaling.md), and a Router sends each request
// to the cluster that owns its tube, as libsluice's routing handle does
// (sluice_open_map, include/sluice_map.h).
//
// A Router is given any node of any cluster: every node started with
// --etcd serves the map (op map, 0x32), with each cluster's members, so
// the client needs no access to etcd. The map is read before a call when
// it is over refreshMs old (1 s), and at once when a node answers Moved:
// the tube moved and the Router's map was older. The refused request was
// done nowhere, so it is sent again, to the owner (a node that read the
// map before the one the Router asks is waited for, until it knows the
// revision the refusal named). A Moved naming an older revision than the
// Router's (the refusing node is behind: the new owner in a move's first
// moments, before its poll of the map, every 200 ms, or later on a loaded
// machine) sends the request to that node again after 50 ms, then after
// waits doubled up to 400 ms, as libsluice does; so does a map read again
// that is no newer than the one the request went by. The call's
// timeoutMs (30000 when unset or < 0), from its start, bounds all of it:
// past it the Moved is thrown. Puts, batch puts and takes are what a
// node refuses so.
// A tube no entry matches goes to the cluster of the node the Router
// was given.
//
// One Client per cluster used, opened with the members the map names:
// each follows its cluster's failover as any Client does. A take over
// tubes of several clusters asks each at once without waiting, then
// waits on all of them at once, each on a connection of its own (the
// waiters: never the one acks go through) taking with waits of at most
// 200 ms until the take's wait is over; the first tasks that come are
// returned, the other waits end after their current slice, and a task
// one of them took meanwhile is given back at once, its take undone
// (untake: back at its place, its attempt uncounted): no task is returned
// twice, and none counts an attempt nobody made. Task ids are per
// cluster: a task taken through a Router carries its cluster
// (task.cluster), and ack, release, fail, touch and bury take the task
// and go there. A batch put
// is split by cluster, each part one request (one commit on its cluster)
// sent at the same time as the others; stats are asked of every cluster
// and summed.
//
// What names no tube is routed by what it names. wait, cancel and batchOf
// take a task reference, not a bare id (ids are per cluster): a put's
// result or a task of this Router (both carry their cluster), or
// { id, cluster } or { id, tube }. A batch lives on each cluster that
// owns a tube of its tasks (the name is per cluster): batchShow and
// batchList ask every cluster and sum the parts; batchSet, batchClose
// and batchCancel go to every cluster holding a part, and a batch not
// made yet to the owner of o.tube (or of its callback's tube). A
// schedule fires on the cluster that holds it: scheduleSet goes to the
// owner of the schedule's tube and deletes the name elsewhere (one name,
// one schedule); the others find it by name on every cluster. move runs
// a tube's move between clusters (move.js).

const E = require('./errors');
const { Client, parseUrls } = require('./client');
const { move } = require('./move');

const REFRESH_MS = 1000;
const SLICE_MS = 200;
const BEHIND_MS = 50; // the first wait for a node behind the map
const BEHIND_MAX_MS = 400; // the longest: about two of its polls
const ROUTE_TIMEOUT_MS = 30000; // a call's retries when timeoutMs is unset
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// Gives back a task a cancelled wait took: its take undone (untake); to a
// server older than untake, released at its place (its attempt stays
// counted). A lease that ended already needs nothing.
async function giveBack(c, t) {
  try {
    await c.untake(t.id, t.lease);
  } catch (e) {
    if (e instanceof E.Malformed) {
      await c.release(t.id, t.lease, { front: true }).catch(() => {});
    }
  }
}

function mark(tasks, cluster) {
  for (const t of tasks) t.cluster = cluster;
  return tasks;
}

class Router {
  // urls: any node(s) of any cluster, as Client takes them. options:
  // Client's (token, timeoutMs, ...), for every connection, and
  // refreshMs: how old the map may grow before a call reads it again
  // (1000; 0: only when a node answers Moved).
  constructor(urls, options = {}) {
    const { refreshMs, ...clientOptions } = options;
    this.options = clientOptions;
    this.refreshMs = refreshMs ?? REFRESH_MS;
    this.seed = new Client(urls, clientOptions);
    this.clients = new Map();
    this.waiters = new Map();
    this.map = null;
    this.readAt = 0;
    this.reading = null;
  }

  // Closes every connection: the tasks taken without detach are ready
  // again.
  close() {
    for (const c of [...this.clients.values(), ...this.waiters.values()]) {
      c.close();
    }
    this.clients.clear();
    this.waiters.clear();
    this.seed.close();
    return Promise.resolve();
  }

  // Cuts every connection (a take waiting ends with ConnectionLost); the
  // next call opens them again.
  drop() {
    for (const c of [this.seed, ...this.clients.values(),
      ...this.waiters.values()]) {
      c.drop();
    }
  }

  // ---- the map

  // The map as the Router knows it, read now (refresh false: only when
  // it is over refreshMs old).
  async clusterMap(refresh = true) {
    return this.fresh(refresh);
  }

  async fresh(force = false) {
    if (!force && this.map && (this.refreshMs === 0 ||
        performance.now() - this.readAt < this.refreshMs)) {
      return this.map;
    }
    if (!this.reading) {
      this.reading = this.seed.clusterMap().then((m) => {
        this.learn(m);
        return m;
      }).finally(() => { this.reading = null; });
    }
    try {
      return await this.reading;
    } catch (e) {
      if (this.map) return this.map; // an old map serves meanwhile
      throw e;
    }
  }

  learn(m) {
    // the longest prefix first: the first entry that starts a tube owns it
    m.byLength = [...m.entries].sort((a, b) => b.prefix.length -
      a.prefix.length);
    this.map = m;
    this.readAt = performance.now();
    // a cluster's new members join its open connections' URLs
    for (const pool of [this.clients, this.waiters]) {
      for (const [name, c] of pool) {
        const known = new Set(c.urls.map((u) => u.text));
        for (const url of m.clusters[name]?.members || []) {
          if (!known.has(url)) c.urls.push(...parseUrls(url));
        }
      }
    }
  }

  // The entry that owns tube, or null.
  static entry(m, tube) {
    return m.byLength.find((e) => tube.startsWith(e.prefix)) || null;
  }

  static owner(m, tube) {
    const e = Router.entry(m, tube);
    return e ? e.cluster : m.cluster;
  }

  // The state a call's attempts share (again): its deadline, the
  // Router's timeoutMs from now, and the next wait for a node behind the
  // map.
  retry() {
    const t = this.options.timeoutMs;
    const ms = t === undefined || t === null || t < 0 ? ROUTE_TIMEOUT_MS : t;
    return { until: performance.now() + ms, backoff: BEHIND_MS };
  }

  // After a Moved error e: whether to send the request again (st: retry's,
  // shared by a call's attempts), as libsluice's routing handle does. A
  // newer map, read again (moved), routes it again at once; a node behind
  // the Router's map (e names an older revision than the Router knows:
  // the new owner in a move's first moments, before its poll) or a map no
  // newer than the one the request went by sends it again after a backoff
  // (BEHIND_MS doubled up to BEHIND_MAX_MS). Never past the call's
  // deadline, but the first Moved is always followed.
  async again(e, st) {
    if (!(e instanceof E.Moved)) return false;
    const first = !st.refused;
    st.refused = true;
    if (!first && performance.now() >= st.until) return false;
    const known = this.map ? this.map.revision : 0;
    if (!(e.revision > 0 && e.revision < known)) {
      await this.moved(e, st.until);
      if (this.map.revision > known) return true; // a newer map: at once
    }
    const wait = Math.min(st.backoff, st.until - performance.now());
    if (wait > 0) await sleep(wait);
    st.backoff = Math.min(st.backoff * 2, BEHIND_MAX_MS);
    return true;
  }

  // After a Moved error: the map read again; while the node the Router
  // asks knows an older revision than the refusing one, read again (a
  // node reads the map every 200 ms), until `until` (performance.now()).
  async moved(e, until) {
    for (;;) {
      const m = await this.fresh(true);
      if (!e.revision || m.revision >= e.revision ||
          performance.now() >= until) {
        return;
      }
      await sleep(50);
    }
  }

  // The Client of cluster `name` (one the map names, or the given
  // node's own); pool: the calls' or the waiters'.
  client(name, pool = this.clients) {
    const have = pool.get(name);
    if (have) return have;
    const m = this.map;
    const members = m.clusters[name]?.members || [];
    if (!members.length && name === m.cluster && pool === this.clients) {
      return this.seed; // tubes no entry maps: the given node's cluster
    }
    let urls = members;
    if (!urls.length && name === m.cluster) {
      urls = this.seed.urls.map((u) => u.text);
    }
    if (!urls.length) {
      throw new E.ConnectionLost(`cluster ${name}: no member known (none ` +
        `in etcd under /sluice/${name}/members/)`);
    }
    const c = new Client(urls, this.options);
    pool.set(name, c);
    return c;
  }

  // The Client of the cluster that owns tube, for the calls the Router
  // does not route itself (peek, list, tube settings, ...).
  async clientFor(tube) {
    return this.client(Router.owner(await this.fresh(), tube));
  }

  // The Client of cluster `name`.
  async cluster(name) {
    await this.fresh();
    return this.client(name);
  }

  // call(client) on the cluster of tube, again after Moved as again says.
  async routed(tube, call) {
    const st = this.retry();
    for (;;) {
      const name = Router.owner(await this.fresh(), tube);
      try {
        return [name, await call(this.client(name))];
      } catch (e) {
        if (!await this.again(e, st)) throw e;
      }
    }
  }

  // Sets prefix ('' the default) to cluster, draining: clusters that
  // still hold tasks of these tubes; through the node the Router was
  // given (the admin's token with --auth). Returns the new revision.
  async mapSet(prefix, cluster, draining = []) {
    const rev = await this.seed.mapSet(prefix, cluster, draining);
    await this.fresh(true);
    return rev;
  }

  async mapDelete(prefix) {
    const rev = await this.seed.mapDelete(prefix);
    await this.fresh(true);
    return rev;
  }

  // ---- producing

  // Client.put, sent to the cluster that owns tube; the result names it.
  async put(tube, payload, o = {}) {
    const [name, r] = await this.routed(tube, (c) => c.put(tube, payload,
      o));
    return { ...r, cluster: name };
  }

  // Client.putBatch split by cluster: the items of each cluster in one
  // request, one commit there, the clusters asked at once; the whole is
  // not atomic across clusters. Results in the items' order, each with
  // its cluster; the items of a part that failed as a whole carry its
  // error (error, id 0). Rejects only when every part failed (with the
  // first one's error).
  async putBatch(list) {
    if (!Array.isArray(list) || !list.length) {
      throw new E.Invalid('putBatch: a list of at least one item');
    }
    const out = new Array(list.length);
    await this.putParts(list, list.map((_, i) => i), out, this.retry());
    const failed = out.filter((r) => r.whole);
    if (failed.length === out.length) throw failed[0].error;
    for (const r of out) delete r.whole;
    return out;
  }

  // Puts list[idx] by their owners, one request per cluster; a part
  // refused Moved goes again as again says (st: the call's retry(),
  // shared by its parts).
  async putParts(list, idx, out, st) {
    const m = await this.fresh();
    const parts = new Map();
    for (const i of idx) {
      const name = Router.owner(m, list[i].tube);
      if (!parts.has(name)) parts.set(name, []);
      parts.get(name).push(i);
    }
    await Promise.all([...parts].map(async ([name, part]) => {
      try {
        const res = await this.client(name).putBatch(part.map((i) =>
          list[i]));
        part.forEach((i, k) => { out[i] = { ...res[k], cluster: name }; });
      } catch (e) {
        if (await this.again(e, st)) {
          await this.putParts(list, part, out, st);
          return;
        }
        for (const i of part) {
          out[i] = { id: 0, created: false, notNewer: false,
            throttled: false, error: e, cluster: name, whole: true };
        }
      }
    }));
  }

  // ---- working

  // The tubes of a take by cluster: each tube's draining clusters first
  // (their old tasks are not starved; one whose members are not known is
  // left out), then its owner.
  static groups(m, tubes) {
    const g = new Map();
    const add = (name, tube) => {
      if (!g.has(name)) g.set(name, []);
      if (!g.get(name).includes(tube)) g.get(name).push(tube);
    };
    for (const tube of tubes) {
      const e = Router.entry(m, tube);
      for (const d of e ? e.draining : []) {
        if (m.clusters[d]?.members.length) add(d, tube);
      }
      add(e ? e.cluster : m.cluster, tube);
    }
    return g;
  }

  // Client.take over tubes of one cluster or several; each task's
  // cluster is set. Several: asked at once, then waited on at once (the
  // first tasks that come; no task twice).
  async take(tubes, o = {}) {
    tubes = Array.isArray(tubes) ? tubes : [tubes];
    const deadline = performance.now() + (o.waitMs ?? 0);
    const st = this.retry();
    for (;;) {
      const g = Router.groups(await this.fresh(), tubes);
      try {
        if (g.size === 1) {
          const [[name, ts]] = g;
          const left = Math.max(0, Math.round(deadline - performance.now()));
          return mark(await this.client(name).take(ts, { ...o,
            waitMs: left }), name);
        }
        for (const [name, ts] of g) {
          const got = await this.client(name).take(ts, { ...o, waitMs: 0 });
          if (got.length) return mark(got, name);
        }
        if (performance.now() >= deadline) return [];
        return await this.waitAll(g, o, deadline);
      } catch (e) {
        if (!await this.again(e, st)) throw e;
      }
    }
  }

  // Waits on every cluster of g at once; the first tasks win.
  waitAll(g, o, deadline) {
    return new Promise((resolve, reject) => {
      const set = { done: false, running: g.size, error: null };
      const ended = () => {
        if (--set.running > 0 || set.done) return;
        set.done = true;
        if (set.error) reject(set.error); else resolve([]);
      };
      for (const [name, ts] of g) {
        let c;
        try {
          c = this.client(name, this.waiters);
        } catch (e) {
          set.error = set.error || e;
          ended();
          continue;
        }
        (async () => {
          while (!set.done) {
            const left = Math.round(deadline - performance.now());
            if (left <= 0) break;
            let got;
            try {
              got = await c.take(ts, { ...o, waitMs: Math.min(left,
                SLICE_MS) });
            } catch (e) {
              set.error = set.error || e;
              break;
            }
            if (!got.length) continue;
            if (set.done) { // another cluster answered first: give back
              await Promise.all(got.map((t) => giveBack(c, t)));
              break;
            }
            set.done = true;
            resolve(mark(got, name));
            return;
          }
          ended();
        })();
      }
    });
  }

  // The Client a task came from.
  async of(task) {
    if (task.cluster) {
      await this.fresh();
      return this.client(task.cluster);
    }
    return this.clientFor(task.tube);
  }

  async ack(task, o = {}) {
    return (await this.of(task)).ack(task.id, task.lease, o);
  }

  async release(task, o = {}) {
    return (await this.of(task)).release(task.id, task.lease, o);
  }

  async fail(task, error = '', o = {}) {
    return (await this.of(task)).fail(task.id, task.lease, error, o);
  }

  async touch(task, o = {}) {
    return (await this.of(task)).touch(task.id, task.lease, o);
  }

  async bury(task, o = {}) {
    return (await this.of(task)).bury(task.id, task.lease, o);
  }

  // Client.ackBatch of tasks taken through the Router, one request per
  // cluster; results in the tasks' order, each with its cluster (a
  // cluster that did not answer: its error on each of its tasks).
  async ackBatch(tasks) {
    const parts = new Map();
    for (let i = 0; i < tasks.length; i++) {
      const c = await this.of(tasks[i]);
      if (!parts.has(c)) parts.set(c, []);
      parts.get(c).push(i);
    }
    const out = new Array(tasks.length);
    await Promise.all([...parts].map(async ([c, part]) => {
      const name = tasks[part[0]].cluster ?? null;
      try {
        const res = await c.ackBatch(part.map((i) => [tasks[i].id,
          tasks[i].lease]));
        part.forEach((i, k) => { out[i] = { ...res[k], cluster: name }; });
      } catch (e) {
        for (const i of part) out[i] = { id: tasks[i].id, error: e,
          cluster: name };
      }
    }));
    return out;
  }

  // ---- reading

  // The clusters the map names, and the given node's.
  names(m) {
    const names = new Set();
    for (const e of m.entries) {
      names.add(e.cluster);
      for (const d of e.draining) names.add(d);
    }
    if (m.cluster) names.add(m.cluster);
    return [...names].sort();
  }

  // Client.stats of every cluster, and their sum: ready, delayed, taken
  // and buried summed; clusters: {name: {stats, error}} (a cluster that
  // does not have the tube: stats null, error null).
  async stats(tube = '', o = {}) {
    const m = await this.fresh();
    const out = { ready: 0, delayed: 0, taken: 0, buried: 0, clusters: {} };
    await Promise.all(this.names(m).map(async (name) => {
      const one = { stats: null, error: null };
      out.clusters[name] = one;
      try {
        one.stats = await this.client(name).stats(tube, o);
        for (const k of ['ready', 'delayed', 'taken', 'buried']) {
          out[k] += one.stats.totals[k];
        }
      } catch (e) {
        if (!(tube && e instanceof E.NotFound)) one.error = e;
      }
    }));
    return out;
  }

  // ---- a task's end: wait and cancel

  // The cluster of task reference ref: a put's result or a task through
  // this Router (they name their cluster: ids are per cluster), or
  // { id, cluster }, or { id, tube } (the cluster the map gives tube).
  async refCluster(what, ref) {
    if (ref == null || typeof ref !== 'object' ||
        !Number.isSafeInteger(ref.id) || ref.id < 1) {
      throw new E.Invalid(`${what}: a task or a put's result of this ` +
        'Router, or { id, cluster }: ids are per cluster, so a bare id ' +
        `does not say where its task is (${JSON.stringify(ref)})`);
    }
    const m = await this.fresh();
    if (ref.cluster) return ref.cluster;
    if (ref.tube) return Router.owner(m, ref.tube);
    throw new E.Invalid(`${what}: task ${ref.id} names neither its ` +
      'cluster nor its tube');
  }

  // Client.wait on the task's cluster; the outcome names it. A wait that
  // waits (timeoutMs > 0) goes on a connection of its own, opened for it:
  // it holds up none of the Router's other calls.
  async wait(ref, timeoutMs = 0) {
    const name = await this.refCluster('wait', ref);
    if (!timeoutMs) {
      return { ...await this.client(name).wait(ref.id, 0), cluster: name };
    }
    const c = new Client(this.client(name).urls.map((u) => u.text),
      this.options);
    try {
      return { ...await c.wait(ref.id, timeoutMs), cluster: name };
    } finally {
      c.close();
    }
  }

  // Client.cancel on the task's cluster.
  async cancel(ref) {
    return this.client(await this.refCluster('cancel', ref)).cancel(ref.id);
  }

  // Client.cancelBatch, one request per cluster: { id, error, cluster }
  // in the references' order (a cluster that did not answer: its error on
  // each of its tasks).
  async cancelBatch(refs) {
    if (!Array.isArray(refs) || !refs.length) {
      throw new E.Invalid('cancelBatch: a list of at least one task');
    }
    const parts = new Map();
    for (let i = 0; i < refs.length; i++) {
      const name = await this.refCluster('cancelBatch', refs[i]);
      if (!parts.has(name)) parts.set(name, []);
      parts.get(name).push(i);
    }
    const out = new Array(refs.length);
    await Promise.all([...parts].map(async ([name, part]) => {
      try {
        const res = await this.client(name).cancelBatch(part.map((i) =>
          refs[i].id));
        part.forEach((i, k) => { out[i] = { ...res[k], cluster: name }; });
      } catch (e) {
        for (const i of part) out[i] = { id: refs[i].id, error: e,
          cluster: name };
      }
    }));
    return out;
  }

  // The batch of a task (Client.batchOf on its cluster), or null.
  async batchOf(ref) {
    return this.client(await this.refCluster('batchOf', ref))
      .batchOf(ref.id);
  }

  // ---- batches and schedules: by name, on the clusters that hold them

  // call(client, name) on every cluster at once: [[name, value]] of those
  // that answered, NotFound left out; a cluster that failed otherwise
  // fails the whole (a batch or schedule there would go unseen).
  async everywhere(call) {
    const m = await this.fresh();
    const got = await Promise.all(this.names(m).map(async (name) => {
      try {
        return [name, await call(this.client(name), name)];
      } catch (e) {
        if (e instanceof E.NotFound) return null;
        e.message = `cluster ${name}: ${e.message}`;
        throw e;
      }
    }));
    return got.filter(Boolean);
  }

  // A batch as its parts on several clusters show it: counts summed,
  // closed and ended when every part is, started at the first part's
  // start, ended at the last part's end; parts: {cluster: batch};
  // cluster: the one part's cluster, or null.
  static batchSum(name, parts) {
    const b = { name, total: 0, waiting: 0, ready: 0, delayed: 0, taken: 0,
      buried: 0, acked: 0, failed: 0, startedAt: 0, endedAt: 0,
      closed: true, ended: true, onSuccess: null, onComplete: null,
      cluster: parts.length === 1 ? parts[0][0] : null, parts: {} };
    for (const [cl, p] of parts) {
      b.parts[cl] = p;
      for (const k of ['total', 'waiting', 'ready', 'delayed', 'taken',
        'buried', 'acked', 'failed']) {
        b[k] += p[k];
      }
      if (p.startedAt && (!b.startedAt || p.startedAt < b.startedAt)) {
        b.startedAt = p.startedAt;
      }
      b.endedAt = Math.max(b.endedAt, p.endedAt);
      b.closed = b.closed && p.closed;
      b.ended = b.ended && p.ended;
      b.onSuccess = b.onSuccess || p.onSuccess;
      b.onComplete = b.onComplete || p.onComplete;
    }
    if (!b.ended) b.endedAt = 0;
    return b;
  }

  // The batch `name` as the clusters that hold a part of it show it
  // (Router.batchSum); NotFound when none does.
  async batchShow(name) {
    const parts = await this.everywhere((c) => c.batchShow(name));
    if (!parts.length) {
      throw new E.NotFound(`batch '${name}' is known to no cluster`);
    }
    return Router.batchSum(name, parts);
  }

  // Every cluster's batches (up to o.limit each), each with its cluster,
  // by name; total: summed.
  async batchList(o = {}) {
    const lists = await this.everywhere((c) => c.batchList(o));
    const out = { batches: [], total: 0 };
    for (const [cl, l] of lists) {
      out.total += l.total;
      for (const b of l.batches) out.batches.push({ ...b, cluster: cl });
    }
    out.batches.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 :
      a.cluster < b.cluster ? -1 : 1));
    return out;
  }

  // The clusters a batch call goes to: those that hold a part of the
  // batch; none: o.tube's owner (the tube its tasks will be put into),
  // else fallback's owner (batchSet: a callback's tube), else NotFound.
  async batchClusters(what, name, o, fallback) {
    const held = await this.everywhere((c) => c.batchShow(name));
    if (held.length) return held.map(([cl]) => cl);
    const m = await this.fresh();
    const tube = o.tube || fallback;
    if (tube) return [Router.owner(m, tube)];
    throw new E.NotFound(`${what}: batch '${name}' is known to no ` +
      'cluster: say the tube of its tasks ({ tube })');
  }

  static cbTube(cb) {
    return typeof cb === 'string' ? cb : cb && cb.tube;
  }

  // Client.batchSet on every cluster that holds a part of the batch (each
  // part fires its own callbacks, put into its own cluster); a batch not
  // made yet goes to o.tube's owner (the tube its tasks will be put
  // into), or to its callback tube's. The batch as batchShow sums it.
  async batchSet(name, o = {}) {
    const { tube, ...rest } = o;
    const names = await this.batchClusters('batchSet', name, o,
      Router.cbTube(o.onSuccess) || Router.cbTube(o.onComplete));
    return Router.batchSum(name, await Promise.all(names.map(async (cl) =>
      [cl, await this.client(cl).batchSet(name, rest)])));
  }

  // Client.batchClose and batchCancel on every part of the batch (o.tube:
  // where one not made yet goes).
  async batchClose(name, o = {}) {
    const names = await this.batchClusters('batchClose', name, o);
    return Router.batchSum(name, await Promise.all(names.map(async (cl) =>
      [cl, await this.client(cl).batchClose(name)])));
  }

  async batchCancel(name, o = {}) {
    const names = await this.batchClusters('batchCancel', name, o);
    return Router.batchSum(name, await Promise.all(names.map(async (cl) =>
      [cl, await this.client(cl).batchCancel(name)])));
  }

  // Client.scheduleSet on the cluster that owns the schedule's tube (it
  // fires there); the same name on any other cluster is deleted after,
  // so that one name is one schedule: setting a schedule again after its
  // tube moved moves it. The schedule names its cluster.
  async scheduleSet(name, tube, cron, payload = '', o = {}) {
    const [owner, s] = await this.routed(tube, (c) => c.scheduleSet(name,
      tube, cron, payload, o));
    await this.everywhere(async (c, cl) => (cl === owner ? null :
      c.scheduleDelete(name)));
    return { ...s, cluster: owner };
  }

  // Every cluster's schedules, each with its cluster, by name.
  async scheduleList() {
    const out = [];
    for (const [cl, l] of await this.everywhere((c) => c.scheduleList())) {
      for (const s of l) out.push({ ...s, cluster: cl });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 :
      a.cluster < b.cluster ? -1 : 1));
  }

  // call on every cluster that holds schedule name: the first one's
  // answer with its cluster; NotFound when none holds it.
  async onSchedule(what, name, call) {
    const got = await this.everywhere(async (c) => {
      await c.scheduleShow(name);
      return call(c);
    });
    if (!got.length) {
      throw new E.NotFound(`${what}: schedule '${name}' is known to no ` +
        'cluster');
    }
    const [cl, s] = got[0];
    return s === undefined ? undefined : { ...s, cluster: cl };
  }

  async scheduleShow(name) {
    return this.onSchedule('scheduleShow', name, (c) => c.scheduleShow(name));
  }

  async schedulePause(name) {
    return this.onSchedule('schedulePause', name,
      (c) => c.schedulePause(name));
  }

  async scheduleResume(name) {
    return this.onSchedule('scheduleResume', name,
      (c) => c.scheduleResume(name));
  }

  async scheduleDelete(name) {
    return this.onSchedule('scheduleDelete', name,
      (c) => c.scheduleDelete(name));
  }

  // ---- moving a tube

  // Moves tube to cluster target (docs/scaling.md, "Move a tube"; as
  // `sluice tube move`): the map marks it draining from its owner and new
  // puts go to the target; the source's ready, delayed and buried tasks
  // are copied in batches (ids mapped; keys, attempts, last errors, run
  // and creation times, priorities, ttrs, periods, groups; the tube's
  // settings and flow limits first), each copy one commit at the target
  // and its drop one at the source; taken tasks finish (or expire and are
  // copied) at the source; then the map names the target alone. Every
  // tube whose name tube starts and whose entry is tube's moves with it.
  // Run again after any interruption (a kill -9 of a node or of the
  // mover), it resumes. o: batch (tasks a round, 1-1000; 500), timeoutMs
  // (how long a node may stay unreachable: 60000), waitMs (how long to
  // wait for taken tasks to end; 0: as long as it takes), report(p)
  // (called after each round and at each stage of the key window,
  // awaited when it answers a promise). Resolves to the progress:
  // { tube, source, target, copied, dropped, batches, waits, revision,
  // done, keys, groups, stage }. Rejects
  // BadTube, Invalid (a cluster name), BadState (the tube moves to
  // another cluster already: finish that move first), TimedOut (run it
  // again), or a node's error. Needs the admin's token with --auth.
  async move(tube, target, o = {}) {
    return move(this, tube, target, o);
  }

  // Client.cluster of every cluster: {name: {cluster, error}}.
  async clusters() {
    const m = await this.fresh();
    const out = {};
    await Promise.all(this.names(m).map(async (name) => {
      out[name] = { cluster: null, error: null };
      try {
        out[name].cluster = await this.client(name).cluster();
      } catch (e) {
        out[name].error = e;
      }
    }));
    return out;
  }
}

module.exports = { Router };
