"""The asyncio hot path: a buffered cursor's ``execute()`` driven by the event loop, with no
greenlet switch.

The statement is formatted in the awaiting task (the sync cursor's ``_format``, when it
needs no round trip: no parameters, or the session's escaping mode known for certain),
handed to the stream without waiting (``_core.Connection.send_query_nowait``, src/
statement.c), and its response is taken with ``take_result()`` after each wake-up of the
stream's future (:meth:`StreamProtocol.wait_future`): the engine keeps the rows that are
complete and returns None until the first result has ended, then the tuple the sync
cursor's ``query_result`` gives.  One await is then about one event-loop wake-up plus
the sync path's C work, and decoding -- user converters included -- runs in the awaiting
task's own :mod:`contextvars` context.

Everything else goes through the connection's greenlet (:mod:`mysqlc.aio._runner`), as
before: statements whose formatting needs a round trip, LOAD DATA LOCAL, query attributes,
prepared and unbuffered cursors, pipelines, results left unread, a stream that ended.
The fast path hands over to it as well when the stream reports anything but bytes (end
of stream, an error, the read timeout): the engine then reads on with the blocking
transport's waits and raises exactly what the sync path raises (2013 with KILL QUERY for
a read timeout, lost connection...).

Cancellation keeps the runner's guarantees (``_stop_cancelled``): ``KILL QUERY`` over a
side connection, the response read to its end (and further results drained) within
:data:`mysqlc.aio._runner.CANCEL_BUDGET` seconds, else the connection is closed; then
:class:`asyncio.CancelledError` is raised.
"""

from __future__ import annotations

import asyncio
import weakref
from functools import partial
from typing import Any, Awaitable, Callable, Optional

from .. import _core, connections
from .. import cursors as _sync
from .._state import _MODE_NOTE_CACHE, _NO_ERROR, _SEMICOLON, _busy
from ..cursors import _build_with, _format_options, _format_query, _normalize_args
from ..errors import Error, InterfaceError, OperationalError
from ._runner import CANCEL_BUDGET
from ._transport import _DONE, _TIMEOUT

_get_running_loop = asyncio.get_running_loop
_weakref = weakref.ref


#: SQL bytes of parameterless str statements: ``text -> (codec, bytes)``, kept only for
#: texts the sync cursor's ``_format`` sends as they are encoded and that cannot change
#: the session's escaping mode (``_MODE_NOTE_CACHE`` says so, no ``;``); bounded
_PLAIN_SQL: dict = {}
_PLAIN_SQL_LIMIT = 512
#: the same for parameterized str statements: ``text -> (codec, template bytes)``, kept
#: for texts whose formatting with parameters needs only the escaping mode (``_format``'s
#: common case); read by src/aio_call.c, which formats with ``format_statement``
_PARAM_SQL: dict = {}


def _query_now(cur: Any, conn: Any, query: Any, args: Any) -> Any:
    """The SQL bytes of `query` with `args` when they can be written without a round
    trip (see the module docstring), else None."""
    core = conn._conn
    if core.session_track_seq != conn._track_seq:
        if core.session_uncertain_seq > conn._resynced_seq:
            return None    # _sync_session would send its SET first
    elif args is None and type(query) is str and (cur._plain_text or cur._format_args_only):
        # the common case: the session's charset as last confirmed, the text seen before.
        # The key is the codec _format encodes with: a flavour's cursor (its own
        # _format) asks its connection's _session_charset (PyMySQL's encoding, which
        # does not follow SET NAMES), never the tracked charset
        if cur._plain_text:
            t = conn._tracked_charset
            codec = t[1] if t else conn._encoding
        else:
            codec = conn._session_charset()[1]
        hit = _PLAIN_SQL.get(query)
        if hit is not None and hit[0] == codec:
            conn._mode_written = None    # what _format sets for a text without parameters
            return hit[1]
        sql = cur._format(conn, query, None)
        if _MODE_NOTE_CACHE.get(sql) is False and _SEMICOLON not in sql:
            if len(_PLAIN_SQL) >= _PLAIN_SQL_LIMIT:
                _PLAIN_SQL.clear()
            _PLAIN_SQL[query] = (codec, sql)
        return sql
    if args is not None:
        if isinstance(query, str):
            if ";" in query:
                return None
        elif not isinstance(query, bytes) or _SEMICOLON in query:
            return None
        mode = conn._escape_mode()
        if mode is None and not (cur._plain_text and _reads_the_same(conn, query, args)):
            # a value needs the mode, which only a round trip confirms now (after a CALL
            # or a compound statement...): the greenlet's _format asks it first
            return None
        if core.session_track_seq == conn._track_seq:
            # _format reads the mode after its _session_charset(), which syncs nothing
            # while the session reported no change: the mode read here is its own
            conn._mode_hint = mode
            try:
                sql = cur._format(conn, query, args)
            finally:
                conn._mode_hint = None
            if (mode is not None and type(query) is str and cur._plain_text
                    and type(args) is tuple):
                # the template's bytes for src/aio_call.c, which formats the next call of
                # this text itself: only for a text _format writes as this call did (its
                # note cleared, the mode certain, no ";")
                t = conn._tracked_charset
                codec = t[1] if t else conn._encoding
                hit = _PARAM_SQL.get(query)
                if hit is None or hit[0] != codec:
                    tmpl = query.encode(codec)
                    if _MODE_NOTE_CACHE.get(tmpl) is False:
                        if len(_PARAM_SQL) >= _PLAIN_SQL_LIMIT:
                            _PARAM_SQL.clear()
                        _PARAM_SQL[query] = (codec, tmpl)
            return sql
    return cur._format(conn, query, args)


