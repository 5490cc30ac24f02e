"""Compiled step for the common case: a frame tree with built-in terms only.

When a System's only potentials and forces are ``Gravity``, ``ConfigSpring``, ``Damping`` and
``ConfigForce`` (and at most one ``JointDrives``, the position/velocity drives) and its
constraints (if any) are built-in ones (``Distance``, ``PointToPoint*``, ``PointOnPlane``,
``Mimic``), a whole step runs in one numba call:
predictor, Newton iterations on the DEL with the exact Jacobian, p2 and the midpoint state
(:func:`step_packed`; with constraints :func:`constrained_step.step_constrained_packed`).
Both entry points run the same step body, :func:`ros_vi.integrators.step_body.newton_step`
(predictor, DEL residual and Jacobian, line search, acceptance rule, commit), on the packed
arrays of :mod:`ros_vi.integrators.packed`.  :class:`FastStepper` packs a System into them
and steps it; every other system uses the general path
(:mod:`ros_vi.integrators.general_step`), which gives the same answer (tests compare the
two).  :func:`derivatives_packed` gives a step's first derivatives on the same arrays.
"""
import numpy as np
from numba import njit

from ..mechanics import kernel
from ..mechanics.constraint_kernel import pack_constraints, refresh_constraint_parameters
from ..mechanics.forces.configforce import ConfigForce
from ..mechanics.forces.damping import Damping
from ..mechanics.forces.drives import KD as _D_KD, KP as _D_KP, JointDrives, drive_law
from ..mechanics.potentials.configspring import ConfigSpring
from ..mechanics.potentials.gravity import Gravity
from ..mechanics.free import recenter_state
from .acceptance import A_DT, A_VALID, check_summary
from .constrained_step import call_step_constrained, step_constrained_packed
from .packed import (CW_DH1, CW_END, CW_H2, CW_LAM, CW_LAMN, DT, F_DAMPING, F_END, F_FIXEDP,
                     F_FIXEDR, F_GVEC, F_IB, F_MASS, F_MIM_MULT, F_MIM_OFF, F_SP_K, F_SP_Q0,
                     F_VALUE, HEADER, HISTORY, ITERS, I_ANC, I_CFRAME, I_CORDER, I_CPARENT, I_END,
                     I_FCFG, I_FJOINT, I_FREE, I_IN_CFG, I_KIND, I_LIM, I_MASS_FRAMES, I_MIM_LEAD,
                     I_PARENT, I_SP_IDX, MAXIT, MINIT, ND, NDRIVE, NF, NFREE, NHIST, NLIM, NQ, NT,
                     NU, RNORM, STATUS, T2, TOL, W_ANCHOR, W_CHART, W_CHECK, W_DRIVE, W_END,
                     W_HIST, W_HIST_T, W_IMPULSE, W_K_IN, W_LIMIT, W_P1, W_P2, W_Q1, W_Q2, W_Q2N,
                     W_QM, W_U1, W_U_IN, W_V, W_VA, acceptance_views, constraint_layout,
                     forget_factors, kernel_scratch, layout, model_views, no_constraints,
                     step_views)
from .step_body import newton_step


@njit(cache=True)
def step_packed(I, F, W):
    """One VI step of a system without constraints from the packed state
    (:func:`newton_step`); results in W (q2, p2, qm, v) and I's header."""
    o = layout(I)
    model = model_views(I, F, o)
    ks = kernel_scratch(I, W, o)
    st = step_views(I, W, o)
    newton_step(I, W, o, model, ks, st, acceptance_views(W, o),
                no_constraints(model, ks, st, W))


