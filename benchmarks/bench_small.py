#!/usr/bin/env python3
"""Small-statement benchmark (issue 22): the client's cost of ONE statement -- SELECT 1,
a primary-key point SELECT, a one-row INSERT, a one-row UPDATE -- for mysqlc and
mysqlc.aio beside mysqlclient, PyMySQL, mysql-connector-python, asyncmy, aiomysql and
mysql.connector.aio, sequential on one connection and through each async driver's pool,
on the default asyncio loop and on uvloop, in one run.

Method
------
One server: a private ``mariadbd`` from ``mysqlc.server.get_server()`` (bench.py's
server options; ``--server-port`` fixes its TCP port), or an existing one (``--dsn``, or
MYSQLC_TEST_DSN).  The parent creates three 4-column tables (untimed, reused when
already there): ``t_small`` (10,000 rows, read by the point SELECT), ``t_small_upd``
(10,000 rows, the UPDATE's target) and ``t_small_ins`` (auto-increment id; the INSERT's
target, truncated before every timed run).  Sessions: utf8mb4, TLS off, autocommit ON
(every statement its own transaction, as a web request's statements usually are).  The
connection goes over the server's unix socket (``--tcp``: TCP to 127.0.0.1).

Every (driver, mode, loop) cell runs in its own worker process
(``bench_small.py --worker DRIVER MODE LOOP``), one worker per cell and repeat:
``--repeat`` rounds (default 3) each start every cell once, the driver order rotated by
one place per round and the statement order too, so that drift of the machine (this
kernel makes syscalls expensive and noisy) hits every driver alike.  In a worker, for
each statement in turn:

1. warm-up: ``--warmup`` statements (default 500), then 200 pings;
2. timed, sequential mode: N statements (``--n``, default 20,000) and ``--pings`` bare
   ``ping()`` calls (COM_PING on the same connection, the round trip's floor in this
   process; default N/4) in ``--blocks`` alternating blocks (default 10: 500 pings, 2,000
   statements, 500 pings, ...), so that both figures see the same drift of the machine;
3. timed, pooled modes: ``--pool-n`` statements (default 5,000) in one run, with half of
   the pings (default pool-n/4) just before it and half just after, on a connection of
   their own.

``gc.collect()`` runs before each timed section; the collector stays enabled.
Around each timed block: wall time (time.perf_counter), the worker's CPU time (user +
sys from resource.getrusage(RUSAGE_SELF): all its threads) and the server's CPU time
(utime + stime of the server's process from /proc/PID/stat, 10 ms ticks; local servers
only).  The statement is executed the way an application does with each driver: one
cursor reused, ``execute(sql, args)`` and, for the SELECTs, ``fetchall()``; async
drivers ``await`` both.

Modes: ``seq`` -- N statements one after another on one connection (every driver);
``poolK`` (``pool10``, ``pool50``) -- K concurrent tasks sharing the driver's own pool of
``--pool-size`` connections (default 10; with 50 tasks, callers wait for a free
connection), each statement ``async with pool.acquire() as conn: async with
conn.cursor() as cur: ...`` (mysqlc.aio, asyncmy, aiomysql ``create_pool(minsize=maxsize=
pool size)``; mysql.connector.aio ``MySQLConnectionPool(pool_reset_session=False)`` behind
an asyncio.Semaphore, as benchmarks/bench_async.py uses it: it pings the connection it
hands out); the latency of a statement runs from asking the pool to giving the
connection back.  Async drivers only; the ping is then measured on a separate connection
of the same driver in the same process.

Statements (``--statements``): ``select1`` ``SELECT 1``; ``point`` ``SELECT id, a, b, c
FROM t_small WHERE id = %s`` (INT, BIGINT, VARCHAR(32), DOUBLE; keys spread over the
table); ``insert`` ``INSERT INTO t_small_ins (a, b, c) VALUES (%s, %s, %s)``; ``update``
``UPDATE t_small_upd SET a = a + 1, c = %s WHERE id = %s``.  Checks (untimed): the
SELECTs' rows are compared with the values the table was filled with, the INSERT's
COUNT(*) and the UPDATE's SUM(a) grow by exactly N; a cell that fails shows ``check``.

Columns (per statement and cell; median over the repeats, best in parentheses)
------------------------------------------------------------------------------
* ``CPU µs/stmt``: the worker's user+sys CPU per statement.
* ``ping µs``: the worker's CPU per bare ``ping()`` of the same driver (median).
* ``above ping µs``: CPU per statement minus ping CPU per call, each repeat's own pair:
  what the driver spends beyond a round trip's floor.
* ``stmts/s``: N / wall time.
* ``p50 / p99 ms`` (pooled): latency percentiles of the statements of a run; ``max ms``
  its longest statement (median over the repeats).  Each task runs its share of the
  statements in turn, so a task kept waiting while others take the free connections
  ahead of it (a pool that does not serve waiters in order) waits once, long: fewer than
  1 % of the statements with 50 tasks, so p99 does not show it, the maximum does.
* ``server µs/stmt`` and ``server cores``: the server's CPU per statement, and its CPU
  over the wall time (how many of the machine's cores the server kept busy: near the
  core count, the server sets the ceiling of stmts/s, not the client).

The ceiling (pooled modes): the same statements from ``mariadb-slap`` (MariaDB's C load
client, libmariadb, one thread per connection; ``mysqlslap`` where that is the name),
``--pool-size`` connections, ``--ceiling-n`` statements (default ``--pool-n``, at least
20,000), once per round after the drivers' cells: how many statements/s this machine's server answers when the client costs almost
nothing.  Its statements are the drivers' with the parameters written in: the point SELECT
and the UPDATE take the row ``CONNECTION_ID() % 10000 + 1`` (a constant per statement: a
primary-key lookup; one row per connection, so the connections never wait for each
other's row locks), the INSERT fixed values.  The statements run are counted from the
server's ``Com_select`` / ``Com_insert`` / ``Com_update`` (the INSERT's and the UPDATE's
also from the table, as the drivers' checks do); stmts/s is that count over slap's own
"seconds to run all queries".  ``CPU µs/stmt`` is then slap's (its threads, connecting
included).  Leave it out with ``--no-ceiling``; it is skipped when no slap binary is found
or the server's CPU cannot be read (not a local server).

Targets (issue 22), computed from the run and printed MET / MISSED: sync above-ping CPU
mysqlc / mysqlclient <= 0.5 (seq); mysqlc.aio / asyncmy client CPU per statement <= 0.7
on each loop (seq); pooled statements/s mysqlc.aio / asyncmy >= 1.3 (each pooled mode and
loop; p99 and the server's cores shown beside).

Usage::

    python benchmarks/bench_small.py                      # everything, ~10 min on 2 idle cores
    python benchmarks/bench_small.py --json benchmarks/out/small.json \\
        --chart benchmarks/out/small.png
    python benchmarks/bench_small.py --drivers mysqlc,mysqlclient --modes seq \\
        --statements select1,point --repeat 5
    python benchmarks/bench_small.py --drivers mysqlc-aio,asyncmy --modes pool10,pool50 \\
        --loops uvloop
    python benchmarks/bench_small.py --dsn mysql://user:pw@127.0.0.1:3306/test --tcp

The exit status is 1 when a cell failed or a check did not hold, 2 when nothing ran.
"""

import sys

