"""The zlib compressed protocol (``compress=True``, CLIENT_COMPRESS).

After authentication every packet travels inside compressed frames: a 7-byte header
(3-byte compressed length, 1-byte compressed sequence id, 3-byte uncompressed length;
0 means the body is stored uncompressed) and a zlib body.  One frame may carry many
packets, a packet may span frames, and a logical payload of 16 MiB or more is split
into 0xFFFFFF-byte packets first and framed afterwards.

Against the real server: the session reports ``Compression = ON``, the type table of
test_types round-trips, a 20 MB BLOB travels through a parameter and back, results of
many small packets (100k rows, executemany of 20k rows, multi-statement results) are
correct, compression works over the unix socket, and a connection killed mid-result
gives 2013 and is closed.

Against a scripted peer (the shared Peer of tests/_peer.py): the frames the client sends
(stored below 50 bytes, zlib above; sequence ids), and frames the client receives:
many packets in one frame, packets cut across frames at every kind of boundary,
stored frames, > 16 MiB payloads; corrupt zlib data, a lying uncompressed length and
a wrong compressed sequence id give 2027 and close the connection; a server without
CLIENT_COMPRESS gets an uncompressed session.
"""

import datetime
import decimal
import hashlib
import os
import struct
import threading
import time
import zlib

import pytest

import mysqlc

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

try:                # the scripted-peer helpers (tests/_peer.py)
    from _peer import (
        BINARY, FLAG_BINARY, FULL_CAPS, MAXP, PASSWORD, T_BLOB, T_LONGLONG, T_VAR_STRING,
        USER, coldef, lenenc_int, ok_packet, scripted, text_row,
    )
except ImportError:  # older layout: they lived in test_protocol
    from test_protocol import (
        BINARY, FLAG_BINARY, FULL_CAPS, MAXP, PASSWORD, T_BLOB, T_LONGLONG, T_VAR_STRING,
        USER, coldef, lenenc_int, ok_packet, scripted, text_row,
    )

CLIENT_COMPRESS = 0x20
CR_SERVER_LOST = 2013
CR_MALFORMED_PACKET = 2027

try:
    import test_types as _types
    TYPE_CASES = [c for c in _types.CASES]
    _SAME = _types.SAME
    _NO_PARAM = _types.NO_PARAM
except ImportError:       # a representative table of our own
    import collections
    _SAME, _NO_PARAM = object(), object()
    _C = collections.namedtuple("Case", "id coltype literal expected param sql_mode setup")

    def _c(id, coltype, literal, expected, param=_SAME, sql_mode=None, setup=()):
        return _C(id, coltype, literal, expected, param, sql_mode, tuple(setup))

    TYPE_CASES = [
        _c("int-min", "INT", "-2147483648", -2147483648),
        _c("bigint-min", "BIGINT", "-9223372036854775808", -9223372036854775808),
        _c("bigint-unsigned-max", "BIGINT UNSIGNED", "18446744073709551615",
           18446744073709551615),
        _c("decimal", "DECIMAL(30,10)", "-12345678901234567890.0123456789",
           decimal.Decimal("-12345678901234567890.0123456789")),
        _c("datetime6", "DATETIME(6)", "'2024-02-29 23:59:59.999999'",
           datetime.datetime(2024, 2, 29, 23, 59, 59, 999999)),
        _c("time-negative", "TIME(6)", "'-838:59:59.000000'",
           -datetime.timedelta(hours=838, minutes=59, seconds=59)),
        _c("emoji", "VARCHAR(10) CHARACTER SET utf8mb4", "'😀é'", "😀é"),
        _c("latin1", "VARCHAR(10) CHARACTER SET latin1", "'Ææß'", "Ææß"),
        _c("blob-nuls", "BLOB", "X'000100ff00'", b"\x00\x01\x00\xff\x00"),
        _c("null", "VARCHAR(10)", "NULL", None),
        _c("empty", "VARCHAR(10)", "''", ""),
    ]


# =========================================================================== real server

