"""``pymysql.err`` of the PyMySQL flavour: the exception classes and the error map.

The classes are mysqlc's own (:mod:`mysqlc.errors`), not copies, so an ``except
pymysql.err.OperationalError`` catches what the C core raises.  ``error_map`` is
mysqlc's map from error numbers to classes, the one the core really uses; it
differs from PyMySQL's for a few numbers (see ``docs/compat``).
"""

import struct

from ..errors import (
    DatabaseError, DataError, Error, IntegrityError, InterfaceError, InternalError,
    MySQLError, NotSupportedError, OperationalError, ProgrammingError, Warning,
    _error_class, error_map,
)

__all__ = [
    "MySQLError", "Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
    "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
    "NotSupportedError", "error_map", "raise_mysql_exception",
]


def raise_mysql_exception(data):
    """Raise the exception for an ERR packet payload (PyMySQL's helper).

    Parameters
    ----------
    data : bytes
        The packet payload: ``0xff``, errno (2 bytes, little endian), optionally
        ``#`` and a 5-byte SQLSTATE, then the message (UTF-8).

    Raises
    ------
    Error subclass
        The class :data:`error_map` gives for the number, with ``args ==
        (errno, message)`` and ``sqlstate`` (str, or None when the packet has
        none); InterfaceError when `data` is too short to be one.
    """
    data = bytes(data)
    if len(data) < 3:
        raise InterfaceError(0, "malformed ERR packet (%d bytes)" % len(data))
    errno = struct.unpack_from("<H", data, 1)[0]
    rest = data[3:]
    sqlstate = None
    if rest[:1] == b"#" and len(rest) >= 6:
        sqlstate = rest[1:6].decode("ascii", "replace")
        rest = rest[6:]
    exc = _error_class(errno)(errno, rest.decode("utf-8", "replace"))
    exc.sqlstate = sqlstate
    raise exc
