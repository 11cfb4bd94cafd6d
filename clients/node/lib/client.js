'use strict';
// The client: one connection (one session) to a sluice server, with every
// operation of docs/protocol.md as a method returning a promise.
//
// A tcp:// URL is a TCP connection carrying SP's framing (docs/protocol.md
// section 1.1): an 8-byte greeting each way (REQ v0 from the client, REP
// v0 from the server), then each message as a big-endian u64 length and a
// body that starts with a 4-byte big-endian request id (top bit set); a
// reply with another id answers a request given up on and is skipped.
// tls+tcp:// is the same inside TLS. The client connects on first use to
// the first of its URLs that answers, sends its token first on every
// connection it opens, and sends one request at a time (calls queue).
//
// Trying again (docs/client.md, "Several servers", "Lost connections"):
// a follower's NotLeader sends the request to the leader it names; a
// connection that could not be opened tries the next URL; a connection
// lost once the request left is retried only for the requests the
// protocol calls safe (reads, tube_set, puts whose tasks all have keys),
// and rejects with ConnectionLost for the others, which may have been
// executed. A change sent again that way and then refused (a keyed put
// answered NotLeader until the deadline, while the leader that died may
// have committed the first sending) rejects with ConnectionLost too,
// naming the refusal: the refusal speaks only for the second sending. A
// put refused MovingIn (its tube moving in from another cluster, its key
// not there yet: nothing was done) goes again after 10 ms, doubled up to
// 200 ms; a putBatch's items refused so go again by themselves, the
// others keeping their results (as libsluice does); when such a sending
// again fails as a whole (a lost connection, no leader, the deadline),
// those items alone carry its error and the call resolves with every
// item's result: the batch was answered. Every try happens
// within the call's deadline: timeoutMs (plus a take's wait) from the
// call's start.

const net = require('net');
const tls = require('tls');
const crypto = require('crypto');
const E = require('./errors');
const codec = require('./codec');
const flows = require('./flows');
const move = require('./move');

const HELLO_REQ = Buffer.from([0, 0x53, 0x50, 0, 0, 0x30, 0, 0]);
const HELLO_REP = Buffer.from([0, 0x53, 0x50, 0, 0, 0x31, 0, 0]);
const MAX_REPLY = 64 * 1024 * 1024 + 4096;
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const MOVING_FIRST = 10; // ms before a put refused MovingIn goes again
const MOVING_MAX = 200;
// The requests safe to send again that change something (the others are
// reads).
const CHANGES = new Set(['put', 'put_batch', 'tube_set', 'group',
  'sched_set', 'cancel', 'map_set', 'move_out', 'move_in', 'move_end']);

function parseUrls(urls) {
  if (urls == null) urls = process.env.SLUICE_URL || 'tcp://127.0.0.1:7711';
  if (typeof urls === 'string') urls = urls.split(',');
  const out = urls.map((u) => u.trim()).filter(Boolean).map((text) => {
    const m = /^(tcp|tls\+tcp):\/\/(\[[^\]]+\]|[^:/]+):(\d+)\/?$/.exec(text);
    if (!m) {
      throw new E.Invalid(`${text} is not a tcp://HOST:PORT or ` +
        'tls+tcp://HOST:PORT URL');
    }
    return { text, tls: m[1] === 'tls+tcp', host: m[2].replace(/^\[|\]$/g,
      ''), port: Number(m[3]) };
  });
  if (!out.length) throw new E.Invalid('no URL to connect to');
  return out;
}

function lost(url, what, sent, permanent = false) {
  const e = new E.ConnectionLost(`${url.text}: ${what}`);
  e.sent = sent;
  e.permanent = permanent;
  return e;
}

