"""Fault injection on the asyncio transport: tests/test_faults.py's proxy and helpers
(imported, not copied) in front of mysqlc.aio connections.

A cut (FIN or RST) at every byte of the handshake and at sampled bytes of responses
(plain, multi-result, prepared, streaming), a stall past read_timeout, garbage instead
of the greeting or at a packet boundary: each must end in OperationalError or
InterfaceError within the deadline -- every case is bounded by ``asyncio.timeout``, so a
hang fails as such -- with the connection reported closed; after each test the server
answers a new connection.  The byte offsets come from a clean run of the same exchange
(the wire is the sync API's: one engine).
"""

import asyncio
import os
import time

import pytest

import mysqlc
import mysqlc.aio
from mysqlc.aio import cursors as acur
import test_faults as tf
from _peer import Fault, FaultProxy

LOOPS = ["asyncio", "uvloop"]


@pytest.fixture(scope="module")
def proxy(server):
    p = FaultProxy((server.host, server.port), arm_on_connect=False)
    yield p
    p.close()
    print("\naio fault injection: %d cases; outcomes %s" % (tf.STATS["cases"],
                                                         tf.STATS["errors"]))


def _loop(kind):
    if kind == "uvloop":
        import uvloop
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def _run(kind, coro_fn, *args, bound=120.0):
    async def bounded():
        async with asyncio.timeout(bound):
            return await coro_fn(*args)
    loop = _loop(kind)
    try:
        return loop.run_until_complete(bounded())
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


async def _connect_case(server, proxy, fault):
    """Connect through the armed proxy: a clean error within the deadline."""
    proxy.fault = fault
    proxy.arm_on_connect = True
    t0 = time.monotonic()
    try:
        try:
            async with asyncio.timeout(tf.DEADLINE + 1):
                conn = await mysqlc.aio.connect(**tf._kwargs(server, proxy))
        except TimeoutError:
            pytest.fail("%r: connect hung" % (fault,))
        except (mysqlc.OperationalError, mysqlc.InterfaceError) as exc:
            tf._record("aio %s(%s)" % (type(exc).__name__, exc.args[0]))
            assert time.monotonic() - t0 < tf.DEADLINE + 1
            return exc
        conn.close()
        pytest.fail("%r: connected" % (fault,))
    finally:
        proxy.arm_on_connect = False
        proxy.fault = None
        proxy.disarm()


async def _case(server, proxy, fault, action):
    """Connect cleanly, arm `fault`, run `action(conn)`: a clean error in time, the
    connection reported closed and refusing further use."""
    proxy.fault = fault
    conn = await mysqlc.aio.connect(**tf._kwargs(server, proxy))
    t0 = time.monotonic()
    try:
        proxy.arm()
        try:
            async with asyncio.timeout(tf.DEADLINE):
                await action(conn)
        except TimeoutError:
            pytest.fail("%r: no answer within %g s (a hang)" % (fault, tf.DEADLINE))
        except (mysqlc.OperationalError, mysqlc.InterfaceError) as exc:
            assert time.monotonic() - t0 < tf.DEADLINE
            tf._record("aio %s(%s)" % (type(exc).__name__, exc.args[0]))
            assert conn.closed, "%r: still open after %r" % (fault, exc)
            with pytest.raises((mysqlc.OperationalError, mysqlc.InterfaceError)):
                await conn.cursor().execute("SELECT 1")
            return exc
        pytest.fail("%r: no error" % (fault,))
    finally:
        proxy.disarm()
        proxy.fault = None
        conn.close()


# =========================================================================== handshake

@pytest.mark.parametrize("kind", LOOPS)
@pytest.mark.parametrize("action", ["cut", "reset"])
def test_cut_at_every_handshake_byte(server, proxy, action, kind):
    counts = tf._handshake_bytes(server, proxy)

    async def body():
        for at in range(counts["s2c"]):                  # every byte the server sends
            await _connect_case(server, proxy, Fault("s2c", at, action))
        for at in tf._offsets(counts["c2s"], dense=100, samples=20):
            await _connect_case(server, proxy, Fault("c2s", at, action))
    _run(kind, body)
    tf._check_server_still_fine(server)


def test_stall_and_garbage_in_the_handshake(server, proxy):
    async def body():
        for at in (0, 3, 4, 40):
            t0 = time.monotonic()
            exc = await _connect_case(server, proxy, Fault("s2c", at, "stall",
                                                           seconds=tf.READ_TIMEOUT + 2))
            assert exc.args[0] == 2013 and time.monotonic() - t0 < tf.READ_TIMEOUT + 2.5
        for data in (b"\xff" * 64, b"HTTP/1.1 400 Bad Request\r\n\r\n", os.urandom(300),
                     b"\x05\x00\x00\x00\x0a5.5\x00", b"\x00\x00\x00\x00"):
            await _connect_case(server, proxy, Fault("s2c", 0, "garbage", data=data))
    _run("asyncio", body)
    tf._check_server_still_fine(server)


