"""Unit tests for src/encode.c: escape_string, literal and format_query (no server).

The functions live in ``mysqlc._core``.  To exercise encode.c on its own (while the
rest of the package is being written), point ``MYSQLC_TEST_ENCODE_MODULE`` at a
standalone extension built from encode.c that exports the same three functions and
a ``ProgrammingError`` class.
"""

import array
import collections
import collections.abc
import datetime
import decimal
import enum
import importlib
import importlib.util
import os
import random
import sys
import tracemalloc
import types

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load():
    path = os.environ.get("MYSQLC_TEST_ENCODE_MODULE")
    if path:
        name = os.path.basename(path).split(".")[0]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod, mod.ProgrammingError
    try:
        from mysqlc import _core
    except ImportError as exc:
        if getattr(exc, "name", None) in ("mysqlc._core", "mysqlc.errors"):
            raise
        # mysqlc/__init__.py is broken: load the submodules without it
        sys.modules.pop("mysqlc", None)
        pkg = types.ModuleType("mysqlc")
        pkg.__path__ = [os.path.join(ROOT, "mysqlc")]
        sys.modules["mysqlc"] = pkg
        _core = importlib.import_module("mysqlc._core")
    errors = importlib.import_module("mysqlc.errors")
    return _core, errors.ProgrammingError


core, ProgrammingError = _load()
escape_string = core.escape_string
literal = core.literal
format_query = core.format_query


def message(excinfo):
    """The message of a mysqlc error raised as cls(errno, message)."""
    args = excinfo.value.args
    return args[-1] if args else str(excinfo.value)


# --------------------------------------------------------------------------
# escape_string

@pytest.mark.parametrize("raw, escaped", [
    (b"\x00", b"\\0"),
    (b"\n", b"\\n"),
    (b"\r", b"\\r"),
    (b"\\", b"\\\\"),
    (b"'", b"\\'"),
    (b'"', b'\\"'),
    (b"\x1a", b"\\Z"),
])
def test_escape_each_special(raw, escaped):
    assert escape_string(raw) == escaped
    assert escape_string(b"a" + raw + b"b") == b"a" + escaped + b"b"


def test_escape_leaves_other_bytes():
    special = set(b"\x00\n\r\\'\"\x1a")
    other = bytes(c for c in range(256) if c not in special)
    assert escape_string(other) == other
    assert escape_string(b"") == b""


def test_escape_mixed():
    assert escape_string(b"it's a \"test\"\r\n\\ \x00\x1a end") == \
        b"it\\'s a \\\"test\\\"\\r\\n\\\\ \\0\\Z end"


def test_escape_input_types():
    assert escape_string(bytearray(b"a'b")) == b"a\\'b"
    assert escape_string(memoryview(b"xa'b")[1:]) == b"a\\'b"
    assert escape_string(array.array("B", b"a'b")) == b"a\\'b"
    assert escape_string("it's é") == b"it\\'s \xc3\xa9"
    assert escape_string("it's é", encoding="latin-1") == b"it\\'s \xe9"
    assert escape_string("€'", encoding="cp1252") == b"\x80\\'"
    assert type(escape_string(b"abc")) is bytes
    with pytest.raises(TypeError):
        escape_string(12)
    with pytest.raises(UnicodeEncodeError):
        escape_string("€", encoding="latin-1")
    with pytest.raises(UnicodeEncodeError):
        escape_string("\ud800")   # lone surrogate is not UTF-8


def test_escape_no_backslash_escapes():
    data = b"a'b\\c\n\r\x00\"\x1a''"
    assert escape_string(data, no_backslash_escapes=True) == b"a''b\\c\n\r\x00\"\x1a''''"
    assert escape_string(data, True) == b"a''b\\c\n\r\x00\"\x1a''''"
    assert escape_string("O'Reilly", no_backslash_escapes=True) == b"O''Reilly"


def test_escape_worst_case_size():
    assert escape_string(b"'" * 1000) == b"\\'" * 1000
    assert escape_string(b"'" * 1000, no_backslash_escapes=True) == b"''" * 1000


# ---- multibyte charsets whose trail byte may be 0x5C ----

