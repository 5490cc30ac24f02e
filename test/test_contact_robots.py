"""Robots in contact: the shipped quadruped (worlds/quadruped_stand.yaml) stands on its
four sphere feet under position drives, and the compiled contact set agrees with the
contacts' own geometry."""
import os
import sys

import numpy as np

from ros_vi.mechanics.contact import ContactSet, contact_kinematics
from ros_vi.simulation import Simulation
from test_contact import world_wrench

RATE = 500.0
WORLD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'worlds',
                     'quadruped_stand.yaml')


def standing_quadruped():
    sim = Simulation.from_world(WORLD, rate=RATE)
    state = sim.state()
    start = dict(zip(state.joint_names, state.positions))
    # the drives hold the pose the world file starts it in
    sim.set_commands({name: start[name] for name in sim.actuated_joint_names},
                     interface='position')
    return sim


def test_the_quadruped_stands_on_its_feet_for_ten_seconds():
    """Dropped 10 µm onto its feet, it settles on its drives' compliance within a second
    and then stands: over the next 9 s its base moves less than 2e-5 m, and not at all
    (1e-9 m) over the last 5 s; no foot ever passes the ground, the four feet stick and
    nothing else touches."""
    sim = standing_quadruped()
    system = sim.system
    feet = [m for m, c in enumerate(system.contacts) if '_foot_ground_' in c.name]
    assert len(feet) == 4
    base = []
    lowest = np.inf
    every = ContactSet(system)
    for k in range(int(10 * RATE)):
        result = sim.tick()
        assert result.ok, result.error
        base.append(sim.free_bodies()['dog/trunk'].pose[:3, 3].copy())
        every.select(sim.mvi.q1)        # the faces the step held
        lowest = min(lowest, every.gaps(sim.mvi.q2).min())
    base = np.array(base)
    assert lowest >= -1e-12
    modes = sim.mvi.contact_modes
    assert [modes[m] for m in feet] == ['stick'] * 4
    assert sum(mode != 'open' for mode in modes) == 4
    settled = base[int(RATE):]
    assert np.abs(settled - settled[0]).max() <= 2e-5
    last = base[int(5 * RATE):]
    assert np.abs(last - last[0]).max() <= 1e-9
    # it carries its weight on its feet: the normal impulses sum to m g dt
    mass = sum(f.mass for f in system.frames)
    gamma = sim.mvi.contact_impulses[feet, 0].sum()
    dt = sim.mvi.t2 - sim.mvi.t1
    assert abs(gamma - mass * 9.81 * dt) <= 1e-9 * mass * 9.81 * dt
    # as forces: the ground holds its weight up, with no moment about its centre of mass,
    # and only the feet feel it
    forces = sim.contact_forces()
    total, moment = world_wrench(sim, forces)
    weight = mass * 9.81
    assert np.allclose(total, [0.0, 0.0, weight], rtol=0, atol=1e-9 * weight)
    assert np.abs(moment).max() <= 1e-9 * weight
    loaded = [frame for frame, force, _ in forces.wrenches() if force.any()]
    assert loaded == ['dog/%s_foot' % leg for leg in ('FL', 'FR', 'RL', 'RR')]


def test_a_contact_set_evaluates_every_contact_as_the_contacts_say():
    """The stacked evaluation the step uses (one pass over all contacts of the
    quadruped: its 108 with the ground: feet, the trunk's and thighs' box corners, the
    hips' and calves' cylinder rims and rim points) against each contact evaluated on its
    own, at a random configuration."""
    sim = standing_quadruped()
    system = sim.system
    contacts = ContactSet(system)
    q = np.random.default_rng(2).normal(size=system.nQ)
    contacts.select(q)                  # the faces and tangent planes at q
    gap, normal, slip = contacts.kinematics(q)
    assert len(contacts) == 108
    for m, contact in enumerate(system.contacts):
        g, n, t = contact_kinematics(system, q, [contact])
        assert abs(gap[m] - g[0]) <= 1e-15
        assert np.abs(normal[m] - n[0]).max() <= 1e-15
        assert np.abs(slip[m] - t[0]).max() <= 1e-15


def test_the_quadruped_trots_in_place_on_an_open_loop_gait(capsys):
    """examples/quadruped_trot.py, 3 s: every tick's contact solve finds its root (feet
    touching down, sticking, sliding to a stop and lifting off), each foot touches down
    again and again and is on the ground a third to a half of the time, and the trunk
    stays up (within 3 cm of its standing height)."""
    sys.path.insert(0, os.path.join(os.path.dirname(WORLD), '..', 'examples'))
    from quadruped_trot import main
    result = main(['--seconds', '3'])
    assert '0 failed ticks' in capsys.readouterr().out
    assert result['failed'] == 0
    touching = result['touching']
    assert np.all(np.sum(np.diff(touching.astype(int), axis=0) > 0, axis=0) >= 5)
    assert np.all((0.2 <= touching.mean(axis=0)) & (touching.mean(axis=0) <= 0.7))
    assert np.abs(result['trunk'][:, 2]).max() <= 0.03
