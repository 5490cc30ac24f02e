"""Batched rollouts: ros_vi.rollout against mujoco.rollout on 1 thread and on all cores.

Three measurements in one run, all at dt = 1 ms:

1. **Free motion** (no input) of the pendulum, the cart-pole and the 7-DOF arm, the shipped
   URDFs with ``<dynamics>`` (damping, friction), visuals and collisions removed
   (``robots.benchmark_urdf``), from B seeded random states (every joint uniform in
   +-0.5 rad or m, every velocity in +-0.5 rad/s or m/s), B = 1, 64, 1024, on 1 thread and on
   all cores:

   * ros_vi: ``ros_vi.rollout(system, q0, dq0, None, horizon, 0.001, threads=T)`` (the
     compiled batch loop, numba threads), timed after a warm-up call;
   * MuJoCo: ``mujoco.rollout`` (a ``Rollout`` pool of T threads, one MjData per thread) on
     the same URDF compiled by MuJoCo's own importer as bench_vs_mujoco.py builds it
     (contacts, joint limits, friction loss off), integrators RK4 and Euler (semi-implicit),
     the same B initial states and the same number of steps, zero controls (the models have
     no actuators).  MuJoCo's rollout always writes every state (B x steps x nstate); that
     output array is allocated once, outside the timing.  ros_vi records none here.

   Reported: µs per step per copy (wall time / (B steps), the fastest of ``--repeats``
   calls), steps/s, ros_vi / MuJoCo RK4, and the scaling efficiency t_1 / (T t_T) of each
   engine; and the difference of the final states between ros_vi and MuJoCo RK4 (|dq|
   [rad, m]: the largest and the median over the B copies; the largest |dv| [rad/s, m/s])
   with the largest |v| MuJoCo reached: the undamped arm whips its wrist to tens of rad/s
   and its chaotic motion amplifies the VI's O(dt^2) error (it falls 100x with dt / 10).

2. **Closed loop**: the pendulum demo's swing-up + LQR hand-over
   (``DEMOS['pendulum'].controller(model, dt=0.001)``, compiled) at B = 64 and 1024 from
   random states (theta in [-pi, pi), dtheta in +-6 rad/s), 1 thread and all cores.  ros_vi
   only: ``mujoco.rollout`` takes open-loop controls, so it cannot run a feedback law.

3. **Basin of attraction** of that swing-up: a grid of 200 x 200 initial states (theta in
   [-pi, pi), dtheta in [-6, 6] rad/s), 10 s each (4e8 steps) on all cores; a copy succeeds
   when ``time_to_target`` with ``Target(goal=[pi], q_tol=0.05, v_tol=0.1)`` is finite.
   ``--basin full`` runs every row (in blocks of rows, wall time summed); ``--basin slice``
   runs ``--basin-rows`` dtheta rows spread over the range and extrapolates the wall time to
   the whole grid (labelled as an extrapolation).

Targets (printed met / MISSED; exit status 1 when one is missed): per core, ros_vi at least
as fast as MuJoCo RK4 at the largest B (ratio <= 1) for every model; scaling to all cores
>= 80 % efficient at the largest B (free motion of each model and the closed loop); the
basin map in under 600 s.  On a machine shared with other work, the scaling and the
absolute times move with the load (printed with the numbers).

    python benchmarks/bench_rollout.py [--horizon 1.0] [--batches 1 64 1024] [--repeats 2]
        [--models pendulum cartpole arm7] [--closed-horizon 1.0] [--closed-batches 64 1024]
        [--basin full|slice|off] [--basin-rows 4] [--grid 200] [--save basin.npz]

The defaults take about 15 minutes on 2 cores (the full basin map is most of it); MuJoCo is a
benchmark-only extra (requirements-bench.txt): without it the MuJoCo columns say
``not installed``.  A fresh checkout compiles the batch kernel first (about 75 s, cached).
"""
import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]      # this checkout's ros_vi, robots.py
import bench_vs_mujoco as BV  # noqa: E402  (MuJoCo built from the URDF as that benchmark does)
import robots as R  # noqa: E402

