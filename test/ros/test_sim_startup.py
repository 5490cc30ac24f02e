"""The simulator starts from every shipped URDF and from a parameter file; bad parameters
are refused with a message naming the parameter; late joiners get the latched topics."""
import importlib.metadata
import os

import numpy as np
import pytest
import yaml
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from ros_vi.ros import qos
from ros_vi.ros.conversions import transform_to_matrix
from ros_vi.ros.simulator_node import ParameterError, SimulatorNode
from ros_vi.simulation import Simulation
from ros_vi.urdf import URDFError

from .harness import CONFIG_DIR, SimProcess, assert_clean_exit, stop_all, urdf

MODELS = {
    'pendulum': ['theta'],
    'cartpole': ['cart', 'pole'],
    'acrobot': ['shoulder', 'elbow'],
    'arm7': ['joint_%d' % i for i in range(1, 8)],
}


def _check_started(probe, sim, joint_names, urdf_text, expect_static):
    # latched topics, subscribed after the node started (late joiner)
    desc = probe.subscribe(String, sim.topic('robot_description'), qos.LATCHED_QOS)
    static = probe.subscribe(TFMessage, sim.topic('tf_static'), qos.LATCHED_QOS)
    js = probe.subscribe(JointState, sim.topic('joint_states'))
    try:
        sim.wait_started()
        assert desc.wait(what='robot_description of %s' % sim.namespace).data == urdf_text
        tfs = static.wait(what='tf_static of %s' % sim.namespace)
        assert [(t.header.frame_id, t.child_frame_id) for t in tfs.transforms] == expect_static
        # paused: one ~/step publishes the state after one tick
        resp = probe.call(sim.service('step'))
        assert resp.success, resp.message
        msg = js.wait(lambda m: m.header.stamp.nanosec > 0, what='joint_states')
        assert list(msg.name) == joint_names
        assert len(msg.position) == len(msg.velocity) == len(msg.effort) == len(joint_names)
        assert np.all(np.isfinite(msg.position)) and np.all(np.isfinite(msg.velocity))
        return msg
    except AssertionError as err:
        raise AssertionError('%s\n--- simulator output:\n%s' % (err, sim.output())) from None
    finally:
        for rec in (desc, static, js):
            probe.unsubscribe(rec)


def test_starts_from_each_urdf_and_from_a_parameter_file(probe):
    procs = {name: SimProcess({'urdf_file': urdf(name), 'start_paused': True, 'rate': 100.0,
                               'publish_rate': 50.0})
             for name in MODELS}
    params_file = os.path.join(CONFIG_DIR, 'acrobot.yaml')
    procs['file'] = SimProcess({'start_paused': True}, params_file=params_file)
    try:
        statics = {'pendulum': [], 'cartpole': [('world', 'rail')],
                   'acrobot': [('world', 'base_link')],
                   'arm7': [('world', 'link_0'), ('link_7', 'flange'), ('flange', 'tool')]}
        for name, joints in MODELS.items():
            with open(urdf(name)) as fh:
                text = fh.read()
            _check_started(probe, procs[name], joints, text, statics[name])
        # the parameter file's model and initial state were used: compare one tick with
        # the core started from the same file
        with open(params_file) as fh:
            params = yaml.safe_load(fh)['/**']['ros__parameters']
        with open(urdf('acrobot')) as fh:
            text = fh.read()
        msg = _check_started(probe, procs['file'], MODELS['acrobot'], text,
                             statics['acrobot'])
        core = Simulation.from_urdf_file(urdf('acrobot'), rate=params['rate'],
                                         initial_positions=dict(zip(params['initial_joints'],
                                                                    params['initial_positions'])))
        core.tick()
        assert msg.header.stamp.sec == 0 and msg.header.stamp.nanosec == 2_000_000
        np.testing.assert_allclose(msg.position, core.state().positions, rtol=0, atol=1e-12)
        np.testing.assert_allclose(msg.velocity, core.state().velocities, rtol=0, atol=1e-12)
    finally:
        outputs = stop_all(procs)
    for name, (code, out) in outputs.items():
        assert_clean_exit(code, out, name)


def test_tf_static_values_match_urdf(probe):
    sim = SimProcess({'urdf_file': urdf('arm7'), 'start_paused': True, 'prefix': 'r_'})
    try:
        static = probe.subscribe(TFMessage, sim.topic('tf_static'), qos.LATCHED_QOS)
        msg = static.wait(what='tf_static')
        core = Simulation.from_urdf_file(urdf('arm7'), prefix='r_')
        expected = core.static_transforms()
        assert [(t.header.frame_id, t.child_frame_id) for t in msg.transforms] == \
            [('r_world', 'r_link_0'), ('r_link_7', 'r_flange'), ('r_flange', 'r_tool')]
        for t, (_, _, g) in zip(msg.transforms, expected):
            np.testing.assert_allclose(transform_to_matrix(t.transform), g, atol=1e-12)
        # the flange offset is the URDF joint origin
        flange = core.robot.joint('flange_fixed').origin
        np.testing.assert_allclose(transform_to_matrix(msg.transforms[1].transform), flange,
                                   atol=1e-12)
    finally:
        code, out = sim.stop()
    assert code == 0, out


