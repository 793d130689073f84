"""executemany of every DML statement in a bounded number of round trips on MariaDB
(COM_STMT_BULK_EXECUTE; INSERT ... SELECT as multi-statement text): what is sent, the
values stored (the text path's, also for columns of mixed types), the error semantics,
rowcount/lastrowid against real mysqlclient, the paths where bulk does not apply, the
SQLAlchemy ORM flush.  See docs/batching.md."""

import datetime
import decimal

import pytest

import mysqlc
import mysqlc.cursors as C

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
from latency_proxy import LatencyProxy  # noqa: E402

pytestmark = pytest.mark.both_apis

D = decimal.Decimal
N = 1000


def _status(conn, *names):
    """Session status counters (SHOW SESSION STATUS) by name, as ints."""
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS")
    got = {k: v for k, v in cur.fetchall()}
    cur.close()
    return {n: int(got[n]) for n in names}


class _Count:
    """The commands a block sent: `Questions` and `Com_stmt_execute` deltas, less the
    SHOW STATUS the measurement itself runs."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        self.before = _status(self.conn, "Questions", "Com_stmt_execute", "Com_stmt_prepare")
        return self

    def __exit__(self, *exc):
        after = _status(self.conn, "Questions", "Com_stmt_execute", "Com_stmt_prepare")
        self.questions = after["Questions"] - self.before["Questions"] - 1
        self.executes = after["Com_stmt_execute"] - self.before["Com_stmt_execute"]
        self.prepares = after["Com_stmt_prepare"] - self.before["Com_stmt_prepare"]


@pytest.fixture
def bulk_conn(conn_kwargs, api):
    c = mysqlc.connect(**conn_kwargs)
    if not c._conn.bulk_operations:   # MariaDB >= 10.2 advertises it; the suite runs MariaDB
        c.close()
        pytest.fail("the test server lacks MARIADB_CLIENT_STMT_BULK_OPERATIONS")
    try:
        yield c
    finally:
        c.close()


CURSORS = [
    pytest.param((None, False), id="text"),
    pytest.param((None, True), id="prepared"),
    pytest.param((C.DictCursor, False), id="dict"),
    pytest.param((C.SSCursor, False), id="ss"),
    pytest.param((C.SSDictCursor, True), id="ssdict-prepared"),
]


def _cursor(conn, kind):
    cls, prepared = kind
    if cls is None:
        return conn.cursor(prepared=True) if prepared else conn.cursor()
    return conn.cursor(cls, prepared=prepared)


def _table(conn):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS bd")
    cur.execute("CREATE TABLE bd (id INT PRIMARY KEY, k INT UNIQUE, v DECIMAL(30,10), "
                "s VARCHAR(40), t DATETIME(6), b VARBINARY(10), f DOUBLE) ENGINE=InnoDB")
    cur.executemany("INSERT INTO bd (id, k, v) VALUES (%s, %s, %s)",
                    [(i, i, i) for i in range(N)])
    return cur


@pytest.mark.parametrize("kind", CURSORS)
def test_every_dml_in_bounded_round_trips(bulk_conn, kind):
    """UPDATE, DELETE, upsert, REPLACE and INSERT of 1,000 rows each take a number of
    commands that does not depend on the row count, on every cursor kind."""
    conn = bulk_conn
    check = _table(conn)
    cur = _cursor(conn, kind)
    ts = datetime.datetime(2024, 2, 29, 12, 30, 0, 250)
    # UPDATE by primary key: None mixed in, ints with Decimals in one column, ints and
    # bools with floats in another, str with datetime in a third
    vals = [None if i % 7 == 0 else (i if i % 3 == 0 else D("%d.25" % i)) for i in range(N)]
    fl = [[i / 4, i, True, None][i % 4] for i in range(N)]
    ss = ["s%d" % i if i % 2 else ts for i in range(N)]
    with _Count(conn) as n:
        assert cur.executemany("UPDATE bd SET v = %s, f = %s, s = %s, t = %s WHERE id = %s",
                               [(vals[i], fl[i], ss[i], ts, i) for i in range(N)]) == N
    assert cur.rowcount == N
    assert n.questions <= 2, n.questions          # COM_STMT_PREPARE + one bulk command
    check.execute("SELECT v, f, s FROM bd ORDER BY id")
    assert check.fetchall() == tuple(
        (None if vals[i] is None else D(vals[i]).quantize(D("1E-10")),
         None if fl[i] is None else float(fl[i]),
         ss[i] if i % 2 else "2024-02-29 12:30:00.000250") for i in range(N))
    # DELETE of 500 rows by key
    with _Count(conn) as n:
        assert cur.executemany("DELETE FROM bd WHERE id = %s", [(i,) for i in range(0, N, 2)]) \
            == N // 2
    assert n.questions <= 2
    # upsert: 500 updates of existing keys, 500 inserts
    with _Count(conn) as n:
        total = cur.executemany(
            "INSERT INTO bd (id, k, s) VALUES (%s, %s, %s) ON DUPLICATE KEY UPDATE s = %s",
            [(i, i, "new", "upd%d" % i) for i in range(N)])
    assert n.questions <= 2
    assert total == (N // 2) * 2 + N // 2          # 2 per updated row, 1 per inserted row
    # REPLACE, bytes and str mixed in one column (both strings for the text literal)
    with _Count(conn) as n:
        assert cur.executemany("REPLACE INTO bd (id, k, s, b) VALUES (%s, %s, %s, %s)",
                               [(i, i, b"x%d" % i if i % 2 else "y%d" % i, b"\x00\xff")
                                for i in range(N)]) == 2 * N
    assert n.questions <= 2
    check.execute("SELECT s, b FROM bd WHERE id IN (4, 5) ORDER BY id")
    assert check.fetchall() == (("y4", b"\x00\xff"), ("x5", b"\x00\xff"))
    # INSERT with a DOUBLE column, 10,000 rows
    check.execute("DELETE FROM bd")
    with _Count(conn) as n:
        assert cur.executemany("INSERT INTO bd (id, f) VALUES (%s, %s)",
                               [(i, i / 3) for i in range(10 * N)]) == 10 * N
    assert n.questions <= 3
    check.execute("SELECT COUNT(*), SUM(f = id / 3e0) FROM bd")
    assert check.fetchone() == (10 * N, 10 * N)


@pytest.fixture
def proxied(conn_kwargs, api):
    """A connection through benchmarks/latency_proxy.py (no added delay), which counts
    the round trips on the wire, and the proxy."""
    with LatencyProxy(conn_kwargs["port"], one_way=0.0, lifetime=120) as proxy:
        kw = dict(conn_kwargs, host="127.0.0.1", port=proxy.port)
        c = mysqlc.connect(**kw)
        try:
            yield c, proxy
        finally:
            c.close()


@pytest.mark.parametrize("kind", CURSORS[:2])
def test_insert_select_in_bounded_round_trips(proxied, kind):
    """INSERT ... SELECT, which COM_STMT_BULK_EXECUTE refuses (1295), goes as
    multi-statement text: one COM_QUERY for 1,000 rows, each row its own statement."""
    conn, proxy = proxied
    check = _table(conn)
    check.execute("CREATE TEMPORARY TABLE dst (id INT PRIMARY KEY, v DECIMAL(30,10))")
    cur = _cursor(conn, kind)
    proxy.reset()
    assert cur.executemany("INSERT INTO dst SELECT id + %s, v FROM bd WHERE id = %s",
                           [(10000, i) for i in range(N)]) == N
    # prepare, the refused bulk command, the multi-statement query
    assert proxy.reset() <= 3
    assert cur.rowcount == N
    check.execute("SELECT COUNT(*), MIN(id), MAX(id) FROM dst")
    assert check.fetchone() == (N, 10000, 10000 + N - 1)
    # the second time the statement is known: no bulk attempt, one round trip
    proxy.reset()
    assert cur.executemany("INSERT INTO dst SELECT id + %s, v FROM bd WHERE id = %s",
                           [(20000, i) for i in range(N)]) == N
    assert proxy.reset() == 1
    # and the other kinds through the proxy's count: UPDATE of 1,000 rows, one round trip
    # once prepared
    cur.executemany("UPDATE bd SET s = %s WHERE id = %s", [("r", i) for i in range(N)])
    proxy.reset()
    assert cur.executemany("UPDATE bd SET s = %s WHERE id = %s",
                           [("q%d" % i, i) for i in range(N)]) == N
    assert proxy.reset() == 1
    # an error stops at the failing row's statement; the ones before it stay applied
    # (separate statements, as with one execute per row)
    with pytest.raises(mysqlc.IntegrityError) as ei:
        cur.executemany("INSERT INTO dst SELECT id + %s, v FROM bd WHERE id = %s",
                        [(30000, i) for i in range(10)] + [(10000, 0)] +
                        [(30000, i) for i in range(10, 20)])
    assert ei.value.args[0] == 1062
    check.execute("SELECT COUNT(*) FROM dst WHERE id >= 30000")
    assert check.fetchone() == (10,)
    check.execute("SELECT 1")
    assert check.fetchone() == (1,)


def test_mixed_types_store_the_text_path_values(bulk_conn):
    """Columns whose values have different types store, through bulk, exactly what one
    text execute per row stores: the types join (ints with Decimals as DECIMAL text, bools
    and small ints with floats as DOUBLE, str/bytes/temporal values as strings) or the
    rows split into runs of commands."""
    conn = bulk_conn
    cur = conn.cursor()
    cols = ("a BIGINT, b DECIMAL(40,20), c DOUBLE, d VARCHAR(40), e DATETIME(6), "
            "g BIGINT UNSIGNED, h DECIMAL(40,0)")
    for t in ("mx_bulk", "mx_text"):
        cur.execute("CREATE TEMPORARY TABLE %s (id INT PRIMARY KEY, %s)" % (t, cols))
    dt = datetime.datetime
    rows = []
    for i in range(200):
        rows.append((
            i,
            [True, 5, None, 2 ** 40, -3][i % 5],                            # bool/int
            [1, D("1.5"), None, D("-0.00000000000000000001"), 2 ** 62][i % 5],  # int/Decimal
            [0.1, 3, None, False, 2 ** 53][i % 5],                          # float/int/bool
            ["é'\\", b"raw", dt(2020, 1, 2, 3, 4, 5), datetime.date(2021, 1, 1),
             datetime.timedelta(hours=-30, microseconds=5)][i % 5],         # strings
            ["2024-01-01 00:00:00", dt(2024, 5, 6, 7, 8, 9, 123456), None,
             datetime.date(2022, 2, 2), dt(1999, 12, 31)][i % 5],           # temporal/str
            [2 ** 64 - 1, True, 7, None, 0][i % 5],                         # unsigned mix
            [10 ** 30, 1, None, -2 ** 63, D(7)][i % 5],                     # beyond 64 bits
        ))
    with _Count(conn) as n:
        assert cur.executemany("INSERT INTO mx_bulk VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                               rows) == len(rows)
    assert n.executes == 1, n.executes                  # one type per column joined
    for r in rows:
        cur.execute("INSERT INTO mx_text VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", r)
    cur.execute("SELECT * FROM mx_bulk ORDER BY id")
    bulk = cur.fetchall()
    cur.execute("SELECT * FROM mx_text ORDER BY id")
    assert bulk == cur.fetchall()
    # types that do not join (a float with a Decimal, a number with a string, a big int
    # with a float): runs of commands, the values still the text path's
    rows2 = [(1000 + i, [1, 2, 3][i % 3], [0.5, D("0.5"), None][i % 3],
              [0.25, 2 ** 60, 1][i % 3], [1, "x", None][i % 3], None, None, None)
             for i in range(9)]
    # (9 runs: past MC_BULK_MAX_RUNS (4) they go by the multi-row text INSERT, no bulk
    # command; 3 runs of 3 rows: 3 bulk commands)
    rows3 = [(2000 + i, 1, [0.5, D("0.5"), 0.75][i // 3], 0.25, "x", None, None, None)
             for i in range(9)]
    for batch, commands in ((rows2, 0), (rows3, 3)):
        with _Count(conn) as n:
            assert cur.executemany(
                "INSERT INTO mx_bulk VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                batch) == len(batch)
        assert n.executes == commands, (n.executes, commands)
        for r in batch:
            cur.execute("INSERT INTO mx_text VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", r)
    cur.execute("SELECT * FROM mx_bulk WHERE id >= 1000 ORDER BY id")
    bulk = cur.fetchall()
    cur.execute("SELECT * FROM mx_text WHERE id >= 1000 ORDER BY id")
    assert bulk == cur.fetchall() and len(bulk) == 18


ERRORS = [
    pytest.param((lambda i: (3, "x"), 1062), id="duplicate-key"),
    pytest.param((lambda i: (i, None), 1048), id="not-null"),
    pytest.param((lambda i: (i, "too long for it"), 1406), id="data-too-long"),
]


@pytest.mark.parametrize("case", ERRORS)
@pytest.mark.parametrize("prepared", [False, True], ids=["text", "prepared"])
def test_error_in_row_500(bulk_conn, case, prepared):
    """A failing row (500 of 1,000) raises the server's error (no row index before
    MariaDB 11.5).  What stays applied is what MariaDB 10.11 does (measured here): an
    INSERT/REPLACE/upsert command is one statement, undone as a whole on InnoDB (no row
    applied, also under autocommit), as mysqlclient's multi-row INSERT is; on a
    non-transactional engine the rows before the failing one stay.  An UPDATE or DELETE
    command keeps the rows before the failing one (committed under autocommit, part of
    the open transaction otherwise), as mysqlclient's one execute per row does.  The
    connection stays usable."""
    conn = bulk_conn
    make, code = case
    cur = conn.cursor(prepared=True) if prepared else conn.cursor()
    check = conn.cursor()
    check.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES'")
    conn.autocommit(True)
    for engine, kept in (("InnoDB", 0), ("Aria", 499)):
        check.execute("DROP TABLE IF EXISTS er")
        check.execute("CREATE TABLE er (id INT PRIMARY KEY, v VARCHAR(5) NOT NULL) "
                      "ENGINE=" + engine)
        rows = [(i, "v%d" % (i % 100)) for i in range(N)]
        rows[499] = make(499)
        with pytest.raises(mysqlc.Error) as ei:
            cur.executemany("INSERT INTO er (id, v) VALUES (%s, %s)", rows)
        assert ei.value.args[0] == code
        assert cur.rowcount == -1
        check.execute("SELECT COUNT(*) FROM er")
        assert check.fetchone() == (kept,)
    # UPDATE: the rows before the failing one stay (InnoDB, autocommit)
    check.execute("DROP TABLE IF EXISTS er")
    check.execute("CREATE TABLE er (id INT PRIMARY KEY, v VARCHAR(5) NOT NULL) ENGINE=InnoDB")
    check.executemany("INSERT INTO er VALUES (%s, %s)", [(i, "a") for i in range(N)])
    rows = [("b", i) for i in range(N)]
    rows[499] = ("too long" if code != 1048 else None, 499)
    with pytest.raises(mysqlc.Error) as ei:
        cur.executemany("UPDATE er SET v = %s WHERE id = %s", rows)
    assert ei.value.args[0] == (1406 if code != 1048 else 1048)
    check.execute("SELECT COUNT(*), MAX(id) FROM er WHERE v = 'b'")
    assert check.fetchone() == (499, 498)
    # inside a transaction: those rows are part of it (a rollback undoes them)
    check.execute("UPDATE er SET v = 'a'")
    conn.autocommit(False)
    with pytest.raises(mysqlc.Error):
        cur.executemany("UPDATE er SET v = %s WHERE id = %s", rows)
    check.execute("SELECT COUNT(*) FROM er WHERE v = 'b'")
    assert check.fetchone() == (499,)
    conn.rollback()
    check.execute("SELECT COUNT(*) FROM er WHERE v = 'b'")
    assert check.fetchone() == (0,)
    conn.autocommit(True)
    # DELETE stopped by a foreign key at row 500: rows 0..498 deleted
    check.execute("CREATE TABLE er_child (id INT PRIMARY KEY, p INT, "
                  "FOREIGN KEY (p) REFERENCES er (id)) ENGINE=InnoDB")
    try:
        check.execute("INSERT INTO er_child VALUES (1, 499)")
        with pytest.raises(mysqlc.IntegrityError) as ei:
            cur.executemany("DELETE FROM er WHERE id = %s", [(i,) for i in range(N)])
        assert ei.value.args[0] == 1451
        check.execute("SELECT COUNT(*), MIN(id) FROM er")
        assert check.fetchone() == (N - 499, 499)
    finally:
        check.execute("DROP TABLE er_child")
    check.execute("SELECT 1")
    assert check.fetchone() == (1,)


def test_splits_at_max_stmt_length(bulk_conn):
    """Rows beyond one command's limit (max_allowed_packet, or max_stmt_length) go in
    further commands; each is its own statement (the earlier ones stay applied when a
    later one fails)."""
    conn = bulk_conn
    check = _table(conn)
    cur = conn.cursor()
    cur.max_stmt_length = 4096
    with _Count(conn) as n:
        assert cur.executemany("UPDATE bd SET s = %s WHERE id = %s",
                               [("x" * 30, i) for i in range(N)]) == N
    assert 5 < n.questions < 30, n.questions
    check.execute("SELECT COUNT(*) FROM bd WHERE s = %s", ("x" * 30,))
    assert check.fetchone() == (N,)
    rows = [(i + N, i + N, "z") for i in range(N)]
    rows[-1] = (0, 0, "dup")
    with pytest.raises(mysqlc.IntegrityError):
        cur.executemany("INSERT INTO bd (id, k, s) VALUES (%s, %s, %s)", rows)
    check.execute("SELECT COUNT(*) FROM bd WHERE s = 'z'")
    kept = check.fetchone()[0]
    assert 0 < kept < N - 1                    # the commands before the failing one


def test_where_bulk_does_not_apply(bulk_conn, conn_kwargs):
    """SELECT, statements that cannot be prepared, values without a binary form and
    connections without multi statements keep today's path."""
    conn = bulk_conn
    check = _table(conn)
    cur = conn.cursor()
    before = _status(conn, "Com_select")["Com_select"]
    cur.executemany("SELECT %s", [(i,) for i in range(5)])
    assert _status(conn, "Com_select")["Com_select"] - before == 5
    # two statements in one: cannot be prepared, runs per row as text
    with _Count(conn) as n:
        cur.executemany("UPDATE bd SET s = %s WHERE id = %s; UPDATE bd SET s = 'y' WHERE id = 0",
                        [("m", 1), ("m", 2)])
    assert n.executes == 0
    check.execute("SELECT COUNT(*) FROM bd WHERE s = 'm'")
    assert check.fetchone() == (2,)
    with _Count(conn) as n:                  # the failed prepare is not tried again
        cur.executemany("UPDATE bd SET s = %s WHERE id = %s; UPDATE bd SET s = 'y' WHERE id = 0",
                        [("m", 1), ("m", 2)])
    assert n.prepares == 0
    # a list value (expanded for IN by the text path)
    assert cur.executemany("DELETE FROM bd WHERE id IN %s", [((1, 2),), ((3,),)]) == 3
    # %(name)s placeholders with mappings go through bulk too
    with _Count(conn) as n:
        assert cur.executemany("UPDATE bd SET s = %(s)s WHERE id = %(id)s",
                               [{"s": "named", "id": i} for i in range(10, 20)]) == 10
    assert n.questions <= 2          # (Com_stmt_execute counts a bulk UPDATE's rows)
    # RETURNING: a result set per row, one execute per row
    with _Count(conn) as n:
        cur.executemany("INSERT INTO bd (id, k) VALUES (%s, %s) RETURNING id",
                        [(5000, 5000), (5001, 5001)])
    assert n.executes == 0
    conn.commit()
    c2 = mysqlc.connect(multi_statements=False, **conn_kwargs)
    try:
        k = c2.cursor()
        k.execute("CREATE TEMPORARY TABLE dst (id INT PRIMARY KEY)")
        assert k.executemany("INSERT INTO dst SELECT id + %s FROM bd WHERE id = %s",
                             [(100000, i) for i in range(10, 15)]) == 5
        k.execute("SELECT COUNT(*) FROM dst")
        assert k.fetchone() == (5,)
    finally:
        c2.close()


