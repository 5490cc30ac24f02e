"""World files: several robots and loose objects in one simulation (docs/world-files.md).

A world file is YAML with one schema::

    gravity: [0, 0, -9.81]            # m/s^2 (default)
    ground: {height: 0.0, friction: 0.8}   # a ground plane z = height; with friction (mu)
                                       # it is a contact surface (docs/contact.md); or false;
                                       # restitution: e in [0, 1] (default 0: inelastic)
    robots:
      - name: arm                      # required, unique, a ROS name token (letters,
                                       # digits, _); the prefix defaults to name + '/'
        urdf: urdf/arm.urdf            # path (relative to the world file; .xacro too) ...
        # urdf_text: "<robot ...>"     # ... or the XML itself
        prefix: "arm/"                 # optional ('' allowed for one robot)
        pose: {xyz: [0, 0, 0], rpy: [0, 0, 0]}
        floating: false                # true: a free joint under its root link
        twist: {linear: [0, 0, 0], angular: [0, 0, 0]}   # floating only; world frame
        initial_positions: {joint: value}                # URDF joint names, rad or m
    objects:
      - name: box                      # required, unique
        shape: {box: [0.1, 0.2, 0.3]}  # or {sphere: r}, {cylinder: [r, length]},
                                       # {capsule: [r, length]} (axis z), or
        # urdf: one_link.urdf          # a one-link URDF (its link's inertial and geometry)
        mass: 1.0                      # kg; or density: 1000.0 (kg/m^3, for a shape)
        inertia: [ixx, iyy, izz, ixy, ixz, iyz]   # optional (default: the solid shape's)
        pose: {xyz: [0, 0, 1], rpy: [0, 0, 0]}
        twist: {linear: [0, 0, 0], angular: [0, 0, 0]}   # world frame [m/s, rad/s]
        rgba: [0.8, 0.3, 0.2, 1]
        friction: 0.5                  # optional: its surface's mu (Gazebo's mu1/mu2)
    contacts:                          # optional rules per pair (a contact ground needed)
      - between: [box, arm/gripper]    # two of: a robot's or object's name (all its links),
                                       # a robot's link (prefixed) or ground
        friction: 1.2                  # mu of their contacts (default: the smaller of
                                       # the two surfaces')
        restitution: 0.5               # e (default: the ground's)
        enabled: true                  # false: they pass through each other
    self_collision: true               # a robot's links touch one another (default false;
                                       # with a contact ground)

:func:`load_world` reads and checks it (every error names the file and the entry, e.g.
``objects[1].shape``) into a :class:`World`, whose :meth:`World.urdf` is one URDF
description of the whole scene: a root link ``world``, each robot's links and joints under
its prefix hung from it by a fixed joint (or a ``floating`` joint: a free joint) at its
pose, and each object as a link on a ``floating`` joint named after it.  Everything that
simulates a URDF (``Simulation``, the node, ``ros-vi simulate``/``view``/``info``/``animate``,
the recorders) therefore simulates a world, with the objects' and floating bases'
configs those of free joints (``ros_vi.mechanics.free``; their translation along the axes of
the initial pose, their angles on the moving chart).  A ground with ``friction`` holds the
robots' and objects' collision shapes on it (:func:`ros_vi.urdf.ground_contacts`;
:meth:`World.contact_ground`), and the robots and objects on one another
(:func:`ros_vi.urdf.body_contacts`), with the ``contacts`` rules' friction and restitution
per pair; without ``friction`` objects fall through the ground plane.
"""
import copy
import math
import os
import re
from dataclasses import dataclass, field

import numpy as np
import yaml
from lxml import etree

from ..urdf.geometry import origin_matrix

__all__ = ['World', 'WorldRobot', 'WorldObject', 'WorldError', 'load_world',
           'solid_inertia']

SHAPES = ('box', 'sphere', 'cylinder', 'capsule')


class WorldError(ValueError):
    """A world file that cannot be read or does not follow the schema."""


