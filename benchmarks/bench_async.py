#!/usr/bin/env python3
"""asyncio benchmark (issue 15): ``mysqlc.aio`` against asyncmy, aiomysql and
mysql-connector-python's ``mysql.connector.aio``, with mysqlc's sync API as a reference,
on the default event loop and on uvloop.

Method (the conventions of benchmarks/bench.py, whose helpers this script imports)
------------------------------------------------------------------------------------
One server is started by this (parent) process with ``mysqlc.server.get_server()`` (or an
existing one is used: ``--dsn`` or MYSQLC_TEST_DSN); the parent fills bench.py's tables
(``t_int``, ``t_mixed``, ``t_dt``: ``bench.py --setup``, reused when already there) and
runs every (driver, scenario, loop) triple in its own worker process
(``bench_async.py --worker DRIVER SCENARIO LOOP``), so one driver's imports, heap and
garbage never affect another's figures.  A worker makes its connections (and pool) before
the timed section, does one warm-up run, then ``--repeat`` timed runs (default 3), and
reports for each run the wall time (time.perf_counter), the worker's own CPU time
(time.process_time: user + sys of the client process, all its threads) and the server's
CPU time (utime + stime from /proc/PID/stat) over the same section; the pooled scenarios
also report each query's latency.  The sync reference (``mysqlc-sync``) runs the same
statements with blocking calls, once (no event loop to vary): sequentially on one
connection where the async drivers run them concurrently.

Scenarios (asyncmy's benchmark shapes, benchmark/ in its repository: a 6-column
executemany INSERT and primary-key point selects; plus a large result of mixed rows and
concurrent queries, and bench.py's 200k-row integer and DATETIME scans):

* ``mixed_100k``, ``int10_200k``, ``datetime_200k``: bench.py's scans of the same names
  (``SELECT * FROM t_mixed WHERE id <= 100000``, ``SELECT * FROM t_int``,
  ``SELECT * FROM t_dt``): one cursor, ``await cur.execute(sql)``, ``await
  cur.fetchall()``.
* ``concurrent50``: 50 connections opened beforehand; 10 rounds of ``asyncio.gather`` of
  50 queries, one per connection, each ``SELECT * FROM t_mixed WHERE id BETWEEN a AND b``
  of 200 rows (500 queries, 100,000 rows per run).
* ``pooled5``, ``pooled10``, ``pooled20``: 2,000 primary-key lookups
  (``SELECT * FROM t_int WHERE id = %s``, bench.py's point query) by 50 client tasks
  sharing the driver's own pool of 5 / 10 / 20 connections: each task loops ``async with
  pool.acquire() as conn: async with conn.cursor() as cur: execute; fetchall``.  Latency
  = from asking the pool for a connection to giving it back (what a request handler
  sees, waiting for a free connection included); the per-run p50/p95/p99 are reported
  (median over runs).  A pooled worker does 5x ``--repeat`` timed runs (15 by default):
  one is short, and its wall time and tail latency vary more than a scan's.
* ``insert_10k``: ``await cur.executemany(INSERT ..., rows)`` of 10,000 rows of asyncmy's
  shape (DECIMAL(10,2), DATE, DATETIME, FLOAT, VARCHAR(200), TINYINT; auto-increment id,
  an index on the string) + ``commit()``; the table is truncated before every run
  (untimed).

Pools: mysqlc.aio ``create_pool`` (when mysqlc.aio has one, else an asyncio.Queue of
connections, named in the report), ``asyncmy.create_pool``, ``aiomysql.create_pool``
(minsize = maxsize = N, made and filled before the timed section) and
``mysql.connector.aio.MySQLConnectionPool(pool_size=N, pool_reset_session=False)``.  The
latter raises PoolError when it has no free connection instead of waiting, so an
asyncio.Semaphore(N) in front of ``get_connection()`` makes callers wait as the other
pools do; it pings every connection it hands out (its ``is_connected()``), which is its
own cost and is measured.  Its reset of the session on release (COM_RESET_CONNECTION,
on by default) is turned off, since the other pools do not reset.

Sessions: utf8mb4, TLS off (checked in the session: ``Ssl_cipher`` empty), autocommit
off for the scans and the insert (as bench.py), on for the concurrent and pooled
scenarios (as asyncmy's benchmark and as pools are used; the pools would otherwise
roll back on every release).

Correctness guard (bench.py's): the warm-up run's rows are hashed (SHA-1 over
``repr(tuple(row))``) and compared across drivers; the insert reads back COUNT and a CRC
of every row after each run; the value most drivers agree on is taken as right and a
driver that differs is marked MISMATCH.

Targets (issue 15), evaluated and printed at the end: scan client CPU <= 0.9x asyncmy's
and <= 1.1x mysqlc's sync path, wall <= 1.1x the sync path; pooled point queries >= 1.3x
asyncmy's queries/s (client CPU per query: aim at 0.5x asyncmy's); batch insert >= 2x the
fastest async peer's rows/s.  Each on both loops.

Usage::

    python benchmarks/bench_async.py                       # everything, about 8 minutes
    python benchmarks/bench_async.py --quick               # 10x smaller, 3 timed runs
    python benchmarks/bench_async.py --drivers mysqlc-aio,asyncmy --scenarios pooled10 \\
        --loop uvloop --repeat 5
    python benchmarks/bench_async.py --json benchmarks/out/async.json \\
        --chart benchmarks/results_async.png --results benchmarks/RESULTS.md
    python benchmarks/bench_async.py --profile /tmp/prof --drivers mysqlc-aio   # cProfile
    python benchmarks/bench_async.py --dsn mysql://user:pw@127.0.0.1:3306/test

``--profile DIR`` adds one profiled run (cProfile, not counted in the figures) after the
timed runs of every mysqlc-aio / mysqlc-sync worker, saves DIR/SCENARIO.DRIVER.LOOP.pstats
and prints its top functions.  The exit status is 1 when a driver failed or returned
different rows, 2 when nothing could be run.
"""

import argparse
import asyncio
import datetime
import decimal
import gc
import hashlib
import importlib
import json
import os
import platform
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench  # noqa: E402  (benchmarks/bench.py: server, tables, digests, run_child, ...)
import _report  # noqa: E402  (benchmarks/_report.py: markdown sections)
from _proc import server_cpu_seconds  # noqa: E402

DRIVERS = ("mysqlc-aio", "asyncmy", "aiomysql", "connector-aio", "mysqlc-sync")
DRIVER_TEXT = {"mysqlc-aio": "mysqlc.aio", "asyncmy": "asyncmy", "aiomysql": "aiomysql",
               "connector-aio": "mysql.connector.aio (mysql-connector-python, pure Python)",
               "mysqlc-sync": "mysqlc (sync API, reference)"}
DRIVER_MODULE = {"mysqlc-aio": "mysqlc.aio", "asyncmy": "asyncmy", "aiomysql": "aiomysql",
                 "connector-aio": "mysql.connector.aio", "mysqlc-sync": "mysqlc"}
DRIVER_DIST = {"mysqlc-aio": "mysqlc", "asyncmy": "asyncmy", "aiomysql": "aiomysql",
               "connector-aio": "mysql-connector-python", "mysqlc-sync": "mysqlc"}
