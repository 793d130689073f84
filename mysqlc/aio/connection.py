"""``mysqlc.aio.Connection``: the asyncio shell over :class:`mysqlc.connections.Connection`.

The connection's rules (arguments and option files, the handshake, TLS modes and
verification, authentication plugins, compression, session tracking, init_command,
autocommit, converters, LOCAL INFILE, errors) are the sync class's: this module only
gives it an asyncio stream (:mod:`mysqlc.aio._transport`) and runs its methods in the
connection's greenlet (:mod:`mysqlc.aio._runner`).  Names and which calls are awaitable
follow aiomysql (``aiomysql.Connection``), which SQLAlchemy's asyncio adapter expects.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union, overload

from .. import _core, connections, cursors as _sync_cursors
from ..constants import SERVER_STATUS
from ..connections import _KILL_BUDGET
from ._runner import (
    CANCEL_BUDGET, Worker, _getcurrent, _Undrainable, _WorkerGreenlet, await_only,
)
from ._transport import open_stream
from . import _statement

if TYPE_CHECKING:
    from collections.abc import Generator, Mapping

    from .. import errors as _errors
    from . import cursors as _aio_cursors

    _AioCursorT = TypeVar("_AioCursorT", bound="_aio_cursors.BaseCursor")


def _shell_for(cls: type) -> type:
    # mysqlc.aio.cursors imports this module: bound on first use, not imported per call
    global _shell_for
    from .cursors import shell_for
    _shell_for = shell_for
    return shell_for(cls)


_AIT_END = object()         # the async iterable is exhausted
_AIT_CANCELLED = object()   # the wait for its next chunk was cancelled


class _NextChunk:
    """The awaitable of one ``__anext__()`` of a LOAD DATA LOCAL source, handed to the
    awaiting coroutine by :func:`await_only`: its end is ``_AIT_END``.  Awaited a second
    time -- what the runner does with the wait a cancellation interrupted, while it
    drives the statement to its end (``Worker.finish``) -- it gives ``_AIT_CANCELLED``
    at once instead of asking the iterator again."""

    __slots__ = ("_ait", "_awaited")

    def __init__(self, ait: Any) -> None:
        self._ait = ait
        self._awaited = False

    def __await__(self) -> Generator[Any, Any, Any]:
        if self._awaited:
            return _AIT_CANCELLED
        self._awaited = True
        try:
            return (yield from self._ait.__anext__().__await__())
        except StopAsyncIteration:
            return _AIT_END


class _AsyncChunks:
    """``execute(..., infile=agen)`` with an async iterable of bytes chunks (anything
    with ``__aiter__``: an async generator, an async file object...): the sync iterator
    the engine's LOCAL INFILE flow pulls chunks from (``PyIter_Next``, src/results.c).
    Each ``__next__`` runs in the connection's greenlet and awaits the next chunk with
    :func:`await_only`, so the chunk is produced by the awaiting coroutine itself -- in
    the awaiting task and its :mod:`contextvars` context -- while the engine waits
    between two data packets.  An exception of the iterator ends the file (the empty
    packet, the connection stays in step) and is raised from ``execute()`` after the
    server's answer, as for a sync iterable.  A cancellation while a chunk is awaited
    reaches the iterator first (its ``await`` raises CancelledError), then the runner's
    rule (mysqlc.aio._runner): ``KILL QUERY``, the file ended, the answer read, then
    CancelledError -- or the connection closed past ``CANCEL_BUDGET``."""

    __slots__ = ("_ait",)

    def __init__(self, aiterable: Any) -> None:
        self._ait = aiterable.__aiter__()

    def __iter__(self) -> "_AsyncChunks":
        return self

    def __next__(self) -> Any:
        chunk = await_only(_NextChunk(self._ait))
        if chunk is _AIT_END:
            raise StopIteration
        if chunk is _AIT_CANCELLED:   # ends the file; the caller gets CancelledError
            raise asyncio.CancelledError("cancelled while the LOAD DATA LOCAL source "
                                         "was awaited")
        return chunk


class _Engine(connections.Connection):
    """The sync connection as mysqlc.aio drives it: its stream is asyncio's, and the
    waits it makes for ``KILL QUERY`` (close() with unread rows, a read timeout) are
    awaits in its greenlet instead of a blocked thread join."""

    _proto: Any = None

    def _open_stream(self, core: Any, host: Optional[str], port: int,
                     unix_socket: Optional[str], timeout: Optional[float]) -> Any:
        loop = asyncio.get_running_loop()
        proto = await_only(open_stream(loop, host, port, unix_socket, timeout),
                           drainable=False)
        proto.attach(core)
        self._proto = proto
        return proto

    def _infile_handler(self, filename: bytes) -> Any:
        # an async iterable given with infile=: pulled chunk by chunk through the runner
        data = self._pending_infile
        if data is not None and not isinstance(data, (bytes, bytearray, memoryview, str)) \
                and hasattr(type(data), "__aiter__"):
            self._pending_infile = _AsyncChunks(data)
        return super()._infile_handler(filename)

    def _io_possible(self) -> bool:
        # a statement can be sent only from inside the connection's greenlet: the plain
        # calls (escape_string(), literal(), mogrify()) run outside it
        return type(_getcurrent()) is _WorkerGreenlet

    def _kill_query_side(self, thread_id: int, timeout: float = 2.0) -> None:
        loop = asyncio.get_running_loop()
        kill = super()._kill_query_side
        await_only(asyncio.wait_for(loop.run_in_executor(None, kill, thread_id, timeout),
                                    timeout + 1.0), drainable=False)

    def _kill_query_bounded(self, thread_id: int, budget: Optional[float] = None) -> None:
        try:
            self._kill_query_side(thread_id, _KILL_BUDGET if budget is None else budget)
            self._kill_query_failed = None
        except Exception as exc:   # noqa: BLE001 - the caller's exception is what counts
            self._kill_query_failed = exc


class _PooledEngine(_Engine):
    """The engine of a pooled connection: asks the server to report every change of
    the session's state (session_track_state_change, in the connect's ``SET``), by
    which the pool knows without a round trip whether a released connection needs
    its session reset (mysqlc.aio.pool)."""

    _track_state_change = True


def _kill_quietly(engine: _Engine, thread_id: int) -> None:
    try:
        connections.Connection._kill_query_side(engine, thread_id, _KILL_BUDGET)
    except Exception:   # noqa: BLE001 - best effort: the connection is gone anyway
        pass


async def _stop_cancelled(worker: Worker, msg: Any) -> None:
    """The runner's ``on_cancel``: the caller's await was cancelled while the greenlet
    waited in `msg` (see mysqlc.aio._runner)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CANCEL_BUDGET
    engine = worker.owner
    core = getattr(engine, "_conn", None)
    proto = getattr(engine, "_proto", None)

    def abort() -> None:
        if proto is not None:
            proto.close()

    if core is None or not core.open or type(msg) is _Undrainable:
        await worker.finish(msg, loop.time(), abort)
        return
    await _statement.stop_statement(worker, engine, core, proto, deadline, abort,
                                    lambda: worker.finish(msg, deadline, abort))


