#!/usr/bin/env python3
"""The event loop's own floor for one request/response (issue 22): a pure-Python
``asyncio.BufferedProtocol`` (mode ``proto``) or ``asyncio.open_connection`` streams
(mode ``stream``, asyncmy's model) writing 5 bytes to a TCP echo process and awaiting the
answer through one future.  Count it as bench_instructions.py counts a driver:

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


async def main(n, mode):
    loop = asyncio.get_running_loop()
    if mode == "proto":
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
