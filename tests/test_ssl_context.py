"""``ssl=ssl.SSLContext`` (PyMySQL's and aiomysql's form, part of issue 20): TLS through
the context's own session -- Python's ``ssl`` over memory BIOs inside the engine
(src/tls_py.c) -- on ``mysqlc.connect``, ``mysqlc.aio`` (each test of this module runs on
both, tests/_apis.py), its pool, the PyMySQL flavour and the SQLAlchemy dialects.

Against a private MariaDB started with the certificates of ``tests/_certs.py`` (as
tests/test_tls.py does), and against scripted peers (tests/_peer.py) for what a real
server cannot show: a certificate for another name, a peer that asks for the clear
password, a peer that drops or stalls in the middle of the TLS handshake.

Expectations: the context verifies as its ``verify_mode`` / ``check_hostname`` say
(``ssl.create_default_context(cafile=...)`` checks the chain and the host name); a
failure is OperationalError 2026 "SSL connection error: certificate verify failed:
<reason>", as the OpenSSL path; a ``CERT_NONE`` context is ``ssl_mode=REQUIRED``
(encrypted, unverified) for every rule of the session layer, the clear-password rule
included; SNI / the name checked is the host connected to (PyMySQL's
``server_hostname=self.host``).
"""

import asyncio
import hashlib
import os
import socket
import ssl
import time

import pytest

import mysqlc
import mysqlc.connections
from mysqlc.server import PrivateServer, ServerNotAvailable

from _certs import CertsUnavailable, make_certs
from _peer import CLIENT_SSL, FULL_CAPS, PASSWORD, USER, PeerClosed, TlsServer, handshake_v10

pytestmark = pytest.mark.both_apis

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1")

CR_SSL_CONNECTION_ERROR = 2026
CR_SERVER_LOST = 2013
CR_AUTH_PLUGIN_CANNOT_LOAD = 2059
ER_ACCESS_DENIED_ERROR = 1045


def _unavailable(reason):
    if IN_CI:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def server_test(func):
    """Against this module's private TLS server: marked ``server`` and ``allow_skip``
    (it skips with MYSQLC_TEST_DSN set; a missing server or openssl fails under CI)."""
    return pytest.mark.server(pytest.mark.allow_skip(func))


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    try:
        return make_certs(tmp_path_factory.mktemp("certs"))
    except CertsUnavailable as exc:
        _unavailable("cannot make test certificates: %s" % exc)


@pytest.fixture(scope="module")
def tls_server(certs):
    if os.environ.get("MYSQLC_TEST_DSN"):
        pytest.skip("MYSQLC_TEST_DSN is set: an external server cannot be restarted with "
                    "the test certificates")
    last = None
    for _ in range(2):   # a busy machine may fail one start-up
        try:
            srv = PrivateServer(extra_args=certs.server_args()).start()
            break
        except ServerNotAvailable as exc:
            last = exc
    else:
        _unavailable("no private MariaDB/MySQL server with TLS: %s" % last)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def kw(tls_server):
    return tls_server.connect_kwargs()


def verifying(certs, cafile=None):
    """ssl.create_default_context(cafile=...): the chain and the host name are checked."""
    return ssl.create_default_context(cafile=cafile or certs.ca_cert)


def unverified():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def status(conn, name):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE %s", (name,))
    rows = cur.fetchall()
    cur.close()
    return rows[0][1] if rows else None


def connect_error(**kw):
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(**kw).close()
    return info.value


# =========================================================================== verification

@server_test
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_default_context_verifies_and_connects(kw, certs, host):
    """create_default_context(cafile=CA): TLS through the context, the certificate's chain
    and name (IP 127.0.0.1 or DNS localhost) verified."""
    with mysqlc.connect(ssl=verifying(certs), **dict(kw, host=host, protocol="tcp")) as conn:
        assert status(conn, "Ssl_cipher")
        assert status(conn, "Ssl_version").startswith("TLSv1.")
        info = conn.tls_info()
        assert info["verified"] is True and info["verified_by"] == "ca+hostname", info
        assert info["version"] == status(conn, "Ssl_version")
        assert info["cipher"] == status(conn, "Ssl_cipher")
        cur = conn.cursor()
        cur.execute("SELECT 1 + 1")
        assert cur.fetchall() == ((2,),)


@server_test
def test_context_without_hostname_check_is_verify_ca(kw, certs):
    ctx = verifying(certs)
    ctx.check_hostname = False
    with mysqlc.connect(ssl=ctx, **kw) as conn:
        assert conn.tls_info()["verified_by"] == "ca"