@pytest.fixture
def zconn(conn_kwargs):
    c = mysqlc.connect(compress=True, **conn_kwargs)
    try:
        yield c
    finally:
        try:
            c.close()
        except mysqlc.Error:
            pass


def _is_mariadb(conn):
    return "mariadb" in conn.get_server_info().lower()


def _compression_status(conn):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE 'Compression'")
    return cur.fetchone()


def test_session_is_compressed(zconn, conn):
    assert _compression_status(zconn) == ("Compression", "ON")
    assert zconn._conn.client_flag & CLIENT_COMPRESS
    assert _compression_status(conn) == ("Compression", "OFF")
    assert not conn._conn.client_flag & CLIENT_COMPRESS


def _roundtrip(conn, c, use_param):
    cur = conn.cursor()
    if c.sql_mode is not None:
        cur.execute("SET SESSION sql_mode = %s", (c.sql_mode,))
    for stmt in c.setup:
        cur.execute(stmt)
    cur.execute("DROP TEMPORARY TABLE IF EXISTS zrt")
    cur.execute("CREATE TEMPORARY TABLE zrt (id INT PRIMARY KEY, v %s) CHARACTER SET utf8mb4"
                % c.coltype)
    if use_param:
        param = c.expected if c.param is _SAME else c.param
        cur.execute("INSERT INTO zrt VALUES (1, %s)", (param,))
    else:
        cur.execute("INSERT INTO zrt VALUES (1, %s)" % c.literal)
    cur.execute("SELECT v FROM zrt WHERE id = 1")
    row = cur.fetchone()
    assert row == (c.expected,)
    assert type(row[0]) is type(c.expected)


@pytest.mark.parametrize("c", TYPE_CASES, ids=[c.id for c in TYPE_CASES])
def test_type_table_roundtrip_compressed(zconn, c):
    _roundtrip(zconn, c, use_param=False)
    if c.param is not _NO_PARAM:
        _roundtrip(zconn, c, use_param=True)


def test_null_and_empty_are_distinct_compressed(zconn):
    cur = zconn.cursor()
    cur.execute("SELECT NULL, '', X'', 0, _latin1 X'C6', %s, _binary %s", ("😀\x00", b"\x00\x00"))
    assert cur.fetchone() == (None, "", b"", 0, "Æ", "😀\x00", b"\x00\x00")


@pytest.fixture
def big_packets_ok(zconn):
    cur = zconn.cursor()
    cur.execute("SELECT @@max_allowed_packet")
    if cur.fetchone()[0] < 64 * 1024 * 1024:
        pytest.skip("the server's max_allowed_packet is below 64 MiB")


