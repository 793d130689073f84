"""``pymysql.converters`` of the PyMySQL flavour.

Encoders ``f(value, mapping=None) -> str`` write SQL literals as PyMySQL does
(``str`` results; bytes as ``_binary X'..'``); decoders ``f(str_or_bytes)`` parse
column text and return the input unchanged when it is not a valid value (PyMySQL's
rule: ``convert_datetime('0000-00-00 00:00:00')`` is the string itself).

The connection does not call these for the built-in types: the C core encodes
parameters and decodes columns itself.  They serve code that calls them directly,
and a ``conv`` dict given to :class:`mysqlc.pymysql.connections.Connection`:
entries that are the functions below are the defaults and change nothing, other
entries become user converters (see :mod:`mysqlc.converters`).
"""

import datetime
import re
import time
import warnings
from decimal import Decimal

from ..constants import FIELD_TYPE
from ..errors import ProgrammingError

__all__ = [
    "escape_item", "escape_not_supported", "escape_sequence", "escape_set", "escape_bool",
    "escape_int", "escape_float", "escape_string", "escape_bytes", "escape_str",
    "escape_None", "escape_timedelta", "escape_time", "escape_datetime", "escape_date",
    "escape_struct_time", "Decimal2Literal", "convert_datetime", "convert_timedelta",
    "convert_time", "convert_date", "convert_bit", "through", "encoders", "decoders",
    "conversions", "Thing2Literal",
]


def escape_item(val, charset=None, mapping=None):
    """Literal of `val` (str) by ``mapping[type(val)]`` (default :data:`encoders`),
    falling back to ``mapping[str]``.

    Raises
    ------
    TypeError
        Neither ``type(val)`` nor ``str`` is in `mapping`; or the encoder refuses
        the type (tuple, list, set, frozenset, dict by default).
    """
    if mapping is None:
        mapping = encoders
    encoder = mapping.get(type(val))
    if not encoder:
        if str not in mapping:
            raise TypeError("no default type converter defined")
        encoder = mapping[str]
    if encoder is escape_sequence:
        return encoder(val, charset, mapping)
    return encoder(val, mapping)


def escape_not_supported(val, charset=None, mapping=None):
    """Raises TypeError: containers are no parameter value."""
    raise TypeError("%s can not be used as parameter" % type(val).__name__)


def escape_sequence(val, charset=None, mapping=None):
    """``(a,b,...)`` of the items' literals (deprecated in PyMySQL, warns)."""
    warnings.warn("escape_sequence is deprecated", DeprecationWarning, stacklevel=2)
    return "(%s)" % ",".join(escape_item(item, charset, mapping) for item in val)


def escape_set(val, charset=None, mapping=None):
    """The items' literals joined by ``,`` (deprecated in PyMySQL, warns)."""
    warnings.warn("escape_set is deprecated", DeprecationWarning, stacklevel=2)
    return ",".join(escape_item(item, charset, mapping) for item in val)


def escape_bool(value, mapping=None):
    """``"1"`` or ``"0"``."""
    return "1" if value else "0"


def escape_int(value, mapping=None):
    """Decimal digits of `value`."""
    return str(value)


def escape_float(value, mapping=None):
    """``repr(value)`` with an exponent (``1.5e0``), so the server reads a DOUBLE.

    Raises ProgrammingError for inf and nan.
    """
    text = repr(value)
    if text in ("inf", "-inf", "nan"):
        raise ProgrammingError("%s can not be used with MySQL" % text)
    return text if "e" in text else text + "e0"


_ESCAPES = {0: "\\0", 0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x1A: "\\Z",
            0x22: '\\"', 0x27: "\\'"}


def escape_string(value, mapping=None):
    """`value` (str) with ``\\0 \\ \\n \\r \\x1a " '`` backslash-escaped, without
    quotes (as ``mysql_real_escape_string`` for backslash-escaping servers)."""
    return value.translate(_ESCAPES)


def escape_bytes(value, mapping=None):
    """``_binary X'<hex>'``."""
    return "_binary X'%s'" % bytes(value).hex()


def escape_str(value, mapping=None):
    """``'<escaped str(value)>'``."""
    return "'%s'" % escape_string(str(value))


def escape_None(value, mapping=None):
    """``NULL``."""
    return "NULL"


def escape_timedelta(obj, mapping=None):
    """``'[-]HH:MM:SS[.ffffff]'``; hours may exceed 24 (a TIME value)."""
    sign = "-" if obj < datetime.timedelta(0) else ""
    obj = abs(obj)
    seconds = obj.days * 86400 + obj.seconds
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    frac = ".%06d" % obj.microseconds if obj.microseconds else ""
    return "'%s%02d:%02d:%02d%s'" % (sign, hours, minutes, seconds, frac)


def escape_time(obj, mapping=None):
    """``'HH:MM:SS[.ffffff]'`` (no time zone)."""
    frac = ".%06d" % obj.microsecond if obj.microsecond else ""
    return "'%02d:%02d:%02d%s'" % (obj.hour, obj.minute, obj.second, frac)


