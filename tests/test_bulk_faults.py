"""Fault injection on the bulk executemany path (issue 21): a 100-row ``executemany`` of
an UPDATE and of an INSERT, sent as COM_STMT_BULK_EXECUTE on MariaDB (docs/batching.md),
cut by tests/_peer.py's ``FaultProxy`` -- sync and mysqlc.aio (the ``api`` fixture),
plain, TLS and compressed.  The proxy, the byte measurement and the per-case checks are
tests/test_faults.py's (``_measure``, ``_run_case``: a DB-API OperationalError or
InterfaceError within ``DEADLINE``, the connection then reported closed and refusing a
statement); the modes and the per-server proxies are tests/test_pipeline.py's.

Two exchanges of each statement:

- ``first``: the statement's first ``executemany`` on the connection, where the prepare
  goes in the same write as the bulk command (the one-trip prepare; on compressed
  connections the prepare is its own round trip) -- the cut positions cover the prepare's
  answer and the bulk command's OK;
- ``cached``: a second ``executemany`` of the statement on the connection (prepared and
  cached by a first one run before): only the positions inside the second exchange's
  bytes are cut (offset by the first's bytes, measured on a clean run).

Positions, on both APIs and in every mode (plain, TLS, compressed): the server-to-client
bytes are cut at EVERY byte of each exchange (the prepare's answer and the bulk OK:
~200 bytes first, ~55 cached, more under TLS); the client-to-server bytes (the 100 rows,
~1.6 KB plain, ~450 compressed) at every 2nd (``C2S_STEP``).  (The compressed first
UPDATE's answer used to be ~6 KB: the text-path fallback's 100 OKs, before the first
compressed executemany became a prepare round trip and one bulk command.)  An aio case's
private event loop (tests/_apis.py) is stopped as soon as the case ends
(``test_faults._release``), so thousands of cases hold no loops, threads or descriptors.

A cut before the last byte of the server's OK must end in an error: an ``executemany``
that returns is checked to report the rowcount of a clean run (100), so a call reported
done without the server's confirmation fails the test.  Each case runs in a transaction
that is never committed (``autocommit=False``), so the table is the same for every case
and the byte counts of the clean runs hold for all of them.
"""

import pytest

import mysqlc
import test_faults as tf                                       # the proxy's helpers
from test_pipeline import MODES, _mode_server, _proxies, mode_proxy   # noqa: F401 (fixtures)
from test_tls_default import certs, tls_server, tls_test        # noqa: F401 (fixtures)
from _peer import Fault

pytestmark = pytest.mark.both_apis

ROWS = 100
C2S_STEP = 2        # the client's bytes (~1.6 KB each exchange): every 2nd
UPDATE = "UPDATE bf_t SET v=%s WHERE id=%s"
INSERT = "INSERT INTO bf_ins (id, v) VALUES (%s, %s)"


def _rows(kind, tag):
    if kind == "update":
        return [("%s-%d" % (tag, i), i) for i in range(1, ROWS + 1)]
    base = 1000 if tag == "w" else 2000     # the warm-up's ids, the measured run's ids
    return [(base + i, "%s-%d" % (tag, i)) for i in range(1, ROWS + 1)]


def _tables(srv):
    c = mysqlc.connect(**srv.connect_kwargs())
    try:
        cur = c.cursor()
        cur.execute("CREATE OR REPLACE TABLE bf_t (id INT PRIMARY KEY, v VARCHAR(40))")
        cur.execute("INSERT INTO bf_t SELECT seq, CONCAT('old-', seq) FROM seq_1_to_%d" % ROWS)
        cur.execute("CREATE OR REPLACE TABLE bf_ins (id INT PRIMARY KEY, v VARCHAR(40))")
        c.commit()
        assert c._conn.bulk_operations, "the test server lacks bulk operations"
    finally:
        c.close()


def _one(c, kind, tag):
    cur = c.cursor()
    cur.executemany(UPDATE if kind == "update" else INSERT, _rows(kind, tag))
    # returned: the server's OK was read in full, and its count is the clean run's
    assert cur.rowcount == ROWS, (kind, tag, cur.rowcount)


def _actions(kind):
    def warm(c):
        _one(c, kind, "w")

    def first(c):
        _one(c, kind, "x")

    def cached(c):
        _one(c, kind, "w")       # prepares and caches the statement
        _one(c, kind, "x")       # the measured exchange
    return warm, first, cached


