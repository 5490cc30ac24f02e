"""Solver faults over DDS: a tick that needs smaller substeps is retried (and matches the
core), a tick that cannot converge holds the state, is reported on diagnostics and the
node keeps serving without NaN.  The VI's own subdivision (max_subdivisions) is switched
off here: it would solve these steps inside the VI, and the tick's fault paths are what is
tested."""
import math
import re

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState

from ros_vi.ros.conversions import stamp_to_ns
from ros_vi.simulation import Simulation

from .harness import SimProcess, assert_clean_exit, kv, stop_all, urdf

RETRY = dict(rate=20.0, max_iterations=2, initial_positions=[1.0, 0.5],
             initial_velocities=[4.0, 4.0], max_subdivisions=0)


@pytest.fixture(scope='module')
def procs(probe):
    retry = SimProcess({'urdf_file': urdf('acrobot'), 'rate': RETRY['rate'],
                        'publish_rate': RETRY['rate'], 'start_paused': True,
                        'max_iterations': RETRY['max_iterations'],
                        'max_subdivisions': RETRY['max_subdivisions'],
                        'initial_positions': RETRY['initial_positions'],
                        'initial_velocities': RETRY['initial_velocities'],
                        'diagnostics_period': 0.1})
    held = SimProcess({'urdf_file': urdf('arm7'), 'rate': 100.0, 'start_paused': True,
                       'max_iterations': 1, 'max_subdivisions': 0,
                       'initial_joints': ['joint_2'],
                       'initial_positions': [0.3], 'diagnostics_period': 0.1})
    for p in (retry, held):
        p.js = probe.subscribe(JointState, p.topic('joint_states'))
        p.diag = probe.subscribe(DiagnosticArray, p.topic('diagnostics'))
    yield retry, held
    for code, out in stop_all([retry, held]).values():
        assert_clean_exit(code, out)


def stepped(probe, p):
    resp = probe.call(p.service('step'))
    ns = int(round(float(re.search(r't=([0-9.]+)', resp.message).group(1)) * 1e9))
    return resp, p.js.wait(lambda m: stamp_to_ns(m.header.stamp) == ns, what='the state')


def test_retry_with_smaller_substeps_matches_core(probe, procs):
    p, _ = procs
    core = Simulation.from_urdf_file(urdf('acrobot'), **RETRY)
    retries = 0
    for _ in range(8):
        resp, msg = stepped(probe, p)
        r = core.tick()
        assert r.ok and resp.success, resp.message
        retries += r.retries
        np.testing.assert_allclose(msg.position, core.state().positions, rtol=0, atol=1e-9)
        np.testing.assert_allclose(msg.velocity, core.state().velocities, rtol=0, atol=1e-9)
    assert retries > 0 and core.retries > 0
    d = p.diag.wait(lambda m: int(kv(m)['retries']) == core.retries and kv(m)['ticks'] == '8',
                    what='diagnostics counting the retries')
    assert kv(d)['failures'] == '0' and d.status[0].level == DiagnosticStatus.OK


def test_failed_tick_holds_state_reports_and_keeps_serving(probe, procs):
    _, p = procs
    resp, msg = stepped(probe, p)
    assert not resp.success and 'state held' in resp.message
    assert all(math.isfinite(v) for v in list(msg.position) + list(msg.velocity))
    expected = np.zeros(7)
    expected[1] = 0.3
    np.testing.assert_array_equal(msg.position, expected)
    d = p.diag.wait(lambda m: m.status[0].level == DiagnosticStatus.ERROR,
                    what='an ERROR on diagnostics')
    assert 'VI step failed, state held' in d.status[0].message
    assert 'failed to converge' in kv(d)['last_error'] and int(kv(d)['failures']) >= 1
    # still serving: it runs (failing, holding, publishing finite states) and pauses again
    n0 = len(p.js.msgs)
    assert probe.call(p.service('unpause')).success
    p.js.wait(lambda m: True, start=n0 + 5, what='states while failing')
    assert probe.call(p.service('pause')).success
    assert p.alive()
    for m in p.js.msgs:
        assert np.all(np.isfinite(m.position)) and np.all(np.isfinite(m.velocity))
