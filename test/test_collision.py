"""Distance queries between named links and obstacles (ros_vi.collision): closed forms for
primitives, the gradient against finite differences (mimic joints included), the rules for
several shapes and meshes, name errors, the obstacle file, and that queries leave the
System alone."""
import math
import os
import warnings

import numpy as np
import pytest

from ros_vi.collision import (Box, CollisionDetector, Cylinder, HalfSpace, Sphere,
                              load_obstacles, obstacles_from_dict, parse_pair)
from ros_vi.resources import shipped_model, resolve_uri
from ros_vi.urdf import URDFWarning, import_urdf, import_urdf_file, rpy_matrix

SEED_OBSTACLES = {'ground': HalfSpace((0, 0, 1), 0.0),
                  'cube1': Box((1, 1, 1), xyz=(1, 1, 0.5)),
                  'cube2': Box((1, 1, 1), xyz=(-1, -1, 0.5)),
                  'cube3': Box((1, 1, 1), xyz=(1, -1, 0.5))}

# a body moved by x, y, z translations and a yaw, whose <collision> shapes are given:
# at q = (x, y, z, yaw) the link frame is at (x, y, z) turned by yaw about z
MOVER = '''<robot name="mover">
  <link name="world"/>
  <joint name="x" type="prismatic"><parent link="world"/><child link="lx"/>
    <axis xyz="1 0 0"/><limit lower="-10" upper="10" effort="1" velocity="1"/></joint>
  <link name="lx"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="y" type="prismatic"><parent link="lx"/><child link="ly"/>
    <axis xyz="0 1 0"/><limit lower="-10" upper="10" effort="1" velocity="1"/></joint>
  <link name="ly"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="z" type="prismatic"><parent link="ly"/><child link="lz"/>
    <axis xyz="0 0 1"/><limit lower="-10" upper="10" effort="1" velocity="1"/></joint>
  <link name="lz"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="yaw" type="continuous"><parent link="lz"/><child link="body"/><axis xyz="0 0 1"/></joint>
  <link name="body">
    <inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
    %s
  </link>
</robot>'''


def mover(*collisions):
    return import_urdf(MOVER % '\n    '.join(collisions))


def collision(geometry, xyz='0 0 0', rpy='0 0 0'):
    return ('<collision><origin xyz="%s" rpy="%s"/><geometry>%s</geometry></collision>'
            % (xyz, rpy, geometry))


def arm7():
    return import_urdf_file(shipped_model('arm7'))


def seed_detector(system=None):
    system = arm7() if system is None else system
    return CollisionDetector(system, [('link_7', name) for name in SEED_OBSTACLES],
                             obstacles=SEED_OBSTACLES)


def central_differences(f, q, h=1e-5):
    return np.array([(f(q + h * e) - f(q - h * e)) / (2 * h)
                     for e in np.eye(len(q))]).T


# --------------------------------------------------------------------- closed forms
@pytest.mark.parametrize('gap', [0.3, -0.05])
def test_sphere_sphere_distance_points_normal_and_gradient(gap):
    system = mover(collision('<sphere radius="0.2"/>'))
    other = Sphere(0.1, xyz=(1.0, 2.0, -0.5))
    det = CollisionDetector(system, [('body', 'ball')], obstacles={'ball': other})
    u = np.array([2.0, -1.0, 2.0]) / 3.0
    centre = np.array(other.xyz) + (0.3 + gap) * u       # body centre, |centre - c| = r + r + gap
    q = np.array([*centre, 0.7])
    r = det.query(q, jacobian=True)
    assert r.distances[0] == pytest.approx(gap, abs=1e-12)
    np.testing.assert_allclose(r.normals[0], -u, atol=1e-12)         # from body to ball
    np.testing.assert_allclose(r.points_a[0], centre - 0.2 * u, atol=1e-12)
    np.testing.assert_allclose(r.points_b[0], np.array(other.xyz) + 0.1 * u, atol=1e-12)
    # d = |p - c| - r1 - r2: its gradient in (x, y, z) is the unit vector from c; yaw: 0
    np.testing.assert_allclose(r.jacobian[0], [*u, 0.0], atol=1e-12)
    assert det.in_collision(q) == (gap < 0)


def _box_point_distance(half, p):
    """Signed distance from a point (box frame) to an axis-aligned box of half extents."""
    outside = np.maximum(np.abs(p) - half, 0.0)
    if np.any(outside > 0):
        return float(np.linalg.norm(outside))
    return float(np.max(np.abs(p) - half))


