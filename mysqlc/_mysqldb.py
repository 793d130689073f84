"""mysqlc under the name ``MySQLdb`` (mysqlclient): :func:`install_as_MySQLdb`.

After ``mysqlc.install_as_MySQLdb()``, code written for mysqlclient imports
mysqlc instead -- SQLAlchemy's ``mysql+mysqldb`` dialect, Django's stock
``django.db.backends.mysql`` backend, or an application::

    import mysqlc
    mysqlc.install_as_MySQLdb()      # before anything imports MySQLdb

    import MySQLdb                    # mysqlc, under mysqlclient's names
    from MySQLdb.constants import CLIENT, FIELD_TYPE
    from MySQLdb.converters import conversions

The modules registered in ``sys.modules`` are:

==========================  ==============================================
``MySQLdb``                 a module of its own (see below) holding mysqlc's
                            DB-API names
``MySQLdb.connections``     :mod:`mysqlc.connections`
``MySQLdb.cursors``         :mod:`mysqlc.cursors` (``Cursor``, ``DictCursor``,
                            ``SSCursor``, ``SSDictCursor``)
``MySQLdb.converters``      :mod:`mysqlc.converters` (``conversions``, ...)
``MySQLdb.times``           :mod:`mysqlc.times`
``MySQLdb._exceptions``     :mod:`mysqlc.errors`
``MySQLdb.constants``       :mod:`mysqlc.constants` and its submodules
                            ``CLIENT``, ``CR``, ``ER``, ``FIELD_TYPE``, ``FLAG``
                            (also ``COMMAND``, ``SERVER_STATUS``)
``MySQLdb.release``         ``version_info`` and ``__version__`` (below)
``MySQLdb._mysql``          :mod:`mysqlc._lowlevel`: mysqlclient's C module
                            (``connect``, ``connection``, ``result``,
                            ``escape_string``, ``string_literal``, ...)
==========================  ==============================================

The submodules are the mysqlc modules themselves, not copies: a class is the
same object under both names (``MySQLdb.cursors.SSCursor is
mysqlc.cursors.SSCursor``), so ``isinstance`` checks and ``except`` clauses
agree whichever name the code used.

``MySQLdb`` itself is a separate module object because two of its attributes
must differ from mysqlc's: its ``__name__`` is ``"MySQLdb"`` (SQLAlchemy
imports ``dbapi.__name__ + ".constants.CLIENT"`` to set ``CLIENT.FOUND_ROWS``)
and its ``version_info`` / ``__version__`` name a mysqlclient release:

Version
-------
``MySQLdb.version_info`` is :data:`MYSQLCLIENT_VERSION_INFO`, ``(2, 2, 0,
"final", 0)``: the mysqlclient release whose API mysqlc implements, not
mysqlc's own version (that is ``MySQLdb.mysqlc_version`` and
``mysqlc.__version__``).  Code checks this number to learn which mysqlclient
*API* it is talking to -- Django refuses anything below 1.4.3 -- so it has to be
on mysqlclient's scale.  2.2 is the release that completed the surface mysqlc
offers (``Cursor.mogrify``; ``with connection`` closing the connection, from
2.0; ``SSCursor``; ``conv``/``encoders``); mysqlclient 2.3's additions
(multi-statement ``executemany`` for UPDATE/DELETE, RETURNING batches) are not
claimed.

Differences from mysqlclient that remain (see also :mod:`mysqlc.connections`):
``Connection.stat()`` and ``change_user()`` are not implemented; buffered results
left unread are drained before the next statement instead of raising
"Commands out of sync" (unbuffered ones do raise it, as in mysqlclient).
"""

import sys
import types

__all__ = ["install_as_MySQLdb", "MYSQLCLIENT_VERSION_INFO", "MYSQLCLIENT_VERSION"]

#: mysqlclient's ``version_info`` that ``MySQLdb.version_info`` reports (see the
#: module docstring for why it is a mysqlclient number).
MYSQLCLIENT_VERSION_INFO = (2, 2, 0, "final", 0)
#: ``MySQLdb.__version__``: the same release as text.
MYSQLCLIENT_VERSION = "2.2.0"

