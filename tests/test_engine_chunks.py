"""The chunking property of the sans-I/O engine (docs/architecture.md).

Server responses are captured from the real server (and, for authentication paths no
MariaDB offers, from the scripted MySQL 8 peer of tests/test_auth_plugins.py) with
``Connection._start_capture()``.  Each capture is then fed to a socketless engine
(``Connection._engine_*``, src/engine_api.c) whole, one byte at a time, and in random
chunk sizes; the step under test is called after every chunk, returning None (or fewer
rows) until its bytes are there.  Every feeding must give the same rows, values, errors,
connection state and bytes the engine wants sent.
"""

import random
import zlib

import pytest

import mysqlc
from mysqlc import _core

from test_auth_plugins import (PW, USER, Listener, caching_sha2_server, rsa_key,  # noqa: F401
                               sha256_server)

CLIENT_PROTOCOL_41 = 0x200
CLIENT_LOCAL_FILES = 0x80
CLIENT_MULTI_STATEMENTS = 1 << 16
CLIENT_MULTI_RESULTS = 1 << 17
CLIENT_DEPRECATE_EOF = 1 << 24
CACHE_METADATA = 1 << 4
COM_QUERY = 3

STATE = ("server_status", "affected_rows", "insert_id", "warning_count", "info",
         "description", "field_count", "more_results", "rows_pending", "thread_id",
         "server_version", "auth_plugin_name", "client_flag", "last_errno", "last_error",
         "last_sqlstate")


def chunkings(data, seed, big=False):
    """(name, list of chunks): whole, one byte at a time, and three random splits."""
    rnd = random.Random(seed)
    out = [("whole", [data])]
    if not big:
        out.append(("bytes", [data[i:i + 1] for i in range(len(data))]))
    for k in range(3):
        chunks, i = [], 0
        top = 1 << rnd.choice((3, 6, 10, 14)) if not big else 1 << rnd.choice((12, 16, 20))
        while i < len(data):
            n = rnd.randint(1, top)
            chunks.append(data[i:i + n])
            i += n
        out.append(("random%d" % k, chunks))
    return out


def state(c):
    return {k: getattr(c, k) for k in STATE}


def outcome(fn):
    """(result, None) or (None, (exception type, args))."""
    try:
        return fn(), None
    except mysqlc.Error as exc:
        return None, (type(exc), exc.args)


def drive(chunks, step):
    """Feed chunks; call step() after each until it returns something other than None."""
    it = iter(chunks)
    while True:
        r = step()
        if r is not None:
            return r
        try:
            chunk = next(it)
        except StopIteration:
            raise AssertionError("the step still needs bytes after the whole capture")
        step.engine._engine_feed(chunk)


class Step:
    def __init__(self, engine, fn):
        self.engine, self.fn = engine, fn

    def __call__(self):
        return self.fn()


def replay_result(data, chunks, *, flag, binary=False, ext=0, compress=False, keys=None,
                  infile=None, prepare_first=None):
    """Read a whole response (every result of a multi-result) from `chunks`; returns
    (results, error, state, output) where results is a list of (field count,
    description, rows)."""
    e = _core.Connection()
    if infile is not None:
        e.infile_handler = infile
    stmt = 0
    if prepare_first is not None:
        e._engine_start(client_flag=flag, ext_caps=ext)
        e._engine_feed(prepare_first)
        stmt = e._engine_prepare_response()[0]
    e._engine_start(client_flag=flag, binary=binary, ext_caps=ext, compress=compress, stmt=stmt)
    results = []

    def run():
        pending = list(chunks)

        def feed():
            if not pending:
                raise AssertionError("needs bytes after the whole capture")
            e._engine_feed(pending.pop(0))

        while True:
            nc = e._engine_response()
            while nc is None:
                feed()
                nc = e._engine_response()
            rows = []
            while e.rows_pending:
                got = e._engine_fetch(-1, keys)
                rows += got
                if e.rows_pending:
                    feed()
            results.append((nc, e.description, rows))
            if not e.more_results:
                break
        assert not pending or all(not p for p in pending), "bytes left over"
        return results

    res, err = outcome(run)
    return results, err, state(e), e._engine_output()


