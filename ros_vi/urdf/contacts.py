"""Contacts of a robot's collision geometry with a ground plane (:func:`ground_contacts`).

A ``<collision>`` shape touches a plane at its points nearest to it: a sphere at one point of
its surface (one :class:`~ros_vi.contact.SphereOnPlane` of its radius at its centre), a box
at its corners (eight points), a capsule at one of its two end spheres (two spheres), a
cylinder on the edges of its caps (two rims, each touching at its point nearest the plane,
and three points on each rim it stands on), a mesh at the vertices of its convex hull (its
collision shape is that hull, as in MuJoCo and Gazebo).  Each is exact: the shape cannot
pass the plane anywhere if these cannot.  A mesh whose file cannot be read has none (a
warning names it).

Friction: a link's Gazebo surface coefficients ``<gazebo reference="link"><mu1>``/``<mu2>``
(:func:`surface_friction`) meet the ground's as Gazebo combines two surfaces, the smaller
of the two; a link without them takes the ground's.  The cone is round: with ``mu1`` and
``mu2`` unequal the smaller is used (a warning says so).
"""
import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.spatial

from ..mechanics.contact import (ContactSet, SphereOnBox, SphereOnCapsule, SphereOnCylinder,
                                 SphereOnHull, SphereOnPlane)
from .errors import URDFError
from .parse import parse_xml
from .tolerance import URDFWarning
from .shapes import link_geometry

__all__ = ['ContactPair', 'GROUND', 'body_contacts', 'check_pairs', 'disabled_collisions',
           'ground_contacts', 'surface_friction']


#: the name the ground plane goes by in a :class:`ContactPair`
GROUND = 'ground'


@dataclass(frozen=True)
class ContactPair:
    """A rule for the contacts between two sets of links (a world file's ``contacts``
    entry): ``first``, ``second`` tuples of link names (as in the simulated description,
    prefixed), prefixes ending in ``/`` (every link of a robot) or :data:`GROUND`; the
    contacts between a link of one and a link of the other take ``friction`` (mu >= 0)
    and ``restitution`` (in [0, 1]) where given (None: the surfaces' own), or none at all
    with ``enabled`` False.  Later rules win over earlier ones, field by field."""
    first: tuple
    second: tuple
    friction: float = None
    restitution: float = None
    enabled: bool = True

    @staticmethod
    def _has(names, link):
        return any(link == n or (n.endswith('/') and link.startswith(n)) for n in names)

    def matches(self, a, b):
        """True if this rule is about links ``a`` and ``b`` (either order; GROUND for the
        ground)."""
        return ((self._has(self.first, a) and self._has(self.second, b))
                or (self._has(self.first, b) and self._has(self.second, a)))


def _pair_rule(pairs, a, b, friction, restitution):
    """``(enabled, friction, restitution)`` of the contacts between links ``a`` and ``b``
    (GROUND for the ground): the surfaces' ``friction`` and ``restitution`` as overridden
    by the rules of ``pairs`` that match."""
    enabled = True
    for rule in pairs or ():
        if rule.matches(a, b):
            enabled = rule.enabled
            friction = friction if rule.friction is None else rule.friction
            restitution = restitution if rule.restitution is None else rule.restitution
    return enabled, friction, restitution


def check_pairs(system, pairs):
    """ValueError naming a link of a rule in ``pairs`` that no imported description of
    ``system`` has (prefixes and GROUND are not checked)."""
    links = set()
    for robot in getattr(system, 'urdf_robots', []):
        root = parse_xml(robot.description, 'URDF')
        links.update(robot.prefix + l.get('name') for l in root.findall('link'))
    for k, rule in enumerate(pairs or ()):
        for name in rule.first + rule.second:
            if name != GROUND and not name.endswith('/') and name not in links:
                raise ValueError('contacts[%d]: no link %r (links: %s)'
                                 % (k, name, ', '.join(sorted(links))))


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


# points on each cap's rim of a cylinder, besides the rim itself: a cylinder standing on
# a cap rests on them (on its rim alone it would balance on one point)
CAP_POINTS = 3


