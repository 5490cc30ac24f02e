"""World files: schema, solid inertias, and a world of two robots and thrown objects."""
import os

import numpy as np
import pytest

from ros_vi.simulation import Simulation
from ros_vi.simulation.world import WorldError, load_world, shape_volume, solid_inertia
from ros_vi.urdf import import_urdf

ROOT = 'world'      # the acrobot's root link (its own 'world', under a prefix)
URDF = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'urdf')

WORLD = """
gravity: [0, 0, -9.81]
ground: {height: 0.0}
robots:
  - name: left
    urdf: %(urdf)s/acrobot.urdf
    pose: {xyz: [0, -1, 2]}
    initial_positions: {shoulder: 0.3}
  - name: right
    urdf: %(urdf)s/acrobot.urdf
    pose: {xyz: [0, 1, 2], rpy: [0, 0, 1.57]}
objects:
  - name: box
    shape: {box: [0.1, 0.2, 0.3]}
    mass: 2.0
    pose: {xyz: [1, 0, 1], rpy: [0.3, 0.2, 0.1]}
    twist: {linear: [1, 0, 3], angular: [0.1, 2.0, 0.3]}
  - name: ball
    shape: {sphere: 0.05}
    density: 1000
    pose: {xyz: [2, 0, 1]}
    twist: {linear: [0, 1, 0]}
""" % {'urdf': URDF}


def test_solid_inertias_match_their_closed_forms_and_limits():
    m = 3.0
    assert np.allclose(solid_inertia('box', (1.0, 2.0, 3.0), m),
                       np.diag([13.0, 10.0, 5.0]) * m / 12.0, rtol=0, atol=1e-15)
    assert np.allclose(solid_inertia('sphere', (0.5,), m), 0.1 * m * np.eye(3))
    assert np.allclose(solid_inertia('cylinder', (0.5, 2.0), m),
                       np.diag([m * (0.75 + 4.0) / 12.0] * 2 + [0.125 * m]))
    # a capsule without a cylinder is a sphere; a thin one is a rod
    assert np.allclose(solid_inertia('capsule', (0.5, 0.0), m),
                       solid_inertia('sphere', (0.5,), m), rtol=1e-15)
    rod = solid_inertia('capsule', (1e-6, 2.0), m)
    assert abs(rod[0, 0] / (m * 4.0 / 12.0) - 1.0) < 1e-5 and rod[2, 2] < 1e-11
    # a capsule by numerical integration on a grid (its density uniform)
    r, h, n = 0.3, 0.8, 161
    xs = np.linspace(-r, r, n)
    zs = np.linspace(-(h / 2 + r), h / 2 + r, 2 * n)
    X, Y, Z = np.meshgrid(xs, xs, zs, indexing='ij')
    inside = X ** 2 + Y ** 2 + np.maximum(np.abs(Z) - h / 2, 0.0) ** 2 <= r * r
    cell = (xs[1] - xs[0]) ** 2 * (zs[1] - zs[0])
    assert abs(inside.sum() * cell / shape_volume('capsule', (r, h)) - 1.0) < 5e-3
    density = m / (inside.sum() * cell)
    Izz = density * cell * (X ** 2 + Y ** 2)[inside].sum()
    Ixx = density * cell * (Y ** 2 + Z ** 2)[inside].sum()
    I = solid_inertia('capsule', (r, h), m)
    assert abs(I[2, 2] / Izz - 1.0) < 1e-2 and abs(I[0, 0] / Ixx - 1.0) < 1e-2


