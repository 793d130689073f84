"""Shared helpers for tests that play the server side of the MySQL protocol.

Used by tests/test_protocol.py (scripted protocol peer), tests/test_hostile_server.py
(malformed and lying servers), tests/test_faults.py (fault-injecting TCP proxy) and
fuzz/make_corpus.py (seed corpora).

- wire helpers: ``lenenc_int``, ``lenenc_str``, ``ok_packet``, ``eof_packet``,
  ``err_packet``, ``coldef`` (ColumnDefinition41), ``text_row``, ``handshake_v10``,
  ``parse_handshake_response``, ``native_scramble``;
- ``Peer``: the server side of one accepted connection (packets with sequence ids,
  16 MiB split/join, handshake and authentication, result sets);
- ``ScriptedServer`` / ``scripted(script)``: listens on 127.0.0.1 and runs
  ``script(peer)`` in a thread for one client;
- ``FaultProxy``: a TCP proxy between the driver and a real server that can cut,
  stall, truncate or corrupt the stream at a chosen byte of either direction.

Packets: a 4-byte header (3-byte little-endian payload length, 1-byte sequence id)
and the payload; payloads of 0xFFFFFF bytes or more are split into 0xFFFFFF-byte
fragments, ended by a shorter (possibly empty) one.
"""

import hashlib
import os
import select
import socket
import struct
import threading
import time

import pytest

import mysqlc
from mysqlc import _core

# ---- capability flags (Protocol::CapabilityFlags, as in src/mysqlc.h)
CLIENT_LONG_PASSWORD = 0x00000001
CLIENT_FOUND_ROWS = 0x00000002
CLIENT_LONG_FLAG = 0x00000004
CLIENT_CONNECT_WITH_DB = 0x00000008
CLIENT_PROTOCOL_41 = 0x00000200
CLIENT_TRANSACTIONS = 0x00002000
CLIENT_SECURE_CONNECTION = 0x00008000
CLIENT_MULTI_STATEMENTS = 0x00010000
CLIENT_MULTI_RESULTS = 0x00020000
CLIENT_PS_MULTI_RESULTS = 0x00040000
CLIENT_PLUGIN_AUTH = 0x00080000
CLIENT_CONNECT_ATTRS = 0x00100000
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x00200000
CLIENT_SESSION_TRACK = 0x00800000
CLIENT_DEPRECATE_EOF = 0x01000000

# what a MariaDB 10.11 server advertises, roughly (without SSL/compression)
FULL_CAPS = (CLIENT_LONG_PASSWORD | CLIENT_FOUND_ROWS | CLIENT_LONG_FLAG | CLIENT_CONNECT_WITH_DB
             | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION
             | CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS
             | CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_ATTRS | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
             | CLIENT_DEPRECATE_EOF)
NO_DEPRECATE_EOF_CAPS = FULL_CAPS & ~CLIENT_DEPRECATE_EOF

SERVER_STATUS_AUTOCOMMIT = 0x0002
SERVER_MORE_RESULTS_EXISTS = 0x0008
SERVER_STATUS_NO_BACKSLASH_ESCAPES = 0x0200

COM_QUIT = 0x01
COM_QUERY = 0x03

# column types and flags
T_DECIMAL = 246
T_TINY = 1
T_LONG = 3
T_DOUBLE = 5
T_LONGLONG = 8
T_DATE = 10
T_TIME = 11
T_DATETIME = 12
T_VAR_STRING = 253
T_BLOB = 252
FLAG_NOT_NULL = 0x0001
FLAG_UNSIGNED = 0x0020
FLAG_BINARY = 0x0080
UTF8MB4 = 45       # utf8mb4_general_ci
LATIN1 = 8         # latin1_swedish_ci
BINARY = 63

MAXP = 0xFFFFFF
PASSWORD = b"s3cret-pw"
USER = b"scripted"

CR_SERVER_LOST = 2013
CR_MALFORMED_PACKET = 2027


# =========================================================================== wire helpers

def lenenc_int(n):
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3]
    return b"\xfe" + struct.pack("<Q", n)


def lenenc_str(b):
    return lenenc_int(len(b)) + b


def read_lenenc(buf, pos):
    b = buf[pos]
    if b < 0xFB:
        return b, pos + 1
    if b == 0xFC:
        return struct.unpack_from("<H", buf, pos + 1)[0], pos + 3
    if b == 0xFD:
        return int.from_bytes(buf[pos + 1:pos + 4], "little"), pos + 4
    if b == 0xFE:
        return struct.unpack_from("<Q", buf, pos + 1)[0], pos + 9
    raise AssertionError("bad lenenc prefix 0x%02x" % b)


