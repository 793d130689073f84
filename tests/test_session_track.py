"""Session state tracking (CLIENT_SESSION_TRACK, MySQL docs "OK_Packet": session state
information; MariaDB's session_track_* variables).

Statements run as SQL (``USE db``, ``SET NAMES``, ``SET autocommit``, ``SET sql_mode``),
alone, in a multi-statement and inside a stored procedure, must leave the driver's view
of the schema, character set, autocommit mode and NO_BACKSLASH_ESCAPES right, so that
str parameters keep round-tripping.  The parser is also fed crafted OK packets by the
scripted peer (unknown types, GTIDs, malformed entries) and a server without the
capability must still work.
"""

import struct

import pytest

import mysqlc
from mysqlc import _core
from mysqlc.constants import CLIENT

from _peer import (FULL_CAPS, SERVER_STATUS_AUTOCOMMIT, CLIENT_SESSION_TRACK, lenenc_int,
                   lenenc_str, scripted, coldef, text_row, T_VAR_STRING)

SERVER_SESSION_STATE_CHANGED = 0x4000
NBE = 0x0200
TRICKY = ["it's", 'say "hi"', "back\\slash", "\\'; DROP TABLE x; --", "mix \\\\ '' \"",
          "caf\u00e9 \u00fcber"]


@pytest.fixture
def tconn(conn_kwargs):
    c = mysqlc.connect(**conn_kwargs, multi_statements=True)
    try:
        yield c
    finally:
        c.close()


def roundtrip(c, values=TRICKY):
    cur = c.cursor()
    cur.execute("CREATE TEMPORARY TABLE IF NOT EXISTS trk (id INT, v VARCHAR(100)) "
                "CHARACTER SET utf8mb4")
    cur.execute("DELETE FROM trk")
    for i, v in enumerate(values):
        cur.execute("INSERT INTO trk VALUES (%s, %s)", (i, v))
        cur.execute("SELECT %s", (v,))
        assert cur.fetchone()[0] == v
    cur.execute("SELECT v FROM trk ORDER BY id")
    assert [r[0] for r in cur.fetchall()] == list(values)


def assert_view_matches(c):
    """The driver's view equals what the server says the session is."""
    cur = c.cursor()
    cur.execute("SELECT @@character_set_client, @@sql_mode, @@autocommit, DATABASE()")
    cs, mode, ac, db = cur.fetchone()
    assert c.charset == cs
    assert c._conn.no_backslash_escapes is ("NO_BACKSLASH_ESCAPES" in mode.split(","))
    assert c.get_autocommit() is bool(ac)
    assert c.database == db


def drain(cur):
    while cur.nextset():
        pass


def test_connect_tracks_sql_mode(tconn):
    core = tconn._conn
    assert core.client_flag & CLIENT.SESSION_TRACK
    mode = core.session_variables.get("sql_mode")
    cur = tconn.cursor()
    cur.execute("SELECT @@sql_mode")
    assert mode == cur.fetchone()[0]
    cur.execute("SELECT @@session_track_system_variables")
    assert "sql_mode" in cur.fetchone()[0].split(",")
    assert tconn.get_autocommit() is False     # set in the same SET statement


def test_use_db_as_sql(tconn, conn_kwargs):
    first = conn_kwargs["database"]
    assert tconn.database == first and tconn._conn.schema == first
    cur = tconn.cursor()
    cur.execute("USE information_schema")
    assert tconn.database == "information_schema" == tconn.db
    assert tconn._conn.session_changes == {"schema": "information_schema"}
    cur.execute("SELECT DATABASE()")
    assert cur.fetchone()[0] == tconn.database
    tconn.select_db(first)
    assert tconn.database == first
    cur.execute("SELECT DATABASE()")
    assert cur.fetchone()[0] == first


def test_set_names_as_sql(tconn):
    cur = tconn.cursor()
    cur.execute("SET NAMES latin1")
    assert tconn.charset == "latin1"
    assert tconn.encoding == mysqlc._charsets.CHARSETS["latin1"][1]
    assert tconn.character_set_name() == "latin1"
    cur.execute("SELECT @@character_set_client")
    assert cur.fetchone()[0] == "latin1"
    roundtrip(tconn, [v for v in TRICKY])    # every value is in latin1's repertoire
    cur.execute("SELECT 'caf\u00e9'")
    assert cur.fetchone()[0] == "caf\u00e9"
    cur.execute("SET NAMES utf8mb4")
    assert tconn.charset == "utf8mb4"
    roundtrip(tconn, TRICKY + ["\U0001f600 emoji"])


