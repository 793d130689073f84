"""``aiomysql.connection`` of the aiomysql flavour: :func:`connect` and
:class:`Connection`.

The connection is :class:`mysqlc.aio.Connection` (one greenlet per connection running
the sync code over an asyncio stream) driving a sync connection of the PyMySQL flavour
(:class:`mysqlc.pymysql.connections.Connection`: aiomysql is PyMySQL's protocol code
made asynchronous, so its literals, ``escape()`` returning str, error classes and the
unbuffered-result warning are PyMySQL's), with aiomysql 0.3's arguments, defaults and
differences: see :func:`connect`.
"""

from __future__ import annotations

import getpass
import warnings
from typing import TYPE_CHECKING, Any, Optional, TypeVar, overload

from .. import connections as _connections
from ..aio import connection as _aio
from ..aio._runner import Worker
from ..constants import CLIENT
from ..errors import InterfaceError
from ..pymysql import connections as _pm
from ..pymysql import converters as _pm_converters
from . import cursors as _cursors

if TYPE_CHECKING:
    from collections.abc import Generator

    _CursorT = TypeVar("_CursorT", bound=_cursors.Cursor)

__all__ = ["Connection", "connect"]

try:
    DEFAULT_USER = getpass.getuser()
except (KeyError, OSError):   # no passwd entry for the uid
    DEFAULT_USER = "unknown"

#: connect_timeout=None (aiomysql: no timeout) as the core's longest one, seconds
_NO_TIMEOUT = 31536000


class _Engine(_aio._Engine, _pm.Connection):
    """The sync connection the flavour drives: the PyMySQL flavour's, over mysqlc.aio's
    stream (``_open_stream``), with aiomysql's arguments and defaults."""

    def __init__(self, host: str = "localhost", user: Optional[str] = None,
                 password: Any = "", db: Any = None, port: int = 3306,
                 unix_socket: Optional[str] = None, charset: str = "",
                 sql_mode: Optional[str] = None, read_default_file: Optional[str] = None,
                 conv: Any = None, use_unicode: Optional[bool] = None,
                 client_flag: int = 0, cursorclass: Any = None,
                 init_command: Optional[str] = None,
                 connect_timeout: Optional[float] = None,
                 read_default_group: Optional[str] = None,
                 autocommit: Optional[bool] = False, local_infile: bool = False,
                 ssl: Any = None, auth_plugin: str = "", program_name: str = "",
                 server_public_key: Any = None, **options: Any) -> None:
        if "database" in options and db is None:
            db = options.pop("database")
        if conv is _pm_converters.decoders:
            conv = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            super().__init__(
                host=host, user=user or DEFAULT_USER, password=password or "",
                database=db, port=port, unix_socket=unix_socket, charset=charset,
                sql_mode=sql_mode, read_default_file=read_default_file, conv=conv,
                use_unicode=True if use_unicode is None else use_unicode,
                # aiomysql sets CLIENT.MULTI_STATEMENTS always
                client_flag=client_flag | CLIENT.MULTI_STATEMENTS,
                cursorclass=cursorclass, init_command=init_command,
                connect_timeout=_NO_TIMEOUT if connect_timeout is None else connect_timeout,
                read_default_group=read_default_group, autocommit=autocommit,
                local_infile=local_infile,
                # aiomysql: TLS only when ssl is given
                ssl=False if ssl is None else ssl,
                program_name=program_name or None, server_public_key=server_public_key,
                auth_plugin=auth_plugin or None, **options)
        # aiomysql reports the name it was given ("utf8"), also from an option file,
        # while the session is utf8mb4 (PyMySQL 1.1+'s meaning of utf8, which the
        # PyMySQL flavour applies)
        if read_default_file and not charset:
            charset = _pm._read_option_file(
                read_default_file, read_default_group or "client",
                {"default-character-set": charset})["default-character-set"] or ""
        self._aiomysql_charset = charset if charset.lower() == "utf8" else None

    @property
    def host_info(self) -> str:   # type: ignore[override]
        """aiomysql's text: ``"socket host:port"``, ``"Localhost via UNIX socket:
        <path>"``, ``"Not connected"`` before the connection is open."""
        core = self._conn
        if core is None or not core.open:
            return "Not connected"
        if getattr(self, "_use_socket", False):
            return "Localhost via UNIX socket: %s" % (self._socket_path,)
        return "socket %s:%d" % (self.host, self.port)

    def get_host_info(self) -> str:
        """:attr:`host_info`."""
        return self.host_info

    def ping(self, reconnect: bool = True) -> None:
        """COM_PING; with `reconnect` (aiomysql's default, True) a closed or failed
        connection is opened again (a new session) without a warning."""
        core = self._conn
        if core is None or not core.open:
            if not reconnect:
                raise _pm.Error("Already closed")
            self.connect()
            reconnect = False
        try:
            _connections.Connection.ping(self, False)
        except Exception:
            if not reconnect:
                raise
            self.connect()
            _connections.Connection.ping(self, False)

    def set_charset(self, charset: str) -> None:
        """``SET NAMES charset`` (aiomysql's name; no DeprecationWarning)."""
        self.set_character_set(charset)
        self._aiomysql_charset = None

    def character_set_name(self) -> str:
        """The connection's charset as aiomysql names it (``"utf8"`` when given so)."""
        return self._aiomysql_charset or super().character_set_name()

    def escape(self, obj: Any, mapping: Any = None) -> str:
        """The SQL literal of `obj` as str (aiomysql's ``escape``): bytes as
        ``_binary'...'`` (PyMySQL's ``escape_bytes_prefixed``), the rest as the
        PyMySQL flavour's :meth:`~mysqlc.pymysql.connections.Connection.escape`."""
        if isinstance(obj, (bytes, bytearray)) and mapping is None:
            return "_binary'%s'" % self._escape_string(
                bytes(obj).decode("ascii", "surrogateescape"))
        return super().escape(obj, mapping)

    def literal(self, obj: Any) -> str:
        """:meth:`escape` (aiomysql's alias, no DeprecationWarning)."""
        return self.escape(obj)


