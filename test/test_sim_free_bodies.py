"""Free bodies in the simulation layer: a floating base set up by ``setup_robot``
(``floating_base``, its initial pose and twist), its configs kept out of every joint list,
its published pose and twist, free fall against the closed form, reset, and the link
transforms of a floating robot (test/ros/test_sim_floating.py holds the node to the
same over DDS)."""
import numpy as np
import pytest

import floating_case as case
from ros_vi.conventions import pose_to_matrix
from ros_vi.recording import check_recording, load_recording, open_writer, save_recording
from ros_vi.simulation import OptionError, Simulation, setup_robot


def floating(pose=case.POSE, twist=case.TWIST, gravity=(0.0, 0.0, -case.G), **options):
    setup = setup_robot(case.URDF, gravity=gravity, floating_base=True,
                        initial_base_pose=pose, initial_base_twist=twist, **options)
    return setup, Simulation.from_setup(setup, 0.01)


def test_free_configs_are_no_joints():
    setup, sim = floating()
    assert [c.name for c in sim.system.configs] == case.FREE_CONFIGS + case.JOINTS
    assert sim.joint_names == case.FREE_CONFIGS + case.JOINTS      # the configs
    assert sim.joint_state_names == case.JOINTS
    assert sim.actuated_joint_names == case.JOINTS
    assert list(setup.interfaces) == case.JOINTS
    assert setup.trajectory_joints == case.JOINTS
    assert sim.command_joints == case.JOINTS
    assert sim.effort_limits.tolist() == [20.0, 20.0]
    state = sim.state()
    assert state.positions.shape == state.velocities.shape == state.efforts.shape == (8,)
    names, positions, velocities, efforts = state.joint_states()
    assert names == case.JOINTS
    np.testing.assert_array_equal(positions, state.positions[6:])
    np.testing.assert_array_equal(velocities, state.velocities[6:])
    np.testing.assert_array_equal(efforts, state.efforts[6:])
    assert [b.name for b in state.bodies] == [case.BASE]
    assert sim.floating_base.body.name == case.BASE
    # no joint option names them but the initial state's (as a world file's twists do)
    with pytest.raises(OptionError, match="command_interfaces.*'root_joint_z' is a "
                                          "coordinate of a free joint"):
        setup_robot(case.URDF, floating_base=True,
                    command_interfaces={'root_joint_z': ['effort']})
    setup = setup_robot(case.URDF, floating_base=True, initial_joints=['root_joint_z'],
                        initial_positions=[1.0], initial_velocities=[-2.0])
    base = Simulation.from_setup(setup, 0.01).state().bodies[0]
    np.testing.assert_allclose(base.pose[:3, 3], (0, 0, 1.0))
    np.testing.assert_allclose(base.linear, (0, 0, -2.0), atol=1e-12)
    with pytest.raises(OptionError, match="trajectory_joints.*'root_joint_x'"):
        setup_robot(case.URDF, floating_base=True, trajectory_joints=['root_joint_x'])
    with pytest.raises(ValueError, match="unknown joint name 'root_joint_rx'|not actuated"):
        sim.set_commands({'root_joint_rx': 1.0})
    # initial joint positions count the joints only
    setup = setup_robot(case.URDF, floating_base=True, initial_positions=list(case.HIPS))
    assert setup.initial_positions == dict(zip(case.JOINTS, case.HIPS))


def test_base_options_are_checked():
    with pytest.raises(OptionError, match='initial_base_pose: needs floating_base'):
        setup_robot(case.URDF, initial_base_pose=case.POSE)
    with pytest.raises(OptionError, match='initial_base_twist: needs floating_base'):
        setup_robot(case.URDF, initial_base_twist=case.TWIST)
    with pytest.raises(OptionError, match='initial_base_pose'):
        setup_robot(case.URDF, floating_base=True, initial_base_pose=[0, 0, 1])
    with pytest.raises(OptionError, match='initial_base_twist'):
        setup_robot(case.URDF, floating_base=True, initial_base_twist=[0, 0, np.nan, 0, 0, 0])
    setup = setup_robot(case.URDF, floating_base=True)
    with pytest.raises(OptionError, match="initial_body_poses: no free body 'leg_left' "
                                          "\\(free bodies: base\\)"):
        Simulation.from_setup(setup, 0.01, initial_body_poses={'leg_left': np.eye(4)})
    with pytest.raises(OptionError, match='initial_body_poses: body .base.'):
        Simulation.from_setup(setup, 0.01, initial_body_poses={'base': 2 * np.eye(4)})


def test_initial_pose_and_twist_are_published_back():
    _, sim = floating()
    base = sim.state().bodies[0]
    assert base.parent == sim.system.world_frame.name
    expected = np.eye(4)
    expected[:3, :3] = case.rotation_rpy(*case.POSE[3:])
    expected[:3, 3] = case.POSE[:3]
    np.testing.assert_allclose(base.pose, expected, atol=1e-15)
    # the momentum was made from the twist through the mass matrix: M^-1 p gives it back
    np.testing.assert_allclose(base.linear, case.TWIST[:3], atol=1e-12)
    np.testing.assert_allclose(base.angular, case.TWIST[3:], atol=1e-12)
    np.testing.assert_allclose(sim.state().joint_states()[2], 0.0, atol=1e-12)


