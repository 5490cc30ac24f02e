"""Contact between two bodies (ros_vi.contact.SphereOnBox, ros_vi.urdf.body_contacts): a
body's spheres and corners held off the faces of another body's box, with friction.

The geometry's derivatives against finite differences; a box sliding on a box decelerates
by mu g (closed form) while the box under it stays; the stack of five boxes of
examples/box_stack.py stands 60 s (its corners move < 1e-6 m; each box bears the weight of
those above it); the gripper of examples/gripper_lift.py lifts a box by friction and holds
it; the wheeled base of examples/wheeled_drive.py rolls on its wheels; a step's
derivatives through a contact between two moving bodies, sticking and sliding, against
central differences of the step."""
import os
import sys

import numpy as np
import pytest

import ros_vi as trep
from ros_vi.contact import (ContactSet, SphereOnBox, SphereOnCapsule, contact_hessians,
                            contact_kinematics)
from ros_vi.mechanics import FreeJoint
from ros_vi.mechanics.free import xyz_rotation
from ros_vi.simulation import Simulation

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples'))
from box_stack import main as stack_example, world_poses  # noqa: E402
from gripper_lift import main as gripper_example  # noqa: E402
from wheeled_drive import main as wheeled_example  # noqa: E402

G = 9.81

TWO_BOXES = '''
ground: {height: 0.0, friction: 0.8}
objects:
  - {name: base, shape: {box: [0.6, 0.4, 0.1]}, mass: 5.0, pose: {xyz: [0, 0, 0.05]}}
  - {name: top, shape: {box: [0.2, 0.2, 0.1]}, mass: 1.0, friction: %r,
     pose: {xyz: [%r, 0, 0.15], rpy: [0, 0, %r]}, twist: {linear: [%r, 0, 0]}}
'''


def test_body_contact_geometry_matches_finite_differences():
    """Two free boxes, each turned, at a random configuration: every contact's gap
    gradient against differences of its gap, its slip Jacobian against differences of the
    relative displacement of the two bodies' material points at the contact point (along
    the face's tangents), and the second derivatives against differences of the first."""
    sim = Simulation.from_world(TWO_BOXES % (0.5, 0.1, 0.4, 0.0))
    s = sim.system
    contacts = [c for c in s.contacts if isinstance(c, SphereOnBox)]
    assert len(contacts) == 16 and {c.plane_frame.name for c in contacts} == {'base', 'top'}
    # as built, the small box's bottom corners face the big one's top (+z, face 5), and
    # the big box's corners outside the small one's footprint face its sides
    faces = ContactSet(s, contacts).face
    on_base = [m for m, c in enumerate(contacts) if c.plane_frame.name == 'base']
    assert [faces[m] for m in on_base if contacts[m].offset[2] < 0] == [5] * 4
    assert all(faces[m] < 4 for m in range(16) if m not in on_base)
    for joint in s.free_joints:
        pose = np.eye(4)
        pose[:3, :3] = xyz_rotation(np.array([0.2, -0.3, 0.5]))
        joint.reference_frame.transform_value = pose
    q = s.q + np.random.default_rng(7).normal(size=s.nQ) * 0.05
    geometry = ContactSet(s, contacts)
    geometry.select(q)
    gap, normal, slip = geometry.kinematics(q)
    R, P, _ = geometry._poses(q)
    a, b = geometry.frame, geometry.plane_frame
    basis = np.einsum('kij,kaj->kai', R[b], geometry.basis)
    x = (np.einsum('kij,kj->ki', R[a], geometry.offset) + P[a]
         - geometry.radius[:, None] * basis[:, 0])
    in_a = np.einsum('kji,kj->ki', R[a], x - P[a])     # x as material points of each body
    in_b = np.einsum('kji,kj->ki', R[b], x - P[b])

    def apart(qj):
        """The two material points' separation (k, 3) [m, world] at qj."""
        Rj, Pj, _ = geometry._poses(qj)
        return (np.einsum('kij,kj->ki', Rj[a], in_a) + Pj[a]
                - np.einsum('kij,kj->ki', Rj[b], in_b) - Pj[b])
    h = 1e-6
    for j in range(s.nQ):
        e = np.zeros(s.nQ)
        e[j] = h
        gap_plus, gap_minus = geometry.kinematics(q + e)[0], geometry.kinematics(q - e)[0]
        assert np.abs(normal[:, j] - (gap_plus - gap_minus) / (2 * h)).max() <= 1e-8
        rate = (apart(q + e) - apart(q - e)) / (2 * h)
        assert np.abs(slip[:, :, j] - np.einsum('kai,ki->ka', basis[:, 1:], rate)).max() <= 1e-8
    assert np.abs(normal).max() > 0.5 and np.abs(slip).max() > 0.1
    hess, dslip = contact_hessians(s, q, contacts)
    for j in range(s.nQ):
        e = np.zeros(s.nQ)
        e[j] = h
        _, n_plus, t_plus = geometry.kinematics(q + e)
        _, n_minus, t_minus = geometry.kinematics(q - e)
        assert np.abs(hess[:, :, j] - (n_plus - n_minus) / (2 * h)).max() <= 1e-7
        assert np.abs(dslip[:, :, :, j] - (t_plus - t_minus) / (2 * h)).max() <= 1e-7
    assert np.abs(hess - hess.transpose(0, 2, 1)).max() <= 1e-9


