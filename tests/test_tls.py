"""TLS (issue 5): every ssl_mode, certificate and host-name verification, client
certificates, TLS versions and ciphers, and data over TLS -- against a private MariaDB
started with certificates made by ``tests/_certs.py``, and against scripted peers.

Two kinds of tests:

* **Real server.**  A module-scoped ``mysqlc.server.PrivateServer`` started with
  ``--ssl-ca/--ssl-cert/--ssl-key`` (the CA, and the server certificate for
  ``localhost`` + ``127.0.0.1``), and a second one started with the certificate for
  ``wrong.example`` for the host-name mismatch.  With ``MYSQLC_TEST_DSN`` set these
  tests skip (an external server cannot be restarted with our certificates): they are
  marked ``allow_skip``; without a server binary or ``openssl`` they skip, except under
  CI, where that is a failure.
* **Scripted peers** (no server): a socket server in a thread that speaks the server side
  of the handshake and records every byte the client sends.  A peer that does not offer
  TLS proves that ``ssl_mode=REQUIRED`` (or stricter) sends nothing at all after the
  greeting -- no user name, no password scramble; a peer that does offer TLS (Python's
  ``ssl`` module over memory BIOs, so the raw ciphertext is recorded too) checks SNI,
  host-name and IP-address verification for certificates that name only one of them,
  client certificates, version bounds and the handshake timeout.

Expectations: MySQL's ``ssl_mode`` names; mysqlclient's / PyMySQL's ``ssl`` dict
(``mysqlc._secure.resolve_tls`` documents how the options choose the mode: a CA alone
gives VERIFY_IDENTITY, ``check_hostname=False`` gives VERIFY_CA, ``ssl=True`` or a
cert alone gives REQUIRED); failures are ``OperationalError`` 2026
(CR_SSL_CONNECTION_ERROR) with OpenSSL's reason in the message.
"""

import datetime
import decimal
import hashlib
import os
import socket
import ssl
import struct
import threading
import time

import pytest

import mysqlc
import mysqlc.cursors
from mysqlc.server import PrivateServer, ServerNotAvailable

from _certs import CertsUnavailable, make_certs

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1")

CR_SSL_CONNECTION_ERROR = 2026
CR_SERVER_LOST = 2013
ER_ACCESS_DENIED_ERROR = 1045


def server_test(func):
    """A test against this module's private TLS server: marked ``server`` (so that
    ``-m "not server"`` leaves it out) and ``allow_skip`` (it skips when
    MYSQLC_TEST_DSN points at an external server; the fixtures fail instead of
    skipping under CI when the server or openssl is missing)."""
    return pytest.mark.server(pytest.mark.allow_skip(func))


def _unavailable(reason):
    if IN_CI:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


# =========================================================================== fixtures

@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    try:
        return make_certs(tmp_path_factory.mktemp("certs"))
    except CertsUnavailable as exc:
        _unavailable("cannot make test certificates: %s" % exc)


def _start_private(certs, wrong_name=False):
    if os.environ.get("MYSQLC_TEST_DSN"):
        pytest.skip("MYSQLC_TEST_DSN is set: an external server cannot be restarted with "
                    "the test certificates")
    last = None
    for attempt in range(2):      # a busy machine may fail a start-up once; try again
        try:
            return PrivateServer(extra_args=certs.server_args(wrong_name=wrong_name)).start()
        except ServerNotAvailable as exc:
            last = exc
    _unavailable("no private MariaDB/MySQL server with TLS: %s" % last)


@pytest.fixture(scope="module")
def tls_server(certs):
    """Private server with the CA and the localhost/127.0.0.1 certificate."""
    srv = _start_private(certs)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def wrong_server(certs):
    """Private server whose certificate names only ``wrong.example``."""
    srv = _start_private(certs, wrong_name=True)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def kw(tls_server):
    """connect() arguments for the TLS server's test account over TCP 127.0.0.1."""
    return tls_server.connect_kwargs()


@pytest.fixture
def tls_conn(kw, certs):
    conn = mysqlc.connect(ssl_mode="VERIFY_IDENTITY", ssl_ca=certs.ca_cert, **kw)
    assert ssl_version(conn)
    try:
        yield conn
    finally:
        conn.close()


def connect(base, **extra):
    kw = dict(base)
    kw.update(extra)
    return mysqlc.connect(**kw)


def status(conn, name):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE %s", (name,))
    rows = cur.fetchall()
    cur.close()
    return rows[0][1] if rows else None


def ssl_version(conn):
    """The session's TLS version ('TLSv1.3'...), '' without TLS."""
    return status(conn, "Ssl_version")


def connect_error(base, **extra):
    """The OperationalError that connect() must raise."""
    with pytest.raises(mysqlc.OperationalError) as info:
        connect(base, **extra).close()
    return info.value


def assert_tls_error(err, *fragments):
    assert err.args[0] == CR_SSL_CONNECTION_ERROR, err.args
    msg = err.args[1]
    for f in fragments:
        assert f.lower() in msg.lower(), "%r not in %r" % (f, msg)


# =========================================================================== ssl_mode

@server_test
def test_no_tls_option_means_preferred(kw):
    # libmysqlclient's default (issue 14; tests/test_tls_default.py has the rest):
    # TLS when the server offers it, unverified
    with connect(kw) as conn:
        assert ssl_version(conn).startswith("TLSv1.")
        assert status(conn, "Ssl_cipher")


@server_test
def test_ssl_mode_disabled(kw, certs):
    with connect(kw, ssl_mode="DISABLED", ssl_ca=certs.ca_cert) as conn:
        assert ssl_version(conn) == ""


@server_test
def test_ssl_disabled_switch(kw, certs):
    with connect(kw, ssl={"ca": certs.ca_cert}, ssl_disabled=True) as conn:
        assert ssl_version(conn) == ""


@server_test
def test_ssl_mode_preferred_uses_tls(kw):
    with connect(kw, ssl_mode="PREFERRED") as conn:
        assert ssl_version(conn).startswith("TLSv1.")
        assert status(conn, "Ssl_cipher")


@server_test
@pytest.mark.parametrize("mode", ["REQUIRED", "required", "Required"])
def test_ssl_mode_required(kw, mode):
    with connect(kw, ssl_mode=mode) as conn:
        assert ssl_version(conn).startswith("TLSv1.")
        cur = conn.cursor()
        cur.execute("SELECT 1 + 1")
        assert cur.fetchall() == ((2,),)


@server_test
def test_ssl_mode_verify_ca(kw, certs):
    with connect(kw, ssl_mode="VERIFY_CA", ssl_ca=certs.ca_cert) as conn:
        assert ssl_version(conn).startswith("TLSv1.")


