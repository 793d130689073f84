"""Type stub of ``mysqlc._core``, the C core (src/*.c; behaviour in docs/core-api.md).

The core is internal: the DB-API layer in ``mysqlc/`` is its only user.  Arrow data
crosses it as PyCapsules (``"arrow_schema"``, ``"arrow_array"``,
``"arrow_array_stream"``), typed here as :class:`CapsuleType`.  Checked against the built
module by ``python -m mypy.stubtest mysqlc._core`` (tools/typecheck.sh).
"""

import ssl
from collections.abc import Callable, Coroutine, Generator, Iterable, Mapping, Sequence
from typing import Any, Literal, Optional, Union, final, overload

from typing_extensions import Buffer, CapsuleType, TypeAlias, disjoint_base

# one row as fetch() returns it: a tuple, or a dict when ``keys`` were given
_Row: TypeAlias = Union[tuple[Any, ...], dict[str, Any]]
# PEP 249 description entry: (name, type_code, display_size, internal_size, precision,
# scale, null_ok)
_Description: TypeAlias = tuple[str, int, Optional[int], int, int, int, bool]
_Encoders: TypeAlias = Optional[Mapping[type, Callable[[Any], Union[bytes, str]]]]
_Decimal: TypeAlias = Optional[str]   # "decimal", "float" or "str" (None: "decimal")

# --- src/encode.c ---------------------------------------------------------------------
def escape_string(
    data: Union[str, Buffer],
    no_backslash_escapes: bool = False,
    charset: str = "utf8mb4",
    encoding: str = "utf-8",
) -> bytes: ...
def literal(
    obj: object,
    no_backslash_escapes: bool = False,
    charset: str = "utf8mb4",
    encoding: str = "utf-8",
    encoders: _Encoders = None,
    binary_prefix: bool = False,
    *,
    portable: Union[bool, Literal[0, 1, 2]] = False,
) -> Optional[bytes]: ...
def format_query(
    query: bytes,
    args: Union[Sequence[Any], Mapping[str, Any], None],
    no_backslash_escapes: bool = False,
    charset: str = "utf8mb4",
    encoding: str = "utf-8",
    encoders: _Encoders = None,
    binary_prefix: bool = False,
    *,
    portable: Union[bool, Literal[0, 1, 2]] = False,
) -> Optional[bytes]: ...

# --- src/infile_encode.c --------------------------------------------------------------
def infile_arrow_check(schema_capsule: CapsuleType) -> None: ...
def infile_encode_arrow(schema_capsule: CapsuleType, array_capsule: CapsuleType) -> bytes: ...
def infile_encode_rows(
    rows: Iterable[Sequence[Any]],
    ncols: int,
    names: Optional[Sequence[str]] = None,
    first_row: int = 0,
) -> bytes: ...

# --- src/columnar.c -------------------------------------------------------------------
def arrow_stream(
    get_schema: Callable[[], CapsuleType],
    get_next: Callable[[], Optional[CapsuleType]],
    /,
) -> CapsuleType: ...

# --- src/store.c ----------------------------------------------------------------------
@final
class Store:
    """A buffered result kept as its row packets (not instantiable from Python)."""

    @property
    def nbytes(self) -> int: ...
    @property
    def ahead(self) -> int: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, key: int, /) -> _Row: ...
    @overload
    def __getitem__(self, key: slice, /) -> tuple[_Row, ...]: ...
    def fetch_arrow(
        self, start: int, n: int = -1, decimal: _Decimal = None
    ) -> tuple[CapsuleType, CapsuleType, int]: ...
    def arrow_schema(self, decimal: _Decimal = None) -> CapsuleType: ...

# --- src/aio_stream.c -----------------------------------------------------------------
@disjoint_base
class AioStream:
    """The per-statement half of mysqlc.aio's stream protocol (its subclass:
    mysqlc.aio._transport.StreamProtocol)."""

    loop: Any
    core: Any
    transport: Any
    errno: int
    _waiter: Any
    _drain: Any
    _exc: Any
    _early: Any
    _scratch: Any
    _future_class: Any
    _twrite: Any
    _state: int
    _paused: int
    _held: int
    _writing: int
    _fd: int
    _reader: int
    _wdirty: int
    _fast_waiter: int
    _unasked: int
    def get_buffer(self, sizehint: int, /) -> Any: ...
    def buffer_updated(self, nbytes: int, /) -> None: ...
    def _on_readable(self) -> None: ...
    def wait_future(self) -> Any: ...

