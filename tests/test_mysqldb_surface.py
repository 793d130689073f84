"""The mysqlclient surface of mysqlc (issue 12, "Drop-in fidelity"), checked through
``mysqlc.install_as_MySQLdb()`` against real mysqlclient on the same private server.

Each test runs the same calls on a real mysqlclient connection and on a mysqlc one
reached through the ``MySQLdb`` name, and compares classes, error numbers, messages
and values.  ``sys.modules`` is restored after each test (the real mysqlclient is
imported once, before any install, and kept as ``REAL``).
"""

import datetime
import sys
import time

import pytest

import mysqlc
from _helpers import kill_connection


def _import_real_mysqldb():
    saved = {k: v for k, v in sys.modules.items() if k == "MySQLdb" or k.startswith("MySQLdb.")}
    for name in saved:
        del sys.modules[name]
    try:
        import MySQLdb
        import MySQLdb.connections  # noqa: F401 (REAL.connect imports it lazily)
        import MySQLdb.cursors
        import MySQLdb.converters   # noqa: F401
        import MySQLdb.times   # noqa: F401
        return MySQLdb
    except ImportError:
        return None
    finally:
        for name in [k for k in sys.modules if k == "MySQLdb" or k.startswith("MySQLdb.")]:
            del sys.modules[name]
        sys.modules.update(saved)


REAL = _import_real_mysqldb()
pytestmark = pytest.mark.skipif(REAL is None, reason="mysqlclient is not installed")


