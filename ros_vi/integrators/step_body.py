"""The compiled step's one body, :func:`newton_step`: predictor, DEL residual and Jacobian,
line search, acceptance rule, commit.

Its entry points are :func:`ros_vi.integrators.fast_step.step_packed` (a frame tree with
built-in terms only), :func:`ros_vi.integrators.constrained_step.step_constrained_packed`
(with built-in constraints: Newton on the DEL and h(q2) = 0 together) and the batch loop
(:func:`ros_vi.batch.loop.run_copy`, which inlines it into its tick loop).  It works on the
views of the packed arrays (:mod:`ros_vi.integrators.packed`), stops under the stopping rule
of :mod:`ros_vi.integrators.newton` and takes a converged root only under the acceptance
rule of :mod:`ros_vi.integrators.acceptance`; a root that fails it is reported as
``REJECTED`` and nothing changes; the caller (:class:`MidpointVI`) then retries from the
other predictor and subdivides the step.  Every other system uses the general path
(:mod:`ros_vi.integrators.general_step`), which gives the same answer (tests compare the
two).
"""
import numpy as np
from numba import njit

from ..mechanics import kernel
from ..mechanics.constraint_kernel import (CF_TOL, constraint_jacobian_into,
                                           constraint_values_into)
from ..mechanics.forces.drives import ACTIVE as _D_ACTIVE, KD as _D_KD, KP as _D_KP, drive_law
from ..mechanics.kernel import (composite_inertias_into, first_order_into,
                                forward_kinematics_into, joint_twists_into,
                                residual_terms_into, second_order_into)
from .acceptance import A_DT, A_E, A_T, A_TIME, A_V, A_VALID, check_root
from .newton import (ARMIJO, BACKTRACK, CHORD_MARGIN, MAX_BACKOFF, MAX_BACKTRACKS, REUSE_DT,
                     ROUNDING, STAGNATION, STAGNATION_FACTOR, STALL_ACCEPT, STALLED,
                     beyond_limits, extrapolation_order)