@server_test
def test_wrong_ca_fails_with_2026(kw, certs):
    err = connect_error(ssl=verifying(certs, certs.other_ca_cert), **kw)
    assert err.args[0] == CR_SSL_CONNECTION_ERROR, err.args
    assert err.args[1].startswith("SSL connection error: certificate verify failed: "), err.args
    assert "self-signed certificate in certificate chain" in err.args[1], err.args
    assert isinstance(err.__cause__, ssl.SSLCertVerificationError)


@server_test
def test_unverified_context_connects_encrypted(kw):
    with mysqlc.connect(ssl=unverified(), **kw) as conn:
        assert status(conn, "Ssl_cipher")
        info = conn.tls_info()
        assert info["verified"] is False and info["verified_by"] is None, info


@server_test
def test_ssl_disabled_leaves_the_context_unused(kw, certs):
    with mysqlc.connect(ssl=verifying(certs), ssl_disabled=True, **kw) as conn:
        assert status(conn, "Ssl_cipher") == ""
        assert conn.tls_info() is None


@server_test
def test_option_files_add_no_tls_option_to_a_context(kw, certs, tmp_path):
    """An explicit SSLContext is the whole TLS configuration: an option file's ssl-ca
    (here an unrelated CA, which would fail) is not mixed into it."""
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nssl-ca=%s\nssl-mode=VERIFY_IDENTITY\n" % certs.other_ca_cert)
    with mysqlc.connect(ssl=verifying(certs), read_default_file=str(cnf), **kw) as conn:
        assert conn.tls_info()["verified_by"] == "ca+hostname"


# --------------------------------------------------------------- scripted TLS peers

def _tls_login(peer):
    """Greet with TLS; on a TLS handshake the client refused, record it and stop."""
    try:
        peer.greet()
    except (ssl.SSLError, PeerClosed, OSError) as exc:
        peer.refused = exc
        return
    peer.refused = None
    peer.send(b"\x00\x00\x00\x02\x00\x00\x00")   # OK: any credentials
    try:
        while peer.recv_command()[:1] != b"\x01":   # until COM_QUIT
            peer.send(b"\x00\x00\x00\x02\x00\x00\x00")
    except (PeerClosed, ssl.SSLError, OSError):
        pass


@pytest.mark.parametrize("cert, host, check_hostname, accepted", [
    ("wrong_cert", "127.0.0.1", True, False),     # DNS:wrong.example only
    ("wrong_cert", "localhost", True, False),
    ("dns_only_cert", "127.0.0.1", True, False),  # DNS:localhost, no IP address
    ("dns_only_cert", "localhost", True, True),
    ("wrong_cert", "127.0.0.1", False, True),     # the chain only
])
def test_check_hostname_checks_the_host_connected_to(certs, cert, host, check_hostname,
                                                      accepted):
    key = certs.wrong_key if cert == "wrong_cert" else certs.server_key
    srv = TlsServer(_tls_login, cert=getattr(certs, cert), key=key)
    ctx = verifying(certs)
    ctx.check_hostname = check_hostname
    kw = dict(host=host, port=srv.port, user=USER.decode(), password=PASSWORD,
              connect_timeout=10, autocommit=None, protocol="tcp", ssl=ctx)
    if accepted:
        mysqlc.connect(**kw).close()
        srv.check()
    else:
        err = connect_error(**kw)
        srv.check()
        assert err.args[0] == CR_SSL_CONNECTION_ERROR, err.args
        assert "certificate verify failed" in err.args[1], err.args
        assert "mismatch" in err.args[1].lower(), err.args


@pytest.mark.parametrize("host, sni", [("localhost", "localhost"), ("127.0.0.1", None)])
def test_sni_is_the_host_connected_to(certs, host, sni):
    """SNI carries the host name given (PyMySQL's server_hostname=self.host), never an IP
    address (RFC 6066; Python's ssl sends none for one)."""
    names = []

    def script(peer):
        peer.send(handshake_v10(os.urandom(20).replace(b"\x00", b"\x01"),
                                caps=FULL_CAPS | CLIENT_SSL), seq=0)
        peer.recv()                                   # the SSLRequest
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(certs.server_cert, certs.server_key)
        ctx.sni_callback = lambda obj, name, c: names.append(name)
        peer.sock = ctx.wrap_socket(peer.sock, server_side=True)
        peer.tls = True
        peer.recv()                                   # the handshake response
        peer.send(b"\x00\x00\x00\x02\x00\x00\x00")
        try:
            peer.recv_command()
        except (PeerClosed, ssl.SSLError, OSError):
            pass

    srv = TlsServer(script)
    ctx = verifying(certs)
    mysqlc.connect(host=host, port=srv.port, user=USER.decode(), password=PASSWORD,
                   connect_timeout=10, autocommit=None, protocol="tcp", ssl=ctx).close()
    srv.check()
    assert names == [sni]