@pytest.mark.allow_skip    # only on an external server with a small max_allowed_packet
@pytest.mark.parametrize("kind", ["random", "compressible"])
def test_20mb_blob_through_parameter(zconn, big_packets_ok, kind):
    n = 20 * 1000 * 1000 + 17
    if kind == "random":
        value = os.urandom(n)
    else:
        value = (b"\x00abc'\\\"" + bytes(range(256))) * (n // 263) + b"end"
    cur = zconn.cursor()
    cur.execute("CREATE TEMPORARY TABLE zbig (id INT, v LONGBLOB)")
    cur.execute("INSERT INTO zbig VALUES (%s, %s)", (1, value))
    cur.execute("SELECT LENGTH(v), MD5(v) FROM zbig")
    assert cur.fetchone() == (len(value), hashlib.md5(value).hexdigest())
    cur.execute("SELECT v, id FROM zbig")
    got, id_ = cur.fetchone()
    assert id_ == 1
    assert type(got) is bytes and len(got) == len(value)
    assert got == value
    # the session goes on normally after > 16 MiB payloads both ways
    cur.execute("SELECT 'after'")
    assert cur.fetchone() == ("after",)


@pytest.mark.allow_skip
def test_payload_exactly_at_packet_boundaries(zconn, big_packets_ok):
    """Rows whose packet is 0xFFFFFF bytes exactly (an empty packet must follow) and
    one byte either side."""
    cur = zconn.cursor()
    for vlen in (MAXP - 5, MAXP - 4, MAXP - 3):     # + 4-byte lenenc prefix -> MAXP-1..+1
        cur.execute("SELECT REPEAT('z', %s)", (vlen,))
        (got,) = cur.fetchone()
        assert len(got) == vlen and got == "z" * vlen


def _rows_sql(conn, n):
    if _is_mariadb(conn):
        return ("SELECT CAST(seq AS SIGNED), CAST(seq AS SIGNED) * 3 - 7, CONCAT('r', seq), "
                "IF(seq %% 7 = 0, NULL, seq / 4) FROM seq_1_to_%d" % n)
    conn.cursor().execute("SET SESSION cte_max_recursion_depth = %d" % (n + 1))
    return ("WITH RECURSIVE s(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM s "
            "WHERE seq < %d) SELECT seq, seq * 3 - 7, CONCAT('r', seq), "
            "IF(seq %% 7 = 0, NULL, seq / 4) FROM s" % n)


def test_100k_small_rows(zconn):
    n = 100000
    cur = zconn.cursor()
    t0 = time.monotonic()
    cur.execute(_rows_sql(zconn, n))
    rows = cur.fetchall()
    assert time.monotonic() - t0 < 30
    assert len(rows) == n
    for i in (0, 1, 6, 99, 12345, n - 1):
        seq = i + 1
        exp4 = None if seq % 7 == 0 else decimal.Decimal(seq) / 4
        assert rows[i][:3] == (seq, seq * 3 - 7, "r%d" % seq)
        assert rows[i][3] == exp4
    assert sum(r[0] for r in rows) == n * (n + 1) // 2
    assert sum(1 for r in rows if r[3] is None) == n // 7


def test_100k_rows_same_as_uncompressed(zconn, conn):
    sql = _rows_sql(zconn, 100000)
    cur = zconn.cursor()
    cur.execute(sql)
    zrows = cur.fetchall()
    pcur = conn.cursor()
    pcur.execute(_rows_sql(conn, 100000))
    assert zrows == pcur.fetchall()


def test_executemany_20k_rows(zconn):
    cur = zconn.cursor()
    cur.execute("CREATE TEMPORARY TABLE zem (id INT PRIMARY KEY, s VARCHAR(40), "
                "b VARBINARY(8), d DECIMAL(12,3))")
    rows = [(i, "name-%d-%s" % (i, "é" * (i % 5)), struct.pack("<I", i),
             decimal.Decimal(i) / 1000) for i in range(20000)]
    cur.executemany("INSERT INTO zem VALUES (%s, %s, %s, %s)", rows)
    assert cur.rowcount == 20000
    cur.execute("SELECT COUNT(*), SUM(id), SUM(d) FROM zem")
    assert cur.fetchone() == (20000, decimal.Decimal(sum(range(20000))),
                              sum(r[3] for r in rows))
    cur.execute("SELECT id, s, b, d FROM zem ORDER BY id")
    assert list(cur.fetchall()) == rows


def test_multi_statement_results_with_nextset(zconn):
    cur = zconn.cursor()
    cur.execute("CREATE TEMPORARY TABLE zms (a INT)")
    cur.execute("SELECT 1 AS a; INSERT INTO zms VALUES (1), (2), (3); "
                "SELECT REPEAT('q', 70000) AS big, 'x' AS c; DO 0; "
                "SELECT a FROM zms ORDER BY a; SELECT 'last'")
    assert cur.fetchall() == ((1,),)
    assert cur.nextset() is True
    assert cur.description is None and cur.rowcount == 3
    assert cur.nextset() is True
    assert cur.fetchall() == (("q" * 70000, "x"),)
    assert cur.nextset() is True
    assert cur.description is None
    assert cur.nextset() is True
    assert cur.fetchall() == ((1,), (2,), (3,))
    assert cur.nextset() is True
    assert cur.fetchall() == (("last",),)
    assert cur.nextset() is None
    cur.execute("SELECT 5")
    assert cur.fetchone() == (5,)


def test_many_statements_in_one_round_trip(zconn):
    """200 small results in one response: many packets per compressed frame."""
    cur = zconn.cursor()
    cur.execute("; ".join("SELECT %d AS n, 'v%d' AS s" % (i, i) for i in range(200)))
    got = [cur.fetchall()]
    while cur.nextset():
        got.append(cur.fetchall())
    assert got == [((i, "v%d" % i),) for i in range(200)]


@pytest.fixture
def zproc(conn):
    cur = conn.cursor()
    cur.execute("DROP PROCEDURE IF EXISTS mysqlc_zproc")
    cur.execute("CREATE PROCEDURE mysqlc_zproc() BEGIN SELECT 1 AS a; END")
    try:
        yield "mysqlc_zproc"
    finally:
        cur.execute("DROP PROCEDURE IF EXISTS mysqlc_zproc")


def test_call_procedure_with_result(zconn, zproc):
    """CALL of a procedure that SELECTs: a result set, then the CALL's own OK."""
    cur = zconn.cursor()
    cur.execute("CALL %s()" % zproc)
    assert cur.fetchall() == ((1,),)
    assert cur.nextset() is True
    assert cur.description is None
    assert cur.nextset() is None


def test_one_result_then_ok_statements(zconn):
    """Statements that only return OK packets, then a result set."""
    cur = zconn.cursor()
    cur.execute("DO 0; DO 1; SELECT 5")
    assert cur.description is None
    assert cur.nextset() is True
    assert cur.nextset() is True
    assert cur.fetchall() == ((5,),)
    assert cur.nextset() is None


def test_compress_over_unix_socket(server):
    if not server.unix_socket:
        pytest.skip("no unix socket for this server")
    c = mysqlc.connect(compress=True, **server.connect_kwargs(unix=True))
    try:
        assert c.get_host_info() == "Localhost via UNIX socket"
        assert _compression_status(c) == ("Compression", "ON")
        cur = c.cursor()
        value = os.urandom(300000)
        cur.execute("SELECT _binary %s AS v, LENGTH(%s) AS n, 'ü' AS u", (value, value))
        assert cur.fetchone() == (value, 300000, "ü")
        cur.execute(_rows_sql(c, 5000))
        assert len(cur.fetchall()) == 5000
    finally:
        c.close()


def test_compress_with_tls_off_and_ping_select_db(zconn, server):
    """Commands other than COM_QUERY (COM_PING, COM_INIT_DB) are framed too."""
    zconn.ping()
    zconn.select_db(server.database)
    cur = zconn.cursor()
    cur.execute("SELECT DATABASE()")
    assert cur.fetchone() == (server.database,)


def _wait_in_processlist(rcur, thread_id, needle, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rcur.execute("SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = %s",
                     (thread_id,))
        row = rcur.fetchone()
        if row and row[0] and needle in row[0]:
            return
        time.sleep(0.02)
    raise AssertionError("statement did not show up in the processlist")


def test_killed_mid_result_gives_2013_and_closes(zconn, root_conn_kwargs):
    """KILL the compressed connection after its first rows arrived: the rest of the
    result never comes -> 2013, and the connection is closed."""
    core = zconn._conn
    tid = zconn.thread_id()
    if _is_mariadb(zconn):
        sql = b"SELECT seq, REPEAT('k', 20000), SLEEP(0.05) FROM seq_1_to_400"
    else:
        sql = (b"WITH RECURSIVE s(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM s "
               b"WHERE seq < 400) SELECT seq, REPEAT('k', 20000), SLEEP(0.05) FROM s")
    assert core.query(sql) == 3
    first = core.fetch(1)
    assert first[0][0] == 1
    root = mysqlc.connect(**root_conn_kwargs)
    try:
        rcur = root.cursor()
        _wait_in_processlist(rcur, tid, "REPEAT('k'")
        rcur.execute("KILL %d" % tid)
    finally:
        root.close()
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as ei:
        core.fetch(-1)
    assert time.monotonic() - t0 < 10
    assert ei.value.args[0] == CR_SERVER_LOST, ei.value.args
    assert zconn.open is False
    with pytest.raises(mysqlc.OperationalError) as ei:
        zconn.cursor().execute("SELECT 1")
    assert ei.value.args == (2006, "Server has gone away")


def test_killed_during_buffered_execute(zconn, root_conn_kwargs):
    """The same through the DB-API: execute() is reading the rows when the KILL lands."""
    tid = zconn.thread_id()
    sql = (b"SELECT seq, REPEAT('k', 20000), SLEEP(0.05) FROM seq_1_to_400"
           if _is_mariadb(zconn) else b"SELECT SLEEP(20), REPEAT('k', 20000)")
    errors = []

    def killer():
        try:
            root = mysqlc.connect(**root_conn_kwargs)
            try:
                rcur = root.cursor()
                _wait_in_processlist(rcur, tid, "REPEAT('k'")
                time.sleep(0.3)
                rcur.execute("KILL %d" % tid)
            finally:
                root.close()
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=killer)
    t.start()
    cur = zconn.cursor()
    with pytest.raises(mysqlc.OperationalError) as ei:
        cur.execute(sql)
    t.join()
    assert not errors, errors
    assert ei.value.args[0] == CR_SERVER_LOST, ei.value.args
    assert not zconn.open


# =========================================================================== scripted peer

def packets(payloads, seq):
    """Plain packets (header + payload) for the logical payloads, split at 0xFFFFFF;
    returns (bytes, next sequence id)."""
    out = []
    for p in payloads:
        pos = 0
        while True:
            chunk = p[pos:pos + MAXP]
            out.append(struct.pack("<I", len(chunk))[:3] + bytes([seq & 0xFF]) + chunk)
            seq += 1
            pos += len(chunk)
            if len(chunk) < MAXP:
                break
    return b"".join(out), seq & 0xFF


def frame(body, cseq, store=False, ulen_override=None, level=6):
    if store:
        return struct.pack("<I", len(body))[:3] + bytes([cseq & 0xFF]) + b"\x00\x00\x00" + body
    z = zlib.compress(body, level)
    ulen = len(body) if ulen_override is None else ulen_override
    return (struct.pack("<I", len(z))[:3] + bytes([cseq & 0xFF])
            + struct.pack("<I", ulen)[:3] + z)


class ZPeer:
    """Compressed-protocol I/O on top of the shared Peer (after the handshake)."""

    def __init__(self, peer):
        self.peer = peer
        self.cseq = 0
        self.frames = []      # (compressed length, uncompressed length) of received frames

    def recv_frame(self):
        h = self.peer._read(7)
        clen = int.from_bytes(h[:3], "little")
        ulen = int.from_bytes(h[4:7], "little")
        assert h[3] == self.cseq, "client frame sequence %d, expected %d" % (h[3], self.cseq)
        self.cseq = (self.cseq + 1) & 0xFF
        body = self.peer._read(clen)
        self.frames.append((clen, ulen))
        if ulen == 0:
            return body
        data = zlib.decompress(body)
        assert len(data) == ulen
        return data

    def recv_command(self):
        """One command from the client: frames until a whole (single) packet is there."""
        self.cseq = 0
        self.frames = []
        data = b""
        while True:
            data += self.recv_frame()
            if len(data) >= 4:
                n = int.from_bytes(data[:3], "little")
                if len(data) >= 4 + n:
                    assert data[3] == 0, "command packet with sequence id %d" % data[3]
                    assert len(data) == 4 + n, "bytes after the command packet"
                    return data[4:]

    def send_stream(self, stream, cuts=None, store=False):
        """Send the plain packet stream as frames cut at the offsets `cuts` (default: at
        most 0xFFFFFF bytes per frame)."""
        if cuts is None:
            cuts = list(range(MAXP, len(stream), MAXP))
        bounds = [0] + list(cuts) + [len(stream)]
        out = []
        for a, b in zip(bounds, bounds[1:]):
            out.append(frame(stream[a:b], self.cseq, store=store))
            self.cseq = (self.cseq + 1) & 0xFF
        self.peer.send_raw(b"".join(out))


def resultset_payloads(columns, rows):
    return ([lenenc_int(len(columns))] + list(columns) + list(rows)
            + [ok_packet(status=0, header=b"\xfe")])


def _zpeer_connect(srv, **kw):
    return mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER, password=PASSWORD,
                          compress=True, **kw)


