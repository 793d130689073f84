"""The asyncio API itself (mysqlc.aio; names as aiomysql's): connect() and its arguments,
cursors, ``async with``, which calls are awaitable, ``closed``, close() without the loop
and while an await is pending, ensure_closed(), one connection used by two tasks at once,
cancellation by ``asyncio.timeout()`` around execute / fetch / stream (the connection
stays usable and returns its own results: tagged queries), read_timeout and
connect_timeout.  Every test runs on asyncio's default loop and on uvloop, each bounded
by ``asyncio.timeout``.

The scenarios both APIs share (types, errors, TLS, auth, compression, prepared,
streaming memory, callproc, LOCAL INFILE, columnar, load_table) run through
tests/_apis.py; fault injection on the asyncio transport is tests/test_aio_faults.py.
"""

import asyncio
import gc
import inspect
import random
import socket
import time
import weakref

import pytest

import mysqlc
import mysqlc.aio
import mysqlc.cursors
from _helpers import kill_connection
from test_auth_plugins import ed25519_account  # noqa: F401 - a fixture
from mysqlc.aio import cursors as acur
from mysqlc.constants import CLIENT, FIELD_TYPE

try:
    import uvloop
except ImportError:   # pragma: no cover - uvloop is in tests/requirements.txt
    uvloop = None

LOOPS = ["asyncio", "uvloop"]
BOUND = 30.0   # seconds any one test may take (a hang fails the test, not the run)


@pytest.fixture(params=LOOPS)
def run(request):
    """``run(async_fn, *args)``: ``await async_fn(*args)`` on a new loop of the kind the
    test is parametrized with, bounded by asyncio.timeout(BOUND)."""
    if request.param == "uvloop":
        if uvloop is None:
            pytest.fail("uvloop is not installed (tests/requirements.txt)")
        factory = uvloop.new_event_loop
    else:
        factory = asyncio.new_event_loop

    def runner(fn, *args, timeout=BOUND):
        async def bounded():
            async with asyncio.timeout(timeout):
                return await fn(*args)
        loop = factory()
        try:
            return loop.run_until_complete(bounded())
        finally:
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()
    runner.kind = request.param
    return runner


async def _tagged(conn, tag=None):
    """A query whose answer names itself: the connection returns its own result."""
    tag = tag or "tag-%d" % random.getrandbits(40)
    cur = conn.cursor()
    await cur.execute("SELECT %s, CONNECTION_ID()", (tag,))
    assert await cur.fetchall() == ((tag, conn.thread_id()),)
    await cur.close()


def _running_statements(root_kwargs, thread_id, settle=2.0):
    """What the server still runs for `thread_id` (sync root connection), polled for up
    to `settle` seconds: the server's thread reports the end of a statement a moment
    after its last packet was read ("Writing to net"), while a statement that really
    goes on (an unkilled SLEEP(30)) stays listed."""
    c = mysqlc.connect(**root_kwargs)
    end = time.monotonic() + settle
    try:
        cur = c.cursor()
        while True:
            cur.execute("SELECT COMMAND, INFO FROM information_schema.PROCESSLIST "
                        "WHERE ID = %s", (thread_id,))
            left = [r for r in cur.fetchall() if r[0] != "Sleep"]
            if not left or time.monotonic() > end:
                return left
            time.sleep(0.02)
    finally:
        c.close()


def _server_sees(root_kwargs, thread_id):
    c = mysqlc.connect(**root_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s",
                    (thread_id,))
        return cur.fetchone()[0] == 1
    finally:
        c.close()


def _wait_gone(root_kwargs, thread_id, within=5.0):
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not _server_sees(root_kwargs, thread_id):
            return True
        time.sleep(0.05)
    return False


# =========================================================================== the module

def test_module_is_a_dbapi_module_with_the_sync_exceptions():
    for name in ("Error", "Warning", "InterfaceError", "DatabaseError", "DataError",
                 "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
                 "NotSupportedError", "Binary", "Date", "Time", "Timestamp", "STRING",
                 "BINARY", "NUMBER", "DATETIME", "ROWID"):
        assert getattr(mysqlc.aio, name) is getattr(mysqlc, name), name
    assert mysqlc.aio.paramstyle == "format" and mysqlc.aio.apilevel == "2.0"
    assert mysqlc.aio.constants.CLIENT is CLIENT
    # connect(): awaitable and an async context manager (aiomysql's two forms); nothing
    # is opened until it is awaited or entered
    pending = mysqlc.aio.connect(host="127.0.0.1", port=1)
    assert inspect.isawaitable(pending)
    assert hasattr(pending, "__aenter__") and hasattr(pending, "__aexit__")
    assert inspect.iscoroutinefunction(mysqlc.aio.read_sql)


# =========================================================================== connect

def test_connect_with_every_kind_of_argument(run, server, conn_kwargs):
    kw = dict(conn_kwargs)
    db = kw.pop("database")
    seen = []

    def long_as_text(s):                 # a number's wire bytes (the sync API's rule)
        seen.append(s)
        return "L" + s.decode()
    conv = dict(mysqlc.converters.conversions)
    conv[FIELD_TYPE.LONG] = long_as_text

    async def body():
        conn = await mysqlc.aio.connect(
            db=db, charset="latin1", autocommit=True, init_command="SET @init = 41 + 1",
            sql_mode="ANSI_QUOTES", conv=conv, cursorclass=acur.DictCursor,
            local_infile=True, connect_timeout=5, read_timeout=10, write_timeout=10,
            client_flag=CLIENT.FOUND_ROWS, compress=True, loop=asyncio.get_running_loop(),
            **kw)
        try:
            assert not conn.closed and conn.open
            assert conn.db == db or conn.database == db
            assert conn.get_autocommit() is True
            assert conn.character_set_name() == "latin1" and conn.charset == "latin1"
            assert conn.client_flag & CLIENT.FOUND_ROWS
            async with conn.cursor() as cur:
                assert isinstance(cur, acur.DictCursor)
                await cur.execute("SELECT @init AS i, @@session.sql_mode AS m, "
                                  "DATABASE() AS d, @@autocommit AS a, CAST(7 AS INT) AS l")
                row = await cur.fetchone()
            assert row["i"] == 42 and "ANSI_QUOTES" in row["m"] and row["d"] == db
            assert row["a"] == 1
            assert row["l"] == "L7" and b"7" in seen              # conv: the user decoder
            assert conn.sync._conn.client_flag & CLIENT.LOCAL_FILES
            cur = conn.cursor(acur.Cursor)
            await cur.execute("SHOW SESSION STATUS LIKE 'Compression'")
            assert (await cur.fetchone())[1] == "ON"
            assert conn.get_server_info() == conn.server_version and conn.thread_id() > 0
        finally:
            await conn.ensure_closed()
        # a DSN as host, the unix socket, positional-free aiomysql names
        conn = await mysqlc.aio.connect(host=server.dsn())
        await _tagged(conn)
        await conn.ensure_closed()
        try:
            ukw = server.connect_kwargs(unix=True)
        except Exception:   # noqa: BLE001 - an external server without a known socket
            ukw = None
        if ukw is not None:
            conn = await mysqlc.aio.connect(**ukw)
            assert conn.get_host_info().lower().startswith("localhost")
            await _tagged(conn)
            await conn.ensure_closed()
    run(body)