@final
class AioWaiter:
    """The future of AioStream.wait_future() (not instantiable from Python)."""

    _asyncio_future_blocking: bool
    def done(self) -> bool: ...
    def cancelled(self) -> bool: ...
    def result(self) -> Any: ...
    def exception(self) -> Optional[BaseException]: ...
    def get_loop(self) -> Any: ...
    def add_done_callback(self, fn: Callable[[Any], object], /, *,
                          context: Any = None) -> None: ...
    def remove_done_callback(self, fn: Callable[[Any], object], /) -> int: ...
    def cancel(self, msg: Any = None) -> bool: ...
    def set_result(self, result: Any, /) -> None: ...
    def __await__(self) -> Any: ...
    def __iter__(self) -> AioWaiter: ...
    def __next__(self) -> Any: ...

# --- src/aio_call.c -------------------------------------------------------------------
@final
class AioCall(Coroutine[Any, Any, Any]):
    """The awaitable of a buffered mysqlc.aio cursor's execute() and of a mysqlc.aio
    connection's commit(), rollback(), begin() and ping() (not instantiable from
    Python): a coroutine in asyncio's sense."""

    __name__: str
    __qualname__: str
    cr_running: bool
    def send(self, value: Any, /) -> Any: ...
    def throw(self, typ: Any, val: Any = ..., tb: Any = ..., /) -> Any: ...
    def close(self) -> None: ...
    def __await__(self) -> Generator[Any, None, Any]: ...

@final
class AioMethod:
    """A method descriptor whose call makes an AioCall; `template` gives its signature
    and docstring (``__wrapped__``).  With `name` and `sql`: the connection's call
    `name` (`sql` sent as COM_QUERY; None: COM_PING)."""

    def __new__(cls, template: Callable[..., Any], name: str = ...,
                sql: Optional[bytes] = ..., /) -> AioMethod: ...
    def __get__(self, obj: Any, cls: Any = None, /) -> Any: ...
    def __call__(self, *args: Any, **kwargs: Any) -> AioCall: ...
    __wrapped__: Callable[..., Any]
    __name__: str
    __qualname__: str
    __code__: Any
    __defaults__: Any
    __kwdefaults__: Any

def aio_execute(shell: Any, query: Any, args: Any, infile: Any, attributes: Any, /
                ) -> AioCall: ...
def _aio_configure(env: tuple[Any, ...], /) -> None: ...
def _aio_ready(core: Any, stream: Any, track_seq: Optional[int], loop: Any, /) -> bool: ...
def _loop_running(loop: Any, /) -> bool: ...
def _pool_idle(core: Any, stream: Any, /) -> bool: ...
def _session_need(core: Connection, seq: Optional[int], autocommit: bool, /
                  ) -> Optional[str]: ...

# --- src/aio_pool.c -------------------------------------------------------------------
@final
class _Ready:
    """An awaitable that is done already: awaited, it gives its value at once."""

    def send(self, value: Any, /) -> Any: ...
    def close(self) -> None: ...
    def __await__(self) -> Generator[Any, None, Any]: ...
    def __iter__(self) -> _Ready: ...
    def __next__(self) -> Any: ...

@final
class _PoolEnter:
    """The awaitable of ``pool.acquire().__aenter__()``: the connection, taken when it is
    awaited."""

    def send(self, value: Any, /) -> Any: ...
    def throw(self, typ: Any, val: Any = ..., tb: Any = ..., /) -> Any: ...
    def close(self) -> None: ...
    def __await__(self) -> Generator[Any, None, Any]: ...
    def __iter__(self) -> _PoolEnter: ...
    def __next__(self) -> Any: ...

