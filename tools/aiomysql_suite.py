"""Run aiomysql's own test suite against mysqlc's aiomysql flavour (and, for the
baseline, against real aiomysql) on a private server; print the counts.

A dev tool (issue 20), not part of CI: it fetches the aiomysql sdist with pip.

    bash tools/aiomysql-suite.sh                 # both runs, TCP (TLS) and unix socket
    bash tools/aiomysql-suite.sh --only flavour -k test_cursor
    bash tools/aiomysql-suite.sh --only real --no-unix

What runs: the sdist's ``tests/`` without ``tests/sa`` (the SQLAlchemy 1.3 wrapper
``aiomysql.sa``), with its conftest as it is: ``--mysql-address`` (TCP to
127.0.0.1 with an ``ssl.SSLContext``, so the server serves TLS with certificates
made by :func:`mysqlc.server.make_tls_files`) and ``--mysql-unix-socket``, both
loop types (asyncio, uvloop) when uvloop is installed.  For the flavour run a
pytest plugin calls ``mysqlc.install_as_pymysql()`` and
``mysqlc.install_as_aiomysql()`` before the conftest imports ``aiomysql`` and
``pymysql``; the real run imports the sdist's ``aiomysql`` and the installed
PyMySQL release aiomysql's CI pins (1.1.2, installed with pip into the work
directory).  The tests of ``aiomysql.sa`` are deselected in both runs
(tools/_aiomysql_suite_plugin.py).  Outcomes are kept as JUnit XML in the work directory; the tests that
pass on real aiomysql and not on the flavour are listed.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mysqlc.server import PrivateServer, ServerNotAvailable, make_tls_files   # noqa: E402

#: root's password on the private server, given to the suite as MYSQL_ROOT_PASSWORD (its
#: test_config_file writes the password into a my.cnf, where an empty one reads "None")
ROOT_PASSWORD = "aiomysql-suite-root"


def set_root_password(srv):
    import mysqlc
    conn = mysqlc.connect(**srv.connect_kwargs(root=True, unix=True))
    try:
        cur = conn.cursor()
        for host in ("localhost", "127.0.0.1"):
            cur.execute("ALTER USER 'root'@'%s' IDENTIFIED BY %%s" % host, (ROOT_PASSWORD,))
    finally:
        conn.close()


def fetch(version, workdir):
    """The unpacked sdist of aiomysql `version` under `workdir` (pip download)."""
    src = os.path.join(workdir, "aiomysql-%s" % version)
    if os.path.isdir(os.path.join(src, "tests")):
        return src
    dl = os.path.join(workdir, "dl")
    os.makedirs(dl, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--no-binary", ":all:", "aiomysql==%s" % version, "-d", dl], check=True)
    archive, = glob.glob(os.path.join(dl, "aiomysql-%s.tar.gz" % version))
    with tarfile.open(archive) as tar:
        tar.extractall(workdir, filter="data")
    return src


def real_pymysql(version, workdir):
    """A directory holding PyMySQL `version` (pip install --target), the release
    aiomysql's own CI pins: PyMySQL 1.2 removed escape_bytes_prefixed and escape_dict,
    which aiomysql 0.3.2 still calls."""
    target = os.path.join(workdir, "pymysql-%s" % version)
    if not os.path.isdir(os.path.join(target, "pymysql")):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--target", target, "PyMySQL==%s" % version], check=True)
    return target


def outcomes(xml_path):
    """``{test id: "passed" | "failed" | "error" | "skipped"}`` from a JUnit XML file."""
    out = {}
    for case in ET.parse(xml_path).iter("testcase"):
        name = "%s::%s" % (case.get("classname"), case.get("name"))
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                kind = {"failure": "failed"}.get(child.tag, child.tag)
                break
        out[name] = kind
    return out


def count(results):
    tally = {}
    for kind in results.values():
        tally[kind] = tally.get(kind, 0) + 1
    return tally


def run(which, src, workdir, srv, args):
    """Run the suite once (`which`: "flavour", "real" or "aio"); returns its outcomes."""
    base = os.path.join(workdir, "run-" + which)
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    # the tests alone (not beside the sdist's aiomysql package, which the rootdir
    # import would put first on sys.path), tests/sa left out
    shutil.copytree(os.path.join(src, "tests"), os.path.join(base, "tests"),
                    ignore=shutil.ignore_patterns("sa", "__pycache__"))
    with open(os.path.join(base, "pytest.ini"), "w") as f:
        f.write("[pytest]\n")   # the rootdir: no setting of an enclosing project
    env = dict(os.environ)
    env["MYSQL_ROOT_PASSWORD"] = ROOT_PASSWORD
    env["MYSQL_DB"] = "test_pymysql"
    cmd = [sys.executable, "-m", "pytest", "tests", "-p", "no:cacheprovider",
           "--continue-on-collection-errors",
           "-q", "-rfE", "--tb=" + args.tb, "--junitxml=" + os.path.join(base, "junit.xml"),
           "-o", "junit_family=xunit1"]
    cmd += ["-p", "_aiomysql_suite_plugin"]
    env["MYSQLC_SUITE_TEST_TIMEOUT"] = str(args.test_timeout)
    tools = [os.path.join(ROOT, "tools")]
    if which in ("flavour", "aio"):
        env["MYSQLC_AIOMYSQL_FLAVOUR"] = "1" if which == "flavour" else "aio"
        env["PYTHONPATH"] = os.pathsep.join(tools + [ROOT])
    else:
        env.pop("MYSQLC_AIOMYSQL_FLAVOUR", None)
        env["PYTHONPATH"] = os.pathsep.join(tools + [src, real_pymysql(args.pymysql, workdir)])
    if not args.no_tcp:
        cmd.append("--mysql-address=tcp=127.0.0.1:%d" % srv.port)
    if not args.no_unix:
        cmd.append("--mysql-unix-socket=unix=%s" % srv.unix_socket)
    cmd += args.pytest_args
    print("== %s: %s" % (which, " ".join(cmd)), flush=True)
    with open(os.path.join(base, "pytest.log"), "w") as log:
        proc = subprocess.run(cmd, cwd=base, env=env, stdout=log, stderr=subprocess.STDOUT,
                              timeout=args.timeout)
    with open(os.path.join(base, "pytest.log")) as log:
        tail = log.read().splitlines()[-1:]
    print("   exit %d, %s (log: %s)" % (proc.returncode, " ".join(tail),
                                        os.path.join(base, "pytest.log")), flush=True)
    xml = os.path.join(base, "junit.xml")
    return outcomes(xml) if os.path.exists(xml) else {}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="0.3.2", help="aiomysql release (0.3.2)")
    parser.add_argument("--workdir", default=os.path.join(ROOT, "build", "aiomysql-suite"))
    parser.add_argument("--pymysql", default="1.1.2",
                        help="PyMySQL release for the real run (1.1.2, aiomysql's CI pin)")
    parser.add_argument("--only", choices=("flavour", "real", "aio"),
                        help="one run; 'aio': mysqlc.aio itself as aiomysql (not in the "
                             "default runs)")
    parser.add_argument("--no-unix", action="store_true", help="no unix-socket runs")
    parser.add_argument("--no-tcp", action="store_true", help="no TCP (TLS) runs")
    parser.add_argument("--tb", default="line", help="pytest --tb (line)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    parser.add_argument("--test-timeout", type=int, default=60,
                        help="seconds per test phase (setup, call, teardown)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    workdir = os.path.abspath(args.workdir)
    os.makedirs(workdir, exist_ok=True)
    src = fetch(args.version, workdir)
    tls = make_tls_files(os.path.join(workdir, "tls"))
    results = {}
    extra = ["--ssl-ca=" + tls["ca"], "--ssl-cert=" + tls["cert"], "--ssl-key=" + tls["key"]]
    try:
        srv = PrivateServer(extra_args=extra).start()
    except ServerNotAvailable as exc:   # a busy machine: once more, as tests/conftest.py
        print("private server did not start, retrying once: %s" % str(exc)[:200])
        srv = PrivateServer(extra_args=extra).start()
    with srv:
        set_root_password(srv)
        print("server %s, port %d, socket %s" % (srv.version, srv.port, srv.unix_socket))
        for which in ("real", "flavour", "aio"):
            if args.only == which or (args.only is None and which != "aio"):
                results[which] = run(which, src, workdir, srv, args)
    for which, res in results.items():
        tally = count(res)
        print("%-8s %d tests: %s" % (which, len(res), ", ".join(
            "%d %s" % (n, k) for k, n in sorted(tally.items()))))
    if len(results) == 2:
        real, flav = results["real"], results["flavour"]
        worse = sorted(t for t, k in real.items() if k == "passed" and flav.get(t) != "passed")
        better = sorted(t for t, k in flav.items() if k == "passed" and real.get(t) != "passed")
        print("passed on real aiomysql, not on the flavour (%d):" % len(worse))
        for t in worse:
            print("  %s  [%s]" % (t, flav.get(t, "missing")))
        print("passed on the flavour, not on real aiomysql (%d):" % len(better))
        for t in better:
            print("  %s  [%s]" % (t, real.get(t, "missing")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
