#!/usr/bin/env bash
# Install what fuzz/build.sh needs: clang with libFuzzer and the sanitizer runtimes
# (Debian: clang + libclang-rt-<version>-dev).  Idempotent: does nothing when a
# libFuzzer program already links.
set -euo pipefail
probe() {
    local d
    d=$(mktemp -d)
    printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' >"$d/p.c"
    clang -fsanitize=fuzzer,address,undefined "$d/p.c" -o "$d/p" >/dev/null 2>&1
    local rc=$?
    rm -rf "$d"
    return $rc
}
if command -v clang >/dev/null 2>&1 && probe; then exit 0; fi
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
echo "fuzz-deps: installing clang and libFuzzer" >&2
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang >&2
ver=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "libclang-rt-$ver-dev" >&2 \
    || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libclang-rt-dev >&2
probe || { echo "fuzz-deps: clang cannot link a libFuzzer program" >&2; exit 1; }
