"""Contact with friction inside the VI step (ros_vi.contact): a ball dropped on the ground
comes to rest on it without penetrating or chattering, a block on a ramp sticks or slides
as Coulomb's law says (closed forms: acceleration g (sin a - mu cos a), the threshold
angle atan mu), and sliding loses exactly the friction's work."""
import os
import sys

import numpy as np
import pytest

import ros_vi as trep
from ros_vi.contact import SphereOnPlane
from ros_vi.mechanics import FreeJoint

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples'))
from box_on_ramp import box_on_ramp, main as ramp_example  # noqa: E402

G = 9.81
DT = 1e-3


def ball(height=0.5, radius=0.1, mass=1.0, friction=0.5):
    """A solid ball of ``radius`` on a free joint, its centre ``height`` above the ground
    z = 0."""
    s = trep.System()
    body = FreeJoint(s.world_frame, 'ball')
    body.body.set_inertia(mass, 0.4 * mass * radius ** 2 * np.eye(3))
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    SphereOnPlane(s, body.body, radius=radius, friction=friction, name='ball_ground')
    mvi = trep.MidpointVI(s, min_iterations=1)
    q0 = np.zeros(6)
    q0[2] = height
    mvi.initialize_from_state(0.0, q0, np.zeros(6))
    return s, mvi


def block_on_ramp(angle, friction, mass=2.0):
    """A block (its contact point at its centre of mass: it slides without tipping) at rest
    on a plane through the origin inclined by ``angle`` about y (downhill along +x)."""
    s = trep.System()
    body = FreeJoint(s.world_frame, 'block')
    body.body.set_inertia(mass, np.diag([0.1, 0.2, 0.3]))
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    normal = (np.sin(angle), 0.0, np.cos(angle))
    SphereOnPlane(s, body.body, plane_normal=normal, friction=friction, name='block_ramp')
    mvi = trep.MidpointVI(s, min_iterations=1)
    mvi.initialize_from_state(0.0, np.zeros(6), np.zeros(6))
    return s, mvi


def energy(s, mvi):
    mvi.set_midpoint()
    return s.total_energy()


def test_a_dropped_ball_comes_to_rest_on_the_ground():
    s, mvi = ball()
    steps = 1500
    z, modes, E = [], [], []
    for k in range(1, steps + 1):
        mvi.step(k * DT)
        z.append(mvi.q2[2])
        modes.append(mvi.contact_modes[0])
        E.append(energy(s, mvi))
    z = np.array(z)
    # never below the ground, not even by rounding of the gap's solve
    assert (z - 0.1).min() >= -1e-12
    # free fall from 0.4 m: the impact at sqrt(2 h / g) (to a step)
    hit = modes.index('stick')
    assert abs((hit + 1) * DT - np.sqrt(2 * 0.4 / G)) <= 1.5 * DT
    # inelastic: it stays down, at rest, with no chatter (contact held every later step)
    assert all(m == 'stick' for m in modes[hit:])
    settled = z[hit + 10:]
    assert np.abs(settled - 0.1).max() <= 1e-12
    assert np.abs(np.diff(settled)).max() / DT <= 1e-9
    # resting: the normal impulse carries the weight, dt m g, and no friction
    gamma = mvi.contact_impulses[0]
    assert abs(gamma[0] - DT * G) <= 1e-12 and np.abs(gamma[1:]).max() <= 1e-15
    # the energy never rises through the impact
    assert np.all(np.diff(E) <= 1e-9)