async def _abandon_connect(worker: Worker, msg: Any) -> None:
    """The runner's ``on_cancel`` while connecting: the half-done connect is unwound at
    once (an OperationalError thrown into the greenlet; ``Connection._connect``'s cleanup
    closes the core and with it the stream).  Left suspended, the greenlet would keep
    the socket, and the server its session, until the process ends: a suspended
    greenlet's frames are not collected."""
    await worker.finish(msg, asyncio.get_running_loop().time(), lambda: None)


def _shell(name: str, doc_owner: type, mode: str) -> Callable[..., Any]:
    """A method of the asyncio shell that calls the sync object's `name`: in the
    greenlet (mode "io"), at once inside a coroutine ("now": no I/O, but awaitable as
    in aiomysql), or as a plain call ("plain")."""
    if mode == "io":
        async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return await self._worker.run(getattr(self._sync_obj, name), *args, **kwargs)
        what = "Awaitable"
    elif mode == "now" and name in ("fetchall", "fetchone"):
        # the statement path's own fetches: no arguments to pass on
        async def method(self: Any) -> Any:
            obj = self._sync_obj
            fetch = getattr(obj, name)
            if obj._pipe_entry is None:
                return fetch()
            return await self._worker.run(fetch)
        what = "Awaitable (no I/O)"
    elif mode == "now":
        async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            obj = self._sync_obj
            if getattr(obj, "_pipe_entry", None) is not None:
                # a pipelined result not read yet (Connection.pipeline): read in the
                # greenlet, with every response queued before it
                return await self._worker.run(getattr(obj, name), *args, **kwargs)
            return getattr(obj, name)(*args, **kwargs)
        what = "Awaitable (no I/O)"
    else:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:   # type: ignore[misc]
            return getattr(self._sync_obj, name)(*args, **kwargs)
        what = "Plain call:"
    method.__name__ = method.__qualname__ = name
    sync_doc = inspect.cleandoc(getattr(getattr(doc_owner, name, None), "__doc__", None) or "")
    method.__doc__ = "%s :meth:`%s.%s.%s`.\n\n%s" % (
        what, doc_owner.__module__, doc_owner.__name__, name, sync_doc)
    return method


