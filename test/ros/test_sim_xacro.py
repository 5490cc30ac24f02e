"""The simulator loads a .xacro urdf_file through the xacro sandbox: a file reading outside
the allowed directories stops the node with the path named, and nothing of it is published;
``xacro_allowed_paths`` extends the sandbox."""
import os
import time

import pytest
from rclpy.parameter import Parameter
from std_msgs.msg import String

from ros_vi.ros import qos
from ros_vi.ros.simulator_node import ParameterError, SimulatorNode
from ros_vi.urdf import URDFError

from .harness import SimProcess

NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'
PENDULUM = ('<link name="base"/><link name="bob"><inertial><mass value="1"/><inertia ixx="1" '
            'ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link><joint name="theta" '
            'type="continuous"><parent link="base"/><child link="bob"/><axis xyz="0 1 0"/>'
            '</joint>')


def _write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), 'w') as fh:
        fh.write(text)
    return str(path)


@pytest.fixture
def files(tmp_path):
    secret = _write(tmp_path / 'outside' / 'secret.xacro',
                    '<robot %s><link name="SECRET_LINK"/></robot>' % NS)
    evil = _write(tmp_path / 'model' / 'evil.xacro', '<robot name="p" %s>%s'
                  '<xacro:include filename="%s"/><joint name="s" type="fixed"><parent '
                  'link="bob"/><child link="SECRET_LINK"/></joint></robot>'
                  % (NS, PENDULUM, secret))
    return tmp_path, secret, evil


def test_node_refuses_a_xacro_reading_outside_and_publishes_nothing(probe, files):
    tmp_path, secret, evil = files
    rec = probe.subscribe(String, '/xacro_refused/robot_description', qos.LATCHED_QOS)
    with pytest.raises((ParameterError, URDFError),
                       match=r"parameter urdf_file: .*refused access to '%s'" % secret):
        SimulatorNode(context=probe.context, namespace='/xacro_refused',
                      parameter_overrides=[Parameter('urdf_file', value=evil)])
    time.sleep(0.5)
    assert rec.msgs == []
    probe.unsubscribe(rec)


def test_simulator_process_exits_naming_the_path(files):
    tmp_path, secret, evil = files
    sim = SimProcess({'urdf_file': evil})
    sim.proc.wait(60)
    code, out = sim.stop()
    assert code == 2
    assert "refused access to '%s'" % secret in out
    assert 'SECRET_LINK' not in out.replace(secret, '') and 'Traceback' not in out


def test_xacro_allowed_paths_parameter(probe, files):
    tmp_path, secret, evil = files
    node = SimulatorNode(context=probe.context, node_name='xacro_allowed', parameter_overrides=[
        Parameter('urdf_file', value=evil), Parameter('start_paused', value=True),
        Parameter('xacro_allowed_paths', value=[str(tmp_path / 'outside')])])
    try:
        assert node.cfg.xacro_allowed_paths == [str(tmp_path / 'outside')]
        assert '<link name="SECRET_LINK"/>' in node.setup.text
        assert node.sim.joint_names == ['theta']
    finally:
        node.destroy_node()
