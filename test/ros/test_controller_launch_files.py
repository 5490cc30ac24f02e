"""The swing-up launch files and their parameter files, checked without `launch` (not on
PyPI): every Node names an installed executable, every parameter file section belongs to a
node the launch file starts and uses only parameters that node declares, the files start
valid nodes, and the controllers they configure are the ones ros_vi.control.presets designs
(same gains, limits, hand-over region)."""
import ast
import importlib
import importlib.metadata
import os

import numpy as np
import pytest
import yaml
from rclpy.parameter import Parameter

from ros_vi.control import DEMOS
from ros_vi.ros.controller_node import (COMMON_PARAMETERS, LQR_PARAMETERS,
                                        SWINGUP_PARAMETERS, LQRControllerNode,
                                        SwingUpControllerNode)
from ros_vi.ros.demo_loop import node_parameters
from ros_vi.ros.simulator_node import PARAMETERS as SIM_PARAMETERS, SimulatorNode

from .harness import ROOT

MODELS = ('pendulum', 'cartpole', 'acrobot')
DECLARED = {'simulator': set(SIM_PARAMETERS),
            'swingup_controller': set(COMMON_PARAMETERS) | set(SWINGUP_PARAMETERS),
            'lqr_controller': set(COMMON_PARAMETERS) | set(LQR_PARAMETERS)}
NODE_CLASSES = {'simulator': SimulatorNode, 'swingup_controller': SwingUpControllerNode,
                'lqr_controller': LQRControllerNode}


SHARED = os.path.join(ROOT, 'ros_vi', 'ros', 'swingup_launch.py')


def _constants(tree):
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                consts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return consts


def _launch(model):
    """The Node actions a model's launch file starts: the file names its MODEL and hands it
    to the shared description (ros_vi/ros/swingup_launch.py), whose tree is returned with
    both files' constants and the model's parameter file name."""
    path = os.path.join(ROOT, 'launch', model + '_swingup.launch.py')
    with open(path) as fh:
        own = ast.parse(fh.read(), path)
    calls = [n for n in ast.walk(own) if isinstance(n, ast.Call)
             and getattr(n.func, 'id', None) == 'swingup_launch_description']
    assert len(calls) == 1 and isinstance(calls[0].args[0], ast.Name) \
        and calls[0].args[0].id == 'MODEL', 'the launch file must use the shared description'
    with open(SHARED) as fh:
        tree = ast.parse(fh.read(), SHARED)
    consts = _constants(tree)
    consts.update(_constants(own))
    consts['PARAMS_FILE'] = consts['MODEL'] + '_swingup.yaml'
    return tree, consts


def _console_scripts():
    with open(os.path.join(ROOT, 'setup.py')) as fh:
        tree = ast.parse(fh.read())
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, 'id', None) == 'setup':
            for kw in call.keywords:
                if kw.arg == 'entry_points':
                    eps = ast.literal_eval(kw.value)['console_scripts']
                    return dict(e.replace(' ', '').split('=') for e in eps)
    raise AssertionError('no entry_points in setup.py')


def _params_file(model):
    return os.path.join(ROOT, 'config', model + '_swingup.yaml')


def _resolved(params):
    params = dict(params)
    if params.get('urdf_file', '').startswith('package://ros_vi/'):
        params['urdf_file'] = os.path.join(ROOT, params['urdf_file'][len('package://ros_vi/'):])
    return params


