"""PEP 249 and the MySQLdb (mysqlclient) surface, against the real server.

Module globals, cursors (rowcount, lastrowid, fetch*, iteration, arraysize,
description, nextset, callproc, mogrify, scroll, DictCursor keys), transactions,
connection methods and options (init_command, sql_mode, charset, unix_socket,
client_flag), executemany's multi-row rewrite, and 16 MiB packet splitting in both
directions.

Objects that must be visible from a second connection live in real tables named
``tdbapi_*`` (dropped afterwards); everything else uses temporary tables.
"""

import datetime
import decimal
import hashlib
import time

import pytest

import mysqlc
import mysqlc.cursors
from mysqlc.constants import CLIENT, FIELD_TYPE

D = decimal.Decimal


def _status(conn, name):
    """A session status counter (e.g. Com_insert) as int."""
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE %s", (name,))
    row = cur.fetchone()
    cur.close()
    return int(row[1])


@pytest.fixture
def table(conn_kwargs):
    """Factory for real InnoDB tables ``tdbapi_<name>``, dropped after the test."""
    created = []

    def make(name, columns):
        full = "tdbapi_" + name
        c = mysqlc.connect(autocommit=True, **conn_kwargs)
        try:
            cur = c.cursor()
            cur.execute("DROP TABLE IF EXISTS %s" % full)
            cur.execute("CREATE TABLE %s (%s) ENGINE=InnoDB CHARACTER SET utf8mb4"
                        % (full, columns))
        finally:
            c.close()
        created.append(full)
        return full

    yield make
    c = mysqlc.connect(autocommit=True, **conn_kwargs)
    try:
        for full in created:
            c.cursor().execute("DROP TABLE IF EXISTS %s" % full)
    finally:
        c.close()


# =========================================================================== module surface

def test_module_globals():
    assert mysqlc.apilevel == "2.0"
    assert mysqlc.threadsafety == 1
    assert mysqlc.paramstyle == "format"
    for name in ("Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
                 "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
                 "NotSupportedError"):
        assert issubclass(getattr(mysqlc, name), Exception)
    assert issubclass(mysqlc.Warning, Exception)
    assert not issubclass(mysqlc.Warning, mysqlc.Error)
    assert issubclass(mysqlc.InterfaceError, mysqlc.Error)
    assert issubclass(mysqlc.DatabaseError, mysqlc.Error)
    for name in ("DataError", "OperationalError", "IntegrityError", "InternalError",
                 "ProgrammingError", "NotSupportedError"):
        assert issubclass(getattr(mysqlc, name), mysqlc.DatabaseError)


def test_type_constructors():
    assert mysqlc.Date(2024, 2, 29) == datetime.date(2024, 2, 29)
    assert mysqlc.Time(1, 2, 3) == datetime.time(1, 2, 3)
    assert mysqlc.Timestamp(2024, 1, 2, 3, 4, 5) == datetime.datetime(2024, 1, 2, 3, 4, 5)
    ticks = time.mktime((2024, 5, 6, 7, 8, 9, 0, 0, -1))
    assert mysqlc.DateFromTicks(ticks) == datetime.date(2024, 5, 6)
    assert mysqlc.TimeFromTicks(ticks) == datetime.time(7, 8, 9)
    assert mysqlc.TimestampFromTicks(ticks) == datetime.datetime(2024, 5, 6, 7, 8, 9)
    assert mysqlc.Binary(b"\x00x") == b"\x00x"
    assert isinstance(mysqlc.Binary(b"x"), bytes)


def test_connection_exposes_exceptions(conn):
    assert conn.Error is mysqlc.Error
    assert conn.ProgrammingError is mysqlc.ProgrammingError
    assert conn.OperationalError is mysqlc.OperationalError


# =========================================================================== rowcount & co

def test_rowcount_select_and_update(conn):
    cur = conn.cursor()
    assert cur.rowcount == -1
    cur.execute("CREATE TEMPORARY TABLE rc (id INT PRIMARY KEY, a INT)")
    assert cur.description is None
    n = cur.execute("INSERT INTO rc VALUES (1, 1), (2, 1), (3, 2)")
    assert n == 3 and cur.rowcount == 3
    assert conn.affected_rows() == 3
    n = cur.execute("SELECT * FROM rc WHERE a = %s", (1,))
    assert n == 2 and cur.rowcount == 2
    n = cur.execute("UPDATE rc SET a = 1")       # only one row changes
    assert n == 1 and cur.rowcount == 1
    assert conn.affected_rows() == 1
    assert cur.description is None
    n = cur.execute("DELETE FROM rc WHERE id > %s", (1,))
    assert n == 2
    n = cur.execute("SELECT * FROM rc WHERE id > 100")
    assert n == 0 and cur.rowcount == 0
    assert cur.fetchall() == ()


