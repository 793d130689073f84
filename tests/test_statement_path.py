"""One statement in one core call (src/statement.c, issue 22).

Sync: ``Connection.query_result(sql)`` is query() + store() in one call, and the buffered
cursors take their results through it.  asyncio: a buffered cursor's ``execute()`` is
driven from the event loop (``send_query_nowait`` + ``take_result``, mysqlc/aio/
_statement.py) with no greenlet switch; what cannot go that way falls back to the
greenlet and gives the same results.  The shared scenarios (errors, timeouts,
cancellation, faults, TLS, compression, LOCAL INFILE) run through both APIs elsewhere;
here: that the path is taken, results and errors equal the sync API's, large results,
a stream that ends mid-statement, and the core methods' misuse.
"""

import asyncio
import gc
import time
from decimal import Decimal

import greenlet
import pytest

import mysqlc
import mysqlc.aio
from _helpers import kill_connection
from mysqlc.aio import cursors as acur
from mysqlc.constants import FIELD_TYPE

try:
    import uvloop
except ImportError:   # pragma: no cover - uvloop is in tests/requirements.txt
    uvloop = None


@pytest.fixture(params=["asyncio", "uvloop"])
def run(request):
    if request.param == "uvloop":
        if uvloop is None:
            pytest.fail("uvloop is not installed (tests/requirements.txt)")
        factory = uvloop.new_event_loop
    else:
        factory = asyncio.new_event_loop

    def runner(fn, *args):
        async def bounded():
            async with asyncio.timeout(60):
                return await fn(*args)
        loop = factory()
        try:
            return loop.run_until_complete(bounded())
        finally:
            loop.close()
    return runner


class _Switches:
    """Counts switches into the greenlets of the given connections (greenlet.settrace)
    while active (a collected greenlet of an earlier test, killed by a throw, does not
    count)."""

    def __init__(self, *conns):
        self.count = 0
        self._targets = [c._worker._g for c in conns]

    def __enter__(self):
        def trace(event, args):
            if event in ("switch", "throw") and any(args[1] is g for g in self._targets):
                self.count += 1
        self._old = greenlet.settrace(trace)
        return self

    def __exit__(self, *exc):
        greenlet.settrace(self._old)


STATEMENTS = [
    ("SELECT 1", None),
    ("SELECT %s, %s, %s", (1, "a'b\\c", None)),
    ("SELECT seq, CONCAT('r', seq), seq * 1.5 FROM seq_1_to_300", None),
    ("INSERT INTO sp_t (v) VALUES (%s)", ("one",)),
    ("INSERT INTO sp_t (v) VALUES (%s), (%s)", ("two", "three")),
    ("UPDATE sp_t SET v = CONCAT(v, '!') WHERE id > %s", (1,)),
    ("DELETE FROM sp_t WHERE v = %s", ("three!",)),
    ("SELECT id, v FROM sp_t ORDER BY id", None),
    ("SELECT 1 FROM seq_1_to_10 WHERE 1 = 0", None),
    ("DO 1", None),
]


def _attrs(cur):
    return (cur.rowcount, cur.lastrowid, cur.description, cur.description_flags,
            cur.warning_count, cur.rownumber)


