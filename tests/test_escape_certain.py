"""str/bytes parameters are escaped for the sql_mode the connection knows, as mysqlclient
writes them (issue 20), and the mode is confirmed with the server first where it is not
known for certain (Connection._escape_mode; docs/compat.md "Escaping of str and bytes
parameters").

Each uncertain state below is reached on a real connection, then the statements whose
grammar takes only a plain string literal are run with a backslash (and a quote) in the
value: CREATE USER / ALTER USER ... IDENTIFIED BY (then a login with that password), a
table COMMENT read back from information_schema, SELECT ... INTO OUTFILE and LOAD DATA
LOCAL INFILE with a backslash in the file name.  The extra round trips are counted with
the session's Com_set_option (the confirmation is one ``SET``).  Stored values are
compared with what mysqlclient (MySQLdb, a test requirement) stores, for all 256 byte
values and the multibyte charsets whose trail byte can be 0x5C.
"""

import os
import tempfile

import pytest

import mysqlc
from mysqlc.constants import CLIENT

pytestmark = pytest.mark.both_apis

PASSWORD = "p\\w'd\\0\\"          # backslashes, a quote, a "\0" that is not NUL
PASSWORD2 = "n\\e%w_\\"


@pytest.fixture(scope="module")
def routines(server):
    c = mysqlc.connect(**server.connect_kwargs(root=True))
    cur = c.cursor()
    for stmt in (
            "DROP PROCEDURE IF EXISTS ec_set_nbe",
            "CREATE PROCEDURE ec_set_nbe() BEGIN SET sql_mode='NO_BACKSLASH_ESCAPES'; END",
            "DROP PROCEDURE IF EXISTS ec_clear_nbe",
            "CREATE PROCEDURE ec_clear_nbe() BEGIN SET sql_mode=''; END",
            "DROP PROCEDURE IF EXISTS ec_sel_nbe",
            "CREATE PROCEDURE ec_sel_nbe() BEGIN SET sql_mode='NO_BACKSLASH_ESCAPES'; "
            "SELECT 1; END",
            "DROP FUNCTION IF EXISTS ec_f_nbe",
            "CREATE FUNCTION ec_f_nbe() RETURNS INT DETERMINISTIC BEGIN "
            "SET sql_mode='NO_BACKSLASH_ESCAPES'; RETURN 1; END",
            "DROP TABLE IF EXISTS ec_trig",
            "CREATE TABLE ec_trig (a INT)",
            "CREATE TRIGGER ec_trig_nbe BEFORE INSERT ON ec_trig FOR EACH ROW "
            "SET sql_mode='NO_BACKSLASH_ESCAPES'"):
        cur.execute(stmt)
    c.close()
    yield
    c = mysqlc.connect(**server.connect_kwargs(root=True))
    cur = c.cursor()
    for stmt in ("DROP PROCEDURE IF EXISTS ec_set_nbe", "DROP PROCEDURE IF EXISTS ec_clear_nbe",
                 "DROP PROCEDURE IF EXISTS ec_sel_nbe", "DROP FUNCTION IF EXISTS ec_f_nbe",
                 "DROP TABLE IF EXISTS ec_trig"):
        cur.execute(stmt)
    c.close()


def _drain(cur):
    while cur.nextset():
        pass


def _real_nbe(cur):
    cur.execute("SELECT @@sql_mode LIKE '%NO_BACKSLASH_ESCAPES%'")
    return bool(cur.fetchone()[0])


def _sets(cur):
    """The session's Com_set_option (SHOW STATUS itself is no SET)."""
    cur.execute("SHOW SESSION STATUS LIKE 'Com_set_option'")
    return int(cur.fetchone()[1])


