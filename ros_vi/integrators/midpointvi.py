"""The midpoint variational integrator (trep's ``MidpointVI``).

Discrete Lagrangian and forcing (dt = t2 - t1, qm = (q1 + q2)/2, v = (q2 - q1)/dt)::

    Ld(q1, q2)  = dt L(qm, v)
    f-(q1, q2)  = dt F(qm, v, u1, (t1 + t2)/2),      f+ = 0

Step: given (t1, q1, p1) and (u1, k2) solve for the dynamic part of q2 and lambda1::

    p1 + D1 Ld + f- - Dh(q1)^T lambda1 = 0
    h(q2) = 0

then ``p2 = D2 Ld``.  In terms of the Lagrangian's partials at (qm, v)::

    D1 Ld = dt/2 L_q - L_v,   D2 Ld = dt/2 L_q + L_v

Newton's method with the exact Jacobian solves the DEL; it stops when the 2-norm of the
DEL residual is at most ``tolerance`` (or, when that is below what rounding allows, at most
64 eps times the size of the residual's terms, or once a Newton update no longer changes
the iterate beyond rounding while the residual is below sqrt(eps) times that size) and
every |h_i(q2)| is at most its constraint's tolerance (trep's rule), and p2 is computed at
that final iterate.

Globalization (the compiled path, with or without constraints, and the general path;
docs/integrator.md):

* each Newton update is damped by a backtracking line search on the merit 1/2 |r|^2 (r the
  DEL residual, and h(q2) with constraints), so a poor first guess does not send the
  iteration off;
* the first guess is the extrapolation (order up to 5) of the last equally spaced configurations,
  or (with less history, and as the retry when that fails) the momentum step
  q1 + dt M(q1)^-1 p1 (the general path has none with constraints: q1, no retry);
* a converged root is accepted only if it continues the trajectory: (a) its increment
  q2 - q1 is within ``AGREE`` times the length of the linearised step (the first Newton
  iterate from the predictor; or of that Newton correction where the step is ~0) of that
  step's increment, and (b) the midpoint energy T + V changes by the
  discrete work of the applied and constraint forces to within ``ENERGY_SLACK`` of the
  energy that moved (:func:`acceptance.deviation_bound`, :func:`acceptance.energy_bound`;
  test (b) needs the previous step's or the start node's energy and is skipped while a
  kinematic config moves).  Other roots of the DEL (the discrete equations have many at
  large steps) are rejected;
* a step that does not converge or whose root is rejected is retried from the momentum
  predictor, then split into 2, 4, ... 2**max_subdivisions equal substeps (inputs held,
  kinematic configs interpolated linearly).  The caller still sees one step from t1 to
  t2: after a subdivided step q1, p1, t1 are the state at the start of the whole step,
  q2, p2, t2 the state at its end, lambda1 the substeps' time-averaged multipliers, the
  first derivatives (q2_dq1, ...) those of the composite map (chain rule over the
  substeps), and the System holds the step's average midpoint ((q1 + q2)/2,
  (q2 - q1)/dt); the second derivatives likewise are those of the composite map, and
  ``calc_f`` is not zero (the single-step DEL does not hold between q1 and q2).
  ``last_substeps`` says how many substeps the last step took, ``last_check`` the numbers
  of the last acceptance test.

``ConvergenceError`` is raised only when no accepted root is found after all of that (or
the DEL Jacobian is singular); its message gives the residual, and the integrator stays at
its last good state.

:class:`MidpointVI` is trep's face of the integrator: the state, its initialisation, the
step with its retries and subdivision, and the derivative accessors.  The work is done
below it: the compiled step (:class:`~ros_vi.integrators.fast_step.FastStepper`), the
general path's root solve (:class:`~ros_vi.integrators.general_step.GeneralStep`) and the
derivatives (:mod:`ros_vi.integrators.derivatives`).
"""
import numpy as np

from ..mechanics import dynamics
from ..mechanics.free import express_jacobian, xyz_rotation
from . import derivatives, general_step, packed
from .acceptance import A_DT, NCHECK, check_summary, rejection_reason
from .fast_step import FastStepper, recenter_packed
from .newton import CONTACT_TOLERANCE, LIMIT_SLACK, SLIDE
from ..mechanics.contact import contact_kinematics


_NONE_HELD = np.zeros(0, dtype=int)     # no config held at a joint limit (never written)


def joint_limit_arrays(system, limits=None):
    """Joint limits as arrays ``(index (nl,) int, lower (nl,), upper (nl,))`` [rad or m] in
    config order: ``limits`` ``{config (name or Config): (lower, upper)}`` (ValueError for a
    kinematic config or bounds out of order), or None for the system's declared ones
    (:meth:`System.set_joint_limit`; kinematic configs skipped: their motion is given)."""
    declared = limits is None
    if declared:
        limits = system.joint_limits
    index, lower, upper = [], [], []
    for key, bounds in limits.items():
        config = system.get_config(key)
        if config.kinematic:
            if declared:
                continue
            raise ValueError('limits: config %r is kinematic (its motion is given)'
                             % config.name)
        lo, up = (float(b) for b in bounds)
        if np.isnan(lo) or np.isnan(up) or not lo <= up:
            raise ValueError('limits: config %r needs lower <= upper, got (%r, %r)'
                             % (config.name, lo, up))
        index.append(config.index)
        lower.append(lo)
        upper.append(up)
    order = np.argsort(np.array(index, dtype=np.int64), kind='stable')
    return (np.array(index, dtype=np.int64)[order], np.array(lower, dtype=float)[order],
            np.array(upper, dtype=float)[order])


class ConvergenceError(Exception):
    """The integrator's root solver did not converge (the state was left unchanged)."""


class _StepFailed(Exception):
    """One attempt at a (sub)step found no acceptable root (internal)."""

    def __init__(self, message, singular=False, iterations=0):
        super().__init__(message)
        self.singular = singular
        self.iterations = iterations


def _sized(value, n, what):
    """``value`` as a float array of shape (n,) (finiteness not checked)."""
    arr = np.asarray(value, dtype=float)
    if arr.shape != (n,):
        arr = arr.reshape(-1)
        if arr.shape != (n,):
            raise ValueError('%s must have %d entries, got %d' % (what, n, arr.size))
    return arr


def _flat_length(value):
    """len() of a flat sequence or 1-D array, -1 for anything else (fast)."""
    if isinstance(value, np.ndarray):
        return value.shape[0] if value.ndim == 1 else -1
    try:
        return len(value)
    except TypeError:
        return -1


_NO_KINEMATIC = ()       # step()'s default k2: no kinematic configs given


def _copy_checked(value, target, what):
    """Copy ``value`` into ``target`` (n,) after checking its size (ValueError naming
    ``what``); finiteness is the step's own check."""
    n = _flat_length(value)
    if n != target.shape[0]:
        _sized(value, target.shape[0], what)
    if n:
        try:
            target[:] = value
        except (ValueError, TypeError):
            _sized(value, target.shape[0], what)
            raise


def _vector(value, n, what):
    """``value`` as a new finite float array of shape (n,)."""
    arr = np.array(_sized(value, n, what), dtype=float)
    if not np.isfinite(arr).all():
        bad = np.nonzero(~np.isfinite(arr))[0]
        raise ValueError('%s has non-finite entries at %s: %s' % (what, bad.tolist(), arr))
    return arr