def test_connect_errors_are_the_sync_ones(run, conn_kwargs):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]     # closed again: nothing listens there
    cases = [({"password": "not the password"}, 1045),
             ({"host": "127.0.0.1", "port": port}, 2003),
             ({"database": "no_such_db_aio"}, 1049),
             ({"charset": "no-such-charset"}, None),
             ({"no_such_argument": 1}, None)]

    def sync_error(kw):
        try:
            mysqlc.connect(**kw).close()
        except Exception as exc:   # noqa: BLE001 - compared below
            return exc
        pytest.fail("sync connect(%r) did not fail" % kw)

    async def body():
        for extra, errno in cases:
            kw = dict(conn_kwargs, **extra)
            expected = sync_error(kw)
            with pytest.raises(Exception) as ei:
                await mysqlc.aio.connect(**kw)
            assert type(ei.value) is type(expected), (extra, ei.value, expected)
            if errno is not None:
                assert ei.value.args[0] == expected.args[0] == errno
                assert isinstance(ei.value, mysqlc.OperationalError)
    run(body)


def test_connect_timeout_against_a_silent_listener(run, conn_kwargs):
    """A listener that accepts and never greets: 2013 after connect_timeout."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(4)               # the kernel completes the TCP handshake, nobody speaks

    async def body():
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            await mysqlc.aio.connect(**dict(conn_kwargs, host="127.0.0.1",
                                            port=lsock.getsockname()[1], connect_timeout=0.5))
        assert ei.value.args[0] == 2013, ei.value.args
        assert 0.4 < time.monotonic() - t0 < 3
    try:
        run(body)
    finally:
        lsock.close()


def test_read_timeout(run, conn_kwargs, root_conn_kwargs):
    async def body():
        conn = await mysqlc.aio.connect(read_timeout=0.5, **conn_kwargs)
        tid = conn.thread_id()
        cur = conn.cursor()
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            await cur.execute("SELECT SLEEP(3)")
        assert ei.value.args[0] == 2013 and "timed out" in ei.value.args[1]
        assert time.monotonic() - t0 < 2
        assert conn.closed                     # a read timeout ends the connection
        with pytest.raises(mysqlc.OperationalError):
            await conn.cursor().execute("SELECT 1")
        conn.close()
        return tid
    tid = run(body)
    # the statement the server was running was stopped as the sync API does
    assert _wait_gone(root_conn_kwargs, tid) or not _running_statements(root_conn_kwargs, tid)


# =========================================================================== cursors

def test_cursor_classes_and_prepared(run, conn_kwargs):
    sync = mysqlc.connect(**conn_kwargs)

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            for cls, sync_cls, buffered in (
                    (None, mysqlc.cursors.Cursor, True),
                    (acur.Cursor, mysqlc.cursors.Cursor, True),
                    (acur.DictCursor, mysqlc.cursors.DictCursor, True),
                    (acur.SSCursor, mysqlc.cursors.SSCursor, False),
                    (acur.SSDictCursor, mysqlc.cursors.SSDictCursor, False),
                    (mysqlc.cursors.SSDictCursor, mysqlc.cursors.SSDictCursor, False)):
                for prepared in (False, True):
                    cur = conn.cursor(cls, prepared=prepared) if cls else conn.cursor(
                        prepared=prepared)
                    assert isinstance(cur, acur.BaseCursor)
                    # the class the sync API picks for the same request
                    assert type(cur.sync) is type(sync.cursor(sync_cls, prepared)), cls
                    assert bool(cur.sync._prepared) is prepared
                    assert isinstance(cur, acur.SSCursor) is (not buffered)
                    assert cur.connection is conn
                    n = await cur.execute("SELECT seq AS n, 'x' AS s FROM seq_1_to_3 "
                                          "WHERE seq > %s" % ("?" if prepared else "%s"), (0,))
                    if buffered:
                        assert n == 3 and cur.rowcount == 3
                    dict_rows = issubclass(sync_cls, (mysqlc.cursors.DictCursor,
                                                      mysqlc.cursors.SSDictCursor))
                    first = await cur.fetchone()
                    assert first == ({"n": 1, "s": "x"} if dict_rows else (1, "x"))
                    assert len(await cur.fetchmany(1)) == 1
                    rest = [r async for r in cur]
                    assert len(rest) == 1 and await cur.fetchone() is None
                    assert cur.description[0][0] == "n"
                    await cur.close()
            with pytest.raises(TypeError):
                conn.cursor(dict)
        finally:
            await conn.ensure_closed()
    try:
        run(body)
    finally:
        sync.close()


def test_cursor_surface(run, conn_kwargs):
    async def body():
        async with await mysqlc.aio.connect(**conn_kwargs) as conn:
            async with conn.cursor() as cur:
                sync = mysqlc.connect(**conn_kwargs)
                try:
                    assert cur.mogrify("SELECT %s, %s", (1, "a'b")) == \
                        sync.cursor().mogrify("SELECT %s, %s", (1, "a'b"))
                finally:
                    sync.close()
                await cur.execute("CREATE TEMPORARY TABLE t_aio (id INT AUTO_INCREMENT "
                                  "PRIMARY KEY, v VARCHAR(10))")
                n = await cur.executemany("INSERT INTO t_aio (v) VALUES (%s)",
                                          [("a",), ("b",), ("c",)])
                assert n == 3 and cur.rowcount == 3
                await cur.execute("INSERT INTO t_aio (v) VALUES ('d')")
                assert cur.lastrowid == 4
                cur.arraysize = 2
                assert cur.arraysize == 2
                await cur.execute("SELECT v FROM t_aio ORDER BY id")
                assert await cur.fetchmany() == (("a",), ("b",))
                await cur.scroll(1)
                assert cur.rownumber == 3
                assert await cur.fetchall() == (("d",),)
                await cur.execute("SELECT 1; SELECT 2")
                assert await cur.fetchall() == ((1,),)
                assert await cur.nextset() and await cur.fetchall() == ((2,),)
                assert not await cur.nextset()
                await cur.execute("CREATE PROCEDURE IF NOT EXISTS p_aio(IN a INT, OUT b INT) "
                                  "SET b = a * 2")
                try:
                    await cur.callproc("p_aio", (21, 0))
                    await cur.execute("SELECT @_p_aio_1")
                    assert await cur.fetchone() == (42,)
                finally:
                    await cur.execute("DROP PROCEDURE p_aio")
            with pytest.raises(mysqlc.ProgrammingError):
                await cur.execute("SELECT 1")           # closed by async with
            ss = conn.cursor(acur.SSCursor)
            await ss.execute("SELECT seq FROM seq_1_to_1000")
            assert await ss.fetchone() == (1,)
            await ss.scroll(10)
            assert await ss.fetchone() == (12,)
            assert len(await ss.fetchall()) == 988
            await _tagged(conn)
        assert conn.closed
    run(body)


# =========================================================================== awaitable or not

CONN_AWAITED = ("commit", "rollback", "begin", "ping", "select_db", "autocommit",
                "ensure_closed", "show_warnings", "kill", "change_user", "set_charset")
CONN_PLAIN = ("cursor", "close", "get_autocommit", "character_set_name", "thread_id",
              "get_server_info", "escape", "literal")
CUR_AWAITED = ("execute", "executemany", "fetchone", "fetchmany", "fetchall", "nextset",
               "callproc", "scroll", "close", "fetch_arrow_table", "load_table")


def test_which_calls_are_awaitable():
    for name in CONN_AWAITED:
        assert inspect.iscoroutinefunction(getattr(mysqlc.aio.Connection, name)), name
    for name in CONN_PLAIN:
        f = getattr(mysqlc.aio.Connection, name)
        assert callable(f) and not inspect.iscoroutinefunction(f), name
    for cls in (acur.Cursor, acur.DictCursor, acur.SSCursor, acur.SSDictCursor):
        for name in CUR_AWAITED:
            assert inspect.iscoroutinefunction(getattr(cls, name)), (cls, name)
        assert not inspect.iscoroutinefunction(cls.mogrify)
        assert not inspect.iscoroutinefunction(cls.fetch_record_batches)
    for name in ("closed", "open", "server_version", "charset", "encoding"):
        assert isinstance(getattr(mysqlc.aio.Connection, name), property), name
    for name in ("description", "rowcount", "lastrowid", "arraysize", "rownumber"):
        assert isinstance(getattr(acur.BaseCursor, name), property), name


def test_connection_calls(run, conn_kwargs, root_conn_kwargs):
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        sync = mysqlc.connect(**conn_kwargs)
        try:     # the sync API's answers
            assert conn.escape("a'b") == sync.escape("a'b")
            assert conn.literal(None) == sync.literal(None)
            assert conn.literal(("x", 1)) == sync.literal(("x", 1))
        finally:
            sync.close()
        assert conn.get_autocommit() is False
        await conn.autocommit(True)
        assert conn.get_autocommit() is True
        await conn.autocommit(False)
        await conn.begin()
        cur = conn.cursor()
        await cur.execute("CREATE TEMPORARY TABLE tx (i INT) ENGINE=InnoDB")
        await cur.execute("INSERT INTO tx VALUES (1)")
        await conn.rollback()
        await cur.execute("SELECT COUNT(*) FROM tx")
        assert await cur.fetchone() == (0,)
        await cur.execute("INSERT INTO tx VALUES (2)")
        await conn.commit()
        await cur.execute("SELECT COUNT(*) FROM tx")
        assert await cur.fetchone() == (1,)
        await conn.ping()
        await conn.select_db("information_schema")
        await cur.execute("SELECT DATABASE()")
        assert await cur.fetchone() == ("information_schema",)
        await cur.execute("SELECT CAST('x' AS INT)")
        assert (await conn.show_warnings())[0][1] == 1292
        await conn.set_charset("latin1")
        assert conn.character_set_name() == "latin1"
        await conn.change_user(conn_kwargs["user"], conn_kwargs["password"],
                               conn_kwargs["database"])
        await _tagged(conn)
        victim = await mysqlc.aio.connect(**conn_kwargs)
        admin = await mysqlc.aio.connect(**root_conn_kwargs)
        await admin.kill(victim.thread_id())
        with pytest.raises(mysqlc.OperationalError):
            await victim.cursor().execute("SELECT 1")
        assert victim.closed
        await admin.ensure_closed()
        victim.close()
        await conn.ensure_closed()
        assert conn.closed
        await conn.ensure_closed()           # again: nothing (aiomysql)
        conn.close()
    run(body)


# =========================================================================== closing

def test_closed_and_ensure_closed_is_graceful(run, conn_kwargs, root_conn_kwargs):
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        tid = conn.thread_id()
        assert conn.closed is False
        await conn.ensure_closed()
        assert conn.closed is True and conn.open is False
        with pytest.raises(mysqlc.OperationalError) as ei:
            await conn.cursor().execute("SELECT 1")
        assert ei.value.args[0] == 2006
        return tid
    tid = run(body)
    assert _wait_gone(root_conn_kwargs, tid)   # COM_QUIT: the server ends the session


@pytest.mark.parametrize("when", ["loop idle", "loop closed"])
def test_close_without_the_loop(conn_kwargs, root_conn_kwargs, when):
    """close() is a plain call: SQLAlchemy calls it from garbage collection, outside any
    task, even after the loop ended.  The server sees the session end."""
    loop = asyncio.new_event_loop()
    try:
        conn = loop.run_until_complete(mysqlc.aio.connect(**conn_kwargs))
        loop.run_until_complete(_tagged(conn))
        tid = conn.thread_id()
        if when == "loop closed":
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()
        conn.close()                       # no running loop here
        assert conn.closed
        conn.close()                       # again: nothing
        if when == "loop idle":
            loop.run_until_complete(asyncio.sleep(0.01))   # the transport's callbacks
    finally:
        if not loop.is_closed():
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()
    assert _wait_gone(root_conn_kwargs, tid)


def test_close_while_an_await_is_pending(run, conn_kwargs):
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        cur = conn.cursor()
        task = asyncio.create_task(cur.execute("SELECT SLEEP(2)"))
        await asyncio.sleep(0.3)
        assert not task.done()
        t0 = time.monotonic()
        conn.close()                       # at once, from the loop, the await pending
        assert conn.closed
        with pytest.raises(mysqlc.OperationalError) as ei:
            await task
        assert ei.value.args[0] in (2013, 2006), ei.value.args
        assert time.monotonic() - t0 < 2
        with pytest.raises(mysqlc.OperationalError):
            await conn.cursor().execute("SELECT 1")
        await _tagged(await mysqlc.aio.connect(**conn_kwargs))   # the server is fine
    run(body)


def test_connections_ended_by_an_error_are_freed(run, conn_kwargs):
    """A connection whose last greenlet call ended with an exception is freed once
    dropped: the greenlet, suspended until its next call, no longer holds the exception
    (whose traceback holds the stream, the engine and the task's frames).  Cases: closed
    while a statement awaits (the statement ends with 2013 in the greenlet), and a
    statement refused by the server on a greenlet path (executemany), then closed."""
    async def closed_while_pending():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        task = asyncio.create_task(conn.cursor().execute("SELECT SLEEP(2)"))
        await asyncio.sleep(0.05)
        conn.close()
        with pytest.raises(mysqlc.OperationalError):
            await task
        return weakref.ref(conn.sync), weakref.ref(conn.sync._proto)

    async def refused_then_closed():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        with pytest.raises(mysqlc.ProgrammingError):
            await conn.cursor().executemany("SELEC %s", [(1,), (2,)])
        refs = weakref.ref(conn.sync), weakref.ref(conn.sync._proto)
        conn.close()   # no further greenlet call
        return refs

    async def body():
        refs = []
        for _ in range(3):
            refs += await closed_while_pending()
            refs += await refused_then_closed()
        # the loop closes a transport in a later turn (uvloop: libuv's close callback):
        # a connection is given that long; a leaked one stays
        for _ in range(40):
            await asyncio.sleep(0.05)
            gc.collect()
            alive = [r() for r in refs if r() is not None]
            if not alive:
                break
        assert alive == []
    run(body)


def test_async_with_calls_a_subclass_close(run, conn_kwargs):
    """``async with conn.cursor(Sub)`` ends with Sub's own close() (aiomysql's
    ``__aexit__`` awaits ``self.close()``)."""
    closes = []

    class Sub(mysqlc.aio.Cursor):
        async def close(self):
            closes.append(self)
            await super().close()

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            async with conn.cursor(Sub) as cur:
                await cur.execute("SELECT 1")
            assert closes == [cur] and cur.closed
        finally:
            await conn.ensure_closed()
    run(body)


def test_cursorclass_set_on_the_connection(run, conn_kwargs):
    """``conn.cursorclass = X`` (a sync or an asyncio class) is what a later
    ``cursor()`` without a class gives, as PyMySQL's attribute; not a cursor class:
    TypeError, the setting unchanged."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            async with conn.cursor() as cur:
                assert type(cur) is acur.Cursor
            conn.cursorclass = mysqlc.cursors.DictCursor
            assert conn.cursorclass is mysqlc.cursors.DictCursor
            async with conn.cursor() as cur:
                assert isinstance(cur, acur.DictCursor)
                await cur.execute("SELECT 1 AS a")
                assert await cur.fetchall() == ({"a": 1},)
            conn.cursorclass = acur.SSCursor
            async with conn.cursor() as cur:
                assert isinstance(cur, acur.SSCursor)
            with pytest.raises(TypeError):
                conn.cursorclass = object
            assert isinstance(conn.cursor(), acur.SSCursor)
        finally:
            await conn.ensure_closed()
    run(body)


