"""Dynamics as functions: what is computed from a state, named after the maths.

Two kinds of function live here:

* ``f(model, data)``: terms of the compiled frame tree (kinematics, the kinetic energy and
  gravity part of the Lagrangian, the mass matrix, the Legendre transform).  They read only
  the :class:`~ros_vi.mechanics.model.Model` and the given
  :class:`~ros_vi.mechanics.data.Data`, cache their results in ``data.cache`` and never
  touch any other state, so any number of Data objects can be evaluated side by side.
* ``f(system)``: sums over the System's own potentials, forces and constraints (Python
  objects that read the System's current state, ``system.data``).

Shapes: nQ configs (``model.nq``), nQd dynamic configs (``model.nd``), nu inputs, nc
constraints.  Derivative arrays are indexed ``[output, input]``.

Example
-------
>>> data = system.model.create_data()
>>> data.set(q=[0.5], dq=[0.0])
>>> dynamics.mass_matrix(system.model, data)           # (nQd, nQd)
>>> v = dynamics.velocity_from_momentum(system.model, data, p)
"""
from collections import namedtuple

import numpy as np

LagrangianTerms = namedtuple('LagrangianTerms', 'Lq Lv M Lvq Lqq T Vg')
LagrangianTerms.__doc__ = """Kinetic energy minus kernel gravity at one state.

Lq (nQ,) = dL/dq, Lv (nQ,) = dL/dv (the momentum), M (nQ, nQ) mass matrix = d2L/dv2,
Lvq (nQ, nQ) = d2L/dv dq [v-row, q-column], Lqq (nQ, nQ) = d2L/dq2, T kinetic energy [J],
Vg gravity potential energy [J] (kernel gravity only)."""

FirstOrderTerms = namedtuple('FirstOrderTerms', 'Lq Lv T Vg')
FirstOrderTerms.__doc__ = """The O(n) part of :class:`LagrangianTerms`: Lq, Lv (nQ,), T, Vg."""

AppliedTerms = namedtuple('AppliedTerms', 'V_dq V_dqdq F F_dq F_ddq F_du')
AppliedTerms.__doc__ = """Sums over the potentials the kernel does not evaluate and over all
forces: V_dq (nQ,), V_dqdq (nQ, nQ), F (nQ,) generalized force, F_dq, F_ddq (nQ, nQ),
F_du (nQ, nu), each derivative indexed [output, input]."""


# ---------------------------------------------------------------------- frame tree terms
def kinematics(model, data):
    """World rotations R (nf, 3, 3), origins P (nf, 3) [m] and config twists S (nQ, 6)
    (angular, linear; world frame) at ``data.q``."""
    cache = data.cache
    if cache.kinematics is None:
        cache.kinematics = model.kinematics(data.q)
    return cache.kinematics


def lagrangian_terms(model, data):
    """:class:`LagrangianTerms` at ``(data.q, data.dq)`` (one compiled call, cached)."""
    cache = data.cache
    if cache.lagrangian is None:
        cache.lagrangian = LagrangianTerms(
            *model.lagrangian_terms(model.gravity, data.q, data.dq))
    return cache.lagrangian


def first_order_terms(model, data):
    """:class:`FirstOrderTerms` at ``(data.q, data.dq)`` (one O(n) pass, not cached: the
    integrator's Newton loop calls it once per iterate)."""
    return FirstOrderTerms(*model.first_order(model.gravity, data.q, data.dq))


def mass_matrix(model, data):
    """Mass matrix of the dynamic configs M_dd(q), (nQd, nQd) [kg, kg m, kg m^2]."""
    nd = model.nd
    return lagrangian_terms(model, data).M[:nd, :nd].copy()


def kinetic_energy(model, data):
    """T = 1/2 dq^T M(q) dq [J]."""
    return float(lagrangian_terms(model, data).T)


def momentum_from_velocity(model, data, v):
    """Momentum of the dynamic configs p = M_dd(q) v_d, (nQd,), at ``data.q``.

    ``v`` is (nQ,) or (nQd,); only its dynamic entries are used.  This is the inverse of
    :func:`velocity_from_momentum` (the rule every part of ros_vi uses to go between the
    VI's discrete momentum and a joint velocity)."""
    nd = model.nd
    return mass_matrix(model, data) @ np.asarray(v, dtype=float)[:nd]


def velocity_from_momentum(model, data, p):
    """Velocity of the dynamic configs v_d = M_dd(q)^-1 p, (nQd,), at ``data.q``.

    The Legendre transform of the VI's discrete momentum p2 at q2: what the simulator
    publishes as joint velocity and what a controller inverts with
    :func:`momentum_from_velocity` (kinematic configs carry their prescribed rate
    separately)."""
    if model.nd == 0:
        return np.zeros(0)
    return np.linalg.solve(mass_matrix(model, data), np.asarray(p, dtype=float))