@dataclass
class WorldRobot:
    """A robot of a world: ``name``, ``prefix``, URDF ``text``, ``base_dir`` (its meshes),
    ``pose`` (4, 4) in the world, ``floating``, ``twist`` (6,) (linear, angular) [m/s,
    rad/s] in the world frame, ``initial_positions`` {URDF joint: value}."""
    name: str
    prefix: str
    text: str
    base_dir: str
    pose: np.ndarray
    floating: bool = False
    twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    initial_positions: dict = field(default_factory=dict)


@dataclass
class WorldObject:
    """A loose rigid body: ``name``, ``shape`` ('box', 'sphere', 'cylinder', 'capsule' or
    None for a URDF link), ``size`` (the shape's numbers), ``mass`` [kg], ``inertia`` (3, 3)
    [kg m^2] about its origin (its centre of mass), ``pose`` (4, 4), ``twist`` (6,) world
    frame, ``rgba``; ``link_xml``: the link element of a one-link URDF object; ``friction``
    its surface's Coulomb coefficient (None: the ground's)."""
    name: str
    shape: str
    size: tuple
    mass: float
    inertia: np.ndarray
    pose: np.ndarray
    twist: np.ndarray
    rgba: tuple = (0.6, 0.6, 0.65, 1.0)
    link_xml: str = None
    friction: float = None


@dataclass
class World:
    """A parsed world file (see the module doc)."""
    gravity: np.ndarray
    ground: float = None
    ground_friction: float = None      # the ground's mu: a contact surface (None: not)
    ground_restitution: float = 0.0    # its coefficient of restitution
    robots: list = field(default_factory=list)
    objects: list = field(default_factory=list)
    where: str = 'world'
    contact_pairs: list = field(default_factory=list)   # ros_vi.urdf.contacts.ContactPair
    self_collision: bool = False       # a robot's own links touch (with a contact ground)

    def urdf(self):
        """The whole scene as one URDF description (module doc)."""
        root = etree.Element('robot', name='world')
        etree.SubElement(root, 'link', name='world')
        for robot in self.robots:
            _add_robot(root, robot, self.where)
        for obj in self.objects:
            _add_object(root, obj)
        return etree.tostring(root, pretty_print=True).decode()

    def joint_name(self, robot_or_object):
        """Name (config base name) of the joint that holds a robot or object."""
        if isinstance(robot_or_object, WorldObject):
            return robot_or_object.name
        return robot_or_object.prefix + 'world_joint'

    def robot_joints(self, joint_names):
        """{robot name: [the names of ``joint_names`` that are the robot's]} in world order:
        a name is the robot's whose prefix it starts with (the longest such prefix)."""
        joints = {robot.name: [] for robot in self.robots}
        by_length = sorted(self.robots, key=lambda r: -len(r.prefix))
        for name in joint_names:
            owner = next((r for r in by_length if name.startswith(r.prefix)), None)
            if owner is not None:
                joints[owner.name].append(name)
        return joints

    def initial_state(self):
        """``({config: position}, {config: velocity})`` [m, rad; m/s, rad/s]: the robots'
        initial joint positions and the initial twists of the free joints (configs
        ``joint_x .. joint_rz``: rates of the translation along the initial pose's axes and
        of the chart angles, which at the chart's centre are the body angular velocity)."""
        positions, velocities = {}, {}
        for robot in self.robots:
            for joint, value in robot.initial_positions.items():
                positions[robot.prefix + joint] = float(value)
        held = [(self.joint_name(r), r.pose, r.twist) for r in self.robots if r.floating]
        held += [(self.joint_name(o), o.pose, o.twist) for o in self.objects]
        for name, pose, twist in held:
            R = pose[:3, :3]
            for part, value in zip(('_x', '_y', '_z', '_rx', '_ry', '_rz'),
                                   np.concatenate([R.T @ twist[:3], R.T @ twist[3:]])):
                if value != 0.0:
                    velocities[name + part] = float(value)
        return positions, velocities


    def contact_ground(self):
        """``(height [m], friction, restitution)`` of a ground that is a contact surface
        (the ``ground`` keyword of :func:`ros_vi.simulation.setup_robot`), else None."""
        if self.ground is None or self.ground_friction is None:
            return None
        if self.contact_pairs:
            return (self.ground, self.ground_friction, self.ground_restitution,
                    list(self.contact_pairs))
        return (self.ground, self.ground_friction, self.ground_restitution)

    def setup_options(self):
        """The keywords of :func:`ros_vi.simulation.setup_robot` that put the world in its
        initial state: ``initial_joints``, ``initial_positions``, ``initial_velocities``
        (:meth:`initial_state`; a config given only a velocity starts at 0), and
        ``self_collision``."""
        positions, velocities = self.initial_state()
        names = list(dict.fromkeys(list(positions) + list(velocities)))
        return dict(initial_joints=names,
                    initial_positions=[positions.get(n, 0.0) for n in names],
                    initial_velocities=[velocities.get(n, 0.0) for n in names],
                    self_collision=self.self_collision)


