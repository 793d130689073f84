"""Connection habits of code written for mysqlclient (issue 12).

- ``host="localhost"`` (or no host) is the local unix socket, as in libmysqlclient:
  ``MYSQL_UNIX_PORT``, else the usual paths; ``127.0.0.1`` is TCP; ``protocol="tcp"``
  (or an option file's ``protocol=tcp``) makes localhost TCP; ``MYSQL_TCP_PORT`` is the
  default port.  The tests point ``MYSQL_UNIX_PORT`` at the private server's socket
  (never at the system server's).
- ``connect("mysql://user:pw@host:port/db")`` (read_sql's DSN parser).
- A password never appears in an exception message or a repr.
- ``connect_timeout`` defaults to 10 s; a listener that never greets is reported as
  libmysqlclient does (2013 "... at 'reading initial communication packet'").
"""

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import urllib.parse

import pytest

import mysqlc
from mysqlc import connections

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CR_SERVER_LOST = 2013


def _sock(server):
    if not server.unix_socket:
        pytest.skip("no unix socket known for this server")
    return server.unix_socket


def _host_info(conn):
    try:
        return conn.get_host_info()
    finally:
        conn.close()


# ------------------------------------------------------------ localhost and the socket

@pytest.mark.parametrize("host", ["localhost", None, ""])
def test_localhost_is_the_unix_socket(server, monkeypatch, host):
    monkeypatch.setenv("MYSQL_UNIX_PORT", _sock(server))
    kw = dict(user=server.user, password=server.password, database=server.database)
    if host is not None:
        kw["host"] = host
    conn = mysqlc.connect(**kw)
    try:
        cur = conn.cursor()
        cur.execute("SELECT @@socket = %s", (server.unix_socket,))
        assert cur.fetchone() == (1,)
        assert conn.get_host_info() == "Localhost via UNIX socket"
    finally:
        conn.close()