def _clear_password_peer(peer):
    """TLS, then AuthSwitchRequest to mysql_clear_password: what the client answers."""
    peer.greet()
    peer.send(b"\xfe" + b"mysql_clear_password\x00")
    try:
        answer = peer.recv()
    except (PeerClosed, ssl.SSLError, OSError):
        return None
    peer.send(b"\x00\x00\x00\x02\x00\x00\x00")
    try:
        peer.recv_command()   # COM_QUIT
    except (PeerClosed, ssl.SSLError, OSError):
        pass
    return answer


@pytest.mark.parametrize("how", ["context-cert-none", "ssl_mode-required", "preferred"])
def test_unverified_context_follows_the_required_clear_password_rule(certs, how):
    """A CERT_NONE context is ssl_mode=REQUIRED for the session layer: the clear password
    goes (inside TLS) exactly when it goes with ssl_mode=REQUIRED; under the default
    PREFERRED an unverified certificate does not carry it (docs/compat.md, TLS)."""
    srv = TlsServer(_clear_password_peer, cert=certs.server_cert, key=certs.server_key)
    tls = {"context-cert-none": dict(ssl=unverified()),
           "ssl_mode-required": dict(ssl_mode="REQUIRED"),
           "preferred": dict(ssl_mode="PREFERRED")}[how]
    kw = dict(host="127.0.0.1", port=srv.port, user=USER.decode(), password=PASSWORD,
              connect_timeout=10, autocommit=None, **tls)
    if how == "preferred":
        err = connect_error(**kw)
        assert err.args[0] == CR_AUTH_PLUGIN_CANNOT_LOAD, err.args
        assert srv.check() is None
    else:
        mysqlc.connect(**kw).close()
        assert srv.check() == PASSWORD + b"\x00"


@pytest.mark.parametrize("behaviour", ["close-after-client-hello", "garbage", "stall"])
def test_peer_failing_mid_handshake_gives_an_error_not_a_hang(certs, behaviour):
    """The server offers TLS and then, inside the handshake, closes, answers with bytes
    that are no TLS record, or never answers: 2013/2026 within connect_timeout, with the
    connection closed and no credential sent."""
    received = bytearray()

    def script(peer):
        peer.send(handshake_v10(os.urandom(20).replace(b"\x00", b"\x01"),
                                caps=FULL_CAPS | CLIENT_SSL), seq=0)
        peer.recv()                             # the SSLRequest
        peer.sock.settimeout(5)
        try:
            received.extend(peer.sock.recv(65536))   # the ClientHello
            if behaviour == "close-after-client-hello":
                peer.sock.shutdown(socket.SHUT_RDWR)
            elif behaviour == "garbage":
                peer.sock.sendall(b"\x16\x03\x03\x00\x05hello" + b"\x00" * 64)
            else:
                time.sleep(3)
            while True:
                chunk = peer.sock.recv(65536)
                if not chunk:
                    break
                received.extend(chunk)
        except OSError:
            pass

    srv = TlsServer(script)
    t0 = time.monotonic()
    err = connect_error(host="127.0.0.1", port=srv.port, user=USER.decode(),
                        password=PASSWORD, connect_timeout=1.5, autocommit=None,
                        ssl=verifying(certs))
    took = time.monotonic() - t0
    srv.check()
    # the same error on both APIs (the blocking socket's texts), within connect_timeout:
    # no KILL QUERY side connection either (no statement runs during the handshake)
    assert err.args[0] == CR_SSL_CONNECTION_ERROR, err.args
    assert err.args[1].startswith("SSL connection error: "), err.args
    words = {"close-after-client-hello": "the server closed the connection",
             "garbage": "TLS handshake failed", "stall": "TLS handshake timed out"}
    assert words[behaviour] in err.args[1], err.args
    assert took < 3.0, took
    assert received[:2] == b"\x16\x03"          # a TLS handshake record was all it sent
    assert USER not in bytes(received)


# =========================================================================== client certificates

