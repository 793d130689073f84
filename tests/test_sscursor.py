"""Unbuffered cursors (issue 4): ``SSCursor``, ``SSDictCursor`` and the prepared
``cursor(SSCursor, prepared=True)`` (``PreparedSSCursor``: a read-only server-side cursor
read with COM_STMT_FETCH in batches of ``arraysize``).

The acceptance figure: streaming 1,000,000 rows keeps the process's peak memory within
20 MB of its level before the query.  It is measured in a fresh ``python -c`` process
(nothing else in this test session can pollute it): the peak-RSS counter VmHWM is reset
(``/proc/self/clear_refs`` = 5) after connecting, and the growth reported is
``VmHWM after the last row - VmRSS before the query``.  The same measurement of a buffered
``fetchall()`` of the same rows is the control that shows the method sees the growth.
The figures are printed (``pytest -s`` shows them; they also appear in the assertion
messages).

Then mysqlclient's semantics for unbuffered results: another command while rows are
unread raises ProgrammingError 2014 "Commands out of sync"; closing the cursor, its own
next execute, or nextset() read and drop the rest; a killed connection mid-stream gives
OperationalError 2013.
"""

import gc
import json
import os
import subprocess
import sys

import pytest

import mysqlc
import mysqlc.cursors
from mysqlc.cursors import SSCursor, SSDictCursor

from _apis import subprocess_spec, sync_obj

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = 1000000
LIMIT_MB = 20.0
STREAM_SQL = "SELECT seq, REPEAT('x', 20) FROM seq_1_to_%d" % N

# Server-side cursors are materialised by the server in an internal temporary table; a
# large one would be an Aria file in the server's tmpdir (/tmp for the private test server,
# shared with every other private server on the machine, which delete "#sql*" files there
# when they start).  Keeping it in memory makes the prepared 1M-row test independent of
# other servers starting concurrently; it changes nothing on the client side.
HEAP_SESSION = "SET SESSION max_heap_table_size = 268435456, tmp_table_size = 268435456"

_MEASURE = r'''
import json, sys
import mysqlc, mysqlc.cursors

spec = json.loads(sys.argv[1])
rows_of = iter
if spec["api"] == "aio":          # the same measurement through mysqlc.aio
    sys.path.insert(0, spec["tests"])
    import _apis
    mysqlc.connect, rows_of = _apis.connect, _apis.iterate

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key)

conn = mysqlc.connect(**spec["kwargs"])
setup = conn.cursor()
for stmt in spec["setup"]:
    setup.execute(stmt)
mode = spec["mode"]
if mode == "buffered":
    cur = conn.cursor()
else:
    cur = conn.cursor(mysqlc.cursors.SSCursor, prepared=(mode == "prepared"))
    if spec.get("arraysize"):
        cur.arraysize = spec["arraysize"]
cur.execute("SELECT 1")           # warm up the cursor path (first-use allocations)
cur.fetchall()
setup.execute("SHOW SESSION STATUS LIKE 'Com_stmt_fetch'")
fetches0 = int(setup.fetchone()[1])
try:                              # reset VmHWM to the current RSS (Linux >= 4.0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    reset = True
except OSError:
    reset = False
rss_before = status("VmRSS")
hwm_before = status("VmHWM")
cur.execute(spec["sql"])
n = 0
total = 0
first = last = None
if mode == "buffered":
    rows = cur.fetchall()
    n = len(rows)
    total = sum(r[0] for r in rows)
    first, last = rows[0], rows[-1]
    hwm_after = status("VmHWM")
    del rows
else:
    for row in rows_of(cur):
        if n == 0:
            first = row
        n += 1
        total += row[0]
        last = row
    hwm_after = status("VmHWM")
rowcount = cur.rowcount
setup.execute("SHOW SESSION STATUS LIKE 'Com_stmt_fetch'")
fetches = int(setup.fetchone()[1]) - fetches0
# the connection is usable for a buffered fetchall() afterwards
after = conn.cursor()
after.execute("SELECT seq FROM seq_1_to_1000")
buffered = after.fetchall()
print(json.dumps({
    "mode": mode, "rows": n, "sum": total, "rowcount": rowcount,
    "first": list(first), "last": list(last), "reset": reset,
    "rss_before": rss_before, "hwm_before": hwm_before, "hwm_after": hwm_after,
    "growth_mb": (hwm_after - rss_before) / 1048576.0,
    "com_stmt_fetch": fetches,
    "buffered_after": [len(buffered), sum(r[0] for r in buffered)],
}))
'''


