"""Compiled geometry of the stacked contacts (:class:`ros_vi.mechanics.contact.ContactSet`).

One pass over the contacts and the joint coordinates that move them, from the kernel's
kinematics (world ``R (nf, 3, 3)``, ``P (nf, 3)``, joint-coordinate twists ``S (nt, 6)``,
see :mod:`ros_vi.mechanics.kernel`): each contact's gap and the Jacobians of its gap and of
its slip on the joint coordinates (before the mimic fold).  The formulas are
:meth:`ContactSet.kinematics`'s: a coordinate with unit twist (w, v) moves a material point
p at w x p + v; the gap's rate is the normal part of the sphere's centre's rate relative to
the plane's body there, the slip's the tangential part of the contact point's.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def contact_geometry(R, P, S, frame, plane_frame, offset, radius, point, basis, moves):
    """``(gap (k,) [m], normal (k, nt), slip (k, 2, nt))`` of the k contacts: sphere
    centres ``offset`` (k, 3) in frames ``frame`` (k,), radii ``radius`` (k,), planes
    through ``point`` (k, 3) with axes ``basis`` (k, 3, 3) (rows n, t1, t2) in frames
    ``plane_frame`` (k,) (-1: the world), ``moves`` (k, nt) the signed map of the
    coordinates that move each (+1 the sphere's body, -1 the plane's)."""
    k = frame.shape[0]
    nt = S.shape[0]
    gap = np.zeros(k)
    normal = np.zeros((k, nt))
    slip = np.zeros((k, 2, nt))
    c = np.zeros(3)
    x = np.zeros(3)
    axes = np.zeros((3, 3))
    p = np.zeros(3)
    for m in range(k):
        a, b = frame[m], plane_frame[m]
        for i in range(3):
            c[i] = P[a, i]
            for j in range(3):
                c[i] += R[a, i, j] * offset[m, j]
        for r in range(3):
            for i in range(3):
                if b < 0:
                    axes[r, i] = basis[m, r, i]
                else:
                    axes[r, i] = 0.0
                    for j in range(3):
                        axes[r, i] += R[b, i, j] * basis[m, r, j]
        for i in range(3):
            if b < 0:
                p[i] = point[m, i]
            else:
                p[i] = P[b, i]
                for j in range(3):
                    p[i] += R[b, i, j] * point[m, j]
        g = -radius[m]
        for i in range(3):
            g += axes[0, i] * (c[i] - p[i])
            x[i] = c[i] - radius[m] * axes[0, i]
        gap[m] = g
        for t in range(nt):
            s = moves[m, t]
            if s == 0.0:
                continue
            w0, w1, w2 = S[t, 0], S[t, 1], S[t, 2]
            # the centre's and the contact point's rates for this coordinate
            dc0 = w1 * c[2] - w2 * c[1] + S[t, 3]
            dc1 = w2 * c[0] - w0 * c[2] + S[t, 4]
            dc2 = w0 * c[1] - w1 * c[0] + S[t, 5]
            dx0 = w1 * x[2] - w2 * x[1] + S[t, 3]
            dx1 = w2 * x[0] - w0 * x[2] + S[t, 4]
            dx2 = w0 * x[1] - w1 * x[0] + S[t, 5]
            normal[m, t] = s * (axes[0, 0] * dc0 + axes[0, 1] * dc1 + axes[0, 2] * dc2)
            slip[m, 0, t] = s * (axes[1, 0] * dx0 + axes[1, 1] * dx1 + axes[1, 2] * dx2)
            slip[m, 1, t] = s * (axes[2, 0] * dx0 + axes[2, 1] * dx1 + axes[2, 2] * dx2)
    return gap, normal, slip


@njit(cache=True)
def place_rims(R, frame, plane_frame, basis, rims, centre, axis, rim_radius, held, flat,
               offset):
    """Move each rim's touching point into ``offset`` (k, 3) [m, in its frame]: for rim j,
    contact ``rims[j]`` with centre ``centre[j]`` (3,) and unit ``axis[j]`` (3,) in its
    frame and radius ``rim_radius[j]`` [m], the rim's point nearest its plane (normal
    ``basis[m, 0]`` in the plane's frame), ``centre - rim_radius u`` with u the unit part
    of the normal perpendicular to the axis; unless ``held[j]`` or that part's length is at
    most ``flat`` (the cap parallel to the plane): those keep theirs.  ``R`` (nf + 1, 3, 3)
    the world rotations with the world's identity last (index -1).  Returns which moved
    (nr,)."""
    nr = rims.shape[0]
    moved = np.zeros(nr, dtype=np.bool_)
    nw = np.zeros(3)
    nl = np.zeros(3)
    for j in range(nr):
        if held[j]:
            continue
        m = rims[j]
        f, b = frame[m], plane_frame[m]
        for i in range(3):
            nw[i] = 0.0
            for k in range(3):
                nw[i] += R[b, i, k] * basis[m, 0, k]
        along = 0.0
        for i in range(3):
            nl[i] = 0.0
            for k in range(3):
                nl[i] += R[f, k, i] * nw[k]
            along += nl[i] * axis[j, i]
        size = 0.0
        for i in range(3):
            nl[i] -= along * axis[j, i]
            size += nl[i] * nl[i]
        size = np.sqrt(size)
        if size > flat:
            for i in range(3):
                offset[m, i] = centre[j, i] - rim_radius[j] / size * nl[i]
            moved[j] = True
    return moved


@njit(cache=True)
def contact_bounds(R, P, frame, plane_frame, centre, reach, bound_centre, bound_radius,
                   point, basis, rows):
    """The broad phase's lower bounds (len(rows),) [m] on the distances of contacts
    ``rows`` to their targets: for contact m, its sphere (centre ``centre[m]`` (3,) in
    frame ``frame[m]``, radius ``reach[m]``) against the sphere ``bound_centre[m]``,
    ``bound_radius[m]`` in frame ``plane_frame[m]`` that holds its target (their centres'
    distance less both radii), or, where ``bound_radius[m]`` is inf (a plane), against
    its plane (``point[m]``, normal ``basis[m, 0]``): the centre's height over it less the
    radius.  ``R`` (nf + 1, 3, 3), ``P`` (nf + 1, 3) the world poses with the world's
    last (index -1)."""
    out = np.empty(rows.shape[0])
    c = np.zeros(3)
    for i in range(rows.shape[0]):
        m = rows[i]
        a, b = frame[m], plane_frame[m]
        for r in range(3):
            c[r] = P[a, r]
            for j in range(3):
                c[r] += R[a, r, j] * centre[m, j]
        if np.isinf(bound_radius[m]):
            height = 0.0
            for r in range(3):
                n = 0.0
                p = P[b, r]
                for j in range(3):
                    n += R[b, r, j] * basis[m, 0, j]
                    p += R[b, r, j] * point[m, j]
                height += n * (c[r] - p)
            out[i] = height - reach[m]
        else:
            d2 = 0.0
            for r in range(3):
                o = P[b, r]
                for j in range(3):
                    o += R[b, r, j] * bound_centre[m, j]
                d2 += (c[r] - o) ** 2
            out[i] = np.sqrt(d2) - reach[m] - bound_radius[m]
    return out
