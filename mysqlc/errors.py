"""PEP 249 exception classes and the map from MySQL error numbers to them.

Every exception raised for a server or client error carries
``args == (errno, message)``: ``errno`` an ``int`` (a server ``ER_*`` number, a
client ``CR_*`` number 2000-2999, or 0 for conditions detected by mysqlc itself
that have no MySQL number), ``message`` a ``str``.

The C core imports this module while it initialises (before ``mysqlc._core``
exists), fetches the classes below and calls :func:`_error_class` for every ERR
packet.  This module therefore imports nothing from the driver except the
pure-Python constants.

Class hierarchy (PEP 249, plus ``MySQLError`` as in MySQLdb and PyMySQL)::

    Exception
     └─ MySQLError
         ├─ Warning            (also a subclass of the built-in Warning)
         └─ Error
             ├─ InterfaceError
             └─ DatabaseError
                 ├─ DataError
                 ├─ OperationalError
                 ├─ IntegrityError
                 ├─ InternalError
                 ├─ ProgrammingError
                 └─ NotSupportedError

Error number mapping
--------------------
The table starts from mysqlclient's (``_mysql.c``) and PyMySQL's (``err.py``)
mappings and adds the errors the project's issue names.  Where it differs from
mysqlclient, the difference is listed here so that it can be reviewed:

* ``ProgrammingError`` also for 1166 (wrong column name).  1044 / 1054 / 1142 /
  1143 (access denied, unknown column) are ``OperationalError`` as in mysqlclient
  and PyMySQL; 1049 (unknown database) and 1050/1051 (table exists / unknown
  table) stay ``OperationalError`` as in mysqlclient.
* ``DataError`` also for 1292, 1365, 1366, 1367 and 1416 (mysqlclient: only
  1171/1230/1263/1264/1265/1406/1441; PyMySQL adds 1366/1367).
* ``IntegrityError`` also for 1557, 1586, 1761, 1762, 1859 (duplicate keys in
  other wordings), 3819 (MySQL CHECK constraint) and 4025 (MariaDB CHECK
  constraint).  Django converts an ``OperationalError`` with 3819/4025 into
  ``IntegrityError`` itself, so raising ``IntegrityError`` directly is compatible.
  1690 (BIGINT value out of range) stays ``OperationalError``, because Django
  expects exactly that class for it and converts it.
* Unmapped numbers below 1000 (OS error numbers relayed by the server) give
  ``InternalError``, as in mysqlclient and PyMySQL.
* Every other unmapped number -- server errors >= 1000 and client errors
  2000-2999 -- gives ``OperationalError``, as in mysqlclient.
* 0 gives ``InterfaceError`` (mysqlclient's class for "no error number").
"""

import builtins

from .constants import CR, ER


__all__ = [
    "MySQLError", "Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
    "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
    "NotSupportedError",
]


class MySQLError(Exception):
    """Base class of every exception raised by mysqlc (MySQLdb and PyMySQL have it too)."""

    __module__ = "mysqlc"


class Warning(builtins.Warning, MySQLError):
    """Important warnings like data truncations while inserting (PEP 249).

    mysqlc does not raise it by itself; it exists for the DB-API surface and for
    code that catches ``MySQLdb.Warning``.
    """

    __module__ = "mysqlc"


class Error(MySQLError):
    """Base class of all other error exceptions, not of :class:`Warning` (PEP 249).

    ``args`` is ``(errno: int, message: str)``.

    Attributes
    ----------
    sqlstate : str
        The 5-character SQLSTATE: for a server error the one its ERR packet carries
        (``'#'`` marker + 5 characters, e.g. ``"42S02"`` for 1146), ``"HY000"`` for
        client-side errors and for an ERR packet without the marker (as
        libmysqlclient's ``mysql_sqlstate()``).  Set by the C core where it creates
        the exception; this class default covers errors raised in Python.
    """

    __module__ = "mysqlc"

    sqlstate: str = "HY000"

    def __init__(self, *args: object, sqlstate: "str | None" = None) -> None:
        """``Error(errno, message, sqlstate=None)``: `sqlstate` (PyMySQL's keyword)
        sets :attr:`sqlstate`; without it the class default ``"HY000"`` stays."""
        super().__init__(*args)
        if sqlstate is not None:
            self.sqlstate = sqlstate


class InterfaceError(Error):
    """Errors related to the driver rather than the database.

    mysqlc raises it for conditions without an error number, e.g. an unusable
    columnar reader.  A closed or lost connection raises
    ``OperationalError(2006, ...)`` (CR_SERVER_GONE_ERROR), as mysqlclient.
    """

    __module__ = "mysqlc"


class DatabaseError(Error):
    """Errors related to the database (base of the six classes below)."""

    __module__ = "mysqlc"


class DataError(DatabaseError):
    """Problems with the processed data: division by zero, value out of range,
    data too long, invalid date or number (e.g. errno 1264, 1365, 1406, 1292)."""

    __module__ = "mysqlc"


class OperationalError(DatabaseError):
    """Errors in the database's operation, not necessarily under the programmer's
    control: access denied (1045), lost connection (2013), server gone (2006),
    cannot connect (2002/2003), lock wait timeout, deadlock, ..."""

    __module__ = "mysqlc"


