"""Connection attributes (CLIENT_CONNECT_ATTRS) in the HandshakeResponse41.

When the server advertises CLIENT_CONNECT_ATTRS (0x00100000) the client sets the flag
and appends, after the auth plugin name, a length-encoded block of length-encoded
key/value string pairs: ``_client_name`` = mysqlc, ``_client_version``, ``_os``,
``_platform``, ``_pid``, ``program_name`` (given, or the script's name) and the user's
``conn_attrs``.  A server without the flag gets no block.

A scripted peer (the shared Peer of tests/_peer.py) decodes the block byte by byte; a private
MariaDB started with performance_schema ON shows what a real server stored
(performance_schema.session_connect_attrs).
"""

import os
import platform
import subprocess
import sys
import textwrap

import pytest

import mysqlc
from mysqlc.server import PrivateServer, ServerNotAvailable
try:                # the scripted-peer helpers (tests/_peer.py)
    from _peer import (
        CLIENT_CONNECT_ATTRS, FULL_CAPS, PASSWORD, USER, read_lenenc, scripted,
    )
except ImportError:  # older layout: they lived in test_protocol
    from test_protocol import (
        CLIENT_CONNECT_ATTRS, FULL_CAPS, PASSWORD, USER, read_lenenc, scripted,
    )


def decode_attrs(rest):
    """The attribute block at the end of a HandshakeResponse41 -> list of (key, value)
    str pairs, in wire order; checks that the block fills the packet exactly."""
    total, pos = read_lenenc(rest, 0)
    assert pos + total == len(rest), ("attribute block length %d, but %d bytes follow"
                                      % (total, len(rest) - pos))
    end = pos + total
    pairs = []
    while pos < end:
        klen, pos = read_lenenc(rest, pos)
        key = rest[pos:pos + klen]
        pos += klen
        vlen, pos = read_lenenc(rest, pos)
        value = rest[pos:pos + vlen]
        pos += vlen
        assert pos <= end, "attribute runs past the block"
        pairs.append((key.decode("utf-8"), value.decode("utf-8")))
    return pairs


def _handshake_only(caps=FULL_CAPS):
    def script(peer):
        resp = peer.handshake(caps=caps, status=0)
        peer.recv_command()          # COM_QUIT
        return resp
    return scripted(script)


def _attrs_sent(caps=FULL_CAPS, **kw):
    srv = _handshake_only(caps)
    c = mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER, password=PASSWORD, **kw)
    c.close()
    resp = srv.check()
    return resp, decode_attrs(resp["rest"]) if resp["rest"] else None


def test_default_attributes():
    resp, pairs = _attrs_sent()
    assert resp["caps"] & CLIENT_CONNECT_ATTRS
    attrs = dict(pairs)
    assert len(attrs) == len(pairs), "duplicate keys: %r" % pairs
    assert attrs["_client_name"] == "mysqlc"
    assert attrs["_client_version"] == mysqlc.__version__
    assert attrs["_os"] == platform.system()
    assert attrs["_platform"] == platform.machine()
    assert attrs["_pid"] == str(os.getpid())
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if argv0:
        assert attrs["program_name"] == argv0
    else:
        assert "program_name" not in attrs
    assert set(attrs) <= {"_client_name", "_client_version", "_os", "_platform", "_pid",
                          "program_name"}


def test_program_name_given():
    _, pairs = _attrs_sent(program_name="billing-worker ✓")
    attrs = dict(pairs)
    assert attrs["program_name"] == "billing-worker ✓"
    assert attrs["_client_name"] == "mysqlc"


def test_conn_attrs_extras():
    extras = {"app_tier": "web", "région": "eu-ouest-☁", "build": 1234, "empty": ""}
    _, pairs = _attrs_sent(program_name="p", conn_attrs=extras)
    attrs = dict(pairs)
    assert attrs["app_tier"] == "web"
    assert attrs["région"] == "eu-ouest-☁"
    assert attrs["build"] == "1234"           # values are sent as strings
    assert attrs["empty"] == ""
    assert attrs["program_name"] == "p"
    for key in ("_client_name", "_client_version", "_os", "_pid"):
        assert key in attrs