class _PooledEngine(_Engine):
    """The engine of a pooled connection (as mysqlc.aio's ``_PooledEngine``: the server
    reports session state changes, which the pool's reset on release reads)."""

    _track_state_change = True


class Connection(_aio.Connection):
    """aiomysql's ``Connection`` (``await aiomysql.connect(...)``): the methods and
    attributes of :class:`mysqlc.aio.Connection`, with aiomysql's behaviour where the
    two differ:

    * ``cursor(*classes)``: classes of :mod:`mysqlc.aiomysql.cursors` only (TypeError
      "Custom cursor must be subclass of Cursor"), several mixed into one as aiomysql
      does; InterfaceError when the connection is closed.
    * ``ping(reconnect=True)``: a closed or dropped connection is opened again.
    * ``escape()``/``literal()``/``escape_string()`` return str; ``get_host_info()``
      is aiomysql's text; ``echo``; ``async with conn`` closes without COM_QUIT when
      the block raised (aiomysql's ``__aexit__``).
    """

    def __init__(self, worker: Worker, engine: Any, cursorclass: type,
                 echo: bool = False) -> None:
        super().__init__(worker, engine, cursorclass)
        self._echo = bool(echo)

    @property   # type: ignore[override]
    def echo(self) -> bool:
        """``connect(echo=True)``: cursors log each statement to the ``aiomysql``
        logger."""
        return self._echo

    @property
    def host_info(self) -> str:
        """aiomysql's text (see :meth:`get_host_info`)."""
        return str(self._sync_obj.host_info)

    @property
    def charset(self) -> str:   # type: ignore[override]
        """The charset's name, as given to :func:`connect` (aiomysql keeps ``"utf8"``;
        the session uses utf8mb4 then)."""
        engine = self._sync_obj
        return str(getattr(engine, "_aiomysql_charset", None) or engine.charset)

    @property
    def server_status(self) -> int:
        """SERVER_STATUS flags of the server's last OK/EOF packet."""
        return int(self._sync_obj._conn.server_status)

    def _ensure_alive(self) -> None:
        if self.closed:
            raise InterfaceError(0, "Not connected")

    @overload   # type: ignore[override]
    def cursor(self) -> _cursors.Cursor: ...

    @overload
    def cursor(self, cls: type[_CursorT]) -> _CursorT: ...

    @overload
    def cursor(self, cls: type[_cursors.Cursor], *more: type[_cursors.Cursor]
               ) -> _cursors.Cursor: ...

    @staticmethod
    def _cursor_shell(cls: type) -> type:
        return _cursors.cursor_class(cls)

    def cursor(self, *classes: Any) -> Any:
        """A new cursor of `classes` (default: ``cursorclass``); awaitable and an
        async context manager, as aiomysql's.

        Raises
        ------
        TypeError
            A class is not a subclass of :class:`mysqlc.aiomysql.cursors.Cursor`.
        InterfaceError
            The connection is closed.
        """
        self._ensure_alive()
        cls = _cursors.cursor_class(*classes) if classes else self._cursorclass
        return cls(self, self._sync_obj.cursor(cls._sync_class), self._echo)

    async def __aexit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is not None:
            self.close()
        else:
            await self.ensure_closed()

    def __repr__(self) -> str:
        return "<aiomysql flavour Connection %s>" % (
            "closed" if self.closed else "open to %r" % (self._sync_obj.host,))


