"""The general path's step: the DEL of any System and its globalized Newton solve (NumPy).

Discrete Lagrangian and forcing (dt = t2 - t1, qm = (q1 + q2)/2, v = (q2 - q1)/dt)::

    Ld(q1, q2)  = dt L(qm, v)
    f-(q1, q2)  = dt F(qm, v, u1, (t1 + t2)/2),      f+ = 0

A step solves, for the dynamic part of q2 and lambda1::

    p1 + D1 Ld + f- - Dh(q1)^T lambda1 = 0
    h(q2) = 0

and then ``p2 = D2 Ld``, with ``D1 Ld = dt/2 L_q - L_v`` and ``D2 Ld = dt/2 L_q + L_v`` at the
midpoint.  :class:`GeneralStep` evaluates that residual through the System's own terms
(:mod:`ros_vi.mechanics.dynamics`: any potential, force or constraint), gives the first
guess (:meth:`GeneralStep.predict`), runs Newton's method with the exact Jacobian (and the
chord updates), the line search and the stopping rule of :mod:`ros_vi.integrators.newton`
(:meth:`GeneralStep.solve`), and applies the acceptance rule of
:mod:`ros_vi.integrators.acceptance` to the root (:meth:`GeneralStep.accept`): the same
rules as the compiled step (:func:`ros_vi.integrators.step_body.newton_step`), so both paths
take the same roots.  :class:`~ros_vi.integrators.MidpointVI` decides which path runs,
retries and subdivides.
"""
import numpy as np
import scipy.linalg
import scipy.optimize
from numba import njit

from ..mechanics import dynamics
from ..mechanics.free import centre_partials, centre_partials_derivatives
from .acceptance import A_TIME, check_root, new_anchor
from ..mechanics.contact import ContactSet
from .newton import (ARMIJO, BACKTRACK, CHORD_MARGIN, COMPLIANCE, CONE_SLACK, CONTACT_TOLERANCE,
                     GAP_SLACK, LIMIT_SLACK, MAX_BACKOFF, MAX_BACKTRACKS, OPEN, REUSE_DT, ROUNDING,
                     SLIDE, SLIDE_GROUP, SLIP_FLOOR, SLIP_REST, SLIP_SCALE, SLIP_STALL, STAGNATION,
                     STAGNATION_FACTOR, STALLED, STALL_ACCEPT, STICK, WAKE_GAP,
                     extrapolation_order)

_DGESV, _DGETRF, _DGETRS = scipy.linalg.get_lapack_funcs(('gesv', 'getrf', 'getrs'),
                                                         (np.zeros((1, 1)),))


class RootNotFound(Exception):
    """Newton's iteration on the DEL found no root (the message says why); ``iterations``
    is how many it took."""

    def __init__(self, message, iterations):
        super().__init__(message)
        self.iterations = iterations


def _solve_newton(A, r):
    """x with A x = r for the square Newton matrix A (LAPACK gesv: the LU solve of
    ``scipy.linalg.solve`` without its condition estimate and checks, ~10x cheaper at
    these sizes).  Raises ``LinAlgError`` for an exactly singular A."""
    if A.shape[0] == 0:
        return r.copy()
    _, _, x, info = _DGESV(A, r)
    if info > 0:
        raise np.linalg.LinAlgError('singular matrix (zero pivot %d)' % info)
    if info < 0:
        raise ValueError('gesv: illegal argument %d' % -info)
    return x


def _factor_newton(A):
    """LU factors (lu, piv) of the square Newton matrix A (LAPACK getrf), for
    :func:`_solve_factored`.  Raises ``LinAlgError`` for an exactly singular A."""
    lu, piv, info = _DGETRF(A)
    if info > 0:
        raise np.linalg.LinAlgError('singular matrix (zero pivot %d)' % info)
    if info < 0:
        raise ValueError('getrf: illegal argument %d' % -info)
    return lu, piv


def _solve_factored(factors, r):
    """x with A x = r from A's :func:`_factor_newton` factors."""
    if factors[0].shape[0] == 0:
        return r.copy()
    x, info = _DGETRS(factors[0], factors[1], r)
    if info != 0:
        raise ValueError('getrs: illegal argument %d' % -info)
    return x


@njit(cache=True)
def _del_residual(p1, Lq, Lv, V_dq, F, dt, nd):
    """The DEL residual of the dynamic configs before constraint forces, ``p1 + D1 Ld +
    f-`` (nd,), the step's impulse ``dt (L_q - V_q + F)`` (nd,) and the 2-norm of the
    size of the residual's terms ``|p1| + |dt/2 (L_q - V_q)| + |L_v| + |dt F|``: the
    NumPy expressions of the module docstring, element by element in one call."""
    r = np.empty(nd)
    impulse = np.empty(nd)
    size2 = 0.0
    for i in range(nd):
        conservative = Lq[i] - V_dq[i]
        imp = dt * (conservative + F[i])
        half = 0.5 * dt * conservative
        r[i] = p1[i] + imp - (half + Lv[i])
        impulse[i] = imp
        size = abs(p1[i]) + abs(half) + abs(Lv[i]) + abs(dt * F[i])
        size2 += size * size
    return r, impulse, np.sqrt(size2)


@njit(cache=True)
def _del_jacobian(Lqq, V_dqdq, Lvq, M, F_dq, F_ddq, dt, nd):
    """d(D1 Ld + f-)/dq2 over the dynamic configs (nd, nd) from the Lagrangian's and the
    applied terms' partials at the midpoint (see
    :func:`ros_vi.integrators.derivatives.midpoint_partials`)."""
    J = np.empty((nd, nd))
    for i in range(nd):
        for j in range(nd):
            A = 0.25 * dt * (Lqq[i, j] - V_dqdq[i, j])
            J[i, j] = (A + 0.5 * (Lvq[j, i] - Lvq[i, j]) - M[i, j] / dt
                       + 0.5 * dt * F_dq[i, j] + F_ddq[i, j])
    return J


