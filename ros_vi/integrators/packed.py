"""The packed arrays of the compiled step: their layout, with named fields, and their views.

numba checks the type of every argument on each call (about 0.2 us per argument), so the
compiled step (:mod:`ros_vi.integrators.fast_step`, :mod:`ros_vi.integrators.constrained_step`),
the batch loop (:mod:`ros_vi.batch.loop`) and the node state
(:mod:`ros_vi.integrators.node_state`) take a model, its parameters and the step's state in
three flat arrays: ints ``I`` (sizes, tree, index maps), constants ``F`` (masses, inertias,
gravity, damping, springs) and the step state and work array ``W``; with constraints, the
packed constraints ``CI, CF`` (:func:`ros_vi.mechanics.constraint_kernel.pack_constraints`)
and their work array ``CW``.  This module defines their layout, once:

* the header fields of ``I`` (``NF`` .. ``ITERS``: sizes, then the per-step inputs and
  results) and the ``STATUS`` values a step reports (``OK`` .. ``REJECTED``);
* the scalar slots at the start of ``W`` (``DT``, ``TOL``, ``RNORM``, ``T2``);
* the segments ``I_*``, ``F_*``, ``W_*`` whose offsets :func:`layout` computes from the
  sizes in the header (a table in its docstring), and ``CW_*`` of :func:`constraint_layout`;
* the views a step works on, built from those offsets: :func:`model_views`,
  :func:`kernel_scratch`, :func:`step_views`, :func:`acceptance_views`,
  :func:`constraint_views` and :func:`no_constraints`.

The energy anchor and the acceptance test's numbers sit in ``W`` too (segments
``W_ANCHOR``, ``W_CHECK``); their slots are :mod:`ros_vi.integrators.acceptance`'s.
"""
import numpy as np
from numba import njit

from ..mechanics.forces.drives import FIELDS as DRIVE_FIELDS
from .acceptance import NANCHOR, NCHECK

# Outcome of a step (the STATUS header field): the state advanced; no root within the
# iterations; the residual became non-finite; singular Newton matrix; non-finite inputs; a
# root was found but failed the acceptance rule; a root was found beyond a joint limit (the
# general path then takes the step, holding configs at their bounds)
OK, NOT_CONVERGED, NOT_FINITE, SINGULAR, BAD_INPUT, REJECTED, LIMIT = 0, 1, 2, 3, 4, 5, 6
HISTORY = 6          # stored past configurations for the order-5 predictor
HEADER = 18          # header length of I

# Header fields of I (indices into I): the sizes, then per-step inputs and results, then the
# Newton updates a step takes at least (MidpointVI's min_iterations), the number of free
# joints, whether W_J holds the tree factors of an earlier step's Newton matrix (taken at
# the step length in the FACTOR_DT slot of W; step_body.newton_step reuses them), and the
# back-off of those reuses: steps left before the next, and the current back-off length;
# the number of configs with joint limits
(NF, NQ, ND, NU, NJ, NM, NSP, NT, MAXIT, NHIST, STATUS, ITERS, MINIT, NFREE,
 FACTORS, REUSE_WAIT, REUSE_BACKOFF, NLIM) = range(18)

# Scalar slots at the start of W (indices into W): step length, tolerance, final residual
# norm, end time of the step, step length of the factors in W_J (header field FACTORS)
DT, TOL, RNORM, T2, FACTOR_DT = range(5)
NSCALAR = 5
NDRIVE = len(DRIVE_FIELDS)   # rows of the W_DRIVE segment (drives.FIELDS)
CHART_CACHE = 58             # per free joint in W_CHART: increment (3), dt, dA, dB (27 each)