@pytest.mark.sync_only("compares with MySQLdb (mysqlclient), a sync driver")
@pytest.mark.parametrize("found_rows", [False, True], ids=["default", "found-rows"])
def test_rowcount_and_lastrowid_as_mysqlclient(server, found_rows):
    """rowcount and lastrowid of executemany equal real mysqlclient's on the same
    statements (with and without CLIENT.FOUND_ROWS), on a fresh table each."""
    MySQLdb = pytest.importorskip("MySQLdb")
    from mysqlc.constants import CLIENT
    kw = server.connect_kwargs()
    flag = CLIENT.FOUND_ROWS if found_rows else 0
    statements = [
        ("INSERT INTO rc (k, v) VALUES (%s, %s)", [(10, 1), (11, 1), (12, 1)]),
        ("UPDATE rc SET v = %s WHERE k = %s", [(1, 1), (5, 2), (5, 99), (7, 3)]),
        ("INSERT INTO rc (k, v) VALUES (%s, %s) ON DUPLICATE KEY UPDATE v = VALUES(v)",
         [(1, 1), (2, 9), (20, 1)]),
        ("INSERT INTO rc (k, v) VALUES (%s, %s) ON DUPLICATE KEY UPDATE v = v + 1",
         [(1, 1), (2, 9), (21, 1)]),
        ("UPDATE rc SET v = 5 WHERE k = %s OR v = %s", [(1, 5), (2, 5)]),
        ("INSERT INTO rc (k, v) SELECT %s + 100, v FROM rc WHERE k = %s",
         [(1, 1), (2, 2), (3, 3)]),
        ("REPLACE INTO rc (k, v) VALUES (%s, %s)", [(1, 5), (30, 1)]),
        ("DELETE FROM rc WHERE k = %s", [(1,), (2,), (999,)]),
    ]

    def run(module, **extra):
        c = module.connect(host=kw["host"], port=kw["port"], user=kw["user"],
                           password=kw["password"], database=kw["database"],
                           client_flag=flag, autocommit=True)
        out = []
        try:
            for q, rows in statements:
                cur = c.cursor(**extra)
                cur.execute("DROP TABLE IF EXISTS rc")
                cur.execute("CREATE TABLE rc (id INT AUTO_INCREMENT PRIMARY KEY, "
                            "k INT UNIQUE, v INT)")
                cur.execute("INSERT INTO rc (k, v) VALUES (1, 1), (2, 2), (3, 3)")
                n = cur.executemany(q, rows)
                res = (n, cur.rowcount, cur.lastrowid)
                cur.execute("SELECT GROUP_CONCAT(id, ':', k, ':', v ORDER BY id) FROM rc")
                out.append(res + cur.fetchone())
        finally:
            c.close()
        return out

    theirs = run(MySQLdb)
    assert run(mysqlc) == theirs
    assert run(mysqlc, prepared=True) == theirs


