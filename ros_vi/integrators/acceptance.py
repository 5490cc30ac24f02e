"""The acceptance rule of a converged root of the DEL (both paths; docs/integrator.md).

At a large step the discrete Euler-Lagrange equation has several roots; a converged root
is accepted only if it continues the trajectory:

(a) its increment q2 - q1 differs from that of the linearised step (the first Newton
    iterate from the predictor) by at most ``AGREE`` times the linearised step's length, or
    the length of that Newton correction if larger (max-norms over the dynamic configs,
    :func:`deviation_bound`), and
(b) when the energy of the previous step is known (and no kinematic config moves), the
    midpoint energy E = T + V changes by the discrete work of the applied and constraint
    forces to within ``ENERGY_SLACK`` of the energy that moved (:func:`energy_bound`).

:func:`check_root` applies both tests; the compiled step
(:func:`ros_vi.integrators.step_body.newton_step`) and the general path
(:mod:`ros_vi.integrators.general_step`) call it.  Its inputs and outputs are two small
arrays: the energy *anchor* (slots ``A_*``: the energy and time of the last accepted step's
midpoint, or of the start node) and the *check* (slots ``C_*``: the numbers of the last
test, :func:`check_summary`).
"""
import numpy as np
from numba import njit

from .newton import ROUNDING

AGREE = 0.5              # (a) deviation of the root from the linearised step allowed per
                         # length of that step
ENERGY_SLACK = 0.05      # (b) energy defect allowed per energy that moved in the step

# Energy anchor (indices into an anchor array, :func:`new_anchor`): the energy E = T + V,
# its kinetic and potential parts [J], the step length [s] (0: a node, i.e. the state
# (q1, p1) itself) and end time [s] of the last accepted step, and whether it can anchor
# the energy check (1.0) or not (0.0)
A_E, A_T, A_V, A_DT, A_TIME, A_VALID = range(6)
NANCHOR = 6
# Outcome of the last acceptance test (indices into a check array): deviation from the
# linearised step and its bound [rad or m], energy defect and its bound [J], 1.0 if the
# energy was checked, the linearised step's increment (max-norm) [rad or m]
C_DEVIATION, C_DEV_BOUND, C_DEFECT, C_DEF_BOUND, C_ENERGY, C_FIRST = range(6)
NCHECK = 6


@njit(cache=True)
def deviation_bound(length, size):
    """Acceptance test (a): the largest accepted max-norm distance [rad or m] between a
    root's increment q2 - q1 and that of the linearised step.

    The linearised step is the first Newton iterate from the predictor: the predicted
    configuration corrected by the DEL's own linearisation there, i.e. by the forces and
    the momentum of this step (from rest it is the step dt^2 M^-1 F).  ``length``: the
    larger of the max-norms of its increment and of that Newton correction (the scale the
    bound grows with: the step, or where the step is ~0, as at an equilibrium, how far the
    prediction was off); ``size``: max-norm of |q1| + |q2 - q1| (rounding floor).  On a
    step the DEL resolves, the root differs from the linearised step by a small fraction of
    the step (quadratic convergence); a root farther away is another root of the DEL, or
    the step is too coarse for the motion.
    """
    return AGREE * length + ROUNDING * size


@njit(cache=True)
def energy_bound(T_a, T_m, V_a, V_m, E_a, E_m, work, solver):
    """Acceptance test (b): the largest accepted |energy defect| [J] of a step.

    The defect is ``E_m - E_a - work - G`` with E_m = T_m + V_m the energy at the step's
    midpoint, E_a that at the anchor (the previous step's midpoint, or the start node),
    ``work`` the discrete work of the applied (and constraint) forces between the two and
    G the unequal-step correction (docs/integrator.md).  It vanishes for constant mass
    matrices and linear potentials; for a correct step it is a small fraction of the
    energy that moved (kinetic energies, work, potential change: below 2.5 % at 0.4 rad per
    step in the measured runs) and shrinks with the square of the step, while a spurious
    root carries a defect of the order of its own (huge) kinetic energy and a step too
    coarse for the motion (configurations turning by a radian or more per step) one of tens
    of percent: both are rejected, and subdivided.  ``solver``: the solver's
    residual times the velocities (the defect a root within tolerance may have).
    """
    moved = T_a + T_m + abs(work) + abs(V_m - V_a)
    return (ENERGY_SLACK * moved + 16.0 * ROUNDING * (abs(E_a) + abs(E_m) + moved)
            + 2.0 * solver)


