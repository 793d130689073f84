"""A private, throwaway MariaDB/MySQL server for tests, benchmarks and demos.

This module uses the standard library only and never imports the driver, so it
works before the C extension is built and can serve peer drivers too.

>>> from mysqlc.server import get_server
>>> with get_server() as srv:                      # doctest: +SKIP
...     conn = mysqlc.connect(**srv.connect_kwargs())

``PrivateServer`` initialises a fresh data directory in a temporary directory,
starts ``mariadbd`` (or ``mysqld``) on a unix socket and a free TCP port on
127.0.0.1, and removes everything again on exit.  ``ExternalServer`` describes an
existing server given by a DSN.  ``get_server()`` picks ``ExternalServer`` when the
environment variable ``MYSQLC_TEST_DSN`` is set, else ``PrivateServer``.

Environment variables
---------------------
MYSQLC_TEST_DSN
    ``mysql://user:password@host:port/database`` of an existing server to use
    instead of starting one.  Optional query parameters: ``root_user``,
    ``root_password`` (an account with global privileges; defaults to the DSN's
    user) and ``unix_socket`` (path of the server's socket, if reachable).
MYSQLC_SERVER_BINARY
    Path of the ``mariadbd``/``mysqld`` binary to start (default: searched on
    PATH and in /usr/sbin, /usr/local/sbin, /usr/libexec, /usr/local/mysql/bin).

Run ``python -m mysqlc.server`` to start a server by hand; it prints the DSN and
connection arguments (also as a ready-to-paste ``conn = mysqlc.connect(...)`` line)
and runs until interrupted.  ``--port N`` fixes the TCP port; ``--tls`` serves TLS
with a CA and a ``localhost`` / ``127.0.0.1`` certificate made by
:func:`make_tls_files`.
"""

import atexit
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import weakref

__all__ = ["PrivateServer", "ExternalServer", "get_server", "ServerNotAvailable"]

SEARCH_DIRS = ("/usr/sbin", "/usr/local/sbin", "/usr/libexec", "/usr/local/mysql/bin")
SERVER_NAMES = ("mariadbd", "mysqld")
INSTALL_DB_NAMES = ("mariadb-install-db", "mysql_install_db")

START_TIMEOUT = 60.0      # seconds until the server must send its handshake
STOP_TIMEOUT = 30.0       # seconds between SIGTERM and SIGKILL
INSTALL_TIMEOUT = 120.0   # seconds for initialising the data directory
LOG_TAIL_LINES = 30


class ServerNotAvailable(RuntimeError):
    """No server binary was found, or the server could not be started or reached."""


# --------------------------------------------------------------------------- helpers

