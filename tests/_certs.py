"""Throwaway X.509 material for the TLS tests, made with the ``openssl`` command-line tool.

>>> certs = make_certs(tmp_path)                   # doctest: +SKIP
>>> PrivateServer(extra_args=certs.server_args())  # doctest: +SKIP
>>> mysqlc.connect(..., ssl={"ca": certs.ca_cert})  # doctest: +SKIP

``make_certs(dirpath)`` writes into ``dirpath`` (PEM files, RSA 2048-bit keys,
SHA-256 signatures, valid from now for ten years):

====================  =====================================================================
attribute             what it is
====================  =====================================================================
``ca_cert/ca_key``    the test CA ("mysqlc test CA")
``server_cert/key``   server certificate signed by the CA: CN ``localhost``, SAN
                      ``DNS:localhost``, ``IP:127.0.0.1`` (``extendedKeyUsage serverAuth``)
``wrong_cert/key``    server certificate signed by the CA for a name that does not match:
                      CN and SAN ``wrong.example`` only
``dns_only_cert``     like ``server_cert`` (same key, ``server_key``) but its only name is
                      SAN ``DNS:localhost`` (CN ``localhost``): no IP address
``ip_only_cert``      like ``server_cert`` (same key) but its only name is SAN
                      ``IP:127.0.0.1`` (CN ``mysqlc ip-only``): no DNS name
``client_cert/key``   client certificate signed by the CA: CN ``mysqlc-client``
                      (``extendedKeyUsage clientAuth``)
``other_ca_cert/key`` an unrelated second CA ("mysqlc unrelated CA") that signed nothing
====================  =====================================================================

Calling it again on a directory that already holds a complete set reuses the files.
Needs only the standard library and ``openssl`` on PATH (OpenSSL 1.1.1 or newer);
raises :class:`CertsUnavailable` when ``openssl`` is missing or fails.
"""

import os
import shutil
import subprocess
import types

__all__ = ["make_certs", "CertsUnavailable", "CLIENT_CN", "SERVER_CN", "WRONG_CN"]

SERVER_CN = "localhost"
WRONG_CN = "wrong.example"
CLIENT_CN = "mysqlc-client"
DAYS = 3650

_FILES = {
    "ca_cert": "ca.pem", "ca_key": "ca-key.pem",
    "server_cert": "server-cert.pem", "server_key": "server-key.pem",
    "wrong_cert": "wrong-cert.pem", "wrong_key": "wrong-key.pem",
    "dns_only_cert": "dns-only-cert.pem", "ip_only_cert": "ip-only-cert.pem",
    "client_cert": "client-cert.pem", "client_key": "client-key.pem",
    "other_ca_cert": "other-ca.pem", "other_ca_key": "other-ca-key.pem",
}


class CertsUnavailable(RuntimeError):
    """``openssl`` is not installed or could not make the certificates."""


def _openssl(*args, cwd):
    exe = shutil.which("openssl")
    if exe is None:
        raise CertsUnavailable("the openssl command-line tool is not on PATH")
    proc = subprocess.run([exe] + list(args), cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    if proc.returncode != 0:
        raise CertsUnavailable("openssl %s failed (exit status %d):\n%s"
                               % (" ".join(args), proc.returncode,
                                  proc.stdout.decode("utf-8", "replace")))


def _key(path, cwd):
    # traditional-or-PKCS#8 PEM does not matter to OpenSSL; genpkey writes PKCS#8
    _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
             "-out", path, cwd=cwd)
    os.chmod(os.path.join(cwd, path), 0o600)


def _ca(cert, key, cn, serial, cwd):
    _key(key, cwd)
    # req -x509 takes the extensions from the [v3_ca] section of _minimal_config()
    _openssl("req", "-new", "-x509", "-key", key, "-out", cert, "-days", str(DAYS),
             "-sha256", "-subj", "/O=mysqlc tests/CN=%s" % cn, "-set_serial", str(serial),
             "-config", _minimal_config(cwd), "-extensions", "v3_ca", cwd=cwd)


def _minimal_config(cwd):
    """An openssl.cnf with just what ``req`` needs, so the system's config (which may
    set defaults we do not want) plays no part."""
    path = os.path.join(cwd, "openssl-min.cnf")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write("[req]\n"
                    "distinguished_name = dn\n"
                    "prompt = no\n"
                    "[dn]\n"
                    "CN = unused\n"
                    "[v3_ca]\n"
                    "basicConstraints = critical, CA:TRUE\n"
                    "keyUsage = critical, keyCertSign, cRLSign\n"
                    "subjectKeyIdentifier = hash\n")
    return path