@njit(cache=True)
def _check_general_root(q1, delta, linearised, correction, applied, Lq_d, va, anchor,
                        energy, T_m, V_m, dt, residual, check):
    """:func:`acceptance.check_root` from the general path's terms: ``delta`` (nQ,) the
    root's increment, ``applied`` (nd,) the impulse of the applied and constraint forces,
    ``Lq_d`` (nd,) the partials of L (general potentials included) at the midpoint, ``va``
    the anchor's velocity (None: this step's own).  Returns ``(accepted, v)`` with v (nd,)
    the midpoint velocity of the dynamic configs."""
    nd = linearised.shape[0]
    v = delta[:nd] / dt
    if va is None:
        accepted = check_root(q1, delta, linearised, correction, v, applied, 1.0, Lq_d, v,
                              anchor, energy, T_m, V_m, dt, residual, check)
    else:
        accepted = check_root(q1, delta, linearised, correction, v, applied, 1.0, Lq_d, va,
                              anchor, energy, T_m, V_m, dt, residual, check)
    return accepted, v


def set_midpoint(data, t1, t2, q1, q2, u1):
    """Put ``data`` at the midpoint of the step (t1, q1) -> (t2, q2) [s, (nQ,)] with input
    u1 (nu,): q = (q1 + q2)/2, dq = (q2 - q1)/(t2 - t1), u = u1, t = (t1 + t2)/2, where
    the discrete Lagrangian's partials are evaluated."""
    dt = t2 - t1
    data.set(0.5 * (q1 + q2), (q2 - q1) / dt, u1, 0.5 * (t1 + t2))


def constraint_jacobian_at(system, q):
    """Dh(q) (nc, nQ) of ``system``'s constraints at configuration q (nQ,) (moves the
    System's Data there, at rest)."""
    system.data.set(q, np.zeros(system.nQ))
    return dynamics.constraint_jacobian(system)


def newton_jacobian(system, dt, delta=None):
    """d(D1 Ld + f-)/dq2 over the dynamic configs, (nd, nd), at the System's current
    (midpoint) state for a step of dt [s]: the block of
    :func:`ros_vi.integrators.derivatives.midpoint_partials`'s J2 that Newton's method
    uses (same operations), without the other partials or the input derivative.  With
    free joints, ``delta`` (nQ,) is the step's increment q2 - q1 and their rotation rows
    are those of the moving-chart discrete Lagrangian
    (:func:`~ros_vi.mechanics.free.centre_partials`)."""
    t = dynamics.lagrangian_terms(system.model, system.data)
    e = dynamics.applied_jacobians(system)
    nd = system.model.nd
    J = _del_jacobian(t.Lqq, e.V_dqdq, t.Lvq, t.M, e.F_dq, e.F_ddq, dt, nd)
    charts = system.free_charts
    if charts is not None:
        f = dynamics.applied_forces(system)
        Lc = t.Lq[:nd] - f.V_dq[:nd]
        Lv = t.Lv[:nd]
        # d L_q / d q2 and d L_v / d q2 at the midpoint (q2 moves it by 1/2, its rate by 1/dt)
        dLc = 0.5 * (t.Lqq - e.V_dqdq)[:nd, :nd] + t.Lvq[:nd, :nd].T / dt
        dLv = 0.5 * t.Lvq[:nd, :nd] + t.M[:nd, :nd] / dt
        for rot in charts.rotation:
            c = delta[rot]
            A, B = centre_partials(c, dt)
            dA, dB = centre_partials_derivatives(c, dt)
            J[rot, :] = dt * (A.T @ dLc[rot, :] + B.T @ dLv[rot, :]) + (
                0.5 * dt * e.F_dq[rot, :nd] + e.F_ddq[rot, :nd])
            J[np.ix_(rot, rot)] += dt * (np.einsum('ijk,i->jk', dA, Lc[rot])
                                         + np.einsum('ijk,i->jk', dB, Lv[rot]))
    return J


def slip_direction(d, hint):
    """Unit slip direction (2,) for the slip ``d`` (2,) [m] of a contact over a step, and
    its derivative by d (2, 2): the direction of ``d + SLIP_SCALE hint`` (``hint`` the
    direction the slide started from), d's own for any slip well above SLIP_SCALE and the
    hint's as the slip vanishes (a contact at the cone's edge that other contacts hold: a
    smooth direction, where d/|d| would turn by 1/|d|)."""
    w = d + SLIP_SCALE * hint
    size = np.hypot(w[0], w[1])
    if size <= SLIP_FLOOR:
        return hint, np.zeros((2, 2))
    u = w / size
    return u, (np.eye(2) - np.outer(u, u)) / size


def rebound_impulse(contact_set, modes, q1, p1, q2, p2, fresh=None):
    """The restitution impulse (nQd,) [N s, N m s] at the end of a step from (q1 (nQ,),
    p1 (nQd,)) to q2 (nQ,) whose inelastic solve left the contacts in ``modes`` (k,) and
    the momentum ``p2`` (nQd,), or None when no contact with restitution struck in it
    (open at q1, active at q2; or ``fresh`` (k,) bool: open at the end of the step before,
    active now, though touching at q1, as two bodies that start in touch, one moving into
    the other).

    Newton's law for the struck contacts S together: their normal velocities after it,
    N v+ with v+ = M(q2)^-1 (p2 + N^T J) and N their gap gradients at q2, are ``-e`` times
    those they approached with at the step's start (N1 v1, v1 = M(q1)^-1 p1), with J >= 0
    (a non-negative least-squares solve of N M^-1 N^T J = target - N M^-1 p2: a contact
    already leaving faster gets none).  Normal only: friction does not act in the
    rebound.  A smooth function of (q1, p1, q2, p2) while S and the contacts J holds are
    the same (MidpointVI differentiates the step through it)."""
    active = np.flatnonzero(modes != OPEN)
    e = np.array([contact_set.contacts[m].restitution for m in active], dtype=float)
    if not e.any():
        return None
    struck = (e > 0.0) & (contact_set.gaps(q1, active) > GAP_SLACK)
    if fresh is not None:
        struck |= (e > 0.0) & fresh[active]
    struck, e = active[struck], e[struck]
    if not struck.shape[0]:
        return None
    model = contact_set.model
    nd, nq = model.nd, q1.shape[0]
    data = model.create_data()
    data.set(q1, np.zeros(nq))
    normal1 = contact_set.kinematics(q1, struck)[1]
    approach = normal1[:, :nd] @ dynamics.velocity_from_momentum(model, data, p1)
    data.set(q2, np.zeros(nq))
    M = dynamics.mass_matrix(model, data)
    N = contact_set.kinematics(q2, struck)[1][:, :nd]
    MiNt = np.linalg.solve(M, N.T)
    target = -e * np.minimum(approach, 0.0)
    J, _ = scipy.optimize.nnls(N @ MiNt, target - MiNt.T @ p2[:nd])
    return N.T @ J


