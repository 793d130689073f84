"""A scripted hostile server: what a fault-injecting proxy cannot fake.

tests/test_protocol.py already covers the basic lies (column counts that lie, rows with
too many or too few values, lenenc lengths past the packet end, wrong sequence ids,
a connection closed inside a 16 MiB packet).  This file adds the rest of what a
malicious or broken server can send: a 16 MiB packet that never finishes, absurd
column counts and 8-byte lengths, ERR/EOF packets where definitions belong, an endless
chain of result sets, unsolicited packets, binary rows (prepared statements) with short
NULL bitmaps and values past the end, broken compressed frames, and the values the
fuzzers found.  Each must end in a clean error (or the documented value), promptly,
with the connection closed when the stream is out of sync.
"""

import datetime
import socket
import struct
import threading
import time
import zlib

import pytest

import mysqlc
from mysqlc import _core
from _peer import (
    BINARY, CLIENT_DEPRECATE_EOF, CR_MALFORMED_PACKET, CR_SERVER_LOST, FLAG_BINARY, FULL_CAPS,
    LATIN1, MAXP, PeerClosed, T_BLOB, T_DATETIME, T_DECIMAL, T_LONG, T_LONGLONG, T_TIME, T_VAR_STRING, UTF8MB4,
    assert_closed, coldef, eof_packet, err_packet, lenenc_int, lenenc_str, ok_packet, scripted,
    text_row,
)

CLIENT_COMPRESS = 0x20
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_CLOSE = 0x19
SERVER_MORE_RESULTS_EXISTS = 0x0008


def _expect_error(script, run, errnos=(CR_MALFORMED_PACKET, CR_SERVER_LOST), closed=True,
                  max_seconds=5.0, **connect_kw):
    srv = scripted(script)
    c = srv.connect(**connect_kw)
    t0 = time.monotonic()
    with pytest.raises((mysqlc.OperationalError, mysqlc.InterfaceError)) as ei:
        run(c)
    assert time.monotonic() - t0 < max_seconds
    if errnos is not None:
        assert ei.value.args[0] in errnos, ei.value.args
    if closed:
        assert_closed(c)
    c.close()
    srv.check()
    return ei.value


def _query_all(c):
    c.query(b"SELECT x")
    while True:
        c.fetch()
        if c.next_result() < 0:
            break


# =========================================================================== framing

def test_16mib_packet_that_never_finishes():
    """The first 0xFFFFFF-byte fragment of a row arrives, the continuation never does
    (the server keeps the connection open): read_timeout ends it, the memory of the
    partial row is released."""
    release = threading.Event()

    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(1))
        peer.send(coldef(b"a", T_BLOB, charset=BINARY, flags=FLAG_BINARY))
        row = b"\xfe" + (MAXP * 2).to_bytes(8, "little") + b"z" * (MAXP - 9)
        peer.send_raw(struct.pack("<I", MAXP)[:3] + bytes([peer.seq]) + row)
        release.wait(10)

    try:
        exc = _expect_error(script, _query_all, errnos=(CR_SERVER_LOST,), read_timeout=1.0)
    finally:
        release.set()
    assert "timed out" in exc.args[1]


@pytest.mark.parametrize("count", [lenenc_int(65535), b"\xfe" + b"\xff" * 8, b"\xfc\x00\x00",
                                   b"\xff\x00", b"\xfd\x00\x00\x01"],
                         ids=["65535-then-close", "2^64-1", "zero-2byte", "0xff", "65536"])
def test_absurd_column_counts(count):
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.send(count)
        peer.send(coldef(b"a", T_LONG))
        try:
            peer.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass        # the client hung up already
        peer.expect_close()

    _expect_error(script, _query_all, errnos=None)


def test_eight_byte_value_length_in_a_row():
    """A value claiming 2^63 bytes (0xFE lenenc) in a row that is not 16 MiB long is
    read as the end of rows... unless it is the second value: then it runs past the end."""
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        peer.resultset([coldef(b"a", T_VAR_STRING), coldef(b"b", T_VAR_STRING)],
                       [b"\x01a\xfe" + b"\xff" * 7 + b"\x7f" + b"bc"], deprecate_eof=True)
        peer.expect_close()

    _expect_error(script, _query_all, errnos=(CR_MALFORMED_PACKET,))


@pytest.mark.parametrize("where", ["instead-of-coldef", "after-coldefs-eof-mode"])
def test_err_packet_where_definitions_belong(where):
    def script(peer):
        eof_mode = where == "after-coldefs-eof-mode"
        peer.handshake(caps=FULL_CAPS & ~CLIENT_DEPRECATE_EOF if eof_mode else FULL_CAPS)
        peer.expect_query(b"SELECT x")
        peer.send(lenenc_int(2))
        peer.send(coldef(b"a", T_LONG))
        if eof_mode:
            peer.send(coldef(b"b", T_LONG))
        peer.send(err_packet(1317, b"70100", b"Query execution was interrupted"))
        peer.expect_close()

    _expect_error(script, _query_all, errnos=None)