def _measure(conn_kwargs, mode, arraysize=None, setup=(), api="sync"):
    spec = subprocess_spec({"kwargs": conn_kwargs, "mode": mode, "sql": STREAM_SQL,
                            "setup": list(setup), "arraysize": arraysize}, api)
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", _MEASURE, json.dumps(spec)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    print("\n[sscursor memory, %s] %-9s %d rows: peak RSS %+.2f MB over the level before the "
          "query (VmRSS before %.1f MB, VmHWM after %.1f MB, HWM reset: %s, "
          "COM_STMT_FETCH: %d)" % (api, mode, res["rows"], res["growth_mb"],
                                   res["rss_before"] / 1048576.0,
                                   res["hwm_after"] / 1048576.0, res["reset"],
                                   res["com_stmt_fetch"]))
    return res


def _check_stream_result(res):
    assert res["rows"] == N
    assert res["sum"] == N * (N + 1) // 2
    assert res["first"] == [1, "x" * 20]
    assert res["last"] == [N, "x" * 20]
    assert res["rowcount"] == N
    assert res["buffered_after"] == [1000, 500500]


def test_sscursor_1m_rows_peak_memory(conn_kwargs, api):
    res = _measure(conn_kwargs, "ss", api=api)
    _check_stream_result(res)
    assert res["com_stmt_fetch"] == 0                   # text protocol, no server cursor
    assert res["growth_mb"] < LIMIT_MB, res


def test_prepared_sscursor_1m_rows_peak_memory(conn_kwargs, api):
    res = _measure(conn_kwargs, "prepared", arraysize=1000, setup=[HEAP_SESSION], api=api)
    _check_stream_result(res)
    # a server-side cursor read in batches of arraysize rows
    assert N // 1000 <= res["com_stmt_fetch"] <= N // 1000 + 1, res
    assert res["growth_mb"] < LIMIT_MB, res


def test_buffered_fetchall_of_the_same_rows_is_measured_as_growth(conn_kwargs, api):
    """The control: the same measurement sees a buffered fetchall() of the 1M rows
    (and the connection's buffered cursors keep working)."""
    res = _measure(conn_kwargs, "buffered", api=api)
    _check_stream_result(res)
    assert res["growth_mb"] > 3 * LIMIT_MB, res


# =========================================================================== fetch methods

def test_fetchone_fetchmany_iteration(conn):
    cur = conn.cursor(SSCursor)
    assert isinstance(sync_obj(cur), SSCursor)
    assert cur.execute("SELECT seq, CONCAT('r', seq) FROM seq_1_to_1000") == -1
    assert cur.rowcount == -1                       # unknown until the end (mysqlclient)
    assert [d[0] for d in cur.description] == ["seq", "CONCAT('r', seq)"]
    assert cur.fetchone() == (1, "r1")
    assert cur.rownumber == 1
    assert list(cur.fetchmany(3)) == [(2, "r2"), (3, "r3"), (4, "r4")]
    cur.arraysize = 5
    assert list(cur.fetchmany()) == [(i, "r%d" % i) for i in range(5, 10)]
    cur.scroll(10)                                  # forward only
    assert cur.fetchone() == (20, "r20")
    with pytest.raises(mysqlc.NotSupportedError):
        cur.scroll(-1)
    with pytest.raises(mysqlc.NotSupportedError):
        cur.scroll(0, mode="absolute")
    it = iter(cur)
    assert next(it) == (21, "r21")
    rest = list(it)
    assert rest[0] == (22, "r22") and rest[-1] == (1000, "r1000") and len(rest) == 979
    assert cur.fetchone() is None
    assert list(cur.fetchmany(10)) == []
    assert list(cur.fetchall()) == []
    assert cur.rowcount == 1000
    assert cur.rownumber == 1000


