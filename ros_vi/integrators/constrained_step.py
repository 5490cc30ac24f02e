"""Compiled step for frame trees with built-in holonomic constraints.

The constrained counterpart of :func:`~ros_vi.integrators.fast_step.step_packed`: the same
packed model, parameters and state (``I, F, W``, layout in ``fast_step._layout``) plus the
packed constraints (``CI, CF`` from
:func:`~ros_vi.mechanics.constraint_kernel.pack_constraints`) and a work array ``CW`` (layout
in :func:`con_layout`).  One call solves the DEL and the constraints at the end of the step
by Newton's method on ``(q2_d, lambda1)``::

    r = p1 + dt/2 L_q - L_v + dt F - Dh(q1)_d^T lambda1 = 0     (nd,)
    h(q2) = 0                                                  (nc,)

with the Newton matrix ``[[J, -Dh(q1)_d^T], [Dh(q2)_d, 0]]`` (J the unconstrained DEL
Jacobian), then ``p2 = p1 + dt (L_q + F) - Dh(q1)_d^T lambda1``.  It stops under the general
path's rule (:mod:`ros_vi.integrators.midpointvi`): the DEL residual's 2-norm is at most the
tolerance or the rounding floor of its terms, and every ``|h_i(q2)|`` is at most its
constraint's tolerance.

The predictor, the DEL residual, its Jacobian and the commit of a converged step are the njit
helpers below (functions of the packed arrays only, so any compiled step can call them);
nothing here allocates beyond the offset tables.
"""
import numpy as np
from numba import njit

from ..mechanics import kernel
from ..mechanics.constraint_kernel import (CF_TOL, constraint_jacobian_into,
                                           constraint_values_into)
from ..mechanics.kernel import (first_order_into, forward_kinematics_into, joint_twists_into,
                                second_order_into)
from .fast_step import (BAD_INPUT, HISTORY, NOT_CONVERGED, NOT_FINITE, OK, ROUNDING, SINGULAR,
                        STALL_ACCEPT, STALLED, W_DLT, W_END, W_FORCE, W_G, W_H, W_HIST,
                        W_HIST_T, W_IC, W_J, W_K_IN, W_LQ, W_LQQ, W_LV, W_LVQ, W_M, W_MD, W_P,
                        W_P1, W_P2, W_P2N, W_Q1, W_Q2, W_Q2N, W_QM, W_R, W_RES, W_S, W_SG,
                        W_SU, W_SW, W_SZ, W_TMP, W_U1, W_U_IN, W_V, W_VEL, W_VP, W_VSP,
                        W_ZERO, _DT, _ITERS, _MAXIT, _NHIST, _NQ, _ND, _NF, _NT, _RNORM,
                        _STATUS, _T2, _TOL, _layout, _model_views)

# Segments of CW (indices into the offsets of :func:`con_layout`)
(C_LAM, C_LAMN, C_H2, C_DH1, C_DH2, C_TH, C_DTH, C_R2, C_P2, C_S2, C_K, C_RHS,
 C_END) = range(13)


@njit(cache=True)
def con_layout(I, nc):
    """Offsets into CW for ``nc`` constraints (sizes nf, nd, nt from I's header).

    =========  ==============  ==================================================
    segment    length          contents
    =========  ==============  ==================================================
    C_LAM      nc              integrator state: lambda1 of the last step
    C_LAMN     nc              Newton iterate of lambda1
    C_H2       nc              h(q2)
    C_DH1      nc nt           Dh(q1) (over joint coordinates, folded: [:, :nq])
    C_DH2      nc nt           Dh(q2)
    C_TH       nt              joint coordinates at q1, then at q2
    C_DTH      nt              (their rates: unused)
    C_R2       9 nf            R at q1, then at q2 (the constraints' kinematics)
    C_P2       3 nf            P
    C_S2       6 nt            S
    C_K        (nd + nc)^2     Newton matrix
    C_RHS      nd + nc         residual, then Newton update
    C_END                      (length of CW)
    =========  ==============  ==================================================
    """
    nf, nd, nt = I[_NF], I[_ND], I[_NT]
    o = np.empty(C_END + 1, dtype=np.int64)
    o[C_LAM] = 0
    o[C_LAMN] = o[C_LAM] + nc
    o[C_H2] = o[C_LAMN] + nc
    o[C_DH1] = o[C_H2] + nc
    o[C_DH2] = o[C_DH1] + nc * nt
    o[C_TH] = o[C_DH2] + nc * nt
    o[C_DTH] = o[C_TH] + nt
    o[C_R2] = o[C_DTH] + nt
    o[C_P2] = o[C_R2] + 9 * nf
    o[C_S2] = o[C_P2] + 3 * nf
    o[C_K] = o[C_S2] + 6 * nt
    o[C_RHS] = o[C_K] + (nd + nc) * (nd + nc)
    o[C_END] = o[C_RHS] + nd + nc
    return o


