"""Contacts: a sphere carried by a frame against a plane (:class:`SphereOnPlane`; fixed in
the world or carried by another frame) or against a box carried by another frame
(:class:`SphereOnBox`: a body's corners on another body's faces), with Coulomb friction,
held by the VI step as unilateral constraints.

A contact is declared on a :class:`System` (like a constraint) and every
:class:`~ros_vi.integrators.MidpointVI` on it then keeps the sphere on the plane's side:
at the end of each step the gap is non-negative, the normal impulse pushes and is zero
where the gap is open, and the friction impulse lies in the Coulomb cone ``|beta| <= mu
gamma`` (the exact, round cone), opposing the contact point's slip with all the cone
allows (maximum dissipation).  docs/contact.md has the conditions and the method.

:func:`contact_kinematics` evaluates every contact of a system at a configuration at once
(gaps, their gradients and the contact points' Jacobians) on the model's stacked arrays.
"""
from dataclasses import dataclass

import numpy as np
import scipy.spatial

from . import kernel
from .contact_kernel import contact_bounds, contact_geometry, place_rims
from .frame import resolve_frame

__all__ = ['ContactForces', 'ContactSet', 'SphereOnBox', 'SphereOnCapsule', 'SphereOnCylinder',
           'SphereOnHull', 'SphereOnPlane', 'RIM_FLAT',
           'contact_hessians', 'contact_kinematics', 'plane_basis', 'plane_bases']


# a rim whose plane's normal has a part perpendicular to its axis below this at a step's
# start (the cap parallel to the plane to within this angle [rad]) touches through one
# material point through the step, the one nearest the plane there (or its last): no rim
# point is then nearer the plane than it by more than 2 rim_radius RIM_FLAT [m] (and with
# the three points ground_contacts puts on the rim, none nearer than theirs by more than
# rim_radius RIM_FLAT / 2).  Above it the touching point is found anew at every
# evaluation; below, its direction would be rounding noise.
RIM_FLAT = 1e-8


def plane_basis(normal):
    """``(n, t1, t2)``: the unit normal of ``normal`` (3,) and two unit tangents with
    ``t1 x t2 = n`` (t1 is the unit vector along the world axis most orthogonal to n,
    projected onto the plane)."""
    n = np.asarray(normal, dtype=float).reshape(3)
    return tuple(plane_bases(n / np.linalg.norm(n))[0])


def _finite(value, n, what):
    try:
        v = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError('%s must be %d numbers, got %r' % (what, n, value)) from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ValueError('%s must be %d finite numbers, got %r' % (what, n, value))
    return v


def _pose(value, what):
    """``value`` (None: the identity) as a finite (4, 4) transform, or ValueError naming
    ``what``."""
    pose = np.eye(4) if value is None else np.array(value, dtype=float)
    if pose.shape != (4, 4) or not np.all(np.isfinite(pose)):
        raise ValueError('%s must be a finite (4, 4) transform' % what)
    return pose