def native_scramble(password, nonce):
    """mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw)))."""
    if not password:
        return b""
    h1 = hashlib.sha1(password).digest()
    h2 = hashlib.sha1(h1).digest()
    h3 = hashlib.sha1(nonce + h2).digest()
    return bytes(a ^ b for a, b in zip(h1, h3))


def ok_packet(affected=0, insert_id=0, status=SERVER_STATUS_AUTOCOMMIT, warnings=0, info=b"",
              header=b"\x00"):
    return (header + lenenc_int(affected) + lenenc_int(insert_id)
            + struct.pack("<HH", status, warnings) + info)


def eof_packet(status=SERVER_STATUS_AUTOCOMMIT, warnings=0):
    return b"\xfe" + struct.pack("<HH", warnings, status)


def err_packet(errno, sqlstate, message):
    return b"\xff" + struct.pack("<H", errno) + b"#" + sqlstate + message


def coldef(name, type_, charset=UTF8MB4, length=255, flags=0, decimals=0, table=b"t"):
    """ColumnDefinition41."""
    return (lenenc_str(b"def") + lenenc_str(b"db") + lenenc_str(table) + lenenc_str(table)
            + lenenc_str(name) + lenenc_str(name) + b"\x0c"
            + struct.pack("<HIBHB", charset, length, type_, flags, decimals) + b"\x00\x00")


def text_row(*values):
    """ProtocolText::ResultsetRow: None -> 0xFB, bytes -> lenenc string."""
    out = []
    for v in values:
        out.append(b"\xfb" if v is None else lenenc_str(v))
    return b"".join(out)


def handshake_v10(nonce, caps=FULL_CAPS, plugin=b"mysql_native_password", thread_id=4242,
                  version=b"5.5.5-10.11.99-MariaDB-scripted", collation=UTF8MB4,
                  status=SERVER_STATUS_AUTOCOMMIT):
    assert len(nonce) == 20
    return (b"\x0a" + version + b"\x00" + struct.pack("<I", thread_id) + nonce[:8] + b"\x00"
            + struct.pack("<H", caps & 0xFFFF) + bytes([collation]) + struct.pack("<H", status)
            + struct.pack("<H", caps >> 16) + bytes([21]) + b"\x00" * 10
            + nonce[8:] + b"\x00" + plugin + b"\x00")


def parse_handshake_response(p):
    """HandshakeResponse41 -> dict (caps, max_packet, collation, user, auth, database, plugin)."""
    caps, max_packet, collation = struct.unpack_from("<IIB", p, 0)
    assert p[9:32] == b"\x00" * 23, "filler of the handshake response is not zero"
    pos = 32
    end = p.index(b"\x00", pos)
    user = p[pos:end]
    pos = end + 1
    if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
        n, pos = read_lenenc(p, pos)
    else:
        assert caps & CLIENT_SECURE_CONNECTION
        n = p[pos]
        pos += 1
    auth = p[pos:pos + n]
    assert len(auth) == n, "auth data runs past the end of the handshake response"
    pos += n
    database = plugin = None
    if caps & CLIENT_CONNECT_WITH_DB:
        end = p.index(b"\x00", pos)
        database = p[pos:end]
        pos = end + 1
    if caps & CLIENT_PLUGIN_AUTH:
        end = p.index(b"\x00", pos)
        plugin = p[pos:end]
        pos = end + 1
    return dict(caps=caps, max_packet=max_packet, collation=collation, user=user, auth=auth,
                database=database, plugin=plugin, rest=p[pos:])


class PeerClosed(Exception):
    pass