@pytest.mark.parametrize("charset, codec, ch, encoded", [
    ("sjis", "shift_jis", "表", b"\x95\x5c"),
    ("sjis", "shift_jis", "ソ", b"\x83\x5c"),
    ("cp932", "cp932", "予", b"\x97\x5c"),
    ("gbk", "gbk", "乗", b"\x81\x5c"),
    ("gb18030", "gb18030", "乗", b"\x81\x5c"),
    ("big5", "big5", "許", b"\xb3\x5c"),
    ("big5", "big5", "么", b"\xa4\x5c"),
])
def test_escape_multibyte_trail_0x5c_kept(charset, codec, ch, encoded):
    assert ch.encode(codec) == encoded
    # the 0x5C trail byte stays single: the server reads lead+trail as one character
    assert escape_string(ch, charset=charset, encoding=codec) == encoded
    assert escape_string(encoded, charset=charset) == encoded
    assert escape_string(ch + "'", charset=charset, encoding=codec) == encoded + b"\\'"
    assert escape_string(ch + "'", True, charset, codec) == encoded + b"''"
    assert literal(ch, charset=charset, encoding=codec) == b"'" + encoded + b"'"
    # without the charset the same bytes are treated byte by byte
    assert escape_string(encoded) == encoded[:1] + b"\\\\"


def test_escape_multibyte_invalid_lead_is_escaped():
    # 0xBF 0x27 is not a GBK character: the lead byte gets a backslash so the
    # server cannot pair it with the backslash that escapes the quote
    assert escape_string(b"\xbf'", charset="gbk") == b"\\\xbf\\'"
    assert escape_string(b"\xbf", charset="gbk") == b"\\\xbf"
    assert escape_string(b"\xbf'", charset="gbk", no_backslash_escapes=True) == b"\xbf''"
    # 0x85 is not a big5 lead byte (leads are 0xA1-0xF9), so 0x5C after it is a
    # real backslash and must be doubled
    assert escape_string(b"\x85\x5c", charset="big5") == b"\x85\\\\"
    assert escape_string(b"\x85\x5c", charset="gbk") == b"\x85\x5c"
    # sjis leads are 0x81-0x9F and 0xE0-0xFC; 0xA5 is a single-byte katakana
    assert escape_string(b"\xa5\x5c", charset="sjis") == b"\xa5\\\\"
    assert escape_string(b"\xe0\x5c", charset="sjis") == b"\xe0\x5c"
    # 0x80 is never a lead byte
    assert escape_string(b"\x80'", charset="gbk") == b"\x80\\'"


def test_escape_gb18030_four_byte():
    four = "\x80".encode("gb18030")
    assert four == b"\x81\x30\x81\x30"
    assert escape_string(four + b"'", charset="gb18030") == four + b"\\'"
    emoji = "\U0001F600".encode("gb18030")
    assert len(emoji) == 4
    assert escape_string("\U0001F600'", charset="gb18030", encoding="gb18030") == emoji + b"\\'"
    # a lead byte and a digit that do not complete a 4-byte sequence
    assert escape_string(b"\x81\x30'", charset="gb18030") == b"\\\x810\\'"
    assert escape_string(b"\x81\x30\x81", charset="gb18030") == b"\\\x810\\\x81"


def test_escape_charset_names():
    # the multibyte rules apply to these MySQL charset names only
    assert escape_string(b"\x95\x5c", charset="SJIS") == b"\x95\x5c"
    assert escape_string(b"\x95\x5c", charset="utf8mb4") == b"\x95\\\\"
    assert escape_string(b"\x95\x5c", charset="latin1") == b"\x95\\\\"
    assert escape_string(b"\x95\x5c", charset="ujis") == b"\x95\\\\"
    assert escape_string(b"\x95\x5c", charset=None) == b"\x95\\\\"
    with pytest.raises(TypeError):
        escape_string(b"x", charset=b"gbk")


# A model of the server's lexer reading a quoted string literal (sql_lex.cc
# get_text with my_ismbchar of ctype-big5/gbk/gb18030/sjis/cp932.cc): used to check
# that what escape_string produces reads back as the original bytes and that the
# literal ends exactly at its closing quote.

def _in(c, *ranges):
    return any(lo <= c <= hi for lo, hi in ranges)


