#!/usr/bin/env python3
"""User-space instructions per statement (issue 22), counted by valgrind: a measure of a
small statement's client cost that the drift of this VM's system calls does not move.

Method
------
``benchmarks/bench_small.py`` measures client CPU time, which on this machine is mostly
the kernel's cost of one send and one receive and drifts by 2-3x within minutes; the
difference between two drivers' per-statement cost (a few µs) then drowns.  This script
counts instead what a driver makes the CPU execute in user space: each (driver,
statement) cell runs in a worker process under ``valgrind --tool=callgrind`` twice, with
``--n1`` and ``--n2`` statements (defaults 1,000 and 3,000) after the same warm-up
(300 statements), and reports ``(I(n2) - I(n1)) / (n2 - n1)``: the instructions of one
statement, interpreter, driver, libc and (for asyncio) the event loop included; start-up,
imports and connecting cancel out.  PYTHONHASHSEED=0 makes the two runs of a cell alike.
Kernel work is not counted: every sync driver here makes the same two system calls per
statement (one send, one receive: ``strace -c`` shows it), so the kernel's share is the
same for all of them; asyncio drivers add the event loop's ``epoll_wait``.

``ping`` is the driver's own ``ping()`` (COM_PING): the round trip's floor in that
driver; ``above ping`` subtracts it, as issue 22's sync target is stated
(mysqlc's per-statement cost above its ping at most 0.5x mysqlclient's above its own).

Statements: ``select1`` ``SELECT 1`` + ``fetchall()``; ``point`` ``SELECT id, a, b, c
FROM t_instr WHERE id = %s`` (INT, BIGINT, VARCHAR(32), DOUBLE; 1,000 rows) +
``fetchall()``; ``update`` ``UPDATE t_instr_upd SET a = a + 1 WHERE id = %s``;
``insert`` ``INSERT INTO t_instr_ins (a, b, c) VALUES (%s, %s, %s)`` (BIGINT, VARCHAR,
DOUBLE; auto-increment id; autocommit on); ``pool-select1``, ``pool-point``,
``pool-update``, ``pool-insert`` (asyncio drivers only); on demand ``commit`` and
``rollback``, the connection's own calls; ``ss-select1``, ``ss-point``: the same on
the driver's unbuffered cursor (``SSCursor``; mysql.connector's default cursor, which is
unbuffered); ``dict-select1``, ``dict-point``: on the driver's buffered dict
cursor (``DictCursor``).  Drivers: also ``mysqlc.aiomysql``, mysqlc's aiomysql flavour
(the same classes and calls as aiomysql) (autocommit on: the server's no-op, so the
cost is the call's and the round trip's, as ``ping``'s):
the same through the driver's pool, ``--pool-size`` tasks (default 10) sharing a pool of
as many connections, each statement ``async with pool.acquire() as conn: async with
conn.cursor() as cur:`` as in bench_small.py's pooled mode (``--pool-size 1``: one task,
so the difference to the plain statement is the pool's and the cursor's cost;
``--pool-tasks 50 --pool-size 10``: 50 tasks, 40 of them waiting at any time).  Sync
drivers reuse one cursor; asyncio drivers ``await`` execute and fetchall on one cursor
of one connection (no pool), on the default asyncio loop and, with ``--loops
asyncio,uvloop``, on uvloop.

Usage::

    .venv/bin/python benchmarks/bench_instructions.py [--dsn mysql://u:p@host:port/db]
        [--drivers mysqlc,mysqlclient,...] [--statements ping,select1,point,update]
        [--loops asyncio,uvloop] [--pool-size N] [--pool-tasks N] [--json PATH]

Needs valgrind (``apt-get install valgrind``); without ``--dsn`` (or MYSQLC_TEST_DSN) a
private server is started (``mysqlc.server.get_server()``).  A driver that does not import
is left out, with the reason printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SYNC = ("mysqlc", "mysqlclient", "pymysql", "mysql.connector")
ASYNC = ("mysqlc.aio", "asyncmy", "aiomysql", "mysqlc.aiomysql")
DRIVERS = SYNC + ASYNC
STATEMENTS = ("ping", "select1", "point", "update", "insert")
#: statements that are a call of the connection's own (``commit``/``rollback``: the
#: COMMIT/ROLLBACK an ORM sends per transaction and per pool check-in; run on demand)
CONNECTION_CALLS = ("ping", "commit", "rollback")
WARMUP = 300
#: connections of the pooled statements (``pool-select1``, ``pool-update``)
POOL = int(os.environ.get("MYSQLC_BENCH_POOL", "10"))
#: their concurrent tasks (``--pool-tasks``; default: as many as connections)
POOL_TASKS = int(os.environ.get("MYSQLC_BENCH_POOL_TASKS", "0")) or POOL
SQL = {
    "select1": ("SELECT 1", False),
    "point": ("SELECT id, a, b, c FROM t_instr WHERE id = %s", True),
    "update": ("UPDATE t_instr_upd SET a = a + 1 WHERE id = %s", True),
    "insert": ("INSERT INTO t_instr_ins (a, b, c) VALUES (%s, %s, %s)", True),
}


# ------------------------------------------------------------------ the worker

def _args(statement, i):
    if statement == "insert":
        return (i, "name %d" % i, i / 7)
    return (i % 1000 + 1,)


def _sync_connect(driver, kw):
    if driver == "mysqlc":
        import mysqlc
        return mysqlc.connect(**kw, autocommit=True)
    if driver == "mysqlclient":
        import MySQLdb
        return MySQLdb.connect(**kw, autocommit=True)
    if driver == "pymysql":
        import pymysql
        return pymysql.connect(**kw, autocommit=True)
    import mysql.connector   # its C extension where installed, else its pure Python code
    return mysql.connector.connect(**kw, autocommit=True,
                                   use_pure=not getattr(mysql.connector, "HAVE_CEXT", False))


async def _async_connect(driver, kw):
    kw = dict(kw)
    if driver == "mysqlc.aio":
        import mysqlc.aio
        return await mysqlc.aio.connect(**kw, autocommit=True)
    kw["db"] = kw.pop("database")
    if driver == "mysqlc.aiomysql":
        import mysqlc.aiomysql
        return await mysqlc.aiomysql.connect(**kw, autocommit=True)
    if driver == "asyncmy":
        import asyncmy
        return await asyncmy.connect(**kw, autocommit=True)
    import aiomysql
    return await aiomysql.connect(**kw, autocommit=True)


#: each driver's dict cursor class (``dict-<statement>``) and unbuffered one
#: (``ss-<statement>``), as (module, attribute); mysql.connector's default cursor is
#: unbuffered (no entry)
CURSOR_CLASSES = {
    "dict": {"mysqlc": ("mysqlc.cursors", "DictCursor"),
             "mysqlclient": ("MySQLdb.cursors", "DictCursor"),
             "pymysql": ("pymysql.cursors", "DictCursor"),
             "mysqlc.aio": ("mysqlc.aio", "DictCursor"),
             "mysqlc.aiomysql": ("mysqlc.aiomysql", "DictCursor"),
             "asyncmy": ("asyncmy.cursors", "DictCursor"),
             "aiomysql": ("aiomysql", "DictCursor")},
    "ss": {"mysqlc": ("mysqlc.cursors", "SSCursor"),
           "mysqlclient": ("MySQLdb.cursors", "SSCursor"),
           "pymysql": ("pymysql.cursors", "SSCursor"),
           "mysqlc.aio": ("mysqlc.aio", "SSCursor"),
           "mysqlc.aiomysql": ("mysqlc.aiomysql", "SSCursor"),
           "asyncmy": ("asyncmy.cursors", "SSCursor"),
           "aiomysql": ("aiomysql", "SSCursor")},
}


def _cursor_class(kind, driver):
    """The driver's cursor class of `kind` ("dict", "ss"), or None (its default)."""
    import importlib
    where = CURSOR_CLASSES[kind].get(driver)
    return getattr(importlib.import_module(where[0]), where[1]) if where else None


