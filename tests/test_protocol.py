"""Protocol edge cases against a scripted MySQL peer (no real server needed).

A small server written here, in a thread, speaks the server side of the MySQL
client/server protocol from bytes built by hand: it sends a HandshakeV10, parses the
HandshakeResponse41, optionally sends an AuthSwitchRequest, checks the client's
``mysql_native_password`` answer against the published algorithm
``SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw)))`` computed with hashlib, and then answers
COM_QUERY with scripted packets -- well-formed ones (to check decoding, OK-packet
fields, multi-results, 16 MiB framing) and malformed ones (which must give
``OperationalError`` 2027 or 2013, close the connection and never crash).

The tests drive ``mysqlc._core.Connection`` directly (docs/core-api.md), so that no
statement the DB-API layer might send at connect time disturbs the script.

Packets: a 4-byte header (3-byte little-endian payload length, 1-byte sequence id)
and the payload; payloads of 0xFFFFFF bytes or more are split into 0xFFFFFF-byte
fragments, ended by a shorter (possibly empty) one.
"""

import datetime
import decimal
import hashlib
import os
import socket
import struct
import threading
import time

import pytest

import mysqlc
from mysqlc import _core

from _peer import *  # noqa: F401,F403  (wire helpers, Peer, ScriptedServer; see tests/_peer.py)


# =========================================================================== handshake and auth

@pytest.mark.parametrize("caps", [FULL_CAPS, NO_DEPRECATE_EOF_CAPS], ids=["deprecate_eof", "eof"])
def test_native_auth_and_capability_negotiation(caps):
    def script(peer):
        resp = peer.handshake(caps=caps)
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_LONGLONG, charset=BINARY, flags=FLAG_NOT_NULL | FLAG_BINARY)],
                       [text_row(b"1")], deprecate_eof=bool(caps & CLIENT_DEPRECATE_EOF))
        peer.recv_command()   # COM_QUIT
        return resp

    srv = scripted(script)
    c = srv.connect(database=b"mydb")
    assert c.open is True
    assert c.server_version == "5.5.5-10.11.99-MariaDB-scripted"
    assert c.thread_id == 4242
    assert c.protocol_version == 10
    assert c.server_capabilities == caps
    assert c.auth_plugin_name == "mysql_native_password"
    assert c.query(b"SELECT 1") == 1
    assert c.fetch() == [(1,)]
    assert c.fetch() == []
    c.close()
    resp = srv.check()
    assert resp["user"] == USER
    assert resp["database"] == b"mydb"
    assert resp["plugin"] == b"mysql_native_password"
    assert resp["collation"] == UTF8MB4
    # negotiated flags: a subset of what the server offered, with the ones the protocol
    # requires, CLIENT_DEPRECATE_EOF exactly when the server advertises it
    assert resp["caps"] & ~caps == 0, "client asked for flags the server did not advertise"
    for flag in (CLIENT_PROTOCOL_41, CLIENT_SECURE_CONNECTION, CLIENT_PLUGIN_AUTH,
                 CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, CLIENT_CONNECT_WITH_DB,
                 CLIENT_TRANSACTIONS, CLIENT_MULTI_RESULTS):
        assert resp["caps"] & flag, "flag 0x%x not negotiated" % flag
    assert bool(resp["caps"] & CLIENT_DEPRECATE_EOF) == bool(caps & CLIENT_DEPRECATE_EOF)
    assert not resp["caps"] & CLIENT_MULTI_STATEMENTS     # only on request
    assert not resp["caps"] & CLIENT_FOUND_ROWS
    assert c.client_flag == resp["caps"]


def test_requested_flags_are_sent():
    def script(peer):
        resp = peer.handshake()
        peer.recv_command()
        return resp

    srv = scripted(script)
    c = srv.connect(client_flag=CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS)
    c.close()
    resp = srv.check()
    assert resp["caps"] & CLIENT_FOUND_ROWS
    assert resp["caps"] & CLIENT_MULTI_STATEMENTS
    assert resp["database"] is None and not resp["caps"] & CLIENT_CONNECT_WITH_DB