def test_set_names_prepared_cursor(tconn):
    cur = tconn.cursor(mysqlc.cursors.PreparedCursor)
    cur.execute("SELECT ?", ("caf\u00e9",))
    assert cur.fetchone()[0] == "caf\u00e9"
    tconn.cursor().execute("SET NAMES latin1")
    cur.execute("SELECT ?", ("caf\u00e9",))          # the cached query re-encoded
    assert cur.fetchone()[0] == "caf\u00e9"
    cur.execute("SELECT CHARSET(?)", ("caf\u00e9",))
    assert cur.fetchone()[0] in ("latin1", "binary")


def test_autocommit_as_sql(tconn):
    cur = tconn.cursor()
    cur.execute("SET autocommit=1")
    assert tconn.get_autocommit() is True
    assert tconn._conn.session_variables["autocommit"] == "ON"
    cur.execute("SET autocommit=0")
    assert tconn.get_autocommit() is False


def test_sql_mode_no_backslash_escapes_as_sql(tconn):
    cur = tconn.cursor()
    core = tconn._conn
    assert core.no_backslash_escapes is False
    cur.execute("SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
    assert "NO_BACKSLASH_ESCAPES" in core.session_variables["sql_mode"]
    assert core.no_backslash_escapes is True
    roundtrip(tconn)
    cur.execute("SET sql_mode = ''")
    assert core.no_backslash_escapes is False
    roundtrip(tconn)


def test_multi_statement(tconn, conn_kwargs):
    cur = tconn.cursor()
    cur.execute("SET NAMES latin1; USE information_schema; "
                "SET sql_mode='NO_BACKSLASH_ESCAPES'; SET autocommit=1; SELECT 1")
    drain(cur)
    assert tconn.charset == "latin1"
    assert tconn.database == "information_schema"
    assert tconn._conn.no_backslash_escapes is True
    assert tconn.get_autocommit() is True
    assert_view_matches(tconn)
    cur.execute("USE `%s`" % conn_kwargs["database"])
    roundtrip(tconn)
    cur.execute("SET NAMES utf8mb4; SET sql_mode=DEFAULT; SET autocommit=0")
    drain(cur)
    assert tconn.charset == "utf8mb4" and tconn.get_autocommit() is False
    assert tconn._conn.no_backslash_escapes is False
    roundtrip(tconn)


def test_procedure(tconn):
    """MariaDB runs a procedure with its own sql_mode and character_set_client and
    restores the caller's when it ends; with a result set inside, the change is
    reported in the middle of the response and the restore is not: the driver asks
    again (one SET assigning the variables their own values) before it relies on them."""
    cur = tconn.cursor()
    cur.execute("DROP PROCEDURE IF EXISTS trk_proc")
    cur.execute("DROP PROCEDURE IF EXISTS trk_proc2")
    cur.execute("CREATE PROCEDURE trk_proc() BEGIN SET NAMES latin1; "
                "SET sql_mode='NO_BACKSLASH_ESCAPES'; SET autocommit=1; SELECT 1; END")
    cur.execute("CREATE PROCEDURE trk_proc2() BEGIN SET NAMES latin1; "
                "SET sql_mode='NO_BACKSLASH_ESCAPES'; SET autocommit=1; END")
    try:
        for proc in ("trk_proc", "trk_proc2"):
            cur.execute("SET autocommit=0")
            cur.callproc(proc)
            drain(cur)
            assert tconn.get_autocommit() is True
            assert_view_matches(tconn)
            roundtrip(tconn)
            cur.execute("CALL %s()" % proc)
            drain(cur)
            roundtrip(tconn)
            assert_view_matches(tconn)
        # a procedure whose changes last: a SET of a variable routines do not restore
        cur.execute("SET sql_mode='NO_BACKSLASH_ESCAPES'")
        cur.callproc("trk_proc")
        drain(cur)
        assert_view_matches(tconn)
        roundtrip(tconn)
    finally:
        tconn.cursor().execute("DROP PROCEDURE IF EXISTS trk_proc")
        tconn.cursor().execute("DROP PROCEDURE IF EXISTS trk_proc2")


def test_session_track_disabled(conn_kwargs):
    c = mysqlc.connect(**conn_kwargs, session_track=False)
    try:
        core = c._conn
        assert not core.client_flag & CLIENT.SESSION_TRACK
        assert core.session_variables == {} and core.session_changes is None
        cur = c.cursor()
        cur.execute("SELECT @@session_track_system_variables")
        assert "sql_mode" not in cur.fetchone()[0].split(",")
        assert c.get_autocommit() is False
        cur.execute("SET sql_mode='NO_BACKSLASH_ESCAPES'")
        assert core.no_backslash_escapes is True      # the status flag
        roundtrip(c)
        cur.execute("USE information_schema")
        assert c.database == conn_kwargs["database"]  # not tracked: documented
        assert core.schema == conn_kwargs["database"]
    finally:
        c.close()


def test_change_user_resets(tconn, conn_kwargs):
    cur = tconn.cursor()
    cur.execute("SET NAMES latin1")
    assert tconn.charset == "latin1"
    tconn.change_user(conn_kwargs["user"], conn_kwargs["password"], conn_kwargs["database"])
    assert tconn.charset == "utf8mb4"
    assert "character_set_client" not in tconn._conn.session_variables
    roundtrip(tconn)


# ---------------------------------------------------------------- scripted peer

def state_ok(entries, status=SERVER_STATUS_AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED,
             info=b""):
    block = b"".join(bytes([t]) + lenenc_str(d) for t, d in entries)
    return (b"\x00\x00\x00" + struct.pack("<HH", status, 0) + lenenc_str(info)
            + lenenc_str(block))


def sysvar(name, value):
    return (0, lenenc_str(name) + lenenc_str(value))


def run_peer(answers):
    """A server offering CLIENT_SESSION_TRACK answering each query with the next OK."""
    def script(peer):
        resp = peer.handshake(caps=FULL_CAPS | CLIENT_SESSION_TRACK)
        assert resp["caps"] & CLIENT_SESSION_TRACK
        for a in answers:
            peer.recv_command()
            peer.send(a)
        peer.expect_close()
    return scripted(script)


def test_peer_parses_every_type():
    gtid = (3, b"\x00" + lenenc_str(b"3E11FA47-71CA-11E1-9E33-C80AA9429562:23"))
    srv = run_peer([
        state_ok([sysvar(b"sql_mode", b"NO_BACKSLASH_ESCAPES"), (1, lenenc_str(b"shop")),
                  (2, b"1"), gtid, (4, lenenc_str(b"SET TRANSACTION READ ONLY;")),
                  (5, lenenc_str(b"T_______")), (99, b"future type, skipped"),
                  sysvar(b"time_zone", b"+01:00")], info=b"hello"),
        state_ok([(2, lenenc_str(b"1"))]),   # the docs' inner string<lenenc> form
    ])
    c = srv.connect()
    assert c.query(b"SET x") == 0
    assert c.info == "hello"
    assert c.session_changes == {
        "system_variables": {"sql_mode": "NO_BACKSLASH_ESCAPES", "time_zone": "+01:00"},
        "schema": "shop", "state_change": True,
        "gtids": "3E11FA47-71CA-11E1-9E33-C80AA9429562:23",
        "transaction_characteristics": "SET TRANSACTION READ ONLY;",
        "transaction_state": "T_______"}
    assert c.schema == "shop"
    # the status flag says no, the tracked sql_mode says yes: the tracked value wins
    assert not c.server_status & NBE and c.no_backslash_escapes is True
    seq = c.session_track_seq
    c.query(b"SET y")
    assert c.session_changes == {"state_change": True} and c.session_track_seq != seq
    assert c.session_variables == {"sql_mode": "NO_BACKSLASH_ESCAPES", "time_zone": "+01:00"}
    c.close()
    srv.check()


@pytest.mark.parametrize("block", [
    bytes([0]) + lenenc_str(lenenc_str(b"sql_mode")),            # no value
    bytes([1]) + lenenc_str(b""),                                # schema without name
    bytes([0]) + b"\x20abc",                                     # entry longer than block
    bytes([3]) + lenenc_str(b"\x00\x10abc"),                     # GTID string too short
    bytes([2]) + lenenc_str(b""),                                # empty flag
    b"\x05",                                                     # type without data
])
def test_peer_malformed_state(block):
    ok = (b"\x00\x00\x00" + struct.pack("<HH", SERVER_STATUS_AUTOCOMMIT
                                        | SERVER_SESSION_STATE_CHANGED, 0)
          + lenenc_str(b"") + lenenc_str(block))
    srv = run_peer([ok])
    c = srv.connect()
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.query(b"SET x")
    assert ei.value.args[0] == 2027
    assert not c.open
    srv.check()


def test_peer_state_block_past_packet_end():
    ok = (b"\x00\x00\x00" + struct.pack("<HH", SERVER_STATUS_AUTOCOMMIT
                                        | SERVER_SESSION_STATE_CHANGED, 0)
          + lenenc_str(b"") + b"\x30" + b"short")
    srv = run_peer([ok])
    c = srv.connect()
    with pytest.raises(mysqlc.OperationalError) as ei:
        c.query(b"SET x")
    assert ei.value.args[0] == 2027
    srv.check()


def test_peer_without_session_track():
    """A server that does not offer the capability: not asked for, plain OKs parse."""
    def script(peer):
        resp = peer.handshake(caps=FULL_CAPS)
        assert not resp["caps"] & CLIENT_SESSION_TRACK
        peer.expect_query(b"SELECT 1")
        peer.resultset([coldef(b"1", T_VAR_STRING)], [text_row(b"1")], deprecate_eof=True)
        peer.expect_query(b"SET x")
        peer.send(b"\x00\x00\x00" + struct.pack("<HH", SERVER_STATUS_AUTOCOMMIT | NBE, 0)
                  + lenenc_str(b"info text"))
        peer.expect_close()
    srv = scripted(script)
    c = srv.connect()
    c.query(b"SELECT 1")
    assert c.fetch() == [("1",)]
    c.query(b"SET x")
    assert c.info == "info text" and c.session_changes is None
    assert c.no_backslash_escapes is True and c.schema is None
    c.close()
    srv.check()


def test_peer_ok_after_rows_carries_state():
    """With CLIENT_DEPRECATE_EOF the OK that ends the rows may carry changes too."""
    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_SESSION_TRACK)
        peer.expect_query(b"CALL p()")
        peer.send(lenenc_int(1))
        peer.send(coldef(b"a", T_VAR_STRING))
        peer.send(text_row(b"x"))
        peer.send(b"\xfe" + state_ok([(1, lenenc_str(b"other"))])[1:])
        peer.expect_close()
    srv = scripted(script)
    c = srv.connect()
    c.query(b"CALL p()")
    assert c.fetch() == [("x",)]
    assert c.schema == "other"
    c.close()
    srv.check()


