"""``MySQLdb._mysql``: mysqlclient's low-level module, over mysqlc's connection.

Scripts and libraries that use mysqlclient's C module directly (``_mysql.connect``,
``conn.query()``, ``conn.store_result()``, ``result.fetch_row()``) run on this
module after :func:`mysqlc.install_as_MySQLdb`.  It is not a second protocol
implementation: a :class:`connection` owns a :class:`mysqlc.connections.Connection`
(options, TLS, charsets) and drives its C core (``mysqlc._core.Connection``)
command by command, as ``mysql_query`` / ``mysql_store_result`` /
``mysql_use_result`` / ``mysql_next_result`` do.

Values, as in mysqlclient's ``_mysql``: every column value is ``bytes`` (NULL is
None) unless the connection's ``conv`` dict (``connect(conv=...)``) has a
converter for its field type: ``str`` / ``bytes`` / None entries give text /
bytes, ``int`` is applied to the bytes, any other callable gets ``str`` for
DECIMAL, NEWDECIMAL, DATE, TIME, DATETIME and TIMESTAMP columns and ``bytes``
otherwise.  An entry may be a sequence of ``(flag_mask, converter)`` pairs: the
first whose mask is None or shares a bit with the column's flags wins.

Differences from mysqlclient's ``_mysql`` (also in ``docs/compat``):
``stat()``, ``change_user()``, ``sqlstate()``, ``errno()``/``error()``,
``send_query()``/``read_query_result()``, ``set_server_option()``, ``shutdown()``
and ``dump_debug_info()`` are missing; a stored result stays readable after the
connection is closed; connection errors keep mysqlc's numbers (2003 for TCP).
"""

import operator

from . import connections as _connections
from . import converters as _converters
from ._mysqldb import MYSQLCLIENT_VERSION, MYSQLCLIENT_VERSION_INFO
from .constants import FIELD_TYPE, FLAG
from .errors import (
    DatabaseError, DataError, Error, IntegrityError, InterfaceError, InternalError,
    MySQLError, NotSupportedError, OperationalError, ProgrammingError, Warning,
)

__all__ = [
    "connect", "connection", "result", "escape", "escape_string", "string_literal",
    "get_client_info", "debug", "version_info", "__version__", "NULL",
    "MySQLError", "Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
    "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
    "NotSupportedError",
]

#: the mysqlclient release whose API this module implements (as ``MySQLdb``)
version_info = MYSQLCLIENT_VERSION_INFO
__version__ = MYSQLCLIENT_VERSION
NULL = "NULL"

escape_string = _converters.escape_string
string_literal = _converters.string_literal

_ALL_TYPES = tuple(getattr(FIELD_TYPE, n) for n in dir(FIELD_TYPE) if n.isupper())
# field types whose converters get str (mysqlclient's _mysql_field_to_python)
_TEXT_TYPES = frozenset((FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.TIMESTAMP,
                         FIELD_TYPE.DATETIME, FIELD_TYPE.TIME, FIELD_TYPE.DATE))
# libmysqlclient's IS_NUM(): these columns carry NUM_FLAG in field_flags()
_NUM_TYPES = frozenset((0, 1, 2, 3, 4, 5, 6, 8, 9, FIELD_TYPE.YEAR, FIELD_TYPE.NEWDECIMAL))
_NUM_FLAG = getattr(FLAG, "NUM", 32768)


def get_client_info():
    """mysqlc's version (there is no libmysqlclient underneath)."""
    from . import __version__ as v
    return v


def debug(debug_string):
    """Does nothing: there is no libmysqlclient DBUG trace."""


def escape(obj, mapping):
    """Literal of `obj` with the encoder ``mapping[type(obj)]`` (see
    :meth:`connection.escape`), with the default connection settings."""
    return _converters.escape(obj, mapping)


def _gone():
    return OperationalError(2006, "")


