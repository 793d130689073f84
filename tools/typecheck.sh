#!/usr/bin/env bash
# Type checks (docs/packaging.md, "Typing"):
#   1. mypy --strict tests/typing/      the typed usage sample (assert_type checks and
#                                       "type: ignore" lines that must stay errors);
#                                       settings in pyproject.toml's [tool.mypy]
#   2. python -m mypy.stubtest mysqlc._core
#                                       mysqlc/_core.pyi against the built C module
#                                       (allowlist: tests/typing/stubtest-allowlist.txt)
#
#   bash tools/typecheck.sh
#
# Runs with the test venv .venv (tools/bootstrap.sh), or the interpreter in
# TYPECHECK_PYTHON; installs tests/requirements-typing.txt into it only when one of
# those packages is missing, and builds the C extension in place when it does not
# import.  mysqlc is imported from the source tree.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY="${TYPECHECK_PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || { echo "typecheck: no $PY (run tools/bootstrap.sh)" >&2; exit 1; }
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

if ! "$PY" - <<'PYEOF' 2>/dev/null
need = ["mypy", "typing_extensions", "pandas-stubs", "pyarrow-stubs"]
from importlib.metadata import distribution
for name in need:
    distribution(name)
PYEOF
then
    "$PY" -m pip install -q -r tests/requirements-typing.txt
fi
if ! "$PY" -c 'import mysqlc._core' 2>/dev/null; then
    "$PY" setup.py build_ext --inplace -q
fi
"$PY" -c 'import mysqlc._core, sys; f = mysqlc._core.__file__
sys.exit(0 if f.startswith(sys.argv[1]) else "typecheck: mysqlc._core is %s, not from %s" % (f, sys.argv[1]))' "$ROOT/"

"$PY" -m mypy --version
"$PY" -m mypy --strict --no-incremental --cache-dir=/dev/null tests/typing/
"$PY" -m mypy.stubtest --allowlist tests/typing/stubtest-allowlist.txt mysqlc._core
echo "typecheck: mypy --strict tests/typing/ and stubtest mysqlc._core passed" >&2