# MySQLdb's public names that mysqlc provides under the same name.
_TOP_LEVEL = (
    "BINARY", "Binary", "Connect", "Connection", "DATE", "DATETIME", "DBAPISet",
    "DataError", "DatabaseError", "Date", "DateFromTicks", "Error", "FIELD_TYPE",
    "IntegrityError", "InterfaceError", "InternalError", "MySQLError", "NUMBER",
    "NotSupportedError", "OperationalError", "ProgrammingError", "ROWID", "STRING",
    "TIME", "TIMESTAMP", "Time", "TimeFromTicks", "Timestamp", "TimestampFromTicks",
    "Warning", "apilevel", "connect", "get_client_info", "paramstyle",
    "string_literal", "threadsafety", "escape", "escape_string",
)

_EXCEPTIONS = (
    "MySQLError", "Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
    "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
    "NotSupportedError",
)


def _debug(debug_string):
    """MySQLdb's ``debug()`` enables libmysqlclient's DBUG trace; mysqlc has no
    such library underneath, so this does nothing."""


def _new_module(name, doc, attrs):
    module = types.ModuleType(name, doc)
    module.__dict__.update(attrs)
    return module


def _build():
    """Create the ``MySQLdb``, ``MySQLdb.release`` and ``MySQLdb._mysql`` modules;
    return ``{module name: module}`` for everything to register."""
    import mysqlc
    from mysqlc import connections, constants, converters, cursors, errors, times
    from mysqlc.constants import CLIENT, COMMAND, CR, ER, FIELD_TYPE, FLAG, SERVER_STATUS

    release = _new_module("MySQLdb.release", "mysqlclient release implemented by mysqlc.", {
        "version_info": MYSQLCLIENT_VERSION_INFO, "__version__": MYSQLCLIENT_VERSION,
        "__author__": "mysqlc"})

    from . import _lowlevel as _mysql      # connect(), connection, result, helpers

    attrs = {name: getattr(mysqlc, name) for name in _TOP_LEVEL}
    attrs.update({
        "__path__": [],          # a package: "MySQLdb.x" imports resolve via sys.modules
        "__all__": sorted(_TOP_LEVEL + (
            "connections", "constants", "converters", "cursors", "debug", "times",
            "version_info")),
        "__version__": MYSQLCLIENT_VERSION,
        "version_info": MYSQLCLIENT_VERSION_INFO,
        "mysqlc_version": mysqlc.__version__,
        "debug": _debug,
        "connections": connections, "constants": constants, "converters": converters,
        "cursors": cursors, "times": times, "release": release, "_mysql": _mysql,
        "_exceptions": errors,
    })
    top = _new_module("MySQLdb", __doc__, attrs)

    modules = {
        "MySQLdb": top,
        "MySQLdb.release": release,
        "MySQLdb._mysql": _mysql,
        "MySQLdb._exceptions": errors,
        "MySQLdb.connections": connections,
        "MySQLdb.cursors": cursors,
        "MySQLdb.converters": converters,
        "MySQLdb.times": times,
        "MySQLdb.constants": constants,
    }
    for sub in (CLIENT, COMMAND, CR, ER, FIELD_TYPE, FLAG, SERVER_STATUS):
        modules["MySQLdb.constants." + sub.__name__.rsplit(".", 1)[1]] = sub
    return modules


def install_as_MySQLdb():
    """Make ``import MySQLdb`` (and its submodules) import mysqlc.

    Registers the modules listed in the module docstring in ``sys.modules``,
    replacing a mysqlclient that was imported before (its ``MySQLdb.*``
    entries are removed).  Call it before the code that uses MySQLdb imports
    it: a module that already did ``import MySQLdb`` keeps the object it got.
    Calling it again does nothing.

    Returns
    -------
    module
        The ``MySQLdb`` module now in ``sys.modules``.
    """
    current = sys.modules.get("MySQLdb")
    if current is not None and getattr(current, "mysqlc_version", None) is not None \
            and sys.modules.get("MySQLdb.cursors") is sys.modules.get("mysqlc.cursors"):
        return current
    modules = _build()
    for name in [n for n in sys.modules if n == "MySQLdb" or n.startswith("MySQLdb.")]:
        del sys.modules[name]
    sys.modules.update(modules)
    return modules["MySQLdb"]
