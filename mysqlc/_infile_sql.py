"""The file names that the client's own ``LOAD DATA LOCAL INFILE`` statements name.

With ``connect(local_infile=True)`` and no ``local_infile_dir``, mysqlc sends a
file only when the server's request names exactly a file that a ``LOAD DATA
LOCAL INFILE 'name'`` (or ``LOAD XML LOCAL INFILE``) statement of the query the
client sent names (the rule of mysql-connector-python 9.3 and MariaDB
Connector/Python 2.0): a rogue server cannot ask for anything else.

:func:`local_infile_names` reads the statement(s) as MySQL's lexer does:
comments (``#``, ``-- ``, ``/* */``; the contents of ``/*! */`` and ``/*M! */``
executable comments count as SQL), quoted identifiers, string literals in
single or double quotes with backslash escapes (none under
NO_BACKSLASH_ESCAPES) and doubled quotes, several statements separated by
``;``.  The file name must be one plain literal, as in the server's grammar
(``TEXT_STRING_filesystem``): a ``_charset`` or ``N`` introducer, adjacent
literals or a hexadecimal literal there are syntax errors, so they name
nothing.  When in doubt it names nothing (so the file is refused): an
unterminated literal or comment, or a literal with a byte of
0x80 or above in a connection charset whose multibyte characters may contain
the byte 0x5C (big5, gbk, gb18030, sjis, cp932).
"""

__all__ = ["local_infile_names"]

_ESCAPES = {ord("0"): b"\0", ord("b"): b"\b", ord("n"): b"\n", ord("r"): b"\r",
            ord("t"): b"\t", ord("Z"): b"\x1a", ord("%"): b"\\%", ord("_"): b"\\_"}

_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_SPACE = frozenset(b" \t\r\n\f\v")

#: Charsets whose multibyte characters can contain 0x5C (see the module docstring).
_UNSAFE_CHARSETS = frozenset(("big5", "gbk", "gb18030", "sjis", "cp932"))


class _Doubt(Exception):
    """The SQL cannot be read with certainty: name nothing."""


def _string(sql, i, no_backslash_escapes):
    """The literal starting at sql[i] (a quote): (value bytes, index after it)."""
    quote = sql[i]
    out = bytearray()
    i += 1
    n = len(sql)
    while i < n:
        ch = sql[i]
        if ch == quote:
            if i + 1 < n and sql[i + 1] == quote:      # '' inside '...'
                out.append(quote)
                i += 2
                continue
            return bytes(out), i + 1
        if ch == 0x5C and not no_backslash_escapes:      # backslash
            if i + 1 >= n:
                break
            nxt = sql[i + 1]
            out += _ESCAPES.get(nxt, bytes((nxt,)))
            i += 2
            continue
        out.append(ch)
        i += 1
    raise _Doubt("unterminated string literal")


def _tokens(sql, no_backslash_escapes):
    """Tokens of `sql` (bytes): ("w", WORD upper-cased), ("s", value), (";", None),
    ("o", byte) for anything else.  Raises _Doubt."""
    i, n = 0, len(sql)
    out = []
    while i < n:
        ch = sql[i]
        if ch in _SPACE:
            i += 1
        elif ch == 0x23 or (sql.startswith(b"--", i) and (i + 2 >= n or sql[i + 2] in _SPACE)):
            end = sql.find(b"\n", i)
            i = n if end < 0 else end + 1
        elif sql.startswith(b"/*", i):
            if sql.startswith(b"/*!", i) or sql.startswith(b"/*M!", i):
                # executable comment: its contents are SQL; the closing */ is skipped below
                i += 3 if sql[i + 2] == 0x21 else 4
                while i < n and sql[i] in b"0123456789":
                    i += 1
                out.append(("x", None))
                continue
            end = sql.find(b"*/", i + 2)
            if end < 0:
                raise _Doubt("unterminated comment")
            i = end + 2
        elif sql.startswith(b"*/", i):
            i += 2      # the end of an executable comment
        elif ch in (0x27, 0x22):
            value, i = _string(sql, i, no_backslash_escapes)
            out.append(("s", value))
        elif ch == 0x60:                                  # `identifier`
            end = i + 1
            while True:
                end = sql.find(b"`", end)
                if end < 0:
                    raise _Doubt("unterminated quoted identifier")
                if sql.startswith(b"``", end):
                    end += 2
                    continue
                break
            out.append(("w", None))
            i = end + 1
        elif ch == 0x3B:
            out.append((";", None))
            i += 1
        elif ch in _WORD:
            start = i
            while i < n and sql[i] in _WORD:
                i += 1
            out.append(("w", sql[start:i].upper()))
        else:
            out.append(("o", ch))
            i += 1
    return out


def _statement_name(toks, unsafe_charset):
    """The file name of one statement's tokens if it is LOAD DATA/XML LOCAL INFILE."""
    toks = [t for t in toks if t[0] != "x"]
    words = [t[1] for t in toks[:6]]
    if len(words) < 4 or words[0] != b"LOAD" or words[1] not in (b"DATA", b"XML"):
        return None
    k = 2
    if k < len(toks) and toks[k] in (("w", b"LOW_PRIORITY"), ("w", b"CONCURRENT")):
        k += 1
    if toks[k:k + 2] != [("w", b"LOCAL"), ("w", b"INFILE")]:
        return None
    k += 2
    # the grammar wants one plain string literal here: an introducer (_utf8'..',
    # N'..'), adjacent literals, x'..', a variable are syntax errors, never a request
    if k >= len(toks) or toks[k][0] != "s" or (k + 1 < len(toks) and toks[k + 1][0] == "s"):
        return None
    value = toks[k][1]
    if unsafe_charset and any(b >= 0x80 for b in value):
        return None
    return value


def local_infile_names(sql, charset="utf8mb4", no_backslash_escapes=False):
    """File names (bytes, as the server will ask for them) of the ``LOAD DATA
    LOCAL INFILE`` statements in `sql`.

    Parameters
    ----------
    sql : bytes or str
        The query as sent (a str is UTF-8 encoded).
    charset : str
        The connection character set.
    no_backslash_escapes : bool
        The session's NO_BACKSLASH_ESCAPES mode (backslashes are literal).

    Returns
    -------
    list of bytes
        In statement order; empty when the SQL names none or cannot be read
        with certainty.
    """
    if isinstance(sql, str):
        sql = sql.encode("utf-8", "surrogateescape")
    elif not isinstance(sql, bytes):
        sql = bytes(sql)
    try:
        toks = _tokens(sql, no_backslash_escapes)
    except _Doubt:
        return []
    unsafe = charset in _UNSAFE_CHARSETS
    names, current = [], []
    for tok in toks + [(";", None)]:
        if tok[0] == ";":
            name = _statement_name(current, unsafe)
            if name is not None:
                names.append(name)
            current = []
        else:
            current.append(tok)
    return names
