"""Compiled step for the common case: a frame tree with built-in terms only.

When a System's only potentials and forces are ``Gravity``, ``ConfigSpring``, ``Damping`` and
``ConfigForce`` and its constraints (if any) are built-in ones (``Distance``,
``PointToPoint*``, ``PointOnPlane``, ``Mimic``), a whole step runs in one numba call:
predictor, Newton iterations on the DEL with the exact Jacobian, p2 and the midpoint state
(:func:`step_packed`; with constraints :func:`constrained_step.step_constrained_packed`).
Every other system uses the general path in :mod:`midpointvi`, which gives the same answer
(tests compare the two).

Why packed arrays: numba checks the type of every argument on each call (about 0.2 us per
argument), so the model, parameters and per-step state travel in three flat arrays
(ints ``I``, constants ``F``, step state/work ``W``) whose layout is fixed by the sizes in
the header of ``I``.  The named indices below and :func:`_layout` define that layout (a
table in its docstring); nothing else does.
"""
import numpy as np
from numba import njit

from ..mechanics import kernel
from ..mechanics.constraint_kernel import pack_constraints, refresh_constraint_parameters
from ..mechanics.forces.configforce import ConfigForce
from ..mechanics.forces.damping import Damping
from ..mechanics.kernel import first_order_into, second_order_into
from ..mechanics.potentials.configspring import ConfigSpring
from ..mechanics.potentials.gravity import Gravity

OK, NOT_CONVERGED, NOT_FINITE, SINGULAR, BAD_INPUT = 0, 1, 2, 3, 4
HISTORY = 5          # stored past configurations for the order-4 predictor
ROUNDING = 64 * np.finfo(np.float64).eps   # residual floor relative to its terms' size
STALLED = 8 * np.finfo(np.float64).eps     # a Newton update this small (relative) changes
                                           # nothing: the iterate is converged to rounding
STALL_ACCEPT = np.sqrt(np.finfo(np.float64).eps)   # ... if the residual is this small
                                                   # relative to its terms' size
_H = 16              # header length of I

# Header fields of I (indices into I): the sizes, then per-step inputs and results
_NF, _NQ, _ND, _NU, _NJ, _NM, _NSP, _NT, _MAXIT, _NHIST, _STATUS, _ITERS = range(12)

# Scalar slots at the start of W (indices into W): step length, tolerance, final residual
# norm, end time of the step
_DT, _TOL, _RNORM, _T2 = range(4)
_NSCALAR = 4

