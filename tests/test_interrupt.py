"""Ctrl-C (SIGINT) while a large result is arriving.

The C core checks for signals at the packet layer (src/conn.c: every 1024 packets taken
from the receive buffer and before every read from the socket), not only when a syscall
is interrupted, so KeyboardInterrupt comes within milliseconds of decoding on every path
that reads packets.  After the interrupt the connection is closed (the rest of the
result cannot be drained in a bounded time, a half-read response cannot be resumed):
``conn.open`` is False, later use raises OperationalError 2006 (libmysqlclient's answer
after a lost connection), also after ``close()`` (as mysqlclient).

Each case runs in a subprocess that reads a few million rows of MariaDB's SEQUENCE
engine (``seq_1_to_6000000``, which the server streams at once); the test sends SIGINT
at several points after the read has started and measures, with the shared
CLOCK_MONOTONIC, how long the subprocess took to get KeyboardInterrupt.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS_DIR)
ROWS = 6_000_000
# seconds from SIGINT to KeyboardInterrupt, the bound; under ASan/UBSan
# (tools/sanitize-test.sh sets MYSQLC_SANITIZED) freeing the rows read so far is several
# times slower, and the run is about memory safety, not speed: read_sql's 30M-row scan
# took 2.9-3.5 s there with another job on the 2 cores (the same before and after the
# issue-22 changes, 2026-12-02), and 5.2 s on a slower day with the machine otherwise
# idle (read_sql, SIGINT after 0.3 s; 2026-12-02 20:55), so 10 s: the bound that
# matters, 0.5 s, holds in the plain run
BOUND = 10.0 if os.environ.get("MYSQLC_SANITIZED") else 0.5

SCRIPT = textwrap.dedent(r"""
    import json, signal, sys, time
    # Python keeps SIGINT ignored when it starts with it ignored (a runner started in the
    # background of a shell without job control): install the KeyboardInterrupt handler
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import mysqlc
    from mysqlc.cursors import DictCursor, SSCursor
    kw, mode, rows = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    conn = mysqlc.connect(**kw)
    sql = "SELECT seq, seq * 2, CONCAT('row ', seq) FROM seq_1_to_%d" % rows
    if mode in ("read_sql", "arrow_text"):   # fast decoders: more, narrower rows
        sql = "SELECT seq, seq * 2 FROM seq_1_to_%d" % rows
        import pyarrow                       # imported before the clock starts
    if mode in ("executemany", "load_data"):
        conn.cursor().execute("CREATE TEMPORARY TABLE t (a INT, b VARCHAR(40))")
    payload = None
    if mode == "load_data":
        payload = b"".join(b"%d\trow number %d\n" % (i, i) for i in range(rows))
    many = [(i, "row number %d" % i) for i in range(rows)] if mode == "executemany" else None
    print("READY", flush=True)
    try:
        if mode == "fetchall":
            cur = conn.cursor()
            cur.execute(sql)
            cur.fetchall()
        elif mode == "dict":
            cur = conn.cursor(DictCursor)
            cur.execute(sql)
            cur.fetchall()
        elif mode == "prepared":
            cur = conn.cursor(prepared=True)
            cur.execute(sql)
            cur.fetchall()
        elif mode == "ss_fetchall":
            cur = conn.cursor(SSCursor)
            cur.execute(sql)
            cur.fetchall()
        elif mode == "ss_iter":
            cur = conn.cursor(SSCursor)
            cur.execute(sql)
            for row in cur:
                pass
        elif mode == "ss_prepared":      # server-side cursor, COM_STMT_FETCH batches
            cur = conn.cursor(SSCursor, prepared=True)
            cur.arraysize = 100000
            cur.execute(sql)
            cur.fetchall()
        elif mode == "read_sql":        # columnar decoder, binary protocol, GIL released
            mysqlc.read_sql(conn, sql)
        elif mode == "arrow_text":       # columnar decoder on text rows
            cur = conn.cursor(SSCursor)
            cur.execute(sql)
            cur.fetch_arrow_table()
        elif mode == "executemany":
            conn.cursor().executemany("INSERT INTO t VALUES (%s, %s)", many)
        elif mode == "load_data":
            conn.cursor().execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE t", infile=payload)
        else:
            raise SystemExit("unknown mode " + mode)
        print("NOT-INTERRUPTED", flush=True)
    except KeyboardInterrupt:
        print("KI %.6f" % time.monotonic(), flush=True)
    except BaseException as exc:
        print("OTHER %s %s" % (type(exc).__name__, exc), flush=True)
    print("OPEN %s" % conn.open, flush=True)
    try:
        conn.cursor().execute("SELECT 1")
        print("REUSE ok", flush=True)
    except mysqlc.Error as exc:
        print("REUSE %s %s" % (type(exc).__name__, exc.args[0]), flush=True)
    conn.close()
    try:
        conn.cursor().execute("SELECT 1")
        print("CLOSED ok", flush=True)
    except mysqlc.Error as exc:
        print("CLOSED %s %s" % (type(exc).__name__, exc.args[0]), flush=True)
    fresh = mysqlc.connect(**kw)
    fcur = fresh.cursor()
    fcur.execute("SELECT 6 * 7")
    print("FRESH %s" % fcur.fetchone()[0], flush=True)
    fresh.close()
    print("DONE", flush=True)
