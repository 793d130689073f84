"""Bulk load: ``cursor.load_table`` (mysqlc/bulk.py, src/infile_encode.c; issue 8).

Round trips every column type from Python tuples, a pyarrow Table, a pandas DataFrame
and a polars DataFrame, over LOAD DATA LOCAL INFILE and over the INSERT fallback:
load, select back, compare exactly with the source.  Then the fallbacks (connection
without local_infile, server with local_infile=OFF), warnings, progress, bad input
(the connection stays usable and nothing is loaded), the Arrow layouts (slices,
views, dictionaries, large types, every temporal unit) and the encoder alone (no
server).
"""

import datetime as dt
import decimal
import gc
import io
import warnings

import pytest

import mysqlc
from mysqlc import _core

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis
ENCODER_ONLY = pytest.mark.sync_only("no connection: the LOAD DATA encoder of the core itself")

D = decimal.Decimal
TD = dt.timedelta

pa = pytest.importorskip("pyarrow")   # in tests/requirements.txt: never skipped in CI

LONG_TEXT = ("x\ty\nz\r\\w\x00é😀" * 2000)

# (name, SQL type, arrow type factory name, values of rows 1..5)
COLUMNS = [
    ("ti", "TINYINT", "int8", [-128, 127, None, 0, 1]),
    ("tiu", "TINYINT UNSIGNED", "uint8", [0, 255, None, 7, 8]),
    ("si", "SMALLINT", "int16", [-32768, 32767, None, -1, 2]),
    ("siu", "SMALLINT UNSIGNED", "uint16", [0, 65535, None, 1, 3]),
    ("mi", "MEDIUMINT", "int32", [-8388608, 8388607, None, 5, -5]),
    ("miu", "MEDIUMINT UNSIGNED", "uint32", [0, 16777215, None, 6, 9]),
    ("i", "INT", "int32", [-2147483648, 2147483647, None, 42, -42]),
    ("iu", "INT UNSIGNED", "uint32", [0, 4294967295, None, 43, 44]),
    ("bi", "BIGINT", "int64", [-2 ** 63, 2 ** 63 - 1, None, -44, 10 ** 15]),
    ("biu", "BIGINT UNSIGNED", "uint64", [0, 2 ** 64 - 1, None, 45, 2 ** 63]),
    ("f", "FLOAT", "float32", [-1.5, 3.25, None, 0.0, 1024.5]),
    ("d", "DOUBLE", "float64", [0.1, 1.7976931348623157e308, None, -5e-324, 1 / 3]),
    ("dec65", "DECIMAL(65,30)", "decimal256(65,30)",
     [D("-99999999999999999999999999999999999.999999999999999999999999999999"),
      D("12345678901234567890123456789012345.123456789012345678901234567890"), None,
      D("0.000000000000000000000000000001"), D("0E-30")]),
    ("dec52", "DECIMAL(5,2)", "decimal128(5,2)",
     [D("-999.99"), D("999.99"), None, D("0.05"), D("-0.50")]),
    ("dt", "DATE", "date32",
     [dt.date(1000, 1, 1), dt.date(9999, 12, 31), None, dt.date(1969, 12, 31),
      dt.date(2000, 2, 29)]),
    ("dtm", "DATETIME(6)", "timestamp_us",
     [dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None,
      dt.datetime(1969, 12, 31, 23, 59, 59, 500000), dt.datetime(2024, 2, 29, 1, 2, 3, 4)]),
    ("ts", "TIMESTAMP(6) NULL", "timestamp_us",
     [dt.datetime(1970, 1, 1, 0, 0, 1), dt.datetime(2038, 1, 19, 3, 14, 7, 999999), None,
      dt.datetime(2000, 2, 29, 12, 0, 0, 1), dt.datetime(2020, 6, 30, 23, 59, 59)]),
    ("tm", "TIME(6)", "duration_us",
     [-TD(hours=838, minutes=59, seconds=59), TD(hours=838, minutes=59, seconds=59), None,
      TD(days=1, hours=1, microseconds=1), TD(seconds=-1, microseconds=250000)]),
    ("ch", "CHAR(10)", "string", ["", "é😀ab", None, "N", "\\N"]),
    ("vc", "VARCHAR(100)", "string",
     ["a\tb\nc\rd\\e\x00f😀", "\\N", None, "NULL", "\\"]),
    ("tx", "TEXT", "large_string", [LONG_TEXT, "", None, "\t\n", "end\\"]),
    ("bl", "BLOB", "binary",
     [bytes(range(256)), b"", None, b"\\N", bytes(range(255, -1, -1)) * 10]),
    ("js", "JSON", "string",
     ['{"k": "\\u00e9 \\t", "n": [1, 2.5, null]}', "[]", None, "null", '"\\\\N"']),
    ("en", "ENUM('a','b','é')", "dictionary", ["a", "é", None, "b", "a"]),
    ("bt", "BIT(8)", "binary", [b"\x00", b"\xff", None, b"\x05", b"\x80"]),
    ("l1", "VARCHAR(20) CHARACTER SET latin1", "string", ["é", "ÿ", None, "", "abc"]),
]
NAMES = ["id"] + [c[0] for c in COLUMNS]
NROWS = 5
ROWS = [tuple([r + 1] + [c[3][r] for c in COLUMNS]) for r in range(NROWS)]