# state -> (connect options, statements run to reach it, the real NO_BACKSLASH_ESCAPES)
STATES = {
    "certain": ({}, [], False),
    "certain-nbe": ({"sql_mode": "NO_BACKSLASH_ESCAPES"}, [], True),
    "after-call": ({}, ["CALL ec_set_nbe()"], False),
    "after-call-nbe": ({"sql_mode": "NO_BACKSLASH_ESCAPES"}, ["CALL ec_clear_nbe()"], True),
    "after-procedure-result": ({}, ["CALL ec_sel_nbe()"], False),
    "after-trigger": ({}, ["INSERT INTO ec_trig VALUES (1)"], False),
    "after-function": ({}, ["SELECT ec_f_nbe()"], False),     # the bit stale, as after CALL
    "multi-statement": ({"client_flag": CLIENT.MULTI_STATEMENTS},
                        ["SET sql_mode='NO_BACKSLASH_ESCAPES'; SELECT 1; CALL ec_clear_nbe()"],
                        True),
    "set-statement": ({}, ["SET STATEMENT sql_mode='NO_BACKSLASH_ESCAPES' FOR SELECT 1"],
                      False),
    "tracking-list-changed": ({}, ["SET session_track_system_variables='autocommit'",
                                   "SET sql_mode='NO_BACKSLASH_ESCAPES'"], True),
    "change-user": ({}, ["change_user"], False),
    # COM_RESET_CONNECTION (mysqlc.aio's pool on release): the global sql_mode again
    "session-reset": ({}, ["SET sql_mode='NO_BACKSLASH_ESCAPES'", "CALL ec_set_nbe()",
                           "reset"], False),
    "tracking-off": ({"session_track": False}, ["CALL ec_set_nbe()"], False),
    "tracking-off-nbe": ({"session_track": False, "sql_mode": "NO_BACKSLASH_ESCAPES"},
                         ["CALL ec_clear_nbe()"], True),
}


def _open(conn_kwargs, state, **extra):
    options, stmts, real = STATES[state]
    c = mysqlc.connect(**dict(conn_kwargs, **options, **extra))
    cur = c.cursor()
    for stmt in stmts:
        if stmt == "change_user":
            c.change_user(conn_kwargs["user"], conn_kwargs["password"],
                          conn_kwargs["database"])
        elif stmt == "reset":
            assert c._reset_session() is True
        else:
            cur.execute(stmt)
            _drain(cur)
    return c, cur, real


@pytest.mark.parametrize("state", list(STATES))
def test_literal_only_statements_after_each_state(server, conn_kwargs, routines, state,
                                                  tmp_path):
    c, cur, real = _open(conn_kwargs, state, local_infile=True)
    user = "ec_u_%s" % state.replace("-", "_")
    try:
        assert _real_nbe(cur) is real
        # CREATE USER / ALTER USER take only a plain string: the password is written
        # escaped for the real mode (never as a hex literal), and logs in
        cur.execute("DROP USER IF EXISTS %s@'%%'", (user,))
        if state in ("after-call", "tracking-off", "after-trigger", "after-function"):
            cur.execute(STATES[state][1][0])     # the state again (the SELECT confirmed it)
        cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (user, PASSWORD))
        sent = cur._executed
        assert b"X'" not in sent and PASSWORD.encode().hex().upper().encode() not in sent.upper()
        other = mysqlc.connect(host=conn_kwargs["host"], port=conn_kwargs["port"],
                               user=user, password=PASSWORD)
        other.close()
        cur.execute("ALTER USER %s@'%%' IDENTIFIED BY %s", (user, PASSWORD2))
        other = mysqlc.connect(host=conn_kwargs["host"], port=conn_kwargs["port"],
                               user=user, password=PASSWORD2)
        other.close()
        with pytest.raises(mysqlc.OperationalError):
            mysqlc.connect(host=conn_kwargs["host"], port=conn_kwargs["port"],
                           user=user, password=PASSWORD)
        # a failing statement's message quotes the SQL from the error on: the password
        # as the string literal the user would have written, never in hex
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            cur.execute("ALTER USER %s@'%%' IDENTIFIED BYY %s", (user, PASSWORD2))
        assert ei.value.args[0] == 1064
        message = ei.value.args[1]
        assert PASSWORD2.encode().hex().upper() not in message.upper()
        assert "X'" not in message
        escaped = PASSWORD2.replace("'", "''") if real else \
            PASSWORD2.replace("\\", "\\\\").replace("'", "\\'")
        assert "BYY '%s'" % escaped in message
        # COMMENT in DDL, read back
        comment = "it's a \\ back\\slash \\' comment\\"
        cur.execute("CREATE TEMPORARY TABLE ec_c (a INT) COMMENT %s", (comment,))
        cur.execute("DROP TEMPORARY TABLE ec_c")
        cur.execute("CREATE TABLE ec_c_%s (a INT) COMMENT %s" % (user, "%s"), (comment,))
        try:
            cur.execute("SELECT TABLE_COMMENT FROM information_schema.TABLES "
                        "WHERE TABLE_SCHEMA=DATABASE() AND TABLE_NAME=%s", ("ec_c_" + user,))
            assert cur.fetchall() == ((comment,),)
        finally:
            cur.execute("DROP TABLE ec_c_%s" % user)
        # SELECT ... INTO OUTFILE with a backslash in the file name
        cur.execute("SELECT @@tmpdir")
        outdir = cur.fetchone()[0]
        outfile = os.path.join(outdir, "ec\\out'%s.txt" % user)
        cur.execute("SELECT %s INTO OUTFILE %s", ("a,b", outfile))
        try:
            with open(outfile, "rb") as f:
                assert f.read() == b"a,b\n"
        finally:
            os.unlink(outfile)
        # LOAD DATA LOCAL INFILE naming a file with a backslash (and a quote)
        path = tmp_path / "in\\put'1.csv"
        path.write_bytes(b"1,x\\y\n2,z\n")
        cur.execute("CREATE TEMPORARY TABLE ec_l (a INT, b VARCHAR(10))")
        cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE ec_l FIELDS TERMINATED BY ',' "
                    "ESCAPED BY ''", (str(path),))
        cur.execute("SELECT a, b FROM ec_l ORDER BY a")
        assert cur.fetchall() == ((1, "x\\y"), (2, "z"))
        assert _real_nbe(cur) is real
    finally:
        try:
            cur.execute("DROP USER IF EXISTS %s@'%%'", (user,))
        finally:
            c.close()


