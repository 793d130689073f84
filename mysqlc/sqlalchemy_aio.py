"""SQLAlchemy asyncio dialects for mysqlc: ``mysql+mysqlc`` / ``mariadb+mysqlc``
under :func:`sqlalchemy.ext.asyncio.create_async_engine`, also named
``mysql+mysqlc_async`` / ``mariadb+mysqlc_async``::

    from sqlalchemy.ext.asyncio import create_async_engine
    engine = create_async_engine("mariadb+mysqlc://user:password@127.0.0.1:3306/app")

``create_async_engine`` asks the URL's dialect for its asyncio variant
(``Dialect.get_async_dialect_cls``, as SQLAlchemy's psycopg and oracledb
dialects do), so one URL serves ``create_engine`` and ``create_async_engine``;
the ``_async`` names (``sqlalchemy.dialects`` entry points in pyproject.toml)
name the asyncio dialect directly.

The driver is :mod:`mysqlc.aio`, wrapped in SQLAlchemy's generic asyncio
adapters (``sqlalchemy.connectors.asyncio``: the DBAPI calls SQLAlchemy makes
from inside its greenlet are awaited on the event loop), as SQLAlchemy's
asyncmy and aiomysql dialects do.  Everything else is the sync dialect's
(:mod:`mysqlc.sqlalchemy_dialect`), inherited rather than repeated: URL
options, ``prepared=True``, the compiler, disconnect detection,
isolation levels, ``executemany``.  What the asyncio dialect adds:

* ``is_async = True``; the engine's pool is then
  :class:`sqlalchemy.pool.AsyncAdaptedQueuePool`;
* server-side cursors (``stream_results`` / ``yield_per``, ``AsyncSession.stream``)
  through :class:`mysqlc.aio.cursors.SSCursor`: each fetch reads rows from the
  socket as they are consumed; buffered statements are executed and fetched in
  one await (SQLAlchemy's adapter);
* ``ping`` (``pool_pre_ping``) is ``await conn.ping(reconnect=False)``: a lost
  connection is reported, and the pool replaces it;
* ``terminate`` (connections the pool invalidates): ``await conn.ensure_closed()``
  (COM_QUIT), or ``conn.close()`` -- closing the socket at once, without the
  event loop -- when that fails, is cancelled, or runs from garbage collection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import sqlalchemy
from sqlalchemy.dialects.mysql.mariadb import MariaDBDialect

try:   # SQLAlchemy 2.1's generic adapters (2.0's have another interface)
    from sqlalchemy.connectors.asyncio import (
        AsyncAdapt_dbapi_connection, AsyncAdapt_dbapi_cursor, AsyncAdapt_dbapi_module,
        AsyncAdapt_dbapi_ss_cursor, AsyncAdapt_terminate,
    )
    from sqlalchemy.util.concurrency import await_
except ImportError as exc:   # pragma: no cover - SQLAlchemy 2.0
    raise ImportError("mysqlc's asyncio dialect needs SQLAlchemy 2.1 or later "
                      "(installed: %s)" % sqlalchemy.__version__) from exc

from mysqlc.sqlalchemy_dialect import MySQLDialect_mysqlc

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["MySQLDialect_mysqlc_async", "MariaDBDialect_mysqlc_async",
           "dialect", "mariadb_dialect"]

# PEP 249 module attributes SQLAlchemy reads from the DBAPI: mysqlc's own objects
# (mysqlc.aio raises mysqlc's exception classes).
_MODULE_NAMES = (
    "apilevel", "threadsafety", "paramstyle", "version_info", "__version__",
    "Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
    "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
    "NotSupportedError", "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID",
    "TIMESTAMP", "Binary", "Date", "Time", "Timestamp",
)


class AsyncAdapt_mysqlc_cursor(AsyncAdapt_dbapi_cursor):
    """A buffered :mod:`mysqlc.aio` cursor (the connection's ``cursorclass``),
    ``prepared=True`` for the dialect's prepared mode.  SQLAlchemy's adapter
    awaits ``execute`` and ``fetchall`` together and serves the rows from memory."""

    __slots__ = ("_prepared",)

    def __init__(self, adapt_connection: AsyncAdapt_mysqlc_connection,
                 prepared: bool = False) -> None:
        self._prepared = prepared
        super().__init__(adapt_connection)

    def _driver_cursor_class(self) -> Optional[type]:
        return None   # the connection's cursorclass

    def _make_new_cursor(self, connection: Any) -> Any:
        return connection.cursor(self._driver_cursor_class(), prepared=self._prepared)


class AsyncAdapt_mysqlc_ss_cursor(AsyncAdapt_dbapi_ss_cursor, AsyncAdapt_mysqlc_cursor):
    """An unbuffered :class:`mysqlc.aio.cursors.SSCursor`: every fetch is awaited
    and reads the rows it returns from the socket."""

    __slots__ = ()

    def _driver_cursor_class(self) -> type:
        return self._adapt_connection.dbapi.driver.cursors.SSCursor


class AsyncAdapt_mysqlc_connection(AsyncAdapt_terminate, AsyncAdapt_dbapi_connection):
    """The DBAPI connection SQLAlchemy sees: a :class:`mysqlc.aio.Connection`
    whose awaitables are awaited from SQLAlchemy's greenlet."""

    __slots__ = ()

    _cursor_cls = AsyncAdapt_mysqlc_cursor
    _ss_cursor_cls = AsyncAdapt_mysqlc_ss_cursor

    def cursor(self, server_side: Any = False, prepared: bool = False
               ) -> AsyncAdapt_mysqlc_cursor:
        # The execution context (shared with the sync dialect) calls
        # cursor(dialect._sscursor, prepared=...) for stream_results.
        cls = self._ss_cursor_cls if server_side else self._cursor_cls
        return cls(self, prepared)

    def ping(self, reconnect: bool = False) -> None:
        if reconnect:
            raise ValueError("the asyncio dialect pings without reconnecting: the pool "
                             "replaces a connection whose ping fails")
        await_(self._ping())

    async def _ping(self) -> None:
        async with self._execute_mutex:
            await self._connection.ping(reconnect=False)

    def character_set_name(self) -> str:
        return self._connection.character_set_name()

    def get_autocommit(self) -> bool:
        return self._connection.get_autocommit()

    def autocommit(self, value: bool) -> None:
        await_(self._connection.autocommit(value))

    def close(self) -> None:
        await_(self._connection.ensure_closed())

    async def _terminate_graceful_close(self) -> None:
        await self._connection.ensure_closed()

    def _terminate_force_close(self) -> None:
        self._connection.close()   # a plain call: closes the socket, no event loop


class AsyncAdapt_mysqlc_dbapi(AsyncAdapt_dbapi_module):
    """The DBAPI module SQLAlchemy sees: :mod:`mysqlc`'s PEP 249 names, and a
    ``connect()`` that awaits :func:`mysqlc.aio.connect`."""

    def __init__(self, aio: ModuleType, mysqlc: ModuleType) -> None:
        super().__init__(aio, dbapi_module=mysqlc)
        for name in _MODULE_NAMES:
            setattr(self, name, getattr(mysqlc, name))

    def connect(self, *args: Any, **kwargs: Any) -> AsyncAdapt_mysqlc_connection:
        creator = kwargs.pop("async_creator_fn", self.driver.connect)
        return await_(AsyncAdapt_mysqlc_connection.create(self, creator(*args, **kwargs)))


class MySQLDialect_mysqlc_async(MySQLDialect_mysqlc):
    """``mysql+mysqlc`` under ``create_async_engine`` (also ``mysql+mysqlc_async``)."""

    supports_statement_cache = True
    is_async = True
    has_terminate = True
    supports_server_side_cursors = True
    _sscursor = AsyncAdapt_mysqlc_ss_cursor

    @classmethod
    def import_dbapi(cls) -> AsyncAdapt_mysqlc_dbapi:
        import mysqlc
        import mysqlc.aio
        return AsyncAdapt_mysqlc_dbapi(mysqlc.aio, mysqlc)

    def do_terminate(self, dbapi_connection: AsyncAdapt_mysqlc_connection) -> None:
        dbapi_connection.terminate()

    def get_driver_connection(self, connection: AsyncAdapt_mysqlc_connection) -> Any:
        return connection._connection   # the mysqlc.aio.Connection


class MariaDBDialect_mysqlc_async(MariaDBDialect, MySQLDialect_mysqlc_async):
    """``mariadb+mysqlc`` under ``create_async_engine`` (also ``mariadb+mysqlc_async``)."""

    supports_statement_cache = True


dialect = MySQLDialect_mysqlc_async
mariadb_dialect = MariaDBDialect_mysqlc_async