class MidpointVI:
    """Midpoint variational integrator for a :class:`System`.

    Parameters
    ----------
    system : System
    tolerance : float
        Root-solver tolerance on the 2-norm of the DEL residual.
    num_threads : ignored (kept for trep compatibility).
    fast : bool
        Use the compiled single-call step when the system allows it (only Gravity,
        ConfigSpring, Damping, ConfigForce and one JointDrives; constraints, if any, of the
        built-in kinds Distance, PointToPoint*, PointOnPlane, Mimic).  False forces the
        general path.
    max_subdivisions : int
        A step whose root solve fails is split into up to ``2**max_subdivisions`` equal
        substeps before ``ConvergenceError`` (the module docstring has the rules).
    min_iterations : int
        Newton updates a step makes at least (0, trep's rule: a predictor already within
        ``tolerance`` is the root).  1 solves every step to rounding when the predictor is
        within the tolerance -- at rest, where the residual would otherwise wander inside
        the tolerance band and the momentum with it -- at the cost of one Newton update
        there; a moving system takes one anyway.  The simulator uses 1.

    limits : dict or None
        Joint limits as unilateral constraints of the step: ``{config (name or Config):
        (lower, upper)}`` [rad or m] on dynamic configs (``-inf``/``inf`` for a side
        without one); None (default): the system's declared limits
        (:meth:`System.set_joint_limit`; the URDF importer declares ``<limit>``), ``{}``:
        none.  Each step's root keeps every limited config within its bounds, held at a
        bound by an impulse that pushes away from it (a config that would cross it stops
        there: inelastic) and free where none is needed; ``limit_impulse`` is that impulse
        (nQd,) [N m s or N s].  A step whose compiled root stays within the limits is that
        root (it satisfies every condition, with no impulse); otherwise, and while a config
        is held, the general path takes the step.

    State: ``t1, q1 (nQ,), p1 (nQd,)`` (previous) and ``t2, q2, p2`` (current), ``u1 (nu,)``,
    ``lambda1 (nc,)``; ``v2`` the kinematic velocity (q2_k - q1_k)/(t2 - t1).

    Example
    -------
    >>> mvi = MidpointVI(system)
    >>> mvi.initialize_from_state(0.0, [3 * np.pi / 4], [0.0])
    >>> mvi.step(0.1, [0.0])      # returns the number of Newton iterations
    """

    def __init__(self, system, tolerance=1e-10, num_threads=None, fast=True,
                 max_subdivisions=8, min_iterations=0, limits=None):
        self._system = system
        # None: the system's declared limits, read at each structure update
        self._limits_given = None if limits is None else dict(limits)
        self.tolerance = float(tolerance)
        if int(min_iterations) != min_iterations or min_iterations < 0:
            raise ValueError('min_iterations must be an integer >= 0, got %r'
                             % (min_iterations,))
        self._min_iterations = int(min_iterations)
        self._use_fast = bool(fast)
        if int(max_subdivisions) != max_subdivisions or max_subdivisions < 0:
            raise ValueError('max_subdivisions must be an integer >= 0, got %r'
                             % (max_subdivisions,))
        self.max_subdivisions = int(max_subdivisions)
        system.add_structure_changed_func(self._structure_updated)
        self._structure_updated()

    def _set_limits(self):
        """The limits (the ``limits`` keyword, else the system's declared ones) as the
        general step's index and bound arrays."""
        s, g = self._system, self._general
        g.limit_index, g.limit_lower, g.limit_upper = joint_limit_arrays(s, self._limits_given)
        self._limits = {s.configs[i]: (float(lo), float(up)) for i, lo, up in
                        zip(g.limit_index, g.limit_lower, g.limit_upper)}

    @property
    def limits(self):
        """The joint limits this integrator holds: ``{config name: (lower, upper)}`` [rad or
        m] (the ``limits`` keyword, else the system's declared ones)."""
        return {c.name: bounds for c, bounds in self._limits.items()}

    def _check_limits(self, q, what):
        """ValueError naming the config when ``q`` (nQ,) puts one outside its limits."""
        g = self._general
        for i, lo, up in zip(g.limit_index, g.limit_lower, g.limit_upper):
            if not lo - LIMIT_SLACK * max(1.0, abs(lo)) <= q[i] <= up + LIMIT_SLACK * max(
                    1.0, abs(up)):
                raise ValueError('%s puts config %r at %r, outside its limits [%r, %r]'
                                 % (what, self._system.configs[i].name, float(q[i]),
                                    float(lo), float(up)))

    def _check_contacts(self, q, what):
        """ValueError naming the contact when ``q`` (nQ,) puts one past its plane."""
        contacts = self._system.contacts
        if not contacts:
            return
        gap, _, _ = contact_kinematics(self._system, q, contacts)
        for c, g in zip(contacts, gap):
            if g < -CONTACT_TOLERANCE:
                raise ValueError('%s puts contact %r %.3g m past its plane (gap %.3g m)'
                                 % (what, c.name, -g, g))

    @property
    def contact_impulses(self):
        """The contacts' impulses in the last step, (ncontacts, 3) [N s]: the normal
        impulse gamma >= 0 and the friction impulse (beta1, beta2) along the plane's
        tangents t1, t2 (``contact.plane``), with |beta| <= mu gamma (0 for an open
        contact)."""
        return self._general.contact_impulse.copy()

    @property
    def contact_modes(self):
        """Each contact's state at the end of the last step: 'open', 'stick' or 'slide'
        (a contact held still by the others with its friction at the cone's edge sticks)."""
        g = self._general
        modes = [('open', 'stick', 'slide')[m] for m in g.last_mode]
        for m in g.last_edge:
            modes[m] = 'stick'
        return modes

    @property
    def contact_gaps(self):
        """Each contact's gap (ncontacts,) [m] at q2: its sphere's distance off the plane
        (for a :class:`~ros_vi.contact.SphereOnBox`, the face) the last step held it
        against; >= 0 up to the solver's tolerance after a step."""
        g = self._general
        if not g.contacts:
            return np.zeros(0)
        g.contact_set.select(self._q1)      # the faces and planes the step held (all)
        return g.contact_set.gaps(self._q2)

    @property
    def limit_impulse(self):
        """The joint limits' impulse (nQd,) [N m s or N s] in the last step (0 without
        ``limits``, or when none held a config)."""
        return self._limit_impulse.copy()

    @property
    def held_configs(self):
        """Indices (into ``system.configs``) of the configs the last step held at a joint
        limit."""
        return self._held.copy()

    def __repr__(self):
        return '<MidpointVI t1=%f t2=%f nd=%d nk=%d nc=%d nu=%d>' % (
            self.t1, self.t2, self.nd, self.nk, self.nc, self.nu)

    def _structure_updated(self):
        s = self._system
        self._model, self._data = s.model, s.data
        self._t1 = self._t2 = 0.0
        self._general = general_step.GeneralStep(s)
        self._set_limits()
        g = self._general
        # contacts: the general path (the compiled step has none yet)
        self._fast = (FastStepper.for_system(s, (g.limit_index, g.limit_lower, g.limit_upper))
                      if self._use_fast and not s.contacts else None)
        if self._fast is not None:
            self._fast.min_iterations = self._min_iterations
            # the state lives in the compiled stepper's buffer: a step copies nothing, and
            # the System's Data reads its midpoint and inputs from there too
            self._q1, self._p1, self._q2, self._p2, self._u1 = self._fast.state_views()
            self._lambda1 = self._fast.lambda1
            self._impulse = self._fast.impulse
            self._data.share(self._fast.qm, self._fast.v, self._fast.u_in)
        else:
            self._q1, self._q2 = np.zeros(s.nQ), np.zeros(s.nQ)
            self._p1, self._p2 = np.zeros(s.nQd), np.zeros(s.nQd)
            self._u1 = np.zeros(s.nu)
            self._lambda1 = np.zeros(s.nc)
            self._impulse = np.zeros(s.nQd)
        # the last step's joint-limit impulse (nQd,) and the configs it held at a bound
        self._limit_impulse = np.zeros(s.nQd)
        self._held = _NONE_HELD
        self._charts = s.free_charts
        self._chart_in = None
        self._chart_views = (self._fast.chart_views()
                             if self._charts is not None and self._fast is not None else None)
        # the stepper's live packed arrays (I, F, W), for the compiled change of chart
        self._packed = (self._fast.packed_call()[1][:3] if self._fast is not None else None)
        self._deriv1 = None
        self._composite = None
        self._check = self._fast.check if self._fast is not None else np.zeros(NCHECK)
        self._reset_history()

    def _reset_history(self, pairs=None, keep_anchor=False, restart=True):
        """Forget (or seed with (t, q) pairs, oldest first) the predictor's history; the
        energy anchor of the acceptance test too unless ``keep_anchor``; the general path's
        Newton factors too on a ``restart`` (not when a step just appends its node)."""
        self._history = list(pairs or [])
        self._deriv1 = None
        self._composite = None
        if not keep_anchor:
            self._anchor = None
        if restart:
            self._general.forget_factors()
        if self._fast is not None:
            self._fast.reset_history([t for t, _ in self._history],
                                     [q for _, q in self._history], keep_anchor)

    def _save(self):
        memory = self._fast.memory() if self._fast is not None else None
        anchor = self._anchor
        if anchor is not None and self._charts is not None:
            anchor = (anchor[0], anchor[1].copy())      # recenter rewrites its velocity
        attitudes = (self._charts.attitudes(self._model) if self._charts is not None
                     else None)
        return (self._t1, self._t2, self._q1.copy(), self._q2.copy(), self._p1.copy(),
                self._p2.copy(), self._u1.copy(), self._lambda1.copy(), list(self._history),
                anchor, memory, self._composite, self._impulse.copy(), attitudes,
                self._limit_impulse.copy(), self._active_set())

    def _restore(self, saved):
        (self._t1, self._t2, q1, q2, p1, p2, u1, lam, history, anchor, memory,
         composite, impulse, attitudes, self._limit_impulse, active) = saved
        self._set_active(active)
        if attitudes is not None:
            self._charts.set_attitudes(attitudes)
        self._q1[:], self._q2[:], self._p1[:], self._p2[:], self._u1[:] = q1, q2, p1, p2, u1
        self._lambda1[:] = lam
        self._impulse[:] = impulse
        self._reset_history(history)
        self._anchor = anchor
        if memory is not None and self._fast is not None:
            self._fast.restore_memory(memory)
        self._composite = composite

    # ------------------------------------------------------------------ sizes and state
    @property
    def system(self):
        return self._system

    @property
    def compiled(self):
        """True when steps run in the compiled single-call stepper (only Gravity,
        ConfigSpring, Damping, ConfigForce, one JointDrives; only built-in constraints);
        False on the general path."""
        return self._fast is not None

    @property
    def stepper(self):
        """The compiled stepper the steps run in
        (:class:`~ros_vi.integrators.fast_step.FastStepper`, which holds the state), or
        None on the general path."""
        return self._fast

    @property
    def nq(self):
        return self._system.nQ

    @property
    def nd(self):
        return self._system.nQd

    @property
    def nk(self):
        return self._system.nQk

    @property
    def nu(self):
        return self._system.nu

    @property
    def nc(self):
        return self._system.nc

    def _state_prop(name, doc):
        def getter(self):
            return getattr(self, name).copy()

        def setter(self, value):
            arr = getattr(self, name)
            arr[:] = _vector(value, arr.shape[0], name.strip('_'))
            self._reset_history()
        return property(getter, setter, doc=doc)

    q1 = _state_prop('_q1', 'Previous configuration (nQ,).')
    q2 = _state_prop('_q2', 'Current configuration (nQ,).')
    p1 = _state_prop('_p1', 'Previous discrete momentum (nQd,).')
    p2 = _state_prop('_p2', 'Current discrete momentum (nQd,).')
    u1 = _state_prop('_u1', 'Input applied from t1 to t2 (nu,).')
    lambda1 = _state_prop('_lambda1', 'Constraint forces from t1 to t2 (nc,).')
    del _state_prop

    @property
    def t1(self):
        return self._t1

    @t1.setter
    def t1(self, value):
        self._t1 = float(value)
        self._reset_history()

    @property
    def t2(self):
        return self._t2

    @t2.setter
    def t2(self, value):
        self._t2 = float(value)
        self._reset_history()

    @property
    def min_iterations(self):
        """Newton updates a step makes at least (see the class doc)."""
        return self._min_iterations

    @property
    def impulse(self):
        """The impulse (nQd,) of the applied and constraint forces over the last step
        (the last substep of a subdivided one): ``dt F(qm, vm, u1) - Dh(q1)^T lambda1`` [N m s
        or N s]; zero after an ``initialize_*``."""
        return self._impulse.copy()

    @property
    def p2_end(self):
        """The momentum at t2 (nQd,) [kg m^2/s or kg m/s], second-order accurate: ``p2 +
        impulse / 2``.

        trep's discrete forcing puts the whole of a step's impulse into its first discrete
        Euler-Lagrange term (``f- = dt F``, ``f+ = 0``), so the discrete momentum ``p2 =
        D2 Ld`` lags the momentum at t2 by half that impulse: a robot held still by a force
        against gravity has ``p2 = -dt/2 dV/dq``.  With the impulse split evenly between
        the step's ends (the forced discrete Legendre transform ``D2 Ld + f+`` with ``f+ =
        impulse / 2``) the momentum at the end of a held equilibrium is zero, and on a free
        trajectory it is as accurate as ``p2``.  The integrator itself steps on ``p2``; this
        is what a velocity is built from (``v2 = M(q2)^-1 p2_end``: what the simulator
        publishes)."""
        return self._p2 + 0.5 * self._impulse

    @property
    def v2(self):
        """Kinematic velocity (nQk,) = (q2_k - q1_k)/(t2 - t1), or None when t2 == t1."""
        if self._t2 == self._t1:
            return None
        nd = self.nd
        return (self._q2[nd:] - self._q1[nd:]) / (self._t2 - self._t1)

    # ------------------------------------------------------------------ initialisation
    def initialize_from_state(self, t1, q1, p1, lambda1=None, check=True):
        """Start from time t1 [s], configuration q1 (nQ,) and discrete momentum p1 (nQd,).

        q1 must lie within the limits and off the contacts' planes (ValueError naming the
        config or contact) unless ``check`` is False: for a state the integrator itself
        accepted (a retry from a tick's start, which a fresh choice of faces and rim points
        may see past a plane by the solver's tolerance), and the perturbed starts of the
        second derivatives' differences."""
        q1 = _vector(q1, self.nq, 'q1')
        p1 = _vector(p1, self.nd, 'p1')
        lam = np.zeros(self.nc) if lambda1 is None else _vector(lambda1, self.nc, 'lambda1')
        if check:
            self._check_limits(q1, 'q1')
            self._check_contacts(q1, 'q1')
        self._t1 = self._t2 = float(t1)
        self._q1[:], self._q2[:] = q1, q1
        self._p1[:], self._p2[:] = p1, p1
        self._lambda1[:] = lam
        self._impulse[:] = 0.0
        self._limit_impulse[:] = 0.0
        self._held = _NONE_HELD
        self._general.last_mode[:] = 0
        self._general.last_edge = self._general.last_edge[:0]
        self._general.contact_impulse[:] = 0.0
        self._reset_history([(self._t2, self._q2.copy())])
        self._data.set(q1, np.zeros(self.nq), t=self._t1)

    def initialize_from_configs(self, t0, q0, t1, q1, lambda1=None):
        """Start from two configurations: p1 = D2 Ld(q0, q1) (no force term)."""
        q0 = _vector(q0, self.nq, 'q0')
        q1 = _vector(q1, self.nq, 'q1')
        self._check_limits(q0, 'q0')
        self._check_limits(q1, 'q1')
        t0, t1 = float(t0), float(t1)
        if not t1 > t0:
            raise ValueError('initialize_from_configs needs t1 > t0 (got %g, %g)' % (t0, t1))
        self._t1, self._t2 = t0, t1
        self._q1[:], self._q2[:] = q0, q1
        self._lambda1[:] = (0.0 if lambda1 is None else _vector(lambda1, self.nc, 'lambda1'))
        self._p1[:] = 0.0
        self._p2[:] = self._D2Ld()
        self._impulse[:] = 0.0
        self._limit_impulse[:] = 0.0
        self._held = _NONE_HELD
        self._reset_history([(t0, q0.copy()), (t1, q1.copy())])

    def recenter(self):
        """Move every free joint's chart to the attitude at q2 (a step does this first;
        :mod:`ros_vi.mechanics.free`): the reference attitudes become those of q2, q2's
        angles 0, and q1, p1, p2, the impulse, the predictor history and the energy anchor
        are rewritten in the new charts.  The state is the same; only its coordinates
        change.  No-op without free joints or when q2's angles are already 0."""
        charts = self._charts
        if charts is None:
            return
        if self._fast is not None:
            # the state as the previous step left it (a step's derivatives are taken from
            # it) is copied by the same compiled call
            q_in, p_in = np.empty(self._q2.shape[0]), np.empty(self._p2.shape[0])
            self._chart_in = (q_in, p_in)
            I, F, W = self._packed
            if recenter_packed(I, F, W, self._model.fixedR, charts.reference, q_in, p_in):
                charts.sync_frames(self._model)
        else:
            # the state as the previous step left it: a step's derivatives are taken from it
            self._chart_in = (self._q2.copy(), self._p2.copy())
            history = np.array([q for _, q in self._history]).reshape(-1, self.nq)
            va = None if self._anchor is None else self._anchor[1]
            charts.recenter(self._model, self._q2, self._q1, history, self._p2, self._p1,
                            self._impulse, va, va is None or self._anchor[0][A_DT] == 0.0)
            self._history = [(t, q) for (t, _), q in zip(self._history, history)]
        self._deriv1 = self._composite = None

    # ------------------------------------------------------------------ discrete mechanics
    def set_midpoint(self):
        """Put the System at the midpoint of the current step (trep's rule for what
        ``system.q`` holds after a step): q = (q1 + q2)/2, dq = (q2 - q1)/(t2 - t1),
        u = u1, t = (t1 + t2)/2."""
        general_step.set_midpoint(self._data, self._t1, self._t2, self._q1, self._q2,
                                  self._u1)

    def _data_at_midpoint(self):
        """Put the System at the midpoint of the current step (at q2 when none was taken)."""
        if self._t2 > self._t1:
            self.set_midpoint()
        else:
            self._data.set(self._q2, np.zeros(self.nq), self._u1, self._t2)

    def _data_at_compiled_midpoint(self):
        """After an accepted compiled step: the System at its midpoint (the stepper's qm,
        v, which the System's Data shares unless another integrator took it over)."""
        fast, data = self._fast, self._data
        t = 0.5 * (self._t1 + self._t2)
        if data.q is fast.qm:               # shared: already at the midpoint
            data.invalidate()
            data.t = t
        else:
            data.set(fast.qm, fast.v, self._u1, t)

    def calc_p2(self):
        """Recompute p2 = D2 Ld(q1, q2) (nQd,) from the current (t1, q1, t2, q2), as
        ``initialize_from_configs`` does; leaves the System at the midpoint."""
        self._p2[:] = self._D2Ld()
        self._deriv1 = None

    def discrete_fm2(self):
        """The discrete forcing f-(q1, q2) = (t2 - t1) F(qm, v, u1) of the dynamic configs,
        (nQd,) [N s or N m s], at the midpoint of the current step."""
        self.set_midpoint()
        dt = self._t2 - self._t1
        return dt * dynamics.applied_forces(self._system).F[:self.nd].copy()

    def _D2Ld(self):
        """p2 = dt/2 L_q + L_v at the midpoint of (q1, q2) (leaves the system there)."""
        s = self._system
        self.set_midpoint()
        dt = self._t2 - self._t1
        nd = self.nd
        Lq, Lv, T, Vg = dynamics.first_order_terms(self._model, self._data)
        Lq = Lq - dynamics.applied_forces(s).V_dq if s.general_potentials else Lq
        return (0.5 * dt * Lq + Lv)[:nd].copy()

    def step(self, t2, u1=(), k2=_NO_KINEMATIC, max_iterations=200, lambda1_hint=None,
             q2_hint=None):
        """Advance to time t2 [s] with input u1 (nu,) and kinematic configs k2 (nQk,).

        The current state becomes the previous one; the new (q2, p2, lambda1) solve the
        DEL (a root that continues the trajectory: the module docstring has the acceptance
        rule, the retries and the subdivision into substeps).  Returns the number of Newton
        iterations (summed over every attempt and substep).  Raises ``ConvergenceError``
        (and leaves the integrator's state unchanged) if no acceptable root is found even
        with ``2**max_subdivisions`` substeps or the DEL Jacobian is singular,
        ``ValueError`` for wrong sizes, non-finite values or a t2 that is not later than
        the current time.  ``q2_hint`` (nQ,) and ``lambda1_hint`` (nc,) only seed the root
        solver (a q2 hint runs the step on the general path); the root must still pass the
        acceptance rule, which refers to the integrator's own predictor.
        """
        t2 = float(t2)
        if not t2 > self._t2:
            raise ValueError('step: t2 = %r must be later than the current time %r'
                             % (t2, self._t2))
        if self._charts is not None:
            self.recenter()
        fast = self._fast
        limited = self._general.limit_index.shape[0] > 0
        # a config held at a limit: its active set starts there, on the general path
        if fast is not None and q2_hint is None and not (limited and self._held.shape[0]):
            hint = None if lambda1_hint is None else _vector(lambda1_hint, self.nc,
                                                             'lambda1_hint')
            # the common call (an array of the right size, no kinematic configs) costs one
            # copy; anything else is checked first (np.shape would cost microseconds here)
            if u1.__class__ is np.ndarray and u1.shape == fast.u_in.shape:
                fast.u_in[:] = u1
            else:
                _copy_checked(u1, fast.u_in, 'u1')
            if k2 is not _NO_KINEMATIC or fast.k_in.shape[0]:
                _copy_checked(k2, fast.k_in, 'k2')
            previous_lambda = None
            if hint is not None:
                # the compiled step starts Newton from the multipliers in its state
                previous_lambda = self._lambda1.copy()
                self._lambda1[:] = hint
            t1 = self._t2
            status, iterations, rnorm = fast.step(t1, t2, self.tolerance, max_iterations)
            if limited and status != packed.OK and status != packed.BAD_INPUT:
                # a root past a joint limit (or none: a recovery's root could pass one):
                # the general path's step, which holds configs at their bounds; the state
                # did not move
                if previous_lambda is not None:
                    self._lambda1[:] = previous_lambda
                try:
                    return iterations + self._step_general(t2, u1, k2, max_iterations,
                                                           lambda1_hint, None)
                except BaseException:
                    self._data_at_midpoint()    # the System's Data holds a failed iterate
                    raise
            if status != packed.OK:
                try:
                    return self._recover_fast(t1, t2, status, iterations, rnorm,
                                              max_iterations)
                except BaseException:
                    if previous_lambda is not None:
                        self._lambda1[:] = previous_lambda
                    self._data_at_midpoint()    # the shared buffers hold a failed iterate
                    raise
            self._t1, self._t2 = t1, t2
            self._deriv1 = self._composite = None
            if limited:
                self._limit_impulse[:] = 0.0
                self._held = _NONE_HELD
            self._data_at_compiled_midpoint()
            return iterations
        return self._step_general(t2, u1, k2, max_iterations, lambda1_hint, q2_hint)

    def _step_general(self, t2, u1, k2, max_iterations, lambda1_hint, q2_hint):
        """:meth:`step` on the general path (retries and subdivision included)."""
        if self._fast is not None:
            # the predictor's history is the compiled stepper's (it took the earlier steps)
            self._history = list(zip(*self._fast.history()))
        u1 = _vector(u1, self.nu, 'u1')
        k2 = _vector(k2, self.nk, 'k2')
        lam = (self._lambda1.copy() if lambda1_hint is None
               else _vector(lambda1_hint, self.nc, 'lambda1_hint'))
        hint = None if q2_hint is None else _vector(q2_hint, self.nq, 'q2_hint')
        t1 = self._t2
        saved = self._save()
        iterations = 0
        failure = None
        # the hint or history guess first, then the momentum guess (unconstrained systems)
        for momentum in ((False, True) if self.nd and not self.nc else (False,)):
            try:
                return iterations + self._attempt_general(
                    t2, u1, k2, max_iterations, lam, None if momentum else hint, momentum)
            except _StepFailed as exc:
                self._restore(saved)
                iterations += exc.iterations
                if exc.singular:
                    raise ConvergenceError(str(exc)) from None
                failure = exc
                if self._predicted_by_momentum and hint is None:
                    break           # that was the momentum guess already
            except BaseException:
                self._restore(saved)
                raise

        def attempt(ta, tb, k_b):
            self.recenter()         # each substep starts at its charts' centres
            its = 0
            before = self._save()
            for momentum in ((False, True) if self.nd and not self.nc else (False,)):
                try:
                    return its + self._attempt_general(tb, u1, k_b, max_iterations,
                                                       self._lambda1.copy(), None, momentum)
                except _StepFailed as exc:
                    self._restore(before)
                    its += exc.iterations
                    failure = exc
                    if self._predicted_by_momentum:
                        break
            failure.iterations = its
            raise failure

        return iterations + self._subdivide(t1, t2, u1, k2, attempt, saved, failure)

    def _recover_fast(self, t1, t2, status, iterations, rnorm, max_iterations):
        """The compiled step failed: retry from the momentum predictor, then subdivide."""
        fast = self._fast
        if status in (packed.BAD_INPUT, packed.SINGULAR):
            self._fail(status, iterations, rnorm, t2, fast.u_in, fast.k_in)
        u1, k2 = fast.u_in.copy(), fast.k_in.copy()
        saved = self._save()
        first = _StepFailed(self._fast_message(status, iterations, rnorm, t2))

        def attempt(ta, tb, k_b):
            self.recenter()         # each substep starts at its charts' centres
            fast.u_in[:], fast.k_in[:] = u1, k_b
            its = 0
            for momentum in (False, True):
                if momentum:
                    # the momentum guess: the history extrapolation can be poor after
                    # violent motion or a jump of the inputs
                    fast.reset_history([ta], [self._q2.copy()], keep_anchor=True)
                status, n, rnorm = fast.step(ta, tb, self.tolerance, max_iterations)
                its += n
                if status == packed.OK:
                    self._t1, self._t2 = ta, tb
                    self._deriv1 = None
                    return its
                if status == packed.BAD_INPUT:
                    self._fail(status, n, rnorm, tb, fast.u_in, fast.k_in)
            failure = _StepFailed(self._fast_message(status, n, rnorm, tb),
                                  status == packed.SINGULAR)
            failure.iterations = its
            raise failure

        history = fast.history()
        try:
            # the whole step from the momentum guess first
            fast.reset_history([t1], [self._q2.copy()], keep_anchor=True)
            fast.u_in[:], fast.k_in[:] = u1, k2
            status2, n, rnorm2 = fast.step(t1, t2, self.tolerance, max_iterations)
            iterations += n
            if status2 == packed.OK:
                self._t1, self._t2 = t1, t2
                self._deriv1 = self._composite = None
                # keep the earlier history: those nodes are still the trajectory
                times, configs = history
                fast.reset_history(times + [t2], configs + [self._q2.copy()],
                                   keep_anchor=True)
                self._data_at_compiled_midpoint()
                return iterations
            if status2 == packed.SINGULAR:
                raise _StepFailed(self._fast_message(status2, n, rnorm2, t2), True)
        except _StepFailed as exc:
            self._restore(saved)
            raise ConvergenceError(str(exc)) from None
        self._restore(saved)
        return iterations + self._subdivide(t1, t2, u1, k2, attempt, saved, first)

    def _subdivide(self, t1, t2, u1, k2, attempt, saved, first):
        """Take the step t1 -> t2 as 2, 4, ... 2**max_subdivisions equal substeps with
        ``attempt(ta, tb, k_b)`` (one substep from the current state; raises _StepFailed),
        inputs held and kinematic configs interpolated linearly; on success leave the
        composite step as the current one (module docstring), otherwise restore ``saved``
        and raise ConvergenceError naming the last failure."""
        nd = self.nd
        q_start, p_start = saved[3], saved[5]
        k_start = q_start[nd:].copy()
        # free joints: the step's start before its charts moved (its derivatives' input)
        chart_in = self._chart_in
        iterations = 0
        failure = first
        for level in range(1, self.max_subdivisions + 1):
            n = 2 ** level
            h = (t2 - t1) / n
            self._restore(saved)
            parts = []
            try:
                for j in range(1, n + 1):
                    ta = self._t2
                    tb = t2 if j == n else t1 + j * h
                    k_b = k2 if j == n else k_start + (j / n) * (k2 - k_start)
                    q_a, p_a = self._q2.copy(), self._p2.copy()
                    iterations += attempt(ta, tb, k_b)
                    part = (ta, tb, q_a, p_a, self._q2.copy(), self._p2.copy(),
                            self._lambda1.copy())
                    if self._charts is not None:
                        # the charts the substep ran in, and its start before they moved
                        part += (self._charts.attitudes(self._model),
                                 chart_in if j == 1 else (q_a, p_a))
                    # last: the substep's active set (held configs, contacts)
                    part += (self._active_set(),)
                    parts.append(part)
            except _StepFailed as exc:
                iterations += getattr(exc, 'iterations', 0)
                failure = _StepFailed('substep %d of %d (to t=%g): %s' % (j, n, tb, exc),
                                      exc.singular)
                continue
            except BaseException:
                self._restore(saved)
                raise
            # the composite step (t1, q1, p1) -> (t2, q2, p2)
            times, configs = ([t for t, _ in saved[8]], [q for _, q in saved[8]])
            if self._fast is not None:
                times, configs = saved[10][0]
            self._t1, self._t2 = t1, t2
            self._q1[:], self._p1[:], self._u1[:] = q_start, p_start, u1
            if self._charts is not None:
                # the substeps moved the charts: the start in the final charts
                self._charts.express(saved[13], self._charts.attitudes(self._model),
                                     self._q1, self._p1)
            self._lambda1[:] = (sum((part[1] - part[0]) * part[6] for part in parts)
                                / (t2 - t1)) if self.nc else 0.0
            pairs = list(zip(times, configs)) + [(t2, self._q2.copy())]
            pairs = [(t, q) for t, q in pairs if t <= t1 or t == t2][-packed.HISTORY:]
            if self._charts is not None:
                # the earlier nodes are in the step's first charts
                pairs = [(t1, self._q1.copy()), (t2, self._q2.copy())]
            self._reset_history(pairs, keep_anchor=True)
            self._composite = (parts, u1.copy(), k_start, k2.copy())
            self.set_midpoint()
            return iterations
        self._restore(saved)
        raise ConvergenceError('step to t=%g: no acceptable root of the DEL%s; last failure: %s'
                               % (t2, ', even with %d substeps' % 2 ** self.max_subdivisions
                                  if self.max_subdivisions else '', failure))

    @property
    def last_substeps(self):
        """Number of substeps the last step was taken as (1: a single step)."""
        return 1 if self._composite is None else len(self._composite[0])

    @property
    def last_check(self):
        """The acceptance test of the last root the solver found (after a subdivided
        step: of its last substep; after a failed step: of the last rejected root, if any)
        as a dict: ``deviation``,
        ``deviation_bound`` [rad or m] (test (a)), ``defect``, ``defect_bound`` [J] and
        ``energy_checked`` (test (b)), ``linearised`` (max-norm of the linearised step's
        increment); docs/integrator.md defines them."""
        return check_summary(self._check)

    def _fast_message(self, status, iterations, rnorm, t2):
        if status == packed.NOT_FINITE:
            return ('step to t=%g: the DEL residual became non-finite after %d iterations'
                    % (t2, iterations))
        if status == packed.SINGULAR:
            return ('step to t=%g: singular DEL Jacobian (a dynamic config that moves no '
                    'mass?)' % t2)
        if status == packed.REJECTED:
            c = self.last_check
            return ('step to t=%g: root rejected (|DEL| = %.3g): %s'
                    % (t2, rnorm, rejection_reason(c)))
        violation = self._fast.last_violation()
        return ('step to t=%g failed to converge after %d iterations (|DEL| = %.3g%s)'
                % (t2, iterations, rnorm,
                   '' if violation is None else ', max |h| = %.3g' % violation))

    def _fail(self, status, iterations, rnorm, t2, u1, k2):
        if status == packed.BAD_INPUT:
            if not np.isfinite(u1).all():
                _vector(u1, self.nu, 'u1')
            _vector(k2, self.nk, 'k2')
        raise ConvergenceError(self._fast_message(status, iterations, rnorm, t2))

    def _attempt_general(self, t2, u1, k2, max_iterations, lam, hint, momentum):
        """One general-path attempt at the step to t2 from the current state; on success
        the state advances (returns the iterations), otherwise raises _StepFailed with the
        state partly moved (the caller restores it)."""
        nd = self.nd
        g = self._general
        predicted, anchor, self._predicted_by_momentum = g.predict(
            self._history, self._t2, self._q2, self._p2, t2, momentum)
        if anchor is not None:
            self._anchor = anchor
        predicted[nd:] = k2
        guess = predicted if hint is None else hint.copy()
        guess[nd:] = k2
        t1 = self._t2
        self._t1, self._t2 = t1, t2
        self._q1[:], self._p1[:], self._u1[:] = self._q2, self._p2, u1
        self._deriv1 = None
        self._composite = None
        iterations = 0
        lam0 = lam
        try:
            g.begin(t1, t2, self._q1, self._p1, self._u1)
            delta, p2, lam, iterations, linearised = g.solve(
                guess, lam, max_iterations, self.tolerance, self.min_iterations)
            if hint is not None:
                # the acceptance rule refers to the integrator's own prediction
                linearised = g.linearised_step(predicted - self._q1, lam0)
                g.residual(delta, lam)
            if not g.accept(delta, linearised, self._anchor, self._check, self.tolerance):
                raise _StepFailed('step to t=%g: root rejected (|DEL| = %.3g): %s'
                                  % (t2, g.rnorm, rejection_reason(self.last_check)))
        except _StepFailed as exc:
            exc.iterations = iterations
            raise
        except (general_step.RootNotFound, ConvergenceError) as exc:
            failure = _StepFailed('step to t=%g %s' % (t2, exc))
            failure.iterations = getattr(exc, 'iterations', max_iterations)
            raise failure from None
        except np.linalg.LinAlgError as exc:
            # a singular Newton matrix is a failed step, as trep reports it (LinAlgError is
            # a ValueError, which would otherwise read as bad input)
            raise _StepFailed('step to t=%g: singular DEL Jacobian (%s)' % (t2, exc),
                              singular=True) from exc
        except ValueError:
            raise
        except Exception as exc:
            raise ConvergenceError('step to t=%g failed: %s' % (t2, exc)) from exc
        q2 = self._q1 + delta
        self._q2[:], self._p2[:], self._lambda1[:] = q2, p2, lam
        self._impulse[:] = g.applied_impulse
        rebound = g.rebound(q2, p2)
        if rebound is not None:
            # a contact with restitution struck: it leaves with the rebound's momentum, an
            # impulse at t2 outside the DEL (the energy anchor does not carry over)
            self._p2[:] += rebound
        if g.limit_impulse is not None:
            self._limit_impulse, self._held = g.limit_impulse.copy(), g.last_held.copy()
        pairs = [(t, q) for t, q in self._history if t < t2][1 - packed.HISTORY:] + [
            (t2, q2.copy())]
        self._reset_history(pairs, restart=False)
        self._anchor = g.next_anchor if rebound is None else None
        return iterations

    def calc_f(self):
        """The DEL residual (nQd + nc,) at the current states (zero for a solved step)."""
        g = self._general
        g.begin(self._t1, self._t2, self._q1, self._p1, self._u1)
        return g.residual(self._q2 - self._q1, self._lambda1)

    # ------------------------------------------------------------------ derivatives
    def _calc_deriv1(self):
        """The first derivatives of the current step (:mod:`derivatives`' dict), cached:
        of the composite map after a subdivided step, from the compiled stepper when it has
        them, else by NumPy."""
        if self._deriv1 is not None:
            return self._deriv1
        if self._charts is not None:
            if self._composite is not None:
                return self._composite_derivatives(second=False)[0]
            d = self._calc_deriv1_general()
            q_in, p_in = self._chart_in
            self._deriv1 = derivatives.recentred_derivatives(d, self._system, q_in, p_in)
            return self._deriv1
        if self._composite is not None:
            return self._composite_derivatives(second=False)[0]
        if self._fast is not None and self._t2 > self._t1 and not self._held.shape[0]:
            # compiled first derivatives (same formulas as the general path's)
            out = self._fast.derivatives(self._t1, self._t2)
            if out is not None:
                self._deriv1 = derivatives.packed_first(out[0], out[1], self._system)
                return self._deriv1
        return self._calc_deriv1_general()

    def _calc_deriv1_general(self):
        """First derivatives by NumPy (any system); their dict also keeps the DEL Jacobian
        for the second derivatives.  With contacts, those of the step with its contacts'
        modes (:func:`derivatives.first_derivatives`)."""
        g = self._general
        active = ((g.last_mode, g.contact_impulse, g.slide_hint) if g.last_mode.any()
                  else None)
        d = derivatives.first_derivatives(self._system, self._t1, self._t2, self._q1,
                                          self._q2, self._u1, self._lambda1, self._held,
                                          active)
        if active is not None:
            d = self._through_rebound(d)
        self._deriv1 = d
        return d

    #: relative step of the fourth-order central differences of the rebound impulse
    REBOUND_DIFFERENCE_STEP = 1e-4

    def _through_rebound(self, d):
        """The first derivatives ``d`` of the inelastic step, with p2 rows through the
        restitution impulse R(q1, p1, q2, p2) that ends it when a contact with restitution
        struck (:func:`general_step.rebound_impulse`): dp2+/dx = dp2/dx + R_q1 dq1/dx +
        R_p1 dp1/dx + R_q2 dq2/dx + R_p2 dp2/dx.  R is an explicit smooth function (mass
        matrices, contact gradients, one linear solve); its partials are fourth-order
        central differences, 1e-10 relative like the second derivatives'."""
        g = self._general
        if not any(c.restitution for c in g.contacts):
            return d
        p2 = self._D2Ld()                           # the inelastic step's momentum
        q1, p1, q2 = self._q1.copy(), self._p1.copy(), self._q2.copy()

        def impulse(x):
            r = general_step.rebound_impulse(g.contact_set, g.last_mode, x[0], x[1], x[2],
                                             x[3], fresh)
            return np.zeros(self.nd) if r is None else r
        fresh = g.prior_mode == general_step.OPEN
        if general_step.rebound_impulse(g.contact_set, g.last_mode, q1, p1, q2, p2,
                                        fresh) is None:
            return d
        args = [q1, p1, q2, p2]
        partial = []
        for a, x in enumerate(args):
            cols = np.zeros((self.nd, x.shape[0]))
            for i in range(x.shape[0]):
                h = self.REBOUND_DIFFERENCE_STEP * max(1.0, abs(x[i]))
                f = []
                for k in (-2, -1, 1, 2):
                    y = [v.copy() for v in args]
                    y[a][i] += k * h
                    f.append(impulse(y))
                cols[:, i] = (f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * h)
            partial.append(cols)
        R_q1, R_p1, R_q2, R_p2 = partial
        nd = self.nd
        Rqd, Rqk = R_q2[:, :nd], R_q2[:, nd:]
        d = dict(d)
        d['p2_dq1'] = d['p2_dq1'] + R_q1 + Rqd @ d['q2_dq1'] + R_p2 @ d['p2_dq1']
        d['p2_dp1'] = d['p2_dp1'] + R_p1 + Rqd @ d['q2_dp1'] + R_p2 @ d['p2_dp1']
        d['p2_du1'] = d['p2_du1'] + Rqd @ d['q2_du1'] + R_p2 @ d['p2_du1']
        d['p2_dk2'] = d['p2_dk2'] + Rqd @ d['q2_dk2'] + Rqk + R_p2 @ d['p2_dk2']
        return d

    def _active_set(self):
        """The last step's active set: ``(held configs, contact modes (k,), contact
        impulses (k, 3), slide hints (k, 2))`` (copies)."""
        g = self._general
        return (self._held.copy(), g.last_mode.copy(), g.contact_impulse.copy(),
                g.slide_hint.copy())

    def _set_active(self, active):
        """Make ``active`` (:meth:`_active_set`) the last step's active set."""
        g = self._general
        self._held = active[0]
        g.last_mode[:], g.contact_impulse[:], g.slide_hint[:] = active[1:]

    def _calc_deriv2(self):
        """All second derivatives of (q2_d, p2, lambda1) w.r.t. x = (q1, p1, u1, k2), cached:
        ``(Zq (nX, nX, nd), Zp (nX, nX, nd), Zl (nX, nX, nc))`` indexed [input1, input2,
        output] (trep's order for second derivatives;
        :func:`derivatives.second_derivatives`)."""
        if getattr(self, '_deriv2', None) is not None and self._deriv2[0] is self._deriv1:
            return self._deriv2[1]
        if self._charts is not None and self._composite is None:
            d = self._calc_deriv1()
            out = self._difference_second_derivatives()
            self._deriv2 = (d, out)
            return out
        if self._composite is not None:
            return self._composite_derivatives(second=True)[1]
        if self._general.last_mode.any():
            # an active contact: differences of the exact first derivatives, as with free
            # joints (the contacts' geometry would need its third derivatives)
            d = self._calc_deriv1()
            out = self._difference_second_derivatives()
            self._deriv2 = (d, out)
            return out
        d = self._calc_deriv1()
        if '_A' not in d:
            d = self._calc_deriv1_general()
        out = derivatives.second_derivatives(self._system, self._t1, self._t2, self._q1,
                                             self._q2, self._u1, self._lambda1, d,
                                             self._held)
        self._deriv2 = (d, out)
        return out

    #: relative step of the fourth-order central differences of the first derivatives
    #: (free joints): truncation h^4 and rounding (the first derivatives' ~1e-13 over h)
    #: balance near 1e-3, about 1e-10 relative
    SECOND_DIFFERENCE_STEP = 1e-3
    #: with a sliding contact, the step is at most this fraction of its slip over the step
    SLIDE_DIFFERENCE_FRACTION = 0.05

    def _difference_second_derivatives(self):
        """Second derivatives of a step with free joints or an active contact, trep's
        layout (as :meth:`_calc_deriv2`): central differences of the exact first
        derivatives.

        The step is taken again (general path, solved to its rounding floor, with the
        step's own active set held: the configs it held at a limit and its contacts'
        modes, :attr:`GeneralStep.frozen`) from starts moved by ``± h max(1, |x_j|)`` and
        ``± 2h max(1, |x_j|)`` along each input, and the first derivatives combined by the
        fourth-order central difference: about 1e-10 relative (h =
        :attr:`SECOND_DIFFERENCE_STEP`).

        With free joints the step's map goes from the state the previous step left (in
        its charts) to the new state in the charts the step moved to, which depend on that
        state; its first derivatives are exact
        (:func:`derivatives.recentred_derivatives`).  The starts are moved in the same
        input charts and each result is expressed in the nominal step's charts (the charts
        of a step move with its start's angles).  The System is put back at the step's
        midpoint, its charts where they were."""
        system, charts = self._system, self._charts
        if self._t2 <= self._t1:
            raise ValueError('second derivatives need a step: none has been taken')
        nq, nd, nu, nk, nc = self.nq, self.nd, self.nu, self.nk, self.nc
        if charts is not None:
            q_in, p_in = self._chart_in
            now = charts.attitudes(self._model)
            # the charts the step started in: those the recentring moved by q_in's angles
            before = np.array([R @ xyz_rotation(np.ascontiguousarray(q_in[rot])).T
                               for R, rot in zip(now, charts.rotation)])
        else:
            q_in, p_in = self._q1.copy(), self._p1.copy()
        x = np.concatenate([q_in, p_in, self._u1, self._q2[nd:nq] if nk else np.zeros(0)])
        cuts = np.cumsum([nq, nd, nu])
        scratch = MidpointVI(system, tolerance=self.tolerance, fast=False,
                             max_subdivisions=0, min_iterations=2, limits=self._limits)
        scratch._general.frozen = ({int(i): float(self._q2[i]) for i in self._held},
                                   self._general.last_mode.copy())
        nX = x.size
        Zq, Zp, Zl = np.zeros((nX, nX, nd)), np.zeros((nX, nX, nd)), np.zeros((nX, nX, nc))

        def first_at(xj):
            """The first derivatives of the step from ``xj`` (with free joints, of its
            result expressed in the nominal step's charts: those of the first derivatives
            the difference differentiates, as the result's charts move with the start's
            angles)."""
            q1, p1, u1, k2 = np.split(xj, cuts)
            if charts is not None:
                charts.set_attitudes(before)
            scratch.initialize_from_state(self._t1, q1, p1, self._lambda1, check=False)
            # the Newton start and slide direction of the step's own contacts
            g, nominal = scratch._general, self._general
            g.contact_impulse[:], g.slide_hint[:] = nominal.contact_impulse, nominal.slide_hint
            scratch.step(self._t2, u1, k2 if nk else _NO_KINEMATIC)
            D = derivatives.stacked(scratch._calc_deriv1())
            Dq, Dp = D['q2'].copy(), D['p2']
            if charts is not None:
                after = charts.attitudes(self._model)
                for k, rot in enumerate(charts.rotation):
                    Tq, Tp, Tpq = express_jacobian(now[k].T @ after[k], scratch.q2[rot],
                                                   scratch.p2[rot])
                    Dp[rot] = Tp @ Dp[rot] + Tpq @ Dq[rot]
                    Dq[rot] = Tq @ Dq[rot]
            return Dq, Dp, D['l1']
        step = self.SECOND_DIFFERENCE_STEP
        sliding = np.flatnonzero(self._general.last_mode == SLIDE)
        if sliding.shape[0]:
            # a sliding contact's friction turns with its slip: its scale is the slip's
            # length over the step, which the differences must resolve
            _, _, slip1 = contact_kinematics(system, self._q1, self._system.contacts)
            for m in sliding:
                slip = np.linalg.norm(slip1[m, :, :nd] @ (self._q2 - self._q1)[:nd])
                step = min(step, self.SLIDE_DIFFERENCE_FRACTION * slip)
        try:
            for j in range(nX):
                h = step * max(1.0, abs(x[j]))
                for offset, weight in ((-2.0, 1.0), (-1.0, -8.0), (1.0, 8.0), (2.0, -1.0)):
                    xj = x.copy()
                    xj[j] += offset * h
                    for Z, D in zip((Zq, Zp, Zl), first_at(xj)):
                        Z[j] += (weight / (12.0 * h)) * D.T
        finally:
            if charts is not None:
                charts.set_attitudes(now)
            self._data_at_midpoint()
        return Zq, Zp, Zl

    def _composite_derivatives(self, second):
        """Derivatives of a subdivided step's composite map
        (:func:`derivatives.composite_derivatives`): each substep's are evaluated with the
        integrator put at that substep, then the state is put back.  Returns ``(first,
        second)`` (second None unless ``second``) and caches them as the step's."""
        parts, u1, k_start, k2 = self._composite
        saved = self._save()
        chart_in = self._chart_in

        def substep(part, second):
            ta, tb, q_a, p_a, q_b, p_b, lam = part[:7]
            self._t1, self._t2 = ta, tb
            self._q1[:], self._p1[:], self._q2[:], self._p2[:] = q_a, p_a, q_b, p_b
            if self._charts is not None:
                # the substep in its own charts, from its start at their centres; its
                # derivatives from that start as it was before they moved
                attitudes, self._chart_in = part[7], part[8]
                self._charts.set_attitudes(attitudes)
                self._q1[self._charts.rotation.ravel()] = 0.0
            self._u1[:], self._lambda1[:] = u1, lam
            self._set_active(part[-1])
            self._deriv1 = self._composite = self._deriv2 = None
            d = self._calc_deriv1()
            return d, (self._calc_deriv2() if second else None)
        try:
            out, seconds = derivatives.composite_derivatives(
                self._system, parts, self._t2 - self._t1, substep, second)
        finally:
            self._restore(saved)
            self._chart_in = chart_in
            self.set_midpoint()     # the substeps' evaluations moved the System
        self._deriv1 = out
        if not second:
            return out, None
        self._deriv2 = (out, seconds)
        return out, seconds

    def _pick(self, key, row, col, row_kind, col_kind):
        arr = self._calc_deriv1()[key]
        s = self._system

        def index(ident, kind):
            if ident is None:
                return None
            if kind == 'dyn':
                c = s.get_config(ident)
                if c.kinematic:
                    raise ValueError('%r is kinematic: only dynamic configs index this '
                                     'dimension' % c.name)
                return c.index
            if kind == 'config':
                return s.get_config(ident).index
            if kind == 'kin':
                c = s.get_config(ident)
                if not c.kinematic:
                    raise ValueError('%r is not a kinematic config' % c.name)
                return c.k_index
            if kind == 'input':
                return s.get_input(ident).index
            return s.get_constraint(ident).index

        i, j = index(row, row_kind), index(col, col_kind)
        if i is not None and j is not None:
            return float(arr[i, j])
        if i is not None:
            return arr[i].copy()
        if j is not None:
            return arr[:, j].copy()
        return arr.copy()

    def q2_dq1(self, q=None, q1=None):
        """dq2/dq1, (nQd, nQ) indexed [output, input]."""
        return self._pick('q2_dq1', q, q1, 'dyn', 'config')

    def q2_dp1(self, q=None, p1=None):
        """dq2/dp1, (nQd, nQd)."""
        return self._pick('q2_dp1', q, p1, 'dyn', 'dyn')

    def q2_du1(self, q=None, u1=None):
        """dq2/du1, (nQd, nu)."""
        return self._pick('q2_du1', q, u1, 'dyn', 'input')

    def q2_dk2(self, q=None, k2=None):
        """dq2/dk2, (nQd, nQk)."""
        return self._pick('q2_dk2', q, k2, 'dyn', 'kin')

    def p2_dq1(self, p=None, q1=None):
        """dp2/dq1, (nQd, nQ)."""
        return self._pick('p2_dq1', p, q1, 'dyn', 'config')

    def p2_dp1(self, p=None, p1=None):
        """dp2/dp1, (nQd, nQd)."""
        return self._pick('p2_dp1', p, p1, 'dyn', 'dyn')

    def p2_du1(self, p=None, u1=None):
        """dp2/du1, (nQd, nu)."""
        return self._pick('p2_du1', p, u1, 'dyn', 'input')

    def p2_dk2(self, p=None, k2=None):
        """dp2/dk2, (nQd, nQk)."""
        return self._pick('p2_dk2', p, k2, 'dyn', 'kin')

    def lambda1_dq1(self, constraint=None, q1=None):
        """dlambda1/dq1, (nc, nQ)."""
        return self._pick('l1_dq1', constraint, q1, 'constraint', 'config')

    def lambda1_dp1(self, constraint=None, p1=None):
        """dlambda1/dp1, (nc, nQd)."""
        return self._pick('l1_dp1', constraint, p1, 'constraint', 'dyn')

    def lambda1_du1(self, constraint=None, u1=None):
        """dlambda1/du1, (nc, nu)."""
        return self._pick('l1_du1', constraint, u1, 'constraint', 'input')

    def lambda1_dk2(self, constraint=None, k2=None):
        """dlambda1/dk2, (nc, nQk)."""
        return self._pick('l1_dk2', constraint, k2, 'constraint', 'kin')

    # second-derivative accessors: arrays indexed [input1, input2, output]
    def _block(self, kind):
        nq, nd, nu, nk = self.nq, self.nd, self.nu, self.nk
        start = {'q1': 0, 'p1': nq, 'u1': nq + nd, 'k2': nq + nd + nu}[kind]
        size = {'q1': nq, 'p1': nd, 'u1': nu, 'k2': nk}[kind]
        return start, size

    def _index_in(self, ident, kind):
        s = self._system
        if kind == 'q1':
            return s.get_config(ident).index
        if kind == 'p1':
            c = s.get_config(ident)
            if c.kinematic:
                raise ValueError('%r is kinematic: p1 has only dynamic entries' % c.name)
            return c.index
        if kind == 'u1':
            return s.get_input(ident).index
        c = s.get_config(ident)
        if not c.kinematic:
            raise ValueError('%r is not a kinematic config' % c.name)
        return c.k_index

    def _pick2(self, which, out, kind1, kind2, id1, id2):
        Zq, Zp, Zl = self._calc_deriv2()
        arr = {'q2': Zq, 'p2': Zp, 'l1': Zl}[which]
        a0, na = self._block(kind1)
        b0, nb = self._block(kind2)
        block = arr[a0:a0 + na, b0:b0 + nb]
        if out is not None:
            if which == 'l1':
                k = self._system.get_constraint(out).index
            else:
                c = self._system.get_config(out)
                if c.kinematic:
                    raise ValueError('%r is kinematic: only dynamic configs index the '
                                     'output' % c.name)
                k = c.index
            block = block[..., k]
        i = None if id1 is None else self._index_in(id1, kind1)
        j = None if id2 is None else self._index_in(id2, kind2)
        if i is not None and j is not None:
            res = block[i, j]
        elif i is not None:
            res = block[i]
        elif j is not None:
            res = block[:, j]
        else:
            res = block
        return float(res) if np.ndim(res) == 0 else np.array(res)


