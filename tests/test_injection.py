"""Injection safety, property-based: any str or bytes parameter comes back identical.

For each connection character set -- utf8mb4, latin1, binary and the multibyte sets
whose second byte can be 0x5C (a backslash: gbk, sjis, big5) -- with and without
``NO_BACKSLASH_ESCAPES``, hypothesis generates parameters (quotes, backslashes, NUL,
0x1A, multibyte characters whose trail byte is a backslash or a quote, invalid lead
bytes) and checks that ``SELECT %s`` returns them unchanged: the literal the client
built was read by the server's lexer as exactly that value, so no parameter can end
its string literal early.  bytes parameters use ``binary_prefix`` (``_binary'...'``)
so that any byte sequence is a valid value and comes back as bytes.
"""

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import mysqlc  # noqa: E402

EXAMPLES = 120
SPECIALS = ["'", '"', "\\", "\x00", "\x1a", "\n", "\r", "\t", "%", "_", "%s", "''", "\\'", "`", ";", "--", "a"]

# Python codec of each MySQL charset, as mysqlc uses it (latin1 is cp1252)
CODECS = {"utf8mb4": "utf-8", "latin1": "cp1252", "binary": "utf-8", "gbk": "gbk",
          "sjis": "shift_jis", "big5": "big5"}


def _alphabet(codec):
    chars = []
    if codec == "utf-8":
        return None
    for cp in list(range(0x20, 0x7F)) + list(range(0xA0, 0x3100)) + list(range(0x4E00, 0x9FA6, 7)) \
            + list(range(0xFF01, 0xFF9F)):
        ch = chr(cp)
        try:
            if ch.encode(codec).decode(codec) != ch:   # e.g. shift_jis: U+00A5 -> 0x5C -> '\\'
                continue
        except UnicodeError:
            continue
        chars.append(ch)
    # characters whose encoding has 0x5C ('\') or 0x27 (') as a trail byte: the classic traps
    traps = [ch for ch in chars if len(ch.encode(codec)) > 1 and ch.encode(codec)[-1:] in (b"\\", b"'", b"`")]
    return chars, traps


def _text_strategy(charset):
    codec = CODECS[charset]
    special = st.sampled_from(SPECIALS)
    if codec == "utf-8":
        other = st.characters(blacklist_categories=("Cs",))
    else:
        chars, traps = _alphabet(codec)
        other = st.sampled_from(chars)
        if traps:
            special = st.one_of(special, st.sampled_from(traps))
    return st.lists(st.one_of(special, other), max_size=40).map("".join)


def _bytes_strategy(charset):
    """Bytes with the structure that breaks naive escaping: lead bytes of the charset
    followed by quote/backslash, lone lead bytes at the end, every escape character."""
    tricky = st.sampled_from([b"\\", b"'", b"\x00", b"\x1a", b'"', b"\x81\\", b"\x95\\", b"\xa1\\",
                              b"\xbf'", b"\xff", b"\x81", b"\xe0'", b"%", b"\xc0\x27"])
    return st.lists(st.one_of(tricky, st.binary(max_size=6)), max_size=30).map(b"".join)


def _connect(server, charset, nbe, binary_prefix=False):
    kw = server.connect_kwargs()
    c = mysqlc.connect(charset=charset, binary_prefix=binary_prefix,
                       sql_mode="NO_BACKSLASH_ESCAPES" if nbe else "STRICT_TRANS_TABLES", **kw)
    assert c._conn.no_backslash_escapes == nbe
    return c


CONFIGS = [(cs, nbe) for cs in ("utf8mb4", "latin1", "binary", "gbk", "sjis", "big5") for nbe in (False, True)]
IDS = ["%s-%s" % (cs, "nbe" if nbe else "backslash") for cs, nbe in CONFIGS]


@pytest.mark.parametrize("charset,nbe", CONFIGS, ids=IDS)
def test_str_parameter_round_trips(server, charset, nbe):
    c = _connect(server, charset, nbe)
    cur = c.cursor()
    seen = []

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(_text_strategy(charset))
    def check(value):
        seen.append(value)
        cur.execute("SELECT %s, 'end'", (value,))
        got, end = cur.fetchall()[0]
        want = value.encode("utf-8") if charset == "binary" else value
        assert got == want, (value, got)
        assert end in ("end", b"end")

    try:
        check()
    finally:
        c.close()
    assert len(seen) >= EXAMPLES // 2


@pytest.mark.parametrize("charset,nbe", CONFIGS, ids=IDS)
def test_bytes_parameter_round_trips(server, charset, nbe):
    c = _connect(server, charset, nbe, binary_prefix=True)
    cur = c.cursor()
    seen = []

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(_bytes_strategy(charset))
    def check(value):
        seen.append(value)
        cur.execute("SELECT %s, 'end'", (value,))
        got, end = cur.fetchall()[0]
        assert got == value, (value, got)
        assert end in ("end", b"end")

    try:
        check()
    finally:
        c.close()
    assert len(seen) >= EXAMPLES // 2


@pytest.mark.parametrize("charset,nbe", [("gbk", False), ("sjis", False), ("big5", False), ("gbk", True)])
def test_escape_string_of_raw_bytes_is_one_literal(server, charset, nbe):
    """Raw bytes escaped for the connection charset (no _binary prefix, as
    escape_string() users do) never end the literal early: the statement has exactly
    one column and the marker after it survives."""
    c = _connect(server, charset, nbe)
    cur = c.cursor()

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(_bytes_strategy(charset))
    def check(value):
        lit = b"'" + c.escape_string(value) + b"'"
        cur.execute(b"SELECT HEX(" + lit + b"), 'end'")
        hx, end = cur.fetchall()[0]
        assert end == "end"
        assert bytes.fromhex(hx) == value, (value, hx)

    try:
        check()
    finally:
        c.close()
