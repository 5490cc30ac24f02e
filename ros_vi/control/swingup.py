"""Energy-shaping swing-up laws (pendulum, cart-pole, acrobot).

Every energy here comes from the controller's model (``System.total_energy`` at chosen
states, entries of ``System.mass_matrix``), never from hand-typed formulas; the goal energy
is the model's energy at the goal configuration at rest.  ``Ẽ = E - E_goal`` [J].

"At rest" means every |v_i| <= ``rest_speed``: there the energy laws give zero, so a
constant *kick* is applied instead (only while Ẽ < 0; e.g. the first step from hanging).
"""
import math

import numpy as np

from .base import ControlOutput, Controller, wrap_angles

__all__ = ['PendulumSwingUp', 'CartPoleSwingUp', 'AcrobotSwingUp']


def _goal(controller, goal):
    """(nQ,) goal configuration from a dict naming every joint or a sequence."""
    if isinstance(goal, dict):
        missing = [n for n in controller.joint_names if n not in goal]
        if missing or len(goal) != len(controller.joint_names):
            raise ValueError('goal must name exactly the joints %s, got %s'
                             % (controller.joint_names, sorted(goal)))
        goal = [goal[n] for n in controller.joint_names]
    return controller._checked(goal, 'goal')


def _config_index(system, name, what):
    try:
        return system.get_config(name).index
    except (KeyError, ValueError) as exc:
        raise ValueError('%s: no config %r in the model (configs %s)'
                         % (what, name, [c.name for c in system.configs])) from exc


class _EnergySwingUp(Controller):
    """Common part: goal configuration, goal energy, rest detection."""

    def __init__(self, system, dt, goal, inputs, u_max, rest_speed):
        Controller.__init__(self, system, dt, inputs, u_max)
        self.goal = _goal(self, goal)
        self.rest_speed = float(rest_speed)
        self.goal_energy = self.energy(self.goal, np.zeros(system.nQ))

    def at_rest(self, v):
        return bool(np.all(np.abs(v) <= self.rest_speed))


class PendulumSwingUp(_EnergySwingUp):
    """trep's tutorial law for a single actuated pendulum, plus damping compensation.

    ``u = sat(-k_energy * θ̇ * Ẽ + c(θ, θ̇))`` with ``c = -F_diss``: the model's own dissipative
    generalized force at the state (``F_diss = M f(q, v, u=0) + bias``, i.e. the Damping
    ``-b θ̇``), cancelled so the pump works against gravity only (``compensate=False`` gives
    trep's law exactly).  At rest with Ẽ < 0: ``u = kick`` (default +u_max), mode 'kick'.

    Parameters: ``goal`` {joint: angle} or (1,) (default upright π), ``k_energy``
    [1/(J s)·N m s], ``compensate`` (bool), ``kick`` [N m].
    """

    def __init__(self, system, dt, goal=None, k_energy=1.0, compensate=True, kick=None,
                 inputs=None, u_max=None, rest_speed=1e-6):
        if system.nQ != 1:
            raise ValueError('PendulumSwingUp needs a one-config system, got configs %s'
                             % [c.name for c in system.configs])
        goal = [math.pi] if goal is None else goal
        _EnergySwingUp.__init__(self, system, dt, goal, inputs, u_max, rest_speed)
        if len(self.input_names) != 1:
            raise ValueError('PendulumSwingUp needs one input, got %s' % self.input_names)
        self.k_energy = float(k_energy)
        self.compensate = bool(compensate)
        self.kick = float(self.u_max[0] if kick is None else kick)

    def _law(self, q, v):
        err = self.energy(q, v) - self.goal_energy
        if self.at_rest(v) and err < 0:
            return ControlOutput(np.array([self.kick]), 'kick', err)
        u = -self.k_energy * v[0] * err
        if self.compensate:
            s = self.system                      # state (q, v, u=0) set by energy()
            u -= (s.mass_matrix() @ s.f() + s.bias_forces())[0]
        return ControlOutput(np.array([u]), 'swingup', err)


