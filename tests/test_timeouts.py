"""Timeouts and interruption: read_timeout, write_timeout, connect_timeout, Ctrl-C
(SIGINT) during a query, and the GIL being released while the core waits.

What the code documents (mysqlc/connections.py, docs/core-api.md, src/conn.c):

- ``read_timeout`` / ``write_timeout`` (seconds, per socket wait): when it expires the
  connection is closed and OperationalError 2013 (CR_SERVER_LOST, "Lost connection to
  server ... timed out") is raised; any later use raises OperationalError 2006
  ("Server has gone away", as mysqlclient).
- ``connect_timeout`` bounds the TCP connect and every wait of the handshake (greeting,
  TLS, authentication): a listener that never answers gives OperationalError 2013
  (lost connection during the handshake), a server that never finishes TLS 2026.
- SIGINT during a wait: the signal handler runs (KeyboardInterrupt), the connection is
  closed because a half-read response cannot be resumed, and a new connection works.

Server tests use the ``server`` fixture (a private MariaDB); the write-timeout and
handshake tests use scripted peers (tests/_peer.py, test_auth_plugins.Listener).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import zlib

import pytest

import mysqlc
from test_auth_plugins import Listener
try:                # the scripted-peer helpers (tests/_peer.py)
    from _peer import (
        FULL_CAPS, PASSWORD, USER, handshake_v10, native_scramble, scripted,
    )
except ImportError:  # older layout: they lived in test_protocol
    from test_protocol import (
        FULL_CAPS, PASSWORD, USER, handshake_v10, native_scramble, scripted,
    )

CR_SSL_CONNECTION_ERROR = 2026
CR_SERVER_GONE_ERROR = 2006
CR_SERVER_LOST = 2013
CLIENT_COMPRESS = 0x20

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS_DIR)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    from _certs import CertsUnavailable, make_certs
    try:
        return make_certs(tmp_path_factory.getbasetemp() / "mysqlc-certs")
    except CertsUnavailable as exc:
        pytest.fail("cannot make test certificates: %s" % exc)


def assert_closed(conn):
    assert conn.open is False
    with pytest.raises(mysqlc.OperationalError) as ei:
        conn.cursor().execute("SELECT 1")
    assert ei.value.args == (2006, "Server has gone away")


def transport_kwargs(server, conn_kwargs, transport):
    if transport == "unix":
        if not server.unix_socket:
            pytest.skip("no unix socket for this server")
        kw = server.connect_kwargs(unix=True)
    else:
        kw = dict(conn_kwargs)
    if transport == "compress":
        kw["compress"] = True
    return kw


# =========================================================================== read_timeout

@pytest.mark.parametrize("transport", ["tcp", "unix", "compress"])
def test_read_timeout_select_sleep(server, conn_kwargs, transport):
    kw = transport_kwargs(server, conn_kwargs, transport)
    conn = mysqlc.connect(read_timeout=1, **kw)
    cur = conn.cursor()
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as ei:
        cur.execute("SELECT SLEEP(3)")
    elapsed = time.monotonic() - t0
    assert ei.value.args[0] == CR_SERVER_LOST
    assert "timed out" in ei.value.args[1]
    assert 0.9 <= elapsed < 1.6, elapsed
    assert_closed(conn)
    conn.close()            # idempotent on a connection the error closed
    # a new connection works
    conn2 = mysqlc.connect(read_timeout=1, **kw)
    cur2 = conn2.cursor()
    cur2.execute("SELECT 7")
    assert cur2.fetchone() == (7,)
    conn2.close()


def test_read_timeout_is_per_wait_not_per_query(conn_kwargs):
    """A result that takes longer than read_timeout in total, but never leaves the socket
    idle that long, completes (each row of the sleep-per-row query arrives in time)."""
    conn = mysqlc.connect(read_timeout=1, **conn_kwargs)
    try:
        cur = conn.cursor()
        cur.execute("SELECT SLEEP(0.6)")
        assert cur.fetchone() == (0,)
        cur.execute("SELECT SLEEP(0.6)")
        assert cur.fetchone() == (0,)
        assert conn.open
    finally:
        conn.close()


def test_read_timeout_zero_means_none(conn_kwargs):
    """mysqlclient treats 0 as "no timeout"."""
    conn = mysqlc.connect(read_timeout=0, write_timeout=0, connect_timeout=0, **conn_kwargs)
    try:
        cur = conn.cursor()
        cur.execute("SELECT SLEEP(1.1)")
        assert cur.fetchone() == (0,)
    finally:
        conn.close()


def test_huge_timeouts_are_accepted(conn_kwargs):
    """Timeouts beyond poll()'s int milliseconds (1e9 s) mean "practically never"."""
    conn = mysqlc.connect(connect_timeout=1e9, read_timeout=1e12, write_timeout=1e300,
                          **conn_kwargs)
    try:
        cur = conn.cursor()
        cur.execute("SELECT SLEEP(0.2), 1")
        assert cur.fetchone() == (0, 1)
    finally:
        conn.close()


