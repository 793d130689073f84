"""MySQL protocol constants under the names MySQL uses.

Submodules (imported on demand, as in MySQLdb and PyMySQL):

``CLIENT``
    capability flags of the handshake (``CLIENT_*`` without the prefix).
``COMMAND``
    command bytes of the client/server protocol (``COM_*``).
``CR``
    client error numbers 2000-2999 (``CR_*``, prefix kept as in PyMySQL).
``ER``
    server error numbers (``ER_*`` without the prefix).
``FIELD_TYPE``
    column types of a result set (``MYSQL_TYPE_*`` without the prefix).
``FLAG``
    column definition flags (``*_FLAG`` without the suffix).
``SERVER_STATUS``
    status flags of OK/EOF packets (``SERVER_*``, full names as in PyMySQL).
"""

__all__ = ["CLIENT", "COMMAND", "CR", "ER", "FIELD_TYPE", "FLAG", "SERVER_STATUS"]
