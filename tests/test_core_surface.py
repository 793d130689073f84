"""The C-core parts of mysqlclient's surface (issue 12): SQLSTATE on exceptions and the
last error on the core connection, change_user (COM_CHANGE_USER), stat
(COM_STATISTICS), fileno, the error after a lost connection, and close() with unread
streamed rows (COM_QUIT, no aborted client).

Compared with mysqlclient (``MySQLdb``) where it has the same call.
"""

import os
import socket
import stat as stat_mod
import time
import uuid

import pytest

import mysqlc
from mysqlc.cursors import SSCursor

MySQLdb = pytest.importorskip("MySQLdb")


def _mdb(kw, **extra):
    return MySQLdb.connect(**dict(kw, **extra))


# =========================================================================== sqlstate

@pytest.mark.parametrize("sql, errno, state", [
    ("SELECT * FROM no_such_table_xyz", 1146, "42S02"),
    ("SELEKT 1", 1064, "42000"),
    ("SELECT no_such_column FROM (SELECT 1 AS a) AS t", 1054, "42S22"),
    ("SIGNAL SQLSTATE '45001' SET MESSAGE_TEXT = 'mine'", 1644, "45001"),
])
def test_sqlstate_of_server_errors_as_mysqlclient(conn, conn_kwargs, sql, errno, state):
    with pytest.raises(mysqlc.Error) as ei:
        conn.cursor().execute(sql)
    assert ei.value.args[0] == errno
    assert ei.value.sqlstate == state
    core = conn._conn
    assert (core.last_errno, core.last_sqlstate) == (errno, state)
    assert core.last_error == ei.value.args[1]
    m = _mdb(conn_kwargs)
    try:
        with pytest.raises(MySQLdb.Error) as mi:
            m.query(sql)
        assert (m.errno(), m.sqlstate(), m.error()) == (errno, state, ei.value.args[1])
        assert mi.value.args == ei.value.args
    finally:
        m.close()
    # the next command that succeeds clears it, as mysql_errno() / mysql_sqlstate()
    conn.cursor().execute("SELECT 1")
    assert (core.last_errno, core.last_error, core.last_sqlstate) == (0, "", "00000")


def test_sqlstate_duplicate_key_and_prepared(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE dup (id INT PRIMARY KEY)")
    cur.execute("INSERT INTO dup VALUES (1)")
    with pytest.raises(mysqlc.IntegrityError) as ei:
        cur.execute("INSERT INTO dup VALUES (1)")
    assert (ei.value.args[0], ei.value.sqlstate) == (1062, "23000")
    pc = conn.cursor(prepared=True)
    with pytest.raises(mysqlc.IntegrityError) as ei:
        pc.execute("INSERT INTO dup VALUES (%s)", (1,))
    assert (ei.value.args[0], ei.value.sqlstate) == (1062, "23000")
    assert conn._conn.last_sqlstate == "23000"


def test_sqlstate_access_denied_at_connect(conn_kwargs):
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(**dict(conn_kwargs, password="wrong-password"))
    assert (ei.value.args[0], ei.value.sqlstate) == (1045, "28000")


def test_sqlstate_of_client_errors_is_HY000(conn_kwargs):
    c = mysqlc.connect(**conn_kwargs)
    ss = c.cursor(SSCursor)
    ss.execute("SELECT seq FROM seq_1_to_1000")
    ss.fetchone()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        c._conn.query(b"SELECT 1")          # the core's own out-of-sync error
    assert (ei.value.args[0], ei.value.sqlstate) == (2014, "HY000")
    assert (c._conn.last_errno, c._conn.last_sqlstate) == (2014, "HY000")
    # errors raised by the Python layer carry the class default
    closed_cursor = c.cursor()
    closed_cursor.close()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        closed_cursor.execute("SELECT 1")
    assert ei.value.sqlstate == "HY000"
    c.close()
    with pytest.raises(mysqlc.OperationalError) as ei:     # mysqlclient: (2006, '')
        c.cursor().execute("SELECT 1")
    assert ei.value.args[0] == 2006 and ei.value.sqlstate == "HY000"


# =========================================================================== lost connection

def test_use_after_lost_connection_raises_2006_also_after_close(
        conn_kwargs, root_conn_kwargs):
    c = mysqlc.connect(**conn_kwargs)
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        root.cursor().execute("KILL %d" % c.thread_id())
    finally:
        root.close()
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.cursor().execute("SELECT 1")
    assert ei.value.args[0] in (2006, 2013)
    assert c.open is False
    for _ in range(2):    # every later use: "server has gone away", as libmysqlclient
        with pytest.raises(mysqlc.OperationalError) as ei:
            c.cursor().execute("SELECT 1")
        assert ei.value.args[0] == 2006
        assert c._conn.last_errno == 2006
    c.close()
    with pytest.raises(mysqlc.OperationalError) as ei:     # as mysqlclient
        c.cursor().execute("SELECT 1")
    assert ei.value.args[0] == 2006


# =========================================================================== stat, fileno

def test_stat_as_mysqlclient(conn, conn_kwargs):
    s = conn.stat()
    assert isinstance(s, str) and s.startswith("Uptime: ")
    m = _mdb(conn_kwargs)
    try:
        ms = m.stat()
    finally:
        m.close()
    keys = [part.split(":")[0] for part in s.split("  ")]
    assert keys == [part.split(":")[0] for part in ms.split("  ")]
    assert "Threads" in keys and "Questions" in keys
    conn.cursor().execute("SELECT 1")   # the connection is in sync afterwards


def test_fileno(conn_kwargs):
    c = mysqlc.connect(**conn_kwargs)
    fd = c.fileno()
    assert isinstance(fd, int) and fd >= 0
    assert stat_mod.S_ISSOCK(os.fstat(fd).st_mode)
    s = socket.socket(fileno=os.dup(fd))
    try:
        assert s.getpeername()[1] == conn_kwargs["port"]
    finally:
        s.close()
    c.close()
    with pytest.raises(mysqlc.OperationalError) as ei:     # as mysqlclient
        c.fileno()
    assert ei.value.args[0] == 2006


# =========================================================================== change_user

@pytest.fixture
def other_user(root_conn_kwargs, conn_kwargs):
    name = "cu_%s" % uuid.uuid4().hex[:8]
    pw = "pw-%s" % name
    root = mysqlc.connect(**root_conn_kwargs)
    cur = root.cursor()
    cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (name, pw))
    cur.execute("GRANT ALL ON `%s`.* TO %s@'%%'" % (conn_kwargs["database"], "'%s'" % name))
    try:
        yield name, pw
    finally:
        cur.execute("DROP USER %s@'%%'", (name,))
        root.close()


