"""A pool of ``mysqlc.aio`` connections (the API of aiomysql's ``create_pool``/``Pool``).

::

    pool = await mysqlc.aio.create_pool(minsize=1, maxsize=10, **connect_kwargs)
    async with pool.acquire() as conn:
        async with conn.cursor() as cur:
            await cur.execute("SELECT 1")
    pool.close()
    await pool.wait_closed()

or ``async with mysqlc.aio.create_pool(...) as pool:`` (closed and waited for on exit).

What a connection goes through (the rules aiomysql has, and the ones it lacks):

- **Acquire** hands out a free connection (the most recently released first), else opens
  a new one while the pool holds fewer than ``maxsize``, else waits.  Waiters are served
  in the order they arrived: a released connection (or the room a dropped one leaves) goes
  straight to the longest waiting ``acquire()``, never to one that arrives later.
- **Checked on acquire.** A free connection that is closed or lost (``conn.closed``) is
  replaced; one older than ``pool_recycle`` seconds (time since it was opened) is closed
  and replaced; one left idle in the pool for longer than ``ping_idle`` seconds (default
  1.0) is pinged first (COM_PING) and replaced when the ping fails.  A connection that
  the server dropped less than ``ping_idle`` seconds ago is handed out unchecked: its next
  command raises OperationalError (2006/2013), it is then closed, and ``release()`` drops
  it.
- **Reset on release.** The next user gets the session as the pool opened it
  (docs/asyncio.md, "What a release restores", lists each item).  Pooled connections
  ask the server to report every change of session state (session_track_state_change);
  a connection whose session reported none since it was last reset goes back at once,
  without a round trip; otherwise its session is reset (COM_RESET_CONNECTION, then
  connect's statements again: init_command, SET NAMES, sql_mode, autocommit, tracking;
  its database selected again).  Without session tracking only autocommit is known (the
  status flags) and set back.  A connection released in the middle of a transaction
  (SERVER_STATUS_IN_TRANS in the server's last status) is rolled back (or reset) before
  anyone gets it again; when that fails or takes longer than ``RESET_TIMEOUT`` (5 s) the
  connection is closed instead, as is one logged in as another user with
  ``change_user()``, or one that had no default database and chose one with ``USE``
  (no command goes back to none).  One released with rows of an unbuffered
  cursor (or further result sets) still unread is closed, not drained (the rest
  could be of any size); so is one released inside a ``conn.pipeline()`` block or
  with pipelined responses unread (their session changes are not known yet).  One
  that is closed -- by the caller, by a lost server, or because a cancelled operation
  could not be stopped in time -- is dropped, and the room it held goes to the next
  waiter.  So the pool never hands out a connection whose
  protocol state is not at rest.

- **Cancellation.** A cancelled ``acquire()`` leaves the pool as it was: a connection
  (or room) granted to it as it was cancelled goes to the next waiter.  A cancelled
  ``create_pool()`` closes what it opened.  ``close()`` closes the free connections in a
  task of the pool's: cancelling ``wait_closed()`` stops only the wait.

The behaviour follows aiomysql 0.3's ``aiomysql/pool.py``; the differences
(``pool_recycle`` counted from the connect, the idle ping, the session reset on release,
waiters failed by ``close()``) are listed in docs/compat.md.
"""

from __future__ import annotations

import asyncio
import collections
import collections.abc
import time
import warnings
from typing import TYPE_CHECKING, Any, Optional, TypeVar

from .. import _core as _mc_core
from ..constants import SERVER_STATUS

if TYPE_CHECKING:
    from collections.abc import Coroutine, Generator

    from .connection import Connection

__all__ = ["create_pool", "Pool"]

#: seconds a connection may sit idle in the pool before acquire() pings it (the default
#: of ``create_pool(ping_idle=...)``)
PING_IDLE = 1.0
#: seconds the rollback of a connection released in a transaction may take before the
#: connection is closed instead
RESET_TIMEOUT = 5.0
#: seconds wait_closed()/clear() give each free connection's COM_QUIT before closing it
QUIT_TIMEOUT = 2.0