def test_async_with_closes(run, conn_kwargs):
    async def body():
        async with await mysqlc.aio.connect(**conn_kwargs) as conn:
            await _tagged(conn)
        assert conn.closed
        with pytest.raises(ZeroDivisionError):
            async with await mysqlc.aio.connect(**conn_kwargs) as conn2:
                1 / 0
        assert conn2.closed
    run(body)


# =========================================================================== concurrency

def test_one_connection_used_by_two_tasks(run, conn_kwargs):
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        cur = conn.cursor()
        first = asyncio.create_task(cur.execute("SELECT SLEEP(0.5), 'first'"))
        await asyncio.sleep(0.1)
        with pytest.raises(mysqlc.ProgrammingError, match="another operation"):
            await conn.cursor().execute("SELECT 'second'")
        with pytest.raises(mysqlc.ProgrammingError):
            await conn.commit()
        assert await first == 1
        assert await cur.fetchall() == ((0, "first"),)   # its own result, whole
        await _tagged(conn)
        # many tasks over many connections at once, each with its own results
        conns = [await mysqlc.aio.connect(**conn_kwargs) for _ in range(5)]

        async def work(c, k):
            for i in range(20):
                await _tagged(c, "c%d-%d" % (k, i))
        await asyncio.gather(*(work(c, k) for k, c in enumerate(conns)))
        for c in conns + [conn]:
            await c.ensure_closed()
    run(body)


