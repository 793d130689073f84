#!/usr/bin/env python3
"""End-to-end benchmark: mysqlc against mysqlclient (MySQLdb), PyMySQL,
mysql-connector-python (its C extension) and MariaDB Connector/Python, plus a wire replay
of the C decoder against the floor of creating the same Python objects (--replay).

One server is started once by this (parent) process with ``mysqlc.server.get_server()``
(or an existing one is used: ``--dsn`` or the MYSQLC_TEST_DSN environment variable). The
parent creates and fills the tables, then runs every (scenario, driver) pair in its own
worker subprocess (``bench.py --worker DRIVER SCENARIO``), so that one driver's imports,
heap and garbage never affect another's numbers. A worker connects, does one warm-up run,
then N timed runs, and reports for each run:

* wall time (time.perf_counter) of the timed section,
* the worker's own CPU time (time.process_time: user+sys of the client process) for the
  same section,
* the server process's CPU time for the same section (utime+stime from /proc/PID/stat,
  when the server runs on this machine and its pid is known),

plus its peak RSS and a digest of the rows it received. The parent compares the digests
across drivers so a driver that returns wrong (or no) data cannot look fast.

Every scenario can run over several transports (``--transport plain,tls,compress`` or a
suffix such as ``int_200k@tls``): ``tls`` (the private server is started with a CA and a
server certificate made by benchmarks/_certs.py; each driver verifies it with its own
``ssl={"ca": ...}`` options), ``compress`` (the zlib compressed protocol) and
``tls+compress``. Each worker checks in its own session that TLS (``Ssl_cipher``) and
compression (``Compression``) really are what the variant says.

Prepared-statement and unbuffered variants of some scenarios (``point_prepared``,
``int10_200k_prepared``, ``int10_200k_ss``, ...) run the same query through
``cursor(prepared=True)`` and/or an unbuffered cursor; a closing table puts each beside its
text-protocol, buffered base and checks that the rows are the same.

--replay captures the server's bytes for the big scans once (text and binary protocol) and
times mysqlc's C decoder on them with no server and no socket (benchmarks/_replay.py),
beside benchmarks/_floor.c, which only creates the same Python objects.  --chart and
--results write the PNG chart and the generated part of benchmarks/RESULTS.md
(benchmarks/_report.py).

See benchmarks/README.md for how to read the output.
"""

import sys

# mysql-connector-python's C extension (_mysql_connector) links the OpenSSL 3.5 it ships
# (mysql/vendor/).  Once the interpreter has loaded the system's older libcrypto.so.3
# (``import hashlib`` or ``ssl`` does), the extension fails to load and the package silently
# falls back to pure Python; so a mysqlconnector worker loads it first, as an application
# on such a system would have to.
if sys.argv[1:2] in (["--worker"], ["--probe"]) and sys.argv[2:3] == ["mysqlconnector"]:
    try:
        import _mysql_connector  # noqa: F401
    except ImportError:
        pass

import argparse
import datetime
import gc
import hashlib
import importlib
import importlib.util
import json
import os
import platform
import resource
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import traceback
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import _report  # noqa: E402  (benchmarks/_report.py: targets, chart, RESULTS.md)
from _proc import CLK_TCK, server_cpu_seconds  # noqa: E402,F401

DRIVERS = ("mysqlc", "mysqlclient", "pymysql", "mysqlconnector", "mariadb")
DRIVER_MODULE = {"mysqlc": "mysqlc", "mysqlclient": "MySQLdb", "pymysql": "pymysql",
                 "mysqlconnector": "mysql.connector", "mariadb": "mariadb"}
DRIVER_DIST = {"mysqlc": "mysqlc", "mysqlclient": "mysqlclient", "pymysql": "PyMySQL",
               "mysqlconnector": "mysql-connector-python", "mariadb": "mariadb"}
# Drivers with server-side prepared statements (binary protocol); the others are n/a there.
HAS_PREPARED = ("mysqlc", "mysqlconnector", "mariadb")
NO_PREPARED = "n/a: %s has no server-side prepared statements"

# --------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------
# Tables: rows in a full / --quick run.  The parent builds only those the chosen
# scenarios read (setup_main, table_defs).
TABLE_ROWS = {"t_int": (200000, 20000), "t_int1m": (1000000, 100000),
              "t_mixed": (200000, 20000), "t_dt": (200000, 20000),
              "t_wide": (200000, 20000), "t_text": (200000, 20000), "t_blob": (50, 10),
              "t_ins": (0, 0)}
WIDE_COLUMNS = 100
BLOB_BYTES = 1 << 20
POINT_SQL = "SELECT * FROM t_int WHERE id = %s"
INSERT_SQL = "INSERT INTO t_ins VALUES (%s,%s,%s,%s)"
SS_ARRAYSIZE = 1000


class Scenario:
    """One timed workload.

    kind: ``select1`` (loop of SELECT 1), ``point`` (loop of primary-key lookups),
    ``scan`` (``loops`` x execute(sql) + fetchall()), ``stream`` (execute(sql), then
    iterate an unbuffered cursor), ``executemany`` (INSERT of ``rows`` rows).
    rows / loops: (full, quick); None rows = the whole table.  size() = rows (or round
    trips) per timed run.  base: the text-protocol, buffered scenario a prepared /
    unbuffered variant is compared with.  group: ``default``, ``large`` (opt-in:
    --large or --scenarios), ``legacy`` (earlier names, run only when named).
    """

    def __init__(self, name, kind, description, table=None, rows=None, loops=(1, 1),
                 prepared=False, unbuffered=False, base=None, group="default", where=None):
        self.name, self.kind, self.description = name, kind, description
        self.table, self.rows, self.loops = table, rows, loops
        self.prepared, self.unbuffered, self.base, self.group = prepared, unbuffered, base, group
        self.where = where  # column limiting a partial read: "WHERE <where> <= rows"

    def rows_per_query(self, quick):
        if self.rows is not None:
            return self.rows[quick]
        return TABLE_ROWS[self.table][quick]

    def size(self, quick):
        if self.kind in ("select1", "point"):
            return self.loops[quick]
        return self.rows_per_query(quick) * self.loops[quick]

    @property
    def per_query(self):
        return self.kind in ("select1", "point")

    def sql(self, quick):
        if self.kind in ("select1", "point", "executemany"):
            return None
        sql = "SELECT * FROM %s" % self.table
        n = self.rows_per_query(quick)
        if n < TABLE_ROWS[self.table][quick]:
            sql += " WHERE %s <= %d" % (self.where, n)
        return sql


SCENARIO_LIST = []


def _add(name, kind, description, **kw):
    SCENARIO_LIST.append(Scenario(name, kind, description, **kw))


def _variants(base, *which, group="default"):
    """Prepared / unbuffered variants of scan scenario ``base``."""
    b = next(s for s in SCENARIO_LIST if s.name == base)
    text = {"prepared": "cursor(prepared=True): binary protocol",
            "ss": "unbuffered cursor, for row in cursor (rows not kept)",
            "ss_prepared": "unbuffered prepared cursor (mysqlc: server-side cursor, "
                           "COM_STMT_FETCH of arraysize=%d rows)" % SS_ARRAYSIZE}
    for w in which:
        _add("%s_%s" % (base, w), "stream" if "ss" in w else b.kind,
             "as %s, %s" % (base, text[w]), table=b.table, rows=b.rows, loops=b.loops,
             prepared="prepared" in w, unbuffered="ss" in w, base=base, group=group,
             where=b.where)


_INT10 = "10 INT/BIGINT columns"
_WIDE = "100 columns (51 INT, 49 VARCHAR(32))"
_add("select1", "select1", "loop of cursor.execute('SELECT 1') + fetchall()",
     loops=(5000, 500))
_add("point", "point", "loop of cursor.execute('SELECT * FROM t_int WHERE id = %s', (k,)) "
     "+ fetchall(), 10 columns", table="t_int", loops=(5000, 500))
_add("point_prepared", "point", "as point, cursor(prepared=True): COM_STMT_EXECUTE of a "
     "cached statement, binary rows", table="t_int", loops=(5000, 500), prepared=True,
     base="point")
_add("int10_1", "scan", "loop of SELECT * FROM t_int WHERE id <= 1 + fetchall(): 1 row x "
     + _INT10, table="t_int", rows=(1, 1), loops=(5000, 500), where="id")
_add("int10_100", "scan", "loop of SELECT * FROM t_int WHERE id <= 100 + fetchall(): 100 "
     "rows x " + _INT10, table="t_int", rows=(100, 100), loops=(1000, 100), where="id")
_add("int10_10k", "scan", "loop of SELECT * FROM t_int WHERE id <= 10000 + fetchall(): "
     "10,000 rows x " + _INT10, table="t_int", rows=(10000, 10000), loops=(20, 2), where="id")
