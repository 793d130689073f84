"""The DSN parser: ``mysql://user:password@host:port/database?option=value`` ->
keyword arguments of :func:`mysqlc.connect`.

One parser serves ``connect(host="mysql://...")`` (:mod:`mysqlc.connections`) and
:func:`mysqlc.columnar.read_sql`; it is public as :func:`mysqlc.columnar.parse_dsn`.
It imports nothing of mysqlc (docs/architecture.md, "Python layer").
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

__all__ = ["parse_dsn"]

_INT_OPTIONS = {"port", "client_flag", "prepared_cache_size", "long_data_threshold"}
_FLOAT_OPTIONS = {"connect_timeout", "read_timeout", "write_timeout"}
_BOOL_OPTIONS = {"autocommit", "compress", "local_infile", "multi_statements", "use_unicode",
                 "ssl_verify_cert", "ssl_verify_identity", "ssl_disabled", "binary_prefix",
                 "get_server_public_key", "enable_cleartext_plugin"}


_DSN_CREDENTIALS = re.compile(r"\A([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*:)(.*)@")


def _redact_dsn(dsn):
    """`dsn` with the password (between ``user:`` and the last ``@``) as ``***``."""
    return _DSN_CREDENTIALS.sub(r"\1***@", dsn, count=1)


def parse_dsn(dsn: str) -> dict[str, Any]:
    """``mysql://user:password@host:port/database?option=value&...`` -> keyword
    arguments of :func:`mysqlc.connect` (``mariadb://`` too; percent-escapes decoded;
    ``?unix_socket=/path`` for a socket).  Raises ValueError for another scheme or
    a malformed DSN; its message never contains the password."""
    try:
        u = urllib.parse.urlsplit(dsn)
        port = u.port
    except ValueError:
        # urllib's text can quote a piece of the password (a '/' in it ends the host)
        raise ValueError("invalid DSN %r: its host or port cannot be parsed (a '/', '?', "
                         "'#' or '@' in the user or password must be %%-escaped)"
                         % (_redact_dsn(dsn),)) from None
    if u.scheme not in ("mysql", "mariadb", "mysql+mysqlc", "mariadb+mysqlc"):
        raise ValueError("DSN must start with mysql:// (got %r)" % (u.scheme + "://",))
    kw = {}
    if u.username is not None:
        kw["user"] = urllib.parse.unquote(u.username)
    if u.password is not None:
        kw["password"] = urllib.parse.unquote(u.password)
    if u.hostname:
        kw["host"] = u.hostname
    if port:
        kw["port"] = port
    db = urllib.parse.unquote(u.path.lstrip("/"))
    if db:
        kw["database"] = db
    for key, value in urllib.parse.parse_qsl(u.query, keep_blank_values=True):
        if key in _INT_OPTIONS:
            value = int(value)
        elif key in _FLOAT_OPTIONS:
            value = float(value)
        elif key in _BOOL_OPTIONS:
            value = value.lower() in ("1", "true", "yes", "on")
        kw[key] = value
    return kw
