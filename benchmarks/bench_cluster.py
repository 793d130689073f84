#!/usr/bin/env python3
"""Cluster benchmark (issue 23): a 1,000,000-row table read into Dask and Ray, and a
Dask frame written back, with mysqlc.dask / mysqlc.ray against the engines' stock paths.

Method
------
One private server (``mysqlc.server.get_server()``; MYSQLC_TEST_DSN points it at another)
and the table ``bench_cluster`` made once with MariaDB's SEQUENCE engine: ``id`` INT
PRIMARY KEY, BIGINT, VARCHAR(64), DOUBLE, DECIMAL(12,2), DATETIME(6), DATE, TEXT (20 %
NULL).  Every read ends with the whole frame in the client as pandas (``.compute()`` /
``Dataset.to_pandas()``), as in the issue's table.

Dask (``distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``),
for 4 and 8 partitions of ``id``:

* ``mysqlc.dask.read_sql_table(..., index_col="id")`` (the C Arrow path on the workers),
* ``dd.read_sql_table(..., "mysql+mysqldb://...", index_col="id")`` (mysqlclient rows),
* the same over ``mysql+mysqlc://`` (SQLAlchemy on mysqlc, rows),
* connectorx: ``dd.from_map`` over the same id ranges, each task ``cx.read_sql(...,
  return_type="arrow")`` of its range (when connectorx is installed).

Ray (``ray.init(num_cpus=2)``, after the Dask cluster is closed), 4 and 8 blocks:
``ray.data.read_sql`` over mysqlclient (one block: its default without shard keys; and
``shard_keys=["id"]``), against ``mysqlc.ray.read_sql(..., partition_on="id")``, and the
issue's hand-written floor: the same ranges read by plain Ray tasks (``ray.remote``, no
Ray Data executor), then ``ray.data.from_arrow_refs``.

Memory: each of the 4 (8) partitions of mysqlc's read runs once more in a Dask task that
samples its own RSS (/proc/self/statm) every 2 ms while reading its range: peak minus the
RSS before, beside the partition's ``Table.nbytes``.

Writes (Dask, 4 partitions of the same 1,000,000 rows held on the workers, NumPy dtypes):
``mysqlc.dask.to_table(if_exists="replace")`` against ``ddf.to_sql(..., "mysql+mysqldb://",
parallel=True)`` (pandas' ``to_sql`` per partition, executemany).

Each configuration runs once (the machine is shared); ``--runs N`` for more: the runs are
interleaved (round r of every configuration of a table, then round r + 1), and the
median is reported.  ``--reads-only`` leaves out the writes and the memory tasks.  Targets
(issue 23): reads >= 3x Dask over mysqlclient, >= 10x ``ray.data.read_sql`` over
mysqlclient, >= 1x connectorx; writes >= 5x ``to_sql``; a read task's memory increase
<= 2x its partition's Arrow size.

Usage::

    .venv/bin/python benchmarks/bench_cluster.py [--rows N] [--runs N] [--skip-ray]
        [--writes-only | --reads-only] > run.log
    .venv/bin/python benchmarks/bench_cluster.py --chart benchmarks/results_cluster.png \
        --from-log run.log [writes.log]       # the chart of RESULTS.md (needs matplotlib)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import mysqlc  # noqa: E402
from mysqlc.server import get_server  # noqa: E402

TABLE = "bench_cluster"
WARM = "bench_cluster_warm"   # a small table of the same shape: the untimed warm-up read
WARM_ROWS = 2000
#: the issue's hand-written Ray floor (one plain Ray task per range, no Ray Data executor)
BY_HAND = "plain Ray tasks of mysqlc reads + from_arrow_refs (by hand)"


def make_table(kw, rows, TABLE=TABLE):
    c = mysqlc.connect(**kw, autocommit=True)
    cur = c.cursor()
    cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                "DATABASE() AND TABLE_NAME = %s", (TABLE,))
    if cur.fetchone()[0]:
        cur.execute("SELECT COUNT(*) FROM " + TABLE)
        if cur.fetchone()[0] == rows:
            c.close()
            return
        cur.execute("DROP TABLE " + TABLE)
    cur.execute("CREATE TABLE %s (id INT NOT NULL PRIMARY KEY, b BIGINT, s VARCHAR(64), "
                "x DOUBLE, m DECIMAL(12,2), d DATETIME(6), dt DATE, t TEXT)" % TABLE)
    cur.execute("INSERT INTO %s SELECT seq, seq * 1000003, CONCAT('name-', seq, '-', "
                "REPEAT('x', seq %% 20)), seq / 3, (seq %% 100000) / 100, "
                "TIMESTAMP'2020-01-01 00:00:00' + INTERVAL seq SECOND + INTERVAL seq "
                "MICROSECOND, DATE'2000-01-01' + INTERVAL seq %% 9000 DAY, "
                "IF(seq %% 5 = 0, NULL, REPEAT('text ', 1 + seq %% 12)) "
                "FROM seq_1_to_%d" % (TABLE, rows))
    cur.execute("ANALYZE TABLE " + TABLE)
    c.close()


def url(kw, driver):
    return "mysql+%s://%s:%s@%s:%d/%s" % (
        driver, urllib.parse.quote(kw["user"], safe=""),
        urllib.parse.quote(kw["password"], safe=""), kw["host"], kw["port"], kw["database"])


def timed(fn, runs):
    times, n = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), n


def interleaved(configs, arg, runs, check):
    """Run every ``(name, fn)`` of `configs` on `arg` `runs` times, round by round (one
    run of each, then the next round), so that a change in the shared machine's load
    hits every configuration alike; `check` sees each result.  Returns ``{name:
    [seconds, ...]}``."""
    times = {name: [] for name, _ in configs}
    for _ in range(runs):
        for name, fn in configs:
            t0 = time.perf_counter()
            out = fn(arg)
            times[name].append(time.perf_counter() - t0)
            check(name, out)
            del out
    return times


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Measured:
    """A Dask task: read one range with mysqlc, sampling RSS meanwhile."""

    def __init__(self, source, rel, opts):
        self.source, self.rel, self.opts = source, rel, opts

    def __call__(self, part):
        from mysqlc._cluster import read_part
        import gc
        gc.collect()
        start = _rss()
        peak = [start]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], _rss())
                time.sleep(0.002)
        th = threading.Thread(target=sample)
        th.start()
        table = read_part(self.source, self.rel, part, self.opts)
        peak[0] = max(peak[0], _rss())
        stop.set()
        th.join()
        out = (peak[0] - start, table.nbytes, table.num_rows)
        del table
        return out


class _SkipWrites(Exception):
    """--reads-only: out of the Dask section before the writes."""


def cx_range(arg):
    import connectorx as cx
    import pandas as pd
    conn, table, lo, hi = arg
    sql = "SELECT * FROM %s WHERE id >= %d AND id < %d" % (table, lo, hi)
    return cx.read_sql(conn, sql, return_type="arrow").to_pandas(types_mapper=pd.ArrowDtype)


def chart(png, logs):
    """A bar chart of the result tables this script printed into `logs` (the last
    write figures win): read times per engine and partitions, and the writes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = {}
    for path in logs:
        got = {}
        with open(path) as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) == 5 and cells[0] in ("dask read", "ray read", "dask write"):
                    got[(cells[0], cells[1], int(cells[2]))] = float(cells[3])
        for sec in ("dask read", "ray read", "dask write"):
            if any(k[0] == sec for k in got):     # a later log's section replaces it whole
                rows = {k: v for k, v in rows.items() if k[0] != sec}
                rows.update({k: v for k, v in got.items() if k[0] == sec})
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.5), gridspec_kw={"width_ratios": [4, 3, 2]})
    for ax, sec, title in ((axes[0], "dask read", "Dask: 1,000,000 rows to pandas"),
                           (axes[1], "ray read", "Ray: 1,000,000 rows to pandas"),
                           (axes[2], "dask write", "Dask write, 4 partitions")):
        names = list(dict.fromkeys(k[1] for k in rows if k[0] == sec))
        parts = sorted({k[2] for k in rows if k[0] == sec})
        width = 0.8 / max(1, len(parts))
        for j, n in enumerate(parts):
            vals = [rows.get((sec, name, n), 0) for name in names]
            ax.barh([i + j * width for i in range(len(names))], vals, height=width,
                    label="%d partitions" % n)
        ax.set_yticks([i + width * (len(parts) - 1) / 2 for i in range(len(names))])
        ax.set_yticklabels([nm.replace(", ", ",\n", 1) for nm in names], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("seconds (lower is better)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chart", metavar="PNG", help="only draw PNG from --from-log files")
    ap.add_argument("--from-log", nargs="+", default=[], metavar="LOG",
                    help="outputs of earlier runs of this script (for --chart)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--writes-only", action="store_true", help="only the Dask writes")
    ap.add_argument("--reads-only", action="store_true",
                    help="only the reads (no memory tasks, no writes)")
    args = ap.parse_args()
    if args.writes_only and args.reads_only:
        ap.error("--writes-only and --reads-only exclude each other")
    if args.chart:
        chart(args.chart, args.from_log)
        return

    srv = get_server().start()
    results = []          # (section, name, partitions, seconds, rows)
    notes = []
    try:
        kw = srv.connect_kwargs()
        make_table(kw, args.rows)
        make_table(kw, WARM_ROWS, WARM)
        print("load average before: %s" % open("/proc/loadavg").read().strip(), flush=True)

        import dask
        import dask.dataframe as dd
        from distributed import Client, LocalCluster
        import mysqlc.dask as mdask
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        client = Client(cluster)
        try:
            try:
                import connectorx  # noqa: F401
                have_cx = True
            except ImportError:
                have_cx = False
                notes.append("connectorx: not installed, skipped")
            cx_conn = "mysql://%s:%s@%s:%d/%s" % (kw["user"], kw["password"], kw["host"],
                                                kw["port"], kw["database"])
            for n in (() if args.writes_only else (4, 8)):
                configs = [
                    ("mysqlc.dask.read_sql_table",
                     lambda tb: mdask.read_sql_table(tb, kw, index_col="id",
                                                     npartitions=n).compute()),
                    ("dd.read_sql_table, mysqlclient",
                     lambda tb: dd.read_sql_table(tb, url(kw, "mysqldb"), index_col="id",
                                                  npartitions=n).compute()),
                    ("dd.read_sql_table, SQLAlchemy mysql+mysqlc",
                     lambda tb: dd.read_sql_table(tb, url(kw, "mysqlc"), index_col="id",
                                                  npartitions=n).compute()),
                ]
                if have_cx:
                    def cx_read(tb):
                        rows = args.rows if tb == TABLE else WARM_ROWS
                        edges = [1 + rows * i // n for i in range(n + 1)]
                        edges[-1] = rows + 1
                        rng = [(cx_conn, tb, edges[i], edges[i + 1]) for i in range(n)]
                        return dd.from_map(cx_range, rng).compute()
                    configs.append(("connectorx in dd.from_map", cx_read))
                for name, fn in configs:
                    fn(WARM)      # imports and connections on the workers: not timed

                def check(name, df):
                    assert len(df) == args.rows, (name, len(df))
                times = interleaved(configs, TABLE, args.runs, check)
                for name, _ in configs:
                    t = statistics.median(times[name])
                    results.append(("dask read", name, n, t, args.rows))
                    print("%-45s %d parts  %7.2f s  (runs: %s)" % (
                        name, n, t, " ".join("%.2f" % x for x in times[name])), flush=True)
                if args.reads_only:
                    continue

                # memory of mysqlc's read tasks
                from mysqlc._cluster import ReadOptions, Relation, Source, plan
                src = Source(kw)
                rel = Relation(table=TABLE)
                p = plan(src, rel, "id", n, ReadOptions())
                meas = _Measured(src, rel, ReadOptions())
                out = dask.compute(*[dask.delayed(meas)(part) for part in p.parts])
                ratios = [inc / size for inc, size, _ in out]
                results.append(("memory", "mysqlc read task: RSS increase / Arrow size",
                                n, max(ratios), sum(r for _, _, r in out)))
                print("memory %d parts: %s" % (n, ["%.0f MB / %.0f MB = %.2f" % (
                    inc / 1e6, size / 1e6, inc / size) for inc, size, _ in out]), flush=True)

            if args.reads_only:
                raise _SkipWrites
            # writes
            src_ddf = mdask.read_sql_table(TABLE, kw, index_col="id", npartitions=4,
                                           dtype_backend="numpy").reset_index().persist()
            for name, opts in (("mysqlc.dask.to_table, replace (direct)",
                                {"if_exists": "replace"}),
                               ("mysqlc.dask.to_table, append, atomic=True (staged)",
                                {"if_exists": "append"})):
                c = mysqlc.connect(**kw, autocommit=True)
                c.cursor().execute("DROP TABLE IF EXISTS %s_out" % TABLE)
                c.close()
                t, nrows = timed(lambda: mdask.to_table(src_ddf, TABLE + "_out", kw,
                                                        on_warning="ignore", **opts),
                                 args.runs)
                results.append(("dask write", name, 4, t, nrows))
                print("%s: %.2f s (%d rows)" % (name, t, nrows), flush=True)

            def stock_write():
                src_ddf.to_sql(TABLE + "_out2", url(kw, "mysqldb"), if_exists="replace",
                               index=False, parallel=True, chunksize=10000)
                c = mysqlc.connect(**kw)
                cur = c.cursor()
                cur.execute("SELECT COUNT(*) FROM %s_out2" % TABLE)
                n = cur.fetchone()[0]
                c.close()
                return n
            t, nrows = timed(stock_write, args.runs)
            results.append(("dask write", "ddf.to_sql, mysqlclient (pandas to_sql)", 4, t,
                            nrows))
            print("to_sql: %.2f s (%d rows)" % (t, nrows), flush=True)
            del src_ddf
        except _SkipWrites:
            pass
        finally:
            client.close()
            cluster.close()

        if not (args.skip_ray or args.writes_only):
            import ray
            import MySQLdb
            import mysqlc.ray as mray
            from mysqlc._cluster import ReadOptions, Relation, Source, plan, read_part
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            ray_range = ray.remote(read_part)

            def by_hand(sql, n):
                # the floor: plain Ray tasks, one per range, no Ray Data executor
                src, rel = Source(kw), Relation(sql=sql)
                p = plan(src, rel, "id", n, ReadOptions())
                refs = [ray_range.remote(src, rel, part, ReadOptions()) for part in p.parts]
                return ray.data.from_arrow_refs(refs)
            ray.data.DataContext.get_current().enable_progress_bars = False
            try:
                def factory(kw=kw):
                    return MySQLdb.connect(host=kw["host"], port=kw["port"], user=kw["user"],
                                           password=kw["password"], database=kw["database"])
                sql = "SELECT * FROM " + TABLE
                for n in (4, 8):
                    configs = [
                        ("mysqlc.ray.read_sql",
                         lambda q: mray.read_sql(q, kw, partition_on="id",
                                                 override_num_blocks=n).to_pandas()),
                        (BY_HAND, lambda q: by_hand(q, n).to_pandas()),
                        ("ray.data.read_sql, mysqlclient, shard_keys=['id']",
                         lambda q: ray.data.read_sql(q, factory, shard_keys=["id"],
                                                     override_num_blocks=n).to_pandas()),
                    ]
                    if n == 4:
                        configs.append(("ray.data.read_sql, mysqlclient (1 block)",
                                        lambda q: ray.data.read_sql(q, factory).to_pandas()))
                    for name, fn in configs:
                        fn("SELECT * FROM " + WARM)

                    def check(name, df):
                        assert len(df) == args.rows, (name, len(df))
                    times = interleaved(configs, sql, args.runs, check)
                    for name, _ in configs:
                        t = statistics.median(times[name])
                        results.append(("ray read", name, n, t, args.rows))
                        print("%-45s %d blocks %7.2f s  (runs: %s)" % (
                            name, n, t, " ".join("%.2f" % x for x in times[name])),
                            flush=True)
            finally:
                ray.shutdown()
        print("load average after: %s" % open("/proc/loadavg").read().strip(), flush=True)
    finally:
        srv.stop()

    print()
    print("| section | how | partitions | time (s) | rows |")
    print("| --- | --- | --- | --- | --- |")
    for sec, name, n, t, rows in results:
        if sec == "memory":
            print("| %s | %s | %d | ratio %.2f (max over tasks) | %d |" % (sec, name, n, t, rows))
        else:
            print("| %s | %s | %d | %.2f | %d |" % (sec, name, n, t, rows))
    for note in notes:
        print("note:", note)

    def get(sec, name, n):
        for s, nm, k, t, _ in results:
            if s == sec and nm == name and k == n:
                return t
        return None
    print()
    for n in (4, 8):
        m = get("dask read", "mysqlc.dask.read_sql_table", n)
        for peer, target in (("dd.read_sql_table, mysqlclient", 3),
                             ("connectorx in dd.from_map", 1)):
            p = get("dask read", peer, n)
            if m and p:
                print("target reads %d parts: %.1fx %s (target >= %dx): %s"
                      % (n, p / m, peer, target, "met" if p / m >= target else "MISSED"))
        r = get("ray read", "mysqlc.ray.read_sql", n)
        h = get("ray read", BY_HAND, n)
        if r and h:
            print("ray %d blocks: mysqlc.ray.read_sql %.2fx the hand-written floor's time"
                  % (n, r / h))
        for peer in ("ray.data.read_sql, mysqlclient (1 block)",
                     "ray.data.read_sql, mysqlclient, shard_keys=['id']"):
            p = get("ray read", peer, 4 if "1 block" in peer else n)
            if r and p:
                print("target ray %d blocks: %.1fx %s (target >= 10x): %s"
                      % (n, p / r, peer, "met" if p / r >= 10 else "MISSED"))
        ratio = get("memory", "mysqlc read task: RSS increase / Arrow size", n)
        if ratio is not None:
            print("target memory %d parts: %.2f (target <= 2): %s"
                  % (n, ratio, "met" if ratio <= 2 else "MISSED"))
    p = get("dask write", "ddf.to_sql, mysqlclient (pandas to_sql)", 4)
    for name in ("mysqlc.dask.to_table, replace (direct)",
                 "mysqlc.dask.to_table, append, atomic=True (staged)"):
        w = get("dask write", name, 4)
        if w and p:
            print("target writes, %s: %.1fx to_sql (target >= 5x): %s"
                  % (name, p / w, "met" if p / w >= 5 else "MISSED"))


if __name__ == "__main__":
    main()
