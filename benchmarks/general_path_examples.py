"""Two of trep's examples, written once against trep's API, for the general-path benchmark.

The module runs under ros_vi (``import ros_vi as trep``) and under trep itself (Python 2.7,
its C extension), so both libraries integrate exactly the same user code:

* ``radial``: a five-cylinder radial engine (trep's ``examples/radial.py``): crank shaft,
  master rod, four articulated rods and five pistons, each piston held on its cylinder axis
  by two ``PointOnPlane`` constraints, damping 0.2 on every config, and a combustion force
  on each piston written in Python (:class:`make_piston_force`) from a spline of the crank
  angle.  11 configs, 10 constraints, dt = 0.01 s for 30 s.
* ``tendon``: the planar extensor-tendon model (trep's ``examples/extensor-tendon-model.py``):
  16 configs, nine ``LinearSpring`` potentials, damping 4.0 and three ``HybridWrench``
  forces, dt = 0.01 s for 10 s.

Run as a script under trep's interpreter it writes, as JSON on stdout, the config names,
the initial configuration, the simulation seconds (wall and CPU) and the trajectory of each example::

    python2 general_path_examples.py --trep-path /path/to/trep-checkout [--only radial]

``benchmarks/bench_general_path.py`` does that and compares with ros_vi in the same run.
"""
from __future__ import division, print_function

import json
import math
import sys
import time

# Physical parameters of trep's radial engine example [m, kg].
CRANK_OFFSET = 0.2
ROD_BASE = 0.1           # radius of the circle the articulated rods attach to
PISTON_HALF = 0.2        # half length of a piston
ROD_LENGTH = 0.5
BODY = (1, 1, 1, 1)      # mass and principal inertias of every body
COMBUSTION_SCALE = 10.0  # peak combustion force [N]
# Combustion force (relative) against the crank angle seen by a piston [rad]: knots of a
# clamped spline, zero slope at the ends of the power stroke.
COMBUSTION_CURVE = [
    (0.0, 0.0, 0, 0),
    (0.25 * math.pi, 1.0),
    (0.75 * math.pi, 1.0),
    (1.0 * math.pi, 0.0, 0, 0),
    (2.0 * math.pi, 0.0, 0, 0),
]

EXAMPLES = {'radial': (30.0, 0.01), 'tendon': (10.0, 0.01)}   # (final time, dt) [s]


def make_piston_force(trep):
    """The combustion force class for the ``trep`` module given (trep or ros_vi).

    On config q the force is ``-scale * c(angle) * dz/dq`` where ``dz/dq`` is the piston's
    body-frame velocity along its own z axis per unit dq (``(g^-1 dg/dq)[2, 3]``) and
    ``c`` the combustion curve at the crank angle relative to the piston's cylinder.
    Written like a trep user writes a force: per-config methods over the Frame API.
    """

    class PistonForce(trep.Force):
        def __init__(self, system, crank, cylinder_angle, piston, curve):
            trep.Force.__init__(self, system, name='%s-force' % piston)
            self.crank = system.get_config(crank)
            self.cylinder_angle = cylinder_angle
            self.piston = system.get_frame(piston)
            self.curve = curve

        def _angle(self):
            return (self.crank.q - self.cylinder_angle) % (2 * math.pi)

        def _stroke_rate(self, q):
            # z component of the piston's body velocity per unit dq
            return self.piston.g_inv().dot(self.piston.g_dq(q))[2, 3]

        def f(self, q):
            if not self.piston.uses_config(q):
                return 0.0
            return -COMBUSTION_SCALE * self.curve.y(self._angle()) * self._stroke_rate(q)

        def f_dq(self, q, q1):
            if not self.piston.uses_config(q):
                return 0.0
            on_crank = q1 == self.crank
            if not (on_crank or self.piston.uses_config(q1)):
                return 0.0
            piston = self.piston
            rate_dq1 = (piston.g_inv_dq(q1).dot(piston.g_dq(q))[2, 3]
                        + piston.g_inv().dot(piston.g_dqdq(q, q1))[2, 3])
            angle = self._angle()
            value = self.curve.y(angle) * rate_dq1
            if on_crank:
                value += self.curve.dy(angle) * self._stroke_rate(q)
            return -COMBUSTION_SCALE * value

        def f_ddq(self, q, dq1):
            return 0.0

        def f_du(self, q, u1):
            return 0.0

    return PistonForce


