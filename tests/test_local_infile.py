"""LOAD DATA LOCAL INFILE (issue 4).

Off unless ``connect(local_infile=True)``.  When on, the server may read only files under
``local_infile_dir`` (after resolving ``..`` and symlinks) or the data given for the
statement with ``cursor.execute(sql, infile=bytes / binary file / iterable of chunks)``;
any other request is refused with OperationalError 2068 and no byte of the file is sent
(only the empty packet that ends the transfer, so the connection stays in sync).  Files
stream in chunks and are never read whole (a 50 MB file is loaded with the peak RSS
measured in a fresh subprocess).

Against the real server for the behaviour, and against a scripted protocol peer (a
socket server in a thread, written here) for the hostile cases: a server that asks for a
file outside the allowed directory, through ``..`` or a symlink, or asks at all when
``local_infile`` is off.  The peer records every byte the client sends; the tests prove
that nothing of the file was sent.
"""

import json
import os
import socket
import struct
import subprocess
import sys
import threading

import pytest

import mysqlc
import mysqlc.cursors
from mysqlc._infile_sql import local_infile_names
from mysqlc.constants import CLIENT

from _apis import subprocess_spec

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSV = b"1,one\n2,two\n3,three\n"
LOAD = ("LOAD DATA LOCAL INFILE %s INTO TABLE li FIELDS TERMINATED BY ',' "
        "LINES TERMINATED BY '\\n'")
REFUSED = 2068      # CR_LOAD_DATA_LOCAL_INFILE_REJECTED


def _sql(path):
    return LOAD % ("'%s'" % str(path).replace("\\", "\\\\").replace("'", "\\'"))


@pytest.fixture
def dirs(tmp_path):
    """allowed/ (with data.csv, sub/more.csv, and symlinks pointing outside),
    allowed_evil/ (a sibling whose name starts like allowed), secret/ (outside)."""
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    secret = tmp_path / "secret"
    secret.mkdir()
    evil = tmp_path / "allowed_evil"
    evil.mkdir()
    (allowed / "data.csv").write_bytes(CSV)
    (allowed / "sub" / "more.csv").write_bytes(b"4,four\n5,five\n")
    (secret / "secret.csv").write_bytes(b"666,SECRET-MARKER-a1b2c3\n")
    (evil / "evil.csv").write_bytes(b"667,SECRET-MARKER-evil\n")
    os.symlink(secret / "secret.csv", allowed / "link.csv")
    os.symlink(secret, allowed / "linkdir")
    return {"allowed": allowed, "secret": secret, "evil": evil, "tmp": tmp_path}