def test_a_box_sliding_on_a_box_decelerates_by_its_friction():
    """A 1 kg box set sliding at 1 m/s on a 5 kg box that rests on the ground, mu = 0.3
    between them (0.8 on the ground): from the second step on (the first starts the
    contact: the VI's impulses begin at the step's end) it slows at mu g, v = 1 - mu g t,
    and travels by the same closed form (1e-9 m), flat; the box under it, pushed by mu m g
    and held by up to 0.8 (6 kg) g, does not move (1e-9 m); the contact forces on the top
    box are its weight and mu m g back; it stops within a step of 1 / (mu g) and stays
    (from its third step after)."""
    mu = 0.3
    dt = 1e-3
    sim = Simulation.from_world(TWO_BOXES % (mu, -0.1, 0.0, 1.0), rate=1.0 / dt)
    base0 = world_poses(sim)['base'][1].copy()
    stop = 1.0 / (mu * G)
    sim.step(2)
    t2, x2 = 2 * dt, world_poses(sim)['top'][1][0]

    def closed_form(t):
        """(speed, travel since t2) at t."""
        t = min(t, stop)
        return 1.0 - mu * G * t, (t - t2) - 0.5 * mu * G * (t * t - t2 * t2)
    for k in range(3, 501):
        sim.step()
        t = k * dt
        top = sim.free_bodies()['top']         # (its twist in its own axes, unturned)
        poses = world_poses(sim)
        speed, travel = closed_form(t)
        if t < stop - dt:
            assert abs(top.linear[0] - speed) <= 1e-9, t
            assert abs(poses['top'][1][0] - x2 - travel) <= 1e-9, t
        elif t > stop + 3 * dt:      # (the step that stops it, like the first, ends one late)
            assert abs(top.linear[0]) <= 1e-9, t
            assert abs(poses['top'][1][0] - x2 - travel) <= mu * G * dt * dt, t
        assert abs(poses['top'][1][2] - 0.15) <= 1e-9 and np.abs(top.angular).max() <= 1e-9
        assert np.abs(poses['top'][0] - np.eye(3)).max() <= 1e-9
        assert np.abs(poses['base'][1] - base0).max() <= 1e-9
        if k == 100:
            forces = sim.contact_forces()
            on_top = sum(f for frame, f in zip(forces.frames, forces.forces)
                         if frame == 'top') + sum(
                g for other, g in zip(forces.others, forces.other_forces) if other == 'top')
            assert np.abs(on_top - (-mu * G, 0.0, G)).max() <= 1e-9
            assert set(m for m, c in zip(sim.mvi.contact_modes, sim.system.contacts)
                       if 'top' in (c.frame.name, getattr(c.plane_frame, 'name', ''))
                       and m != 'open') == {'slide'}