def _server_mbchar(cs, b, i):
    if i + 1 >= len(b):
        return 0
    c, d = b[i], b[i + 1]
    if cs == "big5":
        return 2 if _in(c, (0xA1, 0xF9)) and _in(d, (0x40, 0x7E), (0xA1, 0xFE)) else 0
    if cs == "gbk":
        return 2 if _in(c, (0x81, 0xFE)) and _in(d, (0x40, 0x7E), (0x80, 0xFE)) else 0
    if cs in ("sjis", "cp932"):
        return 2 if (_in(c, (0x81, 0x9F), (0xE0, 0xFC))
                     and _in(d, (0x40, 0x7E), (0x80, 0xFC))) else 0
    if cs == "gb18030":
        if not _in(c, (0x81, 0xFE)):
            return 0
        if _in(d, (0x40, 0x7E), (0x80, 0xFE)):
            return 2
        if (i + 3 < len(b) and _in(d, (0x30, 0x39)) and _in(b[i + 2], (0x81, 0xFE))
                and _in(b[i + 3], (0x30, 0x39))):
            return 4
    return 0


_UNESCAPE = {ord("0"): 0, ord("n"): 10, ord("r"): 13, ord("Z"): 26, ord("b"): 8, ord("t"): 9}


def _server_read(cs, lit, nbe):
    """(value, end) of the string literal starting at lit[0] == "'"."""
    assert lit[0:1] == b"'"
    out = bytearray()
    i = 1
    while i < len(lit):
        n = _server_mbchar(cs, lit, i)
        if n:
            out += lit[i:i + n]
            i += n
            continue
        c = lit[i]
        if c == 0x5C and not nbe:
            e = lit[i + 1]
            out.append(_UNESCAPE.get(e, e))
            i += 2
        elif c == 0x27:
            if lit[i + 1:i + 2] == b"'":
                out.append(0x27)
                i += 2
            else:
                return bytes(out), i + 1
        else:
            out.append(c)
            i += 1
    raise AssertionError("unterminated literal %r" % lit)


