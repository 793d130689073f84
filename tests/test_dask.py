"""mysqlc.dask on a real ``distributed.LocalCluster`` (2 worker processes) against the
private server (docs/cluster.md): values equal to one ``mysqlc.read_sql``, divisions,
the partitioning rules (integer, datetime and collated string keys, NULL keys, an empty
table, empty partitions, a skewed key), a connection KILLed mid-partition, Dask
retries, staged writes (a retried and a failed partition), ``as_of``, and the password
kept out of reprs, tokens and task keys."""

import collections
import fcntl
import pickle
import socket
import sys
import threading
import time

import pytest

import cloudpickle
import dask
import dask.dataframe as dd
import pandas as pd
import pyarrow as pa
from distributed import Client, LocalCluster

import mysqlc
from mysqlc import dask as mdask
from mysqlc._cluster import Source
from mysqlc.server import PrivateServer

# the hooks below run on the workers, which cannot import this module by name
cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROWS = 3000


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


@pytest.fixture(scope="module")
def src(server):
    return server.connect_kwargs()


@pytest.fixture(scope="module")
def root_kw(server):
    return server.connect_kwargs(root=True)


def _exec(kw, *stmts):
    c = mysqlc.connect(**kw, autocommit=True)
    try:
        cur = c.cursor()
        for s in stmts:
            cur.execute(s)
    finally:
        c.close()


@pytest.fixture(scope="module")
def mixed(src):
    """ROWS rows of mixed types; `n` is NULL in every 7th row."""
    _exec(src, "DROP TABLE IF EXISTS dk_mixed",
          "CREATE TABLE dk_mixed (id INT NOT NULL PRIMARY KEY, b BIGINT, "
          "s VARCHAR(20) NOT NULL, x DOUBLE, m DECIMAL(12,2), "
          "d DATETIME(6) NOT NULL, dt DATE, t TEXT, n INT NULL)",
          "INSERT INTO dk_mixed SELECT seq, seq * 1000000007, "
          "CONCAT(ELT(1 + seq % 4, 'a', 'A', 'b ', 'B'), seq % 50), seq / 7, seq * 1.25, "
          "TIMESTAMP'2024-01-01 00:00:00' + INTERVAL seq * 37 SECOND + "
          "INTERVAL seq MICROSECOND, DATE'2020-01-01' + INTERVAL seq % 400 DAY, "
          "REPEAT(CHAR(65 + seq % 26), seq % 30), IF(seq % 7 = 0, NULL, seq % 100) "
          "FROM seq_1_to_" + str(ROWS))
    yield "dk_mixed"
    _exec(src, "DROP TABLE IF EXISTS dk_mixed")


def _expected(src, sql):
    conn = mysqlc.connect(**src)
    try:
        return mysqlc.read_sql(conn, sql, "arrow").to_pandas(types_mapper=pd.ArrowDtype)
    finally:
        conn.close()


def _partitions(ddf):
    return [p for p in dask.compute(*ddf.to_delayed())]


def test_read_table_equal_to_read_sql(client, src, mixed):
    ddf = mdask.read_sql_table(mixed, src, index_col="id", npartitions=4)
    assert ddf.npartitions == 4
    assert ddf.divisions == (1, 751, 1501, 2251, ROWS)
    assert all(isinstance(t, pd.ArrowDtype) for t in ddf.dtypes)
    got = ddf.compute()
    want = _expected(src, "SELECT * FROM dk_mixed ORDER BY id").set_index("id")
    pd.testing.assert_frame_equal(got, want)
    # each partition lies in its division, sorted
    parts = _partitions(ddf)
    for i, part in enumerate(parts):
        lo, hi = ddf.divisions[i], ddf.divisions[i + 1]
        assert part.index.is_monotonic_increasing
        assert part.index.min() >= lo
        assert part.index.max() < hi or (i == 3 and part.index.max() == hi)
    assert sum(len(p) for p in parts) == ROWS


