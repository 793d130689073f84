"""PEP 249 date/time constructors and MySQLdb's temporal helpers.

The constructors are the standard ``datetime`` types, as in MySQLdb:
``Date = datetime.date``, ``Time = datetime.time``, ``Timestamp =
datetime.datetime``.  The ``*FromTicks`` functions interpret ticks (seconds since
the epoch, int or float) in local time, as PEP 249 and MySQLdb do.

The ``*_or_None`` parsers are the decoders that ``mysqlc.converters.conversions``
lists for the temporal column types.  The C core decodes these columns itself;
the parsers exist for code that calls them directly or builds a ``conv`` dict
from them, and they follow mysqlclient: a value that does not parse (zero dates
such as ``0000-00-00``) gives ``None``, one that is not text (``None``, a
number) raises TypeError; TIME gives a ``datetime.timedelta`` (negative and
beyond 24 hours allowed).  They accept ``str`` or ASCII ``bytes`` (mysqlclient's
TIME parsers take ``str`` only).

The ``*2literal`` encoders turn ``datetime`` / ``timedelta`` values into quoted
SQL literals (``bytes``) with the signature ``(obj, conv)`` of MySQLdb encoders.
"""

import datetime as _dt
import time as _time
from time import localtime   # MySQLdb.times has it at module level

