"""The URDF's ``<ros2_control>`` block: read as written, checked against the joints, merged
into per-joint facts (ros_vi.urdf.ros2_control), shown by ``ros-vi info``."""
import json
import logging
import math
import warnings
from dataclasses import FrozenInstanceError

import pytest

from ros_vi.cli import main
from ros_vi.resources import shipped_model
from ros_vi.urdf import (ComponentInterfaces, InterfaceSpec, JointControl, Ros2ControlBlock,
                         URDFError, URDFWarning, import_urdf, import_urdf_file)

INF = math.inf

_INERTIA = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ' \
           'ixz="0" iyz="0"/></inertial>'

# shoulder (revolute), slide (prismatic), finger (mimic of shoulder), wrist (passive
# continuous: effort 0), tool_fixed (fixed)
ROBOT = '''<robot name="r">
  <link name="base"/>
  <link name="a">%(i)s</link><link name="b">%(i)s</link><link name="c">%(i)s</link>
  <link name="d">%(i)s</link><link name="tool"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1.5" effort="10" velocity="2"/></joint>
  <joint name="slide" type="prismatic"><parent link="a"/><child link="b"/>
    <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.5" effort="50" velocity="1"/></joint>
  <joint name="finger" type="revolute"><parent link="b"/><child link="c"/>
    <origin xyz="0.2 0 0"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="5" velocity="1"/>
    <mimic joint="shoulder" multiplier="-1" offset="0"/></joint>
  <joint name="wrist" type="continuous"><parent link="c"/><child link="d"/>
    <origin xyz="0.1 0 0"/><axis xyz="1 0 0"/><limit effort="0" velocity="3"/></joint>
  <joint name="tool_fixed" type="fixed"><parent link="d"/><child link="tool"/></joint>
  %(blocks)s
</robot>'''


def robot(blocks):
    return ROBOT % {'i': _INERTIA, 'blocks': blocks}


