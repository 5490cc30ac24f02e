"""The command table of a simulation: which interfaces each joint offers, and what it was
last told.

ros2_control's vocabulary: a joint offers *command interfaces* (``effort``, ``position``,
``velocity``, :data:`COMMAND_INTERFACES`); its *active* interface is that of its last
command.  An effort command is a generalized force on the joint's input, saturated at the
joint's effort limit; a position or velocity command is realised by the joint's drive
(:class:`~ros_vi.mechanics.forces.JointDrives`: ``tau = kp (q_ref - q) + kd (v_ref - v) +
feed-forward``, saturated at the effort limit; docs/command-interfaces.md).

The rules live here once, for the simulator node, ``ros-vi simulate``, ``ros-vi info`` and
:class:`~ros_vi.simulation.Simulation` alike:

* :func:`joint_interfaces` -- the one table of which interfaces each joint offers (the
  default, the URDF's ``<ros2_control>`` block, explicit overrides) and their bounds;
* the passive-joint rule: a joint whose effort limit is 0 is passive, offers no interface
  and refuses every command by name (a raw input vector, :meth:`CommandTable.set_inputs`,
  is saturated to 0 there);
* :class:`CommandTable` -- validation (all-or-nothing, errors naming the culprit), clipping
  at the bounds, saturation, the command timeout and its decay, and the drive table.

Units: SI; angles in radians; times in seconds of simulation time.  Joints are the system's
configs (for a URDF, the moving joints, named ``prefix + joint``) in config order.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from ..control.base import MAX_COMMAND, actuated_inputs, default_effort_limits
from ..errors import name_list, shorten
from ..mechanics.forces import JointDrives
from ..mechanics.inputs import input_configs

__all__ = ['COMMAND_INTERFACES', 'DEFAULT_DRIVE_FREQUENCY', 'DEFAULT_DRIVE_DAMPING_RATIO',
           'OptionError', 'JointInterfaces', 'joint_interfaces', 'default_command_interfaces',
           'CommandTable']

#: The command interfaces a joint can offer (ros2_control's names).
COMMAND_INTERFACES = ('effort', 'position', 'velocity')
EFFORT, POSITION, VELOCITY = range(3)     # a joint's active interface, coded
_PLURAL = {'effort': 'efforts', 'position': 'positions', 'velocity': 'velocities'}
#: Default drive bandwidth w [rad/s] and damping ratio zeta: kp = m w^2, kd = 2 zeta m w
#: with m the joint's reflected inertia (docs/command-interfaces.md).  The bandwidth is at
#: most 1 / h for a VI step h: a stiffer drive is not resolved by the step and, against its
#: effort limit, chatters (a held pendulum at 100 Hz with w = 300 rad/s: 6e-3 rad/s).
DEFAULT_DRIVE_FREQUENCY = 300.0
DEFAULT_DRIVE_DAMPING_RATIO = 1.0


class OptionError(ValueError):
    """A simulation option (a :class:`~ros_vi.simulation.Simulation` keyword, the node
    parameter of the same name) is invalid.  ``option`` names it; the message starts with
    it (``"command_interfaces: joint 'knee' ..."``)."""

    def __init__(self, option, problem):
        super().__init__('%s: %s' % (option, problem))
        self.option = option
        self.problem = problem


def passive_message(joint):
    """The passive-joint rule's refusal, worded once."""
    return 'joint %r has effort limit 0: it cannot take any command' % joint


# ------------------------------------------------------------------------ the interface table
@dataclass(frozen=True)
class JointInterfaces:
    """What one joint offers: ``interfaces`` (a tuple of :data:`COMMAND_INTERFACES` names in
    the order declared; empty: it takes no command), ``bounds`` {interface: (min, max)} declared for
    them (rad or m, rad/s or m/s, N m or N), ``source``: ``'default'``, ``'ros2_control'``
    (the URDF's block) or ``'override'`` (a ``command_interfaces`` option), ``None`` for a
    joint that offers nothing by default (passive or unactuated)."""
    interfaces: tuple = ()
    bounds: dict = field(default_factory=dict)
    source: str = None