def _tail(path, lines=LOG_TAIL_LINES):
    """Last ``lines`` lines of a text file, or '' if it cannot be read."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace").rstrip("\n")
    return "\n".join(text.splitlines()[-lines:])


def _with_logs(message, *paths):
    parts = [message]
    for path in paths:
        tail = _tail(path)
        if tail:
            parts.append("--- last lines of %s ---\n%s" % (path, tail))
    return "\n".join(parts)


def find_server_binary():
    """Path of a mariadbd/mysqld binary, or None.

    ``MYSQLC_SERVER_BINARY`` wins; then PATH and the usual sbin directories are searched,
    ``mariadbd`` before ``mysqld``.
    """
    env = os.environ.get("MYSQLC_SERVER_BINARY")
    if env:
        return env
    path = os.pathsep.join([os.environ.get("PATH", os.defpath)] + list(SEARCH_DIRS))
    for name in SERVER_NAMES:
        found = shutil.which(name, path=path)
        if found:
            return found
    return None


def _server_version_text(binary):
    """Output of ``binary --version`` (e.g. 'mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for ...')."""
    try:
        out = subprocess.run([binary, "--no-defaults", "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise ServerNotAvailable("cannot run %s --version: %s" % (binary, exc)) from None
    text = out.decode("utf-8", "replace").strip()
    if " Ver " not in text:
        raise ServerNotAvailable("%s does not look like a MariaDB/MySQL server binary; "
                                 "its --version printed: %r" % (binary, text[:300]))
    return text


def _version_tuple(version):
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", version or "")
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_handshake(family, address, timeout=2.0):
    """Connect, read the server's first packet and return its version string.

    Returns None when nothing answers yet (refused, reset, timeout, no complete
    packet) or when the first packet is not a protocol-10 handshake.  MariaDB's
    '5.5.5-' replication prefix is removed from the version.
    """
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(address)
            data = b""
            while len(data) < 4 or len(data) < 4 + struct.unpack("<I", data[:3] + b"\0")[0]:
                chunk = s.recv(4096)
                if not chunk:
                    return None
                data += chunk
                if len(data) > 1 << 16:
                    break
    except OSError:
        return None
    payload = data[4:]
    if not payload or payload[0] != 10:
        return None
    version = payload[1:].split(b"\0", 1)[0].decode("utf-8", "replace")
    if version.startswith("5.5.5-"):
        version = version[len("5.5.5-"):]
    return version


# Servers still running at interpreter exit are stopped.
_running = weakref.WeakSet()


@atexit.register
def _stop_all():
    for srv in list(_running):
        try:
            srv.stop()
        except Exception:
            pass


def _parent_death_signal():
    """preexec_fn for Linux: the server gets SIGTERM if this (main) thread dies.

    Keeps a killed test run from leaving servers behind.  Only used when starting from
    the main thread (PR_SET_PDEATHSIG fires when the creating *thread* exits).
    """
    if not sys.platform.startswith("linux"):
        return None
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError, ImportError):
        return None
    parent = os.getpid()

    def preexec():
        prctl(1, signal.SIGTERM, 0, 0, 0)   # PR_SET_PDEATHSIG
        if os.getppid() != parent:           # parent already gone
            os._exit(1)
    return preexec


# --------------------------------------------------------------------------- servers

class _ServerBase:
    host = "127.0.0.1"
    port = None
    unix_socket = None
    pid = None
    basedir = None
    datadir = None
    user = "mysqlc"
    password = "mysqlc-pw"
    database = "mysqlc_test"
    root_user = "root"
    root_password = ""
    version = None

    def connect_kwargs(self, root=False, unix=False):
        """Keyword arguments for ``mysqlc.connect`` (and MySQLdb/PyMySQL).

        Keys: host, port, user, password, database; with ``unix=True`` unix_socket
        replaces host and port.  ``root=True`` gives the account with global privileges.

        Raises ServerNotAvailable when ``unix=True`` and no socket path is known.
        """
        kw = {}
        if unix:
            if not self.unix_socket:
                raise ServerNotAvailable("no unix socket known for the server at %s:%s"
                                         % (self.host, self.port))
            kw["unix_socket"] = self.unix_socket
        else:
            kw["host"] = self.host
            kw["port"] = self.port
        kw["user"] = self.root_user if root else self.user
        kw["password"] = self.root_password if root else self.password
        kw["database"] = self.database
        return kw

    def dsn(self, root=False):
        """``mysql://user:password@host:port/database`` (user and password %-quoted)."""
        user = self.root_user if root else self.user
        password = self.root_password if root else self.password
        cred = urllib.parse.quote(user, safe="")
        if password:
            cred += ":" + urllib.parse.quote(password, safe="")
        host = self.host
        if ":" in host:
            host = "[%s]" % host
        return "mysql://%s@%s:%d/%s" % (cred, host, self.port,
                                        urllib.parse.quote(self.database or "", safe=""))

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def __repr__(self):
        return "<%s %s version=%r>" % (type(self).__name__, self.dsn(), self.version)