class _Connecting:
    """What :func:`connect` returns: awaitable (the connection) and an async context
    manager, which closes the connection on exit: with COM_QUIT, or at once when the
    block raised (aiomysql's ``_ConnectionContextManager``)."""

    __slots__ = ("_kwargs", "_conn")

    def __init__(self, kwargs: dict) -> None:
        self._kwargs = kwargs
        self._conn: Optional[Connection] = None

    def __await__(self) -> Generator[Any, None, Connection]:
        return _connect_flavour(self._kwargs).__await__()

    async def __aenter__(self) -> Connection:
        self._conn = await _connect_flavour(self._kwargs)
        return self._conn

    async def __aexit__(self, exc_type: Any, *exc: Any) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.__aexit__(exc_type, *exc)


async def _connect_flavour(kwargs: dict) -> Connection:
    """Open a connection of this flavour from :func:`connect`'s keywords; also what the
    pool's connects run (mysqlc.aio's ``connect(_flavour=...)``)."""
    kwargs = dict(kwargs)
    kwargs.pop("loop", None)
    echo = bool(kwargs.pop("echo", False))
    cursorclass = kwargs.pop("cursorclass", None) or _cursors.Cursor
    _cursors.cursor_class(cursorclass)
    engine_class = _PooledEngine if kwargs.pop("_pooled", False) else _Engine
    worker = Worker()
    worker.on_cancel = _aio._abandon_connect
    engine = await worker.run(engine_class, cursorclass=cursorclass._sync_class, **kwargs)
    worker.owner = engine
    worker.on_cancel = _aio._stop_cancelled
    return Connection(worker, engine, cursorclass, echo)


def connect(host: str = "localhost", user: Optional[str] = None, password: Any = "",
            db: Any = None, port: int = 3306, unix_socket: Optional[str] = None,
            charset: str = "", sql_mode: Optional[str] = None,
            read_default_file: Optional[str] = None, conv: Any = None,
            use_unicode: Optional[bool] = None, client_flag: int = 0,
            cursorclass: Any = None, init_command: Optional[str] = None,
            connect_timeout: Optional[float] = None,
            read_default_group: Optional[str] = None, autocommit: Optional[bool] = False,
            echo: bool = False, local_infile: bool = False, loop: Any = None,
            ssl: Any = None, auth_plugin: str = "", program_name: str = "",
            server_public_key: Any = None, **options: Any) -> _Connecting:
    """Open a connection with aiomysql 0.3's arguments and defaults: ``conn = await
    connect(...)`` or ``async with connect(...) as conn``.

    Differences from :func:`mysqlc.aio.connect` (which follows mysqlclient's
    defaults): ``host="localhost"`` is TCP (a unix socket only with `unix_socket`),
    `user` defaults to the login name, `db` names the database, multiple statements
    are on (CLIENT.MULTI_STATEMENTS), TLS is used only when `ssl` is given,
    ``connect_timeout=None`` waits without a limit, ``cursorclass`` is a class of
    :mod:`mysqlc.aiomysql.cursors` (default :class:`~.cursors.Cursor`); `loop` is
    accepted and the running loop used.  mysqlc's own keywords (``ssl_mode``,
    ``compress``, ``read_timeout``, ...) are accepted as well.

    Raises
    ------
    TypeError
        `cursorclass` is not a cursor class of this flavour.
    OperationalError
        Cannot connect (2003 TCP, 2002 unix socket, 1045 access denied, 1049 unknown
        database, ...), with ``args[0]`` the error number as aiomysql's.
    """
    kwargs = dict(host=host, user=user, password=password, db=db, port=port,
                  unix_socket=unix_socket, charset=charset, sql_mode=sql_mode,
                  read_default_file=read_default_file, conv=conv, use_unicode=use_unicode,
                  client_flag=client_flag, cursorclass=cursorclass,
                  init_command=init_command, connect_timeout=connect_timeout,
                  read_default_group=read_default_group, autocommit=autocommit,
                  echo=echo, local_infile=local_infile, ssl=ssl, auth_plugin=auth_plugin,
                  program_name=program_name, server_public_key=server_public_key,
                  **options)
    return _Connecting(kwargs)
