"""Parameter types through every write path (issue 12, "data must never be silently wrong").

Each value of CASES is written through the text ``execute``, the multi-row text
``executemany``, MariaDB's bulk ``executemany`` (COM_STMT_BULK_EXECUTE), a prepared
``execute`` (COM_STMT_EXECUTE), a prepared ``executemany`` and ``load_table`` with Python
rows (LOAD DATA and its INSERT fallback), then selected back: every path must store the
same value, and that value is the one mysqlclient stores for the same parameter --
except where mysqlclient refuses the parameter (the server rejects the ``str()`` it
writes: asserted) or stores its ``str()`` (asserted too).

Then ``max_allowed_packet``: a command that the server would refuse (and then close the
connection for) is refused before it is sent, with OperationalError 2020 naming both
sizes, and the connection stays usable; executemany splits where it can.
"""

import datetime as dt
import decimal
import time
import uuid

import pytest

import mysqlc
from test_pandas import _real_mysqlclient   # noqa: E402  (tests/ is on sys.path)

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

D = decimal.Decimal


class Idx:
    """An object with __index__ only (not an int)."""

    def __index__(self):
        return 7


TABLE_SQL = """CREATE TABLE pt (
    p INT NOT NULL PRIMARY KEY,
    bi BIGINT, u BIGINT UNSIGNED, d DOUBLE, dec6 DECIMAL(20,6), s VARCHAR(100),
    b VARBINARY(100), dtm DATETIME(6), da DATE, tm TIME(6), st SET('a','b','c')
) CHARACTER SET utf8mb4"""

SAME, REJECTS, STORES_STR = "same", "rejects", "stores str()"

# (id, column, value, stored value, what mysqlclient does with it)
CASES = [
    ("np.int8", "bi", np.int8(-5), -5, SAME),
    ("np.uint8", "bi", np.uint8(250), 250, SAME),
    ("np.int16", "bi", np.int16(-300), -300, SAME),
    ("np.uint16", "bi", np.uint16(65000), 65000, SAME),
    ("np.int32", "bi", np.int32(-7), -7, SAME),
    ("np.uint32", "bi", np.uint32(4000000000), 4000000000, SAME),
    ("np.int64", "bi", np.int64(-2 ** 63), -2 ** 63, SAME),
    ("np.uint64", "u", np.uint64(2 ** 64 - 1), 2 ** 64 - 1, SAME),
    ("np.float16", "d", np.float16(1.5), 1.5, SAME),
    ("np.float32", "d", np.float32(0.1), 0.1, SAME),
    ("np.float32-dec", "dec6", np.float32(2.675), D("2.675000"), SAME),
    ("np.float64", "d", np.float64(0.1), 0.1, SAME),
    ("np.bool_", "bi", np.bool_(True), 1, REJECTS),
    ("np.str_", "s", np.str_("h\u00e9llo"), "h\u00e9llo", SAME),
    ("np.bytes_", "b", np.bytes_(b"ab\x00c"), b"ab\x00c", SAME),
    ("np.datetime64[us]", "dtm", np.datetime64("2020-01-02T03:04:05.123456"),
     dt.datetime(2020, 1, 2, 3, 4, 5, 123456), SAME),
    ("np.datetime64[ns]", "dtm", np.datetime64("2020-01-02T03:04:05.123456789"),
     dt.datetime(2020, 1, 2, 3, 4, 5, 123456), SAME),
    ("np.datetime64[D]", "da", np.datetime64("2020-01-02"), dt.date(2020, 1, 2), SAME),
    ("np.timedelta64[s]", "tm", np.timedelta64(90061, "s"), dt.timedelta(seconds=90061),
     REJECTS),
    ("np.datetime64-NaT", "dtm", np.datetime64("NaT"), None, REJECTS),
    ("np.timedelta64-NaT", "tm", np.timedelta64("NaT"), None, REJECTS),
    ("pd.NaT", "dtm", pd.NaT, None, REJECTS),
    ("pd.Timestamp", "dtm", pd.Timestamp("2020-01-02 03:04:05.5"),
     dt.datetime(2020, 1, 2, 3, 4, 5, 500000), SAME),
    ("uuid", "s", uuid.UUID("12345678-1234-5678-1234-567812345678"),
     "12345678-1234-5678-1234-567812345678", SAME),
    ("set", "st", {"a", "c"}, "a,c", SAME),
    ("frozenset", "st", frozenset({"b"}), "b", SAME),
    ("__index__", "bi", Idx(), 7, REJECTS),
    ("struct_time", "dtm", time.struct_time((2021, 3, 4, 5, 6, 7, 3, 63, 0)),
     dt.datetime(2021, 3, 4, 5, 6, 7), REJECTS),
    ("Decimal", "dec6", D("1.25"), D("1.250000"), SAME),
    ("date", "da", dt.date(2020, 1, 2), dt.date(2020, 1, 2), SAME),
    ("datetime", "dtm", dt.datetime(2020, 1, 2, 3, 4, 5, 6), dt.datetime(2020, 1, 2, 3, 4, 5, 6),
     SAME),
    ("time", "tm", dt.time(1, 2, 3, 4), dt.timedelta(hours=1, minutes=2, seconds=3,
                                                      microseconds=4), SAME),
    ("timedelta", "tm", dt.timedelta(days=-1, seconds=5), -dt.timedelta(seconds=86395), SAME),
    ("bytes", "b", b"x'\\\x00", b"x'\\\x00", SAME),
    ("bytearray", "b", bytearray(b"y\n"), b"y\n", SAME),
    ("memoryview", "b", memoryview(b"z\x01"), b"z\x01", STORES_STR),
    ("bool", "bi", True, 1, SAME),
    ("None", "bi", None, None, SAME),
    ("int", "u", 2 ** 64 - 1, 2 ** 64 - 1, SAME),
    ("float", "d", 0.1, 0.1, SAME),
    ("str", "s", "it's \u00e9 \U0001F600", "it's \u00e9 \U0001F600", SAME),
]