def worker(driver, statement, n, kw):
    cls = None
    kind, _, rest = statement.partition("-")
    if rest and kind in CURSOR_CLASSES:
        statement = rest
        cls = _cursor_class(kind, driver)
    sql, has_args = SQL.get(statement, (None, False))
    if driver in SYNC:
        conn = _sync_connect(driver, kw)
        cur = conn.cursor(cls) if cls is not None else conn.cursor()

        def run(count):
            if statement in CONNECTION_CALLS:
                call = getattr(conn, statement)
                for _ in range(count):
                    call()
                return
            fetch = statement not in ("update", "insert")
            for i in range(count):
                cur.execute(sql, _args(statement, i)) if has_args else cur.execute(sql)
                if fetch:
                    cur.fetchall()
        run(WARMUP)
        run(n)
        conn.close()
        return
    import asyncio
    if statement.startswith("pool-"):
        return _pool_worker(driver, statement[5:], n, kw)

    async def main():
        conn = await _async_connect(driver, kw)
        cur = conn.cursor(cls) if cls is not None else conn.cursor()
        if driver == "mysqlc.aio" or hasattr(cur, "__await__"):
            cur = await cur if hasattr(cur, "__await__") else cur

        async def run(count):
            if statement in CONNECTION_CALLS:
                call = getattr(conn, statement)
                for _ in range(count):
                    await call()
                return
            fetch = statement not in ("update", "insert")
            for i in range(count):
                if has_args:
                    await cur.execute(sql, _args(statement, i))
                else:
                    await cur.execute(sql)
                if fetch:
                    await cur.fetchall()
        await run(WARMUP)
        await run(n)
        close = conn.close()
        if asyncio.iscoroutine(close):
            await close
        elif hasattr(conn, "wait_closed"):
            await conn.wait_closed()
    if os.environ.get("MYSQLC_BENCH_LOOP") == "uvloop":
        import uvloop
        uvloop.install()
    asyncio.run(main())


