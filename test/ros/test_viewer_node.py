"""The browser view over ROS: the viewer node draws what a simulator publishes
(robot_description + joint_states, over DDS), and the simulator's own view (viewer_port)
draws its published states."""
import re
import socket
import threading
import warnings

import numpy as np
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray

from ros_vi.ros.simulator_node import ParameterError, SimulatorNode

from .harness import SimProcess, urdf, wait_until

TARGET = [0.3, -0.4, 0.2, -0.8, 0.1, 0.5, -0.2]


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture
def spun(probe):
    """Nodes added to an executor of their own, spun in a thread; destroyed at the end."""
    executor = SingleThreadedExecutor(context=probe.context)
    nodes = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)
    thread = threading.Thread(target=spin, daemon=True)

    def add(node):
        nodes.append(node)
        executor.add_node(node)
        if not thread.is_alive():
            thread.start()
        return node
    yield add
    stop.set()
    thread.join(timeout=5)
    executor.shutdown()
    for node in nodes:
        node.destroy_node()


def _drawing_viewer(probe, spun, sim):
    """A viewer node in ``sim``'s namespace, once it has drawn the simulator's robot."""
    from ros_vi.ros.viewer_node import ViewerNode
    sim.wait_started()
    viewer = spun(ViewerNode(context=probe.context, namespace=sim.namespace,
                             parameter_overrides=[Parameter('port', value=_free_port())]))
    wait_until(lambda: viewer.view is not None and viewer.drawn > 3,
               what='the viewer to draw the robot')
    return viewer


def test_viewer_node_draws_the_simulated_arm(probe, spun):
    sim = SimProcess({'urdf_file': urdf('arm7'), 'rate': 500.0})
    try:
        viewer = _drawing_viewer(probe, spun, sim)
        assert viewer.view.joint_names == ['joint_%d' % i for i in range(1, 8)]
        pub = probe.publisher(Float64MultiArray, sim.topic('position_controller/commands'))
        pub.publish(Float64MultiArray(data=TARGET))
        # what the browser is given follows the simulated arm to its target
        wait_until(lambda: np.abs(viewer.view.positions - TARGET).max() < 2e-3,
                   what='the drawn arm at the commanded target')
        probe.node.destroy_publisher(pub)
    finally:
        code, out = sim.stop()
    assert code == 0, out


def test_viewer_node_draws_a_floating_robot_at_its_odometry(probe, spun, tmp_path):
    """With a floating base the viewer node places the root link at the pose of odom."""
    import floating_case as case
    from nav_msgs.msg import Odometry
    from ros_vi.ros.conversions import pose_to_matrix
    path = tmp_path / 'walker.urdf'
    path.write_text(case.URDF)
    sim = SimProcess({'urdf_file': str(path), 'rate': 100.0, 'floating_base': True,
                      'initial_base_pose': list(case.POSE), 'gravity': [0.0, 0.0, 0.0],
                      'initial_base_twist': list(case.TWIST)})
    odom = probe.subscribe(Odometry, sim.topic('odom'))
    try:
        viewer = _drawing_viewer(probe, spun, sim)
        assert viewer.view.joint_names == case.JOINTS

        def drawn_at_odometry():
            # the base drawn where some odometry received put it
            drawn = viewer.view.poses[viewer.view.links.index('base')]
            for msg in odom.msgs[-50:]:
                p, o = msg.pose.pose.position, msg.pose.pose.orientation
                if np.allclose(drawn, pose_to_matrix((p.x, p.y, p.z), (o.x, o.y, o.z, o.w)),
                               atol=1e-12):
                    return True
            return False
        wait_until(drawn_at_odometry, what='the base drawn at a received odom pose')
        assert not np.allclose(viewer.view.poses[viewer.view.links.index('base')], np.eye(4),
                               atol=0.1)
    finally:
        probe.unsubscribe(odom)
        code, out = sim.stop()
    assert code == 0, out


def test_simulator_serves_its_own_view(probe):
    port = _free_port()
    node = SimulatorNode(context=probe.context, node_name='viewing_sim', parameter_overrides=[
        Parameter('urdf_file', value=urdf('arm7')), Parameter('start_paused', value=True),
        Parameter('viewer_port', value=port),
        Parameter('initial_joints', value=['joint_2', 'joint_4']),
        Parameter('initial_positions', value=[0.4, -0.8])])
    try:
        np.testing.assert_array_equal(node.view.positions, node.sim.state().positions)
        assert node.view.positions[1] == 0.4 and node.view.positions[3] == -0.8
        # the port is now taken: a second simulator says which
        with pytest.raises(ParameterError, match='parameter viewer_port: .*%d' % port):
            SimulatorNode(context=probe.context, node_name='second_sim', parameter_overrides=[
                Parameter('urdf_file', value=urdf('arm7')), Parameter('viewer_port', value=port)])
    finally:
        node.destroy_node()


def test_simulator_draws_a_worlds_objects_and_their_contacts(probe):
    """worlds/drop.yaml with viewer_port: the view poses the objects (free joints of the
    world's description) where the simulation has them, from the start, and draws their
    touching contacts once they rest."""
    import os
    world = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), 'worlds', 'drop.yaml')
    node = SimulatorNode(context=probe.context, node_name='world_view', parameter_overrides=[
        Parameter('world_file', value=world), Parameter('start_paused', value=True),
        Parameter('viewer_port', value=_free_port())])
    try:
        live = node.view
        ball = live.view.links.index('ball')
        np.testing.assert_allclose(live.view.poses[ball][:3, 3], [0.0, 0.0, 0.5], atol=1e-12)
        node.sim.step(750)
        live._drawn = -np.inf                   # not waiting out the 30 Hz bound
        node.publish_state()
        np.testing.assert_allclose(live.view.poses[ball][:3, 3], node.sim.free_bodies()[
            'ball'].pose[:3, 3] + [0.0, 0.0, 0.5], atol=1e-9)
        assert abs(live.view.poses[ball][2, 3] - 0.1) <= 1e-9
        [points, lines] = live._contacts
        assert len(points.points) == 5 and np.abs(points.points[:, 2]).max() <= 1e-3
    finally:
        node.destroy_node()


