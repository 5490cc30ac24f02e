"""The state a controller sees at a node of the compiled step, from the packed arrays.

At every sample of a rollout the integrator holds ``(q, p)`` (configuration and discrete
momentum); the controller, like the simulator node's subscribers, sees ``(q, v)`` with
``v = M(q)^-1 p``.  :func:`node_terms` evaluates the kernel at ``(q, 0)`` for the mass
matrix, solves for ``v`` and returns the kinetic and potential energy; :func:`bias_terms`
adds what a feedback-linearising law needs at ``(q, v)``.

They take the model and scratch views of :mod:`ros_vi.integrators.packed` built once
per rollout copy (``model = model_views(I, F, o)``, ``ks = kernel_scratch(I, W, o)``) and
are inlined into the loop: creating those views costs more than the kernel itself on a
small model (about 1.5 us of views against 0.5 us of arithmetic for a pendulum).  They
write into the kernel's scratch, which the next VI step overwrites anyway.
"""
from numba import njit

from ..mechanics import kernel
from .step_body import spring_energy


@njit(cache=True, inline='always')
def mass_matrix_into(S, Ic, anc, corder, M):
    """``M (nt, nt)`` from the joint twists ``S (nt, 6)`` and composite inertias ``Ic (nt,
    6, 6)`` of :func:`kernel.first_order_into`: ``M[a, m] = S_a . Ic_m S_m`` for ``a`` an
    ancestor-or-self of ``m`` (0 across branches).  The mass-matrix part of
    :func:`kernel.second_order_into` alone: a node needs no second derivatives."""
    nt = S.shape[0]
    for a in range(nt):
        for b in range(nt):
            M[a, b] = 0.0
    for j in range(corder.shape[0]):
        m = corder[j]
        y0 = y1 = y2 = y3 = y4 = y5 = 0.0
        for k in range(6):
            s = S[m, k]
            y0 += Ic[m, 0, k] * s
            y1 += Ic[m, 1, k] * s
            y2 += Ic[m, 2, k] * s
            y3 += Ic[m, 3, k] * s
            y4 += Ic[m, 4, k] * s
            y5 += Ic[m, 5, k] * s
        for a in range(nt):
            if anc[a, m]:
                val = (S[a, 0] * y0 + S[a, 1] * y1 + S[a, 2] * y2 + S[a, 3] * y3
                       + S[a, 4] * y4 + S[a, 5] * y5)
                M[a, m] = val
                M[m, a] = val


@njit(cache=True, inline='always')
def node_terms(model, ks, qm, zero, Md, q, p, v, M_out):
    """``v (nd,) <- M(q)^-1 p`` and ``M_out (nd, nd) <- M(q)`` (the dynamic block, mimic
    joints folded) for ``q (nq,)``, ``p (nd,)``; returns ``(T, V, ok)``: kinetic energy
    ``p.v / 2`` [J], potential energy (gravity and ConfigSprings) [J], and False if M is
    singular.  ``qm``, ``zero`` (nt,) and ``Md`` (nd, nd) are scratch."""
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = model
    (R, P, S, Vs, Vp, Ic, h, G, Lq, Lv, M, Lvq, Lqq, su, sw, sz, sg, tmp) = ks
    nq, nd = q.shape[0], p.shape[0]
    for i in range(zero.shape[0]):
        zero[i] = 0.0
    kernel.expand_into(q, zero[:nq], mim_lead, mim_mult, mim_off, qm, zero)
    _, V = kernel.first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib,
                                   mass_frames, fjoint, cframe, cparent, corder, gvec, qm,
                                   zero, R, P, S, Vs, Vp, Ic, h, G, Lq, Lv)
    mass_matrix_into(S, Ic, anc, corder, M)
    kernel.fold_matrix(M, nq, mim_lead, mim_mult)
    V += spring_energy(sp_idx, sp_k, sp_q0, q)
    for i in range(nd):
        v[i] = p[i]
        for j in range(nd):
            M_out[i, j] = M[i, j]
            Md[i, j] = M[i, j]
    ok = kernel.solve_in_place(Md, v)
    T = 0.0
    for i in range(nd):
        T += 0.5 * p[i] * v[i]
    return T, V, ok


@njit(cache=True, inline='always')
def momentum_energy(model, ks, qm, zero, Md, q, v, p_out, scratch, M):
    """``p_out (nd,) <- M(q) v`` and ``(T, V)`` [J] at ``(q, v)`` with the constants of
    ``model`` (a controller's own model beside the plant's); ``scratch (nd,)``, ``M (nd,
    nd)`` are scratch."""
    nd = v.shape[0]
    for i in range(nd):
        p_out[i] = 0.0
    _, V, _ = node_terms(model, ks, qm, zero, Md, q, p_out, scratch, M)
    T = 0.0
    for i in range(nd):
        acc = 0.0
        for j in range(nd):
            acc += M[i, j] * v[j]
        p_out[i] = acc
        T += 0.5 * acc * v[i]
    return T, V


@njit(cache=True, inline='always')
def bias_terms(model, ks, qm, vm, q, v, M_out, bias):
    """At ``(q, v)``: ``M_out (nd, nd) <- M(q)`` and ``bias (nd,)`` such that the equations
    of motion read ``M q'' + bias = u`` for the generalized input force u: Coriolis,
    centrifugal, gravity, spring and damping terms (``bias = Lvq v - L_q + c v``).
    ``qm``, ``vm`` (nt,) are scratch."""
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg, mim_lead, mim_mult,
     mim_off) = model
    (R, P, S, Vs, Vp, Ic, h, G, Lq, Lv, M, Lvq, Lqq, su, sw, sz, sg, tmp) = ks
    nq, nd = q.shape[0], v.shape[0]
    kernel.expand_into(q, v, mim_lead, mim_mult, mim_off, qm, vm)
    kernel.first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames,
                            fjoint, cframe, cparent, corder, gvec, qm, vm, R, P, S, Vs, Vp,
                            Ic, h, G, Lq, Lv)
    kernel.second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, su, sw, sz, sg,
                             tmp)
    kernel.fold_matrix(M, nq, mim_lead, mim_mult)
    kernel.fold_matrix(Lvq, nq, mim_lead, mim_mult)
    kernel.fold_vector(Lq, nq, mim_lead, mim_mult)
    for j in range(sp_idx.shape[0]):
        Lq[sp_idx[j]] -= sp_k[j] * (q[sp_idx[j]] - sp_q0[j])
    for a in range(nd):
        acc = -Lq[a] + damping[a] * v[a]
        for b in range(nd):
            acc += Lvq[a, b] * v[b]
            M_out[a, b] = M[a, b]
        bias[a] = acc
