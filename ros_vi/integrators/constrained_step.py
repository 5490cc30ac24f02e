"""Compiled step for frame trees with built-in holonomic constraints.

The constrained entry point of the compiled step: the same packed model, parameters and
state as :func:`~ros_vi.integrators.fast_step.step_packed` (``I, F, W``) plus the packed
constraints (``CI, CF`` from
:func:`~ros_vi.mechanics.constraint_kernel.pack_constraints`) and a work array ``CW``
(layouts in :mod:`ros_vi.integrators.packed`: :func:`~ros_vi.integrators.packed.layout`,
:func:`~ros_vi.integrators.packed.constraint_layout`).  One call runs
:func:`~ros_vi.integrators.step_body.newton_step`, the step every entry point shares:
globalized Newton on ``(q2_d, lambda1)`` for::

    r = p1 + dt/2 L_q - L_v + dt F - Dh(q1)_d^T lambda1 = 0     (nd,)
    h(q2) = 0                                                  (nc,)

with the Newton matrix ``[[J, -Dh(q1)_d^T], [Dh(q2)_d, 0]]`` (J the unconstrained DEL
Jacobian), a line search on 1/2 (|r|^2 + |h|^2), the acceptance rule (whose energy balance
includes the constraint impulse), then ``p2 = p1 + dt (L_q + F) - Dh(q1)_d^T lambda1``.
It stops under the general path's rule (:mod:`ros_vi.integrators.newton`): the DEL
residual's 2-norm is at most the tolerance or the rounding floor of its terms, and every
``|h_i(q2)|`` is at most its constraint's tolerance.  Nothing here allocates beyond the
offset tables.
"""
from numba import njit

from .packed import (DT, ITERS, MAXIT, RNORM, STATUS, T2, TOL, acceptance_views,
                     constraint_layout, constraint_views, kernel_scratch, layout, model_views,
                     step_views)
from .step_body import newton_step


@njit(cache=True)
def step_constrained_packed(I, F, W, CI, CF, CW):
    """One constrained VI step from the packed state; results in W (q2, p2, qm, v), CW
    (lambda1) and I's header (status, iterations; W holds the residual norm)."""
    o = layout(I)
    c = constraint_layout(I, CI.shape[0])
    newton_step(I, W, o, model_views(I, F, o), kernel_scratch(I, W, o), step_views(I, W, o),
                acceptance_views(W, o), constraint_views(I, CI, CF, CW, c))


@njit(cache=True)
def call_step_constrained(I, F, W, CI, CF, CW, dt, tol, t2, max_iterations):
    """:func:`step_constrained_packed` with the per-step scalars as arguments, returning
    ``(status, iterations, rnorm)`` (see :func:`fast_step.call_step`)."""
    W[DT] = dt
    W[TOL] = tol
    W[T2] = t2
    I[MAXIT] = max_iterations
    step_constrained_packed(I, F, W, CI, CF, CW)
    return I[STATUS], I[ITERS], W[RNORM]
