#!/usr/bin/env bash
# Set up what is missing (tools/bootstrap.sh), build mysqlc, and run the test suite.
#
#   bash tools/test.sh [pytest arguments...]      e.g.  bash tools/test.sh -x -k cursor
#
# Server tests use a private MariaDB started for the run (removed afterwards), or the
# server named by MYSQLC_TEST_DSN=mysql://user:password@host:port/database.
# Exits with pytest's status; "no tests collected" (5) counts as a failure too.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! bash tools/bootstrap.sh; then
    echo "test.sh: tools/bootstrap.sh failed" >&2
    exit 1
fi

if [ -n "${MYSQLC_TEST_TIMEOUT:-}" ]; then
    # a hung test fails the run instead of stalling it (set by .ci/run)
    timeout --kill-after=60 "$MYSQLC_TEST_TIMEOUT" .venv/bin/python -m pytest tests "$@"
else
    .venv/bin/python -m pytest tests "$@"
fi
status=$?
if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest collected no tests - that is a failure" >&2
fi
exit "$status"
