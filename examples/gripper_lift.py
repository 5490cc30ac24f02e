"""A parallel gripper grasps a box by friction, lifts it 0.1 m and holds it.

worlds/grasp.yaml: the shipped gripper (urdf/gripper.urdf: a lift and two finger pads, the
right finger a mimic of the left) over a 6 cm, 0.2 kg box on the ground.  Position drives
(the simulator's ``position`` interface) close the pads onto the box, 2 mm past touching
(the drive then squeezes with its stiffness times 2 mm), raise the lift 0.1 m, and hold.
The pads' corners rest on the box's side faces (``ros_vi.contact.SphereOnBox``) with
friction mu = 0.8 (the smaller of the pads' 1.0 and the ground's): nothing but friction
holds the box up.  The example reports how high the box rose, how far it slipped against
the pads while held, and the squeeze and friction the pads exert.

Run: python examples/gripper_lift.py [--hold 10] [--rate 500]
"""
import argparse
import os

import numpy as np

from ros_vi.mechanics import dynamics
from ros_vi.resources import share_directory
from ros_vi.simulation import Simulation

TOUCH = 0.015          # m: finger travel at which the pads touch the box (pads 5 cm out,
                       # 5 mm thick, box 3 cm half width)
SQUEEZE = 0.002        # m: how far past touching the finger target goes
LIFT = 0.1             # m
CLOSE, RAISE = 0.3, 1.0   # s: closing, then raising (each a smooth ramp), after a 0.1 s wait


def ramp(t, start, duration):
    """0 before start, 1 after start + duration, a half cosine between."""
    x = min(max((t - start) / duration, 0.0), 1.0)
    return 0.5 - 0.5 * np.cos(np.pi * x)


def world_point(sim, frame, point=(0.0, 0.0, 0.0)):
    """``point`` (3,) [m] of ``frame`` in the world at the published state."""
    R, P, _ = dynamics.kinematics(sim.system.model, sim.output_data())
    i = sim.system.frames.index(sim.system.get_frame(frame))
    return R[i] @ np.asarray(point) + P[i]


def in_frame(sim, frame, x):
    """World point ``x`` (3,) in ``frame``'s coordinates at the published state."""
    R, P, _ = dynamics.kinematics(sim.system.model, sim.output_data())
    i = sim.system.frames.index(sim.system.get_frame(frame))
    return R[i].T @ (x - P[i])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hold', type=float, default=10.0, help='seconds held aloft')
    parser.add_argument('--rate', type=float, default=500.0, help='VI steps per second')
    args = parser.parse_args(argv)
    sim = Simulation.from_world(os.path.join(share_directory(), 'worlds', 'grasp.yaml'),
                                rate=args.rate)
    dt = 1.0 / args.rate
    start = world_point(sim, 'cube')
    lifted = 0.1 + CLOSE + RAISE
    steps = int(round((lifted + args.hold) / dt))
    held, failed = None, 0
    for k in range(1, steps + 1):
        t = k * dt
        sim.set_commands({'gripper/finger_left_joint': (TOUCH + SQUEEZE) * ramp(t, 0.1, CLOSE),
                          'gripper/lift': LIFT * ramp(t, 0.1 + CLOSE, RAISE)},
                         interface='position')
        failed += not sim.step()[-1].ok
        if held is None and t >= lifted:
            # where the box sits on the left pad once the lift has settled
            held = in_frame(sim, 'gripper/finger_left', world_point(sim, 'cube'))
    end = world_point(sim, 'cube')
    slip = float(np.linalg.norm(in_frame(sim, 'gripper/finger_left', end) - held))
    forces = sim.contact_forces()
    on_cube = np.zeros(3)
    R, _, _ = dynamics.kinematics(sim.system.model, sim.output_data())
    frames = {f.name: i for i, f in enumerate(sim.system.frames)}
    for frame, other, f, g in zip(forces.frames, forces.others, forces.forces,
                                  forces.other_forces):
        if frame == 'cube':
            on_cube += R[frames[frame]] @ f
        if other == 'cube':
            on_cube += R[frames[other]] @ g
    pads = [(c.name, m) for c, m in zip(sim.system.contacts, sim.mvi.contact_modes)
            if m != 'open']
    print('box rose %.6f m (lift %.3f m); slipped %.2e m against the pad over %g s held; '
          '%d failed steps' % (end[2] - start[2], LIFT, slip, args.hold, failed))
    print('contacts holding it: %s' % ', '.join('%s (%s)' % p for p in pads))
    print('the pads\' force on the box: %s N (its weight: %.4f N)'
          % (np.array2string(on_cube, precision=6), 0.2 * 9.81))
    return end - start, slip, failed, pads, on_cube


if __name__ == '__main__':
    main()