def test_loop_is_not_blocked_while_waiting(run, conn_kwargs):
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1
        t = asyncio.create_task(ticker())
        await conn.cursor().execute("SELECT SLEEP(0.5)")
        t.cancel()
        assert ticks >= 20, ticks
        await conn.ensure_closed()
    run(body)


def test_unbuffered_fetchone_without_the_greenlet(run, conn_kwargs, monkeypatch):
    """An unbuffered cursor's fetchone() decodes a row whose bytes have all arrived
    without the connection's greenlet (``SSCursor._fetchone_ready``: the greenlet only
    where the server's bytes must be awaited), one row at a time as the sync fetchone
    reads them: the same rows, rownumber, rowcount (-1 until the end), an error after
    the rows that came before it, and fetchmany / async for / fetchall go on where it
    stopped (and it where they stopped)."""
    runs = []
    real_run = mysqlc.aio._runner.Worker.run

    def counting(self, fn, *args, **kwargs):
        runs.append(getattr(fn, "__name__", repr(fn)))
        return real_run(self, fn, *args, **kwargs)
    monkeypatch.setattr(mysqlc.aio._runner.Worker, "run", counting)

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        for cls in (acur.SSCursor, acur.SSDictCursor):
            cur = conn.cursor(cls)
            await cur.execute("SELECT seq, REPEAT('x', 20) AS s FROM seq_1_to_20000")
            del runs[:]
            got = []
            while (row := await cur.fetchone()) is not None:
                got.append(tuple(row.values()) if cls is acur.SSDictCursor else row)
                if len(got) == 10000:
                    assert cur.rowcount == -1 and cur.rownumber == 10000
            assert got == [(i, "x" * 20) for i in range(1, 20001)]
            assert cur.rownumber == cur.rowcount == 20000
            assert await cur.fetchone() is None
            # the greenlet ran only where the next row's bytes had not arrived (none at
            # all when the whole result was in before the loop began), not per row
            assert len(runs) < 200 and set(runs) <= {"fetchone"}, (len(runs), set(runs))

        cur = conn.cursor(acur.SSCursor)
        await cur.execute("SELECT seq FROM seq_1_to_5000")
        assert await cur.fetchone() == (1,)
        assert await cur.fetchmany(3) == [(2,), (3,), (4,)]
        assert await cur.fetchone() == (5,)
        async for r in cur:
            if r[0] == 10:
                break
        assert await cur.fetchone() == (11,)   # what the loop read ahead comes first
        async for r in cur:
            assert r == (12,)
            break
        rest = await cur.fetchall()
        assert len(rest) == 4988 and rest[0] == (13,) and rest[-1] == (5000,)
        assert cur.rowcount == 5000 and await cur.fetchone() is None

        # an error after 29,999 rows: every row before it is returned first (as the sync
        # fetchone returns them), then the error; the connection stays in sync
        await cur.execute("SELECT seq, IF(seq = 30000, (SELECT seq UNION SELECT seq + 1), "
                          "seq) FROM seq_1_to_40000")
        rows = []
        with pytest.raises(mysqlc.Error) as ei:
            while (row := await cur.fetchone()) is not None:
                rows.append(row)
        assert ei.value.args[0] == 1242
        assert len(rows) == 29999 and rows[-1] == (29999, 29999)
        await _tagged(conn)
        # fetchone() of a cursor never executed / closed: the sync errors
        with pytest.raises(mysqlc.ProgrammingError):
            await conn.cursor(acur.SSCursor).fetchone()
        await cur.close()
        with pytest.raises(mysqlc.ProgrammingError):
            await cur.fetchone()
        await conn.ensure_closed()
    run(body)


def test_unbuffered_fetchone_from_another_loop_is_refused(conn_kwargs):
    """fetchone() of an unbuffered cursor from another event loop -- in another thread,
    or a second loop of the same thread -- raises InterfaceError as fetchmany() does,
    also when its row has arrived already (the no-greenlet path checks the loop too)."""
    import threading

    loop1 = asyncio.new_event_loop()

    async def setup():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        cur = conn.cursor(acur.SSCursor)
        await cur.execute("SELECT seq FROM seq_1_to_50")
        assert await cur.fetchone() == (1,)
        await asyncio.sleep(0.2)              # the rest has arrived
        return conn, cur
    conn, cur = loop1.run_until_complete(setup())
    try:
        def elsewhere(call, in_thread):
            out = []

            async def attempt():
                try:
                    out.append(await call())
                except Exception as exc:
                    out.append(exc)

            def body():
                lp = asyncio.new_event_loop()
                try:
                    lp.run_until_complete(attempt())
                finally:
                    lp.close()
            if in_thread:
                t = threading.Thread(target=body)
                t.start()
                t.join(30)
            else:
                body()
            return out[0]

        for in_thread in (True, False):
            for call in (cur.fetchone, lambda: cur.fetchmany(2)):
                got = elsewhere(call, in_thread)
                assert isinstance(got, mysqlc.InterfaceError), got
                assert "another event loop" in str(got)
        # nothing was taken: the owner's loop goes on at row 2
        assert loop1.run_until_complete(cur.fetchone()) == (2,)
        rest = loop1.run_until_complete(cur.fetchall())
        assert rest[0] == (3,) and rest[-1] == (50,) and len(rest) == 48
    finally:
        conn.close()
        loop1.close()


