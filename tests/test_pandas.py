"""pandas ``read_sql`` / ``DataFrame.to_sql`` through SQLAlchemy on mysqlc give the
same frames as the same calls on mysqlclient (the reference driver).

Each comparison is exact: same columns, dtypes and values (``check_exact``),
NULL/NaN/NaT in the same places.
"""

import datetime
import decimal
import importlib
import sys
import urllib.parse

import pytest

pd = pytest.importorskip("pandas")
sa = pytest.importorskip("sqlalchemy")
np = pytest.importorskip("numpy")

from pandas.testing import assert_frame_equal  # noqa: E402


def _real_mysqlclient():
    """Import mysqlclient's MySQLdb even while mysqlc is installed as MySQLdb
    (sys.modules is left as it was)."""
    saved = {k: v for k, v in sys.modules.items()
             if k == "MySQLdb" or k.startswith("MySQLdb.")}
    shimmed = getattr(saved.get("MySQLdb"), "mysqlc_version", None) is not None
    if not shimmed and "MySQLdb" in saved:
        return saved["MySQLdb"]
    for k in saved:
        del sys.modules[k]
    try:
        module = importlib.import_module("MySQLdb")
        importlib.import_module("MySQLdb.cursors")
        importlib.import_module("MySQLdb.constants.CLIENT")
    finally:
        for k in [k for k in sys.modules if k == "MySQLdb" or k.startswith("MySQLdb.")]:
            if shimmed:
                del sys.modules[k]
        sys.modules.update(saved)
    return module


def _url(driver, kw):
    return "%s://%s:%s@%s:%d/%s?charset=utf8mb4" % (
        driver, urllib.parse.quote(kw["user"], safe=""),
        urllib.parse.quote(kw["password"], safe=""), kw["host"], kw["port"],
        kw["database"])


@pytest.fixture(scope="module")
def engines(server):
    kw = server.connect_kwargs()
    mysqldb = _real_mysqlclient()
    assert not hasattr(mysqldb, "mysqlc_version"), "expected mysqlclient, got mysqlc"
    ours = sa.create_engine(_url("mysql+mysqlc", kw))
    ref = sa.create_engine(_url("mysql+mysqldb", kw), module=mysqldb)
    yield ours, ref
    with ours.begin() as conn:
        for name in ("pd_typed", "pd_out_mysqlc", "pd_out_mysqldb"):
            conn.exec_driver_sql("DROP TABLE IF EXISTS %s" % name)
    ours.dispose()
    ref.dispose()


def _read_both(engines, sql, **kw):
    ours, ref = engines
    a = pd.read_sql(sql, ours, **kw)
    b = pd.read_sql(sql, ref, **kw)
    return a, b


def _assert_same(a, b):
    assert list(a.columns) == list(b.columns)
    assert list(a.dtypes) == list(b.dtypes), (a.dtypes, b.dtypes)
    assert_frame_equal(a, b, check_exact=True)
    # Python types of object columns match too (Decimal vs float, bytes vs str, ...)
    for col in a.columns:
        if a[col].dtype == object:
            assert [type(v) for v in a[col]] == [type(v) for v in b[col]], col


TYPED_DDL = """
CREATE TABLE pd_typed (
    id INT PRIMARY KEY,
    ti TINYINT, si SMALLINT UNSIGNED, bi BIGINT, ubi BIGINT UNSIGNED,
    fl FLOAT, db DOUBLE, dec1 DECIMAL(20, 6), dec2 DECIMAL(5, 0),
    vc VARCHAR(50), tx TEXT, ch CHAR(3), en ENUM('x', 'y'), st SET('a', 'b', 'c'),
    bl BLOB, vb VARBINARY(8), bt BIT(12),
    d DATE, dt DATETIME, dt6 DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME, tm6 TIME(6),
    yr YEAR, js JSON, b BOOLEAN
) CHARACTER SET utf8mb4
"""

TYPED_ROWS = [
    (1, -128, 65535, -(2 ** 63), 2 ** 64 - 1, 1.5, 0.1, "12345678901234.123456", "-99999",
     "héllo", "🐍 snake", "abc", "x", "a,c", b"\x00\xff\x10", b"\x01\x02", 0b101010101010,
     "2024-02-29", "2024-02-29 23:59:59", "1999-12-31 23:59:59.999999",
     "2038-01-19 03:14:07.123", "-838:59:59", "12:34:56.000001", 2155, '{"a": [1, 2]}',
     True),
    (2, 0, 0, 0, 0, -0.0, -1e308, "0.000001", "0", "", "", "", "y", "", b"", b"", 0,
     "1000-01-01", "1000-01-01 00:00:00", "2000-01-01 00:00:00.000000", None, "00:00:00",
     "838:59:59.000000", 1901, "null", False),
    (3,) + (None,) * 25,
]


