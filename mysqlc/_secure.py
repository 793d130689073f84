"""TLS options, authentication helpers and connection attributes for
:class:`mysqlc.connections.Connection`.

The transport and the authentication exchange run in the C core (OpenSSL, or the
session of an ``ssl.SSLContext`` given as ``ssl=``); this module only turns the
user's options (MySQL's, mysqlclient's and PyMySQL's spellings) into the core's
arguments.
"""

import hashlib
import os
import platform
import sys

from .errors import OperationalError, ProgrammingError

__all__ = ["SSL_MODES", "resolve_tls", "connect_attrs", "load_public_key",
           "client_ed25519"]

#: MySQL's ``--ssl-mode`` names and the core's numbers for them.
SSL_MODES = {"DISABLED": 0, "PREFERRED": 1, "REQUIRED": 2, "VERIFY_CA": 3,
             "VERIFY_IDENTITY": 4}

#: MySQL's ``--tls-version`` names and OpenSSL's protocol version numbers.
TLS_VERSIONS = {"TLSv1": 0x0301, "TLSv1.1": 0x0302, "TLSv1.2": 0x0303, "TLSv1.3": 0x0304}

_SSL_DICT_KEYS = {"ca", "capath", "cert", "key", "cipher", "check_hostname",
                  "verify_cert", "verify_identity", "ssl_mode", "tls_version", "fingerprint"}


def parse_fingerprints(value):
    """``ssl_fingerprint`` as the core takes it: the SHA-256 digests concatenated.

    ``value`` is one hex fingerprint (64 hex digits, optionally in colon-separated
    pairs, any case; ``sha256:`` prefix allowed), a comma/whitespace-separated list of
    them, or a sequence of them.  Returns bytes (32 per fingerprint) or None.  Raises
    ProgrammingError for anything else (SHA-1 and other digest sizes are refused:
    mysqlc compares SHA-256 only).
    """
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("ascii", "replace")
    if isinstance(value, str):
        items = value.replace(",", " ").split()
    elif isinstance(value, (list, tuple)):
        items = []
        for v in value:
            if not isinstance(v, str):
                raise ProgrammingError(0, "ssl_fingerprint entries must be str, not %s"
                                       % type(v).__name__)
            items.extend(v.replace(",", " ").split())
    else:
        raise ProgrammingError(0, "ssl_fingerprint must be a str or a list of str")
    out = []
    for item in items:
        h = item.strip()
        if h.lower().startswith("sha256:"):
            h = h[7:]
        h = h.replace(":", "")
        try:
            digest = bytes.fromhex(h)
        except ValueError:
            digest = b""
        if len(digest) != 32 or len(h) != 64:
            raise ProgrammingError(0, "ssl_fingerprint %r is not a SHA-256 fingerprint "
                                   "(64 hex digits, colons allowed)" % item)
        out.append(digest)
    if not out:
        raise ProgrammingError(0, "ssl_fingerprint is empty")
    return b"".join(out)


def _path(value, name):
    if value is None:
        return None
    value = os.fspath(value)
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if not isinstance(value, str) or not value:
        raise ProgrammingError(0, "%s must be a file path" % name)
    return value