import ros_vi  # noqa: E402
from ros_vi.control.presets import DEMOS  # noqa: E402
from ros_vi.urdf import import_urdf  # noqa: E402

try:
    import mujoco
    import mujoco.rollout
except ImportError:           # a benchmark-only extra
    mujoco = None

DT = 1e-3
MODELS = ('pendulum', 'cartpole', 'arm7')
SCALING_TARGET = 0.80         # t_1 / (T t_T)
BASIN_TARGET = 600.0          # s, the whole 200 x 200 map on all cores
BASIN_TARGET_SET = dict(goal=[math.pi], q_tol=0.05, v_tol=0.1)


def cores():
    """Threads for "all cores": numba's pool size (its default is the CPU count)."""
    import numba
    return int(numba.config.NUMBA_NUM_THREADS)


def load():
    """The 1-, 5- and 15-minute load averages as text (the machine may be shared)."""
    try:
        return 'load average %.2f, %.2f, %.2f' % os.getloadavg()
    except OSError:
        return 'load average unknown'


def thread_counts():
    n = cores()
    return [1] if n == 1 else [1, n]


# ---------------------------------------------------------------------- engines
class RosVIRollout:
    """ros_vi's batched rollout of one benchmark robot (free motion, no input)."""

    def __init__(self, robot):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.system = import_urdf(robot.urdf, gravity=R.GRAVITY, enforce_limits=False)
        # the states are given in the robot's joint order; ros_vi's configs may differ
        self.index = np.array([self.system.get_config(n).index for n in robot.joints])

    def _system_order(self, x):
        out = np.zeros_like(x)
        out[:, self.index] = x
        return out

    def run(self, q0, v0, steps, threads):
        """(wall time [s], process CPU time [s], final q (B, n), final v (B, n) in the
        robot's joint order)."""
        q0, v0 = self._system_order(q0), self._system_order(v0)
        wall, cpu, res = timed(lambda: ros_vi.rollout(self.system, q0, v0, None, steps * DT,
                                                      DT, threads=threads))
        if not res.ok.all():
            bad = np.nonzero(~res.ok)[0]
            raise RuntimeError('ros_vi copies %s failed: %s' % (bad[:5].tolist(),
                                                               res.error[bad[0]]))
        if (res.path != 'compiled').any():
            raise RuntimeError('ros_vi ran %d copies on the general path'
                               % int(np.sum(res.path != 'compiled')))
        return wall, cpu, res.q[:, self.index], res.v[:, self.index]