@disjoint_base
class PoolBase:
    """The state of mysqlc.aio.Pool that its C fast paths read."""

    _free: Any
    _used: Any
    _waiters: Any
    _terminated: Any
    _start: Any
    _loop: Any
    _clock: Any
    _closing: Any
    _ping_idle: Any
    _recycle: Any

@disjoint_base
class PoolAcquire:
    """The C half of mysqlc.aio.pool._AcquireContext: __aenter__ and __aexit__."""

    def __init__(self, pool: PoolBase, /) -> None: ...
    @property
    def _pool(self) -> Any: ...
    _conn: Any
    _co: Any
    _spent: bool
    def __aenter__(self) -> Any: ...
    def __aexit__(self, *exc: Any) -> Any: ...

@disjoint_base
class AioCursorBase:
    """The C half of mysqlc.aio.cursors.BaseCursor: __aenter__ and __aexit__, and the
    attributes src/aio_pool.c reads."""

    connection: Any
    _worker: Any
    _sync_obj: Any
    def __aenter__(self) -> Any: ...
    def __aexit__(self, *exc: Any) -> Any: ...

@disjoint_base
class AioConnBase:
    """The C half of mysqlc.aio.Connection: the attributes src/aio_pool.c reads."""

    _worker: Any
    _sync_obj: Any

def _pool_configure(env: tuple[Any, ...], /) -> None: ...