def test_minimal_server_one_byte_auth_length():
    """A server without PLUGIN_AUTH_LENENC_CLIENT_DATA/DEPRECATE_EOF/CONNECT_WITH_DB: the
    auth data is sent with a one-byte length and the client asks for nothing more."""
    caps = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH | CLIENT_LONG_FLAG

    def script(peer):
        resp = peer.handshake(caps=caps)
        peer.expect_query(b"SELECT 'x'")
        peer.resultset([coldef(b"x", T_VAR_STRING)], [text_row(b"x")], deprecate_eof=False)
        return resp

    srv = scripted(script)
    c = srv.connect()
    assert c.query(b"SELECT 'x'") == 1
    assert c.fetch() == [("x",)]
    resp = srv.check()
    assert resp["caps"] & ~caps == 0
    assert len(resp["auth"]) == 20


def test_empty_password_sends_empty_auth_response():
    def script(peer):
        return peer.handshake(password=b"")

    srv = scripted(script)
    c = srv.connect(password=b"")
    assert c.open
    resp = srv.check()
    assert resp["auth"] == b""
    c.close()


@pytest.mark.parametrize("advertised", [b"mysql_native_password", b"caching_sha2_password"])
def test_auth_switch_request(advertised):
    """AuthSwitchRequest to mysql_native_password with a new nonce: the client answers
    with the scramble of the *new* nonce, and the session goes on normally."""
    def script(peer):
        resp = peer.handshake(plugin=advertised, switch_to=b"mysql_native_password")
        peer.expect_query(b"SELECT 2")
        peer.resultset([coldef(b"2", T_LONGLONG, charset=BINARY)], [text_row(b"2")],
                       deprecate_eof=True)
        return resp, peer.nonces, peer.auth_answer

    srv = scripted(script)
    c = srv.connect()
    assert c.auth_plugin_name == "mysql_native_password"
    assert c.query(b"SELECT 2") == 1
    assert c.fetch() == [(2,)]
    resp, nonces, answer = srv.check()
    assert answer == native_scramble(PASSWORD, nonces[1])
    assert answer != native_scramble(PASSWORD, nonces[0])
    c.close()


def test_wrong_password_gets_1045():
    def script(peer):
        peer.handshake(password=b"the-right-one")
        peer.expect_close()

    srv = scripted(script)
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect(password=b"a-wrong-one")
    assert time.monotonic() - t0 < 5
    assert ei.value.args[0] == 1045
    assert "Access denied" in ei.value.args[1]
    srv.check()


def test_wrong_password_after_auth_switch_gets_1045():
    def script(peer):
        peer.handshake(password=b"the-right-one", switch_to=b"mysql_native_password")
        peer.expect_close()

    srv = scripted(script)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect(password=b"a-wrong-one")
    assert ei.value.args[0] == 1045
    srv.check()


def test_unsupported_auth_plugin_is_refused_cleanly():
    def script(peer):
        peer.send(handshake_v10(b"n" * 20), seq=0)
        peer.recv()
        peer.send(b"\xfe" + b"dialog\x00" + b"Password: \x00")
        peer.expect_close()

    srv = scripted(script)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect()
    assert ei.value.args[0] == 2059
    assert "dialog" in ei.value.args[1]
    srv.check()


def test_server_error_instead_of_handshake():
    """A server that refuses at once (ERR 1040 Too many connections)."""
    def script(peer):
        peer.send(err_packet(1040, b"08004", b"Too many connections"), seq=0)

    srv = scripted(script)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect()
    assert ei.value.args == (1040, "Too many connections")
    srv.check()


def test_close_before_handshake_gives_2013():
    def script(peer):
        pass    # accept and close at once

    srv = scripted(script)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect()
    assert ei.value.args[0] == CR_SERVER_LOST
    srv.check()


def test_truncated_handshake_is_malformed():
    def script(peer):
        peer.send(handshake_v10(b"n" * 20)[:20], seq=0)   # cut inside the nonce
        peer.expect_close()

    srv = scripted(script)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect()
    assert ei.value.args[0] == CR_MALFORMED_PACKET
    srv.check()


# =========================================================================== OK packets, results