def _reads_the_same(conn: Any, query: Any, args: Any) -> bool:
    """While the session's escaping mode is uncertain: can every value of `args` be
    written so that it reads the same in both modes (str and bytes values without a
    backslash: ``portable=2``, as the sync ``_format`` writes them then)?  Then
    ``_format`` writes the statement with no round trip, in the awaiting task."""
    charset, encoding = conn._session_charset()
    if isinstance(query, str):
        query = query.encode(encoding)
    build = partial(_format_query, conn._core_module.format_query, query,
                    _normalize_args(args))
    try:
        return _build_with(conn, build, _format_options(conn, False, 2, charset,
                                                         encoding)) is not None
    except Error:   # (a value it cannot write: _format raises it, in the greenlet)
        return False


def _engine_ready(worker: Any, conn: Any, loop: asyncio.AbstractEventLoop) -> bool:
    """Can a command be driven from the event loop now: the connection idle and free, its
    stream open with nothing of its own to report, no pipeline, this loop's?"""
    core = conn._conn
    proto = conn._proto
    return not (worker.busy or conn._closed or conn._pipeline is not None or core is None
                or proto is None or proto._state or proto._early or proto._exc is not None
                or worker.loop is not loop or core.unread)   # rows/results/cursor left


async def execute(shell: Any, query: Any, args: Any = None, *, infile: Any = None,
                  attributes: Any = None) -> int:
    """``await cursor.execute(query, args)`` of a buffered asyncio cursor: a coroutine
    (``_core.AioCall``, src/aio_call.c) that runs :func:`_execute_py`'s common case
    with no coroutine of Python's -- :func:`_begin` checks, formats and sends, the C
    object awaits the stream and takes the result, :func:`_finish` stores it -- and hands
    every other case to :func:`_execute_py` or, once the statement was sent, to
    :func:`_take_over`.  (The cursor class holds it as ``_core.AioExecute(execute)``,
    whose call makes that coroutine; this function's own body is the same call awaited.)"""
    return await _aio_execute(shell, query, args, infile, attributes)


#: sync cursor classes whose execute() the event loop drives with take_head() (classes
#: that read results their own way: _execute_py): ``cls -> bool``
_READS: dict = {}


def _reads_direct(cls: type, vouched: bool = False) -> bool:
    """Does `cls` execute as :class:`mysqlc.cursors.BaseCursor` does (its execute and
    _query: the text protocol, one ``_read_result(core, field_count)`` call per
    statement), with a ``_read_result`` that reads what :func:`_execute_py` leaves:
    unbuffered, :class:`mysqlc.cursors.SSCursor`'s own; buffered, any of mysqlc's
    classes' (each ends in ``BaseCursor._read_result``, which takes the rows from
    ``_taken``) -- a ``_read_result`` of a class of another module may read the socket
    itself, so that class runs in the greenlet.  (Keys of a class's own, ``_row_keys``,
    are computed from the head as the sync path computes them.)  `vouched`: the caller
    does what the class's own execute() adds to BaseCursor's (the aiomysql flavour's
    shell), so only the rest is checked."""
    key = (cls, vouched)
    ok = _READS.get(key)
    if ok is None:
        ok = ((vouched or cls.execute is _sync.BaseCursor.execute)
              and cls._query is _sync.BaseCursor._query
              and all(k.__module__.split(".")[0] == "mysqlc" for k in cls.__mro__
                      if "_read_result" in k.__dict__))
        _READS[key] = ok
    return ok


