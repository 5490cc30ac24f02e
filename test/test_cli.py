"""The ``ros-vi`` command line, run as a user runs it (a subprocess) and in-process."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ros_vi.cli import main
from ros_vi.cli.models import shipped_names
from ros_vi.urdf import import_urdf_file
from ros_vi.resources import shipped_model

SHIPPED = ['acrobot', 'arm7', 'cartpole', 'pendulum']


def ros_vi(*args, check=None):
    """``python -m ros_vi ARGS`` in a subprocess: (exit status, stdout, stderr)."""
    proc = subprocess.run([sys.executable, '-m', 'ros_vi'] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=600)
    if check is not None:
        assert proc.returncode == check, proc.stderr + proc.stdout
    return proc.returncode, proc.stdout, proc.stderr


def test_shipped_models_are_listed():
    assert shipped_names() == SHIPPED


def test_help_lists_every_command_and_unknown_ones_exit_2():
    status, out, _ = ros_vi('--help', check=0)
    from ros_vi.cli import COMMANDS
    for name in COMMANDS:
        assert name in out
    status, _, err = ros_vi('frobnicate')
    assert status == 2 and "invalid choice: 'frobnicate'" in err
    status, _, err = ros_vi('info', 'pendulum', '--bogus')
    assert status == 2 and 'unrecognized arguments: --bogus' in err


@pytest.mark.parametrize('model', SHIPPED)
def test_info_matches_the_imported_model(model, capsys):
    assert main(['info', model, '--json']) == 0
    facts = json.loads(capsys.readouterr().out)
    system = import_urdf_file(shipped_model(model))
    assert facts['dof'] == system.nQ
    assert facts['configs'] == [c.name for c in system.configs]
    # total mass from the links equals the mass the dynamics sees
    assert facts['total_mass'] == pytest.approx(
        sum(f.mass for f in system.frames if f.mass), rel=1e-12)
    moving = [j['name'] for j in facts['joints'] if j['role'] != 'fixed']
    assert moving == system.urdf.joint_names + system.urdf.mimic_joint_names or \
        sorted(moving) == sorted(system.urdf.joint_names + system.urdf.mimic_joint_names)
    effort = {j['name']: j['command_interfaces'] for j in facts['joints']}
    for name, limit in zip(system.urdf.input_joint_names, system.urdf.input_effort_limits):
        assert effort[name] == (['effort'] if limit else [])
    assert main(['info', model]) == 0
    text = capsys.readouterr().out
    assert '%d DOF' % system.nQ in text and facts['root_link'] in text


def test_info_reports_mimic_joints_and_importer_warnings(tmp_path, capsys):
    urdf = tmp_path / 'gripper.urdf'
    urdf.write_text('''<robot name="g">
      <link name="base"/>
      <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="b"><inertial><mass value="0.5"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="left" type="prismatic"><parent link="base"/><child link="a"/>
        <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="10" velocity="1"/></joint>
      <joint name="right" type="prismatic"><parent link="base"/><child link="b"/>
        <axis xyz="1 0 0"/><limit lower="-0.1" upper="0" effort="10" velocity="1"/>
        <mimic joint="left" multiplier="-1" offset="0"/></joint>
      <joint name="spin" type="continuous"><parent link="b"/><child link="c"/></joint>
      <link name="c"/>
    </robot>''')
    assert main(['info', str(urdf), '--json']) == 0
    facts = json.loads(capsys.readouterr().out)
    assert (facts['dof'], facts['dynamic_dof']) == (2, 1) and facts['mimic_joints'] == ['right']
    right = [j for j in facts['joints'] if j['name'] == 'right'][0]
    assert right['role'] == 'mimic of left (x -1 +0)'
    assert any("'spin'" in w and 'kinematic' in w for w in facts['warnings'])
    assert facts['total_mass'] == 1.5


def test_info_bad_models_are_named():
    status, _, err = ros_vi('info', 'no_such_robot')
    assert status == 2
    assert "unknown model 'no_such_robot'" in err and 'arm7, cartpole' in err
    status, _, err = ros_vi('info', '/nonexistent/robot.urdf')
    assert status == 2 and "'/nonexistent/robot.urdf': no such file" in err


def test_info_malformed_urdf_is_named(tmp_path):
    bad = tmp_path / 'bad.urdf'
    bad.write_text('<robot name="x"><link name="a"></robot>')
    status, _, err = ros_vi('info', bad)
    assert status == 2 and 'bad.urdf' in err and 'malformed XML' in err


def test_console_script_is_declared():
    import ros_vi
    root = os.path.dirname(os.path.dirname(ros_vi.__file__))
    with open(os.path.join(root, 'setup.py')) as fh:
        assert "'ros-vi = ros_vi.cli:main'" in fh.read()