def _ins(col, style="%s"):
    if style == "%s":
        return "INSERT INTO pt (p, %s) VALUES (%%s, %%s)" % col
    return "INSERT INTO pt (p, %s) VALUES (%%(p)s, %%(v)s)" % col


def _write_text_execute(conn, col, p, v):
    conn.cursor().execute(_ins(col), (p, v))


def _write_text_executemany(conn, col, p, v):
    # mappings: the multi-row text statement (the bulk path takes sequences only)
    conn.cursor().executemany(_ins(col, "named"), [{"p": p, "v": v}, {"p": p + 1000, "v": v}])


def _write_bulk_executemany(conn, col, p, v):
    assert conn._conn.bulk_operations
    conn.cursor().executemany(_ins(col), [(p, v), (p + 1000, v)])


def _write_prepared_execute(conn, col, p, v):
    conn.cursor(prepared=True).execute(_ins(col), (p, v))


def _write_prepared_executemany(conn, col, p, v):
    conn.cursor(prepared=True).executemany(_ins(col), [(p, v), (p + 1000, v)])


def _write_load_infile(conn, col, p, v):
    assert conn.cursor().load_table("pt", [(p, v), (p + 1000, v)], ["p", col],
                                    method="infile") == 2


def _write_load_insert(conn, col, p, v):
    assert conn.cursor().load_table("pt", [(p, v), (p + 1000, v)], ["p", col],
                                    method="insert") == 2


PATHS = [_write_text_execute, _write_text_executemany, _write_bulk_executemany,
         _write_prepared_execute, _write_prepared_executemany, _write_load_infile,
         _write_load_insert]


@pytest.fixture(scope="module")
def pt_conn(server):
    conn = mysqlc.connect(**server.connect_kwargs(), local_infile=True, autocommit=True)
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS pt")
    cur.execute(TABLE_SQL)
    cur.execute("SELECT @@sql_mode")
    assert "STRICT_TRANS_TABLES" in cur.fetchone()[0]   # what REJECTS relies on
    yield conn
    cur.execute("DROP TABLE IF EXISTS pt")
    conn.close()


@pytest.fixture(scope="module")
def ref_conn(server):
    mysqldb = _real_mysqlclient()
    assert not hasattr(mysqldb, "mysqlc_version"), "expected mysqlclient, got mysqlc"
    kw = server.connect_kwargs()
    conn = mysqldb.connect(host=kw["host"], port=kw["port"], user=kw["user"],
                           password=kw["password"], database=kw["database"],
                           charset="utf8mb4", autocommit=True)
    yield mysqldb, conn
    conn.close()


