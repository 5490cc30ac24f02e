"""Shared pytest configuration: make test/systems.py and test/reference/ importable."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# trep's visual scripts (ros_vi.visual.visualize_3d/2d) would serve a page and block until
# Ctrl-C: under the tests they check their items and show nothing, unless a test says so
os.environ.setdefault('ROS_VI_VISUAL', 'off')