ASYNC_PEERS = ("asyncmy", "aiomysql", "connector-aio")
SYNC = "mysqlc-sync"
LOOPS = ("asyncio", "uvloop")
SYNC_LOOP = "-"  # the sync reference runs once, without an event loop to vary

CLIENT_TASKS = 50      # client tasks of the pooled scenarios
CONCURRENT = 50        # connections of concurrent50
INSERT_TABLE = "t_amy"
INSERT_CREATE = (
    "CREATE TABLE IF NOT EXISTS t_amy (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
    "`decimal` DECIMAL(10,2) NULL, `date` DATE NULL, `datetime` DATETIME NULL, "
    "`float` FLOAT NULL, `string` VARCHAR(200) NULL, `tinyint` TINYINT NULL, "
    "KEY t_amy_string (`string`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")
INSERT_SQL = ("INSERT INTO t_amy (`decimal`, `date`, `datetime`, `float`, `string`, "
              "`tinyint`) VALUES (%s,%s,%s,%s,%s,%s)")
INSERT_CHECK = ("SELECT COUNT(*), SUM(id), SUM(CRC32(CONCAT_WS('|', id, `decimal`, `date`, "
                "`datetime`, `float`, `string`, `tinyint`))) FROM t_amy")
CONCURRENT_SQL = "SELECT * FROM t_mixed WHERE id BETWEEN %s AND %s"
WORKER_TIMEOUT = 600
MARK_BEGIN = "<!-- bench_async.py --results: generated from here -->"
MARK_END = "<!-- bench_async.py --results: generated up to here -->"


# --------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------

class Scenario:
    """One timed workload.  kind: ``scan`` (bench.py's scenario ``base``), ``concurrent``
    (rounds of gather over ``conns`` connections), ``pooled`` (``queries`` point lookups
    through a pool of ``pool`` connections), ``insert`` (executemany of ``rows``).
    Sizes are (full, --quick) pairs."""

    def __init__(self, name, kind, description, table, base=None, rows=(0, 0),
                 queries=(0, 0), pool=0, rounds=(1, 1), autocommit=False, runs_factor=1,
                 unbuffered=False):
        self.name, self.kind, self.description, self.table = name, kind, description, table
        # a scan read with ``async for row in cursor`` from an unbuffered cursor
        self.unbuffered = unbuffered
        self.base, self.rows, self.queries, self.pool = base, rows, queries, pool
        self.rounds, self.autocommit = rounds, autocommit
        # timed runs = --repeat x runs_factor: a pooled run is short (~50-300 ms) and its
        # wall time and tail latency vary from run to run more than a scan's
        self.runs_factor = runs_factor

    @property
    def per_query(self):
        return self.kind in ("concurrent", "pooled")

    def size(self, quick):
        """Rows (scan, insert) or queries (concurrent, pooled) per timed run."""
        if self.kind == "scan":
            return bench.SCENARIO[self.base].size(quick)
        if self.kind == "insert":
            return self.rows[quick]
        if self.kind == "concurrent":
            return CONCURRENT * self.rounds[quick]
        return self.queries[quick]

    def total_rows(self, quick):
        if self.kind == "concurrent":
            return self.size(quick) * self.rows[quick]
        return self.size(quick) if self.kind != "pooled" else self.queries[quick]

    def sql(self, quick):
        return bench.SCENARIO[self.base].sql(quick) if self.kind == "scan" else None


SCENARIO_LIST = [
    Scenario("mixed_100k", "scan", "SELECT * FROM t_mixed WHERE id <= N, fetchall(): int, "
             "bigint, varchar(64), double, decimal(12,2), datetime, date, text NULL",
             "t_mixed", base="mixed_100k"),
    Scenario("int10_200k", "scan", "SELECT * FROM t_int, fetchall(): 10 INT/BIGINT columns",
             "t_int", base="int10_200k"),
    Scenario("int10_200k_ss", "scan", "SELECT * FROM t_int on an unbuffered cursor, "
             "async for row in cursor (connector-aio: its default, unbuffered cursor, "
             "fetchone() until None)", "t_int", base="int10_200k", unbuffered=True),
    Scenario("datetime_200k", "scan", "SELECT * FROM t_dt, fetchall(): DATETIME(6), "
             "TIMESTAMP, DATE", "t_dt", base="datetime_200k"),
    Scenario("concurrent50", "concurrent", "rounds of asyncio.gather of 50 queries over 50 "
             "connections, each SELECT * FROM t_mixed WHERE id BETWEEN a AND b (200 rows; "
             "20 with --quick)", "t_mixed", rows=(200, 20), rounds=(10, 2), autocommit=True),
]
for _n in (5, 10, 20):
    SCENARIO_LIST.append(Scenario(
        "pooled%d" % _n, "pooled", "2,000 point lookups SELECT * FROM t_int WHERE id = %%s "
        "(200 with --quick) by %d tasks over a pool of %d connections" % (CLIENT_TASKS, _n),
        "t_int", queries=(2000, 200), pool=_n, autocommit=True, runs_factor=5))
SCENARIO_LIST.append(Scenario(
    "insert_10k", "insert", "executemany(INSERT INTO t_amy ... 6 columns: decimal, date, "
    "datetime, float, varchar(200), tinyint) of 10,000 rows (1,000 with --quick) + commit",
    INSERT_TABLE, rows=(10000, 1000)))
SCENARIO = {s.name: s for s in SCENARIO_LIST}
SCAN_SCENARIOS = tuple(s.name for s in SCENARIO_LIST if s.kind == "scan")
POOLED_SCENARIOS = tuple(s.name for s in SCENARIO_LIST if s.kind == "pooled")


def insert_rows(n):
    """``n`` rows of asyncmy's benchmark shape, varied (deterministic) values; floats are
    exact in single precision, so FLOAT stores what was sent."""
    day = datetime.date(2020, 1, 1)
    moment = datetime.datetime(2020, 7, 16, 22, 49, 54)
    names = ("asyncmy %d", "caf\u00e9 %d", "it's a \\ %d", "\u041f\u0440\u0438\u0432\u0435\u0442 %d")
    rows = []
    for i in range(1, n + 1):
        rows.append((decimal.Decimal("%d.%02d" % ((i * 7919) % 9999999 - 5000000, i % 100)),
                     day + datetime.timedelta(days=i % 3650),
                     moment + datetime.timedelta(seconds=i * 37),
                     ((i * 31) % 65536) / 4.0 - 8192.0,
                     names[i % 4] % i, i % 256 - 128))
    return rows


def point_keys(n, table_rows):
    return [(i * 7919) % table_rows + 1 for i in range(n)]


def concurrent_ranges(queries, rows, table_rows):
    out = []
    for i in range(queries):
        a = (i * 7919) % (table_rows - rows) + 1
        out.append((a, a + rows - 1))
    return out


# --------------------------------------------------------------------------------------
# Worker side: one adapter per driver, each written the way the driver is used
# --------------------------------------------------------------------------------------

