"""The aiomysql flavour (``mysqlc.aiomysql``, ``mysqlc.install_as_aiomysql()``): each
semantic it adds over mysqlc.aio, on the real server.  aiomysql's own suite runs
against it with tools/aiomysql-suite.sh (a dev tool)."""

import asyncio
import logging
import sys
import warnings

import pytest

import mysqlc
import mysqlc.aio
from mysqlc import aiomysql as am
from mysqlc.aiomysql import cursors as amc
from mysqlc.constants import FIELD_TYPE
from test_statement_path import _Switches

BOUND = 30.0   # seconds one test's coroutine may take


def run(fn, *args):
    async def bounded():
        async with asyncio.timeout(BOUND):
            return await fn(*args)
    return asyncio.run(bounded())


@pytest.fixture
def kw(server):
    """aiomysql's connect() keywords for the test server (TCP)."""
    return {"host": server.host, "port": server.port, "user": server.user,
            "password": server.password, "db": server.database}


def _aiomysql_modules():
    return {k: v for k, v in sys.modules.items()
            if k == "aiomysql" or k.startswith("aiomysql.")}


def test_install_as_aiomysql_registers_the_modules():
    saved = _aiomysql_modules()
    try:
        top = mysqlc.install_as_aiomysql()
        import aiomysql
        import aiomysql.connection
        import aiomysql.cursors
        import aiomysql.pool
        assert aiomysql is top and aiomysql.mysqlc_flavour
        assert aiomysql.cursors.DictCursor is amc.DictCursor
        assert aiomysql.cursors.DeserializationCursor is amc.DeserializationCursor
        assert aiomysql.connection.Connection is am.Connection
        assert aiomysql.pool.Pool is mysqlc.aio.Pool
        assert aiomysql.OperationalError is mysqlc.OperationalError
        assert aiomysql.__version__ == "0.3.2"
        assert mysqlc.install_as_aiomysql() is top   # again: nothing changes
        with pytest.raises(TypeError, match="dict can not be used"):
            aiomysql.escape_dict({"a": 1}, "utf8")
    finally:
        for k in list(_aiomysql_modules()):
            del sys.modules[k]
        sys.modules.update(saved)


def test_connect_defaults_and_host_info(kw, server):
    async def go():
        async with am.connect(**kw) as conn:
            assert isinstance(conn, am.Connection)
            assert conn.get_host_info() == "socket %s:%d" % (server.host, server.port)
            assert conn.host_info == conn.get_host_info()
            assert conn.echo is False
            cur = await conn.cursor()
            assert isinstance(cur, amc.Cursor) and cur.echo is False
            # aiomysql turns multiple statements on
            await cur.execute("SELECT 1; SELECT 2")
            assert await cur.fetchall() == ((1,),)
            assert await cur.nextset()
            assert await cur.fetchall() == ((2,),)
            # no TLS unless ssl is given
            await cur.execute("SHOW STATUS LIKE 'Ssl_cipher'")
            assert (await cur.fetchone())[1] == ""
        unix = {k: v for k, v in kw.items() if k not in ("host", "port")}
        async with am.connect(unix_socket=server.unix_socket, **unix) as conn:
            assert conn.get_host_info() == "Localhost via UNIX socket: %s" % server.unix_socket
    run(go)


def test_unknown_database_is_1049(kw):
    async def go():
        with pytest.raises(mysqlc.OperationalError) as info:
            await am.connect(**dict(kw, db="no_such_db_for_aiomysql_flavour"))
        assert info.value.args[0] in (1049, 1044)
    run(go)


def test_escape_returns_str(kw):
    async def go():
        async with am.connect(**kw) as conn:
            assert conn.escape("foo'bar") == "'foo\\'bar'"
            assert conn.literal("foo'bar") == "'foo\\'bar'"
            assert conn.escape_string("a'b") == "a\\'b"
            assert conn.escape(b"a'\x00") == "_binary'a\\'\\0'"
            assert conn.escape(5) == "5"
            assert conn.escape((1, "x")) == "(1,'x')"
            cur = await conn.cursor()
            # bytes as PyMySQL's escape_bytes_prefixed: non-ASCII bytes surrogate-escaped
            assert conn.escape(b"\xff") == "_binary'\udcff'"
            await cur.execute("SELECT %s", (b"\xff\x00'",))
            assert await cur.fetchone() == (b"\xff\x00'",)
            await cur.execute("SET sql_mode='NO_BACKSLASH_ESCAPES'")
            assert conn.escape("foo'bar") == "'foo''bar'"
    run(go)