@pytest.mark.parametrize("charset", ["utf8mb4", "big5", "gbk", "gb18030", "sjis", "cp932"])
@pytest.mark.parametrize("nbe", [False, True])
def test_escape_reads_back_on_server(charset, nbe):
    alphabet = b"\x00\n\r\x1a'\"\\a0\x30\x39\x40\x7e\x7f\x80\x81\x85\x95\x9f\xa0\xa1\xa5" \
               b"\xbf\xe0\xf9\xfa\xfc\xfd\xfe\xff"
    rnd = random.Random(1234)
    for _ in range(3000):
        data = bytes(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
        lit = literal(data, nbe, charset) + b" OR 1=1 -- '"
        value, end = _server_read(charset, lit, nbe)
        assert value == data, (data, lit)
        assert lit[end:] == b" OR 1=1 -- '", (data, lit)


# --------------------------------------------------------------------------
# literal

@pytest.mark.parametrize("value, expected", [
    (None, b"NULL"),
    (True, b"1"),
    (False, b"0"),
    (0, b"0"),
    (-1, b"-1"),
    (9223372036854775807, b"9223372036854775807"),
    (-9223372036854775808, b"-9223372036854775808"),
    (2 ** 64, b"18446744073709551616"),
    (-(10 ** 30), b"-1000000000000000000000000000000"),
    (1.5, b"1.5e0"),
    (0.1, b"0.1e0"),
    (-0.0, b"-0.0e0"),
    (100.0, b"100.0e0"),
    (1e16, b"1e+16"),
    (1e-07, b"1e-07"),
    (1.7976931348623157e308, b"1.7976931348623157e+308"),
    (decimal.Decimal("1.50"), b"1.50"),
    (decimal.Decimal("-0.001"), b"-0.001"),
    (decimal.Decimal("1E+3"), b"1000"),
    (decimal.Decimal("-1E+2"), b"-100"),
    (decimal.Decimal("0E-7"), b"0.0000000"),
    (decimal.Decimal("1.23E-7"), b"0.000000123"),
    (decimal.Decimal("-0"), b"-0"),
    (decimal.Decimal("12345678901234567890.123456789"), b"12345678901234567890.123456789"),
    ("abc", b"'abc'"),
    ("", b"''"),
    ("O'Reilly", b"'O\\'Reilly'"),
    ("é", b"'\xc3\xa9'"),
    (b"a'b\x00", b"'a\\'b\\0'"),
    (b"", b"''"),
    (bytearray(b"x\ny"), b"'x\\ny'"),
    (memoryview(b"\\"), b"'\\\\'"),
])
def test_literal_values(value, expected):
    assert literal(value) == expected


@pytest.mark.parametrize("value, text", [
    (float("inf"), "inf"), (float("-inf"), "-inf"), (float("nan"), "nan")])
def test_literal_float_not_finite(value, text):
    with pytest.raises(ProgrammingError) as ei:
        literal(value)
    assert message(ei) == "%s can not be used with MySQL" % text


@pytest.mark.parametrize("value", ["NaN", "-NaN", "sNaN", "Infinity", "-Infinity"])
def test_literal_decimal_not_finite(value):
    with pytest.raises(ProgrammingError) as ei:
        literal(decimal.Decimal(value))
    assert "can not be used with MySQL" in message(ei)
    assert "Decimal(" in message(ei)


def test_literal_str_options():
    assert literal("O'Reilly", no_backslash_escapes=True) == b"'O''Reilly'"
    assert literal("é", encoding="latin-1") == b"'\xe9'"
    assert literal("é", encoding="utf8") == b"'\xc3\xa9'"
    assert literal("€", encoding="cp1252") == b"'\x80'"
    assert literal("表", charset="sjis", encoding="shift_jis") == b"'\x95\x5c'"
    with pytest.raises(UnicodeEncodeError):
        literal("€", encoding="latin-1")
    with pytest.raises(UnicodeEncodeError):
        literal("é", encoding="ascii")
    with pytest.raises(LookupError):
        literal("é", encoding="no-such-codec")


# the C code encodes ASCII-only str without calling these codecs
@pytest.mark.parametrize("codec", [
    "cp1252", "windows-1252", "gbk", "cp936", "gb18030", "gb2312", "big5", "cp950",
    "shift_jis", "sjis", "cp932", "ms932", "mskanji", "euc_jp", "ujis", "euc_kr", "cp949",
    "cp1250", "cp1251", "cp1256", "cp1257", "koi8_r", "koi8_u", "iso8859_2", "iso8859_7",
    "iso8859_8", "iso8859_9", "iso8859_13", "cp850", "cp852", "cp866", "mac_roman",
    "tis_620", "ascii", "latin-1"])
def test_literal_ascii_compatible_codecs(codec):
    ascii_text = "".join(map(chr, range(128)))
    assert ascii_text.encode(codec) == ascii_text.encode("ascii")
    assert literal(ascii_text, encoding=codec) == literal(ascii_text)
    assert literal("ab'c", encoding=codec) == b"'ab\\'c'"


def test_literal_binary_prefix():
    assert literal(b"a'b", binary_prefix=True) == b"_binary'a\\'b'"
    assert literal(bytearray(b"x"), binary_prefix=True) == b"_binary'x'"
    assert literal(memoryview(b"x"), binary_prefix=True) == b"_binary'x'"
    assert literal(b"x", binary_prefix=False) == b"'x'"
    # str is text, never _binary
    assert literal("x", binary_prefix=True) == b"'x'"
    assert literal((b"x", "y"), binary_prefix=True) == b"(_binary'x','y')"


def test_literal_datetime():
    assert literal(datetime.datetime(2024, 1, 2, 3, 4, 5)) == b"'2024-01-02 03:04:05'"
    assert literal(datetime.datetime(2024, 1, 2, 3, 4, 5, 60)) == \
        b"'2024-01-02 03:04:05.000060'"
    assert literal(datetime.datetime(1, 1, 1)) == b"'0001-01-01 00:00:00'"
    assert literal(datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)) == \
        b"'9999-12-31 23:59:59.999999'"
    aware = datetime.datetime(2024, 1, 2, 3, 4, 5,
                              tzinfo=datetime.timezone(datetime.timedelta(hours=5)))
    assert literal(aware) == b"'2024-01-02 03:04:05'"   # tzinfo ignored