@njit(cache=True)
def derivatives_packed(I, F, W, t1, t2, Zq, Zp):
    """First derivatives of (q2_d, p2) w.r.t. x = (q1, p1, u1, k2) at the integrator's
    current step (q1, q2 from the state in W), written into ``Zq``, ``Zp`` (nd, nX).

    Same formulas as the general path
    (:func:`ros_vi.integrators.derivatives.first_derivatives`): with J2, J1 the partials of
    D1Ld + f- and P2, P1 those of D2Ld w.r.t. q2 and q1 at the midpoint,
    ``dq2 = -J2_dd^-1 [J1, I, Fu, J2_dk]`` and ``dp2 = P2_dd dq2 + [P1, 0, 0, P2_dk]``.
    Returns False if J2_dd is singular.
    """
    o = layout(I)
    nq, nd, nu = I[NQ], I[ND], I[NU]
    nk = nq - nd
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = model_views(I, F, o)
    q1 = W[o[W_Q1]:o[W_P1]]
    q2 = W[o[W_Q2]:o[W_P2]]
    drives = W[o[W_DRIVE]:o[W_IMPULSE]].reshape((NDRIVE, nd))
    dt = t2 - t1
    nt = I[NT]
    qm = np.empty(nt)
    v = np.empty(nt)
    for i in range(nq):
        d = q2[i] - q1[i]
        qm[i] = q1[i] + 0.5 * d
        v[i] = d / dt
    kernel.expand_into(qm[:nq], v[:nq], mim_lead, mim_mult, mim_off, qm, v)
    R, P, S, Vp, Ic, h, Lq, Lv, T, Vg = kernel.first_order(
        parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
        cparent, corder, gvec, qm, v)
    M, Lvq, Lqq = kernel.second_order(S, Vp, Ic, h, gvec, anc, corder)
    kernel.fold_matrix(M, nq, mim_lead, mim_mult)
    kernel.fold_matrix(Lvq, nq, mim_lead, mim_mult)
    kernel.fold_matrix(Lqq, nq, mim_lead, mim_mult)
    for j in range(sp_idx.shape[0]):
        Lqq[sp_idx[j], sp_idx[j]] -= sp_k[j]
    nX = nq + nd + nu + nk
    K = nq + nd + nu                      # first k2 column
    A = np.empty((nd, nd))
    P2d = np.empty((nd, nd))
    B = np.zeros((nd, nX))                # right-hand sides, then dq2/dx
    for a in range(nd):
        for b in range(nX):
            Zp[a, b] = 0.0                # direct part of dp2/dx first
        for b in range(nq):
            lqq = 0.25 * dt * Lqq[a, b]
            skew = 0.5 * (Lvq[b, a] - Lvq[a, b])
            sym = 0.5 * (Lvq[b, a] + Lvq[a, b])
            fv = -damping[a] if a == b else 0.0
            j2 = lqq + skew - M[a, b] / dt + fv
            j1 = lqq - sym + M[a, b] / dt - fv
            if a == b and drive_law(drives, a, qm[a], v[a])[1]:
                # a drive inside its limit: F_q = -kp (dq/dq1 = dq/dq2 = 1/2), F_v = -kd
                half_kp = 0.5 * dt * drives[_D_KP, a]
                kd = drives[_D_KD, a]
                j2 -= half_kp + kd
                j1 += kd - half_kp
            p2 = lqq + sym + M[a, b] / dt
            p1 = lqq - 0.5 * Lvq[b, a] + 0.5 * Lvq[a, b] - M[a, b] / dt
            B[a, b] = -j1
            Zp[a, b] = p1
            if b < nd:
                A[a, b] = j2
                P2d[a, b] = p2
            else:
                B[a, K + b - nd] = -j2
                Zp[a, K + b - nd] = p2
        B[a, nq + a] = -1.0
    for j in range(nu):
        c = in_cfg[j]
        if 0 <= c < nd:
            B[c, nq + nd + j] = -dt
    if not kernel.solve_many_in_place(A, B):
        return False
    for a in range(nd):
        for b in range(nX):
            Zq[a, b] = B[a, b]
            acc = Zp[a, b]
            for c in range(nd):
                acc += P2d[a, c] * B[c, b]
            Zp[a, b] = acc
    return True


