"""Build the seed corpora in fuzz/corpus/<harness>/ from real server captures.

    .venv/bin/python fuzz/make_corpus.py [harness ...]
        (starts a private MariaDB, see mysqlc.server; with harness names, writes only
        their corpora)

Runs queries returning every column type (and OK, ERR, multi-result and empty
responses) with Connection._start_capture()/_stop_capture(), and writes the captured
bytes in each harness's input format (see the comment at the top of each harness):
fuzz_query_response (the raw response), fuzz_resultset and fuzz_text_value (column
definitions and values parsed from it), fuzz_binary_value (values from prepared
statements), fuzz_session (a handshake, auth switch and a response to a command),
fuzz_engine_chunks (captures of every engine flow combined with a few chunk plans; see
engine_chunk_seeds()), plus hand-made seeds for fuzz_escape, fuzz_format_query, fuzz_reader and fuzz_multipacket.
File names are the SHA-1 of the content, as libFuzzer names them.
"""
import hashlib
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import mysqlc  # noqa: E402
from mysqlc.server import get_server  # noqa: E402
import _peer  # noqa: E402

CORPUS = os.path.join(ROOT, "fuzz", "corpus")

QUERIES = [
    "SELECT 1",
    "SELECT -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615",
    "SELECT 1.5e300, -0.0, CAST(1.25 AS FLOAT), CAST('123456789012345678.123456789' AS DECIMAL(40,9)), CAST(-1 AS DECIMAL(5,2))",
    "SELECT 'héllo', _latin1'caf\xe9', _binary'\\0\\1\\'', CONVERT('中文' USING gbk), CONVERT('表' USING sjis), REPEAT('x', 300)",
    "SELECT DATE'2024-02-29', DATE'0000-00-00', TIMESTAMP'2024-01-01 10:20:30.123456', TIME'-838:59:59', TIME'12:00:00.5', CAST('9999-12-31 23:59:59' AS DATETIME), YEAR(NOW())",
    "SELECT NULL, b'101', JSON_OBJECT('a', 1, 'b', JSON_ARRAY(1, 2)), ST_GeomFromText('POINT(1 1)'), INET6_ATON('::1')",
    "SELECT seq, CONCAT('r', seq), IF(seq % 3 = 0, NULL, seq * 1.5) FROM seq_1_to_20",
    "SELECT * FROM information_schema.CHARACTER_SETS LIMIT 5",
    "DO 1",
    "SELECT 1; SELECT 'a', 'b'; DO 2",
    "SELEC 1",
    "SELECT 1 FROM DUAL WHERE 0",
    "SHOW VARIABLES LIKE 'version%'",
]


ONLY = set(sys.argv[1:])


