"""Control laws as plain classes: state (q, v) in config order in, efforts out (no ROS).

* :class:`LQR` -- discrete LQR about an equilibrium, designed on the MidpointVI step itself.
* :class:`PendulumSwingUp`, :class:`CartPoleSwingUp`, :class:`AcrobotSwingUp` -- energy
  shaping swing-up laws (energies from the model).
* :class:`SwingUpAndBalance` -- one controller owning the hand-over to the LQR
  (cost-to-go region with hysteresis).
* :class:`JointTrajectory`, :class:`TrajectoryFollower` -- the JointTrajectoryController's
  interpolation, start, replacement and tolerance rules (docs/trajectories.md).
* :data:`DEMOS` -- the shipped demos' models and controllers.

The closed loop of a controller and a simulated plant is :func:`ros_vi.simulation.simulate`.
"""
from .base import (ControlOutput, Controller, actuated_inputs, angle_mask,
                   default_effort_limits, wrap_angles)
from .lqr import LQR, Equilibrium, find_equilibrium, linearize, lqr_gain
from .swingup import AcrobotSwingUp, CartPoleSwingUp, PendulumSwingUp
from .handover import SwingUpAndBalance
from .joint_trajectory import (ErrorCode, Execution, JointTolerance, JointTrajectory, Outcome,
                               TrackingSample, TrajectoryError, TrajectoryFollower,
                               TrajectoryPoint)
from .presets import DEMOS, Demo, acrobot_model, cartpole_model, pendulum_model

__all__ = ['ControlOutput', 'Controller', 'actuated_inputs', 'default_effort_limits',
           'angle_mask', 'wrap_angles',
           'LQR', 'Equilibrium', 'find_equilibrium', 'linearize', 'lqr_gain',
           'PendulumSwingUp', 'CartPoleSwingUp', 'AcrobotSwingUp', 'SwingUpAndBalance',
           'DEMOS', 'Demo',
           'pendulum_model', 'cartpole_model', 'acrobot_model',
           'ErrorCode', 'Execution', 'JointTolerance', 'JointTrajectory', 'Outcome',
           'TrackingSample', 'TrajectoryError', 'TrajectoryFollower', 'TrajectoryPoint']

