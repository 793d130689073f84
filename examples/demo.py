#!/usr/bin/env python3
"""mysqlc demo: a private MariaDB server, a bulk load, typical queries, transactions,
errors, a full-table fetch compared with the peer drivers that are installed, the
columnar API and the asyncio API (mysqlc.aio).

    python examples/demo.py                  # private server, 100,000 rows
    python examples/demo.py --rows 20000     # smaller
    python examples/demo.py --dsn mysql://user:pw@127.0.0.1:3306/test   # existing server

Exits 0 when every step worked and mysqlc returned exactly the rows it stored.
"""

import argparse
import datetime
import decimal
import gc
import hashlib
import importlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

TABLE = "demo_items"
COLUMNS = ("id", "name", "price", "qty", "created", "day", "ratio", "notes", "payload")
CREATE = """CREATE TABLE demo_items (
    id      INT NOT NULL PRIMARY KEY,
    name    VARCHAR(100) NOT NULL,
    price   DECIMAL(10,2) NOT NULL,
    qty     INT NOT NULL,
    created DATETIME(6) NOT NULL,
    day     DATE NOT NULL,
    ratio   DOUBLE NOT NULL,
    notes   TEXT NULL,
    payload BLOB NOT NULL,
    KEY idx_day (day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"""
INSERT = "INSERT INTO demo_items VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
PEERS = (("mysqlc", "mysqlc", "mysqlc"), ("mysqlclient", "MySQLdb", "mysqlclient"),
         ("PyMySQL", "pymysql", "PyMySQL"))
FETCH_RUNS = 3


# ----------------------------------------------------------------------------- helpers

