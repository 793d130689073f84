"""mysqlc.aio.create_pool / Pool against the real server: sizes, waiting (first come,
first served), reuse, the checks on acquire (lost connections replaced, idle ones pinged,
old ones recycled), the reset on release (open transactions rolled back, unread results
and closed connections dropped), closing, and acquire timeouts.

The pool's rules are in mysqlc/aio/pool.py; they follow aiomysql's pool."""

import asyncio
import time

import pytest

import mysqlc
import mysqlc.aio
from _aio_run import run


async def tagged(conn, tag):
    """A query whose answer only this call can expect."""
    async with conn.cursor() as cur:
        await cur.execute("SELECT %s, %s * 3", (tag, tag))
        row = await cur.fetchone()
    assert tuple(row) == (tag, tag * 3)


def processlist(conn_kwargs, ids):
    """{id: (command, info)} of the server threads `ids` that still exist."""
    with mysqlc.connect(**conn_kwargs) as c:
        cur = c.cursor()
        if not ids:
            return {}
        cur.execute("SELECT ID, COMMAND, INFO FROM information_schema.PROCESSLIST"
                    " WHERE ID IN (%s)" % ", ".join(str(int(i)) for i in ids))
        return {r[0]: (r[1], r[2]) for r in cur.fetchall()}


def wait_gone(conn_kwargs, ids, deadline=5.0):
    end = time.monotonic() + deadline
    while True:
        left = processlist(conn_kwargs, ids)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


class pool_of:
    """``async with pool_of(conn_kwargs, **kw) as pool``: create_pool's context, except
    that a failing test terminates the pool (close() + wait_closed() would wait for
    the connections the failed test never released)."""

    def __init__(self, conn_kwargs, **kw):
        self._kw = dict(conn_kwargs, **kw)

    async def __aenter__(self):
        self.pool = await mysqlc.aio.create_pool(**self._kw)
        return self.pool

    async def __aexit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.pool.terminate()
        else:
            self.pool.close()
        await asyncio.wait_for(self.pool.wait_closed(), 10)


def kill(conn_kwargs, thread_id):
    with mysqlc.connect(**conn_kwargs) as c:
        c.cursor().execute("KILL %d" % thread_id)


# ---------------------------------------------------------------- sizes, reuse, waiting

def test_sizes_and_reuse(conn_kwargs):
    async def main():
        pool = await mysqlc.aio.create_pool(minsize=2, maxsize=3, **conn_kwargs)
        assert (pool.minsize, pool.maxsize, pool.size, pool.freesize) == (2, 3, 2, 2)
        a = await pool.acquire()
        assert (pool.size, pool.freesize) == (2, 1)
        b = await pool.acquire()
        c = await pool.acquire()            # the third is opened on demand
        assert (pool.size, pool.freesize) == (3, 0)
        ids = {a.thread_id(), b.thread_id(), c.thread_id()}
        assert len(ids) == 3
        for i, conn in enumerate((a, b, c)):
            await tagged(conn, 100 + i)
        await pool.release(b)
        assert (pool.size, pool.freesize) == (3, 1)
        again = await pool.acquire()
        assert again is b                   # reused, not reopened
        await tagged(again, 7)
        for conn in (a, c, again):
            await pool.release(conn)
        assert (pool.size, pool.freesize) == (3, 3)
        pool.close()
        await pool.wait_closed()
        assert pool.closed and pool.size == 0
        assert a.closed and b.closed and c.closed
        return ids

    ids = run(main())
    assert wait_gone(conn_kwargs, ids) == {}


def test_minsize_zero_and_unbounded(conn_kwargs):
    async def main():
        async with pool_of(conn_kwargs, minsize=0, maxsize=0) as pool:
            assert (pool.size, pool.freesize) == (0, 0)
            conns = [await pool.acquire() for _ in range(12)]   # maxsize 0: no bound
            assert pool.size == 12
            await asyncio.gather(*(tagged(c, i) for i, c in enumerate(conns)))
            for c in conns:
                pool.release(c)
            await asyncio.sleep(0)
            assert pool.freesize == 12
    run(main())


