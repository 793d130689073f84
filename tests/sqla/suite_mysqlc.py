"""SQLAlchemy's dialect compliance suite (``sqlalchemy.testing.suite``), run
against mysqlc through the dialect given with ``--dburi``.

Everything is SQLAlchemy's; the one override is below.
"""

from sqlalchemy.testing.suite import *  # noqa: F401,F403
from sqlalchemy.testing.suite import ServerSideCursorsTest as _ServerSideCursorsTest


class ServerSideCursorsTest(_ServerSideCursorsTest):
    # The suite recognises a server-side cursor only for the drivers it knows
    # (psycopg2, pymysql, mysqldb, ... by dialect.driver name); for any other
    # driver it answers False, so the tests could not pass for a third-party
    # dialect.  mysqlc's server-side cursors are mysqlc.cursors.SSCursor; the
    # asyncio dialect's are SQLAlchemy's server-side adapter around a
    # mysqlc.aio.cursors.SSCursor.
    def _is_server_side(self, cursor):
        from mysqlc.cursors import SSCursor
        if self.engine.dialect.is_async:
            import mysqlc.aio
            return cursor.server_side and isinstance(cursor._cursor,
                                                     mysqlc.aio.cursors.SSCursor)
        return isinstance(cursor, SSCursor) or super()._is_server_side(cursor)
