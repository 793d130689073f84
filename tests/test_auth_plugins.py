"""Authentication plugins: caching_sha2_password, sha256_password, mysql_clear_password,
the auth-switch exchange (against a scripted MySQL peer) and MariaDB's client_ed25519
(against the real server).

MariaDB has neither caching_sha2_password nor sha256_password, so a scripted server in
a thread plays MySQL 8's part and computes its side from the published algorithms
(MySQL's "Caching SHA-2 Pluggable Authentication" / "SHA-256 Pluggable
Authentication" and the protocol docs):

- caching_sha2_password: the server stores ``SHA256(SHA256(pw))``; the client's scramble
  is ``SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce20)``.  The server answers
  AuthMoreData ``0x01 0x03`` (fast path: OK follows) or ``0x01 0x04`` (full
  authentication): the client then sends the password + NUL over TLS or a unix
  socket; over plain TCP it sends ``RSA-OAEP((password + NUL) XOR nonce-repeated)``
  under the server's public key, given by the user (``server_public_key``) or, only
  with ``get_server_public_key=True``, asked from the server with ``0x02`` (the server
  answers ``0x01`` + the PEM).  Without any of these the client gives up with 2061
  before the password leaves the process.
- sha256_password: the first answer already is the clear password (TLS / unix socket),
  the RSA blob (key given), or ``0x01`` to ask for the key.
- mysql_clear_password: the password + NUL, only over TLS or a unix socket unless
  ``enable_cleartext_plugin=True``; otherwise 2059.

The peer decrypts RSA blobs with the ``cryptography`` package (OAEP with SHA-1 for the
digest and MGF1, OpenSSL's RSA_PKCS1_OAEP_PADDING).  TLS on the peer side is Python's
``ssl`` module wrapping the accepted socket after the client's SSLRequest, with the
certificates of ``tests/_certs.py``.  Everything the peer receives before TLS is
recorded, so the tests can show that a password never crossed the wire in clear.
"""

import hashlib
import os
import socket
import ssl
import struct
import tempfile
import threading

import pytest

import mysqlc

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

try:                # the scripted-peer helpers (tests/_peer.py)
    from _peer import (
        CLIENT_CONNECT_ATTRS, CLIENT_CONNECT_WITH_DB, CLIENT_DEPRECATE_EOF, CLIENT_LONG_FLAG,
        CLIENT_LONG_PASSWORD, CLIENT_MULTI_RESULTS, CLIENT_MULTI_STATEMENTS,
        CLIENT_PLUGIN_AUTH, CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, CLIENT_PROTOCOL_41,
        CLIENT_PS_MULTI_RESULTS, CLIENT_SECURE_CONNECTION, CLIENT_TRANSACTIONS, Peer,
        PeerClosed, err_packet, handshake_v10, native_scramble, ok_packet,
        parse_handshake_response,
    )
except ImportError:  # older layout: they lived in test_protocol
    from test_protocol import (
        CLIENT_CONNECT_ATTRS, CLIENT_CONNECT_WITH_DB, CLIENT_DEPRECATE_EOF, CLIENT_LONG_FLAG,
        CLIENT_LONG_PASSWORD, CLIENT_MULTI_RESULTS, CLIENT_MULTI_STATEMENTS,
        CLIENT_PLUGIN_AUTH, CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, CLIENT_PROTOCOL_41,
        CLIENT_PS_MULTI_RESULTS, CLIENT_SECURE_CONNECTION, CLIENT_TRANSACTIONS, Peer,
        PeerClosed, err_packet, handshake_v10, native_scramble, ok_packet,
        parse_handshake_response,
    )

CLIENT_SSL = 0x00000800

# a MySQL 8 server's capabilities (the scripted peer adds CLIENT_SSL when it has certs)
MYSQL8_CAPS = (CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_CONNECT_WITH_DB
               | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION
               | CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS
               | CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_ATTRS
               | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_DEPRECATE_EOF)

CR_AUTH_PLUGIN_CANNOT_LOAD = 2059
CR_AUTH_PLUGIN_ERR = 2061
ER_ACCESS_DENIED = 1045

USER = "sha2user"
PASSWORD = "Pä$$-wörd 🔑 secret"          # non-ASCII: sent UTF-8 encoded
PW = PASSWORD.encode("utf-8")

CACHING_SHA2 = b"caching_sha2_password"
SHA256 = b"sha256_password"
NATIVE = b"mysql_native_password"
CLEAR = b"mysql_clear_password"

FAST_AUTH_OK = b"\x01\x03"
FULL_AUTH = b"\x01\x04"


# =========================================================================== algorithms

def sha256(b):
    return hashlib.sha256(b).digest()


def caching_sha2_stored(password):
    """What a MySQL server keeps in its cache for the account: SHA256(SHA256(pw))."""
    return sha256(sha256(password))


