"""The node parameters of ros_vi, declared, read and validated in one place.

Each node's parameters are a dataclass: one field per ROS parameter with its default, its
description and its check (``param(...)``).  :func:`declare` declares them on a node (with
dynamic typing, so ``rate: 100`` works as well as ``rate: 100.0``), :func:`read` reads and
checks them into an instance (raising :class:`ParameterError` naming the parameter), and
:func:`update` applies run-time changes to the fields marked ``dynamic`` (rejecting the
others).  docs/simulator.md and docs/controllers.md have the tables.

Example
-------
>>> declare(node, SimulatorParameters)
>>> cfg = read(node, SimulatorParameters)        # cfg.rate, cfg.substeps, ...
>>> table(SimulatorParameters)['rate']            # (500.0, 'tick rate of ...')
"""
import dataclasses
import math
from dataclasses import dataclass, field

from rcl_interfaces.msg import ParameterDescriptor

from ..urdf.inertia import INERTIA_POLICIES

__all__ = ['ParameterError', 'SimulatorParameters', 'ControllerParameters',
           'LQRControllerParameters', 'SwingUpControllerParameters', 'declare', 'read',
           'update', 'table', 'ros_name', 'robot_setup']


class ParameterError(ValueError):
    """A node parameter has an invalid value (the message names the parameter)."""


# ---------------------------------------------------------------------- checks
def number(low=None, low_open=False, integer=False):
    """Check: a finite number (an integer if ``integer``), ``>= low`` (``> low``)."""
    def check(name, value):
        ok_type = isinstance(value, int) and not isinstance(value, bool) if integer else \
            isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok_type or not math.isfinite(value):
            raise ParameterError('parameter %s: expected %s, got %r' % (
                name, 'an integer' if integer else 'a finite number', value))
        if low is not None and (value < low or (low_open and value == low)):
            raise ParameterError('parameter %s: must be %s %g, got %r' % (
                name, '>' if low_open else '>=', low, value))
        return int(value) if integer else float(value)
    return check


def boolean(name, value):
    """Check: true or false."""
    if not isinstance(value, bool):
        raise ParameterError('parameter %s: expected true or false, got %r' % (name, value))
    return value


def string(choices=None):
    """Check: a string (one of ``choices`` if given)."""
    def check(name, value):
        if not isinstance(value, str):
            raise ParameterError('parameter %s: expected a string, got %r' % (name, value))
        if choices is not None and value not in choices:
            raise ParameterError('parameter %s: expected one of %s, got %r'
                                 % (name, ', '.join(choices), value))
        return value
    return check


def numbers(length=None):
    """Check: a list of finite numbers (of ``length`` if given) -> list of float."""
    def check(name, value):
        value = [] if value is None else list(value)
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
            raise ParameterError('parameter %s: expected a list of numbers, got %r'
                                 % (name, value))
        bad = [v for v in value if not math.isfinite(v)]
        if bad:
            raise ParameterError('parameter %s: values must be finite, got %r'
                                 % (name, value))
        if length is not None and len(value) != length:
            raise ParameterError('parameter %s: expected %d numbers, got %d'
                                 % (name, length, len(value)))
        return [float(v) for v in value]
    return check


def strings(name, value):
    """Check: a list of non-empty strings."""
    value = [] if value is None else list(value)
    if any(not isinstance(v, str) or not v for v in value):
        raise ParameterError('parameter %s: expected a list of non-empty strings, got %r'
                             % (name, value))
    return value


def unique_names(name, values):
    """Raise ParameterError naming the first name that ``values`` repeats."""
    seen = set()
    for value in values:
        if value in seen:
            raise ParameterError('parameter %s: joint %r is named twice' % (name, value))
        seen.add(value)


