"""The README's snippets run as pasted, twice in a row, and leave nothing behind.

Every ```` ```python ```` block of README.md (and of docs/quickstart.md, which today only
includes the README) runs as a subprocess, in document order, twice, each time in a
fresh empty working directory, against the server the README tells users to start: the
``python -m mysqlc.server ...`` line of its "Connect" section, started here with the
same options except two, which are patched in the snippets too: a free TCP port instead
of 3307 (several checkouts may run this test at once) and a temporary ``--tls-dir``
instead of ``~/.mysqlc-tls``.  A block passes when it exits 0 and neither its working
directory nor the repository has a new file afterwards.  Blocks may depend on earlier
ones (the pandas block reads the table of "Data work"), as the README says.

Packages the snippets import are test requirements (tests/requirements.txt).
"""

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md", os.path.join("docs", "quickstart.md")]
IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1")
DOC_PORT = "3307"
DOC_TLS_DIR = "~/.mysqlc-tls"
#: directories whose contents are not the repository's files (caches, builds, venvs)
SKIP_DIRS = {".git", ".venv", ".venv-matrix", "__pycache__", ".pytest_cache",
             ".mypy_cache", "build", "dist", "wheelhouse", "_build", "out", ".hypothesis"}

pytestmark = pytest.mark.server


def _read(name):
    path = os.path.join(ROOT, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def python_blocks():
    """(id, code) of every ```python block of DOCS, in order."""
    out = []
    for name in DOCS:
        text = _read(name)
        if text is None:
            continue
        for m in re.finditer(r"^```python\n(.*?)^```\s*$", text, re.M | re.S):
            line = text.count("\n", 0, m.start()) + 1
            code = m.group(1)
            # "-asyncio": the id that tools/sanitize-test.sh's -k "not aio and not async"
            # leaves out with the other greenlet-based tests (greenlet cannot run under ASan)
            tag = "-asyncio" if re.search(r"^import asyncio|mysqlc\.aio", code, re.M) else ""
            out.append(("%s:%d%s" % (name, line, tag), code))
    return out


def documented_server_args():
    """The options of the README's ``python -m mysqlc.server`` line."""
    text = _read("README.md") or ""
    found = re.findall(r"^python -m mysqlc\.server( .*)?$", text, re.M)
    assert len(found) == 1, "the README should show one 'python -m mysqlc.server' line"
    return shlex.split(found[0])


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _repo_files():
    files = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for f in filenames:
            if not f.endswith((".pyc", ".so")):
                files.add(os.path.relpath(os.path.join(dirpath, f), ROOT))
    return files


class ReadmeServer:
    """``python -m mysqlc.server`` with the README's options, port and TLS dir patched."""

    def __init__(self, workdir):
        args = documented_server_args()
        assert "--port" in args and args[args.index("--port") + 1] == DOC_PORT, args
        assert "--tls-dir" in args and args[args.index("--tls-dir") + 1] == DOC_TLS_DIR, args
        self.port = _free_port()
        self.tls_dir = os.path.join(workdir, "tls")
        args[args.index("--port") + 1] = str(self.port)
        args[args.index("--tls-dir") + 1] = self.tls_dir
        self.lines = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mysqlc.server"] + args, cwd=workdir,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True)
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("Press Ctrl-C to stop."):
                self.ready.set()
        self.ready.set()

    def wait(self, timeout):
        self.ready.wait(timeout)
        return self.proc.poll() is None and self.ready.is_set()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)   # the README's way to stop it
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


@pytest.fixture(scope="module")
def readme_server(tmp_path_factory):
    workdir = str(tmp_path_factory.mktemp("readme-server"))
    srv = None
    for attempt in range(2):   # the free port can be taken between the probe and the start
        srv = ReadmeServer(workdir)
        if srv.wait(120):
            break
        srv.stop()
    else:
        output = "".join(srv.lines)
        if "error:" in output and not IN_CI and "mariadbd" in output.lower():
            pytest.skip("the README's server did not start: %s" % output.strip())
        pytest.fail("the README's server did not start:\n%s" % output, pytrace=False)
    try:
        yield srv
    finally:
        srv.stop()


def _patched(code, srv):
    code = re.sub(r"\b%s\b" % DOC_PORT, str(srv.port), code)
    return code.replace(DOC_TLS_DIR, srv.tls_dir)


BLOCKS = python_blocks()


def test_the_readme_has_snippets():
    assert len(BLOCKS) >= 10, [b for b, _ in BLOCKS]


@pytest.mark.parametrize("block", [b for b, _ in BLOCKS])
def test_snippet_runs_twice_and_leaves_nothing(block, readme_server, tmp_path):
    code = dict(BLOCKS)[block]
    code = _patched(code, readme_server)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("MYSQLC_TEST_DSN", None)   # the snippets name their server themselves
    before = _repo_files()
    for run in (1, 2):
        workdir = tmp_path / ("run%d" % run)
        workdir.mkdir()
        t0 = time.monotonic()
        out = subprocess.run([sys.executable, "-"], input=code, cwd=str(workdir), env=env,
                             capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, "%s, run %d (%.1f s):\n%s\n%s" % (
            block, run, time.monotonic() - t0, out.stdout[-3000:], out.stderr[-5000:])
        left = sorted(os.listdir(str(workdir)))
        assert not left, "%s, run %d left %s in its working directory" % (block, run, left)
    new = sorted(_repo_files() - before)
    assert not new, "%s left %s in the repository" % (block, new)
