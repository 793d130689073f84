"""Fault injection: a TCP proxy between the driver and the real server breaks the stream.

``FaultProxy`` (tests/_peer.py) cuts the connection at a chosen byte (FIN or RST), stalls
it past ``read_timeout``, corrupts a byte (a length header, a sequence id) or replaces
the rest of the stream with garbage -- in the handshake, a query's response (packet
headers, column definitions, the middle of a row, between result sets), a prepared
statement's binary rows, a streaming cursor, while the client sends an ``executemany``
batch or a ``LOAD DATA LOCAL INFILE`` file.

Every case must end with OperationalError or InterfaceError within the timeout (no
crash, no hang), the connection must report itself closed, and the next connection
must work.  A byte corrupted inside a value can go unnoticed (the protocol has no
checksum without TLS); those cases only have to end without a crash or a hang and with
the connection either usable or reported closed.

The byte offsets are taken from a clean run of the same exchange through the proxy,
so the cuts land on every packet header and, sampled, everywhere between.
"""

import os
import time

import pytest

import mysqlc
from _peer import Fault, FaultProxy

READ_TIMEOUT = 1.0
DEADLINE = READ_TIMEOUT + 4.0       # a case taking longer than this counts as a hang
#: the every-byte cut tests (test_bulk_faults, test_pipeline) cut at every STRIDE-th byte:
#: 1 (every byte) but in the ASan/UBSan run (tools/sanitize-test.sh sets 3: the same code
#: paths at a third of the cases, the run's time being the CI's longest step)
STRIDE = max(1, int(os.environ.get("MYSQLC_FAULT_STRIDE", "1")))
STATS = {"cases": 0, "errors": {}, "ok_after_corruption": 0}

SELECT_MIXED = ("SELECT seq, seq * 1000003 AS big, CONCAT('row-', seq, '-', REPEAT('x', seq % 97)) AS s,"
                " CAST(seq / 7 AS DECIMAL(20, 6)) AS d, DATE_ADD('2024-01-01 00:00:00', INTERVAL seq MINUTE) AS t,"
                " IF(seq % 5 = 0, NULL, seq) AS n FROM seq_1_to_300")


@pytest.fixture(scope="module")
def proxy(server):
    p = FaultProxy((server.host, server.port), arm_on_connect=False)
    yield p
    p.close()
    print("\nfault injection: %d cases; outcomes %s; %d corrupted responses decoded without error"
          % (STATS["cases"], STATS["errors"], STATS["ok_after_corruption"]))


@pytest.fixture(scope="module")
def faults_table(server):
    c = mysqlc.connect(**server.connect_kwargs())
    cur = c.cursor()
    cur.execute("CREATE OR REPLACE TABLE fault_rows (id INT PRIMARY KEY, v VARCHAR(200), b BLOB)")
    c.commit()
    c.close()
    return "fault_rows"


def _kwargs(server, proxy, **extra):
    kw = server.connect_kwargs()
    kw.update(host="127.0.0.1", port=proxy.port, read_timeout=READ_TIMEOUT,
              write_timeout=READ_TIMEOUT, connect_timeout=READ_TIMEOUT + 1)
    kw.update(extra)
    return kw


def _record(outcome):
    STATS["cases"] += 1
    STATS["errors"][outcome] = STATS["errors"].get(outcome, 0) + 1


def _check_server_still_fine(server):
    c = mysqlc.connect(**server.connect_kwargs())
    cur = c.cursor()
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)
    c.close()


