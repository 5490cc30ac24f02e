"""The browser view's scene (ros_vi.visual.viewer) and ``ros-vi view``: a node per link with
the link's visual geometry, posed where the robot's forward kinematics puts the link;
joint positions set by name; a missing mesh is drawn as its frame with a warning; a taken
port, an unknown model or an unreadable recording exit 2 naming the culprit."""
import os
import socket
import warnings

import numpy as np
import pytest

from ros_vi.cli import main
from ros_vi.cli.models import shipped_names
from ros_vi.conventions import quaternion_to_rotation
from ros_vi.resources import shipped_model
from ros_vi.simulation import Simulation
from ros_vi.recording import open_writer
from ros_vi.urdf import URDFWarning, import_urdf, link_geometry, load_urdf_text
from ros_vi.urdf.shapes import SEGMENTS
from ros_vi.visual.render import BONE_RGBA, JOINT_RGBA
from ros_vi.visual.viewer import RobotView, ViewerError, fit_camera, serve

from test_urdf_cases import mimic_robot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytest.importorskip('viser')


def _rgb(rgba):
    return tuple(int(round(255 * c)) for c in rgba[:3])


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def server():
    srv = serve(free_port())
    yield srv
    srv.stop()


def node_pose(node):
    """(4, 4) pose of a scene node as viser holds it (wxyz, position)."""
    w, x, y, z = node.wxyz
    g = np.eye(4)
    g[:3, :3] = quaternion_to_rotation((x, y, z, w))
    g[:3, 3] = node.position
    return g


def test_shipped_models_are_found():
    assert {'pendulum', 'cartpole', 'acrobot', 'arm7'} <= set(shipped_names())


@pytest.mark.parametrize('model', shipped_names())
def test_scene_of_shipped_model(server, model):
    text = load_urdf_text(shipped_model(model))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)      # arm7's meshes do not resolve
        view = RobotView(server, text, name=model)
    try:
        robot = import_urdf(text, floating_base='euler').urdf
        assert view.joint_names == robot.config_names
        assert set(view.nodes) == set(robot.link_names)
        for link, node in view.nodes.items():
            assert node.name == '/%s/%s' % (model, link)
        # every triangle of the scene is in a mesh under its own link's node
        meshes = {}
        for m in view._meshes:
            link = m.name.split('/')[2]
            meshes[link] = meshes.get(link, 0) + len(m.faces)
        scene = view.scene
        owner = scene.vertex_link[scene.faces[:, 0]]
        expected = {l: int(np.sum(owner == i)) for i, l in enumerate(scene.links)
                    if np.any(owner == i)}
        assert meshes == expected
        assert set(scene.drawn_links) <= set(meshes)
        # poses equal the forward kinematics of an independent import, at random q
        rng = np.random.default_rng(len(model))
        for _ in range(3):
            q = rng.uniform(-2.0, 2.0, len(view.joint_names))
            view.set_positions(q)
            robot.system.q = q
            fk = robot.link_poses()
            for i, link in enumerate(view.links):
                np.testing.assert_allclose(node_pose(view.nodes[link]), fk[link], atol=1e-6)
                np.testing.assert_allclose(view.poses[i], fk[link], atol=1e-12)
    finally:
        view.remove()
    assert view.nodes == {}


def test_a_capsule_is_drawn_as_its_triangles(server):
    text = ('<robot name="cap"><link name="a"><visual><origin xyz="0 0 0.3"/><geometry>'
            '<capsule radius="0.05" length="0.4"/></geometry></visual></link></robot>')
    view = RobotView(server, text, name='cap')
    try:
        # the capsule's triangles are drawn under its link's node
        assert {m.name.split('/')[2] for m in view._meshes} == {'a'}
        drawn = np.vstack([np.asarray(m.vertices) for m in view._meshes])
        (capsule,) = link_geometry(text)
        expected = capsule.triangles(SEGMENTS)[0]
        assert expected[:, 2].max() == pytest.approx(0.3 + 0.25, abs=1e-15)
        gaps = np.linalg.norm(expected[:, None, :] - drawn[None, :, :], axis=2).min(axis=1)
        assert gaps.max() < 1e-7
    finally:
        view.remove()


def test_set_joint_positions_by_name(server):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        view = RobotView(server, load_urdf_text(shipped_model('arm7')), name='byname')
    try:
        q = np.linspace(0.1, 0.7, 7)
        view.set_positions(q)
        view.set_joint_positions(['joint_3', 'not_a_joint', 'joint_1'], [-0.5, 9.0, 0.25])
        expected = q.copy()
        expected[[2, 0]] = [-0.5, 0.25]
        np.testing.assert_array_equal(view.positions, expected)
        with pytest.raises(ValueError, match='expected 7 positions'):
            view.set_positions(np.zeros(3))
    finally:
        view.remove()