def _points(shape):
    """``[(centre (3,) in the link frame, radius, rim)]`` standing for ``shape`` against a
    plane (``rim``: None, or a cap edge's ``(axis, radius)`` as SphereOnPlane takes it), or
    None for a shape without them."""
    T = shape.origin
    if shape.type == 'sphere':
        return [(T[:3, 3].copy(), float(shape.radius), None)]
    if shape.type == 'box':
        half = 0.5 * np.asarray(shape.size, dtype=float)
        return [(T[:3, :3] @ (half * np.array(s)) + T[:3, 3], 0.0, None)
                for s in itertools.product((-1.0, 1.0), repeat=3)]
    if shape.type == 'capsule':
        axis = T[:3, 2] * (0.5 * float(shape.length))
        return [(T[:3, 3] + axis, float(shape.radius), None),
                (T[:3, 3] - axis, float(shape.radius), None)]
    if shape.type == 'cylinder':
        # each cap's edge (exact against a plane, tilted or rolling) and CAP_POINTS points
        # on it (standing on the cap)
        r, axis = float(shape.radius), T[:3, 2]
        out = []
        for sign in (1.0, -1.0):
            centre = T[:3, 3] + sign * 0.5 * float(shape.length) * axis
            out.append((centre, 0.0, (axis.copy(), r)))
            for k in range(CAP_POINTS):
                angle = 2.0 * math.pi * k / CAP_POINTS
                out.append((centre + r * (math.cos(angle) * T[:3, 0]
                                          + math.sin(angle) * T[:3, 1]), 0.0, None))
        return out
    if shape.type == 'mesh':
        # the vertices of the mesh's convex hull: its collision shape is that hull
        mesh = shape.triangles() if shape.path is not None else None
        if mesh is None:
            return None
        return [(v, 0.0, None) for v in hull_vertices(mesh[0])]
    return None


def hull_vertices(vertices):
    """The vertices (h, 3) of the convex hull of ``vertices`` (n, 3) [m] (all distinct
    ones of a flat or degenerate set)."""
    v = np.unique(np.asarray(vertices, dtype=float).reshape(-1, 3), axis=0)
    try:
        return v[scipy.spatial.ConvexHull(v).vertices]
    except scipy.spatial.QhullError:
        return v        # flat (or fewer than 4 points): every vertex may touch


def ground_contacts(system, height=0.0, friction=1.0, restitution=0.0, pairs=None):
    """Add to ``system`` the contacts of every imported robot's (``system.urdf_robots``)
    collision shapes (module doc) with the ground plane z = ``height`` [m], with
    Coulomb friction ``friction`` (the ground's; a link with Gazebo ``mu1``/``mu2`` gets the
    smaller of its own and the ground's: :func:`surface_friction`) and coefficient of
    restitution ``restitution`` (0: inelastic), both as the rules of ``pairs`` (a list of
    :class:`ContactPair`, the ground named :data:`GROUND`) set them for a link; returns
    them (list of SphereOnPlane, named ``<prefix><link>_ground_<n>``).  Links welded to
    the world are left out (they cannot move onto the ground); a mesh whose file cannot be
    read is left out with a URDFWarning naming it."""
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
            on, mu, e = _pair_rule(pairs, robot.prefix + shape.link, GROUND,
                                   min(friction, surfaces.get(shape.link, friction)),
                                   restitution)
            for centre, radius, rim in points if on else ():
                name = '%s%s_ground_%d' % (robot.prefix, shape.link, len(added))
                added.append(SphereOnPlane(system, frame, radius=radius, offset=centre,
                                           plane_point=(0.0, 0.0, float(height)),
                                           friction=mu, name=name, restitution=e, rim=rim))
    if skipped:
        warnings.warn('ground contact: the collision meshes of %s cannot be read, so they '
                      'touch nothing' % ', '.join(skipped), URDFWarning, stacklevel=2)
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


