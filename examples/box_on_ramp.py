"""A box on a ramp: it sticks below the friction angle and slides above it, as Coulomb says.

A 2 kg box (0.2 x 0.2 x 0.1 m) rests flat on its four bottom corners on a plane inclined
by theta, friction coefficient mu = 0.5: four contacts with exact (round) friction cones in
the midpoint VI step (``ros_vi.contact.SphereOnPlane``, radius 0: the corners).  Released
at rest, it stays put for tan(theta) < mu and otherwise slides down with the constant
acceleration g (sin theta - mu cos theta), flat (it neither tips nor turns); the four
corners together carry the weight's normal part, m g cos(theta) dt per step.

Run: python examples/box_on_ramp.py [--mu 0.5] [--seconds 1.5] [--dt 0.001]
"""
import argparse

import numpy as np

import ros_vi as trep
from ros_vi.contact import SphereOnPlane
from ros_vi.mechanics import FreeJoint

G = 9.81


def box_on_ramp(angle, friction, width=0.2, height=0.1, mass=2.0):
    """A box ``width`` x ``width`` x ``height`` [m] of ``mass`` [kg] at rest flat on a plane
    through the origin inclined by ``angle`` [rad] about y (downhill along +x), on its four
    bottom corners with friction ``friction`` (more contact rows than the body has
    freedoms: the impulses' distribution is not unique, the motion is).  Returns ``(free
    joint, MidpointVI at t = 0, q0 (6,))``."""
    s = trep.System()
    body = FreeJoint(s.world_frame, 'box')
    w, h = width, height
    body.body.set_inertia(mass, mass / 12 * np.diag([w * w + h * h, w * w + h * h, 2 * w * w]))
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    normal = np.array([np.sin(angle), 0.0, np.cos(angle)])
    for i, (x, y) in enumerate([(-1, -1), (1, -1), (1, 1), (-1, 1)]):
        SphereOnPlane(s, body.body, offset=(x * w / 2, y * w / 2, -h / 2), plane_normal=normal,
                      friction=friction, name='corner_%d' % i)
    mvi = trep.MidpointVI(s, min_iterations=1)
    q0 = np.zeros(6)
    q0[:3] = 0.5 * h * normal
    q0[4] = angle                    # the box's axes along the ramp's
    mvi.initialize_from_state(0.0, q0, np.zeros(6))
    return body, mvi, q0


def travel(angle, mu, seconds, dt):
    """Release the box on the ramp and run ``seconds``: ``(distance travelled downhill [m],
    the contacts' modes at the end)``."""
    _, mvi, q0 = box_on_ramp(angle, mu)
    for k in range(1, int(round(seconds / dt)) + 1):
        mvi.step(k * dt)
    downhill = np.array([np.cos(angle), 0.0, -np.sin(angle)])
    return float((mvi.q2[:3] - q0[:3]) @ downhill), mvi.contact_modes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--mu', type=float, default=0.5)
    parser.add_argument('--seconds', type=float, default=1.5)
    parser.add_argument('--dt', type=float, default=0.001)
    args = parser.parse_args(argv)
    threshold = np.arctan(args.mu)
    print('mu = %g: friction angle atan(mu) = %.6f rad; %g s at dt = %g s'
          % (args.mu, threshold, args.seconds, args.dt))
    print('%8s %8s %8s %14s %14s %10s' % ('theta', 'tan', 'modes', 'travel [m]',
                                           'closed form', 'rel. err'))
    rows = []
    for angle in (threshold - 0.1, threshold - 0.01, threshold + 0.01, threshold + 0.1):
        moved, modes = travel(angle, args.mu, args.seconds, args.dt)
        a = max(G * (np.sin(angle) - args.mu * np.cos(angle)), 0.0)
        expected = 0.5 * a * args.seconds ** 2
        error = abs(moved - expected) / expected if expected else abs(moved)
        print('%8.4f %8.4f %8s %14.9g %14.9g %10.2g' % (angle, np.tan(angle), set(modes).pop()
                                                         if len(set(modes)) == 1 else 'mixed',
                                                         moved, expected, error))
        rows.append((angle, modes, moved, expected))
    return rows


if __name__ == '__main__':
    main()