def resolve_tls(ssl=None, ssl_mode=None, ssl_ca=None, ssl_capath=None, ssl_cert=None,
                ssl_key=None, ssl_cipher=None, ssl_verify_cert=None,
                ssl_verify_identity=None, ssl_disabled=None, tls_version=None,
                ssl_fingerprint=None):
    """Turn the TLS options into the core's ``connect()`` keyword arguments.

    Parameters
    ----------
    ssl : dict, bool or ssl.SSLContext, optional
        mysqlclient's / PyMySQL's dict with keys ``ca``, ``capath``, ``cert``,
        ``key``, ``cipher``, ``check_hostname`` (also ``verify_cert``,
        ``verify_identity``, ``ssl_mode``, ``tls_version``); ``True`` asks for TLS
        without verification, ``False`` turns TLS off.  An ``ssl.SSLContext`` (a
        client context, PyMySQL's and aiomysql's form) is the whole TLS
        configuration: TLS is required and runs through the context's own session
        (Python's ``ssl`` module over memory BIOs, src/tls_py.c); its
        ``verify_mode`` / ``check_hostname`` give the mode (:func:`context_mode`); no
        other TLS option may be given with it (ProgrammingError) except
        ``ssl_mode`` not stricter than the context, ``ssl_mode="DISABLED"`` or
        ``ssl_disabled=True`` (then TLS is off and the context unused).
    ssl_mode : str, optional
        ``DISABLED``, ``PREFERRED``, ``REQUIRED``, ``VERIFY_CA`` or
        ``VERIFY_IDENTITY`` (MySQL's ``--ssl-mode``; case-insensitive).
    ssl_ca, ssl_capath, ssl_cert, ssl_key, ssl_cipher : str, optional
        Keyword forms of the dict keys (they win over the dict).
    ssl_verify_cert, ssl_verify_identity, ssl_disabled : bool, optional
        PyMySQL's / mysql-connector's switches.
    tls_version : str or sequence of str, optional
        Allowed protocol versions, e.g. ``"TLSv1.2,TLSv1.3"`` (MySQL's
        ``--tls-version``); the lowest and highest listed become the bounds.
        Default: TLS 1.2 and newer.
    ssl_fingerprint : str or sequence of str, optional
        SHA-256 fingerprint(s) the server certificate must match (see
        :func:`parse_fingerprints`); also the dict key ``fingerprint``.  Implies
        ``VERIFY_CA`` without ``ssl_mode``; the chain and host name are then not
        checked (MariaDB Connector/C's ``MARIADB_OPT_TLS_PEER_FP``).

    Returns
    -------
    dict
        ``ssl_mode`` (int), ``ssl_ca``, ``ssl_capath``, ``ssl_cert``, ``ssl_key``,
        ``ssl_cipher``, ``tls_min_version``, ``tls_max_version``,
        ``ssl_fingerprint`` (bytes or None), ``ssl_context`` (the SSLContext or None).

    Notes
    -----
    Without any TLS option: ``PREFERRED`` -- TLS over TCP when the server offers it,
    unverified (no CA is known), plaintext when it does not, never TLS on a unix
    socket (libmysqlclient's default ``--ssl-mode``; docs/compat.md has the reasons and
    the other drivers' defaults).  ``ssl_mode="DISABLED"``, ``ssl=False`` or
    ``ssl_disabled=True`` turn TLS off.  With a CA (``ca``/``capath``) the server certificate is
    verified and so is its host name unless ``check_hostname=False`` (PyMySQL's
    rule); other TLS options alone give ``REQUIRED`` (encrypted, unverified).
    ``REQUIRED`` with a CA verifies the chain (MySQL's client does the same).
    With ``REQUIRED`` or stricter a server without TLS is an error before any
    credential is sent.

    ``VERIFY_CA`` / ``VERIFY_IDENTITY`` without ``ca``/``capath`` verify against the
    system's CA store, and when the chain is merely untrusted (self-signed or unknown
    issuer) accept the certificate if MariaDB 11.4+ proves it with the password
    (MDEV-31855, see docs/compat.md "Zero-configuration TLS").
    """
    opts = {}
    ssl_off = ssl is False
    if ssl is True:
        opts = {}
        want_tls = True
    elif ssl is None or ssl is False:
        want_tls = False
    elif isinstance(ssl, dict):
        unknown = set(ssl) - _SSL_DICT_KEYS
        if unknown:
            raise ProgrammingError(0, "unknown key(s) in ssl: %s" % ", ".join(sorted(unknown)))
        opts = dict(ssl)
        want_tls = True
    elif _is_ssl_context(ssl):   # PyMySQL's and aiomysql's form
        return _context_tls(ssl, ssl_mode=ssl_mode, ssl_disabled=ssl_disabled,
                            ssl_ca=ssl_ca, ssl_capath=ssl_capath, ssl_cert=ssl_cert,
                            ssl_key=ssl_key, ssl_cipher=ssl_cipher,
                            ssl_verify_cert=ssl_verify_cert,
                            ssl_verify_identity=ssl_verify_identity,
                            tls_version=tls_version, ssl_fingerprint=ssl_fingerprint)
    else:
        raise ProgrammingError(0, "ssl must be a dict, a bool or an ssl.SSLContext")
    ca = _path(ssl_ca if ssl_ca is not None else opts.get("ca"), "ssl ca")
    capath = _path(ssl_capath if ssl_capath is not None else opts.get("capath"), "ssl capath")
    cert = _path(ssl_cert if ssl_cert is not None else opts.get("cert"), "ssl cert")
    key = _path(ssl_key if ssl_key is not None else opts.get("key"), "ssl key")
    cipher = ssl_cipher if ssl_cipher is not None else opts.get("cipher")
    if isinstance(cipher, (list, tuple)):
        cipher = ":".join(cipher)
    verify_cert = ssl_verify_cert if ssl_verify_cert is not None else opts.get("verify_cert")
    verify_identity = ssl_verify_identity if ssl_verify_identity is not None \
        else opts.get("verify_identity")
    check_hostname = opts.get("check_hostname")
    mode = ssl_mode if ssl_mode is not None else opts.get("ssl_mode")
    tls_version = tls_version if tls_version is not None else opts.get("tls_version")
    fingerprints = parse_fingerprints(ssl_fingerprint if ssl_fingerprint is not None
                                      else opts.get("fingerprint"))
    if any(v is not None for v in (ca, capath, cert, key, cipher, fingerprints)) \
            or verify_cert or verify_identity:
        want_tls = True
    has_ca = ca is not None or capath is not None

    if mode is not None:
        name = str(mode).upper().replace("-", "_")
        if name not in SSL_MODES:
            raise ProgrammingError(0, "unknown ssl_mode %r (one of %s)"
                                   % (mode, ", ".join(SSL_MODES)))
        level = SSL_MODES[name]
        if level == SSL_MODES["REQUIRED"] and has_ca:
            level = SSL_MODES["VERIFY_CA"]
    elif ssl_disabled or ssl_off:
        level = SSL_MODES["DISABLED"]
    elif not want_tls:
        # no TLS option at all: TLS when the server offers it (the core never uses it
        # on a unix socket in this mode), as libmysqlclient's default --ssl-mode
        level = SSL_MODES["PREFERRED"]
    elif verify_identity or (has_ca and check_hostname is not False and verify_identity is not False):
        level = SSL_MODES["VERIFY_IDENTITY"]
    elif has_ca or verify_cert or fingerprints is not None:
        level = SSL_MODES["VERIFY_CA"]
    else:
        level = SSL_MODES["REQUIRED"]
    if ssl_disabled and level >= SSL_MODES["REQUIRED"]:
        raise ProgrammingError(0, "ssl_disabled=True contradicts ssl_mode=%s" % mode)

    tmin = tmax = 0
    if tls_version:
        names = tls_version.split(",") if isinstance(tls_version, str) else list(tls_version)
        nums = []
        for n in names:
            n = n.strip()
            if n not in TLS_VERSIONS:
                raise ProgrammingError(0, "unknown TLS version %r (one of %s)"
                                       % (n, ", ".join(TLS_VERSIONS)))
            nums.append(TLS_VERSIONS[n])
        tmin, tmax = min(nums), max(nums)
    return {"ssl_mode": level, "ssl_ca": ca, "ssl_capath": capath, "ssl_cert": cert,
            "ssl_key": key, "ssl_cipher": cipher, "tls_min_version": tmin,
            "tls_max_version": tmax, "ssl_fingerprint": fingerprints, "ssl_context": None}


