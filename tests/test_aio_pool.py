"""mysqlc.aio.create_pool / Pool against the real server: sizes, waiting (first come,
first served), reuse, the checks on acquire (lost connections replaced, idle ones pinged,
old ones recycled), the reset on release (open transactions rolled back, unread results
and closed connections dropped), closing, and acquire timeouts.

The pool's rules are in mysqlc/aio/pool.py; they follow aiomysql's pool."""

import asyncio
import random
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

async def killed_free_is_replaced(pool, conn_kwargs, conn, tag):
    """KILL the free connection `conn`; the next acquire gives another, working one
    (the stream's end arrived: `conn` is seen closed, without a ping)."""
    old = conn.thread_id()
    await asyncio.to_thread(kill, conn_kwargs, old)
    await asyncio.sleep(0.2)
    async with pool.acquire() as conn2:
        assert conn2 is not conn and conn.closed
        assert conn2.thread_id() != old
        await tagged(conn2, tag)


def test_killed_free_connection_replaced(conn_kwargs):
    """A free connection the server closed (KILL) is seen closed (the stream's end
    arrived) and replaced on acquire, without a ping."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            async with pool.acquire() as conn:
                pass
            await killed_free_is_replaced(pool, conn_kwargs, conn, 42)
            assert (pool.size, pool.freesize) == (1, 1)
    run(main())


def test_killed_free_connection_replaced_after_reading_was_held(conn_kwargs):
    """A connection whose stream stopped reading at its high-water mark (rows arriving
    faster than they were fetched) and whose response then ended without another wait
    -- a fetchone() loop cut off by a timeout, here -- reads again once it is free, so
    that a KILL of the free connection is seen and it is replaced on acquire (it was
    handed out, and its next statement failed with 2013)."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            for i in range(8):
                async with pool.acquire() as conn:
                    cur = conn.cursor(mysqlc.aio.SSCursor)
                    await cur.execute("SELECT seq FROM seq_1_to_200000")
                    with pytest.raises(TimeoutError):
                        async with asyncio.timeout(0.002 * (i + 1)):
                            while await cur.fetchone() is not None:
                                pass
                    proto = conn.sync._proto
                    if i % 2:
                        # held for certain: the state the timing above leaves in some
                        # of its runs (about a third on uvloop)
                        proto._held = 1
                        proto._pause_reading()
                assert not proto._held          # reading again once free
                await killed_free_is_replaced(pool, conn_kwargs, conn, i)
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


@pytest.mark.parametrize("form", ["async with", "await"])
def test_terminate_right_after_a_hand_over(conn_kwargs, form):
    """terminate() between a release that handed the connection to a waiter and the
    waiter's wake-up: the waiter's acquire raises the closing pool's RuntimeError (as
    for the waiters close() wakes) without opening a new connection, and the pool keeps
    nothing of the connection."""
    async def main():
        pool = await mysqlc.aio.create_pool(minsize=1, maxsize=1, **conn_kwargs)
        a = await pool.acquire()

        async def waiter():
            if form == "await":
                return await pool.acquire()
            async with pool.acquire() as conn:
                return conn
        task = asyncio.ensure_future(waiter())
        await asyncio.sleep(0.05)              # the task waits for a connection
        assert len(pool._waiters) == 1
        opened = []
        real_connect = pool._connect

        async def counting_connect():
            opened.append(1)
            return await real_connect()
        pool._connect = counting_connect
        pool.release(a)                        # handed over to the waiting task...
        pool.terminate()                       # ...and closed before it runs
        assert a.closed
        with pytest.raises(RuntimeError, match="closing pool"):
            await task
        assert opened == []
        assert not pool._terminated and not pool._used and not pool._free
        await asyncio.wait_for(pool.wait_closed(), 5)
        assert pool.closed and pool.size == 0
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


# ---------------------------------------------------------------- session state on release

_STATE_SQL = ("SELECT @@autocommit, @@character_set_client, @@character_set_connection, "
              "@@character_set_results, @@collation_connection, @@sql_mode, DATABASE(), "
              "@@time_zone, @@tx_isolation, @user_var, @init, "
              "@@session_track_state_change")
_STATE_KEYS = ("autocommit", "cs_client", "cs_connection", "cs_results", "collation",
               "sql_mode", "database", "time_zone", "isolation", "user_var", "init",
               "track_state")


async def session_state(conn):
    async with conn.cursor() as cur:
        await cur.execute(_STATE_SQL)
        return dict(zip(_STATE_KEYS, await cur.fetchone()))


