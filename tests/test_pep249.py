"""PEP 249 (DB-API 2.0) conformance, point by point, against the test server.

Sections follow the PEP: module interface, exceptions, connection objects,
cursor objects, type objects and constructors, and the optional extensions
(``rownumber``, ``connection``, ``scroll``, ``messages``, ``next``/iteration,
``lastrowid``, exceptions as connection attributes).  Row-fetching behaviour is
checked for the buffered cursors and for the unbuffered ``SSCursor`` /
``SSDictCursor`` alike.

Not implemented (and so not tested): the two-phase commit extension
(``tpc_*``) and ``errorhandler``.
"""

import datetime
import time

import pytest

import mysqlc
from mysqlc import cursors

ALL_CURSORS = [cursors.Cursor, cursors.SSCursor, cursors.DictCursor, cursors.SSDictCursor]
TUPLE_CURSORS = [cursors.Cursor, cursors.SSCursor]


def _row(cur, row):
    """`row` (a tuple) in the shape the cursor class returns."""
    if isinstance(cur, (cursors.DictCursor, cursors.SSDictCursor)):
        return dict(zip([d[0] for d in cur.description], row))
    return row


@pytest.fixture
def table(conn):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS pep249")
    cur.execute("CREATE TABLE pep249 (id INT AUTO_INCREMENT PRIMARY KEY, "
                "name VARCHAR(20) NOT NULL, v DOUBLE NULL) ENGINE=InnoDB")
    conn.commit()
    yield "pep249"
    cur = conn.cursor() if conn.open else None
    if cur is not None:
        cur.execute("DROP TABLE IF EXISTS pep249")


# ================================================================ module interface

def test_module_globals():
    assert mysqlc.apilevel == "2.0"
    assert mysqlc.threadsafety in (0, 1, 2, 3)
    assert mysqlc.threadsafety == 1            # module shared; connections not
    assert mysqlc.paramstyle == "format"
    assert callable(mysqlc.connect)


def test_connect_keyword_arguments(conn_kwargs):
    # PEP 249 suggests dsn/user/password/host/database; both spellings work
    kw = dict(conn_kwargs)
    c = mysqlc.connect(host=kw["host"], port=kw["port"], user=kw["user"],
                       password=kw["password"], database=kw["database"])
    c.close()
    c = mysqlc.connect(host=kw["host"], port=kw["port"], user=kw["user"],
                       passwd=kw["password"], db=kw["database"])
    assert c.database == kw["database"]
    c.close()


# ================================================================ exceptions

def test_exception_hierarchy():
    E = mysqlc
    assert issubclass(E.Warning, Exception)
    assert issubclass(E.Error, Exception)
    assert not issubclass(E.Warning, E.Error)
    assert issubclass(E.InterfaceError, E.Error)
    assert issubclass(E.DatabaseError, E.Error)
    for name in ("DataError", "OperationalError", "IntegrityError", "InternalError",
                 "ProgrammingError", "NotSupportedError"):
        assert issubclass(getattr(E, name), E.DatabaseError), name


@pytest.mark.parametrize("sql, cls", [
    ("SELEC 1", mysqlc.ProgrammingError),                        # 1064 syntax
    ("SELECT * FROM no_such_table_pep249", mysqlc.ProgrammingError),   # 1146
    ("INSERT INTO pep249 (name) VALUES (NULL)", mysqlc.IntegrityError),  # 1048
    ("INSERT INTO pep249 (id, name) VALUES (1, 'a'), (1, 'b')", mysqlc.IntegrityError),
    ("INSERT INTO pep249 (name) VALUES (REPEAT('x', 21))", mysqlc.DataError),  # 1406
    ("SELECT no_such_column FROM pep249", mysqlc.OperationalError),   # 1054, as mysqlclient
])
def test_error_classes(conn, table, sql, cls):
    cur = conn.cursor()
    with pytest.raises(cls) as info:
        cur.execute(sql)
    errno, message = info.value.args
    assert isinstance(errno, int) and errno > 0 and isinstance(message, str)
    cur.execute("SELECT 1")                                   # still usable
    assert cur.fetchall() == ((1,),)


# ================================================================ connection objects

def test_connection_close_makes_everything_fail(conn_kwargs):
    c = mysqlc.connect(**conn_kwargs)
    cur = c.cursor()
    c.close()
    for op in (c.close, c.commit, c.rollback, lambda: cur.execute("SELECT 1"),
               lambda: c.cursor().execute("SELECT 1")):       # as mysqlclient: 2006
        with pytest.raises(mysqlc.Error):
            op()


