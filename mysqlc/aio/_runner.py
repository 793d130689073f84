"""How the asyncio API runs the driver's one implementation.

Every operation of :mod:`mysqlc.aio` runs the synchronous code of
:mod:`mysqlc.connections` / :mod:`mysqlc.cursors` / :mod:`mysqlc.columnar` /
:mod:`mysqlc.bulk` -- the same query formatting, result state, conversions, error
mapping and option handling as :func:`mysqlc.connect` -- inside one greenlet per
connection (:class:`Worker`).  Where the blocking transport would wait in ``poll()``, the
asyncio transport (:mod:`mysqlc.aio._transport`) calls :func:`await_only` with a future;
that switches out of the greenlet back to :meth:`Worker.run`, the coroutine the caller
awaits, which awaits the future and switches back in with its result.  This is the model
SQLAlchemy's asyncio layer uses (``sqlalchemy.util.concurrency``), with the C engine in
the place of SQLAlchemy's sync core; the greenlet is made once per connection (a switch
costs about 0.3 us, creating one about 8 us).

Context variables: each :meth:`Worker.run` makes the greenlet run in the awaiting
task's current :class:`contextvars.Context` (greenlet's ``gr_context``; the very
context, not a copy), so driver callbacks -- converters, LOAD DATA LOCAL iterables,
Python authentication plugins -- see the task's ContextVars, and a ``ContextVar.set()``
in one is visible to the task after the await, as with a sync call.  (A greenlet
otherwise starts in an empty context of its own.)

Cancellation (``task.cancel()``, ``asyncio.timeout()``) reaches only :meth:`Worker.run`:
the driver code in the greenlet never sees it.  The runner then stops the server's
statement (``KILL QUERY`` over a short side connection, the sync API's
``Connection._kill_query_side``), keeps driving the greenlet until the command's response
has been read to its end and any unread result drained, and only then raises
:class:`asyncio.CancelledError`; when that does not end within :data:`CANCEL_BUDGET`
seconds, the connection is closed.  So a connection is never left out of sync.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional

import greenlet

from ..errors import InterfaceError, OperationalError, ProgrammingError

#: seconds a cancelled command may take to stop and drain before the connection is closed
CANCEL_BUDGET = 5.0

_getcurrent = greenlet.getcurrent


class _Undrainable:
    """What the greenlet switches out with when a cancellation must not wait for its
    awaitable to finish (opening the socket, the KILL of a read timeout); other waits
    switch out with the awaitable itself, and a finished call with its (ok, value)
    tuple."""

    __slots__ = ("awaitable",)

    def __init__(self, awaitable: Any) -> None:
        self.awaitable = awaitable


def _awaitable(msg: Any) -> Any:
    return msg.awaitable if type(msg) is _Undrainable else msg


def await_only(awaitable: Any, drainable: bool = True) -> Any:
    """Await `awaitable` from synchronous driver code running in a :class:`Worker`
    greenlet; returns its result or raises its exception.  `drainable`: a cancellation
    arriving meanwhile may be handled by letting the command finish (False: the wait is
    abandoned, e.g. opening the socket).  Outside a worker: InterfaceError."""
    current = _getcurrent()
    if type(current) is not _WorkerGreenlet:
        raise InterfaceError(0, "a mysqlc.aio connection was used outside its event loop "
                             "task (call it with await)")
    return current.parent.switch(awaitable if drainable else _Undrainable(awaitable))


class _WorkerGreenlet(greenlet.greenlet):
    pass


def _serve(call: tuple) -> None:
    """The greenlet's body: run calls until the greenlet is dropped.

    A call's outcome goes out as a list ``[ok, value]`` that the receiver empties
    (:func:`_outcome`): the greenlet stays suspended in the switch until its next call,
    and a suspended greenlet's frames are not collected, so a value it still referenced
    there -- an exception, whose traceback holds the stream, the engine and the awaiting
    task's frames -- would live as long as the connection's greenlet."""
    parent_switch = None
    while True:
        fn, args, kwargs = call
        del call
        try:
            out = [True, fn(*args, **kwargs)]
        except greenlet.GreenletExit:
            raise
        except BaseException as exc:   # handed to the awaiting coroutine as it is
            out = [False, exc]
        del fn, args, kwargs
        parent_switch = _getcurrent().parent.switch
        call = parent_switch(out)


def _outcome(msg: list) -> tuple:
    """``(ok, value)`` of a call's outcome message, emptied (see :func:`_serve`)."""
    ok, value = msg
    msg.clear()
    return ok, value