CRATE_AND_BALL = """
ground: {height: 0.0, friction: 0.5}
objects:
  - {name: crate, shape: {box: [0.3, 0.2, 0.1]}, mass: 2.0, pose: {xyz: [0, 0, 0.05]},
     twist: {linear: [0.5, 0, 0]}}
  - {name: ball, shape: {sphere: 0.05}, mass: 0.5, pose: {xyz: [0, 0, 0.15]},
     twist: {linear: [0.5, 0, 0]}}
"""


def test_a_crate_sliding_on_the_ground_carries_a_rolling_ball_by_the_closed_form():
    """A 2 kg crate sliding at 0.5 m/s on the ground (mu = 0.5) with a 0.5 kg solid ball
    resting on it: the ball rolls on the crate (its contact sticks) while the crate's four
    lower corners slide, so the crate slows at a = mu g (m_c + m_b) / (m_c + 2/7 m_b) and
    the ball at 2/7 a (its friction on the crate, 2/7 m_b a, pushes the crate on); both
    positions follow x = v0 t - a t^2 / 2 to 1e-12 m until the crate stops, flat.  (The
    ball's friction direction turns with rounding at its zero slip: a solve that stalls
    there is retried with it sticking.)"""
    sim = Simulation.from_world(CRATE_AND_BALL, rate=500.0)
    a = 0.5 * G * 2.5 / (2.0 + 2.0 / 7.0 * 0.5)
    stop = 0.5 / a
    modes = dict(zip((c.name for c in sim.system.contacts), sim.mvi.contact_modes))
    k = 0
    while (k + 2) / 500.0 < stop:
        k += 1
        assert sim.tick().ok
        t = k / 500.0
        poses = world_poses(sim)
        assert abs(poses['crate'][1][0] - (0.5 * t - 0.5 * a * t * t)) <= 1e-12, t
        assert abs(poses['ball'][1][0] - (0.5 * t - 0.5 * 2.0 / 7.0 * a * t * t)) <= 1e-12, t
        assert abs(poses['crate'][1][2] - 0.05) <= 1e-12
        assert abs(poses['ball'][1][2] - 0.15) <= 1e-12
        modes = dict(zip((c.name for c in sim.system.contacts), sim.mvi.contact_modes))
        assert [modes['crate_ground_%d' % n] for n in (0, 2, 4, 6)] == ['slide'] * 4
        assert [m for name, m in modes.items() if name.startswith('ball_on_crate')
                and m != 'open'] == ['stick']
    assert k >= 40


def test_a_stack_of_five_boxes_stands_for_a_minute():
    """examples/box_stack.py (worlds/stack.yaml), 60 s at 100 Hz: no failed step, no
    corner moves more than 1e-6 m after the landing, no gap below -1e-8 m, and each box
    bears from the one under it exactly the weight of the boxes above (1e-9 relative),
    straight up."""
    drift, lowest, failed, supports = stack_example(['--seconds', '60'])
    assert failed == 0
    assert max(drift.values()) <= 1e-6
    assert lowest >= -1e-8
    assert len(supports) == 4
    for force, weight in supports:
        assert abs(force[2] - weight) <= 1e-9 * weight
        assert np.hypot(force[0], force[1]) <= 1e-9 * weight


def paddle_and_ball(friction):
    """A 1 m paddle (box 1.0 x 0.4 x 0.05 m, 2 kg at its middle) turning about the world's
    y axis under a torque u, and a free ball (r = 0.05 m, 0.5 kg, unequal inertia) 2e-4 m
    above its top face, held off the paddle's box by a SphereOnBox."""
    s = trep.System()
    paddle = trep.Frame(s.world_frame, trep.RY, 'hinge', name='paddle')
    trep.Frame(paddle, trep.TX, 0.5, mass=2.0, name='paddle_middle')
    trep.forces.ConfigForce(s, 'hinge', 'u')
    joint = FreeJoint(s.world_frame, 'ball')
    joint.body.set_inertia(0.5, np.diag([4e-4, 5e-4, 6e-4]))
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    pose = np.eye(4)
    pose[0, 3] = 0.5
    SphereOnBox(s, joint.body, paddle, (1.0, 0.4, 0.05), radius=0.05, box_pose=pose,
                friction=friction, name='ball_on_paddle')
    return s, joint