def joint_entries(name, entries, convert, count):
    """{joint: [values]} of 'joint:value,value' entries (``count`` values each, or any
    number > 0 if None), each value through ``convert``; ParameterError naming the entry."""
    out = {}
    for entry in entries:
        joint, sep, rest = entry.partition(':')
        joint = joint.strip()
        values = [v for v in rest.split(',') if v.strip()] if sep else []
        if not joint or not values or (count is not None and len(values) != count):
            raise ParameterError("parameter %s: expected 'joint:%s', got %r" % (
                name, ','.join(['value'] * (count or 1)) + ('' if count else ',...'), entry))
        if joint in out:
            raise ParameterError('parameter %s: joint %r is named twice' % (name, joint))
        try:
            out[joint] = [convert(v) for v in values]
        except ValueError:
            raise ParameterError('parameter %s: %r: values must be numbers' % (name, entry)) \
                from None
        if count is not None and not all(math.isfinite(v) and v >= 0 for v in out[joint]):
            raise ParameterError('parameter %s: %r: values must be finite and >= 0'
                                 % (name, entry))
    return out


def param(default, description, check, name=None, dynamic=False):
    """A parameter field: ROS ``name`` (default: the field name), default value,
    description, ``check(name, value) -> value`` (raises ParameterError), and whether it
    may change at run time (``dynamic``)."""
    factory = (lambda: list(default)) if isinstance(default, list) else None
    meta = {'description': description, 'check': check, 'name': name, 'dynamic': dynamic}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


# ---------------------------------------------------------------------- the parameter sets
@dataclass
class RobotParameters:
    """Where a node gets its robot from (both nodes)."""
    robot_description: str = param('', 'URDF (or processed xacro) XML text of the robot',
                                   string())
    urdf_file: str = param('', 'path of a .urdf or .xacro file (package:// and file:// URIs '
                               'accepted); used when robot_description is empty', string())
    world_file: str = param('', 'path of a world file (docs/world-files.md: robots under '
                                 'prefixes and loose objects; its gravity and initial state); '
                                 'instead of robot_description and urdf_file', string())
    xacro_allowed_paths: list = param([], 'directories a .xacro urdf_file may read besides its '
                                          'own directory tree and the ROS packages', strings)
    strict_urdf: bool = param(False, 'refuse a robot description with any quirk the importer '
                                     'would otherwise tolerate with a warning '
                                     '(docs/urdf-import.md)', boolean)
    urdf_inertia: str = param('check', "inertia policy of the import (docs/urdf-import.md, "
                                       "Inertia): 'check' imports a triangle-inequality "
                                       "violation as written and refuses a tensor that is not "
                                       "positive semi-definite, 'balance' evens a violation's "
                                       "principal moments out as MuJoCo's balanceinertia "
                                       "does, 'repair' moves any invalid inertia to the "
                                       "nearest valid one (both warned)",
                              string(INERTIA_POLICIES))
    enforce_limits: bool = param(True, 'hold each joint within its URDF <limit lower upper> '
                                       'as a unilateral constraint of the step (inelastic '
                                       'stop); false: the limits are not enforced',
                                 boolean)

    def validate(self):
        given = [n for n in ('robot_description', 'urdf_file', 'world_file')
                 if getattr(self, n).strip()]
        if len(given) > 1:
            raise ParameterError('parameters %s: give one, not both' % ' and '.join(given))
        if not given:
            raise ParameterError('parameters robot_description and urdf_file: one is '
                                 'required (URDF text, or the path of a .urdf/.xacro file; or '
                                 'world_file)')


