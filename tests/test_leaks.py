"""Memory leaks: every public operation, success and error paths, repeated thousands of
times with the growth of Python allocations (tracemalloc), allocated blocks
(sys.getallocatedblocks: objects kept alive by a missing Py_DECREF in C show up here)
and the process RSS checked.

Each operation runs a warm-up round first (caches, the statement cache, interned
names), then N more times; the growth over those N must stay under a bound far below
one leaked object per iteration -- in that window or, when CPython's caches keep some
recently freed objects alive at its end, over the extra N runs of a window of 2N (a
leak grows with the runs, a cache does not).  MYSQLC_LEAK_SCALE (default 1.0) scales N (the
sanitizer run uses less).
"""

import datetime
import decimal
import gc
import os
import sys
import tracemalloc

import pytest

import mysqlc
from mysqlc import _core

SCALE = float(os.environ.get("MYSQLC_LEAK_SCALE", "1"))
RESULTS = []


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _window(fn, n):
    """Run fn n times; (allocated blocks, traced bytes, RSS) gained, and the top lines."""
    gc.collect()
    tracemalloc.start()
    blocks0 = sys.getallocatedblocks()
    snap0 = tracemalloc.take_snapshot()
    rss0 = _rss()
    for _ in range(n):
        fn()
    gc.collect()
    rss1 = _rss()
    blocks1 = sys.getallocatedblocks()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    stats = snap1.compare_to(snap0, "lineno")
    return (blocks1 - blocks0, sum(s.size_diff for s in stats), rss1 - rss0,
            "\n".join(str(s) for s in stats[:5]))


