"""Controller nodes refuse bad state and bad parameters without raising: malformed or stale
joint_states and a missing simulator give zero torque and a warning saying why; parameters
are checked at start with messages naming the parameter."""
import itertools
import math
import os

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import Log
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from ros_vi.ros.controller_node import LQRControllerNode, SwingUpControllerNode
from ros_vi.ros.conversions import ns_to_time_msg, stamp_to_ns

from .harness import ROOT, kv, urdf, wait_until

_ids = itertools.count()
PENDULUM = {'urdf_file': urdf('pendulum'), 'gravity': [0.0, 0.0, -9.8], 'rate': 50.0,
            'law': 'pendulum', 'effort_limits': [5.0], 'pendulum.k_energy': 3.0}


def _node(probe, cls=SwingUpControllerNode, **params):
    values = dict(PENDULUM)
    if cls is LQRControllerNode:
        values.pop('law')
        values.pop('pendulum.k_energy')
        values.update(goal_positions=[math.pi])
    values.update(params)
    ns = '/ctrl_faults_%d_%d' % (os.getpid() % 10000, next(_ids))
    return cls(context=probe.context, namespace=ns, parameter_overrides=[
        Parameter(k, value=v) for k, v in values.items()])


@pytest.fixture
def rosout(probe):
    rec = probe.subscribe(Log, '/rosout', QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    yield rec
    probe.unsubscribe(rec)


@pytest.fixture
def running(probe):
    """Add controller nodes to the probe's executor; removed and destroyed afterwards."""
    nodes = []

    def add(node):
        nodes.append(node)
        probe.executor.add_node(node)
        return node
    yield add
    for node in nodes:
        probe.executor.remove_node(node)
        node.destroy_node()


def _state(stamp_ns, names=('theta',), position=(0.0,), velocity=(0.0,)):
    msg = JointState(name=list(names), position=list(position), velocity=list(velocity))
    msg.header.stamp = ns_to_time_msg(stamp_ns)
    return msg


def test_malformed_and_stale_states_get_zero_torque_and_a_warning(probe, rosout, running):
    node = running(_node(probe, max_state_age=0.5))
    ns = node.get_namespace()
    commands = probe.subscribe(JointState, ns + '/joint_commands')
    diag = probe.subscribe(DiagnosticArray, ns + '/diagnostics')
    pub = probe.publisher(JointState, ns + '/joint_states')
    now = lambda: probe.node.get_clock().now().nanoseconds      # noqa: E731
    cases = [   # (message, what the warning says)
        (_state(now(), position=(math.nan,)), 'non-finite position for theta'),
        (_state(now(), velocity=(math.inf,)), 'non-finite velocity for theta'),
        (_state(now(), names=('elbow',)), 'missing joint theta'),
        (_state(now(), names=(), position=(), velocity=()), 'no joint names'),
        (_state(now(), velocity=()), '1 names but 0 velocities'),
        (_state(now(), names=('theta', 'theta'), position=(0.0, 0.0), velocity=(0.0, 0.0)),
         'joint names repeated'),
        (_state(1_000_000_000), 'stale'),
    ]
    try:
        for k, (msg, why) in enumerate(cases):
            msg.header.stamp = ns_to_time_msg(stamp_to_ns(msg.header.stamp) + k)  # unique
            pub.publish(msg)
            cmd = commands.wait(lambda m: m.header.stamp == msg.header.stamp,
                                what='the answer to a bad state (%s)' % why)
            assert list(cmd.name) == ['theta'] and list(cmd.effort) == [0.0], why
            warn = rosout.wait(lambda m: why in m.msg and m.name.endswith(
                node.get_name()), what='the warning %r' % why)
            assert warn.level == Log.WARN and 'zero torque' in warn.msg
        assert node.rejected == len(cases) and node.answered == 0
        d = diag.wait(lambda m: 'rejected joint_states' in m.status[0].message,
                      what='the rejection in diagnostics')
        assert kv(d)['last_rejection']
        # a good state afterwards: the law answers (a kick at rest, hanging down)
        good = _state(now())
        pub.publish(good)
        cmd = commands.wait(lambda m: m.header.stamp == good.header.stamp,
                            what='the answer to a good state')
        assert list(cmd.effort) == [5.0]
        assert node.answered == 1
    finally:
        for rec in (commands, diag):
            probe.unsubscribe(rec)


def test_missing_simulator_gives_zero_torque_after_the_timeout(probe, rosout, running):
    node = running(_node(probe, cls=LQRControllerNode, state_timeout=0.3,
                         command_topic='joint_commands'))
    commands = probe.subscribe(JointState, node.get_namespace() + '/joint_commands')
    try:
        cmd = commands.wait(what='zero torque while no simulator publishes')
        assert list(cmd.name) == ['theta'] and list(cmd.effort) == [0.0]
        warn = rosout.wait(lambda m: 'no joint_states for' in m.msg and
                           m.name.endswith(node.get_name()), what='the missing-state warning')
        assert warn.level == Log.WARN and 'zero torque' in warn.msg
        wait_until(lambda: len(commands.msgs) >= 3, what='repeated zero commands')
        assert all(list(m.effort) == [0.0] for m in commands.msgs)
    finally:
        probe.unsubscribe(commands)


def test_repeated_state_gets_the_same_answer(probe, running):
    """A lockstep simulator re-publishes its state on ~/unpause: same answer, no new step."""
    node = running(_node(probe))
    ns = node.get_namespace()
    commands = probe.subscribe(JointState, ns + '/joint_commands')
    pub = probe.publisher(JointState, ns + '/joint_states')
    try:
        first = _state(0, position=(0.5,), velocity=(1.0,))
        pub.publish(first)
        a = commands.wait(what='the first answer')
        pub.publish(first)
        b = commands.wait(what='the second answer', start=1)
        assert list(a.effort) == list(b.effort) and a.header.stamp == b.header.stamp
        assert node.answered == 1 and node.rejected == 0
    finally:
        probe.unsubscribe(commands)


@pytest.mark.parametrize('params, cls, culprit', [
    ({'Q': [1.0, 2.0, 3.0]}, SwingUpControllerNode, 'parameter Q'),
    ({'Q': [1.0, 2.0, 3.0, 5.0]}, SwingUpControllerNode, 'not symmetric'),
    ({'R': [1.0, 2.0]}, SwingUpControllerNode, 'parameter R'),
    ({'law': 'double_pendulum'}, SwingUpControllerNode, 'parameter law'),
    ({'law': 'cartpole'}, SwingUpControllerNode, 'law=cartpole'),
    ({'effort_limits': [1.0, 2.0]}, SwingUpControllerNode, 'parameter effort_limits'),
    ({'effort_limits': [-1.0]}, SwingUpControllerNode, 'parameter effort_limits'),
    ({'rate': 0.0}, SwingUpControllerNode, 'parameter rate'),
    ({'command_topic': 'cmd'}, SwingUpControllerNode, 'parameter command_topic'),
    ({'urdf_file': '/no/such.urdf'}, SwingUpControllerNode, 'parameter urdf_file'),
    ({'goal_joints': ['elbow'], 'goal_positions': [1.0]}, SwingUpControllerNode,
     'parameter goal_joints'),
    ({'goal_positions': [1.0, 2.0]}, SwingUpControllerNode, 'parameter goal_positions'),
    ({'goal_positions': []}, LQRControllerNode, 'parameter goal_positions'),
    ({'active_region': 'sometimes'}, LQRControllerNode, 'parameter active_region'),
    ({'urdf_inertia': 'mujoco'}, SwingUpControllerNode, 'parameter urdf_inertia'),
    ({'handover_c_in': 10.0, 'handover_c_out': 5.0}, LQRControllerNode, 'handover_c_in'),
])
def test_bad_parameters_are_named(probe, params, cls, culprit):
    if cls is LQRControllerNode and 'active_region' not in params:
        params = dict(params, active_region='region')
    with pytest.raises(ValueError) as info:        # ParameterError or URDFError
        _node(probe, cls=cls, **params)
    assert culprit in str(info.value)


def test_lqr_region_mode_is_idle_outside_the_region(probe):
    node = _node(probe, cls=LQRControllerNode, active_region='region')
    try:
        c = node.controller
        assert c.compute([0.0], [0.0]).mode == 'idle'             # hanging: far outside
        assert list(c.compute([0.0], [0.0]).u) == [0.0]
        assert c.compute([math.pi + 0.01], [0.0]).mode == 'balance'
    finally:
        node.destroy_node()
    assert os.path.isdir(ROOT)


def _pendulum_with_inertia(ixx, ixy, iyy, izz):
    with open(urdf('pendulum')) as fh:
        text = fh.read()
    return text.replace('<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>',
                        '<inertia ixx="%r" ixy="%r" ixz="0" iyy="%r" iyz="0" izz="%r"/>'
                        % (ixx, ixy, iyy, izz))


def _logged(rosout, node, text):
    return [m.msg for m in rosout.msgs if m.name.endswith(node.get_name()) and text in m.msg]


def test_urdf_quirks_are_logged_once_at_start(probe, rosout, running):
    triangle = _pendulum_with_inertia(0.01, 0.0, 0.01, 0.05)
    node = running(_node(probe, urdf_file='', robot_description=triangle))
    wait_until(lambda: _logged(rosout, node, 'joints'), what='the start-up line')
    quirks = _logged(rosout, node, 'robot description:')
    assert quirks == ["robot description: link 'pendulum': inertia violates the triangle "
                      "inequality (principal moments [0.01, 0.01, 0.05]: 0.05 > 0.01 + 0.01; no "
                      "rigid body has these moments); imported it as written (as urdfdom, "
                      "Pinocchio and Gazebo do; inertia='balance' evens the moments out as "
                      "MuJoCo's balanceinertia does)"]


def test_urdf_inertia_parameter_reaches_the_importer(probe, rosout, running):
    not_psd = _pendulum_with_inertia(0.01, 0.02, 0.01, 0.01)
    with pytest.raises(ValueError, match="link 'pendulum': inertia is not positive "
                                         "semi-definite beyond rounding"):
        _node(probe, urdf_file='', robot_description=not_psd)
    node = running(_node(probe, cls=LQRControllerNode, urdf_file='', robot_description=not_psd,
                         urdf_inertia='repair'))
    inertia = node.system.get_frame('pendulum::inertial').inertia
    assert np.linalg.eigvalsh(inertia).min() >= 0.0
    wait_until(lambda: _logged(rosout, node, 'joints'), what='the start-up line')
    assert [q.split('); ')[-1] for q in _logged(rosout, node, 'robot description:')] \
        == ['repaired it to the nearest valid inertia (principal moments [0.00666666667, '
            '0.0166666667, 0.0233333333])']
