"""MySQL option files (``my.cnf``) for ``connect(read_default_file=...,
read_default_group=...)``.

The format is the one libmysqlclient and MariaDB Connector/C read (MySQL
Reference Manual, "Using Option Files"):

- ``[group]`` lines start a group; options before the first group are ignored.
- ``name``, ``name = value``; blanks around the name and the value are
  dropped; ``_`` and ``-`` in a name are the same; a ``loose-`` prefix is
  removed (mysqlc ignores options it does not know anyway).
- A value may be in single or double quotes; inside, a ``#`` does not start a
  comment.  The escapes ``\\b \\t \\n \\r \\\\ \\s`` (a space) ``\\"`` and
  ``\\'`` are decoded; a backslash before any other character stays.
- Lines starting with ``#`` or ``;`` are comments; ``#`` outside quotes starts
  a comment anywhere on a line.
- ``!include FILE`` reads another file, ``!includedir DIR`` every ``*.cnf`` of
  a directory (in name order).  Includes nest up to :data:`MAX_INCLUDE_DEPTH`
  levels; a missing include is ignored, as the C libraries do.

Which files are read (as MariaDB Connector/C, which mysqlclient uses on
Debian and Ubuntu): with `read_default_file` that file alone; with only
`read_default_group` the default files ``/etc/my.cnf``,
``/etc/mysql/my.cnf``, ``$MARIADB_HOME/my.cnf`` (else ``$MYSQL_HOME/my.cnf``)
and ``~/.my.cnf``, in that order (a later file wins).  A file that does not
exist or cannot be read is ignored silently, as both peers do.  The groups
read are ``client``, ``client-server``, ``client-mariadb`` and
`read_default_group` (group names compare case-insensitively); within the
groups the last occurrence of an option wins.
"""

import os

from .errors import ProgrammingError

__all__ = ["parse", "read_options", "connect_options", "default_files", "CLIENT_GROUPS"]

#: Groups every client reads (MariaDB Connector/C's list; MySQL's is ``client``).
CLIENT_GROUPS = ("client", "client-server", "client-mariadb")

#: How deep ``!include`` / ``!includedir`` may nest.
MAX_INCLUDE_DEPTH = 10

_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "r": "\r", "s": " ", "\\": "\\",
            '"': '"', "'": "'"}


def default_files():
    """The default option files, in reading order (a later one wins)."""
    files = ["/etc/my.cnf", "/etc/mysql/my.cnf"]
    home = os.environ.get("MARIADB_HOME") or os.environ.get("MYSQL_HOME")
    if home:
        files.append(os.path.join(home, "my.cnf"))
    user_home = os.environ.get("HOME")
    if user_home:
        files.append(os.path.join(user_home, ".my.cnf"))
    return files


def _strip_comment(line):
    """`line` up to a ``#`` that is not inside quotes."""
    quote = None
    escaped = False
    for i, ch in enumerate(line):
        if ch in "'\"" and not escaped:
            if quote is None:
                quote = ch
            elif quote == ch:
                quote = None
        if quote is None and ch == "#":
            return line[:i]
        escaped = quote is not None and ch == "\\" and not escaped
    return line