def test_the_centre_of_mass_falls_as_the_closed_form():
    """A free fall from the pose and twist: no joint moves relative to the base without
    rotation, so the base origin follows x0 + v t - g t^2/2 ez (the VI's momentum in
    uniform gravity is exact: to solver tolerance)."""
    v_body = np.array([0.4, -0.3, 2.0])
    _, sim = floating(pose=case.POSE, twist=tuple(v_body) + (0.0, 0.0, 0.0))
    R0 = case.rotation_rpy(*case.POSE[3:])
    x0, v0 = np.array(case.POSE[:3]), R0 @ v_body
    for k in range(1, 101):
        sim.tick()
        t = k * 0.01
        base = sim.state().bodies[0]
        expected = x0 + v0 * t - 0.5 * case.G * t ** 2 * np.array([0, 0, 1.0])
        np.testing.assert_allclose(base.pose[:3, 3], expected, atol=1e-9)
        np.testing.assert_allclose(base.pose[:3, :3], R0, atol=1e-9)
        np.testing.assert_allclose(base.pose[:3, :3].T @ (v0 - case.G * t * np.array(
            [0, 0, 1.0])), base.linear, atol=1e-9)
        np.testing.assert_allclose(base.angular, 0.0, atol=1e-9)


def test_a_tumbling_base_passes_pitch_90_and_resets_exactly():
    """Zero gravity: the base tumbles through pitch 90 deg (no singularity, the attitude
    stays a rotation); reset returns to the start (the charts' reference attitudes too) and
    a rerun from t = 0 repeats the run bit for bit."""
    _, sim = floating(pose=(0, 0, 0, 0, 1.3, 0), twist=(0, 0, 0, 0, 6.0, 0.5),
                      gravity=(0, 0, 0))
    run = []
    pitches = []
    for _ in range(60):
        assert sim.tick().ok
        base = sim.state().bodies[0]
        run.append(base.pose.copy())
        R = base.pose[:3, :3]
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
        pitches.append(np.arcsin(-np.clip(R[2, 0], -1, 1)))
    assert max(pitches) > 1.5          # went through pitch = 90 deg
    sim.reset(keep_time=False)
    base = sim.state().bodies[0]
    np.testing.assert_allclose(base.pose[:3, :3], case.rotation_rpy(0, 1.3, 0), atol=1e-15)
    np.testing.assert_allclose(base.angular, (0, 6.0, 0.5), atol=1e-12)
    for k in range(60):
        sim.tick()
        np.testing.assert_array_equal(sim.state().bodies[0].pose, run[k])


def test_link_transforms_of_a_floating_robot():
    """tf has the legs relative to the base (the base's own pose is the free body's, not a
    link transform); link_transforms_at places the legs and any free body given."""
    _, sim = floating()
    for _ in range(5):
        sim.tick()
    transforms = sim.link_transforms()
    assert [(p, c) for p, c, _ in transforms] == [('base', 'leg_left'), ('base', 'leg_right')]
    robot = sim.system.urdf
    with sim.system.evaluate_at(sim.output_data()):
        poses = robot.link_poses()
    for p, c, g in transforms:
        np.testing.assert_allclose(g, np.linalg.inv(poses[p]) @ poses[c], atol=1e-12)
    # the base's pose is the world pose of its link
    np.testing.assert_allclose(sim.state().bodies[0].pose, poses['base'], atol=1e-12)
    # at other joint positions (any base pose: the legs are relative to it)
    again = sim.link_transforms_at([0.5, -0.5], {case.BASE: np.eye(4)})
    for _, _, g in again:
        np.testing.assert_allclose(g[:3, :3], case.rotation_rpy(0, 0.5 if g[1, 3] > 0
                                                                  else -0.5, 0), atol=1e-12)
    with pytest.raises(ValueError, match='expected 2 values'):
        sim.link_transforms_at(np.zeros(8))


def test_a_fixed_robot_state_is_unchanged():
    """Without free joints the joints are every config, published as they are."""
    sim = Simulation.from_urdf(case.URDF, rate=100.0, initial_positions=list(case.HIPS))
    state = sim.state()
    assert sim.joint_names == sim.joint_state_names == case.JOINTS and state.bodies == []
    names, positions, _, _ = state.joint_states()
    assert names == case.JOINTS and positions is state.positions
    assert sim.floating_base is None


def recorded_run(path, ticks=30):
    """A tumbling, falling run of the floating robot written to ``path`` (.npz, .csv or
    .mcap); returns the published states."""
    _, sim = floating()
    states = [sim.state()]
    with open_writer(path, case.URDF) as writer:
        writer.append(states[0], sim.link_transforms(), sim.static_transforms())
        for _ in range(ticks):
            sim.tick()
            states.append(sim.state())
            writer.append(states[-1], sim.link_transforms())
    return states