def test_fetch_result_types(kw):
    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor()
            await cur.execute("DO 1")
            assert await cur.fetchall() == []
            assert await cur.fetchmany() == []
            assert await cur.fetchone() is None
            await cur.execute("SELECT 1 UNION SELECT 2")
            assert await cur.fetchmany(5) == ((1,), (2,))
            assert await cur.fetchmany(5) == ()
            dcur = await conn.cursor(am.DictCursor)
            await dcur.execute("SELECT 1 AS a UNION SELECT 2")
            rows = await dcur.fetchall()
            assert type(rows) is list and rows == [{"a": 1}, {"a": 2}]
            await dcur.execute("DO 1")
            assert await dcur.fetchmany() == []
            scur = await conn.cursor(am.SSCursor)
            await scur.execute("SELECT 1 UNION SELECT 2 UNION SELECT 3")
            assert await scur.fetchmany(2) == [(1,), (2,)]
            assert await scur.fetchmany(2) == [(3,)]
            assert await scur.fetchmany(2) == []
            # async for, and a fetch after a loop left rows it read ahead
            await scur.execute("SELECT seq FROM seq_1_to_1000")
            seen = [r async for r in scur]
            assert len(seen) == 1000 and seen[-1] == (1000,)
            await scur.execute("SELECT seq FROM seq_1_to_1000")
            async for r in scur:
                if r == (10,):
                    break
            rest = await scur.fetchmany(500)
            assert rest[0] == (11,) and len(rest) == 500
            await scur.close()
    run(go)


def test_lastrowid_and_rownumber(kw):
    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor()
            assert cur.lastrowid is None and cur.rownumber == 0
            await cur.execute("CREATE TEMPORARY TABLE t_am (id INT AUTO_INCREMENT PRIMARY "
                              "KEY, v INT)")
            await cur.execute("INSERT INTO t_am (v) VALUES (1), (2)")
            assert cur.lastrowid == 1
            await cur.execute("SELECT * FROM t_am")
            assert cur.lastrowid is None and cur.rownumber == 0
            await cur.fetchone()
            assert cur.rownumber == 1
    run(go)


def test_cursor_closed_connection_and_setoutputsizes(kw):
    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor()
            assert cur.closed is False and cur.connection is conn
            cur.setoutputsizes(10)
            cur.setinputsizes(10)
            await cur.close()
            assert cur.closed is True and cur.connection is None
            with pytest.raises(mysqlc.ProgrammingError):
                await cur.execute("SELECT 1")
            # mysqlc.aio's cursors have ``closed`` too
            acon = await mysqlc.aio.connect(host=kw["host"], port=kw["port"],
                                            user=kw["user"], password=kw["password"])
            acur = acon.cursor()
            assert acur.closed is False
            await acur.close()
            assert acur.closed is True
            await acon.ensure_closed()
    run(go)


def test_cursor_class_checks_and_closed_connection(kw):
    async def go():
        conn = await am.connect(**kw)
        with pytest.raises(TypeError, match="subclass of Cursor"):
            await conn.cursor(mysqlc.aio.Cursor)
        with pytest.raises(TypeError, match="subclass of Cursor"):
            await conn.cursor(object)
        async with conn.cursor() as cur:
            await cur.execute("SELECT 1")
            assert await cur.fetchone() == (1,)
        conn.close()
        with pytest.raises(mysqlc.InterfaceError):
            await conn.cursor()
    run(go)


def test_cursorclass_set_on_the_connection(kw):
    async def go():
        async with am.connect(**kw) as conn:
            conn.cursorclass = am.DictCursor
            async with conn.cursor() as cur:
                assert isinstance(cur, am.DictCursor)
                await cur.execute("SELECT 1 AS a")
                assert await cur.fetchall() == [{"a": 1}]
            with pytest.raises(TypeError, match="subclass of Cursor"):
                conn.cursorclass = mysqlc.aio.Cursor
            assert isinstance(await conn.cursor(), am.DictCursor)
    run(go)


