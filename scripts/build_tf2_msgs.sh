#!/usr/bin/env bash
# Build the tf2_msgs interface package (ros_interfaces/tf2_msgs) into the project venv.
#
# PyPI has ROS 2 wheels for rclpy and the common message packages but none for tf2_msgs
# (the type of /tf and /tf_static).  This builds it from the rosidl generator wheels with
# plain CMake and installs it into .venv itself, after which `from tf2_msgs.msg import
# TFMessage` works with no extra environment.  Does nothing when that import already works
# (e.g. a normal ROS 2 install, or a previous build).  Needs cmake (the system's, or the
# `cmake` wheel installed here on demand), a C/C++ compiler and the Python headers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VENV:-$ROOT/.venv}"
VPY="$VENV/bin/python"
log() { echo "[build_tf2_msgs] $*"; }

if "$VPY" -c 'from tf2_msgs.msg import TFMessage' >/dev/null 2>&1; then
    log "tf2_msgs already importable; nothing to do"
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
BUILD="$(mktemp -d "${TMPDIR:-/tmp}/ros_vi_tf2_msgs.XXXXXX")"
trap 'rm -rf "$BUILD"' EXIT

log "configuring (build dir $BUILD)"
"$CMAKE" -S ros_interfaces/tf2_msgs -B "$BUILD" -DCMAKE_INSTALL_PREFIX="$VENV" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    -DPython3_EXECUTABLE="$VPY" >"$BUILD/configure.log" 2>&1 \
    || { cat "$BUILD/configure.log" >&2; log "error: cmake configure failed"; exit 1; }
log "building"
"$CMAKE" --build "$BUILD" -j2 >"$BUILD/build.log" 2>&1 \
    || { tail -50 "$BUILD/build.log" >&2; log "error: build failed"; exit 1; }
"$CMAKE" --install "$BUILD" >"$BUILD/install.log" 2>&1 \
    || { cat "$BUILD/install.log" >&2; log "error: install failed"; exit 1; }

if ! "$VPY" -c 'from tf2_msgs.msg import TFMessage' ; then
    log "error: tf2_msgs was built but does not import"
    exit 1
fi
log "tf2_msgs installed into $VENV"