from ..mechanics.free import chart_first_slot_change, chart_jacobian_change
from .packed import (BAD_INPUT, CHART_CACHE, DT, FACTOR_DT, FACTORS, HISTORY, I_END, I_FREE,
                     I_LIM, LIMIT, NLIM, W_LIMIT,
                     ITERS, MAXIT, MINIT, NFREE, NHIST, NOT_CONVERGED, NOT_FINITE, OK,
                     REJECTED, REUSE_BACKOFF, REUSE_WAIT, RNORM, SINGULAR, STATUS, T2, TOL,
                     W_CHART, W_END, W_IMPULSE, W_P1, W_Q1, W_U1)


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
    nhist = min(I[NHIST], HISTORY)
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
    """One VI step from the packed state (the body of every entry point): globalized Newton
    on ``(q2_d, lambda1)`` for::

        r = p1 + dt/2 L_q - L_v + dt F - Dh(q1)_d^T lambda1 = 0     (nd,)
        h(q2) = 0                                                  (nc,)

    with the Newton matrix ``[[J, -Dh(q1)_d^T], [Dh(q2)_d, 0]]`` (J the DEL Jacobian; nc = 0
    without constraints: then just J), a backtracking line search on 1/2 (|r|^2 + |h|^2),
    and the acceptance rule of a converged root (:mod:`ros_vi.integrators.acceptance`); then
    ``p2 = p1 + dt (L_q + F) - Dh(q1)_d^T lambda1``.  It stops under the general path's rule
    (:mod:`ros_vi.integrators.newton`): the DEL residual's 2-norm is at most the
    tolerance or the rounding floor of its terms, and every ``|h_i(q2)|`` is at most its
    constraint's tolerance.  The views (:mod:`ros_vi.integrators.packed`): ``model`` from
    ``model_views``, ``ks`` from ``kernel_scratch``, ``st`` from ``step_views``, ``gv`` from
    ``acceptance_views``, ``con`` from ``no_constraints`` or ``constraint_views``; ``o`` the
    offsets ``layout(I)``.

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
    max_iter = I[MAXIT]
    nfree = I[NFREE]
    free = I[o[I_FREE]:o[I_LIM]].reshape((nfree, 3))
    chart_cache = W[o[W_CHART]:o[W_LIMIT]].reshape((nfree, CHART_CACHE))
    nlim = I[NLIM]
    limited = I[o[I_LIM]:o[I_END]]
    bounds = W[o[W_LIMIT]:o[W_END]].reshape((2, nlim))
    min_iter = I[MINIT]
    # without constraints or mimic joints the Newton matrix has the tree's sparsity
    tree_pattern = nc == 0 and mim_lead.shape[0] == 0
    dt, tol, t2 = W[DT], W[TOL], W[T2]
    t1 = t2 - dt
    if not inputs_finite(u1, k2):
        I[STATUS] = BAD_INPUT
        I[ITERS] = 0
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
    if order >= 3:
        order = extrapolation_order(hist, nd, order)
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
                anchor[A_T] = T_node
                anchor[A_V] = V_node
                anchor[A_E] = T_node + V_node
                anchor[A_DT] = 0.0
                anchor[A_TIME] = t1
                anchor[A_VALID] = 1.0
    energy = abs(anchor[A_TIME] - t1) <= 1e-12 * max(1.0, abs(t2)) and not kin_moving
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
    # J holds the tree factors of the last full Newton matrix (of this step, or of an
    # earlier one at the same dt: see the first update below)
    factored = (tree_pattern and I[FACTORS] == 1
                and abs(W[FACTOR_DT] - dt) <= REUSE_DT * dt)
    # ... unless it is backing off (newton module): then this step starts with a full update
    if factored and I[REUSE_WAIT] > 0:
        I[REUSE_WAIT] -= 1
        factored = False
    reused = factored            # this step's first update is a chord update
    full_updates = 0             # Newton matrices formed in this step
    chord = False                # the last update reused them
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
        # (the composite inertias only when a Newton matrix is formed below)
        T_m, V_m = residual_terms_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib,
                                       mass_frames, fjoint, cframe, cparent, corder, gvec, qm,
                                       v, R, P, S, V, Vp, Ic, h, Lq, Lv)
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
        if nfree > 0:
            # free joints: the first slot of the moving-chart discrete Lagrangian
            chart_first_slot_change(free, dlt, dt, Lq, Lv, r)
            acc = 0.0
            for i in range(nd):
                acc += r[i] * r[i]
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
            if chord:
                # a chord update: back to its start for a full Newton update instead
                for i in range(nd):
                    dlt[i] = base[i]
                trial = False
                chord = False
                factored = False
                continue
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
        # (a residual already at the rounding floor needs no further update)
        if satisfied and (rnorm <= max(tol, ROUNDING * scale)
                          or (stalled and rnorm <= STALL_ACCEPT * scale)) and (
                it >= min_iter or rnorm <= ROUNDING * scale):
            if nlim > 0 and beyond_limits(q1, dlt, limited, bounds[0], bounds[1]):
                # a root past a joint limit is not the step's: the general path holds the
                # config at its bound (its active-set solve)
                status = LIMIT
                break
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
                impulse_i = dt * force[i]
                for k in range(nc):
                    acc -= Dh1[k, i] * lamn[k]
                    impulse_i -= Dh1[k, i] * lamn[k]
                p2[i] = acc
                # the step's non-conservative impulse: half of it belongs to the step's end
                # (MidpointVI.p2_end)
                W[o[W_IMPULSE] + i] = impulse_i
            if nfree > 0:
                chart_first_slot_change(free, dlt, dt, Lq, Lv, p2)
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
            I[NHIST] = min(nhist + 1, HISTORY)
            anchor[A_E] = T_m + V_m
            anchor[A_T] = T_m
            anchor[A_V] = V_m
            anchor[A_DT] = dt
            anchor[A_TIME] = t2
            anchor[A_VALID] = 0.0 if kin_moving else 1.0
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
        if factored and backtracks == 0 and (it == 0 or rnorm * (rnorm / base_rnorm)
                                             <= CHORD_MARGIN * max(tol, ROUNDING * scale)):
            # A chord update, with the factors of an earlier Newton matrix: it skips the
            # second-order terms and the factorisation.  Before this step has formed a
            # matrix, those of the last step's (modified Newton, as stiff ODE solvers
            # reuse their Jacobian): the matrix moves by O(dt) a step (J ~ -M/dt + O(1)),
            # so each such update gains about as many digits as |qdot| dt is small.
            # Later updates are chord updates only when the last update converged so fast
            # (the residual fell by the ratio rnorm / base_rnorm) that the next should land
            # within the tolerance.  A chord update that fails the merit test is undone and a full
            # Newton update follows; one that converges slowly is followed by one.
            kernel.tree_substitute(J, r.reshape((nd, 1)), cparent, corder)
            chord = True
        else:
            chord = False
            factored = False
        if not chord:
            # Jacobian: the DEL's J = d r / d q2_d at the midpoint state left in place, and
            # with constraints the KKT matrix around it
            composite_inertias_into(R, P, mass, Ib, mass_frames, fjoint, cparent, corder, G, Ic)
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
            if nfree > 0:
                chart_jacobian_change(free, dlt, dt, Lq, Lv, Lqq, Lvq, M, J, chart_cache,
                                      full_updates == 0)
            full_updates += 1
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
            if tree_pattern:
                # J couples only configs on one root path: the tree's elimination, O(n d^2)
                # for depth d instead of O(n^3); on a failed pivot the dense pivoted solve of
                # the copies (Md, vel are free once the predictor has run)
                for a in range(nd):
                    vel[a] = rhs[a]
                    for b in range(nd):
                        Md[a, b] = K[a, b]
                factored = kernel.tree_factor_in_place(K, cparent, corder)
                # the factors stay for the next steps' first updates
                I[FACTORS] = 1 if factored else 0
                W[FACTOR_DT] = dt
                if factored:
                    kernel.tree_substitute(K, rhs.reshape((nd, 1)), cparent, corder)
                    solved = True
                else:
                    solved = kernel.solve_in_place(Md, vel)
                    for a in range(nd):
                        rhs[a] = vel[a]
            else:
                solved = kernel.solve_in_place(K, rhs)
            if not solved:
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
    if reused:
        # the first chord update paid off if no full update was needed
        if full_updates == 0:
            I[REUSE_BACKOFF] = 0
        else:
            I[REUSE_BACKOFF] = min(max(1, 2 * I[REUSE_BACKOFF]), MAX_BACKOFF)
            I[REUSE_WAIT] = I[REUSE_BACKOFF]
    W[RNORM] = rnorm
    I[STATUS] = status
    I[ITERS] = it

