"""Dynamics as functions: what is computed from a state, named after the maths.

Two kinds of function live here:

* ``f(model, data)``: terms of the compiled frame tree (kinematics, the kinetic energy and
  gravity part of the Lagrangian, the mass matrix, the Legendre transform).  They read only
  the :class:`~ros_vi.mechanics.model.Model` and the given
  :class:`~ros_vi.mechanics.data.Data`, cache their results in ``data.cache`` and never
  touch any other state, so any number of Data objects can be evaluated side by side.
* ``f(system)``: sums over the System's own potentials, forces and constraints (Python
  objects that read the state the System evaluates, ``system.data``: its own, or the Data
  of the calling thread's ``system.evaluate_at`` block; the results are cached in that
  Data too).

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
import scipy.linalg

from .data import Cache
from .framevectors import ComponentBatch, constraint_groups, term_groups

LagrangianTerms = namedtuple('LagrangianTerms', 'Lq Lv M Lvq Lqq T Vg')
LagrangianTerms.__doc__ = """Kinetic energy minus kernel gravity at one state.

Lq (nQ,) = dL/dq, Lv (nQ,) = dL/dv (the momentum), M (nQ, nQ) mass matrix = d2L/dv2,
Lvq (nQ, nQ) = d2L/dv dq [v-row, q-column], Lqq (nQ, nQ) = d2L/dq2, T kinetic energy [J],
Vg gravity potential energy [J] (kernel gravity only)."""

FirstOrderTerms = namedtuple('FirstOrderTerms', 'Lq Lv T Vg')
FirstOrderTerms.__doc__ = """The O(n) part of :class:`LagrangianTerms`: Lq, Lv (nQ,), T, Vg."""

AppliedForces = namedtuple('AppliedForces', 'V_dq F')
AppliedForces.__doc__ = """The first-order part of :class:`AppliedTerms` (what the
integrator's residual needs): V_dq (nQ,) and F (nQ,)."""

AppliedJacobians = namedtuple('AppliedJacobians', 'V_dqdq F_dq F_ddq')
AppliedJacobians.__doc__ = """The derivatives of :class:`AppliedForces` in q and dq:
V_dqdq, F_dq, F_ddq (nQ, nQ), indexed [output, input]."""

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
    integrator's Newton loop calls it once per iterate; the kinematics it computes on the
    way are cached for :func:`kinematics`)."""
    Lq, Lv, T, Vg, kin = model.first_order(model.gravity, data.q, data.dq,
                                           with_kinematics=True)
    cache = data.cache
    if cache.kinematics is None:
        cache.kinematics = kin
    return FirstOrderTerms(Lq, Lv, T, Vg)


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


def velocity_from_momentum(model, data, p, held=None):
    """Velocity of the dynamic configs v_d = M_dd(q)^-1 p, (nQd,), at ``data.q``.

    The Legendre transform of the VI's discrete momentum p2 at q2: what the simulator
    publishes as joint velocity and what a controller inverts with
    :func:`momentum_from_velocity` (kinematic configs carry their prescribed rate
    separately).  ``held`` (indices): configs held on a joint limit
    (:attr:`MidpointVI.held_configs`), which do not move: their velocity is 0 and the
    others' solve their own rows, ``M_ff v_f = p_f`` (their momenta carry no limit
    impulse; the held rows' momentum is the limit's reaction)."""
    if model.nd == 0:
        return np.zeros(0)
    M = mass_matrix(model, data)
    p = np.asarray(p, dtype=float)
    if held is None or not len(held):
        return np.linalg.solve(M, p)
    free = np.setdiff1d(np.arange(model.nd), held)
    v = np.zeros(model.nd)
    v[free] = np.linalg.solve(M[np.ix_(free, free)], p[free])
    return v


# ---------------------------------------------------------------------- the System's terms
def general_potential_energy(system):
    """Potential energy V [J] of the non-kernel potentials (``system.general_potentials``)
    at the System's current state: the members of a built-in class summed in one batch
    evaluation (shared with :func:`applied_forces` at the same state), the others by
    their own ``V()``."""
    potentials, _ = term_groups(system)
    V = 0.0
    for entry in potentials:
        if isinstance(entry, ComponentBatch):
            out = entry.sums('energy')
            V += out if out is not None else sum(p.V() for p in entry.members)
        else:
            V += entry.V()
    return float(V)


def applied_forces(system):
    """:class:`AppliedForces` at the System's current state (cached in ``system.data``):
    the sums of the non-kernel potentials' dV/dq and of the forces, without any of their
    derivatives (a residual evaluation needs no more)."""
    cache = system.data.cache
    if cache.applied_forces is None:
        nq = system.nQ
        V_dq, F = np.zeros(nq), np.zeros(nq)
        potentials, forces = term_groups(system)
        for entry in potentials:
            if isinstance(entry, ComponentBatch):
                out = entry.sums('first')
                if out is not None:
                    V_dq += out
                    continue
                for pot in entry.members:
                    V_dq += pot.V_dq_array()
            else:
                V_dq += entry.V_dq_array()
        for entry in forces:
            if isinstance(entry, ComponentBatch):
                out = entry.sums('first')
                if out is not None:
                    F += out
                    continue
                for force in entry.members:
                    F += force.f_array()
            else:
                F += entry.f_array()
        cache.applied_forces = AppliedForces(V_dq, F)
    return cache.applied_forces


def applied_jacobians(system):
    """:class:`AppliedJacobians` at the System's current state (cached in
    ``system.data``): the q and dq derivatives of :func:`applied_forces` (what a Newton
    iteration of the integrator needs)."""
    cache = system.data.cache
    if cache.applied_jacobians is None:
        nq = system.nQ
        V_dqdq, F_dq, F_ddq = np.zeros((nq, nq)), np.zeros((nq, nq)), np.zeros((nq, nq))
        potentials, forces = term_groups(system)
        for entry in potentials:
            if isinstance(entry, ComponentBatch):
                out = entry.sums('jacobian')
                if out is not None:
                    V_dqdq += out
                    continue
                for pot in entry.members:
                    V_dqdq += pot.V_dqdq_array()
            else:
                V_dqdq += entry.V_dqdq_array()
        for entry in forces:
            if isinstance(entry, ComponentBatch):
                out = entry.sums('jacobian')
                if out is not None:
                    F_dq += out[0]
                    if out[1] is not None:
                        F_ddq += out[1]
                    continue
                members = entry.members
            else:
                members = (entry,)
            for force in members:
                F_dq += force.f_dq_array()
                F_ddq += force.f_ddq_array()
        cache.applied_jacobians = AppliedJacobians(V_dqdq, F_dq, F_ddq)
    return cache.applied_jacobians


def applied_terms(system):
    """:class:`AppliedTerms` at the System's current state (cached in ``system.data``;
    the parts of :func:`applied_forces` and :func:`applied_jacobians` and F_du)."""
    data = system.data
    cache = data.cache
    if cache.applied is None:
        V_dq, F = applied_forces(system)
        V_dqdq, F_dq, F_ddq = applied_jacobians(system)
        F_du = np.zeros((system.nQ, system.nu))
        for force in system.forces:
            F_du += force.f_du_array()
        cache.applied = AppliedTerms(V_dq, V_dqdq, F, F_dq, F_ddq, F_du)
    return cache.applied


def constraint_values(system):
    """h(q) of every constraint, (nc,)."""
    out = np.zeros(system.nc)
    for entry, rows in constraint_groups(system):
        if isinstance(entry, ComponentBatch):
            out[rows] = entry.get(1)[0]
        else:
            out[rows] = entry.h()
    return out


def constraint_jacobian(system):
    """Dh(q), (nc, nQ)."""
    out = np.zeros((system.nc, system.nQ))
    for entry, rows in constraint_groups(system):
        if isinstance(entry, ComponentBatch):
            out[rows] = entry.get(1)[1]
        else:
            out[rows] = entry.h_dq_array()
    return out


def constraint_hessians(system):
    """d2h/dq2 of every constraint, (nc, nQ, nQ)."""
    nq = system.nQ
    out = np.zeros((system.nc, nq, nq))
    for entry, rows in constraint_groups(system):
        if isinstance(entry, ComponentBatch):
            out[rows] = entry.get(2)[2]
        else:
            out[rows] = entry.h_dqdq_array()
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


# ---------------------------------------------------------------------- continuous dynamics
def gravity_forces(system):
    """dV/dq of all potentials (kernel gravity, springs, ...) for the dynamic configs,
    (nQd,) [N, N m], at the System's configuration."""
    model, data = system.model, system.data
    Vg_q = -FirstOrderTerms(*model.first_order(model.gravity, data.q,
                                               np.zeros_like(data.dq))).Lq
    return (Vg_q + applied_forces(system).V_dq)[:model.nd].copy()


