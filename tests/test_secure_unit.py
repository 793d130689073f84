"""Unit tests (no server) for mysqlc._secure: TLS option resolution, connection
attributes, public-key loading, and the client_ed25519 signature."""
import os

import pytest

import mysqlc
from mysqlc import _secure

DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY = range(5)


@pytest.mark.parametrize("kwargs, mode", [
    ({}, PREFERRED),                    # libmysqlclient's default (issue 14)
    ({"ssl": None}, PREFERRED),
    ({"ssl": False}, DISABLED),
    ({"ssl_disabled": True}, DISABLED),
    ({"ssl_disabled": False}, PREFERRED),
    ({"ssl_mode": "disabled"}, DISABLED),
    ({"ssl": True}, REQUIRED),
    ({"ssl": {}}, REQUIRED),
    ({"ssl": {"cert": "/c.pem", "key": "/k.pem"}}, REQUIRED),
    ({"ssl": {"ca": "/ca.pem"}}, VERIFY_IDENTITY),                      # PyMySQL's rule
    ({"ssl": {"ca": "/ca.pem", "check_hostname": False}}, VERIFY_CA),
    ({"ssl_ca": "/ca.pem"}, VERIFY_IDENTITY),
    ({"ssl_ca": "/ca.pem", "ssl_verify_identity": False}, VERIFY_CA),
    ({"ssl_mode": "required"}, REQUIRED),
    ({"ssl_mode": "REQUIRED", "ssl_ca": "/ca.pem"}, VERIFY_CA),         # MySQL client's rule
    ({"ssl_mode": "VERIFY_CA", "ssl_ca": "/ca.pem"}, VERIFY_CA),
    ({"ssl_mode": "verify_identity"}, VERIFY_IDENTITY),
    ({"ssl_mode": "PREFERRED"}, PREFERRED),
    ({"ssl_mode": "DISABLED", "ssl_ca": "/ca.pem"}, DISABLED),
    ({"ssl_disabled": True, "ssl": {"ca": "/ca.pem"}}, DISABLED),
    ({"ssl_verify_cert": True}, VERIFY_CA),
])
def test_resolve_tls_mode(kwargs, mode):
    assert _secure.resolve_tls(**kwargs)["ssl_mode"] == mode


def test_resolve_tls_paths_and_versions():
    r = _secure.resolve_tls(ssl={"ca": "/a", "capath": "/b", "cert": "/c", "key": "/d",
                                 "cipher": "ECDHE-RSA-AES128-GCM-SHA256"},
                            tls_version="TLSv1.3, TLSv1.2")
    assert (r["ssl_ca"], r["ssl_capath"], r["ssl_cert"], r["ssl_key"]) == ("/a", "/b", "/c", "/d")
    assert r["ssl_cipher"] == "ECDHE-RSA-AES128-GCM-SHA256"
    assert (r["tls_min_version"], r["tls_max_version"]) == (0x0303, 0x0304)
    # keyword forms win over the dict
    assert _secure.resolve_tls(ssl={"ca": "/a"}, ssl_ca="/z")["ssl_ca"] == "/z"


@pytest.mark.parametrize("kwargs", [
    {"ssl_mode": "bogus"}, {"tls_version": "SSLv3"}, {"ssl": {"cafile": "/x"}},
    {"ssl": "yes"}, {"ssl_mode": "REQUIRED", "ssl_disabled": True},
])
def test_resolve_tls_rejects(kwargs):
    with pytest.raises(mysqlc.ProgrammingError):
        _secure.resolve_tls(**kwargs)


def _contexts():
    import ssl
    default = ssl.create_default_context()          # CERT_REQUIRED + check_hostname
    chain = ssl.create_default_context()
    chain.check_hostname = False                     # the chain only
    none = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    none.check_hostname = False
    none.verify_mode = ssl.CERT_NONE                 # encrypted, unverified
    optional = ssl.create_default_context()
    optional.check_hostname = False
    optional.verify_mode = ssl.CERT_OPTIONAL         # verifies in client mode
    return {"default": default, "chain": chain, "none": none, "optional": optional}


@pytest.mark.parametrize("name, mode", [
    ("default", VERIFY_IDENTITY), ("chain", VERIFY_CA), ("none", REQUIRED),
    ("optional", VERIFY_CA)])
def test_resolve_tls_ssl_context_mode(name, mode):
    """ssl=ssl.SSLContext: the context's verify_mode / check_hostname give the mode, the
    context goes to the core, no other TLS option does."""
    ctx = _contexts()[name]
    r = _secure.resolve_tls(ssl=ctx)
    assert r["ssl_mode"] == mode and r["ssl_context"] is ctx
    assert all(r[k] is None for k in ("ssl_ca", "ssl_capath", "ssl_cert", "ssl_key",
                                      "ssl_cipher", "ssl_fingerprint"))
    assert r["tls_min_version"] == r["tls_max_version"] == 0
    # an ssl_mode not stricter than the context is accepted and changes nothing
    assert _secure.resolve_tls(ssl=ctx, ssl_mode="REQUIRED")["ssl_mode"] == mode


