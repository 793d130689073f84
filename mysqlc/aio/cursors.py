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
from typing import TYPE_CHECKING, Any, Awaitable, Optional, TypeVar, Union

from .. import _core
from .. import cursors as _sync
from ..errors import NotSupportedError
from . import _statement
from .connection import install

_NOT_READY = _sync._NOT_READY
#: ``asyncio.get_running_loop() is loop`` (src/aio_call.c)
_loop_running = _core._loop_running

if TYPE_CHECKING:
    from collections.abc import Generator, Iterable, Mapping, Sequence

    import numpy
    import pandas
    import polars
    import pyarrow

    from .connection import Connection

    _C = TypeVar("_C", bound="BaseCursor")
    #: ``execute()`` parameters, as the sync cursors take them
    _Args = Union[Sequence[Any], Mapping[str, Any], Any, None]

_END = object()


class _RecordBatches:
    """``async for batch in cursor.fetch_record_batches(n)``: each batch is read in the
    connection's greenlet."""

    def __init__(self, worker: Any, batches: Any) -> None:
        self._worker = worker
        self._batches = batches

    def __aiter__(self) -> "_RecordBatches":
        return self

    async def __anext__(self) -> pyarrow.RecordBatch:
        batch = await self._worker.run(next, self._batches, _END)
        if batch is _END:
            raise StopAsyncIteration
        return batch


class BaseCursor(_core.AioCursorBase):
    """What every asyncio cursor has; see :class:`mysqlc.cursors.BaseCursor` for the
    semantics of each method and attribute (the awaitable ones are coroutines here).

    Attributes (plain): ``description``, ``description_flags``, ``rowcount``,
    ``lastrowid``, ``rownumber``, ``arraysize`` (settable), ``warning_count``,
    ``messages``, ``connection`` (the :class:`mysqlc.aio.Connection`).
    """

    _sync_class: type = _sync.Cursor

    if TYPE_CHECKING:
        # What install() gives the class (below), as a type checker sees it: the sync
        # cursor's signatures, the awaitable methods as coroutine functions.  The rows'
        # types are the subclasses'; here (the class of ``conn.cursor()`` without a
        # class) they are Any, as for mysqlc.cursors.BaseCursor.
        async def execute(self, query: Union[str, bytes], args: _Args = None, *,
                          infile: Any = None,
                          attributes: Union[Mapping[str, Any], Iterable[tuple[str, Any]],
                                            None] = None) -> int: ...
        async def executemany(self, query: Union[str, bytes],
                              args: Iterable[Union[Sequence[Any], Mapping[str, Any]]]
                              ) -> Optional[int]: ...
        async def callproc(self, procname: Union[str, bytes],
                           args: Sequence[Any] = ()) -> Sequence[Any]: ...
        async def nextset(self) -> Optional[bool]: ...
        async def fetch_arrow_table(self, batch_size: Optional[int] = None, *,
                                    decimal: str = "decimal",
                                    progress: Any = None) -> pyarrow.Table: ...
        async def fetchnumpy(self, *, decimal: str = "decimal", progress: Any = None
                             ) -> dict[str, numpy.ndarray[Any, Any]]: ...
        async def fetch_df(self, *, decimal: str = "decimal",
                           progress: Any = None) -> pandas.DataFrame: ...
        async def fetch_polars(self, *, decimal: str = "decimal",
                               progress: Any = None) -> polars.DataFrame: ...
        async def load_table(self, table: str, data: Any,
                             columns: Optional[Sequence[str]] = None,
                             **options: Any) -> int: ...
        async def fetchone(self) -> Any: ...
        async def fetchmany(self, size: Optional[int] = None) -> Sequence[Any]: ...
        async def fetchall(self) -> Sequence[Any]: ...
        async def scroll(self, value: int, mode: str = "relative") -> None: ...
        def mogrify(self, query: Union[str, bytes], args: _Args = None) -> str: ...
        def setinputsizes(self, *args: Any) -> None: ...
        def setoutputsize(self, size: Any, column: Optional[int] = None) -> None: ...
        def add_attribute(self, name: str, value: Any) -> None: ...
        def get_attributes(self) -> Optional[list[tuple[str, Any]]]: ...
        def remove_attribute(self, name: str) -> Any: ...
        def clear_attributes(self) -> None: ...
        @property
        def description(self) -> Optional[tuple[tuple[Any, ...], ...]]: ...
        @property
        def description_flags(self) -> Optional[tuple[int, ...]]: ...
        @property
        def rowcount(self) -> int: ...
        @property
        def lastrowid(self) -> Optional[int]: ...
        @property
        def rownumber(self) -> Optional[int]: ...
        @property
        def warning_count(self) -> int: ...
        @property
        def messages(self) -> list[Any]: ...
        arraysize: int
        max_stmt_length: Optional[int]
        connection: Connection

    def __init__(self, connection: Connection, cursor: _sync.BaseCursor) -> None:
        self.connection = connection
        self._worker = connection._worker
        self._sync_obj = cursor

    @property
    def sync(self) -> _sync.BaseCursor:
        """The :mod:`mysqlc.cursors` cursor this shell drives."""
        return self._sync_obj

    @property
    def _executed(self) -> Any:
        return self._sync_obj._executed

    @property
    def closed(self) -> bool:
        """True once the cursor was closed (aiomysql's ``Cursor.closed``)."""
        return self._sync_obj.connection is None

    def fetch_record_batches(self, batch_size: Optional[int] = None,
                             **kwargs: Any) -> _RecordBatches:
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
        if conn is not None:
            core = conn._conn
            if core is not None and core.unread and core.open:   # conn._pending()
                await self._worker.run(cur.close)
                return
        cur.close()

    def __await__(self: _C) -> Generator[Any, None, _C]:
        # ``cur = await conn.cursor()`` (aiomysql's cursor() is awaitable) gives the cursor
        return self
        yield   # a generator: an awaitable that finishes at once

    def __aiter__(self: _C) -> _C:
        return self

    async def __anext__(self) -> Any:
        row = await self.fetchone()
        if row is None:
            raise StopAsyncIteration
        return row

    if TYPE_CHECKING:
        # __aenter__ and __aexit__ are _core.AioCursorBase's (src/aio_pool.c): the
        # cursor itself, and close() -- without its coroutine when nothing is left
        # unread, a subclass's own close() awaited as it is
        async def __aenter__(self: _C) -> _C: ...
        async def __aexit__(self, *exc: Any) -> None: ...


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

    if TYPE_CHECKING:
        async def fetchone(self) -> Optional[tuple[Any, ...]]: ...
        async def fetchmany(self, size: Optional[int] = None
                            ) -> tuple[tuple[Any, ...], ...]: ...
        async def fetchall(self) -> tuple[tuple[Any, ...], ...]: ...
        async def __anext__(self) -> tuple[Any, ...]: ...


