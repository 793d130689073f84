#!/usr/bin/env bash
# Run the peer drivers' own test suites on mysqlc (a dev tool; not part of .ci/run).
#
#   bash tools/peer-suites.sh [mysqlclient|pymysql|all] [--baseline|--only-baseline]
#                             [-- extra pytest arguments]
#
# mysqlclient's suite (tests/ of its sdist) runs with mysqlc.install_as_MySQLdb(),
# PyMySQL's (pymysql/tests of its repository) with mysqlc.install_as_pymysql(), each
# against one private server from mysqlc/server.py (started here, removed at the end).
# --baseline also runs each suite on the real driver (installed in the venv, as
# `bootstrap.sh --peers` does) on the same server; --only-baseline runs only that.
# Prints one line of counts per run and keeps the pytest logs in $WORK/logs.
#
# Where the suites come from:
#   mysqlclient  the sdist of $MYSQLCLIENT_VERSION (default: the installed
#                mysqlclient's version), fetched with `pip download --no-binary :all:`
#   PyMySQL      its sdists carry no test suite (only tests/test_auth.py), so the tests
#                come from a git checkout of the PyMySQL repository: $PYMYSQL_REPO (a
#                work tree or a bare git dir; $PYMYSQL_REF, default HEAD, is exported)
#
# Environment: PYTHON (default .venv/bin/python), WORK (default /tmp/mysqlc-peer-suites;
# reused between runs, delete it to fetch again), MYSQLCLIENT_VERSION, PYMYSQL_REPO,
# PYMYSQL_REF.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY="${PYTHON:-$ROOT/.venv/bin/python}"
WORK="${WORK:-/tmp/mysqlc-peer-suites}"

WHICH=all
BASELINE=0
ONLY_BASELINE=0
EXTRA=()
while [ $# -gt 0 ]; do
    case "$1" in
        mysqlclient|pymysql|all) WHICH=$1 ;;
        --baseline) BASELINE=1 ;;
        --only-baseline) BASELINE=1; ONLY_BASELINE=1 ;;
        --) shift; EXTRA=("$@"); break ;;
        -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "peer-suites: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
say() { echo "peer-suites: $*" >&2; }
mkdir -p "$WORK/logs"

# ---------------------------------------------------------------- fetch the suites
fetch_mysqlclient() {
    local ver="${MYSQLCLIENT_VERSION:-}"
    if [ -z "$ver" ]; then
        ver=$("$PY" -c 'import importlib.metadata as m; print(m.version("mysqlclient"))' \
              2>/dev/null || true)
    fi
    [ -n "$ver" ] || { say "set MYSQLCLIENT_VERSION (mysqlclient is not installed)"; exit 2; }
    MC_DIR="$WORK/mysqlclient-$ver"
    if [ ! -d "$MC_DIR/tests" ]; then
        "$PY" -m pip download -q --no-deps --no-binary :all: "mysqlclient==$ver" -d "$WORK/dl"
        tar xzf "$WORK/dl/mysqlclient-$ver.tar.gz" -C "$WORK"
    fi
    MC_VERSION=$ver
}

fetch_pymysql() {
    local repo="${PYMYSQL_REPO:-}" ref="${PYMYSQL_REF:-HEAD}"
    PM_DIR="$WORK/pymysql-suite"
    if [ ! -d "$PM_DIR/pymysql/tests" ]; then
        [ -n "$repo" ] || { say "set PYMYSQL_REPO to a git checkout of PyMySQL"; exit 2; }
        local gitdir="$repo"
        [ -d "$repo/.git" ] && gitdir="$repo/.git"
        mkdir -p "$PM_DIR"
        git --git-dir="$gitdir" archive "$ref" pymysql/tests | tar x -C "$PM_DIR"
        git --git-dir="$gitdir" log -1 --format='%H %cs' "$ref" > "$PM_DIR/REVISION"
    fi
}

case "$WHICH" in
    mysqlclient) fetch_mysqlclient ;;
    pymysql) fetch_pymysql ;;
    all) fetch_mysqlclient; fetch_pymysql ;;
esac

# ---------------------------------------------------------------- run them
export PEER_ROOT="$ROOT" PEER_WORK="$WORK" PEER_WHICH="$WHICH" PEER_BASELINE="$BASELINE"
export PEER_ONLY_BASELINE="$ONLY_BASELINE" PEER_MC_DIR="${MC_DIR:-}" PEER_PM_DIR="${PM_DIR:-}"
exec "$PY" - "${EXTRA[@]}" <<'PYEOF'
import json, os, re, subprocess, sys

root, work = os.environ["PEER_ROOT"], os.environ["PEER_WORK"]
which = os.environ["PEER_WHICH"]
baseline = os.environ["PEER_BASELINE"] == "1"
only_baseline = os.environ["PEER_ONLY_BASELINE"] == "1"
extra = sys.argv[1:]
sys.path.insert(0, root)
from mysqlc.server import PrivateServer  # noqa: E402

