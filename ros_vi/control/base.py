"""What every controller shares: the state it sees, the inputs it drives, the model it uses.

A controller is a plain object.  :meth:`Controller.compute` takes the state a ROS node sees
on ``joint_states`` -- positions ``q`` (nQ,), velocities ``v`` (nQ,) and the efforts
applied over the last tick (nQ,), in the model's config order (``System.configs``) -- and
returns a :class:`ControlOutput`: the efforts ``u`` (m,) for the controller's inputs
(``input_names``, saturated at ``u_max``), a ``mode`` string and the energy error for
diagnostics.  The VI momentum is rebuilt from that state with the controller's own model
(:meth:`Controller.momentum`, docs/architecture.md), so a loop over topics and a loop in
one process see the same state.

The controller's ``system`` is its private scratch model: ``compute`` overwrites its state.
Give the plant (simulator) its own System instance.

Units: SI; angles in radians; efforts in N m (revolute) or N (prismatic).
"""
import abc
import math
from dataclasses import dataclass

import numpy as np

from ..mechanics import dynamics
from ..mechanics.frame import RX, RY, RZ
from ..mechanics.inputs import input_configs

#: The largest magnitude of a drive target (a position or velocity command, a trajectory's
#: positions and velocities) accepted [rad or m, rad/s or m/s]: far beyond any robot, far
#: below where a drive law (kp up to ~1e6) overflows to infinity.  Larger finite values are
#: refused, not clipped.
MAX_COMMAND = 1e9

__all__ = ['MAX_COMMAND', 'ControlOutput', 'Controller', 'angle_mask', 'wrap_angles',
           'actuated_inputs',
           'default_effort_limits']


@dataclass
class ControlOutput:
    """One control decision.

    u : (m,) efforts for ``Controller.input_names`` [N m or N], already saturated;
    mode : what produced them (e.g. ``'lqr'``, ``'swingup'``, ``'kick'``, ``'balance'``);
    energy_error : E - E_goal [J] (nan when the law has no energy goal);
    cost : LQR cost-to-go (x - xbar)^T P (x - xbar) of the state (nan when not computed).
    """
    u: np.ndarray
    mode: str
    energy_error: float = math.nan
    cost: float = math.nan


def angle_mask(system):
    """Bool (nQ,): True for configs that are rotation angles (frames rx/ry/rz; for URDF
    models these are the revolute and continuous joints).  Only these are wrapped."""
    return np.array([c.frame is not None and c.frame.transform_type in (RX, RY, RZ)
                     for c in system.configs], dtype=bool)


def wrap_angles(dq, mask):
    """``dq`` with the entries selected by ``mask`` wrapped into [-pi, pi)."""
    dq = np.array(dq, dtype=float)
    dq[mask] = (dq[mask] + math.pi) % (2.0 * math.pi) - math.pi
    return dq


def default_effort_limits(system):
    """(nu,) |u| limit of every input [N m or N]: the URDF ``<limit effort>`` of the
    input's joint for URDF models, ``inf`` for every other input."""
    limits = np.full(system.nu, np.inf)
    robot = getattr(system, 'urdf', None)
    if robot is not None:
        for name, lim in zip(robot.input_names, robot.input_effort_limits):
            limits[system.get_input(name).index] = lim
    return limits


def actuated_inputs(system, limits=None):
    """(names, limits) of the inputs that are driven by default, in input order.

    The passive-joint rule, for the simulator and the controllers alike: an input whose
    effort limit is 0 (URDF ``<limit effort="0">``) belongs to a passive joint and is not
    driven.  ``limits`` (nu,): the effort limits in force, default
    :func:`default_effort_limits`.
    """
    limits = default_effort_limits(system) if limits is None else \
        np.asarray(limits, dtype=float).reshape(-1)
    keep = [i for i in range(system.nu) if limits[i] != 0]
    return [system.inputs[i].name for i in keep], limits[keep].copy()