@pytest.mark.parametrize("state", ["certain", "after-call", "tracking-off",
                                   "tracking-list-changed", "change-user", "session-reset"])
def test_confirmations_counted(server, conn_kwargs, routines, state):
    """The extra round trips: none while the mode is certain; one SET for the first
    value that needs the mode after an uncertain state; none for values without a
    backslash; with tracking off (or lost) one per statement that has such a value."""
    c, cur, real = _open(conn_kwargs, state)
    try:
        cur.execute("CREATE TEMPORARY TABLE ec_n (s VARCHAR(50))")
        base = _sets(cur)                          # SHOW STATUS and CREATE are no SET
        for i in range(5):                         # no backslash: never a round trip
            cur.execute("INSERT INTO ec_n VALUES (%s)", ("it's %d\n" % i,))
        assert _sets(cur) == base
        for i in range(5):
            cur.execute("INSERT INTO ec_n VALUES (%s)", ("a\\b'%d" % i,))
        after = _sets(cur)
        if state in ("certain", "session-reset"):    # the reset's own SET reports it
            assert after == base
        elif state in ("after-call", "change-user"):
            assert after == base + 1               # one confirmation, then certain
        else:                                      # tracking off or lost
            assert after == base + 5
        cur.execute("SELECT s FROM ec_n WHERE s LIKE 'a%%'")
        assert cur.fetchall() == tuple(("a\\b'%d" % i,) for i in range(5))
        assert _real_nbe(cur) is real
    finally:
        c.close()


@pytest.mark.parametrize("state", ["certain", "after-call"])
def test_random_10mib_blob_at_the_default_packet_limit(server, root_conn_kwargs, routines,
                                                       state):
    """A random 10 MiB BLOB is sent at about its size (as mysqlclient), not as hex at
    twice it: it fits MariaDB's default 16 MiB max_allowed_packet."""
    root = mysqlc.connect(**root_conn_kwargs)
    rcur = root.cursor()
    rcur.execute("SELECT @@global.max_allowed_packet")
    old = rcur.fetchone()[0]
    rcur.execute("SET GLOBAL max_allowed_packet=16777216")
    try:
        c, cur, _ = _open(root_conn_kwargs, state)
        try:
            cur.execute("SELECT @@max_allowed_packet")
            assert cur.fetchone()[0] == 16777216
            data = os.urandom(10 * 1024 * 1024)
            cur.execute("CREATE TEMPORARY TABLE ec_b (b LONGBLOB)")
            if state == "after-call":
                cur.execute("CALL ec_set_nbe()")
            cur.execute("INSERT INTO ec_b VALUES (%s)", (data,))
            assert len(cur._executed) < 11 * 1024 * 1024    # hex would be 20 MiB
            cur.execute("SELECT b = %s, LENGTH(b) FROM ec_b", (data,))
            assert cur.fetchone() == (1, len(data))
            cur.execute("SELECT b FROM ec_b")
            assert cur.fetchone()[0] == data
        finally:
            c.close()
    finally:
        rcur.execute("SET GLOBAL max_allowed_packet=%d" % old)
        root.close()


