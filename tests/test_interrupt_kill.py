"""An interrupt or a timeout stops the server's statement (issue 14).

When Ctrl-C (KeyboardInterrupt from inside the C core) or a read timeout abandons a
command, the core closes the socket; without more the server would go on running the
statement (``SELECT SLEEP(30)`` for 30 s, an ``UPDATE`` keeping its row locks) because
nobody reads its answer.  The core then calls its ``on_abandon`` hook (src/framing.c
``mc_conn_abandoned``, from the packet layer's signal check and the transport's read),
which mysqlc.connections sets to send ``KILL QUERY <connection id>`` over a short side
connection (at most ``_KILL_BUDGET`` = 2 s); the caller's exception is raised as it was;
the connection stays closed (later use: OperationalError 2006).

Checked on the server: ``information_schema.PROCESSLIST`` no longer shows the statement
within 1 s of the exception, and a row an interrupted ``UPDATE`` had locked can be
updated by another connection (``innodb_lock_wait_timeout=2`` there, so a failure is an
error 1205, not a hang).  SIGINT is sent to a subprocess, as tests/test_interrupt.py does.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import mysqlc
import mysqlc.pymysql
from mysqlc import connections
from mysqlc.cursors import SSCursor

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS_DIR)
GONE_WITHIN = 1.0     # seconds from the exception to the statement's end on the server
SLEEP = "SLEEP(30)"

# rows big enough that the server flushes the first ones at once (its 16 KiB network
# buffer), then a sleep at row 300: an unbuffered cursor's execute() returns and the
# interrupt comes while fetching
MID_STREAM = ("SELECT seq, REPEAT('x', 1000), IF(seq = 300, SLEEP(30), 0) "
              "FROM seq_1_to_600")


def _statement_running(root, thread_id):
    """The statement text server connection `thread_id` runs, or None."""
    cur = root.cursor()
    cur.execute("SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = %s",
                (thread_id,))
    row = cur.fetchone()
    return None if row is None else row[0]


def _assert_gone(root_kw, thread_id, since, within=GONE_WITHIN):
    """The statement of `thread_id` has ended, at the latest `within` s after `since`
    (time.monotonic())."""
    root = mysqlc.connect(**root_kw)
    try:
        while True:
            info = _statement_running(root, thread_id)
            if info is None:
                return
            if time.monotonic() - since > within:
                raise AssertionError("statement %r of connection %d still running %.2f s "
                                     "after the interrupt" % (info, thread_id,
                                                              time.monotonic() - since))
            time.sleep(0.02)
    finally:
        root.close()


def _wait_running(root_kw, thread_id, timeout=10.0):
    root = mysqlc.connect(**root_kw)
    try:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if _statement_running(root, thread_id):
                return
            time.sleep(0.02)
        raise AssertionError("connection %d never ran its statement" % thread_id)
    finally:
        root.close()


# ----------------------------------------------------------------- the central place

def test_every_connection_has_the_hook(conn_kwargs):
    """The one central place: the core's on_abandon hook, set at connect; it holds the
    Connection weakly (no cycle keeps a dropped connection alive)."""
    import gc
    import weakref
    c = mysqlc.connect(**conn_kwargs)
    assert callable(c._conn.on_abandon)
    ref = weakref.ref(c)
    c.close()
    del c
    gc.collect()
    assert ref() is None


def test_the_hook_keeps_the_callers_exception(conn_kwargs):
    """A hook that fails does not replace the exception the core raises, and it is called
    once, with the server connection id."""
    calls = []

    def bad(tid):
        calls.append(tid)
        raise RuntimeError("hook failed")
    c = mysqlc.connect(read_timeout=1, **conn_kwargs)
    try:
        c._conn.on_abandon = bad
        with pytest.raises(mysqlc.OperationalError) as info:
            c.cursor().execute("SELECT SLEEP(5)")
        assert info.value.args[0] == 2013 and calls == [c.thread_id()]
    finally:
        c.close()


def test_server_errors_and_normal_use_send_no_kill(conn, monkeypatch):
    calls = []
    monkeypatch.setattr(type(conn), "_kill_query_bounded",
                        lambda self, tid, budget=None: calls.append(tid))
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError):
        cur.execute("SELEC 1")
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)
    assert calls == [] and conn.open


# ----------------------------------------------------------------- read_timeout

def _timed_out(kw, run, flavour=mysqlc):
    """Connect with read_timeout=1, run `run(conn)` (which must time out); returns
    (thread id, monotonic time of the exception, the connection)."""
    c = flavour.connect(read_timeout=1, **kw)
    tid = c.thread_id()
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as info:
        run(c)
    at = time.monotonic()
    assert info.value.args[0] == 2013 and "timed out" in info.value.args[1]
    assert at - t0 < 1 + connections._KILL_BUDGET + 1.0
    assert c._kill_query_failed is None
    assert not c.open
    with pytest.raises(mysqlc.OperationalError) as again:
        c.cursor().execute("SELECT 1")
    assert again.value.args[0] == 2006
    return tid, at, c


def _run_execute(c):
    c.cursor().execute("SELECT " + SLEEP)


def _run_prepared(c):
    c.cursor(prepared=True).execute("SELECT " + SLEEP)


def _run_ss_prepared(c):
    c.cursor(SSCursor, prepared=True).execute("SELECT " + SLEEP)


def _run_ss_fetch(c):
    cur = c.cursor(SSCursor)
    cur.execute(MID_STREAM)
    cur.fetchall()


def _run_executemany(c):
    c.cursor().executemany("SELECT %s + " + SLEEP, [(1,), (2,)])


def _run_callproc(c):
    cur = c.cursor()
    cur.execute("CREATE PROCEDURE IF NOT EXISTS mysqlc_kill_sleeper() SELECT " + SLEEP)
    cur.callproc("mysqlc_kill_sleeper")


def _run_read_sql(c):
    pytest.importorskip("pyarrow")
    mysqlc.read_sql(c, "SELECT seq, " + SLEEP + " FROM seq_1_to_2")


def _run_internal(c):
    # the path of Connection methods (commit, rollback, autocommit, show_warnings...)
    c._internal_query(b"SELECT " + SLEEP.encode())


@pytest.mark.parametrize("run", [_run_execute, _run_prepared, _run_ss_prepared, _run_ss_fetch,
                                 _run_executemany, _run_callproc, _run_read_sql,
                                 _run_internal],
                         ids=lambda f: f.__name__[5:])
def test_read_timeout_kills_the_statement(server, conn_kwargs, root_conn_kwargs, run):
    tid, at, _ = _timed_out(conn_kwargs, run)
    _assert_gone(root_conn_kwargs, tid, at)


def test_read_timeout_pymysql_flavour(server, conn_kwargs, root_conn_kwargs):
    tid, at, _ = _timed_out(conn_kwargs, _run_execute, flavour=mysqlc.pymysql)
    _assert_gone(root_conn_kwargs, tid, at)


def test_read_timeout_kills_load_data_local(server, conn_kwargs, root_conn_kwargs):
    # the LOAD DATA waits for the lock another transaction holds on key 1
    setup = mysqlc.connect(**conn_kwargs)
    holder = mysqlc.connect(**conn_kwargs)
    try:
        setup.cursor().execute("CREATE OR REPLACE TABLE kill_ld (id INT PRIMARY KEY, v INT) "
                               "ENGINE=InnoDB")
        hc = holder.cursor()
        hc.execute("BEGIN")
        hc.execute("INSERT INTO kill_ld VALUES (1, 0)")

        def run(c):
            cur = c.cursor()
            cur.execute("SET SESSION innodb_lock_wait_timeout = 30")
            cur.execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE kill_ld", infile=b"1\t5\n")

        tid, at, _ = _timed_out(dict(conn_kwargs, local_infile=True), run)
        _assert_gone(root_conn_kwargs, tid, at)
        hc.execute("ROLLBACK")
    finally:
        holder.close()
        setup.cursor().execute("DROP TABLE IF EXISTS kill_ld")
        setup.close()


def _locked_update(conn_kwargs, root_conn_kwargs, interrupt):
    """An UPDATE that holds the row lock on id=1 (inside a transaction) while it sleeps
    is interrupted by `interrupt(kw)` -> (thread id, exception time); another connection
    then updates that row at once."""
    setup = mysqlc.connect(**conn_kwargs)
    try:
        cur = setup.cursor()
        cur.execute("CREATE OR REPLACE TABLE kill_upd (id INT PRIMARY KEY, v INT) "
                    "ENGINE=InnoDB")
        cur.execute("INSERT INTO kill_upd VALUES (1, 0), (2, 0)")
        setup.commit()
        tid, at = interrupt(conn_kwargs)
        other = mysqlc.connect(**conn_kwargs)
        try:
            oc = other.cursor()
            oc.execute("SET SESSION innodb_lock_wait_timeout = 2")
            t0 = time.monotonic()
            oc.execute("UPDATE kill_upd SET v = 7 WHERE id = 1")   # 1205 if still locked
            other.commit()
            assert time.monotonic() - at < GONE_WITHIN + (time.monotonic() - t0)
            assert time.monotonic() - t0 < GONE_WITHIN
            oc.execute("SELECT v FROM kill_upd WHERE id = 1")
            assert oc.fetchone() == (7,)     # the interrupted UPDATE was rolled back
        finally:
            other.close()
        _assert_gone(root_conn_kwargs, tid, at)
    finally:
        setup.cursor().execute("DROP TABLE IF EXISTS kill_upd")
        setup.close()


UPDATE_SQL = "UPDATE kill_upd SET v = v + 1 WHERE id = 1 AND " + SLEEP + " = 0"


def test_read_timeout_releases_row_locks(server, conn_kwargs, root_conn_kwargs):
    def interrupt(kw):
        def run(c):
            cur = c.cursor()
            cur.execute("BEGIN")
            cur.execute("UPDATE kill_upd SET v = v + 1 WHERE id = 1")   # lock taken
            cur.execute(UPDATE_SQL)
        tid, at, _ = _timed_out(kw, run)
        return tid, at
    _locked_update(conn_kwargs, root_conn_kwargs, interrupt)


# ----------------------------------------------------------------- Ctrl-C (SIGINT)

SCRIPT = textwrap.dedent(r"""
    import json, signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import mysqlc, mysqlc.pymysql
    from mysqlc.cursors import SSCursor
    kw, mode, sql = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
    flavour = mysqlc.pymysql if mode == "pymysql" else mysqlc
    conn = flavour.connect(**kw)
    if mode == "read_sql":
        import pyarrow
    cur = conn.cursor(SSCursor if mode == "ss_fetch" else None,
                      **({"prepared": True} if mode == "prepared" else {}))
    if mode == "update":
        cur.execute("BEGIN")
        cur.execute("UPDATE kill_upd SET v = v + 1 WHERE id = 1")
    print("READY %d" % conn.thread_id(), flush=True)
    try:
        if mode == "read_sql":
            mysqlc.read_sql(conn, sql)
        elif mode == "ss_fetch":
            cur.execute(sql)
            print("FETCHING", flush=True)
            cur.fetchall()
        else:
            cur.execute(sql)
        print("NOT-INTERRUPTED", flush=True)
    except KeyboardInterrupt:
        print("KI %.6f %s" % (time.monotonic(), conn._kill_query_failed), flush=True)
    except BaseException as exc:
        print("OTHER %s %s" % (type(exc).__name__, exc), flush=True)
    try:
        conn.cursor().execute("SELECT 1")
        print("REUSE ok", flush=True)
    except mysqlc.Error as exc:
        print("REUSE %s %s" % (type(exc).__name__, exc.args[0]), flush=True)
