"""``use_unicode=False``: columns that would be ``str`` come as the bytes the server sent,
as mysqlclient's ``use_unicode=False``; every other type is unchanged.  Compared value
by value (and type by type) with mysqlclient (``MySQLdb``) for each column type, with
the text protocol and with prepared (binary protocol) cursors, buffered and unbuffered.
"""

import datetime
import decimal

import pytest

import mysqlc
from mysqlc.constants import FIELD_TYPE
from mysqlc.cursors import DictCursor, SSCursor, SSDictCursor

MySQLdb = pytest.importorskip("MySQLdb")

COLUMNS = [
    ("c", "CHAR(3)", "'ab'"),
    ("vc", "VARCHAR(10)", "'vé'"),
    ("t", "TEXT", "'text é'"),
    ("tt", "TINYTEXT", "'tt'"),
    ("mt", "MEDIUMTEXT", "'mt'"),
    ("lt", "LONGTEXT", "'lt'"),
    ("e", "ENUM('a','b')", "'b'"),
    ("s", "SET('x','y')", "'x,y'"),
    ("j", "JSON", "'{\"a\": [1, \"é\"]}'"),
    ("b", "BINARY(3)", "'b'"),
    ("vb", "VARBINARY(5)", "'vb'"),
    ("bl", "BLOB", "x'00ff'"),
    ("d", "DECIMAL(7,3)", "-12.5"),
    ("ti", "TINYINT", "-5"),
    ("ui", "INT UNSIGNED", "4000000000"),
    ("bi", "BIGINT", "-9000000000"),
    ("f", "FLOAT", "1.5"),
    ("db", "DOUBLE", "2.25"),
    ("dt", "DATETIME(6)", "'2020-01-02 03:04:05.123456'"),
    ("ts", "TIMESTAMP NULL", "'2021-05-06 07:08:09'"),
    ("da", "DATE", "'2020-01-02'"),
    ("tm", "TIME", "'-01:02:03'"),
    ("y", "YEAR", "2021"),
    ("bit", "BIT(10)", "b'1000000101'"),
    ("l1", "VARCHAR(5) CHARACTER SET latin1", "'lé'"),
    ("u8", "VARCHAR(5) CHARACTER SET utf8mb3", "'ü'"),
    ("g", "GEOMETRY", "POINT(1, 2)"),
    ("uid", "UUID", "'123e4567-e89b-12d3-a456-426614174000'"),
    ("ip", "INET6", "'::1'"),
    ("n", "VARCHAR(3)", "NULL"),
]

EXPRESSIONS = ("SELECT 'lit', _latin1'x', CONCAT('a', 1), 1.5, NULL, CAST(1 AS CHAR), "
               "JSON_OBJECT('a', 1), 7, 2.5e0, CURDATE() IS NOT NULL, HEX('A'), "
               "CAST('x' AS BINARY)")


@pytest.fixture(scope="module")
def table(server):
    kw = server.connect_kwargs()
    c = mysqlc.connect(**kw)
    cur = c.cursor()
    cur.execute("DROP TABLE IF EXISTS uu_types")
    cur.execute("CREATE TABLE uu_types (%s)" % ", ".join("%s %s" % (n, t) for n, t, _ in COLUMNS))
    cur.execute("INSERT INTO uu_types VALUES (%s)" % ", ".join(v for _, _, v in COLUMNS))
    cur.execute("INSERT INTO uu_types () VALUES ()")     # all NULL (defaults)
    c.commit()
    c.close()
    yield "uu_types"


def _mysqlclient_rows(kw, sql, **extra):
    m = MySQLdb.connect(use_unicode=False, **dict(kw, **extra))
    try:
        cur = m.cursor()
        cur.execute(sql)
        return cur.fetchall()
    finally:
        m.close()


def _typed(rows):
    return [[(type(v), v) for v in row] for row in rows]


@pytest.mark.parametrize("prepared", [False, True])
@pytest.mark.parametrize("cursorclass", [None, SSCursor])
@pytest.mark.parametrize("sql", ["SELECT * FROM uu_types ORDER BY c IS NULL", EXPRESSIONS])
def test_values_and_types_as_mysqlclient(conn_kwargs, table, prepared, cursorclass, sql):
    want = _mysqlclient_rows(conn_kwargs, sql)
    c = mysqlc.connect(use_unicode=False, **conn_kwargs)
    try:
        cur = c.cursor(cursorclass, prepared=prepared)
        cur.execute(sql)
        got = cur.fetchall()
        names = [d[0] for d in cur.description]
    finally:
        c.close()
    assert _typed(got) == _typed(want)
    assert all(isinstance(n, str) for n in names)      # column names stay str
    if sql != EXPRESSIONS:
        row = dict(zip(names, got[0]))
        for name in ("c", "vc", "t", "e", "s", "j", "l1", "u8", "uid", "ip"):
            assert isinstance(row[name], bytes), name
        assert row["vc"] == "vé".encode()
        assert row["d"] == decimal.Decimal("-12.500")
        assert row["dt"] == datetime.datetime(2020, 1, 2, 3, 4, 5, 123456)
        assert row["tm"] == -datetime.timedelta(hours=1, minutes=2, seconds=3)


