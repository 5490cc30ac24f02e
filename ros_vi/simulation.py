"""A ROS-free simulation core: a :class:`MidpointVI` stepped at a fixed tick with commands.

:class:`Simulation` is everything the ROS simulator node does except talking ROS: it owns a
:class:`~ros_vi.integrators.MidpointVI` for a :class:`~ros_vi.mechanics.system.System`
(usually imported from a URDF), keeps the joint effort commands (validated, saturated at the
effort limits, timed out to zero), advances time by ticks of ``dt`` seconds made of
``substeps`` VI steps (retrying with smaller substeps when the root solver fails, holding
the state and reporting the error when that fails too), and computes what the node
publishes: joint positions, velocities ``v = M(q)^-1 p`` (the Legendre transform of the
VI's discrete momentum, see docs/architecture.md), the efforts applied over the last
tick, link transforms for tf, energy and solver iterations.

Nothing here imports rclpy; the ROS layer (``ros_vi/ros/``) converts to messages.

Units: SI, angles in radians; times in seconds of simulation time.  "Joints" are the
system's configs (for a URDF: the moving joints, named ``prefix + joint``) in config order.

Example
-------
>>> sim = Simulation.from_urdf_file('urdf/pendulum.urdf', rate=500.0)
>>> sim.set_commands({'theta': 1.0})          # N m on joint 'theta'
>>> result = sim.tick()                       # advance 1/500 s
>>> state = sim.state()                       # positions, velocities, efforts, energy ...
"""
import functools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .control.base import actuated_inputs, angle_mask, default_effort_limits
from .control.closed_loop import ClosedLoopResult
from .integrators import ConvergenceError, MidpointVI
from .mechanics import dynamics
from .mechanics.forces import JointDrives
from .mechanics.inputs import config_efforts, input_configs

#: The command interfaces a joint can offer (ros2_control's names).
COMMAND_INTERFACES = ('effort', 'position', 'velocity')
_EFFORT, _POSITION, _VELOCITY = range(3)     # a joint's active interface, coded
_PLURAL = {'effort': 'efforts', 'position': 'positions', 'velocity': 'velocities'}
#: Default drive bandwidth w [rad/s] and damping ratio zeta: kp = m w^2, kd = 2 zeta m w
#: with m the joint's reflected inertia (docs/command-interfaces.md).
DEFAULT_DRIVE_FREQUENCY = 300.0
DEFAULT_DRIVE_DAMPING_RATIO = 1.0


@dataclass
class TickResult:
    """Outcome of one :meth:`Simulation.tick`.

    ok: the state advanced (False: the state was held after every retry failed);
    iterations: Newton iterations summed over the substeps that succeeded;
    substeps: VI steps used in the tick (``substeps * 2**k`` after k refinements);
    retries: how many refinements were needed; error: the solver's message or None.
    """
    ok: bool
    iterations: int
    substeps: int
    retries: int = 0
    error: str = None


@dataclass
class SimState:
    """Published state at time ``t`` [s].

    joint_names (n,), positions (n,) [rad or m], velocities (n,) = M(q)^-1 p for the
    dynamic configs (kinematic configs: their prescribed rate, zero when held),
    efforts (n,) [N m or N] generalized force applied by the commands over the last tick
    (after saturation and timeout), energy = T + V [J], iterations of the last tick.
    mimic_names (m,), mimic_positions (m,), mimic_velocities (m,): the joints that follow a
    config (mimic frames, e.g. URDF ``<mimic>`` joints): not configs, but published in
    joint states (with effort 0: they carry no actuator).
    """
    t: float
    joint_names: list
    positions: np.ndarray
    velocities: np.ndarray
    efforts: np.ndarray
    _energy: object          # T + V [J], or a function computing it on first use
    iterations: int
    ok: bool = True
    error: str = None
    extra: dict = field(default_factory=dict)
    mimic_names: list = field(default_factory=list)
    mimic_positions: np.ndarray = field(default_factory=lambda: np.zeros(0))
    mimic_velocities: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def energy(self):
        """T + V [J] (computed on first use: publishing joint states does not need it)."""
        if callable(self._energy):
            self._energy = float(self._energy())
        return self._energy


def _finite_vector(values, n, what):
    arr = np.array(values, dtype=float).reshape(-1)
    if arr.shape != (n,):
        raise ValueError('%s: expected %d values, got %d' % (what, n, arr.size))
    return arr


def _check_positive(value, what, allow_zero=False):
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError('%s must be %s, got %r' % (
            what, 'finite and >= 0' if allow_zero else 'finite and > 0', value))
    return value