@pytest.fixture(scope="module")
def cert_accounts(tls_server):
    root = mysqlc.connect(**tls_server.connect_kwargs(root=True))
    cur = root.cursor()
    accounts = {
        "ctx_x509": "REQUIRE X509",
        "ctx_subject": "REQUIRE SUBJECT '/O=mysqlc tests/CN=mysqlc-client' "
                       "AND ISSUER '/O=mysqlc tests/CN=mysqlc test CA'",
    }
    for user, require in accounts.items():
        cur.execute("DROP USER IF EXISTS '%s'@'%%'" % user)
        cur.execute("CREATE USER '%s'@'%%' IDENTIFIED BY 'pw-%s' %s" % (user, user, require))
        cur.execute("GRANT SELECT ON *.* TO '%s'@'%%'" % user)
    root.close()
    return {user: dict(host="127.0.0.1", port=tls_server.port, user=user,
                       password="pw-" + user) for user in accounts}


@server_test
@pytest.mark.parametrize("account", ["ctx_x509", "ctx_subject"])
def test_client_certificate_in_the_context_is_presented(cert_accounts, certs, account):
    acct = cert_accounts[account]
    err = connect_error(ssl=verifying(certs), **acct)            # no client certificate
    assert err.args[0] == ER_ACCESS_DENIED_ERROR, err.args
    ctx = verifying(certs)
    ctx.load_cert_chain(certs.client_cert, certs.client_key)
    with mysqlc.connect(ssl=ctx, **acct) as conn:
        cur = conn.cursor()
        cur.execute("SELECT CURRENT_USER()")
        assert cur.fetchone()[0] == account + "@%"


# =========================================================================== data through it

@server_test
def test_large_results_and_sends_through_the_context(kw, certs):
    with mysqlc.connect(ssl=verifying(certs), **kw) as conn:
        cur = conn.cursor()
        cur.execute("SELECT REPEAT('x', 20000000)")             # a 20 MB value: 2 packets
        assert cur.fetchone()[0] == "x" * 20000000
        big = os.urandom(6 << 20)                               # 6 MiB sent, text protocol
        cur.execute("SELECT LENGTH(%s), SHA2(%s, 256)", (big, big))
        assert cur.fetchone() == (len(big), hashlib.sha256(big).hexdigest())
        cur.execute("SELECT seq, REPEAT(CHAR(65 + seq % 26 USING ascii), 100) FROM seq_1_to_100000")
        rows = cur.fetchall()
        assert len(rows) == 100000 and rows[-1] == (100000, chr(65 + 100000 % 26) * 100)
        pcur = conn.cursor(prepared=True)                       # binary protocol
        pcur.execute("SELECT LENGTH(?), RIGHT(?, 3)", (big, b"a" * (3 << 20) + b"end"))
        assert pcur.fetchone() == (len(big), b"end")


@server_test
def test_compression_inside_the_context(kw, certs):
    with mysqlc.connect(ssl=verifying(certs), compress=True, **kw) as conn:
        assert status(conn, "Compression") == "ON"
        assert status(conn, "Ssl_cipher")
        cur = conn.cursor()
        cur.execute("SELECT REPEAT('ab', 3000000), %s", ("q" * (2 << 20),))
        a, b = cur.fetchone()
        assert a == "ab" * 3000000 and b == "q" * (2 << 20)


@server_test
def test_ping_reconnect_and_kill_side_connection_use_the_context(kw, certs, tls_server):
    """The context serves the later connections a connection makes: a reconnect and the
    KILL QUERY side connection (both go through the same options)."""
    conn = mysqlc.connect(ssl=verifying(certs), **kw)
    try:
        tid = conn.thread_id()
        root = mysqlc.connect(**tls_server.connect_kwargs(root=True))
        root.cursor().execute("KILL %d" % tid)
        root.close()
        conn.ping(reconnect=True)
        assert conn.thread_id() != tid
        assert conn.tls_info()["verified_by"] == "ca+hostname"
    finally:
        conn.close()


# =========================================================================== other APIs

@server_test
@pytest.mark.sync_only("runs mysqlc.aio's connect and pool on an event loop of its own")
def test_aio_connect_and_pool(kw, certs):
    import mysqlc.aio

    async def main():
        ctx = verifying(certs)
        conn = await mysqlc.aio.connect(ssl=ctx, **kw)
        try:
            cur = conn.cursor()
            await cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            assert (await cur.fetchone())[1]
            assert conn.tls_info()["verified_by"] == "ca+hostname"
        finally:
            conn.close()
        with pytest.raises(mysqlc.OperationalError) as info:
            await mysqlc.aio.connect(ssl=verifying(certs, certs.other_ca_cert), **kw)
        assert info.value.args[0] == CR_SSL_CONNECTION_ERROR
        pool = await mysqlc.aio.create_pool(minsize=2, maxsize=2, ssl=ctx, **kw)
        try:
            async def one():
                async with pool.acquire() as c:
                    cur = c.cursor()
                    await cur.execute("SELECT LENGTH(REPEAT('z', 3000000))")
                    return (await cur.fetchone())[0]
            assert await asyncio.gather(one(), one(), one()) == [3000000] * 3
        finally:
            pool.close()
            await pool.wait_closed()

    asyncio.run(main())


