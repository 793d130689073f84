"""Round trip of every column type through a real server (issue 2's acceptance table).

``CASES`` is the table: for each case a column type, the value inserted as a SQL
literal written in the INSERT, the Python value expected back (written out
literally), and -- where a Python value maps onto the column -- the value inserted
again through a ``%s`` parameter.  Each case is selected back through
``cursor.execute`` + fetch with the default ``Cursor`` and with ``DictCursor``, and
both the value and its exact type are checked.

Expectations follow mysqlclient (DESIGN.md "Compatibility stance"): zero dates ->
None, DECIMAL -> Decimal, TIME -> timedelta (negative and > 24 h), BIT -> bytes of
the column's width in bytes (big-endian, as the server sends them), JSON -> str
(MariaDB's JSON is LONGTEXT), BOOL -> int, GEOMETRY -> bytes (4-byte SRID + WKB),
text columns -> str decoded by their character set (a ``_bin`` collation is still
text: str), ``CHARACTER SET binary`` / BINARY / VARBINARY / BLOB -> bytes.
"""

import collections
import datetime
import decimal
import struct

import pytest

import mysqlc
import mysqlc.cursors
from mysqlc.constants import FIELD_TYPE

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

D = decimal.Decimal
date = datetime.date
dt = datetime.datetime
td = datetime.timedelta

NO_PARAM = object()       # the case has no sensible Python parameter
SAME = object()           # the parameter is the expected value itself

ALL_BYTES = bytes(range(256))
TRICKY_STR = "it's \"quoted\" \\ back\\slash \\' \x00 nul \n\r\t \x1a ctrl-z 😀 emoji % %s %%"
TRICKY_BYTES = b"\x00\x00'\"\\\\'\n\r\x1a%s" + ALL_BYTES + b"\x00"
POINT_1_2_WKB = (b"\x01"                                   # little-endian
                 b"\x01\x00\x00\x00"                       # wkbPoint
                 b"\x00\x00\x00\x00\x00\x00\xf0\x3f"       # x = 1.0
                 b"\x00\x00\x00\x00\x00\x00\x00\x40")      # y = 2.0
ZERO_DATES = ""           # sql_mode that allows zero dates


Case = collections.namedtuple("Case", "id coltype literal expected param sql_mode setup")


def case(id, coltype, literal, expected, param=SAME, sql_mode=None, setup=()):
    return Case(id, coltype, literal, expected, param, sql_mode, tuple(setup))


def hexlit(b):
    return "X'%s'" % b.hex() if b else "''"


UTC = ["SET time_zone = '+00:00'"]

