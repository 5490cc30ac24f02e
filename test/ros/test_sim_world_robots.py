"""Several robots in one world over DDS: each robot has its own joint trajectory controller
(``<robot>/joint_trajectory_controller/...``) and forward command topics
(``<robot>/position_controller/commands``); two goals sent at once to two arms are both
followed; a floating robot's odometry (``<robot>/odom``, frame ``world``) follows its free
fall in closed form."""
import threading

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from nav_msgs.msg import Odometry
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ros_vi.ros.conversions import pose_to_matrix, stamp_to_ns

from .harness import ActionGoalClient, SimProcess, trajectory, urdf

JOINTS = ['joint_%d' % i for i in range(1, 8)]
TARGETS = {'a': [0.3, -0.4, 0.2, -0.8, 0.1, 0.5, -0.2],
           'b': [-0.2, 0.3, -0.1, 0.6, -0.3, -0.4, 0.25]}
TOLERANCE = 2e-3       # rad (docs/command-interfaces.md, default drive gains)
DEEP = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                  reliability=ReliabilityPolicy.RELIABLE)
G = np.array([0.0, 0.0, -9.81])
X0, V0 = np.array([0.0, 3.0, 5.0]), np.array([0.0, 0.5, 2.0])
WORLD = """
robots:
  - {name: a, urdf: %(arm)s}
  - {name: b, urdf: %(arm)s, pose: {xyz: [1.5, 0, 0]}}
  - {name: drop, urdf: %(acrobot)s, floating: true, pose: {xyz: [0, 3, 5]},
     twist: {linear: [0, 0.5, 2.0]}}
"""


@pytest.fixture(scope='module')
def world(probe, tmp_path_factory):
    path = tmp_path_factory.mktemp('world') / 'arms.yaml'
    path.write_text(WORLD % {'arm': urdf('arm7'), 'acrobot': urdf('acrobot')})
    sim = SimProcess({'world_file': str(path), 'rate': 500.0, 'publish_rate': 100.0,
                      'command_timeout': 0.0, 'real_time_factor': 0.0})
    sim.js = probe.subscribe(JointState, sim.topic('joint_states'))
    sim.odom = probe.subscribe(Odometry, sim.topic('drop/odom'), DEEP)
    sim.js.wait(what='the world\'s joint_states', timeout=60)
    yield sim
    sim.stop_cleanly()


def _now(sim):
    return stamp_to_ns(sim.js.last().header.stamp) * 1e-9


def _positions(msg, robot):
    named = dict(zip(msg.name, msg.position))
    return np.array([named['%s/%s' % (robot, j)] for j in JOINTS])


def test_two_robots_follow_their_own_goals_at_once(probe, world):
    clients = {r: ActionGoalClient(probe, world.topic(
        '%s/joint_trajectory_controller/follow_joint_trajectory' % r)) for r in TARGETS}
    results = {}
    try:
        goals = {r: FollowJointTrajectory.Goal(trajectory=trajectory(
            [(1.0 + 0.5 * k, TARGETS[r], [0.0] * 7)], ['%s/%s' % (r, j) for j in JOINTS]))
            for k, r in enumerate(TARGETS)}
        handles = {r: clients[r].send(goals[r]) for r in TARGETS}     # both accepted...
        # ... and running together: wait for both results concurrently
        threads = [threading.Thread(target=lambda r=r: results.__setitem__(
            r, clients[r].result(handles[r]))) for r in TARGETS]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        for client in clients.values():
            client.destroy()
    for r in TARGETS:
        assert results[r].status == GoalStatus.STATUS_SUCCEEDED, results[r].result.error_string
        assert results[r].result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    later = _now(world) + 0.2
    held = world.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= later,
                         start=len(world.js.msgs), what='the held poses')
    for r in TARGETS:
        assert np.abs(_positions(held, r) - TARGETS[r]).max() < TOLERANCE


def test_a_robots_controller_refuses_the_other_robots_joints(probe, world):
    """As the JTC does for joints it does not control: aborted with INVALID_JOINTS."""
    client = ActionGoalClient(probe, world.topic(
        'a/joint_trajectory_controller/follow_joint_trajectory'))
    try:
        goal = FollowJointTrajectory.Goal(trajectory=trajectory(
            [(1.0, TARGETS['b'], None)], ['b/%s' % j for j in JOINTS]))
        response = client.result(client.send(goal))
    finally:
        client.destroy()
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS
    assert 'b/joint_1' in response.result.error_string


def test_a_robots_position_commands_move_that_robot_only(probe, world):
    before = world.js.last()
    hold_a = _positions(before, 'a')
    pub = probe.publisher(Float64MultiArray, world.topic('b/position_controller/commands'))
    start = _now(world)
    pub.publish(Float64MultiArray(data=[0.0] * 7))
    msg = world.js.wait(lambda m: stamp_to_ns(m.header.stamp) * 1e-9 >= start + 3.0,
                        start=len(world.js.msgs), what='3 s after the command')
    probe.node.destroy_publisher(pub)
    assert np.abs(_positions(msg, 'b')).max() < TOLERANCE
    assert np.abs(_positions(msg, 'a') - hold_a).max() < TOLERANCE


def test_a_floating_robot_has_odometry_in_the_world_frame(world):
    """The acrobot starts at rest on its free base: the whole falls as one rigid body, so
    its base follows x0 + v0 t + g t^2/2 (to the step's solver tolerance)."""
    msgs = world.odom.wait(lambda m: stamp_to_ns(m.header.stamp) > 0, what='odometry')
    msgs = [m for m in world.odom.msgs if stamp_to_ns(m.header.stamp) > 0]
    assert msgs
    for msg in msgs[:50]:
        t = stamp_to_ns(msg.header.stamp) * 1e-9
        assert msg.header.frame_id == 'world' and msg.child_frame_id == 'drop/world'
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        g = pose_to_matrix((p.x, p.y, p.z), (o.x, o.y, o.z, o.w))
        np.testing.assert_allclose(g[:3, 3], X0 + V0 * t + 0.5 * G * t * t, atol=1e-8)
        np.testing.assert_allclose(g[:3, :3], np.eye(3), atol=1e-10)
