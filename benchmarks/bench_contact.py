"""Contact scenes against MuJoCo on the same bodies: penetration, creep, sliding, speed.

Scenes (dt = 1 ms, gravity 9.81 m/s^2, the closed forms of docs/contact.md):

* ``ball``: a solid ball (r = 0.1 m, 1 kg, mu = 0.5) dropped from 0.5 m onto the ground; after
  it settles (the last half of the run): the largest penetration r - z [m] and vertical speed
  [m/s] at the step ends.
* ``box stick``: a box 0.2 x 0.2 x 0.1 m, 2 kg, resting flat on a ramp of 0.3 rad, mu = 0.5
  (tan 0.3 < mu: it must not move); how far it crept down the ramp [m] by the end.
* ``box slide``: the same box on a 0.6 rad ramp (tan 0.6 > mu): its travel against
  s = g (sin a - mu cos a) t^2 / 2 (relative error at the end).

* ``quadruped``: the shipped 12-joint quadruped (urdf/quadruped.urdf, 12.9 kg) on a floating
  base, its four sphere feet 10 µm above the ground (mu = 0.8), every joint held at the
  standing pose by a position drive (the same kp, kd in both: ros_vi's default drive gains
  at 1 kHz); how far its base drifted over the run's last half (after it settled on its
  drives) [m], and the deepest any foot went below the ground [m].  ros_vi: ``Simulation`` of
  worlds/quadruped_stand.yaml (the drives inside the VI step; contacts from the URDF's
  collision spheres, box corners and cylinder rims, 108 of them); MuJoCo: the same URDF through
  ``MjSpec`` with a free joint, a ground plane, its collision geoms against the ground only,
  the drives as ``kp (q_ref - q) - kd q'`` in ``qfrc_applied`` each step.

* ``stack``: worlds/stack.yaml, five boxes stacked (each smaller, shifted and turned a
  little), dropped from 10 µm, mu = 0.8: how far the top box drifted over the run's last
  half [m] and the deepest penetration after the first 10 steps (the landing) [m].  ros_vi:
  ``Simulation`` of the world (its corners on the faces below, ``SphereOnBox``, 200
  contacts); MuJoCo: the same boxes as MJCF box geoms on free joints.

* ``wheel``: a solid cylinder (r = 0.1 m, 5 cm wide, 1 kg) on its side rolling at 1 m/s
  on the ground (mu = 0.8): its centre's largest height error |z - r| [m] and how much
  speed it lost by the end [m/s] (rolling, it should lose none).  ros_vi: a world file's
  cylinder object (its caps' rims on the ground); MuJoCo: an MJCF cylinder geom.

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


def run_mujoco(xml, steps, qvel=None):
    """Step the MJCF ``xml`` (from velocities ``qvel``, default rest): the first body's
    position (steps, 3) [m] and µs per step."""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    if qvel is not None:
        data.qvel[:] = qvel
    out = np.empty((steps, 3))
    start = time.perf_counter()
    for k in range(steps):
        mujoco.mj_step(model, data)
        out[k] = data.qpos[:3]
    return out, (time.perf_counter() - start) / steps * 1e6


# ---------------------------------------------------------------------- the quadruped
QUADRUPED_WORLD = os.path.join(os.path.dirname(HERE), 'worlds', 'quadruped_stand.yaml')
FOOT_RADIUS = 0.02


def ros_vi_quadruped():
    """(step, base position, lowest foot gap, drive gains, standing pose, start q): the
    Simulation of the world file at 1/DT with its joints held where it starts."""
    from ros_vi.mechanics.contact import ContactSet
    from ros_vi.simulation import Simulation
    sim = Simulation.from_world(QUADRUPED_WORLD, rate=1.0 / DT)
    state = sim.state()
    start = dict(zip(state.joint_names, state.positions))
    pose = {name: start[name] for name in sim.actuated_joint_names}
    sim.set_commands(pose, interface='position')
    feet = ContactSet(sim.system, [c for c in sim.system.contacts if '_foot_ground_' in c.name])

    def base():
        return sim.free_bodies()['dog/trunk'].pose[:3, 3]

    def lowest_foot():
        return float(feet.kinematics(sim.mvi.q2)[0].min())
    return sim.tick, base, lowest_foot, sim.drive_gains(), pose


def run_ros_vi_quadruped(steps):
    tick, base, lowest, _, _ = ros_vi_quadruped()
    out = np.empty((steps, 3))
    gaps = np.empty(steps)
    elapsed = 0.0
    for k in range(steps):
        start = time.perf_counter()
        tick()
        elapsed += time.perf_counter() - start
        out[k] = base()
        gaps[k] = lowest()
    return out, gaps, elapsed / steps * 1e6


def run_mujoco_quadruped(integrator, steps):
    """The quadruped in MuJoCo (module docstring): base positions and the lowest foot's
    gap (its sphere's centre height minus the radius) per step, µs per ``mj_step``."""
    _, _, _, gains, pose = ros_vi_quadruped()
    with open(os.path.join(os.path.dirname(HERE), 'urdf', 'quadruped.urdf'),
              encoding='utf-8') as fh:
        spec = mujoco.MjSpec.from_string(fh.read())
    spec.compiler.discardvisual = True
    spec.body('trunk').add_freejoint()
    for geom in spec.geoms:
        geom.conaffinity = 0                  # the robot's geoms touch the ground only
        geom.friction = [0.8, 0.005, 0.0001]
    floor = spec.worldbody.add_geom()
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [10.0, 10.0, 0.1]
    floor.friction = [0.8, 0.005, 0.0001]
    floor.conaffinity = 1
    model = spec.compile()
    model.opt.timestep = DT
    model.opt.integrator = getattr(mujoco.mjtIntegrator, 'mjINT_' + integrator.upper())
    data = mujoco.MjData(model)
    names = [n.split('/', 1)[1] for n in pose]
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in names]
    qadr, vadr = model.jnt_qposadr[ids], model.jnt_dofadr[ids]
    q_ref = np.array(list(pose.values()))
    kp = np.array([gains[n][0] for n in pose])
    kd = np.array([gains[n][1] for n in pose])
    with open(QUADRUPED_WORLD, encoding='utf-8') as fh:
        height = float(fh.read().split('xyz: [0, 0, ')[1].split(']')[0])
    data.qpos[:7] = [0.0, 0.0, height, 1.0, 0.0, 0.0, 0.0]
    data.qpos[qadr] = q_ref
    foot_bodies = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, leg + '_calf')
                   for leg in ('FL', 'FR', 'RL', 'RR')]
    mujoco.mj_forward(model, data)
    out = np.empty((steps, 3))
    gaps = np.empty(steps)
    elapsed = 0.0
    for k in range(steps):
        start = time.perf_counter()
        data.qfrc_applied[vadr] = kp * (q_ref - data.qpos[qadr]) - kd * data.qvel[vadr]
        mujoco.mj_step(model, data)
        elapsed += time.perf_counter() - start
        out[k] = data.qpos[:3]
        # the foot sphere sits 0.213 m down the calf (the URDF's fixed foot joint)
        feet = [data.xpos[b] + data.xmat[b].reshape(3, 3) @ np.array([0.0, 0.0, -0.213])
                for b in foot_bodies]
        gaps[k] = min(f[2] for f in feet) - FOOT_RADIUS
    return out, gaps, elapsed / steps * 1e6


