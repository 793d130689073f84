"""The DB-API ``Connection`` class.

:class:`Connection` owns one ``mysqlc._core.Connection`` (attribute ``_conn``),
which speaks the protocol; this class adds the connection options, transactions,
character sets, converters and cursors.  Its surface follows mysqlclient's
``MySQLdb.connections.Connection`` first and PyMySQL's second (keyword spellings
of both are accepted).
"""

from __future__ import annotations

import collections
import getpass
import os
import threading
import re
import weakref
from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union, overload

from . import _charsets, _infile_sql, _optionfile, _secure, cursors
from . import _pipeline as _pipe_mod
from ._dsn import parse_dsn, redact_host
from ._state import _MODE_NOTE_CACHE, _NO_ERROR, _SEMICOLON, _busy
from .constants import CLIENT, CR, SERVER_STATUS
from .converters import _require_core, _split_conv, _str_fallback, conversions
from .errors import (
    DatabaseError, DataError, Error, IntegrityError, InterfaceError, InternalError,
    NotSupportedError, OperationalError, ProgrammingError, Warning,
)

if TYPE_CHECKING:
    import ssl as _ssl
    from collections.abc import Callable, Mapping
    from types import TracebackType

    _CursorT = TypeVar("_CursorT", bound=cursors.BaseCursor)
    _ConnT = TypeVar("_ConnT", bound="Connection")

__all__ = ["Connection"]

_IDENTIFIER = re.compile(r"\A[A-Za-z0-9_]+\Z")
_NUMERIC_PART = re.compile(r"\d+")
_DEFAULT_MAX_ALLOWED_PACKET = 16 * 1024 * 1024
_DEFAULT_PORT = 3306
#: PyMySQL's default connect_timeout (seconds): a listener that never answers
#: must not hang connect() forever.
_DEFAULT_CONNECT_TIMEOUT = 10
#: Where libmysqlclient / MariaDB Connector/C builds look for the local server's
#: socket when neither unix_socket nor MYSQL_UNIX_PORT names one (first existing).
_DEFAULT_SOCKETS = ("/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock",
                    "/tmp/mysql.sock", "/var/lib/mysql/mysql.sock")
# MariaDB >= 10 prefixes its version with "5.5.5-" in the handshake for old
# replication clients; MariaDB Connector/C (and so mysqlclient) strips it.
_RPL_VERSION_HACK = "5.5.5-"
# Collation ids 1-247 mean the same on MySQL and MariaDB; above that they diverge
# (MySQL: gb18030 248-250, utf8mb4_*_0900_* 255-323).
_MAX_SHARED_COLLATION_ID = 247

# (mbminlen, mbmaxlen) for get_character_set_info(); single-byte sets are (1, 1).
_MBLEN = {
    "utf8mb4": (1, 4), "utf8mb3": (1, 3), "utf8": (1, 3), "big5": (1, 2), "gbk": (1, 2),
    "gb2312": (1, 2), "gb18030": (1, 4), "sjis": (1, 2), "cp932": (1, 2), "euckr": (1, 2),
    "ujis": (1, 3), "eucjpms": (1, 3),
}


def _canonical_charset(name):
    return "utf8mb3" if name == "utf8" else name


def _resolve_charset(charset, collation):
    """Validate the charset/collation options.

    Returns ``(charset, codec, handshake_id, set_names)`` where ``set_names`` is
    the ``SET NAMES`` statement to run after connecting (``None`` when the
    handshake collation already is the one asked for).  Raises NotSupportedError
    for unknown or unusable names.
    """
    if collation and not _IDENTIFIER.match(collation):
        raise ProgrammingError(0, "invalid collation name %r" % (collation,))
    if not charset:
        charset = _charsets.charset_of_collation(collation) if collation else None
        if collation and charset is None:
            raise NotSupportedError(0, "unknown collation %r; give charset= too" % (collation,))
        charset = charset or "utf8mb4"
    charset = charset.lower()
    if not _IDENTIFIER.match(charset):
        raise ProgrammingError(0, "invalid character set name %r" % (charset,))
    entry = _charsets.CHARSETS.get(charset)
    if entry is None:
        raise NotSupportedError(
            0, "character set %r is not supported as a connection character set (known: %s)"
            % (charset, ", ".join(sorted(_charsets.CHARSETS))))
    default_id, codec = entry
    if not collation:
        return charset, codec, default_id, None
    cid = _charsets.COLLATIONS.get(collation)
    if (cid is not None and cid <= _MAX_SHARED_COLLATION_ID
            and _charsets.COLLATION_CHARSETS.get(cid) == _canonical_charset(charset)):
        return charset, codec, cid, None
    # An id that does not fit the handshake's byte, one that only one of the two
    # servers knows (a server ignores an unknown handshake id and keeps its own
    # default), a name unknown to us, or a collation of another charset: send the
    # charset's default and let the server apply (or reject) the collation.
    return charset, codec, default_id, "SET NAMES %s COLLATE %s" % (charset, collation)


def _collation_name(charset, cid):
    """The name of collation id `cid` (the handshake's) of `charset`; None when the id
    is not known here (the charset's default collation is then meant)."""
    canonical = _canonical_charset(charset)
    names = [n for n, i in _charsets.COLLATIONS.items()
             if i == cid and _charsets.COLLATION_CHARSETS.get(i) == canonical]
    prefix = charset + "_"
    for name in names:
        if name.startswith(prefix):
            return name
    return names[0] if names else None


#: Bytes read at a time for LOAD DATA LOCAL INFILE; the core sends them in packets below
#: the session's max_allowed_packet (src/results.c), whatever this size.
_INFILE_CHUNK = 1 << 20

#: Charsets whose multibyte characters can contain the byte 0x5C: client-side
#: escaping is only safe when the server really uses them (see __init__).
_ESCAPE_SENSITIVE_CHARSETS = frozenset(("big5", "gbk", "gb18030", "sjis", "cp932"))


def _file_chunks(path):
    with open(path, "rb") as f:
        while True:
            chunk = f.read(_INFILE_CHUNK)
            if not chunk:
                return
            yield chunk


def _infile_chunks(data):
    """Chunks of the data given with ``execute(..., infile=...)``: bytes-like, a
    binary file object (anything with ``read``), or an iterable of bytes."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        view = memoryview(data)
        for i in range(0, len(view), _INFILE_CHUNK):
            yield view[i:i + _INFILE_CHUNK]
        return
    if isinstance(data, str):
        raise ProgrammingError(0, "infile data must be bytes or a binary file, not str")
    read = getattr(data, "read", None)
    if read is not None:
        while True:
            chunk = read(_INFILE_CHUNK)
            if not chunk:
                return
            yield chunk
        return
    for chunk in data:
        yield chunk


def _to_bytes(value, encoding, name):
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        if name != "password":
            return value.encode(encoding)
        try:
            return value.encode(encoding)
        except UnicodeEncodeError as exc:
            # its .object (and args) would be the password itself
            where, reason = exc.start, exc.reason
        raise ValueError("password cannot be encoded as %s: its character %d (%s); give "
                         "it as bytes" % (encoding, where + 1, reason))
    raise TypeError("%s must be str or bytes, not %s" % (name, type(value).__name__))


def _timeout(value, name):
    # mysqlclient treats 0 as "no timeout"; the core wants a positive float or None.
    if value is None or value == 0:
        return None
    value = float(value)
    if not value > 0:
        raise ValueError("%s must be a positive number of seconds or None" % name)
    return value


def _default_port():
    """libmysqlclient's default TCP port: ``MYSQL_TCP_PORT``, else 3306."""
    value = os.environ.get("MYSQL_TCP_PORT")
    if value:
        try:
            port = int(value)
        except ValueError:
            raise ProgrammingError(0, "MYSQL_TCP_PORT=%r is not a port number" % value) from None
        if 0 < port < 65536:
            return port
        raise ProgrammingError(0, "MYSQL_TCP_PORT=%r is not a port number" % value)
    return _DEFAULT_PORT


def _default_socket():
    """libmysqlclient's socket for ``localhost``: ``MYSQL_UNIX_PORT``, else the
    first of :data:`_DEFAULT_SOCKETS` that exists (else the first of them)."""
    path = os.environ.get("MYSQL_UNIX_PORT")
    if path:
        return path
    for path in _DEFAULT_SOCKETS:
        if os.path.exists(path):
            return path
    return _DEFAULT_SOCKETS[0]


# ---------------------------------------------------------------- interrupted commands

#: Seconds the caller waits, at most, for ``KILL QUERY`` over the side connection.
_KILL_BUDGET = 2.0


def _abandon_hook(owner):
    """The core's ``on_abandon`` for the Connection `owner` (held weakly: the core must not
    keep its Connection alive).  The C core calls it, once per connection, when an
    interrupt (Ctrl-C, or another signal handler's exception) or a read timeout closes the
    socket in the middle of a command -- from the packet layer and the transport, so every
    command path (cursors of every kind, prepared statements, server-side cursors, the
    columnar readers, LOAD DATA LOCAL, executemany, the PyMySQL flavour, Connection
    methods) is covered without a wrapper around each call.  A write timeout, a lost
    connection or an error the server reported call nothing: the server is not running
    a statement nobody will read."""
    ref = weakref.ref(owner)

    def on_abandon(thread_id):
        conn = ref()
        if conn is not None:
            conn._kill_query_bounded(thread_id)
    return on_abandon


class _Arguments(dict):
    """The keyword arguments of a connection (``Connection._init_args``, used to
    open more connections like it): a dict whose repr hides the password."""

    def __repr__(self):
        return repr({k: ("***" if k in ("password", "passwd") and v else v)
                     for k, v in self.items()})

    __str__ = __repr__


# Added to session_track_system_variables at connect unless tracked already ('*': all);
# sql_mode assigned its own value so that the server reports it at once.
_TRACK_SQL_MODE = (
    b"session_track_system_variables=IF(FIND_IN_SET('sql_mode',"
    b"@@session_track_system_variables) OR @@session_track_system_variables='*',"
    b"@@session_track_system_variables,CONCAT_WS(',',NULLIF("
    b"@@session_track_system_variables,''),'sql_mode')), sql_mode=@@sql_mode")

# Statements after which the sql_mode is not known for certain (Connection._note_statement):
# CALL and EXECUTE (a procedure, a prepared statement: any of these), SET STATEMENT
# (MariaDB reports the statement's sql_mode, not the one restored after it), compound
# statements run outside a stored program (BEGIN NOT ATOMIC, IF, CASE, LOOP, REPEAT,
# WHILE, FOR), executable comments, and any text naming session_track (a change of
# session_track_system_variables may stop the reports).  Matched on the lower-cased
# text; texts longer than _MODE_SCAN_LIMIT are not scanned and count as such.
_RE_MODE_LEAD = re.compile(
    rb"(?:\s+|/\*.*?\*/|(?:#|--[ \t])[^\n]*(?:\n|\Z))*"
    rb"(?:call|execute|set\s+statement|if|case|loop|repeat|while|for)\b", re.S)
_MODE_LEAD_WORDS = (b"call", b"execute", b"set", b"if", b"case", b"loop", b"repeat",
                    b"while", b"for")
