"""A TCP proxy on loopback that delays each direction by a fixed one-way latency.

For measuring round trips: a client connects to the proxy's port instead of the
server's; every chunk read from one side is written to the other side `one_way`
seconds after it was read, in the order read (one queue and one writer thread per
direction, so a late chunk never overtakes an earlier one).  A round trip is then
2 * `one_way` plus the server's time.  The proxy also counts the round trips it saw:
a client chunk that arrives after server bytes went the other way since the client's
last chunk starts one (the handshake's exchanges count too).

Loopback only: it listens on 127.0.0.1 and forwards only to a loopback address.  It
stops after `lifetime` seconds (default 600) even if nobody closes it.

>>> with LatencyProxy(3306, one_way=0.0005) as proxy:     # doctest: +SKIP
...     conn = mysqlc.connect(host="127.0.0.1", port=proxy.port, ...)

Run by hand: ``python benchmarks/latency_proxy.py --target-port 3306 --one-way-ms 0.5``
prints the port it listens on, then serves until interrupted or its lifetime ends.
"""

from __future__ import annotations

import argparse
import collections
import ipaddress
import socket
import sys
import threading
import time

__all__ = ["LatencyProxy"]


class _Direction:
    """One direction of one proxied connection: a reader thread stamps each chunk with
    the time it may leave, a writer thread sends the chunks in order when due."""

    def __init__(self, proxy, src, dst, from_client, pair):
        self.proxy = proxy
        self.src, self.dst = src, dst
        self.from_client = from_client
        self.pair = pair
        self.queue = collections.deque()
        self.cond = threading.Condition()
        self.eof = False

    def start(self):
        for target in (self._read, self._write):
            t = threading.Thread(target=target, daemon=True)
            t.start()
            self.proxy._threads.append(t)

    def _read(self):
        try:
            while True:
                data = self.src.recv(1 << 20)
                if not data:
                    break
                now = time.perf_counter()
                self.pair.saw(self.from_client)
                with self.cond:
                    self.queue.append((now + self.proxy.one_way, data))
                    self.cond.notify()
        except OSError:
            pass
        with self.cond:
            self.eof = True
            self.cond.notify()

    def _write(self):
        try:
            while True:
                with self.cond:
                    while not self.queue and not self.eof:
                        self.cond.wait()
                    if not self.queue:
                        break
                    due, data = self.queue.popleft()
                delay = due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                self.dst.sendall(data)
        except OSError:
            pass
        try:
            self.dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.pair.done()


class _Pair:
    """The two directions of one client connection and its round-trip count."""

    def __init__(self, proxy, client, server):
        self.proxy = proxy
        self.client, self.server = client, server
        self.last_from_client = None
        self.lock = threading.Lock()
        self.closed = 0

    def saw(self, from_client):
        with self.lock:
            if from_client and self.last_from_client is not True:
                self.proxy._count_round_trip()
            self.last_from_client = from_client

    def done(self):
        with self.lock:
            self.closed += 1
            last = self.closed == 2
        if last:
            for s in (self.client, self.server):
                try:
                    s.close()
                except OSError:
                    pass


class LatencyProxy:
    """Forward 127.0.0.1:`port` (chosen free port, or `listen_port`) to
    `target_host`:`target_port` with `one_way` seconds added in each direction.

    Attributes: ``port`` (where clients connect), ``round_trips`` (counted since start or
    the last :meth:`reset`).  Raises ValueError for a target that is not loopback."""

    def __init__(self, target_port: int, one_way: float = 0.0005,
                 target_host: str = "127.0.0.1", listen_port: int = 0,
                 lifetime: float = 600.0) -> None:
        addr = socket.gethostbyname(target_host)
        if not ipaddress.ip_address(addr).is_loopback:
            raise ValueError("the latency proxy forwards to loopback only, not %r" % target_host)
        if one_way < 0:
            raise ValueError("one_way must be >= 0 seconds")
        self.target = (addr, int(target_port))
        self.one_way = float(one_way)
        self.lifetime = float(lifetime)
        self._listen_port = int(listen_port)
        self._threads: list = []
        self._sockets: list = []
        self._lock = threading.Lock()
        self.round_trips = 0
        self._closed = threading.Event()
        self._listener = None
        self.port = None

    def _count_round_trip(self):
        with self._lock:
            self.round_trips += 1

    def reset(self) -> int:
        """Set :attr:`round_trips` to 0; returns the count it had."""
        with self._lock:
            n, self.round_trips = self.round_trips, 0
        return n

    def start(self) -> "LatencyProxy":
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self._listen_port))
        ls.listen(64)
        ls.settimeout(0.2)
        self._listener = ls
        self.port = ls.getsockname()[1]
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def _accept(self):
        deadline = time.monotonic() + self.lifetime
        while not self._closed.is_set() and time.monotonic() < deadline:
            try:
                client, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            try:
                server = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.settimeout(None)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, server]
            pair = _Pair(self, client, server)
            _Direction(self, client, server, True, pair).start()
            _Direction(self, server, client, False, pair).start()
        self.close()

    def close(self) -> None:
        """Stop accepting and cut every proxied connection."""
        self._closed.set()
        if self._listener is not None:
            try:
                self._listener.close()
            except OSError:
                pass
        with self._lock:
            socks, self._sockets = self._sockets, []
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self) -> "LatencyProxy":
        return self.start() if self.port is None else self

    def __exit__(self, *exc) -> None:
        self.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target-port", type=int, required=True)
    ap.add_argument("--target-host", default="127.0.0.1")
    ap.add_argument("--one-way-ms", type=float, default=0.5)
    ap.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    ap.add_argument("--lifetime", type=float, default=600.0, help="seconds until it stops")
    a = ap.parse_args(argv)
    proxy = LatencyProxy(a.target_port, a.one_way_ms / 1000.0, a.target_host, a.port,
                         a.lifetime).start()
    print(proxy.port, flush=True)
    try:
        proxy._closed.wait(a.lifetime)
    except KeyboardInterrupt:
        pass
    proxy.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
