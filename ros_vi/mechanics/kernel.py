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
def tree_factor_in_place(A, cparent, corder):
    """Factor ``A`` (n, n) in place, for a matrix with the tree's sparsity, as ``L U``
    (unit lower L: the multipliers, stored where they eliminated; U above), for
    :func:`tree_substitute`.

    The configs are ``0..n-1`` of the tree ``cparent``/``corder`` (:class:`Model`; deeper
    coordinates and those ``>= n``, the kinematic ones, are skipped on the paths), and
    ``A[a, b]`` may be nonzero only when one of a, b is an ancestor-or-self of the other:
    the mass matrix, the DEL's Newton matrix and their sums with diagonals have that
    pattern (pairs on different branches are exactly zero).  Gaussian elimination without
    pivoting, deepest coordinates first: eliminating one changes only the entries between
    its ancestors, which lie on one path and are in the pattern already, so nothing fills
    in and the cost is O(sum of depth^2) instead of O(n^3) (the branch-induced sparsity of
    Featherstone's LTL factorisation, here for the non-symmetric Newton matrix).  Without
    pivoting it needs nonzero pivots: a matrix near -M/dt (M positive definite) has them.
    Returns False when a pivot is zero, not finite or below 1e-13 of the largest diagonal
    entry; A is then partly overwritten (the caller falls back on a copy)."""
    n = A.shape[0]
    big = 0.0
    for k in range(n):
        big = max(big, abs(A[k, k]))
    floor = 1e-13 * big
    for jj in range(corder.shape[0] - 1, -1, -1):
        k = corder[jj]
        if k >= n:
            continue
        d = A[k, k]
        if not abs(d) > floor or not np.isfinite(d):
            return False
        inv = 1.0 / d
        i = cparent[k]
        while i >= 0:
            if i < n:
                f = A[i, k] * inv
                A[i, k] = f
                if f != 0.0:
                    j = cparent[k]
                    while j >= 0:
                        if j < n:
                            A[i, j] -= f * A[k, j]
                        j = cparent[j]
            i = cparent[i]
    return True