def test_a_floating_robot_is_drawn_at_its_base_pose(server):
    """The simulator node draws a floating robot from its joint positions and its base's
    pose: every link node at base pose x the fixed-base kinematics, where the simulation
    has the link."""
    import floating_case as case
    from ros_vi.simulation import setup_robot
    setup = setup_robot(case.URDF, floating_base=True, initial_base_pose=case.POSE,
                        initial_base_twist=case.TWIST, initial_positions=list(case.HIPS))
    sim = Simulation.from_setup(setup, 0.01)
    for _ in range(20):
        sim.tick()
    state = sim.state()
    view = RobotView(server, case.URDF, name='floating')
    try:
        assert view.joint_names == case.JOINTS
        view.set_positions(state.joint_states(mimic=False)[1], state.bodies[0].pose)
        with sim.system.evaluate_at(sim.output_data()):
            world = sim.system.urdf.link_poses()
        for link in ('base', 'leg_left', 'leg_right'):
            np.testing.assert_allclose(node_pose(view.nodes[link]), world[link], atol=1e-6)
        assert not np.allclose(world['base'], np.eye(4), atol=0.1)
    finally:
        view.remove()


def test_a_floating_recording_replays(tmp_path, capsys):
    """``ros-vi view`` of a recording with a floating base (drawn at its recorded pose)."""
    import floating_case as case
    from ros_vi.simulation import setup_robot
    sim = Simulation.from_setup(setup_robot(case.URDF, floating_base=True,
                                            initial_base_twist=case.TWIST), 0.01)
    path = tmp_path / 'tumble.npz'
    with open_writer(str(path), case.URDF, {}) as writer:
        for _ in range(20):
            writer.append(sim.state())
            sim.tick()
    assert main(['view', str(path), '--port', str(free_port()), '--duration', '0.3']) == 0
    assert 'replaying' in capsys.readouterr().out


def test_mimic_joints_follow_their_leader(server):
    text = mimic_robot()
    view = RobotView(server, text, name='mimic')
    try:
        robot = import_urdf(text).urdf
        mimics = robot.mimic_joint_names
        assert mimics and not set(mimics) & set(view.joint_names)
        q = np.linspace(0.2, 0.5, len(view.joint_names))
        view.set_positions(q)
        before = view.poses.copy()
        view.set_joint_positions(mimics, np.full(len(mimics), 1.0))    # ignored
        np.testing.assert_array_equal(view.poses, before)
        robot.system.q = q
        fk = robot.link_poses()
        for link in view.links:
            np.testing.assert_allclose(node_pose(view.nodes[link]), fk[link], atol=1e-6)
    finally:
        view.remove()


def test_missing_mesh_is_its_frame_with_a_warning(server, tmp_path):
    text = load_urdf_text(shipped_model('pendulum'))
    bad = tmp_path / 'broken.stl'
    bad.write_bytes(b'not a mesh at all')
    # the pendulum's bob link gets a mesh that cannot be read, another one a missing file
    robot = import_urdf(text, gravity=(0, 0, -9.8)).urdf
    links = robot.link_names
    extra = ''.join(
        '<link name="x_%s"><visual><geometry><mesh filename="%s"/></geometry></visual></link>'
        '<joint name="xj_%s" type="fixed"><parent link="%s"/><child link="x_%s"/></joint>'
        % (i, f, i, links[-1], i) for i, f in enumerate([str(bad), 'missing/none.stl']))
    text = text.replace('</robot>', extra + '</robot>')
    with pytest.warns(URDFWarning) as caught:
        view = RobotView(server, text, name='broken', base_dir=str(tmp_path))
    try:
        messages = ' '.join(str(w.message) for w in caught)
        assert 'broken.stl' in messages and 'none.stl' in messages
        for i in range(2):
            assert view.nodes['x_%d' % i].show_axes
            # nothing of the mesh is drawn: only the skeleton's stand-in colours
            assert 'x_%d' % i not in view.scene.drawn_links
            colours = {tuple(m.color) for m in view._meshes
                       if m.name.startswith('/broken/x_%d/' % i)}
            assert colours <= {_rgb(BONE_RGBA), _rgb(JOINT_RGBA)}
    finally:
        view.remove()


def test_fit_camera_frames_the_robot(server):
    view = RobotView(server, load_urdf_text(shipped_model('pendulum')), name='cam')
    try:
        fit = fit_camera(server, view)
        # the pendulum hangs 1 m below its pivot at z = 0: the ground goes under it
        assert fit.ground < -1.0
        np.testing.assert_allclose(server.initial_camera.look_at, fit.target)
        assert np.linalg.norm(np.asarray(server.initial_camera.position) - fit.target) > 1.0
    finally:
        view.remove()


def test_port_in_use(capsys):
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ViewerError, match='port %d' % port):
            serve(port)
        assert main(['view', 'pendulum', '--port', str(port), '--duration', '0.1']) == 2
    err = capsys.readouterr().err
    assert 'ros-vi view: error: port %d on 127.0.0.1 is not available' % port in err


def test_bad_input_exits_2(tmp_path, capsys):
    assert main(['view', 'no_such_robot', '--port', str(free_port())]) == 2
    assert "unknown model 'no_such_robot'" in capsys.readouterr().err
    junk = tmp_path / 'junk.npz'
    junk.write_bytes(b'not a recording')
    assert main(['view', str(junk), '--port', str(free_port())]) == 2
    assert 'junk.npz' in capsys.readouterr().err
    assert main(['view']) == 2
    assert 'give a MODEL or a RECORDING' in capsys.readouterr().err
    assert main(['view', 'pendulum', '--rate', '500']) == 2
    assert '--rate' in capsys.readouterr().err


