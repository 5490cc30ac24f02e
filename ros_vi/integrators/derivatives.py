"""First and second derivatives of a VI step on the general path, and of a subdivided step.

A step maps x = (q1 (nQ,), p1 (nQd,), u1 (nu,), k2 (nQk,)) to (q2_d, p2, lambda1); its
derivatives follow from the implicit function theorem on the DEL (the equations of
:mod:`ros_vi.integrators.general_step`) at the solved step:

* :func:`first_derivatives`: dq2/dx, dp2/dx, dlambda1/dx from the second partials of the
  discrete Lagrangian and forcing (:func:`midpoint_partials`) and the constraints'
  Jacobians (any System, NumPy; the compiled step has its own,
  :func:`ros_vi.integrators.fast_step.derivatives_packed`, which :func:`packed_first`
  arranges the same way);
* :func:`second_derivatives`: all second derivatives, from L's third partials at the
  midpoint (complex step on the compiled kernel), the forces' and constraints' second and
  third derivatives, and the first derivatives;
* :func:`composite_derivatives`: those of a step taken as substeps (the chain rule over
  them).

First derivatives are a dict of (rows, columns) arrays ``'q2_dq1'``, ``'q2_dp1'``,
``'q2_du1'``, ``'q2_dk2'``, the same for ``'p2_...'`` and ``'l1_...'`` (lambda1); second
derivatives a tuple ``(Zq (nX, nX, nd), Zp (nX, nX, nd), Zl (nX, nX, nc))`` indexed
[input1, input2, output] (trep's order) over x.
"""
import numpy as np

from ..mechanics import dynamics
from ..mechanics.free import (centre_partials, centre_partials_derivatives, recentre_jacobian,
                              start_second_partials, start_turn_partials)
from ..mechanics.contact import ContactSet
from .general_step import (border_contacts, constraint_jacobian_at, set_midpoint,
                           slip_direction)
from .newton import OPEN, STICK

_FIRST = ('_dq1', '_dp1', '_du1', '_dk2')      # the blocks of x, in order


def stacked(d):
    """{'q2', 'p2', 'l1': the first derivatives of ``d`` w.r.t. all of x, (rows, nX)}."""
    return {w: np.hstack([d[w + suffix] for suffix in _FIRST]) for w in ('q2', 'p2', 'l1')}


def _split(name, Z, nq, nd, nu):
    """``{name + '_dq1': ..., name + '_dk2': ...}``: the columns of Z (rows, nX) by block
    of x."""
    blocks = np.split(Z, (nq, nq + nd, nq + nd + nu), axis=1)
    return {name + suffix: block for suffix, block in zip(_FIRST, blocks)}


def midpoint_partials(system, dt, q1=None, q2=None):
    """Second partials of Ld and f- at the System's current (midpoint) state for a step of
    dt [s], each (nd, nQ)::

        J2 = d(D1 Ld + f-)/dq2,  J1 = d(D1 Ld + f-)/dq1,
        P2 = d(D2 Ld)/dq2,       P1 = d(D2 Ld)/dq1,   Fu = d f-/du1 (nd, nu)

    With free joints, ``q1``, ``q2`` (nQ,) are the step's ends (q1 at its charts' centres)
    and the partials are those of the moving-chart discrete Lagrangian
    (:func:`_moving_chart_partials`).
    """
    nd = system.nQd
    Lq, Lv, M, Lvq, Lqq, T, Vg = dynamics.lagrangian_terms(system.model, system.data)
    e = dynamics.applied_terms(system)
    Lqq = Lqq - e.V_dqdq
    if system.free_charts is not None:
        return _moving_chart_partials(system, dt, q2 - q1, Lq - e.V_dq, Lv, Lqq, Lvq, M, e)
    Lqv = Lvq.T
    A = 0.25 * dt * Lqq
    J2 = A + 0.5 * (Lqv - Lvq) - M / dt + 0.5 * dt * e.F_dq + e.F_ddq
    J1 = A - 0.5 * (Lqv + Lvq) + M / dt + 0.5 * dt * e.F_dq - e.F_ddq
    P2 = A + 0.5 * (Lqv + Lvq) + M / dt
    P1 = A - 0.5 * Lqv + 0.5 * Lvq - M / dt
    return J2[:nd], J1[:nd], P2[:nd], P1[:nd], dt * e.F_du[:nd]