class Worker:
    """The greenlet of one connection and the coroutine that drives it.

    ``await worker.run(fn, *args)`` runs ``fn(*args)`` in the greenlet; calls do not
    overlap (a second one while the first is pending raises ProgrammingError, as
    aiomysql's "another operation is in progress").  `on_cancel` (set by the
    connection) is the coroutine function called with the pending request after a
    cancellation; see the module docstring.
    """

    __slots__ = ("_g", "busy", "on_cancel", "owner", "loop", "__weakref__")

    def __init__(self) -> None:
        self._g = _WorkerGreenlet(_serve)
        self.busy = False
        # the loop the connection's stream belongs to (set by the first run())
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.on_cancel: Optional[Callable[..., Any]] = None
        self.owner: Any = None   # the sync connection the greenlet runs

    async def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.busy:
            raise ProgrammingError(0, "another operation is in progress on this "
                                   "connection (one await at a time per connection)")
        loop = asyncio.get_running_loop()
        if self.loop is None:
            self.loop = loop
        elif loop is not self.loop:
            # its transport and futures are the other loop's (asyncio would raise
            # "attached to a different loop" from inside the engine, greenlet "cannot
            # switch to a different thread"); the connection is left as it is
            raise InterfaceError(0, "this mysqlc.aio connection belongs to another event "
                                 "loop (%s); use it only in the loop that opened it"
                                 % ("closed" if self.loop.is_closed() else "still running"))
        self.busy = True
        try:
            g = self._g
            current = _getcurrent()
            g.parent = current
            # the driver's callbacks (converters, LOCAL INFILE iterables, auth plugins)
            # run in the awaiting task's own context, as a sync call runs them in its
            # caller's: its ContextVars are seen, and set() inside is seen after
            g.gr_context = current.gr_context
            msg = g.switch((fn, args, kwargs))
            while type(msg) is not list:   # a wait: its awaitable is awaited here
                try:
                    value = await (msg.awaitable if type(msg) is _Undrainable else msg)
                except asyncio.CancelledError:
                    if self.on_cancel is not None:
                        try:
                            await self.on_cancel(self, msg)
                        except BaseException:   # noqa: BLE001 - the cancellation is raised
                            pass
                    # an error the interrupted fetch kept for the cursor's next call (the
                    # KILL QUERY's 1317 after some rows: mysqlc.cursors.SSCursor._defer)
                    # is the cancellation's own: not raised later
                    take = getattr(getattr(fn, "__self__", None), "_take_deferred", None)
                    if take is not None:
                        take()
                    raise
                except BaseException as exc:   # the awaitable failed: raise it in there
                    msg = g.throw(exc)
                    continue
                msg = g.switch(value)
            ok, value = _outcome(msg)
            if ok:
                return value
            raise value
        finally:
            self.busy = False

    # ------------------------------------------------------------ used by on_cancel

    def resume(self, value: Any) -> Any:
        """Switch back in with `value`; returns the next message (a wait or the
        (ok, value) result)."""
        g = self._g
        g.parent = _getcurrent()
        return g.switch(value)

    def resume_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Start another call in the (idle) greenlet; returns its first message."""
        return self.resume((fn, args, {}))

    def throw(self, exc: BaseException) -> Any:
        g = self._g
        g.parent = _getcurrent()
        return g.throw(exc)

    async def finish(self, msg: Any, deadline: float, abort: Callable[[], None]) -> bool:
        """Drive the greenlet until its call returns, awaiting its requests until
        `deadline` (loop time); further cancellations are absorbed.  Past the deadline
        `abort()` ends the stream and the call is unwound with OperationalError.
        True when the call ended by itself."""
        loop = asyncio.get_running_loop()
        while type(msg) is not list:
            left = deadline - loop.time()
            if left <= 0 or type(msg) is _Undrainable:
                abort()
                msg = self.throw(OperationalError(
                    2013, "Lost connection to server during query (the cancelled "
                    "command did not end in time: the connection was closed)"))
                deadline = float("inf")   # unwinding needs no more waits
                continue
            fut = asyncio.ensure_future(_awaitable(msg))
            if fut.cancelled():
                # the wait the cancellation interrupted: resumed as a spurious wake-up
                # (the transport waits again when its bytes are not there yet)
                msg = self.resume(0)
                continue
            try:
                done, _ = await asyncio.wait({fut}, timeout=left)
            except asyncio.CancelledError:   # cancelled again: keep draining
                continue
            if not done:
                continue   # the deadline passed: abort on the next turn
            try:
                value = fut.result()
            except BaseException as exc:
                msg = self.throw(exc)
                continue
            msg = self.resume(value)
        return _outcome(msg)[0]