def create_pool(minsize: int = 1, maxsize: int = 10, echo: bool = False,
                pool_recycle: float = -1, *, ping_idle: Optional[float] = PING_IDLE,
                **connect_kwargs: Any) -> _PoolContext:
    """Open a pool of ``mysqlc.aio`` connections.

    Use ``pool = await create_pool(...)`` or ``async with create_pool(...) as pool:``
    (the pool is closed and waited for when the block ends).

    Parameters
    ----------
    minsize : int, default 1
        Connections opened before the pool is returned (concurrently).  Connections
        dropped later are replaced when an acquire() needs one, not eagerly.
    maxsize : int, default 10
        Most connections the pool holds at once (handed out, free and being opened or
        reset together); 0 means no bound (aiomysql's meaning).
    echo : bool, default False
        Kept for aiomysql compatibility (its connections log every query); stored as
        ``pool.echo`` and not passed on.
    pool_recycle : float, default -1
        A free connection opened more than this many seconds ago is closed and replaced
        on acquire; -1 never recycles.
    ping_idle : float or None, default 1.0 (``PING_IDLE``)
        A free connection idle for more than this many seconds is pinged on acquire;
        0 pings at every acquire, None never pings.
    **connect_kwargs
        Every keyword of ``mysqlc.aio.connect()`` (host, port, user, password, database,
        ssl, autocommit, init_command, ...), used for every connection.

    Raises
    ------
    ValueError
        ``minsize`` < 0, or ``maxsize`` < ``minsize`` (and not 0).
    mysqlc.OperationalError (and the other errors of ``mysqlc.aio.connect``)
        Opening one of the first ``minsize`` connections failed; the ones already open
        are closed.
    """
    return _PoolContext(_create_pool(minsize, maxsize, echo, pool_recycle, ping_idle,
                                     connect_kwargs))


async def _create_pool(minsize, maxsize, echo, pool_recycle, ping_idle, connect_kwargs):
    pool = Pool(minsize, maxsize, echo, pool_recycle, ping_idle=ping_idle, **connect_kwargs)
    await pool._fill(minsize)
    return pool


_T = TypeVar("_T")


class _CoroutineMethods(collections.abc.Coroutine[Any, Any, _T]):
    """A coroutine's methods, each passed on to ``self._coro`` (a coroutine): for
    :class:`_Coroutine` and for the acquire context, whose C base class leaves no room
    for a slot of this class's."""

    __slots__ = ()
    _coro: Coroutine[Any, Any, _T]

    def __await__(self) -> Generator[Any, None, _T]:
        return self._coro.__await__()

    def send(self, value: Any) -> Any:
        return self._coro.send(value)

    def throw(self, *exc: Any) -> Any:
        return self._coro.throw(*exc)

    def close(self) -> None:
        self._coro.close()


class _Coroutine(_CoroutineMethods[_T]):
    """A coroutine object that is an async context manager too (aiomysql's
    ``_ContextManager``): ``await x``, ``asyncio.create_task(x)`` and ``async with x``."""

    __slots__ = ("_coro",)


class _PoolContext(_Coroutine["Pool"]):
    """What create_pool() returns: a coroutine (gives the pool) and an async context
    manager (closes the pool and waits for it on exit)."""

    __slots__ = ("_pool",)

    def __init__(self, coro: Coroutine[Any, Any, Pool]) -> None:
        self._coro = coro
        self._pool: Optional[Pool] = None

    async def __aenter__(self) -> Pool:
        self._pool = await self._coro
        return self._pool

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        pool, self._pool = self._pool, None
        pool.close()
        await pool.wait_closed()


