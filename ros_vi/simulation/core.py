"""A ROS-free simulation core: a :class:`MidpointVI` stepped at a fixed tick with commands.

:class:`Simulation` is everything the ROS simulator node does except talking ROS: it owns a
:class:`~ros_vi.integrators.MidpointVI` for a :class:`~ros_vi.mechanics.system.System`
(usually imported from a URDF), keeps its joint commands in a
:class:`~ros_vi.simulation.commands.CommandTable` (validated, saturated at the effort limits,
timed out to zero, realised by the drives), advances time by ticks of ``dt`` seconds made of
``substeps`` VI steps (retrying with smaller substeps when the root solver fails, holding
the state and reporting the error when that fails too), and computes what the node
publishes: joint positions, velocities ``v = M(q)^-1 p_end`` (the Legendre transform of the
momentum at the tick's end, :attr:`MidpointVI.p2_end`: the VI's discrete momentum with the
end half of the step's impulse, zero at a held equilibrium; docs/architecture.md), the
efforts applied over the last tick, link transforms for tf, energy and solver iterations.

Nothing here imports rclpy; the ROS layer (``ros_vi/ros/``) converts to messages.

Units: SI, angles in radians; times in seconds of simulation time.  "Joints" are the
system's configs (for a URDF: the moving joints, named ``prefix + joint``) in config order;
the six configs of each free joint (a floating base, a loose object) are among them, but
they are chart coordinates, not joints: ``joint_states`` leaves them out
(:meth:`SimState.joint_states`, :attr:`Simulation.joint_state_names`) and publishes the
body's pose and twist instead (:attr:`SimState.bodies`, :mod:`ros_vi.simulation.bodies`).

Example
-------
>>> sim = Simulation.from_urdf_file('urdf/pendulum.urdf', rate=500.0)
>>> sim.set_commands({'theta': 1.0})          # N m on joint 'theta'
>>> result = sim.tick()                       # advance 1/500 s
>>> state = sim.state()                       # positions, velocities, efforts, energy ...
"""
import functools
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..integrators import ConvergenceError, MidpointVI
from ..mechanics import dynamics
from ..mechanics.contact import ContactSet
from ..mechanics.free import xyz_angles
from ..mechanics.inputs import config_efforts
from .bodies import FreeBodies
from .commands import (DEFAULT_DRIVE_DAMPING_RATIO, DEFAULT_DRIVE_FREQUENCY, CommandTable,
                       OptionError)
from .robot import setup_robot
from .transforms import LinkTransforms

