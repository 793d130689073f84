"""``await mysqlc.aio.read_sql(...)``: :func:`mysqlc.read_sql` for asyncio callers."""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any, Literal, Union, overload

from .. import columnar

if TYPE_CHECKING:
    import numpy
    import pandas
    import polars
    import pyarrow

    from .connection import Connection

    #: a mysqlc.aio connection or a DSN; the keyword arguments are mysqlc.read_sql's
    _Source = Union[Connection, str]


@overload
async def read_sql(source: _Source, sql: str, return_type: Literal["arrow"] = "arrow",
                   **kwargs: Any) -> pyarrow.Table: ...
@overload
async def read_sql(source: _Source, sql: str, return_type: Literal["pandas"],
                   **kwargs: Any) -> pandas.DataFrame: ...
@overload
async def read_sql(source: _Source, sql: str, return_type: Literal["polars"],
                   **kwargs: Any) -> polars.DataFrame: ...
@overload
async def read_sql(source: _Source, sql: str, return_type: Literal["numpy"],
                   **kwargs: Any) -> dict[str, numpy.ndarray[Any, Any]]: ...
@overload
async def read_sql(source: _Source, sql: str, return_type: str, **kwargs: Any) -> Any: ...


async def read_sql(source: Any, sql: str, return_type: str = "arrow", **kwargs: Any) -> Any:
    """Run :func:`mysqlc.read_sql` (same arguments, result and errors) without blocking
    the event loop.

    `source`: a :class:`mysqlc.aio.Connection` -- the query runs on it, in its greenlet
    (its session, transaction and temporary tables are seen) -- or a DSN string.  A DSN,
    and a partitioned read (``partitions`` > 1, which opens a connection per partition
    and decodes them in parallel threads), run in the loop's default executor on sync
    connections of their own."""
    from .connection import Connection
    partitioned = (kwargs.get("partitions") or 1) > 1
    if isinstance(source, Connection) and not partitioned:
        return await source._worker.run(columnar.read_sql, source.sync, sql, return_type,
                                        **kwargs)
    if isinstance(source, Connection):
        # partitions reuse its parameters, not its stream: the range query too runs on a
        # sync connection opened like it (the aio one may be used only in its greenlet)
        like = source.sync

        def call() -> Any:
            conn = columnar._open_like(like)
            try:
                return columnar.read_sql(conn, sql, return_type, **kwargs)
            finally:
                conn.close()
    else:
        call = functools.partial(columnar.read_sql, source, sql, return_type, **kwargs)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, call)