@njit(cache=True)
def call_step(I, F, W, dt, tol, t2, max_iterations):
    """:func:`step_packed` with the per-step scalars as arguments and the results returned
    ``(status, iterations, rnorm)``: writing three numbers into the packed arrays from
    Python and reading three back costs more than the kernel call itself on small systems."""
    W[DT] = dt
    W[TOL] = tol
    W[T2] = t2
    I[MAXIT] = max_iterations
    step_packed(I, F, W)
    return I[STATUS], I[ITERS], W[RNORM]


@njit(cache=True)
def recenter_packed(I, F, W, fixedR, reference, q_in, p_in):
    """:meth:`MidpointVI.recenter <ros_vi.integrators.midpointvi.MidpointVI.recenter>` on
    the packed arrays in one call (a call's arguments cost more than the work): the state as
    the previous step left it into ``q_in`` (nq,), ``p_in`` (nd,) (a step's derivatives are
    taken from it), then :func:`~ros_vi.mechanics.free.recenter_state` on the packed state,
    history, impulse and energy anchor, the Model's ``fixedR`` (nf, 3, 3) and the packed
    copy; ``reference`` (nfree,): the free joints' reference frames.  Returns whether a
    chart moved."""
    o = layout(I)
    nq, nd, nf, nfree = I[NQ], I[ND], I[NF], I[NFREE]
    q2 = W[o[W_Q2]:o[W_P2]]
    p2 = W[o[W_P2]:o[W_U1]]
    for i in range(nq):
        q_in[i] = q2[i]
    for i in range(nd):
        p_in[i] = p2[i]
    anchor = W[o[W_ANCHOR]:o[W_CHECK]]
    return recenter_state(I[o[I_FREE]:o[I_LIM]].reshape((nfree, 3)), reference, q2,
                          W[o[W_Q1]:o[W_P1]], W[o[W_HIST]:o[W_HIST_T]].reshape((HISTORY, nq)),
                          p2, W[o[W_P1]:o[W_Q2]], W[o[W_IMPULSE]:o[W_CHART]],
                          W[o[W_VA]:o[W_ANCHOR]], anchor[A_DT] == 0.0, fixedR,
                          F[o[F_FIXEDR]:o[F_FIXEDP]].reshape((nf, 3, 3)))