@pytest.mark.parametrize('e', [0.5, 1.0])
def test_a_ball_bounces_with_its_coefficient_of_restitution(e):
    """Dropped from 0.5 m (its centre 0.4 m above its resting height) with restitution e,
    the ball strikes the ground once, never passes it, and leaves at e times the speed
    it came in with (Newton's law, to rounding); it rises to e^2 0.4 m less the first-order
    error of striking at a step's end (< 0.5 % at dt = 1 ms), and its energy never
    rises (e = 1 included)."""
    s, mvi = ball(height=0.5, friction=0.5)
    s.contacts[0].restitution = e
    z, p, E = [], [], []
    for k in range(1, 1201):
        mvi.step(k * DT)
        z.append(mvi.q2[2])
        p.append(mvi.p2[2])
        E.append(energy(s, mvi))
    z, p = np.array(z), np.array(p)
    assert z.min() >= 0.1 - 1e-12
    hit = int(np.argmax(p > 0))                      # the step that struck
    assert np.all(p[:hit] < 0) and z[hit] == pytest.approx(0.1, abs=1e-12)
    # it left with -e times the momentum it had at the striking step's start (m = 1)
    assert abs(p[hit] + e * p[hit - 1]) <= 1e-12 * abs(p[hit])
    rise = z[hit:].max() - 0.1
    assert 0.995 * e ** 2 * 0.4 <= rise <= e ** 2 * 0.4
    assert max(E) <= E[0] + 1e-9


def test_a_world_grounds_restitution_bounces_its_objects():
    """``ground: {restitution: e}`` in a world file: every ground contact has it, and a
    ball dropped from 0.5 m bounces back up to about e^2 of its fall (0.4 m)."""
    from ros_vi.simulation import Simulation
    sim = Simulation.from_world("""
ground: {height: 0.0, friction: 0.5, restitution: 0.7}
objects:
  - {name: ball, shape: {sphere: 0.1}, mass: 1.0, pose: {xyz: [0, 0, 0.5]}}
""", rate=1000.0)
    assert [c.restitution for c in sim.system.contacts] == [0.7]
    z = []
    for _ in range(1000):
        sim.tick()
        z.append(sim.free_bodies()['ball'].pose[2, 3])
    z = np.array(z)                    # the ball's height above where it started
    assert z.min() >= -0.4 - 1e-12
    bottom = int(np.argmax(z <= -0.4 + 1e-9))        # the first strike
    rise = z[bottom:].max() + 0.4
    assert 0.995 * 0.49 * 0.4 <= rise <= 0.49 * 0.4


@pytest.mark.parametrize('e', [0.0, 0.8])
def test_restitution_is_checked_and_a_rebound_steps_derivatives_match_differences(e):
    """A coefficient outside [0, 1] is refused naming the contact.  The step in which the
    ball strikes moving sideways (friction grips it in the impact and starts it turning)
    ends with its rebound: its derivatives, through the rebound impulse, agree with
    central differences of the step itself, re-run from starts moved in position (the
    free joint's chart stays where it is) and in momentum, on the translations' rows;
    e = 0 is the inelastic step."""
    s, mvi = ball(height=0.1005, friction=0.5)
    with pytest.raises(ValueError, match="'ball_ground': restitution must be in \\[0, 1\\]"):
        s.contacts[0].restitution = 1.5
    s.contacts[0].restitution = e
    start = [0.0, 0.0, 0.1005, 0.0, 0.0, 0.0]
    mvi.initialize_from_state(0.0, start, [0.3, 0.0, -1.0, 0.0, 0.0, 0.0])
    k = 0
    while mvi.contact_modes == ['open']:
        k += 1
        mvi.step(k * DT)
    assert (mvi.p2[2] > 0) == (e > 0)                          # it bounced, or not
    t1, t2, q1, p1 = mvi.t1, mvi.t2, mvi.q1.copy(), mvi.p1.copy()
    exact = {'q1': (mvi.q2_dq1(), mvi.p2_dq1()), 'p1': (mvi.q2_dp1(), mvi.p2_dp1())}

    def end(q, p):
        _, other = ball(height=0.1005, friction=0.5)
        other.system.contacts[0].restitution = e
        other.initialize_from_state(t1, q, p)
        other.step(t2)
        return other.q2.copy(), other.p2.copy()
    h = 1e-7
    for wrt, columns in (('q1', range(3)), ('p1', range(6))):
        for i in columns:
            step = np.zeros(6)
            step[i] = h
            plus = end(q1 + step, p1) if wrt == 'q1' else end(q1, p1 + step)
            minus = end(q1 - step, p1) if wrt == 'q1' else end(q1, p1 - step)
            # the translations' rows (the angles' are the moving chart's, compared in
            # test_free_body_step_derivatives_through_a_contact_match_finite_differences)
            for name, exact_column, a, b in zip(('q2', 'p2'), exact[wrt], plus, minus):
                np.testing.assert_allclose(exact_column[:3, i], (a - b)[:3] / (2 * h),
                                           rtol=1e-6, atol=1e-6,
                                           err_msg='d%s/d%s[%d]' % (name, wrt, i))


