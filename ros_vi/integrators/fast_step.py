"""Compiled step for the common case: a frame tree with built-in terms only.

When a System's only potentials and forces are ``Gravity``, ``ConfigSpring``, ``Damping`` and
``ConfigForce`` (and at most one ``JointDrives``, the position/velocity drives) and its
constraints (if any) are built-in ones (``Distance``, ``PointToPoint*``, ``PointOnPlane``,
``Mimic``), a whole step runs in one numba call:
predictor, Newton iterations on the DEL with the exact Jacobian, p2 and the midpoint state
(:func:`step_packed`; with constraints :func:`constrained_step.step_constrained_packed`).
Both entry points run the same step body, :func:`newton_step` (predictor, DEL residual and
Jacobian, line search, acceptance rule, commit).  Every other system uses the general path
in :mod:`midpointvi`, which gives the same answer (tests compare the two).

Why packed arrays: numba checks the type of every argument on each call (about 0.2 us per
argument), so the model, parameters and per-step state travel in three flat arrays
(ints ``I``, constants ``F``, step state/work ``W``) whose layout is fixed by the sizes in
the header of ``I``.  The named indices below and :func:`_layout` define that layout (a
table in its docstring); nothing else does.

Globalized Newton and the acceptance rule (docs/integrator.md has the reasoning): the Newton
iteration backtracks along the Newton direction until the merit 1/2 |r|^2 of the residual
r (the DEL's, and with constraints h(q2) too) decreases enough (Armijo), and a converged
root is accepted only if it continues the trajectory:

(a) its increment q2 - q1 differs from that of the linearised step (the first Newton
    iterate from the predictor) by at most ``AGREE`` times the linearised step's length, or
    the length of that Newton correction if larger (max-norms over the dynamic configs,
    :func:`deviation_bound`), and
(b) when the energy of the previous step is known (and no kinematic config moves), the
    midpoint energy E = T + V changes by the discrete work of the applied and constraint
    forces to within ``ENERGY_SLACK`` of the energy that moved (:func:`energy_bound`).

A root that fails either test is reported as ``REJECTED`` and nothing changes; the caller
(:class:`MidpointVI`) then retries from the other predictor and subdivides the step.
"""
import numpy as np
from numba import njit

from ..mechanics import kernel
from ..mechanics.constraint_kernel import (CF_TOL, NCF, NCI, constraint_jacobian_into,
                                           constraint_values_into, pack_constraints,
                                           refresh_constraint_parameters)
from ..mechanics.forces.configforce import ConfigForce
from ..mechanics.forces.damping import Damping
from ..mechanics.forces.drives import (ACTIVE as _D_ACTIVE, FIELDS as _DRIVE_FIELDS,
                                       KD as _D_KD, KP as _D_KP, JointDrives, drive_law)
from ..mechanics.kernel import (first_order_into, forward_kinematics_into, joint_twists_into,
                                second_order_into)
from ..mechanics.potentials.configspring import ConfigSpring
from ..mechanics.potentials.gravity import Gravity

OK, NOT_CONVERGED, NOT_FINITE, SINGULAR, BAD_INPUT, REJECTED = 0, 1, 2, 3, 4, 5
HISTORY = 5          # stored past configurations for the order-4 predictor
ROUNDING = 64 * np.finfo(np.float64).eps   # residual floor relative to its terms' size
STALLED = 8 * np.finfo(np.float64).eps     # a Newton update this small (relative) changes
                                           # nothing: the iterate is converged to rounding
STALL_ACCEPT = np.sqrt(np.finfo(np.float64).eps)   # ... if the residual is this small
                                                   # relative to its terms' size
# Line search on the merit 1/2 |r|^2 along the Newton direction (whose slope there is -|r|^2):
ARMIJO = 1e-4        # sufficient decrease: merit(alpha) <= (1 - 2 ARMIJO alpha) merit(0)
BACKTRACK = (0.1, 0.5)   # a backtrack shrinks alpha by a factor within these bounds
MAX_BACKTRACKS = 40      # per Newton iteration (alpha >= 0.1**40 is never needed)
STAGNATION = 10          # every this many iterations the merit must have fallen below
STAGNATION_FACTOR = 0.25  # this fraction of its value that many iterations before, or the
                          # attempt stops (a local minimum of the merit: subdivide instead)
# Acceptance rule of a converged root (see the module docstring and docs/integrator.md):
AGREE = 0.5              # (a) deviation of the root from the linearised step allowed per
                         # length of that step
ENERGY_SLACK = 0.05      # (b) energy defect allowed per energy that moved in the step
_H = 16              # header length of I

# Header fields of I (indices into I): the sizes, then per-step inputs and results
_NF, _NQ, _ND, _NU, _NJ, _NM, _NSP, _NT, _MAXIT, _NHIST, _STATUS, _ITERS = range(12)

# Scalar slots at the start of W (indices into W): step length, tolerance, final residual
# norm, end time of the step
_DT, _TOL, _RNORM, _T2 = range(4)
_NSCALAR = 4

# Energy anchor (indices into the W_ANCHOR segment): the energy E = T + V, its kinetic and
# potential parts, the step length (0: a node, i.e. the state (q1, p1) itself) and end time
# of the last accepted step, and whether it can anchor the energy check (1.0) or not (0.0)
_A_E, _A_T, _A_V, _A_DT, _A_TIME, _A_VALID = range(6)
_NANCHOR = 6
# Outcome of the last acceptance test (indices into the W_CHECK segment): deviation from
# the predictor and its bound, energy defect and its bound, 1.0 if the energy was checked,
# the linearised step's increment (max-norm)
_C_DEVIATION, _C_DEV_BOUND, _C_DEFECT, _C_DEF_BOUND, _C_ENERGY, _C_FIRST = range(6)
_NCHECK = 6
_NDRIVE = len(_DRIVE_FIELDS)   # rows of the W_DRIVE segment (drives.FIELDS)

