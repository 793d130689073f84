"""Option files: ``connect(read_default_file=..., read_default_group=...)`` (issue 12).

The parser (``mysqlc._optionfile``) is tested on its own, then against the server:
mysqlc and the real mysqlclient (``MySQLdb``, on MariaDB Connector/C) read the same
file and must end up with the same session (user, database, character set, transport).
"""

import os
import subprocess
import sys
import textwrap

import pytest

import mysqlc
from mysqlc import _optionfile
from mysqlc._optionfile import connect_options, parse, read_options

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return str(path)


# ------------------------------------------------------------------- the parser

def test_groups_client_and_the_named_group(tmp_path):
    f = write(tmp_path / "my.cnf", """\
        user = before-any-group
        [client]
        user = u1
        host = h1
        [mysqld]
        user = mysql
        [Client-Server]
        port = 3307
        [client-mariadb]
        database = d0
        [app]
        database = d1
        [other]
        password = nope
        [client]
        host = h2
        """)
    assert read_options(f) == {"user": "u1", "host": "h2", "port": "3307", "database": "d0"}
    # the named group is read too, after the client groups in file order: the last wins
    assert read_options(f, "app") == {"user": "u1", "host": "h2", "port": "3307",
                                      "database": "d1"}
    assert read_options(f, "APP")["database"] == "d1"      # group names: any case


def test_values_quotes_escapes_and_comments(tmp_path):
    f = write(tmp_path / "my.cnf", r"""
        # a comment
        ; another comment
        [client]
        password = "p#ss w'rd"   # the # inside quotes is part of the value
        user='it\'s'
        host = plain # a trailing comment
        init-command = SET @a = 'x\ty\nz\\w\sq\bv\q'
        socket="/path with spaces/s.sock"
        ssl-ca =   '  spaced  '
        database=
        compress
        local_infile
          default_character_set = latin1
        """)
    opts = read_options(f)
    assert opts["password"] == "p#ss w'rd"
    assert opts["user"] == "it's"
    assert opts["host"] == "plain"
    assert opts["init-command"] == "SET @a = 'x\ty\nz\\w q\bv\\q'"   # unknown \q stays
    assert opts["socket"] == "/path with spaces/s.sock"
    assert opts["ssl-ca"] == "  spaced  "
    assert opts["database"] == ""
    assert opts["compress"] is None and opts["local-infile"] is None   # no value
    assert opts["default-character-set"] == "latin1"                  # _ is -


def test_loose_prefix_and_dashes(tmp_path):
    f = write(tmp_path / "my.cnf", """\
        [client]
        loose-default-character-set = latin1
        loose_connect_timeout = 7
        Init_Command = DO 1
        """)
    assert read_options(f) == {"default-character-set": "latin1", "connect-timeout": "7",
                               "init-command": "DO 1"}


def test_include_and_includedir(tmp_path):
    conf = tmp_path / "conf.d"
    conf.mkdir()
    write(conf / "20-b.cnf", "[client]\nuser = from-b\n")
    write(conf / "10-a.cnf", "[client]\nuser = from-a\nhost = a-host\n")
    write(conf / "30-c.txt", "[client]\nuser = not-a-cnf-file\n")
    write(tmp_path / "extra.cnf", "[app]\ndatabase = from-extra\n")
    f = write(tmp_path / "my.cnf", """\
        [client]
        port = 1
        !includedir conf.d
        !include extra.cnf
        !include /no/such/file.cnf
        !includedir /no/such/dir
        [app]
        port = 2
        """)
    # relative to the including file's directory; *.cnf in name order; missing: ignored
    assert read_options(f, "app") == {"port": "2", "user": "from-b", "host": "a-host",
                                      "database": "from-extra"}


def test_include_loop_is_an_error(tmp_path):
    f = write(tmp_path / "loop.cnf", "[client]\n!include loop.cnf\n")
    with pytest.raises(mysqlc.ProgrammingError, match="nested"):
        read_options(f)


