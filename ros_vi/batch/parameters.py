"""Per-copy parameters of a rollout: what may vary between copies, checked and applied.

Names (each value a scalar, shared by every copy, or one value per copy ``(B,)``):

==========================  =========  ===================================================
name                        unit       meaning
==========================  =========  ===================================================
``mass_scale``              1          every body's mass and inertia times this factor
``mass.<link>``             kg         the link's mass; its inertia scales with it (same
                                       mass distribution).  ``<link>`` is a URDF link (or
                                       a frame with mass of a hand-built System)
``damping.<joint>``         N m s/rad  viscous damping of the joint (N s/m if prismatic)
``gravity``                 m/s^2      magnitude of gravity (its direction is the model's)
``effort_limit.<joint>``    N m, N     actuator limit of the joint: the applied effort is
                                       clipped to it (after the controller's own limit)
``delay``                   s          input delay, whole ticks (rounded): the effort
                                       computed at tick k is applied at tick k + d
==========================  =========  ===================================================

Mass, damping and gravity change the *plant*; the controller keeps its own (nominal) model.
"""
import contextlib

import numpy as np

from ..mechanics.forces.damping import Damping
from ..mechanics.potentials.gravity import Gravity

__all__ = ['MODEL_PARAMETERS', 'LOOP_PARAMETERS', 'parameter_names', 'check_parameters',
           'model_key', 'applied', 'loop_values']

MODEL_PARAMETERS = ('mass_scale', 'mass.<link>', 'damping.<joint>', 'gravity')
LOOP_PARAMETERS = ('effort_limit.<joint>', 'delay')


def _mass_frame(system, link):
    """The frame that carries ``link``'s mass (the URDF importer's ``<link>::inertial``
    frame, or the frame named ``link``), or None."""
    for name in (link + '::inertial', link):
        for f in system.frames:
            if f.name == name and f.mass > 0:
                return f
    return None


def parameter_names(system):
    """Every parameter name the system accepts, as listed in the module docstring."""
    names = ['mass_scale', 'gravity', 'delay']
    links = sorted({f.name.split('::')[0] for f in system.frames
                    if f.mass > 0 and f.name is not None})
    names += ['mass.' + link for link in links]
    if any(isinstance(f, Damping) for f in system.forces):
        names += ['damping.' + c.name for c in system.dyn_configs]
    names += ['effort_limit.' + c.name for c in system.dyn_configs]
    return names


def check_parameters(system, params, batch):
    """``{name: (B,) float array}`` from ``params`` ({name: scalar or (B,)}), checked:
    known name, one value or ``batch`` values, finite, within its range.  Raises ValueError
    naming the parameter."""
    out = {}
    known = parameter_names(system)
    for name, value in (params or {}).items():
        if name not in known:
            raise ValueError('unknown parameter %r; this model accepts: %s'
                             % (name, ', '.join(known)))
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0:
            arr = np.full(batch, float(arr))
        if arr.shape != (batch,):
            raise ValueError('parameter %r: expected one value or %d (one per copy), got '
                             'shape %s' % (name, batch, arr.shape))
        if not np.all(np.isfinite(arr)):
            raise ValueError('parameter %r is not finite at copies %s'
                             % (name, np.nonzero(~np.isfinite(arr))[0][:10].tolist()))
        if name == 'mass_scale' or name.startswith('mass.'):
            if not np.all(arr > 0):
                raise ValueError('parameter %r must be > 0, got %g'
                                 % (name, arr[~(arr > 0)][0]))
        elif not np.all(arr >= 0):
            raise ValueError('parameter %r must be >= 0, got %g' % (name, arr[arr < 0][0]))
        out[name] = arr
    return out


def model_key(table, b):
    """The plant-changing parameters of copy b as a hashable key (copies with equal keys
    share one packed model)."""
    return tuple((name, float(values[b])) for name, values in sorted(table.items())
                 if name.split('.')[0] in ('mass_scale', 'mass', 'damping', 'gravity'))


@contextlib.contextmanager
def applied(system, key):
    """Within the block, ``system`` has the model parameters ``key`` (:func:`model_key`);
    its own masses, damping and gravity are restored afterwards (also on error).  Nothing
    happens for an empty key.  (A System holds its URDF description and cannot be deep-
    copied, so the parameters are set and undone in place.)"""
    if not key:
        yield system
        return
    values = dict(key)
    masses = [(f, f.mass, f.inertia) for f in system.frames
              if f.mass > 0 or np.any(f.inertia != 0)]
    touched = [name[8:] for name in values if name.startswith('damping.')]
    dampers = [(d, [(c, d.get_damping_coefficient(c)) for c in touched])
               for d in system.forces if isinstance(d, Damping)]
    gravities = [(g, g.gravity) for g in system.potentials if isinstance(g, Gravity)]
    try:
        _apply(system, values, [d for d, _ in dampers], [g for g, _ in gravities])
        yield system
    finally:
        for f, m, inertia in masses:
            if f.mass != m or np.any(f.inertia != inertia):
                f.set_inertia(m, inertia)
        for d, saved in dampers:
            for config, coefficient in saved:
                # back to the default where it had the default's value
                d.set_damping_coefficient(
                    config, None if coefficient == d.default else coefficient)
        for g, vector in gravities:
            if np.any(g.gravity != vector):
                g.gravity = vector


def _apply(system, values, dampers, gravities):
    scale = values.get('mass_scale', 1.0)
    for name, value in values.items():
        if name.startswith('mass.'):
            f = _mass_frame(system, name[5:])
            f.set_inertia(value, f.inertia * (value / f.mass))
    if scale != 1.0:
        for f in system.frames:
            if f.mass > 0 or np.any(f.inertia != 0):
                f.set_inertia(f.mass * scale, f.inertia * scale)
    for name, value in values.items():
        if name.startswith('damping.'):
            if not dampers:
                raise ValueError('parameter %r: the model has no Damping force' % name)
            dampers[0].set_damping_coefficient(name[8:], value)
            for other in dampers[1:]:
                other.set_damping_coefficient(name[8:], 0.0)
    if 'gravity' in values:
        if not gravities:
            raise ValueError('parameter gravity: the model has no Gravity potential')
        total = np.sum([g.gravity for g in gravities], axis=0)
        norm = float(np.linalg.norm(total))
        direction = total / norm if norm > 0 else np.array([0.0, 0.0, -1.0])
        gravities[0].gravity = values['gravity'] * direction
        for g in gravities[1:]:
            g.gravity = (0.0, 0.0, 0.0)


def loop_values(system, table, batch, dt, base_limits):
    """``(limits (B, nu), delay (B,) int)``: the per-copy effort limits (``base_limits
    (nu,)`` where not given) and the delay in ticks."""
    limits = np.tile(np.asarray(base_limits, dtype=float), (batch, 1))
    for name, values in table.items():
        if name.startswith('effort_limit.'):
            joint = name[len('effort_limit.'):]
            inputs = [i for i in system.inputs if getattr(i, 'name', None) == joint]
            if not inputs:
                raise ValueError('parameter %r: joint %r has no input (effort) to limit'
                                 % (name, joint))
            limits[:, inputs[0].index] = values
    delay = np.zeros(batch, dtype=np.int64)
    if 'delay' in table:
        delay = np.rint(table['delay'] / dt).astype(np.int64)
    return limits, delay

