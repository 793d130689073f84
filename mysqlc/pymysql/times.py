"""``pymysql.times`` of the PyMySQL flavour (PEP 249 type constructors)."""

import datetime
import time as _time

__all__ = ["Date", "Time", "TimeDelta", "Timestamp", "DateFromTicks", "TimeFromTicks",
           "TimestampFromTicks"]

Date = datetime.date
Time = datetime.time
TimeDelta = datetime.timedelta
Timestamp = datetime.datetime


def DateFromTicks(ticks):
    """The local date of `ticks` (seconds since the epoch)."""
    return datetime.date(*_time.localtime(ticks)[:3])


def TimeFromTicks(ticks):
    """The local time of day of `ticks` (whole seconds)."""
    return datetime.time(*_time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks):
    """The local date and time of `ticks` (whole seconds)."""
    return datetime.datetime(*_time.localtime(ticks)[:6])