@pytest.mark.parametrize('overrides, match', [
    ({}, 'robot_description and urdf_file: one is required'),
    ({'urdf_file': '/nonexistent/robot.urdf'}, 'parameter urdf_file: no such file'),
    ({'urdf_file': 'package://no_such_package_xyz/robot.urdf'},
     'parameter urdf_file: cannot resolve'),
    ({'robot_description': '<robot name="x"><link name="a"/>', 'urdf_file': ''},
     'parameter robot_description'),
    ({'rate': -5.0}, 'parameter rate: must be > 0'),
    ({'rate': 'fast'}, 'parameter rate: expected a finite number'),
    ({'substeps': 0}, 'parameter substeps: must be >= 1'),
    ({'substeps': 1.5}, 'parameter substeps: expected an integer'),
    ({'real_time_factor': -1.0}, 'parameter real_time_factor: must be >= 0'),
    ({'publish_rate': 1000.0}, 'parameter publish_rate: 1000 Hz is above rate'),
    ({'gravity': [0.0, -9.81]}, 'parameter gravity: expected 3 numbers'),
    ({'publish_clock': 'yes'}, 'parameter publish_clock: expected true or false'),
    ({'command_timeout': -0.1}, 'parameter command_timeout: must be >= 0'),
    ({'lockstep_timeout': 0.0}, 'parameter lockstep_timeout: must be > 0'),
    ({'step_ticks': 0}, 'parameter step_ticks: must be >= 1'),
    ({'initial_positions': [0.1, 0.2, 0.3]},
     'parameter initial_positions: 3 values for 2 joints'),
    ({'initial_joints': ['elbow', 'knee'], 'initial_positions': [0.1, 0.2]},
     'parameter initial_joints: unknown joint knee'),
    ({'initial_joints': ['elbow'], 'initial_velocities': [float('nan')]},
     'parameter initial_velocities: values must be finite'),
    ({'command_joints': ['wrist']}, "parameter command_joints: unknown joint name 'wrist'"),
    ({'initial_joints': ['elbow', 'elbow'], 'initial_positions': [0.1, 0.2]},
     "parameter initial_joints: joint 'elbow' is named twice"),
    ({'command_joints': ['elbow', 'elbow']},
     "parameter command_joints: joint 'elbow' is named twice"),
    ({'step_ticks': 200001}, 'parameter step_ticks: 200001 is above max_step_ticks '
                             r'\(100000\)'),
    ({'controller_wait': 0.0}, 'parameter controller_wait: must be > 0'),
    ({'clock_rate': -1.0}, 'parameter clock_rate: must be > 0'),
])
def test_parameters_are_validated(probe, overrides, match):
    params = {'urdf_file': urdf('acrobot')}
    params.update(overrides)
    if not overrides:
        params = {}
    with pytest.raises((ParameterError, URDFError), match=match):
        SimulatorNode(context=probe.context, parameter_overrides=[
            Parameter(k, value=v) for k, v in params.items()])


def test_in_process_construction_with_overrides(probe):
    node = SimulatorNode(context=probe.context, node_name='inproc_sim', parameter_overrides=[
        Parameter('urdf_file', value=urdf('pendulum')), Parameter('rate', value=200),
        Parameter('start_paused', value=True)])
    try:
        assert node.cfg.rate == 200.0 and node.sim.dt == 1 / 200.0
        assert node.sim.joint_names == ['theta'] and node.sim.paused
    finally:
        node.destroy_node()


def test_bad_parameter_exits_with_message():
    sim = SimProcess({'urdf_file': urdf('pendulum'), 'publish_rate': 1000.0})
    sim.proc.wait(60)
    code, out = sim.stop()
    assert code == 2
    assert 'parameter publish_rate: 1000 Hz is above rate (500 Hz)' in out
    assert 'Traceback' not in out


def test_console_script_registered():
    eps = importlib.metadata.entry_points(group='console_scripts')
    (ep,) = [e for e in eps if e.name == 'simulator']
    assert ep.value == 'ros_vi.ros.simulator_node:main'


def test_a_cold_cache_is_compiled_before_the_node_joins_and_said(monkeypatch):
    """A node started before the kernels were compiled took ~40 s to start while already on
    the graph (a lockstep peer stalled): run_node compiles first, saying so, and only then
    builds the node; with a warm cache it says and does nothing."""
    from ros_vi import precompile
    from ros_vi.ros import node_main
    lines, calls = [], []

    class Log:
        def info(self, message):
            lines.append(message)
    monkeypatch.setattr(precompile, 'precompile', lambda batch=True: calls.append(batch))
    monkeypatch.setattr(precompile, 'is_warm', lambda: True)
    node_main.warm_kernels(Log())
    assert (lines, calls) == ([], [])
    monkeypatch.setattr(precompile, 'is_warm', lambda: False)
    node_main.warm_kernels(Log())
    assert calls == [False]                          # the node's kernels, not the batch loop
    assert "compiling ros_vi's numba kernels into" in lines[0]
    assert 'the first start after an install' in lines[0] and 'compiled in' in lines[1]


def test_the_step_kernels_are_warm_after_set_up():
    """What a node checks: after precompile (set-up, or the session fixture) the cache holds
    the step's kernels."""
    from ros_vi import precompile
    assert precompile.is_warm()


def test_one_or_two_signals_shut_the_simulator_down_cleanly():
    """On Ctrl-C the step thread logged 'step loop: RCLError: Failed to publish: publisher's
    context is invalid' in 7 of 22 shutdowns, and a second SIGINT during shutdown ended the
    node with code -2 and KeyboardInterrupt tracebacks.  Three shutdowns of a node
    publishing at 1 kHz, each with one then two signals: exit 0, no ERROR, no traceback."""
    import signal
    import time
    for signals in (1, 2, 1, 2, 1, 2):
        sim = SimProcess({'urdf_file': urdf('arm7'), 'rate': 1000.0, 'publish_rate': 1000.0})
        sim.wait_started()
        time.sleep(0.3)                 # a few hundred ticks published (not a sync wait)
        sim.proc.send_signal(signal.SIGINT)
        if signals == 2:
            time.sleep(0.005)
            sim.proc.send_signal(signal.SIGINT)
        code, out = sim.stop()
        assert_clean_exit(code, out)
        assert '[ERROR]' not in out, out
