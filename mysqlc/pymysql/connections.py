"""``pymysql.connections`` of the PyMySQL flavour: :class:`Connection`.

A subclass of :class:`mysqlc.connections.Connection` (the C core speaks the
protocol) that takes PyMySQL's ``connect()`` arguments with PyMySQL's defaults
and behaves as PyMySQL's ``Connection`` where code can tell.
"""

from __future__ import annotations

import codecs
import errno as _errno
import os
import re
import socket
import sys
import time
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union, overload

from .. import _secure, connections as _connections
from ..errors import (
    Error, InterfaceError, NotSupportedError, OperationalError, ProgrammingError,
)
from . import converters, cursors, optionfile

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .. import cursors as _base_cursors

    _CursorT = TypeVar("_CursorT", bound=_base_cursors.BaseCursor)

__all__ = ["Connection", "DEFAULT_CHARSET", "MAX_PACKET_LEN"]

DEFAULT_CHARSET = "utf8mb4"
MAX_PACKET_LEN = 2 ** 24 - 1

# PyMySQL's Python codec names for MySQL charsets (its ``Charset.encoding``);
# other charsets use the name itself when Python knows it.
_PYMYSQL_ENCODINGS = {"utf8mb4": "utf8", "utf8mb3": "utf8", "utf8": "utf8",
                      "latin1": "cp1252", "koi8r": "koi8_r", "koi8u": "koi8_u"}

_TLS_KEYWORDS = ("ssl_mode", "ssl_capath", "ssl_cipher", "tls_version")


# the file named by the client's own LOAD DATA LOCAL INFILE statement
_LOCAL_INFILE = re.compile(
    rb"LOAD\s+(?:XML|DATA)\s+(?:LOW_PRIORITY\s+|CONCURRENT\s+)?LOCAL\s+INFILE\s+"
    rb"""('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")""", re.IGNORECASE | re.DOTALL)
_UNESCAPE = {b"0": b"\0", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"Z": b"\x1a",
             b"b": b"\b"}


def _unquote(literal):
    quote, body = literal[:1], literal[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i:i + 1]
        if ch == b"\\" and i + 1 < len(body):
            nxt = body[i + 1:i + 2]
            out += _UNESCAPE.get(nxt, nxt)
            i += 2
            continue
        if ch == quote and body[i + 1:i + 2] == quote:
            i += 1
        out += ch
        i += 1
    return bytes(out)


def _read_option_file(path, group, values):
    """PyMySQL's option-file lookup: each of `values` (option name -> value given)
    that is empty takes the file's value from `group`."""
    cfg = optionfile.Parser()
    cfg.read(os.path.expanduser(path))
    out = {}
    for key, given in values.items():
        if given:
            out[key] = given
            continue
        try:
            out[key] = cfg.get(group, key)
        except Exception:       # no such section / option: keep what was given
            out[key] = given
    return out


def _hex_literal(value):
    return "X'%s'" % value.hex()


def _struct_time_literal(value):
    return converters.escape_struct_time(value)


#: ``(a, b) -> bool`` of _same_codec (the encoding property reads it per statement)
_SAME_CODEC: dict = {}


def _same_codec(a, b):
    same = _SAME_CODEC.get((a, b))
    if same is None:
        try:
            same = codecs.lookup(a).name == codecs.lookup(b).name
        except LookupError:
            same = False
        if len(_SAME_CODEC) < 256:
            _SAME_CODEC[(a, b)] = same
    return same


