"""Server-side prepared statements: ``conn.cursor(prepared=True)`` (issue 4).

The acceptance table: every case of tests/test_types.py (``CASES``, ``PARAM_CASES``,
``PARAM_VALUES``) goes through the binary protocol (COM_STMT_PREPARE / COM_STMT_EXECUTE)
and must give exactly what the text protocol gives -- equal values of the same type --
both for values stored with a SQL literal and read back, and for values sent as ``%s``
parameters (binary-encoded by the C core) and read back through either protocol.

Then the prepared-statement machinery itself: parameter count mismatch, ``%(name)s``
with a mapping, ``?`` placeholders, NULL, long data (COM_STMT_SEND_LONG_DATA, counted by
the server's ``Com_stmt_send_long_data``), the per-connection LRU statement cache
(evicted statements are closed on the server: the global ``Prepared_stmt_count``),
parameter types changing between executes, errors at prepare and at execute, DictCursor,
executemany, lastrowid, and value equality between the protocols for DECIMAL,
DATETIME(6), negative TIME, BIGINT UNSIGNED and FLOAT.
"""

import datetime
import decimal
import gc
import time
import hashlib

import pytest

import mysqlc
import mysqlc.cursors

from test_types import CASES, PARAM_CASES, PARAM_VALUES, SAME

from _apis import sync_obj

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

D = decimal.Decimal
dt = datetime.datetime
td = datetime.timedelta

MIB = 1024 * 1024


def _ids(cases):
    return [c.id for c in cases]


def _setup(conn, c):
    cur = conn.cursor()
    if c.sql_mode is not None:
        cur.execute("SET SESSION sql_mode = %s", (c.sql_mode,))
    for stmt in c.setup:
        cur.execute(stmt)
    cur.execute("DROP TEMPORARY TABLE IF EXISTS rt")
    cur.execute("CREATE TEMPORARY TABLE rt (id INT PRIMARY KEY, v %s) "
                "CHARACTER SET utf8mb4" % c.coltype)
    return cur


def _both(conn, sql, args=None, cursorclass=None):
    """(text rows, binary rows) of the same SELECT: default protocol and prepared."""
    tcur = conn.cursor(cursorclass)
    tcur.execute(sql, args)
    text = list(tcur.fetchall())
    tdesc = tcur.description
    tcur.close()
    pcur = conn.cursor(cursorclass, prepared=True)
    assert sync_obj(pcur)._prepared
    pcur.execute(sql, args)
    binary = list(pcur.fetchall())
    pdesc = pcur.description
    pcur.close()
    return text, binary, tdesc, pdesc


def _types(rows):
    return [[type(v) for v in (r.values() if isinstance(r, dict) else r)] for r in rows]


def _check_protocols_agree(conn, expected, id):
    """Row `id` of ``rt`` read through both protocols, tuples and dicts: equal to
    `expected`, exact type, and the same in text and binary."""
    text, binary, tdesc, pdesc = _both(conn, "SELECT v FROM rt WHERE id = %s", (id,))
    assert text == [(expected,)]
    assert binary == text
    assert _types(binary) == _types(text) == [[type(expected)]]
    assert [d[:2] for d in pdesc] == [d[:2] for d in tdesc]
    text, binary, _, _ = _both(conn, "SELECT v FROM rt WHERE id = %s", (id,),
                               mysqlc.cursors.DictCursor)
    assert binary == text == [{"v": expected}]
    assert type(binary[0]["v"]) is type(expected)


# =========================================================================== the table

@pytest.mark.parametrize("c", CASES, ids=_ids(CASES))
def test_roundtrip_column_value(conn, c):
    """Stored with the SQL literal of tests/test_types.py, read back with the text and
    the binary protocol: equal values, equal types."""
    cur = _setup(conn, c)
    cur.execute("INSERT INTO rt (id, v) VALUES (1, %s)" % c.literal)
    _check_protocols_agree(conn, c.expected, 1)


@pytest.mark.parametrize("c", PARAM_CASES, ids=_ids(PARAM_CASES))
def test_roundtrip_prepared_parameter(conn, c):
    """Sent as a binary-protocol parameter of a prepared INSERT, read back through both
    protocols; the server compares the stored value with the parameter sent both ways
    (text literal and binary) alike."""
    _setup(conn, c)
    param = c.expected if c.param is SAME else c.param
    pcur = conn.cursor(prepared=True)
    assert pcur.execute("INSERT INTO rt (id, v) VALUES (%s, %s)", (2, param)) == 1
    assert pcur.rowcount == 1
    _check_protocols_agree(conn, c.expected, 2)
    # the same value through the text protocol gives the same row
    conn.cursor().execute("INSERT INTO rt (id, v) VALUES (%s, %s)", (3, param))
    text, binary, _, _ = _both(conn, "SELECT v FROM rt WHERE id IN (2, 3) ORDER BY id")
    assert text == binary == [(c.expected,), (c.expected,)]
    # `v <=> param` matches the same rows whichever protocol carries the parameter
    text, binary, _, _ = _both(conn, "SELECT id FROM rt WHERE v <=> %s ORDER BY id", (param,))
    assert binary == text