def _table(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE li (id INT, s VARCHAR(200))")
    return cur


def _rows(conn):
    cur = conn.cursor()
    cur.execute("SELECT id, s FROM li ORDER BY id")
    return [tuple(r) for r in cur.fetchall()]


def _usable(conn):
    cur = conn.cursor()
    cur.execute("SELECT 'usable'")
    assert cur.fetchall() == (("usable",),)


# =========================================================================== real server

def test_off_by_default_fails_cleanly(conn, dirs):
    assert not conn._conn.client_flag & CLIENT.LOCAL_FILES    # not even offered
    _table(conn)
    with pytest.raises(mysqlc.Error) as ei:
        conn.cursor().execute(_sql(dirs["allowed"] / "data.csv"))
    # MariaDB 4166 / MySQL 1148 or 3948: the server knows the client does not allow it
    assert ei.value.args[0] in (1148, 3948, 4166, REFUSED), ei.value
    _usable(conn)
    assert _rows(conn) == []
    with pytest.raises(mysqlc.ProgrammingError):
        conn.cursor().execute(_sql("x"), infile=CSV)          # infile= needs local_infile
    _usable(conn)


@pytest.fixture
def lconn(conn_kwargs, dirs):
    c = mysqlc.connect(local_infile=True, local_infile_dir=str(dirs["allowed"]), **conn_kwargs)
    try:
        yield c
    finally:
        c.close()


def test_file_inside_the_allowed_dir_loads(lconn, dirs):
    assert lconn._conn.client_flag & CLIENT.LOCAL_FILES
    cur = _table(lconn)
    assert cur.execute(_sql(dirs["allowed"] / "data.csv")) == 3
    assert cur.rowcount == 3
    assert _rows(lconn) == [(1, "one"), (2, "two"), (3, "three")]
    # a name relative to local_infile_dir, and one in a subdirectory
    assert cur.execute(_sql("data.csv")) == 3
    assert cur.execute(_sql("sub/more.csv")) == 2
    assert cur.execute(_sql(dirs["allowed"] / "sub" / ".." / "data.csv")) == 3
    cur.execute("SELECT COUNT(*) FROM li")
    assert cur.fetchone() == (11,)
    _usable(lconn)


def test_info_after_load(lconn, dirs):
    cur = _table(lconn)
    cur.execute(_sql(dirs["allowed"] / "data.csv"))
    assert lconn.info() == "Records: 3  Deleted: 0  Skipped: 0  Warnings: 0"


@pytest.mark.parametrize("which", ["absolute", "dotdot", "dotdot-relative", "symlink-file",
                                   "symlink-dir", "sibling-prefix", "missing", "directory",
                                   "etc-hostname"])
def test_file_outside_the_allowed_dir_is_refused(lconn, dirs, which):
    allowed, secret = dirs["allowed"], dirs["secret"]
    path = {
        "absolute": secret / "secret.csv",
        "dotdot": "%s/../secret/secret.csv" % allowed,
        "dotdot-relative": "../secret/secret.csv",
        "symlink-file": allowed / "link.csv",
        "symlink-dir": "linkdir/secret.csv",
        "sibling-prefix": dirs["evil"] / "evil.csv",
        "missing": allowed / "nope.csv",
        "directory": allowed / "sub",
        "etc-hostname": "/etc/hostname",
    }[which]
    _table(lconn)
    with pytest.raises(mysqlc.OperationalError) as ei:
        lconn.cursor().execute(_sql(path))
    assert ei.value.args[0] == REFUSED
    assert "refused" in str(ei.value)
    assert _rows(lconn) == []                      # nothing was loaded
    _usable(lconn)
    assert lconn.cursor().execute(_sql("data.csv")) == 3     # and it still loads allowed files


def test_local_infile_without_dir_loads_the_file_the_statement_names(conn_kwargs, dirs):
    """mysqlclient / PyMySQL code (``LOAD DATA LOCAL INFILE %s`` with a path) works:
    without local_infile_dir the file the statement itself names is sent."""
    c = mysqlc.connect(local_infile=True, **conn_kwargs)
    try:
        cur = _table(c)
        path = str(dirs["allowed"] / "data.csv")
        assert cur.execute(LOAD % "%s", (path,)) == 3
        assert _rows(c) == [(1, "one"), (2, "two"), (3, "three")]
        # data given for the statement is allowed (and wins over the name)
        assert c.cursor().execute(_sql("anything"), infile=CSV) == 3
        # a statement naming a file that does not exist is refused, connection in sync
        with pytest.raises(mysqlc.OperationalError) as ei:
            cur.execute(_sql(dirs["allowed"] / "nope.csv"))
        assert ei.value.args[0] == REFUSED
        _usable(c)
    finally:
        c.close()


def _quote_doubled(text):
    """A literal with '' for a quote (backslashes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


@pytest.mark.parametrize("name", ["it's.csv", 'dq"uote.csv', "back\\slash.csv",
                                  "caf\u00e9 \u00fcn\u00ef.csv", "sp ace;semi.csv",
                                  "pct%_.csv"])
def test_statement_named_file_with_quotes_escapes_and_unicode(conn_kwargs, tmp_path, name):
    """The file name is read as the SQL literal the server parses: escapes, doubled
    quotes, non-ASCII text."""
    path = tmp_path / name
    path.write_bytes(CSV)
    text = str(path)
    c = mysqlc.connect(local_infile=True, **conn_kwargs)
    try:
        cur = _table(c)
        # escaped by execute for the session's sql_mode (a plain string: LOAD DATA's
        # file name takes no other), as by the explicit string_literal
        assert cur.execute(LOAD % "%s", (text,)) == 3
        assert cur.execute(LOAD % c.string_literal(text).decode()) == 3
        assert cur.execute(LOAD % _quote_doubled(text)) == 3           # '' for a quote
        assert len(_rows(c)) == 9
        # an introducer or 'a' 'b' is a syntax error there: the server asks for nothing
        for literal in ("_utf8mb4" + _quote_doubled(text),
                        _quote_doubled(text[:5]) + " " + _quote_doubled(text[5:])):
            with pytest.raises(mysqlc.ProgrammingError) as ei:
                cur.execute(LOAD % literal)
            assert ei.value.args[0] == 1064
    finally:
        c.close()


def test_statement_named_file_in_a_multi_statement_query(conn_kwargs, dirs):
    (dirs["tmp"] / "b.csv").write_bytes(b"7,seven\n")
    c = mysqlc.connect(local_infile=True, **conn_kwargs)
    try:
        cur = _table(c)
        cur.execute("SELECT 'LOAD DATA LOCAL INFILE ''/etc/passwd'''; "
                    + _sql(dirs["allowed"] / "data.csv") + " ; /* comment */ "
                    + _sql(dirs["tmp"] / "b.csv"))
        while cur.nextset():
            pass
        assert [r[0] for r in _rows(c)] == [1, 2, 3, 7]
    finally:
        c.close()


def test_statement_named_file_under_no_backslash_escapes(conn_kwargs, tmp_path):
    path = tmp_path / "a\\b.csv"          # a backslash in the name
    path.write_bytes(CSV)
    c = mysqlc.connect(local_infile=True, sql_mode="NO_BACKSLASH_ESCAPES", **conn_kwargs)
    try:
        cur = _table(c)
        load = "LOAD DATA LOCAL INFILE %s INTO TABLE li FIELDS TERMINATED BY ','"
        assert cur.execute(load % ("'%s'" % path)) == 3      # the backslash is literal
        # string_literal and execute() escape for the mode the session reports (the
        # file name takes only a plain string; docs/compat.md "Escaping")
        assert cur.execute(load % c.string_literal(str(path)).decode()) == 3
        assert cur.execute(load, (str(path),)) == 3
        assert b"X'" not in cur._executed
    finally:
        c.close()


def test_missing_local_infile_dir_is_an_error_at_connect(conn_kwargs, tmp_path):
    with pytest.raises(mysqlc.ProgrammingError, match="local_infile_dir"):
        mysqlc.connect(local_infile=True, local_infile_dir=str(tmp_path / "nope"),
                       **conn_kwargs)
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(mysqlc.ProgrammingError, match="not a directory"):
        mysqlc.connect(local_infile=True, local_infile_dir=str(tmp_path / "file"),
                       **conn_kwargs)


def test_allowed_dir_given_through_a_symlink(conn_kwargs, dirs):
    link = dirs["tmp"] / "allowed-link"
    os.symlink(dirs["allowed"], link)
    c = mysqlc.connect(local_infile=True, local_infile_dir=str(link), **conn_kwargs)
    try:
        cur = _table(c)
        assert cur.execute(_sql(link / "data.csv")) == 3
        assert cur.execute(_sql(dirs["allowed"] / "data.csv")) == 3
        with pytest.raises(mysqlc.OperationalError) as ei:
            cur.execute(_sql(link / "link.csv"))
        assert ei.value.args[0] == REFUSED
    finally:
        c.close()


def _chunks():
    yield b"10,ten\n11,el"                 # a chunk boundary inside a line
    yield b""                              # empty chunks are harmless
    yield bytearray(b"even\n12,")
    yield memoryview(b"twelve\n")


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "file", "generator",
                                  "list"])
def test_execute_infile_data(lconn, dirs, kind):
    cur = _table(lconn)
    path = dirs["allowed"] / "data.csv"
    expected = [(1, "one"), (2, "two"), (3, "three")]
    if kind == "bytes":
        data = CSV
    elif kind == "bytearray":
        data = bytearray(CSV)
    elif kind == "memoryview":
        data = memoryview(b"xx" + CSV)[2:]
    elif kind == "file":
        data = open(path, "rb")
    elif kind == "generator":
        data = _chunks()
        expected = [(10, "ten"), (11, "eleven"), (12, "twelve")]
    else:
        data = [b"1,one\n", b"2,two\n", b"3,three\n"]
    try:
        # the name in the statement does not matter: the given data is sent
        assert cur.execute(_sql("/no/such/file.csv"), infile=data) == 3
    finally:
        if kind == "file":
            data.close()
    assert _rows(lconn) == expected
    _usable(lconn)


def test_infile_str_is_refused(lconn):
    cur = _table(lconn)
    with pytest.raises(mysqlc.Error):
        cur.execute(_sql("x.csv"), infile="1,one\n")
    _usable(lconn)
    assert _rows(lconn) == []


def test_infile_data_is_for_one_statement_only(lconn, dirs):
    cur = _table(lconn)
    cur.execute("SELECT 1", infile=b"9,nine\n")        # no file request: data unused
    with pytest.raises(mysqlc.OperationalError) as ei:
        cur.execute(_sql(dirs["secret"] / "secret.csv"))
    assert ei.value.args[0] == REFUSED
    assert _rows(lconn) == []


def test_error_while_reading_the_data_stops_the_transfer(lconn):
    cur = _table(lconn)

    def failing():
        yield b"1,one\n"
        raise ValueError("disk on fire")

    with pytest.raises(ValueError, match="disk on fire"):
        cur.execute(_sql("x.csv"), infile=failing())
    _usable(lconn)
    assert _rows(lconn) in ([], [(1, "one")])           # what was sent before the error


def test_load_into_missing_table_after_transfer(lconn, dirs):
    with pytest.raises(mysqlc.ProgrammingError) as ei:
        lconn.cursor().execute(_sql(dirs["allowed"] / "data.csv").replace(
            "INTO TABLE li", "INTO TABLE no_such_table_li"))
    assert ei.value.args[0] == 1146
    _usable(lconn)


# =========================================================================== small max_allowed_packet

# issue 20: a LOCAL INFILE data packet must be smaller than what the server's read buffer
# may grow to (max_allowed_packet; in the compressed protocol the 4-byte packet header
# counts too), else the server answers 1153 and closes the connection.  The session value
# is read-only: the tests set the global one (a fixture always restores it) and connect
# again.  1024 is MariaDB's minimum.
BIG_ROWS = 150000          # about 3.3 MB of "id,text\n" lines
LIMITS = [1024, 1 << 20]


def _big_csv(rows=BIG_ROWS):
    return b"".join(b"%d,row number %d\n" % (i, i) for i in range(1, rows + 1))


@pytest.fixture
def global_packet(root_conn_kwargs):
    """set(n): SET GLOBAL max_allowed_packet = n for the connections opened after it;
    the value found before the test is put back afterwards, whatever happens."""
    root = mysqlc.connect(**root_conn_kwargs)
    cur = root.cursor()
    cur.execute("SELECT @@global.max_allowed_packet")
    before = cur.fetchone()[0]

    def set_limit(n):
        cur.execute("SET GLOBAL max_allowed_packet = %d" % n)

    try:
        yield set_limit
    finally:
        try:
            cur.execute("SET GLOBAL max_allowed_packet = %d" % before)
        finally:
            root.close()


def _small_conn(conn_kwargs, limit, **kw):
    c = mysqlc.connect(local_infile=True, **dict(conn_kwargs, **kw))
    cur = c.cursor()
    cur.execute("SELECT @@max_allowed_packet")
    assert cur.fetchone()[0] == limit           # the session got the global value
    return c


def _check_big(conn, rows=BIG_ROWS):
    cur = conn.cursor()
    cur.execute("SELECT COUNT(*), SUM(id), SUM(LENGTH(s)) FROM li")
    expect_len = sum(len(b"row number %d" % i) for i in range(1, rows + 1))
    assert tuple(int(v) for v in cur.fetchone()) == (rows, rows * (rows + 1) // 2, expect_len)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compress"])
@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("how", ["infile_bytes", "infile_file", "named_file"])
def test_3mb_file_under_a_small_max_allowed_packet(conn_kwargs, global_packet, tmp_path,
                                                   limit, compress, how):
    data = _big_csv()
    assert len(data) > 3 * limit and len(data) > 3 << 20
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    global_packet(limit)
    c = _small_conn(conn_kwargs, limit, compress=compress, local_infile_dir=str(tmp_path))
    try:
        cur = _table(c)
        cur.execute("SHOW SESSION STATUS LIKE 'Compression'")
        assert cur.fetchone()[1] == ("ON" if compress else "OFF")
        if how == "infile_bytes":
            n = cur.execute(_sql("x.csv"), infile=data)
        elif how == "infile_file":
            with open(path, "rb") as f:
                n = cur.execute(_sql("x.csv"), infile=f)
        else:
            n = cur.execute(_sql(path))
        assert n == BIG_ROWS
        _check_big(c)
        _usable(c)
    finally:
        c.close()


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compress"])
def test_limit_is_read_before_the_first_statement_that_may_load(conn_kwargs, global_packet,
                                                                compress):
    """The core learns the session's limit with one SELECT, once per connection, and only
    before a statement that mentions LOCAL: a connection whose first statement is the
    LOAD DATA still sends the file in packets the server takes."""
    global_packet(1024)
    c = mysqlc.connect(local_infile=True, compress=compress, **conn_kwargs)
    try:
        assert c._conn.max_allowed_packet == 0          # not read at connect
        cur = c.cursor()
        cur.execute("SELECT 1")                          # no LOCAL: not read either
        assert c._conn.max_allowed_packet == 0
        cur.execute("CREATE TEMPORARY TABLE li (id INT, s VARCHAR(200))")
        assert c._conn.max_allowed_packet == 0
        assert cur.execute(_sql("x.csv"), infile=_big_csv(20000)) == 20000
        assert c._conn.max_allowed_packet == 1024
        _check_big(c, 20000)
    finally:
        c.close()


def test_no_limit_read_without_local_infile(conn_kwargs, global_packet):
    global_packet(1024)
    c = mysqlc.connect(**conn_kwargs)                    # local_infile off
    try:
        cur = c.cursor()
        cur.execute("CREATE TEMPORARY TABLE li (id INT, s VARCHAR(200))")
        with pytest.raises(mysqlc.OperationalError):
            cur.execute(_sql("x.csv"))
        assert c._conn.max_allowed_packet == 0           # nothing read for it
        _usable(c)
    finally:
        c.close()


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compress"])
@pytest.mark.parametrize("size", [17000, 3 << 20], ids=["one_packet", "3mb"])
def test_server_refusing_a_packet_mid_stream_closes_cleanly(conn_kwargs, global_packet,
                                                            compress, size):
    """A server that refuses a data packet (here: the core is told a larger limit than
    the server's, as a client that guessed wrong) answers 1153 and closes: the error says
    so (the server's 1153, or 2006/2013 naming the packet size when the connection broke
    first), and the connection is closed, not left out of step."""
    global_packet(1024)
    c = _small_conn(conn_kwargs, 1024, compress=compress)
    try:
        cur = _table(c)
        c._conn.max_allowed_packet = 64 << 20            # wrong on purpose: 1 MiB packets
        with pytest.raises(mysqlc.OperationalError) as ei:
            cur.execute(_sql("x.csv"), infile=_big_csv()[:size])
        errno, msg = ei.value.args
        if errno == 1153:
            assert "max_allowed_packet" in msg
        else:
            assert errno in (2006, 2013), ei.value
            assert "during LOAD DATA LOCAL INFILE" in msg and "packets of 1048576 bytes" in msg
        with pytest.raises(mysqlc.OperationalError) as again:
            c.cursor().execute("SELECT 1")
        assert again.value.args[0] == 2006
    finally:
        c.close()
    fresh = _small_conn(conn_kwargs, 1024, compress=compress)
    try:
        _usable(fresh)
    finally:
        fresh.close()


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compress"])
def test_largest_data_packet_the_server_takes(conn_kwargs, global_packet, compress):
    """The margin measured: at max_allowed_packet = 1 MiB the server takes a data packet of
    max - 1 bytes without compression and max - 5 with it (the frame holds the packet
    header); mysqlc sends max - 5 in both.  One chunk of exactly that size goes through
    (and, told a limit of 1 MiB + 1 ... + 5, the core keeps below the real one)."""
    limit = 1 << 20
    global_packet(limit)
    line = b"x" * 99 + b"\n"
    for told in (None, limit + 4):
        c = _small_conn(conn_kwargs, limit, compress=compress)
        try:
            cur = c.cursor()
            cur.execute("CREATE TEMPORARY TABLE lp (s VARCHAR(200))")
            if told is not None:
                c._conn.max_allowed_packet = told        # packets of told - 5 = limit - 1
            data = line * ((limit - 5) // len(line)) + b"y" * ((limit - 5) % len(line))
            assert len(data) == limit - 5
            if told is not None and compress:
                # limit - 1 bytes: over what the compressed protocol takes
                with pytest.raises(mysqlc.OperationalError):
                    cur.execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE lp",
                                infile=data + b"zzzz")
                continue
            n = cur.execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE lp",
                            infile=data + (b"zzzz" if told else b""))
            assert n == limit // len(line) + 1
        finally:
            c.close()


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """A private server with the test CA's certificate (tests/_certs.py), started with
    max_allowed_packet = 1 MiB: only for the TLS case below."""
    from mysqlc.server import PrivateServer, ServerNotAvailable
    from _certs import CertsUnavailable, make_certs
    in_ci = os.environ.get("CI", "").strip().lower() in ("true", "1")

    def unavailable(reason):
        if in_ci:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)

    if os.environ.get("MYSQLC_TEST_DSN"):
        pytest.skip("MYSQLC_TEST_DSN is set: no private TLS server is started")
    try:
        certs = make_certs(tmp_path_factory.mktemp("infile-certs"))
    except CertsUnavailable as exc:
        unavailable("cannot make test certificates: %s" % exc)
    srv = None
    for attempt in range(2):           # a busy machine may fail a start-up once
        try:
            srv = PrivateServer(extra_args=certs.server_args(),
                                max_allowed_packet="1M").start()
            break
        except ServerNotAvailable as exc:
            last = exc
    if srv is None:
        unavailable("no private server with TLS: %s" % last)
    try:
        yield srv, certs
    finally:
        srv.stop()


@pytest.mark.allow_skip       # skips only when MYSQLC_TEST_DSN names an external server
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compress"])
def test_3mb_file_over_tls_under_a_1mib_max_allowed_packet(tls_server, compress):
    srv, certs = tls_server
    c = mysqlc.connect(local_infile=True, compress=compress, ssl_mode="VERIFY_IDENTITY",
                       ssl_ca=certs.ca_cert, **srv.connect_kwargs())
    try:
        cur = _table(c)
        cur.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
        assert cur.fetchone()[1].startswith("TLS")
        cur.execute("SELECT @@max_allowed_packet")
        assert cur.fetchone()[0] == 1 << 20
        assert cur.execute(_sql("x.csv"), infile=_big_csv()) == BIG_ROWS
        _check_big(c)
        _usable(c)
    finally:
        c.close()


# =========================================================================== errors, warnings

def _server_is_mariadb(conn):
    return "mariadb" in conn.get_server_info().lower()


@pytest.mark.parametrize("side", ["client", "server"])
def test_local_infile_disabled_error_number(conn_kwargs, root_conn_kwargs, side):
    """The number is the server's own (mysqlc does not offer CLIENT_LOCAL_FILES without
    local_infile=True, as libmariadb and PyMySQL/aiomysql do not): MariaDB 10.5+ answers
    4166 ER_LOAD_INFILE_CAPABILITY_DISABLED whichever side disabled it; MySQL answers
    1148 (client) or 3948 (server).  OperationalError, as in mysqlclient and PyMySQL
    (their default class for a server error number they do not list)."""
    root = mysqlc.connect(**root_conn_kwargs)
    rcur = root.cursor()
    rcur.execute("SELECT @@global.local_infile")
    before = rcur.fetchone()[0]
    try:
        if side == "server":
            rcur.execute("SET GLOBAL local_infile = 0")
        c = mysqlc.connect(local_infile=(side == "server"), **conn_kwargs)
        try:
            cur = _table(c)
            with pytest.raises(mysqlc.OperationalError) as ei:
                cur.execute(_sql("/etc/hostname"))
            if _server_is_mariadb(c):
                assert ei.value.args[0] == 4166, ei.value
            else:
                assert ei.value.args[0] == (1148 if side == "client" else 3948), ei.value
            _usable(c)
            assert _rows(c) == []
        finally:
            c.close()
    finally:
        rcur.execute("SET GLOBAL local_infile = %d" % int(before))
        root.close()


def test_load_warnings_are_counted_as_mysqlclient(lconn):
    """After LOAD DATA the OK packet's warning count is the cursor's ``warning_count`` and
    ``conn.warning_count()`` (mysqlclient: mysql_warning_count()), equal to the rows of
    SHOW WARNINGS; ``info()`` is the server's "Records: ... Warnings: n" line."""
    cur = lconn.cursor()
    cur.execute("SET SESSION sql_mode = ''")
    cur.execute("CREATE TEMPORARY TABLE lw (id INT, s VARCHAR(3))")
    data = b"1\tabcdef\nx\ty\n3\n4\tok\n"
    assert cur.execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE lw", infile=data) == 4
    assert cur.warning_count == 3
    assert lconn.warning_count() == 3
    assert lconn.info() == "Records: 4  Deleted: 0  Skipped: 0  Warnings: 3"
    cur.execute("SHOW WARNINGS")
    assert [w[1] for w in cur.fetchall()] == [1265, 1366, 1261]
    assert cur.execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE lw", infile=b"5\tok\n") == 1
    assert cur.warning_count == 0 and lconn.warning_count() == 0


# =========================================================================== 50 MB streams

_MEASURE = r'''
import json, sys
import mysqlc

spec = json.loads(sys.argv[1])
if spec["api"] == "aio":          # the same measurement through mysqlc.aio
    sys.path.insert(0, spec["tests"])
    import _apis
    mysqlc.connect = _apis.connect

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False

conn = mysqlc.connect(local_infile=True, local_infile_dir=spec["dir"], **spec["kwargs"])
cur = conn.cursor()
cur.execute("CREATE TEMPORARY TABLE big (id INT, s VARCHAR(200))")
cur.execute("LOAD DATA LOCAL INFILE 'tiny.csv' INTO TABLE big FIELDS TERMINATED BY ','")
sql = ("LOAD DATA LOCAL INFILE %s INTO TABLE big FIELDS TERMINATED BY ','")
out = {}
for how in ("path", "file"):
    cur.execute("TRUNCATE TABLE big")
    reset = reset_peak()
    before = status("VmRSS")
    if how == "path":
        n = cur.execute(sql % ("'%s'" % spec["file"]))
    else:
        with open(spec["file"], "rb") as f:
            n = cur.execute(sql % "'whatever'", infile=f)
    peak = status("VmHWM")
    cur.execute("SELECT COUNT(*), SUM(id), SUM(LENGTH(s)) FROM big")
    out[how] = {"rows": n, "check": [int(x) for x in cur.fetchone()], "reset": reset,
                "growth_mb": (peak - before) / 1048576.0}
print(json.dumps(out))
'''


def test_50mb_file_streams_without_reading_it_whole(conn_kwargs, tmp_path, api):
    allowed = tmp_path / "big"
    allowed.mkdir()
    (allowed / "tiny.csv").write_bytes(b"0,warm-up\n")
    path = allowed / "50mb.csv"
    line_payload = "p" * 90
    nrows = 0
    total_len = 0
    with open(path, "wb") as f:
        block = []
        while f.tell() < 50 * 1000 * 1000:
            block = "".join("%d,%s\n" % (nrows + k + 1, line_payload) for k in range(10000))
            f.write(block.encode())
            nrows += 10000
            total_len += 10000 * len(line_payload)
    size = path.stat().st_size
    assert size >= 50 * 1000 * 1000
    spec = subprocess_spec({"kwargs": conn_kwargs, "dir": str(allowed), "file": str(path)},
                           api)
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", _MEASURE, json.dumps(spec)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    for how in ("path", "file"):
        r = res[how]
        print("\n[local infile, %s] %s: %.1f MB file, %d rows: peak RSS %+.2f MB over the level "
              "before the statement (HWM reset: %s)" % (api, how, size / 1e6, r["rows"],
                                                         r["growth_mb"], r["reset"]))
        assert r["rows"] == nrows
        assert r["check"] == [nrows, nrows * (nrows + 1) // 2, total_len]
        assert r["growth_mb"] < 20.0, r                # a 50 MB file is never held whole


# =========================================================================== scripted peer

COM_QUIT = 0x01
COM_QUERY = 0x03
PEER_CAPS = (0x00000001 | 0x00000004 | 0x00000008 | CLIENT.LOCAL_FILES | 0x00000200
             | 0x00002000 | 0x00008000 | 0x00010000 | 0x00020000 | 0x00080000)


def _lenenc(n):
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3]
    return b"\xfe" + struct.pack("<Q", n)


def _ok(affected=0):
    return b"\x00" + _lenenc(affected) + _lenenc(0) + struct.pack("<HH", 0, 0)


def _err(errno, message):
    return b"\xff" + struct.pack("<H", errno) + b"#HY000" + message


class InfilePeer:
    """A MySQL server that answers every COM_QUERY with OK, except a query containing
    ``LOAD DATA`` (or ``trigger``), which it answers with a LOCAL INFILE request for
    ``filename``.  Every byte the client sends is kept in ``received``; ``mark`` is the
    offset at which the request was sent, ``transfer`` the packets the client sent for
    it (up to and including the empty one).  After the transfer it answers ``answer``
    ("err", "ok": a lying server that claims success)."""

    def __init__(self, filename, answer="err", trigger=b"LOAD DATA"):
        self.filename = filename
        self.answer = answer
        self.trigger = trigger
        self.received = bytearray()
        self.mark = None
        self.transfer = None
        self.handshake_caps = None
        self.queries = []
        self.error = None
        self._buf = bytearray()
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(1)
        self.lsock.settimeout(20)
        self.port = self.lsock.getsockname()[1]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    # ---- I/O
    def _read(self, n):
        while len(self._buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError
            self.received += chunk
            self._buf += chunk
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    def _recv(self):
        hdr = self._read(4)
        n = int.from_bytes(hdr[:3], "little")
        return hdr[3], self._read(n)

    def _send(self, seq, payload):
        self.sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload)

    # ---- the script
    def _run(self):
        try:
            self.sock, _ = self.lsock.accept()
            self.sock.settimeout(20)
            nonce = b"0123456789abcdefghij"
            caps = PEER_CAPS
            self._send(0, b"\x0a" + b"5.5.5-10.11.99-MariaDB-infile-peer\x00"
                       + struct.pack("<I", 77) + nonce[:8] + b"\x00"
                       + struct.pack("<H", caps & 0xFFFF) + bytes([45])
                       + struct.pack("<H", 0) + struct.pack("<H", caps >> 16)
                       + bytes([21]) + b"\x00" * 10 + nonce[8:] + b"\x00"
                       + b"mysql_native_password\x00")
            seq, resp = self._recv()
            self.handshake_caps = struct.unpack_from("<I", resp, 0)[0]
            self._send(seq + 1, _ok())
            while True:
                try:
                    seq, p = self._recv()
                except EOFError:
                    return
                if not p or p[0] == COM_QUIT:
                    return
                assert p[0] == COM_QUERY, p[:16]
                self.queries.append(p[1:])
                if self.trigger not in p[1:] or self.mark is not None:
                    self._send(seq + 1, _ok())
                    continue
                self._send(seq + 1, b"\xfb" + self.filename)
                self.mark = len(self.received)
                packets = []
                while True:
                    s, data = self._recv()
                    packets.append((s, data))
                    if not data:
                        break
                self.transfer = packets
                nxt = packets[-1][0] + 1
                if self.answer == "ok":
                    self._send(nxt, _ok(affected=sum(d.count(b"\n") for _, d in packets)))
                else:
                    self._send(nxt, _err(1148, b"The used command is not allowed"))
        except BaseException as exc:       # reported by check()
            self.error = exc
        finally:
            try:
                self.sock.close()
            except Exception:
                pass
            self.lsock.close()

    def connect(self, **kw):
        return mysqlc.connect(host="127.0.0.1", port=self.port, user="u", password="p",
                              connect_timeout=10, read_timeout=10, **kw)

    def check(self):
        self.thread.join(20)
        assert not self.thread.is_alive(), "peer thread did not finish"
        if self.error is not None:
            raise self.error
        return self


SECRET = b"666,SECRET-MARKER-a1b2c3\n"


def _assert_nothing_sent(peer):
    """After the request the client sent exactly one empty packet (sequence id 2) and
    then only its next command(s); no byte of the file anywhere in the stream."""
    assert peer.mark is not None, "the client never got the LOCAL INFILE request"
    assert peer.transfer == [(2, b"")]
    after = bytes(peer.received[peer.mark:])
    assert after.startswith(b"\x00\x00\x00\x02")
    assert b"SECRET-MARKER" not in bytes(peer.received)
    assert SECRET not in bytes(peer.received)


def _hostile(filename, answer="err", **connect_kw):
    peer = InfilePeer(os.fsencode(str(filename)), answer=answer)
    c = peer.connect(**connect_kw)
    try:
        with pytest.raises(mysqlc.OperationalError) as ei:
            c.cursor().execute("LOAD DATA LOCAL INFILE 'innocent.csv' INTO TABLE t")
        assert ei.value.args[0] == REFUSED
        # the connection stays in sync and usable
        assert c.cursor().execute("DO 'after'") == 0
        assert c.open
    finally:
        c.close()
    peer.check()
    assert peer.queries[-1] == b"DO 'after'"
    _assert_nothing_sent(peer)
    return peer


@pytest.mark.parametrize("answer", ["err", "ok"])
@pytest.mark.parametrize("which", ["absolute", "dotdot", "dotdot-relative", "symlink-file",
                                   "symlink-dir", "sibling-prefix"])
def test_hostile_server_file_outside_the_allowed_dir(dirs, which, answer):
    allowed, secret = dirs["allowed"], dirs["secret"]
    filename = {
        "absolute": secret / "secret.csv",
        "dotdot": "%s/../secret/secret.csv" % allowed,
        "dotdot-relative": "../secret/secret.csv",
        "symlink-file": allowed / "link.csv",
        "symlink-dir": "linkdir/secret.csv",
        "sibling-prefix": dirs["evil"] / "evil.csv",
    }[which]
    peer = _hostile(filename, answer=answer, local_infile=True,
                    local_infile_dir=str(allowed))
    assert peer.handshake_caps & CLIENT.LOCAL_FILES


@pytest.mark.parametrize("answer", ["err", "ok"])
@pytest.mark.parametrize("which", ["inside-allowed", "outside", "etc-passwd"])
def test_hostile_server_when_local_infile_is_off(dirs, which, answer):
    filename = {"inside-allowed": dirs["allowed"] / "data.csv",
                "outside": dirs["secret"] / "secret.csv",
                "etc-passwd": "/etc/passwd"}[which]
    peer = _hostile(filename, answer=answer)            # local_infile defaults to False
    assert not peer.handshake_caps & CLIENT.LOCAL_FILES
    assert b"root:" not in bytes(peer.received)
    # also with a directory given but the switch off
    peer = _hostile(filename, answer=answer, local_infile=False,
                    local_infile_dir=str(dirs["allowed"]))
    assert not peer.handshake_caps & CLIENT.LOCAL_FILES


def test_hostile_server_local_infile_on_without_dir(dirs):
    _hostile(dirs["allowed"] / "data.csv", local_infile=True)


def test_peer_control_allowed_file_is_sent(dirs):
    """The positive control for the peer: a file inside the allowed directory is sent,
    so the recording above would have seen a refused file's bytes."""
    peer = InfilePeer(os.fsencode(str(dirs["allowed"] / "data.csv")), answer="ok")
    c = peer.connect(local_infile=True, local_infile_dir=str(dirs["allowed"]))
    try:
        assert c.cursor().execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE t") == 3
    finally:
        c.close()
    peer.check()
    assert b"".join(d for _, d in peer.transfer) == CSV
    assert peer.transfer[-1] == (len(peer.transfer) + 1, b"")
    assert [s for s, _ in peer.transfer] == list(range(2, 2 + len(peer.transfer)))


def test_hostile_server_gets_the_given_data_not_the_file(dirs):
    """With execute(..., infile=data) the client answers any request with that data and
    never opens the file the server names."""
    peer = InfilePeer(os.fsencode(str(dirs["secret"] / "secret.csv")), answer="ok")
    c = peer.connect(local_infile=True, local_infile_dir=str(dirs["allowed"]))
    try:
        assert c.cursor().execute("LOAD DATA LOCAL INFILE 'x' INTO TABLE t",
                                  infile=b"1,given\n") == 1
    finally:
        c.close()
    peer.check()
    assert b"".join(d for _, d in peer.transfer) == b"1,given\n"
    assert b"SECRET-MARKER" not in bytes(peer.received)


def test_hostile_server_request_for_a_non_load_statement(dirs):
    """A request in answer to a plain SELECT (the client asked for no file at all)."""
    peer = InfilePeer(os.fsencode(str(dirs["secret"] / "secret.csv")), trigger=b"SELECT")
    c = peer.connect(local_infile=True, local_infile_dir=str(dirs["allowed"]))
    try:
        with pytest.raises(mysqlc.OperationalError) as ei:
            c.cursor().execute("SELECT 1")
        assert ei.value.args[0] == REFUSED
        assert c.cursor().execute("DO 'after'") == 0
    finally:
        c.close()
    peer.check()
    _assert_nothing_sent(peer)


# ------------------------------------------ the statement's own file name (no local_infile_dir)

def _hostile_stmt(filename, sql, answer="err", **connect_kw):
    """A peer that asks for `filename` in answer to `sql`: refused, nothing sent."""
    peer = InfilePeer(os.fsencode(str(filename)), answer=answer)
    c = peer.connect(local_infile=True, **connect_kw)
    try:
        with pytest.raises(mysqlc.OperationalError) as ei:
            c.cursor().execute(sql)
        assert ei.value.args[0] == REFUSED
        assert c.cursor().execute("DO 'after'") == 0
    finally:
        c.close()
    peer.check()
    _assert_nothing_sent(peer)
    return peer


@pytest.mark.parametrize("answer", ["err", "ok"])
@pytest.mark.parametrize("case", ["other-file", "prefix", "suffix", "dot-slash", "case",
                                  "in-a-select", "in-a-comment", "in-an-identifier",
                                  "not-local", "hex-literal", "unterminated", "variable"])
def test_hostile_server_asks_for_a_file_the_statement_does_not_name(dirs, case, answer):
    secret = str(dirs["secret"] / "secret.csv")
    innocent = str(dirs["allowed"] / "data.csv")
    load = "LOAD DATA LOCAL INFILE '%s' INTO TABLE t"
    sql = {
        "other-file": load % innocent,
        "prefix": load % (secret + ".bak"),
        "suffix": load % secret[:-1],
        "dot-slash": load % ("/." + secret),
        "case": load % secret.upper(),
        "in-a-select": "SELECT '%s'; " % secret + load % innocent,
        "in-a-comment": ("/* %s */ -- %s\n# %s\n" % (load % secret, load % secret,
                                                     load % secret) + load % innocent),
        "in-an-identifier": "LOAD DATA LOCAL INFILE `%s` INTO TABLE t" % secret,
        "not-local": "LOAD DATA INFILE '%s' INTO TABLE t" % secret,
        "hex-literal": ("LOAD DATA LOCAL INFILE x'%s' INTO TABLE t"
                        % secret.encode().hex()),
        "unterminated": "LOAD DATA LOCAL INFILE '%s" % secret,
        "variable": "SET @f = '%s'; LOAD DATA LOCAL INFILE @f INTO TABLE t" % secret,
    }[case]
    _hostile_stmt(secret, sql, answer=answer)


def test_hostile_server_gets_the_named_file_only(dirs):
    """Positive control: the file the statement names is sent when the server asks
    for it (so the refusals above are not a peer that never gets data)."""
    path = str(dirs["secret"] / "secret.csv")
    peer = InfilePeer(os.fsencode(path), answer="ok")
    c = peer.connect(local_infile=True)
    try:
        assert c.cursor().execute("LOAD DATA LOCAL INFILE %s INTO TABLE t", (path,)) == 1
    finally:
        c.close()
    peer.check()
    assert b"".join(d for _, d in peer.transfer) == SECRET


@pytest.mark.parametrize("sql, names", [
    ("LOAD DATA LOCAL INFILE 'a.csv' INTO TABLE t", [b"a.csv"]),
    ('load data low_priority local infile "a" into table t', [b"a"]),
    ("LOAD XML CONCURRENT LOCAL INFILE 'a.xml' INTO TABLE t", [b"a.xml"]),
    ("LOAD DATA LOCAL INFILE 'it''s' INTO TABLE t", [b"it's"]),
    (r"LOAD DATA LOCAL INFILE 'a\'b\\c\n\%\x' INTO TABLE t", [b"a'b\\c\n\\%x"]),
    ("LOAD DATA LOCAL INFILE _utf8mb4'x' INTO TABLE t", []),    # syntax errors
    ("LOAD DATA LOCAL INFILE 'x' 'y' INTO TABLE t", []),
    ("LOAD DATA LOCAL INFILE N'x' INTO TABLE t", []),
    ("/*!40000 LOAD DATA LOCAL INFILE 'a' INTO TABLE t */", [b"a"]),
    ("LOAD DATA /*!50000 LOCAL */ INFILE 'a' INTO TABLE t", [b"a"]),
    ("LOAD DATA /*M!100000 LOCAL */ INFILE 'a' INTO TABLE t", [b"a"]),
    ("SELECT 1; LOAD DATA LOCAL INFILE 'a' INTO TABLE t;LOAD DATA LOCAL INFILE 'b' INTO "
     "TABLE t", [b"a", b"b"]),
    ("SELECT 'LOAD DATA LOCAL INFILE ''a'''", []),
    ("SELECT `LOAD DATA LOCAL INFILE 'a'`", []),
    ("SELECT \"x\\\"; LOAD DATA LOCAL INFILE 'a' INTO TABLE t\"", []),
    ("-- LOAD DATA LOCAL INFILE 'a'\nSELECT 1", []),
    ("# LOAD DATA LOCAL INFILE 'a'\nSELECT 1", []),
    ("LOAD DATA LOCAL INFILE @v INTO TABLE t", []),
    ("LOAD DATA LOCAL INFILE 'a", []),
    ("LOAD DATA LOCAL INFILE 'a' /* unterminated", []),
    ("LOAD DATA INFILE 'a' INTO TABLE t", []),
    ("LOAD DATA LOCAL INFILE x'61' INTO TABLE t", []),
])
@pytest.mark.sync_only("no connection: the client-side scan of the SQL")
def test_local_infile_names(sql, names):
    assert local_infile_names(sql) == names


@pytest.mark.sync_only("no connection: the client-side scan of the SQL")
def test_local_infile_names_modes_and_charsets():
    sql = r"LOAD DATA LOCAL INFILE 'a\b' INTO TABLE t"
    assert local_infile_names(sql) == [b"a\b"]
    assert local_infile_names(sql, no_backslash_escapes=True) == [b"a\\b"]
    # a multibyte charset whose trail bytes can be 0x5C: non-ASCII names are refused
    sjis = "LOAD DATA LOCAL INFILE '\u8868.csv' INTO TABLE t".encode("sjis")
    assert sjis.count(b"\\") == 1                        # U+8868 is 0x95 0x5C in Shift-JIS
    assert local_infile_names(sjis, charset="sjis") == []
    assert local_infile_names(sjis, charset="latin1") == [b"\x95.csv"]   # as latin1 reads it
    assert local_infile_names(b"LOAD DATA LOCAL INFILE 'a.csv'", charset="gbk") == [b"a.csv"]
    assert local_infile_names("LOAD DATA LOCAL INFILE 'caf\u00e9'") == ["caf\u00e9".encode()]


@pytest.mark.parametrize("where", ["middle", "last"])
def test_unexpected_request_while_pipelined_commands_are_queued(dirs, where):
    """A server that asks for a LOCAL INFILE file for a statement inside a pipeline block
    (the statement is no LOAD DATA LOCAL: those are refused before anything is sent; a
    well-behaved server never asks then) closes the connection with a clear error, even
    for a file the connection may send: commands already sent behind the statement would
    be read as the file's data.  No byte of the file is sent; the statements behind it
    report that they may or may not have run; nothing is reported as done."""
    allowed = dirs["allowed"]
    peer = InfilePeer(os.fsencode(str(allowed / "data.csv")), answer="ok",
                      trigger=b"'asks for a file'")
    c = peer.connect(local_infile=True, local_infile_dir=str(allowed))
    try:
        first, asking = c.cursor(), c.cursor()
        behind = [] if where == "last" else [c.cursor() for _ in range(2)]
        with pytest.raises(mysqlc.OperationalError) as ei:
            with c.pipeline():
                first.execute("DO 1")
                asking.execute("SELECT 'asks for a file'")
                for cur in behind:
                    cur.execute("DO 2")
        assert ei.value.args[0] == 2013
        assert "LOAD DATA LOCAL INFILE" in ei.value.args[1] and "pipelined" in ei.value.args[1]
        assert not c.open
        assert first.rowcount == 0   # its OK was read before the request came
        with pytest.raises(mysqlc.OperationalError):
            asking.fetchall()
        for cur in behind:
            with pytest.raises(mysqlc.OperationalError, match="may or may not have run"):
                cur.fetchall()
    finally:
        c.close()
    peer.thread.join(20)
    assert not peer.thread.is_alive(), "peer thread did not finish"
    assert peer.mark is not None, "the client never got the LOCAL INFILE request"
    # the stream ends with the last command queued before the request: no packet of
    # the transfer (not even the empty one that ends it), no COM_QUIT on a closed stream
    last = b"\x03DO 2" if behind else b"\x03SELECT 'asks for a file'"
    assert bytes(peer.received).endswith(last)
    assert CSV not in bytes(peer.received)