@pytest.mark.parametrize('angle, steps', [(0.3, 10000), (0.6, 2000)])
def test_a_block_on_a_ramp_sticks_below_and_slides_above_the_friction_angle(angle, steps):
    """Sticking: not a nanometre in 10 s.  Sliding: the closed-form travel and the
    friction's work, both to rounding."""
    mu = 0.5                                   # atan(0.5) = 0.4636 rad
    s, mvi = block_on_ramp(angle, mu)
    downhill = np.array([np.cos(angle), 0.0, -np.sin(angle)])
    travel = []
    for k in range(1, steps + 1):
        mvi.step(k * DT)
        travel.append(mvi.q2[:3] @ downhill)
    travel = np.array(travel)
    normal = np.array([np.sin(angle), 0.0, np.cos(angle)])
    assert np.abs(mvi.q2[:3] @ normal) <= 1e-12          # on the plane
    if np.tan(angle) < mu:
        assert mvi.contact_modes == ['stick']
        assert np.abs(mvi.q2[:3]).max() <= 1e-9
    else:
        assert mvi.contact_modes == ['slide']
        a = G * (np.sin(angle) - mu * np.cos(angle))
        t = DT * np.arange(1, steps + 1)
        assert np.abs(travel - 0.5 * a * t ** 2).max() <= 1e-6 * 0.5 * a * t[-1] ** 2
        # the energy lost is the friction's work, mu m g cos(angle) times the travel (the
        # block translates: T = |p|^2 / 2m with p its momentum at the step's end)
        p = mvi.p2_end[:3]
        lost = -(p @ p / (2 * 2.0) + 2.0 * G * mvi.q2[2])
        work = mu * 2.0 * G * np.cos(angle) * travel[-1]
        assert abs(lost - work) <= 1e-6 * work


@pytest.mark.parametrize('angle', [0.3, 0.6])
def test_a_box_on_four_corners_sticks_or_slides_flat(angle):
    mu, steps = 0.5, 1500
    body, mvi, q0 = box_on_ramp(angle, mu)
    start = body.pose_at(q0)[:3, :3]
    downhill = np.array([np.cos(angle), 0.0, -np.sin(angle)])
    for k in range(1, steps + 1):
        mvi.step(k * DT)
    travel = (mvi.q2[:3] - q0[:3]) @ downhill
    # flat: it neither tips nor turns (the free joint's angles are chart coordinates: the
    # attitude itself is compared)
    assert np.abs(body.pose_at(mvi.q2)[:3, :3] - start).max() <= 1e-9
    gamma = mvi.contact_impulses[:, 0]
    assert np.all(gamma > 0)                                   # on all four corners
    # together they carry the weight's normal part
    assert abs(gamma.sum() - DT * 2.0 * G * np.cos(angle)) <= 1e-9 * gamma.sum()
    if np.tan(angle) < mu:
        assert mvi.contact_modes == ['stick'] * 4
        assert np.abs(mvi.q2[:3] - q0[:3]).max() <= 1e-9
    else:
        assert mvi.contact_modes == ['slide'] * 4
        a = G * (np.sin(angle) - mu * np.cos(angle))
        assert abs(travel - 0.5 * a * (steps * DT) ** 2) <= 1e-9 * travel
        beta = np.linalg.norm(mvi.contact_impulses[:, 1:], axis=1)
        assert np.abs(beta - mu * gamma).max() <= 1e-12 * gamma.max()   # on the cone