# conftest.py put at the root of each suite: installs mysqlc under the peer's name
# when PEER_DRIVER=mysqlc (the real driver otherwise)
MC_CONFTEST = '''\
import os
if os.environ.get("PEER_DRIVER") == "mysqlc":
    import mysqlc
    mysqlc.install_as_MySQLdb()
import MySQLdb
print("peer-suites: MySQLdb is", MySQLdb.__file__ if hasattr(MySQLdb, "__file__")
      else MySQLdb)
'''
# PyMySQL's tests import pymysql.tests.base: the suite's pymysql/ directory (tests
# only) is added to the package path of whichever pymysql is in use
PM_CONFTEST = '''\
import os
if os.environ.get("PEER_DRIVER") == "mysqlc":
    import mysqlc
    mysqlc.install_as_pymysql()
import pymysql
pymysql.__path__.append(os.path.join(os.path.dirname(__file__), "pymysql"))
'''


def summary(log):
    """{outcome: count} from pytest's last summary line."""
    text = open(log, encoding="utf-8", errors="replace").read()
    lines = [l for l in text.splitlines() if re.match(r"=+ .*\d+ \w+.* in [\d.]+s", l)]
    counts = {}
    if lines:
        for n, what in re.findall(r"(\d+) (\w+)", lines[-1]):
            counts[what] = int(n)
    return counts


def run(name, cwd, args, driver, env_extra):
    log = os.path.join(work, "logs", "%s-%s.log" % (name, driver))
    env = dict(os.environ, PEER_DRIVER=driver, **env_extra)
    env.pop("CI", None)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfEs",
           "-o", "addopts=", "-W", "ignore::DeprecationWarning"] + args + extra
    with open(log, "w") as out:
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    counts = summary(log)
    total = sum(counts.values())
    shown = ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))
    print("%-19s %-6s %3d tests: %s (rc %d; log %s)" % (name, driver, total, shown, rc, log),
          flush=True)
    return counts


srv = PrivateServer()
srv.start()
try:
    import pymysql as _setup   # the setup below uses real PyMySQL (pure Python)
    kw = srv.connect_kwargs(root=True)
    admin = _setup.connect(host=kw["host"], port=kw["port"], user=kw["user"],
                           password=kw["password"], autocommit=True)
    with admin.cursor() as c:
        for sql in (
            "CREATE DATABASE IF NOT EXISTS mysqldb_test CHARACTER SET utf8mb4",
            # PyMySQL's ci/docker-entrypoint-initdb.d/init.sql and mariadb.sql
            "CREATE DATABASE IF NOT EXISTS test1 CHARACTER SET utf8mb4",
            "CREATE DATABASE IF NOT EXISTS test2 CHARACTER SET utf8mb4",
            "CREATE USER IF NOT EXISTS test2 IDENTIFIED BY 'some password'",
            "GRANT ALL ON test2.* TO test2",
            "CREATE USER IF NOT EXISTS test2@localhost IDENTIFIED BY 'some password'",
            "GRANT ALL ON test2.* TO test2@localhost",
            "SET GLOBAL local_infile=on",
        ):
            c.execute(sql)
        try:
            c.execute('INSTALL SONAME "auth_ed25519"')
            c.execute('CREATE FUNCTION IF NOT EXISTS ed25519_password RETURNS STRING '
                      'SONAME "auth_ed25519.so"')
        except _setup.MySQLError as exc:
            print("peer-suites: auth_ed25519 not installed:", exc, file=sys.stderr)
    admin.close()
    print("peer-suites: server %s (%s)" % (srv.version, srv.dsn(root=True)), flush=True)

    results = {}
    drivers = (["real"] if baseline else []) + ([] if only_baseline else ["mysqlc"])
    if which in ("mysqlclient", "all"):
        mc_dir = os.environ["PEER_MC_DIR"]
        tests = os.path.join(mc_dir, "tests")
        with open(os.path.join(tests, "peer.cnf"), "w") as f:
            f.write("[MySQLdb-tests]\nhost = 127.0.0.1\nport = %d\nuser = root\n"
                    "database = mysqldb_test\ndefault-character-set = utf8mb4\n" % srv.port)
        with open(os.path.join(tests, "conftest.py"), "w") as f:
            f.write(MC_CONFTEST)
        for d in drivers:
            # run from an empty directory: mysqlclient's sdist has src/MySQLdb
            results[("mysqlclient", d)] = run(os.path.basename(mc_dir), tests, ["."], d,
                                              {"TESTDB": "peer.cnf"})
    if which in ("pymysql", "all"):
        pm_dir = os.environ["PEER_PM_DIR"]
        with open(os.path.join(pm_dir, "pymysql", "tests", "databases.json"), "w") as f:
            json.dump([
                {"host": "127.0.0.1", "port": srv.port, "user": "root", "password": "",
                 "database": "test1", "use_unicode": True, "local_infile": True},
                {"host": "127.0.0.1", "port": srv.port, "user": "test2",
                 "password": "some password", "database": "test2"},
                {"host": "localhost", "port": srv.port, "user": "test2",
                 "password": "some password", "database": "test2",
                 "unix_socket": srv.unix_socket},
            ], f)
        with open(os.path.join(pm_dir, "conftest.py"), "w") as f:
            f.write(PM_CONFTEST)
        for d in drivers:
            results[("pymysql", d)] = run("pymysql", pm_dir,
                                          ["--import-mode=importlib", "pymysql/tests"], d, {})
finally:
    srv.stop()
PYEOF