async def execute_unbuffered(shell: Any, query: Any, args: Any = None, *,
                             infile: Any = None, attributes: Any = None) -> int:
    """``await cursor.execute(query, args)`` of an unbuffered asyncio cursor
    (:class:`mysqlc.aio.cursors.SSCursor`): :func:`_execute_py`, its rows left for the
    fetches (:func:`fetch_rows`)."""
    return await _execute_py(shell, query, args, infile, attributes)


#: sync unbuffered classes whose ``_pull`` comes from mysqlc's modules (SSCursor's, or
#: the PyMySQL flavour's over it): ``cls -> bool``
_PULLS: dict = {}


def _pull_direct(shell: Any) -> bool:
    """Can :func:`fetch_rows` read the shell's unbuffered rows from the event loop: its
    sync cursor reads them as :class:`mysqlc.cursors.SSCursor` does (every ``_pull`` of
    its class from mysqlc's modules: they pass ``wait`` on), a statement ran (not a
    pipelined result still queued), no server-side cursor (COM_STMT_FETCH waits for each
    batch), the connection's own loop running here and no other call on it?"""
    cur = shell._sync_obj
    worker = shell._worker
    conn = cur.connection
    if (worker.busy or conn is None or cur._rows is None
            or getattr(cur, "_streaming", False) is _FETCH
            or conn._pipeline is not None or not _loop_running(worker.loop)):
        return False
    cls = type(cur)
    ok = _PULLS.get(cls)
    if ok is None:
        ok = _PULLS[cls] = (
            issubclass(cls, _SSCursor)
            and all(k.__module__.split(".")[0] == "mysqlc" for k in cls.__mro__
                    if "_pull" in k.__dict__))
    return ok


async def fetch_rows(shell: Any, n: int, max_bytes: int = 0, defer: bool = False,
                     some: bool = False) -> Any:
    """The unbuffered cursor's ``_pull(n, max_bytes, defer=defer)`` (see
    :meth:`mysqlc.cursors.SSCursor._pull`) driven by the event loop, for a shell
    :func:`_pull_direct` accepts: the rows the engine holds are decoded at once
    (``core.fetch(wait=False)``, in the awaiting task and its context), and while more
    are needed the task awaits the stream's future.  `some` (iteration's read-ahead):
    return as soon as any row is there rather than a whole batch.

    Errors are the sync fetch's: an error after some rows is deferred to the next fetch
    when `defer`; the stream's end, failure or read timeout hands the rest to the
    greenlet (the sync path's errors, its KILL QUERY for the timeout).  A cancelled wait
    stops the statement as a cancelled execute does (:func:`_stop`: KILL QUERY, the
    rows drained), then raises CancelledError; the rows read by the cancelled call are
    lost with it, as on the greenlet's path."""
    cur = shell._sync_obj
    rows: list = []
    ahead = cur._ahead
    if ahead:   # rows an iteration read ahead and left (the sync _pull_ahead)
        if 0 <= n < len(ahead):
            return [ahead.popleft() for _ in range(n)]
        cur._ahead = None
        rows = list(ahead)
        if some or len(rows) == n:
            return rows
    worker = shell._worker
    pull = cur._pull
    while True:
        want = n if n < 0 else n - len(rows)
        try:
            got = pull(want, max_bytes, False, len(rows), defer)
        except Error as exc:
            if not (defer and rows):
                raise
            cur._defer(exc)   # (the rows before it come first)
            return rows
        if got:
            rows += got
        if cur._streaming is not True or len(rows) == n or (some and rows):
            return rows
        # the next row has not all arrived: wait for the stream
        conn = cur.connection
        core = conn._conn
        proto = conn._proto
        loop = worker.loop
        if proto is None or proto._state or proto._early or proto._exc is not None:
            status = None   # the stream has something to report: the greenlet's path
        else:
            worker.busy = True
            try:
                status = await _wait_stream(worker, conn, core, proto, loop)
            finally:
                worker.busy = False
        if status != _DONE:
            try:
                if status is not None:
                    _stream_error(proto, status)
                got = await worker.run(pull, want, max_bytes, True, len(rows), defer)
            except Error as exc:
                if not (defer and rows):
                    raise
                cur._defer(exc)
                return rows
            return rows + got


