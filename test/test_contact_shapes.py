"""Cylinders and meshes in contact (ros_vi.contact: a SphereOnPlane's ``rim``,
SphereOnCylinder, SphereOnHull; ros_vi.urdf.ground_contacts and body_contacts).

A cylinder touches a plane on its caps' edges, each at its point nearest the plane: its gap
is the closed form ``z_cap - r sqrt(1 - a_z^2)`` and its derivatives match differences; it
rolls on its side with no slip and no step error, rolls down a slope at 2/3 g sin(a) (or,
with too little friction, rolls and slides: g (sin a - mu cos a) and 2 mu g cos(a) / r);
standing on a cap it rests and slides by Coulomb's law.  A ball rests on its cap.  A mesh
touches with the vertices of its convex hull and holds others off its faces: a mesh cube
moves exactly as the box primitive of its size."""
import math
import os
import sys

import numpy as np
import pytest

from ros_vi.contact import (ContactSet, SphereOnCylinder, SphereOnHull, contact_hessians,
                            contact_kinematics)
from ros_vi.simulation import Simulation, setup_robot
from ros_vi.simulation.world import load_world

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples'))
from box_stack import world_poses  # noqa: E402

G = 9.81
RATE = 500.0
HALF_PI = math.pi / 2


def wheel_world(angle=0.0, friction=0.8, speed=0.0, radius=0.1, length=0.05):
    """A 1 kg solid cylinder (``radius``, ``length``) lying on its side (axis along y) on
    the ground, rolling along x at ``speed`` [m/s] (spin speed / radius), under gravity
    tilted by ``angle`` about y: the ground is then a slope falling along +x."""
    gravity = [G * math.sin(angle), 0.0, -G * math.cos(angle)]
    return '''
gravity: %r
ground: {height: 0.0, friction: %r}
objects:
  - {name: wheel, shape: {cylinder: [%r, %r]}, mass: 1.0,
     pose: {xyz: [0, 0, %r], rpy: [%r, 0, 0]},
     twist: {linear: [%r, 0, 0], angular: [0, %r, 0]}}
''' % (gravity, friction, radius, length, radius, HALF_PI, speed, speed / radius)


def test_a_rim_touches_at_its_lowest_point_and_its_derivatives_match_differences():
    """A tilted cylinder above the ground: each cap edge's gap is its centre's height less
    r sqrt(1 - a_z^2) (a its axis), at every configuration the set evaluates (the touching
    point moves round the rim); its gradient and the slip Jacobian match differences, and
    so do their derivatives (contact_hessians)."""
    sim = Simulation.from_world(wheel_world() .replace('xyz: [0, 0, 0.1]',
                                                       'xyz: [0, 0, 0.3]'))
    s = sim.system
    rims = [m for m, c in enumerate(s.contacts) if c.rim is not None]
    assert len(s.contacts) == 8 and len(rims) == 2
    geometry = ContactSet(s)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = s.q + rng.normal(size=s.nQ) * 0.3
        gap, normal, slip = geometry.kinematics(q)
        R, P, _ = geometry._poses(q)
        for m in rims:
            c = s.contacts[m]
            f = s.frames.index(c.frame)
            centre = R[f] @ c.offset + P[f]
            axis = R[f] @ c.rim[0]
            assert abs(gap[m] - (centre[2] - 0.1 * math.sqrt(1.0 - axis[2] ** 2))) <= 1e-15
        h = 1e-6
        for j in range(s.nQ):
            e = np.zeros(s.nQ)
            e[j] = h
            plus, minus = geometry.kinematics(q + e), geometry.kinematics(q - e)
            assert np.abs(normal[:, j] - (plus[0] - minus[0]) / (2 * h)).max() <= 1e-8
        hess, dslip = contact_hessians(s, q)
        for j in range(s.nQ):
            e = np.zeros(s.nQ)
            e[j] = h
            _, n_plus, t_plus = contact_kinematics(s, q + e)
            _, n_minus, t_minus = contact_kinematics(s, q - e)
            assert np.abs(hess[:, :, j] - (n_plus - n_minus) / (2 * h)).max() <= 1e-7
            assert np.abs(dslip[:, :, :, j] - (t_plus - t_minus) / (2 * h)).max() <= 1e-7
        assert np.abs(hess - hess.transpose(0, 2, 1)).max() <= 1e-8
        assert np.abs(hess[rims]).max() > 0.01