async def _async_pool(driver, kw):
    kw = dict(kw, autocommit=True)
    if driver == "mysqlc.aio":
        import mysqlc.aio
        return await mysqlc.aio.create_pool(minsize=POOL, maxsize=POOL, **kw)
    kw["db"] = kw.pop("database")
    if driver == "mysqlc.aiomysql":
        import mysqlc.aiomysql
        return await mysqlc.aiomysql.create_pool(minsize=POOL, maxsize=POOL, **kw)
    if driver == "asyncmy":
        import asyncmy
        return await asyncmy.create_pool(minsize=POOL, maxsize=POOL, **kw)
    import aiomysql
    return await aiomysql.create_pool(minsize=POOL, maxsize=POOL, **kw)


def _pool_worker(driver, statement, n, kw):
    """``pool-<statement>``: POOL_TASKS tasks share the driver's pool of POOL connections, each
    statement ``async with pool.acquire() as conn: async with conn.cursor() as cur:``
    (bench_small.py's pooled mode); `n` statements in all."""
    import asyncio
    sql, has_args = SQL[statement]
    fetch = statement not in ("update", "insert")

    async def main():
        pool = await _async_pool(driver, kw)

        async def run(count):
            left = [count]

            async def task():
                while left[0] > 0:
                    left[0] -= 1
                    i = left[0]
                    async with pool.acquire() as conn:
                        async with conn.cursor() as cur:
                            if has_args:
                                await cur.execute(sql, _args(statement, i))
                            else:
                                await cur.execute(sql)
                            if fetch:
                                await cur.fetchall()
            await asyncio.gather(*[task() for _ in range(POOL_TASKS)])
        await run(WARMUP)
        await run(n)
        pool.close()
        await pool.wait_closed()
    if os.environ.get("MYSQLC_BENCH_LOOP") == "uvloop":
        import uvloop
        uvloop.install()
    asyncio.run(main())


# ------------------------------------------------------------------ the parent

def probe(driver):
    mod = {"mysqlclient": "MySQLdb", "mysql.connector": "mysql.connector"}.get(driver, driver)
    r = subprocess.run([sys.executable, "-c", "import %s" % mod], capture_output=True,
                       text=True, cwd=ROOT)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]