async def _wait_stream(worker: Any, conn: Any, core: Any, proto: Any,
                       loop: asyncio.AbstractEventLoop) -> int:
    """One wait for the stream's next bytes while an unbuffered result's rows are read
    (:func:`fetch_rows`): its status, or _TIMEOUT once the read timeout passed.  A
    cancellation stops the statement (:func:`_stop`) and is raised."""
    fut = proto.wait_future()
    timeout = conn._timeouts[1]
    timer = loop.call_later(timeout, _timed_out, fut) if timeout is not None else None
    try:
        return await fut
    except asyncio.CancelledError:
        await _stop(worker, conn, core, proto, loop)
        raise
    finally:
        if timer is not None:
            timer.cancel()


async def _execute_py(shell: Any, query: Any, args: Any = None, infile: Any = None,
                      attributes: Any = None, execute: Any = None) -> Any:
    """:func:`execute` in Python, the reference src/aio_call.c follows: the engine-driven
    path when the statement can take it (text protocol, no infile, no query
    attributes), else the sync cursor's execute in the greenlet.

    A class that reads results as BaseCursor does (``_one_call``) takes them whole with
    ``take_result()``.  One that reads them its own way (a dict cursor, an unbuffered
    one: :func:`_reads_direct`) takes the response's head with ``take_head()`` (the
    column definitions, or the OK packet); a buffered cursor's rows are then taken with
    the keys its class computes from the head (``take_rows(cur._row_keys(core))``,
    then ``take_result(keys)``) and handed to the sync ``_read_result(core,
    field_count)`` in ``_taken``; an unbuffered cursor's are left for its fetches, as
    the sync ``core.query()`` leaves them.  `execute`, when given: what runs in the
    greenlet instead of the cursor's execute when the event loop cannot drive the
    statement, called with the cursor, `query`, `args` and the keywords (the caller
    vouches for the class and does the rest of its execute's steps: the aiomysql
    flavour's shell, as ``_execute_read``)."""
    cur = shell._sync_obj
    worker = shell._worker
    conn = cur.connection
    loop = _get_running_loop()
    one_call = cur._one_call and execute is None
    if (infile is not None or attributes is not None or cur._prepared
            or cur._attributes or conn is None
            or not (one_call or _reads_direct(type(cur), execute is not None))
            or not _engine_ready(worker, conn, loop)):
        if execute is not None:
            return await worker.run(execute, cur, query, args, infile=infile,
                                    attributes=attributes)
        return await worker.run(cur.execute, query, args, infile=infile,
                                attributes=attributes)
    core = conn._conn
    proto = conn._proto
    conn._last_error = _NO_ERROR
    sql = _query_now(cur, conn, query, args)
    if sql is None:
        if execute is not None:
            return await worker.run(execute, cur, query, args)
        return await worker.run(cur.execute, query, args)
    lock = conn._lock
    if not lock.acquire(False):
        raise _busy()
    worker.busy = True
    try:
        if one_call:
            cur._start_one_call(conn, sql)
            try:
                sent = core.send_query_nowait(sql)
                if sent:
                    r = core.take_result()
                    if r is None:
                        r = await _wait_result(worker, conn, core, proto, loop,
                                               conn._timeouts[1])
            except BaseException:
                cur._clear()
                cur._executed = sql
                raise
            if sent:
                (cur._rows, cur.description, cur.description_flags, cur.rowcount,
                 cur.lastrowid, cur.warning_count) = r
                cur.rownumber = 0
                return cur.rowcount
        else:
            # the sync _query's steps: the cursor's last result cleared (an error an
            # unbuffered fetch deferred is raised here, before anything is sent), the
            # owner, _executed
            cur._clear()
            conn._owner = _weakref(cur)
            cur._executed = sql
            if core.send_query_nowait(sql):
                timeout = conn._timeouts[1]
                nc = core.take_head()
                if nc is None:
                    nc = await _wait_result(worker, conn, core, proto, loop, timeout, True)
                if nc > 0 and not cur._unbuffered:
                    keys = cur._row_keys(core)
                    r = core.take_rows(keys)
                    if r is None:
                        r = await _wait_result(worker, conn, core, proto, loop, timeout,
                                               False, keys)
                    cur._taken = r[0]
                try:
                    cur._read_result(core, nc)
                finally:
                    cur._taken = None
                return cur.rowcount
    except Error as exc:
        conn._note_error(exc)
        raise
    finally:
        worker.busy = False
        lock.release()
    # the statement needs a wait before it can be sent (the core said so: nothing was
    # sent): the sync cursor sends it from the greenlet
    return await worker.run(cur._query, conn, sql, None)


