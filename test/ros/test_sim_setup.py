"""The simulator node, over DDS, sets up the robot of test/setup_case.py as the offline paths
do (test/test_robot_setup.py holds ``Simulation.from_urdf``, ``ros-vi simulate`` and ``ros-vi
info`` to the same expectations): the interfaces, bounds and initial state of its
``<ros2_control>`` block, and the passive-joint rule."""
import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState

import setup_case as case

from .harness import SimProcess, kv, wait_until


def test_the_node_takes_the_block(probe, tmp_path):
    path = tmp_path / 'setup_case.urdf'
    path.write_text(case.ROBOT)
    sim = SimProcess({'urdf_file': str(path), 'rate': 500.0, 'publish_rate': 100.0,
                      'diagnostics_period': 0.2, 'command_timeout': 0.0,
                      'drive_frequency': case.DRIVE_FREQUENCY, 'start_paused': True})
    try:
        js = probe.subscribe(JointState, sim.topic('joint_states'))
        diag = probe.subscribe(DiagnosticArray, sim.topic('diagnostics'))
        sim.wait_started()
        # the initial state: ~/reset publishes it again (paused, nothing has moved)
        assert probe.call(sim.service('reset')).success
        first = js.wait(what='the initial joint_states')
        assert list(first.name)[:3] == case.JOINTS
        np.testing.assert_array_equal(first.position[:3], case.INITIAL_POSITIONS)
        np.testing.assert_allclose(first.velocity[:3], case.INITIAL_VELOCITIES, atol=1e-15)
        d = diag.wait(lambda m: 'command_interfaces' in kv(m), what='diagnostics')
        assert kv(d)['command_interfaces'] == case.interfaces_text(case.INTERFACES)

        # the passive joint refuses a command by name
        pub = probe.publisher(JointState, sim.topic('joint_commands'))
        pub.publish(JointState(name=['wrist'], effort=[1.0]))
        d = diag.wait(lambda m: int(kv(m)['rejected_commands']) >= 1,
                      what='the refusal on diagnostics')
        assert case.PASSIVE_REFUSAL in kv(d)['last_rejection']

        # a target beyond the shoulder's bound settles at the bound
        pub.publish(JointState(name=['slide'], velocity=[0.0]))
        pub.publish(JointState(name=['shoulder'], position=[case.BEYOND]))
        wait_until(lambda: 'shoulder:position' in kv(diag.last())['active_interfaces']
                   and 'slide:velocity' in kv(diag.last())['active_interfaces'],
                   what='both commands taken')
        assert probe.call(sim.service('unpause')).success
        start = len(js.msgs)
        settled = js.wait(lambda m: m.header.stamp.sec >= 3, what='3 s of simulation')
        peak = max(m.position[0] for m in js.msgs[start:])
        assert abs(settled.position[0] - case.HELD_AT) < case.HOLD_TOL
        assert peak < case.UPPER_LIMIT
    finally:
        sim.stop_cleanly()
