"""Discrete LQR about an equilibrium, designed on the MidpointVI step the plant runs.

State ``x = [q, p]`` (dynamic configs q (n,), discrete momentum p (n,)), input ``u`` (m,)
(the controller's inputs).  The linearisation is the integrator's own first derivatives at
the equilibrium step ``(q̄, p̄, ū) -> (q̄, p̄)``::

    A = [[q2_dq1, q2_dp1],      B = [[q2_du1],
         [p2_dq1, p2_dp1]]           [p2_du1]]

Infinite horizon (default): ``P`` solves the discrete algebraic Riccati equation
(scipy.linalg.solve_discrete_are) and ``K = (R + BᵀPB)⁻¹BᵀPA``.  trep's finite-horizon
variant (``horizon=N``): the first gain of the time-varying solution over N steps with
terminal weight Q (ros_vi.discopt.solve_tv_lqr), as trep's tutorials use
``DSystem.calc_feedback_controller(...)[0]``.

The law is ``u = ū - K x̃`` with ``x̃ = [q - q̄ (angles wrapped to the goal's branch), p - p̄]``;
its cost-to-go estimate is ``x̃ᵀ P x̃``.  Free joints (a hovering drone, a floating base): the
design system's charts are centred on the goal attitudes, so ``x̃`` is the tangent-space
error at the goal; a plant's state comes in with its charts' attitudes
(:meth:`Controller.compute`'s ``attitudes``).
"""
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..discopt import solve_tv_lqr
from ..integrators import MidpointVI
from ..mechanics.free import xyz_rotation
from .base import ControlOutput, Controller, wrap_angles

__all__ = ['Equilibrium', 'find_equilibrium', 'linearize', 'lqr_gain', 'LQR']


@dataclass
class Equilibrium:
    """A fixed point of the VI step: q (n,) [rad or m], p (n,) discrete momentum, u (m,).

    Note that p = -dt/2 dV/dq (not 0) when gravity acts on the goal configuration: the
    midpoint VI puts the whole step's force into the first discrete Euler-Lagrange term."""
    q: np.ndarray
    p: np.ndarray
    u: np.ndarray


def _step(mvi, system, dt, q, p, u, input_indices):
    full = np.zeros(system.nu)
    full[input_indices] = u
    mvi.initialize_from_state(0.0, q, p)
    mvi.step(dt, full)


def find_equilibrium(system, dt, q_goal, input_indices, tolerance=1e-11, max_iterations=20):
    """The equilibrium of the VI step at configuration ``q_goal`` (nQ,).

    Solves ``step(q̄, p̄, ū) = (q̄, p̄)`` for p̄ (n,) and ū (inputs ``input_indices``) by
    Gauss-Newton on the integrator's derivatives.  Raises ValueError when the inputs cannot
    hold ``q_goal`` (e.g. gravity acting on an unactuated config).
    """
    q = np.asarray(q_goal, dtype=float)
    n, m = system.nQd, len(input_indices)
    mvi = MidpointVI(system)
    z = np.zeros(n + m)
    for _ in range(max_iterations):
        p, u = z[:n], z[n:]
        _step(mvi, system, dt, q, p, u, input_indices)
        r = np.concatenate([mvi.q2 - q, mvi.p2 - p])
        if np.linalg.norm(r) <= tolerance:
            return Equilibrium(q.copy(), p.copy(), u.copy())
        J = np.block([[mvi.q2_dp1(), mvi.q2_du1()[:, input_indices]],
                      [mvi.p2_dp1() - np.eye(n), mvi.p2_du1()[:, input_indices]]])
        z = z - np.linalg.lstsq(J, r, rcond=None)[0]
    raise ValueError('goal %s is not an equilibrium the inputs %s can hold (step residual '
                     '%.3g): an unactuated config feels a net force there'
                     % (dict(zip([c.name for c in system.configs], q)),
                        [system.inputs[i].name for i in input_indices], np.linalg.norm(r)))


def linearize(system, dt, equilibrium, input_indices):
    """(A (2n, 2n), B (2n, m)) of the VI step at ``equilibrium`` (state x = [q, p])."""
    mvi = MidpointVI(system)
    e = equilibrium
    _step(mvi, system, dt, e.q, e.p, e.u, input_indices)
    A = np.block([[mvi.q2_dq1(), mvi.q2_dp1()], [mvi.p2_dq1(), mvi.p2_dp1()]])
    B = np.vstack([mvi.q2_du1()[:, input_indices], mvi.p2_du1()[:, input_indices]])
    return A, B


def _weight(W, n, what):
    """None -> I, scalar -> s I, (n,) -> diag, (n, n) -> as given (symmetrised)."""
    if W is None:
        return np.eye(n)
    W = np.asarray(W, dtype=float)
    if W.ndim == 0:
        W = float(W) * np.eye(n)
    elif W.shape == (n,):
        W = np.diag(W)
    elif W.shape != (n, n):
        raise ValueError('%s must be a scalar, %d diagonal entries or a %dx%d matrix, got '
                         'shape %r' % (what, n, n, n, W.shape))
    if not np.all(np.isfinite(W)):
        raise ValueError('%s has non-finite entries' % what)
    return 0.5 * (W + W.T)


