"""Cost of the command interfaces: arm7 at 1 kHz, effort commands vs position and velocity
drives on all 7 joints (ROS-free: ``Simulation.tick()`` in this process).

Each run commands every joint every tick (as a controller or a trajectory follower does):
efforts along a slow sinusoid (the arm swings under them and gravity), position targets
along a slow sinusoid, or velocity targets along its derivative; then it ticks.
Printed per run: median µs per tick (command + tick, over blocks of 100 ticks after a
warm-up), ticks/s, Newton iterations per tick, and the ratio to the effort run measured in
the same process.

    python benchmarks/bench_drives.py [--seconds 2]
"""
import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from ros_vi.simulation import Simulation  # noqa: E402

ARM7 = os.path.join(ROOT, 'urdf', 'arm7.urdf')
AMPLITUDE = np.array([0.4, 0.3, 0.4, 0.3, 0.4, 0.4, 0.5])   # [rad]
OMEGA = 2.0                                                  # [rad/s]


def run(kind, seconds):
    sim = Simulation.from_urdf_file(ARM7, rate=1000.0)
    names = sim.joint_names
    torque = 0.05 * sim.effort_limits                      # [N m]

    def command(t):
        if kind == 'effort':
            sim.set_commands(names, torque * np.sin(OMEGA * t))
        elif kind == 'position':
            sim.set_commands(names, AMPLITUDE * np.sin(OMEGA * t), interface='position')
        else:
            sim.set_commands(names, AMPLITUDE * OMEGA * np.cos(OMEGA * t),
                             interface='velocity')

    for _ in range(300):                                   # warm up (compiled kernels)
        command(sim.t)
        sim.tick()
    blocks, iterations, ticks = [], 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        for _ in range(100):
            command(sim.t)
            iterations += sim.tick().iterations
        blocks.append((time.perf_counter() - t0) / 100)
        ticks += 100
    return 1e6 * float(np.median(blocks)), iterations / ticks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seconds', type=float, default=2.0, help='per run [s]')
    args = parser.parse_args(argv)
    rows = [(kind,) + run(kind, args.seconds) for kind in ('effort', 'position', 'velocity')]
    base = rows[0][1]
    print('arm7, 1 kHz ticks, every joint commanded every tick (%d cores)' % os.cpu_count())
    print('| commands | µs/tick | ticks/s | Newton it./tick | / effort |')
    print('|---|---|---|---|---|')
    for kind, us, its in rows:
        print('| %s | %.1f | %.0f | %.2f | %.2f |' % (kind, us, 1e6 / us, its, us / base))


if __name__ == '__main__':
    main()