def _attribute(name: str, settable: bool = False) -> property:
    def get(self: Any) -> Any:
        return getattr(self._sync_obj, name)

    def put(self: Any, value: Any) -> None:
        setattr(self._sync_obj, name, value)
    return property(get, put if settable else None,
                    doc="The sync object's ``%s``." % name)


def install(cls: type, doc_owner: type, awaited: tuple = (), plain: tuple = (),
            attributes: tuple = (), settable: tuple = (), immediate: tuple = ()) -> None:
    """Give the shell class `cls` its generated methods and attributes (see _shell)."""
    for names, mode in ((awaited, "io"), (immediate, "now"), (plain, "plain")):
        for name in names:
            setattr(cls, name, _shell(name, doc_owner, mode))
    for name in attributes:
        setattr(cls, name, _attribute(name))
    for name in settable:
        setattr(cls, name, _attribute(name, settable=True))


class Connection(_core.AioConnBase):
    """An asyncio connection (``await mysqlc.aio.connect(...)``).

    Awaitable: ``commit()``, ``rollback()``, ``begin()``, ``ping(reconnect=False)``,
    ``select_db(db)``, ``autocommit(on)``, ``show_warnings()``, ``kill(thread_id)``,
    ``change_user(...)``, ``set_charset(...)``, ``set_character_set(...)``,
    ``set_sql_mode(...)``, ``stat()``, :meth:`ensure_closed`.  Plain calls:
    :meth:`cursor`, :meth:`close`, ``get_autocommit()``, ``character_set_name()``,
    ``thread_id()``, ``get_server_info()``, ``get_host_info()``, ``get_proto_info()``,
    ``escape()``, ``literal()``, ``escape_string()``, ``string_literal()``,
    ``tls_info()``, ``errno()``, ``error()``, ``sqlstate()``.  Each does what the
    :class:`mysqlc.connections.Connection` method of that name does.

    One await at a time per connection (another concurrent call raises
    ProgrammingError).  A cancelled await (``task.cancel()``, ``asyncio.timeout()``)
    stops the server's statement with ``KILL QUERY`` over a side connection, reads the
    rest of the response and leaves the connection usable, then raises CancelledError;
    when that takes longer than ``mysqlc.aio._runner.CANCEL_BUDGET`` (5 s) the connection
    is closed instead (:attr:`closed` becomes True).
    """

    #: aiomysql's ``connect(echo=...)``, kept (mysqlc logs no queries)
    echo = False

    if TYPE_CHECKING:
        # What install() below gives the class, as a type checker sees it: the sync
        # methods' signatures, the awaitable ones as coroutine functions (only for the
        # checker: at run time these names are install()'s generated methods).
        async def commit(self) -> None: ...
        async def rollback(self) -> None: ...
        async def begin(self) -> None: ...
        async def ping(self, reconnect: bool = False) -> None: ...
        async def select_db(self, db: Union[str, bytes]) -> None: ...
        async def autocommit(self, on: bool) -> None: ...
        async def show_warnings(self) -> tuple[tuple[Any, ...], ...]: ...
        async def kill(self, thread_id: int) -> None: ...
        async def change_user(self, user: Union[str, bytes],
                              passwd: Union[str, bytes, None] = None,
                              db: Union[str, bytes, None] = None, *,
                              password: Union[str, bytes, None] = None,
                              database: Union[str, bytes, None] = None) -> None: ...
        async def set_charset(self, charset: str) -> None: ...
        async def set_character_set(self, charset: str,
                                    collation: Optional[str] = None) -> None: ...
        async def set_sql_mode(self, sql_mode: str) -> None: ...
        async def stat(self) -> str: ...
        def get_autocommit(self) -> bool: ...
        def character_set_name(self) -> str: ...
        def thread_id(self) -> int: ...
        def get_server_info(self) -> str: ...
        def get_host_info(self) -> str: ...
        def get_proto_info(self) -> int: ...
        def escape(self, obj: Any, mapping: Optional[Mapping[Any, Callable[..., Any]]] = None
                   ) -> Union[str, bytes]: ...
        def literal(self, obj: Any) -> bytes: ...
        def escape_string(self, s: Union[str, bytes, bytearray, memoryview]) -> bytes: ...
        def string_literal(self, obj: Union[str, bytes, bytearray, memoryview]) -> bytes: ...
        def tls_info(self) -> Optional[dict[str, Any]]: ...
        def errno(self) -> int: ...
        def error(self) -> str: ...
        def sqlstate(self) -> str: ...
        def fileno(self) -> int: ...
        def insert_id(self) -> int: ...
        def affected_rows(self) -> int: ...
        def warning_count(self) -> int: ...
        def info(self) -> Optional[str]: ...
        def field_count(self) -> int: ...
        @property
        def open(self) -> bool: ...
        @property
        def host(self) -> str: ...
        @property
        def port(self) -> int: ...
        @property
        def user(self) -> Union[str, bytes]: ...
        @property
        def db(self) -> Union[str, bytes, None]: ...
        @property
        def database(self) -> Union[str, bytes, None]: ...
        @property
        def charset(self) -> str: ...
        @property
        def encoding(self) -> str: ...
        @property
        def server_version(self) -> str: ...
        @property
        def autocommit_mode(self) -> bool: ...
        @property
        def client_flag(self) -> int: ...
        @property
        def server_capabilities(self) -> int: ...
        @property
        def collation(self) -> Optional[str]: ...
        @property
        def unix_socket(self) -> Optional[str]: ...
        @property
        def messages(self) -> list[Any]: ...
        @property
        def encoders(self) -> dict[Any, Any]: ...
        Error: type[_errors.Error]
        Warning: type[_errors.Warning]
        InterfaceError: type[_errors.InterfaceError]
        DatabaseError: type[_errors.DatabaseError]
        DataError: type[_errors.DataError]
        OperationalError: type[_errors.OperationalError]
        IntegrityError: type[_errors.IntegrityError]
        InternalError: type[_errors.InternalError]
        ProgrammingError: type[_errors.ProgrammingError]
        NotSupportedError: type[_errors.NotSupportedError]
        cursorclass: type[_sync_cursors.BaseCursor]
        long_data_threshold: int
        prepared_cache_size: int

    def __init__(self, worker: Worker, engine: _Engine, cursorclass: type) -> None:
        self._worker = worker
        self._sync_obj = engine
        self._cursorclass = cursorclass

    @property
    def sync(self) -> connections.Connection:
        """The :class:`mysqlc.connections.Connection` this shell drives."""
        return self._sync_obj

    def pipeline(self) -> "Pipeline":
        """``async with conn.pipeline() as p:`` -- :meth:`mysqlc.connections.Connection.
        pipeline` (the same semantics; ``await p.sync()``).  Inside the block ``await
        cur.execute()`` sends the command and returns -1 at once; a cursor's fetch reads
        its result (and every one queued before it) in the connection's greenlet.
        Cancelled while the block's responses are read: the statements already sent run
        on the server anyway (it has them); the cancellation stops the one running and
        drains, or closes the connection past the budget (then the unread ones' cursors
        hold OperationalError: not reported done)."""
        return Pipeline(self)

    @property
    def closed(self) -> bool:
        """True once the connection was closed or its stream ended (aiomysql's)."""
        engine = self._sync_obj
        core = engine._conn
        proto = engine._proto
        return bool(engine._closed or core is None or not core.open
                    or proto is None or proto._state)

    @property
    def loop(self) -> Optional[asyncio.AbstractEventLoop]:
        """The event loop the connection belongs to (aiomysql's ``conn.loop``)."""
        return self._worker.loop

    @property
    def server_thread_id(self) -> tuple:
        """``(thread_id,)``, as PyMySQL and aiomysql give it."""
        return (self._sync_obj._conn.thread_id,)

    def get_transaction_status(self) -> bool:
        """True while a transaction is open: SERVER_STATUS_IN_TRANS of the server's last
        OK/EOF packet (aiomysql's method)."""
        core = self._sync_obj._conn
        return bool(core is not None and core.open
                    and core.server_status & SERVER_STATUS.SERVER_STATUS_IN_TRANS)

    # the class of the cursor given (a sync class gives its asyncio shell)
    @overload
    def cursor(self, cls: None = None, prepared: bool = False
               ) -> _aio_cursors.BaseCursor: ...
    @overload
    def cursor(self, cls: type[_AioCursorT], prepared: bool = False) -> _AioCursorT: ...
    @overload
    def cursor(self, cls: type[_sync_cursors.SSDictCursor], prepared: bool = False
               ) -> _aio_cursors.SSDictCursor: ...
    @overload
    def cursor(self, cls: type[_sync_cursors.SSCursor], prepared: bool = False
               ) -> _aio_cursors.SSCursor: ...
    @overload
    def cursor(self, cls: type[_sync_cursors.DictCursor], prepared: bool = False
               ) -> _aio_cursors.DictCursor: ...
    @overload
    def cursor(self, cls: type[_sync_cursors.Cursor], prepared: bool = False
               ) -> _aio_cursors.Cursor: ...
    @overload
    def cursor(self, cls: type[_sync_cursors.BaseCursor], prepared: bool = False
               ) -> _aio_cursors.BaseCursor: ...

    def cursor(self, cls: Optional[type] = None, *more: Any,
               prepared: bool = False) -> Any:
        """A new asyncio cursor of `cls` (default: the connection's ``cursorclass``):
        one of :mod:`mysqlc.aio.cursors`' classes, or a sync cursor class of
        :mod:`mysqlc.cursors` (its asyncio shell is chosen).  `prepared` as in
        :meth:`mysqlc.connections.Connection.cursor` (also accepted as the second
        positional argument).  Use it with ``async with``.

        aiomysql's ``cursor(DictCursor, SSCursor)`` (a class made of several) raises
        TypeError: name the one class (``SSDictCursor``)."""
        if cls is None and not more and not prepared:
            # the common call: _cursorclass is an asyncio class already (connect() and
            # the cursorclass setter keep it so), its sync cursor made as the sync
            # cursor() makes it
            shell = self._cursorclass
            return shell(self, shell._sync_class(self._sync_obj))
        if more:
            if len(more) == 1 and isinstance(more[0], (bool, int)) and not prepared:
                prepared = bool(more[0])
            else:
                raise TypeError(
                    "cursor() takes one cursor class (aiomysql's cursor(A, B) mixing of "
                    "several classes is not supported: use e.g. mysqlc.aio.SSDictCursor), "
                    "got %r" % ((cls,) + more,))
        try:
            shell = _shell_for(cls or self._cursorclass)
        except TypeError:
            self._sync_obj.cursor(cls, prepared)   # the sync API's error for this class
            raise
        return shell(self, self._sync_obj.cursor(shell._sync_class, prepared))

    @staticmethod
    def _cursor_shell(cls: type) -> type:
        """The class ``cursor()`` makes for the cursor class `cls` (set as
        ``cursorclass``)."""
        return _shell_for(cls)

    def close(self) -> None:
        """Close at once, without the event loop (what SQLAlchemy calls to terminate a
        connection): COM_QUIT is written without waiting, the stream is closed.  An
        await in progress on the connection fails with OperationalError 2013.  Closing a
        closed connection does nothing (aiomysql)."""
        engine = self._sync_obj
        if engine._closed:
            return
        if self._worker.busy:
            core = engine._conn
            thread_id = core.thread_id if core is not None and core.open else 0
            if engine._proto is not None:
                engine._proto.close()
            if thread_id:
                # nobody will read the pending command's result: stop it on the server
                # (in a thread, without waiting, as close() must not need the loop)
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    return
                loop.run_in_executor(None, _kill_quietly, engine, thread_id)
            return
        try:
            engine.close()
        except Exception:   # noqa: BLE001 - closed at once whatever the stream says
            pass

    async def ensure_closed(self) -> None:
        """Close gracefully (aiomysql): unread results are dropped or the statement
        stopped as :meth:`mysqlc.connections.Connection.close` does, then COM_QUIT."""
        if self._sync_obj._closed:
            return
        await self._worker.run(self._sync_obj.close)

    async def __aenter__(self) -> "Connection":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.ensure_closed()

    def __repr__(self) -> str:
        return "<mysqlc.aio.Connection %s>" % ("closed" if self.closed else
                                               "open to %r" % (self._sync_obj.host,))

    def __del__(self) -> None:
        engine = getattr(self, "_sync_obj", None)
        if engine is not None and not engine._closed and not self._worker.busy:
            try:
                engine.close()
            except Exception:   # noqa: BLE001 - interpreter shutdown, a closed loop
                pass