def caching_sha2_verify(scramble, stored, nonce):
    """Server side of the fast path: recover SHA256(pw) from the scramble with the stored
    hash and check that hashing it gives the stored hash."""
    if len(scramble) != 32:
        return False
    mask = sha256(stored + nonce)
    candidate = bytes(a ^ b for a, b in zip(scramble, mask))
    return sha256(candidate) == stored


def caching_sha2_scramble(password, nonce):
    """Client side, written out independently of the code under test."""
    m1 = sha256(password)
    m3 = sha256(sha256(m1) + nonce)
    return bytes(a ^ b for a, b in zip(m1, m3))


def rsa_decrypt_password(private_key, blob, nonce):
    """Undo the client's RSA step: OAEP(SHA-1) decrypt, then XOR with the nonce repeated.
    Returns the recovered ``password + NUL``."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    plain = private_key.decrypt(
        blob, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                           algorithm=hashes.SHA1(), label=None))
    return bytes(b ^ nonce[i % len(nonce)] for i, b in enumerate(plain))


def new_nonce(fill=b"\x01"):
    # printable-ish, without NUL (the protocol's nonce is NUL-free)
    return os.urandom(20).replace(b"\x00", fill)


# =========================================================================== fixtures

@pytest.fixture(scope="module")
def rsa_key():
    """(private key object, SubjectPublicKeyInfo PEM bytes, PKCS#1 PEM bytes)."""
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pub = key.public_key()
    spki = pub.public_bytes(serialization.Encoding.PEM,
                            serialization.PublicFormat.SubjectPublicKeyInfo)
    pkcs1 = pub.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1)
    return key, spki, pkcs1


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    from _certs import CertsUnavailable, make_certs
    try:
        return make_certs(tmp_path_factory.getbasetemp() / "mysqlc-certs")
    except CertsUnavailable as exc:
        pytest.fail("cannot make test certificates: %s" % exc)


# =========================================================================== scripted peer

class WirePeer(Peer):
    """The shared Peer, plus: every byte received before TLS is kept in ``wire``
    (what an eavesdropper sees), and ``start_tls()`` turns the socket into a TLS server
    socket after the client's SSLRequest."""

    def __init__(self, sock, certs=None):
        super().__init__(sock)
        self.wire = bytearray()
        self.tls = False
        self.certs = certs
        self.events = []          # what the exchange went through, for the test to check

    def _read(self, n):
        while len(self.buf) < n:
            # before TLS read no further than needed: the client's ClientHello may follow
            # its SSLRequest at once, and must be left in the socket for the TLS layer
            chunk = self.sock.recv(1 << 20 if self.tls else n - len(self.buf))
            if not chunk:
                raise PeerClosed("client closed the connection")
            if not self.tls:
                self.wire += chunk
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def start_tls(self):
        assert self.buf == b"", "client sent bytes after the SSLRequest before TLS"
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.certs.server_cert, self.certs.server_key)
        self.sock = ctx.wrap_socket(self.sock, server_side=True)
        self.tls = True

    def drain(self, timeout=10.0):
        """Read (and record) whatever the client still sends until it closes."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                if not self.tls:
                    self.wire += chunk
                self.buf += chunk
        except (ConnectionResetError, ssl.SSLError, OSError):
            pass

    # ---- composite steps
    def greet(self, plugin=CACHING_SHA2, caps=MYSQL8_CAPS, nonce=None):
        """Send HandshakeV10; read the client's HandshakeResponse41 (after TLS, when the
        client asks for it).  Returns the parsed response."""
        if self.certs is not None:
            caps |= CLIENT_SSL
        self.nonce = nonce or new_nonce()
        self.send(handshake_v10(self.nonce, caps=caps, plugin=plugin,
                                version=b"8.0.36-scripted", status=0), seq=0)
        p = self.recv()
        caps_sent = struct.unpack_from("<I", p, 0)[0]
        if caps_sent & CLIENT_SSL:
            assert len(p) == 32, "SSLRequest of %d bytes" % len(p)
            self.events.append("tls")
            self.start_tls()
            p = self.recv()
        resp = parse_handshake_response(p)
        self.response = resp
        return resp

    def ok(self):
        self.send(ok_packet(status=0))
        self.events.append("ok")

    def deny(self):
        self.send(err_packet(ER_ACCESS_DENIED, b"28000",
                             b"Access denied for user 'sha2user'@'localhost' (using password: YES)"))
        self.events.append("denied")

    def switch(self, plugin, data):
        """AuthSwitchRequest; returns the client's answer."""
        self.send(b"\xfe" + plugin + b"\x00" + data)
        self.events.append("switch:" + plugin.decode())
        return self.recv()