def test_localhost_as_mysqlclient(server):
    """The same calls through the real mysqlclient (MYSQL_UNIX_PORT is read when its
    library starts, so in a fresh process) give the same transports."""
    sock = _sock(server)
    code = textwrap.dedent("""\
        import sys, json
        mod = sys.argv[1]
        if mod == "mysqlc":
            import mysqlc
            mysqlc.install_as_MySQLdb()
        import MySQLdb
        user, pw, port = sys.argv[2], sys.argv[3], int(sys.argv[4])
        out = []
        for kw in ({"host": "localhost"}, {}, {"host": "127.0.0.1", "port": port},
                   {"host": "localhost", "port": port}):
            c = MySQLdb.connect(user=user, password=pw, **kw)
            out.append(c.get_host_info())
            c.close()
        print(json.dumps(out))
        """)
    results = []
    for mod in ("mysqlc", "mysqlclient"):
        env = dict(os.environ, PYTHONPATH=REPO, MYSQL_UNIX_PORT=sock)
        env.pop("MYSQL_TCP_PORT", None)
        out = subprocess.run([sys.executable, "-c", code, mod, server.user, server.password,
                              str(server.port)], capture_output=True, text=True, env=env,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        results.append(out.stdout)
    assert results[0] == results[1]
    assert "Localhost via UNIX socket" in results[0] and "127.0.0.1 via TCP/IP" in results[0]


def test_localhost_without_a_socket_names_the_path(server, monkeypatch, tmp_path):
    """No MYSQL_UNIX_PORT: the first existing of the usual paths, else the first path;
    here none exists, so the error names it (never a silent switch to TCP)."""
    monkeypatch.delenv("MYSQL_UNIX_PORT", raising=False)
    missing = str(tmp_path / "mysqld.sock")
    monkeypatch.setattr(connections, "_DEFAULT_SOCKETS", (missing, str(tmp_path / "b")))
    assert connections._default_socket() == missing
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(host="localhost", user="u", password="p")
    assert ei.value.args[0] == 2002
    assert missing in ei.value.args[1]


def test_protocol_tcp_and_socket(server, monkeypatch):
    monkeypatch.setenv("MYSQL_UNIX_PORT", _sock(server))
    kw = dict(user=server.user, password=server.password)
    assert _host_info(mysqlc.connect(host="localhost", port=server.port, protocol="tcp",
                                     **kw)) == "127.0.0.1 via TCP/IP"
    assert _host_info(mysqlc.connect(host="localhost", port=server.port, protocol="TCP",
                                     **kw)) == "127.0.0.1 via TCP/IP"
    assert _host_info(mysqlc.connect(unix_socket=server.unix_socket, protocol="socket",
                                     **kw)) == "Localhost via UNIX socket"
    with pytest.raises(mysqlc.NotSupportedError):
        mysqlc.connect(protocol="pipe", **kw)


def test_unix_socket_argument_wins_over_the_environment(server, monkeypatch, tmp_path):
    monkeypatch.setenv("MYSQL_UNIX_PORT", str(tmp_path / "nothing-here.sock"))
    conn = mysqlc.connect(unix_socket=_sock(server), user=server.user,
                          password=server.password)
    assert _host_info(conn) == "Localhost via UNIX socket"


def test_mysql_tcp_port_is_the_default_port(server, monkeypatch):
    monkeypatch.setenv("MYSQL_TCP_PORT", str(server.port))
    conn = mysqlc.connect(host="127.0.0.1", user=server.user, password=server.password)
    try:
        assert conn.port == server.port
    finally:
        conn.close()
    monkeypatch.setenv("MYSQL_TCP_PORT", "not-a-port")
    with pytest.raises(mysqlc.ProgrammingError, match="MYSQL_TCP_PORT"):
        mysqlc.connect(host="127.0.0.1", user="u", password="p")


# ------------------------------------------------------------ DSN

def test_connect_with_a_dsn(server):
    dsn = server.dsn()
    conn = mysqlc.connect(dsn)
    try:
        cur = conn.cursor()
        cur.execute("SELECT CURRENT_USER(), DATABASE()")
        assert cur.fetchone() == ("%s@%%" % server.user, server.database)
        assert conn.host == "127.0.0.1" and conn.port == server.port
    finally:
        conn.close()
    # keyword arguments win over the DSN; DSN options are connect() arguments
    conn = mysqlc.connect(dsn + "?charset=latin1&connect_timeout=5", database=None,
                          db="information_schema")
    try:
        assert conn.character_set_name() == "latin1"
        assert conn._timeouts[0] == 5.0
        cur = conn.cursor()
        cur.execute("SELECT DATABASE()")
        assert cur.fetchone() == ("information_schema",)
    finally:
        conn.close()
    conn = mysqlc.connect(host=dsn)       # as keyword, and mariadb:// too
    conn.close()
    conn = mysqlc.connect("mariadb" + dsn[len("mysql"):])
    conn.close()


def test_dsn_with_a_unix_socket_and_quoted_password(server, root_conn_kwargs):
    sock = _sock(server)
    admin = mysqlc.connect(**root_conn_kwargs)
    pw = "p@ss:w/rd?#%"
    try:
        cur = admin.cursor()
        cur.execute("CREATE USER IF NOT EXISTS 'dsnuser'@'%%' IDENTIFIED BY %s", (pw,))
        cur.execute("CREATE USER IF NOT EXISTS 'dsnuser'@'localhost' IDENTIFIED BY %s",
                    (pw,))
        dsn = "mysql://dsnuser:%s@/?unix_socket=%s" % (
            urllib.parse.quote(pw, safe=""), urllib.parse.quote(sock, safe=""))
        conn = mysqlc.connect(dsn)
        assert _host_info(conn) == "Localhost via UNIX socket"
        conn = mysqlc.connect("mysql://dsnuser:%s@127.0.0.1:%d"
                              % (urllib.parse.quote(pw, safe=""), server.port))
        assert _host_info(conn) == "127.0.0.1 via TCP/IP"
    finally:
        admin.cursor().execute("DROP USER IF EXISTS 'dsnuser'@'%', 'dsnuser'@'localhost'")
        admin.close()


# ------------------------------------------------------------ passwords are never shown

SECRET = "Zebra-Secret-4711"


def _texts(exc):
    """Every text a user could see for `exc`: str, repr, args, the formatted chain."""
    return [str(exc), repr(exc), repr(exc.args),
            "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))]


@pytest.mark.parametrize("dsn", [
    "mysql://u:%s@127.0.0.1:notaport/db" % SECRET,
    "mysql://u:%s/x@127.0.0.1:1/db" % SECRET,             # a '/' in the password
    "mysql://u:%s@[::1/db" % SECRET,                      # a broken IPv6 literal
    "postgres://u:%s@127.0.0.1/db" % SECRET,
    "mysql://u:%s@127.0.0.1:1/db?port=abc" % SECRET,
    "mysql://u:%s@127.0.0.1:1/db?no_such_option=1" % SECRET,
])
def test_bad_dsn_errors_do_not_show_the_password(dsn):
    with pytest.raises((mysqlc.Error, TypeError, ValueError)) as ei:
        mysqlc.connect(dsn, connect_timeout=2)
    for text in _texts(ei.value):
        assert SECRET not in text
    with pytest.raises((mysqlc.Error, TypeError, ValueError)) as ei:
        mysqlc.read_sql(dsn, "SELECT 1")
    for text in _texts(ei.value):
        assert SECRET not in text


def test_access_denied_and_repr_do_not_show_the_password(server, conn_kwargs):
    wrong = "mysql://%s:%s@127.0.0.1:%d/%s" % (server.user, SECRET, server.port,
                                                server.database)
    with pytest.raises(mysqlc.OperationalError) as ei:
        mysqlc.connect(wrong)
    assert ei.value.args[0] == 1045
    for text in _texts(ei.value):
        assert SECRET not in text
    conn = mysqlc.connect(server.dsn())
    try:
        for text in (repr(conn), str(conn), repr(conn._init_args), str(conn._init_args)):
            assert server.password not in text
        assert "***" in repr(conn._init_args)
        # the arguments still open a connection like this one (read_sql partitions)
        again = mysqlc.connect(**conn._init_args)
        again.close()
    finally:
        conn.close()
    conn = mysqlc.connect(**conn_kwargs)
    try:
        assert server.password not in repr(conn._init_args)
    finally:
        conn.close()


# Every entry point a DSN, a password or an option file reaches, fed what a user gets
# wrong, with the password "s3cr3t-XYZ": it appears in no text of the exception, its
# args, or any exception of its __cause__/__context__ chain (suppressed ones included:
# error reporters such as Sentry record __context__ even under "raise ... from None").
# Nothing here reaches a server: every host is 127.0.0.1 port 1 (refused) or unparsable.

PW = "s3cr3t-XYZ"
REFUSED = "127.0.0.1:1"


def _chain_texts(exc):
    seen, out = set(), []
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out += [str(exc), repr(exc), repr(exc.args)] + [str(a) for a in exc.args]
        out += ["".join(traceback.format_exception(type(exc), exc, exc.__traceback__))]
        out += [repr(getattr(exc, a)) for a in ("object", "name", "filename")
                if getattr(exc, a, None) is not None]
        if exc.__cause__ is not None:
            out += _chain_texts(exc.__cause__)
        exc = exc.__context__
    return out


def _raised(fn):
    try:
        result = fn()
        if hasattr(result, "__await__"):
            async def wait():
                return await result
            from _aio_run import run
            result = run(wait())
    except Exception as exc:   # noqa: BLE001 - each case must raise; which is checked below
        return exc
    pytest.fail("no exception: %r" % (result,))


def _sync_cases(tmp_path):
    from mysqlc import pymysql
    from mysqlc import _lowlevel
    cnf = tmp_path / "my.cnf"

    def optfile(text, **kw):
        def run():
            cnf.write_text(text)
            return mysqlc.connect(read_default_file=str(cnf), connect_timeout=2, **kw)
        return run
    return {
        "DSN without its scheme": lambda: mysqlc.connect("u:%s@%s/db" % (PW, REFUSED)),
        "DSN without its scheme, host name": lambda: mysqlc.connect(
            "u:%s@no-such-host.invalid/db" % PW, connect_timeout=2),
        "DSN starting with //": lambda: mysqlc.connect("//u:%s@%s/db" % (PW, REFUSED)),
        "DSN with one slash": lambda: mysqlc.connect("mysql:/u:%s@%s/db" % (PW, REFUSED)),
        "host=user:password@host": lambda: mysqlc.connect(host="u:%s@127.0.0.1" % PW,
                                                           port=1),
        "unescaped @ in the password": lambda: mysqlc.connect(
            "mysql://u:%s@x@%s/db" % (PW, REFUSED)),
        "'/' in the password": lambda: mysqlc.connect("mysql://u:%s/x@%s/db" % (PW, REFUSED)),
        "'#' in the password": lambda: mysqlc.connect("mysql://u:%s#x@%s/db" % (PW, REFUSED)),
        "port out of range": lambda: mysqlc.connect("mysql://u:%s@127.0.0.1:99999/db" % PW),
        "port not a number": lambda: mysqlc.connect("mysql://u:%s@127.0.0.1:x/db" % PW),
        "query option not a number": lambda: mysqlc.connect(
            "mysql://u:%s@%s/db?connect_timeout=soon" % (PW, REFUSED)),
        "password in the query, bad option": lambda: mysqlc.connect(
            "mysql://u@%s/db?password=%s&no_such_option=1" % (REFUSED, PW)),
        "another scheme": lambda: mysqlc.connect("postgresql://u:%s@%s/db" % (PW, REFUSED)),
        "refused": lambda: mysqlc.connect("mysql://u:%s@%s/db" % (PW, REFUSED)),
        "password not encodable": lambda: mysqlc.connect(
            host="127.0.0.1", port=1, user="u", password=PW + "\udcff"),
        "password of a wrong type": lambda: mysqlc.connect(host="127.0.0.1", port=1,
                                                            password=[PW]),
        "port as a str": lambda: mysqlc.connect(host="127.0.0.1", port="1", password=PW),
        "DSN and a bad argument": lambda: mysqlc.connect("mysql://u:%s@%s/db" % (PW, REFUSED),
                                                          ssl_mode="SOMETIMES"),
        "option file, refused": optfile("[client]\nhost=127.0.0.1\nport=1\n"
                                        "password=%s\n" % PW),
        "option file, unterminated quote": optfile(
            '[client]\nhost=127.0.0.1\nport=1\npassword="%s\n' % PW),
        "option file, bad port after the password": optfile(
            "[client]\npassword=%s\nport=x\n" % PW),
        "option file, bad ssl-mode": optfile("[client]\nhost=127.0.0.1\nport=1\n"
                                             "password=%s\nssl-mode=SOMETIMES\n" % PW),
        "option file and DSN": optfile("[client]\npassword=%s\n" % PW,
                                       host="mysql://u@127.0.0.1:x/db"),
        "read_sql, DSN without its scheme": lambda: mysqlc.read_sql(
            "u:%s@%s/db" % (PW, REFUSED), "SELECT 1"),
        "read_sql, bad port": lambda: mysqlc.read_sql("mysql://u:%s@h:x/db" % PW, "SELECT 1"),
        "parse_dsn, bad port": lambda: mysqlc.columnar.parse_dsn("mysql://u:%s@h:x/d" % PW),
        "PyMySQL flavour, host with the credentials": lambda: pymysql.connect(
            host="u:%s@127.0.0.1" % PW, port=1),
        "PyMySQL flavour, refused": lambda: pymysql.connect(host="127.0.0.1", port=1,
                                                             user="u", password=PW),
        "MySQLdb._mysql, DSN without its scheme": lambda: _lowlevel.connect(
            host="u:%s@127.0.0.1" % PW, port=1),
    }


def test_no_password_in_any_connect_error(tmp_path):
    cases = _sync_cases(tmp_path)
    shown = []
    for label, fn in cases.items():
        exc = _raised(fn)
        for text in _chain_texts(exc):
            assert PW not in text, (label, text)
        shown.append("%s: %s" % (label, exc))
    # the messages still say what is wrong
    text = "\n".join(shown)
    assert "host '***@127.0.0.1' is not a host name: a DSN starts with mysql://" in text
    assert "DSN must start with mysql:// (no '://' in it)" in text
    assert "password cannot be encoded as utf-8" in text
    assert "DSN option connect_timeout='soon' is not a number" in text


def test_no_password_in_aio_connect_and_pool_errors():
    pytest.importorskip("greenlet")
    import mysqlc.aio
    dsn = "mysql://u:%s@%s/db" % (PW, REFUSED)
    cases = {
        "connect, DSN without its scheme": lambda: mysqlc.aio.connect("u:%s@%s/d"
                                                                       % (PW, REFUSED)),
        "connect, bad port": lambda: mysqlc.aio.connect("mysql://u:%s@h:x/d" % PW),
        "connect, refused": lambda: mysqlc.aio.connect(dsn),
        "connect, host with the credentials": lambda: mysqlc.aio.connect(
            host="u:%s@127.0.0.1" % PW, port=1),
        "create_pool(dsn)": lambda: mysqlc.aio.create_pool(dsn),
        "create_pool(1, dsn)": lambda: mysqlc.aio.create_pool(1, dsn),
        "create_pool(host=dsn), refused": lambda: mysqlc.aio.create_pool(host=dsn),
        "create_pool(host=bad dsn)": lambda: mysqlc.aio.create_pool(
            host="mysql://u:%s@h:x/d" % PW),
    }
    for label, fn in cases.items():
        exc = _raised(fn)
        for text in _chain_texts(exc):
            assert PW not in text, (label, text)
    exc = _raised(cases["create_pool(dsn)"])
    assert isinstance(exc, ValueError)
    assert "a DSN is given as create_pool(host='mysql://...')" in str(exc)


def test_no_password_in_aio_and_pool_reprs(server):
    pytest.importorskip("greenlet")
    import mysqlc.aio
    from _aio_run import run

    async def texts():
        out = []
        conn = await mysqlc.aio.connect(server.dsn())
        out += [repr(conn), str(conn), repr(conn.sync), repr(conn.sync._init_args)]
        await conn.ensure_closed()
        out.append(repr(conn))
        pool = await mysqlc.aio.create_pool(host=server.dsn(), minsize=1, maxsize=2)
        out.append(repr(pool))
        async with pool.acquire() as pooled:
            out += [repr(pooled), repr(pooled.sync)]
        pool.close()
        await pool.wait_closed()
        return out
    shown = run(texts())
    assert len(shown) == 8
    for text in shown:
        assert server.password not in text, text


_SQLALCHEMY_URLS = ["mysql+mysqlc://u:%s@127.0.0.1:x/d" % PW,
                    "mysql+mysqlc://u:%s@%s/d?port=x" % (PW, REFUSED),
                    "mysql+mysqlc://u:%s@%s/d?connect_timeout=soon" % (PW, REFUSED),
                    "mariadb+mysqlc://u:%s@%s/d?prepared=1" % (PW, REFUSED),
                    "mysql+mysqlc://u:%s@x@%s/d" % (PW, REFUSED),      # an unescaped '@'
                    "mysql+mysqlc://u:%s@%s/d" % (PW, REFUSED)]


def test_no_password_in_sqlalchemy_errors():
    sqlalchemy = pytest.importorskip("sqlalchemy")
    urls = _SQLALCHEMY_URLS
    for url in urls:
        def run(url=url):
            engine = sqlalchemy.create_engine(url)
            try:
                engine.connect().close()
            finally:
                engine.dispose()
        exc = _raised(run)
        for text in _chain_texts(exc):
            assert PW not in text, (url, text)


def test_no_password_in_sqlalchemy_async_errors():
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("greenlet")
    from sqlalchemy.ext.asyncio import create_async_engine

    async def run_async(url):
        engine = create_async_engine(url)
        try:
            async with engine.connect():
                pass
        finally:
            await engine.dispose()
    for url in _SQLALCHEMY_URLS:
        exc = _raised(lambda url=url: run_async(url))
        for text in _chain_texts(exc):
            assert PW not in text, (url, text)


# ------------------------------------------------------------ connect timeout

class SilentListener:
    """Accepts connections and never writes a byte (or closes them at once)."""

    def __init__(self, close=False):
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.port = self.lsock.getsockname()[1]
        self.close_at_once = close
        self.accepted = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                s, _ = self.lsock.accept()
            except OSError:
                return
            if self.close_at_once:
                s.close()
            else:
                self.accepted.append(s)

    def stop(self):
        self.lsock.close()
        for s in self.accepted:
            s.close()


def test_silent_listener_times_out_with_the_handshake_message():
    srv = SilentListener()
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host="127.0.0.1", port=srv.port, user="u", password="p",
                           connect_timeout=1)
        took = time.monotonic() - t0
        assert ei.value.args[0] == CR_SERVER_LOST
        assert ei.value.args[1].startswith(
            "Lost connection to server at 'reading initial communication packet'")
        assert "during query" not in ei.value.args[1]
        assert "timed out" in ei.value.args[1]
        assert 0.9 < took < 5
    finally:
        srv.stop()


def test_silent_listener_default_timeout_is_ten_seconds():
    assert connections._signature_defaults()["connect_timeout"] == 10
    srv = SilentListener()
    try:
        t0 = time.monotonic()
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host="127.0.0.1", port=srv.port, user="u", password="p")
        took = time.monotonic() - t0
        assert ei.value.args[0] == CR_SERVER_LOST
        assert "reading initial communication packet" in ei.value.args[1]
        assert 9.5 < took < 20
    finally:
        srv.stop()