# what a user can change on a pooled connection, each undone by the reset on release
_CHANGES = {
    "autocommit()": lambda conn: conn.autocommit(True),
    "SET autocommit": "SET autocommit=1",
    "SET NAMES": "SET NAMES latin1",
    "set_character_set()": lambda conn: conn.set_character_set("latin1", "latin1_bin"),
    "sql_mode": "SET sql_mode='ANSI_QUOTES'",
    "USE": "USE information_schema",
    "time_zone": "SET time_zone='+05:00'",
    "isolation": "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    "user variable": "SET @user_var = 'left behind'",
    "init_command's effect": "SET @init = NULL",
    "temporary table": "CREATE TEMPORARY TABLE left_behind (a INT)",
    "PREPARE": "PREPARE left_behind FROM 'SELECT 1'",
    "in a transaction": "SET @user_var = 'in trans'",
}


@pytest.mark.parametrize("change", sorted(_CHANGES))
def test_session_state_restored_on_release(conn_kwargs, change):
    """aiomysql#462: with create_pool(autocommit=False), a connection whose autocommit a
    user turned on came back with autocommit on.  Every change of the session's state
    (reported by the server's session tracking) is undone by the reset on release: the
    next acquire() gets the same connection (same thread id), in the state it had when
    the pool opened it, and its prepared statements (cache emptied by the reset) work."""
    action = _CHANGES[change]

    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, autocommit=False,
                           charset="utf8mb4", init_command="SET @init = 7",
                           ping_idle=None) as pool:
            async with pool.acquire() as conn:
                tid = conn.thread_id()
                start = await session_state(conn)
                assert start["autocommit"] == 0 and start["init"] == 7
                assert start["track_state"] == 1
                async with conn.cursor(prepared=True) as cur:   # cached statement
                    await cur.execute("SELECT ? + 1", (1,))
                    assert await cur.fetchall() == ((2,),)
                if change == "in a transaction":
                    await conn.begin()
                if callable(action):
                    await action(conn)
                else:
                    async with conn.cursor() as cur:
                        await cur.execute(action)
                changed = await session_state(conn)
                assert changed != start or change in ("PREPARE", "temporary table")
            async with pool.acquire() as conn:
                assert conn.thread_id() == tid          # restored, not replaced
                assert await session_state(conn) == start
                assert conn.get_autocommit() is False
                assert conn.charset == "utf8mb4" and conn.encoding == "utf-8"
                assert conn.database == conn_kwargs["database"]
                async with conn.cursor() as cur:
                    await cur.execute("SELECT %s", ("é",))
                    assert await cur.fetchone() == ("é",)
                    if change == "PREPARE":
                        with pytest.raises(mysqlc.Error) as err:
                            await cur.execute("EXECUTE left_behind")
                        assert err.value.args[0] == 1243   # unknown prepared statement
                    if change == "temporary table":
                        with pytest.raises(mysqlc.Error) as err:
                            await cur.execute("SELECT * FROM left_behind")
                        assert err.value.args[0] == 1146   # no such table
                async with conn.cursor(prepared=True) as cur:
                    await cur.execute("SELECT ? + 1", (2,))
                    assert await cur.fetchall() == ((3,),)
    run(main())


