"""A floating robot over DDS: ``floating_base`` with an initial base pose and twist;
/tf has odom -> base (and the legs relative to the base, no helper frame) as an offline
Simulation of the same set-up predicts at every published stamp, /odom carries the same
pose and the body twist, joint_states lists the hips only; the node's MCAP recording has
the base on its /tf."""
import os
import shutil
import tempfile

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

import floating_case as case
from ros_vi.recording import load_recording
from ros_vi.ros.conversions import pose_to_matrix, stamp_to_ns, transform_to_matrix
from ros_vi.ros.simulator_node import ParameterError, SimulatorNode
from ros_vi.simulation import Simulation, setup_robot

from .harness import SimProcess
from .test_sim_record import _read_bag

RATE = 100.0
STEP_TICKS = 10
CALLS = 4
DEEP = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                  reliability=ReliabilityPolicy.RELIABLE)


@pytest.fixture(scope='module')
def sim(probe):
    folder = tempfile.mkdtemp(prefix='ros_vi_floating_')
    path = os.path.join(folder, 'walker.urdf')
    with open(path, 'w') as fh:
        fh.write(case.URDF)
    proc = SimProcess({'urdf_file': path, 'record': os.path.join(folder, 'run.mcap'),
                       'rate': RATE, 'publish_rate': RATE,
                       'real_time_factor': 0.0, 'start_paused': True,
                       'step_ticks': STEP_TICKS, 'floating_base': True,
                       'initial_base_pose': list(case.POSE),
                       'initial_base_twist': list(case.TWIST),
                       'initial_positions': list(case.HIPS),
                       'gravity': [0.0, 0.0, -case.G]})
    proc.tf = probe.subscribe(TFMessage, proc.topic('tf'), DEEP)
    proc.odom = probe.subscribe(Odometry, proc.topic('odom'), DEEP)
    proc.js = probe.subscribe(JointState, proc.topic('joint_states'), DEEP)
    proc.wait_started()
    for _ in range(CALLS):
        resp = probe.call(proc.service('step'))
        assert resp.success, resp.message
    end = int(round(CALLS * STEP_TICKS / RATE * 1e9))
    for rec in (proc.tf, proc.odom, proc.js):
        rec.wait(lambda m: stamp(m) == end, what='the last stepped state')
    proc.bag = os.path.join(folder, 'run.mcap')
    yield proc
    if proc.alive():
        proc.stop_cleanly()
    shutil.rmtree(folder)


def stamp(msg):
    header = msg.transforms[0].header if isinstance(msg, TFMessage) else msg.header
    return stamp_to_ns(header.stamp)


@pytest.fixture(scope='module')
def offline():
    """{tick: SimState} of the same set-up run in this process."""
    setup = setup_robot(case.URDF, gravity=(0.0, 0.0, -case.G), floating_base=True,
                        initial_base_pose=case.POSE, initial_base_twist=case.TWIST,
                        initial_positions=list(case.HIPS))
    sim = Simulation.from_setup(setup, 1.0 / RATE, command_timeout=0.5, command_decay=0.05)
    states = {0: sim.state()}
    transforms = {0: sim.link_transforms()}
    for k in range(1, CALLS * STEP_TICKS + 1):
        assert sim.tick().ok
        states[k] = sim.state()
        transforms[k] = sim.link_transforms()
    return states, transforms


def tick_of(msg):
    return int(round(stamp(msg) * RATE / 1e9))


def test_tf_has_odom_to_base_as_the_simulation_predicts(sim, offline):
    states, transforms = offline
    msgs = sim.tf.msgs
    assert len(msgs) >= STEP_TICKS         # at least the last ~/step's states
    for msg in msgs:
        k = tick_of(msg)
        pairs = [(t.header.frame_id, t.child_frame_id) for t in msg.transforms]
        assert pairs == [('odom', 'base'), ('base', 'leg_left'), ('base', 'leg_right')]
        np.testing.assert_allclose(transform_to_matrix(msg.transforms[0].transform),
                                   states[k].bodies[0].pose, atol=1e-9)
        for t, (_, _, g) in zip(msg.transforms[1:], transforms[k]):
            np.testing.assert_allclose(transform_to_matrix(t.transform), g, atol=1e-9)
    # the base moved: it is a tumbling, falling body
    last = msgs[-1]
    assert tick_of(last) == CALLS * STEP_TICKS
    z = transform_to_matrix(last.transforms[0].transform)[2, 3]
    assert z < case.POSE[2] - 0.05