class QueuePool:
    """A minimal pool: an asyncio.Queue of connections made beforehand (for a driver
    without a pool of its own).  ``acquire()`` is an async context manager."""

    def __init__(self, conns):
        self.conns = conns
        self.queue = asyncio.Queue()
        for c in conns:
            self.queue.put_nowait(c)

    def acquire(self):
        return _QueueAcquire(self.queue)


class _QueueAcquire:
    def __init__(self, queue):
        self.queue, self.conn = queue, None

    async def __aenter__(self):
        self.conn = await self.queue.get()
        return self.conn

    async def __aexit__(self, *exc):
        self.queue.put_nowait(self.conn)
        return False


class AiomysqlStyle:
    """aiomysql's API, which asyncmy and mysqlc.aio follow: ``await connect(...)``,
    ``conn.cursor()`` a plain call, awaitable execute / fetchall / executemany / commit,
    ``await create_pool(minsize, maxsize, ...)``, ``async with pool.acquire()``."""

    db_keyword = "db"
    pool_kind = None

    def __init__(self, mod, connect_kwargs):
        self.mod = mod
        kw = dict(connect_kwargs)
        if "database" in kw:
            kw[self.db_keyword] = kw.pop("database")
        self.kw = dict(kw, charset="utf8mb4", **self.tls_off())

    def tls_off(self):
        return {}

    async def connect(self, autocommit):
        return await self.mod.connect(autocommit=autocommit, **self.kw)

    def cursor(self, conn):
        return conn.cursor()

    async def close(self, conn):
        await conn.ensure_closed()

    async def query(self, cur, sql, args=None):
        await cur.execute(sql, args)
        return await cur.fetchall()

    def ss_class(self):
        return self.mod.SSCursor

    async def stream(self, conn, sql):
        """``async for`` over an unbuffered cursor: the rows, in a list."""
        cur = conn.cursor(self.ss_class())
        if not hasattr(cur, "execute"):   # aiomysql: a context manager to await
            cur = await cur
        await cur.execute(sql)
        rows = [row async for row in cur]
        await cur.close()
        return rows

    async def executemany(self, conn, cur, sql, rows):
        await cur.executemany(sql, rows)
        await conn.commit()

    async def rollback(self, conn):
        await conn.rollback()

    async def create_pool(self, n):
        self.pool_kind = "%s.create_pool(minsize=%d, maxsize=%d)" % (
            DRIVER_MODULE[self.name], n, n)
        return await self.mod.create_pool(minsize=n, maxsize=n, autocommit=True, **self.kw)

    async def close_pool(self, pool):
        pool.close()
        await pool.wait_closed()

    async def pooled_query(self, pool, sql, args):
        async with pool.acquire() as conn:
            async with conn.cursor() as cur:
                await cur.execute(sql, args)
                return await cur.fetchall()


class AsyncmyDriver(AiomysqlStyle):
    name = "asyncmy"
    db_keyword = "database"

    def ss_class(self):
        import asyncmy.cursors
        return asyncmy.cursors.SSCursor


class AiomysqlDriver(AiomysqlStyle):
    name = "aiomysql"


class MysqlcAioDriver(AiomysqlStyle):
    name = "mysqlc-aio"
    db_keyword = "database"

    def tls_off(self):
        return bench.transport_kwargs("mysqlc", "plain", None)

    async def create_pool(self, n):
        if hasattr(self.mod, "create_pool"):
            return await super().create_pool(n)
        self.pool_kind = ("asyncio.Queue of %d connections (mysqlc.aio has no create_pool "
                          "yet)" % n)
        return QueuePool([await self.connect(True) for _ in range(n)])

    async def close_pool(self, pool):
        if isinstance(pool, QueuePool):
            for c in pool.conns:
                await self.close(c)
        else:
            await super().close_pool(pool)

    async def pooled_query(self, pool, sql, args):
        if not isinstance(pool, QueuePool):
            return await super().pooled_query(pool, sql, args)
        async with pool.acquire() as conn:
            cur = conn.cursor()
            await cur.execute(sql, args)
            rows = await cur.fetchall()
            await cur.close()
            return rows


class ConnectorAioDriver:
    """mysql.connector.aio: ``await connect(...)``, ``await conn.cursor()``; its pool
    (MySQLConnectionPool) does not wait for a free connection, so a semaphore does."""

    name = "connector-aio"

    def __init__(self, mod, connect_kwargs):
        self.mod = mod
        self.kw = dict(connect_kwargs, charset="utf8mb4",
                       **bench.transport_kwargs("mysqlconnector", "plain", None))
        self.pool_kind = None

    async def connect(self, autocommit):
        return await self.mod.connect(autocommit=autocommit, **self.kw)

    async def cursor(self, conn):
        return await conn.cursor()

    async def close(self, conn):
        await conn.close()

    async def query(self, cur, sql, args=None):
        await cur.execute(sql, args)
        return await cur.fetchall()

    async def stream(self, conn, sql):
        cur = await conn.cursor()   # (unbuffered by default)
        await cur.execute(sql)
        rows = []
        while (row := await cur.fetchone()) is not None:
            rows.append(row)
        await cur.close()
        return rows

    async def executemany(self, conn, cur, sql, rows):
        await cur.executemany(sql, rows)
        await conn.commit()

    async def rollback(self, conn):
        await conn.rollback()

    async def create_pool(self, n):
        from mysql.connector.aio.pooling import MySQLConnectionPool
        self.pool_kind = ("mysql.connector.aio.MySQLConnectionPool(pool_size=%d, "
                          "pool_reset_session=False) + asyncio.Semaphore(%d)" % (n, n))
        pool = MySQLConnectionPool(pool_size=n, pool_reset_session=False, autocommit=True,
                                   **self.kw)
        await pool.initialize_pool()
        return pool, asyncio.Semaphore(n)

    async def close_pool(self, pool):
        await pool[0].close_pool()

    async def pooled_query(self, pool, sql, args):
        pool, sem = pool
        async with sem:
            cnx = await pool.get_connection()
            try:
                cur = await cnx.cursor()
                await cur.execute(sql, args)
                rows = await cur.fetchall()
                await cur.close()
            finally:
                await cnx.close()  # back to the pool
        return rows


class MysqlcSyncDriver:
    """mysqlc's blocking API behind the same (async) interface; nothing awaits, so the
    concurrent and pooled scenarios run their queries one after another."""

    name = SYNC

    def __init__(self, mod, connect_kwargs):
        self.mod = mod
        self.kw = dict(connect_kwargs)
        self.pool_kind = None

    async def connect(self, autocommit):
        return self.mod.connect(autocommit=autocommit, charset="utf8mb4", **dict(
            self.kw, **bench.transport_kwargs("mysqlc", "plain", None)))

    def cursor(self, conn):
        return conn.cursor()

    async def close(self, conn):
        conn.close()

    async def query(self, cur, sql, args=None):
        cur.execute(sql, args)
        return cur.fetchall()

    async def stream(self, conn, sql):
        cur = conn.cursor(self.mod.cursors.SSCursor)
        cur.execute(sql)
        rows = list(cur)
        cur.close()
        return rows

    async def executemany(self, conn, cur, sql, rows):
        cur.executemany(sql, rows)
        conn.commit()

    async def rollback(self, conn):
        conn.rollback()

    async def create_pool(self, n):
        self.pool_kind = "sequential on one connection (blocking calls)"
        conn = await self.connect(True)
        return conn, conn.cursor()

    async def close_pool(self, pool):
        pool[1].close()
        pool[0].close()

    async def pooled_query(self, pool, sql, args):
        cur = pool[1]
        cur.execute(sql, args)
        return cur.fetchall()


