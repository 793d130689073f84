"""A typed usage sample of the aiomysql flavour (``mysqlc.aiomysql``), checked by
``mypy --strict`` (tools/typecheck.sh), as ``usage_aio.py`` does for mysqlc.aio: each
``assert_type`` fails the check when the flavour's annotations give another type, each
``# type: ignore[code]`` marks a line that must stay an error.  Nothing runs at import.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

from mysqlc import aiomysql
from mysqlc.aiomysql.cursors import DeserializationCursor


async def sample(host: str, port: int, user: str, password: str, db: str) -> Any:
    conn = await aiomysql.connect(host=host, port=port, user=user, password=password,
                                  db=db, echo=True, loop=None)
    assert_type(conn, aiomysql.Connection)
    assert_type(conn.echo, bool)
    assert_type(conn.get_host_info(), str)
    async with aiomysql.connect(host=host, user=user, db=db) as other:
        assert_type(other, aiomysql.Connection)
    cur = await conn.cursor()
    assert_type(cur, aiomysql.Cursor)
    async with conn.cursor(aiomysql.DictCursor) as dcur:
        assert_type(dcur, aiomysql.DictCursor)
        assert_type(await dcur.execute("SELECT %s", (1,)), int)
        row = await dcur.fetchone()
    mixed = await conn.cursor(DeserializationCursor, aiomysql.SSCursor)
    assert_type(mixed, aiomysql.Cursor)
    assert_type(mixed.closed, bool)
    await conn.ping()
    async with aiomysql.create_pool(host=host, user=user, db=db) as pool:
        assert_type(pool, aiomysql.Pool)
    conn.cursor(int)  # type: ignore[type-var]  # not a cursor class of the flavour
    conn.close()
    return row