def _is_ssl_context(value):
    # an SSLContext's class comes from the ssl module, which is imported then: no
    # import of ssl for the other forms
    mod = sys.modules.get("ssl")
    return mod is not None and isinstance(value, mod.SSLContext)


def context_mode(ctx):
    """The ``ssl_mode`` an ``ssl.SSLContext`` amounts to, from its own settings:
    ``verify_mode == CERT_NONE`` is ``REQUIRED`` (encrypted, unverified), else the chain
    is verified (``VERIFY_CA``; in client mode ``CERT_OPTIONAL`` verifies as
    ``CERT_REQUIRED``, Python's ssl documentation) and, with ``check_hostname``, the host
    name too (``VERIFY_IDENTITY``)."""
    import ssl as _ssl
    if ctx.verify_mode == _ssl.CERT_NONE:
        return SSL_MODES["REQUIRED"]
    if ctx.check_hostname:
        return SSL_MODES["VERIFY_IDENTITY"]
    return SSL_MODES["VERIFY_CA"]


def _context_tls(ctx, ssl_mode=None, ssl_disabled=None, **others):
    """resolve_tls for ``ssl=ssl.SSLContext``: the context is the whole TLS
    configuration (see :func:`resolve_tls`)."""
    import ssl as _ssl
    off = {"ssl_mode": SSL_MODES["DISABLED"], "ssl_ca": None, "ssl_capath": None,
           "ssl_cert": None, "ssl_key": None, "ssl_cipher": None, "tls_min_version": 0,
           "tls_max_version": 0, "ssl_fingerprint": None, "ssl_context": None}
    name = None
    if ssl_mode is not None:
        name = str(ssl_mode).upper().replace("-", "_")
        if name not in SSL_MODES:
            raise ProgrammingError(0, "unknown ssl_mode %r (one of %s)"
                                   % (ssl_mode, ", ".join(SSL_MODES)))
    if ssl_disabled or name == "DISABLED":
        return off   # TLS turned off: the context is not used (PyMySQL's ssl_disabled)
    given = sorted(k for k, v in others.items() if v is not None)
    if given:
        raise ProgrammingError(
            0, "ssl=ssl.SSLContext is the whole TLS configuration: %s cannot be combined "
            "with it (set them on the context: load_verify_locations, load_cert_chain, "
            "set_ciphers, minimum_version / maximum_version, verify_mode, check_hostname)"
            % ", ".join(given))
    if ctx.protocol == _ssl.PROTOCOL_TLS_SERVER:
        raise ProgrammingError(0, "ssl=ssl.SSLContext must be a client context "
                               "(PROTOCOL_TLS_CLIENT or ssl.create_default_context()), "
                               "not PROTOCOL_TLS_SERVER")
    level = context_mode(ctx)
    if name is not None:
        asked = SSL_MODES[name]
        if asked == SSL_MODES["PREFERRED"] or asked > level:
            what = {SSL_MODES["REQUIRED"]: "verify_mode=CERT_NONE: encrypted, unverified",
                    SSL_MODES["VERIFY_CA"]: "check_hostname=False: the chain only",
                    SSL_MODES["VERIFY_IDENTITY"]: "the chain and the host name"}[level]
            raise ProgrammingError(
                0, "ssl_mode=%s contradicts the ssl.SSLContext given (%s); an SSLContext "
                "always requires TLS and verifies as its own settings say" % (name, what))
    return dict(off, ssl_mode=level, ssl_context=ctx)


