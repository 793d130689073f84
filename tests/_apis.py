"""Run the server tests against both APIs: ``mysqlc.connect`` and ``mysqlc.aio``.

A module opts in with ``pytestmark = pytest.mark.both_apis``: each of its tests then
runs twice, as ``test_x[sync]`` and ``test_x[aio]`` (conftest.py's ``api`` fixture).  In
the aio run ``mysqlc.connect`` (and ``mysqlc.read_sql``) are replaced, for the duration
of the test, by :func:`connect`, which opens a :mod:`mysqlc.aio` connection on a private
event loop and hands back a synchronous test proxy, :class:`AioConnection`: every call
is made on the asyncio object, on its loop, and awaited there when it returns an
awaitable; ``for row in cur`` becomes ``async for``, ``with`` becomes ``async with``, the
cursors and batch readers it returns are proxied the same way.  So an unchanged test
body drives the greenlet runner and the asyncio transport end to end.

Each proxied connection's loop runs in a thread of its own (the caller waits for each
call's result): a connection may then be used from any test thread, as killer and
watcher threads do, and two threads using it at once meet mysqlc.aio's own "one await
at a time" ProgrammingError, as two tasks of one program would; ``close()`` from another
thread is a close while an await is pending.

What the proxy does not hide, on purpose:

- a public name the aio object lacks raises AttributeError (a gap in mysqlc.aio, not a
  proxy matter); private names (``conn._conn``, ``cur._rows``) are the sync object's,
  so tests that look at the engine's state still can -- methods among them, and those
  of the C core object, run in the connection's greenlet;
- the objects are proxies, not instances of the sync classes (:func:`sync_obj` gives
  the sync object behind one, for tests that check the class chosen);
- a call made from inside the connection's own loop (a converter re-entering its
  connection) cannot block: it runs one step, enough for mysqlc.aio's busy check.

Tests that are about the sync API alone (threads, signals, ``fileno``/poll, the
MySQLdb/PyMySQL flavours, the sync classes) or use no connection carry
``@pytest.mark.sync_only(reason)`` and run once; an aio run that opens no aio connection
fails, so none is left unmarked.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import os
import threading
import weakref
from typing import Any, Iterator, List

import mysqlc

try:   # mysqlc.aio needs greenlet (the aio extra): without it only the sync runs exist
    import mysqlc.aio
    import mysqlc.aio.cursors
    HAVE_AIO = True
except ImportError:   # an installed-package run without the extra (tools/installed-tests.sh)
    HAVE_AIO = False

API_NAMES = ("sync", "aio")

_REAL_CONNECT = mysqlc.connect
_REAL_READ_SQL = mysqlc.read_sql


#: seconds any one proxied call may take before the proxy gives up on it (a hang in
#: mysqlc.aio becomes a failure of the test, not of the whole run)
CALL_LIMIT = 120.0


class _Session:
    """The proxies opened during one aio test: closed (and their loops stopped) at its
    end, whatever the test did with them."""

    def __init__(self) -> None:
        self.proxies: "weakref.WeakSet[AioConnection]" = weakref.WeakSet()
        self.opened = 0   # connections tried through the proxy (failed ones too)

    def close(self) -> None:
        for p in list(self.proxies):
            p._shutdown()
        self.proxies.clear()


_current: List[_Session] = []


def _loop_main(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        try:
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


class _LoopThread:
    """A private event loop running in a thread of its own: one per proxied connection,
    so the connection may be called from any test thread (a killer or watcher thread
    included) and two threads using it at once meet mysqlc.aio's own "one await at a
    time" check, as two tasks of one program would."""

    __slots__ = ("loop", "thread", "ident")

    def __init__(self) -> None:
        self.loop = _new_loop()
        self.thread = threading.Thread(target=_loop_main, args=(self.loop,),
                                       name="aio-test-loop", daemon=True)
        self.thread.start()
        self.ident = self.thread.ident

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` on the loop, awaited when it returns an awaitable."""
        if threading.get_ident() == self.ident:
            return _step(fn(*args, **kwargs))

        async def run() -> Any:
            value = fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
            return value
        fut = asyncio.run_coroutine_threadsafe(run(), self.loop)
        try:
            return fut.result(CALL_LIMIT)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise RuntimeError("aio test proxy: %r did not return within %g s"
                               % (fn, CALL_LIMIT)) from None

    def stop(self, join: float = 10.0) -> None:
        if not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self.loop.stop)
            except RuntimeError:   # closed meanwhile
                pass
        if join and threading.get_ident() != self.ident:
            self.thread.join(join)


def _step(value: Any) -> Any:
    """A call made on the loop's own thread -- from inside the connection's greenlet (a
    converter re-entering the connection) or a loop callback: it cannot block, so an
    awaitable is run one step: mysqlc.aio raises there what it raises for a busy
    connection; one that would have to wait is refused."""
    if not inspect.isawaitable(value):
        return value
    coro = value if inspect.iscoroutine(value) else value.__await__()
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("aio test proxy: a blocking call made from inside the "
                       "connection's event loop")


async def _settle() -> None:
    # a closed transport closes its socket in a callback of the next loop turns:
    # without them a "closed" connection would linger until the loop ran again
    for _ in range(3):
        await asyncio.sleep(0)


class _Proxy:
    """Common to the connection and cursor proxies: calls and attributes forwarded to
    the aio object ``_a`` on the connection's loop; awaitables are awaited there."""

    __slots__ = ("_a", "_owner", "__weakref__")

    def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self._wrap(self._owner._lt.call(fn, *args, **kwargs))

    def _wrap(self, value: Any) -> Any:
        if isinstance(value, mysqlc.aio.Connection):
            return AioConnection._for(value)
        if isinstance(value, mysqlc.aio.cursors.BaseCursor):
            return AioCursor._for(value, self._owner)
        if isinstance(value, mysqlc.aio.connection.Pipeline):
            return _PipelineProxy._for(value, self._owner)
        if isinstance(value, mysqlc.aio.cursors._RecordBatches):
            return _BatchesProxy(value, self._owner)
        if hasattr(value, "__anext__"):
            return _AsyncIterProxy(value, self._owner)
        return value

    def _call(self, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return self._run(fn, *args, **kwargs)
        call.__name__ = getattr(fn, "__name__", "call")
        call.__doc__ = getattr(fn, "__doc__", None)
        return call

    def _private(self, name: str) -> Any:
        # engine internals: the sync object's; its methods, and those of the C core
        # (``conn._conn.fetch(...)``), run in the connection's greenlet
        return _in_greenlet(getattr(self._a.sync, name), self._owner)

    def __getattr__(self, name: str) -> Any:
        a = object.__getattribute__(self, "_a")
        try:
            value = getattr(a, name)
        except AttributeError:
            if name.startswith("_") and not name.startswith("__"):
                return self._private(name)
            raise AttributeError("%s has no attribute %r (a gap in the asyncio API, or "
                                 "a sync-only test)" % (type(a).__qualname__, name)) from None
        if callable(value) and not isinstance(value, type):
            return self._call(value)
        return self._wrap(value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") and not hasattr(type(self._a), name):
            setattr(self._a.sync, name, value)
        else:
            setattr(self._a, name, value)

    def __enter__(self) -> Any:
        got = self._owner._lt.call(self._a.__aenter__)
        return self if got is self._a else self._wrap(got)

    def __exit__(self, *exc: Any) -> None:
        async def leave() -> None:
            await self._a.__aexit__(*exc)
            await _settle()
        self._run(leave)

    def __repr__(self) -> str:
        return "<aio test proxy of %r>" % (self._a,)


def _in_greenlet(value: Any, owner: "AioConnection") -> Any:
    if inspect.ismethod(value) or inspect.isbuiltin(value):
        worker = owner._a._worker

        def in_greenlet(*args: Any, **kwargs: Any) -> Any:
            return owner._run(worker.run, value, *args, **kwargs)
        return in_greenlet
    if type(value).__module__ == "mysqlc._core":
        return _CoreProxy(value, owner)
    return value


class _CoreProxy:
    """A C core object of a proxied connection (``conn._conn``): attributes as they are,
    method calls made in the connection's greenlet (where the engine's waits are
    awaits)."""

    __slots__ = ("_obj", "_owner")

    def __init__(self, obj: Any, owner: "AioConnection") -> None:
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_owner", owner)

    def __getattr__(self, name: str) -> Any:
        return _in_greenlet(getattr(self._obj, name), self._owner)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._obj, name, value)


class AioConnection(_Proxy):
    """A :class:`mysqlc.aio.Connection` used synchronously (see the module docstring)."""

    __slots__ = ("_lt", "_fin")

    # (weak values: a proxy must not keep its connection alive)
    _by_aio: "weakref.WeakValueDictionary[Any, AioConnection]" = weakref.WeakValueDictionary()

    def __init__(self, aconn: Any, lt: _LoopThread) -> None:
        object.__setattr__(self, "_a", aconn)
        object.__setattr__(self, "_owner", self)
        object.__setattr__(self, "_lt", lt)
        # dropped without close(): the aio connection's own __del__ closes it; the
        # loop's thread is stopped then (running the callbacks that close the socket)
        object.__setattr__(self, "_fin", weakref.finalize(self, lt.stop, 0))
        AioConnection._by_aio[aconn] = self

    @classmethod
    def _for(cls, aconn: Any) -> "AioConnection":
        proxy = cls._by_aio.get(aconn)
        if proxy is None:
            raise RuntimeError("aio test proxy: %r was not opened through the proxy" % aconn)
        return proxy

    @property
    def aio(self) -> Any:
        """The :class:`mysqlc.aio.Connection` itself."""
        return self._a

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._lt.loop

    def close(self) -> None:
        a = self._a

        async def close() -> None:
            a.close()
            await _settle()
        self._run(close)

    def _shutdown(self) -> None:
        lt = self._lt
        if lt.loop.is_closed():
            return
        try:
            self.close()
        except Exception:   # noqa: BLE001 - teardown of a test that broke it on purpose
            pass
        self._fin.detach()
        lt.stop()


class _PipelineProxy(_Proxy):
    """A :class:`mysqlc.aio.connection.Pipeline` used synchronously (``with``)."""

    __slots__ = ()

    @classmethod
    def _for(cls, ap: Any, owner: "AioConnection") -> "_PipelineProxy":
        proxy = cls.__new__(cls)
        object.__setattr__(proxy, "_a", ap)
        object.__setattr__(proxy, "_owner", owner)
        return proxy

    def __len__(self) -> int:
        return len(self._a)


class AioCursor(_Proxy):
    """A :mod:`mysqlc.aio.cursors` cursor used synchronously."""

    __slots__ = ()

    @classmethod
    def _for(cls, acur: Any, owner: AioConnection) -> "AioCursor":
        # a new proxy each time (a cache would keep the cursor alive: tests drop
        # cursors with unread rows on purpose)
        proxy = cls.__new__(cls)
        object.__setattr__(proxy, "_a", acur)
        object.__setattr__(proxy, "_owner", owner)
        return proxy

    @property
    def connection(self) -> AioConnection:
        return self._owner

    def __iter__(self) -> Iterator[Any]:
        return _AsyncIterProxy(self._a, self._owner)

    def __next__(self) -> Any:
        try:
            return self._run(self._a.__anext__)
        except StopAsyncIteration:
            raise StopIteration from None

    next = __next__


class _AsyncIterProxy:
    """``for x in it`` over an async iterator (``async for``)."""

    __slots__ = ("_it", "_owner")

    def __init__(self, it: Any, owner: AioConnection) -> None:
        self._it = it
        self._owner = owner

    def __iter__(self) -> "_AsyncIterProxy":
        return self

    def __next__(self) -> Any:
        try:
            return self._owner._run(self._it.__anext__)
        except StopAsyncIteration:
            raise StopIteration from None


class _BatchesProxy(_AsyncIterProxy):
    """``cur.fetch_record_batches(n)`` of a proxied cursor: ``async for batch in it``,
    with the sync reader's ``read_next_batch()`` (StopIteration at the end, as pyarrow),
    ``read_all()`` (the remaining batches, each read on the loop, as one Table) and
    ``schema``."""

    __slots__ = ()

    @property
    def schema(self) -> Any:
        return self._it._batches.schema

    def read_next_batch(self) -> Any:
        return self.__next__()

    def read_all(self) -> Any:
        import pyarrow as pa
        batches = list(self)
        return pa.Table.from_batches(batches, schema=self.schema)


def _new_loop() -> asyncio.AbstractEventLoop:
    """The harness's loops: asyncio's default, or uvloop's when the environment says
    ``MYSQLC_TEST_AIO_LOOP=uvloop``."""
    if os.environ.get("MYSQLC_TEST_AIO_LOOP", "").strip().lower() == "uvloop":
        import uvloop
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def connect(*args: Any, **kwargs: Any) -> AioConnection:
    """``mysqlc.connect(...)`` in the aio run: ``await mysqlc.aio.connect(...)`` on a
    private loop, returned as an :class:`AioConnection`.  Positional arguments are
    mapped to their keywords by ``mysqlc.connect``'s signature (the aio connect takes
    keywords only)."""
    if args:
        sig = inspect.signature(mysqlc.connections.Connection.__init__)
        bound = sig.bind(None, *args, **kwargs)
        kwargs = {k: v for k, v in bound.arguments.items() if k != "self"}
        extra = kwargs.pop("kwargs", None)
        if extra:
            kwargs.update(extra)
    if _current:
        _current[-1].opened += 1
    lt = _LoopThread()
    try:
        aconn = lt.call(mysqlc.aio.connect, **kwargs)
    except BaseException:
        lt.stop()
        raise
    proxy = AioConnection(aconn, lt)
    if _current:
        _current[-1].proxies.add(proxy)
    return proxy


def read_sql(source: Any, sql: str, *args: Any, **kwargs: Any) -> Any:
    """``mysqlc.read_sql`` in the aio run: ``await mysqlc.aio.read_sql(...)`` on the
    proxied connection's loop (a DSN: on a loop of its own)."""
    if _current:
        _current[-1].opened += 1
    if isinstance(source, AioConnection):
        return source._run(mysqlc.aio.read_sql, source._a, sql, *args, **kwargs)
    lt = _LoopThread()
    try:
        return lt.call(mysqlc.aio.read_sql, source, sql, *args, **kwargs)
    finally:
        lt.stop()


@contextlib.contextmanager
def aio_patched(monkeypatch: Any) -> Iterator[_Session]:
    """Within: ``mysqlc.connect`` / ``mysqlc.read_sql`` are the aio proxies'; at the end
    every proxy connection still open is closed and its loop closed."""
    session = _Session()
    _current.append(session)
    monkeypatch.setattr(mysqlc, "connect", connect)
    monkeypatch.setattr(mysqlc, "read_sql", read_sql)
    try:
        yield session
    finally:
        _current.remove(session)
        session.close()
    if not session.opened:
        import pytest
        pytest.fail("the aio run of this test opened no mysqlc.aio connection (it uses "
                    "the sync API some other way): mark it @pytest.mark.sync_only(reason)",
                    pytrace=False)


def is_aio(conn: Any) -> bool:
    """True for a proxied asyncio connection (or one of its cursors)."""
    return isinstance(conn, _Proxy)


def sync_obj(obj: Any) -> Any:
    """The sync connection or cursor behind `obj` (a proxy: the one its mysqlc.aio
    object drives), else `obj` itself -- for tests that check which class the API chose."""
    if isinstance(obj, _BatchesProxy):
        return obj._it._batches
    return obj._a.sync if isinstance(obj, _Proxy) else obj


def iterate(cur: Any, chunk: int = 256) -> Iterator[Any]:
    """``for row in iterate(cur)``: ``for row in cur``, except that a proxied cursor is
    read ``chunk`` rows per trip to its loop (``async for`` there) -- for the tests that
    stream a million rows, where one thread hop per row would be most of the time.
    Reads ahead: only for loops that consume the whole result."""
    if not isinstance(cur, AioCursor):
        yield from cur
        return
    acur = cur._a

    async def take() -> list:
        rows = []
        async for row in acur:
            rows.append(row)
            if len(rows) >= chunk:
                break
        return rows
    while True:
        rows = cur._owner._lt.call(take)
        if not rows:
            return
        yield from rows


def subprocess_spec(spec: dict, api: str) -> dict:
    """`spec` for a measuring child process, with what it needs to run on `api`: its
    script then does ``if spec["api"] == "aio": sys.path.insert(0, spec["tests"]);
    import _apis; mysqlc.connect = _apis.connect``.  Counts as this test's use of the
    aio API."""
    if api == "aio" and _current:
        _current[-1].opened += 1
    return dict(spec, api=api, tests=os.path.dirname(os.path.abspath(__file__)))