def _second_derivative(which, kind1, kind2):
    out_name = 'constraint' if which == 'l1' else ('p' if which == 'p2' else 'q')
    name1 = kind1 + ('_1' if kind1 == kind2 else '')
    name2 = kind2 + ('_2' if kind1 == kind2 else '')
    label = 'lambda1' if which == 'l1' else which

    def method(self, out=None, id1=None, id2=None):
        return self._pick2(which, out, kind1, kind2, id1, id2)
    method.__name__ = '%s_d%sd%s' % (label, kind1, kind2)
    method.__doc__ = ('d2 %s / d %s d %s, indexed [%s, %s, %s] (trep order for second '
                      'derivatives); arguments (%s=None, %s=None, %s=None) select entries.'
                      % (label, kind1, kind2, kind1, kind2, label, out_name, name1, name2))
    return method


for _which in ('q2', 'p2', 'l1'):
    for _k1, _k2 in (('q1', 'q1'), ('q1', 'p1'), ('q1', 'u1'), ('q1', 'k2'), ('p1', 'p1'),
                     ('p1', 'u1'), ('p1', 'k2'), ('u1', 'u1'), ('u1', 'k2'), ('k2', 'k2')):
        _m = _second_derivative(_which, _k1, _k2)
        setattr(MidpointVI, _m.__name__, _m)
del _which, _k1, _k2, _m