@server_test
def test_ssl_mode_verify_ca_with_capath(kw, certs, tmp_path):
    # capath: a directory of CA certificates named by subject hash (c_rehash layout)
    import subprocess
    out = subprocess.run(["openssl", "x509", "-hash", "-noout", "-in", certs.ca_cert],
                         stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    with open(certs.ca_cert, "rb") as src, open(tmp_path / (out + ".0"), "wb") as dst:
        dst.write(src.read())
    with connect(kw, ssl_mode="VERIFY_CA", ssl_capath=str(tmp_path)) as conn:
        assert ssl_version(conn).startswith("TLSv1.")
    with connect(kw, ssl={"capath": str(tmp_path)}) as conn:      # VERIFY_IDENTITY
        assert ssl_version(conn).startswith("TLSv1.")


@server_test
@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_ssl_mode_verify_identity(kw, certs, host):
    # the certificate names DNS:localhost and IP:127.0.0.1 (protocol="tcp": "localhost"
    # alone means the unix socket, as in libmysqlclient)
    with connect(kw, host=host, protocol="tcp", ssl_mode="VERIFY_IDENTITY",
                 ssl_ca=certs.ca_cert) as conn:
        assert ssl_version(conn).startswith("TLSv1.")


@server_test
def test_verify_identity_over_unix_socket(tls_server, certs):
    # over the unix socket the name to verify is "localhost" (as in MySQL's client)
    kw = tls_server.connect_kwargs(unix=True)
    with connect(kw, host="localhost", ssl_mode="VERIFY_IDENTITY",
                 ssl_ca=certs.ca_cert) as conn:
        assert ssl_version(conn).startswith("TLSv1.")
        assert status(conn, "Ssl_cipher")


@server_test
def test_unbuffered_fetchone_over_tls_and_compression(kw, certs):
    """An unbuffered cursor's fetchone(), row by row, over TLS with and without
    compression: rows up to 40 KB span TLS records and compressed frames (mysqlc.aio
    decodes a row whose bytes have arrived without its greenlet, core.fetch(wait=False),
    and waits in the greenlet for a row still arriving)."""
    for compress in (False, True):
        with connect(kw, ssl_mode="VERIFY_IDENTITY", ssl_ca=certs.ca_cert,
                     compress=compress) as conn:
            assert ssl_version(conn).startswith("TLSv1.")
            cur = conn.cursor(mysqlc.cursors.SSCursor)
            cur.execute("SELECT seq, REPEAT('y', seq * 7919 % 40000) FROM seq_1_to_2000")
            k = 0
            while True:
                row = cur.fetchone()
                if row is None:
                    break
                k += 1
                assert row == (k, "y" * (k * 7919 % 40000))
            assert k == cur.rowcount == 2000


@server_test
def test_preferred_over_unix_socket_stays_plain(tls_server):
    # MySQL's client does not use TLS on a unix socket unless it is required
    kw = tls_server.connect_kwargs(unix=True)
    with connect(kw, host="localhost", ssl_mode="PREFERRED") as conn:
        assert ssl_version(conn) == ""


@server_test
def test_tls_options_from_an_option_file(kw, certs, tmp_path):
    """ssl-ca / ssl-verify-server-cert in my.cnf, read by mysqlc and by mysqlclient:
    both connect verified (the certificate names 127.0.0.1) and encrypted."""
    import MySQLdb
    cnf = tmp_path / "tls.cnf"
    cnf.write_text("[client]\nhost = 127.0.0.1\nport = %d\nuser = %s\npassword = %s\n"
                   "ssl-ca = %s\nssl-verify-server-cert\n"
                   % (kw["port"], kw["user"], kw["password"], certs.ca_cert))
    for connect_fn in (mysqlc.connect, MySQLdb.connect):
        conn = connect_fn(read_default_file=str(cnf))
        try:
            assert ssl_version(conn).startswith("TLSv1.")
        finally:
            conn.close()
    # a CA that did not sign the server's certificate: refused
    cnf.write_text(cnf.read_text().replace(certs.ca_cert, certs.other_ca_cert))
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(read_default_file=str(cnf))
    assert_tls_error(info.value, "certificate verify failed")


# ------------------------------------------------ the ssl dict and keyword spellings

@server_test
@pytest.mark.parametrize("form", [
    "dict-ca", "dict-ca-no-hostname-check", "dict-ca-cert-key", "dict-empty", "ssl-true",
    "kw-ssl_ca", "kw-ssl_ca-verify_cert", "dict-ssl_mode", "dict-verify_identity",
    "kw-ssl_verify_identity",
])
def test_ssl_option_spellings(kw, certs, form):
    """The ways mysqlclient / PyMySQL / mysql-connector users write the TLS options."""
    opts = {
        "dict-ca": dict(ssl={"ca": certs.ca_cert}),
        "dict-ca-no-hostname-check": dict(ssl={"ca": certs.ca_cert, "check_hostname": False}),
        "dict-ca-cert-key": dict(ssl={"ca": certs.ca_cert, "cert": certs.client_cert,
                                      "key": certs.client_key}),
        "dict-empty": dict(ssl={}),
        "ssl-true": dict(ssl=True),
        "kw-ssl_ca": dict(ssl_ca=certs.ca_cert),
        "kw-ssl_ca-verify_cert": dict(ssl_ca=certs.ca_cert, ssl_verify_cert=True),
        "dict-ssl_mode": dict(ssl={"ca": certs.ca_cert, "ssl_mode": "VERIFY_CA"}),
        "dict-verify_identity": dict(ssl={"ca": certs.ca_cert, "verify_identity": True}),
        "kw-ssl_verify_identity": dict(ssl_verify_identity=True, ssl_ca=certs.ca_cert),
    }[form]
    with connect(kw, **opts) as conn:
        assert ssl_version(conn).startswith("TLSv1.")


@server_test
def test_ssl_paths_as_pathlike_and_bytes(kw, certs):
    import pathlib
    with connect(kw, ssl={"ca": pathlib.Path(certs.ca_cert)}) as conn:
        assert ssl_version(conn).startswith("TLSv1.")
    with connect(kw, ssl_ca=os.fsencode(certs.ca_cert)) as conn:
        assert ssl_version(conn).startswith("TLSv1.")


# =========================================================================== failures

@server_test
@pytest.mark.parametrize("opts", ["mode-verify-ca", "mode-verify-identity", "dict",
                                  "mode-required-with-ca"])
def test_wrong_ca_is_refused(kw, certs, opts):
    other = certs.other_ca_cert
    extra = {
        "mode-verify-ca": dict(ssl_mode="VERIFY_CA", ssl_ca=other),
        "mode-verify-identity": dict(ssl_mode="VERIFY_IDENTITY", ssl_ca=other),
        "dict": dict(ssl={"ca": other}),
        # MySQL's client verifies the chain when REQUIRED is given with a CA
        "mode-required-with-ca": dict(ssl_mode="REQUIRED", ssl_ca=other),
    }[opts]
    err = connect_error(kw, **extra)
    # OpenSSL's reason: X509_verify_cert_error_string() of the verify result
    assert_tls_error(err, "certificate verify failed")
    assert ("self-signed certificate in certificate chain" in err.args[1]
            or "unable to get local issuer certificate" in err.args[1]), err.args


@server_test
def test_verify_ca_without_ca_uses_system_store(kw):
    # no ssl_ca: the system's trust store, which does not know the test CA
    err = connect_error(kw, ssl_mode="VERIFY_CA")
    assert_tls_error(err, "certificate verify failed")


@server_test
def test_missing_ca_file(kw, tmp_path):
    missing = str(tmp_path / "no-such-ca.pem")
    err = connect_error(kw, ssl_mode="VERIFY_CA", ssl_ca=missing)
    assert_tls_error(err, "no-such-ca.pem")


@server_test
def test_ca_file_that_is_not_pem(kw, tmp_path):
    bogus = tmp_path / "bogus-ca.pem"
    bogus.write_text("this is not a certificate\n")
    err = connect_error(kw, ssl_mode="VERIFY_CA", ssl_ca=str(bogus))
    assert_tls_error(err, "bogus-ca.pem")


@server_test
def test_client_key_not_matching_certificate(kw, certs):
    err = connect_error(kw, ssl={"ca": certs.ca_cert, "cert": certs.client_cert,
                                 "key": certs.server_key})
    # OpenSSL: "key values mismatch" (from SSL_CTX_use_PrivateKey_file) or the core's
    # own "does not match" (SSL_CTX_check_private_key)
    assert_tls_error(err, "client key")
    assert "mismatch" in err.args[1] or "does not match" in err.args[1], err.args


@server_test
def test_client_key_without_certificate(kw, certs):
    err = connect_error(kw, ssl={"ca": certs.ca_cert, "key": certs.client_key})
    assert_tls_error(err, "key")


@server_test
def test_missing_client_certificate_file(kw, certs, tmp_path):
    err = connect_error(kw, ssl={"ca": certs.ca_cert, "cert": str(tmp_path / "nope.pem"),
                                 "key": certs.client_key})
    assert_tls_error(err, "nope.pem")


@server_test
def test_failed_tls_leaves_no_connection_open(tls_server, kw, certs):
    """After a refused certificate the server sees no lingering session of ours."""
    for _ in range(5):
        connect_error(kw, ssl_mode="VERIFY_CA", ssl_ca=certs.other_ca_cert)
    with connect(tls_server.connect_kwargs(root=True)) as root:
        deadline = time.monotonic() + 10
        while True:
            cur = root.cursor()
            cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                        "WHERE USER = %s", (kw["user"],))
            n = cur.fetchone()[0]
            if n == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert n == 0