class Listener:
    """Listens on 127.0.0.1 (or a unix socket), accepts one connection and runs
    ``script(peer)`` in a thread.  ``check()`` joins and re-raises the script's error."""

    def __init__(self, script, unix=False, certs=None):
        self.script = script
        self.certs = certs
        self.error = None
        self.result = None
        self.peer = None
        self._tmpdir = None
        if unix:
            self._tmpdir = tempfile.mkdtemp(prefix="mysqlc-peer-", dir="/tmp")
            self.path = os.path.join(self._tmpdir, "peer.sock")
            self.lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.lsock.bind(self.path)
        else:
            self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.lsock.bind(("127.0.0.1", 0))
            self.port = self.lsock.getsockname()[1]
        self.unix = unix
        self.lsock.listen(4)
        self.lsock.settimeout(20)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        sock = None
        try:
            sock, _ = self.lsock.accept()
            self.lsock.close()   # one connection only (see tests/_peer.ScriptedServer)
            sock.settimeout(20)
            self.peer = WirePeer(sock, self.certs)
            self.result = self.script(self.peer)
        except BaseException as exc:   # reported by check()
            self.error = exc
        finally:
            if self.peer is not None:
                sock = self.peer.sock
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass
            self.lsock.close()
            if self._tmpdir:
                try:
                    os.unlink(self.path)
                    os.rmdir(self._tmpdir)
                except OSError:
                    pass

    def check(self, timeout=20):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "scripted server thread did not finish"
        if self.error is not None:
            raise self.error
        return self.result

    @property
    def wire(self):
        return bytes(self.peer.wire) if self.peer is not None else b""

    def connect(self, password=PASSWORD, **kw):
        if self.unix:
            where = dict(unix_socket=self.path)
        else:
            where = dict(host="127.0.0.1", port=self.port)
        if self.certs is not None and "ssl_mode" not in kw and "ssl" not in kw:
            kw["ssl"] = {"ca": self.certs.ca_cert}      # verified: VERIFY_IDENTITY
        return mysqlc.connect(user=USER, password=password, connect_timeout=10, **where, **kw)


def assert_no_password_on_the_wire(wire, password=PW):
    assert password not in wire, "the clear password crossed the wire"


def expect_error(errno, fn):
    with pytest.raises(mysqlc.OperationalError) as ei:
        fn()
    assert ei.value.args[0] == errno, ei.value.args
    return ei.value


# =========================================================================== server side scripts

def caching_sha2_server(password=PW, fast=True, key=None, secure=None):
    """A script for a MySQL 8 account with caching_sha2_password.

    ``fast``: the server has the account in its cache (answers 0x01 0x03 to a right
    scramble); otherwise it asks for full authentication.  ``key``: (private, pem) for the
    RSA path.  ``secure``: whether the transport is TLS/unix (then the clear password is
    expected) -- default: TLS was negotiated.
    """
    stored = caching_sha2_stored(password)

    def script(peer):
        resp = peer.greet(CACHING_SHA2)
        assert resp["plugin"] == CACHING_SHA2
        assert resp["user"] == USER.encode()
        is_secure = peer.tls if secure is None else secure
        auth = resp["auth"]
        if auth == b"":
            peer.events.append("empty")
            if password == b"":
                peer.ok()
            else:
                peer.deny()
            peer.drain()
            return
        assert len(auth) == 32, "caching_sha2 scramble of %d bytes" % len(auth)
        if fast:
            if caching_sha2_verify(auth, stored, peer.nonce):
                peer.send(FAST_AUTH_OK)
                peer.events.append("fast")
                peer.ok()
            else:
                peer.deny()
            peer.drain()
            return
        peer.send(FULL_AUTH)
        peer.events.append("full")
        answer = peer.recv()
        if answer == b"\x02":
            peer.events.append("key-requested")
            assert key is not None, "client asked for the public key"
            peer.send(b"\x01" + key[1])
            answer = peer.recv()
        if is_secure:
            peer.events.append("clear")
            got = answer
        else:
            assert key is not None, "client sent %d bytes over plain TCP" % len(answer)
            assert len(answer) == 256, "RSA blob of %d bytes for a 2048-bit key" % len(answer)
            peer.events.append("rsa")
            got = rsa_decrypt_password(key[0], answer, peer.nonce)
        peer.received_password = got
        if got == password + b"\x00":
            peer.ok()
        else:
            peer.deny()
        peer.drain()

    return script