def test_meta_from_column_definitions(client, src, mixed):
    ddf = mdask.read_sql_table(mixed, src, index_col="id", npartitions=2,
                               columns=["s", "m", "d"], decimal="str")
    assert list(ddf.columns) == ["s", "m", "d"]
    assert ddf.dtypes["m"] == pd.ArrowDtype(pa.string())
    assert ddf.dtypes["d"] == pd.ArrowDtype(pa.timestamp("us"))
    got = ddf.compute()
    want = _expected(src, "SELECT s, CAST(m AS CHAR) AS m, d, id FROM dk_mixed ORDER BY id")
    pd.testing.assert_frame_equal(got, want.set_index("id"))


def test_numpy_dtypes(client, src, mixed):
    ddf = mdask.read_sql_table(mixed, src, partition_on="id", npartitions=3,
                               dtype_backend="numpy", protocol="text", batch_size=100)
    assert ddf.divisions == (None,) * 4
    assert ddf.dtypes["n"] == "float64"        # nullable INT: float64 in every partition
    assert ddf.dtypes["b"] == "float64"        # so is BIGINT (NULL allowed)
    assert ddf.dtypes["x"] == "float64" and ddf.dtypes["id"] == "int32"   # INT NOT NULL
    got = ddf.compute().sort_values("id").reset_index(drop=True)
    conn = mysqlc.connect(**src)
    try:
        want = mysqlc.read_sql(conn, "SELECT * FROM dk_mixed ORDER BY id", "pandas")
    finally:
        conn.close()
    want["n"] = want["n"].astype("float64")
    for col in want.columns:
        assert list(got[col].astype(object)) == list(want[col].astype(object)) or \
            got[col].equals(want[col]), col
    assert got["n"].isna().sum() == ROWS // 7


def test_collated_string_key(client, src):
    """'a', 'A', 'a ' are one value for utf8mb4_general_ci with PAD SPACE: the cut
    points are the server's, each range is the server's comparison, so every row is
    read once; no divisions."""
    vals = ["a", "A", "a ", "b", "B", "b  ", "ä", "c", "C", "z", "Z ", ""]
    _exec(src, "DROP TABLE IF EXISTS dk_str",
          "CREATE TABLE dk_str (id INT PRIMARY KEY, s VARCHAR(10) "
          "CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NULL)",
          "INSERT INTO dk_str VALUES " + ", ".join(
              "(%d, %s)" % (i, "NULL" if i % 11 == 0 else "'%s'" % vals[i % len(vals)])
              for i in range(600)))
    try:
        for n in (2, 3, 5, 9):
            ddf = mdask.read_sql_table("dk_str", src, index_col="s", npartitions=n)
            assert ddf.known_divisions is False
            parts = _partitions(ddf)
            ids = sorted(i for p in parts for i in p["id"])
            assert ids == list(range(600)), n
            # NULL keys all in the first partition
            assert parts[0].index.isna().sum() == len(range(0, 600, 11))
            assert all(p.index.isna().sum() == 0 for p in parts[1:])
    finally:
        _exec(src, "DROP TABLE dk_str")


def _string_table(src, name, coltype, values):
    _exec(src, "DROP TABLE IF EXISTS " + name,
          "CREATE TABLE %s (id INT PRIMARY KEY, s %s NOT NULL, KEY (s))" % (name, coltype))
    c = mysqlc.connect(**src)
    try:
        c.cursor().executemany("INSERT INTO %s VALUES (%%s, %%s)" % name,
                               list(enumerate(values)))
        c.commit()
    finally:
        c.close()


STRINGS = ["a", "A", "b", "B", "ä", "Z", "z", "0", "9", "aa", "ab", "Ab", "é", "€", "x y",
           "日本", "_", "~", "a\u00a0"]


@pytest.mark.parametrize("coltype", ["VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
                                     "VARCHAR(20) CHARACTER SET utf8mb4 "
                                     "COLLATE utf8mb4_nopad_bin",
                                     "VARBINARY(20)"])
