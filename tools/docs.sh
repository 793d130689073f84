#!/usr/bin/env bash
# Build the documentation site (Sphinx: docs/*.md pages and the API reference from the
# docstrings) into docs/_build/html, with every warning an error.
#
#   bash tools/docs.sh [sphinx-build arguments...]
#
# Sphinx and its extensions (docs/requirements.txt) live in the venv .venv-matrix/docs,
# made from CPython 3.11 and reused; they are installed only when that file changed.
# mysqlc is imported from the source tree (its C extension if built in place).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. tools/_python.sh
VENV="$MATRIX_DIR/docs"
REQ=docs/requirements.txt
if [ ! -x "$VENV/bin/python" ]; then
    py=$(find_python 3.11) || { echo "docs: no CPython 3.11" >&2; exit 1; }
    mkdir -p "$MATRIX_DIR"
    "$py" -m venv "$VENV"
fi
if ! req_stamp_ok "$VENV" "$REQ"; then
    "$VENV/bin/python" -m pip install -q -r "$REQ"
    req_stamp_set "$VENV" "$REQ"
fi
rm -rf docs/_build
PYTHONPATH="$ROOT" "$VENV/bin/python" -m sphinx -W --keep-going -b html docs docs/_build/html "$@"
echo "docs: docs/_build/html/index.html" >&2