# [m]: two links of one robot closer than this at the start do not touch each other: the
# small links nested around a robot's joints (a hip's yaw, roll and pitch links, two
# joints apart) meet exactly there, and their contacts would only fight the joints
SELF_CLEARANCE = 0.01


def _bodies(description):
    """``(body, parent)``: {link: the link its rigid body is named by} (links joined by
    fixed joints are one body, named by its top link) and {body: the body it hangs from
    by a moving joint} (absent for a root)."""
    root = parse_xml(description, 'URDF')
    up = {}
    for joint in root.findall('joint'):
        p, c = joint.find('parent'), joint.find('child')
        if p is not None and c is not None:
            up[c.get('link')] = (p.get('link'), joint.get('type') == 'fixed')
    body = {}
    for link in (l.get('name') for l in root.findall('link')):
        top = link
        while top in up and up[top][1]:
            top = up[top][0]
        body[link] = top
    parent = {b: body.get(up[b][0], up[b][0]) for b in set(body.values()) if b in up}
    return body, parent


def disabled_collisions(description):
    """The pairs of links (frozensets of two names, unprefixed) a description's
    ``<disable_collisions link1="a" link2="b"/>`` elements exclude from self-collision
    (MoveIt's SRDF element, read from the URDF or an SRDF text alike)."""
    root = parse_xml(description, 'URDF or SRDF')
    return {frozenset((e.get('link1'), e.get('link2')))
            for e in root.findall('disable_collisions')
            if e.get('link1') and e.get('link2')}


def body_contacts(system, friction=1.0, restitution=0.0, pairs=None, self_collision=False,
                  q=None, disabled=()):
    """Add to ``system`` the contacts between the collision geometry of different robots
    and objects of every imported description (``system.urdf_robots``): those hung from a
    root link ``world`` on their own joints, as a world file's robots and objects are (a
    description with another root is one robot).  Returns them: every
    sphere, box corner, capsule end sphere, cylinder rim point and mesh hull vertex (as
    :func:`ground_contacts` takes them; a cylinder's rims against boxes and meshes only,
    whose faces are flat) of one against every box, sphere, capsule, cylinder and mesh (its
    convex hull) of another (a :class:`~ros_vi.contact.SphereOnBox`,
    :class:`~ros_vi.contact.SphereOnCapsule`, :class:`~ros_vi.contact.SphereOnCylinder` or
    :class:`~ros_vi.contact.SphereOnHull`) named ``<prefix><link>_on_<other link>_<n>``,
    with the friction of the two surfaces (the smaller of their Gazebo ``mu1``/``mu2``,
    each defaulting to ``friction``) and coefficient of restitution ``restitution``, or as
    the rules of ``pairs`` (a list of :class:`ContactPair`) set them for two links.  Pairs
    of links both welded to the world are left out.  A mesh that cannot be read, or is
    flat, is no target.

    With ``self_collision`` the links of one robot touch one another too, except (as
    MoveIt's collision matrix leaves them out): links of one rigid body (joined by fixed
    joints) and of two bodies joined by a joint (adjacent), the pairs of ``disabled``
    (frozensets of two link names, unprefixed: :func:`disabled_collisions`) and of the
    description's own ``<disable_collisions>`` elements, and the pairs in collision or
    closer than :data:`SELF_CLEARANCE` at the configuration ``q`` (nQ,; default
    ``system.q``: the robot's initial one): links nested around joints, which MoveIt's
    sampling finds always (or never) in collision.  A pair left out with a
    rule (``enabled: false``) is out either way."""
    system.hold_structure_changes()         # one structure update for all of them
    try:
        added = _body_contacts(system, friction, restitution, pairs, self_collision,
                               disabled)
    finally:
        system.resume_structure_changes()
    mine = [c for c in added if c.mine]
    if mine:
        # the robots' own pairs in collision at the start are left out
        touching = _in_collision(system, mine, q)
        system.remove_contacts(touching)
        gone = {id(c) for c in touching}
        added = [c for c in added if id(c) not in gone]
    for c in added:
        del c.mine
    return added