def test_long_attribute_values_use_wider_length_prefixes():
    """A 300-byte value takes a 3-byte lenenc length (0xFC), and a block over 64 KiB a
    4-byte one (0xFD)."""
    extras = {"mid": "m" * 300, "big": "b" * 70000}
    resp, pairs = _attrs_sent(conn_attrs=extras)
    assert resp["rest"][0] == 0xFD
    attrs = dict(pairs)
    assert attrs["mid"] == "m" * 300
    assert attrs["big"] == "b" * 70000


def test_no_attributes_without_the_capability():
    resp, pairs = _attrs_sent(caps=FULL_CAPS & ~CLIENT_CONNECT_ATTRS,
                              program_name="x", conn_attrs={"k": "v"})
    assert not resp["caps"] & CLIENT_CONNECT_ATTRS
    assert resp["rest"] == b""
    assert pairs is None


def test_attributes_come_after_database_and_plugin():
    srv = _handshake_only()
    c = mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER, password=PASSWORD,
                       database="somedb", program_name="order-check")
    c.close()
    resp = srv.check()
    assert resp["database"] == b"somedb"
    assert resp["plugin"] == b"mysql_native_password"
    assert dict(decode_attrs(resp["rest"]))["program_name"] == "order-check"


PROBE = textwrap.dedent("""
    import os, sys
    import mysqlc
    c = mysqlc.connect(host="127.0.0.1", port=int(sys.argv[1]), user=sys.argv[2],
                       password=sys.argv[3])
    print(os.getpid(), flush=True)
    c.close()
""")


def test_default_program_name_and_pid_of_a_script(tmp_path):
    """Run as ``python my_tool.py``: program_name is the script's file name and _pid the
    process id of that process."""
    script_path = tmp_path / "my_tool.py"
    script_path.write_text(PROBE)
    srv = _handshake_only()
    out = subprocess.run([sys.executable, str(script_path), str(srv.port), USER.decode(),
                          PASSWORD.decode()], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=60, text=True)
    assert out.returncode == 0, out.stdout
    resp = srv.check()
    attrs = dict(decode_attrs(resp["rest"]))
    assert attrs["program_name"] == "my_tool.py"
    assert attrs["_pid"] == out.stdout.strip()
    assert attrs["_pid"] != str(os.getpid())


# =========================================================================== real server

@pytest.fixture(scope="module")
def pfs_server():
    """A private MariaDB with performance_schema ON (the shared one runs with it OFF)."""
    if os.environ.get("MYSQLC_TEST_DSN"):
        pytest.skip("MYSQLC_TEST_DSN is set: not starting a private server with "
                    "performance_schema")
    srv = PrivateServer(extra_args=["--performance-schema=ON"])
    try:
        srv.start()
    except ServerNotAvailable as exc:
        if os.environ.get("CI", "").strip().lower() in ("true", "1"):
            pytest.fail("cannot start a private server: %s" % exc)
        pytest.skip("cannot start a private server: %s" % exc)
    try:
        yield srv
    finally:
        srv.stop()


def _server_attrs(conn):
    cur = conn.cursor()
    cur.execute("SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_connect_attrs "
                "WHERE PROCESSLIST_ID = CONNECTION_ID() ORDER BY ORDINAL_POSITION")
    return list(cur.fetchall())


@pytest.mark.allow_skip        # skips only under MYSQLC_TEST_DSN
def test_real_server_stores_attributes(pfs_server):
    c = mysqlc.connect(program_name="pfs-check", conn_attrs={"tenant": "t-42 ✓"},
                       **pfs_server.connect_kwargs())
    try:
        cur = c.cursor()
        cur.execute("SELECT @@performance_schema")
        assert cur.fetchone() == (1,)
        pairs = _server_attrs(c)
        attrs = dict(pairs)
        assert attrs["_client_name"] == "mysqlc"
        assert attrs["_client_version"] == mysqlc.__version__
        assert attrs["_os"] == platform.system()
        assert attrs["_pid"] == str(os.getpid())
        assert attrs["program_name"] == "pfs-check"
        assert attrs["tenant"] == "t-42 ✓"
    finally:
        c.close()


@pytest.mark.allow_skip
def test_real_server_attributes_over_unix_socket_and_compressed(pfs_server):
    c = mysqlc.connect(program_name="pfs-unix", compress=True,
                       **pfs_server.connect_kwargs(unix=True))
    try:
        attrs = dict(_server_attrs(c))
        assert attrs["program_name"] == "pfs-unix"
        assert attrs["_client_name"] == "mysqlc"
    finally:
        c.close()