@pytest.mark.sync_only("the PyMySQL flavour is a sync API")
def test_pymysql_flavour_keeps_one_statement_per_row(server):
    """mysqlc.pymysql keeps PyMySQL's executemany: one statement per row except the
    INSERT ... VALUES rewrite (its encoders keep bulk off), with PyMySQL's rowcount."""
    from mysqlc import pymysql
    c = pymysql.connect(autocommit=True, **server.connect_kwargs())
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE pf (id INT PRIMARY KEY, v INT)")
        cur.executemany("INSERT INTO pf VALUES (%s, %s)", [(i, 0) for i in range(20)])
        cur.execute("SHOW SESSION STATUS LIKE 'Com_update'")
        before = int(cur.fetchone()[1])
        assert cur.executemany("UPDATE pf SET v = %s WHERE id = %s",
                               [(1, i) for i in range(20)]) == 20
        assert cur.rowcount == 20
        cur.execute("SHOW SESSION STATUS LIKE 'Com_update'")
        assert int(cur.fetchone()[1]) - before == 20
    finally:
        c.close()


@pytest.mark.sync_only("SQLAlchemy's sync ORM")
def test_sqlalchemy_orm_flush_in_bounded_round_trips(server):
    """The ORM's flush of 1,000 modified objects (executemany of UPDATE by primary key)
    takes a bounded number of commands."""
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy import orm
    kw = server.connect_kwargs()
    url = "mariadb+mysqlc://%s:%s@%s:%d/%s" % (kw["user"], kw["password"], kw["host"],
                                                 kw["port"], kw["database"])
    engine = sa.create_engine(url)

    class Base(orm.DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = "orm_bulk_items"
        id = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
        name = sa.Column(sa.String(40))
        price = sa.Column(sa.Numeric(12, 2))

    try:
        Base.metadata.drop_all(engine)
        Base.metadata.create_all(engine)
        with orm.Session(engine) as s:
            s.add_all([Item(id=i, name="n%d" % i, price=D(i)) for i in range(N)])
            s.commit()
        with orm.Session(engine) as s:
            items = s.scalars(sa.select(Item)).all()
            raw = s.connection().connection.dbapi_connection
            for it in items:
                it.name = "m%d" % it.id
                it.price = D(it.id) + D("0.5")
            with _Count(raw) as n:
                s.flush()
            s.commit()
        assert n.questions <= 5, n.questions
        with engine.connect() as c:
            assert c.execute(sa.text("SELECT COUNT(*) FROM orm_bulk_items WHERE name LIKE 'm%' "
                                     "AND price = id + 0.5")).scalar() == N
    finally:
        Base.metadata.drop_all(engine)
        engine.dispose()


# ---------------------------------------------------------------- one-trip prepare

def test_one_trip_prepare(proxied):
    """On MariaDB the first execute of a statement on a prepared cursor sends
    COM_STMT_PREPARE and COM_STMT_EXECUTE (statement id 0xffffffff) together: one round
    trip, the statement cached for the next executes."""
    conn, proxy = proxied
    cur = conn.cursor(prepared=True)
    cur.execute("SELECT 1")                      # max_allowed_packet etc. out of the way
    before = _status(conn, "Com_stmt_prepare")["Com_stmt_prepare"]
    proxy.reset()
    cur.execute("SELECT %s + 1, %s, 'a?b' -- ?\n", (41, "x"))
    assert proxy.reset() == 1
    assert cur.fetchall() == ((42, "x", "a?b"),)
    proxy.reset()
    cur.execute("SELECT %s + 1, %s, 'a?b' -- ?\n", (1, None))
    assert proxy.reset() == 1
    assert cur.fetchall() == ((2, None, "a?b"),)
    assert _status(conn, "Com_stmt_prepare")["Com_stmt_prepare"] - before == 1
    cur.execute("CREATE TEMPORARY TABLE ot (id INT AUTO_INCREMENT PRIMARY KEY, v INT UNIQUE)")
    proxy.reset()
    assert cur.execute("INSERT INTO ot (v) VALUES (%s)", (7,)) == 1
    assert proxy.reset() == 1
    assert cur.lastrowid == 1
    # an execute error after a good prepare: raised, the statement kept and usable
    before = _status(conn, "Com_stmt_prepare")["Com_stmt_prepare"]
    with pytest.raises(mysqlc.IntegrityError) as ei:
        cur.execute("INSERT INTO ot (v) VALUES (%s) /* dup */", (7,))
    assert ei.value.args[0] == 1062
    assert cur.execute("INSERT INTO ot (v) VALUES (%s) /* dup */", (8,)) == 1
    assert _status(conn, "Com_stmt_prepare")["Com_stmt_prepare"] - before == 1
    # a prepare error: raised, the execute's error after it read; nothing cached
    proxy.reset()
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        cur.execute("SELEC %s", (1,))
    assert ei.value.args[0] == 1064
    assert proxy.reset() == 1
    with pytest.raises(mysqlc.ProgrammingError):
        cur.execute("SELEC %s", (1,))
    cur.execute("SELECT %s", (5,))
    assert cur.fetchall() == ((5,),)
    # placeholders the client cannot count for sure (a backslash) take two round trips
    proxy.reset()
    cur.execute("SELECT %s, 'a\\\\b'", (1,))
    assert proxy.reset() == 2
    assert cur.fetchall() == ((1, "a\\b"),)


def test_one_trip_prepare_cut_connection(conn_kwargs, api):
    """The connection cut while both responses are awaited: OperationalError 2013 at
    once, the connection closed (2006 after), no hang."""
    import threading
    with LatencyProxy(conn_kwargs["port"], one_way=0.2, lifetime=60) as proxy:
        c = mysqlc.connect(**dict(conn_kwargs, host="127.0.0.1", port=proxy.port))
        try:
            cur = c.cursor(prepared=True)
            cur.execute("SELECT 1")
            timer = threading.Timer(0.1, proxy.close)
            timer.start()
            try:
                with pytest.raises(mysqlc.OperationalError) as ei:
                    cur.execute("SELECT %s + 2", (40,))
                assert ei.value.args[0] in (2013, 2006)
            finally:
                timer.join()
            with pytest.raises(mysqlc.OperationalError) as ei:
                cur.execute("SELECT %s + 3", (40,))
            assert ei.value.args[0] in (2006, 2013)
        finally:
            c.close()


@pytest.mark.parametrize("prepared", [False, True], ids=["text", "prepared"])
def test_one_trip_prepare_of_executemany(proxied, prepared):
    """The first executemany of a statement sends COM_STMT_PREPARE with its first bulk
    command (statement id 0xffffffff): 1,000 rows in one round trip from the start.  A
    bulk error after a good prepare keeps the statement; a prepare error is raised by a
    prepared cursor and sends a text cursor to the text path."""
    conn, proxy = proxied
    check = _table(conn)
    check.execute("SELECT @@max_allowed_packet")
    check.fetchall()
    conn._get_max_allowed_packet()
    cur = conn.cursor(prepared=prepared)
    proxy.reset()
    assert cur.executemany("UPDATE bd SET s = %%s WHERE id = %%s /* %d */" % prepared,
                           [("o%d" % i, i) for i in range(N)]) == N
    assert proxy.reset() == 1
    check.execute("SELECT COUNT(*) FROM bd WHERE s = CONCAT('o', id)")
    assert check.fetchone() == (N,)
    before = _status(conn, "Com_stmt_prepare")["Com_stmt_prepare"]
    with pytest.raises(mysqlc.IntegrityError):
        cur.executemany("UPDATE bd SET k = %s WHERE id = %s", [(5, 1), (5, 2)])
    assert cur.executemany("UPDATE bd SET k = %s WHERE id = %s", [(-1, 1), (-2, 2)]) == 2
    assert _status(conn, "Com_stmt_prepare")["Com_stmt_prepare"] - before == 1
    # the prepare's error (prepared), the text path's (text); the same server error
    with pytest.raises(mysqlc.OperationalError) as ei:
        cur.executemany("UPDATE bd SET s = %s WHERE idd = %s", [("x", 1)])
    assert ei.value.args[0] == 1054
    check.execute("SELECT 1")
    assert check.fetchone() == (1,)


def test_execute_after_a_bulk_sends_its_types_again(conn):
    """COM_STMT_BULK_EXECUTE sends its own parameter types, which the server keeps for
    the statement; a prepared execute after it sends its types again instead of
    trusting those of its own last execute (it sends them only when they change): here
    the bulk's column of ints and Decimals went as DECIMAL text, and an execute of ints
    that skipped its LONGLONG types had its 8 bytes read as DECIMAL text."""
    from decimal import Decimal
    cur = conn.cursor(prepared=True)
    cur.execute("DROP TABLE IF EXISTS bt_types")
    cur.execute("CREATE TABLE bt_types (id INT PRIMARY KEY, v DECIMAL(20,2))")
    sql = "INSERT INTO bt_types VALUES (%s, %s)"
    cur.execute(sql, (1, 10))                                  # LONGLONG, LONGLONG
    cur.executemany(sql, [(2, 20), (3, Decimal("30.5"))])      # v as NEWDECIMAL text
    cur.execute(sql, (4, 40))                                  # LONGLONG again
    cur.execute("SELECT id, v FROM bt_types ORDER BY id")
    assert cur.fetchall() == ((1, Decimal("10.00")), (2, Decimal("20.00")),
                              (3, Decimal("30.50")), (4, Decimal("40.00")))
    conn.rollback()


def test_alternating_types_update_by_one_multi_statement_query(bulk_conn):
    """A text cursor's UPDATE whose column alternates between a float and a Decimal
    (types one bulk command cannot share: 1,000 runs) goes as one multi-statement query
    of the text path's statements, not 1,000 bulk commands (breaker D7), with the text
    path's values and its "stops at the failing row"."""
    conn = bulk_conn
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE alt (id INT PRIMARY KEY, v DECIMAL(30,10))")
    cur.executemany("INSERT INTO alt VALUES (%s, 0)", [(i,) for i in range(1000)])
    rows = [(i / 4 if i % 2 else D(i), i) for i in range(1000)]
    with _Count(conn) as n:
        # 999: the first row sets v = 0, which it already is (changed rows are counted)
        assert cur.executemany("UPDATE alt SET v = %s WHERE id = %s", rows) == 999
    assert n.executes == 0
    cur.execute("SELECT SUM(v) FROM alt")
    assert cur.fetchone()[0] == sum(D(str(i / 4)) if i % 2 else D(i) for i in range(1000))
    bad = [(D(1), 1), (0.5, 2), ("not a number", 3), (D(4), 4), (0.5, 5), (D(6), 6)]
    cur.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES'")
    with pytest.raises(mysqlc.DatabaseError) as info:
        cur.executemany("UPDATE alt SET v = %s WHERE id = %s", bad)   # 6 runs: text
    assert info.value.args[0] == 1366
    cur.execute("SELECT id, v FROM alt WHERE id BETWEEN 1 AND 6 ORDER BY id")
    assert [r[1] for r in cur.fetchall()] == [D(1), D("0.5"), D("0.75"), D(4), D("1.25"),
                                             D(6)]   # rows 1 and 2 applied, then stopped
