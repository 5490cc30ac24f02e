"""A robot description made ready to simulate, without ROS: the one set-up that the simulator
node, ``ros-vi simulate`` and :meth:`Simulation.from_urdf` share.

From a URDF (text, a ``.urdf``/``.xacro`` file or a ``package://``/``file://`` URI) to a
:class:`RobotSetup`: the imported :class:`~ros_vi.mechanics.system.System`, the importer's
tolerated quirks, the command interfaces each joint offers and their bounds (the URDF's
``<ros2_control>`` block, or the default, then overrides: :func:`joint_interfaces`), the
initial state (options first, then the block's ``initial_value``), the drive gains and the
joints of the trajectory follower.  ``Simulation.from_setup(setup, dt)`` builds the
:class:`~ros_vi.simulation.Simulation`.  So a robot with a ``<ros2_control>`` block gets
the same interfaces, bounds and initial state in the node, in the CLI and in a script.

Errors are :class:`~ros_vi.simulation.commands.OptionError` naming the option (the node
parameter of the same name) or :class:`~ros_vi.urdf.URDFError` naming the description.

Example
-------
>>> setup = setup_robot(open('urdf/arm7.urdf').read(), prefix='left_')
>>> setup.interfaces['left_joint_1'].interfaces        # ('effort', 'position', 'velocity')
>>> sim = Simulation.from_setup(setup, 1 / 500, command_timeout=0.5)
"""
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import resources
from .bodies import pose_matrix
from .commands import COMMAND_INTERFACES, OptionError, joint_interfaces

__all__ = ['RobotSetup', 'load_description', 'setup_robot']


@dataclass
class RobotSetup:
    """A robot ready to simulate (see the module doc).

    ``text``: the URDF XML (a xacro file's processed text); ``system``: the imported System
    (``system.urdf`` its :class:`~ros_vi.urdf.URDFRobot`); ``warnings``: the quirks the
    importer tolerated (tuple of :class:`~ros_vi.urdf.Quirk`); ``interfaces``: {joint:
    :class:`~ros_vi.simulation.commands.JointInterfaces`} in config order;
    ``initial_positions``, ``initial_velocities``: {joint: value} [rad or m, rad/s or m/s]
    (empty: the System's q, zero velocity); ``drive_gains``: {joint: (kp, kd)} replacing
    the default gains; ``trajectory_joints``: the joints of the joint trajectory controller
    (every joint with a position interface unless named), ``continuous_joints``: those of
    them that are URDF ``continuous`` joints (their errors wrap); ``initial_body_poses``,
    ``initial_body_twists``: {free body: pose (4, 4), twist (6,)} (a floating base's from
    ``initial_base_pose`` / ``initial_base_twist``; empty: the System's, zero);
    ``world``: the :class:`~ros_vi.simulation.world.World` the description was built from
    (None for one robot).
    """
    text: str
    system: object
    warnings: tuple = ()
    interfaces: dict = field(default_factory=dict)
    initial_positions: dict = field(default_factory=dict)
    initial_velocities: dict = field(default_factory=dict)
    drive_gains: dict = field(default_factory=dict)
    trajectory_joints: list = field(default_factory=list)
    continuous_joints: list = field(default_factory=list)
    initial_body_poses: dict = field(default_factory=dict)
    initial_body_twists: dict = field(default_factory=dict)
    world: object = None

    @property
    def command_interfaces(self):
        """{joint: tuple of interfaces} (the ``command_interfaces`` of a Simulation)."""
        return {j: e.interfaces for j, e in self.interfaces.items()}

    @property
    def command_bounds(self):
        """{joint: {interface: (min, max)}} declared for the interfaces offered."""
        return {j: dict(e.bounds) for j, e in self.interfaces.items() if e.bounds}

    def simulation_options(self, **options):
        """The :class:`~ros_vi.simulation.Simulation` keywords this set-up decides, updated
        with ``options`` (they win).  A joint that ``options['command_interfaces']`` gives
        other interfaces than the set-up's drops the set-up's bounds (as an override does
        in :func:`setup_robot`)."""
        kwargs = {'command_interfaces': self.command_interfaces,
                  'command_bounds': self.command_bounds,
                  'initial_positions': dict(self.initial_positions) or None,
                  'initial_velocities': dict(self.initial_velocities) or None,
                  'drive_gains': dict(self.drive_gains) or None,
                  'initial_body_poses': dict(self.initial_body_poses) or None,
                  'initial_body_twists': dict(self.initial_body_twists) or None}
        given = options.get('command_interfaces')
        if given is not None and 'command_bounds' not in options:
            kwargs['command_bounds'] = {
                j: b for j, b in self.command_bounds.items()
                if tuple(self.interfaces[j].interfaces) == _names(given.get(j, ()))}
        kwargs.update(options)
        return kwargs


