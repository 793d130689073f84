"""DB-API cursors: :class:`Cursor` (rows as tuples) and :class:`DictCursor`
(rows as dicts).

Both are *buffered*: ``execute`` reads the whole result set into memory, as
mysqlclient's default cursors (``mysql_store_result``) do -- kept as its row packets
(``_core.Store``, about the result's wire size), whose rows are decoded as they are
fetched and whose columns the columnar methods decode in C (docs/columnar.md).
Unbuffered (server-side) cursors are a later addition.

Behaviour follows mysqlclient's ``MySQLdb.cursors`` unless noted:

* ``rowcount`` is -1 before the first ``execute`` (PEP 249), then the number of
  rows of a result set or the affected rows of other statements;
  ``execute``/``executemany`` return it.
* ``fetch*`` before ``execute`` raise ``ProgrammingError(0, "execute() first")``;
  after a statement without a result set they return ``None`` / ``()``.
* ``fetchmany``/``fetchall`` return tuples of rows.
* Iterating a cursor advances ``rownumber`` like ``fetchone`` (mysqlclient's
  buffered cursor iterates without advancing it).
* Results another cursor (or this one) left unread on the connection are
  drained before a new statement is sent (PyMySQL does this too; mysqlclient
  raises "Commands out of sync").
"""

from __future__ import annotations

import collections
import re
import weakref
from collections.abc import Mapping
from functools import partial
from itertools import chain
from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union

