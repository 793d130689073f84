"""Columnar results: a result set as Arrow record batches, NumPy arrays, pandas or polars
DataFrames, decoded by the C core straight into Arrow column buffers.

The C core (``_core.Connection.fetch_arrow``) parses the row packets in the receive
buffer with the GIL released and creates no Python object per value; the batches leave
through the Arrow C Data Interface as PyCapsules (the Arrow PyCapsule Interface), so
mysqlc has no build-time dependency on pyarrow or numpy.  pyarrow, numpy, pandas and polars
are imported only by the functions that return their objects; a missing one raises
ImportError naming it.

Names follow DuckDB and ADBC: ``fetch_arrow_table``, ``fetch_record_batches``,
``fetchnumpy``, ``fetch_df``; :func:`read_sql` follows connectorx.

Type mapping (column type from the ColumnDefinition41 packet -> Arrow type):

=============================================  ==============================================
TINYINT / SMALLINT / MEDIUMINT, INT / BIGINT   int8 / int16 / int32 / int64
  ... UNSIGNED                                 uint8 / uint16 / uint32 / uint64
YEAR                                           int16
FLOAT, DOUBLE                                  float64 (the values the row cursors give)
DECIMAL(P,S)                                   decimal128(P, S); decimal256(P, S) for P > 38;
                                               float64 with ``decimal="float"``, utf8 with
                                               ``decimal="str"``
DATE                                           date32
DATETIME(n), TIMESTAMP(n)                      timestamp[us] (no time zone: the session's)
TIME(n)                                        duration[us] (negative and over 24 h kept)
CHAR, VARCHAR, TEXT, JSON, ENUM, SET           utf8 (other character sets are transcoded)
BINARY, VARBINARY, BLOB, BIT, GEOMETRY         binary
NULL (``SELECT NULL``)                         null
=============================================  ==============================================

NULL is a null in the validity bitmap; zero and invalid dates ('0000-00-00') are nulls, as
the row cursors give None for them (mysqlclient's behaviour).  User converters
(``conv=``) do not apply to columnar output.

Unbuffered cursors (``SSCursor`` and friends, what :func:`read_sql` uses) take the C path
from the socket.  Buffered cursors keep their result's row packets (``_core.Store``) and
take the C path from those; only a result decoded in ``execute()`` (a user converter
applies to one of its columns, or a character set needs a Python codec) is converted from
its Python rows with pyarrow (same types, slower).
"""

from __future__ import annotations

import importlib
import re
import threading
import urllib.parse
from typing import TYPE_CHECKING, Any, Optional, Union, overload

from ._progress import Progress
from .errors import InterfaceError, NotSupportedError, ProgrammingError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy
    import pandas
    import polars
    import pyarrow
    from typing import Literal

    from typing_extensions import CapsuleType

    from .connections import Connection
    from .cursors import BaseCursor

    #: what read_sql() reads from: an open connection or a DSN string
    _Source = Union[Connection, str]
    _Params = Union[Sequence[Any], Mapping[str, Any], None]

__all__ = ["read_sql", "ArrowStream", "parse_dsn"]

DEFAULT_BATCH_SIZE = 1 << 16

# module -> (package, extra of mysqlc that installs it: pyproject.toml's optional-dependencies)
_PACKAGES = {"pyarrow": ("pyarrow", "arrow"), "numpy": ("numpy", "numpy"),
             "pandas": ("pandas", "pandas"), "polars": ("polars", "polars")}