def load_description(robot_description='', urdf_file='', xacro_allowed_paths=()):
    """``(text, base_dir, where)``: the URDF text of ``robot_description`` (URDF XML) or of
    ``urdf_file`` (a ``.urdf`` or ``.xacro`` file, ``package://`` and ``file://`` URIs
    accepted; xacro in its sandbox, which may also read ``xacro_allowed_paths``), the folder
    relative mesh paths are taken against (None for text), and a phrase naming the source
    for error messages.  :class:`OptionError` naming ``robot_description``, ``urdf_file`` or
    ``xacro_allowed_paths``."""
    from ..urdf import URDFError, load_urdf_text
    if robot_description.strip():
        if urdf_file.strip():
            raise OptionError('robot_description', 'give robot_description or urdf_file, not '
                              'both')
        return robot_description, None, 'robot_description'
    if not urdf_file.strip():
        raise OptionError('urdf_file', 'give robot_description (URDF text) or urdf_file (the '
                          'path of a .urdf/.xacro file)')
    path = _resolved(urdf_file.strip(), 'urdf_file')
    allowed = [_resolved(p, 'xacro_allowed_paths') for p in xacro_allowed_paths]
    try:
        text = load_urdf_text(path, allowed_paths=allowed)
    except URDFError as err:
        raise OptionError('urdf_file', str(err)) from None
    return text, os.path.dirname(os.path.abspath(path)), 'urdf_file (%s)' % urdf_file


def _resolved(uri, option):
    try:
        return resources.resolve_uri(uri)
    except resources.ResourceError as err:
        raise OptionError(option, str(err)) from None


def setup_robot(text, prefix='', gravity=(0.0, 0.0, -9.81), strict=False, base_dir=None,
                where=None, initial_joints=(), initial_positions=(),
                initial_velocities=(), command_interfaces=None, drive_gains=None,
                trajectory_joints=(), import_options=None, floating_base=False,
                initial_base_pose=None, initial_base_twist=None, ground=None,
                self_collision=False):
    """Import ``text`` (URDF XML) and decide how it is simulated: a :class:`RobotSetup`.

    ``prefix``, ``gravity`` (3,) [m/s^2], ``strict``, ``base_dir`` and ``import_options``
    go to :func:`ros_vi.urdf.import_urdf` (quirks are collected in the result, not warned);
    ``where`` names the description in import errors (None: the importer's message as
    it is).  ``floating_base`` (bool): a free joint ``root_joint`` between the world and
    the root link (:func:`ros_vi.urdf.import_urdf`), whose body starts at
    ``initial_base_pose`` (``x, y, z, roll, pitch, yaw`` [m, rad] in the world, which is the
    ``odom`` frame of the node) with ``initial_base_twist`` (``vx, vy, vz, wx, wy, wz`` [m/s,
    rad/s] in the base's own axes); both need ``floating_base``.  Joint names below are
    config names (``prefix + URDF name``); a free joint's configs are not joints (they are
    its body's pose): they are in no default list, and only ``initial_joints`` may name
    them (its chart coordinates: the origin [m] in the parent frame and angles [rad] from
    the initial attitude, and their rates; what a world file's twists set):

    * ``initial_joints`` (names, default every joint) with ``initial_positions`` /
      ``initial_velocities`` (one value per name, or empty); where empty, the
      ``<ros2_control>`` block's ``initial_value`` of the joints it lists;
    * ``command_interfaces`` {joint: iterable of interface names} over the block or the
      default (:func:`joint_interfaces`);
    * ``drive_gains`` {joint: (kp, kd)};
    * ``trajectory_joints`` (default every joint with a position interface);
    * ``ground`` ``(height [m], friction[, restitution[, pairs]])``: a ground plane z =
      height whose contacts with the collision shapes the step holds
      (:func:`ros_vi.urdf.ground_contacts`); contact is then on between the robots and
      objects too (a world file's; :func:`ros_vi.urdf.body_contacts`, with the ground's
      friction for surfaces without their own and its restitution); ``pairs`` a list of
      :class:`ros_vi.urdf.contacts.ContactPair` rules (a world file's ``contacts``) that
      set friction and restitution per pair of links, or switch a pair's contacts off;
    * ``self_collision`` (with ``ground``; off by default): the links of one robot touch
      one another too,
      but for the pairs of :func:`ros_vi.urdf.body_contacts` leaves out (one body,
      adjacent, ``<disable_collisions>``, in collision at the initial configuration).

    Raises :class:`~ros_vi.urdf.URDFError` (prefixed with ``where``) for a description the
    importer refuses, :class:`OptionError` naming the option for the rest.
    """
    from ..urdf import URDFError, URDFWarning, import_urdf
    options = {'prefix': prefix or None, 'gravity': gravity, 'strict': strict,
               'base_dir': base_dir}
    if floating_base:
        options['floating_base'] = True
    options.update(import_options or {})        # they win
    base_state = {'initial_base_pose': initial_base_pose,
                  'initial_base_twist': initial_base_twist}
    for option, value in base_state.items():
        if value is not None and not floating_base:
            raise OptionError(option, 'needs floating_base (the robot\'s base is fixed)')
    try:
        with warnings.catch_warnings():     # the quirks are reported from robot.warnings
            warnings.simplefilter('ignore', URDFWarning)
            system = import_urdf(text, **options)
    except URDFError as err:
        if where is None:
            raise
        raise URDFError('%s: %s' % (where, err)) from None
    robot = system.urdf
    free = {c.name for j in system.free_joints for c in j.configs}
    names = [c.name for c in system.configs if c.name not in free]
    joints = list(initial_joints) or names
    unknown = [j for j in initial_joints if j not in names and j not in free]
    if unknown:
        raise OptionError('initial_joints', 'unknown joint%s %s (joints: %s)' % (
            's' if len(unknown) > 1 else '', ', '.join(unknown), ', '.join(names)))
    given = {'initial_positions': list(initial_positions),
             'initial_velocities': list(initial_velocities)}
    initial = {}
    for option, values in given.items():
        if values and len(values) != len(joints):
            raise OptionError(option, '%d values for %d joints (%s)' % (
                len(values), len(joints), 'initial_joints' if initial_joints else
                'all joints: ' + ', '.join(names)))
        initial[option] = dict(zip(joints, values))
    # where the options say nothing, the block's initial values
    for joint, control in robot.joint_controls.items():
        for option, value in (('initial_positions', control.initial_position),
                              ('initial_velocities', control.initial_velocity)):
            if value is not None and not given[option]:
                initial[option][robot.prefix + joint] = value

    contact_warnings = ()
    if ground is not None:
        contact_warnings = _contacts(system, ground, self_collision,
                                     initial['initial_positions'], where)
    overrides = dict(command_interfaces or {})
    gains = dict(drive_gains or {})
    for option, named in (('command_interfaces', overrides), ('drive_gains', gains),
                          ('trajectory_joints', trajectory_joints)):
        unknown = [j for j in named if j not in names]
        if unknown and unknown[0] in free:
            raise OptionError(option, '%r is a coordinate of a free joint, not a joint'
                              % unknown[0])
        if unknown:
            raise OptionError(option, 'unknown joint %r (joints: %s)'
                              % (unknown[0], ', '.join(names)))
    table = joint_interfaces(system, overrides=overrides)
    follow = list(trajectory_joints) or [j for j in names
                                          if 'position' in _offered(table, j)]
    lacking = [j for j in follow if 'position' not in _offered(table, j)]
    if lacking:
        raise OptionError('trajectory_joints', 'joint %r has no position command interface (it '
                          'has: %s)' % (lacking[0], ', '.join(_offered(table, lacking[0]))
                                        or 'none'))
    continuous = [j for j in follow
                  if robot.joint(j[len(robot.prefix):]).type == 'continuous']
    poses, twists = {}, {}
    if floating_base:
        base = robot.link_frame(robot.root_link).name
        if initial_base_pose is not None:
            poses[base] = pose_matrix(initial_base_pose, 'initial_base_pose')
        if initial_base_twist is not None:
            twist = np.array(initial_base_twist, dtype=float).reshape(-1)
            if twist.shape != (6,) or not np.all(np.isfinite(twist)):
                raise OptionError('initial_base_twist', 'six finite numbers vx, vy, vz, wx, '
                                  'wy, wz [m/s, rad/s] in the base\'s axes, got %s'
                                  % twist.tolist())
            twists[base] = twist
    return RobotSetup(text, system, tuple(robot.warnings) + contact_warnings, table,
                      initial['initial_positions'], initial['initial_velocities'], gains,
                      follow, continuous, poses, twists)


