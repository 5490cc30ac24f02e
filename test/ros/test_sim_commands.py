"""Commanding the simulator the ros2_control way, over DDS, on the shipped arm: position,
velocity and JointState targets reach their goal; a JointTrajectory is followed at its
waypoints; FollowJointTrajectory goals succeed, abort on an impossible path tolerance, and
stop on cancel; commands a joint cannot take are refused and counted; a URDF's
<ros2_control> block selects the interfaces."""
import re

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from ros_vi.ros.conversions import stamp_to_ns
from ros_vi.ros.simulator_node import ParameterError, SimulatorNode

from .harness import ActionGoalClient, SimProcess, kv, trajectory, urdf, wait_until

JOINTS = ['joint_%d' % i for i in range(1, 8)]
TARGET = [0.3, -0.4, 0.2, -0.8, 0.1, 0.5, -0.2]
TOLERANCE = 2e-3        # rad: docs/command-interfaces.md (drive gains at their defaults)
SETTLE = 3.0            # s of simulated time to settle after a step command


@pytest.fixture(scope='module')
def arm(probe):
    sim = SimProcess({'urdf_file': urdf('arm7'), 'rate': 500.0, 'publish_rate': 100.0,
                      'diagnostics_period': 0.2, 'command_timeout': 0.0})
    sim.js = probe.subscribe(JointState, sim.topic('joint_states'))
    sim.diag = probe.subscribe(DiagnosticArray, sim.topic('diagnostics'))
    sim.js.wait(what='the arm\'s joint_states', timeout=30)
    yield sim
    sim.stop_cleanly()


def _now(sim):
    return stamp_to_ns(sim.js.last().header.stamp) * 1e-9


def _settled(sim, target, after):
    """The first joint_states at or after simulated time ``after`` whose positions are within
    TOLERANCE of ``target`` (waits up to SETTLE s of simulated time beyond ``after``)."""
    msg = sim.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= after + SETTLE,
                      what='%g s of simulation' % SETTLE)
    return np.abs(np.array(msg.position[:7]) - target).max()


def _positions_after(sim, start, delays):
    """Joint positions (7,) of the first joint_states at or after ``start + delay`` [s of
    simulated time], for each delay."""
    out = []
    for delay in delays:
        msg = sim.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= start + delay,
                          what='joint_states %g s on' % delay)
        out.append(np.array(msg.position[:7]))
    return np.array(out)


def _home(probe, sim):
    pub = probe.publisher(Float64MultiArray, sim.topic('position_controller/commands'))
    pub.publish(Float64MultiArray(data=[0.0] * 7))
    assert _settled(sim, np.zeros(7), _now(sim)) < TOLERANCE
    probe.node.destroy_publisher(pub)


def test_position_commands_reach_the_target(probe, arm):
    pub = probe.publisher(Float64MultiArray, arm.topic('position_controller/commands'))
    start = _now(arm)
    pub.publish(Float64MultiArray(data=TARGET))
    assert _settled(arm, TARGET, start) < TOLERANCE
    d = arm.diag.wait(lambda m: 'joint_1:position' in kv(m)['active_interfaces'],
                      what='diagnostics naming the position interface')
    assert kv(d)['rejected_commands'] == '0'
    probe.node.destroy_publisher(pub)
    _home(probe, arm)


def test_velocity_commands_move_at_the_commanded_rate_then_hold(probe, arm):
    pub = probe.publisher(Float64MultiArray, arm.topic('velocity_controller/commands'))
    rate = np.array([0.2, -0.1, 0.15, 0.1, -0.2, 0.1, 0.05])
    start = _now(arm)
    pub.publish(Float64MultiArray(data=rate.tolist()))
    # after a second of settling, the configuration moves at the commanded rate
    a = arm.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= start + 1.0,
                    what='1 s of velocity command')
    b = arm.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= start + 2.0,
                    what='2 s of velocity command')
    dt = (stamp_to_ns(b.header.stamp) - stamp_to_ns(a.header.stamp)) * 1e-9
    measured = (np.array(b.position[:7]) - np.array(a.position[:7])) / dt
    assert np.abs(measured - rate).max() < 1e-3
    # zero velocity: it stops and holds where it is
    pub.publish(Float64MultiArray(data=[0.0] * 7))
    assert np.abs(np.diff(_positions_after(arm, _now(arm), (1.0, 2.0)), axis=0)).max() < 1e-3
    probe.node.destroy_publisher(pub)
    _home(probe, arm)