@pytest.mark.parametrize('centre, expected', [
    ((0.9, 0.1, 0.2), 0.9 - 0.5 - 0.1),                          # facing the +x face
    ((0.8, -0.7, 0.0), math.hypot(0.3, 0.7 - 0.25) - 0.1),       # beside an edge
    ((-0.9, 0.6, -0.8), math.sqrt(0.4 ** 2 + 0.35 ** 2 + 0.55 ** 2) - 0.1),   # a corner
    ((0.45, 0.0, 0.1), 0.45 - 0.5 - 0.1),                        # overlapping the +x face
])
def test_sphere_box_against_the_closed_form(centre, expected):
    box = Box((1.0, 0.5, 0.5), xyz=(0.3, -0.2, 1.0), rpy=(0.3, -0.5, 1.1))
    system = mover(collision('<sphere radius="0.1"/>'))
    det = CollisionDetector(system, [('box', 'body')], obstacles={'box': box})
    # the sphere centre given in the box frame, put in the world
    world = box.pose[:3, :3] @ np.array(centre) + box.pose[:3, 3]
    q = np.array([*world, -0.4])
    r = det.query(q, jacobian=True)
    assert expected == pytest.approx(_box_point_distance(np.array([0.5, 0.25, 0.25]),
                                                         np.array(centre)) - 0.1)
    assert r.distances[0] == pytest.approx(expected, abs=1e-9)
    # the point on the sphere is its centre minus r along the normal (box -> sphere)
    np.testing.assert_allclose(r.points_b[0], world - 0.1 * r.normals[0], atol=1e-9)
    np.testing.assert_allclose(r.points_b[0] - r.points_a[0], r.distances[0] * r.normals[0],
                               atol=1e-9)
    # moving the sphere moves it along the normal: d d/d(x, y, z) = n
    np.testing.assert_allclose(r.jacobian[0, :3], r.normals[0], atol=1e-9)
    assert r.jacobian[0, 3] == pytest.approx(0.0, abs=1e-12)


def test_box_box_separated_turned_and_penetrating():
    system = mover(collision('<box size="0.5 0.5 0.5"/>'))
    fixed = Box((1.0, 2.0, 3.0))
    det = CollisionDetector(system, [('body', 'wall')], obstacles={'wall': fixed})
    half_diagonal = 0.25 * math.sqrt(2)
    for gap in (0.3, 0.01, -0.1):
        # the body turned 45 deg: its edge points at the wall's +x face
        q = np.array([0.5 + gap + half_diagonal, 0.1, 0.2, math.pi / 4])
        r = det.query(q, jacobian=True)
        assert r.distances[0] == pytest.approx(gap, abs=1e-9)
        np.testing.assert_allclose(r.normals[0], [-1, 0, 0], atol=1e-9)
        assert r.points_b[0][0] == pytest.approx(0.5, abs=1e-9)    # on the wall's face
        # d = x - 0.5 - half_diagonal (cos yaw + sin yaw)/sqrt(2)...: d d/dx = 1 and
        # d d/dyaw = 0 at 45 deg (the edge is the extreme point either way)
        np.testing.assert_allclose(r.jacobian[0], [1, 0, 0, 0], atol=1e-8)
    # overlapping boxes: the penetration depth is the smallest overlap over the separating
    # axes (the face normals of both; with every edge along z or in the xy plane the edge
    # cross products are those normals again)
    def depth(x, y, yaw):
        R = rpy_matrix((0, 0, yaw))
        axes = [np.eye(3)[i] for i in range(3)] + [R[:, 0], R[:, 1]]
        centre = np.array([x, y, 0.0])
        return min(np.abs(R.T @ u) @ [0.25, 0.25, 0.25] + np.abs(u) @ [0.5, 1.0, 1.5]
                   - abs(centre @ u) for u in axes)
    # unturned, 0.05 deep along y; turned either way the depth is not the same (the box
    # sits off centre in x): parallel faces are a kink of the distance
    for yaw in (0.0, 1e-3, -1e-3):
        q = np.array([0.3, 1.0 + 0.25 - 0.05, 0.0, yaw])
        assert det.compute_distances(q)[0] == pytest.approx(-depth(0.3, 1.2, yaw), abs=1e-9)
    assert depth(0.3, 1.2, 0.0) == pytest.approx(0.05, abs=1e-15)
    assert depth(0.3, 1.2, 1e-3) - 0.05 == pytest.approx(0.25e-3, rel=1e-3)
    assert depth(0.3, 1.2, -1e-3) - 0.05 == pytest.approx(0.2e-3, rel=1e-3)


@pytest.mark.parametrize('tilt', [0.0, 0.4, math.pi / 2])
def test_shapes_against_the_half_space(tilt):
    """The lowest point of each shape is its distance to the ground z = 0."""
    system = mover(collision('<cylinder radius="0.1" length="0.6"/>', rpy='%r 0 0' % tilt))
    det = CollisionDetector(system, [('body', 'ground')],
                            obstacles={'ground': HalfSpace((0, 0, 2), 0.0)})
    for z in (1.0, 0.2, 0.05):
        lowest = z - 0.3 * abs(math.cos(tilt)) - 0.1 * abs(math.sin(tilt))
        r = det.query(np.array([0.4, -0.3, z, 0.9]), jacobian=True)
        assert r.distances[0] == pytest.approx(lowest, abs=1e-9)
        np.testing.assert_allclose(r.normals[0], [0, 0, -1], atol=1e-12)
        np.testing.assert_allclose(r.jacobian[0], [0, 0, 1, 0], atol=1e-9)
    # a raised, tilted half-space: x + z <= 1
    det = CollisionDetector(mover(collision('<sphere radius="0.2"/>')), [('body', 'slope')],
                            obstacles={'slope': HalfSpace((1, 0, 1), 1 / math.sqrt(2))})
    d = det.compute_distances(np.array([2.0, 5.0, 1.0, 0.0]))[0]
    assert d == pytest.approx((2.0 + 1.0 - 1.0) / math.sqrt(2) - 0.2, abs=1e-12)