@pytest.mark.parametrize('suffix', ['.npz', '.csv', '.mcap', '.npz.mcap'])
def test_recordings_keep_the_base_pose(tmp_path, suffix):
    """npz and csv keep the base pose in columns, an MCAP on /tf (read back from there);
    '.npz.mcap': an npz converted to MCAP."""
    states = recorded_run(tmp_path / ('run.npz' if suffix == '.npz.mcap' else 'run' + suffix))
    if suffix == '.npz.mcap':
        save_recording(load_recording(tmp_path / 'run.npz'), tmp_path / 'run.mcap')
        suffix = '.mcap'
    rec = load_recording(tmp_path / ('run' + suffix))
    assert rec.joint_names == case.JOINTS and rec.bodies == [case.BASE]
    assert rec.body_pose.shape == (len(states), 1, 7)
    for k, state in enumerate(states):
        x = rec.body_pose[k, 0]
        np.testing.assert_allclose(pose_to_matrix(x[:3], x[3:]), state.bodies[0].pose,
                                   atol=1e-14)
        np.testing.assert_allclose(rec.position[k], state.joint_states()[1], atol=0)
    if suffix == '.mcap':
        assert rec.metadata['free_bodies'] == {case.BASE: 'World'}
    if suffix == '.csv':
        header = [line for line in (tmp_path / 'run.csv').read_text().splitlines()
                  if not line.startswith('#')][0].split(',')
        assert header[-8:] == ['base.x', 'base.y', 'base.z', 'base.qx', 'base.qy', 'base.qz',
                               'base.qw', 'energy']


def test_a_recording_with_a_bad_body_pose_is_refused(tmp_path):
    recorded_run(tmp_path / 'run.npz', ticks=3)
    rec = load_recording(tmp_path / 'run.npz')
    rec.body_pose[2, 0, 4] = np.inf
    assert check_recording(rec) == "body_pose of body 'base' is inf (qy) at t = 0.02 s"
    rec.body_pose = rec.body_pose[:, :, :6]
    assert 'body_pose is float64 of shape (4, 1, 6), expected numbers of shape (4, 1, 7)' \
        in check_recording(rec)


def test_animations_draw_the_robot_at_its_base_pose(tmp_path):
    """The animation's link poses are the recorded base pose times the fixed-base
    kinematics (at the samples exactly; between them interpolated)."""
    from ros_vi.visual.playback import (base_poses, config_positions, link_pose_track,
                                        load_robot, render_frame)
    states = recorded_run(tmp_path / 'run.npz', ticks=10)
    rec = load_recording(tmp_path / 'run.npz')
    system, scene = load_robot(rec.robot_description)
    base = base_poses(system, rec, rec.t)
    for k, state in enumerate(states):
        np.testing.assert_allclose(base[k], state.bodies[0].pose, atol=1e-14)
    mid = base_poses(system, rec, [0.5 * (rec.t[3] + rec.t[4])])[0]
    np.testing.assert_allclose(mid[:3, 3], 0.5 * (base[3][:3, 3] + base[4][:3, 3]),
                               atol=1e-15)
    np.testing.assert_allclose(mid[:3, :3].T @ mid[:3, :3], np.eye(3), atol=1e-14)
    # the links where the simulation had them
    track = link_pose_track(system, scene, config_positions(system, rec, rec.t))
    _, sim = floating()
    for k in (0, 10):
        with sim.system.evaluate_at(sim.output_data()):
            world = sim.system.urdf.link_poses()
        for i, link in enumerate(scene.links):
            np.testing.assert_allclose(base[k] @ track[k, i], world[link], atol=1e-12)
        for _ in range(10):
            sim.tick()
    img = render_frame(rec, t=rec.t[-1], size=(64, 48), supersample=1)
    assert img.size == (64, 48)


def test_a_retried_tick_restarts_in_the_charts_it_began_in():
    """A tick whose first try fails after it moved the charts (each step recentres them
    on the body) is retried from the tick's start in the tick's own charts: the base ends
    where an untroubled tick with as many substeps puts it."""
    from ros_vi.integrators import ConvergenceError
    start = dict(pose=(0, 0, 0, 0.2, 0.3, 0), twist=(0, 0, 0, 3.0, 6.0, 0.5),
                 gravity=(0, 0, 0))
    _, sim = floating(**start)
    # (a System of its own: the charts are the System's)
    twin = Simulation.from_setup(floating(**start)[0], 0.01, substeps=2)
    step = sim.mvi.step
    failed = []

    def fail_after_stepping(*args, **kwargs):
        out = step(*args, **kwargs)
        if not failed:
            # as a subdivided step that fails late leaves it: the charts on the body
            failed.append(True)
            sim.mvi.recenter()
            raise ConvergenceError('a failure after the charts moved')
        return out
    sim.mvi.step = fail_after_stepping
    result = sim.tick()
    assert result.ok and result.retries == 1 and result.substeps == 2 and failed
    assert twin.tick().ok
    np.testing.assert_array_equal(sim.state().bodies[0].pose, twin.state().bodies[0].pose)
