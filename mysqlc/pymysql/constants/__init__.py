"""``pymysql.constants`` of the PyMySQL flavour: mysqlc's constant modules.

``CLIENT``, ``COMMAND``, ``CR``, ``ER``, ``FIELD_TYPE``, ``FLAG`` and
``SERVER_STATUS`` are the modules of :mod:`mysqlc.constants` themselves
(``install_as_pymysql`` registers them as ``pymysql.constants.X``).
"""

from ...constants import CLIENT, COMMAND, CR, ER, FIELD_TYPE, FLAG, SERVER_STATUS

__all__ = ["CLIENT", "COMMAND", "CR", "ER", "FIELD_TYPE", "FLAG", "SERVER_STATUS"]