# ------------------------------------------------------------ host-name verification

@server_test
@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_hostname_mismatch_is_refused(wrong_server, certs, host):
    kw = wrong_server.connect_kwargs()
    err = connect_error(kw, host=host, protocol="tcp", ssl_mode="VERIFY_IDENTITY",
                        ssl_ca=certs.ca_cert)
    assert_tls_error(err, "certificate verify failed")
    assert "hostname mismatch" in err.args[1] or "IP address mismatch" in err.args[1], err.args
    # the ssl dict with a CA checks the host name too (PyMySQL's rule)
    err = connect_error(kw, host=host, protocol="tcp", ssl={"ca": certs.ca_cert})
    assert_tls_error(err, "mismatch")


@server_test
def test_wrong_name_accepted_without_identity_check(wrong_server, certs):
    kw = wrong_server.connect_kwargs()
    for extra in (dict(ssl_mode="VERIFY_CA", ssl_ca=certs.ca_cert),
                  dict(ssl={"ca": certs.ca_cert, "check_hostname": False}),
                  dict(ssl_mode="REQUIRED"),
                  dict(ssl=True)):
        with connect(kw, **extra) as conn:
            assert ssl_version(conn).startswith("TLSv1."), extra


@server_test
def test_wrong_name_server_with_wrong_ca(wrong_server, certs):
    err = connect_error(wrong_server.connect_kwargs(), ssl_mode="VERIFY_CA",
                        ssl_ca=certs.other_ca_cert)
    assert_tls_error(err, "certificate verify failed")


# =========================================================================== accounts

@pytest.fixture(scope="module")
def tls_accounts(tls_server):
    """Accounts that require TLS (REQUIRE SSL), a client certificate (REQUIRE X509), and
    a client certificate with the test CA's subject and issuer (REQUIRE SUBJECT/ISSUER)."""
    root = mysqlc.connect(**tls_server.connect_kwargs(root=True))
    cur = root.cursor()
    accounts = {
        "req_ssl": "REQUIRE SSL",
        "req_x509": "REQUIRE X509",
        "req_subject": "REQUIRE SUBJECT '/O=mysqlc tests/CN=mysqlc-client' "
                       "AND ISSUER '/O=mysqlc tests/CN=mysqlc test CA'",
        "req_other_subject": "REQUIRE SUBJECT '/O=mysqlc tests/CN=somebody-else'",
    }
    for user, require in accounts.items():
        cur.execute("DROP USER IF EXISTS '%s'@'%%'" % user)
        cur.execute("CREATE USER '%s'@'%%' IDENTIFIED BY 'pw-%s' %s" % (user, user, require))
        cur.execute("GRANT SELECT ON *.* TO '%s'@'%%'" % user)
    root.close()
    base = {"host": "127.0.0.1", "port": tls_server.port}
    return {user: dict(base, user=user, password="pw-" + user) for user in accounts}


def current_user(conn):
    cur = conn.cursor()
    cur.execute("SELECT CURRENT_USER()")
    return cur.fetchone()[0]


@server_test
def test_require_ssl_account_refused_in_plaintext(tls_accounts):
    # no option is PREFERRED (issue 14): TLS, so the account logs in
    with connect(tls_accounts["req_ssl"]) as conn:
        assert current_user(conn) == "req_ssl@%"
    err = connect_error(tls_accounts["req_ssl"], ssl=False)
    assert err.args[0] == ER_ACCESS_DENIED_ERROR, err.args
    err = connect_error(tls_accounts["req_ssl"], ssl_mode="DISABLED")
    assert err.args[0] == ER_ACCESS_DENIED_ERROR, err.args