def test_client_frames_stored_below_50_bytes_and_zlib_above():
    got = {}

    def script(peer):
        resp = peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        got["caps"] = resp["caps"]
        z = ZPeer(peer)
        for sql in (b"SELECT 1", b"SELECT '" + b"a" * 5000 + b"'"):
            p = z.recv_command()
            assert p == b"\x03" + sql
            got.setdefault("frames", []).append(list(z.frames))
            stream, _ = packets(resultset_payloads(
                [coldef(b"x", T_LONGLONG, charset=BINARY)], [text_row(b"1")]), 1)
            z.send_stream(stream)
        return got

    srv = scripted(script)
    c = _zpeer_connect(srv)
    c._conn.max_allowed_packet = 1 << 30   # known: no SELECT @@max_allowed_packet first
    cur = c.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)
    cur.execute("SELECT '" + "a" * 5000 + "'")
    assert cur.fetchall() == ((1,),)
    c.close()
    srv.check()
    assert got["caps"] & CLIENT_COMPRESS
    small, big = got["frames"]
    assert small == [(4 + 9, 0)]                   # stored: packet of 9 bytes + header
    (clen, ulen), = big
    assert ulen == 4 + 1 + len(b"SELECT ''") + 5000 and clen < ulen


def test_many_packets_in_one_frame():
    n = 3000

    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        z = ZPeer(peer)
        z.recv_command()
        rows = [text_row(b"%d" % i, b"row-%d" % i) for i in range(n)]
        stream, _ = packets(resultset_payloads(
            [coldef(b"i", T_LONGLONG, charset=BINARY), coldef(b"s", T_VAR_STRING)], rows), 1)
        assert len(stream) < MAXP
        z.send_stream(stream, cuts=[])           # everything in one frame
        z.recv_command()                         # COM_QUIT
        return len(stream)

    srv = scripted(script)
    c = _zpeer_connect(srv)
    cur = c.cursor()
    cur.execute("SELECT i, s")
    rows = cur.fetchall()
    assert len(rows) == n
    assert rows[0] == (0, "row-0") and rows[-1] == (n - 1, "row-%d" % (n - 1))
    c.close()
    srv.check()