def test_binary_string_key_exact_divisions(client, src, coltype):
    """A binary collation orders as Python does: divisions known, every partition
    inside its division, ``loc`` slices equal to pandas' on the whole frame."""
    binary = coltype.startswith("VARBINARY")
    values = [STRINGS[(i * 7) % len(STRINGS)] + ("%d" % (i % 3) if i % 5 else "")
              for i in range(400)]
    _string_table(src, "dk_bin", coltype, values)
    try:
        ddf = mdask.read_sql_table("dk_bin", src, index_col="s", npartitions=4)
        assert ddf.known_divisions, ddf.divisions
        divs = list(ddf.divisions)
        conv = (lambda v: v.encode()) if binary else (lambda v: v)
        assert divs[0] == conv(min(values, key=conv)) and divs[-1] == conv(max(values, key=conv))
        assert divs == sorted(divs) and len(set(divs)) == len(divs)
        parts = _partitions(ddf)
        for i, part in enumerate(parts):
            keys = list(part.index)
            assert keys == sorted(keys)
            assert all(divs[i] <= v for v in keys)
            assert all(v < divs[i + 1] for v in keys) or i == len(parts) - 1
        whole = pd.concat(parts)
        assert sorted(whole["id"]) == list(range(400))
        want = _expected(src, "SELECT * FROM dk_bin").set_index("s").sort_index(kind="stable")
        for lo, hi in ((conv("B"), conv("b")), (conv("a"), conv("é")), (conv("0"), conv("Z")),
                       (None, conv("ab")), (conv("x"), None)):
            got = ddf.loc[lo:hi].compute()
            exp = want.loc[lo:hi]
            assert sorted(got["id"]) == sorted(exp["id"]), (lo, hi)
            assert len(got) > 0
    finally:
        _exec(src, "DROP TABLE IF EXISTS dk_bin")


@pytest.mark.parametrize("coltype,values", [
    ("VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", STRINGS * 20),
    ("VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", STRINGS * 20),
    # PAD SPACE _bin with a trailing space, or a control character: 'a' = 'a ',
    # 'a\t' < 'a' for the server, not for Python
    ("VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", STRINGS * 20 + ["a "]),
    ("VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", STRINGS * 20 + ["a\tb"]),
])
def test_non_binary_collation_no_divisions(client, src, coltype, values):
    _string_table(src, "dk_ci", coltype, values)
    try:
        ddf = mdask.read_sql_table("dk_ci", src, index_col="s", npartitions=4)
        assert ddf.known_divisions is False
        parts = _partitions(ddf)
        assert len(parts) > 1
        assert sorted(i for p in parts for i in p["id"]) == list(range(len(values)))
    finally:
        _exec(src, "DROP TABLE IF EXISTS dk_ci")


def test_datetime_key_divisions(client, src, mixed):
    ddf = mdask.read_sql_table(mixed, src, index_col="d", npartitions=4, columns=["id"])
    assert ddf.known_divisions
    parts = _partitions(ddf)
    assert sorted(i for p in parts for i in p["id"]) == list(range(1, ROWS + 1))
    divs = [pd.Timestamp(v) for v in ddf.divisions]
    assert divs == sorted(divs)
    for i, part in enumerate(parts):
        assert len(part) > 0
        assert part.index.min() >= divs[i]
        assert part.index.max() < divs[i + 1] or i == len(parts) - 1
    assert parts[-1].index.max() == divs[-1]


def test_null_keys_in_first_partition(client, src, mixed):
    ddf = mdask.read_sql_table(mixed, src, partition_on="n", npartitions=4,
                               columns=["id", "n"])
    parts = _partitions(ddf)
    assert parts[0]["n"].isna().sum() == ROWS // 7
    assert all(p["n"].isna().sum() == 0 for p in parts[1:])
    assert sorted(i for p in parts for i in p["id"]) == list(range(1, ROWS + 1))