def test_ok_packet_fields():
    info = b"Rows matched: 300  Changed: 300  Warnings: 7"

    def script(peer):
        peer.handshake()
        peer.expect_query(b"UPDATE t SET a=1")
        peer.send(ok_packet(affected=300, insert_id=2 ** 63 + 5, warnings=7, info=info,
                            status=SERVER_STATUS_AUTOCOMMIT | SERVER_STATUS_NO_BACKSLASH_ESCAPES))
        peer.expect_query(b"SET sql_mode=''")
        peer.send(ok_packet(affected=0, insert_id=0, status=SERVER_STATUS_AUTOCOMMIT))

    srv = scripted(script)
    c = srv.connect()
    assert c.no_backslash_escapes is False
    assert c.query(b"UPDATE t SET a=1") == 0
    assert c.field_count == 0
    assert c.description is None
    assert c.affected_rows == 300
    assert c.insert_id == 2 ** 63 + 5
    assert c.warning_count == 7
    assert c.info == info.decode()
    assert c.server_status == SERVER_STATUS_AUTOCOMMIT | SERVER_STATUS_NO_BACKSLASH_ESCAPES
    assert c.no_backslash_escapes is True
    assert c.query(b"SET sql_mode=''") == 0
    assert c.no_backslash_escapes is False
    assert c.affected_rows == 0 and c.insert_id == 0 and c.warning_count == 0
    srv.check()
    c.close()


@pytest.mark.parametrize("deprecate_eof", [True, False], ids=["deprecate_eof", "eof"])
def test_text_values_decoded(deprecate_eof):
    caps = FULL_CAPS if deprecate_eof else NO_DEPRECATE_EOF_CAPS
    cols = [
        coldef(b"i", T_LONG, charset=BINARY),
        coldef(b"u", T_LONGLONG, charset=BINARY, flags=FLAG_UNSIGNED),
        coldef(b"d", T_DECIMAL, charset=BINARY, decimals=2),
        coldef(b"f", T_DOUBLE, charset=BINARY),
        coldef(b"s", T_VAR_STRING, charset=UTF8MB4),
        coldef(b"l", T_VAR_STRING, charset=LATIN1),
        coldef(b"b", T_BLOB, charset=BINARY, flags=FLAG_BINARY),
        coldef(b"dt", T_DATETIME, charset=BINARY, decimals=6),
        coldef(b"da", T_DATE, charset=BINARY),
        coldef(b"tm", T_TIME, charset=BINARY),
    ]
    rows = [
        text_row(b"-2147483648", b"18446744073709551615", b"-12345678.90", b"0.1",
                 "😀 héllo".encode("utf-8"), "café €".encode("cp1252"), b"\x00\xff\x00",
                 b"2024-01-02 03:04:05.123456", b"2024-02-29", b"-838:59:59"),
        text_row(None, b"0", b"0.00", b"-1.5e300", b"", b"", b"",
                 b"0000-00-00 00:00:00", b"0000-00-00", b"00:00:00"),
    ]

    def script(peer):
        peer.handshake(caps=caps)
        peer.expect_query(b"SELECT *")
        peer.resultset(cols, rows, deprecate_eof=deprecate_eof)
        peer.expect_query(b"SELECT *")
        peer.resultset(cols, rows, deprecate_eof=deprecate_eof)

    srv = scripted(script)
    c = srv.connect()
    assert c.query(b"SELECT *") == 10
    assert c.column_names == ("i", "u", "d", "f", "s", "l", "b", "dt", "da", "tm")
    assert [d[1] for d in c.description] == [T_LONG, T_LONGLONG, T_DECIMAL, T_DOUBLE,
                                             T_VAR_STRING, T_VAR_STRING, T_BLOB, T_DATETIME,
                                             T_DATE, T_TIME]
    expected = [
        (-2147483648, 18446744073709551615, decimal.Decimal("-12345678.90"), 0.1, "😀 héllo",
         "café €", b"\x00\xff\x00", datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
         datetime.date(2024, 2, 29), -datetime.timedelta(hours=838, minutes=59, seconds=59)),
        (None, 0, decimal.Decimal("0.00"), -1.5e300, "", "", b"", None, None,
         datetime.timedelta(0)),
    ]
    got = c.fetch()
    assert got == expected
    assert [type(v) for v in got[0]] == [int, int, decimal.Decimal, float, str, str, bytes,
                                         datetime.datetime, datetime.date, datetime.timedelta]
    assert c.rows_pending is False
    assert c.more_results is False
    # the same, as dicts
    assert c.query(b"SELECT *") == 10
    keys = c.column_names
    assert c.fetch(1, keys=keys) == [dict(zip(keys, expected[0]))]
    assert c.fetch(keys=keys) == [dict(zip(keys, expected[1]))]
    srv.check()
    c.close()


