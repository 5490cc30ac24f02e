"""ros_vi.ros.parameters: the one declare/read/validate layer of the nodes' parameters,
checked without starting a node (a stand-in answers get_parameter)."""
from types import SimpleNamespace

import pytest

from ros_vi.ros import parameters
from ros_vi.ros.parameters import (LQRControllerParameters, ParameterError,
                                   SimulatorParameters, SwingUpControllerParameters)


class FakeNode:
    """Declares like a node; get_parameter answers the declared default or an override."""

    def __init__(self, **overrides):
        self.declared = {}
        self.overrides = {k.replace('__', '.'): v for k, v in overrides.items()}

    def declare_parameter(self, name, default, descriptor):
        assert descriptor.dynamic_typing and descriptor.description
        self.declared[name] = default

    def get_parameter(self, name):
        return SimpleNamespace(value=self.overrides.get(name, self.declared[name]))


def read(cls, **overrides):
    node = FakeNode(**overrides)
    parameters.declare(node, cls)
    return parameters.read(node, cls)


def test_defaults_are_declared_and_read_back():
    cfg = read(SimulatorParameters, urdf_file='robot.urdf')
    assert cfg.rate == 500.0 and cfg.substeps == 1 and cfg.publish_clock is True
    assert cfg.gravity == [0.0, 0.0, -9.81] and cfg.command_joints == []
    assert parameters.table(SimulatorParameters)['step_ticks'][0] == 1
    # a list default is not shared between instances
    cfg.gravity.append(1.0)
    assert SimulatorParameters().gravity == [0.0, 0.0, -9.81]


def test_integers_are_accepted_for_floats():
    cfg = read(SimulatorParameters, urdf_file='r.urdf', rate=100, publish_rate=50)
    assert cfg.rate == 100.0 and isinstance(cfg.rate, float)


@pytest.mark.parametrize('overrides, match', [
    (dict(rate=0.0), 'parameter rate: must be > 0'),
    (dict(substeps=1.5), 'parameter substeps: expected an integer'),
    (dict(publish_clock=1), 'parameter publish_clock: expected true or false'),
    (dict(gravity=[0.0, 9.81]), 'parameter gravity: expected 3 numbers, got 2'),
    (dict(command_joints=['a', '']), 'parameter command_joints: expected a list of non-empty'),
    (dict(rate=100.0, publish_rate=101.0),
     r'parameter publish_rate: 101 Hz is above rate \(100 Hz\)'),
    (dict(urdf_file=''), 'parameters robot_description and urdf_file: one is required'),
    (dict(robot_description='<robot/>'), 'give one, not both'),
    (dict(world_file='w.yaml'), 'parameters urdf_file and world_file: give one, not both'),
    (dict(ground=[0.0]), 'parameter ground: expected height'),
    (dict(ground=[0.0, -0.5]), 'friction coefficient >= 0'),
    (dict(ground=[0.0, 0.5, 1.2]), r'restitution in \[0, 1\]'),
    (dict(urdf_file='', world_file='w.yaml', ground=[0.0, 0.5]),
     'parameter ground: a world_file gives its own ground'),
])
def test_simulator_errors_name_the_parameter(overrides, match):
    args = dict(urdf_file='r.urdf')
    args.update(overrides)
    with pytest.raises(ParameterError, match=match):
        read(SimulatorParameters, **args)


def test_a_bad_world_file_is_refused_naming_the_parameter(tmp_path):
    from ros_vi.ros.parameters import robot_setup
    bad = tmp_path / 'w.yaml'
    bad.write_text('objects: [{name: a, shape: {cone: 1}, mass: 1}]\n')
    cfg = read(SimulatorParameters, world_file=str(bad))
    with pytest.raises(ParameterError, match=r'parameter world_file: .*objects\[0\]\.shape'):
        robot_setup(cfg)


def test_controller_parameters_dt_and_gains():
    cfg = read(SwingUpControllerParameters, urdf_file='r.urdf', rate=50,
               law='acrobot', acrobot__k_p=7)
    assert cfg.dt == 1 / 50.0
    assert cfg.gains == {'passive': 'shoulder', 'active': 'elbow', 'k_p': 7.0, 'k_d': 4.0,
                         'k_energy': 4.0, 'den_min': 0.1, 'kick_accel': 20.0}
    assert read(LQRControllerParameters, urdf_file='r.urdf', dt=0.01).dt == 0.01
    with pytest.raises(ParameterError, match='parameter law: expected one of pendulum, '
                                             'cartpole, acrobot'):
        read(SwingUpControllerParameters, urdf_file='r.urdf', law='double')
    with pytest.raises(ParameterError, match='parameter pendulum.kick: must be >= 0'):
        read(SwingUpControllerParameters, urdf_file='r.urdf', pendulum__kick=-1.0)
    with pytest.raises(ParameterError, match='parameter active_region: expected one of'):
        read(LQRControllerParameters, urdf_file='r.urdf', active_region='sometimes')


def test_update_changes_only_dynamic_parameters():
    cfg = read(SimulatorParameters, urdf_file='r.urdf')
    change = lambda name, value: SimpleNamespace(name=name, value=value)   # noqa: E731
    assert parameters.update(cfg, [change('step_ticks', 7)]) is None
    assert cfg.step_ticks == 7
    assert parameters.update(cfg, [change('step_ticks', 0)]) == \
        'parameter step_ticks: must be >= 1, got 0'
    reason = parameters.update(cfg, [change('step_ticks', 3), change('rate', 10.0)])
    assert reason == ('parameter rate is read at start only (only step_ticks can change at '
                      'run time)')
    assert cfg.step_ticks == 7 and cfg.rate == 500.0     # all or nothing
    assert parameters.update(cfg, [change('use_sim_time', True)]) is None   # not ours
