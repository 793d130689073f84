"""mysqlc.ray on a real local Ray (``ray.init(num_cpus=2)``) against the private server
(docs/cluster.md): blocks equal to one ``mysqlc.read_sql``, ``override_num_blocks``, the
partitioning rules, a connection KILLed mid-block, a server restarted mid-block, the datasink (write then read back,
a retried write task, a failed write), and no password in the datasource's repr."""

import collections
import fcntl
import socket
import sys
import threading
import time

import pytest

import cloudpickle
import pyarrow as pa
import ray

import mysqlc
from mysqlc import ray as mray
from mysqlc.server import PrivateServer

# the hooks run in Ray workers, which cannot import this module by name
cloudpickle.register_pickle_by_value(sys.modules[__name__])
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROWS = 2000


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()


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


def _read(kw, sql):
    c = mysqlc.connect(**kw)
    try:
        return mysqlc.read_sql(c, sql)
    finally:
        c.close()


@pytest.fixture(scope="module")
def mixed(src):
    _exec(src, "DROP TABLE IF EXISTS ry_mixed",
          "CREATE TABLE ry_mixed (id INT NOT NULL PRIMARY KEY, b BIGINT, "
          "s VARCHAR(20) COLLATE utf8mb4_general_ci, x DOUBLE, m DECIMAL(12,2), "
          "d DATETIME(6), dt DATE, t TEXT)",
          "INSERT INTO ry_mixed SELECT seq, seq * 1000000007, "
          "IF(seq % 13 = 0, NULL, CONCAT(ELT(1 + seq % 4, 'a', 'A', 'b ', 'B'), seq % 9)), "
          "seq / 7, seq * 1.25, TIMESTAMP'2024-01-01 00:00:00' + INTERVAL seq * 37 SECOND, "
          "DATE'2020-01-01' + INTERVAL seq % 400 DAY, REPEAT('z', seq % 30) "
          "FROM seq_1_to_" + str(ROWS))
    yield "ry_mixed"
    _exec(src, "DROP TABLE IF EXISTS ry_mixed")


def _sorted(table, key="id"):
    return table.sort_by(key)


def test_read_equal_to_read_sql(ray_local, src, mixed):
    ds = mray.read_sql("SELECT * FROM ry_mixed", src, partition_on="id",
                       override_num_blocks=4)
    refs = ds.to_arrow_refs()
    assert len(refs) == 4
    blocks = ray.get(refs)
    assert all(isinstance(b, pa.Table) for b in blocks)
    got = _sorted(pa.concat_tables(blocks))
    want = _read(src, "SELECT * FROM ry_mixed ORDER BY id")
    assert got.schema == want.schema
    assert got.equals(want)
    # equal value ranges of the integer key
    assert [len(b) for b in blocks] == [500, 500, 500, 500]


def test_table_columns_options(ray_local, src, mixed):
    ds = mray.read_sql(None, src, table=mixed, partition_on="d", override_num_blocks=3,
                       columns=["id", "d", "m"], where="id > %s", params=[100],
                       decimal="float", protocol="text")
    got = _sorted(pa.concat_tables(ray.get(ds.to_arrow_refs())))
    want = _read(src, "SELECT id, d, CAST(m AS DOUBLE) AS m FROM ry_mixed WHERE id > 100 "
                      "ORDER BY id")
    assert got.column("m").type == pa.float64()
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("m").to_pylist() == want.column("m").to_pylist()


def test_collated_string_key_and_nulls(ray_local, src, mixed):
    for n in (2, 5):
        ds = mray.read_sql("SELECT id, s FROM ry_mixed", src, partition_on="s",
                           override_num_blocks=n)
        blocks = ray.get(ds.to_arrow_refs())
        ids = sorted(i for b in blocks for i in b.column("id").to_pylist())
        assert ids == list(range(1, ROWS + 1)), n
        assert blocks[0].column("s").null_count == ROWS // 13
        assert all(b.column("s").null_count == 0 for b in blocks[1:])


def test_empty_result(ray_local, src, mixed):
    ds = mray.read_sql("SELECT * FROM ry_mixed WHERE id < 0", src, partition_on="id",
                       override_num_blocks=4)
    blocks = ray.get(ds.to_arrow_refs())
    assert sum(len(b) for b in blocks) == 0
    assert ds.count() == 0


def test_no_password_in_repr(ray_local, src, mixed):
    pw = src["password"]
    d = mray.MySQLDatasource("SELECT 1", src)
    assert pw not in repr(d) and "password=***" in repr(d)
    assert pw not in d.get_name()
    sink = mray.MySQLDatasink("ry_nothing", src, if_exists="append")
    assert pw not in repr(sink)
    ds = mray.read_sql("SELECT * FROM ry_mixed", src, partition_on="id",
                       override_num_blocks=2)
    assert pw not in repr(ds)
    assert ds.count() == ROWS


