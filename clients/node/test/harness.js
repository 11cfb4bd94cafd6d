'use strict';
// What the Node client's tests share: a real sluiced of their own on
// 127.0.0.1 with a free port, the sluice CLI with --json against it, and
// bounded waits. ctest runs `node --test` with $SLUICED and $SLUICE_CLI.

const { spawn, execFileSync, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');

const SLUICED = process.env.SLUICED;
const SLUICE_CLI = process.env.SLUICE_CLI;
// The servers' --segment-size unless a test names one (as the C tests'
// T_SRV_SEGMENT): sluiced's default of 64 MiB writes and syncs 128 MiB of
// zeros at every start.
const SEGMENT = '4194304';

// A port below the kernel's ephemeral range (32768 up), found free by
// binding it, as the C tests' t_free_port: an outgoing connection of a test
// running beside this one never takes such a port, and each process walks
// a block of its own (by pid) from a random start and reserves each port
// it hands out (reservePort), so two tests do not hand out the same port
// between the check and a server's bind, or while a server restarts.
const PORT_BASE = 20000;
const PORT_BLOCKS = 120;
const PORT_BLOCK = 100;
let nextPort = crypto.randomInt(PORT_BLOCK);

function bindable(port) {
  return new Promise((res) => {
    const s = net.createServer();
    s.once('error', () => res(false));
    s.listen(port, '127.0.0.1', () => s.close(() => res(true)));
  });
}

// The C and Python tests reserve each port they hand out with a locked
// file in PORT_DIR holding their pid (tests/lib/t_srv.c); Node.js cannot
// lock, so a port is reserved here by its file naming a live process:
// ours, written when the file is free or names a process that is gone.
const PORT_DIR = '/tmp/sluice-test-ports';

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

function reservePort(port) {
  const file = path.join(PORT_DIR, String(port));
  try {
    fs.mkdirSync(PORT_DIR, { recursive: true });
    let owner = 0;
    try {
      owner = parseInt(fs.readFileSync(file, 'utf8'), 10) || 0;
    } catch (e) {
      if (e.code !== 'ENOENT') throw e;
    }
    if (owner > 0 && owner !== process.pid && pidAlive(owner)) return false;
    fs.writeFileSync(file, `${process.pid}\n`);
  } catch (e) {
    // no directory to reserve in: the bind check alone decides
  }
  return true;
}

async function freePort() {
  for (let i = 0; i < PORT_BLOCK; i++) {
    const port = PORT_BASE + (process.pid % PORT_BLOCKS) * PORT_BLOCK +
      (nextPort++ % PORT_BLOCK);
    if (await bindable(port) && reservePort(port)) return port;
  }
  throw new Error('no free port in this process\'s block');
}

const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// pred() (sync or async) true within ms, polled; bounded.
async function waitFor(pred, ms = 5000, step = 20) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return true;
    await sleep(step);
  }
  return Boolean(await pred());
}

// A sluiced in a temporary directory. opts.args: more flags; opts.tokens:
// {name: [role, tubes, token]} for --auth; opts.tls: [cert, key].
async function startServer(opts = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-'));
  const port = await freePort();
  const url = `${opts.tls ? 'tls+tcp' : 'tcp'}://127.0.0.1:${port}`;
  const args = ['--data', path.join(dir, 'data'), '--listen', url,
    ...(opts.args || [])];
  if (!args.includes('--segment-size')) args.push('--segment-size', SEGMENT);
  if (opts.tokens) {
    const file = path.join(dir, 'tokens');
    fs.writeFileSync(file, Object.entries(opts.tokens).map(([n, [r, t, k]]) =>
      `${n} ${r} ${t} ${crypto.createHash('sha256').update(k).digest('hex')}\n`)
      .join(''), { mode: 0o600 });
    args.push('--auth', file);
  }
  if (opts.tls) args.push('--tls-cert', opts.tls[0], '--tls-key', opts.tls[1]);
  const logPath = path.join(dir, 'sluiced.log');
  const log = fs.openSync(logPath, 'w');
  const proc = spawn(SLUICED, args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  // Up once its own log says it serves (as the C tests' t_srv_start for
  // tls+ URLs): a port that accepts a connection is not enough, since
  // sluiced's start checks its ports by listening on them a moment
  // (preflight.c) before recovery and the real listen, and a client that
  // connected then is reset (a TLS client sees "TLS handshake failed:
  // ECONNRESET"). Or anything else that took the port meanwhile.
  const up = await waitFor(() => proc.exitCode === null &&
    proc.signalCode === null &&
    fs.readFileSync(logPath, 'utf8').includes('sluiced serving'), 10000);
  if (!up) {
    if (proc.exitCode === null) proc.kill('SIGKILL');
    throw new Error(`sluiced did not start: ${args.join(' ')}\n` +
      fs.readFileSync(logPath, 'utf8'));
  }
  return {
    url, port, dir, proc,
    cli: (...a) => cli(url, ...a),
    async stop() {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await waitFor(() => proc.exitCode !== null, 10000);
        if (proc.exitCode === null) proc.kill('SIGKILL');
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The CLI with --json: its JSON, or {code, stderr} when it fails.
function cli(url, ...args) {
  const p = spawnSync(SLUICE_CLI, [...args, '--json'], { env: { ...process.env,
    SLUICE_URL: url }, timeout: 30000 });
  if (p.status !== 0) return { code: p.status, stderr: p.stderr.toString() };
  const out = p.stdout.toString().trim();
  return out ? JSON.parse(out) : null;
}

module.exports = { startServer, cli, freePort, waitFor, sleep, SLUICED,
  SLUICE_CLI, SEGMENT, execFileSync };