def test_rowcount_found_rows_flag(conn_kwargs):
    c = mysqlc.connect(client_flag=CLIENT.FOUND_ROWS, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE rc (id INT PRIMARY KEY, a INT)")
        cur.execute("INSERT INTO rc VALUES (1, 1), (2, 1), (3, 2)")
        n = cur.execute("UPDATE rc SET a = 1")   # 3 matched, 1 changed
        assert n == 3 and cur.rowcount == 3
        assert c.affected_rows() == 3
        assert c.info() is not None and "matched: 3" in c.info()
    finally:
        c.close()


def test_lastrowid_and_insert_id(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE ai (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, "
                "v INT)")
    cur.execute("INSERT INTO ai (v) VALUES (%s)", (10,))
    assert cur.lastrowid == 1
    assert conn.insert_id() == 1
    cur.execute("INSERT INTO ai (v) VALUES (11), (12), (13)")
    assert cur.lastrowid == 2          # the first id of a multi-row insert (LAST_INSERT_ID)
    assert conn.insert_id() == 2
    cur.execute("INSERT INTO ai (id, v) VALUES (%s, %s)", (18446744073709551614, 1))
    assert cur.lastrowid == 18446744073709551614
    cur.execute("SELECT LAST_INSERT_ID()")
    assert cur.fetchone() == (2,)
    cur.execute("UPDATE ai SET v = v + 1 WHERE id = 1")
    assert cur.lastrowid == 0


def test_fetch_methods_and_arraysize(conn):
    cur = conn.cursor()
    cur.execute("SELECT seq FROM seq_1_to_10")
    assert cur.rownumber == 0
    assert cur.fetchone() == (1,)
    assert cur.arraysize == 1
    assert cur.fetchmany() == ((2,),)
    cur.arraysize = 3
    assert cur.fetchmany() == ((3,), (4,), (5,))
    assert cur.fetchmany(2) == ((6,), (7,))
    assert cur.rownumber == 7
    assert cur.fetchall() == ((8,), (9,), (10,))
    assert cur.fetchone() is None
    assert cur.fetchmany(5) == ()
    assert cur.fetchall() == ()
    cur.execute("SELECT seq, seq * 2 FROM seq_1_to_4")
    assert [r for r in cur] == [(1, 2), (2, 4), (3, 6), (4, 8)]
    cur.execute("SELECT seq FROM seq_1_to_3")
    cur.fetchone()
    assert list(cur) == [(2,), (3,)]      # iteration continues from the current row


def test_description_none_after_non_select(conn):
    cur = conn.cursor()
    cur.execute("SELECT 1 AS one")
    assert cur.description[0][0] == "one"
    cur.execute("SET @a = 1")
    assert cur.description is None
    assert cur.rowcount == 0
    cur.execute("DO 1")
    assert cur.description is None


def test_scroll(conn):
    cur = conn.cursor()
    cur.execute("SELECT seq FROM seq_1_to_5")
    cur.scroll(2)
    assert cur.fetchone() == (3,)
    cur.scroll(-2)
    assert cur.fetchone() == (2,)
    cur.scroll(0, mode="absolute")
    assert cur.fetchone() == (1,)
    cur.scroll(4, mode="absolute")
    assert cur.fetchone() == (5,)
    with pytest.raises(IndexError):
        cur.scroll(5, mode="absolute")
    with pytest.raises(IndexError):
        cur.scroll(-10)
    with pytest.raises(IndexError):
        cur.scroll(-1, mode="absolute")
    assert cur.rownumber == 5          # failed scrolls do not move
    with pytest.raises(mysqlc.ProgrammingError):
        cur.scroll(0, mode="sideways")


def test_mogrify(conn):
    cur = conn.cursor()
    # escaped for the session's sql_mode, as mysqlclient (docs/compat.md "Escaping")
    assert cur.mogrify("SELECT %s, %s, %s", (1, "a'b", None)) == "SELECT 1, 'a\\'b', NULL"
    assert cur.mogrify("SELECT %(x)s + %(x)s", {"x": 2}) == "SELECT 2 + 2"
    assert cur.mogrify("SELECT * FROM t WHERE id IN %s", ((1, 2, 3),)) == \
        "SELECT * FROM t WHERE id IN (1,2,3)"
    assert cur.mogrify("SELECT '100%'") == "SELECT '100%'"
    assert cur.mogrify("SELECT %s", (datetime.date(2024, 1, 2),)) == "SELECT '2024-01-02'"
    # what mogrify shows is what execute sends
    q = cur.mogrify("SELECT %s, %s", ("é😀", D("1.50")))
    cur.execute(q)
    assert cur.fetchone() == ("é😀", D("1.50"))


# =========================================================================== DictCursor

def test_dict_cursor_keys(conn):
    cur = conn.cursor(mysqlc.cursors.DictCursor)
    cur.execute("CREATE TEMPORARY TABLE da (id INT, name VARCHAR(10))")
    cur.execute("CREATE TEMPORARY TABLE db_ (id INT, name VARCHAR(10))")
    cur.execute("INSERT INTO da VALUES (1, 'a')")
    cur.execute("INSERT INTO db_ VALUES (1, 'b')")
    cur.execute("SELECT da.id, da.name, db_.id, db_.name FROM da JOIN db_ USING (id)")
    assert cur.fetchall() == ({"id": 1, "name": "a", "db_.id": 1, "db_.name": "b"},)
    cur.execute("SELECT x.id, y.id FROM da AS x JOIN db_ AS y")
    assert cur.fetchone() == {"id": 1, "y.id": 1}     # the alias is what the server sends
    cur.execute("SELECT 1 AS a, 2 AS b")
    row = cur.fetchone()
    assert row == {"a": 1, "b": 2} and list(row) == ["a", "b"]


def test_cursorclass_option(conn_kwargs):
    c = mysqlc.connect(cursorclass=mysqlc.cursors.DictCursor, **conn_kwargs)
    try:
        cur = c.cursor()
        assert isinstance(cur, mysqlc.cursors.DictCursor)
        cur.execute("SELECT 1 AS x")
        assert cur.fetchone() == {"x": 1}
        cur = c.cursor(mysqlc.cursors.Cursor)
        cur.execute("SELECT 1 AS x")
        assert cur.fetchone() == (1,)
    finally:
        c.close()


# =========================================================================== multiple results

@pytest.fixture
def two_result_proc(conn_kwargs):
    c = mysqlc.connect(autocommit=True, **conn_kwargs)
    cur = c.cursor()
    cur.execute("DROP PROCEDURE IF EXISTS tdbapi_two")
    cur.execute("CREATE PROCEDURE tdbapi_two(IN n INT, IN s VARCHAR(20), OUT total INT) "
                "BEGIN "
                "  SELECT seq FROM seq_1_to_100 WHERE seq <= n; "
                "  SELECT s AS s, CONCAT(s, '!') AS t; "
                "  SET total = n * 10; "
                "END")
    yield "tdbapi_two"
    cur.execute("DROP PROCEDURE IF EXISTS tdbapi_two")
    c.close()


def test_callproc_and_nextset(conn, two_result_proc):
    cur = conn.cursor()
    args = (3, "it's", 0)
    assert cur.callproc(two_result_proc, args) == args
    assert [d[0] for d in cur.description] == ["seq"]
    assert cur.fetchall() == ((1,), (2,), (3,))
    assert cur.nextset() is True
    assert [d[0] for d in cur.description] == ["s", "t"]
    assert cur.fetchall() == (("it's", "it's!"),)
    # the CALL's own status result, then nothing
    assert cur.nextset() is True
    assert cur.description is None
    assert cur.nextset() is None
    # IN/OUT values in the @_procname_n variables (mysqlclient semantics)
    cur.execute("SELECT @_tdbapi_two_0, @_tdbapi_two_1, @_tdbapi_two_2")
    assert cur.fetchone() == (3, "it's", 30)


def test_call_without_consuming_all_results(conn, two_result_proc):
    """Unread results of a CALL are drained before the next statement."""
    cur = conn.cursor()
    cur.execute("CALL %s(2, 'x', @out)" % two_result_proc)
    assert cur.fetchall() == ((1,), (2,))
    cur2 = conn.cursor()
    cur2.execute("SELECT @out")
    assert cur2.fetchone() == (20,)
    assert cur.nextset() is None      # another statement ran since


def test_nextset_multi_statements(conn_kwargs):
    c = mysqlc.connect(client_flag=CLIENT.MULTI_STATEMENTS, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE ms (a INT)")
        cur.execute("SELECT 1 AS a; INSERT INTO ms VALUES (1), (2); "
                    "SELECT 'x' AS b, 'y' AS c; UPDATE ms SET a = a + 1; SELECT a FROM ms "
                    "ORDER BY a")
        assert cur.fetchall() == ((1,),)
        assert cur.nextset() is True
        assert cur.description is None and cur.rowcount == 2
        assert cur.nextset() is True
        assert [d[0] for d in cur.description] == ["b", "c"]
        assert cur.fetchone() == ("x", "y")
        assert cur.nextset() is True
        assert cur.description is None and cur.rowcount == 2
        assert cur.nextset() is True
        assert cur.fetchall() == ((2,), (3,))
        assert cur.nextset() is None
        cur.execute("SELECT 5")
        assert cur.fetchone() == (5,)
    finally:
        c.close()


# =========================================================================== transactions

def test_commit_and_rollback(conn, conn_kwargs, table):
    t = table("tx", "id INT PRIMARY KEY, v VARCHAR(10)")
    assert conn.get_autocommit() is False      # PEP 249: autocommit off by default
    cur = conn.cursor()
    cur.execute("INSERT INTO %s VALUES (1, 'gone')" % t)
    cur.execute("SELECT COUNT(*) FROM %s" % t)
    assert cur.fetchone() == (1,)
    conn.rollback()
    cur.execute("SELECT COUNT(*) FROM %s" % t)
    assert cur.fetchone() == (0,)
    cur.execute("INSERT INTO %s VALUES (2, 'kept')" % t)
    other = mysqlc.connect(**conn_kwargs)
    try:
        ocur = other.cursor()
        ocur.execute("SELECT COUNT(*) FROM %s" % t)
        assert ocur.fetchone() == (0,)          # not committed yet
        conn.commit()
        other.commit()                          # end other's snapshot
        ocur.execute("SELECT id, v FROM %s" % t)
        assert ocur.fetchall() == ((2, "kept"),)
    finally:
        other.close()


def test_autocommit_on(conn, conn_kwargs, table):
    t = table("ac", "id INT PRIMARY KEY")
    conn.autocommit(True)
    assert conn.get_autocommit() is True
    cur = conn.cursor()
    cur.execute("SELECT @@autocommit")
    assert cur.fetchone() == (1,)
    cur.execute("INSERT INTO %s VALUES (1)" % t)
    other = mysqlc.connect(**conn_kwargs)
    try:
        ocur = other.cursor()
        ocur.execute("SELECT COUNT(*) FROM %s" % t)
        assert ocur.fetchone() == (1,)
    finally:
        other.close()
    conn.autocommit(False)
    assert conn.get_autocommit() is False
    cur.execute("SELECT @@autocommit")
    assert cur.fetchone() == (0,)


def test_autocommit_option(conn_kwargs):
    c = mysqlc.connect(autocommit=True, **conn_kwargs)
    try:
        assert c.get_autocommit() is True
        cur = c.cursor()
        cur.execute("SELECT @@autocommit")
        assert cur.fetchone() == (1,)
    finally:
        c.close()


# =========================================================================== connection methods

def test_connection_information(conn):
    cur = conn.cursor()
    info = conn.get_server_info()
    assert isinstance(info, str) and info[:1].isdigit()
    cur.execute("SELECT VERSION()")
    assert cur.fetchone()[0].startswith(info.split("-")[0])
    cur.execute("SELECT CONNECTION_ID()")
    assert cur.fetchone() == (conn.thread_id(),)
    assert conn.character_set_name() == "utf8mb4"
    cur.execute("SELECT @@character_set_client, @@character_set_results, "
                "@@character_set_connection")
    assert cur.fetchone() == ("utf8mb4", "utf8mb4", "utf8mb4")
    assert conn.open is True


def test_warning_count(conn):
    cur = conn.cursor()
    cur.execute("SELECT CAST('x' AS INT), CAST('y' AS INT)")
    assert cur.fetchone() == (0, 0)
    assert conn.warning_count() == 2
    assert cur.warning_count == 2
    warnings = conn.show_warnings()
    assert [w[1] for w in warnings] == [1292, 1292]
    cur.execute("SELECT 1")
    assert conn.warning_count() == 0


def test_ping_and_select_db(conn):
    assert conn.ping() is None
    conn.select_db("information_schema")
    cur = conn.cursor()
    cur.execute("SELECT DATABASE()")
    assert cur.fetchone() == ("information_schema",)
    conn.select_db("mysqlc_test")
    cur.execute("SELECT DATABASE()")
    assert cur.fetchone() == ("mysqlc_test",)
    with pytest.raises(mysqlc.OperationalError) as ei:
        conn.select_db("no_such_db_at_all")
    assert ei.value.args[0] == 1049
    conn.ping()


def test_escape_and_literals(conn):
    assert conn.escape_string("a'b\"c\\d\x00\n") == b"a\\'b\\\"c\\\\d\\0\\n"
    assert conn.string_literal("it's") == b"'it\\'s'"
    assert conn.string_literal(b"\x00\xff") == b"'\\0\xff'"
    assert conn.literal(None) == b"NULL"
    assert conn.literal(42) == b"42"
    assert conn.literal(True) == b"1"
    assert conn.literal("é") == "'é'".encode("utf-8")
    assert conn.literal(D("1.10")) == b"1.10"
    assert conn.literal(datetime.datetime(2024, 1, 2, 3, 4, 5, 6)) == \
        b"'2024-01-02 03:04:05.000006'"
    assert conn.literal((1, "a")) == b"(1,'a')"
    assert conn.escape("it's") == b"'it\\'s'"
    assert conn.escape(5) in ("5", b"5")


def test_cursor_context_manager(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
    assert cur.connection is None
    with pytest.raises(mysqlc.ProgrammingError):
        cur.execute("SELECT 1")
    with conn.cursor() as cur2:      # the connection goes on
        cur2.execute("SELECT 2")
        assert cur2.fetchone() == (2,)


def test_connection_context_manager(conn_kwargs):
    with mysqlc.connect(**conn_kwargs) as c:
        cur = c.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
        assert c.open
    assert c.open is False


def test_init_command_and_sql_mode(conn_kwargs):
    c = mysqlc.connect(init_command="SET @init = 42", sql_mode="ANSI_QUOTES,NO_BACKSLASH_ESCAPES",
                       **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT @init, @@SESSION.sql_mode")
        init, mode = cur.fetchone()
        assert init == 42
        assert set(mode.split(",")) == {"ANSI_QUOTES", "NO_BACKSLASH_ESCAPES"}
        # ANSI_QUOTES: "x" is an identifier now; NO_BACKSLASH_ESCAPES: parameters still work
        cur.execute('SELECT 1 AS "quoted id", %s', ("a\\b'c",))
        assert cur.fetchone() == (1, "a\\b'c")
        assert cur.description[0][0] == "quoted id"
    finally:
        c.close()


def test_charset_latin1_connection(conn_kwargs, table):
    t = table("l1", "id INT PRIMARY KEY, l VARCHAR(20) CHARACTER SET latin1, "
                    "u VARCHAR(20) CHARACTER SET utf8mb4")
    u = mysqlc.connect(autocommit=True, **conn_kwargs)
    try:
        u.cursor().execute("INSERT INTO %s VALUES (1, %%s, %%s)" % t, ("café €", "naïve Œ"))
    finally:
        u.close()
    c = mysqlc.connect(charset="latin1", autocommit=True, **conn_kwargs)
    try:
        assert c.character_set_name() == "latin1"
        cur = c.cursor()
        cur.execute("SELECT @@character_set_client, @@character_set_results")
        assert cur.fetchone() == ("latin1", "latin1")
        cur.execute("SELECT l, u FROM %s WHERE id = 1" % t)
        assert cur.fetchone() == ("café €", "naïve Œ")
        # sent in latin1 (cp1252) from this connection, read back over utf8mb4
        cur.execute("INSERT INTO %s VALUES (%%s, %%s, %%s)" % t, (2, "€ ‰ ÿ", "Ž œ ß"))
        cur.execute("SELECT l, u FROM %s WHERE id = 2" % t)
        assert cur.fetchone() == ("€ ‰ ÿ", "Ž œ ß")
    finally:
        c.close()
    u = mysqlc.connect(**conn_kwargs)
    try:
        cur = u.cursor()
        cur.execute("SELECT l, u, HEX(l) FROM %s WHERE id = 2" % t)
        assert cur.fetchone() == ("€ ‰ ÿ", "Ž œ ß", "80208920FF")
    finally:
        u.close()


def test_unix_socket_connection(server):
    kw = server.connect_kwargs(unix=True)
    c = mysqlc.connect(**kw)
    try:
        cur = c.cursor()
        cur.execute("SELECT 1 + 1, @@socket")
        two, sock = cur.fetchone()
        assert two == 2
        assert sock == server.unix_socket
        assert "socket" in c.get_host_info().lower()
    finally:
        c.close()


# =========================================================================== executemany

def test_executemany_insert_is_rewritten_and_fast(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE em (id INT PRIMARY KEY, name VARCHAR(40), "
                "x DOUBLE, d DECIMAL(12,2), dt DATETIME(6), n INT NULL)")
    rows = [(i, "name-%d-é'\\" % i, i * 1.5, D(i) / 4, 
             datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=i, microseconds=i),
             None if i % 3 == 0 else i)
            for i in range(20000)]
    before = _status(conn, "Com_insert")
    t0 = time.monotonic()
    n = cur.executemany("INSERT INTO em (id, name, x, d, dt, n) VALUES (%s, %s, %s, %s, %s, %s)",
                        rows)
    elapsed = time.monotonic() - t0
    statements = _status(conn, "Com_insert") - before
    assert n == 20000
    assert cur.rowcount == 20000
    assert 1 <= statements <= 5, statements       # multi-row statements, not 20000
    assert elapsed < 2.0, elapsed
    cur.execute("SELECT id, name, x, d, dt, n FROM em ORDER BY id")
    got = cur.fetchall()
    assert len(got) == 20000
    expected = tuple((i, name, x, d.quantize(D("0.01")), dt, n)
                     for i, name, x, d, dt, n in rows)
    assert got == expected


def test_executemany_split_below_max_stmt_length(conn):
    cur = conn.cursor()
    cur.max_stmt_length = 10000
    cur.execute("CREATE TEMPORARY TABLE em2 (id INT PRIMARY KEY, s VARCHAR(200))")
    rows = [(i, "s" * 100) for i in range(1000)]
    before = _status(conn, "Com_insert")
    assert cur.executemany("INSERT INTO em2 VALUES (%s, %s)", rows) == 1000
    statements = _status(conn, "Com_insert") - before
    assert statements >= 10      # ~110 kB of values in statements of at most 10 kB
    cur.execute("SELECT COUNT(*), SUM(id), MIN(s) = MAX(s) FROM em2")
    assert cur.fetchone() == (1000, D(499500), 1)


def test_executemany_on_duplicate_key_update(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE up (id INT PRIMARY KEY, v INT, hits INT DEFAULT 1)")
    cur.execute("INSERT INTO up (id, v) VALUES (1, 10), (2, 20)")
    before = _status(conn, "Com_insert")
    n = cur.executemany("INSERT INTO up (id, v) VALUES (%s, %s) "
                        "ON DUPLICATE KEY UPDATE v = VALUES(v), hits = hits + 1",
                        [(1, 11), (2, 22), (3, 33)])
    assert _status(conn, "Com_insert") - before == 1
    assert n == 5          # 2 per updated row + 1 per inserted row
    cur.execute("SELECT id, v, hits FROM up ORDER BY id")
    assert cur.fetchall() == ((1, 11, 2), (2, 22, 2), (3, 33, 1))


def test_executemany_pyformat_insert(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE pf (id INT, s VARCHAR(10))")
    n = cur.executemany("INSERT INTO pf (id, s) VALUES (%(id)s, %(s)s)",
                        [{"id": 1, "s": "a"}, {"id": 2, "s": "b'"}])
    assert n == 2
    cur.execute("SELECT id, s FROM pf ORDER BY id")
    assert cur.fetchall() == ((1, "a"), (2, "b'"))


def test_executemany_update_loops(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE eu (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO eu VALUES (1, 0), (2, 0), (3, 0), (4, 0)")
    before = _status(conn, "Com_update")
    n = cur.executemany("UPDATE eu SET v = %s WHERE id >= %s", [(5, 3), (7, 4), (9, 99)])
    assert _status(conn, "Com_update") - before == 3
    assert n == 2 + 1 + 0
    assert cur.rowcount == 3
    cur.execute("SELECT v FROM eu ORDER BY id")
    assert cur.fetchall() == ((0,), (0,), (5,), (7,))


def test_executemany_empty(conn):
    cur = conn.cursor()
    assert cur.executemany("INSERT INTO nowhere VALUES (%s)", []) is None


# =========================================================================== 16 MiB packets

def test_17mb_query_and_result(conn):
    """A 17 MB statement (split into 0xFFFFFF-byte packets on send) and a 17 MB value
    read back (joined on receive)."""
    size = 17 * 1024 * 1024
    value = ("0123456789abcdef" * (size // 16))[:size - 3] + "end"
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE big17 (v LONGTEXT)")
    sql = "INSERT INTO big17 VALUES ('" + value + "')"
    assert len(sql.encode()) > 0xFFFFFF
    assert cur.execute(sql) == 1
    cur.execute("SELECT LENGTH(v), MD5(v) FROM big17")
    assert cur.fetchone() == (size, hashlib.md5(value.encode()).hexdigest())
    cur.execute("SELECT v FROM big17")
    got = cur.fetchone()[0]
    assert len(got) == size
    assert got == value
    # and the connection is still in step
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


def test_exact_packet_boundary_values(conn):
    """Values that make the row packet exactly 0xFFFFFF bytes (and one more/less)."""
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE pb (id INT, v LONGBLOB)")
    for delta in (-1, 0, 1):
        n = 0xFFFFFF - 6 + delta        # id: 2 bytes; v: 4 bytes of lenenc prefix + value
        cur.execute("INSERT INTO pb VALUES (%s, REPEAT(_binary 'z', %s))", (delta + 1, n))
    cur.execute("SELECT id, v FROM pb ORDER BY id")
    rows = cur.fetchall()
    assert [r[0] for r in rows] == [0, 1, 2]
    for (_id, v), delta in zip(rows, (-1, 0, 1)):
        assert len(v) == 0xFFFFFF - 6 + delta
        assert v == b"z" * len(v)
    assert cur.description[1][1] == FIELD_TYPE.BLOB


# =========================================================================== more edges

def test_column_names_unicode_and_long(conn):
    long_alias = "é" * 126          # 252 bytes: a 2-byte lenenc length in the definition
    cur = conn.cursor()
    cur.execute("SELECT 1 AS `é ñ`, 2 AS `%s`, 3 AS ``` back`" % long_alias)
    assert [d[0] for d in cur.description] == ["é ñ", long_alias, "` back"]
    assert cur.fetchone() == (1, 2, 3)
    dcur = conn.cursor(mysqlc.cursors.DictCursor)
    dcur.execute("SELECT 1 AS `é ñ`")
    assert dcur.fetchone() == {"é ñ": 1}


def test_many_columns(conn):
    cur = conn.cursor()
    cur.execute("SELECT " + ", ".join("%d AS c%d" % (i, i) for i in range(2000)))
    assert len(cur.description) == 2000
    assert cur.description[1999][0] == "c1999"
    assert cur.fetchone() == tuple(range(2000))


def test_non_ascii_user_and_password(server, root_conn_kwargs):
    root = mysqlc.connect(autocommit=True, **root_conn_kwargs)
    user, password = "tdbapi_ü", "pässwörd 😀 '\\"
    try:
        cur = root.cursor()
        cur.execute("DROP USER IF EXISTS %s@'%%'", (user,))
        # IDENTIFIED BY takes only a quoted string: the password with its backslash is
        # one, escaped for the session's sql_mode (docs/compat.md "Escaping")
        cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (user, password))
        c = mysqlc.connect(host=server.host, port=server.port, user=user, password=password)
        try:
            ccur = c.cursor()
            ccur.execute("SELECT CURRENT_USER()")
            assert ccur.fetchone() == (user + "@%",)
        finally:
            c.close()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host=server.host, port=server.port, user=user,
                           password=password[:-1])
        assert ei.value.args[0] == 1045
    finally:
        root.cursor().execute("DROP USER IF EXISTS %s@'%%'", (user,))
        root.close()


def test_empty_password_account(server, root_conn_kwargs):
    # root has no password on the private server (mysqlc.server); an external server
    # may give it one, so make a dedicated account
    root = mysqlc.connect(autocommit=True, **root_conn_kwargs)
    try:
        cur = root.cursor()
        cur.execute("DROP USER IF EXISTS 'tdbapi_nopw'@'%'")
        cur.execute("CREATE USER 'tdbapi_nopw'@'%' IDENTIFIED BY ''")
        c = mysqlc.connect(host=server.host, port=server.port, user="tdbapi_nopw", password="")
        try:
            ccur = c.cursor()
            ccur.execute("SELECT CURRENT_USER()")
            assert ccur.fetchone() == ("tdbapi_nopw@%",)
        finally:
            c.close()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host=server.host, port=server.port, user="tdbapi_nopw",
                           password="not-empty")
        assert ei.value.args[0] == 1045
    finally:
        root.cursor().execute("DROP USER IF EXISTS 'tdbapi_nopw'@'%'")
        root.close()


def test_ping_reconnect_after_kill(conn_kwargs, root_conn_kwargs):
    c = mysqlc.connect(init_command="SET @marker = 'fresh'", **conn_kwargs)
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        old_id = c.thread_id()
        rcur = root.cursor()
        rcur.execute("KILL %d" % old_id)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:      # until the server has dropped it
            rcur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s",
                         (old_id,))
            if rcur.fetchone() == (0,):
                break
            time.sleep(0.02)
        with pytest.raises(mysqlc.OperationalError):
            c.ping()
        c.ping(reconnect=True)
        assert c.open
        assert c.thread_id() != old_id
        cur = c.cursor()
        cur.execute("SELECT @marker, CONNECTION_ID()")
        assert cur.fetchone() == ("fresh", c.thread_id())
    finally:
        root.close()
        c.close()


def test_load_data_local_is_refused(conn, tmp_path):
    """The client never offers CLIENT_LOCAL_FILES: the server refuses LOCAL INFILE itself
    (MariaDB 10.11: ER_LOAD_INFILE_CAPABILITY_DISABLED 4166) and no file is read."""
    path = tmp_path / "data.txt"
    path.write_text("secret\n")
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE li (a TEXT)")
    with pytest.raises(mysqlc.OperationalError) as ei:
        cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE li", (str(path),))
    assert ei.value.args[0] == 4166
    assert conn.open
    cur.execute("SELECT COUNT(*) FROM li")
    assert cur.fetchone() == (0,)


def test_executemany_variants(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE ev (id INT PRIMARY KEY, s VARCHAR(30), t DATETIME)")
    # lower case, VALUE, a function call in the row, generator of rows
    before = _status(conn, "Com_insert")
    n = cur.executemany("insert into ev (id, s, t) value (%s, %s, NOW())",
                        ((i, "g%d" % i) for i in range(5)))
    assert n == 5
    assert _status(conn, "Com_insert") - before == 1
    # a placeholder after VALUES (...): cannot be rewritten, runs once per row -- or, with
    # MariaDB, as one COM_STMT_BULK_EXECUTE (docs/batching.md)
    before = _status(conn, "Com_insert")
    n = cur.executemany("INSERT INTO ev (id, s) VALUES (%s, %s) "
                        "ON DUPLICATE KEY UPDATE s = CONCAT(s, %s)",
                        [(1, "x", "-a"), (2, "y", "-b"), (10, "new", "-c")])
    assert _status(conn, "Com_insert") - before == (1 if conn._conn.bulk_operations else 3)
    assert n == 2 + 2 + 1
    cur.execute("SELECT id, s FROM ev WHERE id IN (1, 2, 10) ORDER BY id")
    assert cur.fetchall() == ((1, "g1-a"), (2, "g2-b"), (10, "new"))
    # backslashes and quotes with NO_BACKSLASH_ESCAPES
    cur.execute("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'")
    rows = [(100 + i, "a\\b'c\\'%d" % i) for i in range(3)]
    assert cur.executemany("INSERT INTO ev (id, s) VALUES (%s, %s)", rows) == 3
    cur.execute("SELECT id, s FROM ev WHERE id >= 100 ORDER BY id")
    assert cur.fetchall() == tuple(rows)


def test_bytes_query_and_list_args(conn):
    cur = conn.cursor()
    cur.execute(b"SELECT %s, %s", [1, "x"])
    assert cur.fetchone() == (1, "x")
    cur.execute("SELECT %s", "lone")       # a single non-sequence value (PyMySQL style)
    assert cur.fetchone() == ("lone",)


def test_interleaved_cursors(conn):
    a = conn.cursor()
    b = conn.cursor()
    a.execute("SELECT seq FROM seq_1_to_3")
    b.execute("SELECT seq FROM seq_10_to_12")
    assert a.fetchall() == ((1,), (2,), (3,))      # buffered: unaffected by b
    assert b.fetchone() == (10,)
    a.execute("SELECT 'a'")
    assert b.fetchall() == ((11,), (12,))
    assert a.fetchone() == ("a",)


# characters whose last byte in the charset is 0x5C ('\'): escaping must keep them whole
TRAIL_5C = {
    "sjis": "Ы―ソ予表能",
    "cp932": "Ы―Ⅸソ表能",
    "gbk": "‐╘乗俓",
    "big5": "α么佢許功",
}


@pytest.mark.parametrize("mode", ["", "NO_BACKSLASH_ESCAPES"])
@pytest.mark.parametrize("charset", sorted(TRAIL_5C))
def test_multibyte_charset_with_backslash_trail_bytes(conn_kwargs, charset, mode):
    chars = TRAIL_5C[charset]
    assert all(ch.encode({"sjis": "shift_jis"}.get(charset, charset))[-1:] == b"\\"
               for ch in chars)
    value = chars + "'\\\"x" + chars + "\\"
    c = mysqlc.connect(charset=charset, sql_mode=mode or None, **conn_kwargs)
    try:
        assert c.character_set_name() == charset
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE mb (v VARCHAR(100) CHARACTER SET %s, "
                    "u VARCHAR(100) CHARACTER SET utf8mb4)" % charset)
        cur.execute("INSERT INTO mb VALUES (%s, %s)", (value, value))
        cur.execute("SELECT v, u, %s, CHAR_LENGTH(v) FROM mb", (value,))
        # MariaDB's sjis maps U+005C to 0x815F on the way out (and both 0x5C and 0x815F
        # to U+005C on the way in), so a backslash stored in a utf8mb4 column comes back
        # over an sjis connection as 0x815F, which is U+FF3C in Python's shift_jis
        u_expected = value.replace("\\", "\uff3c") if charset == "sjis" else value
        assert cur.fetchone() == (value, u_expected, value, len(value))
        cur.executemany("INSERT INTO mb VALUES (%s, %s)", [(value, value)] * 3)
        cur.execute("SELECT COUNT(*) FROM mb WHERE v = %s AND u = %s", (value, value))
        assert cur.fetchone() == (4,)
    finally:
        c.close()


@pytest.mark.parametrize("collation, charset", [
    ("utf8mb4_bin", "utf8mb4"),               # an id sent in the handshake
    ("utf8mb4_unicode_ci", "utf8mb4"),
    ("utf8mb4_uca1400_ai_ci", "utf8mb4"),     # id > 255: SET NAMES ... COLLATE after connect
    ("latin1_bin", "latin1"),                 # no charset given: taken from the collation
])
def test_collation_option(conn_kwargs, collation, charset):
    c = mysqlc.connect(collation=collation, **conn_kwargs)
    try:
        assert c.character_set_name() == charset
        cur = c.cursor()
        cur.execute("SELECT @@collation_connection, @@character_set_results, %s", ("é€",))
        assert cur.fetchone() == (collation, charset, "é€")
    finally:
        c.close()


def test_invalid_dates_decode_to_none(conn_kwargs):
    c = mysqlc.connect(sql_mode="ALLOW_INVALID_DATES", **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE inv (d DATE, dt DATETIME(3))")
        cur.execute("INSERT INTO inv VALUES ('2024-02-30', '2023-02-29 10:00:00.5')")
        cur.execute("SELECT d, dt, CAST(d AS CHAR), CAST(dt AS CHAR) FROM inv")
        # the server keeps the invalid dates; like mysqlclient they decode to None
        assert cur.fetchone() == (None, None, "2024-02-30", "2023-02-29 10:00:00.500")
    finally:
        c.close()


def test_executemany_bulk_stores_the_literals(conn):
    """With MariaDB an INSERT ... VALUES executemany goes through COM_STMT_BULK_EXECUTE
    (one prepared statement, no multi-row text to parse) and stores what the text path's
    literals store: a float travels as a DOUBLE, which is what its literal (repr + e0) is
    to the server (0.1 in a DECIMAL(30,25) column stays 0.1)."""
    if not conn._conn.bulk_operations:
        pytest.skip("the server has no COM_STMT_BULK_EXECUTE")
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE bx (id INT AUTO_INCREMENT PRIMARY KEY, "
                "d DECIMAL(30,25), s VARCHAR(10), t DATETIME(6))")
    ts = datetime.datetime(2024, 2, 29, 12, 0, 0, 7)
    before = (_status(conn, "Com_insert"), _status(conn, "Com_stmt_execute"))
    assert cur.executemany("INSERT INTO bx (d, s, t) VALUES (%s, %s, %s)",
                           [(0.1, "a", ts), (0.2, "b", ts)]) == 2
    assert _status(conn, "Com_stmt_execute") - before[1] == 1     # one bulk command
    assert _status(conn, "Com_insert") - before[0] == 1
    before = (_status(conn, "Com_insert"), _status(conn, "Com_stmt_execute"))
    assert cur.executemany("INSERT INTO bx (d, s, t) VALUES (%s, %s, %s)",
                           [(D("0.3"), "c", ts), (D(7), "d'\\", None), (None, None, ts)]) == 3
    assert _status(conn, "Com_stmt_execute") - before[1] == 1     # one bulk command
    assert _status(conn, "Com_insert") - before[0] == 1
    assert cur.rowcount == 3
    cur.execute("SELECT d, s, t FROM bx ORDER BY id")
    assert cur.fetchall() == ((D("0.1000000000000000000000000"), "a", ts),
                              (D("0.2000000000000000000000000"), "b", ts),
                              (D("0.3000000000000000000000000"), "c", ts),
                              (D("7.0000000000000000000000000"), "d'\\", None),
                              (None, None, ts))