def sha256_server(password=PW, key=None, via_switch=False):
    """A script for a MySQL account with sha256_password: announced in the greeting, or
    (``via_switch``) reached by an AuthSwitchRequest from caching_sha2_password."""
    def script(peer):
        resp = peer.greet(CACHING_SHA2 if via_switch else SHA256)
        if via_switch:
            nonce = new_nonce(b"\x03")
            answer = peer.switch(SHA256, nonce + b"\x00")
        else:
            assert resp["plugin"] == SHA256
            nonce = peer.nonce
            answer = resp["auth"]
        if answer == b"\x01" and not peer.tls:
            peer.events.append("key-requested")
            assert key is not None
            peer.send(b"\x01" + key[1])
            answer = peer.recv()
        if peer.tls:
            peer.events.append("clear")
            got = answer
        elif answer == b"\x00":
            peer.events.append("empty")
            got = answer
        else:
            assert key is not None, "client sent %d bytes over plain TCP" % len(answer)
            assert len(answer) == 256
            peer.events.append("rsa")
            got = rsa_decrypt_password(key[0], answer, nonce)
        peer.received_password = got
        if got == password + b"\x00":
            peer.ok()
        else:
            peer.deny()
        peer.drain()

    return script


# =========================================================================== caching_sha2_password

@pytest.mark.sync_only("no connection: the scripted peer's own arithmetic")
def test_scramble_matches_published_algorithm():
    """Sanity check of the peer's own arithmetic against a value computed by hand."""
    nonce = bytes(range(1, 21))
    s = caching_sha2_scramble(b"secret", nonce)
    assert caching_sha2_verify(s, caching_sha2_stored(b"secret"), nonce)
    assert not caching_sha2_verify(s, caching_sha2_stored(b"Secret"), nonce)
    assert not caching_sha2_verify(s, caching_sha2_stored(b"secret"), nonce[::-1])


def test_caching_sha2_fast_path():
    srv = Listener(caching_sha2_server(fast=True))
    c = srv.connect()
    assert c.open
    assert c._conn.auth_plugin_name == "caching_sha2_password"
    c.close()
    srv.check()
    peer = srv.peer
    assert peer.events == ["fast", "ok"]
    assert peer.response["auth"] == caching_sha2_scramble(PW, peer.nonce)
    assert_no_password_on_the_wire(srv.wire)


def test_caching_sha2_fast_path_wrong_password():
    srv = Listener(caching_sha2_server(fast=True))
    e = expect_error(ER_ACCESS_DENIED, lambda: srv.connect(password="not it"))
    assert "Access denied" in e.args[1]
    srv.check()
    assert srv.peer.events == ["denied"]


def test_caching_sha2_full_auth_over_tls(certs):
    srv = Listener(caching_sha2_server(fast=False), certs=certs)
    c = srv.connect()
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.events == ["tls", "full", "clear", "ok"]
    assert srv.peer.received_password == PW + b"\x00"
    # before TLS only the greeting's answer (SSLRequest) crossed the wire
    assert_no_password_on_the_wire(srv.wire)
    assert len(srv.wire) == 4 + 32


def test_caching_sha2_full_auth_over_tls_wrong_password(certs):
    srv = Listener(caching_sha2_server(fast=False), certs=certs)
    expect_error(ER_ACCESS_DENIED, lambda: srv.connect(password="wrong"))
    srv.check()
    assert srv.peer.events == ["tls", "full", "clear", "denied"]
    assert srv.peer.received_password == b"wrong\x00"


def test_caching_sha2_full_auth_over_unix_socket():
    """A unix socket is a secure transport: the clear password is sent (as MySQL's
    client does)."""
    srv = Listener(caching_sha2_server(fast=False, secure=True), unix=True)
    c = srv.connect()
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.events == ["full", "clear", "ok"]
    assert srv.peer.received_password == PW + b"\x00"


@pytest.mark.parametrize("form", ["spki-str", "spki-bytes", "pkcs1", "file"])
def test_caching_sha2_full_auth_rsa_with_server_public_key(rsa_key, form, tmp_path):
    key, spki, pkcs1 = rsa_key
    if form == "spki-str":
        given = spki.decode("ascii")
    elif form == "spki-bytes":
        given = spki
    elif form == "pkcs1":
        given = pkcs1
    else:
        path = tmp_path / "server-public.pem"
        path.write_bytes(spki)
        given = str(path)
    srv = Listener(caching_sha2_server(fast=False, key=(key, spki)))
    c = srv.connect(server_public_key=given)
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.events == ["full", "rsa", "ok"]
    assert srv.peer.received_password == PW + b"\x00"
    assert_no_password_on_the_wire(srv.wire)


def test_caching_sha2_rsa_wrong_password(rsa_key):
    key, spki, _ = rsa_key
    srv = Listener(caching_sha2_server(fast=False, key=(key, spki)))
    expect_error(ER_ACCESS_DENIED, lambda: srv.connect(password="wrong", server_public_key=spki))
    srv.check()
    assert srv.peer.events == ["full", "rsa", "denied"]
    assert srv.peer.received_password == b"wrong\x00"


