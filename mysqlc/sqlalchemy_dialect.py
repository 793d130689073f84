"""SQLAlchemy dialects for mysqlc: ``mysql+mysqlc://`` and ``mariadb+mysqlc://``.

Registered through the ``sqlalchemy.dialects`` entry points of the mysqlc
distribution (``pyproject.toml``), so installing mysqlc is enough::

    from sqlalchemy import create_engine
    engine = create_engine("mariadb+mysqlc://user:password@127.0.0.1:3306/app")

The URL is read as for ``mysql+mysqldb``: user, password, host, port and
database, plus query options that become :func:`mysqlc.connect` arguments
(``unix_socket``, ``charset``, ``collation``, ``connect_timeout``,
``read_timeout``, ``write_timeout``, ``client_flag``, ``init_command``,
``sql_mode``, ``binary_prefix``, ``multi_statements``, ...).
``connect_args={...}`` passes anything else (``conv``, ``cursorclass``).

The dialects build on SQLAlchemy's ``mysql+mysqldb`` dialect (mysqlc follows
mysqlclient's API) and add:

* server-side cursors for ``execution_options(stream_results=True)`` and
  ``yield_per``: :class:`mysqlc.cursors.SSCursor`, which reads rows from the
  socket as the result is consumed.  As with mysqlclient, the connection can
  run nothing else until the streamed result is exhausted or closed
  (``ProgrammingError(2014)``, "Commands out of sync");
* disconnect detection: mysqlc reports closed and lost connections with
  mysqlclient's numbers (``OperationalError`` 2006 / 2013), which the MySQL
  dialect's list (2006, 2013, 2014, 2045, 2055, 1927, 4031) recognises; the
  ``InterfaceError(0, "connection is closed")`` of earlier mysqlc releases is
  recognised too;
* no ``SET NAMES`` round trip on every new connection: mysqlc sends the
  character set (and collation) in the handshake itself;
* ``executemany`` in a bounded number of round trips: on MariaDB every INSERT,
  UPDATE and DELETE (so the ORM's flush of many modified objects) as
  COM_STMT_BULK_EXECUTE commands, elsewhere ``INSERT ... VALUES`` as multi-row
  statements (:meth:`mysqlc.cursors.BaseCursor.executemany`, docs/batching.md;
  ``supports_sane_multi_rowcount``);
* isolation levels ``READ UNCOMMITTED``, ``READ COMMITTED``, ``REPEATABLE READ``,
  ``SERIALIZABLE`` and ``AUTOCOMMIT`` (``Connection.autocommit()``).

``CLIENT.FOUND_ROWS`` is always requested, so ``rowcount`` of UPDATE counts the
matched rows (what the ORM's optimistic checks need), as with mysqlclient.

``create_engine(url, prepared=True)`` runs every statement as a server-side
prepared statement (binary protocol, ``qmark`` parameters).

Under :func:`sqlalchemy.ext.asyncio.create_async_engine` the same URLs pick the
asyncio dialects of :mod:`mysqlc.sqlalchemy_aio` (on :mod:`mysqlc.aio`), also
named ``mysql+mysqlc_async`` / ``mariadb+mysqlc_async``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import exc, util
from sqlalchemy.dialects.mysql.mariadb import MariaDBDialect
from sqlalchemy.dialects.mysql.mysqldb import (
    MySQLCompiler_mysqldb, MySQLDialect_mysqldb, MySQLExecutionContext_mysqldb,
)

if TYPE_CHECKING:
    from types import ModuleType

    from sqlalchemy.engine.interfaces import ConnectArgsType
    from sqlalchemy.engine.url import URL

__all__ = ["MySQLDialect_mysqlc", "MariaDBDialect_mysqlc", "dialect", "mariadb_dialect"]


class MySQLExecutionContext_mysqlc(MySQLExecutionContext_mysqldb):
    def create_default_cursor(self):
        if self.dialect.prepared:
            return self._dbapi_connection.cursor(prepared=True)
        return self._dbapi_connection.cursor()

    def create_server_side_cursor(self):
        return self._dbapi_connection.cursor(self.dialect._sscursor,
                                             prepared=self.dialect.prepared)


class MySQLCompiler_mysqlc(MySQLCompiler_mysqldb):
    # The server takes no "?" in a window frame (ROWS BETWEEN ? PRECEDING ...: MariaDB
    # cannot bind a frame offset), so the prepared dialect renders the offsets inline.
    # SQLAlchemy 2.0 formats the frame in _format_frame_clause, where the bounds are
    # part of the statement's cache key (literal_binds is right); 2.1 in
    # visit_frame_clause with the bounds as bound parameters outside the cache key:
    # literal_execute renders them into each execution's SQL (as the SQL Server
    # dialect does), literal_binds would put the first values into the cached string.
    def _format_frame_clause(self, range_, **kw):
        if self.dialect.prepared:
            kw["literal_binds"] = True
        return super()._format_frame_clause(range_, **kw)

    def visit_frame_clause(self, frameclause, **kw):
        if self.dialect.prepared:
            kw["literal_execute"] = True
        return super().visit_frame_clause(frameclause, **kw)


class MySQLDialect_mysqlc(MySQLDialect_mysqldb):
    """``mysql+mysqlc``: SQLAlchemy's MySQL dialect on the mysqlc driver."""

    driver = "mysqlc"
    supports_statement_cache = True
    supports_server_side_cursors = True
    execution_ctx_cls = MySQLExecutionContext_mysqlc
    statement_compiler = MySQLCompiler_mysqlc

    def __init__(self, prepared: bool = False, **kwargs: Any) -> None:
        if prepared and kwargs.get("paramstyle") is None:
            # Prepared statements take "?" markers.  With the "format" style
            # SQLAlchemy would also double every "%" in the SQL text, which only
            # client-side interpolation undoes.
            kwargs["paramstyle"] = "qmark"
        super().__init__(**kwargs)
        self.prepared = bool(prepared)

    @classmethod
    def import_dbapi(cls) -> ModuleType:
        import mysqlc
        return mysqlc

    @classmethod
    def get_async_dialect_cls(cls, url: URL) -> type:
        # create_async_engine() asks the URL's dialect for its asyncio variant
        # (SQLAlchemy's psycopg dialect does the same): one URL for both engines.
        if cls.is_async:
            return cls
        from mysqlc import sqlalchemy_aio
        if cls.is_mariadb:
            return sqlalchemy_aio.MariaDBDialect_mysqlc_async
        return sqlalchemy_aio.MySQLDialect_mysqlc_async

    def _found_rows_client_flag(self) -> int:
        # the base class derives the module from dbapi.__name__, which the
        # asyncio dialect's adapted module does not have
        from mysqlc.constants import CLIENT
        return CLIENT.FOUND_ROWS

    @classmethod
    def load_provisioning(cls):
        # SQLAlchemy's test harness looks for "<dialect package>.provision"
        # (here mysqlc.provision); the MySQL dialect's hooks (temporary tables,
        # test schemas, upserts) are the ones that apply.
        __import__("sqlalchemy.dialects.mysql.provision")

    @util.memoized_property
    def _sscursor(self):
        from mysqlc.cursors import SSCursor
        return SSCursor

    def on_connect(self):
        # Skip MySQLDialect_mysqldb's per-connection "SET NAMES <charset>": mysqlc
        # already negotiated the character set in the handshake (and runs SET NAMES
        # itself only when a collation needs it).
        return super(MySQLDialect_mysqldb, self).on_connect()

    def create_connect_args(self, url: URL,
                            _translate_args: Optional[dict[str, Any]] = None
                            ) -> ConnectArgsType:
        args, opts = super().create_connect_args(url, _translate_args)
        if "prepared" in opts:
            if util.asbool(opts.pop("prepared")) != self.prepared:
                raise exc.ArgumentError(
                    "prepared statements are a dialect option: pass "
                    "create_engine(url, prepared=True) instead of ?prepared= in the URL")
        for key in ("binary_prefix", "multi_statements", "autocommit"):
            util.coerce_kw_type(opts, key, bool)
        for key in ("connect_timeout", "read_timeout", "write_timeout"):
            if key in opts:   # mysqlc takes fractions of a second
                opts[key] = float(opts[key])
        return args, opts

    def is_disconnect(self, e: Exception, connection: Any, cursor: Any) -> bool:

        if super().is_disconnect(e, connection, cursor):
            return True
        # earlier mysqlc builds reported use of a closed connection as
        # InterfaceError(0, "connection is closed"); it now raises mysqlclient's
        # OperationalError(2006, ...), which the base class recognises.
        dbapi = self.loaded_dbapi
        return (isinstance(e, dbapi.InterfaceError) and len(e.args) >= 2
                and e.args[0] == 0 and "closed" in str(e.args[1]))


class MariaDBDialect_mysqlc(MariaDBDialect, MySQLDialect_mysqlc):
    """``mariadb+mysqlc``: SQLAlchemy's MariaDB dialect on the mysqlc driver."""

    supports_statement_cache = True


dialect = MySQLDialect_mysqlc
mariadb_dialect = MariaDBDialect_mysqlc
