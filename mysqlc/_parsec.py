"""MariaDB's ``parsec`` authentication (MariaDB 11.6+, "Password Authentication using
Response Signed with Elliptic Curve"), as the C core's Python plugin (the contract is
in src/session.c, "Python plugins").

The exchange (MariaDB's KB "Authentication Plugin - PARSEC"; the server's
plugin/auth_parsec and Connector/C 3.4's plugins/auth/parsec.c agree on the sizes):

1. the server switches to ``parsec`` with a 32-byte random scramble;
2. the client answers with an empty packet ("send me the salt");
3. the server sends the ext-salt, 20 bytes: ``'P'`` (the KDF: PBKDF2 with
   HMAC-SHA-512), one byte ``k`` (iterations = 1024 << k: 0..3 in MariaDB 11.6, up to
   15 with later servers' parsec_pbkdf2_iterations) and the 18-byte salt;
4. the client derives a 32-byte Ed25519 seed = PBKDF2-HMAC-SHA512(password, salt,
   1024 << k, 32), picks a random 32-byte client scramble and sends
   ``client_scramble || Ed25519-sign(seed, server_scramble || client_scramble)``
   (96 bytes; RFC 8032 Ed25519 signature);
5. the server, which stores only the public key, verifies and answers OK or ERR.

For MariaDB 11.4+'s zero-configuration TLS proof the plugin's hash_password_bin is
the 52 bytes ``'P' || k || salt || public key`` (Connector/C's Passwd_in_memory).
"""

import hashlib
import os

from .errors import OperationalError

__all__ = ["ParsecExchange", "derive_seed", "parse_ext_salt", "sign_response"]

SCRAMBLE_LENGTH = 32
SALT_LENGTH = 18
#: MariaDB Connector/C's bound (1024 << 3 = 8192 PBKDF2 rounds): a larger factor from the
#: server is refused, since the derivation cannot be interrupted (Ctrl-C, connect_timeout)
#: and a hostile server could ask for 1024 << 15 rounds (about 12 s of CPU here)
MAX_ITERATION_FACTOR = 3

CR_AUTH_PLUGIN_ERR = 2061
CR_MALFORMED_PACKET = 2027


def _signing_key(seed):
    try:
        from nacl.signing import SigningKey
    except ImportError:
        raise OperationalError(
            2059, "Authentication plugin 'parsec' needs PyNaCl: pip install 'mysqlc[ed25519]'"
        ) from None
    return SigningKey(seed)


def parse_ext_salt(packet):
    """The server's ext-salt packet -> ``(iteration_factor, salt)``.

    Raises OperationalError 2027 when it is not 20 bytes, 2061 for a KDF other than
    ``'P'`` or an iteration factor above 15 (Connector/C 3.4 stops at 3; MariaDB
    servers after 11.6 store up to 15)."""
    packet = bytes(packet)
    if len(packet) != 2 + SALT_LENGTH:
        raise OperationalError(
            CR_MALFORMED_PACKET, "Malformed packet: parsec ext-salt of %d bytes (expected %d)"
            % (len(packet), 2 + SALT_LENGTH))
    if packet[0:1] != b"P":
        raise OperationalError(
            CR_AUTH_PLUGIN_ERR, "Authentication plugin 'parsec' reported error: unknown key "
            "derivation %r (only 'P', PBKDF2-SHA512, is known)" % packet[0:1])
    if packet[1] > MAX_ITERATION_FACTOR:
        raise OperationalError(
            CR_AUTH_PLUGIN_ERR, "Authentication plugin 'parsec' reported error: iteration "
            "factor %d out of range 0..%d" % (packet[1], MAX_ITERATION_FACTOR))
    return packet[1], packet[2:]


def derive_seed(password, salt, iteration_factor):
    """The 32-byte Ed25519 seed: PBKDF2-HMAC-SHA512(password, salt, 1024 << factor)."""
    return hashlib.pbkdf2_hmac("sha512", bytes(password), bytes(salt),
                               1024 << iteration_factor, 32)


def sign_response(seed, server_scramble, client_scramble):
    """``(response, public_key)``: response = client_scramble || signature of
    server_scramble || client_scramble with the seed's Ed25519 key."""
    key = _signing_key(seed)
    sig = key.sign(bytes(server_scramble) + bytes(client_scramble)).signature
    return bytes(client_scramble) + sig, bytes(key.verify_key)


class ParsecExchange:
    """One parsec login: ``response`` is the empty first answer; ``more(ext_salt)``
    returns the signed answer; ``password_hash()`` the MDEV-31855 hash afterwards."""

    hashes_password = True

    def __init__(self, password, scramble, client_scramble=None):
        scramble = bytes(scramble)
        if len(scramble) != SCRAMBLE_LENGTH:
            raise OperationalError(
                CR_MALFORMED_PACKET, "Malformed packet: parsec scramble of %d bytes "
                "(expected %d)" % (len(scramble), SCRAMBLE_LENGTH))
        self._password = bytes(password)
        self._scramble = scramble
        self._client_scramble = client_scramble
        self._hash = None
        self._rounds = 0
        self.response = b""      # "need salt"

    def more(self, data):
        self._rounds += 1
        if self._rounds > 1:
            raise OperationalError(
                CR_MALFORMED_PACKET, "Malformed packet: unexpected packet after the parsec "
                "response")
        factor, salt = parse_ext_salt(data)
        seed = derive_seed(self._password, salt, factor)
        client = self._client_scramble or os.urandom(SCRAMBLE_LENGTH)
        response, public = sign_response(seed, self._scramble, client)
        self._hash = b"P" + bytes([factor]) + salt + public
        self._password = b""
        return response

    def password_hash(self):
        return self._hash