class SphereOnPlane:
    """A sphere of ``radius`` [m] (0: a point) centred at ``offset`` (3,) [m] in ``frame``,
    that may not pass through the plane through ``plane_point`` (3,) [m] with normal
    ``plane_normal`` (3,) (the free side is where it points), both in ``plane_frame`` (None,
    the default: the world; else a frame of the system, whose body then takes the equal and
    opposite impulses and carries the plane and its tangents along), with friction
    coefficient ``friction`` (>= 0; 0: frictionless) and coefficient of restitution
    ``restitution`` (in [0, 1]; 0, the default: impacts are inelastic; else the step in which
    the sphere strikes the plane ends with it leaving at ``restitution`` times the normal
    speed it came in with: docs/contact.md).

    With ``rim = (axis (3,), rim_radius [m])`` the touching side is instead the circle of
    that radius about ``offset`` (its centre) perpendicular to ``axis`` (in ``frame``):
    a cylinder's cap edge (``radius`` is then 0).  It touches the plane at its point
    nearest to it, ``x = offset - rim_radius u`` with u the unit part of the plane's
    normal (in ``frame``) perpendicular to the axis, found anew at every configuration
    the step evaluates, so its gap ``n . (c - p) - rim_radius |n_perp|`` is exact and
    smooth (a cylinder rolls on it with no step error); by the envelope theorem its
    gradient is that of the material point at x.  Where the cap is parallel to the plane
    at a step's start (``|n_perp|`` below :data:`RIM_FLAT`) every rim point is about
    equally near, and the step holds the one nearest there (a cylinder standing on its cap
    rests on points of the rim: :func:`ros_vi.urdf.ground_contacts` adds three).

    The gap ``phi(q) = n . (c(q) - p(q)) - radius`` [m] (``c`` the sphere's centre, ``p``
    the plane's point, ``n`` its normal, in the world at q); the contact point is
    ``x = c - radius n``, where the body slips relative to the plane with ``T^T (J_x - J_x')
    dq`` (T the plane's tangents t1, t2: :func:`plane_basis`; J_x' the Jacobian of the
    plane's body's material point at x).  The step's impulses on the sphere (after a step
    of :class:`MidpointVI`): :attr:`MidpointVI.contact_impulses`.
    """

    def __init__(self, system, frame, radius=0.0, offset=(0.0, 0.0, 0.0),
                 plane_point=(0.0, 0.0, 0.0), plane_normal=(0.0, 0.0, 1.0), friction=0.0,
                 name=None, restitution=0.0, plane_frame=None, rim=None):
        self._system = system
        kind = type(self).__name__
        self._frame = resolve_frame(system, frame, kind + ' frame')
        self._plane_frame = (None if plane_frame is None else
                             resolve_frame(system, plane_frame, kind + ' plane_frame'))
        if self._plane_frame is self._frame:
            raise ValueError('%s %r: the plane must be carried by another frame than the '
                             'sphere (%r)' % (kind, name, self._frame.name))
        self.name = name
        r = float(radius)
        if not (np.isfinite(r) and r >= 0.0):
            raise ValueError('SphereOnPlane %r: radius must be finite and >= 0, got %r'
                             % (name, radius))
        self._radius = r
        self._offset = _finite(offset, 3, 'SphereOnPlane %r: offset' % name)
        self._rim = None
        if rim is not None:
            axis, rho = rim
            axis = _finite(axis, 3, '%s %r: rim axis' % (kind, name))
            rho = float(rho)
            if not (np.any(axis != 0.0) and np.isfinite(rho) and rho > 0.0 and r == 0.0):
                raise ValueError('%s %r: rim must be (a non-zero axis, a radius > 0) with '
                                 'radius 0, got %r and radius %r' % (kind, name, rim, radius))
            self._rim = (axis / np.linalg.norm(axis), rho)
        self._point = _finite(plane_point, 3, 'SphereOnPlane %r: plane_point' % name)
        normal = _finite(plane_normal, 3, 'SphereOnPlane %r: plane_normal' % name)
        if not np.any(normal != 0.0):
            raise ValueError('SphereOnPlane %r: plane_normal must be non-zero' % name)
        self._basis = plane_basis(normal)
        self.friction = friction
        self.restitution = restitution
        system._add_contact(self)

    def __repr__(self):
        return '<%s %r frame=%r radius=%g mu=%g>' % (
            type(self).__name__, self.name, self._frame.name, self._radius, self._mu)

    @property
    def system(self):
        return self._system

    @property
    def frame(self):
        """The :class:`Frame` that carries the sphere."""
        return self._frame

    @property
    def radius(self):
        return self._radius

    @property
    def offset(self):
        """The sphere's centre (3,) [m] in :attr:`frame` (with a :attr:`rim`: the
        circle's)."""
        return self._offset.copy()

    @property
    def rim(self):
        """``(axis (3,) unit, rim_radius [m])`` of a circle touching side in :attr:`frame`,
        or None (a sphere)."""
        return None if self._rim is None else (self._rim[0].copy(), self._rim[1])

    @property
    def plane_frame(self):
        """The :class:`Frame` that carries the plane, or None (the world)."""
        return self._plane_frame

    @property
    def plane(self):
        """``(point (3,), n, t1, t2)`` [m]: the plane and its unit normal and tangents, in
        :attr:`plane_frame` (the world when None)."""
        return (self._point.copy(),) + tuple(b.copy() for b in self._basis)

    @property
    def friction(self):
        """The Coulomb friction coefficient mu (settable, >= 0)."""
        return self._mu

    @friction.setter
    def friction(self, value):
        self._mu = self._coefficient(value, 'friction', np.inf, 'finite and >= 0')

    @property
    def restitution(self):
        """The coefficient of restitution e in [0, 1] (settable; 0: inelastic)."""
        return self._e

    @restitution.setter
    def restitution(self, value):
        self._e = self._coefficient(value, 'restitution', 1.0, 'in [0, 1]')

    def bound(self):
        """``(centre (3,), radius [m])``: a sphere in :attr:`plane_frame` that holds
        everything the contact's sphere can touch, or None (a plane, unbounded: the
        broad phase then bounds the distance by the height over it)."""
        return None

    def _coefficient(self, value, what, high, rule):
        """``value`` as a float in [0, high] (high itself finite), or ValueError naming
        the contact, ``what`` and the ``rule``."""
        x = float(value)
        if not (0.0 <= x <= high and np.isfinite(x)):
            raise ValueError('%s %r: %s must be %s, got %r'
                             % (type(self).__name__, self.name, what, rule, value))
        return x


class SphereOnBox(SphereOnPlane):
    """A sphere of ``radius`` [m] (0: a point, such as a box's corner) centred at
    ``offset`` (3,) [m] in ``frame``, that may not enter the box of edge lengths ``size``
    (3,) [m] carried by ``box_frame`` at ``box_pose`` ((4, 4) in it, default the identity),
    with ``friction`` and ``restitution`` as :class:`SphereOnPlane`'s.

    The box is held by one of its faces at a time: the one whose plane the sphere's centre
    is farthest outside of (``max_i |l_i| - h_i`` with l the centre in the box's axes, h
    the half sizes: the signed distance for a centre facing a face, a lower bound on it
    elsewhere; past a face's plane the centre is inside; for a ``rim``, the face whose
    plane its nearest point is farthest outside of).  Each step chooses it at the
    step's start and holds the sphere off that face's plane through the step, as a
    :class:`SphereOnPlane` carried by ``box_frame``.  Exact for the corners of one box
    resting or sliding on the faces of another; an edge crossing an edge is not seen (a
    vertex-face model, docs/contact.md)."""

    def __init__(self, system, frame, box_frame, size, radius=0.0, offset=(0.0, 0.0, 0.0),
                 box_pose=None, friction=0.0, name=None, restitution=0.0, rim=None):
        size = _finite(size, 3, 'SphereOnBox %r: size' % name)
        if not np.all(size > 0.0):
            raise ValueError('SphereOnBox %r: size must be 3 lengths > 0, got %r'
                             % (name, tuple(size)))
        pose = _pose(box_pose, 'SphereOnBox %r: box_pose' % name)
        self._half = 0.5 * size
        self._box_pose = pose
        # starts on the top face (+z of the box); each step's start chooses the face
        super().__init__(system, frame, radius=radius, offset=offset,
                         plane_point=pose[:3, :3] @ (self._half * [0, 0, 1]) + pose[:3, 3],
                         plane_normal=pose[:3, 2], friction=friction, name=name,
                         restitution=restitution, plane_frame=box_frame, rim=rim)

    @property
    def box(self):
        """``(size (3,) [m], pose (4, 4))``: the box's edge lengths and its pose in
        :attr:`plane_frame`."""
        return 2.0 * self._half, self._box_pose.copy()

    # the face a step starts from before any has been chosen: the top (+z)
    face = 5

    def bound(self):
        return self._box_pose[:3, 3].copy(), float(np.linalg.norm(self._half))

    def faces(self):
        """The box's six faces as planes in :attr:`plane_frame`: ``(points (6, 3),
        bases (6, 3, 3))`` (rows n, t1, t2 of :func:`plane_basis`), in the order -x, +x,
        -y, +y, -z, +z of the box's axes."""
        R, p = self._box_pose[:3, :3], self._box_pose[:3, 3]
        points, bases = [], []
        for axis in range(3):
            for sign in (-1.0, 1.0):
                n = sign * R[:, axis]
                points.append(p + self._half[axis] * n)
                bases.append(np.array(plane_basis(n)))
        return np.array(points), np.array(bases)