# ---------------------------------------------------------------------- shared pieces
# The helpers take the views of the packed arrays as tuples built once per step
# (``model = fast_step._model_views(I, F, o)``, ``ks = kernel_scratch(I, W, o)``,
# ``st = step_views(I, W, o)``): building ~40 views costs about a microsecond, far more
# than the kernels of a small system, so they are never rebuilt inside a step.

@njit(cache=True)
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


@njit(cache=True)
def step_views(I, W, o):
    """The step's state and work arrays in W: ``(q1, p1, u1, k2, hist, hist_t, q2, p2, qm, v,
    J, r, force, dlt, vel, Md, zero)``.  ``q1, p1`` are the integrator's current state (the
    step starts there), ``u1, k2`` the step's inputs, ``q2, p2`` its result; the midpoint
    ``qm, v`` and ``zero`` span the nt joint coordinates (configs first)."""
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
            W[o[W_ZERO]:o[W_END]])


@njit(cache=True, inline='always')
def inputs_finite(st):
    """True when the step's inputs u1 and kinematic configs k2 are finite."""
    u1, k2 = st[2], st[3]
    for j in range(u1.shape[0]):
        if not np.isfinite(u1[j]):
            return False
    for j in range(k2.shape[0]):
        if not np.isfinite(k2[j]):
            return False
    return True


@njit(cache=True, inline='always')
def usable_history(I, st, dt, t2):
    """Number of trailing history configurations spaced dt apart that end at
    (t1 = t2 - dt, q1); seeds the history with (t1, q1) when none is usable."""
    q1, hist, hist_t = st[0], st[4], st[5]
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
def predict(model, ks, st, dt, nhist):
    """Initial guess for q2 and the increment q2 - q1 (``st``'s q2, dlt): kinematic configs
    from the step's input, dynamic ones by extrapolating the ``nhist`` equally spaced past
    configurations (binomial weights) or, with less history, by a momentum step
    q1 + dt M(q1)^-1 p1."""
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = model
    (R, P, S, V, Vp, Ic, h, G, Lq, Lv, M, Lvq, Lqq, su, sw, sz, sg, tmp) = ks
    (q1, p1, u1, k2, hist, hist_t, q2, p2, qm, v, J, r, force, dlt, vel, Md, zero) = st
    nq, nd = q1.shape[0], p1.shape[0]
    for i in range(nd):
        q2[i] = q1[i]
    for i in range(nd, nq):
        q2[i] = k2[i - nd]
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
    # Newton works on the increment: the velocity dlt/dt then carries no cancellation error
    # even when q is large (a free joint that has turned many times)
    for i in range(nq):
        dlt[i] = q2[i] - q1[i]


