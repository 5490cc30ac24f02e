"""Compiled values and Jacobians of the built-in holonomic constraints.

The built-in constraints (``Distance``, ``PointToPoint`` and its 1D/2D/3D forms,
``PointOnPlane``, ``Mimic``) are packed into two flat arrays by :func:`pack_constraints`, so
a compiled step can evaluate ``h (nc,)`` and ``Dh (nc, nq)`` from the kernel's kinematics
(world ``R (nf, 3, 3)``, ``P (nf, 3)``, joint-coordinate twists ``S (nt, 6)``, see
:mod:`ros_vi.mechanics.kernel`) without touching a Python object.  Like the kernels they run
on the joint coordinates ``theta (nt,)`` (the configs first, then one per mimic frame; see
:mod:`ros_vi.mechanics.model`) and fold the Jacobian onto the configs.

Packed layout: one row per constraint, in ``System.constraints`` order.

=========  ==============================  ==============================================
kind       ``CI[i] = (kind, a, b, aux)``   ``CF[i] = (c0, c1, c2, tolerance)``
=========  ==============================  ==============================================
DISTANCE   frame1, frame2, distance config  fixed distance d [m] in c0
           (-1: fixed distance)
POINT      frame1, frame2, world axis 0..2  unused
PLANE      plane frame, point frame, -1     plane normal n (plane-frame coordinates)
MIMIC      mimicking config, reference      multiplier in c0, offset in c1
           config, -1
=========  ==============================  ==============================================

Definitions (p_f the world origin of frame f, R_f its rotation; the same as the classes')::

    DISTANCE  h = (p_a - p_b) . (p_a - p_b) - d^2         d = q[aux] when aux >= 0
    POINT     h = (p_a - p_b)[aux]
    PLANE     h = (p_a - p_b) . (R_a n)
    MIMIC     h = q[a] - c0 q[b] - c1

(indices into q are config indices, so ``theta`` can stand for ``q``: its first nq entries
are the configs).

Jacobian: every frame-tree constraint depends on q only through the origin of its two
frames and (PLANE) a direction fixed in frame a.  For a scalar ``h(p_a, x_a, p_b)`` with
gradients ``g_a = dh/dp_a``, ``g_x = dh/dx_a``, ``g_b = dh/dp_b`` and a config c that moves
the frame (unit twist ``S_c = (w, v)``): ``dp/dq_c = w x p + v`` and ``dx/dq_c = w x x``, so
the frame's contribution to ``Dh[c]`` is ``S_c . (p x g + x x g_x, g)``, the twist paired with
a wrench that is the same for every config on the frame's chain to the world.  One wrench
per frame, one 6-vector product per config on its chain: O(depth) per constraint.

The general path evaluates the same constraints (and their second and third derivatives)
from the stacked frame vectors (:func:`ros_vi.mechanics.kernel.frame_dots`, see
:mod:`ros_vi.mechanics.constraints.point`); these kernels are the compiled step's form of
orders 0 and 1, kept for its speed (no (nc, nt, 3) derivative arrays), and
``test/test_mechanics_formulas.py`` holds them to the general path's values.
"""
import numpy as np
from numba import njit

from .constraints import Distance, Mimic, PointOnPlane, PointToPoint, PointToPoint1D
from .kernel import fold_vector, twist_dot_wrench

DISTANCE, POINT, PLANE, MIMIC = 0, 1, 2, 3
NCI = 4      # columns of CI
NCF = 4      # columns of CF
CF_TOL = 3   # column of CF holding the tolerance


@njit(cache=True)
def _wrench_on_chain(S, fjoint, cparent, frame, m0, m1, m2, f0, f1, f2, sign, row):
    """``row[c] += sign * S_c . (m, f)`` for every joint coordinate c that moves
    ``frame``."""
    c = fjoint[frame]
    while c >= 0:
        row[c] += sign * twist_dot_wrench(S, c, m0, m1, m2, f0, f1, f2)
        c = cparent[c]


@njit(cache=True)
def constraint_values_into(CI, CF, R, P, q, h):
    """``h (nc,)`` of the packed constraints at the kinematics ``R, P`` of configs ``q``
    (or of joint coordinates ``theta``), in place."""
    for i in range(CI.shape[0]):
        kind, a, b, aux = CI[i, 0], CI[i, 1], CI[i, 2], CI[i, 3]
        if kind == MIMIC:
            h[i] = q[a] - CF[i, 0] * q[b] - CF[i, 1]
            continue
        r0 = P[a, 0] - P[b, 0]
        r1 = P[a, 1] - P[b, 1]
        r2 = P[a, 2] - P[b, 2]
        if kind == DISTANCE:
            d = q[aux] if aux >= 0 else CF[i, 0]
            h[i] = r0 * r0 + r1 * r1 + r2 * r2 - d * d
        elif kind == POINT:
            h[i] = P[a, aux] - P[b, aux]
        else:
            n0, n1, n2 = CF[i, 0], CF[i, 1], CF[i, 2]
            x0 = R[a, 0, 0] * n0 + R[a, 0, 1] * n1 + R[a, 0, 2] * n2
            x1 = R[a, 1, 0] * n0 + R[a, 1, 1] * n1 + R[a, 1, 2] * n2
            x2 = R[a, 2, 0] * n0 + R[a, 2, 1] * n1 + R[a, 2, 2] * n2
            h[i] = r0 * x0 + r1 * x1 + r2 * x2