function diagnose(got, url) {
  if (got.equals(HELLO_REP)) return null;
  let what;
  if (got.subarray(0, 4).toString() === 'HTTP') {
    what = 'speaks HTTP, not the sluice protocol; is this the --http port?';
  } else if ((got[0] === 0x15 || got[0] === 0x16) && got[1] === 3) {
    what = 'speaks TLS: use a tls+tcp:// URL';
  } else {
    what = `does not speak the sluice protocol (it sent ${got.toString(
      'hex')})`;
  }
  const e = new E.Malformed(`${url.text} ${what}`);
  e.sent = false;
  return e;
}

// One connection: bytes in, frames out. The bytes received wait as a list
// of chunks, joined only for what a read takes, so that a large reply
// arriving in many chunks is copied once.
class Conn {
  constructor(socket, url) {
    this.socket = socket;
    this.url = url;
    this.chunks = [];
    this.size = 0;
    this.waiter = null;
    this.error = null;
    socket.on('data', (d) => { this.chunks.push(d); this.size += d.length;
      this.wake(); });
    socket.on('error', (e) => { this.error = this.error ||
      lost(url, e.message, true); this.wake(); });
    socket.on('close', () => { this.error = this.error || lost(url,
      this.size ? 'the server closed the connection in the middle of a ' +
      'reply' : 'the server closed the connection', true);
    this.wake(); });
  }

  wake() { if (this.waiter) { const w = this.waiter; this.waiter = null; w(); } }

  // The next n bytes, before the deadline (monotonic ms).
  async read(n, deadline, onTimeout) {
    while (this.size < n) {
      if (this.error) throw this.error;
      const left = deadline - performance.now();
      if (left <= 0) throw onTimeout();
      await new Promise((res) => {
        const t = setTimeout(res, left);
        this.waiter = () => { clearTimeout(t); res(); };
      });
    }
    const all = this.chunks.length === 1 ? this.chunks[0] :
      Buffer.concat(this.chunks, this.size);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.size -= n;
    return all.subarray(0, n);
  }

  close() { this.socket.destroy(); }
}

// The error to reject with for e: a server's refusal of a change sent
// again after a lost connection is ConnectionLost (the first sending may
// have been done), naming the refusal; any other stands.
function unknown(e, req, plan) {
  if (!plan.resent || !req.safe || !CHANGES.has(req.name) || !e.refusal) {
    return e;
  }
  const u = new E.ConnectionLost('connection lost before the reply, and ' +
    `${req.name} sent again: ${e.message}: it may or may not have been ` +
    'done');
  u.cause = e;
  return u;
}

// The pause before a put refused MovingIn goes again (10 ms, doubled up
// to 200 ms), or null when the call's time is up.
function moving(plan) {
  const d = plan.pause;
  if (performance.now() + d >= plan.deadline) return null;
  plan.pause = Math.min(MOVING_MAX, d * 2);
  return d;
}

// A reply's result: { done: true, result }, or { done: false, pause }
// when items of a put_batch were refused MovingIn and go again by
// themselves, plan.req being them from now on (the others keep their
// results).
function settle(plan, out) {
  const first = plan.first;
  if (plan.req.name !== 'put_batch' || !first.parts) {
    return { done: true, result: out };
  }
  if (plan.whole === null) plan.whole = out.slice();
  else plan.at.forEach((i, k) => { plan.whole[i] = out[k]; });
  const idx = [];
  plan.whole.forEach((x, i) => {
    if (x.error instanceof E.MovingIn) idx.push(i);
  });
  const d = idx.length ? moving(plan) : null;
  if (d === null) return { done: true, result: plan.whole };
  plan.at = idx;
  plan.req = codec.itemsOf(first, idx);
  return { done: false, pause: d };
}

// The result of a put_batch answered in part whose items sent again
// (refused MovingIn) failed as a whole with e (thrown by failed): those
// items carry e (ConnectionLost, TimedOut: unknown; a refusal: not done),
// the others their results. null when no reply came yet: e is the call's.
function partial(plan, e) {
  if (plan.whole === null) return null;
  plan.at.forEach((i) => {
    plan.whole[i] = { id: 0, created: false, notNewer: false, error: e,
      throttled: false };
  });
  return plan.whole;
}