def lqr_gain(A, B, Q, R, horizon=None):
    """(K (m, nx), P (nx, nx)) for ``x(k+1) = A x + B u``, cost sum xᵀQx + uᵀRu.

    ``horizon=None``: infinite horizon (DARE).  ``horizon=N``: first gain and P(0) of the
    N-step time-varying solution with terminal weight Q (trep's finite-horizon variant).
    """
    if horizon is None:
        try:
            P = scipy.linalg.solve_discrete_are(A, B, Q, R)
        except (np.linalg.LinAlgError, ValueError) as exc:
            raise ValueError('no stabilising LQR solution (is the goal controllable with '
                             'these inputs, Q >= 0, R > 0?): %s' % exc) from None
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        return K, 0.5 * (P + P.T)
    N = int(horizon)
    if N < 1 or N != horizon:
        raise ValueError('horizon must be an integer >= 1 or None, got %r' % (horizon,))
    sol = solve_tv_lqr(np.repeat(A[None], N, 0), np.repeat(B[None], N, 0), Q, R)
    return sol.K[0], sol.P


class LQR(Controller):
    """LQR stabiliser of ``goal``, designed at construction on the system's own VI step.

    Parameters
    ----------
    system, dt, inputs, u_max : see :class:`Controller` (dt is the VI step it is designed
        for and must equal the loop's period).
    goal : dict {config name: value} naming every config, or (nQ,) array [rad or m].
    Q : weights on x = [q, p] (2n,): None (I), scalar, diagonal (2n,) or (2n, 2n).
    R : weights on u (m,): None (I), scalar, diagonal (m,) or (m, m).
    horizon : None (infinite horizon, DARE) or N steps (trep's finite-horizon first gain).

    Attributes: ``equilibrium`` (q̄, p̄, ū), ``A``, ``B``, ``K`` (m, 2n), ``P`` (2n, 2n),
    ``goal_energy`` [J] (energy at q̄ at rest), ``spectral_radius`` of A - BK.
    """

    def __init__(self, system, dt, goal, Q=None, R=None, inputs=None, u_max=None,
                 horizon=None):
        Controller.__init__(self, system, dt, inputs, u_max)
        n, m = system.nQd, len(self.input_names)
        q_goal = self._centred_goal(self._goal_vector(goal))
        self.equilibrium = find_equilibrium(system, self.dt, q_goal, self.input_indices)
        self.A, self.B = linearize(system, self.dt, self.equilibrium, self.input_indices)
        self.Q = _weight(Q, 2 * n, 'Q')
        self.R = _weight(R, m, 'R')
        self.horizon = horizon
        self.K, self.P = lqr_gain(self.A, self.B, self.Q, self.R, horizon)
        self.spectral_radius = float(max(abs(np.linalg.eigvals(self.A - self.B @ self.K))))
        self.goal_energy = self.energy(q_goal, np.zeros(n))

    def _goal_vector(self, goal):
        if isinstance(goal, dict):
            missing = [n for n in self.joint_names if n not in goal]
            unknown = [n for n in goal if n not in self.joint_names]
            if missing or unknown:
                raise ValueError('goal must name every joint %s: missing %s, unknown %s'
                                 % (self.joint_names, missing, unknown))
            goal = [goal[n] for n in self.joint_names]
        return self._checked(goal, 'goal')

    def _centred_goal(self, q_goal):
        """With free joints: the design system's charts moved to the goal attitudes (the
        goal's angles given in its current charts), and the goal with those angles 0.  The
        law's error is then the state in the charts of the goal (where a plant's state is
        expressed by ``compute(..., attitudes=)``), free of any singularity nearby."""
        charts = self.system.free_charts
        if charts is None:
            return q_goal
        current = charts.attitudes(self.system.model)
        charts.set_attitudes(np.array([R @ xyz_rotation(q_goal[rot])
                                       for R, rot in zip(current, charts.rotation)]))
        q_goal = q_goal.copy()
        q_goal[charts.rotation.ravel()] = 0.0
        return q_goal

    def error(self, q, p):
        """x̃ = [q - q̄ (angles wrapped to the goal's branch), p - p̄] (2n,)."""
        e = self.equilibrium
        return np.concatenate([wrap_angles(q - e.q, self._angles), p - e.p])

    def cost_to_go(self, q, v):
        """x̃ᵀ P x̃ for the state (q, v) (momentum rebuilt as M(q) v)."""
        x = self.error(q, self.momentum(q, v))
        return float(x @ self.P @ x)

    def unsaturated_level(self):
        """Largest c with |ū_i - K_i x̃| <= u_max_i on the whole ellipsoid {x̃ᵀ P x̃ <= c}:
        ``min_i (u_max_i - |ū_i|)² / (K_i P⁻¹ K_iᵀ)`` (inf without limits).

        On that set the law does not saturate, so for the linearised loop it is invariant
        and attracted to the goal: the region-of-attraction estimate the hand-over uses."""
        margin = self.u_max - np.abs(self.equilibrium.u)
        spread = np.einsum('ij,ij->i', self.K, np.linalg.solve(self.P, self.K.T).T)
        with np.errstate(divide='ignore'):
            return float(np.min(np.maximum(margin, 0.0) ** 2 / spread))

    def _law(self, q, v):
        p = self.momentum(q, v)
        energy = self.system.total_energy()          # state already set by momentum()
        x = self.error(q, p)
        u = self.equilibrium.u - self.K @ x
        return ControlOutput(u, 'lqr', energy - self.goal_energy, float(x @ self.P @ x))