def test_a_cylinder_rolls_on_its_side_without_slip_or_step_error():
    """Rolling at 1 m/s on a level ground: after 1 s it is 1 m on, to 1e-12 m, its centre
    at its radius above the ground (to the contact tolerance, 1e-12 m) and still rolling at
    1 m/s; its two rims stick."""
    sim = Simulation.from_world(wheel_world(speed=1.0), rate=RATE)
    lowest, heights = np.inf, []
    for _ in range(int(RATE)):
        sim.step()
        lowest = min(lowest, float(sim.mvi.contact_gaps.min()))
        heights.append(world_poses(sim)['wheel'][1][2])
    p = world_poses(sim)['wheel'][1]
    assert abs(p[0] - 1.0) <= 1e-12 and abs(p[1]) <= 1e-13
    assert np.abs(np.array(heights) - 0.1).max() <= 1e-12
    assert lowest >= -1e-12
    rims = [m for m, c in enumerate(sim.system.contacts) if c.rim is not None]
    assert [sim.mvi.contact_modes[m] for m in rims] == ['stick', 'stick']
    sim.step()
    assert abs(world_poses(sim)['wheel'][1][0] - p[0] - 1.0 / RATE) <= 1e-12


@pytest.mark.parametrize('friction', [0.8, 0.02])
def test_a_cylinder_rolls_down_a_slope_by_the_closed_form(friction):
    """From rest on a slope of 0.2 rad: with mu above tan(a)/3 it rolls, its centre
    accelerating at 2/3 g sin a (I = m r^2 / 2); below, it rolls and slides, the centre at
    g (sin a - mu cos a) and the spin at 2 mu g cos(a) / r.  Positions after 1 s to 1e-9
    relative."""
    angle, radius = 0.2, 0.1
    sim = Simulation.from_world(wheel_world(angle, friction, radius=radius), rate=RATE)
    sim.step(int(RATE))
    R, p = world_poses(sim)['wheel']
    t = 1.0
    if friction > math.tan(angle) / 3:
        a = 2.0 / 3.0 * G * math.sin(angle)
        spin = a * t * t / 2 / radius
    else:
        a = G * (math.sin(angle) - friction * math.cos(angle))
        spin = friction * G * math.cos(angle) / radius * t * t
    assert abs(p[0] - a * t * t / 2) <= 1e-9 * a
    # the turn about the axis (y): the cylinder's own z axis started along -y
    turned = math.atan2(-R[2, 0], R[0, 0])
    assert abs(turned % (2 * math.pi) - spin % (2 * math.pi)) <= 1e-9 * spin
    assert abs(p[2] - radius) <= 1e-12


def test_a_standing_cylinder_rests_and_slides_on_its_cap():
    """A can (r 0.05 m, 0.2 m tall, 1 kg) standing on its cap stays put for 1 s (1e-12 m),
    its ground impulses its weight; given 0.5 m/s on mu = 0.3 it slides without tipping,
    slowing at mu g to 1e-9 m/s."""
    world = '''
ground: {height: 0.0, friction: 0.3}
objects:
  - {name: can, shape: {cylinder: [0.05, 0.2]}, mass: 1.0, pose: {xyz: [0, 0, 0.1]},
     twist: {linear: [%r, 0, 0]}}
'''
    sim = Simulation.from_world(world % 0.0, rate=RATE)
    sim.step(int(RATE))
    p = world_poses(sim)['can'][1]
    assert np.abs(p - (0.0, 0.0, 0.1)).max() <= 1e-12
    gamma = sim.mvi.contact_impulses[:, 0].sum()
    assert abs(gamma - G / RATE) <= 1e-9 * G / RATE
    sim = Simulation.from_world(world % 0.5, rate=RATE)
    n = 50
    sim.step(n)
    x0 = world_poses(sim)['can'][1][0]
    sim.step()
    speed = (world_poses(sim)['can'][1][0] - x0) * RATE
    t = (n + 0.5) / RATE
    assert abs(speed - (0.5 - 0.3 * G * t)) <= 1e-9
    R = world_poses(sim)['can'][0]
    assert abs(R[2, 2] - 1.0) <= 1e-12