def _unquote(value):
    """Remove the quotes around `value` and decode its escapes."""
    if value[:1] in ("'", '"'):
        value = value[1:]
        if value[-1:] in ("'", '"'):
            value = value[:-1]
    out = []
    i, n = 0, len(value)
    while i < n:
        ch = value[i]
        if ch == "\\" and i + 1 < n:
            nxt = value[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def normalize_name(name):
    """Option name as compared: lower case, ``-`` for ``_``, no ``loose-`` prefix."""
    name = name.strip().lower().replace("_", "-")
    if name.startswith("loose-"):
        name = name[len("loose-"):]
    return name


def parse(text, groups, *, path=None, _depth=0, _out=None):
    """Options of `groups` in option-file `text`.

    Parameters
    ----------
    text : str
        The file's contents.
    groups : iterable of str
        Group names to read (case-insensitive).
    path : str, optional
        The file's path: relative ``!include`` / ``!includedir`` paths are
        resolved from its directory.

    Returns
    -------
    list of (str, str or None)
        ``(name, value)`` in file order (names normalized by
        :func:`normalize_name`; ``None`` for an option without a value).

    Raises
    ------
    ProgrammingError
        ``!include`` nests deeper than :data:`MAX_INCLUDE_DEPTH`.
    """
    wanted = {g.lower() for g in groups}
    out = [] if _out is None else _out
    base = os.path.dirname(path) if path else os.getcwd()
    in_group = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("!"):
            word, _, arg = line.partition(" ")
            arg = arg.strip()
            if word in ("!include", "!includedir") and arg:
                if _depth >= MAX_INCLUDE_DEPTH:
                    raise ProgrammingError(
                        0, "option file %s: !include nested more than %d levels deep"
                        % (path, MAX_INCLUDE_DEPTH))
                target = os.path.join(base, os.path.expanduser(arg))
                if word == "!include":
                    _read_file(target, wanted, _depth + 1, out)
                else:
                    try:
                        names = sorted(os.listdir(target))
                    except OSError:
                        names = []
                    for name in names:
                        if name.endswith(".cnf"):
                            _read_file(os.path.join(target, name), wanted, _depth + 1, out)
            continue
        if line.startswith("["):
            end = line.find("]")
            name = line[1:end] if end > 0 else line[1:]
            in_group = name.strip().lower() in wanted
            continue
        if not in_group:
            continue
        line = _strip_comment(line).strip()
        if not line:
            continue
        name, eq, value = line.partition("=")
        name = normalize_name(name)
        if not name:
            continue
        out.append((name, _unquote(value.strip()) if eq else None))
    return out


def _read_file(path, groups, depth, out):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:      # missing or unreadable: ignored, as libmysqlclient does
        return
    parse(data.decode("utf-8", "surrogateescape"), groups, path=path, _depth=depth,
          _out=out)


def read_options(read_default_file=None, read_default_group=None):
    """The options of the files and groups mysqlclient would read.

    Returns
    -------
    dict
        Normalized option name -> value (str, or None for an option without a
        value); the last occurrence of a name wins.
    """
    return dict(_read_pairs(read_default_file, read_default_group))


def _read_pairs(read_default_file=None, read_default_group=None):
    """``(name, value)`` of every option line that mysqlclient would read, in the
    order read (files, ``!include`` lines and groups as :func:`read_options`)."""
    groups = list(CLIENT_GROUPS)
    if read_default_group:
        groups.append(os.fsdecode(read_default_group))
    if read_default_file:
        files = [os.fsdecode(os.fspath(read_default_file))]
    else:
        files = default_files()
    out = []
    for path in files:
        _read_file(os.path.expanduser(path), {g.lower() for g in groups}, 0, out)
    return out


def _flag(name, value):
    """An option that is on without a value, or with 1/0, on/off, true/false."""
    if value is None:
        return True
    v = value.strip().lower()
    if v in ("1", "on", "true", "yes", ""):
        return True
    if v in ("0", "off", "false", "no"):
        return False
    raise ProgrammingError(0, "option file: %s=%r is not a boolean (1/0, on/off)"
                           % (name, value))


def _int(name, value):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ProgrammingError(0, "option file: %s=%r is not a number" % (name, value)) from None


_STRINGS = {
    "host": "host", "user": "user", "password": "password", "database": "database",
    "socket": "unix_socket", "default-character-set": "charset",
    "init-command": "init_command", "ssl-ca": "ssl_ca", "ssl-capath": "ssl_capath",
    "ssl-cert": "ssl_cert", "ssl-key": "ssl_key", "ssl-cipher": "ssl_cipher",
    "ssl-mode": "ssl_mode", "tls-version": "tls_version",
    "server-public-key": "server_public_key", "server-public-key-path": "server_public_key",
}
_FLAGS = {
    "compress": "compress", "local-infile": "local_infile",
    "get-server-public-key": "get_server_public_key",
    "enable-cleartext-plugin": "enable_cleartext_plugin",
    "ssl-verify-server-cert": "ssl_verify_identity",
    # mysqlc's own: write it loose-pipelining=0 under [client] (the mysql client skips
    # unknown loose- options instead of refusing them)
    "pipelining": "pipelining",
}


def connect_options(read_default_file=None, read_default_group=None):
    """``mysqlc.connect`` keyword arguments from the option files.

    The option names honoured (others are ignored, as libmysqlclient ignores
    what it does not know): ``host``, ``port``, ``user``, ``password``,
    ``database``, ``socket``, ``protocol`` (``tcp`` / ``socket``),
    ``default-character-set``, ``init-command``, ``connect-timeout`` (also
    ``timeout``), ``compress``, ``local-infile`` (``disable-local-infile``),
    ``ssl-ca``, ``ssl-capath``, ``ssl-cert``, ``ssl-key``, ``ssl-cipher``,
    ``ssl-mode``, ``ssl-verify-server-cert``, ``tls-version``,
    ``server-public-key(-path)``, ``get-server-public-key``,
    ``enable-cleartext-plugin``, and mysqlc's own ``pipelining`` (give it as
    ``loose-pipelining=0`` in a group the mysql client reads too).

    Raises
    ------
    ProgrammingError
        A value that cannot be used (``port=abc``, ``protocol=pipe``).

    Notes
    -----
    Every ``init-command`` line read counts, in the order read (a tuple when
    there are several), as libmysqlclient adds each to its list of init
    commands; for the other options the last occurrence wins.
    """
    pairs = _read_pairs(read_default_file, read_default_group)
    opts = dict(pairs)
    kw = {}
    inits = tuple(v for n, v in pairs if n == "init-command" and v is not None)
    if len(inits) > 1:
        opts.pop("init-command")
        kw["init_command"] = inits
    for name, value in opts.items():
        if name in _STRINGS:
            if value is not None:       # "password" alone means "ask" in the CLI
                kw[_STRINGS[name]] = value
        elif name in _FLAGS:
            kw[_FLAGS[name]] = _flag(name, value)
        elif name == "disable-local-infile":
            if _flag(name, value):
                kw["local_infile"] = False
        elif name == "port":
            kw["port"] = _int(name, value)
        elif name in ("connect-timeout", "timeout"):
            kw["connect_timeout"] = _int(name, value)
        elif name == "protocol":
            proto = (value or "").strip().lower()
            if proto not in ("tcp", "socket"):
                raise ProgrammingError(
                    0, "option file: protocol=%r is not supported (tcp or socket)" % (value,))
            kw["protocol"] = proto
    return kw