def test_empty_table_and_skewed_key(client, src):
    _exec(src, "DROP TABLE IF EXISTS dk_empty",
          "CREATE TABLE dk_empty (id INT PRIMARY KEY, v VARCHAR(5))",
          "DROP TABLE IF EXISTS dk_skew",
          "CREATE TABLE dk_skew (id BIGINT PRIMARY KEY, v INT)",
          "INSERT INTO dk_skew SELECT seq, seq FROM seq_1_to_100",
          "INSERT INTO dk_skew VALUES (1000000, 0)")
    try:
        ddf = mdask.read_sql_table("dk_empty", src, index_col="id", npartitions=4)
        assert ddf.npartitions == 1
        df = ddf.compute()
        assert len(df) == 0 and list(df.columns) == ["v"]
        assert ddf.dtypes["v"] == pd.ArrowDtype(pa.string())

        ddf = mdask.read_sql_table("dk_skew", src, index_col="id", npartitions=4)
        parts = _partitions(ddf)
        assert [len(p) for p in parts] == [100, 0, 0, 1]      # equal value ranges
        assert ddf.divisions == (1, 250001, 500001, 750001, 1000000)
        assert list(ddf.compute().index) == list(range(1, 101)) + [1000000]
    finally:
        _exec(src, "DROP TABLE dk_empty", "DROP TABLE dk_skew")


def test_bytes_per_chunk_from_statistics(client, src, mixed):
    _exec(src, "ANALYZE TABLE dk_mixed")
    c = mysqlc.connect(**src)
    cur = c.cursor()
    cur.execute("SELECT DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                "DATABASE() AND TABLE_NAME = 'dk_mixed'")
    data_length = cur.fetchone()[0]
    c.close()
    chunk = data_length // 3 + 1
    ddf = mdask.read_sql_table(mixed, src, index_col="id", bytes_per_chunk=chunk)
    assert ddf.npartitions == 3
    assert len(ddf.compute()) == ROWS


def test_read_sql_query(client, src, mixed):
    sql = "SELECT id, s, x * 2 AS x2 FROM dk_mixed WHERE s LIKE 'a%%' AND id > %s"
    ddf = mdask.read_sql_query(sql, src, index_col="id", npartitions=3, params=[10])
    got = ddf.compute()
    want = _expected(src, "SELECT id, s, x * 2 AS x2 FROM dk_mixed WHERE s LIKE 'a%%' "
                          "AND id > 10 ORDER BY id")
    pd.testing.assert_frame_equal(got, want.set_index("id"))
    # a literal % without params
    ddf = mdask.read_sql_query("SELECT id FROM dk_mixed WHERE s LIKE 'b%'", src,
                               partition_on="id", npartitions=2)
    want = _expected(src, "SELECT id FROM dk_mixed WHERE s LIKE 'b%%'")
    assert sorted(ddf.compute()["id"]) == sorted(want["id"]) and len(want) == ROWS // 2


def test_password_not_in_keys_or_reprs(client, src, mixed):
    pw = src["password"]
    assert pw and len(pw) >= 6
    s = Source(src)
    assert pw not in repr(s) and "password=***" in repr(s)
    assert pw not in repr(dask.base.normalize_token(s))
    ddf = mdask.read_sql_table(mixed, src, index_col="id", npartitions=2)
    graph = ddf.__dask_graph__()
    for key in graph:
        assert pw not in repr(key)
    for task in dict(graph).values():
        assert pw not in repr(task)
    assert pw not in ddf._name
    assert dask.base.tokenize(Source(src)) == dask.base.tokenize(
        Source(dict(src, password="other")))
    # it does travel in the pickle (to the workers)
    back = pickle.loads(pickle.dumps(s))
    assert back == s
    back.connect().close()
    dsn = "mysql://%s:%s@%s:%d/%s" % (src["user"], pw, src["host"], src["port"],
                                      src["database"])
    s2 = Source(dsn)
    assert pw not in repr(s2)
    assert len(mdask.read_sql_table(mixed, dsn, partition_on="id",
                                    npartitions=2).compute()) == ROWS


def test_credential_callback(client, src, mixed):
    kw = dict(src, password=_Password(src["password"]))
    assert src["password"] not in repr(Source(kw))
    assert len(mdask.read_sql_table(mixed, kw, partition_on="id",
                                    npartitions=2).compute()) == ROWS


class _Password:
    """A credential callback (here it holds the secret; a real one reads it on the
    worker)."""

    def __init__(self, pw):
        self._pw = pw

    def __call__(self):
        return self._pw

    def __repr__(self):
        return "_Password()"


# ---------------------------------------------------------------- failures

class _Killer:
    """The fault hook: after the first batch of an attempt, KILL the reading
    connection (from another connection, as an operator would) while `kills` lines of
    `log` are fewer than `limit`; every call appends "<attempt> <thread id>"."""

    def __init__(self, root_kw, log, limit):
        self.root_kw = root_kw
        self.log = log
        self.limit = limit

    def __call__(self, attempt, thread_id):
        with open(self.log, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)     # the two workers' hooks, one at a time
            f.seek(0)
            kills = sum(1 for line in f if line.startswith("kill"))
            f.write("%d %d\n" % (attempt, thread_id))
            if kills >= self.limit:
                return
            f.write("kill %d\n" % thread_id)
        c = mysqlc.connect(**self.root_kw)
        try:
            cur = c.cursor()
            cur.execute("KILL %d" % thread_id)
            end = time.monotonic() + 5
            while time.monotonic() < end:
                cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                            "WHERE ID = %s", (thread_id,))
                if cur.fetchone()[0] == 0:
                    break
                time.sleep(0.01)
        finally:
            c.close()