def _need(module, what):
    """Import `module` for `what`, or raise ImportError naming the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pkg, extra = _PACKAGES.get(module, (module, module))
        raise ImportError("%s needs the %r package: pip install 'mysqlc[%s]'"
                          % (what, pkg, extra)) from exc


# ---------------------------------------------------------------- batch sources

def _core_source(cursor):
    """The C connection when `cursor` reads its result from the socket, else None."""
    conn = cursor.connection
    if conn is None or not getattr(cursor, "_streaming", False) or not conn._is_owner(cursor):
        return None
    return conn._conn


def _store_source(cursor):
    """The ``_core.Store`` of a buffered cursor's result (its row packets, not yet decoded
    into Python objects), else None."""
    from ._core import Store
    rows = cursor._rows
    return rows if type(rows) is Store else None


def _arrow_type(pa, desc, flags, decimal):
    """Arrow type of a column from its description 7-tuple and flags (for rows already
    decoded by a buffered cursor; the same mapping as the C core's)."""
    from .constants import FIELD_TYPE as T
    code, size, scale = desc[1], desc[3] or 0, desc[5] or 0
    unsigned = bool(flags & 32)
    ints = {T.TINY: 8, T.SHORT: 16, T.INT24: 32, T.LONG: 32, T.LONGLONG: 64}
    if code in ints:
        bits = ints[code]
        return getattr(pa, ("uint%d" if unsigned else "int%d") % bits)()
    if code == T.YEAR:
        return pa.int16()
    if code in (T.FLOAT, T.DOUBLE):
        return pa.float64()
    if code in (T.DECIMAL, T.NEWDECIMAL):
        if decimal == "float":
            return pa.float64()
        if decimal == "str":
            return pa.utf8()
        s = scale if scale <= 76 else 0
        p = min(max(size - (1 if s > 0 else 0) - (0 if unsigned else 1), s, 1), 76)
        return pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)
    if code in (T.DATE, T.NEWDATE):
        return pa.date32()
    if code in (T.DATETIME, T.TIMESTAMP):
        return pa.timestamp("us")
    if code == T.TIME:
        return pa.duration("us")
    if code == T.NULL:
        return pa.null()
    if code in (T.BIT, T.GEOMETRY):
        return pa.binary()
    return None   # strings: decided from the values (str -> utf8, bytes -> binary)


def _column_types(pa, cursor, rows, decimal):
    """Arrow types of a buffered cursor's columns; a string column is binary when any of
    `rows` (all the rows that will be converted) holds bytes in it."""
    desc = cursor.description
    flags = cursor.description_flags or (0,) * len(desc)
    dict_rows = bool(rows) and isinstance(rows[0], dict)
    types = []
    for i, (d, f) in enumerate(zip(desc, flags)):
        t = _arrow_type(pa, d, f, decimal)
        if t is None:   # text or binary: the values say; all NULL: the BINARY flag
            key = d[0] if dict_rows else i
            kinds = {type(row[key]) for row in rows} - {type(None)}
            if kinds:
                t = pa.utf8() if kinds <= {str} else pa.binary()
            else:
                t = pa.binary() if f & 128 else pa.utf8()
        types.append(t)
    return types


def _rows_to_batch(pa, cursor, rows, types, decimal):
    """A record batch from rows a cursor has already decoded."""
    desc = cursor.description
    dict_rows = bool(rows) and isinstance(rows[0], dict)
    arrays = []
    for i, (d, t) in enumerate(zip(desc, types)):
        key = d[0] if dict_rows else i
        values = [row[key] for row in rows]
        if decimal == "float" and pa.types.is_floating(t):
            values = [None if v is None else float(v) for v in values]
        elif decimal == "str" and pa.types.is_string(t):
            values = [None if v is None else str(v) for v in values]
        arrays.append(pa.array(values, type=t))
    return pa.RecordBatch.from_arrays(arrays, names=[d[0] for d in desc])


_STALE = ("this columnar reader's result set is gone: the cursor has since run another "
          "statement or moved to its next result set")


