"""The simulator node and the URDF tolerance policy: a tolerated quirk is logged once at
start; with strict_urdf the node exits naming it; a robot without moving joints runs."""
import numpy as np
import pytest
from rclpy.parameter import Parameter

from ros_vi.control.joint_trajectory import JointTrajectory, TrajectoryError

from ros_vi.ros.simulator_node import SimulatorNode

from .harness import SimProcess

QUIRKY = '''<?xml version="1.0"?>
<robot name="quirky">
  <link name="a"/>
  <link name="b"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <joint name="j" type="continuous"><parent link="a"/><child link="b"/><axis xyz="1 0 0"/>
    <mimic joint="ghost"/></joint>
</robot>
'''
QUIRK = "joint 'j': mimics the missing joint 'ghost'"


def test_strict_urdf_refuses_a_quirky_description_naming_the_quirk():
    sim = SimProcess({'robot_description': QUIRKY, 'strict_urdf': True})
    sim.proc.wait(60)
    code, out = sim.stop()
    assert code == 2, out
    assert QUIRK in out and 'strict' in out
    assert 'Traceback' not in out


def test_a_tolerated_quirk_is_logged_once(probe):
    sim = SimProcess({'robot_description': QUIRKY, 'start_paused': True})
    try:
        sim.wait_started()
        out = sim.output()
    finally:
        sim.stop()
    assert out.count(QUIRK) == 1, out


def test_a_robot_without_moving_joints_runs(probe):
    urdf = QUIRKY.replace('type="continuous"', 'type="fixed"').replace(
        '<mimic joint="ghost"/>', '')
    node = SimulatorNode(context=probe.context, node_name='rigid_sim', parameter_overrides=[
        Parameter('robot_description', value=urdf), Parameter('start_paused', value=True)])
    try:
        assert node.sim.joint_names == [] and node.sim.robot.warnings == ()
        assert [(p, c) for p, c, _ in node.sim.static_transforms()] == [('a', 'b')]
        node.sim.step(3)
        state = node.sim.state()
        assert abs(state.t - 3 * node.sim.dt) < 1e-12 and state.positions.size == 0
    finally:
        node.destroy_node()


def test_urdf_inertia_parameter_balances_a_triangle_violation(probe):
    urdf = QUIRKY.replace('<mimic joint="ghost"/>', '').replace('izz="0.1"', 'izz="0.5"')
    node = SimulatorNode(context=probe.context, node_name='balanced_sim', parameter_overrides=[
        Parameter('robot_description', value=urdf), Parameter('start_paused', value=True),
        Parameter('urdf_inertia', value='balance')])
    try:
        inertia = node.sim.system.get_frame('b::inertial').inertia
        assert abs(inertia - np.eye(3) * 0.7 / 3).max() < 1e-15
        assert [q.action for q in node.setup.warnings] == [
            "balanced it as MuJoCo's balanceinertia does (inertia='balance'): the principal "
            "moments set to their mean 0.233333333"]
    finally:
        node.destroy_node()


def test_the_trajectory_follower_refuses_a_goal_beyond_the_urdf_acceleration_limit(probe):
    urdf = QUIRKY.replace('<mimic joint="ghost"/>',
                          '<limit effort="10" velocity="5" acceleration="5" jerk="100"/>')
    node = SimulatorNode(context=probe.context, node_name='limited_sim', parameter_overrides=[
        Parameter('robot_description', value=urdf), Parameter('start_paused', value=True)])
    try:
        # rest to rest over 1 rad in 1 s (cubic): peak acceleration 6 rad/s^2
        fast = JointTrajectory(['j'], [0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.0]])
        with pytest.raises(TrajectoryError, match=r"joint 'j': .* reaches acceleration "
                                                  r"6/s\^2, beyond its limit 5"):
            node.followers['joint_trajectory_controller'].validate(fast)
        slow = JointTrajectory(['j'], [0.0, 2.0], [[0.0], [1.0]], [[0.0], [0.0]])
        node.followers['joint_trajectory_controller'].validate(slow)   # 1.5 rad/s^2, 1.5 rad/s^3
    finally:
        node.destroy_node()