def test_fetchall_reads_the_rest(conn):
    cur = conn.cursor(SSCursor)
    cur.execute("SELECT seq FROM seq_1_to_10")
    assert cur.fetchone() == (1,)
    assert list(cur.fetchall()) == [(i,) for i in range(2, 11)]
    assert cur.rowcount == 10
    cur.execute("SELECT seq FROM seq_1_to_10 WHERE seq > 10")   # an empty result
    assert cur.fetchone() is None
    assert cur.rowcount == 0


def test_statements_without_result_set(conn):
    cur = conn.cursor(SSCursor)
    cur.execute("CREATE TEMPORARY TABLE ss (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
    assert cur.execute("INSERT INTO ss (v) VALUES (1), (2), (3)") == 3
    assert cur.rowcount == 3
    assert cur.lastrowid == 1
    assert cur.description is None
    assert cur.fetchone() is None
    cur.execute("SELECT v FROM ss ORDER BY id")
    assert list(cur) == [(1,), (2,), (3,)]


def test_ssdictcursor(conn):
    cur = conn.cursor(SSDictCursor)
    cur.execute("SELECT seq AS n, seq * 2 AS twice, NULL AS z FROM seq_1_to_500")
    assert cur.fetchone() == {"n": 1, "twice": 2, "z": None}
    assert list(cur.fetchmany(2)) == [{"n": 2, "twice": 4, "z": None},
                                      {"n": 3, "twice": 6, "z": None}]
    rest = list(cur)
    assert len(rest) == 497 and rest[-1] == {"n": 500, "twice": 1000, "z": None}
    # duplicate names: "table.column" as DictCursor does
    c = conn.cursor()
    c.execute("CREATE TEMPORARY TABLE a1 (id INT)")
    c.execute("CREATE TEMPORARY TABLE b1 (id INT)")
    c.execute("INSERT INTO a1 VALUES (1)")
    c.execute("INSERT INTO b1 VALUES (2)")
    cur.execute("SELECT a1.id, b1.id FROM a1, b1")
    assert list(cur.fetchall()) == [{"id": 1, "b1.id": 2}]


def test_buffered_fetchall_still_works_after_streaming(conn):
    # (20,000 rows: many read-ahead batches; the [aio] run proxies each row across threads)
    ss = conn.cursor(SSCursor)
    ss.execute("SELECT seq FROM seq_1_to_20000")
    assert sum(r[0] for r in ss) == 20000 * 20001 // 2
    cur = conn.cursor()
    assert cur.execute("SELECT seq FROM seq_1_to_100000") == 100000
    rows = cur.fetchall()
    assert len(rows) == 100000 and rows[-1] == (100000,)
    assert cur.fetchone() is None
    # buffered and unbuffered cursors alternate on the connection
    ss.execute("SELECT 'again'")
    assert ss.fetchall() == [("again",)]
    cur.execute("SELECT 2")
    assert cur.fetchall() == ((2,),)


@pytest.mark.parametrize("finish", ["fetchall", "fetchmany", "fetchone"])
@pytest.mark.parametrize("prepared", [False, True], ids=["text", "prepared"])
def test_rowcount_counts_the_rows_a_loop_left(conn, prepared, finish):
    """A loop left early keeps the rows it read ahead, and the next fetch returns them
    first; the rowcount at the end of the rows counts them too (it came out short by
    their number when the fetch that reached the end began with them)."""
    ss = conn.cursor(SSCursor, prepared=prepared)
    ss.execute("SELECT seq FROM seq_1_to_2000 WHERE seq > %s", (0,))
    for r in ss:
        if r[0] == 10:
            break
    assert ss.rowcount == -1
    if finish == "fetchall":
        rest = list(ss.fetchall())
    elif finish == "fetchmany":
        rest = []
        while True:
            got = ss.fetchmany(300)
            if not got:
                break
            rest += got
    else:
        rest = []
        while True:
            row = ss.fetchone()
            if row is None:
                break
            rest.append(row)
    assert rest == [(i,) for i in range(11, 2001)]
    assert ss.rownumber == ss.rowcount == 2000


# =========================================================================== 2014 rules

def _out_of_sync(excinfo):
    assert excinfo.value.args[0] == 2014
    assert "Commands out of sync" in str(excinfo.value)


def test_other_command_mid_result_is_out_of_sync(conn):
    ss = conn.cursor(SSCursor)
    ss.execute("SELECT seq FROM seq_1_to_20000")
    assert ss.fetchmany(5) == [(i,) for i in range(1, 6)]
    other = conn.cursor()
    attempts = [
        lambda: other.execute("SELECT 1"),
        lambda: conn.cursor(SSCursor).execute("SELECT 1"),
        lambda: conn.cursor(prepared=True).execute("SELECT ?", (1,)),
        conn.commit,
        conn.rollback,
        conn.ping,
        conn.show_warnings,
        lambda: conn.select_db(conn.db),
        lambda: conn.autocommit(not conn.get_autocommit()),
    ]
    for attempt in attempts:
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            attempt()
        _out_of_sync(ei)
    # nothing was lost: the stream continues where it was
    assert ss.fetchone() == (6,)
    rest = list(ss)
    assert len(rest) == 20000 - 6 and rest[-1] == (20000,)
    other.execute("SELECT 1")                       # fine once the rows are read
    assert other.fetchall() == ((1,),)


def test_close_mid_result_drains(conn):
    ss = conn.cursor(SSCursor)
    ss.execute("SELECT seq, REPEAT('y', 100) FROM seq_1_to_200000")
    assert ss.fetchone() == (1, "y" * 100)
    ss.close()
    with pytest.raises(mysqlc.ProgrammingError):
        ss.fetchone()
    cur = conn.cursor()
    cur.execute("SELECT 'after close'")
    assert cur.fetchall() == (("after close",),)
    ss.close()                                      # idempotent


def test_context_manager_and_garbage_collection_mid_result(conn):
    with conn.cursor(SSCursor) as ss:
        ss.execute("SELECT seq FROM seq_1_to_50000")
        ss.fetchmany(10)
    cur = conn.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)
    ss = conn.cursor(SSCursor)
    ss.execute("SELECT seq FROM seq_1_to_50000")
    ss.fetchone()
    del ss
    gc.collect()
    cur.execute("SELECT 2")                         # the forgotten rows are dropped
    assert cur.fetchall() == ((2,),)