def test_live_and_replay_run_for_a_duration(tmp_path, capsys):
    port = free_port()
    assert main(['view', 'pendulum', '--initial', 'theta=1', '--port', str(port),
                 '--duration', '0.5']) == 0
    assert 'http://127.0.0.1:%d' % port in capsys.readouterr().out
    text = load_urdf_text(shipped_model('pendulum'))
    sim = Simulation.from_urdf(text, rate=100.0, initial_positions={'theta': 1.0})
    path = tmp_path / 'swing.npz'
    with open_writer(str(path), text, {}) as writer:
        for _ in range(50):
            writer.append(sim.state())
            sim.tick()
    assert main(['view', str(path), '--port', str(free_port()), '--duration', '0.5']) == 0
    assert 'replaying' in capsys.readouterr().out


BOX_URDF = """<robot name="crate"><link name="crate">
  <inertial><mass value="2"/><inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0"
    iyz="0"/></inertial>
  <visual><geometry><box size="0.3 0.2 0.1"/></geometry></visual>
  <collision><geometry><box size="0.3 0.2 0.1"/></geometry></collision></link></robot>"""


def test_the_touching_contacts_are_drawn_where_the_simulation_has_them(server):
    """A yawed crate (a floating base) resting on the ground: its four bottom corners are
    drawn as contact points on the ground, in the world, each with a line up along its
    force (0.005 m/N), green (sticking), the four lines' lengths adding to the weight's;
    the open top corners are not drawn.  LiveView puts them in the scene and takes them
    away when nothing touches."""
    from ros_vi.simulation import setup_robot
    from ros_vi.visual.viewer import LiveView, contact_segments
    setup = setup_robot(BOX_URDF, floating_base=True, ground=(0.0, 0.8),
                        initial_base_pose=[0.5, 0.2, 0.05, 0.0, 0.0, 0.7])
    sim = Simulation.from_setup(setup, 0.002)
    sim.step(50)
    state = sim.state()
    base = state.bodies[0].pose
    view = RobotView(server, BOX_URDF, name='crate')
    try:
        view.set_positions(state.joint_states(mimic=False)[1], base)
        points, segments, rgb = contact_segments(view, sim.contact_forces())
    finally:
        view.remove()
    corners = np.array([[sx * 0.15, sy * 0.1, -0.05, 1.0] for sx in (-1, 1)
                        for sy in (-1, 1)]) @ base.T
    assert len(points) == 4
    np.testing.assert_allclose(np.sort(points, axis=0), np.sort(corners[:, :3], axis=0),
                               atol=1e-9)
    np.testing.assert_allclose(points[:, 2], 0.0, atol=1e-12)
    np.testing.assert_allclose(segments[:, 0], points)
    up = segments[:, 1] - segments[:, 0]
    np.testing.assert_allclose(up[:, :2], 0.0, atol=1e-9)
    assert abs(up[:, 2].sum() - 0.005 * 2.0 * 9.81) <= 1e-9
    assert rgb.tolist() == [[0.1, 0.8, 0.2]] * 4
    live = LiveView(free_port(), BOX_URDF, warn=lambda m: None, rate=1e9)
    try:
        live.draw(state.joint_states(mimic=False)[1], base, sim.contact_forces())
        assert [h.name for h in live._contacts] == ['/contacts/points', '/contacts/forces']
        np.testing.assert_allclose(live._contacts[0].points, points, atol=1e-3)  # float16
        sim.reset()
        live.draw(state.joint_states(mimic=False)[1], base, sim.contact_forces())
        assert live._contacts == []
    finally:
        live.stop()


def test_a_worlds_objects_and_their_contacts_are_drawn_live(server):
    """worlds/drop.yaml as the simulator node draws it: its description has the objects'
    free joints, posed by every config in the charts' attitudes: the ball and the crate
    are drawn where the simulation has them, resting, with their five touching points on
    the ground."""
    from ros_vi.simulation.world import load_world
    from ros_vi.visual.viewer import contact_segments
    world = os.path.join(ROOT, 'worlds', 'drop.yaml')
    sim = Simulation.from_world(world, rate=500.0)
    sim.step(750)
    state = sim.state()
    view = RobotView(server, load_world(world).urdf(), name='drop')
    try:
        assert len(view.joint_names) == sim.system.nQ
        view.set_positions(state.positions, None,
                           sim.system.free_charts.attitudes(sim.system.model))
        with sim.system.evaluate_at(sim.output_data()):
            where = sim.system.urdf.link_poses()
        for body in ('ball', 'crate'):
            np.testing.assert_allclose(node_pose(view.nodes[body]), where[body], atol=1e-6)
        points, _, _ = contact_segments(view, sim.contact_forces())
    finally:
        view.remove()
    assert len(points) == 5
    np.testing.assert_allclose(points[:, 2], 0.0, atol=1e-9)