def test_the_box_on_a_ramp_example_sticks_and_slides_by_the_closed_form(capsys):
    """examples/box_on_ramp.py: 0.1 and 0.01 rad below the friction angle the box stays
    (1e-9 m over 1.5 s: its four corners stick, those the friction loads most at the cone's
    edge), above it it slides the closed-form distance (1e-9 relative)."""
    rows = ramp_example([])
    assert 'friction angle atan(mu) = 0.463648 rad' in capsys.readouterr().out
    for angle, modes, moved, expected in rows:
        if np.tan(angle) < 0.5:
            assert modes == ['stick'] * 4 and abs(moved) <= 1e-9
        else:
            assert modes == ['slide'] * 4 and abs(moved - expected) <= 1e-9 * expected


def test_the_stick_slip_threshold_is_the_friction_angle():
    mu = 0.4

    def slides(angle):
        _, mvi = block_on_ramp(angle, mu)
        mvi.step(DT)
        return mvi.contact_modes == ['slide']

    lo, hi = 0.2, 0.6
    assert not slides(lo) and slides(hi)
    while hi - lo > 1e-8:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if slides(mid) else (mid, hi)
    assert abs(0.5 * (lo + hi) - np.arctan(mu)) <= 1e-6


def test_a_start_past_the_plane_is_refused_with_the_contact_named():
    s, mvi = ball()
    with pytest.raises(ValueError, match="q1 puts contact 'ball_ground' 0.05 m past its plane"):
        mvi.initialize_from_state(0.0, [0, 0, 0.05, 0, 0, 0], np.zeros(6))
    with pytest.raises(ValueError, match='friction must be finite and >= 0'):
        SphereOnPlane(s, 'ball', friction=-1.0)


WORLD_ON_GROUND = """
ground: {height: 0.0, friction: 0.8}
objects:
  - name: ball
    shape: {sphere: 0.1}
    mass: 1.0
    pose: {xyz: [0, 0, 0.5]}
  - name: crate
    shape: {box: [0.3, 0.2, 0.1]}
    mass: 2.0
    pose: {xyz: [1.0, 0, 0.3]}
    twist: {linear: [0.5, 0, 0]}
"""


def test_a_world_ground_with_friction_holds_the_objects():
    """A world file's ground with ``friction`` is a contact surface for the objects' (and
    robots') collision spheres and boxes: a dropped ball and a crate thrown sideways land,
    the crate slides to a stop, and both then rest on the ground (no penetration, at rest)."""
    from ros_vi.simulation import Simulation
    sim = Simulation.from_world(WORLD_ON_GROUND, rate=1000.0)
    names = [c.name for c in sim.system.contacts]
    # a sphere and 8 corners on the ground, the ball on the crate's box and its 8 corners
    # on the ball
    assert len(names) == 18 and names[0] == 'ball_ground_0' and names[9] == 'ball_on_crate_0'
    assert names[10:] == ['crate_on_ball_%d' % n for n in range(1, 9)]
    frames = [sim.system.get_frame(n) for n in ('ball', 'crate')]

    def world_positions():
        """The two bodies' origins in the world (the free joints' configs are offsets from
        the world file's poses)."""
        with sim.system.evaluate_at(sim.output_data()):
            return [f.p()[:3].copy() for f in frames]
    lowest = np.inf
    for _ in range(2500):
        sim.tick()
        ball, crate = world_positions()
        lowest = min(lowest, ball[2] - 0.1, crate[2] - 0.05)
    assert lowest >= -1e-12
    assert abs(ball[2] - 0.1) <= 1e-12 and abs(crate[2] - 0.05) <= 1e-12
    for body in sim.state().bodies:
        assert np.abs(body.linear).max() <= 1e-9 and np.abs(body.angular).max() <= 1e-9
    # the crate flew 0.5 m/s times its fall time sqrt(2 * 0.25 / g) sideways, and its
    # landing stopped it: the inelastic impact's normal impulse (2 kg at 2.2 m/s) times mu
    # exceeds its sideways momentum, so friction takes it within the landing step
    flight = 0.5 * np.sqrt(2 * 0.25 / G)
    assert abs(crate[0] - (1.0 + flight)) <= 1e-3