ADAPTERS = {"mysqlc-aio": MysqlcAioDriver, "asyncmy": AsyncmyDriver,
            "aiomysql": AiomysqlDriver, "connector-aio": ConnectorAioDriver,
            "mysqlc-sync": MysqlcSyncDriver}


def import_driver(driver):
    """The driver's module; mysqlc (and mysqlc.aio) from this checkout first."""
    if driver.startswith("mysqlc"):
        if REPO not in sys.path[:1]:
            sys.path.insert(0, REPO)
    mod = importlib.import_module(DRIVER_MODULE[driver])
    where = os.path.abspath(getattr(mod, "__file__", "") or "")
    if driver.startswith("mysqlc") and not where.startswith(REPO + os.sep):
        # An editable install's finder can resolve a subpackage this checkout lacks to
        # another tree, which would mix two versions of mysqlc in one process.
        raise ImportError("%s is not in this checkout (%s) but at %s"
                          % (DRIVER_MODULE[driver], REPO, where))
    return mod


def driver_version(driver):
    from importlib import metadata
    try:
        version = metadata.version(DRIVER_DIST[driver])
    except Exception:
        version = "unknown"
    if driver.startswith("mysqlc"):
        mod = sys.modules.get("mysqlc")
        version = getattr(mod, "__version__", version)
    return version


def percentile(sorted_xs, q):
    """Nearest-rank percentile (q in 0..100) of an ascending list."""
    if not sorted_xs:
        return None
    k = max(0, min(len(sorted_xs) - 1, int(round(q / 100.0 * len(sorted_xs) + 0.5)) - 1))
    return sorted_xs[k]


def latency_summary(latencies):
    lat = sorted(latencies)
    return {"p50_s": percentile(lat, 50), "p95_s": percentile(lat, 95),
            "p99_s": percentile(lat, 99), "max_s": lat[-1] if lat else None}


async def worker_async(driver, scenario, spec, result):
    sc = SCENARIO[scenario]
    quick = bool(spec.get("quick"))
    mod = import_driver(driver)
    result["version"] = driver_version(driver)
    result["module_file"] = getattr(mod, "__file__", None)
    drv = ADAPTERS[driver](mod, spec["connect"])
    pid = spec.get("server_pid")
    n = sc.size(quick)

    # The session check, on a connection of the scenario's kind.
    conn = await drv.connect(sc.autocommit)
    cur = await maybe_await(drv.cursor(conn))
    session = await drv.query(cur, "SELECT @@autocommit, @@character_set_client, "
                                   "@@character_set_results, @@character_set_connection")
    result["session"] = [str(x) for x in session[0]]
    seen = {str(k): str(v) for k, v in await drv.query(
        cur, "SHOW SESSION STATUS WHERE Variable_name IN "
             "('Ssl_version', 'Ssl_cipher', 'Compression')")}
    result["transport_session"] = seen
    result["transport_label"] = bench.transport_label(seen)
    result["transport_wrong"] = bench.check_transport("plain", seen)
    result["connection_class"] = type(conn).__module__ + "." + type(conn).__name__
    if not sc.autocommit:
        await drv.rollback(conn)

    prepare = None
    cleanup = []
    chunks = result.setdefault("chunk_digests", [])

    def check_rows(rows):
        h, count = bench.digest_rows(rows, chunks)
        return (count, h.hexdigest()[:16], bench.short(rows[0] if count else None),
                bench.short(rows[-1] if count else None))

    check = check_rows
    if sc.kind == "scan":
        sql = sc.sql(quick)

        async def prepare():
            # release the previous result outside the timed section (as bench.py)
            await drv.query(cur, "SELECT 1")

        if sc.unbuffered:
            async def body():
                return await drv.stream(conn, sql)
        else:
            async def body():
                return await drv.query(cur, sql)

        count_of = len

    elif sc.kind == "concurrent":
        conns = [conn] + [await drv.connect(True) for _ in range(CONCURRENT - 1)]
        curs = [cur] + [await maybe_await(drv.cursor(c)) for c in conns[1:]]
        cleanup.extend(conns[1:])
        per = sc.rows[quick]
        ranges = concurrent_ranges(n, per, bench.TABLE_ROWS[sc.table][quick])
        rounds = sc.rounds[quick]

        async def body():
            rows = []
            for r in range(rounds):
                batch = ranges[r * CONCURRENT:(r + 1) * CONCURRENT]
                for part in await asyncio.gather(*(drv.query(c, CONCURRENT_SQL, ab)
                                                   for c, ab in zip(curs, batch))):
                    rows.extend(part)
            return rows

        count_of = len
        result["rows_per_query"] = per

    elif sc.kind == "pooled":
        pool = await drv.create_pool(sc.pool)
        keys = point_keys(n, bench.TABLE_ROWS[sc.table][quick])
        tasks = 1 if driver == SYNC else CLIENT_TASKS
        latencies = []
        perf = time.perf_counter

        async def client(slot, out):
            for i in range(slot, n, tasks):
                t0 = perf()
                out[i] = await drv.pooled_query(pool, bench.POINT_SQL, (keys[i],))
                latencies.append(perf() - t0)

        async def body():
            del latencies[:]
            out = [None] * n
            await asyncio.gather(*(client(s, out) for s in range(tasks)))
            return [row for rows in out for row in rows]

        count_of = len
        result["pool_kind"] = drv.pool_kind
        result["client_tasks"] = tasks

    else:  # insert
        rows_in = insert_rows(n)
        await run_statement(drv, conn, cur, INSERT_CREATE)

        async def prepare():
            await run_statement(drv, conn, cur, "TRUNCATE TABLE t_amy")

        async def body():
            await drv.executemany(conn, cur, INSERT_SQL, rows_in)
            return None

        async def check_insert():
            agg = (await drv.query(cur, INSERT_CHECK))[0]
            first = (await drv.query(cur, "SELECT * FROM t_amy ORDER BY id LIMIT 1"))[0]
            last = (await drv.query(cur, "SELECT * FROM t_amy ORDER BY id DESC LIMIT 1"))[0]
            await drv.rollback(conn)
            digest = hashlib.sha1(repr(tuple(str(x) for x in agg)).encode()).hexdigest()[:16]
            return int(agg[0]), digest, bench.short(first), bench.short(last)

        count_of = None

    async def one_run():
        if prepare:
            await prepare()
        gc.collect()
        s0 = server_cpu_seconds(pid)
        c0 = time.process_time()
        t0 = time.perf_counter()
        out = await body()
        t1 = time.perf_counter()
        c1 = time.process_time()
        s1 = server_cpu_seconds(pid)
        run = {"wall_s": t1 - t0, "cpu_s": c1 - c0,
               "server_cpu_s": (s1 - s0) if s0 is not None and s1 is not None else None}
        if sc.kind == "pooled":
            run.update(latency_summary(latencies))
        return run, out

    run, out = await one_run()
    if sc.kind == "insert":
        count, digest, first, last = await check_insert()
    else:
        count, digest, first, last = check(out)
    result["warmup"] = run
    result.update(count=count, digest=digest, first=first, last=last)
    del out
    for _ in range(spec["repeat"] * sc.runs_factor):
        run, out = await one_run()
        if sc.kind == "insert":
            c2, d2, _, _ = await check_insert()
        else:
            c2, d2 = count_of(out), digest  # full digest on the warm-up run only
        run["count"] = c2
        if c2 != count or d2 != digest:
            result["unstable"] = "a timed run returned %s rows / digest %s" % (c2, d2)
        del out
        result["runs"].append(run)
    if spec.get("profile_dir") and driver.startswith("mysqlc"):
        result["profile"] = await profile_run(one_run, spec["profile_dir"], scenario,
                                              driver, result["loop"])
    result["rss_mb_peak"] = bench.rss_mb()
    if sc.kind == "pooled":
        await drv.close_pool(pool)
    for c in cleanup:
        await drv.close(c)
    await drv.close(conn)