def test_ros_vi_view_ros_serves_then_stops_and_names_a_port_in_use(capsys):
    from ros_vi.cli import main
    port = _free_port()
    assert main(['view', '--ros', '--port', str(port), '--duration', '1']) == 0
    assert 'http://127.0.0.1:%d' % port in capsys.readouterr().out
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', port))
        taken.listen()
        assert main(['view', '--ros', '--port', str(port), '--duration', '1']) == 2
    assert str(port) in capsys.readouterr().err


class _Log:
    """A node logger that keeps what it is given."""

    def __init__(self):
        self.lines = []

    def _keep(self, message, **_):
        self.lines.append(message)

    info = warning = error = debug = _keep


def _meshes_robot(filenames):
    """A base and one link per mesh filename, each link's only visual that mesh."""
    items = ['<link name="base"/>']
    for k, name in enumerate(filenames):
        items.append('<link name="m%d"><visual><geometry><mesh filename="%s"/></geometry>'
                     '</visual></link><joint name="j%d" type="continuous"><parent link="base"/>'
                     '<child link="m%d"/><axis xyz="0 0 1"/></joint>' % (k, name, k, k))
    return '<robot name="meshes">%s</robot>' % ''.join(items)


def test_viewer_node_reads_only_package_meshes_and_survives_hostile_descriptions(
        probe, spun, tmp_path, monkeypatch):
    """A description from the graph may come from anyone on the domain: a mesh named by
    file://, an absolute or a relative path, or a package:// path out of its package, is
    not read (its link is drawn bare), and the log names no file; a package:// mesh of an
    installed package is drawn.  A chain too deep to import is refused in one log line and
    the robot drawn so far stays; replacing the robot raises no viser warnings."""
    import trimesh
    from std_msgs.msg import String
    from ros_vi.ros import qos
    from ros_vi.ros.viewer_node import ViewerNode
    import test_urdf_cases as cases
    from test_urdf_geometry import ament_mesh
    secret = tmp_path / 'private' / 'secret.stl'
    secret.parent.mkdir()
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(str(secret))
    ament_mesh(tmp_path / 'install', 'viewer_test_meshes', monkeypatch)
    monkeypatch.chdir(secret.parent)
    missing = secret.parent / 'missing.stl'
    # the same refusal for a file that exists and one that does not: nothing to probe with
    pairs = [('file://%s' % secret, 'file://%s' % missing), (str(secret), str(missing)),
             ('secret.stl', 'missing.stl')]
    names = ['package://viewer_test_meshes/part.stl'] + [n for pair in pairs for n in pair] \
        + ['package://viewer_test_meshes/../../../private/secret.stl']
    viewer = spun(ViewerNode(context=probe.context, namespace='/hostile_graph',
                             parameter_overrides=[Parameter('port', value=_free_port())]))
    log = _Log()
    monkeypatch.setattr(viewer, 'get_logger', lambda: log)
    pub = probe.publisher(String, '/hostile_graph/robot_description', qos.LATCHED_QOS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        pub.publish(String(data=_meshes_robot(names)))
        view = wait_until(lambda: viewer.view, what='the robot drawn')
        bare = {view.scene.links[i] for i in view.scene.bare_links}
        assert bare == {'m%d' % k for k in range(1, len(names))}   # only the package mesh

        def said(name):
            (line,) = [line for line in log.lines if repr(name) in line]
            return re.sub(r"'m\d+'", 'LINK', line.replace(repr(name), 'MESH'))
        for there, absent in pairs:
            assert said(there) == said(absent)
            assert 'package:// meshes of installed packages only' in said(there)
        assert "not a file inside package 'viewer_test_meshes'" in said(names[-1])
        assert not [line for line in log.lines if str(tmp_path / 'install') in line]
        # a description larger than the importer takes: refused, the robot drawn stays
        from ros_vi.urdf.parse import MAX_CONFIGS
        wide = cases.robot('wide', [cases.link('base')] + [
            item for i in range(MAX_CONFIGS + 1) for item in (
                cases.link('l%d' % i, cases.inertial(1.0)),
                cases.joint('j%d' % i, 'continuous', 'base', 'l%d' % i, axis=(0, 0, 1)))])
        pub.publish(String(data=wide))
        wait_until(lambda: any(line.startswith('robot_description refused') for line in
                               log.lines), what='the huge description refused')
        assert viewer.view is view
        (refused,) = [line for line in log.lines if line.startswith('robot_description')]
        assert 'MAX_CONFIGS' in refused and '\n' not in refused
        # a new robot replaces the drawn one without viser's removal warnings
        pub.publish(String(data=cases.chain(3)))
        wait_until(lambda: viewer.view is not view, what='the new robot drawn')
        assert viewer.view.joint_names == ['j1', 'j2', 'j3']
    assert not [w for w in caught if 'viser' in w.filename], [str(w.message) for w in caught]
    probe.node.destroy_publisher(pub)
