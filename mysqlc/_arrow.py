"""A cursor's result set as Arrow C Data capsules: what the cursors' columnar methods
(``fetch_arrow_table``, ``fetch_record_batches``, ``fetch_arrow_stream``, ``fetchnumpy``,
``fetch_df``, ``fetch_polars``) and :func:`mysqlc.columnar.read_sql` read through.

The batches come from the C core (the socket of an unbuffered cursor, the ``_core.Store``
of a buffered one) or, for rows a cursor has already decoded, from pyarrow.  The types and
the rules are documented in :mod:`mysqlc.columnar`, which re-exports :class:`ArrowStream`.

Below :mod:`mysqlc.cursors` in the module layering (docs/architecture.md, "Python layer"):
the cursor is the argument, read through its attributes; nothing of the cursors or the
connection is imported.  pyarrow, numpy, pandas and polars are imported by the functions
that need them (:func:`_need`); so are ``_core`` (``import mysqlc`` works without the C
extension) and ``_arrow_numpy`` (ctypes, for the NumPy output only).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Optional

from ._progress import Progress
from .constants import FIELD_TYPE as T
from .errors import InterfaceError, NotSupportedError, ProgrammingError

if TYPE_CHECKING:
    from typing_extensions import CapsuleType

    from .cursors import BaseCursor

__all__ = ["ArrowStream"]

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
        if getattr(cursor, "_ahead", None):
            # rows an iteration read ahead are Python objects already: the columnar
            # reader would start after them (skipping them silently)
            raise ProgrammingError(
                0, "%d rows of this result were read ahead by a loop that was left early: "
                "fetch them (fetchmany/fetchall) before a columnar read of the rest"
                % len(cursor._ahead))
        take_deferred = getattr(cursor, "_take_deferred", None)   # (SSCursor's)
        if take_deferred is not None:
            exc = take_deferred()   # the error a fetch deferred after its rows: now
            if exc is not None:
                raise exc
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