@dataclass
class SimulatorParameters(RobotParameters):
    """The ``simulator`` node (docs/simulator.md).  After :func:`read`, ``pairs`` is
    ``distance_pairs`` as (A, B) tuples."""
    prefix: str = param('', 'prepended to joint and link names (configs, tf frames, '
                            'joint_states)', string())
    gravity: list = param([0.0, 0.0, -9.81], 'gravity vector [m/s^2] in the root link frame',
                          numbers(3))
    initial_joints: list = param([], 'joints named by initial_positions/initial_velocities '
                                     '(empty: all moving joints in joint_states order)',
                                 strings)
    initial_positions: list = param([], 'initial joint positions [rad or m] (empty: URDF '
                                        'zero)', numbers())
    initial_velocities: list = param([], 'initial joint velocities [rad/s or m/s] (empty: '
                                         'zero)', numbers())
    floating_base: bool = param(False, 'a free joint (6 degrees of freedom) between '
                                       'odom_frame and the root link: a floating base, '
                                       'published on tf and odom', boolean)
    initial_base_pose: list = param([], 'x, y, z, roll, pitch, yaw [m, rad] of the floating '
                                        'base in odom_frame at the start (empty: the origin)',
                                    numbers())
    initial_base_twist: list = param([], 'vx, vy, vz, wx, wy, wz [m/s, rad/s] of the floating '
                                         'base in its own axes at the start (empty: at rest)',
                                     numbers())
    odom_frame: str = param('odom', 'tf frame of the floating base\'s pose (parent of the '
                                    'root link on tf; odom\'s header.frame_id)', string())
    publish_odometry: bool = param(True, 'publish odom (nav_msgs/Odometry) of a floating base '
                                         'with every state', boolean)
    ground: list = param([], 'height [m], Coulomb friction coefficient and (optional) '
                             'coefficient of restitution of a ground plane z = height that '
                             'the robot\'s collision shapes rest on '
                             '(docs/contact.md); empty: none (a world_file gives its own)',
                         numbers())
    self_collision: bool = param(False, 'with contacts (ground, a world_file\'s ground): the '
                                       'robot\'s own links touch one another, but for '
                                       'adjacent ones, <disable_collisions> pairs and pairs '
                                       'in collision at the start (docs/contact.md)', boolean)
    publish_contacts: bool = param(True, 'with contacts: publish each contact-carrying '
                                         'link\'s wrench from them on ~/contact_wrench/<link> '
                                         '(geometry_msgs/WrenchStamped, in the link\'s axes) '
                                         'and ~/contact_markers (visualization_msgs/'
                                         'MarkerArray) with every state', boolean)
    contact_marker_scale: float = param(0.005, 'length of a contact force\'s arrow on '
                                               '~/contact_markers [m/N]', number(0.0))
    rate: float = param(500.0, 'tick rate of the simulation loop [Hz of simulation time]',
                        number(0.0, low_open=True))
    substeps: int = param(1, 'VI steps per tick', number(1, integer=True))
    real_time_factor: float = param(1.0, 'simulation seconds per wall second (0: as fast as '
                                         'possible)', number(0.0))
    publish_rate: float = param(100.0, 'joint_states and tf rate [Hz of simulation time], '
                                       '<= rate', number(0.0, low_open=True))
    publish_clock: bool = param(True, 'publish clock (rosgraph_msgs/Clock) at clock_rate',
                                boolean)
    clock_rate: float = param(100.0, 'clock rate [Hz of simulation time]; at most every '
                                     'tick (a published state is always preceded by its '
                                     'clock)',
                              number(0.0, low_open=True))
    start_paused: bool = param(False, 'start paused (use ~/unpause or ~/step)', boolean)
    command_joints: list = param([], 'joint order of effort_controller/commands (empty: '
                                     'every actuated joint with a non-zero effort limit)',
                                 strings)
    command_interfaces: list = param([], "'joint:interface,interface' entries setting a "
                                         "joint's command interfaces (effort, position, "
                                         "velocity) over the URDF's <ros2_control> block or "
                                         "the default (all three; none for a passive joint)",
                                     strings)
    drive_frequency: float = param(0.0, 'natural frequency [rad/s] of the position and '
                                        'velocity drives\' default gains (kp = m w^2, kd = 2 '
                                        'zeta m w, m the reflected inertia); 0: min(300, '
                                        'rate x substeps), the stiffest drive a VI step '
                                        'resolves', number(0.0))
    drive_damping_ratio: float = param(1.0, 'damping ratio zeta of the drives\' default gains',
                                       number(0.0))
    drive_gains: list = param([], "'joint:kp,kd' entries replacing a joint's default drive "
                                  "gains [N m/rad, N m s/rad or N/m, N s/m]", strings)
    trajectory_joints: list = param([], 'joints of the joint trajectory controller (empty: '
                                        'every joint with a position interface)', strings)
    goal_time_tolerance: float = param(1.0, 'seconds after a trajectory\'s end a goal that '
                                            'gives 0 may take to reach its goal tolerance (0: '
                                            'no limit)', number(0.0))
    command_timeout: float = param(0.5, 'a joint command older than this [s of simulation '
                                        'time] decays to zero torque (0: never)', number(0.0))
    command_decay: float = param(0.05, 'length [s] of the linear ramp to zero after the '
                                       'timeout (0: drop to zero at once)', number(0.0))
    lockstep: bool = param(False, 'each tick waits for a command stamped with the last '
                                  'published state time', boolean)
    lockstep_timeout: float = param(1.0, 'wall seconds to wait for a lockstep command before '
                                         'stepping with the previous command (and saying so)',
                                    number(0.0, low_open=True))
    controller_wait: float = param(10.0, 'lockstep: wall seconds the first state waits for a '
                                         'controller to connect and answer it',
                                   number(0.0, low_open=True))
    max_catch_up: float = param(0.25, 'largest backlog [wall s] caught up after a stall; '
                                     'beyond it the loop runs behind real time (and says so)',
                                number(0.0, low_open=True))
    step_ticks: int = param(1, 'ticks advanced by one call of ~/step (<= max_step_ticks)',
                            number(1, integer=True), dynamic=True)
    max_step_ticks: int = param(100000, 'largest step_ticks accepted',
                                number(1, integer=True))
    max_iterations: int = param(50, 'Newton iterations allowed per VI step',
                                number(1, integer=True))
    max_refinements: int = param(3, 'retries of a failed tick with 2x, 4x, ... substeps',
                                 number(0, integer=True))
    max_subdivisions: int = param(8, 'a VI step whose root solve fails is split into up to '
                                     '2**max_subdivisions substeps (0: never)',
                                  number(0, integer=True))
    tolerance: float = param(1e-10, 'VI root-solver tolerance on |DEL|',
                             number(0.0, low_open=True))
    diagnostics_period: float = param(1.0, 'wall seconds between diagnostics messages',
                                      number(0.0, low_open=True))
    record: str = param('', 'path of a ROS 2 MCAP file (.mcap) to record what the node '
                            'publishes to (joint_states, tf, tf_static, clock, '
                            'robot_description, energy), closed at shutdown (empty: off)',
                        string())
    viewer_port: int = param(0, 'serve a browser view of the robot on this port (0: off; '
                                'docs/viewer.md)', number(0, integer=True))
    distance_pairs: list = param([], "pairs 'A:B' of objects, links (URDF names, without "
                                     "prefix) or obstacles of obstacles_file, whose signed "
                                     "distances are published on ~/distances and "
                                     "~/closest_points at publish_rate (empty: off)", strings)
    obstacles_file: str = param('', 'YAML file of obstacles fixed in the world for '
                                    'distance_pairs (package:// and file:// URIs accepted; '
                                    'docs/collision.md)', string())

    def validate(self):
        RobotParameters.validate(self)
        from ..collision import parse_pair
        pairs = []
        for text in self.distance_pairs:
            try:
                pairs.append(parse_pair(text))
            except ValueError as err:
                raise ParameterError('parameter distance_pairs: %s' % err) from None
        self.pairs = pairs
        self.obstacles_file = self.obstacles_file.strip()
        if self.publish_rate > self.rate:
            raise ParameterError('parameter publish_rate: %g Hz is above rate (%g Hz)'
                                 % (self.publish_rate, self.rate))
        if self.step_ticks > self.max_step_ticks:
            raise ParameterError('parameter step_ticks: %d is above max_step_ticks (%d)'
                                 % (self.step_ticks, self.max_step_ticks))
        for name in ('initial_joints', 'command_joints', 'trajectory_joints'):
            unique_names(name, getattr(self, name))
        for name in ('initial_base_pose', 'initial_base_twist'):
            value = getattr(self, name)
            if len(value) not in (0, 6):
                raise ParameterError('parameter %s: expected 6 numbers (or none), got %d'
                                     % (name, len(value)))
            if value and not self.floating_base:
                raise ParameterError('parameter %s: needs floating_base:=true (the robot\'s '
                                     'base is fixed)' % name)
        if len(self.ground) not in (0, 2, 3) or (self.ground and self.ground[1] < 0) or (
                len(self.ground) == 3 and not 0.0 <= self.ground[2] <= 1.0):
            raise ParameterError('parameter ground: expected height [m], a friction '
                                 'coefficient >= 0 and optionally a coefficient of '
                                 'restitution in [0, 1] (or none), got %s' % list(self.ground))
        if self.ground and self.world_file.strip():
            raise ParameterError('parameter ground: a world_file gives its own ground')
        self.odom_frame = self.odom_frame.strip()
        if self.floating_base and not self.odom_frame:
            raise ParameterError('parameter odom_frame: a frame name is needed with '
                                 'floating_base')
        self.interfaces = joint_entries('command_interfaces', self.command_interfaces,
                                        lambda v: v.strip(), None)
        self.gains = joint_entries('drive_gains', self.drive_gains, float, 2)
        self.record = self.record.strip()
        if self.record and not self.record.lower().endswith('.mcap'):
            raise ParameterError('parameter record: expected the path of a .mcap file, got %r'
                                 % self.record)