def quadruped_rows(seconds):
    """The quadruped's two table rows: drift over the run's last half (after it settled on
    its drives) and penetration."""
    steps = int(round(seconds / DT))
    settle = steps // 2
    runs = [run_ros_vi_quadruped(steps)]
    for integrator in ('Euler', 'RK4'):
        runs.append(run_mujoco_quadruped(integrator, steps) if mujoco is not None else None)

    def drift(x):
        return '%.1e' % float(np.abs(x[settle:] - x[settle]).max())
    rows = []
    for title, measure in (('quadruped standing: base drift, last half [m]',
                            lambda run: drift(run[0])),
                           ('quadruped standing: deepest foot penetration [m]',
                            lambda run: '%.1e' % max(-float(run[1].min()), 0.0))):
        cells = [measure(run) if run is not None else 'not installed' for run in runs]
        times = [run[2] if run is not None else np.nan for run in runs]
        rows.append((title, cells, times))
    return rows


# ---------------------------------------------------------------------- the stack
STACK_WORLD = os.path.join(os.path.dirname(HERE), 'worlds', 'stack.yaml')


def run_ros_vi_stack(steps):
    """worlds/stack.yaml at 1 kHz: the top box's position (steps, 3) [m], the smallest
    gap at each step end (steps,) [m] and µs per step."""
    from ros_vi.simulation import Simulation
    sim = Simulation.from_world(STACK_WORLD, rate=1.0 / DT)
    top = [sim.system.get_config('box4' + axis).index for axis in ('_x', '_y', '_z')]
    out, gaps = np.empty((steps, 3)), np.empty(steps)
    start = time.perf_counter()
    for k in range(steps):
        sim.step()
        out[k] = sim.mvi.q2[top]
        gaps[k] = sim.mvi.contact_gaps.min()
    return out, gaps, (time.perf_counter() - start) / steps * 1e6


