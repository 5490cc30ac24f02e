"""Builders for the standard test systems shared by the ros_vi test suite.

Every builder returns a *fresh* :class:`ros_vi.System` (callers may mutate it freely).
Other test modules import this file (``import systems``); keep the public functions and
their meaning stable:

* :func:`pendulum` -- the trep tutorial pendulum (1 dynamic config, 1 input).
* :func:`double_pendulum` -- two rx joints, optional ConfigSprings and Damping, 1 input.
* :func:`chain_3d` -- a 3-D chain/tree that uses all six one-parameter transforms and a
  rotated const_se3, full (m, Ixx, Iyy, Izz) masses and tilted gravity.
* :func:`kinematic_system` -- a cart with two kinematic configs carrying a double pendulum.
* :func:`mobile_manipulator` -- the seed's 3-DOF planar mobile manipulator
  (test/reference/mobile_manipulator.py).
* :func:`planar_chain` -- the benchmark chain of ``n`` ry joints.

The geometry of the non-trivial systems is also available as plain-data descriptions in
the format of test/reference/naive_lagrangian.py (``*_description()`` functions), so an
independent implementation can be built from the very same tree.
"""
import os
import sys

import numpy as np

import ros_vi as trep
from ros_vi import const_se3, rx, ry, rz, tx, ty, tz

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from reference import mobile_manipulator as _mm  # noqa: E402

_DEFS = {'tx': tx, 'ty': ty, 'tz': tz, 'rx': rx, 'ry': ry, 'rz': rz,
         'const': const_se3, 'const_se3': const_se3}


def rotation(axis, angle):
    """(3, 3) rotation by ``angle`` [rad] about the unit vector ``axis`` (Rodrigues)."""
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def se3(R, p):
    """(4, 4) homogeneous transform from a rotation (3, 3) and a translation (3,)."""
    g = np.eye(4)
    g[:3, :3] = R
    g[:3, 3] = p
    return g


def frames_from_description(description):
    """Convert a naive_lagrangian-style description into ros_vi frame definitions.

    ``description``: list of ``(kind, param[, opts])`` tuples, each optionally followed
    by a list of its children; opts may hold 'name', 'mass' and 'kinematic'.
    """
    out = []
    for item in description:
        if isinstance(item, list):
            out.append(frames_from_description(item))
            continue
        kind, param = item[0], item[1]
        opts = dict(item[2]) if len(item) > 2 else {}
        out.append(_DEFS[kind](param, name=opts.get('name'),
                               kinematic=opts.get('kinematic', False),
                               mass=opts.get('mass', 0.0)))
    return out


def system_from_description(description, gravity=None):
    """A System with the frames of ``description`` and (optionally) uniform gravity."""
    system = trep.System()
    system.import_frames(frames_from_description(description))
    if gravity is not None:
        trep.potentials.Gravity(system, gravity)
    return system


# ---------------------------------------------------------------------------- pendulum
def pendulum():
    """The trep tutorial pendulum.

    rx('theta') -> tz(-1) with mass 1; Gravity (0, 0, -9.8); Damping 1.0;
    ConfigForce on theta with input 'theta-torque'.  nQ = nQd = 1, nu = 1.
    """
    system = trep.System()
    system.import_frames([rx('theta'), [tz(-1.0, mass=1.0)]])
    trep.potentials.Gravity(system, (0.0, 0.0, -9.8))
    trep.forces.Damping(system, 1.0)
    trep.forces.ConfigForce(system, 'theta', 'theta-torque')
    return system


# ---------------------------------------------------------------------- double pendulum
def double_pendulum(springs=True, dampers=True):
    """Double pendulum: rx('theta1') -> tz(-1) mass 1 -> rx('theta2') -> tz(-1) mass 1.

    Gravity (0, 0, -9.8); with ``springs`` ConfigSprings k=2.0 (q0=0.2) on theta1 and
    k=1.5 (q0=-0.3) on theta2; with ``dampers`` Damping 0.1 (0.3 on theta2);
    ConfigForce on theta1 with input 'torque1'.  nQ = nQd = 2, nu = 1.
    """
    system = trep.System()
    system.import_frames([
        rx('theta1', name='link1'), [
            tz(-1.0, name='mass1', mass=1.0), [
                rx('theta2', name='link2'), [
                    tz(-1.0, name='mass2', mass=1.0)]]]])
    trep.potentials.Gravity(system, (0.0, 0.0, -9.8))
    if springs:
        trep.potentials.ConfigSpring(system, 'theta1', k=2.0, q0=0.2)
        trep.potentials.ConfigSpring(system, 'theta2', k=1.5, q0=-0.3)
    if dampers:
        trep.forces.Damping(system, 0.1, {'theta2': 0.3})
    trep.forces.ConfigForce(system, 'theta1', 'torque1')
    return system


# ----------------------------------------------------------------------------- 3-D chain
CHAIN_3D_GRAVITY = (1.3, -2.1, -9.4)
CHAIN_3D_CONFIGS = ('a', 'b', 'c', 'd', 'e', 'f', 'g')