def bias_forces(system):
    """Coriolis, centrifugal and potential forces C(q, dq) dq + dV/dq, (nQd,) [N, N m]:
    ``M(q) ddq_d = u_forces - bias`` for an unconstrained system with zero kinematic
    acceleration."""
    model, data = system.model, system.data
    t = lagrangian_terms(model, data)
    return (t.Lvq @ data.dq - t.Lq + applied_forces(system).V_dq)[:model.nd].copy()


def kkt_matrix(system):
    """The continuous-dynamics KKT matrix [[M_dd, Dh_d^T], [Dh_d, 0]], (nQd + nc,) square,
    and Dh (nc, nQ).  Raises ValueError naming the dynamic configs that move no mass."""
    model, data = system.model, system.data
    nd, nc = model.nd, system.nc
    M = lagrangian_terms(model, data).M
    diag = np.diag(M)[:nd]
    bad = [c.name for c, m in zip(system.dyn_configs, diag) if not m > 0.0]
    if bad:
        raise ValueError('the mass matrix is singular: dynamic config(s) %s move no mass '
                         '(make them kinematic or add mass below them)'
                         % ', '.join(repr(b) for b in bad))
    Dh = constraint_jacobian(system)
    A = np.zeros((nd + nc, nd + nc))
    A[:nd, :nd] = M[:nd, :nd]
    A[:nd, nd:] = Dh[:, :nd].T
    A[nd:, :nd] = Dh[:, :nd]
    return A, Dh