# Segments of the packed arrays (indices into the offsets ``o = _layout(I)``; the table in
# :func:`_layout` gives each one's length and contents)
(I_PARENT, I_KIND, I_FCFG, I_FJOINT, I_CFRAME, I_CPARENT, I_CORDER, I_MASS_FRAMES, I_ANC,
 I_SP_IDX, I_IN_CFG, I_MIM_LEAD, I_END,
 F_VALUE, F_MASS, F_FIXEDR, F_FIXEDP, F_IB, F_GVEC, F_DAMPING, F_SP_K, F_SP_Q0, F_MIM_MULT,
 F_MIM_OFF, F_END,
 W_Q1, W_P1, W_Q2, W_P2, W_U1, W_U_IN, W_K_IN, W_HIST, W_HIST_T, W_Q2N, W_P2N, W_QM, W_V,
 W_R, W_P, W_S, W_VSP, W_VP, W_IC, W_H, W_G, W_LQ, W_LV, W_M, W_LVQ, W_LQQ, W_SU, W_SW,
 W_SZ, W_SG, W_TMP, W_J, W_RES, W_FORCE, W_DLT, W_VEL, W_MD, W_ZERO,
 W_PRED, W_BASE, W_STEP, W_VA, W_ANCHOR, W_CHECK, W_DRIVE, W_END) = range(71)


@njit(cache=True)
def _layout(I):
    """Offsets into I, F and W from the sizes in I's header (shared by pack and step).

    Segment ``X`` of its array is ``A[o[X]:o[X'])`` with ``X'`` the next row below; the
    ``*_END`` entries are the arrays' lengths.

    ===  ===============  ============  ===================================================
    A    X                length        contents
    ===  ===============  ============  ===================================================
    I    (header)         _H            sizes _NF.._NT, then _MAXIT, _NHIST, _STATUS, _ITERS
    I    I_PARENT         nf            Model.parent
    I    I_KIND           nf            Model.kind
    I    I_FCFG           nf            Model.fcfg
    I    I_FJOINT         nf            Model.fjoint
    I    I_CFRAME         nt            Model.cframe
    I    I_CPARENT        nt            Model.cparent
    I    I_CORDER         nj            Model.corder
    I    I_MASS_FRAMES    nm            Model.mass_frames
    I    I_ANC            nt * nt       Model.anc (row-major)
    I    I_SP_IDX         nsp           config of each ConfigSpring
    I    I_IN_CFG         nu            config each input drives (ConfigForce), else -1
    I    I_MIM_LEAD       nt - nq       Model.mimic_leader
    I    I_END                          (length of I)
    F    F_VALUE          nf            Model.value
    F    F_MASS           nf            Model.mass
    F    F_FIXEDR         9 nf          Model.fixedR
    F    F_FIXEDP         3 nf          Model.fixedp
    F    F_IB             9 nf          Model.Ib
    F    F_GVEC           3             gravity
    F    F_DAMPING        nq            summed Damping coefficients
    F    F_SP_K           nsp           spring constants
    F    F_SP_Q0          nsp           spring neutral positions
    F    F_MIM_MULT       nt - nq       Model.mimic_multiplier
    F    F_MIM_OFF        nt - nq       Model.mimic_offset
    F    F_END                          (length of F)
    W    (scalars)        _NSCALAR      _DT, _TOL, _RNORM, _T2
    W    W_Q1             nq            integrator state: q1
    W    W_P1             nd            p1
    W    W_Q2             nq            q2 (a step starts from here)
    W    W_P2             nd            p2
    W    W_U1             nu            u1
    W    W_U_IN           nu            inputs of the next step: u
    W    W_K_IN           nq - nd       kinematic configs at its end
    W    W_HIST           HISTORY nq    past configurations, oldest first
    W    W_HIST_T         HISTORY       their times
    W    W_Q2N            nq            the step's result: new q2
    W    W_P2N            nd            new p2
    W    W_QM             nt            midpoint joint coordinates (configs first)
    W    W_V              nt            their rates (q2 - q1)/dt first
    W    W_R .. W_ZERO                  kernel scratch (a step allocates nothing):
         W_R              9 nf          R
         W_P              3 nf          P
         W_S              6 nt          S
         W_VSP            6 nt          V
         W_VP             6 nt          Vp
         W_IC             36 nt         Ic
         W_H              6 nt          h
         W_G              36            G
         W_LQ             nt            Lq (folded onto the configs: first nq)
         W_LV             nt            Lv
         W_M              nt * nt       M (folded: [:nq, :nq])
         W_LVQ            nt * nt       Lvq
         W_LQQ            nt * nt       Lqq
         W_SU             6 nt          u (second_order_into)
         W_SW             6 nt          w
         W_SZ             6 nt          z
         W_SG             6 nt          gk
         W_TMP            18            tmp
         W_J              nd * nd       Newton Jacobian
         W_RES            nd            residual, then Newton update
         W_FORCE          nd            generalized force
         W_DLT            nq            increment q2 - q1
         W_VEL            nd            predictor velocity
         W_MD             nd * nd       predictor mass matrix
         W_ZERO           nt            zero velocity
    W    W_PRED           nd            linearised step: increment of the first Newton
                                        iterate (acceptance test (a))
    W    W_BASE           nd            line search: the increment it starts from
    W    W_STEP           nd            line search: the Newton update
    W    W_VA             nd            energy anchor: velocity (midpoint or node)
    W    W_ANCHOR         _NANCHOR      energy anchor: _A_E .. _A_VALID
    W    W_CHECK          _NCHECK       last acceptance test: _C_DEVIATION .. _C_FIRST
    W    W_DRIVE          _NDRIVE nd    the drives (JointDrives.table, row-major: rows
                                        drives.FIELDS, columns the dynamic configs)
    W    W_END                          (length of W)
    ===  ===============  ============  ===================================================
    """
    nf, nq, nd, nu = I[_NF], I[_NQ], I[_ND], I[_NU]
    nj, nm, nsp, nt = I[_NJ], I[_NM], I[_NSP], I[_NT]
    o = np.empty(W_END + 1, dtype=np.int64)
    o[I_PARENT] = _H
    o[I_KIND] = o[I_PARENT] + nf
    o[I_FCFG] = o[I_KIND] + nf
    o[I_FJOINT] = o[I_FCFG] + nf
    o[I_CFRAME] = o[I_FJOINT] + nf
    o[I_CPARENT] = o[I_CFRAME] + nt
    o[I_CORDER] = o[I_CPARENT] + nt
    o[I_MASS_FRAMES] = o[I_CORDER] + nj
    o[I_ANC] = o[I_MASS_FRAMES] + nm
    o[I_SP_IDX] = o[I_ANC] + nt * nt
    o[I_IN_CFG] = o[I_SP_IDX] + nsp
    o[I_MIM_LEAD] = o[I_IN_CFG] + nu
    o[I_END] = o[I_MIM_LEAD] + nt - nq

    o[F_VALUE] = 0
    o[F_MASS] = o[F_VALUE] + nf
    o[F_FIXEDR] = o[F_MASS] + nf
    o[F_FIXEDP] = o[F_FIXEDR] + 9 * nf
    o[F_IB] = o[F_FIXEDP] + 3 * nf
    o[F_GVEC] = o[F_IB] + 9 * nf
    o[F_DAMPING] = o[F_GVEC] + 3
    o[F_SP_K] = o[F_DAMPING] + nq
    o[F_SP_Q0] = o[F_SP_K] + nsp
    o[F_MIM_MULT] = o[F_SP_Q0] + nsp
    o[F_MIM_OFF] = o[F_MIM_MULT] + nt - nq
    o[F_END] = o[F_MIM_OFF] + nt - nq

    o[W_Q1] = _NSCALAR
    o[W_P1] = o[W_Q1] + nq
    o[W_Q2] = o[W_P1] + nd
    o[W_P2] = o[W_Q2] + nq
    o[W_U1] = o[W_P2] + nd
    o[W_U_IN] = o[W_U1] + nu
    o[W_K_IN] = o[W_U_IN] + nu
    o[W_HIST] = o[W_K_IN] + nq - nd
    o[W_HIST_T] = o[W_HIST] + HISTORY * nq
    o[W_Q2N] = o[W_HIST_T] + HISTORY
    o[W_P2N] = o[W_Q2N] + nq
    o[W_QM] = o[W_P2N] + nd
    o[W_V] = o[W_QM] + nt
    o[W_R] = o[W_V] + nt
    o[W_P] = o[W_R] + 9 * nf
    o[W_S] = o[W_P] + 3 * nf
    o[W_VSP] = o[W_S] + 6 * nt
    o[W_VP] = o[W_VSP] + 6 * nt
    o[W_IC] = o[W_VP] + 6 * nt
    o[W_H] = o[W_IC] + 36 * nt
    o[W_G] = o[W_H] + 6 * nt
    o[W_LQ] = o[W_G] + 36
    o[W_LV] = o[W_LQ] + nt
    o[W_M] = o[W_LV] + nt
    o[W_LVQ] = o[W_M] + nt * nt
    o[W_LQQ] = o[W_LVQ] + nt * nt
    o[W_SU] = o[W_LQQ] + nt * nt
    o[W_SW] = o[W_SU] + 6 * nt
    o[W_SZ] = o[W_SW] + 6 * nt
    o[W_SG] = o[W_SZ] + 6 * nt
    o[W_TMP] = o[W_SG] + 6 * nt
    o[W_J] = o[W_TMP] + 18
    o[W_RES] = o[W_J] + nd * nd
    o[W_FORCE] = o[W_RES] + nd
    o[W_DLT] = o[W_FORCE] + nd
    o[W_VEL] = o[W_DLT] + nq
    o[W_MD] = o[W_VEL] + nd
    o[W_ZERO] = o[W_MD] + nd * nd
    o[W_PRED] = o[W_ZERO] + nt
    o[W_BASE] = o[W_PRED] + nd
    o[W_STEP] = o[W_BASE] + nd
    o[W_VA] = o[W_STEP] + nd
    o[W_ANCHOR] = o[W_VA] + nd
    o[W_CHECK] = o[W_ANCHOR] + _NANCHOR
    o[W_DRIVE] = o[W_CHECK] + _NCHECK
    o[W_END] = o[W_DRIVE] + _NDRIVE * nd
    return o