class ExternalServer(_ServerBase):
    """An existing server described by a DSN ``mysql://user:pw@host:port/db``.

    ``root_user``/``root_password`` default to the DSN's query parameters of those
    names, else to the DSN's own user and password.  ``start()`` checks that the server
    answers with a handshake (raising ServerNotAvailable otherwise) and sets ``version``;
    ``stop()`` does nothing.
    """

    def __init__(self, dsn, root_user=None, root_password=None):
        u = urllib.parse.urlsplit(dsn)
        if u.scheme not in ("mysql", "mariadb", "mysqlc"):
            raise ValueError("DSN must look like mysql://user:password@host:port/database, "
                             "got %r" % dsn)
        query = dict(urllib.parse.parse_qsl(u.query))
        self.host = u.hostname or "127.0.0.1"
        self.port = u.port or 3306
        self.user = urllib.parse.unquote(u.username or "")
        self.password = urllib.parse.unquote(u.password or "")
        self.database = urllib.parse.unquote(u.path.lstrip("/")) or "mysqlc_test"
        self.unix_socket = query.get("unix_socket") or None
        if root_user is None:
            root_user = query.get("root_user", self.user)
            if root_password is None:
                root_password = query.get("root_password",
                                          self.password if root_user == self.user else "")
        self.root_user = root_user
        self.root_password = root_password if root_password is not None else ""
        self.pid = None

    def start(self):
        version = None
        try:
            infos = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise ServerNotAvailable("cannot resolve %s: %s" % (self.host, exc)) from None
        for family, _, _, _, addr in infos:
            version = read_handshake(family, addr, timeout=10.0)
            if version:
                break
        if not version:
            raise ServerNotAvailable("no MySQL/MariaDB server answers at %s:%s (from "
                                     "MYSQLC_TEST_DSN or the given DSN)" % (self.host, self.port))
        self.version = version
        return self

    def stop(self):
        pass


