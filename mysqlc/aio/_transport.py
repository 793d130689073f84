"""The asyncio transport under the C engine (``connect(transport=...)`` of the core).

:class:`StreamProtocol` is an :class:`asyncio.BufferedProtocol` whose per-statement half is
C (``_core.AioStream``, src/aio_stream.c): asyncio receives straight into the engine's
receive space (a memoryview of the C buffer, no copy per chunk) and the bytes are given to
the engine and the waiting future settled without a Python frame; the engine's writes go
to ``transport.write`` from C as well.  TLS records and compressed frames are decoded by
the engine itself, so TLS here is the same OpenSSL code, options and verification as the
blocking socket (docs/architecture.md, "TLS inside the engine"), or with
``ssl=ssl.SSLContext`` the same session of the context's (src/tls_py.c): this stream
carries ciphertext either way.  On the greenlet path the engine calls :meth:`wait` when it
needs bytes, and a write that must wait for the peer (:meth:`_write_wait`); both switch out
of the connection's greenlet with a future the runner awaits (:mod:`mysqlc.aio._runner`).
Status codes are those of ``src/transport_py.c``: 0 done, 1 timed out, 2 end of stream, 3
error (``errno``).
"""

from __future__ import annotations

import asyncio
import errno as _errno
import os
import socket
from typing import Any, Optional

from .. import _core

try:   # asyncio's selector loop and socket transport (the C reader of attach())
    from asyncio.selector_events import BaseSelectorEventLoop as _BaseSelectorEventLoop
    from asyncio.selector_events import _SelectorSocketTransport
except ImportError:   # pragma: no cover - an asyncio without them
    _BaseSelectorEventLoop = None   # type: ignore[assignment,misc]
    _SelectorSocketTransport = None   # type: ignore[assignment,misc]
from ..errors import OperationalError
from ._runner import await_only

_DONE, _TIMEOUT, _EOF, _ERROR = 0, 1, 2, 3

#: (the C half's AIO_HIGH_WATER, src/aio_stream.c) bytes received while the engine did not ask for any (an unbuffered result it reads
#: row by row) after which reading pauses until its next wait(): the kernel's socket
#: buffers then hold the server back, as with the blocking transport
HIGH_WATER = 1 << 20


def _settle(fut: "asyncio.Future[int]", status: int) -> None:
    if not fut.done():
        fut.set_result(status)


