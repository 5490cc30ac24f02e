#!/usr/bin/env bash
# Run every benchmark (benchmarks/bench_*.py) inside the project virtualenv, one after the
# other, after installing the benchmark-only extras (requirements-bench.txt: MuJoCo).
#
#   bash scripts/run_benchmarks.sh          short settings: a few minutes in all
#   bash scripts/run_benchmarks.sh --full   each script's own defaults (the README's tables)
#
# A script that fails or reports a missed target does not stop the others; the exit status
# is non-zero if any did.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

FULL=0
case "${1:-}" in
    --full) FULL=1 ;;
    "") ;;
    *) echo "usage: bash scripts/run_benchmarks.sh [--full]" >&2; exit 2 ;;
esac

bash scripts/setup_env.sh || exit 1
echo "[run_benchmarks] installing requirements-bench.txt"
PIP_DISABLE_PIP_VERSION_CHECK=1 .venv/bin/python -m pip install -q -r requirements-bench.txt \
    || exit 1

# the short settings per script and the loop are ros-vi bench's (ros_vi/cli/bench.py)
if [ "$FULL" = 1 ]; then
    exec .venv/bin/python -m ros_vi bench --full
fi
exec .venv/bin/python -m ros_vi bench