@pytest.fixture
def MySQLdb():
    """mysqlc installed as ``MySQLdb``; sys.modules restored afterwards."""
    saved = {k: v for k, v in sys.modules.items() if k == "MySQLdb" or k.startswith("MySQLdb.")}
    module = mysqlc.install_as_MySQLdb()
    assert module is not REAL and getattr(module, "mysqlc_version", None)
    assert REAL.connections.Connection is not mysqlc.Connection
    try:
        yield module
    finally:
        for name in [k for k in sys.modules if k == "MySQLdb" or k.startswith("MySQLdb.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def _connect(module, **kwargs):
    """A connection of `module`.  REAL.connect would import ``MySQLdb.connections`` at
    call time, which is mysqlc's while it is installed: use the real class itself."""
    if module is REAL:
        return REAL.connections.Connection(**kwargs)
    return module.connect(**kwargs)


def outcome(fn, *args):
    """('ok', value) or (exception class name, args) of fn(*args)."""
    try:
        return ("ok", fn(*args))
    except Exception as exc:   # noqa: BLE001 -- the class is what is compared
        return (type(exc).__name__, exc.args)


def _kill(root, conn):
    kill_connection(root, conn.thread_id())


# ---------------------------------------------------------------- closed and lost connections

CLOSED_OPS = [
    ("cursor().execute", lambda c: c.cursor().execute("SELECT 1")),
    ("ping", lambda c: c.ping()),
    ("commit", lambda c: c.commit()),
    ("rollback", lambda c: c.rollback()),
    ("close", lambda c: c.close()),
    ("autocommit", lambda c: c.autocommit(True)),
    ("select_db", lambda c: c.select_db("mysqlc_test")),
    ("show_warnings", lambda c: c.show_warnings()),
    ("set_character_set", lambda c: c.set_character_set("utf8mb4")),
    ("kill", lambda c: c.kill(1)),
    ("errno", lambda c: c.errno()),
    ("error", lambda c: c.error()),
    ("sqlstate", lambda c: c.sqlstate()),
    ("escape_string", lambda c: c.escape_string("a'b")),
    ("literal", lambda c: c.literal("a")),
    ("string_literal", lambda c: c.string_literal("a")),
] + [(name, (lambda name: lambda c: getattr(c, name)())(name)) for name in (
    "get_autocommit", "character_set_name", "get_character_set_info", "get_server_info",
    "get_host_info", "get_proto_info", "thread_id", "field_count", "insert_id",
    "affected_rows", "warning_count", "info")]


@pytest.mark.parametrize("name,op", CLOSED_OPS, ids=[n for n, _ in CLOSED_OPS])
def test_closed_connection_as_mysqlclient(MySQLdb, conn_kwargs, name, op):
    results = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        cur = c.cursor()                  # a cursor made before close()
        c.close()
        results.append((outcome(op, c), outcome(cur.execute, "SELECT 1"),
                        outcome(lambda: type(c.cursor()).__name__)))
    assert results[1] == results[0]
    if name not in ("escape_string", "literal", "string_literal"):
        assert results[1][0] == ("OperationalError", (2006, ""))


def test_close_twice_as_mysqlclient(MySQLdb, conn_kwargs):
    seen = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        seen.append((outcome(c.close), outcome(c.close), outcome(c.close)))
    assert seen[1] == seen[0] == (("ok", None), ("OperationalError", (2006, "")),
                                  ("OperationalError", (2006, "")))


def test_closed_connection_after_failed_statement(MySQLdb, conn_kwargs):
    # close() sends COM_QUIT, which clears the last error: the message is ''
    seen = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        first = outcome(c.cursor().execute, "SELEC 1")
        c.close()
        seen.append((first[0], first[1][0], outcome(c.cursor().execute, "SELECT 1")))
    assert seen[1] == seen[0] == ("ProgrammingError", 1064, ("OperationalError", (2006, "")))


def _killed_sequence(module, conn_kwargs, root, steps):
    c = _connect(module, **conn_kwargs)
    _kill(root, c)
    return [(name, outcome(step, c)) for name, step in steps]


KILLED_SEQUENCES = {
    "execute": [("execute", lambda c: c.cursor().execute("SELECT 1")),
                ("execute again", lambda c: c.cursor().execute("SELECT 1")),
                ("ping", lambda c: c.ping()),
                ("errno", lambda c: (c.errno(), c.error(), c.sqlstate())),
                ("close", lambda c: c.close()),
                ("close again", lambda c: c.close()),
                ("execute after close", lambda c: c.cursor().execute("SELECT 1"))],
    "lost then close": [("execute", lambda c: c.cursor().execute("SELECT 1")),
                        ("errno", lambda c: (c.errno(), c.error(), c.sqlstate())),
                        ("close", lambda c: c.close()),
                        ("execute after close", lambda c: c.cursor().execute("SELECT 1")),
                        ("close again", lambda c: c.close())],
    "close first": [("close", lambda c: c.close()),
                    ("execute", lambda c: c.cursor().execute("SELECT 1")),
                    ("close again", lambda c: c.close())],
    "ping": [("ping", lambda c: c.ping()),
             ("execute", lambda c: c.cursor().execute("SELECT 1"))],
    "commit": [("commit", lambda c: c.commit()), ("rollback", lambda c: c.rollback())],
    "rollback": [("rollback", lambda c: c.rollback())],
}


@pytest.mark.parametrize("sequence", sorted(KILLED_SEQUENCES))
def test_killed_connection_as_mysqlclient(MySQLdb, conn_kwargs, root_conn_kwargs, sequence):
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        steps = KILLED_SEQUENCES[sequence]
        real = _killed_sequence(REAL, conn_kwargs, root, steps)
        ours = _killed_sequence(MySQLdb, conn_kwargs, root, steps)
    finally:
        root.close()
    assert ours == real
    assert real[0][1][0] in ("OperationalError", "ok")


def test_wait_timeout_as_mysqlclient(MySQLdb, conn_kwargs):
    seen = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        c.cursor().execute("SET SESSION wait_timeout = 1")
        time.sleep(2.5)
        first = outcome(c.cursor().execute, "SELECT 1")
        second = outcome(c.cursor().execute, "SELECT 1")
        seen.append((first, second, c.errno()))
        c.close()
    (real_first, real_second, real_errno), (first, second, errno) = seen
    # same class and number; mysqlc's first message adds the socket error:
    # "Server has gone away (Connection reset by peer)"
    assert first[0] == real_first[0] == "OperationalError"
    assert first[1][0] == real_first[1][0] == 2006
    assert first[1][1].startswith(real_first[1][1])
    assert second == real_second == ("OperationalError", (2006, "Server has gone away"))
    assert errno == real_errno == 2006


def test_cursor_of_closed_connection(MySQLdb, conn_kwargs):
    seen = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        cur = c.cursor()
        cur.execute("SELECT 1")
        c.close()
        seen.append((outcome(cur.fetchone), outcome(cur.execute, "SELECT 2"),
                     outcome(cur.executemany, "INSERT INTO t VALUES (%s)", [(1,)]),
                     outcome(cur.callproc, "p", (1,))))
    assert seen[1] == seen[0]
    assert seen[0][1] == ("OperationalError", (2006, ""))


def test_unbuffered_cursor_of_closed_connection(MySQLdb, conn_kwargs):
    seen = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        cur = c.cursor(module.cursors.SSCursor)
        cur.execute("SELECT seq FROM seq_1_to_100000")
        first = cur.fetchone()
        c.close()
        # the rows are lost: every fetch says so, none returns an empty end
        seen.append((first, outcome(cur.fetchone), outcome(cur.fetchall),
                     outcome(cur.fetchmany, 5)))
    assert seen[1] == seen[0]
    assert seen[0][1] == ("OperationalError", (2006, ""))


def test_unbuffered_cursor_killed_mid_stream(MySQLdb, conn_kwargs, root_conn_kwargs):
    seen = []
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        for module in (REAL, MySQLdb):
            c = _connect(module, **conn_kwargs)
            cur = c.cursor(module.cursors.SSCursor)
            cur.execute("SELECT seq, REPEAT('x', 1000) FROM seq_1_to_100000")
            cur.fetchone()
            _kill(root, c)
            r = outcome(lambda: len(cur.fetchall()))
            seen.append((r, c.errno(), c.error(), c.sqlstate()))
            c.close()
    finally:
        root.close()
    assert seen[1] == seen[0]
    assert seen[0][1] == 2013


def test_sqlalchemy_is_disconnect_for_each_case(MySQLdb, conn_kwargs, root_conn_kwargs):
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy.dialects.mysql.mysqldb import MySQLDialect_mysqldb
    dialect = MySQLDialect_mysqldb(dbapi=MySQLdb)
    errors = []
    c = MySQLdb.connect(**conn_kwargs)
    c.close()
    for op in (lambda: c.cursor().execute("SELECT 1"), c.ping, c.commit, c.rollback, c.close):
        errors.append(outcome(op))
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        c = MySQLdb.connect(**conn_kwargs)
        _kill(root, c)
        errors.append(outcome(c.cursor().execute, "SELECT 1"))
        errors.append(outcome(c.cursor().execute, "SELECT 1"))
    finally:
        root.close()
    assert len(errors) == 7
    for kind, args in errors:
        exc = getattr(MySQLdb, kind)(*args)
        assert dialect.is_disconnect(exc, None, None), (kind, args)
    assert sa.__version__ >= "2.1"


def test_sqlalchemy_pool_reconnects_after_kill(MySQLdb, server, root_conn_kwargs):
    sa = pytest.importorskip("sqlalchemy")
    kw = server.connect_kwargs()
    url = sa.engine.URL.create("mysql+mysqldb", username=kw["user"], password=kw["password"],
                               host=kw["host"], port=kw["port"], database=kw["database"])
    engine = sa.create_engine(url, pool_size=1, max_overflow=0)   # no pre-ping
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        assert engine.dialect.dbapi is MySQLdb
        with engine.connect() as conn:
            old = conn.connection.dbapi_connection
            assert isinstance(old, mysqlc.Connection)
            old_id = old.thread_id()
        _kill(root, old)
        with engine.connect() as conn:
            with pytest.raises(sa.exc.OperationalError) as info:
                conn.execute(sa.text("SELECT 1"))
            assert info.value.connection_invalidated
            assert info.value.orig.args[0] == 2013
        with engine.connect() as conn:       # the pool replaced the dead connection
            assert conn.scalar(sa.text("SELECT 2")) == 2
            assert conn.connection.dbapi_connection.thread_id() != old_id
    finally:
        root.close()
        engine.dispose()


# ---------------------------------------------------------------- errno(), error(), sqlstate()

FAILING = [
    "SELEC 1",
    "SELECT * FROM no_such_table_here",
    "SIGNAL SQLSTATE '45001' SET MESSAGE_TEXT = 'boom', MYSQL_ERRNO = 1644",
    "SELECT no_such_column FROM (SELECT 1 AS a) AS t",
    "INSERT INTO no_such_table_here VALUES (1)",
]


def _last_error_trace(module, conn_kwargs, prepared=False):
    c = _connect(module, **conn_kwargs)
    cur = c.cursor(prepared=True) if prepared else c.cursor()
    trace = [("fresh", c.errno(), c.error(), c.sqlstate())]
    for sql in FAILING:
        r = outcome(cur.execute, sql)
        trace.append((sql, r[0], c.errno(), c.error(), c.sqlstate()))
        cur.execute("SELECT 1")
        trace.append(("ok", c.errno(), c.error(), c.sqlstate()))
    # execute() clears the record first, even when its parameters then do not format
    outcome(cur.execute, "SELEC 2")
    trace.append(("error", c.errno(), c.sqlstate()))
    outcome(cur.execute, "SELECT %s, %s", (1,))
    trace.append(("format error", c.errno(), c.sqlstate()))
    c.commit()
    trace.append(("commit", c.errno(), c.error(), c.sqlstate()))
    r = outcome(c.select_db, "no_such_db_here")
    trace.append(("select_db", r[0], c.errno(), c.error(), c.sqlstate()))
    r = outcome(cur.executemany, "INSERT INTO no_such_table_here (a) VALUES (%s)", [(1,), (2,)])
    trace.append(("executemany", r[0], c.errno(), c.error(), c.sqlstate()))
    c.ping()
    trace.append(("ping", c.errno(), c.error(), c.sqlstate()))
    c.close()
    return trace


def test_errno_error_sqlstate_as_mysqlclient(MySQLdb, conn_kwargs):
    real = _last_error_trace(REAL, conn_kwargs)
    ours = _last_error_trace(MySQLdb, conn_kwargs)
    assert ours == real
    assert ("SIGNAL SQLSTATE '45001' SET MESSAGE_TEXT = 'boom', MYSQL_ERRNO = 1644",
            "OperationalError", 1644, "boom", "45001") in real


def test_errno_error_sqlstate_prepared(conn_kwargs):
    real = _last_error_trace(REAL, conn_kwargs)
    ours = _last_error_trace(mysqlc, conn_kwargs, prepared=True)
    assert ours == real


# ---------------------------------------------------------------- cursor._executed

@pytest.fixture
def table(conn):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS surface_t")
    cur.execute("CREATE TABLE surface_t (a INT, b VARCHAR(20))")
    yield "surface_t"
    cur.execute("DROP TABLE IF EXISTS surface_t")


def _executed_trace(module, conn_kwargs, prepared=False):
    c = _connect(module, **conn_kwargs)
    cur = c.cursor(prepared=True) if prepared else c.cursor()
    trace = []
    cur.execute("SELECT %s, %s", (1, "it's"))
    trace.append(cur._executed)
    rows = [(i, "r%d" % i) for i in range(5)]
    cur.executemany("INSERT INTO surface_t (a, b) VALUES (%s, %s)", rows)
    trace.append(cur._executed)
    cur.execute("SELECT 2")
    trace.append(cur._executed)
    cur.executemany("INSERT INTO surface_t (a, b) VALUES (%(a)s, %(b)s)",
                    [{"a": 7, "b": "x"}, {"a": 8, "b": None}])
    trace.append(cur._executed)
    cur.executemany("UPDATE surface_t SET b = %s WHERE a = %s", [("u", 1), ("v", 2)])
    trace.append(cur._executed)
    cur.executemany("INSERT INTO surface_t (a, b) VALUES (%(a)s, %(b)s) "
                    "ON DUPLICATE KEY UPDATE b = VALUES(b)",
                    [{"a": 9, "b": "d"}, {"a": 10, "b": "e"}])
    trace.append(cur._executed)
    cur.executemany("INSERT INTO surface_t (`a`, b) VALUES (%s, '100%%')", [(11,), (12,)])
    trace.append(cur._executed)
    cur.max_stmt_length = 60           # the multi-row INSERT split: the last one is kept
    cur.executemany("INSERT INTO surface_t (a, b) VALUES (%s, %s)", rows)
    trace.append(cur._executed)
    c.close()
    return trace


def test_executed_as_mysqlclient(MySQLdb, conn_kwargs, table):
    real = _executed_trace(REAL, conn_kwargs)
    # the same bytes: str escaped for the session's sql_mode, as mysqlclient does
    ours = _executed_trace(MySQLdb, conn_kwargs)
    assert ours == real
    assert real[0] == b"SELECT 1, 'it\\'s'"
    assert real[1] == (b"INSERT INTO surface_t (a, b) VALUES (0, 'r0'),(1, 'r1'),(2, 'r2'),"
                       b"(3, 'r3'),(4, 'r4')")


def test_executed_bulk_path_is_taken(conn, table):
    # the rows go through COM_STMT_BULK_EXECUTE (MariaDB) and _executed is still the
    # multi-row statement the text path would have sent last
    if not conn._conn.bulk_operations:
        pytest.skip("server without COM_STMT_BULK_EXECUTE")
    cur = conn.cursor()
    cur.execute("SELECT 1")
    cur.executemany("INSERT INTO surface_t (a, b) VALUES (%s, %s)", [(1, "a"), (2, None)])
    assert cur._executed_from is not None         # the bulk path ran
    assert "_executed" not in vars(cur)          # not built yet: lazily on first access
    assert cur._executed == b"INSERT INTO surface_t (a, b) VALUES (1, 'a'),(2, NULL)"
    cur.execute("SELECT COUNT(*) FROM surface_t")
    assert cur.fetchone() == (2,)


def test_executed_prepared_as_mysqlclient(conn_kwargs, table):
    real = _executed_trace(REAL, conn_kwargs)
    ours = _executed_trace(mysqlc, conn_kwargs, prepared=True)
    assert ours == real
    c = mysqlc.connect(**conn_kwargs)
    try:
        cur = c.cursor(prepared=True)
        cur.execute("SELECT ?, '?', ? /* ? */", (1, b"x'y"))    # qmark placeholders
        assert cur._executed == b"SELECT 1, '?', 'x\\'y' /* ? */"
    finally:
        c.close()


def test_executed_callproc_as_mysqlclient(MySQLdb, conn_kwargs, conn):
    cur = conn.cursor()
    cur.execute("DROP PROCEDURE IF EXISTS surface_p")
    cur.execute("CREATE PROCEDURE surface_p(IN a INT, INOUT b VARCHAR(10)) "
                "BEGIN SELECT a; SET b = CONCAT(b, '!'); END")
    try:
        seen = []
        for module in (REAL, MySQLdb):
            c = _connect(module, **conn_kwargs)
            cur = c.cursor()
            assert cur.callproc("surface_p", (5, "hi")) == (5, "hi")
            executed = cur._executed
            rows = cur.fetchall()
            while cur.nextset():
                pass
            cur.execute("SELECT @_surface_p_0, @`_surface_p_1`")
            seen.append((executed, rows, cur.fetchall()))
            c.close()
        assert seen[1] == seen[0]
        assert seen[0][0] == b"CALL `surface_p`(@`_surface_p_0`,@`_surface_p_1`)"
        assert seen[0][2] == ((5, "hi!"),)
    finally:
        conn.cursor().execute("DROP PROCEDURE IF EXISTS surface_p")


def test_callproc_name_is_one_identifier(MySQLdb, conn_kwargs, conn):
    # a name with a backquote is quoted (doubled), not spliced into the SQL
    seen = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        r = outcome(c.cursor().callproc, "x`; DROP TABLE t; --", (1,))
        seen.append((r[0], r[1][0]))
        c.close()
    assert seen[1] == seen[0] == ("OperationalError", 1305)   # PROCEDURE does not exist


# ---------------------------------------------------------------- small surface items

def test_setoutputsize(MySQLdb, conn):
    cur = conn.cursor()
    assert cur.setoutputsize(100) is None
    assert cur.setoutputsize(100, 0) is None
    assert cur.setoutputsizes(1) is None          # the old name still works
    # mysqlclient itself spells it setoutputsizes (so the alias is its name too)
    assert hasattr(REAL.cursors.BaseCursor, "setoutputsizes")
    assert MySQLdb.cursors.BaseCursor.setoutputsize is mysqlc.cursors.BaseCursor.setoutputsize


INSERT_QUERIES = [
    "INSERT INTO t (a, b) VALUES (%s, %s)",
    "insert into t values (%s)",
    "INSERT INTO t (a) VALUE (%(a)s)",
    "  REPLACE INTO t (a, b) VALUES (%s,%s);",
    "INSERT INTO t (a) VALUES (%s) ON DUPLICATE KEY UPDATE a = VALUES(a)",
    "INSERT INTO t (a, b)\nVALUES\n(%s, %s)\n",
    "SELECT %s",
    "UPDATE t SET a = %s",
    "INSERT INTO t SELECT %s",
    # mysqlclient's own test: any ON DUPLICATE tail is the third group
    "INSERT INTO TEST (ID, NAME) VALUES (%(id_name)s, %(name)s) ON duplicate update",
    "INSERT INTO t (a) VALUES (%(a)s) ON DUPLICATE KEY UPDATE a = %(a)s",
    "INSERT INTO percent_test (`A%%`, `B%%`) VALUES (%s, %s)",
]


def test_re_insert_values_is_a_str_pattern(MySQLdb):
    ours = MySQLdb.cursors.RE_INSERT_VALUES
    assert isinstance(ours.pattern, str)
    for q in INSERT_QUERIES:
        m_real, m_ours = REAL.cursors.RE_INSERT_VALUES.match(q), ours.match(q)
        assert (m_real is None) == (m_ours is None), q
        if m_real is not None:
            # group 1 prefix, 2 the row, 3 the rest, as mysqlclient's
            assert m_ours.group(1) == m_real.group(1), q
            assert m_ours.group(2) == m_real.group(2), q
            assert m_ours.group(3).strip() == m_real.group(3).strip(), q
    with pytest.raises(TypeError):
        ours.match(b"INSERT INTO t VALUES (%s)")     # a str pattern, as mysqlclient's


TIME_INPUTS = [
    "2024-01-02", "2024-01-02 03:04", "2024-01-02 03", "2024-01-02 03:04:05",
    "2024-01-02T03:04:05", "2024-01-02 03:04:05.5", "2024-01-02 03:04:05.123456",
    "2024-01-02 03:04:05.1234567", "0000-00-00", "0000-00-00 00:00:00", "2024-1-2",
    "2024-01-02 3:04:05", "2024-02-30", "", "abc", "2024-01-02 03:04:05.", "12:34:56",
    "-12:34:56", "838:59:59", "-838:59:59.5", "12:34", "1:2:3", "12:34:56.1234567",
    "24:00:00", "00:00:00.000001", "-00:30:00", " 12:34:56", "12:34:56 ",
    "2024-01-02 03:04:05+02:00", "2024-01-02 03:04:-5", "1:2:3.x", "1:2:3.4.5", "20240102",
    "2024-01-02xx03:04:05", "12:60:00", "2024-13-01", "9999-12-31 23:59:59.999999",
    "12:55:30.123456789", "12:55:30.123456789123456", " -1:00:00", "-0:00:00.5",
    b"2024-01-02 03:04:05", b"2024-01-02", None, 5, 1.5,
]
TIME_PARSERS = ["Date_or_None", "DateTime_or_None", "TimeDelta_or_None", "Time_or_None"]
# documented differences (docs/compat.md): mysqlc's TIME parsers also take ASCII bytes;
# Time_or_None gives None for a fraction beyond C long (mysqlclient: OverflowError)
TIME_DIFFERENCES = {
    (name, s) for name in ("TimeDelta_or_None", "Time_or_None") for s in TIME_INPUTS
    if isinstance(s, bytes)} | {("Time_or_None", "12:55:30.123456789123456")}


@pytest.mark.parametrize("name", TIME_PARSERS)
def test_times_parsers_as_mysqlclient(MySQLdb, name):
    real, ours = getattr(REAL.times, name), getattr(MySQLdb.times, name)
    for s in TIME_INPUTS:
        if (name, s) in TIME_DIFFERENCES:
            continue
        assert outcome(ours, s) == outcome(real, s), (name, s)


TIMEDELTAS = [
    datetime.timedelta(0), datetime.timedelta(seconds=1), -datetime.timedelta(minutes=30),
    -datetime.timedelta(days=1, hours=2), datetime.timedelta(seconds=83579, microseconds=51000),
    -datetime.timedelta(seconds=83579, microseconds=51000), -datetime.timedelta(microseconds=1),
    datetime.timedelta(days=34, hours=22, minutes=59, seconds=59, microseconds=999999),
    datetime.datetime(2015, 1, 1, 10, 11, 12) - datetime.datetime(2015, 1, 1, 11, 12, 13),
]


def test_timedelta_text_as_mysqlclient(MySQLdb, conn):
    t = MySQLdb.times
    cur = conn.cursor()
    for v in TIMEDELTAS:
        assert t.format_TIMEDELTA(v) == REAL.times.format_TIMEDELTA(v), v
        literal = t.DateTimeDelta2literal(v, None)
        assert literal == REAL.times.DateTimeDelta2literal(v, None), v
        # the server reads the text back as the same duration
        cur.execute("SELECT CAST(%s AS TIME(6))" % literal.decode("ascii"))
        assert cur.fetchone()[0] == v, v
    assert t.TimeDelta_or_None("12:55:30.123456789") == datetime.timedelta(0, 46653, 456789)


def test_times_documented_differences(MySQLdb):
    t = MySQLdb.times
    assert t.TimeDelta_or_None(b"-01:02:03.5") == -datetime.timedelta(hours=1, minutes=2,
                                                                      seconds=3.5)
    assert t.Time_or_None(b"01:02:03") == datetime.time(1, 2, 3)
    assert t.DateTime_or_None("2024-01-02 03:04") == datetime.datetime(2024, 1, 2, 3, 4)


def test_times_localtime(MySQLdb):
    assert MySQLdb.times.localtime is REAL.times.localtime is time.localtime
    assert MySQLdb.times.TimestampFromTicks(0) == REAL.times.TimestampFromTicks(0)


# ---------------------------------------------------------------- user converters' arguments

# (SQL expression, FIELD_TYPE code): one column of each kind
CONVERTER_COLUMNS = [
    ("CAST(-12345678901 AS SIGNED)", 8), ("CAST(18446744073709551615 AS UNSIGNED)", 8),
    ("CAST(7 AS INT)", 3), ("1.5e0", 5), ("CAST(2.5 AS FLOAT)", 4), ("y", 13),
    ("CAST(1.25 AS DECIMAL(5,2))", 246), ("DATE'2024-01-02'", 10), ("TIME'-01:02:03.5'", 11),
    ("TIMESTAMP'2024-01-02 03:04:05'", 12), ("b", 16),
    ("t", 1), ("s", 2),
    ("m", 9), ("g", 255),
]
TEXT_COLUMNS = [("'caf\u00e9'", 253), ("CAST('t' AS CHAR)", 253), ("CAST(x'0102' AS BINARY)", 253),
                ("e", 254), ("j", 252)]


def _conv_results(module, conn_kwargs, exprs, use_unicode):
    conv = dict(module.converters.conversions)
    for _expr, code in exprs:
        conv[code] = lambda v, _c=code: ("called", _c, type(v).__name__, v)
    c = _connect(module, conv=conv, use_unicode=use_unicode, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE conv_bits (b BIT(3), t TINYINT, s SMALLINT, "
                    "m MEDIUMINT, g GEOMETRY, e ENUM('a', 'b'), j JSON, y YEAR)")
        cur.execute("INSERT INTO conv_bits VALUES (b'101', -1, 300, 70000, POINT(1, 2), 'b', "
                    "'[1]', 2024)")
        cur.execute("SELECT " + ", ".join(e for e, _ in exprs) + " FROM conv_bits")
        assert [d[1] for d in cur.description] == [code for _e, code in exprs]
        return cur.fetchone()
    finally:
        c.close()


@pytest.mark.parametrize("use_unicode", [True, False])
def test_converter_arguments_as_mysqlclient(MySQLdb, conn_kwargs, use_unicode):
    """A converter of a number column gets the wire bytes, of DECIMAL, dates and times
    the text (str), of binary columns bytes (mysqlclient's _mysql_field_to_python)."""
    ours = _conv_results(MySQLdb, conn_kwargs, CONVERTER_COLUMNS, use_unicode)
    real = _conv_results(REAL, conn_kwargs, CONVERTER_COLUMNS, use_unicode)
    assert ours == real
    assert [r[2] for r in ours] == ["bytes"] * 6 + ["str"] * 4 + ["bytes"] * 5
    # str, bytes and int as the converter: the text, the bytes, the number
    for fn, expected in ((str, "7"), (bytes, b"7"), (int, 7)):
        c = MySQLdb.connect(conv={3: fn}, **conn_kwargs)
        cur = c.cursor()
        cur.execute("SELECT CAST(7 AS INT)")
        assert cur.fetchone() == (expected,)
        c.close()


def test_converter_arguments_of_text_columns(MySQLdb, conn_kwargs):
    """Documented difference: with use_unicode=False a string column's converter gets
    the bytes (as mysqlclient); with use_unicode=True mysqlc calls it with the value
    mysqlclient returns (str, bytes for the binary charset), where mysqlclient
    replaces a string column's converter by its own str/bytes rule."""
    for use_unicode in (True, False):
        ours = _conv_results(MySQLdb, conn_kwargs, TEXT_COLUMNS, use_unicode)
        real = _conv_results(REAL, conn_kwargs, TEXT_COLUMNS, use_unicode)
        if use_unicode:
            assert ours == tuple(("called", code, type(v).__name__, v)
                                 for v, (_e, code) in zip(real, TEXT_COLUMNS))
            assert real == ("caf\u00e9", "t", b"\x01\x02", "b", "[1]")
        else:
            assert ours == real
            assert [r[2] for r in ours] == ["bytes"] * 5


# ---------------------------------------------------------------- closed, DictCursor keys

def test_closed_as_mysqlclient(MySQLdb, conn_kwargs):
    got = []
    for module in (REAL, MySQLdb):
        cls = module.connections.Connection
        fresh = cls.__new__(cls)                 # before __init__: closed
        c = _connect(module, **conn_kwargs)
        opened = c.closed
        with c:
            inside = c.closed
        got.append((fresh.closed, opened, inside, c.closed, type(c.closed).__name__))
    assert got[0] == got[1] == (1, 0, 0, 1, "int")


def test_dictcursor_keys_as_mysqlclient(MySQLdb, conn_kwargs):
    """Repeated column names keyed table.column; _fetch_type = 2 keys every column with a
    table table.column (mysqlclient's old fetch type); the keys are shared by the rows."""
    got = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        try:
            setup = c.cursor()
            setup.execute("CREATE TEMPORARY TABLE dk1 (a INT, b INT, c INT)")
            setup.execute("CREATE TEMPORARY TABLE dk2 (b INT, c INT)")
            setup.execute("INSERT INTO dk1 VALUES (1, 1, 47), (2, 2, 47)")
            setup.execute("INSERT INTO dk2 VALUES (1, 1), (2, 2)")
            out = []
            for cls in (module.cursors.DictCursor, module.cursors.SSDictCursor):
                for fetch_type in (1, 2):
                    cur = c.cursor(cls)
                    cur._fetch_type = fetch_type
                    cur.execute("SELECT *, 1 + 1 AS e FROM dk1 JOIN dk2 ON dk1.b = dk2.b "
                                "ORDER BY dk1.a")
                    rows = list(cur.fetchall())
                    assert all(a is b for a, b in zip(rows[0], rows[1]))
                    out.append(rows)
                    cur.close()
            got.append(out)
        finally:
            c.close()
    assert got[0] == got[1]
    assert got[1][0][0] == {"a": 1, "b": 1, "c": 47, "dk2.b": 1, "dk2.c": 1, "e": 2}
    assert got[1][1][0] == {"dk1.a": 1, "dk1.b": 1, "dk1.c": 47, "dk2.b": 1, "dk2.c": 1,
                            "e": 2}


def test_more_results_as_mysqlclient(MySQLdb, conn_kwargs):
    got = []
    for module in (REAL, MySQLdb):
        c = _connect(module, **conn_kwargs)
        cur = c.cursor()
        cur.execute("SELECT 17; SELECT 2")
        trace = [c.more_results(), cur.fetchall(), bool(cur.nextset()), c.more_results(),
                 cur.fetchall(), cur.nextset()]
        cur.execute("SELECT 3")
        trace += [c.more_results(), cur.fetchall()]
        c.close()
        trace.append(outcome(c.more_results)[0])
        got.append(trace)
    assert got[0] == got[1]
    assert got[1][:4] == [True, ((17,),), True, False]