#: the path of a class that reads results its own way, by the name the aiomysql
#: flavour's shell calls it (with `execute`: :func:`_execute_py`'s docstring)
_execute_read = _execute_py


def _begin(shell: Any, query: Any, args: Any) -> Any:
    """:func:`_execute_py`'s common case up to the response, in one frame, for
    src/aio_call.c: a buffered tuple cursor, the connection ready (``_engine_ready``), the
    session unchanged, a str statement whose bytes or template bytes are kept
    (``_PLAIN_SQL`` / ``_PARAM_SQL``) with a tuple of parameters and the escaping mode
    known.  Returns None, having changed nothing, for every other case (the caller goes
    to :func:`_execute_py`); the greenlet's coroutine when the core would not send the
    statement without a wait; else ``(cur, conn, worker, core, proto, lock, sql, r,
    timeout)``: the statement sent, the lock held, ``worker.busy`` set, `r` the
    ``take_result()`` after the send (None while the response is not complete),
    `timeout` the read timeout."""
    cur = shell._sync_obj
    worker = shell._worker
    conn = cur.connection
    # (cur._direct: the class reads and formats as BaseCursor, not prepared, no query
    # attributes; _aio_ready: the worker's loop running here, core.unread, the stream's
    # _state, _early and _exc, and core.session_track_seq, as _execute_py's checks read
    # them)
    if (conn is None or not cur._direct or worker.busy or conn._closed
            or conn._pipeline is not None or type(query) is not str):
        return None
    core = conn._conn
    proto = conn._proto
    if not _aio_ready(core, proto, conn._track_seq, worker.loop):
        return None
    t = conn._tracked_charset
    codec = t[1] if t else conn._encoding
    if args is None:
        hit = _PLAIN_SQL.get(query)
        if hit is None or hit[0] != codec:
            return None
        sql = hit[1]
        conn._mode_written = None
    else:
        hit = _PARAM_SQL.get(query)
        if hit is None or hit[0] != codec or type(args) is not tuple or cur._rendering:
            return None
        mode = conn._escape_mode()
        if mode is None:
            return None
        try:
            sql = core.format_statement(hit[1], args, mode, t[0] if t else conn._charset,
                                        codec, conn._encoders, conn._binary_prefix)
        except Exception:   # noqa: BLE001 - _execute_py formats again: its str()
            return None     # fallback, or its error
        conn._mode_written = mode
    conn._last_error = _NO_ERROR
    lock = conn._lock
    if not lock.acquire(False):
        raise _busy()
    worker.busy = True
    try:
        # cur._start_one_call(conn, sql), inline
        conn._owner = _weakref(cur)
        if (cur._executed_from is not None or cur.messages
                or cur._pipe_error is not None or cur._pipe_sets is not None):
            cur._clear()
        cur._executed = sql
        if not core.send_query_nowait(sql):
            sent = False
        else:
            sent = True
            r = core.take_result()
    except BaseException as exc:
        _failed(cur, conn, worker, lock, sql, exc)
        raise
    if not sent:
        # it needs a wait before it can be sent: the sync cursor sends it from the
        # greenlet, the lock given back first (as _execute_py)
        worker.busy = False
        lock.release()
        return worker.run(cur._query, conn, sql, None)
    return cur, conn, worker, core, proto, lock, sql, r, conn._timeouts[1]


def _failed(cur: Any, conn: Any, worker: Any, lock: Any, sql: Optional[bytes],
            exc: BaseException) -> None:
    """The statement sent by :func:`_begin` ended with `exc` (the caller raises it): as
    :func:`_execute_py`'s handlers, the cursor's result cleared with `sql` as
    ``_executed``, an :class:`Error` noted as the connection's last, the lock released.
    (src/aio_call.c calls it too.)  `cur` is the call's name (str) for the connection's
    own calls (:func:`_begin_call`): no cursor then."""
    try:
        if type(cur) is not str:
            cur._clear()
            cur._executed = sql
        if isinstance(exc, Error):
            conn._note_error(exc)
    finally:
        worker.busy = False
        lock.release()


def _finish(cur: Any, worker: Any, lock: Any, r: Any) -> Any:
    """The result tuple `r` of src/aio_call.c's statement into the cursor; the lock
    released.  The cursor's rowcount."""
    try:
        (cur._rows, cur.description, cur.description_flags, cur.rowcount,
         cur.lastrowid, cur.warning_count) = r
        cur.rownumber = 0
        return cur.rowcount
    finally:
        worker.busy = False
        lock.release()