def active_rows(modes):
    """The active contacts' multiplier count for their ``modes`` (k,): 3 for a sticking
    one (normal, two tangential), 1 for a sliding one (normal; its friction follows)."""
    return int(np.sum(np.where(modes == STICK, 3, np.where(modes == SLIDE, 1, 0))))


def border_contacts(A, row, contacts, modes, normal1, normal2, slip1, lam, delta, hints):
    """Border the Newton matrix ``A`` of a step (its DEL block filled in) with the active
    contacts' columns (their multipliers ``lam``, from row/column ``row`` on) and rows:
    forces along the directions at q1 (``normal1`` (k, nQ), ``slip1`` (k, 2, nQ)), gaps
    at q2 (``normal2``), a sticking contact's slip over the step and a sliding one's
    friction (slip ``slip1 @ delta`` for the step's increment ``delta`` (nd,); ``hints``
    (k, 2) as :func:`slip_direction`'s), each row with its :data:`COMPLIANCE`.  The DEL
    rows are A's first nd."""
    nd = delta.shape[0]
    j = 0
    for m in np.flatnonzero(modes != OPEN):
        c = contacts[m]
        n1, T1 = normal1[m, :nd], slip1[m, :, :nd]
        A[:nd, row] = -n1
        A[row, :nd] = normal2[m, :nd]
        A[row, row] = COMPLIANCE
        if modes[m] == STICK:
            A[:nd, row + 1:row + 3] = -T1.T
            A[row + 1:row + 3, :nd] = T1
            A[row + 1, row + 1] = A[row + 2, row + 2] = COMPLIANCE
            row += 3
            j += 3
        else:
            if c.friction > 0.0:
                u, du = slip_direction(T1 @ delta, hints[m])
                A[:nd, row] += c.friction * (T1.T @ u)
                A[:nd, :nd] += c.friction * lam[j] * (T1.T @ du @ T1)
            row += 1
            j += 1
    return A


