"""Certificates for the benchmark's TLS variants, made with the ``openssl`` command.

The benchmark must not import ``tests/``, so this is its own small generator: a CA and a
server certificate for ``localhost`` / ``127.0.0.1`` signed by it (RSA 2048, SHA-256,
valid for a year).  ``make_server_certs(dirpath)`` returns a namespace with ``ca``,
``cert``, ``key`` (absolute paths) and ``server_args`` (the ``--ssl-ca/--ssl-cert/
--ssl-key`` options for mariadbd/mysqld).  Standard library only.
"""

import os
import shutil
import subprocess
import types

_CONFIG = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


def _run(args, cwd):
    exe = shutil.which("openssl")
    if exe is None:
        raise RuntimeError("the openssl command-line tool is not on PATH (needed for --transport tls)")
    proc = subprocess.run([exe] + args, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (" ".join(args),
                                                      proc.stdout.decode("utf-8", "replace")))


def make_server_certs(dirpath):
    dirpath = os.path.abspath(dirpath)
    os.makedirs(dirpath, exist_ok=True)
    cnf = os.path.join(dirpath, "openssl.cnf")
    with open(cnf, "w") as f:
        f.write(_CONFIG)
    for key in ("ca-key.pem", "server-key.pem"):
        _run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key],
             dirpath)
    _run(["req", "-new", "-x509", "-key", "ca-key.pem", "-out", "ca.pem", "-days", "365",
          "-sha256", "-subj", "/CN=mysqlc benchmark CA", "-set_serial", "1",
          "-config", cnf, "-extensions", "ca"], dirpath)
    _run(["req", "-new", "-key", "server-key.pem", "-out", "server.csr",
          "-subj", "/CN=localhost", "-config", cnf], dirpath)
    _run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
          "-set_serial", "2", "-days", "365", "-sha256", "-extfile", cnf,
          "-extensions", "server", "-out", "server-cert.pem"], dirpath)
    ns = types.SimpleNamespace(ca=os.path.join(dirpath, "ca.pem"),
                               cert=os.path.join(dirpath, "server-cert.pem"),
                               key=os.path.join(dirpath, "server-key.pem"))
    ns.server_args = ["--ssl-ca=" + ns.ca, "--ssl-cert=" + ns.cert, "--ssl-key=" + ns.key]
    return ns


if __name__ == "__main__":
    import sys
    import tempfile
    made = make_server_certs(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
    print("\n".join(made.server_args))