def _offsets(n, dense=64, samples=40):
    """Every offset of the first `dense` bytes (headers, the first column definition),
    then `samples` spread over the rest, and the last byte."""
    offs = set(range(min(n, dense)))
    if n > dense:
        step = max(1, (n - dense) // samples)
        offs.update(range(dense, n, step))
        offs.add(n - 1)
    return sorted(offs)


def _release(c):
    """A closed mysqlc.aio test proxy (tests/_apis.py, the aio run of a both_apis module)
    also stops its private event loop's thread now instead of at the test's end: a test
    of thousands of cases would otherwise hold a loop (a thread and its descriptors) per
    case, past select()'s 1024 descriptors.  The sync API: nothing to do."""
    from _apis import is_aio
    if is_aio(c):
        c._shutdown()


def _measure(server, proxy, action, direction="s2c", **kw):
    """Bytes each way of `action(conn)` on a clean connection through the proxy."""
    proxy.fault = None
    c = mysqlc.connect(**_kwargs(server, proxy, **kw))
    try:
        proxy.arm()
        action(c)
        n = proxy.counts[direction]
    finally:
        proxy.disarm()
        c.close()
        _release(c)
    assert n > 0
    return n


def _run_case(server, proxy, fault, action, expect_error=True, **kw):
    """Connect through the proxy, arm `fault`, run `action(conn)`; check the outcome."""
    proxy.fault = fault
    c = mysqlc.connect(**_kwargs(server, proxy, **kw))
    t0 = time.monotonic()
    try:
        proxy.arm()
        try:
            action(c)
        except (mysqlc.OperationalError, mysqlc.InterfaceError) as exc:
            elapsed = time.monotonic() - t0
            assert elapsed < DEADLINE, "%r took %.1f s" % (fault, elapsed)
            _record("%s(%s)" % (type(exc).__name__, exc.args[0]))
            assert not c.open, "%r: connection still reported open after %r" % (fault, exc)
            with pytest.raises((mysqlc.InterfaceError, mysqlc.OperationalError)):
                c.cursor().execute("SELECT 1")
            return exc
        except (mysqlc.ProgrammingError, mysqlc.DataError, mysqlc.DatabaseError, ValueError,
                ArithmeticError) as exc:
            # a corrupted byte inside a statement or a value: the server or a decoder
            # rejects it; allowed only where the fault is a corruption
            assert not expect_error or fault.action == "corrupt", "%r raised %r" % (fault, exc)
            _record("%s" % type(exc).__name__)
            return exc
        elapsed = time.monotonic() - t0
        assert elapsed < DEADLINE, "%r took %.1f s" % (fault, elapsed)
        if expect_error and not proxy.fired and kw.get("compress"):
            # compressed: the server groups its packets into frames as its writes happen
            # to fall, so an exchange's byte count moves from run to run (under load
            # more); this run ended before the offset measured on a clean one: the cut
            # never happened (the action's own checks passed: nothing reported done
            # that the server did not confirm)
            _record("cut not reached")
            return None
        if expect_error:
            pytest.fail("%r: no error%s" % (fault, "" if proxy.fired else
                                            " (and the cut never happened)"))
        _record("no error")
        STATS["ok_after_corruption"] += 1
        return None
    finally:
        proxy.disarm()
        proxy.fault = None
        try:
            c.close()
        except mysqlc.Error:
            pass
        _release(c)


# =========================================================================== connection phase

def _connect_only(server, proxy, fault):
    proxy.fault = fault
    proxy.arm_on_connect = True
    t0 = time.monotonic()
    try:
        with pytest.raises((mysqlc.OperationalError, mysqlc.InterfaceError)) as ei:
            c = mysqlc.connect(**_kwargs(server, proxy))
            c.close()
        assert time.monotonic() - t0 < DEADLINE + 1
        _record("%s(%s)" % (ei.type.__name__, ei.value.args[0]))
    finally:
        proxy.arm_on_connect = False
        proxy.fault = None
        proxy.disarm()


def _handshake_bytes(server, proxy):
    proxy.fault = None
    proxy.arm_on_connect = True
    try:
        c = mysqlc.connect(**_kwargs(server, proxy))
        counts = dict(proxy.counts)
        c.close()
    finally:
        proxy.arm_on_connect = False
        proxy.disarm()
    return counts


@pytest.mark.parametrize("action", ["cut", "reset"])
def test_cut_during_connect_server_side(server, proxy, action):
    n = _handshake_bytes(server, proxy)["s2c"]
    for at in _offsets(n, dense=130, samples=20):
        _connect_only(server, proxy, Fault("s2c", at, action))
    _check_server_still_fine(server)


def test_cut_during_connect_client_side(server, proxy):
    n = _handshake_bytes(server, proxy)["c2s"]
    for at in _offsets(n, dense=100, samples=20):
        _connect_only(server, proxy, Fault("c2s", at, "cut"))
    _check_server_still_fine(server)


def test_stall_during_handshake(server, proxy):
    for at in (0, 3, 4, 40):
        _connect_only(server, proxy, Fault("s2c", at, "stall", seconds=READ_TIMEOUT + 2))


def test_garbage_instead_of_handshake(server, proxy):
    for data in (b"\xff" * 64, b"HTTP/1.1 400 Bad Request\r\n\r\n", os.urandom(300),
                 b"\x05\x00\x00\x00\x0a5.5\x00", b"\x00\x00\x00\x00"):
        _connect_only(server, proxy, Fault("s2c", 0, "garbage", data=data))


# =========================================================================== query responses

def _select_all(c):
    cur = c.cursor()
    cur.execute(SELECT_MIXED)
    rows = cur.fetchall()
    assert len(rows) == 300


def _multi_result(c):
    cur = c.cursor()
    cur.execute("SELECT 1, 'a'; SELECT seq, REPEAT('y', seq) FROM seq_1_to_50; DO 1; SELECT NULL")
    n = 0
    while True:
        cur.fetchall()
        n += 1
        if not cur.nextset():
            break
    assert n == 4


def _prepared(c):
    cur = c.cursor(prepared=True)
    cur.execute("SELECT seq, CONCAT('p', seq), seq / 3, NOW(6) FROM seq_1_to_200 WHERE seq > ?", (0,))
    assert len(cur.fetchall()) == 200


def _streaming(c):
    cur = c.cursor(mysqlc.cursors.SSCursor)
    cur.execute(SELECT_MIXED)
    n = 0
    for _ in cur:
        n += 1
    assert n == 300


RESPONSES = {"select": _select_all, "multi_result": _multi_result, "prepared": _prepared,
             "streaming": _streaming}


@pytest.mark.parametrize("name", sorted(RESPONSES))
@pytest.mark.parametrize("action", ["cut", "reset"])
def test_cut_anywhere_in_a_response(server, proxy, name, action):
    run = RESPONSES[name]
    n = _measure(server, proxy, run)
    for at in _offsets(n, dense=48, samples=25):
        _run_case(server, proxy, Fault("s2c", at, action), run)
    _check_server_still_fine(server)


@pytest.mark.parametrize("name", ["select", "prepared"])
def test_stall_past_read_timeout(server, proxy, name):
    run = RESPONSES[name]
    n = _measure(server, proxy, run)
    for at in (0, 2, 4, 5, 30, n // 2, n - 1):
        t0 = time.monotonic()
        exc = _run_case(server, proxy, Fault("s2c", at, "stall", seconds=READ_TIMEOUT + 3), run)
        elapsed = time.monotonic() - t0
        assert isinstance(exc, mysqlc.OperationalError) and exc.args[0] == 2013, exc
        assert READ_TIMEOUT * 0.8 < elapsed < READ_TIMEOUT + 2.5, elapsed


@pytest.mark.parametrize("at", [0, 1, 2, 3], ids=["len0", "len1", "len2", "seq"])
@pytest.mark.parametrize("xor", [0x01, 0x80, 0xFF])
def test_corrupt_first_packet_header(server, proxy, at, xor):
    """A corrupted length or sequence id in the first response packet: out of sync,
    so it must end in an error (a shorter length misparses, a longer one waits for
    bytes that never come until read_timeout)."""
    _run_case(server, proxy, Fault("s2c", at, "corrupt", xor=xor), _select_all)


def _packet_starts(server, proxy, run):
    """Offsets of the packet headers in the clean response of `run` (the bytes the
    proxy counts once armed), from a capture of the received stream."""
    proxy.fault = None
    c = mysqlc.connect(**_kwargs(server, proxy))
    try:
        proxy.arm()
        c._conn._start_capture()
        run(c)
        wire = c._conn._stop_capture()
    finally:
        proxy.disarm()
        c.close()
    pos, starts = 0, []
    while pos + 4 <= len(wire):
        starts.append(pos)
        pos += 4 + int.from_bytes(wire[pos:pos + 3], "little")
    return starts


def test_corrupt_header_of_a_later_packet(server, proxy):
    """Corrupt the length bytes or the sequence id of packets in the middle of the
    result (column definitions, rows, the final OK)."""
    starts = _packet_starts(server, proxy, _select_all)
    picked = starts[1:6] + starts[8::60] + starts[-1:]
    for h in picked:
        for k, xor in ((0, 0x40), (1, 0x01), (2, 0x01), (3, 0x01)):
            _run_case(server, proxy, Fault("s2c", h + k, "corrupt", xor=xor), _select_all)
    assert len(picked) >= 8


def test_corrupt_any_byte_never_crashes(server, proxy):
    """A flipped byte anywhere: an error or (inside a value) a wrong value, never a
    crash or a hang."""
    n = _measure(server, proxy, _select_all)
    for at in _offsets(n, dense=16, samples=60):
        _run_case(server, proxy, Fault("s2c", at, "corrupt", xor=0x5A), _select_all,
                  expect_error=False)


@pytest.mark.parametrize("data", [b"\xff\xff\xff\x01" + b"\x00" * 100, b"\x00" * 4, os.urandom(2000),
                                  b"\x01\x00\x00\x01\xfb", b"\x00\x00\x00\x07"],
                         ids=["huge-len", "zero", "random", "null-row", "empty-packet"])
def test_garbage_at_a_packet_boundary(server, proxy, data):
    """The rest of the stream replaced by garbage starting at a packet header."""
    starts = _packet_starts(server, proxy, _select_all)
    for at in (starts[0], starts[1], starts[len(starts) // 2], starts[-1]):
        _run_case(server, proxy, Fault("s2c", at, "garbage", data=data), _select_all)


# =========================================================================== while the client sends

def test_cut_during_executemany(server, proxy, faults_table):
    rows = [(i, "value %d with some text" % i, os.urandom(100)) for i in range(2000)]

    def run(c):
        cur = c.cursor()
        cur.execute("DELETE FROM fault_rows")
        cur.executemany("INSERT INTO fault_rows (id, v, b) VALUES (%s, %s, %s)", rows)
        c.commit()

    n = _measure(server, proxy, run, direction="c2s")
    assert n > 2000 * 100
    for at in _offsets(n, dense=8, samples=20):
        _run_case(server, proxy, Fault("c2s", at, "cut"), run)
    for at in (10, n // 3):
        _run_case(server, proxy, Fault("c2s", at, "reset"), run)
    _check_server_still_fine(server)


def test_cut_during_prepared_executemany(server, proxy, faults_table):
    def run(c):
        cur = c.cursor(prepared=True)
        cur.execute("DELETE FROM fault_rows")
        cur.executemany("INSERT INTO fault_rows (id, v, b) VALUES (?, ?, ?)",
                        [(i, "v%d" % i, b"\x00\x01" * 50) for i in range(200)])
        c.commit()

    for direction in ("c2s", "s2c"):
        n = _measure(server, proxy, run, direction=direction)
        for at in _offsets(n, dense=4, samples=15):
            _run_case(server, proxy, Fault(direction, at, "cut"), run)


def _local_infile_works(server):
    c = mysqlc.connect(local_infile=True, **server.connect_kwargs())
    try:
        cur = c.cursor()
        cur.execute("SELECT @@local_infile")
        return bool(cur.fetchall()[0][0])
    finally:
        c.close()


def test_cut_during_load_data_local_infile(server, proxy, faults_table):
    if not _local_infile_works(server):
        c = mysqlc.connect(**server.connect_kwargs(root=True))
        c.cursor().execute("SET GLOBAL local_infile = 1")
        c.close()
    data = b"".join(b"%d\tline %d\t\\N\n" % (i, i) for i in range(5000))

    def run(c):
        cur = c.cursor()
        cur.execute("DELETE FROM fault_rows")
        cur.execute("LOAD DATA LOCAL INFILE 'rows.tsv' INTO TABLE fault_rows (id, v, b)", infile=data)
        assert cur.rowcount == 5000
        c.commit()

    n_up = _measure(server, proxy, run, direction="c2s", local_infile=True)
    assert n_up > len(data)
    for at in _offsets(n_up, dense=4, samples=25):
        _run_case(server, proxy, Fault("c2s", at, "cut"), run, local_infile=True)
    n_down = _measure(server, proxy, run, direction="s2c", local_infile=True)
    for at in range(n_down):   # the file request and the final OK, every byte
        _run_case(server, proxy, Fault("s2c", at, "cut"), run, local_infile=True)
    _check_server_still_fine(server)