def solid_inertia(shape, size, mass):
    """Inertia (3, 3) [kg m^2] about the centre of a solid ``shape`` of ``mass`` [kg]:
    box ``(a, b, c)`` [m] edges, sphere ``(r,)``, cylinder and capsule ``(r, length)`` along
    z (a capsule's length is its cylinder's; two hemispheres close it)."""
    if shape == 'box':
        a, b, c = size
        return mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    if shape == 'sphere':
        (r,) = size
        return 0.4 * mass * r * r * np.eye(3)
    r, h = size
    if shape == 'cylinder':
        side = mass * (3 * r * r + h * h) / 12.0
        return np.diag([side, side, 0.5 * mass * r * r])
    # capsule: the cylinder and the two hemispheres share the mass by volume
    vc, vs = math.pi * r * r * h, 4.0 / 3.0 * math.pi * r ** 3
    mc, ms = mass * vc / (vc + vs), mass * vs / (vc + vs)
    side = (mc * (h * h / 12.0 + r * r / 4.0)
            + ms * (0.4 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0))
    return np.diag([side, side, 0.5 * mc * r * r + 0.4 * ms * r * r])


def shape_volume(shape, size):
    """Volume [m^3] of a solid shape (see :func:`solid_inertia`)."""
    if shape == 'box':
        return float(np.prod(size))
    if shape == 'sphere':
        return 4.0 / 3.0 * math.pi * size[0] ** 3
    r, h = size
    return math.pi * r * r * h + (4.0 / 3.0 * math.pi * r ** 3 if shape == 'capsule' else 0.0)


# ---------------------------------------------------------------------- reading a file
def load_world(source):
    """A :class:`World` from a world file path or YAML text (one with a newline)."""
    if '\n' in source or not os.path.exists(source):
        if '\n' not in source:
            raise WorldError('world file %r: no such file' % source)
        where, base_dir, text = 'world file', os.getcwd(), source
    else:
        where, base_dir = 'world file %r' % source, os.path.dirname(os.path.abspath(source))
        with open(source, encoding='utf-8') as f:
            text = f.read()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise WorldError('%s: not YAML: %s' % (where, str(exc).splitlines()[0])) from None
    data = {} if data is None else data
    _keys(data, ('gravity', 'ground', 'robots', 'objects', 'contacts', 'self_collision'),
          where, '')
    gravity = _numbers(data.get('gravity', (0.0, 0.0, -9.81)), 3, where, 'gravity')
    ground = data.get('ground', None)
    if ground is not None and ground is not False:
        _keys(ground, ('height', 'friction', 'restitution'), where, 'ground')
        friction = ground.get('friction', None)
        if friction is not None:
            friction = float(_numbers([friction], 1, where, 'ground.friction')[0])
            if friction < 0:
                raise WorldError('%s: ground.friction must be >= 0, got %g' % (where, friction))
        restitution = float(_numbers([ground.get('restitution', 0.0)], 1, where,
                                     'ground.restitution')[0])
        if not 0.0 <= restitution <= 1.0:
            raise WorldError('%s: ground.restitution must be in [0, 1], got %g'
                             % (where, restitution))
        if restitution and friction is None:
            raise WorldError('%s: ground.restitution needs ground.friction (a ground without '
                             'it is not a contact surface)' % where)
        ground = float(_numbers([ground.get('height', 0.0)], 1, where, 'ground.height')[0])
    else:
        ground, friction, restitution = None, None, 0.0
    self_collision = data.get('self_collision', False)
    if not isinstance(self_collision, bool):
        raise WorldError('%s: self_collision must be true or false, got %r'
                         % (where, self_collision))
    world = World(gravity=gravity, ground=ground, ground_friction=friction,
                  ground_restitution=restitution, where=where, self_collision=self_collision)
    names = set()
    for k, entry in enumerate(_list(data.get('robots', []), where, 'robots')):
        robot = _robot(entry, where, 'robots[%d]' % k, base_dir)
        if robot.name in names:
            raise WorldError('%s: robots[%d]: the name %r is used twice' % (where, k, robot.name))
        names.add(robot.name)
        world.robots.append(robot)
    prefixes = [r.prefix for r in world.robots]
    if len(set(prefixes)) != len(prefixes):
        raise WorldError('%s: two robots share the prefix %r; give each its own'
                         % (where, next(p for p in prefixes if prefixes.count(p) > 1)))
    for k, entry in enumerate(_list(data.get('objects', []), where, 'objects')):
        obj = _object(entry, where, 'objects[%d]' % k, base_dir)
        if obj.name in names or obj.name == 'world':
            raise WorldError('%s: objects[%d]: the name %r is used twice (or is "world")'
                             % (where, k, obj.name))
        names.add(obj.name)
        world.objects.append(obj)
    for k, entry in enumerate(_list(data.get('contacts', []), where, 'contacts')):
        world.contact_pairs.append(_contact_pair(world, entry, where, 'contacts[%d]' % k))
    return world