def world_wrench(sim, forces):
    """The contacts' total force (3,) [N] and their moment (3,) [N m] about the system's
    centre of mass (every frame's mass sits at its origin), both in the world, from
    :meth:`Simulation.contact_forces` (each force in its frame's axes)."""
    from ros_vi.mechanics import dynamics
    R, P, _ = dynamics.kinematics(sim.system.model, sim.output_data())
    masses = np.array([f.mass for f in sim.system.frames])
    about = masses @ P / masses.sum()
    index = {f.name: i for i, f in enumerate(sim.system.frames)}
    total, moment = np.zeros(3), np.zeros(3)
    for frame, point, force in zip(forces.frames, forces.points, forces.forces):
        i = index[frame]
        f, x = R[i] @ force, R[i] @ point + P[i]
        total += f
        moment += np.cross(x - about, f)
    return total, moment


def test_contact_forces_of_a_sliding_crate_are_its_weight_and_coulomb_friction():
    """A crate set sliding at 1 m/s on a ground with mu = 0.3: while it slides, its four
    bottom corners slide, the ground pushes up with m g and back with mu m g (against the
    motion), and the contact forces have no moment about its centre of mass (it slides flat;
    the front corners carry more).  The per-frame wrench is the same total."""
    from ros_vi.simulation import Simulation
    sim = Simulation.from_world("""
ground: {height: 0.0, friction: 0.3}
objects:
  - name: crate
    shape: {box: [0.3, 0.2, 0.1]}
    mass: 2.0
    pose: {xyz: [0, 0, 0.05]}
    twist: {linear: [1.0, 0, 0]}
""", rate=1000.0)
    assert sim.contact_forces().forces.tolist() == [[0.0] * 3] * 8      # before a step
    sim.step(50)
    forces = sim.contact_forces()
    assert forces.frames == ['crate'] * 8
    assert sorted(forces.modes) == ['open'] * 4 + ['slide'] * 4
    crate = sim.free_bodies()['crate']
    # Coulomb's deceleration mu g, and no pitching
    assert abs(crate.linear[0] - (1.0 - 0.3 * G * 0.05)) <= 1e-9
    assert np.abs(crate.angular).max() <= 1e-9
    weight = 2.0 * G
    total, moment = world_wrench(sim, forces)
    assert np.allclose(total, [-0.3 * weight, 0.0, weight], rtol=0, atol=1e-9 * weight)
    assert np.abs(moment).max() <= 1e-9 * weight
    bottom = forces.points[:, 2] < 0
    front = bottom & (forces.points[:, 0] > 0)
    assert forces.forces[front, 2].sum() > forces.forces[bottom & ~front, 2].sum()
    [(frame, force, torque)] = forces.wrenches()
    assert frame == 'crate'
    assert np.allclose(force, forces.forces.sum(axis=0), rtol=0, atol=1e-12)
    assert np.allclose(torque, np.cross(forces.points, forces.forces).sum(axis=0),
                       rtol=0, atol=1e-12)


PAD_URDF = """<robot name="pad"><link name="pad">
  <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0"
    iyz="0"/></inertial>
  <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <gazebo reference="pad"><mu1>%s</mu1><mu2>%s</mu2></gazebo></robot>"""


