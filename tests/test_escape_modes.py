"""Parameters are read back unchanged whatever the server's NO_BACKSLASH_ESCAPES
really is, also when the status bit that reports the mode is stale (issue 14).

MariaDB keeps sending SERVER_STATUS_NO_BACKSLASH_ESCAPES in every OK/EOF of the
session after ``CALL p()`` of a procedure (or an INSERT firing a trigger) whose body
ran ``SET sql_mode='NO_BACKSLASH_ESCAPES'``, although the caller's sql_mode -- with
backslash escapes -- is back in force; the other way round a procedure that clears
the mode inside a NO_BACKSLASH_ESCAPES session leaves the bit off, and within one
multi-statement query the bit is the one from before the statements that change the
mode.  A driver that picks backslash escaping or quote doubling from the bit can then
be made to end a string literal early (``\\' UNION SELECT @@version -- ``; mysqlclient
2.3.2 and PyMySQL 1.2.4 both do).  mysqlc's execute() escapes for the mode only when it
knows it for certain (Connection._escape_mode) and otherwise confirms it with one
``SET sql_mode=@@sql_mode`` before a value that needs it; values of a multi-statement
text are written so that they read the same in both modes (src/escape.c
mc_enc_put_quoted, docs/compat.md "Escaping"; tests/test_escape_certain.py counts the
round trips and runs the literal-only statements).

Each state below is followed by a property test (seeded random values: quotes,
backslashes, NUL, LF, CR, 0x1A, multibyte text whose trail byte is a backslash,
ill-formed bytes) through ``SELECT %s``, INSERT + SELECT into a column of the
connection's charset (utf8mb4, latin1, gbk, sjis, big5, binary), the multi-row INSERT
text path of executemany and callproc; no statement may return more or other rows
than the parameter alone.  Formatter unit tests (no server) come first.
"""

import random
import re

import pytest

import mysqlc
import mysqlc.pymysql
from mysqlc import _core
from mysqlc.constants import CLIENT

SEED = 20261201
N_VALUES = 120            # per (state, charset) and kind; x2 kinds x 6 charsets x 7 states
CHARSETS = ("utf8mb4", "latin1", "gbk", "sjis", "big5", "binary")
ATTACK = "\\' UNION SELECT @@version -- "
SPECIALS = ["'", "''", '"', "\\", "\\\\", "\\'", "\\%", "\\_", "\\\\_", "\x00", "\n", "\r", "\x1a", "\t", "%", "_",
            "%s", ";", "-- ", "#", "/*", "`", ATTACK, " UNION SELECT 1 -- "]
TRICKY_BYTES = [b"\\", b"'", b"\\'", b"\\%", b"\\_", b"\x81\\_", b"\x00", b"\x1a", b'"', b"\n", b"\r", b"\x81\\",
                b"\x95\\", b"\xa1\\", b"\xbf'", b"\xff", b"\x81", b"\xe0'", b"\xc0\x27",
                b"\xc3\xa9", b"\xe8\xa1\xa8", ATTACK.encode()]


# ---------------------------------------------------------------- formatter, no server

def fq(args, **kw):
    kw.setdefault("portable", True)
    return _core.format_query(b"SELECT %s", args, **kw)[len(b"SELECT "):]


