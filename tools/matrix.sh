#!/usr/bin/env bash
# Build mysqlc and run the unit tests plus the server smoke set (tests/smoke.txt) on every
# CPython 3.9+ on this machine (pyenv's, else pythonX.Y on PATH).
#
#   bash tools/matrix.sh [X.Y ...]       default: 3.9 3.10 3.11 3.12 3.13 and any newer
#                                        3.N that pyenv has
#   MATRIX_SKIP="3.11" bash tools/matrix.sh   the same without the versions listed
#                                        (.ci/run: 3.11's installed build is tested by
#                                        tools/wheel.sh and tools/sdist-check.sh)
#
# For each version: a venv .venv-matrix/pyX.Y (kept and reused; the packages of
# tests/requirements-smoke.txt and setuptools are installed only when that file changed),
# a build of the extension from a copy of the work tree, installed into that venv with
# pip (non-editable), which fails on any compiler warning, then tools/installed-tests.sh
# from a copy of tests/.  An absent version is skipped with the reason printed, except
# 3.11 (CI's interpreter), whose absence fails the run.  A table of the results ends the
# output; the exit status is non-zero if any version failed.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. tools/_python.sh
export CI="${CI:-true}"
REQUIRED=3.11
REQ=tests/requirements-smoke.txt
say() { echo "matrix: $*" >&2; }

if [ "$#" -gt 0 ]; then
    VERSIONS=("$@")
else
    VERSIONS=(3.9 3.10 3.11 3.12 3.13)
    if command -v pyenv >/dev/null 2>&1; then   # newer minors than the list knows
        for v in $(pyenv versions --bare | grep -E '^3\.(1[4-9]|[2-9][0-9])\.[0-9]+$' \
                   | cut -d. -f1,2 | sort -u -t. -k2,2n); do
            VERSIONS+=("$v")
        done
    fi
fi

SRC="$(mktemp -d "${TMPDIR:-/tmp}/mysqlc-matrix.XXXXXX")"
trap 'rm -rf "$SRC"' EXIT
# the work tree as it is (uncommitted changes too), without build products
tar --exclude=./.git --exclude='./.venv*' --exclude=./build --exclude=./dist \
    --exclude='*.so' --exclude='*.o' --exclude=./fuzz/build --exclude='*.egg-info' \
    --exclude=__pycache__ --exclude=./docs/_build -cf - . | tar -xf - -C "$SRC"

results=()
failed=0
for ver in "${VERSIONS[@]}"; do
    t0=$(date +%s)
    if [[ " ${MATRIX_SKIP:-} " == *" $ver "* ]]; then
        say "CPython $ver: left out (MATRIX_SKIP: its installed build is tested by another step)"
        results+=("$ver left out (MATRIX_SKIP)")
        continue
    fi
    if ! py=$(find_python "$ver"); then
        if [ "$ver" = "$REQUIRED" ]; then
            say "CPython $ver: not found (pyenv versions / python$ver), and it must run"
            results+=("$ver FAIL (not found; required)"); failed=1
        else
            say "CPython $ver: skipped: no such interpreter on this machine (pyenv versions: $(pyenv versions --bare 2>/dev/null | tr '\n' ' '))"
            results+=("$ver skipped (not on this machine)")
        fi
        continue
    fi
    full=$("$py" -c 'import sys; print(sys.version.split()[0])')
    venv="$MATRIX_DIR/py$ver"
    say "CPython $full ($py): venv $venv"
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c '' 2>/dev/null; then
        rm -rf "$venv"; mkdir -p "$MATRIX_DIR"
        "$py" -m venv "$venv" || { results+=("$ver FAIL (venv)"); failed=1; continue; }
    fi
    if ! req_stamp_ok "$venv" "$REQ"; then
        say "CPython $ver: installing $REQ and setuptools>=77 into $venv"
        if ! "$venv/bin/python" -m pip install -q --upgrade pip "setuptools>=77" wheel -r "$REQ"; then
            results+=("$ver FAIL (test packages)"); failed=1; continue
        fi
        req_stamp_set "$venv" "$REQ"
    fi
    log="$venv/build.log"
    rm -rf "$SRC/build" "$SRC"/*.egg-info
    if ! "$venv/bin/python" -m pip install -v --no-build-isolation --no-deps --no-cache-dir \
            --force-reinstall "$SRC" >"$log" 2>&1; then
        tail -50 "$log" >&2
        say "CPython $ver: build failed (log: $log)"
        results+=("$ver FAIL (build)"); failed=1; continue
    fi
    if ! grep -q 'gcc' "$log"; then
        say "CPython $ver: the build log shows no compiler run ($log)"
        results+=("$ver FAIL (no compile)"); failed=1; continue
    fi
    if grep -E "$COMPILER_DIAGNOSTIC" "$log" >&2; then
        say "CPython $ver: compiler warnings (above; log: $log)"
        results+=("$ver FAIL (compiler warnings)"); failed=1; continue
    fi
    tlog="$venv/tests.log"
    if bash tools/installed-tests.sh "$venv/bin/python" 2>&1 | tee "$tlog"; then
        counts=$(grep -E '^[0-9]+ (passed|failed)' "$tlog" | sed 's/ in [0-9.]*s.*//' | paste -sd '+' -)
        results+=("$full ok, warning-free build; unit + smoke: $counts ($(( $(date +%s) - t0 )) s)")
    else
        counts=$(grep -E '^[0-9]+ (passed|failed)|[0-9]+ failed' "$tlog" | tail -2 | paste -sd '+' -)
        results+=("$full FAIL (tests: $counts)"); failed=1
    fi
done

echo "matrix results:"
for r in "${results[@]}"; do echo "  $r"; done
exit "$failed"
