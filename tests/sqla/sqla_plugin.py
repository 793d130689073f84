"""pytest plugin for the compliance suite: SQLAlchemy's own testing plugin.

Loaded with ``-p sqla_plugin`` rather than from a conftest.py, so that a run
of the project's tests that recurses into this directory does not pick it up.

* With the environment variable ``MYSQLC_INSTALL_AS_MYSQLDB=1`` mysqlc is
  installed as ``MySQLdb`` first, so that ``--dburi mysql+mysqldb://...`` runs
  SQLAlchemy's stock mysqlclient dialect on mysqlc.
* ``mariadb+mysqlc_prepared://`` (and ``mysql+mysqlc_prepared``) name mysqlc's
  dialect with ``prepared=True``: every statement goes through server-side
  prepared statements (a URL cannot carry that dialect option).
"""

import os

import pytest
from sqlalchemy.dialects import registry

from mysqlc.sqlalchemy_dialect import MariaDBDialect_mysqlc, MySQLDialect_mysqlc

if os.environ.get("MYSQLC_INSTALL_AS_MYSQLDB") == "1":
    import mysqlc
    mysqlc.install_as_MySQLdb()


class MySQLDialect_mysqlc_prepared(MySQLDialect_mysqlc):
    supports_statement_cache = True

    def __init__(self, prepared=True, **kwargs):
        super().__init__(prepared=prepared, **kwargs)


class MariaDBDialect_mysqlc_prepared(MariaDBDialect_mysqlc):
    supports_statement_cache = True

    def __init__(self, prepared=True, **kwargs):
        super().__init__(prepared=prepared, **kwargs)


registry.register("mysql.mysqlc_prepared", __name__, "MySQLDialect_mysqlc_prepared")
registry.register("mariadb.mysqlc_prepared", __name__, "MariaDBDialect_mysqlc_prepared")

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

from sqlalchemy.testing.plugin.pytestplugin import *  # noqa: E402,F401,F403