def test_cylinder_obstacle_and_link_to_link_pairs():
    """A cylinder obstacle (axis along world y after its rpy) and a sphere on a link."""
    post = Cylinder(0.1, 2.0, xyz=(0.0, 0.0, 1.0), rpy=(math.pi / 2, 0, 0))
    det = CollisionDetector(mover(collision('<sphere radius="0.05"/>')), [('body', 'post')],
                            obstacles={'post': post})
    q = np.array([0.3, 0.5, 1.4, 0.0])             # beside the curved side
    assert det.compute_distances(q)[0] == pytest.approx(0.5 - 0.1 - 0.05, abs=1e-8)
    q = np.array([0.0, 1.2, 1.0, 0.0])             # beyond its flat end (y = 1)
    assert det.compute_distances(q)[0] == pytest.approx(0.2 - 0.05, abs=1e-8)


def test_capsule_link_against_the_closed_form():
    """A URDF 1.2 capsule on the link (axis along the link's z): the distance to a sphere is
    the distance to its axis segment less both radii."""
    det = CollisionDetector(mover(collision('<capsule radius="0.05" length="0.4"/>',
                                            xyz='0 0 0.1')),
                            [('body', 'ball')], obstacles={'ball': Sphere(0.1, xyz=(0, 0, 0))})
    q = np.array([0.5, 0.0, 0.0, 0.3])             # beside the cylindrical part
    assert det.compute_distances(q)[0] == pytest.approx(0.5 - 0.05 - 0.1, abs=1e-8)
    q = np.array([0.0, 0.0, 0.6, 0.0])             # above: the lower cap at z = 0.6 - 0.1
    assert det.compute_distances(q)[0] == pytest.approx(0.6 + 0.1 - 0.2 - 0.05 - 0.1,
                                                        abs=1e-8)
    q = np.array([0.3, 0.0, 0.7, 0.0])             # off the end: to the cap's centre
    d = math.hypot(0.3, 0.7 + 0.1 - 0.2) - 0.05 - 0.1
    assert det.compute_distances(q)[0] == pytest.approx(d, abs=1e-8)


# --------------------------------------------------------------------- the gradient
def _random_configurations(n, seed, nq=7):
    rng = np.random.default_rng(seed)
    return [np.pi * (rng.random(nq) - 0.5) for _ in range(n)]


def test_arm7_seed_scenario_gradient_matches_finite_differences():
    det = seed_detector()
    checked = 0
    for q in _random_configurations(12, 1):
        r = det.query(q, jacobian=True)
        fd = central_differences(det.compute_distances, q)
        assert r.jacobian.shape == (4, 7)
        np.testing.assert_allclose(r.jacobian, fd, atol=3e-6)
        checked += 1
    assert checked == 12


def test_gradient_in_penetration_and_between_two_links():
    system = arm7()
    det = CollisionDetector(system, [('link_7', 'ground'), ('link_6', 'link_2'),
                                     ('link_7', 'link_1')],
                            obstacles={'ground': HalfSpace()})
    # link_7 pushed below the ground: a negative distance, the same gradient rule
    q = np.array([-0.9, 1.5, 0.1, -1.4, -1.2, -0.4, 0.8])
    r = det.query(q, jacobian=True)
    assert r.distances[0] < -0.1
    np.testing.assert_allclose(r.jacobian, central_differences(det.compute_distances, q),
                               atol=3e-6)
    for q in _random_configurations(6, 2):
        r = det.query(q, jacobian=True)
        np.testing.assert_allclose(r.jacobian, central_differences(det.compute_distances, q),
                                   atol=3e-6)
        # a link-to-link distance moves with the joints between them only: joint_1
        # turns link_6 and link_2 together
        assert r.jacobian[1, 0] == pytest.approx(0.0, abs=1e-9)