# =========================================================================== cancellation

async def _execute_sleep(conn):
    await conn.cursor().execute("SELECT SLEEP(5)")


async def _fetch_stream(conn):
    cur = conn.cursor(acur.SSCursor)
    await cur.execute("SELECT seq, REPEAT('z', 50) FROM seq_1_to_3000000")
    while await cur.fetchmany(100):
        pass


async def _fetchone_stream(conn):
    cur = conn.cursor(acur.SSCursor)
    await cur.execute("SELECT seq, REPEAT('z', 50) FROM seq_1_to_3000000")
    while await cur.fetchone() is not None:
        pass


async def _async_for_stream(conn):
    cur = conn.cursor(acur.SSDictCursor)
    await cur.execute("SELECT seq, REPEAT('z', 50) AS s FROM seq_1_to_3000000")
    async for _ in cur:
        pass


async def _batches_stream(conn):
    cur = conn.cursor(acur.SSCursor)
    await cur.execute("SELECT seq, REPEAT('z', 50) AS s FROM seq_1_to_3000000")
    async for _ in cur.fetch_record_batches(1000):
        pass


async def _prepared_stream(conn):
    cur = conn.cursor(acur.SSCursor, prepared=True)
    await cur.execute("SELECT seq, REPEAT('z', 50) FROM seq_1_to_3000000 WHERE seq > ?", (0,))
    async for _ in cur:
        pass


CANCELLED = {"execute": _execute_sleep, "fetchmany": _fetch_stream,
             "fetchone": _fetchone_stream,
             "async_for": _async_for_stream, "record_batches": _batches_stream,
             "prepared_stream": _prepared_stream}


@pytest.mark.parametrize("name", sorted(CANCELLED))
def test_timeout_leaves_the_connection_usable(run, conn_kwargs, root_conn_kwargs, name):
    pytest.importorskip("pyarrow") if name == "record_batches" else None
    action = CANCELLED[name]

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        tid = conn.thread_id()
        for _ in range(2):
            t0 = time.monotonic()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.3):
                    await action(conn)
            # KILL QUERY and the drain are bounded (CANCEL_BUDGET)
            assert time.monotonic() - t0 < 0.3 + 5.5
            assert not conn.closed, "cancelled %s closed the connection" % name
            assert _running_statements(root_conn_kwargs, tid) == []
            await _tagged(conn)
            cur = conn.cursor(acur.SSCursor)          # a stream after it is whole
            await cur.execute("SELECT seq FROM seq_1_to_5000")
            assert sum([r[0] async for r in cur]) == 5000 * 5001 // 2
        await conn.ensure_closed()
    run(body)


def test_cancellations_at_random_points(run, conn_kwargs, root_conn_kwargs):
    """Timeouts landing anywhere in execute, executemany, fetches and streams: after
    each, the connection answers its own tagged query (or, past the cancel budget, is
    reported closed -- never out of sync)."""
    rnd = random.Random(15)
    rows = [(i, "v%d" % i) for i in range(3000)]

    async def execute(conn):
        await conn.cursor().execute("SELECT seq, REPEAT('r', 20) FROM seq_1_to_200000")

    async def executemany(conn):
        await conn.cursor().executemany("INSERT INTO rnd_aio VALUES (%s, %s)", rows)

    async def stream(conn):
        cur = conn.cursor(acur.SSCursor)
        await cur.execute("SELECT seq FROM seq_1_to_400000")
        async for _ in cur:
            pass

    async def sleep(conn):
        await conn.cursor().execute("SELECT SLEEP(0.2)")

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        cur = conn.cursor()
        await cur.execute("CREATE TEMPORARY TABLE rnd_aio (id INT, v VARCHAR(20))")
        tid = conn.thread_id()
        done = cancelled = 0
        for i in range(24):
            action = rnd.choice([execute, executemany, stream, sleep])
            try:
                async with asyncio.timeout(rnd.uniform(0.0, 0.08)):
                    await action(conn)
                done += 1
            except TimeoutError:
                cancelled += 1
            assert not conn.closed, "closed after cancelling %s" % action.__name__
            await _tagged(conn, "r%d" % i)
        assert cancelled >= 8, (done, cancelled)
        assert _running_statements(root_conn_kwargs, tid) == []
        await cur.execute("DELETE FROM rnd_aio")
        await conn.ensure_closed()
    run(body, timeout=90)


def test_task_cancel_during_execute(run, conn_kwargs, root_conn_kwargs):
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        task = asyncio.create_task(conn.cursor().execute("SELECT SLEEP(5)"))
        await asyncio.sleep(0.2)
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - t0 < 3
        assert not conn.closed
        assert _running_statements(root_conn_kwargs, conn.thread_id()) == []
        await _tagged(conn)
        await conn.ensure_closed()
    run(body)