@njit(cache=True)
def constraint_jacobian_into(CI, CF, fjoint, cparent, leader, multiplier, R, P, S, q, Dh):
    """``Dh`` of the packed constraints at the kinematics ``R, P, S`` of configs ``q`` (or
    of joint coordinates ``theta``), written in place.

    ``Dh (nc, nt)`` is filled over joint coordinates and folded onto the configs: on return
    ``Dh[:, :nq]`` (nq = nt - len(leader)) is the Jacobian with respect to q.  ``fjoint``,
    ``cparent``, ``leader``, ``multiplier``: the Model's arrays (``mimic_leader``,
    ``mimic_multiplier``; empty without mimic frames, then nt = nq).
    """
    nq = Dh.shape[1] - leader.shape[0]
    for i in range(CI.shape[0]):
        row = Dh[i]
        for c in range(row.shape[0]):
            row[c] = 0.0
        kind, a, b, aux = CI[i, 0], CI[i, 1], CI[i, 2], CI[i, 3]
        if kind == MIMIC:
            row[a] += 1.0
            row[b] -= CF[i, 0]
            continue
        pa0, pa1, pa2 = P[a, 0], P[a, 1], P[a, 2]
        r0, r1, r2 = pa0 - P[b, 0], pa1 - P[b, 1], pa2 - P[b, 2]
        # g = dh/dp_a = -dh/dp_b; m = extra moment on frame a from a direction it carries
        m0 = m1 = m2 = 0.0
        if kind == DISTANCE:
            g0, g1, g2 = 2.0 * r0, 2.0 * r1, 2.0 * r2
            if aux >= 0:
                row[aux] -= 2.0 * q[aux]
        elif kind == POINT:
            g0 = 1.0 if aux == 0 else 0.0
            g1 = 1.0 if aux == 1 else 0.0
            g2 = 1.0 if aux == 2 else 0.0
        else:
            n0, n1, n2 = CF[i, 0], CF[i, 1], CF[i, 2]
            g0 = R[a, 0, 0] * n0 + R[a, 0, 1] * n1 + R[a, 0, 2] * n2
            g1 = R[a, 1, 0] * n0 + R[a, 1, 1] * n1 + R[a, 1, 2] * n2
            g2 = R[a, 2, 0] * n0 + R[a, 2, 1] * n1 + R[a, 2, 2] * n2
            # dh/dx = r and x = R_a n = g: moment x x r
            m0 = g1 * r2 - g2 * r1
            m1 = g2 * r0 - g0 * r2
            m2 = g0 * r1 - g1 * r0
        _wrench_on_chain(S, fjoint, cparent, a,
                         m0 + pa1 * g2 - pa2 * g1, m1 + pa2 * g0 - pa0 * g2,
                         m2 + pa0 * g1 - pa1 * g0, g0, g1, g2, 1.0, row)
        pb0, pb1, pb2 = P[b, 0], P[b, 1], P[b, 2]
        _wrench_on_chain(S, fjoint, cparent, b,
                         pb1 * g2 - pb2 * g1, pb2 * g0 - pb0 * g2, pb0 * g1 - pb1 * g0,
                         g0, g1, g2, -1.0, row)
        fold_vector(row, nq, leader, multiplier)


def pack_constraints(system):
    """``(CI (nc, 4) int64, CF (nc, 4) float)`` for the System's constraints (layout in the
    module docstring), or None when one of them is not a built-in kind (a user-written
    Constraint, or a subclass of a built-in one, which may redefine h)."""
    cons = system.constraints
    CI = np.zeros((len(cons), NCI), dtype=np.int64)
    CF = np.zeros((len(cons), NCF))
    for i, con in enumerate(cons):
        kind = type(con)
        if kind is Distance:
            CI[i, :3] = DISTANCE, con.frame1.index, con.frame2.index
            CI[i, 3] = -1 if con.config is None else con.config.index
        elif kind is PointToPoint or kind is PointToPoint1D:
            CI[i] = POINT, con.frame1.index, con.frame2.index, con.axis
        elif kind is PointOnPlane:
            CI[i] = PLANE, con.plane_frame.index, con.point_frame.index, -1
        elif kind is Mimic:
            CI[i] = MIMIC, con.config.index, con.reference.index, -1
        else:
            return None
    refresh_constraint_parameters(system, CF)
    return CI, CF


def refresh_constraint_parameters(system, CF):
    """Copy the parameters that may change without a structure change (fixed distance,
    plane normal, mimic multiplier and offset, tolerances) into ``CF`` (nc, 4), in place.
    The constraints must be the ones :func:`pack_constraints` accepted."""
    for i, con in enumerate(system.constraints):
        kind = type(con)
        if kind is Distance:
            if con.config is None:
                CF[i, 0] = con.distance
        elif kind is PointOnPlane:
            CF[i, :3] = con.normal
        elif kind is Mimic:
            CF[i, 0], CF[i, 1] = con.multiplier, con.offset
        CF[i, CF_TOL] = con.tolerance
