"""``pymysql.cursors`` of the PyMySQL flavour: mysqlc's cursors with PyMySQL's
fetch semantics.

The classes subclass :mod:`mysqlc.cursors` (execution, formatting in C,
``executemany`` batching and the columnar methods are mysqlc's) and change what
PyMySQL code observes:

* ``fetchall()`` of a statement without a result set returns ``[]``,
  ``fetchmany()`` returns ``()``; the same after a ``nextset()`` that raised.
* :class:`DictCursor`: ``fetchall``/``fetchmany`` return lists (a list of
  ``dict_type`` rows; an empty result set gives ``()``, as in PyMySQL).
* ``fetchmany(0)`` means ``arraysize`` (PyMySQL's ``size or arraysize``).
* ``iter(cursor) is cursor``; ``next(cursor)`` is ``fetchone()``.
* :class:`SSCursor`: ``rowcount`` is ``18446744073709551615`` (``(uint64)-1``,
  MySQLdb's number for "unknown") for a result set, also after the last row;
  ``fetchall()`` and ``fetchmany()`` return lists, ``fetchall_unbuffered()`` a
  generator, ``read_next()`` one row; ``scroll(n, "absolute")`` moves forward.
* ``_executed`` is the statement sent, as ``str``; ``max_stmt_length`` is
  1024000 bytes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional, Union

from .. import cursors as _cursors
from ..errors import NotSupportedError, ProgrammingError

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["Cursor", "DictCursorMixin", "DictCursor", "SSCursor", "SSDictCursor",
           "RE_INSERT_VALUES"]

#: PyMySQL's shape of the ``executemany`` pattern, on ``str``: group 1 the
#: statement up to ``VALUES``, group 2 the parenthesised row of placeholders,
#: group 3 an optional row alias (``AS new`` or ``AS new(a, b)``) and/or ``ON
#: DUPLICATE ...``.  (``executemany`` itself uses mysqlc's
#: :data:`mysqlc.cursors.RE_INSERT_VALUES`, which also allows constants in the row.)
RE_INSERT_VALUES = re.compile(
    r"\s*((?:INSERT|REPLACE)\b.+\bVALUES?\s*)"
    r"(\(\s*(?:%s|%\([^)]+\)s)\s*(?:,\s*(?:%s|%\([^)]+\)s)\s*)*\))"
    r"(\s*(?:AS\s+(?:\w+|`[^`]+`)\s*(?:\([^)]*\)\s*)?)?(?:ON\s+DUPLICATE.*)?);?\s*\Z",
    re.IGNORECASE | re.DOTALL)

#: ``rowcount`` of an unbuffered result set (MySQLdb's and PyMySQL's number).
UNKNOWN_ROWCOUNT = 18446744073709551615


def _hex_bytes(args):
    """`args` with bytes values as bytearray, which the connection's encoder
    writes as PyMySQL does (``X'<hex>'``); the core writes exact bytes itself."""
    if type(args) is bytes:
        return bytearray(args)
    if isinstance(args, (tuple, list)):
        if not any(type(a) is bytes or type(a) in (tuple, list) for a in args):
            return args
        return tuple(_hex_bytes(a) if type(a) in (bytes, tuple, list) else a for a in args)
    if isinstance(args, dict):
        if not any(type(v) is bytes or type(v) in (tuple, list) for v in args.values()):
            return args
        return {k: _hex_bytes(v) if type(v) in (bytes, tuple, list) else v
                for k, v in args.items()}
    return args


class _PyMySQLFetch:
    """PyMySQL's fetch results over mysqlc's buffered storage (``_rows``)."""

    max_stmt_length = 1024000

    def __init__(self, connection):
        super().__init__(connection)
        self.rownumber = 0          # PyMySQL's start value (mysqlc: None)

    @property
    def _executed(self):
        # the last statement sent: str after execute(str), bytes after
        # execute(bytes) and after a multi-row executemany (PyMySQL's types)
        sql = self.__dict__.get("_executed_sql")
        if sql is None or isinstance(sql, str) or not self.__dict__.get("_executed_str"):
            return sql
        conn = self.connection
        return sql.decode(conn.encoding if conn is not None else "utf-8", "surrogateescape")

    @_executed.setter
    def _executed(self, sql):
        self.__dict__["_executed_sql"] = sql

    def execute(self, query: Union[str, bytes], args: Any = None,  # type: ignore[override]
                **kwargs: Any) -> int:
        """As :meth:`mysqlc.cursors.BaseCursor.execute`; returns :attr:`rowcount`."""
        self.__dict__["_executed_str"] = isinstance(query, str)
        return super().execute(query, args, **kwargs)

    _format_args_only = True   # (_format below: BaseCursor's for args None)

    def _format(self, conn, query, args):
        if args is not None and not getattr(self, "_prepared", False):
            args = _hex_bytes(args)
        return super()._format(conn, query, args)

    def executemany(self, query: Union[str, bytes], args: Any) -> Optional[int]:
        """As :meth:`mysqlc.cursors.BaseCursor.execute` (INSERT/REPLACE batched
        into multi-row statements of at most :attr:`max_stmt_length` bytes);
        returns the affected rows, None for no parameter sets."""
        if args is not None and not getattr(self, "_prepared", False):
            args = map(_hex_bytes, args)
        result = super().executemany(query, args)
        if isinstance(query, str) and RE_INSERT_VALUES.match(query):
            self.__dict__["_executed_str"] = False
        return result

    def _check_executed(self):
        if self.__dict__.get("_executed_sql") is None:
            raise ProgrammingError(0, "execute() first")

    def _read_result(self, core, field_count):
        super()._read_result(core, field_count)
        if field_count > 0:
            self.lastrowid = None       # PyMySQL: a result set has no insert id

    def _no_result(self):
        # no result set: a statement that returned OK, or a nextset() that failed
        return self._rows is None or self.description is None

    def fetchone(self) -> Any:
        """Next row, or None (also for statements without a result set)."""
        self._check_executed()
        if self._rows is None:
            return None
        return super().fetchone()

    def fetchmany(self, size: Optional[int] = None) -> Sequence[Any]:
        """Up to `size` (``size or arraysize``) rows; ``()`` for a statement
        without a result set."""
        self._check_executed()
        if self._no_result():
            return ()
        return super().fetchmany(size or self.arraysize)

    def fetchall(self) -> Sequence[Any]:
        """The remaining rows; ``[]`` for a statement without a result set."""
        self._check_executed()
        if self._no_result():
            return []
        return super().fetchall()

    def scroll(self, value: int, mode: str = "relative") -> None:
        """As PyMySQL: ``relative`` or ``absolute``; IndexError out of range."""
        self._check_executed()
        if self._rows is None:
            raise IndexError("out of range")
        return super().scroll(value, mode)

    def callproc(self, procname: str, args: Sequence[Any] = ()) -> Sequence[Any]:
        """Call stored procedure `procname` as PyMySQL: ``SET @`_procname_0`=..``
        then ``CALL `procname`(@`_procname_0`, ...)`` (the name back-quoted);
        returns `args`.  OUT values are read afterwards with ``SELECT
        @`_procname_0```, once :meth:`nextset` has consumed the CALL's results."""
        conn = self._get_conn()
        name = procname.replace("`", "``")
        if args:
            # the sql_mode decided once for all the values (mysqlc.cursors._with_mode)
            assignments = _cursors._with_mode(conn, lambda options: ",".join(
                "@`_%s_%d`=%s" % (name, i, conn._param_escape(arg))
                for i, arg in enumerate(args)), self)
            self._query(conn, ("SET " + assignments).encode(conn.encoding))
        call = "CALL `%s`(%s)" % (name, ",".join("@`_%s_%d`" % (name, i)
                                                for i in range(len(args))))
        self._query(conn, call.encode(conn.encoding))
        return args

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row


