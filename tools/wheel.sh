#!/usr/bin/env bash
# Build the release artefacts and test the wheel as a user gets it.
#
#   bash tools/wheel.sh
#
#  1. python -m build: the sdist, then the wheel built from that sdist (dist/), with a
#     compiler warning failing the run;
#  2. auditwheel repair: a manylinux wheel with libssl and libcrypto grafted into
#     mysqlc.libs/ (libz.so.1 is on the manylinux policy's list of libraries every system
#     has, so it stays the system's) in dist/wheelhouse/; `auditwheel show` goes to
#     dist/auditwheel-show.txt;
#  3. the test packages of tests/requirements-smoke.txt are downloaded once into a local
#     wheelhouse (.venv-matrix/wheelhouse-cpXY/, reused: the network is needed only the
#     first time, never for mysqlc itself);
#  4. a machine without libssl-dev, zlib1g-dev, libmariadb-dev or a compiler is simulated:
#     in a private mount namespace (unshare -m) /usr/include is replaced by an empty tmpfs,
#     and PATH holds every command of the system except the C/C++ compilers and binutils;
#     there a fresh venv gets the test packages and the repaired wheel with pip
#     --no-index (the wheel from its file only), the installed extension's libssl and
#     libcrypto must resolve (ldd) to the wheel's own mysqlc.libs/ copies, and
#     tools/installed-tests.sh runs the unit tests and the server smoke set of
#     tests/smoke.txt from a copy of tests/ (mysqlc imported from the venv's
#     site-packages, checked). Without unshare (not root) only PATH is restricted.
#
# Builds for CPython 3.11 (pyenv's, else python3.11 on PATH).  Environment: CI (default true).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. tools/_python.sh
export CI="${CI:-true}"
say() { echo "wheel: $*" >&2; }

