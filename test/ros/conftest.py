"""Isolation for the tests that run ROS 2 nodes over real DDS (test/ros/ only).

Set before rclpy is imported anywhere in this session, and inherited by the simulator
processes the tests start: a private log directory, discovery limited to this machine
and a random domain id, so concurrent test runs (and other ROS users) do not see each
other.  AMENT_PREFIX_PATH gets the venv, where the ROS wheels' share/ folders live.
"""
import os
import random
import shutil
import sys
import tempfile

import pytest

_LOG_DIR = tempfile.mkdtemp(prefix='ros_vi_test_roslog_')
os.environ['ROS_LOG_DIR'] = _LOG_DIR
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ['ROS_DOMAIN_ID'] = str(random.SystemRandom().randint(1, 100))
os.environ.pop('ROS_STATIC_PEERS', None)
os.environ.pop('ROS_LOCALHOST_ONLY', None)
_prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
if sys.prefix not in _prefixes:
    os.environ['AMENT_PREFIX_PATH'] = os.pathsep.join([sys.prefix] + _prefixes)


@pytest.fixture(scope='session', autouse=True)
def _warm_kernels():
    """Compile the numba kernels before any node process starts (a cold cache costs a
    node tens of seconds at start-up, longer than the tests wait for it)."""
    from ros_vi.precompile import precompile
    precompile()


@pytest.fixture(scope='session', autouse=True)
def _ros_log_dir():
    yield _LOG_DIR
    shutil.rmtree(_LOG_DIR, ignore_errors=True)


@pytest.fixture(scope='package')
def probe():
    """A test node spun in a background thread (see harness.Probe); closed after the last
    test of test/ros/, so its thread does not run (and allocate) under the other tests."""
    from .harness import Probe
    from .harness import RUNNING
    p = Probe()
    yield p
    for proc in list(RUNNING):       # a test that failed before stopping its simulator
        proc.stop()
    p.close()
