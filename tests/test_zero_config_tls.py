"""MariaDB 11.4+'s zero-configuration TLS (MDEV-31855) and ``ssl_fingerprint``.

Over TLS, MariaDB 11.4+ ends a successful password login with an OK whose info is
``0x01`` + upper-case hex of SHA256(hash_password_bin || the 20-byte scramble ||
SHA256(server certificate DER)), where hash_password_bin is SHA1(SHA1(password)) for
mysql_native_password, the public key for client_ed25519 and 'P' || factor || salt ||
public key for parsec (MariaDB Connector/C 3.4, plugins/auth/my_auth.c and the plugins'
hash_password_bin).  A client that could not verify the certificate against a CA checks
it: only a peer that knows the password hash and holds this certificate can compute it.

The scripted peers (tests/_peer.py TlsServer / TlsPeer) speak TLS with Python's ssl
module and compute the proof from that published algorithm; the certificates are those
of tests/_certs.py (signed by a test CA the client is not given) plus a self-signed one
made here with ``openssl``.  The real test server is MariaDB 10.11: it sends no proof, so
there the behaviour follows the mode alone.
"""

import os
import shutil
import ssl
import subprocess

import pytest

import mysqlc
from mysqlc import _secure
from mysqlc.server import PrivateServer, ServerNotAvailable

from _certs import CertsUnavailable, make_certs
from _peer import (PASSWORD, PeerClosed, TlsServer, cert_fingerprint, err_packet,
                   native_password_hash, native_scramble, ok_packet, zero_config_proof)

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1")
CR_SSL_CONNECTION_ERROR = 2026
ER_ACCESS_DENIED = 1045
CACHING_SHA2 = b"caching_sha2_password"


def _unavailable(reason):
    if IN_CI:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    try:
        c = make_certs(tmp_path_factory.mktemp("zcerts"))
    except CertsUnavailable as exc:
        _unavailable("cannot make test certificates: %s" % exc)
    d = os.path.dirname(c.server_cert)
    c.self_cert, c.self_key = os.path.join(d, "self-cert.pem"), os.path.join(d, "self-key.pem")
    if not os.path.exists(c.self_cert):
        if not shutil.which("openssl"):
            _unavailable("no openssl for the self-signed certificate")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", c.self_key, "-out", c.self_cert, "-days", "30",
                        "-subj", "/CN=mariadb-zero-config"],
                       check=True, capture_output=True)
    return c


def drain(peer):
    """Wait for the client to close (whatever it sends)."""
    try:
        peer.sock.settimeout(10)
        while peer.sock.recv(65536):
            pass
    except (OSError, ssl.SSLError):
        pass


def native_server(cert, key, proof="good", password=PASSWORD, greet_plugin=b"mysql_native_password",
                  info_cert=None):
    """MariaDB 11.4-like peer: native password; the OK carries the proof ("good"), a
    wrong one ("bad"), or none (None).  Returns what happened."""
    def script(peer):
        try:
            resp = peer.greet(plugin=greet_plugin)
        except (PeerClosed, OSError, ssl.SSLError):
            return "closed"      # the client gave up in or right after the TLS handshake
        if resp["auth"] != native_scramble(password, peer.nonce):
            peer.deny()
            drain(peer)
            return "denied"
        info = b""
        if proof is not None:
            fp = cert_fingerprint(info_cert or cert)
            pwhash = native_password_hash(password)
            if proof == "bad":
                pwhash = native_password_hash(b"another password")
            info = zero_config_proof(pwhash, peer.nonce, fp)
        peer.send(ok_packet(info=bytes([len(info)]) + info if info else b""))
        drain(peer)
        return "ok"
    return TlsServer(script, cert, key)


def tls_error(srv, **kw):
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect(**kw).close()
    assert ei.value.args[0] == CR_SSL_CONNECTION_ERROR, ei.value.args
    return ei.value.args[1]


# =========================================================================== the proof