@pytest.mark.parametrize("nbe", [False, True])
def test_portable_literals_ignore_the_flag(nbe):
    assert fq(("it's",), no_backslash_escapes=nbe) == b"'it''s'"
    assert fq((b"x\x00\n\r\x1a\"y",), no_backslash_escapes=nbe) == b"'x\x00\n\r\x1a\"y'"
    assert fq((ATTACK,), no_backslash_escapes=nbe) == \
        b"_utf8mb4 X'" + ATTACK.encode().hex().upper().encode() + b"'"
    assert fq(("a\\b",), no_backslash_escapes=nbe, charset="latin1", encoding="cp1252") == \
        b"_latin1 X'615C62'"
    # bytes: quoted as today without a backslash; with one the introducer when the
    # bytes are well-formed in the charset, else a plain (binary) hex literal
    assert fq((b"a\\b",), no_backslash_escapes=nbe) == b"_utf8mb4 X'615C62'"
    assert fq((b"\xff\\",), no_backslash_escapes=nbe) == b"X'FF5C'"
    assert fq((bytearray(b"\xc3\xa9\\"),), no_backslash_escapes=nbe) == b"_utf8mb4 X'C3A95C'"
    assert fq((b"\xed\xa0\x80\\",), no_backslash_escapes=nbe) == b"X'EDA0805C'"   # surrogate
    assert fq((b"a'\\",), no_backslash_escapes=nbe, binary_prefix=True) == b"_binary X'61275C'"
    assert fq((b"a'b",), no_backslash_escapes=nbe, binary_prefix=True) == b"_binary'a''b'"
    assert fq((b"\\",), no_backslash_escapes=nbe, charset="binary") == b"_binary X'5C'"
    # the trail byte of a multibyte character is a backslash: hex
    assert fq(("表",), no_backslash_escapes=nbe, charset="sjis", encoding="shift_jis") == \
        b"_sjis X'955C'"
    assert fq(("表'",), no_backslash_escapes=nbe, charset="utf8mb4") == b"'\xe8\xa1\xa8'''"
    # a gbk lead byte before a quote: the quote is doubled, no backslash anywhere
    assert fq((b"\xbf'",), no_backslash_escapes=nbe, charset="gbk") == b"'\xbf'''"
    assert fq((b"\x81\\",), no_backslash_escapes=nbe, charset="gbk") == b"_gbk X'815C'"
    assert fq((b"\xa1\\\xff",), no_backslash_escapes=nbe, charset="big5") == b"X'A15CFF'"
    # a backslash before % or _ reads as both bytes in either mode: quoted as it is
    assert fq(("a\\_b\\%'",), no_backslash_escapes=nbe) == b"'a\\_b\\%'''"
    assert fq(("a\\_b\\",), no_backslash_escapes=nbe) == b"_utf8mb4 X'615C5F625C'"
    assert fq(("\\\\_",), no_backslash_escapes=nbe) == b"_utf8mb4 X'5C5C5F'"
    assert fq((b"\x95\\_",), no_backslash_escapes=nbe, charset="sjis") == b"'\x95\\_'"
    assert fq(("",), no_backslash_escapes=nbe) == b"''"
    assert fq((b"",), no_backslash_escapes=nbe, binary_prefix=True) == b"_binary''"
    # a set, a tuple and the mapping form go through the same rule
    assert fq(({"a\\"},), no_backslash_escapes=nbe) == b"_utf8mb4 X'615C'"
    assert fq((("x'", "\\"),), no_backslash_escapes=nbe) == b"('x''',_utf8mb4 X'5C')"
    assert _core.format_query(b"%(k)s", {"k": "\\'"}, no_backslash_escapes=nbe,
                              portable=True) == b"_utf8mb4 X'5C27'"
    assert _core.literal("\\", nbe, portable=True) == b"_utf8mb4 X'5C'"


def test_without_portable_the_flag_decides_as_before():
    assert fq(("it's\\",), portable=False) == b"'it\\'s\\\\'"
    assert fq(("it's\\",), portable=False, no_backslash_escapes=True) == b"'it''s\\'"


def test_portable_argument_errors():
    with pytest.raises(ValueError, match="not a MySQL character set name"):
        fq(("x",), charset="utf8mb4 X")
    with pytest.raises(ValueError):
        _core.literal("x", charset="", portable=True)
    with pytest.raises(TypeError):        # keyword-only
        _core.literal("x", False, "utf8mb4", "utf-8", None, False, True)
    # other types are written as before
    assert _core.format_query(b"%s,%s,%s", (1, None, 1.5), portable=True) == b"1,NULL,1.5e0"


