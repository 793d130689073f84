"""Columnar methods on the buffered cursors (issue 12): the default Cursor, DictCursor and
the prepared cursors keep the result's row packets (``_core.Store``) and their columnar
methods decode those packets straight into Arrow in C, as ``read_sql`` does from the
socket; the row methods decode the rows they return.  ``rowcount``, ``description``,
``scroll``, ``rownumber`` and ``nextset`` behave as before (mysqlclient's buffered cursor).
"""

import datetime
import gc
import os

import pytest

import mysqlc
import mysqlc.cursors as C
from mysqlc import _core
from mysqlc.constants import CLIENT, FIELD_TYPE

pa = pytest.importorskip("pyarrow")

from test_columnar import ARROW_TYPE, _wide_table  # noqa: E402

BUFFERED = [C.Cursor, C.DictCursor, C.PreparedCursor, C.PreparedDictCursor]
IDS = [c.__name__ for c in BUFFERED]


def _protocol(cls):
    return "binary" if cls._prepared else "text"


@pytest.fixture
def wide(conn):
    """All the plain types of test_types.CASES as columns of 700 rows (NULLs spread over
    them): more than two strides of the store's row index."""
    cases = _wide_table(conn, "w", [0])
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE w2 LIKE w")
    cur.execute("INSERT INTO w2 SELECT seq, %s FROM w, seq_1_to_699"
                % ", ".join("IF((seq + %d) %% 7 = 0, NULL, w.c%d)" % (i, i)
                            for i in range(len(cases))))
    cur.execute("INSERT INTO w2 SELECT * FROM w")
    cur.close()
    return conn, cases, "SELECT * FROM w2 ORDER BY id"


@pytest.mark.parametrize("cls", BUFFERED, ids=IDS)
def test_columnar_methods_equal_read_sql(wide, cls):
    conn, cases, sql = wide
    want = mysqlc.read_sql(conn, sql, protocol=_protocol(cls))
    assert want.num_rows == 700
    cur = conn.cursor(cls)
    assert cur.execute(sql) == 700
    assert type(cur._rows) is _core.Store          # the packets, not Python rows
    t = cur.fetch_arrow_table()
    assert t.schema == want.schema
    for i, c in enumerate(cases):
        assert t.schema.field("c%d" % i).type == ARROW_TYPE[c.coltype]
    assert t.equals(want)
    assert cur.rowcount == 700 and cur.rownumber == 700
    assert cur.fetchone() is None and cur.fetchall() == ()

    # batches of 7: the record batch reader, the stream capsule, numpy, pandas, polars
    cur.execute(sql)
    reader = cur.fetch_record_batches(7)
    batches = list(reader)
    assert max(b.num_rows for b in batches) == 7
    assert pa.Table.from_batches(batches, schema=reader.schema).equals(want)
    cur.execute(sql)
    assert pa.table(cur.fetch_arrow_stream(100)).equals(want)
    cur.execute(sql)
    assert cur.fetch_df().equals(want.to_pandas())
    pl = pytest.importorskip("polars")
    cur.execute(sql)
    want_str = mysqlc.read_sql(conn, sql, "polars", protocol=_protocol(cls), decimal="str")
    assert cur.fetch_polars(decimal="str").equals(want_str)
    cur.execute("SELECT id, c0, c1 FROM w2 ORDER BY id")
    arrays = cur.fetchnumpy()
    assert list(arrays["id"][:3]) == [0, 1, 2]
    cur.close()


@pytest.mark.parametrize("cls", BUFFERED, ids=IDS)
def test_rows_equal_the_streamed_rows(wide, cls):
    """Rows decoded from the store equal the rows an unbuffered cursor decodes from the
    socket (the same row decoder), in the same shape (tuples or dicts)."""
    conn, _cases, sql = wide
    ss = conn.cursor(C.prepared_variant(C.SSDictCursor if issubclass(cls, C.DictCursor)
                                        else C.SSCursor)
                     if cls._prepared
                     else (C.SSDictCursor if issubclass(cls, C.DictCursor) else C.SSCursor))
    ss.execute(sql)
    want = tuple(ss.fetchall())
    ss.close()
    cur = conn.cursor(cls)
    cur.execute(sql)
    assert cur.fetchall() == want
    cur.scroll(0, "absolute")
    assert tuple(cur) == want
    cur.scroll(-3)
    assert cur.fetchmany(5) == want[-3:]
    cur.scroll(699, "absolute")
    assert cur.fetchone() == want[699]
    with pytest.raises(IndexError):
        cur.scroll(700, "absolute")
    cur.scroll(256, "absolute")            # across the store's index strides
    assert cur.fetchmany(300) == want[256:556]
    assert cur.rownumber == 556