async def _take_over(cur: Any, conn: Any, worker: Any, core: Any, proto: Any, sql: bytes,
                     status: Optional[int], exc: Optional[BaseException]) -> Any:
    """The rest of :func:`_execute_py`'s engine-driven path, from where src/aio_call.c
    hands it over: the statement sent, the connection's lock held, ``worker.busy`` set.
    `exc`: the CancelledError the task got while it awaited the stream (KILL QUERY, the
    response read to its end: :func:`_stop`); else `status`: the stream's, not _DONE
    (:func:`_hand_over`), or None for waits with a read timeout (:func:`_wait_result`)."""
    loop = _get_running_loop()
    lock = conn._lock
    try:
        if exc is not None:
            await _stop(worker, conn, core, proto, loop)
            raise exc
        if status is None:
            r = await _wait_result(worker, conn, core, proto, loop, conn._timeouts[1])
        else:
            r = await _hand_over(worker, core, proto, status)
    except BaseException as e:
        _failed(cur, conn, worker, lock, sql, e)
        raise
    if type(cur) is str:   # the connection's own call (_begin_call): `cur` is its name
        more = _finish_call(cur, conn, worker, lock, r)
        if more is not None:
            await more
        return None
    return _finish(cur, worker, lock, r)


#: the sync class's own calls that _begin_call drives (a subclass's override goes to the
#: greenlet: :func:`internal`)
_SYNC_CALLS = {name: getattr(connections.Connection, name)
               for name in ("commit", "rollback", "begin", "ping")}


def _begin_call(shell: Any, name: str, sql: Optional[bytes]) -> Any:
    """:func:`internal`'s common case up to the response, in one frame, for
    src/aio_call.c (``conn.commit()``, ``rollback()``, ``begin()``, ``ping()``: `sql`
    None, COM_PING): the sync class's own method, the connection ready
    (:func:`_engine_ready`).  Returns None, having changed nothing, for every other case
    (the caller goes to :func:`_call_py`); the greenlet's coroutine when the core would
    not send without a wait; else ``(name, conn, worker, core, proto, lock, sql, r,
    timeout)`` as :func:`_begin`'s state, with the call's name where a cursor would
    be."""
    conn = shell._sync_obj
    worker = shell._worker
    if worker.busy or conn._closed or conn._pipeline is not None:
        return None
    core = conn._conn
    proto = conn._proto
    tc = type(conn)
    if tc is not _SyncConnection and getattr(tc, name) is not _SYNC_CALLS[name]:
        return None
    if not _aio_ready(core, proto, None, worker.loop):
        return None
    lock = conn._lock
    if not lock.acquire(False):
        raise _busy()
    worker.busy = True
    try:
        conn._last_error = _NO_ERROR
        conn._owner = None
        sent = core.send_query_nowait(sql) if sql is not None else core.send_ping_nowait()
        r = core.take_result() if sent else None
    except BaseException as exc:
        _failed(name, conn, worker, lock, sql, exc)
        raise
    if not sent:   # it needs a wait first (the core said so: nothing was sent)
        worker.busy = False
        lock.release()
        return worker.run(getattr(conn, name))
    return name, conn, worker, core, proto, lock, sql, r, conn._timeouts[1]


def _finish_call(name: str, conn: Any, worker: Any, lock: Any, r: Any) -> Any:
    """The end of :func:`_begin_call`'s call, `r` its answer (``take_result()``'s
    tuple): the lock released; None, or a coroutine that does the rest (further results
    dropped in the greenlet, as the sync call does)."""
    worker.busy = False
    lock.release()
    core = conn._conn
    if core.more_results or core.rows_pending:
        return _dropped_then(worker, core, name, conn, r)
    if name == "ping" and r[1] is not None:
        _not_ping(conn)
    return None


async def _dropped_then(worker: Any, core: Any, name: str, conn: Any, r: Any) -> None:
    await worker.run(core.discard)
    if name == "ping" and r[1] is not None:
        _not_ping(conn)


def _not_ping(conn: Any) -> None:
    # a result set is no answer to COM_PING (the sync ping: "expected an OK packet")
    conn._conn.close()
    raise OperationalError(2027, "Malformed packet: a result set answered COM_PING "
                                 "(expected an OK packet)")


async def _call_py(shell: Any, name: str, sql: Optional[bytes], *reconnect: Any) -> None:
    """``await conn.commit()`` / ``rollback()`` / ``begin()`` / ``ping(reconnect)`` in
    Python: the reference src/aio_call.c's K_CALL follows (:func:`ping`,
    :func:`internal`)."""
    if sql is None:
        await ping(shell, *reconnect)
    else:
        await internal(shell, name, sql)