""")


def _interrupt(kw, mode, delay, rows=ROWS, timeout=120):
    """Run SCRIPT in `mode`; SIGINT `delay` s after READY.  Returns (lines, latency s,
    return code); latency is None when no KI line came.  A run whose only fault is a
    latency over BOUND is made once more, and the second run's outcome counts: with
    other processes on the 2 cores the child may simply not be scheduled in time (0.88 s
    seen once under a parallel build); a slow interrupt path misses the bound twice."""
    lines, latency, rc = _interrupt_once(kw, mode, delay, rows, timeout)
    if rc == 0 and latency is not None and latency >= BOUND:
        first = "first run: KeyboardInterrupt %.3f s after SIGINT" % latency
        lines, latency, rc = _interrupt_once(kw, mode, delay, rows, timeout)
        lines.insert(0, first)
    return lines, latency, rc


def _interrupt_once(kw, mode, delay, rows, timeout):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(kw), mode, str(rows)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        line = proc.stdout.readline()
        while line and not line.startswith("READY"):
            lines.append(line.rstrip("\n"))
            line = proc.stdout.readline()
        assert line.startswith("READY"), "subprocess did not get ready:\n" + "\n".join(lines)
        time.sleep(delay)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=timeout)
        lines += out.splitlines()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    latency = None
    for ln in lines:
        if ln.startswith("KI "):
            latency = float(ln.split()[1]) - sent
    return lines, latency, proc.returncode


def _marker(lines, name):
    for line in lines:
        if line == name or line.startswith(name + " "):
            return line[len(name):].strip()
    raise AssertionError("no %s line in:\n%s" % (name, "\n".join(lines)))


def _check(lines, latency, rc, python_loop=False, stored=False):
    out = "\n".join(lines)
    assert rc == 0, out                      # no crash, no hang
    assert latency is not None, out          # interrupted (not finished, not another error)
    assert latency < BOUND, "KeyboardInterrupt %.3f s after SIGINT\n%s" % (latency, out)
    if python_loop and _marker(lines, "OPEN") == "True":
        # the interrupt came in Python code between two packets' worth of work (the
        # loop over an unbuffered cursor, executemany's statements, the LOAD DATA
        # chunks): the stream is in sync; an unbuffered cursor still owns its unread
        # rows (2014, as mysqlclient), else the connection is ready
        assert _marker(lines, "REUSE") in ("ProgrammingError 2014", "ok"), out
    elif _marker(lines, "OPEN") == "True":
        # the interrupt came while a buffered result already read whole (kept as its
        # row packets) was being decoded: nothing is left on the socket, the
        # connection is in sync and ready
        assert stored, out
        assert _marker(lines, "REUSE") == "ok", out
    else:
        # later use: the lost-connection error, as libmysqlclient; after close(): closed
        assert _marker(lines, "REUSE") == "OperationalError 2006", out
    assert _marker(lines, "CLOSED") == "OperationalError 2006", out
    assert _marker(lines, "FRESH") == "42", out
    assert "DONE" in lines, out


@pytest.mark.parametrize("delay", [0.3, 1.0])
@pytest.mark.parametrize("mode", ["fetchall", "dict", "prepared", "ss_fetchall", "ss_iter",
                                  "ss_prepared", "read_sql", "arrow_text"])
def test_ctrl_c_while_rows_arrive(server, conn_kwargs, mode, delay):
    if mode in ("read_sql", "arrow_text"):
        pytest.importorskip("pyarrow")
    # the fast readers (columnar; unbuffered fetchall decodes 6M rows in about 1 s here)
    # get enough rows that the scan cannot end before the later SIGINT on a loaded machine
    rows = (30_000_000 if mode in ("read_sql", "arrow_text", "ss_fetchall", "ss_iter")
            else ROWS)
    lines, latency, rc = _interrupt(conn_kwargs, mode, delay, rows=rows)
    # ss_iter and the columnar readers run Python code between two fetches (the loop,
    # the record batches' assembly): an interrupt may land there, with the stream in sync
    _check(lines, latency, rc, python_loop=mode in ("ss_iter", "read_sql", "arrow_text"),
           stored=mode in ("fetchall", "dict", "prepared", "read_sql", "arrow_text"))


@pytest.mark.parametrize("compress", [False, True])
def test_ctrl_c_while_rows_arrive_compressed_or_not(server, conn_kwargs, compress):
    # the compressed protocol inflates frames into the receive buffer: same checks
    kw = dict(conn_kwargs, compress=compress)
    lines, latency, rc = _interrupt(kw, "fetchall", 0.6)
    _check(lines, latency, rc)


def test_ctrl_c_unix_socket(server, conn_kwargs):
    if not server.unix_socket:
        pytest.fail("the private server has no unix socket")
    lines, latency, rc = _interrupt(server.connect_kwargs(unix=True), "dict", 0.6)
    _check(lines, latency, rc)


@pytest.mark.parametrize("mode", ["executemany", "load_data"])
def test_ctrl_c_while_sending(server, conn_kwargs, mode):
    kw = dict(conn_kwargs, local_infile=True)
    lines, latency, rc = _interrupt(kw, mode, 0.5, rows=1_500_000)
    _check(lines, latency, rc, python_loop=True)

