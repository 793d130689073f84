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
import os
import socket
import sys

if sys.argv[1:2] == ["--echo"]:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 39111))
    srv.listen()
    while True:
        c, _ = srv.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if os.fork() == 0:
            while True:
                d = c.recv(65536)
                if not d:
                    os._exit(0)
                c.sendall(d)
        c.close()

import asyncio  # noqa: E402
N = int(sys.argv[1]); mode = sys.argv[2]
class P(asyncio.BufferedProtocol):
    def __init__(self):
        self.buf = bytearray(65536); self.fut = None
    def connection_made(self, t): self.t = t
    def get_buffer(self, n): return self.buf
    def buffer_updated(self, n):
        f = self.fut
        if f is not None and not f.done(): f.set_result(n)
async def main():
    loop = asyncio.get_running_loop()
    if mode == "proto":
        t, p = await loop.create_connection(P, "127.0.0.1", 39111)
        t.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        async def one():
            p.fut = loop.create_future(); t.write(b"\x01\x00\x00\x00\x0e"); await p.fut
    else:
        r, w = await asyncio.open_connection("127.0.0.1", 39111)
        async def one():
            w.write(b"\x01\x00\x00\x00\x0e"); await r.read(65536)
    for _ in range(300): await one()
    for _ in range(N): await one()
if os.environ.get("LOOP") == "uvloop":
    import uvloop; uvloop.install()
asyncio.run(main())