def run_mujoco_stack(integrator, steps):
    """The same five boxes (sizes, masses, inertias, poses of worlds/stack.yaml) as MJCF box
    geoms on free joints on a plane, mu 0.8: the top box's position, the deepest
    penetration at each step end (MuJoCo's contact distance, negative inside) and µs."""
    from ros_vi.simulation.world import load_world
    world = load_world(STACK_WORLD)
    bodies = []
    for obj in world.objects:
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(obj.pose[:3, :3]).ravel())
        bodies.append('<body pos="%.17g %.17g %.17g" quat="%.17g %.17g %.17g %.17g">'
                      '<freejoint/><inertial pos="0 0 0" mass="%.17g" diaginertia="%.17g '
                      '%.17g %.17g"/><geom type="box" size="%.17g %.17g %.17g" friction="0.8 '
                      '0.005 0.0001"/></body>' % (*obj.pose[:3, 3], *quat, obj.mass,
                                                  *np.diag(obj.inertia),
                                                  *(0.5 * np.array(obj.size))))
    xml = ('<mujoco><option timestep="%g" gravity="0 0 %g" integrator="%s"/><worldbody>'
           '<geom type="plane" size="10 10 0.1" friction="0.8 0.005 0.0001"/>%s'
           '</worldbody></mujoco>' % (DT, -G, integrator, ''.join(bodies)))
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    top = 7 * (len(world.objects) - 1)
    out, gaps = np.empty((steps, 3)), np.empty(steps)
    start = time.perf_counter()
    for k in range(steps):
        mujoco.mj_step(model, data)
        out[k] = data.qpos[top:top + 3]
        gaps[k] = min((data.contact[i].dist for i in range(data.ncon)), default=0.0)
    return out, gaps, (time.perf_counter() - start) / steps * 1e6


def stack_rows(seconds):
    """The stack's table rows: the top box's drift over the run's last half and the deepest
    penetration after landing."""
    steps = int(round(seconds / DT))
    settle = steps // 2
    runs = [run_ros_vi_stack(steps)]
    for integrator in ('Euler', 'RK4'):
        runs.append(run_mujoco_stack(integrator, steps) if mujoco is not None else None)
    rows = []
    for title, measure in (
            ('five stacked boxes: top box drift, last half [m]',
             lambda run: '%.1e' % float(np.linalg.norm(run[0][settle:] - run[0][settle],
                                                       axis=1).max())),
            ('five stacked boxes: deepest penetration [m]',
             lambda run: '%.1e' % max(-float(run[1][10:].min()), 0.0))):
        cells = [measure(run) if run is not None else 'not installed' for run in runs]
        times = [run[2] if run is not None else np.nan for run in runs]
        rows.append((title, cells, times))
    return rows