@pytest.mark.parametrize("name", ["read_timeout", "write_timeout", "connect_timeout"])
@pytest.mark.parametrize("value", [-1, float("nan"), "abc"])
def test_bad_timeout_values(name, value):
    with pytest.raises((ValueError, TypeError)):
        mysqlc.connect(host="127.0.0.1", port=1, user="u", **{name: value})


def test_read_timeout_over_tls(certs):
    """TLS reads go through OpenSSL on a non-blocking socket: the timeout still fires."""
    release = threading.Event()

    def script(peer):
        resp = peer.greet(b"mysql_native_password")
        assert resp["auth"] == native_scramble(PASSWORD, peer.nonce)
        peer.ok()
        peer.seq = 0
        peer.recv()                 # the query
        release.wait(15)

    srv = Listener(script, certs=certs)
    conn = srv.connect(password=PASSWORD, read_timeout=1)
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as ei:
        conn.cursor().execute("SELECT SLEEP(10)")
    elapsed = time.monotonic() - t0
    release.set()
    assert ei.value.args[0] == CR_SERVER_LOST
    assert 0.9 <= elapsed < 1.6, elapsed
    assert_closed(conn)
    srv.check()


# =========================================================================== write_timeout

BIG = 64 << 20     # larger than any socket buffers on the way


def _stalled_peer(caps=FULL_CAPS, hold=60.0):
    """A peer that authenticates the client and then never reads again (for `hold`
    seconds or until `release` is set, then closes: long enough that a loaded machine's
    deflate of the statement does not outlast it, which made the write end in 2006
    'Connection reset by peer' instead of the write timeout's 2013)."""
    release = threading.Event()

    def script(peer):
        peer.handshake(caps=caps, status=0)
        release.wait(hold)

    return scripted(script), release


def _deflate_seconds(n):
    """Wall seconds zlib takes to deflate n incompressible bytes here, now."""
    data = os.urandom(n)
    t0 = time.monotonic()
    zlib.compress(data)    # the core deflates at Z_DEFAULT_COMPRESSION too
    return time.monotonic() - t0


def _send_big_query(conn):
    # incompressible bytes, so that compression cannot make it fit the socket buffers
    core = getattr(conn, "_conn", conn)
    core.max_allowed_packet = 1 << 30   # known: no SELECT @@max_allowed_packet first
    core.query(os.urandom(BIG))


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compress"])
def test_write_timeout_plain_tcp(compress):
    """The peer stops reading: once the socket buffers are full the send must give up
    after write_timeout (a blocking sendmsg() would wait for the peer forever)."""
    srv, release = _stalled_peer(caps=FULL_CAPS | (CLIENT_COMPRESS if compress else 0))
    conn = mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER, password=PASSWORD,
                          write_timeout=1, compress=compress)
    try:
        # the compressed protocol deflates the statement before sending it: allow the
        # time zlib needs for those bytes on this machine now (a loaded CI machine
        # takes seconds), on top of the 1 s timeout and its margin
        slack = _deflate_seconds(BIG) if compress else 0.0
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            _send_big_query(conn)
        elapsed = time.monotonic() - t0
        # documented: a write timeout is a lost connection (2013), raised promptly
        assert ei.value.args[0] == CR_SERVER_LOST, ei.value.args
        assert elapsed < 3.0 + slack, (elapsed, slack)
        assert_closed(conn)
    finally:
        release.set()
        conn.close()
        srv.check()