def test_commit_and_rollback(conn, conn_kwargs, table):
    cur = conn.cursor()
    assert conn.get_autocommit() is False                      # PEP 249: off initially
    cur.execute("INSERT INTO pep249 (name) VALUES ('committed')")
    conn.commit()
    cur.execute("INSERT INTO pep249 (name) VALUES ('rolled back')")
    other = mysqlc.connect(**conn_kwargs)
    try:
        ocur = other.cursor()
        ocur.execute("SELECT name FROM pep249")
        assert ocur.fetchall() == (("committed",),)            # isolation
    finally:
        other.close()
    conn.rollback()
    cur.execute("SELECT name FROM pep249")
    assert cur.fetchall() == (("committed",),)


def test_close_without_commit_rolls_back(conn_kwargs, conn, table):
    c = mysqlc.connect(**conn_kwargs)
    c.cursor().execute("INSERT INTO pep249 (name) VALUES ('lost')")
    c.close()                                                  # implicit rollback
    cur = conn.cursor()
    cur.execute("SELECT COUNT(*) FROM pep249")
    assert cur.fetchone() == (0,)


def test_cursor_method(conn):
    cur = conn.cursor()
    assert isinstance(cur, cursors.Cursor)
    assert isinstance(conn.cursor(cursors.SSCursor), cursors.SSCursor)


# ================================================================ cursor objects

@pytest.mark.parametrize("cls", ALL_CURSORS)
def test_description(conn, cls):
    cur = conn.cursor(cls)
    assert cur.description is None                            # before execute
    cur.execute("SELECT 1 AS n, 'x' AS s, CAST(1.5 AS DECIMAL(4,2)) AS d, NULL AS z")
    desc = cur.description
    assert [d[0] for d in desc] == ["n", "s", "d", "z"]
    assert all(len(d) == 7 for d in desc)
    assert desc[0][1] == mysqlc.NUMBER and desc[1][1] == mysqlc.STRING
    assert desc[2][1] == mysqlc.NUMBER
    assert (desc[2][4], desc[2][5]) == (6, 2)     # precision, scale: as mysqlclient,
    #                                               the column's display length
    assert desc[0][6] is False and desc[3][6] is True          # null_ok
    cur.fetchall()
    cur.execute("DO 1")
    assert cur.description is None                             # no result set


@pytest.mark.parametrize("cls", ALL_CURSORS)
def test_rowcount(conn, table, cls):
    cur = conn.cursor(cls)
    assert cur.rowcount == -1
    assert cur.execute("INSERT INTO pep249 (name) VALUES ('a'), ('b'), ('c')") == 3
    assert cur.rowcount == 3
    cur.execute("UPDATE pep249 SET v = 1 WHERE name <> 'a'")
    assert cur.rowcount == 2
    cur.execute("SELECT name FROM pep249 ORDER BY id")
    if cls in (cursors.SSCursor, cursors.SSDictCursor):
        assert cur.rowcount == -1                              # not known while streaming
        cur.fetchall()
    assert cur.rowcount == 3


@pytest.mark.parametrize("cls", ALL_CURSORS)
def test_fetch_methods(conn, cls):
    cur = conn.cursor(cls)
    with pytest.raises(mysqlc.Error):
        cur.fetchone()                                         # no execute yet
    cur.execute("SELECT seq FROM seq_1_to_10")
    assert cur.arraysize == 1
    assert cur.fetchone() == _row(cur, (1,))
    assert list(cur.fetchmany()) == [_row(cur, (2,))]          # arraysize rows
    assert list(cur.fetchmany(3)) == [_row(cur, (i,)) for i in (3, 4, 5)]
    cur.arraysize = 2
    assert list(cur.fetchmany()) == [_row(cur, (6,)), _row(cur, (7,))]
    assert list(cur.fetchall()) == [_row(cur, (i,)) for i in (8, 9, 10)]
    assert cur.fetchone() is None
    assert list(cur.fetchmany(5)) == []
    assert list(cur.fetchall()) == []
    cur.execute("DO 1")                                         # no result set
    assert cur.fetchone() is None
    assert list(cur.fetchall()) == []


@pytest.mark.parametrize("cls", ALL_CURSORS)
def test_execute_parameters(conn, cls):
    cur = conn.cursor(cls)
    cur.execute("SELECT %s, %s, %s, HEX(%s)", (1, "it's", None, b"\x00\xff"))
    assert cur.fetchone() == _row(cur, (1, "it's", None, "00FF"))
    cur.execute("SELECT %(a)s + %(b)s AS s", {"a": 40, "b": 2})   # pyformat mapping
    assert cur.fetchone() == _row(cur, (42,))
    cur.execute("SELECT '100%'")                               # no args: no % processing
    assert cur.fetchone() == _row(cur, ("100%",))
    cur.execute("SELECT CONCAT(%s, '%%')", ("50",))
    assert cur.fetchone() == _row(cur, ("50%",))
    with pytest.raises(mysqlc.ProgrammingError):
        cur.execute("SELECT %s, %s", (1,))