def _cut_all(server, proxy, action, start, end, step, kw, direction, seen):
    offsets = range(start, end, step * tf.STRIDE)
    for at in offsets:
        if tf._run_case(server, proxy, Fault(direction, at, "cut"), action, **kw) is None:
            seen["not reached"] += 1      # compressed only (see tf._run_case)
    seen[direction] += len(offsets)
    return len(offsets)


@pytest.mark.parametrize("kind", ["update", "insert"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_cut_at_every_byte_of_a_bulk_executemany(mode_proxy, mode, kind, api):
    server, proxy = mode_proxy
    _tables(server)
    kw = dict(MODES[mode], autocommit=False)
    warm, first, cached = _actions(kind)
    cases = 0
    seen = {"s2c": 0, "c2s": 0, "not reached": 0}
    for direction, step in (("s2c", 1), ("c2s", C2S_STEP)):
        n_first = tf._measure(server, proxy, first, direction=direction, **kw)
        n_warm = tf._measure(server, proxy, warm, direction=direction, **kw)
        n_both = tf._measure(server, proxy, cached, direction=direction, **kw)
        # the warm-up and the first run are the same exchange with other values (the
        # same size, but compressed, where the values change the compressed size)
        assert n_both > n_warm and (kw.get("compress") or n_warm == n_first), (
            n_first, n_warm, n_both)
        cases += _cut_all(server, proxy, first, 0, n_first, step, kw, direction, seen)
        cases += _cut_all(server, proxy, cached, n_warm, n_both, step, kw, direction, seen)
        if direction == "s2c":     # every server byte of both exchanges was cut
            assert seen["s2c"] == (len(range(0, n_first, tf.STRIDE)) +
                                   len(range(n_warm, n_both, tf.STRIDE))), seen
            assert n_first + n_both - n_warm > 200, (n_first, n_warm, n_both)
    print("\nbulk cuts %s %s %s: %s" % (api, mode, kind, seen))
    assert cases > 250 // tf.STRIDE, seen
    # nothing stayed applied (no case committed) and the server is fine
    c = mysqlc.connect(**server.connect_kwargs())
    try:
        cur = c.cursor()
        cur.execute("SELECT COUNT(*) FROM bf_t WHERE v NOT LIKE 'old-%%'")
        assert cur.fetchone() == (0,)
        cur.execute("SELECT COUNT(*) FROM bf_ins")
        assert cur.fetchone() == (0,)
    finally:
        c.close()


@pytest.mark.parametrize("mode", sorted(MODES))
def test_connection_in_step_after_a_rejected_row(request, mode, api):
    """Not a cut: a bulk command the server refuses (a duplicate key in row 50) raises
    IntegrityError and leaves the connection in step: the next statement answers."""
    server = _mode_server(request, mode)
    _tables(server)
    c = mysqlc.connect(autocommit=False, **MODES[mode], **server.connect_kwargs())
    try:
        cur = c.cursor()
        rows = _rows("insert", "x")
        rows[50] = rows[49]
        with pytest.raises(mysqlc.IntegrityError):
            cur.executemany(INSERT, rows)
        cur.execute("SELECT 42")
        assert cur.fetchall() == ((42,),)
        c.rollback()
    finally:
        c.close()


def test_compressed_first_executemany_is_bulk(server, api):
    """On a compressed connection the one-trip prepare cannot be used (nothing is sent):
    the first executemany of a statement still prepares (its own round trip) and sends
    COM_STMT_BULK_EXECUTE -- it used to fall back to the text path, one UPDATE per row."""
    from test_executemany_dml import _Count
    _tables(server)
    c = mysqlc.connect(compress=True, autocommit=False, **server.connect_kwargs())
    try:
        cur = c.cursor()
        with _Count(c) as n:
            cur.executemany(UPDATE, _rows("update", "x"))
        assert cur.rowcount == ROWS
        # a prepare and the bulk command (MariaDB counts a bulk UPDATE's rows as
        # executes); the text path sent 100 COM_QUERYs and no execute
        assert n.prepares == 1 and n.executes >= 1 and n.questions <= 2, vars(n)
        with _Count(c) as n:
            cur.executemany(INSERT, _rows("insert", "x"))
        assert cur.rowcount == ROWS
        # a prepare and the bulk command (MariaDB counts a bulk UPDATE's rows as
        # executes); the text path sent 100 COM_QUERYs and no execute
        assert n.prepares == 1 and n.executes >= 1 and n.questions <= 2, vars(n)
        c.rollback()
    finally:
        c.close()