MB_VALUES = {
    # charset: (python codec, text values whose encoding has a 0x5C or 0x27 trail byte)
    "gbk": ("gbk", ["\u5f00\\", "\u8fd0'\\", "\u4e02\u7a1e"]),
    "sjis": ("shift_jis", ["\u8868\\", "\u30bd'", "\u80fd\u5341\\'"]),
    "big5": ("big5", ["\u8a31\\", "\u529f'", "\u5ea6\u7a0b\\"]),
}


@pytest.mark.sync_only("compares with MySQLdb (mysqlclient), a sync API")
@pytest.mark.parametrize("state", ["certain", "after-call", "tracking-off",
                                   "certain-nbe", "tracking-off-nbe"])
@pytest.mark.parametrize("charset", ["utf8mb4", "latin1", "binary", "gbk", "sjis", "big5"])
def test_stored_bytes_equal_mysqlclient(server, conn_kwargs, routines, state, charset):
    MySQLdb = pytest.importorskip("MySQLdb")
    assert not MySQLdb.__file__.startswith(os.path.dirname(mysqlc.__file__))
    options = dict(STATES[state][0])
    c, cur, _ = _open(conn_kwargs, state, charset=charset)
    mkw = dict(host=conn_kwargs["host"], port=conn_kwargs["port"],
               user=conn_kwargs["user"], password=conn_kwargs["password"],
               database=conn_kwargs["database"],
               charset="latin1" if charset == "binary" else charset)   # MySQLdb has no binary
    if "sql_mode" in options:
        mkw["sql_mode"] = options["sql_mode"]
    m = MySQLdb.connect(**mkw)
    mcur = m.cursor()
    coltype = "LONGBLOB" if charset == "binary" else "LONGTEXT CHARACTER SET %s" % charset
    values = [bytes([i]) for i in range(256)] + [bytes([i, 0x5C]) for i in range(0x80, 256)] \
        + [bytes([i, 0x27]) for i in range(0x80, 256)] + [b"\\\\'\\%\\_", b"\x00\x1a\r\n\"'"]
    texts = ["a'b\\c\\%\\_", "\u00e9\\'\u00ff"] if charset in ("utf8mb4", "latin1") else []
    if charset in MB_VALUES:
        texts = MB_VALUES[charset][1]
    try:
        table = "ec_mc_%s_%s" % (charset, state.replace("-", "_"))
        cur.execute("DROP TABLE IF EXISTS %s" % table)
        cur.execute("CREATE TABLE %s (who CHAR(1), i INT, b LONGBLOB, s %s)" % (table, coltype))
        rows = [(i, v, None) for i, v in enumerate(values)] + \
            [(1000 + i, None, t) for i, t in enumerate(texts)]
        for who, cu in (("c", cur), ("m", mcur)):
            for i, b, s in rows:
                cu.execute("INSERT INTO " + table + " VALUES (%s, %s, %s, %s)", (who, i, b, s))
        m.commit()
        c.commit()
        cur.execute("SELECT i, HEX(b), HEX(s) FROM %s WHERE who='c' ORDER BY i" % table)
        mine = cur.fetchall()
        cur.execute("SELECT i, HEX(b), HEX(s) FROM %s WHERE who='m' ORDER BY i" % table)
        theirs = cur.fetchall()
        assert mine == theirs
        hexes = [r[1].decode() if isinstance(r[1], bytes) else r[1] for r in mine[:len(values)]]
        assert hexes == [v.hex().upper() for v in values]
        # where the mode is certain the SQL is mysqlclient's, byte for byte (single-byte
        # charsets and utf8mb4, whose escaping mysqlclient does with the same table)
        if charset in ("utf8mb4", "latin1") and state in ("certain", "certain-nbe"):
            for v in values + texts:
                assert c.literal(v) == m.literal(v), v
                assert cur.mogrify("SELECT %s", (v,)).encode(c.encoding, "surrogateescape") \
                    == b"SELECT " + m.literal(v), v
            for v in values:        # (mysqlclient's escape_string encodes str as UTF-8)
                assert c.escape_string(v) == m.escape_string(v), v
        cur.execute("DROP TABLE %s" % table)
    finally:
        m.close()
        c.close()