class Peer:
    """The server side of one accepted client connection."""

    def __init__(self, sock):
        self.sock = sock
        self.seq = 0
        self.buf = b""
        self.fragments = []   # payload lengths of the fragments of the last recv()
        self.client_gone = False

    # ---- raw I/O
    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise PeerClosed("client closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def send_raw(self, data):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            self.client_gone = True

    # ---- packets
    def send(self, payload, seq=None):
        """Send one logical payload, split at 0xFFFFFF as the protocol requires."""
        if seq is not None:
            self.seq = seq
        pos = 0
        out = []
        while True:
            chunk = payload[pos:pos + MAXP]
            out.append(struct.pack("<I", len(chunk))[:3] + bytes([self.seq & 0xFF]) + chunk)
            self.seq = (self.seq + 1) & 0xFF
            pos += len(chunk)
            if len(chunk) < MAXP:
                break
        try:
            self.sock.sendall(b"".join(out))
        except (BrokenPipeError, ConnectionResetError):
            # the client gave up (as it must on a malformed packet); what it did is
            # checked on the client side and by expect_close()
            self.client_gone = True

    def recv(self):
        """Read one logical payload (joined), checking the client's sequence ids."""
        parts = []
        self.fragments = []
        while True:
            hdr = self._read(4)
            n = int.from_bytes(hdr[:3], "little")
            assert hdr[3] == self.seq, ("client sent sequence id %d, expected %d"
                                        % (hdr[3], self.seq))
            self.seq = (self.seq + 1) & 0xFF
            parts.append(self._read(n))
            self.fragments.append(n)
            if n < MAXP:
                return b"".join(parts)

    def recv_command(self):
        """Start of a command: the client's packet must have sequence id 0."""
        self.seq = 0
        return self.recv()

    def expect_query(self, sql=None):
        p = self.recv_command()
        assert p[:1] == bytes([COM_QUERY]), "expected COM_QUERY, got %r" % p[:20]
        if sql is not None:
            assert p[1:] == sql, "expected query %r, got %r" % (sql, p[1:200])
        return p[1:]

    def expect_close(self, timeout=5.0):
        """The client must close the socket; it may send COM_QUIT first, nothing else."""
        self.sock.settimeout(timeout)
        data = self.buf
        self.buf = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except ConnectionResetError:
            pass
        assert data in (b"", b"\x01\x00\x00\x00\x01"), (
            "client sent %r after the error instead of closing" % data[:64])

    # ---- composite steps
    def handshake(self, caps=FULL_CAPS, password=PASSWORD, plugin=b"mysql_native_password",
                  switch_to=None, nonce=None, status=SERVER_STATUS_AUTOCOMMIT):
        """Handshake and authentication.  Returns the parsed handshake response.

        ``switch_to``: a plugin name; the server then sends an AuthSwitchRequest with a new
        nonce and checks the answer to that instead.  A wrong answer gets ERR 1045.
        """
        nonce = nonce or os.urandom(20).replace(b"\x00", b"\x01")
        self.send(handshake_v10(nonce, caps=caps, plugin=plugin, status=status), seq=0)
        resp = parse_handshake_response(self.recv())
        self.response = resp
        self.nonces = [nonce]
        if switch_to is not None:
            nonce2 = os.urandom(20).replace(b"\x00", b"\x02")
            self.nonces.append(nonce2)
            self.send(b"\xfe" + switch_to + b"\x00" + nonce2 + b"\x00")
            answer = self.recv()
            self.auth_answer = answer
            ok = answer == native_scramble(password, nonce2)
        else:
            self.auth_answer = resp["auth"]
            ok = resp["auth"] == native_scramble(password, nonce)
        if not ok:
            self.send(err_packet(1045, b"28000", b"Access denied for user 'scripted'@'localhost'"
                                 b" (using password: YES)"))
            return resp
        self.send(ok_packet(status=status))
        return resp

    def resultset(self, columns, rows, deprecate_eof, status=SERVER_STATUS_AUTOCOMMIT):
        """A complete text result set (column count, definitions, [EOF], rows, EOF/OK)."""
        self.send(lenenc_int(len(columns)))
        for c in columns:
            self.send(c)
        if not deprecate_eof:
            self.send(eof_packet(status))
        for r in rows:
            self.send(r)
        self.send(ok_packet(status=status, header=b"\xfe") if deprecate_eof
                  else eof_packet(status))


class ScriptedServer:
    """Listens on 127.0.0.1, accepts one connection and runs ``script(peer)`` in a thread.

    ``check()`` joins the thread and re-raises whatever the script raised (a failed
    assertion about what the client sent, for example).
    """

    def __init__(self, script, accept=True):
        self.script = script
        self.error = None
        self.result = None
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.lsock.settimeout(20)
        self.port = self.lsock.getsockname()[1]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        sock = None
        try:
            sock, _ = self.lsock.accept()
            # one connection only: a second one (the KILL QUERY side connection after a
            # timeout, issue 14) is refused at once instead of waiting in the backlog
            self.lsock.close()
            sock.settimeout(20)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.result = self.script(Peer(sock))
        except BaseException as exc:   # reported by check()
            self.error = exc
        finally:
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass
            self.lsock.close()

    def check(self, timeout=20):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "scripted server thread did not finish"
        if self.error is not None:
            raise self.error
        return self.result

    def connect(self, password=PASSWORD, database=None, client_flag=0, **kw):
        c = _core.Connection()
        c.connect(host="127.0.0.1", port=self.port, user=USER, password=password,
                  database=database, client_flag=client_flag, **kw)
        return c


def scripted(script, **kw):
    return ScriptedServer(script, **kw)


def assert_closed(c):
    """After a lost connection: closed, and later use raises OperationalError 2006
    ("server has gone away", as libmysqlclient after a lost connection)."""
    assert c.open is False
    with pytest.raises(mysqlc.OperationalError) as ei:   # CR_SERVER_GONE_ERROR, as mysqlclient
        c.query(b"SELECT 1")
    assert ei.value.args == (2006, "Server has gone away")


# =========================================================================== fault-injecting proxy

class Fault:
    """What the proxy does to one direction of the stream, at a byte offset.

    ``direction``: ``"s2c"`` (server to client) or ``"c2s"``.  ``at``: offset in that
    direction's bytes counted from when the proxy was armed (``FaultProxy.arm()``), or
    from the start of the connection when it is created armed.  ``action``:

    - ``"cut"``: forward the bytes before ``at``, then close both sockets (FIN);
    - ``"reset"``: the same, but the client sees a RST (SO_LINGER 0);
    - ``"stall"``: forward the bytes before ``at``, then forward nothing more in that
      direction for ``seconds`` (longer than the client's read_timeout), then cut;
    - ``"corrupt"``: XOR the byte at ``at`` with ``xor`` (default 0xFF) and go on;
    - ``"garbage"``: send ``data`` instead of everything from ``at`` on, then cut.
    """

    def __init__(self, direction, at, action, seconds=3.0, xor=0xFF, data=b""):
        assert direction in ("s2c", "c2s") and action in ("cut", "reset", "stall", "corrupt", "garbage")
        self.direction, self.at, self.action = direction, at, action
        self.seconds, self.xor, self.data = seconds, xor, data

    def __repr__(self):
        return "Fault(%s, at=%d, %s)" % (self.direction, self.at, self.action)


class FaultProxy:
    """A TCP proxy on 127.0.0.1 in front of ``upstream`` (host, port) that injects one
    ``Fault`` into each connection made through it while a fault is set.

    ``proxy.fault = Fault(...)`` applies to connections opened afterwards; with
    ``arm_on_connect=False`` the byte count starts only at ``proxy.arm()`` (call it
    after connecting, to aim at a query's response).  ``proxy.counts`` holds the bytes
    seen per direction since arming, for measuring a clean exchange first.  Each
    connection is served by a thread; ``close()`` stops everything.

    One connection at a time is armed: the newest one when it is accepted (with
    ``arm_on_connect``) or when ``arm()`` is called; its own byte counts decide where
    the fault falls, and ``counts``/``fired`` are its.  Other connections pass through
    untouched: a connection left from an earlier case, or a side connection the driver
    opens (a KILL QUERY after a timeout), neither moves the armed one's offsets nor
    takes its fault.
    """

    def __init__(self, upstream, fault=None, arm_on_connect=True):
        self.upstream = upstream
        self.fault = fault
        self.arm_on_connect = arm_on_connect
        self._newest = None     # the state of the connection accepted last
        self._armed = None      # the state of the armed connection, if any
        self._idle = {"counts": {"s2c": 0, "c2s": 0}, "fired": False}
        self._lock = threading.Lock()
        self._closing = False
        self._threads = []
        self._socks = []
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(16)
        self.port = self.lsock.getsockname()[1]
        t = threading.Thread(target=self._accept_loop, daemon=True)
        t.start()
        self._threads.append(t)

    @staticmethod
    def _fresh_state():
        return {"counts": {"s2c": 0, "c2s": 0}, "fired": False}

    @property
    def counts(self):
        """Bytes per direction the armed connection (or the last one armed) moved
        since it was armed."""
        with self._lock:
            return (self._armed or self._idle)["counts"]

    @property
    def fired(self):
        """Whether the fault has been applied to the armed connection."""
        with self._lock:
            return (self._armed or self._idle)["fired"]

    def arm(self):
        """Arm the newest connection: count its bytes from now and apply the fault to it."""
        with self._lock:
            state = self._newest if self._newest is not None else self._fresh_state()
            state["counts"] = {"s2c": 0, "c2s": 0}
            state["fired"] = False
            self._armed = state

    def disarm(self):
        with self._lock:
            if self._armed is not None:
                self._idle = self._armed
            self._armed = None

    def _accept_loop(self):
        while not self._closing:
            try:
                csock, _ = self.lsock.accept()
            except OSError:
                return
            try:
                ssock = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                csock.close()
                continue
            for s in (csock, ssock):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._socks += [csock, ssock]
                state = self._fresh_state()
                self._newest = state
                if self.arm_on_connect:
                    self._armed = state
                fault = self.fault
            t = threading.Thread(target=self._pump, args=(csock, ssock, fault, state),
                                 daemon=True)
            t.start()
            self._threads.append(t)

    @staticmethod
    def _close(*socks, reset=False):
        for s in socks:
            try:
                if reset:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            except OSError:
                pass

    def _pump(self, csock, ssock, fault, state):
        peers = {csock: (ssock, "c2s"), ssock: (csock, "s2c")}
        stalled_until = None
        try:
            while not self._closing:
                if stalled_until is not None and time.monotonic() >= stalled_until:
                    self._close(csock, ssock)
                    return
                r, _, _ = select.select([csock, ssock], [], [], 0.05)
                for s in r:
                    dst, direction = peers[s]
                    if stalled_until is not None and direction == fault.direction:
                        continue   # leave it unread: nothing goes through in that direction
                    try:
                        data = s.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        self._close(csock, ssock)
                        return
                    with self._lock:
                        armed = self._armed is state
                        start = state["counts"][direction]
                        if armed:
                            state["counts"][direction] += len(data)
                        fire = (fault is not None and armed and not state["fired"]
                                and direction == fault.direction
                                and start + len(data) > fault.at)
                        if fire:
                            state["fired"] = True
                    if fire:
                        k = fault.at - start
                        if fault.action == "corrupt":
                            data = data[:k] + bytes([data[k] ^ fault.xor]) + data[k + 1:]
                        elif fault.action == "garbage":
                            self._sendall(dst, data[:k] + fault.data)
                            self._close(csock, ssock)
                            return
                        else:
                            self._sendall(dst, data[:k])
                            if fault.action == "stall":
                                stalled_until = time.monotonic() + fault.seconds
                                continue
                            self._close(csock, ssock, reset=fault.action == "reset")
                            return
                    if not self._sendall(dst, data):
                        self._close(csock, ssock)
                        return
        finally:
            self._close(csock, ssock)

    @staticmethod
    def _sendall(sock, data):
        try:
            sock.sendall(data)
            return True
        except OSError:
            return False

    def close(self):
        self._closing = True
        self._close(self.lsock)
        with self._lock:
            socks = list(self._socks)
        self._close(*socks)
        for t in self._threads:
            t.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close_now(self):
        """``close()`` without its wait for the accept thread: on Linux closing the
        listening socket does not wake a thread blocked in accept() (close() then waits
        its 5 s join); shutting it down first does."""
        try:
            self.lsock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close()


# =========================================================================== MariaDB 11.4+/11.6 peer
# Additions for tests/test_parsec.py and tests/test_zero_config_tls.py: a peer that can
# speak TLS after the client's SSLRequest (Python's ssl module on the accepted socket),
# MariaDB's parsec plugin (MariaDB KB "Authentication Plugin - PARSEC") and the
# zero-configuration TLS proof in the final OK (MDEV-31855).

CLIENT_SSL = 0x00000800
PARSEC = b"parsec"
ED25519 = b"client_ed25519"


def parsec_ext_salt(salt, iteration_factor=0):
    """The 20-byte ext-salt the server sends: 'P', the iteration factor, the salt."""
    return b"P" + bytes([iteration_factor]) + salt


def parsec_public_key(password, salt, iteration_factor=0):
    """What the server stores: the Ed25519 public key of the seed
    PBKDF2-HMAC-SHA512(password, salt, 1024 << factor, 32), computed with the
    ``cryptography`` package (a second implementation besides the client's PyNaCl)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    seed = hashlib.pbkdf2_hmac("sha512", password, salt, 1024 << iteration_factor, 32)
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


def parsec_verify(public_key, server_scramble, response):
    """The server's check of the client's 96-byte answer (client scramble || signature
    of server scramble || client scramble)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    if len(response) != 96:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            response[32:], server_scramble + response[:32])
        return True
    except InvalidSignature:
        return False