class _Batches:
    """Iterates a cursor's remaining rows as (schema capsule, array capsule) pairs."""

    def __init__(self, cursor, batch_size, decimal, progress):
        if cursor.description is None:
            raise ProgrammingError(0, "the last statement returned no result set")
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.cursor = cursor
        self.batch_size = batch_size or DEFAULT_BATCH_SIZE
        self.decimal = decimal
        self.progress = progress if isinstance(progress, Progress) else Progress(progress)
        self._schema = None
        self.done = False
        # what identifies the result this reader is for: a reader made before the cursor
        # ran another statement, moved to its next result set or was closed must not read
        # the new result with the old schema
        core = _core_source(cursor)
        self.live = core is not None
        self.result_id = core.result_id if core is not None else None
        self.rows, self.description = cursor._rows, cursor.description
        if (core is None and not getattr(cursor, "_unbuffered", False)
                and type(cursor._rows) is tuple and cursor.connection is not None):
            # a buffered result decoded in execute(): the connection's next results are
            # kept as packets for the columnar methods (see docs/columnar.md)
            cursor.connection._conn.prefer_store()

    def _check(self):
        cur = self.cursor
        conn = cur.connection
        if conn is None:
            raise ProgrammingError(0, "the cursor was closed during a columnar read")
        if self.live:
            if not conn.open:
                raise InterfaceError(0, "the connection was closed during a columnar read")
            if conn._conn.result_id != self.result_id or not conn._is_owner(cur):
                raise ProgrammingError(0, _STALE)
        elif cur._rows is not self.rows or cur.description is not self.description:
            raise ProgrammingError(0, _STALE)

    def _python_rows(self, n):
        """Rows the cursor holds as Python objects (buffered cursors, or what an
        unbuffered prepared cursor has already pulled), up to n."""
        cur = self.cursor
        buf = getattr(cur, "_buffer", None)
        if buf:
            take = buf[:n]
            del buf[:n]
            cur.rownumber += len(take)
            return take
        if getattr(cur, "_unbuffered", False):
            return []
        rows = cur._rows or ()
        start = cur.rownumber or 0
        take = rows[start:start + n]
        cur.rownumber = start + len(take)
        return list(take)

    def schema(self):
        self._check()
        store = _store_source(self.cursor)
        if store is not None:
            return store.arrow_schema(decimal=self.decimal)
        core = _core_source(self.cursor)
        if core is not None:
            return core.arrow_schema(decimal=self.decimal)
        return self._python_schema().__arrow_c_schema__()

    def _python_schema(self):
        if self._schema is None:
            pa = _need("pyarrow", "columnar output of a buffered cursor")
            cur = self.cursor
            conn = cur.connection
            core = conn._conn if conn is not None else None
            if (core is not None and conn._is_owner(cur) and core.field_count > 0
                    and core.description == cur.description):
                # the C core still holds this result's column definitions: exact types
                schema = pa.Schema._import_from_c_capsule(core.arrow_schema(decimal=self.decimal))
                self._types = list(schema.types)
            else:
                pending = list(getattr(cur, "_buffer", None) or ())
                if not getattr(cur, "_unbuffered", False):
                    pending = list((cur._rows or ())[cur.rownumber or 0:])
                self._types = _column_types(pa, cur, pending, self.decimal)
            self._schema = pa.schema([(d[0], t) for d, t in zip(cur.description, self._types)])
        return self._schema

    def next(self):
        """The next batch as capsules, or None at the end."""
        if self.done:
            return None
        self._check()
        n = self.batch_size
        store = _store_source(self.cursor)
        if store is not None:   # a buffered cursor's packets, straight into Arrow in C
            cur = self.cursor
            start = cur.rownumber or 0
            if start >= len(store):
                self.done = True
                return None
            schema, array, got = store.fetch_arrow(start, n, decimal=self.decimal)
            cur.rownumber = start + got
            self.progress.add(got)
            return schema, array
        rows = self._python_rows(n)
        if rows:
            pa = _need("pyarrow", "columnar output of a buffered cursor")
            self._python_schema()
            batch = _rows_to_batch(pa, self.cursor, rows, self._types, self.decimal)
            self.progress.add(batch.num_rows)
            return batch.__arrow_c_array__()
        core = _core_source(self.cursor)
        if core is None or not (core.rows_pending or core.cursor_open):
            self._finish(core)
            return None
        schema, array, got = core.fetch_arrow(n, decimal=self.decimal)
        self.cursor.rownumber = (self.cursor.rownumber or 0) + got
        if not (core.rows_pending or core.cursor_open):
            self._finish(core)
        if got == 0:
            return None
        self.progress.add(got)
        return schema, array

    def _finish(self, core):
        self.done = True
        cur = self.cursor
        if getattr(cur, "_streaming", False):
            cur._streaming = False
            cur.rowcount = cur.rownumber or 0
            if core is not None:
                cur.warning_count = core.warning_count


class ArrowStream:
    """A cursor's remaining rows as an Arrow C stream: any consumer of the Arrow
    PyCapsule Interface (``pyarrow.table(obj)``, ``pyarrow.RecordBatchReader.from_stream``,
    ``polars.from_arrow``, DuckDB, nanoarrow) reads it, batch by batch, without mysqlc
    depending on it.  The stream can be consumed once."""

    def __init__(self, cursor: BaseCursor, batch_size: Optional[int] = None, *,
                 decimal: str = "decimal", progress: Any = None) -> None:
        self._batches = _Batches(cursor, batch_size, decimal, progress)
        self._used = False

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> CapsuleType:
        """The Arrow PyCapsule Interface: an ``arrow_array_stream`` capsule.  A
        `requested_schema` is ignored (the columns keep the documented types)."""
        if self._used:
            raise ProgrammingError(0, "this ArrowStream has already been consumed")
        self._used = True
        from . import _core
        return _core.arrow_stream(self._batches.schema, self._batches.next)


