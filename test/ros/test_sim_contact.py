"""Contact over DDS: the shipped worlds/drop.yaml (a ball dropped and a crate thrown onto a
ground with friction) in the simulator node: the bodies land and rest on the ground, and the
diagnostics report the active contacts and the smallest gap."""
import os

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from tf2_msgs.msg import TFMessage

from ros_vi.ros import qos
from ros_vi.ros.conversions import transform_to_matrix

from .harness import SimProcess, kv

WORLD = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'worlds', 'drop.yaml')


@pytest.fixture(scope='module')
def drop(probe):
    proc = SimProcess({'world_file': WORLD, 'rate': 500.0, 'publish_rate': 50.0,
                       'real_time_factor': 0.0, 'diagnostics_period': 0.2})
    proc.wait_started()
    yield proc
    proc.stop_cleanly()


def diagnostics_after(probe, proc, seconds):
    """The key/values of the first diagnostics after ``seconds`` of simulation."""
    diag = probe.subscribe(DiagnosticArray, proc.topic('diagnostics'))
    try:
        msg = diag.wait(lambda m: float(kv(m)['sim_time']) > seconds, timeout=120,
                        what='diagnostics after %g s of simulation' % seconds)
    finally:
        probe.unsubscribe(diag)
    return kv(msg)


def test_the_dropped_bodies_rest_on_the_ground(probe, drop):
    values = diagnostics_after(probe, drop, 1.5)
    # the ball on one point, the crate flat on its four bottom corners, none sliding
    assert values['contacts'] == '9'
    assert values['contacts_active'] == '5' and values['contacts_sliding'] == '0'
    assert abs(float(values['contact_gap_min'])) <= 1e-12
    assert values['joints_at_limits'] == ''
    tf = probe.subscribe(TFMessage, drop.topic('tf'), qos.TF_QOS)
    try:
        msg = tf.wait(lambda m: any(t.child_frame_id == 'ball' for t in m.transforms),
                      what='the ball on tf')
    finally:
        probe.unsubscribe(tf)
    ball = next(t for t in msg.transforms if t.child_frame_id == 'ball')
    assert abs(transform_to_matrix(ball.transform)[2, 3] - 0.1) <= 1e-9


BALL_URDF = """<robot name="ball"><link name="ball">
  <inertial><mass value="1"/><inertia ixx="0.004" iyy="0.004" izz="0.004" ixy="0" ixz="0"
    iyz="0"/></inertial>
  <collision><geometry><sphere radius="0.1"/></geometry></collision></link></robot>"""


def test_a_ground_parameter_holds_a_floating_robot(probe):
    """A plain URDF with ``ground``: its floating base (a ball) falls from 0.5 m and rests on
    the ground at its radius."""
    proc = SimProcess({'robot_description': BALL_URDF, 'floating_base': True,
                       'initial_base_pose': [0.0, 0.0, 0.5, 0.0, 0.0, 0.0],
                       'ground': [0.0, 0.8], 'rate': 500.0, 'publish_rate': 50.0,
                       'real_time_factor': 0.0, 'diagnostics_period': 0.2})
    try:
        proc.wait_started()
        values = diagnostics_after(probe, proc, 1.0)
        assert values['contacts'] == '1' and values['contacts_active'] == '1'
        assert abs(float(values['contact_gap_min'])) <= 1e-12
    finally:
        proc.stop_cleanly()