PY=$(find_python 3.11) || { say "no CPython 3.11 found"; exit 1; }
TOOLS_PY=$(tools_venv)
TOOLS_BIN=$(dirname "$TOOLS_PY")
TAG=$("$PY" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
VERSION=$("$PY" -c 'import runpy; print(runpy.run_path("mysqlc/_version.py")["__version__"])')

# ---- 1. sdist and wheel ----------------------------------------------------------------
rm -rf dist/wheelhouse dist/mysqlc-"$VERSION"* dist/auditwheel-show.txt dist/build.log
mkdir -p dist
say "building sdist and wheel for $TAG with $PY"
# build's isolated environment uses the tools venv's CPython 3.11; the wheel is built
# from the sdist (so a file missing from MANIFEST.in fails here)
if ! "$TOOLS_PY" -m build --installer pip --outdir dist . >dist/build.log 2>&1; then
    cat dist/build.log >&2; say "build failed"; exit 1
fi
if grep -E "$COMPILER_DIAGNOSTIC" dist/build.log; then
    say "the build printed compiler warnings (above; log in dist/build.log)"; exit 1
fi
WHEEL=$(ls dist/mysqlc-"$VERSION"-"$TAG"-"$TAG"-linux_*.whl)
SDIST=dist/mysqlc-"$VERSION".tar.gz
[ -f "$SDIST" ] || { say "no sdist $SDIST"; exit 1; }

# ---- 2. auditwheel -----------------------------------------------------------------------
say "auditwheel repair $WHEEL"
PATH="$TOOLS_BIN:$PATH" "$TOOLS_BIN/auditwheel" repair -w dist/wheelhouse "$WHEEL" >&2
REPAIRED=$(ls dist/wheelhouse/mysqlc-"$VERSION"-"$TAG"-"$TAG"-*manylinux*.whl)
"$TOOLS_BIN/auditwheel" show "$REPAIRED" | tee dist/auditwheel-show.txt >&2
# OpenSSL's licence (Apache-2.0) travels with the copies of its libraries: the build
# machine's copyright file of the package the grafted libssl came from, and the licence
UNPACK="$(mktemp -d "${TMPDIR:-/tmp}/mysqlc-unpack.XXXXXX")"
"$TOOLS_PY" -m wheel unpack -d "$UNPACK" "$REPAIRED" >&2
UNPACKED=$(ls -d "$UNPACK"/mysqlc-*)
LIBSSL_PKG=$(dpkg -S "$(ldconfig -p | awk '/libssl\.so\.3 .*x86-64/{print $NF; exit}')" 2>/dev/null \
             | cut -d: -f1 | head -1) || true
COPYRIGHT="/usr/share/doc/${LIBSSL_PKG:-libssl3}/copyright"
{
    echo "The libssl and libcrypto in this directory are OpenSSL $("$TOOLS_PY" -c 'import ssl; print(ssl.OPENSSL_VERSION.split()[1])'),"
    echo "copied from the build machine's ${LIBSSL_PKG:-libssl3} package by auditwheel. Its copyright"
    echo "file and the Apache License 2.0 follow."
    echo
    cat "$COPYRIGHT"
    echo
    cat /usr/share/common-licenses/Apache-2.0
} >"$UNPACKED/mysqlc.libs/LICENSE.OpenSSL.txt"
rm -f "$REPAIRED"
"$TOOLS_PY" -m wheel pack -d dist/wheelhouse "$UNPACKED" >&2
rm -rf "$UNPACK"
[ -f "$REPAIRED" ] || { say "wheel pack did not write $REPAIRED"; exit 1; }
"$TOOLS_PY" - "$REPAIRED" <<'PYEOF'
# what a user's pip sees: LICENSE, py.typed, the grafted libraries, the metadata
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
meta = [n for n in names if n.endswith(".dist-info/METADATA")][0]
text = zipfile.ZipFile(sys.argv[1]).read(meta).decode()
libs = [n for n in names if n.startswith("mysqlc.libs/")]
print("wheel: %s\n  grafted: %s" % (sys.argv[1], ", ".join(sorted(libs))), file=sys.stderr)
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "no LICENSE"
assert "mysqlc/py.typed" in names, "no py.typed"
assert "mysqlc/_core.pyi" in names, "no _core.pyi (the C module's type stub)"
assert "mysqlc.libs/LICENSE.OpenSSL.txt" in names, "no OpenSSL licence"
for lib in ("libssl", "libcrypto"):   # libz.so.1 is on the manylinux policy's list of
    assert any(n.split("/")[-1].startswith(lib) for n in libs), "%s not grafted" % lib
# system libraries (every glibc system has it), so auditwheel leaves it out
assert "License-Expression: MIT" in text, "no License-Expression"
for extra in ("arrow", "pandas", "polars", "numpy", "ed25519", "sqlalchemy", "all"):
    assert "Provides-Extra: %s" % extra in text, extra
PYEOF

# ---- 3. local wheelhouse of the test packages --------------------------------------------
WH="$MATRIX_DIR/wheelhouse-$TAG"
REQ=tests/requirements-smoke.txt
mkdir -p "$WH"
if ! req_stamp_ok "$WH" "$REQ"; then
    say "downloading the test packages into $WH (once)"
    "$PY" -m pip download -q -d "$WH" -r "$REQ"
    req_stamp_set "$WH" "$REQ"
fi

# ---- 4. the machine without compiler and headers ---------------------------------------
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mysqlc-wheel.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/bin"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
    [ -d "$d" ] || continue
    for f in "$d"/*; do
        n=$(basename "$f")
        case "$n" in   # compilers, preprocessors, assemblers, linkers: left out
            gcc|gcc-*|cc|c++|g++|g++-*|cpp|cpp-*|c89|c99|c89-gcc|c99-gcc|clang*|tcc|\
            *-gcc|*-gcc-*|*-g++|*-g++-*|*-cpp|*-cpp-*|ld|ld.*|*-ld|*-ld.*|as|*-as|\
            pkg-config|pkgconf|*-pkg-config|mariadb_config|mysql_config) continue ;;
        esac
        [ -e "$TMP/bin/$n" ] || ln -s "$f" "$TMP/bin/$n"
    done
done
cat >"$TMP/inside.sh" <<INSIDE
set -euo pipefail
export PATH="$TMP/venv/bin:$TMP/bin"
if [ "\${HIDE_INCLUDE:-0}" = 1 ]; then
    mount -t tmpfs -o ro,size=1m none /usr/include
fi
for tool in gcc cc c++ ld pkg-config; do
    if command -v \$tool >/dev/null 2>&1; then echo "wheel: \$tool is on PATH" >&2; exit 1; fi
done
for h in openssl/ssl.h zlib.h mariadb/mysql.h; do
    if [ -e /usr/include/\$h ]; then echo "wheel: note: /usr/include/\$h still visible (no unshare)" >&2; fi
done
echo "wheel: simulated machine: PATH without compilers; /usr/include has \$(ls /usr/include | wc -l) entries" >&2
"$PY" -m venv "$TMP/venv"
pip install -q --no-index --only-binary :all: --find-links "$WH" -r "$ROOT/$REQ"
echo "wheel: pip install --no-index --only-binary :all: $REPAIRED" >&2
pip install --no-index --only-binary :all: "$ROOT/$REPAIRED"
SITE=\$(python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
CORE=\$(ls "\$SITE"/mysqlc/_core*.so)
echo "wheel: ldd \$CORE" >&2
ldd "\$CORE" | tee "$TMP/ldd.txt" >&2
python - "$TMP/ldd.txt" "\$SITE" <<'PYEOF'
import os, sys
site = os.path.realpath(sys.argv[2])
lines = open(sys.argv[1]).read().splitlines()
assert not [l for l in lines if "not found" in l], "unresolved libraries"
def resolved(lib):
    hits = [l.split("=>")[1].split("(")[0].strip() for l in lines
            if "=>" in l and l.split()[0].startswith(lib)]
    assert hits, "%s is not loaded" % lib
    return [os.path.realpath(p) for p in hits]
for lib in ("libssl", "libcrypto"):
    for path in resolved(lib):
        assert path.startswith(os.path.join(site, "mysqlc.libs") + os.sep), \
            "%s resolves to %s, not the wheel's mysqlc.libs/" % (lib, path)
for path in resolved("libz.so.1"):   # the system's runtime zlib (manylinux policy)
    assert not path.startswith(site), path
print("wheel: libssl and libcrypto resolve to %s/mysqlc.libs/, libz.so.1 to the "
      "system's %s" % (site, resolved("libz.so.1")[0]), file=sys.stderr)
PYEOF
bash "$ROOT/tools/installed-tests.sh" "$TMP/venv/bin/python"
INSIDE
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 \
        && unshare -m --propagation private true 2>/dev/null; then
    HIDE_INCLUDE=1 unshare -m --propagation private bash "$TMP/inside.sh"
else
    say "no unshare (needs root): only PATH is restricted, headers stay visible"
    bash "$TMP/inside.sh"
fi
say "ok: $REPAIRED (auditwheel show in dist/auditwheel-show.txt)"