def _contact_pair(world, entry, where, path):
    """A ``contacts`` entry as a :class:`~ros_vi.urdf.contacts.ContactPair`."""
    from ..urdf.contacts import GROUND, ContactPair
    _keys(entry, ('between', 'friction', 'restitution', 'enabled'), where, path)
    if world.contact_ground() is None:
        raise WorldError('%s: %s: contacts need a contact ground (ground: {friction: ...})'
                         % (where, path))
    between = entry.get('between')
    if not (isinstance(between, list) and len(between) == 2
            and all(isinstance(n, str) for n in between)):
        raise WorldError('%s: %s.between must be two names, got %r' % (where, path, between))
    robots = {r.name: r for r in world.robots}
    objects = {o.name for o in world.objects}
    sides = []
    for name in between:
        if name == GROUND or name in objects:
            sides.append((name,))
        elif name in robots and robots[name].prefix.endswith('/'):
            sides.append((robots[name].prefix,))
        elif any(r.prefix and name.startswith(r.prefix) for r in world.robots):
            sides.append((name,))       # a robot's link (checked when it is imported)
        else:
            raise WorldError('%s: %s.between: %r is no robot (with a prefix ending in /), '
                             'object, robot link or %s' % (where, path, name, GROUND))
    friction = restitution = None
    if 'friction' in entry:
        friction = float(_numbers([entry['friction']], 1, where, path + '.friction')[0])
        if friction < 0:
            raise WorldError('%s: %s.friction must be >= 0, got %g' % (where, path, friction))
    if 'restitution' in entry:
        restitution = float(_numbers([entry['restitution']], 1, where,
                                     path + '.restitution')[0])
        if not 0.0 <= restitution <= 1.0:
            raise WorldError('%s: %s.restitution must be in [0, 1], got %g'
                             % (where, path, restitution))
    enabled = entry.get('enabled', True)
    if not isinstance(enabled, bool):
        raise WorldError('%s: %s.enabled must be true or false, got %r'
                         % (where, path, enabled))
    return ContactPair(sides[0], sides[1], friction, restitution, enabled)


def _keys(entry, allowed, where, path):
    if not isinstance(entry, dict):
        raise WorldError('%s: %s must be a mapping, got %r' % (where, path or 'the file',
                                                                entry))
    unknown = sorted(set(entry) - set(allowed))
    if unknown:
        raise WorldError('%s: %s: unknown key%s %s (allowed: %s)'
                         % (where, path or 'top level', 's' if len(unknown) > 1 else '',
                            ', '.join(map(repr, unknown)), ', '.join(allowed)))


