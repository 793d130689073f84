"""Dask DataFrames read from and written to MySQL/MariaDB through mysqlc's C Arrow path
(extra ``mysqlc[dask]``; docs/cluster.md).

* :func:`read_sql_table` / :func:`read_sql_query`: a ``dask.dataframe.DataFrame`` whose
  partitions are key ranges, each read on a worker by :func:`mysqlc.read_sql` on its
  own connection (pyarrow-backed dtypes by default, NumPy dtypes with
  ``dtype_backend="numpy"``).  The plan (meta, bounds, cut points) is made on the
  client with a few small queries; no row is read there.
* :func:`to_table`: every partition loaded in parallel with :func:`mysqlc.load_table`
  into its own staging table, then copied into the target in one transaction.

The partitioning rules, what a retried task does, the consistency and how the password
travels are in docs/cluster.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional, Union

try:
    import dask
    import dask.dataframe as dd
except ImportError as _exc:   # pragma: no cover - the message names the extra
    raise ImportError("mysqlc.dask needs Dask: pip install 'mysqlc[dask]' (%s)"
                      % (_exc,)) from _exc

from ._cluster import (
    Fault, Part, ReadOptions, Relation, Source, Write, nullable_ints, plan, read_part,
    table_npartitions, to_pandas, write_part,
)

__all__ = ["read_sql_table", "read_sql_query", "to_table", "Source"]

_SourceArg = Union[str, Mapping[str, Any], Source]


class _PartitionReader:
    """The function of every read task: ``reader(part) -> pandas.DataFrame``.  Holds
    no connection (each call opens and closes one); its repr and token mask the
    password."""

    def __init__(self, source: Source, rel: Relation, opts: ReadOptions,
                 dtype_backend: str, index_col: Optional[str], float_ints: Sequence[str],
                 order: Optional[str], fault: Optional[Fault]) -> None:
        self.source = source
        self.rel = rel
        self.opts = opts
        self.dtype_backend = dtype_backend
        self.index_col = index_col
        self.float_ints = tuple(float_ints)
        self.order = order
        self.fault = fault

    def __call__(self, part: Part) -> Any:
        table = read_part(self.source, self.rel, part, self.opts, self.order, self.fault)
        df = to_pandas(table, self.dtype_backend, self.float_ints)
        if self.index_col is not None:
            df = df.set_index(self.index_col)
        return df

    def __repr__(self) -> str:
        return "mysqlc.dask.read(%s, %r)" % (self.rel.label, self.source)

    def __dask_tokenize__(self) -> object:
        return ("mysqlc.dask.read", self.source.__dask_tokenize__(), self.rel.select(),
                repr(self.rel.params), self.opts.key(), self.dtype_backend, self.index_col,
                self.float_ints, self.order, None if self.fault is None else id(self.fault))


def _read(rel: Relation, source: _SourceArg, *, index_col: Optional[str],
          partition_on: Optional[str], npartitions: Optional[int],
          bytes_per_chunk: Optional[int], bounds: Optional[tuple[Any, Any]],
          dtype_backend: str, protocol: str, batch_size: Optional[int], decimal: str,
          table: Any, fault: Optional[Fault]) -> dd.DataFrame:
    if dtype_backend not in ("pyarrow", "numpy"):
        raise ValueError("dtype_backend must be 'pyarrow' or 'numpy', not %r"
                         % (dtype_backend,))
    if index_col is not None and partition_on is not None and index_col != partition_on:
        raise ValueError("give index_col= or partition_on=, not both (the index is the "
                         "partition key)")
    if npartitions is not None and bytes_per_chunk is not None:
        raise ValueError("give npartitions= or bytes_per_chunk=, not both")
    src = Source(source)
    opts = ReadOptions(protocol, batch_size, decimal)
    key = index_col if index_col is not None else partition_on
    if bytes_per_chunk is not None:
        if table is None:
            raise ValueError("bytes_per_chunk= needs a table (read_sql_table): a query "
                             "has no statistics; give npartitions=")
        npartitions = table_npartitions(src, table, bytes_per_chunk)
    n = npartitions if npartitions is not None else 1
    if n > 1 and key is None:
        raise ValueError("npartitions > 1 needs index_col= or partition_on=")
    p = plan(src, rel, key, n, opts, bounds)
    float_ints = nullable_ints(p.meta, src, rel) if dtype_backend == "numpy" else []
    meta = to_pandas(p.meta, dtype_backend, float_ints)
    if index_col is not None:
        meta = meta.set_index(index_col)
    divisions = p.divisions if index_col is not None else None
    reader = _PartitionReader(src, rel, opts, dtype_backend, index_col, float_ints,
                              index_col, fault)
    # no "convert-string" pass: it would turn the object columns of the NumPy backend
    # (Decimal, bytes, dates) into strings; text is already Arrow in the default backend
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_map(reader, p.parts, meta=meta, divisions=divisions,
                           label="read-mysqlc-" + rel.label.replace(".", "-"),
                           enforce_metadata=False)


def read_sql_table(table: Union[str, tuple[str, str]], source: _SourceArg, *,
                   index_col: Optional[str] = None, partition_on: Optional[str] = None,
                   npartitions: Optional[int] = None,
                   bytes_per_chunk: Optional[int] = None,
                   columns: Optional[Sequence[str]] = None, where: Optional[str] = None,
                   params: Optional[Sequence[Any]] = None,
                   bounds: Optional[tuple[Any, Any]] = None, as_of: Any = None,
                   dtype_backend: str = "pyarrow", protocol: str = "binary",
                   batch_size: Optional[int] = None, decimal: str = "decimal",
                   _fault: Optional[Fault] = None) -> dd.DataFrame:
    """A table (or its `columns`, rows matching `where`) as a Dask DataFrame of
    `npartitions` key ranges, each read on a worker by :func:`mysqlc.read_sql`.

    Parameters
    ----------
    table : str or (str, str)
        Table of the DSN's database, or ``(database, table)``.
    source : str, dict or Source
        A DSN ``mysql://user:pw@host:port/db`` or :func:`mysqlc.connect` arguments
        (see :class:`mysqlc._cluster.Source` for how the password travels; it is in
        no task key or repr).
    index_col : str, optional
        The partition key, made the index (each partition ``ORDER BY`` it, so the index
        is sorted).  Divisions are known for integer and DATE/DATETIME keys declared
        NOT NULL, and for NOT NULL string keys of a binary collation (BINARY/VARBINARY,
        ``utf8mb4_bin``, ``utf8mb4_nopad_bin`` ...; PAD SPACE ``_bin`` ones only when
        no value ends in a space or holds a control character), where the server's
        order is Python's; None otherwise (other collations: the server orders by
        collation, case-insensitive, PAD SPACE, pandas would not).
    partition_on : str, optional
        The partition key when it is not to be the index (no divisions, no ORDER BY).
    npartitions : int, optional
        Ranges to read (default 1).  Integer keys: ``MIN``/``MAX`` (one query, or
        `bounds`) cut into equal value ranges, so a skewed key gives uneven partitions;
        other keys: cut at the minima of ``NTILE(npartitions)`` (one query sorting the
        key), equal row counts.
    bytes_per_chunk : int, optional
        Instead of `npartitions`: ``ceil(DATA_LENGTH / bytes_per_chunk)`` partitions,
        from ``information_schema.TABLES`` (the engine's estimate; no scan).
    columns : sequence of str, optional
        Columns to read (default all); the key is added when missing.
    where : str, optional
        An SQL condition added to every range (``%s`` placeholders with `params`).
    params : sequence, optional
        Values of `where`'s placeholders (positional only).
    bounds : (int, int), optional
        Known ``(min, max)`` of an integer key: the MIN/MAX query is skipped.  Rows
        outside go to the first / last partition.
    as_of : datetime or str, optional
        Read a MariaDB system-versioned table ``FOR SYSTEM_TIME AS OF TIMESTAMP
        as_of`` in every partition (and the planning queries): one consistent image
        across the partitions.  Without it each partition is its own snapshot.
    dtype_backend : {"pyarrow", "numpy"}
        ``pd.ArrowDtype`` columns (default: the Arrow types of docs/columnar.md), or
        ``Table.to_pandas()``'s NumPy dtypes (nullable integer columns as float64).
    protocol, batch_size, decimal
        As :func:`mysqlc.read_sql`, for every partition.

    Returns
    -------
    dask.dataframe.DataFrame
        Lazy; meta from the result's column definitions (``LIMIT 0``, no row read).

    Raises
    ------
    ValueError
        Conflicting or bad options.
    ProgrammingError
        The key is not a column of the result; SQL errors of the planning queries.
    """
    if columns is not None:
        columns = list(columns)
        key = index_col if index_col is not None else partition_on
        if key is not None and key not in columns:
            columns.append(key)
    rel = Relation(table=table, columns=columns, where=where, params=params, as_of=as_of)
    return _read(rel, source, index_col=index_col, partition_on=partition_on,
                 npartitions=npartitions, bytes_per_chunk=bytes_per_chunk, bounds=bounds,
                 dtype_backend=dtype_backend, protocol=protocol, batch_size=batch_size,
                 decimal=decimal, table=table, fault=_fault)


def read_sql_query(sql: str, source: _SourceArg, *, index_col: Optional[str] = None,
                   partition_on: Optional[str] = None, npartitions: Optional[int] = None,
                   params: Optional[Sequence[Any]] = None,
                   bounds: Optional[tuple[Any, Any]] = None,
                   dtype_backend: str = "pyarrow", protocol: str = "binary",
                   batch_size: Optional[int] = None, decimal: str = "decimal",
                   _fault: Optional[Fault] = None) -> dd.DataFrame:
    """A query's result as a Dask DataFrame of `npartitions` ranges of a result column.

    Each range runs ``SELECT * FROM (sql) AS _mysqlc_part WHERE <range>``: the range
    condition is what is pushed into the query (the server may push it further into
    the derived table); the query itself runs once per partition, so a query whose
    rows cannot be found by the key without computing all of them (GROUP BY, window
    functions, LIMIT) costs a full evaluation per partition.  The planning queries
    (``LIMIT 0``, ``MIN/MAX`` or ``NTILE``) wrap the query the same way.  Options as
    :func:`read_sql_table` (no `columns`, `where`, `as_of`, `bytes_per_chunk`).
    """
    rel = Relation(sql=sql, params=params)
    return _read(rel, source, index_col=index_col, partition_on=partition_on,
                 npartitions=npartitions, bytes_per_chunk=None, bounds=bounds,
                 dtype_backend=dtype_backend, protocol=protocol, batch_size=batch_size,
                 decimal=decimal, table=None, fault=_fault)


class _PartitionWriter:
    def __init__(self, write: Write, load_options: Mapping[str, Any],
                 fault: Optional[Callable[[str], None]]) -> None:
        self.write = write
        self.load_options = dict(load_options)
        self.fault = fault

    def __call__(self, df: Any, index: int) -> tuple[str, int]:
        return write_part(self.write, index, df, self.load_options, self.fault)

    def __repr__(self) -> str:
        return "mysqlc.dask.write(%s, %r)" % (self.write.table, self.write.source)

    def __dask_tokenize__(self) -> object:
        return ("mysqlc.dask.write", self.write.run)


def to_table(ddf: dd.DataFrame, table: str, source: _SourceArg, *,
             if_exists: str = "fail", index: bool = False, batch_rows: Optional[int] = None,
             on_warning: str = "warn", atomic: bool = True, retries: Optional[int] = None,
             _fault: Optional[Callable[[str], None]] = None) -> int:
    """Write `ddf` into `table`; returns the rows written.  Runs at once (not lazy).

    Every partition is loaded on a worker with :func:`mysqlc.load_table` (LOAD DATA
    LOCAL INFILE), in one of two ways (docs/cluster.md, "Writes"):

    * staged (``if_exists`` "fail" or "append" with ``atomic=True``, the default): into
      its own staging table ``_mysqlc_stage_<run>_<i>`` (``CREATE TABLE ... LIKE`` the
      target), dropped and made again when the task runs again; when all are loaded
      the client copies them with one ``INSERT ... SELECT`` each, in one transaction,
      and drops them.  A write that fails leaves the table as it was.
    * direct (``if_exists="replace"``, whose new table is swapped in by one ``RENAME
      TABLE`` at the end; or ``atomic=False``): into the target, in one transaction per
      partition that also inserts the partition's number into a ledger table
      ``_mysqlc_done_<run>``; a re-run of a committed partition loads nothing.  No copy;
      with "append" a failed write keeps the partitions committed before it.

    Either way a retried partition leaves no row twice.  Needs CREATE and DROP
    privileges in the database, a transactional (InnoDB) target for the direct way, and
    ``local_infile`` on the server (else ``load_table`` falls back to INSERT).

    Parameters
    ----------
    if_exists : {"fail", "replace", "append"}
        ``"fail"``: ValueError when `table` exists; ``"replace"``: the rows go into a new
        table (created from the Arrow schema: BIGINT, DOUBLE, LONGTEXT, DATETIME(6) ...)
        swapped in with one ``RENAME TABLE`` after the commit; ``"append"``: into the
        existing table (created when missing), its constraints checked at the copy.
    index : bool
        Write the index as column(s) too (``reset_index()``).
    batch_rows, on_warning
        As :func:`mysqlc.load_table` (on each partition).
    atomic : bool
        For "fail"/"append": True (default) stages and copies in one transaction (the
        server writes the rows twice); False loads straight into the table.
    retries : int, optional
        Dask's task retries (``dask.compute(..., retries=)``, distributed scheduler).
    """
    import pyarrow as pa
    if index:
        ddf = ddf.reset_index()
    src = Source(source)
    meta = ddf._meta
    schema = pa.Schema.from_pandas(meta, preserve_index=False)
    write = Write(src, table, if_exists, schema, atomic)
    opts: dict[str, Any] = {"on_warning": on_warning}
    if batch_rows is not None:
        opts["batch_rows"] = batch_rows
    writer = _PartitionWriter(write, opts, _fault)
    parts = ddf.to_delayed()
    tasks = [dask.delayed(writer, pure=False)(
                 part, i, dask_key_name="write-mysqlc-%s-%s-%d" % (write.run, table, i))
             for i, part in enumerate(parts)]
    try:
        client = _client()
        if client is not None:
            # wait for every task, failed or not, before the staging tables are dropped
            # (a task still running after the first error would make its table anew)
            futures = client.compute(tasks, retries=retries)
            distributed_wait(futures)
            results = client.gather(futures)
        else:
            kw: dict[str, Any] = {}
            if retries is not None:
                kw["retries"] = retries
            results = dask.compute(*tasks, **kw)
    except BaseException:
        write.abort()
        raise
    return write.finish([stage for stage, _ in results])


def distributed_wait(futures: Any) -> None:
    from distributed import wait
    wait(futures)


def _client() -> Any:
    """The current ``distributed.Client``, or None (another scheduler)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None
