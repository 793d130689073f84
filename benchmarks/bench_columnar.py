#!/usr/bin/env python3
"""Columnar benchmark (issue 8): a whole table to Arrow / pandas / polars with mysqlc's
``read_sql``, beside connectorx and ``pandas.read_sql`` on mysqlclient.

Method
------
The parent process starts one private server (``mysqlc.server.get_server()``; the
MYSQLC_TEST_DSN environment variable points it at an existing server instead) and creates
the table ``bench_columnar`` once, with MariaDB's SEQUENCE engine
(``INSERT ... SELECT ... FROM seq_1_to_N``): 10 columns, ``id`` INT PRIMARY KEY, BIGINT,
INT, VARCHAR(64) (a fifth ASCII, the rest with Latin-1, Cyrillic, CJK or emoji), DOUBLE,
DECIMAL(12,2), DATETIME(6), DATE, TEXT (20 % NULL) and SMALLINT.

Every configuration (a driver and a way of reading, see CONFIGS) then runs in its own
fresh worker process (this script with ``--worker``), so its imports, heap and peak
memory are its own.  A worker imports what it needs, does one warm-up read, then
``--runs`` timed reads of ``SELECT * FROM bench_columnar`` and reports for each:

* wall time (time.perf_counter) and rows/s,
* client CPU: time.process_time() of the worker, which counts all its threads (mysqlc's
  partition threads, connectorx's Rust threads),
* server CPU: utime+stime of the server process from /proc/PID/stat over the same section
  (only when the server runs on this machine and its pid is known).

Memory is measured on the worker's first read (the warm-up), when nothing but the
imports and the connection setup came before: peak RSS during the read (VmHWM, reset
through /proc/self/clear_refs just before it; ru_maxrss where that is not possible) minus
the RSS just before it, beside the size of the result (``Table.nbytes``,
``DataFrame.memory_usage(deep=True).sum()``, polars' ``estimated_size()``).  The ratio
peak / size is what the issue's memory target is about.

Correctness: every result is turned into a canonical Arrow table (integers int64, DOUBLE
float64, DECIMAL as integer hundredths, DATETIME as int64 microseconds, DATE as days,
strings as UTF-8), sorted by ``id`` and hashed column by column (values and NULL mask).
The parent checks that every configuration returned the expected row count and the same
digest, so a driver that drops rows, or converts a value wrongly, cannot look fast.

The ``--threads`` section measures how far independent reads overlap: one thread reading
``SELECT * FROM bench_columnar WHERE id <= K`` (K = --thread-rows, default 200,000, capped
at the table size) with ``mysqlc.read_sql(conn, ...)`` on its own connection, against 8
threads each with its own connection reading the same at once (a barrier starts them;
connections are opened before the timed section).  Overlap factor = 8 x (wall of 1) /
(wall of 8): 8 is perfect, 1 is fully serialised.  The same is done with the row-wise
``cursor.execute(); cursor.fetchall()`` as a contrast (it holds the GIL while making the
Python objects).  The machine's cores are shared by the client threads and the server, so
the attainable overlap is bounded by the core count; the client and server CPU are shown.
The ``replay`` rows take the server out: the server's bytes for the query are captured
once, then each thread decodes them with the C core alone (``_core.Connection._replay``)
-- ``fetch_arrow`` (GIL released while parsing) against the row decoder ``fetch`` (GIL
held): the overlap there is the client's own, bounded only by the cores.

Targets (issue 8), computed from the medians: mysqlc 1 partition >= 2x connectorx
1 partition (rows/s); mysqlc 4 partitions >= 1.5x connectorx 4 partitions; mysqlc (to
Arrow) >= 5x pandas.read_sql on mysqlclient (and mysqlc to pandas beside it, like for
like); mysqlc's peak memory <= 1.5x its table's size.  Issue 22: on the default cursor,
after a fetchall() on the connection (``mysqlc_cursor_arrow_after_rows``: SELECT 1 +
fetchall() before each execute() + fetch_arrow_table(), inside the timed section, about
0.1 ms), wall <= 1.3x read_sql()'s, and the same against read_sql(protocol="text"), like
for like (the default cursor sends text).  Each is printed as met or missed, with the
number.

Usage
-----
    .venv/bin/python benchmarks/bench_columnar.py [--quick] [--rows N] [--runs N]
        [--threads] [--threads-only] [--thread-rows K] [--configs a,b,...]
        [--json PATH] [--markdown PATH]

--rows N        table size (default 1,000,000); --quick: 100,000 rows and 2 timed runs
--runs N        timed runs per configuration after the warm-up (default 3)
--configs       comma-separated subset of the configuration names (``--list`` shows them)
--threads       also run the parallel-threads section; --threads-only runs only it
--thread-count  threads in the parallel run (default 8)
--json PATH     write every measurement (each run, versions, machine) as JSON
--markdown PATH write the Markdown summary (it is printed at the end in any case)

pandas.read_sql is given a SQLAlchemy engine (``mysql+mysqldb://...``), the connectable
its documentation names for databases other than sqlite3.
"""

import argparse
import datetime
import gc
import hashlib
import importlib.metadata
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _proc import CLK_TCK, server_cpu_seconds  # noqa: E402  (benchmarks/_proc.py)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if REPO not in sys.path:
    sys.path.insert(0, REPO)

TABLE = "bench_columnar"
SQL = "SELECT * FROM %s" % TABLE
DEFAULT_ROWS, QUICK_ROWS = 1000000, 100000
DEFAULT_THREAD_ROWS = 200000
WORKER_TIMEOUT = 1800
SERVER_ARGS = ["--innodb-buffer-pool-size=1G"]   # the whole table stays in memory

CREATE_SQL = """CREATE TABLE %s (
  id INT NOT NULL PRIMARY KEY,
  c_bigint BIGINT NOT NULL,
  c_int INT NOT NULL,
  c_varchar VARCHAR(64) NOT NULL,
  c_double DOUBLE NOT NULL,
  c_decimal DECIMAL(12,2) NOT NULL,
  c_datetime DATETIME(6) NOT NULL,
  c_date DATE NOT NULL,
  c_text TEXT NULL,
  c_smallint SMALLINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""" % TABLE