def _leaf(cert, key, cn, ca_cert, ca_key, serial, extensions, cwd, new_key=True):
    if new_key:
        _key(key, cwd)
    csr = cert + ".csr"
    ext = cert + ".ext"
    _openssl("req", "-new", "-key", key, "-out", csr, "-subj", "/O=mysqlc tests/CN=%s" % cn,
             "-config", _minimal_config(cwd), cwd=cwd)
    with open(os.path.join(cwd, ext), "w") as f:
        f.write("basicConstraints = critical, CA:FALSE\n"
                "keyUsage = critical, digitalSignature, keyEncipherment\n"
                "subjectKeyIdentifier = hash\n"
                "authorityKeyIdentifier = keyid\n")
        f.write(extensions)
    _openssl("x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key,
             "-set_serial", str(serial), "-days", str(DAYS), "-sha256",
             "-extfile", ext, "-out", cert, cwd=cwd)
    os.remove(os.path.join(cwd, csr))
    os.remove(os.path.join(cwd, ext))


def _namespace(dirpath):
    ns = types.SimpleNamespace(dir=dirpath, server_cn=SERVER_CN, wrong_cn=WRONG_CN,
                               client_cn=CLIENT_CN)
    for attr, name in _FILES.items():
        setattr(ns, attr, os.path.join(dirpath, name))

    def server_args(wrong_name=False):
        """``--ssl-ca/--ssl-cert/--ssl-key`` server options for this set."""
        cert, key = (ns.wrong_cert, ns.wrong_key) if wrong_name else (ns.server_cert,
                                                                        ns.server_key)
        return ["--ssl-ca=" + ns.ca_cert, "--ssl-cert=" + cert, "--ssl-key=" + key]
    ns.server_args = server_args
    return ns


def make_certs(dirpath):
    """Write the CA, server, wrong-name server, client and unrelated-CA certificates
    and keys into ``dirpath`` (created if missing) and return a namespace of their
    absolute paths (see the module docstring), plus ``server_args(wrong_name=False)``.

    Raises
    ------
    CertsUnavailable
        ``openssl`` is missing or failed (its output is in the message).
    """
    dirpath = os.path.abspath(os.fspath(dirpath))
    os.makedirs(dirpath, exist_ok=True)
    ns = _namespace(dirpath)
    if all(os.path.exists(getattr(ns, a)) for a in _FILES):
        return ns
    _ca(_FILES["ca_cert"], _FILES["ca_key"], "mysqlc test CA", 1, dirpath)
    _ca(_FILES["other_ca_cert"], _FILES["other_ca_key"], "mysqlc unrelated CA", 1, dirpath)
    _leaf(_FILES["server_cert"], _FILES["server_key"], SERVER_CN, _FILES["ca_cert"],
          _FILES["ca_key"], 2,
          "extendedKeyUsage = serverAuth\n"
          "subjectAltName = DNS:%s, IP:127.0.0.1\n" % SERVER_CN, dirpath)
    _leaf(_FILES["wrong_cert"], _FILES["wrong_key"], WRONG_CN, _FILES["ca_cert"],
          _FILES["ca_key"], 3,
          "extendedKeyUsage = serverAuth\n"
          "subjectAltName = DNS:%s\n" % WRONG_CN, dirpath)
    _leaf(_FILES["dns_only_cert"], _FILES["server_key"], SERVER_CN, _FILES["ca_cert"],
          _FILES["ca_key"], 5,
          "extendedKeyUsage = serverAuth\n"
          "subjectAltName = DNS:%s\n" % SERVER_CN, dirpath, new_key=False)
    _leaf(_FILES["ip_only_cert"], _FILES["server_key"], "mysqlc ip-only", _FILES["ca_cert"],
          _FILES["ca_key"], 6,
          "extendedKeyUsage = serverAuth\n"
          "subjectAltName = IP:127.0.0.1\n", dirpath, new_key=False)
    _leaf(_FILES["client_cert"], _FILES["client_key"], CLIENT_CN, _FILES["ca_cert"],
          _FILES["ca_key"], 4, "extendedKeyUsage = clientAuth\n", dirpath)
    os.remove(os.path.join(dirpath, "openssl-min.cnf"))
    return ns


if __name__ == "__main__":
    import sys
    import tempfile
    target = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="mysqlc-certs-")
    made = make_certs(target)
    for attr in _FILES:
        print("%-14s %s" % (attr, getattr(made, attr)))
