#!/usr/bin/env python3
"""Where a pooled statement's client time goes (issue 22): mysqlc.aio against asyncmy,
10 concurrent tasks, ``SELECT 1`` + ``fetchall()``, in three shapes, one worker process
per (driver, shape, loop) cell:

* ``full``: each statement ``async with pool.acquire() as conn: async with conn.cursor()
  as cur: ...`` (bench_small.py's pooled mode);
* ``nocur``: the pool as in ``full``, but each connection keeps one cursor (no cursor made
  and closed per statement);
* ``nopool``: 10 connections opened beforehand, one per task, each with one cursor.

Per cell: statements/s (wall), the worker's user and sys CPU per statement
(getrusage), and ``busy``, its CPU over the wall time: near 1.0, the single-threaded
client sets the rate (one statement per µs of client CPU); well below, it waits for the
server.  The difference between the shapes is the pool's and the cursor's own client
cost.  Warm-up: 3,000 statements per cell before the timed ones.

Usage::

    .venv/bin/python benchmarks/bench_pool_parts.py --dsn mysql://u:p@host:port/db
        [--drivers mysqlc-aio,asyncmy] [--shapes full,nocur,nopool]
        [--loops asyncio,uvloop] [--n 30000] [--repeat 2]

``--dsn`` (or MYSQLC_TEST_DSN) names the server; add ``?unix_socket=PATH`` to connect
through the server's unix socket.  A driver that does not import is reported as such.
"""

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
import urllib.parse

DRIVERS = ("mysqlc-aio", "asyncmy")
SHAPES = ("full", "nocur", "nopool")
LOOPS = ("asyncio", "uvloop")
TASKS = 10
WARMUP = 3000
SQL = "SELECT 1"


def connect_kwargs(dsn):
    """connect() keyword arguments (both drivers' names) of ``mysql://user:pw@host:port/db``
    (``?unix_socket=PATH``: the socket instead of host and port); autocommit on."""
    u = urllib.parse.urlsplit(dsn)
    kw = {"user": urllib.parse.unquote(u.username or ""),
          "password": urllib.parse.unquote(u.password or ""),
          "db": u.path.lstrip("/") or None, "autocommit": True}
    sock = urllib.parse.parse_qs(u.query).get("unix_socket")
    if sock:
        kw["unix_socket"] = sock[0]
    else:
        kw.update(host=u.hostname or "127.0.0.1", port=u.port or 3306)
    return kw


async def cell(driver, shape, n, kw):
    """One cell: `n` statements of `shape` by TASKS tasks after WARMUP untimed ones;
    {"sps": statements/s, "user_us" / "sys_us": CPU µs per statement, "busy": CPU s per
    wall s}."""
    if driver == "mysqlc-aio":
        import mysqlc.aio as mod
    else:
        import asyncmy as mod
    pool = await mod.create_pool(minsize=TASKS, maxsize=TASKS, **kw)
    conns = [await mod.connect(**kw) for _ in range(TASKS)] if shape == "nopool" else []
    kept = {}

    async def client(slot, count):
        if shape == "nopool":
            cur = conns[slot].cursor()
            for _ in range(slot, count, TASKS):
                await cur.execute(SQL)
                await cur.fetchall()
            return
        for _ in range(slot, count, TASKS):
            async with pool.acquire() as conn:
                if shape == "full":
                    async with conn.cursor() as cur:
                        await cur.execute(SQL)
                        await cur.fetchall()
                else:
                    cur = kept.get(id(conn))
                    if cur is None:
                        cur = kept[id(conn)] = conn.cursor()
                    await cur.execute(SQL)
                    await cur.fetchall()

    await asyncio.gather(*(client(s, WARMUP) for s in range(TASKS)))
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    await asyncio.gather(*(client(s, n) for s in range(TASKS)))
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    for c in conns:
        c.close()
    pool.close()
    await pool.wait_closed()
    wall = t1 - t0
    user, sys_ = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
    return {"sps": n / wall, "user_us": user / n * 1e6, "sys_us": sys_ / n * 1e6,
            "busy": (user + sys_) / wall}


def worker(argv):
    """``--worker DRIVER SHAPE LOOP N DSN``: one cell in this process, its figures as one
    JSON line on stdout."""
    driver, shape, loop, n, dsn = argv[0], argv[1], argv[2], int(argv[3]), argv[4]
    if loop == "uvloop":
        import uvloop
        uvloop.install()
    print(json.dumps(asyncio.run(cell(driver, shape, n, connect_kwargs(dsn)))))


def main():
    if sys.argv[1:2] == ["--worker"]:
        return worker(sys.argv[2:])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dsn", default=os.environ.get("MYSQLC_TEST_DSN"))
    p.add_argument("--drivers", default=",".join(DRIVERS))
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--loops", default=",".join(LOOPS))
    p.add_argument("--n", type=int, default=30000, help="statements per cell (30000)")
    p.add_argument("--repeat", type=int, default=2, help="runs per cell (2)")
    a = p.parse_args()
    if not a.dsn:
        p.error("--dsn (or MYSQLC_TEST_DSN) is needed")
    rows = []
    for r in range(a.repeat):
        for loop in a.loops.split(","):
            for driver in a.drivers.split(","):
                for shape in a.shapes.split(","):
                    proc = subprocess.run(
                        [sys.executable, __file__, "--worker", driver, shape, loop,
                         str(a.n), a.dsn], capture_output=True, text=True, timeout=600)
                    if proc.returncode:
                        print("%s %s %s failed: %s" % (driver, shape, loop,
                                                       proc.stderr.strip()[-300:]))
                        continue
                    f = json.loads(proc.stdout.strip().splitlines()[-1])
                    rows.append((r + 1, loop, driver, shape, f))
                    print("run %d  %-8s %-11s %-7s %8.0f stmts/s  user %5.1f  sys %5.1f "
                          "µs/stmt  busy %.2f" % (r + 1, loop, driver, shape, f["sps"],
                                                  f["user_us"], f["sys_us"], f["busy"]),
                          flush=True)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