def test_literal_date_time():
    assert literal(datetime.date(2024, 2, 29)) == b"'2024-02-29'"
    assert literal(datetime.date(5, 1, 2)) == b"'0005-01-02'"
    assert literal(datetime.time(1, 2, 3)) == b"'01:02:03'"
    assert literal(datetime.time(23, 59, 59, 400)) == b"'23:59:59.000400'"
    assert literal(datetime.time(0, 0)) == b"'00:00:00'"


@pytest.mark.parametrize("delta, expected", [
    (datetime.timedelta(0), b"'0:00:00'"),
    (datetime.timedelta(seconds=1), b"'0:00:01'"),
    (datetime.timedelta(seconds=-1), b"'-0:00:01'"),
    (datetime.timedelta(days=1, hours=2), b"'26:00:00'"),
    (datetime.timedelta(hours=838, minutes=59, seconds=59), b"'838:59:59'"),
    (datetime.timedelta(hours=-838, minutes=-59, seconds=-59), b"'-838:59:59'"),
    (datetime.timedelta(microseconds=-1), b"'-0:00:00.000001'"),
    (datetime.timedelta(hours=-25, microseconds=500), b"'-24:59:59.999500'"),
    (datetime.timedelta(minutes=61, microseconds=10), b"'1:01:00.000010'"),
    (datetime.timedelta(days=-1), b"'-24:00:00'"),
    (datetime.timedelta.max, b"'23999999999:59:59.999999'"),
    (datetime.timedelta.min, b"'-23999999976:00:00'"),
])
def test_literal_timedelta(delta, expected):
    assert literal(delta) == expected


def test_literal_sequences():
    assert literal((1, 2, 3)) == b"(1,2,3)"
    assert literal([1, "a", None, b"b"]) == b"(1,'a',NULL,'b')"
    assert literal(("x",)) == b"('x')"
    assert literal(()) == b"()"
    assert literal([]) == b"()"
    assert literal((1, (2, [3, "'"]))) == b"(1,(2,(3,'\\'')))"
    # a set is a MySQL SET value (mysqlclient's Set2Str)
    assert literal(frozenset(["a"])) == b"'a'"
    s = {"a", "c", "it's"}
    assert literal(s) == b"'" + ",".join(s).replace("'", "\\'").encode() + b"'"
    assert literal(set()) == b"''"
    with pytest.raises(TypeError):
        literal({7})
    assert literal(("O'Reilly",), no_backslash_escapes=True) == b"('O''Reilly')"
    assert literal([1.5, decimal.Decimal("2.5"), datetime.date(2000, 1, 1)]) == \
        b"(1.5e0,2.5,'2000-01-01')"
    with pytest.raises(ProgrammingError):
        literal((1, float("nan")))
    loop = []
    loop.append(loop)
    with pytest.raises(RecursionError):
        literal(loop)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


class Color(enum.IntEnum):
    RED = 1
    BLUE = 2


class MyStr(str):
    def __str__(self):
        return "wrong"


class MyFloat(float):
    def __repr__(self):
        return "wrong"


class MyBytes(bytes):
    pass


class MyDate(datetime.date):
    pass


class MyDecimal(decimal.Decimal):
    def __str__(self):
        return "wrong"

    def __format__(self, spec):
        return "wrong"


class Indexable:
    def __index__(self):
        return 42


def test_literal_subclasses_use_the_value():
    assert literal(Color.BLUE) == b"2"
    assert literal(MyStr("a'b")) == b"'a\\'b'"
    assert literal(MyFloat(2.5)) == b"2.5e0"
    assert literal(MyBytes(b"x'")) == b"'x\\''"
    assert literal(MyBytes(b"x"), binary_prefix=True) == b"_binary'x'"
    assert literal(MyDate(2020, 5, 6)) == b"'2020-05-06'"
    assert literal(MyDecimal("3.25")) == b"3.25"
    assert literal(MyDecimal("3E+2")) == b"300"
    assert literal(Indexable()) == b"42"
    assert literal(collections.namedtuple("P", "a b")(1, "x")) == b"(1,'x')"


