"""Control laws as plain classes: state (q, v) in config order in, efforts out (no ROS).

* :class:`LQR` -- discrete LQR about an equilibrium, designed on the MidpointVI step itself.
* :class:`PendulumSwingUp`, :class:`CartPoleSwingUp`, :class:`AcrobotSwingUp` -- energy
  shaping swing-up laws (energies from the model).
* :class:`SwingUpAndBalance` -- one controller owning the hand-over to the LQR
  (cost-to-go region with hysteresis).
* :func:`simulate` -- the closed loop in one process; :data:`DEMOS` -- the shipped demos.
"""
from .base import ControlOutput, Controller, actuated_inputs, angle_mask, wrap_angles
from .lqr import LQR, Equilibrium, find_equilibrium, linearize, lqr_gain
from .swingup import AcrobotSwingUp, CartPoleSwingUp, PendulumSwingUp
from .handover import SwingUpAndBalance
from .closed_loop import ClosedLoopResult, settle_time, simulate, summarize
from .presets import DEMOS, Demo, acrobot_model, cartpole_model, pendulum_model

__all__ = ['ControlOutput', 'Controller', 'actuated_inputs', 'angle_mask', 'wrap_angles',
           'LQR', 'Equilibrium', 'find_equilibrium', 'linearize', 'lqr_gain',
           'PendulumSwingUp', 'CartPoleSwingUp', 'AcrobotSwingUp', 'SwingUpAndBalance',
           'ClosedLoopResult', 'simulate', 'settle_time', 'summarize', 'DEMOS', 'Demo',
           'pendulum_model', 'cartpole_model', 'acrobot_model']
