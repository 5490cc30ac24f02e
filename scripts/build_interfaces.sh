#!/usr/bin/env bash
# Build the interface packages of ros_interfaces/ (tf2_msgs, control_msgs) into the project venv.
#
# PyPI has ROS 2 wheels for rclpy and the common message packages but none for tf2_msgs (the
# type of /tf and /tf_static) or control_msgs (FollowJointTrajectory and the trajectory
# controller's state).  This builds each package under ros_interfaces/ from the rosidl
# generator wheels with plain CMake and installs it into .venv itself, after which e.g.
# `from control_msgs.action import FollowJointTrajectory` works with no extra environment.
# A package whose Python modules already import (a normal ROS 2 install, or a previous
# build) is skipped.  Needs cmake (the system's, or the `cmake` wheel installed here on
# demand), a C/C++ compiler and the Python headers.
#
#   VENV=/path/to/venv scripts/build_interfaces.sh [PACKAGE ...]   (default: every package)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VENV:-$ROOT/.venv}"
VPY="$VENV/bin/python"
log() { echo "[build_interfaces] $*"; }

if [ "$#" -gt 0 ]; then
    PACKAGES=("$@")
else
    PACKAGES=()
    for xml in ros_interfaces/*/package.xml; do
        PACKAGES+=("$(basename "$(dirname "$xml")")")
    done
fi

# True when every interface kind the package defines (msg, srv, action) imports.
importable() {
    local pkg="$1" kinds=() kind
    for kind in msg srv action; do
        [ -d "ros_interfaces/$pkg/$kind" ] && kinds+=("$kind")
    done
    "$VPY" - "$pkg" "${kinds[@]}" >/dev/null 2>&1 <<'PY'
import importlib, sys
pkg, kinds = sys.argv[1], sys.argv[2:]
for kind in kinds:
    importlib.import_module(pkg + '.' + kind)
PY
}

TODO=()
for pkg in "${PACKAGES[@]}"; do
    if [ ! -f "ros_interfaces/$pkg/package.xml" ]; then
        log "error: no interface package ros_interfaces/$pkg"
        exit 1
    fi
    if importable "$pkg"; then
        log "$pkg already importable; skipped"
    else
        TODO+=("$pkg")
    fi
done
if [ "${#TODO[@]}" -eq 0 ]; then
    exit 0
fi

log "installing build-time wheels (ros_interfaces/requirements-build.txt)"
"$VPY" -m pip install -q -r ros_interfaces/requirements-build.txt

CMAKE="$(command -v cmake || true)"
if [ -z "$CMAKE" ]; then
    log "no cmake on PATH: installing the cmake wheel into the venv"
    "$VPY" -m pip install -q cmake
    CMAKE="$VENV/bin/cmake"
fi

export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export PATH="$VENV/bin:$PATH"
BUILD="$(mktemp -d "${TMPDIR:-/tmp}/ros_vi_interfaces.XXXXXX")"
trap 'rm -rf "$BUILD"' EXIT
JOBS="${JOBS:-2}"

for pkg in "${TODO[@]}"; do
    dir="$BUILD/$pkg"
    start=$SECONDS
    log "$pkg: configuring (build dir $dir)"
    "$CMAKE" -S "ros_interfaces/$pkg" -B "$dir" -DCMAKE_INSTALL_PREFIX="$VENV" \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
        -DPython3_EXECUTABLE="$VPY" >"$BUILD/$pkg.configure.log" 2>&1 \
        || { cat "$BUILD/$pkg.configure.log" >&2; log "error: $pkg: cmake configure failed"; exit 1; }
    log "$pkg: building"
    "$CMAKE" --build "$dir" -j"$JOBS" >"$BUILD/$pkg.build.log" 2>&1 \
        || { tail -50 "$BUILD/$pkg.build.log" >&2; log "error: $pkg: build failed"; exit 1; }
    "$CMAKE" --install "$dir" >"$BUILD/$pkg.install.log" 2>&1 \
        || { cat "$BUILD/$pkg.install.log" >&2; log "error: $pkg: install failed"; exit 1; }
    if ! importable "$pkg"; then
        log "error: $pkg was built but does not import"
        exit 1
    fi
    log "$pkg installed into $VENV ($((SECONDS - start)) s)"
done