def _read_literal(lit, nbe):
    """The bytes the server's lexer (sql_lex.cc get_text / hex literal) reads from
    one portable literal, in the given mode; asserts the literal is used up."""
    lit = re.sub(rb"\A_[A-Za-z0-9_]+ ?", b"", lit)    # the introducer
    if lit.startswith(b"X'"):
        assert lit.endswith(b"'")
        return bytes.fromhex(lit[2:-1].decode())
    assert lit[:1] == b"'"
    out = bytearray()
    i = 1
    while True:
        c = lit[i]
        if c == 0x5C and not nbe:
            nxt = lit[i + 1:i + 2]
            if nxt in (b"%", b"_"):        # kept with its backslash (for LIKE)
                out += b"\\" + nxt
                i += 2
                continue
            out += {b"0": b"\0", b"n": b"\n", b"r": b"\r", b"Z": b"\x1a", b"t": b"\t",
                    b"b": b"\b"}.get(nxt, nxt)
            i += 2
            continue
        if c == 0x27:
            if lit[i + 1:i + 2] == b"'":
                out.append(0x27)
                i += 2
                continue
            assert i == len(lit) - 1, "the literal ends before its last byte"
            return bytes(out)
        out.append(c)
        i += 1


@pytest.mark.parametrize("charset", ["utf8mb4", "latin1", "gbk", "sjis", "big5", "binary"])
def test_portable_literal_reads_the_same_in_both_modes(charset):
    rnd = random.Random(SEED)
    for _ in range(500):
        data = b"".join(rnd.choice(TRICKY_BYTES) if rnd.random() < 0.5
                        else bytes(rnd.randrange(256) for _ in range(rnd.randrange(4)))
                        for _ in range(rnd.randrange(8)))
        for flag in (False, True):
            for prefix in (False, True):
                lit = _core.literal(data, flag, charset, binary_prefix=prefix, portable=True)
                assert _read_literal(lit, False) == data
                assert _read_literal(lit, True) == data


# ---------------------------------------------------------------- server states

def _codec_alphabet(codec):
    chars = []
    for cp in list(range(0x20, 0x7F)) + list(range(0xA0, 0x800, 3)) \
            + list(range(0x3000, 0x3100)) + list(range(0x4E00, 0x9FA6, 11)) \
            + list(range(0xFF01, 0xFF9F)):
        ch = chr(cp)
        try:
            if ch.encode(codec).decode(codec) != ch:
                continue
        except UnicodeError:
            continue
        chars.append(ch)
    traps = [ch for ch in chars
             if len(ch.encode(codec)) > 1 and ch.encode(codec)[-1:] in (b"\\", b"'")]
    return chars, traps


_ALPHABETS = {}


def random_str(rnd, codec):
    if codec not in _ALPHABETS:
        _ALPHABETS[codec] = _codec_alphabet(codec)
    chars, traps = _ALPHABETS[codec]
    out = []
    for _ in range(rnd.randrange(12)):
        r = rnd.random()
        if r < 0.35:
            out.append(rnd.choice(SPECIALS))
        elif r < 0.5 and traps:
            out.append(rnd.choice(traps))
        elif r < 0.55 and codec == "utf-8":
            out.append(chr(rnd.choice([0x1F600, 0x10FFFF, 0xFFFD, 0x5C5C, 0x2028])))
        else:
            out.append(rnd.choice(chars))
    return "".join(out)


def random_bytes(rnd):
    return b"".join(rnd.choice(TRICKY_BYTES) if rnd.random() < 0.5
                    else bytes(rnd.randrange(256) for _ in range(rnd.randrange(5)))
                    for _ in range(rnd.randrange(10)))


def _real_nbe(cur):
    cur.execute("SELECT @@sql_mode LIKE '%NO_BACKSLASH_ESCAPES%'")
    return bool(cur.fetchone()[0])


def _setup_routines(root_kwargs):
    c = mysqlc.connect(**root_kwargs)
    cur = c.cursor()
    cur.execute("DROP PROCEDURE IF EXISTS esc_set_nbe")
    cur.execute("CREATE PROCEDURE esc_set_nbe() BEGIN SET sql_mode='NO_BACKSLASH_ESCAPES'; END")
    cur.execute("DROP PROCEDURE IF EXISTS esc_clear_nbe")
    cur.execute("CREATE PROCEDURE esc_clear_nbe() BEGIN SET sql_mode='STRICT_TRANS_TABLES'; END")
    cur.execute("DROP PROCEDURE IF EXISTS esc_echo")
    cur.execute("CREATE PROCEDURE esc_echo(IN x LONGBLOB) SELECT x")
    cur.execute("DROP TABLE IF EXISTS esc_trig")
    cur.execute("CREATE TABLE esc_trig (a INT)")
    cur.execute("CREATE TRIGGER esc_trig_nbe BEFORE INSERT ON esc_trig FOR EACH ROW "
                "SET sql_mode='NO_BACKSLASH_ESCAPES'")
    c.close()


