"""Command state shared by a connection and its cursors (docs/architecture.md,
"Python layer": this module imports nothing of mysqlc but :mod:`mysqlc.errors`)."""

from __future__ import annotations

from .errors import ProgrammingError

#: ``(errno, message, sqlstate)`` of a connection whose last command succeeded
#: (mysqlclient's ``errno()``, ``error()``, ``sqlstate()`` then give these).
_NO_ERROR = (0, "", "00000")


def _busy():
    """The error of a command started while another thread holds the connection's
    lock (PEP 249 ``threadsafety = 1``: connections are not shared between threads)."""
    return ProgrammingError(
        0, "this connection is being used by another thread; connections cannot be "
        "shared between threads at once (threadsafety = 1)")


#: ``b";"`` and ``b"\\"`` as the byte values that ``in`` tests of a bytes statement take:
#: ``b";" in sql`` first tries the needle as an integer, raising and clearing a TypeError
#: (a formatted message) on every test -- about as much CPU as the rest of a small
#: statement's Python path; ``59 in sql`` is a memchr.
_SEMICOLON = ord(";")
_BACKSLASH = ord("\\")

#: statement text (bytes) -> whether it makes the sql_mode uncertain: what
#: Connection._note_statement found (mysqlc/connections.py); the cursors' statement path
#: skips the call for a text known to be harmless
_MODE_NOTE_CACHE: dict = {}