@pytest.mark.parametrize("cutting", ["every-byte", "inside-headers", "odd", "stored"])
def test_packets_cut_across_frames(cutting):
    rows = [text_row(b"%d" % i, b"v" * (i * 37 % 300)) for i in range(60)]
    payloads = resultset_payloads(
        [coldef(b"i", T_LONGLONG, charset=BINARY), coldef(b"s", T_VAR_STRING)], rows)
    stream, _ = packets(payloads, 1)
    if cutting == "every-byte":
        cuts = list(range(1, min(len(stream), 400)))          # the first 400 bytes 1 by 1
    elif cutting == "inside-headers":
        cuts, pos = [], 0                                     # cut 2 bytes into each header
        for p in payloads:
            cuts.append(pos + 2)
            pos += 4 + len(p)
    elif cutting == "odd":
        cuts = list(range(97, len(stream), 97))
    else:
        cuts = list(range(64, len(stream), 64))
    cuts = sorted(set(x for x in cuts if 0 < x < len(stream)))

    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        z = ZPeer(peer)
        z.recv_command()
        z.send_stream(stream, cuts=cuts, store=(cutting == "stored"))
        z.recv_command()
        return len(cuts)

    srv = scripted(script)
    c = _zpeer_connect(srv)
    cur = c.cursor()
    cur.execute("SELECT i, s")
    got = cur.fetchall()
    assert got == tuple((i, "v" * (i * 37 % 300)) for i in range(60))
    c.close()
    assert srv.check() > 1