@pytest.mark.parametrize('friction, velocity, mode', [(1.0, (0.05, 0.02, -0.5), 'stick'),
                                                      (0.1, (1.5, 0.4, -0.5), 'slide')])
def test_step_derivatives_through_a_contact_between_two_bodies_match_differences(
        friction, velocity, mode):
    """The spinning ball strikes the turning paddle within the step and sticks (or
    slides): the step's first derivatives by q1, p1 and u (implicit function theorem; the
    geometry's second derivatives by differences) against central differences of the step
    (results in the nominal step's charts)."""
    s, joint = paddle_and_ball(friction)
    dt = 1e-3
    chart = np.eye(4)
    chart[:3, :3] = xyz_rotation(np.array([0.3, 0.4, -0.2]))
    nq = s.nQ
    hinge = s.get_config('hinge').index

    def step_from(x):
        vi = trep.MidpointVI(s, tolerance=1e-13, min_iterations=2)
        joint.reference_frame.transform_value = chart
        vi.initialize_from_state(0.0, x[:nq], x[nq:2 * nq])
        vi.step(dt, x[2 * nq:])
        assert vi.contact_modes == [mode]
        return vi, vi.q2.copy(), vi.p2.copy(), joint.reference_attitude.copy()
    q1 = np.zeros(nq)
    ball = [c.index for c in joint.configs]
    q1[hinge] = 0.02
    q1[ball] = (0.6, 0.0, 0.0, 0.1, -0.05, 0.2)
    # the ball 2e-4 m above the face (the gap is linear in the translation config)
    joint.reference_frame.transform_value = chart
    gaps = []
    for z in (0.0, 0.1):
        q1[ball[2]] = z
        gaps.append(contact_kinematics(s, q1)[0][0])
    q1[ball[2]] = 0.1 * (2e-4 - gaps[0]) / (gaps[1] - gaps[0])
    assert abs(contact_kinematics(s, q1)[0][0] - 2e-4) <= 1e-12
    p1 = np.zeros(nq)
    p1[hinge] = 0.1
    p1[ball] = np.concatenate([velocity, (0.001, 0.0005, 0.0008)])
    x0 = np.concatenate([q1, p1, [2.0]])
    vi, q2, p2, R2 = step_from(x0)
    assert vi.contact_impulses[0][0] > 1e-4                 # a real impact
    D = np.hstack([vi.q2_dq1(), vi.q2_dp1(), vi.q2_du1()])
    E = np.hstack([vi.p2_dq1(), vi.p2_dp1(), vi.p2_du1()])
    h = 1e-6
    for j in range(x0.size):
        out = []
        for sign in (1.0, -1.0):
            x = x0.copy()
            x[j] += sign * h
            _, q, p, R = step_from(x)
            s.free_charts.express(R[None], R2[None], q, p)
            out.append((q, p))
        (qa, pa), (qb, pb) = out
        assert np.abs(D[:, j] - (qa - qb) / (2 * h)).max() <= 1e-7 * np.abs(D).max(), j
        assert np.abs(E[:, j] - (pa - pb) / (2 * h)).max() <= 1e-7 * np.abs(E).max(), j