# mysql-connector-python's C extension must be loaded before anything loads the system's
# libcrypto (bench.py explains); a worker of that driver imports it first.
if sys.argv[1:2] in (["--worker"], ["--probe"]) and sys.argv[2:3] == ["mysqlconnector"]:
    try:
        import _mysql_connector  # noqa: F401
    except ImportError:
        pass

import argparse  # noqa: E402
import asyncio  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench  # noqa: E402  (server, connect options, run_child, tables, formatting)
import bench_async  # noqa: E402  (async driver adapters and pools, percentiles)
from _proc import server_cpu_seconds  # noqa: E402

SYNC_DRIVERS = ("mysqlc", "mysqlclient", "pymysql", "mysqlconnector")
ASYNC_DRIVERS = ("mysqlc-aio", "asyncmy", "aiomysql", "connector-aio")
DRIVERS = SYNC_DRIVERS + ASYNC_DRIVERS
LOOPS = ("asyncio", "uvloop")
NO_LOOP = "-"
DEFAULT_MODES = ("seq", "pool10", "pool50")

TABLE_ROWS = 10000
STATEMENTS = {
    # name: (sql, fetch rows, description)
    "select1": ("SELECT 1", True, "SELECT 1"),
    "point": ("SELECT id, a, b, c FROM t_small WHERE id = %s", True,
              "point SELECT by primary key, 4 columns"),
    "insert": ("INSERT INTO t_small_ins (a, b, c) VALUES (%s, %s, %s)", False,
               "INSERT of one row"),
    "update": ("UPDATE t_small_upd SET a = a + 1, c = %s WHERE id = %s", False,
               "UPDATE of one row by primary key"),
}
STATEMENT_ORDER = tuple(STATEMENTS)
CREATE = {
    "t_small": "CREATE TABLE t_small (id INT NOT NULL PRIMARY KEY, a BIGINT NOT NULL, "
               "b VARCHAR(32) NOT NULL, c DOUBLE NOT NULL) ENGINE=InnoDB "
               "DEFAULT CHARSET=utf8mb4",
    "t_small_upd": "CREATE TABLE t_small_upd (id INT NOT NULL PRIMARY KEY, a BIGINT NOT "
                   "NULL, b VARCHAR(32) NOT NULL, c DOUBLE NOT NULL) ENGINE=InnoDB "
                   "DEFAULT CHARSET=utf8mb4",
    "t_small_ins": "CREATE TABLE t_small_ins (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
                   "a BIGINT NOT NULL, b VARCHAR(32) NOT NULL, c DOUBLE NOT NULL) "
                   "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
}
WORKER_TIMEOUT = 900
#: the ceiling's client (MariaDB's load tool), first found on PATH
SLAP_BINARIES = ("mariadb-slap", "mysqlslap")
SLAP = "mariadb-slap"   # its cell's driver name
#: the ceiling's statements: the drivers' with the parameters written in (docstring)
SLAP_SQL = {
    "select1": "SELECT 1",
    "point": "SELECT id, a, b, c FROM t_small WHERE id = CONNECTION_ID() %% %d + 1"
             % TABLE_ROWS,
    "insert": "INSERT INTO t_small_ins (a, b, c) VALUES (1, 'ins slap', 0.125)",
    "update": "UPDATE t_small_upd SET a = a + 1, c = 0.5 WHERE id = CONNECTION_ID() %% %d "
              "+ 1" % TABLE_ROWS,
}
#: the server's counter of each statement's command (SHOW GLOBAL STATUS)
SLAP_COUNTER = {"select1": "Com_select", "point": "Com_select", "insert": "Com_insert",
                "update": "Com_update"}
TARGET_SYNC = 0.5
TARGET_AIO_CPU = 0.7
TARGET_POOLED = 1.3


def row_values(i):
    """The row of id ``i`` (1-based) as the tables are filled: exact in a DOUBLE."""
    return (i, i * 1000003 - 5000000000, "row %d caf\u00e9" % i, i / 4.0 - 1000.0)


def point_keys(n):
    return [((i * 7919) % TABLE_ROWS) + 1 for i in range(n)]


def statement_args(stmt, n, salt=0):
    """The ``n`` parameter tuples of ``stmt`` (None: no parameters)."""
    if stmt == "select1":
        return [None] * n
    keys = point_keys(n)
    if stmt == "point":
        return [(k,) for k in keys]
    if stmt == "insert":
        return [(i, "ins %d-%d" % (salt, i), i / 8.0) for i in range(n)]
    return [((i + salt) / 2.0, k) for i, k in enumerate(keys)]


def parse_mode(mode):
    """'seq' -> 0; 'poolK' -> K (concurrent tasks); else ValueError."""
    if mode == "seq":
        return 0
    if mode.startswith("pool") and mode[4:].isdigit() and int(mode[4:]) > 0:
        return int(mode[4:])
    raise ValueError("unknown mode %r (seq, or poolK such as pool10)" % mode)


def cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


# --------------------------------------------------------------------------------------
# Worker: sync drivers
# --------------------------------------------------------------------------------------

def sync_connect(driver, mod, connect):
    """utf8mb4, TLS off, autocommit on.  mysql-connector: its C extension when it loads
    (``use_pure=False``), else its pure-Python connection (the report names the class)."""
    kw = dict(connect, charset="utf8mb4", **bench.transport_kwargs(driver, "plain", None))
    if driver == "mysqlconnector":
        return mod.connect(use_pure=False, autocommit=True, **kw)
    conn = mod.connect(**kw)
    conn.autocommit(True)
    return conn


def sync_ping(driver, conn):
    if driver == "mysqlconnector":
        return conn.ping
    if driver == "pymysql":
        return lambda: conn.ping(False)
    return conn.ping


def run_sync_statements(cur, sql, args, fetch):
    ex = cur.execute
    if fetch:
        fa = cur.fetchall
        for a in args:
            ex(sql, a)
            fa()
    else:
        for a in args:
            ex(sql, a)