class FastStepper:
    """Packs a System for :func:`step_packed` or, with constraints,
    :func:`constrained_step.step_constrained_packed` (``for_system`` returns None when the
    system needs the general path)."""

    _ALLOWED_POTENTIALS = (Gravity, ConfigSpring)
    _ALLOWED_FORCES = (Damping, ConfigForce, JointDrives)

    @classmethod
    def for_system(cls, system, limits=None):
        """The stepper for ``system``, or None if it needs the general path; ``limits``
        ``(index (nl,), lower (nl,), upper (nl,))``: configs whose joint limits a step's
        root must not pass (it then reports ``LIMIT`` and changes nothing)."""
        if any(type(p) not in cls._ALLOWED_POTENTIALS for p in system.potentials):
            return None
        if any(type(f) not in cls._ALLOWED_FORCES for f in system.forces):
            return None
        if sum(type(f) is JointDrives for f in system.forces) > 1:
            return None             # the packed step has room for one drive table
        constraints = pack_constraints(system) if system.nc else None
        if system.nc and constraints is None:
            return None
        return cls(system, constraints, limits)

    def __init__(self, system, constraints=None, limits=None):
        self._system = system
        model = system.model
        nf, nq, nd, nu = model.nf, model.nq, system.nQd, system.nu
        self._springs = [p for p in system.potentials if type(p) is ConfigSpring]
        self._dampers = [f for f in system.forces if type(f) is Damping]
        self._drives = next((f for f in system.forces if type(f) is JointDrives), None)
        self._drive_version = None
        nsp = len(self._springs)
        sizes = np.zeros(HEADER, dtype=np.int64)
        sizes[:NT + 1] = (nf, nq, nd, nu, len(model.corder), len(model.mass_frames), nsp,
                          model.nt)
        charts = system.free_charts
        sizes[NFREE] = 0 if charts is None else len(charts)
        if limits is None:
            limits = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
        sizes[NLIM] = len(limits[0])
        o = layout(sizes)
        I = np.zeros(o[I_END], dtype=np.int64)
        I[:HEADER] = sizes
        I[o[I_PARENT]:o[I_KIND]] = model.parent
        I[o[I_KIND]:o[I_FCFG]] = model.kind
        I[o[I_FCFG]:o[I_FJOINT]] = model.fcfg
        I[o[I_FJOINT]:o[I_CFRAME]] = model.fjoint
        I[o[I_CFRAME]:o[I_CPARENT]] = model.cframe
        I[o[I_CPARENT]:o[I_CORDER]] = model.cparent
        I[o[I_CORDER]:o[I_MASS_FRAMES]] = model.corder
        I[o[I_MASS_FRAMES]:o[I_ANC]] = model.mass_frames
        I[o[I_ANC]:o[I_SP_IDX]] = model.anc.astype(np.int64).ravel()
        I[o[I_SP_IDX]:o[I_IN_CFG]] = [p.config.index for p in self._springs]
        in_cfg = np.full(nu, -1, dtype=np.int64)
        for f in system.forces:
            if type(f) is ConfigForce:
                in_cfg[f.finput.index] = f.config.index
        I[o[I_IN_CFG]:o[I_MIM_LEAD]] = in_cfg
        I[o[I_MIM_LEAD]:o[I_FREE]] = model.mimic_leader
        if charts is not None:
            I[o[I_FREE]:o[I_LIM]] = charts.rotation.ravel()
        I[o[I_LIM]:o[I_END]] = limits[0]
        self._I, self._o = I, o
        self._F = np.zeros(o[F_END])
        self._W = np.zeros(o[W_END])
        self._W[o[W_LIMIT]:o[W_END]] = np.concatenate(limits[1:])
        self._nd, self._nq, self._nu = nd, nq, nu
        self._version = -1
        W = self._W
        self.u_in = W[o[W_U_IN]:o[W_K_IN]]
        self.k_in = W[o[W_K_IN]:o[W_HIST]]
        self._hist = W[o[W_HIST]:o[W_HIST_T]].reshape(HISTORY, nq)
        self._hist_t = W[o[W_HIST_T]:o[W_Q2N]]
        self.qm = W[o[W_QM]:o[W_QM] + nq]  # midpoint configuration of the last step (nQ,)
        self.v = W[o[W_V]:o[W_V] + nq]     # midpoint velocity (q2 - q1)/dt of the last step
        self._anchor = W[o[W_ANCHOR]:o[W_CHECK]]
        self._drive_table = W[o[W_DRIVE]:o[W_IMPULSE]].reshape((NDRIVE, nd))
        # the last acceptance test (acceptance.C_* slots; the general path writes here too)
        self.check = W[o[W_CHECK]:o[W_DRIVE]]
        # the last accepted step's impulse of the applied and constraint forces (nd,)
        self.impulse = W[o[W_IMPULSE]:o[W_CHART]]
        self._constraints = constraints
        if constraints is None:
            self.lambda1 = np.zeros(0)
        else:
            self._CI, self._CF = constraints
            nc = self._CI.shape[0]
            c = constraint_layout(I, nc)
            self._CW = np.zeros(c[CW_END])
            self.lambda1 = self._CW[c[CW_LAM]:c[CW_LAMN]]
            self._h2 = self._CW[c[CW_H2]:c[CW_DH1]]

    @property
    def min_iterations(self):
        """Newton updates a step makes at least (the packed header's MINIT)."""
        return int(self._I[MINIT])

    @min_iterations.setter
    def min_iterations(self, value):
        self._I[MINIT] = int(value)

    @property
    def constrained(self):
        """True when the packed system has constraints (lambda1 is then a view (nc,) into
        the stepper's state; derivatives come from the general path)."""
        return self._constraints is not None

    @property
    def nd(self):
        """Number of dynamic configs."""
        return self._nd

    def packed_structure(self):
        """A copy of the packed structure ``I`` (ints: sizes, tree, index maps)."""
        return self._I.copy()

    def packed_constants(self):
        """A copy of the packed constants ``F`` (floats: masses, inertias, gravity,
        damping, springs) as the System has them now."""
        self._refresh_constants()
        return self._F.copy()

    def new_work(self):
        """An empty work array ``W`` of this layout (state, history, scratch), with the
        joint limits' bounds in place."""
        W = np.zeros_like(self._W)
        o = self._o
        W[o[W_LIMIT]:o[W_END]] = self._W[o[W_LIMIT]:o[W_END]]
        return W

    def damping(self):
        """The summed Damping coefficients of the dynamic configs, (nd,) [N m s/rad or
        N s/m], as the System has them now."""
        self._refresh_constants()
        o = self._o
        return self._F[o[F_DAMPING]:o[F_DAMPING] + self._nd].copy()

    def state_views(self):
        """Views (q1, p1, q2, p2, u1) into the packed state: the integrator keeps its state
        here so a step needs no copies in Python."""
        o, W = self._o, self._W
        return (W[o[W_Q1]:o[W_P1]], W[o[W_P1]:o[W_Q2]], W[o[W_Q2]:o[W_P2]], W[o[W_P2]:o[W_U1]],
                W[o[W_U1]:o[W_U_IN]])

    def _refresh_constants(self):
        """Copy the model constants and built-in parameters into F (cheap; every step,
        so that changed spring constants, damping or gravity take effect)."""
        self._version = self._system.parameter_version
        model, o, F = self._system.model, self._o, self._F
        nf = model.nf
        F[o[F_VALUE]:o[F_MASS]] = model.value
        F[o[F_MASS]:o[F_FIXEDR]] = model.mass
        F[o[F_FIXEDR]:o[F_FIXEDP]] = model.fixedR.reshape(9 * nf)
        F[o[F_FIXEDP]:o[F_IB]] = model.fixedp.reshape(3 * nf)
        F[o[F_IB]:o[F_GVEC]] = model.Ib.reshape(9 * nf)
        F[o[F_GVEC]:o[F_DAMPING]] = model.gravity
        d = F[o[F_DAMPING]:o[F_SP_K]]
        d[:] = 0.0
        for damper in self._dampers:
            d += damper.coefficient_vector()
        for j, spring in enumerate(self._springs):
            F[o[F_SP_K] + j] = spring.k
            F[o[F_SP_Q0] + j] = spring.q0
        F[o[F_MIM_MULT]:o[F_MIM_OFF]] = model.mimic_multiplier
        F[o[F_MIM_OFF]:o[F_END]] = model.mimic_offset
        if self._constraints is not None:
            refresh_constraint_parameters(self._system, self._CF)

    def _refresh_drives(self):
        """Copy the JointDrives table (gains, targets, limits) into W: once per change of
        the drives (typically once per simulation tick), never per Newton iteration."""
        self._drive_table[:] = self._drives.table
        self._drive_version = self._drives.version

    def reset_history(self, times=(), configs=(), keep_anchor=False):
        """Forget the predictor history, optionally seeding it with known (t, q) pairs
        (oldest first; at most HISTORY are kept).  The energy anchor of the acceptance
        test is forgotten too unless ``keep_anchor`` (the state it describes is still the
        current one)."""
        n = min(len(times), HISTORY)
        self._I[NHIST] = n
        forget_factors(self._I)
        if n:
            self._hist_t[HISTORY - n:] = times[len(times) - n:]
            self._hist[HISTORY - n:] = configs[len(configs) - n:]
        if not keep_anchor:
            self._anchor[A_VALID] = 0.0

    def history(self):
        """The predictor history as lists (times, configs), oldest first."""
        n = min(int(self._I[NHIST]), HISTORY)
        return (list(self._hist_t[HISTORY - n:]),
                [q.copy() for q in self._hist[HISTORY - n:]])

    def chart_views(self):
        """Views a change of the free joints' charts rewrites
        (:meth:`MidpointVI.recenter <ros_vi.integrators.midpointvi.MidpointVI.recenter>`):
        the packed reference rotations (nf, 3, 3), every history slot (HISTORY, nq) (the
        unused ones are rewritten too, harmlessly), the energy anchor's velocity (nd,) and
        the anchor (views: valid for the stepper's life)."""
        o, W, F = self._o, self._W, self._F
        nf = self._system.model.nf
        return (F[o[F_FIXEDR]:o[F_FIXEDP]].reshape((nf, 3, 3)), self._hist,
                W[o[W_VA]:o[W_ANCHOR]], W[o[W_ANCHOR]:o[W_CHECK]])

    def memory(self):
        """Copy of what a step remembers besides the state: (history, energy anchor)."""
        o, W = self._o, self._W
        return self.history(), W[o[W_VA]:o[W_CHECK]].copy()

    def restore_memory(self, memory):
        """Undo to a :meth:`memory` copy."""
        (times, configs), anchor = memory
        self.reset_history(times, configs)
        o = self._o
        self._W[o[W_VA]:o[W_CHECK]] = anchor

    def last_check(self):
        """The last acceptance test as a dict (:func:`check_summary`)."""
        return check_summary(self.check)

    def last_violation(self):
        """max |h_i(q2)| at the last Newton iterate of the last step (None without
        constraints)."""
        if self._constraints is None:
            return None
        return float(np.abs(self._h2).max(initial=0.0))

    def step(self, t1, t2, tolerance, max_iterations):
        """Step from time t1 to t2 with the inputs already in ``u_in``/``k_in``.

        Returns ``(status, iterations, rnorm)``.  On OK the state views hold the new state
        and the history has advanced; otherwise nothing changed.
        """
        if self._version != self._system.parameter_version:
            self._refresh_constants()
        if self._drives is not None and self._drives.version != self._drive_version:
            self._refresh_drives()
        if self._constraints is None:
            return call_step(self._I, self._F, self._W, t2 - t1, tolerance, t2,
                             max_iterations)
        return call_step_constrained(self._I, self._F, self._W, self._CI, self._CF, self._CW,
                                     t2 - t1, tolerance, t2, max_iterations)

    def packed_call(self):
        """The compiled step on this stepper's own packed arrays, for calling it directly:
        ``(kernel, args)`` with ``kernel(*args)`` one step, ``args = (I, F, W)`` or, with
        constraints, ``(I, F, W, CI, CF, CW)`` (the live arrays, not copies; the layout and
        the header fields are :mod:`ros_vi.integrators.packed`'s).  Before a call set the
        end time ``W[packed.T2]``; afterwards ``I[packed.STATUS]`` and ``I[packed.ITERS]``
        say how it went.  The step uses the constants, tolerance and iteration limit the
        last :meth:`step` left in the arrays, and moves the state without the integrator's
        bookkeeping: for measuring the kernel against :meth:`step` (what the Python call
        costs), not for simulating."""
        if self._constraints is None:
            return step_packed, (self._I, self._F, self._W)
        return step_constrained_packed, (self._I, self._F, self._W, self._CI, self._CF,
                                         self._CW)

    def derivatives(self, t1, t2):
        """dq2/dx and dp2/dx (nd, nX) for x = (q1, p1, u1, k2) at the current state, or
        None if the DEL Jacobian is singular or the system is constrained (the general
        path then gives them, with the multipliers' derivatives)."""
        if self._constraints is not None:
            return None
        if self._version != self._system.parameter_version:
            self._refresh_constants()
        if self._drives is not None and self._drives.version != self._drive_version:
            self._refresh_drives()
        nd, nq, nu = self._nd, self._nq, self._nu
        nX = 2 * nq + nu
        Zq = np.empty((nd, nX))
        Zp = np.empty((nd, nX))
        if not derivatives_packed(self._I, self._F, self._W, t1, t2, Zq, Zp):
            return None
        return Zq, Zp
