"""MariaDB's parsec authentication (MariaDB 11.6+; mysqlc/_parsec.py) and the C core's
multi-round Python plugin interface it runs on (src/session.c, "Python plugins").

No local MariaDB 11.6 is available (the test server is 10.11), so:

- the pieces are checked against published vectors: PBKDF2-HMAC-SHA512 against the
  widely published RFC 6070-style vectors for SHA-512 ("password"/"salt", 1 and 2
  iterations), the Ed25519 signing against RFC 8032 section 7.1 TEST 2; the whole
  derivation (password -> seed -> public key -> signature) is cross-checked with a
  second implementation path: an HMAC-only PBKDF2 written here from RFC 8018 section 5.2
  and the ``cryptography`` package's Ed25519 (the client uses hashlib and PyNaCl);
  MariaDB publishes no password/salt/key vectors for parsec (its KB example string
  has no password), so those are computed, not quoted;
- the exchange runs against a scripted MariaDB 11.6 peer (tests/_peer.py TlsServer /
  TlsPeer.parsec) that plays plugin/auth_parsec's part: it stores only the public key
  derived from the password, sends the 32-byte scramble, expects the empty packet,
  sends the ext-salt ('P', iteration factor, 18-byte salt), verifies the client's
  signature with ``cryptography`` and answers OK or ERR 1045.
"""

import hashlib
import hmac
import struct

import pytest

import mysqlc
from mysqlc import _parsec

from _peer import (PASSWORD, PARSEC, TlsServer, err_packet, ok_packet, parsec_ext_salt,
                   parsec_public_key, parsec_verify)

pytest.importorskip("nacl")
pytest.importorskip("cryptography")

CR_MALFORMED_PACKET = 2027
CR_AUTH_PLUGIN_ERR = 2061
ER_ACCESS_DENIED = 1045


# =========================================================================== vectors

def pbkdf2_rfc8018(password, salt, iterations, dklen):
    """PBKDF2 (RFC 8018 section 5.2) with HMAC-SHA512, from hmac alone."""
    out = b""
    block = 1
    while len(out) < dklen:
        u = hmac.new(password, salt + struct.pack(">I", block), hashlib.sha512).digest()
        t = bytearray(u)
        for _ in range(iterations - 1):
            u = hmac.new(password, u, hashlib.sha512).digest()
            for i, b in enumerate(u):
                t[i] ^= b
        out += bytes(t)
        block += 1
    return out[:dklen]


def test_pbkdf2_sha512_published_vectors():
    # the PBKDF2-HMAC-SHA512 vectors for P="password", S="salt" (c=1, c=2, dkLen=64)
    v1 = ("867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252"
          "c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce")
    v2 = ("e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53c"
          "f76cab2868a39b9f7840edce4fef5a82be67335c77a6068e04112754f27ccf4e")
    assert pbkdf2_rfc8018(b"password", b"salt", 1, 64).hex() == v1
    assert pbkdf2_rfc8018(b"password", b"salt", 2, 64).hex() == v2
    assert hashlib.pbkdf2_hmac("sha512", b"password", b"salt", 2, 64).hex() == v2


def test_signing_matches_rfc8032_test2():
    # RFC 8032 7.1 TEST 2: message 0x72; sign_response signs server || client
    seed = bytes.fromhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
    resp, public = _parsec.sign_response(seed, b"", b"\x72")
    assert public.hex() == "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"
    assert resp[1:].hex() == (
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
        "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")


@pytest.mark.parametrize("factor", [0, 1, 3])
def test_derivation_matches_independent_path(factor):
    password, salt = "pässwörd ✓".encode(), bytes(range(18))
    seed = _parsec.derive_seed(password, salt, factor)
    assert seed == pbkdf2_rfc8018(password, salt, 1024 << factor, 32)
    server, client = bytes(range(32, 64)), bytes(range(100, 132))
    ex = _parsec.ParsecExchange(password, server, client_scramble=client)
    assert ex.response == b""
    answer = ex.more(parsec_ext_salt(salt, factor))
    assert len(answer) == 96 and answer[:32] == client
    public = parsec_public_key(password, salt, factor)            # cryptography's Ed25519
    assert parsec_verify(public, server, answer)
    assert not parsec_verify(public, bytes(32), answer)
    # Ed25519 signatures are deterministic: cryptography signs the same bytes
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    assert answer[32:] == Ed25519PrivateKey.from_private_bytes(seed).sign(server + client)
    # Connector/C's hash_password_bin: 'P', factor, salt, public key
    assert ex.password_hash() == b"P" + bytes([factor]) + salt + public


@pytest.mark.parametrize("packet, errno", [
    (b"", CR_MALFORMED_PACKET),
    (b"P\x00" + bytes(17), CR_MALFORMED_PACKET),
    (b"P\x00" + bytes(19), CR_MALFORMED_PACKET),
    (b"X\x00" + bytes(18), CR_AUTH_PLUGIN_ERR),
    (b"P\x10" + bytes(18), CR_AUTH_PLUGIN_ERR),
])
def test_bad_ext_salt_is_refused(packet, errno):
    with pytest.raises(mysqlc.OperationalError) as ei:
        _parsec.parse_ext_salt(packet)
    assert ei.value.args[0] == errno