# Segments of the packed arrays (indices into the offsets ``o = layout(I)``; the table in
# :func:`layout` gives each one's length and contents)
(I_PARENT, I_KIND, I_FCFG, I_FJOINT, I_CFRAME, I_CPARENT, I_CORDER, I_MASS_FRAMES, I_ANC,
 I_SP_IDX, I_IN_CFG, I_MIM_LEAD, I_FREE, I_LIM, I_END,
 F_VALUE, F_MASS, F_FIXEDR, F_FIXEDP, F_IB, F_GVEC, F_DAMPING, F_SP_K, F_SP_Q0, F_MIM_MULT,
 F_MIM_OFF, F_END,
 W_Q1, W_P1, W_Q2, W_P2, W_U1, W_U_IN, W_K_IN, W_HIST, W_HIST_T, W_Q2N, W_P2N, W_QM, W_V,
 W_R, W_P, W_S, W_VSP, W_VP, W_IC, W_H, W_G, W_LQ, W_LV, W_M, W_LVQ, W_LQQ, W_SU, W_SW,
 W_SZ, W_SG, W_TMP, W_J, W_RES, W_FORCE, W_DLT, W_VEL, W_MD, W_ZERO,
 W_PRED, W_BASE, W_STEP, W_VA, W_ANCHOR, W_CHECK, W_DRIVE, W_IMPULSE, W_CHART, W_LIMIT,
 W_END) = range(76)


@njit(cache=True)
def forget_factors(I):
    """A restarted trajectory (a new start, a recovery) does not inherit the Newton factors
    of the old one nor their back-off (header fields FACTORS, REUSE_WAIT, REUSE_BACKOFF):
    its steps are then the same whatever came before."""
    I[FACTORS] = 0
    I[REUSE_WAIT] = 0
    I[REUSE_BACKOFF] = 0


@njit(cache=True)
def layout(I):
    """Offsets into I, F and W from the sizes in I's header (shared by pack and step).

    Segment ``X`` of its array is ``A[o[X]:o[X'])`` with ``X'`` the next row below; the
    ``*_END`` entries are the arrays' lengths.

    ===  ===============  ============  ===================================================
    A    X                length        contents
    ===  ===============  ============  ===================================================
    I    (header)         HEADER        sizes NF..NT, then MAXIT, NHIST, STATUS, ITERS,
                                        MINIT, NFREE, FACTORS, REUSE_WAIT,
                                        REUSE_BACKOFF, NLIM
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
    I    I_FREE           3 nfree       rotation configs of each free joint (FreeJointCharts)
    I    I_LIM            nlim          configs with joint limits (a step whose root passes
                                        one reports LIMIT)
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
    W    (scalars)        NSCALAR       DT, TOL, RNORM, T2, FACTOR_DT
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
         W_J              nd * nd       Newton matrix, or its tree factors (FACTORS)
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
    W    W_ANCHOR         NANCHOR       energy anchor: acceptance.A_E .. A_VALID
    W    W_CHECK          NCHECK        last acceptance test: acceptance.C_DEVIATION ..
                                        C_FIRST
    W    W_DRIVE          NDRIVE nd     the drives (JointDrives.table, row-major: rows
                                        drives.FIELDS, columns the dynamic configs)
    W    W_IMPULSE        nd            the last accepted step's impulse of the applied
                                        and constraint forces, dt F - Dh(q1)^T lambda1
    W    W_CHART          CHART_CACHE   per free joint: the moving chart's partials' own
                          nfree         derivatives and the increment and dt they were
                                        taken at (free.chart_jacobian_change)
    W    W_LIMIT          2 nlim        their lower, then upper bounds [rad or m]
    W    W_END                          (length of W)
    ===  ===============  ============  ===================================================
    """
    nf, nq, nd, nu = I[NF], I[NQ], I[ND], I[NU]
    nj, nm, nsp, nt = I[NJ], I[NM], I[NSP], I[NT]
    o = np.empty(W_END + 1, dtype=np.int64)
    o[I_PARENT] = HEADER
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
    o[I_FREE] = o[I_MIM_LEAD] + nt - nq
    o[I_LIM] = o[I_FREE] + 3 * I[NFREE]
    o[I_END] = o[I_LIM] + I[NLIM]

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

    o[W_Q1] = NSCALAR
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
    o[W_CHECK] = o[W_ANCHOR] + NANCHOR
    o[W_DRIVE] = o[W_CHECK] + NCHECK
    o[W_IMPULSE] = o[W_DRIVE] + NDRIVE * nd
    o[W_CHART] = o[W_IMPULSE] + nd
    o[W_LIMIT] = o[W_CHART] + CHART_CACHE * I[NFREE]
    o[W_END] = o[W_LIMIT] + 2 * I[NLIM]
    return o