# ---------------------------------------------------------------- cursor methods

def record_batches(cursor, batch_size=None, decimal="decimal", progress=None):
    """pyarrow.RecordBatchReader over the cursor's remaining rows, read as it is
    consumed.  Built over a Python generator (not the C stream) so that an exception --
    the server's error, a closed connection, one raised by `progress` -- reaches the
    caller with its own type."""
    pa = _need("pyarrow", "fetch_record_batches()")
    src = _Batches(cursor, batch_size, decimal, progress)
    schema = pa.Schema._import_from_c_capsule(src.schema())

    def batches():
        while True:
            pair = src.next()
            if pair is None:
                return
            yield pa.RecordBatch._import_from_c_capsule(*pair)
    return pa.RecordBatchReader.from_batches(schema, batches())


class _Collected:
    """A whole result as Arrow C Data capsules: the struct schema and the record
    batches, convertible to pyarrow, NumPy (without pyarrow) or any consumer of
    ``__arrow_c_stream__`` (polars)."""

    def __init__(self, schema, pairs):
        self.schema = schema      # "arrow_schema" capsule
        self.pairs = pairs        # [("arrow_schema", "arrow_array") capsules]

    @classmethod
    def read(cls, cursor, batch_size=None, decimal="decimal", progress=None):
        src = _Batches(cursor, batch_size, decimal, progress)
        schema = src.schema()
        pairs = []
        while True:
            pair = src.next()
            if pair is None:
                return cls(schema, pairs)
            pairs.append(pair)

    @classmethod
    def concat(cls, parts):
        return cls(parts[0].schema, [p for part in parts for p in part.pairs])

    def to_arrow(self, what):
        pa = _need("pyarrow", what)
        schema = pa.Schema._import_from_c_capsule(self.schema)
        return pa.Table.from_batches(
            [pa.RecordBatch._import_from_c_capsule(*p) for p in self.pairs], schema=schema)

    def to_numpy(self, what):
        np = _need("numpy", what)
        from ._arrow_numpy import schema_fields, struct_to_numpy
        seen = set()
        for name, _fmt in schema_fields(self.schema):
            if name in seen:
                raise ProgrammingError(0, "%s: the result has two columns named %r, which a "
                                       "dict of arrays cannot hold (give them aliases)"
                                       % (what, name))
            seen.add(name)
        names, parts = None, []
        for sc, ac in self.pairs or [(self.schema, None)]:
            names, arrays = struct_to_numpy(np, sc, ac)
            parts.append(arrays)
        out = {}
        for i, name in enumerate(names):
            cols = [p[i] for p in parts]
            if len(cols) == 1:
                out[name] = cols[0]
            elif any(np.ma.isMaskedArray(c) for c in cols):
                out[name] = np.ma.concatenate(cols)
            else:
                out[name] = np.concatenate(cols)
        return out

    def __arrow_c_stream__(self, requested_schema=None):
        from . import _core
        pairs = iter(list(self.pairs))
        self.pairs = []   # moved into the stream
        return _core.arrow_stream(lambda: self.schema, lambda: next(pairs, None))


def arrow_table(cursor, batch_size=None, decimal="decimal", progress=None):
    """pyarrow.Table of the cursor's remaining rows (its batches, not copied)."""
    _need("pyarrow", "fetch_arrow_table()")
    return _Collected.read(cursor, batch_size, decimal, progress).to_arrow("fetch_arrow_table()")


def convert(result, return_type, what):
    """A collected result as `return_type` ("arrow", "pandas", "polars", "numpy")."""
    if return_type == "arrow":
        return result.to_arrow(what)
    if return_type == "pandas":
        _need("pandas", "%s as pandas" % what)
        return result.to_arrow(what).to_pandas()
    if return_type == "polars":
        pl = _need("polars", "%s as polars" % what)
        from ._arrow_numpy import schema_fields
        wide = [name for name, fmt in schema_fields(result.schema) if fmt.endswith(",256")]
        if wide:
            raise NotSupportedError(
                0, "polars has no decimal type above 38 digits (column %r is a 256-bit "
                "decimal): pass decimal='float' or decimal='str'" % wide[0])
        return pl.DataFrame(result)   # through __arrow_c_stream__: pyarrow not needed
    if return_type == "numpy":
        return result.to_numpy(what)
    raise ValueError("return_type must be 'arrow', 'pandas', 'polars' or 'numpy', not %r"
                     % (return_type,))