class PrivateServer(_ServerBase):
    """A private mariadbd/mysqld in a temporary directory, removed again on stop.

    Parameters
    ----------
    binary : str, optional
        Server binary; default ``$MYSQLC_SERVER_BINARY`` or the first ``mariadbd``/``mysqld``
        on PATH, /usr/sbin, /usr/local/sbin, /usr/libexec, /usr/local/mysql/bin.
    extra_args : sequence of str
        Extra server options, appended last (so they override the defaults).
    max_allowed_packet : str
        Server ``max_allowed_packet``, e.g. ``"256M"``.
    keep : bool
        Keep the temporary directory (data, error log) after ``stop()``.
    port : int, optional
        TCP port to listen on (default: a free one; a port in use fails the start).

    After ``start()``: ``port`` (a free TCP port on 127.0.0.1), ``unix_socket``, ``pid``,
    ``basedir`` (the temporary directory), ``datadir``, ``version`` (as the server reports
    it, e.g. ``"10.11.6-MariaDB-0+deb12u1"``), ``error_log``.  Accounts: ``user``/``password``
    (mysql_native_password, from '%' and 'localhost', all privileges WITH GRANT OPTION) and
    ``root_user``/``root_password`` (root, empty password, from localhost and 127.0.0.1).
    The database ``database`` exists (utf8mb4).  ``halt()`` and ``restart()`` stop
    and start the server process again on the same data directory, port and socket
    (to test what clients do across a restart).

    Raises ServerNotAvailable when no binary is found or the server fails to start
    (the message includes the tail of the server's error log).
    """

    def __init__(self, binary=None, extra_args=(), max_allowed_packet="256M", keep=False,
                 port=None):
        self.binary = binary
        self._fixed_port = port
        self.extra_args = list(extra_args)
        self.max_allowed_packet = str(max_allowed_packet)
        self.keep = keep
        self.is_mariadb = None
        self.error_log = None
        self._proc = None
        self._out = None

    # ---- start

    def start(self):
        if self._proc is not None:
            return self
        binary = self.binary or find_server_binary()
        if not binary:
            raise ServerNotAvailable(
                "no MariaDB/MySQL server binary (mariadbd or mysqld) found on PATH or in %s; "
                "install one (Debian/Ubuntu: apt-get install mariadb-server, or run "
                "tools/bootstrap.sh), set MYSQLC_SERVER_BINARY, or point MYSQLC_TEST_DSN at "
                "an existing server" % ", ".join(SEARCH_DIRS))
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise ServerNotAvailable("MariaDB/MySQL server binary %r does not exist or is not "
                                     "executable" % binary)
        self.binary = binary
        vtext = _server_version_text(binary)
        self.is_mariadb = "mariadb" in vtext.lower()
        m = re.search(r" Ver (\S+)", vtext)
        self.version = m.group(1) if m else None

        self.basedir = tempfile.mkdtemp(prefix="mysqlc-server-")
        try:
            self._start_in_basedir()
        except BaseException:
            self._kill()
            self._cleanup()
            raise
        return self

    def _start_in_basedir(self):
        base = self.basedir
        self.datadir = os.path.join(base, "data")
        self.unix_socket = os.path.join(base, "mysqld.sock")
        if len(self.unix_socket.encode()) > 100:   # sun_path is 108 bytes on Linux
            self._sockdir = tempfile.mkdtemp(prefix="mysqlc-", dir="/tmp")
            self.unix_socket = os.path.join(self._sockdir, "mysqld.sock")
        self.error_log = os.path.join(base, "error.log")
        self._tmpdir = os.path.join(base, "tmp")
        os.makedirs(self._tmpdir, exist_ok=True)
        self._pid_file = os.path.join(base, "mysqld.pid")
        self._out_path = os.path.join(base, "mysqld.out")
        init_file = os.path.join(base, "init.sql")
        with open(init_file, "w") as f:
            f.write(self._init_sql())
        self._initialise_datadir()

        for attempt in range(3):
            self.port = self._fixed_port or _free_port()
            self._spawn(init_file)
            try:
                self._wait_ready()
                break
            except ServerNotAvailable:
                log = _tail(self.error_log, 200)
                port_clash = ("Address already in use" in log
                              or "Can't start server: Bind" in log)
                self._kill()
                if attempt < 2 and port_clash and not self._fixed_port:
                    os.rename(self.error_log, self.error_log + ".%d" % attempt)
                    continue
                raise
        _running.add(self)

    def _tuning_args(self):
        """Options that make a throwaway server start and run fast (durability is moot).

        The same options are given to the bootstrap, so InnoDB files are created at
        their final size.  ``--loose-`` keeps servers that lack an option working.
        """
        return [
            "--loose-innodb-buffer-pool-size=256M",
            "--loose-innodb-log-file-size=128M",
            "--loose-innodb-doublewrite=0",
            "--loose-innodb-flush-log-at-trx-commit=0",
            "--loose-innodb-buffer-pool-load-at-startup=0",
            "--loose-innodb-buffer-pool-dump-at-shutdown=0",
            "--loose-performance-schema=OFF",
            "--character-set-server=utf8mb4",
        ]

    def _initialise_datadir(self):
        user_args = ["--user=root"] if os.geteuid() == 0 else []
        log = os.path.join(self.basedir, "install.log")
        if self.is_mariadb:
            script = self._find_install_db()
            if not script:
                raise ServerNotAvailable(
                    "found %s but no mariadb-install-db/mysql_install_db script next to it or "
                    "on PATH to initialise a data directory" % self.binary)
            try:
                helptext = subprocess.run([script, "--help"], stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, timeout=30).stdout
            except (OSError, subprocess.SubprocessError):
                helptext = b""
            cmd = [script, "--no-defaults", "--datadir=" + self.datadir]
            bindir = os.path.dirname(os.path.realpath(self.binary))
            if bindir not in ("/usr/sbin", "/usr/bin"):
                cmd.append("--basedir=" + os.path.dirname(bindir))
            if b"auth-root-authentication-method" in helptext:
                cmd.append("--auth-root-authentication-method=normal")
            if b"skip-test-db" in helptext:
                cmd.append("--skip-test-db")
            cmd += user_args + ["--force"] + self._tuning_args()
        else:
            cmd = [self.binary, "--no-defaults", "--initialize-insecure",
                   "--datadir=" + self.datadir, "--log-error=" + log] + user_args
            cmd += self._tuning_args()
        try:
            with open(log, "ab") as out:
                rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT,
                                    cwd=self.basedir).returncode
        except subprocess.TimeoutExpired:
            raise ServerNotAvailable(_with_logs("initialising the data directory timed out "
                                                "(%s)" % " ".join(cmd), log)) from None
        except OSError as exc:
            raise ServerNotAvailable("cannot run %s: %s" % (cmd[0], exc)) from None
        if rc != 0:
            raise ServerNotAvailable(_with_logs(
                "initialising the data directory failed (exit status %d): %s"
                % (rc, " ".join(cmd)), log))

    def _find_install_db(self):
        bindir = os.path.dirname(os.path.abspath(self.binary))
        top = os.path.dirname(bindir)
        dirs = [bindir, os.path.join(top, "bin"), os.path.join(top, "scripts")]
        dirs += os.environ.get("PATH", os.defpath).split(os.pathsep)
        dirs += ["/usr/bin", "/usr/local/bin"]
        for name in INSTALL_DB_NAMES:
            for d in dirs:
                p = os.path.join(d, name)
                if os.path.isfile(p) and os.access(p, os.X_OK):
                    return p
        return None

    def _init_sql(self):
        """SQL run by the server at start (--init-file): test database and accounts.

        One statement per line, as old servers require.
        """
        user, pw, db = self.user, self.password, self.database
        q = lambda s: "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"   # noqa: E731
        ver = _version_tuple(self.version)
        if self.is_mariadb:
            ident = "IDENTIFIED BY %s"   # MariaDB's default plugin is mysql_native_password
        elif ver < (9, 0, 0):
            ident = "IDENTIFIED WITH mysql_native_password BY %s"
        else:                            # MySQL 9 has no mysql_native_password
            ident = "IDENTIFIED BY %s"
        lines = [
            "CREATE DATABASE IF NOT EXISTS `%s` CHARACTER SET utf8mb4;" % db,
        ]
        for host in ("%", "localhost"):
            lines.append("CREATE USER IF NOT EXISTS %s@%s %s;" % (q(user), q(host), ident % q(pw)))
            lines.append("GRANT ALL PRIVILEGES ON *.* TO %s@%s WITH GRANT OPTION;"
                         % (q(user), q(host)))
        # root without password from the socket (localhost) and TCP (127.0.0.1)
        for host in ("localhost", "127.0.0.1"):
            lines.append("CREATE USER IF NOT EXISTS 'root'@%s %s;" % (q(host), ident % "''"))
            if not self.is_mariadb:
                lines.append("ALTER USER 'root'@%s %s;" % (q(host), ident % "''"))
            lines.append("GRANT ALL PRIVILEGES ON *.* TO 'root'@%s WITH GRANT OPTION;" % q(host))
        return "\n".join(lines) + "\n"

    def _server_args(self, init_file):
        args = [
            self.binary, "--no-defaults",
            "--datadir=" + self.datadir,
            "--socket=" + self.unix_socket,
            # its own temp dir: a starting server deletes '#sql*' files it finds in its
            # tmpdir, which would break the temp tables of other servers sharing /tmp
            "--tmpdir=" + self._tmpdir,
            "--port=%d" % self.port,
            "--bind-address=127.0.0.1",
            "--pid-file=" + self._pid_file,
            "--log-error=" + self.error_log,
            "--skip-log-bin",
            "--skip-name-resolve",
            "--max-allowed-packet=" + self.max_allowed_packet,
            "--local-infile=1",
            "--init-file=" + init_file,
        ] + self._tuning_args()
        if not self.is_mariadb:
            args += ["--loose-mysqlx=OFF"]
            if (8, 4, 0) <= _version_tuple(self.version) < (9, 0, 0):
                args += ["--loose-mysql-native-password=ON"]
        if os.geteuid() == 0:
            args.append("--user=root")
        return args + self.extra_args

    def _spawn(self, init_file):
        self._out = open(self._out_path, "ab")
        self._proc = subprocess.Popen(
            self._server_args(init_file), stdin=subprocess.DEVNULL, stdout=self._out,
            stderr=subprocess.STDOUT, cwd=self.basedir, start_new_session=True,
            preexec_fn=_parent_death_signal())
        self.pid = self._proc.pid

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        unix_ok = tcp_ok = False
        delay = 0.02
        while True:
            rc = self._proc.poll()
            if rc is not None:
                raise ServerNotAvailable(_with_logs(
                    "%s exited with status %d during start-up" % (self.binary, rc),
                    self.error_log, self._out_path))
            if not unix_ok and os.path.exists(self.unix_socket):
                unix_ok = read_handshake(socket.AF_UNIX, self.unix_socket) is not None
            if unix_ok and not tcp_ok:
                version = read_handshake(socket.AF_INET, (self.host, self.port))
                if version:
                    tcp_ok = True
                    self.version = version
            if unix_ok and tcp_ok:
                return
            if time.monotonic() > deadline:
                raise ServerNotAvailable(_with_logs(
                    "%s did not accept connections within %.0f s (unix socket %s: %s, "
                    "TCP 127.0.0.1:%d: %s)" % (self.binary, START_TIMEOUT, self.unix_socket,
                                               "ok" if unix_ok else "no handshake", self.port,
                                               "ok" if tcp_ok else "no handshake"),
                    self.error_log, self._out_path))
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    # ---- restart (same data directory, port and socket)

    def halt(self):
        """Stop the server process (SIGTERM, wait up to 30 s, then SIGKILL) but keep the
        data directory, the port and the socket path, so that :meth:`restart` can start
        it again as the same server.  Its clients see what a shutdown does to them
        (ER_SERVER_SHUTDOWN 1053 or a lost connection, 2013), new connections are
        refused (2002 on the socket, 2003 on TCP).  Does nothing when not running.

        Raises ServerNotAvailable when the server was never started (or is stopped).
        """
        if self.datadir is None or self.basedir is None or not os.path.isdir(self.datadir):
            raise ServerNotAvailable("halt()/restart() need a started server")
        self._kill()

    def restart(self, downtime=0.0):
        """:meth:`halt` the server (if it runs), wait `downtime` seconds, and start it
        again on the same data directory, port and unix socket (tables and accounts are
        kept; the init file runs again, and is idempotent).  Returns when it accepts
        connections on both, like :meth:`start`; returns self.

        Raises ServerNotAvailable when the server was never started (or is stopped), or
        when it does not come back within 60 s (the message has the error log's tail).
        """
        self.halt()
        if downtime > 0:
            time.sleep(downtime)
        self._spawn(os.path.join(self.basedir, "init.sql"))
        try:
            self._wait_ready()
        except BaseException:
            self._kill()
            raise
        return self

    # ---- stop

    def stop(self):
        """SIGTERM, wait up to 30 s, then SIGKILL; remove the temp dir unless ``keep``."""
        self._kill()
        _running.discard(self)
        self._cleanup()

    def _kill(self):
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                except ProcessLookupError:
                    pass
            self.pid = None
        if self._out is not None:
            self._out.close()
            self._out = None

    def _cleanup(self):
        sockdir = getattr(self, "_sockdir", None)
        if sockdir:
            shutil.rmtree(sockdir, ignore_errors=True)
            self._sockdir = None
        if self.basedir and not self.keep:
            shutil.rmtree(self.basedir, ignore_errors=True)


