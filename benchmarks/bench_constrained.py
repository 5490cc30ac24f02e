"""Speed of MidpointVI.step() with holonomic constraints: compiled vs general path.

Closed chains at 1 kHz (dt = 1 ms, tolerance 1e-10), each next to the open chain of the
same frames without its closing constraints (the unconstrained compiled step, measured in
the same run):

* ``four-bar``: planar four-bar in the x-z plane (ground 1.5 m, links 1.0, 1.2, 1.0 m, crank
  torque input), closed by a PointToPoint2D: 3 configs, 2 constraints;
* ``loop-6``: a 3-D chain of six alternating rx/ry/rz joints whose tip is pinned back to a
  fixed point by a PointToPoint3D: 6 configs, 3 constraints;
* ``rod``: a point mass on x-z slides held by a Distance constraint from a pivot (2 configs,
  1 constraint).

For each it prints the median µs per step (after warm-up) of the compiled constrained step,
of the general (NumPy) path on the same system, of the compiled open chain, and the ratios
``general/compiled`` and ``closed/open``.  Target: the four-bar's closed/open <= 3; the exit
status is 1 when it is missed.

    python benchmarks/bench_constrained.py [--steps 5000] [--general-steps 300]
"""
import argparse
import time

import numpy as np

import ros_vi as trep
from ros_vi import const_txyz, rx, ry, rz, tx, tz

LINK = [1.0, 0.0, 0.1, 0.0]
DT = 1e-3
TARGET = 3.0          # closed four-bar / open chain, µs per step


def fourbar(closed):
    s = trep.System()
    s.import_frames([
        ry('th1'), [tx(1.0, name='A', mass=LINK), [
            ry('th2'), [tx(1.2, name='B', mass=LINK), [
                ry('th3'), [tx(1.0, name='C', mass=LINK)]]]]],
        const_txyz([1.5, 0.0, 0.0], name='G'),
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.forces.ConfigForce(s, 'th1', 'tau')
    s.q = [-1.2, 1.5, 1.5]
    if closed:
        trep.constraints.PointToPoint2D(s, 'xz', 'C', 'G')
        s.satisfy_constraints()
    return s


def loop6(closed):
    s = trep.System()
    joints = (rx, ry, rz, rx, ry, rz)
    tail = []
    for i in reversed(range(6)):
        tail = [joints[i]('j%d' % i), [tz(-0.4, name='L%d' % i, mass=[0.5, 0.01, 0.01, 0.01])]
                + ([tail] if tail else [])]
    s.import_frames(tail + [const_txyz([0.3, 0.2, -1.2], name='anchor')])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.forces.Damping(s, 0.05)
    s.q = [0.4, -0.3, 0.2, 0.5, -0.4, 0.3]
    if closed:
        trep.constraints.PointToPoint3D(s, 'L5', 'anchor')
        s.satisfy_constraints()
    return s


def rod(closed):
    s = trep.System()
    s.import_frames([tx('x'), [tz('z', name='M', mass=[1.0, 0.0, 0.0, 0.0])],
                     const_txyz([0.0, 0.0, 0.0], name='pivot')])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    s.q = [0.6, -0.8]
    if closed:
        trep.constraints.Distance(s, 'M', 'pivot', 1.0)
    return s


def time_steps(system, q0, steps, fast):
    """Median µs per step and mean Newton iterations, from rest at q0."""
    mvi = trep.MidpointVI(system, tolerance=1e-10, fast=fast)
    mvi.initialize_from_state(0.0, q0, np.zeros(system.nQd))
    u = np.zeros(system.nu)
    for _ in range(50):                  # warm-up (compilation, predictor history)
        mvi.step(mvi.t2 + DT, u)
    times = np.empty(steps)
    iters = 0
    for i in range(steps):
        t0 = time.perf_counter()
        iters += mvi.step(mvi.t2 + DT, u)
        times[i] = time.perf_counter() - t0
    return 1e6 * float(np.median(times)), iters / steps, mvi.compiled


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--steps', type=int, default=5000)
    parser.add_argument('--general-steps', type=int, default=300)
    args = parser.parse_args(argv)
    print('dt = %g s; median us per step' % DT)
    print('%-9s %4s %4s %11s %6s %11s %11s %9s %11s' % (
        'system', 'nq', 'nc', 'compiled', 'iters', 'general', 'open chain', 'gen/comp',
        'closed/open'))
    ratios = {}
    for name, build in (('four-bar', fourbar), ('loop-6', loop6), ('rod', rod)):
        closed = build(True)
        q0 = closed.q
        us, iters, compiled = time_steps(closed, q0, args.steps, True)
        if not compiled:
            raise RuntimeError('%s did not take the compiled path' % name)
        gen_us, _, _ = time_steps(build(True), q0, args.general_steps, False)
        open_us, _, _ = time_steps(build(False), q0, args.steps, True)
        print('%-9s %4d %4d %11.1f %6.2f %11.1f %11.1f %9.1f %11.2f' % (
            name, closed.nQ, closed.nc, us, iters, gen_us, open_us, gen_us / us,
            us / open_us))
        ratios[name] = us / open_us
    if ratios['four-bar'] > TARGET:
        print('MISSED: the four-bar costs %.2fx its open chain (target <= %g)'
              % (ratios['four-bar'], TARGET))
        return 1
    print('four-bar: %.2fx its open chain (target <= %g)' % (ratios['four-bar'], TARGET))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