async def profile_run(one_run, directory, scenario, driver, loop):
    """One more run under cProfile (not counted); the stats file and the top lines."""
    import cProfile
    import io
    import pstats
    os.makedirs(directory, exist_ok=True)
    prof = cProfile.Profile()
    prof.enable()
    await one_run()
    prof.disable()
    path = os.path.join(directory, "%s.%s.%s.pstats" % (scenario, driver, loop))
    prof.dump_stats(path)
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("tottime").print_stats(18)
    return {"path": path, "top_tottime": buf.getvalue().splitlines()}


async def maybe_await(x):
    return (await x) if asyncio.iscoroutine(x) else x


async def run_statement(drv, conn, cur, sql):
    await drv.query(cur, sql)
    await drv.rollback(conn)


def worker_main(driver, scenario, loop, spec):
    result = {"driver": driver, "scenario": scenario, "loop": loop, "runs": [],
              "warmup": None}
    if driver == SYNC or loop == "asyncio":
        factory = None
    elif loop == "uvloop":
        import uvloop
        factory = uvloop.new_event_loop
    else:
        raise ValueError("unknown loop %r" % loop)
    with asyncio.Runner(loop_factory=factory) as runner:
        lp = runner.get_loop()
        result["loop_class"] = type(lp).__module__ + "." + type(lp).__name__
        result["rss_mb_connected"] = bench.rss_mb()
        runner.run(worker_async(driver, scenario, spec, result))
    return result


def probe_main(driver, loops):
    try:
        mod = import_driver(driver)
        if not hasattr(mod, "connect"):
            raise ImportError("%s has no connect()" % DRIVER_MODULE[driver])
        out = {"available": True, "version": driver_version(driver),
               "module_file": getattr(mod, "__file__", None)}
        if driver == "mysqlc-aio":
            out["has_create_pool"] = hasattr(mod, "create_pool")
        return out
    except Exception as exc:
        return {"available": False, "error": "%s: %s" % (type(exc).__name__, exc)}


def child_entry(argv):
    spec = json.loads(sys.stdin.read() or "{}")
    try:
        if argv[0] == "--worker":
            res = worker_main(argv[1], argv[2], argv[3], spec)
        else:
            res = probe_main(argv[1], spec.get("loops"))
        status = 0
    except Exception as exc:
        res = {"error": "%s: %s" % (type(exc).__name__, exc)}
        traceback.print_exc()
        status = 1
    with open(spec["result_path"], "w") as f:
        json.dump(res, f, default=str)
    return status


def run_child(args, spec, timeout=WORKER_TIMEOUT):
    return bench.run_child(args, spec, timeout=timeout, script=__file__)


# --------------------------------------------------------------------------------------
# Parent: report, targets, chart
# --------------------------------------------------------------------------------------

def label(driver, loop):
    return driver if loop == SYNC_LOOP else "%s@%s" % (driver, loop)


def fmt_ms(x, digits=1):
    return "-" if x is None else "%.*f" % (digits, x * 1000.0)


def summarize(res, sc, quick):
    s = bench.summarize(res, sc.size(quick))
    if sc.kind == "pooled":
        for k in ("p50_s", "p95_s", "p99_s", "max_s"):
            vals = [r[k] for r in res["runs"] if r.get(k) is not None]
            s[k] = statistics.median(vals) if vals else None
    if sc.kind == "concurrent":
        s["rows_per_second"] = sc.total_rows(quick) / s["wall_median_s"]
    return s


def report(doc):
    """Text report; fills every entry's 'summary' and 'check'."""
    quick, results = doc["quick"], doc["results"]
    out = []
    for scenario in doc["scenarios"]:
        sc = SCENARIO[scenario]
        n = sc.size(quick)
        unit = "queries/s" if sc.per_query else "rows/s"
        per = "µs/query" if sc.per_query else "µs/row"
        what = "%s %s" % (bench.fmt_int(n), "queries" if sc.per_query else "rows")
        if sc.kind == "concurrent":
            what += ", %s rows" % bench.fmt_int(sc.total_rows(quick))
        out += ["", "== %s: %s (%s per run) ==" % (scenario, sc.description, what)]
        entries = results[scenario]
        digests = {k: e["result"]["digest"] for k, e in entries.items() if e.get("result")}
        majority = bench.majority_digest(digests.values())
        rows, notes, wrong = [], [], False
        pooled = sc.kind == "pooled"
        for key, e in entries.items():
            if e.get("skipped"):
                notes.append("%s skipped: %s" % (key, e["skipped"]))
                continue
            if e.get("error"):
                rows.append([key] + ["-"] * (9 if pooled else 7) + ["ERROR"])
                notes.append("%s failed: %s" % (key, e["error"]))
                wrong = True
                continue
            res = e["result"]
            s = e["summary"] = summarize(res, sc, quick)
            want_ac = "1" if sc.autocommit else "0"
            check = "ok"
            if res["count"] != (sc.total_rows(quick) if sc.kind != "pooled" else n):
                check = "WRONG COUNT %d" % res["count"]
            elif len(set(digests.values())) > 1 and res["digest"] != majority:
                check = "MISMATCH"
            elif res.get("unstable"):
                check = "UNSTABLE"
            elif res.get("transport_wrong"):
                check = "TRANSPORT"
                notes.append("%s session: %s" % (key, res["transport_wrong"]))
            elif res["session"][0] != want_ac or set(res["session"][1:]) != {"utf8mb4"}:
                check = "SESSION"
                notes.append("%s session: autocommit, charset client/results/connection = "
                             "%s" % (key, ", ".join(res["session"])))
            e["check"] = check
            wrong = wrong or check != "ok"
            cells = [key, bench.fmt_int(s["per_second"]),
                     "%s / %s" % (fmt_ms(s["wall_best_s"]), fmt_ms(s["wall_median_s"])),
                     fmt_ms(s["cpu_median_s"]), "%.3f" % s["cpu_us_per_row"],
                     fmt_ms(s["server_cpu_median_s"])]
            if pooled:
                cells += ["%s / %s / %s" % (fmt_ms(s["p50_s"], 2), fmt_ms(s["p95_s"], 2),
                                            fmt_ms(s["p99_s"], 2))]
            if sc.kind == "concurrent":
                cells += [bench.fmt_int(s["rows_per_second"])]
            cells += ["%.0f" % s["rss_mb_peak"] if s.get("rss_mb_peak") else "-", check]
            if pooled and res.get("pool_kind"):
                notes.append("%s pool: %s" % (key, res["pool_kind"]))
            rows.append(cells)
        headers = ["driver@loop", unit, "wall ms best/med", "client CPU ms", "CPU " + per,
                   "server CPU ms"]
        if pooled:
            headers += ["latency ms p50/p95/p99"]
        if sc.kind == "concurrent":
            headers += ["rows/s"]
        headers += ["peak RSS MB", "check"]
        if rows:
            bench.print_table(headers, rows, out)
        out.extend(sorted(set(notes), key=notes.index))
        out.extend(ratio_lines(doc, scenario))
        if wrong:
            out.append("!! results differ or failed:")
            for key, e in entries.items():
                res = e.get("result")
                if res:
                    out.append("   %-24s count=%s digest=%s first=%s" % (
                        key, res["count"], res["digest"], res["first"]))
    return out


