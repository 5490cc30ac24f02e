"""Compiled step for frame trees with built-in holonomic constraints.

The constrained entry point of the compiled step: the same packed model, parameters and
state as :func:`~ros_vi.integrators.fast_step.step_packed` (``I, F, W``, layout in
``fast_step._layout``) plus the packed constraints (``CI, CF`` from
:func:`~ros_vi.mechanics.constraint_kernel.pack_constraints`) and a work array ``CW`` (layout
in :func:`con_layout`).  One call runs :func:`~ros_vi.integrators.fast_step.newton_step`,
the step both entry points share: globalized Newton on ``(q2_d, lambda1)`` for::

    r = p1 + dt/2 L_q - L_v + dt F - Dh(q1)_d^T lambda1 = 0     (nd,)
    h(q2) = 0                                                  (nc,)

with the Newton matrix ``[[J, -Dh(q1)_d^T], [Dh(q2)_d, 0]]`` (J the unconstrained DEL
Jacobian), a line search on 1/2 (|r|^2 + |h|^2), the acceptance rule (whose energy balance
includes the constraint impulse), then ``p2 = p1 + dt (L_q + F) - Dh(q1)_d^T lambda1``.
It stops under the general path's rule (:mod:`ros_vi.integrators.midpointvi`): the DEL
residual's 2-norm is at most the tolerance or the rounding floor of its terms, and every
``|h_i(q2)|`` is at most its constraint's tolerance.  Nothing here allocates beyond the
offset tables.
"""
import numpy as np
from numba import njit

from .fast_step import (_DT, _ITERS, _MAXIT, _NF, _ND, _NT, _RNORM, _STATUS, _T2, _TOL,
                        _layout, _model_views, acceptance_views, kernel_scratch, newton_step,
                        step_views)

# Segments of CW (indices into the offsets of :func:`con_layout`)
(C_LAM, C_LAMN, C_LBASE, C_LSTEP, C_H2, C_DH1, C_DH2, C_TH, C_DTH, C_R2, C_P2, C_S2, C_K,
 C_RHS, C_END) = range(15)


@njit(cache=True)
def con_layout(I, nc):
    """Offsets into CW for ``nc`` constraints (sizes nf, nd, nt from I's header).

    =========  ==============  ==================================================
    segment    length          contents
    =========  ==============  ==================================================
    C_LAM      nc              integrator state: lambda1 of the last step
    C_LAMN     nc              Newton iterate of lambda1
    C_LBASE    nc              line search: the lambda1 iterate it starts from
    C_LSTEP    nc              line search: the Newton update of lambda1
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
    o[C_LBASE] = o[C_LAMN] + nc
    o[C_LSTEP] = o[C_LBASE] + nc
    o[C_H2] = o[C_LSTEP] + nc
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


@njit(cache=True)
def constraint_views(I, CI, CF, CW, c):
    """The constraint views of :func:`~ros_vi.integrators.fast_step.newton_step`: ``(CI, CF,
    lambda1, its iterate, line-search base and update, h2, Dh1, Dh2, theta, dtheta, R, P, S,
    K, rhs)`` (the segments of :func:`con_layout`)."""
    nf, nt = I[_NF], I[_NT]
    nc = CI.shape[0]
    n = I[_ND] + nc
    return (CI, CF,
            CW[c[C_LAM]:c[C_LAMN]],
            CW[c[C_LAMN]:c[C_LBASE]],
            CW[c[C_LBASE]:c[C_LSTEP]],
            CW[c[C_LSTEP]:c[C_H2]],
            CW[c[C_H2]:c[C_DH1]],
            CW[c[C_DH1]:c[C_DH2]].reshape((nc, nt)),
            CW[c[C_DH2]:c[C_TH]].reshape((nc, nt)),
            CW[c[C_TH]:c[C_DTH]],
            CW[c[C_DTH]:c[C_R2]],
            CW[c[C_R2]:c[C_P2]].reshape((nf, 3, 3)),
            CW[c[C_P2]:c[C_S2]].reshape((nf, 3)),
            CW[c[C_S2]:c[C_K]].reshape((nt, 6)),
            CW[c[C_K]:c[C_RHS]].reshape((n, n)),
            CW[c[C_RHS]:c[C_END]])


@njit(cache=True)
def step_constrained_packed(I, F, W, CI, CF, CW):
    """One constrained VI step from the packed state; results in W (q2, p2, qm, v), CW
    (lambda1) and I's header (status, iterations; W holds the residual norm)."""
    o = _layout(I)
    c = con_layout(I, CI.shape[0])
    newton_step(I, W, o, _model_views(I, F, o), kernel_scratch(I, W, o), step_views(I, W, o),
                acceptance_views(W, o), constraint_views(I, CI, CF, CW, c))


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
