"""Compiled kernels for the frame tree: kinematics, the Lagrangian and its derivatives.

Everything here is a pure function of stacked NumPy arrays (the compiled :class:`Model`
and a state), so it can be compiled once by numba and called from the hot path without
touching per-frame Python objects.

Conventions
-----------
* Twists and wrenches are ordered ``(angular, linear)`` and expressed in the world frame
  ("spatial" coordinates): a joint's unit twist is ``S = (w, p x w)`` for a rotation about
  the unit axis ``w`` through the point ``p`` and ``S = (0, e)`` for a translation along ``e``.
* ``V_c`` is the spatial velocity of the bodies moved by config ``c`` (sum of ``S_j dq_j`` over
  ``c`` and its ancestor configs), ``Vp_c`` that of its parent body.
* ``Ic_c`` is the composite spatial inertia of the subtree of ``c``, ``h_c`` its momentum.

With these, for the kinetic energy T and gravity potential V (L = T - V):

* ``L_v[c] = S_c . h_c``
* ``L_q[c] = -h_c . ad(S_c) Vp_c + S_c . Ic_c gamma``,   ``gamma = (0, g)``
* second derivatives (mass matrix ``M = L_vv``, ``L_vq = d L_v / d q``, ``L_qq``) from the
  pairwise closed forms in :func:`second_order` (never forming dM/dq).

The kernels are dtype-generic (float64 or complex128), so complex-step differentiation of
the second-order terms gives exact third-order terms (no truncation error).
"""
import numpy as np

from numba import njit

# Transform kinds as stored in Model.kind
FIXED, ROT_X, ROT_Y, ROT_Z, TRANS_X, TRANS_Y, TRANS_Z = 0, 1, 2, 3, 4, 5, 6


@njit(cache=True)
def solve_many_in_place(A, B):
    """Solve ``A X = B`` for a (n, m) right-hand side, overwriting A and writing X into B
    (Gaussian elimination with partial pivoting).  Returns False if A is singular."""
    n = A.shape[0]
    m = B.shape[1]
    for k in range(n):
        piv = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            if abs(A[i, k]) > big:
                big = abs(A[i, k])
                piv = i
        if big == 0.0 or not np.isfinite(big):
            return False
        if piv != k:
            for j in range(n):
                tmp = A[k, j]
                A[k, j] = A[piv, j]
                A[piv, j] = tmp
            for j in range(m):
                tmp = B[k, j]
                B[k, j] = B[piv, j]
                B[piv, j] = tmp
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            f = A[i, k] * inv
            if f != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= f * A[k, j]
                for j in range(m):
                    B[i, j] -= f * B[k, j]
    for k in range(n - 1, -1, -1):
        inv = 1.0 / A[k, k]
        for j in range(m):
            acc = B[k, j]
            for i in range(k + 1, n):
                acc -= A[k, i] * B[i, j]
            B[k, j] = acc * inv
    return True


@njit(cache=True)
def solve_in_place(A, b):
    """Solve ``A x = b`` for a vector b, overwriting A and writing x into b (see
    :func:`solve_many_in_place`).  Returns False if A is singular."""
    return solve_many_in_place(A, b.reshape((b.shape[0], 1)))