MIMIC = '''<robot name="gripper">
  <link name="world"/>
  <joint name="slide" type="prismatic"><parent link="world"/><child link="carriage"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="carriage"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="turn" type="revolute"><parent link="carriage"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="arm"><inertial><origin xyz="0 0 0.2"/><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
    <collision><origin xyz="0 0 0.2"/><geometry><box size="0.05 0.05 0.4"/></geometry></collision></link>
  <joint name="jaw_left" type="prismatic"><parent link="arm"/><child link="left"/>
    <origin xyz="0 0 0.4"/><axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="1" velocity="1"/></joint>
  <link name="left"><inertial><mass value="0.1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 0.03"/><geometry><sphere radius="0.02"/></geometry></collision></link>
  <joint name="jaw_right" type="prismatic"><parent link="arm"/><child link="right"/>
    <origin xyz="0 0 0.4"/><axis xyz="1 0 0"/><limit lower="-0.1" upper="0" effort="1" velocity="1"/>
    <mimic joint="jaw_left" multiplier="-1.5" offset="-0.01"/></joint>
  <link name="right"><inertial><mass value="0.1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 0.03"/><geometry><cylinder radius="0.02" length="0.06"/></geometry></collision></link>
</robot>'''


@pytest.mark.parametrize('mimic', ['reduce', 'constraint'])
def test_gradient_through_a_mimic_joint(mimic):
    """The right jaw follows the left one (x -1.5): its distances depend on the left jaw's
    config, and the gradient is over the System's configs."""
    system = import_urdf(MIMIC, mimic=mimic)
    obstacles = {'post': Sphere(0.05, xyz=(0.5, 0.0, 0.5)), 'floor': HalfSpace()}
    det = CollisionDetector(system, [('right', 'post'), ('left', 'right'),
                                     ('right', 'floor'), ('arm', 'post')],
                            obstacles=obstacles)
    names = [c.name for c in system.configs]
    assert names[:3] == ['slide', 'turn', 'jaw_left']
    for q3 in ([0.1, 0.5, 0.03], [-0.2, -0.8, 0.07], [0.3, 1.2, 0.01]):
        q = np.zeros(system.nQ)
        q[:3] = q3
        if mimic == 'constraint':
            q[names.index('jaw_right')] = -1.5 * q3[2] - 0.01
        J = det.distance_jacobian(q)
        assert J.shape == (4, system.nQ)
        np.testing.assert_allclose(J, central_differences(det.compute_distances, q),
                                   atol=2e-6)
        if mimic == 'reduce':
            # the jaws' gap opens at 1 + 1.5 = 2.5 times the left jaw's rate
            assert J[1, 2] == pytest.approx(2.5, abs=1e-6)


def test_an_overlap_coal_cannot_measure_is_measured_again():
    """At this configuration link_5's cylinder overlaps cube1 and coal's EPA gives up
    (answers -DBL_MAX) with a tolerance of 1e-12: the detector asks again, looser."""
    q = np.array([0.66347707, 1.20003661, -0.49148675, 0.30416954, 0.80172312, 1.31256359,
                  0.57067427])
    system = arm7()
    cube = {'cube1': SEED_OBSTACLES['cube1']}
    default = CollisionDetector(system, [('link_5', 'cube1')], obstacles=cube)
    tight = CollisionDetector(system, [('link_5', 'cube1')], obstacles=cube,
                              penetration_tolerance=1e-12)
    d = default.compute_distances(q)[0]
    assert -0.02 < d < -0.015
    assert tight.compute_distances(q)[0] == pytest.approx(d, abs=1e-5)
    with pytest.raises(ValueError, match=r"penetration_tolerance must be a finite number > 0, "
                                         r"got 0"):
        CollisionDetector(system, [('link_5', 'cube1')], obstacles=cube,
                          penetration_tolerance=0)


# --------------------------------------------------------------------- shapes
def test_a_link_with_several_shapes_is_their_union():
    system = mover(collision('<sphere radius="0.1"/>', xyz='0 0 0'),
                   collision('<sphere radius="0.05"/>', xyz='0.5 0 0'))
    det = CollisionDetector(system, [('body', 'ball')],
                            obstacles={'ball': Sphere(0.1, xyz=(2.0, 0.0, 0.0))})
    # yaw 0: the small sphere at x + 0.5 is nearer; yaw pi: the big one is
    r = det.query(np.array([0.0, 0.0, 0.0, 0.0]), jacobian=True)
    assert r.distances[0] == pytest.approx(2.0 - 0.5 - 0.05 - 0.1, abs=1e-12)
    np.testing.assert_allclose(r.points_a[0], [0.55, 0, 0], atol=1e-12)
    r = det.query(np.array([0.0, 0.0, 0.0, math.pi]), jacobian=True)
    assert r.distances[0] == pytest.approx(2.0 - 0.1 - 0.1, abs=1e-12)
    np.testing.assert_allclose(r.points_a[0], [0.1, 0, 0], atol=1e-12)


def _write_stl(path, vertices, faces):
    import trimesh
    trimesh.Trimesh(vertices=vertices, faces=faces).export(path)