def default_command_interfaces(system, effort_limits=None):
    """{joint: tuple of interfaces} of every actuated joint when nothing else is said:
    ``effort``, ``position`` and ``velocity`` for a dynamic config, ``effort`` for a
    kinematic one, none for a passive joint (effort limit 0).  ``effort_limits`` (nu,):
    the limits in force (default the URDF's ``<limit effort>``)."""
    limits = default_effort_limits(system) if effort_limits is None else effort_limits
    names = [c.name for c in system.configs]
    out = {}
    for i, c in sorted(((i, c) for i, c in enumerate(input_configs(system)) if c >= 0),
                       key=lambda ic: ic[1]):
        if limits[i] == 0:
            out[names[c]] = ()
        else:
            out[names[c]] = COMMAND_INTERFACES if c < system.nQd else ('effort',)
    return out


def joint_interfaces(system, effort_limits=None, overrides=None):
    """The one table of which command interfaces each actuated joint offers, in config order:
    {joint: :class:`JointInterfaces`}.

    In order of precedence: ``overrides`` {joint: iterable of interface names} (e.g. the
    node's ``command_interfaces`` parameter; an override drops the block's bounds), then the
    URDF's ``<ros2_control>`` block when the robot has one (a joint it does not list takes
    no command, as in ros2_control; a passive joint it lists takes none either), then
    :func:`default_command_interfaces`.  Joints are
    the system's config names (``prefix + URDF name`` for a prefixed import).  Names are not
    validated here: :class:`CommandTable` does that (unknown, mimic, passive joints).
    """
    defaults = default_command_interfaces(system, effort_limits)
    table = {j: JointInterfaces(i, {}, 'default' if i else None) for j, i in defaults.items()}
    robot = getattr(system, 'urdf', None)
    controls = robot.joint_controls if robot is not None else {}
    if controls:
        table = {j: JointInterfaces() for j in table}
        for joint, control in controls.items():
            name = robot.prefix + joint
            if not defaults.get(name):
                # the importer warned: an unactuated joint, or a passive one (effort limit
                # 0), which the block cannot make take commands (the passive-joint rule)
                continue
            table[name] = JointInterfaces(
                tuple(control.command_interfaces),
                {i: tuple(b) for i, b in control.bounds.items()
                 if i in control.command_interfaces}, 'ros2_control')
    for joint, names in (overrides or {}).items():
        names = (names,) if isinstance(names, str) else tuple(names)
        table[joint] = JointInterfaces(names, {}, 'override')
    return table


