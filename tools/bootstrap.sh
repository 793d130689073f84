#!/usr/bin/env bash
# Set up a development environment for mysqlc on a Debian/Ubuntu machine.
# Idempotent: installs only what is missing, so re-running it is cheap.
#
#   bash tools/bootstrap.sh            build tools, headers, MariaDB server, .venv with
#                                      mysqlc (editable, C extension built in place), pytest
#                                      and tests/requirements.txt
#   bash tools/bootstrap.sh --peers    also the peer drivers PyMySQL and mysqlclient
#                                      (for the demo)
#   bash tools/bootstrap.sh --bench    --peers, and the benchmarks' other peers and tools:
#                                      mysql-connector-python, MariaDB Connector/Python,
#                                      connectorx, asyncmy, aiomysql, uvloop, matplotlib
#
# Environment: PYTHON (default python3) is the interpreter the venv is made from.
# When MYSQLC_TEST_DSN is set no local MariaDB server is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

PEERS=0
BENCH=0
for arg in "$@"; do
    case "$arg" in
        --peers) PEERS=1 ;;
        --bench) PEERS=1; BENCH=1 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bootstrap: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

PY="${PYTHON:-python3}"
VENV=.venv
say() { echo "bootstrap: $*" >&2; }

SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
fi

have_server_binary() {
    local d IFS=:
    for d in $PATH:/usr/sbin:/usr/local/sbin:/usr/libexec:/usr/local/mysql/bin; do
        if [ -x "$d/mariadbd" ] || [ -x "$d/mysqld" ]; then return 0; fi
    done
    [ -n "${MYSQLC_SERVER_BINARY:-}" ] && [ -x "$MYSQLC_SERVER_BINARY" ]
}

has_header() {   # has_header <pkg-config name> <header below /usr/include>
    { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$1"; } || [ -f "/usr/include/$2" ]
}

# ---- system packages --------------------------------------------------------------
missing=()
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! command -v "$PY" >/dev/null 2>&1; then
    missing+=(python3 python3-venv)
elif ! "$PY" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    missing+=(python3-dev)
fi
has_header libcrypto openssl/evp.h || missing+=(libssl-dev)
has_header zlib zlib.h || missing+=(zlib1g-dev)
if [ -z "${MYSQLC_TEST_DSN:-}" ] && ! have_server_binary; then
    missing+=(mariadb-server)
fi
# MariaDB client headers: mysqlclient (a test requirement, the reference driver of
# tests/test_pandas.py, and a benchmark peer) builds from source against them.
has_header libmariadb mariadb/mysql.h || has_header mysqlclient mysql/mysql.h || missing+=(libmariadb-dev)

APT_UPDATED=0
apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        say "missing packages ($*) and no apt-get here; install their equivalents by hand"
        return 1
    fi
    if [ "$(id -u)" != 0 ] && [ -z "$SUDO" ]; then
        say "missing packages ($*): not root and no sudo; install them by hand"
        return 1
    fi
    if [ "$APT_UPDATED" = 0 ]; then
        say "apt-get update"
        $SUDO apt-get update -qq
        APT_UPDATED=1
    fi
    say "apt-get install $*"
    # policy-rc.d keeps package scripts from starting services (e.g. the system MariaDB)
    local policy=/usr/sbin/policy-rc.d made_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
        $SUDO chmod 755 "$policy"
        made_policy=1
    fi
    local rc=0
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 || rc=$?
    if [ "$made_policy" = 1 ]; then $SUDO rm -f "$policy"; fi
    return $rc
}

if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}" || say "WARNING: could not install: ${missing[*]}"
fi

# ---- virtual environment ------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
    rm -rf "$VENV"
    say "creating $VENV"
    if ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
        rm -rf "$VENV"
        pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
        apt_install python3-venv "python$pyver-venv" || apt_install python3-venv || true
        "$PY" -m venv "$VENV"
    fi
fi
VPY="$VENV/bin/python"

if ! "$VPY" -c 'import setuptools, wheel, pytest, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 77)' 2>/dev/null; then
    say "installing pip, setuptools, wheel, pytest into $VENV"
    "$VPY" -m pip install -q --upgrade pip
    "$VPY" -m pip install -q --upgrade "setuptools>=77" wheel pytest   # 77: pyproject's PEP 639 licence
fi

# Test-only Python packages (SQLAlchemy, hypothesis, ...): tests/requirements.txt.
# Installed only when the file changed since the last successful install.
REQ=tests/requirements.txt
if [ -f "$REQ" ]; then
    stamp="$VENV/.requirements.sha256"
    want=$(sha256sum "$REQ" | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        say "installing test requirements ($REQ)"
        "$VPY" -m pip install -q -r "$REQ"
        echo "$want" >"$stamp"
    fi
fi

# Rebuild the extension every time (sources may have changed); no network needed.
# Quiet on success except for compiler warnings; everything on failure.
say "building mysqlc (pip install -e .)"
build_log="$VENV/build.log"
if ! "$VPY" -m pip install -v --no-build-isolation --no-deps -e . >"$build_log" 2>&1; then
    cat "$build_log" >&2
    say "ERROR: building mysqlc failed (log above, also in $build_log)"
    exit 1
fi
grep -E '(warning|error): ' "$build_log" | grep -Ev 'BuildBackendWarning|SetuptoolsDeprecationWarning' >&2 || true

# ---- peer drivers -------------------------------------------------------------------
if [ "$PEERS" = 1 ]; then
    if ! "$VPY" -c 'import pymysql' 2>/dev/null; then
        say "installing PyMySQL"
        "$VPY" -m pip install -q PyMySQL || say "WARNING: PyMySQL could not be installed"
    fi
    if ! "$VPY" -c 'import MySQLdb' 2>/dev/null; then
        say "installing mysqlclient"
        "$VPY" -m pip install -q mysqlclient \
            || say "WARNING: mysqlclient could not be installed (needs libmariadb-dev and pkg-config); continuing without it"
    fi
fi
if [ "$BENCH" = 1 ]; then
    # the other peers of benchmarks/bench.py, bench_columnar.py and bench_async.py (asyncmy,
    # aiomysql, uvloop), and the chart
    for spec in mysql.connector:mysql-connector-python mariadb:mariadb connectorx:connectorx \
                asyncmy:asyncmy aiomysql:aiomysql uvloop:uvloop matplotlib:matplotlib; do
        mod="${spec%%:*}" pkg="${spec#*:}"
        if ! "$VPY" -c "import $mod" 2>/dev/null; then
            say "installing $pkg"
            "$VPY" -m pip install -q "$pkg" \
                || say "WARNING: $pkg could not be installed; the benchmarks report it as skipped"
        fi
    done
fi
say "ready: $VPY"