def test_a_collision_mesh_collides_as_its_convex_hull(tmp_path):
    import trimesh
    # an L-shaped (non-convex) prism: its hull is the box [0, 0.4] x [0, 0.4] x [0, 0.1]
    part1 = trimesh.creation.box((0.4, 0.1, 0.1))
    part1.apply_translation((0.2, 0.05, 0.05))
    part2 = trimesh.creation.box((0.1, 0.4, 0.1))
    part2.apply_translation((0.05, 0.2, 0.05))
    mesh = trimesh.util.concatenate([part1, part2])
    _write_stl(str(tmp_path / 'ell.stl'), mesh.vertices, mesh.faces)
    text = MOVER % collision('<mesh filename="meshes/ell.stl" scale="1 1 2"/>',
                             xyz='0 0 0.1')
    os.makedirs(tmp_path / 'meshes')
    os.replace(tmp_path / 'ell.stl', tmp_path / 'meshes' / 'ell.stl')
    path = tmp_path / 'mover.urdf'
    path.write_text(text)
    system = import_urdf_file(str(path))          # relative mesh: the file's folder
    det = CollisionDetector(system, [('body', 'ball')],
                            obstacles={'ball': Sphere(0.05, xyz=(1.0, 1.0, 0.0))})
    # in xy the hull is the polygon (0, 0), (0.4, 0), (0.4, 0.1), (0.1, 0.4), (0, 0.4), in z
    # [0.1, 0.3] (scale 2, origin 0.1 up): the sphere at (1, 1, 0) is nearest to the
    # hull's face x + y = 0.5 at (0.25, 0.25, 0.1); the L itself is farther (its corner
    # (0.4, 0.1) is 1.08 away in xy)
    expected = math.sqrt(1.5 ** 2 / 2 + 0.1 ** 2) - 0.05
    assert det.compute_distances(np.zeros(4))[0] == pytest.approx(expected, abs=1e-8)
    # the same from a URDF text with an explicit folder
    det2 = CollisionDetector(import_urdf(text), [('body', 'ball')],
                             obstacles={'ball': Sphere(0.05, xyz=(1.0, 1.0, 0.0))},
                             urdf=text, base_dir=str(tmp_path))
    assert det2.compute_distances(np.zeros(4))[0] == pytest.approx(expected, abs=1e-8)


def test_a_missing_mesh_is_a_warning_and_a_link_left_without_shapes_is_named():
    text = MOVER % (collision('<mesh filename="file:///nonexistent/part.stl"/>')
                    + collision('<sphere radius="0.1"/>'))
    system = import_urdf(text)
    with pytest.warns(URDFWarning, match=r"mesh 'file:///nonexistent/part.stl' of link "
                                         r"'body' not found"):
        det = CollisionDetector(system, [('body', 'ball')],
                                obstacles={'ball': Sphere(0.1, xyz=(1, 0, 0))})
    assert det.compute_distances(np.zeros(4))[0] == pytest.approx(0.8)
    system = import_urdf(MOVER % collision('<mesh filename="file:///nonexistent/part.stl"/>'))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        with pytest.raises(ValueError, match=r"link 'body' has no collision geometry: its "
                                             r"collision mesh 'file:///nonexistent/part.stl' "
                                             r"cannot be used"):
            CollisionDetector(system, [('body', 'ball')],
                              obstacles={'ball': Sphere(0.1, xyz=(1, 0, 0))})


# --------------------------------------------------------------------- bad input
def test_unknown_names_are_refused_with_the_valid_names():
    system = arm7()
    with pytest.raises(ValueError) as err:
        CollisionDetector(system, [('link_7', 'ground'), ('link_9', 'ground')],
                          obstacles={'ground': HalfSpace()})
    message = str(err.value)
    assert "pair 1 ('link_9', 'ground'): unknown object 'link_9'" in message
    assert 'link_0, link_1' in message and 'tool' in message and 'obstacles: ground' in message
    with pytest.raises(ValueError, match=r"unknown object 'cube1' .*obstacles: none"):
        CollisionDetector(system, [('link_7', 'cube1')])


def test_a_link_without_collision_geometry_is_named():
    with pytest.raises(ValueError) as err:
        CollisionDetector(arm7(), [('tool', 'ground')], obstacles={'ground': HalfSpace()})
    message = str(err.value)
    assert "link 'tool' has no collision geometry: it has no <collision> element" in message
    assert 'links with collision geometry: link_0, link_1, link_2' in message


@pytest.mark.parametrize('pairs, obstacles, match', [
    ([('link_7', 'link_7')], {}, r"pair 0 \('link_7', 'link_7'\) names the same object twice"),
    ([('link_7',)], {}, r"pair 0 must be two object names, got \('link_7',\)"),
    ([], {}, 'at least one pair'),
    ([('link_7', 'link_1')], {'link_1': Sphere(1.0)},
     r"obstacle name 'link_1' is also the name of a link of robot 'arm7'"),
    ([('link_7', 'ball')], {'ball': 'sphere'}, r"obstacle 'ball' must be a Box, Sphere"),
])
def test_bad_pairs_and_obstacles_are_refused(pairs, obstacles, match):
    with pytest.raises(ValueError, match=match):
        CollisionDetector(arm7(), pairs, obstacles=obstacles)