def _stored(conn, col):
    cur = conn.cursor()
    cur.execute("SELECT p, %s FROM pt ORDER BY p" % col)
    return cur.fetchall()


def _norm(col, value):
    if col == "st" and isinstance(value, (set, frozenset)):
        return ",".join(sorted(value))
    return value


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_same_value_through_every_path(pt_conn, ref_conn, case):
    name, col, value, expected, ref = case
    cur = pt_conn.cursor()
    cur.execute("DELETE FROM pt")
    for k, write in enumerate(PATHS):
        write(pt_conn, col, k, value)
    rows = _stored(pt_conn, col)
    got = {p: _norm(col, v) for p, v in rows}
    assert sorted(got) == [0, 1, 2, 3, 4, 5, 6, 1001, 1002, 1004, 1005, 1006]
    for p, v in got.items():
        where = PATHS[p % 1000].__name__
        assert v == expected, (where, v)
        assert type(v) is type(expected), (where, v)

    # mysqlclient, for the same parameter
    mysqldb, ref_db = ref_conn
    cur.execute("DELETE FROM pt")
    rcur = ref_db.cursor()
    if ref == REJECTS:
        with pytest.raises(mysqldb.OperationalError) as info:
            rcur.execute(_ins(col), (99, value))
        assert info.value.args[0] in (1265, 1292, 1366), info.value.args   # strict mode
    else:
        rcur.execute(_ins(col), (99, value))
        (ref_row,) = _stored(pt_conn, col)
        if ref == SAME:
            assert _norm(col, ref_row[1]) == expected
        else:   # mysqlclient writes str(value): '<memory at 0x...>'
            assert ref_row[1] == str(value).encode()
            assert ref_row[1] != expected


def test_set_of_non_str_is_refused_everywhere(pt_conn, ref_conn):
    """A SET value is its member names; mysqlclient raises TypeError for a set with
    other members, and so does every path (nothing is written)."""
    mysqldb, ref_db = ref_conn
    with pytest.raises(TypeError, match="set elements must be strings"):
        ref_db.cursor().execute(_ins("st"), (1, {1, 2}))
    pt_conn.cursor().execute("DELETE FROM pt")
    for k, write in enumerate(PATHS):
        with pytest.raises(TypeError, match="set elements must be strings"):
            write(pt_conn, "st", k, {1, 2})
    assert _stored(pt_conn, "st") == ()


@pytest.mark.parametrize("col,value", [("d", np.complex128(1 + 2j)),
                                       ("dtm", np.datetime64(20000, "Y")),
                                       ("tm", np.timedelta64(3, "M")),
                                       ("bi", (1, 2))],
                         ids=["complex", "datetime64-year-21970", "timedelta64-months",
                              "tuple"])
def test_unwritable_values_raise_and_write_nothing(pt_conn, col, value):
    """Values with no MySQL equivalent raise in every path (load_table: TypeError for a
    type it has no rule for, DataError for a value out of range, as for its other
    types), nothing is written and the connection stays usable."""
    cur = pt_conn.cursor()
    cur.execute("DELETE FROM pt")
    for k, write in enumerate(PATHS):
        with pytest.raises((mysqlc.Error, TypeError)) as info:
            write(pt_conn, col, k, value)
        if write not in (_write_load_infile, _write_load_insert):
            assert isinstance(info.value, mysqlc.Error), (write.__name__, info.value)
    assert _stored(pt_conn, col) == ()
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)


def test_nat_in_a_row_of_other_values(pt_conn):
    """NaT among real datetimes in one bulk executemany and one load_table."""
    cur = pt_conn.cursor()
    cur.execute("DELETE FROM pt")
    when = dt.datetime(2024, 5, 6, 7, 8, 9)
    rows = [(1, when), (2, pd.NaT), (3, np.datetime64("NaT")), (4, pd.Timestamp(when))]
    cur.executemany(_ins("dtm"), rows)
    cur.load_table("pt", [(p + 10, v) for p, v in rows], ["p", "dtm"])
    assert _stored(pt_conn, "dtm") == ((1, when), (2, None), (3, None), (4, when),
                                       (11, when), (12, None), (13, None), (14, when))