CREATE = ("CREATE TABLE lt_types (id INT NOT NULL PRIMARY KEY, %s)"
          % ", ".join("`%s` %s" % (c[0], c[1]) for c in COLUMNS))


def _arrow_type(name):
    if name.startswith("decimal256"):
        p, s = name[11:-1].split(",")
        return pa.decimal256(int(p), int(s))
    if name.startswith("decimal128"):
        p, s = name[11:-1].split(",")
        return pa.decimal128(int(p), int(s))
    if name == "timestamp_us":
        return pa.timestamp("us")
    if name == "duration_us":
        return pa.duration("us")
    if name == "dictionary":
        return None
    return getattr(pa, name)()


def arrow_table(columns=COLUMNS):
    arrays = {"id": pa.array(range(1, NROWS + 1), pa.int32())}
    for name, _sql, tname, values in columns:
        t = _arrow_type(tname)
        if t is None:
            arrays[name] = pa.array(values, pa.string()).dictionary_encode()
        else:
            arrays[name] = pa.array(values, t)
    return pa.table(arrays)


def pandas_frame():
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    frame = {"id": pd.array(range(1, NROWS + 1), dtype="Int32")}
    ints = {"int8": "Int8", "uint8": "UInt8", "int16": "Int16", "uint16": "UInt16",
            "int32": "Int32", "uint32": "UInt32", "int64": "Int64", "uint64": "UInt64"}
    for name, _sql, tname, values in COLUMNS:
        if tname in ints:
            col = pd.array(values, dtype=ints[tname])
        elif tname == "float32":
            col = np.array([np.nan if v is None else v for v in values], dtype=np.float32)
        elif tname == "float64":
            col = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        elif tname == "timestamp_us":
            col = pd.Series(values, dtype="datetime64[us]")
        elif tname == "duration_us":
            col = pd.Series(values, dtype="timedelta64[us]")
        elif tname == "dictionary":
            col = pd.Categorical(values, categories=["a", "b", "é"])
        else:   # decimals, dates, strings, bytes: Python objects
            col = pd.Series(values, dtype=object)
        frame[name] = col
    return pd.DataFrame(frame)


def polars_frame():
    pl = pytest.importorskip("polars")
    cols = [c for c in COLUMNS if c[0] != "dec65"]   # polars decimals stop at 38 digits
    return pl.from_arrow(arrow_table(cols)), ["id"] + [c[0] for c in cols]


@pytest.fixture
def lconn(conn_kwargs):
    c = mysqlc.connect(local_infile=True, autocommit=True, init_command="SET time_zone='+00:00'",
                       **conn_kwargs)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def pconn(conn_kwargs):
    """A connection without local_infile (did not announce CLIENT_LOCAL_FILES)."""
    c = mysqlc.connect(autocommit=True, init_command="SET time_zone='+00:00'", **conn_kwargs)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def types_table(lconn):
    cur = lconn.cursor()
    cur.execute("DROP TABLE IF EXISTS lt_types")
    cur.execute(CREATE)
    yield "lt_types"
    cur.execute("DROP TABLE IF EXISTS lt_types")


def select_all(conn, table="lt_types", names=NAMES):
    cur = conn.cursor()
    cur.execute("SELECT %s FROM `%s` ORDER BY id" % (", ".join("`%s`" % n for n in names),
                                                     table))
    return list(cur.fetchall())


def expected(names=NAMES):
    idx = [NAMES.index(n) for n in names]
    return [tuple(row[i] for i in idx) for row in ROWS]


def _source(kind):
    if kind == "tuples":
        return ROWS, None, NAMES
    if kind == "arrow":
        return arrow_table(), None, NAMES
    if kind == "pandas":
        return pandas_frame(), None, NAMES
    if kind == "polars":
        frame, names = polars_frame()
        return frame, None, names
    raise AssertionError(kind)


# ---------------------------------------------------------------- round trips

@pytest.mark.parametrize("method", ["infile", "insert"])
@pytest.mark.parametrize("kind", ["tuples", "arrow", "pandas", "polars"])
def test_round_trip_every_type(lconn, types_table, kind, method):
    data, columns, names = _source(kind)
    cur = lconn.cursor()
    with warnings.catch_warnings():
        warnings.simplefilter("error", mysqlc.Warning)
        n = cur.load_table(types_table, data, columns, method=method)
    assert n == NROWS
    assert cur.rowcount == NROWS
    assert cur.warning_count == 0 and cur.messages == []
    got = select_all(lconn, names=names)
    want = expected(names)
    for g, w in zip(got, want):
        for name, a, b in zip(names, g, w):
            assert a == b and type(a) is type(b), (kind, method, name, a, b)
    assert got == want