@njit(cache=True)
def forward_kinematics_into(parent, kind, value, fcfg, fixedR, fixedp, q, R, P):
    """World rotation ``R (nf, 3, 3)`` and origin ``P (nf, 3)`` of every frame, written in
    place.  Frames are topologically ordered (``parent[i] < i``); frame 0 is the world."""
    nf = parent.shape[0]
    for r in range(3):
        P[0, r] = 0.0
        for c in range(3):
            R[0, r, c] = 1.0 if r == c else 0.0
    for i in range(1, nf):
        k = kind[i]
        par = parent[i]
        if k == FIXED:
            for r in range(3):
                acc = P[par, r]
                for c in range(3):
                    acc += R[par, r, c] * fixedp[i, c]
                P[i, r] = acc
                for c in range(3):
                    R[i, r, c] = (R[par, r, 0] * fixedR[i, 0, c] + R[par, r, 1] * fixedR[i, 1, c]
                                  + R[par, r, 2] * fixedR[i, 2, c])
        else:
            th = q[fcfg[i]] if fcfg[i] >= 0 else value[i]
            if k <= ROT_Z:
                # rotation about axis a: columns b, d mix, column a unchanged
                a = k - ROT_X
                b = (a + 1) % 3
                d = (a + 2) % 3
                cth = np.cos(th)
                sth = np.sin(th)
                for r in range(3):
                    P[i, r] = P[par, r]
                    R[i, r, a] = R[par, r, a]
                    R[i, r, b] = R[par, r, b] * cth + R[par, r, d] * sth
                    R[i, r, d] = R[par, r, d] * cth - R[par, r, b] * sth
            else:
                a = k - TRANS_X
                for r in range(3):
                    P[i, r] = P[par, r] + R[par, r, a] * th
                    for c in range(3):
                        R[i, r, c] = R[par, r, c]


@njit(cache=True)
def forward_kinematics(parent, kind, value, fcfg, fixedR, fixedp, q):
    """Allocating form of :func:`forward_kinematics_into`: returns ``(R, P)``."""
    nf = parent.shape[0]
    R = np.zeros((nf, 3, 3), dtype=q.dtype)
    P = np.zeros((nf, 3), dtype=q.dtype)
    forward_kinematics_into(parent, kind, value, fcfg, fixedR, fixedp, q, R, P)
    return R, P


@njit(cache=True)
def joint_twists_into(kind, cframe, corder, R, P, S):
    """Unit spatial twist ``S (nq, 6)`` of every config (zero for configs without a frame)."""
    for c in range(S.shape[0]):
        for r in range(6):
            S[c, r] = 0.0
    for j in range(corder.shape[0]):
        c = corder[j]
        f = cframe[c]
        k = kind[f]
        ax = (k - 1) % 3
        e0, e1, e2 = R[f, 0, ax], R[f, 1, ax], R[f, 2, ax]
        if k <= ROT_Z:
            p0, p1, p2 = P[f, 0], P[f, 1], P[f, 2]
            S[c, 0], S[c, 1], S[c, 2] = e0, e1, e2
            S[c, 3] = p1 * e2 - p2 * e1
            S[c, 4] = p2 * e0 - p0 * e2
            S[c, 5] = p0 * e1 - p1 * e0
        else:
            S[c, 3], S[c, 4], S[c, 5] = e0, e1, e2


@njit(cache=True)
def joint_twists(kind, cframe, corder, R, P, nq):
    """Allocating form of :func:`joint_twists_into`."""
    S = np.zeros((nq, 6), dtype=R.dtype)
    joint_twists_into(kind, cframe, corder, R, P, S)
    return S


@njit(cache=True)
def spatial_inertia(R, p, m, Ib, out):
    """World-frame spatial inertia of a body with mass ``m`` at ``p`` and body inertia ``Ib``."""
    # top-left: R Ib R^T + m (|p|^2 I - p p^T); R Ib goes through the bottom-left block,
    # which is overwritten last
    for r in range(3):
        for c in range(3):
            out[3 + r, c] = R[r, 0] * Ib[0, c] + R[r, 1] * Ib[1, c] + R[r, 2] * Ib[2, c]
    pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
    for r in range(3):
        for c in range(3):
            val = out[3 + r, 0] * R[c, 0] + out[3 + r, 1] * R[c, 1] + out[3 + r, 2] * R[c, 2]
            val -= m * p[r] * p[c]
            if r == c:
                val += m * pp
            out[r, c] = val
            out[3 + r, 3 + c] = m if r == c else 0.0
    # top-right m [p]x, bottom-left its transpose
    out[0, 3] = 0.0
    out[0, 4] = -m * p[2]
    out[0, 5] = m * p[1]
    out[1, 3] = m * p[2]
    out[1, 4] = 0.0
    out[1, 5] = -m * p[0]
    out[2, 3] = -m * p[1]
    out[2, 4] = m * p[0]
    out[2, 5] = 0.0
    for r in range(3):
        for c in range(3):
            out[3 + r, c] = out[c, 3 + r]