class SphereOnHull(SphereOnPlane):
    """A sphere of ``radius`` [m] (0: a point) centred at ``offset`` (3,) [m] in ``frame``
    (or a circle: ``rim``, as :class:`SphereOnPlane`'s), that may not enter the convex hull
    of ``vertices`` (n, 3) [m] carried by ``hull_frame`` at ``hull_pose`` ((4, 4) in it,
    default the identity), such as a collision mesh; ``friction`` and ``restitution`` as
    :class:`SphereOnPlane`'s.

    As :class:`SphereOnBox` (which is the hull of a box's corners): the hull is held by one
    of its faces at a time, the one whose plane the sphere's centre is farthest outside of,
    chosen at each step's start.  Exact for points resting or sliding on a face; an edge
    crossing an edge is not seen."""

    def __init__(self, system, frame, hull_frame, vertices, radius=0.0,
                 offset=(0.0, 0.0, 0.0), hull_pose=None, friction=0.0, name=None,
                 restitution=0.0, rim=None):
        v = np.asarray(vertices, dtype=float)
        if v.ndim != 2 or v.shape[1] != 3 or not np.all(np.isfinite(v)):
            raise ValueError('SphereOnHull %r: vertices must be finite (n, 3) [m]' % name)
        pose = _pose(hull_pose, 'SphereOnHull %r: hull_pose' % name)
        try:
            hull = scipy.spatial.ConvexHull(v)
        except scipy.spatial.QhullError:
            raise ValueError('SphereOnHull %r: the vertices span no volume (a flat or '
                             'degenerate hull)' % name) from None
        # facets as (outward unit normal, offset) in the pose's axes, into plane_frame's
        # (qhull's triangles: coplanar ones repeat a plane, which changes no choice)
        normals = hull.equations[:, :3] @ pose[:3, :3].T
        points = v[hull.simplices[:, 0]] @ pose[:3, :3].T + pose[:3, 3]
        self._faces = (points, plane_bases(normals))
        corners = v @ pose[:3, :3].T + pose[:3, 3]
        middle = 0.5 * (corners.min(axis=0) + corners.max(axis=0))
        self._bound = (middle, float(np.linalg.norm(corners - middle, axis=1).max()))
        self.face = int(np.argmax(normals[:, 2]))
        super().__init__(system, frame, radius=radius, offset=offset,
                         plane_point=points[self.face], plane_normal=normals[self.face],
                         friction=friction, name=name, restitution=restitution,
                         plane_frame=hull_frame, rim=rim)

    def bound(self):
        return self._bound[0].copy(), self._bound[1]

    def faces(self):
        """The hull's faces as planes in :attr:`plane_frame`: ``(points (F, 3), bases (F,
        3, 3))`` (rows n, t1, t2 of :func:`plane_basis`, n outward)."""
        return self._faces[0].copy(), self._faces[1].copy()


class SphereOnCapsule(SphereOnPlane):
    """A sphere of ``radius`` [m] (0: a point, such as a box's corner) centred at
    ``offset`` (3,) [m] in ``frame``, that may not enter the capsule of radius
    ``capsule_radius`` [m] around the segment of half length ``half_length`` [m] (0, the
    default: a sphere) along the z axis of ``capsule_pose`` ((4, 4) in ``capsule_frame``,
    default the identity), with ``friction`` and ``restitution`` as
    :class:`SphereOnPlane`'s.

    Each step holds the sphere off the capsule's tangent plane at the point of its surface
    nearest the sphere's centre at the step's start (through c' + capsule_radius u, c' the
    segment's point nearest the centre and u the unit vector from it to the centre), carried
    by ``capsule_frame``.  The capsule lies behind that plane, so the true gap is never
    smaller than the held one: nothing penetrates.  Exact while the contact point stays
    put on the capsule (resting, sticking, head-on impacts); a sphere rolling or sliding
    over it sees its surface to first order in the step (the plane follows it step by
    step)."""

    def __init__(self, system, frame, capsule_frame, capsule_radius, half_length=0.0,
                 radius=0.0, offset=(0.0, 0.0, 0.0), capsule_pose=None, friction=0.0,
                 name=None, restitution=0.0, rim=None):
        rc, h = float(capsule_radius), float(half_length)
        if not (np.isfinite(rc) and rc > 0.0 and np.isfinite(h) and h >= 0.0):
            raise ValueError('SphereOnCapsule %r: capsule_radius must be > 0 and half_length '
                             '>= 0, got %r and %r' % (name, capsule_radius, half_length))
        pose = _pose(capsule_pose, 'SphereOnCapsule %r: capsule_pose' % name)
        self._capsule = (rc, h, pose)
        # starts on the top of its upper end; each step's start chooses the point
        super().__init__(system, frame, radius=radius, offset=offset,
                         plane_point=pose[:3, 3] + (h + rc) * pose[:3, 2],
                         plane_normal=pose[:3, 2], friction=friction, name=name,
                         restitution=restitution, plane_frame=capsule_frame, rim=rim)

    @property
    def capsule(self):
        """``(radius [m], half_length [m], pose (4, 4))`` of the capsule in
        :attr:`plane_frame` (its segment along the pose's z axis)."""
        rc, h, pose = self._capsule
        return rc, h, pose.copy()

    def bound(self):
        rc, h, pose = self._capsule
        return pose[:3, 3].copy(), rc + h


