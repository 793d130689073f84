"""executemany through a latency proxy: how many round trips each driver's batching costs.

Workloads (each timed including its COMMIT; autocommit off; InnoDB):

* ``update``: ``UPDATE rt SET v = %s WHERE id = %s`` x 1,000 (by primary key)
* ``delete``: ``DELETE FROM rt WHERE id = %s`` x 1,000
* ``upsert``: ``INSERT INTO rt (id, v) VALUES (%s, %s) ON DUPLICATE KEY UPDATE v =
  VALUES(v)`` x 1,000 (half the keys exist)
* ``insert``: ``INSERT INTO rf (id, f) VALUES (%s, %s)`` x 10,000 with a DOUBLE column

at loopback (direct) and through benchmarks/latency_proxy.py (run as a separate process,
so its threads do not share the client's GIL) adding a one-way delay: 0.25 ms (0.5 ms
round trip), 0.5 ms (1 ms) and 1 ms (2 ms).  Drivers: mysqlc (default text cursor, and
prepared mode), mysqlclient (MySQLdb), PyMySQL, mysql-connector-python and MariaDB
Connector/Python (``mariadb``) where they are installed; each in its default mode, which
the report names.  Best of --repeat runs (default 3 at loopback, 2 through the proxy).

    python benchmarks/bench_roundtrips.py [--rtt 0,0.5,1,2] [--repeat N] [--json out.json]
        [--chart out.png]
    python benchmarks/bench_roundtrips.py --from-json out.json --chart out.png   # no run
    python benchmarks/bench_roundtrips.py --interleaved 15 --rtt 0,1 --only mysqlc,MariaDB
        # the drivers taking turns, median and min per cell

``--chart`` draws the figures (matplotlib) as seconds against the round-trip time, one
panel per workload, on a log scale: from this run, or with ``--from-json`` from the JSON
an earlier run wrote with ``--json`` (nothing is measured then).

Also (mysqlc only: the peers have no pipeline) 200 point SELECTs by primary key, one
at a time vs inside ``conn.pipeline()``, and a SQLAlchemy ORM flush of 1,000 modified
objects on ``mariadb+mysqlc`` vs ``mysql+mysqldb`` (mysqlclient) where SQLAlchemy is
installed (``--pipeline-only`` runs just these two).

Uses a private server (mysqlc.server) unless MYSQLC_TEST_DSN names one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from mysqlc.server import get_server  # noqa: E402

N = 1000
N_INSERT = 10000


def _drivers():
    """(name, mode, connect(kw) -> DB-API connection, cursor(conn))."""
    out = []
    import mysqlc
    out.append(("mysqlc", "text cursor: COM_STMT_BULK_EXECUTE",
                lambda kw: mysqlc.connect(**kw), lambda c: c.cursor()))
    out.append(("mysqlc prepared", "cursor(prepared=True): COM_STMT_BULK_EXECUTE",
                lambda kw: mysqlc.connect(**kw), lambda c: c.cursor(prepared=True)))
    try:
        import MySQLdb
        out.append(("mysqlclient %s" % ".".join(map(str, MySQLdb.version_info[:3])),
                    "default cursor: multi-row INSERT rewrite, else one statement per row",
                    lambda kw: MySQLdb.connect(**kw), lambda c: c.cursor()))
    except ImportError:
        pass
    try:
        import pymysql
        out.append(("PyMySQL %s" % pymysql.__version__,
                    "default cursor: multi-row INSERT rewrite, else one statement per row",
                    lambda kw: pymysql.connect(**kw), lambda c: c.cursor()))
    except ImportError:
        pass
    try:
        import mysql.connector
        try:
            from mysql.connector import HAVE_CEXT
        except ImportError:
            HAVE_CEXT = False
        out.append(("mysql-connector-python %s" % mysql.connector.__version__,
                    "default (%s): multi-row INSERT rewrite, else one statement per row"
                    % ("C extension" if HAVE_CEXT else "pure Python"),
                    lambda kw: mysql.connector.connect(**kw), lambda c: c.cursor()))
    except ImportError:
        pass
    try:
        import mariadb
        out.append(("MariaDB Connector/Python %s" % mariadb.__version__,
                    "default cursor: COM_STMT_BULK_EXECUTE",
                    lambda kw: mariadb.connect(**kw), lambda c: c.cursor()))
    except ImportError:
        pass
    return out


def _setup(admin):
    cur = admin.cursor()
    cur.execute("DROP TABLE IF EXISTS rt")
    cur.execute("DROP TABLE IF EXISTS rf")
    cur.execute("CREATE TABLE rt (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
    cur.execute("CREATE TABLE rf (id INT PRIMARY KEY, f DOUBLE) ENGINE=InnoDB")
    admin.commit()


def _reset(admin, kind):
    cur = admin.cursor()
    cur.execute("DELETE FROM rt")
    cur.execute("DELETE FROM rf")
    if kind in ("update", "delete"):
        cur.executemany("INSERT INTO rt VALUES (%s, %s)", [(i, 0) for i in range(N)])
    elif kind == "upsert":
        cur.executemany("INSERT INTO rt VALUES (%s, %s)", [(i, 0) for i in range(0, N, 2)])
    admin.commit()


WORK = {
    "update": ("UPDATE rt SET v = %s WHERE id = %s", lambda: [(i + 1, i) for i in range(N)]),
    "delete": ("DELETE FROM rt WHERE id = %s", lambda: [(i,) for i in range(N)]),
    "upsert": ("INSERT INTO rt (id, v) VALUES (%s, %s) ON DUPLICATE KEY UPDATE v = VALUES(v)",
               lambda: [(i, i + 7) for i in range(N)]),
    "insert": ("INSERT INTO rf (id, f) VALUES (%s, %s)",
               lambda: [(i, i / 7) for i in range(N_INSERT)]),
}

CHECK = {
    "update": ("SELECT COUNT(*) FROM rt WHERE v = id + 1", N),
    "delete": ("SELECT COUNT(*) = 0 FROM rt", 1),
    "upsert": ("SELECT COUNT(*) FROM rt WHERE v = id + 7", N),
    "insert": ("SELECT COUNT(*) FROM rf", N_INSERT),
}


def _proxy(port, one_way_ms):
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "latency_proxy.py"),
                          "--target-port", str(port), "--one-way-ms", str(one_way_ms),
                          "--lifetime", "900"], stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


def _point_selects(kw, rtt, repeat):
    """200 point SELECTs on mysqlc: a loop of execute+fetch vs one pipeline block."""
    import mysqlc
    conn = mysqlc.connect(**kw)
    out = []
    try:
        curs = [conn.cursor() for _ in range(200)]
        for how in ("loop", "pipeline"):
            best = None
            for _ in range(repeat):
                t0 = time.perf_counter()
                if how == "loop":
                    got = []
                    for i, cur in enumerate(curs):
                        cur.execute("SELECT v FROM rt WHERE id = %s", (i,))
                        got.append(cur.fetchone())
                else:
                    with conn.pipeline():
                        for i, cur in enumerate(curs):
                            cur.execute("SELECT v FROM rt WHERE id = %s", (i,))
                    got = [cur.fetchone() for cur in curs]
                dt = time.perf_counter() - t0
                if got != [(0,)] * 200:
                    raise SystemExit("point selects (%s): wrong rows" % how)
                best = dt if best is None else min(best, dt)
            out.append(dict(driver="mysqlc", mode=how, rtt_ms=rtt, kind="point200",
                            seconds=best))
            print("%-34s rtt %4.1f ms  %-8s %9.4f s" % ("mysqlc 200 point SELECTs", rtt, how,
                                                        best), flush=True)
    finally:
        conn.close()
    return out


def _orm_flush(kw, rtt, repeat):
    """The ORM's flush + commit of 1,000 modified objects (UPDATE by primary key)."""
    try:
        import sqlalchemy as sa
        from sqlalchemy import orm
    except ImportError:
        return []
    from decimal import Decimal as D
    out = []
    urls = [("mysqlc", "mariadb+mysqlc")]
    try:
        import MySQLdb  # noqa: F401
        urls.append(("mysqlclient", "mysql+mysqldb"))
    except ImportError:
        pass
    for name, scheme in urls:
        engine = sa.create_engine("%s://%s:%s@%s:%d/%s" % (
            scheme, kw["user"], kw["password"], kw["host"], kw["port"], kw["database"]))

        class Base(orm.DeclarativeBase):
            pass

        class Item(Base):
            __tablename__ = "orm_flush_items"
            id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
            name = sa.Column(sa.String(40))
            price = sa.Column(sa.Numeric(12, 2))

        # the time spent inside the driver's calls (cursor executes and the commit):
        # the rest of a flush is SQLAlchemy's own work, the floor of any driver
        inside = [0.0]
        started = []

        @sa.event.listens_for(engine, "before_cursor_execute")
        def _before(*_a):
            started.append(time.perf_counter())

        @sa.event.listens_for(engine, "after_cursor_execute")
        def _after(*_a):
            inside[0] += time.perf_counter() - started.pop()

        def _do_commit(dbapi_connection, _commit=engine.dialect.do_commit):
            t = time.perf_counter()
            _commit(dbapi_connection)
            inside[0] += time.perf_counter() - t
        engine.dialect.do_commit = _do_commit

        try:
            best = None
            for r in range(repeat):
                Base.metadata.drop_all(engine)
                Base.metadata.create_all(engine)
                with orm.Session(engine) as s:
                    s.add_all([Item(id=i, name="n", price=D(i)) for i in range(N)])
                    s.commit()
                with orm.Session(engine) as s:
                    items = s.scalars(sa.select(Item)).all()
                    for it in items:
                        it.name = "m%d" % it.id
                        it.price = D(it.id) + D("0.5")
                    inside[0] = 0.0
                    t0 = time.perf_counter()
                    s.flush()
                    s.commit()
                    dt = time.perf_counter() - t0
                if best is None or dt < best:
                    best, best_outside = dt, dt - inside[0]
            with engine.connect() as c:
                n = c.execute(sa.text("SELECT COUNT(*) FROM orm_flush_items "
                                      "WHERE price = id + 0.5")).scalar()
            if n != N:
                raise SystemExit("ORM flush (%s): %r rows updated, not %d" % (name, n, N))
        finally:
            Base.metadata.drop_all(engine)
            engine.dispose()
        out.append(dict(driver=name, mode="orm", rtt_ms=rtt, kind="orm_flush1000",
                        seconds=best, outside_driver_seconds=best_outside))
        print("%-34s rtt %4.1f ms  %-8s %9.4f s  (%.4f s outside the driver's calls)"
              % ("ORM flush x1,000: " + name, rtt, "", best, best_outside), flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtt", default="0,0.5,1,2", help="round-trip times in ms (0: direct)")
    ap.add_argument("--repeat", type=int, default=0, help="runs per cell (best kept)")
    ap.add_argument("--only", default="", help="comma-separated driver name prefixes")
    ap.add_argument("--json", help="write the results (a list of cells) to this file")
    ap.add_argument("--chart", help="draw the results into this PNG (matplotlib)")
    ap.add_argument("--from-json", help="no run: read the results --json wrote earlier "
                    "(with --chart)")
    ap.add_argument("--pipeline-only", action="store_true",
                    help="only the 200 point SELECTs, loop vs pipeline (mysqlc)")
    ap.add_argument("--interleaved", type=int, default=0, metavar="ROUNDS",
                    help="the executemany cells only, the drivers taking turns (their order "
                    "reversed every round) for ROUNDS rounds per workload; min and median "
                    "reported (the machine's drift then hits every driver alike)")
    a = ap.parse_args(argv)
    if a.from_json:
        if not a.chart:
            ap.error("--from-json needs --chart")
        with open(a.from_json) as f:
            chart(json.load(f), a.chart, source=a.from_json)
        return
    import mysqlc
    drivers = _drivers()
    if a.only:
        drivers = [d for d in drivers if any(d[0].startswith(p) for p in a.only.split(","))]
    results = []
    with get_server() as srv:
        kw0 = srv.connect_kwargs()
        admin = mysqlc.connect(**kw0)
        _setup(admin)
        for rtt in [float(x) for x in a.rtt.split(",")]:
            proc = None
            port = kw0["port"]
            if rtt > 0:
                proc, port = _proxy(kw0["port"], rtt / 2)
            try:
                kw = dict(host="127.0.0.1", port=port, user=kw0["user"],
                          password=kw0["password"], database=kw0["database"])
                repeat = a.repeat or (3 if rtt == 0 else 2)
                _reset(admin, "update")    # ids 0..N-1 with v = 0
                if a.interleaved:
                    results.extend(_interleaved(admin, kw, rtt, drivers, a.interleaved))
                    continue
                results.extend(_point_selects(kw, rtt, repeat))
                results.extend(_orm_flush(kw, rtt, repeat))
                for name, mode, connect, cursor in ([] if a.pipeline_only else drivers):
                    conn = connect(kw)
                    try:
                        for kind, (sql, rows_fn) in WORK.items():
                            rows = rows_fn()
                            best = None
                            for _ in range(repeat):
                                dt = _timed_executemany(admin, kind, conn, cursor, sql, rows)
                                best = dt if best is None else min(best, dt)
                            q, want = CHECK[kind]
                            c = admin.cursor()
                            c.execute(q)
                            got = c.fetchone()[0]
                            admin.commit()
                            if got != want:
                                raise SystemExit("%s %s: check %r gave %r, not %r"
                                                 % (name, kind, q, got, want))
                            results.append(dict(driver=name, mode=mode, rtt_ms=rtt,
                                                kind=kind, seconds=best))
                            print("%-34s rtt %4.1f ms  %-6s %9.4f s" % (name, rtt, kind, best),
                                  flush=True)
                    finally:
                        conn.close()
            finally:
                if proc is not None:
                    proc.terminate()
                    proc.wait(10)
        admin.close()
    _table(results, drivers)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.chart:
        chart(results, a.chart, source=a.json or "this run")


def _timed_executemany(admin, kind, conn, cursor, sql, rows):
    """Seconds of one executemany(sql, rows) + commit on a fresh cursor of conn, the
    table reset for `kind` first."""
    _reset(admin, kind)
    cur = cursor(conn)
    t0 = time.perf_counter()
    cur.executemany(sql, rows)
    conn.commit()
    dt = time.perf_counter() - t0
    cur.close()
    return dt


def _interleaved(admin, kw, rtt, drivers, rounds):
    """The executemany workloads with the drivers taking turns: round r runs each driver
    once (reversed order on odd rounds), each on its own connection opened before the
    first round; the first round (statement preparation, caches) is left out; min and
    median of the rest."""
    import statistics
    conns = [(name, mode, connect(kw), cursor) for name, mode, connect, cursor in drivers]
    out = []
    try:
        for kind, (sql, rows_fn) in WORK.items():
            rows = rows_fn()
            times = {name: [] for name, *_ in conns}
            for r in range(rounds + 1):
                for name, mode, conn, cursor in (conns if r % 2 == 0 else conns[::-1]):
                    dt = _timed_executemany(admin, kind, conn, cursor, sql, rows)
                    if r:
                        times[name].append(dt)
            for name, mode, conn, cursor in conns:
                v = times[name]
                out.append(dict(driver=name, mode=mode, rtt_ms=rtt, kind=kind,
                                seconds=statistics.median(v), min_seconds=min(v),
                                rounds=rounds))
                print("%-34s rtt %4.1f ms  %-6s median %9.4f s  min %9.4f s"
                      % (name, rtt, kind, statistics.median(v), min(v)), flush=True)
    finally:
        for _name, _mode, conn, _cursor in conns:
            conn.close()
    return out


PANELS = [("update", "UPDATE by primary key x%d" % N), ("delete", "DELETE by primary key x%d" % N),
          ("upsert", "INSERT ... ON DUPLICATE KEY UPDATE x%d" % N),
          ("insert", "INSERT x%d (a DOUBLE column)" % N_INSERT),
          ("point200", "mysqlc: 200 point SELECTs, one at a time vs pipeline()"),
          ("orm_flush1000", "SQLAlchemy ORM flush + commit of %d objects" % N)]


def chart(results, path, source):
    """Draw `results` (the cells main() collects, or the list ``--json`` wrote: dicts with
    driver, mode, rtt_ms, kind, seconds) into the PNG `path`: one panel per workload,
    seconds (log scale) against the round-trip time in ms (0 = loopback), one line per
    driver (per mode for the point SELECTs).  Needs matplotlib."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    kinds = [(k, t) for k, t in PANELS if any(r["kind"] == k for r in results)]
    cols = 3 if len(kinds) > 4 else 2
    rows = (len(kinds) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.2 * rows), squeeze=False)
    for ax, (kind, title) in zip(axes.flat, kinds):
        cells = [r for r in results if r["kind"] == kind]
        series = {}
        for r in cells:
            name = r["driver"] + (" (%s)" % r["mode"] if kind == "point200" else "")
            series.setdefault(name, []).append((r["rtt_ms"], r["seconds"] * 1e3))
        for name, pts in series.items():
            pts.sort()
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=name)
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("round-trip time, ms (0 = loopback)")
        ax.set_ylabel("ms, best of the runs (lower is better)")
        ax.set_xticks(sorted({r["rtt_ms"] for r in cells}))
        ax.grid(which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(kinds):]:
        ax.set_visible(False)
    fig.suptitle("benchmarks/bench_roundtrips.py: executemany and pipelining through a "
                 "latency proxy (%s)" % os.path.basename(source), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _table(results, drivers):
    kinds = list(WORK)
    rtts = sorted({r["rtt_ms"] for r in results})
    by = {(r["driver"], r["rtt_ms"], r["kind"]): r["seconds"] for r in results}
    print()
    print("| driver | RTT (ms) | " + " | ".join(
        "%s x%d" % (k, N_INSERT if k == "insert" else N) for k in kinds) + " |")
    print("|---|---|" + "---|" * len(kinds))
    for rtt in rtts:
        for name, _m, _c, _k in drivers:
            cells = []
            for k in kinds:
                s = by.get((name, rtt, k))
                cells.append("—" if s is None else ("%.1f ms" % (s * 1e3) if s < 1 else
                                                    "%.2f s" % s))
            print("| %s | %s | %s |" % (name, "loopback" if rtt == 0 else rtt,
                                        " | ".join(cells)))
    print()
    rounds = {r.get("rounds") for r in results} - {None}
    if rounds:
        print("(medians of %s interleaved rounds)" % ", ".join(map(str, sorted(rounds))))
    for name, mode, _c, _k in drivers:
        print("- %s: %s" % (name, mode))


if __name__ == "__main__":
    main()
