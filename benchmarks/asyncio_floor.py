#!/usr/bin/env python3
"""The event loop's own floor for one request/response (issue 22): a pure-Python
``asyncio.BufferedProtocol`` (mode ``proto``) or ``asyncio.open_connection`` streams
(mode ``stream``, asyncmy's model) writing 5 bytes to a TCP echo process and awaiting the
answer through one future.  Two more modes show what mysqlc.aio's C stream
(src/aio_stream.c) builds on, here in Python: ``reader`` -- the socket read by a reader
callback of the loop's own (``loop.add_reader``) and written with ``socket.send``, no
transport; ``reader-now`` -- the same, with a minimal future whose completion by the
reader runs the task's wake-up at once (one loop iteration per round trip, not two).
Count it as bench_instructions.py counts a driver:

    python3 benchmarks/asyncio_floor.py --echo &          # the echo peer, port 39111
    valgrind --tool=callgrind python benchmarks/asyncio_floor.py 1000 proto
    valgrind --tool=callgrind python benchmarks/asyncio_floor.py 3000 proto
    # (I(3000) - I(1000)) / 2000; LOOP=uvloop for uvloop
"""
import asyncio
import os
import socket
import sys

PORT = 39111
REQUEST = b"\x01\x00\x00\x00\x0e"   # the size of a COM_PING packet


def echo():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", PORT))
    srv.listen()
    while True:
        c, _ = srv.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if os.fork() == 0:
            while True:
                data = c.recv(65536)
                if not data:
                    os._exit(0)
                c.sendall(data)
        c.close()


class Proto(asyncio.BufferedProtocol):
    def __init__(self):
        self.buf = bytearray(65536)
        self.fut = None

    def get_buffer(self, sizehint):
        return self.buf

    def buffer_updated(self, nbytes):
        fut = self.fut
        if fut is not None and not fut.done():
            fut.set_result(nbytes)


class NowFuture:
    """Just what an asyncio Task needs of a future it awaits; finish() runs the done
    callbacks at once, each in its context (asyncio.Future would call_soon them)."""

    def __init__(self, loop):
        self._loop = loop
        self._callbacks = []
        self._done = False
        self._result = None
        self._asyncio_future_blocking = False

    def get_loop(self):
        return self._loop

    def add_done_callback(self, fn, *, context=None):
        self._callbacks.append((fn, context))

    def remove_done_callback(self, fn):
        return 0

    def done(self):
        return self._done

    def cancelled(self):
        return False

    def cancel(self, msg=None):
        return False

    def result(self):
        return self._result

    def finish(self, value):
        self._done = True
        self._result = value
        for fn, context in self._callbacks:
            if context is None:
                fn(self)
            else:
                context.run(fn, self)

    def __await__(self):
        self._asyncio_future_blocking = True
        yield self
        return self._result


async def main(n, mode):
    loop = asyncio.get_running_loop()
    if mode in ("reader", "reader-now"):
        sock = socket.create_connection(("127.0.0.1", PORT))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        buf = bytearray(65536)
        waiting = [None]

        def readable():
            got = sock.recv_into(buf)
            fut, waiting[0] = waiting[0], None
            if fut is None:
                return
            if mode == "reader-now":
                fut.finish(got)
            else:
                fut.set_result(got)
        loop.add_reader(sock.fileno(), readable)

        async def one():
            fut = NowFuture(loop) if mode == "reader-now" else loop.create_future()
            waiting[0] = fut
            sock.send(REQUEST)
            await fut
    elif mode == "proto":
        t, p = await loop.create_connection(Proto, "127.0.0.1", PORT)
        t.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        async def one():
            p.fut = loop.create_future()
            t.write(REQUEST)
            await p.fut
    else:
        r, w = await asyncio.open_connection("127.0.0.1", PORT)

        async def one():
            w.write(REQUEST)
            await r.read(65536)
    for _ in range(300):        # warm-up, as bench_instructions.py
        await one()
    for _ in range(n):
        await one()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--echo"]:
        echo()
    else:
        if os.environ.get("LOOP") == "uvloop":
            import uvloop
            uvloop.install()
        asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