@njit(cache=True)
def _model_views(I, F, o):
    """The model arrays and built-in parameters as views into the packed I and F."""
    nf, nt = I[_NF], I[_NT]
    return (I[o[I_PARENT]:o[I_KIND]],                          # parent
            I[o[I_KIND]:o[I_FCFG]],                            # kind
            F[o[F_VALUE]:o[F_MASS]],                           # value
            I[o[I_FCFG]:o[I_FJOINT]],                          # fcfg
            F[o[F_FIXEDR]:o[F_FIXEDP]].reshape((nf, 3, 3)),    # fixedR
            F[o[F_FIXEDP]:o[F_IB]].reshape((nf, 3)),           # fixedp
            F[o[F_MASS]:o[F_FIXEDR]],                          # mass
            F[o[F_IB]:o[F_GVEC]].reshape((nf, 3, 3)),          # Ib
            I[o[I_MASS_FRAMES]:o[I_ANC]],                      # mass_frames
            I[o[I_FJOINT]:o[I_CFRAME]],                        # fjoint
            I[o[I_CFRAME]:o[I_CPARENT]],                       # cframe
            I[o[I_CPARENT]:o[I_CORDER]],                       # cparent
            I[o[I_CORDER]:o[I_MASS_FRAMES]],                   # corder
            I[o[I_ANC]:o[I_SP_IDX]].reshape((nt, nt)),         # anc
            F[o[F_GVEC]:o[F_DAMPING]],                         # gvec
            F[o[F_DAMPING]:o[F_SP_K]],                         # damping
            I[o[I_SP_IDX]:o[I_IN_CFG]],                        # sp_idx
            F[o[F_SP_K]:o[F_SP_Q0]],                           # sp_k
            F[o[F_SP_Q0]:o[F_MIM_MULT]],                       # sp_q0
            I[o[I_IN_CFG]:o[I_MIM_LEAD]],                      # in_cfg
            I[o[I_MIM_LEAD]:o[I_END]],                         # mimic_leader
            F[o[F_MIM_MULT]:o[F_MIM_OFF]],                     # mimic_multiplier
            F[o[F_MIM_OFF]:o[F_END]])                          # mimic_offset


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
    the root is accepted and writes the test's numbers into ``check`` (_C_* slots).

    Dynamic parts (nd,) of: ``q1``, the root's increment ``delta`` = q2 - q1, the
    linearised step's increment ``linearised`` (and ``correction``, the max-norm of the
    Newton update that made it from the predictor), the midpoint velocity ``v`` =
    delta / dt, the applied generalized ``force`` (the step's impulse is
    ``impulse_scale * force``, constraint impulses included), L's ``Lq`` at the midpoint;
    ``va`` and ``anchor`` (_A_* slots) the energy anchor, used when ``energy`` and
    anchor[_A_VALID]; ``T_m``, ``V_m`` the midpoint energies [J], ``residual`` the
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
    check[_C_DEVIATION] = deviation
    check[_C_DEV_BOUND] = deviation_bound(length, size)
    check[_C_FIRST] = length
    accepted = deviation <= check[_C_DEV_BOUND]
    check[_C_ENERGY] = 0.0
    check[_C_DEFECT] = 0.0
    check[_C_DEF_BOUND] = 0.0
    if energy and anchor[_A_VALID] == 1.0:
        work = 0.0
        unequal = 0.0
        speeds = 0.0
        for i in range(nd):
            work += impulse_scale * force[i] * 0.5 * (va[i] + v[i])
            unequal += Lq[i] * (va[i] - v[i])
            speeds += abs(va[i]) + abs(v[i])
        unequal *= 0.25 * (dt - anchor[_A_DT])
        E_m = T_m + V_m
        check[_C_ENERGY] = 1.0
        check[_C_DEFECT] = E_m - anchor[_A_E] - work - unequal
        check[_C_DEF_BOUND] = energy_bound(anchor[_A_T], T_m, anchor[_A_V], V_m,
                                           anchor[_A_E], E_m, work, residual * speeds)
        accepted = accepted and abs(check[_C_DEFECT]) <= check[_C_DEF_BOUND]
    return accepted


