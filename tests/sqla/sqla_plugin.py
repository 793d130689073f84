"""pytest plugin for the compliance suite: SQLAlchemy's own testing plugin.

Loaded with ``-p sqla_plugin`` rather than from a conftest.py, so that a run
of the project's tests that recurses into this directory does not pick it up.

* With the environment variable ``MYSQLC_INSTALL_AS_MYSQLDB=1`` mysqlc is
  installed as ``MySQLdb`` first, so that ``--dburi mysql+mysqldb://...`` runs
  SQLAlchemy's stock mysqlclient dialect on mysqlc.
* ``mariadb+mysqlc_prepared://`` (and ``mysql+mysqlc_prepared``) name mysqlc's
  dialect with ``prepared=True``: every statement goes through server-side
  prepared statements (a URL cannot carry that dialect option).
* ``mariadb+mysqlc_async://`` (and ``mysql+mysqlc_async``), the asyncio dialect,
  come from mysqlc's entry points; they are registered here as well, for an
  editable install made before pyproject.toml declared them.  With an asyncio
  dialect SQLAlchemy's plugin runs every test and fixture in a greenlet on an
  event loop (its ``testing.asyncio``; no option needed).
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
registry.register("mysql.mysqlc_async", "mysqlc.sqlalchemy_aio", "MySQLDialect_mysqlc_async")
registry.register("mariadb.mysqlc_async", "mysqlc.sqlalchemy_aio", "MariaDBDialect_mysqlc_async")

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

from sqlalchemy.testing.plugin.pytestplugin import *  # noqa: E402,F401,F403
