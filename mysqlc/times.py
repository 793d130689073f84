"""PEP 249 date/time constructors and MySQLdb's temporal helpers.

The constructors are the standard ``datetime`` types, as in MySQLdb:
``Date = datetime.date``, ``Time = datetime.time``, ``Timestamp =
datetime.datetime``.  The ``*FromTicks`` functions interpret ticks (seconds since
the epoch, int or float) in local time, as PEP 249 and MySQLdb do.

The ``*_or_None`` parsers are the decoders that ``mysqlc.converters.conversions``
lists for the temporal column types.  The C core decodes these columns itself;
the parsers exist for code that calls them directly or builds a ``conv`` dict
from them, and they follow mysqlclient: a value that does not parse (zero dates
such as ``0000-00-00``) gives ``None``; TIME gives a ``datetime.timedelta``
(negative and beyond 24 hours allowed).  They accept ``str`` or ASCII ``bytes``.

The ``*2literal`` encoders turn ``datetime`` / ``timedelta`` values into quoted
SQL literals (``bytes``) with the signature ``(obj, conv)`` of MySQLdb encoders.
"""

import datetime as _dt
import time as _time

__all__ = [
    "Date", "Time", "Timestamp", "TimeDelta", "DateFromTicks", "TimeFromTicks",
    "TimestampFromTicks", "DateTimeType", "DateTimeDeltaType", "Binary",
    "format_TIMEDELTA", "format_TIMESTAMP", "format_DATE", "format_TIME",
    "Date_or_None", "DateTime_or_None", "TimeDelta_or_None", "Time_or_None",
    "DateTime2literal", "DateTimeDelta2literal", "Date2literal", "Time2literal",
]

Date = _dt.date
Time = _dt.time
Timestamp = _dt.datetime
TimeDelta = _dt.timedelta
DateTimeType = _dt.datetime
DateTimeDeltaType = _dt.timedelta


def DateFromTicks(ticks):
    """Return the local date of `ticks` (seconds since the epoch) as ``datetime.date``."""
    return _dt.date(*_time.localtime(ticks)[:3])


def TimeFromTicks(ticks):
    """Return the local time of day of `ticks` (seconds since the epoch) as
    ``datetime.time``, without the fraction of a second (as MySQLdb)."""
    return _dt.time(*_time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks):
    """Return the local date and time of `ticks` (seconds since the epoch) as
    ``datetime.datetime``, without the fraction of a second (as MySQLdb)."""
    return _dt.datetime(*_time.localtime(ticks)[:6])


def Binary(x):
    """Return `x` (bytes-like, or an iterable of ints 0-255) as ``bytes`` (PEP 249)."""
    return bytes(x)


# ---------------------------------------------------------------- formatting

def format_DATE(d):
    """``'YYYY-MM-DD'`` text of a ``date`` (no quotes)."""
    return "%04d-%02d-%02d" % (d.year, d.month, d.day)


def format_TIME(t):
    """``'HH:MM:SS[.ffffff]'`` text of a ``time`` (no quotes, tzinfo ignored)."""
    if t.microsecond:
        return "%02d:%02d:%02d.%06d" % (t.hour, t.minute, t.second, t.microsecond)
    return "%02d:%02d:%02d" % (t.hour, t.minute, t.second)


def format_TIMESTAMP(d):
    """``'YYYY-MM-DD HH:MM:SS[.ffffff]'`` text of a ``datetime`` (no quotes,
    tzinfo ignored)."""
    text = "%04d-%02d-%02d %02d:%02d:%02d" % (
        d.year, d.month, d.day, d.hour, d.minute, d.second)
    if d.microsecond:
        text += ".%06d" % d.microsecond
    return text


def format_TIMEDELTA(v):
    """``'[-]H:MM:SS[.ffffff]'`` text of a ``timedelta`` (no quotes).

    Hours are not wrapped at 24 and the sign is written once, before the
    absolute value, so the server reads ``-1 day, 23:00:00`` as ``-01:00:00``.
    MySQL's TIME range is -838:59:59 to 838:59:59; the server clips values outside.
    """
    sign = ""
    if v < _dt.timedelta(0):
        sign = "-"
        v = -v
    seconds = v.days * 86400 + v.seconds
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if v.microseconds:
        return "%s%d:%02d:%02d.%06d" % (sign, hours, minutes, seconds, v.microseconds)
    return "%s%d:%02d:%02d" % (sign, hours, minutes, seconds)