from . import _pipeline
from . import bulk as _bulk
from ._arrow import ArrowStream, _Collected, _need, arrow_table, convert, record_batches
from ._state import _BACKSLASH, _MODE_NOTE_CACHE, _NO_ERROR, _SEMICOLON, _busy
from .converters import _str_fallback, _str_fallback_args
from .errors import (
    Error, NotSupportedError, OperationalError, ProgrammingError,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from types import TracebackType

    import numpy
    import pandas
    import polars
    import pyarrow

    from .connections import Connection

    _C = TypeVar("_C", bound="BaseCursor")

    #: ``execute()`` parameters: a sequence for ``%s``, a mapping for ``%(name)s``,
    #: or one value
    _Args = Union[Sequence[Any], Mapping[str, Any], Any, None]
    #: the ``decimal=`` option of the columnar methods
    _DecimalMode = str
    #: the ``progress=`` option: a callable taking the rows read so far, or an
    #: object with ``update(n)`` (tqdm)
    _Progress = Any
    #: the ``infile=`` data of LOAD DATA LOCAL INFILE
    _Infile = Union[bytes, Any, Iterable[bytes]]

__all__ = ["BaseCursor", "Cursor", "DictCursor", "SSCursor", "SSDictCursor",
           "PreparedCursor", "PreparedDictCursor", "PreparedSSCursor",
           "PreparedSSDictCursor", "prepared_variant", "RE_INSERT_VALUES"]

#: ``executemany`` rewrites ``INSERT``/``REPLACE ... VALUES (row)`` into one
#: multi-row statement.  Groups, in mysqlclient's order (1, 2, 3): ``prefix`` (up
#: to and including ``VALUES``/``VALUE``), ``values`` (the parenthesised row:
#: ``%s`` / ``%(name)s`` placeholders, and bare words, numbers or ``NOW()``-style
#: calls between them) and ``postfix`` (an optional row alias ``AS ...`` and/or
#: ``ON DUPLICATE ...``, mysqlclient's test); a trailing ``;`` is dropped.  A ``str``
#: pattern, as mysqlclient's ``MySQLdb.cursors.RE_INSERT_VALUES`` (which matches
#: only ``%s``/``%(name)s`` between the parentheses); ``executemany`` matches the
#: encoded query with the same pattern compiled for bytes.
RE_INSERT_VALUES = re.compile(
    r"""
    \A\s*
    (?P<prefix>(?:INSERT|REPLACE)\b.+?\bVALUES?\s*)
    (?P<values>
        \(\s*
        (?:%s|%\([^()%]+\)s|[A-Za-z_][A-Za-z0-9_]*(?:\s*\(\s*\))?|[-+]?[0-9]+(?:\.[0-9]+)?)
        (?:\s*,\s*
        (?:%s|%\([^()%]+\)s|[A-Za-z_][A-Za-z0-9_]*(?:\s*\(\s*\))?|[-+]?[0-9]+(?:\.[0-9]+)?)
        )*
        \s*\)
    )
    (?P<postfix>\s*(?:(?:AS\s|ON\s+DUPLICATE\b).*?)?)
    \s*;?\s*\Z
    """,
    re.IGNORECASE | re.DOTALL | re.VERBOSE,
)
# The same pattern for the encoded query (the text is ASCII).
_RE_INSERT_VALUES_BYTES = re.compile(RE_INSERT_VALUES.pattern.encode("ascii"),
                                     RE_INSERT_VALUES.flags & ~re.UNICODE)

# A placeholder (or any %-directive other than %%) outside the VALUES row.
_RE_PERCENT = re.compile(rb"%(?!%)")

_NOT_EXECUTED = "execute() first"

#: ``SSCursor._streaming`` of a prepared statement's result read through a server-side
#: cursor (COM_STMT_FETCH); otherwise True (rows on the wire) or False (none left)
_FETCH = "server cursor"

#: ``SSCursor._fetchone_ready()``: the row is not there without a wait (or fetchone()
#: must read it itself)
_NOT_READY = object()
#: SSCursor._streaming after a fetch returned the rows a server error came after: the
#: next fetch raises that error (``_deferred``)
_DEFERRED = "error next"


def _lost_rows_error(conn):
    """What fetching from an unbuffered cursor raises once its connection is closed:
    mysqlclient's OperationalError(2006, ...) (the message as for any command on the
    connection: '' after close(), "Server has gone away" after a loss)."""
    if conn._closed:
        return conn._closed_error()
    return OperationalError(2006, "Server has gone away")


def _has_placeholder(part):
    return _RE_PERCENT.search(part.replace(b"%%", b"")) is not None


def _format_query(format_query, query, args, options):
    """``format_query(query, args, **options)``, writing ``uuid.UUID`` parameters
    as their ``str()`` as mysqlclient does (see ``converters._str_fallback``);
    the conversion is tried only after the core refused the parameters."""
    try:
        return format_query(query, args, **options)
    except ProgrammingError:
        fixed = _str_fallback_args(args, options.get("encoders"))
        if fixed is None:
            raise
        return format_query(query, fixed, **options)


def _format_options(conn, nbe=False, portable=0, charset=None, encoding=None):
    """Keyword arguments of the core's ``format_query``/``literal`` for the SQL text
    that execute(), executemany(), mogrify() and callproc() send, with `nbe`
    (NO_BACKSLASH_ESCAPES) and `portable` (0, 1 or 2) as :func:`_with_mode` chose;
    `charset` and `encoding` the session's (``conn._session_charset()``) when the
    caller has them already."""
    if charset is None:
        charset, encoding = conn._session_charset()
    return {"no_backslash_escapes": nbe,
            "charset": charset, "encoding": encoding,
            "encoders": conn._encoders, "binary_prefix": conn._binary_prefix,
            "portable": portable}


def _with_mode(conn, build, cursor=None, query=None, confirm=True, with_options=False):
    """``build(options)`` (bytes, or None when a value needs the sql_mode) with the
    escaping of the session's sql_mode: str and bytes values are written as
    mysqlclient writes them (backslash escapes, or quotes doubled under
    NO_BACKSLASH_ESCAPES) when the connection knows the mode for certain
    (``Connection._escape_mode``).  Otherwise the values that read the same in both
    modes are written so (quotes doubled, portable=2), and a value with a backslash
    byte not followed by % or _ costs one ``SET sql_mode=@@sql_mode`` first
    (``Connection._confirm_escape_mode``), then everything is written for the mode
    it reports.  Written as ``_<charset> X'..'`` hex literals (portable=1) instead:
    such values in a multi-statement `query` (a statement before them may change the
    mode), and when the mode cannot be confirmed now (results unread, connection in
    use; or `confirm` False: a statement shown, not sent).  `with_options`: returns
    ``(result, options)``."""
    outer = conn.__dict__.get("_mode_outer")
    if outer is not None:       # an encoder called while a statement is formatted
        result = build(outer)
        if result is None:
            raise _NeedsMode
        return (result, outer) if with_options else result
    if query is not None and _SEMICOLON in query and conn._multi_statement(query):
        options = _format_options(conn, False, 1)
    else:
        mode = conn._escape_mode()
        if mode is not None:
            options = _format_options(conn, mode, 0)
        else:
            options = _format_options(conn, False, 2)
            result = _build_with(conn, build, options)
            if result is not None:
                conn._mode_written = None    # read the same in both modes
                return (result, options) if with_options else result
            mode = conn._confirm_escape_mode(cursor) if confirm else None
            options = _format_options(conn, False, 1) if mode is None else \
                _format_options(conn, mode, 0)
    result = _build_with(conn, build, options)
    # the mode the statement was written for (LOAD DATA LOCAL reads its file name back)
    conn._mode_written = options["no_backslash_escapes"] if options["portable"] == 0 else None
    return (result, options) if with_options else result


class _NeedsMode(Exception):
    """Raised by a nested literal (an encoder such as the PyMySQL flavour's set
    literal) that needs the sql_mode while the statement is formatted with
    portable=2: the statement is formatted again once the mode is confirmed."""


def _build_with(conn, build, options):
    """``build(options)``, with `options` the ones nested literals use meanwhile."""
    if options["encoders"] is None:
        return build(options)   # no Python encoder that could write a nested literal
    d = conn.__dict__
    d["_mode_outer"] = options
    try:
        return build(options)
    except _NeedsMode:
        return None
    finally:
        d["_mode_outer"] = None


def _literal_builder(conn, obj):
    """``build(options)`` for :func:`_with_mode`: the SQL literal (bytes) of one
    parameter, or None; ``uuid.UUID`` and the like as their ``str()``, as
    ``Connection.literal`` does."""
    literal = conn._core_module.literal

    def build(options):
        try:
            return literal(obj, **options)
        except ProgrammingError:
            fixed, changed = _str_fallback(obj, options["encoders"])
            if not changed:
                raise
            return literal(fixed, **options)
    return build


def _param_literal(conn, obj, cursor=None, confirm=True):
    """The SQL literal (bytes) of one parameter as execute() writes it (see
    :func:`_with_mode`)."""
    return _with_mode(conn, _literal_builder(conn, obj), cursor, confirm=confirm)


def _joined_literals(conn, parts, cursor=None):
    """``b",".join(head + literal)`` for the ``(head, value)`` pairs of `parts`, the
    sql_mode decided once for them all (callproc's ``SET @_p_0=..,@_p_1=..``)."""
    builders = [(head, _literal_builder(conn, value)) for head, value in parts]

    def build(options):
        out = []
        for head, lit in builders:
            v = lit(options)
            if v is None:
                return None
            out.append(head + v)
        return b",".join(out)
    return _with_mode(conn, build, cursor)


def _normalize_args(args):
    """Sequence or mapping for ``format_query``: a lone value becomes ``(value,)``
    (PyMySQL accepts scalars; mysqlclient rejects them)."""
    if isinstance(args, (tuple, list, dict)):
        return args
    if isinstance(args, (str, bytes, bytearray, memoryview)) or not hasattr(args, "__iter__"):
        return (args,)
    if isinstance(args, Mapping):
        return args
    return tuple(args)


class _LazyExecuted:
    """``cursor._executed``: the statement as sent, set by every execute in the instance's
    own ``__dict__``; that of a bulk or prepared execute is the statement a mysqlclient
    user would see there (parameters as literals), built on first access from
    ``_executed_from``.  A non-data descriptor, so the instance's value is found first;
    not a class ``__getattr__``, which would make every attribute access of a cursor
    slower (CPython does not specialize attribute loads of such a class: an extra type
    lookup per access)."""

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        source = obj.__dict__.pop("_executed_from", None)
        value = _render_executed(*source) if source is not None else None
        obj.__dict__["_executed"] = value
        return value


class BaseCursor:
    """Common machinery of the buffered cursors; rows are tuples.

    Attributes
    ----------
    connection : mysqlc.connections.Connection or None
        The connection; None after :meth:`close`.
    description : tuple of 7-tuples or None
        ``(name, type_code, display_size, internal_size, precision, scale,
        null_ok)`` per column of the current result set (PEP 249); ``type_code``
        is a ``FIELD_TYPE`` code and compares equal to ``mysqlc.STRING`` etc.
        None for statements without a result set.
    description_flags : tuple of int or None
        Column flags (``mysqlc.constants.FLAG``) per column (mysqlclient extension).
    rowcount : int
        -1 before execute; rows in the result set, or rows affected.
    lastrowid : int or None
        AUTO_INCREMENT id of the last INSERT (``LAST_INSERT_ID()`` semantics of the
        OK packet); 0 for statements that generated none and for result sets.
    rownumber : int or None
        Index of the next row fetchone() returns; None before execute.
    arraysize : int
        Default size for :meth:`fetchmany` (1).
    warning_count : int
        Warnings of the last statement.
    messages : list
        PEP 249 extension; always emptied by execute (no messages are recorded).
    max_stmt_length : int or None
        Upper bound (bytes) for statements built by :meth:`executemany`; None means
        the server's ``max_allowed_packet`` (queried once per connection).

    Notes
    -----
    *Prepared mode.*  A cursor of any class runs its statements as server-side
    prepared statements when it is in prepared mode: the ``Prepared*`` classes
    (:class:`PreparedCursor` ...) are, and ``connection.cursor(cls, prepared=True)``
    returns a cursor in it.
    ``execute`` then runs COM_STMT_PREPARE / COM_STMT_EXECUTE (binary protocol) with
    the connection's LRU statement cache; on MariaDB the first execute of a statement
    sends both in one round trip (COM_STMT_EXECUTE of statement id 0xffffffff, "the
    statement prepared last", where the client can count the placeholders: no
    backslash in the SQL, no value for COM_STMT_SEND_LONG_DATA, no server-side cursor or
    query attributes, no compression).  Placeholders are ``%s`` (or ``%(name)s``
    with a mapping, or ``?``); parameters are encoded in C in the binary format and
    never quoted into the SQL text.  Metadata of parameter types is re-sent only when
    the types change.  User converters for field types apply to string-typed values
    only (numbers and temporal values are decoded from their binary form).  An
    unbuffered cursor reads its rows through a read-only server-side cursor in
    COM_STMT_FETCH batches of :attr:`arraysize`, 100 by default in this mode.
    """

    max_stmt_length: Optional[int] = None

    #: prepared mode (the class docstring's Notes): a class attribute of the
    #: ``Prepared*`` classes; :meth:`_set_prepared` sets it on one cursor of any other
    #: class (``connection.cursor(cls, prepared=True)``)
    _prepared = False
    #: in prepared mode, read a result through a read-only server-side cursor
    #: (CURSOR_TYPE_READ_ONLY, COM_STMT_FETCH): True for the unbuffered classes
    _server_cursor = False

    connection: Optional[Connection]
    description: Optional[tuple[tuple[Any, ...], ...]]
    description_flags: Optional[tuple[int, ...]]
    rowcount: int
    arraysize: int
    lastrowid: Optional[int]
    rownumber: Optional[int]
    warning_count: int
    messages: list[Any]

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.description = None
        self.description_flags = None
        self.rowcount = -1
        self.arraysize = 1
        self.lastrowid = None
        self.rownumber = None
        self.warning_count = 0
        self.messages = []
        self._executed = None
        self._rows = None
        # the class defaults below, as the instance's own: an instance attribute is one
        # specialized read on the statement path (a class attribute read through the
        # instance is a type and a dict lookup on CPython 3.11)
        self._executed_from = self._pipe_error = self._pipe_sets = self._taken = None
        self._rendering = False
        self._direct = self._direct_class
        if self._prepared:
            self._set_prepared()

    #: pipelining (Connection.pipeline): the queued command whose response this cursor
    #: awaits, the error its statement got, the further results of its response
    _pipe_entry = None
    _pipe_error = None
    _pipe_sets = None
    _rendering = False   # set in the instance while _executed is rendered

    def _pipe_rows(self):
        """The rows when ``_rows`` is None: a pipelined result is read first (every
        response queued before it too; the first error among them is raised), a
        statement that failed in a pipeline raises its error; else ProgrammingError
        "execute() first"."""
        conn = self.connection
        if self._pipe_entry is not None and conn is not None and conn._pipeline is not None:
            conn._pipeline._wait_for(self)
        if self._pipe_error is not None:
            raise self._pipe_error
        if self._rows is None:
            raise ProgrammingError(0, _NOT_EXECUTED)
        return self._rows

    def _set_prepared(self):
        """Put the cursor in prepared mode (the class docstring's Notes); an unbuffered
        one (``_server_cursor``) fetches :attr:`arraysize` = 100 rows per COM_STMT_FETCH."""
        self._prepared = True
        self._direct = False
        if self._server_cursor:
            self.arraysize = 100

    # ------------------------------------------------------------ plumbing

    def _get_conn(self):
        conn = self.connection
        if conn is None:
            raise ProgrammingError(0, "cursor closed")
        return conn

    def _plain_cursor(self):
        """A new :class:`Cursor` (buffered, text protocol, tuples) on this cursor's
        connection, whatever this one's class: for the statements that
        :func:`mysqlc.bulk.load_table` runs (it imports no cursor class)."""
        return Cursor(self._get_conn())

    #: what the lazily built ``_executed`` is made from (see _LazyExecuted)
    _executed_from = None

    _executed = _LazyExecuted()

    def _set_executed_lazily(self, *source):
        self.__dict__.pop("_executed", None)
        self._executed_from = source

    def _clear(self):
        self._executed_from = None
        self.description = None
        self.description_flags = None
        self.rowcount = -1
        self.lastrowid = None
        self.rownumber = None
        self.warning_count = 0
        self._rows = None
        if self.messages:
            del self.messages[:]
        if self._pipe_error is not None or self._pipe_sets is not None:
            self._pipe_error = self._pipe_sets = None

    def _format(self, conn, query, args):
        """Encode `query` and substitute `args`; returns bytes."""
        # (its _sync_session first: before no_backslash_escapes is read, a procedure's
        # restore)
        charset, encoding = conn._session_charset()
        if isinstance(query, str):
            query = query.encode(encoding)
        elif isinstance(query, (bytearray, memoryview)):
            query = bytes(query)
        elif not isinstance(query, bytes):
            raise TypeError("query must be str or bytes, not %s" % type(query).__name__)
        if self._rendering:     # _executed of a statement sent otherwise (_render_executed)
            if args is None:
                return query
            return _with_mode(conn, partial(_format_query, conn._core_module.format_query,
                                            query, _normalize_args(args)),
                              query=query, confirm=False)
        if args is not None:
            mode = conn._mode_hint
            if mode is None:
                mode = conn._escape_mode()
            if mode is not None and _SEMICOLON not in query:
                # the common case, the mode certain: _with_mode's first branch (an encoder's
                # nested literal finds the same certain mode)
                if type(args) is not tuple:
                    args = _normalize_args(args)
                try:
                    # format_query with these options, kept by the core between calls
                    sql = conn._conn.format_statement(query, args, mode, charset, encoding,
                                                      conn._encoders, conn._binary_prefix)
                except ProgrammingError:   # (again, then with the str() fallback)
                    sql = _format_query(conn._core_module.format_query, query, args,
                                        _format_options(conn, mode, 0, charset, encoding))
                conn._mode_written = mode
                if _MODE_NOTE_CACHE.get(query) is not False:   # (a text seen and cleared:
                    conn._note_statement(query)                # the call's whole work)
                return sql
            else:
                sql = _with_mode(conn, partial(_format_query, conn._core_module.format_query,
                                               query, _normalize_args(args)), self, query)
        else:
            sql = query
            conn._mode_written = None
            if _MODE_NOTE_CACHE.get(query) is False and _SEMICOLON not in query:
                return sql   # (_note_statement would do nothing)
        conn._note_statement(query)
        return sql

    # ------------------------------------------------------------ query attributes

    #: (name, value) query attributes sent with every execute (add_attribute)
    _attributes = ()

    def add_attribute(self, name: str, value: Any) -> None:
        """Add a query attribute sent with every following :meth:`execute` of this
        cursor, until removed (mysql-connector-python's method; MySQL 8.0.23+
        CLIENT_QUERY_ATTRIBUTES, read on the server with
        ``mysql_query_attribute_string(name)``).

        `value`: None, bool, int, float, str, bytes, Decimal, datetime.date,
        datetime.datetime, datetime.time or datetime.timedelta (sent in the binary
        parameter format).  Raises TypeError for a name that is not str.  A server
        without query attributes (MariaDB) makes the execute raise NotSupportedError.
        """
        if not isinstance(name, str):
            raise TypeError("query attribute name must be str, not %s" % type(name).__name__)
        if not self._attributes:
            self._plain_text = self._direct = False
            self._attributes = []
        self._attributes.append((name, value))

    def get_attributes(self) -> Optional[list[tuple[str, Any]]]:
        """The cursor's query attributes as a list of ``(name, value)``, or None when
        there are none (mysql-connector-python's method)."""
        return list(self._attributes) or None

    def remove_attribute(self, name: str) -> Any:
        """Remove the query attribute `name` (the first one added with that name) and
        return its value; None when there is none (mysql-connector-python's method)."""
        if not isinstance(name, str):
            raise TypeError("query attribute name must be str, not %s" % type(name).__name__)
        for i, (n, v) in enumerate(self._attributes):
            if n == name:
                del self._attributes[i]
                return v
        return None

    def clear_attributes(self) -> None:
        """Remove all query attributes of this cursor."""
        self._attributes = ()

    def _query_attributes(self, attributes):
        """The (name, value) list to send: the cursor's, then `attributes` (a mapping
        or an iterable of pairs) given to this execute; None when there are none."""
        attrs = list(self._attributes)
        if attributes is not None:
            items = attributes.items() if isinstance(attributes, Mapping) else attributes
            for pair in items:
                try:
                    name, value = pair
                except (TypeError, ValueError):
                    raise TypeError("attributes must be a mapping or (name, value) pairs, "
                                    "not an item %r" % (pair,)) from None
                if not isinstance(name, str):
                    raise TypeError("query attribute name must be str, not %s"
                                    % type(name).__name__)
                attrs.append((name, value))
        return attrs or None

    def _query(self, conn, sql, attributes=None):
        """Send `sql` (bytes) and buffer its first result; returns rowcount."""
        if conn._closed:
            raise conn._closed_error()
        lock = conn._lock
        if not lock.acquire(False):
            raise _busy()
        try:
            core = conn._conn
            conn._last_error = _NO_ERROR
            pipe = conn._pipeline
            if pipe is None and attributes is None and self._one_call:
                # the common case in one call into the core (statement.c query_result):
                # the statement sent, its first result kept, what _read_result sets
                if core.unread:   # rows_pending, more_results or cursor_open
                    conn._discard_pending(self)
                conn._owner = weakref.ref(self)   # _start_one_call's steps
                if self._executed_from is not None or self.messages or \
                        self._pipe_error is not None or self._pipe_sets is not None:
                    self._clear()
                self._executed = sql
                try:
                    (self._rows, self.description, self.description_flags, self.rowcount,
                     self.lastrowid, self.warning_count) = core.query_result(sql)
                except BaseException:
                    self._clear()
                    self._executed = sql
                    raise
                self.rownumber = 0
                return self.rowcount
            self._clear()
            if pipe is not None and pipe.enabled and attributes is None and \
                    not self._server_cursor:
                return self._pipe_query(conn, pipe, sql)
            conn._discard_pending(self)
            conn._owner = weakref.ref(self)
            self._executed = sql
            if attributes is None:
                self._read_result(core, core.query(sql))
            else:
                self._read_result(core, core.query_attributes(sql, attributes, conn.encoding))
            return self.rowcount
        except Error as exc:
            conn._note_error(exc)
            raise
        finally:
            lock.release()

    def _start_one_call(self, conn, sql):
        """Before a result taken in one core call (``query_result``, or mysqlc.aio's
        ``take_result``): the connection's owner, the cursor's state of the last
        statement cleared (only what is set: the call sets the rest), `sql` as
        ``_executed``."""
        conn._owner = weakref.ref(self)
        if self._executed_from is not None or self.messages or \
                self._pipe_error is not None or self._pipe_sets is not None:
            self._clear()
        self._executed = sql

    def _pipe_query(self, conn, pipe, sql):
        """_query inside a pipeline block: COM_QUERY sent, its response queued; -1."""
        unsure = _pipeline.check_statement(conn, sql)
        self._executed = sql
        if conn._pending():
            conn._discard_pending(self)
        core = conn._conn
        pipe._send(self, len(sql), partial(core.send_query, sql), unsure)   # (owner)
        return -1

    def _row_keys(self, core):
        # keys for core.fetch(): None gives tuples (DictCursor overrides)
        return None

    #: _query may take a result in one core call (query_result): the class reads its
    #: results as BaseCursor does (tuples, buffered); set for each class below
    _one_call = True

    #: execute() of a statement without parameters may take its inlined path (when not
    #: prepared): the class formats and sends as BaseCursor does; cleared on a cursor
    #: given query attributes
    _plain_text = True

    #: rows read from the socket as they are fetched (SSCursor and its subclasses)
    _unbuffered = False

    #: the class's own ``_format`` differs from BaseCursor's only where there are
    #: parameters (the PyMySQL flavour's): mysqlc.aio keeps the bytes of its
    #: parameterless statements as it keeps BaseCursor's (``_statement._query_now``)
    _format_args_only = False

    #: a cursor's ``_direct`` (set in __init__): the class reads its results and formats
    #: as BaseCursor does (``_one_call`` and ``_plain_text``: ``_direct_class``) and the
    #: cursor is not prepared; cleared when it is made prepared (_set_prepared, also
    #: for a Prepared* class) or given query attributes.
    #: mysqlc.aio's ``_statement._begin`` reads it for all of those at once, so code that
    #: changes ``_prepared`` or ``_attributes`` goes through those methods.  (False for
    #: an instance whose __init__ did not run.)
    _direct_class = True
    _direct = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls._one_call and (cls._read_result is not BaseCursor._read_result
                              or cls._row_keys is not BaseCursor._row_keys):
            cls._one_call = False
        plain = cls._format is BaseCursor._format and cls._query is BaseCursor._query
        if plain != cls._plain_text:   # (set only where it changes: a class's own
            cls._plain_text = plain     # namespace keeps only what it defines)
        direct = bool(cls._one_call and cls._plain_text)   # (prepared: __init__'s)
        if direct != cls._direct_class:
            cls._direct_class = direct

    #: the rows of the result `_read_result` reads next when they were taken already:
    #: mysqlc.aio takes a buffered result's rows from the event loop
    #: (``core.take_rows(self._row_keys(core))``, mysqlc/aio/_statement.py) and sets
    #: this just before it calls ``_read_result``, so that a class's own
    #: ``_read_result`` (which calls this one) finds them instead of reading the socket
    _taken = None

    def _read_result(self, core, field_count):
        if field_count > 0:
            self.description = core.description
            self.description_flags = core.description_flags
            rows = self._taken
            if rows is None:
                keys = self._row_keys(core)
                # the rows, read off the socket and kept as their packets (a _core.Store:
                # a sequence that decodes the rows it returns, and the columnar methods'
                # source); decoded at once when decoding may run Python code (user
                # converters)
                rows = core.store(keys)
                if rows is None:
                    rows = tuple(core.fetch(-1, keys))
            else:   # taken already, with this class's keys (mysqlc.aio: _taken's note)
                self._taken = None
            self._rows = rows
            self.rowcount = len(rows)
            self.lastrowid = 0
        else:
            self._rows = ()
            self.rowcount = core.affected_rows
            self.lastrowid = core.insert_id
        self.rownumber = 0
        self.warning_count = core.warning_count

    def _check_executed(self):
        if self._rows is None:
            self._pipe_rows()

    # ------------------------------------------------------------ execute

    def execute(self, query: Union[str, bytes], args: _Args = None, *,
                infile: Optional[_Infile] = None,
                attributes: Union[Mapping[str, Any], Iterable[tuple[str, Any]], None] = None
                ) -> int:
        """Execute one statement.

        In prepared mode (the class docstring's Notes: the ``Prepared*`` classes,
        ``connection.cursor(prepared=True)``) it runs as a prepared statement: the
        parameters go in the binary format of COM_STMT_EXECUTE, `attributes` after them
        (PARAMETER_COUNT_AVAILABLE); a wrong number of parameters raises
        ProgrammingError naming both counts, and OperationalError ``(2020, ...)`` is
        raised before anything is sent when the COM_STMT_EXECUTE packet, or a value
        sent as long data (values longer than ``connection.long_data_threshold``, sent
        in chunks below the limit), is not smaller than ``max_allowed_packet``.

        Parameters
        ----------
        query : str or bytes
            SQL with ``%s`` placeholders for a sequence `args`, or ``%(name)s`` for a
            mapping; ``%%`` is a literal ``%`` when `args` is given.  ``str`` is
            encoded with the connection's encoding.
        args : sequence, mapping or single value, optional
            Parameters, written as SQL literals by the C core; str and bytes as
            mysqlclient writes them for the session's sql_mode (backslash escapes, or
            ``'`` doubled under NO_BACKSLASH_ESCAPES), the mode confirmed with one
            ``SET sql_mode=@@sql_mode`` first where it is not known for certain and a
            value needs it (a ``_<charset> X'..'`` hex literal in a multi-statement text
            or where it cannot be asked; docs/compat.md "Escaping").  None: `query` is
            sent as is (no ``%`` processing).
        infile : bytes, binary file or iterable of bytes, optional
            The data for a ``LOAD DATA LOCAL INFILE`` statement (needs
            ``connect(local_infile=True)``); streamed in chunks, never read whole,
            in packets of ``min(1 MiB, max_allowed_packet - 5)`` bytes (the session's
            limit, read once per connection before the first statement that mentions
            LOCAL).  A server that refuses a packet closes the connection: its 1153,
            or OperationalError 2006/2013 naming the packet size (docs/compat.md
            "LOAD DATA LOCAL INFILE").  With :mod:`mysqlc.aio` also an async iterable
            of bytes (anything with ``__aiter__``): each chunk is awaited by the
            awaiting task, in its context (docs/asyncio.md, "LOAD DATA LOCAL from an
            async iterable").
        attributes : mapping or iterable of (name, value) pairs, optional
            Query attributes for this statement only, sent after the cursor's own
            (:meth:`add_attribute`) in COM_QUERY (MySQL 8.0.23+, MySQL docs
            "COM_QUERY", CLIENT_QUERY_ATTRIBUTES); names are str.

        Returns
        -------
        int
            :attr:`rowcount`.

        Raises
        ------
        NotSupportedError
            Query attributes (given here or with :meth:`add_attribute`) and a server
            without CLIENT_QUERY_ATTRIBUTES (MariaDB, MySQL before 8.0.23): nothing
            is sent, the connection stays usable.
        ProgrammingError
            Placeholder/parameter count mismatch, unsupported parameter type, SQL
            error mapped to it, closed cursor.
        OperationalError
            ``(2020, ...)`` (libmysqlclient's CR_NET_PACKET_TOO_LARGE, which
            mysqlclient maps to OperationalError, as the server's own 1153 "Got a
            packet bigger than 'max_allowed_packet' bytes"): the statement is not
            smaller than the server's ``max_allowed_packet``; the message names both
            sizes.  Nothing is sent and the connection stays usable (the server
            would close it).  ``@@max_allowed_packet`` is read once per connection,
            the first time a command reaches 1024 bytes.
        DatabaseError subclasses
            For errors the server reports (see :mod:`mysqlc.errors`).
        """
        if args is None and infile is None and attributes is None and self._plain_text \
                and not self._prepared:
            # a statement without parameters: _format's work for it inlined (a small
            # statement's Python cost is mostly its calls), the same steps in order
            conn = self.connection
            if conn is not None:
                conn._last_error = _NO_ERROR
                if type(query) is str:
                    query = query.encode(conn.encoding)   # (after its _sync_session)
                elif type(query) is bytes:
                    conn._sync_session()
                else:
                    return self._query(conn, self._format(conn, query, None))
                conn._mode_written = None
                if _MODE_NOTE_CACHE.get(query) is not False or _SEMICOLON in query:
                    conn._note_statement(query)   # (else the call would do nothing)
                return self._query(conn, query)
        if self._prepared:
            return self._execute_prepared(query, args, infile, attributes)
        conn = self.connection   # (_get_conn, inlined)
        if conn is None:
            raise ProgrammingError(0, "cursor closed")
        # mysqlclient's execute() first drains the connection (mysql_next_result),
        # which clears the last error even when the parameters then fail to format
        conn._last_error = _NO_ERROR
        attrs = self._query_attributes(attributes) if (attributes is not None or
                                                       self._attributes) else None
        if infile is None:
            return self._query(conn, self._format(conn, query, args), attrs)
        if conn._pipeline is not None and conn._pipeline.enabled:
            raise ProgrammingError(0, "LOAD DATA LOCAL INFILE (infile=) cannot run inside a "
                                   "pipeline block (the file would follow commands already "
                                   "sent); run it outside the block")
        if not conn._local_infile:
            raise ProgrammingError(0, "infile= needs connect(local_infile=True)")
        conn._pending_infile = infile
        try:
            return self._query(conn, self._format(conn, query, args), attrs)
        finally:
            conn._pending_infile = None

    def mogrify(self, query: Union[str, bytes], args: _Args = None) -> str:
        """Return the statement :meth:`execute` would send, as ``str``.

        Decoded with the connection's encoding; bytes that do not decode (binary
        parameters) come out as surrogate escapes.  (PyMySQL's and mysqlclient
        2.2's method.)
        """
        conn = self._get_conn()
        return self._format(conn, query, args).decode(conn.encoding, "surrogateescape")

    def executemany(self, query: Union[str, bytes],
                    args: Iterable[Union[Sequence[Any], Mapping[str, Any]]]) -> Optional[int]:
        """Execute `query` once per parameter set in `args`.

        With MariaDB (MARIADB_CLIENT_STMT_BULK_OPERATIONS), ``INSERT``, ``REPLACE``,
        ``UPDATE`` and ``DELETE`` statements are prepared once and all parameter sets go
        in COM_STMT_BULK_EXECUTE commands, one per ``max_allowed_packet`` (or
        :attr:`max_stmt_length`), plus one where a column's value types cannot share
        one type; ``INSERT ... SELECT`` (which the server refuses in bulk) goes as one
        multi-statement query per ``max_allowed_packet``.  Otherwise
        ``INSERT``/``REPLACE ... VALUES (...)`` statements (see :data:`RE_INSERT_VALUES`)
        are rewritten into multi-row statements, split below the same limit, and
        anything else runs :meth:`execute` per parameter set (in prepared mode: one
        COM_STMT_EXECUTE per set on one prepared statement).  docs/batching.md has the
        paths, the value types and what a failing row leaves applied.

        Parameters
        ----------
        query : str or bytes
        args : iterable of sequences or mappings

        Returns
        -------
        int or None
            Total rows affected (also in :attr:`rowcount`); None, without any
            statement, when `args` is empty (as mysqlclient).

        Raises
        ------
        OperationalError
            ``(2020, ...)`` when one parameter set alone makes a statement (or a
            COM_STMT_BULK_EXECUTE) too large for ``max_allowed_packet``: the bulk
            path checks every command before sending the first, the multi-row text
            path refuses that set's statement (the statements before it were run).

        Notes
        -----
        Inside a :meth:`Connection.pipeline` block executemany is a sync point: the
        queued responses are read first (their first error raised), then it runs as
        outside the block (its own commands bounded as usual).
        """
        conn = self.connection
        pipe = conn._pipeline if conn is not None else None
        if pipe is not None:
            pipe.sync()
            conn._pipeline = None
            try:
                return self.executemany(query, args)
            finally:
                conn._pipeline = pipe
        if self._prepared:
            return self._executemany_prepared(query, args)
        conn = self._get_conn()
        if args is None:
            return None
        rows = iter(args)
        sentinel = object()
        first = next(rows, sentinel)
        if first is sentinel:
            return None
        rows = chain((first,), rows)
        if isinstance(query, str):
            qb = query.encode(conn.encoding)
        elif isinstance(query, (bytes, bytearray, memoryview)):
            qb = bytes(query)
        else:
            raise TypeError("query must be str or bytes, not %s" % type(query).__name__)
        bulk = conn._encoders is None and conn._conn.bulk_operations and _bulk_dml(qb)
        if bulk:
            rows = list(rows)
            total = self._executemany_bulk(conn, qb, rows)
            if total is not None:
                return total
        m = _RE_INSERT_VALUES_BYTES.match(qb)
        if m is not None:
            prefix, postfix = m.group("prefix"), m.group("postfix")
            if not _has_placeholder(prefix) and not _has_placeholder(postfix):
                return self._executemany_rows(conn, prefix.replace(b"%%", b"%"),
                                              m.group("values"),
                                              postfix.replace(b"%%", b"%"), rows)
        if bulk and not _RE_RETURNING.search(qb):
            # a DML statement the bulk path left to the text path (values without a
            # binary form, column types that change too often): its statements joined
            # into one multi-statement query per max_allowed_packet, not one round trip
            # per row; the same values and the same "stops at the failing row"
            total = self._executemany_multi(conn, qb, rows)
            if total is not None:
                self._set_executed_lazily(self, conn, "many", qb, rows)
                return total
        total = 0
        for params in rows:
            total += self.execute(qb, params)
        self.rowcount = total
        return total

    def _executemany_bulk(self, conn, query, rows):
        """MariaDB: an INSERT/REPLACE/UPDATE/DELETE (see :func:`_bulk_dml`) as one prepared
        statement and all `rows` through COM_STMT_BULK_EXECUTE: one round trip per
        ``max_allowed_packet`` worth of rows (docs/batching.md).  Only where the stored
        values are the text path's: the default encoders (the caller checks), sequences
        (``%s``) or mappings (``%(name)s``) of values that have a binary form (a tuple or
        list value, which the text path expands for ``IN %s``, does not).  Returns None
        to use the text path (also when the statement cannot be prepared: the text path
        then reports its error)."""
        conn._last_error = _NO_ERROR
        conn._sync_session()
        sql, names = _to_qmark(query, True)
        if names is None:
            if not all(type(r) is tuple or type(r) is list for r in rows):
                return None
            params = rows
        else:
            if not all(isinstance(r, Mapping) for r in rows):
                return None
            try:
                params = [tuple([r[k] for k in names]) for r in rows]
            except KeyError:
                return None
        if not params[0] or any(type(v) is tuple or type(v) is list for v in params[0]):
            return None
        unpreparable = conn.__dict__.setdefault("_bulk_unpreparable", set())
        if sql in unpreparable:
            return None
        one_trip = (not conn._stmt_stale and sql not in conn._stmt_cache and
                    getattr(conn, "_one_trip", True) and _one_trip_ok(conn, sql, params[0]) and
                    all(len(r) == len(params[0]) for r in params))
        try:
            if one_trip:
                try:
                    total, stmt = _bulk_execute_one_trip(self, conn, sql, params, exact=True)
                except NotSupportedError:
                    # (compression) nothing sent: the prepare in its own round trip, now
                    # and next time -- still COM_STMT_BULK_EXECUTE, not the text path
                    conn._one_trip = one_trip = False
                else:
                    if stmt is None:
                        return None  # nothing sent: a value the binary format cannot carry
            if not one_trip:
                stmt = self._statement(conn, sql)
        except (ProgrammingError, OperationalError) as exc:
            if exc.args and exc.args[0] == _CR_NET_PACKET_TOO_LARGE:
                # a row too large for max_allowed_packet, found before anything was
                # sent: raised as it is (the text path would run the rows before it)
                raise
            if sql not in conn._stmt_cache:   # the prepare failed (a bulk error keeps it)
                if exc.args[0] == _ER_PARSE_ERROR:
                    # two statements in one, syntax the prepare protocol lacks: not asked
                    # again on this connection
                    if len(unpreparable) >= 256:
                        unpreparable.clear()
                    unpreparable.add(sql)
                return None          # the text path runs it, or reports its error
            raise
        if not one_trip:
            if stmt.ncols or any(len(r) != stmt.nparams for r in params):
                return None
            total = _bulk_execute(self, conn, stmt, params, exact=True)
        if total is None and stmt.no_bulk:
            total = self._executemany_multi(conn, query, rows)
        if total is not None:
            self._set_executed_lazily(self, conn, "many", query, rows)
        return total

    def _executemany_multi(self, conn, query, rows):
        """A DML statement the server runs but refuses in COM_STMT_BULK_EXECUTE
        (INSERT ... SELECT): one text statement per row (the text path's literals), sent
        together as one multi-statement COM_QUERY per ``max_allowed_packet`` (or
        :attr:`max_stmt_length`); the server runs them in order as separate statements and
        stops at the first error (the statements before it stay applied, as with one
        execute per row).  None without CLIENT_MULTI_STATEMENTS (``multi_statements=False``)
        or when the parameters need another path (the caller then runs one execute per
        row)."""
        if not conn._conn.client_flag & _CLIENT_MULTI_STATEMENTS:
            return None
        query = query.rstrip()
        while query.endswith(b";"):
            query = query[:-1].rstrip()
        limit = conn._get_max_allowed_packet() - 1024
        if self.max_stmt_length:
            limit = min(limit, self.max_stmt_length)
        texts = [BaseCursor._format(self, conn, query, params) for params in rows]
        total = 0
        start = 0
        size = 0
        for i, text in enumerate(texts):
            # ";\n" ends a statement also after a trailing "-- comment"
            if i > start and size + 2 + len(text) > limit:
                total += self._run_multi(conn, b";\n".join(texts[start:i]))
                start, size = i, 0
            size += len(text) + 2
        total += self._run_multi(conn, b";\n".join(texts[start:]))
        self.rowcount = total
        return total

    def _run_multi(self, conn, sql):
        """Send the multi-statement `sql` and read all its results; returns the sum of
        their affected rows (rowcount, lastrowid and warning_count: the last one's)."""
        total = max(self._query(conn, sql), 0)
        while self.nextset():
            total += max(self.rowcount, 0)
        return total

    def _executemany_rows(self, conn, prefix, values, postfix, rows):
        limit = conn._get_max_allowed_packet() - 1024   # headroom for the packet header
        if self.max_stmt_length:
            limit = min(limit, self.max_stmt_length)
        format_query = conn._core_module.format_query
        base = len(prefix) + len(postfix)
        parts = []
        size = base
        total = 0
        conn._note_statement(prefix)
        options = None      # as _with_mode decided them for the statement being built
        for params in rows:
            build = partial(_format_query, format_query, values, _normalize_args(params))
            v = None if options is None else build(options)
            if v is None:   # the first row, or one that needs the mode (portable=2)
                v, options = _with_mode(conn, build, self, with_options=True)
            if parts and size + 1 + len(v) > limit:
                total += self._query(conn, prefix + b",".join(parts) + postfix)
                parts = []
                size = base
                # the mode is decided again after this statement (it may have fired a
                # trigger that changed it)
                v, options = _with_mode(conn, build, self, with_options=True)
            if parts:
                size += 1
            parts.append(v)
            size += len(v)
        total += self._query(conn, prefix + b",".join(parts) + postfix)
        self.rowcount = total
        return total

    # ------------------------------------------------------------ prepared mode

    def _statement(self, conn, sql):
        """The connection's cached prepared statement for `sql` (bytes with ``?``
        placeholders), prepared (COM_STMT_PREPARE) on a miss; the least recently used
        one beyond ``connection.prepared_cache_size`` is closed (COM_STMT_CLOSE)."""
        if conn._stmt_stale:
            conn._drop_statements(self)
        cache = conn._stmt_cache
        stmt = cache.get(sql)
        if stmt is not None:
            cache.move_to_end(sql)
            return stmt
        conn._check_closed()
        conn._last_error = _NO_ERROR
        try:
            conn._discard_pending(self)
            sid, nparams, ncols = conn._conn.stmt_prepare(sql)
        except Error as exc:
            conn._note_error(exc)
            raise
        stmt = _Statement(sid, nparams, ncols)
        cache[sql] = stmt
        while len(cache) > max(conn.prepared_cache_size, 1):
            _old_sql, old = cache.popitem(last=False)
            conn._conn.stmt_close(old.id)
        return stmt

    def _execute_prepared(self, query, args, infile, attributes):
        """:meth:`execute` in prepared mode (COM_STMT_EXECUTE); returns rowcount."""
        conn = self._get_conn()
        conn._last_error = _NO_ERROR     # as the text path
        conn._sync_session()             # SET NAMES run as SQL: the cache was cleared
        attrs = self._query_attributes(attributes) if (attributes is not None or
                                                       self._attributes) else None
        qcache = conn._qmark_cache
        key = (query, args is None)
        hit = qcache.get(key) if isinstance(query, (str, bytes)) else None
        if hit is None:
            if isinstance(query, str):
                query = query.encode(conn.encoding)
            elif not isinstance(query, (bytes, bytearray, memoryview)):
                raise TypeError("query must be str or bytes, not %s" % type(query).__name__)
            hit = _to_qmark(bytes(query), args is not None)
            if isinstance(key[0], (str, bytes)):
                if len(qcache) >= 1024:
                    qcache.clear()
                qcache[key] = hit
        sql, names = hit
        conn._note_statement(sql)    # a prepared CALL: the sql_mode is uncertain after it
        if args is None:
            params = ()
        elif names is not None:
            if not isinstance(args, Mapping):
                raise ProgrammingError(0, "%(name)s placeholders need a mapping of parameters")
            try:
                params = tuple(args[k] for k in names)
            except KeyError as e:
                raise ProgrammingError(0, "missing parameter %s" % e) from None
        elif isinstance(args, Mapping):
            raise ProgrammingError(0, "a mapping of parameters needs %(name)s placeholders")
        else:
            params = tuple(_normalize_args(args))
        pipe = conn._pipeline
        if pipe is not None and not pipe.enabled:
            pipe = None
        if pipe is not None and infile is not None:
            raise ProgrammingError(0, "LOAD DATA LOCAL INFILE (infile=) cannot run inside a "
                                   "pipeline block (the file would follow commands already "
                                   "sent); run it outside the block")
        if (pipe is None and attrs is None and infile is None and not self._server_cursor and
                conn._conn.bulk_operations and not conn._stmt_stale and
                sql not in conn._stmt_cache and getattr(conn, "_one_trip", True) and
                _one_trip_ok(conn, sql, params)):
            result = self._execute_one_trip(conn, sql, params, query, args)
            if result is not None:
                return result
        stmt = self._statement(conn, sql)
        if len(params) != stmt.nparams:
            raise ProgrammingError(
                0, "wrong number of parameters: the statement has %d placeholders but "
                "%d parameters were given" % (stmt.nparams, len(params)))
        if conn._closed:
            raise conn._closed_error()
        lock = conn._lock
        if not lock.acquire(False):
            raise _busy()
        try:
            self._clear()
            conn._last_error = _NO_ERROR
            if pipe is not None and attrs is None and not self._server_cursor:
                unsure = _pipeline.check_statement(conn, sql)
                if conn._pending():
                    conn._discard_pending(self)
                self._set_executed_lazily(self, conn, "one", query, args)
                core = conn._conn
                size = 16 + sum(len(v) if isinstance(v, (str, bytes, bytearray)) else 16
                                for v in params)
                _nc, stmt.types = pipe._send(
                    self, size, lambda owner: core.stmt_execute(
                        stmt.id, params, stmt.types, encoding=conn.encoding,
                        send_only=True, owner=owner),
                    unsure, stmt=stmt)
                return -1
            conn._discard_pending(self)
            conn._owner = weakref.ref(self)
            self._set_executed_lazily(self, conn, "one", query, args)
            core = conn._conn
            if infile is not None:
                conn._pending_infile = infile
            try:
                field_count, stmt.types = core.stmt_execute(
                    stmt.id, params, stmt.types, cursor=self._server_cursor,
                    long_data_threshold=conn.long_data_threshold, encoding=conn.encoding,
                    attributes=attrs)
            finally:
                conn._pending_infile = None
            self._stmt = stmt
            self._read_result(core, field_count)
            return self.rowcount
        except Error as exc:
            conn._note_error(exc)
            raise
        finally:
            lock.release()

    def _execute_one_trip(self, conn, sql, params, query, args):
        """The first execute of `sql` on a MariaDB connection: COM_STMT_PREPARE and
        COM_STMT_EXECUTE of statement id 0xffffffff ("the statement prepared last", with
        MARIADB_CLIENT_STMT_BULK_OPERATIONS) in one round trip; the statement joins the
        cache.  A prepare error is raised (the execute's error after it is dropped); an
        execute error is raised with the statement kept.  Returns rowcount, or None
        (nothing sent) when the connection cannot do it (compression)."""
        if conn._closed:
            raise conn._closed_error()
        lock = conn._lock
        if not lock.acquire(False):
            raise _busy()
        try:
            self._clear()
            conn._last_error = _NO_ERROR
            conn._discard_pending(self)
            cache = conn._stmt_cache
            while cache and len(cache) >= max(conn.prepared_cache_size, 1):
                _old_sql, old = cache.popitem(last=False)   # room for the new one
                conn._conn.stmt_close(old.id)
            conn._owner = weakref.ref(self)
            self._set_executed_lazily(self, conn, "one", query, args)
            core = conn._conn
            try:
                sid, nparams, ncols, field_count, types, error = core.stmt_prepare_execute(
                    sql, params, encoding=conn.encoding)
            except NotSupportedError:
                conn._one_trip = False
                return None
            stmt = _Statement(sid, nparams, ncols)
            stmt.types = types
            cache[sql] = stmt
            if error is not None:
                raise error
            self._stmt = stmt
            self._read_result(core, field_count)
            return self.rowcount
        except Error as exc:
            conn._note_error(exc)
            raise
        finally:
            lock.release()

    def _executemany_prepared(self, query, args):
        """:meth:`executemany` in prepared mode: COM_STMT_BULK_EXECUTE where it applies,
        else one COM_STMT_EXECUTE per parameter set."""
        if args is None:
            return None
        rows = list(args)
        if not rows:
            return None
        conn = self._get_conn()
        if isinstance(query, str):
            query = query.encode(conn.encoding)
        elif not isinstance(query, (bytes, bytearray, memoryview)):
            raise TypeError("query must be str or bytes, not %s" % type(query).__name__)
        query = bytes(query)
        conn._note_statement(query)
        params = None
        if conn._conn.bulk_operations and _bulk_dml(query):
            conn._sync_session()
            sql, names = _to_qmark(query, True)
            if names is None:
                if all(isinstance(r, (tuple, list)) for r in rows):
                    params = rows
            elif all(isinstance(r, Mapping) for r in rows):
                try:
                    params = [tuple([r[k] for k in names]) for r in rows]
                except KeyError as e:
                    raise ProgrammingError(0, "missing parameter %s" % e) from None
        if params is not None:
            stmt = None
            if (not conn._stmt_stale and sql not in conn._stmt_cache and
                    getattr(conn, "_one_trip", True) and _one_trip_ok(conn, sql, params[0]) and
                    all(len(r) == len(params[0]) for r in params)):
                try:
                    total, stmt = _bulk_execute_one_trip(self, conn, sql, params, exact=False)
                except NotSupportedError:
                    conn._one_trip = False   # (compression) the two round trips next time
            if stmt is None:
                stmt = self._statement(conn, sql)
                for r in params:
                    if len(r) != stmt.nparams:
                        raise ProgrammingError(
                            0, "wrong number of parameters: the statement has %d "
                            "placeholders but %d parameters were given" % (stmt.nparams, len(r)))
                total = None if stmt.ncols else _bulk_execute(self, conn, stmt, params,
                                                              exact=False)
            if total is None and stmt.no_bulk and conn._encoders is None:
                total = self._executemany_multi(conn, query, rows)
            if total is not None:
                self._set_executed_lazily(self, conn, "many", query, rows)
                return total
        total = 0
        for params in rows:
            total += max(self.execute(query, params), 0)
        self.rowcount = total
        self._set_executed_lazily(self, conn, "many", query, rows)
        return total

    def callproc(self, procname: Union[str, bytes],
                 args: Sequence[Any] = ()) -> Sequence[Any]:
        """Call stored procedure `procname` with `args` (mysqlclient semantics).

        Runs ``SET @_procname_0=arg0, ...`` and then
        ``CALL procname(@_procname_0, ...)``; OUT/INOUT values can afterwards be
        read with ``SELECT @_procname_0, ...`` once every result set of the call
        has been consumed with :meth:`nextset`.  The CALL's own final empty result
        comes last.

        Returns
        -------
        sequence
            `args`, unchanged (PEP 249 allows it; modified values live in the
            server variables).
        """
        conn = self._get_conn()
        name = procname.encode(conn.encoding) if isinstance(procname, str) else bytes(procname)
        name = name.replace(b"`", b"``")   # quoted as one identifier, as mysqlclient 2.2+
        if args:
            assignments = _joined_literals(
                conn, [(b"@`_%s_%d`=" % (name, i), arg) for i, arg in enumerate(args)], self)
            self._query(conn, b"SET " + assignments)
        variables = b",".join(b"@`_%s_%d`" % (name, i) for i in range(len(args)))
        conn._note_statement(b"CALL")
        self._query(conn, b"CALL `" + name + b"`(" + variables + b")")
        return args

    def nextset(self) -> Optional[bool]:
        """Advance to the next result of a multi-statement query or a CALL.

        Returns
        -------
        True or None
            True when there is a next result (it is read and buffered, and
            :attr:`description`/:attr:`rowcount` describe it); None when there is
            none, or when another statement ran on the connection since this
            cursor's.
        """
        conn = self._get_conn()
        if self._pipe_entry is not None:
            self._pipe_rows()
        sets = self._pipe_sets
        if sets is not None:     # a pipelined response's further results, read with it
            item = sets.pop(0)
            if not sets:
                self._pipe_sets = None
            if isinstance(item, BaseException):   # the statement of the text that failed
                self._clear()
                raise item
            (self.description, self.description_flags, self._rows, self.rowcount,
             self.lastrowid, self.warning_count) = item
            self.rownumber = 0
            return True
        if not conn._is_owner(self):
            return None
        core = conn._conn
        if not core.more_results:
            return None
        executed = self._executed
        self._clear()
        self._executed = executed
        conn._last_error = _NO_ERROR
        try:
            field_count = core.next_result()
        except Error as exc:
            conn._note_error(exc)
            raise
        if field_count < 0:
            return None
        self._read_result(core, field_count)
        return True

    # ------------------------------------------------------------ fetching

    def fetchone(self) -> Any:
        """Next row, or None when the result set is exhausted."""
        rows = self._rows
        if rows is None:
            rows = self._pipe_rows()
        i = self.rownumber
        if i >= len(rows):
            return None
        self.rownumber = i + 1
        return rows[i]

    def fetchmany(self, size: Optional[int] = None) -> Sequence[Any]:
        """Up to `size` (default :attr:`arraysize`) next rows, as a tuple."""
        rows = self._rows
        if rows is None:
            rows = self._pipe_rows()
        start = self.rownumber
        if size is None:
            size = self.arraysize
        end = len(rows) if size < 0 else start + size
        result = rows[start:end]
        self.rownumber = min(end, len(rows))
        return result

    def fetchall(self) -> Sequence[Any]:
        """All remaining rows, as a tuple."""
        rows = self._rows
        if rows is None:
            rows = self._pipe_rows()
        start = self.rownumber
        self.rownumber = len(rows)
        return rows[start:] if start or type(rows) is not tuple else rows

    def scroll(self, value: int, mode: str = "relative") -> None:
        """Move :attr:`rownumber` by `value` (``mode="relative"``) or to `value`
        (``mode="absolute"``).

        Raises
        ------
        IndexError
            The target is outside ``0 <= n < len(rows)`` (as mysqlclient).
        ProgrammingError
            Unknown mode, or no execute yet.
        """
        self._check_executed()
        if mode == "relative":
            target = self.rownumber + value
        elif mode == "absolute":
            target = value
        else:
            raise ProgrammingError(0, "unknown scroll mode %r" % (mode,))
        if not 0 <= target < len(self._rows):
            raise IndexError("out of range")
        self.rownumber = target

    def __iter__(self) -> Iterator[Any]:
        self._check_executed()
        rows = self._rows
        while self._rows is rows:
            i = self.rownumber
            if i >= len(rows):
                return
            self.rownumber = i + 1
            yield rows[i]

    def __next__(self) -> Any:
        """Next row, as :meth:`fetchone`; raises StopIteration at the end
        (PEP 249's optional ``next()``)."""
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row

    next = __next__

    # ------------------------------------------------------------ misc

    def close(self) -> None:
        """Close the cursor; results of its statement still unread on the
        connection are drained.  Further use raises ProgrammingError."""
        conn = self.connection
        if conn is None:
            return
        try:
            owner = conn._owner   # conn._is_owner(self), inline
            if owner is not None and owner() is self and conn._conn.open:
                conn._owner = None
                if conn._pipeline is not None or conn._conn.unread:
                    conn._discard_pending()   # (it does nothing otherwise)
        finally:
            self.connection = None
            self._rows = None

    # ------------------------------------------------------------ columnar output

    def fetch_arrow_table(self, batch_size: Optional[int] = None, *,
                          decimal: _DecimalMode = "decimal",
                          progress: _Progress = None) -> pyarrow.Table:
        """The remaining rows of the result set as a ``pyarrow.Table``.

        The C core decodes the rows straight into Arrow buffers with the GIL released:
        from the socket on an unbuffered cursor (``SSCursor`` family), from the row
        packets ``execute()`` kept on a buffered one -- the rows from :attr:`rownumber`
        on, as :meth:`fetchall` would return them; :attr:`rownumber` moves to the end.
        Only a buffered result decoded in ``execute()`` (a user converter applies to a
        column) is converted from its Python rows with pyarrow.  Types, NULLs and zero
        dates as documented in :mod:`mysqlc.columnar`.

        Parameters
        ----------
        batch_size : int, optional
            Rows per record batch of the table (default 65536).
        decimal : {"decimal", "float", "str"}
            DECIMAL as decimal128/256 (default), float64 or utf8.
        progress : callable or tqdm-like, optional
            Called with the rows read so far after each batch, or
            ``progress.update(n)`` when it has an ``update`` method.

        Raises
        ------
        ImportError
            pyarrow is not installed.
        ProgrammingError
            No statement with a result set was executed.
        """
        self._check_executed()
        return arrow_table(self, batch_size, decimal, progress)

    def fetch_record_batches(self, batch_size: Optional[int] = None, *,
                             decimal: _DecimalMode = "decimal",
                             progress: _Progress = None) -> pyarrow.RecordBatchReader:
        """The remaining rows as a ``pyarrow.RecordBatchReader`` of batches of at most
        `batch_size` rows (default 65536), read from the socket as the reader is
        consumed (on unbuffered cursors).  Options as :meth:`fetch_arrow_table`."""
        self._check_executed()
        return record_batches(self, batch_size, decimal, progress)

    def fetch_arrow_stream(self, batch_size: Optional[int] = None, *,
                           decimal: _DecimalMode = "decimal",
                           progress: _Progress = None) -> ArrowStream:
        """The remaining rows as a :class:`mysqlc.columnar.ArrowStream`: an object
        with ``__arrow_c_stream__`` (the Arrow PyCapsule Interface) that pyarrow,
        polars, DuckDB or nanoarrow consume; needs none of them itself."""
        self._check_executed()
        return ArrowStream(self, batch_size, decimal=decimal, progress=progress)

    def fetchnumpy(self, *, decimal: _DecimalMode = "decimal",
                   progress: _Progress = None) -> dict[str, numpy.ndarray[Any, Any]]:
        """The remaining rows as ``{column name: numpy array}``: integers and floats in
        their dtypes, DATE ``datetime64[D]``, DATETIME ``datetime64[us]``, TIME
        ``timedelta64[us]``, strings / bytes / decimals as object arrays; a column with
        NULLs is a ``numpy.ma.MaskedArray`` masked where NULL.  Needs numpy only (on
        unbuffered cursors)."""
        return self._columnar("numpy", "fetchnumpy()", decimal, progress)

    def fetch_df(self, *, decimal: _DecimalMode = "decimal",
                 progress: _Progress = None) -> pandas.DataFrame:
        """The remaining rows as a ``pandas.DataFrame`` (through Arrow:
        ``Table.to_pandas()``).  Needs pandas and pyarrow."""
        return self._columnar("pandas", "fetch_df()", decimal, progress)

    def fetch_polars(self, *, decimal: _DecimalMode = "decimal",
                     progress: _Progress = None) -> polars.DataFrame:
        """The remaining rows as a ``polars.DataFrame`` (handed over through the Arrow
        C stream interface).  Needs polars only (on unbuffered cursors)."""
        return self._columnar("polars", "fetch_polars()", decimal, progress)

    def _columnar(self, return_type, what, decimal, progress):
        self._check_executed()
        _need({"pandas": "pyarrow"}.get(return_type, return_type), what)
        return convert(_Collected.read(self, None, decimal, progress), return_type, what)

    def load_table(self, table: str, data: Any, columns: Optional[Sequence[str]] = None,
                   **options: Any) -> int:
        """Bulk-load `data` into `table`; see :func:`mysqlc.bulk.load_table` for the
        accepted data (Arrow, pandas/polars DataFrames, iterables of tuples), the
        options and the errors.  Returns the number of rows loaded."""
        return _bulk.load_table(self, table, data, columns, **options)

    def setinputsizes(self, *args: Any) -> None:
        """Does nothing (PEP 249)."""

    def setoutputsize(self, size: Any, column: Optional[int] = None) -> None:
        """Does nothing (PEP 249's ``setoutputsize``)."""

    #: the misspelt name of earlier mysqlc releases
    setoutputsizes = setoutputsize

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]],
                 exc_value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()