class _AcquireContext(_mc_core.PoolAcquire, _CoroutineMethods["Connection"]):
    """What Pool.acquire() returns: a coroutine (gives the connection, which the caller
    hands back with pool.release()) and an async context manager (releases on exit).

    ``async with`` runs in C (``_core.PoolAcquire``, src/aio_pool.c): ``__aenter__``
    gives a C awaitable that, awaited, takes a free connection that needs no check as
    :meth:`Pool._acquire` would take it at once (nobody waits, the most recently
    released one, ``_verdict`` "ok"), without a coroutine, else awaits it
    (:func:`_enter_slow`); ``__aexit__``
    puts the connection back as :meth:`Pool._release` does when nothing else is to be
    done, else calls it (and awaits the reset it starts, shielded: cancelling the
    block's task does not stop it).  The coroutine of ``Pool._acquire`` is made only
    when it is needed."""

    __slots__ = ()

    if TYPE_CHECKING:
        def __init__(self, pool: Pool) -> None: ...
        async def __aenter__(self) -> Connection: ...
        async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None: ...
        _conn: Optional[Connection]
        _co: Optional[Coroutine[Any, Any, Connection]]
        _spent: bool
        @property
        def _pool(self) -> Pool: ...

    @property
    def _coro(self) -> Coroutine[Any, Any, Connection]:   # type: ignore[override]
        co = self._co
        if co is None:
            if self._spent:
                raise RuntimeError("cannot reuse already awaited coroutine")
            self._spent = True
            co = self._co = self._pool._acquire()
        return co

    def close(self) -> None:
        self._spent = True
        if self._co is not None:
            self._co.close()


async def _enter_slow(ctx: _AcquireContext, co: Coroutine[Any, Any, Connection]
                      ) -> Connection:
    """``async with pool.acquire()`` when a connection cannot be taken at once: the
    connection :meth:`Pool._acquire`'s coroutine `co` gives, kept for ``__aexit__``."""
    conn = await co
    ctx._conn = conn
    return conn


_pool_idle = _mc_core._pool_idle
_session_need = _mc_core._session_need