def summ(doc, scenario, driver, loop):
    e = doc["results"].get(scenario, {}).get(label(driver, loop)) or {}
    return e.get("summary") if e.get("check") == "ok" else None


def ratio_lines(doc, scenario):
    """mysqlc-aio's client CPU and wall time over each other driver's, per loop."""
    out = []
    for loop in doc["loops"]:
        me = summ(doc, scenario, "mysqlc-aio", loop)
        if not me:
            continue
        cpu, wall = [], []
        others = [(d, loop) for d in ASYNC_PEERS] + [(SYNC, SYNC_LOOP)]
        for d, lp in others:
            o = summ(doc, scenario, d, lp)
            if o:
                cpu.append("%.2f× %s" % (me["cpu_median_s"] / o["cpu_median_s"], d))
                wall.append("%.2f× %s" % (me["wall_median_s"] / o["wall_median_s"], d))
        if cpu:
            out.append("mysqlc-aio@%s client CPU = %s" % (loop, ", ".join(cpu)))
            out.append("mysqlc-aio@%s wall time  = %s" % (loop, ", ".join(wall)))
    return out


def evaluate_targets(doc):
    """[{target, scenario, loop, measured, met}] for the issue's targets."""
    out = []

    def add(target, scenario, loop, measured, met):
        out.append({"target": target, "scenario": scenario, "loop": loop,
                    "measured": measured, "met": met})

    for loop in doc["loops"]:
        for scenario in doc["scenarios"]:
            sc = SCENARIO[scenario]
            me = summ(doc, scenario, "mysqlc-aio", loop)
            if not me:
                continue
            if sc.kind == "scan":
                amy = summ(doc, scenario, "asyncmy", loop)
                if amy:
                    r = me["cpu_median_s"] / amy["cpu_median_s"]
                    add("scan client CPU <= 0.9x asyncmy", scenario, loop,
                        "%s vs %s ms = %.2fx" % (fmt_ms(me["cpu_median_s"]),
                                                 fmt_ms(amy["cpu_median_s"]), r), r <= 0.9)
                sy = summ(doc, scenario, SYNC, SYNC_LOOP)
                if sy:
                    r = me["cpu_median_s"] / sy["cpu_median_s"]
                    add("scan client CPU <= 1.1x mysqlc sync", scenario, loop,
                        "%s vs %s ms = %.2fx" % (fmt_ms(me["cpu_median_s"]),
                                                 fmt_ms(sy["cpu_median_s"]), r), r <= 1.1)
                    r = me["wall_median_s"] / sy["wall_median_s"]
                    add("scan wall <= 1.1x mysqlc sync", scenario, loop,
                        "%s vs %s ms = %.2fx" % (fmt_ms(me["wall_median_s"]),
                                                 fmt_ms(sy["wall_median_s"]), r), r <= 1.1)
            elif sc.kind == "pooled":
                amy = summ(doc, scenario, "asyncmy", loop)
                if amy:
                    r = me["per_second"] / amy["per_second"]
                    add("pooled queries/s >= 1.3x asyncmy", scenario, loop,
                        "%s vs %s q/s = %.2fx" % (bench.fmt_int(me["per_second"]),
                                                  bench.fmt_int(amy["per_second"]), r),
                        r >= 1.3)
                    r = me["cpu_us_per_row"] / amy["cpu_us_per_row"]
                    add("(aim) pooled client CPU/query <= 0.5x asyncmy", scenario, loop,
                        "%.1f vs %.1f µs = %.2fx" % (me["cpu_us_per_row"],
                                                     amy["cpu_us_per_row"], r), r <= 0.5)
            elif sc.kind == "insert":
                peers = [(d, summ(doc, scenario, d, loop)) for d in ASYNC_PEERS]
                peers = [(d, s) for d, s in peers if s]
                if peers:
                    d, best = max(peers, key=lambda p: p[1]["per_second"])
                    r = me["per_second"] / best["per_second"]
                    add("insert rows/s >= 2x fastest async peer", scenario, loop,
                        "%s vs %s rows/s (%s) = %.2fx" % (
                            bench.fmt_int(me["per_second"]), bench.fmt_int(best["per_second"]),
                            d, r), r >= 2.0)
    return out


def target_lines(doc, markdown=False):
    rows = [[t["target"], t["scenario"], t["loop"], t["measured"],
             ("yes" if t["met"] else ("**no**" if markdown else "NO"))]
            for t in doc.get("targets") or []]
    if not rows:
        return []
    headers = ["target", "scenario", "loop", "measured (mysqlc-aio vs other)", "met"]
    if markdown:
        return _report.table(headers, rows, True)
    out = ["", "== targets (issue 15) =="]
    bench.print_table(headers, rows, out)
    return out


def summary_table(doc, markdown=False):
    """One row per scenario; one column per driver@loop: 'throughput · CPU ms' (median);
    pooled scenarios add p99 latency."""
    keys = [label(d, lp) for d in doc["drivers"]
            for lp in ([SYNC_LOOP] if d == SYNC else doc["loops"])]
    rows = []
    for scenario in doc["scenarios"]:
        sc = SCENARIO[scenario]
        cells = [scenario + (" (q/s)" if sc.per_query else " (rows/s)")]
        for key in keys:
            e = doc["results"][scenario].get(key) or {}
            s = e.get("summary")
            if e.get("skipped") or not e:
                cells.append("n/a")
            elif not s or e.get("error"):
                cells.append("ERROR")
            else:
                c = "%s · %s ms" % (bench.fmt_int(s["per_second"]), fmt_ms(s["cpu_median_s"]))
                if sc.kind == "pooled" and s.get("p99_s") is not None:
                    c += " · p99 %s ms" % fmt_ms(s["p99_s"], 1)
                if e.get("check") != "ok":
                    c += " " + e.get("check", "?")
                cells.append(c)
        rows.append(cells)
    headers = ["scenario"] + keys
    if markdown:
        return _report.table(headers, rows, True)
    out = ["", "== summary: throughput · client CPU ms per run (median) =="]
    bench.print_table(headers, rows, out)
    return out