def continuous_dynamics(system):
    """``(ddq_d (nQd,), lambda (nc,))`` at the System's state (cached): solves
    ``M ddq = dL/dq - d/dt(dL/d dq) + F - Dh^T lambda`` with ``Dh ddq + dDh dq = 0``, the
    kinematic accelerations taken from ``data.ddq``; ddq_d is also written to ``data.ddq``
    (trep's ``Config.ddq``)."""
    model, data = system.model, system.data
    cache = data.cache
    if cache.dynamics is None:
        nd, nc = model.nd, system.nc
        t = lagrangian_terms(model, data)
        e = applied_terms(system)
        A, Dh = kkt_matrix(system)
        dq = data.dq
        ddqk = data.ddq[nd:]
        b = np.zeros(nd + nc)
        b[:nd] = (t.Lq - e.V_dq + e.F - t.Lvq @ dq)[:nd] - t.M[:nd, nd:] @ ddqk
        if nc:
            H = constraint_hessians(system)
            b[nd:] = -Dh[:, nd:] @ ddqk - np.einsum('i,cij,j->c', dq, H, dq)
        z = scipy.linalg.solve(A, b, assume_a='sym') if nd + nc else b
        cache.dynamics = (z[:nd].copy(), z[nd:].copy())
        data.ddq[:nd] = z[:nd]
    return cache.dynamics