def _moving_chart_partials(system, dt, delta, Lq, Lv, Lqq, Lvq, M, e):
    """:func:`midpoint_partials` for a System with free joints.

    Ld = dt L(m) at the midpoint m = (q_m, v_m); its dependence on the ends is ``S1 = dm/dq1``
    and ``S2 = dm/dq2`` (2 nQ, nQ): the midpoint rule's (1/2, -1/dt) and (1/2, 1/dt),
    except on each free joint's rotation columns of S1, where the chart moves with the start
    (A, B of :func:`~ros_vi.mechanics.free.centre_partials`).  Then, with H the Hessian of
    L over m and C the second derivatives of m contracted with L's gradient (non-zero on the
    rotation blocks only), ``d2Ld/dq1dq1 = dt (S1^T H S1 + C11)``, ``d2Ld/dq1dq2 = dt (S1^T
    H S2 + C12)``, ``d2Ld/dq2dq2 = dt S2^T H S2``, and f- = dt F(m) likewise.
    """
    nd, nq = system.nQd, system.nQ
    eye = np.eye(nq)
    S1 = np.vstack([0.5 * eye, -eye / dt])
    S2 = np.vstack([0.5 * eye, eye / dt])
    C11 = np.zeros((nq, nq))
    C12 = np.zeros((nq, nq))
    for rot in system.free_charts.rotation:
        c = delta[rot]
        A, B = centre_partials(c, dt)
        S1[np.ix_(rot, rot)] = A
        S1[np.ix_(nq + rot, rot)] = B
        dA, dB = centre_partials_derivatives(c, dt)
        C12[np.ix_(rot, rot)] = (np.einsum('i,ijk->jk', Lq[rot], dA)
                                 + np.einsum('i,ijk->jk', Lv[rot], dB))
        d2m, d2v = start_second_partials(c, dt)
        C11[np.ix_(rot, rot)] = (np.einsum('i,ijk->jk', Lq[rot], d2m)
                                 + np.einsum('i,ijk->jk', Lv[rot], d2v))
    H = np.block([[Lqq, Lvq.T], [Lvq, M]])
    HS1, HS2 = H @ S1, H @ S2
    F1 = e.F_dq @ S1[:nq] + e.F_ddq @ S1[nq:]
    F2 = e.F_dq @ S2[:nq] + e.F_ddq @ S2[nq:]
    D12 = dt * (S1.T @ HS2 + C12)
    J2 = D12 + dt * F2
    J1 = dt * (S1.T @ HS1 + C11) + dt * F1
    P2 = dt * (S2.T @ HS2)
    P1 = D12.T
    return J2[:nd], J1[:nd], P2[:nd], P1[:nd], dt * e.F_du[:nd]


def recentred_derivatives(d, system, q_in, p_in):
    """The first derivatives ``d`` (dict, updated in place) of a step taken from its charts'
    centres, made those of the step from the state as it was before
    :meth:`MidpointVI.recenter` moved the charts: configuration ``q_in`` (nQ,) and momentum
    ``p_in`` (nQd,) in the previous charts (chain rule with
    :func:`~ros_vi.mechanics.free.recentre_jacobian`).  A linearisation then chains step
    after step in the coordinates the integrator reports them in."""
    for rot in system.free_charts.rotation:
        Tq, Tp, Tpq = recentre_jacobian(q_in[rot], p_in[rot])
        for out in ('q2', 'p2', 'l1'):
            dq, dp = d[out + '_dq1'], d[out + '_dp1']
            new_q = dq[:, rot] @ Tq + dp[:, rot] @ Tpq
            dp[:, rot] = dp[:, rot] @ Tp
            dq[:, rot] = new_q
    return d


def packed_first(Zq, Zp, system):
    """The compiled step's first derivatives ``Zq``, ``Zp`` (nd, nX)
    (:meth:`FastStepper.derivatives`) as the dict of :func:`first_derivatives` (no
    multipliers: empty lambda1 rows)."""
    nq, nd, nu, nk = system.nQ, system.nQd, system.nu, system.nQk
    d = {}
    for name, Z in (('q2', Zq), ('p2', Zp)):
        d.update(_split(name, Z, nq, nd, nu))
    for suffix, cols in zip(_FIRST, (nq, nd, nu, nk)):
        d['l1' + suffix] = np.zeros((0, cols))
    return d