def test_clean_release_costs_nothing(conn_kwargs):
    """A connection whose session state did not change goes back to the pool at once
    (no reset, no round trip): plain queries, transactions committed, prepared
    statements, autocommit set to the value it has."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, autocommit=False,
                           ping_idle=None) as pool:
            conn = await pool.acquire()
            await conn.autocommit(False)
            await conn.begin()
            async with conn.cursor() as cur:
                await cur.execute("SELECT 1")
                await cur.fetchall()
            await conn.commit()
            async with conn.cursor(prepared=True) as cur:
                await cur.execute("SELECT ?", (5,))
                await cur.fetchall()
            seq = conn.sync._conn.session_track_seq
            pool.release(conn)
            assert pool.freesize == 1 and not pool._resetting   # back already
            again = await pool.acquire()
            assert again is conn and conn.sync._conn.session_track_seq == seq
            async with conn.cursor(prepared=True) as cur:   # its statement is kept
                stmts = len(conn.sync._stmt_cache)
                await cur.execute("SELECT ?", (6,))
                assert len(conn.sync._stmt_cache) == stmts == 1
            pool.release(again)
    run(main())


def test_state_that_survives_release(conn_kwargs):
    """What the server does not report as a change of session state, and the reset
    therefore does not undo when nothing else changed (docs/asyncio.md): named locks
    (GET_LOCK), LOCK TABLES, HANDLER ... OPEN, LAST_INSERT_ID(), characteristics given
    for the next transaction only (SET TRANSACTION without SESSION); with any other
    change they are reset too."""
    with mysqlc.connect(**conn_kwargs) as c:
        cur = c.cursor()
        cur.execute("CREATE TABLE IF NOT EXISTS aio_pool_locked (a INT)")

    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            async with pool.acquire() as conn:
                tid = conn.thread_id()
                async with conn.cursor() as cur:
                    await cur.execute("SELECT GET_LOCK('aio_pool_survives', 0), "
                                      "LAST_INSERT_ID(42)")
                    assert await cur.fetchone() == (1, 42)
                    await cur.execute("HANDLER aio_pool_locked OPEN")
                    await cur.execute("LOCK TABLES aio_pool_locked READ")
            async with pool.acquire() as conn:
                assert conn.thread_id() == tid
                async with conn.cursor() as cur:
                    await cur.execute("SELECT IS_USED_LOCK('aio_pool_survives'), "
                                      "LAST_INSERT_ID()")
                    assert await cur.fetchone() == (tid, 42)
                    with pytest.raises(mysqlc.Error) as err:   # only the locked table
                        await cur.execute("SELECT 1 FROM aio_pool_tx")
                    assert err.value.args[0] == 1100
                    await cur.execute("UNLOCK TABLES")
                    await cur.execute("HANDLER aio_pool_locked READ FIRST")
                    await cur.fetchall()
                    # with another change, the reset drops them too
                    await cur.execute("SET @user_var = 1")
            async with pool.acquire() as conn:
                assert conn.thread_id() == tid
                async with conn.cursor() as cur:
                    await cur.execute("SELECT IS_USED_LOCK('aio_pool_survives'), "
                                      "LAST_INSERT_ID()")
                    assert await cur.fetchone() == (None, 0)
                    with pytest.raises(mysqlc.Error) as err:
                        await cur.execute("HANDLER aio_pool_locked READ FIRST")
                    assert err.value.args[0] == 1109   # unknown table in HANDLER
                    await cur.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
            async with pool.acquire() as conn:
                assert conn.thread_id() == tid
                async with conn.cursor() as cur:
                    # the next transaction, the next user's, has the isolation level
                    # the previous one asked for
                    await cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                    await cur.execute("SELECT trx_isolation_level FROM "
                                      "information_schema.INNODB_TRX "
                                      "WHERE trx_mysql_thread_id = CONNECTION_ID()")
                    assert await cur.fetchall() == (("SERIALIZABLE",),)
                    await cur.execute("ROLLBACK")
                    # a user who turns the tracking off blinds the pool to what follows
                    await cur.execute("SET session_track_state_change = 0")
                    await cur.execute("SET @user_var = 'unseen'")
            async with pool.acquire() as conn:
                assert conn.thread_id() == tid
                state = await session_state(conn)
                assert state["user_var"] == "unseen" and state["track_state"] == 0
    try:
        run(main())
    finally:
        with mysqlc.connect(**conn_kwargs) as c:
            c.cursor().execute("DROP TABLE IF EXISTS aio_pool_locked")


def test_without_session_tracking_autocommit_is_restored(conn_kwargs):
    """connect(session_track=False): the server reports no changes; autocommit, known
    from the status flags of every OK packet, is still set back on release (one SET),
    other state survives (docs/asyncio.md)."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, autocommit=False,
                           session_track=False, ping_idle=None) as pool:
            async with pool.acquire() as conn:
                tid = conn.thread_id()
                await conn.autocommit(True)
                async with conn.cursor() as cur:
                    await cur.execute("SET @user_var = 'kept'")
                    await cur.execute("SET NAMES latin1")
            async with pool.acquire() as conn:
                assert conn.thread_id() == tid
                state = await session_state(conn)
                assert state["autocommit"] == 0 and conn.get_autocommit() is False
                assert state["user_var"] == "kept" and state["track_state"] == 0
                assert state["cs_client"] == "latin1"
    run(main())


def test_release_after_change_user_closes(conn_kwargs, root_conn_kwargs):
    """A connection logged in again with change_user() keeps that login through a
    session reset: it is closed on release, and the next acquire() opens a new one."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            async with pool.acquire() as conn:
                tid = conn.thread_id()
                await conn.change_user(conn_kwargs["user"], conn_kwargs["password"],
                                       "information_schema")
            async with pool.acquire() as again:
                assert again.thread_id() == tid   # the same login: only reset
                assert (await session_state(again))["database"] == conn_kwargs["database"]
                await again.change_user(root_conn_kwargs["user"],
                                        root_conn_kwargs["password"])
                async with again.cursor() as cur:
                    await cur.execute("SELECT CURRENT_USER()")
                    assert (await cur.fetchone())[0].startswith("root@")
            async with pool.acquire() as third:
                assert third.thread_id() != tid and again.closed
                await tagged(third, 3)
            return tid
    tid = run(main())
    assert wait_gone(conn_kwargs, [tid]) == {}


def test_release_without_default_database_after_use_closes(conn_kwargs):
    """A pool whose connections have no default database: a ``USE db`` cannot be undone
    (no command selects "no database"), so that connection is closed on release and
    the next acquire() opens a new one."""
    kw = dict(conn_kwargs)
    kw.pop("database", None)

    async def main():
        async with pool_of(kw, minsize=1, maxsize=1, ping_idle=None) as pool:
            async with pool.acquire() as conn:
                tid = conn.thread_id()
                async with conn.cursor() as cur:
                    await cur.execute("USE " + conn_kwargs["database"])
            await asyncio.sleep(0)
            async with pool.acquire() as again:
                assert again.thread_id() != tid and conn.closed
                assert (await session_state(again))["database"] is None
            return tid
    tid = run(main())
    assert wait_gone(conn_kwargs, [tid]) == {}


# ---------------------------------------------------------------- cancellation and accounting

def test_cancelled_waiter_passes_its_wakeup_on(conn_kwargs):
    """A waiter cancelled in the same step as the connection is handed to it (both
    orders), or while it waits: the connection goes to the next waiter, never sits free
    while others wait."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            conn = await pool.acquire()
            for order in ("release first", "cancel first", "cancelled earlier"):
                waiters = [asyncio.create_task(_acquire(pool)) for _ in range(3)]
                await asyncio.sleep(0.01)
                if order == "release first":
                    pool.release(conn)
                    waiters[0].cancel()
                elif order == "cancel first":
                    waiters[0].cancel()
                    pool.release(conn)
                else:
                    waiters[0].cancel()
                    await asyncio.sleep(0)
                    pool.release(conn)
                with pytest.raises(asyncio.CancelledError):
                    await waiters[0]
                got = await asyncio.wait_for(waiters[1], 2)
                await tagged(got, 1)
                assert pool.freesize == 0 and not waiters[2].done()
                pool.release(got)
                conn = await asyncio.wait_for(waiters[2], 2)
                assert (pool.size, pool.freesize) == (1, 0)
            pool.release(conn)
            assert (pool.size, pool.freesize) == (1, 1)
    run(main())