def test_round_trip_small_batches_and_chunked_table(lconn, types_table):
    """Batches of 2 rows, a table of several chunks and a sliced table: offsets of the
    struct and of every child array are honoured."""
    t = arrow_table()
    chunked = pa.concat_tables([t.slice(0, 1), t.slice(1, 3), t.slice(4)])
    assert chunked.column(0).num_chunks == 3
    cur = lconn.cursor()
    assert cur.load_table(types_table, chunked, batch_rows=2) == NROWS
    assert select_all(lconn) == expected()
    cur.execute("DELETE FROM lt_types")
    assert cur.load_table(types_table, t.slice(1, 3), batch_rows=2) == 3
    assert select_all(lconn) == expected()[1:4]
    cur.execute("DELETE FROM lt_types")
    assert cur.load_table(types_table, iter(ROWS), batch_rows=2) == NROWS   # a generator
    assert select_all(lconn) == expected()


def test_record_batch_reader_and_capsule_objects(lconn, types_table):
    t = arrow_table()

    class ArrayOnly:       # only the PyCapsule protocol, no pyarrow type
        def __init__(self, batch):
            self.batch = batch
            self.schema = batch.schema

        def __arrow_c_array__(self, requested_schema=None):
            return self.batch.__arrow_c_array__(requested_schema)

    class StreamOnly:
        def __arrow_c_stream__(self, requested_schema=None):
            return t.__arrow_c_stream__(requested_schema)

    cur = lconn.cursor()
    for data in (pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=2)),
                 t.to_batches()[0], ArrayOnly(t.combine_chunks().to_batches()[0]),
                 StreamOnly()):
        cur.execute("DELETE FROM lt_types")
        assert cur.load_table(types_table, data) == NROWS, type(data)
        assert select_all(lconn) == expected()


def test_column_subset_and_order(lconn, types_table):
    cur = lconn.cursor()
    rows = [("x", 1), ("y", 2)]
    assert cur.load_table(types_table, rows, columns=["vc", "id"]) == 2
    cur.execute("SELECT id, vc, ti FROM lt_types ORDER BY id")
    assert cur.fetchall() == ((1, "x", None), (2, "y", None))


def test_quoted_identifiers_and_database_pair(lconn, conn_kwargs):
    cur = lconn.cursor()
    cur.execute("DROP TABLE IF EXISTS `we``ird %s tab`")
    cur.execute("CREATE TABLE `we``ird %s tab` (`co``l 1` INT, `100%` VARCHAR(5))")
    try:
        for method in ("infile", "insert"):
            cur.execute("DELETE FROM `we``ird %s tab`")
            n = cur.load_table((conn_kwargs["database"], "we`ird %s tab"), [(1, "a"), (2, None)],
                               method=method)
            assert n == 2
            cur.execute("SELECT * FROM `we``ird %s tab` ORDER BY 1")
            assert cur.fetchall() == ((1, "a"), (2, None))
            cur.execute("DELETE FROM `we``ird %s tab`")
            assert cur.load_table("we`ird %s tab", pa.table({"100%": ["z"], "co`l 1": [3]}),
                                  method=method) == 1
            cur.execute("SELECT * FROM `we``ird %s tab`")
            assert cur.fetchall() == ((3, "z"),)
    finally:
        cur.execute("DROP TABLE IF EXISTS `we``ird %s tab`")


def test_empty_data(lconn, types_table):
    cur = lconn.cursor()
    assert cur.load_table(types_table, []) == 0
    assert cur.load_table(types_table, arrow_table().slice(0, 0)) == 0
    assert select_all(lconn) == []


def test_prepared_cursor_and_user_transaction(conn_kwargs):
    c = mysqlc.connect(local_infile=True, **conn_kwargs)    # autocommit off
    try:
        cur = c.cursor(prepared=True)
        cur.execute("DROP TABLE IF EXISTS lt_tx")
        cur.execute("CREATE TABLE lt_tx (a INT) ENGINE=InnoDB")
        c.commit()
        assert cur.load_table("lt_tx", [(1,), (2,)]) == 2
        c.rollback()          # load_table does not commit the caller's transaction
        cur.execute("SELECT COUNT(*) FROM lt_tx")
        assert cur.fetchone() == (0,)
        assert cur.load_table("lt_tx", [(1,), (2,)]) == 2
        c.commit()
        cur.execute("SELECT COUNT(*) FROM lt_tx")
        assert cur.fetchone() == (2,)
        cur.execute("DROP TABLE lt_tx")
    finally:
        c.close()


def test_duplicates(lconn):
    cur = lconn.cursor()
    cur.execute("DROP TABLE IF EXISTS lt_dup")
    cur.execute("CREATE TABLE lt_dup (k INT PRIMARY KEY, v VARCHAR(5))")
    try:
        for method in ("infile", "insert"):
            cur.execute("DELETE FROM lt_dup")
            cur.load_table("lt_dup", [(1, "a"), (2, "b")], method=method)
            assert cur.load_table("lt_dup", [(1, "x"), (3, "y")], method=method,
                                  duplicates="replace") == 3     # replaced row counts twice
            with pytest.warns(mysqlc.Warning, match="Duplicate"):
                assert cur.load_table("lt_dup", [(1, "z"), (4, "w")], method=method,
                                      duplicates="ignore") == 1
            cur.execute("SELECT * FROM lt_dup ORDER BY k")
            assert cur.fetchall() == ((1, "x"), (2, "b"), (3, "y"), (4, "w"))
    finally:
        cur.execute("DROP TABLE IF EXISTS lt_dup")


# ---------------------------------------------------------------- fallbacks