def test_a_ball_rests_on_a_standing_cylinder():
    """A 0.5 kg ball laid 10 um above a standing can's top cap lands on it and rests
    (no gap below -1e-12 m, still to 1e-9 m); the ground carries both."""
    sim = Simulation.from_world('''
ground: {height: 0.0, friction: 0.8}
objects:
  - {name: can, shape: {cylinder: [0.05, 0.2]}, mass: 1.0, pose: {xyz: [0, 0, 0.1]}}
  - {name: ball, shape: {sphere: 0.03}, mass: 0.5, pose: {xyz: [0.01, 0, 0.23001]}}
''', rate=RATE)
    on_can = [m for m, c in enumerate(sim.system.contacts)
              if isinstance(c, SphereOnCylinder) and c.frame.name == 'ball']
    assert len(on_can) == 1
    sim.step(100)
    start = world_poses(sim)['ball'][1].copy()
    lowest = np.inf
    for _ in range(250):
        sim.step()
        lowest = min(lowest, float(sim.mvi.contact_gaps.min()))
    assert lowest >= -1e-12
    assert np.abs(world_poses(sim)['ball'][1] - start).max() <= 1e-9
    assert abs(start[2] - 0.23) <= 1e-12
    ground = [m for m, c in enumerate(sim.system.contacts) if c.plane_frame is None]
    gamma = sim.mvi.contact_impulses[ground, 0].sum()
    assert abs(gamma - 1.5 * G / RATE) <= 1e-9 * G / RATE


CUBE_OBJ = '''v -0.05 -0.05 -0.05
v 0.05 -0.05 -0.05
v 0.05 0.05 -0.05
v -0.05 0.05 -0.05
v -0.05 -0.05 0.05
v 0.05 -0.05 0.05
v 0.05 0.05 0.05
v -0.05 0.05 0.05
v 0 0 0
f 1 3 2
f 1 4 3
f 5 6 7
f 5 7 8
f 1 2 6
f 1 6 5
f 2 3 7
f 2 7 6
f 3 4 8
f 3 8 7
f 4 1 5
f 4 5 8
'''

MESH_LINK = '''<robot name="part"><link name="part">
  <inertial><mass value="1"/><inertia ixx="%(i)r" iyy="%(i)r" izz="%(i)r" ixy="0" ixz="0"
    iyz="0"/></inertial>
  <collision><geometry><mesh filename="%(mesh)s"/></geometry></collision>
</link></robot>'''