class Pipeline:
    """The asyncio shell of :class:`mysqlc._pipeline.Pipeline` (``conn.pipeline()``)."""

    def __init__(self, conn: Connection) -> None:
        self._worker = conn._worker
        self._sync_obj = conn._sync_obj.pipeline()

    async def __aenter__(self) -> "Pipeline":
        self._sync_obj.__enter__()   # no I/O
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._worker.run(self._sync_obj.__exit__, *exc)

    async def sync(self) -> None:
        """Awaitable :meth:`mysqlc._pipeline.Pipeline.sync`."""
        await self._worker.run(self._sync_obj.sync)

    def __len__(self) -> int:
        return len(self._sync_obj)

    @property
    def errors(self) -> list:
        """The sync pipeline's ``errors``."""
        return self._sync_obj.errors


install(Connection, connections.Connection,
        awaited=("commit", "rollback", "begin", "ping", "select_db", "autocommit",
                 "show_warnings", "kill", "change_user", "set_charset",
                 "set_character_set", "set_sql_mode", "stat"),
        plain=("get_autocommit", "character_set_name", "thread_id", "get_server_info",
               "get_host_info", "get_proto_info", "escape", "literal", "escape_string",
               "string_literal", "tls_info", "errno", "error", "sqlstate", "fileno",
               "insert_id", "affected_rows", "warning_count", "info", "field_count"),
        attributes=("open", "host", "port", "user", "db", "database", "charset",
                    "encoding", "server_version", "autocommit_mode", "client_flag",
                    "server_capabilities", "collation", "unix_socket", "messages",
                    "encoders", "Error", "Warning", "InterfaceError", "DatabaseError",
                    "DataError", "OperationalError", "IntegrityError", "InternalError",
                    "ProgrammingError", "NotSupportedError"),
        settable=("long_data_threshold", "prepared_cache_size"))


