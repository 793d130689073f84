#!/usr/bin/env bash
# aiomysql's own test suite against mysqlc's aiomysql flavour and against real aiomysql
# (the baseline), on a private server: see tools/aiomysql_suite.py.  A dev tool (it
# fetches the aiomysql sdist with pip), not part of .ci/run.
#
#   bash tools/aiomysql-suite.sh [--only flavour|real] [--no-unix] [--no-tcp] [-- PYTEST-ARGS]
#
# Runs with the test venv .venv (tools/bootstrap.sh; it has PyMySQL, uvloop, pytest).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${SUITE_PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || { echo "aiomysql-suite: no $PY (run tools/bootstrap.sh)" >&2; exit 1; }
exec "$PY" "$ROOT/tools/aiomysql_suite.py" "$@"