def load_server_module():
    """mysqlc.server, loaded from the repository file if ``import mysqlc`` fails."""
    try:
        from mysqlc import server
        return server
    except Exception:
        pass
    path = os.path.join(REPO, "mysqlc", "server.py")
    spec = importlib.util.spec_from_file_location("_mysqlc_server_standalone", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def import_driver(module_name):
    try:
        return importlib.import_module(module_name)
    except ImportError:
        if module_name != "mysqlc":
            raise
    sys.path.insert(0, REPO)             # built in place, not installed
    sys.modules.pop("mysqlc", None)
    return importlib.import_module("mysqlc")


def version_of(mod, dist):
    """The version of the installed distribution `dist` (``importlib.metadata``), which
    is what pip installed: a module's ``__version__`` can be something else (PyMySQL's
    is the mysqlclient version it claims for Django, not its release).  The module's
    ``__version__`` only when no distribution is installed (mysqlc built in place)."""
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return getattr(mod, "__version__", None) or "?"


def section(title):
    print()
    print("== %s %s" % (title, "=" * max(3, 74 - len(title))))


def fmt(n):
    return "{:,.0f}".format(n)


def row_digest(rows):
    h = hashlib.sha1()
    for r in rows:
        h.update(repr(tuple(r)).encode())
        h.update(b"\n")
    return h.hexdigest()[:12]


def table(headers, rows, indent="  "):
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(vals):
        return indent + "  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                                  for i, (v, w) in enumerate(zip(vals, widths)))
    print(line(headers))
    print(indent + "  ".join("-" * w for w in widths))
    for r in cells:
        print(line(r))


class DemoFailure(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise DemoFailure(message)


# ----------------------------------------------------------------------------- data

NAMES = ("Widget", "Gadget", "Caf\u00e9 cr\u00e8me", "\u00c6r\u00f8sk\u00f8bing",
         "\u6771\u4eac\u30bf\u30ef\u30fc", "Pizza \U0001f355", "O'Brien's", "back\\slash",
         "Stra\u00dfe", "\u041c\u043e\u0441\u043a\u0432\u0430")


def make_rows(n, seed=2024):
    """Deterministic rows of every column type, including the awkward values."""
    rnd = random.Random(seed).random          # randrange() is slow; int(rnd() * k) is not
    t0 = datetime.datetime(2020, 1, 1)
    d0 = datetime.date(2020, 1, 1)
    td = datetime.timedelta
    cents = decimal.Decimal
    sha256 = hashlib.sha256
    names = NAMES
    rows = []
    append = rows.append
    for i in range(1, n + 1):
        price = cents(1 + int(rnd() * 9999999)).scaleb(-2)            # 0.01 .. 99999.99
        append((
            i,
            "%s #%d" % (names[i % len(names)], i),
            price,
            int(rnd() * 5000),
            t0 + td(0, int(rnd() * 157680000), int(rnd() * 1000000)),   # 5 years, µs
            d0 + td(int(rnd() * 1825)),
            round(rnd() * 100.0 - 50.0, 6),
            None if i % 4 == 0 else ("note %d: " % i) + "lorem ipsum " * (i % 5),
            b"\x00'\"\\\n" + sha256(b"%d" % i).digest()[: i % 33],
        ))
    return rows


# ----------------------------------------------------------------------------- fetch worker

def fetch_worker():
    """Subprocess: import one driver, fetch the whole table FETCH_RUNS times, print JSON."""
    spec = json.loads(sys.stdin.read())
    out = {}
    try:
        mod = import_driver(spec["module"])
        out["version"] = version_of(mod, spec["dist"])
        conn = mod.connect(charset="utf8mb4", **spec["connect"])
        cur = conn.cursor()
        runs = []
        digest = count = None
        for _ in range(spec["runs"]):
            gc.collect()
            c0 = time.process_time()
            t0 = time.perf_counter()
            cur.execute("SELECT * FROM demo_items")
            rows = cur.fetchall()
            t1 = time.perf_counter()
            c1 = time.process_time()
            runs.append((t1 - t0, c1 - c0))
            if digest is None:
                count, digest = len(rows), row_digest(rows)
            del rows
        conn.close()
        out.update(ok=True, runs=runs, count=count, digest=digest)
    except ImportError as exc:
        out.update(ok=False, missing=True, error=str(exc))
    except Exception as exc:
        out.update(ok=False, error="%s: %s" % (type(exc).__name__, exc))
    print("RESULT " + json.dumps(out))
    return 0


def run_fetch(module, dist, connect):
    spec = json.dumps({"module": module, "dist": dist, "connect": connect, "runs": FETCH_RUNS})
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--fetch-worker"],
                              input=spec, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": "timed out"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (proc.stderr or "").strip().splitlines()
    return {"ok": False, "error": "exit status %d %s" % (proc.returncode,
                                                         tail[-1] if tail else "")}


# ----------------------------------------------------------------------------- demo

def run_columnar(mysqlc, connect, rows):
    """read_sql() of the table into Arrow, then load_table() of that Arrow table into a
    copy; both checked against the rows that were inserted."""
    section("8. Columnar: mysqlc.read_sql() to Arrow, cursor.load_table() from Arrow")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        print("pyarrow is not installed: skipped (pip install pyarrow)")
        return
    c = mysqlc.connect(charset="utf8mb4", local_infile=True, **connect)
    try:
        t0 = time.perf_counter()
        table = mysqlc.read_sql(c, "SELECT * FROM demo_items ORDER BY id")
        t_read = time.perf_counter() - t0
        print("read_sql(): %s rows x %d columns -> pyarrow.Table in %.3f s (%s rows/s), "
              "%.1f MB of Arrow buffers"
              % (fmt(table.num_rows), table.num_columns, t_read, fmt(table.num_rows / t_read),
                 table.nbytes / 1e6))
        print("  " + ", ".join("%s: %s" % (f.name, f.type) for f in table.schema))
        expect([tuple(r.values()) for r in table.to_pylist()] == rows,
               "the Arrow table differs from the inserted rows")
        print("  equal to the inserted rows, value by value")
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE demo_copy LIKE demo_items")
        t0 = time.perf_counter()
        n = cur.load_table("demo_copy", table)
        t_load = time.perf_counter() - t0
        cur.execute("SELECT * FROM demo_copy ORDER BY id")
        back = cur.fetchall()
        expect(n == len(rows) and list(back) == rows, "load_table() did not round-trip")
        print("load_table('demo_copy', table): %s rows in %.3f s (%s rows/s) over LOAD DATA "
              "LOCAL INFILE, streamed from memory; selected back equal"
              % (fmt(n), t_load, fmt(n / t_load)))
    finally:
        c.close()


def run_asyncio(connect, rows, reference):
    """Step 9: the same table through mysqlc.aio -- concurrent point queries on a pool,
    a streamed read compared with the rows stored, and a timed-out statement that is
    stopped on the server while its connection stays usable."""
    import asyncio
    import mysqlc.aio

    section("9. asyncio: mysqlc.aio")

    async def main():
        pool = await mysqlc.aio.create_pool(minsize=5, maxsize=5, charset="utf8mb4",
                                            **connect)
        ids = [rows[(i * 7919) % len(rows)][0] for i in range(200)]

        async def point(item_id):
            async with pool.acquire() as conn:
                async with conn.cursor() as cur:
                    await cur.execute("SELECT id, name FROM demo_items WHERE id = %s",
                                      (item_id,))
                    return await cur.fetchone()
        t0 = time.perf_counter()
        got = await asyncio.gather(*(point(i) for i in ids))
        dt = time.perf_counter() - t0
        expect([g[0] for g in got] == ids, "a task got another task's row")
        print("%d point queries from %d tasks on a pool of %d connections: %.0f ms "
              "(%s queries/s), each task got its own row"
              % (len(ids), len(ids), pool.size, dt * 1000, fmt(len(ids) / dt)))

        async with pool.acquire() as conn:
            async with conn.cursor(mysqlc.aio.SSCursor) as cur:
                t0 = time.perf_counter()
                await cur.execute("SELECT * FROM demo_items")
                streamed = [row async for row in cur]
                dt = time.perf_counter() - t0
            expect(row_digest(streamed) == reference and len(streamed) == len(rows),
                   "the streamed rows differ from the stored ones")
            print("streamed all %s rows with an SSCursor (async for): %.2f s, the same "
                  "rows as the sync fetch" % (fmt(len(streamed)), dt))
            del streamed

            cur = conn.cursor()
            t0 = time.perf_counter()
            try:   # wait_for, not asyncio.timeout(): that one is Python 3.11+
                await asyncio.wait_for(cur.execute("SELECT SLEEP(30)"), 0.3)
            except asyncio.TimeoutError:
                pass
            dt = time.perf_counter() - t0
            await cur.execute("SELECT %s", ("same connection",))
            after = (await cur.fetchone())[0]
            expect(after == "same connection", "the connection answered %r" % (after,))
            await cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                              "WHERE INFO LIKE 'SELECT SLEEP(30)%%'")
            left = (await cur.fetchone())[0]
            expect(left == 0, "the timed-out statement still runs on the server")
            print("asyncio.wait_for(..., 0.3) around SELECT SLEEP(30): TimeoutError after "
                  "%.2f s; the statement was stopped on the server (KILL QUERY) and the same "
                  "connection answered the next query" % dt)
        pool.close()
        await pool.wait_closed()

    asyncio.run(main())


def demo(args):
    t_start = time.perf_counter()
    print("mysqlc demo  (Python %s)" % sys.version.split()[0])
    try:
        mysqlc = import_driver(args.driver)
        mysqlc.connect  # noqa: B018 - fails early when the package is a stub
    except Exception as exc:
        print("cannot import %s: %s: %s" % (args.driver, type(exc).__name__, exc))
        if args.driver == "mysqlc":
            print("build it first:  pip install -e .   (or python setup.py build_ext --inplace)")
        return 1
    dist = {"MySQLdb": "mysqlclient", "pymysql": "PyMySQL"}.get(args.driver, args.driver)
    print("%s %s from %s" % (args.driver, version_of(mysqlc, dist),
                             os.path.dirname(mysqlc.__file__ or "?")))
    if args.driver != "mysqlc":
        print("(steps 1-6 run with %s instead of mysqlc: --driver)" % args.driver)

    server = load_server_module()
    section("1. Server")
    t0 = time.perf_counter()
    ctx = server.ExternalServer(args.dsn) if args.dsn else server.get_server()
    try:
        srv = ctx.__enter__()
    except Exception as exc:
        print("no server: %s" % exc)
        return 1
    try:
        kind = "existing server" if srv.pid is None else "private mariadbd, pid %d" % srv.pid
        print("%s at %s:%s (unix socket %s), started in %.1f s"
              % (kind, srv.host, srv.port, srv.unix_socket or "-", time.perf_counter() - t0))
        return run_demo(args, mysqlc, srv, t_start)
    finally:
        ctx.__exit__(None, None, None)


def run_demo(args, mysqlc, srv, t_start):
    connect = srv.connect_kwargs()
    conn = mysqlc.connect(charset="utf8mb4", **connect)
    cur = conn.cursor()
    cur.execute("SELECT VERSION(), @@autocommit, @@character_set_connection, CONNECTION_ID()")
    version, autocommit, charset, thread = cur.fetchone()
    print("connected with %s.connect(host=%r, port=%r, user=%r, database=%r, charset=%r)"
          % (mysqlc.__name__, connect.get("host"), connect.get("port"), connect["user"],
             connect["database"], "utf8mb4"))
    print("server version %s, connection id %s, autocommit=%s, charset=%s"
          % (version, thread, autocommit, charset))

    # -------------------------------------------------------------- 2. load
    section("2. Bulk load with executemany")
    cur.execute("DROP TABLE IF EXISTS demo_items")
    cur.execute(CREATE)
    t0 = time.perf_counter()
    rows = make_rows(args.rows)
    t_gen = time.perf_counter() - t0
    batch = args.batch
    t0 = time.perf_counter()
    for start in range(0, len(rows), batch):
        cur.executemany(INSERT, rows[start:start + batch])
    conn.commit()
    t_load = time.perf_counter() - t0
    print("table demo_items: id INT, name VARCHAR(100), price DECIMAL(10,2), qty INT, "
          "created DATETIME(6),\n  day DATE, ratio DOUBLE, notes TEXT NULL, payload BLOB")
    print("generated %s rows in Python in %.2f s" % (fmt(len(rows)), t_gen))
    print("inserted  %s rows with executemany() in batches of %s + commit: %.2f s "
          "(%s rows/s)" % (fmt(len(rows)), fmt(batch), t_load, fmt(len(rows) / t_load)))

    # -------------------------------------------------------------- 3. queries
    section("3. Queries")

    def timed(sql, params=None):
        t = time.perf_counter()
        cur.execute(sql, params) if params is not None else cur.execute(sql)
        result = cur.fetchall()
        return result, (time.perf_counter() - t) * 1000.0

    res, ms = timed("SELECT COUNT(*) FROM demo_items")
    print("SELECT COUNT(*) FROM demo_items  ->  %s   (%.1f ms)" % (fmt(res[0][0]), ms))
    expect(res[0][0] == len(rows), "COUNT(*) is %s, expected %d" % (res[0][0], len(rows)))

    sql = ("SELECT YEAR(day) AS y, COUNT(*) AS n, SUM(qty) AS qty, AVG(price) AS avg_price, "
           "MAX(created) AS latest FROM demo_items GROUP BY YEAR(day) ORDER BY y")
    res, ms = timed(sql)
    print("\n%s   (%.1f ms)" % (sql, ms))
    table(["year", "rows", "sum(qty)", "avg(price)", "max(created)"],
          [(y, fmt(n), fmt(q), "%.2f" % a, latest) for y, n, q, a, latest in res])
    by_year = {}
    for r in rows:
        by_year[r[5].year] = by_year.get(r[5].year, 0) + 1
    expect({y: n for y, n, *_ in res} == by_year, "GROUP BY counts differ from the data")

    point_id = min(12345, len(rows))
    res, ms = timed("SELECT * FROM demo_items WHERE id = %s", (point_id,))
    print("\nSELECT * FROM demo_items WHERE id = %%s   with (%d,)   (%.2f ms)" % (point_id, ms))
    expect(len(res) == 1 and tuple(res[0]) == rows[point_id - 1],
           "point select returned %r, expected %r" % (res, rows[point_id - 1]))
    print("  -> 1 row, equal to the row that was inserted")

    lo, hi = datetime.date(2021, 3, 1), datetime.date(2021, 3, 7)
    res, ms = timed("SELECT id, name, day FROM demo_items WHERE day BETWEEN %s AND %s "
                    "ORDER BY day, id", (lo, hi))
    want = sum(1 for r in rows if lo <= r[5] <= hi)
    print("\nSELECT id, name, day FROM demo_items WHERE day BETWEEN %%s AND %%s ORDER BY day, id"
          "\n  with (%s, %s)  ->  %s rows (index range scan, %.1f ms); first three:"
          % (lo, hi, fmt(len(res)), ms))
    for r in res[:3]:
        print("  ", r)
    expect(len(res) == want, "range scan returned %d rows, expected %d" % (len(res), want))

    res, ms = timed("SELECT id, name, price FROM demo_items ORDER BY price DESC, id LIMIT 5")
    print("\nSELECT id, name, price FROM demo_items ORDER BY price DESC, id LIMIT 5   (%.1f ms)"
          % ms)
    table(["id", "name", "price"], res)
    top = sorted(rows, key=lambda r: (-r[2], r[0]))[:5]
    expect([tuple(r) for r in res] == [(r[0], r[1], r[2]) for r in top],
           "ORDER BY ... LIMIT returned other rows than expected")

    # -------------------------------------------------------------- 4. types
    section("4. Decoded values and their Python types")
    cur.execute("SELECT * FROM demo_items WHERE id IN (%s, %s, %s) ORDER BY id",
                (1, 4, min(7, len(rows))))
    sample = cur.fetchall()
    names = [d[0] for d in cur.description]
    for r in sample[:2]:
        print("row id=%s:" % r[0])
        for name, value in zip(names, r):
            text = repr(value)
            if len(text) > 60:
                text = text[:57] + "..."
            print("  %-8s %-16s %s" % (name, type(value).__name__, text))
    expect(all(tuple(r) == rows[r[0] - 1] for r in sample), "sample rows differ from the data")

    # -------------------------------------------------------------- 5. transactions
    section("5. Transactions (autocommit off)")
    new_id = len(rows) + 1
    new_row = (new_id, "temporary \u2713", decimal.Decimal("9.99"), 1,
               datetime.datetime(2024, 2, 29, 12, 0, 0, 1), datetime.date(2024, 2, 29), 0.5,
               None, b"\xff\x00")

    def count_id(c):
        c.execute("SELECT COUNT(*) FROM demo_items WHERE id = %s", (new_id,))
        return c.fetchall()[0][0]

    other = mysqlc.connect(charset="utf8mb4", **connect)
    ocur = other.cursor()
    if hasattr(conn, "begin"):
        conn.begin()
        how = "conn.begin()"
    else:
        cur.execute("BEGIN")
        how = "BEGIN"
    cur.execute(INSERT, new_row)
    seen_inside, seen_outside = count_id(cur), count_id(ocur)
    other.rollback()
    conn.rollback()
    after = count_id(cur)
    print("%s; INSERT id=%d -> visible here: %d, from a 2nd connection: %d; rollback() -> "
          "rows with that id: %d" % (how, new_id, seen_inside, seen_outside, after))
    expect((seen_inside, seen_outside, after) == (1, 0, 0), "rollback did not undo the insert")
    cur.execute(INSERT, new_row)
    conn.commit()
    seen_outside = count_id(ocur)
    other.rollback()
    print("INSERT id=%d; commit() -> the 2nd connection sees %d row" % (new_id, seen_outside))
    expect(seen_outside == 1, "committed row is not visible from another connection")
    cur.execute("DELETE FROM demo_items WHERE id = %s", (new_id,))
    conn.commit()
    other.close()

    # -------------------------------------------------------------- 6. errors
    section("6. Errors")
    cases = [
        ("duplicate key", "INSERT INTO demo_items VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
         rows[0], "IntegrityError", 1062),
        ("syntax error", "SELEC * FROM demo_items", None, "ProgrammingError", 1064),
        ("unknown table", "SELECT * FROM no_such_table", None, "ProgrammingError", 1146),
    ]
    for label, sql, params, cls_name, errno in cases:
        cls = getattr(mysqlc, cls_name)
        try:
            cur.execute(sql, params) if params is not None else cur.execute(sql)
        except cls as exc:
            code = exc.args[0] if exc.args else None
            msg = exc.args[1] if len(exc.args) > 1 else ""
            print("%-14s -> %s.%s  errno=%s\n%17s%s" % (label, mysqlc.__name__,
                                                          type(exc).__name__, code, "", msg))
            expect(code == errno, "%s: errno %r, expected %d" % (label, code, errno))
            expect(isinstance(exc, mysqlc.DatabaseError) and isinstance(exc, mysqlc.Error),
                   "%s is not a DatabaseError" % type(exc).__name__)
        else:
            raise DemoFailure("%s: no %s raised" % (label, cls_name))
        conn.rollback()
    cur.execute("SELECT 1")
    expect(cur.fetchall()[0][0] == 1, "connection unusable after errors")
    print("the connection is still usable after the errors (SELECT 1 -> 1)")

    # -------------------------------------------------------------- 7. fetch speed
    section("7. Full-table fetch: SELECT * FROM demo_items, cursor.fetchall()")
    t0 = time.perf_counter()
    cur.execute("SELECT * FROM demo_items")
    fetched = cur.fetchall()
    t_fetch = time.perf_counter() - t0
    expect(len(fetched) == len(rows), "fetched %d rows, expected %d" % (len(fetched), len(rows)))
    bad = next((i for i, (a, b) in enumerate(zip(fetched, rows)) if tuple(a) != b), None)
    expect(bad is None, "row %s differs: got %r, stored %r"
           % (bad, fetched[bad] if bad is not None else None,
              rows[bad] if bad is not None else None))
    reference = row_digest(fetched)
    print("%s read back all %s rows exactly as they were inserted (%.2f s)"
          % (mysqlc.__name__, fmt(len(fetched)), t_fetch))
    del fetched
    conn.close()

    print("each driver in its own process, best of %d runs:" % FETCH_RUNS)
    results = []
    for label, module, dist in PEERS:
        if args.no_peers and label != "mysqlc":
            continue
        results.append((label, run_fetch(module, dist, connect)))
    base = next((r for label, r in results if label == "mysqlc" and r.get("ok")), None)
    out_rows, notes = [], []
    for label, r in results:
        if not r.get("ok"):
            if r.get("missing"):
                out_rows.append((label, "-", "-", "-", "-", "-", "not installed"))
            else:
                out_rows.append((label, "-", "-", "-", "-", "-", "FAILED"))
                notes.append("%s failed: %s" % (label, r.get("error")))
            continue
        wall = min(w for w, _ in r["runs"])
        cpu = sorted(c for _, c in r["runs"])[len(r["runs"]) // 2]
        same = "yes" if r["digest"] == reference and r["count"] == len(rows) else "NO"
        rel = ("%.2f×" % (wall / min(w for w, _ in base["runs"]))) if base else "-"
        out_rows.append((label, r["version"], fmt(r["count"] / wall), "%.0f" % (wall * 1000),
                         "%.0f" % (cpu * 1000), rel, same))
    table(["driver", "version", "rows/s", "wall ms", "client CPU ms", "time vs mysqlc",
           "same rows"], out_rows)
    for note in notes:
        print("  " + note)
    expect(all(row[-1] != "NO" for row in out_rows), "a driver returned different rows")
    expect(base is not None, "mysqlc failed in the fetch benchmark: %s"
           % next((r.get("error") for label, r in results if label == "mysqlc"), "?"))

    # -------------------------------------------------------------- 8. columnar
    if mysqlc.__name__ == "mysqlc":
        run_columnar(mysqlc, connect, rows)
        # ---------------------------------------------------------- 9. asyncio
        run_asyncio(connect, rows, reference)

    if srv.pid is None:   # an existing server: leave it as it was
        c = mysqlc.connect(charset="utf8mb4", **connect)
        c.cursor().execute("DROP TABLE IF EXISTS demo_items")
        c.close()
    print("\ndemo finished OK in %.1f s" % (time.perf_counter() - t_start))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--fetch-worker"]:
        return fetch_worker()
    p = argparse.ArgumentParser(description="mysqlc demo")
    p.add_argument("--rows", type=int, default=100000, help="rows to load (default 100000)")
    p.add_argument("--batch", type=int, default=5000, help="rows per executemany() call")
    p.add_argument("--dsn", help="use an existing server: mysql://user:pw@host:port/database "
                                 "(default: a private server from mysqlc.server)")
    p.add_argument("--no-peers", action="store_true",
                   help="measure only mysqlc in the fetch comparison")
    p.add_argument("--driver", default="mysqlc", choices=("mysqlc", "MySQLdb", "pymysql"),
                   help="module that runs steps 1-6 (default mysqlc; the others only for "
                        "comparison)")
    args = p.parse_args(argv)
    if args.rows < 10 or args.batch < 1:
        p.error("--rows must be >= 10 and --batch >= 1")
    try:
        return demo(args)
    except DemoFailure as exc:
        print("\nDEMO FAILED: %s" % exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