def _contact_partials(system, q1, q2, modes, impulses, hints):
    """The active contacts' part of the equations of the step from q1 to q2
    (:mod:`general_step`), for contact ``modes`` (k,) with ``impulses`` (k, 3) (gamma,
    beta) and slide ``hints`` (k, 2).

    Returns ``(lam (na,), border, E_q1 (nd, nQ), R_q1 (na, nQ), R_k2 (na, nQk))``: the
    contacts' multipliers; a callable that borders the Newton matrix with their rows and
    columns; their impulse's derivative by q1 (the force directions are those at q1:
    second derivatives of the geometry, :meth:`ContactSet.hessians`); the derivatives of
    their rows (gap at q2, a sticking contact's slip over the step) by q1 and by the
    kinematic configs of q2."""
    nd, nq = system.nQd, system.nQ
    contacts = system.contacts
    geometry = ContactSet(system, contacts)
    geometry.select(q1)                  # the faces the step held (chosen at its start)
    _, normal1, slip1 = geometry.kinematics(q1)
    _, normal2, _ = geometry.kinematics(q2)
    hess, dslip = geometry.hessians(q1)
    delta = (q2 - q1)[:nd]
    # the step's increment by q1 at q2 fixed: -1, but with free joints the rotation's
    # chart moves with the start (start_turn_partials), and the slip Jacobian's rotation
    # columns, which act on body rates, turn with it
    increment = -np.eye(nd, nq)
    if system.free_charts is not None:
        for rot in system.free_charts.rotation:
            dc, D = start_turn_partials(delta[rot])
            increment[np.ix_(rot, rot)] = dc - D
    lam, E_q1, R_q1, R_k2 = [], np.zeros((nd, nq)), [], []
    for m, c in enumerate(contacts):
        if modes[m] == OPEN:
            continue
        T1 = slip1[m, :, :nd]
        G = dslip[m, :, :nd, :]                      # (2, nd, nQ): dT1[a, i] / dq1_j
        # the slip over the step, T1(q1) (q2 - q1)_d, by q1
        ds = np.einsum('aij,i->aj', G, delta) + T1 @ increment
        gamma = impulses[m, 0]
        E_q1 += gamma * hess[m][:nd]                 # - lambda_n d n1 / dq1
        lam.append(-gamma)
        R_q1.append(np.zeros((1, nq)))
        R_k2.append(normal2[m, None, nd:])
        if modes[m] == STICK:
            beta = impulses[m, 1:]
            E_q1 += np.einsum('a,aij->ij', beta, G)
            lam.extend(-beta)
            R_q1.append(ds)
            R_k2.append(np.zeros((2, nq - nd)))
        elif c.friction > 0.0:
            # friction mu gamma u(s) against the slip s (the sign of general_step's term
            # + mu lambda_n T1^T u, lambda_n = -gamma)
            u, du = slip_direction(T1 @ delta, hints[m])
            E_q1 -= c.friction * gamma * (np.einsum('a,aij->ij', u, G) + T1.T @ du @ ds)
    lam = np.array(lam)

    def border(A):
        return border_contacts(A, A.shape[0] - lam.shape[0], contacts, modes, normal1,
                               normal2, slip1, lam, delta, hints)
    return lam, border, E_q1, np.vstack(R_q1), np.vstack(R_k2)