# ---------------------------------------------------------------------- the System's terms
def applied_terms(system):
    """:class:`AppliedTerms` at the System's current state (cached in ``system.data``)."""
    data = system.data
    cache = data.cache
    if cache.applied is None:
        nq, nu = system.nQ, system.nu
        V_dq, V_dqdq = np.zeros(nq), np.zeros((nq, nq))
        F, F_dq, F_ddq, F_du = (np.zeros(nq), np.zeros((nq, nq)), np.zeros((nq, nq)),
                                np.zeros((nq, nu)))
        for pot in system.general_potentials:
            V_dq += pot.V_dq_array()
            V_dqdq += pot.V_dqdq_array()
        for force in system.forces:
            F += force.f_array()
            F_dq += force.f_dq_array()
            F_ddq += force.f_ddq_array()
            F_du += force.f_du_array()
        cache.applied = AppliedTerms(V_dq, V_dqdq, F, F_dq, F_ddq, F_du)
    return cache.applied


def constraint_values(system):
    """h(q) of every constraint, (nc,)."""
    return np.array([con.h() for con in system.constraints])


def constraint_jacobian(system):
    """Dh(q), (nc, nQ)."""
    out = np.zeros((system.nc, system.nQ))
    for i, con in enumerate(system.constraints):
        out[i] = con.h_dq_array()
    return out


def constraint_hessians(system):
    """d2h/dq2 of every constraint, (nc, nQ, nQ)."""
    nq = system.nQ
    out = np.zeros((system.nc, nq, nq))
    for i, con in enumerate(system.constraints):
        out[i] = con.h_dqdq_array()
    return out


def constraint_third_derivatives(system):
    """d3h/dq3 of every constraint, (nc, nQ, nQ, nQ)."""
    nq = system.nQ
    out = np.zeros((system.nc, nq, nq, nq))
    for i, con in enumerate(system.constraints):
        out[i] = con.h_dqdqdq_array()
    return out


def lagrangian_third(system):
    """All third partials of L at the System's state, each (nQ, nQ, nQ)::

        Lqqq[a, b, c] = d3L/dq_a dq_b dq_c
        Lqqv[a, b, c] = d3L/dq_a dq_b dv_c
        Lqvv[a, b, c] = d3L/dq_a dv_b dv_c      (d3L/dv3 = 0: T is quadratic in v)

    One complex-step evaluation of the kernel per config (exact to rounding), minus the
    third derivatives of the potentials the kernel does not evaluate.
    """
    data = system.data
    cache = data.cache
    if cache.third is None:
        model = system.model
        n = model.nq
        h = 1e-30
        Lqqq = np.zeros((n, n, n))
        Lqqv = np.zeros((n, n, n))
        Lqvv = np.zeros((n, n, n))
        gvec = model.gravity.astype(complex)
        dq = data.dq.astype(complex)
        for k in range(n):
            q = data.q.astype(complex)
            q[k] += 1j * h
            out = LagrangianTerms(*model.lagrangian_terms(gvec, q, dq))
            Lqqq[:, :, k] = out.Lqq.imag / h
            # dLvq[a, b]/dq_k = d3L/dv_a dq_b dq_k
            Lqqv[:, k, :] = (out.Lvq.imag / h).T
            # dM[a, b]/dq_k = d3L/dv_a dv_b dq_k
            Lqvv[k, :, :] = out.M.imag / h
        for pot in system.general_potentials:
            Lqqq -= pot.V_dqdqdq_array()
        cache.third = (Lqqq, Lqqv, Lqvv)
    return cache.third


ForceSecond = namedtuple('ForceSecond', 'qq vq vv uq uv uu')
ForceSecond.__doc__ = """Sums of the forces' second derivatives, each [output, in1, in2]:
qq (nQ, nQ, nQ), vq (d dq_1, q_2), vv, uq (nQ, nu, nQ), uv, uu (nQ, nu, nu)."""


def force_second(system):
    """:class:`ForceSecond` at the System's state (cached)."""
    cache = system.data.cache
    if cache.force2 is None:
        n, nu = system.nQ, system.nu
        qq, vq, vv = np.zeros((n, n, n)), np.zeros((n, n, n)), np.zeros((n, n, n))
        uq, uv, uu = np.zeros((n, nu, n)), np.zeros((n, nu, n)), np.zeros((n, nu, nu))
        for f in system.forces:
            qq += f.f_dqdq_array()
            vq += f.f_ddqdq_array()
            vv += f.f_ddqddq_array()
            uq += f.f_dudq_array()
            uv += f.f_duddq_array()
            uu += f.f_dudu_array()
        cache.force2 = ForceSecond(qq, vq, vv, uq, uv, uu)
    return cache.force2
