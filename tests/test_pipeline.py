"""Connection.pipeline() (issue 21): statements sent without waiting for their answers,
each cursor reading its own result; errors at the sync point; the bound on commands in
flight; pipelining=False; sync and mysqlc.aio (the ``api`` fixture), plain, TLS and
compressed.  See docs/batching.md "Pipelining".

Fault injection (test_cut_at_every_byte_of_a_pipelined_exchange): three pipelined
statements with results cut (tests/_peer.py's FaultProxy) at every byte the server sends
and at every byte the client sends, sync and aio, plain, TLS and compressed."""

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


from test_tls_default import certs, tls_server, tls_test   # noqa: E402,F401 (fixtures)

MODES = {"plain": {}, "tls": {"ssl_mode": "REQUIRED"}, "compress": {"compress": True}}


def _mode_server(request, mode):
    """The session's server, or for TLS the private TLS server of test_tls_default."""
    return request.getfixturevalue("tls_server" if mode == "tls" else "server")


@pytest.mark.parametrize("mode", sorted(MODES))
def test_bound_holds_tls_and_compressed(request, mode):
    """Results far beyond the socket buffers (10,000 x 2 KB) under TLS and compression:
    the client reads while it still sends, so neither side blocks the other."""
    srv = _mode_server(request, mode)
    conn = mysqlc.connect(read_timeout=20, write_timeout=20, **MODES[mode],
                          **srv.connect_kwargs())
    try:
        if mode == "tls":
            assert conn.tls_info() is not None
        curs = [conn.cursor() for _ in range(3)]
        with conn.pipeline() as p:
            for i in range(10000):
                curs[i % 3].execute("SELECT %d, REPEAT('q', 2000)" % i)
                assert len(p) <= _pipeline.MAX_COMMANDS
        # each cursor holds the result of its own last execute
        assert [tuple(c.fetchall()) for c in curs] == [
            ((i, "q" * 2000),) for i in (9999, 9997, 9998)]
        last = conn.cursor()
        with conn.pipeline():
            last.execute("SELECT 42")
        assert last.fetchall() == ((42,),)
    finally:
        conn.close()


# ------------------------------------------------------------------- fault injection

import test_faults as tf   # noqa: E402  (its proxy and helpers, reused)
from _peer import Fault, FaultProxy   # noqa: E402


@pytest.fixture(scope="module")
def _proxies():
    made = {}
    yield made
    for _srv, p in made.values():
        p.close_now()


@pytest.fixture
def mode_proxy(request, _proxies):
    """(server, FaultProxy in front of it) for the test's mode (one proxy per server)."""
    srv = _mode_server(request, request.node.callspec.params["mode"])
    key = (srv.host, srv.port)
    if key not in _proxies:
        _proxies[key] = (srv, FaultProxy(key, arm_on_connect=False))
    return _proxies[key]


@pytest.fixture(scope="module")
def proxy(server):
    p = FaultProxy((server.host, server.port), arm_on_connect=False)
    yield p
    p.close_now()


EXPECTED = [tuple((i, "r%d" % i) for i in range(1, 4)), ((2, "b"),), ((7,),)]


def _three_pipelined(c):
    curs = [c.cursor() for _ in range(3)]
    try:
        with c.pipeline():
            curs[0].execute("SELECT seq, CONCAT('r', seq) FROM seq_1_to_3")
            curs[1].execute("SELECT 2, 'b'")
            curs[2].execute("SELECT 7")
    finally:
        # nothing is reported done that the server did not confirm: a cursor either
        # holds its whole, correct result or raises
        for cur, want in zip(curs, EXPECTED):
            try:
                got = cur.fetchall()
            except (mysqlc.OperationalError, mysqlc.InterfaceError, mysqlc.ProgrammingError):
                continue
            assert tuple(got) == want