def test_scramble_must_be_32_bytes():
    with pytest.raises(mysqlc.OperationalError) as ei:
        _parsec.ParsecExchange(b"pw", bytes(20))
    assert ei.value.args[0] == CR_MALFORMED_PACKET


# =========================================================================== scripted peer

def parsec_server(password=PASSWORD, ext_salt=None, factor=0, after=None):
    """A MariaDB 11.6 peer: native greeting, switch to parsec, OK or ERR 1045."""
    def script(peer):
        peer.greet()
        ok, _ = peer.parsec(password, iteration_factor=factor, ext_salt=ext_salt)
        if ext_salt is not None:
            return "sent"
        if ok:
            peer.send(ok_packet())
            if after:
                after(peer)
        else:
            peer.deny()
        return ok
    return TlsServer(script)


def close_quietly(srv):
    return srv.check()


def test_parsec_correct_password_connects():
    def after(peer):
        assert peer.expect_query(b"SELECT 1") == b"SELECT 1"
        from _peer import coldef, text_row, T_LONGLONG
        peer.resultset([coldef(b"1", T_LONGLONG)], [text_row(b"1")], deprecate_eof=True)
        peer.expect_close()

    srv = parsec_server(after=after)
    conn = srv.connect()
    assert conn._conn.auth_plugin_name == "parsec"
    cur = conn.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)
    conn.close()
    assert srv.check() is True


@pytest.mark.parametrize("factor", [0, 2])
def test_parsec_iteration_factors(factor):
    srv = parsec_server(factor=factor, after=lambda peer: peer.expect_close())
    srv.connect().close()
    assert srv.check() is True


def test_parsec_wrong_password_is_1045():
    srv = parsec_server()
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect(password=b"not the password")
    assert ei.value.args[0] == ER_ACCESS_DENIED
    assert srv.check() is False


@pytest.mark.parametrize("ext_salt", [b"P\x00short", b"P\x00" + bytes(40), b""])
def test_parsec_malformed_salt_is_2027_not_a_hang(ext_salt):
    srv = parsec_server(ext_salt=ext_salt)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect()
    assert ei.value.args[0] == CR_MALFORMED_PACKET, ei.value.args
    assert srv.check() == "sent"


def test_parsec_salt_in_auth_more_data_prefix():
    """A server may send the ext-salt as AuthMoreData (0x01 + salt): the same."""
    def script(peer):
        peer.greet()
        salt = bytes(range(18))
        public = parsec_public_key(PASSWORD, salt)
        scramble = bytes(range(1, 33))
        peer.send(b"\xfe" + PARSEC + b"\x00" + scramble)
        assert peer.recv() == b""
        peer.send(b"\x01" + parsec_ext_salt(salt))
        ok = parsec_verify(public, scramble, peer.recv())
        peer.send(ok_packet() if ok else err_packet(1045, b"28000", b"denied"))
        peer.expect_close()
        return ok

    srv = TlsServer(script)
    srv.connect().close()
    assert srv.check() is True


def test_parsec_scramble_ending_in_nul_is_kept_whole():
    """The scramble is random: a trailing 0x00 belongs to it (the switch request's data is
    given to the Python plugin as sent)."""
    def script(peer):
        peer.greet()
        salt = bytes(18)
        public = parsec_public_key(PASSWORD, salt)
        scramble = bytes(range(1, 32)) + b"\x00"
        peer.send(b"\xfe" + PARSEC + b"\x00" + scramble)
        assert peer.recv() == b""
        peer.send(parsec_ext_salt(salt))
        ok = parsec_verify(public, scramble, peer.recv())
        peer.send(ok_packet() if ok else err_packet(1045, b"28000", b"denied"))
        peer.expect_close()
        return ok

    srv = TlsServer(script)
    srv.connect().close()
    assert srv.check() is True


def test_python_plugin_contract_more_rounds(monkeypatch):
    """The interface: a plugin returning an exchange object gets every later packet."""
    from mysqlc import _secure
    seen = []

    class Exchange:
        response = b"first"

        def more(self, data):
            seen.append(data)
            return b"answer-%d" % len(seen)

    def plugin(password, data):
        seen.append(("start", password, data))
        return Exchange()

    monkeypatch.setitem(_secure.AUTH_PLUGINS, "three_rounds", plugin)

    def script(peer):
        peer.greet()
        peer.send(b"\xfe" + b"three_rounds\x00" + b"challenge")
        assert peer.recv() == b"first"
        peer.send(b"\x01\x00one")          # escaped: starts with 0x00
        assert peer.recv() == b"answer-2"
        peer.send(b"two")                  # unescaped
        assert peer.recv() == b"answer-3"
        peer.send(ok_packet())
        peer.expect_close()

    srv = TlsServer(script)
    srv.connect().close()
    srv.check()
    assert seen == [("start", PASSWORD, b"challenge"), b"\x00one", b"two"]


def test_python_plugin_bytes_only_gets_no_more_rounds(monkeypatch):
    from mysqlc import _secure
    monkeypatch.setitem(_secure.AUTH_PLUGINS, "one_round", lambda pw, data: b"only")

    def script(peer):
        peer.greet()
        peer.send(b"\xfe" + b"one_round\x00" + b"x")
        assert peer.recv() == b"only"
        peer.send(b"\x01more")
        peer.expect_close()

    srv = TlsServer(script)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect()
    assert ei.value.args[0] == CR_MALFORMED_PACKET
    srv.check()