def test_payload_over_16mib_from_peer():
    vlen = MAXP + 1000

    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        z = ZPeer(peer)
        z.recv_command()
        value = bytes(range(256)) * (vlen // 256) + b"!" * (vlen % 256)
        stream, _ = packets(resultset_payloads(
            [coldef(b"b", T_BLOB, charset=BINARY, flags=FLAG_BINARY)],
            [text_row(value), text_row(b"small")]), 1)
        z.send_stream(stream)                   # frames of 0xFFFFFF plain bytes each
        return value

    srv = scripted(script)
    c = _zpeer_connect(srv)
    cur = c.cursor()
    cur.execute("SELECT b")
    rows = cur.fetchall()
    value = srv.check()
    assert rows == ((value,), (b"small",))
    c.close()


def test_large_query_from_client_over_16mib():
    """The client splits a > 16 MiB COM_QUERY into packets, then frames of at most
    0xFFFFFF plain bytes."""
    size = MAXP + 5000
    got = {}

    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        z = ZPeer(peer)
        z.cseq = 0
        data = b""
        while len(data) < 4 + MAXP + 4 + (size + 1 - MAXP):
            data += z.recv_frame()
        got["frames"] = list(z.frames)
        first_len = int.from_bytes(data[:3], "little")
        assert first_len == MAXP and data[3] == 0
        second = data[4 + MAXP:]
        assert int.from_bytes(second[:3], "little") == size + 1 - MAXP and second[3] == 1
        payload = data[4:4 + MAXP] + second[4:]
        got["payload_md5"] = hashlib.md5(payload).hexdigest()
        stream, _ = packets([ok_packet(status=0)], 2)
        z.send_stream(stream)

    srv = scripted(script)
    c = _zpeer_connect(srv)
    c._conn.max_allowed_packet = 1 << 30   # known: no SELECT @@max_allowed_packet first
    query = b"-" * size
    c._conn.query(query)
    srv.check()
    assert got["payload_md5"] == hashlib.md5(b"\x03" + query).hexdigest()
    assert all(ulen <= MAXP for _, ulen in got["frames"])
    assert len(got["frames"]) >= 2
    c.close()


def _expect_bad_frame(make_frames, errno=CR_MALFORMED_PACKET):
    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        z = ZPeer(peer)
        z.recv_command()
        peer.send_raw(make_frames(z))
        peer.expect_close()

    srv = scripted(script)
    c = _zpeer_connect(srv)
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.cursor().execute("SELECT 1")
    assert ei.value.args[0] == errno, ei.value.args
    assert c.open is False
    srv.check()


def _ok_stream():
    return packets([ok_packet(status=0)], 1)[0]


def test_corrupt_zlib_body_is_malformed():
    def frames(z):
        f = bytearray(frame(_ok_stream() * 20, z.cseq))
        f[9:13] = b"\xde\xad\xbe\xef"
        return bytes(f)
    _expect_bad_frame(frames)


def test_uncompressed_length_lie_is_malformed():
    def frames(z):
        s = _ok_stream() * 20
        return frame(s, z.cseq, ulen_override=len(s) + 10)
    _expect_bad_frame(frames)


def test_uncompressed_length_too_small_is_malformed():
    def frames(z):
        s = _ok_stream() * 20
        return frame(s, z.cseq, ulen_override=len(s) - 10)
    _expect_bad_frame(frames)


def test_wrong_compressed_sequence_id_is_malformed():
    def frames(z):
        return frame(_ok_stream(), z.cseq + 5, store=True)
    _expect_bad_frame(frames)


def test_frame_cut_short_then_close_is_2013():
    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        z = ZPeer(peer)
        z.recv_command()
        f = frame(_ok_stream() * 50, z.cseq)
        peer.send_raw(f[:len(f) // 2])
        import socket as _s
        peer.sock.shutdown(_s.SHUT_WR)
        peer.expect_close()

    srv = scripted(script)
    c = _zpeer_connect(srv)
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.cursor().execute("SELECT 1")
    assert ei.value.args[0] == CR_SERVER_LOST
    assert c.open is False
    srv.check()


def test_server_without_compress_gets_plain_session():
    def script(peer):
        resp = peer.handshake(caps=FULL_CAPS, status=0)
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_LONGLONG, charset=BINARY)], [text_row(b"1")],
                       deprecate_eof=True)
        return resp

    srv = scripted(script)
    c = _zpeer_connect(srv)
    cur = c.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)
    resp = srv.check()
    assert not resp["caps"] & CLIENT_COMPRESS
    c.close()