class SphereOnCylinder(SphereOnPlane):
    """A sphere of ``radius`` [m] (0: a point, such as a box's corner) centred at
    ``offset`` (3,) [m] in ``frame`` (or a circle: ``rim``, as :class:`SphereOnPlane`'s),
    that may not enter the solid cylinder of radius ``cylinder_radius`` [m] and half length
    ``half_length`` [m] about the z axis of ``cylinder_pose`` ((4, 4) in ``cylinder_frame``,
    default the identity), with ``friction`` and ``restitution`` as
    :class:`SphereOnPlane`'s.

    As :class:`SphereOnCapsule`: each step holds the sphere off a plane through the
    cylinder's surface point nearest the sphere's centre at the step's start, with the
    normal from that point to the centre (the side, a cap, or the edge between them); the
    cylinder lies behind that plane (it is convex), so nothing penetrates.  A centre inside
    the cylinder is held off the face (side or cap) it is nearest to.  Exact while the
    contact point stays put on the cylinder; first order in the step for one moving over
    it."""

    def __init__(self, system, frame, cylinder_frame, cylinder_radius, half_length,
                 radius=0.0, offset=(0.0, 0.0, 0.0), cylinder_pose=None, friction=0.0,
                 name=None, restitution=0.0, rim=None):
        rc, h = float(cylinder_radius), float(half_length)
        if not (np.isfinite(rc) and rc > 0.0 and np.isfinite(h) and h > 0.0):
            raise ValueError('SphereOnCylinder %r: cylinder_radius and half_length must be '
                             '> 0, got %r and %r' % (name, cylinder_radius, half_length))
        pose = _pose(cylinder_pose, 'SphereOnCylinder %r: cylinder_pose' % name)
        self._cylinder = (rc, h, pose)
        # starts on its upper cap; each step's start chooses the plane
        super().__init__(system, frame, radius=radius, offset=offset,
                         plane_point=pose[:3, 3] + h * pose[:3, 2],
                         plane_normal=pose[:3, 2], friction=friction, name=name,
                         restitution=restitution, plane_frame=cylinder_frame, rim=rim)

    @property
    def cylinder(self):
        """``(radius [m], half_length [m], pose (4, 4))`` of the cylinder in
        :attr:`plane_frame` (its axis the pose's z axis)."""
        rc, h, pose = self._cylinder
        return rc, h, pose.copy()

    def bound(self):
        rc, h, pose = self._cylinder
        return pose[:3, 3].copy(), float(np.hypot(rc, h))


def plane_bases(normals):
    """:func:`plane_basis` of each unit normal of ``normals`` (k, 3): (k, 3, 3), rows n,
    t1, t2."""
    n = np.asarray(normals, dtype=float).reshape(-1, 3)
    rows = np.arange(n.shape[0])
    axis = np.zeros_like(n)
    axis[rows, np.argmin(np.abs(n), axis=1)] = 1.0
    t1 = axis - np.einsum('ki,ki->k', axis, n)[:, None] * n
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return np.stack([n, t1, np.cross(n, t1)], axis=1)


@dataclass
class ContactForces:
    """The contacts' forces over one step, each in the axes of the frame that carries it
    (:meth:`ContactSet.forces`).

    ``names`` (k,) the contacts, ``frames`` (k,) their frames' names (for an imported
    robot: the prefixed link names, tf's frames), ``modes`` (k,) 'open', 'stick' or
    'slide', ``points`` (k, 3) [m] where each sphere touches its plane and ``forces``
    (k, 3) [N] the force on the body there, both in the frame.  A contact whose plane is
    carried by a body (:attr:`SphereOnPlane.plane_frame`) pushes that body back:
    ``others`` (k,) its frame's name (None: the world), ``other_points`` (k, 3) [m] and
    ``other_forces`` (k, 3) [N] the same point and the opposite force in its axes.
    """
    names: list
    frames: list
    modes: list
    points: np.ndarray
    forces: np.ndarray
    others: list = None
    other_points: np.ndarray = None
    other_forces: np.ndarray = None

    def wrenches(self):
        """Per frame that carries a contact or takes a contact's reaction, in the order
        first met: ``[(frame, force (3,) [N], torque (3,) [N m])]``, the sum of its
        contacts' forces (and reactions) and their moment about the frame's origin, in the
        frame's axes (zero where every contact is open).  The frame's own wrench from the
        ground and the other bodies, as a force-torque sensor at its origin measures it."""
        out = {}
        entries = [(self.frames, self.points, self.forces)]
        if self.others is not None:
            entries.append((self.others, self.other_points, self.other_forces))
        for frames, points, forces in entries:
            moments = np.cross(points, forces)
            for frame, f, m in zip(frames, forces, moments):
                if frame is None:
                    continue
                if frame not in out:
                    out[frame] = (np.zeros(3), np.zeros(3))
                out[frame][0][:] += f
                out[frame][1][:] += m
        return [(frame, f, m) for frame, (f, m) in out.items()]