def check_summary(check):
    """An acceptance test's numbers (a _NCHECK array written by :func:`check_root`) as a
    dict: deviation / deviation_bound [rad or m] (test (a)), defect / defect_bound [J] and
    energy_checked (test (b)), linearised (max-norm of the linearised step's increment)."""
    c = check
    return {'deviation': float(c[_C_DEVIATION]), 'deviation_bound': float(c[_C_DEV_BOUND]),
            'defect': float(c[_C_DEFECT]), 'defect_bound': float(c[_C_DEF_BOUND]),
            'energy_checked': bool(c[_C_ENERGY]), 'linearised': float(c[_C_FIRST])}


def new_anchor(E=0.0, T=0.0, V=0.0, dt=0.0, time=0.0, valid=False):
    """An energy anchor array (_A_* slots) for :func:`check_root`."""
    a = np.zeros(_NANCHOR)
    a[_A_E], a[_A_T], a[_A_V], a[_A_DT], a[_A_TIME] = E, T, V, dt, time
    a[_A_VALID] = 1.0 if valid else 0.0
    return a


# ---------------------------------------------------------------------- the step
# The step's arrays travel as tuples of views built once per step (``model =
# _model_views(I, F, o)``, ``ks = kernel_scratch(I, W, o)``, ``st = step_views(I, W, o)``,
# ``gv = acceptance_views(W, o)``, ``con`` from :func:`no_constraints` or
# ``constrained_step.constraint_views``) and are unpacked once, in :func:`newton_step`.
# The predictor, residual, Jacobian and commit are sections of that one body, not
# functions: numba takes a reference to every array a function unpacks and releases it on
# return, which for helpers called in the Newton loop cost ~1.2 us per step (measured with
# a 1-link chain, against a step of 3.6 us).

@njit(cache=True, inline='always')
def kernel_scratch(I, W, o):
    """The kernel's output and scratch arrays in W: ``(R, P, S, V, Vp, Ic, h, G, Lq, Lv, M,
    Lvq, Lqq, su, sw, sz, sg, tmp)`` (shapes as in :func:`kernel.first_order_into` and
    :func:`kernel.second_order_into`, over the nt joint coordinates; Lq, Lv, M, Lvq, Lqq
    hold the configs' values in their leading nq entries once folded)."""
    nf, nt = I[_NF], I[_NT]
    return (W[o[W_R]:o[W_P]].reshape((nf, 3, 3)),
            W[o[W_P]:o[W_S]].reshape((nf, 3)),
            W[o[W_S]:o[W_VSP]].reshape((nt, 6)),
            W[o[W_VSP]:o[W_VP]].reshape((nt, 6)),
            W[o[W_VP]:o[W_IC]].reshape((nt, 6)),
            W[o[W_IC]:o[W_H]].reshape((nt, 6, 6)),
            W[o[W_H]:o[W_G]].reshape((nt, 6)),
            W[o[W_G]:o[W_LQ]].reshape((6, 6)),
            W[o[W_LQ]:o[W_LV]],
            W[o[W_LV]:o[W_M]],
            W[o[W_M]:o[W_LVQ]].reshape((nt, nt)),
            W[o[W_LVQ]:o[W_LQQ]].reshape((nt, nt)),
            W[o[W_LQQ]:o[W_SU]].reshape((nt, nt)),
            W[o[W_SU]:o[W_SW]].reshape((nt, 6)),
            W[o[W_SW]:o[W_SZ]].reshape((nt, 6)),
            W[o[W_SZ]:o[W_SG]].reshape((nt, 6)),
            W[o[W_SG]:o[W_TMP]].reshape((nt, 6)),
            W[o[W_TMP]:o[W_J]].reshape((3, 6)))


@njit(cache=True, inline='always')
def step_views(I, W, o):
    """The step's state and work arrays in W: ``(q1, p1, u1, k2, hist, hist_t, q2, p2, qm, v,
    J, r, force, dlt, vel, Md, zero, drives)``.  ``q1, p1`` are the integrator's current
    state (the step starts there), ``u1, k2`` the step's inputs, ``q2, p2`` its result; the
    midpoint ``qm, v`` and ``zero`` span the nt joint coordinates (configs first);
    ``drives`` (_NDRIVE, nd) the drive table (``drives.drive_law``)."""
    nq, nd = I[_NQ], I[_ND]
    return (W[o[W_Q2]:o[W_P2]],
            W[o[W_P2]:o[W_U1]],
            W[o[W_U_IN]:o[W_K_IN]],
            W[o[W_K_IN]:o[W_HIST]],
            W[o[W_HIST]:o[W_HIST_T]].reshape((HISTORY, nq)),
            W[o[W_HIST_T]:o[W_Q2N]],
            W[o[W_Q2N]:o[W_P2N]],
            W[o[W_P2N]:o[W_QM]],
            W[o[W_QM]:o[W_V]],
            W[o[W_V]:o[W_R]],
            W[o[W_J]:o[W_RES]].reshape((nd, nd)),
            W[o[W_RES]:o[W_FORCE]],
            W[o[W_FORCE]:o[W_DLT]],
            W[o[W_DLT]:o[W_VEL]],
            W[o[W_VEL]:o[W_MD]],
            W[o[W_MD]:o[W_ZERO]].reshape((nd, nd)),
            W[o[W_ZERO]:o[W_PRED]],
            W[o[W_DRIVE]:o[W_END]].reshape((_NDRIVE, nd)))