def _get_cursorclass(self: Connection) -> type:
    return self._sync_obj.cursorclass


def _set_cursorclass(self: Connection, value: type) -> None:
    shell = self._cursor_shell(value)   # TypeError for a class that is no cursor class
    self._sync_obj.cursorclass = shell._sync_class
    self._cursorclass = shell


Connection.cursorclass = property(   # type: ignore[assignment]
    _get_cursorclass, _set_cursorclass,
    doc="The sync cursor class of ``cursor()`` without a class; set it to a mysqlc.aio "
        "or mysqlc.cursors class (as PyMySQL's ``conn.cursorclass``): later ``cursor()`` "
        "calls give its asyncio shell.")


def _engine_driven(name: str, sql: Optional[bytes]) -> Any:
    """commit() / rollback() / begin() / ping() driven by the event loop with no
    greenlet switch and no Python coroutine: ``_core.AioMethod`` (src/aio_call.c,
    mysqlc.aio._statement's ``_begin_call``), showing an ``async def`` with the generated
    method's documentation (the reference it follows: ``_statement._call_py``)."""
    shell_doc = getattr(Connection, name).__doc__
    if sql is None:
        async def method(self: Any, reconnect: bool = False) -> None:
            await _statement._call_py(self, "ping", None, reconnect)
    else:
        async def method(self: Any) -> None:   # type: ignore[misc]
            await _statement._call_py(self, name, sql)
    method.__name__ = name
    method.__qualname__ = "Connection." + name
    method.__doc__ = shell_doc
    return _core.AioMethod(method, name, sql)


