"""Services (reset, pause, unpause, step), commands over topics versus the core's
prediction, saturation, timeout and rejected commands, on a paused acrobot."""
import re

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import Log, Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ros_vi.ros import qos
from ros_vi.ros.conversions import stamp_to_ns
from ros_vi.simulation import Simulation

from .harness import SimProcess, kv, urdf, wait_until

RATE = 200.0
DT_NS = 5_000_000
TIMEOUT = 0.1           # command_timeout [s] = 20 ticks
Q0 = [0.3, -0.2]


@pytest.fixture(scope='module')
def sim(probe):
    proc = SimProcess({'urdf_file': urdf('acrobot'), 'rate': RATE, 'publish_rate': 50.0,
                       'start_paused': True, 'real_time_factor': 1.0,
                       'command_timeout': TIMEOUT, 'command_decay': 0.0,
                       'initial_positions': Q0, 'diagnostics_period': 0.1})
    proc.js = probe.subscribe(JointState, proc.topic('joint_states'))
    proc.clock = probe.subscribe(Clock, proc.topic('clock'), qos.CLOCK_QOS)
    proc.diag = probe.subscribe(DiagnosticArray, proc.topic('diagnostics'))
    proc.cmd = probe.publisher(JointState, proc.topic('joint_commands'))
    proc.array = probe.publisher(Float64MultiArray, proc.topic('effort_controller/commands'))
    probe.call(proc.service('pause'))
    yield proc
    proc.stop_cleanly()


def latest_ns(rec):
    m = rec.last()
    return -1 if m is None else stamp_to_ns(m.header.stamp)


def step(probe, sim):
    """Call ~/step (paused) and return the joint_states it published."""
    resp = probe.call(sim.service('step'))
    assert resp.success, resp.message
    t = float(re.search(r't=([0-9.]+)', resp.message).group(1))
    ns = int(round(t * 1e9))
    return sim.js.wait(lambda m: stamp_to_ns(m.header.stamp) == ns,
                       what='joint_states at t=%.6f' % t)


def set_step_ticks(probe, sim, n):
    req = SetParameters.Request(parameters=[ParameterMsg(
        name='step_ticks', value=ParameterValue(type=ParameterType.PARAMETER_INTEGER,
                                                integer_value=n))])
    resp = probe.call(sim.service('set_parameters'), SetParameters, req)
    assert resp.results[0].successful, resp.results[0].reason


def reset(probe, sim):
    resp = probe.call(sim.service('reset'))
    assert resp.success
    t = float(re.search(r't=([0-9.]+)', resp.message).group(1))
    msg = sim.js.wait(lambda m: stamp_to_ns(m.header.stamp) == int(round(t * 1e9))
                      and list(m.position) == Q0, what='the reset state')
    return msg


def send_until_applied(probe, sim, effort, array=False):
    """Publish a command while paused, then step one tick at a time until joint_states
    shows a non-zero effort.  Returns (ticks before, efforts list, messages)."""
    if array:
        sim.array.publish(Float64MultiArray(data=[effort]))
    else:
        sim.cmd.publish(JointState(name=['elbow'], effort=[effort]))
    zero = 0
    while True:
        msg = step(probe, sim)
        if msg.effort[1] != 0.0:
            return zero, msg
        zero += 1
        assert zero < 200, 'the command never arrived'


def core_prediction(t0, zero_ticks, effort, total_ticks):
    core = Simulation.from_urdf_file(urdf('acrobot'), rate=RATE, command_timeout=TIMEOUT,
                                     command_decay=0.0, initial_positions=Q0, t0=t0)
    states = []
    for k in range(total_ticks):
        if k == zero_ticks:
            core.set_commands({'elbow': effort})
        core.tick()
        states.append(core.state())
    return states


@pytest.mark.parametrize('effort, applied, array', [(4.0, 4.0, False), (25.0, 20.0, False),
                                                    (-3.0, -3.0, True)])
def test_commands_move_the_robot_as_the_core_predicts(probe, sim, effort, applied, array):
    """Includes saturation at the URDF limit (25 -> 20 N m) and the command timeout:
    the command acts for 0.1 s (21 ticks of 5 ms, age 0 ... 0.1 s) then decays to zero."""
    start = reset(probe, sim)
    t0 = stamp_to_ns(start.header.stamp) * 1e-9
    zero, first = send_until_applied(probe, sim, effort, array)
    msgs = [first] + [step(probe, sim) for _ in range(29)]
    efforts = [m.effort[1] for m in msgs]
    assert efforts == [applied] * 21 + [0.0] * 9
    assert all(m.effort[0] == 0.0 for m in msgs)        # the shoulder is passive
    predicted = core_prediction(t0, zero, effort, zero + 30)[zero:]
    for m, p in zip(msgs, predicted):
        assert stamp_to_ns(m.header.stamp) == int(round(p.t * 1e9))
        np.testing.assert_allclose(m.position, p.positions, rtol=0, atol=1e-9)
        np.testing.assert_allclose(m.velocity, p.velocities, rtol=0, atol=1e-9)
    assert abs(msgs[-1].position[1] - Q0[1]) > 1e-3      # it did move