# s runs over 1..N (SIGNED: the sequence's seq is BIGINT UNSIGNED).
FILL_SQL = """INSERT INTO %s
SELECT s,
  s * 2654435761,
  (s * 7919) %% 2000001 - 1000000,
  CONCAT('name-', s, ELT(1 + s %% 5, '', ' café', ' жук', ' 漢字', ' 🙂')),
  s / 7e0 + 0.25,
  (s %% 1000000) * 1.37 - 500000,
  TIMESTAMP'2020-01-01 00:00:00' + INTERVAL s SECOND + INTERVAL (s * 37) %% 1000000 MICROSECOND,
  DATE'2000-01-01' + INTERVAL s %% 9000 DAY,
  IF(s %% 5 = 2, NULL, REPEAT(CONCAT('text ', s, ' '), 1 + s %% 4)),
  s %% 65536 - 32768
FROM (SELECT CAST(seq AS SIGNED) AS s FROM seq_1_to_%d) AS g"""

# Canonical form of each column for the digest (see canonical_table).
CANON = {"id": "int", "c_bigint": "int", "c_int": "int", "c_varchar": "str",
         "c_double": "float", "c_decimal": ("decimal", 2), "c_datetime": "timestamp",
         "c_date": "date", "c_text": "str", "c_smallint": "int"}


# --------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------

class Config:
    """One way of reading the table.  ``kind``: the result's kind (arrow, pandas, polars);
    ``default``: run without --configs."""

    def __init__(self, name, label, kind, driver, default=True):
        self.name, self.label, self.kind, self.driver = name, label, kind, driver
        self.default = default


CONFIG_LIST = [
    Config("mysqlc_arrow_1", "mysqlc read_sql -> Arrow, 1 partition", "arrow", "mysqlc"),
    Config("mysqlc_arrow_4", "mysqlc read_sql -> Arrow, 4 partitions on id", "arrow",
           "mysqlc"),
    Config("mysqlc_arrow_1_text", "mysqlc read_sql -> Arrow, 1 partition, protocol=text",
           "arrow", "mysqlc"),
    Config("mysqlc_cursor_arrow", "mysqlc default Cursor: execute() + fetch_arrow_table()",
           "arrow", "mysqlc"),
    Config("mysqlc_cursor_arrow_after_rows",
           "mysqlc default Cursor after a fetchall() on the connection: execute() + "
           "fetch_arrow_table()", "arrow", "mysqlc"),
    Config("mysqlc_prepared_cursor_arrow",
           "mysqlc PreparedCursor: execute() + fetch_arrow_table()", "arrow", "mysqlc"),
    Config("cx_arrow_1", "connectorx read_sql -> Arrow, 1 partition", "arrow", "connectorx"),
    Config("cx_arrow_4", "connectorx read_sql -> Arrow, 4 partitions on id", "arrow",
           "connectorx"),
    Config("mysqlc_pandas_1", "mysqlc read_sql -> pandas, 1 partition", "pandas", "mysqlc"),
    Config("pandas_read_sql", "pandas.read_sql, SQLAlchemy mysql+mysqldb (mysqlclient)",
           "pandas", "mysqlclient"),
    Config("cx_pandas_1", "connectorx read_sql -> pandas, 1 partition", "pandas",
           "connectorx", default=False),
    Config("mysqlc_polars_1", "mysqlc read_sql -> polars, 1 partition", "polars", "mysqlc"),
    Config("polars_cx_1", "polars.read_database_uri (connectorx), 1 partition", "polars",
           "connectorx"),
]
CONFIGS = {c.name: c for c in CONFIG_LIST}

THREAD_MODES = ("arrow", "fetchall", "arrow_replay", "fetchall_replay")


def cx_arrow_name(cx):
    """connectorx's return_type for a pyarrow Table: "arrow" (0.4) or "arrow2" (0.3)."""
    import inspect
    try:
        sig = str(inspect.signature(cx.read_sql))
    except (TypeError, ValueError):
        sig = ""
    if "'arrow'" in sig or '"arrow"' in sig:
        return "arrow"
    if "arrow2" in sig:
        return "arrow2"
    return "arrow"


def make_reader(name, spec):
    """(read, describe): read() returns the result of one read of SQL; imports and any
    setup (a SQLAlchemy engine) happen here, outside the timed section."""
    dsn = spec["dsn"]
    if name in ("mysqlc_cursor_arrow", "mysqlc_prepared_cursor_arrow",
                "mysqlc_cursor_arrow_after_rows"):
        import mysqlc
        import pyarrow  # noqa: F401
        prepared = name == "mysqlc_prepared_cursor_arrow"
        after_rows = name == "mysqlc_cursor_arrow_after_rows"
        from mysqlc.columnar import parse_dsn
        conn = mysqlc.connect(**parse_dsn(dsn))

        def read():
            cur = conn.cursor(prepared=prepared)
            if after_rows:
                # the connection's previous result was read as rows (issue 22: the stored
                # result decides its decoding at its first fetch); SELECT 1 costs ~0.1 ms
                cur.execute("SELECT 1")
                cur.fetchall()
            cur.execute(SQL)
            table = cur.fetch_arrow_table()
            cur.close()
            return table
        return read, "cur = conn.cursor(%s); %scur.execute(sql); cur.fetch_arrow_table()" % (
            "prepared=True" if prepared else "",
            "cur.execute('SELECT 1'); cur.fetchall(); " if after_rows else "")
    if name.startswith("mysqlc_"):
        import mysqlc
        kw = {}
        if name.endswith("_4"):
            kw = dict(partition_on="id", partitions=4)
        if name.endswith("_text"):
            kw["protocol"] = "text"
        rtype = {"arrow": "arrow", "pandas": "pandas", "polars": "polars"}[CONFIGS[name].kind]
        if rtype == "pandas":
            import pandas  # noqa: F401  (imported outside the timed section)
        if rtype == "polars":
            import polars  # noqa: F401
        import pyarrow  # noqa: F401
        return (lambda: mysqlc.read_sql(dsn, SQL, return_type=rtype, **kw)), \
            "mysqlc.read_sql(dsn, sql, return_type=%r%s)" % (
                rtype, "".join(", %s=%r" % kv for kv in kw.items()))
    if name in ("cx_arrow_1", "cx_arrow_4", "cx_pandas_1"):
        import connectorx as cx
        import pyarrow  # noqa: F401
        kw = {}
        if name == "cx_arrow_4":
            kw = dict(partition_on="id", partition_num=4)
        rtype = cx_arrow_name(cx) if "arrow" in name else "pandas"
        if rtype == "pandas":
            import pandas  # noqa: F401
        return (lambda: cx.read_sql(dsn, SQL, return_type=rtype, **kw)), \
            "connectorx.read_sql(dsn, sql, return_type=%r%s)" % (
                rtype, "".join(", %s=%r" % kv for kv in kw.items()))
    if name == "pandas_read_sql":
        import pandas as pd
        import sqlalchemy
        import MySQLdb  # noqa: F401
        k = spec["connect"]
        url = sqlalchemy.engine.URL.create(
            "mysql+mysqldb", username=k["user"], password=k["password"], host=k["host"],
            port=k["port"], database=k["database"], query={"charset": "utf8mb4"})
        engine = sqlalchemy.create_engine(url)
        return (lambda: pd.read_sql(SQL, engine)), \
            "pandas.read_sql(sql, sqlalchemy.create_engine('mysql+mysqldb://...'))"
    if name == "polars_cx_1":
        import polars as pl
        import connectorx  # noqa: F401
        return (lambda: pl.read_database_uri(SQL, dsn, engine="connectorx")), \
            "polars.read_database_uri(sql, dsn, engine='connectorx')"
    raise SystemExit("unknown configuration %r" % name)


