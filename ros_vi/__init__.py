"""ros_vi: rigid-body mechanics in generalized coordinates with a midpoint variational
integrator, for Python 3 and ROS 2.

The physics core is import-compatible with trep: ``import ros_vi as trep``.
"""
# first: the compiled kernels' cache is found in the user's cache folder (ros_vi's own
# kernels only; see kernel_cache)
from . import kernel_cache as _kernel_cache
_kernel_cache.register()
del _kernel_cache
from .mechanics import (CONST_SE3, RX, RY, RZ, TX, TY, TZ, WORLD, Config, Constraint, Force,
                        Frame, Input, MimicMotion, Potential, Spline, System, TapeMeasure,
                        const_se3, const_txyz, constraints, contact, forces, mimic, potentials,
                        rx, ry, rz, tx, ty, tz)
from .integrators import ConvergenceError, MidpointVI
from .trajectory import load_trajectory, save_trajectory
from . import discopt
from . import puppets

__version__ = '0.1.0'


def __getattr__(name):
    # the batched rollouts load their parallel loop only when asked for: importing ros_vi
    # stays cheap and changes nothing in the user's process
    if name in ('rollout', 'Target'):
        from . import batch
        return getattr(batch, name)
    if name == 'visual':        # trep.visual: Pillow and the renderer, loaded when asked for
        import importlib
        return importlib.import_module(__name__ + '.visual')
    raise AttributeError('module %r has no attribute %r' % (__name__, name))

# trep's submodule paths (``import ros_vi.potentials``, ``from ros_vi.forces import ...``,
# ``from ros_vi.frame import tx``, ``ros_vi.system.save_trajectory``, ...): each name is an
# attribute of the package and an entry of sys.modules.  (trep.util is not provided;
# trep.visual is ros_vi.visual, trep.puppets ros_vi.puppets.)
import sys as _sys
import types as _types
from .mechanics import (config as _m_config, constraint as _m_constraint,
                        force as _m_force, frame as _m_frame, potential as _m_potential,
                        spline as _m_spline, system as _m_system,
                        tapemeasure as _m_tapemeasure)
from .integrators import midpointvi as _m_midpointvi

# trep.system holds System and the trajectory file functions; ours are in two modules, so
# trep.system is a small module of its own that falls back to ros_vi.mechanics.system.
_system_module = _types.ModuleType(
    __name__ + '.system', "trep's ``trep.system`` path: System, save_trajectory, "
    "load_trajectory (other names come from ros_vi.mechanics.system).")
_system_module.System = System
_system_module.save_trajectory = save_trajectory
_system_module.load_trajectory = load_trajectory
_system_module.__getattr__ = lambda name, _fallback=_m_system: getattr(_fallback, name)

for _name, _module in (('potentials', potentials), ('forces', forces),
                       ('constraints', constraints), ('contact', contact),
                       ('system', _system_module),
                       ('config', _m_config), ('finput', _m_config), ('frame', _m_frame),
                       ('force', _m_force), ('constraint', _m_constraint),
                       ('potential', _m_potential), ('spline', _m_spline),
                       ('tapemeasure', _m_tapemeasure), ('midpointvi', _m_midpointvi)):
    _sys.modules[__name__ + '.' + _name] = _module
    globals()[_name] = _module
del (_sys, _types, _name, _module, _system_module, _m_config, _m_constraint, _m_force,
     _m_frame, _m_potential, _m_spline, _m_system, _m_tapemeasure, _m_midpointvi)