@pytest.fixture(scope="module")
def routines(server):
    _setup_routines(server.connect_kwargs(root=True))
    yield
    c = mysqlc.connect(**server.connect_kwargs(root=True))
    cur = c.cursor()
    for stmt in ("DROP PROCEDURE IF EXISTS esc_set_nbe", "DROP PROCEDURE IF EXISTS esc_clear_nbe",
                 "DROP PROCEDURE IF EXISTS esc_echo", "DROP TABLE IF EXISTS esc_trig"):
        cur.execute(stmt)
    c.close()


# state name -> (session sql_mode at connect, statements, real NBE, flag) after them;
# "multi" puts the mode change into every query itself (see _run)
STATES = {
    "stale-after-procedure": ("STRICT_TRANS_TABLES", ["CALL esc_set_nbe()"], False, True),
    "stale-off-after-procedure": ("NO_BACKSLASH_ESCAPES", ["CALL esc_clear_nbe()"], True, False),
    "stale-after-trigger": ("STRICT_TRANS_TABLES", ["INSERT INTO esc_trig VALUES (1)"],
                            False, True),
    "set-to-nbe": ("STRICT_TRANS_TABLES", ["SET sql_mode='NO_BACKSLASH_ESCAPES'"], True, True),
    "set-from-nbe": ("NO_BACKSLASH_ESCAPES", ["SET sql_mode='STRICT_TRANS_TABLES'"],
                     False, False),
    "multi-statement": ("STRICT_TRANS_TABLES", [], None, None),
    "plain": ("STRICT_TRANS_TABLES", [], False, False),
    # with tracking on these make the tracked sql_mode itself wrong: SET STATEMENT
    # reports the statement's mode (MariaDB 10.11), not the one restored after it; a
    # tracking list without sql_mode leaves the last report in place
    "set-statement": ("STRICT_TRANS_TABLES",
                      ["SET STATEMENT sql_mode='NO_BACKSLASH_ESCAPES' FOR SELECT 1"],
                      False, None),
    "tracking-list-changed": ("STRICT_TRANS_TABLES",
                              ["SET session_track_system_variables='autocommit'",
                               "SET sql_mode='NO_BACKSLASH_ESCAPES'"], True, True),
}
# what the core's tracked view says (wrongly) after the states that fool it
TRACKED_WRONG = {"set-statement": True, "tracking-list-changed": False,
                 "stale-after-procedure": None, "stale-off-after-procedure": None,
                 "stale-after-trigger": None}
TRACKS = (False, True)
MODES = ("NO_BACKSLASH_ESCAPES", "STRICT_TRANS_TABLES")


class Session:
    """One connection in one of STATES; run() executes a statement with parameters
    and returns every result set's rows (must be exactly one row-returning set)."""

    def __init__(self, server, state, charset, flavour=mysqlc, track=False):
        mode, stmts, self.real, self.flag = STATES[state]
        self.multi = state == "multi-statement"
        kw = server.connect_kwargs()
        # session_track=False: the driver's view is the server's status bit alone, which
        # these states make stale; with tracking on, the tracked sql_mode, which the
        # states of TRACKED_WRONG make wrong; the literals must be right either way
        self.conn = flavour.connect(charset=charset, sql_mode=mode, session_track=track,
                                    client_flag=CLIENT.MULTI_STATEMENTS, **kw)
        self.cur = self.conn.cursor()
        for stmt in stmts:
            self.cur.execute(stmt)
            while self.cur.nextset():
                pass
        if not self.multi:
            view = self.conn._conn.no_backslash_escapes
            if not track:
                assert self.flag is None or view is self.flag
            elif TRACKED_WRONG.get(state) is not None:
                assert view is TRACKED_WRONG[state] is not self.real
            assert _real_nbe(self.cur) is self.real
            if not track and self.flag is not None:
                assert self.conn._conn.no_backslash_escapes is self.flag   # still (stale)
        self.toggle = 0

    def run(self, sql, args):
        """Rows of each result set of `sql` % `args` (a SET of the other mode first
        when multi: the bit at formatting time is then always the wrong one)."""
        if self.multi:
            flag = self.conn._conn.no_backslash_escapes
            other = MODES[1] if flag else MODES[0]
            sql = "SET sql_mode='%s'; %s" % (other, sql)
        self.cur.execute(sql, args)
        sets = []
        while True:
            if self.cur.description is not None:
                sets.append(self.cur.fetchall())
            if not self.cur.nextset():
                break
        return sets

    def close(self):
        self.conn.close()