CASES = [
    # ---- integers: min and max, signed and unsigned
    case("tinyint-min", "TINYINT", "-128", -128),
    case("tinyint-max", "TINYINT", "127", 127),
    case("tinyint-unsigned-max", "TINYINT UNSIGNED", "255", 255),
    case("tinyint-unsigned-min", "TINYINT UNSIGNED", "0", 0),
    case("smallint-min", "SMALLINT", "-32768", -32768),
    case("smallint-max", "SMALLINT", "32767", 32767),
    case("smallint-unsigned-max", "SMALLINT UNSIGNED", "65535", 65535),
    case("mediumint-min", "MEDIUMINT", "-8388608", -8388608),
    case("mediumint-max", "MEDIUMINT", "8388607", 8388607),
    case("mediumint-unsigned-max", "MEDIUMINT UNSIGNED", "16777215", 16777215),
    case("int-min", "INT", "-2147483648", -2147483648),
    case("int-max", "INT", "2147483647", 2147483647),
    case("int-unsigned-max", "INT UNSIGNED", "4294967295", 4294967295),
    case("bigint-min", "BIGINT", "-9223372036854775808", -9223372036854775808),
    case("bigint-max", "BIGINT", "9223372036854775807", 9223372036854775807),
    case("bigint-minus-one", "BIGINT", "-1", -1),
    case("bigint-unsigned-max", "BIGINT UNSIGNED", "18446744073709551615",
         18446744073709551615),
    case("bigint-unsigned-2^63", "BIGINT UNSIGNED", "9223372036854775808",
         9223372036854775808),
    case("bigint-unsigned-zero", "BIGINT UNSIGNED", "0", 0),
    case("int-null", "INT", "NULL", None),
    case("year", "YEAR", "2024", 2024),
    case("year-min", "YEAR", "1901", 1901),
    case("year-max", "YEAR", "2155", 2155),
    case("bool-true", "BOOL", "TRUE", 1, param=True),
    case("bool-false", "BOOL", "FALSE", 0, param=False),
    # ---- BIT: bytes of the column width, big-endian
    case("bit8", "BIT(8)", "b'101'", b"\x05", param=5),
    case("bit8-max", "BIT(8)", "b'11111111'", b"\xff", param=255),
    case("bit1", "BIT(1)", "b'1'", b"\x01", param=1),
    case("bit64-max", "BIT(64)", "b'" + "1" * 64 + "'", b"\xff" * 8,
         param=18446744073709551615),
    case("bit64-one", "BIT(64)", "b'1'", b"\x00\x00\x00\x00\x00\x00\x00\x01", param=1),
    case("bit12", "BIT(12)", "b'100000000001'", b"\x08\x01", param=0x801),
    # ---- floating point and DECIMAL
    case("float", "FLOAT", "1.5", 1.5),
    case("float-0.1", "FLOAT", "0.1", 0.1),
    case("float-neg", "FLOAT", "-2.25", -2.25),
    case("double-max", "DOUBLE", "1.7976931348623157e308", 1.7976931348623157e308),
    case("double-min-normal-neg", "DOUBLE", "-2.2250738585072014e-308",
         -2.2250738585072014e-308),
    case("double-0.1", "DOUBLE", "0.1", 0.1),
    case("double-denormal", "DOUBLE", "5e-324", 5e-324),
    case("double-zero", "DOUBLE", "0", 0.0),
    case("decimal-65-30-max", "DECIMAL(65,30)",
         "99999999999999999999999999999999999.999999999999999999999999999999",
         D("99999999999999999999999999999999999.999999999999999999999999999999")),
    case("decimal-65-30-min", "DECIMAL(65,30)",
         "-99999999999999999999999999999999999.999999999999999999999999999999",
         D("-99999999999999999999999999999999999.999999999999999999999999999999")),
    case("decimal-65-30-tiny", "DECIMAL(65,30)", "0.000000000000000000000000000001",
         D("0.000000000000000000000000000001")),
    case("decimal-65-0-max", "DECIMAL(65,0)", "9" * 65, D("9" * 65)),
    case("decimal-10-2", "DECIMAL(10,2)", "'-12345678.90'", D("-12345678.90")),
    case("decimal-10-2-zero", "DECIMAL(10,2)", "0", D("0.00")),
    # ---- dates
    case("date-leap", "DATE", "'2024-02-29'", date(2024, 2, 29)),
    case("date-min", "DATE", "'1000-01-01'", date(1000, 1, 1)),
    case("date-max", "DATE", "'9999-12-31'", date(9999, 12, 31)),
    case("date-zero", "DATE", "'0000-00-00'", None, param=NO_PARAM, sql_mode=ZERO_DATES),
    case("date-zero-in-date", "DATE", "'2024-00-00'", None, param=NO_PARAM,
         sql_mode=ZERO_DATES),
    case("datetime0", "DATETIME", "'2024-01-02 03:04:05'", dt(2024, 1, 2, 3, 4, 5)),
    case("datetime1", "DATETIME(1)", "'2024-01-02 03:04:05.1'",
         dt(2024, 1, 2, 3, 4, 5, 100000)),
    case("datetime3", "DATETIME(3)", "'2024-01-02 03:04:05.120'",
         dt(2024, 1, 2, 3, 4, 5, 120000)),
    case("datetime6", "DATETIME(6)", "'2024-01-02 03:04:05.123456'",
         dt(2024, 1, 2, 3, 4, 5, 123456)),
    case("datetime6-min", "DATETIME(6)", "'1000-01-01 00:00:00.000000'",
         dt(1000, 1, 1, 0, 0, 0, 0)),
    case("datetime6-max", "DATETIME(6)", "'9999-12-31 23:59:59.999999'",
         dt(9999, 12, 31, 23, 59, 59, 999999)),
    case("datetime6-whole-second", "DATETIME(6)", "'2024-01-02 03:04:05'",
         dt(2024, 1, 2, 3, 4, 5)),
    case("datetime-zero", "DATETIME", "'0000-00-00 00:00:00'", None, param=NO_PARAM,
         sql_mode=ZERO_DATES),
    case("datetime6-zero", "DATETIME(6)", "'0000-00-00 00:00:00.000000'", None,
         param=NO_PARAM, sql_mode=ZERO_DATES),
    case("timestamp6-max", "TIMESTAMP(6) NULL", "'2038-01-19 03:14:07.999999'",
         dt(2038, 1, 19, 3, 14, 7, 999999), setup=UTC),
    case("timestamp-min", "TIMESTAMP NULL", "'1970-01-01 00:00:01'",
         dt(1970, 1, 1, 0, 0, 1), setup=UTC),
    case("timestamp6", "TIMESTAMP(6) NULL", "'2024-01-02 03:04:05.000001'",
         dt(2024, 1, 2, 3, 4, 5, 1), setup=UTC),
    case("timestamp-zero", "TIMESTAMP NULL", "'0000-00-00 00:00:00'", None, param=NO_PARAM,
         sql_mode=ZERO_DATES),
    # ---- TIME: timedelta, negative and beyond 24 h
    case("time-min", "TIME", "'-838:59:59'", -td(hours=838, minutes=59, seconds=59)),
    case("time-max", "TIME", "'838:59:59'", td(hours=838, minutes=59, seconds=59)),
    case("time-zero", "TIME", "'00:00:00'", td(0)),
    case("time-25h", "TIME", "'25:00:00'", td(hours=25)),
    case("time-neg-1s", "TIME", "'-00:00:01'", td(seconds=-1)),
    case("time6-neg-1us", "TIME(6)", "'-00:00:00.000001'", td(microseconds=-1)),
    case("time6", "TIME(6)", "'12:34:56.789012'",
         td(hours=12, minutes=34, seconds=56, microseconds=789012),
         param=datetime.time(12, 34, 56, 789012)),
    case("time6-neg-big", "TIME(6)", "'-838:59:58.999999'",
         -td(hours=838, minutes=59, seconds=58, microseconds=999999)),
    case("time3", "TIME(3)", "'01:02:03.5'", td(hours=1, minutes=2, seconds=3,
                                                microseconds=500000)),
    # ---- text in different character sets
    case("varchar-utf8mb4-emoji", "VARCHAR(50) CHARACTER SET utf8mb4", "'😀 héllo'",
         "😀 héllo"),
    case("char-utf8mb4", "CHAR(10) CHARACTER SET utf8mb4", "'😀 héllo'", "😀 héllo"),
    case("char-trailing-spaces", "CHAR(10)", "'ab  '", "ab"),
    case("text-utf8mb4", "TEXT CHARACTER SET utf8mb4", "'😀 héllo'", "😀 héllo"),
    case("tinytext-utf8mb4", "TINYTEXT CHARACTER SET utf8mb4", "'😀 héllo'", "😀 héllo"),
    case("mediumtext-utf8mb4", "MEDIUMTEXT CHARACTER SET utf8mb4", "'😀 héllo'", "😀 héllo"),
    case("longtext-utf8mb4", "LONGTEXT CHARACTER SET utf8mb4", "'😀 héllo'", "😀 héllo"),
    case("varchar-utf8mb4-tricky", "VARCHAR(200) CHARACTER SET utf8mb4",
         "'it''s \"quoted\" \\\\ back\\\\slash \\\\'' \\0 nul \\n\\r\\t \\Z ctrl-z 😀 emoji "
         "% %s %%'", TRICKY_STR),
    case("varchar-utf8mb3", "VARCHAR(20) CHARACTER SET utf8mb3", "'héllo ñ'", "héllo ñ"),
    case("varchar-latin1-euro", "VARCHAR(20) CHARACTER SET latin1", "'café €'", "café €"),
    case("text-latin1-cp1252", "TEXT CHARACTER SET latin1", "'€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ ÿ'",
         "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ ÿ"),
    case("varchar-ascii", "VARCHAR(20) CHARACTER SET ascii", "'plain ~!@#'", "plain ~!@#"),
    case("varchar-utf8mb4-bin", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
         "'AbC é'", "AbC é"),
    case("varchar-charset-binary", "VARCHAR(20) CHARACTER SET binary", "'AbC'", b"AbC",
         param=b"AbC"),
    case("text-charset-binary", "TEXT CHARACTER SET binary", "'AbC\\0'", b"AbC\x00",
         param=b"AbC\x00"),
    case("varchar-empty", "VARCHAR(10)", "''", ""),
    case("varchar-null", "VARCHAR(10)", "NULL", None),
    case("text-empty", "TEXT", "''", ""),
    case("enum", "ENUM('a','b','c')", "'b'", "b"),
    case("enum-utf8", "ENUM('é','😀') CHARACTER SET utf8mb4", "'😀'", "😀"),
    case("set", "SET('a','b','c')", "'a,c'", "a,c"),
    case("set-reordered", "SET('a','b','c')", "'c,a'", "a,c", param="c,a"),
    case("set-empty", "SET('a','b','c')", "''", ""),
    case("json", "JSON", "'{\"a\": 1}'", '{"a": 1}'),
    case("json-unicode", "JSON", "'{\"k\": \"😀\"}'", '{"k": "😀"}'),
    # ---- binary
    case("binary4", "BINARY(4)", "X'00610062'", b"\x00a\x00b"),
    case("binary4-padded", "BINARY(4)", "'ab'", b"ab\x00\x00", param=b"ab"),
    case("varbinary-all-bytes", "VARBINARY(300)", hexlit(ALL_BYTES), ALL_BYTES),
    case("varbinary-empty", "VARBINARY(10)", "''", b""),
    case("varbinary-null", "VARBINARY(10)", "NULL", None),
    case("blob-all-bytes", "BLOB", hexlit(ALL_BYTES * 4), ALL_BYTES * 4),
    case("blob-nuls", "BLOB", "X'0000000000'", b"\x00" * 5),
    case("blob-tricky", "BLOB", hexlit(TRICKY_BYTES), TRICKY_BYTES),
    case("tinyblob", "TINYBLOB", hexlit(ALL_BYTES[:255]), ALL_BYTES[:255]),
    case("mediumblob", "MEDIUMBLOB", hexlit(ALL_BYTES * 300), ALL_BYTES * 300),
    case("longblob", "LONGBLOB", hexlit(ALL_BYTES * 300), ALL_BYTES * 300),
    case("blob-empty", "BLOB", "''", b""),
    case("blob-null", "BLOB", "NULL", None),
    case("geometry-point", "GEOMETRY", "ST_GeomFromText('POINT(1 2)')",
         b"\x00\x00\x00\x00" + POINT_1_2_WKB, param=NO_PARAM),
    case("point-srid", "POINT", "ST_GeomFromText('POINT(1 2)', 4326)",
         b"\xe6\x10\x00\x00" + POINT_1_2_WKB, param=NO_PARAM),
]