def _list(value, where, path):
    if not isinstance(value, list):
        raise WorldError('%s: %s must be a list, got %r' % (where, path, value))
    return value


def _numbers(value, n, where, path):
    what = 'a finite number' if n == 1 else '%d finite numbers' % n
    try:
        out = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        out = None
    if out is None or out.shape != (n,) or not np.all(np.isfinite(out)):
        raise WorldError('%s: %s must be %s, got %r' % (where, path, what,
                                                         value[0] if n == 1 else value))
    return out


def _pose(entry, where, path):
    if entry is None:
        return np.eye(4)
    _keys(entry, ('xyz', 'rpy'), where, path)
    return origin_matrix(_numbers(entry.get('xyz', (0, 0, 0)), 3, where, path + '.xyz'),
                         _numbers(entry.get('rpy', (0, 0, 0)), 3, where, path + '.rpy'))


def _twist(entry, where, path):
    if entry is None:
        return np.zeros(6)
    _keys(entry, ('linear', 'angular'), where, path)
    return np.concatenate([_numbers(entry.get('linear', (0, 0, 0)), 3, where, path + '.linear'),
                           _numbers(entry.get('angular', (0, 0, 0)), 3, where,
                                    path + '.angular')])


def _name(entry, where, path):
    name = entry.get('name')
    if not isinstance(name, str) or not name:
        raise WorldError('%s: %s needs a name (a non-empty string)' % (where, path))
    return name


def _robot(entry, where, path, base_dir):
    from ..urdf import URDFError, load_urdf_text
    _keys(entry, ('name', 'urdf', 'urdf_text', 'prefix', 'pose', 'floating', 'twist',
                  'initial_positions'), where, path)
    name = _name(entry, where, path)
    # the robot's ROS interfaces live under its name (<name>/joint_trajectory_controller/..)
    if not re.fullmatch(r'[A-Za-z][A-Za-z0-9_]*', name):
        raise WorldError('%s: %s.name %r is not a ROS name token (a letter, then letters, '
                         'digits or _): the robot\'s topics and action are named under it'
                         % (where, path, name))
    if ('urdf' in entry) == ('urdf_text' in entry):
        raise WorldError('%s: %s: give exactly one of urdf (a path) and urdf_text'
                         % (where, path))
    robot_dir = base_dir
    if 'urdf' in entry:
        filename = os.path.join(base_dir, str(entry['urdf']))
        try:
            text = load_urdf_text(filename)
        except URDFError as exc:
            raise WorldError('%s: %s.urdf: %s' % (where, path, exc)) from None
        robot_dir = os.path.dirname(os.path.abspath(filename))
    else:
        text = str(entry['urdf_text'])
    floating = entry.get('floating', False)
    if not isinstance(floating, bool):
        raise WorldError('%s: %s.floating must be true or false, got %r'
                         % (where, path, floating))
    twist = _twist(entry.get('twist'), where, path + '.twist')
    if twist.any() and not floating:
        raise WorldError('%s: %s.twist: only a floating robot has a twist' % (where, path))
    positions = entry.get('initial_positions', {}) or {}
    if not isinstance(positions, dict):
        raise WorldError('%s: %s.initial_positions must be a mapping {joint: value}'
                         % (where, path))
    for joint, value in positions.items():
        _numbers([value], 1, where, '%s.initial_positions.%s' % (path, joint))
    prefix = entry.get('prefix', name + '/')
    if not isinstance(prefix, str):
        raise WorldError('%s: %s.prefix must be a string, got %r' % (where, path, prefix))
    return WorldRobot(name, prefix, text, robot_dir, _pose(entry.get('pose'), where,
                                                           path + '.pose'),
                      floating, twist, dict(positions))