SERVER_MORE_RESULTS_EXISTS = 0x0008


def test_inner_sequence_ids_restart_after_a_flush():
    """What MariaDB and MySQL send for ``SELECT 1; SELECT 2`` on a compressed
    connection: the first result in frame 1 (inner ids 1..4); the server flushes at the
    end of the statement and sets its packet counter to the compressed one
    (net_flush: ``pkt_nr = compress_pkt_nr``), so the second result comes in frame 2
    with inner ids starting again at 2.  libmysqlclient does not check the inner ids
    of compressed packets; the client must accept this."""
    col = [coldef(b"n", T_LONGLONG, charset=BINARY)]

    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        z = ZPeer(peer)
        z.recv_command()
        first = ([lenenc_int(1)] + col + [text_row(b"1")]
                 + [ok_packet(status=SERVER_MORE_RESULTS_EXISTS, header=b"\xfe")])
        z.send_stream(packets(first, 1)[0])
        z.send_stream(packets(resultset_payloads(col, [text_row(b"2")]), z.cseq)[0])
        z.recv_command()                 # COM_QUIT

    srv = scripted(script)
    c = _zpeer_connect(srv)
    try:
        cur = c.cursor()
        cur.execute("SELECT 1; SELECT 2")
        assert cur.fetchall() == ((1,),)
        assert cur.nextset() is True
        assert cur.fetchall() == ((2,),)
        assert cur.nextset() is None
    finally:
        c.close()
    srv.check()


