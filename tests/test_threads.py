"""Threads and the GIL against the real server.

- Another Python thread keeps running while a query waits on the server
  (``SELECT SLEEP(1)``): the core releases the GIL around its socket waits.
- One connection used from two threads at once raises ProgrammingError in the second
  thread (and the first thread's query completes; the connection stays usable).
- Eight threads, each with its own connection, run MYSQLC_THREAD_QUERIES (default
  10000) queries each with no error and the right answers.
"""

import os
import threading
import time

import pytest

import mysqlc

QUERIES = int(os.environ.get("MYSQLC_THREAD_QUERIES", "10000"))


def test_other_threads_run_while_a_query_waits(conn):
    ticks = 0
    stop = threading.Event()

    def ticker():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        t0 = time.monotonic()
        cur = conn.cursor()
        cur.execute("SELECT SLEEP(1)")
        assert cur.fetchall() == ((0,),)
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        t.join()
    assert elapsed >= 0.9
    # with the GIL held for the whole second the ticker would not have run at all
    assert ticks > 100, ticks


def test_one_connection_from_two_threads_raises_programming_error(conn):
    started = threading.Event()
    result = {}

    def slow():
        cur = conn.cursor()
        started.set()
        cur.execute("SELECT SLEEP(1), 'first'")
        result["rows"] = cur.fetchall()

    t = threading.Thread(target=slow)
    t.start()
    started.wait(5)
    time.sleep(0.3)          # the first thread is now waiting for the server
    errors = 0
    for op in (lambda: conn.cursor().execute("SELECT 2"), conn.ping, conn.commit):
        with pytest.raises(mysqlc.ProgrammingError):
            op()
        errors += 1
    t.join(10)
    assert result["rows"] == ((0, "first"),)
    assert errors == 3
    cur = conn.cursor()
    cur.execute("SELECT 3")
    assert cur.fetchall() == ((3,),)


def test_eight_threads_with_their_own_connections(server):
    kw = server.connect_kwargs()
    failures = []
    counts = [0] * 8

    def worker(i):
        try:
            c = mysqlc.connect(**kw)
            cur = c.cursor()
            for k in range(QUERIES):
                cur.execute("SELECT %s, %s", (i, k))
                row = cur.fetchone()
                if row != (i, k):
                    failures.append((i, k, row))
                    break
                counts[i] += 1
            c.close()
        except Exception as exc:   # reported below
            failures.append((i, repr(exc)))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    assert failures == []
    assert counts == [QUERIES] * 8
    print("\n8 threads x %d queries in %.1f s" % (QUERIES, time.monotonic() - t0))