def load_public_key(value):
    """The server's RSA public key for caching_sha2_password / sha256_password over
    plain TCP: PEM text (str or bytes) or the path of a PEM file.  Returns bytes or
    None."""
    if value is None:
        return None
    if isinstance(value, str) and "-----BEGIN" in value:
        return value.encode("ascii")
    if isinstance(value, (bytes, bytearray)) and b"-----BEGIN" in value:
        return bytes(value)
    path = _path(value, "server_public_key")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise OperationalError(2061, "cannot read server_public_key %r: %s" % (path, e)) from None


def connect_attrs(program_name=None, extra=None):
    """Connection attributes sent in the handshake when the server accepts them
    (CLIENT_CONNECT_ATTRS): ``_client_name``, ``_client_version``, ``_os``,
    ``_platform``, ``_pid``, ``program_name`` and the user's own (``conn_attrs``)."""
    from . import __version__
    attrs = {
        "_client_name": "mysqlc",
        "_client_version": __version__,
        "_os": platform.system() or "unknown",
        "_platform": platform.machine() or "unknown",
        "_pid": str(os.getpid()),
    }
    if program_name is None:
        argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
        program_name = os.path.basename(argv0) or None
    if program_name:
        attrs["program_name"] = str(program_name)
    if extra:
        for k, v in extra.items():
            attrs[str(k)] = str(v)
    return attrs


