"""Small helpers shared by server tests.

- ``kill_connection(root_conn, thread_id)``: ``KILL <thread id>`` from a
  mysqlc connection with the privilege to do so, then wait until the server no
  longer lists the thread (a killed thread ends asynchronously), so the test
  that follows sees a connection the server has really dropped.
"""

import time


def kill_connection(root_conn, thread_id, timeout=5.0):
    """KILL `thread_id` and wait (up to `timeout` seconds) until the server's
    processlist no longer shows it; AssertionError if it still does."""
    cur = root_conn.cursor()
    cur.execute("KILL %d" % thread_id)
    deadline = time.monotonic() + timeout
    while True:
        cur.execute("SELECT COUNT(*) FROM information_schema.processlist WHERE id = %s",
                    (thread_id,))
        if cur.fetchone()[0] == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError("connection %d still listed %.0f s after KILL"
                                 % (thread_id, timeout))
        time.sleep(0.02)