assert len({c.id for c in CASES}) == len(CASES)


# =========================================================================== helpers

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


def _check_select(conn, expected, id=1):
    """SELECT the value back with Cursor and DictCursor; check value and exact type."""
    cur = conn.cursor()
    n = cur.execute("SELECT v FROM rt WHERE id = %s", (id,))
    assert n == 1
    row = cur.fetchone()
    assert cur.fetchone() is None
    assert row == (expected,)
    assert type(row[0]) is type(expected), (type(row[0]), type(expected))
    cur.close()

    dcur = conn.cursor(mysqlc.cursors.DictCursor)
    dcur.execute("SELECT v FROM rt WHERE id = %s", (id,))
    rows = list(dcur.fetchall())
    assert rows == [{"v": expected}]
    assert type(rows[0]["v"]) is type(expected)
    dcur.close()


def _ids(cases):
    return [c.id for c in cases]


# =========================================================================== the table

@pytest.mark.parametrize("c", CASES, ids=_ids(CASES))
def test_roundtrip_sql_literal(conn, c):
    cur = _setup(conn, c)
    cur.execute("INSERT INTO rt (id, v) VALUES (1, %s)" % c.literal)
    assert cur.rowcount == 1
    _check_select(conn, c.expected)


PARAM_CASES = [c for c in CASES if c.param is not NO_PARAM]