def test_waiters_first_come_first_served(conn_kwargs):
    async def main():
        pool = await mysqlc.aio.create_pool(minsize=2, maxsize=2, **conn_kwargs)
        held = [await pool.acquire(), await pool.acquire()]
        order = []

        async def waiter(name):
            async with pool.acquire() as conn:
                order.append(name)
                await tagged(conn, len(order))

        tasks = []
        for name in ("w0", "w1", "w2"):
            tasks.append(asyncio.create_task(waiter(name)))
            await asyncio.sleep(0.01)       # each one queued before the next starts
        assert order == [] and pool.size == 2
        await pool.release(held.pop())
        # handed straight to the first waiter: a newcomer cannot take it
        assert pool.freesize == 0
        late = asyncio.create_task(waiter("late"))
        await asyncio.sleep(0.05)
        assert order[:1] == ["w0"]
        await pool.release(held.pop())
        await asyncio.wait_for(asyncio.gather(*tasks, late), 10)
        assert order == ["w0", "w1", "w2", "late"]
        assert (pool.size, pool.freesize) == (2, 2)
        pool.close()
        await pool.wait_closed()
    run(main())


def test_acquire_timeout(conn_kwargs):
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1) as pool:
            conn = await pool.acquire()
            t0 = time.monotonic()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await pool.acquire()
            assert 0.15 < time.monotonic() - t0 < 2
            assert (pool.size, pool.freesize) == (1, 0)
            # the timed-out waiter is gone: the next release makes the connection free
            await pool.release(conn)
            assert pool.freesize == 1
            async with asyncio.timeout(2):
                again = await pool.acquire()
            assert again is conn
            await tagged(again, 5)

            # granted and cancelled in the same step: the connection goes back
            task = asyncio.create_task(_acquire(pool))
            await asyncio.sleep(0.01)
            pool.release(again)                 # handed to the waiting task...
            task.cancel()                       # ...which is cancelled before it runs
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (pool.size, pool.freesize) == (1, 1)
            async with pool.acquire() as c:
                assert c is conn
                await tagged(c, 6)
    run(main())


async def _acquire(pool):
    return await pool.acquire()


def test_waiter_cancelled_keeps_order(conn_kwargs):
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1) as pool:
            conn = await pool.acquire()
            first = asyncio.create_task(_acquire(pool))
            await asyncio.sleep(0.01)
            second = asyncio.create_task(_acquire(pool))
            await asyncio.sleep(0.01)
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first
            await pool.release(conn)
            got = await asyncio.wait_for(second, 5)
            assert got is conn
            await tagged(got, 1)
            await pool.release(got)
            assert (pool.size, pool.freesize) == (1, 1)
    run(main())


# ---------------------------------------------------------------- checks on acquire

