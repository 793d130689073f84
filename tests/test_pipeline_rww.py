"""Reading while writing (issue 21, docs/architecture.md "Commands in flight"): with the
in-flight bound of ``Connection.pipeline()`` lifted, 10,000 queued statements whose
commands (20 MB) and results (20 MB) each exceed what the kernel's socket buffers hold
neither deadlock nor fail: while a write waits for the server to read, the client reads
the answers the server is blocked writing (the transport's stash, src/transport.c and
src/transport_py.c) and gives them to the engine once the write is done.

Without it the server, blocked writing answers nobody reads, stops reading commands, the
client's write waits for it, and the write timeout (5 s here) ends the connection.  Sync
and mysqlc.aio (the ``api`` fixture), plain, TLS and compressed; the values are hex
digests, so that compression does not shrink them below the buffers."""

import os

import pytest

import mysqlc
from mysqlc import _pipeline

from test_pipeline import MODES, _mode_server
from test_tls_default import certs, tls_server, tls_test   # noqa: F401 (fixtures)

pytestmark = pytest.mark.both_apis

N = 10000
DIGESTS = 16          # 16 x 128 hex characters: a 2 KB value per result row


def _statement(i, pad):
    value = ", ".join("SHA2('%d-%d', 512)" % (i, k) for k in range(DIGESTS))
    return "SELECT %d, CONCAT(%s) /* %s */" % (i, value, pad)


def _expected(i):
    import hashlib
    return "".join(hashlib.sha512(b"%d-%d" % (i, k)).hexdigest() for k in range(DIGESTS))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_unbounded_pipeline_reads_while_it_writes(request, monkeypatch, mode):
    monkeypatch.setattr(_pipeline, "MAX_COMMANDS", 10 * N)
    monkeypatch.setattr(_pipeline, "MAX_BYTES", 1 << 40)
    srv = _mode_server(request, mode)
    conn = mysqlc.connect(read_timeout=30, write_timeout=5, **MODES[mode],
                          **srv.connect_kwargs())
    try:
        if mode == "tls":
            assert conn.tls_info() is not None
        curs = [conn.cursor() for _ in range(3)]
        pads = [os.urandom(1000).hex() for _ in range(8)]   # 2 KB of command each
        most = 0
        with conn.pipeline() as p:
            for i in range(N):
                curs[i % 3].execute(_statement(i, pads[i % 8]))
                most = max(most, len(p))
        # nothing was read before the block ended: every command was in flight at once,
        # 20 MB of them, with 20 MB of answers behind them
        assert most == N
        for cur, last in zip(curs, (N - 1, N - 3, N - 2)):
            assert tuple(cur.fetchall()) == ((last, _expected(last)),)
        # the connection is in step afterwards, in and out of a pipeline
        cur = conn.cursor()
        cur.execute("SELECT 7")
        assert cur.fetchall() == ((7,),)
        with conn.pipeline():
            cur.execute("SELECT 8")
        assert cur.fetchall() == ((8,),)
    finally:
        conn.close()