# ---------------------------------------------------------------- client_ed25519

def client_ed25519(password, nonce):
    """MariaDB's ``client_ed25519`` response: an Ed25519 signature of the server's
    32-byte nonce with a key whose 64-byte expansion is SHA-512(password) (MariaDB's
    auth_ed25519 plugin; the password plays the part of the seed).

    OpenSSL's Ed25519 takes only 32-byte seeds, so the curve arithmetic comes
    from libsodium through PyNaCl, installed separately (``pip install 'mysqlc[ed25519]'``).

    Returns
    -------
    bytes
        64-byte signature ``R || S``.

    Raises
    ------
    OperationalError
        2059 when PyNaCl is not installed.
    """
    return _ed25519_sign(password, nonce)[0]


def _ed25519_sign(password, nonce):
    """(signature, public key) of client_ed25519 (see :func:`client_ed25519`)."""
    try:
        from nacl.bindings import (crypto_core_ed25519_scalar_add,
                                   crypto_core_ed25519_scalar_mul,
                                   crypto_core_ed25519_scalar_reduce,
                                   crypto_scalarmult_ed25519_base_noclamp)
    except ImportError:
        raise OperationalError(
            2059, "Authentication plugin 'client_ed25519' needs PyNaCl: "
            "pip install 'mysqlc[ed25519]'"
        ) from None
    az = bytearray(hashlib.sha512(password).digest())
    az[0] &= 248
    az[31] &= 63
    az[31] |= 64
    a = crypto_core_ed25519_scalar_reduce(bytes(az[:32]) + bytes(32))
    public = crypto_scalarmult_ed25519_base_noclamp(a)
    r = crypto_core_ed25519_scalar_reduce(hashlib.sha512(bytes(az[32:]) + nonce).digest())
    big_r = crypto_scalarmult_ed25519_base_noclamp(r)
    h = crypto_core_ed25519_scalar_reduce(hashlib.sha512(big_r + public + nonce).digest())
    s = crypto_core_ed25519_scalar_add(r, crypto_core_ed25519_scalar_mul(h, a))
    return big_r + s, public


class AuthExchange:
    """What a Python authentication plugin returns to the C core when it needs more
    than one round or proves the password for zero-configuration TLS (the contract is
    in src/session.c, "Python plugins"): ``response`` (the first answer), optionally
    ``more(data) -> bytes`` (each later server packet) and ``password_hash()``
    (Connector/C's ``hash_password_bin``)."""

    __slots__ = ("response", "_hash")

    def __init__(self, response, password_hash=None):
        self.response = response
        self._hash = password_hash

    def password_hash(self):
        return self._hash


def _client_ed25519_plugin(password, nonce):
    """client_ed25519 for the core: the signature, and the public key as the password
    hash the MDEV-31855 proof uses (Connector/C's auth_ed25519_hash)."""
    sig, public = _ed25519_sign(password, nonce)
    return AuthExchange(sig, public if password else None)


_client_ed25519_plugin.hashes_password = True


def _parsec_plugin(password, scramble):
    from ._parsec import ParsecExchange
    return ParsecExchange(password, scramble)


_parsec_plugin.hashes_password = True

#: Plugins the core calls back into Python for.
AUTH_PLUGINS = {"client_ed25519": _client_ed25519_plugin, "parsec": _parsec_plugin}
