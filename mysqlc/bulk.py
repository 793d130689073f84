"""Bulk load: ``cursor.load_table(table, data)`` (issue 8).

Rows are encoded in C (``mysqlc._core.infile_encode_*``, src/infile_encode.c) into the
text format of ``LOAD DATA LOCAL INFILE`` and streamed from memory, in chunks of about
1 MiB, through the connection's LOCAL INFILE mechanism (``cursor.execute(sql,
infile=chunks)``): no temporary file is written and the data is never held whole.
Where LOCAL INFILE is not possible the rows go in as batched multi-row ``INSERT``
statements instead (``cursor.executemany``).

Statement sent (MySQL reference manual, "LOAD DATA Statement"; MariaDB's "LOAD DATA
INFILE" page)::

    LOAD DATA LOCAL INFILE 'mysqlc-load_table' [REPLACE | IGNORE] INTO TABLE `t`
        CHARACTER SET utf8mb4
        FIELDS TERMINATED BY X'09' ENCLOSED BY '' ESCAPED BY X'5C'
        LINES STARTING BY '' TERMINATED BY X'0A'
        (`col1`, `col2`, ...)

The field and line options are LOAD DATA's defaults, spelled out (as hex literals, so
that ``NO_BACKSLASH_ESCAPES`` does not change them) to be independent of the
server's configuration.  In the data NUL, TAB, LF, CR and backslash are escaped as
``\\0 \\t \\n \\r \\\\`` and SQL NULL is ``\\N``.

Character set: the file is declared ``utf8mb4``.  Text values are sent as UTF-8 and
the server converts them to each column's character set (a latin1 column receives
latin1); into BINARY/VARBINARY/BLOB/BIT columns the server copies the bytes unchanged,
so ``bytes`` values -- all 256 byte values, invalid UTF-8 included -- round-trip
exactly (tests/test_load_table.py checks both).  ``CHARACTER SET binary`` would have
stored the UTF-8 bytes of text unconverted in non-UTF-8 columns, and MySQL refuses
binary data for JSON columns.

Value formats
-------------
=============================  ==================================================
Python value / Arrow type      Text sent
=============================  ==================================================
None / null                    ``\\N``
bool / bool                    ``1`` / ``0``
int / int8..uint64             decimal digits (Python ints of any size)
float / float16, 32, 64        shortest repr that reads back as the same value
                               (Arrow: the shortest of 15, 16 or 17 significant
                               digits, 6 to 9 for float32); nan and inf raise
                               DataError (MySQL has no such values; load None)
decimal.Decimal / decimal32,   exact digits, no exponent (Arrow: the scale gives
64, 128, 256                   the digits after the point)
str / utf8, large_utf8,        UTF-8, escaped
utf8_view
bytes, bytearray, memoryview   raw bytes, escaped
/ binary, large_binary,
binary_view,
fixed_size_binary
datetime.datetime /            ``YYYY-MM-DD HH:MM:SS[.ffffff]``.  Python datetimes:
timestamp[s, ms, us, ns]       tzinfo ignored (as ``execute()`` does).  Arrow
                               timestamps with a time zone: the UTC time (Arrow
                               stores UTC; a DATETIME has no zone -- for TIMESTAMP
                               columns use a session ``time_zone = '+00:00'`` to
                               keep the instant).  Nanoseconds are sent as 9
                               fraction digits when not whole microseconds (the
                               server keeps at most 6).
datetime.date / date32,        ``YYYY-MM-DD``; years outside 0-9999 raise DataError
date64
datetime.time / time32,        ``HH:MM:SS[.ffffff]``
time64
datetime.timedelta /           ``[-]H:MM:SS[.ffffff]`` (hours not wrapped at 24;
duration[s, ms, us, ns]        MySQL's TIME range is +-838:59:59)
dictionary (pandas category)   the dictionary value
null type                      ``\\N``
=============================  ==================================================

Other Python types raise TypeError naming the row, column and type; other Arrow
types raise TypeError naming the column and the Arrow format string, before any row
is sent.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Optional, Union
import warnings as _warnings

from ._progress import Progress
from .errors import DatabaseError, DataError, NotSupportedError, ProgrammingError, Warning

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .cursors import BaseCursor

__all__ = ["load_table"]

#: Bytes per chunk handed to the LOCAL INFILE transfer: a unit of work only; the core
#: frames each chunk into packets below the session's ``max_allowed_packet``
#: (``min(1 MiB, max_allowed_packet - 5)``, src/results.c), whatever this size.
CHUNK_BYTES = 1 << 20
#: Default rows encoded per C call (Arrow sources / Python rows / INSERT statements).
ARROW_BATCH_ROWS = 65536
ROWS_BATCH_ROWS = 10000
INSERT_BATCH_ROWS = 5000

_INFILE_NAME = "mysqlc-load_table"
#: Errors that mean "LOCAL INFILE is not allowed here": ER_NOT_ALLOWED_COMMAND (1148,
#: MySQL and older MariaDB, also when the client did not announce CLIENT_LOCAL_FILES),
#: MariaDB 10.5+'s ER_LOAD_INFILE_CAPABILITY_DISABLED (4166), MySQL 8's
#: ER_CLIENT_LOCAL_FILES_DISABLED (3948) and CR_LOAD_DATA_LOCAL_INFILE_REJECTED (2068).
_REFUSED = frozenset((1148, 4166, 3948, 2068))
_SAVEPOINT = b"SAVEPOINT mysqlc_load_table"


def _quote_ident(name):
    if isinstance(name, bytes):
        name = name.decode("utf-8")
    if not isinstance(name, str):
        raise TypeError("identifiers must be str, not %s" % type(name).__name__)
    if not name or "\x00" in name:
        raise ProgrammingError(0, "invalid identifier %r" % (name,))
    return "`" + name.replace("`", "``") + "`"


def _table_sql(table):
    if isinstance(table, tuple):
        if len(table) != 2:
            raise ProgrammingError(0, "table must be a name or a (database, table) pair")
        return _quote_ident(table[0]) + "." + _quote_ident(table[1])
    return _quote_ident(table)


# ---------------------------------------------------------------- sources

def _pyarrow(what):
    try:
        import pyarrow
    except ImportError:
        raise ImportError("load_table from %s needs pyarrow: pip install 'mysqlc[arrow]'"
                          % what) from None
    return pyarrow


class _ArrowSource:
    """Record batches of an Arrow-compatible object, each sliced to <= batch_rows."""

    kind = "arrow"

    def __init__(self, data, batch_rows):
        self.batch_rows = batch_rows
        self.names = None
        self._batches = None     # iterator of objects with __arrow_c_array__
        self._schema_capsule = None
        mod = type(data).__module__ or ""
        if mod.startswith("pandas") and hasattr(data, "columns") and hasattr(data, "dtypes"):
            pa = _pyarrow("a pandas DataFrame")
            table = pa.Table.from_pandas(data, preserve_index=False)
            self._from_pyarrow(table, pa)
        elif mod.startswith("pyarrow"):
            self._from_pyarrow(data, _pyarrow("pyarrow data"))
        elif hasattr(data, "__arrow_c_stream__"):
            pa = _pyarrow("an Arrow C stream (%s)" % type(data).__name__)
            self._from_pyarrow(pa.RecordBatchReader.from_stream(data), pa)
        elif hasattr(data, "__arrow_c_array__"):
            try:
                import pyarrow as pa
            except ImportError:
                pa = None
            if pa is not None:
                self._from_pyarrow(pa.record_batch(data), pa)
            else:   # one struct array, encoded whole
                schema_capsule, _ = data.__arrow_c_array__()
                self._schema_capsule = schema_capsule
                self.names = self._capsule_names(data)
                self._batches = iter([data])
        else:
            raise TypeError("not Arrow data: %s" % type(data).__name__)

    @staticmethod
    def _capsule_names(data):
        schema = getattr(data, "schema", None)
        names = getattr(schema, "names", None)
        return list(names) if names is not None else None

    def _from_pyarrow(self, data, pa):
        if isinstance(data, pa.Table):
            schema = data.schema
            batches = data.to_batches(max_chunksize=self.batch_rows)
        elif isinstance(data, pa.RecordBatch):
            schema = data.schema
            batches = [data]
        elif isinstance(data, pa.RecordBatchReader):
            schema = data.schema
            batches = data
        elif hasattr(data, "__arrow_c_stream__"):
            reader = pa.RecordBatchReader.from_stream(data)
            schema = reader.schema
            batches = reader
        else:
            raise TypeError("load_table cannot read %s (pass a pyarrow Table, RecordBatch "
                            "or RecordBatchReader)" % type(data).__name__)
        self.names = list(schema.names)
        self._schema_capsule = schema.__arrow_c_schema__()
        self._pa = pa
        self._batches = iter(batches)

    def check(self):
        from . import _core
        _core.infile_arrow_check(self._schema_capsule)

    def slices(self):
        """Yield (n_rows, object with __arrow_c_array__) pieces of <= batch_rows rows."""
        step = self.batch_rows
        for batch in self._batches:
            n = getattr(batch, "num_rows", None)
            if n is None or n <= step:
                yield (n if n is not None else -1), batch
                continue
            for start in range(0, n, step):
                piece = batch.slice(start, step)
                yield piece.num_rows, piece

    @staticmethod
    def encode(piece, first_row):
        from . import _core
        schema_capsule, array_capsule = piece.__arrow_c_array__()
        return _core.infile_encode_arrow(schema_capsule, array_capsule)

    def py_rows(self, piece):
        """Python rows of a piece (for the INSERT fallback)."""
        pa = getattr(self, "_pa", None) or _pyarrow("the INSERT fallback of Arrow data")
        if not isinstance(piece, pa.RecordBatch):
            piece = pa.record_batch(piece)
        cols = []
        for col in piece.columns:
            t = col.type
            if pa.types.is_dictionary(t):
                values = col.dictionary.to_pylist()
                cols.append([None if k is None else values[k] for k in col.indices.to_pylist()])
                continue
            if pa.types.is_timestamp(t) and t.tz is not None:
                col = col.cast(pa.timestamp(t.unit))   # UTC wall time, as the infile path
            elif pa.types.is_float16(t):
                col = col.cast(pa.float32())
            cols.append(col.to_pylist())
        return list(zip(*cols))


class _RowSource:
    """An iterable of tuples/lists, in lists of <= batch_rows rows."""

    kind = "rows"

    def __init__(self, data, batch_rows):
        if isinstance(data, (str, bytes, bytearray, memoryview, dict)):
            raise TypeError("load_table data must be Arrow data, a DataFrame or an iterable "
                            "of rows, not %s" % type(data).__name__)
        try:
            self._it = iter(data)
        except TypeError:
            raise TypeError("load_table data must be Arrow data, a DataFrame or an iterable "
                            "of rows, not %s" % type(data).__name__) from None
        self.batch_rows = batch_rows
        self.names = None

    def check(self):
        pass

    def slices(self):
        it = self._it
        step = self.batch_rows
        while True:
            rows = list(itertools.islice(it, step))
            if not rows:
                return
            yield len(rows), rows

    def encode(self, rows, first_row):
        from . import _core
        try:
            return _core.infile_encode_rows(rows, self.ncols, self.col_names, first_row)
        except TypeError:
            if not _has_numpy_scalars(rows):
                raise
            # rows taken from NumPy / pandas (itertuples): their scalars as Python values
            rows[:] = [tuple(_py_scalar(v) for v in row) for row in rows]
            return _core.infile_encode_rows(rows, self.ncols, self.col_names, first_row)

    def py_rows(self, rows):
        n = self.ncols
        for i, row in enumerate(rows):
            if not isinstance(row, (tuple, list)):
                raise ProgrammingError(0, "load_table: row is a %s, not a tuple or list of "
                                       "values" % type(row).__name__)
            if len(row) != n:
                raise ProgrammingError(0, "load_table: a row has %d values, but %d columns "
                                       "are loaded" % (len(row), n))
        return rows


def _is_numpy_scalar(v):
    t = type(v)
    return t.__module__ == "numpy" and hasattr(v, "item")


def _has_numpy_scalars(rows):
    return any(_is_numpy_scalar(v) for row in rows if isinstance(row, (tuple, list))
               for v in row)


def _py_scalar(v):
    """A NumPy scalar as the Python value it holds (np.float32 -> float, np.int64 -> int,
    np.datetime64 -> datetime, np.str_ -> str ...); other values unchanged."""
    if not _is_numpy_scalar(v):
        return v
    name = type(v).__name__
    if name in ("datetime64", "timedelta64"):   # nanoseconds would come back as an int
        v = v.astype(name + "[us]")
    return v.item()


def _make_source(data, batch_rows):
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return _ArrowSource(data, batch_rows or ARROW_BATCH_ROWS)
    mod = type(data).__module__ or ""
    if (mod.startswith("pandas") or mod.startswith("polars") or mod.startswith("pyarrow")):
        return _ArrowSource(data, batch_rows or ARROW_BATCH_ROWS)
    return _RowSource(data, batch_rows or ROWS_BATCH_ROWS)


class _Pieces:
    """The source's pieces, with the first one taken ahead (so that a bad first piece
    raises before any statement) and replayable until the transfer starts."""

    def __init__(self, source):
        self.source = source
        self._it = source.slices()
        self.first = next(self._it, None)
        self.first_chunk = None
        self.started = False

    def __iter__(self):
        if self.first is not None:
            yield self.first
        for piece in self._it:
            yield piece


def _table_columns(cursor, table_sql):
    cur = cursor._plain_cursor()
    try:
        cur.execute("SELECT * FROM %s LIMIT 0" % table_sql)
        return [d[0] for d in cur.description]
    finally:
        cur.close()


# ---------------------------------------------------------------- the two methods

def _infile_chunks(pieces, progress):
    """Chunks of LOAD DATA text; progress after each piece has been handed over.

    The next piece is encoded in a helper thread while the current one is sent: the
    Arrow encoder releases the GIL, so encoding overlaps the socket writes (which
    release it too)."""
    # concurrent.futures imports logging: kept out of ``import mysqlc`` (which imports
    # this module) until a load runs
    from concurrent.futures import ThreadPoolExecutor
    pieces.started = True
    source = pieces.source
    it = iter(pieces)
    first = next(it, None)
    if first is None:
        return
    row = 0
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mysqlc-load_table")
    try:
        current = first
        if pieces.first_chunk is not None:
            data = pieces.first_chunk
            pieces.first_chunk = None
        else:
            data = source.encode(first[1], 0)
        while current is not None:
            n = current[0]
            if n < 0:
                n = data.count(b"\n")
            following = next(it, None)
            future = (pool.submit(source.encode, following[1], row + n)
                      if following is not None else None)
            view = memoryview(data)
            for i in range(0, len(view), CHUNK_BYTES):
                yield view[i:i + CHUNK_BYTES]
            del view
            row += n
            progress(n)
            current = following
            if future is not None:
                data = future.result()
    finally:
        pool.shutdown(wait=True)


def _load_infile(cur, sql, pieces, progress):
    if pieces.first is not None and pieces.first_chunk is None:
        pieces.first_chunk = pieces.source.encode(pieces.first[1], 0)
    if pieces.first is None:
        return 0
    return cur.execute(sql, infile=_infile_chunks(pieces, progress))


def _load_insert(cur, conn, sql, pieces, progress, collect):
    source = pieces.source
    total = 0
    first_row = 0
    for n, piece in pieces:
        if source.kind == "rows":
            # the LOAD DATA encoder checks the values first, so that both methods raise
            # the same errors (TypeError / DataError naming the row and the column)
            source.encode(piece, first_row)
            first_row += len(piece)
        rows = source.py_rows(piece)
        if not rows:
            continue
        affected = cur.executemany(sql, rows)
        total += affected or 0
        collect(cur)
        progress(len(rows))
    return total


# ---------------------------------------------------------------- warnings

class _Warnings:
    def __init__(self, conn):
        self.conn = conn
        self.count = 0
        self.messages = []

    def __call__(self, cur):
        n = cur.warning_count
        if not n:
            return
        self.count += n
        shown = self.conn.show_warnings()
        for level, code, message in shown:
            w = Warning(int(code), "%s %s: %s" % (level, code, message))
            w.level = level
            self.messages.append((Warning, w))
        if n > len(shown):
            self.messages.append((Warning, Warning(
                0, "... %d more warnings (the server keeps max_error_count)"
                % (n - len(shown)))))


# ---------------------------------------------------------------- entry point

def load_table(cursor: BaseCursor, table: Union[str, tuple[str, str]], data: Any,
               columns: Optional[Sequence[str]] = None, *, method: str = "auto",
               batch_rows: Optional[int] = None, progress: Any = None,
               duplicates: Optional[str] = None, on_warning: str = "warn",
               atomic: bool = True) -> int:

    """Bulk-load rows into `table`; returns the number of rows the server loaded.

    The rows are encoded in C into ``LOAD DATA LOCAL INFILE`` text and streamed from
    memory in chunks of about 1 MiB (see the module docstring for the statement and
    the value formats); without LOCAL INFILE they go in as multi-row ``INSERT``
    statements.

    Parameters
    ----------
    cursor : mysqlc.cursors.BaseCursor
        Its connection is used; afterwards ``cursor.rowcount`` is the row count,
        ``cursor.warning_count`` the number of warnings and ``cursor.messages`` lists
        them as ``(mysqlc.Warning, mysqlc.Warning(code, text))`` (PEP 249's
        ``messages`` extension).
    table : str or (str, str)
        Table name, or ``(database, table)``; quoted with backticks (a ``.`` in a str
        is part of the name).
    data : Arrow data, DataFrame or iterable of rows
        A ``pyarrow.Table``, ``RecordBatch`` or ``RecordBatchReader``; any object with
        ``__arrow_c_stream__`` (polars DataFrame, ...) or ``__arrow_c_array__`` (a
        struct array); a pandas DataFrame (converted with
        ``pyarrow.Table.from_pandas(preserve_index=False)``: NaN and NaT are NULL,
        categoricals are dictionaries); or an iterable of tuples/lists, each of
        ``len(columns)`` values (shape ``(n_rows, n_columns)``), read once and
        lazily in batches.  pyarrow is needed for every Arrow/DataFrame input except
        a bare ``__arrow_c_array__`` object.
    columns : sequence of str, optional
        Target column names, in the order of the data's fields/values.  Default:
        the Arrow/DataFrame field names; for rows, all columns of the table in
        table order (read with ``SELECT * FROM table LIMIT 0``).
    method : {"auto", "infile", "insert"}
        ``"infile"``: LOAD DATA LOCAL INFILE, or raise NotSupportedError when the
        connection was opened without ``local_infile=True`` / the error the server
        gives when its ``local_infile`` is OFF.  ``"insert"``: multi-row INSERT
        through ``executemany`` (batches of `batch_rows`, each split to fit
        ``max_allowed_packet``).  ``"auto"`` (default): infile when the connection
        has ``local_infile=True``, falling back to insert when the server refuses
        LOCAL INFILE (errors 1148, 4166, 3948, 2068 before any data was sent).
    batch_rows : int, optional
        Rows encoded per C call (default 65536 for Arrow data, 10000 for rows) and
        rows per INSERT batch (default 5000).  Memory use is O(batch_rows).
    progress : callable or tqdm-like, optional
        Called as ``progress(rows_sent_so_far)`` (a cumulative int) after each batch
        has been handed to the server; or, when the object has an ``update`` method
        (a ``tqdm`` bar), ``progress.update(rows_in_this_batch)``.
    duplicates : {None, "ignore", "replace"}
        ``IGNORE`` / ``REPLACE`` for rows whose unique key exists (``LOAD DATA ...
        REPLACE``, ``INSERT IGNORE``, ``REPLACE INTO``).  None: the server's default,
        which differs: LOAD DATA **LOCAL** treats duplicate keys and data errors as
        warnings even in strict mode (the server cannot stop the transfer; MySQL
        manual, "Duplicate-Key and Error Handling"), INSERT raises IntegrityError /
        DataError in strict mode.
    on_warning : {"warn", "raise", "ignore"}
        What to do when the server reports warnings (truncated values, skipped
        duplicates ...): ``"warn"`` (default) emits each with
        ``warnings.warn(..., mysqlc.Warning)``; ``"raise"`` rolls the load back (see
        `atomic`) and raises DataError listing them; ``"ignore"`` only records them
        in ``cursor.messages``.
    atomic : bool
        Default True: the load runs in a transaction (``BEGIN``/``COMMIT`` with
        autocommit on, else a ``SAVEPOINT`` inside the caller's transaction, which is
        not committed), rolled back when an error is raised half-way -- a LOAD DATA
        LOCAL whose data stream is cut by an encoding error would otherwise keep the
        rows sent so far.  Tables of non-transactional engines (MyISAM) keep them
        anyway.

    Returns
    -------
    int
        Rows loaded: the server's affected-rows count (``REPLACE`` counts a replaced
        row twice, ``IGNORE`` does not count skipped rows).

    Raises
    ------
    ProgrammingError
        A row with the wrong number of values, `columns` not matching the data,
        bad `method`/`duplicates`/`on_warning`.
    TypeError
        A value of an unsupported type (naming row, column and type), or an Arrow
        column of an unsupported type (naming column and format).
    DataError
        nan/inf floats, dates outside 0-9999, warnings with ``on_warning="raise"``.
    NotSupportedError
        ``method="infile"`` where LOCAL INFILE is not possible.
    ImportError
        pyarrow is needed for the input and is not installed.
    DatabaseError subclasses
        Errors of the server (unknown table or column, ...).
    """
    if method not in ("auto", "infile", "insert"):
        raise ProgrammingError(0, "method must be 'auto', 'infile' or 'insert', not %r"
                               % (method,))
    if duplicates not in (None, "ignore", "replace"):
        raise ProgrammingError(0, "duplicates must be None, 'ignore' or 'replace', not %r"
                               % (duplicates,))
    if on_warning not in ("warn", "raise", "ignore"):
        raise ProgrammingError(0, "on_warning must be 'warn', 'raise' or 'ignore', not %r"
                               % (on_warning,))
    if batch_rows is not None and (not isinstance(batch_rows, int) or batch_rows <= 0):
        raise ProgrammingError(0, "batch_rows must be a positive int")
    conn = cursor._get_conn()
    table_sql = _table_sql(table)
    progress = Progress(progress)

    source = _make_source(data, batch_rows)
    names = list(columns) if columns is not None else None
    if source.kind == "arrow":
        source.check()
        if names is None:
            names = source.names
            if names is None:
                raise ProgrammingError(0, "load_table: give columns= for %s data without "
                                       "a readable schema" % type(data).__name__)
        elif source.names is not None and len(names) != len(source.names):
            raise ProgrammingError(0, "load_table: %d columns given for data with %d fields"
                                   % (len(names), len(source.names)))
    elif names is None:
        names = _table_columns(cursor, table_sql)
    if not names:
        raise ProgrammingError(0, "load_table: no columns to load")
    cols_sql = ", ".join(_quote_ident(n) for n in names)
    if source.kind == "rows":
        source.ncols = len(names)
        source.col_names = tuple(str(n) for n in names)

    use_infile = method == "infile" or (method == "auto" and conn._local_infile)
    if method == "infile" and not conn._local_infile:
        raise NotSupportedError(0, "load_table(method='infile') needs a connection opened "
                                "with local_infile=True")

    pieces = _Pieces(source)      # reads (and, for rows, checks) the first batch
    cur = cursor._plain_cursor()
    collected = _Warnings(conn)
    savepoint = None
    if atomic:
        savepoint = not conn.get_autocommit()
        conn._internal_query(_SAVEPOINT if savepoint else b"BEGIN")
    try:
        total = None
        if use_infile:
            mode = {None: "", "ignore": " IGNORE", "replace": " REPLACE"}[duplicates]
            sql = ("LOAD DATA LOCAL INFILE '%s'%s INTO TABLE %s CHARACTER SET utf8mb4 "
                   "FIELDS TERMINATED BY X'09' ENCLOSED BY '' ESCAPED BY X'5C' "
                   "LINES STARTING BY '' TERMINATED BY X'0A' (%s)"
                   % (_INFILE_NAME, mode, table_sql, cols_sql))
            try:
                total = _load_infile(cur, sql, pieces, progress)
                collected(cur)
            except DatabaseError as exc:
                errno = exc.args[0] if exc.args else None
                if errno not in _REFUSED or pieces.started:
                    raise
                if method == "infile":
                    raise NotSupportedError(
                        errno, "load_table(method='infile'): the server refuses LOAD DATA "
                        "LOCAL INFILE (%s)" % (exc.args[1] if len(exc.args) > 1 else exc,)
                    ) from exc
                pieces.first_chunk = None
        if total is None:
            verb = {None: "INSERT", "ignore": "INSERT IGNORE", "replace": "REPLACE"}[duplicates]
            sql = ("%s INTO %s (%s) VALUES (%s)"
                   % (verb, table_sql.replace("%", "%%"), cols_sql.replace("%", "%%"),
                      ", ".join(["%s"] * len(names))))
            total = _load_insert(cur, conn, sql, pieces, progress, collected)
        if collected.count and on_warning == "raise":
            raise DataError(0, "load_table: the server reported %d warning(s); the load was "
                            "rolled back: %s" % (collected.count, "; ".join(
                                str(w.args[1]) for _, w in collected.messages[:5])))
    except BaseException:
        if atomic:
            try:
                conn._internal_query(b"ROLLBACK TO SAVEPOINT mysqlc_load_table"
                                     if savepoint else b"ROLLBACK")
            except Exception:
                pass    # the connection is gone; the original error says why
        raise
    finally:
        cur.close()
    if atomic:
        conn._internal_query(b"RELEASE SAVEPOINT mysqlc_load_table" if savepoint
                             else b"COMMIT")

    clear = getattr(cursor, "_clear", None)
    if clear is not None:
        clear()
    cursor.rowcount = total
    cursor.warning_count = collected.count
    cursor.messages[:] = collected.messages
    if on_warning == "warn":
        for _, w in collected.messages:
            _warnings.warn(w, stacklevel=3)
    return total