# --------------------------------------------------------------------------------------
# Worker side: measuring
# --------------------------------------------------------------------------------------



def system_busy_seconds():
    """CPU seconds all cores spent busy (not idle, not iowait) since boot, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLK_TCK   # up to steal; guests are in user


class CpuMeter:
    """Client (this process), server (pid) and whole-machine CPU over a section; the
    machine's busy time minus client and server is what other processes used."""

    def __init__(self, pid):
        self.pid = pid
        self.s0, self.c0, self.m0 = (server_cpu_seconds(pid), time.process_time(),
                                     system_busy_seconds())

    def stop(self):
        s1, c1, m1 = server_cpu_seconds(self.pid), time.process_time(), system_busy_seconds()
        client = c1 - self.c0
        server = (s1 - self.s0) if self.s0 is not None and s1 is not None else None
        other = None
        if m1 is not None and self.m0 is not None:
            other = (m1 - self.m0) - client - (server or 0.0)
        return {"client_cpu_s": client, "server_cpu_s": server, "other_cpu_s": other}


def proc_status_mb(key):
    """VmRSS / VmHWM of this process in MB (from /proc/self/status), or None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def reset_peak_rss():
    """Reset VmHWM to the current RSS (Linux >= 4.0); False when not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # KiB on Linux


def result_rows(res):
    if isinstance(res, dict):   # fetchnumpy-style
        return len(next(iter(res.values()))) if res else 0
    if hasattr(res, "num_rows"):
        return res.num_rows
    return len(res)


def result_size(res, kind):
    """Bytes the result holds."""
    if kind == "arrow":
        return int(res.nbytes)
    if kind == "pandas":
        return int(res.memory_usage(deep=True, index=True).sum())
    if kind == "polars":
        return int(res.estimated_size())
    raise ValueError(kind)


def result_schema(res, kind):
    if kind == "arrow":
        return {f.name: str(f.type) for f in res.schema}
    if kind == "pandas":
        return {str(c): str(t) for c, t in res.dtypes.items()}
    return {c: str(t) for c, t in res.schema.items()}