def _object(entry, where, path, base_dir):
    _keys(entry, ('name', 'shape', 'urdf', 'mass', 'density', 'inertia', 'pose', 'twist',
                  'rgba', 'friction'), where, path)
    name = _name(entry, where, path)
    pose = _pose(entry.get('pose'), where, path + '.pose')
    twist = _twist(entry.get('twist'), where, path + '.twist')
    rgba = tuple(_numbers(entry.get('rgba', (0.6, 0.6, 0.65, 1.0)), 4, where, path + '.rgba'))
    if ('shape' in entry) == ('urdf' in entry):
        raise WorldError('%s: %s: give exactly one of shape and urdf' % (where, path))
    friction = None
    if 'friction' in entry:
        friction = float(_numbers([entry['friction']], 1, where, path + '.friction')[0])
        if friction < 0:
            raise WorldError('%s: %s.friction must be >= 0, got %g' % (where, path, friction))
    if 'urdf' in entry:
        return _urdf_object(entry, name, pose, twist, rgba, friction, where, path, base_dir)
    shape = entry['shape']
    if not isinstance(shape, dict) or len(shape) != 1 or next(iter(shape)) not in SHAPES:
        raise WorldError('%s: %s.shape must be one of {box: [a, b, c]}, {sphere: r}, '
                         '{cylinder: [r, length]}, {capsule: [r, length]}, got %r'
                         % (where, path, shape))
    kind, size = next(iter(shape.items()))
    n = {'box': 3, 'sphere': 1, 'cylinder': 2, 'capsule': 2}[kind]
    size = tuple(_numbers(size if isinstance(size, list) else [size], n, where,
                          '%s.shape.%s' % (path, kind)))
    if min(size) <= 0.0:
        raise WorldError('%s: %s.shape.%s: sizes must be positive, got %s'
                         % (where, path, kind, list(size)))
    if ('mass' in entry) == ('density' in entry):
        raise WorldError('%s: %s: give exactly one of mass [kg] and density [kg/m^3]'
                         % (where, path))
    if 'mass' in entry:
        mass = float(_numbers([entry['mass']], 1, where, path + '.mass')[0])
    else:
        mass = float(_numbers([entry['density']], 1, where, path + '.density')[0]) \
            * shape_volume(kind, size)
    if not mass > 0.0:
        raise WorldError('%s: %s: the mass must be positive, got %g' % (where, path, mass))
    if 'inertia' in entry:
        ixx, iyy, izz, ixy, ixz, iyz = _numbers(entry['inertia'], 6, where, path + '.inertia')
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    else:
        inertia = solid_inertia(kind, size, mass)
    return WorldObject(name, kind, size, mass, inertia, pose, twist, rgba, friction=friction)


def _urdf_object(entry, name, pose, twist, rgba, friction, where, path, base_dir):
    from ..urdf import URDFError, load_urdf_text
    for key in ('mass', 'density', 'inertia'):
        if key in entry:
            raise WorldError('%s: %s.%s: a URDF object takes its mass and inertia from its '
                             'link' % (where, path, key))
    filename = os.path.join(base_dir, str(entry['urdf']))
    try:
        root = etree.fromstring(load_urdf_text(filename).encode())
    except (URDFError, etree.XMLSyntaxError) as exc:
        raise WorldError('%s: %s.urdf: %s' % (where, path, exc)) from None
    links = root.findall('link')
    if len(links) != 1 or root.findall('joint'):
        raise WorldError('%s: %s.urdf: an object is one link without joints (%r has %d '
                         'links, %d joints)' % (where, path, entry['urdf'], len(links),
                                                 len(root.findall('joint'))))
    link = copy.deepcopy(links[0])
    link.set('name', name)
    _absolute_meshes(link, os.path.dirname(os.path.abspath(filename)))
    return WorldObject(name, None, (), 0.0, np.zeros((3, 3)), pose, twist, rgba,
                       link_xml=etree.tostring(link).decode(), friction=friction)


# ---------------------------------------------------------------------- one description
def _origin(parent, g):
    rpy = _rpy(g[:3, :3])
    etree.SubElement(parent, 'origin', xyz=' '.join('%.17g' % x for x in g[:3, 3]),
                     rpy=' '.join('%.17g' % x for x in rpy))