class _Killer:
    def __init__(self, root_kw, log, limit):
        self.root_kw = root_kw
        self.log = log
        self.limit = limit

    def __call__(self, attempt, thread_id):
        with open(self.log, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
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


def _log(path):
    with open(path) as f:
        return f.read().split("\n")[:-1]


def test_kill_mid_block_reread_once(ray_local, src, root_kw, tmp_path):
    _exec(src, "DROP TABLE IF EXISTS ry_wide",
          "CREATE TABLE ry_wide (id INT PRIMARY KEY, pad MEDIUMTEXT)",
          "INSERT INTO ry_wide SELECT seq, REPEAT(CHAR(65 + seq % 26), 8000) "
          "FROM seq_1_to_5000")
    try:
        log = str(tmp_path / "kills")
        ds = mray.read_sql("SELECT * FROM ry_wide", src, partition_on="id",
                           override_num_blocks=2, batch_size=16,
                           _fault=_Killer(root_kw, log, limit=1))
        blocks = ray.get(ds.to_arrow_refs())
        ids = sorted(i for b in blocks for i in b.column("id").to_pylist())
        assert ids == list(range(1, 5001))
        lines = _log(log)
        assert sum(1 for x in lines if x.startswith("kill")) == 1
        assert sum(1 for x in lines if x.startswith("1 ")) == 1

        log2 = str(tmp_path / "kills2")
        ds = mray.read_sql("SELECT * FROM ry_wide", src, partition_on="id",
                           override_num_blocks=1, batch_size=16,
                           _fault=_Killer(root_kw, log2, limit=2))
        with pytest.raises(Exception) as info:
            ray.get(ds.to_arrow_refs())
        assert "OperationalError" in repr(info.value) or isinstance(
            info.value, mysqlc.OperationalError)
        assert [x.split()[0] for x in _log(log2)][:4] == ["0", "kill", "1", "kill"]
    finally:
        _exec(src, "DROP TABLE IF EXISTS ry_wide")


def test_ray_task_retries_no_duplicates(ray_local, src, root_kw, tmp_path):
    """Both attempts of the first run of a block killed: the task fails, Ray runs it
    again (max_retries, retry_exceptions), and the re-run reads its whole range once."""
    _exec(src, "DROP TABLE IF EXISTS ry_wide2",
          "CREATE TABLE ry_wide2 (id INT PRIMARY KEY, pad MEDIUMTEXT)",
          "INSERT INTO ry_wide2 SELECT seq, REPEAT(CHAR(65 + seq % 26), 8000) "
          "FROM seq_1_to_5000")
    try:
        log = str(tmp_path / "kills")
        ds = mray.read_sql("SELECT * FROM ry_wide2", src, partition_on="id",
                           override_num_blocks=2, batch_size=16,
                           _fault=_Killer(root_kw, log, limit=2),
                           ray_remote_args={"max_retries": 2, "retry_exceptions": True})
        blocks = ray.get(ds.to_arrow_refs())
        ids = sorted(i for b in blocks for i in b.column("id").to_pylist())
        assert ids == list(range(1, 5001))
        assert sum(1 for x in _log(log) if x.startswith("kill")) == 2
    finally:
        _exec(src, "DROP TABLE IF EXISTS ry_wide2")


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


class _Attempts:
    """Logs "<attempt> <thread id>" after the first batch of each attempt."""

    def __init__(self, log):
        self.log = log

    def __call__(self, attempt, thread_id):
        with open(self.log, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write("%d %d\n" % (attempt, thread_id))


def _when_reading(log, n, action):
    """`action` in a thread once `n` attempt-0 lines are in `log`."""
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
        except BaseException as exc:
            state["error"] = exc

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, state


def test_server_restart_mid_block(ray_local, tmp_path):
    """A private server (the session's is never restarted) restarted while both blocks
    are read (40 rows of 8 KB each at 20 rows/s): each task reconnects once the server
    is back and re-reads its range once.  Then down for 3 s with connect_timeout=1: a
    task alone gives up, Ray's task retries run it again; every row once both times."""
    srv = PrivateServer(port=_free_port())
    srv.start()
    try:
        kw = srv.connect_kwargs()
        _exec(kw, "CREATE TABLE ry_slow (id INT PRIMARY KEY, pad MEDIUMTEXT)",
              "INSERT INTO ry_slow SELECT seq, REPEAT(CHAR(65 + seq % 26), 8000) "
              "FROM seq_1_to_80")
        log = str(tmp_path / "attempts")
        ds = mray.read_sql(None, kw, table="ry_slow", partition_on="id",
                           override_num_blocks=2, bounds=(1, 80),
                           where="SLEEP(0.05) = 0", batch_size=2, _fault=_Attempts(log))
        # Ray Data may run the two read tasks one after the other: restart as soon as
        # one is under way
        th, state = _when_reading(log, 1, srv.restart)
        blocks = ray.get(ds.to_arrow_refs())
        th.join(60)
        assert state["error"] is None and state["t"] is not None
        ids = sorted(i for b in blocks for i in b.column("id").to_pylist())
        assert ids == list(range(1, 81))
        attempts = collections.Counter(x.split()[0] for x in _log(log))
        # each block's first attempt, and a re-read of each block cut by the restart
        assert attempts["0"] == 2 and 1 <= attempts["1"] <= 2, attempts

        log2 = str(tmp_path / "attempts2")
        ds = mray.read_sql(None, dict(kw, connect_timeout=1), table="ry_slow",
                           partition_on="id", override_num_blocks=2, bounds=(1, 80),
                           where="SLEEP(0.05) = 0", batch_size=2, _fault=_Attempts(log2),
                           ray_remote_args={"max_retries": 30, "retry_exceptions": True})
        th, state = _when_reading(log2, 1, lambda: srv.restart(downtime=3.0))
        blocks = ray.get(ds.to_arrow_refs())
        th.join(60)
        assert state["error"] is None
        ids = sorted(i for b in blocks for i in b.column("id").to_pylist())
        assert ids == list(range(1, 81))
        lines = _log(log2)
        assert lines[0].split()[0] == "0" and len(lines) >= 3, lines
    finally:
        srv.stop()


def _staging_tables(src):
    c = mysqlc.connect(**src)
    cur = c.cursor()
    cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                "DATABASE() AND TABLE_NAME LIKE '\\_mysqlc\\_%'")
    out = [r[0] for r in cur.fetchall()]
    c.close()
    return out


def test_write_then_read_back(ray_local, src, mixed):
    ds = mray.read_sql("SELECT * FROM ry_mixed", src, partition_on="id",
                       override_num_blocks=4)
    sink = mray.MySQLDatasink("ry_out", src, if_exists="replace")
    ds.write_datasink(sink)
    assert sink.rows_written == ROWS
    got = _read(src, "SELECT * FROM ry_out ORDER BY id")
    want = _read(src, "SELECT * FROM ry_mixed ORDER BY id")
    for name in want.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
    assert _staging_tables(src) == []
    _exec(src, "DROP TABLE ry_out")


class _FailAfterLoad:
    def __init__(self, log, limit):
        self.log = log
        self.limit = limit

    def __call__(self, stage):
        with open(self.log, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            if len(f.read().split()) < self.limit:
                f.write(stage + "\n")
                raise RuntimeError("injected failure after loading %s" % stage)


@pytest.mark.parametrize("atomic", [True, False])
def test_retried_write_task_no_duplicates(ray_local, src, tmp_path, atomic):
    _exec(src, "DROP TABLE IF EXISTS ry_w",
          "CREATE TABLE ry_w (id BIGINT, v VARCHAR(10))",
          "INSERT INTO ry_w VALUES (-1, 'old')")
    try:
        data = pa.table({"id": pa.array(range(1000), pa.int64()),
                         "v": ["v%d" % i for i in range(1000)]})
        ds = ray.data.from_arrow(data).repartition(4)
        log = str(tmp_path / "fails")
        ds.write_datasink(mray.MySQLDatasink("ry_w", src, if_exists="append", atomic=atomic,
                                             _fault=_FailAfterLoad(log, 2)),
                          ray_remote_args={"max_retries": 2, "retry_exceptions": True})
        assert len(_log(log)) == 2                     # two tasks failed once each
        got = _read(src, "SELECT id FROM ry_w ORDER BY id").column("id").to_pylist()
        assert got == [-1] + list(range(1000))
        assert _staging_tables(src) == []

        log2 = str(tmp_path / "fails2")
        with pytest.raises(Exception, match="injected"):
            ds.write_datasink(mray.MySQLDatasink("ry_w", src, if_exists="append",
                                                 atomic=atomic,
                                                 _fault=_FailAfterLoad(log2, 100)),
                              ray_remote_args={"max_retries": 0})
        ids = _read(src, "SELECT id FROM ry_w").column("id").to_pylist()
        if atomic:
            assert len(ids) == 1001                       # as it was
        else:
            # committed tasks stay, none twice
            assert len(ids) > 1001 and max(collections.Counter(ids).values()) == 2
        time.sleep(0.5)
        assert _staging_tables(src) == []
    finally:
        _exec(src, "DROP TABLE IF EXISTS ry_w")
