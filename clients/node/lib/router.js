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
// done nowhere, so it is sent once more, to the owner (a node that read
// the map before the one the Router asks is waited for, up to 2 s, until
// it knows the revision the refusal named). A tube no entry matches goes
// to the cluster of the node the Router was given.
//
// One Client per cluster used, opened with the members the map names:
// each follows its cluster's failover as any Client does. A take over
// tubes of several clusters asks each at once without waiting, then
// waits on all of them at once, each on a connection of its own (the
// waiters: never the one acks go through) taking with waits of at most
// 200 ms until the take's wait is over; the first tasks that come are
// returned, the other waits end after their current slice, and a task
// one of them took meanwhile is released at once, back at its place
// (front): no task is returned twice. Task ids are per cluster: a task
// taken through a Router carries its cluster (task.cluster), and ack,
// release, fail, touch and bury take the task and go there. A batch put
// is split by cluster, each part one request (one commit on its cluster)
// sent at the same time as the others; stats are asked of every cluster
// and summed.

const E = require('./errors');
const { Client, parseUrls } = require('./client');

const REFRESH_MS = 1000;
const SLICE_MS = 200;
const CATCH_UP_MS = 2000;
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

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

  // After a Moved error: the map read again; while the node the Router
  // asks knows an older revision than the refusing one, read again, up
  // to CATCH_UP_MS (a node reads the map every 200 ms).
  async moved(e) {
    const until = performance.now() + CATCH_UP_MS;
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

  // call(client) on the cluster of tube, once more after Moved.
  async routed(tube, call) {
    for (let attempt = 0; ; attempt++) {
      const name = Router.owner(await this.fresh(), tube);
      try {
        return [name, await call(this.client(name))];
      } catch (e) {
        if (!(e instanceof E.Moved) || attempt > 0) throw e;
        await this.moved(e);
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
    await this.putParts(list, list.map((_, i) => i), out, true);
    const failed = out.filter((r) => r.whole);
    if (failed.length === out.length) throw failed[0].error;
    for (const r of out) delete r.whole;
    return out;
  }

  async putParts(list, idx, out, retry) {
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
        if (e instanceof E.Moved && retry) {
          await this.moved(e);
          await this.putParts(list, part, out, false);
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
    for (let attempt = 0; ; attempt++) {
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
        if (!(e instanceof E.Moved) || attempt > 0) throw e;
        await this.moved(e);
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
            if (set.done) { // another cluster answered first: put back
              await Promise.all(got.map((t) => c.release(t.id, t.lease,
                { front: true }).catch(() => {})));
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