def test_multiple_result_sets():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"CALL p()")
        more = SERVER_STATUS_AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS
        peer.resultset([coldef(b"a", T_LONG, charset=BINARY)], [text_row(b"1"), text_row(b"2")],
                       deprecate_eof=True, status=more)
        peer.resultset([coldef(b"b", T_VAR_STRING)], [text_row(b"x")],
                       deprecate_eof=True, status=more)
        peer.send(ok_packet(affected=0, status=SERVER_STATUS_AUTOCOMMIT))
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_LONG, charset=BINARY)], [text_row(b"1")], deprecate_eof=True)

    srv = scripted(script)
    c = srv.connect()
    assert c.query(b"CALL p()") == 1
    assert c.fetch(1) == [(1,)]
    assert c.rows_pending is True
    with pytest.raises(mysqlc.ProgrammingError) as ei:   # rows unread: out of sync
        c.query(b"SELECT 1")
    assert ei.value.args[0] == 2014
    assert c.fetch() == [(2,)]
    assert c.more_results is True
    assert c.next_result() == 1
    assert c.column_names == ("b",)
    assert c.fetch() == [("x",)]
    assert c.next_result() == 0
    assert c.more_results is False
    assert c.next_result() == -1
    assert c.query(b"SELECT 1") == 1
    assert c.fetch() == [(1,)]
    srv.check()
    c.close()


def test_discard_skips_unread_rows_and_results():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"CALL p()")
        more = SERVER_STATUS_AUTOCOMMIT | SERVER_MORE_RESULTS_EXISTS
        peer.resultset([coldef(b"a", T_LONG, charset=BINARY)],
                       [text_row(str(i).encode()) for i in range(1000)],
                       deprecate_eof=True, status=more)
        peer.send(ok_packet(affected=0, status=SERVER_STATUS_AUTOCOMMIT))
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_LONG, charset=BINARY)], [text_row(b"7")], deprecate_eof=True)

    srv = scripted(script)
    c = srv.connect()
    c.query(b"CALL p()")
    assert c.fetch(3) == [(0,), (1,), (2,)]
    c.discard()
    assert c.rows_pending is False and c.more_results is False
    assert c.query(b"SELECT 1") == 1
    assert c.fetch() == [(7,)]
    srv.check()
    c.close()


def test_error_packet_in_the_middle_of_rows():
    """ERR after some rows (e.g. KILL QUERY): the mapped error, and the connection stays in
    sync and usable."""
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT a")
        peer.send(lenenc_int(1))
        peer.send(coldef(b"a", T_LONG, charset=BINARY))
        peer.send(text_row(b"1"))
        peer.send(err_packet(1317, b"70100", b"Query execution was interrupted"))
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_LONG, charset=BINARY)], [text_row(b"1")], deprecate_eof=True)

    srv = scripted(script)
    c = srv.connect()
    c.query(b"SELECT a")
    assert c.fetch(1) == [(1,)]
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.fetch()
    assert ei.value.args == (1317, "Query execution was interrupted")
    assert c.open is True
    assert c.query(b"SELECT 1") == 1
    assert c.fetch() == [(1,)]
    srv.check()
    c.close()