async def internal(shell: Any, name: str, sql: Optional[bytes]) -> Any:
    """``await conn.commit()`` / ``rollback()`` / ``begin()`` (`sql`) and ``ping()`` (`sql`
    None: COM_PING): the sync connection's ``_internal_query(sql)`` / ``ping()`` driven by
    the event loop as execute() is (no greenlet), where the sync class runs it as
    mysqlc.connections.Connection does; else in the greenlet.  The answer's result tuple
    (``take_result``), or None when the greenlet ran it."""
    worker = shell._worker
    conn = shell._sync_obj
    loop = asyncio.get_running_loop()
    if (getattr(type(conn), name) is not getattr(connections.Connection, name)
            or not _engine_ready(worker, conn, loop)):
        await worker.run(getattr(conn, name))
        return None
    core = conn._conn
    proto = conn._proto
    lock = conn._lock
    if not lock.acquire(False):
        raise _busy()
    worker.busy = True
    sent = False
    r = None
    try:
        conn._last_error = _NO_ERROR
        conn._owner = None
        sent = core.send_query_nowait(sql) if sql is not None else core.send_ping_nowait()
        if sent:
            r = core.take_result()
            if r is None:
                r = await _wait_result(worker, conn, core, proto, loop, conn._timeouts[1])
    except Error as exc:
        conn._note_error(exc)
        raise
    finally:
        worker.busy = False
        lock.release()
    if not sent:   # it needs a wait first (the core said so: nothing was sent)
        await worker.run(getattr(conn, name))
        return None
    if core.more_results or core.rows_pending:   # dropped, as the sync call does
        await worker.run(core.discard)
    return r


async def ping(shell: Any, *args: Any, **kwargs: Any) -> None:
    """``await conn.ping(reconnect=False)``: COM_PING driven by the event loop (no
    greenlet, :func:`internal`); with `reconnect`, a failed ping opens a new connection
    as the sync ``ping(reconnect=True)`` does (in the greenlet).  A sync class with a
    ping of its own (the aiomysql flavour's, whose default is to reconnect) runs it in
    the greenlet with the arguments as given."""
    conn = shell._sync_obj
    if type(conn).ping is not connections.Connection.ping:
        await shell._worker.run(conn.ping, *args, **kwargs)
        return

    def _reconnect(reconnect: bool = False) -> bool:
        return reconnect
    reconnect = _reconnect(*args, **kwargs)
    try:
        r = await internal(shell, "ping", None)
    except (OperationalError, InterfaceError):
        if not reconnect:
            raise
        await shell._worker.run(conn.ping, True)
        return
    if r is not None and r[1] is not None:
        _not_ping(conn)


async def _hand_over(worker: Any, core: Any, proto: Any, status: int,
                     head: bool = False, keys: Any = None) -> Any:
    """The stream ended, failed or timed out: the engine reads on with the transport's
    waits in the greenlet and raises what the sync path raises.  `head`: the statement's
    ``take_head()`` is read on (:func:`_execute_py`), else its ``take_result(keys)``."""
    _stream_error(proto, status)
    worker.busy = False
    if head:
        return await worker.run(core.take_head, True)
    return await worker.run(core.take_result, keys, True)


def _stream_error(proto: Any, status: int) -> None:
    """Before the greenlet reads on after the stream reported `status` (not _DONE): the
    engine's own error on received bytes (2027...) is raised; a read timeout that
    passed is reported by the greenlet's first wait."""
    exc = proto._exc
    if exc is not None:
        proto._exc = None
        raise exc
    if status == _TIMEOUT:
        proto._expire_next_wait = True


async def _wait_result(worker: Any, conn: Any, core: Any, proto: Any,
                       loop: asyncio.AbstractEventLoop, timeout: Optional[float],
                       head: bool = False, keys: Any = None) -> Any:
    """The wait for take_result(keys) (or, `head`, take_head()): a timer per wake-up
    with a read timeout."""
    take = core.take_head if head else (
        core.take_result if keys is None else partial(core.take_result, keys))
    while True:
        fut = proto.wait_future()
        timer = loop.call_later(timeout, _timed_out, fut) if timeout is not None else None
        try:
            status = await fut
        except asyncio.CancelledError:
            await _stop(worker, conn, core, proto, loop)
            raise
        except BaseException:   # (as in _execute_py: the response will not be read)
            _abandon(core, proto)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if status != _DONE:
            return await _hand_over(worker, core, proto, status, head, keys)
        r = take()
        if r is not None:
            return r