def chart(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = [(d, lp) for d in doc["drivers"]
            for lp in ([SYNC_LOOP] if d == SYNC else doc["loops"])]
    panels = [("scan", "client CPU ms per scan (median); lower is better", "cpu_median_s", 1e3),
              ("concurrent+pooled", "queries/s (median wall); higher is better",
               "per_second", 1),
              ("pooled-cpu", "client CPU µs per query; lower is better", "cpu_us_per_row", 1),
              ("insert", "rows/s; higher is better", "per_second", 1)]
    groups = {"scan": [s for s in doc["scenarios"] if SCENARIO[s].kind == "scan"],
              "concurrent+pooled": [s for s in doc["scenarios"] if SCENARIO[s].per_query],
              "pooled-cpu": [s for s in doc["scenarios"] if SCENARIO[s].per_query],
              "insert": [s for s in doc["scenarios"] if SCENARIO[s].kind == "insert"]}
    panels = [p for p in panels if groups[p[0]]]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 5), squeeze=False)
    width = 0.8 / len(keys)
    for ax, (group, ylabel, field, scale) in zip(axes[0], panels):
        names = groups[group]
        for i, (d, lp) in enumerate(keys):
            xs, ys = [], []
            for k, s in enumerate(names):
                v = summ(doc, s, d, lp)
                if v:
                    xs.append(k + (i - (len(keys) - 1) / 2) * width)
                    ys.append(v[field] * scale)
            ax.bar(xs, ys, width, label=label(d, lp),
                   hatch="//" if lp == "uvloop" else None)
        if group != "insert":
            ax.set_yscale("log")
            ylabel += " (log)"
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(keys), fontsize=8)
    fig.suptitle("mysqlc.aio vs asyncio peers, %s (%s cores), %s" % (
        doc["machine"]["cpu"], doc["machine"]["cores"], doc["started"]), fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=80)
    plt.close(fig)