@pytest.fixture(scope="module")
def wide(src):
    """Rows of 8 KB: a partition (20 MB) is still on its way when the first batch
    arrives, so a KILL then cuts the stream."""
    _exec(src, "DROP TABLE IF EXISTS dk_wide",
          "CREATE TABLE dk_wide (id INT PRIMARY KEY, pad MEDIUMTEXT)",
          "INSERT INTO dk_wide SELECT seq, REPEAT(CHAR(65 + seq % 26), 8000) "
          "FROM seq_1_to_5000")
    yield "dk_wide"
    _exec(src, "DROP TABLE IF EXISTS dk_wide")


def _log(path):
    with open(path) as f:
        return f.read().split("\n")[:-1]


def test_kill_mid_partition_reread_once(client, src, root_kw, wide, tmp_path):
    log = str(tmp_path / "kills")
    ddf = mdask.read_sql_table(wide, src, partition_on="id", npartitions=2,
                               batch_size=16, _fault=_Killer(root_kw, log, limit=1))
    df = ddf.compute(retries=0)
    assert sorted(df["id"]) == list(range(1, 5001))
    assert df["pad"].str.len().eq(8000).all()
    lines = _log(log)
    # one kill, then a re-read (attempt 1) by the same task; the other partition: attempt 0
    assert sum(1 for x in lines if x.startswith("kill")) == 1
    assert sum(1 for x in lines if x.startswith("1 ")) == 1
    assert sum(1 for x in lines if x.startswith("0 ")) == 2


def test_kill_twice_raises_driver_error(client, src, root_kw, wide, tmp_path):
    log = str(tmp_path / "kills")
    ddf = mdask.read_sql_table(wide, src, partition_on="id", npartitions=1,
                               batch_size=16, _fault=_Killer(root_kw, log, limit=2))
    with pytest.raises(mysqlc.OperationalError) as info:
        ddf.compute(retries=0)
    assert info.value.args[0] in (2013, 2006, 1927)
    assert [x.split()[0] for x in _log(log)] == ["0", "kill", "1", "kill"]