# ---------------------------------------------------------------- max_allowed_packet

LIMIT = 1 << 20


@pytest.fixture
def small_packet(server):
    """max_allowed_packet lowered to 1 MiB for new connections; restored after."""
    root = mysqlc.connect(**server.connect_kwargs(root=True))
    cur = root.cursor()
    cur.execute("SELECT @@global.max_allowed_packet")
    (old,) = cur.fetchone()
    cur.execute("SET GLOBAL max_allowed_packet = %d" % LIMIT)
    conn = mysqlc.connect(**server.connect_kwargs(), autocommit=True)
    try:
        c = conn.cursor()
        c.execute("DROP TABLE IF EXISTS big")
        c.execute("CREATE TABLE big (id INT AUTO_INCREMENT PRIMARY KEY, b LONGBLOB)")
        yield conn
        c = conn.cursor()
        c.execute("DROP TABLE IF EXISTS big")
    finally:
        conn.close()
        cur.execute("SET GLOBAL max_allowed_packet = %d" % old)
        root.close()


def _assert_refused(info, size=None):
    err = info.value
    assert err.args[0] == 2020
    msg = err.args[1]
    assert "max_allowed_packet is %d" % LIMIT in msg
    if size is not None:
        assert " %d bytes" % size in msg
    assert "still usable" in msg


def _alive(conn):
    cur = conn.cursor()
    cur.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(b)), 0) FROM big")
    return cur.fetchone()


def test_query_at_the_limit_is_refused_before_sending(small_packet):
    conn = small_packet
    cur = conn.cursor()
    # the COM_QUERY payload (command byte + SQL) must stay below max_allowed_packet
    ok = b"SELECT LENGTH('" + b"a" * (LIMIT - 1 - 18) + b"')"
    assert len(ok) + 1 == LIMIT - 1
    cur.execute(ok)
    assert cur.fetchall() == ((LIMIT - 19,),)
    too = b"SELECT LENGTH('" + b"a" * (LIMIT - 1 - 17) + b"')"
    with pytest.raises(mysqlc.OperationalError) as info:
        cur.execute(too)
    _assert_refused(info, LIMIT)
    assert _alive(conn) == (0, 0)
    with pytest.raises(mysqlc.OperationalError) as info:
        cur.execute("INSERT INTO big (b) VALUES (%s)", (b"x" * (3 * LIMIT),))
    _assert_refused(info)
    assert _alive(conn) == (0, 0)


