"""Bad input gets a clear exception and nothing breaks (issue 2's acceptance).

Connection failures (wrong password, nothing listening, a peer that never speaks, a
connection cut in the middle of a result), server errors mapped to the PEP 249
classes with ``args == (errno, message)``, bad parameters, closed objects, KILL
QUERY, and one connection used from two threads at once.

Observed and asserted for MariaDB 10.11:

* a TCP peer that accepts but never sends the handshake, with ``connect_timeout=1``:
  ``OperationalError`` 2013 (lost connection while reading the handshake -- the TCP
  connect itself succeeded, so it is not 2003), after ~1 s;
* ``KILL QUERY`` of ``SELECT SLEEP(5)``: the statement ends with ERR 1317
  ("Query execution was interrupted") -> ``OperationalError`` 1317 (MariaDB does not
  return 1 from the interrupted SLEEP here); the connection stays usable;
* ``KILL <connection>`` during ``SELECT SLEEP(10)``: the server closes the socket
  without an ERR packet -> ``OperationalError`` 2013, connection reported closed.
"""

import decimal
import re
import socket
import threading
import time

import pytest

import mysqlc
from mysqlc.constants import CLIENT

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis


# =========================================================================== helpers

class SilentListener:
    """A TCP listener that accepts connections and never sends a byte."""

    def __init__(self):
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(8)
        self.port = self.lsock.getsockname()[1]
        self.accepted = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.lsock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                s, _ = self.lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.accepted.append(s)      # keep it open, say nothing

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for s in self.accepted:
            s.close()
        self.lsock.close()


class CuttingProxy:
    """A TCP proxy to the real server that can cut the connection mid-result.

    After ``arm(n)``, once ``n`` more bytes have gone from the server to the client,
    both sockets are shut down and closed: to the client this is a server that died
    in the middle of sending a result.
    """

    def __init__(self, host, port):
        self.target = (host, port)
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.port = self.lsock.getsockname()[1]
        self.limit = None
        self.sent_after_arm = 0
        self.cut = threading.Event()
        self.lock = threading.Lock()
        self.socks = []
        self.threads = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self.threads.append(t)

    def arm(self, nbytes):
        with self.lock:
            self.limit = nbytes
            self.sent_after_arm = 0

    def _accept(self):
        try:
            client, _ = self.lsock.accept()
        except OSError:
            return
        server = socket.create_connection(self.target)
        self.socks += [client, server]
        for src, dst, counted in ((client, server, False), (server, client, True)):
            t = threading.Thread(target=self._pump, args=(src, dst, counted), daemon=True)
            t.start()
            self.threads.append(t)

    def _pump(self, src, dst, counted):
        try:
            while not self.cut.is_set():
                data = src.recv(65536)
                if not data:
                    break
                if counted:
                    with self.lock:
                        if self.limit is not None:
                            room = self.limit - self.sent_after_arm
                            if len(data) >= room:
                                data = data[:max(room, 0)]
                                if data:
                                    dst.sendall(data)
                                self._cut()
                                return
                            self.sent_after_arm += len(data)
                dst.sendall(data)
        except OSError:
            pass

    def _cut(self):
        self.cut.set()
        for s in self.socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self._cut()
        self.lsock.close()
        for t in self.threads:
            t.join(5)


def _wait_running(conn, thread_id, text, timeout=10.0):
    """Poll the processlist (through `conn`) until connection `thread_id` runs a
    statement containing `text`, so that a KILL cannot come before the statement."""
    deadline = time.monotonic() + timeout
    cur = conn.cursor()
    while time.monotonic() < deadline:
        cur.execute("SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = %s",
                    (thread_id,))
        row = cur.fetchone()
        if row and row[0] and text in row[0]:
            return
        time.sleep(0.02)
    raise AssertionError("connection %d never ran %r" % (thread_id, text))


