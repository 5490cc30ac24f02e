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
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .control.base import actuated_inputs, angle_mask, default_effort_limits
from .control.closed_loop import ClosedLoopResult
from .integrators import ConvergenceError, MidpointVI
from .mechanics import dynamics
from .mechanics.inputs import config_efforts, input_configs


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
    energy: float
    iterations: int
    ok: bool = True
    error: str = None
    extra: dict = field(default_factory=dict)
    mimic_names: list = field(default_factory=list)
    mimic_positions: np.ndarray = field(default_factory=lambda: np.zeros(0))
    mimic_velocities: np.ndarray = field(default_factory=lambda: np.zeros(0))


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
    """Fixed-tick simulation of ``system`` with joint effort commands.

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
                 tolerance=1e-10, t0=0.0, max_subdivisions=8):
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

        self.mvi = MidpointVI(system, tolerance=tolerance, max_subdivisions=max_subdivisions)
        self.robot = getattr(system, 'urdf', None)
        nq, nd = system.nQ, system.nQd
        self.joint_names = [c.name for c in system.configs]
        self.mimic_joint_names = [f.mimic.name for f in system.frames if f.mimic is not None]
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
        self._out.set(q0, v0)
        self._p0 = dynamics.momentum_from_velocity(self._model, self._out, v0)
        self._q0 = q0
        self._v0 = v0
        self._k_hold = q0[nd:].copy()

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
        """Forget every command (all efforts zero)."""
        nu = self.system.nu
        self._cmd = np.zeros(nu)
        self._cmd_time = np.full(nu, -np.inf)

    def set_commands(self, commands, values=None, t=None):
        """Set joint efforts by name [N m or N].

        ``commands``: dict {joint: effort}, or a list of joint names with ``values`` (same
        length).  Joints not named keep their last command.  All-or-nothing: on a non-finite
        value, a length mismatch, an unknown or unactuated joint the previous commands are
        kept and ValueError names the culprit.  ``t``: command time [s] for the timeout
        (default: the current simulation time).
        """
        if isinstance(commands, dict):
            names, vals = list(commands), list(commands.values())
        else:
            names = list(commands)
            if values is None:
                raise ValueError('set_commands: give a dict {joint: effort} or names and '
                                 'values')
            vals = list(np.asarray(values, dtype=float).reshape(-1))
            if len(vals) != len(names):
                raise ValueError('set_commands: %d joint names but %d efforts'
                                 % (len(names), len(vals)))
        self._check_joint_names(names, 'command', actuated=True)
        try:
            arr = np.array(vals, dtype=float)
        except (TypeError, ValueError):
            raise ValueError('command: efforts must be numbers, got %r' % (vals,)) from None
        bad = [n for n, v in zip(names, arr) if not math.isfinite(v)]
        if bad:
            raise ValueError('command: non-finite effort for joint%s %s' % (
                's' if len(bad) > 1 else '', ', '.join('%r (%r)' % (n, float(
                    arr[names.index(n)])) for n in bad)))
        idx = np.array([self._joint_input[n] for n in names], dtype=int)
        self._apply(idx, arr, t)

    def set_command_vector(self, values, t=None):
        """Set the efforts of :attr:`command_joints` in that order (a (len,) vector).

        Same validation and all-or-nothing rule as :meth:`set_commands`.
        """
        arr = self._effort_vector(values, self.command_joints, 'joint')
        self._apply(self._command_inputs, arr, t)

    def set_input_commands(self, values, t=None):
        """Set the raw command of every input of the system, (nu,) in input order
        (``system.inputs``; inputs that are not ConfigForce joints included).  Saturation,
        timeout and the all-or-nothing rule as for :meth:`set_commands`."""
        names = [i.name for i in self.system.inputs]
        self._apply(np.arange(len(names)), self._effort_vector(values, names, 'input'), t)

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

    def commanded(self):
        """Raw (unsaturated) last command per input (nu,)."""
        return self._cmd.copy()

    def effective_command(self, t=None):
        """Inputs (nu,) applied at time t: saturated at the effort limits and scaled down to
        zero once a command is older than ``command_timeout`` (linear ramp over
        ``command_decay``)."""
        t = self.t if t is None else float(t)
        lim = self.effort_limits
        u = np.minimum(np.maximum(self._cmd, -lim), lim)
        if self.command_timeout > 0:
            # never-commanded inputs have time -inf: over = inf -> scale 0
            over = (t - self._cmd_time) - self.command_timeout
            if self.command_decay > 0:
                scale = np.minimum(np.maximum(1.0 - over / self.command_decay, 0.0), 1.0)
            else:
                scale = over <= 1e-12
            u = u * scale
        return u

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
        for i in range(1, n + 1):
            t2 = t_end if i == n else t_start + i * h
            iterations += self.mvi.step(t2, u, k, max_iterations=self.max_iterations)
        if not math.isfinite(float(np.sum(self.mvi.q2)) + float(np.sum(self.mvi.p2))):
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
        u = self.effective_command(t_start)
        k = self._k_hold
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
            with self.system.evaluate_at(self._out):
                energy = self.system.total_energy()
            self._state_cache = SimState(self.t, list(self.joint_names), q, v, efforts,
                                         float(energy), self._last.iterations,
                                         self._last.ok, self._last.error)
            if self.mimic_joint_names:
                theta, dtheta = self._model.joint_positions(q, v)
                nq = self._model.nq
                self._state_cache.mimic_names = list(self.mimic_joint_names)
                self._state_cache.mimic_positions = theta[nq:].copy()
                self._state_cache.mimic_velocities = dtheta[nq:].copy()
        return self._state_cache

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