def assert_same_for_every_chunking(data, seed, big=False, **kw):
    ref = replay_result(data, [data], **kw)
    for name, chunks in chunkings(data, seed, big)[1:]:
        got = replay_result(data, chunks, **kw)
        assert got == ref, "chunking %r differs" % name
    return ref


def capture(core, sql):
    core._start_capture()
    try:
        core.query(sql.encode() if isinstance(sql, str) else sql)
        while True:
            while core.rows_pending:
                core.fetch(-1)
            if not core.more_results:
                break
            core.next_result()
    except mysqlc.Error:
        pass
    return core._stop_capture()


@pytest.fixture
def core(server, conn_kwargs):
    c = mysqlc.connect(**conn_kwargs)
    yield c._conn
    c.close()


MIXED = ("SELECT seq, seq * 1.5, CONCAT('name-', seq), IF(seq % 7 = 0, NULL, seq), "
         "DATE_ADD('2024-01-01 00:00:00', INTERVAL seq SECOND), CAST(seq AS DECIMAL(12,3)), "
         "_utf8mb4 'zä€🎉', x'00ff10' FROM seq_1_to_500")


def test_text_result_set(core):
    data = capture(core, MIXED)
    results, err, st, _ = assert_same_for_every_chunking(data, 1, flag=core.client_flag)
    assert err is None and len(results) == 1
    nc, desc, rows = results[0]
    assert nc == 8 and len(rows) == 500
    assert rows[6][3] is None and rows[0][2] == "name-1" and rows[499][0] == 500
    # the same rows as the connection itself decoded
    core.query(MIXED.encode())
    assert core.fetch(-1) == rows


def test_dict_rows(core):
    data = capture(core, "SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, 'y'")
    results, err, _, _ = assert_same_for_every_chunking(data, 2, flag=core.client_flag,
                                                       keys=("a", "b"))
    assert results[0][2] == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]


def test_error_and_ok_responses(core):
    for sql, seed in (("SELECT * FROM no_such_table_here", 3), ("DO 1", 4),
                      ("SELECT 1 FROM DUAL WHERE 1 = 0", 5)):
        data = capture(core, sql)
        results, err, st, _ = assert_same_for_every_chunking(data, seed, flag=core.client_flag)
        if "no_such" in sql:
            assert err is not None and err[1][0] == 1146
            assert st["last_errno"] == 1146
        else:
            assert err is None


def test_multi_results(server, conn_kwargs):
    c = mysqlc.connect(client_flag=CLIENT_MULTI_STATEMENTS, **conn_kwargs)
    try:
        core = c._conn
        sql = "SELECT 1, 'a'; DO 2; SELECT seq FROM seq_1_to_50; SELECT * FROM nope_missing"
        data = capture(core, sql)
        results, err, st, _ = assert_same_for_every_chunking(data, 6, flag=core.client_flag)
        assert [r[0] for r in results] == [2, 0, 1]
        assert results[2][2] == [(i,) for i in range(1, 51)]
        assert err is not None and err[1][0] == 1146
    finally:
        c.close()