def test_bad_configurations_are_refused():
    det = seed_detector()
    with pytest.raises(ValueError, match=r'q must have one value per config of the System '
                                         r'\(7: joint_1, .*joint_7\), got shape \(6,\)'):
        det.compute_distances(np.zeros(6))
    q = np.zeros(7)
    q[3] = np.nan
    with pytest.raises(ValueError, match='q must be finite; not finite: joint_4'):
        det.query(q)
    with pytest.raises(ValueError, match='margin must be a finite number'):
        det.in_collision(np.zeros(7), margin=float('inf'))
    assert det.compute_distances([0.0] * 7).shape == (4,)          # a list is fine


@pytest.mark.parametrize('make, match', [
    (lambda: Box((1, -1, 1)), r'Box size must be finite and > 0'),
    (lambda: Box((1, 1)), r'Box size must be 3 finite numbers'),
    (lambda: Sphere(0.0), r'Sphere radius must be finite and > 0'),
    (lambda: Cylinder(0.1, float('nan')), r'Cylinder length must be finite and > 0'),
    (lambda: Box((1, 1, 1), rpy=(0, 0, 'a')), r'Box rpy must be 3 numbers'),
    (lambda: HalfSpace((0, 0, 0)), r'HalfSpace normal must not be zero'),
    (lambda: HalfSpace((0, 0, 1), 'low'), r'HalfSpace offset must be a finite number'),
])
def test_bad_obstacles_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_parse_pair():
    assert parse_pair('link_7:ground') == ('link_7', 'ground')
    assert parse_pair(' link_7 : cube1 ') == ('link_7', 'cube1')
    for bad in ('link_7', 'a:b:c', ':ground', 'link_7:'):
        with pytest.raises(ValueError, match='must be two object names joined by'):
            parse_pair(bad)


# --------------------------------------------------------------------- obstacle files
def test_the_shipped_seed_obstacles():
    obstacles = load_obstacles('package://ros_vi/config/obstacles_seed.yaml')
    assert list(obstacles) == ['ground', 'cube1', 'cube2', 'cube3']
    assert obstacles == SEED_OBSTACLES
    assert os.path.isfile(resolve_uri('package://ros_vi/config/obstacles_seed.yaml'))


def test_obstacle_file_round_trip_and_errors(tmp_path):
    path = tmp_path / 'obstacles.yaml'
    path.write_text('obstacles:\n'
                    '  floor: {halfspace: [0, 0, 2], offset: 0.5}\n'
                    '  crate: {box: [1, 2, 3], xyz: [1, 0, 0], rpy: [0, 0, 1.5]}\n'
                    '  ball: {sphere: 0.25, xyz: [0, 1, 0]}\n'
                    '  post: {cylinder: [0.1, 2], xyz: [0, 0, 1]}\n')
    obstacles = load_obstacles(str(path))
    assert obstacles == {'floor': HalfSpace((0, 0, 1), 0.5),
                         'crate': Box((1, 2, 3), xyz=(1, 0, 0), rpy=(0, 0, 1.5)),
                         'ball': Sphere(0.25, xyz=(0, 1, 0)),
                         'post': Cylinder(0.1, 2.0, xyz=(0, 0, 1))}
    np.testing.assert_allclose(obstacles['crate'].pose[:3, :3], rpy_matrix((0, 0, 1.5)))
    bad = {
        'obstacles: {ball: {sphere: 0.2, rpy: [0, 0, 1]}}':
            r"obstacle 'ball': unknown key 'rpy' for a sphere \(valid: sphere, xyz\)",
        'obstacles: {thing: {cone: 1}}':
            r"obstacle 'thing' must name exactly one shape \(box, sphere, cylinder, "
            r"halfspace\), got none",
        'obstacles: {two: {box: [1, 1, 1], sphere: 1}}': r"obstacle 'two' must name exactly "
                                                         r"one shape .*got 'box', 'sphere'",
        'obstacles: {crate: {box: [1, 1, -1]}}':
            r"obstacle 'crate': Box size must be finite and > 0",
        'obstacles: {post: {cylinder: 0.1}}': r"obstacle 'post': cylinder must be "
                                              r"\[radius, length\]",
        'obstacles: {crate: [1, 1, 1]}': r"obstacle 'crate' must be a mapping",
        'ground: {halfspace: [0, 0, 1]}': r'must hold a mapping with an "obstacles" key',
        'obstacles: {}\nextra: 1': r"unknown top-level key 'extra'",
        'obstacles: [': r'is not YAML',
    }
    for text, match in bad.items():
        path.write_text(text)
        with pytest.raises(ValueError, match=match) as err:
            load_obstacles(str(path))
        assert str(path) in str(err.value)
    with pytest.raises(FileNotFoundError, match='no such file'):
        load_obstacles(str(tmp_path / 'none.yaml'))
    assert obstacles_from_dict({'b': {'sphere': 1}}) == {'b': Sphere(1.0)}