def escape_datetime(obj, mapping=None):
    """``'YYYY-MM-DD HH:MM:SS[.ffffff]'`` (no time zone)."""
    frac = ".%06d" % obj.microsecond if obj.microsecond else ""
    return "'%04d-%02d-%02d %02d:%02d:%02d%s'" % (
        obj.year, obj.month, obj.day, obj.hour, obj.minute, obj.second, frac)


def escape_date(obj, mapping=None):
    """``'YYYY-MM-DD'``."""
    return "'%04d-%02d-%02d'" % (obj.year, obj.month, obj.day)


def escape_struct_time(obj, mapping=None):
    """A ``time.struct_time`` as :func:`escape_datetime` (seconds precision)."""
    return escape_datetime(datetime.datetime(*obj[:6]))


def Decimal2Literal(o, d):
    """Fixed-point text of a Decimal; ProgrammingError for inf and nan."""
    if not o.is_finite():
        raise ProgrammingError("%s can not be used with MySQL" % str(o).lower())
    return format(o, "f")


def _text(obj):
    return obj.decode("ascii") if isinstance(obj, (bytes, bytearray)) else obj


def _micro(frac):
    return int((frac or "").ljust(6, "0")[:6] or 0)


_DATETIME = re.compile(
    r"(\d{1,4})-(\d{1,2})-(\d{1,2})[T ](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?")
_TIMEDELTA = re.compile(r"(-)?(\d{1,3}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?")
_TIME = re.compile(r"(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?")


def convert_datetime(obj):
    """DATETIME/TIMESTAMP text (str or bytes; ``T`` or space between date and
    time) -> ``datetime.datetime``; a date alone goes to :func:`convert_date`;
    an invalid value (zero dates, Feb 31) is returned as the str."""
    obj = _text(obj)
    m = _DATETIME.fullmatch(obj)
    if m is None:
        return convert_date(obj)
    try:
        parts = [int(g) for g in m.groups()[:6]]
        return datetime.datetime(*parts, _micro(m.group(7)))
    except ValueError:
        return convert_date(obj)


def convert_timedelta(obj):
    """TIME text ``[-]H:MM:SS[.f]`` (hours up to 3 digits) -> ``timedelta``;
    other text is returned as the str."""
    obj = _text(obj)
    m = _TIMEDELTA.fullmatch(obj)
    if m is None:
        return obj
    try:
        value = datetime.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)),
                                   seconds=int(m.group(4)),
                                   microseconds=_micro(m.group(5)))
    except ValueError:
        return obj
    return -value if m.group(1) else value


def convert_time(obj):
    """TIME text ``HH:MM:SS[.f]`` within a day -> ``datetime.time``; other text
    (negative, over 24 h) is returned as the str."""
    obj = _text(obj)
    m = _TIME.fullmatch(obj)
    if m is None:
        return obj
    try:
        return datetime.time(int(m.group(1)), int(m.group(2)), int(m.group(3)),
                             _micro(m.group(4)))
    except ValueError:
        return obj


def convert_date(obj):
    """DATE text ``YYYY-MM-DD`` -> ``datetime.date``; invalid text (zero dates)
    is returned as the str."""
    obj = _text(obj)
    try:
        return datetime.date(*[int(x) for x in obj.split("-", 2)])
    except (ValueError, TypeError):
        return obj


def through(x):
    """The value unchanged."""
    return x


convert_bit = through

encoders = {
    bool: escape_bool, int: escape_int, float: escape_float, str: escape_str,
    bytes: escape_bytes, tuple: escape_not_supported, list: escape_not_supported,
    set: escape_not_supported, frozenset: escape_not_supported,
    dict: escape_not_supported, type(None): escape_None,
    datetime.date: escape_date, datetime.datetime: escape_datetime,
    datetime.timedelta: escape_timedelta, datetime.time: escape_time,
    time.struct_time: escape_struct_time, Decimal: Decimal2Literal,
}

decoders = {
    FIELD_TYPE.BIT: convert_bit, FIELD_TYPE.TINY: int, FIELD_TYPE.SHORT: int,
    FIELD_TYPE.LONG: int, FIELD_TYPE.FLOAT: float, FIELD_TYPE.DOUBLE: float,
    FIELD_TYPE.LONGLONG: int, FIELD_TYPE.INT24: int, FIELD_TYPE.YEAR: int,
    FIELD_TYPE.TIMESTAMP: convert_datetime, FIELD_TYPE.DATETIME: convert_datetime,
    FIELD_TYPE.TIME: convert_timedelta, FIELD_TYPE.DATE: convert_date,
    FIELD_TYPE.BLOB: through, FIELD_TYPE.TINY_BLOB: through,
    FIELD_TYPE.MEDIUM_BLOB: through, FIELD_TYPE.LONG_BLOB: through,
    FIELD_TYPE.STRING: through, FIELD_TYPE.VAR_STRING: through,
    FIELD_TYPE.VARCHAR: through, FIELD_TYPE.DECIMAL: Decimal,
    FIELD_TYPE.NEWDECIMAL: Decimal,
}

#: encoders and decoders in one dict (MySQLdb's shape, PyMySQL's default ``conv``)
conversions = dict(encoders)
conversions.update(decoders)

Thing2Literal = escape_str

# the defaults, to tell a user's conv entries from them (also after in-place edits)
_DEFAULTS = dict(conversions)