def first_derivatives(system, t1, t2, q1, q2, u1, lambda1, held=(), active=None):
    """First derivatives of the solved step (t1, q1) -> (t2, q2) [s, (nQ,)] with input u1
    (nu,) and multipliers lambda1 (nc,) (module docstring), by NumPy for any System; the
    dict also keeps the step's bordered DEL Jacobian ``'_A'`` (nd + nc + na, the same; na
    the active contacts' rows) and
    ``'_P2'`` = d(D2 Ld)/dq2 for :func:`second_derivatives`.  Leaves the System at the
    step's midpoint.

    ``held``: configs the step held at a joint limit (MidpointVI's ``limits``).  Their q2 is
    the bound whatever the inputs, and their DEL row gives the limit's impulse instead of
    an equation; so for the same held set (where the contact mode does not change) their
    rows of dq2/dx are 0 and the other rows solve the DEL without them.  p2 = D2Ld(q1, q2)
    holds either way.

    ``active``: the step's contacts, ``(modes (k,), impulses (k, 3), slide hints (k, 2))``
    as :class:`~ros_vi.integrators.general_step.GeneralStep` left them: the derivatives
    are those of the step with the same contacts open, sticking and sliding (the map is
    smooth while none changes mode; a sliding contact's friction direction is
    differentiated with its slip).  Their rows and multipliers join the constraints' in
    the bordered Jacobian (not in the returned lambda1 rows)."""
    s = system
    nd, nk, nc, nu, nq = s.nQd, s.nQk, s.nc, s.nu, s.nQ
    if active is not None and not np.any(active[0] != OPEN):
        active = None
    if active is not None:
        lam_c, border, C_q1, R_q1, R_k2 = _contact_partials(s, q1, q2, *active)
        na = lam_c.shape[0]
    else:
        na = 0
    Dh1 = constraint_jacobian_at(s, q1) if nc else np.zeros((0, nq))
    H1 = (dynamics.constraint_hessians(s) if nc else np.zeros((0, nq, nq)))
    Dh2 = constraint_jacobian_at(s, q2) if nc else np.zeros((0, nq))
    set_midpoint(s.data, t1, t2, q1, q2, u1)
    J2, J1, P2, P1, Fu = midpoint_partials(s, t2 - t1, q1, q2)
    A = np.zeros((nd + nc + na, nd + nc + na))
    A[:nd, :nd] = J2[:, :nd]
    A[:nd, nd:nd + nc] = -Dh1[:, :nd].T
    A[nd:nd + nc, :nd] = Dh2[:, :nd]
    E_q1 = J1 - np.einsum('c,cij->ij', lambda1, H1)[:nd] if nc else J1
    # one solve for every right-hand side: [dE/dq1, dE/dp1, dE/du1, dE/dk2]
    rhs = np.zeros((nd + nc + na, nq + nd + nu + nk))
    rhs[:nd, :nq] = E_q1
    rhs[:nd, nq:nq + nd] = np.eye(nd)
    rhs[:nd, nq + nd:nq + nd + nu] = Fu
    rhs[:nd, nq + nd + nu:] = J2[:, nd:]
    rhs[nd:nd + nc, nq + nd + nu:] = Dh2[:, nd:]
    if na:
        A = border(A)
        rhs[:nd, :nq] += C_q1
        rhs[nd + nc:, :nq] = R_q1
        rhs[nd + nc:, nq + nd + nu:] = R_k2
    for i in held:
        A[i, :] = 0.0
        A[i, i] = 1.0
        rhs[i, :] = 0.0
    z = -np.linalg.solve(A, rhs) if nd + nc + na else rhs
    for i in held:
        z[i] = 0.0             # exactly (the solve leaves rounding there)
    z = z[:nd + nc]            # (the contacts' multipliers are internal)
    z_q1, z_p1 = z[:, :nq], z[:, nq:nq + nd]
    z_u1, z_k2 = z[:, nq + nd:nq + nd + nu], z[:, nq + nd + nu:]
    d = {'q2_dq1': z_q1[:nd], 'q2_dp1': z_p1[:nd], 'q2_du1': z_u1[:nd],
         'q2_dk2': z_k2[:nd], 'l1_dq1': z_q1[nd:], 'l1_dp1': z_p1[nd:],
         'l1_du1': z_u1[nd:], 'l1_dk2': z_k2[nd:]}
    P2d = P2[:, :nd]
    d['p2_dq1'] = P2d @ d['q2_dq1'] + P1
    d['p2_dp1'] = P2d @ d['q2_dp1']
    d['p2_du1'] = P2d @ d['q2_du1']
    d['p2_dk2'] = P2d @ d['q2_dk2'] + P2[:, nd:]
    d['_A'], d['_P2'] = A, P2
    return d