def test_caching_sha2_rsa_blob_is_randomised(rsa_key):
    """OAEP is randomised: the same password gives a different blob each time (so a
    recorded blob reveals nothing about equal passwords)."""
    key, spki, _ = rsa_key
    blobs = []
    for _ in range(2):
        def script(peer, blobs=blobs):
            peer.greet(CACHING_SHA2)
            peer.send(FULL_AUTH)
            blob = peer.recv()
            blobs.append(blob)
            assert rsa_decrypt_password(key, blob, peer.nonce) == PW + b"\x00"
            peer.ok()
            peer.drain()
        srv = Listener(script)
        srv.connect(server_public_key=spki, program_name="x").close()
        srv.check()
    assert len(blobs) == 2 and blobs[0] != blobs[1]


def test_caching_sha2_full_auth_requests_public_key(rsa_key):
    key, spki, _ = rsa_key
    srv = Listener(caching_sha2_server(fast=False, key=(key, spki)))
    c = srv.connect(get_server_public_key=True)
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.events == ["full", "key-requested", "rsa", "ok"]
    assert srv.peer.received_password == PW + b"\x00"
    assert_no_password_on_the_wire(srv.wire)


def test_caching_sha2_given_key_wins_over_request(rsa_key):
    """With both a key and the permission, the given key is used: no request."""
    key, spki, _ = rsa_key
    srv = Listener(caching_sha2_server(fast=False, key=(key, spki)))
    srv.connect(server_public_key=spki, get_server_public_key=True).close()
    srv.check()
    assert srv.peer.events == ["full", "rsa", "ok"]


def test_caching_sha2_full_auth_over_tcp_without_key_is_refused():
    """No TLS, no key, no permission to ask for one: 2061, and the password (in any
    form that could be recovered) never leaves the client."""
    def script(peer):
        peer.greet(CACHING_SHA2)
        peer.send(FULL_AUTH)
        peer.drain()

    srv = Listener(script)
    e = expect_error(CR_AUTH_PLUGIN_ERR, srv.connect)
    assert "secure connection" in e.args[1]
    srv.check()
    wire = srv.wire
    assert_no_password_on_the_wire(wire)
    # after the handshake response the client sent nothing but, at most, COM_QUIT
    resp_len = 4 + int.from_bytes(wire[:3], "little")
    assert wire[resp_len:] in (b"", b"\x01\x00\x00\x00\x01"), wire[resp_len:]


def test_caching_sha2_unsolicited_public_key_is_not_used(rsa_key):
    """A server that pushes a PEM the client did not ask for (a man in the middle
    offering its own key) gets no RSA blob, even with get_server_public_key=True: the
    key is only taken as the answer to the client's own request."""
    key, spki, _ = rsa_key

    def script(peer):
        peer.greet(CACHING_SHA2)
        peer.send(b"\x01" + spki)
        peer.drain()

    srv = Listener(script)
    expect_error(2027, lambda: srv.connect(get_server_public_key=True))
    srv.check()
    resp_len = 4 + int.from_bytes(srv.wire[:3], "little")
    assert srv.wire[resp_len:] in (b"", b"\x01\x00\x00\x00\x01")


def test_caching_sha2_bad_public_key_from_server():
    def script(peer):
        peer.greet(CACHING_SHA2)
        peer.send(FULL_AUTH)
        assert peer.recv() == b"\x02"
        peer.send(b"\x01-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n")
        peer.drain()

    srv = Listener(script)
    e = expect_error(CR_AUTH_PLUGIN_ERR, lambda: srv.connect(get_server_public_key=True))
    assert "public key" in e.args[1]
    srv.check()
    assert_no_password_on_the_wire(srv.wire)


def test_caching_sha2_password_too_long_for_rsa_key(rsa_key):
    """RSA-OAEP with SHA-1 and a 2048-bit key holds at most 214 bytes: a longer
    password is an error (2061), not a truncated or clear password."""
    key, spki, _ = rsa_key
    long_pw = "x" * 300

    def script(peer):
        peer.greet(CACHING_SHA2)
        peer.send(FULL_AUTH)
        peer.drain()

    srv = Listener(script)
    e = expect_error(CR_AUTH_PLUGIN_ERR,
                     lambda: srv.connect(password=long_pw, server_public_key=spki))
    assert "RSA" in e.args[1]
    srv.check()
    assert long_pw.encode()[:32] not in srv.wire


def test_caching_sha2_bad_server_public_key_option():
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(host="127.0.0.1", port=1, user="u", password="p",
                       server_public_key="/nonexistent/dir/key.pem")
    assert ei.value.args[0] == CR_AUTH_PLUGIN_ERR


def test_caching_sha2_empty_password():
    srv = Listener(caching_sha2_server(password=b""))
    c = srv.connect(password="")
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.response["auth"] == b""
    assert srv.peer.events == ["empty", "ok"]


def test_caching_sha2_empty_password_when_account_has_one():
    srv = Listener(caching_sha2_server(password=PW))
    expect_error(ER_ACCESS_DENIED, lambda: srv.connect(password=""))
    srv.check()
    assert srv.peer.events == ["empty", "denied"]


