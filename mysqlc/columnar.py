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

import threading
from typing import TYPE_CHECKING, Any, Optional, Union, overload

from ._arrow import (   # noqa: F401  (ArrowStream, _need: this module's public names)
    DEFAULT_BATCH_SIZE, ArrowStream, _Collected, _need, convert,
)
from ._dsn import parse_dsn
from ._progress import Progress
from .connections import Connection
from .cursors import PreparedSSCursor, SSCursor
from .errors import NotSupportedError, OperationalError, ProgrammingError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy
    import pandas
    import polars
    import pyarrow
    from typing import Literal

    #: what read_sql() reads from: an open connection or a DSN string
    _Source = Union[Connection, str]
    _Params = Union[Sequence[Any], Mapping[str, Any], None]

__all__ = ["read_sql", "ArrowStream", "parse_dsn"]

# ---------------------------------------------------------------- read_sql

def _open(source):
    """(connection, owned) for a DSN string or an open Connection."""
    if isinstance(source, Connection):
        return source, False
    if isinstance(source, str):
        return Connection(**parse_dsn(source)), True
    raise TypeError("read_sql() needs a mysqlc Connection or a DSN string, not %s"
                    % type(source).__name__)


def _open_like(source):
    """A new connection with the parameters of `source` (a DSN or a Connection)."""
    if isinstance(source, str):
        return Connection(**parse_dsn(source))
    return Connection(**source._init_args)


def _quote_ident(name):
    return "`" + str(name).replace("`", "``") + "`"


class _BinaryStreamCursor(PreparedSSCursor):
    """Prepared statement whose binary rows are read from the socket as they are
    fetched (no server-side cursor, so the server streams the result at once)."""
    _server_cursor = False


_ER_UNSUPPORTED_PS = 1295


def _read_one(conn, sql, params, batch_size, decimal, progress, protocol="binary"):
    if protocol == "binary":
        cur = conn.cursor(_BinaryStreamCursor)
        try:
            cur.execute(sql, params)
        except (ProgrammingError, OperationalError) as exc:
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
