"""Speed of trep.discopt: DSystem linearization, second derivatives, one optimize().

For planar chains of n = 1, 2, 7 links (each an ry joint then tz(-1) to a mass
[1, 0.1, 0.1, 0.1], gravity (0, 0, -9.8), dt = 0.01, one ConfigForce on the first joint)
it prints the median time [µs] of

* ``fdx()+fdu()`` right after ``set()`` (the first derivatives of one step),
* ``2nd``: ``fdxdx(z)+fdxdu(z)+fdudu(z)`` after ``set()`` for a random adjoint z,
* ``set()``: one step of the integrator from a given state,
* ``FD lin``: the same first derivatives by central finite differences of ``f()``
  (2 nX + 2 nU calls of ``set()``) -- a same-run baseline,
* ``/calib``: fdx+fdu divided by a fixed NumPy calibration workload (the one of
  benchmarks/bench_vi.py), to compare across machines,

with trep's C implementation (fdx+fdu ~ 25, 27, 60 µs for n = 1, 2, 7 on a 2-core x86-64
machine, from the issue) for reference.  Finally it times one full, converging optimisation
of the cart-pole swing-up of examples/cartpole_optimization.py from its zero-input initial
guess: the three continuation rounds and the final round whose Newton steps reach
descent_tolerance (plus, separately, the problem set-up: the reference controller's
closed-loop simulation and the zero-input projection).

    python benchmarks/bench_discopt.py [--repeats 200] [--n 1 2 7] [--no-optimize]
"""
import argparse
import os
import sys
import time

import numpy as np

import ros_vi as trep
import ros_vi.discopt as discopt
from ros_vi import ry, tz

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.join(_HERE, '..', 'examples'))
from bench_vi import calibration_us  # noqa: E402

TREP_US = {1: 25.0, 2: 27.0, 7: 60.0}


def planar_chain(n):
    system = trep.System()

    def links(k):
        if k == n:
            return []
        return [ry('q%d' % k), [tz(-1.0, mass=[1.0, 0.1, 0.1, 0.1]), links(k + 1)]]
    system.import_frames(links(0))
    trep.potentials.Gravity(system, (0, 0, -9.8))
    trep.forces.ConfigForce(system, 'q0', 'torque0')
    return system


def median_us(func, repeats):
    times = np.empty(repeats)
    for i in range(repeats):
        t0 = time.perf_counter()
        func()
        times[i] = time.perf_counter() - t0
    return 1e6 * float(np.median(times))


def bench_chain(n, repeats):
    dsys = discopt.DSystem(trep.MidpointVI(planar_chain(n)), np.arange(3) * 0.01)
    rng = np.random.RandomState(0)
    X = dsys.build_state(rng.uniform(-0.5, 0.5, n), rng.uniform(-0.2, 0.2, n))
    U = dsys.build_input([0.3])
    z = rng.normal(size=dsys.nX)
    for _ in range(5):                                   # warm-up (numba compilation)
        dsys.set(X, U, 0)
        dsys.fdx(), dsys.fdu(), dsys.fdxdx(z), dsys.fdxdu(z), dsys.fdudu(z)

    def first():
        dsys.set(X, U, 0)
        t0 = time.perf_counter()
        dsys.fdx()
        dsys.fdu()
        return time.perf_counter() - t0

    def second():
        dsys.set(X, U, 0)
        dsys.fdx()                                       # first derivatives cached
        t0 = time.perf_counter()
        dsys.fdxdx(z)
        dsys.fdxdu(z)
        dsys.fdudu(z)
        return time.perf_counter() - t0

    def timed(func):
        return 1e6 * float(np.median([func() for _ in range(repeats)]))

    def fd_linearization():
        d = 1e-6
        for i in range(dsys.nX):
            for s in (d, -d):
                Xp = X.copy()
                Xp[i] += s
                dsys.set(Xp, U, 0)
                dsys.f()
        for i in range(dsys.nU):
            for s in (d, -d):
                Up = U.copy()
                Up[i] += s
                dsys.set(X, Up, 0)
                dsys.f()

    t1 = timed(first)
    t2 = timed(second)
    tset = median_us(lambda: dsys.set(X, U, 0), repeats)
    tfd = median_us(fd_linearization, max(10, repeats // 10))
    return t1, t2, tset, tfd


def bench_optimize():
    import cartpole_optimization as cp
    t0 = time.perf_counter()
    env = cp.setup()
    t_setup = time.perf_counter() - t0
    monitor = cp.RecordingMonitor(quiet=True)
    t0 = time.perf_counter()
    optimizer, converged, X, U = cp.optimize(env, monitor=monitor)
    elapsed = time.perf_counter() - t0
    steps = [len(r) for r in monitor.rounds]
    final = monitor.rounds[-1][-1]
    return elapsed, t_setup, converged, len(X), steps, final[1], abs(final[3])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=200)
    parser.add_argument('--n', type=int, nargs='+', default=[1, 2, 7])
    parser.add_argument('--no-optimize', action='store_true')
    args = parser.parse_args(argv)
    calib = calibration_us()
    print('calibration workload: %.1f µs' % calib)
    print('%3s %12s %10s %10s %12s %8s %10s' % ('n', 'fdx+fdu µs', '2nd µs', 'set() µs',
                                               'FD lin µs', '/calib', 'trep C µs'))
    for n in args.n:
        t1, t2, tset, tfd = bench_chain(n, args.repeats)
        print('%3d %12.1f %10.1f %10.1f %12.1f %8.2f %10s'
              % (n, t1, t2, tset, tfd, t1 / calib,
                 '%.0f' % TREP_US[n] if n in TREP_US else '-'))
    if not args.no_optimize:
        elapsed, t_setup, converged, N, steps, method, dcost = bench_optimize()
        print('cart-pole swing-up optimisation (N = %d states): %.2f s for %d steps in '
              'rounds %s (set-up %.2f s); converged=%s, last |dcost| = %.1e (%s)'
              % (N, elapsed, sum(steps), steps, t_setup, converged, dcost, method))


if __name__ == '__main__':
    main()