class Client {
  // urls: "tcp://HOST:PORT", several as an array or separated by commas
  // (tls+tcp:// for TLS); default $SLUICE_URL, else tcp://127.0.0.1:7711.
  // options: token, timeoutMs (30000: a call, retries included, plus a
  // take's wait), connectTimeoutMs (2000: opening one connection), tls
  // (options of tls.connect: ca, cert, key, ...), maxReply (bytes).
  constructor(urls, options = {}) {
    this.urls = parseUrls(urls);
    this.cur = 0;
    this.token = options.token ?? null;
    this.timeoutMs = options.timeoutMs ?? 30000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 2000;
    this.tls = options.tls || {};
    this.maxReply = options.maxReply ?? MAX_REPLY;
    this.conn = null;
    this.rid = crypto.randomInt(0x7fffffff);
    this.queue = Promise.resolve();
  }

  get url() { return this.urls[this.cur].text; }

  // Ends the session: the tasks it took without detach are ready again.
  close() { this.drop(); return Promise.resolve(); }

  drop() {
    if (this.conn) this.conn.close();
    this.conn = null;
  }

  nextUrl() {
    this.drop();
    this.cur = (this.cur + 1) % this.urls.length;
  }

  pointAt(leader) {
    this.drop();
    const i = this.urls.findIndex((u) => u.text === leader);
    if (i >= 0) { this.cur = i; return; }
    this.urls.push(...parseUrls(leader));
    this.cur = this.urls.length - 1;
  }

  _do(req) {
    const run = this.queue.then(() => this.run(req));
    this.queue = run.catch(() => {});
    return run;
  }

  async run(req) {
    // pause: before a put refused MovingIn goes again; whole, at: a
    // put_batch's results so far, and where plan.req's items are in it
    const plan = { tries: 0, bad: new Set(), deadline: performance.now() +
      this.timeoutMs + req.waitMs, resent: false, req, first: req,
      pause: MOVING_FIRST, whole: null, at: null };
    for (;;) {
      let delay;
      try {
        if (!this.conn) await this.open(plan);
        const out = settle(plan, await this.exchange(plan.req, plan));
        if (out.done) return out.result;
        delay = out.pause; // items refused MovingIn go again
      } catch (e) {
        try {
          delay = this.failed(e, plan.req, plan);
        } catch (f) {
          const out = f instanceof E.SluiceError ? partial(plan, f) : null;
          if (out === null) throw f;
          return out;
        }
      }
      await sleep(delay);
    }
  }

  // After a failure: the delay before the next try (having pointed the
  // client at the URL to try), or throws.
  failed(e, req, plan) {
    plan.tries++;
    const sent = e.sent ?? true;
    if (e instanceof E.MovingIn && req.name === 'put') {
      const d = moving(plan);
      if (d === null) throw unknown(e, req, plan);
      return d;
    }
    if (e instanceof E.NotLeader) {
      if (e.leader) this.pointAt(e.leader); else this.nextUrl();
    } else if (!sent && (e instanceof E.ConnectionLost ||
        e instanceof E.Malformed)) {
      if (e instanceof E.Malformed || e.permanent) {
        plan.bad.add(this.url);
        if (plan.bad.size >= this.urls.length) throw e;
      }
      do this.nextUrl(); while (plan.bad.has(this.url));
    } else if (e instanceof E.ConnectionLost) {
      this.nextUrl();
      if (!req.safe) {
        throw new E.ConnectionLost(`${e.detail}; ${req.name} may have ` +
          'been executed: not sent again');
      }
      plan.resent = true;
    } else {
      throw unknown(e, req, plan);
    }
    const n = this.urls.length;
    const delay = plan.tries >= n ? Math.min(1000, 50 * 2 ** (plan.tries -
      n)) : 0;
    if (performance.now() + delay >= plan.deadline) {
      throw unknown(e, req, plan);
    }
    return delay;
  }