# ---------------------------------------------------------------- read_sql

_INT_OPTIONS = {"port", "client_flag", "prepared_cache_size", "long_data_threshold"}
_FLOAT_OPTIONS = {"connect_timeout", "read_timeout", "write_timeout"}
_BOOL_OPTIONS = {"autocommit", "compress", "local_infile", "multi_statements", "use_unicode",
                 "ssl_verify_cert", "ssl_verify_identity", "ssl_disabled", "binary_prefix",
                 "get_server_public_key", "enable_cleartext_plugin"}


_DSN_CREDENTIALS = re.compile(r"\A([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*:)(.*)@")


def _redact_dsn(dsn):
    """`dsn` with the password (between ``user:`` and the last ``@``) as ``***``."""
    return _DSN_CREDENTIALS.sub(r"\1***@", dsn, count=1)


def parse_dsn(dsn: str) -> dict[str, Any]:
    """``mysql://user:password@host:port/database?option=value&...`` -> keyword
    arguments of :func:`mysqlc.connect` (``mariadb://`` too; percent-escapes decoded;
    ``?unix_socket=/path`` for a socket).  Raises ValueError for another scheme or
    a malformed DSN; its message never contains the password."""
    try:
        u = urllib.parse.urlsplit(dsn)
        port = u.port
    except ValueError:
        # urllib's text can quote a piece of the password (a '/' in it ends the host)
        raise ValueError("invalid DSN %r: its host or port cannot be parsed (a '/', '?', "
                         "'#' or '@' in the user or password must be %%-escaped)"
                         % (_redact_dsn(dsn),)) from None
    if u.scheme not in ("mysql", "mariadb", "mysql+mysqlc", "mariadb+mysqlc"):
        raise ValueError("DSN must start with mysql:// (got %r)" % (u.scheme + "://",))
    kw = {}
    if u.username is not None:
        kw["user"] = urllib.parse.unquote(u.username)
    if u.password is not None:
        kw["password"] = urllib.parse.unquote(u.password)
    if u.hostname:
        kw["host"] = u.hostname
    if port:
        kw["port"] = port
    db = urllib.parse.unquote(u.path.lstrip("/"))
    if db:
        kw["database"] = db
    for key, value in urllib.parse.parse_qsl(u.query, keep_blank_values=True):
        if key in _INT_OPTIONS:
            value = int(value)
        elif key in _FLOAT_OPTIONS:
            value = float(value)
        elif key in _BOOL_OPTIONS:
            value = value.lower() in ("1", "true", "yes", "on")
        kw[key] = value
    return kw


def _open(source):
    """(connection, owned) for a DSN string or an open Connection."""
    from .connections import Connection
    if isinstance(source, Connection):
        return source, False
    if isinstance(source, str):
        return Connection(**parse_dsn(source)), True
    raise TypeError("read_sql() needs a mysqlc Connection or a DSN string, not %s"
                    % type(source).__name__)


def _open_like(source):
    """A new connection with the parameters of `source` (a DSN or a Connection)."""
    from .connections import Connection
    if isinstance(source, str):
        return Connection(**parse_dsn(source))
    return Connection(**source._init_args)


def _quote_ident(name):
    return "`" + str(name).replace("`", "``") + "`"


def _binary_stream_cursor():
    from .cursors import SSCursor, _PreparedMixin

    class BinaryStreamCursor(_PreparedMixin, SSCursor):
        """Prepared statement whose binary rows are read from the socket as they are
        fetched (no server-side cursor, so the server streams the result at once)."""
        _server_cursor = False
    return BinaryStreamCursor


_ER_UNSUPPORTED_PS = 1295