COMMAND_TOPICS = ('joint_commands', 'effort_controller/commands')
LAWS = ('pendulum', 'cartpole', 'acrobot')


@dataclass
class ControllerParameters(RobotParameters):
    """What both controller nodes read (docs/controllers.md).  After :func:`read`, ``dt``
    is the design step in force (``1 / rate`` when the parameter is 0)."""
    prefix: str = param('', 'prepended to joint names (as the simulator\'s prefix)', string())
    gravity: list = param([0.0, 0.0, -9.81], 'gravity vector [m/s^2] of the controller\'s '
                                             'model', numbers(3))
    goal_joints: list = param([], 'joints named by goal_positions (empty: all joints in '
                                  'config order)', strings)
    goal_positions: list = param([], 'goal configuration [rad or m] (swingup_controller: '
                                     'empty = the law\'s upright)', numbers())
    Q: list = param([], 'LQR weights on x = [q, p]: 2n diagonal entries or (2n)^2 row-major '
                        '(empty: identity)', numbers())
    R: list = param([], 'LQR weights on u: m diagonal entries or m^2 row-major (empty: '
                        'identity)', numbers())
    horizon: int = param(0, 'LQR horizon in steps (0: infinite horizon, DARE; N: trep\'s '
                            'finite-horizon first gain)', number(0, integer=True))
    rate: float = param(100.0, 'rate [Hz] at which joint_states arrive (the simulator\'s '
                               'publish_rate; its rate in lockstep)',
                        number(0.0, low_open=True))
    dt: float = param(0.0, 'design step [s] of the LQR (0: 1/rate); must equal the '
                           'simulator\'s tick', number(0.0))
    effort_limits: list = param([], 'u_max per controlled joint [N m or N] (empty: URDF '
                                    '<limit effort>)', numbers())
    command_topic: str = param('joint_commands', 'joint_commands (named, stamped JointState) '
                                                 'or effort_controller/commands '
                                                 '(Float64MultiArray)', string(COMMAND_TOPICS))
    handover_c_in: float = param(0.0, 'LQR region {V < c_in}, V the cost-to-go (0: the '
                                      'largest level on which the LQR does not saturate)',
                                 number(0.0))
    handover_c_out: float = param(0.0, 'leave the LQR region when V > c_out (0: 2 c_in)',
                                  number(0.0))
    state_timeout: float = param(1.0, 'wall seconds without joint_states before publishing '
                                      'zero torque', number(0.0, low_open=True))
    max_state_age: float = param(0.0, 'reject states whose stamp is older than the node '
                                      'clock by this much [s] (0: off; meaningful with '
                                      'use_sim_time)', number(0.0))
    diagnostics_period: float = param(1.0, 'seconds of state time between diagnostics '
                                           'messages', number(0.0))

    def validate(self):
        RobotParameters.validate(self)
        self.dt = self.dt or 1.0 / self.rate