def test_joint_state_position_targets_reach_the_target(probe, arm):
    pub = probe.publisher(JointState, arm.topic('joint_commands'))
    start = _now(arm)
    # topic_based_ros2_control's command: names with positions (order of our choosing)
    order = list(reversed(range(7)))
    pub.publish(JointState(name=[JOINTS[i] for i in order],
                           position=[TARGET[i] for i in order]))
    assert _settled(arm, TARGET, start) < TOLERANCE
    probe.node.destroy_publisher(pub)
    _home(probe, arm)


def test_joint_trajectory_topic_is_followed_at_its_waypoints(probe, arm):
    # a deep reader queue: on a busy machine the probe's thread may take the samples late,
    # and the waypoint check needs the ones near each waypoint
    deep = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                      reliability=ReliabilityPolicy.RELIABLE)
    state = probe.subscribe(JointTrajectoryControllerState,
                            arm.topic('joint_trajectory_controller/controller_state'), deep)
    pub = probe.publisher(JointTrajectory, arm.topic('joint_trajectory_controller/'
                                                     'joint_trajectory'))
    waypoints = [(1.0, [0.2] * 7, None), (2.0, TARGET, None), (3.0, [0.0] * 7, [0.0] * 7)]
    start = _now(arm)
    pub.publish(trajectory(waypoints, JOINTS))
    end = arm.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= start + 4.0,
                      what='the trajectory to end')
    samples = state.msgs
    probe.unsubscribe(state)
    probe.node.destroy_publisher(pub)
    # at each waypoint (controller_state at the waypoint's time from start) the actual
    # position is within tolerance of the waypoint
    def since_start(m):
        return m.reference.time_from_start.sec + m.reference.time_from_start.nanosec * 1e-9
    for t, q, _ in waypoints:
        near = min(samples, key=lambda m: abs(since_start(m) - t))
        assert abs(since_start(near) - t) <= 0.011, 'no controller_state near %g s' % t
        assert np.abs(np.array(near.feedback.positions) - q).max() < 1e-2, (t, near)
    assert np.abs(np.array(end.position[:7])).max() < TOLERANCE


def test_follow_joint_trajectory_goal_succeeds(probe, arm):
    client = ActionGoalClient(probe, arm.topic('joint_trajectory_controller/'
                                               'follow_joint_trajectory'))
    try:
        goal = FollowJointTrajectory.Goal(
            trajectory=trajectory([(1.5, TARGET, None), (2.5, [0.0] * 7, [0.0] * 7)], JOINTS),
            goal_tolerance=[JointTolerance(name=j, position=0.01) for j in JOINTS])
        response = client.result(client.send(goal))
    finally:
        client.destroy()
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    assert response.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert client.feedback


def test_a_goal_ending_at_rest_against_gravity_succeeds_with_the_default_tolerances(
        probe, arm):
    """A goal ending at rest in a pose held against gravity aborted: "joint 'joint_2'
    velocity error -0.0168434 exceeds tolerance 0.01" (the published velocity of a held
    joint was half the step's impulse, not zero).  With the default tolerances (stopped
    velocity 0.01 rad/s) it succeeds now."""
    client = ActionGoalClient(probe, arm.topic('joint_trajectory_controller/'
                                               'follow_joint_trajectory'))
    try:
        goal = FollowJointTrajectory.Goal(
            trajectory=trajectory([(1.5, TARGET, [0.0] * 7)], JOINTS))
        response = client.result(client.send(goal))
    finally:
        client.destroy()
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    # half a second after the goal's end the held arm publishes rest
    later = _now(arm) + 0.5
    held = arm.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= later,
                       start=len(arm.js.msgs), what='the held pose')
    assert np.abs(np.array(held.position[:7]) - TARGET).max() < TOLERANCE
    assert np.abs(np.array(held.velocity[:7])).max() < 1e-6     # was 0.017 for joint_2
    _home(probe, arm)


def test_follow_joint_trajectory_impossible_path_tolerance_aborts(probe, arm):
    client = ActionGoalClient(probe, arm.topic('joint_trajectory_controller/'
                                               'follow_joint_trajectory'))
    try:
        goal = FollowJointTrajectory.Goal(
            trajectory=trajectory([(0.5, TARGET, None)], JOINTS),
            path_tolerance=[JointTolerance(name=j, position=1e-9) for j in JOINTS])
        response = client.result(client.send(goal))
    finally:
        client.destroy()
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == \
        FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    _home(probe, arm)