# --------------------------------------------------------------------- state
def test_queries_leave_the_system_alone_and_follow_structure_changes():
    system = arm7()
    system.q = np.linspace(0.1, 0.7, 7)
    q_before = system.q.copy()
    cache = system.data.cache
    det = seed_detector(system)
    q = np.array([0.3, -0.4, 0.2, 1.0, -0.3, 0.8, 0.1])
    d = det.compute_distances(q)
    det.query(q + 0.1, jacobian=True)
    det.in_collision(q)
    np.testing.assert_array_equal(system.q, q_before)
    assert system.data.cache is cache
    # a second robot imported into the System renumbers the frames and adds configs
    import_urdf(system.urdf.description, system=system, prefix='r_', base_xyz=(5, 5, 0))
    assert system.nQ == 14
    names = [c.name for c in system.configs]
    q2 = np.zeros(14)
    q2[[names.index(n) for n in ['joint_%d' % i for i in range(1, 8)]]] = q
    # the detector still names the first robot's links (it was given that robot)
    np.testing.assert_allclose(det.compute_distances(q2), d, atol=1e-12)
    assert det.distance_jacobian(q2).shape == (4, 14)


def test_in_collision_margin_and_closest_points():
    det = seed_detector()
    q = np.zeros(7)                          # straight up: 1.2 m clear of the ground
    d = det.compute_distances(q)
    assert d[0] == pytest.approx(0.1575 + 0.2025 + 0.2045 + 0.2155 + 0.1845 + 0.2155
                                 + 0.081, abs=1e-9)   # link_7's cylinder bottom at its frame
    assert not det.in_collision(q)
    assert det.in_collision(q, margin=float(d.min()))
    assert not det.in_collision(q, margin=float(d.min()) - 1e-6)
    pa, pb = det.closest_points(q)
    np.testing.assert_allclose(np.linalg.norm(pb - pa, axis=1), np.abs(d), atol=1e-9)
    assert det.pair_names == ['link_7:ground', 'link_7:cube1', 'link_7:cube2', 'link_7:cube3']
    assert det.links == ['link_7']


def test_urdf_robot_keeps_its_description_and_folder(tmp_path):
    path = shipped_model('arm7')
    robot = import_urdf_file(path).urdf
    with open(path, 'rb') as fh:
        assert robot.description == fh.read()
    assert robot.base_dir == os.path.dirname(os.path.abspath(path))
    robot = import_urdf(MOVER % '', base_dir=str(tmp_path)).urdf
    assert robot.description == MOVER % '' and robot.base_dir == str(tmp_path)
    assert import_urdf(MOVER % '').urdf.base_dir is None


# --------------------------------------------------------------------- command line, example
def test_ros_vi_distances_reproduces_the_seed_scenario(capsys):
    import json
    from ros_vi.cli import main
    args = ['distances', 'arm7', '--obstacles', 'package://ros_vi/config/obstacles_seed.yaml',
            '--pair', 'link_7:ground', 'link_7:cube1', 'link_7:cube2', 'link_7:cube3',
            '--random', '4', '--seed', '3']
    assert main(args + ['--json']) == 0
    rows = json.loads(capsys.readouterr().out)
    det = seed_detector()
    rng = np.random.default_rng(3)
    for row in rows:
        q = np.pi * (rng.random(7) - 0.5)
        assert list(row['q'].values()) == pytest.approx(q.tolist(), abs=0)
        d = det.compute_distances(q)
        assert list(row['distances'].values()) == pytest.approx(d.tolist(), abs=1e-12)
        assert row['in_collision'] == bool(np.any(d <= 0))
        assert row['jacobian'] is None
    assert main(args) == 0
    text = capsys.readouterr().out
    assert 'link_7:ground  link_7:cube1  link_7:cube2  link_7:cube3  in collision' in text
    assert '%.6f' % rows[0]['distances']['link_7:cube1'] in text


def test_ros_vi_distances_jacobian_and_errors(capsys):
    import json
    from ros_vi.cli import main
    assert main(['distances', 'arm7', '--pair', 'link_7:link_1', '--q', 'joint_2=1.2',
                 'joint_4=2.0', '--jacobian', '--json']) == 0
    (row,) = json.loads(capsys.readouterr().out)
    q = np.array([0, 1.2, 0, 2.0, 0, 0, 0])
    det = CollisionDetector(arm7(), [('link_7', 'link_1')])
    np.testing.assert_allclose(list(row['jacobian']['link_7:link_1'].values()),
                               det.distance_jacobian(q)[0], atol=1e-12)
    for args, message in [
            (['--pair', 'link_7:cube9'], "unknown object 'cube9'"),
            (['--pair', 'tool:link_1'], "link 'tool' has no collision geometry"),
            (['--pair', 'link_7'], "distance pair 'link_7' must be two object names"),
            ([], 'give at least one --pair A:B (links of the model: world, link_0'),
            (['--pair', 'link_7:link_1', '--random', '2', '--q', 'joint_1=1'],
             'give --random or --q, not both'),
            (['--pair', 'link_7:link_1', '--q', 'joint_9=1'], "unknown joint 'joint_9'"),
            (['--pair', 'link_7:ground', '--obstacles', 'no_such.yaml'],
             "obstacle file 'no_such.yaml': no such file")]:
        assert main(['distances', 'arm7'] + args) == 2
        assert message in capsys.readouterr().err