# =========================================================================== responses

async def _select_all(c):
    cur = c.cursor()
    await cur.execute(tf.SELECT_MIXED)
    assert len(await cur.fetchall()) == 300


async def _multi_result(c):
    cur = c.cursor()
    await cur.execute("SELECT 1, 'a'; SELECT seq, REPEAT('y', seq) FROM seq_1_to_50; DO 1; "
                      "SELECT NULL")
    n = 1
    await cur.fetchall()
    while await cur.nextset():
        await cur.fetchall()
        n += 1
    assert n == 4


async def _prepared(c):
    cur = c.cursor(prepared=True)
    await cur.execute("SELECT seq, CONCAT('p', seq), seq / 3, NOW(6) FROM seq_1_to_200 "
                      "WHERE seq > ?", (0,))
    assert len(await cur.fetchall()) == 200


async def _streaming(c):
    cur = c.cursor(acur.SSCursor)
    await cur.execute(tf.SELECT_MIXED)
    assert len([r async for r in cur]) == 300


RESPONSES = {"select": (_select_all, tf._select_all),
             "multi_result": (_multi_result, tf._multi_result),
             "prepared": (_prepared, tf._prepared), "streaming": (_streaming, tf._streaming)}


@pytest.mark.parametrize("name", sorted(RESPONSES))
@pytest.mark.parametrize("action", ["cut", "reset"])
def test_cut_anywhere_in_a_response(server, proxy, name, action):
    run, sync_run = RESPONSES[name]
    n = tf._measure(server, proxy, sync_run)       # the same bytes on the wire

    async def body():
        for at in tf._offsets(n, dense=48, samples=25):
            await _case(server, proxy, Fault("s2c", at, action), run)
    _run("uvloop" if action == "reset" else "asyncio", body)
    tf._check_server_still_fine(server)


@pytest.mark.parametrize("kind", LOOPS)
def test_stall_past_read_timeout(server, proxy, kind):
    n = tf._measure(server, proxy, tf._select_all)

    async def body():
        for at in (0, 4, 30, n // 2, n - 1):
            t0 = time.monotonic()
            exc = await _case(server, proxy, Fault("s2c", at, "stall",
                                                   seconds=tf.READ_TIMEOUT + 3), _select_all)
            elapsed = time.monotonic() - t0
            assert isinstance(exc, mysqlc.OperationalError) and exc.args[0] == 2013, exc
            assert tf.READ_TIMEOUT * 0.8 < elapsed < tf.READ_TIMEOUT + 2.5, elapsed
    _run(kind, body)
    tf._check_server_still_fine(server)


@pytest.mark.parametrize("data", [b"\xff\xff\xff\x01" + b"\x00" * 100, b"\x00" * 4,
                                  os.urandom(2000), b"\x01\x00\x00\x01\xfb"],
                         ids=["huge-len", "zero", "random", "null-row"])
def test_garbage_at_a_packet_boundary(server, proxy, data):
    starts = tf._packet_starts(server, proxy, tf._select_all)

    async def body():
        for at in (starts[0], starts[1], starts[len(starts) // 2], starts[-1]):
            await _case(server, proxy, Fault("s2c", at, "garbage", data=data), _select_all)
    _run("asyncio", body)
    tf._check_server_still_fine(server)


def test_cut_while_the_client_sends(server, proxy):
    """A cut in the middle of a large executemany the client is writing (the write side
    of the transport: pause_writing / drain)."""
    rows = [(i, "value %d with some text" % i, os.urandom(100)) for i in range(2000)]
    c = mysqlc.connect(**server.connect_kwargs())
    c.cursor().execute("CREATE OR REPLACE TABLE aio_fault_rows (id INT PRIMARY KEY, "
                       "v VARCHAR(200), b BLOB)")
    c.close()

    async def run(conn):
        cur = conn.cursor()
        await cur.execute("DELETE FROM aio_fault_rows")
        await cur.executemany("INSERT INTO aio_fault_rows (id, v, b) VALUES (%s, %s, %s)",
                              rows)
        await conn.commit()

    def sync_run(conn):
        cur = conn.cursor()
        cur.execute("DELETE FROM aio_fault_rows")
        cur.executemany("INSERT INTO aio_fault_rows (id, v, b) VALUES (%s, %s, %s)", rows)
        conn.commit()
    n = tf._measure(server, proxy, sync_run, direction="c2s")

    async def body():
        for at in tf._offsets(n, dense=8, samples=12):
            await _case(server, proxy, Fault("c2s", at, "cut"), run)
    try:
        _run("asyncio", body)
        tf._check_server_still_fine(server)
    finally:
        c = mysqlc.connect(**server.connect_kwargs())
        c.cursor().execute("DROP TABLE IF EXISTS aio_fault_rows")
        c.close()