class StreamProtocol(_core.AioStream, asyncio.BufferedProtocol):
    """One server connection's byte stream.

    The per-statement methods are the C base's (``_core.AioStream``, src/aio_stream.c):
    ``get_buffer`` (the engine's receive space), ``buffer_updated`` (the bytes given to the
    engine, the waiting future settled, reading held at :data:`HIGH_WATER`),
    ``wait_future`` and the engine's writes.  This class keeps what runs once per
    connection or on a rare path.

    Attributes
    ----------
    core : mysqlc._core.Connection or None
        The engine receiving the bytes; None until the core attached it (bytes that
        arrive before are kept and given to the engine at its first :meth:`wait`).
    errno : int
        The errno of the error that ended the stream (status 3).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.core = None
        self.transport = None
        self.errno = 0
        self._state = _DONE          # _EOF / _ERROR once the stream ended
        self._waiter = None          # the future a wait awaits
        self._drain = None           # the future a blocked write awaits
        self._paused = False         # asyncio asked us to stop writing (pause_writing)
        self._unasked = 0            # bytes received since the engine last waited
        self._exc = None             # what the engine raised receiving
        self._held = False           # reading paused at HIGH_WATER
        self._writing = False        # a write waits for the drain (bytes go to the stash)
        self._early = bytearray()    # bytes received before the core attached
        self._scratch = bytearray(4096)
        # asyncio's own loops make a future as asyncio.Future(loop=loop): the C half then
        # calls that directly; another loop's create_future() is called as it is
        if getattr(type(loop), "create_future", None) is asyncio.BaseEventLoop.create_future:
            self._future_class = asyncio.Future
        else:
            self._future_class = None

    # ---------------------------------------------------------------- asyncio side

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self._twrite = transport.write   # type: ignore[attr-defined]
        sock = transport.get_extra_info("socket")
        self._fd = sock.fileno() if sock is not None else -1

    def attach(self, core: Any) -> None:
        """Give the received bytes to `core` from now on.

        On asyncio's own selector loops the socket's reader becomes the C half's
        ``_on_readable`` (one ``recv()`` into the engine per wake-up, without the
        transport's Python read path); the transport keeps writing and closing.  Other
        loops (uvloop, whose transport reads in C already) keep the protocol's
        ``get_buffer`` / ``buffer_updated``."""
        self.core = core
        t = self.transport
        loop = self.loop
        if (_SelectorSocketTransport is not None and type(t) is _SelectorSocketTransport
                and isinstance(loop, _BaseSelectorEventLoop) and self._fd >= 0
                and not self._state and t.is_reading()):
            t.pause_reading()
            # the private form: the public add_reader() refuses a descriptor a transport
            # owns.  The transport's close() / abort() removes this reader with its own
            loop._add_reader(self._fd, self._on_readable)
            self._reader = True

    def _pause_reading(self) -> None:
        """Stop reading (the C half, at HIGH_WATER): the kernel's buffers hold the server."""
        if self._reader:
            self.loop._remove_reader(self._fd)   # type: ignore[attr-defined]
        elif self.transport is not None:
            self.transport.pause_reading()

    def unhold(self) -> None:
        """Read again if reading was held at HIGH_WATER (the C half's ``_held``), and
        count the bytes not asked for from zero: before a wait, and when the connection
        goes idle with reading held (the last bytes of its response came before a wait
        was needed): an idle stream reads, so that the server's end of the connection is
        seen (mysqlc.aio.pool's idle check)."""
        self._unasked = 0
        if self._held:
            self._held = False
            self._resume_reading()

    def _resume_reading(self) -> None:
        if self._reader:
            if not self._state:
                self.loop._add_reader(self._fd, self._on_readable)   # type: ignore[attr-defined]
        elif self.transport is not None:
            self.transport.resume_reading()

    def _read_failed(self, err: int) -> None:
        """The C reader's recv() saw the end of the stream (`err` 0) or failed (errno):
        what the transport's eof_received / connection_lost would report."""
        t = self.transport
        if err:
            self._end(_ERROR, err)
            if t is not None:
                t.abort()
        else:
            self._end(_EOF, 0)
            if t is not None:
                t.close()

    def _received_error(self, exc: BaseException) -> None:
        """The engine raised on received bytes (a TLS or inflate error: it closed itself):
        kept for its next wait, which raises it."""
        self._exc = exc
        self._end(_ERROR, getattr(exc, "errno", None) or _errno.EPROTO)

    def eof_received(self) -> bool:
        self._end(_EOF, 0)
        return False

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        if exc is None:
            self._end(_EOF, 0)
        else:
            self._end(_ERROR, getattr(exc, "errno", None) or _errno.ECONNRESET)
        self.transport = None
        self._twrite = None

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        drain = self._drain
        if drain is not None:
            _settle(drain, _DONE)

    def _end(self, state: int, err: int) -> None:
        if self._reader:
            self._reader = False
            self.loop._remove_reader(self._fd)   # type: ignore[attr-defined]
        if not self._state:
            self._state = state
            self.errno = err
        for fut in (self._waiter, self._drain):
            if fut is not None:
                _settle(fut, self._state)

    # ---------------------------------------------------------------- engine side

    def fileno(self) -> int:
        """The socket's descriptor as it was when the stream opened (kept: a peer that
        closes at once must still reach the engine as "lost", not as no stream)."""
        return self._fd

    #: the next wait() reports the read timeout at once: the engine-driven statement
    #: (mysqlc.aio._statement) waited the timeout already and hands over to the engine
    _expire_next_wait = False

    def wait(self, timeout: float) -> int:
        """Called by the engine (inside the connection's greenlet) when it needs bytes:
        returns once some were given to it (0), or 1 after `timeout` seconds (< 0: no
        limit), 2 at the end of the stream, 3 on an error."""
        if self._expire_next_wait:
            self._expire_next_wait = False
            return _TIMEOUT
        if self._early:
            self._feed_early()
            return _DONE
        if self._state:
            return self._raise_or(self._state)
        self.unhold()
        if timeout < 0:   # the common case, inline: no timer
            fut = self._waiter = self.loop.create_future()
            try:
                return self._raise_or(await_only(fut))
            finally:
                self._waiter = None
        return self._await_status("_waiter", timeout)

    def _await_status(self, slot: str, timeout: float) -> int:
        """Switch out of the greenlet until the future kept in `slot` is settled with
        a status (or `timeout` seconds passed: 1)."""
        fut = self.loop.create_future()
        setattr(self, slot, fut)
        timer = self.loop.call_later(timeout, _settle, fut, _TIMEOUT) if timeout >= 0 else None
        try:
            return self._raise_or(await_only(fut))
        finally:
            setattr(self, slot, None)
            if timer is not None:
                timer.cancel()

    def _raise_or(self, status: int) -> int:
        """`status`, or the exception the engine raised on received bytes (2027 for a
        malformed compressed frame, a TLS error...) once: the caller sees the engine's
        error, not a lost connection."""
        exc = self._exc
        if exc is not None:
            self._exc = None
            raise exc
        return status

    def _write_wait(self, timeout: float) -> int:
        """The engine's write (src/aio_stream.c) handed its bytes to asyncio, whose buffer
        is above the high-water mark: 0 once it drained below it, 1 when that did not
        happen within `timeout` seconds, 3 when the stream is gone."""
        # reading goes on while the write waits: the engine keeps what arrives aside
        # (its stash, src/transport_py.c) and takes it once the write is done.  A server
        # blocked writing the answers of commands in flight reads no more of ours until
        # they are read (docs/architecture.md "Commands in flight")
        t = self.transport
        if t is None or self._state:
            self.errno = self.errno or _errno.EPIPE
            return _ERROR
        self._writing = True
        if self._held:
            self._held = False
            self._resume_reading()
        try:
            return self._await_status("_drain", timeout)
        finally:
            self._writing = False
            self._unasked = 0

    def close(self) -> None:
        """End the stream at once (what the engine calls when it closes)."""
        t = self.transport
        self._end(_EOF, 0)
        if t is not None and self.loop.is_closed():
            # after the loop ended (a connection dropped after asyncio.run returned): the
            # transport can no longer close itself, so end the socket here
            sock = t.get_extra_info("socket")
            raw = getattr(sock, "_sock", None)   # asyncio's TransportSocket wraps it
            try:
                if sock is not None:
                    sock.shutdown(socket.SHUT_RDWR)
                if raw is not None:
                    raw.close()
            except OSError:
                pass
        elif t is not None:
            if t.get_write_buffer_size() > 64:
                t.abort()    # a peer that does not read: do not keep the socket for it
            else:
                t.close()    # COM_QUIT, if written, is flushed first

    def _feed_early(self) -> None:
        data, self._early = self._early, bytearray()
        core = self.core
        while data:
            view = core._transport_buffer(len(data))
            n = min(len(view), len(data))
            view[:n] = data[:n]
            del view
            core._transport_received(n)
            del data[:n]


async def open_stream(loop: asyncio.AbstractEventLoop, host: Optional[str], port: int,
                      unix_socket: Optional[str], timeout: Optional[float]) -> StreamProtocol:
    """Open the TCP or unix-socket stream of a connection; raises OperationalError with
    the blocking transport's numbers and texts (2002 socket, 2003 host, 2005 name)."""
    proto = StreamProtocol(loop)
    try:
        if unix_socket is not None:
            coro = loop.create_unix_connection(lambda: proto, unix_socket)
        else:
            coro = loop.create_connection(lambda: proto, host, port)
        if timeout is not None:
            await asyncio.wait_for(coro, timeout)
        else:
            await coro
    except asyncio.TimeoutError:
        if unix_socket is not None:
            raise OperationalError(2002, "Can't connect to local server through socket "
                                   "'%s' (timed out after %g s)" % (unix_socket, timeout)) from None
        raise OperationalError(2003, "Can't connect to server on '%s:%d' (timed out after "
                               "%g s)" % (host, port, timeout)) from None
    except socket.gaierror as exc:
        raise OperationalError(2005, "Unknown server host '%s' (%s)"
                               % (host, exc.strerror)) from None
    except OSError as exc:
        err = exc.errno or 0
        text = os.strerror(err) if err else str(exc)   # asyncio's strerror names the call
        if unix_socket is not None:
            raise OperationalError(2002, "Can't connect to local server through socket "
                                   "'%s' (%d: %s)" % (unix_socket, err, text)) from None
        raise OperationalError(2003, "Can't connect to server on '%s:%d' (%d: %s)"
                               % (host, port, err, text)) from None
    sock = proto.transport.get_extra_info("socket") if proto.transport else None
    if sock is not None and unix_socket is None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
    return proto
