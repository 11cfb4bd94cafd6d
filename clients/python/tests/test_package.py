"""The Python package as a user gets it: `pip install ./clients/python`
in a fresh virtual environment with no index to download from (the
package's own build backend needs none), then the examples of its
README.md run as written against a real sluiced, and the Python worker
of the top README.md's "A first task". The version is the server's.

The README's examples follow tests/integration/test_docs.c's rules: a
```python file=NAME block is written to NAME; a ```sh block of "$ "
lines is a transcript, each command followed by what it prints (standard
output and error together), matched loosely: a run of digits matches any
run of digits, "..." any text within a line, and a line that is only
"..." any number of lines. Commands run in order in a directory of their
own holding `clients` (the source's), with the environment's bin/ and
the build's first on $PATH and $SLUICE_URL naming the server.

Run by ctest (python_package): test_package.py SLUICED SLUICE_CLI.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import unittest

import harness
from harness import PACKAGE, Server, main, sluice, wait_for

SOURCE = os.path.dirname(os.path.dirname(PACKAGE))


def blocks(path):
    """(info string, text) of each fenced block of a markdown file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^```([^\n]*)\n(.*?)^```$", text, re.M | re.S)


def transcript(text):
    """(command, expected lines) of a ```sh block's "$ " lines."""
    out = []
    for line in text.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def match_line(want, got):
    pattern = "".join(
        r"\d+" if re.fullmatch(r"\d+", part) else ".*" if part == "..."
        else re.escape(part) for part in re.split(r"(\d+|\.\.\.)", want))
    return re.fullmatch(pattern, got.rstrip()) is not None


def match_lines(want, got):
    if not want:
        return not got
    if want[0] == "...":
        return any(match_lines(want[1:], got[i:])
                   for i in range(len(got) + 1))
    return bool(got) and match_line(want[0], got[0]) and \
        match_lines(want[1:], got[1:])


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sluice-py-pkg-")
        cls.venv = os.path.join(cls.dir, "venv")
        p = subprocess.run([sys.executable, "-m", "venv", cls.venv],
                           capture_output=True, timeout=120)
        if p.returncode != 0:
            raise AssertionError("python3 -m venv failed (Debian: the "
                                 "python3-venv package): %s"
                                 % p.stderr.decode())
        cls.srv = Server(["--keep-done", "1h"])
        cls.env = dict(os.environ, SLUICE_URL=cls.srv.url,
                       PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                       PATH="%s/bin:%s:%s" % (
                           cls.venv, os.path.dirname(harness.SLUICE_CLI),
                           os.environ.get("PATH", "/usr/bin:/bin")))
        cls.env.pop("PYTHONPATH", None)
        cls.env.pop("VIRTUAL_ENV", None)
        os.symlink(os.path.join(SOURCE, "clients"),
                   os.path.join(cls.dir, "clients"))

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        subprocess.run(["rm", "-rf", cls.dir], timeout=60)

    def run_doc(self, path):
        """Writes the file blocks, runs the transcripts; returns how many
        commands ran."""
        ran = 0
        for info, text in blocks(path):
            words = info.split()
            files = [w[5:] for w in words if w.startswith("file=")]
            if files:
                with open(os.path.join(self.dir, files[0]), "w") as f:
                    f.write(text)
            elif words[:1] == ["sh"] and text.startswith("$ "):
                for cmd, want in transcript(text):
                    p = subprocess.run(["bash", "-c", cmd], cwd=self.dir,
                                       env=self.env, timeout=120,
                                       stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT)
                    got = p.stdout.decode().splitlines()
                    self.assertEqual(p.returncode, 0, "%s: `%s` exited %d:\n"
                                     "%s" % (path, cmd, p.returncode,
                                             "\n".join(got)))
                    self.assertTrue(match_lines(want, got),
                                    "%s: `%s` printed\n%s\n--- where the "
                                    "document says\n%s" % (
                                        path, cmd, "\n".join(got),
                                        "\n".join(want)))
                    ran += 1
        return ran

    def test_1_readme_examples_run_as_written(self):
        ran = self.run_doc(os.path.join(PACKAGE, "README.md"))
        self.assertGreaterEqual(ran, 4)
        # what the examples did, seen by the client installed
        check = ("import sluice; c = sluice.Client(); "
                 "print([(t.id, str(t.state), t.result, t.last_error) "
                 "for t in c.list('emails').tasks])")
        p = subprocess.run(["python3", "-c", check], env=self.env,
                           cwd=self.dir, capture_output=True, timeout=60)
        self.assertEqual(p.stderr, b"")
        self.assertEqual(p.stdout.decode().strip(), str([
            (1, "done", "sent", None), (2, "done", "sent", None),
            (3, "buried", None, "no mailbox")]))
        p = subprocess.run(["python3", "-c", "import sluice; print("
                            "sluice.__file__)"], env=self.env,
                           cwd="/", capture_output=True, timeout=60)
        self.assertTrue(p.stdout.decode().startswith(self.venv),
                        "not installed in the environment: %s" % p.stdout)

    def test_2_the_first_task_in_python(self):
        code = [text for info, text in blocks(os.path.join(
            SOURCE, "README.md")) if info.strip() == "python file=tasks.py"]
        self.assertEqual(len(code), 1, "README.md: no ```python "
                         "file=tasks.py block")
        with open(os.path.join(self.dir, "tasks.py"), "w") as f:
            f.write(code[0])
        c = self.srv.client()
        self.addCleanup(c.close)
        tid = c.put("emails", "send welcome to ada@example.com").id
        p = subprocess.Popen(["python3", "-m", "sluice", "worker",
                              "tasks:worker"], cwd=self.dir, env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            done = wait_for(lambda: c.peek(tid).state == sluice.State.DONE,
                            20)
        finally:
            p.send_signal(signal.SIGTERM)
            out, _ = p.communicate(timeout=30)
        self.assertTrue(done, out.decode())
        self.assertEqual(p.returncode, 0, out.decode())
        self.assertEqual(out.decode(),
                         "sending: send welcome to ada@example.com\n")

    def test_3_versioned_with_the_server(self):
        with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
            server = re.search(r"project\(sluice VERSION ([0-9.]+)",
                               f.read()).group(1)
        with open(os.path.join(PACKAGE, "pyproject.toml")) as f:
            package = re.search(r'^version = "([^"]+)"', f.read(),
                                re.M).group(1)
        self.assertEqual((package, sluice.__version__), (server, server))


if __name__ == "__main__":
    main()
