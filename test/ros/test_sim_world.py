"""A world file over DDS (``world_file``): two acrobots under their prefixes and a thrown
ball; joint_states lists the robots' joints, /tf carries the ball on its closed-form flight
(x0 + v0 t + g t^2/2: exact for the midpoint step under constant gravity)."""

import numpy as np
import pytest
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from ros_vi.ros.conversions import stamp_to_ns, transform_to_matrix

from .harness import SimProcess, urdf

RATE = 100.0
TICKS = 20
DEEP = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                  reliability=ReliabilityPolicy.RELIABLE)
G = np.array([0.0, 0.0, -9.81])
X0, V0 = np.array([2.0, 0.0, 1.0]), np.array([0.5, 1.0, 3.0])
WORLD = """
gravity: [0, 0, -9.81]
robots:
  - {name: left, urdf: %(acrobot)s, pose: {xyz: [0, -1, 2]}}
  - {name: right, urdf: %(acrobot)s, pose: {xyz: [0, 1, 2]}}
objects:
  - {name: ball, shape: {sphere: 0.05}, mass: 0.1, pose: {xyz: [2, 0, 1]},
     twist: {linear: [0.5, 1.0, 3.0]}}
"""


@pytest.fixture(scope='module')
def sim(probe, tmp_path_factory):
    path = tmp_path_factory.mktemp('world') / 'scene.yaml'
    path.write_text(WORLD % {'acrobot': urdf('acrobot')})
    proc = SimProcess({'world_file': str(path), 'rate': RATE, 'publish_rate': RATE,
                       'real_time_factor': 0.0, 'start_paused': True, 'step_ticks': TICKS})
    proc.tf = probe.subscribe(TFMessage, proc.topic('tf'), DEEP)
    proc.js = probe.subscribe(JointState, proc.topic('joint_states'), DEEP)
    proc.wait_started()
    resp = probe.call(proc.service('step'))
    assert resp.success, resp.message
    end = int(round(TICKS / RATE * 1e9))
    proc.tf.wait(lambda m: stamp_to_ns(m.transforms[0].header.stamp) == end,
                 what='the stepped state')
    yield proc
    proc.stop_cleanly()


def test_joint_states_list_both_robots_under_their_prefixes(sim):
    msg = sim.js.wait(what='joint_states')
    assert list(msg.name) == ['left/shoulder', 'left/elbow', 'right/shoulder', 'right/elbow']


def test_the_ball_flies_on_tf_as_the_closed_form_says(sim):
    seen = 0
    for msg in sim.tf.msgs:
        t = stamp_to_ns(msg.transforms[0].header.stamp) * 1e-9
        ball = [tr for tr in msg.transforms if tr.child_frame_id == 'ball']
        assert len(ball) == 1 and ball[0].header.frame_id == 'world'
        x = transform_to_matrix(ball[0].transform)[:3, 3]
        np.testing.assert_allclose(x, X0 + V0 * t + 0.5 * G * t * t, atol=1e-12)
        seen += t > 0
    assert seen >= 1