@dataclass
class LQRControllerParameters(ControllerParameters):
    """The ``lqr_controller`` node."""
    active_region: str = param('always', 'always, or region: LQR only inside the hand-over '
                                         'region (zero torque outside)',
                               string(('always', 'region')))


def _gain(default, description, name):
    check = boolean if isinstance(default, bool) else \
        string() if isinstance(default, str) else number(0.0)
    return param(default, description, check, name=name)


@dataclass
class SwingUpControllerParameters(ControllerParameters):
    """The ``swingup_controller`` node: the law and its gains (``<law>.<gain>``)."""
    law: str = param('pendulum', 'swing-up law: pendulum, cartpole or acrobot', string(LAWS))
    pendulum_k_energy: float = _gain(1.0, 'energy gain [N m/(J rad/s)]', 'pendulum.k_energy')
    pendulum_compensate: bool = _gain(True, 'cancel the model\'s damping',
                                      'pendulum.compensate')
    pendulum_kick: float = _gain(0.0, 'torque at rest [N m] (0: u_max)', 'pendulum.kick')
    cartpole_cart: str = _gain('cart', 'prismatic cart joint', 'cartpole.cart')
    cartpole_pole: str = _gain('pole', 'pole joint', 'cartpole.pole')
    cartpole_k_energy: float = _gain(30.0, 'energy gain [m/(J rad s)]', 'cartpole.k_energy')
    cartpole_a_max: float = _gain(10.0, 'pump acceleration limit [m/s^2]', 'cartpole.a_max')
    cartpole_k_x: float = _gain(1.0, 'cart position gain [1/s^2]', 'cartpole.k_x')
    cartpole_k_v: float = _gain(2.0, 'cart velocity gain [1/s]', 'cartpole.k_v')
    cartpole_kick_accel: float = _gain(5.0, 'cart acceleration at rest [m/s^2]',
                                       'cartpole.kick_accel')
    acrobot_passive: str = _gain('shoulder', 'passive joint', 'acrobot.passive')
    acrobot_active: str = _gain('elbow', 'actuated joint', 'acrobot.active')
    acrobot_k_p: float = _gain(6.0, 'PFL stiffness [1/s^2]', 'acrobot.k_p')
    acrobot_k_d: float = _gain(4.0, 'PFL damping [1/s]', 'acrobot.k_d')
    acrobot_k_energy: float = _gain(4.0, 'energy weight of the Lyapunov function '
                                         '[1/(J s^2)]', 'acrobot.k_energy')
    acrobot_den_min: float = _gain(0.1, 'floor of the law denominator 1 + k_energy E~ M_bar '
                                        '(> 0)', 'acrobot.den_min')
    acrobot_kick_accel: float = _gain(20.0, 'active joint acceleration at rest [rad/s^2]',
                                      'acrobot.kick_accel')

    @property
    def gains(self):
        """{gain: value} of the chosen law (``<law>.<gain>`` parameters)."""
        out = {}
        for f in dataclasses.fields(self):
            prefix, _, key = ros_name(f).partition('.')
            if key and prefix == self.law:
                out[key] = getattr(self, f.name)
        return out