_add("int10_200k", "scan", "SELECT * FROM t_int, fetchall(): " + _INT10, table="t_int")
_variants("int10_200k", "prepared", "ss", "ss_prepared")
_add("int10_1m", "scan", "SELECT * FROM t_int1m, fetchall(): " + _INT10, table="t_int1m",
     group="large")
_variants("int10_1m", "ss", group="large")
_add("wide100_1", "scan", "loop of SELECT * FROM t_wide WHERE c000 <= 1 + fetchall(): 1 row "
     "x " + _WIDE, table="t_wide", rows=(1, 1), loops=(2000, 200), where="c000")
_add("wide100_100", "scan", "loop of SELECT * FROM t_wide WHERE c000 <= 100 + fetchall(): "
     "100 rows x " + _WIDE, table="t_wide", rows=(100, 100), loops=(200, 20), where="c000")
_add("wide100_10k", "scan", "SELECT * FROM t_wide WHERE c000 <= 10000, fetchall(): 10,000 "
     "rows x " + _WIDE, table="t_wide", rows=(10000, 2000), loops=(2, 1), where="c000")
_add("wide100_200k", "scan", "SELECT * FROM t_wide, fetchall(): " + _WIDE, table="t_wide")
_variants("wide100_200k", "prepared")
_add("mixed_200k", "scan", "SELECT * FROM t_mixed, fetchall(): int, bigint, varchar(64), "
     "double, decimal(12,2), datetime, date, text NULL", table="t_mixed")
_variants("mixed_200k", "prepared")
_add("datetime_200k", "scan", "SELECT * FROM t_dt, fetchall(): DATETIME(6), TIMESTAMP, DATE",
     table="t_dt")
_variants("datetime_200k", "prepared")
_add("text_200k", "scan", "SELECT * FROM t_text, fetchall(): int, CHAR(8), VARCHAR(100), "
     "VARCHAR(64) (Latin-1, Cyrillic, CJK, emoji, NULL), TEXT of 33-264 bytes",
     table="t_text")
_add("blob_1m", "scan", "SELECT * FROM t_blob, fetchall(): int, LONGBLOB of 1 MiB per row",
     table="t_blob")
_variants("blob_1m", "ss")
_add("executemany_20k", "executemany", "executemany('INSERT INTO t_ins VALUES "
     "(%s,%s,%s,%s)', rows) + commit", table="t_ins", rows=(20000, 2000))
_add("executemany_20k_prepared", "executemany", "as executemany_20k, cursor(prepared=True) "
     "(mysqlc, mariadb: COM_STMT_BULK_EXECUTE)", table="t_ins", rows=(20000, 2000),
     prepared=True, base="executemany_20k")
_add("executemany_200k", "executemany", "as executemany_20k with 200,000 rows",
     table="t_ins", rows=(200000, 20000), group="large")
# Earlier names: a different size of the same tables (run when named).
_add("mixed_100k", "scan", "SELECT * FROM t_mixed WHERE id <= N, fetchall(): the first "
     "100,000 rows (10,000 with --quick) of t_mixed, as "
     "mixed_200k", table="t_mixed", rows=(100000, 10000), where="id", group="legacy")
_add("wide_2k", "scan", "SELECT * FROM t_wide WHERE c000 <= N (2,000; 200 with --quick), "
     "fetchall(): " + _WIDE,
     table="t_wide", rows=(2000, 200), where="c000", group="legacy")

SCENARIO = {s.name: s for s in SCENARIO_LIST}
SCENARIOS = tuple(s.name for s in SCENARIO_LIST)
DEFAULT_SCENARIOS = tuple(s.name for s in SCENARIO_LIST if s.group == "default")
LARGE_SCENARIOS = tuple(s.name for s in SCENARIO_LIST if s.group == "large")
# The names of earlier versions of this script.
ALIASES = {"int_200k": "int10_200k", "int_200k_prepared": "int10_200k_prepared",
           "int_200k_ss": "int10_200k_ss", "int_200k_ss_prepared": "int10_200k_ss_prepared"}
VARIANT_OF = {s.name: s.base for s in SCENARIO_LIST if s.base}
# Scenarios a driver cannot run (reported as skipped).
SCENARIO_UNSUPPORTED = {(d, s.name): NO_PREPARED % d for s in SCENARIO_LIST if s.prepared
                        for d in DRIVERS if d not in HAS_PREPARED}
# The wire-replay (--replay) scans: captured once from the server as text and binary rows.
REPLAY_SCENARIOS = ("int10_200k", "mixed_200k", "datetime_200k", "wide100_200k", "text_200k")
# A scenario's replay / floor: the same rows (text or binary protocol, buffered or not).
FLOOR_OF = {s.name: (s.base or s.name) for s in SCENARIO_LIST
            if (s.base or s.name) in REPLAY_SCENARIOS}

TRANSPORTS = ("plain", "tls", "compress", "tls+compress")
TRANSPORT_TEXT = {"plain": "plain TCP", "tls": "TLS", "compress": "zlib compressed protocol",
                  "tls+compress": "TLS + zlib compressed protocol"}
# Drivers that cannot do a transport at all (reported as skipped, not run).
TRANSPORT_UNSUPPORTED = {("pymysql", "compress"): "PyMySQL has no compressed protocol",
                         ("pymysql", "tls+compress"): "PyMySQL has no compressed protocol"}

SCHEMA_VERSION = "bench-v2"
WORKER_TIMEOUT = 900  # seconds for one (driver, scenario) worker
# A private server gets a buffer pool that holds every table (about 0.5 GB in a full run).
SERVER_ARGS = ["--innodb-buffer-pool-size=1G"]


# --------------------------------------------------------------------------------------
# Server helper (mysqlc/server.py) and DSN handling
# --------------------------------------------------------------------------------------