def test_killed_free_connection_replaced(conn_kwargs):
    """A free connection the server closed (KILL) is seen closed (the stream's end
    arrived) and replaced on acquire, without a ping."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            async with pool.acquire() as conn:
                old = conn.thread_id()
            await asyncio.to_thread(kill, conn_kwargs, old)
            await asyncio.sleep(0.2)
            async with pool.acquire() as conn2:
                assert conn2 is not conn and conn.closed
                assert conn2.thread_id() != old
                await tagged(conn2, 42)
            assert (pool.size, pool.freesize) == (1, 1)
    run(main())


def test_idle_connection_pinged(conn_kwargs):
    """A free connection idle for more than ping_idle seconds (1 s by default) is pinged
    on acquire; one idle for less is not (the ping calls are counted by a wrapper around
    the connection's own ping)."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1) as pool:
            conn = await pool.acquire()
            pings = []
            real_ping = conn.ping

            async def ping(*args, **kwargs):
                pings.append(args)
                return await real_ping(*args, **kwargs)
            conn.ping = ping
            await pool.release(conn)
            async with pool.acquire() as c:
                assert c is conn and pings == []          # idle < 1 s: not pinged
            await asyncio.sleep(1.2)
            async with pool.acquire() as c:
                assert c is conn and len(pings) == 1      # idle > 1 s: pinged, kept
                await tagged(c, 1)
            del conn.ping
    run(main())


def test_ping_idle_zero_checks_every_acquire(conn_kwargs):
    async def main():
        async with pool_of(conn_kwargs, minsize=2, maxsize=2, ping_idle=0) as pool:
            a, b = await pool.acquire(), await pool.acquire()
            ids = (a.thread_id(), b.thread_id())
            await pool.release(a)
            await pool.release(b)
            for tid in ids:
                await asyncio.to_thread(kill, conn_kwargs, tid)
            got = [await pool.acquire(), await pool.acquire()]
            assert {c.thread_id() for c in got}.isdisjoint(ids)
            for i, c in enumerate(got):
                await tagged(c, i)
                await pool.release(c)
            assert pool.size == 2
    run(main())


def test_connection_lost_in_use_is_dropped_on_release(conn_kwargs):
    """Killed while handed out: its next command fails, it is closed, and release()
    drops it; the next acquire opens a new one."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1) as pool:
            conn = await pool.acquire()
            old = conn.thread_id()
            try:
                await asyncio.to_thread(kill, conn_kwargs, old)
                with pytest.raises(mysqlc.OperationalError) as info:
                    await tagged(conn, 1)
                assert info.value.args[0] in (2006, 2013)
                assert conn.closed
            finally:
                await pool.release(conn)
            assert pool.size == 0              # dropped, room freed
            async with pool.acquire() as fresh:
                assert fresh.thread_id() != old
                await tagged(fresh, 2)
    run(main())


def test_recycle(conn_kwargs):
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, pool_recycle=0.5,
                           ping_idle=None) as pool:
            async with pool.acquire() as conn:
                first = conn.thread_id()
            async with pool.acquire() as conn:
                assert conn.thread_id() == first   # younger than 0.5 s: kept
            await asyncio.sleep(0.7)
            async with pool.acquire() as conn:
                assert conn.thread_id() != first   # recycled
                await tagged(conn, 3)
            assert pool.size == 1
            return first

    first = run(main())
    assert wait_gone(conn_kwargs, [first]) == {}   # the old one was really closed


# ---------------------------------------------------------------- reset on release

def test_transaction_rolled_back_on_release(conn_kwargs):
    with mysqlc.connect(**conn_kwargs) as c:
        cur = c.cursor()
        cur.execute("DROP TABLE IF EXISTS aio_pool_tx")
        cur.execute("CREATE TABLE aio_pool_tx (id INT PRIMARY KEY) ENGINE=InnoDB")

    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, autocommit=False) as pool:
            async with pool.acquire() as conn:
                tid = conn.thread_id()
                await conn.begin()
                async with conn.cursor() as cur:
                    await cur.execute("INSERT INTO aio_pool_tx VALUES (1)")
                # released without commit: the row lock must not outlive the release
            assert (pool.size, pool.freesize) == (1, 1)
            other = await mysqlc.aio.connect(**conn_kwargs)
            async with other.cursor() as cur:
                await cur.execute("SET SESSION innodb_lock_wait_timeout = 1")
                await cur.execute("INSERT INTO aio_pool_tx VALUES (1)")   # no lock wait
                await other.commit()
            await other.ensure_closed()
            async with pool.acquire() as conn:
                assert conn.thread_id() == tid     # rolled back, not closed
                async with conn.cursor() as cur:
                    await cur.execute("SELECT COUNT(*) FROM aio_pool_tx")
                    assert (await cur.fetchone())[0] == 1   # the other connection's row
                await tagged(conn, 9)
    try:
        run(main())
    finally:
        with mysqlc.connect(**conn_kwargs) as c:
            c.cursor().execute("DROP TABLE IF EXISTS aio_pool_tx")


def test_task_cancelled_inside_acquire_block(conn_kwargs):
    """The task holding the connection is cancelled in a transaction, mid-statement: the
    statement is stopped, the connection released and rolled back (the reset runs
    shielded from the cancellation) and handed out again in sync."""
    with mysqlc.connect(**conn_kwargs) as c:
        cur = c.cursor()
        cur.execute("DROP TABLE IF EXISTS aio_pool_cancel")
        cur.execute("CREATE TABLE aio_pool_cancel (id INT PRIMARY KEY) ENGINE=InnoDB")

    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, autocommit=False) as pool:
            started = asyncio.Event()
            holder = {}

            async def user():
                async with pool.acquire() as conn:
                    holder["tid"] = conn.thread_id()
                    await conn.begin()
                    async with conn.cursor() as cur:
                        await cur.execute("INSERT INTO aio_pool_cancel VALUES (1)")
                        started.set()
                        await cur.execute("SELECT SLEEP(10)")
            task = asyncio.create_task(user())
            await started.wait()
            await asyncio.sleep(0.1)
            t0 = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            async with asyncio.timeout(5):
                async with pool.acquire() as conn:
                    assert time.monotonic() - t0 < 5
                    assert conn.thread_id() == holder["tid"]   # stopped, not closed
                    await tagged(conn, 13)
                    async with conn.cursor() as cur:
                        await cur.execute("SELECT COUNT(*) FROM aio_pool_cancel")
                        assert (await cur.fetchone())[0] == 0   # rolled back
                    await conn.rollback()
            return holder["tid"]
    try:
        tid = run(main())
    finally:
        with mysqlc.connect(**conn_kwargs) as c:
            c.cursor().execute("DROP TABLE IF EXISTS aio_pool_cancel")
    assert wait_gone(conn_kwargs, [tid]) == {}


def test_release_with_unread_stream(conn_kwargs):
    """Rows of an unbuffered cursor still unread at release: the connection is never
    handed out again in that state."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1) as pool:
            conn = await pool.acquire()
            cur = conn.cursor(mysqlc.aio.cursors.SSCursor)
            await cur.execute("SELECT seq FROM seq_1_to_200000")
            assert (await cur.fetchone())[0] == 1
            t0 = time.monotonic()
            await pool.release(conn)
            assert time.monotonic() - t0 < 5
            async with pool.acquire() as conn2:
                await tagged(conn2, 11)
                async with conn2.cursor() as c2:
                    await c2.execute("SELECT COUNT(*) FROM seq_1_to_1000")
                    assert (await c2.fetchone())[0] == 1000
    run(main())


def test_closed_connection_dropped_and_room_given_to_waiter(conn_kwargs):
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1) as pool:
            conn = await pool.acquire()
            waiter = asyncio.create_task(_acquire(pool))
            await asyncio.sleep(0.01)
            conn.close()
            await pool.release(conn)
            fresh = await asyncio.wait_for(waiter, 10)
            assert fresh is not conn and not fresh.closed
            await tagged(fresh, 12)
            assert pool.size == 1
            await pool.release(fresh)
    run(main())