def _expected(value, conn):
    if conn.charset == "binary" and isinstance(value, str):
        return value.encode(conn.encoding)
    return value


@pytest.mark.parametrize("track", TRACKS)
@pytest.mark.parametrize("state", list(STATES))
def test_attack_parameter_is_one_row(server, routines, state, track):
    for flavour in (mysqlc, mysqlc.pymysql):
        s = Session(server, state, "utf8mb4", flavour, track)
        try:
            assert s.run("SELECT %s", (ATTACK,)) == [((ATTACK,),)]
            # bytes: mysqlc's '...' (a utf8mb4 string), PyMySQL's X'..' (binary)
            b = ATTACK.encode() if flavour is mysqlc.pymysql else ATTACK
            assert s.run("SELECT %s, %s", (ATTACK, ATTACK.encode())) == [((ATTACK, b),)]
            assert s.run("SELECT %s IN %s", ("\\", ("a", ATTACK, "\\"))) == [((1,),)]
            assert s.run("SELECT %(a)s", {"a": ATTACK}) == [((ATTACK,),)]
        finally:
            s.close()


@pytest.mark.parametrize("track", TRACKS)
@pytest.mark.parametrize("charset", CHARSETS)
@pytest.mark.parametrize("state", list(STATES))
def test_random_parameters_round_trip(server, routines, state, charset, track):
    rnd = random.Random("%s-%s-%s" % (SEED, state, charset))
    s = Session(server, state, charset, track=track)
    conn, cur = s.conn, s.cur
    codec = conn.encoding
    coltype = "LONGBLOB" if charset == "binary" else "LONGTEXT CHARACTER SET %s" % charset
    try:
        cur.execute("CREATE TEMPORARY TABLE esc_t (id INT PRIMARY KEY, s %s, b LONGBLOB)"
                    % coltype)
        strs = [random_str(rnd, codec) for _ in range(N_VALUES)]
        blobs = [random_bytes(rnd) for _ in range(N_VALUES)]
        for i, (v, b) in enumerate(zip(strs, blobs)):
            # SELECT: exactly one result set of one row, the parameter itself
            assert s.run("SELECT %s", (v,)) == [((_expected(v, conn),),)], repr(v)
            # bytes that are text in the charset come back as that text; any bytes
            # through a BLOB column
            vb = v.encode(codec)
            assert s.run("SELECT %s", (vb,)) == [((_expected(v, conn),),)], repr(vb)
            assert s.run("INSERT INTO esc_t VALUES (%s, %s, %s)", (i, v, b)) == []
        cur.execute("SELECT id, s, b FROM esc_t ORDER BY id")
        assert cur.fetchall() == tuple((i, _expected(v, conn), b)
                                       for i, (v, b) in enumerate(zip(strs, blobs)))
        assert s.run("SELECT COUNT(*) FROM esc_t WHERE s = %s AND b = %s",
                     (strs[-1], blobs[-1]))[0][0][0] >= 1
        # executemany's multi-row INSERT text path: a connection with encoders (conv)
        # does not take the bulk path, which sends binary values (no literals)
        cur.execute("DELETE FROM esc_t")
        rows = [{"id": i, "s": v, "b": b} for i, (v, b) in enumerate(zip(strs, blobs))]
        saved, conn._encoders = conn._encoders, dict(conn._encoders or {})
        try:
            assert cur.executemany("INSERT INTO esc_t VALUES (%(id)s, %(s)s, %(b)s)", rows) \
                == len(rows)
        finally:
            conn._encoders = saved
        assert cur._executed_from is None          # the text path ran, in one statement
        assert cur._executed.count(b"),(") >= len(rows) - 1
        cur.execute("SELECT id, s, b FROM esc_t ORDER BY id")
        assert cur.fetchall() == tuple((r["id"], _expected(r["s"], conn), r["b"]) for r in rows)
        # callproc: SET @_esc_echo_0=<literal>, then CALL
        for v in strs[:15] + [ATTACK]:
            if s.multi:     # callproc's own statements have no room for the SET
                break
            cur.callproc("esc_echo", (v,))
            assert cur.fetchall() == ((v.encode(codec),),)
            while cur.nextset():
                pass
        if not s.multi:     # the real mode is still the state's (the confirmations
            assert _real_nbe(cur) is s.real     # asked it, they changed nothing)
    finally:
        s.close()


