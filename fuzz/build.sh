#!/usr/bin/env bash
# Build the libFuzzer harnesses (fuzz/fuzz_*.c) with AddressSanitizer + UBSan.
#
#   bash fuzz/build.sh            -> fuzz/build/<harness> binaries
#
# Each harness links the C core (src/*.c, compiled here with coverage instrumentation)
# and embeds the Python interpreter of .venv (or $PYTHON); see fuzz/common.h.
# Needs clang with libFuzzer (Debian: clang + libclang-rt-14-dev; tools/fuzz-deps.sh
# installs them).  Environment: CC (default clang), FUZZ_OUT (default fuzz/build),
# MYSQLC_TREE (default: this repository) the tree whose src/ and mysqlc/ are used.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CC="${CC:-clang}"
OUT="${FUZZ_OUT:-$ROOT/fuzz/build}"
TREE="$(cd "${MYSQLC_TREE:-$ROOT}" && pwd)"
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
command -v "$CC" >/dev/null || { echo "fuzz/build.sh: $CC not found (run tools/fuzz-deps.sh)" >&2; exit 1; }

read -r PYINC PYLIBDIR PYLDVER < <("$PYTHON" - <<'PY'
import sysconfig
v = sysconfig.get_config_var
print(sysconfig.get_paths()["include"], v("LIBDIR"), v("LDVERSION"))
PY
)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-g -O1 -fno-omit-frame-pointer $SAN -std=gnu99 -Wall -Wno-unused-parameter -Wno-unused-function -I$PYINC"
CFLAGS="$CFLAGS $(pkg-config --cflags libssl libcrypto zlib 2>/dev/null || true)"
LIBS="-L$PYLIBDIR -lpython$PYLDVER -Wl,-rpath,$PYLIBDIR $(pkg-config --libs libssl libcrypto zlib 2>/dev/null || echo -lssl -lcrypto -lz) -lm -lpthread -ldl -lutil"

mkdir -p "$OUT/obj"
objs=()
for src in "$TREE"/src/*.c; do
    obj="$OUT/obj/$(basename "${src%.c}").o"
    $CC $CFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
    objs+=("$obj")
done
built=()
for h in fuzz/fuzz_*.c; do
    name=$(basename "${h%.c}")
    $CC $CFLAGS -fsanitize=fuzzer -DMYSQLC_ROOT="\"$TREE\"" -I"$TREE/src" "$h" "${objs[@]}" $LIBS -o "$OUT/$name"
    built+=("$name")
done
echo "fuzz/build.sh: built ${built[*]} in $OUT" >&2