def canonical_table(res, kind):
    """The result as a pyarrow Table of canonical columns (see CANON), sorted by id."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    if kind == "pandas":
        table = pa.Table.from_pandas(res, preserve_index=False)
    elif kind == "polars":
        table = res.to_arrow()
    else:
        table = res
    order = pc.sort_indices(table.column("id"))
    cols = {}
    for name, how in CANON.items():
        col = table.column(name).take(order).combine_chunks()
        t = col.type
        if how == "int":
            col = col.cast(pa.int64())
        elif how == "float":
            col = col.cast(pa.float64())
        elif isinstance(how, tuple):   # DECIMAL(p, s) -> int64 of 10**-s units
            scale = how[1]
            f = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
            units = np.rint(np.where(np.isnan(f), 0.0, f) * 10 ** scale).astype(np.int64)
            col = pa.array(units, mask=col.is_null().to_numpy(zero_copy_only=False))
        elif how == "timestamp":
            if pa.types.is_timestamp(t) and t.tz is not None:
                raise ValueError("%s: unexpected time zone %s" % (name, t.tz))
            col = col.cast(pa.timestamp("us")).cast(pa.int64())
        elif how == "date":
            if not pa.types.is_date32(t):
                col = col.cast(pa.date32())
            col = col.cast(pa.int32())
        elif how == "str":
            col = col.cast(pa.large_string())
        cols[name] = col
    return pa.table(cols)


def column_digest(col):
    """sha1 of a canonical column: NULL mask, then values (NULLs as 0 / empty)."""
    import numpy as np
    import pyarrow as pa
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    h = hashlib.sha1()
    h.update(col.is_null().to_numpy(zero_copy_only=False).tobytes())
    if pa.types.is_large_string(col.type):
        col = col.fill_null("")
        offs = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset:col.offset + len(col) + 1]
        h.update(np.diff(offs).tobytes())
        data = col.buffers()[2]
        if data is not None:
            h.update(memoryview(data)[int(offs[0]):int(offs[-1])])
    else:
        zero = 0.0 if pa.types.is_floating(col.type) else 0
        h.update(col.fill_null(zero).to_numpy().tobytes())
    return h.hexdigest()[:16]


def digest_result(res, kind):
    """{rows, columns: {name: digest}, sums: {...}, digest} of a result."""
    import pyarrow.compute as pc
    table = canonical_table(res, kind)
    cols = {n: column_digest(table.column(n)) for n in table.column_names}
    sums = {}
    for n in table.column_names:
        c = table.column(n)
        if n in ("c_varchar", "c_text"):
            sums[n] = pc.sum(pc.utf8_length(c)).as_py()   # total characters
        else:
            sums[n] = pc.sum(c).as_py()
        sums[n + ":nulls"] = c.null_count
    whole = hashlib.sha1("".join(cols[n] for n in sorted(cols)).encode()).hexdigest()[:16]
    return {"rows": table.num_rows, "columns": cols, "sums": sums, "digest": whole}


def timed(fn, pid):
    meter = CpuMeter(pid)
    t0 = time.perf_counter()
    res = fn()
    t1 = time.perf_counter()
    return res, dict(meter.stop(), wall_s=t1 - t0)


def worker_config(spec):
    name = spec["config"]
    cfg = CONFIGS[name]
    pid = spec.get("server_pid")
    read, call = make_reader(name, spec)
    gc.collect()
    # Memory: the first read in this fresh process.
    rss_before = proc_status_mb("VmRSS")
    hwm_reset = reset_peak_rss()
    maxrss_before = maxrss_mb()
    res, warm = timed(read, pid)
    if hwm_reset and proc_status_mb("VmHWM") is not None:
        peak, peak_method = proc_status_mb("VmHWM"), "VmHWM (reset before the read)"
    else:
        peak, peak_method = maxrss_mb(), "ru_maxrss"
    rss_after = proc_status_mb("VmRSS")
    size = result_size(res, cfg.kind)
    schema = result_schema(res, cfg.kind)
    warm_rows = result_rows(res)
    res = None
    gc.collect()
    runs = []
    for _ in range(spec["runs"]):
        res = None
        gc.collect()
        res, m = timed(read, pid)
        m["rows"] = result_rows(res)
        runs.append(m)
    try:
        check = digest_result(res, cfg.kind)
    except Exception as exc:   # reported as a check failure, the timings are kept
        traceback.print_exc()
        check = {"error": "%s: %s" % (type(exc).__name__, exc), "columns": {}}
    return {"config": name, "label": cfg.label, "kind": cfg.kind, "call": call,
            "warmup": dict(warm, rows=warm_rows), "runs": runs,
            "memory": {"rss_before_mb": rss_before, "peak_mb": peak,
                       "peak_delta_mb": peak - rss_before if rss_before is not None else None,
                       "rss_after_mb": rss_after, "maxrss_before_mb": maxrss_before,
                       "maxrss_end_mb": maxrss_mb(), "peak_method": peak_method,
                       "result_bytes": size},
            "schema": schema, "check": check}


def worker_threads(spec):
    """One or several threads, each with its own connection, reading the same rows."""
    import mysqlc
    mode, n = spec["mode"], spec["threads"]
    pid = spec.get("server_pid")
    sql = "SELECT * FROM %s WHERE id <= %d" % (TABLE, spec["thread_rows"])
    if mode == "arrow":
        import pyarrow  # noqa: F401
    conns = [mysqlc.connect(**spec["connect"]) for _ in range(n)]
    if mode.endswith("_replay"):
        # the server's bytes for the query, captured once: decoded below with no server
        core = conns[0]._conn
        core._start_capture()
        cur = conns[0].cursor(mysqlc.cursors.SSCursor)
        cur.execute(sql)
        while cur.fetchmany(65536):
            pass
        wire, flags = core._stop_capture(), core.client_flag
        cur.close()

    def one(conn):
        if mode.endswith("_replay"):
            from mysqlc import _core
            r = _core.Connection()
            r._replay(wire, flags)
            if mode == "arrow_replay":
                return r.fetch_arrow(-1)[2]
            return len(r.fetch(-1))
        if mode == "arrow":
            return mysqlc.read_sql(conn, sql).num_rows
        cur = conn.cursor()
        cur.execute(sql)
        rows = cur.fetchall()
        cur.close()
        return len(rows)

    def run_all():
        counts, spans, errors = [None] * n, [None] * n, []
        barrier = threading.Barrier(n + 1)

        def work(i):
            try:
                barrier.wait()
                t0 = time.perf_counter()
                counts[i] = one(conns[i])
                spans[i] = time.perf_counter() - t0
            except BaseException as exc:
                errors.append("%s: %s" % (type(exc).__name__, exc))
        threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        meter = CpuMeter(pid)
        t0 = time.perf_counter()
        barrier.wait()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        cpu = meter.stop()
        if errors:
            raise RuntimeError("; ".join(errors))
        return dict(cpu, wall_s=wall, rows=sum(counts), rows_per_thread=counts,
                    thread_wall_s=spans)

    warm = run_all()
    runs = [run_all() for _ in range(spec["runs"])]
    for c in conns:
        c.close()
    return {"mode": mode, "threads": n, "sql": sql, "warmup": warm, "runs": runs,
            "maxrss_mb": maxrss_mb()}


def worker_entry():
    spec = json.loads(sys.stdin.read())
    try:
        if spec["what"] == "config":
            res = worker_config(spec)
        else:
            res = worker_threads(spec)
        status = 0
    except Exception as exc:
        traceback.print_exc()
        res = {"error": "%s: %s" % (type(exc).__name__, exc)}
        status = 1
    with open(spec["result_path"], "w") as f:
        json.dump(res, f)
    return status


# --------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------

def run_worker(spec):
    """Run this script with --worker; return (result, error)."""
    with tempfile.NamedTemporaryFile(prefix="bench-columnar-", suffix=".json",
                                     delete=False) as tmp:
        path = tmp.name
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"],
                              input=json.dumps(dict(spec, result_path=path)), text=True,
                              capture_output=True, timeout=WORKER_TIMEOUT)
        with open(path) as f:
            text = f.read()
        data = json.loads(text) if text else None
        if data and "error" in data:
            return None, data["error"]
        if proc.returncode != 0 or data is None:
            err = (proc.stderr or "").strip().splitlines()
            return None, "exit status %d: %s" % (proc.returncode, err[-1] if err else "")
        return data, None
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % WORKER_TIMEOUT
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def median_or_none(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(res):
    runs = res["runs"]
    walls = [r["wall_s"] for r in runs]
    rows = runs[0]["rows"] if runs else 0
    s = {"rows": rows, "wall_median_s": statistics.median(walls), "wall_best_s": min(walls),
         "client_cpu_median_s": median_or_none([r["client_cpu_s"] for r in runs]),
         "server_cpu_median_s": median_or_none([r["server_cpu_s"] for r in runs]),
         "other_cpu_median_s": median_or_none([r.get("other_cpu_s") for r in runs])}
    s["rows_per_s_median"] = rows / s["wall_median_s"] if s["wall_median_s"] else None
    s["rows_per_s_best"] = rows / s["wall_best_s"] if s["wall_best_s"] else None
    sc = s["server_cpu_median_s"]
    s["wall_over_server_cpu"] = s["wall_median_s"] / sc if sc else None
    return s


def fmt_int(x):
    return "-" if x is None else "{:,.0f}".format(x)


def fmt_s(x, digits=3):
    return "-" if x is None else "%.*f" % (digits, x)


def fmt_mb(x):
    return "-" if x is None else "%.0f" % x


def fmt_x(x):
    return "-" if x is None else "%.2fx" % x


def text_table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(  # noqa: E731
        str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def target_line(name, got, want, unit="x", higher_is_better=True):
    """(text, status) for one target."""
    if got is None:
        return "%s: not measured" % name, "not measured"
    if higher_is_better:
        ok = got >= want
        detail = "%.2f%s (target >= %.2f%s)" % (got, unit, want, unit)
        short = "missed by %.0f %%: %.2f%s of the %.2f%s needed" % (
            100 * (1 - got / want), got, unit, want, unit)
    else:
        ok = got <= want
        detail = "%.2f%s (target <= %.2f%s)" % (got, unit, want, unit)
        short = "missed by %.0f %%: %.2f%s, over the %.2f%s allowed" % (
            100 * (got / want - 1), got, unit, want, unit)
    status = "met" if ok else "missed"
    return "%s: %s — %s" % (name, detail, "met" if ok else short), status


def compute_targets(results):
    """The issue's targets from the summaries (medians)."""
    S = {n: r["summary"] for n, r in results.items() if r.get("summary")}

    def ratio(a, b, key="rows_per_s_median"):
        if a in S and b in S and S[a][key] and S[b][key]:
            return S[a][key] / S[b][key]
        return None

    def mem(n):
        r = results.get(n)
        if not r or not r.get("memory"):
            return None
        m = r["memory"]
        if m["peak_delta_mb"] is None or not m["result_bytes"]:
            return None
        return m["peak_delta_mb"] * 1048576 / m["result_bytes"]

    out = []
    for key, label, got, want, hib in [
        ("cx1", "mysqlc 1 partition vs connectorx 1 partition (Arrow, rows/s)",
         ratio("mysqlc_arrow_1", "cx_arrow_1"), 2.0, True),
        ("cx4", "mysqlc 4 partitions vs connectorx 4 partitions (Arrow, rows/s)",
         ratio("mysqlc_arrow_4", "cx_arrow_4"), 1.5, True),
        ("pandas", "mysqlc (Arrow, 1 partition) vs pandas.read_sql on mysqlclient (rows/s)",
         ratio("mysqlc_arrow_1", "pandas_read_sql"), 5.0, True),
        ("pandas_like", "mysqlc to pandas vs pandas.read_sql on mysqlclient, like for like "
         "(rows/s)", ratio("mysqlc_pandas_1", "pandas_read_sql"), 5.0, True),
        ("after_rows", "default Cursor after a fetchall(): execute() + fetch_arrow_table() "
         "wall / read_sql() wall (issue 22)",
         ratio("mysqlc_arrow_1", "mysqlc_cursor_arrow_after_rows"), 1.3, False),
        ("after_rows_text", "the same / read_sql(protocol='text') wall, like for like",
         ratio("mysqlc_arrow_1_text", "mysqlc_cursor_arrow_after_rows"), 1.3, False),
        ("mem1", "mysqlc 1 partition: peak memory / Arrow table size",
         mem("mysqlc_arrow_1"), 1.5, False),
        ("mem4", "mysqlc 4 partitions: peak memory / Arrow table size",
         mem("mysqlc_arrow_4"), 1.5, False),
    ]:
        text, status = target_line(label, got, want, "x", hib)
        best = None
        if key in ("cx1", "cx4", "pandas", "pandas_like", "after_rows", "after_rows_text"):
            a, b = {"cx1": ("mysqlc_arrow_1", "cx_arrow_1"),
                    "cx4": ("mysqlc_arrow_4", "cx_arrow_4"),
                    "pandas": ("mysqlc_arrow_1", "pandas_read_sql"),
                    "pandas_like": ("mysqlc_pandas_1", "pandas_read_sql"),
                    "after_rows": ("mysqlc_arrow_1", "mysqlc_cursor_arrow_after_rows"),
                    "after_rows_text": ("mysqlc_arrow_1_text",
                                        "mysqlc_cursor_arrow_after_rows")}[key]
            best = ratio(a, b, "rows_per_s_best")
        out.append({"key": key, "target": label, "value": got, "want": want,
                    "higher_is_better": hib, "status": status, "text": text,
                    "value_from_best_runs": best})
    return out


