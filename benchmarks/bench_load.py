#!/usr/bin/env python3
"""Bulk-load benchmark: ``cursor.load_table`` against ``executemany`` and the ``mariadb``
command-line client's ``LOAD DATA LOCAL INFILE`` (issue 8).

N rows (default 1,000,000) x 10 mixed columns -- INT primary key, INT, BIGINT, DOUBLE,
DECIMAL(12,2), VARCHAR(40) with non-ASCII text, DATE, DATETIME(6), TEXT with tabs,
newlines, backslashes and 10 % NULLs, TINYINT -- are loaded into the same InnoDB table
by:

* ``load_table(arrow)``   mysqlc ``cursor.load_table`` from a pyarrow Table
* ``load_table(tuples)``  mysqlc ``cursor.load_table`` from a list of tuples
* ``mysqlc executemany``  ``INSERT ... VALUES (%s, ...)`` (multi-row statements)
* ``mysqlclient executemany``  the same with MySQLdb (multi-row statements too)
* ``mariadb CLI``         ``mariadb --local-infile=1 -e "LOAD DATA LOCAL INFILE 'file'
  ..."`` of the same rows written beforehand as a tab-separated file (the writing is
  not timed; the client's start-up is)

The table is truncated before every run; the server and its settings are the same for
all.  One untimed warm-up load comes first; then the methods run round-robin, `--repeat`
times, and the best run of each is kept.  Wall time (time.perf_counter) covers the load and its commit; "client CPU" is this
process's user+sys time (time.process_time) for the same section (the CLI runs in a
child process: n/a).  After each run ``CHECKSUM TABLE`` must equal the first method's,
so a method that loads different data cannot look fast.

Targets (issue 8): load_table >= 3x executemany's rows/s, and within 1.3x of the CLI's
LOAD DATA time.

Usage::

    .venv/bin/python benchmarks/bench_load.py                # 1M rows, best of 2
    .venv/bin/python benchmarks/bench_load.py --quick        # 100k rows, one run
    .venv/bin/python benchmarks/bench_load.py --rows 200000 --repeat 3 --dsn mysql://...

The server: ``--dsn``, else ``mysqlc.server.get_server()`` (MYSQLC_TEST_DSN or a private
mariadbd started for the run).
"""

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import mysqlc  # noqa: E402
from mysqlc import _core, server as server_mod  # noqa: E402

TABLE = "bench_load"
COLUMNS = ["id", "i32", "i64", "dbl", "dec", "vc", "dt", "dtm", "txt", "flag"]
CREATE = """CREATE TABLE bench_load (
  id INT NOT NULL PRIMARY KEY,
  i32 INT,
  i64 BIGINT,
  dbl DOUBLE,
  `dec` DECIMAL(12,2),
  vc VARCHAR(40),
  dt DATE,
  dtm DATETIME(6),
  txt TEXT,
  flag TINYINT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"""
COLS_SQL = ", ".join("`%s`" % c for c in COLUMNS)
LOAD_SQL = ("LOAD DATA LOCAL INFILE '%s' INTO TABLE bench_load CHARACTER SET utf8mb4 "
            "FIELDS TERMINATED BY X'09' ENCLOSED BY '' ESCAPED BY X'5C' "
            "LINES STARTING BY '' TERMINATED BY X'0A' (" + COLS_SQL + ")")
INSERT_SQL = "INSERT INTO bench_load (%s) VALUES (%s)" % (COLS_SQL, ", ".join(["%s"] * 10))


def make_table(n, seed=42):
    """The benchmark data as a pyarrow Table of `n` rows (deterministic)."""
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(seed)
    words = ["Zürich", "naïve", "straße", "日本語", "café", "Ωmega", "emoji😀", "plain",
             "Łódź", "français", "ñandú", "Київ"]
    vocab_vc = ["%s %s %d" % (words[k % 12], words[(k * 7) % 12], k) for k in range(5000)]
    vocab_txt = []
    for k in range(2000):
        parts = [words[(k + j) % 12] for j in range(k % 17 + 1)]
        sep = ["\t", "\n", " \\ ", " "][k % 4]
        vocab_txt.append(sep.join(parts))
    dec_units = rng.integers(-10 ** 11, 10 ** 11, n)          # DECIMAL(12,2) in cents
    limbs = np.empty((n, 2), dtype=np.int64)
    limbs[:, 0] = dec_units
    limbs[:, 1] = dec_units >> 63
    dec = pa.Array.from_buffers(pa.decimal128(12, 2), n, [None, pa.py_buffer(limbs.tobytes())])
    vc_idx = rng.integers(0, len(vocab_vc), n)
    txt_idx = rng.integers(0, len(vocab_txt), n)
    txt_null = rng.random(n) < 0.10
    txt = pa.array(np.array(vocab_txt, dtype=object)[txt_idx], pa.string(),
                   mask=txt_null)
    return pa.table({
        "id": pa.array(np.arange(1, n + 1, dtype=np.int32)),
        "i32": pa.array(rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)),
        "i64": pa.array(rng.integers(-2 ** 62, 2 ** 62, n, dtype=np.int64)),
        "dbl": pa.array(rng.standard_normal(n) * 1e6),
        "dec": dec,
        "vc": pa.array(np.array(vocab_vc, dtype=object)[vc_idx], pa.string()),
        "dt": pa.array(rng.integers(0, 60 * 365, n, dtype=np.int32), pa.date32()),
        "dtm": pa.array(rng.integers(0, 60 * 365 * 86400 * 10 ** 6, n, dtype=np.int64),
                        pa.timestamp("us")),
        "txt": txt,
        "flag": pa.array(rng.integers(-128, 128, n, dtype=np.int64).astype(np.int8)),
    })