def imported(blocks, **options):
    """(system, [warning messages]) of ROBOT with these blocks."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        system = import_urdf(robot(blocks), **options)
    return system, [str(w.message) for w in caught if issubclass(w.category, URDFWarning)]


FULL = '''
  <ros2_control name="ArmHardware" type="system">
    <hardware>
      <plugin>vendor_driver/ArmSystem</plugin>
      <param name="ip">192.168.0.10</param>
      <param name="rate"> 500 </param>
    </hardware>
    <joint name="slide">
      <command_interface name="velocity"><param name="min">-0.5</param><param name="max">0.8</param></command_interface>
      <command_interface name="effort"/>
      <state_interface name="position"><param name="initial_value">0.25</param></state_interface>
      <state_interface name="velocity"><param name="initial_value">-0.1</param></state_interface>
      <param name="gear_ratio">100</param>
    </joint>
    <joint name="shoulder">
      <command_interface name="position">
        <param name="min">-0.9</param><param name="max">1.4</param><param name="tolerance">0.01</param>
      </command_interface>
      <command_interface name="current"><param name="max">3</param></command_interface>
      <state_interface name="position"><param name="initial_value">0.5</param></state_interface>
      <state_interface name="velocity"/>
      <state_interface name="temperature"/>
    </joint>
    <sensor name="ft">
      <state_interface name="force.x"/><state_interface name="torque.z"/>
      <param name="frame_id">tool</param>
    </sensor>
    <gpio name="brake">
      <command_interface name="release"/><state_interface name="released"/>
    </gpio>
  </ros2_control>
  <ros2_control name="WristHardware" type="actuator">
    <hardware><plugin>vendor_driver/Wrist</plugin></hardware>
    <joint name="finger" mimic="false"><state_interface name="position"/></joint>
  </ros2_control>'''


def test_a_written_block_is_read_as_written():
    system, messages = imported(FULL)
    blocks = system.urdf.ros2_control
    frozen = lambda **kw: kw                               # noqa: E731
    assert blocks == (
        Ros2ControlBlock(
            'ArmHardware', 'system', 'vendor_driver/ArmSystem',
            frozen(ip='192.168.0.10', rate='500'),
            frozen(slide=ComponentInterfaces(
                       'slide',
                       frozen(velocity=InterfaceSpec('velocity', -0.5, 0.8),
                              effort=InterfaceSpec('effort')),
                       frozen(position=InterfaceSpec('position', initial_value=0.25),
                              velocity=InterfaceSpec('velocity', initial_value=-0.1)),
                       frozen(gear_ratio='100')),
                   shoulder=ComponentInterfaces(
                       'shoulder',
                       frozen(position=InterfaceSpec('position', -0.9, 1.4,
                                                     params=frozen(tolerance='0.01')),
                              current=InterfaceSpec('current', max=3.0)),
                       frozen(position=InterfaceSpec('position', initial_value=0.5),
                              velocity=InterfaceSpec('velocity'),
                              temperature=InterfaceSpec('temperature')))),
            frozen(ft=ComponentInterfaces(
                'ft', state=frozen(**{'force.x': InterfaceSpec('force.x'),
                                      'torque.z': InterfaceSpec('torque.z')}),
                params=frozen(frame_id='tool'))),
            frozen(brake=ComponentInterfaces('brake',
                                             frozen(release=InterfaceSpec('release')),
                                             frozen(released=InterfaceSpec('released'))))),
        Ros2ControlBlock('WristHardware', 'actuator', 'vendor_driver/Wrist', frozen(),
                         frozen(finger=ComponentInterfaces(
                             'finger', state=frozen(position=InterfaceSpec('position')),
                             mimic=False))))
    # file order is kept (joints, interfaces)
    assert list(blocks[0].joints) == ['slide', 'shoulder']
    assert list(blocks[0].joints['shoulder'].command) == ['position', 'current']
    # the interfaces ros_vi does not simulate are warned about, naming joint and interface
    assert sorted(messages) == sorted([
        "URDF robot 'r': joint 'shoulder': <ros2_control name='ArmHardware'> declares the "
        "command interface 'current', which ros_vi does not simulate (it simulates position, "
        "velocity, effort); ignored it",
        "URDF robot 'r': joint 'shoulder': <ros2_control name='ArmHardware'> declares the "
        "state interface 'temperature', which ros_vi does not simulate (it simulates "
        "position, velocity, effort); ignored it"])
    assert len(system.urdf.warnings) == 2


def test_the_merged_facts_per_joint_in_config_order():
    system, _ = imported(FULL)
    controls = system.urdf.joint_controls
    # config order (shoulder before slide), the mimic joint left out, custom names dropped
    assert list(controls) == ['shoulder', 'slide'] == system.urdf.joint_names[:2]
    assert controls['shoulder'] == JointControl(
        'shoulder', 'ArmHardware', ('position',), {'position': (-0.9, 1.4)}, 0.5, None)
    assert controls['slide'] == JointControl(
        'slide', 'ArmHardware', ('velocity', 'effort'),
        {'velocity': (-0.5, 0.8), 'effort': (-INF, INF)}, 0.25, -0.1)
    assert 'wrist' not in controls and 'finger' not in controls


def test_records_are_immutable():
    system, _ = imported(FULL)
    block = system.urdf.ros2_control[0]
    with pytest.raises(FrozenInstanceError):
        block.plugin = 'other'
    with pytest.raises(TypeError):
        block.joints['slide'].command['position'] = InterfaceSpec('position')
    with pytest.raises(TypeError):
        block.hardware_params['ip'] = '10.0.0.1'
    control = system.urdf.joint_controls['slide']
    with pytest.raises(TypeError):
        control.bounds['velocity'] = (0.0, 1.0)


def test_no_block_gives_empty_results():
    system, messages = imported('')
    assert system.urdf.ros2_control == () and system.urdf.joint_controls == {}
    assert messages == []


def test_prefixed_import_keeps_the_urdf_joint_names():
    system, _ = imported(FULL, prefix='left_')
    assert list(system.urdf.joint_controls) == ['shoulder', 'slide']
    assert [c.name for c in system.configs][:2] == ['left_shoulder', 'left_slide']
    assert list(system.urdf.ros2_control[0].joints) == ['slide', 'shoulder']


def _block(joints, name='B', btype='system', hardware='<hardware><plugin>p/P</plugin></hardware>'):
    return '<ros2_control name="%s" type="%s">%s%s</ros2_control>' % (name, btype, hardware,
                                                                      joints)


@pytest.mark.parametrize('blocks, named', [
    (_block('<joint name="elbow"><command_interface name="position"/></joint>'),
     ["<ros2_control name='B'>", "joint 'elbow' is not in the URDF", "'shoulder'"]),
    (_block('<joint name="tool_fixed"><command_interface name="effort"/></joint>'),
     ["joint 'tool_fixed' is fixed but declares command interfaces 'effort'"]),
    (_block('<joint name="slide"><command_interface name="position"><param name="min">0.4'
            '</param><param name="max">0.1</param></command_interface></joint>'),
     ["joint 'slide' command_interface 'position': min 0.4 > max 0.1"]),
    (_block('<joint name="slide"><command_interface name="velocity"><param name="max">fast'
            '</param></command_interface></joint>'),
     ["joint 'slide' command_interface 'velocity': <param name=\"max\"> is 'fast', "
      "not a number"]),
    (_block('<joint name="shoulder"><state_interface name="position"><param '
            'name="initial_value">${pi/4}</param></state_interface></joint>'),
     ["joint 'shoulder' state_interface 'position': <param name=\"initial_value\"> is "
      "'${pi/4}', not a finite number"]),
    (_block('<joint name="shoulder"><state_interface name="position"><param '
            'name="initial_value">nan</param></state_interface></joint>'),
     ["joint 'shoulder' state_interface 'position'", "'nan', not a finite number"]),
    (_block('<joint name="shoulder"><state_interface name="position"/></joint>') +
     _block('<joint name="shoulder"><command_interface name="effort"/></joint>', name='C'),
     ["<ros2_control name='C'>", "joint 'shoulder' is already in <ros2_control name='B'>"]),
    (_block('<joint name="slide"/><joint name="slide"/>'),
     ["<ros2_control name='B'>", "lists the joint 'slide' twice"]),
    (_block('<joint name="slide"><command_interface name="effort"/>'
            '<command_interface name="effort"/></joint>'),
     ["joint 'slide'", "declares the command_interface 'effort' twice"]),
    (_block('<joint name="slide"><command_interface/></joint>'),
     ["joint 'slide': <command_interface> (line", "has no name attribute"]),
    (_block('<joint name="slide"><command_interface name="effort"><param>3</param>'
            '</command_interface></joint>'),
     ["joint 'slide' command_interface 'effort': <param> (line", "has no name attribute"]),
    ('<ros2_control name="B"><joint name="slide"/></ros2_control>',
     ["<ros2_control name='B'>: <ros2_control> (line", "has no type attribute"]),
    (_block('', btype='robot'),
     ["<ros2_control name='B'>: type 'robot' is not one of system, actuator, sensor"]),
    (_block('<joint name="slide" mimic="true"/>'),
     ["joint 'slide' has mimic=\"true\" but no <mimic> in the URDF"]),
    (_block('<joint name="slide" mimic="yes"/>'),
     ["joint 'slide': mimic='yes'"]),
    (_block('<joint name="finger"><command_interface name="position"/></joint>'),
     ["joint 'finger' mimics 'shoulder' and declares command interfaces 'position'"]),
])
def test_errors_name_the_block_joint_and_parameter(blocks, named):
    system = import_urdf(robot(''))
    before = [c.name for c in system.configs]
    with pytest.raises(URDFError) as err:
        import_urdf(robot(blocks), system=system, prefix='second_')
    for part in named:
        assert part in str(err.value)
    assert str(err.value).startswith("URDF robot 'r': ")
    # nothing half-imported
    assert [c.name for c in system.configs] == before


@pytest.mark.parametrize('blocks, message, action', [
    (_block('<joint name="shoulder"><state_interface name="position"><param '
            'name="initial_value">2.0</param></state_interface></joint>'),
     "joint 'shoulder': position state initial_value 2 in <ros2_control name='B'> is "
     "outside the URDF limits [-1, 1.5]", 'clipped it to 1.5'),
    (_block('<joint name="slide"><state_interface name="velocity"><param '
            'name="initial_value">-4</param></state_interface></joint>'),
     "joint 'slide': velocity state initial_value -4 in <ros2_control name='B'> is "
     "outside the URDF limits [-1, 1]", 'clipped it to -1'),
    (_block('<joint name="tool_fixed"><state_interface name="position"/></joint>'),
     "joint 'tool_fixed': a fixed joint listed in <ros2_control name='B'>", 'ignored it'),
    (_block('<joint name="wrist"><command_interface name="velocity"/></joint>'),
     "joint 'wrist': declares command interfaces 'velocity' in <ros2_control name='B'> but "
     "its <limit effort> is 0", 'commands to it are refused'),
    (_block('<joint name="finger" mimic="false"><command_interface name="position"/></joint>'),
     "joint 'finger': declares command interfaces in <ros2_control name='B'> but follows "
     "'shoulder'", 'the joint moves with its leader'),
    (_block('<joint name="finger"><state_interface name="position"><param '
            'name="initial_value">0.2</param></state_interface></joint>'),
     "joint 'finger': has state initial values in <ros2_control name='B'> but follows "
     "'shoulder'", 'the joint starts where its leader puts it'),
    (_block('<actuator name="m1"/>'),
     "ros2_control 'B': unknown element <actuator>", 'ignored it'),
    (_block('<joint name="slide"/>', hardware='<hardware/>'),
     "ros2_control 'B': <hardware> has no <plugin>", 'read the rest of the block'),
    (_block('<joint name="slide"><command_interface name="effort"/></joint>', btype='sensor'),
     "ros2_control 'B': a block of type sensor declares command interfaces (joints "
     "'slide'", 'ignored them'),
])
def test_tolerated_quirks_warn_and_strict_refuses_them(blocks, message, action):
    system, messages = imported(blocks)
    assert len(messages) == 1
    assert message in messages[0] and action in messages[0]
    with pytest.raises(URDFError) as err:
        import_urdf(robot(blocks), strict=True)
    assert message in str(err.value) and 'strict' in str(err.value)


def test_clipped_initial_values_reach_the_merged_facts():
    block = _block('<joint name="shoulder"><state_interface name="position"><param '
                   'name="initial_value">2.0</param></state_interface></joint>'
                   '<joint name="slide"><state_interface name="velocity"><param '
                   'name="initial_value">-4</param></state_interface></joint>')
    system, _ = imported(block)
    # as written in the block, clipped in the facts the simulator uses
    assert system.urdf.ros2_control[0].joints['shoulder'].state['position'].initial_value == 2
    controls = system.urdf.joint_controls
    assert (controls['shoulder'].initial_position, controls['slide'].initial_velocity) == \
        (1.5, -1.0)


def test_a_sensor_block_offers_no_commands_and_planar_joints_are_left_out():
    system, _ = imported(_block('<joint name="slide"><command_interface name="effort"/>'
                                '</joint>', btype='sensor'))
    assert system.urdf.joint_controls['slide'].command_interfaces == ()
    planar = '''<robot name="p"><link name="w"/><link name="a">%s</link>
      <joint name="base" type="planar"><parent link="w"/><child link="a"/>
        <axis xyz="0 0 1"/><limit effort="5" velocity="1"/></joint>
      %s</robot>''' % (_INERTIA, _block('<joint name="base"><command_interface '
                                        'name="effort"/></joint>'))
    with pytest.warns(URDFWarning, match="joint 'base': a planar joint listed in "
                                         "<ros2_control name='B'>"):
        system = import_urdf(planar)
    assert system.urdf.joint_controls == {}
    assert list(system.urdf.ros2_control[0].joints) == ['base']


# ------------------------------------------------------------------------- shipped arm7
def test_the_shipped_arm_declares_every_interface_within_its_limits(caplog):
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with caplog.at_level(logging.DEBUG, logger='ros_vi.urdf'):
            system = import_urdf_file(shipped_model('arm7'))
    robot = system.urdf
    # the block adds no warning and no log record (urdf_parser_py never sees it)
    assert robot.warnings == () and caplog.records == []
    (block,) = robot.ros2_control
    assert (block.name, block.type, block.plugin) == ('Arm7System', 'system',
                                                      'ros_vi/SimulatedSystem')
    assert list(block.joints) == robot.joint_names == ['joint_%d' % i for i in range(1, 8)]
    controls = robot.joint_controls
    lower, upper = robot.position_limits
    for k, name in enumerate(robot.joint_names):
        c = controls[name]
        assert c.command_interfaces == ('position', 'velocity', 'effort')
        assert c.bounds['position'] == (lower[k], upper[k])
        assert c.bounds['velocity'] == c.bounds['effort'] == (-INF, INF)
        # the start the simulator and ros-vi simulate use by default: the zero configuration
        assert (c.initial_position, c.initial_velocity) == (0.0, None)
        assert list(block.joints[name].state) == ['position', 'velocity', 'effort']


# ------------------------------------------------------------------------- xacro
XACRO = '''<?xml version="1.0"?>
<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="joint_interfaces" params="joint lower upper start">
    <joint name="${joint}">
      <command_interface name="position">
        <param name="min">${lower}</param><param name="max">${upper}</param>
      </command_interface>
      <command_interface name="effort"/>
      <state_interface name="position"><param name="initial_value">${start}</param></state_interface>
    </joint>
  </xacro:macro>
  <xacro:macro name="hardware" params="name plugin">
    <ros2_control name="${name}" type="system">
      <hardware><plugin>${plugin}</plugin><param name="period">${1/500}</param></hardware>
      <xacro:joint_interfaces joint="shoulder" lower="${-pi/4}" upper="${pi/4}" start="${pi/8}"/>
      <xacro:joint_interfaces joint="slide" lower="0.0" upper="${0.5*0.8}" start="0.1"/>
    </ros2_control>
  </xacro:macro>
  %s
  <xacro:hardware name="FromXacro" plugin="ros_vi/SimulatedSystem"/>
</robot>'''


def test_a_block_generated_by_a_xacro_macro(tmp_path):
    body = (ROBOT % {'i': _INERTIA, 'blocks': ''}).split('\n', 1)[1].rsplit('</robot>', 1)[0]
    path = tmp_path / 'r.urdf.xacro'
    path.write_text(XACRO % body)
    system = import_urdf_file(str(path))
    (block,) = system.urdf.ros2_control
    assert (block.name, block.plugin) == ('FromXacro', 'ros_vi/SimulatedSystem')
    assert float(block.hardware_params['period']) == pytest.approx(1 / 500, rel=1e-12)
    controls = system.urdf.joint_controls
    assert controls['shoulder'].command_interfaces == ('position', 'effort')
    assert controls['shoulder'].bounds['position'] == pytest.approx((-math.pi / 4,
                                                                     math.pi / 4), rel=1e-12)
    assert controls['shoulder'].initial_position == pytest.approx(math.pi / 8, rel=1e-12)
    assert controls['slide'].bounds['position'] == pytest.approx((0.0, 0.4), rel=1e-12)
    assert controls['slide'].initial_position == 0.1
    assert system.urdf.warnings == ()


# ------------------------------------------------------------------------- ros-vi info
def test_info_shows_the_declared_interfaces_of_arm7(capsys):
    assert main(['info', 'arm7']) == 0
    text = capsys.readouterr().out
    assert "ros2_control 'Arm7System' (system, plugin ros_vi/SimulatedSystem" in text
    rows = [line.split() for line in text.splitlines() if line.startswith('  joint_2 ')]
    # the joints table, then the block's table: position bounds are the joint's limits
    assert rows[0][-2:] == ['position,velocity,effort', 'dynamic']
    assert ' '.join(rows[1]) == ('joint_2 position [-2.0944, 2.0944], velocity, effort '
                                 'position, velocity, effort 0 -')
    assert main(['info', 'arm7', '--json']) == 0
    facts = json.loads(capsys.readouterr().out)
    joint = {j['name']: j for j in facts['joints']}['joint_4']
    assert (joint['command_interfaces'], joint['command_source']) == (
        ['position', 'velocity', 'effort'], 'ros2_control')
    assert joint['command_bounds']['position'] == [-2.0944, 2.0944]
    assert (joint['initial_position'], joint['initial_velocity']) == (0.0, None)
    assert [b['name'] for b in facts['ros2_control']] == ['Arm7System']


def test_info_marks_the_simulator_default_and_the_unsimulated(tmp_path, capsys):
    path = tmp_path / 'r.urdf'
    path.write_text(robot(FULL))
    assert main(['info', str(path)]) == 0
    text = capsys.readouterr().out
    lines = {tuple(line.split()[:2]): line for line in text.splitlines() if line.strip()}
    # shoulder and slide as their block says; the passive wrist takes nothing
    assert lines[('shoulder', 'revolute')].split()[-2] == 'position'
    assert lines[('slide', 'prismatic')].split()[-2] == 'velocity,effort'
    assert lines[('wrist', 'continuous')].split()[-2] == '-'
    assert 'current [-, 3] (not simulated)' in text
    assert 'temperature (not simulated)' in text
    assert "sensor 'ft' (read, not simulated): command -; state force.x, torque.z" in text
    assert "gpio 'brake' (read, not simulated): command release; state released" in text
    assert 'hardware params: ip=192.168.0.10, rate=500' in text
    path.write_text(robot(''))
    assert main(['info', str(path)]) == 0
    text = capsys.readouterr().out
    assert 'effort,position,velocity (default)' in text and 'ros2_control' not in text