@pytest.mark.parametrize("mode", sorted(MODES))
def test_cut_at_every_byte_of_a_pipelined_exchange(mode_proxy, mode, api):
    """Three pipelined statements with results, cut at EVERY byte of the server's answers
    and at EVERY byte the client sends (its three commands), on both APIs and in every
    mode: each case ends in OperationalError/InterfaceError within tf.DEADLINE with the
    connection closed, and a cursor that reports a result holds the whole, right one
    (``_three_pipelined``).  An aio case's private loop is stopped when the case ends
    (tf._release), so the thousand cases hold no loops or descriptors."""
    server, proxy = mode_proxy
    kw = MODES[mode]
    seen = {"s2c": 0, "c2s": 0, "not reached": 0}
    for direction in ("s2c", "c2s"):
        n = tf._measure(server, proxy, _three_pipelined, direction=direction, **kw)
        for at in range(0, n, tf.STRIDE):
            if tf._run_case(server, proxy, Fault(direction, at, "cut"), _three_pipelined,
                            **kw) is None:
                seen["not reached"] += 1      # compressed only (see tf._run_case)
        seen[direction] = n
    print("\npipeline cuts %s %s: %s" % (api, mode, seen))
    assert seen["s2c"] > 300 and seen["c2s"] > 100, seen
    tf._check_server_still_fine(server)