def test_peer_connect_sequence_one_round_trip():
    """At connect, sql_mode tracking rides in the SET that sets autocommit: one statement,
    as without tracking; the reported sql_mode sets the NO_BACKSLASH_ESCAPES view."""
    from _peer import PASSWORD, USER
    seen = []

    def script(peer):
        peer.handshake(caps=FULL_CAPS | CLIENT_SESSION_TRACK)
        sql = peer.expect_query()
        seen.append(sql)
        # the status bit as the server sets it with the mode (0x0200); a bit that
        # disagreed with the tracked mode would make the driver confirm it first
        peer.send(state_ok([sysvar(b"autocommit", b"OFF"),
                            sysvar(b"sql_mode", b"STRICT_ALL_TABLES,NO_BACKSLASH_ESCAPES")],
                           status=SERVER_SESSION_STATE_CHANGED | 0x0200))
        peer.expect_query(b"SELECT 1")
        peer.send(b"\x00\x00\x00" + struct.pack("<HH", 0, 0))
        peer.expect_close()
    srv = scripted(script)
    c = mysqlc.connect(host="127.0.0.1", port=srv.port, user=USER.decode(),
                       password=PASSWORD.decode())
    try:
        assert seen[0].startswith(b"SET autocommit=0, session_track_system_variables=")
        assert seen[0].endswith(b"sql_mode=@@sql_mode")
        assert c.get_autocommit() is False
        assert c._conn.no_backslash_escapes is True
        assert c.literal("a'b\\c") == b"'a''b\\c'"
        c.cursor().execute("SELECT 1")
    finally:
        c.close()
    srv.check()