def test_own_next_execute_drains(conn):
    ss = conn.cursor(SSCursor)
    ss.execute("SELECT seq FROM seq_1_to_200000")
    assert ss.fetchone() == (1,)
    ss.execute("SELECT seq * 10 FROM seq_1_to_3")
    assert list(ss) == [(10,), (20,), (30,)]
    assert ss.rowcount == 3
    ss.execute("SELECT seq FROM seq_1_to_100000")
    ss.fetchmany(3)
    conn_cur = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        conn_cur.execute("SELECT 1")
    _out_of_sync(ei)
    ss.execute("DO 1")                              # a statement without a result set
    conn_cur.execute("SELECT 1")
    assert conn_cur.fetchall() == ((1,),)


def test_nextset_across_multi_statement_query(conn):
    ss = conn.cursor(SSCursor)
    ss.execute("SELECT seq FROM seq_1_to_100000; "
               "SELECT 'second', 2; "
               "DO 1; "
               "SELECT seq FROM seq_1_to_3")
    assert ss.fetchmany(2) == [(1,), (2,)]
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        conn.cursor().execute("SELECT 1")           # rows of the first result unread
    _out_of_sync(ei)
    assert ss.nextset() is True                     # drops the rest of the first result
    assert [d[0] for d in ss.description] == ["second", "2"]
    assert ss.fetchall() == [("second", 2)]
    assert ss.nextset() is True                     # DO 1: no result set
    assert ss.description is None
    assert ss.fetchone() is None
    assert ss.nextset() is True
    assert list(ss) == [(1,), (2,), (3,)]
    assert ss.nextset() is None
    cur = conn.cursor()
    cur.execute("SELECT 'usable'")
    assert cur.fetchall() == (("usable",),)