def test_executemany(conn, table):
    cur = conn.cursor()
    n = cur.executemany("INSERT INTO pep249 (name, v) VALUES (%s, %s)",
                        [("a", 1.0), ("b", None), ("c", 2.5)])
    assert n == cur.rowcount == 3
    n = cur.executemany("UPDATE pep249 SET v = %s WHERE name = %s", [(9, "a"), (9, "b")])
    assert n == 2
    cur.execute("SELECT name, v FROM pep249 ORDER BY id")
    assert cur.fetchall() == (("a", 9.0), ("b", 9.0), ("c", 2.5))


def test_callproc(conn):
    cur = conn.cursor()
    cur.execute("DROP PROCEDURE IF EXISTS pep249_proc")
    cur.execute("CREATE PROCEDURE pep249_proc(IN a INT, INOUT b INT, OUT c VARCHAR(10)) "
                "BEGIN SELECT a + b AS total; SET b = b * 2; SET c = 'done'; END")
    try:
        args = (3, 4, None)
        assert cur.callproc("pep249_proc", args) == args
        assert cur.fetchall() == ((7,),)
        while cur.nextset():
            pass
        cur.execute("SELECT @_pep249_proc_1, @_pep249_proc_2")   # OUT/INOUT values
        assert cur.fetchone() == (8, "done")
    finally:
        cur.execute("DROP PROCEDURE IF EXISTS pep249_proc")


@pytest.mark.parametrize("cls", TUPLE_CURSORS)
def test_nextset(conn, cls):
    cur = conn.cursor(cls)
    cur.execute("SELECT 1; SELECT 2, 3; DO 4; SELECT 5")
    assert list(cur.fetchall()) == [(1,)]
    assert cur.nextset() is True
    assert len(cur.description) == 2 and list(cur.fetchall()) == [(2, 3)]
    assert cur.nextset() is True and cur.description is None
    assert cur.nextset() is True
    assert cur.fetchone() == (5,)
    assert cur.nextset() is None


def test_setinputsizes_setoutputsizes(conn):
    cur = conn.cursor()
    assert cur.setinputsizes([10, None]) is None
    assert cur.setoutputsizes(100) is None
    assert cur.setoutputsizes(100, 0) is None


@pytest.mark.parametrize("cls", ALL_CURSORS)
def test_cursor_close(conn, cls):
    cur = conn.cursor(cls)
    cur.execute("SELECT seq FROM seq_1_to_100")
    cur.fetchone()
    cur.close()
    cur.close()
    with pytest.raises(mysqlc.Error):
        cur.execute("SELECT 1")
    other = conn.cursor()                                       # connection unaffected
    other.execute("SELECT 2")
    assert other.fetchone() == (2,)


# ================================================================ types and constructors

