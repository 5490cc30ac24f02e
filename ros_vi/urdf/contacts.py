"""Contacts of a robot's collision geometry with a ground plane (:func:`ground_contacts`).

A ``<collision>`` shape touches a plane at its points nearest to it: a sphere at one point of
its surface (one :class:`~ros_vi.contact.SphereOnPlane` of its radius at its centre), a box
at its corners (eight points), a capsule at one of its two end spheres (two spheres).  Each
is exact: the shape cannot pass the plane anywhere if these cannot.  Cylinders and meshes
are not in contact yet (a warning names them).

Friction: a link's Gazebo surface coefficients ``<gazebo reference="link"><mu1>``/``<mu2>``
(:func:`surface_friction`) meet the ground's as Gazebo combines two surfaces, the smaller
of the two; a link without them takes the ground's.  The cone is round: with ``mu1`` and
``mu2`` unequal the smaller is used (a warning says so).
"""
import itertools
import math
import warnings

import numpy as np

from ..mechanics.contact import SphereOnBox, SphereOnCapsule, SphereOnPlane
from .errors import URDFError
from .parse import parse_xml
from .tolerance import URDFWarning
from .shapes import link_geometry

__all__ = ['body_contacts', 'ground_contacts', 'surface_friction']


def surface_friction(urdf_text):
    """{link: mu} from the description's ``<gazebo reference="link">`` elements with
    ``<mu1>`` and/or ``<mu2>`` (Gazebo's two friction directions): the smaller of those
    given (the cone here is round; a URDFWarning names a link whose two differ).  Raises
    :class:`URDFError` naming the link for a coefficient that is not a number >= 0."""
    root = parse_xml(urdf_text, 'URDF')
    out = {}
    for element in root.findall('gazebo'):
        link = element.get('reference')
        given = {}
        for tag in ('mu1', 'mu2'):
            child = element.find(tag)
            if child is None or link is None:
                continue
            try:
                mu = float((child.text or '').strip())
            except ValueError:
                mu = float('nan')
            if not (math.isfinite(mu) and mu >= 0.0):
                raise URDFError('URDF <gazebo reference="%s">: <%s> must be a friction '
                                'coefficient >= 0, got %r' % (link, tag, child.text))
            given[tag] = mu
        if not given:
            continue
        if len(set(given.values())) > 1:
            warnings.warn('URDF <gazebo reference="%s">: mu1 %g and mu2 %g differ; the '
                          'friction cone is round, so the smaller (%g) is used'
                          % (link, given['mu1'], given['mu2'], min(given.values())),
                          URDFWarning, stacklevel=2)
        out[link] = min(given.values())
    return out


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


def ground_contacts(system, height=0.0, friction=1.0, restitution=0.0):
    """Add to ``system`` the contacts of every imported robot's (``system.urdf_robots``)
    collision spheres, boxes and capsules with the ground plane z = ``height`` [m], with
    Coulomb friction ``friction`` (the ground's; a link with Gazebo ``mu1``/``mu2`` gets the
    smaller of its own and the ground's: :func:`surface_friction`) and coefficient of
    restitution ``restitution`` (0: inelastic); returns them (list of
    SphereOnPlane, named
    ``<prefix><link>_ground_<n>``).  Links welded to the world are left out (they cannot
    move onto the ground); a cylinder or mesh shape is left out with a URDFWarning naming
    it (not in contact yet)."""
    added = []
    skipped = []
    for robot in getattr(system, 'urdf_robots', []):
        shapes = link_geometry(robot.description, 'collision', base_dir=robot.base_dir)
        surfaces = surface_friction(robot.description)
        for shape in shapes:
            frame = robot.link_frame(shape.link)
            if not system.model.frame_anc[system.frames.index(frame)].any():
                continue                    # fixed in the world
            points = _points(shape)
            if points is None:
                skipped.append('%s%s (%s)' % (robot.prefix, shape.link, shape.type))
                continue
            mu = min(friction, surfaces.get(shape.link, friction))
            for centre, radius in points:
                name = '%s%s_ground_%d' % (robot.prefix, shape.link, len(added))
                added.append(SphereOnPlane(system, frame, radius=radius, offset=centre,
                                           plane_point=(0.0, 0.0, float(height)),
                                           friction=mu, name=name,
                                           restitution=restitution))
    if skipped:
        warnings.warn('ground contact: collision shapes of %s are not in contact yet '
                      '(spheres, boxes and capsules are)' % ', '.join(skipped), URDFWarning,
                      stacklevel=2)
    return added