def test_random_cancellations_keep_the_accounting(conn_kwargs):
    """Many tasks acquire with timeouts and are cancelled at random moments (waiting,
    being granted, using the connection, in the ping of acquire): no connection stays
    free while a live waiter waits, and in the end every connection is free and
    counted once."""
    rng = random.Random(462)

    async def main():
        async with pool_of(conn_kwargs, minsize=0, maxsize=2, ping_idle=0) as pool:
            stalls = []
            stop = False

            async def watch():
                # a free connection with a live waiter, seen twice 5 ms apart, is a
                # lost wake-up
                seen = 0
                while not stop:
                    live = [f for f in pool._waiters if not f.done()]
                    seen = seen + 1 if (live and pool.freesize) else 0
                    if seen >= 2:
                        stalls.append((pool.freesize, len(live)))
                    await asyncio.sleep(0.005)

            async def use(i):
                async with pool.acquire() as conn:
                    await tagged(conn, i)
                    await asyncio.sleep(rng.random() * 0.01)

            async def user(i):
                limit = rng.choice((0.001, 0.01, 0.05, 0.3))
                try:
                    if i % 2:
                        async with asyncio.timeout(limit):
                            await use(i)
                    else:
                        await asyncio.wait_for(use(i), limit)
                except TimeoutError:
                    pass

            watcher = asyncio.create_task(watch())
            tasks = []
            for i in range(120):
                tasks.append(asyncio.create_task(user(i)))
                if rng.random() < 0.3:
                    rng.choice(tasks).cancel()
                await asyncio.sleep(rng.random() * 0.004)
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
            stop = True
            await watcher
            assert stalls == []
            assert pool.size <= 2 and pool.freesize == pool.size and not pool._used
            assert not [f for f in pool._waiters if not f.done()]
            both = [await asyncio.wait_for(pool.acquire(), 2) for _ in range(2)]
            for c in both:
                await tagged(c, 9)
                pool.release(c)
    run(main())


def sessions_of(conn_kwargs):
    """Server threads of the test account other than the one asking."""
    with mysqlc.connect(**conn_kwargs) as c:
        cur = c.cursor()
        cur.execute("SELECT ID FROM information_schema.PROCESSLIST "
                    "WHERE USER = %s AND ID <> CONNECTION_ID()", (conn_kwargs["user"],))
        return {r[0] for r in cur.fetchall()}


def wait_sessions(conn_kwargs, expected, within=2.0):
    end = time.monotonic() + within
    while True:
        now = sessions_of(conn_kwargs)
        if now <= expected or time.monotonic() > end:
            return now - expected
        time.sleep(0.02)


def test_cancelled_create_pool_leaves_no_session(conn_kwargs):
    """create_pool(minsize=3) cancelled at each of its suspensions: the connections it
    had opened are closed, those being opened are stopped."""
    before = sessions_of(conn_kwargs)

    async def main():
        steps = 0
        while True:
            task = asyncio.ensure_future(mysqlc.aio.create_pool(minsize=3, maxsize=3,
                                                                **conn_kwargs))
            for _ in range(steps):
                await asyncio.sleep(0)
            if task.done():
                pool = task.result()
                pool.close()
                await pool.wait_closed()
                return steps
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.01)
            steps += 1

    steps = run(main())
    assert steps > 3
    assert wait_sessions(conn_kwargs, before) == set()