def test_fallback_without_local_infile(pconn, lconn, types_table):
    cur = pconn.cursor()
    for data in (ROWS, arrow_table()):
        cur.execute("DELETE FROM lt_types")
        assert cur.load_table(types_table, data) == NROWS      # auto -> INSERT
        assert select_all(pconn) == expected()
    with pytest.raises(mysqlc.NotSupportedError, match="local_infile=True"):
        cur.load_table(types_table, ROWS, method="infile")
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


def test_fallback_when_server_refuses(root_conn_kwargs, conn_kwargs):
    root = mysqlc.connect(autocommit=True, **root_conn_kwargs)
    rcur = root.cursor()
    rcur.execute("SELECT @@GLOBAL.local_infile")
    before = rcur.fetchone()[0]
    rcur.execute("SET GLOBAL local_infile=0")
    try:
        c = mysqlc.connect(local_infile=True, autocommit=True, **conn_kwargs)
        try:
            cur = c.cursor()
            cur.execute("DROP TABLE IF EXISTS lt_off")
            cur.execute("CREATE TABLE lt_off (a INT, b VARCHAR(10))")
            seen = []
            assert cur.load_table("lt_off", [(1, "x"), (2, "y")], progress=seen.append) == 2
            assert seen == [2]
            assert cur.load_table("lt_off", pa.table({"a": [3], "b": ["z"]})) == 1
            with pytest.raises(mysqlc.NotSupportedError, match="refuses"):
                cur.load_table("lt_off", [(4, "w")], method="infile")
            cur.execute("SELECT * FROM lt_off ORDER BY a")
            assert cur.fetchall() == ((1, "x"), (2, "y"), (3, "z"))
            cur.execute("DROP TABLE lt_off")
        finally:
            c.close()
    finally:
        rcur.execute("SET GLOBAL local_infile=%s", (before,))
        root.close()


# ---------------------------------------------------------------- warnings

@pytest.mark.parametrize("method", ["infile", "insert"])
def test_warnings_surface(lconn, method):
    cur = lconn.cursor()
    cur.execute("SET SESSION sql_mode=''")
    cur.execute("DROP TABLE IF EXISTS lt_warn")
    cur.execute("CREATE TABLE lt_warn (a INT, s VARCHAR(3))")
    try:
        with pytest.warns(mysqlc.Warning, match="1265.*Data truncated for column 's'"):
            n = cur.load_table("lt_warn", [(1, "abcdef"), (2, "ok")], method=method)
        assert n == 2
        assert cur.warning_count == 1
        assert len(cur.messages) == 1
        cls, w = cur.messages[0]
        assert cls is mysqlc.Warning and isinstance(w, mysqlc.Warning) and w.args[0] == 1265
        cur.execute("SELECT * FROM lt_warn ORDER BY a")
        assert cur.fetchall() == ((1, "abc"), (2, "ok"))
        # on_warning="raise": rolled back
        with pytest.raises(mysqlc.DataError, match="rolled back.*Data truncated"):
            cur.load_table("lt_warn", [(3, "toolong")], method=method, on_warning="raise")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cur.load_table("lt_warn", [(4, "long!")], method=method, on_warning="ignore")
        assert cur.warning_count == 1
        cur.execute("SELECT a FROM lt_warn ORDER BY a")
        assert cur.fetchall() == ((1,), (2,), (4,))
    finally:
        cur.execute("DROP TABLE IF EXISTS lt_warn")


# ---------------------------------------------------------------- progress

@pytest.mark.parametrize("method", ["infile", "insert"])
def test_progress_callback_and_tqdm_like(lconn, method):
    cur = lconn.cursor()
    cur.execute("DROP TABLE IF EXISTS lt_prog")
    cur.execute("CREATE TABLE lt_prog (a INT, s VARCHAR(20))")
    try:
        rows = [(i, "row %d" % i) for i in range(2500)]
        seen = []
        assert cur.load_table("lt_prog", rows, method=method, batch_rows=1000,
                              progress=seen.append) == 2500
        assert seen == [1000, 2000, 2500]

        class Bar:
            def __init__(self):
                self.deltas = []

            def update(self, n):
                self.deltas.append(n)

        bar = Bar()
        t = pa.table({"a": list(range(2500)), "s": ["x"] * 2500})
        assert cur.load_table("lt_prog", t, method=method, batch_rows=1000, progress=bar) == 2500
        assert bar.deltas == [1000, 1000, 500]
        tqdm = pytest.importorskip("tqdm")
        with tqdm.tqdm(total=2500, file=io.StringIO()) as real:
            cur.load_table("lt_prog", rows, method=method, progress=real)
            assert real.n == 2500
    finally:
        cur.execute("DROP TABLE IF EXISTS lt_prog")


# ---------------------------------------------------------------- bad input

@pytest.fixture
def small(lconn):
    cur = lconn.cursor()
    cur.execute("DROP TABLE IF EXISTS lt_small")
    cur.execute("CREATE TABLE lt_small (a INT, b VARCHAR(10)) ENGINE=InnoDB")
    yield cur
    cur.execute("DROP TABLE IF EXISTS lt_small")


def _still_usable_and_empty(cur):
    cur.execute("SELECT COUNT(*) FROM lt_small")
    assert cur.fetchone() == (0,)


