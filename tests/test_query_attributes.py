"""Query attributes (MySQL 8.0.23+, CLIENT_QUERY_ATTRIBUTES; MariaDB has none).

A scripted MySQL 8 peer decodes the attribute block of COM_QUERY and COM_STMT_EXECUTE
as the MySQL docs ("COM_QUERY", "COM_STMT_EXECUTE") publish it - parameter_count,
parameter_set_count, NULL bitmap, new_params_bind_flag, type and name per value, the
values in the binary protocol, then the query - and answers with a result set echoing
what it decoded (name, type, unsigned flag, repr of the value), so the tests check that
names, types and values arrive exactly.  Against the real MariaDB, attributes raise
NotSupportedError and the connection stays usable.
"""

import datetime
import struct
from decimal import Decimal

import pytest

import mysqlc
from mysqlc.constants import CLIENT

from _peer import (FULL_CAPS, PASSWORD, USER, coldef, lenenc_int, lenenc_str, ok_packet,
                   read_lenenc, scripted, text_row, T_VAR_STRING, T_LONG)

CLIENT_QUERY_ATTRIBUTES = 1 << 27
COM_QUERY = 0x03
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_CLOSE = 0x19
PARAMETER_COUNT_AVAILABLE = 0x08
MYSQL8 = b"8.0.36-scripted"


def decode_value(t, p, pos):
    """One binary-protocol value of type t at p[pos:] -> (python value, new pos)."""
    if t == 1:
        return p[pos], pos + 1
    if t == 2:
        return struct.unpack_from("<h", p, pos)[0], pos + 2
    if t == 3:
        return struct.unpack_from("<i", p, pos)[0], pos + 4
    if t == 8:
        return struct.unpack_from("<q", p, pos)[0], pos + 8
    if t == 4:
        return struct.unpack_from("<f", p, pos)[0], pos + 4
    if t == 5:
        return struct.unpack_from("<d", p, pos)[0], pos + 8
    if t in (7, 10, 12):
        n = p[pos]
        f = p[pos + 1:pos + 1 + n]
        y, mo, d = (struct.unpack_from("<H", f, 0)[0], f[2], f[3]) if n >= 4 else (0, 0, 0)
        h, mi, s = (f[4], f[5], f[6]) if n >= 7 else (0, 0, 0)
        us = struct.unpack_from("<I", f, 7)[0] if n >= 11 else 0
        v = datetime.date(y, mo, d) if t == 10 else datetime.datetime(y, mo, d, h, mi, s, us)
        return v, pos + 1 + n
    if t == 11:
        n = p[pos]
        f = p[pos + 1:pos + 1 + n]
        neg, days, h, mi, s = f[0], struct.unpack_from("<I", f, 1)[0], f[5], f[6], f[7]
        us = struct.unpack_from("<I", f, 8)[0] if n >= 12 else 0
        v = datetime.timedelta(days=days, hours=h, minutes=mi, seconds=s, microseconds=us)
        return (-v if neg else v), pos + 1 + n
    n, pos = read_lenenc(p, pos)   # strings, blobs, decimals
    return bytes(p[pos:pos + n]), pos + n