def test_cancelled_fetch_leaves_no_error_for_the_cursor(run, conn_kwargs):
    """A fetchmany()/``async for`` batch of an SSCursor cancelled mid-result: the KILL
    QUERY's 1317 that ends the rows is the cancellation's own -- the cursor's next
    execute() and its close() do not raise it later (mysqlc.cursors.SSCursor._defer
    keeps an error that comes after some rows for the next call; mysqlc.aio._runner
    drops the one a cancelled call got)."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        for how in ("fetchmany", "async for"):
            cur = conn.cursor(mysqlc.aio.SSCursor)
            await cur.execute("SELECT seq, REPEAT('x', 100) FROM seq_1_to_5000000")

            async def read():
                if how == "fetchmany":
                    while await cur.fetchmany(200000):
                        pass
                else:
                    async for _ in cur:
                        pass
            task = asyncio.create_task(read())
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert not conn.closed, how
            await cur.execute("SELECT 5")
            assert await cur.fetchall() == [(5,)], how
            await cur.close()
            await _tagged(conn)
        await conn.ensure_closed()
    run(body)


# =========================================================================== data work

def test_arrow_and_read_sql(run, conn_kwargs):
    pa = pytest.importorskip("pyarrow")

    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        cur = conn.cursor(acur.SSCursor)
        await cur.execute("SELECT seq AS n, CONCAT('s', seq) AS s FROM seq_1_to_2500")
        table = await cur.fetch_arrow_table()
        assert table.num_rows == 2500 and table.column("n").to_pylist()[-1] == 2500
        await cur.execute("SELECT seq AS n FROM seq_1_to_2500")
        sizes = [b.num_rows async for b in cur.fetch_record_batches(1000)]
        assert sizes == [1000, 1000, 500]
        t = await mysqlc.aio.read_sql(conn, "SELECT seq AS n FROM seq_1_to_10")
        assert isinstance(t, pa.Table) and t.num_rows == 10
        await cur.execute("CREATE TEMPORARY TABLE lt_aio (n INT, s VARCHAR(10))")
        assert await cur.load_table("lt_aio", pa.table({"n": [1, 2], "s": ["a", "b"]})) == 2
        await cur.execute("SELECT * FROM lt_aio ORDER BY n")
        assert list(await cur.fetchall()) == [(1, "a"), (2, "b")]
        await _tagged(conn)
        await conn.ensure_closed()
    run(body)


def test_cursor_takes_one_class_and_prepared(run, conn_kwargs):
    """``cursor(cls, prepared)``: the second positional argument is `prepared` (a bool);
    aiomysql's ``cursor(DictCursor, SSCursor)`` (several classes mixed) is a TypeError,
    not a prepared DictCursor."""
    async def body():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            with pytest.raises(TypeError, match="one cursor class"):
                conn.cursor(acur.DictCursor, acur.SSCursor)
            assert conn.cursor(None, True).sync._prepared
            assert conn.cursor(acur.SSCursor, prepared=True).sync._prepared
            assert not conn.cursor(acur.DictCursor).sync._prepared
        finally:
            conn.close()
    run(body)


def _sessions_of(root_kwargs, user):
    c = mysqlc.connect(**root_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = %s", (user,))
        return {r[0] for r in cur.fetchall()}
    finally:
        c.close()


def test_cancelled_connects_leave_no_session(run, conn_kwargs, root_conn_kwargs):
    """connect() cancelled at random points of the TCP connect, the handshake and the
    post-connect statements (init_command) -- once or twice -- leaves no session on the
    server while the process goes on (a suspended greenlet is never collected: the
    half-done connect must be unwound, closing its stream)."""
    before = _sessions_of(root_conn_kwargs, conn_kwargs["user"])
    rnd = random.Random(15)

    async def body():
        cancelled = 0
        for i in range(120):
            task = asyncio.ensure_future(mysqlc.aio.connect(init_command="SET @a := 1",
                                                            **conn_kwargs))
            delay = rnd.choice([0, rnd.uniform(0, 0.002), rnd.uniform(0, 0.01)])
            if delay:
                await asyncio.sleep(delay)
            task.cancel()
            if rnd.random() < 0.3:
                await asyncio.sleep(0)
                task.cancel()
            await asyncio.wait({task})
            if task.cancelled():
                cancelled += 1
            else:
                conn = task.result()
                await _tagged(conn)
                conn.close()
        assert cancelled > 20, cancelled
        await asyncio.sleep(0.3)   # the server ends the sessions whose socket closed
        deadline = time.monotonic() + 5
        while True:
            left = _sessions_of(root_conn_kwargs, conn_kwargs["user"]) - before
            if not left or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        assert left == set(), "sessions left by cancelled connects: %r" % (left,)
    run(body)


def test_connection_used_from_another_loop_is_interface_error(conn_kwargs):
    """A connection opened in one event loop and used in another (a second asyncio.run,
    or another thread's loop) raises InterfaceError before any I/O; close() still works."""
    async def opened():
        return await mysqlc.aio.connect(**conn_kwargs)
    conn = asyncio.run(opened())

    async def use():
        with pytest.raises(mysqlc.InterfaceError, match="another event loop"):
            await conn.cursor().execute("SELECT 1")
        with pytest.raises(mysqlc.InterfaceError, match="another event loop"):
            await conn.ping()
    asyncio.run(use())
    conn.close()
    assert conn.closed


def test_connect_accepts_aiomysql_echo(run, conn_kwargs):
    """aiomysql's ``connect(echo=True)`` is accepted and kept as ``conn.echo`` (as
    ``create_pool(echo=...)``); no query is logged."""
    async def body():
        conn = await mysqlc.aio.connect(echo=True, **conn_kwargs)
        try:
            assert conn.echo is True
            await _tagged(conn)
        finally:
            conn.close()
        conn = await mysqlc.aio.connect(**conn_kwargs)
        assert conn.echo is False
        conn.close()
    run(body)


# =========================================================================== contextvars

# driver callbacks run in the awaiting task's own context (mysqlc/aio/_runner.py): they
# see its ContextVars, and what they set() is seen by the task after the await, as a
# sync call's callbacks run in the caller's context
import contextvars   # noqa: E402

_request = contextvars.ContextVar("_request", default="no context")


def test_contextvars_seen_by_converters(run, conn_kwargs):
    seen = []

    def decode_long(value):   # the wire text (bytes), as mysqlclient hands it
        seen.append(_request.get())
        _request.set("set by the converter of %d" % int(value))
        return int(value)

    conv = dict(mysqlc.converters.conversions)
    conv[FIELD_TYPE.LONG] = conv[FIELD_TYPE.LONGLONG] = decode_long   # CAST(.. AS SIGNED)

    async def one(conn, name, n):
        _request.set(name)
        async with conn.cursor() as cur:
            await cur.execute("SELECT CAST(%s AS SIGNED)", (n,))
            assert await cur.fetchall() == ((n,),)
        # the converter's set() happened in this very context
        assert _request.get() == "set by the converter of %d" % n
        return name

    async def main():
        conns = [await mysqlc.aio.connect(conv=conv, **conn_kwargs) for _ in range(2)]
        try:
            # two tasks, each its own context, on two connections at once
            names = await asyncio.gather(one(conns[0], "task-a", 1),
                                         one(conns[1], "task-b", 2))
            assert names == ["task-a", "task-b"]
            assert sorted(seen) == ["task-a", "task-b"]
            # a context set in the caller, the same connection from another task
            seen.clear()
            _request.set("main")
            async with conns[0].cursor() as cur:
                await cur.execute("SELECT CAST(3 AS SIGNED)")
            assert seen == ["main"]
            # the value that converter set is this task's now: the other connection's
            # converter sees it
            seen.clear()
            async with conns[1].cursor() as cur:
                await cur.execute("SELECT CAST(4 AS SIGNED)")
                assert await cur.fetchall() == ((4,),)
            assert seen == ["set by the converter of 3"]
            assert _request.get() == "set by the converter of 4"
        finally:
            for c in conns:
                await c.ensure_closed()
    run(main)


def test_contextvars_seen_by_load_data_local_iterable(run, conn_kwargs):
    seen = []

    def rows():
        seen.append(_request.get())
        yield b"1\n2\n"
        seen.append(_request.get())
        yield b"3\n"

    async def main():
        async with mysqlc.aio.connect(local_infile=True, **conn_kwargs) as conn:
            async with conn.cursor() as cur:
                await cur.execute("CREATE TEMPORARY TABLE ctx_infile (n INT)")
                _request.set("loader")
                await cur.execute("LOAD DATA LOCAL INFILE 'rows.txt' INTO TABLE ctx_infile",
                                  infile=rows())
                await cur.execute("SELECT SUM(n) FROM ctx_infile")
                assert (await cur.fetchone())[0] == 6
        assert seen == ["loader", "loader"]
    run(main)


# an async iterable as the LOAD DATA LOCAL source (mysqlc/aio/connection.py _AsyncChunks):
# each chunk is awaited by the awaiting task itself while the engine waits

class _Chunks:
    """Not a generator: an object with ``__aiter__`` whose ``__anext__`` is a coroutine."""

    def __init__(self, chunks):
        self.chunks = list(chunks)

    def __aiter__(self):
        return self

    async def __anext__(self):
        await asyncio.sleep(0)
        if not self.chunks:
            raise StopAsyncIteration
        return self.chunks.pop(0)


def test_load_data_local_from_async_iterable(run, conn_kwargs):
    seen = []
    values = list(range(1, 2001))

    async def rows():
        # awaits between the chunks (a real producer's reads), in this task's context
        for i in range(0, len(values), 100):
            seen.append(_request.get())
            await asyncio.sleep(0.001)
            yield "".join("%d,v%d\n" % (n, n) for n in values[i:i + 100]).encode()
        _request.set("set by the source")
        yield b""   # an empty chunk is harmless

    async def main():
        async with mysqlc.aio.connect(local_infile=True, **conn_kwargs) as conn:
            async with conn.cursor() as cur:
                await cur.execute("CREATE TEMPORARY TABLE ai_infile (n INT, v VARCHAR(10))")
                _request.set("async loader")
                n = await cur.execute("LOAD DATA LOCAL INFILE 'rows.csv' INTO TABLE "
                                      "ai_infile FIELDS TERMINATED BY ','", infile=rows())
                assert n == len(values)
                # the source ran in this very context: its set() is seen here
                assert _request.get() == "set by the source"
                await cur.execute("SELECT n, v FROM ai_infile ORDER BY n")
                assert await cur.fetchall() == tuple((v, "v%d" % v) for v in values)
                # any object with __aiter__, on an unbuffered cursor too
                async with conn.cursor(acur.SSCursor) as scur:
                    assert await scur.execute(
                        "LOAD DATA LOCAL INFILE 'more.csv' INTO TABLE ai_infile "
                        "FIELDS TERMINATED BY ','",
                        infile=_Chunks([b"5001,x\n5002,", b"y\n", b"5003,z\n"])) == 3
                await cur.execute("SELECT COUNT(*), SUM(n) FROM ai_infile WHERE n > 5000")
                assert await cur.fetchone() == (3, 15006)
            await _tagged(conn)
        assert seen == ["async loader"] * 20
    run(main)


def test_load_data_local_async_iterable_raises(run, conn_kwargs):
    class DiskOnFire(Exception):
        pass

    async def failing():
        yield b"1,one\n"
        await asyncio.sleep(0.001)
        yield b"2,two\n"
        raise DiskOnFire("disk on fire")

    async def main():
        async with mysqlc.aio.connect(local_infile=True, **conn_kwargs) as conn:
            async with conn.cursor() as cur:
                await cur.execute("CREATE TEMPORARY TABLE ai_fail (n INT, v VARCHAR(10))")
                with pytest.raises(DiskOnFire, match="disk on fire"):
                    await cur.execute("LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE ai_fail "
                                      "FIELDS TERMINATED BY ','", infile=failing())
                # raised after the server's answer: the connection is in step
                assert not conn.closed
                await _tagged(conn)
                await cur.execute("SELECT COUNT(*) FROM ai_fail")
                assert (await cur.fetchone())[0] <= 2
    run(main)


def test_load_data_local_async_iterable_cancelled(run, conn_kwargs):
    """Cancelled (asyncio.timeout) while the source awaits its next chunk: the source sees
    the CancelledError, the file is ended, and the connection stays usable (or, past the
    cancel budget, is closed: here it is not)."""
    got = []

    async def stalled():
        yield b"1,one\n"
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            got.append("cancelled")
            raise
        yield b"2,two\n"

    async def main():
        async with mysqlc.aio.connect(local_infile=True, **conn_kwargs) as conn:
            async with conn.cursor() as cur:
                await cur.execute("CREATE TEMPORARY TABLE ai_cancel (n INT, v VARCHAR(10))")
                t0 = time.monotonic()
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.3):
                        await cur.execute("LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE "
                                          "ai_cancel FIELDS TERMINATED BY ','",
                                          infile=stalled())
                assert time.monotonic() - t0 < 5.0
                assert got == ["cancelled"]
                assert not conn.closed
                await _tagged(conn)
                await cur.execute("SELECT COUNT(*) FROM ai_cancel")
                assert (await cur.fetchone())[0] <= 1
    run(main)