@njit(cache=True)
def first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint,
                     cframe, cparent, corder, gvec, q, dq, R, P, S, V, Vp, Ic, h, G, Lq, Lv):
    """One O(n) pass: kinematics, velocities, composite inertias and momenta, in place.

    Outputs ``R (nf, 3, 3)``, ``P (nf, 3)``, ``S, V, Vp, h (nq, 6)``, ``Ic (nq, 6, 6)``,
    ``Lq, Lv (nq,)`` (partials of L = T - Vg: kinetic energy minus gravity potential);
    ``G (6, 6)`` is scratch.  Returns ``(T, Vg)``.
    """
    nq = q.shape[0]
    forward_kinematics_into(parent, kind, value, fcfg, fixedR, fixedp, q, R, P)
    joint_twists_into(kind, cframe, corder, R, P, S)
    for c in range(nq):
        Lq[c] = 0.0
        Lv[c] = 0.0
        for r in range(6):
            V[c, r] = 0.0
            Vp[c, r] = 0.0
            h[c, r] = 0.0
            for k in range(6):
                Ic[c, r, k] = 0.0
    for j in range(corder.shape[0]):
        c = corder[j]
        pc = cparent[c]
        for r in range(6):
            vp = V[pc, r] if pc >= 0 else 0.0 * V[c, r]
            Vp[c, r] = vp
            V[c, r] = vp + S[c, r] * dq[c]
    T = 0.0 * G[0, 0]
    Vg = 0.0 * G[0, 0]
    for jj in range(mass_frames.shape[0]):
        f = mass_frames[jj]
        m = mass[f]
        Vg -= m * (gvec[0] * P[f, 0] + gvec[1] * P[f, 1] + gvec[2] * P[f, 2])
        c = fjoint[f]
        if c < 0:
            continue
        spatial_inertia(R[f], P[f], m, Ib[f], G)
        for r in range(6):
            acc = 0.0 * G[0, 0]
            for k in range(6):
                Ic[c, r, k] += G[r, k]
                acc += G[r, k] * V[c, k]
            h[c, r] += acc
            T += 0.5 * V[c, r] * acc
    for j in range(corder.shape[0] - 1, -1, -1):
        c = corder[j]
        pc = cparent[c]
        if pc >= 0:
            for r in range(6):
                h[pc, r] += h[c, r]
                for k in range(6):
                    Ic[pc, r, k] += Ic[c, r, k]
    for j in range(corder.shape[0]):
        c = corder[j]
        # u = ad(S_c) Vp_c
        w0, w1, w2, v0, v1, v2 = S[c, 0], S[c, 1], S[c, 2], S[c, 3], S[c, 4], S[c, 5]
        a0, a1, a2, b0, b1, b2 = Vp[c, 0], Vp[c, 1], Vp[c, 2], Vp[c, 3], Vp[c, 4], Vp[c, 5]
        u0 = w1 * a2 - w2 * a1
        u1 = w2 * a0 - w0 * a2
        u2 = w0 * a1 - w1 * a0
        u3 = v1 * a2 - v2 * a1 + w1 * b2 - w2 * b1
        u4 = v2 * a0 - v0 * a2 + w2 * b0 - w0 * b2
        u5 = v0 * a1 - v1 * a0 + w0 * b1 - w1 * b0
        lq = -(h[c, 0] * u0 + h[c, 1] * u1 + h[c, 2] * u2 + h[c, 3] * u3 + h[c, 4] * u4
               + h[c, 5] * u5)
        lv = 0.0 * lq
        for r in range(6):
            lv += S[c, r] * h[c, r]
            # gravity wrench on the subtree: Ic gamma with gamma = (0, g)
            lq += S[c, r] * (Ic[c, r, 3] * gvec[0] + Ic[c, r, 4] * gvec[1]
                             + Ic[c, r, 5] * gvec[2])
        Lv[c] = lv
        Lq[c] = lq
    return T, Vg