def test_escape_apis_follow_the_mode(server, conn_kwargs, routines, api):
    """conn.escape_string()/literal()/escape() confirm an uncertain mode for a value
    with a backslash; a value without one reads the same in both modes.  mysqlc.aio's
    escape_string()/literal() are plain calls, outside the connection's greenlet: they
    cannot ask, so escape_string raises 2014 and literal writes a hex literal."""
    c, cur, _ = _open(conn_kwargs, "after-call")
    try:
        assert c.escape_string("it's") == b"it''s"      # no round trip needed
        assert c._escape_mode() is None
        if api == "aio":
            with pytest.raises(mysqlc.ProgrammingError) as ei:
                c.escape_string("a\\b")
            assert ei.value.args[0] == 2014
            assert c.literal("a\\b") == b"_utf8mb4 X'615C62'"
            cur.execute("SELECT %s", ("a\\b",))           # execute confirms in the greenlet
            assert cur.fetchall() == (("a\\b",),)
        assert c.escape_string("a\\b'") == b"a\\\\b\\'"   # confirmed: backslash escapes
        assert c._escape_mode() is False
        assert c.literal("a\\b") == b"'a\\\\b'"
        assert c.escape("a\\b") == b"'a\\\\b'"
        cur.execute("SET sql_mode='NO_BACKSLASH_ESCAPES'")
        assert c._escape_mode() is True
        assert c.escape_string("a\\b'") == b"a\\b''"
        assert c.literal(b"a\\'") == b"'a\\'''"
    finally:
        c.close()


def test_multi_statement_text_values_read_the_same_in_both_modes(server, conn_kwargs,
                                                                  routines):
    """In one multi-statement text a statement before a value may change the mode: its
    values with a backslash are written as hex literals (the last resort)."""
    c = mysqlc.connect(client_flag=CLIENT.MULTI_STATEMENTS, **conn_kwargs)
    cur = c.cursor()
    try:
        attack = "\\' UNION SELECT @@version -- "
        for mode in ("NO_BACKSLASH_ESCAPES", ""):
            cur.execute("SET sql_mode='%s'; SELECT %%s" % mode, (attack,))
            sets = []
            while True:
                if cur.description is not None:
                    sets.append(cur.fetchall())
                if not cur.nextset():
                    break
            assert sets == [((attack,),)]
    finally:
        c.close()


@pytest.mark.sync_only("the PyMySQL flavour is a sync API")
def test_pymysql_flavour_escapes_for_the_mode(server, conn_kwargs, routines):
    import mysqlc.pymysql
    c = mysqlc.pymysql.connect(**conn_kwargs)
    cur = c.cursor()
    try:
        # PyMySQL's own forms when the mode is certain: str with backslash escapes,
        # bytes as X'..' (PyMySQL's rule)
        assert cur.mogrify("SELECT %s, %s", ("a'b\\", b"\\'")) == "SELECT 'a\\'b\\\\', X'5c27'"
        cur.execute("CALL ec_set_nbe()")
        cur.execute("SELECT %s, %s, %s IN %s", ("a'b\\", b"\\'", "\\", {"x", "\\"}))
        assert cur.fetchall() == (("a'b\\", b"\\'", 1),)
        cur.execute("SET sql_mode='NO_BACKSLASH_ESCAPES'")
        assert c.escape("a'b\\") == "'a''b\\'"
        cur.execute("SELECT %s", ("a'b\\",))
        assert cur.fetchall() == (("a'b\\",),)
    finally:
        c.close()


