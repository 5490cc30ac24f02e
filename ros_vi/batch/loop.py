"""The compiled batch loop: B closed-loop runs of one packed model, in parallel over cores.

:func:`run_batch` runs copy b from ``(q0[b], v0[b])`` for ``nsteps`` ticks of ``dt`` with the
packed step of :mod:`ros_vi.integrators.fast_step` (the step :class:`MidpointVI` takes on the
same system, so the trajectories are those of B independent MidpointVI runs), the compiled
control law of :mod:`ros_vi.control.compiled`, an optional input delay and a per-copy effort
limit.  It is :func:`ros_vi.batch.rollout`'s compiled path; the packed arrays and their views
are :mod:`ros_vi.integrators.packed`'s.
Copies are independent iterations of a ``prange`` loop; each allocates its own work arrays
once, and nothing in a step allocates.

Each tick k, as the simulator and :func:`ros_vi.simulation.simulate` do it:

1. the node state ``(q_k, p_k)`` and the last step's impulse ``J_k`` give the published
   velocity ``v_k = M(q_k)^-1 (p_k + J_k / 2)`` (:attr:`MidpointVI.p2_end`),
2. the sample is observed (target set, energy balance, recording),
3. the law gives ``u`` from ``(q_k, v_k)`` (its own model's momentum and energy), the
   effort delayed by ``delay`` ticks (zero before) is clipped at the effort limit and held
   over the tick,
4. one VI step to ``t0 + (k+1) dt``.  A step whose root is not accepted is retried from the
   momentum predictor, as MidpointVI does first; if that fails too, or the root passes a
   joint limit, the copy stops with status ``ESCALATE`` and :func:`ros_vi.batch.rollout`
   finishes it on the general path (which also subdivides the step and holds configs at
   their limits).
"""
import math

import numpy as np
from numba import njit, prange

from ..control.compiled import control_law, discrete_momentum
from ..integrators import packed
from ..integrators.node_state import momentum_energy, node_terms
from ..integrators.step_body import newton_step
from ..mechanics import kernel

# per-copy status
RUNNING, DONE, ESCALATE, FAILED = 0, 1, 2, 3
# accumulator slots (acc (B, NACC)): entry time of the current stay in the target set (nan
# outside), energy at t0, discrete work of the non-conservative forces so far, the largest
# |E - E0 - W| over the samples, Newton iterations, ticks taken, hand-over mode
A_ENTER, A_E0, A_WORK, A_EERR, A_ITERS, A_TICKS, A_BALANCING, A_E, NACC = range(9)


@njit(cache=True, inline='always')
def observe(k, t, q, v, T, V, acc, target_q, target_tol, target_vtol, target_angles,
             has_target, rec_every, rec_q, rec_v, rec_t, b):
    """Reductions and recording of sample k at time t (q (nq,), v (nd,), energy T + V)."""
    E = T + V
    if k == 0:
        acc[A_E0] = E
        acc[A_WORK] = 0.0
        acc[A_EERR] = 0.0
    else:
        err = abs(E - acc[A_E0] - acc[A_WORK])
        if not err <= acc[A_EERR]:
            acc[A_EERR] = err
    acc[A_E] = E
    if has_target:
        inside = True
        for i in range(target_q.shape[0]):
            if target_tol[i] < 0:
                continue            # not a target coordinate
            d = q[i] - target_q[i]
            if target_angles[i]:
                d = (d + math.pi) % (2.0 * math.pi) - math.pi
            if not (abs(d) < target_tol[i] and abs(v[i]) < target_vtol[i]):
                inside = False
                break
        if inside:
            if math.isnan(acc[A_ENTER]):
                acc[A_ENTER] = t
        else:
            acc[A_ENTER] = math.nan
    if rec_every > 0 and k % rec_every == 0:
        s = k // rec_every
        rec_t[s] = t
        for i in range(rec_q.shape[2]):
            rec_q[b, s, i] = q[i]
        for i in range(rec_v.shape[2]):
            rec_v[b, s, i] = v[i]