def test_prepared_execute_refused_and_long_data_chunked(small_packet):
    conn = small_packet
    cur = conn.cursor(prepared=True)
    sql = "INSERT INTO big (b) VALUES (%s)"
    # inline (no long data): the COM_STMT_EXECUTE packet itself is too large
    conn.long_data_threshold = 0
    with pytest.raises(mysqlc.OperationalError) as info:
        cur.execute(sql, (b"x" * (LIMIT + 10),))
    _assert_refused(info)
    assert _alive(conn) == (0, 0)
    # long data: chunks below the limit, a value of up to max_allowed_packet bytes
    conn.long_data_threshold = 1000
    cur.execute(sql, (b"y" * LIMIT,))
    cur.execute(sql, ("\u00e9" * (LIMIT // 2 - 1),))
    assert _alive(conn) == (2, 2 * LIMIT - 2)
    with pytest.raises(mysqlc.OperationalError) as info:
        cur.execute(sql, (b"z" * (LIMIT + 1),))
    _assert_refused(info, LIMIT + 1)
    # nothing of the refused value stays attached to the statement
    cur.execute(sql, (b"small",))
    cur.execute("SELECT b FROM big ORDER BY id DESC LIMIT 1")
    assert cur.fetchall() == ((b"small",),)


def test_executemany_splits_or_refuses(small_packet):
    conn = small_packet
    cur = conn.cursor()
    rows = [(b"r" * 1000,) for _ in range(3000)]           # 3 MB in all: split
    assert cur.executemany("INSERT INTO big (b) VALUES (%s)", rows) == 3000        # bulk
    assert cur.executemany("INSERT INTO big (b) VALUES (%(b)s)",
                           [{"b": r[0]} for r in rows]) == 3000                     # text
    assert conn.cursor(prepared=True).executemany(
        "INSERT INTO big (b) VALUES (%s)", rows) == 3000
    assert _alive(conn) == (9000, 9000000)
    huge = [(b"a",), (b"h" * (LIMIT + 5),)]
    for many in (lambda: cur.executemany("INSERT INTO big (b) VALUES (%s)", huge),
                 lambda: cur.executemany("INSERT INTO big (b) VALUES (%(b)s)",
                                         [{"b": r[0]} for r in huge]),
                 lambda: conn.cursor(prepared=True).executemany(
                     "INSERT INTO big (b) VALUES (%s)", huge)):
        with pytest.raises(mysqlc.OperationalError) as info:
            many()
        _assert_refused(info)
        count, _ = _alive(conn)
        assert count in (9000, 9001)    # the text path sent the first row's statement
        cur.execute("DELETE FROM big WHERE LENGTH(b) = 1")


def test_limit_read_once_and_only_for_large_commands(small_packet, server):
    c = mysqlc.connect(**server.connect_kwargs())
    try:
        cur = c.cursor()
        cur.execute("SELECT %s", (1,))
        assert c._conn.max_allowed_packet == 0        # small commands: no round trip
        cur.execute(b"SELECT '" + b"a" * 2000 + b"'")
        assert c._conn.max_allowed_packet == LIMIT    # read once, for the 2 KB one
        assert c._get_max_allowed_packet() == LIMIT
        cur.execute("SELECT @@max_allowed_packet")
        assert cur.fetchall() == ((LIMIT,),)
    finally:
        c.close()


def test_sqlalchemy_uuid_column_multi_row_insert(server):
    """SQLAlchemy's Uuid type binds uuid.UUID objects (a native UUID column on
    MariaDB >= 10.7): a multi-row insert is an executemany through the bulk path."""
    sa = pytest.importorskip("sqlalchemy")
    kw = server.connect_kwargs()
    engine = sa.create_engine("mysql+mysqlc://%s:%s@%s:%d/%s" % (
        kw["user"], kw["password"], kw["host"], kw["port"], kw["database"]))
    md = sa.MetaData()
    t = sa.Table("pt_uuid", md, sa.Column("id", sa.Integer, primary_key=True),
                 sa.Column("u", sa.Uuid))
    md.drop_all(engine)
    md.create_all(engine)
    try:
        values = [uuid.UUID(int=i * 12345678901234567) for i in range(1, 6)]
        with engine.begin() as c:
            c.execute(t.insert(), [{"id": i, "u": v} for i, v in enumerate(values, 1)])
        with engine.connect() as c:
            assert c.execute(sa.select(t.c.u).order_by(t.c.id)).scalars().all() == values
            assert c.exec_driver_sql("SELECT CAST(u AS CHAR) FROM pt_uuid ORDER BY id"
                                     ).scalars().all() == [str(v) for v in values]
    finally:
        md.drop_all(engine)
        engine.dispose()


def test_core_reads_the_limit_from_a_scripted_server():
    """The core's one SELECT @@max_allowed_packet, as a server sees it: sent before the
    first command of 1024 bytes or more, its value used for that command."""
    from _peer import BINARY, T_LONGLONG, coldef, ok_packet, scripted, text_row

    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT @@max_allowed_packet")
        deprecate = bool(peer.response["caps"] & 0x01000000)   # CLIENT_DEPRECATE_EOF
        peer.resultset([coldef(b"@@max_allowed_packet", T_LONGLONG, charset=BINARY)],
                       [text_row(b"4096")], deprecate)
        got = peer.expect_query()
        peer.send(ok_packet())
        return got

    srv = scripted(script)
    c = srv.connect()
    try:
        assert c.max_allowed_packet == 0
        with pytest.raises(mysqlc.OperationalError) as info:
            c.query(b"SELECT '" + b"a" * 5000 + b"'")
        assert info.value.args[0] == 2020
        assert "5010 bytes" in info.value.args[1] and "is 4096" in info.value.args[1]
        assert c.max_allowed_packet == 4096
        assert c.query(b"SELECT '" + b"b" * 3000 + b"'") == 0   # below the limit: sent
    finally:
        got = None
        try:
            got = srv.check()
        finally:
            c.close()
    assert got == b"SELECT '" + b"b" * 3000 + b"'"
