"""One robot with a ``<ros2_control>`` block, and what every way of simulating it must give.

The simulator node (over DDS), ``ros-vi simulate``, ``ros-vi info`` and
``Simulation.from_urdf`` all set a robot up through ros_vi.simulation.setup_robot; the tests
of test/test_robot_setup.py (offline) and test/ros/test_sim_setup.py (over DDS) hold each of
them to the expectations below.

The robot: shoulder (revolute about z, limits [-1, 1.5]), slide (prismatic along x, [0,
0.5]), finger (mimic of the shoulder), wrist (continuous, effort limit 0: passive).  The
block declares the shoulder's position interface within [-0.9, 1.4], the slide's velocity
(within [-0.5, 0.8]) and effort interfaces, and initial values; it does not list the wrist.
"""
import math

from test_ros2_control_block import robot

INF = math.inf

# the robot of test_ros2_control_block.py with a block of our own
ROBOT = robot('''
  <ros2_control name="CaseSystem" type="system">
    <hardware><plugin>ros_vi/SimulatedSystem</plugin></hardware>
    <joint name="shoulder">
      <command_interface name="position"><param name="min">-0.9</param>
        <param name="max">1.4</param></command_interface>
      <state_interface name="position"><param name="initial_value">0.5</param></state_interface>
      <state_interface name="velocity"/>
    </joint>
    <joint name="slide">
      <command_interface name="velocity"><param name="min">-0.5</param>
        <param name="max">0.8</param></command_interface>
      <command_interface name="effort"/>
      <state_interface name="position"><param name="initial_value">0.25</param></state_interface>
      <state_interface name="velocity"><param name="initial_value">-0.1</param></state_interface>
    </joint>
  </ros2_control>''')

JOINTS = ['shoulder', 'slide', 'wrist']          # configs, in joint_states order
INTERFACES = {'shoulder': ('position',), 'slide': ('effort', 'velocity'), 'wrist': ()}
# the bounds in force: the block's, within the URDF limits (position bounds always include
# the joint's position limits)
BOUNDS = {'shoulder': {'position': (-0.9, 1.4)},
          'slide': {'effort': (-INF, INF), 'velocity': (-0.5, 0.8)},
          'wrist': {}}
INITIAL_POSITIONS = [0.5, 0.25, 0.0]
INITIAL_VELOCITIES = [0.0, -0.1, 0.0]
PASSIVE_REFUSAL = "joint 'wrist' has effort limit 0: it cannot take any command"
# a position target beyond the shoulder's bound: with gentle drives (DRIVE_FREQUENCY) and the
# slide held (velocity 0), the shoulder settles at the bound, to within HOLD_TOL (the PD
# drive's steady error against the weight of the mimic finger), below its URDF limit
BEYOND, HELD_AT, HOLD_TOL, UPPER_LIMIT = 2.0, 1.4, 5e-3, 1.5
DRIVE_FREQUENCY = 10.0


def interfaces_text(interfaces):
    """The diagnostics value ``command_interfaces`` of a table (joints offering none left
    out)."""
    return ';'.join('%s:%s' % (j, ','.join(i)) for j, i in interfaces.items() if i)