def test_listener_that_closes_before_the_greeting():
    srv = SilentListener(close=True)
    try:
        with pytest.raises(mysqlc.OperationalError) as ei:
            mysqlc.connect(host="127.0.0.1", port=srv.port, user="u", password="p")
        assert ei.value.args[0] == CR_SERVER_LOST
        assert ei.value.args[1].startswith(
            "Lost connection to server at 'reading initial communication packet'")
    finally:
        srv.stop()


def test_no_timeout_when_asked(conn_kwargs):
    kw = dict(conn_kwargs, connect_timeout=None)
    conn = mysqlc.connect(**kw)
    try:
        assert conn._timeouts[0] is None
    finally:
        conn.close()


# ------------------------------------------------------------ python -m mysqlc.server --tls

def test_server_main_tls_switch(server, tmp_path):
    """``python -m mysqlc.server --tls`` makes a CA and a certificate for localhost /
    127.0.0.1 and prints ready-to-paste arguments; VERIFY_IDENTITY connects with them."""
    import signal
    tls_dir = tmp_path / "tls"
    proc = subprocess.Popen([sys.executable, "-m", "mysqlc.server", "--tls", "--tls-dir",
                             str(tls_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONPATH=REPO), cwd=str(tmp_path))
    try:
        lines = {}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line or line.startswith("Press Ctrl-C"):
                break
            key, _, rest = line.partition(" ")
            lines[key] = rest.strip()
        assert "python" in lines and "tls" in lines, (lines, proc.stderr.read())
        assert lines["python"].startswith("conn = mysqlc.connect(host='127.0.0.1', port=")
        ns = {"mysqlc": mysqlc}
        exec(lines["python"], ns)                       # the printed line runs as pasted
        ns["conn"].close()
        ca = str(tls_dir / "ca.pem")
        assert lines["tls"].startswith("ssl={'ca': %r}" % ca)
        kwargs = eval(lines["kwargs"])
        for host in ("127.0.0.1", "localhost"):
            conn = mysqlc.connect(**dict(kwargs, host=host), protocol="tcp",
                                  ssl_mode="VERIFY_IDENTITY", ssl_ca=ca)
            try:
                cur = conn.cursor()
                cur.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
                assert cur.fetchone()[1].startswith("TLSv1.")
            finally:
                conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert os.path.exists(ca)       # kept after stopping
