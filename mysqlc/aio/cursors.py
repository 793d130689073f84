"""The asyncio cursors: shells over :mod:`mysqlc.cursors`' classes.

Each shell holds a sync cursor and runs its I/O methods in the connection's greenlet
(:mod:`mysqlc.aio._runner`), so formatting, executemany batching (MariaDB bulk), result
state, conversions and errors are the sync cursor's.  Buffered cursors keep their rows
in memory after ``execute``: their fetch methods return at once (still awaitable, as in
aiomysql).  Unbuffered ones (:class:`SSCursor`, :class:`SSDictCursor`) read rows from
the stream as they are fetched, with the sync cursors' bounded memory.
"""

from __future__ import annotations

import collections
from typing import Any, Optional

from .. import cursors as _sync
from .connection import install

_END = object()


class _RecordBatches:
    """``async for batch in cursor.fetch_record_batches(n)``: each batch is read in the
    connection's greenlet."""

    def __init__(self, worker: Any, batches: Any) -> None:
        self._worker = worker
        self._batches = batches

    def __aiter__(self) -> "_RecordBatches":
        return self

    async def __anext__(self) -> Any:
        batch = await self._worker.run(next, self._batches, _END)
        if batch is _END:
            raise StopAsyncIteration
        return batch


class BaseCursor:
    """What every asyncio cursor has; see :class:`mysqlc.cursors.BaseCursor` for the
    semantics of each method and attribute (the awaitable ones are coroutines here).

    Attributes (plain): ``description``, ``description_flags``, ``rowcount``,
    ``lastrowid``, ``rownumber``, ``arraysize`` (settable), ``warning_count``,
    ``messages``, ``connection`` (the :class:`mysqlc.aio.Connection`).
    """

    _sync_class: type = _sync.Cursor

    def __init__(self, connection: Any, cursor: Any) -> None:
        self.connection = connection
        self._worker = connection._worker
        self._sync_obj = cursor

    @property
    def sync(self) -> Any:
        """The :mod:`mysqlc.cursors` cursor this shell drives."""
        return self._sync_obj

    @property
    def _executed(self) -> Any:
        return self._sync_obj._executed

    def fetch_record_batches(self, batch_size: Optional[int] = None, **kwargs: Any) -> Any:
        """``async for batch in cur.fetch_record_batches(n)``: pyarrow RecordBatches of
        the current result (as :meth:`mysqlc.cursors.BaseCursor.fetch_record_batches`)."""
        return _RecordBatches(self._worker,
                              self._sync_obj.fetch_record_batches(batch_size, **kwargs))

    async def close(self) -> None:
        """Awaitable :meth:`mysqlc.cursors.BaseCursor.close`: unread results of this
        cursor's statement are drained (in the connection's greenlet); with none, it
        closes at once."""
        cur = self._sync_obj
        conn = cur.connection
        if conn is not None and conn._conn is not None and conn._conn.open and conn._pending():
            await self._worker.run(cur.close)
        else:
            cur.close()

    def __await__(self) -> Any:
        # ``cur = await conn.cursor()`` (aiomysql's cursor() is awaitable) gives the cursor
        return self
        yield   # a generator: an awaitable that finishes at once

    def __aiter__(self) -> "BaseCursor":
        return self

    async def __anext__(self) -> Any:
        row = await self.fetchone()   # type: ignore[attr-defined]
        if row is None:
            raise StopAsyncIteration
        return row

    async def __aenter__(self) -> "BaseCursor":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()   # type: ignore[attr-defined]


install(BaseCursor, _sync.BaseCursor,
        awaited=("execute", "executemany", "callproc", "nextset",
                 "fetch_arrow_table", "fetchnumpy", "fetch_df", "fetch_polars",
                 "load_table"),
        plain=("mogrify", "setinputsizes", "setoutputsize", "add_attribute",
               "get_attributes", "remove_attribute", "clear_attributes"),
        attributes=("description", "description_flags", "rowcount", "lastrowid",
                    "rownumber", "warning_count", "messages"),
        settable=("arraysize", "max_stmt_length"))

_FETCH = ("fetchone", "fetchmany", "fetchall", "scroll")


class Cursor(BaseCursor):
    """Buffered, rows as tuples (:class:`mysqlc.cursors.Cursor`): the result is read
    whole by ``execute``; fetching needs no I/O."""

    _sync_class = _sync.Cursor


install(Cursor, _sync.Cursor, immediate=_FETCH)


class DictCursor(Cursor):
    """Buffered, rows as dicts (:class:`mysqlc.cursors.DictCursor`)."""

    _sync_class = _sync.DictCursor


class SSCursor(BaseCursor):
    """Unbuffered, rows as tuples (:class:`mysqlc.cursors.SSCursor`): rows are read
    from the stream as they are fetched; ``async for row in cur`` streams a result of
    any size in bounded memory."""

    _sync_class = _sync.SSCursor

    async def __anext__(self) -> Any:
        """``async for row in cur``: rows come from the sync cursor's read-ahead
        batches (``_next_batch``: one greenlet round trip per batch, as the sync
        iteration reads them).  What a loop leaves unread stays on the sync cursor
        (``_ahead``): the next fetch or loop returns it first."""
        cur = self._sync_obj
        ahead = cur._ahead
        if not ahead:
            rows = await self._worker.run(cur._next_batch)
            if not rows:
                raise StopAsyncIteration
            cur._ahead = ahead = (rows if type(rows) is collections.deque
                                  else collections.deque(rows))
        cur.rownumber += 1
        return ahead.popleft()


install(SSCursor, _sync.SSCursor, awaited=_FETCH)



class SSDictCursor(SSCursor):
    """Unbuffered, rows as dicts (:class:`mysqlc.cursors.SSDictCursor`)."""

    _sync_class = _sync.SSDictCursor


_SHELLS: dict = {}


def shell_for(cls: type) -> type:
    """The asyncio cursor class for `cls`: itself when it is one, else the shell of the
    sync class `cls` (buffered or not as `cls` is)."""
    if isinstance(cls, type) and issubclass(cls, BaseCursor):
        return cls
    if not (isinstance(cls, type) and issubclass(cls, _sync.BaseCursor)):
        raise TypeError("cursor class must be a mysqlc.aio.cursors or mysqlc.cursors "
                        "class, not %r" % (cls,))
    shell = _SHELLS.get(cls)
    if shell is None:
        base = SSCursor if getattr(cls, "_unbuffered", False) else Cursor
        shell = type(base)(cls.__name__, (base,), {"_sync_class": cls,
                                                   "__module__": __name__})
        _SHELLS[cls] = shell
    return shell


for _shell_cls in (Cursor, DictCursor, SSCursor, SSDictCursor):
    _SHELLS[_shell_cls._sync_class] = _shell_cls
del _shell_cls