def radial_engine(trep, cylinders=5):
    """The radial engine System (configs crank-theta, rod<i>-theta, piston<i>-theta)."""
    rx, tz = trep.rx, trep.tz
    PistonForce = make_piston_force(trep)
    system = trep.System()
    curve = trep.Spline(COMBUSTION_CURVE)
    system.import_frames([
        rx('crank-theta', mass=BODY, name='crank-shaft'), [
            tz(CRANK_OFFSET, name='master-origin'), [
                rx('rod0-theta', name='master-pivot'), [
                    tz(ROD_BASE), [
                        tz(ROD_LENGTH / 2, mass=BODY),
                        tz(ROD_LENGTH), [
                            rx('piston0-theta', name='piston0-base'), [
                                tz(PISTON_HALF, name='piston0-center', mass=BODY)]]]]]],
        rx(0.0, name='cylinder0'), [tz(CRANK_OFFSET / 2)],
    ])
    trep.forces.Damping(system, 0.2)

    def hold_on_cylinder(n):
        for point in ('piston%d-base' % n, 'piston%d-center' % n):
            trep.constraints.PointOnPlane(system, 'cylinder%d' % n, (0, 1, 0), point)

    hold_on_cylinder(0)
    PistonForce(system, 'crank-theta', 0.0, 'piston0-center', curve)
    for n in range(1, cylinders):
        angle = n * 2 * math.pi / cylinders
        system.get_frame('master-pivot').import_frames([
            rx(angle), [
                tz(ROD_BASE), [
                    rx('rod%d-theta' % n, name='rod%d-pivot' % n), [
                        tz(ROD_LENGTH / 2, mass=BODY),
                        tz(ROD_LENGTH), [
                            rx('piston%d-theta' % n, name='piston%d-base' % n), [
                                tz(PISTON_HALF, name='piston%d-center' % n, mass=BODY)]]]]]])
        system.import_frames([rx(angle, name='cylinder%d' % n), [tz(CRANK_OFFSET / 2)]])
        hold_on_cylinder(n)
        PistonForce(system, 'crank-theta', angle, 'piston%d-center' % n, curve)
    system.satisfy_constraints()
    return system


TENDON_START = {
    'theta-1': 0.5, 'theta-2': 0.0, 'theta-3': -0.5, 'theta-4': -1.0, 'theta-5': 0.5,
    'theta-6': -0.5, 'theta-8': 0.0, 'theta-9': 0.5,
    'x-1': -1.0, 'x-2': -1.0, 'x-3': -1.0, 'x-4': -1.0, 'x-5': -1.0, 'x-6': -1.0,
    'x-8': -1.0, 'x-9': -1.0,
}


def tendon(trep):
    """The extensor tendon System: point masses on rx/tz pairs joined by springs."""
    rx, tz = trep.rx, trep.tz
    system = trep.System()

    def node(k, name, children=()):
        return [rx('theta-%d' % k), [tz('x-%d' % k, name=name, mass=1), list(children)]]

    system.import_frames(
        node(1, 'A', node(2, 'B', node(3, 'C')) + node(4, 'D', node(5, 'E')))
        + node(6, 'F', node(8, 'H', node(9, 'I'))))
    for a, b in (('World', 'A'), ('A', 'B'), ('B', 'C'), ('A', 'D'), ('D', 'E'),
                 ('World', 'F'), ('F', 'D'), ('F', 'H'), ('H', 'I')):
        trep.potentials.LinearSpring(system, a, b, 10.0, 1.0)
    trep.forces.Damping(system, 4.0)
    # constant pulls of three muscles, world-aligned, at the branch ends [N]
    trep.forces.HybridWrench(system, 'C', (0, 1, -1))
    trep.forces.HybridWrench(system, 'E', (0, 0, -1.414))
    trep.forces.HybridWrench(system, 'I', (0, -1, -1))
    system.q = TENDON_START
    return system


BUILDERS = {'radial': radial_engine, 'tendon': tendon}


# CPU time of this process (time.clock on Python 2), robust to other processes' load
cpu_time = getattr(time, 'process_time', None) or time.clock


def simulate(trep, system, q0, dt, tf):
    """Integrate from rest at q0 to tf; returns (wall seconds, CPU seconds of the stepping
    loop, list of q2 (one per step, the first being q0), error message or None).  As in
    trep's examples, the integrator starts from two equal configurations one dt apart."""
    mvi = trep.MidpointVI(system)
    mvi.initialize_from_configs(0.0, q0, dt, q0)
    trajectory = [list(mvi.q2)]
    error = None
    wall, cpu = time.time(), cpu_time()
    try:
        while mvi.t1 < tf:
            mvi.step(mvi.t2 + dt)
            trajectory.append(list(mvi.q2))
    except trep.ConvergenceError as exc:
        error = 'ConvergenceError at t=%g: %s' % (mvi.t1, exc)
    return time.time() - wall, cpu_time() - cpu, trajectory, error


def run(trep, name, q0=None):
    """Build example ``name``, simulate it (from q0, a dict config name -> value, if given,
    else from the example's own start) and return a dict of config names, q0, seconds,
    trajectory, error."""
    tf, dt = EXAMPLES[name]
    system = BUILDERS[name](trep)
    if q0 is None:
        start = list(system.q)
    else:
        start = [q0[c.name] for c in system.configs]
    wall, cpu, trajectory, error = simulate(trep, system, start, dt, tf)
    return {'configs': [c.name for c in system.configs], 'q0': start, 'wall': wall,
            'cpu': cpu, 'trajectory': trajectory, 'error': error,
            'steps': len(trajectory) - 1}


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description='run the examples under trep')
    parser.add_argument('--trep-path', required=True,
                        help='directory holding the trep package (built in place)')
    parser.add_argument('--only', choices=sorted(EXAMPLES), action='append')
    args = parser.parse_args(argv)
    sys.path.insert(0, args.trep_path)
    import trep
    out = {}
    for name in args.only or sorted(EXAMPLES):
        out[name] = run(trep, name)
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    main()