_MODE_SCAN_LIMIT = 65536
# Statements that may change character_set_client (SET NAMES, SET CHARACTER SET, SET
# CHARSET, SET [@@][session.]character_set_client): backslash escapes are only safe in
# the charset the server parses the statement in, and the session may not report the
# change (a tracking list without character_set_client: the server's default, or changed
# by a routine); the next confirmation checks that it is still reported.
_RE_CHARSET_CHANGE = re.compile(
    rb"\bset\b.*?\b(?:names|charset|character\s+set|character_set_client)\b", re.S)
_STATUS_NBE = SERVER_STATUS.SERVER_STATUS_NO_BACKSLASH_ESCAPES
# quoted strings, quoted identifiers and comments (not executable ones) of a statement
# text, with backslash escapes and without (Connection._multi_statement)
_RE_SQL_SKIP = tuple(re.compile(
    rb"'(?:[^'%(e)s]|%(x)s'')*'|\"(?:[^\"%(e)s]|%(x)s\"\")*\"|`(?:[^`]|``)*`"
    rb"|/\*(?![!M]).*?\*/|(?:#|--[ \t])[^\n]*" % {b"e": e, b"x": x}, re.S)
    for e, x in ((rb"\\", rb"\\.|"), (b"", b"")))

_RESYNC_SESSION = (b"SET sql_mode=@@sql_mode, character_set_client=@@character_set_client, "
                   b"character_set_connection=@@character_set_connection, "
                   b"character_set_results=@@character_set_results")

# added to each confirmation of the sql_mode: whether character_set_client is still reported
_CONFIRM_CHARSET = b", character_set_client=@@character_set_client"

_ALIASES = {"password": "passwd", "passwd": "password", "database": "db", "db": "database"}
_SSL_DICT_KEY = {"ssl_ca": "ca", "ssl_capath": "capath", "ssl_cert": "cert",
                 "ssl_key": "key", "ssl_cipher": "cipher", "ssl_mode": "ssl_mode",
                 "tls_version": "tls_version", "ssl_verify_identity": "verify_identity"}


def _init_commands(value):
    """`init_command` as a tuple of statements (it is a str, or a tuple after an
    option file added its own)."""
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _unset(value, default):
    return value is None or (type(value) is type(default) and value == default)


def _is_dsn(host):
    # any "scheme://" counts, so that a DSN of another scheme gets parse_dsn's error
    # (which hides the password) instead of a host-name lookup error quoting it
    return isinstance(host, str) and "://" in host


def _merge_sources(given, defaults):
    """The connection arguments with a DSN (given as `host`) and the option files
    (`read_default_file`, `read_default_group`) applied, or None when there are
    neither.

    Explicit arguments win (libmysqlclient's rule: an option file fills only
    what the call left unset), then the DSN, then the files.  An argument is
    unset when it equals its default in the signature (`defaults`).
    """
    host = given["host"]
    dsn = _is_dsn(host)
    rdf, rdg = given["read_default_file"], given["read_default_group"]
    if not (dsn or rdf or rdg):
        return None
    merged = dict(given)
    merged["read_default_file"] = merged["read_default_group"] = None
    sources = []
    if dsn:
        merged["host"] = None
        try:
            parsed = parse_dsn(host)
        except ValueError as exc:
            raise ProgrammingError(0, str(exc)) from None   # parse_dsn's text is redacted
        if parsed.get("host") is None and "unix_socket" not in parsed:
            parsed.setdefault("host", "localhost")
        sources.append(("DSN", parsed))
    if rdf or rdg:
        sources.append(("option file", _optionfile.connect_options(rdf, rdg)))
    ssl = given["ssl"] if isinstance(given["ssl"], dict) else {}
    # an ssl.SSLContext given is the whole TLS configuration: files add nothing to it
    # (PyMySQL reads the files' ssl-* options only into an ssl dict)
    context = _secure._is_ssl_context(given["ssl"])
    for what, source in sources:
        for key, value in source.items():
            if key not in defaults:
                raise ProgrammingError(0, "unknown connect() option %r in the %s" % (key, what))
            if key == "init_command" and not _unset(merged[key], defaults[key]):
                # libmysqlclient keeps a list of init commands: the file's runs too,
                # after the one given
                merged[key] = _init_commands(merged[key]) + _init_commands(value)
                continue
            if not _unset(merged[key], defaults[key]):
                continue
            alias = _ALIASES.get(key)
            if alias is not None and not _unset(merged[alias], defaults[alias]):
                continue
            if _SSL_DICT_KEY.get(key) in ssl:
                continue
            if context and (key.startswith(("ssl_", "tls_")) or key == "ssl"):
                continue
            merged[key] = value
    return merged


_SIGNATURE_DEFAULTS = []


def _signature_defaults():
    """Parameter name -> default value of ``Connection.__init__``."""
    if not _SIGNATURE_DEFAULTS:
        import inspect
        _SIGNATURE_DEFAULTS.append({
            name: p.default for name, p in
            inspect.signature(Connection.__init__).parameters.items() if name != "self"})
    return _SIGNATURE_DEFAULTS[0]