# =========================================================================== sha256_password

def test_sha256_over_tls(certs):
    srv = Listener(sha256_server(), certs=certs)
    c = srv.connect()
    assert c.open
    assert c._conn.auth_plugin_name == "sha256_password"
    c.close()
    srv.check()
    assert srv.peer.events == ["tls", "clear", "ok"]
    assert srv.peer.received_password == PW + b"\x00"
    assert_no_password_on_the_wire(srv.wire)


def test_sha256_over_tls_wrong_password(certs):
    srv = Listener(sha256_server(), certs=certs)
    expect_error(ER_ACCESS_DENIED, lambda: srv.connect(password="nope"))
    srv.check()
    assert srv.peer.events == ["tls", "clear", "denied"]


def test_sha256_with_server_public_key(rsa_key):
    key, spki, _ = rsa_key
    srv = Listener(sha256_server(key=(key, spki)))
    c = srv.connect(server_public_key=spki)
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.events == ["rsa", "ok"]
    assert_no_password_on_the_wire(srv.wire)


def test_sha256_with_server_public_key_wrong_password(rsa_key):
    key, spki, _ = rsa_key
    srv = Listener(sha256_server(key=(key, spki)))
    expect_error(ER_ACCESS_DENIED, lambda: srv.connect(password="nope", server_public_key=spki))
    srv.check()
    assert srv.peer.events == ["rsa", "denied"]
    assert srv.peer.received_password == b"nope\x00"


def test_sha256_requests_public_key(rsa_key):
    key, spki, _ = rsa_key
    srv = Listener(sha256_server(key=(key, spki)))
    c = srv.connect(get_server_public_key=True)
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.response["auth"] == b"\x01"
    assert srv.peer.events == ["key-requested", "rsa", "ok"]
    assert_no_password_on_the_wire(srv.wire)


def test_sha256_via_auth_switch_requests_public_key(rsa_key):
    """MySQL's default plugin is caching_sha2_password; an account with sha256_password
    is reached through AuthSwitchRequest, whose nonce is the one XORed into the RSA
    plaintext."""
    key, spki, _ = rsa_key
    srv = Listener(sha256_server(key=(key, spki), via_switch=True))
    c = srv.connect(get_server_public_key=True)
    assert c._conn.auth_plugin_name == "sha256_password"
    c.close()
    srv.check()
    assert srv.peer.events == ["switch:sha256_password", "key-requested", "rsa", "ok"]


def test_sha256_via_auth_switch_over_tls(certs):
    srv = Listener(sha256_server(via_switch=True), certs=certs)
    srv.connect().close()
    srv.check()
    assert srv.peer.events == ["tls", "switch:sha256_password", "clear", "ok"]


def test_sha256_without_secure_path_is_refused():
    """Greeting announces sha256_password, plain TCP, no key, no permission: 2061 before
    the handshake response, so nothing at all is sent."""
    def script(peer):
        peer.send(handshake_v10(new_nonce(), caps=MYSQL8_CAPS, plugin=SHA256), seq=0)
        peer.drain()

    srv = Listener(script)
    e = expect_error(CR_AUTH_PLUGIN_ERR, srv.connect)
    assert "sha256_password" in e.args[1]
    srv.check()
    assert srv.wire == b""


def test_sha256_via_switch_without_secure_path_is_refused():
    def script(peer):
        peer.greet(CACHING_SHA2)
        peer.send(b"\xfe" + SHA256 + b"\x00" + new_nonce() + b"\x00")
        peer.drain()

    srv = Listener(script)
    expect_error(CR_AUTH_PLUGIN_ERR, srv.connect)
    srv.check()
    resp_len = 4 + int.from_bytes(srv.wire[:3], "little")
    assert srv.wire[resp_len:] in (b"", b"\x01\x00\x00\x00\x01")
    assert_no_password_on_the_wire(srv.wire)


def test_sha256_empty_password():
    srv = Listener(sha256_server(password=b""))
    c = srv.connect(password="")
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.response["auth"] == b"\x00"
    assert srv.peer.events == ["empty", "ok"]


# =========================================================================== mysql_clear_password

def clear_switch_server(password=PW):
    def script(peer):
        peer.greet(NATIVE)
        answer = peer.switch(CLEAR, b"")
        peer.received_password = answer
        if answer == password + b"\x00":
            peer.ok()
        else:
            peer.deny()
        peer.drain()
    return script


def test_clear_password_refused_over_plain_tcp():
    def script(peer):
        peer.greet(NATIVE)
        peer.send(b"\xfe" + CLEAR + b"\x00")
        peer.drain()

    srv = Listener(script)
    e = expect_error(CR_AUTH_PLUGIN_CANNOT_LOAD, srv.connect)
    assert "mysql_clear_password" in e.args[1]
    srv.check()
    assert_no_password_on_the_wire(srv.wire)
    resp_len = 4 + int.from_bytes(srv.wire[:3], "little")
    assert srv.wire[resp_len:] in (b"", b"\x01\x00\x00\x00\x01")