class CartPoleSwingUp(_EnergySwingUp):
    """Åström-Furuta energy law on the pole, realised through the cart force.

    Pole energy ``E_p(q, v) = E(q, [0, θ̇])``: the model's total energy with the cart at rest
    (the pole's energy in the cart frame; the cart's potential is constant on a level rail).
    Along the motion ``dE_p/dt = -M_xθ(q) θ̇ ẍ`` (M_xθ the cart-pole entry of the mass
    matrix), so the desired cart acceleration::

        a = sat(k_energy · Ẽ_p · θ̇ · c(q), a_max) - k_x (x - x̄) - k_v ẋ,
        c(q) = M_xθ(q) / |M_xθ(q̄)|

    drives Ẽ_p to 0 (``c = cos θ`` for the shipped model, θ = 0 upright, θ > 0 leaning toward
    +x).  The cart force is the collocated partial feedback linearisation giving the cart
    the acceleration ``a`` from the model's dynamics (``f``, ``f_du``), then saturated.  At
    rest with Ẽ_p < 0: ``a = kick_accel``.

    Parameters: ``cart``, ``pole`` config names; ``goal`` {joint: value} (default cart 0,
    pole 0); gains ``k_energy`` [m/(J rad s)], ``a_max`` [m/s^2], ``k_x`` [1/s^2],
    ``k_v`` [1/s]; ``kick_accel`` [m/s^2].
    """

    def __init__(self, system, dt, cart='cart', pole='pole', goal=None, k_energy=30.0,
                 a_max=10.0, k_x=1.0, k_v=2.0, kick_accel=5.0, inputs=None, u_max=None,
                 rest_speed=1e-6):
        self.cart = _config_index(system, cart, 'cart')
        self.pole = _config_index(system, pole, 'pole')
        if goal is None:
            goal = {cart: 0.0, pole: 0.0}
        _EnergySwingUp.__init__(self, system, dt, goal, inputs, u_max, rest_speed)
        if list(self._input_configs()) != [self.cart]:
            raise ValueError('CartPoleSwingUp drives the cart only; inputs %s act on %s'
                             % (self.input_names,
                                [self.joint_names[i] for i in self._input_configs()]))
        self.k_energy, self.a_max = float(k_energy), float(a_max)
        self.k_x, self.k_v, self.kick_accel = float(k_x), float(k_v), float(kick_accel)
        self._set(self.goal, np.zeros(system.nQ))
        self._coupling_up = abs(self.system.mass_matrix()[self.cart, self.pole])

    def pole_energy(self, q, v):
        """E(q, v with the cart velocity zeroed) [J]."""
        v = np.array(v, dtype=float)
        v[self.cart] = 0.0
        return self.energy(q, v)

    def _law(self, q, v):
        err = self.pole_energy(q, v) - self.goal_energy
        if self.at_rest(v) and err < 0:
            accel, mode = self.kick_accel, 'kick'
        else:
            c = self.system.mass_matrix()[self.cart, self.pole] / self._coupling_up
            pump = self.k_energy * err * v[self.pole] * c
            accel = (float(np.clip(pump, -self.a_max, self.a_max))
                     - self.k_x * (q[self.cart] - self.goal[self.cart]) - self.k_v * v[self.cart])
            mode = 'swingup'
        u = self._collocated_input(q, v, [self.cart], [accel])
        return ControlOutput(u, mode, err)