class Connection(_connections.Connection):
    """A connection with PyMySQL's arguments, defaults and behaviour.

    Parameters are keyword-only, as in PyMySQL 1.1+; mysqlc's own options
    (``local_infile_dir``, ``ssl_mode``, ``prepared_cache_size``, ...) are
    accepted as well.  Differences from :class:`mysqlc.connections.Connection`:

    connect_timeout : float, seconds, default 10
        ValueError unless ``0 < connect_timeout <= 31536000``; `read_timeout`
        and `write_timeout` must be > 0 (ValueError).
    port : int
        ValueError when not an int.
    unix_socket : str, optional
        Used whenever given (PyMySQL ignores `host` then).
    cursorclass : type, default :class:`mysqlc.pymysql.cursors.Cursor`
    conv : dict, optional
        PyMySQL's ``conv``: entries that are the defaults of
        :mod:`mysqlc.pymysql.converters` change nothing; others become user
        converters / encoders.  A decoder gets what PyMySQL's gets: the text
        (``str``) of numbers, DECIMAL, dates and times and of text columns,
        ``bytes`` for binary ones.
    client_flag : int
        ``CLIENT.MULTI_STATEMENTS`` is off unless given here (PyMySQL's default).
    defer_connect : bool, default False
        Do not connect until :meth:`connect` is called.
    ssl, ssl_ca, ssl_cert, ssl_key, ssl_verify_cert, ssl_verify_identity, ssl_disabled
        As PyMySQL; with none of them TLS is used when the server offers it
        (PyMySQL's PREFERRED mode).  An ``ssl.SSLContext`` is used as PyMySQL uses
        it: TLS is required and the context's session carries it, verifying as the
        context says, with the host connected to as ``server_hostname``;
        ``ssl_ca``/``ssl_cert``/``ssl_key`` or a true ``ssl_verify_*`` given with it
        raise ProgrammingError (PyMySQL silently replaces the context by them).
    compress : bool
        Supported (PyMySQL raises NotImplementedError).
    binary_prefix : bool
        Accepted and ignored, as PyMySQL 1.2 does: bytes parameters are always
        written ``X'<hex>'``, which the server types as a binary string (so it
        returns them as bytes), also after a ``_binary`` in the query.
    max_allowed_packet : int, bytes, default 16 MiB
        Kept as an attribute; PyMySQL only sizes LOAD DATA LOCAL packets with it
        (``min(it, 16 KiB)``).  Here the core sizes them from the server's session
        ``@@max_allowed_packet`` (``max - 5`` bytes, at most 1 MiB), the limit that
        refuses a packet (docs/compat.md "LOAD DATA LOCAL INFILE").
    bind_address, ssl_key_password, auth_plugin_map
        Accepted; a value other than None / empty raises NotSupportedError
        (the core cannot bind the client address, decrypt a key or run Python
        auth plugins).
    db, passwd
        Aliases of `database`, `password`; DeprecationWarning, as PyMySQL.

    Raises
    ------
    ValueError, NotSupportedError
        See above.
    OperationalError
        Cannot connect, as :class:`mysqlc.connections.Connection`.
    """

    default_cursor = cursors.Cursor
    _pymysql_closed = False
    host = None

    def __init__(self, *, user: Union[str, bytes, None] = None,
                 password: Union[str, bytes] = "", host: Optional[str] = None,
                 database: Union[str, bytes, None] = None,
                 unix_socket: Optional[str] = None, port: int = 0, charset: str = "",
                 collation: Optional[str] = None, sql_mode: Optional[str] = None,
                 read_default_file: Optional[str] = None,
                 conv: Optional[Mapping[Any, Any]] = None, use_unicode: bool = True,
                 client_flag: int = 0,
                 cursorclass: Optional[type[_base_cursors.BaseCursor]] = None,
                 init_command: Optional[str] = None,
                 connect_timeout: Optional[float] = 10,
                 read_default_group: Optional[str] = None,
                 autocommit: Optional[bool] = False, local_infile: bool = False,
                 max_allowed_packet: int = 16 * 1024 * 1024, defer_connect: bool = False,
                 auth_plugin_map: Optional[Mapping[str, Any]] = None,
                 read_timeout: Optional[float] = None,
                 write_timeout: Optional[float] = None,
                 bind_address: Optional[str] = None, binary_prefix: bool = False,
                 program_name: Optional[str] = None,
                 server_public_key: Union[str, bytes, None] = None,
                 ssl: Union[Mapping[str, Any], Any, None] = None,
                 ssl_ca: Optional[str] = None, ssl_cert: Optional[str] = None,
                 ssl_disabled: Optional[bool] = None, ssl_key: Optional[str] = None,
                 ssl_key_password: Union[str, bytes, None] = None,
                 ssl_verify_cert: Optional[bool] = None,
                 ssl_verify_identity: Optional[bool] = None,
                 compress: Optional[bool] = None, named_pipe: Optional[bool] = None,
                 passwd: Union[str, bytes, None] = None, db: Union[str, bytes, None] = None,
                 **options: Any) -> None:
        if db is not None and database is None:
            warnings.warn("'db' is deprecated, use 'database'", DeprecationWarning, 2)
            database = db
        if passwd is not None and not password:
            warnings.warn("'passwd' is deprecated, use 'password'", DeprecationWarning, 2)
            password = passwd
        if read_default_group and not read_default_file:
            read_default_file = "c:\\my.ini" if sys.platform.startswith("win") \
                else "/etc/my.cnf"
        if read_default_file:
            found = _read_option_file(read_default_file, read_default_group or "client", {
                "user": user, "password": password, "host": host, "database": database,
                "socket": unix_socket, "port": port, "bind-address": bind_address,
                "default-character-set": charset})
            user, password, host, database = (found["user"], found["password"],
                                              found["host"], found["database"])
            unix_socket, bind_address = found["socket"], found["bind-address"]
            charset = found["default-character-set"]
            port = int(found["port"] or 0)
            if ssl is None or isinstance(ssl, dict):
                tls = _read_option_file(read_default_file, read_default_group or "client", {
                    "ssl-" + k: (ssl or {}).get(k)
                    for k in ("ca", "capath", "cert", "key", "cipher")})
                tls = {k[4:]: v for k, v in tls.items() if v}
                ssl = tls or ssl
            read_default_file = read_default_group = None
        if charset and charset.lower() == "utf8":
            charset = "utf8mb4"         # PyMySQL 1.1+: utf8 means utf8mb4
        if type(port or 3306) is not int:
            raise ValueError("port should be of type int")
        if connect_timeout is None or not 0 < connect_timeout <= 31536000:
            raise ValueError("connect_timeout should be >0 and <=31536000")
        if read_timeout is not None and read_timeout <= 0:
            raise ValueError("read_timeout should be > 0")
        if write_timeout is not None and write_timeout <= 0:
            raise ValueError("write_timeout should be > 0")
        for name, value in (("bind_address", bind_address),
                            ("ssl_key_password", ssl_key_password),
                            ("auth_plugin_map", auth_plugin_map or None)):
            if value is not None:
                raise NotSupportedError(0, "the %s option is not supported by mysqlc" % name)
        context = _secure._is_ssl_context(ssl)
        if ssl is not None and not isinstance(ssl, (dict, bool)) and not context:
            raise ProgrammingError(0, "ssl must be an ssl.SSLContext, a dict of options "
                                   "(ca, cert, key, ...) or a bool, not %s"
                                   % type(ssl).__name__)
        if context:
            # PyMySQL's rule: the switches count only when true (it builds a dict from
            # them instead of the context then; mysqlc refuses the mix: ProgrammingError)
            ssl_verify_cert = ssl_verify_cert or None
            ssl_verify_identity = ssl_verify_identity or None
        tls_given = (ssl or ssl_ca or ssl_cert or ssl_key or ssl_verify_cert
                     or ssl_verify_identity or ssl_disabled
                     or any(options.get(k) for k in _TLS_KEYWORDS))
        if not tls_given and ssl is not False:   # ssl=False: no TLS
            options["ssl_mode"] = "PREFERRED"
        if conv is not None:
            self.encoders = {k: v for k, v in conv.items() if type(k) is not int}
            self.decoders = {k: v for k, v in conv.items() if type(k) is int}
            conv = {k: _text_argument(k, v) for k, v in conv.items()
                    if converters._DEFAULTS.get(k, _MISSING) is not v} or None
        self._pymysql_encoders = getattr(self, "encoders", dict(converters.encoders))
        self._pymysql_decoders = getattr(self, "decoders", dict(converters.decoders))
        self._defer = bool(defer_connect)
        self.max_allowed_packet = max_allowed_packet
        self.bind_address = bind_address
        self.connect_timeout = connect_timeout
        self.sql_mode = sql_mode
        self.init_command = init_command
        self.use_unicode = use_unicode
        self.server_public_key = server_public_key
        self.ssl = bool(ssl or ssl_ca or ssl_cert or ssl_key)
        if not unix_socket:
            # PyMySQL: TCP to `host` (default "localhost") unless unix_socket is
            # given; mysqlc.connect's mysqlclient rule would take the local socket
            options.setdefault("protocol", "tcp")
        super().__init__(
            host=None if unix_socket else host, user=user, password=password,
            database=database, port=port, unix_socket=unix_socket,
            charset=charset or DEFAULT_CHARSET, collation=collation,
            autocommit=autocommit, connect_timeout=connect_timeout,
            read_timeout=read_timeout, write_timeout=write_timeout,
            init_command=init_command, sql_mode=sql_mode, client_flag=client_flag,
            multi_statements=False, cursorclass=cursorclass, conv=conv,
            use_unicode=use_unicode, binary_prefix=False,
            local_infile=local_infile,
            ssl=ssl if isinstance(ssl, dict) or ssl is False or context else None,
            ssl_ca=ssl_ca, ssl_cert=ssl_cert, ssl_key=ssl_key,
            ssl_verify_cert=ssl_verify_cert, ssl_verify_identity=ssl_verify_identity,
            ssl_disabled=ssl_disabled, compress=bool(compress),
            server_public_key=server_public_key, program_name=program_name,
            named_pipe=named_pipe, read_default_file=read_default_file,
            read_default_group=read_default_group, **options)
        if host and unix_socket:
            self.host = host
        # PyMySQL's names: conn.encoders / conn.decoders are its converter dicts
        self.encoders = self._pymysql_encoders
        # a time.struct_time parameter is a DATETIME for PyMySQL (the core would
        # write the tuple it also is); with an encoder executemany takes the
        # multi-row INSERT text path, as PyMySQL does
        core_encoders = dict(self._encoders or {})
        core_encoders.setdefault(time.struct_time, _struct_time_literal)
        # sets are "(a,b)" for PyMySQL (for IN %s), mysqlclient's SET text 'a,b' for mysqlc
        ref = weakref.ref(self)

        def set_literal(value):
            conn = ref()
            if conn is None:
                raise InterfaceError(0, "connection is closed")
            return conn._param_escape(tuple(value))
        core_encoders.setdefault(set, set_literal)
        core_encoders.setdefault(frozenset, set_literal)
        # bytes are X'<hex>' (a binary string for the server, also after a
        # "_binary" the query has itself), as PyMySQL writes them
        core_encoders.setdefault(bytes, _hex_literal)
        core_encoders.setdefault(bytearray, _hex_literal)
        self._encoders = core_encoders
        self.decoders = self._pymysql_decoders
        self.password = self._password if isinstance(self._password, bytes) \
            else (self._password or "").encode("latin1", "replace")

    # ------------------------------------------------------------ connecting

    def _connect(self):
        if self.__dict__.get("_defer"):
            self._defer = False      # defer_connect: connect() opens it
            return
        super()._connect()

    def connect(self, sock: Any = None) -> None:
        """Open the connection (after ``defer_connect=True``, or again after
        :meth:`close`).  An open connection is closed first.

        `sock` (PyMySQL's): a connected ``socket.socket`` (TCP or unix) to run the
        session over instead of opening one; the handshake, TLS and compression run
        over it as over the core's own socket, and :meth:`close` closes it.  The core
        reads it through its Python transport (src/transport_py.c), one Python call
        per read, so it is slower than a connection the core opens.  A later
        ``ping(reconnect=True)`` opens a socket of its own to host/port.

        Raises TypeError when `sock` has no ``recv_into``/``sendall``, ValueError
        when it is closed; the errors of connecting otherwise (2013 when the peer
        ends the stream or stays silent for ``connect_timeout``).
        """
        if sock is not None:
            if not (hasattr(sock, "recv_into") and hasattr(sock, "sendall")
                    and hasattr(sock, "fileno")):
                raise TypeError("connect(sock): a socket object is required, not %r"
                                % type(sock).__name__)
            if sock.fileno() < 0:
                raise ValueError("connect(sock): the socket is closed")
        self._pymysql_closed = False
        core = self._conn
        if core is not None and core.open:
            core.close()
        self._defer = False
        if sock is None:
            self._connect()
            return
        self._open_stream = lambda core, *_args: _SocketStream(sock, core)
        try:
            self._connect()
        finally:
            del self._open_stream      # back to the class's None: the core's own socket

    def close(self) -> None:
        """Send COM_QUIT and close the socket.

        Raises
        ------
        Error
            ``Error("Already closed")`` when it was closed before (PyMySQL).
        """
        if self._pymysql_closed:
            raise Error("Already closed")
        self._pymysql_closed = True
        if self._conn is not None:
            super().close()

    @property
    def closed(self) -> bool:
        """True when the connection is not open (the negation of :attr:`open`)."""
        return not self.open

    def fileno(self) -> int:
        """The socket's file descriptor (int).

        Raises InterfaceError(0, "connection is closed") when not connected.
        """
        core = self._conn
        if core is None or not core.open:
            raise InterfaceError(0, "connection is closed")
        return core.fd

    def ping(self, reconnect: bool = False) -> None:
        """Check that the server is alive (COM_PING).

        Parameters
        ----------
        reconnect : bool, default False
            Open the connection again when it is closed or the ping fails
            (DeprecationWarning, as PyMySQL).

        Raises
        ------
        Error
            ``Error("Already closed")`` when not connected and not `reconnect`.
        OperationalError
            The ping failed and `reconnect` is False.
        """
        if reconnect:
            warnings.warn("The 'reconnect' argument is deprecated. Create a new "
                          "connection if you want to reconnect.", DeprecationWarning, 2)
        core = self._conn
        if core is None or not core.open:
            if not reconnect:
                raise Error("Already closed")
            self.connect()
            reconnect = False
        try:
            super().ping(False)
        except Exception:
            if not reconnect:
                raise
            self.connect()
            super().ping(False)

    def _infile_handler(self, filename):
        # PyMySQL sends the file a LOAD DATA LOCAL INFILE asks for; mysqlc sends
        # it when the client's own statement named exactly that file (a server
        # cannot ask for another one), besides mysqlc's infile= / local_infile_dir
        try:
            return super()._infile_handler(filename)
        except OperationalError:
            owner = self._owner() if self._owner is not None else None
            sql = owner.__dict__.get("_executed_sql") if owner is not None else None
            if isinstance(sql, str):
                sql = sql.encode(self.encoding, "surrogateescape")
            named = [_unquote(m.group(1)) for m in _LOCAL_INFILE.finditer(sql or b"")]
            if bytes(filename) not in named:
                raise
        path = os.fsdecode(filename)
        if not os.path.isfile(path):
            raise OperationalError(1017, "Can't find file '%s'" % path)
        return _connections._file_chunks(path)

    @property
    def _auth_plugin_name(self):
        core = self._conn
        return core.auth_plugin_name if core is not None else ""

    # ------------------------------------------------------------ results

    def _discard_pending(self, cursor=None):
        # PyMySQL reads and drops rows an unbuffered cursor left unread, with a
        # UserWarning, instead of mysqlc's "Commands out of sync"
        core = self._conn
        if core is not None and (core.rows_pending or core.cursor_open):
            owner = self._owner() if self._owner is not None else None
            if owner is not None and getattr(owner, "_unbuffered", False):
                warnings.warn("Previous unbuffered result was left incomplete",
                              UserWarning, 3)
                core.discard()
                return
        super()._discard_pending(cursor)

    @overload  # type: ignore[override]
    def cursor(self, cursor: None = None, *,
               prepared: bool = False) -> _base_cursors.BaseCursor: ...

    @overload
    def cursor(self, cursor: type[_CursorT], *, prepared: bool = False) -> _CursorT: ...

    def cursor(self, cursor: Optional[type[_base_cursors.BaseCursor]] = None, *,
               prepared: bool = False) -> _base_cursors.BaseCursor:

        """A new cursor of class `cursor` (default :attr:`cursorclass`)."""
        return super().cursor(cursor, prepared)

    def query(self, sql, unbuffered=False):
        """Run `sql` (str or bytes, no parameter substitution) and keep its result
        for :meth:`next_result`; returns the affected rows (PyMySQL's internal
        method)."""
        cur = (cursors.SSCursor if unbuffered else cursors.Cursor)(self)
        self._query_cursor = cur
        cur.execute(sql)
        return cur.rowcount

    def next_result(self, unbuffered=False):
        """Move the result of :meth:`query` to its next result set; returns the
        affected rows (0 when there is none)."""
        cur = getattr(self, "_query_cursor", None)
        if cur is None or not cur.nextset():
            return 0
        return cur.rowcount

    def kill(self, thread_id):
        """``KILL thread_id``; TypeError when `thread_id` is not an int."""
        if not isinstance(thread_id, int):
            raise TypeError("thread_id must be an integer")
        super().kill(thread_id)

    def set_charset(self, charset):
        """Deprecated alias of :meth:`set_character_set` (DeprecationWarning)."""
        warnings.warn("'set_charset' is deprecated, use 'set_character_set' instead",
                      DeprecationWarning, 2)
        self.set_character_set(charset)

    # ------------------------------------------------------------ information

    def _session_charset(self):
        return self.charset, self.encoding   # (PyMySQL's codec names)

    @property
    def encoding(self):
        """Python codec of the connection charset, with PyMySQL's names
        (``"utf8"`` for utf8mb4, ``"cp1252"`` for latin1)."""
        codec = self.__dict__.get("_codec", "utf-8")
        name = _PYMYSQL_ENCODINGS.get(self.charset, self.charset)
        return name if _same_codec(name, codec) else codec

    @encoding.setter
    def encoding(self, codec):
        self.__dict__["_codec"] = codec

    @property
    def host_info(self):
        """``"Localhost via UNIX socket"`` or ``"socket host:port"`` (PyMySQL's
        text); ``"Not connected"`` before connecting."""
        if not self.open:
            return "Not connected"
        if getattr(self, "_use_socket", False):
            return "Localhost via UNIX socket"
        return "socket %s:%d" % (self.host, self.port)

    def get_host_info(self):
        """:attr:`host_info`."""
        return self.host_info

    @property
    def server_version(self):
        """The version string of the server's handshake as sent, e.g. MariaDB's
        ``"5.5.5-10.11.6-MariaDB"`` (PyMySQL keeps the replication prefix that
        mysqlc removes); also :meth:`get_server_info`."""
        core = self._conn
        if core is None:
            return self.__dict__.get("_version_text")
        return core.server_version or self.__dict__.get("_version_text")

    @server_version.setter
    def server_version(self, text):
        self.__dict__["_version_text"] = text

    @property
    def server_thread_id(self):
        """``(thread_id,)``, as PyMySQL unpacks it from the handshake."""
        return (self._conn.thread_id,)

    @property
    def protocol_version(self):
        """Protocol version from the handshake (10)."""
        return self._conn.protocol_version

    @property
    def server_status(self):
        """SERVER_STATUS flags of the last OK/EOF packet."""
        return self._conn.server_status

    # ------------------------------------------------------------ literals (str)

    def _escape_string(self, s):
        # PyMySQL's escaping (its _escape_table: NUL \n \r \x1a ' " \ get a
        # backslash; only ' doubled under NO_BACKSLASH_ESCAPES) for the session's
        # sql_mode as mysqlc knows it (Connection._escape_mode); while uncertain a
        # value without a backslash reads the same in both modes with ' doubled, and
        # one with a backslash confirms the mode first (docs/compat.md "Escaping")
        self._sync_session()
        mode = self._escape_mode()
        if mode is None:
            if "\\" not in s:
                return s.replace("'", "''")
            mode = self._confirmed_escape_mode()
        if mode:
            return s.replace("'", "''")
        return converters.escape_string(s)

    def escape_string(self, s):
        """`s` (str) escaped for use between quotes, as ``str`` (PyMySQL);
        only ``'`` is doubled under NO_BACKSLASH_ESCAPES."""
        return self._escape_string(s)

    def string_literal(self, obj):
        # mysqlc's internal helper (set_sql_mode): bytes, charset-aware
        if not isinstance(obj, (str, bytes, bytearray, memoryview)):
            obj = str(obj)
        return b"'" + self._escaped(obj) + b"'"

    def escape(self, obj, mapping=None):
        """SQL literal of `obj` as ``str``, as PyMySQL writes it.

        str: quoted and escaped; bytes: ``X'<hex>'``; tuple/list/set/frozenset:
        ``(a,b,...)`` of the items escaped with `mapping`; anything else by
        ``mapping[type(obj)]`` (default :attr:`encoders`), falling back to
        ``mapping[str]``.

        Raises
        ------
        TypeError
            dict values (and types whose encoder refuses them); no encoder and no
            ``str`` entry in `mapping`.
        """
        if isinstance(obj, str):
            return "'%s'" % self._escape_string(obj)
        if isinstance(obj, (bytes, bytearray)):
            return "X'%s'" % bytes(obj).hex()
        if type(obj) in (tuple, list, set, frozenset):
            return "(%s)" % ",".join([self.escape(item, mapping) for item in obj])
        if mapping is None:
            mapping = self.encoders
        return converters.escape_item(obj, self.encoding, mapping)

    def _param_escape(self, obj, mapping=None):
        """:meth:`escape` as the SQL that execute() and callproc() send is built:
        str values escaped for the session's sql_mode (mysqlc.cursors._with_mode:
        as mysqlclient/PyMySQL when the mode is certain; confirmed with the server
        first when uncertain and the value has a backslash; a ``_<charset> X'..'``
        hex literal where it cannot be confirmed now; see docs/compat.md).  bytes
        are ``X'<hex>'`` (PyMySQL's rule); the rest as :meth:`escape`."""
        if isinstance(obj, str):
            lit = _connections.cursors._param_literal(self, str(obj))
            return lit.decode(self.encoding, "surrogateescape")
        if type(obj) in (tuple, list, set, frozenset):
            return "(%s)" % ",".join([self._param_escape(item, mapping) for item in obj])
        return self.escape(obj, mapping)

    def literal(self, obj):
        """Deprecated alias of :meth:`escape` (DeprecationWarning, as PyMySQL)."""
        warnings.warn("literal() is deprecated and will be removed in the next version.",
                      DeprecationWarning, 2)
        return self.escape(obj)