@njit(cache=True, inline='always')
def del_residual(model, ks, st, dt):
    """The unconstrained DEL residual ``r = p1 + dt/2 L_q - L_v + dt f`` (``st``'s r, (nd,))
    at the increment ``st``'s dlt, leaving the midpoint state (qm, v), the kernel's
    first-order terms (L_q with the springs) and the generalized force f in place.

    Returns the size of the residual's terms (2-norm of |p1| + |dt/2 L_q| + |L_v| + |dt f|),
    against which the rounding floor of the root is measured.
    """
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = model
    (R, P, S, V, Vp, Ic, h, G, Lq, Lv, M, Lvq, Lqq, su, sw, sz, sg, tmp) = ks
    (q1, p1, u1, k2, hist, hist_t, q2, p2, qm, v, J, r, force, dlt, vel, Md, zero) = st
    nq, nd, nu = q1.shape[0], p1.shape[0], u1.shape[0]
    for i in range(nq):
        qm[i] = q1[i] + 0.5 * dlt[i]
        v[i] = dlt[i] / dt
    kernel.expand_into(qm[:nq], v[:nq], mim_lead, mim_mult, mim_off, qm, v)
    first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames,
                     fjoint, cframe, cparent, corder, gvec, qm, v, R, P, S, V, Vp, Ic, h, G,
                     Lq, Lv)
    kernel.fold_vector(Lq, nq, mim_lead, mim_mult)
    kernel.fold_vector(Lv, nq, mim_lead, mim_mult)
    for j in range(sp_idx.shape[0]):
        Lq[sp_idx[j]] -= sp_k[j] * (qm[sp_idx[j]] - sp_q0[j])
    scale = 0.0
    for i in range(nd):
        f = -damping[i] * v[i]
        for j in range(nu):
            if in_cfg[j] == i:
                f += u1[j]
        force[i] = f
        r[i] = p1[i] + 0.5 * dt * Lq[i] - Lv[i] + dt * f
        mag = abs(p1[i]) + abs(0.5 * dt * Lq[i]) + abs(Lv[i]) + abs(dt * f)
        scale += mag * mag
    return np.sqrt(scale)


@njit(cache=True, inline='always')
def del_jacobian(model, ks, st, dt):
    """The DEL Jacobian ``J = d r / d q2_d`` (``st``'s J, (nd, nd)) at the midpoint state
    :func:`del_residual` left in place.  Returns False when a dynamic config moves no mass
    (a zero diagonal of M: the step is singular)."""
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = model
    (R, P, S, V, Vp, Ic, h, G, Lq, Lv, M, Lvq, Lqq, su, sw, sz, sg, tmp) = ks
    J = st[10]
    nq, nd = st[0].shape[0], J.shape[0]
    second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, su, sw, sz, sg, tmp)
    kernel.fold_matrix(M, nq, mim_lead, mim_mult)
    kernel.fold_matrix(Lvq, nq, mim_lead, mim_mult)
    kernel.fold_matrix(Lqq, nq, mim_lead, mim_mult)
    for j in range(sp_idx.shape[0]):
        Lqq[sp_idx[j], sp_idx[j]] -= sp_k[j]
    for a in range(nd):
        for b in range(nd):
            J[a, b] = 0.25 * dt * Lqq[a, b] + 0.5 * (Lvq[b, a] - Lvq[a, b]) - M[a, b] / dt
        J[a, a] -= damping[a]
    for a in range(nd):
        if M[a, a] == 0.0:
            return False
    return True


@njit(cache=True, inline='always')
def commit(I, W, o, st, nhist, t2):
    """Accept the step: q2 = q1 + increment (the new p2 already in ``st``'s p2), append
    (t2, q2) to the history, and move (q1, p1) <- (q2, p2) <- new, u1 <- the step's
    input."""
    (q1, p1, u1, k2, hist, hist_t, q2, p2, qm, v, J, r, force, dlt, vel, Md, zero) = st
    nq, nd, nu = q1.shape[0], p1.shape[0], u1.shape[0]
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
    for i in range(nq):
        W[o[W_Q1] + i] = q1[i]
        q1[i] = q2[i]
    for i in range(nd):
        W[o[W_P1] + i] = p1[i]
        p1[i] = p2[i]
    for j in range(nu):
        W[o[W_U1] + j] = u1[j]