def test_resolve_tls_ssl_context_turned_off():
    ctx = _contexts()["default"]
    for kw in ({"ssl_disabled": True}, {"ssl_mode": "DISABLED"}, {"ssl_mode": "disabled"}):
        r = _secure.resolve_tls(ssl=ctx, **kw)
        assert r["ssl_mode"] == DISABLED and r["ssl_context"] is None
    assert _secure.resolve_tls(ssl={"ca": "/a"})["ssl_context"] is None


@pytest.mark.parametrize("name, kwargs, words", [
    ("default", {"ssl_ca": "/ca.pem"}, "ssl_ca"),
    ("default", {"ssl_cert": "/c.pem", "ssl_key": "/k.pem"}, "ssl_cert, ssl_key"),
    ("default", {"ssl_cipher": "AES128-SHA"}, "ssl_cipher"),
    ("default", {"tls_version": "TLSv1.3"}, "tls_version"),
    ("default", {"ssl_fingerprint": "ab" * 32}, "ssl_fingerprint"),
    ("default", {"ssl_verify_identity": True}, "ssl_verify_identity"),
    ("default", {"ssl_mode": "PREFERRED"}, "contradicts"),
    ("none", {"ssl_mode": "VERIFY_CA"}, "CERT_NONE"),
    ("chain", {"ssl_mode": "VERIFY_IDENTITY"}, "check_hostname=False"),
    ("default", {"ssl_mode": "bogus"}, "unknown ssl_mode"),
])
def test_resolve_tls_ssl_context_rejects(name, kwargs, words):
    """Nothing is silently dropped or weakened: options that belong to the context, or a
    mode stricter than (or weaker than TLS-required) the context, are ProgrammingError."""
    with pytest.raises(mysqlc.ProgrammingError) as info:
        _secure.resolve_tls(ssl=_contexts()[name], **kwargs)
    assert words in info.value.args[1], info.value.args


def test_resolve_tls_ssl_context_server_side_refused():
    import ssl
    with pytest.raises(mysqlc.ProgrammingError) as info:
        _secure.resolve_tls(ssl=ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER))
    assert "client context" in info.value.args[1]


def test_core_refuses_ssl_context_with_other_options():
    """The C core's own checks of connect(ssl_context=...) (no server needed: they run
    before any socket is opened)."""
    from mysqlc import _core
    ctx = _contexts()["default"]
    for kw, exc in (({"ssl_mode": PREFERRED}, ValueError),
                    ({"ssl_mode": VERIFY_IDENTITY, "ssl_ca": "/ca.pem"}, ValueError),
                    ({"ssl_mode": VERIFY_IDENTITY, "tls_min_version": 0x0304}, ValueError)):
        with pytest.raises(exc):
            _core.Connection().connect(host="127.0.0.1", port=1, ssl_context=ctx, **kw)
    with pytest.raises(TypeError):
        _core.Connection().connect(host="127.0.0.1", port=1, ssl_mode=REQUIRED,
                                   ssl_context=object())


def test_connect_attrs():
    a = _secure.connect_attrs("myprog", {"team": 7})
    assert a["_client_name"] == "mysqlc"
    assert a["_client_version"] == mysqlc.__version__
    assert a["_pid"] == str(os.getpid())
    assert a["program_name"] == "myprog"
    assert a["team"] == "7"
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in a.items())


def test_load_public_key(tmp_path):
    pem = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"
    assert _secure.load_public_key(pem) == pem.encode()
    assert _secure.load_public_key(pem.encode()) == pem.encode()
    f = tmp_path / "k.pem"
    f.write_text(pem)
    assert _secure.load_public_key(str(f)) == pem.encode()
    assert _secure.load_public_key(None) is None
    with pytest.raises(mysqlc.OperationalError):
        _secure.load_public_key(str(tmp_path / "missing.pem"))


def test_client_ed25519_matches_rfc8032_when_password_is_a_seed():
    """With a 32-byte password, MariaDB's construction is plain Ed25519 with that seed:
    check against RFC 8032 test vector 1 (empty message) and test vector 2."""
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    sig = bytes.fromhex(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
    assert _secure.client_ed25519(seed, b"") == sig
    seed2 = bytes.fromhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
    sig2 = bytes.fromhex(
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
        "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
    assert _secure.client_ed25519(seed2, bytes([0x72])) == sig2