@pytest.mark.allow_skip   # the ed25519 account: MariaDB only (skips under MySQL)
def test_contextvars_seen_by_auth_plugin(run, ed25519_account, monkeypatch):
    from mysqlc import _secure
    from test_auth_plugins import ED_PASSWORD
    seen = []
    plugin = _secure.AUTH_PLUGINS["client_ed25519"]

    def recording(password, nonce):
        seen.append(_request.get())
        return plugin(password, nonce)
    recording.hashes_password = True
    monkeypatch.setitem(_secure.AUTH_PLUGINS, "client_ed25519", recording)

    async def main():
        _request.set("login")
        conn = await mysqlc.aio.connect(password=ED_PASSWORD, **ed25519_account)
        try:
            assert conn.sync._conn.auth_plugin_name == "client_ed25519"
            await _tagged(conn)
        finally:
            await conn.ensure_closed()
    run(main)
    assert seen == ["login"]


# =========================================================================== the C stream
# src/aio_stream.c: on asyncio's selector loop the socket's reader is the C half's
# (_on_readable: one recv() into the engine) and writes go to the socket first, the rest
# to the transport (whose buffer must be empty before the next direct send); on uvloop
# the protocol's get_buffer / buffer_updated, in C as well.

async def _stream_modes(conn_kwargs, kind):
    conn = await mysqlc.aio.connect(**conn_kwargs)
    proto = conn._sync_obj._proto
    try:
        assert proto._reader == (1 if kind == "asyncio" else 0)
        cur = conn.cursor()
        # statements larger than the socket's send buffer (made small here, so that the
        # kernel cannot take a whole one while the server reads): a partial send, the
        # rest through the transport; the small ones behind them must not overtake it
        import socket as _socket
        proto.transport.get_extra_info("socket").setsockopt(
            _socket.SOL_SOCKET, _socket.SO_SNDBUF, 16384)
        for size in (3 << 20, 5 << 20):
            big = "".join(random.choice("abcdef") for _ in range(64)) * (size // 64)
            await cur.execute("SELECT LENGTH(%s), MD5(%s), %s", (big, big, size))
            import hashlib
            assert await cur.fetchall() == (
                (len(big), hashlib.md5(big.encode()).hexdigest(), size),)
            if kind == "asyncio":
                # the kernel took part of it; the transport wrote the rest
                assert proto._wdirty == 1
            for i in range(5):
                await _tagged(conn)
        # several large statements queued at once: each write waits for the last one's
        # bytes to leave the transport before the socket is written directly again
        curs = [conn.cursor() for _ in range(4)]
        async with conn.pipeline():
            for i, c in enumerate(curs):
                await c.execute("SELECT %s, LENGTH(%s)", (i, "q" * ((2 << 20) + i)))
        for i, c in enumerate(curs):
            assert await c.fetchall() == ((i, (2 << 20) + i),)
        # an unbuffered result the task reads slowly: reading is held above HIGH_WATER
        # (the kernel's buffers hold the server back) and resumed by the next read
        ss = conn.cursor(acur.SSCursor)
        await ss.execute("SELECT seq, REPEAT('h', 1000) FROM seq_1_to_20000")
        first = await ss.fetchone()
        assert first == (1, "h" * 1000)
        for _ in range(100):   # the server sends on: above HIGH_WATER reading stops
            if proto._held:
                break
            await asyncio.sleep(0.05)
        assert proto._held == 1
        rest = await ss.fetchall()
        assert len(rest) == 19999 and rest[-1] == (20000, "h" * 1000)
        await _tagged(conn)   # reading resumed (held again at most by the last bytes)
    finally:
        conn.close()
    # the reader left the loop with the stream: nothing calls into a closed engine
    assert proto._reader == 0 and proto._state != 0


def test_c_stream_reader_direct_writes_and_held_reads(run, conn_kwargs):
    run(_stream_modes, conn_kwargs, run.kind)


async def _stream_dies(conn_kwargs, root_kwargs):
    conn = await mysqlc.aio.connect(**conn_kwargs)
    proto = conn._sync_obj._proto
    tid = conn.thread_id()
    killer = mysqlc.connect(**root_kwargs)
    try:
        kill_connection(killer, tid)
    finally:
        killer.close()
    await asyncio.sleep(0.2)   # the end of the stream reaches the reader
    with pytest.raises(mysqlc.OperationalError) as info:
        await conn.cursor().execute("SELECT 1")
    assert info.value.args[0] in (2006, 2013)
    assert proto._reader == 0
    conn.close()


def test_c_stream_end_of_stream(run, conn_kwargs, root_conn_kwargs):
    """The server ends the connection between statements: the C reader sees the end of
    the stream, leaves the loop, and the next statement raises a lost connection."""
    run(_stream_dies, conn_kwargs, root_conn_kwargs)


async def _waiter_protocol(conn_kwargs):
    conn = await mysqlc.aio.connect(**conn_kwargs)
    proto = conn._sync_obj._proto
    loop = asyncio.get_running_loop()
    try:
        w = proto.wait_future()           # an idle connection: nothing settles it
        assert type(w).__name__ == "AioWaiter" and asyncio.isfuture(w)
        assert w.get_loop() is loop and not w.done() and not w.cancelled()
        with pytest.raises(asyncio.InvalidStateError):
            w.result()
        seen = []
        w.add_done_callback(seen.append)
        w.add_done_callback(lambda f: seen.append("second"))
        assert w.remove_done_callback(seen.append) == 1
        assert w.cancel("why") is True and w.cancel() is False
        assert w.cancelled() and w.done() and seen == []   # scheduled, not run inline
        await asyncio.sleep(0)
        assert seen == ["second"]
        with pytest.raises(asyncio.CancelledError):
            w.result()
        # set_result from inside a task: its callbacks through call_soon, as asyncio's
        w = proto.wait_future()
        w.set_result(5)
        with pytest.raises(asyncio.InvalidStateError):
            w.set_result(6)
        assert await w == 5 and w.exception() is None
        w = proto.wait_future()
        done, pending = await asyncio.wait({w}, timeout=0.05)
        assert not done and pending == {w}
        w.cancel()
        # a task awaiting it is cancelled: CancelledError at its await
        w = proto.wait_future()
        task = asyncio.ensure_future(_await(w))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert w.cancelled()
        proto._waiter = None
        await _tagged(conn)
    finally:
        conn.close()


async def _await(w):
    return await w


def test_c_stream_waiter_is_a_future(run, conn_kwargs):
    """wait_future()'s AioWaiter (src/aio_stream.c) as asyncio code uses a future:
    callbacks, cancel, set_result, asyncio.wait, a cancelled awaiting task.  Only the
    stream's reader runs its callbacks at once (the task's wake-up in the same turn of
    the loop); everything else schedules them as asyncio.Future does."""
    run(_waiter_protocol, conn_kwargs)


_ctx_var = contextvars.ContextVar("_ctx_var", default="unset")


async def _waiter_context(conn_kwargs):
    conn = await mysqlc.aio.connect(**conn_kwargs)
    try:
        async def one(tag):
            _ctx_var.set(tag)
            cur = conn.cursor()
            await cur.execute("SELECT SLEEP(0.05), %s", (tag,))
            assert await cur.fetchall() == ((0, tag),)
            return _ctx_var.get()   # the task resumed in its own context
        results = []
        for tag in ("a", "b", "c"):
            results.append(await asyncio.create_task(one(tag)))
        assert results == ["a", "b", "c"] and _ctx_var.get() == "unset"
    finally:
        conn.close()


def test_c_stream_waiter_wakes_the_task_in_its_context(run, conn_kwargs):
    run(_waiter_context, conn_kwargs)


_EXIT_SCRIPT = r"""
import asyncio, json, sys
import mysqlc.aio
kw, kind, exc = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]

async def main():
    conn = await mysqlc.aio.connect(**kw)
    cur = conn.cursor()
    await cur.execute("SELECT 1")
    raise {"ki": KeyboardInterrupt, "se": SystemExit}[exc]("out")

if kind == "uvloop":
    import uvloop
    factory = uvloop.new_event_loop
else:
    factory = asyncio.new_event_loop
try:
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main())
except BaseException as e:
    print("LEFT", type(e).__name__, flush=True)
"""


@pytest.mark.parametrize("exc", ["ki", "se"])
def test_c_stream_task_exit_leaves_the_loop(run, conn_kwargs, exc):
    """KeyboardInterrupt / SystemExit raised by a task the stream's reader woke (inside
    uvloop's buffer_updated, or asyncio's reader callback) leaves asyncio.run(), as it
    does from a task woken by call_soon: it is not taken for a transport's error and the
    loop does not go on forever (a review helper's finding)."""
    import json
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT, json.dumps(conn_kwargs),
                           run.kind, exc], capture_output=True, text=True, timeout=30)
    name = {"ki": "KeyboardInterrupt", "se": "SystemExit"}[exc]
    assert "LEFT %s" % name in proc.stdout, proc.stdout + proc.stderr