def _who(c):
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER(), DATABASE(), @@autocommit, @v")
    return cur.fetchone()


def test_change_user_as_mysqlclient(conn_kwargs, other_user):
    name, pw = other_user
    db = conn_kwargs["database"]
    c = mysqlc.connect(**conn_kwargs)
    m = _mdb(conn_kwargs)
    try:
        for x in (c, m):
            x.cursor().execute("SET @v = 5")
        assert c.change_user(name, pw, db) is None
        assert m.change_user(name, pw, db) is None
        assert _who(c) == tuple(_who(m)) == ("%s@%%" % name, db, 1, None)  # session reset
        c.change_user(conn_kwargs["user"], conn_kwargs["password"])     # no database
        m.change_user(conn_kwargs["user"], conn_kwargs["password"])
        assert _who(c)[:2] == tuple(_who(m))[:2] == ("%s@%%" % conn_kwargs["user"], None)
        # keyword names of mysqlclient and PyMySQL
        c.change_user(user=name, passwd=pw, db=db)
        c.change_user(name, password=pw, database=db)
        assert _who(c)[:2] == ("%s@%%" % name, db)
    finally:
        c.close()
        m.close()


def test_change_user_refused_keeps_the_connection(conn_kwargs, other_user):
    name, pw = other_user
    c = mysqlc.connect(**conn_kwargs)
    m = _mdb(conn_kwargs)
    try:
        with pytest.raises(mysqlc.OperationalError) as ei:
            c.change_user(name, pw + "x")
        with pytest.raises(MySQLdb.OperationalError) as mi:
            m.change_user(name, pw + "x")
        assert ei.value.args == mi.value.args
        assert ei.value.args[0] == 1045 and ei.value.sqlstate == "28000"
        assert c.open
        assert _who(c)[0] == tuple(_who(m))[0]     # the previous login stays
        assert _who(c)[0] == "%s@%%" % conn_kwargs["user"]
    finally:
        c.close()
        m.close()


def test_change_user_clears_prepared_statements(conn_kwargs, other_user):
    name, pw = other_user
    c = mysqlc.connect(**conn_kwargs)
    try:
        pc = c.cursor(prepared=True)
        pc.execute("SELECT %s + 1, 'x'", (1,))
        assert pc.fetchall() == ((2, "x"),)
        assert len(c._stmt_cache) == 1
        c.change_user(name, pw, conn_kwargs["database"])
        assert len(c._stmt_cache) == 0
        pc.execute("SELECT %s + 1, 'x'", (41,))      # prepared again on the new session
        assert pc.fetchall() == ((42, "x"),)
        cur = c.cursor()
        cur.execute("SELECT 'é'")                    # charset as in the handshake
        assert cur.fetchone() == ("é",)
    finally:
        c.close()


def test_change_user_sends_connection_attributes(conn_kwargs, root_conn_kwargs, other_user):
    name, pw = other_user
    c = mysqlc.connect(program_name="cu-prog", **conn_kwargs)
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        c.change_user(name, pw)
        cur = root.cursor()
        cur.execute("SELECT ATTR_VALUE FROM performance_schema.session_connect_attrs "
                    "WHERE PROCESSLIST_ID = %s AND ATTR_NAME = 'program_name'",
                    (c.thread_id(),))
        rows = cur.fetchall()
        if rows:    # performance_schema is off by default in MariaDB
            assert rows == (("cu-prog",),)
        cur.execute("SELECT USER FROM information_schema.PROCESSLIST WHERE ID = %s",
                    (c.thread_id(),))
        assert cur.fetchall() == ((name,),)
    finally:
        root.close()
        c.close()