def write(harness, data):
    if ONLY and harness not in ONLY:
        return
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def packets(wire):
    pos, out = 0, []
    while pos + 4 <= len(wire):
        n = int.from_bytes(wire[pos:pos + 3], "little")
        out.append(wire[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def lenenc(p, pos):
    b = p[pos]
    if b < 0xFB:
        return b, pos + 1
    if b == 0xFB:
        return None, pos + 1
    k = {0xFC: 2, 0xFD: 3, 0xFE: 8}[b]
    return int.from_bytes(p[pos + 1:pos + 1 + k], "little"), pos + 1 + k


def parse_coldef(p):
    pos = 0
    for _ in range(6):
        n, pos = lenenc(p, pos)
        pos += n
    _, pos = lenenc(p, pos)
    charset, length, type_, flags, decimals = struct.unpack_from("<HIBHB", p, pos)
    return type_, flags, charset


def text_values(p):
    pos, vals = 0, []
    while pos < len(p):
        n, pos = lenenc(p, pos)
        if n is None:
            vals.append(None)
        else:
            vals.append(p[pos:pos + n])
            pos += n
    return vals


def from_text_capture(wire):
    write("fuzz_query_response", b"\x01" + wire)
    write("fuzz_query_response", b"\x05" + wire)
    write("fuzz_query_response", b"\x19" + wire)
    pk = packets(wire)
    if not pk or pk[0][:1] in (b"\x00", b"\xff"):
        return
    ncols = pk[0][0]
    if not 0 < ncols < 0xFB:
        return
    cols = [parse_coldef(p) for p in pk[1:1 + ncols]]
    rows = [text_values(p) for p in pk[1 + ncols:] if p[:1] != b"\xfe" or len(p) >= 0xFFFFFF]
    for (type_, flags, charset), i in zip(cols, range(ncols)):
        for r in rows[:3]:
            if i < len(r) and r[i] is not None:
                write("fuzz_text_value", struct.pack("<BHH", type_, flags, charset) + r[i])
    if ncols <= 8:
        head = bytes([1, ncols - 1]) + b"".join(struct.pack("<BHH", *c) for c in cols)
        body = b""
        for r in rows[:4]:
            for v in r:
                body += b"\xfb" if v is None else bytes([min(len(v), 63)]) + v[:63]
        write("fuzz_resultset", head + body)
        write("fuzz_resultset", bytes([3]) + head[1:] + body)


def session_seed(mode, pkts):
    out = bytes([mode])
    for ctl, payload in pkts:
        out += bytes([ctl]) + struct.pack("<H", len(payload)) + payload
    return out


# ----------------------------------------------------------------- fuzz_engine_chunks
# The input format is described at the top of fuzz/fuzz_engine_chunks.c.

CHUNK_PLANS = [
    b"\x01\x01\x00",                       # one byte at a time
    b"\x04\x00\x00\x05\x00\x01\x00\xe8\x03",  # an empty feed, then 5, 1, 1000 cyclically
    b"\x83" + struct.pack("<I", 0x2545F491),  # PRNG, chunks of 1..8 bytes
    b"\x8a" + struct.pack("<I", 0x9E3779B9),  # PRNG, chunks of 1..1024 bytes
]
CLIENT_LOCAL_FILES, CLIENT_SESSION_TRACK, CLIENT_DEPRECATE_EOF = 0x80, 1 << 23, 1 << 24
CLIENT_MULTI_STATEMENTS = 1 << 16
CACHE_METADATA = 1 << 4


def engine_mode(flow, client_flag, by_row=False, infile=False, ext_caps=0):
    m = flow
    if client_flag & CLIENT_DEPRECATE_EOF:
        m |= 4
    if client_flag & CLIENT_SESSION_TRACK:
        m |= 8
    if by_row:
        m |= 0x10
    if infile:
        m |= 0x20
    if ext_caps & CACHE_METADATA:
        m |= 0x40
    if client_flag & CLIENT_LOCAL_FILES:
        m |= 0x80
    return m


def engine_seeds(mode, body, plans=CHUNK_PLANS):
    for plan in plans:
        write("fuzz_engine_chunks", bytes([mode]) + plan + body)


def frames_of(data, seed, cseq=1):
    """Plain packets as compressed-protocol frames of pseudo-random sizes, some stored."""
    import random
    import zlib
    rnd = random.Random(seed)
    out, i = bytearray(), 0
    while i < len(data):
        n = rnd.randint(1, 700)
        part = data[i:i + n]
        i += n
        if rnd.random() < 0.4:
            body, ulen = part, 0
        else:
            body, ulen = zlib.compress(part), len(part)
        out += len(body).to_bytes(3, "little") + bytes([cseq & 0xFF]) + ulen.to_bytes(3, "little") + body
        cseq += 1
    return bytes(out)


def capture_all(core, sql):
    core._start_capture()
    try:
        core.query(sql.encode("utf-8"))
        while True:
            while core.rows_pending:
                core.fetch(-1)
            if not core.more_results:
                break
            core.next_result()
    except mysqlc.Error:
        pass
    return core._stop_capture()


def engine_chunk_seeds(srv):
    """Real captures of every flow fuzz_engine_chunks drives, each with CHUNK_PLANS."""
    kw = srv.connect_kwargs()
    c = mysqlc.connect(client_flag=CLIENT_MULTI_STATEMENTS, local_infile=True, **kw)
    core = c._conn
    flag, ext = core.client_flag, core.ext_caps
    mixed = ("SELECT seq, seq * 1.5, CONCAT('name-', seq), IF(seq % 7 = 0, NULL, seq), "
             "DATE_ADD('2024-01-01 00:00:00', INTERVAL seq SECOND), CAST(seq AS DECIMAL(12,3)), "
             "_utf8mb4 'z\u00e4\u20ac\U0001f389', x'00ff10', 1e308 * 10 IS NULL FROM seq_1_to_12")
    text = capture_all(core, mixed)
    engine_seeds(engine_mode(0, flag), text)
    engine_seeds(engine_mode(0, flag, by_row=True), text, CHUNK_PLANS[2:3])
    engine_seeds(engine_mode(0, flag), capture_all(
        core, "SELECT 1, 'a'; DO 2; SELECT seq FROM seq_1_to_5; SELECT * FROM nope_missing"))
    engine_seeds(engine_mode(0, flag), capture_all(core, "SELECT * FROM no_such_table_here"))
    engine_seeds(engine_mode(0, flag), capture_all(core, "DO 1"))
    capture_all(core, "CREATE TEMPORARY TABLE ec (id INT AUTO_INCREMENT PRIMARY KEY, a INT, b VARCHAR(10))")
    engine_seeds(engine_mode(0, flag), capture_all(core, "INSERT INTO ec (a) VALUES (1), (2), (3)"))
    # LOCAL INFILE: the request and the server's OK after the file (the harness's handler
    # sends the same three rows in one packet, so the OK's sequence id fits)
    import tempfile
    with tempfile.NamedTemporaryFile("wb", suffix=".tsv", delete=False) as f:
        f.write(b"1\tone\n2\ttwo\n3\tthree\n")
    try:
        load = "LOAD DATA LOCAL INFILE '%s' INTO TABLE ec (a, b)" % f.name
        refused = capture_all(core, load)      # the core has no handler: refused
        core._start_capture()
        c.cursor().execute(load)               # the cursor's handler sends the file
        infile = core._stop_capture()
    finally:
        os.unlink(f.name)
    engine_seeds(engine_mode(0, flag, infile=True), infile)
    engine_seeds(engine_mode(0, flag, infile=False), refused, CHUNK_PLANS[:2])
    # compressed frames built from the text capture
    engine_seeds(engine_mode(2, flag), frames_of(text, 1))
    engine_seeds(engine_mode(2, flag, by_row=True), frames_of(text, 2), CHUNK_PLANS[3:])
    # a prepared statement: the prepare response, then the binary result
    sql = ("SELECT seq, CONCAT('v', seq), seq / 3, IF(seq = 5, NULL, seq), "
           "TIMESTAMP('2020-02-29 12:00:00.123456'), CAST(seq AS DOUBLE) FROM seq_1_to_9 WHERE seq > ?")
    core._start_capture()
    stmt, _, _ = core.stmt_prepare(sql.encode())
    prep = core._stop_capture()
    for i in range(2):   # the second execute may use the cached metadata
        core._start_capture()
        core.stmt_execute(stmt, (i,))
        while core.rows_pending:
            core.fetch(-1)
        execute = core._stop_capture()
        engine_seeds(engine_mode(1, flag, ext_caps=ext), struct.pack("<H", len(prep)) + prep + execute)
    core.stmt_close(stmt)
    c.close()
    # the connection phase: native password OK (alone, then with a query's response),
    # compressed, and a refused login
    from mysqlc import _core
    user, pw, db = kw["user"].encode(), kw["password"].encode(), kw["database"].encode()
    where = {"host": kw["host"], "port": kw["port"]}

    def creds(u, p, d):
        return bytes([len(u)]) + u + bytes([len(p)]) + p + bytes([len(d)]) + d

    for compress in (False, True):
        e = _core.Connection()
        e._start_capture()
        e.connect(user=user, password=pw, database=db, compress=compress, **where)
        hs = e._stop_capture()
        e._start_capture()
        e.query(b"SELECT 1")
        e.fetch(-1)
        q = e._stop_capture()
        e.close()
        if compress:
            q = frames_of(q, 3)
        mode = 3 | (4 if compress else 0)
        engine_seeds(mode, struct.pack("<H", len(hs)) + creds(user, pw, db) + hs + q)
        if not compress:
            engine_seeds(mode, struct.pack("<H", len(hs)) + creds(user, pw, b"") + hs, CHUNK_PLANS[1:3])
    e = _core.Connection()
    e._start_capture()
    try:
        e.connect(user=user, password=b"definitely-wrong", **where)
    except mysqlc.OperationalError:
        pass
    hs = e._stop_capture()
    engine_seeds(3, struct.pack("<H", len(hs)) + creds(user, b"definitely-wrong", b"") + hs)


def main():
    srv = get_server().start()
    try:
        engine_chunk_seeds(srv)
        c = mysqlc.connect(**srv.connect_kwargs())
        core = c._conn
        for q in QUERIES:
            core._start_capture()
            try:
                core.query(q.encode("utf-8"))
                while True:
                    core.fetch()
                    if core.next_result() < 0:
                        break
            except mysqlc.Error:
                pass
            from_text_capture(core._stop_capture())
        # prepared statements: binary rows
        for q, args in [("SELECT ?, ?, ?", (1, "two", 3.5)),
                        ("SELECT CAST(? AS DATETIME(6)), CAST(? AS TIME(6)), CAST(? AS DATE)",
                         ("2024-01-02 03:04:05.678901", "-800:01:02.5", "2024-02-29")),
                        ("SELECT ?, CAST(? AS DECIMAL(10,3)), ?", (-9000000000, "1.5", b"\x00\xff"))]:
            cur = c.cursor(prepared=True)
            core._start_capture()
            cur.execute(q, args)
            cur.fetchall()
            wire = core._stop_capture()
            pk = packets(wire)
            # the execute response: column count, definitions, rows, EOF/OK
            idx = [i for i, p in enumerate(pk) if len(p) == 1 and 0 < p[0] < 16]
            if idx:
                n = pk[idx[-1]][0]
                cols = [parse_coldef(p) for p in pk[idx[-1] + 1:idx[-1] + 1 + n]]
                for row in pk[idx[-1] + 1 + n:]:
                    if row[:1] != b"\x00":
                        continue
                    pos = 1 + (n + 7 + 2) // 8
                    for t, f, cs in cols:
                        write("fuzz_binary_value", struct.pack("<BHHB", t, f, cs, 0) + row[pos:])
            write("fuzz_session", session_seed(0x20, [(0, _peer.handshake_v10(b"A" * 20)), (1, _peer.ok_packet())]
                                               + [(3 if i == 0 else 0, p) for i, p in enumerate(pk)]))
        c.close()
    finally:
        srv.stop()
    # sessions from the scripted peer's packets
    hs = _peer.handshake_v10(b"N" * 20)
    ok = _peer.ok_packet()
    col = _peer.coldef(b"a", _peer.T_VAR_STRING)
    write("fuzz_session", session_seed(0x09, [(0, hs), (1, ok), (3, b"\x01"), (0, col), (0, b"\x01x"), (0, b"\xfe" + ok[1:])]))
    write("fuzz_session", session_seed(0x08, [(0, hs), (1, b"\xfemysql_native_password\x00" + b"B" * 20 + b"\x00"), (1, ok), (3, ok)]))
    write("fuzz_session", session_seed(0x01, [(0, _peer.handshake_v10(b"C" * 20, plugin=b"caching_sha2_password")),
                                              (1, b"\x01\x03"), (0, ok)]))
    write("fuzz_session", session_seed(0x01, [(0, _peer.handshake_v10(b"C" * 20, plugin=b"caching_sha2_password")),
                                              (1, b"\x01\x04"), (1, ok)]))
    write("fuzz_session", session_seed(0x00, [(0, _peer.err_packet(1040, b"08004", b"Too many connections"))]))
    import zlib
    frame_ok = b"\x07\x00\x00\x01" + ok
    z = zlib.compress(frame_ok)
    comp = len(z).to_bytes(3, "little") + b"\x00" + len(frame_ok).to_bytes(3, "little") + z
    write("fuzz_session", session_seed(0x0C, [(0, _peer.handshake_v10(b"D" * 20, caps=_peer.FULL_CAPS | 0x20)), (1, ok),
                                              (5, comp)]))
    write("fuzz_session", session_seed(0x0C, [(0, _peer.handshake_v10(b"D" * 20, caps=_peer.FULL_CAPS | 0x20)), (1, ok),
                                              (5, len(frame_ok).to_bytes(3, "little") + b"\x00\x00\x00\x00" + frame_ok)]))
    # escaping: charset selector, flags, data
    for cs in range(9):
        for nbe in (0, 1):
            for data in (b"it's \\ \x00 \x1a \" \n\r", b"\x81\\\x81'\xbf\\'", b"\x95\\\x83\\ \xe0'", b"\xa1\\\xf9'",
                         b"\x81\x30\x81\x30\\", "中文'表".encode("utf-8")):
                write("fuzz_escape", bytes([cs, nbe]) + data)
    for q in (b"SELECT %s, %s", b"SELECT %(a)s, %(b)s, '%%'", b"%s%", b"%d", b"INSERT INTO t VALUES (%s, %s, %s)"):
        for mode in (0, 1, 2, 0x0C):
            write("fuzz_format_query", bytes([mode, 3, 5, 17, 22]) + q)
    write("fuzz_reader", bytes(range(16)) + b"\xfc\x01\x00\xfd\x01\x02\x03\xfe" + b"\x01" * 8 + b"abc\x00def")
    write("fuzz_reader", b"\x07" * 16 + b"\x03abc\xfb\xfc\x02\x00xy\x00")
    write("fuzz_multipacket", b"\x01\x01\x00\x00\x00\x05\x00")
    write("fuzz_multipacket", b"\x00\x00\x00\x00\x02\x10\x00")
    write("fuzz_multipacket", b"\x03\x01\x00\x00\x1c\x10\x00")
    for name in sorted(os.listdir(CORPUS)):
        print("%-22s %d seeds" % (name, len(os.listdir(os.path.join(CORPUS, name)))))


if __name__ == "__main__":
    main()