install(Cursor, _sync.Cursor, immediate=_FETCH)


_execute = _statement.execute
_execute.__doc__ = "%s\n\n%s" % (_execute.__doc__, Cursor.execute.__doc__)
# a method descriptor in C (src/aio_call.c) that shows _execute's signature and docstring
Cursor.execute = _core.AioMethod(_execute)   # type: ignore[assignment]


class DictCursor(Cursor):
    """Buffered, rows as dicts (:class:`mysqlc.cursors.DictCursor`)."""

    _sync_class = _sync.DictCursor

    if TYPE_CHECKING:
        async def fetchone(self) -> Optional[dict[str, Any]]: ...  # type: ignore[override]
        async def fetchmany(self, size: Optional[int] = None  # type: ignore[override]
                            ) -> tuple[dict[str, Any], ...]: ...
        async def fetchall(self) -> tuple[dict[str, Any], ...]: ...  # type: ignore[override]
        async def __anext__(self) -> dict[str, Any]: ...  # type: ignore[override]


class SSCursor(BaseCursor):
    """Unbuffered, rows as tuples (:class:`mysqlc.cursors.SSCursor`): rows are read
    from the stream as they are fetched; ``async for row in cur`` streams a result of
    any size in bounded memory.

    The event loop drives the statement and the fetches, without the connection's
    greenlet (:func:`mysqlc.aio._statement.execute_unbuffered` and ``fetch_rows``): the
    rows that have arrived are decoded in the awaiting task, which awaits the stream
    only when it needs more.  Prepared mode, server-side cursors (COM_STMT_FETCH), sync
    classes that read otherwise and the stream's errors take the greenlet's path."""

    _sync_class = _sync.SSCursor

    if TYPE_CHECKING:
        async def execute(self, query: Union[str, bytes], args: _Args = None, *,
                          infile: Any = None,
                          attributes: Union[Mapping[str, Any], Iterable[tuple[str, Any]],
                                            None] = None) -> int: ...
    else:
        execute = _statement.execute_unbuffered

    async def fetchone(self) -> Optional[tuple[Any, ...]]:
        """Awaitable :meth:`mysqlc.cursors.SSCursor.fetchone`: a row whose bytes have all
        arrived is decoded at once (``_fetchone_ready``: one row, as the sync fetchone
        reads it); otherwise the task awaits the stream for it."""
        cur = self._sync_obj
        worker = self._worker
        # (the connection's own loop running here: from another loop or thread the
        # greenlet's run() refuses the call, as it refuses every other one)
        if not worker.busy and _loop_running(worker.loop):
            row = cur._fetchone_ready()
            if row is not _NOT_READY:
                return row
        if not (type(cur).fetchone is _SYNC_FETCHONE and _pull_direct(self)):
            return await worker.run(cur.fetchone)
        rows = await _fetch_rows(self, 1)
        if not rows:
            return None
        cur.rownumber += 1
        return rows[0]

    async def fetchmany(self, size: Optional[int] = None) -> list[tuple[Any, ...]]:
        """Awaitable :meth:`mysqlc.cursors.SSCursor.fetchmany`: up to `size` (default
        :attr:`arraysize`) rows, an error after some of them raised by the next fetch."""
        cur = self._sync_obj
        if not (type(cur).fetchmany is _SYNC_FETCHMANY and _pull_direct(self)):
            return await self._worker.run(cur.fetchmany, size)
        rows = await _fetch_rows(self, size or cur.arraysize, 0, True)
        cur.rownumber += len(rows)
        return rows

    async def fetchall(self) -> list[tuple[Any, ...]]:
        """Awaitable :meth:`mysqlc.cursors.SSCursor.fetchall`: every remaining row."""
        cur = self._sync_obj
        if not (type(cur).fetchall is _SYNC_FETCHALL and _pull_direct(self)):
            return await self._worker.run(cur.fetchall)
        rows = await _fetch_rows(self, -1)
        cur.rownumber += len(rows)
        return rows

    async def scroll(self, value: int, mode: str = "relative") -> None:
        """Awaitable :meth:`mysqlc.cursors.SSCursor.scroll`: skip `value` rows forward."""
        cur = self._sync_obj
        if not (type(cur).scroll is _SYNC_SCROLL and _pull_direct(self)):
            return await self._worker.run(cur.scroll, value, mode)
        if mode != "relative" or value < 0:
            raise NotSupportedError(0, "an unbuffered cursor can only scroll forward")
        while value > 0:
            rows = await _fetch_rows(self, min(value, 10000), cur._batch_bytes)
            if not rows:
                raise IndexError("out of range")
            cur.rownumber += len(rows)
            value -= len(rows)

    async def __anext__(self) -> tuple[Any, ...]:
        """``async for row in cur``: rows come from the sync cursor's read-ahead
        batches (``_next_batch``: up to max(arraysize, 256) rows or 1 MiB, from the
        event loop as soon as some have arrived).  What a loop leaves unread stays on
        the sync cursor (``_ahead``): the next fetch or loop returns it first."""
        cur = self._sync_obj
        ahead = cur._ahead
        if not ahead:
            if type(cur)._next_batch is _SYNC_NEXT_BATCH and _pull_direct(self):
                rows = await _fetch_rows(self, max(cur.arraysize, 256), cur._batch_bytes,
                                         True, True)
            else:
                rows = await self._worker.run(cur._next_batch)
            if not rows:
                raise StopAsyncIteration
            cur._ahead = ahead = (rows if type(rows) is collections.deque
                                  else collections.deque(rows))
        cur.rownumber += 1
        return ahead.popleft()


_pull_direct = _statement._pull_direct
_fetch_rows = _statement.fetch_rows
_SYNC_FETCHONE = _sync.SSCursor.fetchone
_SYNC_FETCHMANY = _sync.SSCursor.fetchmany
_SYNC_FETCHALL = _sync.SSCursor.fetchall
_SYNC_SCROLL = _sync.SSCursor.scroll
_SYNC_NEXT_BATCH = _sync.SSCursor._next_batch


class SSDictCursor(SSCursor):
    """Unbuffered, rows as dicts (:class:`mysqlc.cursors.SSDictCursor`)."""

    _sync_class = _sync.SSDictCursor

    if TYPE_CHECKING:
        async def fetchone(self) -> Optional[dict[str, Any]]: ...  # type: ignore[override]
        async def fetchmany(self, size: Optional[int] = None  # type: ignore[override]
                            ) -> list[dict[str, Any]]: ...
        async def fetchall(self) -> list[dict[str, Any]]: ...  # type: ignore[override]
        async def __anext__(self) -> dict[str, Any]: ...  # type: ignore[override]


_SHELLS: dict[type, type] = {}


def shell_for(cls: type) -> type[BaseCursor]:
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