@njit(cache=True)
def first_order(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint,
                cframe, cparent, corder, gvec, q, dq):
    """Allocating form of :func:`first_order_into`.

    Returns ``(R, P, S, Vp, Ic, h, Lq, Lv, T, Vg)``.
    """
    nq = q.shape[0]
    nf = parent.shape[0]
    dt = q.dtype
    R = np.zeros((nf, 3, 3), dtype=dt)
    P = np.zeros((nf, 3), dtype=dt)
    S = np.zeros((nq, 6), dtype=dt)
    V = np.zeros((nq, 6), dtype=dt)
    Vp = np.zeros((nq, 6), dtype=dt)
    Ic = np.zeros((nq, 6, 6), dtype=dt)
    h = np.zeros((nq, 6), dtype=dt)
    G = np.zeros((6, 6), dtype=dt)
    Lq = np.zeros(nq, dtype=dt)
    Lv = np.zeros(nq, dtype=dt)
    T, Vg = first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames,
                             fjoint, cframe, cparent, corder, gvec, q, dq, R, P, S, V, Vp, Ic,
                             h, G, Lq, Lv)
    return R, P, S, Vp, Ic, h, Lq, Lv, T, Vg


@njit(cache=True)
def second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, u, w, z, gk, tmp):
    """Mass matrix ``M``, ``Lvq[a, b] = d L_v[a] / d q_b`` and ``Lqq``, all ``(nq, nq)``,
    written in place (``u, w, z, gk (nq, 6)`` and ``tmp (3, 6)`` are scratch).

    Pairs on different branches give zero; for a pair with deeper config ``m`` and
    shallower ``o`` (``u_k = ad(S_k) Vp_k``, ``w_k = ad(S_k)^T h_k``,
    ``z_k = ad(S_k)^T Ic_k gamma``, ``g_k = ad(S_k) gamma``, ``gamma = (0, g)``)::

        M[a, b]   = S_a . Ic_m S_b
        Lvq[a, b] = -S_a . Ic_m u_b - [a <= b] w_b . S_a
        Lqq[a, b] = u_a . Ic_m u_b + w_m . u_o - S_a . Ic_m g_b - [a <= b] z_b . S_a

    where ``[a <= b]`` is 1 when ``a`` is an ancestor of (or equal to) ``b``.  Per deeper
    config m the products Ic_m S_m, Ic_m u_m, Ic_m g_m are formed once; every pair term is
    then a 6-vector dot product (Ic_m is symmetric), so the cost is O(n) + O(n^2).
    """
    nq = S.shape[0]
    nj = corder.shape[0]
    zero = 0.0 * S[0, 0] if nq > 0 else 0.0 * gvec[0]
    for a in range(nq):
        for b in range(nq):
            M[a, b] = zero
            Lvq[a, b] = zero
            Lqq[a, b] = zero
    g0, g1, g2 = gvec[0], gvec[1], gvec[2]
    for j in range(nj):
        c = corder[j]
        w0, w1, w2, v0, v1, v2 = S[c, 0], S[c, 1], S[c, 2], S[c, 3], S[c, 4], S[c, 5]
        # u = ad(S) Vp
        a0, a1, a2, b0, b1, b2 = Vp[c, 0], Vp[c, 1], Vp[c, 2], Vp[c, 3], Vp[c, 4], Vp[c, 5]
        u[c, 0] = w1 * a2 - w2 * a1
        u[c, 1] = w2 * a0 - w0 * a2
        u[c, 2] = w0 * a1 - w1 * a0
        u[c, 3] = v1 * a2 - v2 * a1 + w1 * b2 - w2 * b1
        u[c, 4] = v2 * a0 - v0 * a2 + w2 * b0 - w0 * b2
        u[c, 5] = v0 * a1 - v1 * a0 + w0 * b1 - w1 * b0
        # w = ad(S)^T h
        a0, a1, a2, b0, b1, b2 = h[c, 0], h[c, 1], h[c, 2], h[c, 3], h[c, 4], h[c, 5]
        w[c, 0] = -(w1 * a2 - w2 * a1) - (v1 * b2 - v2 * b1)
        w[c, 1] = -(w2 * a0 - w0 * a2) - (v2 * b0 - v0 * b2)
        w[c, 2] = -(w0 * a1 - w1 * a0) - (v0 * b1 - v1 * b0)
        w[c, 3] = -(w1 * b2 - w2 * b1)
        w[c, 4] = -(w2 * b0 - w0 * b2)
        w[c, 5] = -(w0 * b1 - w1 * b0)
        # z = ad(S)^T (Ic gamma)
        a0 = Ic[c, 0, 3] * g0 + Ic[c, 0, 4] * g1 + Ic[c, 0, 5] * g2
        a1 = Ic[c, 1, 3] * g0 + Ic[c, 1, 4] * g1 + Ic[c, 1, 5] * g2
        a2 = Ic[c, 2, 3] * g0 + Ic[c, 2, 4] * g1 + Ic[c, 2, 5] * g2
        b0 = Ic[c, 3, 3] * g0 + Ic[c, 3, 4] * g1 + Ic[c, 3, 5] * g2
        b1 = Ic[c, 4, 3] * g0 + Ic[c, 4, 4] * g1 + Ic[c, 4, 5] * g2
        b2 = Ic[c, 5, 3] * g0 + Ic[c, 5, 4] * g1 + Ic[c, 5, 5] * g2
        z[c, 0] = -(w1 * a2 - w2 * a1) - (v1 * b2 - v2 * b1)
        z[c, 1] = -(w2 * a0 - w0 * a2) - (v2 * b0 - v0 * b2)
        z[c, 2] = -(w0 * a1 - w1 * a0) - (v0 * b1 - v1 * b0)
        z[c, 3] = -(w1 * b2 - w2 * b1)
        z[c, 4] = -(w2 * b0 - w0 * b2)
        z[c, 5] = -(w0 * b1 - w1 * b0)
        # g = ad(S) gamma = (0, w x g)
        gk[c, 0] = zero
        gk[c, 1] = zero
        gk[c, 2] = zero
        gk[c, 3] = w1 * g2 - w2 * g1
        gk[c, 4] = w2 * g0 - w0 * g2
        gk[c, 5] = w0 * g1 - w1 * g0
    ISm = tmp[0]
    Iu = tmp[1]
    Igm = tmp[2]
    for jm in range(nj):
        m = corder[jm]
        for r in range(6):
            a1 = zero
            a2 = zero
            a3 = zero
            for k in range(6):
                icm = Ic[m, r, k]
                a1 += icm * S[m, k]
                a2 += icm * u[m, k]
                a3 += icm * gk[m, k]
            ISm[r] = a1
            Iu[r] = a2
            Igm[r] = a3
        for jo in range(jm + 1):
            o = corder[jo]
            if not anc[o, m]:
                continue
            mm = zero
            lvq_om = zero
            lqq_om = zero
            wmuo = zero
            lvq_mo = zero
            lqq_mo = zero
            for r in range(6):
                so = S[o, r]
                uo = u[o, r]
                mm += so * ISm[r]
                lvq_om -= so * (Iu[r] + w[m, r])
                lqq_om += uo * Iu[r] - so * (Igm[r] + z[m, r])
                wmuo += w[m, r] * uo
                lvq_mo -= ISm[r] * uo
                lqq_mo += Iu[r] * uo - ISm[r] * gk[o, r]
            M[o, m] = mm
            M[m, o] = mm
            Lvq[o, m] = lvq_om
            Lqq[o, m] = lqq_om + wmuo
            if o != m:
                Lvq[m, o] = lvq_mo
                Lqq[m, o] = lqq_mo + wmuo