def _free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _assert_unusable(conn):
    """After a lost connection: reported closed, and using it raises a clear error."""
    assert conn.open is False
    with pytest.raises((mysqlc.InterfaceError, mysqlc.OperationalError)):
        conn.cursor().execute("SELECT 1")
    with pytest.raises((mysqlc.InterfaceError, mysqlc.OperationalError)):
        conn.ping()


def _new_connection_works(kwargs):
    c = mysqlc.connect(**kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT 40 + 2")
        assert cur.fetchone() == (42,)
    finally:
        c.close()


# =========================================================================== connecting

def test_wrong_password_1045(conn_kwargs):
    kw = dict(conn_kwargs, password="definitely-not-the-password")
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(**kw)
    assert ei.value.args[0] == 1045
    assert "Access denied" in ei.value.args[1]
    assert len(ei.value.args) == 2
    # the same through the DB-API exception hierarchy
    assert isinstance(ei.value, mysqlc.DatabaseError)
    assert isinstance(ei.value, mysqlc.Error)


def test_unknown_user_1045(conn_kwargs):
    kw = dict(conn_kwargs, user="nobody_such_user", password="x")
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(**kw)
    assert ei.value.args[0] == 1045


def test_unknown_database_1049(conn_kwargs):
    kw = dict(conn_kwargs, database="no_such_database_xyz")
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(**kw)
    assert ei.value.args[0] == 1049


def test_nothing_listening_2003_quickly():
    port = _free_port()
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(host="127.0.0.1", port=port, user="u", password="p", connect_timeout=5)
    elapsed = time.monotonic() - t0
    assert ei.value.args[0] == 2003
    assert str(port) in ei.value.args[1]
    assert elapsed < 1.0, elapsed    # refused at once, long before connect_timeout


def test_no_unix_socket_2002(tmp_path):
    path = str(tmp_path / "no-such.sock")
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(unix_socket=path, user="u", password="p")
    assert ei.value.args[0] == 2002
    assert path in ei.value.args[1]


def test_silent_peer_times_out_2013():
    """A listener that accepts but never speaks: the handshake read times out after
    connect_timeout.  MariaDB's client reports this as 2013 (the TCP connect worked);
    so does mysqlc."""
    srv = SilentListener()
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host="127.0.0.1", port=srv.port, user="u", password="p",
                           connect_timeout=1)
        elapsed = time.monotonic() - t0
    finally:
        srv.close()
    assert ei.value.args[0] == 2013
    assert 0.9 <= elapsed < 1.5, elapsed


def test_read_timeout_2013(conn_kwargs):
    c = mysqlc.connect(read_timeout=0.5, **conn_kwargs)
    try:
        cur = c.cursor()
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            cur.execute("SELECT SLEEP(3)")
        assert ei.value.args[0] == 2013
        assert time.monotonic() - t0 < 2
        _assert_unusable(c)
    finally:
        c.close()
    _new_connection_works(conn_kwargs)


# =========================================================================== lost connection

@pytest.mark.parametrize("cut_after", [1, 5000, 300000])
def test_connection_cut_mid_result_2013(server, conn_kwargs, cut_after, api):
    """The server side goes away after `cut_after` bytes of a large result."""
    proxy = CuttingProxy(server.host, server.port)
    try:
        kw = dict(conn_kwargs, host="127.0.0.1", port=proxy.port)
        c = mysqlc.connect(**kw)
        cur = c.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
        proxy.arm(cut_after)
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            cur.execute("SELECT seq, REPEAT('x', 100) FROM seq_1_to_100000")
            cur.fetchall()
        assert ei.value.args[0] == 2013
        assert "Lost connection" in ei.value.args[1]
        assert time.monotonic() - t0 < 5
        _assert_unusable(c)
        c.close()          # closing a dead connection is fine (once, as mysqlclient)
        if api == "aio":   # again too: aiomysql's close() of a closed one does nothing
            c.close()
        else:
            with pytest.raises(mysqlc.OperationalError) as ei:
                c.close()
            assert ei.value.args[0] == 2006
    finally:
        proxy.close()
    _new_connection_works(conn_kwargs)