def test_missing_or_unreadable_file_is_ignored(tmp_path):
    assert read_options(str(tmp_path / "nope.cnf")) == {}
    assert read_options(str(tmp_path)) == {}                  # a directory
    assert connect_options(str(tmp_path / "nope.cnf"), "app") == {}


def test_group_alone_reads_the_default_files(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    mhome = tmp_path / "mhome"
    mhome.mkdir()
    write(home / ".my.cnf", "[client]\nuser = home-user\n[app]\ndatabase = home-db\n")
    write(mhome / "my.cnf", "[client]\nuser = mhome-user\nhost = mhome-host\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MARIADB_HOME", str(mhome))
    files = _optionfile.default_files()
    assert files[:2] == ["/etc/my.cnf", "/etc/mysql/my.cnf"]
    assert files[2:] == [str(mhome / "my.cnf"), str(home / ".my.cnf")]
    opts = read_options(None, "app")
    assert opts["user"] == "home-user"           # ~/.my.cnf is read last and wins
    assert opts["host"] == "mhome-host"
    assert opts["database"] == "home-db"
    # a file given: that file alone, not the default files
    f = write(tmp_path / "only.cnf", "[client]\nport = 9\n")
    assert read_options(f, "app") == {"port": "9"}


def test_connect_options_mapping(tmp_path):
    f = write(tmp_path / "my.cnf", """\
        [client]
        host = db.example
        port = 3307
        user = app
        password = "s3cret"
        database = appdb
        socket = /tmp/x.sock
        default-character-set = latin1
        connect-timeout = 5
        init-command = SET @x = 1
        compress
        local-infile = 1
        ssl-ca = /ca.pem
        ssl-cert = /c.pem
        ssl-key = /k.pem
        ssl-cipher = ECDHE-RSA-AES128-GCM-SHA256
        ssl-verify-server-cert
        tls-version = TLSv1.3
        protocol = TCP
        max-allowed-packet = 1G
        unknown-option = ignored
        """)
    assert connect_options(f) == {
        "host": "db.example", "port": 3307, "user": "app", "password": "s3cret",
        "database": "appdb", "unix_socket": "/tmp/x.sock", "charset": "latin1",
        "connect_timeout": 5, "init_command": "SET @x = 1", "compress": True,
        "local_infile": True, "ssl_ca": "/ca.pem", "ssl_cert": "/c.pem",
        "ssl_key": "/k.pem", "ssl_cipher": "ECDHE-RSA-AES128-GCM-SHA256",
        "ssl_verify_identity": True, "tls_version": "TLSv1.3", "protocol": "tcp"}
    f = write(tmp_path / "off.cnf", "[client]\nlocal-infile = 0\npassword\n"
                                    "[app]\ndisable-local-infile\ncompress = OFF\n")
    assert connect_options(f) == {"local_infile": False}   # "password" alone: no value
    assert connect_options(f, "app") == {"local_infile": False, "compress": False}


@pytest.mark.parametrize("line, match", [
    ("port = abc", "not a number"), ("protocol = pipe", "protocol"),
    ("compress = maybe", "not a boolean"), ("connect-timeout = soon", "not a number"),
])
def test_connect_options_bad_values(tmp_path, line, match):
    f = write(tmp_path / "bad.cnf", "[client]\n%s\n" % line)
    with pytest.raises(mysqlc.ProgrammingError, match=match):
        connect_options(f)
    with pytest.raises(mysqlc.ProgrammingError, match=match):
        mysqlc.connect(read_default_file=f)


def test_parse_text_directly():
    assert parse("[a]\nx=1\n[b]\ny = 2\n[A]\nz\n", ["a"]) == [("x", "1"), ("z", None)]


# ------------------------------------------------------------------- against the server

def _same_session(conn):
    cur = conn.cursor()
    cur.execute("SELECT CURRENT_USER(), DATABASE(), @@character_set_client, @probe, @probe2")
    row = tuple(cur.fetchone())
    cur.close()
    return row + (conn.get_host_info(), conn.character_set_name())


def _cnf(tmp_path, server, name="my.cnf", extra="", group_extra="", user=None):
    return write(tmp_path / name, """\
        [client]
        host = 127.0.0.1
        port = %d
        user = %s
        password = "%s"
        %s
        [myapp]
        database = %s
        default-character-set = latin1
        init-command = "SET @probe = 'from the file'"
        %s
        """ % (server.port, user or server.user, server.password, extra, server.database,
               group_extra))


def _both(**kw):
    """(mysqlc session, mysqlclient session) for the same connect() arguments."""
    import MySQLdb
    sessions = []
    for connect in (mysqlc.connect, MySQLdb.connect):
        conn = connect(**kw)
        try:
            sessions.append(_same_session(conn))
        finally:
            conn.close()
    return sessions


def test_read_default_file_as_mysqlclient(server, tmp_path):
    f = _cnf(tmp_path, server)
    ours, theirs = _both(read_default_file=f, read_default_group="myapp")
    assert ours == theirs
    assert ours[1:] == (server.database, "latin1", "from the file", None,
                        "127.0.0.1 via TCP/IP", "latin1")
    # the file alone: [client] only
    ours, theirs = _both(read_default_file=f)
    assert ours == theirs
    assert ours[1:3] == (None, "utf8mb4")


def test_explicit_arguments_win_over_the_file(server, tmp_path):
    f = _cnf(tmp_path, server, user="nobody-here",
             extra="database = no_such_db")
    kw = dict(read_default_file=f, read_default_group="myapp", user=server.user,
              charset="utf8mb4", init_command="SET @probe2 = 'explicit'", db=server.database)
    ours, theirs = _both(**kw)
    assert ours == theirs
    # init commands add up (libmysqlclient's list): the given one, then the file's
    assert ours[1:5] == (server.database, "utf8mb4", "from the file", "explicit")
    # a wrong password in the file, the right one given: connects
    f = write(tmp_path / "wrongpw.cnf", "[client]\nhost=127.0.0.1\nport=%d\nuser=%s\n"
              "password=wrong\n" % (server.port, server.user))
    conn = mysqlc.connect(read_default_file=f, passwd=server.password)
    conn.close()


def test_missing_file_is_ignored_as_mysqlclient(server, tmp_path, conn_kwargs):
    ours, theirs = _both(read_default_file=str(tmp_path / "nope.cnf"), **conn_kwargs)
    assert ours == theirs


def test_socket_from_the_file(server, tmp_path):
    if not server.unix_socket:
        pytest.skip("no unix socket known for this server")
    f = write(tmp_path / "sock.cnf", """\
        [client]
        socket = %s
        user = %s
        password = %s
        """ % (server.unix_socket, server.user, server.password))
    ours, theirs = _both(read_default_file=f, host="localhost")
    assert ours == theirs
    assert ours[5] == "Localhost via UNIX socket"


def test_protocol_tcp_in_the_file(server, tmp_path):
    """``protocol=tcp`` makes "localhost" a TCP connection (to 127.0.0.1)."""
    f = write(tmp_path / "tcp.cnf", """\
        [client]
        host = localhost
        protocol = tcp
        port = %d
        socket = /no/such/socket
        user = %s
        password = %s
        """ % (server.port, server.user, server.password))
    conn = mysqlc.connect(read_default_file=f)
    try:
        assert conn.get_host_info() == "127.0.0.1 via TCP/IP"
        assert conn.host == "localhost"
    finally:
        conn.close()


def test_file_options_local_infile_timeout_compress(server, tmp_path):
    data = tmp_path / "rows.csv"
    data.write_bytes(b"1\n2\n")
    f = _cnf(tmp_path, server, extra="local-infile\nconnect-timeout = 3\ncompress")
    conn = mysqlc.connect(read_default_file=f, read_default_group="myapp")
    try:
        assert conn._timeouts[0] == 3.0
        cur = conn.cursor()
        cur.execute("SHOW SESSION STATUS LIKE 'Compression'")
        assert cur.fetchone()[1] == "ON"
        cur.execute("CREATE TEMPORARY TABLE lf (i INT)")
        assert cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE lf", (str(data),)) == 2
    finally:
        conn.close()


def test_read_sql_partitions_reopen_like_the_file(server, tmp_path):
    pytest.importorskip("pyarrow")
    f = _cnf(tmp_path, server)
    conn = mysqlc.connect(read_default_file=f, read_default_group="myapp")
    try:
        table = mysqlc.read_sql(conn, "SELECT seq AS id FROM seq_1_to_8", partition_on="id",
                                partitions=2)
        assert sorted(table.column("id").to_pylist()) == list(range(1, 9))
        assert server.password not in repr(conn._init_args)
    finally:
        conn.close()


def test_install_as_mysqldb_with_read_default_file(server, tmp_path):
    """Code written for mysqlclient: ``MySQLdb.connect(read_default_file=...)``."""
    f = _cnf(tmp_path, server)
    code = textwrap.dedent("""\
        import sys
        import mysqlc
        mysqlc.install_as_MySQLdb()
        import MySQLdb
        conn = MySQLdb.connect(read_default_file=sys.argv[1], read_default_group="myapp")
        cur = conn.cursor()
        cur.execute("SELECT DATABASE(), @probe")
        print(type(conn).__module__, *cur.fetchone())
        """)
    out = subprocess.run([sys.executable, "-c", code, f], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=REPO), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["mysqlc.connections", server.database, "from", "the",
                                  "file"]


def test_group_alone_reads_home_my_cnf_as_mysqlclient(server, tmp_path, monkeypatch):
    """``read_default_group`` without a file: both read the default files, among them
    ``~/.my.cnf`` (HOME points at a directory of this test; the file names TCP to the
    private server, so whatever /etc/mysql/my.cnf says about a socket is not used)."""
    home = tmp_path / "home"
    home.mkdir()
    _cnf(home, server, name=".my.cnf")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("MARIADB_HOME", raising=False)
    monkeypatch.delenv("MYSQL_HOME", raising=False)
    ours, theirs = _both(read_default_group="myapp")
    assert ours == theirs
    assert ours[1:4] == (server.database, "latin1", "from the file")


def test_include_quotes_and_escapes_as_mysqlclient(server, tmp_path):
    """``!include`` of the credentials, a double-quoted value with escapes (``\\t``,
    ``\\\\``, ``\\"``, ``\\s``): the same session through both."""
    write(tmp_path / "creds.cnf", "[client]\nuser = %s\npassword = '%s'\n"
          % (server.user, server.password))
    f = write(tmp_path / "main.cnf", """\
        [client]
        host = 127.0.0.1
        port = %d
        !include %s
        [myapp]
        init-command = "SET @probe = 'tab\\there\\\\ \\"q\\"\\send'"
        """ % (server.port, tmp_path / "creds.cnf"))
    ours, theirs = _both(read_default_file=f, read_default_group="myapp")
    assert ours == theirs
    # the file gives SET @probe = 'tab<TAB>here\ "q" end'; SQL then reads "\ " as " "
    assert ours[3] == 'tab\there "q" end'


def test_every_init_command_of_the_file_runs_as_mysqlclient(server, tmp_path):
    """libmysqlclient keeps a list of init commands and each ``init-command`` line
    read adds one (``[client]``'s and the named group's both run): none may be
    dropped silently (a ``[client]`` time zone lost to a ``[myapp]`` sql_mode)."""
    f = _cnf(tmp_path, server,
             extra="init-command = \"SET @probe2 = 'client'\"")
    ours, theirs = _both(read_default_file=f, read_default_group="myapp")
    assert ours == theirs
    assert ours[3:5] == ("from the file", "client")
    # with one given too: the given one first, then the file's, in file order
    ours, theirs = _both(read_default_file=f, read_default_group="myapp",
                         init_command="SET @probe = 'explicit', @probe2 = 'explicit'")
    assert ours == theirs
    assert ours[3:5] == ("from the file", "client")
    assert connect_options(f, "myapp")["init_command"] == (
        "SET @probe2 = 'client'", "SET @probe = 'from the file'")