@njit(cache=True, inline='always')
def acceptance_views(W, o):
    """The globalization's arrays in W: ``(pred, base, newton, va, anchor, check)``, the
    segments W_PRED .. W_CHECK of :func:`_layout`."""
    return (W[o[W_PRED]:o[W_BASE]],
            W[o[W_BASE]:o[W_STEP]],
            W[o[W_STEP]:o[W_VA]],
            W[o[W_VA]:o[W_ANCHOR]],
            W[o[W_ANCHOR]:o[W_CHECK]],
            W[o[W_CHECK]:o[W_DRIVE]])


@njit(cache=True, inline='always')
def no_constraints(model, ks, st, W):
    """The constraint views of :func:`newton_step` for a system without constraints: an
    empty lambda1 (so nc = 0 and no constraint array is ever read), stand-ins of the
    constrained step's types for the other constraint arrays (existing views: a step
    creates no new ones), and as Newton matrix and right-hand side the DEL's own J and r
    (``st``'s), which the step then solves in place."""
    e = W[0:0]
    M, R, P, S = ks[10], ks[0], ks[1], ks[2]
    return (model[13], model[5], e, e, e, e, e, M, M, e, e, R, P, S, st[10], st[11])


@njit(cache=True, inline='always')
def inputs_finite(u1, k2):
    """True when the step's inputs u1 (nu,) and kinematic configs k2 (nQk,) are finite."""
    for j in range(u1.shape[0]):
        if not np.isfinite(u1[j]):
            return False
    for j in range(k2.shape[0]):
        if not np.isfinite(k2[j]):
            return False
    return True


@njit(cache=True, inline='always')
def usable_history(I, q1, hist, hist_t, dt, t2):
    """Number of trailing history configurations (``hist (HISTORY, nq)`` at ``hist_t``)
    spaced dt apart that end at (t1 = t2 - dt, q1); seeds the history with (t1, q1) when
    none is usable."""
    t1 = t2 - dt
    eps = 1e-12 * max(1.0, abs(t2))
    nhist = min(I[_NHIST], HISTORY)
    if nhist > 0 and abs(hist_t[HISTORY - 1] - t1) > eps:
        nhist = 0
    if nhist == 0:
        hist_t[HISTORY - 1] = t1
        for i in range(q1.shape[0]):
            hist[HISTORY - 1, i] = q1[i]
        nhist = 1
    usable = 1
    for j in range(1, nhist):
        if abs(hist_t[HISTORY - j] - hist_t[HISTORY - 1 - j] - dt) > eps:
            break
        usable += 1
    return usable


@njit(cache=True, inline='always')
def spring_energy(sp_idx, sp_k, sp_q0, q):
    """Potential energy [J] of the ConfigSprings (configs ``sp_idx``, constants ``sp_k``,
    neutral positions ``sp_q0``) at configs ``q``."""
    V = 0.0
    for j in range(sp_idx.shape[0]):
        V += 0.5 * sp_k[j] * (q[sp_idx[j]] - sp_q0[j]) ** 2
    return V