# ---------------------------------------------------------------------- the wheel
WHEEL_R, WHEEL_LENGTH, WHEEL_SPEED = 0.1, 0.05, 1.0
WHEEL_WORLD = """
gravity: [0, 0, -9.81]
ground: {height: 0.0, friction: 0.8}
objects:
  - {name: wheel, shape: {cylinder: [%r, %r]}, mass: 1.0,
     pose: {xyz: [0, 0, %r], rpy: [1.5707963267948966, 0, 0]},
     twist: {linear: [%r, 0, 0], angular: [0, %r, 0]}}
""" % (WHEEL_R, WHEEL_LENGTH, WHEEL_R, WHEEL_SPEED, WHEEL_SPEED / WHEEL_R)


def run_ros_vi_wheel(steps):
    """The rolling wheel at 1 kHz: its centre (steps, 3) [m] and µs per step."""
    from ros_vi.simulation import Simulation
    sim = Simulation.from_world(WHEEL_WORLD, rate=1.0 / DT)
    axes = [sim.system.get_config('wheel' + axis).index for axis in ('_x', '_y', '_z')]
    out = np.empty((steps, 3))
    start = time.perf_counter()
    for k in range(steps):
        sim.step()
        out[k] = sim.mvi.q2[axes]
    # the free joint's translation is along the initial pose's axes (x, z, -y)
    out[:, 1], out[:, 2] = -out[:, 2], out[:, 1] + WHEEL_R
    return out, (time.perf_counter() - start) / steps * 1e6


def run_mujoco_wheel(integrator, steps):
    """The same wheel as an MJCF cylinder geom on a free joint on a plane, mu 0.8."""
    inertia = (1.0 / 12 * (3 * WHEEL_R ** 2 + WHEEL_LENGTH ** 2),) * 2 + (0.5 * WHEEL_R ** 2,)
    xml = ('<mujoco><option timestep="%g" gravity="0 0 %g" integrator="%s"/><worldbody>'
           '<geom type="plane" size="10 10 0.1" friction="0.8 0.005 0.0001"/>'
           '<body pos="0 0 %r" euler="90 0 0"><freejoint/><inertial pos="0 0 0" mass="1" '
           'diaginertia="%r %r %r"/><geom type="cylinder" size="%r %r" '
           'friction="0.8 0.005 0.0001"/></body></worldbody></mujoco>'
           % (DT, -G, integrator, WHEEL_R, *inertia, WHEEL_R, WHEEL_LENGTH / 2))
    # (a free joint's angular velocity is in the body's axes: its z is the world's -y)
    return run_mujoco(xml, steps, (WHEEL_SPEED, 0, 0, 0, 0, -WHEEL_SPEED / WHEEL_R))


def wheel_rows(seconds):
    """The wheel's rows: the centre's largest height error |z - r| and its speed at the
    end against the 1 m/s it rolls at (no loss without rolling resistance)."""
    steps = int(round(seconds / DT))
    runs = [run_ros_vi_wheel(steps)]
    for integrator in ('Euler', 'RK4'):
        runs.append(run_mujoco_wheel(integrator, steps) if mujoco is not None else None)
    rows = []
    for title, measure in (
            ('wheel rolling at 1 m/s: height error [m]',
             lambda x: '%.1e' % float(np.abs(x[:, 2] - WHEEL_R).max())),
            ('wheel rolling at 1 m/s: speed lost at the end [m/s]',
             lambda x: '%.1e' % float(abs((x[-1, 0] - x[-2, 0]) / DT - WHEEL_SPEED)))):
        cells = [measure(run[0]) if run is not None else 'not installed' for run in runs]
        times = [run[1] if run is not None else np.nan for run in runs]
        rows.append((title, cells, times))
    return rows


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
    for title, cells, times in (quadruped_rows(args.seconds) + stack_rows(args.seconds)
                                + wheel_rows(args.seconds)):
        print('| %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f |'
              % (title, cells[0], cells[1], cells[2], times[0], times[1], times[2],
                 times[0] / times[1], times[0] / times[2]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
