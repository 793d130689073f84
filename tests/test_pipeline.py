"""Connection.pipeline() (issue 21): statements sent without waiting for their answers,
each cursor reading its own result; errors at the sync point; the bound on commands in
flight; pipelining=False; sync and mysqlc.aio (the ``api`` fixture), plain, TLS and
compressed.  See docs/batching.md "Pipelining"."""

import pytest

import mysqlc
from mysqlc import _pipeline

from _apis import sync_obj

pytestmark = pytest.mark.both_apis


def _setup(conn, table="pl_t"):
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS %s" % table)
    cur.execute("CREATE TABLE %s (id INT PRIMARY KEY, v VARCHAR(200))" % table)
    conn.commit()
    return cur


def test_cursors_hold_their_own_results(conn):
    _setup(conn)
    a, b, c = conn.cursor(), conn.cursor(), conn.cursor(mysqlc.cursors.DictCursor)
    with conn.pipeline() as p:
        assert a.execute("INSERT INTO pl_t VALUES (1, 'x'), (2, 'y')") == -1
        assert b.execute("SELECT id, v FROM pl_t ORDER BY id") == -1
        assert c.execute("SELECT COUNT(*) AS n FROM pl_t") == -1
        assert len(p) == 3
        # b's fetch reads a's response first, then its own
        assert b.fetchall() == ((1, "x"), (2, "y"))
        assert a.rowcount == 2
        assert len(p) == 1
    assert c.fetchall() == ({"n": 2},)
    assert b.description[0][0] == "id"
    conn.commit()


def test_error_at_sync_point_later_statements_ran(conn):
    _setup(conn)
    a, b, c = conn.cursor(), conn.cursor(), conn.cursor()
    with pytest.raises(mysqlc.ProgrammingError) as info:
        with conn.pipeline():
            a.execute("INSERT INTO pl_t VALUES (1, 'x')")
            b.execute("SELECT * FROM no_such_table_pl")
            c.execute("INSERT INTO pl_t VALUES (2, 'y')")
    assert info.value.args[0] == 1146
    errors = info.value.pipeline_errors
    assert [(i, cur) for i, cur, _ in errors] == [(1, sync_obj(b))]
    # the statement after the failed one ran (the server runs every command it got)
    assert c.rowcount == 1
    with pytest.raises(mysqlc.ProgrammingError):
        b.fetchall()     # its own error again
    check = conn.cursor()
    check.execute("SELECT id FROM pl_t ORDER BY id")
    assert check.fetchall() == ((1,), (2,))
    conn.rollback()


def test_commit_is_a_sync_point(conn):
    _setup(conn)
    a, b = conn.cursor(), conn.cursor()
    conn.autocommit(False)
    with conn.pipeline():
        a.execute("INSERT INTO pl_t VALUES (1, 'x')")
        b.execute("INSERT INTO pl_t VALUES (1, 'dup')")
        with pytest.raises(mysqlc.IntegrityError):
            conn.commit()        # raised before COMMIT is sent
        conn.rollback()
    check = conn.cursor()
    check.execute("SELECT COUNT(*) FROM pl_t")
    assert check.fetchone() == (0,)


def test_same_values_as_one_at_a_time(conn):
    _setup(conn)
    values = ["plain", "it's", "back\\slash", "\u00e9\u4e2d", "", "x" * 150]
    cur = conn.cursor()
    with conn.pipeline():
        for i, v in enumerate(values):
            cur.execute("INSERT INTO pl_t VALUES (%s, %s)", (i, v))
        cur.execute("SET @pl_x = 1")       # may change the mode: later ones portable
        for i, v in enumerate(values):
            cur.execute("INSERT INTO pl_t VALUES (%s, %s)", (100 + i, v))
    cur.execute("SELECT v FROM pl_t ORDER BY id")
    got = [r[0] for r in cur.fetchall()]
    assert got == values + values
    conn.rollback()