def test_endless_chain_of_result_sets_ends_when_the_server_goes():
    """SERVER_MORE_RESULTS_EXISTS on every result: the client follows as long as the
    server sends, and gets 2013 when it stops sending."""
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT x")
        for _ in range(500):
            peer.send(ok_packet(status=SERVER_MORE_RESULTS_EXISTS | 2))
        peer.sock.shutdown(2)

    n = {"results": 0}

    def run(c):
        c.query(b"SELECT x")
        while c.next_result() >= 0:
            n["results"] += 1

    _expect_error(script, run, errnos=(CR_SERVER_LOST,))
    assert n["results"] == 499


def test_unsolicited_packet_before_the_next_command():
    """An extra packet after a complete response is read as the (out of order) answer to
    the next command: a clean error, the connection closed."""
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_LONG, charset=BINARY)], [text_row(b"1")], deprecate_eof=True)
        peer.send(ok_packet())          # nobody asked
        peer.expect_query(b"SELECT 2")
        peer.expect_close()

    srv = scripted(script)
    c = srv.connect()
    assert c.query(b"SELECT 1") == 1 and c.fetch() == [(1,)]
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.query(b"SELECT 2")
        c.fetch()
    assert ei.value.args[0] in (CR_MALFORMED_PACKET, CR_SERVER_LOST)
    assert_closed(c)
    srv.check()


def test_ok_packet_with_garbage_session_state():
    """CLIENT_SESSION_TRACK is never asked for; an OK packet with trailing bytes that look
    like session-state info is decoded as the info text, not trusted as lengths."""
    def script(peer):
        peer.handshake()
        peer.expect_query(b"DO 1")
        peer.send(ok_packet(affected=2**64 - 1, insert_id=2**63, info=b"\xfe\xff\xff\xff\xff\xff\xff\xff\xffXY"))
        peer.recv_command()

    srv = scripted(script)
    c = srv.connect()
    assert c.query(b"DO 1") == 0
    assert c.affected_rows == 2**64 - 1 and c.insert_id == 2**63
    assert isinstance(c.info, str)
    c.close()
    srv.check()


# =========================================================================== values the fuzzers found

def _one_value(type_, value, charset=UTF8MB4, flags=0):
    def script(peer):
        peer.handshake()
        peer.expect_query(b"SELECT v")
        peer.resultset([coldef(b"v", type_, charset=charset, flags=flags)], [text_row(value)],
                       deprecate_eof=True)
        try:
            peer.recv_command()
        except (PeerClosed, OSError):
            pass

    srv = scripted(script)
    c = srv.connect()
    try:
        c.query(b"SELECT v")
        return c.fetch()[0][0]
    finally:
        c.close()
        srv.check()


def test_fuzz_latin1_c1_controls_make_a_canonical_str():
    """fuzz_text_value: MySQL latin1 bytes 0x81/0x8D/0x8F/0x90/0x9D map to C1 controls;
    the decoder built a 2-byte-kind str for them, which compared unequal to the equal
    str (PEP 393 requires the smallest kind)."""
    v = _one_value(T_VAR_STRING, b"[/\x81\x8d\x8f\x90\x9d", charset=LATIN1)
    assert v == "[/\x81\x8d\x8f\x90\x9d"
    assert hash(v) == hash("[/\x81\x8d\x8f\x90\x9d")
    assert _one_value(T_VAR_STRING, b"\x80\x81", charset=LATIN1) == "\u20ac\x81"


@pytest.mark.parametrize("text", [b"1\x00", b"12\x00abc", b"7\xa0", b"\x00"])
def test_fuzz_integer_with_nul_or_non_ascii_is_an_error(text):
    """fuzz_text_value: "1\\0" decoded as 1 (PyLong_FromString stopped at the NUL)."""
    with pytest.raises((ValueError, mysqlc.OperationalError)):
        _one_value(T_LONGLONG, text, charset=BINARY)


@pytest.mark.parametrize("text", [b"", b"-", b".", b"1.2.3", b"--1", b"0x10", b"1.5\x00"])
def test_malformed_decimal_text_is_a_malformed_value(text):
    """A DECIMAL value decimal.Decimal refuses raised decimal.InvalidOperation (not a
    DB-API error) and left the result half read ("Commands out of sync" next); it is
    OperationalError 2027 naming the column, and the stream is closed, like every other
    malformed value (src/decode_text.c decode_decimal)."""
    with pytest.raises(mysqlc.OperationalError) as ei:
        _one_value(T_DECIMAL, text, charset=BINARY)
    assert ei.value.args[0] == CR_MALFORMED_PACKET and "'v'" in ei.value.args[1]