# --- src/conn.c -----------------------------------------------------------------------
@final
class Connection:
    """Low-level MySQL protocol connection."""

    def __init__(self) -> None: ...
    def connect(
        self,
        host: Optional[str] = None,
        port: int = 3306,
        unix_socket: Optional[str] = None,
        *,
        user: Optional[bytes] = None,
        password: Optional[bytes] = None,
        database: Optional[bytes] = None,
        collation: int = 45,
        client_flag: int = 0,
        connect_timeout: Optional[float] = None,
        read_timeout: Optional[float] = None,
        write_timeout: Optional[float] = None,
        ssl_mode: int = 0,
        ssl_ca: Optional[str] = None,
        ssl_capath: Optional[str] = None,
        ssl_cert: Optional[str] = None,
        ssl_key: Optional[str] = None,
        ssl_cipher: Optional[str] = None,
        tls_min_version: int = 0,
        tls_max_version: int = 0,
        server_public_key: Optional[bytes] = None,
        allow_public_key_request: bool = False,
        allow_cleartext: bool = False,
        compress: bool = False,
        attrs: Optional[Mapping[str, str]] = None,
        auth_plugins: Optional[Mapping[str, Callable[[bytes, bytes], Any]]] = None,
        local_files: bool = False,
        server_hostname: Optional[str] = None,
        ssl_fingerprint: Optional[bytes] = None,
        session_track: bool = True,
        transport: Any = None,
        ssl_context: Optional[ssl.SSLContext] = None,
    ) -> None: ...
    # commands and result reading
    def query(self, sql: Buffer, /) -> int: ...
    # pipelining (mysqlc/_pipeline.py): a command sent, its response queued in the
    # engine with its owner and read later, oldest first (src/conn.c "pipelining")
    def send_query(self, sql: Buffer, owner: Any = None) -> int: ...   # response's seq id
    def read_response(self) -> int: ...
    def pipe_room(self, size: int, /) -> bool: ...
    def pipe_drop(self) -> list[Any]: ...
    # format_query() with these options (portable=0), kept between calls (src/encode.c)
    def format_statement(self, query: Buffer, args: Any, no_backslash_escapes: bool,
                         charset: str, encoding: str, encoders: Optional[dict[type, Any]],
                         binary_prefix: bool, /) -> bytes: ...
    # one statement in one call (src/statement.c): (rows, description,
    # description_flags, rowcount, lastrowid, warning_count)
    def query_result(
        self, sql: Buffer, keys: Optional[tuple[str, ...]] = None
    ) -> tuple[Any, Optional[tuple[tuple[Any, ...], ...]], Optional[tuple[int, ...]],
               int, int, int]: ...
    def send_ping_nowait(self) -> bool: ...
    def send_query_nowait(self, sql: Buffer, /) -> bool: ...
    def take_head(self, wait: bool = False) -> Optional[int]: ...
    def take_rows(
        self, keys: Optional[tuple[str, ...]] = None
    ) -> Optional[tuple[Any, Optional[tuple[tuple[Any, ...], ...]],
                        Optional[tuple[int, ...]], int, int, int]]: ...
    def take_result(
        self, keys: Optional[tuple[str, ...]] = None, wait: bool = False
    ) -> Optional[tuple[Any, Optional[tuple[tuple[Any, ...], ...]],
                        Optional[tuple[int, ...]], int, int, int]]: ...
    def query_attributes(
        self,
        sql: Buffer,
        attributes: Sequence[tuple[Union[str, bytes], Any]],
        encoding: Optional[str] = "utf-8",
        /,
    ) -> int: ...
    def fetch(
        self, n: int = -1, keys: Optional[tuple[str, ...]] = None, max_bytes: int = 0,
        wait: bool = True, partial: bool = False,
    ) -> list[_Row]: ...
    def next_result(self) -> int: ...
    def discard(self) -> None: ...
    def ping(self) -> None: ...
    def select_db(self, name: bytes, /) -> None: ...
    def reset_connection(self) -> None: ...
    def close(self) -> None: ...
    def drain(self, timeout: float, closing: bool = False) -> bool: ...
    def change_user(
        self, user: bytes, password: Optional[bytes] = None, database: Optional[bytes] = None
    ) -> None: ...
    def stat(self) -> str: ...
    def fileno(self) -> int: ...
    # prepared statements (src/binary.c)
    def stmt_prepare(self, sql: Buffer, /) -> tuple[int, int, int]: ...
    def stmt_execute(
        self,
        statement_id: int,
        params: Sequence[Any],
        types: Any = None,
        cursor: bool = False,
        long_data_threshold: int = 0,
        encoding: Optional[str] = "utf-8",
        attributes: Optional[Sequence[tuple[Union[str, bytes], Any]]] = None,
        send_only: bool = False,   # then (response sequence id, types), read later
        owner: Any = None,         # with send_only: the queued entry's owner
    ) -> tuple[int, Any]: ...
    def stmt_fetch(self, n: int = -1, keys: Optional[tuple[str, ...]] = None) -> list[_Row]: ...
    def stmt_reset(self, statement_id: int, /) -> None: ...
    def stmt_bulk_execute(
        self,
        statement_id: int,
        rows: Iterable[Sequence[Any]],
        max_payload: int = 16777216,
        encoding: Optional[str] = "utf-8",
        exact: bool = False,
        prepare: Optional[bytes] = None,
    ) -> Any: ...   # Optional[int]; with `prepare`: (total, statement_id, num_params, num_columns, error)
    def stmt_prepare_execute(
        self,
        sql: Buffer,
        params: Sequence[Any],
        encoding: Optional[str] = "utf-8",
    ) -> tuple[int, int, int, Optional[int], Any, Optional[BaseException]]: ...
    def stmt_close(self, statement_id: int, /) -> None: ...
    # test hooks
    def _start_capture(self) -> None: ...
    def _stop_capture(self) -> bytes: ...
    def _replay(self, data: Buffer, client_flag: int = 0, binary: bool = False, /) -> None: ...
    # the engine with no transport (src/engine_api.c, docs/architecture.md)
    def _engine_start(
        self,
        client_flag: int = ...,
        binary: bool = False,
        compress: bool = False,
        ext_caps: int = 0,
        cursor: bool = False,
        seq: int = 1,
        cseq: int = 1,
        stmt: int = 0,
    ) -> None: ...
    def _engine_handshake(
        self,
        user: bytes,
        password: bytes = b"",
        database: Optional[bytes] = None,
        client_flag: int = 0,
        compress: bool = False,
        attrs: Optional[dict[str, str]] = None,
        collation: int = 45,
        auth_plugins: Optional[dict[str, Callable[[bytes, bytes], bytes]]] = None,
        server_public_key: Optional[bytes] = None,
    ) -> None: ...
    def _engine_handshake_step(self) -> Optional[bool]: ...
    def _engine_feed(self, data: Buffer, /) -> None: ...
    def _engine_output(self) -> bytes: ...
    def _engine_response(self) -> Optional[int]: ...
    def _engine_fetch(
        self, limit: int = -1, keys: Optional[tuple[str, ...]] = None
    ) -> list[Any]: ...
    def _engine_prepare_response(self) -> Optional[tuple[int, int, int]]: ...
    def _engine_command(self, command: int, argument: Buffer = ..., /) -> None: ...
    def _engine_need(self) -> int: ...
    def _transport_buffer(self, sizehint: int, /) -> memoryview: ...
    def _transport_received(self, n: int, /) -> None: ...
    # columnar reading (src/columnar.c) and stored results (src/store.c)
    def fetch_arrow(
        self, n: int = -1, decimal: _Decimal = None
    ) -> tuple[CapsuleType, CapsuleType, int]: ...
    def arrow_schema(self, decimal: _Decimal = None) -> CapsuleType: ...
    def store(self, keys: Optional[tuple[str, ...]] = None) -> Optional[Store]: ...
    def prefer_store(self) -> None: ...
    # writable attributes
    max_allowed_packet: int
    use_unicode: bool
    infile_handler: Optional[Callable[[bytes], Iterable[bytes]]]
    on_abandon: Optional[Callable[[int], object]]
    converters: Optional[dict[int, Callable[[Any], Any]]]
    # read-only attributes
    @property
    def result_id(self) -> int: ...
    @property
    def bulk_operations(self) -> bool: ...
    @property
    def last_errno(self) -> int: ...
    @property
    def last_error(self) -> str: ...
    @property
    def last_sqlstate(self) -> str: ...
    @property
    def server_version(self) -> str: ...
    @property
    def protocol_version(self) -> int: ...
    @property
    def thread_id(self) -> int: ...
    @property
    def ext_caps(self) -> int: ...
    @property
    def server_capabilities(self) -> int: ...
    @property
    def client_flag(self) -> int: ...
    @property
    def server_status(self) -> int: ...
    @property
    def server_collation(self) -> int: ...
    @property
    def affected_rows(self) -> int: ...
    @property
    def insert_id(self) -> int: ...
    @property
    def warning_count(self) -> int: ...
    @property
    def info(self) -> Optional[str]: ...
    @property
    def field_count(self) -> int: ...
    @property
    def description(self) -> Optional[tuple[_Description, ...]]: ...
    @property
    def description_flags(self) -> Optional[tuple[int, ...]]: ...
    @property
    def column_names(self) -> Optional[tuple[str, ...]]: ...
    @property
    def column_tables(self) -> Optional[tuple[str, ...]]: ...
    @property
    def more_results(self) -> bool: ...
    @property
    def pipe_pending(self) -> int: ...
    @property
    def pipe_head(self) -> Any: ...
    @property
    def pipe_bytes(self) -> int: ...
    pipe_max_commands: int
    pipe_max_bytes: int
    stop_requested: bool
    @property
    def take_pending(self) -> bool: ...
    @property
    def rows_pending(self) -> bool: ...
    @property
    def unread(self) -> bool: ...
    @property
    def cursor_open(self) -> bool: ...
    @property
    def open(self) -> bool: ...
    @property
    def fd(self) -> int: ...
    @property
    def auth_plugin_name(self) -> str: ...
    @property
    def tls_verified_by(self) -> Optional[str]: ...
    @property
    def tls_peer_fingerprint(self) -> Optional[bytes]: ...
    @property
    def no_backslash_escapes(self) -> bool: ...
    # None without TLS, else {"version": str, "cipher": str, "verified": bool,
    # "verified_by": Optional[str]} (src/tls.c mc_tls_info)
    @property
    def tls_info(self) -> Optional[dict[str, Any]]: ...
    # session state tracking (CLIENT_SESSION_TRACK) and query attributes
    @property
    def schema(self) -> Optional[str]: ...
    @property
    def session_changes(self) -> Optional[dict[str, Any]]: ...
    @property
    def session_variables(self) -> dict[str, str]: ...
    @property
    def session_track_seq(self) -> int: ...
    @property
    def session_uncertain_seq(self) -> int: ...
    @property
    def has_query_attributes(self) -> bool: ...