@pytest.mark.parametrize("errno, cls", [
    (1064, "ProgrammingError"), (1146, "ProgrammingError"), (1062, "IntegrityError"),
    (1264, "DataError"), (1045, "OperationalError"),
])
def test_error_packet_mapping(errno, cls):
    def script(peer):
        peer.handshake()
        peer.expect_query(b"Q")
        peer.send(err_packet(errno, b"42000", b"message \xc3\xa9"))
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_LONG, charset=BINARY)], [text_row(b"1")], deprecate_eof=True)

    srv = scripted(script)
    c = srv.connect()
    with pytest.raises(getattr(mysqlc, cls)) as ei:
        c.query(b"Q")
    assert ei.value.args == (errno, "message é")
    assert c.open
    assert c.query(b"SELECT 1") == 1 and c.fetch() == [(1,)]
    srv.check()
    c.close()


# =========================================================================== 16 MiB framing

@pytest.mark.parametrize("size", [MAXP - 1, MAXP, MAXP + 1, 17 * 1024 * 1024],
                         ids=["maxp-1", "maxp", "maxp+1", "17MiB"])
def test_large_query_is_split_on_send(size):
    """COM_QUERY payload = 1 command byte + the query; a payload of exactly 0xFFFFFF bytes
    (or a multiple) must be followed by an empty packet."""
    query = b"SELECT '" + b"x" * (size - 10) + b"'"
    assert len(query) + 1 == size

    def script(peer):
        peer.handshake()
        got = peer.expect_query()
        frags = list(peer.fragments)
        peer.send(ok_packet())
        return got, frags

    srv = scripted(script)
    c = srv.connect()
    c.max_allowed_packet = 1 << 30   # known: no SELECT @@max_allowed_packet first
    assert c.query(query) == 0
    got, frags = srv.check()
    assert got == query
    expected = []
    left = size
    while True:
        expected.append(min(left, MAXP))
        if left < MAXP:
            break
        left -= MAXP
    assert frags == expected
    c.close()


@pytest.mark.parametrize("vlen", [MAXP - 5, MAXP - 4, MAXP - 3, 17 * 1024 * 1024],
                         ids=["row=maxp-1", "row=maxp", "row=maxp+1", "17MiB"])
def test_large_row_is_joined_on_receive(vlen):
    """A row whose payload is 0xFFFFFF bytes (followed by an empty packet) or more."""
    value = bytes(range(256)) * (vlen // 256) + b"\x07" * (vlen % 256)
    row = text_row(value)
    assert len(row) == len(lenenc_int(vlen)) + vlen

    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT big")
        peer.resultset([coldef(b"big", T_BLOB, charset=BINARY, flags=FLAG_BINARY)],
                       [row, text_row(b"after")], deprecate_eof=True)
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_LONG, charset=BINARY)], [text_row(b"1")], deprecate_eof=True)

    srv = scripted(script)
    c = srv.connect()
    assert c.query(b"SELECT big") == 1
    rows = c.fetch()
    assert len(rows) == 2
    assert rows[0][0] == value
    assert rows[1] == (b"after",)
    assert c.query(b"SELECT 1") == 1 and c.fetch() == [(1,)]
    srv.check()
    c.close()


# =========================================================================== malformed responses

def _expect_malformed(script, run, errno=CR_MALFORMED_PACKET):
    srv = scripted(script)
    c = srv.connect()
    with pytest.raises(mysqlc.OperationalError) as ei:
        run(c)
    assert ei.value.args[0] == errno, ei.value.args
    assert isinstance(ei.value.args[1], str) and ei.value.args[1]
    assert_closed(c)
    c.close()       # idempotent on a closed connection
    srv.check()
    return ei.value


def _query_and_fetch(c):
    c.query(b"SELECT x")
    return c.fetch()


def test_column_count_lies_with_eof():
    """Says 3 columns, sends 2 definitions, then the EOF."""
    def script(peer):
        peer.handshake(caps=NO_DEPRECATE_EOF_CAPS)
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(3))
        peer.send(coldef(b"a", T_LONG, charset=BINARY))
        peer.send(coldef(b"b", T_LONG, charset=BINARY))
        peer.send(eof_packet())
        peer.send(text_row(b"1", b"2"))
        peer.send(eof_packet())
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch)