def test_write_timeout_unix_socket():
    release = threading.Event()

    def script(peer):
        peer.greet(b"mysql_native_password")
        peer.ok()
        release.wait(5)

    srv = Listener(script, unix=True)
    conn = srv.connect(password=PASSWORD, write_timeout=1)
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            _send_big_query(conn)
        elapsed = time.monotonic() - t0
        assert ei.value.args[0] == CR_SERVER_LOST, ei.value.args
        assert elapsed < 3.0, elapsed
        assert_closed(conn)
    finally:
        release.set()
        conn.close()
        srv.check()


def test_write_timeout_over_tls(certs):
    release = threading.Event()

    def script(peer):
        peer.greet(b"mysql_native_password")
        peer.ok()
        release.wait(15)

    srv = Listener(script, certs=certs)
    conn = srv.connect(password=PASSWORD, write_timeout=1)
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            _send_big_query(conn)
        elapsed = time.monotonic() - t0
        assert ei.value.args[0] == CR_SERVER_LOST, ei.value.args
        assert "timed out" in ei.value.args[1]
        assert elapsed < 3.0, elapsed
        assert_closed(conn)
    finally:
        release.set()
        conn.close()
        srv.check()


def test_send_to_a_peer_that_went_away_is_2006():
    """Documented: a failed send is "Server has gone away" (2006), and closes."""
    def script(peer):
        peer.handshake(status=0)
        peer.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")

    srv = scripted(script)
    conn = mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER, password=PASSWORD,
                          write_timeout=5)
    srv.check()                   # the peer closed (with RST)
    time.sleep(0.1)
    with pytest.raises(mysqlc.OperationalError) as ei:
        _send_big_query(conn)
    assert ei.value.args[0] in (CR_SERVER_GONE_ERROR, CR_SERVER_LOST)
    assert_closed(conn)


# =========================================================================== connect_timeout

def _silent_listener(family=socket.AF_INET, path=None):
    """A listening socket that never accepts: the kernel completes the TCP handshake
    (backlog) and then nothing is ever said."""
    s = socket.socket(family, socket.SOCK_STREAM)
    if family == socket.AF_INET:
        s.bind(("127.0.0.1", 0))
    else:
        s.bind(path)
    s.listen(8)
    return s


def test_connect_timeout_listener_never_answers():
    lsock = _silent_listener()
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host="127.0.0.1", port=lsock.getsockname()[1], user="u",
                           password="p", connect_timeout=1)
        elapsed = time.monotonic() - t0
        assert ei.value.args[0] == CR_SERVER_LOST, ei.value.args
        assert 0.9 <= elapsed < 1.6, elapsed
    finally:
        lsock.close()


def test_connect_timeout_unix_listener_never_answers(tmp_path):
    path = os.path.join(tmp_path, "silent.sock")
    if len(path) > 100:
        path = os.path.join("/tmp", "mysqlc-silent-%d.sock" % os.getpid())
    lsock = _silent_listener(socket.AF_UNIX, path)
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(unix_socket=path, user="u", password="p", connect_timeout=1)
        elapsed = time.monotonic() - t0
        assert ei.value.args[0] == CR_SERVER_LOST, ei.value.args
        assert 0.9 <= elapsed < 1.6, elapsed
    finally:
        lsock.close()
        os.unlink(path)


def test_connect_timeout_stalled_tls_handshake(certs):
    """The peer offers TLS, reads the SSLRequest and then never answers the ClientHello."""
    release = threading.Event()

    def script(peer):
        peer.send(handshake_v10(b"n" * 20, caps=FULL_CAPS | 0x800, status=0), seq=0)
        peer.recv()               # SSLRequest
        release.wait(15)

    srv = scripted(script)
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER, password=PASSWORD,
                           ssl_mode="REQUIRED", connect_timeout=1)
        elapsed = time.monotonic() - t0
        assert ei.value.args[0] in (CR_SSL_CONNECTION_ERROR, CR_SERVER_LOST), ei.value.args
        assert 0.9 <= elapsed < 1.6, elapsed
    finally:
        release.set()
    srv.check()


