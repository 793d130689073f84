"""Capability flags (``CLIENT_*``) exchanged in the handshake.

Names drop the ``CLIENT_`` prefix, as in MySQLdb and PyMySQL.  Pass extra flags to
``mysqlc.connect(client_flag=...)``; ``FOUND_ROWS`` and ``MULTI_STATEMENTS`` are the
ones an application usually sets.  Values are from the protocol documentation
(Protocol::CapabilityFlags); the ``MARIADB_CLIENT_*`` flags live in the upper 32
bits of MariaDB's extended capabilities.
"""

LONG_PASSWORD = 1
FOUND_ROWS = 1 << 1
LONG_FLAG = 1 << 2
CONNECT_WITH_DB = 1 << 3
NO_SCHEMA = 1 << 4
COMPRESS = 1 << 5
ODBC = 1 << 6
LOCAL_FILES = 1 << 7
IGNORE_SPACE = 1 << 8
PROTOCOL_41 = 1 << 9
CHANGE_USER = PROTOCOL_41   # MySQL 4.0 name of the same bit (MySQLdb keeps it)
INTERACTIVE = 1 << 10
SSL = 1 << 11
IGNORE_SIGPIPE = 1 << 12
TRANSACTIONS = 1 << 13
RESERVED = 1 << 14
SECURE_CONNECTION = 1 << 15
RESERVED2 = SECURE_CONNECTION
MULTI_STATEMENTS = 1 << 16
MULTI_RESULTS = 1 << 17
PS_MULTI_RESULTS = 1 << 18
PLUGIN_AUTH = 1 << 19
CONNECT_ATTRS = 1 << 20
PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21
CAN_HANDLE_EXPIRED_PASSWORDS = 1 << 22
HANDLE_EXPIRED_PASSWORDS = CAN_HANDLE_EXPIRED_PASSWORDS   # PyMySQL's name
SESSION_TRACK = 1 << 23
DEPRECATE_EOF = 1 << 24
OPTIONAL_RESULTSET_METADATA = 1 << 25
ZSTD_COMPRESSION_ALGORITHM = 1 << 26
QUERY_ATTRIBUTES = 1 << 27
MULTI_FACTOR_AUTHENTICATION = 1 << 28
CAPABILITY_EXTENSION = 1 << 29
PROGRESS = 1 << 29            # MariaDB's use of the same bit (client supports progress reports)
SSL_VERIFY_SERVER_CERT = 1 << 30
REMEMBER_OPTIONS = 1 << 31

# MariaDB extended capabilities (sent in the handshake's former filler bytes)
MARIADB_CLIENT_PROGRESS = 1 << 32
MARIADB_CLIENT_COM_MULTI = 1 << 33
MARIADB_CLIENT_STMT_BULK_OPERATIONS = 1 << 34
MARIADB_CLIENT_EXTENDED_METADATA = 1 << 35
MARIADB_CLIENT_CACHE_METADATA = 1 << 36

# Convenience combination: the flags every 4.1+ client sends.
CAPABILITIES = (LONG_PASSWORD | LONG_FLAG | PROTOCOL_41 | TRANSACTIONS
                | SECURE_CONNECTION | MULTI_RESULTS | PLUGIN_AUTH)