def test_all_cases_in_one_row_prepared(conn):
    """All literal cases as columns of one wide row: the binary row (one NULL bitmap,
    many decoders) equals the text row, value for value and type for type."""
    cases = [c for c in CASES if c.sql_mode is None and not c.setup]
    cur = conn.cursor()
    cols = ", ".join("c%d %s" % (i, c.coltype) for i, c in enumerate(cases))
    cur.execute("CREATE TEMPORARY TABLE wide (%s) CHARACTER SET utf8mb4 ROW_FORMAT=DYNAMIC"
                % cols)
    cur.execute("INSERT INTO wide VALUES (%s)" % ", ".join(c.literal for c in cases))
    text, binary, tdesc, pdesc = _both(conn, "SELECT * FROM wide")
    assert list(binary[0]) == [c.expected for c in cases]
    assert binary == text
    assert _types(binary) == _types(text)
    assert pdesc == tdesc


@pytest.mark.parametrize("coltype, value, expected", [p[1:] for p in PARAM_VALUES],
                         ids=[p[0] for p in PARAM_VALUES])
def test_parameter_types_prepared(conn, coltype, value, expected):
    """tests/test_types.py's parameter table through COM_STMT_EXECUTE: positional and
    named, stored and compared on the server."""
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE p (id INT, v %s)" % coltype)
    pcur = conn.cursor(prepared=True)
    pcur.execute("INSERT INTO p VALUES (%s, %s)", (1, value))
    pcur.execute("INSERT INTO p VALUES (%(id)s, %(v)s)", {"id": 2, "v": value})
    pcur.execute("SELECT id FROM p WHERE id = %s AND v <=> %s", (1, value))
    assert list(pcur.fetchall()) == [(1,)]
    text, binary, _, _ = _both(conn, "SELECT v FROM p ORDER BY id")
    assert binary == text == [(expected,), (expected,)]
    assert _types(binary) == _types(text) == [[type(expected)]] * 2


# =========================================================================== placeholders

def test_parameter_count_mismatch_names_both_counts(conn):
    pcur = conn.cursor(prepared=True)
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        pcur.execute("SELECT %s, %s, %s", (1, 2))
    msg = str(ei.value)
    assert "3" in msg and "2" in msg, msg
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        pcur.execute("SELECT ?", (1, 2, 3, 4))
    msg = str(ei.value)
    assert "1" in msg and "4" in msg, msg
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        pcur.execute("SELECT %s + %s")          # no parameters: sent as is, like the text
    assert ei.value.args[0] == 1064             # protocol, so the server's syntax error
    # nothing was left half-done on the connection
    pcur.execute("SELECT %s, %s, %s", (1, 2, 3))
    assert pcur.fetchall() == ((1, 2, 3),)
    conn.cursor().execute("SELECT 1")


def test_named_placeholders_with_a_mapping(conn):
    pcur = conn.cursor(prepared=True)
    pcur.execute("SELECT %(a)s, %(b)s, %(a)s, 7 %% 4", {"a": 7, "b": "x'y", "unused": 1})
    assert pcur.fetchall() == ((7, "x'y", 7, 3),)
    with pytest.raises(mysqlc.ProgrammingError):
        pcur.execute("SELECT %(a)s, %(b)s", {"a": 1})           # b missing
    with pytest.raises(mysqlc.ProgrammingError):
        pcur.execute("SELECT %(a)s", (1,))                       # not a mapping
    with pytest.raises(mysqlc.ProgrammingError):
        pcur.execute("SELECT %s", {"a": 1})                      # mapping for %s
    pcur.execute("SELECT %(a)s", {"a": None})
    assert pcur.fetchall() == ((None,),)


def test_qmark_placeholders(conn):
    pcur = conn.cursor(prepared=True)
    pcur.execute("SELECT ?, ? + 1, CONCAT(?, '?')", (1, 41, "a"))
    assert pcur.fetchall() == ((1, 42, "a?"),)
    pcur.execute("SELECT ?", 5)                                  # a lone value
    assert pcur.fetchall() == ((5,),)
    # placeholders inside quotes, comments and backticks are not parameters
    pcur.execute("SELECT '%s', \"?\", ? /* no ? */", ("p",))
    assert pcur.fetchall() == (("%s", "?", "p"),)


def test_escaped_percent_inside_quotes_as_in_the_text_protocol(conn):
    sql = "SELECT '100%%', CONCAT(%s, '%%')"
    text, binary, _, _ = _both(conn, sql, ("x",))
    assert text == [("100%", "x%")]
    assert binary == text