__all__ = ['Simulation', 'SimState', 'TickResult']


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

    joint_names (n,), positions (n,) [rad or m], velocities (n,) = M(q)^-1 p_end for the
    dynamic configs (kinematic configs: their prescribed rate, zero when held),
    efforts (n,) [N m or N] generalized force applied by the commands over the last tick
    (after saturation and timeout), energy = T + V [J], iterations of the last tick.
    mimic_names (m,), mimic_positions (m,), mimic_velocities (m,): the joints that follow a
    config (mimic frames, e.g. URDF ``<mimic>`` joints): not configs, but published in
    joint states (with effort 0: they carry no actuator).
    Free joints' configs are among the configs (chart coordinates: valid with the System's
    current reference attitudes); bodies: [:class:`FreeBodyState`] of the free joints (pose
    in the joint's parent frame, twist in body axes), creation order; joint_columns: the
    indices of the configs that are joints (None: all of them), what
    :meth:`joint_states` publishes.
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
    bodies: list = field(default_factory=list)
    joint_columns: np.ndarray = None

    @property
    def energy(self):
        """T + V [J] (computed on first use: publishing joint states does not need it)."""
        if callable(self._energy):
            self._energy = float(self._energy())
        return self._energy

    def joint_states(self, mimic=True):
        """``(names, positions, velocities, efforts)`` as ``joint_states`` carries them: the
        joints in config order (free joints' configs left out: their bodies' poses are in
        :attr:`bodies`), then (``mimic``) the mimic joints with effort 0."""
        cols = self.joint_columns
        names = list(self.joint_names) if cols is None else [self.joint_names[i] for i in cols]
        arrays = [self.positions, self.velocities, self.efforts]
        if cols is not None:
            arrays = [a[cols] for a in arrays]
        if mimic and self.mimic_names:
            names += list(self.mimic_names)
            arrays = [np.concatenate([a, m]) for a, m in zip(arrays, (
                self.mimic_positions, self.mimic_velocities, np.zeros(len(self.mimic_names))))]
        return (names, *arrays)


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


def _check_count(value, what, low):
    if int(value) != value or value < low:
        raise ValueError('%s must be an integer >= %d, got %r' % (what, low, value))
    return int(value)


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
        does not name takes no command.  Default: :func:`joint_interfaces` (the URDF's
        ``<ros2_control>`` block where there is one, else every actuated joint whose effort
        limit is not zero offers all three, kinematic configs only ``'effort'``).  A joint
        with effort limit 0, an unactuated joint or a mimic joint cannot offer any.
    command_bounds : dict {joint: {interface: (min, max)}} or None
        Bounds of a joint's command interface (ros2_control's ``min``/``max`` parameters):
        commands beyond them are clipped to them [rad, m, rad/s, m/s, N m or N].
    drive_gains : dict {joint: (kp, kd)} or None
        Gains of the position and velocity drives [N m/rad, N m s/rad or N/m, N s/m];
        joints not named get ``kp = m w^2``, ``kd = 2 zeta m w`` with m their reflected
        inertia (the mass matrix diagonal at the initial configuration), w
        ``drive_frequency`` [rad/s] and zeta ``drive_damping_ratio``.
    drive_frequency, drive_damping_ratio : float
        See ``drive_gains``; defaults ``min(DEFAULT_DRIVE_FREQUENCY, 1 / h)`` with h = dt /
        substeps the VI step (300 rad/s at 300 Hz and above: a drive the step resolves), and
        :data:`DEFAULT_DRIVE_DAMPING_RATIO`.
    initial_positions, initial_velocities : dict {joint: value}, (nQ,) array, or None
        Initial state (joints not named keep the system's current q / zero velocity; an
        array is over every config, free joints' included).
    initial_body_poses : dict {body: pose} or None
        Initial pose of free bodies (``system.free_joints`` by body frame name) in their
        joint's parent frame: ``(x, y, z, roll, pitch, yaw)`` [m, rad] or a (4, 4) matrix;
        bodies not named keep the System's.  Applied after ``initial_positions``.
    initial_body_twists : dict {body: (6,)} or None
        Initial twist ``(vx, vy, vz, wx, wy, wz)`` [m/s, rad/s] of free bodies in their own
        axes (default: ``initial_velocities``, zero); the initial momentum is ``M(q) v``.
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

    Invalid options raise :class:`~ros_vi.simulation.commands.OptionError` naming the
    option (``ValueError`` for the numbers above).
    """

    def __init__(self, system, dt, substeps=1, effort_limits=None, command_timeout=0.0,
                 command_decay=0.0, command_joints=None, initial_positions=None,
                 initial_velocities=None, max_refinements=3, max_iterations=50,
                 tolerance=1e-10, t0=0.0, max_subdivisions=8, command_interfaces=None,
                 command_bounds=None, drive_gains=None,
                 drive_frequency=None,
                 drive_damping_ratio=DEFAULT_DRIVE_DAMPING_RATIO, initial_body_poses=None,
                 initial_body_twists=None):
        self.system = system
        self.dt = _check_positive(dt, 'dt')
        self.substeps = _check_count(substeps, 'substeps', 1)
        command_timeout = _check_positive(command_timeout, 'command_timeout', True)
        command_decay = _check_positive(command_decay, 'command_decay', True)
        self.max_refinements = _check_count(max_refinements, 'max_refinements', 0)
        self.max_iterations = _check_count(max_iterations, 'max_iterations', 1)
        self.t0 = float(t0)
        if drive_frequency is None:
            drive_frequency = min(DEFAULT_DRIVE_FREQUENCY, self.substeps / self.dt)
        drive_frequency = _check_positive(drive_frequency, 'drive_frequency')
        drive_damping_ratio = _check_positive(drive_damping_ratio, 'drive_damping_ratio',
                                              True)
        self.robot = getattr(system, 'urdf', None)
        self.joint_names = [c.name for c in system.configs]
        # a free joint's configs are chart coordinates: published as its body's pose and
        # twist, not as joints
        self.bodies = FreeBodies(system)
        self._joint_columns = (np.setdiff1d(np.arange(system.nQ), self.bodies.config_columns)
                               if len(self.bodies) else None)
        self.joint_state_names = (list(self.joint_names) if self._joint_columns is None else
                                  [self.joint_names[i] for i in self._joint_columns])
        self.mimic_joint_names = [f.mimic.name for f in system.frames if f.mimic is not None]

        # the command table adds the drives force when a joint needs one: before the
        # integrator exists (adding a force changes the structure)
        self.commands = CommandTable(system, effort_limits, command_joints,
                                     command_interfaces, command_bounds, command_timeout,
                                     command_decay)
        # at least one Newton update a step: at rest the root is solved to rounding, so a
        # robot held still publishes rest, not the solver's tolerance band
        self.mvi = MidpointVI(system, tolerance=tolerance, max_subdivisions=max_subdivisions,
                              min_iterations=1)

        # initial state
        nq, nd = system.nQ, system.nQd
        q0 = system.q.copy()
        v0 = np.zeros(nq)
        # a joint whose limits exclude the System's position (the URDF zero) starts on its
        # nearest bound; one named in initial_positions must be within them
        self._limits = [(system.get_config(name).index, lo, up)
                        for name, (lo, up) in self.mvi.limits.items()]
        for i, lo, up in self._limits:
            q0[i] = min(max(q0[i], lo), up)
        if initial_positions is not None:
            q0 = self.commands.joint_values(initial_positions, q0, 'initial_positions')
            self._check_limits(q0)
        if initial_velocities is not None:
            v0 = self.commands.joint_values(initial_velocities, v0, 'initial_velocities')
        self.bodies.set_initial(q0, v0, initial_body_poses, initial_body_twists)
        self._check_constraints(q0)
        self._model = system.model
        self._out = self._model.create_data()    # the published state (q2, v2, u)
        self._pose_data = None                   # link_transforms_at's own, made on first use
        self._energy_data = None                 # _energy_at's own, made on first use
        self._out.set(q0, v0)
        self._p0 = dynamics.momentum_from_velocity(self._model, self._out, v0)
        self._q0 = q0
        self._v0 = v0
        # free joints: q0's angles are relative to the reference attitudes at the start
        charts = system.free_charts
        self._attitudes0 = None if charts is None else charts.attitudes(self._model)
        self._k_hold = q0[nd:].copy()
        # default drive gains from the reflected inertia at q0 (mimic joints folded in)
        m = np.zeros(nq)
        m[:nd] = np.diag(dynamics.mass_matrix(self._model, self._out))
        self.commands.set_default_gains(m, drive_frequency, drive_damping_ratio)
        if drive_gains is not None:
            self.commands.set_drive_gains(drive_gains)

        self.paused = False
        self.last_error = None
        self.failures = 0
        self.retries = 0
        self._driving = False         # a drive was on during the current tick
        self._tf = LinkTransforms(system)
        self._contacts = ContactSet(system) if system.contacts else None
        self._out.set(q0, np.zeros(nq))
        self._static = self._tf.fixed(self._out)
        self.reset(keep_time=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_setup(cls, setup, dt, **options):
        """The simulation of a :class:`~ros_vi.simulation.RobotSetup` (a robot set up as the
        simulator node sets it up: interfaces, bounds, initial state, drive gains) with tick
        ``dt`` [s]; ``options`` are further keywords (they win over the set-up's).  The
        set-up's world (if any) is kept as ``sim.world``."""
        sim = cls(setup.system, dt, **setup.simulation_options(**options))
        sim.world = setup.world
        return sim

    @classmethod
    def from_urdf(cls, source, rate=500.0, prefix=None, gravity=(0.0, 0.0, -9.81),
                  import_options=None, **options):
        """Import a URDF string (``robot_description``) and simulate it at ``rate`` [Hz],
        set up as the simulator node sets it up (:func:`ros_vi.simulation.setup_robot`: the
        ``<ros2_control>`` block's interfaces, bounds and initial state).

        ``import_options`` go to :func:`ros_vi.urdf.import_urdf`; the other keywords to
        :class:`Simulation` (``dt`` is ``1 / rate``; they win over the set-up's).
        """
        setup = setup_robot(source, prefix=prefix or '', gravity=gravity,
                            import_options=import_options)
        return cls.from_setup(setup, 1.0 / _check_positive(rate, 'rate'), **options)

    @classmethod
    def from_world(cls, source, rate=500.0, **options):
        """Simulate a world file (path or YAML text; :mod:`ros_vi.simulation.world`): its
        robots and objects as one description, its gravity, the robots' initial joint
        positions and the initial twists of the objects and floating robots.  Keywords as
        :meth:`from_urdf`; the :class:`~ros_vi.simulation.world.World` is kept as
        ``sim.world``."""
        from .world import load_world
        world = load_world(source)
        setup = setup_robot(world.urdf(), gravity=tuple(world.gravity), where=world.where,
                            import_options=options.pop('import_options', None),
                            ground=world.contact_ground(), **world.setup_options())
        setup.world = world
        return cls.from_setup(setup, 1.0 / _check_positive(rate, 'rate'), **options)

    @classmethod
    def from_urdf_file(cls, filename, rate=500.0, prefix=None, gravity=(0.0, 0.0, -9.81),
                       import_options=None, **options):
        """Like :meth:`from_urdf` for a ``.urdf`` (or ``.xacro``) file (relative mesh paths
        against its folder)."""
        from ..urdf import load_urdf_text
        options_import = dict(import_options or {})
        options_import.setdefault('base_dir', os.path.dirname(os.path.abspath(filename)))
        setup = setup_robot(load_urdf_text(filename), prefix=prefix or '', gravity=gravity,
                            import_options=options_import)
        return cls.from_setup(setup, 1.0 / _check_positive(rate, 'rate'), **options)

    def _check_limits(self, q):
        for i, lo, up in self._limits:
            if not lo <= q[i] <= up:
                raise OptionError('initial_positions', 'joint %r at %g is outside its limits '
                                  '[%g, %g]' % (self.joint_names[i], q[i], lo, up))

    def _check_constraints(self, q):
        if not self.system.nc:
            return
        data = self.system.model.create_data()
        data.set(q, np.zeros(self.system.nQ))
        with self.system.evaluate_at(data):
            values = dynamics.constraint_values(self.system)
        for con, h in zip(self.system.constraints, values):
            if abs(h) > max(con.tolerance, 1e-9):
                raise OptionError('initial_positions', 'constraint %r is violated (h = %g): '
                                  'set the constrained joints consistently' % (con.name, h))

    # ------------------------------------------------------------------ the command table
    @property
    def command_interfaces(self):
        """{joint: tuple of the interfaces it offers} (empty: it takes no command)."""
        return self.commands.command_interfaces

    @property
    def command_joints(self):
        """Joint order of :meth:`set_command_vector`."""
        return self.commands.command_joints

    @property
    def effort_limits(self):
        """|u_i| saturation per input (nu,) [N m or N]."""
        return self.commands.effort_limits

    @property
    def actuated_joint_names(self):
        """Joints with an input (ConfigForce), in config order."""
        return self.commands.actuated_joint_names

    @property
    def command_timeout(self):
        return self.commands.command_timeout

    @property
    def command_decay(self):
        return self.commands.command_decay

    def command_bounds(self):
        """{joint: {interface: (min, max)}} in force (:meth:`CommandTable.command_bounds`)."""
        return self.commands.command_bounds()

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
        if self._attitudes0 is not None:
            self.system.free_charts.set_attitudes(self._attitudes0)
        self.mvi.initialize_from_state(t, self._q0, self._p0)
        self._p_end = self._p0.copy()      # the momentum at the state's time (published)
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
        self.commands.clear(self.mvi.q2)

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
        self.commands.set(commands, values, self._when(t), self.mvi.q2, interface)

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
        self.commands.set_targets(names, positions, velocities, efforts, self._when(t),
                                  self.mvi.q2)

    def set_command_vector(self, values, t=None):
        """Set the efforts of :attr:`command_joints` in that order (a (len,) vector).

        Same validation and all-or-nothing rule as :meth:`set_commands` (effort
        interface).
        """
        self.commands.set_vector(values, self._when(t))

    def set_input_commands(self, values, t=None):
        """Set the raw command of every input of the system, (nu,) in input order
        (``system.inputs``; inputs that are not ConfigForce joints included): the closed
        loop's full effort vector.  Every joint switches to effort; saturation, timeout and
        the all-or-nothing rule as for :meth:`set_commands` (no interface check: a raw
        input vector bypasses the joints' interface selection)."""
        self.commands.set_inputs(values, self._when(t))

    def _when(self, t):
        return self.t if t is None else float(t)

    def commanded(self):
        """Raw (unsaturated) last command per input (nu,)."""
        return self.commands.commanded()

    def effective_command(self, t=None):
        """Inputs (nu,) applied at time t: saturated at the effort limits and scaled down to
        zero once a command is older than ``command_timeout`` (linear ramp over
        ``command_decay``)."""
        return self.commands.effective(self._when(t)).copy()

    def active_interfaces(self):
        """{joint: the interface of its last command} for the joints that take commands
        (``'effort'`` until a joint is commanded otherwise, and after :meth:`reset`)."""
        return self.commands.active_interfaces()

    def set_drive_gains(self, gains):
        """Set drive gains ``{joint: (kp, kd)}`` [N m/rad, N m s/rad or N/m, N s/m], both
        finite and >= 0, for joints with a position or velocity interface; the others keep
        theirs.  All-or-nothing (ValueError naming the joint)."""
        self.commands.set_drive_gains(gains)

    def drive_gains(self):
        """{joint: (kp, kd)} of the joints with a position or velocity interface."""
        return self.commands.drive_gains()

    def timed_out(self, t=None):
        """Names of actuated joints whose command has timed out (and is decaying or zero)."""
        return self.commands.timed_out(self._when(t))

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
                self.commands.set_drives(t_start, 0.5 * (t1 + t2))
            iterations += self.mvi.step(t2, u, k, max_iterations=self.max_iterations)
            t1 = t2
        # ndarray.sum, not np.sum: the wrapper's overhead is most of a 7-joint check
        if not math.isfinite(float(self.mvi.q2.sum()) + float(self.mvi.p2.sum())):
            raise ConvergenceError('the step produced non-finite values')
        return iterations

    def _restart_at(self, t, q, p, attitudes):
        """Put the integrator at time t [s], configuration q (nQ,) and momentum p (nQd,),
        with q's free-joint angles in the charts ``attitudes`` (None: no free joints): a
        state the integrator accepted, so not checked again (a retry must not fail where
        the tick began)."""
        if attitudes is not None:
            self.system.free_charts.set_attitudes(attitudes)
        self.mvi.initialize_from_state(t, q, p, check=False)

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
        u = self.commands.effective(t_start)
        k = self._k_hold
        self._driving = self.commands.driving()
        q_start, p_start = mvi.q2, mvi.p2
        # free joints: q's angles are relative to the charts, which a failed try may have
        # moved on (each substep recentres them); a retry starts in the tick's own
        charts = self.system.free_charts
        attitudes = None if charts is None else charts.attitudes(self._model)
        error = None
        for level in range(self.max_refinements + 1):
            n = self.substeps * 2 ** level
            try:
                iterations = self._vi_substeps(t_start, t_end, n, u, k)
            except ConvergenceError as exc:
                error = str(exc)
                # restart exactly where the tick began (the VI state is (t, q, p))
                self._restart_at(t_start, q_start, p_start, attitudes)
                continue
            result = TickResult(True, iterations, n, level, None)
            if level:
                self.retries += 1
            self.last_error = None
            break
        else:
            self._restart_at(t_end, q_start, p_start, attitudes)
            self.failures += 1
            self.last_error = ('tick to t=%.6f s failed with %d..%d substeps; state held: %s'
                               % (t_end, self.substeps, n, error))
            result = TickResult(False, 0, n, self.max_refinements, self.last_error)
        self._ticks += 1
        if result.ok:
            # a held state keeps the momentum it was published with
            self._p_end = mvi.p2_end
        self._applied = u if result.ok else np.zeros_like(u)
        if self._driving and result.ok:
            self._applied = self.commands.after_driven_tick(
                mvi.q1, mvi.q2, mvi.t2 - mvi.t1, self._applied, t_start, t_end)
        self._last = result
        self._state_cache = None
        return result

    def step(self, n=1):
        """``n`` ticks (whether paused or not; what the node's ``~/step`` service does);
        returns the list of TickResults."""
        if int(n) != n or n < 0:
            raise ValueError('step: n must be an integer >= 0, got %r' % (n,))
        return [self.tick() for _ in range(int(n))]

    # ------------------------------------------------------------------ outputs
    def _set_output_state(self):
        """Put the output Data at (q2, v2, applied inputs, t2) and return (q2, v2).

        v2 = M(q2)^-1 p2_end for the dynamic configs (the Legendre transform of the momentum
        at t2 with the end half of the step's impulse, :attr:`MidpointVI.p2_end`: zero at a
        held equilibrium; 0 for a config held on a joint limit, the others from their own
        rows), the prescribed rate for the kinematic ones."""
        mvi, out = self.mvi, self._out
        nd = self._model.nd
        q = mvi.q2
        v = np.zeros(self._model.nq)
        out.set(q, v)
        v[:nd] = dynamics.velocity_from_momentum(self._model, out, self._p_end,
                                                 mvi.held_configs)
        v2 = mvi.v2
        if v2 is not None:
            v[nd:] = v2
        out.set(q, v, self._applied, mvi.t2)
        return q, v

    def output_data(self):
        """The Data of the published state (q2, v2, applied inputs, t2) (:meth:`state`
        puts it there): to evaluate the model at the published state without moving the
        System (``with system.evaluate_at(sim.output_data()): ...``).  Read only."""
        if self._state_cache is None:
            self._set_output_state()
        return self._out

    def velocities(self):
        """Joint velocities (nQ,) = M(q2)^-1 p2_end (dynamic), prescribed rate
        (kinematic)."""
        return self._set_output_state()[1]

    def state(self):
        """The :class:`SimState` at the current time (cached until the next tick/reset)."""
        if self._state_cache is None:
            q, v = self._set_output_state()
            efforts = config_efforts(self.system, self._applied, self.commands.input_configs)
            self._state_cache = SimState(self.t, list(self.joint_names), q, v, efforts,
                                         functools.partial(self._energy_at, q, v),
                                         self._last.iterations, self._last.ok,
                                         self._last.error, bodies=self.bodies.states(q, v),
                                         joint_columns=self._joint_columns)
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

    def input_forces(self):
        """Generalized force (nQ,) [N m or N] of all the inputs applied over the last tick,
        at the published state: a joint effort on its config (what ``efforts`` of
        :meth:`state` holds), and what the other inputs put on the configs, ``J(q)ᵀ w`` of a
        body wrench (a drone's rotors, a thruster), which no joint publishes.  The
        controllers' momentum rebuild (:meth:`ros_vi.control.Controller.momentum`) needs
        them all."""
        state = self.state()
        if np.all(self.commands.input_configs >= 0):
            return state.efforts.copy()          # joint efforts only: exactly the commands
        model = self.system.model
        kept = getattr(self, '_input_data', None)      # scratch Data, kept for its model
        if kept is None or kept[0] is not model:
            kept = self._input_data = (model, model.create_data())
        data = kept[1]
        forces = []
        for u in (self._applied, np.zeros_like(self._applied)):
            data.set(state.positions, state.velocities, u)
            with self.system.evaluate_at(data):
                forces.append(dynamics.applied_forces(self.system).F.copy())
        return forces[0] - forces[1]

    @property
    def last_result(self):
        return self._last

    # ------------------------------------------------------------------ free bodies
    @property
    def floating_base(self):
        """The free joint (:class:`~ros_vi.mechanics.free.FreeJoint`) whose body is the
        URDF robot's root link (``floating_base=True``), or None for a fixed robot."""
        robot = self.robot
        if robot is None:
            return None
        root = robot.link_frame(robot.root_link)
        return next((j for j in self.bodies.joints if j.body is root), None)

    def free_bodies(self):
        """{body name: :class:`FreeBodyState`} at the published state (pose in the free
        joint's parent frame, twist in the body's axes)."""
        return {b.name: b for b in self.state().bodies}

    def contact_forces(self):
        """The contacts' forces over the last VI step, at the published state: a
        :class:`~ros_vi.mechanics.contact.ContactForces` (per contact its frame, mode,
        touching point [m] and force [N], in the frame's axes; ``.wrenches()`` sums them
        per frame), or None for a system without contacts.  The force is the step's
        impulse over its duration (the last substep's, with substeps); zero after a reset
        and while a failed tick holds the state."""
        if self._contacts is None:
            return None
        mvi = self.mvi
        dt = mvi.t2 - mvi.t1
        impulses = mvi.contact_impulses if dt > 0 else np.zeros((len(self._contacts), 3))
        self._contacts.select(mvi.q1)         # the faces the step held
        return self._contacts.forces(mvi.q2, impulses, dt if dt > 0 else 1.0,
                                     mvi.contact_modes, q1=mvi.q1)

    # ------------------------------------------------------------------ link transforms
    def link_transforms(self):
        """``[(parent frame, child frame, (4, 4) pose of child in parent)]`` for every moving
        URDF joint at the current configuration (frame names are the prefixed link names).
        Empty for systems not imported from a URDF."""
        return self._tf.moving(self.output_data())

    def link_transforms_at(self, positions, body_poses=None):
        """:meth:`link_transforms` at the joint positions ``positions`` (n,) [rad or m] in
        :attr:`joint_state_names` order (all configs but free joints': a recording's
        joints) instead of the simulated state, which is not touched: how a recorded
        trajectory is drawn (``ros_vi.recording.mcap``).  ``body_poses`` {body:
        (4, 4) pose in its joint's parent frame} places free bodies (a body not named stays
        where the simulation has it; a floating base's own pose is not a link transform:
        see :attr:`SimState.bodies`)."""
        joints = _finite_vector(positions, len(self.joint_state_names),
                                'link_transforms_at: positions')
        q = self.mvi.q2.copy()
        q[self._joint_columns if self._joint_columns is not None else slice(None)] = joints
        for name, pose in (body_poses or {}).items():
            joint = self.bodies.joint(name, 'link_transforms_at: body_poses')
            g = np.asarray(pose, dtype=float)
            idx = [c.index for c in joint.configs]
            q[idx[:3]] = g[:3, 3]
            # the angles in the current chart (its inverse is exact away from b = +-pi/2)
            q[idx[3:]] = xyz_angles(np.ascontiguousarray(joint.reference_attitude.T
                                                         @ g[:3, :3]))
        if self._pose_data is None:
            self._pose_data = self._model.create_data()
        self._pose_data.set(q, np.zeros(self.system.nQ))
        return self._tf.moving(self._pose_data)

    def static_transforms(self):
        """Same as :meth:`link_transforms` for the fixed joints (constant)."""
        return [(p, c, g.copy()) for p, c, g in self._static]

    def link_names(self):
        """Link frame names (prefixed) for tf, or [] for non-URDF systems."""
        return self._tf.link_names()