class Cursor(_PyMySQLFetch, _cursors.Cursor):
    """Buffered cursor, rows as tuples (PyMySQL's ``Cursor``)."""


class DictCursorMixin:
    """Rows as ``dict_type`` (default ``dict``) keyed by column name, a repeated
    name as ``table.name``; lists of rows from ``fetchall``/``fetchmany``."""

    #: the mapping type of a row; a subclass may set ``collections.OrderedDict``
    dict_type = dict

    _fetch_type = 1                  # the keys of mysqlc.cursors.DictCursor
    _row_keys = _cursors.DictCursor._row_keys

    def _read_result(self, core, field_count):
        super()._read_result(core, field_count)
        rows = self._rows
        if rows and not isinstance(rows, list):
            convert = self.dict_type
            self._rows = list(rows) if convert is dict else [convert(r) for r in rows]

    def _conv_row(self, row):
        if row is None or type(row) is self.dict_type:
            return row
        return self.dict_type(row)


class DictCursor(DictCursorMixin, Cursor):
    """Buffered cursor, rows as dicts (PyMySQL's ``DictCursor``)."""


class SSCursor(_PyMySQLFetch, _cursors.SSCursor):
    """Unbuffered cursor (PyMySQL's ``SSCursor``); see the module docstring."""

    def _read_result(self, core, field_count):
        super()._read_result(core, field_count)
        if field_count > 0:
            self.rowcount = UNKNOWN_ROWCOUNT

    def _pull(self, n, max_bytes=0, *more, **kw):
        rowcount = self.rowcount
        rows = super()._pull(n, max_bytes, *more, **kw)
        self.rowcount = rowcount
        return rows

    def _no_result(self):
        return self._rows is None or self.description is None

    def _conv_row(self, row):
        return row

    def nextset(self):
        """The next result set (True), or None: also while rows of the current
        one are unread, which stay readable (PyMySQL's unbuffered nextset)."""
        conn = self._get_conn()
        if getattr(self, "_streaming", False) and conn._is_owner(self) \
                and conn._conn.rows_pending:
            return None
        return super().nextset()

    def read_next(self):
        """The next row, or None at the end (does not advance ``rownumber``)."""
        rows = self._pull(1)
        return self._conv_row(rows[0]) if rows else None

    def fetchone(self) -> Any:
        """Next row from the socket, or None at the end."""
        self._check_executed()
        if self._rows is None:
            return None
        row = self.read_next()
        if row is None:
            return None
        self.rownumber += 1
        return row

    def fetchmany(self, size: Optional[int] = None) -> Sequence[Any]:
        """Up to `size` (default ``arraysize``) rows as a list; ``()`` at the end."""
        self._check_executed()
        if self._no_result():
            return ()
        rows = self._pull(self.arraysize if size is None else size)
        self.rownumber += len(rows)
        if not rows:
            return ()
        return [self._conv_row(r) for r in rows] if self._converts else rows

    def fetchall(self) -> list[Any]:
        """All remaining rows, as a list (read into memory)."""
        self._check_executed()
        if self._no_result():
            return []
        rows = self._pull(-1)
        self.rownumber += len(rows)
        return [self._conv_row(r) for r in rows] if self._converts else rows

    def fetchall_unbuffered(self) -> Iterator[Any]:

        """The remaining rows as an iterator that reads them one at a time
        (``iter(fetchone, None)``)."""
        return iter(self.fetchone, None)

    _converts = False

    def scroll(self, value, mode="relative"):
        """Skip rows forward: ``relative`` by `value` >= 0, ``absolute`` to row
        `value` >= rownumber; NotSupportedError backwards."""
        self._check_executed()
        if mode == "relative":
            if value < 0:
                raise NotSupportedError("Backwards scrolling not supported by this cursor")
            count = value
        elif mode == "absolute":
            if value < self.rownumber:
                raise NotSupportedError("Backwards scrolling not supported by this cursor")
            count = value - self.rownumber
        else:
            raise ProgrammingError("unknown scroll mode %s" % mode)
        while count > 0:
            rows = self._pull(min(count, 10000), self._batch_bytes)
            if not rows:
                break
            count -= len(rows)
        self.rownumber = self.rownumber + value if mode == "relative" else value


class SSDictCursor(DictCursorMixin, SSCursor):
    """Unbuffered cursor, rows as dicts (PyMySQL's ``SSDictCursor``)."""

    def _read_result(self, core, field_count):
        SSCursor._read_result(self, core, field_count)

    @property
    def _converts(self):
        return self.dict_type is not dict
