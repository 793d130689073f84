"""Regression tests from a breaker run on issue 21 (round trips: bulk executemany,
Connection.pipeline(), the one-trip prepare), named test_dN_... after the defect each
reproduced (D1 ... D12).  Fixed and tested here: D1 (a prepared ... RETURNING lost the
connection at its second execute), D2 (pipeline blocks refused statements mentioning
load/data/local), D3 (a text cursor's bulk stored other values than its execute() for
temporal and bytes values), D4 (a row over max_allowed_packet applied the rows before
it), D8 (a pipelined multi-statement text's later error was lost to nextset()).

D7 fixed: a text cursor's column of alternating types (int/str, float/Decimal) took one
bulk command and one round trip per run of one type; past 4 runs the rows now go by the
text path (the multi-row INSERT, or one multi-statement query per max_allowed_packet).
The differences from mysqlclient that docs/compat.md lists are tested as documented (D5
lastrowid of an INSERT the rewrite does not match, D6 a raising generator, D9 conv
entries for int/float/bool/None, D10 the timedelta literal; D12, the server's warning
count of a bulk UPDATE/DELETE, is the server's and only documented). D11 fixed: a
cancelled mysqlc.aio executemany of several bulk commands went on sending them; the
engine now starts no further command while a cancellation is handled."""

import datetime

import pytest

import mysqlc

D = datetime


def _table(conn, ddl, rows=()):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS b21")
    cur.execute(ddl)
    if rows:
        cur.executemany("INSERT INTO b21 (id) VALUES (%s)", [(r,) for r in rows])
    conn.commit()
    return cur


# --------------------------------------------------------------------------------- D1

@pytest.mark.parametrize("sql", [
    "INSERT INTO b21 (k) VALUES (%s) RETURNING id, k",
    "REPLACE INTO b21 (k) VALUES (%s) RETURNING id",
    "DELETE FROM b21 WHERE k = %s RETURNING id",
    "INSERT INTO b21 (k) SELECT %s RETURNING k",
])
def test_d1_prepared_returning_executed_twice(conn_kwargs, sql):
    """Breaker D1: on a connection whose first prepared statement with a result is a
    `... RETURNING` (COM_STMT_PREPARE reports 0 columns), the second execute fails with
    OperationalError 2027 'the server skipped column definitions the client does not
    have' and the connection is closed (src/prepared.c only creates c->meta_cache in a
    prepare with ncols > 0; results.c records an execute's columns only when the cache
    exists).  With a prepared SELECT run first on the connection it works."""
    c = mysqlc.connect(autocommit=True, **conn_kwargs)
    try:
        _table(c, "CREATE TABLE b21 (id INT AUTO_INCREMENT PRIMARY KEY, k INT)")
        cur = c.cursor(prepared=True)
        for k in (1, 2, 3):
            cur.execute(sql, (k,))
            cur.fetchall()
        check = c.cursor()
        check.execute("SELECT 1")
        assert check.fetchall() == ((1,),)
    finally:
        c.close()


def test_d1_prepared_executemany_returning(conn_kwargs):
    """Breaker D1 through executemany: a prepared cursor's executemany of INSERT ...
    RETURNING (the per-row path) loses the connection at its second row."""
    c = mysqlc.connect(autocommit=True, **conn_kwargs)
    try:
        _table(c, "CREATE TABLE b21 (id INT AUTO_INCREMENT PRIMARY KEY, k INT)")
        cur = c.cursor(prepared=True)
        cur.executemany("INSERT INTO b21 (k) VALUES (%s) RETURNING id", [(1,), (2,), (3,)])
        assert cur.rowcount == 3
        check = c.cursor()
        check.execute("SELECT COUNT(*) FROM b21")
        assert check.fetchall() == ((3,),)
    finally:
        c.close()


# --------------------------------------------------------------------------------- D2

@pytest.mark.parametrize("sql,args", [
    ("SELECT %s", ("could not load the data from local cache",)),
    ("SELECT 'load data local' AS words", None),
    ("SELECT 1 AS `load`, 2 AS `data`, 3 AS `local`", None),
])
def test_d2_pipeline_refuses_statements_mentioning_load_data_local(conn, sql, args):
    """Breaker D2: inside a pipeline block every statement whose text contains the words
    load ... data ... local in that order (in a string literal, a parameter value, an
    identifier) is refused with 'LOAD DATA LOCAL INFILE cannot run inside a pipeline
    block' (mysqlc/_pipeline.py _RE_LOAD_LOCAL searches the whole text).  A SELECT or an
    INSERT of a user's log message is not LOAD DATA."""
    cur = conn.cursor()
    with conn.pipeline():
        cur.execute(sql, args)
    assert len(cur.fetchall()) == 1


# --------------------------------------------------------------------------------- D3