def test_acquire_cancelled_while_opening_leaks_nothing(conn_kwargs):
    """An acquire() that opens a connection, cancelled at each of its suspensions: the
    room it held is given back (size 0), no session is left open, and a waiter behind
    it is served."""
    before = sessions_of(conn_kwargs)

    async def main():
        async with pool_of(conn_kwargs, minsize=0, maxsize=1) as pool:
            steps = 0
            while True:
                task = asyncio.create_task(_acquire(pool))
                behind = asyncio.create_task(_acquire(pool))
                for _ in range(steps):
                    await asyncio.sleep(0)
                done = task.done()
                task.cancel()
                try:
                    conn = await task
                except asyncio.CancelledError:
                    conn = None
                else:
                    await pool.release(conn)   # it had its connection already
                got = await asyncio.wait_for(behind, 5)
                await tagged(got, steps)
                assert pool.size == 1
                await pool.release(got)
                if done:
                    return steps
                await pool.clear()
                assert pool.size == 0
                steps += 1

    steps = run(main())
    assert steps > 3
    assert wait_sessions(conn_kwargs, before) == set()


def _pool_sessions(pool):
    return {c.thread_id() for c in pool._used} | {c.thread_id() for c, _ in pool._free}


@pytest.mark.parametrize("how", ["wait_closed", "terminate"])
def test_cancelled_wait_closed_ends_every_session(conn_kwargs, how):
    """close() + wait_closed() cancelled at each suspension point it reaches (or
    terminate() first): no session of the pool is left on the server; a connection
    still out is closed when it comes back; a second wait_closed() ends with size 0."""
    async def main():
        steps = 0
        while True:
            pool = await mysqlc.aio.create_pool(minsize=3, maxsize=4, **conn_kwargs)
            held = await pool.acquire()
            busy = await pool.acquire()
            await busy.begin()
            async with busy.cursor() as cur:       # released in a transaction: rolled
                await cur.execute("SELECT 1")      # back, closed once the pool closes
            ids = _pool_sessions(pool)
            assert len(ids) == 3
            held_id = held.thread_id()
            pool.release(busy)
            if how == "terminate":
                pool.terminate()
            else:
                pool.close()
            closer = asyncio.ensure_future(pool.wait_closed())
            for _ in range(steps):
                await asyncio.sleep(0)
            # past this point wait_closed() only waits for `held`
            finished = pool.size <= 1
            closer.cancel()
            try:
                await closer
            except asyncio.CancelledError:
                pass
            # the free connections are closed now; the one held when it comes back
            # (terminate(): now too)
            out = set() if how == "terminate" else {held_id}
            left = await asyncio.to_thread(wait_sessions, conn_kwargs, out, 1.0)
            assert not (left & ids), (steps, left)
            pool.release(held)
            assert held.closed
            await asyncio.wait_for(pool.wait_closed(), 5)
            assert pool.closed and pool.size == 0
            assert await asyncio.to_thread(wait_gone, conn_kwargs, ids, 1.0) == {}
            if finished:
                return steps
            steps += 1

    steps = run(main())
    assert steps >= (0 if how == "terminate" else 1), steps


def test_aiomysql_forms(conn_kwargs):
    """aiomysql 0.3's pool.py: create_pool() and acquire() are coroutine objects (await,
    create_task, async with); a plain ``with pool:`` raises RuntimeError; the
    deprecated ``with (await pool) as conn:`` acquires, and its block releases."""
    async def main():
        pool = await asyncio.create_task(mysqlc.aio.create_pool(minsize=1, maxsize=1,
                                                                **conn_kwargs))
        try:
            with pytest.raises(RuntimeError, match="yield from"):
                with pool:
                    pass
            conn = await asyncio.create_task(pool.acquire())
            await tagged(conn, 1)
            pool.release(conn)
            with pytest.warns(DeprecationWarning):
                held = await pool
            with held as conn:
                assert pool.freesize == 0
                await tagged(conn, 2)
            assert pool.freesize == 1
        finally:
            pool.close()
            await pool.wait_closed()
        assert pool.closed
    run(main())


# ---------------------------------------------------------------- the fast paths