def test_change_user_to_ed25519_account(server, conn_kwargs, root_conn_kwargs):
    pytest.importorskip("nacl")
    from test_auth_plugins import ED_PASSWORD
    root = mysqlc.connect(**root_conn_kwargs)
    cur = root.cursor()
    cur.execute("SELECT PLUGIN_STATUS FROM information_schema.PLUGINS "
                "WHERE PLUGIN_NAME = 'ed25519'")
    if not cur.fetchall():
        cur.execute("INSTALL SONAME 'auth_ed25519'")
    name = "cu_ed_%s" % uuid.uuid4().hex[:6]
    cur.execute("CREATE USER %s@'%%' IDENTIFIED VIA ed25519 USING PASSWORD(%s)",
                (name, ED_PASSWORD))
    try:
        c = mysqlc.connect(**conn_kwargs)
        try:
            c.change_user(name, ED_PASSWORD)
            assert c._conn.auth_plugin_name == "client_ed25519"   # switched by the server
            assert _who(c)[0] == "%s@%%" % name
            with pytest.raises(mysqlc.OperationalError) as ei:
                c.change_user(name, ED_PASSWORD + "x")
            assert ei.value.args[0] == 1045
            c.change_user(conn_kwargs["user"], conn_kwargs["password"],
                          conn_kwargs["database"])
            assert c._conn.auth_plugin_name == "mysql_native_password"
            assert _who(c)[0] == "%s@%%" % conn_kwargs["user"]
        finally:
            c.close()
    finally:
        cur.execute("DROP USER %s@'%%'", (name,))
        root.close()


def test_change_user_on_closed_connection(conn_kwargs):
    c = mysqlc.connect(**conn_kwargs)
    c.close()
    with pytest.raises(mysqlc.OperationalError) as ei:     # as mysqlclient
        c.change_user(conn_kwargs["user"], conn_kwargs["password"])
    assert ei.value.args[0] == 2006


# =========================================================================== close with unread rows

def _aborted_clients(root):
    """The server's Aborted_clients, once no other client is connected (connections that
    earlier tests dropped are counted when their server thread ends)."""
    cur = root.cursor()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> "
                    "CONNECTION_ID() AND COMMAND <> 'Daemon' AND USER <> 'system user'")
        if cur.fetchone()[0] == 0:
            break
        time.sleep(0.05)
    cur.execute("SHOW GLOBAL STATUS LIKE 'Aborted_clients'")
    return int(cur.fetchone()[1])


def _wait_gone(root, thread_id, timeout=10.0):
    cur = root.cursor()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s",
                    (thread_id,))
        if cur.fetchone()[0] == 0:
            return
        time.sleep(0.05)
    raise AssertionError("server thread %d still there after close()" % thread_id)


@pytest.mark.parametrize("rows, bound", [
    (1000, 1.0),            # small: the rest is dropped at once
    (10_000_000, 2.0),      # huge: KILL QUERY over a side connection, then dropped
])
def test_close_with_unread_streamed_rows_is_clean(conn_kwargs, root_conn_kwargs, rows, bound):
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        before = _aborted_clients(root)
        c = mysqlc.connect(**conn_kwargs)
        tid = c.thread_id()
        cur = c.cursor(SSCursor)
        cur.execute("SELECT seq, CONCAT('row ', seq) FROM seq_1_to_%d" % rows)
        assert cur.fetchone() == (1, "row 1")
        t0 = time.monotonic()
        c.close()
        took = time.monotonic() - t0
        assert took < bound, "close() took %.2f s" % took
        assert c.open is False
        _wait_gone(root, tid)
        assert _aborted_clients(root) == before
    finally:
        root.close()


def test_close_with_open_server_cursor_and_pending_results(conn_kwargs, root_conn_kwargs):
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        before = _aborted_clients(root)
        # a read-only server-side cursor (COM_STMT_FETCH): the server is idle
        c = mysqlc.connect(**conn_kwargs)
        tid = c.thread_id()
        cur = c.cursor(SSCursor, prepared=True)
        cur.execute("SELECT seq FROM seq_1_to_1000000")
        assert cur.fetchone() == (1,)
        c.close()
        _wait_gone(root, tid)
        # more results of a multi-statement still to come
        c = mysqlc.connect(**conn_kwargs)
        tid = c.thread_id()
        cur = c.cursor(SSCursor)
        cur.execute("SELECT 1; SELECT seq FROM seq_1_to_100000; SELECT 3")
        c.close()
        _wait_gone(root, tid)
        assert _aborted_clients(root) == before
    finally:
        root.close()
