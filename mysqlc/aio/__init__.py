"""mysqlc for asyncio: ``conn = await mysqlc.aio.connect(...)``.

The same C engine and the same Python rules as :func:`mysqlc.connect` (one
implementation: the sync code runs in a greenlet per connection and awaits the asyncio
transport where the blocking one would wait; docs/architecture.md, "asyncio").  Names
follow aiomysql: :func:`connect`, :class:`Connection`, the cursors of
:mod:`mysqlc.aio.cursors`, and the exceptions, ``paramstyle`` and type objects of
:mod:`mysqlc` (re-exported here, so this module is a DB-API module for SQLAlchemy's
asyncio adapter).

Importing it without the ``greenlet`` package (the ``aio`` extra) raises
ModuleNotFoundError naming ``pip install 'mysqlc[aio]'``.
"""

try:
    import greenlet as _greenlet   # noqa: F401 - the aio extra; _runner switches with it
except ImportError as _exc:
    # a bare "No module named 'greenlet'" does not say which extra brings it
    if _exc.name is None or _exc.name.split(".")[0] != "greenlet":
        raise
    raise ModuleNotFoundError(
        "mysqlc.aio needs the 'greenlet' package (the aio extra): "
        "pip install 'mysqlc[aio]'", name="greenlet") from _exc

from .. import constants
from ..errors import (DatabaseError, DataError, Error, IntegrityError, InterfaceError,
                      InternalError, NotSupportedError, OperationalError, ProgrammingError,
                      Warning)
from .. import (BINARY, DATETIME, NUMBER, ROWID, STRING, TIMESTAMP, Binary, Date, Time,
                Timestamp, apilevel, paramstyle, threadsafety)
from .connection import Connection, connect
from .cursors import Cursor, DictCursor, SSCursor, SSDictCursor
from ._columnar import read_sql
from .pool import Pool, create_pool
from .. import _core as _mc_core
from . import cursors as _cursors, pool as _pool

# the Python halves of src/aio_pool.c's slow paths (the pool's acquire context, the
# cursors' async with)
_mc_core._pool_configure((_pool._enter_slow, _pool.asyncio.shield,
                          _cursors.BaseCursor.__dict__["close"]))
del _mc_core, _cursors, _pool

__all__ = [
    "connect", "Connection", "Cursor", "DictCursor", "SSCursor", "SSDictCursor",
    "read_sql", "create_pool", "Pool", "constants", "apilevel", "paramstyle", "threadsafety",
    "Error", "Warning", "InterfaceError", "DatabaseError", "DataError", "OperationalError",
    "IntegrityError", "InternalError", "ProgrammingError", "NotSupportedError",
    "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "TIMESTAMP",
    "Binary", "Date", "Time", "Timestamp",
]
