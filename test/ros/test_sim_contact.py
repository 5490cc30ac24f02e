"""Contact over DDS: the shipped worlds/drop.yaml (a ball dropped and a crate thrown onto a
ground with friction) in the simulator node: the bodies land and rest on the ground, the
diagnostics report the active contacts and the smallest gap, and each body's contact wrench
and the contact markers are published."""
import os

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from ros_vi.ros import qos
from ros_vi.ros.conversions import contact_topic, stamp_to_ns, transform_to_matrix

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
    # the ball on one point, the crate flat on its four bottom corners, none sliding (and
    # the ball and the crate held off each other, far apart: nine contacts, open)
    assert values['contacts'] == '18'
    assert values['contacts_active'] == '5' and values['contacts_sliding'] == '0'
    assert abs(float(values['contact_gap_min'])) <= 1e-12
    assert float(values['contact_complementarity']) <= 1e-12
    assert values['joints_at_limits'] == ''
    tf = probe.subscribe(TFMessage, drop.topic('tf'), qos.TF_QOS)
    try:
        msg = tf.wait(lambda m: any(t.child_frame_id == 'ball' for t in m.transforms),
                      what='the ball on tf')
    finally:
        probe.unsubscribe(tf)
    ball = next(t for t in msg.transforms if t.child_frame_id == 'ball')
    assert abs(transform_to_matrix(ball.transform)[2, 3] - 0.1) <= 1e-9


def test_each_body_publishes_its_contact_wrench_and_the_contacts_are_drawn(probe, drop):
    """At rest, each body's ~/contact_wrench/<body> is its weight, up, in its own axes (the
    ball spins about the vertical, the crate is yawed: neither is tilted), with no moment
    about its centre (the frame's origin); ~/contact_markers draws the five touching points
    (a sphere and a force arrow each, in the bodies' frames) after a DELETEALL."""
    wrenches = {body: probe.subscribe(WrenchStamped, drop.topic('simulator/contact_wrench/'
                                                                + body))
                for body in ('ball', 'crate')}
    markers = probe.subscribe(MarkerArray, drop.topic('simulator/contact_markers'))
    try:
        late = 1.5e9
        got = {body: rec.wait(lambda m: stamp_to_ns(m.header.stamp) > late,
                              what='%s contact wrench after 1.5 s' % body)
               for body, rec in wrenches.items()}
        drawn = markers.wait(lambda m: stamp_to_ns(m.markers[-1].header.stamp) > late,
                             what='contact markers after 1.5 s')
    finally:
        for rec in list(wrenches.values()) + [markers]:
            probe.unsubscribe(rec)
    for body, mass in (('ball', 1.0), ('crate', 2.0)):
        msg = got[body]
        assert msg.header.frame_id == body
        f, m = msg.wrench.force, msg.wrench.torque
        assert np.allclose([f.x, f.y, f.z], [0.0, 0.0, mass * 9.81], rtol=0, atol=1e-9)
        assert np.allclose([m.x, m.y, m.z], 0.0, rtol=0, atol=1e-9)
    assert drawn.markers[0].action == Marker.DELETEALL
    shown = drawn.markers[1:]
    assert sorted(m.ns for m in shown) == ['contact_forces'] * 5 + ['contact_points'] * 5
    assert sorted(m.header.frame_id for m in shown if m.ns == 'contact_points') == \
        ['ball'] + ['crate'] * 4
    ball = next(m for m in shown if m.ns == 'contact_forces' and m.header.frame_id == 'ball')
    start, tip = ([p.x, p.y, p.z] for p in ball.points)
    assert np.allclose(start, [0.0, 0.0, -0.1], atol=1e-12)
    # the default scale, 0.005 m per newton
    assert np.allclose(np.subtract(tip, start), [0.0, 0.0, 0.005 * 9.81], atol=1e-9)


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


@pytest.mark.parametrize('link, token', [('dog/FL_foot', 'dog/FL_foot'),
                                         ('arm-1/link.2', 'arm_1/link_2'),
                                         ('3rd link', '_3rd_link'), ('/a//b/', 'a/b')])
def test_link_names_become_valid_contact_topics(link, token):
    from rclpy.validate_topic_name import validate_topic_name
    assert contact_topic(link) == token
    assert validate_topic_name('~/contact_wrench/' + token)
