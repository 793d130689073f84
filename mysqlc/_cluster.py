"""What :mod:`mysqlc.dask` and :mod:`mysqlc.ray` share (docs/cluster.md): the credential
wrapper that travels to the workers, the range plan of a partitioned read, the reading
of one range on a worker (with one reconnect), and the staged write.

Nothing here imports Dask or Ray; pyarrow and pandas are imported by the functions
that need them.  A live connection is never pickled: every task opens its own from a
:class:`Source` and closes it before it returns.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional, Union

from ._dsn import parse_dsn
from .columnar import read_sql
from .connections import Connection
from .errors import OperationalError, ProgrammingError

__all__ = ["Source", "ReadOptions", "Part", "Plan"]

#: connect() arguments never shown, logged or tokenized
_SECRET = frozenset(("password", "passwd", "password1", "password2", "password3",
                     "ssl_key", "ssl", "conv", "credential"))

#: errors that mean "the connection was lost" (the partition is re-read once):
#: CR_SERVER_GONE_ERROR 2006, CR_SERVER_LOST 2013, CR_CONN_HOST_ERROR 2003 and
#: CR_CONNECTION_ERROR 2002 (connect refused while the server restarts),
#: ER_CONNECTION_KILLED 1927 (MariaDB), ER_QUERY_INTERRUPTED 1317, ER_SERVER_SHUTDOWN
#: 1053, MySQL 8's ER_CLIENT_INTERACTION_TIMEOUT 4031
_LOST = frozenset((2006, 2013, 2003, 2002, 1927, 1317, 1053, 4031))

#: errors of a connect() to a server that is restarting: CR_CONNECTION_ERROR 2002 (unix
#: socket refused or missing), CR_CONN_HOST_ERROR 2003 (TCP refused), 2013/2006 (the
#: handshake cut by the shutdown), ER_SERVER_SHUTDOWN 1053
_DOWN = frozenset((2002, 2003, 2006, 2013, 1053))

#: the wait for a restarting server when the source sets no connect_timeout (seconds;
#: mysqlc.connect's default)
_RECONNECT_WAIT = 10.0


def _q(name: str) -> str:
    return "`" + str(name).replace("`", "``") + "`"


class Source:
    """Where a cluster task connects: a DSN (``mysql://user:pw@host:port/db?opt=v``) or
    a dict of :func:`mysqlc.connect` keyword arguments.

    The password is kept out of every name Dask or Ray shows: ``repr`` and ``str`` mask
    it, ``dask.base.tokenize`` sees only the non-secret arguments
    (``__dask_tokenize__``), so task keys, the dashboard and logs never contain it.  It
    travels to the workers inside the pickled task (``__reduce__``), i.e. over the
    cluster's own connections -- use TLS between scheduler and workers when they cross a
    network.  ``password`` may also be a callable with no arguments, called on the
    worker each time a connection is opened (a credential callback: read a file, a
    secret manager, an environment variable there); then no secret is pickled at all.
    """

    __slots__ = ("_kwargs",)

    def __init__(self, source: Union[str, Mapping[str, Any], Source]) -> None:
        if isinstance(source, Source):
            kwargs = dict(source._kwargs)
        elif isinstance(source, str):
            kwargs = parse_dsn(source)
        elif isinstance(source, Mapping):
            kwargs = dict(source)
        else:
            raise TypeError("source must be a DSN string or a dict of mysqlc.connect() "
                            "arguments, not %s" % type(source).__name__)
        if "passwd" in kwargs and "password" not in kwargs:
            kwargs["password"] = kwargs.pop("passwd")
        if "db" in kwargs and "database" not in kwargs:
            kwargs["database"] = kwargs.pop("db")
        self._kwargs = kwargs

    def connect(self, **overrides: Any) -> Connection:
        """A new :class:`mysqlc.Connection` (the callable password, if any, is called)."""
        kw = dict(self._kwargs)
        kw.update(overrides)
        pw = kw.get("password")
        if callable(pw):
            kw["password"] = pw()
        return Connection(**kw)

    def public(self) -> dict[str, Any]:
        """The connect arguments without the secret ones (password, key, converters)."""
        return {k: v for k, v in self._kwargs.items() if k not in _SECRET}

    def __repr__(self) -> str:
        shown = ", ".join("%s=%r" % kv for kv in sorted(self.public().items()))
        if "password" in self._kwargs:
            shown += (", " if shown else "") + "password=***"
        return "mysqlc.Source(%s)" % shown

    __str__ = __repr__

    def __dask_tokenize__(self) -> object:
        return ("mysqlc.Source", tuple(sorted((k, repr(v)) for k, v in self.public().items())))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Source, (self._kwargs,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Source) and other._kwargs == self._kwargs

    def __hash__(self) -> int:
        return hash(self.__dask_tokenize__())


class ReadOptions:
    """:func:`mysqlc.read_sql` options carried to every partition: `protocol`,
    `batch_size`, `decimal` (see there)."""

    __slots__ = ("protocol", "batch_size", "decimal")

    def __init__(self, protocol: str = "binary", batch_size: Optional[int] = None,
                 decimal: str = "decimal") -> None:
        if protocol not in ("binary", "text"):
            raise ValueError("protocol must be 'binary' or 'text', not %r" % (protocol,))
        if decimal not in ("decimal", "float", "str"):
            raise ValueError("decimal must be 'decimal', 'float' or 'str', not %r"
                             % (decimal,))
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be positive")
        self.protocol = protocol
        self.batch_size = batch_size
        self.decimal = decimal

    def key(self) -> tuple[Any, ...]:
        return (self.protocol, self.batch_size, self.decimal)

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOptions, self.key())

    def __repr__(self) -> str:
        return "ReadOptions(protocol=%r, batch_size=%r, decimal=%r)" % self.key()


# ------------------------------------------------------------------ the relation

class Relation:
    """The rows to read: a table (with columns, a WHERE, an ``AS OF`` time) or a query
    (read as a derived table).  Renders the SQL of one range and of the planning
    queries; `params` are positional (``%s``)."""

    def __init__(self, *, table: Union[str, tuple[str, str], None] = None,
                 sql: Optional[str] = None, columns: Optional[Sequence[str]] = None,
                 where: Optional[str] = None, params: Optional[Sequence[Any]] = None,
                 as_of: Any = None) -> None:
        if (table is None) == (sql is None):
            raise ValueError("give a table or a query")
        if params is not None and isinstance(params, Mapping):
            raise TypeError("params must be a sequence (%s placeholders): the ranges add "
                            "positional parameters of their own")
        self.params: tuple[Any, ...] = tuple(params) if params is not None else ()
        fix = (lambda s: s) if params is not None else (lambda s: s.replace("%", "%%"))
        if table is not None:
            name = (".".join(_q(p) for p in table) if isinstance(table, tuple)
                    else _q(table))
            cols = "*" if not columns else ", ".join(_q(c) for c in columns)
            src = name
            if as_of is not None:
                src += " FOR SYSTEM_TIME AS OF TIMESTAMP %s"
                self.params = (as_of,) + self.params
            self._select = "SELECT %s FROM %s" % (cols, src)
            self._where = "(%s)" % fix(where) if where else None
            self.label = table if isinstance(table, str) else ".".join(table)
            self.is_table = True
        else:
            assert sql is not None
            if columns or where or as_of is not None:
                raise ValueError("columns=, where= and as_of= are for read_sql_table(); "
                                 "put them into the query")
            body = sql.rstrip()
            while body.endswith(";"):
                body = body[:-1].rstrip()
            self._select = "SELECT * FROM (%s\n) AS _mysqlc_part" % fix(body)
            self._where = None
            self.label = "query"
            self.is_table = False

    def select(self, cond: Optional[str] = None, order: Optional[str] = None,
               limit0: bool = False) -> str:
        conds = [c for c in (self._where, cond) if c]
        out = self._select
        if conds:
            out += " WHERE " + " AND ".join(conds)
        if order:
            out += " ORDER BY " + _q(order)
        if limit0:
            out += " LIMIT 0"
        return out

    def from_sql(self) -> str:
        """``(select) AS _mysqlc_rel``: the relation as a derived table."""
        return "(%s\n) AS _mysqlc_rel" % self.select()


# ------------------------------------------------------------------ the plan

class Part:
    """One range: a condition on the key (``None``: every row) and its parameters."""

    __slots__ = ("index", "cond", "params")

    def __init__(self, index: int, cond: Optional[str], params: tuple[Any, ...]) -> None:
        self.index = index
        self.cond = cond
        self.params = params

    def __reduce__(self) -> tuple[Any, ...]:
        return (Part, (self.index, self.cond, self.params))

    def __dask_tokenize__(self) -> object:
        return ("mysqlc.Part", self.index, self.cond, repr(self.params))

    def __repr__(self) -> str:
        return "Part(%d, %r, %r)" % (self.index, self.cond, self.params)


class Plan:
    """The ranges of a partitioned read (see :func:`plan`)."""

    def __init__(self, parts: list[Part], divisions: Optional[tuple[Any, ...]],
                 kind: str, meta: Any, not_null: bool) -> None:
        self.parts = parts
        self.divisions = divisions
        self.kind = kind
        self.meta = meta          # the empty pyarrow.Table of the result
        self.not_null = not_null


def _ranges(key: str, bounds: list[Any], literal: bool) -> list[tuple[Optional[str],
                                                                      tuple[Any, ...]]]:
    """Conditions of ``len(bounds) + 1`` ranges cut at `bounds` (ascending): the first
    ``key IS NULL OR key < b1``, then ``key >= b_i AND key < b_i+1``, the last ``key >=
    b_n``; the server compares (collation, PAD SPACE ...).  Integers are inlined."""
    k = _q(key)
    if not bounds:
        return [(None, ())]

    def val(v: Any) -> tuple[str, tuple[Any, ...]]:
        return ("%d" % v, ()) if literal else ("%s", (v,))

    out: list[tuple[Optional[str], tuple[Any, ...]]] = []
    s, p = val(bounds[0])
    out.append(("(%s IS NULL OR %s < %s)" % (k, k, s), p))
    for lo, hi in zip(bounds, bounds[1:]):
        s1, p1 = val(lo)
        s2, p2 = val(hi)
        out.append(("%s >= %s AND %s < %s" % (k, s1, k, s2), p1 + p2))
    s, p = val(bounds[-1])
    out.append(("%s >= %s" % (k, s), p))
    return out


def _kind(field_type: Any) -> str:
    import pyarrow as pa
    if pa.types.is_integer(field_type):
        return "int"
    if pa.types.is_timestamp(field_type) or pa.types.is_date(field_type):
        return "datetime"
    if (pa.types.is_string(field_type) or pa.types.is_large_string(field_type)
            or pa.types.is_binary(field_type) or pa.types.is_large_binary(field_type)
            or pa.types.is_fixed_size_binary(field_type)):
        return "str"
    return "other"


#: binary collations of character sets whose byte order is the order of their code
#: points (so Python compares their decoded str as the server does); latin1 is left
#: out: MySQL's latin1 is cp1252, whose bytes 0x80-0x9f decode above U+00FF
_BIN_COLLATION = re.compile(r"\A(utf8mb4|utf8mb3|utf8|ascii)_(bin|nopad_bin|0900_bin)\Z")


def python_order(collation: Optional[str], padded: bool) -> bool:
    """Whether the server orders a string key of `collation` as Python orders its
    values (``str`` by code point, ``bytes`` by byte), so Dask divisions are exact.

    True for ``binary`` (BINARY, VARBINARY, BLOB) and for the ``_bin`` collations of
    utf8mb4, utf8mb3 and ascii: NO PAD ones (``utf8mb4_nopad_bin``, MySQL's
    ``utf8mb4_0900_bin``) always, PAD SPACE ones (``utf8mb4_bin``) only when no value
    ends in a space or holds a control character (`padded` False): PAD SPACE makes
    ``'a' = 'a '`` and ``'a\t' < 'a'``, Python does not.  False for every other
    collation (case- and accent-insensitive ones, UCA weights, other character sets).
    """
    if collation is None:
        return False
    if collation == "binary":
        return True
    m = _BIN_COLLATION.match(collation)
    if m is None:
        return False
    return m.group(2) != "bin" or not padded


def plan(source: Source, rel: Relation, key: Optional[str], npartitions: int,
         opts: ReadOptions, bounds: Optional[tuple[Any, Any]] = None) -> Plan:
    """Plan a read of `rel` in `npartitions` ranges of the column `key`.

    Queries, on one connection: the result's columns (``... LIMIT 0``: no row read),
    then for an integer key ``MIN/MAX`` (skipped when `bounds` is given) and cuts the
    value range into equal parts; for any other key (datetime, date, string, decimal,
    float) one ``NTILE(n) OVER (ORDER BY key)`` query whose tile minima -- the
    server's own values, in its own order and collation -- are the cut points.  Every
    range is evaluated by the server (``key >= lo AND key < hi``), so each row is in
    exactly one; NULL keys are in the first.  Divisions (for Dask) are given for
    integer and datetime keys declared NOT NULL, and for NOT NULL string keys whose
    collation orders them as Python does (:func:`python_order`: ``binary``, the
    ``_bin`` collations of utf8mb4/utf8mb3/ascii); None otherwise.
    """
    if npartitions < 1:
        raise ValueError("npartitions must be at least 1")
    conn = source.connect()
    try:
        meta = read_sql(conn, rel.select(limit0=True), params=rel.params,
                        batch_size=opts.batch_size, decimal=opts.decimal,
                        protocol=opts.protocol)
        if key is None or npartitions == 1:
            return Plan([Part(0, None, ())], None, "none", meta, False)
        if key not in meta.column_names:
            raise ProgrammingError(0, "partition key %r is not a column of the result %r"
                                   % (key, meta.column_names))
        cur = conn.cursor()
        cur.execute(rel.select(limit0=True), rel.params)
        names = [d[0] for d in cur.description]
        not_null = not cur.description[names.index(key)][6]
        cur.close()
        kind = _kind(meta.schema.field(key).type)
        k = _q(key)
        cur = conn.cursor()
        if kind == "int":
            if bounds is None:
                cur.execute("SELECT MIN(%s), MAX(%s) FROM %s" % (k, k, rel.from_sql()),
                            rel.params)
                lo, hi = cur.fetchone()
            else:
                lo, hi = bounds
            cur.close()
            if lo is None:
                return Plan([Part(0, None, ())], None, kind, meta, not_null)
            lo, hi = int(lo), int(hi)
            n = max(1, min(npartitions, hi - lo + 1))
            span = hi - lo + 1
            edges = [lo + span * i // n for i in range(1, n)]
            divisions = tuple([lo] + edges + [hi]) if not_null else None
            ranges = _ranges(key, edges, literal=True)
        else:
            if bounds is not None:
                raise ValueError("bounds= is for integer keys (%r is not one): the cut "
                                 "points of other keys come from the server" % (key,))
            # a string key: also its collation, and whether a value ends in a space or
            # holds a control character (where PAD SPACE and Python disagree)
            extra = inner = ""
            if kind == "str":
                extra = ", COLLATION(MIN(%s)), MAX(_mysqlc_odd)" % k
                inner = (", (%s LIKE '%%%% ' OR %s REGEXP '[[:cntrl:]]') AS _mysqlc_odd"
                         % (k, k))
            cur.execute(
                "SELECT MIN(%s), MAX(%s)%s FROM (SELECT %s%s, NTILE(%d) OVER (ORDER BY "
                "%s) AS _mysqlc_tile FROM %s WHERE %s IS NOT NULL) AS _mysqlc_t "
                "GROUP BY _mysqlc_tile ORDER BY _mysqlc_tile"
                % (k, k, extra, k, inner, npartitions, k, rel.from_sql(), k), rel.params)
            tiles = cur.fetchall()
            cur.close()
            if not tiles:
                return Plan([Part(0, None, ())], None, kind, meta, not_null)
            cuts: list[Any] = []
            for mn in (t[0] for t in tiles[1:]):
                if not cuts or mn != cuts[-1]:
                    if mn != tiles[0][0]:
                        cuts.append(mn)
            # a string cut equal to its neighbour by collation only ('a' and 'A')
            # makes an empty range: still no row lost or read twice
            exact = kind == "datetime" or (kind == "str" and python_order(
                tiles[0][2], any(t[3] for t in tiles)))
            divisions = None
            if exact and not_null:
                divisions = tuple([tiles[0][0]] + cuts + [tiles[-1][1]])
            ranges = _ranges(key, cuts, literal=False)
        parts = [Part(i, c, p) for i, (c, p) in enumerate(ranges)]
        return Plan(parts, divisions, kind, meta, not_null)
    finally:
        conn.close()


def table_npartitions(source: Source, table: Union[str, tuple[str, str]],
                      bytes_per_chunk: int) -> int:
    """Partitions for about `bytes_per_chunk` bytes each, from the server's table
    statistics (``information_schema.TABLES.DATA_LENGTH``: an estimate the storage
    engine keeps, read without scanning the table; ``ANALYZE TABLE`` refreshes it)."""
    if bytes_per_chunk < 1:
        raise ValueError("bytes_per_chunk must be positive")
    conn = source.connect()
    try:
        cur = conn.cursor()
        if isinstance(table, tuple):
            cur.execute("SELECT DATA_LENGTH, TABLE_ROWS FROM information_schema.TABLES "
                        "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s", table)
        else:
            cur.execute("SELECT DATA_LENGTH, TABLE_ROWS FROM information_schema.TABLES "
                        "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s", (table,))
        row = cur.fetchone()
        cur.close()
    finally:
        conn.close()
    if row is None:
        raise ProgrammingError(1146, "table %r not found in information_schema.TABLES"
                               % (table,))
    data_length = int(row[0] or 0)
    return max(1, -(-data_length // bytes_per_chunk))


# ------------------------------------------------------------------ reading one range

def reconnect(source: Source, clock: Callable[[], float] = time.monotonic,
              sleep: Callable[[float], None] = time.sleep) -> Connection:
    """A new connection for a re-read, waiting for a server that is restarting.

    ``source.connect()`` is tried again while it fails with a "server not there (yet)"
    error (2002, 2003, 2006, 2013, 1053), pausing 0.05 s, doubling up to 1 s between
    tries, until the source's ``connect_timeout`` (seconds; 10 when it sets none) has
    passed since the first try; each try's own ``connect_timeout`` is what is left of
    that.  Then the last try's OperationalError is raised, as the driver raised it.
    Any other error (access denied, unknown database) is raised at once."""
    wait = source._kwargs.get("connect_timeout")
    if not wait or wait <= 0:
        wait = _RECONNECT_WAIT
    deadline = clock() + float(wait)
    pause = 0.05
    while True:
        left = deadline - clock()
        try:
            return source.connect(connect_timeout=max(left, 0.05))
        except OperationalError as exc:
            if not exc.args or exc.args[0] not in _DOWN:
                raise
            left = deadline - clock()
            if left <= 0:
                raise
        sleep(min(pause, left))
        pause = min(pause * 2, 1.0)


Fault = Callable[[int, int], None]


def read_part(source: Source, rel: Relation, part: Part, opts: ReadOptions,
              order: Optional[str] = None, fault: Optional[Fault] = None) -> Any:
    """The rows of `part` as a ``pyarrow.Table``, read on a new connection that is
    closed afterwards.  When the connection is lost (KILL, server restart: errors
    2006, 2013, 2003, 2002, 1927, 1317, 1053, 4031) the range is read again from the start
    on a new connection, once; that reconnect waits for a restarting server up to the
    source's ``connect_timeout`` (10 s by default, see :func:`reconnect`).  The second
    failure (of the re-read, or of its reconnect when the server stays down) is raised
    as the driver's OperationalError.  The partial result of the first attempt is
    dropped, so a re-read adds no row.

    `fault` (tests): called as ``fault(attempt, thread_id)`` after the first batch of
    each attempt (attempt 0, then 1)."""
    sql = rel.select(part.cond, order)
    params = rel.params + part.params
    for attempt in (0, 1):
        conn = None
        try:
            conn = source.connect() if attempt == 0 else reconnect(source)
            progress = None
            if fault is not None:
                tid = conn.thread_id()
                seen = [False]

                def progress(_rows: int, _a: int = attempt, _t: int = tid,
                             _s: list[bool] = seen) -> None:
                    if not _s[0]:
                        _s[0] = True
                        fault(_a, _t)
            return read_sql(conn, sql, params=params, batch_size=opts.batch_size,
                            decimal=opts.decimal, protocol=opts.protocol,
                            progress=progress)
        except OperationalError as exc:
            if attempt == 1 or not exc.args or exc.args[0] not in _LOST:
                raise
        finally:
            if conn is not None:
                try:
                    conn.close()
                except Exception:
                    pass
    raise AssertionError("unreachable")


def to_pandas(table: Any, dtype_backend: str, float_ints: Sequence[str] = ()) -> Any:
    """`table` as pandas: ``pd.ArrowDtype`` columns (``"pyarrow"``) or NumPy dtypes
    (``"numpy"``; the integer columns named in `float_ints` -- nullable ones -- as
    float64 in every partition, so that all partitions have the meta's dtypes)."""
    import pandas as pd
    if dtype_backend == "pyarrow":
        return table.to_pandas(types_mapper=pd.ArrowDtype)
    df = table.to_pandas()
    for name in float_ints:
        if name in df.columns:
            df[name] = df[name].astype("float64")
    return df


def nullable_ints(meta: Any, source: Source, rel: Relation) -> list[str]:
    """Integer columns of the result that may be NULL (description's null_ok)."""
    import pyarrow as pa
    conn = source.connect()
    try:
        cur = conn.cursor()
        cur.execute(rel.select(limit0=True), rel.params)
        desc = cur.description
        cur.close()
    finally:
        conn.close()
    return [d[0] for d in desc
            if d[6] and d[0] in meta.column_names
            and pa.types.is_integer(meta.schema.field(d[0]).type)]


# ------------------------------------------------------------------ staged writes

def _sql_type(t: Any) -> str:
    import pyarrow as pa
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    for bits, name in ((8, "TINYINT"), (16, "SMALLINT"), (32, "INT"), (64, "BIGINT")):
        if pa.types.is_integer(t) and t.bit_width == bits:
            return name + ("" if pa.types.is_signed_integer(t) else " UNSIGNED")
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_decimal(t):
        if t.precision > 65:
            raise TypeError("DECIMAL precision %d is over MySQL's 65" % t.precision)
        return "DECIMAL(%d,%d)" % (t.precision, t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or (
            hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t)):
        return "LONGTEXT"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "LONGBLOB"
    if pa.types.is_timestamp(t):
        return "DATETIME(6)"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_time(t) or pa.types.is_duration(t):
        return "TIME(6)"
    if pa.types.is_null(t):
        return "TEXT"
    raise TypeError("no MySQL column type for Arrow type %s: create the table first "
                    "(if_exists='append')" % t)


def create_table_sql(name: str, schema: Any) -> str:
    """``CREATE TABLE`` for an Arrow schema (int64 BIGINT, float64 DOUBLE, string
    LONGTEXT, timestamp DATETIME(6), date32 DATE, decimal128(p, s) DECIMAL(p, s) ...)."""
    cols = ", ".join("%s %s NULL" % (_q(f.name), _sql_type(f.type)) for f in schema)
    return "CREATE TABLE %s (%s)" % (_q(name), cols)


def table_exists(conn: Connection, name: str) -> bool:
    cur = conn.cursor()
    cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                "DATABASE() AND TABLE_NAME = %s", (name,))
    n = cur.fetchone()[0]
    cur.close()
    return bool(n)


_NAME_OK = re.compile(r"\A[^\x00`]{1,64}\Z")


class Write:
    """A write of `table` in partitions (docs/cluster.md, "Writes") that no retried or
    failed partition leaves twice.  Two modes:

    * **staged** (``atomic=True``, the default for ``"fail"`` and ``"append"``): every
      partition loads into its own staging table ``_mysqlc_stage_<run>_<i>`` (dropped
      and made again when the task runs again); :meth:`finish` copies them into the
      target with one ``INSERT ... SELECT`` each inside one transaction, then drops
      them.  A failed write leaves the target as it was.
    * **direct** (always for ``"replace"``, whose new table is invisible until the final
      ``RENAME TABLE``; ``atomic=False`` otherwise): every partition loads straight
      into the target inside one transaction that also inserts the partition's number
      into the ledger table ``_mysqlc_done_<run>`` (PRIMARY KEY): a re-run of a
      partition whose load committed finds its number there and loads nothing; two
      runs at once serialise on the ledger row.  No copy, so about half the server's
      work; needs a transactional (InnoDB) target.  With ``"append"`` the committed
      partitions of a write that fails stay in the table (no duplicates).

    With `schema` (an Arrow schema) a missing target is created at once; without it
    (Ray: the blocks' schema is known only in the tasks) the tables are made from the
    data's schema in the tasks (staged: the target ``LIKE`` the first staging table)."""

    def __init__(self, source: Source, table: str, if_exists: str,
                 schema: Any = None, atomic: bool = True) -> None:
        if if_exists not in ("fail", "replace", "append"):
            raise ValueError("if_exists must be 'fail', 'replace' or 'append', not %r"
                             % (if_exists,))
        if not isinstance(table, str) or not _NAME_OK.match(table):
            raise ValueError("table must be a table name (1-64 characters, no NUL or "
                             "backtick) of the connection's database")
        self.source = source
        self.table = table
        self.if_exists = if_exists
        self.run = uuid.uuid4().hex[:12]
        self.direct = if_exists == "replace" or not atomic
        self.ledger = "_mysqlc_done_%s" % self.run
        self.columns: Optional[list[str]] = list(schema.names) if schema is not None else None
        conn = source.connect()
        try:
            exists = table_exists(conn, table)
            if exists and if_exists == "fail":
                raise ValueError("table %r exists (if_exists='fail')" % (table,))
            # "replace": the new table under another name until finish(), so that a
            # failed write keeps the old one
            self.target = "_mysqlc_new_%s" % self.run if if_exists == "replace" else table
            self.target_exists = exists and if_exists != "replace"
            if not self.target_exists and schema is not None:
                conn.cursor().execute(create_table_sql(self.target, schema))
                self.target_exists = True
            if self.direct:
                conn.cursor().execute("CREATE TABLE %s (part INT NOT NULL PRIMARY KEY, "
                                      "row_count BIGINT NOT NULL) ENGINE=InnoDB"
                                      % _q(self.ledger))
        finally:
            conn.close()

    def stage_name(self, index: int) -> str:
        return "_mysqlc_stage_%s_%d" % (self.run, index)

    def __dask_tokenize__(self) -> object:
        return ("mysqlc.Write", self.run)

    def finish(self, stages: Sequence[str]) -> int:
        """Staged: copy `stages` into the target in one transaction.  Direct: the rows
        the ledger counts.  Then ``"replace"``'s RENAME, and the staging tables (the
        ledger) dropped.  Returns the rows written."""
        stages = list(dict.fromkeys(s for s in stages if s))
        conn = self.source.connect()
        total = 0
        try:
            cur = conn.cursor()
            if self.direct:
                cur.execute("SELECT COALESCE(SUM(row_count), 0) FROM %s" % _q(self.ledger))
                total = int(cur.fetchone()[0])
                conn.commit()
            elif stages:
                if not table_exists(conn, self.target):
                    cur.execute("CREATE TABLE %s LIKE %s" % (_q(self.target), _q(stages[0])))
                columns = self.columns
                if columns is None:
                    cur.execute("SELECT * FROM %s LIMIT 0" % _q(stages[0]))
                    columns = [d[0] for d in cur.description]
                cols = ", ".join(_q(c) for c in columns)
                cur.execute("BEGIN")
                try:
                    for stage in stages:
                        cur.execute("INSERT INTO %s (%s) SELECT %s FROM %s"
                                    % (_q(self.target), cols, cols, _q(stage)))
                        total += cur.rowcount
                    cur.execute("COMMIT")
                except BaseException:
                    try:
                        cur.execute("ROLLBACK")
                    except Exception:
                        pass
                    raise
            if self.if_exists == "replace" and table_exists(conn, self.target):
                old = "_mysqlc_old_%s" % self.run
                if table_exists(conn, self.table):
                    cur.execute("RENAME TABLE %s TO %s, %s TO %s"
                                % (_q(self.table), _q(old), _q(self.target), _q(self.table)))
                    cur.execute("DROP TABLE %s" % _q(old))
                else:
                    cur.execute("RENAME TABLE %s TO %s" % (_q(self.target), _q(self.table)))
            return total
        finally:
            self._drop(conn)
            conn.close()

    def abort(self) -> None:
        """Drop the staging tables and the ledger of this run (and the new table of
        ``if_exists='replace'``)."""
        conn = self.source.connect()
        try:
            self._drop(conn)
        finally:
            conn.close()

    def _drop(self, conn: Connection) -> None:
        try:
            cur = conn.cursor()
            cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE "
                        "TABLE_SCHEMA = DATABASE() AND (TABLE_NAME LIKE %s OR TABLE_NAME "
                        "IN (%s, %s))", ("\\_mysqlc\\_stage\\_%s\\_%%" % self.run,
                                         self.ledger,
                                         self.target if self.if_exists == "replace" else ""))
            for (name,) in cur.fetchall():
                cur.execute("DROP TABLE IF EXISTS %s" % _q(name))
        except Exception:
            pass   # the original error (or the result) matters more