# ---------------------------------------------------------------- parsing

def _text(s):
    if isinstance(s, (bytes, bytearray, memoryview)):
        return bytes(s).decode("ascii")
    return s


def _fraction(frac):
    # "", "1", "123456", "1234567" -> microseconds (extra digits truncated)
    if not frac:
        return 0
    if not frac.isdigit():
        raise ValueError(frac)
    return int(frac[:6].ljust(6, "0"))


def Date_or_None(s):
    """Parse ``'YYYY-MM-DD'`` into ``datetime.date``; ``None`` if it does not parse
    (``'0000-00-00'``, out-of-range fields, other text).

    Parameters
    ----------
    s : str or bytes
    """
    try:
        s = _text(s)
        y, m, d = s[:10].split("-")
        return _dt.date(int(y), int(m), int(d))
    except (ValueError, TypeError, UnicodeDecodeError):
        return None


def DateTime_or_None(s):
    """Parse ``'YYYY-MM-DD HH:MM:SS[.ffffff]'`` (``T`` also accepted as the
    separator) into ``datetime.datetime``; a date alone gives ``datetime.date``
    (as MySQLdb); ``None`` if it does not parse (zero dates).

    Parameters
    ----------
    s : str or bytes
    """
    try:
        s = _text(s)
        if len(s) < 11:
            return Date_or_None(s)
        date_part, time_part = s[:10], s[11:]
        y, mo, d = date_part.split("-")
        clock, _, frac = time_part.partition(".")
        parts = clock.split(":")
        if len(parts) != 3:
            return None
        h, mi, sec = parts
        return _dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(sec),
                            _fraction(frac))
    except (ValueError, TypeError, UnicodeDecodeError):
        return None


def TimeDelta_or_None(s):
    """Parse MySQL TIME text ``'[-]HHH:MM:SS[.ffffff]'`` into ``datetime.timedelta``
    (negative and beyond 24 hours allowed, as mysqlclient); ``None`` if it does
    not parse.

    Parameters
    ----------
    s : str or bytes
    """
    try:
        s = _text(s).strip()
        negative = s.startswith("-")
        if negative:
            s = s[1:]
        clock, _, frac = s.partition(".")
        h, m, sec = clock.split(":")
        td = _dt.timedelta(hours=int(h), minutes=int(m), seconds=int(sec),
                           microseconds=_fraction(frac))
        return -td if negative else td
    except (ValueError, TypeError, UnicodeDecodeError):
        return None


def Time_or_None(s):
    """Parse ``'HH:MM:SS[.ffffff]'`` into ``datetime.time``; ``None`` if it does not
    parse or lies outside 00:00:00-23:59:59.

    Parameters
    ----------
    s : str or bytes
    """
    try:
        s = _text(s)
        clock, _, frac = s.partition(".")
        h, m, sec = clock.split(":")
        return _dt.time(int(h), int(m), int(sec), _fraction(frac))
    except (ValueError, TypeError, UnicodeDecodeError):
        return None


# ---------------------------------------------------------------- literals

def _quote(text):
    # The formatted texts contain only digits, '-', ':', '.', ' ': no escaping needed.
    return ("'%s'" % text).encode("ascii")


def DateTime2literal(d, c):
    """Quoted SQL literal (``bytes``) of a ``datetime``: ``b"'2024-01-02 03:04:05'"``."""
    return _quote(format_TIMESTAMP(d))


def DateTimeDelta2literal(d, c):
    """Quoted SQL literal (``bytes``) of a ``timedelta``: ``b"'-1:30:00'"``."""
    return _quote(format_TIMEDELTA(d))


def Date2literal(d, c):
    """Quoted SQL literal (``bytes``) of a ``date``: ``b"'2024-01-02'"``."""
    return _quote(format_DATE(d))


def Time2literal(t, c):
    """Quoted SQL literal (``bytes``) of a ``time``: ``b"'03:04:05.250000'"``."""
    return _quote(format_TIME(t))