def test_follow_joint_trajectory_cancel_stops_the_motion(probe, arm):
    client = ActionGoalClient(probe, arm.topic('joint_trajectory_controller/'
                                               'follow_joint_trajectory'))
    try:
        goal = FollowJointTrajectory.Goal(
            trajectory=trajectory([(4.0, TARGET, None)], JOINTS))
        handle = client.send(goal)
        start = _now(arm)
        arm.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= start + 1.0,
                    what='a second of motion')
        cancel = handle.cancel_goal_async()
        wait_until(cancel.done, what='the cancel response')
        response = client.result(handle)
    finally:
        client.destroy()
    assert response.status == GoalStatus.STATUS_CANCELED
    a, b = _positions_after(arm, _now(arm), (1.0, 2.0))
    # held (the drives settle on the hold position within the first second), not at TARGET
    assert np.abs(b - a).max() < 1e-3
    assert np.abs(b - TARGET).max() > 0.05
    _home(probe, arm)


def test_commands_a_joint_cannot_take_are_refused_and_counted(probe):
    acrobot = SimProcess({'urdf_file': urdf('acrobot'), 'rate': 200.0,
                          'diagnostics_period': 0.2})
    try:
        diag = probe.subscribe(DiagnosticArray, acrobot.topic('diagnostics'))
        pub = probe.publisher(JointState, acrobot.topic('joint_commands'))
        # the shoulder is passive (effort limit 0): no interface at all
        pub.publish(JointState(name=['shoulder'], effort=[1.0]))
        d = diag.wait(lambda m: int(kv(m)['rejected_commands']) >= 1,
                      what='the refusal on diagnostics')
        assert "joint 'shoulder' has effort limit 0: it cannot take any command" in \
            kv(d)['last_rejection']
        probe.node.destroy_publisher(pub)
        probe.unsubscribe(diag)
    finally:
        code, out = acrobot.stop()
    assert code == 0, out
    assert re.search(r"WARN.*rejected command: joint_commands: command: joint 'shoulder' has "
                     r"effort limit 0: it cannot take any command", out), out


BLOCK = '''
  <ros2_control name="PendulumSystem" type="system">
    <hardware><plugin>ros_vi/SimulatedSystem</plugin></hardware>
    <joint name="theta">
      <command_interface name="position"><param name="min">-1</param>
        <param name="max">1</param></command_interface>
      <state_interface name="position"><param name="initial_value">0.25</param>
      </state_interface>
      <state_interface name="velocity"/>
    </joint>
  </ros2_control>
</robot>'''


def _pendulum_with_block():
    with open(urdf('pendulum')) as fh:
        text = fh.read()
    return text.replace('</robot>', BLOCK)


def test_a_ros2_control_block_selects_the_interfaces_and_initial_state(probe):
    node = SimulatorNode(context=probe.context, node_name='block_sim', parameter_overrides=[
        Parameter('robot_description', value=_pendulum_with_block()),
        Parameter('start_paused', value=True)])
    try:
        sim = node.sim
        assert sim.command_interfaces == {'theta': ('position',)}
        assert sim.state().positions[0] == 0.25
        with pytest.raises(ValueError, match="joint 'theta' has no velocity interface"):
            sim.set_commands({'theta': 0.1}, interface='velocity')
        assert list(node.followers['joint_trajectory_controller'].joint_names) == ['theta']
    finally:
        node.destroy_node()
    # a parameter overrides the block
    node = SimulatorNode(context=probe.context, node_name='block_sim_2', parameter_overrides=[
        Parameter('robot_description', value=_pendulum_with_block()),
        Parameter('command_interfaces', value=['theta:effort']),
        Parameter('initial_positions', value=[0.5]),
        Parameter('start_paused', value=True)])
    try:
        assert node.sim.command_interfaces == {'theta': ('effort',)}
        assert node.sim.state().positions[0] == 0.5
        assert node.followers == {}          # no position interface: no trajectories
    finally:
        node.destroy_node()


@pytest.mark.parametrize('overrides, match', [
    ({'command_interfaces': ['theta:torque']}, "unknown interface 'torque'"),
    ({'command_interfaces': ['theta']}, "parameter command_interfaces: expected "
                                        "'joint:value,...', got 'theta'"),
    ({'command_interfaces': ['knee:effort']}, "parameter command_interfaces: unknown joint "
                                              "'knee'"),
    ({'drive_gains': ['theta:10']}, "parameter drive_gains: expected 'joint:value,value'"),
    ({'drive_gains': ['theta:10,x']}, 'values must be numbers'),
    ({'trajectory_joints': ['theta', 'theta']},
     "parameter trajectory_joints: joint 'theta' is named twice"),
])
def test_command_parameters_are_checked(probe, overrides, match):
    with pytest.raises(ParameterError, match=match):
        SimulatorNode(context=probe.context, parameter_overrides=[
            Parameter('urdf_file', value=urdf('pendulum'))] + [
            Parameter(k, value=v) for k, v in overrides.items()])