def test_connection_cut_mid_result_unbuffered_fetch(server, conn_kwargs):
    """Same with rows fetched a few at a time (SSCursor when the layer has one)."""
    cursorclass = getattr(getattr(mysqlc, "cursors", None), "SSCursor", None)
    proxy = CuttingProxy(server.host, server.port)
    try:
        c = mysqlc.connect(**dict(conn_kwargs, host="127.0.0.1", port=proxy.port))
        cur = c.cursor(cursorclass) if cursorclass else c.cursor()
        proxy.arm(200000)
        with pytest.raises(mysqlc.OperationalError) as ei:
            cur.execute("SELECT seq, REPEAT('y', 200) FROM seq_1_to_50000")
            while cur.fetchmany(100):
                pass
        assert ei.value.args[0] == 2013
        _assert_unusable(c)
    finally:
        proxy.close()
    _new_connection_works(conn_kwargs)


def test_kill_connection_mid_query(conn_kwargs, root_conn_kwargs):
    """KILL <connection> while it runs SELECT SLEEP(10): MariaDB 10.11 closes the socket
    without an ERR packet, so the client sees 2013 at once and reports itself closed."""
    c = mysqlc.connect(**conn_kwargs)
    victim = c.thread_id()
    root = mysqlc.connect(**root_conn_kwargs)

    def killer():
        _wait_running(root, victim, "SLEEP(10)")
        root.cursor().execute("KILL %d" % victim)

    t = threading.Thread(target=killer)
    t.start()
    t0 = time.monotonic()
    try:
        cur = c.cursor()
        with pytest.raises(mysqlc.OperationalError) as ei:
            cur.execute("SELECT SLEEP(10)")
        assert time.monotonic() - t0 < 5
        assert ei.value.args[0] == 2013
        assert ei.value.args[1].startswith("Lost connection to server during query")
        _assert_unusable(c)
    finally:
        t.join()
        root.close()
        c.close()
    _new_connection_works(conn_kwargs)


def test_kill_query_on_sleep_returns_promptly(conn, root_conn_kwargs):
    """KILL QUERY on SELECT SLEEP(5): MariaDB 10.11 ends it with ERR 1317."""
    victim = conn.thread_id()
    root = mysqlc.connect(**root_conn_kwargs)

    def killer():
        _wait_running(root, victim, "SLEEP(5)")
        time.sleep(0.2)
        root.cursor().execute("KILL QUERY %d" % victim)

    t = threading.Thread(target=killer)
    t.start()
    t0 = time.monotonic()
    try:
        cur = conn.cursor()
        with pytest.raises(mysqlc.OperationalError) as ei:
            cur.execute("SELECT SLEEP(5)")
            cur.fetchall()
        elapsed = time.monotonic() - t0
    finally:
        t.join()
        root.close()
    assert ei.value.args[0] == 1317
    assert "interrupted" in ei.value.args[1]
    assert elapsed < 2.5, elapsed
    # the connection is still in sync and usable
    assert conn.open
    cur.execute("SELECT 7")
    assert cur.fetchone() == (7,)


# =========================================================================== server errors

def test_syntax_error_1064(conn):
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        cur.execute("SELEC 1")
    assert ei.value.args[0] == 1064
    assert "syntax" in ei.value.args[1]
    assert isinstance(ei.value.args[1], str)
    cur.execute("SELECT 1")          # the connection is fine afterwards
    assert cur.fetchone() == (1,)


def test_unknown_table_1146(conn):
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        cur.execute("SELECT * FROM no_such_table_here")
    assert ei.value.args[0] == 1146
    assert "no_such_table_here" in ei.value.args[1]