def test_fuzz_ten_byte_datetime_needs_its_dashes():
    """fuzz_text_value: a 10-byte DATETIME value '2212_12125' decoded as 2212-12-25."""
    assert _one_value(T_DATETIME, b"2212_12125") is None
    assert _one_value(T_DATETIME, b"2212-12-25") == datetime.datetime(2212, 12, 25)


@pytest.mark.parametrize("text,hours", [(b"-999999999:00:00", -999999999), (b"-838:59:59", None),
                                        (b"-596524:00:00", -596524)])
def test_fuzz_large_negative_time(text, hours):
    """A negative TIME beyond 596523 hours wrapped: the seconds were negated as an int."""
    v = _one_value(T_TIME, text)
    want = -datetime.timedelta(hours=838, minutes=59, seconds=59) if hours is None \
        else datetime.timedelta(hours=hours)
    assert v == want


# =========================================================================== binary protocol

def _prepare_ok(stmt_id, ncols, nparams):
    return b"\x00" + struct.pack("<IHHBH", stmt_id, ncols, nparams, 0, 0)


def _prepared_script(columns, binary_rows, final=None):
    def script(peer):
        peer.handshake()
        p = peer.recv_command()
        assert p[0] == COM_STMT_PREPARE
        peer.send(_prepare_ok(7, len(columns), 0))
        for col in columns:
            peer.send(col)
        p = peer.recv_command()
        assert p[0] == COM_STMT_EXECUTE and struct.unpack_from("<I", p, 1)[0] == 7
        peer.send(lenenc_int(len(columns)))
        for col in columns:
            peer.send(col)
        for r in binary_rows:
            peer.send(r)
        if final is not None:
            peer.send(final)
        peer.expect_close()
    return script


def _prepare_execute_fetch(c):
    stmt_id, nparams, ncols = c.stmt_prepare(b"SELECT ?")
    c.stmt_execute(stmt_id, ())
    return c.fetch()


@pytest.mark.parametrize("row", [b"\x00", b"\x00\x00", b"\x00\x00\x05\x00\x00", b"\x01\x00\x05\x00\x00\x00",
                                 b"\x00\x00" + b"\xff" * 3],
                         ids=["no-bitmap", "short-bitmap-no-values", "short-int", "bad-header",
                              "value-past-end"])
def test_binary_rows_that_lie(row):
    cols = [coldef(b"a", T_LONG, charset=BINARY), coldef(b"b", T_VAR_STRING)]
    _expect_error(_prepared_script(cols, [row]), _prepare_execute_fetch, errnos=None)


@pytest.mark.parametrize("us", [b"\xff\xff\xff\xff", b"\x00\x00\x00\x80"], ids=["-1", "int-min"])
def test_binary_time_microseconds_out_of_range(us):
    cols = [coldef(b"t", T_TIME, charset=BINARY)]
    value = b"\x0c" + b"\x00" + b"\x00\x00\x00\x00" + b"\x01\x02\x03" + us
    row = b"\x00\x00" + value
    srv = scripted(_prepared_script(cols, [row], final=ok_packet(header=b"\xfe")))
    c = srv.connect()
    try:
        with pytest.raises((ValueError, mysqlc.OperationalError)):
            _prepare_execute_fetch(c)
    finally:
        c.close()
        srv.check()


# =========================================================================== compressed protocol

def _compressed_script(frames):
    """Handshake with CLIENT_COMPRESS, then `frames(peer)` gives the raw compressed
    frames answering the client's first command."""
    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS)
        assert peer.response["caps"] & CLIENT_COMPRESS
        peer.sock.settimeout(5)
        peer.sock.recv(65536)          # the compressed COM_QUERY
        peer.send_raw(frames)
        peer.expect_close()
    return script


def _frame(seq, payload, compress=True, ulen=None, clen=None):
    body = zlib.compress(payload) if compress else payload
    ulen = (len(payload) if compress else 0) if ulen is None else ulen
    clen = len(body) if clen is None else clen
    return clen.to_bytes(3, "little") + bytes([seq]) + ulen.to_bytes(3, "little") + body


_OK = b"\x07\x00\x00\x01" + ok_packet()


@pytest.mark.parametrize("frames", [
    _frame(1, _OK, ulen=len(_OK) + 5),                       # inflates short of its length
    _frame(1, _OK, ulen=3),                                   # inflates past its length
    _frame(5, _OK),                                           # wrong compressed sequence id
    _frame(1, b"\x78\x9c" + b"\x00" * 20, compress=False, ulen=200)[:7] + b"\x78\x9cgarbage",
    _frame(1, _OK, compress=False, clen=200),                 # stored frame past the end
    _frame(1, b"\x05\x00\x00\x01\x00", compress=False),       # packet inside ends early
], ids=["short-inflate", "long-inflate", "bad-seq", "not-zlib", "stored-past-end", "inner-truncated"])
def test_broken_compressed_frames(frames):
    def run(c):
        c.query(b"SELECT 1")

    _expect_error(_compressed_script(frames), run, errnos=None, compress=True, read_timeout=1.0)