@server_test
@pytest.mark.sync_only("the PyMySQL flavour (mysqlc.pymysql) is a sync API")
def test_pymysql_flavour_takes_the_context(kw, certs):
    import mysqlc.pymysql as pymysql
    conn = pymysql.connect(ssl=verifying(certs), **kw)
    try:
        assert status(conn, "Ssl_cipher")
        assert conn.tls_info()["verified_by"] == "ca+hostname"
    finally:
        conn.close()
    with pytest.raises(pymysql.err.OperationalError) as info:
        pymysql.connect(ssl=verifying(certs, certs.other_ca_cert), **kw)
    assert info.value.args[0] == CR_SSL_CONNECTION_ERROR
    # PyMySQL builds its own context from ssl_ca instead; mysqlc refuses the mix
    with pytest.raises(pymysql.err.ProgrammingError):
        pymysql.connect(ssl=verifying(certs), ssl_ca=certs.ca_cert, **kw)


@server_test
@pytest.mark.sync_only("SQLAlchemy's sync engine")
def test_sqlalchemy_connect_args(kw, certs):
    sa = pytest.importorskip("sqlalchemy")
    url = "mariadb+mysqlc://%s:%s@127.0.0.1:%d/%s" % (kw["user"], kw["password"],
                                                      kw["port"], kw["database"])
    engine = sa.create_engine(url, connect_args={"ssl": verifying(certs)})
    try:
        with engine.connect() as c:
            row = c.execute(sa.text("SHOW SESSION STATUS LIKE 'Ssl_cipher'")).one()
            assert row[1]
    finally:
        engine.dispose()


@server_test
@pytest.mark.sync_only("SQLAlchemy's asyncio engine on an event loop of its own")
def test_sqlalchemy_aio_connect_args(kw, certs):
    # "aio" in the name: the sanitizer run leaves greenlet-based tests out
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy.ext.asyncio import create_async_engine
    url = "mariadb+mysqlc://%s:%s@127.0.0.1:%d/%s" % (kw["user"], kw["password"],
                                                      kw["port"], kw["database"])

    async def main():
        aengine = create_async_engine(url, connect_args={"ssl": verifying(certs)})
        try:
            async with aengine.connect() as c:
                row = (await c.execute(sa.text("SHOW SESSION STATUS LIKE 'Ssl_version'"))).one()
                assert row[1].startswith("TLSv1.")
        finally:
            await aengine.dispose()

    asyncio.run(main())


class _BlockingStream:
    """connect(transport=obj) over a blocking socket (src/transport_py.c without asyncio:
    what runs under the sanitizers, which cannot run greenlet)."""

    def __init__(self, sock, core):
        self.sock, self.core, self.errno = sock, core, 0

    def fileno(self):
        return self.sock.fileno()

    def wait(self, timeout):
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
        try:
            self.sock.sendall(data)
        except OSError as exc:
            self.errno = exc.errno or 0
            return 3
        return 0

    def close(self):
        self.sock.close()


class _OverStream(mysqlc.connections.Connection):
    def _open_stream(self, core, host, port, unix_socket, timeout):
        return _BlockingStream(socket.create_connection((host, port), timeout), core)


@server_test
@pytest.mark.sync_only("drives the Python transport from a blocking socket, no event loop")
def test_context_through_the_python_transport(kw, certs):
    conn = _OverStream(ssl=verifying(certs), **kw)
    try:
        assert status(conn, "Ssl_cipher")
        cur = conn.cursor()
        cur.execute("SELECT REPEAT('x', 5000000), %s", ("y" * (3 << 20),))
        assert cur.fetchone() == ("x" * 5000000, "y" * (3 << 20))
    finally:
        conn.close()
    with pytest.raises(mysqlc.OperationalError) as info:
        _OverStream(ssl=verifying(certs, certs.other_ca_cert), **kw)
    assert info.value.args[0] == CR_SSL_CONNECTION_ERROR