@pytest.mark.sync_only("an unbuffered cursor's unread rows on the sync API")
def test_mode_cannot_be_asked_with_rows_unread(server, conn_kwargs, routines):
    """With rows of an unbuffered cursor unread no confirmation can be sent: the
    escaping APIs say so (2014) and execute() on another cursor raises 2014 as before;
    literal() writes the hex form."""
    c, cur, _ = _open(conn_kwargs, "after-call")
    try:
        ss = c.cursor(mysqlc.cursors.SSCursor)
        ss.execute("SELECT 1 UNION ALL SELECT 2")
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            c.escape_string("a\\b")
        assert ei.value.args[0] == 2014
        assert c.escape_string("a'b") == b"a''b"          # needs no mode
        assert c.literal("a\\b") == b"_utf8mb4 X'615C62'"
        with pytest.raises(mysqlc.ProgrammingError) as ei:
            cur.execute("SELECT %s", ("a\\b",))
        assert ei.value.args[0] == 2014
        assert list(ss.fetchall()) == [(1,), (2,)]
        cur.execute("SELECT %s", ("a\\b",))               # now confirmed and sent
        assert cur.fetchall() == (("a\\b",),)
        assert b"X'" not in cur._executed
    finally:
        c.close()


# A session whose tracking list lost character_set_client, then switched to gbk by SQL:
# backslash escapes written for the charset the client believes (utf8mb4) would let the
# gbk parser take an escaping backslash as a trail byte (E8 A1 | A8 5C | 27: the quote
# ends the string).  Found by trying to break the escaping (issue 20); mysqlclient is
# open to it in the same states.
INJECT = ["表\\' UNION SELECT 0x50574E4544 -- ", "表' UNION SELECT 0x50574E4544 -- ",
          "表\\", "x\\' OR 1=1 -- "]


@pytest.mark.parametrize("tracking", ["sql_mode", "", "autocommit,sql_mode"])
@pytest.mark.parametrize("names", ["SET NAMES gbk", "SET character_set_client=gbk",
                                   "SET CHARACTER SET gbk", "SET NAMES utf8mb4"])
def test_charset_changed_unreported_is_no_injection(conn_kwargs, tracking, names):
    c = mysqlc.connect(**conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SET session_track_system_variables=%s", (tracking,))
        cur.execute(names)
        for value in INJECT:
            cur.execute("SELECT HEX(CONVERT(%s USING utf8mb4)), 'tail'", (value,))
            rows = cur.fetchall()
            # one value, the statement's own tail after it: nothing injected
            assert len(rows) == 1 and rows[0][1] == "tail", (value, cur._executed)
            if "\\" in value or names == "SET NAMES utf8mb4":
                # a value with a backslash was confirmed for: the server's charset is
                # not the one believed, so it went as a hex literal with its introducer
                assert rows[0][0] == value.encode("utf-8").hex().upper(), cur._executed
            # (without a backslash, quotes doubled: a gbk session reads the utf8mb4
            # bytes as gbk text, as with every driver whose charset was changed unseen)
        # the literal-only statements work where the charset is the one believed
        if names == "SET NAMES utf8mb4":
            cur.execute("CREATE TEMPORARY TABLE ec_cs (a INT) COMMENT %s", ("a\\b'c",))
            assert b"X'" not in cur._executed
            cur.execute("DROP TEMPORARY TABLE ec_cs")
    finally:
        c.close()


def test_set_names_text_makes_the_charset_checked(conn_kwargs):
    """With the default tracking list a SET NAMES run as SQL is reported (the values
    are then escaped for gbk, 0x5C trail bytes included); the next value that needs
    the mode costs one confirmation (the text may change what is reported)."""
    c = mysqlc.connect(**conn_kwargs)
    try:
        cur = c.cursor()
        before = _sets(cur)
        cur.execute("SET NAMES gbk")
        for value in INJECT + ["乗\\'", "俓'", "僜\\"]:   # gbk 81 5C, 82 5C, 83 5C
            cur.execute("SELECT HEX(CONVERT(%s USING utf8mb4))", (value,))
            assert cur.fetchall() == ((value.encode("utf-8").hex().upper(),),), value
        assert c.charset == "gbk"
        # SET NAMES itself, and one confirmation for the first value with a backslash
        assert _sets(cur) - before == 2
        assert b"X'" not in cur._executed
    finally:
        c.close()