def count(driver, statement, n, kw, loop="asyncio"):
    """User-space instructions of a worker running `n` statements (callgrind's total)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONHASHSEED="0", MYSQLC_BENCH_KW=json.dumps(kw),
                   MYSQLC_BENCH_LOOP=loop,
                   PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s/cg.out" % tmp,
               sys.executable, os.path.abspath(__file__), "--worker", driver, statement,
               str(n)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
        m = re.search(r"Collected : (\d+)", r.stderr)
        if r.returncode != 0 or not m:
            raise RuntimeError("%s %s: worker failed (%d): %s" % (
                driver, statement, r.returncode, r.stderr.strip()[-800:]))
        return int(m.group(1))


def setup_tables(kw):
    import mysqlc
    with mysqlc.connect(**kw, autocommit=True) as conn:
        cur = conn.cursor()
        for table in ("t_instr", "t_instr_upd"):
            cur.execute("CREATE TABLE IF NOT EXISTS %s (id INT PRIMARY KEY, a BIGINT, "
                        "b VARCHAR(32), c DOUBLE)" % table)
            cur.execute("SELECT COUNT(*) FROM %s" % table)
            if cur.fetchone()[0] != 1000:
                cur.execute("DELETE FROM %s" % table)
                cur.executemany("INSERT INTO %s VALUES (%%s, %%s, %%s, %%s)" % table,
                                [(i, i * 1000003, "name %d" % i, i / 7) for i in range(1, 1001)])
        cur.execute("CREATE TABLE IF NOT EXISTS t_instr_ins (id INT AUTO_INCREMENT PRIMARY KEY,"
                    " a BIGINT, b VARCHAR(32), c DOUBLE)")
        cur.execute("TRUNCATE TABLE t_instr_ins")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dsn", help="an existing server, mysql://user:pw@host:port/db")
    p.add_argument("--drivers", default=",".join(DRIVERS))
    p.add_argument("--statements", default=",".join(STATEMENTS))
    p.add_argument("--loops", default="asyncio",
                   help="event loops for the asyncio drivers: asyncio,uvloop")
    p.add_argument("--n1", type=int, default=1000)
    p.add_argument("--n2", type=int, default=3000)
    p.add_argument("--pool-size", type=int, default=POOL,
                   help="tasks and connections of the pool-* statements (default 10)")
    p.add_argument("--pool-tasks", type=int, default=0,
                   help="concurrent tasks of the pool-* statements (default: --pool-size; "
                        "more than --pool-size: tasks wait for a connection, as "
                        "bench_small.py's pool50 mode)")
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--worker", nargs=3, metavar=("DRIVER", "STATEMENT", "N"),
                   help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        driver, statement, n = args.worker
        worker(driver, statement, int(n), json.loads(os.environ["MYSQLC_BENCH_KW"]))
        return 0
    os.environ["MYSQLC_BENCH_POOL"] = str(args.pool_size)   # read by the workers
    os.environ["MYSQLC_BENCH_POOL_TASKS"] = str(args.pool_tasks or args.pool_size)
    if not shutil.which("valgrind"):
        print("bench_instructions: needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    sys.path.insert(0, ROOT)
    import mysqlc.server as server_mod
    dsn = args.dsn or os.environ.get("MYSQLC_TEST_DSN")
    ctx = server_mod.ExternalServer(dsn) if dsn else server_mod.get_server()
    srv = ctx.__enter__()
    try:
        kw = srv.connect_kwargs()
        setup_tables(kw)
        drivers = [d for d in args.drivers.split(",") if d]
        statements = [s for s in args.statements.split(",") if s]
        results = {}
        for d in drivers:
            why = probe(d)
            if why:
                print("%-16s left out: %s" % (d, why))
                continue
            if d == "mysql.connector":
                r = subprocess.run([sys.executable, "-c", "import mysql.connector as m; "
                                    "print(getattr(m, 'HAVE_CEXT', False))"],
                                   capture_output=True, text=True)
                print("mysql.connector: %s" % ("C extension" if r.stdout.strip() == "True"
                                               else "pure Python (no C extension here)"))
            loops = [lp for lp in args.loops.split(",") if lp] if d in ASYNC else [None]
            for loop in loops:
                cell = d if loop in (None, "asyncio") else "%s/%s" % (d, loop)
                for s in statements:
                    if s.startswith("pool-") and d not in ASYNC:
                        continue   # the pooled statements are the asyncio drivers' own
                    try:
                        a = count(d, s, args.n1, kw, loop or "asyncio")
                        b = count(d, s, args.n2, kw, loop or "asyncio")
                    except RuntimeError as exc:
                        print("%-22s %-8s failed: %s" % (cell, s, str(exc)[-300:]))
                        continue
                    results.setdefault(cell, {})[s] = (b - a) / (args.n2 - args.n1)
                    print("%-22s %-8s %9.0f instructions per statement"
                          % (cell, s, results[cell][s]), flush=True)
        report(results, statements)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"n1": args.n1, "n2": args.n2, "instructions": results}, f,
                          indent=1)
        return 0
    finally:
        ctx.__exit__(None, None, None)


def report(results, statements):
    shown = [s for s in statements if s != "ping"]
    print()
    print("| driver | " + " | ".join(statements) + " | " +
          " | ".join("%s above ping" % s for s in shown) + " |")
    print("|---" * (1 + len(statements) + len(shown)) + "|")
    for d, cells in results.items():
        ping = cells.get("ping")
        row = ["%.0f" % cells[s] if s in cells else "-" for s in statements]
        above = ["%.0f" % (cells[s] - ping) if ping is not None and s in cells else "-"
                 for s in shown]
        print("| %s | %s | %s |" % (d, " | ".join(row), " | ".join(above)))
    base, mine = results.get("mysqlclient"), results.get("mysqlc")
    if base and mine and "ping" in base and "ping" in mine:
        for s in shown:
            if s in base and s in mine:
                print("sync %-8s mysqlc / mysqlclient above ping: %.2f (target <= 0.5)" % (
                    s, (mine[s] - mine["ping"]) / (base[s] - base["ping"])))
    for suffix in ("", "/uvloop"):
        base, mine = results.get("asyncmy" + suffix), results.get("mysqlc.aio" + suffix)
        if base and mine:
            for s in shown:
                if s in base and s in mine:
                    # issue 22's 0.7 is a sequential target; the pooled ratios are shown
                    # as they are (the pooled target is statements/s: bench_small.py)
                    note = ("" if s.startswith("pool-")
                            else " (target <= 0.7; user space only)")
                    print("asyncio%s %-12s mysqlc.aio / asyncmy: %.2f%s"
                          % (suffix, s, mine[s] / base[s], note))


if __name__ == "__main__":
    sys.exit(main())