def test_literal_encoders_hook():
    encoders = {Point: lambda p: b"POINT(%d,%d)" % (p.x, p.y)}
    assert literal(Point(1, 2), encoders=encoders) == b"POINT(1,2)"
    # str results are encoded with the connection encoding, used verbatim
    assert literal(Point(1, 2), encoders={Point: lambda p: "'é'"}) == b"'\xc3\xa9'"
    assert literal(Point(1, 2), encoders={Point: lambda p: "'é'"}, encoding="latin-1") == \
        b"'\xe9'"
    # inside sequences too
    assert literal((Point(3, 4), 5), encoders=encoders) == b"(POINT(3,4),5)"
    # the key is the exact type; registered subclasses of builtins are honoured
    assert literal(MyStr("x"), encoders={MyStr: lambda s: b"'custom'"}) == b"'custom'"
    assert literal(Color.RED, encoders={Color: lambda c: b"'%s'" % c.name.encode()}) == \
        b"'RED'"
    assert literal({1}, encoders={set: lambda s: b"'1'"}) == b"'1'"
    # exact builtin scalar types are not looked up
    assert literal("x", encoders={str: lambda s: b"nope"}) == b"'x'"
    assert literal(5, encoders={int: lambda s: b"nope"}) == b"5"
    # empty dict and None are the same as no encoders
    assert literal(Color.RED, encoders={}) == b"1"
    assert literal(Color.RED, encoders=None) == b"1"
    with pytest.raises(ProgrammingError) as ei:
        literal(Point(1, 2), encoders={Point: lambda p: 12})
    assert "Point" in message(ei) and "int" in message(ei)

    def boom(p):
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        literal(Point(1, 2), encoders={Point: boom})
    with pytest.raises(TypeError):
        literal(Point(1, 2), encoders=[(Point, str)])


def test_literal_unsupported_type():
    with pytest.raises(ProgrammingError) as ei:
        literal(Point(1, 2))
    assert "unsupported parameter type" in message(ei)
    assert "Point" in message(ei)
    with pytest.raises(ProgrammingError) as ei:
        literal(object(), encoders={Point: str})
    assert "object" in message(ei)
    with pytest.raises(ProgrammingError):
        literal({"a": 1})
    with pytest.raises(ProgrammingError):
        literal(1j)


def test_argument_parsing():
    assert literal("x", False, "utf8mb4", "utf-8", None, False) == b"'x'"
    assert literal(obj="x") == b"'x'"
    assert escape_string(data=b"'") == b"\\'"
    assert format_query(query=b"%s", args=(1,)) == b"1"
    with pytest.raises(TypeError):
        literal()
    with pytest.raises(TypeError):
        literal("x", bogus=1)
    with pytest.raises(TypeError):
        literal("x", False, no_backslash_escapes=True)
    with pytest.raises(TypeError):
        literal("x", False, "utf8mb4", "utf-8", None, False, "extra")
    with pytest.raises(TypeError):
        format_query(b"%s")
    with pytest.raises(TypeError):
        literal("x", encoding=1)


# --------------------------------------------------------------------------
# format_query

def test_format_sequence():
    assert format_query(b"SELECT %s, %s", (1, "a'b")) == b"SELECT 1, 'a\\'b'"
    assert format_query(b"SELECT %s, %s", [None, 2.5]) == b"SELECT NULL, 2.5e0"
    assert format_query(b"%s%s%s", (1, 2, 3)) == b"123"
    assert format_query(b"SELECT 1", ()) == b"SELECT 1"
    assert format_query(b"", ()) == b""
    assert format_query(b"x IN %s", ((1, 2, 3),)) == b"x IN (1,2,3)"
    assert format_query(b"INSERT INTO t VALUES (%s, %s)", (b"\x00", datetime.date(2024, 1, 2)),
                        binary_prefix=True) == \
        b"INSERT INTO t VALUES (_binary'\\0', '2024-01-02')"
    assert format_query(b"SELECT %s", ("O'Reilly",), no_backslash_escapes=True) == \
        b"SELECT 'O''Reilly'"
    assert format_query(b"SELECT %s", ("表",), charset="sjis", encoding="shift_jis") == \
        b"SELECT '\x95\x5c'"
    assert format_query(b"SELECT %s", (Point(1, 2),),
                        encoders={Point: lambda p: b"POINT(1,2)"}) == b"SELECT POINT(1,2)"
    assert format_query(bytearray(b"SELECT %s"), (1,)) == b"SELECT 1"


