#!/usr/bin/env bash
# Create/refresh the project virtualenv at <repo>/.venv.
#
# - uses the machine's python3 (override with PYTHON=/path/to/python3)
# - installs requirements.txt and the package itself in editable mode
# - idempotent: skips all work when .venv/.ros_vi_stamp matches the current
#   hash of requirements.txt + requirements-ros.txt + ros_interfaces/ + setup.py +
#   setup.cfg (+ top-level packages, python version, repo path)
# - installs ROS 2 (Jazzy wheels, requirements-ros.txt) and builds the interface packages
#   of ros_interfaces/ (tf2_msgs, control_msgs) into the venv
# - works on a fresh Debian 12 with python3 + pip even without python3-venv
#   (falls back to `venv --without-pip` bootstrapped by the system pip)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VENV="$ROOT/.venv"
VPY="$VENV/bin/python"
STAMP="$VENV/.ros_vi_stamp"
PYTHON="${PYTHON:-python3}"

export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

log() { echo "[setup_env] $*"; }

hash_inputs() {
    {
        cat requirements.txt requirements-ros.txt setup.py
        # the interface packages built into the venv (scripts/build_interfaces.sh)
        find ros_interfaces -type f | LC_ALL=C sort | xargs cat
        [ -f setup.cfg ] && cat setup.cfg
        # top-level packages: the editable finder maps only those that existed
        # at install time, so a newly added package needs a re-install
        ls -1d -- */__init__.py 2>/dev/null || true
        echo "root=$ROOT"
        "$PYTHON" -c 'import sys; print("py=%d.%d.%d" % sys.version_info[:3])'
    } | sha256sum | cut -d' ' -f1
}

command -v "$PYTHON" >/dev/null 2>&1 || { echo "[setup_env] error: '$PYTHON' not found" >&2; exit 1; }

# Serialise concurrent runs (e.g. run_tests.sh and run_demo.sh at once).
if command -v flock >/dev/null 2>&1; then
    mkdir -p "$VENV"
    exec 9>"$VENV.lock"
    flock 9
fi

WANT="$(hash_inputs)"
if [ -x "$VPY" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] \
        && "$VPY" -c 'import sys' >/dev/null 2>&1; then
    log "environment up to date ($VENV)"
    "$VPY" -m ros_vi.precompile     # compiles numba kernels only if sources changed
    exit 0
fi

make_venv() {
    # 1) the normal way (needs ensurepip, i.e. Debian's python3-venv)
    if [ -z "${ROS_VI_FORCE_VENV_FALLBACK:-}" ] \
            && "$PYTHON" -m venv "$VENV" >/dev/null 2>&1; then
        return 0
    fi
    # 2) no ensurepip: bare venv, then bootstrap pip with the system pip
    log "python3 -m venv (with pip) unavailable; bootstrapping pip with system pip"
    rm -rf "$VENV/bin" "$VENV/lib" "$VENV/lib64" "$VENV/include" "$VENV/pyvenv.cfg"
    "$PYTHON" -m venv --without-pip "$VENV"
    if "$PYTHON" -m pip --version >/dev/null 2>&1 \
            && "$PYTHON" -m pip --python "$VPY" install -q pip >/dev/null; then
        return 0
    fi
    # 3) last resort: install python3-venv via apt (root only)
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing python3-venv via apt-get"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        rm -rf "$VENV/bin" "$VENV/lib" "$VENV/lib64" "$VENV/include" "$VENV/pyvenv.cfg"
        "$PYTHON" -m venv "$VENV"
        return 0
    fi
    echo "[setup_env] error: cannot create a virtualenv; install python3-venv" >&2
    return 1
}

if [ ! -x "$VPY" ] || ! "$VPY" -m pip --version >/dev/null 2>&1; then
    log "creating virtualenv $VENV with $("$PYTHON" --version 2>&1)"
    make_venv
else
    log "reusing virtualenv $VENV (inputs changed)"
fi
rm -f "$STAMP"

log "upgrading pip"
"$VPY" -m pip install -q --upgrade pip

log "installing requirements.txt"
"$VPY" -m pip install -q -r requirements.txt

log "installing requirements-ros.txt (ROS 2 Jazzy wheels)"
"$VPY" -m pip install -q -r requirements-ros.txt
bash scripts/build_interfaces.sh

log "installing ros_vi (editable)"
"$VPY" -m pip install -q -e .

log "compiling the numba kernels (cached on disk)"
"$VPY" -m ros_vi.precompile

echo "$WANT" > "$STAMP"
log "done: $("$VPY" --version 2>&1) in $VENV"