@njit(cache=True)
def run_copy(b, I, W, o, Fp, Fc, same_model, q0, v0, t0, dt, nsteps, tol, max_iter,
             law_ints, law_row, in_idx, limits, delay, acc, max_u, status, q_out, p_out,
             v_out, fail_tick, target_q, target_tol, target_vtol, target_angles, has_target,
             rec_every, rec_q, rec_v, rec_u, rec_t):
    """One copy (module docstring).  ``q0 (nq,)``, ``v0 (nd,)``; ``in_idx (m,)`` the plant
    input each law output drives; ``limits (nu,)`` the plant's effort limits; ``delay``
    ticks.  Results into the per-copy rows given.

    The step's views are built once here and its body
    (:func:`ros_vi.integrators.step_body.newton_step`) is
    inlined into the tick loop: per step that saves creating about sixty array views."""
    nq, nd, nu = I[packed.NQ], I[packed.ND], I[packed.NU]
    m = in_idx.shape[0]
    model = packed.model_views(I, Fp, o)
    model_c = packed.model_views(I, Fc, o)
    ks = packed.kernel_scratch(I, W, o)
    st = packed.step_views(I, W, o)
    gv = packed.acceptance_views(W, o)
    con = packed.no_constraints(model, ks, st, W)
    (q, p, u_in, k2, hist, hist_t, q2n, p2n, qm, vm, J, r, force, dlt, vel, Md, zero,
     drives) = st
    q1 = W[o[packed.W_Q1]:o[packed.W_P1]]
    p1 = W[o[packed.W_P1]:o[packed.W_Q2]]
    impulse = W[o[packed.W_IMPULSE]:o[packed.W_CHART]]
    p_end = np.empty(nd)      # the momentum at the node: p + impulse / 2 (MidpointVI.p2_end)
    anchor = gv[4]
    v = np.empty(nd)
    M = np.empty((nd, nd))
    Mc = np.empty((nd, nd))
    pc = np.empty(nd)
    vc = np.empty(nd)
    scratch = np.empty(nd)
    x = np.empty(2 * nd)
    u = np.zeros(m)
    applied = np.zeros(nu)
    ring = np.zeros((delay + 1, m))
    balancing = np.zeros(1, dtype=np.int64)
    # the controller model's kernel at the state, for the laws that linearise through it
    law_dyn = (model_c, ks, qm, vm, zero, Md, Mc, np.empty((nd, 2)), np.empty((3, nd)))
    # initialize_from_state(t0, q0, M(q0) v0): history (t0, q0), no energy anchor
    for i in range(nq):
        q[i] = q0[i]
        q1[i] = q0[i]
    for i in range(nd):
        scratch[i] = 0.0
    node_terms(model, ks, qm, zero, Md, q, scratch, v, M)
    for i in range(nd):
        acc_p = 0.0
        for j in range(nd):
            acc_p += M[i, j] * v0[j]
        p[i] = acc_p
        p1[i] = acc_p
    for i in range(nd):
        impulse[i] = 0.0
    I[packed.NHIST] = 1
    packed.forget_factors(I)        # none from another copy's run
    hist_t[packed.HISTORY - 1] = t0
    for i in range(nq):
        hist[packed.HISTORY - 1, i] = q0[i]
    for j in range(anchor.shape[0]):
        anchor[j] = 0.0
    for a in range(max_u.shape[0]):
        max_u[a] = 0.0
    acc[A_ENTER] = math.nan
    acc[A_ITERS] = 0.0
    acc[A_BALANCING] = 0.0
    status[0] = RUNNING
    W[packed.DT] = dt
    W[packed.TOL] = tol
    I[packed.MAXIT] = max_iter
    k = 0
    for k in range(nsteps + 1):
        t = t0 + k * dt
        for i in range(nd):
            p_end[i] = p[i] + 0.5 * impulse[i]
        T, V, ok = node_terms(model, ks, qm, zero, Md, q, p_end, v, M)
        if not ok:
            status[0] = ESCALATE
            break
        observe(k, t, q, v, T, V, acc, target_q, target_tol, target_vtol, target_angles,
                 has_target, rec_every, rec_q, rec_v, rec_t, b)
        acc[A_TICKS] = k
        if k == nsteps:
            status[0] = DONE
            break
        if law_ints.shape[0] > 0:
            # the law's state, as Controller.compute makes it from the published one: its
            # model's discrete momentum pc (from the efforts applied over the last tick, zero
            # before the first, and its damping; model views: [15] damping, [19] each
            # input's config), the velocity vc = M_c^-1 pc and the energy at (q, vc)
            if same_model:
                Vc = V
                for i in range(nd):
                    pc[i] = p_end[i]        # M_c(q) v: the plant's own
                    for j in range(nd):
                        Mc[i, j] = M[i, j]
            else:
                _, Vc = momentum_energy(model_c, ks, qm, zero, Md, q, v, pc, scratch, Mc)
            discrete_momentum(model[19], applied, model_c[15], v, dt, pc)
            Tc = 0.0
            for i in range(nd):
                vc[i] = pc[i]
                for j in range(nd):
                    Md[i, j] = Mc[i, j]
            kernel.solve_in_place(Md, vc)
            for i in range(nd):
                Tc += 0.5 * pc[i] * vc[i]
            control_law(law_ints, law_row, balancing, q, vc, pc, Tc + Vc, u, x, law_dyn)
        # the delay line: row k % (delay + 1) holds the output of tick k until k + delay
        for a in range(m):
            ring[k % (delay + 1), a] = u[a]
        late = (k + 1) % (delay + 1)
        for j in range(nu):
            applied[j] = 0.0
        if k >= delay:
            for a in range(m):
                applied[in_idx[a]] = ring[late, a]
        for j in range(nu):
            applied[j] = min(max(applied[j], -limits[j]), limits[j])
            u_in[j] = applied[j]
            if abs(applied[j]) > max_u[j] or not np.isfinite(applied[j]):
                max_u[j] = abs(applied[j])
        if rec_every > 0 and k % rec_every == 0:
            for j in range(nu):
                rec_u[b, k // rec_every, j] = applied[j]
        # the step's length as MidpointVI takes it on the grid t0 + k dt (t2 - t1, which
        # differs from dt in the last bits): a copy then repeats such a run bit for bit
        W[packed.T2] = t0 + (k + 1) * dt
        W[packed.DT] = W[packed.T2] - (t0 + k * dt)
        nhist = I[packed.NHIST]
        for attempt in range(2):
            if attempt == 1:
                # MidpointVI's first recovery: the whole step again from the momentum
                # predictor (a history of one node).  The history array still holds the
                # earlier nodes, so on success the shifted array is the old history plus
                # the new node, as MidpointVI restores it.
                if I[packed.STATUS] == packed.BAD_INPUT or I[packed.STATUS] == packed.SINGULAR:
                    break
                I[packed.NHIST] = 1
                packed.forget_factors(I)
            newton_step(I, W, o, model, ks, st, gv, con)
            acc[A_ITERS] += I[packed.ITERS]
            if I[packed.STATUS] == packed.OK:
                if attempt == 1:
                    I[packed.NHIST] = min(nhist + 1, packed.HISTORY)
                break
            if I[packed.STATUS] == packed.LIMIT:
                break           # a joint limit to hold: the general path's step
        if I[packed.STATUS] != packed.OK:
            status[0] = ESCALATE
            break
        work = 0.0
        for i in range(nd):
            work += force[i] * dlt[i]
        acc[A_WORK] += work
    acc[A_BALANCING] = balancing[0]
    fail_tick[0] = k
    for i in range(nq):
        q_out[i] = q[i]
    for i in range(nd):
        p_out[i] = p[i]
        v_out[i] = v[i]


@njit(cache=True, parallel=True)
def run_batch(I0, W0, Ftab, plant_row, ctrl_row, q0, v0, t0, dt, nsteps, tol, max_iter,
              law_ints, law_table, law_row, in_idx, limits, delay, acc, max_u, status,
              q_out, p_out, v_out, fail_tick, target_q, target_tol, target_vtol,
              target_angles, has_target, rec_every, rec_q, rec_v, rec_u, rec_t):
    """:func:`run_copy` for every copy b, in parallel; ``I0``/``W0`` are the packed
    structure and an empty work array (each copy works on its own copies), ``Ftab (K, nF)``
    the distinct packed constants, ``plant_row``/``ctrl_row (B,)`` each copy's rows of it
    for the plant and the controller's model, ``law_table`` rows chosen by ``law_row``;
    per-copy ``limits (B, nu)`` and ``delay (B,)``."""
    B = q0.shape[0]
    o = packed.layout(I0)
    for i in prange(B):
        b = np.int64(i)     # prange counts in uint64: one signature of run_copy, not two
        I = I0.copy()
        W = W0.copy()
        run_copy(b, I, W, o, Ftab[plant_row[b]], Ftab[ctrl_row[b]],
                 plant_row[b] == ctrl_row[b], q0[b], v0[b], t0, dt, nsteps, tol, max_iter,
                 law_ints, law_table[law_row[b]], in_idx, limits[b], delay[b], acc[b], max_u[b],
                 status[b:b + 1], q_out[b], p_out[b], v_out[b], fail_tick[b:b + 1],
                 target_q, target_tol, target_vtol, target_angles, has_target, rec_every,
                 rec_q, rec_v, rec_u, rec_t)