class Connection:
    """A connection to a MySQL or MariaDB server (PEP 249).

    ``mysqlc.connect``, ``mysqlc.Connect`` and ``mysqlc.Connection`` are this class.
    Keyword arguments are recommended; the first six may be positional, in
    mysqlclient's order.

    Parameters
    ----------
    host : str, optional
        Host name or IP address, or a DSN ``mysql://user:password@host:port/db?opt=v``
        (:func:`mysqlc.columnar.parse_dsn`, the parser of ``read_sql``; also
        ``mariadb://``; its options are arguments of this call; arguments given
        explicitly win over the DSN's).  ``None``, ``""`` or ``"localhost"`` mean the
        local server over its unix socket, as in libmysqlclient: `unix_socket`, else
        the environment variable ``MYSQL_UNIX_PORT``, else the first existing of
        ``/run/mysqld/mysqld.sock``, ``/var/run/mysqld/mysqld.sock``,
        ``/tmp/mysql.sock``, ``/var/lib/mysql/mysql.sock`` (OperationalError 2002
        naming the path when there is none); `port` does not change that, use
        ``protocol="tcp"`` to reach ``localhost`` over TCP (at 127.0.0.1).
        ``127.0.0.1`` and other hosts are TCP.
    user : str or bytes, optional
        Account name; default the login name of the current OS user (as
        libmysqlclient and PyMySQL).
    password : str or bytes, optional
        Password (``str`` is sent UTF-8 encoded).  Alias: `passwd`.
    database : str or bytes, optional
        Default database.  Alias: `db`.
    port : int, optional
        TCP port; 0 or None mean the environment variable ``MYSQL_TCP_PORT``, else
        3306 (libmysqlclient's rule).  ProgrammingError for a ``MYSQL_TCP_PORT``
        that is not a port number; TypeError for a ``str`` such as ``"3307"`` (as
        mysqlclient, which takes an int; a DSN's or option file's port is converted).
    unix_socket : str, optional
        Path of the server's unix socket, used when `host` is None or
        ``"localhost"`` (as mysqlclient; other hosts use TCP).
    protocol : {None, "tcp", "socket"}, optional
        Transport, as MySQL's ``--protocol`` (also an option file's
        ``protocol=``): ``"tcp"`` makes ``localhost`` a TCP connection to
        127.0.0.1, ``"socket"`` uses the unix socket whatever `host` says.  None:
        the socket for ``localhost``, TCP otherwise.  Others raise
        NotSupportedError.
    charset : str, default "utf8mb4"
        Connection character set (``utf8``/``utf8mb3``, ``utf8mb4``, ``latin1``,
        ``ascii``, ``binary``, ``gbk``, ``big5``, ``sjis``, ``cp932``, ... see
        ``mysqlc._charsets.CHARSETS``).  Raises NotSupportedError for an unknown one.
    collation : str, optional
        Connection collation.  Sent in the handshake when its id is one that MySQL
        and MariaDB share (1-247); otherwise (MySQL's ``utf8mb4_0900_*``, MariaDB's
        ``*_nopad_*`` and ``*_uca1400_*``, names unknown to mysqlc) the handshake
        uses the charset's default and ``SET NAMES charset COLLATE collation`` runs
        after connecting.  Without `charset`, the charset is taken from the
        collation name.
    autocommit : bool or None, default False
        Autocommit mode to set after connecting (PEP 249: off).  ``SET autocommit``
        is sent only when the server's status differs.  None keeps the server's
        default (as mysqlclient).
    session_track : bool, default True
        Ask for session state tracking (CLIENT_SESSION_TRACK) when the server offers
        it: ``USE db`` and ``SET NAMES x`` run as SQL then update :attr:`database`,
        :attr:`charset` and :attr:`encoding`, and sql_mode is added to the session's
        ``session_track_system_variables`` (in the same ``SET`` as autocommit) so that
        the NO_BACKSLASH_ESCAPES hint follows it.  False: neither (docs/compat.md).
    pipelining : bool, default True
        Allow more than one command in flight: :meth:`pipeline` blocks send each
        statement at once, and MariaDB's one-trip prepare sends COM_STMT_PREPARE and
        its first COM_STMT_EXECUTE in one write.  False (for proxies that break on
        pipelined commands: ProxySQL "Packet received out-of-order", Aurora MySQL 2):
        one command at a time, the same results; a pipeline block still works, each
        execute waiting for its answer.  COM_STMT_BULK_EXECUTE is one command and is
        not affected.  Also ``?pipelining=false`` in a DSN and ``loose-pipelining=0``
        in an option file (docs/batching.md "Pipelining").
    connect_timeout : float, seconds, default 10
        Timeout for connecting, including the handshake (PyMySQL's default of
        10 s: a listener that accepts and never answers does not hang the call).
        A server that does not greet in time raises OperationalError 2013 "Lost
        connection to server at 'reading initial communication packet' (read timed
        out after 10 s)", libmysqlclient's wording.  None or 0: no timeout.
    read_timeout, write_timeout : float, seconds, optional
        Timeouts for each read and for each write.  None or 0: no timeout.
    init_command : str, optional
        SQL run once after connecting (before `sql_mode` and `autocommit`, as
        mysqlclient); all its results are discarded.  An option file's
        ``init-command`` runs after it (libmysqlclient keeps a list).
    sql_mode : str, optional
        Runs ``SET SESSION sql_mode = '<sql_mode>'`` after connecting.
    client_flag : int, default 0
        Extra ``CLIENT_*`` capability flags (``mysqlc.constants.CLIENT``).  The core
        honours ``FOUND_ROWS``, ``MULTI_STATEMENTS``, ``IGNORE_SPACE``,
        ``INTERACTIVE``, ``NO_SCHEMA`` and ``ODBC``; others are ignored.
    multi_statements : bool, default True
        Ask for ``CLIENT_MULTI_STATEMENTS`` (mysqlclient's default; PyMySQL's is off).
    cursorclass : type, default :class:`mysqlc.cursors.Cursor`
        Class used by :meth:`cursor`.
    conv : dict, optional
        Conversion dict like ``mysqlc.converters.conversions``; entries that
        differ from the defaults become user decoders/encoders (see
        :mod:`mysqlc.converters`).
    use_unicode : bool, default True
        False: every column that would be ``str`` -- CHAR, VARCHAR, TEXT, ENUM, SET,
        JSON, string expressions -- is ``bytes`` (the bytes the server sent, in the
        connection's character set), with the text and the binary (prepared)
        protocol, as mysqlclient's ``use_unicode=False``; numbers, DECIMAL, dates and
        times keep their types, column names stay ``str``.  Columnar output
        (``read_sql``, ``fetch_arrow_table``) then has binary columns for them.
    binary_prefix : bool, default False
        Write bytes parameters as ``_binary'...'`` (mysqlclient's option).
    local_infile : bool, default False
        Allow ``LOAD DATA LOCAL INFILE``.  Off: the client does not offer
        CLIENT_LOCAL_FILES and refuses any file request (nothing is read or sent).
        On: the server may read only what the user allows: data passed for the
        statement (``cursor.execute(sql, infile=file_or_bytes)``); with
        `local_infile_dir`, files under it; without it, exactly the file that a
        ``LOAD DATA LOCAL INFILE '<name>'`` statement of the query the client sent
        names (the server's request must be that name, byte for byte; see
        :mod:`mysqlc._infile_sql` for how the literal is read; the rule of
        mysql-connector-python 9.3 and MariaDB Connector/Python 2.0).  Any other
        request is refused with OperationalError 2068 and no byte of the file is
        sent.  Files stream in 1 MiB chunks.
    local_infile_dir : str, optional
        Directory whose files (after resolving symlinks and ``..``) the server may
        ask for with ``LOAD DATA LOCAL INFILE`` when `local_infile` is on (then only
        those).  ProgrammingError when it is not an existing directory.
    prepared_cache_size : int, default 64
        Server-side prepared statements kept per connection by
        ``cursor(prepared=True)`` (LRU; COM_STMT_CLOSE on eviction).
    long_data_threshold : int, default 1048576
        str/bytes parameters of prepared statements longer than this (bytes or
        characters) are sent with COM_STMT_SEND_LONG_DATA.
    ssl : dict, bool or ssl.SSLContext, optional
        TLS options as mysqlclient and PyMySQL take them: ``ca``, ``capath``,
        ``cert``, ``key``, ``cipher``, ``check_hostname``; ``True``: TLS required,
        unverified; ``False``: no TLS; see
        :func:`mysqlc._secure.resolve_tls` for how they choose the mode.  An
        ``ssl.SSLContext`` (PyMySQL's and aiomysql's form, e.g.
        ``ssl.create_default_context(cafile=...)``): TLS is required and runs
        through the context itself (Python's ``ssl`` over memory BIOs), which
        verifies as its ``verify_mode`` and ``check_hostname`` say, with SNI and the
        host-name check for `host`; the other ``ssl_*`` options, ``tls_version``
        and ``ssl_fingerprint`` cannot be combined with it (ProgrammingError), and
        option files add no TLS option to it.  A verification failure is
        OperationalError 2026 "SSL connection error: certificate verify failed:
        <reason>".
    ssl_mode : str, optional
        ``DISABLED``, ``PREFERRED``, ``REQUIRED``, ``VERIFY_CA``,
        ``VERIFY_IDENTITY`` (MySQL's names).  Default without any TLS option:
        ``PREFERRED`` (libmysqlclient's default): over TCP, TLS when the server
        offers it -- encrypted but not verified, as no CA is known -- and plaintext
        when it does not; a unix socket stays plaintext.  ``ssl_mode="DISABLED"``,
        ``ssl=False`` or ``ssl_disabled=True`` turn TLS off.  :meth:`tls_info` tells
        what a connection got.  With ``REQUIRED`` or stricter a server without TLS is
        refused before any credential is sent (OperationalError 2026).
    ssl_ca, ssl_capath, ssl_cert, ssl_key, ssl_cipher : str, optional
        Keyword forms of the ``ssl`` dict's keys.
    ssl_verify_cert, ssl_verify_identity, ssl_disabled : bool, optional
        PyMySQL's switches.
    tls_version : str, optional
        Allowed TLS versions, e.g. ``"TLSv1.2,TLSv1.3"`` (default: 1.2 and newer).
    ssl_fingerprint : str or sequence of str, optional
        SHA-256 fingerprint(s) of the server's certificate (hex, colons allowed;
        MariaDB Connector/C's ``tls_fp``): the certificate must match one, checked
        right after the TLS handshake before any credential is sent; the CA chain
        and host name are then not checked.  Implies ``VERIFY_CA`` when no
        ``ssl_mode`` is given.
    compress : bool, default False
        zlib compressed protocol (CLIENT_COMPRESS), when the server offers it.
    server_public_key : str or bytes, optional
        The server's RSA public key (PEM text or a file path) for
        caching_sha2_password / sha256_password over plain TCP.
    get_server_public_key : bool, default False
        Allow asking the server for its RSA public key over plain TCP (a
        man-in-the-middle could substitute its own key; MySQL's option name).
    enable_cleartext_plugin : bool, default False
        Allow mysql_clear_password over an unencrypted TCP connection.
    program_name : str, optional
        Sent as the ``program_name`` connection attribute (default: the script's
        name).
    conn_attrs : dict, optional
        Extra connection attributes (str -> str).
    read_default_file : str, optional
        An option file (``my.cnf`` format: groups, quotes and escapes, ``!include``,
        ``!includedir``, ``loose-``; see :mod:`mysqlc._optionfile`) read instead of
        the default files; a file that does not exist is ignored (as mysqlclient).
        Its ``[client]``, ``[client-server]`` and ``[client-mariadb]`` groups and
        `read_default_group` fill the arguments this call leaves unset (explicit
        arguments win, then a DSN, then the file): host, port, user, password,
        database, socket, protocol, default-character-set, init-command,
        connect-timeout, compress, local-infile, ssl-ca/capath/cert/key/cipher,
        ssl-mode, ssl-verify-server-cert, tls-version, server-public-key,
        get-server-public-key, enable-cleartext-plugin.  ProgrammingError for a
        value that cannot be used (``port=abc``).
    read_default_group : str, optional
        A group read as well as the client groups.  Given without
        `read_default_file`, the default files are read: ``/etc/my.cnf``,
        ``/etc/mysql/my.cnf``, ``$MARIADB_HOME/my.cnf`` (or ``$MYSQL_HOME``),
        ``~/.my.cnf`` (MariaDB Connector/C's list, as mysqlclient on Debian).
    named_pipe
        Not supported (Windows): a true value raises NotSupportedError.
    auth_plugin : str, optional
        Accepted and ignored: the core follows the server's auth-switch requests.

    Raises
    ------
    OperationalError
        Cannot connect (2002 unix socket, 2003 TCP, also on timeout), access
        denied (1045), lost connection during the handshake (2013), unknown
        database (1049).  No message or repr shows the password.
    ProgrammingError
        A malformed DSN, option-file value or ``MYSQL_TCP_PORT``; a
        `local_infile_dir` that is not a directory.
    NotSupportedError
        An option mysqlc does not implement was asked for.
    ImportError
        The C extension ``mysqlc._core`` is not built.

    Notes
    -----
    ``with conn:`` closes the connection on exit (mysqlclient 2.x behaviour).
    """

    #: Cursor class used when neither ``cursorclass`` nor ``cursor(cls)`` is given.
    default_cursor = cursors.Cursor

    Warning = Warning
    Error = Error
    InterfaceError = InterfaceError
    DatabaseError = DatabaseError
    DataError = DataError
    OperationalError = OperationalError
    IntegrityError = IntegrityError
    InternalError = InternalError
    ProgrammingError = ProgrammingError
    NotSupportedError = NotSupportedError

    _conn = None
    #: True once close() was called (until ping(reconnect=True) reconnects)
    _closed = False
    #: the message of OperationalError(2006, ...) after close(): mysqlclient's is
    #: ``mysql_error()`` of the closed handle ('' after an orderly close)
    _closed_message = ""
    #: (errno, message, sqlstate or None) of the last command (see errno())
    _last_error = _NO_ERROR
    #: why the last KILL QUERY after an interrupt did not happen (None: it did), for tests
    _kill_query_failed = None
    _socket_path = None

    def __init__(self, host: Optional[str] = None, user: Union[str, bytes, None] = None,
                 password: Union[str, bytes, None] = None,
                 database: Union[str, bytes, None] = None,
                 port: Optional[int] = 0,
                 unix_socket: Optional[str] = None, *,
                 passwd: Union[str, bytes, None] = None, db: Union[str, bytes, None] = None,
                 charset: Optional[str] = None,
                 collation: Optional[str] = None, autocommit: Optional[bool] = False,
                 session_track: bool = True, pipelining: bool = True,
                 connect_timeout: Optional[float] = _DEFAULT_CONNECT_TIMEOUT,
                 read_timeout: Optional[float] = None, write_timeout: Optional[float] = None,
                 init_command: Optional[str] = None, sql_mode: Optional[str] = None,
                 client_flag: int = 0, multi_statements: bool = True,
                 cursorclass: Optional[type[cursors.BaseCursor]] = None,
                 conv: Optional[Mapping[Any, Any]] = None,
                 use_unicode: bool = True, binary_prefix: bool = False,
                 local_infile: bool = False,
                 local_infile_dir: Optional[str] = None, prepared_cache_size: int = 64,
                 long_data_threshold: int = 1 << 20,
                 ssl: Union[Mapping[str, Any], bool, _ssl.SSLContext, None] = None,
                 ssl_mode: Optional[str] = None, ssl_ca: Optional[str] = None,
                 ssl_capath: Optional[str] = None, ssl_cert: Optional[str] = None,
                 ssl_key: Optional[str] = None,
                 ssl_cipher: Optional[str] = None, ssl_verify_cert: Optional[bool] = None,
                 ssl_verify_identity: Optional[bool] = None,
                 ssl_disabled: Optional[bool] = None,
                 tls_version: Union[str, list[str], tuple[str, ...], None] = None,
                 ssl_fingerprint: Union[str, list[str], tuple[str, ...], None] = None,
                 compress: bool = False,
                 server_public_key: Union[str, bytes, None] = None,
                 get_server_public_key: bool = False,
                 enable_cleartext_plugin: bool = False, program_name: Optional[str] = None,
                 conn_attrs: Optional[Mapping[str, str]] = None,
                 named_pipe: bool = False, read_default_file: Optional[str] = None,
                 read_default_group: Optional[str] = None,
                 auth_plugin: Optional[str] = None, protocol: Any = None) -> None:
        # the arguments, for opening more connections like this one (read_sql partitions)
        self._init_args = _Arguments((k, v) for k, v in locals().items() if k != "self")
        merged = _merge_sources(self._init_args, _signature_defaults())
        if merged is not None:   # a DSN or option files: connect with what they give
            Connection.__init__(self, **merged)
            return
        core_mod = _require_core()
        if password is None:
            password = passwd
        if database is None:
            database = db
        self._secure_options = dict(
            _secure.resolve_tls(ssl, ssl_mode, ssl_ca, ssl_capath, ssl_cert, ssl_key,
                                ssl_cipher, ssl_verify_cert, ssl_verify_identity,
                                ssl_disabled, tls_version, ssl_fingerprint),
            compress=bool(compress),
            server_public_key=_secure.load_public_key(server_public_key),
            allow_public_key_request=bool(get_server_public_key),
            allow_cleartext=bool(enable_cleartext_plugin),
            attrs=_secure.connect_attrs(program_name, conn_attrs),
            auth_plugins=_secure.AUTH_PLUGINS)
        if named_pipe:
            raise NotSupportedError(0, "the named_pipe option is not supported (no Windows)")
        if protocol is not None:
            protocol = str(protocol).lower()
            if protocol not in ("tcp", "socket"):
                raise NotSupportedError(
                    0, "protocol %r is not supported (tcp or socket)" % (protocol,))
        self._protocol = protocol
        self._use_unicode = bool(use_unicode)
        # the escaping mode a caller read for the statement it formats next, in the same
        # state of the session (mysqlc.aio's statement path): BaseCursor._format takes it
        # instead of reading it again; the caller clears it
        self._mode_hint = None

        self.charset, self.encoding, self._handshake_collation, self._set_names = \
            _resolve_charset(charset, collation)
        if self._set_names is None and self.charset in _ESCAPE_SENSITIVE_CHARSETS:
            # A server that does not know the handshake's collation id (or runs with
            # character-set-client-handshake=OFF) silently keeps its own charset; for
            # these charsets escaping would then be unsafe (a trail byte 0x5C read as
            # a backslash), so the charset is set explicitly and an unknown one fails.
            self._set_names = "SET NAMES %s" % self.charset
        self.collation = collation or None

        if host in (None, ""):
            host = "localhost"
        if isinstance(host, str) and "@" in host:
            # "user:password@host/db": a DSN without its mysql://, or a URL whose
            # password has an unescaped '@'; a host-name lookup error would quote it
            raise ProgrammingError(
                0, "host %r is not a host name: a DSN starts with mysql:// "
                "(mysql://user:password@host:port/db, '@' in a password %%-escaped as %%40)"
                % (redact_host(host),))
        self.host = host
        if port is not None and not isinstance(port, int):
            raise TypeError("port must be an int, not %s" % type(port).__name__)
        self.port = int(port or _default_port())
        self.unix_socket = unix_socket
        if user is None:
            try:
                user = getpass.getuser()
            except Exception:   # no login name (e.g. a uid without passwd entry)
                user = ""
        self.user = user
        self.database = database
        self._session_track = bool(session_track)
        self._pipelining = bool(pipelining)
        if not self._pipelining:
            self._one_trip = False   # MariaDB's one-trip prepare is two commands in flight
        self.cursorclass = cursorclass or self.default_cursor
        self.messages = []

        self._password = password
        self._init_command = init_command
        self._sql_mode = sql_mode
        self._autocommit_option = autocommit
        self._binary_prefix = bool(binary_prefix)
        self._local_infile = bool(local_infile)
        self._local_infile_dir = (os.path.realpath(os.fspath(local_infile_dir))
                                  if local_infile_dir is not None else None)
        if self._local_infile_dir is not None and not os.path.isdir(self._local_infile_dir):
            raise ProgrammingError(0, "local_infile_dir %r is not a directory"
                                   % (os.fspath(local_infile_dir),))
        self._pending_infile = None        # data given to execute(..., infile=...)
        self.prepared_cache_size = int(prepared_cache_size)
        self.long_data_threshold = int(long_data_threshold)
        self._stmt_cache = collections.OrderedDict()   # sql bytes -> _Statement
        self._qmark_cache = {}   # query as given -> (sql with ?, names) for prepared cursors
        # held for a whole execute (query + fetch): a second thread gets
        # ProgrammingError instead of the first thread's rows
        self._lock = threading.Lock()
        # (the class default as the instance's own: one specialized read per statement)
        self._pipeline = None
        self._timeouts = (_timeout(connect_timeout, "connect_timeout"),
                          _timeout(read_timeout, "read_timeout"),
                          _timeout(write_timeout, "write_timeout"))
        flags = int(client_flag or 0) | CLIENT.MULTI_RESULTS
        if multi_statements:
            flags |= CLIENT.MULTI_STATEMENTS
        self._client_flag = flags

        if conv is None or conv is conversions:
            self._decoders, self.encoders, self._encoders = None, {
                k: v for k, v in conversions.items() if not isinstance(k, int)}, None
        else:
            self._decoders, self.encoders, self._encoders = _split_conv(conv)

        self._core_module = core_mod
        self._owner = None                 # weakref to the cursor that owns the pending results
        self._max_allowed_packet = None    # cached by _get_max_allowed_packet()
        self._connect()

    # ------------------------------------------------------------ session state

    # The connection's view of the session follows statements run as SQL (``USE db``,
    # ``SET NAMES x``) through the server's session state tracking (CLIENT_SESSION_TRACK,
    # MySQL docs "OK_Packet"): the core counts the OK packets that report changes
    # (session_track_seq), and these properties re-read its schema and tracked
    # character_set_client when the count moved.
    _track_seq = None
    _seen_schema = None
    _tracked_charset = None   # (charset, codec) reported by the server, or None

    _resynced_seq = 0

    def _sync_session(self):
        core = self._conn   # (None: the class default, before connect)
        if core is None:
            return
        seq = getattr(core, "session_track_seq", None)   # None: a stand-in core (tests)
        if seq == self._track_seq or seq is None:
            return
        if core.session_uncertain_seq > self._resynced_seq and self._resync_session(core):
            seq = core.session_track_seq
        self._track_seq = seq
        tracked = None
        name = core.session_variables.get("character_set_client")
        if name and _canonical_charset(name.lower()) != _canonical_charset(self._charset):
            try:
                cs, codec, _, _ = _resolve_charset(name.lower(), None)
                tracked = (cs, codec)
            except Error:
                tracked = None   # a charset without a Python codec here: keep ours
        if tracked != self._tracked_charset:
            self._tracked_charset = tracked
            self._charset_changed()
        schema = core.schema
        if schema is not None and schema != self._seen_schema:
            self._seen_schema = schema
            self._database = schema or None

    _stmt_stale = False   # the cached prepared statements predate a charset change

    def _charset_changed(self):
        self._qmark_cache.clear()   # cached encodings of str queries
        # MariaDB converts a prepared statement's str parameters as the charset of its
        # prepare time said: the statements are re-prepared (see _drop_statements)
        self._stmt_stale = bool(getattr(self, "_stmt_cache", None))

    def _drop_statements(self, cursor=None):
        """Close the cached prepared statements (before the next prepared execute
        after a character set change)."""
        self._stmt_stale = False
        self._discard_pending(cursor)
        cache = self._stmt_cache
        while cache:
            _sql, stmt = cache.popitem(last=False)
            self._conn.stmt_close(stmt.id)

    def _resync_session(self, core):
        """A change was reported in the middle of a response (a stored procedure with
        result sets, a multi-statement): MariaDB restores sql_mode and
        character_set_client when a procedure ends without reporting it after a result
        set.  When the connection is idle and free, assigning the variables their own
        values makes the server report what they are (one ``SET``).  True when done."""
        if not core.open or core.rows_pending or core.more_results or core.cursor_open:
            return False
        if getattr(core, "pipe_pending", 0):
            return False
        if not self._lock.acquire(False):
            return False
        try:
            core.query(_RESYNC_SESSION)
        except Error:
            return False   # the next command reports a lost connection
        finally:
            self._lock.release()
        self._resynced_seq = core.session_track_seq
        return True

    # ------------------------------------------------------------ escaping mode

    # How str/bytes parameters are written depends on NO_BACKSLASH_ESCAPES in the
    # session's sql_mode.  The connection writes them as mysqlclient does (backslash
    # escapes, or quotes doubled under NO_BACKSLASH_ESCAPES) when it knows the mode for
    # certain: _escape_mode() is the one place that decides.  Otherwise a value whose
    # literal depends on the mode (a backslash byte not followed by % or _) costs one
    # "SET sql_mode=@@sql_mode" first (_confirm_escape_mode), and the other values are
    # written in a form both modes read alike (quotes doubled); a hex literal is the
    # last resort (see cursors._with_mode and docs/compat.md, "Escaping").
    _mode_doubt = True      # a statement since the last confirmation may have changed
    #                         the mode unreported (_note_statement); a new session
    _mode_tracking = False  # the session reports sql_mode (CLIENT_SESSION_TRACK, on)
    _mode_lost = False      # a confirmation got no tracked sql_mode: tracking is gone
    _charset_lost = False   # a confirmation got no tracked character_set_client: the
    #                         charset the server parses in is not known for certain
    _mode_seq = None        # session_track_seq when _mode_tracked was read
    _mode_tracked = None    # NO_BACKSLASH_ESCAPES of the tracked sql_mode; None: unknown
    _mode_written = None    # the mode the last statement's values were escaped for
    _mode_hint = None       # (also set in __init__: see there)

    def _escape_mode(self):
        """NO_BACKSLASH_ESCAPES of the session when the connection knows it for certain
        now (True/False), else None.

        The mode is the tracked sql_mode (session state tracking, at connect added to
        ``session_track_system_variables`` and assigned its own value) -- certain only
        when all of these hold:

        - tracking is on (``session_track=True``, a server with CLIENT_SESSION_TRACK)
          and the last confirmation got a tracked answer (``session_track_system_
          variables`` changed by the user so that sql_mode is not tracked: uncertain);
        - the session reported sql_mode since it began (not before the first report,
          after COM_CHANGE_USER or COM_RESET_CONNECTION, which start a new session
          with the server's default tracking list);
        - no change was reported before the end of a response (a procedure with result
          sets, a multi-statement text: MariaDB restores the mode unreported; the
          resync of :meth:`_sync_session` settles this);
        - no statement since the last confirmation could change the mode unreported
          (:meth:`_note_statement`: ``CALL``, ``EXECUTE``, ``SET STATEMENT``, compound
          statements, a multi-statement text, anything naming session_track, a
          ``SET NAMES`` / ``SET CHARACTER SET`` / ``SET character_set_client`` text);
        - the last confirmation also got character_set_client reported (backslash
          escapes are safe only in the charset the server parses the statement in: a
          session that stopped reporting it may have switched to gbk/sjis/big5, whose
          trail bytes can be 0x5C, unseen -- then values go as hex literals);
        - the status bit SERVER_STATUS_NO_BACKSLASH_ESCAPES agrees with the tracked
          mode: a stored routine or trigger that set the mode leaves the bit as it set
          it after the caller's mode is back (issue 14), so a disagreement says a
          routine ran that changed the mode.

        - no pipelined statement that could change the mode (:meth:`pipeline`: any
          statement but a plain SELECT/INSERT/UPDATE/DELETE/REPLACE/WITH/VALUES, see
          ``mysqlc._pipeline``) is queued with its answer unread: the tracked mode is
          then the one before it."""
        if (self._mode_doubt or not self._mode_tracking or self._mode_lost
                or self._charset_lost):
            return None
        pipe = self._pipeline
        if pipe is not None and pipe._unsure:
            return None
        core = self._conn
        seq = core.session_track_seq
        if seq != self._mode_seq:
            self._mode_seq = seq
            mode = core.session_variables.get("sql_mode")
            self._mode_tracked = None if mode is None else \
                "NO_BACKSLASH_ESCAPES" in mode.upper().split(",")
        tracked = self._mode_tracked
        if tracked is None or core.session_uncertain_seq > self._resynced_seq:
            return None
        if tracked != bool(core.server_status & _STATUS_NBE):
            return None
        return tracked

    def _io_possible(self):
        """Can a statement be sent from here now?  (mysqlc.aio: only inside the
        connection's greenlet.)"""
        return True

    def _note_statement(self, sql):
        """Called with each statement text (bytes; a template before its parameters
        are substituted) the connection sends for the user: one that may change the
        sql_mode without the session reporting it makes the mode uncertain until the
        next confirmation (see _RE_MODE_LEAD)."""
        if self._mode_doubt:
            return                     # uncertain already: the next confirmation decides
        cache = _MODE_NOTE_CACHE
        doubt = cache.get(sql)
        if doubt is None:
            if len(sql) > _MODE_SCAN_LIMIT:
                self._mode_doubt = True
                return
            low = sql.lower()
            doubt = bool(b"session_track" in low or b"atomic" in low
                         or (b"set" in low and _RE_CHARSET_CHANGE.search(low) is not None)
                         or (b"/*" in low and (b"/*!" in low or b"/*m!" in low))
                         or ((not low[:1].isalpha() or low.startswith(_MODE_LEAD_WORDS))
                             and _RE_MODE_LEAD.match(low) is not None))
            if len(sql) <= 4096:
                if len(cache) >= 512:
                    cache.clear()
                cache[sql] = doubt
        if doubt or (_SEMICOLON in sql and self._multi_statement(sql)):
            self._mode_doubt = True

    _mode_multi = True      # CLIENT_MULTI_STATEMENTS was agreed (set at connect)

    def _multi_statement(self, sql):
        """May `sql` (bytes) hold more than one statement?  (A ';' before the end,
        outside quoted strings, identifiers and comments -- read with and without
        backslash escapes -- on a connection with CLIENT_MULTI_STATEMENTS, which
        mysqlc asks for by default as mysqlclient does.)"""
        if not self._mode_multi or _SEMICOLON not in sql:
            return False
        for pattern in _RE_SQL_SKIP:
            if _SEMICOLON in pattern.sub(b" ", sql).rstrip(b"; \t\r\n"):
                return True
        return False

    def _confirm_escape_mode(self, cursor=None):
        """Ask the server for the mode: one ``SET sql_mode=@@sql_mode`` (its OK's
        status bit is exact, and so is the tracked value it reports); a session that
        does not report sql_mode yet (a new session after change_user) also gets
        sql_mode added to its tracking list, as at connect.  Returns the mode (bool),
        or None when no statement can be sent now (the connection is in use, results
        are unread, or it is closed): then the value must be sent another way."""
        core = self._conn   # (None: the class default, before connect)
        if core is None or self._closed or not core.open or not self._io_possible():
            return None
        if getattr(core, "pipe_pending", 0):
            return None    # its answer would come after the queued ones': not asked
        if self._charset_lost and not self._mode_doubt:
            return None    # confirmed already: the charset is not reported (hex values)
        if not self._lock.acquire(False):
            return None
        try:
            try:
                self._discard_pending(cursor)
            except Error:
                return None
            if core.rows_pending or core.more_results or core.cursor_open:
                return None
            track = self._mode_tracking
            fresh = track and not self._mode_lost and "sql_mode" not in core.session_variables
            seq = core.session_track_seq
            try:
                try:
                    core.query(b"SET " + _TRACK_SQL_MODE + _CONFIRM_CHARSET if fresh
                               else b"SET sql_mode=@@sql_mode" + _CONFIRM_CHARSET)
                except DatabaseError:
                    if not fresh or not core.open:
                        raise
                    self._mode_lost = True           # a server that refuses the tracking
                    core.query(b"SET sql_mode=@@sql_mode")
            except Error:
                return None
            bit = bool(core.server_status & _STATUS_NBE)
            if track:
                changes = core.session_changes if core.session_track_seq != seq else None
                reported = (changes or {}).get("system_variables") or {}
                if reported.get("sql_mode") is None:
                    self._mode_lost = True      # sql_mode is no longer tracked
                else:
                    self._mode_lost = False
                    self._mode_doubt = False
                # character_set_client assigned its own value is reported while it is
                # tracked; when it is not, the session may have switched charsets unseen
                # (a list without it, SET NAMES run as SQL): asked for, once per
                # confirmation; a charset other than the one values are encoded in leaves
                # them to the hex form (its introducer names the charset they are in)
                if reported.get("character_set_client") is None:
                    try:
                        rows = self._internal_query_locked(
                            core, b"SELECT @@character_set_client")
                    except Error:
                        return None
                    name = rows[0][0] if rows and rows[0] else None
                    if isinstance(name, (bytes, bytearray)):
                        name = bytes(name).decode("ascii", "replace")
                    # (a user converter that changed the text: not the same, hex values)
                    self._charset_lost = not isinstance(name, str) or (
                        _canonical_charset(name.lower()) != _canonical_charset(self.charset))
                    if self._charset_lost:
                        return None
                else:
                    self._charset_lost = False
            return bit
        finally:
            self._lock.release()

    @property
    def charset(self) -> str:
        """The connection character set name: as given (or set with
        :meth:`set_character_set`), or as the server reported it after ``SET NAMES``
        run as SQL (session state tracking: character_set_client)."""
        self._sync_session()
        t = self._tracked_charset
        return t[0] if t else self._charset

    @charset.setter
    def charset(self, value):
        self._charset = value
        self._tracked_charset = None

    def _session_charset(self):
        """``(charset, encoding)``: :attr:`charset` and :attr:`encoding` in one call
        (the statement path's)."""
        core = self._conn
        if core is not None and getattr(core, "session_track_seq",
                                        self._track_seq) != self._track_seq:
            self._sync_session()   # (only when the session reported a change)
        t = self._tracked_charset
        return t if t else (self._charset, self._encoding)

    @property
    def encoding(self) -> str:
        """The Python codec of :attr:`charset` (queries and parameters are encoded
        with it)."""
        self._sync_session()
        t = self._tracked_charset
        return t[1] if t else self._encoding

    @encoding.setter
    def encoding(self, value):
        self._encoding = value
        self._tracked_charset = None

    @property
    def collation(self) -> Optional[str]:
        """The collation given (None: the charset's default, or unknown after ``SET
        NAMES`` run as SQL)."""
        self._sync_session()
        return None if self._tracked_charset else self._collation

    @collation.setter
    def collation(self, value):
        self._collation = value

    @property
    def database(self) -> Union[str, bytes, None]:
        """The default database: as given, set with :meth:`select_db`, or as the server
        reported it after ``USE db`` run as SQL (session state tracking).  Alias: `db`."""
        self._sync_session()
        return self._database

    @database.setter
    def database(self, value):
        self._database = value

    db = database

    # ------------------------------------------------------------ connecting

    #: None: the core opens its own socket.  mysqlc.aio sets a callable
    #: ``(core, host, port, unix_socket, connect_timeout) -> transport`` (src/transport_py.c)
    _open_stream = None

    def _connect(self):
        """Open ``self._conn`` and run the post-connect statements."""
        core = self._core_module.Connection()
        core.on_abandon = _abandon_hook(self)
        if self._decoders:
            core.converters = dict(self._decoders)
        core.use_unicode = self._use_unicode
        self._conn = core
        self._track_seq = None
        self._tracked_charset = None
        self._seen_schema = None
        self._resynced_seq = 0
        self._mode_doubt = True
        self._mode_seq = None
        self._owner = None
        self._max_allowed_packet = None
        self._closed = False
        self._last_error = _NO_ERROR
        local = self.host == "localhost"
        # libmysqlclient: "localhost" (or no host) is the unix socket unless
        # protocol=tcp; protocol=socket uses the socket whatever the host
        use_socket = self._protocol == "socket" or (local and self._protocol != "tcp")
        unix_socket = (self.unix_socket or _default_socket()) if use_socket else None
        enc = self.encoding
        connect_timeout, read_timeout, write_timeout = self._timeouts
        host = None if use_socket else ("127.0.0.1" if local else self.host)
        try:
            # a transport opened by the caller (mysqlc.aio) instead of the core's socket
            stream = ({} if self._open_stream is None else
                      {"transport": self._open_stream(core, host, self.port, unix_socket,
                                                      connect_timeout)})
            core.connect(
                host=host,
                port=self.port,
                unix_socket=unix_socket,
                user=_to_bytes(self.user, enc, "user"),
                password=_to_bytes(self._password, "utf-8", "password"),
                database=_to_bytes(self.database, enc, "database"),
                collation=self._handshake_collation,
                client_flag=self._client_flag,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                write_timeout=write_timeout,
                local_files=self._local_infile,
                # TLS checks (and SNI names) the host the user gave, even when
                # "localhost" is reached over TCP at 127.0.0.1
                server_hostname=self.host,
                session_track=self._session_track,
                **self._secure_options, **stream,
            )
            self._seen_schema = getattr(core, "schema", None)
            self._track_seq = getattr(core, "session_track_seq", None)
            if self._local_infile:
                core.infile_handler = self._infile_handler
            self._stmt_cache.clear()
            self._use_socket = use_socket
            self._socket_path = unix_socket
            version = core.server_version or ""
            if version.startswith(_RPL_VERSION_HACK):
                version = version[len(_RPL_VERSION_HACK):]
            self.server_version = version
            self._server_version = tuple(
                int(n) for n in _NUMERIC_PART.findall(version.split("-", 1)[0])[:2])
            self._transactional = bool(core.server_capabilities & CLIENT.TRANSACTIONS)
            self._start_session(core, self._set_names)
            # what _reset_session() sets up again: the settings as connect() made them
            # (the PyMySQL flavour keeps its codec elsewhere: no _encoding)
            self._session_start = (self._charset, getattr(self, "_encoding", None),
                                   self._collation,
                                   self._set_names, self._handshake_collation,
                                   self._database, core.schema)
        except BaseException:
            core.close()
            raise

    def _start_session(self, core, set_names, names_in_settings=False):
        """The statements that set a new session up, after the handshake and after
        COM_RESET_CONNECTION: init_command, ``SET NAMES`` (`set_names`, None: the
        handshake's collation is the one asked for; with `names_in_settings` a part of
        the last ``SET``), sql_mode, then autocommit and the session tracking
        settings."""
        enc = self.encoding
        for command in _init_commands(self._init_command):
            self._internal_query(_to_bytes(command, enc, "init_command"))
        if set_names and not names_in_settings:
            self._internal_query(set_names.encode("ascii"))
            set_names = None
        if self._sql_mode:
            self.set_sql_mode(self._sql_mode)
        self._connect_session_settings(core, set_names)
        # a new session: the escaping mode is known from the tracked sql_mode again
        self._mode_tracking = (self._session_track and getattr(core, "session_track_seq",
                                                               None) is not None
                               and bool(core.client_flag & CLIENT.SESSION_TRACK))
        self._mode_lost = False
        self._charset_lost = False   # the connect's own SET NAMES set it
        self._mode_multi = bool(core.client_flag & CLIENT.MULTI_STATEMENTS)
        self._mode_doubt = False

    #: also asked for at connect (in the same SET): session_track_state_change=1, so
    #: that every change of the session's state is reported (set by mysqlc.aio's pool)
    _track_state_change = False
    #: the server agreed to report every change of the session's state (above)
    _state_tracked = False

    def _reset_session(self):
        """Give the session back the state connect() left it in: COM_RESET_CONNECTION
        (MySQL 5.7.3+, MariaDB 10.2.4+; the server rolls back, drops user variables,
        temporary tables, prepared statements, table and named locks, and returns every
        session variable to its global value), then the statements of connect() run
        again (init_command, ``SET NAMES`` with the charset and collation connect()
        had -- the reset drops them on MySQL --, sql_mode, autocommit, session
        tracking) and the connect's default database is selected again when another
        one is current (the reset keeps it).  The prepared-statement cache is emptied
        (the server dropped them), the charset given to connect() is the connection's
        again.  Used by mysqlc.aio's pool on release.

        Returns False, without a reset, when the connect's default database could
        not be selected again (the connection had none and one was chosen since: no
        command goes back to none); True when done.

        Raises OperationalError 1047 from a server without the command, and the
        errors of the statements (the connection is then in an unknown state: close
        it)."""
        self._check_closed()
        core = self._conn
        charset, encoding, collation, set_names, handshake_id, database, schema = \
            self._session_start
        if not schema and core.schema:
            return False
        if not self._lock.acquire(False):
            raise _busy()
        try:
            self._last_error = _NO_ERROR
            self._discard_pending()
            self._owner = None
            try:
                core.reset_connection()
            except Error as exc:
                self._note_error(exc)
                raise
            finally:
                # the server drops the session's statements with the command
                self._stmt_cache.clear()
                self._max_allowed_packet = None
            self.charset, self.collation = charset, collation
            if encoding is not None:
                self.encoding = encoding
            self._qmark_cache.clear()
            self._stmt_stale = False
        finally:
            self._lock.release()
        if not set_names:
            name = _collation_name(charset, handshake_id)
            set_names = "SET NAMES " + charset + (" COLLATE " + name if name else "")
        self._start_session(core, set_names, names_in_settings=True)
        if schema and core.schema != schema:
            self.select_db(schema)
        self._database = database
        return True

    def _connect_session_settings(self, core, set_names=None):
        """The autocommit mode and, when the server tracks session state, sql_mode
        added to session_track_system_variables (with its current value reported, so
        that the core's no_backslash_escapes follows sql_mode from the start): one
        ``SET`` statement, the round trip ``SET autocommit=0`` took before.
        `set_names` (``"SET NAMES ..."``, after a session reset) rides in it too."""
        parts = []
        if set_names:
            parts.append(set_names[4:].encode("ascii"))   # "NAMES cs COLLATE x"
        option = self._autocommit_option
        if option is not None and self._transactional and self.get_autocommit() != option:
            parts.append(b"autocommit=1" if option else b"autocommit=0")
        plain = len(parts)   # the parts that do not need session tracking
        track = bool(core.client_flag & CLIENT.SESSION_TRACK) and self._session_track
        if track:
            parts.append(_TRACK_SQL_MODE)
            if self._track_state_change:
                parts.append(b"session_track_state_change=1")
        self._state_tracked = False
        if not parts:
            return
        try:
            self._internal_query(b"SET " + b", ".join(parts))
        except DatabaseError:
            if not track or not core.open:
                raise
            # a server (or proxy) that refuses the tracking variables: the rest alone
            if plain:
                self._internal_query(b"SET " + b", ".join(parts[:plain]))
            return
        if self._track_state_change:
            # the server reports the change of session_track_state_change itself
            changes = core.session_changes
            self._state_tracked = bool(changes and changes.get("state_change"))

    # ------------------------------------------------------------ internals

    def _pending(self):
        """True when the connection has unread results (rows, further results, an
        open server-side cursor): the next command must read or drop them first."""
        core = self._conn
        return bool(core.rows_pending or core.more_results or core.cursor_open)

    def _discard_pending(self, cursor=None):
        """Make the connection ready for a new command: read and drop results left
        unread by buffered use (PyMySQL-like).  Rows still streaming to an
        unbuffered cursor other than `cursor` are not dropped: that raises
        ProgrammingError 2014 "Commands out of sync", as mysqlclient does.  Inside a
        :meth:`pipeline` block every queued response is read first (a sync point: the
        first error of the queued statements is raised, and the command is not sent)."""
        pipe = self._pipeline
        if pipe is not None and len(pipe):
            pipe.sync()
        core = self._conn
        if self._pending():
            owner = self._owner() if self._owner is not None else None
            if (owner is not None and owner is not cursor
                    and getattr(owner, "_unbuffered", False)
                    and (core.rows_pending or core.cursor_open)):
                raise ProgrammingError(
                    2014, "Commands out of sync; you can't run this command now "
                    "(an unbuffered cursor has unread rows: fetch them or close it)")
            core.discard()

    def _infile_handler(self, filename):
        """Called by the core for a LOAD DATA LOCAL INFILE request; returns an
        iterable of bytes chunks, or raises OperationalError 2068 to refuse."""
        data = self._pending_infile
        if data is not None:
            self._pending_infile = None
            return _infile_chunks(data)
        name = os.fsdecode(filename)
        base = self._local_infile_dir
        if base is not None:
            path = os.path.realpath(os.path.join(base, name))
            if os.path.commonpath([base, path]) == base and os.path.isfile(path):
                return _file_chunks(path)
            raise OperationalError(
                2068, "LOAD DATA LOCAL INFILE %r refused: the file is not under "
                "local_infile_dir (%s) and no data was given with execute(..., infile=...)"
                % (name, base))
        path = self._statement_infile(bytes(filename))
        if path is not None:
            return _file_chunks(path)
        raise OperationalError(
            2068, "LOAD DATA LOCAL INFILE %r refused: the server asked for a file that "
            "the statement sent does not name (local_infile_dir is not set; no data was "
            "given with execute(..., infile=...))" % (name,))

    def _statement_infile(self, filename):
        """The path to open when `filename` (bytes, from the server's request) is the
        name of a ``LOAD DATA LOCAL INFILE`` statement in the query this connection
        sent last for a cursor; else None."""
        owner = self._owner() if self._owner is not None else None
        sql = getattr(owner, "_executed", None)
        if not sql:
            return None
        nbe = self._mode_written     # the mode execute() wrote the values for
        names = _infile_sql.local_infile_names(
            sql, self.charset, bool(self._conn.no_backslash_escapes if nbe is None else nbe))
        if filename not in names:
            return None
        try:
            path = filename.decode(self.encoding)
        except (UnicodeDecodeError, LookupError):
            return None
        return path if os.path.isfile(path) else None

    def _internal_query(self, sql):
        """Run `sql` (bytes) for the connection itself; return its rows (list) or None.

        Unread results of cursors are drained first (PyMySQL-like) and every result
        of `sql` is consumed.
        """
        core = self._conn
        if self._closed:
            raise self._closed_error()
        if not self._lock.acquire(False):
            raise _busy()
        try:
            self._last_error = _NO_ERROR
            return self._internal_query_locked(core, sql)
        except Error as exc:
            self._note_error(exc)
            raise
        finally:
            self._lock.release()

    def _internal_query_locked(self, core, sql):
        self._discard_pending()
        self._owner = None
        rows = None
        if core.query(sql) > 0:
            rows = core.fetch(-1)
        if core.more_results or core.rows_pending:
            core.discard()
        return rows

    def _get_max_allowed_packet(self):
        """The session's ``max_allowed_packet`` in bytes (queried once, cached)."""
        if self._max_allowed_packet is None:
            value = getattr(self._conn, "max_allowed_packet", 0)   # read by the core
            if not value:
                try:
                    rows = self._internal_query(b"SELECT @@max_allowed_packet")
                    value = int(rows[0][0])
                    self._conn.max_allowed_packet = value   # the core's packet size checks
                except (DatabaseError, TypeError, ValueError, IndexError):
                    value = _DEFAULT_MAX_ALLOWED_PACKET
            self._max_allowed_packet = value
        return self._max_allowed_packet

    def _set_owner(self, cursor):
        self._owner = weakref.ref(cursor)

    def _is_owner(self, cursor):
        owner = self._owner
        return owner is not None and owner() is cursor

    # ------------------------------------------------------------ DB-API

    @overload
    def cursor(self, cursorclass: None = None,
               prepared: bool = False) -> cursors.BaseCursor: ...

    @overload
    def cursor(self, cursorclass: type[_CursorT], prepared: bool = False) -> _CursorT: ...

    def cursor(self, cursorclass: Optional[type[cursors.BaseCursor]] = None,
               prepared: bool = False) -> cursors.BaseCursor:
        """Return a new cursor of `cursorclass` (default :attr:`cursorclass`).

        Parameters
        ----------
        cursorclass : type, optional
            :class:`~mysqlc.cursors.Cursor`, ``DictCursor``, ``SSCursor``,
            ``SSDictCursor`` or a subclass.
        prepared : bool, default False
            Run statements as server-side prepared statements (binary protocol;
            the name mysql-connector-python and MariaDB Connector/Python use): a
            mode of the cursor, not a class of its own (``Cursor``, ``DictCursor``,
            ``SSCursor`` and ``SSDictCursor`` give their ``Prepared*`` names, other
            classes a cursor of `cursorclass` in that mode).  With an unbuffered class
            the rows come from a read-only server-side cursor in batches of
            ``arraysize`` (COM_STMT_FETCH, 100 by default).
        """
        cls = cursorclass or self.cursorclass
        if prepared:
            return cursors._prepared_cursor(cls, self)
        return cls(self)

    def _close_statements(self):
        cache = self._stmt_cache
        core = self._conn
        while cache:
            _sql, stmt = cache.popitem(last=False)
            try:
                core.stmt_close(stmt.id)
            except Error:
                break

    #: the open :meth:`pipeline` block, or None
    _pipeline: Optional[_pipe_mod.Pipeline] = None

    def pipeline(self) -> _pipe_mod.Pipeline:
        """A pipeline block: ``with conn.pipeline() as p:`` (psycopg 3's idiom, MySQL's
        semantics; docs/batching.md "Pipelining").

        Inside the block a buffered cursor's :meth:`~mysqlc.cursors.BaseCursor.execute`
        (text, or prepared once the statement is prepared) sends its command at once
        and returns -1 without waiting; the cursor's result is read when it fetches
        (every response queued before it is read first), at ``p.sync()``, at any
        command that is not queued (commit, rollback, executemany, callproc's
        statements are queued; ping, select_db, an unbuffered cursor's execute...) and
        when the block ends.  Every queued statement runs, even after an earlier one
        failed; the first error is raised at the next of those sync points, with
        ``exc.pipeline_errors`` listing every failure as ``(index, cursor, exception)``;
        the later statements' cursors hold their own results.  At most
        ``mysqlc._pipeline.MAX_COMMANDS`` (256) commands or ``MAX_BYTES`` (64 KiB) are
        in flight: beyond them execute() first reads the oldest responses into their
        cursors.  With ``connect(pipelining=False)`` the block runs each statement at
        once (same results, errors raised by the execute that failed).

        Raises ProgrammingError for a nested block and for ``LOAD DATA LOCAL`` inside
        one (nothing sent: the file would have to follow commands already sent).
        """
        return _pipe_mod.Pipeline(self)

    def commit(self) -> None:
        """Commit the current transaction (``COMMIT``).

        Raises OperationalError(2006, ...) on a closed or lost connection (as
        mysqlclient: '' after close(), "Server has gone away" once lost).
        """
        self._internal_query(b"COMMIT")

    def rollback(self) -> None:
        """Roll back the current transaction (``ROLLBACK``)."""
        self._internal_query(b"ROLLBACK")

    def begin(self) -> None:
        """Start a transaction explicitly (``BEGIN``); not needed with autocommit off."""
        self._internal_query(b"BEGIN")

    def close(self) -> None:
        """Close the connection (COM_QUIT, then the socket).

        With rows of an unbuffered cursor (or further results) still unread, the
        rest of the response is dropped undecoded for up to 0.2 s; when it has not
        ended by then, the statement is stopped with ``KILL QUERY <thread id>`` over
        a short-lived second connection with the same credentials, and the rest
        (up to the server's error 1317) is dropped.  The server then gets COM_QUIT
        and does not count an aborted client (as mysqlclient, which reads the whole
        remainder instead).  When that fails (the second connection is refused,
        the server does not stop), the socket is closed after at most about 5 s.

        Raises
        ------
        OperationalError
            ``(2006, message)`` when the connection was already closed with
            close(), as mysqlclient (``message`` is '' or, when the connection had
            been lost before the first close(), that loss's message).  Closing a
            connection that was lost (but not closed) succeeds.

        Notes
        -----
        Inside a :meth:`pipeline` block the responses still queued are not read: the
        server runs those statements anyway (it has them, COM_QUIT comes after them),
        and their cursors raise OperationalError 2006 saying their answers were not
        read; the block's end then raises nothing for them.
        """
        core = self._conn
        if self._closed:
            raise self._closed_error()
        pipe = self._pipeline
        if core is not None:
            was_open = core.open
            if core.open and (core.rows_pending or core.more_results):
                self._end_pending_for_close(core)
            core.close()   # ProgrammingError while another thread uses it: nothing changes
            if pipe is not None:   # the engine's queue: their answers will not be read
                pipe._lost(OperationalError(2006, "close() was called inside the pipeline "
                                                  "block"))
            self._owner = None
            self._stmt_cache.clear()   # statements die with the connection
            self._closed = True
            # libmysqlclient's COM_QUIT clears the last error; on a lost connection
            # nothing is sent and the message of the loss stays
            self._closed_message = "" if was_open else self._last_error[1]

    def _closed_error(self):
        """OperationalError(2006, ...) for a connection closed with close(): what
        mysqlclient raises for every command on it (CR_SERVER_GONE_ERROR)."""
        return OperationalError(CR.CR_SERVER_GONE_ERROR, self._closed_message)

    def _check_closed(self):
        if self._closed:
            raise self._closed_error()

    def _note_error(self, exc):
        """Record `exc` (a mysqlc Error) as the last error of the connection when it
        carries an error number (server ER_*, client CR_*); errors mysqlc detects
        itself before sending anything (errno 0) leave the record alone, as
        libmysqlclient never sees them."""
        args = exc.args
        if len(args) >= 2 and type(args[0]) is int and args[0]:
            self._last_error = (args[0], str(args[1]), getattr(exc, "sqlstate", None))

    def errno(self) -> int:
        """Error number of the last command (int), 0 when it succeeded
        (mysqlclient's ``_mysql`` method: server ``ER_*`` or client ``CR_*``
        numbers; errors mysqlc detects before sending, such as a wrong number of
        parameters, do not change it).

        Raises OperationalError(2006) on a connection closed with close()."""
        self._check_closed()
        return self._last_error[0]

    def error(self) -> str:
        """Message of the last command's error (str), '' when it succeeded
        (mysqlclient's ``_mysql`` method).  Raises OperationalError(2006) on a
        connection closed with close()."""
        self._check_closed()
        return self._last_error[1]

    def sqlstate(self) -> str:
        """SQLSTATE of the last command's error (5-character str), ``"00000"`` when
        it succeeded (mysqlclient's ``_mysql`` method): the server's, from the ERR
        packet (``exc.sqlstate``); ``"HY000"`` for client errors (2000-2999), as
        libmysqlclient gives.
        Raises OperationalError(2006) on a connection closed with close()."""
        self._check_closed()
        errno, message, state = self._last_error
        if not errno:
            return "00000"
        return state or "HY000"

    #: seconds to drop unread rows before stopping the statement (close()), and after it
    _CLOSE_DRAIN = (0.2, 5.0)

    def _end_pending_for_close(self, core):
        """Bring a connection with unread results back to idle so that close() can say
        COM_QUIT; errors only mean the socket is closed without it."""
        try:
            if core.drain(self._CLOSE_DRAIN[0], closing=True):
                return
            self._kill_query_side(core.thread_id)
            core.drain(self._CLOSE_DRAIN[1], closing=True)
        except Error:
            pass

    def _kill_query_side(self, thread_id, timeout=2.0):
        """``KILL QUERY thread_id`` over a new core connection made with this one's
        address, credentials and TLS options (none of the session statements: no
        init_command, sql_mode or autocommit); `timeout` bounds the connect and each
        read and write."""
        side = self._core_module.Connection()
        unix_socket = self._socket_path      # where _connect() went
        connect_timeout = self._timeouts[0]
        opts = dict(self._secure_options, compress=False)
        try:
            side.connect(
                host=(None if unix_socket else
                      "127.0.0.1" if self.host == "localhost" else self.host),
                port=self.port,
                unix_socket=unix_socket,
                user=_to_bytes(self.user, self.encoding, "user"),
                password=_to_bytes(self._password, "utf-8", "password"),
                collation=self._handshake_collation,
                connect_timeout=(timeout if connect_timeout is None
                                 else min(connect_timeout, timeout)),
                read_timeout=timeout, write_timeout=timeout,
                server_hostname=self.host, **opts)
            side.query(b"KILL QUERY %d" % int(thread_id))
        finally:
            side.close()

    def _kill_query_bounded(self, thread_id, budget=None):
        """Stop the statement of server connection `thread_id` after an interrupt or a
        timeout closed this connection in the middle of a command (called by the core's
        ``on_abandon`` hook, :func:`_abandon_hook`, with the caller's exception pending).

        Without it the server would run the statement to its end (``SELECT SLEEP(30)``
        for 30 s, an ``UPDATE`` holding its row locks) because nothing reads from the
        closed socket.  ``KILL QUERY`` goes over a short side connection
        (:meth:`_kill_query_side`) in a daemon thread that the caller waits for at most
        `budget` seconds (:data:`_KILL_BUDGET`, 2 s): an unreachable server, a refused
        login or a stalled side connection cost at most that, and their errors are
        dropped (the caller's exception is what it must see).  A second Ctrl-C while
        waiting interrupts the wait.
        """
        budget = _KILL_BUDGET if budget is None else budget
        failures = []

        def kill():
            try:
                self._kill_query_side(thread_id, budget)
            except Exception as exc:   # noqa: BLE001 - reported by nothing; see above
                failures.append(exc)

        worker = threading.Thread(target=kill, name="mysqlc-kill-query", daemon=True)
        try:
            worker.start()
        except RuntimeError as exc:   # no thread can be started (interpreter shutdown)
            self._kill_query_failed = exc
            return
        worker.join(budget)
        self._kill_query_failed = failures[0] if failures else (
            None if not worker.is_alive() else TimeoutError("KILL QUERY still running"))

    @property
    def open(self) -> bool:
        """True while the connection is open (mysqlclient's ``open``)."""
        core = self._conn
        return bool(core is not None and core.open)

    @property
    def closed(self) -> int:
        """1 when the connection is not open (never opened, closed, or lost), else 0:
        mysqlclient's ``closed`` (an int, ``not open``), also on an instance that
        ``__init__`` has not run on."""
        core = self._conn
        return 0 if core is not None and core.open else 1

    def __enter__(self: _ConnT) -> _ConnT:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]],
                 exc_value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        # mysqlclient 2.x closes the connection (it neither commits nor rolls back)
        self.close()

    def __repr__(self) -> str:
        state = "open" if self.open else "closed"
        return "<%s.%s %s to %r at %#x>" % (type(self).__module__, type(self).__qualname__,
                                             state, self.host, id(self))

    # ------------------------------------------------------------ autocommit

    def autocommit(self, on: bool) -> None:
        """Turn autocommit on or off (mysqlclient's method; PyMySQL has it too).

        Sends ``SET autocommit=1/0`` only when the server's status flag differs.
        """
        on = bool(on)
        if self.get_autocommit() != on:
            self._internal_query(b"SET autocommit=1" if on else b"SET autocommit=0")

    def get_autocommit(self) -> bool:
        """True when the server reports autocommit mode (SERVER_STATUS_AUTOCOMMIT)."""
        self._check_closed()
        return bool(self._conn.server_status & SERVER_STATUS.SERVER_STATUS_AUTOCOMMIT)

    @property
    def autocommit_mode(self) -> bool:
        """PyMySQL's attribute: the current autocommit mode (bool)."""
        return self.get_autocommit()

    # ------------------------------------------------------------ server commands

    def ping(self, reconnect: bool = False) -> None:
        """Check that the server is alive (COM_PING).

        Parameters
        ----------
        reconnect : bool, default False
            When the ping fails (or the connection was closed), open a new
            connection with the same options (running init_command, sql_mode and
            autocommit again).  The session state of the old connection is lost.

        Raises
        ------
        OperationalError, InterfaceError
            The server is gone and `reconnect` is False (or reconnecting failed).
        """
        try:
            self._check_closed()
            core = self._conn
            self._last_error = _NO_ERROR
            try:
                if core.open:
                    self._discard_pending()
                core.ping()
            except Error as exc:
                self._note_error(exc)
                raise
        except (OperationalError, InterfaceError):
            if not reconnect:
                raise
            self._conn.close()
            self._connect()

    def select_db(self, db: Union[str, bytes]) -> None:
        """Make `db` (str or bytes) the default database (COM_INIT_DB)."""
        self._check_closed()
        self._last_error = _NO_ERROR
        try:
            self._discard_pending()
            self._conn.select_db(_to_bytes(db, self.encoding, "db"))
        except Error as exc:
            self._note_error(exc)
            raise
        self.database = db

    def set_sql_mode(self, sql_mode: str) -> None:
        """Run ``SET SESSION sql_mode = '<sql_mode>'`` (the mode is quoted and escaped)."""
        self._internal_query(b"SET SESSION sql_mode=" + self.string_literal(sql_mode))

    def show_warnings(self) -> tuple[tuple[Any, ...], ...]:
        """Return ``SHOW WARNINGS`` as a tuple of ``(Level, Code, Message)`` tuples.

        Unread results of cursors are discarded first.
        """
        return tuple(self._internal_query(b"SHOW WARNINGS") or ())

    def set_character_set(self, charset: str, collation: Optional[str] = None) -> None:
        """Switch the connection character set (``SET NAMES``).

        Parameters
        ----------
        charset : str
            A name from ``mysqlc._charsets.CHARSETS``.
        collation : str, optional
            Adds ``COLLATE collation``.

        Notes
        -----
        Updates :attr:`charset`, :attr:`collation` and :attr:`encoding`.
        """
        name, codec, _, _ = _resolve_charset(charset, collation)
        sql = "SET NAMES %s" % name
        if collation:
            sql += " COLLATE %s" % collation
        self._internal_query(sql.encode("ascii"))
        self.charset, self.encoding, self.collation = name, codec, collation or None
        self._charset_changed()

    def set_charset(self, charset: str) -> None:
        """PyMySQL's name of :meth:`set_character_set` (`charset` alone)."""
        self.set_character_set(charset)

    def character_set_name(self) -> str:
        """The connection character set name (as given, lower case)."""
        self._check_closed()
        return self.charset

    def get_character_set_info(self) -> dict[str, Any]:
        """Dict with ``name``, ``collation``, ``mbminlen``, ``mbmaxlen``, ``comment``
        and ``dir`` of the connection character set (mysqlclient's keys)."""
        self._check_closed()
        collation = self.collation
        if not collation:
            default_id = _charsets.CHARSETS[self.charset][0]
            canonical = _canonical_charset(self.charset)
            collation = next((n for n, i in _charsets.COLLATIONS.items()
                              if i == default_id and n.startswith(canonical + "_")),
                             "binary" if default_id == 63 else None)
        mbmin, mbmax = _MBLEN.get(self.charset, (1, 1))
        return {"name": self.charset, "collation": collation, "comment": "", "dir": "",
                "mbminlen": mbmin, "mbmaxlen": mbmax}

    # ------------------------------------------------------------ information

    def get_server_info(self) -> str:
        """Server version string from the handshake, e.g. ``"10.11.6-MariaDB"``
        (MariaDB's ``"5.5.5-"`` prefix removed, as MariaDB Connector/C does).

        Also available as the attribute :attr:`server_version` (PyMySQL's name);
        ``_server_version`` is mysqlclient's ``(major, minor)`` tuple.
        """
        self._check_closed()
        return self.server_version

    def get_host_info(self) -> str:
        """``"Localhost via UNIX socket"`` or ``"<host> via TCP/IP"`` (mysqlclient's form)."""
        self._check_closed()
        if getattr(self, "_use_socket", False):
            return "Localhost via UNIX socket"
        host = "127.0.0.1" if self.host == "localhost" else self.host
        return "%s via TCP/IP" % host

    def get_proto_info(self) -> int:
        """Protocol version from the handshake (10)."""
        self._check_closed()
        return self._conn.protocol_version

    def tls_info(self) -> Optional[dict[str, Any]]:
        """The connection's TLS state: None for a plaintext connection (a unix socket,
        TLS turned off, or a server that does not offer it under the default
        ``PREFERRED``), else a dict:

        ``version``
            the protocol, e.g. ``'TLSv1.3'`` (OpenSSL's ``SSL_get_version``)
        ``cipher``
            the cipher suite, e.g. ``'TLS_AES_256_GCM_SHA384'``
        ``verified``
            True when the server's certificate was verified (``VERIFY_CA`` or
            ``VERIFY_IDENTITY``, or the options that choose them); False for an
            encrypted but unverified connection (``PREFERRED``, ``REQUIRED``)
        ``verified_by``
            what the verification relied on: ``'ca'`` (the chain, against ``ssl_ca`` /
            ``ssl_capath`` or the system's store), ``'ca+hostname'`` (also the host
            name or IP address), ``'fingerprint'`` (``ssl_fingerprint``), ``'password'``
            (MariaDB 11.4+'s proof of the password in the final OK packet, MDEV-31855),
            or None when not verified

        Raises OperationalError 2006 on a connection closed with close().
        """
        self._check_closed()
        info = self._conn.tls_info
        if info is None:
            return None
        return dict(info)

    def thread_id(self) -> int:
        """The server's connection id (for ``KILL``)."""
        self._check_closed()
        return self._conn.thread_id

    def kill(self, thread_id: int) -> None:
        """Kill the server connection `thread_id` (``KILL <thread_id>``; mysqlclient's
        and PyMySQL's method).  Raises OperationalError(1094) for an unknown id."""
        self._internal_query(b"KILL %d" % int(thread_id))

    def change_user(self, user: Union[str, bytes], passwd: Union[str, bytes, None] = None,
                    db: Union[str, bytes, None] = None, *,
                    password: Union[str, bytes, None] = None,
                    database: Union[str, bytes, None] = None) -> None:
        """Log in again as `user` on this connection (COM_CHANGE_USER; mysqlclient's
        ``change_user(user, passwd=None, db=None)``).

        The whole authentication exchange runs again (the server may switch to any
        plugin the connect supports: native, caching_sha2, sha256, ed25519, ...),
        with the connection's character set and connection attributes.  The server
        resets the session: session variables return to their defaults (autocommit
        included, as with mysqlclient, which does not set it again), temporary
        tables and prepared statements are gone; the prepared-statement cache is
        cleared, and ``SET NAMES`` runs again when the connection needed it.

        Parameters
        ----------
        user : str or bytes
        passwd, password : str or bytes, optional
            The new user's password (`password` is PyMySQL's name).
        db, database : str or bytes, optional
            The new default database; None: no default database.

        Raises
        ------
        OperationalError
            1045 when the login is refused (MariaDB keeps the previous user's
            session, and the connection stays usable), 1044 for a database the user
            may not use; 2013/2006 when the connection is lost (it is closed);
            2006 on a connection closed with close() (as mysqlclient).
        """
        self._check_closed()
        if password is None:
            password = passwd
        if database is None:
            database = db
        enc = self.encoding
        if not self._lock.acquire(False):
            raise _busy()
        try:
            self._discard_pending()
            self._owner = None
            try:
                self._conn.change_user(_to_bytes(user, enc, "user"),
                                       _to_bytes(password, "utf-8", "password"),
                                       _to_bytes(database, enc, "database"))
            finally:
                # the server drops the session's statements with the command; a new
                # session: the sql_mode is confirmed before a value needs it
                self._mode_doubt = True
                self._mode_lost = False
                self._charset_lost = False   # change_user sends the charset again
                self._stmt_cache.clear()
                self._max_allowed_packet = None
            self.user = user
            self._password = password
            self.database = database
            if self._set_names:
                self._internal_query_locked(self._conn, self._set_names.encode("ascii"))
        finally:
            self._lock.release()

    def stat(self) -> str:
        """The server's status line (COM_STATISTICS; mysqlclient's ``stat()``), e.g.
        ``'Uptime: 42  Threads: 1  Questions: 21  ...'`` (str).

        Raises OperationalError 2006 on a closed or lost connection (as
        mysqlclient)."""
        self._check_closed()
        self._discard_pending()
        return self._conn.stat()

    def fileno(self) -> int:
        """The socket's file descriptor (int; mysqlclient's ``fileno()``).

        Raises OperationalError 2006 on a closed or lost connection (as
        mysqlclient)."""
        self._check_closed()
        return self._conn.fileno()

    @property
    def client_flag(self) -> int:
        """Capability flags in effect for this connection (``CLIENT_*``: those
        asked for and granted by the server; mysqlclient's attribute)."""
        return self._conn.client_flag

    @property
    def server_capabilities(self) -> int:
        """Capability flags the server announced in its handshake (``CLIENT_*``)."""
        return self._conn.server_capabilities

    def field_count(self) -> int:
        """Number of columns of the last statement's result (0 for statements
        without a result set)."""
        self._check_closed()
        return self._conn.field_count

    def insert_id(self) -> int:
        """AUTO_INCREMENT id generated by the last statement that returned OK."""
        self._check_closed()
        return self._conn.insert_id

    def affected_rows(self) -> int:
        """Rows affected by the last statement (rows read, for a result set)."""
        self._check_closed()
        return self._conn.affected_rows

    def warning_count(self) -> int:
        """Number of warnings of the last statement."""
        self._check_closed()
        return self._conn.warning_count

    def more_results(self) -> bool:
        """True when another result of the last statement follows (the server's
        SERVER_MORE_RESULTS_EXISTS; mysqlclient's ``more_results()``): after a
        multi-statement query until :meth:`~mysqlc.cursors.BaseCursor.nextset` reached
        its last result.  Raises OperationalError(2006) on a closed connection."""
        self._check_closed()
        return bool(self._conn.more_results)

    def info(self) -> Optional[str]:
        """The info string of the last OK packet (e.g. ``"Records: 3  Duplicates: 0
        Warnings: 0"``), or None."""
        self._check_closed()
        return self._conn.info

    # ------------------------------------------------------------ literals

    def _literal_options(self):
        self._sync_session()
        return {"no_backslash_escapes": self._conn.no_backslash_escapes,
                "charset": self.charset, "encoding": self.encoding}

    def _confirmed_escape_mode(self):
        """:meth:`_confirm_escape_mode` for the escaping APIs, which have no hex form to
        fall back on: the mode (bool), or ProgrammingError 2014 naming why not."""
        mode = self._confirm_escape_mode()
        if mode is None:
            raise ProgrammingError(
                2014, "Commands out of sync: whether the session's sql_mode has "
                "NO_BACKSLASH_ESCAPES is not known for certain and cannot be asked now "
                "(results unread, the connection in use by another thread or closed, or "
                "the session's charset is not the connection's); escaping this value "
                "needs it")
        return mode

    def _escaped(self, s):
        """`s` (str or bytes-like) escaped for use between quotes as the session's
        sql_mode needs it (see :meth:`escape_string`); bytes."""
        self._sync_session()
        core_module = self._core_module
        charset, encoding = self.charset, self.encoding
        mode = self._escape_mode()
        if mode is None and isinstance(s, (str, bytes, bytearray, memoryview)):
            lit = core_module.literal(s, charset=charset, encoding=encoding, portable=2)
            if lit is not None:
                return lit[1:-1]            # reads the same in both modes
            mode = self._confirmed_escape_mode()
        return core_module.escape_string(s, no_backslash_escapes=bool(mode),
                                         charset=charset, encoding=encoding)

    def escape_string(self, s: Union[str, bytes, bytearray, memoryview]) -> bytes:
        """Escape `s` (str or bytes) for use between quotes; returns ``bytes``.

        Honours the connection charset and the session's NO_BACKSLASH_ESCAPES as
        ``mysql_real_escape_string`` does (backslash escapes, or ``'`` doubled).
        While the connection does not know the mode for certain (after ``CALL``, a
        session reset, with session tracking off...; docs/compat.md "Escaping"),
        a value without a backslash is escaped so that it reads the same in both
        modes (``'`` doubled, nothing else), and one with a backslash first costs a
        ``SET sql_mode=@@sql_mode`` round trip; error 2014 when that
        cannot run now (ProgrammingError, as for a statement: results of an
        unbuffered cursor unread).
        """
        return self._escaped(s)

    def string_literal(self, obj: Union[str, bytes, bytearray, memoryview]) -> bytes:
        """Quoted, escaped string literal of `obj` as ``bytes`` (``str(obj)`` for
        objects that are not str or bytes-like)."""
        if not isinstance(obj, (str, bytes, bytearray, memoryview)):
            obj = str(obj)
        return b"'" + self._escaped(obj) + b"'"

    def literal(self, obj: Any) -> bytes:
        """SQL literal of `obj` as ``bytes``, as the parameters of ``execute`` are
        written (sequences become ``(a,b,...)``; str and bytes escaped for the
        session's sql_mode, see :meth:`escape_string`; where the mode cannot be
        asked now, a value with a backslash is a ``_<charset> X'..'`` hex literal)."""
        self._sync_session()
        return cursors._param_literal(self, obj)

    def escape(self, obj: Any, mapping: Optional[Mapping[Any, Callable[..., Any]]] = None
               ) -> Union[str, bytes]:

        """Literal of `obj` with MySQLdb's encoder dispatch.

        The encoder for ``type(obj)`` in `mapping` (default :attr:`encoders`) is
        called as ``f(obj, mapping)`` and its result (str or bytes) returned;
        without one, str/bytes give :meth:`string_literal` and other objects
        :meth:`literal` (bytes).  Django's schema editor calls
        ``conn.escape(value, conn.encoders)``.
        """
        if mapping is None:
            mapping = self.encoders
        encoder = mapping.get(type(obj))
        if encoder is not None and not isinstance(encoder, (list, tuple)):
            return encoder(obj, mapping)
        if isinstance(obj, (str, bytes, bytearray, memoryview)):
            return self.string_literal(obj)
        return self.literal(obj)
