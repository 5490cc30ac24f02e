"""A differential-drive base rolls on its wheels' friction: straight, then turning.

worlds/drive.yaml: the shipped wheeled base (urdf/wheeled_base.urdf: two 8 cm sphere wheels
0.4 m apart and a frictionless ball caster) on the ground, floating.  Velocity drives (the
simulator's ``velocity`` interface) spin the wheels up to 5 rad/s over a second, hold them
there, then slow the left wheel to 3 rad/s.  Nothing pushes the chassis but the ground's
friction at the two wheels' contact points (mu = 0.8), which stick: the wheels roll.
The example compares the motion with rolling without slipping: straight, the chassis
advances r times the wheels' turn; turning, it yaws by r (right turn - left turn) / track.

Run: python examples/wheeled_drive.py [--rate 500]
"""
import argparse
import os

import numpy as np

from ros_vi.mechanics import dynamics
from ros_vi.resources import share_directory
from ros_vi.simulation import Simulation

RADIUS, TRACK = 0.08, 0.4      # m: the wheels' radius and the distance between them
FAST, SLOW = 5.0, 3.0          # rad/s
LEFT, RIGHT = 'rover/left_wheel_joint', 'rover/right_wheel_joint'


def ramp(t, start, duration):
    """0 before start, 1 after start + duration, a half cosine between."""
    x = min(max((t - start) / duration, 0.0), 1.0)
    return 0.5 - 0.5 * np.cos(np.pi * x)


def chassis(sim):
    """``(position (3,) [m], yaw [rad], wheel angles (left, right) [rad])`` at the
    published state."""
    R, P, _ = dynamics.kinematics(sim.system.model, sim.output_data())
    i = sim.system.frames.index(sim.system.get_frame('rover/chassis'))
    state = sim.state()
    positions = dict(zip(state.joint_names, state.positions))
    return P[i].copy(), float(np.arctan2(R[i][1, 0], R[i][0, 0])), np.array(
        [positions[LEFT], positions[RIGHT]])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rate', type=float, default=500.0, help='VI steps per second')
    args = parser.parse_args(argv)
    sim = Simulation.from_world(os.path.join(share_directory(), 'worlds', 'drive.yaml'),
                                rate=args.rate)
    dt = 1.0 / args.rate
    marks = {1.5: None, 3.0: None, 4.0: None, 5.0: None}
    failed, modes = 0, {}
    for k in range(1, int(round(5.0 / dt)) + 1):
        t = k * dt
        speed = FAST * ramp(t, 0.0, 1.0)
        sim.set_commands({LEFT: speed - (FAST - SLOW) * ramp(t, 3.0, 0.5), RIGHT: speed},
                         interface='velocity')
        failed += not sim.step()[-1].ok
        for mark in marks:
            if abs(t - mark) < dt / 2:
                marks[mark] = chassis(sim)
                modes[mark] = {c.name: m for c, m in zip(sim.system.contacts,
                                                         sim.mvi.contact_modes) if m != 'open'}
    (p0, yaw0, w0), (p1, yaw1, w1) = marks[1.5], marks[3.0]
    heading = np.array([np.cos(yaw0), np.sin(yaw0), 0.0])
    rolled = RADIUS * float(np.mean(w1 - w0))
    advance = float((p1 - p0) @ heading)
    sideways = float(np.linalg.norm(p1 - p0 - advance * heading))
    print('straight, 1.5 to 3 s: advanced %.9f m, wheels rolled r x turn = %.9f m '
          '(difference %.1e m), sideways %.1e m, yaw change %.1e rad'
          % (advance, rolled, advance - rolled, sideways, yaw1 - yaw0))
    (_, yaw2, w2), (_, yaw3, w3) = marks[4.0], marks[5.0]
    expected = RADIUS * float((w3 - w2)[1] - (w3 - w2)[0]) / TRACK
    print('turning, 4 to 5 s: yawed %.9f rad, r (right - left) / track = %.9f rad '
          '(relative difference %.1e)' % (yaw3 - yaw2, expected,
                                          abs(yaw3 - yaw2 - expected) / abs(expected)))
    print('contacts touching at 5 s: %s; failed steps: %d'
          % (', '.join('%s (%s)' % item for item in modes[5.0].items()), failed))
    return (advance, rolled, sideways, yaw1 - yaw0), (yaw3 - yaw2, expected), modes, failed


if __name__ == '__main__':
    main()
