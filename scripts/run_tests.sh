#!/usr/bin/env bash
# Run the test suite (test/) inside the project virtualenv.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh
exec .venv/bin/python -m pytest -q test "$@"