def slices(seq, k):
    """``seq`` cut into ``k`` consecutive slices of (nearly) equal length."""
    n = len(seq)
    return [seq[i * n // k:(i + 1) * n // k] for i in range(k)]


def shares(total, k):
    return [total * (i + 1) // k - total * i // k for i in range(k)]


def new_totals():
    return {"wall_s": 0.0, "cpu_s": 0.0, "server_cpu_s": 0.0, "ping_wall_s": 0.0,
            "ping_cpu_s": 0.0}


def add_block(tot, pid_ok, ping, stmts, server):
    """Add one block's (t0, t1, c0, c1) of the pings and of the statements, and the
    server's (s0, s1) around the statements, to ``tot``; returns whether the server's
    CPU could be read."""
    tot["ping_wall_s"] += ping[1] - ping[0]
    tot["ping_cpu_s"] += ping[3] - ping[2]
    tot["wall_s"] += stmts[1] - stmts[0]
    tot["cpu_s"] += stmts[3] - stmts[2]
    if server[0] is None or server[1] is None:
        return False
    tot["server_cpu_s"] += server[1] - server[0]
    return pid_ok


def interleaved(pid, ping_fn, pings, stmt_fn, args, blocks):
    """The timed section of a sequential cell: ``blocks`` blocks, each a share of the
    ``pings`` ping() calls followed by a slice of the statements, so that the ping
    figure and the statement figure see the same drift of the machine.  Returns the
    statements' wall / CPU / server CPU seconds and the pings' wall / CPU seconds (sums
    over the blocks; server_cpu_s None when it could not be read)."""
    parts, ks = slices(args, blocks), shares(pings, blocks)
    perf = time.perf_counter
    tot, server_ok = new_totals(), True
    gc.collect()
    for part, k in zip(parts, ks):
        c0, t0 = cpu_seconds(), perf()
        ping_fn(k)
        t1, c1 = perf(), cpu_seconds()
        s0 = server_cpu_seconds(pid)
        c2, t2 = cpu_seconds(), perf()
        stmt_fn(part)
        t3, c3 = perf(), cpu_seconds()
        s1 = server_cpu_seconds(pid)
        server_ok = add_block(tot, server_ok, (t0, t1, c0, c1), (t2, t3, c2, c3), (s0, s1))
    if not server_ok:
        tot["server_cpu_s"] = None
    return tot


def sync_worker(driver, spec, result):
    mod = bench.import_driver(driver)
    where = os.path.abspath(getattr(mod, "__file__", "") or "")
    if driver == "mysqlc" and not where.startswith(REPO + os.sep):
        raise ImportError("mysqlc is not this checkout's (%s)" % where)
    result["version"] = bench.driver_version(driver, mod)
    conn = sync_connect(driver, mod, spec["connect"])
    result["connection_class"] = type(conn).__module__ + "." + type(conn).__name__
    cur = conn.cursor()
    cur.execute("SELECT @@autocommit, @@character_set_client, @@character_set_connection")
    result["session"] = [str(x) for x in cur.fetchall()[0]]
    ping = sync_ping(driver, conn)
    pid = spec.get("server_pid")

    def q(sql, args=None):
        cur.execute(sql, args)
        return [tuple(r) for r in cur.fetchall()]

    async def aq(sql, args=None):
        return q(sql, args)

    def pings(k):
        for _ in range(k):
            ping()

    for stmt in spec["statements"]:
        sql, fetch, _ = STATEMENTS[stmt]
        n = spec["n"]
        run_sync_statements(cur, sql, statement_args(stmt, spec["warmup"], 1), fetch)
        pings(200)
        out = {"n": n, "pings": spec["pings"], "blocks": spec["blocks"]}
        args = statement_args(stmt, n, 2)
        before = asyncio.run(check_before(stmt, aq))
        out.update(interleaved(pid, pings, spec["pings"],
                               lambda a: run_sync_statements(cur, sql, a, fetch), args,
                               spec["blocks"]))
        out["check"] = asyncio.run(check_after(stmt, aq, before, n))
        result["statements"][stmt] = out
    cur.close()
    conn.close()


# --------------------------------------------------------------------------------------
# Checks (the same for every driver; untimed).  ``q(sql, args)`` is a coroutine function
# returning the rows as tuples (the sync worker wraps its blocking one).
# --------------------------------------------------------------------------------------

async def check_before(stmt, q):
    """State for check_after; for insert, empties the target table."""
    if stmt == "insert":
        await q("TRUNCATE TABLE t_small_ins")
        return None
    if stmt == "update":
        return int((await q("SELECT SUM(a) FROM t_small_upd"))[0][0])
    return None


async def check_after(stmt, q, before, n):
    """'ok' or what is wrong."""
    if stmt == "select1":
        got = await q("SELECT 1")
        return "ok" if got == [(1,)] else "SELECT 1 gave %r" % (got,)
    if stmt == "point":
        for k in point_keys(50):
            got = await q(STATEMENTS["point"][0], (k,))
            if got != [row_values(k)]:
                return "row %d: %r, expected %r" % (k, got, [row_values(k)])
        return "ok"
    if stmt == "insert":
        got = int((await q("SELECT COUNT(*) FROM t_small_ins"))[0][0])
        return "ok" if got == n else "%d rows inserted, expected %d" % (got, n)
    got = int((await q("SELECT SUM(a) FROM t_small_upd"))[0][0])
    return "ok" if got == before + n else "SUM(a) grew by %d, expected %d" % (
        got - before, n)


# --------------------------------------------------------------------------------------
# Worker: async drivers (bench_async.py's adapters: connect, cursor, pools)
# --------------------------------------------------------------------------------------

async def maybe_await(x):
    return (await x) if asyncio.iscoroutine(x) else x


def async_ping(driver, conn):
    if driver in ("asyncmy", "aiomysql"):
        return lambda: conn.ping(False)
    return conn.ping


async def run_async_statements(cur, sql, args, fetch):
    ex = cur.execute
    if fetch:
        fa = cur.fetchall
        for a in args:
            await ex(sql, a)
            await fa()
    else:
        for a in args:
            await ex(sql, a)


def pooled_statement(driver):
    """``async def one(pool, sql, args, fetch)``: one statement through the pool, each
    driver's idiom (bench_async.py's pooled_query, with or without fetchall)."""
    if driver == "connector-aio":
        async def one(pool, sql, args, fetch):
            pool, sem = pool
            async with sem:
                cnx = await pool.get_connection()
                try:
                    cur = await cnx.cursor()
                    await cur.execute(sql, args)
                    if fetch:
                        await cur.fetchall()
                    await cur.close()
                finally:
                    await cnx.close()  # back to the pool
        return one

    async def one(pool, sql, args, fetch):
        async with pool.acquire() as conn:
            async with conn.cursor() as cur:
                await cur.execute(sql, args)
                if fetch:
                    await cur.fetchall()
    return one


async def run_pooled(one, pool, sql, args, fetch, tasks, latencies):
    n = len(args)
    perf = time.perf_counter
    del latencies[:]

    async def client(slot):
        for i in range(slot, n, tasks):
            t0 = perf()
            await one(pool, sql, args[i], fetch)
            latencies.append(perf() - t0)

    await asyncio.gather(*(client(s) for s in range(min(tasks, n))))


async def atimed(pid, coro_fn, *a):
    gc.collect()
    s0 = server_cpu_seconds(pid)
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    await coro_fn(*a)
    t1 = time.perf_counter()
    c1 = cpu_seconds()
    s1 = server_cpu_seconds(pid)
    return {"wall_s": t1 - t0, "cpu_s": c1 - c0,
            "server_cpu_s": (s1 - s0) if s0 is not None and s1 is not None else None}


async def ainterleaved(pid, ping_fn, pings, stmt_fn, args, blocks):
    """interleaved() for coroutine functions."""
    parts, ks = slices(args, blocks), shares(pings, blocks)
    perf = time.perf_counter
    tot, server_ok = new_totals(), True
    gc.collect()
    for part, k in zip(parts, ks):
        c0, t0 = cpu_seconds(), perf()
        await ping_fn(k)
        t1, c1 = perf(), cpu_seconds()
        s0 = server_cpu_seconds(pid)
        c2, t2 = cpu_seconds(), perf()
        await stmt_fn(part)
        t3, c3 = perf(), cpu_seconds()
        s1 = server_cpu_seconds(pid)
        server_ok = add_block(tot, server_ok, (t0, t1, c0, c1), (t2, t3, c2, c3), (s0, s1))
    if not server_ok:
        tot["server_cpu_s"] = None
    return tot


async def async_worker(driver, mode, spec, result):
    mod = bench_async.import_driver(driver)
    result["version"] = bench_async.driver_version(driver)
    drv = bench_async.ADAPTERS[driver](mod, spec["connect"])
    tasks = parse_mode(mode)
    pid = spec.get("server_pid")
    conn = await drv.connect(True)
    result["connection_class"] = type(conn).__module__ + "." + type(conn).__name__
    cur = await maybe_await(drv.cursor(conn))
    session = await drv.query(cur, "SELECT @@autocommit, @@character_set_client, "
                                   "@@character_set_connection")
    result["session"] = [str(x) for x in session[0]]
    ping = async_ping(driver, conn)

    async def q(sql, args=None):
        return [tuple(r) for r in await drv.query(cur, sql, args)]

    async def pings(k):
        for _ in range(k):
            await ping()

    pool = None
    if tasks:
        pool = await drv.create_pool(spec["pool_size"])
        result["pool_kind"] = drv.pool_kind
        result["tasks"] = tasks
        one = pooled_statement(driver)
        latencies = []
    for stmt in spec["statements"]:
        sql, fetch, _ = STATEMENTS[stmt]
        n = spec["pool_n"] if tasks else spec["n"]
        warm = statement_args(stmt, spec["warmup"], 1)
        if tasks:
            await run_pooled(one, pool, sql, warm, fetch, tasks, latencies)
        else:
            await run_async_statements(cur, sql, warm, fetch)
        await pings(200)
        k = spec["pool_pings"] if tasks else spec["pings"]
        out = {"n": n, "pings": k, "blocks": 1 if tasks else spec["blocks"]}
        args = statement_args(stmt, n, 2)
        before = await check_before(stmt, q)
        if tasks:
            # pings on a connection of their own, half before and half after the run
            p1 = await atimed(pid, pings, k // 2)
            out.update(await atimed(pid, run_pooled, one, pool, sql, args, fetch, tasks,
                                    latencies))
            p2 = await atimed(pid, pings, k - k // 2)
            out.update(ping_wall_s=p1["wall_s"] + p2["wall_s"],
                       ping_cpu_s=p1["cpu_s"] + p2["cpu_s"])
            lat = sorted(latencies)
            out.update(p50_s=bench_async.percentile(lat, 50),
                       p99_s=bench_async.percentile(lat, 99),
                       max_s=lat[-1] if lat else None, latencies=len(lat))
        else:
            out.update(await ainterleaved(
                pid, pings, k, lambda a: run_async_statements(cur, sql, a, fetch), args,
                spec["blocks"]))
        out["check"] = await check_after(stmt, q, before, n)
        result["statements"][stmt] = out
    if pool is not None:
        await drv.close_pool(pool)
    await drv.close(conn)


def worker_main(driver, mode, loop, spec):
    result = {"driver": driver, "mode": mode, "loop": loop, "statements": {}}
    if driver in SYNC_DRIVERS:
        sync_worker(driver, spec, result)
        return result
    factory = None
    if loop == "uvloop":
        import uvloop
        factory = uvloop.new_event_loop
        result["uvloop"] = uvloop.__version__
    lp = (factory or asyncio.new_event_loop)()
    result["loop_class"] = type(lp).__module__ + "." + type(lp).__name__
    try:
        asyncio.set_event_loop(lp)
        lp.run_until_complete(async_worker(driver, mode, spec, result))
        lp.run_until_complete(lp.shutdown_asyncgens())
    finally:
        asyncio.set_event_loop(None)
        lp.close()
    return result


def probe_main(driver):
    try:
        if driver in SYNC_DRIVERS:
            mod = bench.import_driver(driver)
            out = {"version": bench.driver_version(driver, mod)}
        else:
            mod = bench_async.import_driver(driver)
            out = {"version": bench_async.driver_version(driver)}
        if not hasattr(mod, "connect"):
            raise ImportError("%s has no connect()" % driver)
        out.update(available=True, module_file=getattr(mod, "__file__", None))
        return out
    except Exception as exc:
        return {"available": False, "error": "%s: %s" % (type(exc).__name__, exc)}


def child_entry(argv):
    spec = json.loads(sys.stdin.read() or "{}")
    try:
        if argv[0] == "--worker":
            res = worker_main(argv[1], argv[2], argv[3], spec)
        else:
            res = probe_main(argv[1])
        status = 0
    except Exception as exc:
        res = {"error": "%s: %s" % (type(exc).__name__, exc)}
        traceback.print_exc()
        status = 1
    with open(spec["result_path"], "w") as f:
        json.dump(res, f, default=str)
    return status


# --------------------------------------------------------------------------------------
# Parent: tables, cells, the report
# --------------------------------------------------------------------------------------

def setup_tables(connect):
    """Create and fill the tables with mysqlc (reused when their content is right)."""
    mod = bench.import_driver("mysqlc")
    conn = mod.connect(charset="utf8mb4", autocommit=True, **dict(
        connect, **bench.transport_kwargs("mysqlc", "plain", None)))
    cur = conn.cursor()

    def one(sql):
        cur.execute(sql)
        return cur.fetchall()[0]

    info = {"server_version": one("SELECT VERSION()")[0]}
    try:
        info["pid_file"] = one("SELECT @@pid_file")[0]
    except Exception:
        info["pid_file"] = None
    rows = [row_values(i) for i in range(1, TABLE_ROWS + 1)]
    reused = []
    sum_id = TABLE_ROWS * (TABLE_ROWS + 1) // 2
    sum_a = sum(r[1] for r in rows)
    for name in ("t_small", "t_small_upd"):
        # reused when the rows are all there (t_small: unchanged; the point SELECT's
        # check compares the rows it reads with row_values() anyway)
        try:
            count, ids, a = one("SELECT COUNT(*), SUM(id), SUM(a) FROM %s" % name)
            if count == TABLE_ROWS and ids == sum_id and (name != "t_small" or a == sum_a):
                reused.append(name)
                continue
        except Exception:
            pass
        cur.execute("DROP TABLE IF EXISTS %s" % name)
        cur.execute(CREATE[name])
        cur.executemany("INSERT INTO %s VALUES (%%s, %%s, %%s, %%s)" % name, rows)
    cur.execute("DROP TABLE IF EXISTS t_small_ins")
    cur.execute(CREATE["t_small_ins"])
    cur.execute("ANALYZE TABLE t_small, t_small_upd")
    cur.fetchall()
    info["reused"] = reused
    conn.close()
    return info


def slap_binary():
    """The path of the ceiling's client, or None."""
    for name in SLAP_BINARIES:
        path = shutil.which(name)
        if path:
            return path
    return None


def slap_statement(binary, connect, server_pid, stmt, conns, n):
    """One ceiling run: ``n`` statements ``stmt`` from ``conns`` connections of
    mariadb-slap; a worker-shaped result ({"statements": {stmt: run}}, the run's ``n``
    the statements the server counted)."""
    mod = bench.import_driver("mysqlc")
    conn = mod.connect(charset="utf8mb4", autocommit=True, **dict(
        connect, **bench.transport_kwargs("mysqlc", "plain", None)))
    cur = conn.cursor()

    async def q(sql, args=None):
        cur.execute(sql, args)
        return [tuple(r) for r in cur.fetchall()]

    def counter():
        cur.execute("SHOW GLOBAL STATUS LIKE %s", (SLAP_COUNTER[stmt],))
        return int(cur.fetchall()[0][1])

    # (the password in the environment, MYSQL_PWD, not on the command line where any
    # process listing shows it)
    cmd = [binary, "--no-defaults", "--user=%s" % connect["user"],
           "--create-schema=%s" % connect["database"],
           "--no-drop", "--concurrency=%d" % conns, "--iterations=1",
           "--number-of-queries=%d" % n, "--query=%s" % SLAP_SQL[stmt]]
    if connect.get("unix_socket"):
        cmd.append("--socket=%s" % connect["unix_socket"])
    else:
        cmd += ["--host=%s" % connect["host"], "--port=%d" % connect["port"],
                "--protocol=tcp"]
    try:
        before = asyncio.run(check_before(stmt, q))
        c0 = counter()
        gc.collect()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        s0 = server_cpu_seconds(server_pid)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=WORKER_TIMEOUT,
                              env=dict(os.environ, MYSQL_PWD=connect["password"] or ""))
        s1 = server_cpu_seconds(server_pid)
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = counter() - c0
        if proc.returncode != 0:
            return {"error": "%s exited %d: %s" % (os.path.basename(binary), proc.returncode,
                                                    (proc.stderr or proc.stdout)[-300:])}
        m = re.search(r"Average number of seconds to run all queries: ([0-9.]+)",
                      proc.stdout)
        if not m or float(m.group(1)) <= 0:
            return {"error": "no time in the output of %s: %s" % (binary, proc.stdout[-300:])}
        run = {"n": done, "wall_s": float(m.group(1)),
               "cpu_s": (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime),
               "server_cpu_s": (s1 - s0) if s0 is not None and s1 is not None else None,
               "conns": conns, "asked": n}
        run["check"] = asyncio.run(check_after(stmt, q, before, done)) if done > 0 else \
            "the server counted no %s" % SLAP_COUNTER[stmt]
        return {"statements": {stmt: run}, "version": slap_version(binary)}
    finally:
        conn.close()


def slap_version(binary):
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return out.split(" from ")[0] if out else "?"


def cell_key(driver, mode, loop):
    return "%s|%s|%s" % (driver, mode, loop)


def cell_label(driver, loop):
    return driver if loop == NO_LOOP else "%s@%s" % (driver, loop)


def plan_cells(drivers, modes, loops):
    """[(driver, mode, loop)]: sync drivers in seq only, without a loop."""
    cells = []
    for mode in modes:
        for d in drivers:
            if d in SYNC_DRIVERS:
                if mode == "seq":
                    cells.append((d, mode, NO_LOOP))
            else:
                cells.extend((d, mode, lp) for lp in loops)
    return cells


def rotated(xs, k):
    k %= max(1, len(xs))
    return list(xs[k:]) + list(xs[:k])


def round_order(cells, drivers, r):
    """The cells of round ``r``: per mode, the driver order rotated by r places."""
    order = rotated(drivers, r)
    modes = []
    for c in cells:
        if c[1] not in modes:
            modes.append(c[1])
    out = []
    for m in modes:
        for d in order:
            out.extend(c for c in cells if c[0] == d and c[1] == m)
    return out


def figures(run):
    """Per-statement figures of one timed run (µs, /s, ms, cores)."""
    n = run["n"]
    cpu_us = run["cpu_s"] / n * 1e6
    f = {"cpu_us": cpu_us, "sps": n / run["wall_s"] if run["wall_s"] > 0 else float("inf")}
    if run.get("pings"):   # (the ceiling's runs have none)
        ping_us = run["ping_cpu_s"] / run["pings"] * 1e6
        f.update(ping_us=ping_us, above_us=cpu_us - ping_us,
                 ping_wall_us=run["ping_wall_s"] / run["pings"] * 1e6)
    if run.get("server_cpu_s") is not None:
        f["server_us"] = run["server_cpu_s"] / n * 1e6
        f["server_cores"] = run["server_cpu_s"] / run["wall_s"]
    for k in ("p50_s", "p99_s", "max_s"):
        if run.get(k) is not None:
            f[k[:3] + "_ms"] = run[k] * 1e3
    return f


HIGHER_BETTER = ("sps",)


def summarize_cell(runs):
    """{figure: {"median", "best"}} over the repeats' figures."""
    figs = [figures(r) for r in runs]
    out = {}
    for k in figs[0]:
        vals = [f[k] for f in figs if k in f]
        if not vals:
            continue
        best = max(vals) if k in HIGHER_BETTER else min(vals)
        out[k] = {"median": statistics.median(vals), "best": best, "values": vals}
    return out


def med(s, k):
    return s[k]["median"] if s and k in s else None


def fmt(x, digits=1):
    return "-" if x is None else "%.*f" % (digits, x)


def fmt_mb(s, k, digits=1):
    if not s or k not in s:
        return "-"
    return "%.*f (%.*f)" % (digits, s[k]["median"], digits, s[k]["best"])


def build_summaries(doc):
    """doc['summary'][cell][stmt] (figures) and doc['checks'][cell][stmt] ('ok' or why)."""
    summary, checks = {}, {}
    for key, rounds in doc["runs"].items():
        summary[key], checks[key] = {}, {}
        for stmt in doc["statements"]:
            runs = [r["statements"][stmt] for r in rounds
                    if r.get("statements", {}).get(stmt)]
            bad = [r["check"] for r in runs if r["check"] != "ok"]
            errors = [r["error"] for r in rounds if r.get("error")]
            if errors and not runs:
                checks[key][stmt] = "ERROR"
            elif bad:
                checks[key][stmt] = bad[0]
            elif len(runs) < len(rounds):
                checks[key][stmt] = "ERROR in %d round(s)" % (len(rounds) - len(runs))
            else:
                checks[key][stmt] = "ok"
            if runs:
                summary[key][stmt] = summarize_cell(runs)
    doc["summary"], doc["checks"] = summary, checks
    ceiling = {}
    for stmt, rounds in doc.get("ceiling_runs", {}).items():
        runs = [r["statements"][stmt] for r in rounds if r.get("statements", {}).get(stmt)]
        bad = [r["check"] for r in runs if r["check"] != "ok"]
        errors = [r["error"] for r in rounds if r.get("error")]
        ceiling[stmt] = {"check": bad[0] if bad else errors[0] if errors else "ok",
                         "summary": summarize_cell(runs) if runs and not bad else None}
    doc["ceiling"] = ceiling


def ceiling_summary(doc, stmt):
    c = doc.get("ceiling", {}).get(stmt)
    return c["summary"] if c and c["check"] == "ok" else None


def cell_summary(doc, driver, mode, loop, stmt):
    key = cell_key(driver, mode, loop)
    if doc["checks"].get(key, {}).get(stmt) != "ok":
        return None
    return doc["summary"].get(key, {}).get(stmt)


def report_lines(doc):
    out = []
    for mode in doc["modes"]:
        tasks = parse_mode(mode)
        if tasks:
            title = ("%d concurrent tasks over the driver's pool of %d connections, %s "
                     "statements per run" % (tasks, doc["pool_size"],
                                             bench.fmt_int(doc["pool_n"])))
        else:
            title = "sequential on one connection, %s statements per run" % bench.fmt_int(
                doc["n"])
        out += ["", "== %s: %s; median (best) of %d ==" % (mode, title, doc["repeat"])]
        headers = ["statement", "driver@loop", "CPU µs/stmt", "ping µs", "above ping µs",
                   "stmts/s"]
        if tasks:
            headers += ["p50 ms", "p99 ms", "max ms"]
        headers += ["server µs/stmt", "server cores", "check"]
        rows = []
        for stmt in doc["statements"]:
            for d, m, lp in doc["cells"]:
                if m != mode:
                    continue
                key = cell_key(d, m, lp)
                s = doc["summary"].get(key, {}).get(stmt)
                check = doc["checks"].get(key, {}).get(stmt, "ERROR")
                cells = [stmt, cell_label(d, lp), fmt_mb(s, "cpu_us"),
                         fmt(med(s, "ping_us")), fmt_mb(s, "above_us"),
                         fmt_mb(s, "sps", 0)]
                if tasks:
                    cells += [fmt_mb(s, "p50_ms", 2), fmt_mb(s, "p99_ms", 2),
                              fmt(med(s, "max_ms"), 1)]
                cells += [fmt(med(s, "server_us")), fmt(med(s, "server_cores"), 2),
                          check if len(check) < 40 else check[:37] + "..."]
                rows.append(cells)
        if rows:
            bench.print_table(headers, rows, out)
    if doc.get("ceiling"):
        c = doc["ceiling_info"]
        out += ["", "== ceiling: %s, %d connections (one thread each), %s statements per "
                "run; median (best) of %d ==" % (c["version"], c["conns"],
                                                 bench.fmt_int(c["n"]), doc["repeat"])]
        rows = []
        for stmt in doc["statements"]:
            if stmt not in doc["ceiling"]:
                continue
            s = ceiling_summary(doc, stmt)
            check = doc["ceiling"][stmt]["check"]
            rows.append([stmt, fmt_mb(s, "sps", 0), fmt_mb(s, "cpu_us"),
                         fmt(med(s, "server_us")), fmt(med(s, "server_cores"), 2),
                         check if len(check) < 40 else check[:37] + "..."])
        bench.print_table(["statement", "stmts/s", "slap CPU µs/stmt", "server µs/stmt",
                           "server cores", "check"], rows, out)
    notes = []
    for key, rounds in doc["runs"].items():
        for r in rounds:
            if r.get("error"):
                notes.append("%s failed: %s" % (key.replace("|", " "), r["error"]))
        for stmt, c in doc["checks"].get(key, {}).items():
            if c not in ("ok", "ERROR") and not c.startswith("ERROR in"):
                notes.append("%s %s: %s" % (key.replace("|", " "), stmt, c))
    if notes:
        out += [""] + sorted(set(notes), key=notes.index)
    return out


def evaluate_targets(doc):
    """[{target, statement, mode, loop, measured, met}] (met: True / False / None)."""
    out = []

    def add(target, stmt, mode, loop, measured, met):
        out.append({"target": target, "statement": stmt, "mode": mode, "loop": loop,
                    "measured": measured, "met": met})

    modes = doc["modes"]
    for stmt in doc["statements"]:
        if "seq" in modes:
            me = cell_summary(doc, "mysqlc", "seq", NO_LOOP, stmt)
            peer = cell_summary(doc, "mysqlclient", "seq", NO_LOOP, stmt)
            if me and peer:
                a, b = med(me, "above_us"), med(peer, "above_us")
                text = "%.1f vs %.1f µs above ping (ping %.1f / %.1f)" % (
                    a, b, med(me, "ping_us"), med(peer, "ping_us"))
                if b <= 0:
                    add("sync above-ping CPU mysqlc/mysqlclient <= %.1f" % TARGET_SYNC, stmt,
                        "seq", NO_LOOP, text + ": mysqlclient's is <= 0, no ratio", None)
                else:
                    add("sync above-ping CPU mysqlc/mysqlclient <= %.1f" % TARGET_SYNC, stmt,
                        "seq", NO_LOOP, text + " = %.2fx" % (a / b), a / b <= TARGET_SYNC)
            for loop in doc["loops"]:
                me = cell_summary(doc, "mysqlc-aio", "seq", loop, stmt)
                peer = cell_summary(doc, "asyncmy", "seq", loop, stmt)
                if me and peer:
                    a, b = med(me, "cpu_us"), med(peer, "cpu_us")
                    add("async CPU/stmt mysqlc-aio/asyncmy <= %.1f" % TARGET_AIO_CPU, stmt,
                        "seq", loop, "%.1f vs %.1f µs = %.2fx" % (a, b, a / b),
                        a / b <= TARGET_AIO_CPU)
        for mode in modes:
            if not parse_mode(mode):
                continue
            for loop in doc["loops"]:
                me = cell_summary(doc, "mysqlc-aio", mode, loop, stmt)
                peer = cell_summary(doc, "asyncmy", mode, loop, stmt)
                if me and peer:
                    a, b = med(me, "sps"), med(peer, "sps")
                    text = ("%s vs %s/s = %.2fx; p99 %s vs %s ms; max %s vs %s ms; "
                            "server cores %s / %s") % (
                        bench.fmt_int(a), bench.fmt_int(b), a / b, fmt(med(me, "p99_ms"), 2),
                        fmt(med(peer, "p99_ms"), 2), fmt(med(me, "max_ms"), 1),
                        fmt(med(peer, "max_ms"), 1), fmt(med(me, "server_cores"), 2),
                        fmt(med(peer, "server_cores"), 2))
                    top = ceiling_summary(doc, stmt)
                    if top:
                        text += "; ceiling %s/s = %.2fx asyncmy" % (
                            bench.fmt_int(med(top, "sps")), med(top, "sps") / b)
                    add("pooled stmts/s mysqlc-aio/asyncmy >= %.1f" % TARGET_POOLED, stmt,
                        mode, loop, text, a / b >= TARGET_POOLED)
    kinds = []
    for t in out:
        if t["target"] not in kinds:
            kinds.append(t["target"])
    return sorted(out, key=lambda t: kinds.index(t["target"]))  # stable: one block each


def target_lines(doc):
    rows = [[t["target"], t["statement"], t["mode"], t["loop"], t["measured"],
             {True: "MET", False: "MISSED", None: "n/a"}[t["met"]]]
            for t in doc["targets"]]
    if not rows:
        return []
    out = ["", "== targets (issue 22), from this run's medians =="]
    bench.print_table(["target", "statement", "mode", "loop", "measured", ""], rows, out)
    return out


def chart(doc, path):
    """Top row: client CPU µs per statement, sequential, one panel per statement, a bar
    per driver@loop (the ping's part hatched at the bottom, the part above ping on top).
    Bottom row: pooled statements/s per driver@loop, grouped by mode."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    stmts = doc["statements"]
    pooled_modes = [m for m in doc["modes"] if parse_mode(m)]
    nrows = (1 if "seq" in doc["modes"] else 0) + (1 if pooled_modes else 0)
    if not nrows:
        return
    fig, axes = plt.subplots(nrows, len(stmts), figsize=(4.6 * len(stmts), 4.4 * nrows),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    row = 0
    if "seq" in doc["modes"]:
        seq = [(d, lp) for d, m, lp in doc["cells"] if m == "seq"]
        for ax, stmt in zip(axes[row], stmts):
            for i, (d, lp) in enumerate(seq):
                s = cell_summary(doc, d, "seq", lp, stmt)
                if not s:
                    continue
                c = colors[DRIVERS.index(d) % len(colors)]
                ping, above = med(s, "ping_us"), med(s, "above_us")
                ax.bar(i, ping, color=c, alpha=0.35, hatch="..")
                ax.bar(i, above, bottom=ping, color=c,
                       hatch="//" if lp == "uvloop" else None)
                ax.text(i, ping + max(above, 0), "%.1f" % above, ha="center",
                        va="bottom", fontsize=6)
            ax.set_xticks(range(len(seq)))
            ax.set_xticklabels([cell_label(d, lp) for d, lp in seq], rotation=45,
                               ha="right", fontsize=7)
            ax.set_title("%s, sequential" % stmt, fontsize=9)
            ax.set_ylabel("client CPU µs/stmt (dotted: ping; label: above ping)",
                          fontsize=7)
            ax.grid(axis="y", alpha=0.3)
        row += 1
    if pooled_modes:
        keys = [(d, lp) for d in doc["drivers"] if d in ASYNC_DRIVERS for lp in doc["loops"]]
        width = 0.8 / max(1, len(keys))
        for ax, stmt in zip(axes[row], stmts):
            for i, (d, lp) in enumerate(keys):
                xs, ys = [], []
                for k, m in enumerate(pooled_modes):
                    s = cell_summary(doc, d, m, lp, stmt)
                    if s:
                        xs.append(k + (i - (len(keys) - 1) / 2) * width)
                        ys.append(med(s, "sps"))
                ax.bar(xs, ys, width, label=cell_label(d, lp),
                       color=colors[DRIVERS.index(d) % len(colors)],
                       hatch="//" if lp == "uvloop" else None)
            top = ceiling_summary(doc, stmt)
            if top:
                ax.axhline(med(top, "sps"), color="black", linestyle="--", linewidth=1,
                           label="ceiling (%s)" % SLAP)
            ax.set_xticks(range(len(pooled_modes)))
            ax.set_xticklabels(pooled_modes, fontsize=8)
            ax.set_title("%s, pooled (pool of %d)" % (stmt, doc["pool_size"]), fontsize=9)
            ax.set_ylabel("statements/s (median wall); higher is better", fontsize=7)
            ax.grid(axis="y", alpha=0.3)
        handles, labels = axes[row][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(9, len(keys) + 1),
                   fontsize=7)
    fig.suptitle("benchmarks/bench_small.py: the cost of one statement; %s, %s cores, %s, "
                 "%s" % (doc["machine"]["cpu"], doc["machine"]["cores"],
                         doc["transport"].split(" /")[0], doc["started"]), fontsize=9)
    fig.tight_layout(rect=(0, 0.05 if pooled_modes else 0, 1, 0.97))
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--worker"], ["--probe"]):
        return child_entry(argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog=__doc__[__doc__.index("Method"):],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--drivers", default=",".join(DRIVERS),
                   help="comma-separated, from %s (default: all)" % ",".join(DRIVERS))
    p.add_argument("--modes", default=",".join(DEFAULT_MODES),
                   help="seq and/or poolK (K concurrent tasks), default seq,pool10,pool50")
    p.add_argument("--statements", default=",".join(STATEMENT_ORDER),
                   help="comma-separated, from %s (default: all)" % ",".join(STATEMENT_ORDER))
    p.add_argument("--loops", default=",".join(LOOPS),
                   help="event loops of the async drivers: asyncio, uvloop (default both)")
    p.add_argument("--n", type=int, default=20000,
                   help="statements per timed run, sequential (default 20000)")
    p.add_argument("--pool-n", type=int, default=5000,
                   help="statements per timed run, pooled modes (default 5000)")
    p.add_argument("--pool-size", type=int, default=10,
                   help="connections in each driver's pool (default 10)")
    p.add_argument("--warmup", type=int, default=500,
                   help="untimed statements before each timed run (default 500)")
    p.add_argument("--pings", type=int, default=None,
                   help="timed ping() calls per statement (default N/4, at least 1000)")
    p.add_argument("--blocks", type=int, default=10,
                   help="sequential: the timed pings and statements alternate in this many "
                        "blocks (default 10)")
    p.add_argument("--repeat", type=int, default=3,
                   help="rounds; each starts every cell once (default 3)")
    p.add_argument("--no-ceiling", action="store_true",
                   help="pooled modes: leave out the ceiling (mariadb-slap's stmts/s)")
    p.add_argument("--ceiling-n", type=int, default=None,
                   help="statements per ceiling run (default: --pool-n, at least 20000: "
                        "slap reports its time in ms)")
    p.add_argument("--tcp", action="store_true",
                   help="TCP to the server instead of its unix socket")
    p.add_argument("--dsn", help="an existing server, mysql://user:pw@host:port/db"
                   "[?unix_socket=PATH]; default a private one (mysqlc.server.get_server(), "
                   "which honours MYSQLC_TEST_DSN)")
    p.add_argument("--server-port", type=int, help="TCP port of the private server")
    p.add_argument("--json", metavar="PATH", help="write every measurement as JSON")
    p.add_argument("--chart", metavar="PNG", help="write a chart (matplotlib)")
    p.add_argument("--from-json", metavar="PATH",
                   help="run nothing: print the report and write --chart from an earlier "
                        "run's --json file")
    args = p.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            doc = json.load(f)
        print("\n".join(doc["header"] + doc["report"]))
        if args.chart:
            chart(doc, args.chart)
            print("wrote %s" % args.chart)
        return 0

    def listed(text, allowed, what):
        xs = [x for x in (y.strip() for y in text.split(",")) if x]
        for x in xs:
            if allowed is not None and x not in allowed:
                p.error("unknown %s %r (choose from %s)" % (what, x, ", ".join(allowed)))
        return xs

    drivers = listed(args.drivers, DRIVERS, "driver")
    statements = listed(args.statements, STATEMENT_ORDER, "statement")
    loops = listed(args.loops, LOOPS, "loop")
    modes = listed(args.modes, None, "mode")
    for m in modes:
        try:
            parse_mode(m)
        except ValueError as exc:
            p.error(str(exc))
    for name in ("n", "pool_n", "pool_size", "repeat", "blocks"):
        if getattr(args, name) < 1:
            p.error("--%s must be >= 1" % name.replace("_", "-"))
    if args.warmup < 0:
        p.error("--warmup must be >= 0")
    pings = args.pings or max(1000, args.n // 4)
    pool_pings = args.pings or max(1000, args.pool_n // 4)
    t_start = time.perf_counter()

    probes = {}
    for d in drivers:
        res, err = bench.run_child(["--probe", d], {}, timeout=120, script=__file__)
        probes[d] = res if res else {"available": False, "error": err}
    uv_version = None
    if "uvloop" in loops and any(d in ASYNC_DRIVERS for d in drivers):
        try:
            import uvloop
            uv_version = uvloop.__version__
        except ImportError as exc:
            print("uvloop not installed (%s): asyncio loop only" % exc, flush=True)
            loops = [lp for lp in loops if lp != "uvloop"]
    cells = [c for c in plan_cells(drivers, modes, loops) if probes[c[0]].get("available")]
    if not cells:
        print("nothing to run: " + "; ".join("%s: %s" % (d, probes[d].get("error"))
                                               for d in drivers), file=sys.stderr)
        return 2

    server_mod = bench.load_server_module()
    if args.dsn:
        server_ctx = server_mod.ExternalServer(args.dsn)
        server_kind = "external (--dsn)"
    else:
        kw = {"extra_args": bench.SERVER_ARGS}
        if args.server_port:
            kw["port"] = args.server_port
        server_ctx = server_mod.get_server(**kw)
        server_kind = None
    try:
        srv = server_ctx.__enter__()
    except Exception as exc:
        print("no server: %s" % exc, file=sys.stderr)
        return 2
    try:
        return run_all(args, srv, server_kind, probes, drivers, modes, loops, statements,
                       cells, (pings, pool_pings), uv_version, t_start)
    finally:
        server_ctx.__exit__(None, None, None)


def run_all(args, srv, server_kind, probes, drivers, modes, loops, statements, cells, pings,
            uv_version, t_start):
    pings, pool_pings = pings
    if server_kind is None:
        server_kind = ("private (pid %s)" % srv.pid) if srv.pid else \
            "external (MYSQLC_TEST_DSN)"
    unix = not args.tcp and bool(srv.unix_socket)
    connect = srv.connect_kwargs(unix=unix)
    transport = ("unix socket %s" % connect["unix_socket"]) if unix else \
        "TCP %s:%s" % (connect["host"], connect["port"])
    if not args.tcp and not unix:
        transport += " (no unix socket known for this server)"
    setup = setup_tables(connect)
    server_pid = srv.pid or bench.local_server_pid(
        setup.get("pid_file"), unix or bench.is_local_host(connect.get("host")))
    header = [
        "machine : %s, %d cores, %s %s" % (bench.cpu_model(), os.cpu_count() or 0,
                                            platform.system(), platform.release()),
        "python  : %s %s (%s)" % (platform.python_implementation(),
                                  platform.python_version(), sys.executable),
    ]
    if any(d in ASYNC_DRIVERS for d in drivers):
        header.append("loops   : %s" % ", ".join(
            "asyncio (default loop)" if lp == "asyncio" else "uvloop %s" % uv_version
            for lp in loops))
    for d in drivers:
        pr = probes[d]
        header.append("driver  : %-14s %s" % (d, pr["version"] if pr.get("available")
                                               else "skipped (%s)" % pr.get("error")))
    header.append("server  : %s, %s, %s; server CPU %s" % (
        setup["server_version"], server_kind, transport,
        ("from /proc/%d/stat" % server_pid) if server_pid else "not measured"))
    header.append("tables  : t_small, t_small_upd %s rows%s; t_small_ins (emptied before "
                  "each timed INSERT run)" % (bench.fmt_int(TABLE_ROWS), " (reused)"
                                               if setup["reused"] else ""))
    header.append("method  : %d round(s), driver order rotated per round; per statement "
                  "%d warm-up; seq: %s statements and %s pings in %d alternating blocks; "
                  "pooled: %s statements (pool of %d), %s pings around them; autocommit on, "
                  "utf8mb4, TLS off; CPU = getrusage user+sys of the worker"
                  % (args.repeat, args.warmup, bench.fmt_int(args.n), bench.fmt_int(pings),
                     args.blocks, bench.fmt_int(args.pool_n), args.pool_size,
                     bench.fmt_int(pool_pings)))
    slap = None
    slap_n = args.ceiling_n or max(args.pool_n, 20000)
    if any(parse_mode(m) for m in modes) and not args.no_ceiling:
        slap = slap_binary()
        why = None if slap else "no %s on PATH" % " or ".join(SLAP_BINARIES)
        if slap and not server_pid:
            slap, why = None, "the server's CPU cannot be read (not a local server)"
        if slap:
            header.append("ceiling : %s, %d connections, %s statements per run, once per "
                          "round" % (slap, args.pool_size, bench.fmt_int(slap_n)))
        else:
            header.append("ceiling : not measured (%s)" % why)
    load_start = os.getloadavg()
    header.append("load    : %.2f %.2f %.2f (1/5/15 min) at the start" % load_start)
    print("\n".join(header), flush=True)

    runs = {cell_key(*c): [] for c in cells}
    ceiling_runs = {stmt: [] for stmt in statements} if slap else {}
    classes = {}
    for r in range(args.repeat):
        order = round_order(cells, drivers, r)
        stmts = rotated(statements, r)
        for d, m, lp in order:
            spec = {"connect": connect, "server_pid": server_pid, "statements": stmts,
                    "n": args.n, "pool_n": args.pool_n, "pool_size": args.pool_size,
                    "warmup": args.warmup, "pings": pings, "blocks": args.blocks,
                    "pool_pings": pool_pings}
            t0 = time.perf_counter()
            res, err = bench.run_child(["--worker", d, m, lp], spec, timeout=WORKER_TIMEOUT,
                                       script=__file__)
            took = time.perf_counter() - t0
            key = cell_key(d, m, lp)
            if res:
                runs[key].append(res)
                classes[key] = (res.get("connection_class"), res.get("pool_kind"))
                print("  round %d  %-6s %-24s %6.1f s" % (r + 1, m, cell_label(d, lp), took),
                      flush=True)
            else:
                runs[key].append({"error": err})
                print("  round %d  %-6s %-24s FAILED: %s" % (r + 1, m, cell_label(d, lp), err),
                      flush=True)
        for stmt in (stmts if slap else ()):
            t0 = time.perf_counter()
            try:
                res = slap_statement(slap, connect, server_pid, stmt, args.pool_size, slap_n)
            except Exception as exc:
                res = {"error": "%s: %s" % (type(exc).__name__, exc)}
            ceiling_runs[stmt].append(res)
            print("  round %d  %-6s %-24s %s" % (
                r + 1, "ceil", "%s %s" % (SLAP, stmt),
                "FAILED: %s" % res["error"] if res.get("error") else
                "%6.1f s" % (time.perf_counter() - t0)), flush=True)
    n_header = len(header)
    for key, (cls, pool_kind) in sorted(classes.items()):
        d, m, lp = key.split("|")
        if m == "seq" and lp in (NO_LOOP, loops[0]):
            header.append("conn    : %-14s %s" % (d, cls))
        if pool_kind and lp == loops[0] and m == next(x for x in modes if parse_mode(x)):
            header.append("pool    : %-14s %s" % (d, pool_kind))

    doc = {
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": " ".join(["python", "benchmarks/bench_small.py"] + sys.argv[1:]),
        "header": header, "machine": {"cpu": bench.cpu_model(), "cores": os.cpu_count(),
                                      "system": platform.platform(),
                                      "loadavg_start": load_start},
        "drivers": drivers, "probes": probes, "modes": modes, "loops": loops,
        "statements": statements, "cells": cells, "n": args.n, "pool_n": args.pool_n,
        "pool_size": args.pool_size, "warmup": args.warmup, "pings": pings,
        "pool_pings": pool_pings, "blocks": args.blocks,
        "repeat": args.repeat, "transport": transport,
        "server": dict(setup, kind=server_kind, pid=server_pid), "runs": runs,
        "ceiling_runs": ceiling_runs,
        "ceiling_info": {"binary": slap, "conns": args.pool_size, "n": slap_n,
                         "version": next((r.get("version") for rs in ceiling_runs.values()
                                          for r in rs if r.get("version")), SLAP)},
    }
    build_summaries(doc)
    doc["targets"] = evaluate_targets(doc)
    lines = report_lines(doc) + target_lines(doc)
    total = time.perf_counter() - t_start
    lines.append("")
    lines.append("total %.1f s; load %.2f %.2f %.2f at the end" % ((total,) + os.getloadavg()))
    doc["report"] = lines
    doc["total_seconds"] = total
    print("\n".join(header[n_header:]))
    print("\n".join(lines))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1, default=str)
        print("wrote %s" % args.json)
    if args.chart:
        chart(doc, args.chart)
        print("wrote %s" % args.chart)
    problems = [(k, s, c) for k, per in doc["checks"].items() for s, c in per.items()
                if c != "ok"]
    problems += [(cell_key(SLAP, "ceiling", NO_LOOP), s, c["check"])
                 for s, c in doc["ceiling"].items() if c["check"] != "ok"]
    if problems:
        print("PROBLEMS: " + "; ".join("%s %s: %s" % (k.replace("|", " "), s, c)
                                       for k, s, c in problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