def test_odom_carries_the_base_pose_and_body_twist(sim, offline):
    states, _ = offline
    msgs = sim.odom.msgs
    assert len(msgs) >= STEP_TICKS
    for msg in msgs:
        base = states[tick_of(msg)].bodies[0]
        assert (msg.header.frame_id, msg.child_frame_id) == ('odom', 'base')
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        np.testing.assert_allclose(pose_to_matrix((p.x, p.y, p.z), (o.x, o.y, o.z, o.w)),
                                   base.pose, atol=1e-9)
        lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
        np.testing.assert_allclose((lin.x, lin.y, lin.z), base.linear, atol=1e-9)
        np.testing.assert_allclose((ang.x, ang.y, ang.z), base.angular, atol=1e-9)
        assert not any(msg.pose.covariance) and not any(msg.twist.covariance)
    # the twist moved on from the initial one (gravity, and the legs swinging out)
    assert not np.allclose((lin.x, lin.y, lin.z), case.TWIST[:3], atol=1e-3)


def test_joint_states_list_the_hips_only(sim, offline):
    states, _ = offline
    msgs = sim.js.msgs
    assert msgs
    for msg in msgs:
        assert list(msg.name) == case.JOINTS
        np.testing.assert_allclose(msg.position, states[tick_of(msg)].joint_states()[1],
                                   atol=1e-9)


def test_the_recording_has_the_base_on_tf(sim):
    """Last: stops the node to finish its MCAP."""
    received = {stamp(m): m for m in sim.tf.msgs}
    sim.stop_cleanly()
    bag = _read_bag(sim.bag)
    recorded = {stamp_to_ns(m.transforms[0].header.stamp): m for _, m in bag[sim.topic('tf')]}
    assert len(recorded) == CALLS * STEP_TICKS + 1        # the start and every tick
    assert set(received) <= set(recorded)
    for ns, msg in received.items():
        for got, kept in zip(msg.transforms, recorded[ns].transforms):
            assert (got.header.frame_id, got.child_frame_id) == (kept.header.frame_id,
                                                                  kept.child_frame_id)
            t, r = kept.transform.translation, kept.transform.rotation
            np.testing.assert_array_equal(transform_to_matrix(got.transform), pose_to_matrix(
                (t.x, t.y, t.z), (r.x, r.y, r.z, r.w)))
    assert all(m.transforms[0].child_frame_id == 'base' for m in recorded.values())
    # read back: the base pose from /tf, its frame from the metadata
    rec = load_recording(sim.bag)
    assert rec.joint_names == case.JOINTS and rec.bodies == ['base']
    assert rec.metadata['free_bodies'] == {'base': 'odom'}
    for k, ns in enumerate(np.round(rec.t * 1e9).astype(int)):
        x = rec.body_pose[k, 0]
        np.testing.assert_array_equal(pose_to_matrix(x[:3], x[3:]), transform_to_matrix(
            recorded[ns].transforms[0].transform))


@pytest.mark.parametrize('overrides, match', [
    ({'initial_base_pose': [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]},
     'parameter initial_base_pose: needs floating_base:=true'),
    ({'floating_base': True, 'initial_base_twist': [1.0, 2.0]},
     'parameter initial_base_twist: expected 6 numbers \\(or none\\), got 2'),
    ({'floating_base': True, 'odom_frame': ' '},
     'parameter odom_frame: a frame name is needed with floating_base'),
    ({'floating_base': True, 'command_interfaces': ['root_joint_z:effort']},
     "parameter command_interfaces: 'root_joint_z' is a coordinate of a free joint"),
    ({'floating_base': True, 'drive_gains': ['root_joint_rx:1,1']},
     "parameter drive_gains: 'root_joint_rx' is a coordinate of a free joint"),
])
def test_bad_floating_parameters_are_refused_naming_them(probe, overrides, match):
    params = [Parameter('robot_description', value=case.URDF)] + [
        Parameter(k, value=v) for k, v in overrides.items()]
    with pytest.raises(ParameterError, match=match):
        SimulatorNode(context=probe.context, node_name='bad_floating',
                      parameter_overrides=params)
