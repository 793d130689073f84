"""The Python transport interface of the core (``connect(transport=obj)``,
src/transport_py.c), driven by a blocking socket object instead of asyncio.

mysqlc.aio uses this interface through asyncio and a greenlet; greenlet's stack
switching cannot run under AddressSanitizer, so the sanitizer run leaves the aio tests
out (tools/sanitize-test.sh) and this module is what exercises transport_py.c there:
the same fill / flush / wait / close calls, the receive buffer handed out by
``_transport_buffer``, and the statuses that become the blocking transport's errors.
"""

import socket

import pytest

import mysqlc
import mysqlc.connections
import mysqlc.cursors


class BlockingStream:
    """The transport object: a plain blocking socket."""

    def __init__(self, sock, core):
        self.sock = sock
        self.core = core
        self.errno = 0
        self.waits = self.writes = 0
        self.closed = False

    def fileno(self):
        return self.sock.fileno()

    def wait(self, timeout):
        self.waits += 1
        self.sock.settimeout(None if timeout < 0 else timeout)
        view = self.core._transport_buffer(65536)
        try:
            n = self.sock.recv_into(view)
        except socket.timeout:
            return 1
        except OSError as exc:
            self.errno = exc.errno or 0
            return 3
        finally:
            view.release()
        if n == 0:
            return 2
        self.core._transport_received(n)
        return 0

    def write(self, data, timeout, block):
        self.writes += 1
        assert isinstance(data, bytes) and data
        try:
            self.sock.sendall(data)
        except OSError as exc:
            self.errno = exc.errno or 0
            return 3
        return 0

    def close(self):
        self.closed = True
        self.sock.close()


class OverStream(mysqlc.connections.Connection):
    """A sync connection whose core reads through BlockingStream."""

    stream = None

    def _open_stream(self, core, host, port, unix_socket, timeout):
        if unix_socket is not None:
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(unix_socket)
        else:
            sock = socket.create_connection((host, port), timeout)
        self.stream = BlockingStream(sock, core)
        return self.stream


def test_queries_results_and_streams_through_the_python_transport(conn_kwargs):
    conn = OverStream(local_infile=True, **conn_kwargs)
    try:
        stream = conn.stream
        assert conn.fileno() == stream.fileno() and stream.waits > 0
        cur = conn.cursor()
        cur.execute("SELECT %s, REPEAT('x', 300000), NOW() IS NOT NULL", ("é",))
        row = cur.fetchone()
        assert row[0] == "é" and len(row[1]) == 300000 and row[2] == 1
        ss = conn.cursor(mysqlc.cursors.SSCursor)
        ss.execute("SELECT seq, REPEAT('y', 30) FROM seq_1_to_200000")
        assert sum(r[0] for r in ss) == 200000 * 200001 // 2
        cur.execute("CREATE TEMPORARY TABLE tp (a INT, b TEXT)")
        data = b"".join(b"%d\tv%d\n" % (i, i) for i in range(100000))
        cur.execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE tp", infile=data)
        assert cur.rowcount == 100000
        cur.executemany("INSERT INTO tp VALUES (%s, %s)", [(i, "w") for i in range(5000)])
        cur.execute("SELECT COUNT(*) FROM tp")
        assert cur.fetchone() == (105000,)
        pcur = conn.cursor(prepared=True)
        pcur.execute("SELECT ? + 1", (41,))
        assert pcur.fetchall() == ((42,),)
        writes = stream.writes
        conn.ping()
        assert stream.writes == writes + 1
    finally:
        conn.close()
    assert conn.stream.closed


def test_compressed_protocol_through_the_python_transport(conn_kwargs):
    conn = OverStream(compress=True, **conn_kwargs)
    try:
        cur = conn.cursor()
        cur.execute("SELECT REPEAT('z', 2000000), %s", (7,))
        assert cur.fetchone() == ("z" * 2000000, 7)
        cur.execute("SHOW SESSION STATUS LIKE 'Compression'")
        assert cur.fetchone()[1] == "ON"
    finally:
        conn.close()


def test_statuses_become_the_blocking_transports_errors(conn_kwargs, root_conn_kwargs):
    # 1 (timed out): the read timeout's 2013, the connection closed
    conn = OverStream(read_timeout=0.5, **conn_kwargs)
    with pytest.raises(mysqlc.OperationalError) as err:
        conn.cursor().execute("SELECT SLEEP(5)")
    assert err.value.args[0] == 2013 and "read timed out" in err.value.args[1]
    assert not conn.open and conn.stream.closed
    # 2 (end of stream): the server ended the connection
    conn = OverStream(**conn_kwargs)
    victim = conn.thread_id()
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        root.cursor().execute("KILL %d" % victim)
    finally:
        root.close()
    with pytest.raises(mysqlc.OperationalError) as err:
        cur = conn.cursor()
        for _ in range(50):   # the server's close may take a moment to arrive
            cur.execute("SELECT SLEEP(0.05)")
    assert err.value.args[0] in (2006, 2013, 1927, 4031)
    assert not conn.open


def test_a_transport_that_raises_closes_the_stream(conn_kwargs):
    class Failing(OverStream):
        def _open_stream(self, core, host, port, unix_socket, timeout):
            stream = super()._open_stream(core, host, port, unix_socket, timeout)
            stream.fail = False
            original = stream.wait

            def wait(timeout):
                if stream.fail:
                    raise RuntimeError("the transport broke")
                return original(timeout)
            stream.wait = wait
            return stream
    conn = Failing(**conn_kwargs)
    conn.stream.fail = True
    with pytest.raises(RuntimeError, match="the transport broke"):
        conn.cursor().execute("SELECT 1")
    assert not conn.open and conn.stream.closed


def test_transport_must_give_a_descriptor(conn_kwargs):
    class NoFd(OverStream):
        def _open_stream(self, core, host, port, unix_socket, timeout):
            stream = super()._open_stream(core, host, port, unix_socket, timeout)
            stream.fileno = lambda: -1
            return stream
    with pytest.raises(ValueError, match="descriptor"):
        NoFd(**conn_kwargs)
