"""Offline demo (no ROS): simulate trep's tutorial pendulum with the midpoint VI.

Runs the damped pendulum of trep's tutorial (m = 1 kg, l = 1 m, g = 9.8 m/s^2, damping
1.0 N m s/rad) from 3/4 pi at rest with the midpoint variational integrator and prints a
trajectory summary; ``--undamped`` drops the damping and reports energy drift instead.

    python -m ros_vi.demo_offline [--dt 0.01] [--tf 10] [--undamped] [--output x.png]
    python -m ros_vi.demo --offline [...]          # the same

``--output`` writes a PNG of theta and the energy against time (no plot without it).
"""
import argparse
import os
import time

import numpy as np

import ros_vi as trep
from ros_vi import rx, tz


def build_pendulum(damping=1.0):
    """trep's tutorial pendulum: config 'theta', input 'theta-torque'."""
    system = trep.System()
    system.import_frames([rx('theta', name='pendulumShoulder'), [
        tz(-1.0, name='pendulumArm', mass=1.0)]])
    trep.potentials.Gravity(system, (0, 0, -9.8))
    if damping:
        trep.forces.Damping(system, damping)
    trep.forces.ConfigForce(system, 'theta', 'theta-torque')
    return system


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dt', type=float, default=0.01, help='time step [s]')
    parser.add_argument('--tf', type=float, default=10.0, help='final time [s]')
    parser.add_argument('--undamped', action='store_true', help='no damping')
    parser.add_argument('--output', default=None,
                        help='PNG file for a plot of theta and the energy (default: none)')
    args = parser.parse_args(argv)

    system = build_pendulum(0.0 if args.undamped else 1.0)
    mvi = trep.MidpointVI(system)
    mvi.initialize_from_state(0.0, [0.75 * np.pi], [0.0])
    system.q, system.dq = mvi.q2, 0.0
    e0 = system.total_energy()
    n = int(round(args.tf / args.dt))
    q = np.empty(n + 1)
    q[0] = mvi.q2[0]
    p = np.empty(n + 1)
    p[0] = mvi.p2[0]
    iterations = 0
    start = time.perf_counter()
    for k in range(1, n + 1):
        iterations += mvi.step(k * args.dt, [0.0])
        q[k] = mvi.q2[0]
        p[k] = mvi.p2[0]
    elapsed = time.perf_counter() - start
    e1 = _energy(system, mvi.q2, mvi.p2)
    print('ros_vi demo: trep tutorial pendulum (%s), dt = %g s, %d steps'
          % ('undamped' if args.undamped else 'damping 1.0', args.dt, n))
    for t in np.linspace(0, args.tf, 6):
        k = int(round(t / args.dt))
        print('  t = %5.2f s   theta = %+.6f rad' % (k * args.dt, q[k]))
    print('energy: start %.6f J, end %.6f J' % (e0, e1))
    print('Newton iterations per step: %.2f; %.1f us per step'
          % (iterations / n, 1e6 * elapsed / n))
    if args.output:
        energy = [_energy(system, [qk], [pk]) for qk, pk in zip(q, p)]
        _plot(np.arange(n + 1) * args.dt, q, energy, args.output,
              'trep tutorial pendulum (%s), dt = %g s'
              % ('undamped' if args.undamped else 'damping 1.0', args.dt))
        print('plot: %s' % os.path.abspath(args.output))
    return 0


def _energy(system, q, p):
    """H(q, p) = 1/2 p M^-1 p + V at a node of the VI."""
    system.q = q
    system.dq = np.linalg.solve(system.mass_matrix(), p)
    return system.total_energy()


def _plot(t, theta, energy, path, title):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    axes[0].plot(t, theta)
    axes[0].set_ylabel('theta [rad]')
    axes[1].plot(t, energy)
    axes[1].set_ylabel('E [J]')
    axes[1].set_xlabel('t [s]')
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == '__main__':
    raise SystemExit(main())