@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_async_with_fast_path_keeps_the_rules(conn_kwargs, loop):
    """``async with pool.acquire()`` takes a free connection without the full acquire
    (Pool._acquire) only when nothing needs checking; every other case still goes through
    it: a waiter ahead (first come, first served), a pool bound to another loop, a
    connection left with unread rows (closed on release, never handed out)."""
    async def first():
        pool = await mysqlc.aio.create_pool(minsize=1, maxsize=1, ping_idle=None,
                                            **conn_kwargs)
        async with pool.acquire() as conn:
            await tagged(conn, 1)
        async with pool.acquire() as again:
            assert again is conn and (pool.size, pool.freesize) == (1, 0)
        assert pool.freesize == 1
        # a waiter ahead: the connection released goes to it, not to a later caller
        held = await pool.acquire()
        order = []

        async def take(tag):
            async with pool.acquire() as c:
                order.append(tag)
                await tagged(c, tag)
        waiter = asyncio.ensure_future(take(1))
        await asyncio.sleep(0.05)
        pool.release(held)
        await asyncio.gather(waiter, take(2))
        assert order == [1, 2]
        # released with unread rows (an unbuffered cursor): closed, not handed out
        async with pool.acquire() as c:
            cur = c.cursor(mysqlc.aio.SSCursor)
            await cur.execute("SELECT 1 UNION SELECT 2")
        assert c.closed and pool.size == 0
        async with pool.acquire() as fresh:
            assert fresh is not c
            await tagged(fresh, 3)
        return pool

    pool = run(first(), loop)

    async def other_loop():
        with pytest.raises(RuntimeError, match="another event loop"):
            async with pool.acquire():
                pass
        assert (pool.size, pool.freesize) == (1, 1)   # nothing taken
    try:
        run(other_loop(), loop)
    finally:
        pool.terminate()


def test_acquire_context_is_used_once(conn_kwargs):
    """``ctx = pool.acquire()`` is a coroutine object: entered or awaited once (a second
    use raises RuntimeError, as a coroutine's second await does), also when its first
    use took a free connection without the coroutine; the pool keeps its count."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=2, ping_idle=None) as pool:
            ctx = pool.acquire()
            async with ctx as a:
                with pytest.raises(RuntimeError, match="reuse"):
                    async with ctx:
                        pass
                await tagged(a, 1)
            assert (pool.size, pool.freesize) == (1, 1)
            with pytest.raises(RuntimeError, match="reuse"):
                async with ctx:
                    pass
            with pytest.raises(RuntimeError, match="reuse"):
                await ctx
            closed = pool.acquire()
            closed.close()
            with pytest.raises(RuntimeError, match="reuse"):
                await closed
            assert (pool.size, pool.freesize) == (1, 1)
    run(main())


def test_release_inside_a_pipeline_closes(conn_kwargs):
    """Released inside a ``pipeline()`` block with responses unread: the connection is
    closed, not handed out (the next user would get the responses, and a session the
    pool has not seen change: here @x)."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            conn = await pool.acquire()
            block = conn.pipeline()
            await block.__aenter__()
            cur = conn.cursor()
            await cur.execute("SET @x = 99")
            await cur.execute("SELECT 'first user'")
            await pool.release(conn)
            assert conn.closed and pool.size == 0
            async with pool.acquire() as fresh:
                assert fresh is not conn
                async with fresh.cursor() as c:
                    await c.execute("SELECT @x")
                    assert await c.fetchall() == ((None,),)
    run(main())


def test_c_checks_agree_with_the_core(conn_kwargs):
    """``_core._pool_idle`` and ``_core._session_need`` (the pool's idle check and
    restore_needed, one C call each) say what the core's and the stream's attributes
    say, in every state that changes them: idle, rows unread, a pipelined response
    pending, a transaction open, autocommit changed, a tracked change of the session,
    the core closed, the stream ended, and objects of other types."""
    from mysqlc import _core
    from mysqlc.aio.pool import _idle

    def idle_by_attributes(core, proto):
        return bool(core.open and not core.unread and not core.pipe_pending
                    and not proto._state)

    def check(conn, seq, autocommit):
        sync = conn.sync
        core, proto = sync._conn, sync._proto
        idle = _core._pool_idle(core, proto)
        assert idle is idle_by_attributes(core, proto)
        status = core.server_status
        want = ("reset" if seq is not None and core.session_track_seq != seq else
                "rollback" if status & 1 else
                "autocommit" if bool(status & 2) != autocommit else None)
        assert _core._session_need(core, seq, autocommit) == want
        return idle, want

    async def main():
        conn = await mysqlc.aio.connect(autocommit=True, **conn_kwargs)
        try:
            seq = conn.sync._conn.session_track_seq
            assert check(conn, seq, True) == (True, None)
            assert check(conn, None, False) == (True, "autocommit")
            assert check(conn, seq + 1, True) == (True, "reset")
            cur = conn.cursor(mysqlc.aio.SSCursor)
            await cur.execute("SELECT 1 UNION SELECT 2")
            assert check(conn, seq, True)[0] is False           # rows unread
            assert _idle(conn) is False
            await cur.fetchall()
            await cur.close()
            assert check(conn, seq, True) == (True, None)
            await conn.begin()
            assert check(conn, seq, True) == (True, "rollback")
            assert check(conn, seq + 1, True) == (True, "reset")   # reset first
            await conn.rollback()
            await conn.autocommit(False)
            assert check(conn, seq, True) == (True, "reset")       # a tracked variable
            assert check(conn, None, True) == (True, "autocommit")   # (untracked)
            await conn.autocommit(True)
            async with conn.cursor() as c2:
                await c2.execute("SET @pool_check = 1")
            assert check(conn, seq, True) == (True, "reset")       # tracked change
            seq = conn.sync._conn.session_track_seq
            async with conn.pipeline():
                q = conn.cursor()
                await q.execute("SELECT 1")
                assert check(conn, seq, True)[0] is False       # response pending
                await q.fetchall()
            assert check(conn, seq, True) == (True, None)
            core, proto = conn.sync._conn, conn.sync._proto
            for a, b in ((None, proto), (core, None), (proto, core), (1, 2)):
                assert _core._pool_idle(a, b) is False
            with pytest.raises(TypeError):
                _core._session_need(None, None, True)
            with pytest.raises(TypeError):
                _core._pool_idle(core)
            with pytest.raises(TypeError):
                _core._session_need(core, "x", True)
            with pytest.raises(OverflowError):
                _core._session_need(core, -1, True)
            proto.transport.abort()            # the stream ended by asyncio
            await asyncio.sleep(0)
            assert proto._state and core.open and check(conn, seq, True)[0] is False
            core.close()                       # the core closed, the stream not
            assert not core.open and _core._pool_idle(core, proto) is False
        finally:
            conn.close()
    run(main())