# ---------------------------------------------------------------------- declare / read
def ros_name(f):
    """The ROS parameter name of a dataclass field."""
    return f.metadata.get('name') or f.name


def _defaults(cls):
    return {f.name: getattr(cls(), f.name) for f in dataclasses.fields(cls)}


def table(cls):
    """{ROS name: (default, description)} of a parameter set, in declaration order."""
    defaults = _defaults(cls)
    return {ros_name(f): (defaults[f.name], f.metadata['description'])
            for f in dataclasses.fields(cls)}


def declare(node, cls):
    """Declare every parameter of ``cls`` on ``node`` (dynamic typing: checked by
    :func:`read`, not by rclpy)."""
    for name, (default, description) in table(cls).items():
        node.declare_parameter(name, default, ParameterDescriptor(
            description=description, dynamic_typing=True))


def read(node, cls):
    """The checked parameters of ``node`` as a ``cls`` instance (field checks in
    declaration order, then ``cls.validate``); raises ParameterError naming the
    parameter."""
    values = {}
    for f in dataclasses.fields(cls):
        name = ros_name(f)
        values[f.name] = f.metadata['check'](name, node.get_parameter(name).value)
    cfg = cls(**values)
    cfg.validate()
    return cfg


def update(cfg, params):
    """Apply run-time parameter changes to ``cfg``: the ``dynamic`` fields are checked and
    set, any other parameter of the set is refused.  Returns None when every change is
    accepted, else the reason (nothing is changed then)."""
    fields = {ros_name(f): f for f in dataclasses.fields(cfg)}
    dynamic = [n for n, f in fields.items() if f.metadata['dynamic']]
    changes = {}
    for p in params:
        f = fields.get(p.name)
        if f is None:
            continue
        if not f.metadata['dynamic']:
            return 'parameter %s is read at start only (only %s can change at run time)' % (
                p.name, ', '.join(dynamic) or 'none')
        try:
            changes[f.name] = f.metadata['check'](p.name, p.value)
        except ParameterError as err:
            return str(err)
    trial = dataclasses.replace(cfg, **changes)
    try:
        trial.validate()          # rules between parameters (step_ticks <= max_step_ticks)
    except ParameterError as err:
        return str(err)
    for key, value in changes.items():
        setattr(cfg, key, value)
    return None


