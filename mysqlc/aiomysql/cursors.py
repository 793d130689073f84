"""``aiomysql.cursors`` of the aiomysql flavour: aiomysql's cursor classes.

Each class is an asyncio shell (:mod:`mysqlc.aio.cursors`) over a sync cursor of the
PyMySQL flavour (:mod:`mysqlc.pymysql.cursors`: aiomysql is PyMySQL's protocol code
made asynchronous, and shares its results), with aiomysql 0.3's differences:

* ``fetchmany()`` of a statement without a result set returns ``[]`` (PyMySQL: ``()``),
  ``fetchall()`` ``[]``; an unbuffered cursor's ``fetchmany()`` at the end ``[]``.
* Buffered ``fetch*`` return at once (still awaitable), unbuffered ones read the
  stream; ``scroll(n, "absolute")`` of an unbuffered cursor moves forward.
* :class:`DeserializationCursor`: values of JSON columns (``FIELD_TYPE.JSON`` in
  ``description``) are ``json.loads``-ed; mixed with the others as aiomysql does:
  ``conn.cursor(DeserializationCursor, DictCursor)``.
* A statement that left warnings (and no further result) emits each as a
  ``pymysql.err.Warning`` (``warnings.warn``), as aiomysql's ``_show_warnings``;
  buffered cursors only (an unbuffered result's warnings are known at its end).
* ``closed`` (True once closed), ``echo`` (the connection's; ``execute`` then logs the
  statement to the ``aiomysql`` logger), ``connection`` None once closed,
  ``setoutputsizes()``, ``rownumber`` 0 before a result.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import warnings
from typing import Any, Optional

from ..aio import cursors as _aio
from ..aio._statement import _execute_read, _pull_direct
from ..aio._statement import fetch_rows as _fetch_rows
from ..constants import FIELD_TYPE
from ..cursors import BaseCursor as _BaseCursor
from ..errors import OperationalError
from ..errors import Warning as _DBWarning
from ..pymysql import cursors as _pm
from ..pymysql.cursors import RE_INSERT_VALUES

__all__ = ["Cursor", "DictCursor", "SSCursor", "SSDictCursor", "DeserializationCursor",
           "RE_INSERT_VALUES"]

#: the logger ``echo=True`` writes statements to (aiomysql's ``aiomysql`` logger)
logger = logging.getLogger("aiomysql")


# ---------------------------------------------------------------- the sync cursors

#: CR_LOAD_DATA_LOCAL_INFILE_REJECTED, the core's error for a LOAD DATA LOCAL it refused
_INFILE_REFUSED = 2068


class LocalInfileDisabled(OperationalError, RuntimeError):
    """The server asked for a LOAD DATA LOCAL file on a connection without
    ``local_infile=True``: aiomysql raises RuntimeError("**WARN**: Received LOAD_LOCAL
    packet but local_infile option is false."); this is that RuntimeError and mysqlc's
    OperationalError 2068 at once (the connection stays usable: the core answered the
    request with an empty file)."""


class _Warns:
    """aiomysql's ``_show_warnings``: after a statement with warnings and no further
    result, SHOW WARNINGS and ``warnings.warn(message, Warning)`` for each (buffered
    cursors: an unbuffered result's warnings are known only at its end)."""

    def _emit_warnings(self) -> None:
        conn = self.connection   # type: ignore[attr-defined]
        if not self.warning_count or conn is None \
                or getattr(self, "_unbuffered", False):   # type: ignore[attr-defined]
            return
        core = conn._conn
        if core is None or not core.open or core.more_results:
            return
        owner = conn._owner
        try:
            found = conn.show_warnings()
        finally:
            conn._owner = owner
        for row in found or ():
            warnings.warn(str(row[-1]), _DBWarning, 5)

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        try:
            result = super().execute(*args, **kwargs)   # type: ignore[misc]
        except OperationalError as exc:
            _refused_infile(self, exc)
            raise
        self._emit_warnings()
        return result

    def executemany(self, *args: Any, **kwargs: Any) -> Any:
        result = super().executemany(*args, **kwargs)   # type: ignore[misc]
        self._emit_warnings()
        return result

    def nextset(self) -> Any:
        result = super().nextset()   # type: ignore[misc]
        if result:
            self._emit_warnings()
        return result


def _refused_infile(cur: Any, exc: OperationalError) -> None:
    """The core's refusal of a LOAD DATA LOCAL request on a connection without
    local_infile, as aiomysql raises it: LocalInfileDisabled (from `exc`)."""
    conn = cur.connection
    if exc.args and exc.args[0] == _INFILE_REFUSED and conn is not None \
            and not conn._local_infile:
        raise LocalInfileDisabled(_INFILE_REFUSED, "**WARN**: Received LOAD_LOCAL "
                                  "packet but local_infile option is false "
                                  "(%s)" % (exc.args[1:2] or ("",))[0]) from exc


#: what runs in the greenlet when the event loop cannot drive a statement: BaseCursor's
#: execute (the shell does the sync class's own steps around it)
_BASE_EXECUTE = _BaseCursor.execute

#: sync classes whose execute() is exactly _Warns' over _PyMySQLFetch's over
#: BaseCursor's: ``cls -> bool``
_OWN_STEPS: dict = {}


def _own_steps_only(cls: type) -> bool:
    """Does `cls` execute with the flavour's own steps only (the shell's execute then
    does them around ``_statement._execute_read``)?"""
    ok = _OWN_STEPS.get(cls)
    if ok is None:
        ok = [k for k in cls.__mro__ if "execute" in k.__dict__] == [
            _Warns, _pm._PyMySQLFetch, _BaseCursor]
        _OWN_STEPS[cls] = ok
    return ok


class _SyncCursor(_Warns, _pm.Cursor):
    _unbuffered = False

    def fetchmany(self, size: Optional[int] = None) -> Any:
        self._check_executed()
        if self._no_result():
            return []
        return super().fetchmany(size)


class _SyncDictCursor(_pm.DictCursorMixin, _SyncCursor):
    pass


class _SyncSSCursor(_Warns, _pm.SSCursor):
    def fetchmany(self, size: Optional[int] = None) -> Any:
        rows = super().fetchmany(size)
        return rows if rows else []


class _SyncSSDictCursor(_pm.DictCursorMixin, _SyncSSCursor):
    _read_result = _SyncSSCursor._read_result

    @property
    def _converts(self) -> bool:   # type: ignore[override]
        return self.dict_type is not dict


def _json_columns(description: Any) -> list:
    return [i for i, col in enumerate(description or ()) if col[1] == FIELD_TYPE.JSON]


def _deserialize(row: Any, columns: list) -> Any:
    """`row` (tuple or dict) with the values at `columns` (indexes) json-decoded where
    they parse (aiomysql's ``_deserialization_row``)."""
    if row is None:
        return None
    if isinstance(row, dict):
        keys = list(row)
        for i in columns:
            with contextlib.suppress(ValueError, TypeError):
                row[keys[i]] = json.loads(row[keys[i]])
        return row
    values = list(row)
    for i in columns:
        with contextlib.suppress(ValueError, TypeError):
            values[i] = json.loads(values[i])
    return tuple(values)


class _DeserializationMixin:
    _converts = True

    def _read_result(self, core: Any, field_count: int) -> None:
        super()._read_result(core, field_count)   # type: ignore[misc]
        self._json = columns = _json_columns(self.description)  # type: ignore[attr-defined]
        rows = self._rows   # type: ignore[has-type]
        if columns and rows and not getattr(self, "_unbuffered", False):
            self._rows = [_deserialize(row, columns) for row in rows]

    def _conv_row(self, row: Any) -> Any:
        row = super()._conv_row(row)   # type: ignore[misc]
        columns = getattr(self, "_json", None)
        return _deserialize(row, columns) if columns else row


def _sync_classes() -> dict:
    table = {}
    for dict_rows, base in ((False, _SyncCursor), (True, _SyncDictCursor)):
        table[(dict_rows, False, False)] = base
        table[(dict_rows, True, False)] = type(
            "Deserialization" + base.__name__[5:], (_DeserializationMixin, base), {})
    for dict_rows, base in ((False, _SyncSSCursor), (True, _SyncSSDictCursor)):
        table[(dict_rows, False, True)] = base
        table[(dict_rows, True, True)] = type(
            "Deserialization" + base.__name__[5:], (_DeserializationMixin, base), {})
    return table


_SYNC = _sync_classes()


def _sync_class_for(shell: type) -> type:
    """The sync cursor class a shell class drives: by its features (dict rows,
    JSON deserialization, unbuffered), with its ``dict_type``."""
    base = _SYNC[(bool(shell._dict_rows), bool(shell._deserialize),   # type: ignore[attr-defined]
                  bool(shell._unbuffered_rows))]   # type: ignore[attr-defined]
    dict_type = getattr(shell, "dict_type", dict)
    if dict_type is not getattr(base, "dict_type", dict):
        base = type(base.__name__, (base,), {"dict_type": dict_type})
    return base


# ---------------------------------------------------------------- the asyncio shells

class Cursor(_aio.BaseCursor):
    """aiomysql's ``Cursor``: buffered, rows as tuples.  The base class of every
    cursor class of this flavour (``conn.cursor(X)`` requires a subclass of it, as
    aiomysql); see the module docstring for the semantics."""

    _dict_rows = False
    _deserialize = False
    _unbuffered_rows = False
    _sync_class: type = _SyncCursor

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._sync_class = _sync_class_for(cls)

    def __init__(self, connection: Any, cursor: Any, echo: bool = False) -> None:
        super().__init__(connection, cursor)
        self._echo = echo

    @property   # type: ignore[override]
    def connection(self) -> Any:
        """The connection, None once the cursor is closed (aiomysql)."""
        return None if self._sync_obj.connection is None else self._connection_shell

    @connection.setter
    def connection(self, shell: Any) -> None:
        self._connection_shell = shell

    @property
    def echo(self) -> bool:
        """The connection's ``echo``: ``execute`` logs each statement (INFO, logger
        ``aiomysql``)."""
        return self._echo

    @property
    def rownumber(self) -> int:
        """Index of the next row; 0 before a result (aiomysql)."""
        return self._sync_obj.rownumber or 0

    @property
    def _last_executed(self) -> Any:
        """The last statement sent (str; bytes after a multi-row ``executemany``), as
        aiomysql's attribute of that name."""
        return self._sync_obj._executed

    def setoutputsizes(self, *args: Any) -> None:
        """Does nothing (aiomysql's name of PEP 249's ``setoutputsize``)."""

    async def execute(self, query: Any, args: Any = None) -> int:
        """Run `query` with `args` (``%s`` / ``%(name)s`` placeholders); returns
        :attr:`rowcount`.  Errors are mysqlc's (``pymysql.err`` classes).

        Driven by the event loop, without the connection's greenlet, where
        :mod:`mysqlc.aio`'s statements are (``_statement._execute_read``: the sync
        classes' own steps -- PyMySQL's ``_executed`` type, aiomysql's LOCAL INFILE
        error and warnings -- done here around it); a class of other execute()
        steps runs its execute in the greenlet."""
        cur = self._sync_obj
        if not _own_steps_only(type(cur)):
            result: int = await self._worker.run(cur.execute, query, args)
        else:
            cur.__dict__["_executed_str"] = isinstance(query, str)  # _PyMySQLFetch.execute
            try:
                result = await _execute_read(self, query, args, None, None, _BASE_EXECUTE)
            except OperationalError as exc:
                _refused_infile(cur, exc)
                raise
            if cur.warning_count and not cur._unbuffered:   # _Warns._emit_warnings
                await self._worker.run(cur._emit_warnings)
        if self._echo:
            logger.info(query)
            logger.info("%r", args)
        return result

    async def executemany(self, query: Any, args: Any) -> Optional[int]:
        """Run `query` once per parameter set (INSERT/REPLACE ... VALUES batched into
        multi-row statements); returns the affected rows, None for no sets."""
        if self._echo:
            logger.info("CALL %s", query)
            logger.info("%r", args)
        result: Optional[int] = await self._worker.run(self._sync_obj.executemany,
                                                       query, args)
        return result

    # An unbuffered cursor's fetches read the rows that have arrived in the awaiting
    # task and await the stream for more (mysqlc.aio's _statement.fetch_rows), with
    # the steps of the PyMySQL flavour's fetches (mysqlc.pymysql.cursors.SSCursor:
    # _check_executed, _no_result, _conv_row; no deferred errors); where the event
    # loop cannot drive them (_pull_direct) they run in the greenlet.

    async def fetchone(self) -> Any:
        """The next row, or None."""
        cur = self._sync_obj
        if not cur._unbuffered:
            return cur.fetchone()
        if not _pull_direct(self):
            return await self._worker.run(cur.fetchone)
        cur._check_executed()
        rows = await _fetch_rows(self, 1)
        if not rows:
            return None
        cur.rownumber += 1
        return cur._conv_row(rows[0])

    async def fetchmany(self, size: Optional[int] = None) -> Any:
        """Up to `size` (default ``arraysize``) rows."""
        cur = self._sync_obj
        if not cur._unbuffered:
            return cur.fetchmany(size)
        if not _pull_direct(self):
            return await self._worker.run(cur.fetchmany, size)
        cur._check_executed()
        if cur._no_result():
            return []
        rows = await _fetch_rows(self, cur.arraysize if size is None else size)
        cur.rownumber += len(rows)
        if not rows:
            return []
        return [cur._conv_row(r) for r in rows] if cur._converts else rows

    async def fetchall(self) -> Any:
        """The remaining rows."""
        cur = self._sync_obj
        if not cur._unbuffered:
            return cur.fetchall()
        if not _pull_direct(self):
            return await self._worker.run(cur.fetchall)
        cur._check_executed()
        if cur._no_result():
            return []
        rows = await _fetch_rows(self, -1)
        cur.rownumber += len(rows)
        return [cur._conv_row(r) for r in rows] if cur._converts else rows

    async def scroll(self, value: int, mode: str = "relative") -> None:
        """Move by `value` rows (``relative``) or to row `value` (``absolute``);
        unbuffered cursors only forward (NotSupportedError), IndexError out of range
        for buffered ones."""
        cur = self._sync_obj
        if cur._unbuffered:
            await self._worker.run(cur.scroll, value, mode)
        else:
            cur.scroll(value, mode)

    async def __anext__(self) -> Any:
        cur = self._sync_obj
        if not cur._unbuffered:
            row = cur.fetchone()
            if row is None:
                raise StopAsyncIteration
            return row
        ahead = cur._ahead
        if not ahead:
            if _pull_direct(self):
                cur._check_executed()
                rows = await _fetch_rows(self, max(cur.arraysize, 256), cur._batch_bytes,
                                         True, True)
            else:
                rows = await self._worker.run(cur._next_batch)
            if not rows:
                raise StopAsyncIteration
            cur._ahead = ahead = collections.deque(rows)
        cur.rownumber += 1
        row = ahead.popleft()
        return cur._conv_row(row) if cur._converts else row


class _DictCursorMixin:
    """Rows as ``dict_type`` (default dict) keyed by column name (a repeated name as
    ``table.name``)."""

    _dict_rows = True
    dict_type: type = dict


class DictCursor(_DictCursorMixin, Cursor):
    """aiomysql's ``DictCursor``: buffered, rows as dicts; ``fetchall``/``fetchmany``
    return lists."""


class SSCursor(Cursor):
    """aiomysql's ``SSCursor``: unbuffered, rows read from the stream as they are
    fetched (``fetchall``/``fetchmany`` lists; forward ``scroll`` only)."""

    _unbuffered_rows = True


class SSDictCursor(_DictCursorMixin, SSCursor):
    """aiomysql's ``SSDictCursor``: unbuffered, rows as dicts."""


class _DeserializationCursorMixin:
    _deserialize = True


class DeserializationCursor(_DeserializationCursorMixin, Cursor):
    """aiomysql's ``DeserializationCursor``: JSON column values decoded with
    ``json.loads`` (a value that does not parse is kept).  Mixed with the other classes
    by ``conn.cursor(DeserializationCursor, DictCursor)`` / ``(SSCursor,
    DeserializationCursor)`` etc."""


_COMBINED: dict = {}


def cursor_class(*classes: type) -> type:
    """The class of ``conn.cursor(*classes)``: the one class, or aiomysql's class made
    of several (``type(name, classes, {})``, named as aiomysql names it).

    Raises TypeError("Custom cursor must be subclass of Cursor") when one is not a
    subclass of :class:`Cursor`."""
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, Cursor)):
            raise TypeError("Custom cursor must be subclass of Cursor")
    if len(classes) == 1:
        return classes[0]
    combined = _COMBINED.get(classes)
    if combined is None:
        name = "".join(c.__name__ for c in classes).replace("Cursor", "") + "Cursor"
        combined = _COMBINED[classes] = type(name, classes, {"__module__": __name__})
    return combined
