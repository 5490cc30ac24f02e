"""The browser view over ROS: the viewer node draws what a simulator publishes
(robot_description + joint_states, over DDS), and the simulator's own view (viewer_port)
draws its published states."""
import socket
import threading

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


def test_viewer_node_draws_the_simulated_arm(probe, spun):
    from ros_vi.ros.viewer_node import ViewerNode
    sim = SimProcess({'urdf_file': urdf('arm7'), 'rate': 500.0})
    try:
        sim.wait_started()
        viewer = spun(ViewerNode(context=probe.context, namespace=sim.namespace,
                                 parameter_overrides=[Parameter('port', value=_free_port())]))
        wait_until(lambda: viewer.view is not None and viewer.drawn > 3,
                   what='the viewer to draw the robot')
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