""")


def _sigint(kw, root_kw, mode, sql):
    """Run SCRIPT; SIGINT once the statement runs on the server -> (thread id, time of
    the KeyboardInterrupt, output lines)."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(kw), mode, sql],
                            cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        line = proc.stdout.readline()
        while line and not line.startswith("READY"):
            lines.append(line.rstrip("\n"))
            line = proc.stdout.readline()
        assert line.startswith("READY"), "subprocess did not get ready:\n" + "\n".join(lines)
        tid = int(line.split()[1])
        _wait_running(root_kw, tid)
        if mode == "ss_fetch":
            # the signal must find it in fetchall(): wait for its word, not for a time
            # (on a loaded machine execute() may still be reading the first rows)
            line = proc.stdout.readline()
            while line and not line.startswith("FETCHING"):
                lines.append(line.rstrip("\n"))
                line = proc.stdout.readline()
            lines.append(line.rstrip("\n"))
        time.sleep(0.3)   # inside the wait (or the fetch) for sure
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        lines += out.splitlines()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = "\n".join(lines)
    assert proc.returncode == 0, text
    ki = [ln for ln in lines if ln.startswith("KI ")]
    assert ki, text
    assert ki[0].split()[2] == "None", text        # the KILL QUERY went through
    assert "REUSE OperationalError 2006" in lines, text
    return tid, float(ki[0].split()[1]), lines