@njit(cache=True)
def tree_substitute(A, B, cparent, corder):
    """Solve with the factors of :func:`tree_factor_in_place`: B (n, m) becomes
    ``A^-1 B`` (A unchanged, so one factorisation serves several solves)."""
    n = A.shape[0]
    m = B.shape[1]
    # forward: deepest first, each config's value into its ancestors'
    for jj in range(corder.shape[0] - 1, -1, -1):
        k = corder[jj]
        if k >= n:
            continue
        i = cparent[k]
        while i >= 0:
            if i < n:
                f = A[i, k]
                if f != 0.0:
                    for c in range(m):
                        B[i, c] -= f * B[k, c]
            i = cparent[i]
    # back substitution, root first: row k of U holds only k and its ancestors
    for jj in range(corder.shape[0]):
        k = corder[jj]
        if k >= n:
            continue
        inv = 1.0 / A[k, k]
        for c in range(m):
            acc = B[k, c]
            i = cparent[k]
            while i >= 0:
                if i < n:
                    acc -= A[k, i] * B[i, c]
                i = cparent[i]
            B[k, c] = acc * inv


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
def residual_terms_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames,
                        fjoint, cframe, cparent, corder, gvec, q, dq, R, P, S, V, Vp, Ic, h,
                        Lq, Lv):
    """The O(n) pass a DEL residual needs: kinematics, velocities, subtree momenta and
    the partials of L, in place, without the composite inertias.

    Outputs ``R (nf, 3, 3)``, ``P (nf, 3)``, ``S, V, Vp, h (nq, 6)``, ``Lq, Lv (nq,)``
    (partials of L = T - Vg: kinetic energy minus gravity potential).  A body's momentum
    is formed from its own inertia (angular ``R Ib R^T w + p x l``, linear
    ``l = m (v + w x p)`` for its twist ``(w, v)`` and mass centre ``p``), and the gravity
    term of ``L_q`` from the subtree's gravity wrench ``(sum m p x g, sum m g)``, which
    the rows ``Ic[:, 0]`` hold here (scratch: :func:`composite_inertias_into` fills Ic when
    the second-order terms need it).  Returns ``(T, Vg)``.
    """
    nq = q.shape[0]
    forward_kinematics_into(parent, kind, value, fcfg, fixedR, fixedp, q, R, P)
    joint_twists_into(kind, cframe, corder, R, P, S)
    wg = Ic[:, 0]                 # (nq, 6) subtree gravity wrench
    for c in range(nq):
        Lq[c] = 0.0
        Lv[c] = 0.0
        for r in range(6):
            V[c, r] = 0.0
            Vp[c, r] = 0.0
            h[c, r] = 0.0
            wg[c, r] = 0.0
    for j in range(corder.shape[0]):
        c = corder[j]
        pc = cparent[c]
        for r in range(6):
            vp = V[pc, r] if pc >= 0 else 0.0 * V[c, r]
            Vp[c, r] = vp
            V[c, r] = vp + S[c, r] * dq[c]
    T = 0.0 * R[0, 0, 0]
    Vg = 0.0 * R[0, 0, 0]
    g0, g1, g2 = gvec[0], gvec[1], gvec[2]
    for jj in range(mass_frames.shape[0]):
        f = mass_frames[jj]
        m = mass[f]
        p0, p1, p2 = P[f, 0], P[f, 1], P[f, 2]
        Vg -= m * (g0 * p0 + g1 * p1 + g2 * p2)
        c = fjoint[f]
        if c < 0:
            continue
        w0, w1, w2, v0, v1, v2 = V[c, 0], V[c, 1], V[c, 2], V[c, 3], V[c, 4], V[c, 5]
        # R Ib R^T w, through the body axes
        Rf = R[f]
        Ibf = Ib[f]
        b0 = Rf[0, 0] * w0 + Rf[1, 0] * w1 + Rf[2, 0] * w2
        b1 = Rf[0, 1] * w0 + Rf[1, 1] * w1 + Rf[2, 1] * w2
        b2 = Rf[0, 2] * w0 + Rf[1, 2] * w1 + Rf[2, 2] * w2
        e0 = Ibf[0, 0] * b0 + Ibf[0, 1] * b1 + Ibf[0, 2] * b2
        e1 = Ibf[1, 0] * b0 + Ibf[1, 1] * b1 + Ibf[1, 2] * b2
        e2 = Ibf[2, 0] * b0 + Ibf[2, 1] * b1 + Ibf[2, 2] * b2
        # linear momentum m (v + w x p) and angular R Ib R^T w + p x l about the origin
        l0 = m * (v0 + w1 * p2 - w2 * p1)
        l1 = m * (v1 + w2 * p0 - w0 * p2)
        l2 = m * (v2 + w0 * p1 - w1 * p0)
        k0 = Rf[0, 0] * e0 + Rf[0, 1] * e1 + Rf[0, 2] * e2 + p1 * l2 - p2 * l1
        k1 = Rf[1, 0] * e0 + Rf[1, 1] * e1 + Rf[1, 2] * e2 + p2 * l0 - p0 * l2
        k2 = Rf[2, 0] * e0 + Rf[2, 1] * e1 + Rf[2, 2] * e2 + p0 * l1 - p1 * l0
        h[c, 0] += k0
        h[c, 1] += k1
        h[c, 2] += k2
        h[c, 3] += l0
        h[c, 4] += l1
        h[c, 5] += l2
        T += 0.5 * (w0 * k0 + w1 * k1 + w2 * k2 + v0 * l0 + v1 * l1 + v2 * l2)
        # gravity wrench (m p x g, m g)
        wg[c, 0] += m * (p1 * g2 - p2 * g1)
        wg[c, 1] += m * (p2 * g0 - p0 * g2)
        wg[c, 2] += m * (p0 * g1 - p1 * g0)
        wg[c, 3] += m * g0
        wg[c, 4] += m * g1
        wg[c, 5] += m * g2
    for j in range(corder.shape[0] - 1, -1, -1):
        c = corder[j]
        pc = cparent[c]
        if pc >= 0:
            for r in range(6):
                h[pc, r] += h[c, r]
                wg[pc, r] += wg[c, r]
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
            lq += S[c, r] * wg[c, r]      # the gravity wrench on the subtree
        Lv[c] = lv
        Lq[c] = lq
    return T, Vg