def _what(value):
    """`value` for an error message: an int as itself, anything else by its type only (a
    DSN given as create_pool's first argument holds a password)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return repr(value)
    hint = (": a DSN is given as create_pool(host='mysql://...')"
            if isinstance(value, str) and "://" in value else "")
    return "a %s%s" % (type(value).__name__, hint)


class Pool(_mc_core.PoolBase):
    """A pool of ``mysqlc.aio`` connections; made by ``create_pool()``.

    Attributes (read-only): ``minsize``, ``maxsize``, ``size`` (every connection the pool
    holds: free, handed out, being opened or reset), ``freesize`` (free ones), ``closed``
    (True once ``wait_closed()`` finished), ``echo``.

    A pool belongs to the event loop it was created on.
    """

    def __init__(self, minsize: int = 1, maxsize: int = 10, echo: bool = False,
                 pool_recycle: float = -1, *, ping_idle: Optional[float] = PING_IDLE,
                 **connect_kwargs: Any) -> None:
        for name, value in (("minsize", minsize), ("maxsize", maxsize)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError("%s should be an int, zero or greater (got %s)"
                                 % (name, _what(value)))
        if maxsize and maxsize < minsize:
            raise ValueError("maxsize should be not less than minsize (got %d < %d)"
                             % (maxsize, minsize))
        if ping_idle is not None and not ping_idle >= 0:
            raise ValueError("ping_idle should be None or >= 0 seconds (got %r)" % (ping_idle,))
        self._minsize = minsize
        self._maxsize = maxsize
        self._echo = echo
        self._recycle = pool_recycle
        self._ping_idle = ping_idle
        self._conn_kwargs = connect_kwargs
        self._loop = asyncio.get_running_loop() if _loop_running() else None
        self._clock = _clock_of(self._loop)   # the loop's time(), as cheaply as it is read
        self._free = collections.deque()   # (conn, released at), most recent at the right
        self._used = set()                 # handed out, or being checked by an acquire()
        self._resetting = set()            # released, being rolled back
        self._opening = 0                  # connects in flight (each one holds room)
        self._born = {}                    # conn -> loop time it was opened
        self._start = {}                   # conn -> _SessionStart
        self._quitting = set()             # free, being closed by close()/clear()
        self._tasks = set()                # the pool's own tasks still running
        self._waiters = collections.deque()   # futures of waiting acquire() calls
        self._terminated = set()
        self._closers = []                 # futures of wait_closed() calls
        self._closing = False
        self._closed = False

    # ------------------------------------------------------------------ attributes

    @property
    def minsize(self) -> int:
        return self._minsize

    @property
    def maxsize(self) -> int:
        return self._maxsize

    @property
    def size(self) -> int:
        return (len(self._free) + len(self._used) + len(self._resetting) + self._opening
                + len(self._quitting))

    @property
    def freesize(self) -> int:
        return len(self._free)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def echo(self) -> bool:
        return self._echo

    def __repr__(self) -> str:
        state = "closed" if self._closed else "closing" if self._closing else "open"
        return "<mysqlc.aio.Pool %s size=%d free=%d maxsize=%d waiting=%d>" % (
            state, self.size, self.freesize, self._maxsize, len(self._waiters))

    # ------------------------------------------------------------------ acquire

    def get(self) -> _AcquireContext:
        """aiomysql's older name of :meth:`acquire` (``async with pool.get() as conn``)."""
        return self.acquire()

    def acquire(self) -> _AcquireContext:
        """A connection from the pool: ``conn = await pool.acquire()`` (hand it back with
        ``pool.release(conn)``) or ``async with pool.acquire() as conn:``.

        Waits while ``maxsize`` connections are out; waiters are served first come, first
        served.  Bound the wait with ``asyncio.timeout()``: a cancelled wait leaves the
        pool as it was.

        Raises
        ------
        RuntimeError
            The pool is closing or closed (as aiomysql), also for acquire() calls that
            were waiting when close() was called.
        mysqlc.OperationalError (and the other errors of ``mysqlc.aio.connect``)
            A new connection was needed and could not be opened.
        """
        return _AcquireContext(self)

    def _room(self):
        return not self._maxsize or self.size < self._maxsize

    async def _acquire(self):
        if self._closing:
            raise RuntimeError("Cannot acquire connection after closing pool")
        self._bind_loop()
        grant = None
        if not self._waiters:
            if self._free:
                conn, idle = self._free.pop()
                self._used.add(conn)
                grant = (conn, idle)
            elif self._room():
                self._opening += 1
                grant = "open"
        if grant is None:
            fut = self._loop.create_future()
            self._waiters.append(fut)
            try:
                grant = await fut
            except BaseException:
                self._abandon_wait(fut)
                raise
        if grant != "open":
            # the common case without _take's coroutine: a connection that needs no check
            conn, idle = grant
            try:
                ok = self._verdict(conn, idle) == "ok"
            except BaseException:
                self._give_back(grant)
                raise
            if ok:
                return conn
        return await self._take(grant)   # (its _verdict sees a connection closed here)

    def _abandon_wait(self, fut):
        """An acquire() waiting on `fut` (in ``_waiters``) gives up -- cancelled, closed,
        failed: a connection granted just then goes back, else the wait leaves the list.
        (Also src/aio_pool.c's, for the wait it runs itself.)"""
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            self._give_back(fut.result())   # granted just as we were cancelled
        else:
            try:
                self._waiters.remove(fut)
            except ValueError:
                pass

    async def _take(self, grant):
        """Turn a grant -- a free connection (already counted in _used) or "open" (room
        counted in _opening) -- into a checked connection in _used."""
        while True:
            if grant == "open":
                return await self._connect()   # gives the room back itself on failure
            conn, idle = grant
            if conn in self._terminated:
                # handed over by a release just before terminate() closed it: the pool
                # is closing, as for the waiters close() wakes (no new connection)
                self._terminated.discard(conn)
                raise RuntimeError("Cannot acquire connection after closing pool")
            try:
                verdict = self._verdict(conn, idle)
                if verdict == "ok":
                    return conn
                usable = await self._usable(conn, idle, verdict)
            except BaseException:
                self._give_back(grant)
                raise
            if usable:
                return conn
            # not usable, and closed now: its room is ours to open a new one in
            self._forget(conn)
            self._used.discard(conn)
            self._opening += 1
            grant = "open"

    def _give_back(self, grant):
        """Undo a grant nobody will use (its acquire() failed or was cancelled)."""
        if grant == "open":
            self._opening -= 1
            self._room_freed()
        else:
            conn, _ = grant
            if conn in self._used:
                self._used.discard(conn)
                self._returned(conn)

    async def _connect(self):
        from . import connect   # the lead's module; imported late so pool.py loads alone
        try:
            conn = await connect(_pooled=True, **self._conn_kwargs)
        except BaseException:
            self._opening -= 1
            self._room_freed()
            raise
        self._opening -= 1
        self._born[conn] = self._clock()
        self._start[conn] = _SessionStart(conn)
        if self._closing:
            conn.close()
            self._forget(conn)
            self._room_freed()
            raise RuntimeError("Cannot acquire connection after closing pool")
        self._used.add(conn)
        return conn

    def _verdict(self, conn, idle_since):
        """What a free connection needs at acquire, decided without I/O: "ok", "closed"
        (closed or not at rest: it is closed now), "recycle" (too old), "ping" (idle
        too long)."""
        if not _idle(conn):
            _close_quietly(conn)
            return "closed"
        now = self._clock()
        if self._recycle is not None and self._recycle > -1 and \
                now - self._born.get(conn, now) > self._recycle:
            return "recycle"
        if self._ping_idle is not None and now - idle_since > self._ping_idle:
            return "ping"
        return "ok"

    async def _usable(self, conn, idle_since, verdict=None):
        """The checks of a free connection at acquire; False means it has been closed."""
        verdict = verdict or self._verdict(conn, idle_since)
        if verdict == "closed":
            return False
        if verdict == "recycle":
            await _quit(conn)
            return False
        if verdict == "ping":
            try:
                await conn.ping()
            except Exception:
                _close_quietly(conn)
                return False
            if not _idle(conn):
                _close_quietly(conn)
                return False
        return True

    async def _fill(self, n):
        """Open connections until the pool holds n (create_pool's minsize), concurrently."""
        self._bind_loop()
        missing = n - self.size
        if missing <= 0:
            return
        self._opening += missing
        tasks = [self._task(self._connect()) for _ in range(missing)]
        try:
            await asyncio.wait(tasks)
        except BaseException:
            # cancelled (create_pool() was): the connects still running are stopped,
            # the connections already open are closed, now or when their connect ends
            for t in tasks:
                t.cancel()
                t.add_done_callback(self._drop_opened)
            raise
        results = [_outcome(t) for t in tasks]
        failed = [r for r in results if isinstance(r, BaseException)]
        for r in results:
            if not isinstance(r, BaseException):
                self._used.discard(r)
                if failed:
                    self._forget(r)
                    _close_quietly(r)
                    self._room_freed()
                else:
                    self._free.append((r, self._clock()))
        if failed:
            raise failed[0]

    def _drop_opened(self, task):
        """A connect of a cancelled _fill() ended: close the connection it opened."""
        if task.cancelled() or task.exception() is not None:
            return   # its room was given back by _connect()
        conn = task.result()
        self._used.discard(conn)
        _close_quietly(conn)
        self._forget(conn)
        self._room_freed()

    # ------------------------------------------------------------------ release

    def release(self, conn: Connection) -> asyncio.Future[None]:
        """Hand a connection back to the pool.  A plain call (as aiomysql's); it
        returns an awaitable that finishes when the connection is back in the pool or
        closed -- ``await pool.release(conn)`` waits for the reset of a changed
        session or the rollback of a transaction left open, a bare
        ``pool.release(conn)`` lets it run on its own (the connection counts in
        ``size``, not in ``freesize``, meanwhile).

        Raises
        ------
        ValueError
            `conn` is not out from this pool (released twice, or never acquired from it).
        """
        resetting = self._release(conn)
        if resetting is not None:
            return resetting
        return _done(self._loop.create_future() if self._loop is not None else None)

    def _release(self, conn):
        """release() without the awaitable: None when the connection is back (or
        closed) already, else the task rolling back its transaction."""
        if conn in self._terminated:
            self._terminated.discard(conn)
            return None
        if conn not in self._used:
            raise ValueError("connection %r is not acquired from this pool" % (conn,))
        self._used.discard(conn)
        if not self._closing and _idle(conn):
            start = self._start.get(conn)
            if start is not None:
                need = start.restore_needed(conn)
                if need is not None:
                    self._resetting.add(conn)
                    return self._task(self._reset(conn, start, need))
                # open, at rest, no transaction ("rollback" otherwise): what
                # _returned checks first is known
                self._hand_on(conn)
                return None
        self._returned(conn)
        return None

    async def _reset(self, conn, start, need):
        try:
            try:
                await asyncio.wait_for(start.restore(conn, need), RESET_TIMEOUT)
            except BaseException:
                _close_quietly(conn)
                raise
        except Exception:
            pass   # closed: _returned drops it
        finally:
            self._resetting.discard(conn)
            self._returned(conn)

    def _returned(self, conn):
        """A connection (no longer counted anywhere) comes back: to the first waiter,
        to the free list, or -- closed, closing pool, not at rest -- away."""
        if self._closing or not _idle(conn) or _in_transaction(conn):
            _close_quietly(conn)
            self._forget(conn)
            self._room_freed()
            return
        self._hand_on(conn)

    def _hand_on(self, conn):
        """A connection fit for the next user: to the first waiter, else free.  Its
        stream reads again if reading was held (StreamProtocol.unhold): a free
        connection's end (KILL, the server's wait_timeout) must reach the idle check."""
        proto = conn._sync_obj._proto
        if proto._held:
            proto.unhold()
        now = self._clock()
        waiters = self._waiters
        while waiters:
            fut = waiters.popleft()
            if not fut.done():
                self._used.add(conn)
                fut.set_result((conn, now))
                return
        self._free.append((conn, now))

    def _room_freed(self):
        """Room for one connection opened up: the first waiter gets to open it (or,
        while closing, wait_closed() looks again)."""
        if self._closing:
            self._wake_closers()
            return
        while self._waiters and self._room():
            fut = self._waiters.popleft()
            if not fut.done():
                self._opening += 1
                fut.set_result("open")
                return

    def _wake_closers(self):
        closers, self._closers = self._closers, []
        for fut in closers:
            if not fut.done():
                fut.set_result(None)

    def _forget(self, conn):
        self._born.pop(conn, None)
        self._start.pop(conn, None)

    # ------------------------------------------------------------------ closing

    async def clear(self) -> None:
        """Close every free connection (graceful COM_QUIT, bounded by 2 s each; when
        clear() is cancelled, the ones not closed yet are closed at once)."""
        await self._quit_free()

    async def _quit_free(self) -> None:
        """Close the free connections: COM_QUIT each (concurrently, bounded); when the
        wait is cancelled, every one still open is closed at once (no server session
        outlives the call).  They count in ``size`` until closed."""
        free = [c for c, _ in self._free]
        self._free.clear()
        if not free:
            return
        self._quitting.update(free)
        quits = [self._task(_quit(c)) for c in free]
        try:
            await asyncio.wait(quits)
        finally:
            for c in free:
                _close_quietly(c)   # a no-op for the ones closed by their COM_QUIT
                self._quitting.discard(c)
                self._forget(c)
                self._room_freed()

    def close(self) -> None:
        """Start closing: acquire() raises from now on (and the acquire() calls waiting
        now raise RuntimeError); the free connections are closed now (a graceful
        COM_QUIT each, in a task of the pool's: cancelling wait_closed() does not stop
        it; without a running loop at once), the others as they come back.  Follow
        with ``await pool.wait_closed()``."""
        if self._closing:
            return
        self._closing = True
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_exception(RuntimeError("the pool was closed while waiting to acquire"))
        self._close_free()

    def _close_free(self):
        if not self._free:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None and loop is self._loop:
            self._task(self._quit_free())
            return
        for conn, _ in self._free:   # no loop to wait in: closed at once
            _close_quietly(conn)
            self._forget(conn)
        self._free.clear()

    def terminate(self) -> None:
        """close(), and close every connection at once: free, being reset, and out
        (their later release() is accepted and does nothing)."""
        self.close()
        for conn in list(self._used):
            _close_quietly(conn)
            self._forget(conn)
            self._terminated.add(conn)
        self._used.clear()
        for conn, _ in self._free:
            _close_quietly(conn)
            self._forget(conn)
        self._free.clear()
        for conn in list(self._resetting) + list(self._quitting):
            # their tasks see the connection closed (the await in progress fails with
            # 2013) and drop it
            _close_quietly(conn)
        self._wake_closers()

    async def wait_closed(self) -> None:
        """Wait until every connection has been closed: the free ones (closed by
        close()) and those out, as they come back.  Cancelling it stops only the wait.

        Raises
        ------
        RuntimeError
            close() was not called first (as aiomysql).
        """
        if self._closed:
            return
        if not self._closing:
            raise RuntimeError(".wait_closed() should be called after .close()")
        self._close_free()
        while self.size:
            fut = self._loop.create_future()
            self._closers.append(fut)
            await fut
        self._closed = True

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close()
        await self.wait_closed()

    def __enter__(self) -> None:
        # aiomysql's: a plain ``with pool:`` is a mistake, said at once
        raise RuntimeError('"yield from" should be used as context manager expression')

    def __exit__(self, *exc: Any) -> None:
        pass   # never reached: __enter__ raises (a with statement needs both)

    def __await__(self) -> Generator[Any, None, _Held]:
        """aiomysql's deprecated ``with await pool as conn:`` -- acquires a connection;
        the ``with`` block releases it.  DeprecationWarning, as aiomysql."""
        warnings.warn("with await pool as conn deprecated, use "
                      "async with pool.acquire() as conn instead",
                      DeprecationWarning, stacklevel=2)
        conn = yield from self._acquire().__await__()
        return _Held(self, conn)

    # ------------------------------------------------------------------ internals

    def _task(self, coro: Any) -> asyncio.Task[Any]:
        """A task of the pool's own (resets, COM_QUITs, connects of a cancelled
        create_pool()), held until it ends: the loop keeps only weak references."""
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _bind_loop(self):
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
            self._clock = _clock_of(loop)
        elif self._loop is not loop:
            raise RuntimeError("this pool belongs to another event loop")