class Cursor(BaseCursor):
    """The default cursor: buffered, rows as tuples."""

    if TYPE_CHECKING:   # the row type, for type checkers only
        def fetchone(self) -> Optional[tuple[Any, ...]]: ...
        def fetchmany(self, size: Optional[int] = None) -> tuple[tuple[Any, ...], ...]: ...
        def fetchall(self) -> tuple[tuple[Any, ...], ...]: ...
        def __iter__(self) -> Iterator[tuple[Any, ...]]: ...
        def __next__(self) -> tuple[Any, ...]: ...


class DictCursor(BaseCursor):
    """Buffered cursor returning rows as dicts keyed by column name.

    A column name that already occurred in the row is keyed ``"table.column"``
    instead (mysqlclient's and PyMySQL's rule), e.g. ``SELECT a.id, b.id FROM a
    JOIN b ...`` gives keys ``"id"`` and ``"b.id"``.  The keys are computed once
    per result set.
    """

    if TYPE_CHECKING:   # the row type, for type checkers only
        def fetchone(self) -> Optional[dict[str, Any]]: ...
        def fetchmany(self, size: Optional[int] = None) -> tuple[dict[str, Any], ...]: ...
        def fetchall(self) -> tuple[dict[str, Any], ...]: ...
        def __iter__(self) -> Iterator[dict[str, Any]]: ...
        def __next__(self) -> dict[str, Any]: ...

    #: mysqlclient's fetch type: 1 keys a column by its name, a repeated name as
    #: ``"table.column"``; 2 keys every column ``"table.column"`` (a column without a
    #: table, e.g. an expression, by its name), as ``_mysql``'s ``fetch_row(how=2)``.
    _fetch_type = 1

    def _row_keys(self, core):
        keys = []
        seen = set()
        qualify_all = self._fetch_type == 2
        for name, table in zip(core.column_names, core.column_tables):
            key = name
            if (qualify_all and table) or key in seen:
                key = "%s.%s" % (table, name)
            seen.add(key)
            keys.append(key)
        return tuple(keys)