@pytest.mark.parametrize('model', MODELS)
def test_launch_file_nodes_are_installed_executables(model):
    tree, consts = _launch(model)
    assert consts['MODEL'] == model
    assert os.path.isfile(os.path.join(ROOT, 'urdf', model + '.urdf'))
    assert os.path.isfile(os.path.join(ROOT, 'config', consts['PARAMS_FILE']))
    assert os.path.isfile(os.path.join(ROOT, 'rviz', consts['RVIZ_CONFIG']))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, 'id', None) == 'Node']
    executables = set()
    for call in calls:
        kw = {k.arg: k.value for k in call.keywords}
        value = kw['executable']
        if isinstance(value, ast.Constant):
            executables.add(value.value)
        else:      # CONTROLLERS[controller]
            assert isinstance(value, ast.Subscript) and value.value.id == 'CONTROLLERS'
            executables.update(consts['CONTROLLERS'].values())
    assert executables == {'simulator', 'swingup_controller', 'lqr_controller', 'rviz2'}
    scripts = _console_scripts()
    installed = {e.name: e.value for e in
                 importlib.metadata.entry_points(group='console_scripts')}
    for exe in executables - {'rviz2'}:
        module, func = scripts[exe].split(':')
        assert callable(getattr(importlib.import_module(module), func))
        assert installed.get(exe) == scripts[exe], exe
    args = {ast.literal_eval(c.args[0]) for c in ast.walk(tree) if isinstance(c, ast.Call)
            and getattr(c.func, 'id', None) == 'DeclareLaunchArgument'}
    assert {'controller', 'rviz', 'use_sim_time', 'params_file'} <= args


@pytest.mark.parametrize('model', MODELS)
def test_parameter_file_sections_use_declared_parameters(model):
    with open(_params_file(model)) as fh:
        doc = yaml.safe_load(fh)
    assert set(doc) == {'/**', 'simulator', 'swingup_controller', 'lqr_controller'}
    for name, declared in DECLARED.items():
        params = node_parameters(_params_file(model), name)
        unknown = set(params) - declared - {'use_sim_time'}
        assert not unknown, (model, name, unknown)
    # the simulator and the controllers agree on the model and the period
    sim = node_parameters(_params_file(model), 'simulator')
    for name in ('swingup_controller', 'lqr_controller'):
        ctrl = node_parameters(_params_file(model), name)
        for key in ('urdf_file', 'gravity', 'rate'):
            assert ctrl[key] == sim[key], (model, name, key)
        assert sim['publish_rate'] == sim['rate']
        assert sim['lockstep'] is True


def _node(probe, model, name):
    params = _resolved(node_parameters(_params_file(model), name))
    if name == 'simulator':
        params['start_paused'] = True
    return NODE_CLASSES[name](context=probe.context, node_name='cfg_%s_%s' % (model, name),
                              parameter_overrides=[Parameter(k, value=v)
                                                   for k, v in params.items()])


@pytest.mark.parametrize('model', MODELS)
def test_parameter_files_start_the_nodes_with_the_preset_controllers(probe, model):
    demo = DEMOS[model]
    sim = _node(probe, model, 'simulator')
    swing = _node(probe, model, 'swingup_controller')
    lqr = _node(probe, model, 'lqr_controller')
    try:
        assert sim.sim.robot.name == model
        np.testing.assert_array_equal(sim.sim.state().positions, demo.start)
        assert sim.sim.dt == demo.dt
        ref = demo.controller(demo.model())
        got = swing.controller
        assert got.dt == ref.dt and swing.lqr.dt == demo.dt
        np.testing.assert_array_equal(got.u_max, ref.u_max)
        np.testing.assert_allclose(got.balance.K, ref.balance.K, rtol=1e-12, atol=1e-12)
        assert got.c_in == pytest.approx(ref.c_in, rel=1e-12)
        assert got.c_out == pytest.approx(ref.c_out, rel=1e-12)
        assert type(got.swingup) is type(ref.swingup)
        for key, value in vars(ref.swingup).items():
            if isinstance(value, (float, int, bool, str)) and key != 'system':
                assert getattr(got.swingup, key) == value, (model, key)
        np.testing.assert_array_equal(got.swingup.goal, demo.goal)
        ref_lqr = demo.lqr(demo.model())
        np.testing.assert_allclose(lqr.lqr.K, ref_lqr.K, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(lqr.lqr.u_max, ref_lqr.u_max)
        assert lqr.lqr.spectral_radius < 1.0
    finally:
        for node in (sim, swing, lqr):
            node.destroy_node()


def test_setup_installs_the_launch_and_config_files():
    with open(os.path.join(ROOT, 'setup.py')) as fh:
        text = fh.read()
    assert "share('launch', '*.launch.py')" in text and "share('config', '*.yaml')" in text