_MISSING = object()


class _SocketStream:
    """The core's Python transport (the interface src/transport_py.c documents) over a
    blocking socket object the caller connected: ``Connection.connect(sock)``."""

    def __init__(self, sock: Any, core: Any) -> None:
        self.sock = sock
        self.core = core
        self.errno = 0

    def fileno(self) -> int:
        return self.sock.fileno()

    def _fail(self, exc: OSError) -> int:
        self.errno = exc.errno or _errno.EIO
        return 3

    def wait(self, timeout: float) -> int:
        """Receive into the core's buffer: 0 received, 1 timed out, 2 end of stream,
        3 error (``errno`` set)."""
        view = self.core._transport_buffer(65536)
        try:
            self.sock.settimeout(None if timeout < 0 else timeout)
            n = self.sock.recv_into(view)
        except (socket.timeout, BlockingIOError):
            return 1
        except OSError as exc:
            return self._fail(exc)
        finally:
            view.release()
        if n == 0:
            return 2
        self.core._transport_received(n)
        return 0

    def write(self, data: bytes, timeout: float, block: bool) -> int:
        """Send `data`: 0 sent, 1 timed out, 3 error; ``block=False`` (COM_QUIT on
        close) never waits."""
        try:
            if block:
                self.sock.settimeout(None if timeout < 0 else timeout)
                self.sock.sendall(data)
            else:
                self.sock.setblocking(False)
                self.sock.send(data)
        except (socket.timeout, BlockingIOError):
            return 1
        except OSError as exc:
            return self._fail(exc)
        return 0

    def close(self) -> None:
        self.sock.close()

# FIELD_TYPE codes of the number columns: mysqlc's core hands a converter for them the
# wire bytes (mysqlclient's rule); PyMySQL decodes them as ASCII first
_NUMBER_TYPES = frozenset((0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0d))   # .. YEAR


def _text_argument(field_type, fn):
    """`fn` for the core's conv dict: for a number column (TINY .. LONGLONG, INT24,
    FLOAT, DOUBLE, YEAR) a callable gets the value's ASCII text, as PyMySQL's
    ``conv`` decoders do, instead of the bytes mysqlc's core hands over."""
    if field_type not in _NUMBER_TYPES or not callable(fn) or fn in (int, float, str, bytes):
        return fn

    def from_text(raw, _fn=fn):
        return _fn(raw.decode("ascii") if type(raw) is bytes else raw)
    from_text.__wrapped__ = fn
    return from_text