@pytest.mark.parametrize("method", ["infile", "insert"])
def test_wrong_column_count(small, method):
    with pytest.raises(mysqlc.ProgrammingError, match="has 3 values, but 2 columns"):
        small.load_table("lt_small", [(1, "a"), (2, "b", "c")], method=method)
    _still_usable_and_empty(small)
    with pytest.raises(mysqlc.ProgrammingError, match="3 columns given for data with 2 fields"):
        small.load_table("lt_small", pa.table({"a": [1], "b": ["x"]}), ["a", "b", "c"],
                         method=method)
    with pytest.raises(mysqlc.ProgrammingError, match="row 0 is a dict"):
        small.load_table("lt_small", [{"a": 1, "b": "x"}], method="infile")
    _still_usable_and_empty(small)


def test_unsupported_python_type_late_in_the_stream_rolls_back(small):
    rows = [(i, "v") for i in range(5000)] + [(1, object())]
    with pytest.raises(TypeError, match=r"row 5000, column 'b': unsupported type object"):
        small.load_table("lt_small", rows, batch_rows=1000)
    _still_usable_and_empty(small)    # the 5000 rows streamed before were rolled back


def test_unsupported_arrow_type(small):
    t = pa.table({"a": [1], "b": pa.array([[1, 2]], pa.list_(pa.int64()))})
    with pytest.raises(TypeError, match=r"column 'b' has the Arrow type format '\+l'"):
        small.load_table("lt_small", t)
    _still_usable_and_empty(small)


def test_nan_and_inf_rejected(small):
    for bad in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(mysqlc.DataError, match="can not be stored"):
            small.load_table("lt_small", [(1, "x"), (bad, "y")])
        with pytest.raises(mysqlc.DataError, match="column a .*can not be stored"):
            small.load_table("lt_small", pa.table({"a": [1.0, bad], "b": ["x", "y"]}))
    with pytest.raises(mysqlc.DataError, match="Decimal"):
        small.load_table("lt_small", [(D("NaN"), "x")])
    _still_usable_and_empty(small)


def test_bad_arguments(small):
    with pytest.raises(mysqlc.ProgrammingError, match="method"):
        small.load_table("lt_small", [(1, "a")], method="copy")
    with pytest.raises(mysqlc.ProgrammingError, match="batch_rows"):
        small.load_table("lt_small", [(1, "a")], batch_rows=0)
    with pytest.raises(TypeError, match="not str"):
        small.load_table("lt_small", "1\ta\n")
    with pytest.raises(TypeError, match="progress"):
        small.load_table("lt_small", [(1, "a")], progress=3)
    with pytest.raises(mysqlc.ProgrammingError):
        small.load_table("no_such_table_xyz", [(1, "a")])
    with pytest.raises(mysqlc.OperationalError):      # unknown column: a server error
        small.load_table("lt_small", [(1, "a")], columns=["a", "nope"])
    _still_usable_and_empty(small)


# ---------------------------------------------------------------- Arrow layouts and units

def test_arrow_units_views_and_odd_types(lconn):
    cur = lconn.cursor()
    cur.execute("DROP TABLE IF EXISTS lt_units")
    cur.execute("CREATE TABLE lt_units (id INT, ts DATETIME(6), tz DATETIME(6), dd DATE, "
                "tm TIME(6), du TIME(6), h FLOAT, s VARCHAR(40), b VARBINARY(40), "
                "fx BINARY(4), n INT, di VARCHAR(10), dec0 DECIMAL(10,0))")
    try:
        ts = [dt.datetime(1901, 12, 13, 20, 45, 52, 123456), None, dt.datetime(2262, 4, 11)]
        tz_in = [dt.datetime(2020, 1, 1, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))),
                 None, dt.datetime(1969, 12, 31, 23, 0, tzinfo=dt.timezone.utc)]
        long_s = "a string longer than twelve bytes é"
        cases = {
            "s": [pa.array([long_s, None, "short"], t) for t in
                  (pa.string(), pa.large_string(), pa.string_view())],
            "b": [pa.array([long_s.encode(), None, b"\x00\\\t"], t) for t in
                  (pa.binary(), pa.large_binary(), pa.binary_view())],
        }
        base = {
            "id": pa.array([1, 2, 3], pa.int16()),
            "tz": pa.array(tz_in, pa.timestamp("us", tz="Europe/Paris")),
            "dd": pa.array([dt.date(1969, 7, 20), None, dt.date(2000, 1, 1)], pa.date64()),
            "h": pa.array([0.5, None, -2.0], pa.float16()),
            "fx": pa.array([b"\x00\x01\x02\x03", None, b"\\\t\n\r"], pa.binary(4)),
            "n": pa.nulls(3),
            "di": pa.array(["x", None, "x"]).dictionary_encode(),
            "dec0": pa.array([D("123"), None, D("-9999999999")], pa.decimal128(10, 0)),
        }
        for unit in ("s", "ms", "us", "ns"):
            vals = [t.replace(microsecond=t.microsecond // {"s": 1000000, "ms": 1000,
                                                           "us": 1, "ns": 1}[unit]
                              * {"s": 1000000, "ms": 1000, "us": 1, "ns": 1}[unit])
                    if t else None for t in ts]
            tm_t = pa.time32(unit) if unit in ("s", "ms") else pa.time64(unit)
            tvals = [dt.time(23, 59, 59, 999000 if unit != "s" else 0), None, dt.time(0, 0)]
            dvals = [dt.timedelta(hours=-30, milliseconds=-5 if unit != "s" else 0), None,
                     dt.timedelta(hours=800)]
            for k in range(3):
                arrays = dict(base)
                arrays["ts"] = pa.array(vals, pa.timestamp(unit))
                arrays["tm"] = pa.array(tvals, tm_t)
                arrays["du"] = pa.array(dvals, pa.duration(unit))
                arrays["s"] = cases["s"][k]
                arrays["b"] = cases["b"][k]
                cur.execute("DELETE FROM lt_units")
                assert cur.load_table("lt_units", pa.table(arrays)) == 3
                cur.execute("SELECT * FROM lt_units ORDER BY id")
                got = cur.fetchall()
                tv = [dt.timedelta(hours=t.hour, minutes=t.minute, seconds=t.second,
                                   microseconds=t.microsecond) if t else None for t in tvals]
                want = (
                    (1, vals[0], dt.datetime(2020, 1, 1, 0, 0), dt.date(1969, 7, 20), tv[0],
                     dvals[0], 0.5, long_s, long_s.encode(), b"\x00\x01\x02\x03", None,
                     "x", D("123")),
                    (2, None, None, None, None, None, None, None, None, None, None, None, None),
                    (3, vals[2], dt.datetime(1969, 12, 31, 23, 0), dt.date(2000, 1, 1), tv[2],
                     dvals[2], -2.0, "short", b"\x00\\\t", b"\\\t\n\r", None, "x",
                     D("-9999999999")),
                )
                assert got == want, (unit, k)
    finally:
        cur.execute("DROP TABLE IF EXISTS lt_units")


