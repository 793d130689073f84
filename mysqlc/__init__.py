"""mysqlc - a MySQL/MariaDB client for Python with a C protocol core (PEP 249).

>>> import mysqlc
>>> conn = mysqlc.connect(host="127.0.0.1", user="app", password="...",
...                       database="test")              # doctest: +SKIP
>>> with conn.cursor() as cur:                           # doctest: +SKIP
...     cur.execute("SELECT %s + 1", (41,))
...     cur.fetchone()
(42,)

The DB-API surface mirrors mysqlclient (``MySQLdb``) first and PyMySQL second.
``paramstyle`` is ``"format"`` (``%s``); ``%(name)s`` placeholders with a mapping
("pyformat") are accepted as well.

The C extension ``mysqlc._core`` is imported here after :mod:`mysqlc.errors`
(which it needs at initialisation).  If it is not built, ``import mysqlc`` still
works -- so that ``mysqlc.server`` and the pure-Python modules stay usable --
and :func:`connect` raises ``ImportError`` naming the cause.
"""

from . import errors
from .errors import (
    DatabaseError, DataError, Error, IntegrityError, InterfaceError, InternalError,
    MySQLError, NotSupportedError, OperationalError, ProgrammingError, Warning,
)

try:
    from . import _core
except ImportError:   # not built; connect() reports it (see the module docstring)
    _core = None

from . import constants, converters, cursors, times
from .columnar import read_sql as read_sql   # "as": re-exported for type checkers
from .connections import Connection
from .constants import FIELD_TYPE
from .converters import escape, escape_string, string_literal
from .times import (
    Binary, Date, DateFromTicks, Time, TimeFromTicks, Timestamp, TimestampFromTicks,
)

from ._version import __version__, version_info

apilevel = "2.0"
threadsafety = 1
paramstyle = "format"

#: ``connect(...)`` creates a :class:`Connection` (PyMySQL makes the same three
#: names the class; in MySQLdb they are a factory function).
connect = Connect = Connection


def get_client_info():
    """Version string of the client library: mysqlc's own version (there is no
    libmysqlclient underneath)."""
    return __version__


def install_as_MySQLdb():
    """Make ``import MySQLdb`` import mysqlc, so that code written for mysqlclient
    (SQLAlchemy's ``mysql+mysqldb`` dialect, Django's MySQL backend) runs on it.

    Call it before anything imports ``MySQLdb``.  ``MySQLdb.version_info`` then
    reports the mysqlclient API level mysqlc implements, not mysqlc's version;
    see :mod:`mysqlc._mysqldb` for the module map and the reasons.

    Returns
    -------
    module
        The ``MySQLdb`` module now in ``sys.modules``.
    """
    from ._mysqldb import install_as_MySQLdb as install
    return install()


def install_as_pymysql():
    """Make ``import pymysql`` import :mod:`mysqlc.pymysql`, the PyMySQL flavour:
    PyMySQL's API and semantics (``escape()`` returning str, list-returning
    DictCursor, ...) over mysqlc's core.  Call it before anything imports
    ``pymysql``; see :mod:`mysqlc.pymysql`.

    Returns
    -------
    module
        The ``pymysql`` module now in ``sys.modules``.
    """
    from .pymysql import install_as_pymysql as install
    return install()


def install_as_aiomysql():
    """Make ``import aiomysql`` import :mod:`mysqlc.aiomysql`, the aiomysql flavour:
    aiomysql's API and semantics (``escape()`` returning str, ``ping()``
    reconnecting, ``cursor(A, B)``, ``DeserializationCursor``, ...) over
    :mod:`mysqlc.aio`.  Call it before anything imports ``aiomysql`` (and
    :func:`install_as_pymysql` too when the code uses ``pymysql.err``); see
    :mod:`mysqlc.aiomysql`.  Needs greenlet (the ``aio`` extra).

    Returns
    -------
    module
        The ``aiomysql`` module now in ``sys.modules``.
    """
    from .aiomysql import install_as_aiomysql as install
    return install()


class DBAPISet(frozenset):
    """A set of ``FIELD_TYPE`` codes that compares equal to each of its members
    (PEP 249 type objects, as MySQLdb's ``DBAPISet``).

    ``cursor.description[i][1] == mysqlc.STRING`` is True for a string column.
    Two sets compare equal when they have the same members.
    """

    def __eq__(self, other):
        if isinstance(other, DBAPISet):
            return frozenset.__eq__(self, other)
        return other in self

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = frozenset.__hash__


# As MySQLdb's type objects, with the codes MySQLdb leaves out added: VARCHAR,
# SET and JSON to STRING; BIT and GEOMETRY (returned as bytes) to BINARY; SHORT to
# NUMBER; NEWDATE to DATE.
STRING = DBAPISet([FIELD_TYPE.ENUM, FIELD_TYPE.SET, FIELD_TYPE.STRING,
                   FIELD_TYPE.VAR_STRING, FIELD_TYPE.VARCHAR, FIELD_TYPE.JSON])
BINARY = DBAPISet([FIELD_TYPE.BLOB, FIELD_TYPE.LONG_BLOB, FIELD_TYPE.MEDIUM_BLOB,
                   FIELD_TYPE.TINY_BLOB, FIELD_TYPE.BIT, FIELD_TYPE.GEOMETRY])
NUMBER = DBAPISet([FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.TINY,
                   FIELD_TYPE.SHORT, FIELD_TYPE.LONG, FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE,
                   FIELD_TYPE.LONGLONG, FIELD_TYPE.INT24, FIELD_TYPE.YEAR])
DATE = DBAPISet([FIELD_TYPE.DATE, FIELD_TYPE.NEWDATE])
TIME = DBAPISet([FIELD_TYPE.TIME])
TIMESTAMP = DBAPISet([FIELD_TYPE.TIMESTAMP, FIELD_TYPE.DATETIME])
DATETIME = TIMESTAMP          # as MySQLdb: DATE columns are not in DATETIME
ROWID = DBAPISet()            # MySQL has no row-id type

__all__ = [
    "BINARY", "Binary", "Connect", "Connection", "DATE", "DATETIME", "DBAPISet",
    "DataError", "DatabaseError", "Date", "DateFromTicks", "Error", "FIELD_TYPE",
    "IntegrityError", "InterfaceError", "InternalError", "MySQLError", "NUMBER",
    "NotSupportedError", "OperationalError", "ProgrammingError", "ROWID", "STRING",
    "TIME", "TIMESTAMP", "Time", "TimeFromTicks", "Timestamp", "TimestampFromTicks",
    "Warning", "apilevel", "connect", "connections", "constants", "converters",
    "cursors", "errors", "escape", "escape_string", "get_client_info",
    "install_as_MySQLdb", "install_as_aiomysql", "install_as_pymysql", "paramstyle",
    "string_literal", "threadsafety", "times", "version_info", "__version__",
]