def test_the_gripper_lifts_a_box_by_friction_and_holds_it():
    """examples/gripper_lift.py (worlds/grasp.yaml): the mimic-finger gripper closes on the
    box, lifts it 0.1 m (less its lift drive's sag under the load, 46 um) and holds it 10
    s: no failed step, the box slips against the pad by less than 1e-9 m (the bar is
    1e-4 m), the four corners of each pad hold it, sticking, and the pads' force on it is
    its weight, straight up (1e-9 N)."""
    rise, slip, failed, holding, force = gripper_example(['--hold', '10'])
    assert failed == 0
    assert abs(rise[2] - 0.1) <= 1e-4 and np.hypot(rise[0], rise[1]) <= 1e-9
    assert slip <= 1e-9
    assert sorted(m for _, m in holding) == ['stick'] * 8
    assert {name.split('_on_')[0] for name, _ in holding} == {'gripper/finger_left',
                                                              'gripper/finger_right'}
    assert np.abs(force - (0.0, 0.0, 0.2 * G)).max() <= 1e-9


def test_the_wheeled_base_rolls_on_its_wheels_friction():
    """examples/wheeled_drive.py (worlds/drive.yaml): velocity drives spin the two sphere
    wheels and friction at their contact points alone moves the chassis.  Straight, it
    advances r times the wheels' turn (rolling without slipping, 1e-9 m over 1.5 s) and
    neither turns nor drifts sideways; turning, it yaws r (right - left) / track (1e-9
    relative); the wheels stick, the frictionless caster slides, nothing else touches."""
    (advance, rolled, sideways, turned), (yawed, expected), modes, failed = wheeled_example([])
    assert failed == 0
    assert advance > 0.5 and abs(advance - rolled) <= 1e-9
    assert sideways <= 1e-9 and abs(turned) <= 1e-9
    assert expected > 0.3 and abs(yawed - expected) <= 1e-9 * expected
    touching = modes[5.0]
    wheels = {name: m for name, m in touching.items() if 'wheel' in name}
    casters = {name: m for name, m in touching.items() if 'caster' in name}
    assert len(wheels) == 2 and set(wheels.values()) == {'stick'}
    assert len(casters) == 1 and set(casters.values()) == {'slide'}
    assert len(touching) == 3


TWO_BALLS = '''
gravity: [0, 0, 0]
ground: {height: -10.0, friction: 0.5, restitution: %r}
objects:
  - {name: ball_a, shape: {sphere: 0.1}, mass: 1.0, pose: {xyz: [0, 0, 0]},
     twist: {linear: [1.0, 0, 0]}}
  - {name: ball_b, shape: {sphere: 0.1}, mass: 1.0, pose: {xyz: [0.25, 0, 0]}}
'''


@pytest.mark.parametrize('e', [0.0, 0.5, 1.0])
def test_two_balls_collide_head_on_by_newtons_law(e):
    """Two equal balls (SphereOnCapsule of half length 0), no gravity, one at 1 m/s into
    the other at rest: after the impact they move at (1 - e)/2 and (1 + e)/2 m/s (1e-9),
    momentum is conserved to 1e-12 at every step, and they never overlap (1e-12 m)."""
    sim = Simulation.from_world(TWO_BALLS % e, rate=1000.0)
    pair = [c for c in sim.system.contacts if isinstance(c, SphereOnCapsule)]
    assert len(pair) == 2
    for _ in range(200):
        sim.step()
        poses = world_poses(sim)
        apart = poses['ball_b'][1] - poses['ball_a'][1]
        assert np.linalg.norm(apart) >= 0.2 - 1e-12
        bodies = sim.free_bodies()
        momentum = (poses['ball_a'][0] @ bodies['ball_a'].linear
                    + poses['ball_b'][0] @ bodies['ball_b'].linear)
        assert np.abs(momentum - (1.0, 0.0, 0.0)).max() <= 1e-12
    a = poses['ball_a'][0] @ bodies['ball_a'].linear
    b = poses['ball_b'][0] @ bodies['ball_b'].linear
    assert np.abs(a - ((1 - e) / 2, 0, 0)).max() <= 1e-9
    assert np.abs(b - ((1 + e) / 2, 0, 0)).max() <= 1e-9