class ContactSet:
    """The contacts of a system stacked for evaluation (built once per structure, as the
    Model: the step evaluates them on arrays, with no Python per contact):
    ``frame`` (k,) the carrying frames' indices, ``offset`` (k, 3) [m] the spheres'
    centres in them, ``radius`` (k,) [m], ``plane_frame`` (k,) the indices of the frames
    that carry the planes (-1: the world), ``point`` (k, 3) [m] and ``basis`` (k, 3, 3)
    (rows n, t1, t2) the planes in those frames, ``moves`` (k, nt) +1 where a joint
    coordinate moves the sphere's frame, -1 where it moves the plane's, 0 where both or
    neither (a motion of both does not change the contact).  Friction is read from the
    contacts themselves (it may change).

    A :class:`SphereOnBox`'s plane is the face :meth:`select` chose (the state of the set:
    the step chooses at its start; the constructor at the system's configuration)."""

    def __init__(self, system, contacts=None):
        self.system = system
        model = self.model = system.model
        self.contacts = list(system.contacts if contacts is None else contacts)
        k = len(self.contacts)
        index = {id(f): i for i, f in enumerate(system.frames)}
        self.frame = np.array([index[id(c.frame)] for c in self.contacts], dtype=np.int64)
        self.plane_frame = np.array([-1 if c.plane_frame is None else index[id(c.plane_frame)]
                                     for c in self.contacts], dtype=np.int64)
        self.offset = np.array([c.offset for c in self.contacts]).reshape(k, 3)
        self.radius = np.array([c.radius for c in self.contacts], dtype=float)
        planes = [c.plane for c in self.contacts]
        self.point = np.array([p[0] for p in planes]).reshape(k, 3)
        self.basis = np.array([np.array(p[1:]) for p in planes]).reshape(k, 3, 3)
        anc = np.vstack([model.frame_anc.astype(float), np.zeros((1, model.nt))])
        self.moves = anc[self.frame] - anc[self.plane_frame]
        self.carried = np.flatnonzero(self.plane_frame >= 0)   # planes on bodies
        self._no_moves = np.zeros((k, 0))
        # the boxes' and hulls' faces (nb, F, 3) and (nb, F, 3, 3) (F the most any has;
        # the others' padded with faces no centre is ever outside of), and each one's
        # chosen face (nb,)
        self.boxes = np.array([m for m, c in enumerate(self.contacts)
                               if isinstance(c, (SphereOnBox, SphereOnHull))], dtype=np.int64)
        faces = [self.contacts[m].faces() for m in self.boxes]
        most = max([f[0].shape[0] for f in faces], default=0)
        self.face_points = np.zeros((len(faces), most, 3))
        self.face_bases = np.zeros((len(faces), most, 3, 3))
        self.face_height = np.full((len(faces), most), np.inf)   # n . p of each face
        for j, (points, bases) in enumerate(faces):
            nf = points.shape[0]
            self.face_points[j, :nf] = points
            self.face_bases[j, :nf] = bases
            self.face_height[j, :nf] = np.einsum('fi,fi->f', bases[:, 0], points)
        self.face = np.array([self.contacts[m].face for m in self.boxes], dtype=np.int64)
        # the capsules (and spheres) as (radius, half length, pose) in their frames
        self.capsules = np.array([m for m, c in enumerate(self.contacts)
                                  if isinstance(c, SphereOnCapsule)], dtype=np.int64)
        shapes = [self.contacts[m].capsule for m in self.capsules]
        self.capsule_radius = np.array([c[0] for c in shapes], dtype=float)
        self.capsule_half = np.array([c[1] for c in shapes], dtype=float)
        self.capsule_pose = np.array([c[2] for c in shapes]).reshape(-1, 4, 4)
        # the cylinders as targets, likewise
        self.cylinders = np.array([m for m, c in enumerate(self.contacts)
                                   if isinstance(c, SphereOnCylinder)], dtype=np.int64)
        shapes = [self.contacts[m].cylinder for m in self.cylinders]
        self.cylinder_radius = np.array([c[0] for c in shapes], dtype=float)
        self.cylinder_half = np.array([c[1] for c in shapes], dtype=float)
        self.cylinder_pose = np.array([c[2] for c in shapes]).reshape(-1, 4, 4)
        # rims (circles touching planes): their centres, axes and radii in their frames;
        # ``offset`` holds each one's touching point, placed at every evaluation
        self.rims = np.array([m for m, c in enumerate(self.contacts) if c.rim is not None],
                             dtype=np.int64)
        self.rim_centre = self.offset[self.rims].copy()
        self.rim_axis = np.array([self.contacts[m].rim[0] for m in self.rims]).reshape(-1, 3)
        self.rim_radius = np.array([self.contacts[m].rim[1] for m in self.rims], dtype=float)
        # each contact's index in :attr:`rims` (-1: not a rim)
        self.rim_of = np.full(k, -1, dtype=np.int64)
        self.rim_of[self.rims] = np.arange(self.rims.shape[0])
        # the rims whose touching point a step holds (RIM_FLAT: chosen by select)
        self.rim_held = np.zeros(self.rims.shape[0], dtype=bool)
        if self.rims.shape[0]:
            # a first touching point: along the rim's first tangent
            start = plane_bases(self.rim_axis)[:, 1]
            self.offset[self.rims] = self.rim_centre + self.rim_radius[:, None] * start
        # the broad phase: each contact's sphere (centre in its frame, the rims' circles'
        # centres, and reach [m]: its radius or the rim's) and a sphere in the plane's
        # frame holding its target (radius inf: a plane, always near); :meth:`near`
        self.reach = self.radius.copy()
        self.reach[self.rims] = self.rim_radius
        self.centre = self.offset.copy()
        self.centre[self.rims] = self.rim_centre
        bounds = [c.bound() for c in self.contacts]
        self.bound_centre = np.array([np.zeros(3) if b is None else b[0]
                                      for b in bounds]).reshape(k, 3)
        self.bound_radius = np.array([np.inf if b is None else b[1] for b in bounds],
                                     dtype=float)
        self._all = np.arange(k, dtype=np.int64)
        self.joint_map = model.joint_map
        self.select(system.q)

    def __len__(self):
        return len(self.contacts)

    def _poses(self, q):
        """World rotations and positions of every frame and of the world last (index -1:
        the identity), and the joint coordinates' unit twists (nt, 6), at ``q`` (nQ,)."""
        model = self.model
        theta = model.joint_positions(np.asarray(q, dtype=float))
        R, P = kernel.forward_kinematics(model.parent, model.kind, model.value, model.fcfg,
                                         model.fixedR, model.fixedp, theta)
        S = kernel.joint_twists(model.kind, model.cframe, model.corder, R, P, model.nt)
        return (np.concatenate([R, np.eye(3)[None]]), np.concatenate([P, np.zeros((1, 3))]),
                S)

    def select(self, q, rows=None):
        """Choose each :class:`SphereOnBox`'s and :class:`SphereOnHull`'s face at ``q``
        (nQ,): the one whose plane its sphere's centre is farthest outside of (the class
        docstring); the step holds it off that plane; and each :class:`SphereOnCapsule`'s
        and :class:`SphereOnCylinder`'s plane through the surface point nearest the
        sphere's centre; of every contact, or of those of ``rows`` (an index array).
        Returns the chosen faces (nb,) (for a box 0..5: -x, +x, -y, +y, -z, +z; for a hull
        the index of :meth:`SphereOnHull.faces`)."""
        if not (self.boxes.shape[0] or self.capsules.shape[0] or self.cylinders.shape[0]
                or self.rims.shape[0]):
            return self.face
        R, P, _ = self._poses(q)
        want = None
        if rows is not None:
            want = np.zeros(len(self.contacts), dtype=bool)
            want[rows] = True

        for kind, choose in ((self.capsules, self._select_capsules),
                             (self.cylinders, self._select_cylinders),
                             (self.boxes, self._select_faces)):
            j = slice(None) if want is None else np.flatnonzero(want[kind])
            if kind.shape[0] and (want is None or j.shape[0]):
                choose(R, P, j)
        if self.rims.shape[0]:
            # each rim's touching point at q, and whether the step holds it
            self.rim_held[:] = False
            self.rim_held[:] = ~self._place_rims(R, P)
        return self.face

    def near(self, q, rows=None):
        """The broad phase at ``q`` (nQ,): a lower bound (k,) [m] on each contact's
        distance to its target (of those of ``rows``, an index array): its sphere's
        centre's distance from the sphere that holds the target
        (:meth:`SphereOnPlane.bound`) less both radii, or for a plane its height over it
        less the radius (a rim's: its centre's less the rim's radius).  Above 0 the
        contact cannot touch at q.  Compiled (``contact_kernel.contact_bounds``)."""
        R, P, _ = self._poses(q)
        rows = self._all if rows is None else np.asarray(rows, dtype=np.int64)
        return contact_bounds(R, P, self.frame, self.plane_frame, self.centre, self.reach,
                              self.bound_centre, self.bound_radius, self.point, self.basis,
                              rows)

    def _select_faces(self, R, P, j):
        """The faces of the boxes and hulls ``j`` (of :attr:`boxes`) at the poses ``R``,
        ``P``."""
        m = self.boxes[j]
        _, local = self._centres(m, R, P)
        # how far the centre is outside each face's plane (in the plane frame)
        bases, points = self.face_bases[j], self.face_points[j]
        outside = np.einsum('kfi,ki->kf', bases[:, :, 0], local) - self.face_height[j]
        ring = np.flatnonzero(self.rim_of[m] >= 0)
        if ring.shape[0]:
            # a rim: how far its point nearest each face's plane is outside it (the
            # centre's height less rim_radius |n_perp|); the largest of these is a lower
            # bound on the rim's distance to the solid, where the nearest point to one
            # plane alone may lie far beyond that face (a rim wider than a thin box)
            r, mr = self.rim_of[m[ring]], m[ring]
            f, b = self.frame[mr], self.plane_frame[mr]
            centre = np.einsum('kij,kj->ki', R[f], self.rim_centre[r]) + P[f]
            centre = np.einsum('kji,kj->ki', R[b], centre - P[b])
            axis = np.einsum('kji,kj->ki', R[b],
                             np.einsum('kij,kj->ki', R[f], self.rim_axis[r]))
            normal = bases[ring, :, 0]
            along = np.einsum('kfi,ki->kf', normal, axis)
            across = np.sqrt(np.maximum(0.0, 1.0 - along * along))
            outside[ring] = (np.einsum('kfi,ki->kf', normal, centre)
                             - self.face_height[j][ring] - self.rim_radius[r, None] * across)
        face = np.argmax(outside, axis=1)
        self.face[j] = face
        rows = np.arange(m.shape[0])
        self.point[m] = points[rows, face]
        self.basis[m] = bases[rows, face]

    def _select_capsules(self, R, P, j):
        """The tangent planes of the capsules ``j`` (of :attr:`capsules`:
        SphereOnCapsule) at the poses ``R``, ``P``."""
        m = self.capsules[j]
        _, local = self._centres(m, R, P)       # in the capsule's frame
        pose, half = self.capsule_pose[j], self.capsule_half[j]
        base, axis = pose[:, :3, 3], pose[:, :3, 2]
        along = np.clip(np.einsum('ki,ki->k', local - base, axis), -half, half)
        nearest = base + along[:, None] * axis
        d = local - nearest
        size = np.linalg.norm(d, axis=1)
        # a centre on the segment itself has no direction: it keeps its last plane
        ok = size > 0.0
        u = d[ok] / size[ok, None]
        rows = m[ok]
        self.point[rows] = nearest[ok] + self.capsule_radius[j][ok, None] * u
        self.basis[rows] = plane_bases(u)

    def _centres(self, m, R, P):
        """The world centres (len(m), 3) of contacts ``m`` (their touching points for rims)
        and the same in their planes' frames, at the poses ``R``, ``P``."""
        f, b = self.frame[m], self.plane_frame[m]
        centre = np.einsum('kij,kj->ki', R[f], self.offset[m]) + P[f]
        return centre, np.einsum('kji,kj->ki', R[b], centre - P[b])

    def _select_cylinders(self, R, P, j):
        """The planes of the cylinders ``j`` (of :attr:`cylinders`: SphereOnCylinder) at
        the poses ``R``, ``P``: through the surface point nearest each centre, normal
        towards it; a centre inside holds to the face (side or cap) it is nearest to."""
        m = self.cylinders[j]
        _, local = self._centres(m, R, P)
        pose = self.cylinder_pose[j]
        rc, h = self.cylinder_radius[j], self.cylinder_half[j]
        # the centre in the cylinder's axes
        c = np.einsum('kji,kj->ki', pose[:, :3, :3], local - pose[:, :3, 3])
        rho = np.hypot(c[:, 0], c[:, 1])
        radial = np.zeros_like(c)
        ok = rho > 0.0
        radial[ok, :2] = c[ok, :2] / rho[ok, None]
        z = np.clip(c[:, 2], -h, h)
        inside = (rho <= rc) & (np.abs(c[:, 2]) <= h)
        nearest = radial * np.minimum(rho, rc)[:, None]
        nearest[:, 2] = z
        d = c - nearest
        size = np.linalg.norm(d, axis=1)
        normal = np.zeros_like(c)
        outside = ~inside & (size > 0.0)
        normal[outside] = d[outside] / size[outside, None]
        # inside: the side when it is nearer than the cap (and the centre is off the axis)
        side = inside & (rc - rho < h - np.abs(c[:, 2])) & ok
        cap = inside & ~side
        normal[side] = radial[side]
        nearest[side] = rc[side, None] * radial[side] + np.outer(c[side, 2], [0, 0, 1.0])
        normal[cap, 2] = np.where(c[cap, 2] >= 0.0, 1.0, -1.0)
        nearest[cap] = c[cap] * [1.0, 1.0, 0.0] + h[cap, None] * normal[cap]
        R0, p0 = pose[:, :3, :3], pose[:, :3, 3]
        self.point[m] = np.einsum('kij,kj->ki', R0, nearest) + p0
        self.basis[m] = plane_bases(np.einsum('kij,kj->ki', R0, normal))

    def _place_rims(self, R, P):
        """Each rim's touching point (into :attr:`offset`) at the poses ``R``, ``P``: its
        point nearest to its plane (:class:`SphereOnPlane`), except for those the step
        holds (:attr:`rim_held`) and those whose cap is parallel to the plane
        (:data:`RIM_FLAT`), which keep theirs; compiled (``contact_kernel.place_rims``).
        Returns which ones moved (nr,)."""
        return place_rims(R, self.frame, self.plane_frame, self.basis, self.rims,
                          self.rim_centre, self.rim_axis, self.rim_radius, self.rim_held,
                          RIM_FLAT, self.offset)

    def _planes(self, R, P):
        """The planes at the poses ``R``, ``P`` (as :meth:`_poses`): world points (k, 3)
        and bases (k, 3, 3) (rows n, t1, t2)."""
        b = self.plane_frame
        point = np.einsum('kij,kj->ki', R[b], self.point) + P[b]
        basis = np.einsum('kij,kaj->kai', R[b], self.basis)
        return point, basis

    def kinematics(self, q, rows=None):
        """``(gap (k,) [m], normal (k, nQ), slip (k, 2, nQ))`` at ``q`` (nQ,): as
        :func:`contact_kinematics` (with the boxes' faces :meth:`select` last chose), of
        every contact or of those of ``rows`` (an index array: then (len(rows),) and so
        on, in its order)."""
        return self._geometry(q, rows, True)

    def gaps(self, q, rows=None):
        """The gaps (k,) [m] at ``q`` (nQ,) of every contact or of those of ``rows`` (an
        index array), as :meth:`kinematics` gives them, without their Jacobians (the
        step's broad phase evaluates them for all)."""
        return self._geometry(q, rows, False)[0]

    def _geometry(self, q, rows, jacobians):
        k, nq = len(self.contacts), self.model.nq
        if not k or (rows is not None and not len(rows)):
            return np.zeros(0), np.zeros((0, nq)), np.zeros((0, 2, nq))
        R, P, S = self._poses(q)
        if self.rims.shape[0]:
            self._place_rims(R, P)
        m = slice(None) if rows is None else rows
        # a coordinate with unit twist (w, v) moves a material point p at w x p + v: the
        # sphere's centre's rate and the material point's at the contact point x = c - r n;
        # the plane's body's material points there move likewise, with the opposite sign
        # in ``moves`` (the gap's rate is n . (v_c - v_c'): the plane's turning and the
        # centre's motion relative to it cancel in n . (dc - dp)); compiled, one pass
        # (with no coordinates for the gaps alone)
        moves = self.moves[m] if jacobians else self._no_moves[m]
        gap, Jn, Jt = contact_geometry(R, P, S if jacobians else S[:0], self.frame[m],
                                       self.plane_frame[m], self.offset[m], self.radius[m],
                                       self.point[m], self.basis[m], moves)
        if not jacobians:
            return gap, None, None
        E = self.joint_map
        return gap, Jn @ E, Jt @ E

    def forces(self, q, impulses, dt, modes, q1=None):
        """The forces a step of ``dt`` [s] ending at ``q`` (nQ,) put on the bodies through
        the contacts, from its impulses ``impulses`` (k, 3) [N s] (gamma, beta1, beta2:
        :attr:`MidpointVI.contact_impulses`) and modes ``modes`` (k,) ('open', 'stick',
        'slide': :attr:`MidpointVI.contact_modes`): a :class:`ContactForces`.
        The force is the step's mean, impulse / dt, the contact's normal and tangent
        impulses combined (gamma n + beta1 t1 + beta2 t2) along the plane's axes at the
        step's start ``q1`` (nQ,; default q: the impulses act along them through the step,
        which matters for a plane carried by a body), at the touching point at q; a plane
        carried by a body takes the opposite force at the same point."""
        k = len(self.contacts)
        impulses = np.asarray(impulses, dtype=float).reshape(k, 3)
        if q1 is not None and self.carried.shape[0]:
            _, basis = self._planes(*self._poses(q1)[:2])
            R, P, _ = self._poses(q)
        else:
            R, P, _ = self._poses(q)
            _, basis = self._planes(R, P)
        if self.rims.shape[0]:
            self._place_rims(R, P)
        world = np.einsum('ka,kai->ki', impulses, basis) / float(dt)
        x = (np.einsum('kij,kj->ki', R[self.frame], self.offset) + P[self.frame]
             - self.radius[:, None] * self._planes(R, P)[1][:, 0])
        # into the carrying frames' axes
        out = []
        for f in (self.frame, self.plane_frame):
            out.append((np.einsum('kji,kj->ki', R[f], x - P[f]),
                        np.einsum('kji,kj->ki', R[f], world)))
        names = [frame.name for frame in self.system.frames]
        return ContactForces([c.name for c in self.contacts], [names[f] for f in self.frame],
                             list(modes), out[0][0], out[0][1],
                             [None if f < 0 else names[f] for f in self.plane_frame],
                             out[1][0], -out[1][1])

    def points(self, q):
        """Per sphere contact whose plane is fixed in the world, at ``q`` (nQ,): ``(m, chain, w,
        v, centre, x, n, t1, t2)`` with ``m`` its index, ``chain`` the joint coordinates
        that move its frame (shallow to deep), ``w``, ``v`` (len(chain), 3) their unit
        spatial twists, the sphere's centre, the contact point x = centre - radius n and
        the plane's basis."""
        R, P, S = self._poses(q)
        if self.rims.shape[0]:
            self._place_rims(R, P)
        rims = set(self.rims.tolist())
        for m, c in enumerate(self.contacts):
            if self.plane_frame[m] >= 0 or m in rims:
                continue
            f = self.frame[m]
            centre = R[f] @ self.offset[m] + P[f]
            n, t1, t2 = self.basis[m]
            chain = self.model.frame_chain(f)
            yield (m, chain, S[chain, :3], S[chain, 3:], centre,
                   centre - self.radius[m] * n, n, t1, t2)

    # the step of the fourth-order differences of the Jacobians that give the second
    # derivatives of a contact between two bodies (truncation ~h^4, rounding ~1e-16/h)
    HESSIAN_DIFFERENCE_STEP = 1e-3

    def hessians(self, q):
        """Second derivatives at ``q`` (nQ,): as :func:`contact_hessians`."""
        model = self.model
        k, nt = len(self.contacts), model.nt
        hess = np.zeros((k, model.nq, model.nq))
        dslip = np.zeros((k, 2, model.nq, model.nq))
        E = self.joint_map
        H = np.zeros((nt, nt))
        for m, chain, w, v, centre, x, n, t1, t2 in self.points(q):
            r = self.radius[m]
            dc = np.cross(w, centre) + v                  # (len(chain), 3)
            dx = np.cross(w, x) + v
            # [i, j]: w_i x dc_j, the second derivative for i at or above j
            w_dc = np.cross(w[:, None, :], dc[None, :, :])
            above = np.triu(np.ones((len(chain), len(chain)), dtype=bool))
            Hc = np.where(above[:, :, None], w_dc, np.swapaxes(w_dc, 0, 1))
            # [i, j] for j above i (j < i): w_j x dx_i + r w_i x (w_j x n)
            w_n = np.cross(w, n)
            lower = (np.cross(w[None, :, :], dx[:, None, :])
                     + r * np.cross(w[:, None, :], w_n[None, :, :]))
            Dx = np.where(above[:, :, None], w_dc, lower)
            H[:] = 0.0
            H[np.ix_(chain, chain)] = Hc @ n
            hess[m] = E.T @ H @ E
            for a, t in enumerate((t1, t2)):
                H[np.ix_(chain, chain)] = Dx @ t
                dslip[m, a] = E.T @ H @ E
        c = np.union1d(self.carried, self.rims)
        if c.shape[0]:
            # between two bodies, and for rims (whose touching point moves on them):
            # fourth-order central differences of the exact Jacobians (the faces held as
            # chosen)
            q = np.asarray(q, dtype=float)
            for j in range(model.nq):
                h = self.HESSIAN_DIFFERENCE_STEP * max(1.0, abs(q[j]))
                for offset, weight in ((-2.0, 1.0), (-1.0, -8.0), (1.0, 8.0), (2.0, -1.0)):
                    qj = q.copy()
                    qj[j] += offset * h
                    _, normal, slip = self.kinematics(qj)
                    hess[c, :, j] += (weight / (12.0 * h)) * normal[c]
                    dslip[c, :, :, j] += (weight / (12.0 * h)) * slip[c]
        return hess, dslip


