"""Column definition flags (``*_FLAG``), as in ``cursor.description_flags``.

Names drop the ``_FLAG`` suffix, as in MySQLdb and PyMySQL.  Only the low 16 bits
travel in a column definition; the higher ones are server-internal and listed
for completeness.
"""

NOT_NULL = 1
PRI_KEY = 2
UNIQUE_KEY = 4
MULTIPLE_KEY = 8
BLOB = 16
UNSIGNED = 32
ZEROFILL = 64
BINARY = 128
ENUM = 256
AUTO_INCREMENT = 512
TIMESTAMP = 1024
SET = 2048
NO_DEFAULT_VALUE = 4096
ON_UPDATE_NOW = 8192
PART_KEY = 16384
NUM = 32768
GROUP = 32768
UNIQUE = 65536
BINCMP = 131072
