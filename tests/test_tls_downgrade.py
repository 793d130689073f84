"""No password in clear through TLS that nobody verified (issue 14).

TLS is on by default (ssl_mode PREFERRED) but, without a CA, the certificate may be
anybody's: a man in the middle that offers TLS with its own certificate and then asks for
``mysql_clear_password`` (AuthSwitchRequest) or for caching_sha2_password's full
authentication (AuthMoreData 0x04) must not get the password.  Before TLS became the
default such a client refused both (no secure channel); it still does under PREFERRED.
With TLS the user asked for (``ssl_mode="REQUIRED"``) the password goes through the
encrypted channel as before, and as libmysqlclient does; a verified peer is a secure
channel.  The attacker is a scripted peer (tests/_peer.py ``TlsServer``) whose certificate
the client cannot verify (no CA is given; the name does not match either).
"""

import pytest

import mysqlc

import _certs
import _peer

PASSWORD = "S3cret!"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return _certs.make_certs(str(tmp_path_factory.mktemp("mitm")))


def _attack(certs, ask, **kw):
    got = {}

    def script(peer):
        peer.greet()
        got["tls"] = peer.tls
        try:
            if ask == "clear":
                peer.send(b"\xfe" + b"mysql_clear_password\x00")
            else:
                peer.send(b"\xfe" + b"caching_sha2_password\x00" + b"A" * 20 + b"\x00")
                peer.recv()                      # the scramble answer
                peer.send(b"\x01\x04")           # full authentication, please
            got["password"] = peer.recv()
            peer.send(_peer.err_packet(1045, b"28000", b"denied"))
        except _peer.PeerClosed:
            got["password"] = None

    srv = _peer.TlsServer(script, cert=certs.wrong_cert, key=certs.wrong_key)
    err = None
    try:
        mysqlc.connect(host="127.0.0.1", port=srv.port, user="app", password=PASSWORD,
                       connect_timeout=5, **kw)
    except mysqlc.Error as exc:
        err = exc
    try:
        srv.check()
    except Exception:   # noqa: BLE001 - the peer's side ends as the client closes
        pass
    return got, err


@pytest.mark.parametrize("ask", ["clear", "full"])
def test_default_tls_sends_no_password_to_an_unverified_peer(certs, ask):
    got, err = _attack(certs, ask)
    assert got.get("tls") is True                  # TLS was on by default
    assert not got.get("password") or PASSWORD.encode() not in got["password"]
    assert isinstance(err, mysqlc.OperationalError) and err.args[0] in (2059, 2061)


@pytest.mark.parametrize("ask", ["clear", "full"])
def test_ssl_disabled_sends_no_password_either(certs, ask):
    got, err = _attack(certs, ask, ssl=False)
    assert not got.get("password") or PASSWORD.encode() not in got["password"]
    assert isinstance(err, mysqlc.OperationalError)


def test_required_tls_keeps_full_authentication(certs):
    """ssl_mode=REQUIRED (asked for): caching_sha2's full authentication sends the password
    through the encrypted channel, as before and as libmysqlclient does."""
    got, err = _attack(certs, "full", ssl_mode="REQUIRED")
    assert got.get("tls") is True and got.get("password") == PASSWORD.encode() + b"\x00"
    assert isinstance(err, mysqlc.OperationalError) and err.args[0] == 1045