def test_the_collision_example_runs_the_seed_scenario(capsys):
    import importlib
    import sys
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples')
    sys.path.insert(0, examples)
    try:
        example = importlib.import_module('collision_distances')
    finally:
        sys.path.remove(examples)
    result = example.main(['--configs', '6', '--seed', '2'])
    out = capsys.readouterr().out
    assert example.OBSTACLES == load_obstacles('package://ros_vi/config/obstacles_seed.yaml')
    det = seed_detector()
    for q, d, hit in zip(result['qs'], result['distances'], result['in_collision']):
        np.testing.assert_array_equal(d, det.compute_distances(q))
        assert hit == det.in_collision(q)
    assert result['fd_error'] < 1e-5
    assert 'largest difference to central finite differences' in out


# ------------------------------------------------------------- hostile input (issue #25)
def _alias_bomb(levels, top='obstacles'):
    """A YAML "billion laughs": ``levels`` lists of nine aliases of the level below, the
    last one under ``top`` (9**levels strings once the aliases are expanded)."""
    lines = ['l0: &l0 [%s]' % ', '.join(['lol'] * 9)]
    for k in range(1, levels):
        name = top if k == levels - 1 else 'l%d' % k
        lines.append('%s: &l%d [%s]' % (name, k, ', '.join(['*l%d' % (k - 1)] * 9)))
    return '\n'.join(lines) + '\n'


def test_an_alias_bomb_obstacle_file_is_refused_at_once_in_one_short_line(tmp_path):
    """A few hundred bytes that expand to 9**7 strings: the bounded loader stops counting
    at MAX_YAML_NODES, and the message quotes nothing of the document."""
    path = tmp_path / 'bomb.yaml'
    path.write_text(_alias_bomb(7))
    assert path.stat().st_size < 400
    with pytest.raises(ValueError, match=r"obstacle file '.*bomb\.yaml': line \d+: the "
                                         r"document has more than 1,000,000 nodes with its "
                                         r"aliases expanded \(limit MAX_YAML_NODES\)") as err:
        load_obstacles(str(path))
    assert len(str(err.value)) < 300
    path.write_text('obstacles:\n  ball: {sphere: 0.1}\n  ball: {sphere: 0.2}\n')
    with pytest.raises(ValueError, match=r"line 3: key 'ball' is given twice in one "
                                         r"mapping \(first at line 2\)"):
        load_obstacles(str(path))


def test_a_half_space_normal_that_overflows_is_normalised_not_zeroed():
    """|(1e308, 1e308, 0)| overflows to inf, and n / inf was accepted as a zero normal."""
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ground = HalfSpace((1e308, 1e308, 0.0), 0.0)
    np.testing.assert_allclose(ground.normal, (math.sqrt(0.5), math.sqrt(0.5), 0.0),
                               rtol=1e-15)
    assert HalfSpace((0.0, 0.0, 2.0)).normal == (0.0, 0.0, 1.0)
    for tiny in ((1e-310, 0.0, 0.0), (0.0, 0.0, 0.0)):
        with pytest.raises(ValueError, match='HalfSpace normal must not be zero'):
            HalfSpace(tiny)


def _obstacle_file(tmp_path):
    path = tmp_path / 'ball.yaml'
    path.write_text('obstacles:\n  ball: {sphere: 0.1, xyz: [1, 0, 0]}\n')
    return path


def test_ros_vi_distances_says_why_a_collision_mesh_cannot_be_used(tmp_path, capsys):
    """The error said "(see the warnings)" and the warnings were never printed; now the
    warning is printed and the error itself says why."""
    from ros_vi.cli import main
    path = tmp_path / 'mover.urdf'
    path.write_text(MOVER % collision('<mesh filename="file:///nonexistent/part.stl"/>'))
    assert main(['distances', str(path), '--pair', 'body:ball', '--obstacles',
                 str(_obstacle_file(tmp_path))]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2, err
    assert err[0].startswith("warning: URDF robot 'mover': mesh "
                             "'file:///nonexistent/part.stl' of link 'body' not found")
    assert err[1].startswith('ros-vi distances: error: ')
    assert ("its collision mesh 'file:///nonexistent/part.stl' cannot be used (not found: "
            "no such file /nonexistent/part.stl)") in err[1]
    assert 'see the warnings' not in err[1]
    assert main(['distances', 'arm7', '--pair', 'link_7:link_1', '--random',
                 '100000000']) == 2
    assert 'must be 1 to 100,000 (MAX_RANDOM)' in capsys.readouterr().err