def decode_block(p, pos, count):
    """NULL bitmap, new_params_bind_flag, types with names, values -> list, new pos."""
    bitmap = p[pos:pos + (count + 7) // 8]
    pos += (count + 7) // 8
    assert p[pos] == 1, "new_params_bind_flag must be 1"
    pos += 1
    meta = []
    for _ in range(count):
        t, flag = p[pos], p[pos + 1]
        pos += 2
        n, pos = read_lenenc(p, pos)
        meta.append((bytes(p[pos:pos + n]), t, flag))
        pos += n
    out = []
    for i, (name, t, flag) in enumerate(meta):
        if bitmap[i // 8] & (1 << (i % 8)):
            out.append((name, t, flag, None))
            continue
        v, pos = decode_value(t, p, pos)
        out.append((name, t, flag, v))
    return out, pos


def parse_com_query(p):
    assert p[0] == COM_QUERY
    count, pos = read_lenenc(p, 1)
    sets, pos = read_lenenc(p, pos)
    assert sets == 1, "parameter_set_count must be 1"
    attrs = []
    if count:
        attrs, pos = decode_block(p, pos, count)
    return attrs, bytes(p[pos:])


def parse_stmt_execute(p, nparams):
    assert p[0] == COM_STMT_EXECUTE
    stmt_id, flags, iters = struct.unpack_from("<IBI", p, 1)
    assert iters == 1
    assert flags & PARAMETER_COUNT_AVAILABLE, "PARAMETER_COUNT_AVAILABLE not set"
    count, pos = read_lenenc(p, 10)
    values, pos = decode_block(p, pos, count) if count else ([], pos)
    assert pos == len(p), "bytes left after the values"
    assert all(name == b"" for name, _, _, _ in values[:nparams])
    return stmt_id, values


def binary_row(*values):
    """ProtocolBinary::ResultsetRow of string columns (no NULLs)."""
    return b"\x00" + bytes((len(values) + 7 + 2) // 8) + b"".join(lenenc_str(v) for v in values)


def echo(peer, values, binary=False):
    """A result set: one row per decoded value (name, type, flag, repr)."""
    fields = [[n, str(t).encode(), str(f).encode(), repr(v).encode()] for n, t, f, v in values]
    if binary:   # the COM_STMT_EXECUTE response: binary rows
        cols = [coldef(c, T_VAR_STRING) for c in (b"name", b"type", b"flag", b"value")]
        peer.resultset(cols, [binary_row(*f) for f in fields], deprecate_eof=True)
        return
    cols = [coldef(b"name", T_VAR_STRING), coldef(b"type", T_LONG), coldef(b"flag", T_LONG),
            coldef(b"value", T_VAR_STRING)]
    peer.resultset(cols, [text_row(*f) for f in fields], deprecate_eof=True)


def mysql8_server(nqueries=1, prepared=False, nparams=0, check_plain=None):
    def script(peer):
        resp = peer.handshake(caps=FULL_CAPS | CLIENT_QUERY_ATTRIBUTES)
        assert resp["caps"] & CLIENT_QUERY_ATTRIBUTES
        if prepared:
            p = peer.recv_command()
            assert p[0] == COM_STMT_PREPARE
            peer.send(b"\x00" + struct.pack("<IHHBH", 7, 4, nparams, 0, 0))
            for i in range(nparams):
                peer.send(coldef(b"?", T_VAR_STRING))
            for c in (b"name", b"type", b"flag", b"value"):
                peer.send(coldef(c, T_VAR_STRING))
        for _ in range(nqueries):
            p = peer.recv_command()
            if prepared:
                stmt_id, values = parse_stmt_execute(p, nparams)
                assert stmt_id == 7
                echo(peer, values, binary=True)
            else:
                attrs, sql = parse_com_query(p)
                if check_plain is not None:
                    check_plain(attrs, sql)
                echo(peer, attrs)
        peer.expect_close()
    return scripted(script)


def connect(srv, **kw):
    return mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER.decode(),
                          password=PASSWORD.decode(), autocommit=None, **kw)


VALUES = [("i", 42), ("neg", -7), ("big", 2 ** 63 + 5), ("s", "h\u00e9llo 'q' \\"),
          ("b", b"\x00\xff\x01"), ("f", 2.5), ("n", None),
          ("dt", datetime.datetime(2024, 2, 29, 13, 45, 56, 123456)),
          ("d", datetime.date(1999, 12, 31)), ("t", datetime.timedelta(hours=-5, seconds=3)),
          ("dec", Decimal("12.345")), ("yes", True), ("\u00fcn\u00efcode name", "v")]


def expected(name, value):
    """(name bytes, type, flag, repr of the decoded value) the peer must see."""
    n = name.encode()
    if value is None:
        return (n, 6, 0, None)
    if isinstance(value, bool):
        return (n, 1, 0, int(value))
    if isinstance(value, int):
        return (n, 8, 0x80, value) if value >= 2 ** 63 else (n, 8, 0, value)
    if isinstance(value, float):
        return (n, 5, 0, value)
    if isinstance(value, str):
        return (n, 253, 0, value.encode())
    if isinstance(value, bytes):
        return (n, 252, 0, value)
    if isinstance(value, datetime.datetime):
        return (n, 12, 0, value)
    if isinstance(value, datetime.date):
        return (n, 10, 0, value)
    if isinstance(value, datetime.timedelta):
        return (n, 11, 0, value)
    if isinstance(value, Decimal):
        return (n, 246, 0, str(value).encode())
    raise AssertionError(value)


def rows_of(cur):
    out = []
    for name, t, flag, v in cur.fetchall():
        out.append((name.encode(), int(t), int(flag), eval(v)))   # repr() of peer values
    return out


def unsigned(rows):
    # the peer decodes LONGLONG as signed; the unsigned flag says how to read it
    return [(n, t, f, v + 2 ** 64 if (t == 8 and f & 0x80 and v < 0) else v)
            for n, t, f, v in rows]


def test_com_query_attributes_arrive_exactly():
    seen = []
    srv = mysql8_server(nqueries=3, check_plain=lambda a, q: seen.append((a, q)))
    c = connect(srv)
    try:
        assert c._conn.has_query_attributes
        cur = c.cursor()
        cur.execute("SELECT %s", ("x'y",), attributes=dict(VALUES))
        assert unsigned(rows_of(cur)) == [expected(n, v) for n, v in VALUES]
        # the peer reports no sql_mode: the form both modes read alike (quote doubled)
        assert seen[-1][1] == b"SELECT 'x''y'"
        # cursor attributes, then the execute's (pairs), both sent
        cur.add_attribute("trace_id", "abc")
        cur.execute("SELECT 1", attributes=[("span", 7)])
        assert rows_of(cur) == [(b"trace_id", 253, 0, b"abc"), (b"span", 8, 0, 7)]
        # no attributes: parameter_count 0, parameter_set_count 1, then the query
        cur.clear_attributes()
        cur.execute("SELECT 2")
        assert cur.fetchall() == () and seen[-1] == ([], b"SELECT 2")
    finally:
        c.close()
    srv.check()


def test_stmt_execute_attributes_arrive_exactly():
    srv = mysql8_server(nqueries=2, prepared=True, nparams=2)
    c = connect(srv)
    try:
        cur = c.cursor(mysqlc.cursors.PreparedCursor)
        cur.execute("SELECT ?, ?", (1, "p"), attributes=VALUES)
        got = unsigned(rows_of(cur))
        assert got[:2] == [(b"", 8, 0, 1), (b"", 253, 0, b"p")]
        assert got[2:] == [expected(n, v) for n, v in VALUES]
        cur.execute("SELECT ?, ?", (None, b"z"))   # no attributes: count = 2
        assert rows_of(cur) == [(b"", 6, 0, None), (b"", 252, 0, b"z")]
    finally:
        c.close()
    srv.check()


def test_cursor_attribute_api():
    cur = mysqlc.cursors.Cursor.__new__(mysqlc.cursors.Cursor)
    assert cur.get_attributes() is None
    cur.add_attribute("a", 1)
    cur.add_attribute("b", "x")
    cur.add_attribute("a", 2)
    assert cur.get_attributes() == [("a", 1), ("b", "x"), ("a", 2)]
    assert cur.remove_attribute("a") == 1
    assert cur.remove_attribute("missing") is None
    assert cur.get_attributes() == [("b", "x"), ("a", 2)]
    cur.clear_attributes()
    assert cur.get_attributes() is None
    with pytest.raises(TypeError):
        cur.add_attribute(b"bytes", 1)
    with pytest.raises(TypeError):
        cur._query_attributes([("ok", 1), "not a pair"])
    with pytest.raises(TypeError):
        cur._query_attributes({1: 2})


def test_unsupported_value_is_named():
    srv = mysql8_server(nqueries=1)
    c = connect(srv)
    try:
        cur = c.cursor()
        with pytest.raises(mysqlc.ProgrammingError, match="query attribute 'bad'"):
            cur.execute("SELECT 1", attributes={"bad": object()})
        with pytest.raises(mysqlc.ProgrammingError,
                           match="query attribute .nan. \\(a decimal.Decimal\\)"):
            cur.execute("SELECT 1", attributes=[("ok", 1), ("nan", Decimal("NaN"))])
        cur.execute("SELECT 1", attributes={"fine": 1})   # nothing was sent before
        assert rows_of(cur) == [(b"fine", 8, 0, 1)]
    finally:
        c.close()
    srv.check()


def test_server_without_query_attributes_peer():
    """A MySQL 8 server that does not offer it: not asked for; plain COM_QUERY."""
    def script(peer):
        resp = peer.handshake(caps=FULL_CAPS)
        assert not resp["caps"] & CLIENT_QUERY_ATTRIBUTES
        peer.expect_query(b"SELECT 1")
        peer.send(ok_packet())
        peer.expect_close()
    srv = scripted(script)
    c = connect(srv)
    try:
        cur = c.cursor()
        with pytest.raises(mysqlc.NotSupportedError, match="CLIENT_QUERY_ATTRIBUTES"):
            cur.execute("SELECT 1", attributes={"a": 1})
        cur.execute("SELECT 1")
    finally:
        c.close()
    srv.check()


def test_mariadb_refuses_attributes(conn):
    assert not conn._conn.client_flag & CLIENT.QUERY_ATTRIBUTES
    assert conn._conn.has_query_attributes is False
    cur = conn.cursor()
    with pytest.raises(mysqlc.NotSupportedError, match="MySQL 8.0.23"):
        cur.execute("SELECT 1", attributes={"a": 1})
    cur.add_attribute("a", 1)
    with pytest.raises(mysqlc.NotSupportedError):
        cur.execute("SELECT 1")
    pcur = conn.cursor(mysqlc.cursors.PreparedCursor)
    with pytest.raises(mysqlc.NotSupportedError):
        pcur.execute("SELECT ?", (1,), attributes=[("a", 1)])
    with pytest.raises(mysqlc.NotSupportedError):
        conn._conn.query_attributes(b"SELECT 1", [("a", 1)])
    cur.clear_attributes()
    cur.execute("SELECT 41 + 1")
    assert cur.fetchone() == (42,)
    pcur.execute("SELECT ?", (5,))
    assert pcur.fetchone() == (5,)
