"""The shipped quadruped trots in place on an open-loop gait (worlds/quadruped_stand.yaml).

Its 12 joints are held by position drives (the simulator's ``position`` interface) at the
standing pose; after half a second of standing, the diagonal pairs of legs (front-left with
rear-right, front-right with rear-left) are lifted in turn: each leg's thigh and calf
targets follow a half sine of ``--lift`` rad (thigh +lift/2, calf -lift) at ``--frequency``
Hz, one pair in the air while the other pair stands.  Nothing closes the loop: the trunk
rocks and drifts a few centimetres; the feet touch down, stick or slide and lift off, and
every step of the contact solve finds its root.

Run: python examples/quadruped_trot.py [--seconds 3] [--lift 0.35] [--frequency 2.5]
"""
import argparse
import os

import numpy as np

from ros_vi.simulation import Simulation

WORLD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'worlds',
                     'quadruped_stand.yaml')
PAIRS = {'FL': 0.0, 'RR': 0.0, 'FR': np.pi, 'RL': np.pi}      # the legs' gait phases


def gait(stand, t, lift, frequency):
    """Position targets {joint: rad} at ``t`` [s] of the gait around ``stand`` {joint:
    rad}."""
    targets = dict(stand)
    for leg, phase in PAIRS.items():
        up = max(np.sin(2.0 * np.pi * frequency * t + phase), 0.0)
        targets['dog/%s_thigh_joint' % leg] += 0.5 * lift * up
        targets['dog/%s_calf_joint' % leg] -= lift * up
    return targets


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=3.0, help='of trotting')
    parser.add_argument('--lift', type=float, default=0.35, help='rad')
    parser.add_argument('--frequency', type=float, default=2.5, help='Hz')
    parser.add_argument('--rate', type=float, default=500.0, help='Hz')
    args = parser.parse_args(argv)
    sim = Simulation.from_world(WORLD, rate=args.rate)
    state = sim.state()
    stand = {n: x for n, x in zip(state.joint_names, state.positions)
             if n in sim.actuated_joint_names}
    sim.set_commands(stand, interface='position')
    sim.step(int(0.5 * args.rate))
    feet = [m for m, c in enumerate(sim.system.contacts) if '_foot_ground_' in c.name]
    t0, trunk, touching, failed = sim.t, [], [], 0
    for _ in range(int(args.seconds * args.rate)):
        sim.set_commands(gait(stand, sim.t - t0, args.lift, args.frequency),
                         interface='position')
        failed += not sim.tick().ok
        trunk.append(sim.free_bodies()['dog/trunk'].pose[:3, 3].copy())
        modes = sim.mvi.contact_modes
        touching.append([modes[m] != 'open' for m in feet])
    trunk, touching = np.array(trunk), np.array(touching)
    print('%g s of trotting at %g Hz: %d failed ticks' % (args.seconds, args.rate, failed))
    print('trunk (from its start) x %+.4f..%+.4f, y %+.4f..%+.4f, z %+.4f..%+.4f m'
          % tuple(np.ravel(np.column_stack([trunk.min(0), trunk.max(0)]))))
    for k, m in enumerate(feet):
        print('%-22s on the ground %3.0f %% of the time, touched down %d times'
              % (sim.system.contacts[m].name, 100 * touching[:, k].mean(),
                 int(np.sum(np.diff(touching[:, k].astype(int)) > 0))))
    return {'failed': failed, 'trunk': trunk, 'touching': touching}


if __name__ == '__main__':
    main()