# (column type, value, sql_mode): a text cursor's executemany (bulk on MariaDB) and its
# execute() per row must store the same value or raise the same error
# (docs/batching.md "Types in a bulk command", docs/compat.md "Parameter types")
BULK_VS_TEXT = [
    pytest.param("VARCHAR(40)", D.timedelta(hours=1), "", id="timedelta-into-varchar"),
    pytest.param("VARCHAR(40)", D.timedelta(0), "", id="zero-timedelta-into-varchar"),
    pytest.param("TIME(6)", D.timedelta(days=-35), "STRICT_ALL_TABLES",
                 id="out-of-range-timedelta-strict"),
    pytest.param("TIME(6)", D.timedelta(days=35), "", id="out-of-range-timedelta"),
    pytest.param("BIGINT", D.datetime(2020, 1, 2, 3, 4, 5), "STRICT_ALL_TABLES",
                 id="datetime-into-bigint-strict"),
    pytest.param("DECIMAL(20,2)", D.date(2020, 1, 2), "", id="date-into-decimal"),
    pytest.param("DATETIME(6)", D.time(1, 2, 3), "", id="time-into-datetime"),
    pytest.param("DATE", D.timedelta(0), "STRICT_ALL_TABLES", id="timedelta-into-date"),
    pytest.param("CHAR(3) CHARACTER SET latin1", b"\xff\xfe", "STRICT_ALL_TABLES",
                 id="bytes-into-latin1-strict"),
]


def _update(conn, value, many):
    cur = conn.cursor()
    try:
        if many:
            cur.executemany("UPDATE b21 SET c = %s WHERE id = %s", [(value, 1), (value, 2)])
        else:
            for i in (1, 2):
                cur.execute("UPDATE b21 SET c = %s WHERE id = %s", (value, i))
        err = None
    except mysqlc.Error as exc:
        err = exc.args[0]
    conn.rollback()   # an error leaves what it leaves; compare the values without it
    if err is None:
        if many:
            cur.executemany("UPDATE b21 SET c = %s WHERE id = %s", [(value, 1), (value, 2)])
        else:
            for i in (1, 2):
                cur.execute("UPDATE b21 SET c = %s WHERE id = %s", (value, i))
    cur.execute("SELECT c FROM b21 ORDER BY id")
    got = cur.fetchall()
    conn.rollback()
    return err, got


@pytest.mark.parametrize("coltype,value,mode", BULK_VS_TEXT)
def test_d3_bulk_stores_what_the_text_path_stores(conn, coltype, value, mode):
    """Breaker D3: the bulk path (COM_STMT_BULK_EXECUTE, binary TIME/DATETIME/BLOB
    parameters) stores other values than the text path for these columns, or stores a
    value where the text path (and mysqlclient) is refused under a strict sql_mode:
    '01:00:00' vs '1:00:00' in a VARCHAR, TIME clamped to -838:59:59 without the 1292
    error, 20200102030405 vs error 1265 in a BIGINT, today's date + time vs 2001-02-03
    in a DATETIME, raw bytes vs error 1366 in a latin1 column."""
    _table(conn, "CREATE TABLE b21 (id INT PRIMARY KEY, c %s) ENGINE=InnoDB" % coltype,
           rows=(1, 2))
    cur = conn.cursor()
    cur.execute("SET SESSION sql_mode = %s", (mode,))
    text = _update(conn, value, many=False)
    bulk = _update(conn, value, many=True)
    assert bulk == text


# --------------------------------------------------------------------------------- D4

def test_d4_too_large_row_text_cursor_applies_nothing(conn_kwargs, root_conn_kwargs):
    """Breaker D4 (docs/batching.md "Splits at max_allowed_packet": "the bulk path checks
    every command before it sends the first, so nothing is applied"): on MariaDB a text
    cursor's executemany of UPDATE with one parameter set too large for the packet
    falls back to one text statement per row, runs the rows before it (10 of 20 applied
    here, autocommit) and raises 2020 naming 'the statement (COM_QUERY)'.  A prepared
    cursor applies nothing, as documented."""
    root = mysqlc.connect(autocommit=True, **root_conn_kwargs)
    rc = root.cursor()
    rc.execute("SELECT @@GLOBAL.max_allowed_packet")
    (old,), = rc.fetchall()
    rc.execute("SET GLOBAL max_allowed_packet = 16384")
    try:
        c = mysqlc.connect(autocommit=True, **conn_kwargs)
        try:
            cur = _table(c, "CREATE TABLE b21 (id INT PRIMARY KEY, c LONGTEXT)",
                         rows=range(20))
            rows = [("y" * (20000 if i == 10 else 10), i) for i in range(20)]
            with pytest.raises(mysqlc.OperationalError) as info:
                cur.executemany("UPDATE b21 SET c = %s WHERE id = %s", rows)
            assert info.value.args[0] == 2020
            cur.execute("SELECT COUNT(*) FROM b21 WHERE c IS NOT NULL")
            assert cur.fetchall() == ((0,),)
        finally:
            c.close()
    finally:
        rc.execute("SET GLOBAL max_allowed_packet = %s", (old,))
        root.close()