@server_test
@pytest.mark.parametrize("mode", ["PREFERRED", "REQUIRED"])
def test_require_ssl_account_over_tls(tls_accounts, mode):
    with connect(tls_accounts["req_ssl"], ssl_mode=mode) as conn:
        assert current_user(conn) == "req_ssl@%"
        assert ssl_version(conn).startswith("TLSv1.")


@server_test
def test_require_x509_needs_client_certificate(tls_accounts, certs):
    acct = tls_accounts["req_x509"]
    err = connect_error(acct)                                       # plaintext
    assert err.args[0] == ER_ACCESS_DENIED_ERROR, err.args
    err = connect_error(acct, ssl={"ca": certs.ca_cert})            # TLS, no client cert
    assert err.args[0] == ER_ACCESS_DENIED_ERROR, err.args
    with connect(acct, ssl={"ca": certs.ca_cert, "cert": certs.client_cert,
                            "key": certs.client_key}) as conn:
        assert current_user(conn) == "req_x509@%"
        assert ssl_version(conn).startswith("TLSv1.")
    # keyword spelling, and a key given inside the certificate file's place is not needed
    with connect(acct, ssl_mode="VERIFY_CA", ssl_ca=certs.ca_cert, ssl_cert=certs.client_cert,
                 ssl_key=certs.client_key) as conn:
        assert current_user(conn) == "req_x509@%"


@server_test
def test_client_certificate_and_key_in_one_file(tls_accounts, certs, tmp_path):
    both = tmp_path / "client-both.pem"
    with open(certs.client_cert, "rb") as c, open(certs.client_key, "rb") as k:
        both.write_bytes(c.read() + k.read())
    with connect(tls_accounts["req_x509"], ssl={"ca": certs.ca_cert,
                                               "cert": str(both)}) as conn:
        assert current_user(conn) == "req_x509@%"


@server_test
def test_require_subject_and_issuer(tls_accounts, certs):
    client = {"ca": certs.ca_cert, "cert": certs.client_cert, "key": certs.client_key}
    with connect(tls_accounts["req_subject"], ssl=client) as conn:
        assert current_user(conn) == "req_subject@%"
    err = connect_error(tls_accounts["req_other_subject"], ssl=client)
    assert err.args[0] == ER_ACCESS_DENIED_ERROR, err.args


# =========================================================================== versions, ciphers

@server_test
@pytest.mark.parametrize("versions, expected", [
    ("TLSv1.2", "TLSv1.2"),
    ("TLSv1.3", "TLSv1.3"),
    ("TLSv1.2,TLSv1.3", "TLSv1.3"),
    (["TLSv1.2"], "TLSv1.2"),
])
def test_tls_version(kw, versions, expected):
    with connect(kw, ssl_mode="REQUIRED", tls_version=versions) as conn:
        assert ssl_version(conn) == expected


@server_test
def test_tls_version_in_ssl_dict(kw, certs):
    with connect(kw, ssl={"ca": certs.ca_cert, "tls_version": "TLSv1.2"}) as conn:
        assert ssl_version(conn) == "TLSv1.2"


@server_test
def test_tls12_cipher(kw):
    cipher = "ECDHE-RSA-AES128-GCM-SHA256"
    with connect(kw, ssl_mode="REQUIRED", tls_version="TLSv1.2", ssl_cipher=cipher) as conn:
        assert ssl_version(conn) == "TLSv1.2"
        assert status(conn, "Ssl_cipher") == cipher
    with connect(kw, ssl={"cipher": cipher}, tls_version="TLSv1.2") as conn:
        assert status(conn, "Ssl_cipher") == cipher


@server_test
def test_tls13_ciphersuite(kw):
    suite = "TLS_AES_128_GCM_SHA256"
    with connect(kw, ssl_mode="REQUIRED", tls_version="TLSv1.3", ssl_cipher=suite) as conn:
        assert ssl_version(conn) == "TLSv1.3"
        assert status(conn, "Ssl_cipher") == suite


@server_test
@pytest.mark.parametrize("cipher", ["NOT-A-CIPHER", "NOPE:ALSO-NOPE"])
def test_bad_cipher_string(kw, cipher):
    err = connect_error(kw, ssl_mode="REQUIRED", ssl_cipher=cipher)
    assert_tls_error(err, "cipher", cipher)


# =========================================================================== data over TLS

try:
    # issue 2's round-trip table (tests/test_types.py) and its checks
    from test_types import CASES as TYPE_CASES, _check_select, _setup
except Exception:                                     # pragma: no cover - a compact table
    import collections
    _Case = collections.namedtuple("Case", "id coltype literal expected param sql_mode setup")
    TYPE_CASES = [
        _Case("bigint-min", "BIGINT", "-9223372036854775808", -9223372036854775808, None, None, ()),
        _Case("bigint-unsigned-max", "BIGINT UNSIGNED", "18446744073709551615",
              18446744073709551615, None, None, ()),
        _Case("decimal", "DECIMAL(65,30)", "-12345.000000000000000000000000000001",
              decimal.Decimal("-12345.000000000000000000000000000001"), None, None, ()),
        _Case("datetime6", "DATETIME(6)", "'2024-01-02 03:04:05.123456'",
              datetime.datetime(2024, 1, 2, 3, 4, 5, 123456), None, None, ()),
        _Case("emoji", "VARCHAR(20) CHARACTER SET utf8mb4", "'h\u00e9 \U0001F600'",
              "h\u00e9 \U0001F600", None, None, ()),
        _Case("nul-bytes", "BLOB", "X'00410042000000'", b"\x00A\x00B\x00\x00\x00", None, None,
              ()),
    ]

    def _setup(conn, c):
        cur = conn.cursor()
        cur.execute("CREATE TEMPORARY TABLE rt (id INT PRIMARY KEY, v %s) "
                    "CHARACTER SET utf8mb4" % c.coltype)
        return cur

    def _check_select(conn, expected, id=1):
        cur = conn.cursor()
        cur.execute("SELECT v FROM rt WHERE id = %s", (id,))
        row = cur.fetchone()
        assert row == (expected,)
        assert type(row[0]) is type(expected)


@server_test
@pytest.mark.parametrize("c", TYPE_CASES, ids=[c.id for c in TYPE_CASES])
def test_type_roundtrip_over_tls(tls_conn, c):
    cur = _setup(tls_conn, c)
    cur.execute("INSERT INTO rt (id, v) VALUES (1, %s)" % c.literal)
    _check_select(tls_conn, c.expected)