@njit(cache=True, inline='always')
def newton_step(I, W, o, model, ks, st, gv, con):
    """One VI step from the packed state (the body of both entry points): globalized Newton
    on ``(q2_d, lambda1)`` for::

        r = p1 + dt/2 L_q - L_v + dt F - Dh(q1)_d^T lambda1 = 0     (nd,)
        h(q2) = 0                                                  (nc,)

    with the Newton matrix ``[[J, -Dh(q1)_d^T], [Dh(q2)_d, 0]]`` (J the DEL Jacobian; nc = 0
    without constraints: then just J), a backtracking line search on 1/2 (|r|^2 + |h|^2),
    and the acceptance rule of a converged root (module docstring); then
    ``p2 = p1 + dt (L_q + F) - Dh(q1)_d^T lambda1``.  It stops under the general path's rule
    (:mod:`ros_vi.integrators.midpointvi`): the DEL residual's 2-norm is at most the
    tolerance or the rounding floor of its terms, and every ``|h_i(q2)|`` is at most its
    constraint's tolerance.  ``con``: :func:`no_constraints` or
    ``constrained_step.constraint_views``.

    Results in W (q2, p2, qm, v), ``con``'s lambda1 and I's header (status, iterations; W
    holds the DEL residual's norm).  Status ``OK``: the state advanced; ``REJECTED``: a root
    was found but failed the acceptance rule; ``NOT_CONVERGED``, ``NOT_FINITE``,
    ``SINGULAR``, ``BAD_INPUT``: no root.  Only OK changes the state (and the history,
    lambda1 and the energy anchor).
    """
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = model
    (R, P, S, V, Vp, Ic, h, G, Lq, Lv, M, Lvq, Lqq, su, sw, sz, sg, tmp) = ks
    # the step starts from the integrator's current state (q1, p1 here) and writes q2, p2
    (q1, p1, u1, k2, hist, hist_t, q2, p2, qm, v, J, r, force, dlt, vel, Md, zero,
     drives) = st
    (pred, base, newton, va, anchor, check) = gv
    (CI, CF, lam, lamn, lbase, lstep, h2, Dh1, Dh2, th, dth, R2, P2, S2, K, rhs) = con
    nq, nd, nu, nc = q1.shape[0], p1.shape[0], u1.shape[0], lam.shape[0]
    max_iter = I[_MAXIT]
    dt, tol, t2 = W[_DT], W[_TOL], W[_T2]
    t1 = t2 - dt
    if not inputs_finite(u1, k2):
        I[_STATUS] = BAD_INPUT
        I[_ITERS] = 0
        return
    # a moving kinematic config does work the step does not compute: no energy test then
    kin_moving = False
    for i in range(nd, nq):
        q2[i] = k2[i - nd]
        if q2[i] != q1[i]:
            kin_moving = True
    nhist = usable_history(I, q1, hist, hist_t, dt, t2)

    # Predictor: extrapolate the equally spaced past configurations (binomial weights); with
    # less history, a momentum step q1 + dt M(q1)^-1 p1, which also gives the energy of the
    # start node at no extra cost.  That anchors the energy test only without constraints,
    # as in the general path (which has no momentum predictor with constraints), so that
    # the two paths accept the same roots.
    for i in range(nd):
        q2[i] = q1[i]
    order = min(nhist - 1, HISTORY - 1)
    if order >= 2:
        for i in range(nd):
            acc = 0.0
            binom = 1.0
            for j in range(order + 1):
                # weight (-1)^j C(order+1, j+1) on the j-th most recent configuration
                binom = binom * (order + 1 - j) / (j + 1)
                w = binom if j % 2 == 0 else -binom
                acc += w * hist[HISTORY - 1 - j, i]
            q2[i] = acc
    elif nd > 0:
        for i in range(zero.shape[0]):
            zero[i] = 0.0
        kernel.expand_into(q1, zero[:nq], mim_lead, mim_mult, mim_off, qm, zero)
        _, V_node = first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib,
                                     mass_frames, fjoint, cframe, cparent, corder, gvec, qm,
                                     zero, R, P, S, V, Vp, Ic, h, G, Lq, Lv)
        second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, su, sw, sz, sg, tmp)
        kernel.fold_matrix(M, nq, mim_lead, mim_mult)
        ok = True
        for i in range(nd):
            vel[i] = p1[i]
            if not M[i, i] > 0.0:
                ok = False
            for j in range(nd):
                Md[i, j] = M[i, j]
        if ok and kernel.solve_in_place(Md, vel):
            T_node = 0.0
            for i in range(nd):
                q2[i] = q1[i] + dt * vel[i]
                T_node += 0.5 * p1[i] * vel[i]
            if nc == 0:
                for i in range(nd):
                    va[i] = vel[i]
                V_node += spring_energy(sp_idx, sp_k, sp_q0, q1)
                anchor[_A_T] = T_node
                anchor[_A_V] = V_node
                anchor[_A_E] = T_node + V_node
                anchor[_A_DT] = 0.0
                anchor[_A_TIME] = t1
                anchor[_A_VALID] = 1.0
    energy = abs(anchor[_A_TIME] - t1) <= 1e-12 * max(1.0, abs(t2)) and not kin_moving
    # Newton works on the increment dlt = q2 - q1: the velocity dlt/dt then carries no
    # cancellation error even when q is large (a free joint that has turned many times).
    for i in range(nq):
        dlt[i] = q2[i] - q1[i]
    for i in range(nd):
        pred[i] = dlt[i]      # the linearised step once Newton has made its first update
    if nc > 0:
        # Dh(q1): fixed during the step (the constraint force acts through the start's
        # configuration, as in the general path)
        kernel.expand_into(q1, q1, mim_lead, mim_mult, mim_off, th, dth)
        forward_kinematics_into(parent, kind, value, fcfg, fixedR, fixedp, th, R2, P2)
        joint_twists_into(kind, cframe, corder, R2, P2, S2)
        constraint_jacobian_into(CI, CF, fjoint, cparent, mim_lead, mim_mult, R2, P2, S2, th,
                                 Dh1)
        for k in range(nc):
            lamn[k] = lam[k]
    it = 0
    status = NOT_CONVERGED
    rnorm = np.inf               # 2-norm of the DEL residual at the current iterate
    merit = np.inf               # 1/2 (|r|^2 + |h|^2) there
    merit_ref = np.inf           # ... STAGNATION iterations before
    correction = 0.0             # max-norm of the first Newton update
    base_rnorm = np.inf
    base_scale = 0.0
    base_satisfied = False
    stalled = False
    trial = False                # evaluating a line-search point after a Newton update
    alpha = 1.0
    backtracks = 0
    while True:
        # Residual: the DEL's r at the midpoint (qm, v) of the iterate, which leaves the
        # kernel's terms (L_q with the springs, folded onto the configs), the force and
        # the midpoint energies in place; then the constraints' h(q2)
        for i in range(nq):
            qm[i] = q1[i] + 0.5 * dlt[i]
            v[i] = dlt[i] / dt
        kernel.expand_into(qm[:nq], v[:nq], mim_lead, mim_mult, mim_off, qm, v)
        T_m, V_m = first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib,
                                    mass_frames, fjoint, cframe, cparent, corder, gvec, qm,
                                    v, R, P, S, V, Vp, Ic, h, G, Lq, Lv)
        kernel.fold_vector(Lq, nq, mim_lead, mim_mult)
        kernel.fold_vector(Lv, nq, mim_lead, mim_mult)
        for j in range(sp_idx.shape[0]):
            Lq[sp_idx[j]] -= sp_k[j] * (qm[sp_idx[j]] - sp_q0[j])
        acc = 0.0
        scale = 0.0              # size of the residual's terms: the root's rounding floor
        for i in range(nd):
            f = -damping[i] * v[i]
            for j in range(nu):
                if in_cfg[j] == i:
                    f += u1[j]
            if drives[_D_ACTIVE, i] != 0.0:
                f += drive_law(drives, i, qm[i], v[i])[0]
            force[i] = f
            ri = p1[i] + 0.5 * dt * Lq[i] - Lv[i] + dt * f
            mag = abs(p1[i]) + abs(0.5 * dt * Lq[i]) + abs(Lv[i]) + abs(dt * f)
            for k in range(nc):
                ri -= Dh1[k, i] * lamn[k]
            r[i] = ri
            acc += ri * ri
            scale += mag * mag
        rnorm = np.sqrt(acc)
        scale = np.sqrt(scale)
        satisfied = True
        if nc > 0:
            # the kinematics at q2 (R2, P2) stay for Dh(q2)
            for i in range(nq):
                q2[i] = q1[i] + dlt[i]
            kernel.expand_into(q2, q2, mim_lead, mim_mult, mim_off, th, dth)
            forward_kinematics_into(parent, kind, value, fcfg, fixedR, fixedp, th, R2, P2)
            constraint_values_into(CI, CF, R2, P2, th, h2)
            for k in range(nc):
                acc += h2[k] * h2[k]
                if not abs(h2[k]) <= CF[k, CF_TOL]:
                    satisfied = False
        if trial and not stalled and not 0.5 * acc <= (1.0 - 2.0 * ARMIJO * alpha) * merit:
            # not enough decrease of the merit (or not finite): backtrack along the update
            backtracks += 1
            if backtracks > MAX_BACKTRACKS:
                if base_satisfied and base_rnorm <= STALL_ACCEPT * base_scale:
                    # the merit cannot decrease below rounding: the last iterate is a root
                    for i in range(nd):
                        dlt[i] = base[i]
                    for k in range(nc):
                        lamn[k] = lbase[k]
                    trial = False
                    stalled = True
                    continue
                status = NOT_CONVERGED if np.isfinite(acc) else NOT_FINITE
                rnorm = base_rnorm
                break
            shrink = BACKTRACK[0]
            if np.isfinite(acc):
                # minimiser of the quadratic through merit(0), its slope -2 merit(0) and
                # merit(alpha), kept within the safeguards
                shrink = alpha * merit / (0.5 * acc - merit + 2.0 * alpha * merit)
                shrink = min(max(shrink, BACKTRACK[0]), BACKTRACK[1])
            alpha *= shrink
            for i in range(nd):
                dlt[i] = base[i] - alpha * newton[i]
            for k in range(nc):
                lamn[k] = lbase[k] - alpha * lstep[k]
            continue
        trial = False
        if not np.isfinite(acc):
            status = NOT_FINITE
            break
        merit = 0.5 * acc
        # converged: within tolerance, or within rounding of the residual's own terms
        if satisfied and (rnorm <= max(tol, ROUNDING * scale)
                          or (stalled and rnorm <= STALL_ACCEPT * scale)):
            V_m += spring_energy(sp_idx, sp_k, sp_q0, qm)
            impulse = force
            impulse_scale = dt
            if nc > 0:
                # the step's impulse includes the constraints' (r is not needed any more)
                for i in range(nd):
                    acc = dt * force[i]
                    for k in range(nc):
                        acc -= Dh1[k, i] * lamn[k]
                    r[i] = acc
                impulse = r
                impulse_scale = 1.0
            if not check_root(q1, dlt, pred, correction, v, impulse, impulse_scale, Lq, va,
                              anchor, energy, T_m, V_m, dt, max(tol, np.sqrt(2.0 * merit)),
                              check):
                status = REJECTED
                break
            status = OK
            # p2 = D2Ld at the root, written as p1 + D1Ld + D2Ld + f- - Dh1^T lambda1 so the
            # momentum does not inherit the solver residual: momenta of cyclic configs are
            # then conserved to rounding
            for i in range(nd):
                acc = p1[i] + dt * (Lq[i] + force[i])
                for k in range(nc):
                    acc -= Dh1[k, i] * lamn[k]
                p2[i] = acc
            for k in range(nc):
                lam[k] = lamn[k]
            # Commit: q2 = q1 + increment; append (t2, q2) to the history; this step's
            # midpoint anchors the next step's energy test; (q1, p1) <- (q2, p2) <- new,
            # u1 <- the step's input
            for i in range(nq):
                q2[i] = q1[i] + dlt[i]
            for j in range(HISTORY - 1):
                hist_t[j] = hist_t[j + 1]
                for i in range(nq):
                    hist[j, i] = hist[j + 1, i]
            hist_t[HISTORY - 1] = t2
            for i in range(nq):
                hist[HISTORY - 1, i] = q2[i]
            I[_NHIST] = min(nhist + 1, HISTORY)
            anchor[_A_E] = T_m + V_m
            anchor[_A_T] = T_m
            anchor[_A_V] = V_m
            anchor[_A_DT] = dt
            anchor[_A_TIME] = t2
            anchor[_A_VALID] = 0.0 if kin_moving else 1.0
            for i in range(nd):
                va[i] = v[i]
            for i in range(nq):
                W[o[W_Q1] + i] = q1[i]
                q1[i] = q2[i]
            for i in range(nd):
                W[o[W_P1] + i] = p1[i]
                p1[i] = p2[i]
            for j in range(nu):
                W[o[W_U1] + j] = u1[j]
            break
        if it >= max_iter:
            break
        if it % STAGNATION == 0:
            if it > 0 and merit > STAGNATION_FACTOR * merit_ref and not (
                    rnorm <= STALL_ACCEPT * scale):
                break
            merit_ref = merit
        # Jacobian: the DEL's J = d r / d q2_d at the midpoint state left in place, and with
        # constraints the KKT matrix around it
        second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, su, sw, sz, sg, tmp)
        kernel.fold_matrix(M, nq, mim_lead, mim_mult)
        kernel.fold_matrix(Lvq, nq, mim_lead, mim_mult)
        kernel.fold_matrix(Lqq, nq, mim_lead, mim_mult)
        for j in range(sp_idx.shape[0]):
            Lqq[sp_idx[j], sp_idx[j]] -= sp_k[j]
        singular = False
        for a in range(nd):
            for b in range(nd):
                J[a, b] = 0.25 * dt * Lqq[a, b] + 0.5 * (Lvq[b, a] - Lvq[a, b]) - M[a, b] / dt
            J[a, a] -= damping[a]
            if drives[_D_ACTIVE, a] != 0.0 and drive_law(drives, a, qm[a], v[a])[1]:
                # d(dt F)/dq2 of a drive inside its limit (at the midpoint: dq/dq2 = 1/2,
                # dv/dq2 = 1/dt); a saturated one adds nothing
                J[a, a] -= 0.5 * dt * drives[_D_KP, a] + drives[_D_KD, a]
            if M[a, a] == 0.0:
                singular = True         # a dynamic config that moves no mass
        if singular:
            status = SINGULAR
            break
        if nc > 0:
            joint_twists_into(kind, cframe, corder, R2, P2, S2)
            constraint_jacobian_into(CI, CF, fjoint, cparent, mim_lead, mim_mult, R2, P2, S2,
                                     th, Dh2)
            for a in range(nd):
                for b in range(nd):
                    K[a, b] = J[a, b]
                for k in range(nc):
                    K[a, nd + k] = -Dh1[k, a]
                rhs[a] = r[a]
            for k in range(nc):
                for b in range(nd):
                    K[nd + k, b] = Dh2[k, b]
                for m in range(nc):
                    K[nd + k, nd + m] = 0.0
                rhs[nd + k] = h2[k]
        # (without constraints K and rhs are J and r themselves)
        if not kernel.solve_in_place(K, rhs):
            status = SINGULAR
            break
        big_step = 0.0
        big_x = 0.0
        for i in range(nd):
            big_step = max(big_step, abs(rhs[i]))
            big_x = max(big_x, abs(dlt[i]))
            base[i] = dlt[i]
            newton[i] = rhs[i]
            dlt[i] -= rhs[i]
        for k in range(nc):
            lbase[k] = lamn[k]
            lstep[k] = rhs[nd + k]
            lamn[k] -= rhs[nd + k]
        if it == 0:
            correction = big_step
            for i in range(nd):
                pred[i] = dlt[i]
        stalled = big_step <= STALLED * big_x
        base_rnorm = rnorm
        base_scale = scale
        base_satisfied = satisfied
        trial = True
        alpha = 1.0
        backtracks = 0
        it += 1
    W[_RNORM] = rnorm
    I[_STATUS] = status
    I[_ITERS] = it