_TLS_CONFIG = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = mysqlc
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
authorityKeyIdentifier = keyid
"""


def make_tls_files(dirpath, days=30):
    """A CA and a server certificate for ``localhost`` / ``127.0.0.1`` signed by it
    (EC P-256, SHA-256), made with the ``openssl`` command-line tool in `dirpath`.

    Returns
    -------
    dict
        ``ca``, ``cert``, ``key``: paths of ``ca.pem``, ``server-cert.pem``,
        ``server-key.pem``.

    Raises
    ------
    ServerNotAvailable
        ``openssl`` is not on PATH or fails.
    """
    exe = shutil.which("openssl")
    if exe is None:
        raise ServerNotAvailable("--tls needs the openssl command-line tool on PATH")
    os.makedirs(dirpath, exist_ok=True)
    cnf = os.path.join(dirpath, "openssl.cnf")
    with open(cnf, "w") as f:
        f.write(_TLS_CONFIG)

    def run(*args):
        proc = subprocess.run((exe,) + args, cwd=dirpath, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        if proc.returncode:
            raise ServerNotAvailable("openssl %s failed: %s" % (
                args[0], proc.stdout.decode("utf-8", "replace").strip()))

    for key in ("ca-key.pem", "server-key.pem"):
        run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-out", key)
    run("req", "-new", "-x509", "-key", "ca-key.pem", "-out", "ca.pem", "-days", str(days),
        "-sha256", "-subj", "/CN=mysqlc private server CA", "-config", cnf,
        "-extensions", "ca_ext")
    run("req", "-new", "-key", "server-key.pem", "-out", "server.csr", "-subj",
        "/CN=localhost", "-config", cnf)
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
        "-CAcreateserial", "-days", str(days), "-sha256", "-extfile", cnf,
        "-extensions", "server_ext", "-out", "server-cert.pem")
    return {"ca": os.path.join(dirpath, "ca.pem"),
            "cert": os.path.join(dirpath, "server-cert.pem"),
            "key": os.path.join(dirpath, "server-key.pem")}


def get_server(**kw):
    """The server to test against, as a context manager (``with get_server() as srv``).

    ``ExternalServer(os.environ["MYSQLC_TEST_DSN"])`` when that variable is set (``kw`` is
    then ignored), else ``PrivateServer(**kw)``.
    """
    dsn = os.environ.get("MYSQLC_TEST_DSN")
    if dsn:
        return ExternalServer(dsn)
    return PrivateServer(**kw)


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(
        prog="python -m mysqlc.server",
        description="Start a private throwaway MariaDB/MySQL server and wait for Ctrl-C.")
    parser.add_argument("--binary", help="mariadbd/mysqld to run (default: search PATH)")
    parser.add_argument("--max-allowed-packet", default="256M")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory after stopping")
    parser.add_argument("--port", type=int, default=None,
                        help="TCP port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--tls", action="store_true",
                        help="make a CA and a server certificate for localhost/127.0.0.1 "
                             "(openssl CLI) in --tls-dir and serve TLS with them")
    parser.add_argument("--tls-dir", default="mysqlc-tls",
                        help="directory for --tls's certificates (default: ./mysqlc-tls; "
                             "kept after stopping, so that the CA stays usable)")
    parser.add_argument("extra_args", nargs="*", metavar="SERVER-OPTION",
                        help="extra server options (after --), e.g. -- --sql-mode=ANSI")
    args = parser.parse_args(argv)
    tls = None
    if args.tls:
        try:
            tls = make_tls_files(os.path.abspath(args.tls_dir))
        except ServerNotAvailable as exc:
            print("error: %s" % exc, file=sys.stderr)
            return 1
        args.extra_args = ["--ssl-ca=" + tls["ca"], "--ssl-cert=" + tls["cert"],
                           "--ssl-key=" + tls["key"]] + list(args.extra_args)

    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)

    t0 = time.monotonic()
    try:
        srv = PrivateServer(binary=args.binary, extra_args=args.extra_args,
                            max_allowed_packet=args.max_allowed_packet, keep=args.keep,
                            port=args.port)
        srv.start()
    except ServerNotAvailable as exc:
        print("error: %s" % exc, file=sys.stderr)
        return 1
    try:
        print("server   %s (pid %d, started in %.2f s)" % (srv.version, srv.pid,
                                                        time.monotonic() - t0))
        print("dsn      %s" % srv.dsn())
        print("kwargs   %r" % srv.connect_kwargs())
        print("unix     %r" % srv.connect_kwargs(unix=True))
        print("root     %r" % srv.connect_kwargs(root=True))
        print("python   conn = mysqlc.connect(%s)" % ", ".join(
            "%s=%r" % kv for kv in srv.connect_kwargs().items()))
        if tls:
            print("tls      ssl={'ca': %r}   (certificate for localhost and 127.0.0.1)"
                  % tls["ca"])
        print("datadir  %s" % srv.datadir)
        print("client   mariadb --no-defaults -h127.0.0.1 -P%d -u%s -p%s %s"
              % (srv.port, srv.user, srv.password, srv.database))
        print("export MYSQLC_TEST_DSN='%s'" % srv.dsn())
        print("Press Ctrl-C to stop.", flush=True)
        while srv._proc is not None and srv._proc.poll() is None:
            time.sleep(0.5)
        print("server exited unexpectedly:\n" + _tail(srv.error_log), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nstopping", file=sys.stderr)
        return 0
    finally:
        srv.stop()


if __name__ == "__main__":
    sys.exit(main())