def test_surface_friction_meets_the_grounds_as_gazebo_combines_them():
    """A world object's ``friction`` and a robot link's Gazebo ``mu1``/``mu2`` are their
    surfaces' coefficients; a contact takes the smaller of its surface's and the ground's
    (a surface without one: the ground's).  A crate of mu 0.2 set sliding at 1 m/s on a
    ground of mu 0.8 slows at 0.2 g."""
    from ros_vi.simulation import Simulation
    sim = Simulation.from_world("""
ground: {height: 0.0, friction: 0.8}
robots:
  - {name: slick, urdf_text: '%s', floating: true, pose: {xyz: [2, 0, 0.05]}}
  - {name: grippy, urdf_text: '%s', floating: true, pose: {xyz: [3, 0, 0.05]}}
objects:
  - {name: crate, shape: {box: [0.3, 0.2, 0.1]}, mass: 2.0, pose: {xyz: [0, 0, 0.05]},
     twist: {linear: [1.0, 0, 0]}, friction: 0.2}
  - {name: ball, shape: {sphere: 0.1}, mass: 1.0, pose: {xyz: [1, 0, 0.1]}, friction: 1.5}
  - {name: plain, shape: {sphere: 0.1}, mass: 1.0, pose: {xyz: [-1, 0, 0.1]}}
""" % (PAD_URDF % (0.1, 0.1), PAD_URDF % (2, 2)), rate=1000.0)
    mu = {}
    for c in sim.system.contacts:
        if c.plane_frame is None:
            mu.setdefault(c.frame.name, set()).add(c.friction)
    assert mu == {'crate': {0.2}, 'ball': {0.8}, 'plain': {0.8}, 'slick/pad': {0.1},
                  'grippy/pad': {0.8}}
    # two bodies' contacts take the smaller of their surfaces' (the ground's for none)
    surface = {'crate': 0.2, 'ball': 1.5, 'plain': 0.8, 'slick/pad': 0.1, 'grippy/pad': 2.0}
    pairs = [c for c in sim.system.contacts if c.plane_frame is not None]
    # the four spheres (two pads, two balls) on the crate and on each other, and the
    # crate's corners on each sphere
    assert len(pairs) == 4 + 4 * 3 + 8 * 4
    for c in pairs:
        assert c.friction == min(surface[c.frame.name], surface[c.plane_frame.name])
    sim.step(100)
    crate = sim.free_bodies()['crate']
    assert abs(crate.linear[0] - (1.0 - 0.2 * G * 0.1)) <= 1e-9


def test_unequal_or_malformed_gazebo_friction_is_named():
    """mu1 and mu2 differ: the round cone takes the smaller, and a warning says so; a
    coefficient that is not a number >= 0 is an error naming the link."""
    from ros_vi.urdf import URDFError, URDFWarning, surface_friction
    with pytest.warns(URDFWarning, match=r'reference="pad".*mu1 0.9 and mu2 0.6.*\(0.6\)'):
        assert surface_friction(PAD_URDF % (0.9, 0.6)) == {'pad': 0.6}
    for bad in ('-1', 'grippy', 'nan'):
        with pytest.raises(URDFError, match=r'<gazebo reference="pad">: <mu1> must be a '
                                            r'friction coefficient >= 0'):
            surface_friction(PAD_URDF % (bad, 1))


# --------------------------------------------------------------------------- derivatives
def test_contact_hessians_match_finite_differences():
    """The contacts' second derivatives (exact, from the joints' twists) against central
    differences of their first: the shipped quadruped on a floating base with its feet,
    trunk and thigh corners and hip and calf cylinders on the ground, its base chart
    turned, at a random configuration."""
    from ros_vi.mechanics.contact import contact_hessians, contact_kinematics
    from ros_vi.mechanics.free import xyz_rotation
    from ros_vi.urdf import import_urdf_file
    from ros_vi.urdf.contacts import ground_contacts
    from ros_vi.resources import shipped_model
    s = import_urdf_file(shipped_model('quadruped'), floating_base=True)
    ground_contacts(s, height=-1.0, friction=0.5)
    rims = [m for m, c in enumerate(s.contacts) if c.rim is not None]
    spheres = [m for m in range(len(s.contacts)) if m not in rims]
    assert len(rims) == 16
    (joint,) = s.free_joints
    pose = np.eye(4)
    pose[:3, :3] = xyz_rotation(np.array([0.3, -0.4, 1.1]))
    joint.reference_frame.transform_value = pose
    q = np.random.default_rng(3).normal(size=s.nQ) * 0.5
    hess, dslip = contact_hessians(s, q)
    h = 1e-6
    for j in range(s.nQ):
        e = np.zeros(s.nQ)
        e[j] = h
        _, n_plus, t_plus = contact_kinematics(s, q + e)
        _, n_minus, t_minus = contact_kinematics(s, q - e)
        assert np.abs(hess[:, :, j] - (n_plus - n_minus) / (2 * h)).max() <= 1e-8
        assert np.abs(dslip[:, :, :, j] - (t_plus - t_minus) / (2 * h)).max() <= 1e-8
    # exact for spheres and points; differences of the exact Jacobians for the hip and
    # calf cylinders' rims
    assert np.abs(hess[spheres] - hess[spheres].transpose(0, 2, 1)).max() <= 1e-15
    assert np.abs(hess[rims] - hess[rims].transpose(0, 2, 1)).max() <= 1e-9
    assert np.abs(dslip).max() > 0.1