def test_duplicate_key_1062(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE dup (id INT PRIMARY KEY)")
    cur.execute("INSERT INTO dup VALUES (1)")
    with pytest.raises(mysqlc.IntegrityError) as ei:
        cur.execute("INSERT INTO dup VALUES (%s)", (1,))
    assert ei.value.args[0] == 1062
    assert "Duplicate entry '1'" in ei.value.args[1]


def test_not_null_1048(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE nn (id INT NOT NULL)")
    with pytest.raises(mysqlc.IntegrityError) as ei:
        cur.execute("INSERT INTO nn VALUES (%s)", (None,))
    assert ei.value.args[0] == 1048


def test_out_of_range_strict_1264(conn):
    cur = conn.cursor()
    cur.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES'")
    cur.execute("CREATE TEMPORARY TABLE oor (v TINYINT)")
    with pytest.raises(mysqlc.DataError) as ei:
        cur.execute("INSERT INTO oor VALUES (%s)", (128,))
    assert ei.value.args[0] == 1264
    assert "Out of range" in ei.value.args[1]


def test_data_too_long_1406(conn):
    cur = conn.cursor()
    cur.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES'")
    cur.execute("CREATE TEMPORARY TABLE tl (v VARCHAR(3))")
    with pytest.raises(mysqlc.DataError) as ei:
        cur.execute("INSERT INTO tl VALUES (%s)", ("abcd",))
    assert ei.value.args[0] == 1406


def test_error_inside_multi_statement_keeps_connection(conn_kwargs):
    c = mysqlc.connect(client_flag=CLIENT.MULTI_STATEMENTS, **conn_kwargs)
    try:
        cur = c.cursor()
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            cur.execute("SELECT 1; SELEC 2; SELECT 3")
            while cur.nextset():
                pass
        assert ei.value.args[0] == 1064
        cur = c.cursor()
        cur.execute("SELECT 4")
        assert cur.fetchone() == (4,)
    finally:
        c.close()


# =========================================================================== bad parameters

def test_too_many_parameters(conn):
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        cur.execute("SELECT %s, %s, %s", (1, 2, 3, 4, 5))
    msg = str(ei.value.args[-1])
    assert re.search(r"\b3\b", msg) and re.search(r"\b5\b", msg), msg
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


def test_too_few_parameters(conn):
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        cur.execute("SELECT %s, %s, %s", (1,))
    msg = str(ei.value.args[-1])
    assert re.search(r"\b3\b", msg) and re.search(r"\b1\b", msg), msg


def test_parameters_but_no_placeholder(conn):
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        cur.execute("SELECT 1", (1, 2))
    msg = str(ei.value.args[-1])
    assert re.search(r"\b0\b", msg) and re.search(r"\b2\b", msg), msg


def test_missing_mapping_key(conn):
    cur = conn.cursor()
    with pytest.raises((mysqlc.ProgrammingError, KeyError)) as ei:
        cur.execute("SELECT %(a)s, %(b)s", {"a": 1})
    assert "b" in str(ei.value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"),
                                   decimal.Decimal("NaN"), decimal.Decimal("-Infinity")],
                         ids=["nan", "inf", "-inf", "Decimal-NaN", "Decimal-Infinity"])
def test_non_finite_float_parameter(conn, value):
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError):
        cur.execute("SELECT %s", (value,))
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


def test_unsupported_parameter_type(conn):
    """encode.c: an object with no literal rule -> ProgrammingError naming the type."""
    class Strange:
        pass

    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        cur.execute("SELECT %s", (Strange(),))
    assert "Strange" in str(ei.value)
    with pytest.raises(mysqlc.ProgrammingError):
        cur.execute("SELECT %s", (object(),))
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


def test_bad_format_character(conn):
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError):
        cur.execute("SELECT %d", (1,))


# =========================================================================== closed objects

def test_closed_connection(conn_kwargs, api):
    c = mysqlc.connect(**conn_kwargs)
    cur = c.cursor()
    c.close()
    assert c.open is False
    # mysqlclient's OperationalError(2006, '') for everything, a second close() too
    # (not in aio: aiomysql's close() of a closed connection does nothing)
    ops = [lambda: cur.execute("SELECT 1"), lambda: c.cursor().execute("SELECT 1"),
           c.commit, c.rollback, c.ping]
    if api == "aio":
        c.close()
    else:
        ops.append(c.close)
    for op in ops:
        with pytest.raises(mysqlc.OperationalError) as ei:
            op()
        assert ei.value.args == (2006, "")


