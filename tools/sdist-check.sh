#!/usr/bin/env bash
# Check that the sdist is enough to build mysqlc and run its tests: unpack it into a
# temporary directory, build the extension there (in place, warnings fail), check that
# the files the README and the tests refer to are present, and run a test subset from
# the unpacked tree: the unit tests and the server smoke set of tests/smoke.txt, plus
# tests/test_packaging.py (which reads the unpacked pyproject.toml and LICENSE).
#
#   bash tools/sdist-check.sh [dist/mysqlc-VERSION.tar.gz]
#
# Without an argument the sdist is built first (python -m build --sdist, into dist/).
# PYTHON (default .venv/bin/python, else /work/main/.venv/bin/python's kind: any Python
# with setuptools>=77, pytest and tests/requirements-smoke.txt) builds and runs the tests.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. tools/_python.sh
export CI="${CI:-true}"
say() { echo "sdist-check: $*" >&2; }
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || { say "no $PY (run tools/bootstrap.sh, or set PYTHON)"; exit 1; }

SDIST="${1:-}"
if [ -z "$SDIST" ]; then
    TOOLS_PY=$(tools_venv)
    VERSION=$("$PY" -c 'import runpy; print(runpy.run_path("mysqlc/_version.py")["__version__"])')
    rm -f dist/mysqlc-"$VERSION".tar.gz
    "$TOOLS_PY" -m build --sdist --installer pip --outdir dist . >/dev/null
    SDIST=dist/mysqlc-"$VERSION".tar.gz
fi
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mysqlc-sdist.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
tar -xzf "$SDIST" -C "$TMP"
SRC=$(ls -d "$TMP"/mysqlc-*/)
say "unpacked $SDIST into $SRC"

# what the README links to and the tests read must be in the archive
missing=0
for f in LICENSE README.md CHANGELOG.md MANIFEST.in pyproject.toml setup.py mysqlc/py.typed mysqlc/_core.pyi \
         docs/conf.py docs/index.rst docs/requirements.txt docs/packaging.md \
         tests/conftest.py tests/_certs.py tests/_peer.py tests/requirements.txt \
         tests/requirements-smoke.txt tests/smoke.txt tests/django_project/manage.py \
         tests/sqla/README.md tools/bootstrap.sh tools/test.sh tools/wheel.sh tools/matrix.sh \
         tools/docs.sh tools/typecheck.sh tests/typing/usage.py tests/requirements-typing.txt \
         tools/installed-tests.sh fuzz/run.sh .ci/run benchmarks/bench.py; do
    [ -e "$SRC/$f" ] || { say "missing from the sdist: $f"; missing=1; }
done
for link in $(grep -oE '\]\((docs|benchmarks)/[^)#]*' README.md | sed 's/^](//'); do
    [ -e "$SRC/$link" ] || { say "README link target missing from the sdist: $link"; missing=1; }
done
[ "$(ls "$SRC"/fuzz/corpus | wc -l)" -gt 0 ] || { say "no fuzz corpus in the sdist"; missing=1; }
if find "$SRC" -name '*.so' -o -name '__pycache__' -o -name '*.o' | grep -q .; then
    say "build products in the sdist:"; find "$SRC" -name '*.so' -o -name '__pycache__' -o -name '*.o' >&2
    missing=1
fi
[ "$missing" = 0 ] || exit 1

cd "$SRC"
if ! "$PY" setup.py -q build_ext --inplace >build.log 2>&1; then
    cat build.log >&2; say "build failed"; exit 1
fi
if grep -E "$COMPILER_DIAGNOSTIC" build.log >&2; then say "compiler warnings (above)"; exit 1; fi

# the tests import mysqlc from the unpacked tree
export PYTHONPATH="$SRC"
"$PY" -c "import mysqlc, sys; assert mysqlc.__file__.startswith('$SRC'), mysqlc.__file__; print('sdist-check: mysqlc from', mysqlc.__file__)"
set -f
UNIT=$(awk '$1=="unit"{print $2}' tests/smoke.txt)
SMOKE=$(awk '$1=="smoke"{print $2}' tests/smoke.txt)
status=0
# shellcheck disable=SC2086
timeout --kill-after=30 900 "$PY" -m pytest -p no:cacheprovider -q -m "not server" \
    tests/test_packaging.py $UNIT || status=$?
# shellcheck disable=SC2086
timeout --kill-after=30 900 "$PY" -m pytest -p no:cacheprovider -q $SMOKE || {
    s=$?; [ "$status" = 0 ] && status=$s; }
[ "$status" = 0 ] && say "ok: $SDIST builds and its tests pass from the unpacked tree"
exit "$status"