def test_step_advances_n_ticks_and_the_clock(probe, sim):
    set_step_ticks(probe, sim, 5)
    try:
        before = latest_ns(sim.js)
        resp = probe.call(sim.service('step'))
        assert resp.success and 'stepped 5 ticks' in resp.message
        msg = sim.js.wait(lambda m: stamp_to_ns(m.header.stamp) >= before + 5 * DT_NS,
                          what='joint_states after 5 ticks')
        assert stamp_to_ns(msg.header.stamp) == before + 5 * DT_NS
        clock = sim.clock.wait(lambda m: stamp_to_ns(m.clock) == before + 5 * DT_NS,
                               what='the clock after 5 ticks')
        assert clock is not None
    finally:
        set_step_ticks(probe, sim, 1)


def test_pause_unpause_and_step_refused_while_running(probe, sim):
    before = latest_ns(sim.js)
    assert probe.call(sim.service('unpause')).success
    sim.js.wait(lambda m: stamp_to_ns(m.header.stamp) >= before + 20 * DT_NS,
                what='running joint_states')
    resp = probe.call(sim.service('step'))
    assert not resp.success and 'not paused' in resp.message
    resp = probe.call(sim.service('pause'))
    assert resp.success
    t_pause = int(round(float(re.search(r't=([0-9.]+)', resp.message).group(1)) * 1e9))
    # paused: time does not move until ~/step, which advances exactly one tick
    msg = step(probe, sim)
    assert stamp_to_ns(msg.header.stamp) == t_pause + DT_NS


def test_reset_returns_to_the_initial_state(probe, sim):
    send_until_applied(probe, sim, 5.0)
    for _ in range(5):
        moved = step(probe, sim)
    assert list(moved.position) != Q0
    before = stamp_to_ns(moved.header.stamp)
    msg = reset(probe, sim)
    assert list(msg.position) == Q0
    np.testing.assert_allclose(msg.velocity, 0.0, atol=1e-15)
    assert list(msg.effort) == [0.0, 0.0]
    assert stamp_to_ns(msg.header.stamp) >= before     # stamps stay monotonic
    # the commands were cleared: the next tick applies nothing
    assert step(probe, sim).effort[1] == 0.0


BAD_COMMANDS = [
    ('joint_commands', JointState(name=['elbow'], effort=[float('nan')]),
     "non-finite effort for joint 'elbow'"),
    ('joint_commands', JointState(name=['elbow'], effort=[float('inf')]),
     "non-finite effort for joint 'elbow'"),
    ('joint_commands', JointState(name=['elbow'], effort=[1.0, 2.0]), '1 names but 2 efforts'),
    ('joint_commands', JointState(name=['elbow', 'wrist'], effort=[1.0, 2.0]),
     "unknown joint name 'wrist'"),
    ('joint_commands', JointState(name=[], effort=[]), 'no joint names'),
    ('array', Float64MultiArray(data=[1.0, 2.0]), 'expected 1 efforts for joints [elbow], got 2'),
    ('array', Float64MultiArray(data=[float('nan')]), "non-finite effort for joint 'elbow'"),
]


def test_bad_commands_rejected_with_warning_and_previous_kept(probe, sim):
    rosout = probe.subscribe(Log, '/rosout', QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    try:
        reset(probe, sim)
        send_until_applied(probe, sim, 2.0)
        logger = sim.namespace.strip('/').replace('/', '.') + '.simulator'
        for topic, msg, problem in BAD_COMMANDS:
            sim.diag.wait(what='diagnostics')
            n0 = int(kv(sim.diag.last())['rejected_commands'])
            (sim.cmd if topic == 'joint_commands' else sim.array).publish(msg)
            d = sim.diag.wait(lambda m: int(kv(m)['rejected_commands']) > n0,
                              what='the rejection of %r' % problem)
            assert problem in kv(d)['last_rejection']
            assert d.status[0].level == DiagnosticStatus.WARN and 'rejected command' in d.status[0].message
            # the previous command stays in force
            assert step(probe, sim).effort[1] == 2.0
        # a (throttled) warning naming the problem went to the log
        warn = rosout.wait(lambda m: m.name == logger and 'rejected command' in m.msg,
                           what='a rejection warning on /rosout')
        assert warn.level == Log.WARN
        assert any(p in warn.msg for _, _, p in BAD_COMMANDS)
    finally:
        probe.unsubscribe(rosout)