# ---------------------------------------------------------------- unbuffered cursors

class SSCursor(BaseCursor):
    """Unbuffered ("server-side", mysqlclient's name) cursor: rows are read from the
    socket as they are fetched, so memory stays bounded by one ``fetchmany`` batch
    whatever the size of the result.

    ``rowcount`` is -1 until the result is exhausted, then the number of rows read
    (PyMySQL's behaviour; mysqlclient's stays -1), and ``fetchmany``/``fetchall``
    return lists (mysqlclient: tuples; docs/compat.md); only forward ``scroll`` is
    possible.
    While rows are unread, any other command on the connection raises
    ProgrammingError 2014 "Commands out of sync"; :meth:`close`, :meth:`nextset`
    or the cursor's next :meth:`execute` read and drop the rest.
    """

    _unbuffered = True
    _server_cursor = True

    def _read_result(self, core, field_count):
        self._keys = None
        self._ahead = None
        if field_count > 0:
            self.description = core.description
            self.description_flags = core.description_flags
            self._keys = self._row_keys(core)
            self._rows = ()          # marker: executed; rows come from the socket
            self.rowcount = -1
            self.lastrowid = 0
            self._streaming = True
        else:
            self._rows = ()
            self.rowcount = core.affected_rows
            self.lastrowid = core.insert_id
            self._streaming = False
        self.rownumber = 0
        self.warning_count = core.warning_count
        if self._prepared and self._server_cursor:
            self._buffer = []    # rows of the last COM_STMT_FETCH not returned yet
            if field_count > 0:
                # the server streams the rows at once when it opens no cursor
                self._streaming = _FETCH if core.cursor_open else core.rows_pending

    #: bytes of row packets one internal read-ahead batch (iteration, scroll) holds at
    #: most: rows of MiB-sized BLOBs come a few at a time, small rows hundreds at once
    _batch_bytes = 1 << 20

    def _pull(self, n, max_bytes=0, wait=True, held=0, defer=False):
        """Up to `n` rows (all when n < 0) from the wire, fewer once they add up to
        `max_bytes` of packets (when > 0); [] when done.  With `wait` False only rows
        already received (``core.fetch(wait=False)``; not for a server-side cursor): []
        with ``_streaming`` still true when the next row has not all arrived.  `held`:
        rows read earlier that the caller returns with these, not yet counted in
        :attr:`rownumber` (``_pull_ahead``): the end's :attr:`rowcount` counts them.
        `defer` (fetchmany, iteration): an error that comes after some of the rows --
        the server's error mid-result, a lost connection -- is raised by the next fetch,
        and these rows are returned first (``_defer``); otherwise it is raised at once."""
        if self._ahead:
            return self._pull_ahead(n, max_bytes, defer)
        streaming = getattr(self, "_streaming", False)
        if not streaming:
            return []
        if streaming is _DEFERRED:
            raise self._take_deferred()
        conn = self._get_conn()
        if not conn._is_owner(self):
            if not conn.open:   # not an end of the rows: they are lost (every fetch says so)
                raise _lost_rows_error(conn)
            self._streaming = False
            return []
        core = conn._conn
        if streaming is _FETCH and not core.rows_pending:
            return self._fetch_from_server_cursor(core, n, held)
        try:
            rows = (core.fetch(n, self._keys, max_bytes, wait, True) if defer
                    else core.fetch(n, self._keys, max_bytes, wait))
        except Error as exc:
            conn._note_error(exc)
            before = exc.__dict__.pop("_rows_before", None)   # (core.fetch's `partial`)
            if before:
                self._defer(exc)
                return before
            raise
        if not core.rows_pending:
            self._streaming = False
            self.rowcount = self.rownumber + held + len(rows)
            self.warning_count = core.warning_count
        return rows

    def _fetchone_ready(self) -> Any:
        """fetchone() when it needs no wait (mysqlc.aio's unbuffered fetchone() without
        the connection's greenlet): the next row when the engine holds all of its bytes
        already, None at the end of the rows -- rows, rownumber, rowcount and errors as
        fetchone() gives them.  :data:`_NOT_READY`, having changed nothing, when reading
        the row would wait for the server, and in the cases fetchone() reads otherwise
        (not executed yet or a pipelined result, rows read ahead, a server-side
        cursor): the caller then calls fetchone()."""
        if self._rows is None or self._ahead or getattr(self, "_streaming", False) is _FETCH:
            return _NOT_READY
        rows = self._pull(1, 0, False)
        if rows:
            self.rownumber += 1
            return rows[0]
        return _NOT_READY if self._streaming else None

    def _fetch_from_server_cursor(self, core, n, held=0):
        """Up to `n` rows (all when n < 0) of the prepared statement's server-side
        cursor, fetched in batches of :attr:`arraysize` (COM_STMT_FETCH); `held` as
        :meth:`_pull`'s."""
        out = []
        buf = self._buffer
        while n < 0 or len(out) < n:
            if not buf:
                if not core.cursor_open:
                    break
                buf.extend(core.stmt_fetch(max(self.arraysize, 1), self._keys))
                if not buf:
                    break
            take = len(buf) if n < 0 else min(n - len(out), len(buf))
            out.extend(buf[:take])
            del buf[:take]
        if not buf and not core.cursor_open:
            self._streaming = False
            self.rowcount = self.rownumber + held + len(out)
        return out

    def fetchone(self) -> Optional[tuple[Any, ...]]:
        """Next row from the socket, or None at the end."""
        self._check_executed()
        rows = self._pull(1)
        if not rows:
            return None
        self.rownumber += 1
        return rows[0]

    def fetchmany(self, size: Optional[int] = None) -> list[tuple[Any, ...]]:
        """Up to `size` (default :attr:`arraysize`) rows, as a list.  An error that came
        after some of them (the server's, mid-result) is raised by the next fetch, after
        these rows."""
        self._check_executed()
        rows = self._pull(size or self.arraysize, defer=True)
        self.rownumber += len(rows)
        return rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        """All remaining rows, as a list (this reads the rest of the result into
        memory)."""
        self._check_executed()
        rows = self._pull(-1)
        self.rownumber += len(rows)
        return rows

    #: rows read ahead by an iteration that was left before it used them (a deque): the
    #: next fetch or iteration returns them first, so leaving a loop loses no row
    _ahead = None

    def _next_batch(self) -> Any:
        """The rows iteration hands out next (``for row in cur``; mysqlc.aio's ``async
        for``): those a loop left unread, else a read-ahead batch of up to
        max(arraysize, 256) rows or 1 MiB of packets; empty at the end.  Each row counts
        in :attr:`rownumber` when it is handed out."""
        ahead = self._ahead
        if ahead:
            self._ahead = None
            return ahead
        self._check_executed()
        return self._pull(max(self.arraysize, 256), self._batch_bytes, defer=True)

    def _defer(self, exc):
        """`exc` came after rows the caller returns now: the next fetch raises it, or
        the next call that would have read the rest of the result (nextset(), the
        cursor's next execute()), as it would have raised it then.  close() drops it, as
        mysqlclient's close() drops an unread result's rows and error (and a cancelled
        mysqlc.aio call's, mysqlc.aio._runner)."""
        self._deferred = exc
        self._streaming = _DEFERRED

    def _take_deferred(self):
        """The error :meth:`_defer` kept (None when there is none), taken.  The next
        fetch then reads on as after an error raised at once: [] when the server ended
        the result with its error, the lost rows' error (2006) when the connection is
        gone -- whether the error came mid-batch or between two."""
        if getattr(self, "_streaming", False) is not _DEFERRED:
            return None
        exc, self._deferred = self._deferred, None
        self._streaming = True
        return exc

    def _clear(self):
        exc = self._take_deferred()   # (the next execute(): before anything is sent)
        super()._clear()
        if exc is not None:
            raise exc

    def close(self) -> None:
        self._take_deferred()   # (dropped: _defer)
        super().close()

    def _pull_ahead(self, n, max_bytes, defer=False):
        """_pull() while rows read ahead are kept: those first, then from the wire."""
        ahead = self._ahead
        if 0 <= n < len(ahead):
            return [ahead.popleft() for _ in range(n)]
        self._ahead = None
        rows = list(ahead)
        if n < 0 or len(rows) < n:
            try:
                more = self._pull(n if n < 0 else n - len(rows), max_bytes, held=len(rows),
                                  defer=defer)
            except Error as exc:
                if not (defer and rows):
                    raise
                self._defer(exc)   # (the rows read ahead come first)
                more = []
            rows += more
        return rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while True:
            rows = self._next_batch()
            if not rows:
                return
            batch = iter(rows)
            try:
                for row in batch:
                    self.rownumber += 1
                    yield row
            finally:
                rest = collections.deque(batch)   # the loop was left early: what it did
                if rest:                          # not take comes next
                    self._ahead = rest

    def scroll(self, value: int, mode: str = "relative") -> None:
        """Skip `value` rows forward (``mode="relative"`` only, value >= 0)."""
        self._check_executed()
        if mode != "relative" or value < 0:
            raise NotSupportedError(0, "an unbuffered cursor can only scroll forward")
        while value > 0:
            rows = self._pull(min(value, 10000), self._batch_bytes)
            if not rows:
                raise IndexError("out of range")
            self.rownumber += len(rows)
            value -= len(rows)

    def nextset(self) -> Optional[bool]:
        """Drop the rest of the current result set and move to the next one (read
        unbuffered as well); None when there is none."""
        conn = self._get_conn()
        exc = self._take_deferred()
        if exc is not None:
            raise exc
        self._ahead = None
        if conn._is_owner(self):
            core = conn._conn
            while core.rows_pending:
                core.fetch(4096)
            if core.cursor_open:
                core.discard()
        self._streaming = False
        return super().nextset()