@njit(cache=True)
def step_packed(I, F, W):
    """One VI step of a system without constraints from the packed state
    (:func:`newton_step`); results in W (q2, p2, qm, v) and I's header."""
    o = _layout(I)
    model = _model_views(I, F, o)
    ks = kernel_scratch(I, W, o)
    st = step_views(I, W, o)
    newton_step(I, W, o, model, ks, st, acceptance_views(W, o), no_constraints(model, ks, st, W))


@njit(cache=True)
def derivatives_packed(I, F, W, t1, t2, Zq, Zp):
    """First derivatives of (q2_d, p2) w.r.t. x = (q1, p1, u1, k2) at the integrator's
    current step (q1, q2 from the state in W), written into ``Zq``, ``Zp`` (nd, nX).

    Same formulas as the general path (``MidpointVI._calc_deriv1``): with J2, J1 the
    partials of D1Ld + f- and P2, P1 those of D2Ld w.r.t. q2 and q1 at the midpoint,
    ``dq2 = -J2_dd^-1 [J1, I, Fu, J2_dk]`` and ``dp2 = P2_dd dq2 + [P1, 0, 0, P2_dk]``.
    Returns False if J2_dd is singular.
    """
    o = _layout(I)
    nq, nd, nu = I[_NQ], I[_ND], I[_NU]
    nk = nq - nd
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = _model_views(I, F, o)
    q1 = W[o[W_Q1]:o[W_P1]]
    q2 = W[o[W_Q2]:o[W_P2]]
    drives = W[o[W_DRIVE]:o[W_END]].reshape((_NDRIVE, nd))
    dt = t2 - t1
    nt = I[_NT]
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
    W[_DT] = dt
    W[_TOL] = tol
    W[_T2] = t2
    I[_MAXIT] = max_iterations
    step_packed(I, F, W)
    return I[_STATUS], I[_ITERS], W[_RNORM]