def test_mixed_cursor_classes(kw):
    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor(am.DictCursor, am.SSCursor)
            assert isinstance(cur, am.DictCursor) and isinstance(cur, am.SSCursor)
            assert type(cur).__name__ == "DictSSCursor"
            await cur.execute("SELECT 1 AS a UNION SELECT 2")
            assert cur.sync._unbuffered
            assert [row async for row in cur] == [{"a": 1}, {"a": 2}]
            again = await conn.cursor(am.DictCursor, am.SSCursor)
            assert type(again) is type(cur)
            dser = await conn.cursor(amc.DeserializationCursor, am.DictCursor)
            await dser.execute("SELECT '[1]' AS j, 2 AS n")
            # not a JSON column (a string literal): kept as the text
            assert await dser.fetchall() == [{"j": "[1]", "n": 2}]
    run(go)


def test_deserialization_of_json_columns():
    # what DeserializationCursor does to a row whose description says JSON (MariaDB
    # sends its JSON columns as LONGTEXT, so its server never says JSON)
    desc = (("j", FIELD_TYPE.JSON), ("s", FIELD_TYPE.VAR_STRING), ("bad", FIELD_TYPE.JSON))
    cols = amc._json_columns(desc)
    assert cols == [0, 2]
    assert amc._deserialize(('{"a": [1]}', '{"a": 1}', "not json"), cols) == \
        ({"a": [1]}, '{"a": 1}', "not json")
    assert amc._deserialize({"j": "[1, 2]", "s": "[3]", "bad": None}, cols) == \
        {"j": [1, 2], "s": "[3]", "bad": None}
    assert amc._deserialize(None, cols) is None


def test_custom_dict_type(kw):
    class MyDict(dict):
        pass

    class MyDictCursor(am.DictCursor):
        dict_type = MyDict

    class MySSDictCursor(am.SSDictCursor):
        dict_type = MyDict

    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor(MyDictCursor)
            await cur.execute("SELECT 1 AS a")
            row = await cur.fetchone()
            assert type(row) is MyDict and row == {"a": 1}
            scur = await conn.cursor(MySSDictCursor)
            await scur.execute("SELECT 1 AS a UNION SELECT 2")
            rows = [r async for r in scur]
            assert [type(r) for r in rows] == [MyDict, MyDict]
    run(go)


def test_ping_reconnects_after_server_kill(kw, root_conn_kwargs):
    async def go():
        conn = await am.connect(**kw)
        first = conn.thread_id()
        root = mysqlc.connect(**root_conn_kwargs)
        root.cursor().execute("KILL %d" % first)
        root.close()
        await asyncio.sleep(0.2)
        await conn.ping()                    # aiomysql's default reconnect=True
        assert conn.thread_id() != first and not conn.closed
        cur = await conn.cursor()
        await cur.execute("SELECT CONNECTION_ID()")
        assert (await cur.fetchone())[0] == conn.thread_id()
        second = conn.thread_id()
        root = mysqlc.connect(**root_conn_kwargs)
        root.cursor().execute("KILL %d" % second)
        root.close()
        await asyncio.sleep(0.2)
        with pytest.raises(mysqlc.OperationalError):
            await conn.ping(False)
        conn.close()
        await conn.ping()                    # closed by the user: opened again
        assert not conn.closed
        await conn.ensure_closed()
    run(go)


def test_ping_without_reconnect_on_closed_connection(kw):
    async def go():
        conn = await am.connect(**kw)
        await conn.ensure_closed()
        with pytest.raises(mysqlc.Error, match="Already closed"):
            await conn.ping(reconnect=False)
    run(go)


def test_server_warnings_are_emitted(kw):
    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor()
            with pytest.warns(mysqlc.Warning, match="Truncated incorrect"):
                await cur.execute("SELECT CAST('x1' AS SIGNED)")
            assert await cur.fetchone() == (0,)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                await cur.execute("SELECT 1")   # none: nothing emitted
    run(go)


def test_unbuffered_scroll_and_discard_warning(kw):
    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor(am.SSCursor)
            await cur.execute("SELECT seq FROM seq_0_to_9")
            await cur.scroll(3, mode="absolute")
            assert await cur.fetchone() == (3,)
            await cur.scroll(2)
            assert await cur.fetchone() == (6,)
            with pytest.raises(mysqlc.NotSupportedError):
                await cur.scroll(1, mode="absolute")
            other = await conn.cursor()
            with pytest.warns(UserWarning, match="Previous unbuffered result"):
                await other.execute("SELECT 1")
            assert await other.fetchone() == (1,)
    run(go)


def test_async_with_connection_closes_on_error(kw):
    async def go():
        conn = None
        with pytest.raises(ZeroDivisionError):
            async with am.connect(**kw) as conn:
                1 / 0
        assert conn is not None and conn.closed
    run(go)