def test_qmark_query_keeps_its_percent_signs(conn):
    pcur = conn.cursor(prepared=True)
    pcur.execute("SELECT '100%%', CONCAT(?, '%%'), 7 % 4, '%s'", ("x",))
    assert pcur.fetchall() == (("100%%", "x%%", 3, "%s"),)


def test_query_without_parameters_is_sent_as_is(conn):
    text, binary, _, _ = _both(conn, "SELECT '100%%', '%s', '%(a)s'")
    assert text == [("100%%", "%s", "%(a)s")]
    assert binary == text


def test_null_parameters_and_values(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE n (id INT, i INT, s VARCHAR(10), b BLOB, d DATETIME(6), "
                "m DECIMAL(10,2), t TIME, f DOUBLE)")
    pcur = conn.cursor(prepared=True)
    pcur.execute("INSERT INTO n VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (1,) + (None,) * 7)
    pcur.execute("INSERT INTO n VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (2, 0, "", b"", dt(2024, 1, 2), D("0"), td(0), 0.0))
    pcur.execute("SELECT ? IS NULL, ? IS NULL, COALESCE(?, 'dflt')", (None, 0, None))
    assert pcur.fetchall() == ((1, 0, "dflt"),)
    text, binary, _, _ = _both(conn, "SELECT * FROM n ORDER BY id")
    assert binary == text
    assert binary[0] == (1,) + (None,) * 7
    assert binary[1] == (2, 0, "", b"", dt(2024, 1, 2), D("0.00"), td(0), 0.0)
    # NULLs in every position of the NULL bitmap (offset 2 in binary rows)
    cols = ", ".join("IF(seq & %d, NULL, %d) AS c%d" % (1 << k, k, k) for k in range(12))
    text, binary, _, _ = _both(conn, "SELECT seq, %s FROM seq_0_to_4095" % cols)
    assert binary == text
    assert len(binary) == 4096


# =========================================================================== long data

def _long_data_packets(conn):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE 'Com_stmt_send_long_data'")
    return int(cur.fetchone()[1])


def test_long_data_5mb_bytes_and_3mb_str(conn):
    """Values above long_data_threshold (default 1 MiB) go through
    COM_STMT_SEND_LONG_DATA into LONGBLOB/LONGTEXT and come back intact."""
    assert conn.long_data_threshold == MIB
    blob = (bytes(range(256)) * (5 * 1000 * 1000 // 256 + 1))[:5 * 1000 * 1000] + b"\x00end"
    text = ("é😀'\\\x00a" * (3 * 1000 * 1000 // 10))   # 3 MB of UTF-8, 1.8M characters
    assert len(text.encode()) >= 3 * 1000 * 1000 and len(text) > MIB
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE ld (id INT, b LONGBLOB, t LONGTEXT CHARACTER SET utf8mb4)")
    before = _long_data_packets(conn)
    pcur = conn.cursor(prepared=True)
    pcur.execute("INSERT INTO ld VALUES (?, ?, ?)", (1, blob, text))
    assert pcur.rowcount == 1
    assert _long_data_packets(conn) - before >= 2      # one (or more) per long value
    cur.execute("SELECT LENGTH(b), MD5(b), CHAR_LENGTH(t), MD5(t) FROM ld")
    assert cur.fetchone() == (len(blob), hashlib.md5(blob).hexdigest(), len(text),
                              hashlib.md5(text.encode()).hexdigest())
    text_rows, binary_rows, _, _ = _both(conn, "SELECT b, t FROM ld")
    assert binary_rows == text_rows
    got_b, got_t = binary_rows[0]
    assert type(got_b) is bytes and got_b == blob
    assert type(got_t) is str and got_t == text
    # a short value next to a long one on the same statement, then the long one again
    pcur.execute("INSERT INTO ld VALUES (?, ?, ?)", (2, b"short", text))
    pcur.execute("INSERT INTO ld VALUES (?, ?, ?)", (3, blob, "short"))
    cur.execute("SELECT id, LENGTH(b), CHAR_LENGTH(t) FROM ld ORDER BY id")
    assert cur.fetchall() == ((1, len(blob), len(text)), (2, 5, len(text)),
                              (3, len(blob), 5))


def test_small_values_do_not_use_long_data(conn):
    before = _long_data_packets(conn)
    pcur = conn.cursor(prepared=True)
    pcur.execute("SELECT LENGTH(?), CHAR_LENGTH(?)", (b"x" * (MIB - 1), "y" * 1000))
    assert pcur.fetchall() == ((MIB - 1, 1000),)
    assert _long_data_packets(conn) == before


def test_long_data_threshold_option(conn_kwargs):
    c = mysqlc.connect(long_data_threshold=10, **conn_kwargs)
    try:
        before = _long_data_packets(c)
        pcur = c.cursor(prepared=True)
        pcur.execute("SELECT ?, ?, ?, HEX(?)", ("0123456789", "0123456789abc", 12345678901234,
                                               b"\x00" * 11))
        assert pcur.fetchall() == (("0123456789", "0123456789abc", 12345678901234,
                                    "00" * 11),)
        assert _long_data_packets(c) - before == 2     # the 13-char str and 11-byte bytes
    finally:
        c.close()


# =========================================================================== statement cache

def _global_prepared_count(cur):
    cur.execute("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                "WHERE VARIABLE_NAME = 'PREPARED_STMT_COUNT'")
    return int(cur.fetchone()[0])


def test_statement_cache_evicts_and_closes_on_the_server(conn_kwargs):
    gc.collect()                 # no stray connection closes during the measurement
    monitor = mysqlc.connect(**conn_kwargs)
    c = mysqlc.connect(prepared_cache_size=2, **conn_kwargs)
    try:
        mcur = monitor.cursor()
        base = _global_prepared_count(mcur)
        pcur = c.cursor(prepared=True)
        pcur.execute("SELECT 1")
        pcur.execute("SELECT 2")
        assert _global_prepared_count(mcur) == base + 2
        pcur.execute("SELECT 1")                        # a hit: nothing new
        assert _global_prepared_count(mcur) == base + 2
        pcur.execute("SELECT 3")                        # evicts "SELECT 2" (least recent)
        assert pcur.fetchall() == ((3,),)
        assert _global_prepared_count(mcur) == base + 2
        assert len(c._stmt_cache) == 2
        scur = c.cursor()
        scur.execute("SHOW SESSION STATUS LIKE 'Com_stmt_close'")
        assert int(scur.fetchone()[1]) == 1
        scur.execute("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")
        assert int(scur.fetchone()[1]) == 3
        # the evicted statement is prepared again and still works
        pcur.execute("SELECT 2")
        assert pcur.fetchall() == ((2,),)
        assert _global_prepared_count(mcur) == base + 2
        # another cursor of the same connection shares the cache
        other = c.cursor(prepared=True)
        other.execute("SELECT 2")
        scur.execute("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")
        assert int(scur.fetchone()[1]) == 4
        c.close()
        # statements die with the connection: the server frees them when its thread for
        # the connection ends, which a loaded machine may take a moment to get to
        deadline = time.monotonic() + 10
        while _global_prepared_count(mcur) != base and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _global_prepared_count(mcur) == base
    finally:
        if c.open:
            c.close()
        monitor.close()


def test_parameter_types_change_between_executes(conn):
    """One statement, one placeholder, parameters of a different type each time: the
    parameter types are re-sent when they change and the values stay right."""
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE tc (id INT AUTO_INCREMENT PRIMARY KEY, "
                "s VARCHAR(64) CHARACTER SET utf8mb4)")
    pcur = conn.cursor(prepared=True)
    values = [5, "abc", None, 2.5, b"raw", 7, -(2 ** 63), 2 ** 64 - 1, D("1.50"),
              datetime.date(2024, 2, 29), dt(2024, 1, 2, 3, 4, 5, 6), td(hours=-1),
              True, "😀", 8]
    for v in values:
        pcur.execute("INSERT INTO tc (s) VALUES (%s)", (v,))
    cur.execute("SELECT s FROM tc ORDER BY id")
    got = [r[0] for r in cur.fetchall()]
    assert got == ["5", "abc", None, "2.5", "raw", "7", str(-(2 ** 63)), str(2 ** 64 - 1),
                   "1.50", "2024-02-29", "2024-01-02 03:04:05.000006", "-01:00:00", "1",
                   "😀", "8"]
    assert len(conn._stmt_cache) >= 1
    # a SELECT returning the parameter: its result type follows the parameter type
    for v, expected in [(1, 1), ("1", "1"), (None, None), (1.5, 1.5), (b"\x00", b"\x00"),
                        (2 ** 64 - 1, 2 ** 64 - 1), (3, 3)]:
        pcur.execute("SELECT ?", (v,))
        row = pcur.fetchone()
        assert row == (expected,) and type(row[0]) is type(expected), (v, row)


# =========================================================================== errors

def test_error_at_prepare_leaves_the_connection_usable(conn):
    pcur = conn.cursor(prepared=True)
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        pcur.execute("SELEC ?", (1,))
    assert ei.value.args[0] == 1064
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        pcur.execute("SELECT * FROM no_such_table_xyz WHERE id = ?", (1,))
    assert ei.value.args[0] == 1146
    assert len(conn._stmt_cache) == 0                   # failed statements are not cached
    pcur.execute("SELECT ?", (1,))
    assert pcur.fetchall() == ((1,),)
    cur = conn.cursor()
    cur.execute("SELECT 2")
    assert cur.fetchall() == ((2,),)


def test_error_at_execute_leaves_statement_and_connection_usable(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE ee (id INT PRIMARY KEY, v TINYINT)")
    pcur = conn.cursor(prepared=True)
    pcur.execute("INSERT INTO ee VALUES (?, ?)", (1, 1))
    with pytest.raises(mysqlc.IntegrityError) as ei:
        pcur.execute("INSERT INTO ee VALUES (?, ?)", (1, 2))
    assert ei.value.args[0] == 1062
    cur.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES'")
    with pytest.raises(mysqlc.DataError) as ei:
        pcur.execute("INSERT INTO ee VALUES (?, ?)", (2, 1000))
    assert ei.value.args[0] == 1264
    pcur.execute("INSERT INTO ee VALUES (?, ?)", (2, 2))
    assert pcur.rowcount == 1
    cur.execute("SELECT * FROM ee ORDER BY id")
    assert cur.fetchall() == ((1, 1), (2, 2))


def test_unsupported_parameter_type(conn):
    pcur = conn.cursor(prepared=True)
    with pytest.raises((mysqlc.ProgrammingError, TypeError)):
        pcur.execute("SELECT ?", (object(),))
    with pytest.raises(mysqlc.ProgrammingError):
        pcur.execute("SELECT ?", (float("nan"),))
    pcur.execute("SELECT ?", (1,))
    assert pcur.fetchall() == ((1,),)


# =========================================================================== cursor kinds

def test_dict_cursor_prepared(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE da (id INT, name VARCHAR(10))")
    cur.execute("CREATE TEMPORARY TABLE db2 (id INT, v DOUBLE)")
    cur.execute("INSERT INTO da VALUES (1, 'a'), (2, 'b')")
    cur.execute("INSERT INTO db2 VALUES (1, 1.5), (2, -0.25)")
    dcur = conn.cursor(mysqlc.cursors.DictCursor, prepared=True)
    assert isinstance(sync_obj(dcur), mysqlc.cursors.DictCursor)
    assert sync_obj(dcur)._prepared
    dcur.execute("SELECT da.id, name, db2.id, v FROM da JOIN db2 ON da.id = db2.id "
                 "WHERE da.id >= %s ORDER BY da.id", (1,))
    rows = dcur.fetchall()
    assert list(rows) == [{"id": 1, "name": "a", "db2.id": 1, "v": 1.5},
                          {"id": 2, "name": "b", "db2.id": 2, "v": -0.25}]
    text, binary, _, _ = _both(conn, "SELECT * FROM da ORDER BY id", None,
                               mysqlc.cursors.DictCursor)
    assert binary == text
    # cursorclass= on the connection, prepared=True on cursor()
    c2 = mysqlc.cursors.prepared_variant(mysqlc.cursors.DictCursor)
    assert c2 is mysqlc.cursors.PreparedDictCursor


def _status(conn, name):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE %s", (name,))
    return int(cur.fetchone()[1])


def test_prepared_is_a_mode_of_any_cursor_class(conn):
    """prepared=True on a class of the user's own puts a cursor of that very class in
    prepared mode (no class made per call); the four standard classes give their
    Prepared* names, which are subclasses that only set the mode."""
    C = mysqlc.cursors

    class Mine(C.SSDictCursor):
        pass

    cur = conn.cursor(Mine, prepared=True)
    assert type(sync_obj(cur)) is Mine and sync_obj(cur)._prepared
    assert cur.arraysize == 100          # a server-side cursor's COM_STMT_FETCH batch
    assert not sync_obj(conn.cursor(Mine))._prepared
    executes = _status(conn, "Com_stmt_execute")
    fetches = _status(conn, "Com_stmt_fetch")
    cur.execute("SELECT seq AS n FROM seq_1_to_250 WHERE seq > %s", (0,))
    assert cur.fetchone() == {"n": 1}
    assert len(cur.fetchall()) == 249 and cur.rowcount == 250
    cur.close()
    assert _status(conn, "Com_stmt_execute") == executes + 1
    assert _status(conn, "Com_stmt_fetch") - fetches == 3    # 100 + 100 + 50 rows

    for cls, prepared in [(C.Cursor, C.PreparedCursor), (C.DictCursor, C.PreparedDictCursor),
                          (C.SSCursor, C.PreparedSSCursor),
                          (C.SSDictCursor, C.PreparedSSDictCursor)]:
        made = sync_obj(conn.cursor(cls, prepared=True))
        assert type(made) is prepared and isinstance(made, cls) and made._prepared
        again = sync_obj(conn.cursor(prepared))
        assert type(again) is prepared and again._prepared
        assert C.prepared_variant(cls) is prepared and C.prepared_variant(prepared) is prepared
        own = {k for k in prepared.__dict__ if not k.startswith("__")}
        assert own <= {"_prepared"}, own     # the flag and nothing else
    assert issubclass(C.PreparedSSDictCursor, C.PreparedSSCursor)
    assert not issubclass(C.PreparedDictCursor, C.PreparedCursor)
    variant = C.prepared_variant(Mine)
    assert issubclass(variant, Mine) and variant._prepared and not Mine._prepared
    with pytest.raises(mysqlc.ProgrammingError, match="no prepared variant"):
        conn.cursor(object, prepared=True)


def test_cursor_attributes_after_prepared_select(conn):
    pcur = conn.cursor(prepared=True)
    n = pcur.execute("SELECT seq, seq * 2 AS dbl FROM seq_1_to_5 WHERE seq > ?", (2,))
    assert n == 3 and pcur.rowcount == 3
    assert [d[0] for d in pcur.description] == ["seq", "dbl"]
    assert pcur.fetchone() == (3, 6)
    assert pcur.fetchmany(5) == ((4, 8), (5, 10))
    assert pcur.fetchone() is None
    assert pcur.lastrowid == 0


def test_executemany_prepared_rowcount(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE em (id INT PRIMARY KEY, s VARCHAR(20), d DATETIME(6))")
    pcur = conn.cursor(prepared=True)
    rows = [(i, "row %d" % i if i % 3 else None, dt(2024, 1, 1) + td(microseconds=i))
            for i in range(1, 101)]
    assert pcur.executemany("INSERT INTO em VALUES (%s, %s, %s)", rows) == 100
    assert pcur.rowcount == 100
    cur.execute("SELECT * FROM em ORDER BY id")
    assert list(cur.fetchall()) == rows
    # UPDATE: the sum of affected rows
    assert pcur.executemany("UPDATE em SET s = %s WHERE id <= %s",
                            [("x", 10), ("y", 5), ("y", 5)]) == 15
    assert pcur.rowcount == 15
    assert pcur.executemany("INSERT INTO em VALUES (%s, %s, %s)", []) is None
    # named placeholders with mappings
    assert pcur.executemany("INSERT INTO em VALUES (%(i)s, %(s)s, NULL)",
                            [{"i": 1000, "s": "a"}, {"i": 1001, "s": "b"}]) == 2
    cur.execute("SELECT COUNT(*) FROM em")
    assert cur.fetchone() == (102,)


def _stmt_executes(conn):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE 'Com_stmt_execute'")
    return int(cur.fetchone()[1])


def _bulk_supported(conn):
    # MariaDB >= 10.2 advertises MARIADB_CLIENT_STMT_BULK_OPERATIONS
    return "mariadb" in conn.get_server_info().lower()


BULK_ROWS = [(i, None if i % 5 == 0 else "s%d é'\\" % i, bytes([i % 256]) * (i % 4),
              dt(2024, 1, 1) + td(seconds=i, microseconds=i), D("%d.12345" % -i), i / 7,
              2 ** 64 - i, td(seconds=-i, microseconds=-i), datetime.date(2000, 1, 1) + td(i))
             for i in range(1, 3001)]


def test_executemany_prepared_bulk_equals_row_by_row(conn):
    """3000 rows of every parameter type through prepared executemany (MariaDB's
    COM_STMT_BULK_EXECUTE: far fewer COM_STMT_EXECUTE than rows) store exactly what the
    text protocol's executemany stores."""
    cur = conn.cursor()
    cols = ("(id INT PRIMARY KEY, s VARCHAR(200) CHARACTER SET utf8mb4, b VARBINARY(10), "
            "d DATETIME(6), m DECIMAL(20,5), f DOUBLE, u BIGINT UNSIGNED, t TIME(6), dd DATE)")
    cur.execute("CREATE TEMPORARY TABLE bulk_p " + cols)
    cur.execute("CREATE TEMPORARY TABLE bulk_t " + cols)
    pcur = conn.cursor(prepared=True)
    before = _stmt_executes(conn)
    assert pcur.executemany("INSERT INTO bulk_p VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            BULK_ROWS) == len(BULK_ROWS)
    assert pcur.rowcount == len(BULK_ROWS)
    executes = _stmt_executes(conn) - before
    if _bulk_supported(conn):
        assert executes <= 10, executes
    else:
        assert executes == len(BULK_ROWS)
    cur.executemany("INSERT INTO bulk_t VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", BULK_ROWS)
    cur.execute("SELECT * FROM bulk_p ORDER BY id")
    bulk = list(cur.fetchall())
    cur.execute("SELECT * FROM bulk_t ORDER BY id")
    assert bulk == list(cur.fetchall())
    assert [tuple(r) for r in bulk] == BULK_ROWS
    cur.execute("SELECT COUNT(*) FROM bulk_p p JOIN bulk_t t ON p.id = t.id AND p.s <=> t.s "
                "AND p.b = t.b AND p.d = t.d AND p.m = t.m AND p.f = t.f AND p.u = t.u "
                "AND p.t = t.t AND p.dd = t.dd")
    assert cur.fetchone() == (len(BULK_ROWS),)


def test_executemany_prepared_mixed_types_in_a_column(conn):
    """Values of different types in one column (and NULLs) cannot share one bulk type:
    still stored right (row by row or typed per batch)."""
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE mx (id INT PRIMARY KEY, s VARCHAR(20))")
    pcur = conn.cursor(prepared=True)
    rows = [(1, "a"), ("2", 5), (3, None), (4, 2.5), (5, b"raw"), (6, D("1.10")),
            (7, datetime.date(2024, 2, 29)), (8, True)]
    assert pcur.executemany("INSERT INTO mx VALUES (?, ?)", rows) == len(rows)
    cur.execute("SELECT * FROM mx ORDER BY id")
    assert cur.fetchall() == ((1, "a"), (2, "5"), (3, None), (4, "2.5"), (5, "raw"),
                              (6, "1.10"), (7, "2024-02-29"), (8, "1"))


def test_executemany_prepared_errors(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE me (id INT PRIMARY KEY, s VARCHAR(10))")
    pcur = conn.cursor(prepared=True)
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        pcur.executemany("INSERT INTO me VALUES (?, ?)", [(1, "a"), (2,)])
    assert "2" in str(ei.value) and "1" in str(ei.value)
    cur.execute("SELECT COUNT(*) FROM me")
    assert cur.fetchone() == (0,)                       # checked before anything is sent
    with pytest.raises(mysqlc.IntegrityError) as ei:
        pcur.executemany("INSERT INTO me VALUES (?, ?)", [(1, "a"), (2, "b"), (1, "dup")])
    assert ei.value.args[0] == 1062
    pcur.executemany("INSERT INTO me VALUES (?, ?)", [(10, "x"), (11, "y")])
    cur.execute("SELECT id FROM me WHERE id >= 10 ORDER BY id")
    assert cur.fetchall() == ((10,), (11,))


def test_executemany_prepared_large_values(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE ml (id INT PRIMARY KEY, b LONGBLOB)")
    pcur = conn.cursor(prepared=True)
    big = [(i, bytes([i]) * (2 * MIB + i)) for i in range(6)]      # above long_data_threshold
    assert pcur.executemany("INSERT INTO ml VALUES (?, ?)", big) == 6
    cur.execute("SELECT id, LENGTH(b), MD5(b) FROM ml ORDER BY id")
    assert cur.fetchall() == tuple((i, len(v), hashlib.md5(v).hexdigest()) for i, v in big)


def test_executemany_prepared_respects_a_small_max_allowed_packet(conn_kwargs,
                                                                  root_conn_kwargs):
    root = mysqlc.connect(**root_conn_kwargs)
    rcur = root.cursor()
    rcur.execute("SELECT @@GLOBAL.max_allowed_packet")
    original = int(rcur.fetchone()[0])
    rcur.execute("SET GLOBAL max_allowed_packet = %d" % MIB)
    try:
        c = mysqlc.connect(**conn_kwargs)
        try:
            cur = c.cursor()
            cur.execute("SELECT @@max_allowed_packet")
            assert cur.fetchone() == (MIB,)
            cur.execute("CREATE TEMPORARY TABLE mp (id INT, s VARCHAR(200))")
            rows = [(i, "x" * 150) for i in range(20000)]           # ~3.2 MB of parameters
            assert c.cursor(prepared=True).executemany(
                "INSERT INTO mp VALUES (?, ?)", rows) == len(rows)
            cur.execute("SELECT COUNT(*) FROM mp")
            assert cur.fetchone() == (len(rows),)
        finally:
            c.close()
    finally:
        rcur.execute("SET GLOBAL max_allowed_packet = %d" % original)
        root.close()


def test_lastrowid_after_prepared_insert(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE ai (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, "
                "v INT)")
    pcur = conn.cursor(prepared=True)
    pcur.execute("INSERT INTO ai (v) VALUES (?)", (10,))
    assert pcur.lastrowid == 1
    pcur.execute("INSERT INTO ai (v) VALUES (?)", (11,))
    assert pcur.lastrowid == 2
    assert conn.insert_id() == 2
    pcur.execute("INSERT INTO ai (id, v) VALUES (?, ?)", (2 ** 63 + 5, 12))
    assert pcur.lastrowid == 2 ** 63 + 5
    pcur.execute("INSERT INTO ai (v) VALUES (?), (?)", (13, 14))
    assert pcur.lastrowid == 2 ** 63 + 6          # the first id of a multi-row insert
    pcur.execute("SELECT COUNT(*) FROM ai WHERE v > ?", (0,))
    assert pcur.lastrowid == 0


# =========================================================================== values by type

def test_decimal_datetime_time_bigint_float_equal_between_protocols(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE vt (id INT AUTO_INCREMENT PRIMARY KEY, "
                "m DECIMAL(65,30), m2 DECIMAL(10,2), d6 DATETIME(6), d0 DATETIME, "
                "t TIME(6), t0 TIME, u BIGINT UNSIGNED, b BIGINT, f FLOAT, g DOUBLE)")
    cur.execute(
        "INSERT INTO vt (m, m2, d6, d0, t, t0, u, b, f, g) VALUES "
        "(-12345678901234567890.123456789012345678901234567890, -99999999.99, "
        "'2024-02-29 23:59:59.999999', '1000-01-01 00:00:00', '-838:59:58.999999', "
        "'-00:00:01', 18446744073709551615, -9223372036854775808, 0.1, 0.1), "
        "(0, 0, '1970-01-01 00:00:00.000001', '9999-12-31 23:59:59', '-00:00:00.000001', "
        "'838:59:59', 0, 9223372036854775807, -3.4028234e38, 1.7976931348623157e308), "
        "(0.000000000000000000000000000001, 0.01, '2000-01-01 12:00:00.5', "
        "'2000-01-01 12:00:00', '-01:02:03.000004', '-838:59:59', 9223372036854775808, -1, "
        "1.17549435e-38, 5e-324), "
        "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 16777217, -0.0), "
        "(1, 1, '2024-01-01', '2024-01-01', '24:00:00', '-24:00:00', 1, 1, 123456.7, 2.5)")
    text, binary, tdesc, pdesc = _both(conn, "SELECT m, m2, d6, d0, t, t0, u, b, f, g "
                                             "FROM vt ORDER BY id")
    assert binary == text
    assert _types(binary) == _types(text)
    assert [d[:2] for d in pdesc] == [d[:2] for d in tdesc]
    assert binary[0] == (D("-12345678901234567890.123456789012345678901234567890"),
                         D("-99999999.99"), dt(2024, 2, 29, 23, 59, 59, 999999),
                         dt(1000, 1, 1), -td(hours=838, minutes=59, seconds=58,
                                              microseconds=999999),
                         td(seconds=-1), 2 ** 64 - 1, -(2 ** 63), 0.1, 0.1)
    assert binary[2][4] == -td(hours=1, minutes=2, seconds=3, microseconds=4)
    assert binary[2][6] == 2 ** 63 and type(binary[2][6]) is int
    # expressions computed by the server: types decided by the server, not a column
    text, binary, _, _ = _both(
        conn, "SELECT SUM(m2), AVG(u), MAX(d6), MIN(t), TIMEDIFF(d0, d6), u - 1, "
              "CAST(u AS CHAR), -t, SEC_TO_TIME(-3661.5), f * 2, g / 3 FROM vt")
    assert binary == text
    assert _types(binary) == _types(text)


# FLOAT(M,D) / DOUBLE(M,D) columns and expressions with a fixed number of decimals: the
# server prints them in the text protocol with exactly D decimals ("%.{D}f"), while the
# binary decoder ignores the column's decimals (FLOAT: "%.6g", DOUBLE: the raw double).
@pytest.mark.parametrize("sql, text_value", [
    ("SELECT f FROM fd", 123456.703),      # FLOAT(10,3) holding 123456.703125
    ("SELECT f7 FROM fd", 123.4567),       # FLOAT(7,4)
    ("SELECT PI()", 3.141593),             # DOUBLE with 6 decimals
    ("SELECT d / 3 FROM fd", 0.3336667),   # DOUBLE(10,3) / 3: 7 decimals
], ids=["float-10-3", "float-7-4", "pi", "double-10-3-div"])
def test_fixed_decimals_float_equal_between_protocols(conn, sql, text_value):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE fd (f FLOAT(10,3), f7 FLOAT(7,4), d DOUBLE(10,3))")
    cur.execute("INSERT INTO fd VALUES (123456.703, 123.4567, 1.001)")
    text, binary, _, _ = _both(conn, sql)
    assert text == [(text_value,)]
    assert binary == text


def test_question_mark_in_a_comment_is_no_placeholder(conn):
    """A ``?`` in a comment (or a string) does not make the SQL qmark-style: the %s
    placeholders are still rewritten (found by a tester through read_sql)."""
    cur = conn.cursor(prepared=True)
    for sql in ("SELECT /* why? */ %s AS y", "SELECT %s AS y -- who?\n", "SELECT %s AS y # ?\n",
                "SELECT '?' AS q, %s AS y"):
        cur.execute(sql, (3,))
        assert cur.fetchone()[-1] == 3, sql
    cur.execute("SELECT ? AS y /* ? */", (4,))
    assert cur.fetchone() == (4,)
