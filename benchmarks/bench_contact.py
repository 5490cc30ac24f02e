"""Contact scenes against MuJoCo on the same bodies: penetration, creep, sliding, speed.

Scenes (dt = 1 ms, gravity 9.81 m/s^2, the closed forms of docs/contact.md):

* ``ball``: a solid ball (r = 0.1 m, 1 kg, mu = 0.5) dropped from 0.5 m onto the ground; after
  it settles (the last half of the run): the largest penetration r - z [m] and vertical speed
  [m/s] at the step ends.
* ``box stick``: a box 0.2 x 0.2 x 0.1 m, 2 kg, resting flat on a ramp of 0.3 rad, mu = 0.5
  (tan 0.3 < mu: it must not move); how far it crept down the ramp [m] by the end.
* ``box slide``: the same box on a 0.6 rad ramp (tan 0.6 > mu): its travel against
  s = g (sin a - mu cos a) t^2 / 2 (relative error at the end).

ros_vi: ``SphereOnPlane`` contacts (the ball's sphere, the box's four bottom corners) held
by MidpointVI's step (docs/contact.md).  MuJoCo: the same bodies as MJCF geoms on a plane,
its default contact model (soft constraints, pyramidal cone) with its default integrator
(Euler) and with RK4.  Reported per scene: the measure above and the mean µs per step over
the run (MuJoCo: ``mj_step``; ros_vi: ``MidpointVI.step``), and the ratio of ros_vi's step
time to each MuJoCo's, measured in the same run.

    python benchmarks/bench_contact.py [--seconds 3]

MuJoCo is a benchmark-only extra (requirements-bench.txt); without it its columns say
``not installed``.
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))        # this checkout's ros_vi

import ros_vi as trep  # noqa: E402
from ros_vi.contact import SphereOnPlane  # noqa: E402
from ros_vi.mechanics import FreeJoint  # noqa: E402

try:
    import mujoco
except ImportError:                 # a benchmark-only extra
    mujoco = None

G, DT, MU = 9.81, 1e-3, 0.5
R, BALL_MASS, DROP = 0.1, 1.0, 0.5
W, H, BOX_MASS = 0.2, 0.1, 2.0


def box_inertia():
    return BOX_MASS / 12.0 * np.array([W * W + H * H, W * W + H * H, 2 * W * W])


# ---------------------------------------------------------------------- ros_vi
def ros_vi_ball():
    s = trep.System()
    body = FreeJoint(s.world_frame, 'ball')
    body.body.set_inertia(BALL_MASS, 0.4 * BALL_MASS * R * R * np.eye(3))
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    SphereOnPlane(s, body.body, radius=R, friction=MU)
    mvi = trep.MidpointVI(s, min_iterations=1)
    q0 = np.zeros(6)
    q0[2] = DROP
    mvi.initialize_from_state(0.0, q0, np.zeros(6))
    return mvi, lambda: mvi.q2[:3].copy()


def ros_vi_box(angle):
    s = trep.System()
    body = FreeJoint(s.world_frame, 'box')
    body.body.set_inertia(BOX_MASS, np.diag(box_inertia()))
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    normal = np.array([np.sin(angle), 0.0, np.cos(angle)])
    for x, y in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        SphereOnPlane(s, body.body, offset=(x * W / 2, y * W / 2, -H / 2),
                      plane_normal=normal, friction=MU)
    mvi = trep.MidpointVI(s, min_iterations=1)
    q0 = np.zeros(6)
    q0[:3] = 0.5 * H * normal
    q0[4] = angle
    mvi.initialize_from_state(0.0, q0, np.zeros(6))
    return mvi, lambda: mvi.q2[:3].copy()


def run_ros_vi(made, steps):
    mvi, position = made
    out = np.empty((steps, 3))
    start = time.perf_counter()
    for k in range(1, steps + 1):
        mvi.step(k * DT)
        out[k - 1] = position()
    return out, (time.perf_counter() - start) / steps * 1e6


# ---------------------------------------------------------------------- MuJoCo
def mjcf(body, ground_euler=0.0, integrator='Euler'):
    return ('<mujoco><compiler angle="radian"/><option timestep="%g" gravity="0 0 %g" '
            'integrator="%s"/><worldbody><geom type="plane" size="10 10 0.1" '
            'euler="0 %.17g 0" friction="%g 0.005 0.0001"/>%s</worldbody></mujoco>'
            % (DT, -G, integrator, ground_euler, MU, body))


def mujoco_ball(integrator):
    body = ('<body pos="0 0 %.17g"><freejoint/><geom type="sphere" size="%.17g" mass="%.17g" '
            'friction="%g 0.005 0.0001"/></body>' % (DROP, R, BALL_MASS, MU))
    return mjcf(body, 0.0, integrator)


def mujoco_box(angle, integrator):
    n = np.array([np.sin(angle), 0.0, np.cos(angle)]) * 0.5 * H
    body = ('<body pos="%.17g %.17g %.17g" euler="0 %.17g 0"><freejoint/><inertial '
            'pos="0 0 0" mass="%.17g" diaginertia="%.17g %.17g %.17g"/><geom type="box" '
            'size="%.17g %.17g %.17g" '
            'friction="%g 0.005 0.0001"/></body>'
            % (n[0], n[1], n[2], angle, BOX_MASS, *box_inertia(), W / 2, W / 2, H / 2, MU))
    return mjcf(body, angle, integrator)


def run_mujoco(xml, steps):
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    out = np.empty((steps, 3))
    start = time.perf_counter()
    for k in range(steps):
        mujoco.mj_step(model, data)
        out[k] = data.qpos[:3]
    return out, (time.perf_counter() - start) / steps * 1e6


# ---------------------------------------------------------------------- measures
def ball_measure(x):
    rest = x[len(x) // 2:, 2]
    return max(float(np.max(R - rest)), 0.0), float(np.abs(np.diff(rest)).max() / DT)


def creep(x, angle):
    downhill = np.array([np.cos(angle), 0.0, -np.sin(angle)])
    return float(abs((x[-1] - x[0]) @ downhill))


def slide_error(x, angle, x0):
    downhill = np.array([np.cos(angle), 0.0, -np.sin(angle)])
    t = DT * len(x)
    exact = 0.5 * G * (np.sin(angle) - MU * np.cos(angle)) * t * t
    return float(abs((x[-1] - x0) @ downhill - exact) / exact)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seconds', type=float, default=3.0, help='simulated time per scene')
    args = parser.parse_args(argv)
    steps = int(round(args.seconds / DT))
    x0_box = 0.5 * H * np.array([np.sin(0.6), 0.0, np.cos(0.6)])
    scenes = [
        ('ball: penetration at rest [m]', ros_vi_ball, lambda i: mujoco_ball(i),
         lambda x: '%.1e' % ball_measure(x)[0]),
        ('ball: vertical speed at rest [m/s]', ros_vi_ball, lambda i: mujoco_ball(i),
         lambda x: '%.1e' % ball_measure(x)[1]),
        ('box stick (0.3 rad): creep [m]', lambda: ros_vi_box(0.3),
         lambda i: mujoco_box(0.3, i), lambda x: '%.1e' % creep(x, 0.3)),
        ('box slide (0.6 rad): travel error', lambda: ros_vi_box(0.6),
         lambda i: mujoco_box(0.6, i),
         lambda x: '%.1e' % slide_error(x, 0.6, x0_box)),
    ]
    print('contact scenes, %g s at dt = %g s (mu = %g)' % (args.seconds, DT, MU))
    print('| scene | ros_vi | MuJoCo Euler | MuJoCo RK4 | ros_vi µs/step | Euler µs | '
          'RK4 µs | ros_vi / Euler | ros_vi / RK4 |')
    print('|---|---|---|---|---|---|---|---|---|')
    for title, ours, theirs, measure in scenes:
        x, t_ours = run_ros_vi(ours(), steps)
        row = [measure(x)]
        times = []
        for integrator in ('Euler', 'RK4'):
            if mujoco is None:
                row.append('not installed')
                times.append(np.nan)
                continue
            xm, tm = run_mujoco(theirs(integrator), steps)
            row.append(measure(xm))
            times.append(tm)
        print('| %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f |'
              % (title, row[0], row[1], row[2], t_ours, times[0], times[1],
                 t_ours / times[0], t_ours / times[1]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