class SSDictCursor(SSCursor):
    """Unbuffered cursor returning dicts (keys as :class:`DictCursor`)."""

    if TYPE_CHECKING:   # the row type, for type checkers only
        def fetchone(self) -> Optional[dict[str, Any]]: ...  # type: ignore[override]
        def fetchmany(self, size: Optional[int] = None) -> list[dict[str, Any]]: ...  # type: ignore[override]
        def fetchall(self) -> list[dict[str, Any]]: ...  # type: ignore[override]
        def __iter__(self) -> Iterator[dict[str, Any]]: ...  # type: ignore[override]
        def __next__(self) -> dict[str, Any]: ...

    _fetch_type = DictCursor._fetch_type
    _row_keys = DictCursor._row_keys


# ---------------------------------------------------------------- prepared statements

class _Statement:
    __slots__ = ("id", "nparams", "ncols", "types", "no_bulk")

    def __init__(self, sid, nparams, ncols):
        self.id = sid
        self.nparams = nparams
        self.ncols = ncols
        self.types = None
        #: the server refused COM_STMT_BULK_EXECUTE for it (1295: INSERT ... SELECT,
        #: multi-table DELETE): executemany sends it as multi-statement text
        self.no_bulk = False


_RE_QMARK_OUTSIDE_QUOTES = re.compile(
    rb"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`"""
    rb"""|/\*.*?\*/|--[ \t][^\n]*|#[^\n]*|(\?)""", re.DOTALL)