@pytest.mark.parametrize("prepared", [False, True])
@pytest.mark.parametrize("cursorclass", [DictCursor, SSDictCursor])
def test_dict_cursors(conn_kwargs, table, prepared, cursorclass):
    sql = "SELECT c, vc, j, d, i FROM (SELECT c, vc, j, d, 1 AS i FROM uu_types) AS x"
    c = mysqlc.connect(use_unicode=False, **conn_kwargs)
    try:
        cur = c.cursor(cursorclass, prepared=prepared)
        cur.execute(sql)
        rows = list(cur.fetchall())
    finally:
        c.close()
    m = MySQLdb.connect(use_unicode=False, **conn_kwargs)
    try:
        mc = m.cursor(MySQLdb.cursors.DictCursor)
        mc.execute(sql)
        want = list(mc.fetchall())
    finally:
        m.close()
    assert rows == want
    assert [type(v) for v in rows[0].values()] == [type(v) for v in want[0].values()]


def test_latin1_connection_as_mysqlclient(conn_kwargs, table):
    sql = "SELECT vc, l1, u8, _utf8mb4'é' FROM uu_types"
    want = _mysqlclient_rows(conn_kwargs, sql, charset="latin1")
    c = mysqlc.connect(use_unicode=False, charset="latin1", **conn_kwargs)
    try:
        for prepared in (False, True):
            cur = c.cursor(prepared=prepared)
            cur.execute(sql)
            assert _typed(cur.fetchall()) == _typed(want)
    finally:
        c.close()
    assert want[0][0] == b"v\xe9"      # the bytes in the connection's character set


def test_default_and_true_decode_str(conn_kwargs, table):
    for kw in ({}, {"use_unicode": True}):
        c = mysqlc.connect(**dict(conn_kwargs, **kw))
        try:
            cur = c.cursor()
            cur.execute("SELECT c, vc, j, b FROM uu_types")
            assert cur.fetchone() == ("ab", "vé", '{"a": [1, "é"]}', b"b\x00\x00")
        finally:
            c.close()


def test_converter_gets_bytes_as_mysqlclient(conn_kwargs, table):
    from mysqlc.converters import conversions
    conv = dict(conversions)
    conv[FIELD_TYPE.VAR_STRING] = lambda v: ("conv", v)
    c = mysqlc.connect(use_unicode=False, conv=conv, **conn_kwargs)
    try:
        cur = c.cursor()      # (text protocol: mysqlclient has no prepared cursors)
        cur.execute("SELECT vc FROM uu_types WHERE vc IS NOT NULL")
        assert cur.fetchall() == ((("conv", "vé".encode()),),)
    finally:
        c.close()
    mconv = dict(MySQLdb.converters.conversions)
    mconv[FIELD_TYPE.VAR_STRING] = lambda v: ("conv", v)
    m = MySQLdb.connect(use_unicode=False, conv=mconv, **conn_kwargs)
    try:
        cur = m.cursor()
        cur.execute("SELECT vc FROM uu_types WHERE vc IS NOT NULL")
        assert cur.fetchall() == ((("conv", "vé".encode()),),)
    finally:
        m.close()


def test_columnar_output_has_binary_columns(conn_kwargs, table):
    pa = pytest.importorskip("pyarrow")
    c = mysqlc.connect(use_unicode=False, **conn_kwargs)
    try:
        t = mysqlc.read_sql(c, "SELECT vc, d, ti FROM uu_types")
        assert t.schema.field("vc").type == pa.binary()
        assert t.column("vc").to_pylist() == ["vé".encode(), None]
        assert t.column("ti").to_pylist() == [-5, None]
    finally:
        c.close()


def test_flag_is_read_when_the_plan_is_built(conn_kwargs):
    # the flag is read when a result's plan is built: switching it between results
    # changes the next result only
    c = mysqlc.connect(**conn_kwargs)
    try:
        cur = c.cursor(SSCursor)
        cur.execute("SELECT CONCAT('x', seq) FROM seq_1_to_3")
        assert cur.fetchone() == ("x1",)
        c._conn.use_unicode = False
        assert cur.fetchone() == ("x2",)      # same result: same plan
        cur.fetchall()
        cur.execute("SELECT 'y'")
        assert list(cur.fetchall()) == [(b"y",)]
    finally:
        c.close()