def test_column_count_lies_with_deprecate_eof():
    """Says 3 columns, sends 2 definitions, then rows."""
    def script(peer):
        peer.handshake(caps=FULL_CAPS)
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(3))
        peer.send(coldef(b"a", T_LONG, charset=BINARY))
        peer.send(coldef(b"b", T_LONG, charset=BINARY))
        peer.send(text_row(b"1", b"2"))
        peer.send(ok_packet(header=b"\xfe"))
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch)


def test_fewer_column_definitions_than_announced_then_ok():
    """Says 2 columns, then EOF right after one definition (no EOF expected there)."""
    def script(peer):
        peer.handshake(caps=FULL_CAPS)
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(2))
        peer.send(coldef(b"a", T_LONG, charset=BINARY))
        peer.send(ok_packet(header=b"\xfe"))
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch)


@pytest.mark.parametrize("deprecate_eof", [True, False], ids=["deprecate_eof", "eof"])
def test_row_with_fewer_values_than_columns(deprecate_eof):
    def script(peer):
        peer.handshake(caps=FULL_CAPS if deprecate_eof else NO_DEPRECATE_EOF_CAPS)
        peer.expect_query(b"SELECT x")
        peer.resultset([coldef(b"a", T_LONG, charset=BINARY), coldef(b"b", T_LONG, charset=BINARY),
                        coldef(b"c", T_VAR_STRING)],
                       [text_row(b"1", b"2")], deprecate_eof=deprecate_eof)
        peer.expect_close()

    exc = _expect_malformed(script, _query_and_fetch)
    assert "fewer" in exc.args[1]


def test_row_with_more_values_than_columns():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.resultset([coldef(b"a", T_LONG, charset=BINARY), coldef(b"b", T_LONG, charset=BINARY)],
                       [text_row(b"1", b"2", b"3")], deprecate_eof=True)
        peer.expect_close()

    exc = _expect_malformed(script, _query_and_fetch)
    assert "more" in exc.args[1]


@pytest.mark.parametrize("row", [
    b"\x05ab",                       # 1-byte length 5, 2 bytes follow
    b"\xfc\x10\x00abc",              # 2-byte length 16
    b"\xfc\x10",                     # 2-byte length cut in the middle
    b"\xfd\x00\x00\x01abc",          # 3-byte length 65536
    b"\x01a\x03bc",                  # second value runs past the end
], ids=["len1", "len2", "len2-cut", "len3", "second"])
def test_lenenc_length_past_the_packet_end(row):
    # (a row packet cannot start with 0xFE unless it is 16 MiB or longer: a shorter one
    # is the end-of-rows EOF/OK packet, so 8-byte lengths are not tested here)
    ncols = 2 if row.startswith(b"\x01a") else 1

    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.resultset([coldef(b"c%d" % i, T_VAR_STRING) for i in range(ncols)], [row],
                       deprecate_eof=True)
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch)


def test_wrong_sequence_id_on_first_response_packet():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(1), seq=5)      # must be 1
        peer.send(coldef(b"a", T_LONG, charset=BINARY))
        peer.send(text_row(b"1"))
        peer.send(ok_packet(header=b"\xfe"))
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch)


def test_wrong_sequence_id_on_a_row():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(1))
        peer.send(coldef(b"a", T_LONG, charset=BINARY))
        peer.send(text_row(b"1"))
        peer.send(text_row(b"2"), seq=peer.seq + 1)   # skips one
        peer.send(ok_packet(header=b"\xfe"))
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch)


def test_wrong_sequence_id_during_handshake():
    def script(peer):
        nonce = b"a" * 20
        peer.send(handshake_v10(nonce), seq=0)
        peer.recv()
        peer.send(ok_packet(), seq=7)         # must be 2
        peer.expect_close()

    srv = scripted(script)
    with pytest.raises(mysqlc.OperationalError) as ei:
        srv.connect()
    assert ei.value.args[0] == CR_MALFORMED_PACKET
    srv.check()


def test_short_column_definition():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(1))
        peer.send(coldef(b"a", T_LONG)[:-6])
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch)


@pytest.mark.parametrize("payload", [b"", b"\x00", b"\x00\x01"], ids=["empty", "ok-short", "ok-no-status"])
def test_malformed_first_response(payload):
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(payload)
        peer.expect_close()

    _expect_malformed(script, lambda c: c.query(b"SELECT x"))