class AcrobotSwingUp(_EnergySwingUp):
    """Spong's energy-based swing-up of the acrobot: collocated partial feedback
    linearisation (PFL) of the actuated joint with an energy-shaping outer loop.

    Collocated PFL (from the model's own dynamics, :meth:`Controller._collocated_input`):
    the torque ``τ = M̄(q) y + h̄(q, v)`` gives the actuated joint exactly the acceleration
    ``q̈_a = y``; ``M̄`` (the Schur complement of the mass matrix) and ``h̄`` (bias, gravity
    and damping seen by the actuated joint) are read off the model as the torques for
    ``y = 1`` and ``y = 0``.  Along any motion ``Ė = τ q̇_a - P_damp`` (P_damp >= 0 the power
    of the joint damping), so with the Lyapunov candidate
    ``W = ½ k_energy Ẽ² + ½ k_p q̃_a² + ½ q̇_a²`` (``q̃_a = q_a - q̄_a`` wrapped), choosing::

        y = -(k_d q̇_a + k_p q̃_a + k_energy Ẽ h̄) / max(1 + k_energy Ẽ M̄, den_min)

    gives ``Ẇ = -k_d q̇_a² - k_energy Ẽ P_damp`` whenever the denominator is above
    ``den_min`` and the torque is not saturated (Spong 1995; Xin and Kaneda 2007): the energy
    is driven to the goal's while the actuated joint is brought back to q̄_a, i.e. onto
    the homoclinic orbit of the stiffened acrobot that ends at the upright, where the LQR
    catches it.  The torque is then saturated at u_max.  At rest with Ẽ < 0 (the hanging
    equilibrium is an equilibrium of the law): ``y = kick_accel``, mode 'kick'.

    Parameters: ``passive``, ``active`` config names; ``goal`` (default passive π, active 0:
    upright for a model hanging at q = 0); ``k_p`` [1/s^2], ``k_d`` [1/s], ``k_energy``
    [1/(J s^2)] (ties the energy error to the actuated-joint acceleration),
    ``den_min`` (floor of the denominator, > 0), ``kick_accel`` [rad/s^2].
    """

    def __init__(self, system, dt, passive='shoulder', active='elbow', goal=None, k_p=5.0,
                 k_d=5.0, k_energy=0.5, den_min=0.1, kick_accel=20.0, inputs=None,
                 u_max=None, rest_speed=1e-6):
        self.passive = _config_index(system, passive, 'passive')
        self.active = _config_index(system, active, 'active')
        if goal is None:
            goal = {passive: math.pi, active: 0.0}
        _EnergySwingUp.__init__(self, system, dt, goal, inputs, u_max, rest_speed)
        if list(self._input_configs()) != [self.active]:
            raise ValueError('AcrobotSwingUp drives the active joint only; inputs %s act on %s'
                             % (self.input_names,
                                [self.joint_names[i] for i in self._input_configs()]))
        self.k_p, self.k_d, self.k_energy = float(k_p), float(k_d), float(k_energy)
        self.den_min = float(den_min)
        if not self.den_min > 0:
            raise ValueError('den_min must be > 0, got %r' % den_min)
        self.kick_accel = float(kick_accel)

    def pfl_terms(self, q, v):
        """(M̄ [kg m^2], h̄ [N m]): the actuated joint's torque is ``M̄ q̈_a + h̄`` at (q, v)."""
        h_bar = self._collocated_input(q, v, [self.active], [0.0])[0]
        m_bar = self._collocated_input(q, v, [self.active], [1.0])[0] - h_bar
        return m_bar, h_bar

    def _law(self, q, v):
        err = self.energy(q, v) - self.goal_energy
        if self.at_rest(v) and err < 0:
            u = self._collocated_input(q, v, [self.active], [self.kick_accel])
            return ControlOutput(u, 'kick', err)
        a = self.active
        m_bar, h_bar = self.pfl_terms(q, v)
        q_err = wrap_angles(q - self.goal, self._angles)[a]
        den = max(1.0 + self.k_energy * err * m_bar, self.den_min)
        y = -(self.k_d * v[a] + self.k_p * q_err + self.k_energy * err * h_bar) / den
        return ControlOutput(np.array([m_bar * y + h_bar]), 'swingup', err)