def test_clear_password_allowed_with_enable_cleartext_plugin():
    srv = Listener(clear_switch_server())
    c = srv.connect(enable_cleartext_plugin=True)
    assert c.open
    assert c._conn.auth_plugin_name == "mysql_clear_password"
    c.close()
    srv.check()
    assert srv.peer.received_password == PW + b"\x00"
    assert srv.peer.events == ["switch:mysql_clear_password", "ok"]


def test_clear_password_allowed_over_tls(certs):
    srv = Listener(clear_switch_server(), certs=certs)
    c = srv.connect()
    assert c.open
    c.close()
    srv.check()
    assert srv.peer.events == ["tls", "switch:mysql_clear_password", "ok"]
    assert_no_password_on_the_wire(srv.wire)


def test_clear_password_allowed_over_unix_socket():
    srv = Listener(clear_switch_server(), unix=True)
    srv.connect().close()
    srv.check()
    assert srv.peer.received_password == PW + b"\x00"


def test_clear_password_in_greeting_is_not_answered_in_clear():
    """A greeting that names mysql_clear_password as the default plugin gets a
    mysql_native_password answer (a hash), never the clear password."""
    def script(peer):
        resp = peer.greet(CLEAR)
        assert resp["plugin"] == NATIVE
        assert resp["auth"] == native_scramble(PW, peer.nonce)
        peer.ok()
        peer.drain()

    srv = Listener(script)
    srv.connect().close()
    srv.check()
    assert_no_password_on_the_wire(srv.wire)


def test_clear_password_wrong_password_over_tls(certs):
    srv = Listener(clear_switch_server(), certs=certs)
    expect_error(ER_ACCESS_DENIED, lambda: srv.connect(password="bad"))
    srv.check()
    assert srv.peer.received_password == b"bad\x00"


# =========================================================================== auth switch

def test_switch_from_caching_sha2_to_native():
    def script(peer):
        resp = peer.greet(CACHING_SHA2)
        assert resp["plugin"] == CACHING_SHA2
        assert resp["auth"] == caching_sha2_scramble(PW, peer.nonce)
        nonce2 = new_nonce(b"\x07")
        answer = peer.switch(NATIVE, nonce2 + b"\x00")
        assert answer == native_scramble(PW, nonce2)
        assert answer != native_scramble(PW, peer.nonce)
        peer.ok()
        peer.drain()

    srv = Listener(script)
    c = srv.connect()
    assert c._conn.auth_plugin_name == "mysql_native_password"
    c.close()
    srv.check()


def test_switch_from_native_to_caching_sha2_fast_path():
    stored = caching_sha2_stored(PW)

    def script(peer):
        resp = peer.greet(NATIVE)
        assert resp["plugin"] == NATIVE
        assert resp["auth"] == native_scramble(PW, peer.nonce)
        nonce2 = new_nonce(b"\x09")
        answer = peer.switch(CACHING_SHA2, nonce2 + b"\x00")
        assert caching_sha2_verify(answer, stored, nonce2)
        peer.send(FAST_AUTH_OK)
        peer.ok()
        peer.drain()

    srv = Listener(script)
    c = srv.connect()
    assert c._conn.auth_plugin_name == "caching_sha2_password"
    c.close()
    srv.check()


def test_switch_from_native_to_caching_sha2_full_auth_rsa(rsa_key):
    """The RSA plaintext is XORed with the nonce of the switch request, not the
    greeting's."""
    key, spki, _ = rsa_key

    def script(peer):
        peer.greet(NATIVE)
        nonce2 = new_nonce(b"\x0b")
        peer.switch(CACHING_SHA2, nonce2 + b"\x00")
        peer.send(FULL_AUTH)
        blob = peer.recv()
        assert rsa_decrypt_password(key, blob, nonce2) == PW + b"\x00"
        peer.ok()
        peer.drain()

    srv = Listener(script)
    srv.connect(server_public_key=spki).close()
    srv.check()
    assert_no_password_on_the_wire(srv.wire)


def test_switch_to_native_wrong_password():
    def script(peer):
        peer.greet(CACHING_SHA2)
        nonce2 = new_nonce()
        answer = peer.switch(NATIVE, nonce2 + b"\x00")
        if answer == native_scramble(PW, nonce2):
            peer.ok()
        else:
            peer.deny()
        peer.drain()

    srv = Listener(script)
    expect_error(ER_ACCESS_DENIED, lambda: srv.connect(password="other"))
    srv.check()
    assert srv.peer.events[-1] == "denied"