@njit(cache=True)
def second_order(S, Vp, Ic, h, gvec, anc, corder):
    """Allocating form of :func:`second_order_into`: returns ``(M, Lvq, Lqq)``."""
    nq = S.shape[0]
    M = np.zeros((nq, nq), dtype=S.dtype)
    Lvq = np.zeros((nq, nq), dtype=S.dtype)
    Lqq = np.zeros((nq, nq), dtype=S.dtype)
    u = np.zeros((nq, 6), dtype=S.dtype)
    w = np.zeros((nq, 6), dtype=S.dtype)
    z = np.zeros((nq, 6), dtype=S.dtype)
    gk = np.zeros((nq, 6), dtype=S.dtype)
    tmp = np.zeros((3, 6), dtype=S.dtype)
    second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, u, w, z, gk, tmp)
    return M, Lvq, Lqq


@njit(cache=True)
def lagrangian_terms(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint,
                     cframe, cparent, corder, anc, gvec, q, dq):
    """``(Lq, Lv, M, Lvq, Lqq, T, Vg)`` of kinetic energy minus gravity at ``(q, dq)``."""
    R, P, S, Vp, Ic, h, Lq, Lv, T, Vg = first_order(
        parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint,
        cframe, cparent, corder, gvec, q, dq)
    M, Lvq, Lqq = second_order(S, Vp, Ic, h, gvec, anc, corder)
    return Lq, Lv, M, Lvq, Lqq, T, Vg


