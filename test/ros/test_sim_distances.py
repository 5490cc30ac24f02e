"""The simulator publishes the distances of its distance_pairs (~/distances) and their closest
points for rviz2 (~/closest_points) with every state: equal to CollisionDetector's at the
published joint positions; bad pairs and obstacle files are refused at start."""
import numpy as np
import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import Marker, MarkerArray

from ros_vi.collision import CollisionDetector, load_obstacles
from ros_vi.ros.conversions import stamp_to_ns
from ros_vi.ros.simulator_node import ParameterError, SimulatorNode
from ros_vi.urdf import import_urdf_file

from .harness import CONFIG_DIR, SimProcess, urdf, wait_until

OBSTACLES = CONFIG_DIR + '/obstacles_seed.yaml'
PAIRS = ['link_7:ground', 'link_7:cube1', 'link_7:cube2', 'link_7:cube3', 'link_5:cube3']
Q0 = [0.4, 1.1, -0.3, -1.2, 0.5, 0.8, 0.2]      # bent towards cube3, falling under gravity


@pytest.fixture(scope='module')
def sim(probe):
    proc = SimProcess({'urdf_file': urdf('arm7'), 'rate': 200.0, 'publish_rate': 50.0,
                       'start_paused': True, 'initial_positions': Q0,
                       # quoted: in a YAML flow list (-p name:=[...]) 'a:b' needs quotes
                       'distance_pairs': ["'%s'" % p for p in PAIRS],
                       'obstacles_file': 'package://ros_vi/config/obstacles_seed.yaml'})
    proc.js = probe.subscribe(JointState, proc.topic('joint_states'))
    proc.distances = probe.subscribe(Float64MultiArray, proc.topic('simulator/distances'))
    proc.markers = probe.subscribe(MarkerArray, proc.topic('simulator/closest_points'))
    proc.wait_started()
    yield proc
    proc.stop_cleanly()


def test_published_distances_are_the_detectors_at_the_published_positions(probe, sim):
    system = import_urdf_file(urdf('arm7'))
    obstacles = load_obstacles(OBSTACLES)
    detector = CollisionDetector(system, [tuple(p.split(':')) for p in PAIRS],
                                 obstacles=obstacles)
    # discovery: step until both topics have delivered (a message sent before the
    # subscriptions matched is lost), then compare state by state
    for _ in range(50):
        assert probe.call(sim.service('step')).success
        try:
            wait_until(lambda: sim.distances.msgs and sim.markers.msgs, timeout=0.5)
            break
        except AssertionError:
            continue
    for _ in range(4):
        before = len(sim.distances.msgs), len(sim.markers.msgs)
        resp = probe.call(sim.service('step'))
        assert resp.success, resp.message
        # paused: one ~/step publishes one state, so one message on each topic
        wait_until(lambda: (len(sim.distances.msgs), len(sim.markers.msgs)) ==
                   (before[0] + 1, before[1] + 1), what='~/distances and ~/closest_points')
        markers = sim.markers.last()
        ns = stamp_to_ns(markers.markers[0].header.stamp)
        js = sim.js.wait(lambda m: stamp_to_ns(m.header.stamp) == ns,
                         what='joint_states at the markers\' stamp')
        q = np.array(js.position)
        expected = detector.query(q)
        msg = sim.distances.msgs[-1]
        assert msg.layout.dim[0].label == ','.join(PAIRS)
        assert msg.layout.dim[0].size == len(PAIRS)
        np.testing.assert_allclose(msg.data, expected.distances, rtol=0, atol=1e-12)
        # one arrow per pair from the closest point on its first object to its second's,
        # then the four obstacles
        arrows = [m for m in markers.markers if m.ns == 'distances']
        assert [m.id for m in arrows] == list(range(len(PAIRS)))
        for m, pa, pb, d in zip(arrows, expected.points_a, expected.points_b,
                                expected.distances):
            assert m.type == Marker.ARROW and m.header.frame_id == 'world'
            np.testing.assert_allclose([[p.x, p.y, p.z] for p in m.points], [pa, pb],
                                       atol=1e-12)
            assert (m.color.g > m.color.r) == (d > 0)
    assert not np.allclose(q, Q0)                    # the arm moved between the checks
    shapes = {m.id: m for m in markers.markers if m.ns == 'obstacles'}
    assert [shapes[j].type for j in range(4)] == [Marker.CUBE] * 4
    cube1 = shapes[1]
    assert (cube1.pose.position.x, cube1.pose.position.y, cube1.pose.position.z) == \
        (1.0, 1.0, 0.5)
    assert (cube1.scale.x, cube1.scale.y, cube1.scale.z) == (1.0, 1.0, 1.0)
    ground = shapes[0]                                 # the half-space: a thin square at z = 0
    assert ground.pose.position.z + ground.scale.z / 2 == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize('overrides, match', [
    ({'distance_pairs': ['link_7:nothing']},
     r"parameter distance_pairs: pair 0 \('link_7', 'nothing'\): unknown object 'nothing' "
     r"\(links of robot 'arm7': world, link_0, .*; obstacles: ground, cube1, cube2, cube3\)"),
    ({'distance_pairs': ['tool:ground']},
     r"parameter distance_pairs: link 'tool' has no collision geometry"),
    ({'distance_pairs': ['link_7']},
     r"parameter distance_pairs: distance pair 'link_7' must be two object names"),
    ({'distance_pairs': ['link_7:ground'], 'obstacles_file': '/nonexistent/obstacles.yaml'},
     r"parameter obstacles_file: obstacle file '/nonexistent/obstacles.yaml': no such file"),
    ({'distance_pairs': ['link_7:ground'],
      'obstacles_file': 'package://no_such_package_xyz/o.yaml'},
     r'parameter obstacles_file: cannot resolve'),
    ({'obstacles_file': CONFIG_DIR + '/arm7.yaml'},
     r'parameter obstacles_file: obstacle file .*arm7.yaml\' must hold a mapping with an '
     r'"obstacles" key'),
    ({'obstacles_file': urdf('arm7')}, r'parameter obstacles_file: .* is not YAML'),
])
def test_distance_parameters_are_validated(probe, overrides, match):
    params = {'urdf_file': urdf('arm7'), 'obstacles_file': OBSTACLES}
    params.update(overrides)
    with pytest.raises(ParameterError, match=match):
        SimulatorNode(context=probe.context, parameter_overrides=[
            Parameter(k, value=v) for k, v in params.items()])


def test_without_pairs_no_distance_topics_are_made(probe):
    node = SimulatorNode(context=probe.context, node_name='no_distances', parameter_overrides=[
        Parameter('urdf_file', value=urdf('arm7')), Parameter('start_paused', value=True)])
    try:
        assert node.distances is None
        topics = [name for name, _ in node.get_publisher_names_and_types_by_node(
            'no_distances', node.get_namespace())]
        assert '/joint_states' in topics
        assert not [t for t in topics if t.endswith(('/distances', '/closest_points'))]
    finally:
        node.destroy_node()