class Simulation:
    """Fixed-tick simulation of ``system`` with joint commands: efforts, position and
    velocity targets (docs/command-interfaces.md).

    Parameters
    ----------
    system : System
        The mechanical system.  Commands act through its :class:`forces.ConfigForce`
        inputs (the URDF importer makes one per actuated joint, named like the joint).
    dt : float
        Tick length [s] (e.g. ``1 / rate``).
    substeps : int
        VI steps per tick (each ``dt / substeps`` long).
    effort_limits : (nu,) or None
        |u_i| saturation per input [N m or N]; default: the URDF ``<limit effort>`` of each
        input's joint, ``inf`` for non-URDF systems.  A limit of 0 makes the joint passive.
    command_timeout : float
        Seconds of simulation time after which a joint's last command decays to zero
        torque (0 disables the timeout).
    command_decay : float
        Length [s] of the linear ramp from the commanded effort to zero once the timeout
        has passed (0: drop to zero at once).
    command_joints : list of str or None
        Joint order of :meth:`set_command_vector`; default: every actuated joint whose
        effort limit is not zero.
    command_interfaces : dict {joint: iterable of str} or None
        The command interfaces each joint offers, a subset of :data:`COMMAND_INTERFACES`
        (``'effort'``, ``'position'``, ``'velocity'``); the dict is complete: a joint it
        does not name takes no command.  Default: every actuated joint whose effort limit
        is not zero offers all three (kinematic configs only ``'effort'``).  A joint with
        effort limit 0, an unactuated joint or a mimic joint cannot offer any (ValueError).
    command_bounds : dict {joint: {interface: (min, max)}} or None
        Bounds of a joint's command interface (ros2_control's ``min``/``max`` parameters):
        commands beyond them are clipped to them [rad, m, rad/s, m/s, N m or N].
    drive_gains : dict {joint: (kp, kd)} or None
        Gains of the position and velocity drives [N m/rad, N m s/rad or N/m, N s/m];
        joints not named get ``kp = m w^2``, ``kd = 2 zeta m w`` with m their reflected
        inertia (the mass matrix diagonal at the initial configuration), w
        ``drive_frequency`` [rad/s] and zeta ``drive_damping_ratio``.
    drive_frequency, drive_damping_ratio : float
        See ``drive_gains`` (defaults :data:`DEFAULT_DRIVE_FREQUENCY`,
        :data:`DEFAULT_DRIVE_DAMPING_RATIO`).
    initial_positions, initial_velocities : dict {joint: value}, (n,) array, or None
        Initial state (joints not named keep the system's current q / zero velocity).
    max_refinements : int
        After a failed tick, retry with ``substeps * 2, * 4, ...`` up to this many times.
    max_iterations : int
        Newton iterations allowed per VI step.
    max_subdivisions : int
        Inside each VI step, a step whose root solve fails is split into up to
        ``2**max_subdivisions`` substeps (:class:`MidpointVI`, docs/integrator.md) before
        the tick's own refinements (``max_refinements``) are tried.
    tolerance : float
        VI root-solver tolerance on |DEL|.
    t0 : float
        Initial simulation time [s].
    """

    def __init__(self, system, dt, substeps=1, effort_limits=None, command_timeout=0.0,
                 command_decay=0.0, command_joints=None, initial_positions=None,
                 initial_velocities=None, max_refinements=3, max_iterations=50,
                 tolerance=1e-10, t0=0.0, max_subdivisions=8, command_interfaces=None,
                 command_bounds=None, drive_gains=None,
                 drive_frequency=DEFAULT_DRIVE_FREQUENCY,
                 drive_damping_ratio=DEFAULT_DRIVE_DAMPING_RATIO):
        self.system = system
        self.dt = _check_positive(dt, 'dt')
        if int(substeps) != substeps or substeps < 1:
            raise ValueError('substeps must be an integer >= 1, got %r' % (substeps,))
        self.substeps = int(substeps)
        self.command_timeout = _check_positive(command_timeout, 'command_timeout', True)
        self.command_decay = _check_positive(command_decay, 'command_decay', True)
        if int(max_refinements) != max_refinements or max_refinements < 0:
            raise ValueError('max_refinements must be an integer >= 0, got %r'
                             % (max_refinements,))
        self.max_refinements = int(max_refinements)
        if int(max_iterations) != max_iterations or max_iterations < 1:
            raise ValueError('max_iterations must be an integer >= 1, got %r'
                             % (max_iterations,))
        self.max_iterations = int(max_iterations)
        self.t0 = float(t0)
        drive_frequency = _check_positive(drive_frequency, 'drive_frequency')
        drive_damping_ratio = _check_positive(drive_damping_ratio, 'drive_damping_ratio',
                                              True)

        self.robot = getattr(system, 'urdf', None)
        nq, nd = system.nQ, system.nQd
        self.joint_names = [c.name for c in system.configs]
        self.mimic_joint_names = [f.mimic.name for f in system.frames if f.mimic is not None]
        self._mimic_leader = {f.mimic.name: getattr(f.mimic.leader, 'name', f.mimic.leader)
                              for f in system.frames if f.mimic is not None}
        self._joint_index = {name: i for i, name in enumerate(self.joint_names)}

        # inputs -> joints (ConfigForce inputs only; other inputs stay at zero)
        self._input_config = input_configs(system)
        self._joint_input = {self.joint_names[c]: i
                             for i, c in enumerate(self._input_config) if c >= 0}
        self.actuated_joint_names = [self.joint_names[c] for c in sorted(
            c for c in self._input_config if c >= 0)]

        if effort_limits is None:
            effort_limits = default_effort_limits(system)
        limits = np.array(effort_limits, dtype=float).reshape(-1)
        if limits.shape != (system.nu,) or np.any(np.isnan(limits)) or np.any(limits < 0):
            raise ValueError('effort_limits: expected %d values >= 0 (inf for none), got %r'
                             % (system.nu, effort_limits))
        self.effort_limits = limits

        if command_joints is None:
            driven = set(actuated_inputs(system, self.effort_limits)[0])
            command_joints = [j for j in self.actuated_joint_names
                              if system.inputs[self._joint_input[j]].name in driven]
        command_joints = list(command_joints)
        self._check_joint_names(command_joints, 'command_joints', actuated=True)
        self.command_joints = command_joints
        self._command_inputs = np.array([self._joint_input[j] for j in command_joints],
                                        dtype=int)

        # command interfaces, their bounds, and the drives that realise position/velocity
        self._joint_limit = np.zeros(nq)      # effort limit per config [N m or N]
        self._actuated_inputs = np.array(list(self._joint_input.values()), dtype=int)
        self._actuated_configs = np.array([self._joint_index[j] for j in self._joint_input],
                                          dtype=int)
        self._joint_limit[self._actuated_configs] = self.effort_limits[self._actuated_inputs]
        self.command_interfaces = self._interfaces(command_interfaces)
        self._bounds = self._command_bounds(command_bounds)
        drives = [f for f in system.forces if isinstance(f, JointDrives)]
        if len(drives) > 1:
            raise ValueError('the system has %d JointDrives forces; a Simulation drives its '
                             'joints through one' % len(drives))
        self._drives = drives[0] if drives else None
        self._driving = False         # a drive was on during the current tick
        self._drive_dirty = True      # the drive table needs recomputing
        if self._drives is None and any(
                set(i) - {'effort'} for i in self.command_interfaces.values()):
            # before the integrator exists: adding a force changes the structure
            self._drives = JointDrives(system, name='drives')

        self.mvi = MidpointVI(system, tolerance=tolerance, max_subdivisions=max_subdivisions)

        # initial state
        q0 = system.q.copy()
        v0 = np.zeros(nq)
        if initial_positions is not None:
            q0 = self._joint_values(initial_positions, q0, 'initial_positions')
        if initial_velocities is not None:
            v0 = self._joint_values(initial_velocities, v0, 'initial_velocities')
        self._check_constraints(q0)
        self._model = system.model
        self._out = self._model.create_data()    # the published state (q2, v2, u)
        self._pose_data = None                   # link_transforms_at's own, made on first use
        self._energy_data = None                 # _energy_at's own, made on first use
        self._out.set(q0, v0)
        self._p0 = dynamics.momentum_from_velocity(self._model, self._out, v0)
        self._q0 = q0
        self._v0 = v0
        self._k_hold = q0[nd:].copy()
        # default drive gains from the reflected inertia at q0 (mimic joints folded in)
        m = np.zeros(nq)
        m[:nd] = np.diag(dynamics.mass_matrix(self._model, self._out))
        self._kp = m * drive_frequency ** 2
        self._kd = 2.0 * drive_damping_ratio * m * drive_frequency
        if drive_gains is not None:
            self.set_drive_gains(drive_gains)

        self.paused = False
        self.last_error = None
        self.failures = 0
        self.retries = 0
        self._joint_links_cache = {}
        self._static = self._compute_static_transforms()
        self.reset(keep_time=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_urdf(cls, source, rate=500.0, prefix=None, gravity=(0.0, 0.0, -9.81),
                  import_options=None, **options):
        """Import a URDF string (``robot_description``) and simulate it at ``rate`` [Hz].

        ``import_options`` go to :func:`ros_vi.urdf.import_urdf`; the other keywords to
        :class:`Simulation` (``dt`` is ``1 / rate``).
        """
        from .urdf import import_urdf
        system = import_urdf(source, prefix=prefix, gravity=gravity, **(import_options or {}))
        return cls(system, 1.0 / _check_positive(rate, 'rate'), **options)

    @classmethod
    def from_urdf_file(cls, filename, rate=500.0, prefix=None, gravity=(0.0, 0.0, -9.81),
                       import_options=None, **options):
        """Like :meth:`from_urdf` for a ``.urdf`` (or ``.xacro``) file."""
        from .urdf import import_urdf_file
        system = import_urdf_file(filename, prefix=prefix, gravity=gravity,
                                  **(import_options or {}))
        return cls(system, 1.0 / _check_positive(rate, 'rate'), **options)

    # ------------------------------------------------------------------ validation helpers
    def _check_joint_names(self, names, what, actuated=False):
        seen = set()
        for name in names:
            if not isinstance(name, str):
                raise ValueError('%s: joint names must be strings, got %r' % (what, name))
            if name in seen:
                raise ValueError('%s: joint %r is named twice' % (what, name))
            seen.add(name)
        mimic = [n for n in names if n in self._mimic_leader]
        if mimic:
            n = mimic[0]
            raise ValueError('%s: joint %r is a mimic joint: it follows %r and takes no '
                             'command of its own (command %r)'
                             % (what, n, self._mimic_leader[n], self._mimic_leader[n]))
        unknown = [n for n in names if n not in self._joint_index]
        if unknown:
            raise ValueError('%s: unknown joint name%s %s (joints: %s)' % (
                what, 's' if len(unknown) > 1 else '', ', '.join(repr(u) for u in unknown),
                ', '.join(self.joint_names)))
        if actuated:
            passive = [n for n in names if n not in self._joint_input]
            if passive:
                raise ValueError('%s: joint%s %s %s not actuated (actuated: %s)' % (
                    what, 's' if len(passive) > 1 else '',
                    ', '.join(repr(p) for p in passive), 'are' if len(passive) > 1 else 'is',
                    ', '.join(self.actuated_joint_names) or 'none'))

    def _joint_values(self, values, base, what):
        """``base`` (n,) with entries replaced from a dict {joint: value} or a full array."""
        out = np.array(base, dtype=float)
        if isinstance(values, dict):
            names = list(values)
            self._check_joint_names(names, what)
            vals = []
            for name in names:
                try:
                    vals.append(float(values[name]))
                except (TypeError, ValueError):
                    raise ValueError('%s: value for joint %r is not a number: %r'
                                     % (what, name, values[name])) from None
            vals = np.array(vals)
            idx = [self._joint_index[n] for n in names]
        else:
            vals = _finite_vector(values, len(self.joint_names), what)
            names, idx = self.joint_names, list(range(len(self.joint_names)))
        bad = [n for n, v in zip(names, vals) if not math.isfinite(v)]
        if bad:
            raise ValueError('%s: non-finite value for joint%s %s' % (
                what, 's' if len(bad) > 1 else '', ', '.join(repr(b) for b in bad)))
        out[idx] = vals
        return out

    def _interfaces(self, spec):
        """The validated ``command_interfaces`` as {joint: tuple of interfaces} over the
        actuated joints (an empty tuple: the joint takes no command)."""
        nd = self.system.nQd
        if spec is None:
            return default_command_interfaces(self.system, self.effort_limits)
        out = {j: () for j in self.actuated_joint_names}
        if not isinstance(spec, dict):
            raise ValueError('command_interfaces: expected a dict {joint: interfaces}, got %r'
                             % (spec,))
        self._check_joint_names(list(spec), 'command_interfaces', actuated=True)
        for j, names in spec.items():
            names = (names,) if isinstance(names, str) else tuple(names)
            bad = [n for n in names if n not in COMMAND_INTERFACES]
            if bad:
                raise ValueError('command_interfaces: joint %r: unknown interface %r '
                                 '(interfaces: %s)' % (j, bad[0], ', '.join(COMMAND_INTERFACES)))
            c = self._joint_index[j]
            if names and self._joint_limit[c] == 0:
                raise ValueError('command_interfaces: joint %r has effort limit 0: it cannot '
                                 'take any command' % j)
            if c >= nd and set(names) - {'effort'}:
                raise ValueError('command_interfaces: joint %r is a kinematic config: it '
                                 'has no position or velocity drive' % j)
            out[j] = tuple(n for n in COMMAND_INTERFACES if n in names)
        return out

    def _command_bounds(self, spec):
        """{interface: (lower (nQ,), upper (nQ,))} from ``command_bounds``; position bounds
        include the URDF position limits."""
        nq = self.system.nQ
        out = {n: (np.full(nq, -np.inf), np.full(nq, np.inf)) for n in COMMAND_INTERFACES}
        if self.robot is not None:
            lower, upper = self.robot.position_limits
            out['position'][0][:], out['position'][1][:] = lower, upper
        if spec is None:
            return out
        if not isinstance(spec, dict):
            raise ValueError('command_bounds: expected a dict {joint: {interface: (min, max)}}'
                             ', got %r' % (spec,))
        self._check_joint_names(list(spec), 'command_bounds', actuated=True)
        for j, per in spec.items():
            c = self._joint_index[j]
            if not isinstance(per, dict):
                raise ValueError('command_bounds: joint %r: expected {interface: (min, max)},'
                                 ' got %r' % (j, per))
            for name, pair in per.items():
                if name not in self.command_interfaces[j]:
                    raise ValueError('command_bounds: joint %r has no %r interface (it has: '
                                     '%s)' % (j, name, ', '.join(self.command_interfaces[j])
                                              or 'none'))
                try:
                    lo, hi = (float(x) for x in pair)
                except (TypeError, ValueError):
                    raise ValueError('command_bounds: joint %r, %s: expected (min, max), got '
                                     '%r' % (j, name, pair)) from None
                if math.isnan(lo) or math.isnan(hi) or lo > hi:
                    raise ValueError('command_bounds: joint %r, %s: needs min <= max, got '
                                     '(%r, %r)' % (j, name, lo, hi))
                out[name][0][c] = max(out[name][0][c], lo)
                out[name][1][c] = min(out[name][1][c], hi)
        return out

    def _check_constraints(self, q):
        if not self.system.nc:
            return
        data = self.system.model.create_data()
        data.set(q, np.zeros(self.system.nQ))
        with self.system.evaluate_at(data):
            values = dynamics.constraint_values(self.system)
        for con, h in zip(self.system.constraints, values):
            if abs(h) > max(con.tolerance, 1e-9):
                raise ValueError('initial_positions violate constraint %r (h = %g): '
                                 'set the constrained joints consistently'
                                 % (con.name, h))

    # ------------------------------------------------------------------ time and state
    @property
    def t(self):
        """Current simulation time [s]."""
        return self.mvi.t2

    @property
    def ticks(self):
        """Ticks done since construction (reset does not rewind time)."""
        return self._ticks

    def tick_time(self, k):
        """Simulation time [s] after ``k`` ticks (exact multiple of dt, no drift)."""
        return self.t0 + k * self.dt

    def reset(self, keep_time=True):
        """Back to the initial state (positions, velocities) with all commands cleared.

        Simulation time keeps running (``keep_time``, the default) so /clock and message
        stamps stay monotonic; ``keep_time=False`` also rewinds time to ``t0``.
        """
        if not keep_time:
            self._ticks = 0
        t = self.tick_time(self._ticks)
        self.mvi.initialize_from_state(t, self._q0, self._p0)
        self._k_hold = self._q0[self.system.nQd:].copy()
        self.clear_commands()
        self._applied = np.zeros(self.system.nu)
        self._last = TickResult(True, 0, 0)
        self.last_error = None
        self._state_cache = None

    def pause(self):
        self.paused = True

    def unpause(self):
        self.paused = False

    # ------------------------------------------------------------------ commands
    def clear_commands(self):
        """Forget every command: all joints back on their effort interface with zero
        effort, every drive off."""
        nu, nq = self.system.nu, self.system.nQ
        self._cmd = np.zeros(nu)
        self._cmd_time = np.full(nu, -np.inf)
        self._u_cache = None
        self._mode = np.zeros(nq, dtype=int)          # _EFFORT, _POSITION or _VELOCITY
        self._q_ref = np.zeros(nq)                    # position target [rad or m]
        self._v_ref = np.zeros(nq)                    # velocity target [rad/s or m/s]
        self._ff = np.zeros(nq)                       # effort feed-forward [N m or N]
        self._drive_time = np.full(nq, -np.inf)       # time of the last drive command
        self._vel_q = np.zeros(nq)   # a velocity drive's position reference at self.t
        if self._drives is not None:
            self._drives_off()

    def _drives_off(self):
        nd = self.system.nQd
        zero = np.zeros(nd)
        self._drives.set_drives(zero, zero, zero, zero, zero, zero, np.full(nd, np.inf))
        self._drives_on = False
        self._drive_dirty = True

    def _command_values(self, commands, values, what):
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
        self._check_joint_names(names, 'command', actuated=True)
        return names, self._finite_values(names, vals, what)

    @staticmethod
    def _finite_values(names, vals, what):
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
        return arr

    def _check_interface(self, names, interface):
        """ValueError unless every joint in ``names`` offers ``interface``."""
        if interface not in COMMAND_INTERFACES:
            raise ValueError('command: unknown interface %r (interfaces: %s)'
                             % (interface, ', '.join(COMMAND_INTERFACES)))
        for n in names:
            have = self.command_interfaces[n]
            if interface in have:
                continue
            if self._joint_limit[self._joint_index[n]] == 0:
                if interface == 'effort':
                    continue        # accepted and saturated to 0, as effort commands were
                                    # always treated (a passive joint's torque is 0)
                raise ValueError('command: joint %r has effort limit 0: it cannot take any '
                                 'command' % n)
            raise ValueError('command: joint %r has no %s interface (it has: %s)'
                             % (n, interface, ', '.join(have) or 'none'))

    def _clip(self, interface, idx, values):
        lower, upper = self._bounds[interface]
        return np.minimum(np.maximum(values, lower[idx]), upper[idx])

    def set_commands(self, commands, values=None, t=None, interface='effort'):
        """Command one interface of some joints by name (forward_command_controller's
        ``commands``): efforts [N m or N], positions [rad or m] or velocities [rad/s or
        m/s] as ``interface`` says.

        ``commands``: dict {joint: value}, or a list of joint names with ``values`` (same
        length).  The named joints switch to ``interface`` (a joint's active interface is
        that of its last command); joints not named keep theirs and their last command.  A
        position target is the drive's q_ref (velocity and effort feed-forward zero), a
        velocity target its v_ref (docs/command-interfaces.md); values beyond the joint's
        position limits or ``command_bounds`` are clipped to them.  All-or-nothing: on a
        non-finite value, a length mismatch, an unknown, mimic or unactuated joint, or a
        joint without that interface (effort limit 0: no interface at all) the previous
        commands are kept and ValueError names the culprit.  ``t``: command time [s] for
        the timeout (default: the current simulation time).
        """
        if interface not in COMMAND_INTERFACES:
            raise ValueError('set_commands: unknown interface %r (interfaces: %s)'
                             % (interface, ', '.join(COMMAND_INTERFACES)))
        names, arr = self._command_values(commands, values, interface)
        self._check_interface(names, interface)
        if interface == 'effort':
            self._effort_command(names, arr, t)
        elif interface == 'position':
            self._drive_command(names, _POSITION, arr, None, None, t)
        else:
            self._drive_command(names, _VELOCITY, None, arr, None, t)

    def set_joint_targets(self, names, positions=None, velocities=None, efforts=None,
                          t=None):
        """Command a full target set per joint (a ``sensor_msgs/JointState`` command as
        topic_based_ros2_control sends it, or a trajectory point).

        ``names`` (n,); ``positions``, ``velocities``, ``efforts``: (n,) or None.  The
        interface follows what is given: with positions, the position interface (q_ref =
        positions, v_ref = velocities, feed-forward = efforts, absent ones zero); without
        positions but with velocities, the velocity interface (v_ref, feed-forward =
        efforts); with efforts only, the effort interface.  Clipping, validation and the
        all-or-nothing rule as :meth:`set_commands`.
        """
        names = list(names)
        if positions is None and velocities is None and efforts is None:
            raise ValueError('set_joint_targets: give positions, velocities or efforts')
        self._check_joint_names(names, 'command', actuated=True)
        q = None if positions is None else self._finite_values(names, positions, 'position')
        v = None if velocities is None else self._finite_values(names, velocities,
                                                                'velocity')
        f = None if efforts is None else self._finite_values(names, efforts, 'effort')
        if q is not None:
            self._check_interface(names, 'position')
            self._drive_command(names, _POSITION, q, v, f, t)
        elif v is not None:
            self._check_interface(names, 'velocity')
            self._drive_command(names, _VELOCITY, None, v, f, t)
        else:
            self._check_interface(names, 'effort')
            self._effort_command(names, f, t)

    def _effort_command(self, names, arr, t):
        idx = np.array([self._joint_index[n] for n in names], dtype=int)
        self._mode[idx] = _EFFORT
        self._apply(np.array([self._joint_input[n] for n in names], dtype=int),
                    self._clip('effort', idx, arr), t)

    def _drive_command(self, names, mode, q, v, f, t):
        """Switch ``names`` to the position or velocity drive with targets q, v and
        feed-forward f ((n,) or None: zero); the joints' effort commands are dropped."""
        idx = np.array([self._joint_index[n] for n in names], dtype=int)
        zero = np.zeros(idx.size)
        if mode == _VELOCITY:
            # a velocity drive follows a position reference that its velocity target
            # integrates; it starts where the joint is
            entering = idx[self._mode[idx] != _VELOCITY]
            self._vel_q[entering] = self.mvi.q2[entering]
        else:
            self._q_ref[idx] = self._clip('position', idx, q)
        self._v_ref[idx] = zero if v is None else self._clip('velocity', idx, v)
        self._ff[idx] = zero if f is None else self._clip('effort', idx, f)
        self._mode[idx] = mode
        self._drive_time[idx] = self.t if t is None else float(t)
        self._drive_dirty = True
        inputs = np.array([self._joint_input[n] for n in names], dtype=int)
        self._cmd[inputs] = 0.0
        self._cmd_time[inputs] = self._drive_time[idx]
        self._u_cache = None

    def set_command_vector(self, values, t=None):
        """Set the efforts of :attr:`command_joints` in that order (a (len,) vector).

        Same validation and all-or-nothing rule as :meth:`set_commands` (effort
        interface).
        """
        arr = self._effort_vector(values, self.command_joints, 'joint')
        self._check_interface(self.command_joints, 'effort')
        self._effort_command(self.command_joints, arr, t)

    def set_input_commands(self, values, t=None):
        """Set the raw command of every input of the system, (nu,) in input order
        (``system.inputs``; inputs that are not ConfigForce joints included): the closed
        loop's full effort vector.  Every joint switches to effort; saturation, timeout and
        the all-or-nothing rule as for :meth:`set_commands` (no interface check: a raw
        input vector bypasses the joints' interface selection)."""
        names = [i.name for i in self.system.inputs]
        arr = self._effort_vector(values, names, 'input')
        self._mode[:] = _EFFORT
        self._apply(np.arange(len(names)), arr, t)

    @staticmethod
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

    def _apply(self, idx, arr, t):
        self._cmd[idx] = arr
        self._cmd_time[idx] = self.t if t is None else float(t)
        self._u_cache = None

    def commanded(self):
        """Raw (unsaturated) last command per input (nu,)."""
        return self._cmd.copy()

    def effective_command(self, t=None):
        """Inputs (nu,) applied at time t: saturated at the effort limits and scaled down to
        zero once a command is older than ``command_timeout`` (linear ramp over
        ``command_decay``)."""
        return self._effective(self.t if t is None else float(t)).copy()

    def _effective(self, t):
        """:meth:`effective_command` at ``t``, shared (not to be modified): the inputs stay
        what they are until a command changes or one crosses its timeout, so a tick usually
        reuses the last ones instead of recomputing them."""
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
        """{joint: the interface of its last command} for the joints that take commands
        (``'effort'`` until a joint is commanded otherwise, and after :meth:`reset`)."""
        return {j: COMMAND_INTERFACES[self._mode[self._joint_index[j]]]
                for j, have in self.command_interfaces.items() if have}

    def set_drive_gains(self, gains):
        """Set drive gains ``{joint: (kp, kd)}`` [N m/rad, N m s/rad or N/m, N s/m], both
        finite and >= 0, for joints with a position or velocity interface; the others keep
        theirs.  All-or-nothing (ValueError naming the joint)."""
        if not isinstance(gains, dict):
            raise ValueError('drive_gains: expected a dict {joint: (kp, kd)}, got %r'
                             % (gains,))
        self._check_joint_names(list(gains), 'drive_gains', actuated=True)
        new = []
        for j, pair in gains.items():
            if not set(self.command_interfaces[j]) & {'position', 'velocity'}:
                raise ValueError('drive_gains: joint %r has no position or velocity '
                                 'interface (it has: %s)'
                                 % (j, ', '.join(self.command_interfaces[j]) or 'none'))
            try:
                kp, kd = (float(x) for x in pair)
            except (TypeError, ValueError):
                raise ValueError('drive_gains: joint %r: expected (kp, kd), got %r'
                                 % (j, pair)) from None
            if not (math.isfinite(kp) and math.isfinite(kd) and kp >= 0 and kd >= 0):
                raise ValueError('drive_gains: joint %r: kp and kd must be finite and >= 0, '
                                 'got (%r, %r)' % (j, kp, kd))
            new.append((self._joint_index[j], kp, kd))
        for c, kp, kd in new:
            self._kp[c], self._kd[c] = kp, kd
        self._drive_dirty = True

    def drive_gains(self):
        """{joint: (kp, kd)} of the joints with a position or velocity interface."""
        return {j: (float(self._kp[self._joint_index[j]]),
                    float(self._kd[self._joint_index[j]]))
                for j, have in self.command_interfaces.items()
                if set(have) & {'position', 'velocity'}}

    def timed_out(self, t=None):
        """Names of actuated joints whose command has timed out (and is decaying or zero)."""
        if self.command_timeout <= 0:
            return []
        t = self.t if t is None else float(t)
        out = []
        for j in self.actuated_joint_names:
            i = self._joint_input[j]
            if np.isfinite(self._cmd_time[i]) and \
                    t - self._cmd_time[i] > self.command_timeout + 1e-12:
                out.append(j)
        return out

    # ------------------------------------------------------------------ ticking
    def _vi_substeps(self, t_start, t_end, n, u, k):
        """``n`` VI steps (substeps) from the current state (at t_start) to t_end; returns
        the Newton iterations."""
        iterations = 0
        h = (t_end - t_start) / n
        driving = self._driving
        t1 = t_start
        for i in range(1, n + 1):
            t2 = t_end if i == n else t_start + i * h
            if driving:
                self._set_drives(t_start, 0.5 * (t1 + t2))
            iterations += self.mvi.step(t2, u, k, max_iterations=self.max_iterations)
            t1 = t2
        # ndarray.sum, not np.sum: the wrapper's overhead is most of a 7-joint check
        if not math.isfinite(float(self.mvi.q2.sum()) + float(self.mvi.p2.sum())):
            raise ConvergenceError('the step produced non-finite values')
        return iterations

    def tick(self):
        """Advance one tick (dt) with the current effective command; returns TickResult.

        A failed VI step is retried from the tick's start with 2x, 4x, ... substeps
        (``max_refinements`` times).  If every try fails, the configuration and momentum are
        held, time still advances one tick, ``last_error`` is set and ``ok`` is False.
        Never produces NaN.
        """
        mvi = self.mvi
        t_start = mvi.t2
        t_end = self.tick_time(self._ticks + 1)
        u = self._effective(t_start)
        k = self._k_hold
        if self._drives is not None:
            self._driving = bool(self._mode.any())
            if not self._driving and self._drives_on:
                self._drives_off()
        q_start, p_start = mvi.q2, mvi.p2
        error = None
        for level in range(self.max_refinements + 1):
            n = self.substeps * 2 ** level
            try:
                iterations = self._vi_substeps(t_start, t_end, n, u, k)
            except ConvergenceError as exc:
                error = str(exc)
                # restart exactly where the tick began (the VI state is (t, q, p))
                mvi.initialize_from_state(t_start, q_start, p_start)
                continue
            result = TickResult(True, iterations, n, level, None)
            if level:
                self.retries += 1
            self.last_error = None
            break
        else:
            mvi.initialize_from_state(t_end, q_start, p_start)
            self.failures += 1
            self.last_error = ('tick to t=%.6f s failed with %d..%d substeps; state held: %s'
                               % (t_end, self.substeps, n, error))
            result = TickResult(False, 0, n, self.max_refinements, self.last_error)
        self._ticks += 1
        self._applied = u if result.ok else np.zeros_like(u)
        if self._driving and result.ok:
            self._after_driven_tick(t_start, t_end)
        self._last = result
        self._state_cache = None
        return result

    def _set_drives(self, t_start, t_mid):
        """The drive table for a VI step with midpoint time ``t_mid`` of the tick that
        starts at ``t_start``: position joints aim at q_ref, velocity joints at their
        reference position advanced by v_ref to ``t_mid``; feed-forwards (v_ref, effort)
        scaled by the timeout."""
        nd = self.system.nQd
        mode = self._mode[:nd]
        if not (self._drive_dirty or self.command_timeout > 0 or (mode == _VELOCITY).any()):
            return                  # the table in place is still this step's
        self._drive_dirty = False
        v, f = self._v_ref[:nd], self._ff[:nd]
        if self.command_timeout > 0:
            scale = self._timeout_scale(t_start, self._drive_time[:nd])
            v, f = v * scale, f * scale
        lower, upper = self._bounds['position']
        position = np.where(mode == _VELOCITY,
                            np.minimum(np.maximum(self._vel_q[:nd] + v * (t_mid - t_start),
                                                  lower[:nd]), upper[:nd]),
                            self._q_ref[:nd])
        self._drives.set_drives(mode != _EFFORT, self._kp[:nd], self._kd[:nd], position, v,
                                f, self._joint_limit[:nd])
        self._drives_on = True

    def _after_driven_tick(self, t_start, t_end):
        """After a tick with drives: the drive torques become the applied efforts, and the
        velocity drives' position references advance to t_end (within the position limits
        and within effort limit / kp of the joint, so a blocked joint does not wind up a
        reference it cannot follow)."""
        mvi, nd = self.mvi, self.system.nQd
        q1, q2, dt = mvi.q1, mvi.q2, mvi.t2 - mvi.t1
        tau = self._drives.torque(0.5 * (q1 + q2), (q2 - q1) / dt)
        mode = self._mode
        driven = mode[self._actuated_configs] != _EFFORT
        applied = self._applied.copy()
        applied[self._actuated_inputs[driven]] = tau[self._actuated_configs[driven]]
        self._applied = applied
        velocity = np.nonzero(mode[:nd] == _VELOCITY)[0]
        if velocity.size:
            v = self._v_ref[velocity]
            if self.command_timeout > 0:
                v = v * self._timeout_scale(t_start, self._drive_time[velocity])
            ref = self._vel_q[velocity] + v * (t_end - t_start)
            with np.errstate(divide='ignore', invalid='ignore'):
                slack = np.where(self._kp[velocity] > 0,
                                 self._joint_limit[velocity] / self._kp[velocity], np.inf)
            ref = np.minimum(np.maximum(ref, q2[velocity] - slack), q2[velocity] + slack)
            self._vel_q[velocity] = self._clip('position', velocity, ref)

    def step(self, n=1):
        """``n`` ticks (whether paused or not; what the node's ``~/step`` service does);
        returns the list of TickResults."""
        if int(n) != n or n < 0:
            raise ValueError('step: n must be an integer >= 0, got %r' % (n,))
        return [self.tick() for _ in range(int(n))]

    # ------------------------------------------------------------------ outputs
    def _set_output_state(self):
        """Put the output Data at (q2, v2, applied inputs, t2) and return (q2, v2).

        v2 = M(q2)^-1 p2 for the dynamic configs (the Legendre transform of the VI
        momentum), the prescribed rate for the kinematic ones."""
        mvi, out = self.mvi, self._out
        nd = self._model.nd
        q = mvi.q2
        v = np.zeros(self._model.nq)
        out.set(q, v)
        v[:nd] = dynamics.velocity_from_momentum(self._model, out, mvi.p2)
        v2 = mvi.v2
        if v2 is not None:
            v[nd:] = v2
        out.set(q, v, self._applied, mvi.t2)
        return q, v

    def velocities(self):
        """Joint velocities (nQ,) = M(q2)^-1 p2 (dynamic), prescribed rate (kinematic)."""
        return self._set_output_state()[1]

    def state(self):
        """The :class:`SimState` at the current time (cached until the next tick/reset)."""
        if self._state_cache is None:
            q, v = self._set_output_state()
            efforts = config_efforts(self.system, self._applied, self._input_config)
            self._state_cache = SimState(self.t, list(self.joint_names), q, v, efforts,
                                         functools.partial(self._energy_at, q, v),
                                         self._last.iterations, self._last.ok,
                                         self._last.error)
            if self.mimic_joint_names:
                theta, dtheta = self._model.joint_positions(q, v)
                nq = self._model.nq
                self._state_cache.mimic_names = list(self.mimic_joint_names)
                self._state_cache.mimic_positions = theta[nq:].copy()
                self._state_cache.mimic_velocities = dtheta[nq:].copy()
        return self._state_cache

    def _energy_at(self, q, v):
        """T + V [J] at configuration q and velocity v (nQ,) (a Data of its own: the output
        Data may have moved on by the time a state's energy is asked for)."""
        if self._energy_data is None:
            self._energy_data = self._model.create_data()
        self._energy_data.set(q, v)
        with self.system.evaluate_at(self._energy_data):
            return self.system.total_energy()

    def applied_inputs(self):
        """Inputs (nu,) applied over the last tick (after saturation and timeout)."""
        return self._applied.copy()

    @property
    def last_result(self):
        return self._last

    # ------------------------------------------------------------------ link transforms
    def _joint_links(self, moving):
        """The moving (or fixed) URDF joints' transforms: ([(parent frame name, child frame
        name)], parent frame indices (k,), child frame indices (k,)); one per link pair (a
        planar or floating joint's chain of configs gives one transform); built once."""
        cache = self._joint_links_cache
        if moving in cache:
            return cache[moving]
        robot = self.robot
        names = (robot.joint_names + robot.mimic_joint_names if moving
                 else robot.fixed_joint_names)
        frames, ip, ic = [], [], []
        seen = set()
        for name in names:
            j = robot.joint(name)
            if (j.parent, j.child) in seen:
                continue
            seen.add((j.parent, j.child))
            parent, child = robot.link_frame(j.parent), robot.link_frame(j.child)
            frames.append((parent.name, child.name))
            ip.append(parent.index)
            ic.append(child.index)
        cache[moving] = frames, np.array(ip, dtype=int), np.array(ic, dtype=int)
        return cache[moving]

    def _transforms(self, moving, data=None):
        if self.robot is None:
            return []
        frames, ip, ic = self._joint_links(moving)
        if not frames:
            return []
        R, P, _ = dynamics.kinematics(self._model, self._out if data is None else data)
        # child pose in the parent frame, all joints at once: R_p^T R_c, R_p^T (P_c - P_p)
        g = np.zeros((len(frames), 4, 4))
        g[:, :3, :3] = np.einsum('kji,kjl->kil', R[ip], R[ic])
        g[:, :3, 3] = np.einsum('kji,kj->ki', R[ip], P[ic] - P[ip])
        g[:, 3, 3] = 1.0
        return [(pname, cname, g[k]) for k, (pname, cname) in enumerate(frames)]

    def link_transforms(self):
        """``[(parent frame, child frame, (4, 4) pose of child in parent)]`` for every moving
        URDF joint at the current configuration (frame names are the prefixed link names).
        Empty for systems not imported from a URDF."""
        if self._state_cache is None:       # else state() already put the Data at q2
            self._set_output_state()
        return self._transforms(True)

    def link_transforms_at(self, positions):
        """:meth:`link_transforms` at the configuration ``positions`` (nQ,) [rad or m] in
        config order (:attr:`joint_names`) instead of the simulated state, which is not
        touched: how a recorded trajectory is drawn (``ros_vi.recording.mcap``)."""
        q = _finite_vector(positions, self.system.nQ, 'link_transforms_at: positions')
        if self._pose_data is None:
            self._pose_data = self._model.create_data()
        self._pose_data.set(q, np.zeros(self.system.nQ))
        return self._transforms(True, self._pose_data)

    def _compute_static_transforms(self):
        self._out.set(self._q0, np.zeros(self.system.nQ))
        return self._transforms(False)

    def static_transforms(self):
        """Same as :meth:`link_transforms` for the fixed joints (constant)."""
        return [(p, c, g.copy()) for p, c, g in self._static]

    def link_names(self):
        """Link frame names (prefixed) for tf, or [] for non-URDF systems."""
        if self.robot is None:
            return []
        return [self.robot.link_frame(n).name for n in self.robot.link_names]


# ---------------------------------------------------------------------- the closed loop
def default_command_interfaces(system, effort_limits=None):
    """{joint: tuple of interfaces} a :class:`Simulation` of ``system`` gives its actuated
    joints when not told otherwise: ``effort``, ``position`` and ``velocity`` for a dynamic
    config, ``effort`` for a kinematic one, none for a joint whose effort limit is 0 (a
    passive joint).  ``effort_limits`` (nu,): default, the URDF ``<limit effort>``."""
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


def simulate(controller, plant, duration, q0, v0=None, dt=None, effort_limits=None, t0=0.0,
             observer=None, **options):
    """Closed loop of ``controller`` and a :class:`Simulation` of ``plant``, in one process.

    The one closed loop of ros_vi (also ``ros_vi.control.simulate``, and ``ros-vi
    simulate``): each tick k the simulation's published state -- positions q_k and velocities
    v_k = M(q_k)^-1 p_k -- goes to ``controller.compute``, whose efforts are commanded,
    saturated at the effort limits and held over the tick to (t_{k+1}, q_{k+1}, p_{k+1}).
    The simulator node in lockstep with a controller node runs the same ticks, so their
    trajectories agree to rounding.

    Parameters
    ----------
    controller : Controller (its own System instance, not ``plant``), or None for a free
        run (no commands; ``dt`` required)
    plant : System with the same configs (in the same order) and the controller's inputs
    duration : float, simulated time [s] (rounded to whole ticks)
    q0, v0 : initial positions / velocities (nQ,) (v0 default zero)
    dt : tick [s]; default ``controller.dt``
    effort_limits : (m,) plant saturation for the controller's inputs; default
        ``controller.u_max``
    t0 : initial time [s]
    observer : callable ``observer(sim, state)``, optional
        Called with the :class:`Simulation` and its :class:`SimState` at every sample (t0,
        then after each tick): to record, draw or report progress.
    options : further :class:`Simulation` keywords (``substeps``, ``max_subdivisions``, ...)

    Returns a :class:`ros_vi.control.ClosedLoopResult`.  A tick that fails even after the
    simulation's refinements raises ConvergenceError naming the time; its ``result``
    attribute holds the ClosedLoopResult up to the last good sample.
    """
    if controller is not None and plant is controller.system:
        raise ValueError('give the plant its own System: the controller uses its system as '
                         'scratch space')
    names = [c.name for c in plant.configs]
    if controller is None:
        if dt is None:
            raise ValueError('simulate without a controller needs dt')
        input_names, u_max = [], np.zeros(0)
    else:
        if names != controller.joint_names:
            raise ValueError('plant configs %s differ from the controller joints %s'
                             % (names, controller.joint_names))
        input_names, u_max = list(controller.input_names), controller.u_max
    dt = controller.dt if dt is None else float(dt)
    ticks = int(round(duration / dt))
    idx = np.array([plant.get_input(n).index for n in input_names], dtype=int)
    limits = default_effort_limits(plant) if controller is None else np.full(plant.nu, np.inf)
    if controller is not None:
        limits[idx] = u_max if effort_limits is None else np.broadcast_to(
            np.asarray(effort_limits, dtype=float), u_max.shape)
    nq, m = plant.nQ, len(idx)
    sim = Simulation(plant, dt, effort_limits=limits, initial_positions=q0,
                     initial_velocities=np.zeros(nq) if v0 is None else v0, t0=t0, **options)

    T = np.zeros(ticks + 1)
    Q = np.zeros((ticks + 1, nq))
    P = np.zeros((ticks + 1, plant.nQd))
    V = np.zeros((ticks + 1, nq))
    E = np.zeros(ticks + 1)
    U = np.zeros((ticks, m))
    err, cost, modes = np.full(ticks, math.nan), np.full(ticks, math.nan), []
    iterations = np.zeros(ticks, dtype=int)
    command = np.zeros(plant.nu)
    step_time = 0.0
    if controller is not None:
        controller.reset()

    def result(n):
        """The first n ticks (n + 1 samples)."""
        return ClosedLoopResult(T[:n + 1], Q[:n + 1], P[:n + 1], V[:n + 1], U[:n], E[:n + 1],
                                err[:n], cost[:n], modes[:n], list(names), input_names,
                                angle_mask(plant), iterations[:n], step_time)

    for k in range(ticks + 1):
        state = sim.state()
        T[k], Q[k], P[k], V[k], E[k] = (state.t, state.positions, sim.mvi.p2,
                                        state.velocities, state.energy)
        if observer is not None:
            observer(sim, state)
        if k == ticks:
            break
        if controller is not None:
            out = controller.compute(state.positions, state.velocities)
            command[idx] = out.u
            sim.set_input_commands(command)
            err[k], cost[k] = out.energy_error, out.cost
            modes.append(out.mode)
        else:
            modes.append('none')
        start = time.perf_counter()
        tick = sim.tick()
        step_time += time.perf_counter() - start
        if not tick.ok:
            failure = ConvergenceError('tick %d (t = %.6g s -> %.6g s) failed: %s'
                                       % (k, state.t, state.t + dt, tick.error))
            failure.result = result(k)
            raise failure
        U[k] = sim.applied_inputs()[idx]
        iterations[k] = tick.iterations
    return result(ticks)