@njit(cache=True)
def model_views(I, F, o):
    """The model arrays and built-in parameters as views into the packed I and F."""
    nf, nt = I[NF], I[NT]
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
            I[o[I_MIM_LEAD]:o[I_FREE]],                        # mimic_leader
            F[o[F_MIM_MULT]:o[F_MIM_OFF]],                     # mimic_multiplier
            F[o[F_MIM_OFF]:o[F_END]])                          # mimic_offset


# ---------------------------------------------------------------------- the step's views
# The step's arrays travel as tuples of views built once per step (``model =
# model_views(I, F, o)``, ``ks = kernel_scratch(I, W, o)``, ``st = step_views(I, W, o)``,
# ``gv = acceptance_views(W, o)``, ``con`` from :func:`no_constraints` or
# :func:`constraint_views`) and are unpacked once, in
# :func:`ros_vi.integrators.step_body.newton_step`.  The predictor, residual, Jacobian and
# commit are sections of that one body, not functions: numba takes a reference to every
# array a function unpacks and releases it on return, which for helpers called in the
# Newton loop cost ~1.2 us per step (measured with a 1-link chain, against a step of
# 3.6 us).

@njit(cache=True, inline='always')
def kernel_scratch(I, W, o):
    """The kernel's output and scratch arrays in W: ``(R, P, S, V, Vp, Ic, h, G, Lq, Lv, M,
    Lvq, Lqq, su, sw, sz, sg, tmp)`` (shapes as in :func:`kernel.first_order_into` and
    :func:`kernel.second_order_into`, over the nt joint coordinates; Lq, Lv, M, Lvq, Lqq
    hold the configs' values in their leading nq entries once folded)."""
    nf, nt = I[NF], I[NT]
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
    ``drives`` (NDRIVE, nd) the drive table (``drives.drive_law``)."""
    nq, nd = I[NQ], I[ND]
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
            W[o[W_DRIVE]:o[W_IMPULSE]].reshape((NDRIVE, nd)))


@njit(cache=True, inline='always')
def acceptance_views(W, o):
    """The globalization's arrays in W: ``(pred, base, newton, va, anchor, check)``, the
    segments W_PRED .. W_CHECK of :func:`layout`."""
    return (W[o[W_PRED]:o[W_BASE]],
            W[o[W_BASE]:o[W_STEP]],
            W[o[W_STEP]:o[W_VA]],
            W[o[W_VA]:o[W_ANCHOR]],
            W[o[W_ANCHOR]:o[W_CHECK]],
            W[o[W_CHECK]:o[W_DRIVE]])


@njit(cache=True, inline='always')
def no_constraints(model, ks, st, W):
    """The constraint views of :func:`~ros_vi.integrators.step_body.newton_step` for a
    system without constraints: an
    empty lambda1 (so nc = 0 and no constraint array is ever read), stand-ins of the
    constrained step's types for the other constraint arrays (existing views: a step
    creates no new ones), and as Newton matrix and right-hand side the DEL's own J and r
    (``st``'s), which the step then solves in place."""
    e = W[0:0]
    M, R, P, S = ks[10], ks[0], ks[1], ks[2]
    return (model[13], model[5], e, e, e, e, e, M, M, e, e, R, P, S, st[10], st[11])


# ---------------------------------------------------------------------- with constraints
# Segments of CW (indices into the offsets of :func:`constraint_layout`)
(CW_LAM, CW_LAMN, CW_LBASE, CW_LSTEP, CW_H2, CW_DH1, CW_DH2, CW_TH, CW_DTH, CW_R2, CW_P2,
 CW_S2, CW_K, CW_RHS, CW_END) = range(15)


@njit(cache=True)
def constraint_layout(I, nc):
    """Offsets into CW for ``nc`` constraints (sizes nf, nd, nt from I's header).

    ==========  ==============  ==================================================
    segment     length          contents
    ==========  ==============  ==================================================
    CW_LAM      nc              integrator state: lambda1 of the last step
    CW_LAMN     nc              Newton iterate of lambda1
    CW_LBASE    nc              line search: the lambda1 iterate it starts from
    CW_LSTEP    nc              line search: the Newton update of lambda1
    CW_H2       nc              h(q2)
    CW_DH1      nc nt           Dh(q1) (over joint coordinates, folded: [:, :nq])
    CW_DH2      nc nt           Dh(q2)
    CW_TH       nt              joint coordinates at q1, then at q2
    CW_DTH      nt              (their rates: unused)
    CW_R2       9 nf            R at q1, then at q2 (the constraints' kinematics)
    CW_P2       3 nf            P
    CW_S2       6 nt            S
    CW_K        (nd + nc)^2     Newton matrix
    CW_RHS      nd + nc         residual, then Newton update
    CW_END                      (length of CW)
    ==========  ==============  ==================================================
    """
    nf, nd, nt = I[NF], I[ND], I[NT]
    o = np.empty(CW_END + 1, dtype=np.int64)
    o[CW_LAM] = 0
    o[CW_LAMN] = o[CW_LAM] + nc
    o[CW_LBASE] = o[CW_LAMN] + nc
    o[CW_LSTEP] = o[CW_LBASE] + nc
    o[CW_H2] = o[CW_LSTEP] + nc
    o[CW_DH1] = o[CW_H2] + nc
    o[CW_DH2] = o[CW_DH1] + nc * nt
    o[CW_TH] = o[CW_DH2] + nc * nt
    o[CW_DTH] = o[CW_TH] + nt
    o[CW_R2] = o[CW_DTH] + nt
    o[CW_P2] = o[CW_R2] + 9 * nf
    o[CW_S2] = o[CW_P2] + 3 * nf
    o[CW_K] = o[CW_S2] + 6 * nt
    o[CW_RHS] = o[CW_K] + (nd + nc) * (nd + nc)
    o[CW_END] = o[CW_RHS] + nd + nc
    return o


@njit(cache=True)
def constraint_views(I, CI, CF, CW, c):
    """The constraint views of :func:`~ros_vi.integrators.step_body.newton_step`: ``(CI, CF,
    lambda1, its iterate, line-search base and update, h2, Dh1, Dh2, theta, dtheta, R, P, S,
    K, rhs)`` (the segments of :func:`constraint_layout`)."""
    nf, nt = I[NF], I[NT]
    nc = CI.shape[0]
    n = I[ND] + nc
    return (CI, CF,
            CW[c[CW_LAM]:c[CW_LAMN]],
            CW[c[CW_LAMN]:c[CW_LBASE]],
            CW[c[CW_LBASE]:c[CW_LSTEP]],
            CW[c[CW_LSTEP]:c[CW_H2]],
            CW[c[CW_H2]:c[CW_DH1]],
            CW[c[CW_DH1]:c[CW_DH2]].reshape((nc, nt)),
            CW[c[CW_DH2]:c[CW_TH]].reshape((nc, nt)),
            CW[c[CW_TH]:c[CW_DTH]],
            CW[c[CW_DTH]:c[CW_R2]],
            CW[c[CW_R2]:c[CW_P2]].reshape((nf, 3, 3)),
            CW[c[CW_P2]:c[CW_S2]].reshape((nf, 3)),
            CW[c[CW_S2]:c[CW_K]].reshape((nt, 6)),
            CW[c[CW_K]:c[CW_RHS]].reshape((n, n)),
            CW[c[CW_RHS]:c[CW_END]])