  async open(plan) {
    const url = this.urls[this.cur];
    const limit = Math.min(this.connectTimeoutMs, plan.deadline -
      performance.now());
    const deadline = performance.now() + limit;
    const timeout = () => lost(url, `no sluice greeting within ${limit} ms`,
      false);
    let socket;
    try {
      socket = await new Promise((res, rej) => {
        const s = url.tls ? tls.connect({ servername: net.isIP(url.host) ?
          undefined : url.host, ...this.tls, host: url.host,
        port: url.port }) : net.connect({ host: url.host, port: url.port });
        const t = setTimeout(() => { s.destroy(); rej(timeout()); }, limit);
        s.once(url.tls ? 'secureConnect' : 'connect', () => {
          clearTimeout(t); s.removeAllListeners('error'); res(s); });
        s.once('error', (e) => { clearTimeout(t); s.destroy(); rej(
          url.tls && !/ECONNREFUSED|EHOSTUNREACH|ENETUNREACH/.test(e.code) ?
            lost(url, `TLS handshake failed: ${e.code || e.message} (is ` +
              'it a TLS port, and the right CA?)', false, true) :
            lost(url, `cannot connect: ${e.message}`, false)); });
      });
      socket.setNoDelay(true);
      this.conn = new Conn(socket, url);
      socket.write(HELLO_REQ);
      const got = await this.conn.read(8, deadline, timeout);
      const bad = diagnose(got, url);
      if (bad) throw bad;
      if (this.token != null) {
        await this.exchange(codec.encode.auth(this.token), plan);
      }
    } catch (e) {
      this.drop();
      if (e instanceof E.ConnectionLost && /closed the connection/.test(
        e.message)) {
        throw lost(url, 'the server closed the connection during the ' +
          'greeting', false, true);
      }
      e.sent = false;
      throw e;
    }
  }

  async exchange(req, plan) {
    const conn = this.conn;
    this.rid = (this.rid + 1) & 0x7fffffff;
    const rid = (0x80000000 | this.rid) >>> 0;
    const msg = codec.message(req);
    const head = Buffer.alloc(12);
    head.writeBigUInt64BE(BigInt(msg.length + 4));
    head.writeUInt32BE(rid, 8);
    const timeout = () => {
      this.drop();
      const e = new E.TimedOut(`${conn.url.text}: no reply to ${req.name} ` +
        `within ${this.timeoutMs + req.waitMs} ms: its outcome is unknown`);
      return e;
    };
    try {
      conn.socket.write(Buffer.concat([head, msg]));
      for (;;) {
        const len = Number((await conn.read(8, plan.deadline, timeout))
          .readBigUInt64BE());
        if (len < 4) {
          throw new E.Malformed(`${conn.url.text} sent a frame of ${len} ` +
            'bytes, without its request id');
        }
        if (len > this.maxReply) {
          throw new E.Malformed(`${conn.url.text} sent a reply of ${len} ` +
            `bytes, over this client's limit of ${this.maxReply} (maxReply)`);
        }
        const body = await conn.read(len, plan.deadline, timeout);
        if (body.readUInt32BE(0) === rid) {
          const [flags, r] = codec.reply(req, body, 4);
          return req.decode(flags, r);
        }
      }
    } catch (e) {
      if (!(e instanceof E.SluiceError) || e instanceof E.Malformed ||
          e instanceof E.ConnectionLost || e instanceof E.TimedOut) {
        this.drop();
      }
      throw e;
    }
  }
}

const OPERATIONS = { ...codec.encode, ...flows.encode, ...move.encode };
for (const [name, encode] of Object.entries(OPERATIONS)) {
  Client.prototype[name] = function op(...args) {
    let req;
    try {
      req = encode(...args);
    } catch (e) {
      return Promise.reject(e);
    }
    return this._do(req);
  };
}

module.exports = { Client, parseUrls };