def generated_markdown(doc, chart_path=None, results_path=None):
    out = ["Generated by `%s` on %s (%.0f s; load average %s at the start, %s at the end; "
           "%s)." % (doc["command"], doc["started"], doc.get("total_seconds", 0),
                     " ".join("%.2f" % x for x in doc["machine"]["loadavg_start"]),
                     " ".join("%.2f" % x for x in doc["machine"].get("loadavg_end") or ()),
                     "quick sizes" if doc["quick"] else "full sizes"), "", "```"]
    out += doc["header"] + ["```", ""]
    if chart_path and results_path:
        rel = os.path.relpath(chart_path, os.path.dirname(os.path.abspath(results_path)))
        out += ["![client CPU of the scans, queries/s and CPU per query of the concurrent "
                "and pooled scenarios, insert rows/s, per driver and loop](%s)" % rel, ""]
    if doc.get("targets"):
        out += ["#### Targets (issue 15)", ""] + target_lines(doc, True) + [""]
    out += ["#### Throughput · client CPU ms per run (median of %d runs; %d for the pooled "
            "scenarios)" % (doc["repeat"], doc["repeat"] * 5), "",
            "`driver@loop`; `mysqlc-sync` is the blocking API (sequential where the others "
            "are concurrent). Pooled: p99 = 99th percentile of the request latency "
            "(waiting for a connection included).", ""]
    out += summary_table(doc, True) + [""]
    if doc.get("problems"):
        out += ["Problems in this run: " + "; ".join(doc["problems"]), ""]
    out += ["<details><summary>Full report (every scenario, every driver)</summary>", "",
            "```"] + doc["report"] + ["```", "", "</details>"]
    return "\n".join(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--worker"], ["--probe"]):
        return child_entry(argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--drivers", default=",".join(DRIVERS),
                   help="comma-separated, from %s (default: all)" % ",".join(DRIVERS))
    p.add_argument("--scenarios", default=",".join(SCENARIO),
                   help="comma-separated, from %s (default: all)" % ",".join(SCENARIO))
    p.add_argument("--loop", default="asyncio,uvloop",
                   help="event loops for the async drivers: asyncio, uvloop (default both)")
    p.add_argument("--repeat", type=int, default=3,
                   help="timed runs per worker after one warm-up run (default 3)")
    p.add_argument("--quick", action="store_true", help="10x smaller sizes (smoke run)")
    p.add_argument("--dsn", help="an existing server: mysql://user:pw@host:port/db; default "
                                 "a private server (mysqlc.server.get_server(), which "
                                 "honours MYSQLC_TEST_DSN)")
    p.add_argument("--unix", action="store_true", help="connect over the unix socket")
    p.add_argument("--json", metavar="PATH", help="write every measurement as JSON")
    p.add_argument("--chart", metavar="PNG", help="write a chart (matplotlib)")
    p.add_argument("--results", metavar="MD", help="rewrite this script's section of a "
                   "markdown file (benchmarks/RESULTS.md), between its two markers")
    p.add_argument("--profile", metavar="DIR", help="one extra cProfile'd run per mysqlc "
                   "worker (not counted); stats files in DIR")
    p.add_argument("--from-json", metavar="PATH", help="run nothing: write --chart / "
                   "--results from an earlier run's --json file")
    args = p.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            doc = json.load(f)
        if args.chart:
            chart(doc, args.chart)
            print("wrote %s" % args.chart)
        if args.results:
            _report.replace_section(args.results, MARK_BEGIN, MARK_END,
                                    generated_markdown(doc, args.chart, args.results))
            print("wrote %s" % args.results)
        return 0
    drivers = [d for d in (x.strip() for x in args.drivers.split(",")) if d]
    scenarios = [s for s in (x.strip() for x in args.scenarios.split(",")) if s]
    loops = [lp for lp in (x.strip() for x in args.loop.split(",")) if lp]
    for d in drivers:
        if d not in DRIVERS:
            p.error("unknown driver %r (choose from %s)" % (d, ", ".join(DRIVERS)))
    for s in scenarios:
        if s not in SCENARIO:
            p.error("unknown scenario %r (choose from %s)" % (s, ", ".join(SCENARIO)))
    for lp in loops:
        if lp not in LOOPS:
            p.error("unknown loop %r (choose from %s)" % (lp, ", ".join(LOOPS)))
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    t_start = time.perf_counter()
    print("mysqlc asyncio benchmark: %s; loops %s" % (", ".join(scenarios), ", ".join(loops)),
          flush=True)

    probes = {}
    for d in drivers:
        res, err = run_child(["--probe", d], {}, timeout=120)
        probes[d] = res if res else {"available": False, "error": err}
    if "uvloop" in loops:
        try:
            import uvloop
            uv_version = uvloop.__version__
        except ImportError as exc:
            print("uvloop not installed (%s): asyncio loop only" % exc, flush=True)
            loops = [lp for lp in loops if lp != "uvloop"]
            uv_version = None
    else:
        uv_version = None
    if not any(probes[d].get("available") for d in drivers) or not loops:
        print("nothing to run: " + "; ".join("%s: %s" % (d, probes[d].get("error"))
                                               for d in drivers), file=sys.stderr)
        return 2

    server_mod = bench.load_server_module()
    if args.dsn:
        server_ctx = server_mod.ExternalServer(args.dsn)
        server_kind = "external (--dsn)"
    else:
        server_ctx = server_mod.get_server(extra_args=bench.SERVER_ARGS)
        server_kind = None
    try:
        srv = server_ctx.__enter__()
    except Exception as exc:
        print("no server: %s" % exc, file=sys.stderr)
        return 2
    try:
        return run_all(args, srv, server_kind, probes, drivers, scenarios, loops, uv_version,
                       t_start)
    finally:
        server_ctx.__exit__(None, None, None)


def run_all(args, srv, server_kind, probes, drivers, scenarios, loops, uv_version, t_start):
    quick = bool(args.quick)
    if server_kind is None:
        server_kind = ("private (pid %s)" % srv.pid) if srv.pid else \
            "external (MYSQLC_TEST_DSN)"
    connect = srv.connect_kwargs(unix=args.unix)
    transport = ("unix socket %s" % connect["unix_socket"]) if args.unix else \
        "TCP %s:%s" % (connect["host"], connect["port"])
    tables = sorted(set(SCENARIO[s].table for s in scenarios) & set(bench.TABLE_ROWS))
    setup_info = None
    for d in ("pymysql", "mysqlclient", "mysqlc"):
        setup_info, err = bench.run_child(["--setup", d], {
            "connect": connect, "quick": quick, "tables": tables})
        if setup_info:
            break
        print("setup with %s failed: %s" % (d, err), file=sys.stderr)
    if not setup_info:
        print("could not create the benchmark tables", file=sys.stderr)
        return 2
    server_pid = srv.pid or bench.local_server_pid(
        setup_info.get("pid_file"), args.unix or bench.is_local_host(connect.get("host")))

    header = [
        "machine : %s, %d cores, %s %s" % (bench.cpu_model(), os.cpu_count() or 0,
                                            platform.system(), platform.release()),
        "python  : %s %s (%s)" % (platform.python_implementation(),
                                  platform.python_version(), sys.executable),
        "loops   : %s" % ", ".join(
            "asyncio (default selector loop)" if lp == "asyncio" else "uvloop %s" % uv_version
            for lp in loops),
    ]
    for d in drivers:
        pr = probes[d]
        if pr.get("available"):
            extra = ""
            if d == "mysqlc-aio" and not pr.get("has_create_pool"):
                extra = "; no create_pool: the pooled scenarios use an asyncio.Queue"
            header.append("driver  : %-13s %s (%s)%s" % (d, pr["version"], DRIVER_TEXT[d],
                                                        extra))
        else:
            header.append("driver  : %-13s skipped (%s)" % (d, pr.get("error")))
    header.append("server  : %s %s, %s, %s; server CPU %s" % (
        setup_info["server_version"], setup_info.get("version_comment") or "", server_kind,
        transport, ("from /proc/%d/stat" % server_pid) if server_pid else "not measured"))
    header.append("tables  : " + ", ".join(
        "%s %s rows%s" % (t, bench.fmt_int(i["rows"]), " (reused)" if i["reused"] else "")
        for t, i in setup_info["tables"].items()) + ", t_amy (insert target)")
    header.append("method  : 1 warm-up + %d timed run(s) (%d for the pooled scenarios) per "
                  "driver, scenario and loop, each in its own process; utf8mb4, TLS off"
                  % (args.repeat, args.repeat * 5))
    load_start = os.getloadavg()
    header.append("load    : %.2f %.2f %.2f (1/5/15 min) at the start" % load_start)
    print("\n".join(header), flush=True)

    results = {}
    for scenario in scenarios:
        results[scenario] = {}
        for loop in loops + [SYNC_LOOP]:
            for d in drivers:
                if (d == SYNC) != (loop == SYNC_LOOP):
                    continue
                key = label(d, loop)
                if not probes[d].get("available"):
                    results[scenario][key] = {"skipped": probes[d].get("error")}
                    continue
                spec = {"connect": connect, "quick": quick, "repeat": args.repeat,
                        "server_pid": server_pid, "profile_dir": args.profile}
                t0 = time.perf_counter()
                res, err = run_child(["--worker", d, scenario, loop], spec)
                took = time.perf_counter() - t0
                if res:
                    results[scenario][key] = {"result": res}
                    print("  %-14s %-24s %6.1f s" % (scenario, key, took), flush=True)
                else:
                    results[scenario][key] = {"error": err}
                    print("  %-14s %-24s FAILED: %s" % (scenario, key, err), flush=True)

    doc = {
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": " ".join(["python", "benchmarks/bench_async.py"] + list(
            sys.argv[1:] if args is not None else [])),
        "header": header, "python": platform.python_version(),
        "machine": {"cpu": bench.cpu_model(), "cores": os.cpu_count(),
                    "system": platform.platform(), "loadavg_start": load_start},
        "drivers": drivers, "probes": probes, "loops": loops, "scenarios": scenarios,
        "server": dict(setup_info, kind=server_kind, transport=transport, pid=server_pid),
        "repeat": args.repeat, "quick": quick,
        "sizes": {s: SCENARIO[s].size(quick) for s in scenarios},
        "descriptions": {s: SCENARIO[s].description for s in scenarios},
        "results": results,
    }
    lines = report(doc)
    doc["targets"] = evaluate_targets(doc)
    lines += summary_table(doc) + target_lines(doc)
    if args.profile:
        lines += profile_lines(doc)
    doc["report"] = lines
    print("\n".join(lines))
    total = time.perf_counter() - t_start
    print("\ntotal %.1f s" % total)
    problems = ["%s/%s: %s" % (s, k, e.get("error") and "error" or e.get("check"))
                for s in scenarios for k, e in results[s].items()
                if e.get("error") or e.get("check") not in (None, "ok")]
    doc.update(problems=problems, total_seconds=total,
               machine=dict(doc["machine"], loadavg_end=os.getloadavg()))
    if args.chart:
        chart(doc, args.chart)
        print("wrote %s" % args.chart)
    if args.results:
        _report.replace_section(args.results, MARK_BEGIN, MARK_END,
                                generated_markdown(doc, args.chart, args.results))
        print("wrote %s" % args.results)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1, default=str)
        print("wrote %s" % args.json)
    if problems:
        print("PROBLEMS: " + "; ".join(problems))
        return 1
    return 0


def profile_lines(doc):
    out = []
    for s in doc["scenarios"]:
        for key, e in doc["results"][s].items():
            prof = (e.get("result") or {}).get("profile")
            if prof:
                out += ["", "== profile %s %s (cProfile, one extra run; %s) ==" % (
                    s, key, prof["path"])] + [ln for ln in prof["top_tottime"] if ln.strip()]
    return out


if __name__ == "__main__":
    sys.exit(main())