# ---------------------------------------------------------------------- mimic reduction
# A mimic frame follows a config linearly: theta = multiplier * q_leader + offset.  The
# kernels above run on the joint coordinates theta (configs first, then one per mimic
# frame); with the constant map theta = E q + b (E = [I; A], A one entry per mimic row),
# every derivative of L with respect to q is E^T (derivative w.r.t. theta) E, which
# :func:`fold_vector` and :func:`fold_matrix` form in place.

@njit(cache=True)
def expand_into(q, dq, leader, multiplier, offset, theta, dtheta):
    """Joint coordinates ``theta (nt,)`` and rates ``dtheta (nt,)`` of configs ``q, dq (nq,)``
    (``leader, multiplier, offset (nt - nq,)`` describe the mimic frames)."""
    nq = q.shape[0]
    for i in range(nq):
        theta[i] = q[i]
        dtheta[i] = dq[i]
    for k in range(leader.shape[0]):
        theta[nq + k] = multiplier[k] * q[leader[k]] + offset[k]
        dtheta[nq + k] = multiplier[k] * dq[leader[k]]


@njit(cache=True)
def fold_vector(x, nq, leader, multiplier):
    """``x[:nq] <- (E^T x)``: a gradient over joint coordinates (nt,) folded onto configs."""
    for k in range(leader.shape[0]):
        x[leader[k]] += multiplier[k] * x[nq + k]


@njit(cache=True)
def fold_matrix(A, nq, leader, multiplier):
    """``A[:nq, :nq] <- E^T A E`` for a (nt, nt) matrix of second derivatives."""
    nt = A.shape[0]
    for k in range(leader.shape[0]):          # rows: E^T A
        r = leader[k]
        a = multiplier[k]
        for j in range(nt):
            A[r, j] += a * A[nq + k, j]
    for k in range(leader.shape[0]):          # columns: (E^T A) E
        c = leader[k]
        a = multiplier[k]
        for i in range(nq):
            A[i, c] += a * A[i, nq + k]