@pytest.mark.parametrize("track", TRACKS)
@pytest.mark.parametrize("state", ["stale-after-procedure", "stale-off-after-procedure",
                                   "multi-statement", "set-statement",
                                   "tracking-list-changed"])
def test_pymysql_flavour_round_trips(server, routines, state, track):
    rnd = random.Random("%s-pymysql-%s" % (SEED, state))
    s = Session(server, state, "utf8mb4", mysqlc.pymysql, track)
    try:
        for _ in range(N_VALUES):
            v = random_str(rnd, "utf-8")
            b = random_bytes(rnd)
            assert s.run("SELECT %s, %s", (v, b)) == [((v, b),)]
            assert s.run("SELECT %s IN %s", (v, {v, "\\'"})) == [((1,),)]
        if not s.multi:
            for v in ("\\'", ATTACK, "a'b\\"):
                s.cur.callproc("esc_echo", (v,))
                assert s.cur.fetchall() == ((v.encode(),),)
                while s.cur.nextset():
                    pass
    finally:
        s.close()


@pytest.mark.parametrize("track", TRACKS)
@pytest.mark.parametrize("state", list(STATES))
def test_show_like_pattern(server, routines, state, track):
    # SHOW ... LIKE takes only a quoted string: a pattern whose backslashes all
    # escape % or _ stays one, and matches the same in every state
    s = Session(server, state, "utf8mb4", track=track)
    try:
        sets = s.run("SHOW VARIABLES LIKE %s", ("sql\\_mode",))
        assert [[r[0] for r in rows] for rows in sets] == [["sql_mode"]]
        sets = s.run("SELECT %s LIKE %s, %s LIKE %s",
                     ("esc_a_b", "esc\\_a\\_b", "escxaxb", "esc\\_a\\_b"))
        assert sets == [((1, 0),)]
    finally:
        s.close()


def test_mogrify_shows_what_is_sent(server, routines):
    s = Session(server, "stale-after-procedure", "utf8mb4")
    try:
        # the bit is stale and tracking is off: the mode is confirmed first, then the
        # value is escaped for it, as mysqlclient would for the real mode
        assert s.cur.mogrify("SELECT %s", (ATTACK,)) == \
            "SELECT '%s'" % ATTACK.replace("\\", "\\\\").replace("'", "\\'")
        assert s.conn._conn.no_backslash_escapes is False     # the SET fixed the bit
        assert s.cur.mogrify("SELECT %s", ("it's",)) == "SELECT 'it''s'"   # uncertain again
        assert s.conn.escape_string("it's\\") == b"it\\'s\\\\"
    finally:
        s.close()


def test_values_of_a_multi_statement_text_are_hex(server, routines):
    s = Session(server, "multi-statement", "utf8mb4")
    try:
        sql = s.cur.mogrify("SELECT 1; SELECT %s", (ATTACK,))
        assert sql == "SELECT 1; SELECT _utf8mb4 X'%s'" % ATTACK.encode().hex().upper()
    finally:
        s.close()