# --------------------------------------------------------------------------------- D5

@pytest.mark.parametrize("sql", [
    "INSERT INTO b21 SET k = %s",
    "/* tagged */ INSERT INTO b21 (k) VALUES (%s)",
])
def test_d5_lastrowid_of_a_bulk_insert(conn, sql):
    """Breaker D5, a documented difference (docs/compat.md "executemany on MariaDB"):
    for an INSERT mysqlclient's rewrite does not match (INSERT ... SET, a leading
    comment) mysqlclient runs one statement per row and reports the last row's id (3);
    mysqlc's one bulk command reports the first id it generated (1), as a multi-row
    INSERT does.  rowcount is the same (3)."""
    cur = _table(conn, "CREATE TABLE b21 (id INT AUTO_INCREMENT PRIMARY KEY, k INT)")
    cur.executemany(sql, [(1,), (2,), (3,)])
    assert (cur.rowcount, cur.lastrowid) == (3, 1)
    conn.rollback()


# --------------------------------------------------------------------------------- D6

def test_d6_a_raising_generator_applies_nothing(conn):
    """Breaker D6, a documented difference (docs/compat.md "executemany on MariaDB"): an
    UPDATE executemany whose generator raises after two rows leaves those two rows
    applied with mysqlclient (one execute per row); mysqlc reads the whole iterable
    before sending, so none is applied and the caller's exception propagates."""
    cur = _table(conn, "CREATE TABLE b21 (id INT PRIMARY KEY, c INT)", rows=(1, 2, 3))

    def rows():
        yield (10, 1)
        yield (20, 2)
        raise ValueError("the caller's generator failed")

    with pytest.raises(ValueError):
        cur.executemany("UPDATE b21 SET c = %s WHERE id = %s", rows())
    cur.execute("SELECT id, c FROM b21 ORDER BY id")
    assert cur.fetchall() == ((1, None), (2, None), (3, None))


# --------------------------------------------------------------------------------- D7

@pytest.mark.parametrize("kind", ["insert-int-str", "update-float-decimal"])
def test_d7_mixed_type_column_bounded_round_trips(conn_kwargs, kind):
    """Breaker D7 (issue 21: "a number of round trips that does not grow with the row
    count"): a column whose values alternate between types that cannot share one bulk
    type (int/str, float/Decimal) is sent as one COM_STMT_BULK_EXECUTE per row, each its
    own round trip: 1,000 rows are 1,000 round trips (at 1 ms RTT: 1.47 s for the
    INSERT, where mysqlclient's multi-row INSERT is one statement, 0.027 s).  Fixed: past
    4 runs a text cursor's rows go by the text path (the multi-row INSERT rewrite, or one
    multi-statement query per max_allowed_packet)."""
    import decimal
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "benchmarks"))
    from latency_proxy import LatencyProxy
    with LatencyProxy(conn_kwargs["port"], one_way=0.0001) as proxy:
        kw = dict(conn_kwargs, host="127.0.0.1", port=proxy.port)
        kw.pop("unix_socket", None)
        c = mysqlc.connect(**kw)
        try:
            cur = _table(c, "CREATE TABLE b21 (id INT PRIMARY KEY, s VARCHAR(20), "
                            "v DECIMAL(30,10))",
                         rows=range(1000) if kind.startswith("update") else ())
            cur.execute("SELECT @@max_allowed_packet")   # whatever a first batch reads
            cur.fetchall()
            proxy.reset()
            if kind == "insert-int-str":
                cur.executemany("INSERT INTO b21 (id, s) VALUES (%s, %s)",
                                [(i, i if i % 2 else "s%d" % i) for i in range(1000)])
            else:
                cur.executemany("UPDATE b21 SET v = %s WHERE id = %s",
                                [(i / 4 if i % 2 else decimal.Decimal(i), i)
                                 for i in range(1000)])
            trips = proxy.reset()
            assert cur.rowcount == 1000
            assert trips <= 4, trips
        finally:
            c.close()


# --------------------------------------------------------------------------------- D8