class _Held:
    """``with (await pool) as conn:`` (aiomysql's deprecated form): the block's exit
    releases the connection (a plain release: a reset it needs runs on its own)."""

    __slots__ = ("_pool", "_conn")

    def __init__(self, pool, conn):
        self._pool = pool
        self._conn = conn

    def __enter__(self) -> Connection:
        return self._conn

    def __exit__(self, *exc: Any) -> None:
        pool, conn, self._pool, self._conn = self._pool, self._conn, None, None
        if pool is not None:
            pool._release(conn)


class _SessionStart:
    """The session state a pooled connection had when it was opened (after connect's
    own statements), and what is done on release to give it back.

    With session state tracking (``session_track_state_change``, asked for by the
    pooled engine, mysqlc.aio.connection._PooledEngine) the server reports every
    change of the session's state in its OK packets -- system variables (autocommit,
    charset, sql_mode, time_zone, isolation level...), the default database, user
    variables, temporary tables, ``PREPARE`` -- and the core counts the OK packets that
    report any change (``session_track_seq``): a count that did not move since the last
    reset means that nothing needs to be done, without a round trip.  When it moved,
    the session is reset (COM_RESET_CONNECTION and connect's statements again,
    ``Connection._reset_session``).  Without tracking (``session_track=False``, a
    server that refuses it) only autocommit is known, from the status flags of the
    server's last OK packet, and it alone is restored."""

    __slots__ = ("seq", "autocommit", "login")

    def __init__(self, conn):
        self.login = (conn.sync.user, conn.sync._password)
        self.note(conn)

    def note(self, conn):
        engine = conn.sync
        # the session's track count, None when its state is not tracked
        self.seq = _core(conn).session_track_seq if engine._state_tracked else None
        self.autocommit = engine.get_autocommit()

    def restore_needed(self, conn):
        """What release must do (no I/O): None, "reset" (the session), "rollback"
        (an open transaction), "autocommit" (set it back), "close" (logged in as
        another user with change_user(): a reset keeps the login).  The core's part
        is one C call (``_core._session_need``: session_track_seq against ``seq``,
        then server_status's SERVER_STATUS_IN_TRANS and SERVER_STATUS_AUTOCOMMIT)."""
        engine = conn._sync_obj
        login = self.login
        if engine.user != login[0] or engine._password != login[1]:
            return "close"
        return _session_need(engine._conn, self.seq, self.autocommit)

    async def restore(self, conn, need):
        if need == "close":
            await _quit(conn)
            return
        if need == "reset":
            if not await conn._worker.run(conn.sync._reset_session):
                _close_quietly(conn)   # a database was chosen and none can be set back
                return
        else:
            if need == "rollback":
                await conn.rollback()
            if conn.get_autocommit() != self.autocommit:
                await conn.autocommit(self.autocommit)
        self.note(conn)