def _check(name, fn, n, max_blocks=None, max_bytes=None, max_rss=8 << 20):
    """A leak grows with the number of runs; what CPython's own caches keep alive at
    the end of a window (recently freed objects held by free lists and small caches)
    does not.  When a window of n runs gains more than the bound, a window of 2n runs
    follows, and the gain of its extra n runs (2n-window minus n-window) is what must
    stay under the bound."""
    n = max(200, int(n * SCALE))
    warm = max(100, n // 5)
    for _ in range(warm):
        fn()
    max_blocks = n // 10 if max_blocks is None else max_blocks
    max_bytes = 64 * n if max_bytes is None else max_bytes
    first = _window(fn, n)
    result = first
    if first[0] >= max_blocks or first[1] >= max_bytes or (
            first[2] >= max_rss and not os.environ.get("MYSQLC_SANITIZED")):
        second = _window(fn, 2 * n)
        result = tuple(b - a if k < 3 else b for k, (a, b) in enumerate(zip(first, second)))
    blocks, grown, rss, top = result
    RESULTS.append((name, n, blocks, grown, rss))
    assert blocks < max_blocks, "%s: %d blocks more after %d runs (beyond a first window)\n%s" % (
        name, blocks, n, top)
    assert grown < max_bytes, "%s: %d bytes more after %d runs (beyond a first window)\n%s" % (
        name, grown, n, top)
    if not os.environ.get("MYSQLC_SANITIZED"):   # ASan's shadow and quarantine grow RSS
        assert rss < max_rss, "%s: RSS grew by %d bytes after %d runs (beyond a first window)" % (
            name, rss, n)


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    if RESULTS:
        total = sum(r[1] for r in RESULTS)
        print("\nleak checks: %d operations x runs = %d runs; worst growth: %d blocks, %d bytes traced, %d KiB RSS"
              % (len(RESULTS), total, max(r[2] for r in RESULTS), max(r[3] for r in RESULTS),
                 max(r[4] for r in RESULTS) // 1024))
        for r in RESULTS:
            print("  %-34s runs=%-6d blocks=%+d traced=%+d rss=%+d" % r)


@pytest.fixture(scope="module")
def lconn(server):
    c = mysqlc.connect(local_infile=True, **server.connect_kwargs())
    cur = c.cursor()
    cur.execute("CREATE OR REPLACE TABLE leak_t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(100), b BLOB, d DECIMAL(10,2), t DATETIME(6))")
    c.commit()
    yield c
    c.close()


SELECT = ("SELECT 1, -2, 18446744073709551615, 1.5e300, CAST(1.25 AS DECIMAL(10,2)), 'héllo', _binary'\\0\\1',"
          " DATE'2024-02-29', TIMESTAMP'2024-01-01 10:20:30.123456', TIME'-838:59:59', NULL, b'101',"
          " JSON_OBJECT('a', 1), DATE'0000-00-00'")


def test_select_all_types(lconn):
    cur = lconn.cursor()
    _check("execute+fetchall (all types)", lambda: (cur.execute(SELECT), cur.fetchall()), 5000)


def test_dict_and_streaming_cursors(lconn):
    dcur = lconn.cursor(mysqlc.cursors.DictCursor)
    _check("DictCursor", lambda: (dcur.execute(SELECT), dcur.fetchall()), 3000)
    scur = lconn.cursor(mysqlc.cursors.SSCursor)

    def stream():
        scur.execute("SELECT seq, 'x' FROM seq_1_to_20")
        for _ in scur:
            pass
    _check("SSCursor iteration", stream, 3000)


def test_prepared_statements(lconn):
    cur = lconn.cursor(prepared=True)
    args = (1, "text", b"\x00bytes", 2.5, decimal.Decimal("1.5"), datetime.datetime(2024, 1, 2, 3, 4, 5, 6),
            datetime.date(2024, 1, 1), datetime.timedelta(hours=-5), None)

    def run():
        cur.execute("SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?", args)
        cur.fetchall()
    _check("prepared execute (binary rows)", run, 3000)


def test_parameters_and_literals(lconn):
    cur = lconn.cursor()
    args = (1, "it's", b"\\\x00", 2.5, decimal.Decimal("-1.5"), datetime.datetime(2024, 1, 2), None, (1, 2, 3))
    _check("execute with parameters", lambda: (cur.execute("SELECT %s, %s, %s, %s, %s, %s, %s, 1 IN %s", args),
                                              cur.fetchall()), 3000)
    _check("escape_string/literal", lambda: (lconn.escape_string("a'b\\c"), lconn.literal(args)), 20000)
    _check("format_query error", lambda: pytest.raises(mysqlc.ProgrammingError, _core.format_query, b"%s %s", (1,)),
           5000)


def test_executemany_and_writes(lconn):
    cur = lconn.cursor()
    rows = [("v%d" % i, b"b" * i, decimal.Decimal(i), datetime.datetime(2024, 1, 1)) for i in range(20)]

    def run():
        cur.execute("DELETE FROM leak_t")
        cur.executemany("INSERT INTO leak_t (v, b, d, t) VALUES (%s, %s, %s, %s)", rows)
        lconn.commit()
    _check("executemany + commit", run, 1000)


def test_error_paths(lconn):
    cur = lconn.cursor()
    _check("syntax error", lambda: pytest.raises(mysqlc.ProgrammingError, cur.execute, "SELEC 1"), 5000)
    cur.execute("INSERT INTO leak_t (id, v) VALUES (1, 'x') ON DUPLICATE KEY UPDATE v = 'x'")
    _check("duplicate key", lambda: pytest.raises(mysqlc.IntegrityError, cur.execute,
                                                  "INSERT INTO leak_t (id, v) VALUES (1, 'y')"), 3000)
    pcur = lconn.cursor(prepared=True)
    _check("prepare error", lambda: pytest.raises(mysqlc.ProgrammingError, pcur.execute, "SELEC ?", (1,)), 2000)
    lconn.commit()


def test_converter_error_path(server):
    def bad(_):
        raise ValueError("no")
    conv = dict(mysqlc.converters.conversions)
    conv[mysqlc.FIELD_TYPE.LONGLONG] = conv[mysqlc.FIELD_TYPE.LONG] = bad
    c = mysqlc.connect(conv=conv, **server.connect_kwargs())
    cur = c.cursor()

    def run():
        with pytest.raises(ValueError):
            cur.execute("SELECT 1, 2")
        c.ping()   # the connection is usable again
    try:
        _check("converter raising", run, 2000)
    finally:
        c.close()


def test_multi_results_and_local_infile(lconn):
    cur = lconn.cursor()

    def multi():
        cur.execute("SELECT 1; SELECT 'a', 'b'; DO 1")
        while cur.nextset():
            cur.fetchall()
    _check("multi-result", multi, 2000)
    data = b"".join(b"%d\tv\n" % i for i in range(100, 120))

    def infile():
        cur.execute("LOAD DATA LOCAL INFILE 'x' REPLACE INTO TABLE leak_t (id, v)", infile=data)
    _check("LOAD DATA LOCAL INFILE", infile, 1000)


def test_connect_close_cycle(server):
    kw = server.connect_kwargs()

    def cycle():
        c = mysqlc.connect(**kw)
        c.ping()
        c.close()
    _check("connect/ping/close", cycle, 1000, max_blocks=100)

    def refused():
        with pytest.raises(mysqlc.OperationalError):
            mysqlc.connect(**dict(kw, password="wrong"))
    _check("connect with a wrong password", refused, 500, max_blocks=100)


def test_replay_malformed_responses():
    """The malformed-packet paths of the core (no server): replayed bad responses."""
    bad = [b"\x01\x00\x00\x01\x02" + b"\x05\x00\x00\x02\x01abcd",
           b"\x05\x00\x00\x01\xff\x15\x04#28",
           b"\x01\x00\x00\x01\x01\x03\x00\x00\x02\x01\x02\x03",
           b"\x02\x00\x00\x01"]

    def run():
        for data in bad:
            c = _core.Connection()
            try:
                c._replay(data)
                c.fetch()
            except (mysqlc.Error, ValueError):
                pass
    _check("replay malformed responses", run, 5000)


def test_odd_parameter_types_and_packet_refusals(server):
    """The parameter adapter (src/param_adapt.c) in every encoder, and the
    max_allowed_packet refusals, on their success and error paths."""
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    import time as _time
    import uuid
    c = mysqlc.connect(local_infile=True, autocommit=True, **server.connect_kwargs())
    try:
        cur = c.cursor()
        cur.execute("CREATE OR REPLACE TABLE leak_p (a BIGINT, f DOUBLE, t DATETIME(6), "
                    "s VARCHAR(64), d TIME(6))")
        row = (np.int32(-7), np.float32(0.5), pd.NaT, uuid.UUID(int=3), np.timedelta64(5, "s"))
        row2 = (np.uint64(9), np.float64(1.5), np.datetime64("2020-01-02T03:04:05"),
                {"a", "b"}, None)
        row3 = (np.bool_(True), 2.5, _time.struct_time((2021, 1, 2, 3, 4, 5, 0, 2, 0)),
                np.str_("x"), np.timedelta64("NaT"))
        pcur = c.cursor(prepared=True)
        ins = "INSERT INTO leak_p VALUES (%s, %s, %s, %s, %s)"

        def run():
            cur.execute("DELETE FROM leak_p")
            cur.execute(ins, row)
            pcur.execute(ins, row2)
            cur.executemany(ins, [row, row2, row3])
            pcur.executemany(ins, [row, row2, row3])
            _core.infile_encode_rows([row, row2, row3], 5)
        # numpy's conversions (astype().item()) leave a few dozen small objects alive
        # across windows whatever the number of runs (measured: 1-9 KB after 3,000 runs of
        # each path, the same after 300): a constant allowance on top of the per-run bound
        n = max(200, int(500 * SCALE))
        _check("adapted parameters, every path", run, 500, max_bytes=64 * n + 16384)

        def bad():
            with pytest.raises(TypeError):
                _core.format_query(b"%s", ({1, 2},))
            with pytest.raises(mysqlc.ProgrammingError):
                pcur.execute("SELECT %s", (np.complex64(1),))
            with pytest.raises(TypeError):
                _core.infile_encode_rows([(np.complex64(1),)], 1)
            with pytest.raises(mysqlc.DataError):
                _core.infile_encode_rows([(np.datetime64(20000, "Y"),)], 1)
        _check("adapted parameters, errors", bad, 1000)

        c._conn.max_allowed_packet = 2048
        big = b"SELECT '" + b"a" * 4000 + b"'"

        def refused():
            with pytest.raises(mysqlc.OperationalError):
                cur.execute(big)
            with pytest.raises(mysqlc.OperationalError):
                pcur.execute("SELECT %s", (b"x" * 4000,))
            with pytest.raises(mysqlc.OperationalError):
                cur.executemany("INSERT INTO leak_p (s) VALUES (%s)", [("y" * 4000,)])
        _check("max_allowed_packet refusals", refused, 1000)
    finally:
        c.close()