def test_d8_pipelined_multi_statement_error_reached_by_nextset(conn):
    """Breaker D8: outside a block, a multi-statement text whose second statement fails
    gives the first result and nextset() raises the error (as mysqlclient).  Pipelined,
    the error is raised by the cursor's FIRST fetch (before its own first result, which
    the next fetch then returns) and nextset() returns None: walking the results with
    nextset() (docs/batching.md "a CALL's or a multi-statement text's further results
    are read with it and nextset() walks them") ends silently where the statement
    failed.  The same holds for a CALL whose second SELECT fails."""
    outside = conn.cursor()
    outside.execute("SELECT 1; SELECT nosuch; SELECT 3")
    assert outside.fetchall() == ((1,),)
    with pytest.raises(mysqlc.OperationalError):
        outside.nextset()

    cur = conn.cursor()
    try:
        with conn.pipeline():
            cur.execute("SELECT 1; SELECT nosuch; SELECT 3")
    except mysqlc.Error:
        pass   # the block reports it once for the pipeline
    assert cur.fetchall() == ((1,),)
    with pytest.raises(mysqlc.OperationalError):
        cur.nextset()


# --------------------------------------------------------------------------------- D11

def test_d11_aio_cancel_stops_a_multi_command_executemany(conn_kwargs):
    """Breaker D11: cancelling mysqlc.aio's executemany of 20,000 x 5 KB rows (about 7
    COM_STMT_BULK_EXECUTE commands of max_allowed_packet, 2.3 s here) 0.2 s after it
    started does not stop it: every later command is still sent and run, all 20,000 rows
    are stored (autocommit), and CancelledError comes only when it is all done (2.1 s
    after the cancel; with 80,000 rows the 5 s budget then closes the connection).  The
    sync API's Ctrl-C stops at once (0.02 s, ~3,300 rows, the commands already sent).
    The caller is told "cancelled" for rows the server committed after the
    cancellation.  Fixed: while a cancellation is handled the engine starts no further
    command (core.stop_requested), so the executemany stops after the command in
    flight.  (The cursor's max_stmt_length makes the commands 1 MiB, whatever the
    server's max_allowed_packet.)"""
    import asyncio
    import time

    import mysqlc.aio as aio

    async def main():
        conn = await aio.connect(autocommit=True, **conn_kwargs)
        try:
            cur = conn.cursor()
            cur._sync_obj.max_stmt_length = 1 << 20
            await cur.execute("DROP TABLE IF EXISTS b21")
            await cur.execute("CREATE TABLE b21 (id INT PRIMARY KEY, v LONGTEXT)")
            rows = [(i, "x" * 5000) for i in range(20000)]
            task = asyncio.ensure_future(
                cur.executemany("INSERT INTO b21 VALUES (%s, %s)", rows))
            await asyncio.sleep(0.2)
            task.cancel()
            t0 = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await task
            waited = time.monotonic() - t0
            check = conn.cursor()
            await check.execute("SELECT COUNT(*) FROM b21")
            (stored,), = await check.fetchall()
            return waited, stored
        finally:
            conn.close()

    waited, stored = asyncio.run(main())
    assert 0 < stored < 20000 and waited < 1.0, (waited, stored)


# --------------------------------------------------------------------------------- D12

# ------------------------------------------------- outside issue 21 (found on the way)

@pytest.mark.parametrize("typ,value", [(int, 5), (float, 0.25), (bool, True),
                                       (type(None), None)])
def test_d9_conv_entries_for_int_float_bool_none_are_not_consulted(conn_kwargs, typ, value):
    """Breaker D9 (pre-existing, not issue 21's code): mysqlc/converters.py says a conv=
    entry that differs from the default "is passed to the core as a one-argument
    encoder and is consulted first", and mysqlclient uses conv[int] / conv[float] /
    conv[bool] / conv[NoneType]; mysqlc ignores them (the core's exact-type fast paths
    come first): SELECT %s of 5 with conv[int] = lambda o, d: "'ENC'" gives 5, not
    'ENC'.  (Decimal, datetime, timedelta, list encoders are honoured.)  Listed in
    docs/compat.md "Parameter types"; this test holds that documented behaviour."""
    from mysqlc.converters import conversions
    conv = dict(conversions)
    conv[typ] = lambda obj, mapping: "'ENC'"
    c = mysqlc.connect(conv=conv, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT %s", (value,))
        assert cur.fetchall() == ((value,),)
    finally:
        c.close()


def test_d10_timedelta_literal(conn):
    """Breaker D10 (pre-existing, not listed in docs/compat.md): mysqlclient 2.3 writes
    timedelta(days=1, hours=6) as '1 6:0:0' (mysqlc.times.format_TIMEDELTA does too),
    mysqlc's execute writes '30:00:00': the same TIME value, but a different string in
    a character column (and the bulk path writes a third form, '30:00:00' / '01:00:00',
    see D3; it is the text literal's since D3's fix).  Listed in docs/compat.md
    "Parameter types"; this test holds that documented behaviour."""
    cur = conn.cursor()
    assert cur.mogrify("SELECT %s", (datetime.timedelta(days=1, hours=6),)) == \
        "SELECT '30:00:00'"