def _read_one(conn, sql, params, batch_size, decimal, progress, protocol="binary"):
    from .cursors import SSCursor
    from .errors import ProgrammingError as PE, OperationalError as OE
    if protocol == "binary":
        cur = conn.cursor(_BINARY_STREAM)
        try:
            cur.execute(sql, params)
        except (PE, OE) as exc:
            if exc.args[0] != _ER_UNSUPPORTED_PS:
                cur.close()
                raise
            cur.close()   # a statement that cannot be prepared: the text protocol
            return _read_one(conn, sql, params, batch_size, decimal, progress, "text")
    elif protocol == "text":
        cur = conn.cursor(SSCursor)
        cur.execute(sql, params)
    else:
        raise ValueError("protocol must be 'binary' or 'text', not %r" % (protocol,))
    try:
        if cur.description is None:
            raise ProgrammingError(0, "read_sql(): the statement returned no result set")
        return _Collected.read(cur, batch_size, decimal, progress)
    finally:
        cur.close()


_BINARY_STREAM = _binary_stream_cursor()


def _subquery(sql):
    """`sql` as a derived table's body: a trailing ``;`` dropped, and a line break before
    the closing parenthesis so that a trailing ``-- comment`` cannot swallow it."""
    sql = sql.rstrip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    return "(%s\n)" % sql