def test_read_sql_typed_columns_identical(engines):
    ours, _ = engines
    with ours.begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS pd_typed")
        conn.exec_driver_sql(TYPED_DDL)
        conn.exec_driver_sql("SET SESSION sql_mode = ''")   # allow the zero date row
        placeholders = ", ".join(["%s"] * len(TYPED_ROWS[0]))
        conn.exec_driver_sql("INSERT INTO pd_typed VALUES (%s)" % placeholders, TYPED_ROWS)
        conn.exec_driver_sql("INSERT INTO pd_typed (id, d, dt) VALUES "
                             "(4, '0000-00-00', '0000-00-00 00:00:00')")
    a, b = _read_both(engines, "SELECT * FROM pd_typed ORDER BY id")
    assert len(a) == 4
    _assert_same(a, b)
    # spot checks of what both drivers give
    assert a.loc[0, "dec1"] == 12345678901234.123456      # coerce_float (the default)
    assert a.loc[0, "tm"] == pd.Timedelta(hours=-838, minutes=-59, seconds=-59)
    assert a.loc[0, "bl"] == b"\x00\xff\x10"
    assert a.loc[3, "d"] is None          # zero date -> None, as mysqlclient

    a, b = _read_both(engines, "SELECT id, dec1, dec2 FROM pd_typed ORDER BY id",
                      coerce_float=False)
    _assert_same(a, b)
    assert a.loc[0, "dec1"] == decimal.Decimal("12345678901234.123456")

    # parse_dates, index_col, params, chunksize
    kw = dict(params=(2,), index_col="id", parse_dates=["d", "dt6"])
    a, b = _read_both(engines, "SELECT id, d, dt6, db, vc FROM pd_typed WHERE id <= %s "
                      "ORDER BY id", **kw)
    _assert_same(a, b)
    assert str(a["dt6"].dtype).startswith("datetime64")
    ours_chunks = list(pd.read_sql("SELECT id, vc FROM pd_typed ORDER BY id", ours,
                                   chunksize=3))
    assert [len(c) for c in ours_chunks] == [3, 1]


def _frame(n=3000):
    rng = np.random.default_rng(20240531)
    base = datetime.datetime(2024, 1, 1, 12, 0, 0)
    frame = pd.DataFrame({
        "id": np.arange(n, dtype="int64"),
        "i32": rng.integers(-2 ** 31, 2 ** 31, n).astype("int32"),
        "i64": rng.integers(-2 ** 62, 2 ** 62, n),
        "f64": rng.normal(size=n) * 1e6,
        "f32": rng.normal(size=n).astype("float32"),
        "flag": rng.integers(0, 2, n).astype(bool),
        "text": ["row %d ü 🐍 '\\\" %s" % (i, "x" * (i % 17)) for i in range(n)],
        "when": [base + datetime.timedelta(seconds=int(s), microseconds=int(u))
                 for s, u in zip(rng.integers(0, 10 ** 8, n), rng.integers(0, 10 ** 6, n))],
        "day": [datetime.date(2000, 1, 1) + datetime.timedelta(days=int(d))
                for d in rng.integers(0, 10000, n)],
        "raw": [bytes(rng.integers(0, 256, i % 9, dtype="uint8")) for i in range(n)],
    })
    frame.loc[::7, "f64"] = np.nan
    frame.loc[::11, "text"] = None
    frame.loc[::13, "when"] = pd.NaT
    return frame


@pytest.mark.parametrize("method", [None, "multi"])
def test_to_sql_then_read_sql_identical(engines, method):
    ours, ref = engines
    frame = _frame()
    dtype = {"when": sa.dialects.mysql.DATETIME(fsp=6), "text": sa.Text,
             "raw": sa.LargeBinary}
    written = {}
    for name, engine in (("pd_out_mysqlc", ours), ("pd_out_mysqldb", ref)):
        written[name] = frame.to_sql(name, engine, if_exists="replace", index=False,
                                     dtype=dtype, chunksize=1000, method=method)
    # to_sql reports the same row counts
    assert written["pd_out_mysqlc"] == written["pd_out_mysqldb"]

    sql = "SELECT * FROM %s ORDER BY id"
    # what each driver wrote, read back by each driver: all four frames equal
    ours_ours = pd.read_sql(sql % "pd_out_mysqlc", ours)
    ref_ref = pd.read_sql(sql % "pd_out_mysqldb", ref)
    ours_ref = pd.read_sql(sql % "pd_out_mysqldb", ours)
    ref_ours = pd.read_sql(sql % "pd_out_mysqlc", ref)
    _assert_same(ours_ours, ref_ref)
    _assert_same(ours_ref, ref_ref)
    _assert_same(ref_ours, ref_ref)
    assert len(ours_ours) == len(frame)
    # and the data is the frame's (float32 is stored as FLOAT: compare within its precision)
    assert (ours_ours["i64"] == frame["i64"]).all()
    assert ours_ours["text"].isna().sum() == frame["text"].isna().sum()
    assert ours_ours.loc[1, "when"] == frame.loc[1, "when"]
