#!/usr/bin/env bash
# Run the test set of tests/smoke.txt against the mysqlc installed in PYTHON's environment,
# from a temporary directory holding a copy of tests/ (and fuzz/corpus, which a unit test
# replays): the source tree is not importable there, and the script checks that the
# mysqlc imported is the one in that environment's site-packages.
#
#   bash tools/installed-tests.sh PYTHON [pytest arguments...]
#
# Environment: CI (default true here: a skipped test fails the run, tests/conftest.py),
# MYSQLC_INSTALLED_TIMEOUT (seconds for each pytest run, default 900).
# Used by tools/wheel.sh, tools/matrix.sh and tools/sdist-check.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="$1"; shift
export CI="${CI:-true}"
LIMIT="${MYSQLC_INSTALLED_TIMEOUT:-900}"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/mysqlc-installed.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
cp -r "$ROOT/tests" "$TMP/tests"
mkdir -p "$TMP/fuzz" && cp -r "$ROOT/fuzz/corpus" "$TMP/fuzz/corpus"
find "$TMP/tests" -name __pycache__ -prune -exec rm -rf {} +
cd "$TMP"

# The package must come from PYTHON's site-packages: not the source tree, not PYTHONPATH.
unset PYTHONPATH
"$PY" - "$ROOT" <<'PYEOF'
import os, sys, sysconfig
import mysqlc, mysqlc._core
root = os.path.realpath(sys.argv[1])
site = os.path.realpath(sysconfig.get_paths()["platlib"])
pkg = os.path.realpath(os.path.dirname(mysqlc.__file__))
core = os.path.realpath(mysqlc._core.__file__)
print("installed-tests: mysqlc %s from %s (Python %s)" % (mysqlc.__version__, pkg,
                                                        sys.version.split()[0]))
assert pkg == os.path.join(site, "mysqlc"), "mysqlc is not the installed one: %s" % pkg
assert os.path.dirname(core) == pkg, core
assert pkg != os.path.join(root, "mysqlc"), "mysqlc imported from the source tree"
PYEOF

set -f   # node ids with [...] are no file patterns
UNIT=$(awk '$1=="unit"{print $2}' tests/smoke.txt)
SMOKE=$(awk '$1=="smoke"{print $2}' tests/smoke.txt)
status=0
# shellcheck disable=SC2086
timeout --kill-after=30 "$LIMIT" "$PY" -m pytest -p no:cacheprovider -q -m "not server" \
    $UNIT "$@" || status=$?
# shellcheck disable=SC2086
timeout --kill-after=30 "$LIMIT" "$PY" -m pytest -p no:cacheprovider -q $SMOKE "$@" || {
    s=$?; [ "$status" = 0 ] && status=$s; }
if [ "$status" = 5 ]; then echo "installed-tests: pytest collected no tests" >&2; fi
exit "$status"