@pytest.mark.parametrize("c", PARAM_CASES, ids=_ids(PARAM_CASES))
def test_roundtrip_parameter(conn, c):
    cur = _setup(conn, c)
    param = c.expected if c.param is SAME else c.param
    cur.execute("INSERT INTO rt (id, v) VALUES (%s, %s)", (2, param))
    assert cur.rowcount == 1
    _check_select(conn, c.expected, id=2)


def test_all_cases_in_one_row(conn):
    """All the literal cases as columns of one wide row (one result with many decoders),
    without the ones that need another sql_mode or time zone."""
    cases = [c for c in CASES if c.sql_mode is None and not c.setup]
    cur = conn.cursor()
    cols = ", ".join("c%d %s" % (i, c.coltype) for i, c in enumerate(cases))
    cur.execute("CREATE TEMPORARY TABLE wide (%s) CHARACTER SET utf8mb4 ROW_FORMAT=DYNAMIC"
                % cols)
    cur.execute("INSERT INTO wide VALUES (%s)" % ", ".join(c.literal for c in cases))
    cur.execute("SELECT * FROM wide")
    row = cur.fetchone()
    assert list(row) == [c.expected for c in cases]
    assert [type(v) for v in row] == [type(c.expected) for c in cases]
    assert [d[0] for d in cur.description] == ["c%d" % i for i in range(len(cases))]