def test_release_errors(conn_kwargs):
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=2) as pool:
            conn = await pool.acquire()
            await pool.release(conn)
            with pytest.raises(ValueError):
                pool.release(conn)             # twice
            stranger = await mysqlc.aio.connect(**conn_kwargs)
            with pytest.raises(ValueError):
                pool.release(stranger)         # not from this pool
            await stranger.ensure_closed()
            assert (pool.size, pool.freesize) == (1, 1)
    run(main())


# ---------------------------------------------------------------- closing

def test_close_and_wait_closed(conn_kwargs):
    async def main():
        pool = await mysqlc.aio.create_pool(minsize=2, maxsize=2, **conn_kwargs)
        with pytest.raises(RuntimeError):
            await pool.wait_closed()           # before close(): aiomysql's rule
        a = await pool.acquire()
        b = await pool.acquire()
        waiting = asyncio.create_task(_acquire(pool))
        await asyncio.sleep(0.01)
        pool.close()
        with pytest.raises(RuntimeError):
            await waiting                      # the waiter is told at once
        with pytest.raises(RuntimeError):
            await pool.acquire()
        closer = asyncio.create_task(pool.wait_closed())
        await asyncio.sleep(0.05)
        assert not closer.done() and not pool.closed   # a and b are still out
        await tagged(a, 1)                     # still usable until released
        await pool.release(a)
        assert a.closed
        await asyncio.sleep(0.05)
        assert not closer.done()
        await pool.release(b)
        await asyncio.wait_for(closer, 5)
        assert pool.closed and pool.size == 0 and b.closed
        await pool.wait_closed()               # again: nothing to do
        pool.close()
        return a, b
    run(main())