def chain_3d_description():
    """A branching 3-D tree using rx, ry, rz, tx, ty, tz and a rotated const_se3.

    Configs (creation order): a (rz), b (ry), c (tx), d (rx), e (ty), f (tz), g (rx).
    All dynamic; every mass frame has full [m, Ixx, Iyy, Izz].
    """
    G = se3(rotation((1.0, 2.0, -0.5), 0.7), (0.1, -0.2, 0.3))
    return [
        ('rz', 'a', {'name': 'A'}), [
            ('tx', 0.3, {'name': 'A_off'}), [
                ('ry', 'b', {'name': 'B', 'mass': [1.5, 0.11, 0.21, 0.31]}), [
                    ('const_se3', G, {'name': 'C_const'}), [
                        ('tx', 'c', {'name': 'C', 'mass': [0.4, 0.02, 0.03, 0.01]}), [
                            ('rx', 'd', {'name': 'D'}), [
                                ('ty', 'e', {'name': 'E',
                                             'mass': [0.7, 0.05, 0.06, 0.07]}), [
                                    ('tz', 'f', {'name': 'F'}), [
                                        ('rz', 0.4, {'name': 'F_rot'}), [
                                            ('tz', -0.5, {'name': 'tip', 'mass':
                                                          [0.5, 0.01, 0.015, 0.02]}),
                                        ],
                                    ],
                                ],
                            ],
                        ],
                    ],
                    # a second branch off B
                    ('ty', 0.25, {'name': 'B_side'}), [
                        ('rx', 'g', {'name': 'G'}), [
                            ('tz', -0.6, {'name': 'G_mass',
                                          'mass': [0.8, 0.03, 0.04, 0.05]}),
                        ],
                    ],
                ],
            ],
        ],
    ]


def chain_3d():
    """The 3-D chain of :func:`chain_3d_description` with Gravity ``CHAIN_3D_GRAVITY``,
    Damping 0.05 and a ConfigForce on 'b' (input 'b-torque').  nQ = nQd = 7, nu = 1."""
    system = system_from_description(chain_3d_description(), CHAIN_3D_GRAVITY)
    trep.forces.Damping(system, 0.05)
    trep.forces.ConfigForce(system, 'b', 'b-torque')
    return system


# ---------------------------------------------------------------------- kinematic system
def kinematic_system():
    """A cart with kinematic position x (tx) and height y (ty) carrying a double pendulum.

    x, y are kinematic (created first, so the dyn-then-kin ordering reorders them);
    theta (rx) and phi (ry) are dynamic.  Gravity (0, 0, -9.8), Damping 0.2,
    ConfigForce on phi (input 'phi-torque').  nQ = 4, nQd = 2, nQk = 2, nu = 1.
    """
    system = trep.System()
    system.import_frames([
        tx('x', kinematic=True, name='cart_x', mass=2.0), [
            ty('y', kinematic=True, name='cart', mass=1.0), [
                rx('theta', name='pivot'), [
                    tz(-1.0, name='bob', mass=[1.0, 0.01, 0.02, 0.03]), [
                        ry('phi', name='wrist'), [
                            tz(-0.5, name='bob2', mass=[0.5, 0.02, 0.01, 0.03])]]]]]])
    trep.potentials.Gravity(system, (0.0, 0.0, -9.8))
    trep.forces.Damping(system, 0.2)
    trep.forces.ConfigForce(system, 'phi', 'phi-torque')
    return system


# -------------------------------------------------------------------- mobile manipulator
def mobile_manipulator_description():
    """The seed's frame tree (test/reference/mobile_manipulator.py), 'const' kinds mapped."""
    return _mm.frames_description()


def mobile_manipulator():
    """The 3-DOF mobile manipulator of test/reference/mobile_manipulator.py.

    Configs (x1, theta2, theta3), Gravity ``(0, -9.8, 0)``, no forces.
    """
    return system_from_description(_mm.frames_description(), _mm.GRAVITY)


# -------------------------------------------------------------------------- planar chain
def planar_chain(n):
    """The benchmark chain: ``n`` links, each ry('theta%d') then tz(-1) with mass
    [1, 0.1, 0.1, 0.1]; Gravity (0, 0, -9.8).  nQ = nQd = n."""
    if n < 1:
        raise ValueError('planar_chain needs n >= 1, got %r' % (n,))
    mass = [1.0, 0.1, 0.1, 0.1]
    tail = []
    for i in reversed(range(n)):
        tail = [ry('theta%d' % i, name='joint%d' % i),
                [tz(-1.0, name='link%d' % i, mass=mass)] + ([tail] if tail else [])]
    system = trep.System()
    system.import_frames(tail)
    trep.potentials.Gravity(system, (0.0, 0.0, -9.8))
    return system


#: name -> builder (no arguments) for parametrised tests
STANDARD_SYSTEMS = {
    'pendulum': pendulum,
    'double_pendulum': double_pendulum,
    'chain_3d': chain_3d,
    'kinematic_system': kinematic_system,
    'mobile_manipulator': mobile_manipulator,
    'planar_chain_4': lambda: planar_chain(4),
}


def random_state(system, seed, q_scale=1.0, dq_scale=1.0):
    """Set a reproducible random q, dq, u (and ddqk) on ``system``; returns the RNG."""
    rng = np.random.RandomState(seed)
    system.q = rng.uniform(-q_scale, q_scale, system.nQ)
    system.dq = rng.uniform(-dq_scale, dq_scale, system.nQ)
    if system.nu:
        system.u = rng.uniform(-1.0, 1.0, system.nu)
    if system.nQk:
        system.ddqk = rng.uniform(-1.0, 1.0, system.nQk)
    return rng


def assert_close(exact, approx, rel=1e-6, abs_=1e-8, what=''):
    """Assert max |exact - approx| <= abs_ + rel * max |approx| (same shapes)."""
    exact, approx = np.asarray(exact, dtype=float), np.asarray(approx, dtype=float)
    assert exact.shape == approx.shape, (what, exact.shape, approx.shape)
    scale = float(np.abs(approx).max()) if approx.size else 0.0
    err = float(np.abs(exact - approx).max()) if approx.size else 0.0
    assert err <= abs_ + rel * scale, '%s: max error %.3g (scale %.3g)' % (what, err, scale)