class MuJoCoRollout:
    """``mujoco.rollout`` of one benchmark robot with one integrator: the model compiled as
    bench_vs_mujoco.py compiles it, thread pools kept for the whole run (created outside
    the timing, as a caller that rolls out repeatedly would)."""

    SPEC = None

    def __init__(self, robot, integrator):
        eng = BV.MuJoCo(robot, integrator)
        self.m, self.qadr, self.vadr = eng.m, eng.qadr, eng.vadr
        if self.m.nu:
            raise ValueError('%s: expected a model without actuators' % robot.name)
        self.spec = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
        self.nstate = mujoco.mj_stateSize(self.m, self.spec)
        self.pools = {}
        self.scratch = mujoco.MjData(self.m)

    def pool(self, threads):
        if threads not in self.pools:
            # nthread 0: MuJoCo runs the rollout on the calling thread (no pool)
            self.pools[threads] = (mujoco.rollout.Rollout(nthread=0 if threads == 1
                                                          else threads),
                                   [mujoco.MjData(self.m) for _ in range(threads)])
        return self.pools[threads]

    def states(self, q0, v0):
        """(B, nstate) full physics states with qpos, qvel from q0, v0 (B, n) at t = 0."""
        m, d = self.m, self.scratch
        out = np.zeros((q0.shape[0], self.nstate))
        for b in range(q0.shape[0]):
            mujoco.mj_resetData(m, d)
            d.qpos[self.qadr] = q0[b]
            d.qvel[self.vadr] = v0[b]
            mujoco.mj_getState(m, d, out[b], self.spec)
        return out

    def run(self, initial, steps, threads, out):
        """(wall time [s], process CPU time [s], final q (B, n), final v (B, n)); ``out``
        (B, steps, nstate),
        C-contiguous, is the state array MuJoCo writes into (any other array it would copy
        inside the timed call)."""
        runner, datas = self.pool(threads)
        if out.shape != (initial.shape[0], steps, self.nstate) or not out.flags.c_contiguous:
            raise ValueError('out: expected a C-contiguous array of shape %s'
                             % ((initial.shape[0], steps, self.nstate),))
        wall, cpu, _ = timed(lambda: runner.rollout(self.m, datas, initial, nstep=steps,
                                                    state=out))
        last = out[:, -1]
        d = self.scratch
        q, v = np.zeros((len(last), len(self.qadr))), np.zeros((len(last), len(self.vadr)))
        for b, s in enumerate(last):
            mujoco.mj_setState(self.m, d, s, self.spec)
            q[b], v[b] = d.qpos[self.qadr], d.qvel[self.vadr]
        if abs(d.time - steps * DT) > 1e-9:
            raise RuntimeError('MuJoCo rolled out to t = %g s, expected %g' % (d.time,
                                                                            steps * DT))
        return wall, cpu, q, v

    def close(self):
        for runner, _ in self.pools.values():
            runner.close()
        self.pools = {}


def random_states(robot, batch, seed):
    """q0, v0 (B, n): every joint in +-0.5 rad or m, every velocity in +-0.5 rad/s or m/s."""
    rng = np.random.default_rng(seed)
    n = len(robot.joints)
    return rng.uniform(-0.5, 0.5, (batch, n)), rng.uniform(-0.5, 0.5, (batch, n))