def test_dask_retries_no_duplicates(client, src, root_kw, wide, tmp_path):
    log = str(tmp_path / "kills")
    ddf = mdask.read_sql_table(wide, src, partition_on="id", npartitions=2,
                               batch_size=16, _fault=_Killer(root_kw, log, limit=2))
    df = ddf.compute(retries=2)
    assert sorted(df["id"]) == list(range(1, 5001))
    assert sum(1 for x in _log(log) if x.startswith("kill")) == 2


# ---------------------------------------------------------------- a server restart

def _free_port(lo=3440, hi=3449):
    for port in range(lo, hi + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.fail("no free port in %d-%d for the restarted server" % (lo, hi))


@pytest.fixture(scope="module")
def own_server():
    """A private server of these tests alone (the session's is never restarted), with
    `dk_slow`: 80 rows of 8 KB (so the server flushes rows as it makes them)."""
    srv = PrivateServer(port=_free_port())
    srv.start()
    try:
        _exec(srv.connect_kwargs(),
              "CREATE TABLE dk_slow (id INT PRIMARY KEY, pad MEDIUMTEXT)",
              "INSERT INTO dk_slow SELECT seq, REPEAT(CHAR(65 + seq % 26), 8000) "
              "FROM seq_1_to_80")
        yield srv
    finally:
        srv.stop()


class _Attempts:
    """The fault hook that only logs "<attempt> <thread id>" after the first batch of
    each attempt (the read is then under way)."""

    def __init__(self, log):
        self.log = log

    def __call__(self, attempt, thread_id):
        with open(self.log, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write("%d %d\n" % (attempt, thread_id))


def _slow_read(srv, log, npartitions, **kw):
    """`dk_slow` with SLEEP(0.05) per row: 20 rows/s, 2 s for a partition of 40."""
    return mdask.read_sql_table("dk_slow", dict(srv.connect_kwargs(), **kw),
                                partition_on="id", npartitions=npartitions,
                                bounds=(1, 80), where="SLEEP(0.05) = 0", batch_size=2,
                                _fault=_Attempts(log))


def _when_reading(log, n, action):
    """Run `action` in a thread as soon as `n` attempt-0 lines are in `log` (that many
    partitions have their first rows); returns the thread and a dict with ``"t"`` (when
    the action began) and ``"error"``."""
    state = {"t": None, "error": None}

    def run():
        try:
            end = time.monotonic() + 60
            while time.monotonic() < end:
                try:
                    lines = _log(log)
                except FileNotFoundError:
                    lines = []
                if sum(1 for x in lines if x.startswith("0 ")) >= n:
                    break
                time.sleep(0.01)
            state["t"] = time.monotonic()
            action()
        except BaseException as exc:   # shown by the test
            state["error"] = exc

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, state


def test_restart_mid_partition_reread_once(client, own_server, tmp_path):
    """The server restarted (SIGTERM, started again on the same datadir and port) while
    both partitions are being read: each task reconnects, waiting for the server to
    accept connections again, and re-reads its range once; every row exactly once."""
    log = str(tmp_path / "attempts")
    ddf = _slow_read(own_server, log, 2)
    th, state = _when_reading(log, 2, own_server.restart)
    t0 = time.monotonic()
    df = ddf.compute(retries=0)
    elapsed = time.monotonic() - t0
    th.join(60)
    assert state["error"] is None and state["t"] is not None
    assert sorted(df["id"]) == list(range(1, 81))
    assert df["pad"].str.len().eq(8000).all()
    lines = _log(log)
    # both partitions were cut after their first rows and read again, once each
    assert sorted(x.split()[0] for x in lines) == ["0", "0", "1", "1"], lines
    print("restart mid-read: %.2f s (a partition alone: 2 s)" % elapsed)


def test_server_down_longer_than_reconnect_raises(client, own_server, tmp_path):
    """The server stopped mid-partition and kept down: the re-read's reconnect waits
    connect_timeout (2 s) and the task fails with the driver's OperationalError (2003:
    TCP connection refused), in bounded time."""
    log = str(tmp_path / "attempts")
    ddf = _slow_read(own_server, log, 1, connect_timeout=2)
    th, state = _when_reading(log, 1, own_server.halt)
    try:
        with pytest.raises(mysqlc.OperationalError) as info:
            ddf.compute(retries=0)
        failed = time.monotonic()
        th.join(60)
        assert state["error"] is None
        assert info.value.args[0] == 2003, info.value.args
        waited = failed - state["t"]
        # the halt itself (a shutdown) plus the 2 s wait, never a hang
        assert 2.0 <= waited < 20, waited
        assert [x.split()[0] for x in _log(log)] == ["0"]
        print("server down: task failed %.2f s after the halt began" % waited)
    finally:
        own_server.restart()


def test_server_down_dask_retries_no_duplicates(client, own_server, tmp_path):
    """Down for 3 s with connect_timeout=1: a task alone cannot wait that long, so a
    run of it fails, and Dask's retries run it again until the server is back; the
    result has every row once."""
    log = str(tmp_path / "attempts")
    ddf = _slow_read(own_server, log, 2, connect_timeout=1)
    th, state = _when_reading(log, 2, lambda: own_server.restart(downtime=3.0))
    df = ddf.compute(retries=30)
    th.join(60)
    assert state["error"] is None
    assert sorted(df["id"]) == list(range(1, 81))
    assert df["pad"].str.len().eq(8000).all()
    lines = _log(log)
    # both first attempts were cut; each partition's result is one later complete read
    assert [x.split()[0] for x in lines[:2]] == ["0", "0"] and len(lines) >= 4, lines


# ---------------------------------------------------------------- writes

def test_write_then_read_back(client, src, mixed):
    ddf = mdask.read_sql_table(mixed, src, index_col="id", npartitions=4)
    n = mdask.to_table(ddf, "dk_out", src, if_exists="replace", index=True)
    assert n == ROWS
    got = _expected(src, "SELECT * FROM dk_out ORDER BY id").set_index("id")
    want = _expected(src, "SELECT * FROM dk_mixed ORDER BY id").set_index("id")
    for col in want.columns:
        assert got[col].astype(object).tolist() == want[col].astype(object).tolist(), col
    # append adds once more; replace swaps in a new table
    assert mdask.to_table(ddf, "dk_out", src, if_exists="append", index=True) == ROWS
    assert len(_expected(src, "SELECT id FROM dk_out")) == 2 * ROWS
    with pytest.raises(ValueError, match="exists"):
        mdask.to_table(ddf, "dk_out", src, if_exists="fail")
    assert mdask.to_table(ddf.head(10, compute=False), "dk_out", src,
                          if_exists="replace", index=True) == 10
    assert len(_expected(src, "SELECT id FROM dk_out")) == 10
    assert _staging_tables(src) == []
    _exec(src, "DROP TABLE dk_out")


def _staging_tables(src):
    c = mysqlc.connect(**src)
    cur = c.cursor()
    cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                "DATABASE() AND TABLE_NAME LIKE '\\_mysqlc\\_%'")
    out = [r[0] for r in cur.fetchall()]
    c.close()
    return out


class _FailAfterLoad:
    """Raise after the staging load while fewer than `limit` failures are logged."""

    def __init__(self, log, limit):
        self.log = log
        self.limit = limit

    def __call__(self, stage):
        with open(self.log, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            n = len(f.read().split())
            if n < self.limit:
                f.write(stage + "\n")
                raise RuntimeError("injected failure after loading %s" % stage)


@pytest.mark.parametrize("mode", ["staged", "direct", "replace"])
def test_retried_write_leaves_no_duplicates(client, src, tmp_path, mode):
    """A partition that fails after its load (staged: the staging table's; direct: the
    committed load into the table) and is retried by Dask leaves its rows once."""
    kw = {"staged": {"if_exists": "append"},
          "direct": {"if_exists": "append", "atomic": False},
          "replace": {"if_exists": "replace"}}[mode]
    _exec(src, "DROP TABLE IF EXISTS dk_w",
          "CREATE TABLE dk_w (id BIGINT, v LONGTEXT)",
          "INSERT INTO dk_w VALUES (-1, 'old')")
    old = [] if mode == "replace" else [-1]
    try:
        pdf = pd.DataFrame({"id": range(1000), "v": ["v%d" % i for i in range(1000)]})
        ddf = dd.from_pandas(pdf, npartitions=4)
        log = str(tmp_path / "fails")
        n = mdask.to_table(ddf, "dk_w", src, retries=2, _fault=_FailAfterLoad(log, limit=3),
                           **kw)
        assert n == 1000
        assert len(_log(log)) == 3                    # three partitions failed once
        got = _expected(src, "SELECT id, v FROM dk_w ORDER BY id")
        assert got["id"].tolist() == old + list(range(1000))
        assert got["v"].tolist()[len(old):] == ["v%d" % i for i in range(1000)]
        assert _staging_tables(src) == []

        # a failure that outlasts the retries
        log2 = str(tmp_path / "fails2")
        with pytest.raises(RuntimeError, match="injected"):
            mdask.to_table(ddf, "dk_w", src, retries=0, _fault=_FailAfterLoad(log2, limit=1),
                           **kw)
        ids = _expected(src, "SELECT id FROM dk_w ORDER BY id")["id"].tolist()
        if mode == "direct":
            # every partition committed its load (the fault comes after the commit) and
            # stays: each row of the second write once, beside the first write's
            assert ids[0] == -1
            assert collections.Counter(ids[1:]) == {i: 2 for i in range(1000)}
        else:
            assert ids == old + list(range(1000))     # as it was
        assert _staging_tables(src) == []
    finally:
        _exec(src, "DROP TABLE IF EXISTS dk_w")


# ---------------------------------------------------------------- consistency

def test_as_of_consistent_image(client, src):
    _exec(src, "DROP TABLE IF EXISTS dk_ver",
          "CREATE TABLE dk_ver (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING",
          "INSERT INTO dk_ver SELECT seq, seq FROM seq_1_to_1000")
    try:
        c = mysqlc.connect(**src)
        cur = c.cursor()
        time.sleep(0.01)
        cur.execute("SELECT NOW(6)")
        then = cur.fetchone()[0]
        time.sleep(0.01)
        cur.execute("UPDATE dk_ver SET v = -v WHERE id > 500")
        cur.execute("DELETE FROM dk_ver WHERE id <= 100")
        c.commit()
        c.close()
        ddf = mdask.read_sql_table("dk_ver", src, index_col="id", npartitions=4, as_of=then)
        df = ddf.compute()
        assert df.index.tolist() == list(range(1, 1001))
        assert df["v"].tolist() == list(range(1, 1001))
        now = mdask.read_sql_table("dk_ver", src, index_col="id", npartitions=4).compute()
        assert now.index.tolist() == list(range(101, 1001))
    finally:
        _exec(src, "DROP TABLE IF EXISTS dk_ver")


def test_bounds_where_params(client, src, mixed):
    """Given bounds skip the MIN/MAX query; rows outside them land in the first and last
    ranges; where= with params applies to every range."""
    ddf = mdask.read_sql_table(mixed, src, partition_on="id", npartitions=4,
                               bounds=(1000, 2000), where="id %% 3 = %s", params=[1],
                               columns=["id", "s"])
    parts = _partitions(ddf)
    assert min(parts[0]["id"]) == 1 and max(parts[-1]["id"]) == ROWS - 2
    got = sorted(i for p in parts for i in p["id"])
    assert got == [i for i in range(1, ROWS + 1) if i % 3 == 1]
    with pytest.raises(ValueError, match="integer"):
        mdask.read_sql_table(mixed, src, partition_on="s", npartitions=2, bounds=("a", "b"))
    with pytest.raises(TypeError, match="sequence"):
        mdask.read_sql_table(mixed, src, partition_on="id", npartitions=2,
                             where="id > %(x)s", params={"x": 1})
