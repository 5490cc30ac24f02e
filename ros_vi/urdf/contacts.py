"""Contacts of a robot's collision geometry with a ground plane (:func:`ground_contacts`).

A ``<collision>`` shape touches a plane at its points nearest to it: a sphere at one point of
its surface (one :class:`~ros_vi.contact.SphereOnPlane` of its radius at its centre), a box
at its corners (eight points), a capsule at one of its two end spheres (two spheres).  Each
is exact: the shape cannot pass the plane anywhere if these cannot.  Cylinders and meshes
are not in contact yet (a warning names them).
"""
import itertools
import warnings

import numpy as np

from ..mechanics.contact import SphereOnPlane
from .tolerance import URDFWarning
from .shapes import link_geometry

__all__ = ['ground_contacts']


def _points(shape):
    """``[(centre (3,) in the link frame, radius)]`` standing for ``shape`` against a plane,
    or None for a shape without them."""
    T = shape.origin
    if shape.type == 'sphere':
        return [(T[:3, 3].copy(), float(shape.radius))]
    if shape.type == 'box':
        half = 0.5 * np.asarray(shape.size, dtype=float)
        return [(T[:3, :3] @ (half * np.array(s)) + T[:3, 3], 0.0)
                for s in itertools.product((-1.0, 1.0), repeat=3)]
    if shape.type == 'capsule':
        axis = T[:3, 2] * (0.5 * float(shape.length))
        return [(T[:3, 3] + axis, float(shape.radius)), (T[:3, 3] - axis, float(shape.radius))]
    return None


def ground_contacts(system, height=0.0, friction=1.0):
    """Add to ``system`` the contacts of every imported robot's (``system.urdf_robots``)
    collision spheres, boxes and capsules with the ground plane z = ``height`` [m], with
    Coulomb friction ``friction``; returns them (list of SphereOnPlane, named
    ``<prefix><link>_ground_<n>``).  Links welded to the world are left out (they cannot
    move onto the ground); a cylinder or mesh shape is left out with a URDFWarning naming
    it (not in contact yet)."""
    added = []
    skipped = []
    for robot in getattr(system, 'urdf_robots', []):
        shapes = link_geometry(robot.description, 'collision', base_dir=robot.base_dir)
        for shape in shapes:
            frame = robot.link_frame(shape.link)
            if not system.model.frame_anc[system.frames.index(frame)].any():
                continue                    # fixed in the world
            points = _points(shape)
            if points is None:
                skipped.append('%s%s (%s)' % (robot.prefix, shape.link, shape.type))
                continue
            for centre, radius in points:
                name = '%s%s_ground_%d' % (robot.prefix, shape.link, len(added))
                added.append(SphereOnPlane(system, frame, radius=radius, offset=centre,
                                           plane_point=(0.0, 0.0, float(height)),
                                           friction=friction, name=name))
    if skipped:
        warnings.warn('ground contact: collision shapes of %s are not in contact yet '
                      '(spheres, boxes and capsules are)' % ', '.join(skipped), URDFWarning,
                      stacklevel=2)
    return added