def test_a_box_rests_on_two_capsules():
    """A 2 kg box (0.5 x 0.3 x 0.1 m) laid 10 um above two capsules (r = 0.05 m, 0.2 m
    long, lying across it on the ground): it lands on their four end spheres and rests, no
    gap below -1e-12 m, still to 1e-9 m over 1 s; the capsules carry its weight."""
    sim = Simulation.from_world('''
ground: {height: 0.0, friction: 0.8}
objects:
  - {name: log_a, shape: {capsule: [0.05, 0.1]}, mass: 1.0,
     pose: {xyz: [-0.15, 0, 0.05], rpy: [1.5707963267948966, 0, 0]}}
  - {name: log_b, shape: {capsule: [0.05, 0.1]}, mass: 1.0,
     pose: {xyz: [0.15, 0, 0.05], rpy: [1.5707963267948966, 0, 0]}}
  - {name: board, shape: {box: [0.5, 0.3, 0.1]}, mass: 2.0, pose: {xyz: [0, 0, 0.15001]}}
''', rate=500.0)
    sim.step(100)
    start = world_poses(sim)['board'][1].copy()
    lowest = np.inf
    for _ in range(500):
        sim.step()
        lowest = min(lowest, float(sim.mvi.contact_gaps.min()))
    assert lowest >= -1e-12
    assert np.abs(world_poses(sim)['board'][1] - start).max() <= 1e-9
    forces = sim.contact_forces()
    R = world_poses(sim)['board'][0]
    on_board = sum(R @ g for other, g in zip(forces.others, forces.other_forces)
                   if other == 'board') + sum(
        R @ f for frame, f in zip(forces.frames, forces.forces) if frame == 'board')
    assert np.abs(on_board - (0.0, 0.0, 2.0 * G)).max() <= 1e-9


def test_body_contacts_are_between_robots_and_objects_and_within_one_robot_by_choice():
    """``body_contacts``: the shipped quadruped alone (its root is its trunk) gets none
    without ``self_collision``; the same quadruped in a world file beside a box gets its
    feet, trunk and thigh corners against the box and the box's corners against its boxes
    and spheres; by default nothing between its own links, with ``self_collision: true``
    its own links touch except adjacent ones (a leg's hip and thigh, thigh and calf)."""
    from ros_vi.resources import shipped_model
    from ros_vi.urdf import body_contacts, import_urdf_file
    system = import_urdf_file(shipped_model('quadruped'), floating_base=True)
    assert body_contacts(system, 0.8) == []
    world = '''
ground: {height: 0.0, friction: 0.8}
robots:
  - {name: dog, urdf: %r, floating: true, pose: {xyz: [0, 0, 0.5]}}
objects:
  - {name: crate, shape: {box: [0.2, 0.2, 0.2]}, mass: 1.0, pose: {xyz: [1.0, 0, 0.1]}}
''' % shipped_model('quadruped')
    sim = Simulation.from_world(world, rate=500.0)
    pairs = [c for c in sim.system.contacts if c.plane_frame is not None]
    assert pairs
    for c in pairs:
        assert (c.frame.name == 'crate') != (c.plane_frame.name == 'crate'), c.name
    sim = Simulation.from_world(world + 'self_collision: true\n', rate=500.0)
    own = {frozenset((c.frame.name, c.plane_frame.name)) for c in sim.system.contacts
           if c.plane_frame is not None and 'crate' not in (c.frame.name, c.plane_frame.name)}
    assert frozenset(('dog/FL_calf', 'dog/FR_calf')) in own
    assert frozenset(('dog/trunk', 'dog/FL_calf')) in own
    for leg in ('FL', 'FR', 'RL', 'RR'):
        # adjacent bodies (a foot is welded to its calf: one body)
        for a, b in (('trunk', leg + '_hip'), (leg + '_hip', leg + '_thigh'),
                     (leg + '_thigh', leg + '_calf'), (leg + '_thigh', leg + '_foot'),
                     (leg + '_calf', leg + '_foot')):
            assert frozenset(('dog/' + a, 'dog/' + b)) not in own
