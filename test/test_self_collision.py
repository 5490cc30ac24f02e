"""Self-collision: the links of one robot touch one another (ros_vi.urdf.body_contacts with
self_collision; with a contact ground and self_collision in setup_robot, world files, the
node and the CLI), and the broad phase of the step.

The closed form: a pendulum whose tip sphere (radius r, at L from its pivot, the pivot H
above a fixed box's top) swings down onto the box, which is the robot's own base: it stops
where the sphere meets the top, sin(theta) = (H - r) / L below the horizontal, and stays.
"""
import math
import os

import numpy as np
import pytest

from ros_vi.mechanics.contact import ContactSet
from ros_vi.simulation import Simulation, setup_robot
from ros_vi.simulation.world import load_world
from ros_vi.urdf import body_contacts, disabled_collisions, import_urdf

L, R, H, TOP = 0.4, 0.05, 0.25, 0.05     # arm, tip radius, pivot above the top, top height
THETA = math.asin((H - R) / L)           # where the tip meets the top: 30 degrees
WORLDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'worlds')

ROBOT = """<robot name="tapper">
  <link name="base">
    <inertial><mass value="5"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><geometry><box size="1 1 0.1"/></geometry></collision>
  </link>
  <joint name="yaw" type="revolute">
    <parent link="base"/><child link="post"/><origin xyz="0 0 %(pivot)g"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="10"/>
  </joint>
  <link name="post">
    <inertial><mass value="0.1"/>
      <inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="pitch" type="revolute">
    <parent link="post"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="%(L)g 0 0"/><mass value="1"/>
      <inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="%(L)g 0 0"/><geometry><sphere radius="%(R)g"/></geometry>
    </collision>
  </link>
  %(extra)s
</robot>"""


def tapper(extra=''):
    return ROBOT % dict(pivot=TOP + H, L=L, R=R, extra=extra)


def pitch(sim):
    return sim.state().positions[sim.state().joint_names.index('pitch')]


def test_the_pairs_left_out():
    """Links of one body and of adjacent bodies, <disable_collisions> pairs and pairs in
    collision at the start are left out; the rest of one robot's pairs touch."""
    system = import_urdf(tapper())
    added = body_contacts(system, self_collision=True)
    pairs = {frozenset((c.frame.name, c.plane_frame.name)) for c in added}
    # base-post and post-arm are adjacent; base-arm is not
    assert pairs == {frozenset(('base', 'arm'))}
    # the arm's sphere on the box, and the box's 8 corners on the sphere
    assert len(added) == 9
    assert body_contacts(import_urdf(tapper()), self_collision=False) == []
    off = '<disable_collisions link1="arm" link2="base" reason="User"/>'
    assert disabled_collisions(tapper(off)) == {frozenset(('arm', 'base'))}
    assert body_contacts(import_urdf(tapper(off)), self_collision=True) == []
    # the arm pointing down into the box at the start: in collision there, left out
    system = import_urdf(tapper())
    q = system.q.copy()
    q[system.get_config('pitch').index] = 1.5
    assert body_contacts(system, self_collision=True, q=q) == []
    assert not system.contacts


def test_a_fixed_body_welded_by_a_fixed_joint_is_one_body():
    """A link on a fixed joint belongs to its parent's body: adjacent to that body's
    neighbours."""
    weld = ('<joint name="weld" type="fixed"><parent link="arm"/><child link="tip"/>'
            '<origin xyz="%g 0 0"/></joint><link name="tip"><collision><geometry>'
            '<box size="0.02 0.02 0.02"/></geometry></collision></link>' % L)
    system = import_urdf(tapper(weld))
    pairs = {frozenset((c.frame.name, c.plane_frame.name))
             for c in body_contacts(system, self_collision=True)}
    assert pairs == {frozenset(('base', 'arm')), frozenset(('base', 'tip'))}


def test_the_pendulum_stops_on_its_own_base():
    """Released horizontal, the arm swings down and its tip stops on the base's top at
    the closed-form angle; it stays there, never passing into the box; without
    self-collision it swings through."""
    setup = setup_robot(tapper(), ground=(-1.0, 0.5), self_collision=True)
    assert {c.plane_frame.name for c in setup.system.contacts
            if c.plane_frame is not None} == {'base', 'arm'}
    sim = Simulation.from_setup(setup, 1.0 / 500.0)
    set_ = ContactSet(sim.system, [c for c in sim.system.contacts if c.plane_frame])
    angles, gaps = [], []
    for _ in range(1000):                    # 2 s
        sim.tick()
        angles.append(pitch(sim))
        set_.select(sim.mvi.q1)
        gaps.append(set_.gaps(sim.mvi.q2).min())
    angles = np.array(angles)
    assert min(gaps) > -1e-9
    assert angles.max() <= THETA + 1e-9
    # at rest on the top from 1 s on, at the closed form's angle (the tip's height)
    assert np.abs(angles[500:] - THETA).max() < 1e-9
    assert abs(sim.state().velocities[sim.state().joint_names.index('pitch')]) < 1e-9
    forces = sim.contact_forces()
    on_arm = sum(f[2] for name, frame, f in zip(forces.names, forces.frames, forces.forces)
                 if frame == 'arm')
    assert np.linalg.norm(on_arm) > 0.0
    # the gravity torque about the pivot, m g L cos(theta), is held by the contact
    wrench = dict((frame, (f, m)) for frame, f, m in forces.wrenches())
    f_arm, m_arm = wrench['arm']
    assert abs(abs(m_arm[1]) - 9.81 * L * math.cos(THETA)) < 1e-6

    free = Simulation.from_setup(setup_robot(tapper(), ground=(-1.0, 0.5)), 1.0 / 500.0)
    for _ in range(200):
        free.tick()
    assert pitch(free) > THETA + 0.1


def test_the_broad_phase_changes_nothing():
    """A quadruped standing on its world file with self-collision: the same trajectory
    with every contact evaluated (WAKE_GAP infinite) as with the broad phase; most
    contacts are dormant."""
    from ros_vi.integrators import newton
    from ros_vi.integrators import general_step
    runs = []
    for wake in (newton.WAKE_GAP, np.inf):
        general_step.WAKE_GAP = wake
        try:
            with open(os.path.join(WORLDS, 'quadruped_stand.yaml')) as fh:
                text = fh.read().replace('urdf: ../urdf/', 'urdf: %s/../urdf/' % WORLDS)
            sim = Simulation.from_world(text + '\nself_collision: true\n', rate=500.0)
            state = sim.state()
            start = dict(zip(state.joint_names, state.positions))
            sim.set_commands({j: start[j] for j in sim.actuated_joint_names},
                             interface='position')
            for _ in range(50):
                sim.tick()
            runs.append((sim.mvi.q2.copy(), sim.mvi._general.awake.shape[0],
                         len(sim.system.contacts)))
        finally:
            general_step.WAKE_GAP = newton.WAKE_GAP
    (q_broad, awake, k), (q_all, awake_all, _) = runs
    assert awake_all == k
    assert awake < k / 10
    np.testing.assert_allclose(q_broad, q_all, rtol=0, atol=1e-12)


def test_world_file_switch(tmp_path):
    path = tmp_path / 'w.yaml'
    path.write_text('ground: {friction: 0.5}\n')
    assert load_world(str(path)).setup_options()['self_collision'] is False
    path.write_text('ground: {friction: 0.5}\nself_collision: true\n')
    assert load_world(str(path)).setup_options()['self_collision'] is True
    path.write_text('ground: {friction: 0.5}\nself_collision: 3\n')
    with pytest.raises(Exception, match='self_collision must be true or false'):
        load_world(str(path))