@pytest.mark.parametrize("mode", ["VERIFY_CA", "VERIFY_IDENTITY"])
@pytest.mark.parametrize("which", ["ca_signed", "self_signed"])
def test_matching_proof_verifies_without_a_ca(certs, mode, which):
    cert, key = ((certs.server_cert, certs.server_key) if which == "ca_signed"
                 else (certs.self_cert, certs.self_key))
    srv = native_server(cert, key)
    conn = srv.connect(ssl_mode=mode)
    core = conn._conn
    assert core.tls_verified_by == "password"
    assert core.tls_peer_fingerprint == cert_fingerprint(cert)
    assert core.info is None or not str(core.info).startswith("\x01")   # the proof is removed
    conn.close()
    assert srv.check() == "ok"


def test_proof_replaces_the_host_name_check(certs):
    """Connector/C checks no host name on a certificate the password proves (the proof
    binds this very certificate): a self-signed certificate for another name passes."""
    srv = native_server(certs.wrong_cert, certs.wrong_key)
    conn = srv.connect(ssl_mode="VERIFY_IDENTITY")
    assert conn._conn.tls_verified_by == "password"
    conn.close()
    srv.check()


def test_mismatching_proof_fails_naming_the_reason(certs):
    srv = native_server(certs.server_cert, certs.server_key, proof="bad")
    msg = tls_error(srv, ssl_mode="VERIFY_CA")
    assert "does not match the certificate" in msg and "man in the middle" in msg
    assert srv.check() == "ok"


def test_proof_for_another_certificate_fails(certs):
    """A man in the middle relaying the real server's proof: it hashes the real
    certificate, not the one the client sees."""
    srv = native_server(certs.server_cert, certs.server_key, info_cert=certs.self_cert)
    msg = tls_error(srv, ssl_mode="VERIFY_IDENTITY")
    assert "possible man in the middle" in msg
    srv.check()


def test_absent_proof_fails_in_verify_modes(certs):
    srv = native_server(certs.server_cert, certs.server_key, proof=None)
    msg = tls_error(srv, ssl_mode="VERIFY_CA")
    assert "certificate verify failed" in msg and "no proof of the password" in msg
    srv.check()


def test_wrong_password_is_1045(certs):
    srv = native_server(certs.server_cert, certs.server_key)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect(password=b"wrong", ssl_mode="VERIFY_CA")
    assert ei.value.args[0] == ER_ACCESS_DENIED
    assert srv.check() == "denied"


@pytest.mark.parametrize("mode", ["PREFERRED", "REQUIRED"])
@pytest.mark.parametrize("proof, verified", [("good", "password"), (None, None), ("bad", None)])
def test_preferred_and_required_follow_the_proof_without_failing(certs, mode, proof, verified):
    srv = native_server(certs.server_cert, certs.server_key, proof=proof)
    conn = srv.connect(ssl_mode=mode)
    assert conn._conn.tls_verified_by == verified
    assert conn._conn.tls_peer_fingerprint == cert_fingerprint(certs.server_cert)
    conn.close()
    srv.check()


def test_a_given_ca_is_not_replaced_by_the_proof(certs):
    """With ssl_ca the chain must verify (Connector/C: no fallback when a CA is set)."""
    srv = native_server(certs.server_cert, certs.server_key)
    msg = tls_error(srv, ssl_mode="VERIFY_CA", ssl_ca=certs.other_ca_cert)
    assert "certificate verify failed" in msg
    assert srv.check() == "closed"


@pytest.mark.parametrize("proof", [None, "good", "bad"])
def test_verified_by_ca(certs, proof):
    srv = native_server(certs.server_cert, certs.server_key, proof=proof)
    conn = srv.connect(ssl_mode="VERIFY_IDENTITY", ssl_ca=certs.ca_cert)
    assert conn._conn.tls_verified_by == "ca"
    assert conn._conn.info is None      # a proof is stripped even when not needed
    conn.close()
    srv.check()