def _sync_results(conn_kwargs):
    c = mysqlc.connect(**conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE sp_t (id INT AUTO_INCREMENT PRIMARY KEY, "
                    "v VARCHAR(20))")
        out = []
        for sql, args in STATEMENTS:
            cur.execute(sql, args)
            out.append((_attrs(cur), cur.fetchall()))
        return out
    finally:
        c.close()


def test_sync_cursor_results_equal_the_two_call_path(conn_kwargs):
    """query_result() (one call) gives what query() + store() give (the cursor's
    attributes and rows), for result sets, OK packets and errors."""
    c = mysqlc.connect(**conn_kwargs)
    try:
        fast, slow = c.cursor(), c.cursor()
        slow._one_call = False
        assert fast._one_call and not c.cursor(mysqlc.cursors.DictCursor)._one_call
        for cur in (fast, slow):
            cur.execute("CREATE TEMPORARY TABLE IF NOT EXISTS sp_t (id INT AUTO_INCREMENT "
                        "PRIMARY KEY, v VARCHAR(20))")
            cur.execute("TRUNCATE sp_t")
        got = {}
        for name, cur in (("fast", fast), ("slow", slow)):
            cur.execute("TRUNCATE sp_t")
            res = []
            for sql, args in STATEMENTS:
                cur.execute(sql, args)
                res.append((_attrs(cur), cur.fetchall()))
            with pytest.raises(mysqlc.ProgrammingError) as ei:
                cur.execute("SELECT * FROM no_such_table")
            res.append((ei.value.args[0], _attrs(cur), c.errno()))
            cur.execute("SELECT 2")
            res.append(cur.fetchall())
            got[name] = res
        assert got["fast"] == got["slow"]
        assert got["fast"][2][1][-1][:2] == (300, "r300")
    finally:
        c.close()


def test_core_methods_misuse(conn_kwargs):
    c = mysqlc.connect(**conn_kwargs)
    core = c._conn
    try:
        rows, desc, flags, n, lastrowid, warnings = core.query_result(b"SELECT 1 AS x")
        assert list(rows) == [(1,)] and desc[0][0] == "x" and n == 1 and lastrowid == 0
        assert core.query_result(b"DO 1") == ((), None, None, 0, 0, 0)
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            core.take_result()
        assert ei.value.args[0] == 2014
        with pytest.raises(TypeError):
            core.query_result(b"SELECT 1", keys=["x"])
        with pytest.raises(mysqlc.ProgrammingError) as ei:   # the server's ERR
            core.query_result(b"SELECT * FROM no_such_table")
        assert ei.value.args[0] == 1146
        assert not core.take_pending
        # the blocking transport can send without waiting too; take_result(wait=True)
        # then reads as query_result does
        assert core.send_query_nowait(b"SELECT 5") is True
        assert core.take_pending
        with pytest.raises(mysqlc.ProgrammingError) as ei:   # one statement at a time
            core.query_result(b"SELECT 6")
        assert ei.value.args[0] == 2014
        assert list(core.take_result(None, True)[0]) == [(5,)]
        assert not core.take_pending
        assert list(core.query_result(b"SELECT 7")[0]) == [(7,)]
    finally:
        c.close()


def test_aio_execute_switches_no_greenlet(run, conn_kwargs):
    """A buffered cursor's execute() (text protocol, parameters whose escaping needs no
    round trip) runs without one greenlet switch, with the sync API's results."""
    expected = _sync_results(conn_kwargs)

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            await cur.execute("CREATE TEMPORARY TABLE sp_t (id INT AUTO_INCREMENT PRIMARY "
                              "KEY, v VARCHAR(20))")
            await cur.execute("SELECT 1")   # the escaping mode confirmed by now
            got = []
            with _Switches(conn) as sw:
                for sql, args in STATEMENTS:
                    await cur.execute(sql, args)
                    got.append((_attrs(cur), await cur.fetchall()))
                with pytest.raises(mysqlc.ProgrammingError) as ei:
                    await cur.execute("SELECT * FROM no_such_table")
                assert ei.value.args[0] == 1146 and conn.errno() == 1146
                await cur.execute("SELECT 2")
                assert await cur.fetchall() == ((2,),)
            assert sw.count == 0
            assert got == expected
            # what does not take the path still works, through the greenlet
            with _Switches(conn) as sw:
                pcur = conn.cursor(prepared=True)
                await pcur.execute("SELECT ? AS a", (1,))
                assert await pcur.fetchall() == ((1,),)
            assert sw.count > 0
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_kept_statement_bytes_follow_the_charset(run, conn_kwargs):
    """The bytes of a parameterless statement, kept between executes (mysqlc/aio/
    _statement.py ``_PLAIN_SQL``), are those of the connection's charset at each
    execute: after ``set_character_set()`` and after ``SET NAMES`` sent as SQL, the same
    text is sent in the new encoding; a text that may change the escaping mode (a
    ``CALL``, a multi-statement text) is not kept."""
    from mysqlc.aio import _statement

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            q = "SELECT HEX('\u00e9')"
            for want in ("C3A9", "C3A9"):            # the second from the kept bytes
                await cur.execute(q)
                assert (await cur.fetchall())[0][0] == want
            assert _statement._PLAIN_SQL[q] == ("utf-8", q.encode("utf-8"))
            await conn.set_character_set("latin1")
            await cur.execute(q)
            assert (await cur.fetchall())[0][0] == "E9"
            await cur.execute("SET NAMES utf8mb4")
            await cur.execute(q)
            assert (await cur.fetchall())[0][0] == "C3A9"
            await cur.execute("SET NAMES latin1")
            await cur.execute(q)
            assert (await cur.fetchall())[0][0] == "E9"
            # never kept: a statement that may change sql_mode unreported, a text of
            # several statements
            await cur.execute("DO 1; DO 2")
            assert "DO 1; DO 2" not in _statement._PLAIN_SQL
            with pytest.raises(mysqlc.OperationalError):   # 1305, as mysqlclient maps it
                await cur.execute("CALL no_such_procedure_sp()")
            assert "CALL no_such_procedure_sp()" not in _statement._PLAIN_SQL
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_large_result_and_converters(run, conn_kwargs):
    """Rows arrive over many wake-ups (reading held at the transport's high-water mark
    between them) and are kept as they come; a user converter runs in the task, and its
    error leaves the connection usable."""
    seen = []

    def decode_long(value):
        seen.append(value)
        if value == b"13":
            raise ValueError("thirteen")
        return int(value)

    conv = dict(mysqlc.converters.conversions)
    conv[FIELD_TYPE.LONGLONG] = decode_long

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        conv_conn = await mysqlc.aio.connect(conv=conv, **conn_kwargs)
        try:
            cur = conn.cursor()
            with _Switches(conn) as sw:
                n = await cur.execute("SELECT seq, REPEAT('x', 2000) FROM seq_1_to_6000")
                rows = await cur.fetchall()
            assert sw.count == 0
            assert n == 6000 and len(rows) == 6000 and rows[-1] == (6000, "x" * 2000)
            ccur = conv_conn.cursor()
            await ccur.execute("SELECT CAST(seq AS SIGNED) FROM seq_1_to_5")
            assert await ccur.fetchall() == tuple((i,) for i in range(1, 6))
            with pytest.raises(ValueError, match="thirteen"):
                await ccur.execute("SELECT CAST(seq AS SIGNED) FROM seq_1_to_20")
            await ccur.execute("SELECT CAST(2 AS SIGNED)")
            assert await ccur.fetchall() == ((2,),)
        finally:
            await conn.ensure_closed()
            await conv_conn.ensure_closed()
    run(body)


def test_aio_stream_ends_mid_statement(run, conn_kwargs, root_conn_kwargs):
    """The server ends the connection while the statement runs: the lost connection's
    2013, then the closed connection's error -- never "commands out of sync"."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        tid = conn.thread_id()
        cur = conn.cursor()
        task = asyncio.ensure_future(cur.execute("SELECT SLEEP(5)"))
        await asyncio.sleep(0.3)
        killer = mysqlc.connect(**root_conn_kwargs)
        try:
            killer.cursor().execute("KILL CONNECTION %d" % tid)
        finally:
            killer.close()
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            await task
        assert ei.value.args[0] in (2013, 1927), ei.value.args
        assert time.monotonic() - t0 < 3
        with pytest.raises(mysqlc.Error) as ei:
            await conn.cursor().execute("SELECT 1")
        assert ei.value.args[0] != 2014
        conn.close()
    run(body)


def test_aio_two_tasks_one_connection(run, conn_kwargs):
    """The engine-driven path keeps "one await at a time per connection"."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            first = asyncio.ensure_future(conn.cursor().execute("SELECT SLEEP(0.3)"))
            await asyncio.sleep(0.05)
            with pytest.raises(mysqlc.ProgrammingError, match="another operation"):
                await conn.cursor().execute("SELECT 1")
            assert await first == 1
            cur = conn.cursor()
            await cur.execute("SELECT 3")
            assert await cur.fetchall() == ((3,),)
        finally:
            await conn.ensure_closed()
    run(body)


def test_repeated_heads_reuse_and_differ(conn_kwargs):
    """The head cache (results.c): a result whose column definitions repeat the last
    one's reuses its description; any byte that differs (name, type, length, charset),
    use_unicode or the converters changing, builds them anew."""
    c = mysqlc.connect(**conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT 1 AS x, 'a' AS y")
        first = cur.description
        cur.execute("SELECT 2 AS x, 'b' AS y")
        assert cur.description is first and cur.fetchall() == ((2, "b"),)
        for sql, want, name in (("SELECT 2 AS z, 'b' AS y", (2, "b"), "z"),
                                ("SELECT '2' AS x, 'b' AS y", ("2", "b"), "x"),
                                ("SELECT 2.5 AS x, 'b' AS y", (Decimal("2.5"), "b"), "x"),
                                ("SELECT 1 AS x, 'a' AS y", (1, "a"), "x")):
            cur.execute(sql)
            assert cur.fetchall() == (want,) and cur.description[0][0] == name
        c._conn.use_unicode = False
        cur.execute("SELECT 1 AS x, 'a' AS y")
        assert cur.fetchall() == ((1, b"a"),)
        c._conn.use_unicode = True
        cur.execute("SELECT 1 AS x, 'a' AS y")
        assert cur.fetchall() == ((1, "a"),)
        conv = lambda b: "conv:" + b.decode()  # noqa: E731
        c._conn.converters = {FIELD_TYPE.LONG: conv, FIELD_TYPE.LONGLONG: conv}
        cur.execute("SELECT 1 AS x, 'a' AS y")
        assert cur.fetchall() == (("conv:1", "a"),)
        c._conn.converters = None
        cur.execute("SELECT 1 AS x, 'a' AS y")
        assert cur.fetchall() == ((1, "a"),)
    finally:
        c.close()


def test_aio_transactions_switch_no_greenlet(run, conn_kwargs):
    """commit() / rollback() / begin() take the same engine-driven path."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            await cur.execute("CREATE TEMPORARY TABLE sp_tx (n INT) ENGINE=InnoDB")
            with _Switches(conn) as sw:
                await conn.begin()
                await cur.execute("INSERT INTO sp_tx VALUES (1)")
                await conn.rollback()
                await cur.execute("SELECT COUNT(*) FROM sp_tx")
                assert await cur.fetchall() == ((0,),)
                await conn.begin()
                await cur.execute("INSERT INTO sp_tx VALUES (2)")
                assert conn.get_transaction_status()
                await conn.commit()
                assert not conn.get_transaction_status()
            assert sw.count == 0
            other = await mysqlc.aio.connect(**conn_kwargs)
            try:
                await other.commit()   # nothing to commit: fine
            finally:
                await other.ensure_closed()
            await cur.execute("SELECT n FROM sp_tx")
            assert await cur.fetchall() == ((2,),)
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_ping_switches_no_greenlet(run, conn_kwargs, root_conn_kwargs):
    """ping() takes the engine-driven path (COM_PING sent with send_ping_nowait); a ping
    of a connection the server ended raises as the sync ping does (2006 / 2013), and
    ping(reconnect=True) opens a new one."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            with _Switches(conn) as sw:
                for _ in range(3):
                    assert await conn.ping() is None
                await cur.execute("SELECT 7")
                assert await cur.fetchall() == ((7,),)
                await conn.ping()
            assert sw.count == 0
            # behind an unbuffered cursor's unread rows: the sync ping's answer (2014,
            # from the greenlet), and the connection in step afterwards
            ss = conn.cursor(acur.SSCursor)
            await ss.execute("SELECT seq FROM seq_1_to_1000")
            with pytest.raises(mysqlc.ProgrammingError) as info:
                await conn.ping()
            assert info.value.args[0] == 2014
            await ss.close()
            await conn.ping()
            await cur.execute("SELECT 8")
            assert await cur.fetchall() == ((8,),)
            tid = conn.thread_id()
            killer = mysqlc.connect(**root_conn_kwargs)
            try:
                kill_connection(killer, tid)
            finally:
                killer.close()
            await asyncio.sleep(0.2)   # the end of the stream reaches the reader
            with pytest.raises(mysqlc.OperationalError) as info:
                await conn.ping()
            assert info.value.args[0] in (2006, 2013)
            await conn.ping(reconnect=True)   # closed: a new connection
            assert conn.thread_id() != tid
            await cur.execute("SELECT 9")
            assert await cur.fetchall() == ((9,),)
        finally:
            conn.close()
    run(body)


def test_aio_statement_of_several_packets(run, conn_kwargs):
    """A statement of 16 MiB or more is written packet by packet, each write waiting for
    the transport: it goes through the greenlet (send_query_nowait says so), every time
    (it failed every other time with "used outside its event loop task")."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            await cur.execute("SELECT LENGTH(%s)", ("a" * 2000,))   # max_allowed_packet known
            assert await cur.fetchall() == ((2000,),)
            for n in (16 * 1024 * 1024, 17 * 1024 * 1024, 16 * 1024 * 1024 - 40):
                await cur.execute("SELECT LENGTH(%s)", ("b" * n,))
                assert await cur.fetchall() == ((n,),)
            with _Switches(conn) as sw:
                await cur.execute("SELECT 1")
            assert sw.count == 0
        finally:
            await conn.ensure_closed()
    run(body)


@pytest.mark.parametrize("rows,size", [(16, 1 << 20), (40, 420000), (2, 9 << 20)])
def test_one_trip_prepare_of_a_command_of_several_packets(conn_kwargs, rows, size):
    """MariaDB's one-trip prepare followed by a COM_STMT_BULK_EXECUTE (the first
    executemany of a statement) or a COM_STMT_EXECUTE (a prepared cursor's first execute)
    of 16 MiB or more: the second response follows the command's last packet (its
    sequence id is 2 or more), not 1 -- the connection used to be lost."""
    c = mysqlc.connect(autocommit=True, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE sp_big (id INT AUTO_INCREMENT PRIMARY KEY, "
                    "b LONGBLOB)")
        cur.executemany("INSERT INTO sp_big (b) VALUES (%s)", [(b"q" * size,)] * rows)
        assert cur.rowcount == rows
        cur.execute("SELECT COUNT(*), SUM(LENGTH(b)) FROM sp_big")
        assert cur.fetchall() == ((rows, rows * size),)
        pcur = c.cursor(prepared=True)
        pcur.execute("SELECT LENGTH(?) + 0 * %d" % size, (b"z" * (17 << 20),))
        assert pcur.fetchall()[0][0] == 17 << 20
        cur.execute("SELECT 3")
        assert cur.fetchall() == ((3,),)
    finally:
        c.close()


# ------------------------------------------------------------- format_statement
# Connection.format_statement (src/encode.c mc_encode_format_cached): format_query()
# with the options positional, kept by the core between calls and read again when any
# of their objects differs.  A stale cache would write a value escaped for the wrong
# sql_mode or charset: each step compares with format_query() of the same options.

def _fmt_cases():
    text = "it's a \\ back\nslash \u00e9"
    blob = b"\x00'\\\x5c\xff"
    return [
        (False, "utf8mb4", "utf-8", None, False, (text, blob, 1.5, None)),
        (True, "utf8mb4", "utf-8", None, False, (text, blob, 1.5, None)),    # NBE on
        (False, "latin1", "latin-1", None, False, ("caf\u00e9 \\ '", blob)),  # charset
        (False, "gbk", "gbk", None, True, ("\u4e2d\u6587\\'", blob)),         # mb, prefix
        (False, "".join(["utf8", "mb4"]), "utf-8", None, False, (text,)),     # equal, not same
        (False, "utf8mb4", "utf-8", {}, False, (text,)),                      # empty encoders
    ]


def test_format_statement_equals_format_query_as_options_change():
    core = mysqlc._core.Connection()
    for nbe, cs, enc, encoders, bp, args in _fmt_cases() * 2:
        query = b"SELECT " + b", ".join([b"%s"] * len(args))
        want = mysqlc._core.format_query(query, args, no_backslash_escapes=nbe, charset=cs,
                                         encoding=enc, encoders=encoders, binary_prefix=bp)
        got = core.format_statement(query, args, nbe, cs, enc, encoders, bp)
        assert got == want, (nbe, cs, args)
    # the same dict object filled in place after a call: its encoder is used
    class Point:
        pass

    encoders = {}
    with pytest.raises(mysqlc.ProgrammingError):
        core.format_statement(b"%s", (Point(),), False, "utf8mb4", "utf-8", encoders, False)
    encoders[Point] = lambda v: b"POINT(1, 2)"
    assert core.format_statement(b"%s", (Point(),), False, "utf8mb4", "utf-8", encoders,
                                 False) == b"POINT(1, 2)"
    del encoders[Point]
    with pytest.raises(mysqlc.ProgrammingError):
        core.format_statement(b"%s", (Point(),), False, "utf8mb4", "utf-8", encoders, False)


def test_format_statement_reentered_by_an_encoder_with_other_options():
    """An encoder that formats on the same connection with other options (replacing the
    kept ones) does not change the outer call's escaping."""
    core = mysqlc._core.Connection()

    class Inner:
        pass

    def enc(v):   # formats with NO_BACKSLASH_ESCAPES, latin1: the cache is re-read
        return core.format_statement(b"%s", ("a\\b",), True, "latin1", "latin-1", None,
                                     False)

    encoders = {Inner: enc}
    got = core.format_statement(b"%s, %s, %s", ("x\\y", Inner(), "p'q"), False, "utf8mb4",
                                "utf-8", encoders, False)
    assert got == b"'x\\\\y', 'a\\b', 'p\\'q'"


def test_format_statement_misuse():
    core = mysqlc._core.Connection()
    with pytest.raises(TypeError, match="7 positional arguments"):
        core.format_statement(b"%s", (1,))
    with pytest.raises(TypeError, match="query must be bytes"):
        core.format_statement("%s", (1,), False, "utf8mb4", "utf-8", None, False)
    with pytest.raises(TypeError, match="encoders must be a dict"):
        core.format_statement(b"%s", (1,), False, "utf8mb4", "utf-8", [], False)
    with pytest.raises(mysqlc.ProgrammingError, match="wrong number of parameters"):
        core.format_statement(b"%s %s", (1,), False, "utf8mb4", "utf-8", None, False)
    # after an error the next call with good options works
    assert core.format_statement(b"%s", (1,), False, "utf8mb4", "utf-8", None,
                                 False) == b"1"
    assert core.format_statement(b"x", None, False, "utf8mb4", "utf-8", None, False) == b"x"


def test_cursor_formats_for_the_current_mode(conn_kwargs):
    """The statement path's formatting follows the session: the same execute() before
    and after SET sql_mode=NO_BACKSLASH_ESCAPES (the kept options re-read) stores the
    same value."""
    with mysqlc.connect(**conn_kwargs, autocommit=True) as conn:
        cur = conn.cursor()
        value = "a\\'b\\\\c"
        cur.execute("SELECT %s", (value,))
        assert cur.fetchall() == ((value,),)
        assert cur._executed == b"SELECT 'a\\\\\\'b\\\\\\\\c'"
        cur.execute("SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
        cur.execute("SELECT %s", (value,))
        assert cur.fetchall() == ((value,),)
        assert cur._executed == b"SELECT 'a\\''b\\\\c'"
        cur.execute("SET sql_mode = REPLACE(@@sql_mode, 'NO_BACKSLASH_ESCAPES', '')")
        cur.execute("SELECT %s", (value,))
        assert cur.fetchall() == ((value,),)
        assert cur._executed == b"SELECT 'a\\\\\\'b\\\\\\\\c'"


def test_format_statement_reentered_while_options_are_read():
    """A truth value whose __bool__ formats on the same connection while the options are
    read: the outer call keeps its own options (encoders=None: a custom type refused)."""
    core = mysqlc._core.Connection()

    class Foo:
        pass

    inner = {Foo: lambda v: b"'HIJACK'"}

    class Flag:
        def __bool__(self):
            core.format_statement(b"%s", (1,), False, "sjis", "shift_jis", inner, False)
            return False

    with pytest.raises(mysqlc.ProgrammingError):
        core.format_statement(b"SELECT %s", (Foo(),), Flag(), None, None, None, False)


def test_copied_cursor_reads_its_further_results(conn_kwargs):
    """copy.copy of a cursor is its own owner of the connection's results."""
    import copy
    with mysqlc.connect(**conn_kwargs) as conn:
        b = copy.copy(conn.cursor())
        b.execute("SELECT 1; SELECT 2")
        assert b.fetchall() == ((1,),)
        assert b.nextset() is True
        assert b.fetchall() == ((2,),)


def test_aio_execute_is_a_coroutine(run, conn_kwargs):
    """``cursor.execute()`` gives a coroutine in asyncio's sense (``_core.AioCall``, src/
    aio_call.c): asyncio.iscoroutine, create_task and gather take it; nothing is sent
    before it is first awaited; a closed one is not started; it refuses a non-None first
    send and a second await, as an ``async def``'s coroutine does; the method still reads
    as a coroutine function with the sync signature."""
    import inspect

    assert inspect.iscoroutinefunction(acur.Cursor.execute)
    assert list(inspect.signature(acur.Cursor.execute).parameters)[1:3] == ["query", "args"]

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            assert inspect.iscoroutinefunction(cur.execute)
            c = cur.execute("INSERT INTO no_such_table VALUES (1)")
            assert asyncio.iscoroutine(c)
            c.close()                                   # never started: nothing sent
            del c
            never = cur.execute("DO SLEEP(5)")          # dropped without an await
            with pytest.warns(RuntimeWarning, match="never awaited"):
                del never
                gc.collect()
            t0 = time.monotonic()
            assert await cur.execute("SELECT %s", (7,)) == 1
            assert await cur.fetchall() == ((7,),)
            assert time.monotonic() - t0 < 2
            c = cur.execute("SELECT 1")
            with pytest.raises(TypeError):
                c.send(1)
            assert await c == 1
            with pytest.raises(RuntimeError):
                await c
            task = asyncio.create_task(cur.execute("SELECT %s, %s", (1, "a")))
            assert await task == 1 and await cur.fetchall() == ((1, "a"),)
            other = conn.cursor()
            # two statements at once on one connection: the second is refused as before
            res = await asyncio.gather(cur.execute("SELECT SLEEP(0.2)"),
                                       other.execute("SELECT 2"), return_exceptions=True)
            assert res[0] == 1 and isinstance(res[1], mysqlc.ProgrammingError), res
            assert await cur.fetchall() == ((0,),)
            await other.execute("SELECT 3")
            assert await other.fetchall() == ((3,),)
        finally:
            await conn.ensure_closed()
    run(body)


def _interrupt_close(coro):
    coro.close()


def _interrupt_throw(exc):
    def interrupt(coro):
        with pytest.raises(RuntimeError if exc is StopIteration else exc):
            coro.throw(exc())
    return interrupt


async def _interrupted_leaves_it_gone(conn, coro, interrupt, next_command):
    """`coro` started (its command sent, the answer awaited), then `interrupt`ed: the
    connection's lock is free and `next_command()` raises 2006, not "out of sync"."""
    coro.send(None)
    interrupt(coro)
    lock = conn.sync._lock
    assert lock.acquire(False)
    lock.release()
    with pytest.raises(mysqlc.OperationalError) as ei:
        await next_command()
    assert ei.value.args[0] == 2006


@pytest.mark.parametrize("interrupt", [_interrupt_close, _interrupt_throw(ValueError),
                                       _interrupt_throw(GeneratorExit),
                                       _interrupt_throw(KeyboardInterrupt),
                                       _interrupt_throw(StopIteration)],
                         ids=["close", "ValueError", "GeneratorExit", "KeyboardInterrupt",
                              "StopIteration"])
def test_aio_execute_interrupted_while_waiting_does_not_desync(run, conn_kwargs, interrupt):
    """A statement's coroutine closed while it awaits the response (GeneratorExit: a
    dropped task's coroutine, never to be resumed), or given any exception but
    CancelledError there (which KILLs the statement and drains), leaves no connection
    out of sync: the stream is closed and the next command says the connection is gone
    (2006), on the C path (a kept text with parameters) and on the Python one, and the
    lock is free.  A StopIteration thrown in comes out as RuntimeError (PEP 479), not as
    the coroutine's return."""
    from mysqlc.aio import _statement

    q = "SELECT SLEEP(%s), 5"

    async def body():
        for start in (lambda cur: cur.execute(q, (0.3,)),
                      lambda cur: _statement._execute_py(cur, q, (0.3,))):
            conn = await mysqlc.aio.connect(**conn_kwargs)
            try:
                cur = conn.cursor()
                await cur.execute("SELECT 1")
                await cur.execute(q, (0,))   # the text kept: the C path's from here on
                await cur.execute(q, (0,))
                await _interrupted_leaves_it_gone(conn, start(cur), interrupt,
                                                  lambda: cur.execute("SELECT 2"))
            finally:
                conn.close()
    run(body)


def test_aio_execute_kept_templates_follow_mode_and_charset(run, conn_kwargs):
    """A parameterized statement's template bytes, kept between executes (``_PARAM_SQL``,
    formatted in src/aio_call.c's path by ``_begin``), are written for the session's
    escaping mode and charset at each execute: values with quotes and backslashes read
    back as sent before and after NO_BACKSLASH_ESCAPES is set, and after
    ``set_character_set('latin1')`` the same text goes in latin1; all without a
    greenlet switch once the text is kept."""
    from mysqlc.aio import _statement

    q = "SELECT %s, HEX(%s), HEX('\u00e9')"
    values = ["it's", "back\\slash", "q\"uote\\'", "\u00e9t\u00e9"]

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            await cur.execute("SELECT 1")
            await cur.execute(q, ("x", "x"))           # kept from here on
            assert _statement._PARAM_SQL[q] == ("utf-8", q.encode("utf-8"))
            for mode_sql in (None, "SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"):
                if mode_sql:
                    await cur.execute(mode_sql)
                    await cur.execute("SELECT 1")      # the mode confirmed by now
                with _Switches(conn) as sw:
                    for v in values:
                        await cur.execute(q, (v, v))
                        row = (await cur.fetchall())[0]
                        assert row[0] == v
                        assert row[1] == v.encode("utf-8").hex().upper()
                        assert row[2] == "C3A9"
                assert sw.count == 0, mode_sql
            await conn.set_character_set("latin1")
            await cur.execute(q, ("\u00e9", "\u00e9"))
            assert await cur.fetchall() == (("\u00e9", "E9", "E9"),)
            await cur.execute(q, ("\u00e9", "\u00e9"))   # the latin1 template, kept
            assert await cur.fetchall() == (("\u00e9", "E9", "E9"),)
            assert _statement._PARAM_SQL[q][0] == "latin-1" or \
                _statement._PARAM_SQL[q][0] == conn.encoding
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_parameters_while_the_mode_is_uncertain(run, conn_kwargs):
    """After a statement that leaves the escaping mode uncertain (a CALL:
    ``Connection._note_statement``), a statement whose values read the same in both
    modes is written in the awaiting task (no greenlet switch, as the sync ``_format``
    writes it then: no round trip); one with a backslash goes to the greenlet, whose
    ``_format`` confirms the mode first -- never as a hex literal, which some statements
    (CREATE USER ... IDENTIFIED BY) refuse.  The values read back as sent."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            await cur.execute("DROP PROCEDURE IF EXISTS sp_doubt")
            await cur.execute("CREATE PROCEDURE sp_doubt() BEGIN SELECT 1; END")
            await cur.execute("CALL sp_doubt()")
            while await cur.nextset():
                pass
            assert conn.sync._escape_mode() is None     # uncertain now
            with _Switches(conn) as sw:
                for v in ("plain", "it's", "\u00e9"):
                    await cur.execute("SELECT %s, %s", (v, 1))
                    assert await cur.fetchall() == ((v, 1),)
            assert sw.count == 0
            assert conn.sync._escape_mode() is None     # still: nothing asked
            with _Switches(conn) as sw:
                await cur.execute("SELECT %s", ("back\\slash",))
                assert await cur.fetchall() == (("back\\slash",),)
            assert sw.count > 0                          # confirmed in the greenlet
            assert b"X'" not in cur._executed
            assert conn.sync._escape_mode() is not None
            await cur.execute("DROP PROCEDURE sp_doubt")
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_connection_calls_are_c_coroutines(run, conn_kwargs):
    """``commit()``, ``rollback()``, ``begin()`` and ``ping()`` give ``_core.AioCall``
    coroutines (src/aio_call.c, K_CALL) with no Python coroutine on their path: the
    methods read as coroutine functions with the sync signatures, wrong arguments raise
    TypeError at the call, a dropped call warns with the method's name, and
    ``ping(reconnect=...)`` takes the argument as the sync ping does."""
    import inspect

    from mysqlc import _core

    C = mysqlc.aio.Connection
    for name in ("commit", "rollback", "begin", "ping"):
        assert inspect.iscoroutinefunction(getattr(C, name)), name
    assert list(inspect.signature(C.ping).parameters) == ["self", "reconnect"]
    assert list(inspect.signature(C.commit).parameters) == ["self"]

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            c = conn.commit()
            assert type(c) is _core.AioCall and asyncio.iscoroutine(c)
            assert c.__qualname__ == "Connection.commit"
            c.close()
            never = conn.rollback()
            with pytest.warns(RuntimeWarning, match="Connection.rollback' was never"):
                del never
                gc.collect()
            for bad in (lambda: conn.commit(1), lambda: conn.ping(1, 2),
                        lambda: conn.ping(foo=1), lambda: conn.ping(True, reconnect=True),
                        lambda: conn.begin(reconnect=False)):
                with pytest.raises(TypeError):
                    bad()
            with _Switches(conn) as sw:
                assert await conn.ping(False) is None
                assert await conn.ping(reconnect=False) is None
                assert await conn.ping(0) is None
                assert await asyncio.create_task(conn.commit()) is None
            assert sw.count == 0
            tid = conn.thread_id()
            await conn.ping(True)    # alive: nothing to do, in the greenlet
            await conn.ping(reconnect=1)
            assert conn.thread_id() == tid
        finally:
            await conn.ensure_closed()
    run(body)


@pytest.mark.parametrize("call", ["commit", "ping"])
@pytest.mark.parametrize("interrupt", [_interrupt_close, _interrupt_throw(ValueError),
                                       _interrupt_throw(StopIteration)],
                         ids=["close", "ValueError", "StopIteration"])
def test_aio_connection_call_interrupted_while_waiting(run, conn_kwargs, call, interrupt):
    """A connection call's coroutine closed, or given an exception other than
    CancelledError, while it awaits the answer: the stream is closed, the lock free, and
    the next command raises 2006 (never "out of sync")."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            await conn.ping()
            await _interrupted_leaves_it_gone(conn, getattr(conn, call)(), interrupt,
                                              conn.ping)
        finally:
            conn.close()
    run(body)


def test_aio_connection_call_cancelled_while_waiting(run, conn_kwargs):
    """A ``commit()`` or ``ping()`` task cancelled while it awaits its answer raises
    CancelledError, and the connection is in step afterwards (the answer read: the
    cancellation path of a statement, KILL QUERY included)."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor()
            for call in ("commit", "ping", "rollback"):
                task = asyncio.create_task(getattr(conn, call)())
                await asyncio.sleep(0)    # the task sent the command and waits
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                await cur.execute("SELECT %s", (call,))
                assert await cur.fetchall() == ((call,),)
                await conn.ping()
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_waiter_wakes_tasks_and_hands_callbacks_itself(run, conn_kwargs):
    """The stream's waiter (``_core.AioWaiter``) resumes a task that awaits it through
    the task's own wake-up -- given a done future in place of the waiter, which the
    wake-up reads only for an exception (src/aio_stream.c ``is_task_wakeup``) -- and
    hands every other done callback the waiter itself, with its result (the stream's
    status, 0: bytes arrived); the response then reads as usual."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            core = conn.sync._conn
            proto = conn.sync._proto
            for callback_first in (True, False):
                assert core.send_ping_nowait() is True
                fut = proto.wait_future()
                seen = []

                def cb(f):
                    seen.append((f is fut, f.result()))
                if callback_first:
                    fut.add_done_callback(cb)
                waiting = asyncio.create_task(asyncio.wait({fut}))
                task = asyncio.create_task(_await(fut))
                if not callback_first:
                    fut.add_done_callback(cb)
                assert await task == 0
                await waiting
                assert seen == [(True, 0)]
                r = core.take_result()
                while r is None:
                    await proto.wait_future()
                    r = core.take_result()
            await conn.ping()
        finally:
            await conn.ensure_closed()
    run(body)


async def _await(fut):
    return await fut


def test_aio_ready_knows_the_running_loop(run, conn_kwargs):
    """``_core._aio_ready(core, stream, track_seq, loop)`` -- the engine-driven path's
    test, which reads the thread's running loop without asyncio's getpid() call (src/
    aio_call.c ``on_running_loop``) -- agrees with ``asyncio.get_running_loop()``: True
    on the connection's own loop, False for another loop, in a thread with no running
    loop, and in a process forked from the loop's (where asyncio finds no running loop
    either)."""
    import os
    import threading

    from mysqlc import _core

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            core = conn.sync._conn
            proto = conn.sync._proto
            loop = asyncio.get_running_loop()
            seq = core.session_track_seq
            assert _core._aio_ready(core, proto, None, loop) is True
            assert _core._aio_ready(core, proto, seq, loop) is True
            assert _core._aio_ready(core, proto, seq + 1, loop) is False
            other = asyncio.new_event_loop()
            try:
                assert _core._aio_ready(core, proto, None, other) is False
            finally:
                other.close()
            seen = []
            t = threading.Thread(target=lambda: seen.append(
                _core._aio_ready(core, proto, None, loop)))
            t.start()
            t.join()
            assert seen == [False]

            def in_other_loop():
                async def inner():
                    return (_core._aio_ready(core, proto, None, loop),
                            _core._aio_ready(core, proto, None,
                                             asyncio.get_running_loop()))
                seen.append(asyncio.run(inner()))
            t = threading.Thread(target=in_other_loop)
            t.start()
            t.join()
            # that thread's own running loop is the running one there (the core's state is
            # all the rest of the test, and it is idle)
            assert seen[-1] == (False, True)
            pid = os.fork()
            if pid == 0:   # the child: no running loop for asyncio, none for _aio_ready
                try:
                    asyncio.get_running_loop()
                    code = 3
                except RuntimeError:
                    code = 0 if _core._aio_ready(core, proto, None, loop) is False else 1
                os._exit(code)
            _, status = os.waitpid(pid, 0)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
            await conn.ping()
        finally:
            await conn.ensure_closed()
    run(body)


# ------------------------------------------------- unbuffered cursors from the event loop

#: a result whose first 2,000 rows come at once and whose last ones slowly (the server
#: flushes its buffer when full: a fetch then waits mid-result)
_SLOW_TAIL = ("SELECT seq, IF(seq > 2000, SLEEP(%s), 0), REPEAT('x', 100) "
              "FROM seq_1_to_2010")


def _sync_unbuffered(conn_kwargs, dict_rows):
    """What the sync unbuffered cursor gives for the steps of _unbuffered_steps."""
    c = mysqlc.connect(**conn_kwargs)
    try:
        cur = c.cursor(mysqlc.cursors.SSDictCursor if dict_rows else mysqlc.cursors.SSCursor)
        return _unbuffered_steps_sync(cur)
    finally:
        c.close()


def _unbuffered_steps_sync(cur):
    out = []
    cur.execute("SELECT seq, CONCAT('r', seq) FROM seq_1_to_3000")
    out.append(("head", cur.rowcount, cur.description, cur.rownumber))
    out.append(("one", cur.fetchone(), cur.rownumber))
    out.append(("many", cur.fetchmany(5), cur.rownumber))
    cur.scroll(1000)
    out.append(("iter", [r for _, r in zip(range(10), cur)], cur.rownumber))
    out.append(("all", len(cur.fetchall()), cur.rowcount, cur.rownumber))
    cur.execute("SELECT %s, %s", (7, "a'b"))
    out.append(("args", cur.fetchall(), cur.rowcount))
    cur.execute("DO 1")
    out.append(("ok", cur.rowcount, cur.description, cur.fetchall()))
    try:
        cur.execute("SELECT * FROM no_such_table")
    except mysqlc.Error as exc:
        out.append(("err", type(exc).__name__, exc.args[0]))
    # an error after 4,999 rows: fetchmany returns the rows before it, the next raises
    cur.execute("SELECT seq, IF(seq = 5000, (SELECT seq UNION SELECT seq + 1), seq) "
                "FROM seq_1_to_6000")
    got = 0
    try:
        while True:
            rows = cur.fetchmany(3000)
            if not rows:
                break
            got += len(rows)
    except mysqlc.Error as exc:
        out.append(("mid", got, exc.args[0]))
    cur.execute("SELECT 3")
    out.append(("after", cur.fetchall()))
    return out


async def _unbuffered_steps(cur):
    out = []
    await cur.execute("SELECT seq, CONCAT('r', seq) FROM seq_1_to_3000")
    out.append(("head", cur.rowcount, cur.description, cur.rownumber))
    out.append(("one", await cur.fetchone(), cur.rownumber))
    out.append(("many", await cur.fetchmany(5), cur.rownumber))
    await cur.scroll(1000)
    rows = []
    async for r in cur:
        rows.append(r)
        if len(rows) == 10:
            break
    out.append(("iter", rows, cur.rownumber))
    out.append(("all", len(await cur.fetchall()), cur.rowcount, cur.rownumber))
    await cur.execute("SELECT %s, %s", (7, "a'b"))
    out.append(("args", await cur.fetchall(), cur.rowcount))
    await cur.execute("DO 1")
    out.append(("ok", cur.rowcount, cur.description, await cur.fetchall()))
    try:
        await cur.execute("SELECT * FROM no_such_table")
    except mysqlc.Error as exc:
        out.append(("err", type(exc).__name__, exc.args[0]))
    await cur.execute("SELECT seq, IF(seq = 5000, (SELECT seq UNION SELECT seq + 1), seq) "
                      "FROM seq_1_to_6000")
    got = 0
    try:
        while True:
            rows = await cur.fetchmany(3000)
            if not rows:
                break
            got += len(rows)
    except mysqlc.Error as exc:
        out.append(("mid", got, exc.args[0]))
    await cur.execute("SELECT 3")
    out.append(("after", await cur.fetchall()))
    return out


@pytest.mark.parametrize("dict_rows", [False, True], ids=["tuples", "dicts"])
def test_aio_unbuffered_switches_no_greenlet(run, conn_kwargs, dict_rows):
    """An unbuffered cursor's execute() (``take_head()``: the rows left for the
    fetches), fetchone(), fetchmany(), fetchall(), scroll() and ``async for`` run
    without one greenlet switch, waiting on the event loop where rows have not arrived,
    with the sync SSCursor's rows, attributes and errors (an error mid-result raised
    after the rows before it)."""
    expected = _sync_unbuffered(conn_kwargs, dict_rows)

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor(acur.SSDictCursor if dict_rows else acur.SSCursor)
            await cur.execute("SELECT 1")   # the escaping mode confirmed by now
            await cur.fetchall()
            with _Switches(conn) as sw:
                got = await _unbuffered_steps(cur)
            assert sw.count == 0
            assert got == expected
            assert [s[0] for s in got] == ["head", "one", "many", "iter", "all", "args",
                                           "ok", "err", "mid", "after"]
            # a prepared unbuffered cursor still takes the greenlet, with the same rows
            with _Switches(conn) as sw:
                pcur = conn.cursor(acur.SSCursor, prepared=True)
                await pcur.execute("SELECT seq FROM seq_1_to_5 WHERE seq > ?", (2,))
                assert await pcur.fetchall() == [(3,), (4,), (5,)]
                await pcur.close()
            assert sw.count > 0
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_unbuffered_rows_larger_than_the_read_pause(run, conn_kwargs):
    """Rows above the stream's 1 MiB read pause (src/aio_stream.c AIO_HIGH_WATER) and
    many small rows: every row arrives whole, in order, whatever the fetch."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor(acur.SSCursor)
            await cur.execute("SELECT seq, REPEAT(CHAR(64 + seq USING ascii), 3 << 20) "
                              "FROM seq_1_to_6")
            first = await cur.fetchone()
            assert first[0] == 1 and first[1] == "A" * (3 << 20)
            rest = [r async for r in cur]
            assert [r[0] for r in rest] == [2, 3, 4, 5, 6]
            assert all(r[1] == chr(64 + r[0]) * (3 << 20) for r in rest)
            assert cur.rowcount == 6
            await cur.execute("SELECT seq, REPEAT('y', 200) FROM seq_1_to_200000")
            n = 0
            while rows := await cur.fetchmany(7777):
                n += len(rows)
            assert n == 200000 and cur.rowcount == 200000
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_unbuffered_fetch_cancelled_while_waiting(run, conn_kwargs, root_conn_kwargs):
    """A fetch that waits for rows mid-result, cancelled: KILL QUERY, the rest drained,
    CancelledError; the connection and the cursor usable and nothing left running."""
    from test_aio import _running_statements

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            for how in ("fetchall", "fetchmany", "fetchone", "async for"):
                cur = conn.cursor(acur.SSCursor)
                await cur.execute(_SLOW_TAIL % 3)
                head = await cur.fetchmany(1500)
                assert len(head) == 1500

                async def read():
                    if how == "fetchall":
                        return await cur.fetchall()
                    if how == "fetchmany":
                        return await cur.fetchmany(10000)
                    if how == "fetchone":
                        while await cur.fetchone() is not None:
                            pass
                        return None
                    return [r async for r in cur]
                with _Switches(conn) as sw:   # the fetch waits on the event loop
                    task = asyncio.ensure_future(read())
                    await asyncio.sleep(0.5)
                assert sw.count == 0 and not task.done(), how
                t0 = time.monotonic()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                assert time.monotonic() - t0 < 5, how
                assert not conn.closed, how
                assert _running_statements(root_conn_kwargs, conn.thread_id()) == [], how
                await cur.execute("SELECT %s", (how,))
                assert await cur.fetchall() == [(how,)]
                await cur.close()
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_unbuffered_read_timeout_and_lost_connection(run, conn_kwargs,
                                                         root_conn_kwargs):
    """A fetch past the read timeout raises the sync path's 2013 (its KILL QUERY); a
    connection killed while a fetch waits raises 2013 too, then the closed
    connection's error -- never "commands out of sync" -- and the rows before are kept
    for a fetchmany() that defers."""
    async def body():
        conn = await mysqlc.aio.connect(read_timeout=1, **conn_kwargs)
        cur = conn.cursor(acur.SSCursor)
        await cur.execute(_SLOW_TAIL % 3)
        assert len(await cur.fetchmany(1000)) == 1000
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            await cur.fetchall()
        assert ei.value.args[0] == 2013, ei.value.args
        assert 0.8 < time.monotonic() - t0 < 3.5
        with pytest.raises(mysqlc.Error) as ei:
            await conn.cursor().execute("SELECT 1")
        assert ei.value.args[0] != 2014
        conn.close()

        conn = await mysqlc.aio.connect(**conn_kwargs)
        cur = conn.cursor(acur.SSCursor)
        await cur.execute(_SLOW_TAIL % 5)
        assert len(await cur.fetchmany(1000)) == 1000
        task = asyncio.ensure_future(cur.fetchmany(1500))
        await asyncio.sleep(0.5)
        killer = mysqlc.connect(**root_conn_kwargs)
        try:
            killer.cursor().execute("KILL CONNECTION %d" % conn.thread_id())
        finally:
            killer.close()
        rows = await task    # the rows that came before the end, the error deferred
        assert 0 < len(rows) <= 1000 and rows[0][0] == 1001
        with pytest.raises(mysqlc.OperationalError) as ei:
            await cur.fetchmany(1500)
        assert ei.value.args[0] in (2013, 1927), ei.value.args
        with pytest.raises(mysqlc.Error) as ei:
            await conn.cursor().execute("SELECT 1")
        assert ei.value.args[0] != 2014
        conn.close()
    run(body)


def test_take_head_misuse(conn_kwargs):
    """take_head(): 2014 without a statement sent; with the blocking transport,
    take_head(wait=True) reads the head as query() does and leaves the rows for
    fetch(); an ERR raises and leaves nothing pending."""
    c = mysqlc.connect(**conn_kwargs)
    core = c._conn
    try:
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            core.take_head()
        assert ei.value.args[0] == 2014
        with pytest.raises(TypeError):
            core.take_head(True, True)
        assert core.send_query_nowait(b"SELECT seq FROM seq_1_to_3") is True
        assert core.take_head(True) == 1
        assert not core.take_pending and core.rows_pending
        assert core.fetch(-1) == [(1,), (2,), (3,)]
        assert core.send_query_nowait(b"DO 1") is True
        assert core.take_head(wait=True) == 0 and not core.unread
        assert core.send_query_nowait(b"SELECT * FROM no_such_table") is True
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            core.take_head(True)
        assert ei.value.args[0] == 1146
        assert not core.take_pending and not core.unread
        assert list(core.query_result(b"SELECT 7")[0]) == [(7,)]
    finally:
        c.close()


def test_aio_kill_failing_after_the_budget_is_not_logged(run, conn_kwargs, monkeypatch):
    """A cancelled statement whose KILL QUERY fails only after the cancellation gave up
    waiting for it (the connection closed by then): the failure is the abort's, and the
    event loop logs no "Future exception was never retrieved" for it."""
    import mysqlc.aio._statement as st
    monkeypatch.setattr(st, "CANCEL_BUDGET", 0.4)

    def slow_failing_kill(self, thread_id, timeout=2.0):
        time.sleep(0.8)
        raise mysqlc.OperationalError(2003, "the side connection failed (test)")
    monkeypatch.setattr(mysqlc.connections.Connection, "_kill_query_side",
                        slow_failing_kill)

    async def body():
        seen = []
        asyncio.get_running_loop().set_exception_handler(lambda lp, ctx: seen.append(ctx))
        conn = await mysqlc.aio.connect(**conn_kwargs)
        task = asyncio.ensure_future(conn.cursor().execute("SELECT SLEEP(3)"))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert conn.closed   # the statement did not end within the budget
        await asyncio.sleep(1.0)   # the KILL fails meanwhile
        gc.collect()
        await asyncio.sleep(0.05)
        assert [c.get("message") for c in seen] == []
        conn.close()
    run(body)


# ---------------------------------------- buffered classes that read results their own way

class _UpperKeys(mysqlc.cursors.DictCursor):
    """A sync subclass with keys of its own (``_row_keys``): still mysqlc's
    ``_read_result``, so its shell takes the event loop's path."""

    def _row_keys(self, core):
        return tuple(k.upper() for k in super()._row_keys(core))


class _OwnRead(mysqlc.cursors.Cursor):
    """A sync subclass whose ``_read_result`` is not mysqlc's: it may read the socket
    itself, so its shell runs in the greenlet."""

    def _read_result(self, core, field_count):
        super()._read_result(core, field_count)
        self.seen = field_count


def _dict_steps_sync(conn_kwargs, cls):
    c = mysqlc.connect(**conn_kwargs)
    try:
        cur = c.cursor(cls)
        out = []
        for sql, args in DICT_STATEMENTS:
            try:
                cur.execute(sql, args)
            except mysqlc.Error as exc:
                out.append(("err", type(exc).__name__, exc.args[0]))
                continue
            out.append((_attrs(cur), cur.fetchall()))
        return out
    finally:
        c.close()


DICT_STATEMENTS = [
    ("SELECT 1 AS a, 2 AS a, NULL AS b", None),
    ("SELECT %s AS x, %s AS y", ("a'b", 2.5)),
    ("SELECT seq, CONCAT('r', seq) AS s, seq / 7 AS d FROM seq_1_to_5000", None),
    ("DO 1", None),
    ("SELECT * FROM no_such_table", None),
    ("SELECT 1 FROM seq_1_to_10 WHERE 1 = 0", None),
]


@pytest.mark.parametrize("cls", [mysqlc.cursors.DictCursor, _UpperKeys],
                         ids=["DictCursor", "own-keys"])
def test_aio_dict_cursor_switches_no_greenlet(run, conn_kwargs, cls):
    """A buffered cursor whose class reads results its own way -- a dict cursor, a sync
    subclass with its own keys -- takes execute() from the event loop (``take_head()``
    then ``take_rows(keys)``, the sync ``_read_result`` given the rows: ``_taken``), with
    the sync API's rows, attributes and errors; a class whose ``_read_result`` is not
    mysqlc's still runs in the greenlet, with the same results."""
    expected = _dict_steps_sync(conn_kwargs, cls)

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            cur = conn.cursor(cls)
            await cur.execute("SELECT 1")   # the escaping mode confirmed by now
            got = []
            with _Switches(conn) as sw:
                for sql, args in DICT_STATEMENTS:
                    try:
                        await cur.execute(sql, args)
                    except mysqlc.Error as exc:
                        got.append(("err", type(exc).__name__, exc.args[0]))
                        continue
                    got.append((_attrs(cur), await cur.fetchall()))
            assert sw.count == 0
            assert got == expected
            with _Switches(conn) as sw:
                own = conn.cursor(_OwnRead)
                await own.execute("SELECT 7")
                assert await own.fetchall() == ((7,),) and own.sync.seen == 1
            assert sw.count > 0
        finally:
            await conn.ensure_closed()
    run(body)


def test_aio_dict_cursor_large_result_timeout_and_cancel(run, conn_kwargs,
                                                         root_conn_kwargs):
    """The rows of a dict cursor's result taken from the event loop: a result of many
    packets, a converter that runs Python code (rows decoded as they come), a read
    timeout while the rows come (2013, as the sync path), a cancellation (KILL QUERY,
    the connection usable)."""
    from test_aio import _running_statements

    async def body():
        conv = dict(mysqlc.converters.conversions)
        conv[FIELD_TYPE.LONGLONG] = lambda b: int(b) * 10
        conn = await mysqlc.aio.connect(conv=conv, **conn_kwargs)
        try:
            cur = conn.cursor(acur.DictCursor)
            with _Switches(conn) as sw:
                await cur.execute("SELECT seq, REPEAT('q', 300) AS r FROM seq_1_to_30000")
                rows = await cur.fetchall()
            assert sw.count == 0
            assert len(rows) == 30000 and rows[-1] == {"seq": 300000, "r": "q" * 300}
            task = asyncio.ensure_future(cur.execute(_SLOW_TAIL % 3))
            await asyncio.sleep(0.5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert not conn.closed
            assert _running_statements(root_conn_kwargs, conn.thread_id()) == []
            await cur.execute("SELECT %s AS t", ("after",))
            assert await cur.fetchall() == ({"t": "after"},)
        finally:
            await conn.ensure_closed()
        conn = await mysqlc.aio.connect(read_timeout=1, **conn_kwargs)
        cur = conn.cursor(acur.DictCursor)
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            await cur.execute(_SLOW_TAIL % 3)
        assert ei.value.args[0] == 2013 and time.monotonic() - t0 < 3.5
        with pytest.raises(mysqlc.Error) as ei:
            await conn.cursor().execute("SELECT 1")
        assert ei.value.args[0] != 2014
        conn.close()
    run(body)


def test_take_rows_misuse(conn_kwargs):
    """take_rows(): only after a take_head() that read a result set's head (2014
    otherwise), keys one per column; with the blocking transport the rows come as
    query_result() gives them."""
    c = mysqlc.connect(**conn_kwargs)
    core = c._conn
    try:
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            core.take_rows()
        assert ei.value.args[0] == 2014
        assert core.send_query_nowait(b"DO 1") is True
        assert core.take_head(True) == 0
        with pytest.raises(mysqlc.ProgrammingError):
            core.take_rows()
        assert core.send_query_nowait(b"SELECT seq AS n FROM seq_1_to_3") is True
        assert core.take_head(True) == 1
        with pytest.raises(TypeError):
            core.take_rows(("a", "b"))
        r = core.take_rows(("n",))
        while r is None:
            r = core.take_result(("n",), True)
        assert list(r[0]) == [{"n": 1}, {"n": 2}, {"n": 3}] and r[3] == 3
        assert not core.take_pending and not core.unread
        assert list(core.query_result(b"SELECT 7")[0]) == [(7,)]
    finally:
        c.close()


def test_aio_fetch_after_rows_lost_raises_for_every_read(run, conn_kwargs):
    """Rows lost to a read timeout mid-result, read by iteration (sync ``for`` and
    ``async for``): the iteration raises 2013, and every later fetch raises the lost
    rows' error (2006) -- never ``[]``, which would read as the end of the result --
    whether the error came with rows of its batch (deferred) or between two batches."""
    def sync_case():
        c = mysqlc.connect(read_timeout=1, **conn_kwargs)
        cur = c.cursor(mysqlc.cursors.SSCursor)
        cur.execute(_SLOW_TAIL % 3)
        n = 0
        with pytest.raises(mysqlc.OperationalError) as ei:
            for _ in cur:
                n += 1
        assert ei.value.args[0] == 2013 and 0 < n <= 2000
        for _ in range(2):
            with pytest.raises(mysqlc.OperationalError) as ei:
                cur.fetchmany(10)
            assert ei.value.args[0] == 2006
        c.close()
    sync_case()

    async def body():
        conn = await mysqlc.aio.connect(read_timeout=1, **conn_kwargs)
        cur = conn.cursor(acur.SSCursor)
        await cur.execute(_SLOW_TAIL % 3)
        n = 0
        with pytest.raises(mysqlc.OperationalError) as ei:
            async for _ in cur:
                n += 1
        assert ei.value.args[0] == 2013 and 0 < n <= 2000
        for _ in range(2):
            with pytest.raises(mysqlc.OperationalError) as ei:
                await cur.fetchmany(10)
            assert ei.value.args[0] == 2006
        conn.close()
    run(body)


@pytest.mark.parametrize("cls", [acur.Cursor, acur.DictCursor], ids=["tuples", "dicts"])
def test_aio_cancelled_statement_whose_rows_fail_a_converter(run, conn_kwargs, cls):
    """A statement cancelled as soon as it was sent, whose rows then fail a user
    converter while the cancellation drains them: the caller gets CancelledError (not
    the converter's exception), and the connection stays in sync."""
    def boom(value):
        if int(value) == 5:
            raise ValueError("converter failed on 5")
        return int(value)

    async def body():
        conv = dict(mysqlc.converters.conversions)
        conv[FIELD_TYPE.LONGLONG] = boom
        conn = await mysqlc.aio.connect(conv=conv, **conn_kwargs)
        try:
            cur = conn.cursor(cls)
            with pytest.raises(ValueError):   # uncancelled, the converter's error
                await cur.execute("SELECT seq FROM seq_1_to_10")
            for i in range(5):
                task = asyncio.ensure_future(cur.execute("SELECT seq FROM seq_1_to_10"))
                await asyncio.sleep(0)        # sent; its rows come while it is cancelled
                assert task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                await cur.execute("SELECT %s AS t", ("tag %d" % i,))
                row = (await cur.fetchall())[0]
                assert (row["t"] if cls is acur.DictCursor else row[0]) == "tag %d" % i
        finally:
            await conn.ensure_closed()
    run(body)