def second_derivatives(system, t1, t2, q1, q2, u1, lambda1, d, held=()):
    """All second derivatives (module docstring) of the solved step (arguments as in
    :func:`first_derivatives`, whose dict ``d`` they build on; ``held`` the same configs
    held at a joint limit: their rows of d2q2/dx2 are 0, as their q2 is the bound).

    Differentiating the DEL twice (implicit function theorem) needs the third partials
    of the discrete Lagrangian, obtained exactly from L's third partials at the midpoint
    (complex step on the compiled kernel), the forces' and constraints' analytic
    second/third derivatives, and the first derivatives.  Leaves the System at the step's
    midpoint.
    """
    s = system
    nd, nk, nc, nu, nq = s.nQd, s.nQk, s.nc, s.nu, s.nQ
    dt = t2 - t1
    nX = nq + nd + nu + nk
    # constraint derivatives at q1 (second, third) and q2 (second)
    if nc:
        s.data.set(q1, np.zeros(nq))
        H1 = dynamics.constraint_hessians(s)
        H3 = dynamics.constraint_third_derivatives(s)
        s.data.set(q2, np.zeros(nq))
        H2 = dynamics.constraint_hessians(s)
    set_midpoint(s.data, t1, t2, q1, q2, u1)
    Lqqq, Lqqv, Lqvv = dynamics.lagrangian_third(s)
    f2 = dynamics.force_second(s)

    # L's third partials in (q, v) space, then mapped to (q1, q2): d/dq1 = q/2 - v/dt,
    # d/dq2 = q/2 + v/dt  (B maps [d/dq; d/dv] to [d/dq1; d/dq2])
    n2 = 2 * nq
    T3 = np.zeros((n2, n2, n2))
    q_, v_ = slice(0, nq), slice(nq, n2)
    T3[q_, q_, q_] = Lqqq
    T3[q_, q_, v_] = Lqqv
    T3[q_, v_, q_] = Lqqv.transpose(0, 2, 1)
    T3[v_, q_, q_] = Lqqv.transpose(2, 0, 1)
    T3[q_, v_, v_] = Lqvv
    T3[v_, q_, v_] = Lqvv.transpose(1, 0, 2)
    T3[v_, v_, q_] = Lqvv.transpose(1, 2, 0)
    eye = np.eye(nq)
    B = np.block([[0.5 * eye, -eye / dt], [0.5 * eye, eye / dt]])
    X = np.tensordot(B, T3, axes=(1, 0))                     # (i, b, c)
    X = np.tensordot(X, B, axes=(2, 1))                      # (i, b, k)
    Ld3 = dt * np.tensordot(X, B, axes=(1, 1)).transpose(0, 2, 1)   # (i, j, k)
    # forces: F(q, v, u) second partials [output, in1, in2] over (q, v, u)
    nW = n2 + nu
    F2 = np.zeros((nq, nW, nW))
    u_ = slice(n2, nW)
    F2[:, q_, q_] = f2.qq
    F2[:, v_, q_] = f2.vq
    F2[:, q_, v_] = f2.vq.transpose(0, 2, 1)
    F2[:, v_, v_] = f2.vv
    F2[:, u_, q_] = f2.uq
    F2[:, q_, u_] = f2.uq.transpose(0, 2, 1)
    F2[:, u_, v_] = f2.uv
    F2[:, v_, u_] = f2.uv.transpose(0, 2, 1)
    F2[:, u_, u_] = f2.uu
    Bw = np.zeros((nW, nW))
    Bw[:n2, :n2] = B
    Bw[n2:, n2:] = np.eye(nu)
    # G = D1Ld + f-  and  P = D2Ld, second partials over w = (q1, q2, u1)
    G2 = dt * np.matmul(np.matmul(Bw, F2[:nd]), Bw.T)
    G2[:, :n2, :n2] += Ld3[:nd]
    P2w = np.zeros((nd, nW, nW))
    P2w[:, :n2, :n2] = Ld3[nq:nq + nd]
    # dw/dx and dlambda/dx
    Wx = np.zeros((nW, nX))
    Wx[:nq, :nq] = np.eye(nq)
    Wx[nq:nq + nd] = np.hstack([d['q2_dq1'], d['q2_dp1'], d['q2_du1'], d['q2_dk2']])
    Wx[nq + nd:n2, nq + nd + nu:] = np.eye(nk)
    Wx[n2:, nq + nd:nq + nd + nu] = np.eye(nu)
    Lx = np.hstack([d['l1_dq1'], d['l1_dp1'], d['l1_du1'], d['l1_dk2']])
    R = np.zeros((nd + nc, nX, nX))
    R[:nd] = np.matmul(np.matmul(Wx.T, G2), Wx)
    if nc:
        Q1x, Q2x = Wx[:nq], Wx[nq:n2]
        H3l = np.tensordot(lambda1, H3[:, :nd], axes=(0, 0))    # (a, i, j)
        R[:nd] -= np.matmul(np.matmul(Q1x.T, H3l), Q1x)
        cross = np.tensordot(np.tensordot(H1[:, :nd], Q1x, axes=(2, 0)), Lx,
                             axes=(0, 0))                            # (a, s, t)
        R[:nd] -= cross + cross.transpose(0, 2, 1)
        R[nd:] = np.matmul(np.matmul(Q2x.T, H2), Q2x)
    for i in held:
        R[i] = 0.0             # d['_A'] has the identity's row there (first_derivatives)
    Z = -np.linalg.solve(d['_A'], R.reshape(nd + nc, nX * nX)).reshape(nd + nc, nX, nX)
    for i in held:
        Z[i] = 0.0
    Zq = Z[:nd]
    Zp = (np.matmul(np.matmul(Wx.T, P2w), Wx)
          + np.tensordot(d['_P2'][:, :nd], Zq, axes=(1, 0)))
    return (Zq.transpose(1, 2, 0).copy(), Zp.transpose(1, 2, 0).copy(),
            Z[nd:].transpose(1, 2, 0).copy())


