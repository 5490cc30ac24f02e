"""ros_vi: rigid-body mechanics in generalized coordinates with a midpoint variational
integrator, for Python 3 and ROS 2.

The physics core is import-compatible with trep: ``import ros_vi as trep``.
"""
from .mechanics import (CONST_SE3, RX, RY, RZ, TX, TY, TZ, WORLD, Config, Constraint, Force,
                        Frame, Input, Potential, Spline, System, TapeMeasure, const_se3,
                        const_txyz, constraints, forces, potentials, rx, ry, rz, tx, ty, tz)
from .integrators import ConvergenceError, MidpointVI

__version__ = '0.1.0'

# trep's submodule paths (``import ros_vi.potentials``, ``from ros_vi.forces import ...``)
import sys as _sys
for _name in ('potentials', 'forces', 'constraints'):
    _sys.modules[__name__ + '.' + _name] = globals()[_name]
del _sys, _name
