"""Speed of MidpointVI.step() on planar chains (the issue's benchmark).

Chain of n links: each an ry joint then tz(-1) to a mass [1, 0.1, 0.1, 0.1], gravity
(0, 0, -9.8), dt = 0.01, tolerance 1e-10, starting at rest with every joint at 0.3 rad.
For each n it prints the median µs per step (over >= 1000 steps, after warm-up), steps/s,
Newton iterations per step, and two ratios measured in this same run:

* ``/calib``: µs per step divided by the time of a fixed NumPy calibration workload
  (absorbs machine speed and load; compare across machines/runs with this column);
* ``general/fast``: the general (pure Python/NumPy) path's time per step divided by the
  compiled fast path's, on the same system.

trep's C implementation on a comparable 2-core x86-64 machine (from the issue) is printed
for reference, and the cost growth exponent is fitted over n.

    python benchmarks/bench_vi.py [--steps 2000] [--n 1 2 4 7 14]
"""
import argparse
import time

import numpy as np

import ros_vi as trep
from ros_vi import ry, tz

TREP_US = {1: 7.0, 2: 15.0, 4: 50.0, 7: 164.0, 14: 1192.0}


def planar_chain(n):
    """n-link planar chain (configs 'q0'..'q{n-1}')."""
    system = trep.System()

    def links(k):
        if k == n:
            return []
        return [ry('q%d' % k), [tz(-1.0, mass=[1.0, 0.1, 0.1, 0.1]), links(k + 1)]]
    system.import_frames(links(0))
    trep.potentials.Gravity(system, (0, 0, -9.8))
    return system


def calibration_us(repeats=2000):
    """Median time [µs] of a fixed NumPy workload (30 small matmuls + a 6x6 solve)."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6)) + 6 * np.eye(6)
    b = rng.normal(size=6)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        x = b
        for _ in range(30):
            x = a @ x
        np.linalg.solve(a, x)
        times.append(time.perf_counter() - t0)
    return 1e6 * float(np.median(times))


def time_steps(n, steps, general=False):
    """Median µs per step and mean Newton iterations for the n-link chain."""
    system = planar_chain(n)
    mvi = trep.MidpointVI(system, tolerance=1e-10, fast=not general)
    mvi.initialize_from_state(0.0, np.full(n, 0.3), np.zeros(n))
    dt = 0.01
    k = 0
    for _ in range(20):                 # warm-up (compilation, predictor history)
        k += 1
        mvi.step(k * dt)
    times = np.empty(steps)
    iters = 0
    for i in range(steps):
        k += 1
        t0 = time.perf_counter()
        iters += mvi.step(k * dt)
        times[i] = time.perf_counter() - t0
    return 1e6 * float(np.median(times)), iters / steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--steps', type=int, default=2000)
    parser.add_argument('--general-steps', type=int, default=300)
    parser.add_argument('--n', type=int, nargs='+', default=[1, 2, 4, 7, 14])
    args = parser.parse_args(argv)

    calib = calibration_us()
    print('calibration workload: %.2f us (fixed NumPy work, same run)' % calib)
    print('%4s %10s %11s %7s %8s %12s %10s %10s' % (
        'n', 'us/step', 'steps/s', 'iters', '/calib', 'general us', 'gen/fast', 'trep C us'))
    rows = []
    for n in args.n:
        us, iters = time_steps(n, args.steps)
        gen_us, _ = time_steps(n, args.general_steps, general=True)
        rows.append((n, us))
        print('%4d %10.1f %11.0f %7.2f %8.2f %12.1f %10.1f %10s' % (
            n, us, 1e6 / us, iters, us / calib, gen_us, gen_us / us,
            '%.0f' % TREP_US[n] if n in TREP_US else '-'))
    if len(rows) >= 2:
        ns = np.log([r[0] for r in rows])
        ts = np.log([r[1] for r in rows])
        slope = np.polyfit(ns, ts, 1)[0]
        big = [r for r in rows if r[0] >= 4]
        print('fitted growth exponent over n = %s: %.2f' % ([r[0] for r in rows], slope))
        if len(big) >= 2:
            slope_big = np.polyfit(np.log([r[0] for r in big]), np.log([r[1] for r in big]),
                                   1)[0]
            print('fitted growth exponent over n >= 4: %.2f (trep C: ~2.5)' % slope_big)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
