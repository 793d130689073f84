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

__all__ = ["parse_dsn", "redact_host"]

_INT_OPTIONS = {"port", "client_flag", "prepared_cache_size", "long_data_threshold"}
_FLOAT_OPTIONS = {"connect_timeout", "read_timeout", "write_timeout"}
_BOOL_OPTIONS = {"autocommit", "compress", "local_infile", "multi_statements", "use_unicode",
                 "ssl_verify_cert", "ssl_verify_identity", "ssl_disabled", "binary_prefix",
                 "get_server_public_key", "enable_cleartext_plugin", "pipelining"}


_DSN_CREDENTIALS = re.compile(r"\A([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*:)(.*)@")


def _redact_dsn(dsn):
    """`dsn` with the password (between ``user:`` and the last ``@``) as ``***``."""
    return _DSN_CREDENTIALS.sub(r"\1***@", dsn, count=1)


def redact_host(host: str) -> str:
    """`host` for a message when it is not a host name because credentials came with it
    (``user:password@host``: a DSN missing its ``mysql://``, or a URL whose password has
    an unescaped ``@``): everything before the last ``@`` as ``***``."""
    at = host.rfind("@")
    return host if at < 0 else "***" + host[at:]


def _invalid(dsn: str, why: str) -> ValueError:
    return ValueError("invalid DSN %r: %s" % (_redact_dsn(dsn), why))


def _option(key: str, value: str, convert: Any, what: str) -> Any:
    try:
        return convert(value)
    except ValueError:
        pass
    # raised outside the except block: no __context__ (the value is not secret, but the
    # rule is one: an error of parse_dsn carries nothing but its own text)
    raise ValueError("DSN option %s=%r is not %s" % (key, value, what))


def parse_dsn(dsn: str) -> dict[str, Any]:
    """``mysql://user:password@host:port/database?option=value&...`` -> keyword
    arguments of :func:`mysqlc.connect` (``mariadb://`` too; percent-escapes decoded;
    ``?unix_socket=/path`` for a socket).

    Raises ValueError for another scheme, a missing one, or a malformed DSN (a port
    that is not a number, an integer or float option that is not one).  No message
    contains the password, and the exception has no ``__cause__``/``__context__``
    (urllib's text can quote a piece of the password)."""
    try:
        u = urllib.parse.urlsplit(dsn)
        port = u.port
    except ValueError:
        u = None
    if u is None:
        raise _invalid(dsn, "its host or port cannot be parsed (a '/', '?', '#' or '@' in "
                            "the user or password must be %-escaped)")
    if "://" not in dsn:
        # "user:pw@host/db" parses as the scheme "user": do not name it (it is a user
        # name), and never echo the rest (it holds the password)
        raise ValueError("DSN must start with mysql:// (no '://' in it)")
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
            value = _option(key, value, int, "an integer")
        elif key in _FLOAT_OPTIONS:
            value = _option(key, value, float, "a number")
        elif key in _BOOL_OPTIONS:
            value = value.lower() in ("1", "true", "yes", "on")
        kw[key] = value
    return kw