def _timed_out(fut: "asyncio.Future[int]") -> None:
    if not fut.done():
        fut.set_result(_TIMEOUT)


def _abandon(core: Any, proto: Any) -> None:
    """The statement's response will not be read (a cancellation past its budget, its
    coroutine closed while it awaited, or another exception thrown into it there): the
    stream is closed and, the engine noticing the
    end at once (the stream reports it without waiting), the response forgotten, so the
    next command raises "lost connection", not "out of sync"."""
    proto.close()
    if core.take_pending:
        try:
            core.take_result(None, True)
        except Error:
            pass


async def _stop(worker: Any, conn: Any, core: Any, proto: Any,
                loop: asyncio.AbstractEventLoop) -> None:
    """The awaiting task was cancelled while the statement ran: KILL QUERY, then read
    the response to its end within the budget (its result dropped), else close."""
    deadline = loop.time() + CANCEL_BUDGET

    def abort() -> None:
        _abandon(core, proto)

    async def read_rest() -> None:
        while core.open and core.take_pending:
            try:
                if core.take_result() is not None:
                    break
            except Exception:   # noqa: BLE001 - the dropped rows' own errors
                # 1317 "Query execution was interrupted": the response's end; or a user
                # converter's exception on a row nobody will read -- the cancellation
                # is what the caller gets, and the rest is drained below
                break
            left = deadline - loop.time()
            if left <= 0:
                abort()
                break
            fut = proto.wait_future()
            try:
                await asyncio.wait({fut}, timeout=left)
            except asyncio.CancelledError:
                pass    # cancelled again: keep draining
            if not fut.done():
                fut.cancel()
            elif fut.result() != _DONE:
                abort()
                break

    await stop_statement(worker, conn, core, proto, deadline, abort, read_rest)


def _retrieved(fut: "asyncio.Future[Any]") -> None:
    if not fut.cancelled():
        fut.exception()


async def stop_statement(worker: Any, engine: Any, core: Any, proto: Any, deadline: float,
                         abort: Callable[[], None],
                         read_rest: Callable[[], Awaitable[Any]]) -> None:
    """What a cancelled statement gets, on either path (this module's and the runner's
    ``on_cancel``, aio/connection.py): ``KILL QUERY`` over a side connection while
    `read_rest()` reads the response to its end; then the rest of an unbuffered result
    or further results drained (``Connection.drain`` in the greenlet) until `deadline`
    (loop time), else `abort()`; and the KILL awaited before the connection is used
    again (a KILL that fails: `abort()`)."""
    loop = asyncio.get_running_loop()
    # the side connection may use the whole budget: MariaDB's KILL QUERY of a thread in
    # SLEEP() can take just over 2 s while other threads sleep too (its wait for the
    # global sleep mutex), and a 2 s read timeout then closed the connection
    kill = loop.run_in_executor(None, connections.Connection._kill_query_side, engine,
                                core.thread_id, max(0.5, CANCEL_BUDGET - 0.5))
    # a KILL that fails after the wait below gave up on it (the connection closed
    # meanwhile): its error is the abort's, not one to log as never retrieved
    kill.add_done_callback(_retrieved)
    # no further command of the cancelled call starts (a bulk executemany's next
    # command, the next chunk or row of a text executemany): refused in the engine
    # until the cancellation is handled
    core.stop_requested = True
    try:
        await read_rest()
        if core.open and (core.rows_pending or core.more_results):
            # the rest of an unbuffered result (ended early by KILL QUERY: error 1317)
            left = max(0.0, deadline - loop.time())
            msg = worker.resume_call(core.drain, left)
            ok = await worker.finish(msg, deadline, abort)
            if not ok or core.rows_pending or core.more_results:
                abort()
    finally:
        core.stop_requested = False
        try:
            await asyncio.wait_for(asyncio.shield(kill), max(0.1, deadline - loop.time()))
        except BaseException:   # noqa: BLE001 - a failed KILL: close rather than guess
            abort()
        if proto is not None and proto._state:
            engine._owner = None


_SSCursor = _sync.SSCursor
_FETCH = _sync._FETCH
_loop_running = _core._loop_running
_aio_execute = _core.aio_execute
_aio_ready = _core._aio_ready
_SyncConnection = connections.Connection
_core._aio_configure((_execute_py, _begin, _finish, _failed, _take_over, _abandon,
                      asyncio.CancelledError, _begin_call, _finish_call, _call_py,
                      asyncio._get_running_loop))
