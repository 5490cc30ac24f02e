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

# short settings per script (its own CLI flags)
declare -A SHORT=(
    [bench_vi.py]="--steps 500 --general-steps 100"
    [bench_constrained.py]="--steps 1000 --general-steps 100"
    [bench_discopt.py]="--repeats 50"
    [bench_urdf_import.py]="--repeat 5"
    [bench_simulator.py]="--seconds 1"
    [bench_vs_mujoco.py]="--seconds 2 --sweep-steps 150 --floor-calls 1000"
)

failed=()
for script in benchmarks/bench_*.py; do
    name="$(basename "$script")"
    args=""
    [ "$FULL" = 1 ] || args="${SHORT[$name]:-}"
    echo
    echo "=== $name $args"
    # shellcheck disable=SC2086  # the settings are several words
    if ! .venv/bin/python "$script" $args; then
        failed+=("$name")
    fi
done
echo
if [ "${#failed[@]}" -gt 0 ]; then
    echo "[run_benchmarks] failed or missed a target: ${failed[*]}"
    exit 1
fi
echo "[run_benchmarks] all benchmarks ran"