# ---------------------------------------------------------------------- parameters -> robot
def _world(world_file):
    """(:class:`~ros_vi.simulation.world.World`, its URDF text) of a world file;
    ParameterError naming ``world_file``."""
    from .. import resources
    from ..simulation.world import WorldError, load_world
    try:
        world = load_world(resources.resolve_uri(world_file.strip()))
        return world, world.urdf()
    except (WorldError, resources.ResourceError) as err:
        raise ParameterError('parameter world_file: %s' % err) from None


def robot_setup(cfg, **options):
    """The :class:`ros_vi.simulation.RobotSetup` of a node's robot parameters
    (``robot_description`` or ``urdf_file`` with ``xacro_allowed_paths``, ``prefix``,
    ``gravity``, ``strict_urdf``, ``urdf_inertia``, ``enforce_limits``); ``options`` are
    further :func:`ros_vi.simulation.setup_robot` keywords (initial state, interfaces, gains,
    trajectory joints), named like the node parameters.  Raises :class:`ParameterError`
    naming the parameter, or :class:`ros_vi.urdf.URDFError` naming it for a description the
    importer refuses."""
    from ..simulation import OptionError, load_description, setup_robot
    gravity, world = cfg.gravity, None
    if getattr(cfg, 'world_file', '').strip():
        world, text = _world(cfg.world_file)
        gravity = tuple(world.gravity)
        # the world's initial state, unless the node's own initial_* parameters give one
        if not options.get('initial_joints'):
            options.update(world.setup_options())
        base_dir, where = None, 'world_file (%s)' % cfg.world_file
    try:
        if not getattr(cfg, 'world_file', '').strip():
            text, base_dir, where = load_description(cfg.robot_description, cfg.urdf_file,
                                                     cfg.xacro_allowed_paths)
        setup = setup_robot(text, prefix=cfg.prefix, gravity=gravity,
                            strict=cfg.strict_urdf, base_dir=base_dir,
                            where='parameter ' + where,
                            import_options={'inertia': cfg.urdf_inertia,
                                            'enforce_limits': cfg.enforce_limits},
                            ground=(world.contact_ground() if world is not None else
                                    tuple(getattr(cfg, 'ground', ())) or None),
                            **dict(options, self_collision=(
                                options.get('self_collision', False)
                                or getattr(cfg, 'self_collision', False))))
        setup.world = world
        return setup
    except OptionError as err:
        raise ParameterError('parameter %s' % err) from None