@ENCODER_ONLY
def test_arrow_release_callbacks_called():
    """The encoder moves the arrays out of the capsules and releases them: pyarrow's
    allocations return to the baseline."""
    gc.collect()
    before = pa.total_allocated_bytes()
    for _ in range(20):
        t = pa.table({"a": pa.array(range(10000)), "s": pa.array(["x" * 50] * 10000)})
        batch = t.to_batches()[0]
        capsules = batch.__arrow_c_array__()
        del t, batch
        out = _core.infile_encode_arrow(*capsules)
        assert out.count(b"\n") == 10000
        with pytest.raises(ValueError, match="already released or consumed"):
            _core.infile_encode_arrow(*capsules)
        del capsules
    gc.collect()
    assert pa.total_allocated_bytes() == before


# ---------------------------------------------------------------- the encoder alone

def enc_arrow(**cols):
    return _core.infile_encode_arrow(*pa.record_batch(cols).__arrow_c_array__())


@ENCODER_ONLY
def test_encode_rows_formats():
    rows = [(None, True, False, 2 ** 70, -5, 0.1, 1e22, -0.0, D("1.10"), D("-1E+3"),
             "a\tb\nc\rd\\e\x00", b"\x00\t\n\r\\\xff", bytearray(b"x"), memoryview(b"yz"),
             dt.datetime(2001, 2, 3, 4, 5, 6), dt.datetime(2001, 2, 3, 4, 5, 6, 7),
             dt.date(999, 1, 2), dt.time(1, 2, 3, 40), TD(days=-1, seconds=1),
             TD(days=2, microseconds=1), TD(microseconds=-1))]
    out = _core.infile_encode_rows(rows, len(rows[0]))
    assert out.split(b"\t") == [
        b"\\N", b"1", b"0", b"1180591620717411303424", b"-5", b"0.1", b"1e+22", b"-0",
        b"1.10", b"-1000", b"a\\tb\\nc\\rd\\\\e\\0", b"\\0\\t\\n\\r\\\\\xff", b"x", b"yz",
        b"2001-02-03 04:05:06", b"2001-02-03 04:05:06.000007", b"0999-01-02",
        b"01:02:03.000040", b"-23:59:59", b"48:00:00.000001", b"-00:00:00.000001\n"]


@ENCODER_ONLY
def test_encode_arrow_numbers():
    out = enc_arrow(
        d=pa.array([0.1, 1 / 3, 1e300, 5e-324, -0.0, 123456789012345680.0]),
        f=pa.array([0.1, 1 / 3, 3.4028234663852886e38, 1.0e-45, -0.0, 16777216.0],
                   pa.float32()),
        u=pa.array([0, 2 ** 64 - 1, 1, 2, 3, 4], pa.uint64()),
        i=pa.array([-2 ** 63, 2 ** 63 - 1, -1, 0, 1, None], pa.int64()),
    )
    lines = [line.split(b"\t") for line in out.decode().encode().splitlines()]
    for line, d, f in zip(lines, [0.1, 1 / 3, 1e300, 5e-324, -0.0, 123456789012345680.0],
                          [0.1, 1 / 3, 3.4028234663852886e38, 1.0e-45, -0.0, 16777216.0]):
        assert float(line[0]) == d
        np = pytest.importorskip("numpy")
        assert np.float32(float(line[1])) == np.float32(f)
    assert [l[0] for l in lines][:2] == [b"0.1", b"0.333333333333333"] or \
        float(lines[1][0]) == 1 / 3
    assert lines[0][1] == b"0.1"
    assert [l[2] for l in lines] == [b"0", b"18446744073709551615", b"1", b"2", b"3", b"4"]
    assert [l[3] for l in lines] == [b"-9223372036854775808", b"9223372036854775807",
                                     b"-1", b"0", b"1", b"\\N"]