def _rpy(R):
    """URDF roll, pitch, yaw of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    if abs(math.cos(pitch)) < 1e-12:       # gimbal: any split of roll and yaw is the pose
        return np.array([0.0, pitch, math.atan2(-R[0, 1], R[1, 1])])
    return np.array([math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])])


def _absolute_meshes(element, base_dir):
    for mesh in element.iter('mesh'):
        name = mesh.get('filename', '')
        if name and '://' not in name and not os.path.isabs(name):
            mesh.set('filename', os.path.normpath(os.path.join(base_dir, name)))


_RENAMED = (('link', 'name', 'link'), ('joint', 'name', 'joint'),
            ('joint/parent', 'link', 'link'), ('joint/child', 'link', 'link'),
            ('joint/mimic', 'joint', 'joint'), ('material', 'name', 'material'),
            ('link/visual/material', 'name', 'material'), ('ros2_control', 'name', None),
            ('ros2_control/joint', 'name', 'joint'), ('transmission', 'name', None),
            ('transmission/joint', 'name', 'joint'), ('gazebo', 'reference', 'link'))


def _add_robot(root, robot, where):
    try:
        src = etree.fromstring(robot.text.encode())
    except etree.XMLSyntaxError as exc:
        raise WorldError('%s: robot %r: not XML: %s' % (where, robot.name, exc)) from None
    children = {j.find('child').get('link') for j in src.findall('joint')
                if j.find('child') is not None}
    roots = [l.get('name') for l in src.findall('link') if l.get('name') not in children]
    if len(roots) != 1:
        raise WorldError('%s: robot %r: its description has %d root links (%s); one is '
                         'needed' % (where, robot.name, len(roots), ', '.join(roots)))
    p = robot.prefix
    for tag, attr, _ in _RENAMED:
        for el in src.findall(tag):
            if el.get(attr) is not None:
                el.set(attr, p + el.get(attr))
    _absolute_meshes(src, robot.base_dir)
    for el in src:
        # a link's Gazebo surface (its friction: ros_vi.urdf.surface_friction) goes along
        if el.tag in ('link', 'joint', 'material', 'ros2_control', 'transmission') or \
                (el.tag == 'gazebo' and el.get('reference') is not None):
            root.append(el)
    joint = etree.SubElement(root, 'joint', name=p + 'world_joint',
                             type='floating' if robot.floating else 'fixed')
    _origin(joint, robot.pose)
    etree.SubElement(joint, 'parent', link='world')
    etree.SubElement(joint, 'child', link=p + roots[0])


def _add_object(root, obj):
    if obj.link_xml is not None:
        root.append(etree.fromstring(obj.link_xml))
    else:
        link = etree.SubElement(root, 'link', name=obj.name)
        inertial = etree.SubElement(link, 'inertial')
        etree.SubElement(inertial, 'mass', value='%.17g' % obj.mass)
        I = obj.inertia
        etree.SubElement(inertial, 'inertia', ixx='%.17g' % I[0, 0], iyy='%.17g' % I[1, 1],
                         izz='%.17g' % I[2, 2], ixy='%.17g' % I[0, 1], ixz='%.17g' % I[0, 2],
                         iyz='%.17g' % I[1, 2])
        for kind in ('visual', 'collision'):
            el = etree.SubElement(link, kind)
            geometry = etree.SubElement(el, 'geometry')
            if obj.shape == 'box':
                etree.SubElement(geometry, 'box', size=' '.join('%.17g' % x for x in obj.size))
            elif obj.shape == 'sphere':
                etree.SubElement(geometry, 'sphere', radius='%.17g' % obj.size[0])
            else:
                etree.SubElement(geometry, obj.shape, radius='%.17g' % obj.size[0],
                                 length='%.17g' % obj.size[1])
            if kind == 'visual':
                material = etree.SubElement(el, 'material', name=obj.name + '_colour')
                etree.SubElement(material, 'color', rgba=' '.join('%g' % x for x in obj.rgba))
    if obj.friction is not None:
        surface = etree.SubElement(root, 'gazebo', reference=obj.name)
        for tag in ('mu1', 'mu2'):
            etree.SubElement(surface, tag).text = '%.17g' % obj.friction
    joint = etree.SubElement(root, 'joint', name=obj.name, type='floating')
    _origin(joint, obj.pose)
    etree.SubElement(joint, 'parent', link='world')
    etree.SubElement(joint, 'child', link=obj.name)