def test_format_percent():
    assert format_query(b"SELECT '100%%', %s", (1,)) == b"SELECT '100%', 1"
    assert format_query(b"LIKE 'a%%%%'", ()) == b"LIKE 'a%%'"
    assert format_query(b"%%s", ()) == b"%s"
    assert format_query(b"%%(x)s %(x)s", {"x": 1}) == b"%(x)s 1"
    assert format_query(b"%% %(x)s", {"x": 1}) == b"% 1"
    assert format_query(b"100%%", {}) == b"100%"


def test_format_args_none_leaves_query_untouched():
    q = b"SELECT '100%', '%s', '%(x)s', '%d' %"
    out = format_query(q, None)
    assert out == q
    assert out is q   # no copy
    assert format_query(bytearray(b"a % b"), None) == b"a % b"


def test_format_mapping():
    assert format_query(b"SELECT %(a)s, %(b)s, %(a)s", {"a": 1, "b": "x"}) == \
        b"SELECT 1, 'x', 1"
    assert format_query("%(a b)s|%(é)s".encode(), {"a b": 1, "é": 2}) == b"1|2"
    assert format_query(b"%(f(x))s", {"f(x)": 3}) == b"3"
    assert format_query(b"%(key)s", {b"key": b"v"}) == b"'v'"   # bytes keys, as mysqlclient
    assert format_query(b"%(k)s", {"k": None, b"k": 1}) == b"NULL"   # str key first
    assert format_query(b"SELECT 1", {"unused": object()}) == b"SELECT 1"
    # the name's bytes are decoded with the connection encoding
    assert format_query("%(é)s".encode("latin-1"), {"é": 1}, encoding="latin-1") == b"1"
    assert format_query(b"%(x)s", collections.OrderedDict(x=5)) == b"5"
    assert format_query(b"%(x)s %(y)s", collections.defaultdict(lambda: 0, x=5)) == b"5 0"


class FrozenMap(collections.abc.Mapping):
    def __init__(self, **kw):
        self._d = kw

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


def test_format_mapping_abc():
    assert format_query(b"%(a)s", FrozenMap(a="z")) == b"'z'"
    with pytest.raises(ProgrammingError) as ei:
        format_query(b"%(b)s", FrozenMap(a="z"))
    assert "'b'" in message(ei)


def test_format_mapping_missing_key():
    with pytest.raises(ProgrammingError) as ei:
        format_query(b"SELECT %(id)s, %(name)s", {"id": 1})
    assert "'name'" in message(ei)


def test_format_other_iterables():
    assert format_query(b"%s,%s", (x for x in (1, 2))) == b"1,2"
    assert format_query(b"%s,%s", range(2)) == b"0,1"
    assert format_query(b"%s", collections.deque(["a"])) == b"'a'"


@pytest.mark.parametrize("args", ["ab", b"ab", bytearray(b"ab"), 5, object()])
def test_format_bad_args(args):
    with pytest.raises(ProgrammingError) as ei:
        format_query(b"%s%s", args)
    assert type(args).__name__ in message(ei)


@pytest.mark.parametrize("query, nph, nargs, args", [
    (b"SELECT %s, %s", 2, 3, (1, 2, 3)),
    (b"SELECT %s, %s, %s", 3, 1, (1,)),
    (b"SELECT %s", 1, 0, ()),
    (b"SELECT 1", 0, 2, [1, 2]),
])
def test_format_count_mismatch(query, nph, nargs, args):
    with pytest.raises(ProgrammingError) as ei:
        format_query(query, args)
    msg = message(ei)
    assert "wrong number of parameters" in msg
    assert "%d placeholder" % nph in msg
    assert "%d parameter" % nargs in msg


def test_format_count_mismatch_message():
    with pytest.raises(ProgrammingError) as ei:
        format_query(b"SELECT %s, %s", (1, 2, 3))
    assert message(ei) == ("wrong number of parameters: the query has 2 placeholders (%s) "
                           "but 3 parameters were given")
    with pytest.raises(ProgrammingError) as ei:
        format_query(b"SELECT %s, %s", (1,))
    assert message(ei) == ("wrong number of parameters: the query has 2 placeholders (%s) "
                           "but 1 parameter was given")