def check_results(results, expected_rows):
    """Row counts and digests: every configuration against the reference (mysqlc_arrow_1,
    else the first that ran).  Adds result["check_status"]; returns notes."""
    ran = [n for n in results if results[n].get("check")]
    ref = "mysqlc_arrow_1" if "mysqlc_arrow_1" in ran else (ran[0] if ran else None)
    notes = []
    for n in ran:
        r = results[n]
        c = r["check"]
        problems = ["digest failed: " + c["error"]] if c.get("error") else []
        counts = {r["warmup"]["rows"]} | {x["rows"] for x in r["runs"]}
        if counts != {expected_rows}:
            problems.append("rows %s, expected %d" % (sorted(counts), expected_rows))
        if ref and n != ref:
            rc = results[ref]["check"]
            bad = [col for col in rc["columns"] if c["columns"].get(col) != rc["columns"][col]]
            if bad:
                problems.append("values differ from %s in %s" % (ref, ", ".join(bad)))
        r["check_status"] = "ok" if not problems else "; ".join(problems)
        if problems:
            notes.append("%s: %s" % (n, r["check_status"]))
    return ref, notes


def git_commit():
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", "src",
                                "mysqlc"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
        return head + (" (+ uncommitted changes in src/ or mysqlc/)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions():
    out = {"python": platform.python_version(), "mysqlc_commit": git_commit()}
    for dist in ("mysqlc", "pyarrow", "connectorx", "pandas", "polars", "numpy",
                 "mysqlclient", "SQLAlchemy"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


def create_table(srv, rows):
    import mysqlc
    conn = mysqlc.connect(**srv.connect_kwargs())
    cur = conn.cursor()
    cur.execute("SELECT VERSION()")
    version = cur.fetchone()[0]
    cur.execute("DROP TABLE IF EXISTS %s" % TABLE)
    cur.execute(CREATE_SQL)
    t0 = time.perf_counter()
    cur.execute(FILL_SQL % (TABLE, rows))
    conn.commit()
    took = time.perf_counter() - t0
    cur.execute("SELECT COUNT(*) FROM %s" % TABLE)
    n = cur.fetchone()[0]
    if n != rows:
        raise SystemExit("table has %d rows, expected %d" % (n, rows))
    cur.execute("SELECT data_length + index_length FROM information_schema.tables "
                "WHERE table_schema = DATABASE() AND table_name = %s", (TABLE,))
    disk = cur.fetchone()[0]
    conn.close()
    return version, took, disk


def main_section(args, base_spec, out):
    results = {}
    rows = args.rows
    print("\n== Whole table to columnar: %s (%s rows x 10 columns), %d timed runs after one "
          "warm-up, each configuration in its own process" % (SQL, fmt_int(rows), args.runs),
          flush=True)
    for name in args.configs:
        print("  %-20s ..." % name, end=" ", flush=True)
        t0 = time.perf_counter()
        res, err = run_worker(dict(base_spec, what="config", config=name))
        if err:
            print("FAILED: %s" % err, flush=True)
            results[name] = {"config": name, "label": CONFIGS[name].label, "error": err}
            continue
        res["summary"] = summarize(res)
        results[name] = res
        s = res["summary"]
        print("%s rows/s median (%.1f s in the worker)" % (fmt_int(s["rows_per_s_median"]),
                                                           time.perf_counter() - t0), flush=True)
    ref, notes = check_results(results, rows)
    headers = ["configuration", "wall med s", "best s", "rows/s (med)", "client CPU s",
               "server CPU s", "other CPU s", "wall/srv CPU", "peak MB", "result MB",
               "peak/size", "check"]
    trows = []
    for name in args.configs:
        r = results[name]
        if r.get("error"):
            trows.append([name] + ["-"] * 10 + ["FAILED"])
            continue
        s, m = r["summary"], r["memory"]
        size_mb = m["result_bytes"] / 1048576.0
        trows.append([name, fmt_s(s["wall_median_s"]), fmt_s(s["wall_best_s"]),
                      fmt_int(s["rows_per_s_median"]), fmt_s(s["client_cpu_median_s"]),
                      fmt_s(s["server_cpu_median_s"]), fmt_s(s["other_cpu_median_s"], 2),
                      fmt_x(s["wall_over_server_cpu"]),
                      fmt_mb(m["peak_delta_mb"]), "%.0f" % size_mb,
                      fmt_x(m["peak_delta_mb"] / size_mb if m["peak_delta_mb"] is not None
                            and size_mb else None), r.get("check_status", "-")])
    out["main_table"] = (headers, trows)
    print()
    print(text_table(headers, trows))
    print("\n  peak MB = peak RSS during the worker's first read minus the RSS just before it; "
          "result MB = Table.nbytes / DataFrame memory_usage(deep=True) / polars "
          "estimated_size(); other CPU = CPU time the rest of the machine used meanwhile "
          "(busy time from /proc/stat minus client and server); check = row count and "
          "per-column digest against %s" % ref)
    for name in args.configs:
        r = results[name]
        if not r.get("error"):
            print("  %-20s %s" % (name, r["call"]))
    if notes:
        print("\n  CHECK FAILURES:\n    " + "\n    ".join(notes))
    # Types differ between drivers (information: they are canonicalised for the digest).
    ref_schema = results.get(ref, {}).get("schema") if ref else None
    if ref_schema:
        for name in args.configs:
            r = results[name]
            if r.get("error") or name == ref or r["kind"] != "arrow":
                continue
            diff = ["%s %s" % (c, t) for c, t in r["schema"].items() if ref_schema.get(c) != t]
            if diff:
                print("  types of %s that differ from %s: %s" % (name, ref, ", ".join(diff)))
    pr = results.get("pandas_read_sql")
    if pr and pr.get("schema"):
        print("  pandas.read_sql dtypes: %s" % ", ".join(
            "%s %s" % kv for kv in pr["schema"].items()))
    return results, ref, notes


def server_bound_notes(results):
    """Where the wall time went, per Arrow configuration: server CPU, client CPU and the
    CPU other processes took meanwhile (a saturated machine stretches every wall time)."""
    out = []
    cores = os.cpu_count() or 1
    for name in ("mysqlc_arrow_1", "mysqlc_arrow_1_text", "mysqlc_arrow_4", "cx_arrow_1",
                 "cx_arrow_4"):
        r = results.get(name)
        if not r or not r.get("summary"):
            continue
        s = r["summary"]
        w, sc, cc = s["wall_median_s"], s["server_cpu_median_s"], s["client_cpu_median_s"]
        oc = s.get("other_cpu_median_s")
        if not sc:
            continue
        ours = (sc + cc) / w
        machine = ours + (oc / w if oc is not None else 0.0)
        saturated = oc is not None and machine >= 0.9 * cores
        load = ("; cores busy %.2f (server + client) + %.2f (other processes) of %d%s"
                % (ours, (oc or 0.0) / w, cores,
                   ": the machine was saturated, so the wall time includes waiting for a core"
                   if saturated else ""))
        ratio = w / sc
        if name.endswith("_4"):
            text = ("%s: wall %.3f s, server CPU %.3f s (all threads), client CPU %.3f s%s"
                    % (name, w, sc, cc, load))
        else:
            if ratio <= 1.15:
                verdict = "server-bound: the wall time is about the server's CPU time"
            elif cc <= sc <= 1.1 * cc or sc <= cc <= 1.1 * sc:
                verdict = "server and client CPU about equal"
            elif sc > cc:
                verdict = ("the server's CPU is the larger part, but the wall time exceeds it "
                           "by %.0f %%" % (100 * (ratio - 1)))
            else:
                verdict = "client-bound: the client's CPU time exceeds the server's"
            text = ("%s: wall / server CPU = %.2f (wall %.3f s, server CPU %.3f s, client CPU "
                    "%.3f s) - %s%s" % (name, ratio, w, sc, cc, verdict, load))
        out.append(text)
    a, b = results.get("mysqlc_arrow_1"), results.get("cx_arrow_1")
    if a and b and a.get("summary") and b.get("summary"):
        sa, sb = a["summary"], b["summary"]
        floor = max(sa["server_cpu_median_s"] or 0.0, sa["client_cpu_median_s"])
        if floor:
            out.append("ceiling of the 1-partition ratio: mysqlc cannot be faster than the "
                       "server's CPU time for the query (%.3f s here, %s rows/s); against "
                       "connectorx's measured %.3f s that is %.2fx at most; connectorx's own "
                       "client CPU is %.3f s (mysqlc's %.3f s, %.1fx less)"
                       % (floor, fmt_int(sa["rows"] / floor), sb["wall_median_s"],
                          sb["wall_median_s"] / floor, sb["client_cpu_median_s"],
                          sa["client_cpu_median_s"],
                          sb["client_cpu_median_s"] / sa["client_cpu_median_s"]
                          if sa["client_cpu_median_s"] else float("nan")))
    return out


def threads_section(args, base_spec, out):
    n = args.thread_count
    k = min(args.thread_rows, args.rows)
    print("\n== Parallel threads: SELECT * FROM %s WHERE id <= %s, 1 thread vs %d threads, each "
          "with its own connection (%d timed runs after one warm-up)"
          % (TABLE, fmt_int(k), n, args.runs), flush=True)
    res = {}
    for mode in THREAD_MODES:
        for t in (1, n):
            key = "%s_%d" % (mode, t)
            print("  %-14s ..." % key, end=" ", flush=True)
            r, err = run_worker(dict(base_spec, what="threads", mode=mode, threads=t,
                                     thread_rows=k))
            if err:
                print("FAILED: %s" % err, flush=True)
                res[key] = {"error": err}
                continue
            walls = [x["wall_s"] for x in r["runs"]]
            r["summary"] = {
                "wall_median_s": statistics.median(walls), "wall_best_s": min(walls),
                "client_cpu_median_s": median_or_none([x["client_cpu_s"] for x in r["runs"]]),
                "server_cpu_median_s": median_or_none([x["server_cpu_s"] for x in r["runs"]]),
                "other_cpu_median_s": median_or_none([x.get("other_cpu_s") for x in r["runs"]]),
                "rows": r["runs"][0]["rows"],
                "rows_ok": all(x["rows_per_thread"] == [k] * t for x in r["runs"])}
            res[key] = r
            print("wall %.3f s" % r["summary"]["wall_median_s"], flush=True)
    headers = ["reader", "threads", "rows", "wall med s", "client CPU s", "server CPU s",
               "other CPU s", "cores busy: ours/all", "rows/s", "overlap", "CPU bound"]
    trows = []
    cores = os.cpu_count() or 1
    for mode in THREAD_MODES:
        one, many = res.get("%s_1" % mode), res.get("%s_%d" % (mode, n))
        reader = {"arrow": "read_sql -> Arrow", "fetchall": "cursor.fetchall()",
                  "arrow_replay": "replay -> fetch_arrow", "fetchall_replay": "replay -> rows"}[mode]
        for t, r in ((1, one), (n, many)):
            if not r or r.get("error"):
                trows.append([reader, t] + ["-"] * 8 + ["FAILED"])
                continue
            s = r["summary"]
            busy = busy_all = None
            if s["server_cpu_median_s"] is not None:
                busy = (s["client_cpu_median_s"] + s["server_cpu_median_s"]) / s["wall_median_s"]
                if s["other_cpu_median_s"] is not None:
                    busy_all = busy + s["other_cpu_median_s"] / s["wall_median_s"]
            s["cores_busy"], s["cores_busy_machine"] = busy, busy_all
            overlap = bound = None
            if t == n and one and not one.get("error"):
                o = one["summary"]
                overlap = n * o["wall_median_s"] / s["wall_median_s"]
                if o["server_cpu_median_s"] is not None:
                    # n reads need n x (client + server CPU of one) core-seconds: on `cores`
                    # cores they cannot take less than that / cores, nor less than one read.
                    need = n * (o["client_cpu_median_s"] + o["server_cpu_median_s"]) / cores
                    bound = n * o["wall_median_s"] / max(o["wall_median_s"], need)
                s["overlap"], s["overlap_cpu_bound"] = overlap, bound
            trows.append([reader, t, fmt_int(s["rows"]), fmt_s(s["wall_median_s"]),
                          fmt_s(s["client_cpu_median_s"]), fmt_s(s["server_cpu_median_s"]),
                          fmt_s(s["other_cpu_median_s"], 2),
                          "-" if busy is None else "%.2f/%s" % (
                              busy, "-" if busy_all is None else "%.2f" % busy_all),
                          fmt_int(s["rows"] / s["wall_median_s"]),
                          ("%.2f of %d" % (overlap, n)) if overlap else "",
                          ("%.2f" % bound) if bound else ""]
                         + ([] if s["rows_ok"] else ["WRONG ROW COUNT"]))
    print()
    print(text_table(headers, trows))
    print("\n  overlap = %d x wall(1 thread) / wall(%d threads): %d would be perfect, 1 fully "
          "serialised.  The client threads and the server share %d cores: CPU bound = the "
          "overlap the %d reads could reach if they had all %d cores and nothing else limited "
          "them (from one read's client + server CPU).  cores busy = (client + server CPU) / "
          "wall, and with the CPU the rest of the machine used meanwhile (other CPU): near %d "
          "means the machine was saturated."
          % (n, n, n, cores, n, cores, cores))
    out["threads_table"] = (headers, trows)
    return res


def markdown(doc, out):
    v, m = doc["versions"], doc["machine"]
    lines = ["### Columnar reads (issue 8): %s rows x 10 mixed columns" % fmt_int(doc["rows"]),
             "",
             "- machine: %s, %d cores (shared by the client and the server)" % (m["cpu"],
                                                                                m["cores"]),
             "- versions: Python %s, mysqlc %s (commit %s), pyarrow %s, connectorx %s, "
             "pandas %s, polars %s, mysqlclient %s, SQLAlchemy %s; server %s"
             % (v["python"], v["mysqlc"], v["mysqlc_commit"], v["pyarrow"], v["connectorx"],
                v["pandas"], v["polars"], v["mysqlclient"], v["SQLAlchemy"],
                doc["server"]["version"]),
             "- command: `%s`" % doc["command"],
             "- method: `%s` over TCP on 127.0.0.1, each configuration in a fresh process, "
             "one warm-up then %d timed runs (median, best); client CPU = the worker's "
             "process time (all threads), server CPU from /proc/PID/stat, other CPU = the "
             "machine's busy time (/proc/stat) minus both, i.e. other processes; peak = peak RSS of the "
             "first read minus the RSS before it; every result checked against mysqlc's "
             "(row count, per-column digest)." % (SQL, doc["runs"]),
             ""]
    if "main_table" in out:
        h, r = out["main_table"]
        lines += [md_table(h, r), ""]
        lines += ["Targets (medians; best-run ratio in brackets):", ""]
        for t in doc["targets"]:
            best = (" [best runs: %.2fx]" % t["value_from_best_runs"]
                    if t.get("value_from_best_runs") else "")
            lines.append("- %s%s" % (t["text"], best))
        if doc.get("server_bound"):
            lines += ["", "Where the time goes:", ""]
            lines += ["- " + s for s in doc["server_bound"]]
        if doc.get("check_notes"):
            lines += ["", "Check failures:", ""] + ["- " + s for s in doc["check_notes"]]
        if doc.get("failed"):
            lines += ["", "Failed configurations:", ""] + ["- " + s for s in doc["failed"]]
        lines.append("")
    if "threads_table" in out:
        h, r = out["threads_table"]
        lines += ["Parallel threads (each with its own connection, `%s`):"
                  % doc["threads"]["sql"], "", md_table(h, r), "",
                  "overlap = %d x wall(1) / wall(%d); the %d cores are shared with the server; "
                  "CPU bound = the overlap reachable with all %d cores given one read's client + "
                  "server CPU; other CPU = CPU used by the rest of the machine meanwhile."
                  % (doc["threads"]["count"], doc["threads"]["count"], m["cores"], m["cores"]),
                  ""]
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, help="table rows (default %d)" % DEFAULT_ROWS)
    p.add_argument("--quick", action="store_true", help="%d rows, 2 runs" % QUICK_ROWS)
    p.add_argument("--runs", type=int, help="timed runs per configuration (default 3)")
    p.add_argument("--configs", help="comma-separated configuration names")
    p.add_argument("--list", action="store_true", help="list the configurations")
    p.add_argument("--threads", action="store_true", help="also run the threads section")
    p.add_argument("--threads-only", action="store_true", help="run only the threads section")
    p.add_argument("--thread-rows", type=int, default=DEFAULT_THREAD_ROWS)
    p.add_argument("--thread-count", type=int, default=8)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--markdown", metavar="PATH")
    args = p.parse_args(argv)
    if args.list:
        for c in CONFIG_LIST:
            print("%-20s %s%s" % (c.name, c.label, "" if c.default else " (not by default)"))
        raise SystemExit(0)
    args.rows = args.rows or (QUICK_ROWS if args.quick else DEFAULT_ROWS)
    args.runs = args.runs or (2 if args.quick else 3)
    if args.configs:
        args.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
        bad = [c for c in args.configs if c not in CONFIGS]
        if bad:
            p.error("unknown configuration(s) %s (see --list)" % ", ".join(bad))
    else:
        args.configs = [c.name for c in CONFIG_LIST if c.default]
    if args.threads_only:
        args.threads, args.configs = True, []
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    from mysqlc.server import get_server
    command = " ".join([".venv/bin/python", "benchmarks/bench_columnar.py"] + argv)
    started = datetime.datetime.now().astimezone()
    with get_server(extra_args=SERVER_ARGS) as srv:
        pid = getattr(srv, "pid", None)
        print("server  : pid %s, %s" % (pid, srv.dsn()), flush=True)
        version, took, disk = create_table(srv, args.rows)
        print("table   : %s, %s rows, created in %.1f s (%.0f MB on disk)"
              % (TABLE, fmt_int(args.rows), took, (disk or 0) / 1048576.0), flush=True)
        print("server  : %s, CPU %s" % (version, ("from /proc/%d/stat" % pid) if pid
                                        else "not measured (server not local)"))
        print("machine : %s, %d cores, load %s" % (cpu_model(), os.cpu_count() or 0,
                                                   " ".join("%.2f" % x for x in os.getloadavg())))
        base = {"dsn": srv.dsn(), "connect": srv.connect_kwargs(), "server_pid": pid,
                "runs": args.runs}
        out = {}
        results, ref, notes = ({}, None, [])
        if args.configs:
            results, ref, notes = main_section(args, base, out)
        thread_res = threads_section(args, base, out) if args.threads else None

    doc = {"schema": "bench-columnar-v1", "started": started.isoformat(timespec="seconds"),
           "command": command, "rows": args.rows, "runs": args.runs, "sql": SQL,
           "machine": {"cpu": cpu_model(), "cores": os.cpu_count(),
                       "platform": platform.platform(), "loadavg_end": os.getloadavg()},
           "versions": versions(),
           "server": {"version": version, "pid_measured": bool(pid), "table_fill_s": took,
                      "table_disk_bytes": disk},
           "results": results, "reference": ref, "check_notes": notes,
           "failed": ["%s: %s" % (n, r["error"]) for n, r in results.items() if r.get("error")]}
    if args.configs:
        doc["targets"] = compute_targets(results)
        doc["server_bound"] = server_bound_notes(results)
        print("\n== Targets (issue 8), from the medians")
        for t in doc["targets"]:
            best = (" [best runs: %.2fx]" % t["value_from_best_runs"]
                    if t.get("value_from_best_runs") else "")
            print("  " + t["text"] + best)
        if doc["server_bound"]:
            print("\n== Where the time goes")
            for s in doc["server_bound"]:
                print("  " + s)
    if thread_res is not None:
        doc["threads"] = {"count": args.thread_count,
                          "rows_per_thread": min(args.thread_rows, args.rows),
                          "sql": "SELECT * FROM %s WHERE id <= %d"
                                 % (TABLE, min(args.thread_rows, args.rows)),
                          "results": thread_res}
    md = markdown(doc, out)
    print("\n== Markdown for benchmarks/RESULTS.md\n")
    print(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1, default=str)
        print("\nwrote %s" % args.json)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md + "\n")
        print("wrote %s" % args.markdown)
    bad = notes or doc["failed"]
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker_entry())
    sys.exit(main())