def _contacts(system, ground, self_collision, positions, where):
    """Add the contacts of :func:`setup_robot`'s ``ground`` (and ``self_collision``) to
    ``system``, its own robots' pairs in collision at the initial configuration (joints
    at ``positions`` {config name: value}, the rest at their URDF zero clamped into their
    limits) left out; returns the warnings they gave."""
    from ..urdf import URDFWarning, body_contacts, ground_contacts
    from ..urdf.contacts import check_pairs
    if len(ground) > 3:
        try:
            check_pairs(system, ground[3])
        except ValueError as err:
            raise OptionError('ground', '%s%s' % ('' if where is None else where + ': ',
                                                  err)) from None
    q = system.q.copy()
    names = {c.name: c.index for c in system.configs}
    for name, (lo, up) in system.joint_limits.items():
        if name in names:
            q[names[name]] = min(max(q[names[name]], lo), up)
    for name, value in positions.items():
        try:
            q[names[name]] = float(value)
        except (KeyError, TypeError, ValueError):
            pass                # (Simulation names a bad one)
    with warnings.catch_warnings(record=True) as caught:   # reported with the quirks
        warnings.simplefilter('always', URDFWarning)
        ground_contacts(system, *ground)
        body_contacts(system, *ground[1:], self_collision=self_collision, q=q)
    return tuple(str(w.message) for w in caught)


def _offered(table, joint):
    """The interfaces ``joint`` offers in ``table`` (none when it has no entry)."""
    entry = table.get(joint)
    return entry.interfaces if entry is not None else ()


def _names(interfaces):
    """Interface names as a tuple in :data:`COMMAND_INTERFACES` order (a str is one name)."""
    interfaces = (interfaces,) if isinstance(interfaces, str) else tuple(interfaces)
    return tuple(n for n in COMMAND_INTERFACES if n in interfaces)