@ENCODER_ONLY
def test_encode_arrow_decimals_and_temporals():
    out = enc_arrow(
        a=pa.array([D("0.001"), D("-0.5"), D("0"), D("-12345.678")], pa.decimal128(8, 3)),
        b=pa.array([D("1E+40"), D("-1"), None, D("7")], pa.decimal256(50, 0)),
        c=pa.array([-1, 0, 86400 * 1000 + 1, -86400 * 1000 - 1], pa.timestamp("ms")),
        d=pa.array([-1, 1, 1000, -999], pa.duration("ms")),
        e=pa.array([-719528, 2932896, -1, 0], pa.date32()),   # 0000-01-01 .. 9999-12-31
    )
    assert out.split(b"\n")[:4] == [
        b"0.001\t10000000000000000000000000000000000000000\t1969-12-31 23:59:59.999\t"
        b"-00:00:00.001\t0000-01-01",
        b"-0.500\t-1\t1970-01-01 00:00:00\t00:00:00.001\t9999-12-31",
        b"0\t\\N\t1970-01-02 00:00:00.001\t00:00:01\t1969-12-31",
        b"-12345.678\t7\t1969-12-30 23:59:59.999\t-00:00:00.999\t1970-01-01",
    ]
    with pytest.raises(mysqlc.DataError, match="column e .*years 0-9999"):
        enc_arrow(e=pa.array([2932897], pa.date32()))
    with pytest.raises(mysqlc.DataError, match="DATETIME"):
        enc_arrow(t=pa.array([-62167219200000001], pa.timestamp("us")))
    for unit in ("s", "ms", "us", "ns"):      # int64 extremes: an error, no overflow
        for v in (-2 ** 63, 2 ** 63 - 1):
            if unit == "ns":
                assert enc_arrow(t=pa.array([v], pa.timestamp(unit))).startswith(
                    b"1677-09-21" if v < 0 else b"2262-04-11")
            else:
                with pytest.raises(mysqlc.DataError, match="DATETIME"):
                    enc_arrow(t=pa.array([v], pa.timestamp(unit)))


@ENCODER_ONLY
def test_encode_arrow_dictionary_index_checked():
    indices = pa.array([0, 5], pa.int8())
    bad = pa.DictionaryArray.from_arrays(indices, pa.array(["a", "b"]), safe=False)
    with pytest.raises(ValueError, match="dictionary index 5 out of range"):
        enc_arrow(x=bad)


@ENCODER_ONLY
def test_encode_arrow_rejects_non_struct_and_garbage():
    with pytest.raises(TypeError, match="struct array"):
        _core.infile_encode_arrow(*pa.array([1, 2]).__arrow_c_array__())
    with pytest.raises(TypeError, match="arrow_schema"):
        _core.infile_encode_arrow(object(), object())
    with pytest.raises(TypeError, match="unsupported type object"):
        _core.infile_encode_rows([(object(),)], 1, ("c",))
    with pytest.raises(mysqlc.ProgrammingError, match="row 7 has 1 values, but 2"):
        _core.infile_encode_rows([(1,)], 2, None, 7)


def _ref_escape(b):
    return (b.replace(b"\\", b"\\\\").replace(b"\x00", b"\\0").replace(b"\t", b"\\t")
            .replace(b"\n", b"\\n").replace(b"\r", b"\\r"))


@ENCODER_ONLY
def test_encoder_matches_reference_on_random_bytes_and_floats():
    import random
    rnd = random.Random(8)
    alphabet = b"\x00\t\n\r\\N\xc3\xa9\xf0\x9f\x98\x80ab"
    blobs = [bytes(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 40)))
             for _ in range(3000)]
    want = b"".join(_ref_escape(b) + b"\n" for b in blobs)
    assert _core.infile_encode_rows([(b,) for b in blobs], 1) == want
    for t in (pa.binary(), pa.large_binary(), pa.binary_view()):
        assert enc_arrow(b=pa.array(blobs, t)) == want
    # doubles from random bit patterns: the text reads back as the same double
    import struct
    xs = [struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))[0]
          for _ in range(20000)]
    xs = [x for x in xs if x == x and abs(x) != float("inf")]
    out = enc_arrow(x=pa.array(xs, pa.float64())).split(b"\n")[:-1]
    assert [float(s) for s in out] == xs
    assert all(len(s) <= 24 for s in out)
    np = pytest.importorskip("numpy")
    fs = np.frombuffer(rnd.getrandbits(32 * 20000).to_bytes(4 * 20000, "little"),
                       dtype=np.float32)
    fs = fs[np.isfinite(fs)]
    out = enc_arrow(x=pa.array(fs, pa.float32())).split(b"\n")[:-1]
    assert (np.array([float(s) for s in out], dtype=np.float32) == fs).all()


