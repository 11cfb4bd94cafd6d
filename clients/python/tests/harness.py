"""What the Python client's tests share: a real sluiced of their own on
127.0.0.1 with a free port (and, as asked, --auth, TLS, --keep-done),
the sluice CLI run with --json against it, and bounded waits.

The tests are run by ctest (tests/CMakeLists.txt) as
`python3 TEST.py SLUICED SLUICE_CLI`; without them they exit 77
(skipped).
"""

import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
sys.path.insert(0, PACKAGE)

import sluice  # noqa: E402

SLUICED = os.environ.get("SLUICED")
# Waits for the servers are doubled under the sanitizers (make test-asan
# sets SLUICE_SANITIZED), as the C tests' are.
SCALE = 2 if os.environ.get("SLUICE_SANITIZED") else 1
SLUICE_CLI = os.environ.get("SLUICE_CLI")
# The servers' --segment-size unless a test names one (as the C tests'
# T_SRV_SEGMENT): sluiced's default of 64 MiB writes and syncs 128 MiB of
# zeros at every start.
SEGMENT = "4194304"


_next_port = None
# The ports this process reserved (see _reserve): open, locked files.
_reserved = []
PORT_DIR = "/tmp/sluice-test-ports"


def _reserve(port):
    """Whether `port` is now this process's for as long as it lives, as
    the C tests' t_free_port reserves it: its file in PORT_DIR, locked and
    left open, names this process; another test's lock, or a live pid of
    a Node.js test (which cannot lock) in the file, keeps it from us."""
    try:
        os.makedirs(PORT_DIR, exist_ok=True)
        f = open(os.path.join(PORT_DIR, str(port)), "a+")
    except OSError:
        return True  # no directory to reserve in: the bind check decides
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return False
    f.seek(0)
    try:
        owner = int(f.read().strip() or 0)
    except ValueError:
        owner = 0
    if owner > 0 and owner != os.getpid():
        try:
            os.kill(owner, 0)
            alive = True
        except PermissionError:
            alive = True
        except OSError:
            alive = False
        if alive:
            f.close()
            return False
    f.seek(0)
    f.truncate()
    f.write("%d\n" % os.getpid())
    f.flush()
    _reserved.append(f)
    return True


def free_port():
    """A port below the kernel's ephemeral range (32768 up), found free
    by binding it, as the C tests' t_free_port: an outgoing connection of
    a test running beside this one never takes such a port, and each
    process walks a block of its own (by pid) from a random start and
    reserves each port it hands out (_reserve), so two tests do not hand
    out the same port between the check and a server's bind, or while a
    server restarts."""
    global _next_port
    base, blocks, block = 20000, 120, 100
    if _next_port is None:
        _next_port = int.from_bytes(os.urandom(4), "little") % block
    for _ in range(block):
        port = base + (os.getpid() % blocks) * block + _next_port % block
        _next_port += 1
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        if _reserve(port):
            return port
    raise RuntimeError("no free port in this process's block")


def wait_for(pred, seconds=5.0, step=0.01):
    """pred() true within seconds (polled; bounded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def cli(url, *args, check=True):
    """The sluice CLI with --json against the server at url: its JSON
    (None for no output), or (exit code, stderr) when check is False."""
    env = dict(os.environ, SLUICE_URL=url)
    p = subprocess.run([SLUICE_CLI] + list(args) + ["--json"], env=env,
                       capture_output=True, timeout=30)
    if not check:
        return p.returncode, p.stderr.decode()
    if p.returncode != 0:
        raise AssertionError("sluice %s: exit %d: %s" % (
            " ".join(args), p.returncode, p.stderr.decode()))
    out = p.stdout.decode().strip()
    return json.loads(out) if out else None


class Server:
    """A sluiced in a temporary directory. tokens: {name: (role, tubes,
    token)} for --auth; tls: (cert, key) for a tls+tcp:// listener."""

    def __init__(self, args=(), tokens=None, tls=None):
        self.dir = tempfile.mkdtemp(prefix="sluice-py-")
        self.port = free_port()
        scheme = "tls+tcp" if tls else "tcp"
        self.url = "%s://127.0.0.1:%d" % (scheme, self.port)
        cmd = [SLUICED, "--data", os.path.join(self.dir, "data"),
               "--listen", self.url] + list(args)
        if "--segment-size" not in cmd:
            cmd += ["--segment-size", SEGMENT]
        if tokens:
            path = os.path.join(self.dir, "tokens")
            with open(path, "w") as f:
                for name, (role, tubes, token) in tokens.items():
                    f.write("%s %s %s %s\n" % (name, role, tubes, hashlib.sha256(
                        token.encode()).hexdigest()))
            os.chmod(path, 0o600)
            cmd += ["--auth", path]
        if tls:
            cmd += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        self.log = open(os.path.join(self.dir, "sluiced.log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        if not wait_for(self._listening, 10, 0.02):
            self.stop()
            raise RuntimeError("sluiced did not start: %s" % " ".join(cmd))

    def _listening(self):
        # Up once its own log says it serves (as the C tests' t_srv_start
        # for tls+ URLs): a port that accepts a connection is not enough,
        # since sluiced's start checks its ports by listening on them a
        # moment (preflight.c) before recovery and the real listen, and a
        # client that connected then is reset.
        if self.proc.poll() is not None:
            raise RuntimeError("sluiced exited with %d" % self.proc.returncode)
        with open(os.path.join(self.dir, "sluiced.log"), "rb") as f:
            return b"sluiced serving" in f.read()

    def client(self, **kw):
        kw.setdefault("timeout", 10)
        return sluice.Client(self.url, **kw)

    def cli(self, *args, **kw):
        return cli(self.url, *args, **kw)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ServerTest(unittest.TestCase):
    """A test case with a server of its own (ARGS: its flags) and a
    client on it."""

    ARGS = ()

    def setUp(self):
        self.srv = Server(self.ARGS)
        self.addCleanup(self.srv.stop)
        self.c = self.client()

    def client(self, **kw):
        c = self.srv.client(**kw)
        self.addCleanup(c.close)
        return c


def main():
    """Runs the unittest cases of the calling module, given the paths
    of sluiced and the CLI (exit 77 without them)."""
    global SLUICED, SLUICE_CLI
    if len(sys.argv) >= 3:
        SLUICED = os.path.abspath(sys.argv.pop(1))
        SLUICE_CLI = os.path.abspath(sys.argv.pop(1))
    if not SLUICED or not os.access(SLUICED, os.X_OK) or not SLUICE_CLI:
        print("usage: %s SLUICED SLUICE_CLI (skipped)" % sys.argv[0],
              file=sys.stderr)
        sys.exit(77)
    unittest.main(verbosity=2, module="__main__")
