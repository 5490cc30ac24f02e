"""Compiled DEL solve for the common case: a frame tree with built-in terms only.

When a System has no constraints and its only potentials and forces are ``Gravity``,
``ConfigSpring``, ``Damping`` and ``ConfigForce``, the whole Newton solve of a step runs in
one numba kernel (predictor, residual, exact Jacobian, linear solves, p2).  Every other
system uses the general path in :mod:`midpointvi`, which gives the same answer (tests
compare the two).
"""
import numpy as np

from ..mechanics import kernel
from ..mechanics.forces.configforce import ConfigForce
from ..mechanics.forces.damping import Damping
from ..mechanics.potentials.configspring import ConfigSpring
from ..mechanics.potentials.gravity import Gravity
from ..mechanics.kernel import njit

OK, NOT_CONVERGED, NOT_FINITE, SINGULAR = 0, 1, 2, 3


@njit(cache=True)
def solve_del(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint,
              cframe, cparent, corder, anc, gvec, q1, p1, u1, q2, dt, nd, damping,
              sp_idx, sp_k, sp_q0, in_cfg, tol, max_iter):
    """Newton solve of the unconstrained DEL from the guess ``q2`` (modified in place).

    Returns ``(p2, iterations, status, residual_norm)``.
    """
    nq = q1.shape[0]
    qm = np.empty(nq)
    v = np.empty(nq)
    r = np.empty(nd)
    p2 = np.zeros(nd)
    J = np.empty((nd, nd))
    it = 0
    status = NOT_CONVERGED
    rnorm = np.inf
    while True:
        for i in range(nq):
            qm[i] = 0.5 * (q1[i] + q2[i])
            v[i] = (q2[i] - q1[i]) / dt
        R, P, S, Vp, Ic, h, Lq, Lv, T, Vg = kernel.first_order(
            parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint,
            cframe, cparent, corder, gvec, qm, v)
        for j in range(sp_idx.shape[0]):
            Lq[sp_idx[j]] -= sp_k[j] * (qm[sp_idx[j]] - sp_q0[j])
        acc = 0.0
        for i in range(nd):
            f = -damping[i] * v[i]
            for j in range(in_cfg.shape[0]):
                if in_cfg[j] == i:
                    f += u1[j]
            r[i] = p1[i] + 0.5 * dt * Lq[i] - Lv[i] + dt * f
            acc += r[i] * r[i]
        rnorm = np.sqrt(acc)
        if not np.isfinite(rnorm):
            status = NOT_FINITE
            break
        if rnorm <= tol:
            status = OK
            break
        if it >= max_iter:
            status = NOT_CONVERGED
            break
        M, Lvq, Lqq = kernel.second_order(S, Vp, Ic, h, gvec, anc, corder)
        for j in range(sp_idx.shape[0]):
            Lqq[sp_idx[j], sp_idx[j]] -= sp_k[j]
        for a in range(nd):
            for b in range(nd):
                J[a, b] = (0.25 * dt * Lqq[a, b] + 0.5 * (Lvq[b, a] - Lvq[a, b])
                           - M[a, b] / dt)
            J[a, a] -= damping[a]
        if nd > 0:
            if np.abs(np.linalg.det(J)) == 0.0:
                status = SINGULAR
                break
            delta = np.linalg.solve(J, r)
            for i in range(nd):
                q2[i] -= delta[i]
        it += 1
    for i in range(nd):
        p2[i] = 0.5 * dt * Lq[i] + Lv[i]
    return p2, it, status, rnorm


class FastStepper:
    """Binds a System's built-in terms to :func:`solve_del` (None if the system needs the
    general path)."""

    _ALLOWED_POTENTIALS = (Gravity, ConfigSpring)
    _ALLOWED_FORCES = (Damping, ConfigForce)

    def __init__(self, system):
        self._system = system
        self._model = system._model

    @classmethod
    def for_system(cls, system):
        if system.nc:
            return None
        if any(type(p) not in cls._ALLOWED_POTENTIALS for p in system.potentials):
            return None
        if any(type(f) not in cls._ALLOWED_FORCES for f in system.forces):
            return None
        return cls(system)

    def _parameters(self):
        s = self._system
        nq = s.nQ
        damping = np.zeros(nq)
        springs = [p for p in s.potentials if type(p) is ConfigSpring]
        sp_idx = np.array([p.config.index for p in springs], dtype=np.int64)
        sp_k = np.array([p.k for p in springs], dtype=float)
        sp_q0 = np.array([p.q0 for p in springs], dtype=float)
        in_cfg = np.full(s.nu, -1, dtype=np.int64)
        for f in s.forces:
            if type(f) is Damping:
                damping += f._c
            else:
                in_cfg[f.finput.index] = f.config.index
        return damping, sp_idx, sp_k, sp_q0, in_cfg

    def solve(self, mvi, guess, max_iterations):
        """Solve the step set up in ``mvi``; returns ``(q2, p2, iterations)``."""
        from .midpointvi import ConvergenceError
        model = self._model
        damping, sp_idx, sp_k, sp_q0, in_cfg = self._parameters()
        q2 = guess.copy()
        p2, iterations, status, rnorm = solve_del(
            *model.dyn_args(), model.anc, self._system._gvec, mvi._q1, mvi._p1, mvi._u1,
            q2, mvi._t2 - mvi._t1, mvi.nd, damping, sp_idx, sp_k, sp_q0, in_cfg,
            mvi.tolerance, max_iterations)
        if status == OK:
            return q2, p2, iterations
        if status == NOT_FINITE:
            raise ConvergenceError('the DEL residual became non-finite after %d iterations'
                                   % iterations)
        if status == SINGULAR:
            raise ConvergenceError('singular DEL Jacobian after %d iterations (a dynamic '
                                   'config that moves no mass?)' % iterations)
        raise ConvergenceError('failed to converge after %d iterations (|DEL| = %.3g)'
                               % (iterations, rnorm))