def load_server_module():
    """Return the mysqlc.server module, even when ``import mysqlc`` fails.

    ``mysqlc/server.py`` is pure Python and does not need the C extension; when the package
    import fails (extension not built, or the package is not installed), the file is loaded
    straight from the repository.
    """
    try:
        from mysqlc import server  # noqa: WPS433
        return server
    except Exception as exc:  # ImportError, or an error in mysqlc/__init__
        first_error = exc
    path = os.path.join(REPO, "mysqlc", "server.py")
    if not os.path.exists(path):
        raise RuntimeError("cannot import mysqlc.server (%s) and %s does not exist"
                           % (first_error, path))
    spec = importlib.util.spec_from_file_location("_mysqlc_server_standalone", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class DsnServer:
    """An existing server given with --dsn, with the attributes of mysqlc.server's objects.

    DSN form: ``mysql://user:password@host:port/database`` or
    ``mysql://user:password@/database?unix_socket=/path/to/socket``.
    """

    def __init__(self, dsn):
        u = urllib.parse.urlsplit(dsn)
        if u.scheme not in ("mysql", "mariadb", ""):
            raise SystemExit("--dsn: unsupported scheme %r (use mysql://user:pw@host:port/db)"
                             % u.scheme)
        q = urllib.parse.parse_qs(u.query)
        self.host = u.hostname or "127.0.0.1"
        self.port = u.port or 3306
        self.user = urllib.parse.unquote(u.username or "root")
        self.password = urllib.parse.unquote(u.password or "")
        self.database = (u.path or "/").lstrip("/") or "test"
        self.unix_socket = q.get("unix_socket", [None])[0]
        self.pid = None

    def connect_kwargs(self, root=False, unix=False):
        kw = dict(user=self.user, password=self.password, database=self.database)
        if unix and self.unix_socket:
            kw["unix_socket"] = self.unix_socket
        else:
            kw.update(host=self.host, port=self.port)
        return kw

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False




def local_server_pid(pid_file, host_is_local):
    """Pid of a server on this machine, from its @@pid_file; None when not applicable."""
    if not host_is_local or not pid_file:
        return None
    try:
        with open(pid_file) as f:
            pid = int(f.read().strip())
        with open("/proc/%d/comm" % pid) as f:
            comm = f.read().strip()
    except (OSError, ValueError):
        return None
    return pid if comm in ("mariadbd", "mysqld") else None


def is_local_host(host):
    if host in (None, "", "localhost"):
        return True
    try:
        return socket.gethostbyname(host).startswith("127.")
    except OSError:
        return False


# --------------------------------------------------------------------------------------
# Worker side: driver import and connection (the same for every driver)
# --------------------------------------------------------------------------------------

def import_driver(name):
    modname = DRIVER_MODULE[name]
    try:
        return importlib.import_module(modname)
    except ImportError:
        if name != "mysqlc":
            raise
    # mysqlc built in place (setup.py build_ext --inplace) but not installed.
    sys.path.insert(0, REPO)
    sys.modules.pop("mysqlc", None)
    return importlib.import_module(modname)


def driver_version(name, mod):
    # the installed distribution's version first: a module's __version__ can be another
    # number (PyMySQL's is the mysqlclient version it claims for Django, 2.2.8)
    from importlib import metadata
    try:
        version = metadata.version(DRIVER_DIST[name])
    except Exception:
        version = getattr(mod, "__version__", None)
    if not version and hasattr(mod, "version_info"):
        version = ".".join(str(x) for x in mod.version_info[:3])
    extra = ""
    if name == "mysqlclient" and hasattr(mod, "get_client_info"):
        extra = " (C client library %s)" % mod.get_client_info()
    elif name == "mariadb":
        extra = " (MariaDB Connector/C %s)" % getattr(mod, "mariadbapi_version", "?")
    elif name == "mysqlconnector":
        try:
            import _mysql_connector
            extra = " (C extension, libmysqlclient %s)" % _mysql_connector.MySQL().get_client_info()
        except ImportError as exc:
            extra = " (C extension NOT loaded: %s)" % exc
    return "%s%s" % (version or "unknown", extra)


def transport_kwargs(driver, transport, tls_ca):
    """Each driver's own connect() options for ``transport``.

    TLS with the benchmark's CA: every driver verifies the certificate and the host name
    -- mysqlc ``ssl={"ca": ...}`` (a CA implies VERIFY_IDENTITY), mysqlclient
    ``ssl={"ca": ...}, ssl_mode="VERIFY_IDENTITY"``, PyMySQL and mysql-connector
    ``ssl_ca=..., ssl_verify_identity=True``, mariadb ``ssl_ca=..., ssl_verify_cert=True``.
    Without a CA (an external server) TLS is required but not verified.  Compression:
    ``compress=True`` (all but PyMySQL).  Plain: TLS explicitly off, since PyMySQL >= 1.2
    (and libmariadb >= 3.4) would otherwise use TLS whenever the server offers it.
    """
    kw = {}
    if "tls" in transport:
        if driver == "pymysql" and not tls_ca:
            import ssl
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            kw["ssl"] = ctx
        elif driver in ("pymysql", "mysqlconnector"):
            kw.update(ssl_ca=tls_ca, ssl_verify_identity=True) if tls_ca else \
                kw.update(ssl_verify_cert=False)
        elif driver == "mariadb":
            kw.update(ssl_ca=tls_ca, ssl_verify_cert=True) if tls_ca else kw.update(ssl=True)
        elif tls_ca:
            kw["ssl"] = {"ca": tls_ca}
            if driver == "mysqlclient":
                kw["ssl_mode"] = "VERIFY_IDENTITY"
        else:
            kw["ssl_mode"] = "REQUIRED"
    elif driver in ("pymysql", "mysqlconnector"):
        kw["ssl_disabled"] = True
    elif driver != "mariadb":  # Connector/Python 1.1 uses TLS only when asked
        kw["ssl_mode"] = "DISABLED"
    if "compress" in transport:
        kw["compress"] = True
    return kw


def session_transport(cur):
    """{'Ssl_version', 'Ssl_cipher', 'Compression'} of the current session."""
    cur.execute("SHOW SESSION STATUS WHERE Variable_name IN "
                "('Ssl_version', 'Ssl_cipher', 'Compression')")
    return {str(k): str(v) for k, v in cur.fetchall()}


def check_transport(transport, seen):
    """'' when the session matches ``transport``, else what is wrong."""
    tls = bool(seen.get("Ssl_cipher"))
    comp = seen.get("Compression", "OFF").upper() == "ON"
    want_tls, want_comp = "tls" in transport, "compress" in transport
    wrong = []
    if tls != want_tls:
        wrong.append("TLS is %s" % ("on" if tls else "off"))
    if comp != want_comp:
        wrong.append("compression is %s" % ("on" if comp else "off"))
    return ", ".join(wrong)


def transport_label(seen):
    """Short description of a session's transport: 'TLSv1.3 TLS_AES_256_GCM_SHA384 + zlib'."""
    parts = []
    if seen.get("Ssl_cipher"):
        parts.append("%s %s" % (seen.get("Ssl_version", ""), seen["Ssl_cipher"]))
    if seen.get("Compression", "").upper() == "ON":
        parts.append("zlib")
    return " + ".join(parts) or "plain"


def driver_connect(driver, mod, kwargs):
    """Connect with utf8mb4 and autocommit off, the same way for every driver.

    mysql-connector-python: ``use_pure=False`` (its C extension); the connection must be a
    CMySQLConnection, else the run fails rather than measure the pure-Python fallback.
    mariadb: its connect() has no charset option; the session check below verifies that it
    is utf8mb4 (its default).
    """
    kw = dict(kwargs)
    if driver == "mariadb":
        return mod.connect(autocommit=False, **kw)
    kw["charset"] = "utf8mb4"
    if driver == "mysqlconnector":
        conn = mod.connect(use_pure=False, autocommit=False, **kw)
        if type(conn).__name__ != "CMySQLConnection":
            conn.close()
            try:
                import _mysql_connector  # noqa: F401
                why = "unknown reason"
            except ImportError as exc:
                why = str(exc)
            raise RuntimeError("mysql-connector-python gave %s, not its C extension's "
                               "CMySQLConnection (%s)" % (type(conn).__name__, why))
        return conn
    try:
        conn = mod.connect(autocommit=False, **kw)
    except TypeError:
        conn = mod.connect(**kw)
    try:
        conn.autocommit(False)
    except Exception:
        pass
    return conn


CHUNK = 1000  # rows per partial digest, to locate a difference


def digest_rows(rows, chunks=None):
    """SHA-1 over repr(tuple(row)) of every row; optionally per-CHUNK digests too."""
    h = hashlib.sha1()
    part = hashlib.sha1()
    n = 0
    for row in rows:
        row = tuple(row)
        if bytearray in map(type, row):  # mysql-connector's binary protocol: same bytes
            row = tuple(bytes(v) if type(v) is bytearray else v for v in row)
        line = repr(row).encode() + b"\n"
        h.update(line)
        n += 1
        if chunks is not None:
            part.update(line)
            if n % CHUNK == 0:
                chunks.append(part.hexdigest()[:8])
                part = hashlib.sha1()
    if chunks is not None and n % CHUNK:
        chunks.append(part.hexdigest()[:8])
    return h, n


def short(row, limit=160):
    text = repr(tuple(row)) if row is not None else "None"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def executemany_rows(n):
    base = datetime.datetime(2020, 1, 1)
    rows = []
    for i in range(1, n + 1):
        if i % 10 == 0:
            name = "caf\u00e9 \u20ac%d" % i
        elif i % 7 == 0:
            name = "it's a \\ %d" % i
        else:
            name = "item %d" % i
        created = base + datetime.timedelta(seconds=i * 37, microseconds=(i * 104729) % 1000000)
        rows.append((i, (i * 7919) % 2000003 - 1000000, name, created))
    return rows


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def worker_main(driver, scenario, spec):
    sc = SCENARIO[scenario]
    quick = bool(spec.get("quick"))
    result = {"driver": driver, "scenario": scenario, "runs": [], "warmup": None}
    mod = import_driver(driver)
    result["version"] = driver_version(driver, mod)
    result["module_file"] = getattr(mod, "__file__", None)
    transport = spec.get("transport", "plain")
    conn = driver_connect(driver, mod, dict(spec["connect"], **transport_kwargs(
        driver, transport, spec.get("tls_ca"))))
    result["connection_class"] = type(conn).__module__ + "." + type(conn).__name__
    cur = conn.cursor()
    cur.execute("SELECT @@autocommit, @@character_set_client, @@character_set_results, "
                "@@character_set_connection")
    result["session"] = [str(x) for x in cur.fetchall()[0]]
    seen = session_transport(cur)
    result["transport"] = transport
    result["transport_session"] = seen
    result["transport_label"] = transport_label(seen)
    result["transport_wrong"] = check_transport(transport, seen)
    conn.rollback()
    result["rss_mb_connected"] = rss_mb()

    n = sc.size(quick)
    loops = sc.loops[quick]
    sql = sc.sql(quick)
    pid = spec.get("server_pid")
    bcur = bench_cursor(driver, conn, sc)
    result["cursor_class"] = type(bcur).__module__ + "." + type(bcur).__name__

    def check_rows(rows):
        h, count = digest_rows(rows, result.setdefault("chunk_digests", []))
        return (count, h.hexdigest()[:16], short(rows[0] if count else None),
                short(rows[-1] if count else None))

    prepare = None
    if sc.kind == "point":
        table_n = TABLE_ROWS[sc.table][quick]
        keys = [(i * 7919) % table_n + 1 for i in range(n)]

        def body():
            rows = []
            for k in keys:
                bcur.execute(POINT_SQL, (k,))
                rows.extend(bcur.fetchall())
            return rows

        check = check_rows

    elif sc.kind == "stream":
        def body():
            count = 0
            bcur.execute(sql)
            for _row in bcur:
                count += 1
            return count

        def check(_count):
            # a separate, untimed streaming pass computes the digest
            bcur.execute(sql)
            ends = []

            def rows():
                last = None
                for row in bcur:
                    if not ends:
                        ends.append(row)
                    last = row
                    yield row
                ends.append(last)

            h, count = digest_rows(rows(), result.setdefault("chunk_digests", []))
            return (count, h.hexdigest()[:16], short(ends[0] if count else None),
                    short(ends[-1] if count else None))

    elif sc.kind == "select1":
        def body():
            last = None
            for _ in range(n):
                cur.execute("SELECT 1")
                last = cur.fetchall()
            return last

        def check(last):
            h, _ = digest_rows(last)
            return n, h.hexdigest()[:16], short(last[0]), short(last[-1])

    elif sc.kind == "executemany":
        rows = executemany_rows(n)

        def prepare():
            cur.execute("TRUNCATE TABLE t_ins")
            conn.commit()

        def body():
            bcur.executemany(INSERT_SQL, rows)
            conn.commit()
            return None

        def check(_):
            cur.execute("SELECT COUNT(*), SUM(id), SUM(qty), "
                        "SUM(CRC32(CONCAT_WS('|', id, qty, name, created))) FROM t_ins")
            agg = cur.fetchall()[0]
            cur.execute("SELECT * FROM t_ins ORDER BY id LIMIT 1")
            first = cur.fetchall()[0]
            cur.execute("SELECT * FROM t_ins ORDER BY id DESC LIMIT 1")
            last = cur.fetchall()[0]
            conn.rollback()
            digest = hashlib.sha1(repr(tuple(str(x) for x in agg)).encode()).hexdigest()[:16]
            return int(agg[0]), digest, short(first), short(last)

    else:  # scan: `loops` x execute + fetchall, all rows kept
        def body():
            if loops == 1:
                bcur.execute(sql)
                return bcur.fetchall()
            rows = []
            for _ in range(loops):
                bcur.execute(sql)
                rows.extend(bcur.fetchall())
            return rows

        check = check_rows
        if sc.kind == "scan":
            def prepare():
                # Buffered cursors keep the previous result until the next execute();
                # release it here so that freeing the old rows is not counted in the
                # timed section.
                bcur.execute("SELECT 1")
                bcur.fetchall()

    def one_run():
        if prepare:
            prepare()
        gc.collect()
        s0 = server_cpu_seconds(pid)
        c0 = time.process_time()
        t0 = time.perf_counter()
        out = body()
        t1 = time.perf_counter()
        c1 = time.process_time()
        s1 = server_cpu_seconds(pid)
        run = {"wall_s": t1 - t0, "cpu_s": c1 - c0,
               "server_cpu_s": (s1 - s0) if s0 is not None and s1 is not None else None}
        return run, out

    run, out = one_run()
    count, digest, first, last = check(out)
    result["warmup"] = run
    result.update(count=count, digest=digest, first=first, last=last)
    del out
    for _ in range(spec["repeat"]):
        run, out = one_run()
        if sc.kind == "executemany":
            c2, d2, _, _ = check(out)
        elif sc.kind == "select1":
            c2, d2 = count, digest
        elif sc.kind == "stream":
            c2, d2 = out, digest  # full digest on the warm-up run only
        else:
            c2, d2 = len(out), digest  # full digest on the warm-up run only
        run["count"] = c2
        if c2 != count or d2 != digest:
            result["unstable"] = "a timed run returned %s rows / digest %s" % (c2, d2)
        del out
        result["runs"].append(run)
    result["rss_mb_peak"] = rss_mb()
    if bcur is not cur:
        bcur.close()
    cur.close()
    conn.close()
    return result


def bench_cursor(driver, conn, sc):
    """The cursor a scenario measures, each driver's own way.

    buffered text: ``conn.cursor()`` (mysql-connector's default cursor reads rows as they
    are fetched; fetchall() reads them all).  prepared: ``cursor(prepared=True)`` (mysqlc,
    mysql-connector), ``cursor(binary=True)`` (mariadb; plus ``prepared=True`` for the point loop).  unbuffered:
    ``SSCursor`` (mysqlc, mysqlclient, PyMySQL), ``cursor(buffered=False)`` (mariadb,
    mysql-connector), arraysize SS_ARRAYSIZE; unbuffered prepared: mysqlc
    ``cursor(SSCursor, prepared=True)`` (a server-side cursor), mysql-connector
    ``cursor(prepared=True)``, mariadb ``cursor(buffered=False, binary=True)``.
    """
    if driver == "mariadb":
        kw = {}
        if sc.prepared:
            kw["binary"] = True
            if sc.kind == "point":
                # prepared=True: one statement, re-executed (it ignores any other SQL
                # given to this cursor later, so only for the point loop)
                kw["prepared"] = True
        if sc.unbuffered:
            kw["buffered"] = False
        bcur = conn.cursor(**kw)
    elif driver == "mysqlconnector":
        bcur = conn.cursor(prepared=True) if sc.prepared else conn.cursor()
    elif sc.unbuffered:
        cursors = importlib.import_module(DRIVER_MODULE[driver] + ".cursors")
        if sc.prepared:
            bcur = conn.cursor(cursors.SSCursor, prepared=True)
        else:
            bcur = conn.cursor(cursors.SSCursor)
    elif sc.prepared:
        bcur = conn.cursor(prepared=True)
    else:
        bcur = conn.cursor()
    if sc.unbuffered:
        bcur.arraysize = SS_ARRAYSIZE
    return bcur


def probe_main(driver):
    try:
        mod = import_driver(driver)
        if not hasattr(mod, "connect"):
            raise ImportError("module %s has no connect()" % DRIVER_MODULE[driver])
        return {"available": True, "version": driver_version(driver, mod),
                "module_file": getattr(mod, "__file__", None)}
    except Exception as exc:
        return {"available": False, "error": "%s: %s" % (type(exc).__name__, exc)}


# --------------------------------------------------------------------------------------
# Setup: tables filled server-side with INSERT ... SELECT from a number sequence
# --------------------------------------------------------------------------------------

def table_defs(tables, quick):
    """{table: (create_sql, insert_select_sql or None, rows)} for ``tables``."""
    s = "q.s"  # the sequence number, signed
    int_cols = ("(id INT NOT NULL PRIMARY KEY, c1 INT NOT NULL, "
                "c2 BIGINT NOT NULL, c3 INT NOT NULL, c4 BIGINT NOT NULL, c5 INT NOT NULL, "
                "c6 BIGINT NOT NULL, c7 INT NOT NULL, c8 BIGINT NOT NULL, c9 INT NOT NULL) "
                "ENGINE=InnoDB")
    int_fill = ("SELECT {s}, ({s} * 7919) % 2000003 - 1000000, {s} * 2654435761, "
                "{s} % 1000, -({s} * 1000003) * 1000003, 2147483647 - {s}, "
                "({s} * 40503) % 9973 - 4986, ({s} * 37) % 65536, "
                "9223372036854775807 - {s} * 1000000007, "
                "CASE WHEN {s} % 3 = 0 THEN -{s} ELSE {s} * 3 END FROM {src}")
    defs = {
        "t_int": ("CREATE TABLE t_int " + int_cols, "INSERT INTO t_int " + int_fill),
        "t_int1m": ("CREATE TABLE t_int1m " + int_cols, "INSERT INTO t_int1m " + int_fill),
        "t_mixed": (
            "CREATE TABLE t_mixed (id INT NOT NULL PRIMARY KEY, i INT NOT NULL, "
            "b BIGINT NOT NULL, name VARCHAR(64) NOT NULL, d DOUBLE NOT NULL, "
            "price DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL, day DATE NOT NULL, "
            "notes TEXT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
            "INSERT INTO t_mixed SELECT {s}, ({s} * 7919) % 2000003 - 1000000, "
            "({s} * 2654435761) * (CASE WHEN {s} % 2 = 0 THEN 1000 ELSE -1000 END), "
            "CONCAT(CASE {s} % 4 WHEN 0 THEN 'Zo\u00eb ' WHEN 1 THEN 'item ' "
            "WHEN 2 THEN '\u041f\u0440\u0435\u043c\u0456\u0443\u043c ' ELSE 'x ' END, {s}, ' ', "
            "LEFT(MD5({s}), 12)), "
            "({s} % 1000 - 500) * 1.5e0 + {s} / 7e0, "
            "(({s} * 7919) % 10000000) / 100 - 20000, "
            "DATE_ADD('2000-01-01 00:00:00', INTERVAL ({s} * 7919) % 700000000 SECOND), "
            "DATE_ADD('1990-01-01', INTERVAL {s} % 15000 DAY), "
            "CASE WHEN {s} % 5 = 0 THEN NULL "
            "ELSE REPEAT(CONCAT('note ', {s}, ' '), 1 + {s} % 6) END FROM {src}"),
        "t_dt": (
            "CREATE TABLE t_dt (dt DATETIME(6) NOT NULL, ts TIMESTAMP NULL DEFAULT NULL, "
            "d DATE NOT NULL) ENGINE=InnoDB",
            "INSERT INTO t_dt SELECT "
            "DATE_ADD(DATE_ADD('2001-01-01 00:00:00', INTERVAL ({s} * 7919) % 600000000 SECOND), "
            "INTERVAL ({s} * 104729) % 1000000 MICROSECOND), "
            "FROM_UNIXTIME(946684800 + ({s} * 7919) % 900000000), "
            "DATE_ADD('1970-01-01', INTERVAL ({s} * 13) % 40000 DAY) FROM {src}"),
        "t_text": (
            "CREATE TABLE t_text (id INT NOT NULL PRIMARY KEY, code CHAR(8) NOT NULL, "
            "title VARCHAR(100) NOT NULL, city VARCHAR(64) NULL, body TEXT NOT NULL) "
            "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
            "INSERT INTO t_text SELECT {s}, LEFT(MD5({s}), 8), "
            "CONCAT('Title ', {s}, ' ', REPEAT('x', {s} % 40)), "
            "CASE {s} % 5 WHEN 0 THEN NULL WHEN 1 THEN CONCAT('Z\u00fcrich ', {s} % 100) "
            "WHEN 2 THEN CONCAT('\u041c\u043e\u0441\u043a\u0432\u0430 ', {s} % 100) "
            "WHEN 3 THEN CONCAT('\u6771\u4eac \U0001f5fc ', {s} % 100) "
            "ELSE CONCAT('city ', {s} % 1000) END, "
            "REPEAT(CONCAT(MD5({s}), ' '), 1 + {s} % 8) FROM {src}"),
        "t_blob": (
            "CREATE TABLE t_blob (id INT NOT NULL PRIMARY KEY, data LONGBLOB NOT NULL) "
            "ENGINE=InnoDB",
            "INSERT INTO t_blob SELECT {s}, REPEAT(UNHEX(SHA2(CONCAT('blob', {s}), 512)), "
            "%d) FROM {src}" % (BLOB_BYTES // 64)),
        "t_ins": (
            "CREATE TABLE t_ins (id INT NOT NULL PRIMARY KEY, qty BIGINT NOT NULL, "
            "name VARCHAR(64) NOT NULL, created DATETIME(6) NOT NULL) "
            "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4", None),
    }
    cols, exprs = ["c000 INT NOT NULL PRIMARY KEY"], ["{s}"]
    for k in range(1, WIDE_COLUMNS):
        if k % 2:
            cols.append("c%03d INT NOT NULL" % k)
            exprs.append("({s} * %d) %% 1000003 - 500000" % (k * 7919 + 1))
        else:
            cols.append("c%03d VARCHAR(32) NOT NULL" % k)
            exprs.append("CONCAT('w%d-', ({s} * %d) %% 99991)" % (k, k))
    defs["t_wide"] = (
        "CREATE TABLE t_wide (%s) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4" % ", ".join(cols),
        "INSERT INTO t_wide SELECT %s FROM {src}" % ", ".join(exprs))
    return {name: (create, fill.replace("{s}", s) if fill else None, TABLE_ROWS[name][quick])
            for name, (create, fill) in defs.items() if name in tables}


def setup_main(driver, spec):
    """Create and fill the tables (skipped when already there with the same definition)."""
    mod = import_driver(driver)
    conn = driver_connect(driver, mod, spec["connect"])
    cur = conn.cursor()
    info = {"driver": driver}

    def one(sql):
        cur.execute(sql)
        return cur.fetchall()[0]

    info["server_version"] = one("SELECT VERSION()")[0]
    info["version_comment"] = one("SELECT @@version_comment")[0]
    try:
        info["pid_file"] = one("SELECT @@pid_file")[0]
    except Exception:
        info["pid_file"] = None
    cur.execute("SET SESSION time_zone = '+00:00'")
    cur.execute("SELECT ENGINE FROM information_schema.ENGINES "
                "WHERE ENGINE = 'SEQUENCE' AND SUPPORT IN ('YES', 'DEFAULT')")
    has_sequence = bool(cur.fetchall())
    cur.execute("CREATE TABLE IF NOT EXISTS bench_meta (name VARCHAR(64) PRIMARY KEY, "
                "signature VARCHAR(255) NOT NULL)")
    conn.commit()
    defs = table_defs(spec["tables"], spec["quick"])
    max_n = max([n for _, _, n in defs.values()] + [1])
    if not has_sequence:
        # Portable number source: 1..10^6 from a cross join of digits.
        cur.execute("DROP TABLE IF EXISTS bench_digits")
        cur.execute("CREATE TABLE bench_digits (d INT NOT NULL)")
        cur.execute("INSERT INTO bench_digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)")
        cur.execute("DROP TABLE IF EXISTS bench_seq")
        cur.execute("CREATE TABLE bench_seq (seq INT NOT NULL PRIMARY KEY)")
        cur.execute("INSERT INTO bench_seq SELECT 1 + a.d + 10*b.d + 100*c.d + 1000*e.d "
                    "+ 10000*f.d + 100000*g.d AS seq FROM bench_digits a, bench_digits b, "
                    "bench_digits c, bench_digits e, bench_digits f, bench_digits g "
                    "HAVING seq <= %d" % max_n)
        conn.commit()
    info["tables"] = {}
    for name, (create, fill, n) in defs.items():
        signature = "%s|%s|%s|%d" % (SCHEMA_VERSION, hashlib.sha1(create.encode()).hexdigest(),
                                     hashlib.sha1((fill or "").encode()).hexdigest(), n)
        cur.execute("SELECT signature FROM bench_meta WHERE name = %s", (name,))
        found = cur.fetchall()
        if found and found[0][0] == signature:
            try:
                cur.execute("SELECT COUNT(*) FROM %s" % name)
                if cur.fetchall()[0][0] == n or fill is None:
                    info["tables"][name] = {"rows": n, "reused": True, "seconds": 0.0}
                    continue
            except Exception:
                pass
        t0 = time.perf_counter()
        cur.execute("DROP TABLE IF EXISTS %s" % name)
        cur.execute(create)
        if fill:
            if has_sequence:
                src = "(SELECT CAST(seq AS SIGNED) AS s FROM seq_1_to_%d) q" % n
            else:
                src = "(SELECT CAST(seq AS SIGNED) AS s FROM bench_seq WHERE seq <= %d) q" % n
            cur.execute(fill.replace("{src}", src))
        cur.execute("REPLACE INTO bench_meta VALUES (%s, %s)", (name, signature))
        conn.commit()
        info["tables"][name] = {"rows": n, "reused": False,
                                "seconds": round(time.perf_counter() - t0, 3)}
    cur.execute("ANALYZE TABLE %s" % ", ".join(defs) if defs else "SELECT 1")
    cur.fetchall()
    conn.commit()
    conn.close()
    return info


# --------------------------------------------------------------------------------------
# Parent: orchestration and report
# --------------------------------------------------------------------------------------

def run_child(args, spec, timeout=WORKER_TIMEOUT, script=None):
    """Run ``bench.py <args>`` (or ``script <args>``: another benchmark script that speaks
    the same protocol, e.g. bench_async.py) with ``spec`` as JSON on stdin and the path of
    the result file in ``spec["result_path"]``; return (result dict or None, error)."""
    with tempfile.NamedTemporaryFile(prefix="mysqlc-bench-", suffix=".json",
                                     delete=False) as tmp:
        out_path = tmp.name
    spec = dict(spec, result_path=out_path)
    cmd = [sys.executable, os.path.abspath(script or __file__)] + args
    try:
        proc = subprocess.run(cmd, input=json.dumps(spec), text=True, capture_output=True,
                              timeout=timeout)
        with open(out_path) as f:
            text = f.read()
        if proc.returncode == 0 and text:
            return json.loads(text), None
        err = (proc.stderr or "").strip().splitlines()
        if text:
            data = json.loads(text)
            if data.get("error"):
                return None, data["error"]
        detail = err[-1] if err else ""
        if proc.returncode < 0:
            detail = "killed by signal %d %s" % (-proc.returncode, detail)
        return None, "exit status %d: %s" % (proc.returncode, detail)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    finally:
        try:
            os.unlink(out_path)
        except OSError:
            pass


def child_entry(argv):
    """Entry point of a subprocess (--worker / --probe / --setup / --replay-worker)."""
    spec = json.loads(sys.stdin.read() or "{}")
    path = spec.get("result_path")
    try:
        if argv[0] == "--worker":
            res = worker_main(argv[1], argv[2], spec)
        elif argv[0] == "--replay-worker":
            sys.path.insert(0, HERE)
            import _replay
            mod = import_driver("mysqlc")
            res = _replay.replay_main(spec, lambda: driver_connect(
                "mysqlc", mod, dict(spec["connect"], **transport_kwargs("mysqlc", "plain", None))))
        elif argv[0] == "--probe":
            res = probe_main(argv[1])
        else:
            res = setup_main(argv[1], spec)
        status = 0
    except Exception as exc:
        res = {"error": "%s: %s" % (type(exc).__name__, exc)}
        traceback.print_exc()
        status = 1
    if path:
        with open(path, "w") as f:
            json.dump(res, f)
    else:
        print(json.dumps(res))
    return status


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fmt_int(x):
    return "{:,.0f}".format(x)


def fmt_ms(x):
    return "-" if x is None else "%.1f" % (x * 1000.0)


def summarize(res, size, floor_s=None):
    """Medians and ratios of one driver's runs; ``floor_s``: the floor's CPU time for the
    same rows (--replay), or None."""
    runs = res["runs"]
    walls = [r["wall_s"] for r in runs]
    cpus = [r["cpu_s"] for r in runs]
    servers = [r["server_cpu_s"] for r in runs if r.get("server_cpu_s") is not None]
    med_wall = statistics.median(walls)
    med_cpu = statistics.median(cpus)
    return {
        "wall_best_s": min(walls), "wall_median_s": med_wall,
        "cpu_median_s": med_cpu, "cpu_best_s": min(cpus),
        "server_cpu_median_s": statistics.median(servers) if servers else None,
        "per_second": size / med_wall if med_wall > 0 else float("inf"),
        "cpu_us_per_row": med_cpu / size * 1e6,
        "rss_mb_peak": res.get("rss_mb_peak"),
        "rss_mb_growth": (res["rss_mb_peak"] - res["rss_mb_connected"])
        if res.get("rss_mb_peak") and res.get("rss_mb_connected") else None,
        "wall_over_server_cpu": med_wall / statistics.median(servers)
        if servers and statistics.median(servers) > 0 else None,
        "cpu_over_floor": med_cpu / floor_s if floor_s else None,
    }


def print_table(headers, rows, out):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(("%-*s" if i == 0 else "%*s") % (w, h)
                     for i, (w, h) in enumerate(zip(widths, headers)))
    out.append(line)
    out.append("-" * len(line))
    for r in rows:
        out.append("  ".join(("%-*s" if i == 0 else "%*s") % (w, c)
                             for i, (w, c) in enumerate(zip(widths, r))))


def first_difference(res, by_driver):
    """', first difference in rows A-B' against the other drivers' chunk digests."""
    mine = res.get("chunk_digests")
    if not mine:
        return ""
    firsts = []
    for entry in by_driver.values():
        other = (entry.get("result") or {}).get("chunk_digests")
        if other and other != mine:
            i = next((k for k, (a, b) in enumerate(zip(mine, other)) if a != b),
                     min(len(mine), len(other)))
            firsts.append(i)
    if not firsts:
        return ""
    i = min(firsts)
    return ", first difference in rows %d-%d" % (i * CHUNK + 1, (i + 1) * CHUNK)


def fmt_ratio(x):
    return "-" if x is None else "%.2f×" % x


def majority_digest(values):
    """The digest most drivers agree on (taken as right), or None without a strict
    majority (e.g. two drivers that disagree: then every driver is flagged)."""
    values = list(values)
    if not values:
        return None
    best = max(set(values), key=values.count)
    return best if values.count(best) * 2 > len(values) else None


def report(results, quick, runs, drivers, floors=None):
    """Text report; also fills results[key][driver]['summary'] / ['check'].

    ``runs``: (key, scenario, transport) triples, e.g. ("int10_200k@tls", "int10_200k",
    "tls"); ``floors``: {replay scenario: the floor's median CPU seconds} from --replay.
    """
    out = []
    floors = floors or {}
    for key, scenario, transport in runs:
        sc = SCENARIO[scenario]
        n = sc.size(quick)
        floor_s = floors.get(FLOOR_OF.get(scenario))
        per_query = sc.per_query
        unit = "queries/s" if per_query else "rows/s"
        per = "µs/query" if per_query else "µs/row"
        what = "%s round trips" % fmt_int(n) if per_query else "%s rows" % fmt_int(n)
        if sc.kind == "scan" and sc.loops[quick] > 1:
            what += " in %s queries" % fmt_int(sc.loops[quick])
        if transport != "plain":
            what += "; " + TRANSPORT_TEXT[transport]
        out.append("")
        out.append("== %s: %s (%s) ==" % (key, sc.description, what))
        rows = []
        ok = {}
        notes = []
        mismatch = False
        by_driver = results[key]
        digests = {d: r["result"]["digest"] for d, r in by_driver.items() if r.get("result")}
        majority = majority_digest(digests.values())
        for d in drivers:
            entry = by_driver.get(d)
            if entry is None:
                continue
            if entry.get("skipped"):
                notes.append("%s skipped: %s" % (d, entry["skipped"]))
                continue
            if entry.get("error"):
                rows.append([d] + ["-"] * 9 + ["ERROR"]
                            + (["-"] if transport != "plain" else []))
                notes.append("%s failed: %s" % (d, entry["error"]))
                continue
            res = entry["result"]
            summ = summarize(res, n, floor_s)
            entry["summary"] = summ
            check = "ok"
            if res["count"] != n and sc.kind != "select1":
                check = "WRONG COUNT %d" % res["count"]
            elif len(set(digests.values())) > 1 and res["digest"] != majority:
                check = "MISMATCH"
                mismatch = True
            elif res.get("unstable"):
                check = "UNSTABLE"
            elif res.get("transport_wrong"):
                check = "TRANSPORT"
                notes.append("%s session is not %s: %s (%s)" % (
                    d, transport, res["transport_wrong"], res.get("transport_session")))
            elif res["session"][0] != "0" or set(res["session"][1:]) != {"utf8mb4"}:
                check = "SESSION"
                notes.append("%s session differs: autocommit, charset client/results/"
                             "connection = %s" % (d, ", ".join(res["session"])))
            entry["check"] = check
            ok[d] = check == "ok"
            rows.append([
                d, fmt_int(summ["per_second"]),
                "%s / %s" % (fmt_ms(summ["wall_best_s"]), fmt_ms(summ["wall_median_s"])),
                fmt_ms(summ["cpu_median_s"]), "%.3f" % summ["cpu_us_per_row"],
                fmt_ms(summ["server_cpu_median_s"]), fmt_ratio(summ["wall_over_server_cpu"]),
                fmt_ratio(summ["cpu_over_floor"]),
                "%.0f" % summ["rss_mb_peak"] if summ["rss_mb_peak"] else "-",
                "%+.0f" % summ["rss_mb_growth"] if summ["rss_mb_growth"] is not None else "-",
                check,
            ] + ([res.get("transport_label", "?")] if transport != "plain" else []))
        if rows:
            print_table(["driver", unit, "wall ms best/med", "client CPU ms", "CPU " + per,
                         "server CPU ms", "wall/server", "CPU/floor", "peak RSS MB",
                         "RSS growth", "check"]
                        + (["session (verified)"] if transport != "plain" else []), rows, out)
        out.extend(notes)
        mine = by_driver.get("mysqlc", {}).get("summary")
        if mine:
            parts_cpu, parts_wall = [], []
            for d in drivers:
                other = by_driver.get(d, {}).get("summary")
                if d == "mysqlc" or not other:
                    continue
                vs = mine.setdefault("vs_peers", {})[d] = {
                    "cpu": mine["cpu_median_s"] / other["cpu_median_s"],
                    "wall": mine["wall_median_s"] / other["wall_median_s"]}
                parts_cpu.append("%.2f× %s" % (vs["cpu"], d))
                parts_wall.append("%.2f× %s" % (vs["wall"], d))
            if parts_cpu:
                caveat = ""
                if not ok.get("mysqlc"):
                    caveat = "   (not comparable: mysqlc check = %s)" % by_driver["mysqlc"]["check"]
                out.append("mysqlc client CPU = " + ", ".join(parts_cpu) + caveat)
                out.append("mysqlc wall time  = " + ", ".join(parts_wall) + caveat)
        wrong = [d for d, e in by_driver.items()
                 if e.get("check", "ok") not in ("ok", "SESSION")]
        if mismatch or wrong:
            out.append("!! results differ between drivers:")
            for d, entry in by_driver.items():
                res = entry.get("result")
                if res:
                    out.append("   %-12s count=%s digest=%s%s" % (d, res["count"], res["digest"],
                                                             first_difference(res, by_driver)))
                    out.append("   %-12s first=%s" % ("", res["first"]))
                    out.append("   %-12s last=%s" % ("", res["last"]))
    if any(t != "plain" for _, _, t in runs):
        out.extend(transport_summary(results, runs))
    if any(s in VARIANT_OF for _, s, _ in runs):
        out.extend(protocol_summary(results, runs, drivers))
    return out


def protocol_summary(results, runs, drivers):
    """Closing table: each prepared / unbuffered variant beside its text-protocol,
    buffered base scenario (same query, same transport), per driver; 'same rows' compares
    the variant's row digest with the base's."""
    where = {(s, t): k for k, s, t in runs}
    rows = []
    for key, scenario, transport in runs:
        base = VARIANT_OF.get(scenario)
        if base is None:
            continue
        base_key = where.get((base, transport))
        for d in drivers:
            var = results[key].get(d, {})
            ref = results.get(base_key, {}).get(d, {}) if base_key else {}
            if var.get("skipped"):
                rows.append([key, d, "-", "-", "-", "-", "-", "-", "n/a"])
                continue
            a = var.get("summary") if var.get("check") == "ok" else None
            b = ref.get("summary") if ref.get("check") == "ok" else None
            if not a and not b:
                continue
            same = "-"
            if a and b:
                same = "yes" if var["result"]["digest"] == ref["result"]["digest"] else "NO"

            def ms(x, field):
                return fmt_ms(x[field]) if x else "-"

            rows.append([key, d, ms(b, "cpu_median_s"), ms(a, "cpu_median_s"),
                         "%.2f×" % (a["cpu_median_s"] / b["cpu_median_s"]) if a and b else "-",
                         ms(b, "wall_median_s"), ms(a, "wall_median_s"),
                         "%.0f / %.0f" % (b["rss_mb_peak"] or 0, a["rss_mb_peak"] or 0)
                         if a and b else "-", same])
    out = ["", "== protocols: prepared / unbuffered variants beside the text-protocol "
               "buffered scenario (medians) =="]
    if rows:
        print_table(["variant", "driver", "base CPU ms", "variant CPU ms", "CPU ratio",
                     "base wall ms", "variant wall ms", "peak RSS MB base/var",
                     "same rows"], rows, out)
        out.append("base = the scenario without _prepared/_ss (text protocol, buffered "
                   "cursor); ratio = variant / base; n/a = the driver has no such cursor")
    else:
        out.append("(run the base scenarios too for this table, e.g. --scenarios "
                   "int_200k,int_200k_prepared)")
    return out


def transport_summary(results, runs, peer="mysqlclient"):
    """Closing table: mysqlc and ``peer`` side by side for every variant, and what TLS /
    compression cost each driver relative to its own plain run of the same scenario."""
    def summ(key, d):
        e = results.get(key, {}).get(d, {})
        return e.get("summary") if e.get("check") == "ok" else None

    plain_key = {s: k for k, s, t in runs if t == "plain"}
    rows = []
    for key, scenario, transport in runs:
        a, b = summ(key, "mysqlc"), summ(key, peer)
        if not a and not b:
            continue

        def ms(x, field):
            return fmt_ms(x[field]) if x else "-"

        def ratio(x, y, field):
            return "%.2f×" % (x[field] / y[field]) if x and y and y[field] else "-"

        def vs_plain(d, x):
            p = summ(plain_key[scenario], d) if scenario in plain_key else None
            if not x or not p or transport == "plain":
                return "-"
            return "%+.0f%%" % ((x["cpu_median_s"] / p["cpu_median_s"] - 1) * 100)

        rows.append([key, ms(a, "cpu_median_s"), ms(b, "cpu_median_s"),
                     ratio(a, b, "cpu_median_s"), ms(a, "wall_median_s"),
                     ms(b, "wall_median_s"), ratio(a, b, "wall_median_s"),
                     vs_plain("mysqlc", a), vs_plain(peer, b)])
    out = ["", "== transports: mysqlc and %s side by side (medians) ==" % peer]
    if rows:
        print_table(["scenario@transport", "mysqlc CPU ms", peer + " CPU ms", "CPU ratio",
                     "mysqlc wall ms", peer + " wall ms", "wall ratio",
                     "mysqlc CPU vs plain", peer + " CPU vs plain"], rows, out)
        out.append("ratio = mysqlc / %s (below 1.00× mysqlc is cheaper/faster); "
                   "'vs plain' = the driver's client CPU over its own plain-TCP run" % peer)
    else:
        out.append("(no comparable results)")
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("--worker", "--probe", "--setup", "--replay-worker"):
        return child_entry(argv)

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--drivers", default=",".join(DRIVERS),
                   help="comma-separated subset of %s" % ",".join(DRIVERS))
    p.add_argument("--scenarios", default=None,
                   help="comma-separated subset of %s (default: all but the --large ones "
                        "and the earlier names mixed_100k, wide_2k; int_200k* are aliases of "
                        "int10_200k*); a suffix @TRANSPORT (e.g. int10_200k@tls) runs that "
                        "scenario over that transport only" % ",".join(SCENARIOS))
    p.add_argument("--large", action="store_true",
                   help="add the large scenarios (%s) to the default set"
                        % ", ".join(LARGE_SCENARIOS))
    p.add_argument("--replay", action="store_true",
                   help="also capture the server's bytes for the scans %s (text and binary "
                        "protocol) and time mysqlc's decoder on them with no server, beside "
                        "the floor (benchmarks/_floor.c)" % ", ".join(REPLAY_SCENARIOS))
    p.add_argument("--save-wire", metavar="DIR",
                   help="with --replay: save the captured responses as DIR/NAME.text.wire "
                        "and NAME.binary.wire (for benchmarks/_replay.py loop, perf)")
    p.add_argument("--chart", metavar="PNG", help="write a chart of rows/s and client CPU "
                                                  "per row (matplotlib)")
    p.add_argument("--results", metavar="MD", help="rewrite the generated part of this "
                                                   "markdown file (benchmarks/RESULTS.md)")
    p.add_argument("--transport", default="plain",
                   help="comma-separated transports to run every scenario over: %s "
                        "(default plain). tls: the private server gets a test CA and "
                        "certificate (benchmarks/_certs.py, needs openssl) and every driver "
                        "verifies it; compress: zlib compressed protocol"
                        % ", ".join(TRANSPORTS))
    p.add_argument("--repeat", type=int, default=None,
                   help="timed runs per (driver, scenario) after one warm-up run "
                        "(default 5; 3 with --quick)")
    p.add_argument("--quick", action="store_true",
                   help="10x smaller sizes for a smoke run (< 1 minute)")
    p.add_argument("--dsn", help="use an existing server: mysql://user:pw@host:port/db "
                                 "(or ...@/db?unix_socket=PATH); default: a private server "
                                 "from mysqlc.server.get_server() (which honours MYSQLC_TEST_DSN)")
    p.add_argument("--unix", action="store_true",
                   help="connect over the unix socket instead of TCP (all drivers)")
    p.add_argument("--json", metavar="PATH", help="write all measurements to this JSON file")
    args = p.parse_args(argv)
    args.argv = list(argv)

    drivers = [d.strip() for d in args.drivers.split(",") if d.strip()]
    for d in drivers:
        if d not in DRIVERS:
            p.error("unknown driver %r (choose from %s)" % (d, ", ".join(DRIVERS)))
    transports = [t.strip() for t in args.transport.split(",") if t.strip()]
    for t in transports:
        if t not in TRANSPORTS:
            p.error("unknown transport %r (choose from %s)" % (t, ", ".join(TRANSPORTS)))
    runs = []          # (key, scenario, transport)
    chosen = args.scenarios
    if chosen is None:
        chosen = ",".join(DEFAULT_SCENARIOS + (LARGE_SCENARIOS if args.large else ()))
    elif args.large:
        chosen += "," + ",".join(LARGE_SCENARIOS)
    for item in (x.strip() for x in chosen.split(",")):
        if not item:
            continue
        name, _, suffix = item.partition("@")
        name = ALIASES.get(name, name)
        if name not in SCENARIOS:
            p.error("unknown scenario %r (choose from %s)" % (name, ", ".join(SCENARIOS)))
        if suffix and suffix not in TRANSPORTS:
            p.error("unknown transport %r in %r (choose from %s)"
                    % (suffix, item, ", ".join(TRANSPORTS)))
        for t in ([suffix] if suffix else transports):
            key = name if t == "plain" else "%s@%s" % (name, t)
            if key not in [r[0] for r in runs]:
                runs.append((key, name, t))
    scenarios = list(dict.fromkeys(r[1] for r in runs))
    repeat = args.repeat if args.repeat is not None else (3 if args.quick else 5)
    if repeat < 1:
        p.error("--repeat must be >= 1")
    quick = bool(args.quick)
    replays = []
    if args.replay:  # the replay scans among the chosen scenarios, or all of them
        replays = [s for s in REPLAY_SCENARIOS if s in {FLOOR_OF.get(x) for x in scenarios}] \
            or list(REPLAY_SCENARIOS)

    t_start = time.perf_counter()
    print("mysqlc benchmark: %s" % ", ".join(r[0] for r in runs), flush=True)

    probes = {}
    for d in drivers:
        res, err = run_child(["--probe", d], {}, timeout=120)
        probes[d] = res if res else {"available": False, "error": err}
    available = [d for d in drivers if probes[d].get("available")]
    if not available:
        print("no driver available:", file=sys.stderr)
        for d in drivers:
            print("  %s: %s" % (d, probes[d].get("error")), file=sys.stderr)
        return 2

    try:
        server_mod = load_server_module()
    except Exception as exc:
        if not args.dsn:
            print("cannot load mysqlc.server: %s" % exc, file=sys.stderr)
            return 2
        server_mod = None
    need_tls = any("tls" in r[2] for r in runs)
    certs_dir = tls_ca = None
    if args.dsn:
        server_ctx = server_mod.ExternalServer(args.dsn) if server_mod else DsnServer(args.dsn)
        server_kind = "external (--dsn)"
    elif need_tls and not os.environ.get("MYSQLC_TEST_DSN"):
        # a private server with the benchmark's own CA and certificate
        certs_dir = tempfile.mkdtemp(prefix="mysqlc-bench-certs-")
        try:
            spec = importlib.util.spec_from_file_location("_mysqlc_bench_certs",
                                                          os.path.join(HERE, "_certs.py"))
            certs_mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(certs_mod)
            certs = certs_mod.make_server_certs(certs_dir)
        except Exception as exc:
            shutil.rmtree(certs_dir, ignore_errors=True)
            print("--transport tls: %s" % exc, file=sys.stderr)
            return 2
        tls_ca = certs.ca
        server_ctx = server_mod.get_server(extra_args=list(certs.server_args) + SERVER_ARGS)
        server_kind = None
    else:
        server_ctx = server_mod.get_server(extra_args=SERVER_ARGS)
        server_kind = None

    try:
        srv = server_ctx.__enter__()
    except Exception as exc:
        print("no server: %s" % exc, file=sys.stderr)
        if certs_dir:
            shutil.rmtree(certs_dir, ignore_errors=True)
        return 2
    try:
        return run_all(args, srv, server_kind, probes, drivers, available, runs, scenarios,
                       replays, quick, repeat, t_start, tls_ca)
    finally:
        server_ctx.__exit__(None, None, None)
        if certs_dir:
            shutil.rmtree(certs_dir, ignore_errors=True)


def run_all(args, srv, server_kind, probes, drivers, available, runs, scenarios, replays,
            quick, repeat, t_start, tls_ca=None):
    """Set up the tables on ``srv``, run every worker, print and save the report.

    ``runs``: (key, scenario, transport) triples; ``tls_ca``: the CA that signed the
    private server's certificate (None: TLS, if asked for, is not verified).
    """
    if server_kind is None:
        server_kind = ("private (pid %s)" % srv.pid) if srv.pid else \
            "external (MYSQLC_TEST_DSN)"
    if args.unix and not srv.unix_socket:
        print("--unix: the server has no unix socket", file=sys.stderr)
        return 2
    connect = srv.connect_kwargs(unix=args.unix)
    transport = ("unix socket %s" % connect["unix_socket"]) if args.unix else \
        "TCP %s:%s" % (connect["host"], connect["port"])

    # Set up with the most forgiving available driver (pure Python first).
    setup_info, err = None, None
    for d in ("pymysql", "mysqlclient", "mysqlc"):
        if d in available:
            setup_info, err = run_child(["--setup", d], {
                "connect": connect, "quick": quick, "tables": sorted(set(
                    SCENARIO[s].table for s in scenarios + replays if SCENARIO[s].table))})
            if setup_info:
                break
            print("setup with %s failed: %s" % (d, err), file=sys.stderr)
    if not setup_info:
        print("could not create the benchmark tables", file=sys.stderr)
        return 2
    server_pid = srv.pid
    if server_pid is None:
        server_pid = local_server_pid(setup_info.get("pid_file"),
                                      args.unix or is_local_host(connect.get("host")))

    header = [
        "machine : %s, %d cores, %s %s" % (cpu_model(), os.cpu_count() or 0,
                                            platform.system(), platform.release()),
        "python  : %s %s (%s)" % (platform.python_implementation(),
                                  platform.python_version(), sys.executable),
    ]
    for d in drivers:
        pr = probes[d]
        if pr.get("available"):
            header.append("driver  : %-14s %s" % (d, pr["version"]))
        else:
            header.append("driver  : %-14s skipped (%s)" % (d, pr.get("error")))
    header.append("server  : %s %s, %s, %s; server CPU %s" % (
        setup_info["server_version"], setup_info.get("version_comment") or "",
        server_kind, transport,
        ("from /proc/%d/stat" % server_pid) if server_pid else "not measured (not local)"))
    built = ["%s %s rows%s" % (t, fmt_int(i["rows"]),
                               " (reused)" if i["reused"] else " in %.1f s" % i["seconds"])
             for t, i in setup_info["tables"].items()]
    header.append("tables  : " + (", ".join(built) or "none"))
    variants = sorted(set(r[2] for r in runs), key=TRANSPORTS.index)
    if variants != ["plain"]:
        tls_how = ("certificate and host name verified by every driver against the "
                   "benchmark's CA" if tls_ca else "required, not verified")
        header.append("variants: " + ", ".join(
            "%s (%s%s)" % (t, TRANSPORT_TEXT[t], "; " + tls_how if "tls" in t else "")
            for t in variants))
    header.append("method  : 1 warm-up + %d timed run(s) per driver and scenario, each in its "
                  "own process; default cursor, fetchall(), utf8mb4, autocommit off"
                  % repeat)
    load_start = os.getloadavg()
    header.append("load    : %.2f %.2f %.2f (1/5/15 min) at the start" % load_start)
    print("\n".join(header), flush=True)

    results = {}
    for key, scenario, transport in runs:
        results[key] = {}
        for d in drivers:
            if not probes[d].get("available"):
                results[key][d] = {"skipped": probes[d].get("error") or "not available"}
                continue
            if (d, transport) in TRANSPORT_UNSUPPORTED:
                results[key][d] = {"skipped": TRANSPORT_UNSUPPORTED[(d, transport)]}
                continue
            if (d, scenario) in SCENARIO_UNSUPPORTED:
                results[key][d] = {"skipped": SCENARIO_UNSUPPORTED[(d, scenario)]}
                continue
            t0 = time.perf_counter()
            spec = {"connect": connect, "quick": quick, "repeat": repeat,
                    "server_pid": server_pid, "transport": transport, "tls_ca": tls_ca}
            res, err = run_child(["--worker", d, scenario], spec)
            took = time.perf_counter() - t0
            if res:
                results[key][d] = {"result": res}
                print("  %-24s %-14s %6.1f s" % (key, d, took), flush=True)
            else:
                results[key][d] = {"error": err}
                print("  %-24s %-14s FAILED: %s" % (key, d, err), flush=True)

    replay = None
    replay_repeat = max(repeat, 5)
    if replays:
        t0 = time.perf_counter()
        if args.save_wire:
            os.makedirs(args.save_wire, exist_ok=True)
        replay, err = run_child(["--replay-worker"], {
            "connect": connect, "repeat": replay_repeat, "save_dir": args.save_wire,
            "queries": [(s, SCENARIO[s].sql(quick)) for s in replays]})
        if replay is None:
            replay = {"error": err}
        print("  %-24s %-14s %6.1f s%s" % ("replay + floor", "mysqlc", time.perf_counter() - t0,
                                          " FAILED: %s" % err if err else ""), flush=True)
    floors = {s: r["floor"]["cpu_median_s"]
              for s, r in ((replay or {}).get("scenarios") or {}).items()}
    lines = report(results, quick, runs, drivers, floors)
    doc = {
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": " ".join(["python", "benchmarks/bench.py"] + (args.argv or [])),
        "header": header,
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(),
                    "system": platform.platform(), "loadavg_start": load_start},
        "python": platform.python_version(),
        "drivers": probes, "server": dict(setup_info, kind=server_kind,
                                           transport=transport, pid=server_pid),
        "repeat": repeat, "quick": quick,
        "sizes": {s: SCENARIO[s].size(quick) for s in scenarios},
        "descriptions": {s: SCENARIO[s].description for s in scenarios},
        "runs": [{"key": k, "scenario": s, "transport": t} for k, s, t in runs],
        "tls_verified": bool(tls_ca),
        "clk_tck": CLK_TCK, "results": results, "replay": replay,
        "replay_repeat": replay_repeat,
    }
    doc["targets"] = _report.evaluate_targets(doc)
    lines += _report.replay_lines(doc) + _report.target_lines(doc)
    print("\n".join(lines))
    total = time.perf_counter() - t_start
    print("\ntotal %.1f s" % total)

    problems = []
    for key, _, _ in runs:
        for d, entry in results[key].items():
            if entry.get("error"):
                problems.append("%s/%s: error" % (key, d))
            elif entry.get("check") not in (None, "ok"):
                problems.append("%s/%s: %s" % (key, d, entry["check"]))

    if replay and replay.get("error"):
        problems.append("replay: %s" % replay["error"])
    doc.update(problems=problems, total_seconds=total, report=lines,
               machine=dict(doc["machine"], loadavg_end=os.getloadavg()))
    if args.chart:
        _report.chart(doc, args.chart)
        print("wrote %s" % args.chart)
    if args.results:
        _report.write_results(doc, args.results, chart=args.chart)
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


if __name__ == "__main__":
    sys.exit(main())
