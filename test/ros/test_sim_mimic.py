"""A robot with mimic joints over DDS: joint_states carry the mimic joints (position and
velocity from the leader, effort 0) and tf moves their links."""
import numpy as np
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from ros_vi.ros import qos
from ros_vi.ros.conversions import stamp_to_ns, transform_to_matrix
from ros_vi.urdf import import_urdf

import test_urdf_cases as cases

from .harness import SimProcess, assert_clean_exit


def test_mimic_joints_in_joint_states_and_tf(probe):
    xml = cases.mimic_robot()
    sim = SimProcess({'robot_description': xml, 'rate': 200.0, 'publish_rate': 50.0,
                      'initial_joints': ['jb'], 'initial_positions': [0.5]})
    js = probe.subscribe(JointState, sim.topic('joint_states'))
    tf = probe.subscribe(TFMessage, sim.topic('tf'), qos.TF_QOS)
    try:
        msg = js.wait(lambda m: m.header.stamp.sec >= 1, what='joint_states after 1 s',
                      timeout=60)
        frame = tf.wait(lambda m: stamp_to_ns(m.transforms[0].header.stamp)
                        == stamp_to_ns(msg.header.stamp), what='tf of that stamp')
    finally:
        probe.unsubscribe(js)
        probe.unsubscribe(tf)
        code, out = sim.stop()
    assert_clean_exit(code, out)
    assert list(msg.name) == ['ja', 'jb', 'jc', 'jd']
    qa, qb, qc, qd = msg.position
    assert abs(qc - (-1.5 * qb + 0.2)) < 1e-12 and abs(qd - (0.25 * qb - 0.05)) < 1e-12
    assert abs(msg.velocity[2] + 1.5 * msg.velocity[1]) < 1e-12
    assert list(msg.effort[2:]) == [0.0, 0.0]
    # gravity moved it: jb swings, so at any one instant it is away from its start or moving
    assert abs(qb - 0.5) > 1e-3 or abs(msg.velocity[1]) > 1e-3
    pairs = [(t.header.frame_id, t.child_frame_id) for t in frame.transforms]
    assert sorted(pairs) == [('a', 'b'), ('a', 'c'), ('a', 'd'), ('base', 'a')]
    system = import_urdf(xml)
    system.q = [qa, qb]
    poses = system.urdf.link_poses()
    for t, (parent, child) in zip(frame.transforms, pairs):
        expected = np.linalg.inv(poses[parent]) @ poses[child]
        np.testing.assert_allclose(transform_to_matrix(t.transform), expected, atol=1e-12)