def test_type_objects(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE pep249_blob (b BLOB)")
    cur.execute("SELECT 1, 1.5e0, 'a', (SELECT b FROM pep249_blob), DATE '2024-01-02', "
                "TIME '01:02:03', TIMESTAMP '2024-01-02 03:04:05', CAST(NULL AS DATETIME)")
    codes = [d[1] for d in cur.description]
    assert codes[0] == mysqlc.NUMBER and codes[1] == mysqlc.NUMBER
    assert codes[2] == mysqlc.STRING and codes[3] == mysqlc.BINARY
    assert codes[4] == mysqlc.DATE and codes[5] == mysqlc.TIME
    assert codes[6] == mysqlc.DATETIME and codes[7] == mysqlc.DATETIME
    assert codes[0] != mysqlc.STRING and codes[4] != mysqlc.DATETIME
    assert mysqlc.ROWID != codes[0]


def test_constructors_round_trip(conn):
    values = [mysqlc.Date(2024, 2, 29), mysqlc.Time(23, 59, 58),
              mysqlc.Timestamp(2024, 2, 29, 23, 59, 58), mysqlc.Binary(b"\x00\x01\xfe"),
              None]
    assert mysqlc.Binary(bytearray(b"ab")) == b"ab"
    cur = conn.cursor()
    cur.execute("SELECT CAST(%s AS DATE), CAST(%s AS TIME), CAST(%s AS DATETIME), "
                "CAST(%s AS BINARY), %s", values)
    row = cur.fetchone()
    assert row[0] == values[0] and row[2] == values[2] and row[3] == values[3]
    assert row[1] == datetime.timedelta(hours=23, minutes=59, seconds=58)  # mysqlclient
    assert row[4] is None


def test_from_ticks_constructors():
    ticks = time.mktime((2024, 5, 6, 7, 8, 9, 0, 0, -1))
    assert mysqlc.DateFromTicks(ticks) == datetime.date(2024, 5, 6)
    assert mysqlc.TimeFromTicks(ticks) == datetime.time(7, 8, 9)
    assert mysqlc.TimestampFromTicks(ticks) == datetime.datetime(2024, 5, 6, 7, 8, 9)


# ================================================================ optional extensions

@pytest.mark.parametrize("cls", ALL_CURSORS)
def test_rownumber_and_connection_attributes(conn, cls):
    cur = conn.cursor(cls)
    assert cur.connection is conn
    assert cur.rownumber is None
    cur.execute("SELECT seq FROM seq_1_to_5")
    assert cur.rownumber == 0
    cur.fetchone()
    cur.fetchmany(2)
    assert cur.rownumber == 3
    cur.fetchall()
    assert cur.rownumber == 5
    cur.close()
    assert cur.connection is None


def test_scroll_buffered(conn):
    cur = conn.cursor()
    cur.execute("SELECT seq FROM seq_1_to_5")
    cur.scroll(2)
    assert cur.fetchone() == (3,)
    cur.scroll(-2)
    assert cur.fetchone() == (2,)
    cur.scroll(4, mode="absolute")
    assert cur.fetchone() == (5,)
    with pytest.raises(IndexError):
        cur.scroll(10, mode="absolute")
    with pytest.raises(mysqlc.ProgrammingError):
        cur.scroll(0, mode="sideways")


def test_scroll_unbuffered_forward_only(conn):
    cur = conn.cursor(cursors.SSCursor)
    cur.execute("SELECT seq FROM seq_1_to_5")
    cur.scroll(2)
    assert cur.fetchone() == (3,)
    for value, mode in ((-1, "relative"), (4, "absolute")):
        with pytest.raises(mysqlc.NotSupportedError):
            cur.scroll(value, mode=mode)
    cur.scroll(1)
    assert cur.fetchone() == (5,)
    with pytest.raises(IndexError):
        cur.scroll(1)


def test_messages(conn):
    cur = conn.cursor()
    assert cur.messages == [] and conn.messages == []
    cur.messages.append((mysqlc.Warning, "stale"))
    cur.execute("SELECT 1")
    assert cur.messages == []                                   # cleared by execute


@pytest.mark.parametrize("cls", ALL_CURSORS)
def test_iteration_and_next(conn, cls):
    cur = conn.cursor(cls)
    cur.execute("SELECT seq FROM seq_1_to_4")
    assert next(cur) == _row(cur, (1,))
    assert cur.next() == _row(cur, (2,))
    assert list(cur) == [_row(cur, (3,)), _row(cur, (4,))]
    with pytest.raises(StopIteration):
        next(cur)


@pytest.mark.parametrize("cls", ALL_CURSORS)
def test_lastrowid(conn, table, cls):
    cur = conn.cursor(cls)
    assert cur.lastrowid is None
    cur.execute("INSERT INTO pep249 (name) VALUES ('x')")
    first = cur.lastrowid
    assert first >= 1
    cur.execute("INSERT INTO pep249 (name) VALUES ('y'), ('z')")
    assert cur.lastrowid == first + 1                           # first id of the statement
    cur.execute("UPDATE pep249 SET v = 0")
    assert cur.lastrowid == 0


def test_exceptions_as_connection_attributes(conn):
    for name in ("Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
                 "OperationalError", "IntegrityError", "InternalError",
                 "ProgrammingError", "NotSupportedError"):
        assert getattr(conn, name) is getattr(mysqlc, name)


def test_unbuffered_cursor_refuses_other_commands_until_drained(conn):
    """mysqlclient's rule for unbuffered results ("Commands out of sync")."""
    ss = conn.cursor(cursors.SSCursor)
    ss.execute("SELECT seq FROM seq_1_to_1000")
    ss.fetchmany(10)
    for op in (lambda: conn.cursor().execute("SELECT 1"), conn.commit, conn.ping):
        with pytest.raises(mysqlc.ProgrammingError) as info:
            op()
        assert info.value.args[0] == 2014
    assert len(ss.fetchall()) == 990
    conn.commit()
    ss.execute("SELECT seq FROM seq_1_to_1000")               # same cursor: drops the rest
    ss.fetchone()
    ss.execute("SELECT 2")
    assert list(ss.fetchall()) == [(2,)]
    ss.execute("SELECT seq FROM seq_1_to_1000")
    ss.close()                                                  # close drains
    cur = conn.cursor()
    cur.execute("SELECT 3")
    assert cur.fetchone() == (3,)