def composite_derivatives(system, parts, dt, substep, second):
    """Derivatives of a subdivided step's composite map (t1, q1, p1) -> (t2, q2, p2) of
    length dt [s] w.r.t. x = (q1, p1, u1, k2): the chain rule over the substeps (u1 held,
    kinematic configs k_j = k1 + (j/n)(k2 - k1)); lambda1 is the substeps' time average,
    so its derivatives are those of the average.

    ``parts``: the n substeps ``(ta, tb, q_a, p_a, q_b, p_b, lambda1, ...)`` in order
    (with free joints two more entries: :meth:`MidpointVI._subdivide`'s);
    ``substep(part, second)`` gives the derivatives of one, ``(first dict, second tuple or
    None)`` (the integrator puts itself at that substep to evaluate them).

    Substep j maps its inputs s_j(x) (nX,) to y_j = f_j(s_j); with S = ds_j/dx and
    H = d2 s_j/dx2 (the previous substep's second derivatives in the q and p rows;
    u1 and the k rows are linear in x)::

        dy/dx = Df S,     d2y/dx2 [a, b] = D2f [S a, S b] + Df H[a, b]

    Returns ``(first, second)``: the first-derivative dict and with ``second`` the arrays
    ``(Zq, Zp, Zl)`` (module docstring), else None.
    """
    nd, nk, nc, nu, nq = system.nQd, system.nQk, system.nc, system.nu, system.nQ
    nX = nq + nd + nu + nk
    n = len(parts)
    Aq = np.zeros((nd, nX))                 # d q_dyn / dx after each substep
    Aq[:, :nd] = np.eye(nd)
    Ap = np.zeros((nd, nX))                 # d p / dx
    Ap[:, nq:nq + nd] = np.eye(nd)
    Ak = np.zeros((nk, nX))                 # d k / dx at the substep's start
    Ak[:, nd:nq] = np.eye(nk)
    Eu = np.zeros((nu, nX))
    Eu[:, nq + nd:nq + nd + nu] = np.eye(nu)
    Al = np.zeros((nc, nX))
    Hq = np.zeros((nX, nX, nd))             # d2 q_dyn / dx2 after each substep
    Hp = np.zeros((nX, nX, nd))
    Hl = np.zeros((nX, nX, nc))
    for j, part in enumerate(parts, 1):
        ta, tb = part[0], part[1]
        Ak_end = np.zeros((nk, nX))
        Ak_end[:, nd:nq] = (1.0 - j / n) * np.eye(nk)
        Ak_end[:, nq + nd + nu:] = (j / n) * np.eye(nk)
        d, Z = substep(part, second)
        S = np.vstack([Aq, Ak, Ap, Eu, Ak_end])
        D = stacked(d)
        if second:
            Zq, Zp, Zl = Z
            H = np.zeros((nX, nX, nX))
            H[:, :, :nd] = Hq
            H[:, :, nq:nq + nd] = Hp

            def chain(Z, Df):
                return (np.einsum('ia,kb,iko->abo', S, S, Z, optimize=True)
                        + H @ Df.T)
            Hq, Hp = chain(Zq, D['q2']), chain(Zp, D['p2'])
            Hl += ((tb - ta) / dt) * chain(Zl, D['l1'])
        Aq, Ap = D['q2'] @ S, D['p2'] @ S
        Al += ((tb - ta) / dt) * (D['l1'] @ S)
        Ak = Ak_end
    out = {}
    for name, Z in (('q2', Aq), ('p2', Ap), ('l1', Al)):
        out.update(_split(name, Z, nq, nd, nu))
    return out, ((Hq, Hp, Hl) if second else None)