def _partition_queries(sql, column, lo, hi, n):
    """SQL of n partitions covering [lo, hi] of an integer column, NULLs in the first."""
    n = max(1, min(n, hi - lo + 1))
    col = _quote_ident(column)
    span = hi - lo + 1
    edges = [lo + span * i // n for i in range(n + 1)]
    out = []
    for i in range(n):
        cond = "%s >= %d AND %s < %d" % (col, edges[i], col, edges[i + 1])
        if i == 0:
            cond = "(%s) OR %s IS NULL" % (cond, col)
        out.append("SELECT * FROM %s AS _mysqlc_part WHERE %s" % (_subquery(sql), cond))
    return out


def _read_partitioned(source, sql, params, column, partitions, batch_size, decimal, progress,
                      protocol):
    conn, owned = _open(source)
    try:
        cur = conn.cursor()
        cur.execute("SELECT MIN(%s), MAX(%s) FROM %s AS _mysqlc_range"
                    % (_quote_ident(column), _quote_ident(column), _subquery(sql)), params)
        lo, hi = cur.fetchone()
        cur.close()
    finally:
        if owned:
            conn.close()
    if lo is None:   # no rows, or only NULLs in the column: one plain read
        conn, owned = _open(source)
        try:
            return _read_one(conn, sql, params, batch_size, decimal, progress, protocol)
        finally:
            if owned:
                conn.close()
    if not isinstance(lo, int) or not isinstance(hi, int):
        raise NotSupportedError(0, "partition_on needs an integer column (%r has %s values)"
                                % (column, type(lo).__name__))
    queries = _partition_queries(sql, column, lo, hi, partitions)
    results = [None] * len(queries)
    errors = []

    def work(i):
        try:
            c = _open_like(source)
            try:
                results[i] = _read_one(c, queries[i], params, batch_size, decimal, progress,
                                       protocol)
            finally:
                c.close()
        except BaseException as exc:   # re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,), name="mysqlc-read_sql-%d" % i)
               for i in range(len(queries))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return _Collected.concat(results)


@overload
def read_sql(source: _Source, sql: str, return_type: Literal["arrow"] = "arrow", *,
             params: _Params = None, partition_on: Optional[str] = None,
             partitions: Optional[int] = None, batch_size: Optional[int] = None,
             decimal: str = "decimal", progress: Any = None,
             protocol: str = "binary") -> pyarrow.Table: ...


@overload
def read_sql(source: _Source, sql: str, return_type: Literal["pandas"], *,
             params: _Params = None, partition_on: Optional[str] = None,
             partitions: Optional[int] = None, batch_size: Optional[int] = None,
             decimal: str = "decimal", progress: Any = None,
             protocol: str = "binary") -> pandas.DataFrame: ...


@overload
def read_sql(source: _Source, sql: str, return_type: Literal["polars"], *,
             params: _Params = None, partition_on: Optional[str] = None,
             partitions: Optional[int] = None, batch_size: Optional[int] = None,
             decimal: str = "decimal", progress: Any = None,
             protocol: str = "binary") -> polars.DataFrame: ...


@overload
def read_sql(source: _Source, sql: str, return_type: Literal["numpy"], *,
             params: _Params = None, partition_on: Optional[str] = None,
             partitions: Optional[int] = None, batch_size: Optional[int] = None,
             decimal: str = "decimal", progress: Any = None,
             protocol: str = "binary") -> dict[str, numpy.ndarray[Any, Any]]: ...


@overload
def read_sql(source: _Source, sql: str, return_type: str, *,
             params: _Params = None, partition_on: Optional[str] = None,
             partitions: Optional[int] = None, batch_size: Optional[int] = None,
             decimal: str = "decimal", progress: Any = None,
             protocol: str = "binary") -> Any: ...


def read_sql(source: _Source, sql: str, return_type: str = "arrow", *,
             params: _Params = None, partition_on: Optional[str] = None,
             partitions: Optional[int] = None, batch_size: Optional[int] = None,
             decimal: str = "decimal", progress: Any = None,
             protocol: str = "binary") -> Any:

    """Run a query and return its whole result in columnar form.

    Parameters
    ----------
    source : mysqlc.connections.Connection or str
        An open connection, or a DSN ``mysql://user:password@host:port/db?opt=v``
        (see :func:`parse_dsn`); a connection made from a DSN is closed afterwards.
    sql : str
        One SELECT (or any statement with a result set); ``%s`` placeholders with
        `params`, as :meth:`Cursor.execute`.  Only the first result set is read (the
        rest, e.g. of a ``CALL``, is discarded); several statements in one string are
        refused by the default binary protocol (error 1064).
    return_type : {"arrow", "pandas", "polars", "numpy"}
        ``pyarrow.Table``; ``pandas.DataFrame`` (``Table.to_pandas()``);
        ``polars.DataFrame``; dict of NumPy arrays (as ``Cursor.fetchnumpy()``).
        Only "arrow" and "pandas" need pyarrow.
    partition_on : str, optional
        An integer column of the result to split the read on: its MIN and MAX are
        queried, the range is cut into `partitions` equal parts and each part is read
        on its own connection in its own thread (``SELECT * FROM (sql) AS p WHERE col
        >= lo AND col < hi``), decoded in parallel with the GIL released.  Rows come
        partition by partition in ascending ranges, the first partition holding the
        rows where the column is NULL; within a partition, in the server's order (as
        connectorx).  The result's column names must be unique (a derived table's).
        With a Connection as `source` the partitions open new connections with its
        parameters: they do not see that connection's uncommitted changes, temporary
        tables or session settings (``SET time_zone`` ...) -- commit first, or read
        without partitions.
    partitions : int, optional
        Number of partitions (default 1: no split).
    batch_size : int, optional
        Rows per Arrow record batch (default 65536).
    decimal : {"decimal", "float", "str"}
        DECIMAL columns as decimal128/256, float64, or utf8 text.
    progress : callable or tqdm-like, optional
        Called with the number of rows read so far after each batch (from the
        reading threads), or ``progress.update(rows_in_batch)`` when it has an
        ``update`` method (a ``tqdm`` bar).
    protocol : {"binary", "text"}
        "binary" (default): the query runs as a prepared statement (COM_STMT_EXECUTE,
        no server-side cursor) and the rows arrive in the binary protocol, which costs
        the server less than formatting every value as text; statements that cannot be
        prepared (error 1295) fall back to "text" (COM_QUERY).  The values are the same.

    Raises
    ------
    ImportError
        pyarrow (or pandas / polars / numpy for those return types) is missing.
    ProgrammingError
        The statement returned no result set; SQL errors as for ``execute``.
    NotSupportedError
        `partition_on` names a column whose values are not integers.
    """
    if return_type not in ("arrow", "pandas", "polars", "numpy"):
        raise ValueError("return_type must be 'arrow', 'pandas', 'polars' or 'numpy', not %r"
                         % (return_type,))
    _need({"arrow": "pyarrow", "pandas": "pyarrow"}.get(return_type, return_type), "read_sql()")
    progress = Progress(progress)   # one count over all partitions
    if partitions is not None and partitions < 1:
        raise ValueError("partitions must be at least 1")
    if partition_on is not None and (partitions or 1) > 1:
        result = _read_partitioned(source, sql, params, partition_on, partitions,
                                   batch_size, decimal, progress, protocol)
    else:
        conn, owned = _open(source)
        try:
            result = _read_one(conn, sql, params, batch_size, decimal, progress, protocol)
        finally:
            if owned:
                conn.close()
    return convert(result, return_type, "read_sql()")
