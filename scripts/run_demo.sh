#!/usr/bin/env bash
# Run the ros_vi demo (ros_vi/demo.py) inside the project virtualenv.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh
exec .venv/bin/python -m ros_vi.demo "$@"