@pytest.mark.parametrize("query, args, needle", [
    (b"SELECT %d", (1,), "'d'"),
    (b"SELECT %5s", (1,), "'5'"),
    (b"SELECT %\xff", (1,), "0xff"),
    (b"SELECT %", (1,), "end of the query"),
    (b"SELECT %s %", (1,), "end of the query"),
    (b"SELECT %(a)d", {"a": 1}, "'d'"),
    (b"SELECT %(a", {"a": 1}, "')'"),
    (b"SELECT %(a)", {"a": 1}, "'s'"),
    (b"SELECT %s", {"a": 1}, "mapping"),
    (b"SELECT %(a)s", (1,), "sequence"),
])
def test_format_bad_placeholders(query, args, needle):
    with pytest.raises(ProgrammingError) as ei:
        format_query(query, args)
    assert needle in message(ei)


def test_format_value_errors_propagate():
    with pytest.raises(ProgrammingError) as ei:
        format_query(b"%s", (float("inf"),))
    assert message(ei) == "inf can not be used with MySQL"
    with pytest.raises(ProgrammingError) as ei:
        format_query(b"%s", (Point(1, 2),))
    assert "Point" in message(ei)
    with pytest.raises(UnicodeEncodeError):
        format_query(b"%s", ("€",), encoding="latin-1")
    with pytest.raises(TypeError):
        format_query("SELECT %s", (1,))   # query must be bytes


def test_format_large_values():
    blob = bytes(range(256)) * 4096   # 1 MiB, every byte value
    out = format_query(b"INSERT INTO t VALUES (%s, %s)", (blob, "x" * 100000))
    lit = literal(blob)
    assert out == b"INSERT INTO t VALUES (" + lit + b", '" + b"x" * 100000 + b"')"
    assert len(lit) == len(blob) + 4096 * 7 + 2
    many = tuple(range(5000))
    assert format_query(b",".join([b"%s"] * 5000), many) == \
        b",".join(str(i).encode() for i in many)


def test_sizes_around_internal_buffer_limits():
    # results up to a few hundred bytes are built on the stack, larger ones in a
    # growing bytes object: cross the boundary from every side
    for n in range(200, 300):
        assert escape_string(b"'" * n) == b"\\'" * n
        assert literal("a" * n) == b"'" + b"a" * n + b"'"
        assert literal(b"\x00" * n) == b"'" + b"\\0" * n + b"'"
        q = b"x" * n + b" %s %s"
        assert format_query(q, ("'" * n, 7)) == b"x" * n + b" '" + b"\\'" * n + b"' 7"
        assert format_query(b"%s" * (n // 10), tuple(["ab"] * (n // 10))) == \
            b"'ab'" * (n // 10)


def test_format_list_mutated_by_encoder():
    args = [None, None]

    def shrink(p):
        args.clear()
        return b"P"
    args[0] = Point(0, 0)
    args[1] = 1
    with pytest.raises(ProgrammingError) as ei:
        format_query(b"%s,%s", args, encoders={Point: shrink})
    assert "wrong number of parameters" in message(ei)


def test_no_leaks():
    encoders = {Point: lambda p: b"P"}
    args = (1, 2 ** 70, 1.5, "é'", b"\x00", None, True, decimal.Decimal("1.5"),
            datetime.datetime(2020, 1, 1, 1, 1, 1, 5), datetime.timedelta(-1, 5, 6),
            (1, "a"), {"b"}, Point(0, 0), Color.RED)
    query = b",".join([b"%s"] * len(args))

    def work():
        format_query(query, args, encoders=encoders)
        format_query(b"%(a)s %(b)s", {"a": 1, "b": "x"})
        literal(args, encoders=encoders)
        escape_string("abc'" * 10)
        escape_string(b"\x95\x5c'", charset="sjis")
        for bad in ((b"%s", (float("nan"),)), (b"%s", (object(),)), (b"%s %s", (1,)),
                    (b"%(x)s", {}), (b"%d", ())):
            try:
                format_query(*bad)
            except ProgrammingError:
                pass

    for _ in range(200):
        work()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            work()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024