class IntegrityError(DatabaseError):
    """The relational integrity of the database is affected: duplicate key (1062),
    foreign key violation (1451/1452), NOT NULL violation (1048), CHECK constraint
    (3819/4025)."""

    __module__ = "mysqlc"


class InternalError(DatabaseError):
    """The database hit an internal error.  No error number maps to it by default;
    it is kept for the DB-API surface."""

    __module__ = "mysqlc"


class ProgrammingError(DatabaseError):
    """Programming errors: SQL syntax error (1064), no such table (1146), wrong
    number of parameters, commands out of sync (2014), a
    closed cursor."""

    __module__ = "mysqlc"


class NotSupportedError(DatabaseError):
    """A method or feature the server or the driver does not support: errno 1235,
    1286, 1289, or an option of ``connect()`` that mysqlc does not implement
    (TLS, compression, option files)."""

    __module__ = "mysqlc"


def _build_error_map():
    m = {0: InterfaceError}
    for errno in (
        ER.DB_CREATE_EXISTS,                    # 1007
        ER.PARSE_ERROR,                         # 1064
        ER.WRONG_DB_NAME,                       # 1102
        ER.WRONG_TABLE_NAME,                    # 1103
        ER.FIELD_SPECIFIED_TWICE,               # 1110
        ER.INVALID_GROUP_FUNC_USE,              # 1111
        ER.UNSUPPORTED_EXTENSION,               # 1112
        ER.TABLE_MUST_HAVE_COLUMNS,             # 1113
        ER.NO_SUCH_TABLE,                       # 1146
        ER.SYNTAX_ERROR,                        # 1149
        ER.WRONG_COLUMN_NAME,                   # 1166
        ER.CANT_DO_THIS_DURING_AN_TRANSACTION,  # 1179
        CR.CR_COMMANDS_OUT_OF_SYNC,             # 2014
    ):
        m[errno] = ProgrammingError
    for errno in (
        ER.PRIMARY_CANT_HAVE_NULL,              # 1171
        ER.NO_DEFAULT,                          # 1230
        ER.WARN_NULL_TO_NOTNULL,                # 1263
        ER.WARN_DATA_OUT_OF_RANGE,              # 1264
        ER.WARN_DATA_TRUNCATED,                 # 1265
        ER.TRUNCATED_WRONG_VALUE,               # 1292
        ER.DIVISION_BY_ZERO,                    # 1365
        ER.TRUNCATED_WRONG_VALUE_FOR_FIELD,     # 1366
        ER.ILLEGAL_VALUE_FOR_TYPE,              # 1367
        ER.DATA_TOO_LONG,                       # 1406
        ER.CANT_CREATE_GEOMETRY_OBJECT,         # 1416
        ER.DATETIME_FUNCTION_OVERFLOW,          # 1441
    ):
        m[errno] = DataError
    for errno in (
        ER.BAD_NULL_ERROR,                      # 1048
        ER.DUP_ENTRY,                           # 1062
        ER.DUP_UNIQUE,                          # 1169
        ER.CANNOT_ADD_FOREIGN,                  # 1215
        ER.NO_REFERENCED_ROW,                   # 1216
        ER.ROW_IS_REFERENCED,                   # 1217
        ER.NO_DEFAULT_FOR_FIELD,                # 1364
        ER.ROW_IS_REFERENCED_2,                 # 1451
        ER.NO_REFERENCED_ROW_2,                 # 1452
        ER.FOREIGN_DUPLICATE_KEY,               # 1557
        ER.DUP_ENTRY_WITH_KEY_NAME,             # 1586
        ER.FOREIGN_DUPLICATE_KEY_WITH_CHILD_INFO,     # 1761
        ER.FOREIGN_DUPLICATE_KEY_WITHOUT_CHILD_INFO,  # 1762
        ER.DUP_UNKNOWN_IN_INDEX,                # 1859
        ER.CHECK_CONSTRAINT_VIOLATED,           # 3819 (MySQL)
        ER.CONSTRAINT_FAILED,                   # 4025 (MariaDB)
    ):
        m[errno] = IntegrityError
    for errno in (
        ER.WARNING_NOT_COMPLETE_ROLLBACK,       # 1196
        ER.NOT_SUPPORTED_YET,                   # 1235
        ER.UNKNOWN_STORAGE_ENGINE,              # 1286
        ER.FEATURE_DISABLED,                    # 1289
    ):
        m[errno] = NotSupportedError
    return m


#: errno -> exception class for every number with a specific class; anything
#: else is :class:`OperationalError` (see the module docstring).
error_map: dict[int, type[Error]] = _build_error_map()


# (no typing import: the C core imports this module while it initialises; the
# annotations are builtins only, evaluated on 3.9 as well)
def _error_class(errno: int, _get=error_map.get,
                 _default: type[Error] = OperationalError) -> type[Error]:
    """Return the exception class for MySQL error number `errno`.

    Called by the C core for every ERR packet, so it is a single dict lookup.

    Parameters
    ----------
    errno : int
        Server (``ER_*``) or client (``CR_*``) error number.

    Returns
    -------
    type
        A subclass of :class:`Error`; :class:`OperationalError` for numbers
        without a specific mapping.
    """
    cls = _get(errno)
    if cls is not None:
        return cls
    if 0 < errno < 1000:
        return InternalError
    return _default