def test_closed_cursor(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1")
    cur.close()
    with pytest.raises((mysqlc.ProgrammingError, mysqlc.InterfaceError)):
        cur.execute("SELECT 1")
    # the connection itself is fine
    cur2 = conn.cursor()
    cur2.execute("SELECT 2")
    assert cur2.fetchone() == (2,)


def test_fetch_before_execute(conn):
    cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError):
        cur.fetchone()


# =========================================================================== threads

def test_one_connection_from_two_threads(conn, conn_kwargs):
    result = {}

    def sleeper():
        try:
            cur = conn.cursor()
            cur.execute("SELECT SLEEP(1)")
            result["rows"] = list(cur.fetchall())
        except Exception as exc:    # reported below
            result["error"] = exc

    watcher = mysqlc.connect(**conn_kwargs)
    t = threading.Thread(target=sleeper)
    t.start()
    try:
        _wait_running(watcher, conn.thread_id(), "SLEEP(1)")
    finally:
        watcher.close()
    try:
        with pytest.raises(mysqlc.ProgrammingError):
            conn.cursor().execute("SELECT 2")
    finally:
        t.join()
    assert "error" not in result, result.get("error")
    assert result["rows"] == [(0,)]
    # nothing was corrupted: the connection goes on normally
    cur = conn.cursor()
    cur.execute("SELECT 3")
    assert cur.fetchone() == (3,)


def test_exception_args_shape(conn):
    cur = conn.cursor()
    try:
        cur.execute("SELECT * FROM no_such_table_either")
    except mysqlc.Error as exc:
        errno, msg = exc.args
        assert errno == 1146 and isinstance(msg, str)
    else:
        pytest.fail("no exception")


# =========================================================================== converters, invalid text

def test_converter_exception_propagates_and_connection_recovers(conn_kwargs):
    from mysqlc.constants import FIELD_TYPE

    def picky(text):                     # a number's wire bytes (mysqlclient's argument)
        if text == b"13":
            raise ValueError("unlucky %s" % text.decode())
        return int(text) * 10

    c = mysqlc.connect(conv={FIELD_TYPE.LONG: picky}, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE ce (i INT)")
        cur.execute("INSERT INTO ce SELECT seq FROM seq_1_to_100")
        with pytest.raises(ValueError) as ei:
            cur.execute("SELECT i FROM ce ORDER BY i")
        assert str(ei.value) == "unlucky 13"
        notes = getattr(ei.value, "__notes__", [])
        if notes:                        # Python >= 3.11: the column is named
            assert "'i'" in notes[0]
        assert c.open
        cur.execute("SELECT i FROM ce WHERE i < 3 ORDER BY i")   # the rest was drained
        assert cur.fetchall() == ((10,), (20,))
    finally:
        c.close()


def test_converter_reentering_the_connection(conn_kwargs):
    from mysqlc.constants import FIELD_TYPE
    holder = {}

    def reenter(text):
        holder["conn"].cursor().execute("SELECT 1")
        return text

    c = mysqlc.connect(conv={FIELD_TYPE.LONG: reenter}, **conn_kwargs)
    holder["conn"] = c
    try:
        cur = c.cursor()
        with pytest.raises(mysqlc.ProgrammingError):
            cur.execute("SELECT 12")           # MariaDB types 12 as LONG
        cur.execute("SELECT 'still fine'")
        assert cur.fetchone() == ("still fine",)
    finally:
        c.close()


def test_invalid_utf8_literal_is_a_server_error(conn):
    cur = conn.cursor()
    with pytest.raises(mysqlc.OperationalError) as ei:
        cur.execute("SELECT _utf8mb4 X'FF'")
    assert ei.value.args[0] == 1300
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)