def _column_converter(conv, field_type, flags):
    fn = conv.get(field_type) if conv else None
    if isinstance(fn, (list, tuple)):
        chosen = None
        for item in fn:
            if not (isinstance(item, tuple) and len(item) == 2):
                continue
            mask, f = item
            if mask is None or (isinstance(mask, int) and flags & mask):
                chosen = f
                break
        fn = chosen
    return fn


def _apply(fn, field_type, encoding):
    """A function raw bytes -> value for converter `fn` (None: bytes)."""
    if fn is None or fn is bytes:
        return None
    if fn is str:
        return lambda raw: raw.decode(encoding)
    if fn is int:
        return int
    if field_type in _TEXT_TYPES:
        return lambda raw: fn(raw.decode("utf-8", "surrogateescape"))
    return fn


class result:
    """A result set (``mysql_store_result`` or ``mysql_use_result``):
    ``result(connection, use=0)`` reads the connection's current result, as
    :meth:`connection.store_result` / :meth:`connection.use_result` do.

    Raises TypeError when `conn` is not a :class:`connection` (mysqlclient's
    type check), OperationalError(2006) when it is closed.

    Attributes
    ----------
    converter : tuple
        The converter chosen for each column (None: bytes).
    """

    def __init__(self, conn, use=0):
        if not isinstance(conn, connection):
            raise TypeError("result() argument 1 must be _mysql.connection, not %s"
                            % type(conn).__name__)
        core = conn._core()
        self._conn = conn
        self._use = bool(use)
        self._result_id = core.result_id
        self._names = core.column_names
        self._tables = core.column_tables
        description = core.description
        flags = tuple(f | _NUM_FLAG if d[1] in _NUM_TYPES else f
                      for d, f in zip(description, core.description_flags))
        self._flags = flags
        conv = conn.converter
        self.converter = tuple(_column_converter(conv, d[1], f)
                               for d, f in zip(description, flags))
        encoding = conn._mc.encoding
        self._apply = tuple(_apply(fn, d[1], encoding)
                            for fn, d in zip(self.converter, description))
        self._row_count = 0
        self._pos = 0
        if self._use:
            self._rows = None
            max_lengths = (0,) * len(description)
        else:
            self._rows = core.fetch(-1)
            self._row_count = len(self._rows)
            max_lengths = [0] * len(description)
            for row in self._rows:
                for i, v in enumerate(row):
                    if v is not None and len(v) > max_lengths[i]:
                        max_lengths[i] = len(v)
        self._description = tuple(
            (d[0], d[1], max_lengths[i], d[3], d[4], d[5], 1 if d[6] else 0)
            for i, d in enumerate(description))

    def describe(self):
        """``(name, type_code, max_length, length, length, decimals, null_ok)`` per
        column; max_length is 0 for a ``use_result()`` result (mysqlclient)."""
        return self._description

    def field_flags(self):
        """Tuple of the columns' ``FLAG`` bits (with libmysqlclient's NUM_FLAG)."""
        return self._flags

    def num_fields(self):
        """Number of columns."""
        return len(self._description)

    def num_rows(self):
        """Rows in the result (stored), or rows read so far (``use_result``)."""
        return self._row_count

    def _next_raw(self, n):
        if not self._use:
            rows = self._rows[self._pos:] if n <= 0 else self._rows[self._pos:self._pos + n]
            self._pos += len(rows)
            return rows
        conn = self._conn
        core = conn._mc._conn
        if core is None or not core.open:
            raise _gone()
        if core.result_id != self._result_id or not core.rows_pending:
            return []
        rows = core.fetch(n if n > 0 else -1)
        self._row_count += len(rows)
        return rows

    def fetch_row(self, maxrows=1, how=0):
        """Up to `maxrows` rows (0: all the rest) as a tuple of rows: tuples
        (``how=0``), dicts keyed by column name, a repeated name as
        ``table.name`` (``how=1``), or dicts keyed ``table.name`` (``how=2``).

        Raises ValueError for another `how` or a negative `maxrows`, TypeError
        when they are not ints.
        """
        how, maxrows = operator.index(how), operator.index(maxrows)
        if how not in (0, 1, 2):
            raise ValueError("how out of range")
        if maxrows < 0:
            raise ValueError("maxrows must be >= 0")
        rows = self._next_raw(maxrows)
        applies = self._apply
        if any(applies):
            rows = [tuple(v if v is None or f is None else f(v)
                          for v, f in zip(row, applies)) for row in rows]
        if how == 0:
            return tuple(rows)
        keys = self._keys(how)
        return tuple(dict(zip(keys, row)) for row in rows)

    def _keys(self, how):
        keys = []
        for name, table in zip(self._names, self._tables):
            if how == 2:
                key = "%s.%s" % (table, name) if table else name
            else:
                key = name if name not in keys else "%s.%s" % (table, name)
            keys.append(key)
        return keys

    def data_seek(self, n):
        """Move to row `n` of a stored result."""
        if self._use:
            raise ProgrammingError(0, "data_seek() needs a stored result")
        self._pos = max(0, min(int(n), len(self._rows)))

    def discard(self):
        """Read and drop the rest of a ``use_result()`` result."""
        if self._use:
            while self._next_raw(4096):
                pass