def timed(call):
    """(wall time [s], CPU time of this process, every thread [s], call())."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = call()
    return time.perf_counter() - t0, time.process_time() - c0, out


def fastest(run, repeats):
    """The call with the smallest wall time of ``repeats`` calls of run() -> (wall, ...)."""
    return min((run() for _ in range(max(1, repeats))), key=lambda r: r[0])


# ---------------------------------------------------------------------- 1. free motion
def free_motion(names, batches, steps, repeats, seed):
    """(rows, overhead): rows {model, B, T, steps, ros, rk4, euler [s] wall and the same
    with ``_cpu`` [s] CPU, dq, dv} of the free-motion runs; overhead {model: (ros_vi,
    MuJoCo RK4 or None)} [s], the fastest of 5 calls with B = 1 and one step (the fixed cost
    of a call: argument checks, packing, thread pool hand-over)."""
    rows, overhead = [], {}
    for name in names:
        robot = BV.urdf_robot(name, R.shipped(name))
        ours = RosVIRollout(robot)
        theirs = {}
        if mujoco is not None:
            theirs = {integ: MuJoCoRollout(robot, integ) for integ in ('RK4', 'Euler')}
        q1, v1 = random_states(robot, 1, seed)
        ours.run(q1, v1, 1, 1)
        overhead[name] = [fastest(lambda: ours.run(q1, v1, 1, 1), 5)[0], None]
        if theirs:
            eng, one = theirs['RK4'], np.empty((1, 1, theirs['RK4'].nstate))
            s1 = eng.states(q1, v1)
            overhead[name][1] = fastest(lambda: eng.run(s1, 1, 1, one), 5)[0]
        for batch in batches:
            q0, v0 = random_states(robot, batch, seed)
            ours.run(q0, v0, min(steps, 10), None)          # warm-up (kernel load)
            initial, out, warm = None, None, None
            if theirs:
                initial = theirs['RK4'].states(q0, v0)
                out = np.empty((batch, steps, theirs['RK4'].nstate))
                warm = np.empty((batch, min(steps, 10), theirs['RK4'].nstate))
            for threads in thread_counts():
                row = dict(model=name, B=batch, T=threads, steps=steps)
                row['ros'], row['ros_cpu'], q, v = fastest(
                    lambda: ours.run(q0, v0, steps, threads), repeats)
                for integ, eng in theirs.items():
                    eng.run(initial, min(steps, 10), threads, warm)      # warm-up
                    wall, cpu, mq, mv = fastest(
                        lambda: eng.run(initial, steps, threads, out), repeats)
                    row[integ.lower()], row[integ.lower() + '_cpu'] = wall, cpu
                    if integ == 'RK4':
                        dq = np.max(np.abs(q - mq), axis=1)
                        row['dq'], row['dq_median'] = float(np.max(dq)), float(np.median(dq))
                        row['v_max'] = float(np.max(np.abs(mv)))
                        row['dv'] = float(np.max(np.abs(v - mv)))
                rows.append(row)
                print('  %s B=%d T=%d: ros_vi %.2f us/step%s' % (
                    name, batch, threads, 1e6 * row['ros'] / (batch * steps),
                    ', MuJoCo RK4 %.2f' % (1e6 * row['rk4'] / (batch * steps))
                    if 'rk4' in row else ''), file=sys.stderr, flush=True)
        for eng in theirs.values():
            eng.close()
    return rows, overhead


def efficiency(rows, key, row):
    """t_1 / (T t_T) of ``key`` for ``row``'s model and B (None without a 1-thread row)."""
    one = [r for r in rows if r['model'] == row['model'] and r['B'] == row['B']
           and r['T'] == 1 and key in r]
    if not one or key not in row:
        return None
    return one[0][key] / (row['T'] * row[key])


# ---------------------------------------------------------------------- 2. closed loop
def pendulum_rollout(q0, v0, duration, threads, target=None):
    demo = DEMOS['pendulum']
    plant, controller = demo.model(), demo.controller(demo.model(), dt=DT)
    return ros_vi.rollout(plant, q0, v0, controller, duration, DT, threads=threads,
                          target=target)


def closed_loop(batches, steps, repeats, seed):
    rows = []
    rng = np.random.default_rng(seed)
    for batch in batches:
        q0 = rng.uniform(-math.pi, math.pi, (batch, 1))
        v0 = rng.uniform(-6.0, 6.0, (batch, 1))
        pendulum_rollout(q0, v0, min(steps, 10) * DT, None)          # warm-up
        for threads in thread_counts():
            wall, cpu, res = fastest(
                lambda: timed(lambda: pendulum_rollout(q0, v0, steps * DT, threads)), repeats)
            general = int(np.sum(res.path != 'compiled'))
            rows.append(dict(model='pendulum swing-up+LQR', B=batch, T=threads, steps=steps,
                             ros=wall, ros_cpu=cpu, general=general,
                             failed=int(np.sum(~res.ok))))
            print('  closed loop B=%d T=%d: %.2f us/step' % (
                batch, threads, 1e6 * wall / (batch * steps)), file=sys.stderr, flush=True)
    return rows


# ---------------------------------------------------------------------- 3. basin map
def basin_grid(n):
    """theta (n,) in [-pi, pi) [rad] and dtheta (n,) in [-6, 6] [rad/s]."""
    return (-math.pi + 2.0 * math.pi * np.arange(n) / n, np.linspace(-6.0, 6.0, n))