def test_a_mesh_cube_moves_exactly_as_the_box_of_its_size(tmp_path):
    """A cube mesh (with a vertex inside it, which its hull drops) thrown sliding and
    turning onto the ground, and then a ball dropped onto it at rest, each beside the same
    scene with a box primitive: the two scenes' positions agree to 1e-12 m and rotations
    to 1e-11 throughout (the contacts are solved to 1e-12 m); the ball rests on the cube's
    top face."""
    (tmp_path / 'cube.obj').write_text(CUBE_OBJ)
    (tmp_path / 'part.urdf').write_text(MESH_LINK % {'i': 1.0 / 600, 'mesh': 'cube.obj'})
    thrown = """
ground: {height: 0.0, friction: 0.5}
objects:
  - {name: part, %s, pose: {xyz: [0, 0, 0.06], rpy: [0.1, 0, 0.3]},
     twist: {linear: [0.4, 0.1, 0], angular: [0, 0, 1.0]}}
"""
    resting = """
ground: {height: 0.0, friction: 0.5}
objects:
  - {name: part, %s, pose: {xyz: [0, 0, 0.05]}}
  - {name: ball, shape: {sphere: 0.02}, mass: 0.1, pose: {xyz: [0.01, 0.02, 0.12001]}}
"""
    for scene, names in ((thrown, ('part',)), (resting, ('part', 'ball'))):
        (tmp_path / 'mesh.yaml').write_text(scene % 'urdf: part.urdf')
        mesh = Simulation.from_world(str(tmp_path / 'mesh.yaml'), rate=RATE)
        box = Simulation.from_world(scene % 'shape: {box: [0.1, 0.1, 0.1]}, mass: 1.0',
                                    rate=RATE)
        # the cube's 8 corners on the ground (its inner vertex is no hull vertex)
        assert sum(c.frame.name == 'part' and c.plane_frame is None
                   for c in mesh.system.contacts) == 8
        for _ in range(int(RATE / 2)):
            mesh.step()
            box.step()
            a, b = world_poses(mesh), world_poses(box)
            for name in names:
                assert np.abs(a[name][1] - b[name][1]).max() <= 1e-12
                assert np.abs(a[name][0] - b[name][0]).max() <= 1e-11
    hulls = [c for c in mesh.system.contacts if isinstance(c, SphereOnHull)]
    assert len(hulls) == 1 and hulls[0].frame.name == 'ball'
    assert world_poses(mesh)['ball'][1] == pytest.approx((0.01, 0.02, 0.12), abs=1e-12)


def test_a_mesh_that_cannot_be_read_is_named_and_touches_nothing(tmp_path):
    """A collision mesh whose file is missing: the setup's warnings name it, it gets no
    contact (the sphere beside it does)."""
    (tmp_path / 'part.urdf').write_text(MESH_LINK % {'i': 0.01, 'mesh': 'missing.stl'})
    (tmp_path / 'w.yaml').write_text('''
ground: {height: 0.0, friction: 0.8}
objects:
  - {name: part, urdf: part.urdf, pose: {xyz: [0, 0, 1]}}
  - {name: ball, shape: {sphere: 0.1}, mass: 1.0, pose: {xyz: [1, 0, 1]}}
''')
    world = load_world(str(tmp_path / 'w.yaml'))
    setup = setup_robot(world.urdf(), gravity=tuple(world.gravity),
                        ground=world.contact_ground(), **world.setup_options())
    assert [c.name for c in setup.system.contacts] == ['ball_ground_0']
    assert any('part (mesh)' in w and 'cannot be read' in w for w in setup.warnings)


def test_contact_pairs_of_a_world_file_set_friction_and_restitution_or_switch_off():
    """A world file's ``contacts`` rules: a ball on the ground with its own restitution
    bounces back to e^2 of its drop height while another (no rule) lands dead; a box whose
    pair with the ground has mu 0.1 slides at mu g while the ground's mu is 0.8; a pair
    switched off passes through (its contacts are not made); names that are no robot,
    object or link are refused, naming the entry."""
    world = '''
ground: {height: 0.0, friction: 0.8}
objects:
  - {name: bouncy, shape: {sphere: 0.05}, mass: 1.0, pose: {xyz: [0, 0, 0.25]}}
  - {name: dead, shape: {sphere: 0.05}, mass: 1.0, pose: {xyz: [1, 0, 0.25]}}
  - {name: sled, shape: {box: [0.2, 0.2, 0.1]}, mass: 1.0, pose: {xyz: [0, 2, 0.05]},
     twist: {linear: [1.0, 0, 0]}}
  - {name: ghost, shape: {box: [0.1, 0.1, 0.1]}, mass: 1.0, pose: {xyz: [3, 0, 0.5]}}
contacts:
  - {between: [bouncy, ground], restitution: 0.5}
  - {between: [ground, sled], friction: 0.1}
  - {between: [ghost, ground], enabled: false}
'''
    sim = Simulation.from_world(world, rate=1000.0)
    contacts = sim.system.contacts
    ground = [c for c in contacts if c.plane_frame is None]
    assert {c.restitution for c in ground if c.frame.name == 'bouncy'} == {0.5}
    assert {c.restitution for c in ground if c.frame.name == 'dead'} == {0.0}
    assert {c.restitution for c in contacts if c.plane_frame is not None} == {0.0}
    assert {c.friction for c in contacts if c.frame.name == 'sled'
            and c.plane_frame is None} == {0.1}
    assert not any(c.frame.name == 'ghost' and c.plane_frame is None for c in contacts)
    top = {'bouncy': 0.0, 'dead': 0.0}
    sim.step(300)              # both land (0.2 m fall: 0.2 s)
    for _ in range(200):
        sim.step()
        poses = world_poses(sim)
        for name in top:
            top[name] = max(top[name], poses[name][1][2] - 0.05)
    assert top['bouncy'] == pytest.approx(0.25 * 0.2, rel=0.02)
    assert top['dead'] <= 1e-12
    assert world_poses(sim)['ghost'][1][2] < -0.5     # fell through the ground
    sled = Simulation.from_world(world, rate=1000.0)
    sled.step(200)
    x0 = world_poses(sled)['sled'][1][0]
    sled.step()
    assert (world_poses(sled)['sled'][1][0] - x0) * 1000.0 == pytest.approx(
        1.0 - 0.1 * G * 0.2005, abs=1e-9)
    for bad, message in (('[nobody, ground]', "'nobody' is no robot"),
                         ('[ground]', 'between must be two names')):
        with pytest.raises(ValueError, match=message):
            Simulation.from_world(world.replace('[ghost, ground]', bad))


