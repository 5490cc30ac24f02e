"""One robot set-up for every way of simulating it: ``Simulation.from_urdf``, ``ros-vi
simulate`` and ``ros-vi info`` give the robot of test/setup_case.py the interfaces, bounds
and initial state its ``<ros2_control>`` block declares, and apply the one passive-joint
rule (test/ros/test_sim_setup.py holds the simulator node over DDS to the same)."""
import json

import numpy as np
import pytest

import setup_case as case
from ros_vi.cli import main
from ros_vi.recording import load_recording
from ros_vi.simulation import OptionError, Simulation, joint_interfaces, setup_robot


def test_the_script_path_takes_the_block():
    sim = Simulation.from_urdf(case.ROBOT, rate=500.0)
    assert sim.joint_names == case.JOINTS
    assert sim.command_interfaces == case.INTERFACES
    assert sim.command_bounds() == case.BOUNDS
    state = sim.state()
    np.testing.assert_array_equal(state.positions, case.INITIAL_POSITIONS)
    np.testing.assert_allclose(state.velocities, case.INITIAL_VELOCITIES, atol=1e-15)


def test_the_passive_joint_is_refused_by_name_and_saturated_in_a_raw_vector():
    sim = Simulation.from_urdf(case.ROBOT, rate=500.0)
    for interface in ('effort', 'position', 'velocity'):
        with pytest.raises(ValueError, match=case.PASSIVE_REFUSAL):
            sim.set_commands({'wrist': 1.0}, interface=interface)
    with pytest.raises(ValueError, match=case.PASSIVE_REFUSAL):
        sim.set_joint_targets(['wrist'], efforts=[1.0])
    # a raw input vector (the closed loop's) is saturated at the limit 0 instead
    u = np.zeros(sim.system.nu)
    u[sim.system.get_input('wrist').index] = 5.0
    sim.set_input_commands(u)
    assert sim.effective_command()[sim.system.get_input('wrist').index] == 0.0
    # and no option can give it an interface
    with pytest.raises(OptionError, match=case.PASSIVE_REFUSAL):
        Simulation.from_urdf(case.ROBOT, command_interfaces={'wrist': ['effort']})


def test_a_block_listing_the_passive_joint_gives_it_no_interface():
    """A ``<ros2_control>`` block may list a passive joint with command interfaces (urdfdom
    and ros2_control accept it; the importer notes the quirk): the robot still starts, and the joint
    offers none, so a command to it is refused by the one rule."""
    block = case.ROBOT.replace('</ros2_control>', '''
    <joint name="wrist"><command_interface name="effort"/>
      <command_interface name="position"/><state_interface name="position"/></joint>
  </ros2_control>''')
    sim = Simulation.from_urdf(block, rate=500.0)
    assert [w.name for w in sim.system.urdf.warnings if 'passive' in w.problem] == ['wrist']
    assert sim.command_interfaces == case.INTERFACES
    assert joint_interfaces(sim.system)['wrist'].interfaces == ()
    with pytest.raises(ValueError, match=case.PASSIVE_REFUSAL):
        sim.set_commands({'wrist': 1.0}, interface='position')


def test_a_target_beyond_the_bound_settles_at_the_bound():
    sim = Simulation.from_urdf(case.ROBOT, rate=500.0, drive_frequency=case.DRIVE_FREQUENCY)
    sim.set_commands({'slide': 0.0}, interface='velocity')
    sim.set_joint_targets(['shoulder'], [case.BEYOND])
    peak = 0.0
    for _ in range(1500):
        sim.tick()
        peak = max(peak, sim.state().positions[0])
    assert abs(sim.state().positions[0] - case.HELD_AT) < case.HOLD_TOL
    assert peak < case.UPPER_LIMIT


def test_the_table_names_where_each_entry_comes_from():
    setup = setup_robot(case.ROBOT)
    table = joint_interfaces(setup.system)
    # as declared (the block lists the slide's velocity first)
    assert {j: set(e.interfaces) for j, e in table.items()} == {
        j: set(i) for j, i in case.INTERFACES.items()}
    assert {j: e.source for j, e in table.items()} == {
        'shoulder': 'ros2_control', 'slide': 'ros2_control', 'wrist': None}
    over = joint_interfaces(setup.system, overrides={'slide': ['position']})
    assert over['slide'].interfaces == ('position',) and over['slide'].source == 'override'
    assert over['slide'].bounds == {}


def test_the_command_line_takes_the_block(tmp_path, capsys):
    path = tmp_path / 'setup_case.urdf'
    path.write_text(case.ROBOT)
    out = tmp_path / 'run.npz'
    assert main(['simulate', str(path), '--duration', '0.01', '--out', str(out),
                 '--no-progress']) == 0
    rec = load_recording(str(out))
    assert list(rec.joint_names) == case.JOINTS + ['finger']     # the mimic joint last
    np.testing.assert_array_equal(rec.position[0, :3], case.INITIAL_POSITIONS)
    np.testing.assert_allclose(rec.velocity[0, :3], case.INITIAL_VELOCITIES, atol=1e-15)
    capsys.readouterr()
    assert main(['info', str(path), '--json']) == 0
    facts = json.loads(capsys.readouterr().out)
    offered = {j['name']: set(j['command_interfaces']) for j in facts['joints']
               if j['name'] in case.JOINTS}
    assert offered == {j: set(i) for j, i in case.INTERFACES.items()}