class GeneralStep:
    """The DEL of one step of ``system`` on the general path, and its Newton solve.

    :meth:`begin` sets the step it works on: times ``t1``, ``t2`` [s], the start ``q1``
    (nQ,), ``p1`` (nQd,) and the input ``u1`` (nu,) (the integrator's own arrays: they are
    read, never written), and evaluates ``Dh1 = Dh(q1)`` (nc, nQ), through which the
    constraint forces act during the step.  Each :meth:`residual` evaluation leaves behind
    what the rest of the step reads: ``Dh2 = Dh(q2)``, the step's momentum change
    ``impulse`` = dt (L_q + F) - Dh1^T lambda1 (nd,), the size ``scale`` of the residual's
    terms, and the midpoint energies and partials of the acceptance test's energy balance.
    Every evaluation moves the System's Data (the integrator puts it back at the step's
    midpoint).
    """

    def __init__(self, system):
        self.system = system
        self.model, self.data = system.model, system.data
        self.t1 = self.t2 = 0.0
        self.q1 = self.p1 = self.u1 = None
        self.Dh1 = self.Dh2 = None
        self.impulse = None
        self.applied_impulse = None     # the applied and constraint part of it (nd,)
        self.scale = 0.0
        self.midpoint_terms = None
        self.rnorm = np.nan            # |residual| of the root :meth:`solve` returned
        self.next_anchor = None        # the energy anchor a root :meth:`accept` took leaves
        self.no_anchor = new_anchor()
        self.charts = system.free_charts
        self.delta = None
        self.conservative = None       # the conservative part dt L_q of the impulse (nd,)
        # (lu, piv, dt): the factors of the last full Newton matrix and its step length,
        # which the next steps' first updates reuse (chord updates, newton module); None
        # after a restart (MidpointVI forgets them with its history)
        self.factors = None
        self.reuse_wait = self.reuse_backoff = 0     # the back-off of that reuse
        self.full_updates = 0          # Newton matrices the last solve formed
        # joint limits (MidpointVI's ``limits``): dynamic config indices (nl,) and their
        # bounds [rad or m]; ``fixed`` maps a config held at a bound during a solve to that
        # bound, ``held_residual`` the DEL residual of its row (minus the limit's impulse)
        self.limit_index = np.zeros(0, dtype=int)
        self.limit_lower = self.limit_upper = np.zeros(0)
        self.fixed = {}
        self.held_residual = np.zeros(0)
        self.limit_impulse = None      # the limits' impulse of the last root (nd,)
        self.last_held = np.zeros(0, dtype=int)   # configs its solve held at a bound
        # contacts (the system's SphereOnPlane, SphereOnBox): each one's mode in a solve
        # (OPEN, STICK, SLIDE), taken over from the last root; the geometry at q1 (force
        # directions, fixed over the step as Dh1) and at the iterate q2 (gaps)
        self.contacts = system.contacts
        self.contact_set = ContactSet(system)
        k = len(self.contacts)
        self.mode = np.zeros(k, dtype=np.int64)
        self.last_mode = np.zeros(k, dtype=np.int64)
        self.prior_mode = np.zeros(k, dtype=np.int64)   # the modes the last solve began from
        self.contact_impulse = np.zeros((k, 3))   # the last root's (gamma, beta1, beta2)
        self.normal1 = np.zeros((k, system.nQ))
        self.slip1 = np.zeros((k, 2, system.nQ))
        self.gap1 = np.zeros(k)
        self.gap2 = np.zeros(k)
        self.normal2 = np.zeros((k, system.nQ))
        # the broad phase: the contacts a solve evaluates (:meth:`_wake`); the others are
        # open and far from their planes, and only the roots check them
        self.awake = np.arange(k)
        self.near1 = np.full(k, -np.inf)
        self.selected = np.ones(k, dtype=bool)   # faces and planes chosen at q1 (_wake)
        # the sliding contacts of the last root that do not slip: held at the cone's edge
        self.last_edge = np.zeros(0, dtype=np.int64)
        self.slide_hint = np.zeros((k, 2))        # slip direction a slide starts from
        # an active set a solve keeps as it is, or None: ({config: bound} held, contact
        # modes (k,)); the derivatives' re-solves of a step hold its own (the map whose
        # derivatives they are is the one of a fixed active set)
        self.frozen = None

    def rebound(self, q2, p2):
        """The restitution impulse (nQd,) [N s, N m s] that ends the solved step at
        ``q2`` (nQ,) with momentum ``p2`` (nQd,), or None when no contact with restitution
        struck in it (:func:`rebound_impulse`)."""
        if not self.contacts:
            return None
        return rebound_impulse(self.contact_set, self.last_mode, self.q1, self.p1, q2, p2,
                               self.prior_mode == OPEN)

    def forget_factors(self):
        """A restart (MidpointVI's history forgotten) drops the Newton factors and their
        back-off, as the compiled path's :func:`~ros_vi.integrators.packed.forget_factors`."""
        self.factors = None
        self.reuse_wait = self.reuse_backoff = 0

    def begin(self, t1, t2, q1, p1, u1):
        """Work on the step from (t1, q1, p1) to t2 with input u1 (class docstring)."""
        self.t1, self.t2, self.q1, self.p1, self.u1 = t1, t2, q1, p1, u1
        s = self.system
        self.Dh1 = constraint_jacobian_at(s, q1) if s.nc else np.zeros((0, s.nQ))
        if self.contacts:
            # a sphere on a box is held off the face it faces at the step's start
            # the broad phase's bounds (the solve selects and evaluates the near ones:
            # _wake)
            self.near1 = self.contact_set.near(q1)

    def predict(self, history, t, q, p, t2, momentum=False):
        """First guess for q2 (nQ,) at t2 from the current state (t, q (nQ,), p (nQd,)):
        polynomial extrapolation of the equally spaced ``history`` ((t, q) pairs, oldest
        first), or (``momentum``, with less history, and always for a first step) the
        momentum step q + dt M(q)^-1 p (without constraints), which also anchors the energy
        check at the start node.  Returns ``(guess, anchor, by_momentum)``: ``anchor`` the
        start node's energy anchor ``(acceptance array, velocity (nd,))`` for the momentum
        step, else None."""
        s = self.system
        nd, nq = s.nQd, s.nQ
        hist = history
        dt = t2 - t
        n = 0
        for j in range(len(hist) - 1, 0, -1):
            step = hist[j][0] - hist[j - 1][0]
            if abs(step - dt) > 1e-12 * max(1.0, abs(dt)):
                break
            n += 1
            if n == 5:
                break
        if momentum:
            n = 0
        if n >= 3:
            n = extrapolation_order(np.array([qj for _, qj in hist[-(n + 1):]]), nd, n)
        coeffs = {0: (1,), 1: (2, -1), 2: (3, -3, 1), 3: (4, -6, 4, -1),
                  4: (5, -10, 10, -5, 1), 5: (6, -15, 20, -15, 6, -1)}[n]
        if n < 2 and nd and not s.nc:
            # momentum-based first guess: q2 ~ q1 + dt M^-1 p1
            self.data.set(q, np.zeros(nq))
            guess = q.copy()
            try:
                v1 = dynamics.velocity_from_momentum(self.model, self.data, p)
            except np.linalg.LinAlgError:
                v1 = None
            if v1 is not None and np.isfinite(v1).all():
                guess[:nd] += dt * v1
                T1 = 0.5 * float(p @ v1)
                V1 = float(dynamics.first_order_terms(self.model, self.data).Vg
                           + dynamics.general_potential_energy(s))
                return guess, (new_anchor(T1 + V1, T1, V1, 0.0, t, True), v1), True
        guess = np.zeros(nq)
        for c, (_, qj) in zip(coeffs, reversed(hist[-len(coeffs):])):
            guess += c * qj
        if not hist:
            guess = q.copy()
        return guess, None, False

    def residual(self, delta, lam):
        """DEL residual (nd + nc,) at q2 = q1 + delta and lambda1 (System left at the
        midpoint q1 + delta/2, velocity delta/dt).  Working with the increment keeps the
        velocity free of cancellation error when q is large.

        Also stores the step's momentum change ``dt (L_q + F) - Dh1^T lambda1`` (nd,) for
        the p2 update.
        """
        s = self.system
        model, data = self.model, self.data
        nd = model.nd
        nc = s.nc
        dt = self.t2 - self.t1
        self.lam = lam
        if nc:
            # h(q2) and Dh(q2) at the same state, so the constraints share its kinematics
            data.set(self.q1 + delta, delta / dt, self.u1, self.t2)
            h2 = dynamics.constraint_values(s)
            self.Dh2 = dynamics.constraint_jacobian(s)
        data.set(self.q1 + 0.5 * delta, delta / dt, self.u1, 0.5 * (self.t1 + self.t2))
        self.delta = delta
        Lq, Lv, T, Vg = dynamics.first_order_terms(model, data)
        e = dynamics.applied_forces(s)
        # the residual's terms' size: the root can only be found to rounding of these
        r, impulse, self.scale = _del_residual(self.p1, Lq, Lv, e.V_dq, e.F, dt, nd)
        self.conservative = dt * (Lq[:nd] - e.V_dq[:nd])
        if self.charts is not None:
            # free joints: the first slot of the moving-chart discrete Lagrangian
            # (ros_vi.mechanics.free.centre_partials) on each joint's rotation rows
            Lc = Lq[:nd] - e.V_dq[:nd]
            for rot in self.charts.rotation:
                A, B = centre_partials(delta[rot], dt)
                D1 = dt * (A.T @ Lc[rot] + B.T @ Lv[rot])
                D2 = 0.5 * dt * Lc[rot] + Lv[rot]
                r[rot] = self.p1[rot] + D1 + dt * e.F[rot]
                impulse[rot] = D1 + D2 + dt * e.F[rot]
                self.conservative[rot] = D1 + D2
        # the midpoint terms the acceptance test's energy balance reads
        self.midpoint_terms = T, Vg, Lq, e.V_dq
        if nc:
            constraint_impulse = self.Dh1[:, :nd].T @ lam[:nc]
            impulse = impulse - constraint_impulse
            r = np.concatenate([r - constraint_impulse, h2])
        if self.contacts:
            contact_impulse, rows = self._contact_terms(delta, lam[nc:])
            impulse = impulse + contact_impulse
            r = np.concatenate([r[:nd] + contact_impulse, r[nd:], rows])
        self.impulse = impulse
        if self.fixed:
            # a config held at its limit: its row is the limit's (unknown) impulse, not an
            # equation; the Newton update leaves it where it is
            rows = list(self.fixed)
            self.held_residual = r[rows].copy()
            r[rows] = 0.0
        return r

    def _active_rows(self):
        """The active contacts' multiplier count (:func:`active_rows`)."""
        return active_rows(self.mode)

    def _slip_direction(self, m, d):
        """:func:`slip_direction` of contact m for the slip ``d`` (2,)."""
        return slip_direction(d, self.slide_hint[m])

    def _active_contacts(self):
        """``(m, contact, mode, normal (nd,), slip (2, nd))`` of each active contact, in
        order: its index, mode and force directions at q1 (dynamic columns)."""
        nd = self.system.nQd
        for m in np.flatnonzero(self.mode != OPEN):
            yield (m, self.contacts[m], self.mode[m], self.normal1[m, :nd],
                   self.slip1[m, :, :nd])

    def _contact_terms(self, delta, lam):
        """The active contacts' generalized impulse (nd,) for their multipliers ``lam``
        and their rows: a sticking contact's gap at q2 and slip over the step (3), a
        sliding one's gap (1).  Multiplier signs as the constraints': the normal impulse
        is gamma = -lambda_n, a sticking contact's tangential one beta = -lambda_t, a
        sliding one's beta = mu lambda_n u (u its slip direction: friction opposes it)."""
        s = self.system
        nd = s.nQd
        q2 = self.q1 + delta
        awake = self.awake
        self.gap2[awake], self.normal2[awake], _ = self.contact_set.kinematics(q2, awake)
        impulse = np.zeros(nd)
        rows = []
        j = 0
        for m, c, mode, n1, T1 in self._active_contacts():
            impulse -= n1 * lam[j]
            # each row with its compliance: gap = COMPLIANCE gamma, slip = -COMPLIANCE beta
            rows.append(self.gap2[m] + COMPLIANCE * lam[j])
            if mode == STICK:
                impulse -= T1.T @ lam[j + 1:j + 3]
                rows.extend(T1 @ delta[:nd] + COMPLIANCE * lam[j + 1:j + 3])
                j += 3
            else:
                if c.friction > 0.0:
                    u, _ = self._slip_direction(m, T1 @ delta[:nd])
                    impulse += T1.T @ (c.friction * lam[j] * u)
                j += 1
        return impulse, np.array(rows)

    def _contact_jacobian(self, A, delta, lam):
        """Border the Newton matrix ``A`` (its DEL block and the constraints' filled in)
        with the active contacts' columns (their multipliers) and rows
        (:func:`border_contacts`)."""
        s = self.system
        nd, nc = s.nQd, s.nc
        return border_contacts(A, nd + nc, self.contacts, self.mode, self.normal1,
                               self.normal2, self.slip1, lam[nc:], delta[:nd],
                               self.slide_hint)

    def _hold_fixed(self, A):
        """The Newton matrix ``A`` with the rows and columns of the configs held at their
        limits replaced by the identity's (their update is then 0; the tree and the
        factorisation are unchanged)."""
        if self.fixed:
            rows = list(self.fixed)
            A[rows, :] = 0.0
            A[:, rows] = 0.0
            A[rows, rows] = 1.0
        return A

    def newton_update(self, r):
        """The Newton update (nd + nc,) of (q2_d, lambda1) for the residual ``r`` that
        :meth:`residual` just evaluated (its midpoint state, Dh(q1) and Dh(q2)): the DEL
        Jacobian bordered by -Dh(q1)^T and Dh(q2), solved by LAPACK's gesv."""
        s = self.system
        nd, nc = s.nQd, s.nc
        n = r.shape[0]
        A = np.zeros((n, n))
        A[:nd, :nd] = newton_jacobian(s, self.t2 - self.t1, self.delta)
        if nc:
            A[:nd, nd:nd + nc] = -self.Dh1[:, :nd].T
            A[nd:nd + nc, :nd] = self.Dh2[:, :nd]
        if n > nd + nc:
            # contacts: a body on several points (a box on four corners) has more contact
            # rows than its freedoms; their compliance (COMPLIANCE on the diagonal) makes
            # the impulses unique: the least-norm ones that hold the body
            A = self._contact_jacobian(A, self.delta, self.lam)
        return _solve_newton(self._hold_fixed(A), r)

    def linearised_step(self, delta, lam):
        """(increment (dynamic part), max-norm of the update) of the Newton iterate from
        q2 = q1 + delta."""
        nd = self.system.nQd
        step = self.newton_update(self.residual(delta, lam))
        return delta[:nd] - step[:nd], float(np.abs(step[:nd]).max(initial=0.0))

    def solve(self, q2, lam, max_iterations, tolerance, min_iterations=0):
        """Newton's method with a backtracking line search on the merit 1/2 |r|^2 (and
        the chord updates of :mod:`ros_vi.integrators.newton`, which keep the last Newton
        matrix's factors in ``factors``), on
        (q2_d - q1_d, lambda1) from the guess ``q2`` (nQ,) and ``lam`` (nc,), stopping
        under the rule of :mod:`ros_vi.integrators.newton` with ``tolerance`` on the DEL
        residual's 2-norm; returns ``(delta, p2, lambda1, iterations, linearised)`` with
        the root's increment delta = q2 - q1 (nQ,), p2 = p1 + D1Ld + D2Ld + f- - Dh1^T
        lambda1 (equal to D2Ld at the root, without the solver residual) and
        ``linearised`` = (the increment q2 - q1 (dynamic part) of the first Newton iterate
        (the guess if there was none), the max-norm of that first update).  Raises
        :class:`RootNotFound`, or ``LinAlgError`` for a singular Newton matrix.  At least
        ``min_iterations`` Newton updates are made unless the residual is at its rounding
        floor.

        With joint limits (:attr:`limit_index`) the root also keeps every limited config
        within its bounds, each held at a bound by an impulse that pushes away from it and
        free where none is needed (the complementarity conditions of a unilateral
        constraint; docs/integrator.md): an active set of configs held at a bound, taken
        over from the step's start (the configs that start on a bound) and changed until
        the root is consistent, each solve a Newton solve with those configs fixed."""
        limited = self.limit_index.shape[0] > 0
        if not limited and not self.contacts:
            self.limit_impulse = None
            self.last_held = np.zeros(0, dtype=int)
            return self._solve_fixed(q2, lam, max_iterations, tolerance, min_iterations)
        nd, nc = self.system.nQd, self.system.nc
        index, lower, upper = self.limit_index, self.limit_lower, self.limit_upper
        q1 = self.q1
        frozen = self.frozen
        if frozen is not None:
            self.fixed, self.mode = dict(frozen[0]), frozen[1].copy()
        else:
            # configs that start on a bound stay there unless their impulse says otherwise
            self.fixed = {int(i): float(q1[i]) for i, lo, up in zip(index, lower, upper)
                          if q1[i] == lo or q1[i] == up}
            # contacts start as the last root left them; a sliding one is tried sticking
            # first (its stick impulse then says whether, and which way, it slides)
            self.mode = np.where(self.last_mode == SLIDE, STICK, self.last_mode)
            self.prior_mode = self.last_mode.copy()    # (rebound: which ones are new)
        if self.contacts:
            self._wake(q2)
        impulses = self.contact_impulse.copy()
        self.stopped, self.edge = set(), set()    # (_update_modes)
        iterations = 0
        solves = 2 * index.shape[0] + 4 * len(self.contacts) + 2
        for _ in range(solves):
            guess = q2.copy()
            for i, bound in self.fixed.items():
                guess[i] = bound
            start = np.concatenate([lam[:nc], self._multipliers(impulses)])
            try:
                delta, p2, lam2, its, linearised = self._solve_fixed(
                    guess, start, max_iterations, tolerance, min_iterations)
            except RootNotFound as exc:
                iterations += exc.iterations
                if frozen is not None or not self._stick_stalled():
                    raise
                continue
            iterations += its
            # the limit impulse holding each fixed config: minus its row of the residual
            gamma = np.zeros(nd)
            for k, i in enumerate(self.fixed):
                gamma[i] = -self.held_residual[k]
            q = q1 + delta
            changed = False
            for i, lo, up in zip(index, lower, upper) if frozen is None else ():
                i = int(i)
                if i in self.fixed:
                    # an impulse towards the bound is not a contact: release the config
                    pull = gamma[i] if self.fixed[i] == lo else -gamma[i]
                    if pull < -tolerance:
                        del self.fixed[i]
                        changed = True
                elif q[i] < lo - LIMIT_SLACK * max(1.0, abs(lo)):
                    self.fixed[i] = lo
                    changed = True
                elif q[i] > up + LIMIT_SLACK * max(1.0, abs(up)):
                    self.fixed[i] = up
                    changed = True
            impulses = self._impulses(delta, lam2[nc:])
            if self.contacts:
                self._check_dormant(q)
            if frozen is None and not changed:
                # one kind of change per solve, the limits' first: a limit released and a
                # contact closed at once can cycle (a limp quadruped's foot closing,
                # sliding and opening with its calf joints taking turns at their limits)
                changed = self._update_modes(delta, impulses, tolerance)
            if not changed:
                # p2 = D2Ld on every config: the limits' impulse is part of the step's
                self.impulse = self.impulse + gamma
                self.limit_impulse = gamma
                self.last_held = np.array(sorted(self.fixed), dtype=int)
                self.fixed = {}
                self.last_mode = self.mode.copy()
                self.last_edge = np.array(sorted(m for m in self.edge
                                                 if self.mode[m] == SLIDE), dtype=np.int64)
                self.contact_impulse = impulses
                return delta, p2 + gamma, lam2[:nc], iterations, linearised
        self.fixed = {}
        raise RootNotFound('joint limits and contacts: no consistent set of configs at '
                           'their bounds and contacts sticking, sliding or open after %d '
                           'solves' % solves, iterations)

    def _stick_stalled(self):
        """After a solve that found no root: the sliding contacts (not held at the cone's
        edge) whose slip at its last iterate is below :data:`SLIP_STALL` stick, and their
        impulses are re-solved (a ball resting on a box that slides: the ball's
        friction direction turns with rounding there).  Returns True if any did."""
        nd = self.system.nQd
        still = [m for m in np.flatnonzero(self.mode == SLIDE)
                 if m not in self.edge and m not in self.stopped
                 and np.hypot(*(self.slip1[m, :, :nd] @ self.delta[:nd])) <= SLIP_STALL]
        self.mode[still] = STICK
        self.stopped.update(still)
        return bool(still)

    def _wake(self, q2):
        """The broad phase: the contacts the solve from the guess ``q2`` (nQ,) evaluates
        (:attr:`awake`).  Those whose bound (:meth:`ContactSet.near`) at the step's start
        or at the guess is below :data:`WAKE_GAP`, and the active ones, have their faces
        and planes chosen at q1 (a sphere on a box is held off the face it faces at the
        step's start) and their gaps evaluated there and at the guess; the active ones
        and those with a gap below WAKE_GAP wake.  The others are open throughout, and
        only :meth:`_check_dormant` sees them."""
        cs = self.contact_set
        near = np.flatnonzero((self.near1 < WAKE_GAP) | (cs.near(q2) < WAKE_GAP)
                              | (self.mode != OPEN))
        cs.select(self.q1, near)
        self.selected = np.zeros(len(self.contacts), dtype=bool)
        self.selected[near] = True
        self.gap1[:] = np.inf
        self.gap1[near] = cs.gaps(self.q1, near)
        gap = cs.gaps(q2, near)
        self.awake = near[(self.mode[near] != OPEN) | (self.gap1[near] < WAKE_GAP)
                          | (gap < WAKE_GAP)]
        self._directions(self.awake)
        self.gap2[:] = np.inf

    def _directions(self, rows):
        """The force directions at q1 (:attr:`normal1`, :attr:`slip1`) of the contacts
        ``rows``."""
        _, self.normal1[rows], self.slip1[rows] = self.contact_set.kinematics(self.q1, rows)

    def _check_dormant(self, q2):
        """At a root ``q2`` (nQ,): the contacts outside :attr:`awake` whose bound
        (:meth:`ContactSet.near`) says they may touch there are evaluated (their faces
        chosen at q1, as the step's), and those past their planes join the awake ones
        (the mode update then makes them active)."""
        k = len(self.contacts)
        if self.awake.shape[0] == k:
            return
        dormant = np.ones(k, dtype=bool)
        dormant[self.awake] = False
        dormant = np.flatnonzero(dormant)
        cs = self.contact_set
        maybe = dormant[cs.near(q2, dormant) < 0.0]
        if not maybe.shape[0]:
            return
        fresh = maybe[~self.selected[maybe]]
        if fresh.shape[0]:
            cs.select(self.q1, fresh)
            self.selected[fresh] = True
        self.gap2[maybe] = cs.gaps(q2, maybe)
        hit = maybe[self.gap2[maybe] < -GAP_SLACK]
        if hit.shape[0]:
            self.gap1[hit] = cs.gaps(self.q1, hit)
            self.awake = np.union1d(self.awake, hit)
            self._directions(hit)

    def _multipliers(self, impulses):
        """The active contacts' multipliers (the Newton start) for their impulses (k, 3)
        (gamma, beta1, beta2): -gamma and -beta sticking, -gamma sliding."""
        out = []
        for m in np.flatnonzero(self.mode != OPEN):
            if self.mode[m] == STICK:
                out.extend(-impulses[m])
            else:
                out.append(-impulses[m, 0])
        return np.array(out)

    def _impulses(self, delta, lam):
        """The contacts' impulses (k, 3) (gamma [N s] along the normal, beta (2,) along the
        tangents) for the active contacts' multipliers ``lam`` at the root ``delta``."""
        nd = self.system.nQd
        out = np.zeros((len(self.contacts), 3))
        j = 0
        for m in np.flatnonzero(self.mode != OPEN):
            c = self.contacts[m]
            if self.mode[m] == STICK:
                out[m] = -lam[j:j + 3]
                j += 3
            elif self.mode[m] == SLIDE:
                out[m, 0] = -lam[j]
                if c.friction > 0.0:
                    u, _ = self._slip_direction(m, self.slip1[m, :, :nd] @ delta[:nd])
                    out[m, 1:] = -c.friction * out[m, 0] * u
                j += 1
        return out

    def _update_modes(self, delta, impulses, tolerance):
        """Change the contacts' modes the root ``delta`` with ``impulses`` (k, 3) is not
        consistent with, in order of precedence (one kind of change per solve, so that a
        contact is not opened by a pull that only a wrong friction made): open contacts
        past their plane become active (sticking); else sticking contacts whose friction
        leaves the cone slide (in the direction their stick friction opposes; those out
        of it by at least :data:`SLIDE_GROUP` of the worst ratio, so that a stick trial's
        wrong friction does not make others slide); else
        contacts whose normal impulse pulls open, and sliding ones whose slip vanished
        stick.  Returns True if any changed."""
        nd = self.system.nQd
        gamma, beta = impulses[:, 0], impulses[:, 1:]
        mode = self.mode
        close = (mode == OPEN) & (self.gap2 < -GAP_SLACK)
        if close.any():
            mode[close] = STICK
            return True
        slide, excess = [], []
        for m in np.flatnonzero(mode == STICK):
            # (a pull with friction is judged once the friction is right: slide first)
            size = np.hypot(beta[m, 0], beta[m, 1])
            bound = self.contacts[m].friction * max(gamma[m], 0.0)
            if size > bound * (1.0 + CONE_SLACK) + tolerance:
                slide.append(m)
                excess.append(size / bound if bound > 0.0 else np.inf)
                self.slide_hint[m] = -beta[m] / size
        if slide:
            # the worst first (SLIDE_GROUP): the others' friction may be the stick trial's
            worst = max(excess)
            slide = [m for m, x in zip(slide, excess) if x >= SLIDE_GROUP * worst]
            mode[slide] = SLIDE
            # stopped sliding and then out of the cone sticking: held at the cone's edge
            self.edge.update(m for m in slide if m in self.stopped)
            return True
        changed = False
        for m in np.flatnonzero(mode != OPEN):
            if gamma[m] < -tolerance:
                mode[m] = OPEN
                changed = True
            elif mode[m] == SLIDE and m not in self.edge and np.hypot(
                    *(self.slip1[m, :, :nd] @ delta[:nd])) <= SLIP_REST:
                mode[m] = STICK
                self.stopped.add(m)
                changed = True
        return changed

    def _solve_fixed(self, q2, lam, max_iterations, tolerance, min_iterations):
        """:meth:`solve` with the configs of :attr:`fixed` held where ``q2`` puts them."""
        s = self.system
        nd, nc = s.nQd, s.nc
        tols = np.array([c.tolerance for c in s.constraints])
        if self.contacts:
            # the active contacts' rows: gap and slip [m], solved to CONTACT_TOLERANCE
            n = self._active_rows()
            tols = np.concatenate([tols, np.full(n, CONTACT_TOLERANCE)])
            nc += n
        delta = q2 - self.q1
        dt = self.t2 - self.t1
        # the factors of the last full Newton matrix (this step's, or an earlier step's of
        # the same length: the first update is then a chord update); chord updates as on
        # the compiled path: without constraints, mimic joints or joint limits (whose held
        # configs change the matrix)
        chords = (nc == 0 and s.model.mimic_leader.shape[0] == 0
                  and not self.limit_index.shape[0] and not self.contacts)
        factors = self.factors if (chords and self.factors is not None and abs(
            self.factors[2] - dt) <= REUSE_DT * dt) else None
        if factors is not None and self.reuse_wait > 0:
            self.reuse_wait -= 1          # backing off (newton module): a full update first
            factors = None
        reused = factors is not None
        self.full_updates = 0
        try:
            return self._newton(delta, lam, dt, nd, nc, tols, chords, factors,
                                max_iterations, tolerance, min_iterations)
        finally:
            if reused:
                # the first chord update paid off if no full update was needed
                if self.full_updates == 0:
                    self.reuse_backoff = 0
                else:
                    self.reuse_backoff = min(max(1, 2 * self.reuse_backoff), MAX_BACKOFF)
                    self.reuse_wait = self.reuse_backoff

    def _newton(self, delta, lam, dt, nd, nc, tols, chords, factors, max_iterations,
                tolerance, min_iterations):
        """The iteration of :meth:`solve` from the increment ``delta`` (nQ,) and ``lam``
        (nc,), with the factors its first update may reuse (or None)."""
        s = self.system
        iterations = 0
        stalled = False
        linearised = None
        merit_ref = np.inf
        base_rnorm = np.inf
        backtracked = False
        r = self.residual(delta, lam)
        while True:
            if not np.isfinite(r).all():
                raise RootNotFound('the DEL residual became non-finite at iteration %d '
                                   '(q2 = %s)' % (iterations, self.q1 + delta), iterations)
            merit = 0.5 * float(r @ r)
            floor = ROUNDING * self.scale
            rnorm = np.sqrt(2.0 * merit) if not nc else np.linalg.norm(r[:nd])
            if ((rnorm <= max(tolerance, floor)
                 or (stalled and rnorm <= STALL_ACCEPT * self.scale))
                    and (np.abs(r[nd:]) <= tols).all()
                    and (iterations >= min_iterations or rnorm <= floor)):
                self.rnorm = np.sqrt(2.0 * merit)
                if linearised is None:
                    linearised = (delta[:nd].copy(), 0.0)
                return delta, self.p1 + self.impulse, lam, iterations, linearised
            if iterations >= max_iterations:
                raise RootNotFound('failed to converge after %d iterations (|DEL| = %.3g)'
                                   % (iterations, np.linalg.norm(r)), iterations)
            if iterations % STAGNATION == 0:
                if (iterations and merit > STAGNATION_FACTOR * merit_ref
                        and not rnorm <= STALL_ACCEPT * self.scale):
                    raise RootNotFound('failed to converge: stagnated after %d iterations '
                                       '(|DEL| = %.3g)' % (iterations, np.linalg.norm(r)),
                                       iterations)
                merit_ref = merit
            chord = factors is not None and not backtracked and (
                iterations == 0 or rnorm * (rnorm / base_rnorm)
                <= CHORD_MARGIN * max(tolerance, floor))
            if chord:
                step = _solve_factored(factors, r)
            elif chords:
                A = newton_jacobian(s, dt, self.delta)
                factors = _factor_newton(A)
                self.factors = (factors[0], factors[1], dt)
                self.full_updates += 1
                step = _solve_factored(factors, r)
            else:
                factors = None
                step = self.newton_update(r)
            big_step = np.abs(step[:nd]).max(initial=0.0)
            if iterations == 0:
                linearised = (delta[:nd] - step[:nd], float(big_step))
            stalled = big_step <= STALLED * np.abs(delta[:nd]).max(initial=0.0)
            base_r, base_scale = r, self.scale
            base_rnorm = rnorm
            alpha = 1.0
            for _ in range(MAX_BACKTRACKS + 1):
                trial = delta.copy()
                trial[:nd] -= alpha * step[:nd]
                trial_lam = lam - alpha * step[nd:]
                r = self.residual(trial, trial_lam)
                merit_t = 0.5 * float(r @ r)
                if stalled or merit_t <= (1.0 - 2.0 * ARMIJO * alpha) * merit:
                    break
                if chord:
                    break           # undone below: a full Newton update instead
                shrink = BACKTRACK[0]
                if np.isfinite(merit_t):
                    shrink = alpha * merit / (merit_t - merit + 2.0 * alpha * merit)
                    shrink = min(max(shrink, BACKTRACK[0]), BACKTRACK[1])
                alpha *= shrink
            else:
                if (np.linalg.norm(base_r[:nd]) <= STALL_ACCEPT * base_scale
                        and (np.abs(base_r[nd:]) <= tols).all()):
                    # the merit cannot decrease below rounding: the last iterate is a root
                    r = self.residual(delta, lam)
                    stalled = True
                    iterations += 1
                    continue
                raise RootNotFound('line search failed after %d iterations (|DEL| = %.3g)'
                                   % (iterations, np.linalg.norm(base_r)), iterations)
            if chord and not (stalled or merit_t <= (1.0 - 2.0 * ARMIJO) * merit):
                # the chord update failed the merit test: back to its start
                factors = None
                r = self.residual(delta, lam)
                continue
            backtracked = alpha != 1.0
            delta, lam = trial, trial_lam
            iterations += 1

    def accept(self, delta, linearised, anchor, check, tolerance):
        """The acceptance rule (:func:`acceptance.check_root`, as in the compiled path) for
        the root at q2 = q1 + ``delta`` (nQ,) that :meth:`solve` just returned (its
        midpoint terms still in place), with ``linearised`` its linearised step and
        ``anchor`` the energy anchor ``(acceptance array, velocity (nd,))`` or None.
        Writes the test's numbers into ``check`` and returns True when the root is
        accepted; then :attr:`next_anchor` is the anchor it leaves for the next step (None
        while a kinematic config moves)."""
        s = self.system
        nd = s.nQd
        t1, t2 = self.t1, self.t2
        dt = t2 - t1
        T_m, V_m, Lq, V_dq = self.midpoint_terms
        if s.general_potentials:
            V_m += dynamics.general_potential_energy(s)
        kin_moving = s.nQk > 0 and bool(delta[nd:].any())
        anchor, va = anchor if anchor is not None else (self.no_anchor, None)
        energy = (not kin_moving and abs(anchor[A_TIME] - t1) <= 1e-12 * max(1.0, abs(t2)))
        # the impulse of the applied and constraint forces: the momentum change without the
        # conservative part dt L_q (half of it belongs to the step's end: MidpointVI.p2_end)
        Lq_d = Lq[:nd] - V_dq[:nd]
        self.applied_impulse = self.impulse - self.conservative
        accepted, v = _check_general_root(self.q1, delta, linearised[0], linearised[1],
                                          self.applied_impulse, Lq_d, va, anchor, energy,
                                          T_m, V_m, dt, max(tolerance, self.rnorm), check)
        if accepted:
            self.next_anchor = None if kin_moving else (
                new_anchor(T_m + V_m, T_m, V_m, dt, t2, True), v)
        return accepted