def test_truncated_packet_then_close_gives_2013():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(1))
        peer.send(coldef(b"a", T_VAR_STRING))
        row = text_row(b"y" * 100)
        # header announces 101 bytes, only 10 arrive, then the server goes away
        peer.send_raw(struct.pack("<I", len(row))[:3] + bytes([peer.seq]) + row[:10])
        peer.sock.shutdown(socket.SHUT_WR)
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch, errno=CR_SERVER_LOST)


def test_truncated_header_then_close_gives_2013():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send_raw(b"\x01\x00")     # half a header
        peer.sock.shutdown(socket.SHUT_WR)
        peer.expect_close()

    _expect_malformed(script, lambda c: c.query(b"SELECT x"), errno=CR_SERVER_LOST)


def test_close_instead_of_response_gives_2013():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.sock.shutdown(socket.SHUT_WR)
        peer.expect_close()

    _expect_malformed(script, lambda c: c.query(b"SELECT x"), errno=CR_SERVER_LOST)


def test_read_timeout_gives_2013_promptly():
    done = threading.Event()

    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT SLEEP(100)")
        done.wait(10)       # never answers

    srv = scripted(script)
    c = srv.connect(read_timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.query(b"SELECT SLEEP(100)")
    elapsed = time.monotonic() - t0
    done.set()
    assert ei.value.args[0] == CR_SERVER_LOST
    assert 0.4 <= elapsed < 2.0, elapsed
    assert_closed(c)
    srv.check()


def test_connection_usable_from_other_threads_while_blocked():
    """The GIL is released while the core waits for the server: another Python thread
    runs meanwhile."""
    release = threading.Event()

    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT 1")
        release.wait(10)
        peer.resultset([coldef(b"1", T_LONG, charset=BINARY)], [text_row(b"1")], deprecate_eof=True)

    srv = scripted(script)
    c = srv.connect()
    ticks = []

    def ticker():
        for _ in range(20):
            ticks.append(time.monotonic())
            time.sleep(0.01)
        release.set()

    t = threading.Thread(target=ticker)
    t0 = time.monotonic()
    t.start()
    assert c.query(b"SELECT 1") == 1
    elapsed = time.monotonic() - t0
    t.join()
    assert len(ticks) == 20
    # the answer only comes once the ticker has run; with the GIL held during the wait
    # the ticker could not run and the query would wait for the script's 10 s timeout
    assert elapsed < 5, elapsed
    assert c.fetch() == [(1,)]
    srv.check()
    c.close()


def _big_row_fragments(vlen):
    """The packets (header + payload) of one row holding a `vlen`-byte value, split at
    0xFFFFFF, as a list of (payload_length, payload) pairs."""
    row = text_row(b"q" * vlen)
    frags = []
    pos = 0
    while True:
        chunk = row[pos:pos + MAXP]
        frags.append(chunk)
        pos += len(chunk)
        if len(chunk) < MAXP:
            return frags


def test_wrong_sequence_id_inside_a_multi_packet_row():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(1))
        peer.send(coldef(b"a", T_BLOB, charset=BINARY, flags=FLAG_BINARY))
        first, second = _big_row_fragments(MAXP + 100)
        peer.send_raw(struct.pack("<I", len(first))[:3] + bytes([peer.seq]) + first)
        bad_seq = (peer.seq + 2) & 0xFF            # should be peer.seq + 1
        peer.send_raw(struct.pack("<I", len(second))[:3] + bytes([bad_seq]) + second)
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch)


def test_close_inside_a_multi_packet_row_gives_2013():
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(1))
        peer.send(coldef(b"a", T_BLOB, charset=BINARY, flags=FLAG_BINARY))
        first, second = _big_row_fragments(MAXP + 100)
        peer.send_raw(struct.pack("<I", len(first))[:3] + bytes([peer.seq]) + first)
        peer.sock.shutdown(socket.SHUT_WR)          # the continuation never comes
        peer.expect_close()

    _expect_malformed(script, _query_and_fetch, errno=CR_SERVER_LOST)