def _outcome(task):
    """A finished task's result, or its exception (CancelledError when cancelled)."""
    if task.cancelled():
        return asyncio.CancelledError()
    return task.exception() or task.result()


def _clock_of(loop):
    """The loop's ``time()``: ``time.monotonic`` itself for asyncio's loops (their
    ``time()`` is a Python method that calls it), else the loop's own method."""
    if loop is None:
        return None
    if type(loop).time is asyncio.BaseEventLoop.time:
        return time.monotonic
    return loop.time


def _loop_running():
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _done(fut):
    if fut is None:
        loop = asyncio.get_event_loop()
        fut = loop.create_future()
    fut.set_result(None)
    return fut


def _core(conn):
    return conn.sync._conn


def _in_transaction(conn):
    """The server's last status says a transaction is open (SERVER_STATUS_IN_TRANS)."""
    try:
        return bool(_core(conn).server_status & SERVER_STATUS.SERVER_STATUS_IN_TRANS)
    except Exception:
        return False


def _idle(conn):
    """The connection can go to the next user as it is: open (the sync connection, its
    core and its stream), no await running on it (another task's: handing it out would
    give the next user "another operation is in progress", or a connection someone else
    still uses), no response left unread (``core.unread``: rows, further results, a
    server-side cursor), no ``pipeline()`` block open and no pipelined response unread
    (the next user would get them, and a session change not reported yet).  A
    connection whose state cannot be read (closed underneath) is not idle.  The core's
    and the stream's part is one C call (``_core._pool_idle``: core.open, core.unread,
    core.pipe_pending, the stream's _state; False for a core or stream that is None)."""
    if conn._worker.busy:
        return False
    try:
        engine = conn._sync_obj
        return not (engine._closed or engine._pipeline is not None) and \
            _pool_idle(engine._conn, engine._proto)
    except Exception:
        return False


def _close_quietly(conn):
    try:
        if not conn.closed:
            conn.close()
    except Exception:
        pass


async def _quit(conn):
    """Graceful close (COM_QUIT), bounded; closes at once when that fails."""
    try:
        if not conn.closed:
            await asyncio.wait_for(conn.ensure_closed(), QUIT_TIMEOUT)
    except Exception:
        pass
    finally:
        _close_quietly(conn)