def test_connect_timeout_stalled_authentication():
    """The greeting comes, the handshake response is read, the answer never comes."""
    release = threading.Event()

    def script(peer):
        peer.send(handshake_v10(b"n" * 20, status=0), seq=0)
        peer.recv()
        release.wait(15)

    srv = scripted(script)
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER, password=PASSWORD,
                           connect_timeout=1)
        elapsed = time.monotonic() - t0
        assert ei.value.args[0] == CR_SERVER_LOST
        assert 0.9 <= elapsed < 1.6, elapsed
    finally:
        release.set()
    srv.check()


def test_connect_timeout_does_not_limit_queries(conn_kwargs):
    """connect_timeout bounds only the handshake; afterwards read_timeout (none) holds."""
    conn = mysqlc.connect(connect_timeout=1, **conn_kwargs)
    try:
        cur = conn.cursor()
        cur.execute("SELECT SLEEP(1.3)")
        assert cur.fetchone() == (0,)
    finally:
        conn.close()


# =========================================================================== Ctrl-C

CTRL_C_SCRIPT = textwrap.dedent(r"""
    import json, sys, time
    import mysqlc
    kw = json.loads(sys.argv[1])
    conn = mysqlc.connect(**kw)
    cur = conn.cursor()
    print("READY", flush=True)
    t0 = time.monotonic()
    try:
        cur.execute("SELECT SLEEP(30)")
        print("NOT-INTERRUPTED %r" % (cur.fetchall(),), flush=True)
    except KeyboardInterrupt:
        print("KI %.3f" % (time.monotonic() - t0), flush=True)
    except BaseException as exc:
        print("OTHER %s %s" % (type(exc).__name__, exc), flush=True)
    print("OPEN %s" % conn.open, flush=True)
    try:
        cur.execute("SELECT 1")
        print("REUSE ok %r" % (cur.fetchall(),), flush=True)
    except mysqlc.OperationalError as exc:
        print("REUSE OperationalError %d" % exc.args[0], flush=True)
    except BaseException as exc:
        print("REUSE %s %s" % (type(exc).__name__, exc), flush=True)
    conn.close()
    fresh = mysqlc.connect(**kw)
    fcur = fresh.cursor()
    fcur.execute("SELECT 6 * 7")
    print("FRESH %s" % fcur.fetchone()[0], flush=True)
    fresh.close()
    print("DONE", flush=True)
""")