@server_test
def test_all_types_in_one_row_over_tls(tls_conn):
    cases = [c for c in TYPE_CASES if c.sql_mode is None and not c.setup]
    cur = tls_conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE wide (%s) CHARACTER SET utf8mb4 ROW_FORMAT=DYNAMIC"
                % ", ".join("c%d %s" % (i, c.coltype) for i, c in enumerate(cases)))
    cur.execute("INSERT INTO wide VALUES (%s)" % ", ".join(c.literal for c in cases))
    cur.execute("SELECT * FROM wide")
    row = cur.fetchone()
    assert list(row) == [c.expected for c in cases]
    assert [type(v) for v in row] == [type(c.expected) for c in cases]


def _blob_roundtrip(conn, size=20 * 1024 * 1024 + 3):
    value = (bytes(range(256)) * (size // 256 + 1))[:size - 4] + b"\x00end"
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE big (id INT, v LONGBLOB)")
    cur.execute("INSERT INTO big VALUES (%s, %s)", (1, value))
    cur.execute("SELECT LENGTH(v), MD5(v) FROM big")
    assert cur.fetchone() == (len(value), hashlib.md5(value).hexdigest())
    cur.execute("SELECT v FROM big")
    got = cur.fetchone()[0]
    assert type(got) is bytes and len(got) == len(value)
    assert got == value


@server_test
def test_20mb_blob_over_tls(tls_conn):
    # > 16 MiB: several protocol packets, each many TLS records, both directions
    _blob_roundtrip(tls_conn)


@server_test
def test_20mb_blob_over_tls_with_compression(kw, certs):
    with connect(kw, ssl={"ca": certs.ca_cert}, compress=True) as conn:
        assert ssl_version(conn).startswith("TLSv1.")
        assert status(conn, "Compression") == "ON"
        _blob_roundtrip(conn)


@server_test
def test_large_text_parameter_over_tls(tls_conn):
    value = "\u00e9\U0001F600'\\\"\x00" * 200000
    cur = tls_conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE bigt (v LONGTEXT CHARACTER SET utf8mb4)")
    cur.execute("INSERT INTO bigt VALUES (%s)", (value,))
    cur.execute("SELECT v, CHAR_LENGTH(v) FROM bigt")
    got, n = cur.fetchone()
    assert n == len(value) and got == value


@server_test
def test_million_rows_over_tls(tls_conn):
    cur = tls_conn.cursor()
    n = cur.execute("SELECT seq FROM seq_1_to_1000000")
    rows = cur.fetchall()
    assert n == len(rows) == 1000000
    assert rows[0] == (1,) and rows[-1] == (1000000,)
    assert sum(r[0] for r in rows) == 1000000 * 1000001 // 2
    # the connection is still in step afterwards
    cur.execute("SELECT 'after'")
    assert cur.fetchall() == (("after",),)


@server_test
def test_many_small_round_trips_over_tls(tls_conn):
    cur = tls_conn.cursor()
    for i in range(2000):
        cur.execute("SELECT %s", (i,))
        assert cur.fetchone() == (i,)


@server_test
def test_executemany_over_tls(tls_conn):
    cur = tls_conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE ins (id INT PRIMARY KEY, s VARCHAR(40))")
    rows = [(i, "row \u20ac %d" % i) for i in range(20000)]
    cur.executemany("INSERT INTO ins VALUES (%s, %s)", rows)
    cur.execute("SELECT COUNT(*), SUM(id), MAX(s) FROM ins")
    assert cur.fetchone() == (20000, sum(range(20000)), "row \u20ac 9999")


@server_test
def test_read_timeout_over_tls(kw, certs):
    conn = connect(kw, ssl={"ca": certs.ca_cert}, read_timeout=1)
    assert ssl_version(conn).startswith("TLSv1.")
    cur = conn.cursor()
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as info:
        cur.execute("SELECT SLEEP(3)")
    took = time.monotonic() - t0
    assert info.value.args[0] == CR_SERVER_LOST, info.value.args
    assert 0.8 <= took < 2.9, took
    assert not conn.open
    with pytest.raises(mysqlc.Error):
        cur.execute("SELECT 1")
    conn.close()
    with connect(kw, ssl={"ca": certs.ca_cert}, read_timeout=5) as conn2:
        cur2 = conn2.cursor()
        cur2.execute("SELECT SLEEP(0.2), 7")
        assert cur2.fetchone() == (0, 7)
        assert ssl_version(conn2).startswith("TLSv1.")


@server_test
def test_killed_tls_connection_reports_lost(tls_server, kw, certs):
    """The server ends a TLS session (KILL): the next command fails with 2013/2006, the
    connection is closed, and a new TLS connection works."""
    conn = connect(kw, ssl={"ca": certs.ca_cert})
    victim = conn.thread_id()
    with connect(tls_server.connect_kwargs(root=True)) as root:
        root.cursor().execute("KILL CONNECTION %d" % victim)
    time.sleep(0.2)
    with pytest.raises(mysqlc.OperationalError) as info:
        conn.cursor().execute("SELECT 1")
    assert info.value.args[0] in (CR_SERVER_LOST, 2006), info.value.args
    assert not conn.open
    conn.close()
    with connect(kw, ssl={"ca": certs.ca_cert}) as conn2:
        assert ssl_version(conn2).startswith("TLSv1.")


@server_test
def test_ping_and_reconnect_keep_tls(kw, certs):
    conn = connect(kw, ssl={"ca": certs.ca_cert})
    first = conn.thread_id()
    conn.ping()
    conn.close()
    conn.ping(reconnect=True)
    try:
        assert conn.thread_id() != first
        assert ssl_version(conn).startswith("TLSv1.")     # the options are used again
    finally:
        conn.close()


@server_test
def test_two_threads_each_with_own_tls_connection(kw, certs):
    errors = []
    results = {}
    start = threading.Barrier(2)

    def work(k):
        try:
            with connect(kw, ssl={"ca": certs.ca_cert}) as conn:
                cur = conn.cursor()
                start.wait(10)
                total = 0
                for i in range(15):
                    lo = 1 + k * 1000 + i
                    cur.execute("SELECT seq, CONCAT('v', seq) FROM seq_%d_to_%d"
                                % (lo, lo + 19999))
                    rows = cur.fetchall()
                    assert len(rows) == 20000
                    assert rows[0] == (lo, "v%d" % lo)
                    total += sum(r[0] for r in rows)
                results[k] = (total, ssl_version(conn), conn.thread_id())
        except BaseException as exc:          # reported by the main thread
            errors.append((k, exc))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    for k in range(2):
        expected = sum(20000 * (1 + k * 1000 + i) + 20000 * 19999 // 2 for i in range(15))
        assert results[k][0] == expected
        assert results[k][1].startswith("TLSv1.")
    assert results[0][2] != results[1][2]


@server_test
def test_server_cursor_class_over_tls(kw, certs):
    with connect(kw, ssl={"ca": certs.ca_cert},
                 cursorclass=mysqlc.cursors.DictCursor) as conn:
        cur = conn.cursor()
        cur.execute("SELECT seq AS n FROM seq_1_to_3")
        assert list(cur.fetchall()) == [{"n": 1}, {"n": 2}, {"n": 3}]


@server_test
def test_prepared_statements_over_tls(tls_conn):
    """MariaDB's extended capabilities (bulk execute, metadata cache) must be agreed in
    the SSLRequest already: the server reads them from the first packet.  Regression:
    they were only in the handshake response, so every prepared result failed (2027)."""
    assert tls_conn._conn.bulk_operations
    cur = tls_conn.cursor(prepared=True)
    for lo in (0, 1, 2):    # the 2nd and 3rd executes get no column definitions (cache)
        cur.execute("SELECT seq, 'x' AS s FROM seq_1_to_5 WHERE seq > %s", (lo,))
        assert cur.fetchall() == tuple((n, "x") for n in range(lo + 1, 6))
        assert [d[0] for d in cur.description] == ["seq", "s"]
    cur.execute("CREATE TEMPORARY TABLE tls_bulk (a INT, b VARCHAR(10))")
    assert cur.executemany("INSERT INTO tls_bulk VALUES (%s, %s)",
                           [(i, "v%d" % i) for i in range(1000)]) == 1000
    cur.execute("SELECT COUNT(*), SUM(a) FROM tls_bulk WHERE b LIKE %s", ("v%",))
    assert cur.fetchall() == ((1000, sum(range(1000))),)


# =========================================================================== server without TLS

@pytest.mark.allow_skip
def test_required_against_server_without_tls(server, conn_kwargs):
    """The session's ordinary server (started without certificates)."""
    with mysqlc.connect(**conn_kwargs) as conn:
        cur = conn.cursor()
        cur.execute("SHOW VARIABLES LIKE 'have_ssl'")
        have = cur.fetchall()
    if have and have[0][1] == "YES":
        pytest.skip("this server has TLS enabled")
    err = connect_error(conn_kwargs, ssl_mode="REQUIRED")
    assert_tls_error(err, "does not support TLS")
    # PREFERRED falls back to plaintext, as MySQL's client does
    with connect(conn_kwargs, ssl_mode="PREFERRED") as conn:
        assert ssl_version(conn) == ""


# =========================================================================== scripted peers

CLIENT_LONG_PASSWORD = 0x00000001
CLIENT_FOUND_ROWS = 0x00000002
CLIENT_LONG_FLAG = 0x00000004
CLIENT_CONNECT_WITH_DB = 0x00000008
CLIENT_PROTOCOL_41 = 0x00000200
CLIENT_SSL = 0x00000800
CLIENT_TRANSACTIONS = 0x00002000
CLIENT_SECURE_CONNECTION = 0x00008000
CLIENT_MULTI_STATEMENTS = 0x00010000
CLIENT_MULTI_RESULTS = 0x00020000
CLIENT_PLUGIN_AUTH = 0x00080000
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x00200000
CLIENT_DEPRECATE_EOF = 0x01000000
PEER_CAPS = (CLIENT_LONG_PASSWORD | CLIENT_FOUND_ROWS | CLIENT_LONG_FLAG
             | CLIENT_CONNECT_WITH_DB | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS
             | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS
             | CLIENT_PLUGIN_AUTH | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
             | CLIENT_DEPRECATE_EOF)
COM_QUIT = 0x01

PEER_USER = "tls-secret-user"
PEER_PASSWORD = "tls-secret-password-Zq9"
OK_PACKET = b"\x00\x00\x00\x02\x00\x00\x00"       # OK, autocommit status


class PeerClosed(Exception):
    pass


def greeting(caps, nonce):
    """HandshakeV10 (protocol version 10) with a 20-byte nonce, utf8mb4 server collation."""
    return (b"\x0a" + b"5.5.5-10.11.99-MariaDB-tls-peer\x00" + struct.pack("<I", 77)
            + nonce[:8] + b"\x00" + struct.pack("<H", caps & 0xFFFF) + bytes([45])
            + struct.pack("<H", 0x0002) + struct.pack("<H", caps >> 16) + bytes([21])
            + b"\x00" * 10 + nonce[8:] + b"\x00" + b"mysql_native_password\x00")


class PlainStream:
    def __init__(self, peer):
        self.peer = peer
        self.buf = b""

    def recv_exact(self, n):
        while len(self.buf) < n:
            self.buf += self.peer.recv_raw()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def sendall(self, data):
        self.peer.sock.sendall(data)


class TLSStream:
    """Server side of TLS over memory BIOs, so the raw bytes stay visible to the peer."""

    def __init__(self, peer, ctx, pending=b""):
        self.peer = peer
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.incoming, self.outgoing, server_side=True)
        if pending:
            self.incoming.write(pending)
        self.buf = b""

    def _flush(self):
        data = self.outgoing.read()
        if data:
            self.peer.sock.sendall(data)

    def _fill(self):
        self.incoming.write(self.peer.recv_raw())

    def handshake(self):
        while True:
            try:
                self.obj.do_handshake()
                self._flush()
                return
            except ssl.SSLWantReadError:
                self._flush()
                self._fill()
            except ssl.SSLError:
                self._flush()        # the alert
                raise

    def recv_exact(self, n):
        while len(self.buf) < n:
            try:
                self.buf += self.obj.read(65536)
            except ssl.SSLWantReadError:
                self._flush()
                self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def sendall(self, data):
        self.obj.write(data)
        self._flush()


def send_packet(stream, seq, payload):
    stream.sendall(struct.pack("<I", len(payload))[:3] + bytes([seq & 0xFF]) + payload)


def recv_packet(stream):
    hdr = stream.recv_exact(4)
    n = int.from_bytes(hdr[:3], "little")
    return hdr[3], stream.recv_exact(n)


class ScriptedPeer:
    """One-connection server in a thread on 127.0.0.1; ``script(peer)`` speaks to the
    client.  ``client_bytes`` is every raw byte the client sent (ciphertext included)."""

    def __init__(self, script):
        self.script = script
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.client_bytes = bytearray()
        self.error = None
        self.sock = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.listener.settimeout(30)
            self.sock, _ = self.listener.accept()
            self.sock.settimeout(30)
            self.script(self)
        except PeerClosed:
            pass
        except BaseException as exc:
            self.error = exc
        finally:
            if self.sock is not None:
                self.sock.close()
            self.listener.close()
            self.done.set()

    def recv_raw(self):
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        if not data:
            raise PeerClosed()
        self.client_bytes += data
        return data

    def drain(self):
        """Record whatever the client still sends until it closes the connection."""
        try:
            while True:
                self.recv_raw()
        except (PeerClosed, socket.timeout):
            pass

    def join(self, timeout=30):
        assert self.done.wait(timeout), "scripted peer did not finish"
        if self.error is not None:
            raise self.error

    def kwargs(self, **extra):
        kw = dict(host="127.0.0.1", port=self.port, user=PEER_USER, password=PEER_PASSWORD,
                  database="peerdb", connect_timeout=10, read_timeout=10,
                  protocol="tcp")   # host="localhost" too: the peer listens on TCP
        kw.update(extra)
        return kw


def no_tls_script(peer):
    """Greet without CLIENT_SSL, then only listen."""
    nonce = os.urandom(20).replace(b"\x00", b"\x01")
    send_packet(PlainStream(peer), 0, greeting(PEER_CAPS, nonce))
    peer.drain()


def tls_script(cert, key, client_ca=None, max_version=None, stall=None):
    """Greet with CLIENT_SSL, read the SSLRequest, run the TLS server handshake with
    ``cert``/``key`` (asking for a client certificate when ``client_ca`` is given), then
    accept any credentials and answer every command with OK until COM_QUIT."""
    def script(peer):
        peer.sni = []
        peer.tls_error = None
        peer.response = None
        peer.commands = []
        plain = PlainStream(peer)
        nonce = os.urandom(20).replace(b"\x00", b"\x01")
        send_packet(plain, 0, greeting(PEER_CAPS | CLIENT_SSL, nonce))
        peer.ssl_request = recv_packet(plain)
        if stall is not None:
            time.sleep(stall)
            return
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        if max_version is not None:
            ctx.maximum_version = max_version
        if client_ca is not None:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(client_ca)
        ctx.sni_callback = lambda obj, name, c: peer.sni.append(name)
        tls = TLSStream(peer, ctx, plain.buf)
        try:
            tls.handshake()
        except (ssl.SSLError, PeerClosed) as exc:
            peer.tls_error = exc
            peer.drain()
            return
        peer.tls_version = tls.obj.version()
        peer.peer_cert = tls.obj.getpeercert()
        seq, resp = recv_packet(tls)
        peer.response = (seq, resp)
        send_packet(tls, seq + 1, OK_PACKET)
        while True:
            try:
                _, cmd = recv_packet(tls)
            except (PeerClosed, ssl.SSLError):
                return
            if cmd[:1] == bytes([COM_QUIT]):
                peer.drain()
                return
            peer.commands.append(cmd)
            send_packet(tls, 1, OK_PACKET)
    return script


def handshake_user(resp):
    """User name of a HandshakeResponse41 payload."""
    return resp[32:resp.index(b"\x00", 32)]


# ------------------------------------------------------ TLS required, server has none

@pytest.mark.parametrize("opts", [
    dict(ssl_mode="REQUIRED"),
    dict(ssl_mode="VERIFY_CA", ssl_ca="CA"),
    dict(ssl_mode="VERIFY_IDENTITY", ssl_ca="CA"),
    dict(ssl={"ca": "CA"}),
    dict(ssl=True),
    dict(ssl_ca="CA", compress=True),
], ids=["required", "verify_ca", "verify_identity", "ssl-dict", "ssl-true", "ssl_ca-compress"])
def test_tls_required_but_not_offered_sends_nothing(opts, tmp_path):
    """A server without CLIENT_SSL: the client fails with 2026 and sends not a single
    byte after the greeting -- certainly no user name and no password scramble."""
    opts = {k: (str(tmp_path / "unused-ca.pem") if v == "CA" else v) for k, v in opts.items()}
    peer = ScriptedPeer(no_tls_script)
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(**peer.kwargs(**opts))
    peer.join()
    assert_tls_error(info.value, "does not support TLS")
    assert bytes(peer.client_bytes) == b"", bytes(peer.client_bytes)[:200]


def test_preferred_falls_back_to_plaintext_when_not_offered():
    """PREFERRED (MySQL's default) continues in plaintext when the server has no TLS: the
    handshake response follows the greeting directly (documented, as in MySQL)."""
    def script(peer):
        plain = PlainStream(peer)
        send_packet(plain, 0, greeting(PEER_CAPS, os.urandom(20).replace(b"\x00", b"\x01")))
        seq, resp = recv_packet(plain)
        peer.response = (seq, resp)
        send_packet(plain, seq + 1, OK_PACKET)
        while True:
            _, cmd = recv_packet(plain)
            if cmd[:1] == bytes([COM_QUIT]):
                return
            send_packet(plain, 1, OK_PACKET)
    peer = ScriptedPeer(script)
    conn = mysqlc.connect(**peer.kwargs(ssl_mode="PREFERRED"))
    conn.close()
    peer.join()
    seq, resp = peer.response
    assert seq == 1
    caps = struct.unpack_from("<I", resp)[0]
    assert not caps & CLIENT_SSL
    assert handshake_user(resp) == PEER_USER.encode()


def test_tls_offered_then_connection_dropped(certs):
    """The server offers TLS but closes after the SSLRequest (a downgrade attempt): 2026
    or 2013, and the client sent only the 32-byte SSLRequest and its TLS ClientHello,
    no credentials."""
    def script(peer):
        plain = PlainStream(peer)
        send_packet(plain, 0, greeting(PEER_CAPS | CLIENT_SSL,
                                       os.urandom(20).replace(b"\x00", b"\x01")))
        peer.ssl_request = recv_packet(plain)
        peer.sock.shutdown(socket.SHUT_WR)
        peer.drain()
    peer = ScriptedPeer(script)
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(**peer.kwargs(ssl={"ca": certs.ca_cert}))
    peer.join()
    assert info.value.args[0] in (CR_SSL_CONNECTION_ERROR, CR_SERVER_LOST), info.value.args
    raw = bytes(peer.client_bytes)
    assert raw[:4] == b"\x20\x00\x00\x01", raw[:40]          # SSLRequest, seq 1
    assert raw[36:38] == b"\x16\x03", raw[36:60]               # TLS handshake record
    assert PEER_USER.encode() not in raw


def test_tls_offered_then_plaintext_answer(certs):
    """The server offers TLS but answers the SSLRequest with a plaintext OK packet
    instead of a TLS ServerHello: the handshake fails (2026) and no credentials leave."""
    def script(peer):
        plain = PlainStream(peer)
        send_packet(plain, 0, greeting(PEER_CAPS | CLIENT_SSL,
                                       os.urandom(20).replace(b"\x00", b"\x01")))
        peer.ssl_request = recv_packet(plain)
        send_packet(plain, 2, OK_PACKET)
        peer.drain()
    peer = ScriptedPeer(script)
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(**peer.kwargs(ssl_mode="REQUIRED"))
    peer.join()
    assert info.value.args[0] == CR_SSL_CONNECTION_ERROR, info.value.args
    assert PEER_USER.encode() not in bytes(peer.client_bytes)


# ------------------------------------------------------------ TLS peer: what goes on the wire

def test_credentials_travel_only_inside_tls(certs):
    peer = ScriptedPeer(tls_script(certs.server_cert, certs.server_key))
    conn = mysqlc.connect(**peer.kwargs(ssl={"ca": certs.ca_cert}))
    conn.close()
    peer.join()
    assert peer.tls_error is None
    seq, req = peer.ssl_request
    assert seq == 1 and len(req) == 32
    caps = struct.unpack_from("<I", req)[0]
    assert caps & CLIENT_SSL and caps & CLIENT_PROTOCOL_41
    assert req[9:] == b"\x00" * 23
    seq, resp = peer.response
    assert seq == 2                       # the sequence continues inside TLS
    assert struct.unpack_from("<I", resp)[0] & CLIENT_SSL
    assert handshake_user(resp) == PEER_USER.encode()
    raw = bytes(peer.client_bytes)
    for secret in (PEER_USER.encode(), b"peerdb", PEER_PASSWORD.encode()):
        assert secret not in raw
    assert peer.tls_version in ("TLSv1.2", "TLSv1.3")


@pytest.mark.parametrize("host, sni", [
    ("localhost", "localhost"),
    ("127.0.0.1", None),
])
def test_sni(certs, host, sni):
    """SNI carries the host name the user gave, never an IP address (RFC 6066)."""
    peer = ScriptedPeer(tls_script(certs.server_cert, certs.server_key))
    conn = mysqlc.connect(**peer.kwargs(host=host, ssl_mode="REQUIRED"))
    conn.close()
    peer.join()
    assert peer.sni == [sni]


IDENTITY_CASES = [
    # (certificate, host, accepted?)
    ("server_cert", "localhost", True),       # DNS:localhost, IP:127.0.0.1
    ("server_cert", "127.0.0.1", True),
    ("dns_only_cert", "localhost", True),     # DNS:localhost only
    ("dns_only_cert", "127.0.0.1", False),
    ("ip_only_cert", "127.0.0.1", True),      # IP:127.0.0.1 only
    ("ip_only_cert", "localhost", False),
    ("wrong_cert", "localhost", False),       # DNS:wrong.example only
    ("wrong_cert", "127.0.0.1", False),
]


@pytest.mark.parametrize("cert, host, accepted", [
    pytest.param(c, h, a, id="%s-%s" % (c, h)) for c, h, a in IDENTITY_CASES])
def test_verify_identity_names(certs, cert, host, accepted):
    """VERIFY_IDENTITY checks the name the user gave: a DNS name against the DNS
    names of the certificate, an IP address against its IP addresses."""
    key = certs.wrong_key if cert == "wrong_cert" else certs.server_key
    peer = ScriptedPeer(tls_script(getattr(certs, cert), key))
    kw = peer.kwargs(host=host, ssl_mode="VERIFY_IDENTITY", ssl_ca=certs.ca_cert)
    if accepted:
        mysqlc.connect(**kw).close()
        peer.join()
        assert peer.tls_error is None
        assert handshake_user(peer.response[1]) == PEER_USER.encode()
    else:
        with pytest.raises(mysqlc.OperationalError) as info:
            mysqlc.connect(**kw)
        peer.join()
        assert_tls_error(info.value, "certificate verify failed")
        assert "mismatch" in info.value.args[1], info.value.args
        assert peer.response is None
        assert PEER_USER.encode() not in bytes(peer.client_bytes)
    # VERIFY_CA never looks at the names
    peer = ScriptedPeer(tls_script(getattr(certs, cert), key))
    mysqlc.connect(**peer.kwargs(host=host, ssl_mode="VERIFY_CA",
                                 ssl_ca=certs.ca_cert)).close()
    peer.join()
    assert peer.response is not None


def test_untrusted_certificate_refused_by_peer_test(certs):
    peer = ScriptedPeer(tls_script(certs.server_cert, certs.server_key))
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(**peer.kwargs(ssl_mode="VERIFY_CA", ssl_ca=certs.other_ca_cert))
    peer.join()
    assert_tls_error(info.value, "certificate verify failed")
    assert peer.response is None
    assert PEER_USER.encode() not in bytes(peer.client_bytes)


def test_client_certificate_presented(certs):
    peer = ScriptedPeer(tls_script(certs.server_cert, certs.server_key,
                                   client_ca=certs.ca_cert))
    conn = mysqlc.connect(**peer.kwargs(ssl={"ca": certs.ca_cert, "cert": certs.client_cert,
                                             "key": certs.client_key}))
    conn.close()
    peer.join()
    subject = dict(x[0] for x in peer.peer_cert["subject"])
    assert subject["commonName"] == "mysqlc-client"


def test_no_client_certificate_when_server_demands_one(certs):
    peer = ScriptedPeer(tls_script(certs.server_cert, certs.server_key,
                                   client_ca=certs.ca_cert))
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(**peer.kwargs(ssl={"ca": certs.ca_cert}))
    peer.join()
    # TLS 1.3: the server's alert arrives after the client's Finished, so the failure may
    # show up while the client reads the answer to its handshake response (2013)
    assert info.value.args[0] in (CR_SSL_CONNECTION_ERROR, CR_SERVER_LOST), info.value.args
    assert peer.response is None


def test_tls_version_bounds_disjoint(certs):
    peer = ScriptedPeer(tls_script(certs.server_cert, certs.server_key,
                                   max_version=ssl.TLSVersion.TLSv1_2))
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(**peer.kwargs(ssl_mode="REQUIRED", tls_version="TLSv1.3"))
    peer.join()
    assert_tls_error(info.value)
    assert "version" in info.value.args[1].lower(), info.value.args


def test_tls_handshake_timeout(certs):
    """A server that never answers the ClientHello: connect_timeout bounds the TLS
    handshake too."""
    peer = ScriptedPeer(tls_script(certs.server_cert, certs.server_key, stall=4))
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(**peer.kwargs(ssl_mode="REQUIRED", connect_timeout=1))
    took = time.monotonic() - t0
    peer.join()
    assert info.value.args[0] in (CR_SSL_CONNECTION_ERROR, CR_SERVER_LOST, 2003), info.value.args
    assert took < 3.5, took