def continuous_dynamics_derivatives(system):
    """d[ddq_d, lambda]/d(q, dq, ddq_k, u) by the implicit function theorem (cached): a dict
    of arrays (nQd + nc, n_input) under 'dq', 'ddq', 'dddk', 'du', indexed [output, input]."""
    model, data = system.model, system.data
    cache = data.cache
    if cache.dynamics1 is None:
        nd, nc, nq, nu = model.nd, system.nc, model.nq, model.nu
        ddqd, lam = continuous_dynamics(system)
        e = applied_terms(system)
        A, Dh = kkt_matrix(system)
        qdd = data.ddq.copy()
        qdd[:nd] = ddqd
        dq = data.dq

        # Kinetic part K = M qdd + Lvq dq - Lq.  Since mixed partials commute and M does
        # not depend on dq, with D the derivative along the motion (q, v) -> (dq, qdd):
        #   dK/dq  = D(Lvq) - Lqq,     dK/d(dq) = Lvq - Lvq^T + D(M)
        # and one complex-step evaluation of the kernel gives D of every term exactly.
        hstep = 1e-30
        t = lagrangian_terms(model, data)
        out = LagrangianTerms(*model.lagrangian_terms(
            model.gravity.astype(complex), data.q + 1j * hstep * dq, dq + 1j * hstep * qdd))
        DM, DLvq = out.M.imag / hstep, out.Lvq.imag / hstep
        E_q = np.zeros((nd + nc, nq))
        E_dq = np.zeros((nd + nc, nq))
        H = constraint_hessians(system) if nc else np.zeros((0, nq, nq))
        E_q[:nd] = (DLvq - t.Lqq)[:nd]
        E_dq[:nd] = (t.Lvq - t.Lvq.T + DM)[:nd]
        E_q[:nd] += e.V_dqdq[:nd] - e.F_dq[:nd]
        E_dq[:nd] += -e.F_ddq[:nd]
        if nc:
            E_q[:nd] += np.einsum('c,cij->ij', lam, H)[:nd]
            H3 = constraint_third_derivatives(system)
            E_q[nd:] = np.einsum('cij,j->ci', H, qdd) + np.einsum('cijk,j,k->ci', H3, dq, dq)
            E_dq[nd:] = 2.0 * np.einsum('cij,j->ci', H, dq)
        E_k = np.zeros((nd + nc, nq - nd))
        E_k[:nd] = t.M[:nd, nd:]
        E_k[nd:] = Dh[:, nd:]
        E_u = np.zeros((nd + nc, nu))
        E_u[:nd] = -e.F_du[:nd]
        lu = scipy.linalg.lu_factor(A)
        cache.dynamics1 = {k: -scipy.linalg.lu_solve(lu, v)
                           for k, v in (('dq', E_q), ('ddq', E_dq), ('dddk', E_k), ('du', E_u))}
    return cache.dynamics1


def continuous_dynamics_second(system):
    """Second derivatives of [ddq_d, lambda] (cached), by fourth-order (Richardson) central
    differences of the exact first derivatives (relative accuracy ~1e-10; the fourth
    partials of L they would need in closed form are not computed).  The state is restored.

    Returns a dict of arrays indexed [input1, input2, output (nQd + nc)] under 'dqdq',
    'ddqdq', 'dddkdq', 'dudq', 'ddqddq', 'duddq', 'dudu'.
    """
    data = system.data
    cache = data.cache
    if cache.dynamics2 is None:
        state = (data.q.copy(), data.dq.copy(), data.u.copy(), data.ddq.copy())

        def first_at(attr, i, delta):
            arr = getattr(data, attr)
            base = arr[i]
            arr[i] = base + delta
            data.cache = Cache()
            out = continuous_dynamics_derivatives(system)
            arr[i] = base
            return out

        def derivative(attr, n, keys):
            res = {k: [] for k in keys}
            for i in range(n):
                h = 1e-3 * max(1.0, abs(getattr(data, attr)[i]))
                p1, m1 = first_at(attr, i, h), first_at(attr, i, -h)
                p2, m2 = first_at(attr, i, h / 2), first_at(attr, i, -h / 2)
                for k in keys:
                    d1 = (p1[k] - m1[k]) / (2 * h)
                    d2 = (p2[k] - m2[k]) / h
                    res[k].append((4 * d2 - d1) / 3)   # [output, input1] per input2
            out = {}
            for k in keys:
                arr = np.array(res[k]).reshape((n,) + p1[k].shape)
                out[k] = arr.transpose(2, 0, 1)        # [input1, input2, output]
            return out
        dq_ = derivative('q', data.q.shape[0], ('dq', 'ddq', 'dddk', 'du'))
        ddq_ = derivative('dq', data.q.shape[0], ('ddq', 'du'))
        du_ = derivative('u', data.u.shape[0], ('du',))
        data.q[:], data.dq[:], data.u[:], data.ddq[:] = state
        data.cache = cache
        cache.dynamics2 = {'dqdq': dq_['dq'], 'ddqdq': dq_['ddq'], 'dddkdq': dq_['dddk'],
                           'dudq': dq_['du'], 'ddqddq': ddq_['ddq'], 'duddq': ddq_['du'],
                           'dudu': du_['du']}
    return cache.dynamics2