class connection:
    """A low-level connection (``_mysql.connect(...)``).

    Keyword arguments are mysqlclient's: ``host``, ``user``, ``password``
    (``passwd``), ``database`` (``db``), ``port``, ``unix_socket``, ``conv``,
    ``connect_timeout``, ``read_timeout``, ``write_timeout``, ``compress``,
    ``init_command``, ``client_flag``, ``ssl``, ``ssl_mode``, ``local_infile``,
    ``charset``, ``collation``, ``auth_plugin``, ``server_public_key``, and
    mysqlc's other :class:`~mysqlc.connections.Connection` options.  Autocommit
    is left as the server has it and multi statements are off unless
    ``client_flag`` asks for ``CLIENT.MULTI_STATEMENTS``, as in mysqlclient.

    Raises OperationalError when it cannot connect.
    """

    def __init__(self, host=None, user=None, password=None, database=None, port=0,
                 unix_socket=None, conv=None, connect_timeout=None, compress=False,
                 named_pipe=False, init_command=None, read_default_file=None,
                 read_default_group=None, client_flag=0, ssl=None, ssl_mode=None,
                 local_infile=False, read_timeout=None, write_timeout=None,
                 charset=None, collation=None, auth_plugin=None,
                 server_public_key=None, passwd=None, db=None, **options):
        self.converter = conv if conv is not None else {}
        self._pending = False
        mc = _connections.Connection(
            host=host, user=user, password=password if password is not None else passwd,
            database=database if database is not None else db, port=port or 0,
            unix_socket=unix_socket, connect_timeout=connect_timeout,
            read_timeout=read_timeout, write_timeout=write_timeout, compress=compress,
            named_pipe=named_pipe, init_command=init_command,
            read_default_file=read_default_file, read_default_group=read_default_group,
            client_flag=client_flag, multi_statements=False, ssl=ssl, ssl_mode=ssl_mode,
            local_infile=local_infile, charset=charset, collation=collation,
            auth_plugin=auth_plugin, server_public_key=server_public_key,
            autocommit=None, **options)
        self._mc = mc
        self.port = mc.port
        self._set_raw()

    def _set_raw(self):
        # every value reaches Python as the wire's bytes: a converter for every
        # field type (the core hands over str for text columns, bytes for binary)
        mc = self._mc

        def raw(value, _mc=mc):
            return value if type(value) is bytes else value.encode(_mc.encoding)
        mc._decoders = {t: raw for t in _ALL_TYPES}
        mc._conn.converters = dict(mc._decoders)

    def _core(self):
        mc = self._mc
        core = mc._conn if mc is not None else None
        if core is None or not core.open:
            raise _gone()
        return core

    # ------------------------------------------------------------ queries

    def query(self, query):
        """Send `query` (str, encoded with the connection charset, or bytes);
        read its first result's header.

        Raises ProgrammingError 2014 when rows or results of the previous query
        are unread; the server's error for a failing statement.
        """
        core = self._core()
        if isinstance(query, str):
            query = query.encode(self._mc.encoding)
        elif not isinstance(query, (bytes, bytearray, memoryview)):
            raise TypeError("a str or bytes-like object is required, not %r"
                            % type(query).__name__)
        self._pending = False
        query = bytes(query)
        self._mc._note_statement(query)     # the sql_mode after it (escape_string)
        self._pending = self._recorded(core.query, query) > 0

    def _take(self, use):
        core = self._core()
        if not self._pending:
            return None
        self._pending = False
        return self._recorded(result, self, use)

    def store_result(self):
        """The current result set read whole (a :class:`result`), or None for a
        statement without one."""
        return self._take(0)

    def use_result(self):
        """The current result set read row by row from the socket, or None."""
        return self._take(1)

    def next_result(self):
        """Move to the next result of a multi-statement query: 0 when there is
        one, -1 when there is none.  Raises the server's error for it."""
        core = self._core()
        if not core.more_results:
            return -1
        if core.rows_pending:
            raise ProgrammingError(2014, "Commands out of sync; you can't run this "
                                         "command now")
        self._pending = False
        self._pending = self._recorded(core.next_result) > 0
        return 0

    def more_results(self):
        """True when another result follows (SERVER_MORE_RESULTS_EXISTS)."""
        return bool(self._core().more_results)

    def discard_result(self):
        """Read and drop all unread rows and results."""
        self._pending = False
        self._core().discard()

    def affected_rows(self):
        """Rows changed by the last statement (rows of a result set read)."""
        return self._core().affected_rows

    def insert_id(self):
        """AUTO_INCREMENT id of the last INSERT."""
        return self._core().insert_id

    def field_count(self):
        """Columns of the last statement's result (0 without one)."""
        return self._core().field_count

    def warning_count(self):
        """Warnings of the last statement."""
        return self._core().warning_count

    def info(self):
        """Info string of the last OK packet, or None."""
        return self._core().info

    def _recorded(self, fn, *args):
        # fn(*args) with its error kept as the connection's last error, and the
        # record cleared when it succeeds (mysql_errno() after each API call)
        mc = self._mc
        try:
            value = fn(*args)
        except Error as exc:
            mc._note_error(exc)
            raise
        mc._last_error = _connections._NO_ERROR
        return value

    def errno(self):
        """Error number of the last call (int; server ``ER_*`` or client
        ``CR_*``), 0 after a call that succeeded (mysqlclient's ``errno()``).
        Raises OperationalError(2006) on a closed connection."""
        return self._mc_checked().errno()

    def error(self):
        """Message of the last call's error (str), '' after a call that succeeded
        (mysqlclient's ``error()``).  Raises OperationalError(2006) on a closed
        connection."""
        return self._mc_checked().error()

    def sqlstate(self):
        """SQLSTATE of the last call's error (5-character str), ``"00000"`` after
        a call that succeeded (mysqlclient's ``sqlstate()``).  Raises
        OperationalError(2006) on a closed connection."""
        return self._mc_checked().sqlstate()

    def stat(self):
        """The server's status line (COM_STATISTICS), str, as mysqlclient's
        ``stat()``.  Raises OperationalError 2006 on a closed or lost connection."""
        return self._recorded(self._mc_checked().stat)

    def change_user(self, user, passwd=None, db=None):
        """Log in again as `user` (COM_CHANGE_USER; mysqlclient's
        ``change_user(user, passwd=None, db=None)``); see
        :meth:`mysqlc.connections.Connection.change_user`.  Raises
        OperationalError 1045 when refused (the previous login stays), 2006 on a
        closed connection."""
        self._pending = False
        self._recorded(self._mc_checked().change_user, user, passwd, db)

    # ------------------------------------------------------------ connection

    def _mc_checked(self):
        self._core()
        return self._mc

    def ping(self, reconnect=False):
        """COM_PING; raises OperationalError when the server is gone."""
        self._mc_checked().ping(bool(reconnect))
        if reconnect:
            self._set_raw()

    def close(self):
        """Close the connection; OperationalError(2006) when already closed."""
        self._core()
        self._mc.close()

    _mc = None     # before __init__ (connection.__new__): not open

    @property
    def open(self):
        """1 while the connection is open, else 0."""
        core = self._mc._conn if self._mc is not None else None
        return 1 if core is not None and core.open else 0

    @property
    def closed(self):
        """1 when the connection is not open, else 0 (mysqlclient's ``closed``)."""
        return 1 - self.open

    def commit(self):
        """``COMMIT``."""
        self._mc_checked().commit()

    def rollback(self):
        """``ROLLBACK``."""
        self._mc_checked().rollback()

    def autocommit(self, flag):
        """Turn autocommit on or off."""
        self._mc_checked().autocommit(flag)

    def get_autocommit(self):
        """True when the server reports autocommit mode."""
        return self._mc_checked().get_autocommit()

    def select_db(self, db):
        """Make `db` the default database."""
        self._mc_checked().select_db(db)

    def kill(self, pid):
        """``KILL pid``."""
        self._mc_checked().kill(pid)

    def thread_id(self):
        """The server's connection id."""
        return self._core().thread_id

    def fileno(self):
        """The socket's file descriptor."""
        return self._core().fd

    def get_server_info(self):
        """Server version string."""
        return self._mc_checked().get_server_info()

    def get_host_info(self):
        """``"<host> via TCP/IP"`` or ``"Localhost via UNIX socket"``."""
        return self._mc_checked().get_host_info()

    def get_proto_info(self):
        """Protocol version (10)."""
        return self._mc_checked().get_proto_info()

    def character_set_name(self):
        """The connection character set."""
        return self._mc_checked().character_set_name()

    def set_character_set(self, charset):
        """``SET NAMES charset``."""
        self._mc_checked().set_character_set(charset)

    def get_character_set_info(self):
        """Dict of the connection charset's ``name``, ``collation``, ``mbminlen``,
        ``mbmaxlen``, ``comment``, ``dir``."""
        return self._mc_checked().get_character_set_info()

    @property
    def server_capabilities(self):
        """Capability flags of the server's handshake."""
        return self._core().server_capabilities

    @property
    def client_flag(self):
        """Negotiated capability flags."""
        return self._core().client_flag

    # ------------------------------------------------------------ literals

    def escape_string(self, s):
        """`s` escaped for the connection's charset and sql_mode, as bytes."""
        return self._mc.escape_string(s)

    def string_literal(self, obj):
        """`obj` (``str(obj)`` for non-strings) quoted and escaped, as bytes."""
        return self._mc.string_literal(obj)

    def escape(self, obj, mapping=None):
        """Literal of `obj`: str and bytes as :meth:`string_literal`; otherwise
        ``mapping[type(obj)](obj, mapping)`` (default mapping: :attr:`converter`),
        else ``mapping[str]``, else the string literal of ``str(obj)``."""
        if isinstance(obj, (str, bytes, bytearray)):
            return self.string_literal(obj)
        if mapping is None:
            mapping = self.converter
        fn = mapping.get(type(obj))
        if fn is None:
            fn = mapping.get(str)
        if fn is None or isinstance(fn, (list, tuple)):
            return self.string_literal(str(obj))
        return fn(obj, mapping)

    def __repr__(self):
        state = "open" if self.open else "closed"
        host = self._mc.host if self._mc is not None else None
        return "<_mysql.connection %s to '%s' at %#x>" % (state, host, id(self))


def connect(*args, **kwargs):
    """A new :class:`connection` (same arguments)."""
    return connection(*args, **kwargs)