def server_params(args):
    """(server context or None, dict: host, port, user, password, database, unix_socket,
    cli_user, cli_password)"""
    if args.dsn:
        u = urllib.parse.urlsplit(args.dsn)
        p = {"host": u.hostname or "127.0.0.1", "port": u.port or 3306,
             "user": urllib.parse.unquote(u.username or ""),
             "password": urllib.parse.unquote(u.password or ""),
             "database": u.path.lstrip("/"), "unix_socket": None}
        p["cli_user"], p["cli_password"] = p["user"], p["password"]
        return None, p
    srv = server_mod.get_server().start()
    kw = srv.connect_kwargs()
    p = dict(kw, unix_socket=getattr(srv, "unix_socket", None))
    p["cli_user"], p["cli_password"] = srv.root_user, srv.root_password
    return srv, p


def connect_mysqlc(p, **extra):
    return mysqlc.connect(host=p["host"], port=p["port"], user=p["user"],
                          password=p["password"], database=p["database"], autocommit=True,
                          **extra)


def reset(p):
    c = connect_mysqlc(p)
    cur = c.cursor()
    cur.execute("DROP TABLE IF EXISTS bench_load")
    cur.execute(CREATE)
    c.close()


def truncate_and_checksum(p, truncate=True):
    c = connect_mysqlc(p)
    cur = c.cursor()
    cur.execute("SELECT COUNT(*) FROM bench_load")
    count = cur.fetchone()[0]
    cur.execute("CHECKSUM TABLE bench_load")
    checksum = cur.fetchone()[1]
    if truncate:
        cur.execute("TRUNCATE TABLE bench_load")
    c.close()
    return count, checksum


# ---------------------------------------------------------------- methods (return rows)

def m_load_table_arrow(p, data):
    c = connect_mysqlc(p, local_infile=True)
    try:
        return c.cursor().load_table(TABLE, data["arrow"])
    finally:
        c.close()


def m_load_table_tuples(p, data):
    c = connect_mysqlc(p, local_infile=True)
    try:
        return c.cursor().load_table(TABLE, data["tuples"], COLUMNS)
    finally:
        c.close()


def m_mysqlc_executemany(p, data):
    c = connect_mysqlc(p)
    try:
        return c.cursor().executemany(INSERT_SQL, data["tuples"])
    finally:
        c.close()


def m_mysqlclient_executemany(p, data):
    import MySQLdb
    kw = {"user": p["user"], "passwd": p["password"], "db": p["database"],
          "charset": "utf8mb4", "autocommit": True, "host": p["host"], "port": p["port"]}
    c = MySQLdb.connect(**kw)
    try:
        cur = c.cursor()
        return cur.executemany(INSERT_SQL, data["tuples"])
    finally:
        c.close()


def m_cli(p, data):
    cli = data["cli"]
    cmd = [cli, "--no-defaults", "--local-infile=1", "-u" + p["cli_user"]]
    if p["cli_password"]:
        cmd.append("-p" + p["cli_password"])
    if p.get("unix_socket"):
        cmd.append("--socket=" + p["unix_socket"])
    else:
        cmd += ["-h" + p["host"], "-P%d" % p["port"], "--protocol=TCP"]
    cmd += [p["database"], "-e", LOAD_SQL % data["tsv"]]
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    return None


