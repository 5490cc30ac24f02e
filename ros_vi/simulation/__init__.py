"""The simulation, without ROS: a system stepped at a fixed tick with joint commands.

* :class:`Simulation` (``core``) -- the state, the tick (VI steps, retries, held state),
  what is published (positions, velocities, efforts, energy, link transforms);
* ``commands`` -- the command table: which interfaces each joint offers
  (:func:`joint_interfaces`), the passive-joint rule, validation, saturation, timeout,
  drives;
* ``transforms`` -- link transforms for tf (:class:`LinkTransforms`);
* ``bodies`` -- free bodies (floating bases, loose objects): their published pose and twist
  (:class:`FreeBodyState`) and initial state (:class:`FreeBodies`);
* ``closed_loop`` -- :func:`simulate`, the closed loop of a controller and a Simulation in
  one process, its :class:`ClosedLoopResult`, :func:`settle_time`, :func:`summarize`;
* ``robot`` -- a URDF made ready to simulate (:func:`setup_robot`, :class:`RobotSetup`): the
  set-up the simulator node, ``ros-vi simulate`` and :meth:`Simulation.from_urdf` share.

The ROS simulator node (``ros_vi/ros/``) only converts messages to calls of these.
"""
from .commands import (COMMAND_INTERFACES, DEFAULT_DRIVE_DAMPING_RATIO,
                       DEFAULT_DRIVE_FREQUENCY, CommandTable, JointInterfaces, OptionError,
                       default_command_interfaces, joint_interfaces)
from .bodies import FreeBodies, FreeBodyState
from .core import SimState, Simulation, TickResult
from .closed_loop import ClosedLoopResult, settle_time, simulate, summarize
from .robot import RobotSetup, load_description, setup_robot
from .transforms import LinkTransforms

__all__ = ['Simulation', 'SimState', 'TickResult', 'CommandTable', 'COMMAND_INTERFACES',
           'DEFAULT_DRIVE_FREQUENCY', 'DEFAULT_DRIVE_DAMPING_RATIO', 'OptionError',
           'JointInterfaces', 'joint_interfaces', 'default_command_interfaces',
           'LinkTransforms', 'simulate', 'ClosedLoopResult', 'settle_time', 'summarize',
           'RobotSetup', 'setup_robot', 'load_description', 'FreeBodies', 'FreeBodyState']