@pytest.mark.parametrize('text, message', [
    ('robots: {}', 'robots must be a list'),
    ('objects: [{shape: {box: [1, 1, 1]}, mass: 1}]', r'objects\[0\] needs a name'),
    ('objects: [{name: a, shape: {cone: 1}, mass: 1}]', r'objects\[0\]\.shape must be one of'),
    ('objects: [{name: a, shape: {box: [1, 1]}, mass: 1}]', r'objects\[0\]\.shape\.box must '
                                                            r'be 3 finite numbers'),
    ('objects: [{name: a, shape: {sphere: -1}, mass: 1}]', 'sizes must be positive'),
    ('objects: [{name: a, shape: {sphere: 1}}]', 'exactly one of mass'),
    ('objects: [{name: a, shape: {sphere: 1}, mass: 1, colour: red}]', "unknown key 'colour'"),
    ('objects: [{name: a, shape: {sphere: 1}, mass: 1}, {name: a, shape: {sphere: 1}, '
     'mass: 1}]', "the name 'a' is used twice"),
    ('objects: [{name: a, shape: {sphere: 1}, mass: 1, friction: -0.1}]',
     r'objects\[0\]\.friction must be >= 0'),
    ('objects: [{name: a, shape: {sphere: 1}, mass: 1, friction: high}]',
     r"objects\[0\]\.friction must be a finite number, got 'high'"),
    ('ground: {friction: 0.5, restitution: 1.5}', r'ground\.restitution must be in \[0, 1\]'),
    ('ground: {restitution: 0.5}', r'ground\.restitution needs ground\.friction'),
    ('gravity: [0, 0]', 'gravity must be 3 finite numbers'),
    ('robots: [{name: r, urdf: nowhere.urdf}]', r'robots\[0\]\.urdf: no such file'),
    ('robots: [{name: r, urdf_text: "<robot name=\'r\'><link name=\'a\'/></robot>", '
     'twist: {linear: [1, 0, 0]}}]', 'only a floating robot has a twist'),
    ('gravity: [0, 0, -9.81\n', 'not YAML'),
    ('robots: [{name: "arm 1", urdf_text: "<robot name=\'r\'><link name=\'a\'/></robot>"}]',
     r"robots\[0\]\.name 'arm 1' is not a ROS name token"),
])
def test_bad_world_files_are_refused_naming_the_entry(text, message):
    with pytest.raises(WorldError, match=message):
        load_world(text + '\n')


def test_a_world_is_one_description_that_imports():
    world = load_world(WORLD)
    system = import_urdf(world.urdf())
    names = [c.name for c in system.configs]
    assert names[:4] == ['left/shoulder', 'left/elbow', 'right/shoulder', 'right/elbow']
    assert names[4:] == ['box_' + p for p in ('x', 'y', 'z', 'rx', 'ry', 'rz')] + \
        ['ball_' + p for p in ('x', 'y', 'z', 'rx', 'ry', 'rz')]
    assert [j.name for j in system.free_joints] == ['box', 'ball']
    assert abs(system.free_joints[1].body.mass - 1000 * 4 / 3 * np.pi * 0.05 ** 3) < 1e-12
    # the robots hang at their poses (their root links, under their prefixes)
    system.q = np.zeros(system.nQ)
    for name, pose in (('left/', world.robots[0].pose), ('right/', world.robots[1].pose)):
        root = system.get_frame(name + ROOT)
        assert np.abs(root.g() - pose).max() < 1e-12


def test_thrown_objects_fly_as_closed_forms_say():
    sim = Simulation.from_world(WORLD, rate=500)
    # the acrobots' elbows are their motors; free joints have none
    assert sim.command_joints == ['left/elbow', 'right/elbow']
    world, system = sim.world, sim.system
    start = sim.state()
    assert start.positions[system.get_config('left/shoulder').index] == 0.3
    twist = world.objects[0].twist
    v, w = system.free_joints[0].body_twist(start.positions, start.velocities)
    R = world.objects[0].pose[:3, :3]          # the box's initial attitude in the world
    assert np.abs(R @ v - twist[:3]).max() < 1e-12 and np.abs(R @ w - twist[3:]).max() < 1e-12
    box, ball = system.free_joints
    g = np.array([0.0, 0.0, -9.81])
    sim.step(1)
    mvi = sim.mvi

    def box_state():
        mvi.recenter()
        idx = [c.index for c in box.configs]
        R_pose = world.objects[0].pose[:3, :3]
        # angular momentum about the box's centre, world frame; its linear momentum
        return (R_pose @ box.reference_attitude @ mvi.p2[idx[3:]],
                R_pose @ mvi.p2[idx[:3]])
    L0, P0 = box_state()
    t0 = mvi.t2
    sim.step(249)
    L, P = box_state()
    t = mvi.t2 - t0
    assert np.abs(L - L0).max() < 1e-12 * np.linalg.norm(L0)
    assert np.abs(P - (P0 + 2.0 * g * t)).max() < 1e-12 * np.linalg.norm(P)
    # the ball: x0 + v0 t + g t^2 / 2, exactly (a linear potential)
    idx = [c.index for c in ball.configs]
    x = world.objects[1].pose[:3, 3] + mvi.q2[idx[:3]]
    T = mvi.t2
    assert np.abs(x - (np.array([2.0, 0.0, 1.0]) + np.array([0.0, 1.0, 0.0]) * T
                       + 0.5 * g * T * T)).max() < 1e-12