def _finite_values(names, vals, what):
    """``vals`` as a float array (n,), one finite value per name; ValueError naming the
    joints otherwise."""
    try:
        arr = np.array(vals, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError('command: %s must be numbers, got %r'
                         % (_PLURAL[what], vals)) from None
    if arr.size != len(names):
        raise ValueError('command: %d joint names but %d %s'
                         % (len(names), arr.size, _PLURAL[what]))
    bad = [n for n, v in zip(names, arr) if not math.isfinite(v)]
    if bad:
        raise ValueError('command: non-finite %s for joint%s %s' % (
            what, 's' if len(bad) > 1 else '', ', '.join('%r (%r)' % (n, float(
                arr[names.index(n)])) for n in bad)))
    if what != 'effort':
        # a drive target that large would overflow the drive law to infinity in the step
        # (an effort is saturated at the joint's limit instead)
        big = np.flatnonzero(np.abs(arr) > MAX_COMMAND)
        if big.size:
            i = int(big[0])
            raise ValueError('command: %s %.6g for joint %r is beyond +-%g, the largest drive '
                             'target accepted' % (what, arr[i], names[i], MAX_COMMAND))
    return arr


def _effort_vector(values, names, what):
    """``values`` as a finite float vector with one effort per name, or ValueError."""
    try:
        arr = np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError('command: efforts must be numbers, got %r' % (values,)) from None
    if arr.size != len(names):
        raise ValueError('command: expected %d efforts for %ss [%s], got %d'
                         % (len(names), what, ', '.join(names), arr.size))
    bad = [n for n, v in zip(names, arr) if not math.isfinite(v)]
    if bad:
        raise ValueError('command: non-finite effort for %s%s %s' % (
            what, 's' if len(bad) > 1 else '', ', '.join(repr(b) for b in bad)))
    return arr


class CommandTable:
    """The commands of one simulated system: interfaces, bounds, last commands, drives.

    Parameters
    ----------
    system : System
        Commands act through its :class:`~ros_vi.mechanics.forces.ConfigForce` inputs (one
        per actuated joint for a URDF import).  A :class:`JointDrives` force is added when
        a joint offers a position or velocity interface and the system has none (so build
        the table before the integrator: adding a force changes the structure).
    effort_limits : (nu,) or None
        |u_i| saturation per input [N m or N]; default the URDF ``<limit effort>`` of each
        input's joint, ``inf`` for non-URDF systems.  A limit of 0 makes the joint passive.
    command_joints : list of str or None
        Joint order of :meth:`set_vector`; default every actuated joint that is not passive.
    command_interfaces : dict {joint: iterable of str} or None
        The interfaces each joint offers; the dict is complete (a joint it does not name
        takes no command).  Default :func:`joint_interfaces` without overrides (so a URDF's
        ``<ros2_control>`` block decides where there is one).  Passive, unactuated and mimic
        joints cannot offer any (:class:`OptionError`).
    command_bounds : dict {joint: {interface: (min, max)}} or None
        Bounds of the joints' interfaces: commands beyond them are clipped to them.  Default,
        with ``command_interfaces`` also None: the block's declared bounds.
    command_timeout, command_decay : float
        A command older than ``command_timeout`` [s] (0: never) ramps to zero over
        ``command_decay`` [s] (0: at once).
    """

    def __init__(self, system, effort_limits=None, command_joints=None,
                 command_interfaces=None, command_bounds=None, command_timeout=0.0,
                 command_decay=0.0):
        self.system = system
        nq = system.nQ
        self.command_timeout = command_timeout
        self.command_decay = command_decay
        self.joint_names = [c.name for c in system.configs]
        self._mimic_leader = {f.mimic.name: getattr(f.mimic.leader, 'name', f.mimic.leader)
                              for f in system.frames if f.mimic is not None}
        self._joint_index = {name: i for i, name in enumerate(self.joint_names)}
        self._robot = getattr(system, 'urdf', None)

        # inputs -> joints (ConfigForce inputs only; other inputs stay at zero)
        self.input_configs = input_configs(system)
        self._joint_input = {self.joint_names[c]: i
                             for i, c in enumerate(self.input_configs) if c >= 0}
        self.actuated_joint_names = [self.joint_names[c] for c in sorted(
            c for c in self.input_configs if c >= 0)]

        if effort_limits is None:
            effort_limits = default_effort_limits(system)
        limits = np.array(effort_limits, dtype=float).reshape(-1)
        if limits.shape != (system.nu,) or np.any(np.isnan(limits)) or np.any(limits < 0):
            raise OptionError('effort_limits', 'expected %d values >= 0 (inf for none), got %r'
                              % (system.nu, effort_limits))
        self.effort_limits = limits
        self._joint_limit = np.zeros(nq)      # effort limit per config [N m or N]
        self._actuated_inputs = np.array(list(self._joint_input.values()), dtype=int)
        self._actuated_configs = np.array([self._joint_index[j] for j in self._joint_input],
                                          dtype=int)
        self._joint_limit[self._actuated_configs] = limits[self._actuated_inputs]

        if command_joints is None:
            driven = set(actuated_inputs(system, limits)[0])
            command_joints = [j for j in self.actuated_joint_names
                              if system.inputs[self._joint_input[j]].name in driven]
        command_joints = list(command_joints)
        self.check_joint_names(command_joints, 'command_joints', actuated=True)
        self.command_joints = command_joints

        if command_interfaces is None:
            table = joint_interfaces(system, limits)
            command_interfaces = {j: e.interfaces for j, e in table.items()}
            if command_bounds is None:
                command_bounds = {j: e.bounds for j, e in table.items() if e.bounds}
        self.command_interfaces = self._interfaces(command_interfaces)
        self._bounds = self._command_bounds(command_bounds)

        drives = [f for f in system.forces if isinstance(f, JointDrives)]
        if len(drives) > 1:
            raise OptionError('command_interfaces', 'the system has %d JointDrives forces; a '
                              'Simulation drives its joints through one' % len(drives))
        self.drives = drives[0] if drives else None
        if self.drives is None and any(
                set(i) - {'effort'} for i in self.command_interfaces.values()):
            self.drives = JointDrives(system, name='drives')
        self._drive_dirty = True      # the drive table needs recomputing
        self._drives_on = False
        self.kp = np.zeros(nq)        # drive gains per config
        self.kd = np.zeros(nq)
        self.clear(np.zeros(nq))

    # ------------------------------------------------------------------ validation
    def check_joint_names(self, names, what, actuated=False):
        """ValueError (an :class:`OptionError` named ``what`` while building) unless every
        name is a string naming a config once, none a mimic joint, and (``actuated``) every
        one has an input."""
        error = _option_or_command
        seen = set()
        for name in names:
            if not isinstance(name, str):
                raise error(what, 'joint names must be strings, got %s' % shorten(name))
            if name in seen:
                raise error(what, 'joint %s is named twice' % shorten(name))
            seen.add(name)
        mimic = [n for n in names if n in self._mimic_leader]
        if mimic:
            n = mimic[0]
            raise error(what, 'joint %r is a mimic joint: it follows %r and takes no command '
                        'of its own (command %r)'
                        % (n, self._mimic_leader[n], self._mimic_leader[n]))
        unknown = [n for n in names if n not in self._joint_index]
        if unknown:
            # a hostile command may name 100,000 joints: the text names a few
            raise error(what, 'unknown joint name%s %s (joints: %s)' % (
                's' if len(unknown) > 1 else '', name_list(unknown, quote=shorten),
                name_list(self.joint_names, quote=str)))
        if actuated:
            passive = [n for n in names if n not in self._joint_input]
            if passive:
                raise error(what, 'joint%s %s %s not actuated (actuated: %s)' % (
                    's' if len(passive) > 1 else '', ', '.join(repr(p) for p in passive),
                    'are' if len(passive) > 1 else 'is',
                    ', '.join(self.actuated_joint_names) or 'none'))

    def joint_values(self, values, base, what):
        """``base`` (n,) with entries replaced from a dict {joint: value} or a full array
        (initial positions and velocities); :class:`OptionError` named ``what``."""
        out = np.array(base, dtype=float)
        if isinstance(values, dict):
            names = list(values)
            self.check_joint_names(names, what)
            vals = []
            for name in names:
                try:
                    vals.append(float(values[name]))
                except (TypeError, ValueError):
                    raise OptionError(what, 'value for joint %r is not a number: %r'
                                      % (name, values[name])) from None
            vals = np.array(vals)
            idx = [self._joint_index[n] for n in names]
        else:
            vals = np.array(values, dtype=float).reshape(-1)
            if vals.shape != (len(self.joint_names),):
                raise OptionError(what, 'expected %d values, got %d'
                                  % (len(self.joint_names), vals.size))
            names, idx = self.joint_names, list(range(len(self.joint_names)))
        bad = [n for n, v in zip(names, vals) if not math.isfinite(v)]
        if bad:
            raise OptionError(what, 'non-finite value for joint%s %s' % (
                's' if len(bad) > 1 else '', ', '.join(repr(b) for b in bad)))
        out[idx] = vals
        return out

    def _interfaces(self, spec):
        """The validated ``command_interfaces`` as {joint: tuple of interfaces} over the
        actuated joints (an empty tuple: the joint takes no command)."""
        nd = self.system.nQd
        out = {j: () for j in self.actuated_joint_names}
        if not isinstance(spec, dict):
            raise OptionError('command_interfaces', 'expected a dict {joint: interfaces}, '
                              'got %r' % (spec,))
        self.check_joint_names(list(spec), 'command_interfaces', actuated=True)
        for j, names in spec.items():
            names = (names,) if isinstance(names, str) else tuple(names)
            bad = [n for n in names if n not in COMMAND_INTERFACES]
            if bad:
                raise OptionError('command_interfaces', 'joint %r: unknown interface %r '
                                  '(interfaces: %s)'
                                  % (j, bad[0], ', '.join(COMMAND_INTERFACES)))
            c = self._joint_index[j]
            if names and self._joint_limit[c] == 0:
                raise OptionError('command_interfaces', passive_message(j))
            if c >= nd and set(names) - {'effort'}:
                raise OptionError('command_interfaces', 'joint %r is a kinematic config: it '
                                  'has no position or velocity drive' % j)
            out[j] = tuple(n for n in COMMAND_INTERFACES if n in names)
        return out

    def _command_bounds(self, spec):
        """{interface: (lower (nQ,), upper (nQ,))} from ``command_bounds``; position and
        velocity bounds include the URDF position and velocity limits."""
        nq = self.system.nQ
        out = {n: (np.full(nq, -np.inf), np.full(nq, np.inf)) for n in COMMAND_INTERFACES}
        if self._robot is not None:
            # ros2_control intersects the declared bounds with the URDF <limit>s
            lower, upper = self._robot.position_limits
            out['position'][0][:], out['position'][1][:] = lower, upper
            speed = self._robot.velocity_limits
            out['velocity'][0][:], out['velocity'][1][:] = -speed, speed
        if spec is None:
            return out
        if not isinstance(spec, dict):
            raise OptionError('command_bounds', 'expected a dict {joint: {interface: (min, '
                              'max)}}, got %r' % (spec,))
        self.check_joint_names(list(spec), 'command_bounds', actuated=True)
        for j, per in spec.items():
            c = self._joint_index[j]
            if not isinstance(per, dict):
                raise OptionError('command_bounds', 'joint %r: expected {interface: (min, '
                                  'max)}, got %r' % (j, per))
            for name, pair in per.items():
                if name not in self.command_interfaces[j]:
                    raise OptionError('command_bounds', 'joint %r has no %r interface (it '
                                      'has: %s)' % (j, name, ', '.join(
                                          self.command_interfaces[j]) or 'none'))
                try:
                    lo, hi = (float(x) for x in pair)
                except (TypeError, ValueError):
                    raise OptionError('command_bounds', 'joint %r, %s: expected (min, max), '
                                      'got %r' % (j, name, pair)) from None
                if math.isnan(lo) or math.isnan(hi) or lo > hi:
                    raise OptionError('command_bounds', 'joint %r, %s: needs min <= max, got '
                                      '(%r, %r)' % (j, name, lo, hi))
                out[name][0][c] = max(out[name][0][c], lo)
                out[name][1][c] = min(out[name][1][c], hi)
        return out

    def command_bounds(self):
        """{joint: {interface: (min, max)}} in force for the interfaces each joint offers
        (the declared bounds intersected with the URDF position limits) [rad or m, rad/s or
        m/s, N m or N]."""
        out = {}
        for j, have in self.command_interfaces.items():
            c = self._joint_index[j]
            out[j] = {i: (float(self._bounds[i][0][c]), float(self._bounds[i][1][c]))
                      for i in have}
        return out

    def check_interface(self, names, interface):
        """ValueError unless every joint in ``names`` offers ``interface`` (a passive joint
        offers none: the passive-joint rule)."""
        if interface not in COMMAND_INTERFACES:
            raise ValueError('command: unknown interface %r (interfaces: %s)'
                             % (interface, ', '.join(COMMAND_INTERFACES)))
        for n in names:
            have = self.command_interfaces[n]
            if interface in have:
                continue
            if self._joint_limit[self._joint_index[n]] == 0:
                raise ValueError('command: ' + passive_message(n))
            raise ValueError('command: joint %r has no %s interface (it has: %s)'
                             % (n, interface, ', '.join(have) or 'none'))

    def _clip(self, interface, idx, values):
        lower, upper = self._bounds[interface]
        return np.minimum(np.maximum(values, lower[idx]), upper[idx])

    # ------------------------------------------------------------------ drive gains
    def set_default_gains(self, reflected_inertia, frequency, damping_ratio):
        """kp = m w^2 and kd = 2 zeta m w for every config, m its reflected inertia (nQ,)
        [kg m^2 or kg] (the mass matrix diagonal at the initial state)."""
        self.kp = reflected_inertia * frequency ** 2
        self.kd = 2.0 * damping_ratio * reflected_inertia * frequency
        self._drive_dirty = True

    def set_drive_gains(self, gains, what='drive_gains'):
        """Set drive gains ``{joint: (kp, kd)}`` [N m/rad, N m s/rad or N/m, N s/m], both
        finite and >= 0, for joints with a position or velocity interface; the others keep
        theirs.  All-or-nothing (ValueError naming the joint)."""
        if not isinstance(gains, dict):
            raise OptionError(what, 'expected a dict {joint: (kp, kd)}, got %r' % (gains,))
        self.check_joint_names(list(gains), what, actuated=True)
        new = []
        for j, pair in gains.items():
            if not set(self.command_interfaces[j]) & {'position', 'velocity'}:
                raise OptionError(what, 'joint %r has no position or velocity interface (it '
                                  'has: %s)' % (j, ', '.join(self.command_interfaces[j])
                                                or 'none'))
            try:
                kp, kd = (float(x) for x in pair)
            except (TypeError, ValueError):
                raise OptionError(what, 'joint %r: expected (kp, kd), got %r'
                                  % (j, pair)) from None
            if not (math.isfinite(kp) and math.isfinite(kd) and kp >= 0 and kd >= 0):
                raise OptionError(what, 'joint %r: kp and kd must be finite and >= 0, got '
                                  '(%r, %r)' % (j, kp, kd))
            new.append((self._joint_index[j], kp, kd))
        for c, kp, kd in new:
            self.kp[c], self.kd[c] = kp, kd
        self._drive_dirty = True

    def drive_gains(self):
        """{joint: (kp, kd)} of the joints with a position or velocity interface."""
        return {j: (float(self.kp[self._joint_index[j]]),
                    float(self.kd[self._joint_index[j]]))
                for j, have in self.command_interfaces.items()
                if set(have) & {'position', 'velocity'}}

    # ------------------------------------------------------------------ commands
    def clear(self, q):
        """Forget every command: all joints back on their effort interface with zero
        effort, every drive off; ``q`` (nQ,) the configuration the table starts from."""
        nu, nq = self.system.nu, self.system.nQ
        self._cmd = np.zeros(nu)
        self._cmd_time = np.full(nu, -np.inf)
        self._u_cache = None
        self.mode = np.zeros(nq, dtype=int)          # EFFORT, POSITION or VELOCITY
        self._q_ref = np.zeros(nq)                   # position target [rad or m]
        self._v_ref = np.zeros(nq)                   # velocity target [rad/s or m/s]
        self._ff = np.zeros(nq)                      # effort feed-forward [N m or N]
        self._drive_time = np.full(nq, -np.inf)      # time of the last drive command
        self._vel_q = np.zeros(nq)   # a velocity drive's position reference at the tick
        if self.drives is not None:
            self.drives_off()

    def drives_off(self):
        nd = self.system.nQd
        zero = np.zeros(nd)
        self.drives.set_drives(zero, zero, zero, zero, zero, zero, np.full(nd, np.inf))
        self._drives_on = False
        self._drive_dirty = True

    def _named_values(self, commands, values, what):
        """(names, float array) from a dict {joint: value} or names and values."""
        if isinstance(commands, dict):
            names, vals = list(commands), list(commands.values())
        else:
            names = list(commands)
            if values is None:
                raise ValueError('set_commands: give a dict {joint: %s} or names and values'
                                 % what)
            try:
                vals = list(np.asarray(values, dtype=float).reshape(-1))
            except (TypeError, ValueError):
                raise ValueError('command: %s must be numbers, got %r'
                                 % (_PLURAL[what], values)) from None
            if len(vals) != len(names):
                raise ValueError('set_commands: %d joint names but %d %s'
                                 % (len(names), len(vals), _PLURAL[what]))
        self.check_joint_names(names, 'command', actuated=True)
        return names, _finite_values(names, vals, what)

    def set(self, commands, values, t, q, interface='effort'):
        """One interface of some joints by name (see ``Simulation.set_commands``); ``t`` [s]
        the command time, ``q`` (nQ,) the current configuration."""
        if interface not in COMMAND_INTERFACES:
            raise ValueError('set_commands: unknown interface %r (interfaces: %s)'
                             % (interface, ', '.join(COMMAND_INTERFACES)))
        names, arr = self._named_values(commands, values, interface)
        self.check_interface(names, interface)
        if interface == 'effort':
            self._effort_command(names, arr, t)
        elif interface == 'position':
            self._drive_command(names, POSITION, arr, None, None, t, q)
        else:
            self._drive_command(names, VELOCITY, None, arr, None, t, q)

    def set_targets(self, names, positions, velocities, efforts, t, q):
        """A full target set per joint (see ``Simulation.set_joint_targets``)."""
        names = list(names)
        if positions is None and velocities is None and efforts is None:
            raise ValueError('set_joint_targets: give positions, velocities or efforts')
        self.check_joint_names(names, 'command', actuated=True)
        qr = None if positions is None else _finite_values(names, positions, 'position')
        vr = None if velocities is None else _finite_values(names, velocities, 'velocity')
        f = None if efforts is None else _finite_values(names, efforts, 'effort')
        if qr is not None:
            self.check_interface(names, 'position')
            self._drive_command(names, POSITION, qr, vr, f, t, q)
        elif vr is not None:
            self.check_interface(names, 'velocity')
            self._drive_command(names, VELOCITY, None, vr, f, t, q)
        else:
            self.check_interface(names, 'effort')
            self._effort_command(names, f, t)

    def set_vector(self, values, t):
        """Efforts of :attr:`command_joints` in that order (see
        ``Simulation.set_command_vector``)."""
        arr = _effort_vector(values, self.command_joints, 'joint')
        self.check_interface(self.command_joints, 'effort')
        self._effort_command(self.command_joints, arr, t)

    def set_inputs(self, values, t):
        """The raw command of every input (nu,) in input order (see
        ``Simulation.set_input_commands``): no interface check, every joint on effort."""
        names = [i.name for i in self.system.inputs]
        arr = _effort_vector(values, names, 'input')
        self.mode[:] = EFFORT
        self._apply(np.arange(len(names)), arr, t)

    def _effort_command(self, names, arr, t):
        idx = np.array([self._joint_index[n] for n in names], dtype=int)
        self.mode[idx] = EFFORT
        self._apply(np.array([self._joint_input[n] for n in names], dtype=int),
                    self._clip('effort', idx, arr), t)

    def _drive_command(self, names, mode, qr, vr, f, t, q):
        """Switch ``names`` to the position or velocity drive with targets qr, vr and
        feed-forward f ((n,) or None: zero); the joints' effort commands are dropped."""
        idx = np.array([self._joint_index[n] for n in names], dtype=int)
        zero = np.zeros(idx.size)
        if mode == VELOCITY:
            # a velocity drive follows a position reference that its velocity target
            # integrates; it starts where the joint is
            entering = idx[self.mode[idx] != VELOCITY]
            self._vel_q[entering] = q[entering]
        else:
            self._q_ref[idx] = self._clip('position', idx, qr)
        self._v_ref[idx] = zero if vr is None else self._clip('velocity', idx, vr)
        self._ff[idx] = zero if f is None else self._clip('effort', idx, f)
        self.mode[idx] = mode
        self._drive_time[idx] = t
        self._drive_dirty = True
        inputs = np.array([self._joint_input[n] for n in names], dtype=int)
        self._cmd[inputs] = 0.0
        self._cmd_time[inputs] = t
        self._u_cache = None

    def _apply(self, idx, arr, t):
        self._cmd[idx] = arr
        self._cmd_time[idx] = t
        self._u_cache = None

    def commanded(self):
        """Raw (unsaturated) last command per input (nu,)."""
        return self._cmd.copy()

    def command_times(self):
        """Time [s] of the last command per input (nu,) (``-inf``: never commanded)."""
        return self._cmd_time.copy()

    def effective(self, t):
        """Inputs (nu,) applied at time t: saturated at the effort limits and scaled down to
        zero once a command is older than ``command_timeout`` (linear ramp over
        ``command_decay``).  Shared, not to be modified: the inputs stay what they are until
        a command changes or one crosses its timeout, so a tick usually reuses them."""
        cache = self._u_cache
        if cache is not None and cache[0] <= t < cache[1]:
            return cache[2]
        lim = self.effort_limits
        u = np.minimum(np.maximum(self._cmd, -lim), lim)
        until = np.inf
        if self.command_timeout > 0:
            scale = self._timeout_scale(t, self._cmd_time)
            u *= scale
            # constant until the next fresh command starts to time out; inside a ramp the
            # inputs change with t (never reused)
            fresh = self._cmd_time[scale == 1.0]
            ramping = np.any((scale > 0.0) & (scale < 1.0))
            until = t if ramping else (fresh.min() + self.command_timeout if fresh.size
                                       else np.inf)
        self._u_cache = (t, until, u)
        return u

    def _timeout_scale(self, t, times):
        """Factor (n,) in [0, 1] on commands given at ``times`` (n,): 1 until
        ``command_timeout`` has passed, then a linear ramp to 0 over ``command_decay``
        (only called with a timeout)."""
        # never-commanded entries have time -inf: over = inf -> scale 0
        over = (t - times) - self.command_timeout
        if self.command_decay > 0:
            scale = 1.0 - over / self.command_decay
            return scale.clip(0.0, 1.0, out=scale)
        return over <= 1e-12

    def active_interfaces(self):
        """{joint: the interface of its last command} for the joints that take commands."""
        return {j: COMMAND_INTERFACES[self.mode[self._joint_index[j]]]
                for j, have in self.command_interfaces.items() if have}

    def timed_out(self, t):
        """Names of actuated joints whose command has timed out at ``t`` (decaying or zero)."""
        if self.command_timeout <= 0:
            return []
        out = []
        for j in self.actuated_joint_names:
            i = self._joint_input[j]
            if np.isfinite(self._cmd_time[i]) and \
                    t - self._cmd_time[i] > self.command_timeout + 1e-12:
                out.append(j)
        return out

    # ------------------------------------------------------------------ drives over a tick
    def driving(self):
        """True when some joint is on its position or velocity drive (turns the drive table
        off when none is)."""
        if self.drives is None:
            return False
        on = bool(self.mode.any())
        if not on and self._drives_on:
            self.drives_off()
        return on

    def set_drives(self, t_start, t_mid):
        """The drive table for a VI step with midpoint time ``t_mid`` of the tick that
        starts at ``t_start``: position joints aim at q_ref, velocity joints at their
        reference position advanced by v_ref to ``t_mid``; feed-forwards (v_ref, effort)
        scaled by the timeout."""
        nd = self.system.nQd
        mode = self.mode[:nd]
        if not (self._drive_dirty or self.command_timeout > 0 or (mode == VELOCITY).any()):
            return                  # the table in place is still this step's
        self._drive_dirty = False
        v, f = self._v_ref[:nd], self._ff[:nd]
        if self.command_timeout > 0:
            scale = self._timeout_scale(t_start, self._drive_time[:nd])
            v, f = v * scale, f * scale
        lower, upper = self._bounds['position'][0][:nd], self._bounds['position'][1][:nd]
        position = np.where(mode == VELOCITY,
                            np.minimum(np.maximum(self._vel_q[:nd] + v * (t_mid - t_start),
                                                  lower), upper),
                            self._q_ref[:nd])
        # a reference held at a position limit does not move: its velocity feed-forward
        # would push the joint on through the limit
        v = np.where(((position >= upper) & (v > 0.0)) | ((position <= lower) & (v < 0.0)),
                     0.0, v)
        self.drives.set_drives(mode != EFFORT, self.kp[:nd], self.kd[:nd], position, v, f,
                               self._joint_limit[:nd])
        self._drives_on = True

    def after_driven_tick(self, q1, q2, dt, applied, t_start, t_end):
        """After a tick with drives from ``q1`` to ``q2`` (nQ,) over the last step of length
        ``dt``: returns the applied inputs (nu,) with the drive torques on the driven joints,
        and advances the velocity drives' position references to t_end (within the position
        limits and within effort limit / kp of the joint, so a blocked joint does not wind up
        a reference it cannot follow)."""
        nd = self.system.nQd
        tau = self.drives.torque(0.5 * (q1 + q2), (q2 - q1) / dt)
        mode = self.mode
        driven = mode[self._actuated_configs] != EFFORT
        applied = applied.copy()
        applied[self._actuated_inputs[driven]] = tau[self._actuated_configs[driven]]
        velocity = np.nonzero(mode[:nd] == VELOCITY)[0]
        if velocity.size:
            v = self._v_ref[velocity]
            if self.command_timeout > 0:
                v = v * self._timeout_scale(t_start, self._drive_time[velocity])
            ref = self._vel_q[velocity] + v * (t_end - t_start)
            with np.errstate(divide='ignore', invalid='ignore'):
                slack = np.where(self.kp[velocity] > 0,
                                 self._joint_limit[velocity] / self.kp[velocity], np.inf)
            ref = np.minimum(np.maximum(ref, q2[velocity] - slack), q2[velocity] + slack)
            self._vel_q[velocity] = self._clip('position', velocity, ref)
        return applied


def _option_or_command(what, problem):
    """The error of a bad joint name: a ValueError ``'command: ...'`` for a command, an
    :class:`OptionError` for a simulation option."""
    if what == 'command':
        return ValueError('command: ' + problem)
    return OptionError(what, problem)