def test_plugin_without_proof_fails_before_answering(certs):
    """caching_sha2_password cannot prove the certificate: VERIFY_CA without a CA fails
    as before, and nothing of the password's is sent to the unverified server."""
    seen = []

    def script(peer):
        peer.cert, peer.key = certs.server_cert, certs.server_key
        try:
            peer.greet(plugin=CACHING_SHA2)
            seen.append("response")
        except (PeerClosed, OSError, ssl.SSLError):
            seen.append("closed")

    srv = TlsServer(script, certs.server_cert, certs.server_key)
    msg = tls_error(srv, ssl_mode="VERIFY_CA")
    assert "certificate verify failed" in msg and "cannot prove" in msg
    srv.check()
    assert seen == ["closed"]


def test_switch_to_a_python_plugin_without_proof_fails(certs, monkeypatch):
    monkeypatch.setitem(_secure.AUTH_PLUGINS, "no_proof", lambda pw, data: b"x")

    def script(peer):
        peer.greet()
        peer.send(b"\xfe" + b"no_proof\x00" + b"data")
        drain(peer)

    srv = TlsServer(script, certs.server_cert, certs.server_key)
    msg = tls_error(srv, ssl_mode="VERIFY_CA")
    assert "cannot prove" in msg and "no_proof" in msg
    srv.check()


def test_empty_password_cannot_prove(certs):
    def script(peer):
        try:
            peer.greet()
        except (PeerClosed, OSError, ssl.SSLError):
            return "closed"
        return "response"

    srv = TlsServer(script, certs.server_cert, certs.server_key)
    msg = tls_error(srv, password=b"", ssl_mode="VERIFY_CA")
    assert "empty password" in msg
    assert srv.check() == "closed"


def test_parsec_proves_the_certificate(certs):
    pytest.importorskip("nacl")
    pytest.importorskip("cryptography")

    def script(peer):
        peer.greet()
        ok, public = peer.parsec(PASSWORD, iteration_factor=1)
        if not ok:
            peer.deny()
            return "denied"
        info = zero_config_proof(peer.parsec_hash, peer.nonce, cert_fingerprint(certs.self_cert))
        peer.send(ok_packet(info=bytes([len(info)]) + info))
        drain(peer)
        return "ok"

    srv = TlsServer(script, certs.self_cert, certs.self_key)
    conn = srv.connect(ssl_mode="VERIFY_IDENTITY")
    assert conn._conn.auth_plugin_name == "parsec"
    assert conn._conn.tls_verified_by == "password"
    conn.close()
    assert srv.check() == "ok"


# =========================================================================== ssl_fingerprint

def colon_hex(fp, upper=True):
    h = fp.hex().upper() if upper else fp.hex()
    return ":".join(h[i:i + 2] for i in range(0, len(h), 2))


@pytest.mark.parametrize("form", ["plain", "colons", "list"])
def test_fingerprint_match_verifies(certs, form):
    fp = cert_fingerprint(certs.wrong_cert)
    value = {"plain": fp.hex(), "colons": colon_hex(fp),
             "list": ["00" * 32, colon_hex(fp, upper=False)]}[form]
    srv = native_server(certs.wrong_cert, certs.wrong_key, proof=None)
    conn = srv.connect(ssl_fingerprint=value)           # implies VERIFY_CA
    assert conn._conn.tls_verified_by == "fingerprint"
    conn.close()
    srv.check()


def test_fingerprint_wins_over_host_name(certs):
    srv = native_server(certs.wrong_cert, certs.wrong_key, proof=None)
    conn = srv.connect(ssl_mode="VERIFY_IDENTITY",
                       ssl_fingerprint=cert_fingerprint(certs.wrong_cert).hex())
    assert conn._conn.tls_verified_by == "fingerprint"
    conn.close()
    srv.check()


def test_fingerprint_mismatch_fails_before_the_password(certs):
    def script(peer):
        try:
            peer.greet()
        except (PeerClosed, OSError, ssl.SSLError):
            return "closed"
        return "response"

    srv = TlsServer(script, certs.server_cert, certs.server_key)
    msg = tls_error(srv, ssl_fingerprint="ab" * 32)
    assert "fingerprint" in msg and colon_hex(cert_fingerprint(certs.server_cert)) in msg
    assert srv.check() == "closed"


