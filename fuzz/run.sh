#!/usr/bin/env bash
# Run every libFuzzer harness (or the ones named) for a bounded time each.
#
#   bash fuzz/run.sh SECONDS [harness ...]      e.g.  bash fuzz/run.sh 60
#
# Builds the harnesses first (fuzz/build.sh; FUZZ_NO_BUILD=1 skips that), then runs
# FUZZ_JOBS (default: number of CPUs) harnesses at a time, each starting from its seed
# corpus fuzz/corpus/<harness>/ (read only: new inputs go to a temporary directory,
# kept with FUZZ_KEEP=1).  A crash, leak of an expected error, timeout or OOM leaves
# its input in fuzz/artifacts/<harness>/ and fails the run (exit 1) after printing
# the input in base64; turn it into a corpus entry and a unit test (fuzz/README.md).
# Prints executions per harness and the total.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
SECS="${1:?usage: fuzz/run.sh SECONDS [harness ...]}"
shift
OUT="${FUZZ_OUT:-$ROOT/fuzz/build}"
if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
    bash fuzz/build.sh || { echo "fuzz/run.sh: build failed" >&2; exit 1; }
fi
if [ "$#" -gt 0 ]; then harnesses=("$@"); else
    harnesses=()
    for h in fuzz/fuzz_*.c; do harnesses+=("$(basename "${h%.c}")"); done
fi
JOBS="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}"
LOGDIR="$(mktemp -d "${TMPDIR:-/tmp}/mysqlc-fuzz.XXXXXX")"
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:handle_abort=1:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

run_one() {
    local name="$1" work="$LOGDIR/$1.corpus" art="$ROOT/fuzz/artifacts/$1/"
    mkdir -p "$work" "$art" "fuzz/corpus/$name"
    "$OUT/$name" -max_total_time="$SECS" -timeout=30 -rss_limit_mb=3072 -print_final_stats=1 \
        -artifact_prefix="$art" "$work" "fuzz/corpus/$name" >"$LOGDIR/$name.log" 2>&1
    echo $? >"$LOGDIR/$name.rc"
}

start=$(date +%s)
running=0
for h in "${harnesses[@]}"; do
    if [ ! -x "$OUT/$h" ]; then echo "fuzz/run.sh: no harness $OUT/$h" >&2; exit 2; fi
    run_one "$h" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait

failed=0
total=0
printf '%-22s %8s %12s %10s %6s\n' harness seconds executions exec/s corpus
for h in "${harnesses[@]}"; do
    log="$LOGDIR/$h.log"
    rc=$(cat "$LOGDIR/$h.rc" 2>/dev/null || echo 99)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    secs=$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    ncorp=$(ls "$LOGDIR/$h.corpus" "fuzz/corpus/$h" 2>/dev/null | grep -vc ':$\|^$')
    execs=${execs:-0}
    total=$((total + execs))
    rate=$(( ${secs:-0} > 0 ? execs / ${secs:-1} : 0 ))
    printf '%-22s %8s %12s %10s %6s\n' "$h" "${secs:-?}" "$execs" "$rate" "$ncorp"
    if [ "$rc" != 0 ]; then
        failed=1
        echo "---- $h FAILED (exit $rc); log tail:" >&2
        grep -v '^#[0-9]\|Uses: ' "$log" | tail -60 >&2
        for a in "$ROOT"/fuzz/artifacts/"$h"/*; do
            [ -f "$a" ] || continue
            echo "artifact $a (base64): $(base64 -w0 "$a")" >&2
        done
    fi
done
echo "fuzz/run.sh: ${#harnesses[@]} harnesses, ${SECS}s each, $total executions in $(( $(date +%s) - start ))s wall"
if [ "${FUZZ_KEEP:-0}" = 1 ]; then echo "fuzz/run.sh: logs and new inputs kept in $LOGDIR"; else rm -rf "$LOGDIR"; fi
exit "$failed"
