"""A typed usage sample of ``mysqlc.aio``, checked by ``mypy --strict`` (tools/typecheck.sh).

As ``usage.py`` does for the sync API: each ``assert_type`` fails the check when
mysqlc.aio's annotations give another type (``Any`` included), and each
``# type: ignore[code]`` marks a line that must stay an error (``--strict`` reports an
ignore that is no longer needed).  The generated shell methods of
:mod:`mysqlc.aio.connection` and :mod:`mysqlc.aio.cursors` are typed by their
``TYPE_CHECKING`` declarations; this file is what keeps those from drifting to ``Any``.
Nothing runs at import; :func:`run` runs the sample (all but :func:`rejected`) against a server
(``python tests/typing/usage_aio.py HOST PORT USER PASSWORD DB``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Optional

import pyarrow
from typing_extensions import assert_type

import mysqlc
import mysqlc.aio
from mysqlc.aio import Connection, Cursor, DictCursor, Pool, SSCursor, SSDictCursor
from mysqlc.aio.cursors import BaseCursor


async def connect(host: str, port: int, user: str, password: str, db: str) -> Connection:
    conn = await mysqlc.aio.connect(host=host, port=port, user=user, password=password,
                                    db=db, autocommit=True, connect_timeout=5.0)
    assert_type(conn, Connection)
    async with mysqlc.aio.connect(host=host, port=port, user=user, password=password,
                                  database=db, cursorclass=DictCursor) as other:
        assert_type(other, Connection)
    dsn = "mysql://%s:%s@%s:%d/%s" % (user, password, host, port, db)
    async with mysqlc.aio.connect(dsn, loop=None, echo=True) as by_dsn:
        assert_type(by_dsn.echo, bool)
    assert_type(conn.thread_id(), int)
    assert_type(conn.get_server_info(), str)
    assert_type(conn.open, bool)
    assert_type(conn.closed, bool)
    assert_type(conn.host, str)
    assert_type(conn.port, int)
    assert_type(conn.escape_string("it's"), bytes)
    assert_type(conn.tls_info(), Optional[dict[str, Any]])
    assert_type(await conn.stat(), str)
    assert_type(await conn.show_warnings(), tuple[tuple[Any, ...], ...])
    await conn.ping()
    await conn.autocommit(False)
    await conn.commit()
    conn.thread_id().bit_length()
    return conn


async def rows(conn: Connection) -> list[int]:
    async with conn.cursor() as base:
        assert_type(base, BaseCursor)
        assert_type(await base.execute("SELECT %s", (1,)), int)
        assert_type(await base.fetchone(), Any)
    async with conn.cursor(Cursor) as cur:
        assert_type(cur, Cursor)
        assert_type(await cur.execute("SELECT %s, %s", (1, "a")), int)
        row = await cur.fetchone()
        assert_type(row, Optional[tuple[Any, ...]])
        assert_type(await cur.fetchmany(2), tuple[tuple[Any, ...], ...])
        assert_type(await cur.fetchall(), tuple[tuple[Any, ...], ...])
        assert_type(cur.rowcount, int)
        assert_type(cur.lastrowid, Optional[int])
        assert_type(cur.description, Optional[tuple[tuple[Any, ...], ...]])
        assert_type(cur.mogrify("SELECT %s", (1,)), str)
        assert_type(await cur.executemany("INSERT INTO t VALUES (%s)", [(1,), (2,)]),
                    Optional[int])
        out: list[int] = []
        async for r in cur:
            assert_type(r, tuple[Any, ...])
            out.append(int(r[0]))
    cur2 = await conn.cursor(Cursor)   # aiomysql's awaitable cursor()
    assert_type(cur2, Cursor)
    await cur2.close()
    dcur = conn.cursor(DictCursor)
    assert_type(dcur, DictCursor)
    await dcur.execute("SELECT 1 AS id, 'x' AS name")
    drow = await dcur.fetchone()
    assert_type(drow, Optional[dict[str, Any]])
    assert_type(await dcur.fetchall(), tuple[dict[str, Any], ...])
    async for d in dcur:
        assert_type(d, dict[str, Any])
    # a sync cursor class gives its asyncio shell
    assert_type(conn.cursor(mysqlc.cursors.DictCursor), DictCursor)
    assert_type(conn.cursor(mysqlc.cursors.SSCursor), SSCursor)
    assert_type(conn.cursor(DictCursor, True), DictCursor)
    return out


async def streamed(conn: Connection) -> int:
    total = 0
    async with conn.cursor(SSCursor) as ss:
        await ss.execute("SELECT seq FROM seq_1_to_100")
        assert_type(await ss.fetchone(), Optional[tuple[Any, ...]])
        assert_type(await ss.fetchmany(10), list[tuple[Any, ...]])
        async for (n,) in ss:
            total += int(n)
    async with conn.cursor(SSDictCursor) as ssd:
        await ssd.execute("SELECT 1 AS a")
        assert_type(await ssd.fetchall(), list[dict[str, Any]])
        async for d in ssd:
            assert_type(d, dict[str, Any])
    cur = conn.cursor()
    await cur.execute("SELECT 1 AS a")
    assert_type(await cur.fetch_arrow_table(), pyarrow.Table)
    async for batch in cur.fetch_record_batches(100):
        assert_type(batch, pyarrow.RecordBatch)
    assert_type(await mysqlc.aio.read_sql(conn, "SELECT 1"), pyarrow.Table)
    return total


async def pooled(host: str, port: int, user: str, password: str, db: str) -> None:
    pool = await mysqlc.aio.create_pool(minsize=1, maxsize=4, host=host, port=port,
                                        user=user, password=password, db=db)
    assert_type(pool, Pool)
    assert_type(pool.size, int)
    assert_type(pool.freesize, int)
    async with pool.acquire() as conn:
        assert_type(conn, Connection)
        async with conn.cursor() as cur:
            await cur.execute("SELECT 1")
    conn2 = await pool.acquire()
    assert_type(conn2, Connection)
    await pool.release(conn2)
    pool.close()
    await pool.wait_closed()
    async with mysqlc.aio.create_pool(host=host, port=port, user=user, password=password,
                                      db=db) as pool2:
        assert_type(pool2, Pool)


async def tls_context(host: str, cafile: str) -> Connection:
    """aiomysql's ssl=SSLContext form type-checks as the sync API's does (not run: the
    sample's server has no TLS)."""
    import ssl
    ctx = ssl.create_default_context(cafile=cafile)
    conn = await mysqlc.aio.connect(host=host, ssl=ctx)
    pool = await mysqlc.aio.create_pool(host=host, ssl=ctx)
    pool.close()
    return conn


async def rejected(conn: Connection, host: str) -> None:
    """What the checker must refuse (never called: each line is wrong at run time)."""
    mysqlc.aio.connect(host=host, port="3307")  # type: ignore[arg-type]   # TypeError
    mysqlc.aio.connect(host=host, no_such_option=1)  # type: ignore[call-arg]
    mysqlc.aio.connect(host=host, autocommit="yes")  # type: ignore[arg-type]
    conn.commit()  # type: ignore[unused-coroutine]   # awaitable: must be awaited
    conn.open = False  # type: ignore[misc]   # read-only
    conn.cursor(dict)  # type: ignore[type-var]
    cur = conn.cursor(Cursor)
    cur.fetchone()  # type: ignore[unused-coroutine]
    await cur.execute(42)  # type: ignore[arg-type]
    row = await cur.fetchone()
    if row is not None:
        row["id"]  # type: ignore[call-overload]
    drow = await conn.cursor(DictCursor).fetchone()
    if drow is not None:
        drow[0]  # type: ignore[index]
    mysqlc.aio.create_pool(minsize="1")  # type: ignore[arg-type]
    pool = await mysqlc.aio.create_pool(host=host)
    pool.release(cur)  # type: ignore[arg-type]


async def errors(conn: Connection) -> Optional[str]:
    try:
        await conn.cursor().execute("SELECT * FROM no_such_table")
    except mysqlc.aio.ProgrammingError as exc:
        assert_type(exc.sqlstate, str)
        return exc.sqlstate
    return None


async def run(argv: list[str]) -> None:
    host, port, user, password, db = argv[1], int(argv[2]), argv[3], argv[4], argv[5]
    conn = await connect(host, port, user, password, db)
    print(await rows(conn), await streamed(conn), await errors(conn))
    await pooled(host, port, user, password, db)
    await conn.ensure_closed()


if __name__ == "__main__":
    asyncio.run(run(sys.argv))