@pytest.mark.parametrize("cls", BUFFERED, ids=IDS)
def test_fetchone_then_arrow_gives_the_rest(conn, cls):
    """The columnar methods return the rows fetchall() would: those after rownumber."""
    sql = "SELECT seq AS id, CONCAT('n', seq) AS name FROM seq_1_to_1000"
    cur = conn.cursor(cls)
    cur.execute(sql)
    first = cur.fetchone()
    assert first in ((1, "n1"), {"id": 1, "name": "n1"})
    cur.fetchmany(4)
    t = cur.fetch_arrow_table()
    assert t.num_rows == 995
    assert t.column("id").to_pylist() == list(range(6, 1001))
    assert cur.rownumber == 1000 and cur.rowcount == 1000
    assert cur.fetchone() is None
    cur.scroll(0, "absolute")               # the rows are still there
    assert len(cur.fetchall()) == 1000
    cur.scroll(500, "absolute")
    t = cur.fetch_arrow_table(batch_size=128)
    assert t.column("id").to_pylist() == list(range(501, 1001))


@pytest.mark.parametrize("cls", BUFFERED, ids=IDS)
def test_rowcount_description_as_mysqlclient(conn, conn_kwargs, cls):
    import MySQLdb
    import MySQLdb.cursors
    kw = dict(conn_kwargs)
    kw.pop("charset", None)
    my = MySQLdb.connect(charset="utf8mb4", **{k: v for k, v in kw.items()
                                                if k in ("host", "port", "user", "password",
                                                         "database", "unix_socket")})
    try:
        mcls = (MySQLdb.cursors.DictCursor if issubclass(cls, C.DictCursor)
                else MySQLdb.cursors.Cursor)
        mcur = my.cursor(mcls)
        cur = conn.cursor(cls)
        for sql in ("SELECT seq, CONCAT('x', seq) AS s FROM seq_1_to_300",
                    "SELECT 1 AS a FROM DUAL WHERE 1 = 0",
                    "SELECT NULL AS n, 2.5 AS d, CAST('2020-01-02' AS DATE) AS dt"):
            assert cur.execute(sql) == mcur.execute(sql)
            assert cur.rowcount == mcur.rowcount
            assert [d[:2] for d in cur.description] == [d[:2] for d in mcur.description]
            assert cur.rownumber == mcur.rownumber == 0
            assert cur.fetchone() == mcur.fetchone()
            assert cur.rownumber == mcur.rownumber
            assert cur.fetchall() == tuple(mcur.fetchall())
            assert cur.rownumber == mcur.rownumber
        cur.execute("DO 1")
        mcur.execute("DO 1")
        assert cur.rowcount == mcur.rowcount and cur.description is None
        with pytest.raises(mysqlc.ProgrammingError):
            cur.fetch_arrow_table()
    finally:
        my.close()


@pytest.mark.parametrize("cls", [C.Cursor, C.DictCursor], ids=["Cursor", "DictCursor"])
def test_multiple_result_sets(conn_kwargs, cls):
    c = mysqlc.connect(client_flag=CLIENT.MULTI_STATEMENTS, **conn_kwargs)
    try:
        cur = c.cursor(cls)
        cur.execute("SELECT seq AS a FROM seq_1_to_300; DO 1; "
                    "SELECT 'x' AS s, seq AS b FROM seq_1_to_5; SELECT 7 AS last")
        assert cur.rowcount == 300 and type(cur._rows) is _core.Store
        assert cur.fetch_arrow_table().column("a").to_pylist() == list(range(1, 301))
        assert cur.nextset()
        assert cur.description is None and cur.rowcount == 0
        assert cur.nextset()
        assert cur.rowcount == 5 and [d[0] for d in cur.description] == ["s", "b"]
        cur.fetchone()
        assert cur.fetch_arrow_table().column("b").to_pylist() == [2, 3, 4, 5]
        assert cur.nextset()
        row = cur.fetchone()
        assert row in ((7,), {"last": 7})
        assert cur.nextset() is None
    finally:
        c.close()