@njit(cache=True)
def check_root(q1, delta, linearised, correction, v, force, impulse_scale, Lq, va, anchor,
               energy, T_m, V_m, dt, residual, check):
    """The acceptance rule for a converged root (both paths call this); returns True when
    the root is accepted and writes the test's numbers into ``check`` (C_* slots).

    Dynamic parts (nd,) of: ``q1``, the root's increment ``delta`` = q2 - q1, the
    linearised step's increment ``linearised`` (and ``correction``, the max-norm of the
    Newton update that made it from the predictor), the midpoint velocity ``v`` =
    delta / dt, the applied generalized ``force`` (the step's impulse is
    ``impulse_scale * force``, constraint impulses included), L's ``Lq`` at the midpoint;
    ``va`` and ``anchor`` (A_* slots) the energy anchor, used when ``energy`` and
    anchor[A_VALID]; ``T_m``, ``V_m`` the midpoint energies [J], ``residual`` the
    solver's residual norm (or its tolerance).  Test (b) is, with vbar = (va + v)/2,
    ``|E_m - E_a - impulse . vbar - (dt - dt_a)/4 Lq . (va - v)| <= energy_bound(...)``.
    """
    nd = linearised.shape[0]
    deviation = 0.0
    size = 0.0
    length = correction
    for i in range(nd):
        deviation = max(deviation, abs(delta[i] - linearised[i]))
        size = max(size, abs(q1[i]) + abs(delta[i]))
        length = max(length, abs(linearised[i]))
    check[C_DEVIATION] = deviation
    check[C_DEV_BOUND] = deviation_bound(length, size)
    check[C_FIRST] = length
    accepted = deviation <= check[C_DEV_BOUND]
    check[C_ENERGY] = 0.0
    check[C_DEFECT] = 0.0
    check[C_DEF_BOUND] = 0.0
    if energy and anchor[A_VALID] == 1.0:
        work = 0.0
        unequal = 0.0
        speeds = 0.0
        for i in range(nd):
            work += impulse_scale * force[i] * 0.5 * (va[i] + v[i])
            unequal += Lq[i] * (va[i] - v[i])
            speeds += abs(va[i]) + abs(v[i])
        unequal *= 0.25 * (dt - anchor[A_DT])
        E_m = T_m + V_m
        check[C_ENERGY] = 1.0
        check[C_DEFECT] = E_m - anchor[A_E] - work - unequal
        check[C_DEF_BOUND] = energy_bound(anchor[A_T], T_m, anchor[A_V], V_m,
                                          anchor[A_E], E_m, work, residual * speeds)
        accepted = accepted and abs(check[C_DEFECT]) <= check[C_DEF_BOUND]
    return accepted


def check_summary(check):
    """An acceptance test's numbers (a NCHECK array written by :func:`check_root`) as a
    dict: deviation / deviation_bound [rad or m] (test (a)), defect / defect_bound [J] and
    energy_checked (test (b)), linearised (max-norm of the linearised step's increment)."""
    c = check
    return {'deviation': float(c[C_DEVIATION]), 'deviation_bound': float(c[C_DEV_BOUND]),
            'defect': float(c[C_DEFECT]), 'defect_bound': float(c[C_DEF_BOUND]),
            'energy_checked': bool(c[C_ENERGY]), 'linearised': float(c[C_FIRST])}


def rejection_reason(check):
    """Why a converged root failed the acceptance rule, in words, from a
    :func:`check_summary` dict."""
    why = []
    if check['deviation'] > check['deviation_bound']:
        why.append('it lies %.3g [rad or m] from the linearised step (allowed %.3g): another '
                   'root of the DEL, not the continuation of the trajectory, or a step too '
                   'coarse for the motion' % (check['deviation'], check['deviation_bound']))
    if check['energy_checked'] and abs(check['defect']) > check['defect_bound']:
        why.append('its energy differs by %.3g J from the work done (allowed %.3g J)'
                   % (check['defect'], check['defect_bound']))
    return '; '.join(why) or 'acceptance rule'


def new_anchor(E=0.0, T=0.0, V=0.0, dt=0.0, time=0.0, valid=False):
    """An energy anchor array (A_* slots) for :func:`check_root`."""
    a = np.zeros(NANCHOR)
    a[A_E], a[A_T], a[A_V], a[A_DT], a[A_TIME] = E, T, V, dt, time
    a[A_VALID] = 1.0 if valid else 0.0
    return a
