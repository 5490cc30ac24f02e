"""ros_vi: rigid-body mechanics in generalized coordinates with a midpoint variational
integrator, for Python 3 and ROS 2.

The physics core is import-compatible with trep: ``import ros_vi as trep``.
"""
import os as _os

# The matrices here are tiny (a few dozen rows); multi-threaded BLAS only adds thread
# wake-ups, which cost milliseconds on a loaded 2-core machine.  Effective only when numpy
# is not imported yet; an explicit setting wins.
for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    _os.environ.setdefault(_var, '1')
del _os, _var
from .mechanics import (CONST_SE3, RX, RY, RZ, TX, TY, TZ, WORLD, Config, Constraint, Force,
                        Frame, Input, Potential, Spline, System, TapeMeasure, const_se3,
                        const_txyz, constraints, forces, potentials, rx, ry, rz, tx, ty, tz)
from .integrators import ConvergenceError, MidpointVI
from .trajectory import load_trajectory, save_trajectory
from . import discopt
from . import puppets

__version__ = '0.1.0'

# trep's submodule paths (``import ros_vi.potentials``, ``from ros_vi.forces import ...``)
import sys as _sys
for _name in ('potentials', 'forces', 'constraints'):
    _sys.modules[__name__ + '.' + _name] = globals()[_name]
del _sys, _name