@pytest.mark.parametrize("plugin", [b"dialog", b"auth_gssapi_client", b"client_ed25519x"])
def test_switch_to_unknown_plugin_is_2059(plugin):
    def script(peer):
        peer.greet(CACHING_SHA2)
        peer.send(b"\xfe" + plugin + b"\x00" + new_nonce() + b"\x00")
        peer.drain()

    srv = Listener(script)
    e = expect_error(CR_AUTH_PLUGIN_CANNOT_LOAD, srv.connect)
    assert plugin.decode() in e.args[1]
    srv.check()
    resp_len = 4 + int.from_bytes(srv.wire[:3], "little")
    assert srv.wire[resp_len:] in (b"", b"\x01\x00\x00\x00\x01")


def test_unknown_plugin_in_greeting_answers_native_then_switch():
    """A greeting naming a plugin the client lacks: the client answers as
    mysql_native_password; a server that then switches to native succeeds."""
    def script(peer):
        resp = peer.greet(b"some_future_plugin")
        assert resp["plugin"] == NATIVE
        nonce2 = new_nonce()
        answer = peer.switch(NATIVE, nonce2 + b"\x00")
        assert answer == native_scramble(PW, nonce2)
        peer.ok()
        peer.drain()

    srv = Listener(script)
    srv.connect().close()
    srv.check()


def test_old_password_switch_is_refused():
    """An AuthSwitchRequest of the single byte 0xFE asks for the pre-4.1 hash."""
    def script(peer):
        peer.greet(NATIVE)
        peer.send(b"\xfe")
        peer.drain()

    srv = Listener(script)
    expect_error(CR_AUTH_PLUGIN_CANNOT_LOAD, srv.connect)
    srv.check()


def test_endless_switching_is_bounded():
    """A server that keeps sending AuthSwitchRequests: the client gives up."""
    def script(peer):
        peer.greet(NATIVE)
        try:
            for _ in range(100):
                peer.switch(NATIVE, new_nonce() + b"\x00")
        except (PeerClosed, OSError):
            pass

    srv = Listener(script)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect()
    assert ei.value.args[0] == 2027
    srv.check()


# =========================================================================== client_ed25519 (real MariaDB)

ED_USER = "mysqlc_ed"
ED_PASSWORD = "secret-ed 25519 ✓"


@pytest.fixture
def ed25519_account(server, root_conn_kwargs):
    pytest.importorskip("nacl")
    root = mysqlc.connect(**root_conn_kwargs)
    cur = root.cursor()
    cur.execute("SELECT VERSION()")
    if "mariadb" not in cur.fetchone()[0].lower():
        root.close()
        pytest.skip("client_ed25519 is MariaDB's plugin; the server is MySQL")
    cur.execute("SELECT PLUGIN_STATUS FROM information_schema.PLUGINS "
                "WHERE PLUGIN_NAME = 'ed25519'")
    row = cur.fetchone()
    if row is None:
        try:
            cur.execute("INSTALL SONAME 'auth_ed25519'")
        except mysqlc.Error as exc:
            root.close()
            if os.environ.get("MYSQLC_TEST_DSN"):
                pytest.skip("cannot install auth_ed25519 on the external server: %s" % (exc,))
            raise
    cur.execute("DROP USER IF EXISTS %s@'%%'", (ED_USER,))
    cur.execute("CREATE USER %s@'%%' IDENTIFIED VIA ed25519 USING PASSWORD(%s)",
                (ED_USER, ED_PASSWORD))
    cur.execute("GRANT SELECT ON *.* TO %s@'%%'", (ED_USER,))
    try:
        yield dict(host=server.host, port=server.port, user=ED_USER)
    finally:
        cur.execute("DROP USER IF EXISTS %s@'%%'", (ED_USER,))
        root.close()


@pytest.mark.allow_skip   # skips only under MYSQLC_TEST_DSN / MySQL, where ed25519 is absent
def test_ed25519_login(ed25519_account):
    c = mysqlc.connect(password=ED_PASSWORD, **ed25519_account)
    try:
        assert c._conn.auth_plugin_name == "client_ed25519"
        cur = c.cursor()
        cur.execute("SELECT CURRENT_USER()")
        assert cur.fetchone() == ("%s@%%" % ED_USER,)
    finally:
        c.close()


@pytest.mark.allow_skip
def test_ed25519_wrong_password(ed25519_account):
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(password=ED_PASSWORD + "x", **ed25519_account)
    assert ei.value.args[0] == ER_ACCESS_DENIED


@pytest.mark.allow_skip
def test_ed25519_password_as_bytes_and_via_unix_socket(ed25519_account, server):
    if not server.unix_socket:
        pytest.skip("no unix socket for the server")
    c = mysqlc.connect(unix_socket=server.unix_socket, user=ED_USER,
                       password=ED_PASSWORD.encode("utf-8"))
    try:
        cur = c.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
    finally:
        c.close()
