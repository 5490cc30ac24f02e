"""The simulator's ``record`` parameter: a ROS 2 MCAP of what the node publishes, read back
with rosbags (types from the embedded definitions) and compared with what a probe received
over DDS."""
import signal

import numpy as np
import pytest
from rclpy.parameter import Parameter
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from ros_vi.recording import load_recording
from ros_vi.ros import qos
from ros_vi.ros.conversions import stamp_to_ns
from ros_vi.ros.simulator_node import ParameterError, SimulatorNode
from ros_vi.urdf import load_urdf_text

from .harness import SimProcess, assert_clean_exit, urdf, wait_until


def _read_bag(path):
    store = get_typestore(Stores.EMPTY)
    out = {}
    with Reader(path) as reader:
        for conn in reader.connections:
            store.register(get_types_from_msg(conn.msgdef.data, conn.msgtype))
        for conn, stamp, raw in reader.messages():
            out.setdefault(conn.topic, []).append(
                (stamp, store.deserialize_cdr(raw, conn.msgtype)))
    return out


def _tf_tuples(msg):
    return [(t.header.frame_id, t.child_frame_id, stamp_to_ns(t.header.stamp),
             t.transform.translation.x, t.transform.translation.y, t.transform.translation.z,
             t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
             t.transform.rotation.w) for t in msg.transforms]


def test_record_writes_what_the_node_publishes(probe, tmp_path):
    path = tmp_path / 'sim.mcap'
    sim = SimProcess({'urdf_file': urdf('arm7'), 'rate': 200.0, 'publish_rate': 50.0,
                      'initial_joints': ['joint_2'], 'initial_positions': [0.4],
                      'record': str(path)})
    js = probe.subscribe(JointState, sim.topic('joint_states'))
    tf = probe.subscribe(TFMessage, sim.topic('tf'), qos.TF_QOS)
    try:
        js.wait(lambda m: m.header.stamp.sec >= 1, what='joint_states after 1 s', timeout=60)
        # discovery may take a while on a loaded machine: the comparison needs messages
        # the probe actually received, however late it started receiving them
        wait_until(lambda: len(js.msgs) >= 10 and len(tf.msgs) >= 10,
                   what='10 joint_states and tf messages at the probe', timeout=60)
    finally:
        probe.unsubscribe(js)
        probe.unsubscribe(tf)
        code, out = sim.stop()
    assert_clean_exit(code, out)
    assert 'recording to %s' % path in out

    bag = _read_bag(path)
    ns = sim.namespace
    assert sorted(bag) == sorted(ns + '/' + t for t in ('joint_states', 'tf', 'tf_static',
                                                       'clock', 'robot_description', 'energy'))
    states = bag[ns + '/joint_states']
    stamps = [stamp_to_ns(m.header.stamp) for _, m in states]
    assert [logged for logged, _ in states] == stamps
    # every published state from t = 0 on, at publish_rate (50 Hz: 20 ms of simulation time)
    assert stamps[0] == 0 and stamps[-1] >= 1_000_000_000
    assert np.all(np.diff(stamps) == 20_000_000)
    assert len(bag[ns + '/tf']) == len(bag[ns + '/clock']) == len(states)
    assert [stamp_to_ns(m.clock) for _, m in bag[ns + '/clock']] == stamps

    # what the probe received over DDS, at the same stamps, equals the recording
    received = {stamp_to_ns(m.header.stamp): m for m in js.msgs}
    common = sorted(set(received) & set(stamps))
    assert len(common) >= 10
    recorded = dict(zip(stamps, (m for _, m in states)))
    for stamp in common:
        a, b = recorded[stamp], received[stamp]
        assert list(a.name) == list(b.name) == ['joint_%d' % i for i in range(1, 8)]
        for key in ('position', 'velocity', 'effort'):
            assert list(getattr(a, key)) == list(getattr(b, key)), (stamp, key)
    tf_received = {stamp_to_ns(m.transforms[0].header.stamp): m for m in tf.msgs}
    tf_recorded = {stamp_to_ns(m.transforms[0].header.stamp): m for _, m in bag[ns + '/tf']}
    tf_common = sorted(set(tf_received) & set(tf_recorded))
    assert len(tf_common) >= 10
    for stamp in tf_common:
        assert _tf_tuples(tf_recorded[stamp]) == _tf_tuples(tf_received[stamp])

    (static,) = bag[ns + '/tf_static']
    assert [(t.header.frame_id, t.child_frame_id) for t in static[1].transforms] == \
        [('world', 'link_0'), ('link_7', 'flange'), ('flange', 'tool')]
    (desc,) = bag[ns + '/robot_description']
    assert desc[1].data == load_urdf_text(urdf('arm7'))

    rec = load_recording(path)
    assert [round(t * 1e9) for t in rec.t] == stamps
    assert rec.metadata['source'] == 'ros_vi simulator node'
    assert rec.metadata['node'] == ns + '/simulator' and rec.metadata['publish_rate'] == 50.0
    assert rec.metadata['end_time'] >= rec.t[-1] and rec.metadata['failures'] == 0
    assert np.all(np.isfinite(rec.energy))


def test_sigterm_finishes_the_recording(probe, tmp_path):
    path = tmp_path / 'term.mcap'
    sim = SimProcess({'urdf_file': urdf('pendulum'), 'rate': 100.0, 'publish_rate': 100.0,
                      'publish_clock': False, 'record': str(path)})
    js = probe.subscribe(JointState, sim.topic('joint_states'))
    try:
        js.wait(lambda m: m.header.stamp.sec >= 1, what='joint_states after 1 s', timeout=60)
    finally:
        probe.unsubscribe(js)
    sim.proc.send_signal(signal.SIGTERM)
    wait_until(lambda: sim.proc.poll() is not None, what='the simulator to exit on SIGTERM')
    code, out = sim.stop()
    assert_clean_exit(code, out)
    rec = load_recording(path)
    assert rec.joint_names == ['theta'] and rec.t[-1] >= 1.0
    assert np.all(np.diff(rec.t) > 0)
    assert sim.topic('clock') not in _read_bag(path)       # publish_clock false: no clock


@pytest.mark.parametrize('record, match', [
    ('{tmp}/no_such_dir/run.mcap', r"parameter record: recording '.*no_such_dir/run\.mcap': "
                                   r"cannot write it: No such file or directory"),
    ('{tmp}/run.bag', r"parameter record: expected the path of a \.mcap file, got "
                      r"'.*run\.bag'"),
])
def test_a_bad_record_path_is_refused_at_start(probe, tmp_path, record, match):
    with pytest.raises(ParameterError, match=match):
        SimulatorNode(context=probe.context, node_name='bad_record', parameter_overrides=[
            Parameter('urdf_file', value=urdf('pendulum')),
            Parameter('record', value=record.format(tmp=tmp_path))])
    assert list(tmp_path.iterdir()) == []
