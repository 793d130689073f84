"""TLS by default over TCP (issue 14): with no TLS option a connection uses
``ssl_mode=PREFERRED`` -- TLS when the server offers it, as libmysqlclient's default
``--ssl-mode`` -- and says what it got with ``conn.tls_info()``.

Against a private MariaDB started with the certificates of ``tests/_certs.py`` (as
tests/test_tls.py does) and against the suite's default server, which offers no TLS
(no certificates configured): there PREFERRED falls back to plaintext, which is why the
rest of the suite (fault-injection proxies, captures of the received bytes) still sees
plaintext over TCP.  The server side is checked with ``SHOW SESSION STATUS LIKE
'Ssl_cipher'`` (empty without TLS).
"""

import os

import pytest

import mysqlc
import mysqlc.pymysql
from mysqlc.server import PrivateServer, ServerNotAvailable

from _certs import CertsUnavailable, make_certs

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1")
CR_SSL_CONNECTION_ERROR = 2026


def _unavailable(reason):
    if IN_CI:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


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
    for _ in range(2):
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


def tls_test(func):
    """Against this module's TLS server: skips with MYSQLC_TEST_DSN (allow_skip)."""
    return pytest.mark.server(pytest.mark.allow_skip(func))


def ssl_cipher(conn):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
    row = cur.fetchone()
    cur.close()
    return row[1] if row else ""


@tls_test
def test_tcp_without_options_is_encrypted(tls_server):
    with mysqlc.connect(**tls_server.connect_kwargs()) as conn:
        cipher = ssl_cipher(conn)
        assert cipher
        info = conn.tls_info()
        assert info["version"] in ("TLSv1.2", "TLSv1.3"), info
        assert info["cipher"] == cipher
        # no CA was given: encrypted, not verified
        assert info["verified"] is False and info["verified_by"] is None
        cur = conn.cursor()
        cur.execute("SELECT REPEAT('x', 100000), 42")
        assert cur.fetchone() == ("x" * 100000, 42)


@tls_test
def test_localhost_over_tcp_is_encrypted(tls_server):
    kw = dict(tls_server.connect_kwargs(), host="localhost", protocol="tcp")
    with mysqlc.connect(**kw) as conn:
        assert ssl_cipher(conn) and conn.tls_info() is not None


@tls_test
def test_unix_socket_stays_plaintext(tls_server):
    with mysqlc.connect(**tls_server.connect_kwargs(unix=True)) as conn:
        assert conn.get_host_info() == "Localhost via UNIX socket"
        assert ssl_cipher(conn) == ""
        assert conn.tls_info() is None


@tls_test
@pytest.mark.parametrize("off", [{"ssl_mode": "DISABLED"}, {"ssl_mode": "disabled"},
                                 {"ssl": False}, {"ssl_disabled": True}],
                         ids=["ssl_mode", "ssl_mode_lower", "ssl_False", "ssl_disabled"])
def test_off_switches_give_plaintext(tls_server, off):
    with mysqlc.connect(**tls_server.connect_kwargs(), **off) as conn:
        assert ssl_cipher(conn) == ""
        assert conn.tls_info() is None


@tls_test
@pytest.mark.sync_only("the PyMySQL flavour (mysqlc.pymysql) is a sync API")
@pytest.mark.parametrize("off", [{}, {"ssl": False}, {"ssl_disabled": True}],
                         ids=["default", "ssl_False", "ssl_disabled"])
def test_pymysql_flavour(tls_server, off):
    with mysqlc.pymysql.connect(**tls_server.connect_kwargs(), **off) as conn:
        assert bool(ssl_cipher(conn)) is (not off)
        assert (conn.tls_info() is None) is bool(off)


@tls_test
def test_tls_info_of_verified_connections(tls_server, certs):
    kw = tls_server.connect_kwargs()
    with mysqlc.connect(ssl_mode="VERIFY_CA", ssl_ca=certs.ca_cert, **kw) as conn:
        info = conn.tls_info()
        assert info["verified"] is True and info["verified_by"] == "ca"
    with mysqlc.connect(ssl={"ca": certs.ca_cert}, **kw) as conn:   # VERIFY_IDENTITY
        info = conn.tls_info()
        assert info["verified"] is True and info["verified_by"] == "ca+hostname"
    with mysqlc.connect(ssl_mode="REQUIRED", **kw) as conn:
        info = conn.tls_info()
        assert info["verified"] is False and info["verified_by"] is None
    conn = mysqlc.connect(**kw)
    conn.close()
    with pytest.raises(mysqlc.OperationalError) as closed:
        conn.tls_info()
    assert closed.value.args[0] == 2006


@tls_test
@pytest.mark.parametrize("mode", ["VERIFY_CA", "VERIFY_IDENTITY"])
def test_verify_with_a_wrong_ca_still_fails(tls_server, certs, mode):
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(ssl_mode=mode, ssl_ca=certs.other_ca_cert,
                       **tls_server.connect_kwargs()).close()
    assert info.value.args[0] == CR_SSL_CONNECTION_ERROR
    assert "certificate verify failed" in info.value.args[1]


@tls_test
def test_kill_query_side_connection_over_default_tls(tls_server):
    # the interrupt's KILL QUERY side connection (issue 14) uses the same TLS options
    from test_interrupt_kill import _assert_gone, _run_execute, _timed_out
    kw = tls_server.connect_kwargs()
    tid, at, c = _timed_out(kw, _run_execute)
    _assert_gone(tls_server.connect_kwargs(root=True), tid, at)


def test_server_without_tls_connects_in_plaintext(server, conn_kwargs):
    with mysqlc.connect(**conn_kwargs) as conn:
        cur = conn.cursor()
        cur.execute("SHOW GLOBAL VARIABLES LIKE 'have_ssl'")
        row = cur.fetchone()
        if row is not None and row[1] == "YES":
            pytest.skip("the suite's server offers TLS")    # MYSQLC_TEST_DSN's may
        assert ssl_cipher(conn) == ""
        assert conn.tls_info() is None
    with mysqlc.connect(ssl_mode="PREFERRED", **conn_kwargs) as conn:
        assert conn.tls_info() is None
    with pytest.raises(mysqlc.OperationalError) as info:
        mysqlc.connect(ssl_mode="REQUIRED", **conn_kwargs)
    assert info.value.args[0] == CR_SSL_CONNECTION_ERROR