def test_stall_names_pipelining_false(server, proxy):
    """A proxy that stalls on pipelined commands: an error within the read timeout that
    names pipelining=False, no hang."""
    n = tf._measure(server, proxy, _three_pipelined)
    exc = tf._run_case(server, proxy, Fault("s2c", n // 2, "stall"), _three_pipelined)
    assert "pipelining=False" in str(exc)


# ------------------------------------------------------------------- interrupts

@pytest.mark.sync_only("a native asyncio test (the cancellation of an await)")
def test_aio_cancel_during_a_sync_point(server):
    """A cancelled fetch in a pipeline: the running statement is stopped (KILL QUERY),
    the queued ones still ran, and the connection is usable or closed -- never out of
    step."""
    import asyncio
    import time

    import mysqlc.aio

    async def main():
        conn = await mysqlc.aio.connect(**server.connect_kwargs())
        try:
            a, b, c = conn.cursor(), conn.cursor(), conn.cursor()
            t0 = time.monotonic()
            async with conn.pipeline():
                await a.execute("SELECT SLEEP(20)")
                await b.execute("SELECT 2")
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(b.fetchall(), 0.5)
                assert time.monotonic() - t0 < 8
                if not conn.closed:
                    await c.execute("SELECT 3")
            if conn.closed:
                return "closed"
            # SLEEP was stopped (its cursor holds the 1317 the server sent), the queued
            # statement after it ran
            with pytest.raises(mysqlc.OperationalError) as info:
                await a.fetchall()
            assert info.value.args[0] == 1317
            assert await b.fetchall() == ((2,),)
            assert await c.fetchall() == ((3,),)
            await a.execute("SELECT 4")
            assert await a.fetchall() == ((4,),)
            return "drained"
        finally:
            conn.close()

    assert asyncio.run(main()) in ("drained", "closed")


@pytest.mark.sync_only("sync Ctrl-C (SIGINT in the main thread)")
def test_sync_interrupt_closes_the_connection(conn_kwargs):
    """Ctrl-C while a pipelined response is read: the running statement is stopped and
    the connection closed; the cursors whose answers were not read raise."""
    import signal
    import threading

    conn = mysqlc.connect(**conn_kwargs)
    a, b = conn.cursor(), conn.cursor()
    timer = threading.Timer(0.5, lambda: signal.pthread_kill(threading.main_thread().ident,
                                                             signal.SIGINT))
    try:
        with pytest.raises(KeyboardInterrupt):
            with conn.pipeline():
                a.execute("SELECT SLEEP(20)")
                b.execute("SELECT 2")
                timer.start()
                a.fetchall()
        assert not conn.open
        with pytest.raises(mysqlc.OperationalError):
            b.fetchall()
    finally:
        timer.cancel()
        conn.close()


def test_command_of_several_packets_in_flight(conn):
    """A statement over 16 MiB (several packets: its response's sequence ids start after
    them) between two queued ones, text and prepared."""
    big = "b" * ((16 << 20) + 100)
    a, b, c = conn.cursor(), conn.cursor(), conn.cursor(prepared=True)
    c.execute("SELECT LENGTH(%s)", ("x",))     # prepared outside the block
    with conn.pipeline():
        a.execute("SELECT 1")
        b.execute("SELECT LENGTH('%s')" % big)
        c.execute("SELECT LENGTH(%s)", (big,))
        a2 = conn.cursor()
        a2.execute("SELECT 2")
    assert a.fetchall() == ((1,),)
    assert b.fetchall() == ((len(big),),)
    assert c.fetchall() == ((len(big),),)
    assert a2.fetchall() == ((2,),)


def test_close_inside_the_block(conn_kwargs):
    conn = mysqlc.connect(**conn_kwargs)
    cur = conn.cursor()
    with conn.pipeline():
        cur.execute("SELECT 1")
        conn.close()
    with pytest.raises(mysqlc.OperationalError, match="not read|lost"):
        cur.fetchall()


def test_exception_in_the_block_keeps_the_connection_in_step(conn):
    cur = conn.cursor()
    with pytest.raises(ValueError):
        with conn.pipeline():
            cur.execute("SELECT 1")
            raise ValueError("the block's own error")
    assert cur.fetchall() == ((1,),)
    cur.execute("SELECT 2")
    assert cur.fetchall() == ((2,),)


def test_escaping_while_a_mode_change_is_queued(conn):
    """A queued SET sql_mode whose answer is unread: the tracked mode is the old one, so
    the values after it are not escaped for it (an escaping that trusted it would store
    'back\\slash' wrongly under NO_BACKSLASH_ESCAPES)."""
    _setup(conn)
    cur = conn.cursor()
    values = ["back\\slash", "it's", "\\'; DROP TABLE pl_t; -- ", "tail\\"]
    try:
        with conn.pipeline():
            cur.execute("SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
            assert sync_obj(conn)._escape_mode() is None      # uncertain while queued
            for i, v in enumerate(values):
                cur.execute("INSERT INTO pl_t VALUES (%s, %s)", (i, v))
        cur.execute("SELECT v FROM pl_t ORDER BY id")
        assert [r[0] for r in cur.fetchall()] == values
    finally:
        cur.execute("SET sql_mode = REPLACE(@@sql_mode, 'NO_BACKSLASH_ESCAPES', '')")
        conn.rollback()


def test_prepared_statements_interleaved_keep_their_metadata(conn):
    """Executes of three prepared statements queued alternately, each response read
    with its own statement's column definitions: MariaDB's metadata cache
    (MARIADB_CLIENT_CACHE_METADATA) skips them once the client has them, and the
    engine's queue entry says which statement a response belongs to.  Before the
    engine kept that per entry, every response was read as the last-sent statement's:
    2027 "skipped column definitions the client does not have" (different column
    counts) or "binary row has more values than columns" (same count, other types)."""
    shapes = [
        ("SELECT CAST(%s AS SIGNED) + 1", lambda i: (i,), lambda i: (i + 1,)),
        ("SELECT CONCAT('abcdefgh', %s)", lambda i: (str(i),), lambda i: ("abcdefgh%d" % i,)),
        ("SELECT %s * 2e0, 'k', CAST(%s AS SIGNED) - 1", lambda i: (i, i),
         lambda i: (i * 2.0, "k", i - 1)),
    ]
    for sql, args, want in shapes:   # prepared, their metadata known to both sides
        cur = conn.cursor(prepared=True)
        cur.execute(sql, args(0))
        assert cur.fetchall() == (want(0),)
    queued = []
    with conn.pipeline() as p:
        for i in range(1, 31):
            for sql, args, want in shapes:
                cur = conn.cursor(prepared=True)
                assert cur.execute(sql, args(i)) == -1
                queued.append((cur, want(i)))
        assert len(p) == 90
    for cur, want in queued:
        assert cur.fetchall() == (want,)


@pytest.mark.sync_only(reason="drives the core's queue directly (mysqlc._core)")
def test_engine_owns_the_queue(conn):
    """The engine's queue of pipelined responses: the owner given with each command is
    its head in order, read_response() reads the head's response, the bound on
    commands in flight is the engine's (a command past it is refused before anything
    is sent), and pipe_drop() refuses while responses are still to be read."""
    core = conn._conn
    core.pipe_max_commands = 3
    try:
        owners = [object() for _ in range(3)]
        for i, owner in enumerate(owners):
            assert core.pipe_room(10)
            core.send_query(b"SELECT %d" % i, owner=owner)
        assert core.pipe_pending == 3 and not core.pipe_room(10)
        with pytest.raises(mysqlc.ProgrammingError, match="pipe_max_commands"):
            core.send_query(b"SELECT 99", owner=object())
        assert core.pipe_pending == 3                    # nothing was queued or sent
        with pytest.raises(mysqlc.ProgrammingError, match="still to be read"):
            core.pipe_drop()
        with pytest.raises(mysqlc.ProgrammingError, match="out of sync"):
            core.query(b"SELECT 1")                       # not behind the queued ones
        for i, owner in enumerate(owners):
            assert core.pipe_head is owner
            assert core.read_response() == 1
            assert core.fetch(-1) == [(i,)]
        assert core.pipe_head is None and core.pipe_pending == 0 and core.pipe_bytes == 0
        with pytest.raises(mysqlc.ProgrammingError, match="no pipelined command"):
            core.read_response()
        core.pipe_max_bytes = 40   # the byte bound: the first command always goes
        core.send_query(b"SELECT '" + b"x" * 30 + b"'", owner=owners[0])
        assert core.pipe_bytes > 30 and not core.pipe_room(20) and core.pipe_room(0) is False
        assert core.read_response() == 1 and core.fetch(-1) == [("x" * 30,)]
        assert core.pipe_room(1000)
    finally:
        core.pipe_max_commands = _pipeline.MAX_COMMANDS
        core.pipe_max_bytes = _pipeline.MAX_BYTES


@pytest.mark.sync_only(reason="kills the connection from a second sync connection")
def test_lost_connection_hands_back_the_queue(conn, conn_kwargs):
    """The server ends the connection with statements queued: the engine's queue is
    handed back (pipe_drop) and every cursor whose answer was not read raises 2013
    "may or may not have run"; nothing is reported as done."""
    killer = mysqlc.connect(**conn_kwargs)
    try:
        cur = conn.cursor()
        cur.execute("SELECT CONNECTION_ID()")
        (cid,), = cur.fetchall()
        first = conn.cursor()
        rest = [conn.cursor() for _ in range(5)]
        with pytest.raises(mysqlc.OperationalError) as info:
            with conn.pipeline() as p:
                first.execute("SELECT SLEEP(0.5)")
                for c in rest:
                    c.execute("SELECT 1")
                killer.cursor().execute("KILL %d" % cid)
        assert info.value.args[0] in (2013, 1927, 2006)
        assert conn._conn.pipe_pending == 0 and conn._conn.pipe_head is None
        assert conn._conn.pipe_drop() == []
        for c in rest:
            with pytest.raises(mysqlc.OperationalError, match="may or may not have run"):
                c.fetchall()
        assert len(p.errors) == 6
    finally:
        killer.close()


@pytest.mark.sync_only(reason="drives the core's queue directly (mysqlc._core)")
def test_statement_close_waits_for_its_queued_response(conn):
    """COM_STMT_CLOSE has no reply, but closing a statement forgets its column
    definitions, which a queued response of it may need (MariaDB's metadata cache):
    the engine refuses it (2014, nothing sent or forgotten) while pipelined responses
    are queued, and the queued response is still read right."""
    core = conn._conn
    sid, _np, _nc = core.stmt_prepare(b"SELECT CAST(? AS SIGNED) * 3, 'abc'")
    core.stmt_execute(sid, (1,))
    assert core.fetch(-1) == [(3, "abc")]    # the metadata now known to both sides
    owner = object()
    core.stmt_execute(sid, (5,), send_only=True, owner=owner)
    with pytest.raises(mysqlc.ProgrammingError, match="out of sync"):
        core.stmt_close(sid)
    assert core.pipe_head is owner
    assert core.read_response() == 2
    assert core.fetch(-1) == [(15, "abc")]
    core.stmt_close(sid)                               # now it goes
    cur = conn.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)