def test_echo_logs_statements(kw, caplog):
    async def go():
        async with am.connect(echo=True, **kw) as conn:
            assert conn.echo is True
            cur = await conn.cursor()
            assert cur.echo is True
            with caplog.at_level(logging.INFO, logger="aiomysql"):
                await cur.execute("SELECT %s", (7,))
            assert "SELECT %s" in caplog.messages and "(7,)" in caplog.messages
    run(go)


def test_set_charset_and_pool(kw):
    async def go():
        async with am.connect(**kw) as conn:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                await conn.set_charset("latin1")
            assert conn.character_set_name() == "latin1"
        async with am.create_pool(minsize=1, maxsize=2, echo=True, **kw) as pool:
            async with pool.acquire() as conn:
                assert isinstance(conn, am.Connection) and conn.echo is True
                cur = await conn.cursor(am.DictCursor)
                await cur.execute("SELECT 1 AS a")
                assert await cur.fetchall() == [{"a": 1}]
    run(go)


def test_load_local_disabled_is_runtime_error(kw, tmp_path):
    from mysqlc.constants import CLIENT
    data = tmp_path / "rows.txt"
    data.write_text("1\n2\n")

    async def go():
        async with am.connect(client_flag=CLIENT.LOCAL_FILES, **kw) as conn:
            cur = await conn.cursor()
            await cur.execute("CREATE TEMPORARY TABLE t_li (a INT)")
            with pytest.raises(RuntimeError, match="local_infile option is false") as info:
                await cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE t_li", (str(data),))
            assert isinstance(info.value, mysqlc.OperationalError)
            assert info.value.args[0] == 2068
            await cur.execute("SELECT COUNT(*) FROM t_li")   # still in sync
            assert await cur.fetchone() == (0,)
        async with am.connect(local_infile=True, **kw) as conn:
            cur = await conn.cursor()
            await cur.execute("CREATE TEMPORARY TABLE t_li (a INT)")
            await cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE t_li", (str(data),))
            await cur.execute("SELECT COUNT(*) FROM t_li")
            assert await cur.fetchone() == (2,)
    run(go)


def test_charset_utf8_is_reported_as_given(kw):
    async def go():
        async with am.connect(charset="utf8", **kw) as conn:
            assert conn.charset == "utf8" and conn.character_set_name() == "utf8"
            cur = await conn.cursor()
            await cur.execute("SELECT @@character_set_client, %s", ("\U0001F600",))
            assert await cur.fetchone() == ("utf8mb4", "\U0001F600")
            await conn.set_charset("latin1")
            assert conn.charset == "latin1" and conn.character_set_name() == "latin1"
    run(go)


