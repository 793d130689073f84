#!/usr/bin/env bash
# Run the test suite against a build of the C extension with AddressSanitizer + UBSan.
#
#   bash tools/sanitize-test.sh [pytest arguments...]
#
# The normal in-place build is left alone: the committed tree (git HEAD, plus uncommitted
# changes with SANITIZE_WORKTREE=1) is copied to a temporary directory, the extension is
# built there with MYSQLC_SANITIZE=1 (setup.py) and pytest runs there with libasan
# preloaded into the interpreter.  Python's allocator is set to malloc so that ASan
# sees every buffer; leak detection is off (the interpreter itself leaks at exit);
# UBSan aborts on the first error.  A sanitizer report fails the run even when pytest
# would pass (ASan/UBSan reports are searched for in the output).
# Environment: SANITIZE_KEEP=1 keeps the temporary directory.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash tools/bootstrap.sh >/dev/null || { echo "sanitize-test: bootstrap failed" >&2; exit 1; }
VPY="$ROOT/.venv/bin/python"
CC_SAN="${CC:-gcc}"
LIBASAN=$($CC_SAN -print-file-name=libasan.so)
LIBUBSAN=$($CC_SAN -print-file-name=libubsan.so)
if [ ! -f "$LIBASAN" ]; then echo "sanitize-test: $CC_SAN has no libasan" >&2; exit 1; fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/mysqlc-sanitize.XXXXXX")"
cleanup() { if [ "${SANITIZE_KEEP:-0}" != 1 ]; then rm -rf "$TMP"; else echo "kept $TMP" >&2; fi; }
trap cleanup EXIT
if [ "${SANITIZE_WORKTREE:-0}" = 1 ]; then
    tar --exclude=.git --exclude=.venv --exclude=build --exclude='*.so' --exclude=fuzz/build -cf - . | tar -xf - -C "$TMP"
else
    git archive HEAD | tar -xf - -C "$TMP"
fi
cd "$TMP"
echo "sanitize-test: building with ASan+UBSan in $TMP" >&2
if ! CC="$CC_SAN" MYSQLC_SANITIZE=1 "$VPY" setup.py -q build_ext --inplace >build.log 2>&1; then
    cat build.log >&2
    echo "sanitize-test: build failed" >&2
    exit 1
fi

export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:detect_stack_use_after_return=0:strict_string_checks=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONMALLOC=malloc
# lighter load for the long stress tests under the (slower) sanitizers
export MYSQLC_LEAK_SCALE="${MYSQLC_LEAK_SCALE:-0.25}"
export MYSQLC_THREAD_QUERIES="${MYSQLC_THREAD_QUERIES:-2000}"
LOG="$TMP/pytest.log"
# Tests that assert on the process's peak memory are left out here: under ASan the
# shadow memory and the free quarantine make RSS meaningless (they run in the normal suite).
# test_odd_parameter_types_and_packet_refusals is left out too: under ASan its traced
# allocations gain 13-21 KB of numpy-converted objects over a window's extra runs, which the
# normal build (pymalloc or PYTHONMALLOC=malloc) does not show (flat from 300 to 3,000 runs);
# not explained yet, so it is checked in the normal suite only.
# The asyncio tests (mysqlc.aio: test_aio*.py and the [aio] runs of the shared scenarios;
# SQLAlchemy's asyncio dialect) are left out too: they run in a greenlet, and greenlet's
# stack switching (it copies C stack slices to the heap and back) cannot run under ASan
# (stack-buffer-underflow in greenlet's own memcpy, then a crash; not mysqlc's code).
# tests/test_transport_py.py drives the same C transport (src/transport_py.c) from a
# blocking socket object, and runs here.
# tests/test_ray.py is left out too: Ray's own C++ daemons (raylet, GCS) inherit the
# preloaded libasan and do not start under it ("The current node timed out during
# startup"; not mysqlc's code); its reads and writes run the same mysqlc._cluster code as
# tests/test_dask.py, which runs here (a LocalCluster's worker processes included).
# tests/test_bench_small.py is left out too: it runs benchmarks/bench_small.py, whose
# worker processes inherit the preloaded libasan (their asyncio cells run in greenlets,
# see above) and refuse a mysqlc imported from another tree than the benchmark's (the
# sanitizer build is a copy); the benchmark's code paths are the ones the suite tests.
MEMORY_TESTS="not streams_without_reading_it_whole and not peak_memory and not stays_near_its_wire_size and not odd_parameter_types_and_packet_refusals and not aio and not async and not test_ray and not test_bench_small"
export MYSQLC_SANITIZED=1   # tests/test_leaks.py then checks traced allocations, not RSS
LD_PRELOAD="$LIBASAN $LIBUBSAN" "$VPY" -m pytest tests -p no:cacheprovider -k "$MEMORY_TESTS" "$@" 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}
if grep -qE "ERROR: AddressSanitizer|runtime error:|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer)" "$LOG"; then
    echo "sanitize-test: sanitizer reports above" >&2
    [ "$status" = 0 ] && status=1
fi
if [ "$status" = 5 ]; then echo "sanitize-test: no tests collected" >&2; fi
exit "$status"