@pytest.mark.parametrize("bad", ["abc", "zz" * 32, "ab" * 20, [], [b"x"], 42])
def test_bad_fingerprint_option(bad):
    with pytest.raises(mysqlc.ProgrammingError):
        _secure.resolve_tls(ssl_fingerprint=bad)


def test_fingerprint_option_resolution():
    fp = bytes(range(32))
    opts = _secure.resolve_tls(ssl_fingerprint="sha256:" + colon_hex(fp))
    assert opts["ssl_fingerprint"] == fp and opts["ssl_mode"] == _secure.SSL_MODES["VERIFY_CA"]
    opts = _secure.resolve_tls(ssl={"fingerprint": [fp.hex(), "ff" * 32]}, ssl_mode="REQUIRED")
    assert opts["ssl_fingerprint"] == fp + b"\xff" * 32
    assert opts["ssl_mode"] == _secure.SSL_MODES["REQUIRED"]
    assert _secure.resolve_tls()["ssl_fingerprint"] is None


# =========================================================================== real server (10.11: no proof)

@pytest.fixture(scope="module")
def tls_server(certs):
    if os.environ.get("MYSQLC_TEST_DSN"):
        pytest.skip("MYSQLC_TEST_DSN is set: an external server cannot be restarted with "
                    "the test certificates")
    last = None
    for _ in range(2):
        try:
            srv = PrivateServer(extra_args=certs.server_args()).start()
            break
        except ServerNotAvailable as exc:
            last = exc
    else:
        _unavailable("no private MariaDB server with TLS: %s" % last)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.mark.server
@pytest.mark.allow_skip
def test_real_server_without_proof_follows_the_mode(tls_server, certs):
    kw = tls_server.connect_kwargs()
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(ssl_mode="VERIFY_CA", **kw)
    assert ei.value.args[0] == CR_SSL_CONNECTION_ERROR
    assert "certificate verify failed" in ei.value.args[1]
    conn = mysqlc.connect(ssl_mode="REQUIRED", **kw)
    assert conn._conn.tls_verified_by is None
    assert conn._conn.tls_peer_fingerprint == cert_fingerprint(certs.server_cert)
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
    assert cur.fetchone()[1].startswith("TLS")
    conn.close()
    conn = mysqlc.connect(ssl_mode="VERIFY_IDENTITY", ssl_ca=certs.ca_cert, **kw)
    assert conn._conn.tls_verified_by == "ca"
    conn.close()
    conn = mysqlc.connect(ssl_fingerprint=colon_hex(cert_fingerprint(certs.server_cert)), **kw)
    assert conn._conn.tls_verified_by == "fingerprint"
    conn.close()
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(ssl_fingerprint="00" * 32, **kw)
    assert ei.value.args[0] == CR_SSL_CONNECTION_ERROR


def test_client_ed25519_proves_the_certificate(certs):
    """client_ed25519's hash_password_bin is its public key (Connector/C's
    auth_ed25519_hash).  The peer derives the key as MariaDB's auth_ed25519 does
    (clamped SHA-512(password)[:32] times the base point, libsodium's clamping scalar
    multiplication here) and checks the signature with ``cryptography``."""
    pytest.importorskip("nacl")
    pytest.importorskip("cryptography")
    import hashlib
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from nacl.bindings import crypto_scalarmult_ed25519_base

    public = crypto_scalarmult_ed25519_base(hashlib.sha512(PASSWORD).digest()[:32])

    def script(peer):
        peer.greet()
        nonce = os.urandom(32)
        peer.send(b"\xfe" + b"client_ed25519\x00" + nonce)
        Ed25519PublicKey.from_public_bytes(public).verify(peer.recv(), nonce)
        info = zero_config_proof(public, peer.nonce, cert_fingerprint(certs.self_cert))
        peer.send(ok_packet(info=bytes([len(info)]) + info))
        drain(peer)
        return "ok"

    srv = TlsServer(script, certs.self_cert, certs.self_key)
    conn = srv.connect(ssl_mode="VERIFY_CA")
    assert conn._conn.auth_plugin_name == "client_ed25519"
    assert conn._conn.tls_verified_by == "password"
    conn.close()
    assert srv.check() == "ok"
