"""Mechanics: frames, configs, inputs, potentials, forces, constraints and the System.

Plain NumPy/SciPy (+ numba for the compiled tree kernel); never imports rclpy.
"""
from .config import Config, Input
from .frame import (CONST_SE3, RX, RY, RZ, TX, TY, TZ, WORLD, Frame, MimicMotion, const_se3,
                    const_txyz, mimic, rx, ry, rz, tx, ty, tz)
from .system import System
from .free import FreeJoint
from .potential import Potential
from .force import Force
from .constraint import Constraint
from .tapemeasure import TapeMeasure
from .spline import Spline
from . import potentials, forces, constraints, contact