# Segments of the packed arrays (indices into the offsets ``o = _layout(I)``; the table in
# :func:`_layout` gives each one's length and contents)
(I_PARENT, I_KIND, I_FCFG, I_FJOINT, I_CFRAME, I_CPARENT, I_CORDER, I_MASS_FRAMES, I_ANC,
 I_SP_IDX, I_IN_CFG, I_MIM_LEAD, I_END,
 F_VALUE, F_MASS, F_FIXEDR, F_FIXEDP, F_IB, F_GVEC, F_DAMPING, F_SP_K, F_SP_Q0, F_MIM_MULT,
 F_MIM_OFF, F_END,
 W_Q1, W_P1, W_Q2, W_P2, W_U1, W_U_IN, W_K_IN, W_HIST, W_HIST_T, W_Q2N, W_P2N, W_QM, W_V,
 W_R, W_P, W_S, W_VSP, W_VP, W_IC, W_H, W_G, W_LQ, W_LV, W_M, W_LVQ, W_LQQ, W_SU, W_SW,
 W_SZ, W_SG, W_TMP, W_J, W_RES, W_FORCE, W_DLT, W_VEL, W_MD, W_ZERO, W_END) = range(64)


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
    o[W_END] = o[W_ZERO] + nt
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
def step_packed(I, F, W):
    """One VI step from the packed state; results in W (q2, p2, qm, v) and I's header."""
    o = _layout(I)
    nf, nq, nd, nu, nsp, nt = I[_NF], I[_NQ], I[_ND], I[_NU], I[_NSP], I[_NT]
    max_iter = I[_MAXIT]
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = _model_views(I, F, o)
    dt, tol = W[_DT], W[_TOL]
    # the step starts from the integrator's current state (q2, p2) ...
    q1 = W[o[W_Q2]:o[W_P2]]
    p1 = W[o[W_P2]:o[W_U1]]
    u1 = W[o[W_U_IN]:o[W_K_IN]]
    k2 = W[o[W_K_IN]:o[W_HIST]]
    hist = W[o[W_HIST]:o[W_HIST_T]].reshape((HISTORY, nq))
    hist_t = W[o[W_HIST_T]:o[W_Q2N]]
    # ... and solves for the new one
    q2 = W[o[W_Q2N]:o[W_P2N]]
    p2 = W[o[W_P2N]:o[W_QM]]
    qm = W[o[W_QM]:o[W_V]]
    v = W[o[W_V]:o[W_R]]
    R = W[o[W_R]:o[W_P]].reshape((nf, 3, 3))
    P = W[o[W_P]:o[W_S]].reshape((nf, 3))
    S = W[o[W_S]:o[W_VSP]].reshape((nt, 6))
    V = W[o[W_VSP]:o[W_VP]].reshape((nt, 6))
    Vp = W[o[W_VP]:o[W_IC]].reshape((nt, 6))
    Ic = W[o[W_IC]:o[W_H]].reshape((nt, 6, 6))
    h = W[o[W_H]:o[W_G]].reshape((nt, 6))
    G = W[o[W_G]:o[W_LQ]].reshape((6, 6))
    Lq = W[o[W_LQ]:o[W_LV]]
    Lv = W[o[W_LV]:o[W_M]]
    M = W[o[W_M]:o[W_LVQ]].reshape((nt, nt))
    Lvq = W[o[W_LVQ]:o[W_LQQ]].reshape((nt, nt))
    Lqq = W[o[W_LQQ]:o[W_SU]].reshape((nt, nt))
    su = W[o[W_SU]:o[W_SW]].reshape((nt, 6))
    sw = W[o[W_SW]:o[W_SZ]].reshape((nt, 6))
    sz = W[o[W_SZ]:o[W_SG]].reshape((nt, 6))
    sg = W[o[W_SG]:o[W_TMP]].reshape((nt, 6))
    tmp = W[o[W_TMP]:o[W_J]].reshape((3, 6))
    J = W[o[W_J]:o[W_RES]].reshape((nd, nd))
    r = W[o[W_RES]:o[W_FORCE]]
    force = W[o[W_FORCE]:o[W_DLT]]
    dlt = W[o[W_DLT]:o[W_VEL]]
    vel = W[o[W_VEL]:o[W_MD]]
    Md = W[o[W_MD]:o[W_ZERO]].reshape((nd, nd))
    zero = W[o[W_ZERO]:o[W_END]]
    for i in range(nd):
        q2[i] = q1[i]
    for i in range(nd, nq):
        q2[i] = k2[i - nd]

    # usable history: trailing configurations spaced dt apart, ending at (t1, q1)
    t1 = W[_T2] - dt
    eps = 1e-12 * max(1.0, abs(W[_T2]))
    nhist = min(I[_NHIST], HISTORY)
    if nhist > 0 and abs(hist_t[HISTORY - 1] - t1) > eps:
        nhist = 0
    if nhist == 0:
        hist_t[HISTORY - 1] = t1
        for i in range(nq):
            hist[HISTORY - 1, i] = q1[i]
        nhist = 1
    usable = 1
    for j in range(1, nhist):
        step_j = hist_t[HISTORY - j] - hist_t[HISTORY - 1 - j]
        if abs(step_j - dt) > eps:
            break
        usable += 1
    nhist = usable

    for j in range(nu):
        if not np.isfinite(u1[j]):
            I[_STATUS] = BAD_INPUT
            I[_ITERS] = 0
            return
    for i in range(nd, nq):
        if not np.isfinite(q2[i]):
            I[_STATUS] = BAD_INPUT
            I[_ITERS] = 0
            return

    # Predictor: extrapolate equally spaced past configurations (binomial weights);
    # with less history, a momentum step q1 + dt M(q1)^-1 p1.
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
        for i in range(nt):
            zero[i] = 0.0
        for i in range(nq):
            qm[i] = q1[i]
        kernel.expand_into(qm[:nq], zero[:nq], mim_lead, mim_mult, mim_off, qm, zero)
        first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames,
                         fjoint, cframe, cparent, corder, gvec, qm, zero, R, P, S, V, Vp, Ic,
                         h, G, Lq, Lv)
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
            for i in range(nd):
                q2[i] = q1[i] + dt * vel[i]
        else:
            for i in range(nd):
                q2[i] = q1[i]

    # Newton works on the increment dlt = q2 - q1: the velocity dlt/dt then carries no
    # cancellation error even when q is large (a free joint that has turned many times).
    for i in range(nq):
        dlt[i] = q2[i] - q1[i]
    it = 0
    status = NOT_CONVERGED
    rnorm = np.inf
    stalled = False
    while True:
        for i in range(nq):
            qm[i] = q1[i] + 0.5 * dlt[i]
            v[i] = dlt[i] / dt
        kernel.expand_into(qm[:nq], v[:nq], mim_lead, mim_mult, mim_off, qm, v)
        first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames,
                         fjoint, cframe, cparent, corder, gvec, qm, v, R, P, S, V, Vp, Ic, h, G,
                         Lq, Lv)
        kernel.fold_vector(Lq, nq, mim_lead, mim_mult)
        kernel.fold_vector(Lv, nq, mim_lead, mim_mult)
        for j in range(nsp):
            Lq[sp_idx[j]] -= sp_k[j] * (qm[sp_idx[j]] - sp_q0[j])
        acc = 0.0
        scale = 0.0
        for i in range(nd):
            f = -damping[i] * v[i]
            for j in range(nu):
                if in_cfg[j] == i:
                    f += u1[j]
            force[i] = f
            r[i] = p1[i] + 0.5 * dt * Lq[i] - Lv[i] + dt * f
            acc += r[i] * r[i]
            mag = abs(p1[i]) + abs(0.5 * dt * Lq[i]) + abs(Lv[i]) + abs(dt * f)
            scale += mag * mag
        rnorm = np.sqrt(acc)
        if not np.isfinite(rnorm):
            status = NOT_FINITE
            break
        # converged: within tolerance, or within rounding of the residual's own terms
        if (rnorm <= max(tol, ROUNDING * np.sqrt(scale))
                or (stalled and rnorm <= STALL_ACCEPT * np.sqrt(scale))):
            status = OK
            # p2 = D2Ld, written as p1 + D1Ld + D2Ld + f- (equal at the root): the
            # momentum update then does not inherit the solver residual, so momenta of
            # cyclic configs are conserved to rounding
            for i in range(nq):
                q2[i] = q1[i] + dlt[i]
            for i in range(nd):
                p2[i] = p1[i] + dt * (Lq[i] + force[i])
            # shift the history and append (t2, q2)
            for j in range(HISTORY - 1):
                hist_t[j] = hist_t[j + 1]
                for i in range(nq):
                    hist[j, i] = hist[j + 1, i]
            hist_t[HISTORY - 1] = W[_T2]
            for i in range(nq):
                hist[HISTORY - 1, i] = q2[i]
            I[_NHIST] = min(nhist + 1, HISTORY)
            # commit: (q1, p1) <- (q2, p2) <- new; u1 <- u_in
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
        second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, su, sw, sz, sg, tmp)
        kernel.fold_matrix(M, nq, mim_lead, mim_mult)
        kernel.fold_matrix(Lvq, nq, mim_lead, mim_mult)
        kernel.fold_matrix(Lqq, nq, mim_lead, mim_mult)
        for j in range(nsp):
            Lqq[sp_idx[j], sp_idx[j]] -= sp_k[j]
        for a in range(nd):
            for b in range(nd):
                J[a, b] = (0.25 * dt * Lqq[a, b] + 0.5 * (Lvq[b, a] - Lvq[a, b])
                           - M[a, b] / dt)
            J[a, a] -= damping[a]
        singular = False
        for a in range(nd):
            if M[a, a] == 0.0:
                singular = True
        if singular or not kernel.solve_in_place(J, r):
            status = SINGULAR
            break
        big_step = 0.0
        big_x = 0.0
        for i in range(nd):
            big_step = max(big_step, abs(r[i]))
            big_x = max(big_x, abs(dlt[i]))
            dlt[i] -= r[i]
        stalled = big_step <= STALLED * big_x
        it += 1
    W[_RNORM] = rnorm
    I[_STATUS] = status
    I[_ITERS] = it


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
    _ALLOWED_FORCES = (Damping, ConfigForce)

    @classmethod
    def for_system(cls, system):
        if any(type(p) not in cls._ALLOWED_POTENTIALS for p in system.potentials):
            return None
        if any(type(f) not in cls._ALLOWED_FORCES for f in system.forces):
            return None
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

    @property
    def constrained(self):
        """True when the packed system has constraints (lambda1 is then a view (nc,) into
        the stepper's state; derivatives come from the general path)."""
        return self._constraints is not None

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

    def reset_history(self, times=(), configs=()):
        """Forget the predictor history, optionally seeding it with known (t, q) pairs
        (oldest first)."""
        n = len(times)
        self._I[_NHIST] = n
        if n:
            self._hist_t[HISTORY - n:] = times
            self._hist[HISTORY - n:] = configs

    def step(self, t1, t2, tolerance, max_iterations):
        """Step from time t1 to t2 with the inputs already in ``u_in``/``k_in``.

        Returns ``(status, iterations, rnorm)``.  On OK the state views hold the new state
        and the history has advanced; otherwise nothing changed.
        """
        if self._version != self._system.parameter_version:
            self._refresh_constants()
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
        nd, nq, nu = self._nd, self._nq, self._nu
        nX = 2 * nq + nu
        Zq = np.empty((nd, nX))
        Zp = np.empty((nd, nX))
        if not derivatives_packed(self._I, self._F, self._W, t1, t2, Zq, Zp):
            return None
        return Zq, Zp
