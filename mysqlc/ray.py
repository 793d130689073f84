"""Ray Data read from and written to MySQL/MariaDB through mysqlc's C Arrow path (extra
``mysqlc[ray]``; docs/cluster.md).

* :func:`read_sql` / :class:`MySQLDatasource`: a ``ray.data.Dataset`` whose blocks are
  key ranges, each a ``pyarrow.Table`` read in a Ray task by :func:`mysqlc.read_sql` on
  the task's own connection; ``override_num_blocks`` is the number of ranges.
* :class:`MySQLDatasink`: ``Dataset.write_datasink``; every write task loads its blocks
  with :func:`mysqlc.load_table` into its own staging table, copied into the target in
  one transaction when all have finished.

The partitioning rules, retries, consistency and how the password travels are in
docs/cluster.md.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Callable, Optional, Union

try:
    import ray
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasink, Datasource, ReadTask
except ImportError as _exc:   # pragma: no cover - the message names the extra
    raise ImportError("mysqlc.ray needs Ray Data: pip install 'mysqlc[ray]' (%s)"
                      % (_exc,)) from _exc

from ._cluster import (
    Fault, Part, ReadOptions, Relation, Source, Write, plan, read_part, write_part,
)

__all__ = ["read_sql", "MySQLDatasource", "MySQLDatasink", "Source"]

_SourceArg = Union[str, Mapping[str, Any], Source]


def _read_block(source: Source, rel: Relation, part: Part, opts: ReadOptions,
                fault: Optional[Fault]) -> list[Any]:
    return [read_part(source, rel, part, opts, None, fault)]


class MySQLDatasource(Datasource):  # type: ignore[misc]
    """A Ray Data datasource: a query (or a table) read in key ranges.

    ``get_read_tasks(parallelism)`` plans `parallelism` ranges of `partition_on` (the
    rules of :func:`mysqlc.dask.read_sql_table`: integer keys cut by value between
    ``MIN``/``MAX``, other keys at ``NTILE`` minima from the server, NULL keys in the
    first range, every range evaluated by the server) and gives one read task per
    range; without `partition_on` one task reads everything.  The planning queries run
    where Ray plans the read (the driver); the rows only in the tasks.  Its repr and
    name hold no password.
    """

    def __init__(self, sql: Optional[str], source: _SourceArg, *,
                 table: Union[str, tuple[str, str], None] = None,
                 partition_on: Optional[str] = None, params: Optional[Sequence[Any]] = None,
                 columns: Optional[Sequence[str]] = None, where: Optional[str] = None,
                 as_of: Any = None, bounds: Optional[tuple[Any, Any]] = None,
                 protocol: str = "binary", batch_size: Optional[int] = None,
                 decimal: str = "decimal", _fault: Optional[Fault] = None) -> None:
        self._source = Source(source)
        if table is not None:
            self._rel = Relation(table=table, columns=columns, where=where, params=params,
                                 as_of=as_of)
        else:
            if sql is None:
                raise ValueError("give sql or table=")
            self._rel = Relation(sql=sql, params=params)
        self._key = partition_on
        self._bounds = bounds
        self._opts = ReadOptions(protocol, batch_size, decimal)
        self._fault = _fault

    def get_name(self) -> str:
        return "MySQL"

    def __repr__(self) -> str:
        return "MySQLDatasource(%s, %r, partition_on=%r)" % (
            self._rel.label, self._source, self._key)

    def estimate_inmemory_data_size(self) -> Optional[int]:
        return None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: Optional[int] = None,
                       data_context: Any = None) -> list[ReadTask]:
        n = max(1, int(parallelism)) if self._key is not None else 1
        p = plan(self._source, self._rel, self._key, n, self._opts, self._bounds)
        tasks = []
        for part in p.parts:
            fn = functools.partial(_read_block, self._source, self._rel, part, self._opts,
                                   self._fault)
            meta = BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None,
                                 input_files=None)
            tasks.append(ReadTask(fn, meta, schema=p.meta.schema,
                                  per_task_row_limit=per_task_row_limit))
        return tasks


def read_sql(sql: Optional[str], source: _SourceArg, *, table: Union[str, tuple[str, str],
             None] = None, partition_on: Optional[str] = None,
             override_num_blocks: Optional[int] = None,
             params: Optional[Sequence[Any]] = None, columns: Optional[Sequence[str]] = None,
             where: Optional[str] = None, as_of: Any = None,
             bounds: Optional[tuple[Any, Any]] = None, protocol: str = "binary",
             batch_size: Optional[int] = None, decimal: str = "decimal",
             ray_remote_args: Optional[dict[str, Any]] = None,
             _fault: Optional[Fault] = None) -> Any:
    """A query's result (or a table: ``sql=None, table=...``) as a ``ray.data.Dataset``
    of Arrow blocks read by the C path in Ray tasks.

    `partition_on` names the key column; `override_num_blocks` the number of ranges
    (default: the cluster's CPU count; 1 without `partition_on`).  `params` are
    positional (``%s``).  `columns`, `where`, `as_of` (MariaDB system-versioned tables:
    one consistent image) are for `table`.  `protocol`, `batch_size`, `decimal` as
    :func:`mysqlc.read_sql`.  `ray_remote_args` go to the read tasks (e.g.
    ``{"max_retries": 3}``: Ray's task retries; a retried range is read whole again).
    """
    ds = MySQLDatasource(sql, source, table=table, partition_on=partition_on,
                         params=params, columns=columns, where=where, as_of=as_of,
                         bounds=bounds, protocol=protocol, batch_size=batch_size,
                         decimal=decimal, _fault=_fault)
    if override_num_blocks is None:
        override_num_blocks = 1
        if partition_on is not None:
            override_num_blocks = max(1, int(ray.cluster_resources().get("CPU", 1)))
    kw: dict[str, Any] = {}
    if ray_remote_args:
        kw["ray_remote_args"] = ray_remote_args
    return ray.data.read_datasource(ds, override_num_blocks=override_num_blocks, **kw)


class MySQLDatasink(Datasink):  # type: ignore[misc]
    """``Dataset.write_datasink(MySQLDatasink(table, source, if_exists=...))``.

    Every write task loads its blocks with :func:`mysqlc.load_table`, the two ways of
    :func:`mysqlc.dask.to_table`: staged (``"fail"``/``"append"`` with ``atomic=True``:
    into its own staging table ``_mysqlc_stage_<run>_<task index>``, dropped and made
    again when Ray runs the task again; ``on_write_complete`` copies all of them into
    `table` with one ``INSERT ... SELECT`` each in one transaction) or direct
    (``"replace"``, or ``atomic=False``: into the target in one transaction with the
    task's row in a ledger table, so a re-run of a committed task loads nothing);
    ``on_write_failed`` drops what the write made.  A retried task (``ray_remote_args={"max_retries":
    n, "retry_exceptions": True}``) leaves no duplicated row, a failed write no row.
    `if_exists`: ``"fail"`` (ValueError when the table exists), ``"append"`` (created
    ``LIKE`` the first staging table when missing), ``"replace"`` (a new table swapped
    in with ``RENAME TABLE``).  :attr:`rows_written` after the write.
    """

    def __init__(self, table: str, source: _SourceArg, *, if_exists: str = "fail",
                 batch_rows: Optional[int] = None, on_warning: str = "warn",
                 atomic: bool = True,
                 _fault: Optional[Callable[[str], None]] = None) -> None:
        self._write = Write(Source(source), table, if_exists, None, atomic)
        self._load: dict[str, Any] = {"on_warning": on_warning}
        if batch_rows is not None:
            self._load["batch_rows"] = batch_rows
        self._fault = _fault
        self.rows_written: Optional[int] = None

    def get_name(self) -> str:
        return "MySQL"

    def __repr__(self) -> str:
        return "MySQLDatasink(%s, %r)" % (self._write.table, self._write.source)

    def write(self, blocks: Iterable[Any], ctx: Any) -> tuple[str, int]:
        import pyarrow as pa
        tables = []
        for block in blocks:
            tables.append(block if isinstance(block, pa.Table)
                          else pa.Table.from_pandas(block, preserve_index=False))
        data = pa.concat_tables(tables) if tables else None
        if data is None:
            return ("", 0)
        return write_part(self._write, ctx.task_idx, data, self._load, self._fault)

    def on_write_complete(self, write_result: Any) -> None:
        stages = [s for s, _ in write_result.write_returns if s]
        self.rows_written = self._write.finish(stages)

    def on_write_failed(self, error: Exception) -> None:
        self._write.abort()