def test_terminate(conn_kwargs):
    async def main():
        pool = await mysqlc.aio.create_pool(minsize=1, maxsize=2, **conn_kwargs)
        a = await pool.acquire()
        b = await pool.acquire()
        await pool.release(b)
        pool.terminate()
        assert a.closed
        pool.release(a)                        # accepted, does nothing
        await asyncio.wait_for(pool.wait_closed(), 5)
        assert pool.closed and pool.size == 0 and b.closed
    run(main())


def test_clear(conn_kwargs):
    async def main():
        async with pool_of(conn_kwargs, minsize=3, maxsize=3) as pool:
            conns = [await pool.acquire() for _ in range(3)]
            ids = [c.thread_id() for c in conns]
            for c in conns:
                await pool.release(c)
            await pool.clear()
            assert (pool.size, pool.freesize) == (0, 0)
            assert all(c.closed for c in conns)
            async with pool.acquire() as conn:
                assert conn.thread_id() not in ids
                await tagged(conn, 4)
            return ids
    ids = run(main())
    assert wait_gone(conn_kwargs, ids) == {}


def test_context_managers(conn_kwargs):
    async def main():
        async with mysqlc.aio.create_pool(minsize=1, maxsize=2, **conn_kwargs) as pool:
            async with pool.acquire() as conn:
                await tagged(conn, 1)
            assert pool.freesize == 1
        assert pool.closed and conn.closed

        pool = await mysqlc.aio.create_pool(minsize=0, maxsize=1, **conn_kwargs)
        async with pool:
            async with pool.acquire() as conn:
                await tagged(conn, 2)
        assert pool.closed and conn.closed

        # an exception in the block releases the connection too
        pool = await mysqlc.aio.create_pool(minsize=1, maxsize=1, **conn_kwargs)
        with pytest.raises(ZeroDivisionError):
            async with pool.acquire() as conn:
                1 / 0
        assert pool.freesize == 1
        pool.close()
        await pool.wait_closed()
    run(main())


# ---------------------------------------------------------------- bad input

def test_bad_sizes():
    async def main():
        with pytest.raises(ValueError):
            await mysqlc.aio.create_pool(minsize=-1)
        with pytest.raises(ValueError):
            await mysqlc.aio.create_pool(minsize=5, maxsize=2)
        with pytest.raises(ValueError):
            await mysqlc.aio.create_pool(ping_idle=-1)
    run(main())


def test_bad_credentials(conn_kwargs):
    kw = dict(conn_kwargs, password="wrong-" + str(conn_kwargs.get("password")))

    async def main():
        with pytest.raises(mysqlc.OperationalError) as info:
            await mysqlc.aio.create_pool(minsize=3, maxsize=3, **kw)
        assert info.value.args[0] == 1045
        pool = await mysqlc.aio.create_pool(minsize=0, maxsize=1, **kw)
        with pytest.raises(mysqlc.OperationalError):
            await pool.acquire()
        assert pool.size == 0                  # the failed connect gave its room back
        with pytest.raises(mysqlc.OperationalError):
            await pool.acquire()
        pool.close()
        await pool.wait_closed()
    run(main())


def test_release_while_an_await_runs_closes_the_connection(conn_kwargs):
    """A connection released while another task still awaits on it (a caller's bug) is
    not handed out again: the next acquire() gets another connection, which answers
    its own query; the await in progress fails with 2013 (the stream was closed)."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1) as pool:
            conn = await pool.acquire()
            tid = conn.thread_id()

            async def busy():
                async with conn.cursor() as cur:
                    await cur.execute("SELECT SLEEP(2)")
            task = asyncio.ensure_future(busy())
            await asyncio.sleep(0.2)
            pool.release(conn)
            other = await asyncio.wait_for(pool.acquire(), 5)
            assert other is not conn and conn.closed
            await tagged(other, 41)
            with pytest.raises(mysqlc.OperationalError) as err:
                await asyncio.wait_for(task, 5)
            assert err.value.args[0] == 2013
            pool.release(other)
            assert wait_gone(conn_kwargs, [tid]) == {}
    run(main())
