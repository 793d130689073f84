"""The aiomysql flavour of mysqlc: aiomysql's API and semantics over mysqlc.aio.

:mod:`mysqlc.aio` follows mysqlclient's semantics where the drivers differ (bytes from
``escape()``, tuples from ``fetchall()``, no reconnecting ``ping()``, ...).  Code written
for aiomysql imports this package instead -- directly, or as ``aiomysql`` after
:func:`install_as_aiomysql`::

    import mysqlc
    mysqlc.install_as_aiomysql()      # before anything imports aiomysql

    import aiomysql                    # mysqlc.aiomysql, registered as "aiomysql"
    conn = await aiomysql.connect(host=..., user=..., password=..., db=...)
    async with conn.cursor(aiomysql.DictCursor) as cur:
        await cur.execute("SELECT 1 AS one")

The engine is mysqlc.aio's (a greenlet per connection over an asyncio stream, the C
core speaking the protocol) driving the PyMySQL flavour's sync connection and cursors
(:mod:`mysqlc.pymysql`), since aiomysql is PyMySQL's protocol code made asynchronous.
What aiomysql code sees (the rest is mysqlc.aio's, see docs/compat.md, "The aiomysql
flavour"):

* :func:`connect` with aiomysql 0.3's arguments and defaults (``db``, TCP for
  ``host="localhost"``, the login name as `user`, multiple statements on, TLS only
  with `ssl`, no connect timeout, ``echo``); :func:`create_pool` passing its ``echo``
  on.
* :class:`~.connection.Connection`: ``cursor(A, B)`` mixing cursor classes,
  ``ping(reconnect=True)`` reopening a dropped connection, ``escape()`` /
  ``escape_string()`` / ``literal()`` returning str, aiomysql's ``get_host_info()``
  text, ``async with conn`` closing without COM_QUIT after an exception.
* The cursors of :mod:`.cursors` (:class:`Cursor`, :class:`DictCursor`,
  :class:`SSCursor`, :class:`SSDictCursor`, ``DeserializationCursor``) with aiomysql's
  result types, ``closed``, ``echo``, server warnings emitted as ``Warning``.
* The exceptions are mysqlc's (the PyMySQL flavour's ``pymysql.err``), so ``except
  pymysql.err.OperationalError`` works with either module installed as ``pymysql``.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..errors import (DatabaseError, DataError, Error, IntegrityError, InterfaceError,
                      InternalError, MySQLError, NotSupportedError, OperationalError,
                      ProgrammingError, Warning)
from ..pymysql.converters import escape_sequence, escape_string
from . import connection, cursors, log, pool
from .connection import Connection, connect
from .cursors import Cursor, DictCursor, SSCursor, SSDictCursor
from .pool import Pool, create_pool

#: the aiomysql release whose API this flavour follows
version = __version__ = "0.3.2"


def escape_dict(val: Any, charset: Any = None, mapping: Any = None) -> Any:
    """PyMySQL's ``escape_dict`` (which aiomysql re-exports): a dict cannot be a
    parameter; raises TypeError."""
    raise TypeError("dict can not be used as parameter")


__all__ = [
    "Error", "DataError", "DatabaseError", "IntegrityError", "InterfaceError",
    "InternalError", "MySQLError", "NotSupportedError", "OperationalError",
    "ProgrammingError", "Warning", "escape_dict", "escape_sequence", "escape_string",
    "Connection", "Pool", "connect", "create_pool", "Cursor", "SSCursor", "DictCursor",
    "SSDictCursor", "install_as_aiomysql",
]


def _modules() -> dict:
    """``{name: module}`` to register for ``import aiomysql``: a top-level module named
    ``aiomysql`` holding this package's names, and the submodules (this package's own,
    so classes are the same objects)."""
    this = sys.modules[__name__]
    top = types.ModuleType("aiomysql", __doc__)
    top.__dict__.update({k: v for k, v in vars(this).items()
                         if not k.startswith("__") or k in ("__version__", "__all__")})
    top.__path__ = []            # a package: "aiomysql.x" resolves via sys.modules
    top.mysqlc_flavour = True    # type: ignore[attr-defined]
    return {"aiomysql": top, "aiomysql.connection": connection,
            "aiomysql.cursors": cursors, "aiomysql.pool": pool, "aiomysql.log": log}


def install_as_aiomysql() -> types.ModuleType:
    """Make ``import aiomysql`` (and ``aiomysql.cursors``, ``aiomysql.connection``,
    ``aiomysql.pool``, ``aiomysql.log``) import this flavour.

    Replaces the ``aiomysql`` entries of ``sys.modules`` (a real aiomysql imported
    before is dropped from it; modules that already imported it keep it).  Calling it
    again does nothing.  ``pymysql`` is left alone: aiomysql code that also imports
    ``pymysql`` (for ``pymysql.err``) gets the same exception classes only from
    :func:`mysqlc.install_as_pymysql`.

    Returns
    -------
    module
        The ``aiomysql`` module now in ``sys.modules``.
    """
    current = sys.modules.get("aiomysql")
    if getattr(current, "mysqlc_flavour", False) \
            and sys.modules.get("aiomysql.cursors") is cursors:
        return current   # type: ignore[return-value]
    modules = _modules()
    for name in [n for n in sys.modules if n == "aiomysql" or n.startswith("aiomysql.")]:
        del sys.modules[name]
    sys.modules.update(modules)
    return modules["aiomysql"]