def test_connection_is_free_once_execute_returns(conn):
    """execute() reads the whole result off the socket: another cursor can run statements
    at once, and the first cursor's rows and columns are still all there."""
    cur = conn.cursor()
    cur.execute("SELECT seq, REPEAT('v', seq % 100) AS s FROM seq_1_to_5000")
    assert not conn._conn.rows_pending
    other = conn.cursor()
    other.execute("SELECT 2")
    assert other.fetchall() == ((2,),)
    assert cur.fetchone() == (1, "v")
    t = cur.fetch_arrow_table()
    assert t.num_rows == 4999 and t.column("seq")[0].as_py() == 2
    cur.scroll(0, "absolute")
    assert len(cur.fetchall()) == 5000


def test_converters_decode_at_execute(conn_kwargs):
    """With a user converter for a column's type the rows are decoded in execute(), so the
    converter's errors surface there, as with mysqlclient; columns without one are stored."""
    calls = []

    def conv(text):                    # the wire bytes of a number (mysqlclient's argument)
        calls.append(text)
        if text == b"13":
            raise ValueError("unlucky")
        return int(text)

    c = mysqlc.connect(conv={FIELD_TYPE.LONGLONG: conv}, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT seq AS i FROM seq_1_to_5")
        assert type(cur._rows) is tuple and len(calls) == 5
        with pytest.raises(ValueError, match="unlucky"):
            cur.execute("SELECT seq AS i FROM seq_1_to_20")
        cur.execute("SELECT seq AS i FROM seq_1_to_3")
        t = cur.fetch_arrow_table()          # rows already decoded: converted with pyarrow
        assert t.column("i").to_pylist() == [1, 2, 3]
        cur.execute("SELECT 'text' AS s, 2.5 AS d")   # no LONGLONG column: stored
        assert type(cur._rows) is _core.Store
        assert cur.fetchall() == (("text", __import__("decimal").Decimal("2.5")),)
    finally:
        c.close()


def _capture(conn, sql, cls=C.Cursor):
    core = conn._conn
    cur = conn.cursor(cls)
    cur.execute(sql)             # prepares (binary): the capture holds the execute only
    core._start_capture()
    cur.execute(sql)
    data = core._stop_capture()
    cur.close()
    return data, core.client_flag


def test_bad_value_names_its_column(conn):
    """Replayed server bytes, corrupted: text that is not UTF-8 is refused when the result
    is stored (in execute(), the connection closed, as before); an integer column's value
    that is no number passes the store's check and raises, naming its column, at the fetch
    that decodes it (rows) and in the columnar methods."""
    sql = "SELECT seq AS i, CONCAT('s', seq) AS s FROM seq_1_to_300"
    data, flags = _capture(conn, sql)
    r = _core.Connection()
    r._replay(data, flags)
    s = r.store()
    assert len(s) == 300 and s[0] == (1, "s1") and s[-1] == (300, "s300")

    bad = data.replace(b"\x03150\x04s150", b"\x031x0\x04s150", 1)
    assert bad != data
    r = _core.Connection()
    r._replay(bad, flags)
    s = r.store()
    assert len(s) == 300 and s[148] == (149, "s149")
    with pytest.raises(mysqlc.OperationalError, match="column 'i'") as ei:
        s[149]
    assert ei.value.args[0] == 2027
    with pytest.raises(mysqlc.OperationalError, match="column 'i'"):
        s[100:200]
    with pytest.raises(mysqlc.OperationalError, match="column 'i': not an integer") as ei:
        s.fetch_arrow(0)
    assert ei.value.args[0] == 2027
    schema, array, got = s.fetch_arrow(150)      # the rows after it are intact
    assert got == 150

    bad = data.replace(b"\x04s150", b"\x04s\xff50", 1)
    r = _core.Connection()
    r._replay(bad, flags)
    with pytest.raises(mysqlc.OperationalError, match="column 's'") as ei:
        r.store()
    assert ei.value.args[0] == 2027
    assert not r.rows_pending


def _binary_capture(conn, sql):
    """The complete COM_STMT_EXECUTE response of `sql` (benchmarks/_replay.py's capture,
    which puts back the column definitions MariaDB's metadata cache leaves out)."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks"))
    try:
        from _replay import capture
    finally:
        sys.path.pop(0)
    return capture(conn._conn, sql)[1], conn._conn.client_flag


def test_bad_binary_value_names_its_column(conn):
    """Binary rows: a DATE whose length byte is not 0, 4, 7 or 11 passes the store's framing
    check (a length byte and that many bytes) and raises, naming the column, when decoded."""
    data, flags = _binary_capture(conn, "SELECT CAST('2020-01-01' + INTERVAL seq DAY AS DATE)"
                                  " AS d, seq AS i FROM seq_1_to_50")
    r = _core.Connection()
    r._replay(data, flags, True)
    s = r.store()
    assert s[0] == (datetime.date(2020, 1, 2), 1) and len(s) == 50
    good = b"\x04\xe4\x07\x01\x0b"                       # 2020-01-11
    pos = data.index(good)
    bad = data[:pos] + b"\x03\xe4\x07\x01" + data[pos + 4:]  # length 3, one byte more after
    # (the row's packet length is unchanged: the extra byte is read as the next value's)
    r = _core.Connection()
    r._replay(bad, flags, True)
    try:
        s = r.store()
    except mysqlc.OperationalError as exc:     # the framing check refused the row
        assert exc.args[0] == 2027
        return
    with pytest.raises(mysqlc.OperationalError) as ei:
        s[0:]
    assert ei.value.args[0] == 2027


def _wire_rows(data):
    return len(data)


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("shape", ["many_small_values", "large_rows"])
def test_memory_of_a_stored_result_stays_near_its_wire_size(conn, shape):
    """A buffered result holds its row packets: the store is the size of the rows on the
    wire, where the Python rows of the eager path (still what an unbuffered cursor's
    fetchall() makes) are several times larger for many small values."""
    import tracemalloc
    if shape == "many_small_values":
        sql = ("SELECT %s FROM seq_1_to_20000"
               % ", ".join("seq + %d AS c%d" % (i, i) for i in range(20)))
    else:
        sql = "SELECT seq, REPEAT(CHAR(65 + seq % 26), 100000) AS big FROM seq_1_to_100"
    data, _flags = _capture(conn, sql)
    wire = len(data)
    cur = conn.cursor()
    gc.collect()
    before = _rss()
    cur.execute(sql)
    grown = _rss() - before
    store = cur._rows
    assert type(store) is _core.Store
    assert store.nbytes <= wire * 1.02 + 65536
    assert grown <= wire * 1.5 + (4 << 20)
    # the eager path: Python objects for every value
    tracemalloc.start()
    ss = conn.cursor(C.SSCursor)
    ss.execute(sql)
    rows = ss.fetchall()
    eager = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    if shape == "many_small_values":
        assert eager > 3 * store.nbytes
    else:
        assert eager > 0.9 * store.nbytes
    t = cur.fetch_arrow_table()
    assert t.num_rows == len(rows)


def test_a_connection_read_as_rows_decodes_ahead(conn):
    """Every buffered result without a user converter is kept as packets (a Store); once a
    connection's Store has been read as rows, its next Stores also decode their rows in
    execute() (while the socket is idle, and the rest once the last packet arrived: the
    eager path's overlap of decoding and transfer), handed out by the first row fetch; a
    columnar read -- of a Store or of rows decoded for a converter -- drops them and
    switches back.  Values are the same either way."""
    sql = "SELECT seq, CONCAT('r', seq) AS s, seq / 7 AS d FROM seq_1_to_3000"
    cur = conn.cursor()
    cur.execute(sql)
    assert type(cur._rows) is _core.Store and cur._rows.ahead == 0
    cur.execute(sql)
    assert cur._rows.ahead == 0                    # executing alone changes nothing
    rows = cur.fetchall()                          # a row read
    cur.execute(sql)
    s = cur._rows
    assert type(s) is _core.Store and s.ahead == 3000
    assert cur.fetchall() == rows and cur.rowcount == 3000 and s.ahead == 0
    cur.scroll(0, "absolute")                      # handed out once, decoded again after
    assert cur.fetchall() == rows
    other = conn.cursor(C.DictCursor)              # per connection, not per cursor
    other.execute(sql)
    assert type(other._rows) is _core.Store and other._rows.ahead == 3000
    t = other.fetch_arrow_table()                  # columnar read: the rows are dropped
    assert other._rows.ahead == 0
    assert t.column("s").to_pylist() == [r[1] for r in rows]
    cur.execute(sql)
    assert cur._rows.ahead == 0
    t2 = cur.fetch_arrow_table()
    assert t2.column("seq").to_pylist() == [r[0] for r in rows]
    cur.execute(sql)
    cur.fetchmany(0)                               # nothing decoded: no row read
    cur.execute(sql)
    assert cur._rows.ahead == 0
    assert cur.fetchone() == rows[0]
    cur.execute(sql)
    assert cur._rows.ahead == 3000
    assert cur.fetchone() == rows[0] and cur._rows.ahead == 2999
    assert cur.fetchmany(2) == rows[1:3] and cur._rows.ahead == 2997


@pytest.fixture
def mixed(conn):
    """benchmarks/bench_columnar.py's ten mixed columns, 5,000 rows (a temporary table)."""
    cur = conn.cursor()
    cur.execute("""CREATE TEMPORARY TABLE mixed (
        id INT NOT NULL PRIMARY KEY, c_bigint BIGINT NOT NULL, c_int INT NOT NULL,
        c_varchar VARCHAR(64) NOT NULL, c_double DOUBLE NOT NULL,
        c_decimal DECIMAL(12,2) NOT NULL, c_datetime DATETIME(6) NOT NULL,
        c_date DATE NOT NULL, c_text TEXT NULL, c_smallint SMALLINT NOT NULL
        ) DEFAULT CHARSET=utf8mb4""")
    cur.execute("""INSERT INTO mixed SELECT s, s * 2654435761, (s * 7919) % 2000001 - 1000000,
        CONCAT('name-', s, ELT(1 + s % 5, '', ' café', ' жук',
                                ' 漢字', ' 🙂')),
        s / 7e0 + 0.25, (s % 1000000) * 1.37 - 500000,
        TIMESTAMP'2020-01-01 00:00:00' + INTERVAL s SECOND + INTERVAL (s * 37) % 1000000 MICROSECOND,
        DATE'2000-01-01' + INTERVAL s % 9000 DAY,
        IF(s % 5 = 2, NULL, REPEAT(CONCAT('text ', s, ' '), 1 + s % 4)), s % 65536 - 32768
        FROM (SELECT CAST(seq AS SIGNED) AS s FROM seq_1_to_5000) AS g""")
    cur.close()
    return "SELECT * FROM mixed ORDER BY id"


@pytest.mark.parametrize("cls", [C.Cursor, C.DictCursor], ids=["Cursor", "DictCursor"])
def test_first_fetch_decides_after_rows_or_columns(conn, mixed, cls):
    """Issue 22: the stored result decides its decoding at its first fetch.  After a
    fetchall() on the connection, execute() + fetch_arrow_table() gives read_sql()'s table
    (decoded from the packets in C, not converted from Python rows); after a columnar read,
    execute() + fetchall() gives the rows the unbuffered cursor streams."""
    sql = mixed
    want_table = mysqlc.read_sql(conn, sql)
    ss = conn.cursor(C.SSDictCursor if cls is C.DictCursor else C.SSCursor)
    ss.execute(sql)
    want_rows = tuple(ss.fetchall())
    ss.close()
    cur = conn.cursor(cls)
    cur.execute(sql)
    assert cur.fetchall() == want_rows             # rows: the connection reads rows
    for _ in range(2):
        cur.execute(sql)
        assert type(cur._rows) is _core.Store and cur._rows.ahead == 5000
        t = cur.fetch_arrow_table()
        assert t.equals(want_table)
        assert cur._rows.ahead == 0 and cur.rownumber == 5000
        cur.execute(sql)                          # the reverse order: columns, then rows
        assert type(cur._rows) is _core.Store and cur._rows.ahead == 0
        assert cur.fetchall() == want_rows
    # a mix within one result: rows first, then the rest as Arrow (and back)
    cur.execute(sql)
    assert cur.fetchmany(10) == want_rows[:10]
    assert cur.fetch_arrow_table().equals(want_table.slice(10))
    cur.scroll(0, "absolute")
    assert cur.fetchall() == want_rows


def test_decoding_ahead_follows_how_the_shape_was_read(conn):
    """Rows are decoded ahead when this result's shape (its column definitions and names)
    was last read as rows on the connection; a shape not seen follows the connection's
    last read.  So a query read as columns stays on the columnar path after other results
    were read as rows (issue 22: execute() + fetch_arrow_table() after a fetchall())."""
    sql = "SELECT seq AS a, CONCAT('x', seq) AS b FROM seq_1_to_2000"
    cur = conn.cursor()
    cur.execute(sql)
    cur.fetch_arrow_table()                        # this shape: columns
    cur.execute("SELECT 1 AS one")
    cur.fetchall()                                 # the connection: rows
    cur.execute(sql)
    assert cur._rows.ahead == 0                    # ... but this shape is read as columns
    assert cur.fetch_arrow_table().num_rows == 2000
    cur.execute("SELECT seq AS other FROM seq_1_to_10")
    assert cur._rows.ahead == 0                    # a new shape: as the connection's last
    cur.execute("SELECT 1 AS one")
    assert cur._rows.ahead == 1                    # read as rows last time
    cur.fetchall()
    cur.execute("SELECT seq AS other FROM seq_1_to_10")
    assert cur._rows.ahead == 10
    cur.fetch_arrow_table()
    cur.execute("SELECT 1 AS one")
    assert cur._rows.ahead == 1
    assert cur.fetchall() == ((1,),)


def test_rows_decoded_ahead_are_handed_out_once(conn):
    """A row decoded ahead belongs to the caller once fetched: a dict changed by the caller
    is not what a later fetch of the same row (after scroll) returns."""
    cur = conn.cursor(C.DictCursor)
    cur.execute("SELECT 1 AS a")
    cur.fetchall()
    cur.execute("SELECT seq AS a FROM seq_1_to_500")
    assert cur._rows.ahead == 500
    first = cur.fetchone()
    first["a"] = "changed"
    cur.scroll(0, "absolute")
    again = cur.fetchone()
    assert again == {"a": 1} and again is not first
    assert len(cur.fetchall()) == 499


def test_errors_of_rows_decoded_ahead_surface_in_execute(conn):
    """On a connection that reads rows, a row whose text does not decode, or whose value
    does not parse for its column, raises from execute() (store()), as the eager path did,
    naming the column (replayed server bytes, corrupted)."""
    sql = "SELECT seq AS i, CONCAT('s', seq) AS s FROM seq_1_to_300"
    data, flags = _capture(conn, sql)
    r = _core.Connection()
    r._replay(data, flags)
    s = r.store()
    assert s.ahead == 0 and s[0] == (1, "s1")      # a row read: r reads rows now
    r._replay(data, flags)
    s = r.store()
    assert s.ahead == 300 and s[0:] == tuple((i, "s%d" % i) for i in range(1, 301))
    for bad, column in [(data.replace(b"\x03150\x04s150", b"\x031x0\x04s150", 1), "i"),
                        (data.replace(b"\x04s150", b"\x04s\xff50", 1), "s")]:
        assert bad != data
        r._replay(bad, flags)
        with pytest.raises(mysqlc.OperationalError, match="column '%s'" % column) as ei:
            r.store()
        assert ei.value.args[0] == 2027


def test_store_is_a_read_only_sequence_of_rows(conn):
    cur = conn.cursor(C.DictCursor)
    cur.execute("SELECT a.seq AS id, b.seq AS id FROM seq_1_to_3 a JOIN seq_1_to_1 b "
                "ORDER BY a.seq")
    s = cur._rows
    assert type(s) is _core.Store and len(s) == 3
    assert s[0] == {"id": 1, "b.id": 1}           # duplicate names keyed table.column
    assert s[-1] == s[2] and s[::2] == (s[0], s[2]) and s[5:] == () and s[::-1][0] == s[2]
    with pytest.raises(IndexError):
        s[3]
    with pytest.raises(TypeError):
        s["x"]
    with pytest.raises(TypeError):
        s[0] = 1
    with pytest.raises(TypeError):
        _core.Store()
    assert list(s) == list(cur.fetchall())