def arm_above_floor(friction, clearance=1e-4):
    """A planar two-link arm (joints about y, links 0.5 m, 1 kg at each tip, torques u1,
    u2) whose tip is ``clearance`` above a floor at its start configuration (0.6, -1.0)."""
    s = trep.System()
    link1 = trep.Frame(s.world_frame, trep.RY, 'j1', name='link1')
    elbow = trep.Frame(link1, trep.TZ, -0.5, mass=1.0, name='elbow')
    link2 = trep.Frame(elbow, trep.RY, 'j2', name='link2')
    tip = trep.Frame(link2, trep.TZ, -0.5, mass=1.0, name='tip')
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    trep.forces.ConfigForce(s, 'j1', 'u1')
    trep.forces.ConfigForce(s, 'j2', 'u2')
    q1 = np.array([0.6, -1.0])
    s.set_state(q1)
    floor = tip.p()[2] - clearance
    SphereOnPlane(s, tip, plane_point=(0.0, 0.0, floor), friction=friction, name='tip_floor')
    return s, q1


def _first(vi):
    """(dq2/dx, dp2/dx) of vi's step, x = (q1, p1, u1)."""
    return (np.hstack([vi.q2_dq1(), vi.q2_dp1(), vi.q2_du1()]),
            np.hstack([vi.p2_dq1(), vi.p2_dp1(), vi.p2_du1()]))


@pytest.mark.parametrize('friction, torque, mode', [(1.0, (0.0, 0.0), 'stick'),
                                                    (0.05, (3.0, -1.0), 'slide')])
def test_step_derivatives_through_a_contact_match_finite_differences(friction, torque, mode):
    """The arm's tip strikes the floor within the step and sticks (or slides): the step's
    first derivatives (implicit function theorem on the solved step with its contact's
    mode) against central differences of the step, and its second derivatives against
    central differences of the first (the mode is the same at every perturbed start)."""
    s, q1 = arm_above_floor(friction)
    p1, u1 = np.array([0.3, 0.5]), np.array(torque)
    vi = trep.MidpointVI(s, tolerance=1e-13)
    nq = s.nQ
    cuts = (nq, 2 * nq)

    def step_from(x):
        q, p, u = np.split(x, cuts)
        vi.initialize_from_state(0.0, q, p)
        vi.step(DT, u)
        assert vi.contact_modes == [mode]
        return vi
    x0 = np.concatenate([q1, p1, u1])
    step_from(x0)
    Dq, Dp = _first(vi)
    second_q = vi.q2_dq1dq1()                            # [q1_i, q1_j, q2]
    second_p = vi.p2_dq1dp1()                            # [q1_i, p1_j, p2]
    h = 1e-6
    for j in range(x0.size):
        e = np.zeros(x0.size)
        e[j] = h
        plus = step_from(x0 + e)
        q_plus, p_plus = plus.q2.copy(), plus.p2.copy()
        first_plus = _first(plus)
        minus = step_from(x0 - e)
        first_minus = _first(minus)
        assert np.abs(Dq[:, j] - (q_plus - minus.q2) / (2 * h)).max() <= 1e-8 * np.abs(Dq).max()
        assert np.abs(Dp[:, j] - (p_plus - minus.p2) / (2 * h)).max() <= 1e-8 * np.abs(Dp).max()
        if j < nq:
            dDq = (first_plus[0] - first_minus[0]) / (2 * h)
            dDp = (first_plus[1] - first_minus[1]) / (2 * h)
            assert np.abs(second_q[:, j, :] - dDq[:, :nq].T).max() <= 1e-7 * max(
                1.0, np.abs(second_q).max())
            assert np.abs(second_p[j, :, :] - dDp[:, nq:2 * nq].T).max() <= 1e-7 * max(
                1.0, np.abs(second_p).max())
    assert vi.contact_impulses[0][0] > 0.1          # a real impact, not a graze