def test_buffered_statements_switch_no_greenlet(kw):
    """A buffered cursor's execute() of this flavour (Cursor, DictCursor,
    DeserializationCursor, a custom dict_type) is driven by the event loop as
    mysqlc.aio's (no switch into the connection's greenlet), with PyMySQL's result
    attributes (lastrowid None after a result set, ``_executed`` str) and aiomysql's
    warnings; a statement with warnings runs SHOW WARNINGS in the greenlet."""
    import collections

    class Ordered(am.DictCursor):
        dict_type = collections.OrderedDict

    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor()
            await cur.execute("SELECT 1")   # the escaping mode confirmed by now
            await cur.execute("CREATE TEMPORARY TABLE t_sw "
                              "(id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
            with _Switches(conn) as sw:
                got = []
                for cls in (am.Cursor, am.DictCursor, amc.DeserializationCursor, Ordered):
                    cur = await conn.cursor(cls)
                    await cur.execute("SELECT %s AS a, %s AS j", (5, '[1]'))
                    got.append((await cur.fetchall(), cur.rowcount, cur.lastrowid,
                                cur._executed))
                    await cur.execute("INSERT INTO t_sw (v) VALUES (%s)", (1,))
                    got.append((cur.rowcount, cur.lastrowid))
            assert sw.count == 0
            assert got[0] == (((5, '[1]'),), 1, None, "SELECT 5 AS a, '[1]' AS j")
            assert got[2][0] == [{"a": 5, "j": "[1]"}]
            assert got[4][0] == ((5, "[1]"),)   # (MariaDB has no JSON column type)
            assert got[6][0] == [collections.OrderedDict([("a", 5), ("j", "[1]")])]
            assert type(got[6][0][0]) is collections.OrderedDict
            assert [g[1] for g in got[1::2]] == [1, 2, 3, 4]
            cur = await conn.cursor()
            with pytest.warns(mysqlc.Warning, match="Truncated incorrect"):
                await cur.execute("SELECT CAST('x1' AS SIGNED)")
            assert await cur.fetchone() == (0,)
    run(go)


def test_kept_statement_bytes_follow_each_connections_codec(kw):
    """The bytes of a parameterless statement, kept between executes, are keyed by the
    codec that wrote them: a flavour connection whose PyMySQL encoding stayed utf-8
    after SET NAMES latin1, another opened with charset latin1 and a mysqlc.aio one
    each send the text in their own codec (a cache entry of one is never sent by the
    other)."""
    text = "SELECT 'é' AS u, HEX('é') AS h"

    async def go():
        a = await am.connect(**kw)
        cur = await a.cursor()
        await cur.execute("SET NAMES latin1")
        await cur.execute("SELECT %s AS x", ("a\\b",))
        for _ in range(2):
            await cur.execute(text)
            # PyMySQL's encoding is the connect-time one: utf-8 bytes, read as latin1
            assert await cur.fetchall() == (("Ã©", "C3A9"),)
        a.close()
        b = await am.connect(charset="latin1", **kw)
        cur = await b.cursor()
        for _ in range(2):
            await cur.execute(text)
            assert await cur.fetchall() == (("é", "E9"),)
        b.close()
        aio_kw = dict(kw)
        aio_kw["database"] = aio_kw.pop("db")
        for charset, hexed in (("utf8mb4", "C3A9"), ("latin1", "E9")):
            c = await mysqlc.aio.connect(charset=charset, **aio_kw)
            ccur = c.cursor()
            for _ in range(2):
                await ccur.execute(text)
                assert await ccur.fetchall() == (("é", hexed),)
            c.close()
    run(go)


def test_unbuffered_fetches_switch_no_greenlet(kw):
    """This flavour's SSCursor and SSDictCursor (a custom dict_type too) fetch from the
    event loop (no switch into the connection's greenlet) with the PyMySQL flavour's
    fetch semantics: the same rows, rownumber and rowcount as the sync
    ``mysqlc.pymysql`` cursors, ``[]`` at the end."""
    import collections

    import mysqlc.pymysql

    class Ordered(am.SSDictCursor):
        dict_type = collections.OrderedDict

    text = "SELECT seq AS n, CONCAT('r', seq) AS s FROM seq_1_to_3000"

    def sync_steps(cls):
        c = mysqlc.pymysql.connect(host=kw["host"], port=kw["port"], user=kw["user"],
                                   password=kw["password"], database=kw["db"])
        try:
            cur = c.cursor(cls)
            cur.execute(text)
            out = [cur.fetchone(), cur.rownumber, cur.fetchmany(5), cur.rownumber]
            out += [len(cur.fetchall()), cur.rownumber, cur.fetchmany(), cur.fetchone()]
            assert out[6] == ()
            out[6] = []   # aiomysql's fetchmany() at the end (PyMySQL's: ())
            return out
        finally:
            c.close()
    expected = {"t": sync_steps(mysqlc.pymysql.cursors.SSCursor),
                "d": sync_steps(mysqlc.pymysql.cursors.SSDictCursor)}

    async def go():
        async with am.connect(**kw) as conn:
            cur = await conn.cursor()
            await cur.execute("SELECT 1")   # the escaping mode confirmed by now
            with _Switches(conn) as sw:
                for cls, key in ((am.SSCursor, "t"), (am.SSDictCursor, "d"),
                                 (Ordered, "o")):
                    cur = await conn.cursor(cls)
                    await cur.execute(text)
                    got = [await cur.fetchone(), cur.rownumber, await cur.fetchmany(5),
                           cur.rownumber]
                    got += [len(await cur.fetchall()), cur.rownumber,
                            await cur.fetchmany(), await cur.fetchone()]
                    if key == "o":
                        assert type(got[0]) is collections.OrderedDict
                        assert [dict(r) for r in got[2]] == expected["d"][2]
                        got[0], got[2] = dict(got[0]), [dict(r) for r in got[2]]
                        key = "d"
                    assert got == expected[key], cls
                    await cur.execute(text)
                    rows = [r async for r in cur]
                    assert len(rows) == 3000 and cur.rownumber == 3000
                    await cur.close()
            assert sw.count == 0
    run(go)