async def _waiter_edges(conn_kwargs):
    conn = await mysqlc.aio.connect(**conn_kwargs)
    proto = conn._sync_obj._proto
    try:
        # two coroutines awaiting one waiter both get its result
        w = proto.wait_future()
        both = asyncio.gather(_await(w), _await(w))
        await asyncio.sleep(0)
        w.set_result(5)
        assert await both == [5, 5]
        # gather() over a cancelled one asks it for its CancelledError
        w = proto.wait_future()
        g = asyncio.gather(w)
        w.cancel("why")
        with pytest.raises(asyncio.CancelledError):
            await g
        proto._waiter = None
        # the reader completes a waiter whose first callback raises KeyboardInterrupt:
        # it leaves the loop, and the other callbacks still run (through call_soon)
        ran = []

        def interrupt(f):
            raise KeyboardInterrupt

        assert conn._sync_obj._conn.send_ping_nowait()
        w = proto.wait_future()
        w.add_done_callback(interrupt)
        w.add_done_callback(lambda f: ran.append(f.result()))
        return conn, ran, w
    except BaseException:
        conn.close()
        raise


def test_c_stream_waiter_edges(run, conn_kwargs):
    state = {}

    async def body():
        state["conn"], state["ran"], w = await _waiter_edges(conn_kwargs)
        await asyncio.sleep(5)   # the reader's KeyboardInterrupt ends this first
    with pytest.raises(KeyboardInterrupt):
        run(body)
    assert state["ran"] == [0]
    # the ping's answer was taken by nobody: the connection is out of step no more than
    # a cancelled statement; it is closed here
    state["conn"].close()
    # a stream made bare, without a loop: an error, not a crash
    with pytest.raises(RuntimeError):
        mysqlc._core.AioStream().wait_future()