def test_the_shipped_world_runs_from_the_command_line(tmp_path, capsys):
    from ros_vi.cli import main
    world = os.path.join(os.path.dirname(URDF), 'worlds', 'throw.yaml')
    assert main(['info', world]) == 0
    out = capsys.readouterr().out
    assert 'book' in out and 'free joint: 6 configs, no motor' in out
    assert main(['simulate', world, '--duration', '0.2', '--no-progress',
                 '--out', str(tmp_path / 'throw.npz')]) == 0
    out = capsys.readouterr().out
    assert 'book_rx' in out and 'left/shoulder' in out


def test_reset_puts_the_objects_back_at_their_initial_poses():
    sim = Simulation.from_world(WORLD, rate=500)
    box = sim.system.free_joints[0]
    start = box.body.g()
    sim.step(200)
    sim.system.q = sim.state().positions
    assert np.abs(box.body.g() - start).max() > 0.1
    sim.reset()
    sim.system.q = sim.state().positions
    assert np.abs(box.body.g() - start).max() < 1e-14
    sim.step(10)                    # and it flies again from there


def test_a_world_recording_is_drawn_with_its_objects(tmp_path):
    from ros_vi.cli import main
    from ros_vi.recording import load_recording
    from ros_vi.visual.playback import (animate, config_positions, free_body_poses,
                                        link_pose_track, load_robot)
    world = os.path.join(os.path.dirname(URDF), 'worlds', 'throw.yaml')
    out = tmp_path / 'throw.npz'
    assert main(['simulate', world, '--duration', '0.3', '--no-progress', '--out',
                 str(out)]) == 0
    rec = load_recording(str(out))
    system, scene = load_robot(rec.robot_description)
    assert [j.name for j in system.free_joints] == ['book', 'ball', 'can']
    times = np.array([0.0, 0.1, 0.3])
    track = link_pose_track(system, scene, config_positions(system, rec, times),
                            free_body_poses(system, rec, times))
    ball = track[:, scene.links.index('ball')]
    # thrown from (2, 0, 1) at (-0.5, 1, 5) m/s: on its parabola, drawn where it flew
    g = np.array([0.0, 0.0, -9.81])
    for k, t in enumerate(times):
        expected = np.array([2.0, 0.0, 1.0]) + np.array([-0.5, 1.0, 5.0]) * t + 0.5 * g * t * t
        assert np.abs(ball[k, :3, 3] - expected).max() < 1e-9
    # the book turned (12 rad/s about its middle axis): drawn turned
    book = track[:, scene.links.index('book')]
    assert np.abs(book[2, :3, :3] - np.eye(3)).max() > 0.5
    film = animate(rec, str(tmp_path / 'throw.gif'), fps=10)
    assert film.frames == 3 and os.path.getsize(tmp_path / 'throw.gif') > 0


def test_joints_belong_to_the_robot_of_the_longest_prefix():
    """Robot ``a`` (prefix ``a``) and ``ab`` (prefix ``ab``): ``abx`` is ``ab``'s joint."""
    text = "<robot name='r'><link name='l'/></robot>"
    world = load_world('robots:\n  - {name: a, prefix: a, urdf_text: "%s"}\n'
                       '  - {name: ab, prefix: ab, urdf_text: "%s"}\n' % (text, text))
    assert world.robot_joints(['ax', 'abx', 'other', 'ay']) == {'a': ['ax', 'ay'],
                                                                 'ab': ['abx']}
