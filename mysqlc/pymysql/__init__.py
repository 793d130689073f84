"""The PyMySQL flavour of mysqlc: PyMySQL's API and semantics over mysqlc's core.

``mysqlc`` itself follows mysqlclient where the two drivers disagree.  Code
written for PyMySQL imports this package instead -- directly, or as ``pymysql``
after :func:`install_as_pymysql`::

    import mysqlc
    mysqlc.install_as_pymysql()      # before anything imports pymysql

    import pymysql                    # mysqlc.pymysql, registered as "pymysql"
    from pymysql.cursors import DictCursor
    conn = pymysql.connect(host=..., user=..., password=..., cursorclass=DictCursor)

What PyMySQL code sees (the rest is mysqlc's, see ``docs/compat``):

* ``Connection.escape()``, ``literal()`` and ``escape_string()`` return ``str``;
  ``escape(obj, mapping)`` uses `mapping` for the items and raises TypeError for
  dicts (:mod:`.connections`).
* Cursors (:mod:`.cursors`): DictCursor ``fetchall``/``fetchmany`` return lists;
  ``iter(cursor) is cursor``; SSCursor's ``fetchall_unbuffered()`` and its
  ``rowcount`` of ``2**64 - 1``; ``fetchall()`` after a failed ``nextset()`` is
  empty; a UserWarning when a new command discards an unbuffered result.
* ``Connection(defer_connect=True)`` + ``connect()``, ``open``, ``fileno()``,
  ``Connection.encoding`` with PyMySQL's codec names, ``close()`` raising
  ``Error("Already closed")`` the second time, PyMySQL's ``connect()``
  arguments and defaults (multi statements off, connect_timeout 10, TLS when the
  server offers it).
* Modules ``err``, ``converters`` (``convert_datetime``, ``convert_time``,
  ``convert_timedelta``, ``escape_string``, ...), ``times``, ``constants``,
  ``cursors``, ``connections``; ``NULL``, ``thread_safe()``,
  ``paramstyle = "pyformat"``.
"""

import sys
import types

from ..constants import FIELD_TYPE
from . import charset, connections, constants, converters, cursors, err, optionfile, times
from .err import (
    DatabaseError, DataError, Error, IntegrityError, InterfaceError, InternalError,
    MySQLError, NotSupportedError, OperationalError, ProgrammingError, Warning,
)
from .times import (
    Date, DateFromTicks, Time, TimeFromTicks, Timestamp, TimestampFromTicks,
)

#: the PyMySQL release whose API this flavour follows
VERSION = (1, 2, 4, "final")
VERSION_STRING = "1.2.4"
#: MySQLdb-style version, as PyMySQL 1.2.4 reports it (for MySQLdb compatibility)
version_info = (2, 2, 8, "final", 1)
__version__ = "2.2.8"

threadsafety = 1
apilevel = "2.0"
paramstyle = "pyformat"

#: ``connect(...)`` creates a :class:`~mysqlc.pymysql.connections.Connection`
Connection = Connect = connect = connections.Connection

NULL = "NULL"


def get_client_info():
    """The MySQLdb-style version string (:data:`__version__`), as PyMySQL."""
    return __version__


def thread_safe():
    """True: the module may be shared between threads (connections may not)."""
    return True


def Binary(x):
    """`x` as ``bytes``."""
    return bytes(x)


def install_as_MySQLdb():
    """Make ``import MySQLdb`` give mysqlc's MySQLdb (mysqlclient) surface,
    :func:`mysqlc.install_as_MySQLdb` (PyMySQL's own registers pymysql)."""
    from .._mysqldb import install_as_MySQLdb as install
    return install()


class DBAPISet(frozenset):
    """A set of FIELD_TYPE codes equal to each of its members (PEP 249 type objects)."""

    def __eq__(self, other):
        if isinstance(other, frozenset):
            return frozenset.__eq__(self, other)
        return other in self

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = frozenset.__hash__


# PyMySQL's type objects (narrower than mysqlc's: e.g. VARCHAR and JSON are not STRING)
STRING = DBAPISet([FIELD_TYPE.ENUM, FIELD_TYPE.STRING, FIELD_TYPE.VAR_STRING])
BINARY = DBAPISet([FIELD_TYPE.BLOB, FIELD_TYPE.LONG_BLOB, FIELD_TYPE.MEDIUM_BLOB,
                   FIELD_TYPE.TINY_BLOB])
NUMBER = DBAPISet([FIELD_TYPE.DECIMAL, FIELD_TYPE.DOUBLE, FIELD_TYPE.FLOAT,
                   FIELD_TYPE.INT24, FIELD_TYPE.LONG, FIELD_TYPE.LONGLONG,
                   FIELD_TYPE.TINY, FIELD_TYPE.YEAR])
DATE = DBAPISet([FIELD_TYPE.DATE, FIELD_TYPE.NEWDATE])
TIME = DBAPISet([FIELD_TYPE.TIME])
TIMESTAMP = DBAPISet([FIELD_TYPE.TIMESTAMP, FIELD_TYPE.DATETIME])
DATETIME = TIMESTAMP
ROWID = DBAPISet()

__all__ = [
    "BINARY", "Binary", "Connect", "Connection", "DATE", "Date", "Time", "Timestamp",
    "DateFromTicks", "TimeFromTicks", "TimestampFromTicks", "DataError",
    "DatabaseError", "Error", "FIELD_TYPE", "IntegrityError", "InterfaceError",
    "InternalError", "MySQLError", "NULL", "NUMBER", "NotSupportedError", "DBAPISet",
    "OperationalError", "ProgrammingError", "ROWID", "STRING", "TIME", "TIMESTAMP",
    "Warning", "apilevel", "connect", "connections", "constants", "converters",
    "cursors", "get_client_info", "paramstyle", "threadsafety", "version_info",
    "install_as_MySQLdb", "__version__", "thread_safe", "err", "times",
]


def _modules():
    """``{name: module}`` to register for ``import pymysql``: a top-level module
    named ``pymysql`` holding this package's names, and the submodules (the
    flavour's modules themselves, so classes are the same objects)."""
    this = sys.modules[__name__]
    top = types.ModuleType("pymysql", __doc__)
    top.__dict__.update({k: v for k, v in vars(this).items()
                         if not k.startswith("__") or k in ("__version__", "__all__")})
    top.__path__ = []            # a package: "pymysql.x" resolves via sys.modules
    top.mysqlc_flavour = True
    modules = {"pymysql": top, "pymysql.err": err, "pymysql.converters": converters,
               "pymysql.times": times, "pymysql.constants": constants,
               "pymysql.cursors": cursors, "pymysql.connections": connections,
               "pymysql.charset": charset, "pymysql.optionfile": optionfile}
    for name in constants.__all__:
        modules["pymysql.constants." + name] = getattr(constants, name)
    return modules


def install_as_pymysql():
    """Make ``import pymysql`` (and ``pymysql.cursors``, ``pymysql.err``, ...)
    import this flavour.

    Replaces the ``pymysql`` entries of ``sys.modules`` (a real PyMySQL imported
    before is dropped from it; modules that already imported it keep it).
    Calling it again does nothing.

    Returns
    -------
    module
        The ``pymysql`` module now in ``sys.modules``.
    """
    current = sys.modules.get("pymysql")
    if getattr(current, "mysqlc_flavour", False) \
            and sys.modules.get("pymysql.cursors") is cursors:
        return current
    modules = _modules()
    for name in [n for n in sys.modules if n == "pymysql" or n.startswith("pymysql.")]:
        del sys.modules[name]
    sys.modules.update(modules)
    return modules["pymysql"]
