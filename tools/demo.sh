#!/usr/bin/env bash
# Set up what is missing (tools/bootstrap.sh --peers: also PyMySQL and mysqlclient),
# build mysqlc, and run examples/demo.py, which starts a private local MariaDB itself.
#
#   bash tools/demo.sh [demo arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/bootstrap.sh --peers
exec .venv/bin/python examples/demo.py "$@"