def _assemblies(description):
    """{link: assembly}: the bodies that may touch one another.  Under a root link named
    ``world`` (a world file's description, or a URDF that welds its robots to ``world``)
    each link's assembly is its top link below the root, the robot or object it belongs
    to; in any other description every link is in the root's one assembly (one robot: no
    self-collision)."""
    root = parse_xml(description, 'URDF')
    parent = {}
    for joint in root.findall('joint'):
        p, c = joint.find('parent'), joint.find('child')
        if p is not None and c is not None:
            parent[c.get('link')] = p.get('link')
    out = {}
    for link in (l.get('name') for l in root.findall('link')):
        top = link
        while top in parent and parent[top] in parent:
            top = parent[top]
        out[link] = top if parent.get(top) == 'world' else 'the robot'
    return out


def body_contacts(system, friction=1.0, restitution=0.0):
    """Add to ``system`` the contacts between the collision geometry of different robots
    and objects of every imported description (``system.urdf_robots``): those hung from a
    root link ``world`` on their own joints, as a world file's robots and objects are (a
    description with another root is one robot, and gets none).  Returns them: every
    sphere, box corner and capsule end sphere (as :func:`ground_contacts` takes them) of
    one against every box, sphere and capsule of another (a
    :class:`~ros_vi.contact.SphereOnBox` or :class:`~ros_vi.contact.SphereOnCapsule`) named
    ``<prefix><link>_on_<other link>_<n>``, with the friction of the two surfaces (the
    smaller of their Gazebo ``mu1``/``mu2``, each defaulting to ``friction``) and
    coefficient of restitution ``restitution``.  Pairs of links both welded to the world
    are left out; contact within one robot (self-collision) is not added.  Cylinders and
    meshes are neither (left out as :func:`ground_contacts` leaves them)."""
    added = []
    for robot in getattr(system, 'urdf_robots', []):
        shapes = link_geometry(robot.description, 'collision', base_dir=robot.base_dir)
        surfaces = surface_friction(robot.description)
        assembly = _assemblies(robot.description)
        frames = {s.link: robot.link_frame(s.link) for s in shapes}
        moves = {link: bool(system.model.frame_anc[system.frames.index(f)].any())
                 for link, f in frames.items()}
        for shape in shapes:
            points = _points(shape)
            if points is None:
                continue
            for target in shapes:
                if (target.type not in ('box', 'sphere', 'capsule')
                        or assembly[target.link] == assembly[shape.link]
                        or not (moves[shape.link] or moves[target.link])):
                    continue
                mu = min(surfaces.get(shape.link, friction),
                         surfaces.get(target.link, friction))
                for centre, radius in points:
                    name = '%s%s_on_%s_%d' % (robot.prefix, shape.link, target.link,
                                              len(added))
                    common = dict(radius=radius, offset=centre, friction=mu, name=name,
                                  restitution=restitution)
                    if target.type == 'box':
                        added.append(SphereOnBox(system, frames[shape.link],
                                                 frames[target.link], target.size,
                                                 box_pose=target.origin, **common))
                    else:
                        half = 0.5 * float(target.length) if target.type == 'capsule' else 0.0
                        added.append(SphereOnCapsule(system, frames[shape.link],
                                                     frames[target.link], float(target.radius),
                                                     half, capsule_pose=target.origin,
                                                     **common))
    return added