@pytest.mark.parametrize('friction, velocity, mode', [(1.0, (0.2, 0.1, -0.5), 'stick'),
                                                      (0.1, (2.0, 0.5, -0.5), 'slide')])
def test_free_body_step_derivatives_through_a_contact_match_finite_differences(
        friction, velocity, mode):
    """A spinning ball (unequal inertia) strikes the ground within the step, its chart
    turned and its start off the chart's centre: first derivatives against central
    differences of the step (results in the nominal step's charts), second derivatives of
    the position against differences of the first."""
    from ros_vi.mechanics.free import xyz_rotation
    s = trep.System()
    joint = FreeJoint(s.world_frame, 'ball')
    joint.body.set_inertia(1.0, np.diag([0.004, 0.005, 0.006]))
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    SphereOnPlane(s, joint.body, radius=0.1, friction=friction, name='ball_ground')
    chart = np.eye(4)
    chart[:3, :3] = xyz_rotation(np.array([0.3, 0.4, -0.2]))

    def step_from(q, p):
        vi = trep.MidpointVI(s, tolerance=1e-13, min_iterations=2)
        joint.reference_frame.transform_value = chart
        vi.initialize_from_state(0.0, q, p)
        vi.step(DT)
        assert vi.contact_modes == [mode]
        return vi, vi.q2.copy(), vi.p2.copy(), joint.reference_attitude.copy()
    q1 = np.array([0.0, 0.0, 0.1 + 2e-4, 0.1, -0.05, 0.2])
    p1 = np.concatenate([velocity, (0.01, 0.002, 0.003)])
    vi, q2, p2, R2 = step_from(q1, p1)
    Dq = np.hstack([vi.q2_dq1(), vi.q2_dp1()])
    Dp = np.hstack([vi.p2_dq1(), vi.p2_dp1()])
    Zq, Zp = vi.q2_dq1dq1(), vi.p2_dq1dp1()
    x0 = np.concatenate([q1, p1])
    h = 1e-6
    for j in range(12):
        out = []
        for sign in (1.0, -1.0):
            x = x0.copy()
            x[j] += sign * h
            v, q, p, R = step_from(x[:6], x[6:])
            s.free_charts.express(R[None], R2[None], q, p)
            # (translation rows of the first derivatives: no chart touches them)
            out.append((q, p, v.q2_dq1()[:3], v.p2_dp1()[:3]))
        (qa, pa, Fa, Ga), (qb, pb, Fb, Gb) = out
        assert np.abs(Dq[:, j] - (qa - qb) / (2 * h)).max() <= 1e-8 * np.abs(Dq).max()
        assert np.abs(Dp[:, j] - (pa - pb) / (2 * h)).max() <= 1e-8 * np.abs(Dp).max()
        if j < 6:
            assert np.abs(Zq[:, j, :3] - ((Fa - Fb) / (2 * h)).T).max() <= 1e-7 * max(
                1.0, np.abs(Zq).max())
            assert np.abs(Zp[j, :, :3] - ((Ga - Gb) / (2 * h)).T).max() <= 1e-7 * max(
                1.0, np.abs(Zp).max())


def test_a_linearisation_through_a_contact_matches_finite_differences():
    """DSystem (the trajectory tools' discrete system) linearises a step whose tip strikes
    the floor and slides: fdx and fdu against central differences of f.  (Stuck, the
    two-link tip cannot move at all: fdu is 0 there.)"""
    from ros_vi.discopt import DSystem
    s, q1 = arm_above_floor(friction=0.05)
    vi = trep.MidpointVI(s, tolerance=1e-13)
    dsys = DSystem(vi, np.arange(0.0, 0.01, DT))
    X = dsys.build_state(Q=q1, p=np.array([0.3, 0.5]))
    U = np.array([3.0, -1.0])
    # (fdu is small, 1e-3: its differences need a longer step to rise above rounding)
    for name, delta, bound in (('check_fdx', 1e-6, 1e-8), ('check_fdu', 1e-4, 1e-6)):
        r = getattr(dsys, name)(X, U, 0, delta)
        assert r.exact_norm > 0.0
        assert r.error < bound * r.exact_norm, (name, r)
    assert vi.contact_modes == ['slide']