for _name, _sql in (("commit", b"COMMIT"), ("rollback", b"ROLLBACK"), ("begin", b"BEGIN"),
                    ("ping", None)):
    setattr(Connection, _name, _engine_driven(_name, _sql))
del _name, _sql


class _Connecting:
    """What :func:`connect` returns: awaitable (the connection), and an async context
    manager that closes it on exit (``async with mysqlc.aio.connect(...) as conn``), as
    aiomysql's."""

    __slots__ = ("_kwargs", "_conn")

    def __init__(self, kwargs: dict) -> None:
        self._kwargs = kwargs
        self._conn: Optional[Connection] = None

    def __await__(self) -> Generator[Any, None, Connection]:
        return _connect(self._kwargs).__await__()

    async def __aenter__(self) -> Connection:
        self._conn = await _connect(self._kwargs)
        return self._conn

    async def __aexit__(self, *exc: Any) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.ensure_closed()


if TYPE_CHECKING:
    # connect()'s arguments as a type checker sees them: mysqlc.connect()'s (see
    # mysqlc.connections.Connection.__init__; keep the two in step) and aiomysql's loop
    # and echo; at run time connect() passes them on as given (below)
    from ..connections import _DEFAULT_CONNECT_TIMEOUT
    import ssl as _ssl

    def connect(host: Optional[str] = None, user: Union[str, bytes, None] = None,
                password: Union[str, bytes, None] = None,
                database: Union[str, bytes, None] = None,
                port: Optional[int] = 0,
                unix_socket: Optional[str] = None, *,
                passwd: Union[str, bytes, None] = None, db: Union[str, bytes, None] = None,
                charset: Optional[str] = None,
                collation: Optional[str] = None, autocommit: Optional[bool] = False,
                session_track: bool = True, pipelining: bool = True,
                connect_timeout: Optional[float] = _DEFAULT_CONNECT_TIMEOUT,
                read_timeout: Optional[float] = None, write_timeout: Optional[float] = None,
                init_command: Optional[str] = None, sql_mode: Optional[str] = None,
                client_flag: int = 0, multi_statements: bool = True,
                cursorclass: Union[type[_aio_cursors.BaseCursor],
                                   type[_sync_cursors.BaseCursor], None] = None,
                conv: Optional[Mapping[Any, Any]] = None,
                use_unicode: bool = True, binary_prefix: bool = False,
                local_infile: bool = False,
                local_infile_dir: Optional[str] = None, prepared_cache_size: int = 64,
                long_data_threshold: int = 1 << 20,
                ssl: Union[Mapping[str, Any], bool, _ssl.SSLContext, None] = None,
                ssl_mode: Optional[str] = None, ssl_ca: Optional[str] = None,
                ssl_capath: Optional[str] = None, ssl_cert: Optional[str] = None,
                ssl_key: Optional[str] = None,
                ssl_cipher: Optional[str] = None, ssl_verify_cert: Optional[bool] = None,
                ssl_verify_identity: Optional[bool] = None,
                ssl_disabled: Optional[bool] = None,
                tls_version: Union[str, list[str], tuple[str, ...], None] = None,
                ssl_fingerprint: Union[str, list[str], tuple[str, ...], None] = None,
                compress: bool = False,
                server_public_key: Union[str, bytes, None] = None,
                get_server_public_key: bool = False,
                enable_cleartext_plugin: bool = False, program_name: Optional[str] = None,
                conn_attrs: Optional[Mapping[str, str]] = None,
                named_pipe: bool = False, read_default_file: Optional[str] = None,
                read_default_group: Optional[str] = None,
                auth_plugin: Optional[str] = None, protocol: Any = None,
                loop: Optional[asyncio.AbstractEventLoop] = None,
                echo: bool = False) -> _Connecting: ...