@njit(cache=True)
def composite_inertias_into(R, P, mass, Ib, mass_frames, fjoint, cparent, corder, G, Ic):
    """Composite spatial inertia ``Ic (nq, 6, 6)`` (world frame) of the subtree of every
    config, in place, from the kinematics ``R, P`` of :func:`residual_terms_into`; ``G
    (6, 6)`` is scratch."""
    for c in range(Ic.shape[0]):
        for r in range(6):
            for k in range(6):
                Ic[c, r, k] = 0.0
    for jj in range(mass_frames.shape[0]):
        f = mass_frames[jj]
        c = fjoint[f]
        if c < 0:
            continue
        spatial_inertia(R[f], P[f], mass[f], Ib[f], G)
        for r in range(6):
            for k in range(6):
                Ic[c, r, k] += G[r, k]
    for j in range(corder.shape[0] - 1, -1, -1):
        c = corder[j]
        pc = cparent[c]
        if pc >= 0:
            for r in range(6):
                for k in range(6):
                    Ic[pc, r, k] += Ic[c, r, k]


@njit(cache=True)
def first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint,
                     cframe, cparent, corder, gvec, q, dq, R, P, S, V, Vp, Ic, h, G, Lq, Lv):
    """One O(n) pass: kinematics, velocities, composite inertias and momenta, in place
    (:func:`residual_terms_into`, then :func:`composite_inertias_into`).

    Outputs ``R (nf, 3, 3)``, ``P (nf, 3)``, ``S, V, Vp, h (nq, 6)``, ``Ic (nq, 6, 6)``,
    ``Lq, Lv (nq,)`` (partials of L = T - Vg: kinetic energy minus gravity potential);
    ``G (6, 6)`` is scratch.  Returns ``(T, Vg)``.
    """
    T, Vg = residual_terms_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib,
                                mass_frames, fjoint, cframe, cparent, corder, gvec, q, dq, R,
                                P, S, V, Vp, Ic, h, Lq, Lv)
    composite_inertias_into(R, P, mass, Ib, mass_frames, fjoint, cparent, corder, G, Ic)
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


@njit(cache=True)
def fold_axis(A, nq, leader, multiplier):
    """``A[:, :nq, :] <- E^T`` along the middle axis of ``A (n, nt, m)``, in place: a stack of
    derivatives over joint coordinates folded onto configs (any axis of a C-contiguous
    array, seen as (before, nt, after); rows nq.. keep their values)."""
    for b in range(A.shape[0]):
        for k in range(leader.shape[0]):
            r = leader[k]
            a = multiplier[k]
            for j in range(A.shape[2]):
                A[b, r, j] += a * A[b, nq + k, j]


# ---------------------------------------------------------------------------------------
# Frame-attached world vectors and the built-in terms on them (the general path's batches)
#
# A point fixed in a frame (its origin) or a direction fixed in it (world value x = R n)
# moves with the joint coordinates of the frame's chain; with S_a = (w_a, v_a) and a, b in
# the chain, a shallower than or equal to b:
#     dx/dq_a = w_a x x (+ v_a for a point),     d2x/dq_a dq_b = w_a x dx/dq_b
# and zero for coordinates outside the chain.  These two formulas are written once, in
# vector_rate and cross (every derivative of a frame vector or pose in ros_vi comes from
# frame_vectors, see ros_vi.mechanics.framevectors).  Paired with a force f at the point,
# the first derivative reads g . dx/dq_a = S_a . (x x f, f): twist_dot_wrench, the form the
# compiled constraint Jacobian and the collision separation rates use (O(1) per coordinate
# for a whole wrench; test/test_mechanics_formulas.py compares the two forms).
# frame_vectors and wrench_twists run on the joint coordinates (S (nt, 6)); their callers
# fold the results onto the configs (Model.fold) when there are mimic frames, and
# linear_springs and frame_dots take those folded config derivatives.