def _one_trip_ok(conn, sql, params):
    """True when the one-trip prepare (BaseCursor._execute_one_trip) may send `params`
    with `sql` before the server has counted its placeholders: no backslash (whose
    meaning in quotes depends on NO_BACKSLASH_ESCAPES), exactly len(params) ``?`` outside
    quotes and comments, and no value long enough for COM_STMT_SEND_LONG_DATA."""
    if _BACKSLASH in sql:
        return False
    count = 0
    for m in _RE_QMARK_OUTSIDE_QUOTES.finditer(sql):
        if m.group(1):
            count += 1
    if count != len(params):
        return False
    threshold = conn.long_data_threshold
    if threshold > 0:
        for v in params:
            if isinstance(v, (str, bytes, bytearray)) and len(v) > threshold:
                return False
    return True


def _uses_qmark(query):
    """True when `query` has a ``?`` placeholder outside quoted strings and comments
    (``/* */``, ``-- `` and ``#`` to the end of the line)."""
    return any(m.group(1) for m in _RE_QMARK_OUTSIDE_QUOTES.finditer(query))


def _to_qmark(query, has_args=True):
    """The SQL to prepare: ``%s`` placeholders (and ``%(name)s``) become ``?`` and
    ``%%`` becomes ``%`` (also inside quotes, as with the text protocol's
    formatting) -- but only when parameters are given, the query has ``%s`` /
    ``%(name)s`` placeholders and does not use ``?`` placeholders itself; otherwise
    the query is sent as it is.  Returns (sql bytes, names or None)."""
    if not has_args or _uses_qmark(query):
        return query, None
    placeholders = 0
    out = bytearray()
    names = []
    i, n = 0, len(query)
    quote = None
    while i < n:
        ch = query[i]
        if quote is not None:
            if ch == 0x25 and i + 1 < n and query[i + 1] == 0x25:
                out += b"%"                        # '%%' is '%' inside quotes too, as
                i += 2                             # with the text protocol's formatting
                continue
            out.append(ch)
            if ch == 0x5C and i + 1 < n:          # backslash escape inside a string
                out.append(query[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = None
            i += 1
            continue
        if ch in (0x27, 0x22, 0x60):               # ' " `
            quote = ch
            out.append(ch)
            i += 1
            continue
        if ch == 0x25 and i + 1 < n:               # %
            nxt = query[i + 1]
            if nxt == 0x73:                        # %s
                out += b"?"
                placeholders += 1
                i += 2
                continue
            if nxt == 0x25:                        # %%
                out += b"%"
                i += 2
                continue
            if nxt == 0x28:                        # %(name)s
                end = query.find(b")s", i)
                if end > 0:
                    names.append(query[i + 2:end].decode("utf-8"))
                    out += b"?"
                    placeholders += 1
                    i = end + 2
                    continue
        out.append(ch)
        i += 1
    if not placeholders:
        # no %-placeholder: not format-style SQL (e.g. qmark SQL without parameters, as
        # SQLAlchemy sends it with an empty tuple); send it as it is
        return query, None
    return bytes(out), (names or None)


def _render_qmark(conn, sql, params):
    """`sql` (bytes) with each ``?`` placeholder outside quotes and comments replaced
    by the SQL literal of the next of `params` (bytes)."""
    params = iter(params)

    def literal(m):
        if m.group(1) is None:
            return m.group(0)
        return _param_literal(conn, next(params), confirm=False)
    return _RE_QMARK_OUTSIDE_QUOTES.sub(literal, sql)


def _render_one(cursor, conn, query, args):
    if isinstance(query, str):
        query = query.encode(conn.encoding)
    query = bytes(query)
    if args is None:
        return query
    if _uses_qmark(query):
        return _render_qmark(conn, query, _normalize_args(args))
    return cursor._format(conn, query, args)


def _render_last_multirow(cursor, conn, query, rows):
    """The last statement the text path of executemany sends for `rows` (the
    INSERT/REPLACE `query` rewritten into multi-row statements below the packet
    limit), or None when `query` is not such an INSERT."""
    if isinstance(query, str):
        query = query.encode(conn.encoding)
    m = _RE_INSERT_VALUES_BYTES.match(bytes(query))
    if m is None:
        return None
    prefix = m.group("prefix").replace(b"%%", b"%")
    postfix = m.group("postfix").replace(b"%%", b"%")
    limit = conn._get_max_allowed_packet() - 1024
    if cursor.max_stmt_length:
        limit = min(limit, cursor.max_stmt_length)
    values = m.group("values")
    parts, size = [], len(prefix) + len(postfix)
    for params in rows:
        v = cursor._format(conn, values, params)
        if parts and size + 1 + len(v) > limit:
            parts, size = [], len(prefix) + len(postfix)
        size += len(v) + (1 if parts else 0)
        parts.append(v)
    return prefix + b",".join(parts) + postfix


def _render_executed(cursor, conn, kind, query, args):
    """Build ``cursor._executed`` for a statement that was not sent as SQL text:
    what mysqlclient's cursor would have sent (parameters written as literals).
    `kind` is "one" (`args`: the parameters of one execute) or "many" (`args`: the
    rows of an executemany: the last multi-row INSERT, else the last row's
    statement).  Falls back to the SQL as prepared when the rendering fails.  No
    statement is sent for the sql_mode (a value that needs an uncertain mode is shown
    as a hex literal)."""
    cursor.__dict__["_rendering"] = True
    try:
        if kind == "many":
            text = _render_last_multirow(cursor, conn, query, args)
            if text is not None:
                return text
            return _render_one(cursor, conn, query, args[-1])
        return _render_one(cursor, conn, query, args)
    except Exception:
        if isinstance(query, str):
            query = query.encode(conn.encoding, "replace")
        return bytes(query)
    finally:
        cursor.__dict__.pop("_rendering", None)


# The statements executemany sends through COM_STMT_BULK_EXECUTE: INSERT, REPLACE,
# UPDATE and DELETE (after blanks and /* */ comments), without a RETURNING clause
# (a result set per row).
_RE_BULK_DML = re.compile(rb"\A(?:\s|/\*.*?\*/)*(?:INSERT|REPLACE|UPDATE|DELETE)\b",
                          re.IGNORECASE | re.DOTALL)
_RE_RETURNING = re.compile(rb"\bRETURNING\b", re.IGNORECASE)


#: the server's ER_UNSUPPORTED_PS: "This command is not supported in the prepared
#: statement protocol yet" (COM_STMT_BULK_EXECUTE of INSERT ... SELECT)
_RE_RETURNING = re.compile(rb"\breturning\b", re.I)   # a DML statement with a result
_CR_NET_PACKET_TOO_LARGE = 2020   # a command over max_allowed_packet, refused before sending
_ER_UNSUPPORTED_PS = 1295
#: ER_PARSE_ERROR: COM_STMT_PREPARE of text that is not one statement
_ER_PARSE_ERROR = 1064
#: CLIENT_MULTI_STATEMENTS (mysqlc.constants.CLIENT.MULTI_STATEMENTS)
_CLIENT_MULTI_STATEMENTS = 1 << 16


def _bulk_dml(query):
    """True when `query` (bytes) is a DML statement executemany may run with
    COM_STMT_BULK_EXECUTE (the caller also needs the server's capability)."""
    return _RE_BULK_DML.match(query) is not None and _RE_RETURNING.search(query) is None


def _bulk_execute(cursor, conn, stmt, rows, exact):
    """All of `rows` through COM_STMT_BULK_EXECUTE (MariaDB) as few commands as fit
    ``max_allowed_packet``; sets the cursor's results and returns the affected rows, or
    None when bulk execution does not apply (server without it, with `exact` a value
    without binary form; `stmt.no_bulk` set: the server refused it, 1295)."""
    if not stmt.nparams or stmt.no_bulk:
        return None
    return _bulk_send(cursor, conn, rows, exact, stmt=stmt)[0]


def _bulk_execute_one_trip(cursor, conn, sql, rows, exact):
    """:func:`_bulk_execute` of `sql`, not prepared yet: COM_STMT_PREPARE goes in the same
    write as the first bulk command (statement id 0xffffffff, MariaDB's "the statement
    prepared last"), so the first executemany of a statement costs one round trip.
    Returns (affected rows or None, the cached statement or None).  A prepare error is
    raised (the bulk command's error after it was read); an error of the bulk command is
    raised with the statement cached (1295: returned with ``no_bulk`` set).  The caller
    counted the placeholders (:func:`_one_trip_ok`)."""
    return _bulk_send(cursor, conn, rows, exact, sql=sql)


def _bulk_send(cursor, conn, rows, exact, stmt=None, sql=None):
    if not conn._conn.bulk_operations:
        return None, stmt
    max_payload = conn._get_max_allowed_packet() - 4096   # before taking the lock
    if cursor.max_stmt_length:
        max_payload = min(max_payload, cursor.max_stmt_length)
    conn._check_closed()
    lock = conn._lock
    if not lock.acquire(False):
        raise _busy()
    error = None
    try:
        conn._last_error = _NO_ERROR
        conn._discard_pending(cursor)
        cursor._clear()
        core = conn._conn
        if stmt is not None:
            # the bulk command sends its own parameter types, which the server keeps for
            # the statement: the next COM_STMT_EXECUTE must send its types again (it
            # sends them only when they differ from the last ones it sent)
            stmt.types = None
            total = core.stmt_bulk_execute(stmt.id, rows, max_payload=max_payload,
                                           encoding=conn.encoding, exact=exact)
        else:
            cache = conn._stmt_cache
            while cache and len(cache) >= max(conn.prepared_cache_size, 1):
                _old_sql, old = cache.popitem(last=False)   # room for the new one
                core.stmt_close(old.id)
            total, sid, nparams, ncols, error = core.stmt_bulk_execute(
                0, rows, max_payload=max_payload, encoding=conn.encoding, exact=exact,
                prepare=sql)
            if sid is not None:
                stmt = _Statement(sid, nparams, ncols)
                cache[sql] = stmt
            if error is not None:
                raise error
    except Error as exc:
        if (exc.args and exc.args[0] == _ER_UNSUPPORTED_PS and stmt is not None and
                not stmt.no_bulk):
            # refused before any row ran (INSERT ... SELECT, multi-table DELETE)
            stmt.no_bulk = True
            return None, stmt
        conn._note_error(exc)
        raise
    finally:
        lock.release()
    if total is not None:
        cursor._rows = ()
        if getattr(cursor, "_unbuffered", False):   # no result set to read from the socket
            cursor._streaming = False
            cursor._ahead = None
            cursor._keys = None
            cursor._buffer = []
        cursor.rownumber = 0
        cursor.rowcount = total
        cursor.lastrowid = conn._conn.insert_id
        cursor.warning_count = conn._conn.warning_count
    return total, stmt


# The prepared classes: the four above in prepared mode (BaseCursor._set_prepared), kept
# as names of their own for code that names them (and for isinstance); they add no code.

class PreparedCursor(Cursor):
    """:class:`Cursor` in prepared mode: buffered, over server-side prepared statements
    (binary protocol); what ``connection.cursor(prepared=True)`` returns with the
    default cursor class."""

    _prepared = True


class PreparedDictCursor(DictCursor):
    """:class:`DictCursor` in prepared mode (``connection.cursor(DictCursor,
    prepared=True)``)."""

    _prepared = True


class PreparedSSCursor(SSCursor):
    """:class:`SSCursor` in prepared mode (``connection.cursor(SSCursor,
    prepared=True)``): rows are read through a read-only server-side cursor
    (CURSOR_TYPE_READ_ONLY) and arrive with COM_STMT_FETCH in batches of
    :attr:`arraysize` (default 100 for this mode), so memory is bounded by one batch
    and, unlike :class:`SSCursor`, other statements may run on the connection between
    fetches only after this cursor is exhausted or closed."""

    _prepared = True


class PreparedSSDictCursor(PreparedSSCursor, SSDictCursor):
    """:class:`SSDictCursor` in prepared mode (:class:`PreparedSSCursor` returning
    dicts)."""


_PREPARED = {Cursor: PreparedCursor, DictCursor: PreparedDictCursor,
             SSCursor: PreparedSSCursor, SSDictCursor: PreparedSSDictCursor}


def prepared_variant(cls: type[BaseCursor]) -> type[BaseCursor]:
    """The prepared-mode class of cursor class `cls`: the ``Prepared*`` class of the
    four standard classes, `cls` itself when it is in prepared mode already, else a
    subclass of `cls` that only sets the mode.  (``connection.cursor(cls,
    prepared=True)`` needs none: it sets the mode on the cursor.)"""
    _check_cursor_class(cls)
    if cls._prepared:
        return cls
    return _PREPARED.get(cls) or type("Prepared" + cls.__name__, (cls,), {"_prepared": True})


def _check_cursor_class(cls):
    if not (isinstance(cls, type) and issubclass(cls, BaseCursor)):
        raise ProgrammingError(0, "no prepared variant of %r" % (cls,))


def _prepared_cursor(cls, connection):
    """``connection.cursor(cls, prepared=True)``: a cursor of the ``Prepared*`` class of
    one of the four standard classes, or of `cls` put in prepared mode."""
    _check_cursor_class(cls)
    cur = _PREPARED.get(cls, cls)(connection)
    if not cur._prepared:
        cur._set_prepared()
    return cur