def basin(n, rows_used, duration, block_rows=10):
    """Run the dtheta rows ``rows_used`` of the n x n grid, all cores, ``block_rows`` rows
    per rollout call.  Returns (wall time [s] and process CPU time [s] summed over the calls,
    time_to_target (len(rows_used), n) [s], copies that failed)."""
    theta, dtheta = basin_grid(n)
    target = ros_vi.Target(**BASIN_TARGET_SET)
    pendulum_rollout(np.zeros((1, 1)), np.zeros((1, 1)), 10 * DT, None)      # warm-up
    ttt = np.full((len(rows_used), n), np.nan)
    wall, cpu, failed = 0.0, 0.0, 0
    for start in range(0, len(rows_used), block_rows):
        chunk = rows_used[start:start + block_rows]
        q0 = np.tile(theta, len(chunk))[:, None]
        v0 = np.repeat(dtheta[chunk], n)[:, None]
        w, c, res = timed(lambda: pendulum_rollout(q0, v0, duration, cores(), target))
        wall, cpu = wall + w, cpu + c
        failed += int(np.sum(~res.ok))
        ttt[start:start + len(chunk)] = res.time_to_target.reshape(len(chunk), n)
        print('  basin rows %d/%d: %.1f s so far' % (start + len(chunk), len(rows_used), wall),
              file=sys.stderr, flush=True)
    return wall, cpu, ttt, failed


# ---------------------------------------------------------------------- output
def _us(wall, row):
    return 1e6 * wall / (row['B'] * row['steps'])


def _fmt(x, spec):
    return '-' if x is None or not np.isfinite(x) else spec % x


