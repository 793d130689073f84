"""``aiomysql.pool`` of the aiomysql flavour: :func:`create_pool` and :class:`Pool`.

The pool is :class:`mysqlc.aio.pool.Pool` (its rules: docs/asyncio.md and
docs/compat.md); its connections are this flavour's (:func:`mysqlc.aiomysql.connect`,
with the pool's `echo`, as aiomysql passes it on).
"""

from __future__ import annotations

from typing import Any

from ..aio.pool import Pool, _PoolContext
from .connection import _connect_flavour

__all__ = ["Pool", "create_pool"]


def create_pool(minsize: int = 1, maxsize: int = 10, echo: bool = False,
                pool_recycle: float = -1, loop: Any = None, **kwargs: Any) -> _PoolContext:
    """aiomysql's ``create_pool``: ``pool = await create_pool(...)`` or ``async with
    create_pool(...) as pool``; `kwargs` are :func:`mysqlc.aiomysql.connect`'s, `loop`
    is accepted (the running loop is used).  See :func:`mysqlc.aio.create_pool` for
    the parameters and errors."""
    from ..aio import pool as _pool

    async def connect(conn_kwargs: dict) -> Any:
        return await _connect_flavour(dict(conn_kwargs, echo=echo))
    return _pool.create_pool(minsize, maxsize, echo, pool_recycle,   # type: ignore[misc]
                             _flavour=connect, **kwargs)