__all__ = [
    "Date", "Time", "Timestamp", "TimeDelta", "DateFromTicks", "TimeFromTicks",
    "TimestampFromTicks", "DateTimeType", "DateTimeDeltaType", "Binary",
    "format_TIMEDELTA", "format_TIMESTAMP", "format_DATE", "format_TIME",
    "Date_or_None", "DateTime_or_None", "TimeDelta_or_None", "Time_or_None",
    "DateTime2literal", "DateTimeDelta2literal", "Date2literal", "Time2literal",
    "localtime",
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
    """``'[-]D H:M:S[.ffffff]'`` text of a ``timedelta`` (no quotes), as
    mysqlclient 2.3's ``format_TIMEDELTA``: days, then hours, minutes and seconds
    unpadded, the fraction only when there are microseconds; the sign is written
    once, before the absolute value, so ``-timedelta(minutes=30)`` is
    ``'-0 0:30:0'`` (mysqlclient before 2.3 wrote ``'-1 23:30:0'``, which the server
    reads as -47:30:00).  The server reads ``D`` as 24 hours each; TIME's range is
    -838:59:59 to 838:59:59 and the server clips values outside it.

    Raises AttributeError when `v` is not a ``timedelta``.
    """
    sign = ""
    if v.days < 0:
        sign = "-"
        v = -v
    minutes, seconds = divmod(v.seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if v.microseconds:
        return "%s%d %d:%d:%d.%06d" % (sign, v.days, hours, minutes, seconds, v.microseconds)
    return "%s%d %d:%d:%d" % (sign, v.days, hours, minutes, seconds)


# ---------------------------------------------------------------- parsing

def _text(s):
    if isinstance(s, (bytes, bytearray, memoryview)):
        return bytes(s).decode("ascii")
    return s


def _micros(frac):
    """Microseconds of the fraction digits after the point: "" -> 0, "5" -> 500000,
    "123456" -> 123456; None for 7 or more digits (as mysqlclient: more precision
    than a ``datetime`` holds is not silently cut).  Raises ValueError for
    non-digits."""
    if not frac:
        return 0
    if len(frac) > 6:
        return None
    return int(frac) * 10 ** (6 - len(frac))


def Date_or_None(s):
    """Parse ``'YYYY-MM-DD'`` into ``datetime.date``, as mysqlclient: the fields are
    read at their fixed positions (year ``[0:4]``, month ``[5:7]``, day ``[8:10]``;
    anything after the day is ignored), and a value that does not parse
    (``'0000-00-00'``, out-of-range fields, ``'2024-1-2'``, other text) gives
    ``None``.

    Parameters
    ----------
    s : str or bytes

    Raises
    ------
    TypeError
        `s` is not text (``None``, a number), as in mysqlclient.
    """
    try:
        s = _text(s)
        return _dt.date(int(s[:4]), int(s[5:7]), int(s[8:10]))
    except (ValueError, UnicodeDecodeError):
        return None


def DateTime_or_None(s):
    """Parse ``'YYYY-MM-DD HH:MM:SS[.ffffff]'`` into ``datetime.datetime``, as
    mysqlclient: fields at fixed positions (any separator character, ``T`` too),
    trailing time fields may be missing (``'2024-01-02 03:04'`` is 03:04:00), 1-6
    fraction digits; text of 10 characters or less is parsed by
    :func:`Date_or_None` (a ``date``).  ``None`` when it does not parse (zero
    dates, out-of-range fields, 7 or more fraction digits, ``'2024-01-02
    3:04:05'``).

    Parameters
    ----------
    s : str or bytes

    Raises
    ------
    TypeError
        `s` is not text (``None``, a number), as in mysqlclient.
    """
    try:
        s = _text(s)
        if len(s) < 11:
            return Date_or_None(s)
        micros = _micros(s[20:])
        if micros is None:
            return None
        return _dt.datetime(int(s[:4]), int(s[5:7]), int(s[8:10]),
                            int(s[11:13] or 0), int(s[14:16] or 0), int(s[17:19] or 0),
                            micros)
    except (ValueError, UnicodeDecodeError):
        return None


def _clock(s):
    """``(h, m, s, fraction)`` texts of ``'H:M:S[.fraction]'``; raises ValueError
    when it is not three ``:``-separated fields or has a second ``.``."""
    h, m, sec = s.split(":")
    sec, dot, frac = sec.partition(".")
    if dot and "." in frac:
        raise ValueError(s)
    return h, m, sec, frac


def TimeDelta_or_None(s):
    """Parse MySQL TIME text ``'[-]HHH:MM:SS[.ffffff]'`` into ``datetime.timedelta``
    (negative and beyond 24 hours allowed), as mysqlclient's
    ``MySQLdb.times.TimeDelta_or_None``; ``None`` if it does not parse.

    The fraction is padded on the right to 6 digits and read as a number of
    microseconds, mysqlclient's rule: ``'.5'`` is 500000 us; 7 or more digits are
    taken as that many microseconds (``'12:55:30.123456789'`` is 12:57:33.456789,
    as mysqlclient reads it).  A server sends at most 6 digits.

    Parameters
    ----------
    s : str or bytes

    Raises
    ------
    TypeError
        `s` is not text (``None``, a number), as in mysqlclient.
    """
    try:
        h, m, sec, frac = _clock(_text(s))
        negative = h[:1] == "-"          # mysqlclient: h[0] == "-"
        td = _dt.timedelta(hours=abs(int(h)), minutes=int(m), seconds=int(sec),
                           microseconds=int(frac.ljust(6, "0")) if frac else 0)
        return -td if negative else td
    except (ValueError, UnicodeDecodeError):
        return None


def Time_or_None(s):
    """Parse ``'HH:MM:SS[.ffffff]'`` into ``datetime.time``; ``None`` if it does not
    parse or lies outside 00:00:00-23:59:59 (as mysqlclient; 7 or more fraction
    digits give ``None``).

    Parameters
    ----------
    s : str or bytes

    Raises
    ------
    TypeError
        `s` is not text (``None``, a number), as in mysqlclient.
    """
    try:
        h, m, sec, frac = _clock(_text(s))
        micros = _micros(frac)
        if micros is None:
            return None
        return _dt.time(int(h), int(m), int(sec), micros)
    except (ValueError, UnicodeDecodeError):
        return None


# ---------------------------------------------------------------- literals

def _quote(text):
    # The formatted texts contain only digits, '-', ':', '.', ' ': no escaping needed.
    return ("'%s'" % text).encode("ascii")


def DateTime2literal(d, c):
    """Quoted SQL literal (``bytes``) of a ``datetime``: ``b"'2024-01-02 03:04:05'"``."""
    return _quote(format_TIMESTAMP(d))


def DateTimeDelta2literal(d, c):
    """Quoted SQL literal (``bytes``) of a ``timedelta`` (:func:`format_TIMEDELTA`):
    ``b"'-0 1:30:0'"``."""
    return _quote(format_TIMEDELTA(d))


def Date2literal(d, c):
    """Quoted SQL literal (``bytes``) of a ``date``: ``b"'2024-01-02'"``."""
    return _quote(format_DATE(d))


def Time2literal(t, c):
    """Quoted SQL literal (``bytes``) of a ``time``: ``b"'03:04:05.250000'"``."""
    return _quote(format_TIME(t))