_ER_DUP_ENTRY = 1062


def write_part(write: Write, index: int, data: Any, load_options: Mapping[str, Any],
               fault: Optional[Callable[[str], None]] = None) -> tuple[str, int]:
    """Load `data` (Arrow or pandas) as partition `index` of `write`; returns ``(staging
    table or "", rows)``.  Staged: into a staging table made anew (``LIKE`` the target,
    or from the data's Arrow schema when the target is made at the end).  Direct: into
    the target, in one transaction with the partition's ledger row (nothing when the
    ledger has it already).  `fault` (tests) is called with the table's name after the
    load has been committed."""
    from .bulk import load_table
    from .errors import IntegrityError
    conn = write.source.connect(local_infile=True)
    try:
        cur = conn.cursor()
        if write.direct:
            if not write.target_exists:
                cur.execute(create_table_sql(write.target, _arrow_schema(data))
                            .replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
            conn.begin()
            try:
                # first: a second run of this partition waits here for the first's
                # commit, then finds the row
                cur.execute("INSERT INTO %s VALUES (%%s, 0)" % _q(write.ledger), (index,))
            except IntegrityError as exc:
                conn.rollback()
                if exc.args[0] != _ER_DUP_ENTRY:
                    raise
                return "", 0     # loaded by an earlier run: the ledger counts its rows
            rows = 0
            if data is not None and len(data):
                rows = load_table(cur, write.target, data, **dict(load_options))
            cur.execute("UPDATE %s SET row_count = %%s WHERE part = %%s" % _q(write.ledger),
                        (rows, index))
            conn.commit()
            if fault is not None:
                fault(write.target)
            return "", rows
        stage = write.stage_name(index)
        cur.execute("DROP TABLE IF EXISTS %s" % _q(stage))
        if write.target_exists:
            cur.execute("CREATE TABLE %s LIKE %s" % (_q(stage), _q(write.target)))
        else:
            cur.execute(create_table_sql(stage, _arrow_schema(data)))
        rows = 0
        if data is not None and len(data):
            rows = load_table(cur, stage, data, **dict(load_options))
        conn.commit()
        if fault is not None:
            fault(stage)
        return stage, rows
    finally:
        conn.close()


def _arrow_schema(data: Any) -> Any:
    import pyarrow as pa
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data.schema
    return pa.Schema.from_pandas(data, preserve_index=False)
