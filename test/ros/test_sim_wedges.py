"""The simulator cannot be wedged (over DDS): a rate the machine cannot hold runs behind real
time and says so while services keep answering; a burst of concurrent service calls is
answered call by call; ~/step is bounded by max_step_ticks and a long step does not stop the
node serving or publishing."""
import re
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from ros_vi.ros import qos
from ros_vi.ros.conversions import stamp_to_ns

from .harness import SimProcess, assert_clean_exit, kv, stop_all, urdf, wait_until

ANSWER = 5.0        # wall s a service call of a healthy node gets to answer (generous)


def _level(status):
    level = status.level
    return int.from_bytes(level, 'little') if isinstance(level, bytes) else int(level)


@pytest.fixture(scope='module')
def sims(probe):
    # 1 MHz: each arm tick costs tens of microseconds, so the node cannot keep up
    fast = SimProcess({'urdf_file': urdf('arm7'), 'rate': 1.0e6, 'publish_rate': 100.0,
                       'diagnostics_period': 0.3})
    paused = SimProcess({'urdf_file': urdf('arm7'), 'rate': 1000.0, 'start_paused': True,
                         'publish_rate': 100.0, 'max_step_ticks': 50000})
    for s in (fast, paused):
        s.js = probe.subscribe(JointState, s.topic('joint_states'))
        s.diag = probe.subscribe(DiagnosticArray, s.topic('diagnostics'))
        s.wait_started()
    fast.js.wait(what='the first joint_states of the fast simulator', timeout=30)
    # the paused one published its first state before we listened: step once
    assert probe.call(paused.service('step')).success
    paused.js.wait(what='joint_states of the paused simulator')
    yield fast, paused
    for code, out in stop_all([fast, paused]).values():
        assert_clean_exit(code, out)


def _set_step_ticks(probe, sim, n):
    req = SetParameters.Request(parameters=[ParameterMsg(
        name='step_ticks', value=ParameterValue(type=ParameterType.PARAMETER_INTEGER,
                                                integer_value=n))])
    return probe.call(sim.service('set_parameters'), SetParameters, req).results[0]


def test_unreachable_rate_runs_behind_real_time_and_keeps_serving(probe, sims):
    fast, _ = sims
    # diagnostics say so: WARN, behind real time, seconds dropped
    diag = fast.diag.wait(lambda m: float(kv(m)['behind_real_time_s']) > 0.1,
                          what='diagnostics reporting time dropped')
    status = diag.status[0]
    assert _level(status) == 1          # WARN
    assert 'behind real time' in status.message
    assert float(kv(diag)['real_time_factor']) < 1.0
    # services answer promptly, and the pause takes effect
    t0 = time.monotonic()
    resp = probe.call(fast.service('pause'), timeout=ANSWER)
    assert resp.success and time.monotonic() - t0 < ANSWER
    paused_at = float(re.search(r't=([0-9.]+)', resp.message).group(1))
    resp = probe.call(fast.service('unpause'), timeout=ANSWER)
    assert resp.success
    # and states keep flowing past the pause
    fast.js.wait(lambda m: stamp_to_ns(m.header.stamp) > paused_at * 1e9,
                 what='joint_states after unpausing')
    assert 'cannot hold 1e+06 Hz' in fast.output()


def test_fifty_concurrent_calls_from_one_client_are_all_answered(probe, sims):
    _, paused = sims
    client = probe.node.create_client(Trigger, paused.service('step'),
                                      qos_profile=qos.SERVICE_QOS)
    try:
        assert client.wait_for_service(timeout_sec=20)
        start = paused.js.last().header.stamp
        futures = [client.call_async(Trigger.Request()) for _ in range(50)]
        wait_until(lambda: all(f.done() for f in futures), what='50 answers')
        answers = [f.result() for f in futures]
    finally:
        probe.node.destroy_client(client)
    assert all(a.success for a in answers), [a.message for a in answers]
    times = sorted(float(re.search(r't=([0-9.]+)', a.message).group(1)) for a in answers)
    t_start = stamp_to_ns(start) * 1e-9
    # one tick each, in turn: 50 distinct times, 1 ms apart
    assert len(set(times)) == 50
    assert abs(times[-1] - (t_start + 0.050)) < 1e-9 and abs(times[0] - (t_start + 0.001)) < 1e-9


def test_step_ticks_above_the_bound_are_refused_and_the_node_keeps_stepping(probe, sims):
    _, paused = sims
    result = _set_step_ticks(probe, paused, 1_000_000_000)
    assert not result.successful
    assert result.reason == 'parameter step_ticks: 1000000000 is above max_step_ticks (50000)'
    resp = probe.call(paused.service('step'), timeout=ANSWER)
    assert resp.success and resp.message.startswith('stepped 1 tick to')


def test_a_long_step_keeps_the_node_serving_and_publishing(probe, sims):
    _, paused = sims
    assert _set_step_ticks(probe, paused, 50000).successful     # 50 s of simulation
    try:
        client = probe.node.create_client(Trigger, paused.service('step'))
        assert client.wait_for_service(timeout_sec=20)
        before = stamp_to_ns(paused.js.last().header.stamp)
        n_msgs = len(paused.js.msgs)
        future = client.call_async(Trigger.Request())
        # while it steps, states go out at publish_rate and other services answer
        paused.js.wait(lambda m: stamp_to_ns(m.header.stamp) > before, start=n_msgs,
                       what='joint_states during the step')
        assert not future.done()
        resp = probe.call(paused.service('pause'), timeout=ANSWER)
        assert resp.success
        wait_until(future.done, what='the long step to finish', timeout=120)
        result = future.result()
        assert result.success, result.message
        t = float(re.search(r't=([0-9.]+)', result.message).group(1))
        assert abs(t - (before * 1e-9 + 50.0)) < 1e-6
        probe.node.destroy_client(client)
    finally:
        assert _set_step_ticks(probe, paused, 1).successful
