"""A free-running simulator (7-DOF arm, real time): publish rate, tf names and values,
late joiners, /clock and diagnostics."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from ros_vi.ros import qos
from ros_vi.ros.conversions import stamp_to_ns, transform_to_matrix
from ros_vi.urdf import import_urdf_file

from .harness import SimProcess, kv, urdf, wait_until

RATE, PUBLISH_RATE = 500.0, 100.0
DIAGNOSTICS_PERIOD, MAX_CATCH_UP = 0.5, 0.25      # wall s (max_catch_up is the default)


@pytest.fixture(scope='module')
def arm(probe):
    sim = SimProcess({'urdf_file': urdf('arm7'), 'rate': RATE, 'publish_rate': PUBLISH_RATE,
                      'real_time_factor': 1.0, 'diagnostics_period': DIAGNOSTICS_PERIOD,
                      'max_catch_up': MAX_CATCH_UP,
                      'initial_joints': ['joint_2', 'joint_4'],
                      'initial_positions': [0.4, -0.8]})
    # a deep reader queue: on a loaded machine the probe's executor can fall 100 ms behind,
    # and the default depth 10 would then drop states the stamp check below counts on
    deep = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                      reliability=ReliabilityPolicy.RELIABLE)
    sim.js = probe.subscribe(JointState, sim.topic('joint_states'), deep)
    sim.js.wait(what='the first joint_states', timeout=30)
    yield sim
    sim.stop_cleanly()


def test_joint_states_rate_within_5_percent(arm):
    """Count messages over 3 s of wall time (after a 1 s settling window: the first second
    of a cold process can stall on loading)."""
    rec = arm.js
    rec.wait(what='joint_states')
    with rec.lock:
        start = rec.items[-1][0]
    wait_until(lambda: rec.items[-1][0] > start + 4.0, timeout=30,
               what='4 s of joint_states')
    with rec.lock:
        times = np.array([t for t, _ in rec.items])
        stamps = np.array([stamp_to_ns(m.header.stamp) for _, m in rec.items])
    window = (times >= start + 1.0) & (times < start + 4.0)
    count = int(window.sum())
    assert abs(count - 3.0 * PUBLISH_RATE) <= 0.05 * 3.0 * PUBLISH_RATE, count
    # in simulation time the stream is exact: one message every 1/publish_rate s
    steps = np.diff(stamps[window])
    assert np.all(steps == int(1e9 / PUBLISH_RATE)), np.unique(steps)


def test_tf_names_and_values_match_core_kinematics(probe, arm):
    tf = probe.subscribe(TFMessage, arm.topic('tf'), qos.TF_QOS)
    try:
        msg = tf.wait(what='tf')
        stamp = stamp_to_ns(msg.transforms[0].header.stamp)
        js = arm.js.wait(lambda m: stamp_to_ns(m.header.stamp) == stamp,
                         what='the joint_states of the tf stamp')
    finally:
        probe.unsubscribe(tf)
    # one transform per moving joint: parent link -> child link, all with the same stamp
    pairs = [(t.header.frame_id, t.child_frame_id) for t in msg.transforms]
    assert pairs == [('link_%d' % i, 'link_%d' % (i + 1)) for i in range(7)]
    assert {stamp_to_ns(t.header.stamp) for t in msg.transforms} == {stamp}
    # values: relative poses from the importer's forward kinematics at the published q
    system = import_urdf_file(urdf('arm7'))
    system.q = list(js.position)
    poses = system.urdf.link_poses()
    for t, (parent, child) in zip(msg.transforms, pairs):
        expected = np.linalg.inv(poses[parent]) @ poses[child]
        np.testing.assert_allclose(transform_to_matrix(t.transform), expected, atol=1e-12)
    assert not np.allclose(js.position, 0.0)


def test_late_joiner_gets_description_and_tf_static(probe, arm):
    desc = probe.subscribe(String, arm.topic('robot_description'), qos.LATCHED_QOS)
    static = probe.subscribe(TFMessage, arm.topic('tf_static'), qos.LATCHED_QOS)
    try:
        with open(urdf('arm7')) as fh:
            assert desc.wait(what='robot_description').data == fh.read()
        names = [t.child_frame_id for t in static.wait(what='tf_static').transforms]
        assert names == ['link_0', 'flange', 'tool']
    finally:
        probe.unsubscribe(desc)
        probe.unsubscribe(static)


def test_clock_advances_with_the_ticks(probe, arm):
    clock = probe.subscribe(Clock, arm.topic('clock'), qos.CLOCK_QOS)
    try:
        clock.wait(lambda m: True, what='clock')
        wait_until(lambda: len(clock.msgs) >= 100, what='100 clock messages')
        with clock.lock:
            items = list(clock.items)
    finally:
        probe.unsubscribe(clock)
    ns = np.array([stamp_to_ns(m.clock) for _, m in items])
    steps = np.diff(ns)
    assert np.all(steps > 0)
    # the clock goes out at clock_rate (default 100 Hz of simulation time): 10 ms apart,
    # five 2 ms ticks
    assert np.median(steps) == 10_000_000 and np.all(steps % 2_000_000 == 0)
    # joint_states stamps are simulation time too
    assert abs(stamp_to_ns(arm.js.last().header.stamp) - ns[-1]) < 0.5e9


def test_diagnostics_report_rate_iterations_and_energy(probe, arm):
    diag = probe.subscribe(DiagnosticArray, arm.topic('diagnostics'))
    try:
        msg = diag.wait(lambda m: float(kv(m)['tick_rate_hz']) > 0
                        and m.status[0].level == DiagnosticStatus.OK, what='OK diagnostics')
    finally:
        probe.unsubscribe(diag)
    values = kv(msg)
    status = msg.status[0]
    assert status.level == DiagnosticStatus.OK, status.message
    # over one period the loop runs RATE ticks per wall second, plus a caught-up backlog of
    # at most max_catch_up wall s (after a stall on a loaded machine), minus nothing while
    # the status is OK (behind real time is a WARN below 95 %)
    backlog = MAX_CATCH_UP + 1.0 / RATE
    assert 0.95 * RATE <= float(values['tick_rate_hz']) \
        <= RATE * (1.0 + backlog / DIAGNOSTICS_PERIOD) * 1.02
    assert 1 <= float(values['iterations_mean']) <= 10
    assert np.isfinite(float(values['energy']))
    assert values['failures'] == '0' and values['paused'] == 'false'


def test_the_falling_arm_stops_on_its_urdf_limits(arm):
    """The arm falls from its start onto the limits of joints 2 and 4 (enforced by default):
    no published position is past a bound, and joint_2 comes to lie on its upper bound,
    published at rest (velocity exactly 0: a joint held on a limit does not move)."""
    lower, upper = import_urdf_file(urdf('arm7')).urdf.position_limits
    wait_until(lambda: stamp_to_ns(arm.js.last().header.stamp) > 2.0e9, timeout=30,
               what='2 s of simulation')
    with arm.js.lock:
        msgs = [m for _, m in arm.js.items]
    positions = np.array([m.position for m in msgs])
    assert np.all(positions >= lower) and np.all(positions <= upper)
    last = msgs[-1]
    assert last.position[1] == upper[1] and last.velocity[1] == 0.0