# ------------------------------------------------- the C fast paths (src/aio_pool.c)

@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_acquire_context_fast_and_slow_paths_agree(conn_kwargs, loop):
    """``async with pool.acquire()`` takes a free connection in C (no coroutine) only when
    Pool._acquire would take it at once, and gives it back in C only when Pool._release
    would just put it on the free list: every other case (a waiter, a changed session, a transaction left
    open, a connection closed in the block) goes to the Python code, as before."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            async with pool.acquire() as conn:
                first = conn
            assert pool.freesize == 1 and pool.size == 1
            async with pool.acquire() as conn:   # the fast path: the same connection
                assert conn is first and pool.freesize == 0
            assert pool.freesize == 1
            # a transaction left open: rolled back by Python's _release (not the C path)
            async with pool.acquire() as conn:
                await conn.begin()
                async with conn.cursor() as cur:
                    await cur.execute("SELECT 1")
            async with pool.acquire() as conn:
                assert conn is first
                async with conn.cursor() as cur:
                    await cur.execute("SELECT @@in_transaction")
                    assert (await cur.fetchone())[0] == 0
            # closed in the block: dropped, a new one opened next time
            async with pool.acquire() as conn:
                conn.close()
            assert pool.freesize == 0 and pool.size == 0
            async with pool.acquire() as conn:
                assert conn is not first and not conn.closed
            # a waiter: the release hands the connection to it (Python's _hand_on)
            order = []
            async def user(tag):
                async with pool.acquire() as c:
                    order.append((tag, c))
                    await asyncio.sleep(0.01)
            await asyncio.gather(user("a"), user("b"), user("c"))
            assert [t for t, _ in order] == ["a", "b", "c"]
            assert len({id(c) for _, c in order}) == 1 and pool.freesize == 1
    run(main(), loop)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_acquire_context_is_a_coroutine(conn_kwargs, loop):
    """Pool.acquire()'s object stays a coroutine in asyncio's sense (a C base class
    now): ``asyncio.create_task()``, ``await``, and one use only."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=2, ping_idle=None) as pool:
            ctx = pool.acquire()
            assert asyncio.iscoroutine(ctx)
            conn = await asyncio.create_task(ctx)
            assert isinstance(conn, mysqlc.aio.Connection)
            with pytest.raises(RuntimeError, match="cannot reuse"):
                async with ctx:
                    pass
            await pool.release(conn)
            ctx = pool.acquire()
            async with ctx as conn:
                pass
            with pytest.raises(RuntimeError, match="cannot reuse"):
                await ctx
            ctx = pool.acquire()
            ctx.close()   # never awaited: nothing acquired
            assert pool.freesize == 1
            # __aenter__()'s result takes the connection when it is awaited, as a
            # coroutine would: dropped, closed or thrown into first, it takes nothing
            pool.acquire().__aenter__()
            assert pool.freesize == 1 and pool.size == 1
            aw = pool.acquire().__aenter__()
            aw.close()
            with pytest.raises(KeyError):
                pool.acquire().__aenter__().throw(KeyError("x"))
            assert pool.freesize == 1 and pool.size == 1
            ctx = pool.acquire()
            aw = ctx.__aenter__()
            conn = await aw
            assert pool.freesize == 0
            with pytest.raises(RuntimeError, match="cannot reuse"):
                await aw
            await ctx.__aexit__(None, None, None)
            assert pool.freesize == 1
            with pytest.raises(ValueError, match="not acquired"):
                await pool.acquire().__aexit__(None, None, None)
    run(main(), loop)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_cursor_async_with_closes_as_close_does(conn_kwargs, loop):
    """A cursor's ``async with`` closes it in C when nothing is left unread; rows of an
    unbuffered cursor still unread are drained by close()'s coroutine, and a subclass's
    own close() is the one awaited."""
    closed = []

    class Mine(mysqlc.aio.cursors.Cursor):
        async def close(self):
            closed.append(self)
            await super().close()

    async def main():
        conn = await mysqlc.aio.connect(**conn_kwargs)
        try:
            async with conn.cursor() as cur:
                await cur.execute("SELECT 1")
            assert cur.closed
            async with conn.cursor(mysqlc.aio.SSCursor) as cur:
                await cur.execute("SELECT seq FROM seq_1_to_5000")
                assert (await cur.fetchone()) == (1,)
            assert cur.closed
            async with conn.cursor() as cur:   # the connection is in step again
                await cur.execute("SELECT 2")
                assert await cur.fetchall() == ((2,),)
            async with conn.cursor(Mine) as mine:
                await mine.execute("SELECT 3")
            assert closed == [mine] and mine.closed
            # a close() set on the cursor object (a test's mock) is the one awaited too
            cur = conn.cursor()
            seen = []

            async def mock_close():
                seen.append(cur)
            cur.close = mock_close
            async with cur:
                await cur.execute("SELECT 4")
            assert seen == [cur] and not cur.closed
            del cur.close
            await cur.close()
            assert cur.closed
        finally:
            conn.close()
    run(main(), loop)