class Controller(abc.ABC):
    """Base class: validated state in, saturated efforts out.

    Parameters
    ----------
    system : System
        The controller's model (private scratch copy; no kinematic configs).
    dt : float
        Design / control period [s]: the controller is meant to be called every ``dt``.
    inputs : list of str, optional
        Input names it drives, in the order of ``u``; default :func:`actuated_inputs`.
    u_max : float or (m,), optional
        |u_i| limits [N m or N]; default the URDF effort limits (``inf`` otherwise).

    Subclasses implement ``_law(q, v) -> ControlOutput`` (u not yet saturated) and may
    override :meth:`reset`.

    Free joints (a floating base): their angle configs are coordinates on a chart centred
    on a reference attitude (:mod:`ros_vi.mechanics.free`); a plant's state is handed in
    with the reference attitudes of its charts (``compute(..., attitudes=)``) and the law
    sees it in the controller's own charts.
    """

    def __init__(self, system, dt, inputs=None, u_max=None):
        if system.nQk:
            raise ValueError('controllers need a system without kinematic configs; %s are '
                             'kinematic' % [c.name for c in system.kin_configs])
        dt = float(dt)
        if not (math.isfinite(dt) and dt > 0):
            raise ValueError('dt must be finite and > 0, got %r' % dt)
        self.system = system
        self.dt = dt
        self.joint_names = [c.name for c in system.configs]
        default_names, default_limits = actuated_inputs(system)
        if inputs is None:
            names, limits = default_names, default_limits
        else:
            names = list(inputs)
            lookup = dict(zip(default_names, default_limits))
            limits = np.array([lookup.get(n, np.inf) for n in names])
        self.input_names = names
        self.input_indices = np.array([system.get_input(n).index for n in names], dtype=int)
        if u_max is not None:
            limits = np.broadcast_to(np.asarray(u_max, dtype=float), (len(names),)).copy()
        if np.any(np.isnan(limits)) or np.any(limits <= 0):
            raise ValueError('u_max must be > 0 for every input %s, got %s' % (names, limits))
        self.u_max = np.asarray(limits, dtype=float)
        self._angles = angle_mask(system)
        self._zero_u = np.zeros(system.nu)

    # ------------------------------------------------------------------ public interface
    def compute(self, q, v, efforts=None, attitudes=None):
        """Efforts for the published state (q (nQ,), v (nQ,)) in config order and the
        generalized efforts (nQ,) applied over the tick that led to it (``joint_states``'
        effort field; None: unknown, taken as none); see :class:`ControlOutput`.
        ``attitudes`` (nb, 3, 3): with free joints, the reference attitudes of the charts
        the state is given in (a plant's ``system.free_charts.attitudes(system.model)``);
        None: the controller's own charts.

        Raises ValueError (naming the culprit) for wrong sizes or non-finite values."""
        q = self._checked(q, 'q')
        v = self._checked(v, 'v')
        if efforts is not None:
            efforts = self._checked(efforts, 'efforts')
        if attitudes is not None and self.system.free_joints:
            charts = self.system.free_charts
            attitudes = np.asarray(attitudes, dtype=float)
            if attitudes.shape != (len(charts), 3, 3) or not np.all(np.isfinite(attitudes)):
                raise ValueError('attitudes: expected %d finite 3x3 rotations (free joints '
                                 '%s), got shape %s' % (len(charts), [
                                     j.name for j in self.system.free_joints],
                                     attitudes.shape))
            q, v = q.copy(), v.copy()
            efforts = None if efforts is None else efforts.copy()
            charts.express(attitudes, charts.attitudes(self.system.model), q, efforts, v)
        if efforts is not None:
            # the laws are designed on the VI's discrete state: its momentum, rebuilt from
            # the published state, and the velocity M^-1 p of that momentum
            v = self.velocity(q, self.momentum(q, v, efforts))
        out = self._law(q, v)
        out.u = self.saturate(out.u)
        return out

    def reset(self):
        """Forget internal state (modes, hysteresis).  Stateless laws do nothing."""

    def saturate(self, u):
        """``u`` clipped to [-u_max, u_max]."""
        return np.clip(np.asarray(u, dtype=float).reshape(-1), -self.u_max, self.u_max)

    def full_input(self, u, system=None):
        """The (nu,) input vector of ``system`` (default the controller's) with ``u`` on the
        controller's inputs (matched by name) and zero elsewhere."""
        system = self.system if system is None else system
        full = np.zeros(system.nu)
        for name, value in zip(self.input_names, np.asarray(u, dtype=float).reshape(-1)):
            full[system.get_input(name).index] = value
        return full

    # ------------------------------------------------------------------ model helpers
    def momentum(self, q, v, efforts=None):
        """The VI's discrete momentum p (nQd,) of a published state, with the controller's
        model: ``(q, v)`` and the ``efforts`` (nQ,) applied over the tick that led to it.

        The simulator publishes ``v = M(q)^-1 (p + J/2)``, the momentum at the tick's end
        with J the impulse of the forces over the tick (``MidpointVI.p2_end``), so ``p = M(q)
        v - J/2`` with ``J = dt (efforts + F(q, v))``, F the model's own forces at the state
        (damping, friction; no input).  At a held equilibrium that is the VI's own fixed
        point, elsewhere it is second-order accurate.  Without efforts (None) ``p = M(q)
        v``: ``v`` is taken as the VI's discrete velocity (what :meth:`compute` hands the
        laws)."""
        self._set(q, v)
        p = dynamics.momentum_from_velocity(self.system.model, self.system.data, v)
        if efforts is None:
            return p
        nd = self.system.nQd
        F = efforts[:nd] + dynamics.applied_forces(self.system).F[:nd]
        return p - 0.5 * self.dt * F

    def velocity(self, q, p):
        """v = M(q)^-1 p (nQ,) for a momentum p (nQd,)."""
        self._set(q, np.zeros_like(q))
        return dynamics.velocity_from_momentum(self.system.model, self.system.data, p)

    def energy(self, q, v):
        """Total energy T + V [J] of the model at (q, v)."""
        self._set(q, v)
        return self.system.total_energy()

    def _set(self, q, v):
        self.system.data.set(q, v, self._zero_u)

    def _checked(self, x, what):
        arr = np.asarray(x, dtype=float).reshape(-1)
        n = len(self.joint_names)
        if arr.shape != (n,):
            raise ValueError('%s: expected %d values (joints %s), got %d'
                             % (what, n, self.joint_names, arr.size))
        bad = ~np.isfinite(arr)
        if bad.any():
            raise ValueError('%s is not finite for joints %s'
                             % (what, [self.joint_names[i] for i in np.nonzero(bad)[0]]))
        return arr

    def _collocated_input(self, q, v, configs, accel):
        """Collocated partial feedback linearisation from the model's own dynamics.

        Returns the inputs u (m,) that give the configs ``configs`` (indices, m of them)
        the accelerations ``accel`` (m,) at (q, v).  The controller's inputs are ConfigForce
        inputs, so ``ddq = f(q, v, 0) + M(q)⁻¹ S u`` exactly (S (nQ, m) puts input i on its
        config); solve the ``configs`` rows of that for u.
        """
        self._set(q, v)
        ddq0 = self.system.f()
        S = np.zeros((self.system.nQ, len(self.input_names)))
        S[self._input_config_index, np.arange(len(self.input_names))] = 1.0
        f_du = np.linalg.solve(self.system.mass_matrix(), S)
        rows = np.asarray(configs, dtype=int)
        return np.linalg.solve(f_du[rows], np.asarray(accel, dtype=float) - ddq0[rows])

    @property
    def _input_config_index(self):
        if getattr(self, '_input_cfg', None) is None:
            self._input_cfg = self._input_configs()
        return self._input_cfg

    def _input_configs(self):
        """Index of the config each of the controller's inputs pushes on (ConfigForce)."""
        configs = input_configs(self.system)[self.input_indices]
        for name, c in zip(self.input_names, configs):
            if c < 0:
                raise ValueError('input %r is not a ConfigForce input' % name)
        return configs

    @abc.abstractmethod
    def _law(self, q, v):
        """The control law at (q, v); subclasses implement it."""