def test_nextset_mid_result_then_close(conn):
    ss = conn.cursor(SSDictCursor)
    ss.execute("SELECT seq FROM seq_1_to_50000; SELECT seq FROM seq_1_to_50000; SELECT 3 AS x")
    ss.fetchone()
    assert ss.nextset() is True
    ss.fetchone()
    ss.close()                                      # drops the rest and the third result
    cur = conn.cursor()
    cur.execute("SELECT 4")
    assert cur.fetchall() == ((4,),)


def test_killed_connection_mid_stream_is_2013(conn, root_conn_kwargs):
    ss = conn.cursor(SSCursor)
    ss.execute("SELECT seq, REPEAT('z', 50) FROM seq_1_to_%d" % N)
    assert ss.fetchone() == (1, "z" * 50)
    killer = mysqlc.connect(**root_conn_kwargs)
    try:
        killer.cursor().execute("KILL %d" % conn.thread_id())
    finally:
        killer.close()
    with pytest.raises(mysqlc.OperationalError) as ei:
        for _ in ss:
            pass
    assert ei.value.args[0] == 2013
    assert not conn.open
    with pytest.raises(mysqlc.OperationalError) as ei:     # mysqlclient's CR_SERVER_GONE_ERROR
        conn.cursor().execute("SELECT 1")
    assert ei.value.args == (2006, "Server has gone away")


# =========================================================================== prepared SSCursor

def _com(conn, name):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE %s", (name,))
    return int(cur.fetchone()[1])


def test_prepared_sscursor_fetches_in_batches_of_arraysize(conn):
    ps = conn.cursor(SSCursor, prepared=True)
    assert isinstance(sync_obj(ps), mysqlc.cursors.PreparedSSCursor)
    assert ps.arraysize == 100
    before = _com(conn, "Com_stmt_fetch")
    ps.execute("SELECT seq, CAST(seq AS CHAR) FROM seq_1_to_1000 WHERE seq > ?", (0,))
    assert ps.fetchone() == (1, "1")
    rows = list(ps.fetchmany(250))
    assert rows[0] == (2, "2") and rows[-1] == (251, "251")
    rest = list(ps)
    assert len(rest) == 749 and rest[-1] == (1000, "1000")
    assert ps.fetchone() is None
    assert ps.rowcount == 1000
    fetches = _com(conn, "Com_stmt_fetch") - before
    assert 10 <= fetches <= 11, fetches              # 1000 rows / arraysize 100
    ps.arraysize = 7
    before = _com(conn, "Com_stmt_fetch")
    ps.execute("SELECT seq FROM seq_1_to_20 WHERE seq > ?", (0,))
    assert [r[0] for r in ps.fetchall()] == list(range(1, 21))
    assert 3 <= _com(conn, "Com_stmt_fetch") - before <= 4


def test_prepared_ssdictcursor(conn):
    ps = conn.cursor(SSDictCursor, prepared=True)
    ps.execute("SELECT seq AS n, ? AS tag FROM seq_1_to_300", ("t",))
    assert ps.fetchone() == {"n": 1, "tag": "t"}
    rest = list(ps)
    assert len(rest) == 299 and rest[-1] == {"n": 300, "tag": "t"}