def print_free(rows, horizon):
    print('\n## 1. Free motion, no input: µs per step per copy (%g s = %d steps, dt = 1 ms)\n'
          % (horizon, rows[0]['steps'] if rows else 0))
    print('| model | B | threads | ros_vi µs/step | ros_vi steps/s | MuJoCo RK4 µs/step '
          '| MuJoCo Euler µs/step | ros_vi / RK4 | scaling ros_vi | scaling RK4 '
          '| CPU µs/step ros_vi, RK4 | abs dq vs RK4: max, median of copies | max abs dv '
          '| max abs v |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    for r in rows:
        ours = _us(r['ros'], r)
        rk4 = _us(r['rk4'], r) if 'rk4' in r else None
        euler = _us(r['euler'], r) if 'euler' in r else None
        scale = [efficiency(rows, k, r) if r['T'] > 1 else None for k in ('ros', 'rk4')]
        cpu = '%.2f, %s' % (_us(r['ros_cpu'], r),
                            _fmt(_us(r['rk4_cpu'], r) if 'rk4' in r else None, '%.2f'))
        print('| %s | %d | %d | %.2f | %.3g | %s | %s | %s | %s | %s | %s | %s |' % (
            r['model'], r['B'], r['T'], ours, 1e6 / ours,
            _fmt(rk4, '%.2f') if mujoco else 'not installed', _fmt(euler, '%.2f'),
            _fmt(ours / rk4 if rk4 else None, '%.2f'), _fmt(scale[0], '%.2f'),
            _fmt(scale[1], '%.2f'), cpu,
            '%.1e, %.1e | %.1e | %.3g' % (r['dq'], r['dq_median'], r['dv'], r['v_max'])
            if 'dq' in r else '- | - | -'))


def print_closed(rows):
    print('\n## 2. Closed loop: pendulum swing-up + LQR (compiled law), ros_vi only\n')
    print('| model | B | threads | µs/step | steps/s | scaling | CPU µs/step '
          '| copies not compiled / failed |')
    print('|---|---|---|---|---|---|---|---|')
    for r in rows:
        us = _us(r['ros'], r)
        scale = efficiency(rows, 'ros', r) if r['T'] > 1 else None
        print('| %s | %d | %d | %.2f | %.3g | %s | %.2f | %d / %d |' % (
            r['model'], r['B'], r['T'], us, 1e6 / us, _fmt(scale, '%.2f'),
            _us(r['ros_cpu'], r), r['general'], r['failed']))
    print('\nMuJoCo: not run; mujoco.rollout applies open-loop controls (B x steps x nu '
          'given beforehand), so it cannot close a feedback loop inside the rollout.')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--horizon', type=float, default=1.0,
                    help='simulated time per free-motion rollout [s] (default 1)')
    ap.add_argument('--batches', type=int, nargs='+', default=[1, 64, 1024])
    ap.add_argument('--models', nargs='+', default=list(MODELS), choices=MODELS)
    ap.add_argument('--repeats', type=int, default=2,
                    help='timed calls per row; the fastest is reported (default 2)')
    ap.add_argument('--closed-horizon', type=float, default=1.0,
                    help='simulated time per closed-loop rollout [s] (default 1)')
    ap.add_argument('--closed-batches', type=int, nargs='+', default=[64, 1024])
    ap.add_argument('--basin', choices=('full', 'slice', 'off'), default='full',
                    help='the whole basin map, a slice of it (extrapolated), or none')
    ap.add_argument('--grid', type=int, default=200, help='basin grid points per axis')
    ap.add_argument('--basin-rows', type=int, default=4,
                    help='dtheta rows of the grid in a slice (default 4)')
    ap.add_argument('--basin-duration', type=float, default=10.0,
                    help='simulated time per basin copy [s] (default 10)')
    ap.add_argument('--save', metavar='NPZ',
                    help='write the basin map (theta, dtheta, time_to_target) to this file')
    ap.add_argument('--seed', type=int, default=0)
    args = ap.parse_args(argv)
    for name in ('horizon', 'closed_horizon', 'basin_duration'):
        if not getattr(args, name) > 0:
            ap.error('--%s must be > 0' % name.replace('_', '-'))
    for name in ('batches', 'closed_batches'):
        if min(getattr(args, name)) < 1:
            ap.error('--%s must be >= 1' % name.replace('_', '-'))
    if args.grid < 1 or not 1 <= args.basin_rows <= args.grid:
        ap.error('--grid must be >= 1 and --basin-rows in 1..--grid')

    steps = int(round(args.horizon / DT))
    closed_steps = int(round(args.closed_horizon / DT))
    print('# Batched rollouts: ros_vi.rollout vs mujoco.rollout')
    print('dt = 1 ms; %d cores (numba %d threads); MuJoCo %s; %s; %s UTC' % (
        os.cpu_count() or 0, cores(), mujoco.__version__ if mujoco else 'not installed',
        load(), time.strftime('%Y-%m-%d %H:%M', time.gmtime())))
    robot = BV.urdf_robot('pendulum', R.shipped('pendulum'))
    start = time.perf_counter()
    RosVIRollout(robot).run(np.full((2, 1), 0.1), np.zeros((2, 1)), 2, None)
    print('first ros_vi.rollout call in this process (kernel compile or cache load): %.1f s'
          % (time.perf_counter() - start))

    free, overhead = free_motion(args.models, args.batches, steps, args.repeats, args.seed)
    print_free(free, args.horizon)
    print('\nFixed cost of one call (B = 1, one step, 1 thread; fastest of 5): '
          + '; '.join('%s: ros_vi %.0f µs, MuJoCo RK4 %s' % (
              name, 1e6 * ours, '%.0f µs' % (1e6 * theirs) if theirs is not None else '-')
                      for name, (ours, theirs) in overhead.items()))
    closed = closed_loop(args.closed_batches, closed_steps, args.repeats, args.seed)
    print_closed(closed)

    basin_result = None
    if args.basin != 'off':
        n = args.grid
        used = (np.arange(n) if args.basin == 'full' else
                np.unique(np.round(np.linspace(0, n - 1, args.basin_rows)).astype(int)))
        before = load()
        wall, cpu, ttt, failed = basin(n, used, args.basin_duration)
        after = load()
        whole = wall * n / len(used)
        copies = ttt.size
        success = float(np.mean(np.isfinite(ttt)))
        basin_steps = copies * int(round(args.basin_duration / DT))
        kind = 'measured' if len(used) == n else (
            'EXTRAPOLATED from %d of %d rows (%d copies): wall x %.4g' % (
                len(used), n, copies, n / len(used)))
        print('\n## 3. Basin of attraction of the pendulum swing-up (%d x %d states, %g s '
              'each, all %d cores)\n' % (n, n, args.basin_duration, cores()))
        print('| run | copies | steps | wall [s] | µs/step per copy | steps/s | CPU / wall '
              '| success | median time to target [s] | failed copies | whole map [s] '
              '| whole map, CPU time / %d cores [s] |' % cores())
        print('|---|---|---|---|---|---|---|---|---|---|---|---|')
        print('| %s | %d | %.3g | %.1f | %.3f | %.3g | %.2f | %.1f %% | %s | %d | %.0f (%s) '
              '| %.0f |' % (
                  args.basin, copies, basin_steps, wall, 1e6 * wall / basin_steps,
                  basin_steps / wall, cpu / wall, 100 * success,
                  _fmt(np.nanmedian(ttt) if success else None, '%.2f'), failed, whole, kind,
                  cpu / cores() * n / len(used)))
        print('\nsuccess: time_to_target finite for Target(goal=[pi], q_tol=0.05, '
              'v_tol=0.1), i.e. inside from some time on until %g s; %s before, %s after'
              % (args.basin_duration, before, after))
        if args.save:
            theta, dtheta = basin_grid(n)
            np.savez(args.save, theta=theta, dtheta=dtheta[used], time_to_target=ttt)
            print('basin map written to %s' % args.save)
        basin_result = (whole, kind)

    # ------------------------------------------------------------ targets
    print('\n## Targets\n')
    missed = []

    def verdict(text, ok):
        if ok is None:
            print('%s: not measured' % text)
            return
        print('%s: %s' % (text, 'met' if ok else 'MISSED'))
        if not ok:
            missed.append(text)

    largest = max(args.batches)
    for r in free:
        if r['B'] != largest:
            continue
        if r['T'] == 1:
            if 'rk4' in r:
                ratio = r['ros'] / r['rk4']
                verdict('%s, B = %d, 1 thread: ros_vi / MuJoCo RK4 = %.2f (CPU time: %.2f; '
                        'target <= 1)' % (r['model'], largest, ratio,
                                          r['ros_cpu'] / r['rk4_cpu']), ratio <= 1.0)
            else:
                verdict('%s, B = %d, 1 thread: ros_vi / MuJoCo RK4 (MuJoCo not installed)'
                        % (r['model'], largest), None)
        else:
            eff = efficiency(free, 'ros', r)
            verdict('%s, B = %d: ros_vi scaling to %d threads %.0f %% (target >= %.0f %%)'
                    % (r['model'], largest, r['T'], 100 * eff, 100 * SCALING_TARGET),
                    eff >= SCALING_TARGET)
    for r in closed:
        if r['B'] == max(args.closed_batches) and r['T'] > 1:
            eff = efficiency(closed, 'ros', r)
            verdict('closed loop, B = %d: ros_vi scaling to %d threads %.0f %% (target >= '
                    '%.0f %%)' % (r['B'], r['T'], 100 * eff, 100 * SCALING_TARGET),
                    eff >= SCALING_TARGET)
    if basin_result is not None:
        whole, kind = basin_result
        verdict('basin map %d x %d: %.0f s, %s (target < %.0f s)' % (
            args.grid, args.grid, whole, kind.split(':')[0], BASIN_TARGET),
                whole < BASIN_TARGET)
    print('%s; %s' % ('all targets met' if not missed else
                      '%d target(s) missed' % len(missed), load()))
    return 1 if missed else 0


if __name__ == '__main__':
    sys.exit(main())