METHODS = [
    ("load_table(arrow)", m_load_table_arrow),
    ("load_table(tuples)", m_load_table_tuples),
    ("mysqlc executemany", m_mysqlc_executemany),
    ("mysqlclient executemany", m_mysqlclient_executemany),
    ("mariadb CLI LOAD DATA", m_cli),
]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=None, help="rows to load (default 1000000)")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per method, best "
                    "kept (default 2; 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help="100k rows, one run")
    ap.add_argument("--dsn", default=None, help="mysql://user:pw@host:port/db of an existing "
                    "server (the CLI connects with the same account over TCP)")
    ap.add_argument("--methods", default=None,
                    help="comma-separated subset: arrow,tuples,mysqlc,mysqlclient,cli")
    args = ap.parse_args(argv)
    rows = args.rows or (100_000 if args.quick else 1_000_000)
    repeat = args.repeat or (1 if args.quick else 2)
    keys = ["arrow", "tuples", "mysqlc", "mysqlclient", "cli"]
    wanted = set((args.methods or ",".join(keys)).split(","))
    methods = [m for k, m in zip(keys, METHODS) if k in wanted]

    t0 = time.perf_counter()
    table = make_table(rows)
    tuples = list(zip(*(col.to_pylist() for col in table.columns)))
    data = {"arrow": table, "tuples": tuples}
    tmpdir = tempfile.mkdtemp(prefix="mysqlc-bench-load-")
    data["tsv"] = os.path.join(tmpdir, "bench_load.tsv")
    with open(data["tsv"], "wb") as f:      # the same text load_table sends
        for batch in table.to_batches(max_chunksize=65536):
            f.write(_core.infile_encode_arrow(*batch.__arrow_c_array__()))
    data["cli"] = shutil.which("mariadb") or shutil.which("mysql")
    if data["cli"] is None:
        methods = [m for m in methods if m[1] is not m_cli]
    print("data: %d rows x %d columns built in %.1f s; TSV %.1f MB"
          % (rows, len(COLUMNS), time.perf_counter() - t0,
             os.path.getsize(data["tsv"]) / 1e6), flush=True)

    srv, p = server_params(args)
    try:
        c = connect_mysqlc(p)
        version = c.get_server_info()
        c.close()
        print("server: %s; python %s; mysqlc %s; %d CPUs" % (
            version, sys.version.split()[0], mysqlc.__version__, os.cpu_count()), flush=True)
        reset(p)
        # warm-up (untimed): the first load into a fresh server also grows its files
        m_load_table_arrow(p, data)
        _count, ref = truncate_and_checksum(p)
        best = {}
        # round-robin over the methods, so that a change in the machine's load during
        # the run spreads over all of them
        for run in range(repeat):
            for name, fn in methods:
                gc.collect()
                w0, c0 = time.perf_counter(), time.process_time()
                n = fn(p, data)
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                count, checksum = truncate_and_checksum(p)
                if count != rows or (n is not None and n != rows):
                    raise SystemExit("%s loaded %s rows (count %d), expected %d"
                                     % (name, n, count, rows))
                if checksum != ref:
                    raise SystemExit("%s: CHECKSUM TABLE %s differs from load_table's %s"
                                     % (name, checksum, ref))
                print("  %-26s run %d: %.2f s" % (name, run + 1, wall), flush=True)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu if fn is not m_cli else None)
        results = [(name, best[name][0], best[name][1]) for name, _fn in methods]
    finally:
        if srv is not None:
            srv.stop()
        shutil.rmtree(tmpdir, ignore_errors=True)

    base = dict((n, w) for n, w, _ in results)
    print()
    print("%d rows x 10 columns, best of %d; checksums equal" % (rows, repeat))
    print("%-26s %9s %12s %11s %10s" % ("method", "wall s", "rows/s", "client CPU", "vs arrow"))
    arrow = base.get("load_table(arrow)")
    for name, wall, cpu in results:
        print("%-26s %9.2f %12.0f %11s %10s" % (
            name, wall, rows / wall, "%.2f s" % cpu if cpu is not None else "n/a",
            "%.2fx" % (wall / arrow) if arrow else "-"))
    em = base.get("mysqlc executemany")
    cli = base.get("mariadb CLI LOAD DATA")
    print()
    for lt in ("load_table(arrow)", "load_table(tuples)"):
        if lt not in base:
            continue
        if em:
            r = em / base[lt]
            print("%-20s %.2fx mysqlc executemany's rows/s (target >= 3x): %s"
                  % (lt, r, "met" if r >= 3 else "NOT met"))
        if cli:
            r = base[lt] / cli
            print("%-20s %.2fx the CLI's LOAD DATA time (target <= 1.3x): %s"
                  % (lt, r, "met" if r <= 1.3 else "NOT met"))


if __name__ == "__main__":
    main()