def test_prepared_sscursor_out_of_sync_close_and_next_execute(conn):
    ps = conn.cursor(SSCursor, prepared=True)
    ps.execute("SELECT seq FROM seq_1_to_10000 WHERE seq > ?", (0,))
    assert ps.fetchone() == (1,)
    other = conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        other.execute("SELECT 1")
    _out_of_sync(ei)
    assert ps.fetchone() == (2,)
    # its own next execute closes the server cursor and runs
    ps.execute("SELECT seq FROM seq_1_to_5 WHERE seq > ?", (2,))
    assert list(ps) == [(3,), (4,), (5,)]
    # closing mid-result closes the server cursor; the connection is usable
    ps.execute("SELECT seq FROM seq_1_to_10000 WHERE seq > ?", (0,))
    ps.fetchmany(150)
    ps.close()
    other.execute("SELECT 'ok'")
    assert other.fetchall() == (("ok",),)
    # the statement stays cached and can open a new cursor
    ps2 = conn.cursor(SSCursor, prepared=True)
    ps2.execute("SELECT seq FROM seq_1_to_10000 WHERE seq > ?", (9998,))
    assert list(ps2) == [(9999,), (10000,)]


def test_prepared_sscursor_statement_without_result_set(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE pss (id INT)")
    ps = conn.cursor(SSCursor, prepared=True)
    assert ps.execute("INSERT INTO pss VALUES (?), (?)", (1, 2)) == 2
    assert ps.fetchone() is None
    ps.execute("SELECT id FROM pss ORDER BY id")
    assert list(ps) == [(1,), (2,)]
    cur.execute("SELECT COUNT(*) FROM pss")
    assert cur.fetchall() == ((2,),)


def test_iteration_over_mib_rows_is_bounded_by_bytes_peak_memory(conn):
    """Iterating an unbuffered cursor reads ahead at most about 1 MiB of rows (not 256
    rows whatever their size): rows of 1 MiB come a few at a time.  Measured with
    tracemalloc (the row strings and the receive buffer are Python allocations)."""
    import tracemalloc
    cur = conn.cursor(SSCursor)
    cur.execute("SELECT seq, REPEAT('x', 1048576) FROM seq_1_to_60")
    tracemalloc.start()
    try:
        n = 0
        for row in cur:
            n += 1
            assert len(row[1]) == 1048576
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == 60
    assert peak < 16 * 1048576, peak   # 256 rows read ahead would be 60 MiB here
    # the C bound itself: stop once the packets read add up to max_bytes
    cur.execute("SELECT seq, REPEAT('y', 1048576) FROM seq_1_to_10")
    core = conn._conn
    assert len(core.fetch(100, None, 3000000)) == 3
    assert len(core.fetch(100, None, 0)) == 7


@pytest.mark.parametrize("prepared", [False, True])
def test_leaving_a_loop_loses_no_row(conn, prepared):
    """Iteration reads rows ahead in batches; breaking out of ``for row in cur`` and
    then fetching, or looping again, continues with the next row (the rest of the
    batch was dropped: up to 255 rows skipped silently)."""
    cur = conn.cursor(mysqlc.cursors.SSCursor, prepared=prepared)
    cur.execute("SELECT seq FROM seq_1_to_2000")
    for row in cur:
        if row[0] == 10:
            break
    assert cur.fetchone() == (11,)
    assert [r[0] for r in cur.fetchmany(3)] == [12, 13, 14]
    for row in cur:
        if row[0] == 500:
            break
    rest = [r[0] for r in cur]
    assert rest == list(range(501, 2001))
    assert cur.rownumber == 2000 and cur.rowcount == 2000
    cur.execute("SELECT seq FROM seq_1_to_300")
    for row in cur:
        break
    cur.execute("SELECT 7")           # a new statement: the rows kept from the last are gone
    assert list(cur) == [(7,)]


ERROR_AT_3000 = ("SELECT seq, IF(seq = 3000, (SELECT seq UNION SELECT seq + 1), seq) "
                 "FROM seq_1_to_5000")


def test_rows_before_a_server_error_are_returned_first(conn):
    """A server error that ends a result mid-way (1242 at row 3,000) comes after every row
    before it, whichever way the rows are read: iteration and fetchmany(n) return the
    rows of the batch that reached the error and the next fetch raises it; after a loop
    left rows read ahead, those come first too.  fetchall() raises at once (its rows
    are lost, as mysqlclient's).  The connection stays in step."""
    def collect(read):
        cur = conn.cursor(mysqlc.cursors.SSCursor)
        cur.execute(ERROR_AT_3000)
        rows = []
        with pytest.raises(mysqlc.Error) as ei:
            read(cur, rows)
        assert ei.value.args[0] == 1242
        assert cur.rowcount == -1
        cur.close()
        return rows

    def by_iteration(cur, rows):
        for row in cur:
            rows.append(row)

    def by_fetchmany(cur, rows):
        while True:
            got = cur.fetchmany(700)
            assert got, "the error, not an end of the rows"
            rows.extend(got)

    def after_a_left_loop(cur, rows):
        for row in cur:
            rows.append(row)
            if row[0] == 2950:   # the batch holds rows up to the error: 49 read ahead
                break
        while True:
            got = cur.fetchmany(1000)
            assert got
            rows.extend(got)

    for read in (by_iteration, by_fetchmany, after_a_left_loop):
        rows = collect(read)
        assert len(rows) == 2999, read.__name__
        assert rows[0] == (1, 1) and rows[-1] == (2999, 2999), read.__name__

    # the calls that would have read the rest of the result raise the error a fetch
    # kept, as they raised it while the rows were unread: nextset(), the cursor's next
    # execute() (before it sends anything); close() drops it (as mysqlclient's close()
    # drops an unread result)
    cur = conn.cursor(mysqlc.cursors.SSCursor)
    cur.execute(ERROR_AT_3000)
    while len(cur.fetchmany(1000)) == 1000:
        pass
    cur.close()
    cur = conn.cursor(mysqlc.cursors.SSCursor)
    cur.execute("SELECT 6")
    assert cur.fetchall() == [(6,)]
    cur.close()
    for then in ("nextset", "execute"):
        cur = conn.cursor(mysqlc.cursors.SSCursor)
        cur.execute(ERROR_AT_3000)
        got = []
        while len(got) < 2999:
            got += cur.fetchmany(1000)
        assert len(got) == 2999, then
        with pytest.raises(mysqlc.Error) as ei:
            if then == "execute":
                cur.execute("SELECT 8")
            else:
                getattr(cur, then)()
        assert ei.value.args[0] == 1242, then
        cur.execute("SELECT 9")
        assert cur.fetchall() == [(9,)]
        cur.close()

    cur = conn.cursor(mysqlc.cursors.SSCursor)
    cur.execute(ERROR_AT_3000)
    assert len(cur.fetchmany(10)) == 10
    with pytest.raises(mysqlc.Error) as ei:
        cur.fetchall()
    assert ei.value.args[0] == 1242
    assert cur.fetchall() == []   # raised once
    cur.execute("SELECT 7")
    assert cur.fetchall() == [(7,)]


@pytest.mark.sync_only("the columnar reader's check; the proxy runs fetch_arrow_table too, "
                       "but the point is the cursor state it reads")
def test_columnar_read_raises_a_deferred_error(conn):
    """fetch_arrow_table() after a fetchmany() that returned the rows before a server
    error raises that error (it would otherwise read an ended result as empty)."""
    pytest.importorskip("pyarrow")
    cur = conn.cursor(mysqlc.cursors.SSCursor)
    cur.execute(ERROR_AT_3000)
    got = []
    while len(got) < 2999:
        got += cur.fetchmany(1000)
    assert len(got) == 2999
    with pytest.raises(mysqlc.Error) as ei:
        cur.fetch_arrow_table()
    assert ei.value.args[0] == 1242
