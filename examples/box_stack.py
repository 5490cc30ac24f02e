"""A stack of five boxes stands still: corners on faces, exact friction cones, no creep.

worlds/stack.yaml: five boxes on the ground, each smaller, shifted and turned a little on
the one below, dropped from 10 um.  Each box's eight corners are held off the faces of
every other box (``ros_vi.contact.SphereOnBox``, chosen face by face at each step's start)
and off the ground, with Coulomb friction (mu = 0.8) in the midpoint VI step.  They land
within a step and then stand: the example reports how far each box moved after the first
0.5 s (it should be rounding), the smallest gap, and the force each box bears from the one
above against the closed form, the weight of the boxes above it.

Run: python examples/box_stack.py [--seconds 60] [--rate 100]
"""
import argparse
import itertools
import os

import numpy as np

from ros_vi.mechanics import dynamics
from ros_vi.resources import share_directory
from ros_vi.simulation import Simulation

SETTLE = 0.5          # s: the landing (10 um falls), after which nothing should move


def stack_world():
    """Path of the shipped worlds/stack.yaml."""
    return os.path.join(share_directory(), 'worlds', 'stack.yaml')


def world_poses(sim):
    """{frame name: (R (3, 3), p (3,))}: every frame's world pose at the published state."""
    R, P, _ = dynamics.kinematics(sim.system.model, sim.output_data())
    return {f.name: (R[i], P[i]) for i, f in enumerate(sim.system.frames)}


def corners(sim):
    """{box: (8, 3) world positions [m] of its corners} at the published state."""
    poses = world_poses(sim)
    out = {}
    for obj in sim.world.objects:
        R, p = poses[obj.name]
        local = 0.5 * np.array(obj.size) * np.array(list(itertools.product((-1, 1), repeat=3)))
        out[obj.name] = local @ R.T + p
    return out


def support_forces(sim):
    """[(lower, upper, force (3,) [N, world])]: the force each box takes from the box
    under it (the sum of the contacts between the two: the upper's corners on the lower's
    faces push the upper, the lower's corners on the upper's faces push it back)."""
    forces = sim.contact_forces()
    poses = world_poses(sim)
    names = [o.name for o in sim.world.objects]
    out = []
    for lower, upper in zip(names, names[1:]):
        total = np.zeros(3)
        for frame, other, f, g in zip(forces.frames, forces.others, forces.forces,
                                      forces.other_forces):
            if (frame, other) == (upper, lower):
                total += poses[upper][0] @ f
            elif (frame, other) == (lower, upper):
                total += poses[upper][0] @ g
        out.append((lower, upper, total))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=60.0)
    parser.add_argument('--rate', type=float, default=100.0, help='VI steps per second')
    args = parser.parse_args(argv)
    sim = Simulation.from_world(stack_world(), rate=args.rate)
    print('%d boxes, %d contacts, %g s at %g Hz'
          % (len(sim.world.objects), len(sim.system.contacts), args.seconds, args.rate))
    settle = int(round(SETTLE * args.rate))
    steps = int(round(args.seconds * args.rate))
    start, lowest, failed = None, np.inf, 0
    for k in range(1, steps + 1):
        failed += not sim.step()[-1].ok
        lowest = min(lowest, float(sim.mvi.contact_gaps.min()))
        if k == settle:
            start = corners(sim)
    end = corners(sim)
    drift = {name: float(np.linalg.norm(end[name] - start[name], axis=1).max())
             for name in end}
    print('after the first %g s, the corners moved at most: %s (m)'
          % (SETTLE, ', '.join('%s %.1e' % item for item in drift.items())))
    print('smallest gap at a step end: %.1e m; failed steps: %d' % (lowest, failed))
    masses = {o.name: o.mass for o in sim.world.objects}
    names = list(masses)
    g = -sim.world.gravity[2]
    print('%6s %6s %14s %14s %10s' % ('lower', 'upper', 'support [N]', 'weight above',
                                      'sideways'))
    supports = []
    for lower, upper, force in support_forces(sim):
        above = g * sum(masses[n] for n in names[names.index(upper):])
        print('%6s %6s %14.9f %14.9f %10.1e' % (lower, upper, force[2], above,
                                                np.hypot(force[0], force[1])))
        supports.append((force, above))
    return drift, lowest, failed, supports


if __name__ == '__main__':
    main()