def test_prepared_cursor(conn):
    _setup(conn)
    cur = conn.cursor(prepared=True)
    sel = conn.cursor(prepared=True)
    cur.execute("INSERT INTO pl_t VALUES (%s, %s)", (0, "first"))   # prepared here
    with conn.pipeline():
        for i in range(1, 50):
            cur.execute("INSERT INTO pl_t VALUES (%s, %s)", (i, "v%d" % i))
        sel.execute("SELECT id, v FROM pl_t WHERE id = %s", (7,))   # prepare: a sync point
        assert sel.fetchall() == ((7, "v7"),)
        sel.execute("SELECT id, v FROM pl_t WHERE id = %s", (9,))
    assert sel.fetchall() == ((9, "v9"),)
    sel.execute("SELECT COUNT(*) FROM pl_t")
    assert sel.fetchone() == (50,)
    conn.rollback()


def test_many_statements_bounded_in_flight(conn):
    """10,000 queued statements whose results exceed the socket buffers: no deadlock,
    at most MAX_COMMANDS in flight."""
    cur = conn.cursor()
    big = "REPEAT('z', 2000)"
    seen = []
    with conn.pipeline() as p:
        for i in range(10000):
            cur.execute("SELECT %d, %s" % (i, big))
            seen.append(len(p))
    assert max(seen) <= _pipeline.MAX_COMMANDS
    assert cur.fetchall() == ((9999, "z" * 2000),)


def test_callproc_and_multi_results(conn):
    cur = conn.cursor()
    cur.execute("DROP PROCEDURE IF EXISTS pl_proc")
    cur.execute("CREATE PROCEDURE pl_proc(IN x INT) BEGIN SELECT x; SELECT x + 1; END")
    other = conn.cursor()
    with conn.pipeline():
        cur.callproc("pl_proc", (5,))
        other.execute("SELECT 1; SELECT 2")
    assert cur.fetchall() == ((5,),)
    assert cur.nextset() and cur.fetchall() == ((6,),)
    assert cur.nextset()        # the CALL's own final result
    assert not cur.nextset()
    assert other.fetchall() == ((1,),)
    assert other.nextset() and other.fetchall() == ((2,),)
    assert not other.nextset()


def test_load_data_local_refused(conn_kwargs, tmp_path):
    conn = mysqlc.connect(local_infile=True, **conn_kwargs)
    try:
        _setup(conn)
        cur = conn.cursor()
        with conn.pipeline():
            cur.execute("SELECT 1")
            with pytest.raises(mysqlc.ProgrammingError, match="pipeline"):
                cur.execute("LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE pl_t")
            with pytest.raises(mysqlc.ProgrammingError, match="pipeline"):
                cur.execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE pl_t", infile=b"1\tx\n")
        assert cur.fetchall() == ((1,),)
    finally:
        conn.close()


def test_pipelining_false_same_results(conn_kwargs):
    conn = mysqlc.connect(pipelining=False, **conn_kwargs)
    try:
        _setup(conn)
        a, b = conn.cursor(), conn.cursor()
        with conn.pipeline():
            assert a.execute("INSERT INTO pl_t VALUES (1, 'x')") == 1   # ran at once
            b.execute("SELECT v FROM pl_t")
            assert conn._conn.pipe_pending == 0
        assert b.fetchall() == (("x",),)
        assert conn._one_trip is False
        conn.rollback()
    finally:
        conn.close()


def test_pipelining_from_dsn_and_option_file(server, tmp_path):
    kw = server.connect_kwargs()
    from mysqlc._dsn import parse_dsn
    assert parse_dsn("mysql://u@h/db?pipelining=false")["pipelining"] is False
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nloose-pipelining=0\n")
    from mysqlc import _optionfile
    assert _optionfile.connect_options(str(cnf), "client") == {"pipelining": False}
    conn = mysqlc.connect(read_default_file=str(cnf), **kw)
    try:
        assert conn._pipelining is False
    finally:
        conn.close()


def test_other_commands_sync_first(conn):
    cur = conn.cursor()
    with conn.pipeline() as p:
        cur.execute("SELECT 1")
        conn.ping()
        assert len(p) == 0
        assert cur.fetchall() == ((1,),)
        with pytest.raises(mysqlc.ProgrammingError, match="already"):
            with conn.pipeline():
                pass