@njit(cache=True)
def cross(a0, a1, a2, b0, b1, b2):
    """The cross product a x b of two 3-vectors given by their components."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def vector_rate(S, a, x0, x1, x2, point):
    """dx/dq_a (3 components) of the world vector ``x`` fixed in a frame that joint
    coordinate ``a`` moves: ``w_a x x``, plus ``v_a`` when ``point`` (x is a point, not a
    direction); ``S (nt, 6)`` the unit twists ``(w, v)``."""
    d0, d1, d2 = cross(S[a, 0], S[a, 1], S[a, 2], x0, x1, x2)
    if point:
        d0 = d0 + S[a, 3]
        d1 = d1 + S[a, 4]
        d2 = d2 + S[a, 5]
    return d0, d1, d2


@njit(cache=True)
def twist_dot_wrench(S, c, m0, m1, m2, f0, f1, f2):
    """``S_c . (m, f)``: the virtual work per unit dq_c of the wrench with moment ``m`` about
    the world origin and force ``f`` (world frame), i.e. ``f . dp/dq_c`` for a force f at a
    point p when ``m = p x f`` (see :func:`vector_rate`)."""
    return (S[c, 0] * m0 + S[c, 1] * m1 + S[c, 2] * m2
            + S[c, 3] * f0 + S[c, 4] * f1 + S[c, 5] * f2)


@njit(cache=True)
def frame_vectors(R, P, S, item_frame, item_dir, item_point, chain_ptr, chain_cfg, order):
    """World vectors of ``k`` items and their config derivatives up to ``order`` (1 or 2).

    Item ``i`` is the origin of frame ``item_frame[i]`` (``item_point[i]`` True) or the
    direction ``item_dir[i]`` (3,) fixed in that frame; ``chain_cfg[chain_ptr[i]:
    chain_ptr[i + 1]]`` are the joint coordinates that move the frame, shallow to deep.
    Returns ``X (k, 3)``, ``D1 (k, nt, 3)`` and ``D2 (k, nt, nt, 3)`` (empty (k, 0, 0, 3)
    for order 1), derivatives over the joint coordinates (nt = S.shape[0]), in the units of
    the vectors per rad or m.
    """
    k = item_frame.shape[0]
    nq = S.shape[0]
    X = np.zeros((k, 3))
    D1 = np.zeros((k, nq, 3))
    n2 = nq if order >= 2 else 0
    D2 = np.zeros((k, n2, n2, 3))
    for i in range(k):
        f = item_frame[i]
        if item_point[i]:
            x0, x1, x2 = P[f, 0], P[f, 1], P[f, 2]
        else:
            n = item_dir[i]
            x0 = R[f, 0, 0] * n[0] + R[f, 0, 1] * n[1] + R[f, 0, 2] * n[2]
            x1 = R[f, 1, 0] * n[0] + R[f, 1, 1] * n[1] + R[f, 1, 2] * n[2]
            x2 = R[f, 2, 0] * n[0] + R[f, 2, 1] * n[1] + R[f, 2, 2] * n[2]
        X[i, 0], X[i, 1], X[i, 2] = x0, x1, x2
        lo, hi = chain_ptr[i], chain_ptr[i + 1]
        for j in range(lo, hi):
            a = chain_cfg[j]
            D1[i, a, 0], D1[i, a, 1], D1[i, a, 2] = vector_rate(S, a, x0, x1, x2,
                                                                item_point[i])
        if order >= 2:
            for j1 in range(lo, hi):
                a = chain_cfg[j1]
                w0, w1, w2 = S[a, 0], S[a, 1], S[a, 2]
                for j2 in range(j1, hi):
                    b = chain_cfg[j2]
                    c0, c1, c2 = cross(w0, w1, w2, D1[i, b, 0], D1[i, b, 1], D1[i, b, 2])
                    D2[i, a, b, 0], D2[i, a, b, 1], D2[i, a, b, 2] = c0, c1, c2
                    D2[i, b, a, 0], D2[i, b, a, 1], D2[i, b, a, 2] = c0, c1, c2
    return X, D1, D2


@njit(cache=True)
def linear_springs(X, D1, D2, end1, end2, cfg_ptr, cfg, k, x0, order, zero_length):
    """Energies and derivatives of springs ``V = 1/2 k (x - x0)^2``, ``x = |X[end2] -
    X[end1]|`` (rows of :func:`frame_vectors` with derivatives over configs,
    ``FrameVectors.get``), each spring on its own.

    ``cfg[cfg_ptr[s]:cfg_ptr[s + 1]]`` are the configs that move either end of spring s
    (its derivatives are zero in the others).  Returns ``V (ns,)`` [J], ``V_q (ns, nq)``,
    ``V_qq (ns, nq, nq)`` (empty for order < 2), ``degenerate (ns,)`` bool: springs with
    ``x0 != 0`` shorter than ``zero_length``, whose derivatives do not exist (left zero),
    the sums over the springs of V_q (nq,) and V_qq (nq, nq) (empty for order < 2), and
    whether any spring is degenerate.
    A spring with ``x0 == 0`` is evaluated as ``1/2 k |v|^2``, smooth everywhere.
    """
    ns = end1.shape[0]
    nq = D1.shape[1]
    V = np.zeros(ns)
    Vq = np.zeros((ns, nq))
    n2 = nq if order >= 2 else 0
    Vqq = np.zeros((ns, n2, n2))
    Vq_sum = np.zeros(nq)
    Vqq_sum = np.zeros((n2, n2))
    s1 = np.zeros(nq)
    d1 = np.zeros((nq, 3))
    bad = np.zeros(ns, dtype=np.bool_)
    any_bad = False
    for s in range(ns):
        a, b = end1[s], end2[s]
        v0 = X[b, 0] - X[a, 0]
        v1 = X[b, 1] - X[a, 1]
        v2 = X[b, 2] - X[a, 2]
        vv = v0 * v0 + v1 * v1 + v2 * v2
        smooth = x0[s] == 0.0
        if smooth:
            V[s] = k[s] * (0.5 * vv)
        else:
            e = np.sqrt(vv) - x0[s]
            V[s] = 0.5 * k[s] * e * e
        if order < 1:
            continue
        x = np.sqrt(vv)
        if not smooth and not x > zero_length:
            bad[s] = True
            any_bad = True
            continue
        lo, hi = cfg_ptr[s], cfg_ptr[s + 1]
        for j in range(lo, hi):
            c = cfg[j]
            for r in range(3):
                d1[c, r] = D1[b, c, r] - D1[a, c, r]
            s1[c] = d1[c, 0] * v0 + d1[c, 1] * v1 + d1[c, 2] * v2    # d(|v|^2 / 2)/dq_c
            if smooth:
                Vq[s, c] = k[s] * s1[c]
            else:
                Vq[s, c] = k[s] * (x - x0[s]) * (s1[c] / x)
            Vq_sum[c] += Vq[s, c]
        if order < 2:
            continue
        for j in range(lo, hi):
            c = cfg[j]
            for j2 in range(j, hi):
                c2 = cfg[j2]
                s2 = ((D2[b, c, c2, 0] - D2[a, c, c2, 0]) * v0
                      + (D2[b, c, c2, 1] - D2[a, c, c2, 1]) * v1
                      + (D2[b, c, c2, 2] - D2[a, c, c2, 2]) * v2
                      + d1[c, 0] * d1[c2, 0] + d1[c, 1] * d1[c2, 1] + d1[c, 2] * d1[c2, 2])
                if smooth:
                    val = k[s] * s2
                else:
                    xa, xb = s1[c] / x, s1[c2] / x
                    val = k[s] * (xa * xb + (x - x0[s]) * ((s2 - xa * xb) / x))
                Vqq[s, c, c2] = val
                Vqq_sum[c, c2] += val
                if c2 != c:
                    Vqq[s, c2, c] = val
                    Vqq_sum[c2, c] += val
    return V, Vq, Vqq, bad, Vq_sum, Vqq_sum, any_bad


# wrench kinds of wrench_twists
BODY_WRENCH, HYBRID_WRENCH, SPATIAL_WRENCH = 0, 1, 2


@njit(cache=True)
def _ad(w0, w1, w2, v0, v1, v2, x0, x1, x2, y0, y1, y2):
    """ad_(w, v) (x, y) = (w x x, w x y + v x x) for twists (angular, linear)."""
    return (w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0,
            w1 * y2 - w2 * y1 + v1 * x2 - v2 * x1,
            w2 * y0 - w0 * y2 + v2 * x0 - v0 * x2,
            w0 * y1 - w1 * y0 + v0 * x1 - v1 * x0)


@njit(cache=True)
def wrench_twists(R, P, S, frame, kind, chain_ptr, chain_cfg, W, order):
    """Virtual twists of wrenches applied to frames, and their config derivatives.

    Wrench ``w`` acts on frame ``frame[w]`` (joint coordinates ``chain_cfg[chain_ptr[w]:
    chain_ptr[w + 1]]``, shallow to deep) and is expressed as ``kind[w]``:
    BODY_WRENCH (frame axes, at the origin), HYBRID_WRENCH (world axes, at the origin) or
    SPATIAL_WRENCH (world axes, at the world origin).  The generalized force on joint
    coordinate i is ``T0[w, i] . wrench`` with the twist ``T0 (nw, nt, 6)`` ordered
    (linear, angular) like the wrench (force, torque); ``T1 (nw, nt, nt, 6)`` [w, i, a] is
    its derivative in theta_a (empty for order 0).  Also returns the generalized force of
    the wrenches ``W (nw, 6)``, summed: ``F (nt,)`` and its derivative ``F_q (nt, nt)``
    (empty for order 0); nt = S.shape[0], all over joint coordinates.
    With S_i = (w_i, v_i), p, R the frame's origin and rotation:

    * spatial: ``T_i = S_i``;  ``dT_i/dq_a = ad(S_a) S_i`` for a shallower than i
    * hybrid:  ``T_i = (w_i x p + v_i, w_i)``;  ``d/dq_a = (w_o x (w_m x p + v_m),
      [a shallower than i] w_a x w_i)`` (o, m the shallower, deeper of a, i)
    * body:    ``T_i = Ad(g^-1) S_i``;  ``d/dq_a = Ad(g^-1) ad(S_i) S_a`` for a deeper
      than or equal to i
    """
    nw = frame.shape[0]
    nq = S.shape[0]
    T0 = np.zeros((nw, nq, 6))
    n1 = nq if order >= 1 else 0
    T1 = np.zeros((nw, n1, n1, 6))
    for w in range(nw):
        f = frame[w]
        k = kind[w]
        p0, p1, p2 = P[f, 0], P[f, 1], P[f, 2]
        lo, hi = chain_ptr[w], chain_ptr[w + 1]
        for j in range(lo, hi):
            i = chain_cfg[j]
            a0, a1, a2, b0, b1, b2 = S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5]
            if k == SPATIAL_WRENCH:
                l0, l1, l2 = b0, b1, b2
            else:
                # velocity of the frame origin per unit dq_i: w_i x p + v_i
                l0, l1, l2 = vector_rate(S, i, p0, p1, p2, True)
            if k == BODY_WRENCH:
                for r in range(3):
                    T0[w, i, r] = R[f, 0, r] * l0 + R[f, 1, r] * l1 + R[f, 2, r] * l2
                    T0[w, i, 3 + r] = R[f, 0, r] * a0 + R[f, 1, r] * a1 + R[f, 2, r] * a2
            else:
                T0[w, i, 0], T0[w, i, 1], T0[w, i, 2] = l0, l1, l2
                T0[w, i, 3], T0[w, i, 4], T0[w, i, 5] = a0, a1, a2
        if order < 1:
            continue
        for j1 in range(lo, hi):
            i = chain_cfg[j1]
            for j2 in range(lo, hi):
                a = chain_cfg[j2]
                if k == HYBRID_WRENCH:
                    o, m = (a, i) if j2 <= j1 else (i, a)
                    # w_o x (origin velocity per unit dq_m): the origin's second derivative
                    l0, l1, l2 = vector_rate(S, m, p0, p1, p2, True)
                    T1[w, i, a, 0], T1[w, i, a, 1], T1[w, i, a, 2] = cross(
                        S[o, 0], S[o, 1], S[o, 2], l0, l1, l2)
                    if j2 < j1:
                        # w_a x w_i: the rate of the direction w_i (fixed in i's frame)
                        T1[w, i, a, 3], T1[w, i, a, 4], T1[w, i, a, 5] = cross(
                            S[a, 0], S[a, 1], S[a, 2], S[i, 0], S[i, 1], S[i, 2])
                elif k == SPATIAL_WRENCH:
                    if j2 < j1:
                        c = _ad(S[a, 0], S[a, 1], S[a, 2], S[a, 3], S[a, 4], S[a, 5],
                                S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5])
                        T1[w, i, a, 0], T1[w, i, a, 1], T1[w, i, a, 2] = c[3], c[4], c[5]
                        T1[w, i, a, 3], T1[w, i, a, 4], T1[w, i, a, 5] = c[0], c[1], c[2]
                elif j2 > j1:
                    c = _ad(S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5],
                            S[a, 0], S[a, 1], S[a, 2], S[a, 3], S[a, 4], S[a, 5])
                    # Ad(g^-1): angular R^T x, linear R^T (y + x times p)
                    y0 = c[3] + c[1] * p2 - c[2] * p1
                    y1 = c[4] + c[2] * p0 - c[0] * p2
                    y2 = c[5] + c[0] * p1 - c[1] * p0
                    for r in range(3):
                        T1[w, i, a, r] = R[f, 0, r] * y0 + R[f, 1, r] * y1 + R[f, 2, r] * y2
                        T1[w, i, a, 3 + r] = (R[f, 0, r] * c[0] + R[f, 1, r] * c[1]
                                              + R[f, 2, r] * c[2])
    F = np.zeros(nq)
    Fq = np.zeros((n1, n1))
    for w in range(nw):
        for j1 in range(chain_ptr[w], chain_ptr[w + 1]):
            i = chain_cfg[j1]
            acc = 0.0
            for r in range(6):
                acc += T0[w, i, r] * W[w, r]
            F[i] += acc
            if order >= 1:
                for j2 in range(chain_ptr[w], chain_ptr[w + 1]):
                    a = chain_cfg[j2]
                    acc = 0.0
                    for r in range(6):
                        acc += T1[w, i, a, r] * W[w, r]
                    Fq[i, a] += acc
    return T0, T1, F, Fq


@njit(cache=True)
def frame_dots(X, D1, D2, fa, fb, ga, gb, e, cfg_ptr, cfg, order):
    """Dot products ``h = f . g`` of frame vectors and their config derivatives up to
    ``order`` (1 or 2), for the built-in constraints.

    Item m: ``f = X[fa[m]] - X[fb[m]]`` (``fb[m] < 0``: no second term) and ``g = X[ga[m]]
    - X[gb[m]]`` (same rule), or the constant ``e[m]`` when ``ga[m] < 0``; rows of
    :func:`frame_vectors` with derivatives over configs (``FrameVectors.get``).
    ``cfg[cfg_ptr[m]:cfg_ptr[m + 1]]`` are the configs that move any of the vectors (each
    once).  Returns ``h (M,)``, ``h_q (M, nq)``, ``h_qq (M, nq, nq)`` (empty
    for order < 2).
    """
    M = fa.shape[0]
    nq = D1.shape[1]
    n2 = nq if order >= 2 else 0
    h = np.zeros(M)
    h1 = np.zeros((M, nq))
    h2 = np.zeros((M, n2, n2))
    f1 = np.zeros((nq, 3))
    g1 = np.zeros((nq, 3))
    f = np.zeros(3)
    g = np.zeros(3)
    for m in range(M):
        a, b, c, d = fa[m], fb[m], ga[m], gb[m]
        for r in range(3):
            f[r] = X[a, r] - X[b, r] if b >= 0 else X[a, r]
            if c < 0:
                g[r] = e[m, r]
            else:
                g[r] = X[c, r] - X[d, r] if d >= 0 else X[c, r]
        h[m] = f[0] * g[0] + f[1] * g[1] + f[2] * g[2]
        lo, hi = cfg_ptr[m], cfg_ptr[m + 1]
        for j in range(lo, hi):
            q = cfg[j]
            for r in range(3):
                f1[q, r] = D1[a, q, r] - D1[b, q, r] if b >= 0 else D1[a, q, r]
                if c < 0:
                    g1[q, r] = 0.0
                else:
                    g1[q, r] = D1[c, q, r] - D1[d, q, r] if d >= 0 else D1[c, q, r]
            h1[m, q] = (f1[q, 0] * g[0] + f1[q, 1] * g[1] + f1[q, 2] * g[2]
                        + g1[q, 0] * f[0] + g1[q, 1] * f[1] + g1[q, 2] * f[2])
        if order < 2:
            continue
        for j in range(lo, hi):
            q = cfg[j]
            for j2 in range(j, hi):
                p = cfg[j2]
                acc = 0.0
                for r in range(3):
                    f2 = D2[a, q, p, r] - D2[b, q, p, r] if b >= 0 else D2[a, q, p, r]
                    if c < 0:
                        g2 = 0.0
                    else:
                        g2 = D2[c, q, p, r] - D2[d, q, p, r] if d >= 0 else D2[c, q, p, r]
                    acc += (f2 * g[r] + g2 * f[r] + f1[q, r] * g1[p, r]
                            + f1[p, r] * g1[q, r])
                h2[m, q, p] = acc
                h2[m, p, q] = acc
    return h, h1, h2


@njit(cache=True)
def separation_rates_into(S, frame_anc, fa, fb, pa, pb, n, out):
    """First derivatives over the joint coordinates of ``n[k] . (x_b - x_a)`` where ``x_a``
    is the world point ``pa[k]`` (3,) [m] carried by frame ``fa[k]``, ``x_b`` is ``pb[k]``
    carried by frame ``fb[k]`` and the unit direction ``n[k]`` (3,) is held fixed: the
    gradient of the distance between two convex bodies whose closest points are ``pa``,
    ``pb`` and normal ``n`` (the closest points' own motion along the surfaces is
    second order).  ``frame_anc`` (nf, nt): which coordinates move each frame (world-fixed
    frames: none).  Writes ``out (k, nt)`` [m/rad or m/m].

    For a coordinate with unit twist ``S_c = (w, v)`` a point p moves at ``w x p + v``, so
    ``n . (w x p + v) = S_c . (p x n, n)`` (:func:`twist_dot_wrench`): one 6-vector per end
    instead of a Jacobian."""
    k = fa.shape[0]
    nt = S.shape[0]
    for m in range(k):
        n0, n1, n2 = n[m, 0], n[m, 1], n[m, 2]
        a0, a1, a2 = pa[m, 0], pa[m, 1], pa[m, 2]
        b0, b1, b2 = pb[m, 0], pb[m, 1], pb[m, 2]
        # (p x n, n) for each end
        ax0, ax1, ax2 = a1 * n2 - a2 * n1, a2 * n0 - a0 * n2, a0 * n1 - a1 * n0
        bx0, bx1, bx2 = b1 * n2 - b2 * n1, b2 * n0 - b0 * n2, b0 * n1 - b1 * n0
        for c in range(nt):
            acc = 0.0
            if frame_anc[fb[m], c]:
                acc += twist_dot_wrench(S, c, bx0, bx1, bx2, n0, n1, n2)
            if frame_anc[fa[m], c]:
                acc -= twist_dot_wrench(S, c, ax0, ax1, ax2, n0, n1, n2)
            out[m, c] = acc