class FastStepper:
    """Packs a System for :func:`step_packed` or, with constraints,
    :func:`constrained_step.step_constrained_packed` (``for_system`` returns None when the
    system needs the general path)."""

    _ALLOWED_POTENTIALS = (Gravity, ConfigSpring)
    _ALLOWED_FORCES = (Damping, ConfigForce, JointDrives)

    @classmethod
    def for_system(cls, system):
        if any(type(p) not in cls._ALLOWED_POTENTIALS for p in system.potentials):
            return None
        if any(type(f) not in cls._ALLOWED_FORCES for f in system.forces):
            return None
        if sum(type(f) is JointDrives for f in system.forces) > 1:
            return None             # the packed step has room for one drive table
        constraints = pack_constraints(system) if system.nc else None
        if system.nc and constraints is None:
            return None
        return cls(system, constraints)

    def __init__(self, system, constraints=None):
        self._system = system
        model = system.model
        nf, nq, nd, nu = model.nf, model.nq, system.nQd, system.nu
        self._springs = [p for p in system.potentials if type(p) is ConfigSpring]
        self._dampers = [f for f in system.forces if type(f) is Damping]
        self._drives = next((f for f in system.forces if type(f) is JointDrives), None)
        self._drive_version = None
        nsp = len(self._springs)
        sizes = np.zeros(_H, dtype=np.int64)
        sizes[:_NT + 1] = (nf, nq, nd, nu, len(model.corder), len(model.mass_frames), nsp,
                           model.nt)
        o = _layout(sizes)
        I = np.zeros(o[I_END], dtype=np.int64)
        I[:_H] = sizes
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
        I[o[I_MIM_LEAD]:o[I_END]] = model.mimic_leader
        self._I, self._o = I, o
        self._F = np.zeros(o[F_END])
        self._W = np.zeros(o[W_END])
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
        self._drive_table = W[o[W_DRIVE]:o[W_END]].reshape((_NDRIVE, nd))
        # the last acceptance test (_C_* slots; the general path writes here too)
        self.check = W[o[W_CHECK]:o[W_DRIVE]]
        self._constraints = constraints
        if constraints is None:
            self.lambda1 = np.zeros(0)
        else:
            # imported here: constrained_step builds on this module's layout
            from . import constrained_step
            self._step_constrained = constrained_step.step_constrained_packed
            self._call_constrained = constrained_step.call_step_constrained
            self._CI, self._CF = constraints
            nc = self._CI.shape[0]
            c = constrained_step.con_layout(I, nc)
            self._CW = np.zeros(c[constrained_step.C_END])
            self.lambda1 = self._CW[c[constrained_step.C_LAM]:c[constrained_step.C_LAMN]]
            self._h2 = self._CW[c[constrained_step.C_H2]:c[constrained_step.C_DH1]]

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
        """An empty work array ``W`` of this layout (state, history, scratch)."""
        return np.zeros_like(self._W)

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
        self._I[_NHIST] = n
        if n:
            self._hist_t[HISTORY - n:] = times[len(times) - n:]
            self._hist[HISTORY - n:] = configs[len(configs) - n:]
        if not keep_anchor:
            self._anchor[_A_VALID] = 0.0

    def history(self):
        """The predictor history as lists (times, configs), oldest first."""
        n = min(int(self._I[_NHIST]), HISTORY)
        return (list(self._hist_t[HISTORY - n:]),
                [q.copy() for q in self._hist[HISTORY - n:]])

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
        return self._call_constrained(self._I, self._F, self._W, self._CI, self._CF, self._CW,
                                      t2 - t1, tolerance, t2, max_iterations)

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