@pytest.mark.parametrize("mode,sql", [
    ("execute", "SELECT " + SLEEP),
    ("prepared", "SELECT " + SLEEP),
    ("ss_fetch", MID_STREAM),
    ("read_sql", "SELECT seq, " + SLEEP + " FROM seq_1_to_2"),
    ("pymysql", "SELECT " + SLEEP),
])
def test_ctrl_c_kills_the_statement(server, conn_kwargs, root_conn_kwargs, mode, sql):
    if mode == "read_sql":
        pytest.importorskip("pyarrow")
    tid, at, lines = _sigint(conn_kwargs, root_conn_kwargs, mode, sql)
    if mode == "ss_fetch":
        assert "FETCHING" in lines        # interrupted in fetchall(), not in execute()
    _assert_gone(root_conn_kwargs, tid, at)


def test_ctrl_c_releases_row_locks(server, conn_kwargs, root_conn_kwargs):
    def interrupt(kw):
        tid, at, _ = _sigint(kw, root_conn_kwargs, "update", UPDATE_SQL)
        return tid, at
    _locked_update(conn_kwargs, root_conn_kwargs, interrupt)


# ----------------------------------------------------------------- KILL that fails

@pytest.fixture
def blackhole():
    """A TCP port that accepts connections and never answers."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    held, stop = [], threading.Event()

    def accept():
        lsock.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(lsock.accept()[0])
            except OSError:
                pass
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield lsock.getsockname()[1]
    stop.set()
    t.join()
    for s in held:
        s.close()
    lsock.close()


def _closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("where", ["refused", "silent"])
def test_kill_failure_still_raises_the_original_error(server, conn_kwargs, root_conn_kwargs,
                                                      blackhole, where):
    c = mysqlc.connect(read_timeout=1, **conn_kwargs)
    tid = c.thread_id()
    # the side connection goes to c.port: a port nobody listens on, or one that never
    # answers (the 2 s bound)
    c.port = _closed_port() if where == "refused" else blackhole
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as info:
        c.cursor().execute("SELECT SLEEP(4)")
    took = time.monotonic() - t0
    assert info.value.args[0] == 2013 and "read timed out" in info.value.args[1]
    assert c._kill_query_failed is not None
    assert took < 1 + connections._KILL_BUDGET + 0.7, took
    if where == "refused":
        assert took < 1 + 0.7, took
        assert isinstance(c._kill_query_failed, mysqlc.OperationalError)
    assert not c.open
    # nothing stopped it: the statement still runs on the server (until its 4 s end)
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        assert _statement_running(root, tid) == "SELECT SLEEP(4)"
    finally:
        root.close()


def test_kill_failure_under_ctrl_c(server, conn_kwargs, monkeypatch):
    # a KeyboardInterrupt while the core waits, with a side connection that is refused:
    # the caller gets the KeyboardInterrupt, promptly
    c = mysqlc.connect(**conn_kwargs)
    c.port = _closed_port()
    timer = threading.Timer(0.5, lambda: signal.pthread_kill(threading.main_thread().ident,
                                                             signal.SIGINT))
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        t0 = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            c.cursor().execute("SELECT SLEEP(3)")
        assert time.monotonic() - t0 < 1.5
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    assert isinstance(c._kill_query_failed, mysqlc.OperationalError)
    assert not c.open