# ---------------------------------------------------------------------- the step
@njit(cache=True)
def step_constrained_packed(I, F, W, CI, CF, CW):
    """One constrained VI step from the packed state; results in W (q2, p2, qm, v), CW
    (lambda1) and I's header (status, iterations; W holds the residual norm)."""
    o = _layout(I)
    nq, nd, nt = I[_NQ], I[_ND], I[_NT]
    nc = CI.shape[0]
    n = nd + nc
    c = con_layout(I, nc)
    model = _model_views(I, F, o)
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = model
    ks = kernel_scratch(I, W, o)
    Lq = ks[8]
    st = step_views(I, W, o)
    (q1, p1, u1, k2, hist, hist_t, q2, p2, qm, v, J, r, force, dlt, vel, Md, zero) = st
    max_iter = I[_MAXIT]
    dt, tol, t2 = W[_DT], W[_TOL], W[_T2]
    lam = CW[c[C_LAM]:c[C_LAMN]]
    lamn = CW[c[C_LAMN]:c[C_H2]]
    h2 = CW[c[C_H2]:c[C_DH1]]
    Dh1 = CW[c[C_DH1]:c[C_DH2]].reshape((nc, nt))
    Dh2 = CW[c[C_DH2]:c[C_TH]].reshape((nc, nt))
    th = CW[c[C_TH]:c[C_DTH]]
    dth = CW[c[C_DTH]:c[C_R2]]
    R2 = CW[c[C_R2]:c[C_P2]].reshape((I[_NF], 3, 3))
    P2 = CW[c[C_P2]:c[C_S2]].reshape((I[_NF], 3))
    S2 = CW[c[C_S2]:c[C_K]].reshape((nt, 6))
    K = CW[c[C_K]:c[C_RHS]].reshape((n, n))
    rhs = CW[c[C_RHS]:c[C_END]]
    if not inputs_finite(st):
        I[_STATUS] = BAD_INPUT
        I[_ITERS] = 0
        return
    nhist = usable_history(I, st, dt, t2)
    predict(model, ks, st, dt, nhist)

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
    rnorm = np.inf
    stalled = False
    while True:
        scale = del_residual(model, ks, st, dt)
        acc = 0.0
        for i in range(nd):
            ri = r[i]
            for k in range(nc):
                ri -= Dh1[k, i] * lamn[k]
            r[i] = ri
            acc += ri * ri
        rnorm = np.sqrt(acc)
        for i in range(nq):
            q2[i] = q1[i] + dlt[i]
        kernel.expand_into(q2, q2, mim_lead, mim_mult, mim_off, th, dth)
        forward_kinematics_into(parent, kind, value, fcfg, fixedR, fixedp, th, R2, P2)
        constraint_values_into(CI, CF, R2, P2, th, h2)
        finite = np.isfinite(rnorm)
        satisfied = True
        for k in range(nc):
            if not np.isfinite(h2[k]):
                finite = False
            if not abs(h2[k]) <= CF[k, CF_TOL]:
                satisfied = False
        if not finite:
            status = NOT_FINITE
            break
        if satisfied and (rnorm <= max(tol, ROUNDING * scale)
                          or (stalled and rnorm <= STALL_ACCEPT * scale)):
            status = OK
            # p2 = D2Ld at the root, written as p1 + D1Ld + D2Ld + f- - Dh1^T lambda1 so
            # the momentum does not inherit the solver residual
            for i in range(nd):
                acc = p1[i] + dt * (Lq[i] + force[i])
                for k in range(nc):
                    acc -= Dh1[k, i] * lamn[k]
                p2[i] = acc
            for k in range(nc):
                lam[k] = lamn[k]
            commit(I, W, o, st, nhist, t2)
            break
        if it >= max_iter:
            break
        if not del_jacobian(model, ks, st, dt):
            status = SINGULAR
            break
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
            for l in range(nc):
                K[nd + k, nd + l] = 0.0
            rhs[nd + k] = h2[k]
        if not kernel.solve_in_place(K, rhs):
            status = SINGULAR
            break
        big_step = 0.0
        big_x = 0.0
        for i in range(nd):
            big_step = max(big_step, abs(rhs[i]))
            big_x = max(big_x, abs(dlt[i]))
            dlt[i] -= rhs[i]
        for k in range(nc):
            lamn[k] -= rhs[nd + k]
        stalled = big_step <= STALLED * big_x
        it += 1
    W[_RNORM] = rnorm
    I[_STATUS] = status
    I[_ITERS] = it


@njit(cache=True)
def call_step_constrained(I, F, W, CI, CF, CW, dt, tol, t2, max_iterations):
    """:func:`step_constrained_packed` with the per-step scalars as arguments, returning
    ``(status, iterations, rnorm)`` (see :func:`fast_step.call_step`)."""
    W[_DT] = dt
    W[_TOL] = tol
    W[_T2] = t2
    I[_MAXIT] = max_iterations
    step_constrained_packed(I, F, W, CI, CF, CW)
    return I[_STATUS], I[_ITERS], W[_RNORM]