def test_read_timeout_inside_a_compressed_frame():
    """The frame header arrives, its body never does: read_timeout -> 2013, closed."""
    release = threading.Event()

    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_COMPRESS, status=0)
        z = ZPeer(peer)
        z.recv_command()
        f = frame(_ok_stream() * 50, z.cseq)
        peer.send_raw(f[:7 + 3])
        release.wait(10)

    srv = scripted(script)
    c = _zpeer_connect(srv, read_timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.cursor().execute("SELECT 1")
    elapsed = time.monotonic() - t0
    release.set()
    assert ei.value.args[0] == CR_SERVER_LOST
    assert 0.4 <= elapsed < 1.5, elapsed
    assert c.open is False
    srv.check()


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    from _certs import CertsUnavailable, make_certs
    try:
        return make_certs(tmp_path_factory.getbasetemp() / "mysqlc-certs")
    except CertsUnavailable as exc:
        pytest.fail("cannot make test certificates: %s" % exc)


def test_compressed_frames_inside_tls(certs):
    """TLS first, then compression inside it (the order MySQL uses)."""
    from test_auth_plugins import MYSQL8_CAPS, Listener
    rows = [text_row(b"%d" % i, b"w" * (i % 200)) for i in range(500)]
    cols = [coldef(b"i", T_LONGLONG, charset=BINARY), coldef(b"s", T_VAR_STRING)]

    def script(peer):
        resp = peer.greet(b"mysql_native_password", caps=MYSQL8_CAPS | CLIENT_COMPRESS)
        assert peer.tls and resp["caps"] & CLIENT_COMPRESS
        peer.ok()
        z = ZPeer(peer)
        assert z.recv_command() == b"\x03SELECT i, s"
        stream = packets(resultset_payloads(cols, rows), 1)[0]
        z.send_stream(stream, cuts=list(range(1000, len(stream), 1000)))
        assert z.recv_command() == b"\x01"       # COM_QUIT, framed too

    srv = Listener(script, certs=certs)
    c = srv.connect(compress=True)
    cur = c.cursor()
    cur.execute("SELECT i, s")
    assert cur.fetchall() == tuple((i, "w" * (i % 200)) for i in range(500))
    c.close()
    srv.check()
