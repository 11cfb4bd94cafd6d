'use strict';
// The Node package as a user gets it: `npm install ./clients/node`
// offline into a project of its own, then the examples of its README.md
// run as written against a real sluiced, with the rules of
// tests/integration/test_docs.c: a ```js file=NAME block is written to
// NAME; a ```sh block of "$ " lines is a transcript, each command followed
// by what it prints (standard output and error together), matched
// loosely: a run of digits matches any run of digits, "..." any text
// within a line, a line that is only "..." any number of lines. The
// version is the server's.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { startServer, SLUICE_CLI } = require('./harness');

const PACKAGE = path.join(__dirname, '..');
const SOURCE = path.join(PACKAGE, '..', '..');

function matchLine(want, got) {
  const re = want.split(/(\d+|\.\.\.)/).map((p) => (/^\d+$/.test(p) ? '\\d+' :
    p === '...' ? '.*' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${re}$`).test(got.trimEnd());
}

function matchLines(want, got) {
  if (!want.length) return !got.length;
  if (want[0] === '...') {
    for (let i = 0; i <= got.length; i++) {
      if (matchLines(want.slice(1), got.slice(i))) return true;
    }
    return false;
  }
  return got.length > 0 && matchLine(want[0], got[0]) &&
    matchLines(want.slice(1), got.slice(1));
}

test('the README examples run as written', async (t) => {
  const srv = await startServer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-pkg-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true });
    return srv.stop(); });
  fs.symlinkSync(path.join(SOURCE, 'clients'), path.join(dir, 'clients'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
  const env = { ...process.env, SLUICE_URL: srv.url, PATH:
    `${path.dirname(SLUICE_CLI)}:${path.dirname(process.execPath)}:` +
    `${process.env.PATH}`, npm_config_cache: path.join(dir, '.npm') };
  const text = fs.readFileSync(path.join(PACKAGE, 'README.md'), 'utf8');
  let ran = 0;
  for (const [, info, body] of text.matchAll(/^```([^\n]*)\n(.*?)^```$/gms)) {
    const file = /file=(\S+)/.exec(info);
    if (file) {
      fs.writeFileSync(path.join(dir, file[1]), body);
      continue;
    }
    if (!info.startsWith('sh') || !body.startsWith('$ ')) continue;
    const cmds = [];
    for (const line of body.split('\n').slice(0, -1)) {
      if (line.startsWith('$ ')) cmds.push([line.slice(2), []]);
      else cmds[cmds.length - 1][1].push(line);
    }
    for (const [cmd, want] of cmds) {
      const p = spawnSync('bash', ['-c', `(${cmd}) 2>&1`], { cwd: dir, env,
        timeout: 120000 });
      const got = p.stdout.toString().split('\n');
      if (got[got.length - 1] === '') got.pop();
      assert.strictEqual(p.status, 0, `\`${cmd}\` exited ${p.status}:\n` +
        got.join('\n'));
      assert.ok(matchLines(want, got), `\`${cmd}\` printed\n${got.join(
        '\n')}\n--- where the README says\n${want.join('\n')}`);
      ran++;
    }
  }
  assert.ok(ran >= 4, `${ran} commands`);
  // installed in the project, not found through the source tree
  assert.ok(fs.existsSync(path.join(dir, 'node_modules', 'sluice-client',
    'index.d.ts')));
});

test('versioned with the server', () => {
  const cmake = fs.readFileSync(path.join(SOURCE, 'CMakeLists.txt'), 'utf8');
  const server = /project\(sluice VERSION ([0-9.]+)/.exec(cmake)[1];
  assert.strictEqual(require('..').version, server);
});