def _run_and_interrupt(script, args, delay=1.0, timeout=30):
    """Run `script` in a subprocess, wait for its READY line, send SIGINT `delay`
    seconds later; return (output lines, seconds from SIGINT to the KI line)."""
    proc = subprocess.Popen([sys.executable, "-c", script] + list(args), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    ki_after = None
    try:
        deadline = time.monotonic() + timeout
        line = proc.stdout.readline()
        while line and not line.startswith("READY"):
            lines.append(line.rstrip("\n"))
            line = proc.stdout.readline()
        assert line.startswith("READY"), "subprocess did not get ready: %s" % "\n".join(lines)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith(("KI", "NOT-INTERRUPTED", "OTHER")) and ki_after is None:
                ki_after = time.monotonic() - sent
            if time.monotonic() > deadline:
                break
        proc.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return lines, ki_after, proc.returncode


def _marker(lines, name):
    for line in lines:
        if line.startswith(name + " ") or line == name:
            return line[len(name):].strip()
    raise AssertionError("no %s line in the subprocess output:\n%s" % (name, "\n".join(lines)))


@pytest.mark.parametrize("variant", ["blocking", "read_timeout", "compress", "unix"])
def test_ctrl_c_during_query(server, conn_kwargs, variant):
    kw = transport_kwargs(server, conn_kwargs, "unix" if variant == "unix" else "tcp")
    if variant == "read_timeout":
        kw["read_timeout"] = 60        # the poll() path instead of a blocking recv()
    if variant == "compress":
        kw["compress"] = True
    lines, ki_after, rc = _run_and_interrupt(CTRL_C_SCRIPT, [json.dumps(kw)])
    out = "\n".join(lines)
    assert rc == 0, out
    assert float(_marker(lines, "KI")) < 2.5, out      # ~1 s of query + the interrupt
    assert ki_after is not None and ki_after < 1.0, out
    assert _marker(lines, "OPEN") == "False", out
    assert _marker(lines, "REUSE") == "OperationalError 2006", out
    assert _marker(lines, "FRESH") == "42", out
    assert "DONE" in lines, out


CTRL_C_CONNECT_SCRIPT = textwrap.dedent(r"""
    import sys, time
    import mysqlc
    print("READY", flush=True)
    t0 = time.monotonic()
    try:
        mysqlc.connect(host="127.0.0.1", port=int(sys.argv[1]), user="u", password="p")
        print("NOT-INTERRUPTED", flush=True)
    except KeyboardInterrupt:
        print("KI %.3f" % (time.monotonic() - t0), flush=True)
    except BaseException as exc:
        print("OTHER %s %s" % (type(exc).__name__, exc), flush=True)
    print("DONE", flush=True)
""")


def test_ctrl_c_while_waiting_for_the_greeting():
    """No connect_timeout, a server that never sends its greeting: Ctrl-C still gets
    control back at once."""
    lsock = _silent_listener()
    try:
        lines, ki_after, rc = _run_and_interrupt(CTRL_C_CONNECT_SCRIPT,
                                                 [str(lsock.getsockname()[1])])
    finally:
        lsock.close()
    out = "\n".join(lines)
    assert rc == 0, out
    assert ki_after is not None and ki_after < 1.0, out
    assert float(_marker(lines, "KI")) < 2.5, out
    assert "DONE" in lines, out


CTRL_C_SEND_SCRIPT = textwrap.dedent(r"""
    import os, sys, threading, time
    sys.path.insert(0, sys.argv[1])
    import mysqlc
    try:
        from _peer import scripted, PASSWORD, USER
    except ImportError:
        from test_protocol import scripted, PASSWORD, USER
    release = threading.Event()
    def script(peer):
        peer.handshake(status=0)
        release.wait(5)              # never reads the query
    srv = scripted(script)
    conn = mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER, password=PASSWORD)
    data = os.urandom(64 << 20)
    print("READY", flush=True)
    t0 = time.monotonic()
    try:
        conn._conn.query(data)
        print("NOT-INTERRUPTED", flush=True)
    except KeyboardInterrupt:
        print("KI %.3f" % (time.monotonic() - t0), flush=True)
    except BaseException as exc:
        print("OTHER %.3f %s %s" % (time.monotonic() - t0, type(exc).__name__, exc), flush=True)
    print("OPEN %s" % conn.open, flush=True)
    release.set()
    print("DONE", flush=True)
""")


def test_ctrl_c_during_blocked_send():
    """SIGINT while a 64 MiB query is stuck in the socket buffers (no write_timeout):
    KeyboardInterrupt at once, and the half-sent connection is closed."""
    lines, ki_after, rc = _run_and_interrupt(CTRL_C_SEND_SCRIPT, [TESTS_DIR])
    out = "\n".join(lines)
    assert ki_after is not None and ki_after < 1.0, out
    assert _marker(lines, "KI"), out
    assert _marker(lines, "OPEN") == "False", out


# =========================================================================== the GIL

@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compress"])
def test_other_threads_run_during_a_query(conn_kwargs, compress):
    """While the core waits for SELECT SLEEP(1), another Python thread keeps running."""
    conn = mysqlc.connect(compress=compress, **conn_kwargs)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    try:
        cur = conn.cursor()
        t = threading.Thread(target=ticker)
        t.start()
        time.sleep(0.05)
        t0 = time.monotonic()
        cur.execute("SELECT SLEEP(1)")
        t1 = time.monotonic()
        stop.set()
        t.join()
        assert cur.fetchone() == (0,)
        during = [x for x in ticks if t0 <= x <= t1]
        # 5 ms ticks over ~1 s: well over 50 unless the GIL was held during the wait
        assert len(during) > 50, len(during)
        assert max(b - a for a, b in zip(during, during[1:])) < 0.25
    finally:
        stop.set()
        conn.close()