def test_a_rim_holds_to_the_box_face_it_is_farthest_outside_of():
    """A rim against a box holds to the face whose plane its nearest point is farthest
    outside of (max over faces of min over the rim of the height), a lower bound on their
    distance that is the distance itself across a face: a disc (radius 0.065 m) 2 cm off
    the side of a thin plate (0.03 x 0.08 x 0.16 m) is 2 cm from it, whichever face it was
    held to before (the face nearest its last touching point, the thin one's, would put
    its far side 8 cm past that face's plane); sampled rims agree at random poses."""
    import ros_vi as trep
    from ros_vi.contact import SphereOnBox
    from ros_vi.mechanics import FreeJoint
    s = trep.System()
    disc = FreeJoint(s.world_frame, 'disc')
    disc.body.set_inertia(1.0, np.eye(3))
    half = np.array([0.015, 0.04, 0.08])
    radius, axis = 0.065, np.array([0.0, 1.0, 0.0])
    SphereOnBox(s, disc.body, s.world_frame, 2 * half, rim=(axis, radius), name='disc_plate')
    geometry = ContactSet(s)
    beside = np.zeros(6)
    beside[0] = 0.2                     # off the thin +x face first
    geometry.select(beside)
    assert geometry.face[0] == 1
    facing = np.zeros(6)
    facing[1] = half[1] + 0.02          # the disc's plane 2 cm off the +y face
    geometry.select(facing)
    assert geometry.face[0] == 3
    assert abs(geometry.gaps(facing)[0] - 0.02) <= 1e-15

    # every face's plane against 20000 points of the rim
    angles = np.linspace(0.0, 2 * np.pi, 20000, endpoint=False)
    normals = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]],
                       dtype=float)
    heights = np.abs(normals) @ half
    rng = np.random.default_rng(11)
    for _ in range(50):
        q = np.concatenate([rng.uniform(-0.15, 0.15, 3), rng.uniform(-np.pi, np.pi, 3)])
        geometry.select(q)
        gap = geometry.gaps(q)[0]
        R, P, _ = geometry._poses(q)
        f = s.frames.index(disc.body)
        w = R[f] @ axis
        u = np.cross(w, [1.0, 0.0, 0.0] if abs(w[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        v = np.cross(w, u)
        rim = P[f] + radius * (np.outer(np.cos(angles), u) + np.outer(np.sin(angles), v))
        bound = (rim @ normals.T - heights).min(axis=0).max()
        assert abs(gap - bound) <= 1e-6
        # and never more than the rim's distance to the box
        outside = np.maximum(np.abs(rim) - half, 0.0)
        assert gap <= np.sqrt((outside ** 2).sum(axis=1)).min() + 1e-9