def _body_contacts(system, friction, restitution, pairs, self_collision, disabled):
    """:func:`body_contacts`' contacts, each marked ``mine`` (a pair of one robot's
    links)."""
    added = []
    for robot in getattr(system, 'urdf_robots', []):
        shapes = link_geometry(robot.description, 'collision', base_dir=robot.base_dir)
        surfaces = surface_friction(robot.description)
        assembly = _assemblies(robot.description)
        body, parent = _bodies(robot.description)
        off = set(disabled) | disabled_collisions(robot.description)
        frames = {s.link: robot.link_frame(s.link) for s in shapes}
        moves = {link: bool(system.model.frame_anc[system.frames.index(f)].any())
                 for link, f in frames.items()}
        # a mesh as a target is its convex hull (None: unreadable, or flat)
        hulls = {}
        for target in shapes:
            if target.type == 'mesh':
                points = _points(target)
                v = None if points is None else np.array([p for p, _, _ in points])
                flat = v is None or np.linalg.matrix_rank(v - v.mean(axis=0)) < 3
                hulls[id(target)] = None if flat else v

        def apart(a, b):
            # two links of one robot that may touch (self_collision): docstring
            ba, bb = body[a], body[b]
            return (self_collision and ba != bb and parent.get(ba) != bb
                    and parent.get(bb) != ba and frozenset((a, b)) not in off)

        for shape in shapes:
            points = _points(shape)
            if points is None:
                continue
            for target in shapes:
                same = assembly[target.link] == assembly[shape.link]
                if (target.type not in ('box', 'sphere', 'capsule', 'cylinder', 'mesh')
                        or hulls.get(id(target), 0) is None
                        or (same and not apart(shape.link, target.link))
                        or not (moves[shape.link] or moves[target.link])):
                    continue
                on, mu, e = _pair_rule(pairs, robot.prefix + shape.link,
                                       robot.prefix + target.link,
                                       min(surfaces.get(shape.link, friction),
                                           surfaces.get(target.link, friction)),
                                       restitution)
                for centre, radius, rim in points if on else ():
                    if rim is not None and target.type not in ('box', 'mesh'):
                        continue    # a rim's nearest point is to a flat face's plane
                    added.append(_touching(system, robot, shape, target, frames, hulls,
                                           centre, radius, rim, mu, e, len(added)))
                    added[-1].mine = same
    return added


def _in_collision(system, contacts, q):
    """The contacts of ``contacts`` whose pair of links has one closer than
    :data:`SELF_CLEARANCE` to its plane at ``q`` (nQ,; default ``system.q``)."""
    geometry = ContactSet(system, contacts)
    q = system.q if q is None else np.asarray(q, dtype=float)
    geometry.select(q)
    pair = [frozenset((c.frame.name, c.plane_frame.name)) for c in contacts]
    hit = {p for p, g in zip(pair, geometry.gaps(q)) if g < SELF_CLEARANCE}
    return [c for c, p in zip(contacts, pair) if p in hit]


def _touching(system, robot, shape, target, frames, hulls, centre, radius, rim, mu, e, n):
    """The contact of the point (sphere, rim) ``centre``, ``radius``, ``rim`` of
    ``shape``'s link with the shape ``target`` of another link, named with number
    ``n``."""
    name = '%s%s_on_%s_%d' % (robot.prefix, shape.link, target.link, n)
    common = dict(radius=radius, offset=centre, friction=mu, name=name, restitution=e,
                  rim=rim)
    frame, other = frames[shape.link], frames[target.link]
    if target.type == 'box':
        return SphereOnBox(system, frame, other, target.size, box_pose=target.origin,
                           **common)
    if target.type == 'mesh':
        return SphereOnHull(system, frame, other, hulls[id(target)], **common)
    if target.type == 'cylinder':
        return SphereOnCylinder(system, frame, other, float(target.radius),
                                0.5 * float(target.length), cylinder_pose=target.origin,
                                **common)
    half = 0.5 * float(target.length) if target.type == 'capsule' else 0.0
    return SphereOnCapsule(system, frame, other, float(target.radius), half,
                           capsule_pose=target.origin, **common)
