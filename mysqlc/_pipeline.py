"""``Connection.pipeline()``: statements sent without waiting for their answers.

Inside ``with conn.pipeline():`` a buffered cursor's ``execute()`` writes its command
(COM_QUERY, or COM_STMT_EXECUTE of a statement already prepared) at once and returns -1
without reading anything.  The engine (src/conn.c "pipelining") keeps the queue of the
responses still to be read, in the order the commands went, each with how it is read
(text or binary rows, the prepared statement whose metadata MariaDB may skip, its
sequence id) and whose it is: the :class:`_Entry` given as ``owner=`` to
``send_query()`` / ``stmt_execute(send_only=True)``.  ``pipe_head`` names the oldest;
``read_response()`` reads it, into the cursor it belongs to (``_read_result``: rows
stored as after a plain execute).  The engine also holds the bound on what is in flight
(``pipe_room()``, ``pipe_max_commands`` / ``pipe_max_bytes``: it refuses a command past
it) and refuses any other command until the queue is read; after a loss,
``pipe_drop()`` hands back the owners whose responses will never come.  This module
decides when to read: a cursor's result is read when it fetches (every response queued
before it is read first), at :meth:`Pipeline.sync`, at a sync point (commit, rollback,
any command that is not queued), when the bound is reached and when the block ends.
See docs/batching.md "Pipelining" for the semantics and docs/architecture.md "Commands
in flight" for the bound.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ._state import _SEMICOLON
from .errors import Error, OperationalError, ProgrammingError

#: at most this many commands in flight (sent, not answered) ...
MAX_COMMANDS = 256
#: ... and at most this many bytes of them: before queueing more, the oldest responses
#: are read into their cursors.  This bounds what waits unread; it is not what prevents a
#: deadlock: a write that waits for a server blocked writing the answers of commands in
#: flight reads those answers meanwhile (the transport's stash, docs/architecture.md
#: "Commands in flight"), whatever the size of the kernel's socket buffers.
MAX_BYTES = 64 * 1024

_TIMEOUT_HINT = ("; %d pipelined command(s) were in flight: a proxy that does not "
                 "answer pipelined commands needs connect(pipelining=False)")


#: statements that cannot change the session's sql_mode (a trigger restores it): the
#: tracked mode stays certain while they are queued (Connection._escape_mode)
_RE_QUIET = re.compile(rb"\s*\(*\s*(?:select|insert|update|delete|replace|with|values)\b", re.I)
#: LOAD DATA / LOAD XML ... LOCAL INFILE (its file would follow commands already sent):
#: refused.  The statement's own start, after comments: LOAD DATA is a statement of its
#: own (it cannot be prepared, nor stand inside another statement), so a string literal,
#: a parameter or an identifier that happens to hold the words is not one.
_WS = rb"(?:\s|/\*(?:(?!\*/).)*\*/|(?:--\s|#)[^\n]*(?:\n|$))"
_RE_LOAD_LOCAL_START = re.compile(
    _WS + rb"*load" + _WS + rb"+(?:data|xml)" + _WS + rb"+(?:(?:low_priority|concurrent)"
    + _WS + rb"+)?local\b", re.I | re.S)
#: the same words anywhere (in that order), for texts whose statements cannot be told
#: apart cheaply: a multi-statement text, executable comments (/*! ... */, /*M! ... */)
_RE_LOAD_LOCAL_ANY = re.compile(rb"\bload\b.*?\b(?:data|xml)\b.*?\blocal\b", re.I | re.S)


def _may_load_local(conn: Any, sql: bytes) -> bool:
    if sql.find(b"/*!") >= 0 or sql.find(b"/*M!") >= 0 or \
            (_SEMICOLON in sql and conn._multi_statement(sql)):
        return _RE_LOAD_LOCAL_ANY.search(sql) is not None
    return _RE_LOAD_LOCAL_START.match(sql) is not None


def _add_timeout_hint(exc: Error, inflight: int) -> None:
    """A read or write timeout with pipelined commands in flight: its message names
    ``pipelining=False`` (a proxy that stalls on pipelined commands, issue 21)."""
    msg = exc.args[1] if len(exc.args) > 1 else None
    if isinstance(exc, OperationalError) and isinstance(msg, str) and \
            "timed out" in msg and "pipelining=False" not in msg:
        exc.args = (exc.args[0], msg + _TIMEOUT_HINT % inflight) + exc.args[2:]


def check_statement(conn: Any, sql: bytes) -> bool:
    """Before `sql` is queued: ProgrammingError for LOAD DATA LOCAL (nothing sent);
    returns True when the statement may change the sql_mode (not a plain DML/SELECT,
    or a multi-statement text)."""
    if _may_load_local(conn, sql):
        raise ProgrammingError(0, "LOAD DATA LOCAL INFILE cannot run inside a pipeline "
                               "block (the file would follow commands already sent); run "
                               "it outside the block")
    return _RE_QUIET.match(sql) is None or conn._multi_statement(sql)


class _Entry:
    """Whose a queued response is (the owner of an entry of the engine's queue): the
    cursor, the statement it executes (prepared), its index in the block, and whether it
    may change the sql_mode."""
    __slots__ = ("cursor", "stmt", "index", "unsure")

    def __init__(self, cursor, stmt, index, unsure):
        self.cursor = cursor
        self.stmt = stmt
        self.index = index
        self.unsure = unsure


class Pipeline:
    """The pipeline of a connection (``with conn.pipeline() as p:``).

    Attributes
    ----------
    errors : list of (index, cursor, exception)
        Every statement of this block that failed so far, in order; `index` counts the
        block's statements from 0.  The first error not yet raised is raised at the
        next sync point; the statements after a failed one still ran (the server runs
        every command it received) and their cursors hold their own results.
    """

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._count = 0
        self._unraised: list = []
        self._unsure = 0     # queued statements that may change the sql_mode
        self.errors: list = []
        self.enabled = bool(getattr(conn, "_pipelining", True))

    # -------------------------------------------------------------- context manager

    def __enter__(self) -> "Pipeline":
        conn = self._conn
        if conn.__dict__.get("_pipeline") is not None:
            raise ProgrammingError(0, "this connection is already in a pipeline block")
        conn._check_closed()
        core = conn._conn
        core.pipe_max_commands = MAX_COMMANDS
        core.pipe_max_bytes = MAX_BYTES
        conn._pipeline = self
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        conn = self._conn
        try:
            if exc_type is None:
                self.sync()
            else:
                try:   # keep the connection in step; the block's own exception wins
                    self._read(None)
                except Error:
                    pass
        finally:
            conn._pipeline = None

    def __len__(self) -> int:
        """Commands sent whose responses are not read yet."""
        core = self._conn._conn
        return core.pipe_pending if core is not None else 0

    # -------------------------------------------------------------- queueing

    def _send(self, cursor: Any, size: int, send: Any, unsure: bool, stmt: Any = None) -> Any:
        """Queue one command: `send(owner)` writes it (the core's send_query or
        stmt_execute(send_only=True), with ``owner=`` the new entry) and its result is
        returned; `size` is about its length in bytes (the bound's test before it is
        framed); `unsure`: it may change the sql_mode (check_statement)."""
        core = self._conn._conn
        while not core.pipe_room(size):   # the engine's bound: read the oldest first
            self._read_one()
        entry = _Entry(cursor, stmt, self._count, unsure)
        inflight = core.pipe_pending
        try:
            result = send(entry)
        except Error as exc:
            if inflight:   # a timeout while writing behind unanswered commands
                _add_timeout_hint(exc, inflight)
            if not core.open:   # lost while writing: the commands before it are unanswered
                self._lost(exc)
            raise
        self._count += 1
        self._unsure += unsure
        cursor._pipe_entry = entry
        return result

    # -------------------------------------------------------------- reading

    def _read_one(self) -> None:
        conn = self._conn
        core = conn._conn
        entry = core.pipe_head
        inflight = core.pipe_pending   # this one included (0 once the connection is lost)
        self._unsure -= entry.unsure
        cur = entry.cursor
        mine = cur._pipe_entry is entry
        try:
            field_count = core.read_response()
            if mine:
                cur._read_result(core, field_count)
                if entry.stmt is not None:
                    cur._stmt = entry.stmt
                sets: list = []
                while core.more_results:   # a CALL, a multi-statement text
                    try:
                        field_count = core.next_result()
                    except Error as exc:
                        # a later statement of the text failed: the cursor's results
                        # before it stay readable and nextset() raises this when it
                        # reaches it (as outside a block); the block reports it too
                        if not core.open:
                            raise
                        sets.append(exc)
                        self.errors.append((entry.index, cur, exc))
                        self._unraised.append(exc)
                        break
                    if field_count < 0:
                        break
                    first = (cur.description, cur.description_flags, cur._rows,
                             cur.rowcount, cur.lastrowid, cur.warning_count)
                    cur._read_result(core, field_count)
                    sets.append((cur.description, cur.description_flags, cur._rows,
                                 cur.rowcount, cur.lastrowid, cur.warning_count))
                    (cur.description, cur.description_flags, cur._rows, cur.rowcount,
                     cur.lastrowid, cur.warning_count) = first
                cur._pipe_sets = sets or None
            elif core.more_results or core.rows_pending:
                core.discard()   # an earlier execute of a cursor that executed again
        except Error as exc:
            self._failed(entry, exc, mine, inflight)
            if not core.open:   # lost: no later response will come
                self._lost(exc)
        except BaseException:
            # Ctrl-C (the core closed the connection and stopped the statement), an
            # asyncio cancellation: this answer was not read, nor the later ones
            if mine:
                cur._pipe_error = OperationalError(
                    2013, "the pipelined statement's answer was not read (interrupted; it "
                    "may or may not have run)")
            if not core.open:
                self._lost(cur._pipe_error or OperationalError(2013, "interrupted"))
            raise
        finally:
            if mine:
                cur._pipe_entry = None

    def _failed(self, entry: _Entry, exc: Error, mine: bool, inflight: int = 1) -> None:
        if mine:
            entry.cursor._pipe_error = exc
        self.errors.append((entry.index, entry.cursor, exc))
        self._unraised.append(exc)
        _add_timeout_hint(exc, inflight)

    def _lost(self, exc: Error) -> None:
        """The connection is gone (closed: the engine will not read the rest): the
        statements still queued may or may not have run; their cursors hold an
        OperationalError saying so (none is reported done)."""
        core = self._conn._conn
        for entry in (core.pipe_drop() if core is not None else ()):
            cur = entry.cursor
            if cur._pipe_entry is entry:
                err = OperationalError(
                    exc.args[0] if exc.args else 2013,
                    "the connection was lost before this pipelined statement's answer "
                    "was read (it may or may not have run): %s"
                    % (exc.args[1] if len(exc.args) > 1 else exc))
                cur._pipe_error = err
                cur._pipe_entry = None
                self.errors.append((entry.index, cur, err))
        self._unsure = 0

    def _read(self, upto: Optional[_Entry]) -> None:
        """Read the queued responses up to `upto` (all: None) into their cursors."""
        core = self._conn._conn
        while core is not None and core.pipe_pending:
            entry = core.pipe_head
            self._read_one()
            if entry is upto:
                break

    def _raise_first(self) -> None:
        if self._unraised:
            first = self._unraised[0]
            self._unraised = []
            first.pipeline_errors = list(self.errors)
            self._conn._note_error(first)
            raise first

    def sync(self) -> None:
        """Read every queued response into its cursor, then raise the first error not
        raised yet (its ``pipeline_errors``: :attr:`errors`)."""
        self._read(None)
        self._raise_first()

    def _wait_for(self, cursor: Any) -> None:
        """A cursor fetches: read up to its response, raise the first error."""
        entry = cursor._pipe_entry
        if entry is not None:
            self._read(entry)
        self._raise_first()