def test_local_infile_request(server, conn_kwargs, tmp_path):
    c = mysqlc.connect(local_infile=True, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE li (a INT, b VARCHAR(10))")
        path = tmp_path / "rows.tsv"
        path.write_bytes(b"1\tone\n2\ttwo\n3\tthree\n")
        core = c._conn
        # the core reads @@max_allowed_packet before the first statement naming LOCAL (it
        # sizes the file's packets): read now, so that the capture is the LOAD DATA's alone
        assert c._get_max_allowed_packet() > 0
        core._start_capture()
        cur.execute("LOAD DATA LOCAL INFILE '%s' INTO TABLE li" % path)
        data = core._stop_capture()
        assert cur.rowcount == 3
        assert data[4] == 0xFB            # the server's LOCAL INFILE request came first
        body = path.read_bytes()
        calls = []

        def handler(name):
            calls.append(name)
            return [body]

        results, err, st, out = assert_same_for_every_chunking(
            data, 7, flag=core.client_flag, infile=handler)
        assert err is None and st["affected_rows"] == 3 and calls
        # the file was framed for the server: the two chunks, then the empty packet
        assert out.endswith(b"\x00\x00\x00\x03") and body in out
    finally:
        c.close()


def test_local_infile_refused_keeps_the_error():
    """A refused LOCAL INFILE (no handler) sends the empty packet and raises the refusal
    after the server's answer, whatever the chunking."""
    req = b"\x0c\x00\x00\x01\xfb/etc/passwd"
    ok = b"\x07\x00\x00\x03\x00\x00\x00\x02\x00\x00\x00"
    data = req + ok
    ref = replay_result(data, [data], flag=CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF)
    assert ref[1] is not None and ref[1][1][0] == 2068
    assert ref[3] == b"\x00\x00\x00\x02"
    for name, chunks in chunkings(data, 8):
        assert replay_result(data, chunks, flag=CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF) == ref


def test_buffers_cannot_be_touched_from_inside_a_step():
    """A converter (or an infile handler, or another thread) calling _engine_feed,
    _engine_command or _engine_output while _engine_fetch decodes a row got through: the
    feed reallocated the receive buffer under the row decoder (valgrind: invalid reads in
    mc_conn_decode_row, then "row has more values than columns").  They get the thread
    guard's ProgrammingError, which propagates from the converter unchanged."""
    def pkt(seq, payload):
        return len(payload).to_bytes(3, "little") + bytes([seq]) + payload

    def coldef(name):
        return (b"\x03def\x00\x00\x00" + bytes([len(name)]) + name + b"\x00\x0c"
                + (45).to_bytes(2, "little") + (255).to_bytes(4, "little") + b"\xfd"
                + b"\x00\x00\x00\x00\x00")

    row = b"".join(bytes([100]) + bytes([c]) * 100 for c in b"ABC")
    data = pkt(1, b"\x03") + b"".join(pkt(2 + i, coldef(n)) for i, n in enumerate([b"a", b"b", b"c"]))
    data += pkt(5, row) + pkt(6, b"\xfe\x00\x00\x02\x00\x00\x00")
    for touch in (lambda e: e._engine_feed(b"\x00" * (8 << 20)),
                  lambda e: e._engine_command(3, b"SELECT 1"),
                  lambda e: e._engine_output()):
        e = _core.Connection()
        seen = []

        def conv(v, e=e, touch=touch):
            if not seen:
                seen.append(v)
                touch(e)
            return v
        e.converters = {253: conv}
        e._engine_start(client_flag=CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF)
        e._engine_feed(data)
        assert e._engine_response() == 3
        with pytest.raises(mysqlc.ProgrammingError, match="re-entered"):
            e._engine_fetch()
        assert seen == ["A" * 100]


def test_prepared_statement_and_binary_rows(core):
    sql = ("SELECT seq, CONCAT('v', seq), seq / 3, IF(seq = 5, NULL, seq), "
           "TIMESTAMP('2020-02-29 12:00:00.123456') FROM seq_1_to_300 WHERE seq > ?")
    core._start_capture()
    stmt, nparams, ncols = core.stmt_prepare(sql.encode())
    prep = core._stop_capture()
    assert (nparams, ncols) == (1, 5)
    core._start_capture()
    core.stmt_execute(stmt, (0,))
    core.fetch(-1)
    data = core._stop_capture()
    core.stmt_close(stmt)
    ext = core.ext_caps
    # the prepare response alone, in every chunking
    for name, chunks in chunkings(prep, 9):
        e = _core.Connection()
        e._engine_start(client_flag=core.client_flag, ext_caps=ext)
        got = None
        for ch in chunks:
            assert got is None
            e._engine_feed(ch)
            got = e._engine_prepare_response()
        assert got is not None and got[1:] == (1, 5), name
    results, err, st, _ = assert_same_for_every_chunking(
        data, 10, flag=core.client_flag, binary=True, ext=ext, prepare_first=prep)
    assert err is None
    rows = results[0][2]
    assert len(rows) == 300 and rows[4][3] is None and rows[0][1] == "v1"


def frames_of(data, seed, cseq=1):
    """`data` (plain packets) as compressed-protocol frames of random sizes."""
    rnd = random.Random(seed)
    out, i = bytearray(), 0
    while i < len(data):
        n = rnd.randint(1, 3000)
        part = data[i:i + n]
        i += n
        if rnd.random() < 0.3:
            body, ulen = part, 0                       # stored frame
        else:
            body, ulen = zlib.compress(part), len(part)
        out += len(body).to_bytes(3, "little") + bytes([cseq & 0xFF]) + ulen.to_bytes(3, "little")
        out += body
        cseq += 1
    return bytes(out)


def test_compressed_frames(core):
    data = capture(core, MIXED)
    plain = replay_result(data, [data], flag=core.client_flag)
    wire = frames_of(data, 11)
    ref = assert_same_for_every_chunking(wire, 12, flag=core.client_flag, compress=True)
    assert ref[0] == plain[0] and ref[1] is None


def test_a_20_mb_row(core):
    """A row larger than 16 MiB arrives as a multi-packet payload: joined alike however the
    fragments are split."""
    size = 20 * 1024 * 1024
    data = capture(core, "SELECT REPEAT('x', %d), 7" % size)
    assert len(data) > size
    ref = replay_result(data, [data], flag=core.client_flag)
    assert ref[1] is None
    (nc, desc, rows), = ref[0]
    assert rows == [("x" * size, 7)]
    for name, chunks in chunkings(data, 13, big=True)[1:]:
        assert replay_result(data, chunks, flag=core.client_flag) == ref, name
    # one byte at a time through the packet headers: the first 64 KiB, the join of the
    # two fragments and the end, in chunks of one byte; the rest in 1 MiB pieces
    cut = [0, 65536]
    join = 4 + 0  # offsets of interest are found from the data itself
    i, marks = 0, []
    while i < len(data):
        n = int.from_bytes(data[i:i + 3], "little")
        marks.append(i)
        i += 4 + n
    chunks, pos = [], 0
    spots = sorted(set([m for m in marks] + [len(data) - 65536]))
    for s in spots:
        s = max(s - 64, pos)
        while pos < s:
            k = min(1 << 20, s - pos)
            chunks.append(data[pos:pos + k])
            pos += k
        end = min(len(data), s + 128 if s != len(data) - 65536 else len(data))
        chunks += [data[j:j + 1] for j in range(pos, end)]
        pos = end
    if pos < len(data):
        chunks.append(data[pos:])
    assert b"".join(chunks) == data and cut and join == 4
    assert replay_result(data, chunks, flag=core.client_flag) == ref


# ----------------------------------------------------------------- connection phase

def replay_handshake(data, chunks, user, password, database=None, flags=0):
    e = _core.Connection()
    e._engine_handshake(user, password, database, client_flag=flags)
    pending = list(chunks)

    def run():
        while True:
            r = e._engine_handshake_step()
            if r:
                return r
            if not pending:
                raise AssertionError("the handshake needs bytes after the whole capture")
            e._engine_feed(pending.pop(0))

    res, err = outcome(run)
    return res, err, state(e), e._engine_output()


def handshake_capture(**connect):
    core = _core.Connection()
    core._start_capture()
    core.connect(**connect)
    data = core._stop_capture()
    core.close()
    return data


def check_handshake(data, seed, user, password, database=None, deterministic=True):
    ref = replay_handshake(data, [data], user, password, database)
    for name, chunks in chunkings(data, seed):
        got = replay_handshake(data, chunks, user, password, database)
        if deterministic:
            assert got == ref, name
        else:   # an RSA-encrypted password differs per run (random padding)
            assert got[:3] == ref[:3], name
    return ref


def test_handshake_native_password(server, conn_kwargs):
    kw = dict(conn_kwargs)
    where = {k: kw[k] for k in ("host", "port", "unix_socket") if kw.get(k) is not None}
    user = kw["user"].encode()
    pw = (kw.get("password") or "").encode()
    data = handshake_capture(user=user, password=pw, database=kw.get("database", "").encode() or None,
                             **where)
    res, err, st, out = check_handshake(data, 14, user, pw, (kw.get("database") or "").encode() or None)
    assert res is True and err is None
    assert st["server_version"] and st["thread_id"] > 0
    assert out[4:8] and len(out) > 36    # the HandshakeResponse41 was framed


def test_handshake_refused_login(server, conn_kwargs):
    kw = dict(conn_kwargs)
    where = {k: kw[k] for k in ("host", "port", "unix_socket") if kw.get(k) is not None}
    user = kw["user"].encode()
    core = _core.Connection()
    core._start_capture()
    with pytest.raises(mysqlc.OperationalError):
        core.connect(user=user, password=b"definitely-wrong", **where)
    data = core._stop_capture()
    res, err, st, out = check_handshake(data, 15, user, b"definitely-wrong")
    assert res is None and err[1][0] == 1045


@pytest.mark.parametrize("fast", [True, False])
def test_handshake_caching_sha2(fast, rsa_key):   # noqa: F811
    """MySQL 8's caching_sha2_password (scripted peer): the fast path, and full
    authentication with the password RSA-encrypted under the server's public key (random
    padding: the bytes sent differ per run, the outcome and state do not)."""
    key, spki, _ = rsa_key
    srv = Listener(caching_sha2_server(fast=fast, key=None if fast else (key, spki),
                                       secure=False))
    core = _core.Connection()
    core._start_capture()
    core.connect(host="127.0.0.1", port=srv.port, user=USER.encode(), password=PW,
                 connect_timeout=10, server_public_key=spki)
    data = core._stop_capture()
    core.close()
    srv.check()

    def run(chunks):
        e = _core.Connection()
        e._engine_handshake(USER.encode(), PW, server_public_key=spki)
        pending = list(chunks)

        def go():
            while not e._engine_handshake_step():
                e._engine_feed(pending.pop(0))
            return True
        out = e._engine_output()
        return outcome(go), state(e), out

    ref = run([data])
    assert ref[0] == (True, None) and ref[1]["auth_plugin_name"] == "caching_sha2_password"
    for name, chunks in chunkings(data, 16):
        got = run(chunks)
        assert got[:2] == ref[:2], name
        if fast:
            assert got == ref, name


def test_handshake_auth_switch(server, root_conn_kwargs):
    """An account whose plugin differs from the server's default: AuthSwitchRequest."""
    pytest.importorskip("nacl")
    kw = dict(root_conn_kwargs)
    admin = mysqlc.connect(**kw)
    cur = admin.cursor()
    try:
        cur.execute("INSTALL SONAME 'auth_ed25519'")
    except mysqlc.Error:
        pass
    cur.execute("DROP USER IF EXISTS 'chunk_ed'@'%'")
    cur.execute("CREATE USER 'chunk_ed'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('s3cr3t')")
    admin.close()
    where = {k: kw[k] for k in ("host", "port", "unix_socket") if kw.get(k) is not None}
    from mysqlc import _secure
    core = _core.Connection()
    core._start_capture()
    core.connect(user=b"chunk_ed", password=b"s3cr3t", auth_plugins=_secure.AUTH_PLUGINS, **where)
    data = core._stop_capture()
    core.close()

    def run(chunks):
        e = _core.Connection()
        e._engine_handshake(b"chunk_ed", b"s3cr3t", auth_plugins=_secure.AUTH_PLUGINS)
        pending = list(chunks)

        def go():
            while not e._engine_handshake_step():
                e._engine_feed(pending.pop(0))
            return True
        return outcome(go), state(e), e._engine_output()

    ref = run([data])
    assert ref[0] == (True, None) and ref[1]["auth_plugin_name"] == "client_ed25519"
    for name, chunks in chunkings(data, 18):
        assert run(chunks) == ref, name


def test_empty_compressed_frames():
    """Empty compressed-protocol frames (stored, length 0) carry nothing: before any byte
    was buffered (the fuzz harness's find: an offset applied to the receive buffer before
    it existed) and between the frames of a response."""
    ok = b"\x07\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00"

    def frame(seq, body):
        return len(body).to_bytes(3, "little") + bytes([seq]) + b"\x00\x00\x00" + body

    wire = frame(1, b"") + frame(2, ok[:5]) + frame(3, b"") + frame(4, ok[5:])
    for name, chunks in chunkings(wire, 19):
        got = replay_result(wire, chunks, flag=CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF,
                            compress=True)
        assert got[1] is None and got[0] == [(0, None, [])], name
    e = _core.Connection()
    e._engine_start(compress=True)
    e._engine_feed(frame(1, b""))            # nothing buffered yet: nothing to read
    assert e._engine_response() is None