def test_pool_in_a_cycle_is_collected(conn_kwargs):
    """The pool's C base class takes part in garbage collection: a closed pool that
    refers to itself is freed."""
    import gc
    import weakref

    async def main():
        pool = await mysqlc.aio.create_pool(minsize=0, maxsize=1, ping_idle=None,
                                            **conn_kwargs)
        pool._free.append(("self", pool))   # a cycle through the C member
        pool._free.clear()
        pool.me = pool
        pool._start[pool] = pool
        pool.close()
        await pool.wait_closed()
        ref = weakref.ref(pool)
        del pool
        gc.collect()
        assert ref() is None
    run(main())


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_waits_run_in_c_keep_the_pools_rules(conn_kwargs, loop):
    """An acquire() that comes while others wait waits in C (src/aio_pool.c: its future
    at the end of _waiters, no coroutine of Pool._acquire's): first come, first served;
    a cancelled or timed-out wait leaves the list and takes nothing; a wait granted room
    to open (the connection was closed in its block) opens one; close() fails it."""
    async def main():
        async with pool_of(conn_kwargs, minsize=1, maxsize=1, ping_idle=None) as pool:
            order = []
            release_a = asyncio.Event()
            python_waits = []
            py_acquire = pool._acquire

            def counted():
                python_waits.append(1)
                return py_acquire()
            pool._acquire = counted   # (src/aio_pool.c calls the pool's own _acquire)

            async def user(tag, hold=None):
                async with pool.acquire() as c:
                    order.append(tag)
                    if hold is not None:
                        await hold.wait()
                    return c

            a = asyncio.create_task(user("a", release_a))
            await asyncio.sleep(0.05)
            b = asyncio.create_task(user("b"))       # waits in Pool._acquire (first)
            await asyncio.sleep(0.01)
            c = asyncio.create_task(user("c"))       # waits in C (others wait already)
            d = asyncio.create_task(user("d"))
            await asyncio.sleep(0.01)
            assert len(pool._waiters) == 3
            assert len(python_waits) == 1   # b's; c's and d's waits are C's
            c.cancel()
            with pytest.raises(asyncio.CancelledError):
                await c
            assert len(pool._waiters) == 2
            with pytest.raises(asyncio.TimeoutError):   # (TimeoutError from 3.11 on)
                await asyncio.wait_for(user("e"), 0.05)
            assert len(pool._waiters) == 2
            release_a.set()
            first = await a
            assert await b is first and await d is first
            assert order == ["a", "b", "d"]
            assert pool.size == 1 and pool.freesize == 1 and not pool._waiters

            # a connection closed in its block: the waiter in C opens a new one
            hold = asyncio.Event()

            async def closer():
                async with pool.acquire() as c:
                    await hold.wait()
                    c.close()
            t1 = asyncio.create_task(closer())
            await asyncio.sleep(0.01)
            t2 = asyncio.create_task(user("f"))
            t3 = asyncio.create_task(user("g"))
            await asyncio.sleep(0.01)
            hold.set()
            await t1
            f, g = await t2, await t3
            assert f is g and f is not first and not f.closed
            assert pool.size == 1 and pool.freesize == 1

            # close() while waiting in C: RuntimeError at once
            hold = asyncio.Event()
            t1 = asyncio.create_task(user("h", hold))
            await asyncio.sleep(0.01)
            t2 = asyncio.create_task(user("i"))
            t3 = asyncio.create_task(user("j"))
            await asyncio.sleep(0.01)
            pool.close()
            for t in (t2, t3):
                with pytest.raises(RuntimeError, match="closed while waiting"):
                    await t
            hold.set()
            await t1
    run(main(), loop)