else:
    def connect(*args: Any, **kwargs: Any) -> Any:
        """Open an asyncio connection: ``conn = await mysqlc.aio.connect(...)``, or ``async
        with mysqlc.aio.connect(...) as conn``.

        Takes every argument of :func:`mysqlc.connect` (a DSN string first, keyword
        arguments, option files), with aiomysql's names too (``db``; ``cursorclass``: a
        :mod:`mysqlc.aio.cursors` class or a sync one; ``loop`` is accepted and ignored: the
        running loop is used; ``echo`` is accepted and kept as ``conn.echo``, as
        ``create_pool(echo=...)``, but queries are not logged).  Raises the sync API's exceptions with its numbers and texts
        (OperationalError 2003 "Can't connect to server on ...", 1045 access denied, ...).
        """
        if args:
            kwargs["_args"] = args
        return _Connecting(kwargs)


async def _connect(kwargs: dict) -> Connection:
    from .cursors import Cursor, shell_for
    kwargs = dict(kwargs)
    flavour = kwargs.pop("_flavour", None)
    if flavour is not None:
        # a flavour's own connect coroutine (mysqlc.aiomysql's), also for the pool's
        # connects, which call connect(**pool kwargs)
        return await flavour(kwargs)   # type: ignore[no-any-return]
    args = kwargs.pop("_args", ())
    kwargs.pop("loop", None)   # aiomysql's parameter; the running loop is used
    echo = bool(kwargs.pop("echo", False))   # aiomysql's (it logs queries): kept, unused
    cursorclass = kwargs.pop("cursorclass", None) or Cursor
    engine_class = _PooledEngine if kwargs.pop("_pooled", False) else _Engine
    shell = shell_for(cursorclass)
    worker = Worker()
    worker.on_cancel = _abandon_connect
    engine = await worker.run(engine_class, *args, cursorclass=shell._sync_class, **kwargs)
    worker.owner = engine
    worker.on_cancel = _stop_cancelled
    conn = Connection(worker, engine, shell)
    conn.echo = echo
    return conn