def test_geometry_matches_server_wkb(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE g (id INT, v GEOMETRY)")
    cur.execute("INSERT INTO g VALUES (1, ST_GeomFromText('POINT(1 2)'))")
    # a bytes parameter is a plain string literal: _binary makes it a binary string
    cur.execute("INSERT INTO g VALUES (2, ST_GeomFromWKB(_binary %s))", (POINT_1_2_WKB,))
    cur.execute("SELECT v, ST_AsBinary(v), ST_AsText(v) FROM g ORDER BY id")
    rows = list(cur.fetchall())
    assert len(rows) == 2
    for v, wkb, text in rows:
        assert wkb == POINT_1_2_WKB
        assert v == b"\x00\x00\x00\x00" + wkb
        assert text == "POINT(1 2)"
    assert cur.description[0][1] == FIELD_TYPE.GEOMETRY


def test_bit_width_and_value(conn):
    """BIT(n) comes as ceil(n/8) big-endian bytes; check against the server's own view."""
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE b (b1 BIT(1), b9 BIT(9), b64 BIT(64))")
    cur.execute("INSERT INTO b VALUES (1, 257, 1311768467463790320)")
    cur.execute("SELECT b1, b9, b64, b1 + 0, b9 + 0, b64 + 0 FROM b")
    row = cur.fetchone()
    assert row == (b"\x01", b"\x01\x01", b"\x12\x34\x56\x78\x9a\xbc\xde\xf0", 1, 257,
                   1311768467463790320)
    assert [d[1] for d in cur.description[:3]] == [FIELD_TYPE.BIT] * 3


def test_empty_string_and_null_are_distinct(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE e (id INT, s VARCHAR(10), b BLOB, i INT)")
    cur.execute("INSERT INTO e VALUES (1, '', '', 0), (2, NULL, NULL, NULL)")
    cur.execute("INSERT INTO e VALUES (%s, %s, %s, %s), (%s, %s, %s, %s)",
                (3, "", b"", 0, 4, None, None, None))
    cur.execute("SELECT s, b, i FROM e ORDER BY id")
    assert list(cur.fetchall()) == [("", b"", 0), (None, None, None),
                                    ("", b"", 0), (None, None, None)]
    cur.execute("SELECT COUNT(*) FROM e WHERE s IS NULL")
    assert cur.fetchone() == (2,)


def test_20mb_longblob_roundtrip(conn):
    value = ALL_BYTES * (20 * 1024 * 1024 // 256) + b"\x00end"
    assert len(value) > 20 * 1000 * 1000
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE big (id INT, v LONGBLOB)")
    cur.execute("INSERT INTO big VALUES (%s, %s)", (1, value))
    cur.execute("SELECT LENGTH(v), MD5(v) FROM big")
    import hashlib
    assert cur.fetchone() == (len(value), hashlib.md5(value).hexdigest())
    cur.execute("SELECT v FROM big")
    got = cur.fetchone()[0]
    assert type(got) is bytes
    assert len(got) == len(value)
    assert got == value


def test_large_text_roundtrip(conn):
    value = ("é😀'\\\"\x00" * 400000)    # 4.4 MB of UTF-8 with escapes
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE bigt (v LONGTEXT CHARACTER SET utf8mb4)")
    cur.execute("INSERT INTO bigt VALUES (%s)", (value,))
    cur.execute("SELECT v, CHAR_LENGTH(v) FROM bigt")
    got, n = cur.fetchone()
    assert n == len(value)
    assert got == value


# =========================================================================== parameters

PARAM_VALUES = [
    # (id, column type, python value, expected back)
    ("int-min", "BIGINT", -9223372036854775808, -9223372036854775808),
    ("int-max", "BIGINT", 9223372036854775807, 9223372036854775807),
    ("uint-max", "BIGINT UNSIGNED", 18446744073709551615, 18446744073709551615),
    ("float", "DOUBLE", 2.5e-300, 2.5e-300),
    ("float-neg", "DOUBLE", -1.0000000000000002, -1.0000000000000002),
    ("decimal", "DECIMAL(30,10)", D("-12345678901234567890.0123456789"),
     D("-12345678901234567890.0123456789")),
    ("decimal-exp", "DECIMAL(30,10)", D("1E+5"), D("100000.0000000000")),
    ("str-tricky", "TEXT CHARACTER SET utf8mb4", TRICKY_STR, TRICKY_STR),
    ("bytes-all", "BLOB", ALL_BYTES, ALL_BYTES),
    ("bytes-tricky", "BLOB", TRICKY_BYTES, TRICKY_BYTES),
    ("bytearray", "BLOB", bytearray(ALL_BYTES), ALL_BYTES),
    ("memoryview", "BLOB", memoryview(ALL_BYTES), ALL_BYTES),
    ("bool-true", "TINYINT", True, 1),
    ("bool-false", "TINYINT", False, 0),
    ("none", "INT", None, None),
    ("date", "DATE", date(2024, 2, 29), date(2024, 2, 29)),
    ("datetime-us", "DATETIME(6)", dt(2024, 1, 2, 3, 4, 5, 6), dt(2024, 1, 2, 3, 4, 5, 6)),
    ("datetime-tz-ignored", "DATETIME(6)",
     dt(2024, 1, 2, 3, 4, 5, 600000, tzinfo=datetime.timezone(td(hours=5))),
     dt(2024, 1, 2, 3, 4, 5, 600000)),
    ("time", "TIME(6)", datetime.time(23, 59, 59, 999999),
     td(hours=23, minutes=59, seconds=59, microseconds=999999)),
    ("timedelta-neg", "TIME(6)", -td(hours=1, microseconds=5),
     -td(hours=1, microseconds=5)),
    ("timedelta-neg-small", "TIME", td(seconds=-1), td(seconds=-1)),
    ("timedelta-over-24h", "TIME", td(days=3, hours=4, minutes=5, seconds=6),
     td(days=3, hours=4, minutes=5, seconds=6)),
    ("timedelta-max", "TIME", td(hours=838, minutes=59, seconds=59),
     td(hours=838, minutes=59, seconds=59)),
]


@pytest.mark.parametrize("coltype, value, expected", [p[1:] for p in PARAM_VALUES],
                         ids=[p[0] for p in PARAM_VALUES])
@pytest.mark.parametrize("mode", ["default", "NO_BACKSLASH_ESCAPES"])
def test_parameter_types(conn, coltype, value, expected, mode):
    cur = conn.cursor()
    if mode == "NO_BACKSLASH_ESCAPES":
        cur.execute("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'")
    cur.execute("CREATE TEMPORARY TABLE p (id INT, v %s)" % coltype)
    cur.execute("INSERT INTO p VALUES (%s, %s)", (1, value))
    cur.execute("INSERT INTO p VALUES (%(id)s, %(v)s)", {"id": 2, "v": value})
    cur.execute("SELECT id FROM p WHERE id = %s AND v <=> %s", (1, value))
    assert list(cur.fetchall()) == [(1,)]   # the value compares equal on the server too
    cur.execute("SELECT v FROM p ORDER BY id")
    rows = list(cur.fetchall())
    assert rows == [(expected,), (expected,)]
    assert type(rows[0][0]) is type(expected)


def test_no_backslash_escapes_is_tracked(conn):
    cur = conn.cursor()
    cur.execute("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'")
    s = "back\\slash 'quote' \\' \\\\ end\\"
    cur.execute("SELECT %s, %s", (s, "\\"))
    assert cur.fetchone() == (s, "\\")
    assert conn.literal("a\\b'c") == b"'a\\b''c'"
    cur.execute("SET SESSION sql_mode = ''")
    cur.execute("SELECT %s, %s", (s, "\\"))
    assert cur.fetchone() == (s, "\\")
    assert conn.literal("a\\b'c") == b"'a\\\\b\\'c'"


def test_in_tuple_parameter(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE t_in (id INT, s VARCHAR(20))")
    cur.executemany("INSERT INTO t_in VALUES (%s, %s)",
                    [(1, "a"), (2, "it's"), (3, "c\\d"), (4, "😀")])
    cur.execute("SELECT id FROM t_in WHERE id IN %s ORDER BY id", ((1, 3, 4),))
    assert list(cur.fetchall()) == [(1,), (3,), (4,)]
    cur.execute("SELECT id FROM t_in WHERE s IN %s ORDER BY id", (["it's", "c\\d", "😀"],))
    assert list(cur.fetchall()) == [(2,), (3,), (4,)]
    cur.execute("SELECT id FROM t_in WHERE id IN %(ids)s AND s <> %(s)s ORDER BY id",
                {"ids": (1, 2), "s": "a"})
    assert list(cur.fetchall()) == [(2,)]


def test_pyformat_dict_parameters(conn):
    cur = conn.cursor()
    cur.execute("SELECT %(a)s, %(b)s, %(a)s, '%%', %(c)s", {"a": 1, "b": "x'y", "c": None})
    assert cur.fetchone() == (1, "x'y", 1, "%", None)


def test_percent_without_parameters_is_literal(conn):
    cur = conn.cursor()
    cur.execute("SELECT '%s %d 100%'")
    assert cur.fetchone() == ("%s %d 100%",)
    cur.execute("SELECT '100%%', %s", ("x",))
    assert cur.fetchone() == ("100%", "x")


# =========================================================================== converters

def test_user_converter_replaces_one_type_only(conn_kwargs):
    # a number column's converter gets the wire bytes (mysqlclient's argument)
    c = mysqlc.connect(conv={FIELD_TYPE.LONG: lambda s: "X" + s.decode()}, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE cv (i INT, b BIGINT, s VARCHAR(5), d DATE, "
                    "m DECIMAL(5,2), n INT)")
        cur.execute("INSERT INTO cv VALUES (42, 43, 'str', '2024-01-02', 1.25, NULL)")
        cur.execute("SELECT i, b, s, d, m, n FROM cv")
        row = cur.fetchone()
        # NULL stays None: converters are not called for NULL (mysqlclient)
        assert row == ("X42", 43, "str", date(2024, 1, 2), D("1.25"), None)
        # MariaDB types a small integer literal LONG and a large one LONGLONG
        cur.execute("SELECT -7, 12345678901")
        assert [d[1] for d in cur.description] == [FIELD_TYPE.LONG, FIELD_TYPE.LONGLONG]
        assert cur.fetchone() == ("X-7", 12345678901)
        dcur = c.cursor(mysqlc.cursors.DictCursor)
        dcur.execute("SELECT i FROM cv")
        assert dcur.fetchone() == {"i": "X42"}
    finally:
        c.close()


def test_user_converters_for_text_binary_and_dates(conn_kwargs):
    import mysqlc.converters
    conv = mysqlc.converters.conversions.copy()
    conv[FIELD_TYPE.DATE] = lambda s: ("date", s)
    conv[FIELD_TYPE.BLOB] = lambda v: ("blob", v)
    conv[FIELD_TYPE.NEWDECIMAL] = float
    c = mysqlc.connect(conv=conv, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE cv2 (d DATE, t TEXT CHARACTER SET utf8mb4, "
                    "bl BLOB, m DECIMAL(5,2), i INT, dt DATETIME)")
        cur.execute("INSERT INTO cv2 VALUES ('2024-01-02', 'é😀', X'00ff', 1.25, 5, "
                    "'2024-01-02 03:04:05')")
        cur.execute("SELECT d, t, bl, m, i, dt FROM cv2")
        row = cur.fetchone()
        # TEXT and BLOB are both FIELD_TYPE.BLOB: the converter gets str for the text
        # column and bytes for the binary one
        assert row == (("date", "2024-01-02"), ("blob", "é😀"), ("blob", b"\x00\xff"), 1.25,
                       5, dt(2024, 1, 2, 3, 4, 5))
        assert type(row[3]) is float
    finally:
        c.close()


def test_default_conversions_keep_builtin_decoding(conn_kwargs):
    import mysqlc.converters
    c = mysqlc.connect(conv=mysqlc.converters.conversions.copy(), **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT 1, CAST(2 AS DECIMAL(3,1)), DATE('2024-01-02'), "
                    "CAST('00:00:01' AS TIME), 'x', X'00'")
        assert cur.fetchone() == (1, D("2.0"), date(2024, 1, 2), td(seconds=1), "x", b"\x00")
    finally:
        c.close()


# =========================================================================== description

def test_description(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE dsc (i INT NOT NULL, b BIGINT UNSIGNED, "
                "v VARCHAR(10) CHARACTER SET utf8mb4, m DECIMAL(10,2) NOT NULL, d DATETIME(6), "
                "t TEXT, bl BLOB, e ENUM('x','y'), j JSON, dt DATE, tm TIME, bt BIT(3), "
                "dbl DOUBLE, f FLOAT, y YEAR, ch CHAR(3), ts TIMESTAMP NULL, g GEOMETRY, "
                "ti TINYINT, si SMALLINT, mi MEDIUMINT)")
    cur.execute("SELECT i, b, v AS alias, m, d, t, bl, e, j, dt, tm, bt, dbl, f, y, ch, ts, g, "
                "ti, si, mi FROM dsc")
    desc = cur.description
    assert len(desc) == 21
    assert all(len(d) == 7 for d in desc)
    names = [d[0] for d in desc]
    assert names == ["i", "b", "alias", "m", "d", "t", "bl", "e", "j", "dt", "tm", "bt", "dbl",
                     "f", "y", "ch", "ts", "g", "ti", "si", "mi"]
    types = [d[1] for d in desc]
    assert types == [FIELD_TYPE.LONG, FIELD_TYPE.LONGLONG, FIELD_TYPE.VAR_STRING,
                     FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.DATETIME, FIELD_TYPE.BLOB,
                     FIELD_TYPE.BLOB, FIELD_TYPE.STRING, FIELD_TYPE.BLOB, FIELD_TYPE.DATE,
                     FIELD_TYPE.TIME, FIELD_TYPE.BIT, FIELD_TYPE.DOUBLE, FIELD_TYPE.FLOAT,
                     FIELD_TYPE.YEAR, FIELD_TYPE.STRING, FIELD_TYPE.TIMESTAMP,
                     FIELD_TYPE.GEOMETRY, FIELD_TYPE.TINY, FIELD_TYPE.SHORT, FIELD_TYPE.INT24]
    null_ok = [bool(d[6]) for d in desc]
    assert null_ok == [False] + [True] * 2 + [False] + [True] * 17
    # internal_size: the column length in bytes as the server sends it
    assert desc[2][3] == 40          # VARCHAR(10) in utf8mb4: 4 bytes per character
    assert desc[0][3] == 11          # INT
    # scale of DECIMAL(10,2) and fractional digits of DATETIME(6)
    assert desc[3][5] == 2
    assert desc[4][5] == 6
    # description stays after fetching everything; rowcount of an empty result
    assert cur.fetchall() in ((), [])
    assert cur.rowcount == 0
    assert cur.description == desc


def test_type_objects_compare_with_type_codes(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE tobj (bl BLOB)")
    cur.execute("SELECT 1, 'a', bl, NOW(), 1.5 FROM (SELECT 1) x LEFT JOIN tobj ON 1")
    codes = [d[1] for d in cur.description]
    assert codes[0] == mysqlc.NUMBER
    assert codes[1] == mysqlc.STRING
    assert codes[2] == mysqlc.BINARY
    assert codes[3] == mysqlc.DATETIME
    assert codes[4] == mysqlc.NUMBER
    assert codes[0] != mysqlc.STRING