def contact_kinematics(system, q, contacts=None):
    """The contacts' geometry at the configuration ``q`` (nQ,) of ``system``:
    ``(gap (k,) [m], normal (k, nQ) = d gap / d q, slip (k, 2, nQ))`` with ``slip`` the
    tangential Jacobian ``T^T J_x`` [m/rad or m/m] of the body's material point at each
    contact point (its slip rate is ``slip @ dq``; relative to the plane's body for a
    plane carried by one), for ``contacts`` (default: all of the system's, in order), each
    :class:`SphereOnBox` on the face it faces at q.  Mimic joints are folded onto their
    leaders.  (A step holds a :class:`ContactSet` and evaluates it directly.)"""
    geometry = ContactSet(system, contacts)
    geometry.select(q)
    return geometry.kinematics(q)


def contact_hessians(system, q, contacts=None):
    """Second derivatives of the contacts' geometry at ``q`` (nQ,) (as
    :func:`contact_kinematics`): ``(gap_hessian (k, nQ, nQ), slip_derivative (k, 2, nQ,
    nQ))`` with ``gap_hessian[m] = d2 gap / dq dq`` (symmetric) and
    ``slip_derivative[m, a, i, j] = d slip[m, a, i] / d q_j``.

    Exact, from the joints' twists: a coordinate j above coordinate i on the frame's chain
    turns i's twist, ``d S_i / d q_j = [S_j, S_i]`` (the Lie bracket), and every
    coordinate moves the sphere's centre c at ``dc_j = w_j x c + v_j``.  So the centre's
    second derivatives are ``w_a x dc_b`` (a the shallower of i, j, b the deeper); the
    material point at the contact point x = c - r n, whose velocity column is ``dx_i =
    w_i x x + v_i`` while x moves with c, has ``d dx_i / d q_j = w_j x dx_i + r w_i x (w_j
    x n)`` for j above i and ``w_i x dc_j`` otherwise.  For a plane carried by a body
    (two bodies in contact) they are fourth-order central differences of the exact
    Jacobians (:attr:`ContactSet.HESSIAN_DIFFERENCE_STEP`; about 1e-10 relative)."""
    geometry = ContactSet(system, contacts)
    geometry.select(q)
    return geometry.hessians(q)