def cert_fingerprint(cert_pem_path):
    """SHA-256 of the certificate's DER form."""
    import ssl as _ssl
    with open(cert_pem_path) as f:
        der = _ssl.PEM_cert_to_DER_cert(f.read())
    return hashlib.sha256(der).digest()


def zero_config_proof(password_hash_bin, scramble20, fingerprint):
    """The OK packet's info MariaDB 11.4+ sends over TLS: 0x01 + upper-case hex of
    SHA256(hash_password_bin || 20-byte scramble || SHA256(certificate DER))."""
    digest = hashlib.sha256(password_hash_bin + scramble20[:20] + fingerprint).hexdigest()
    return b"\x01" + digest.upper().encode()


def native_password_hash(password):
    """mysql_native_password's hash_password_bin: SHA1(SHA1(password))."""
    return hashlib.sha1(hashlib.sha1(password).digest()).digest()


class TlsPeer(Peer):
    """Peer that reads no further than asked before TLS (the ClientHello may follow the
    SSLRequest at once) and can turn the socket into a TLS server socket."""

    def __init__(self, sock, cert=None, key=None):
        super().__init__(sock)
        self.cert, self.key = cert, key
        self.tls = False

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20 if self.tls else n - len(self.buf))
            if not chunk:
                raise PeerClosed("client closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def start_tls(self):
        import ssl as _ssl
        assert self.buf == b"", "client sent bytes after the SSLRequest before TLS"
        ctx = _ssl.SSLContext(_ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        self.sock = ctx.wrap_socket(self.sock, server_side=True)
        self.tls = True

    def greet(self, nonce=None, caps=FULL_CAPS, plugin=b"mysql_native_password"):
        """HandshakeV10 (with CLIENT_SSL when a certificate is set); TLS when the client
        asks for it; returns the parsed HandshakeResponse41."""
        if self.cert:
            caps |= CLIENT_SSL
        self.nonce = nonce or os.urandom(20).replace(b"\x00", b"\x01")
        self.send(handshake_v10(self.nonce, caps=caps, plugin=plugin,
                                version=b"5.5.5-11.6.2-MariaDB-scripted"), seq=0)
        p = self.recv()
        if struct.unpack_from("<I", p, 0)[0] & CLIENT_SSL:
            assert len(p) == 32, "SSLRequest of %d bytes" % len(p)
            self.start_tls()
            p = self.recv()
        self.response = parse_handshake_response(p)
        return self.response

    def deny(self, user=b"scripted"):
        self.send(err_packet(1045, b"28000", b"Access denied for user '" + user
                             + b"'@'localhost' (using password: YES)"))

    def parsec(self, password, salt=None, iteration_factor=0, ext_salt=None):
        """Switch to parsec and check the client's signature (the server's side of
        plugin/auth_parsec).  Returns (ok, public key)."""
        salt = salt or os.urandom(18)
        public = parsec_public_key(password, salt, iteration_factor)
        scramble = os.urandom(32)
        self.send(b"\xfe" + PARSEC + b"\x00" + scramble)
        empty = self.recv()
        assert empty == b"", "parsec: the client's first answer is %r, not empty" % empty[:40]
        if ext_salt is not None:         # a malformed one: the client must give up
            self.send(ext_salt)
            self.expect_close()
            return None, public
        self.send(parsec_ext_salt(salt, iteration_factor))
        answer = self.recv()
        self.parsec_hash = b"P" + bytes([iteration_factor]) + salt + public
        return parsec_verify(public, scramble, answer), public


class TlsServer(ScriptedServer):
    """ScriptedServer whose script gets a TlsPeer (cert/key: PEM paths, or None for a
    server without TLS)."""

    def __init__(self, script, cert=None, key=None):
        self.cert, self.key = cert, key
        super().__init__(script)

    def _run(self):
        sock = peer = None
        try:
            sock, _ = self.lsock.accept()
            sock.settimeout(20)
            peer = TlsPeer(sock, self.cert, self.key)
            self.result = self.script(peer)
        except BaseException as exc:   # reported by check()
            self.error = exc
        finally:
            for s in (peer.sock if peer is not None else None, sock):
                if s is not None:
                    try:
                        s.close()
                    except OSError:
                        pass
            self.lsock.close()

    def connect(self, password=PASSWORD, **kw):
        kw.setdefault("connect_timeout", 10)
        kw.setdefault("autocommit", None)    # no SET autocommit round trip
        return mysqlc.connect(host="127.0.0.1", port=self.port, user=USER.decode(),
                              password=password, **kw)