@ENCODER_ONLY
def test_encoding_in_threads_gives_the_same_bytes():
    """The Arrow encoder runs with the GIL released: several threads at once give the
    same output as one."""
    import threading
    t = pa.table({"a": pa.array(range(200000)), "s": pa.array(["é\t%d" % i for i in
                                                              range(200000)])})
    want = enc_arrow(a=t["a"].combine_chunks(), s=t["s"].combine_chunks())
    results = [None] * 4

    def work(k):
        batch = t.combine_chunks().to_batches()[0]
        results[k] = _core.infile_encode_arrow(*batch.__arrow_c_array__())

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == [want] * 4


@pytest.mark.parametrize("method", ["infile", "insert"])
def test_both_methods_raise_the_same_errors_for_bad_values(lconn, method):
    """The INSERT fallback checks values with the LOAD DATA encoder first: the same
    exception types and messages (row and column named) whichever method runs."""
    cur = lconn.cursor()
    cur.execute("CREATE TEMPORARY TABLE bad (id INT, f DOUBLE, s VARCHAR(10))")
    with pytest.raises(mysqlc.DataError, match="row 1, column .f.: nan"):
        cur.load_table("bad", [(1, 1.0, "a"), (2, float("nan"), "b")], method=method)
    with pytest.raises(TypeError, match="row 0, column 's': unsupported type object"):
        cur.load_table("bad", [(1, 1.0, object())], method=method)
    with pytest.raises(mysqlc.ProgrammingError, match="row 0 has 2 values, but 3"):
        cur.load_table("bad", [(1, 2.0)], method=method)
    cur.execute("SELECT COUNT(*) FROM bad")
    assert cur.fetchone() == (0,)


def test_numpy_scalars_in_python_rows(lconn):
    """Rows taken from NumPy arrays or DataFrame.itertuples() hold NumPy scalars: they
    load as the Python values they hold (found by a tester)."""
    np = pytest.importorskip("numpy")
    cur = lconn.cursor()
    cur.execute("CREATE TEMPORARY TABLE ns (i BIGINT, f FLOAT, d DOUBLE, t DATETIME(6), "
                "s VARCHAR(10), b TINYINT)")
    rows = [(np.int64(-5), np.float32(1.5), np.float64(0.1),
             np.datetime64("2024-02-29T12:00:00.000001000", "ns"), np.str_("x"), np.bool_(True)),
            (np.uint8(7), np.float32(2.25), np.float64(-3.0), np.datetime64("NaT"), "y", False)]
    for method in ("infile", "insert"):
        cur.execute("DELETE FROM ns")
        assert cur.load_table("ns", [tuple(r) for r in rows], method=method) == 2
        cur.execute("SELECT * FROM ns ORDER BY i")
        assert cur.fetchall() == (
            (-5, 1.5, 0.1, dt.datetime(2024, 2, 29, 12, 0, 0, 1), "x", 1),
            (7, 2.25, -3.0, None, "y", 0)), method


# ---------------------------------------------------------------- small max_allowed_packet

@pytest.fixture
def global_packet(root_conn_kwargs):
    """set(n): SET GLOBAL max_allowed_packet = n for the connections opened after it
    (the session value is read-only); the value found before is always put back."""
    root = mysqlc.connect(**root_conn_kwargs)
    cur = root.cursor()
    cur.execute("SELECT @@global.max_allowed_packet")
    before = cur.fetchone()[0]
    try:
        yield lambda n: cur.execute("SET GLOBAL max_allowed_packet = %d" % n)
    finally:
        try:
            cur.execute("SET GLOBAL max_allowed_packet = %d" % before)
        finally:
            root.close()


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compress"])
@pytest.mark.parametrize("limit", [1024, 1 << 20])
def test_load_table_under_a_small_max_allowed_packet(conn_kwargs, global_packet, limit,
                                                     compress):
    """issue 20: load_table hands ~1 MiB chunks to LOAD DATA LOCAL; the core sends them in
    packets below the session's max_allowed_packet (here 1 MiB, and MariaDB's minimum
    1024), so 3 MB of rows load instead of a dropped connection (2006)."""
    global_packet(limit)
    c = mysqlc.connect(local_infile=True, autocommit=True, compress=compress, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT @@max_allowed_packet")
        assert cur.fetchone()[0] == limit
        cur.execute("CREATE TEMPORARY TABLE lt_big (id INT, s VARCHAR(40))")
        n = 100000
        rows = [(i, "text of the row number %d" % i) for i in range(n)]
        text = sum(len("text of the row number %d" % i) for i in range(n))
        assert text + 7 * n > 3 << 20
        assert cur.load_table("lt_big", rows, method="infile") == n
        assert cur.warning_count == 0
        cur.execute("SELECT COUNT(*), SUM(id), SUM(LENGTH(s)) FROM lt_big")
        assert tuple(int(v) for v in cur.fetchone()) == (n, n * (n - 1) // 2, text)
        t = pa.table({"id": list(range(n, 2 * n)), "s": ["a" * 30] * n})
        assert cur.load_table("lt_big", t, method="infile") == n
        cur.execute("SELECT COUNT(*), MAX(id) FROM lt_big")
        assert cur.fetchone() == (2 * n, 2 * n - 1)
    finally:
        c.close()
