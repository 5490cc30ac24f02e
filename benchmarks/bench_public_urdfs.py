"""How many public robot descriptions import, how fast, and how closely their dynamics agree
with Pinocchio's.

    .venv/bin/python -m pip download example-robot-data==6.0.0 --no-deps -d /tmp/erd
    (cd /tmp/erd && unzip -q example_robot_data-6.0.0-0-py3-none-any.whl -d x)
    .venv/bin/python benchmarks/bench_public_urdfs.py /tmp/erd/x [--states 3] [--repeat 3]

(or the folder in ``$ROS_VI_PUBLIC_URDFS``; without either, as under ``ros-vi bench``, the
script says how to get the set and stops with status 0: it never downloads anything.)

The set: every ``*.urdf`` and ``*.xacro`` file under the given folder (PyPI's
``example-robot-data`` 6.0.0 holds 69 URDFs and 2 xacro files of real robots: arms, hands,
quadrupeds, humanoids, mobile manipulators, drones).  It is a benchmark's input, not a
dependency of ros_vi.

For each file: :func:`ros_vi.urdf.import_urdf_file` with its defaults (fixed base, mimic
joints reduced, the inertia policy ``check``), the median wall time of ``--repeat`` imports
(after a warm-up import of another robot); a failure is recorded with the first line of its error.  For each robot that
imports, the mass matrix M(q) and the bias forces C(q, v) v + g(q) are compared with
Pinocchio's (``pin.buildModelFromXML`` of the same XML, with its mimic joints when the
robot has some) at ``--states`` random states (q, v uniform in +-1.2 rad and +-2 rad/s):
the largest of max |ours - Pinocchio's| / max |Pinocchio's| over M and the bias forces.
Geometry is not needed for the dynamics: a ``package://`` mesh that does not resolve only
warns.
"""
import argparse
import logging
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ros_vi.urdf import import_urdf_file, load_urdf_text  # noqa: E402


def descriptions(folder):
    """Sorted paths of the ``.urdf`` and ``.xacro`` files under ``folder``."""
    out = []
    for here, _, files in os.walk(folder):
        out += [os.path.join(here, f) for f in files if f.endswith(('.urdf', '.xacro'))]
    return sorted(out)


def _mimic_map(robot, names):
    """``(leader, multiplier, offset)`` of every moving URDF joint in terms of the configs
    ``names`` (a leader maps to itself, 1, 0; a chain of mimics is composed)."""
    out = {n: (n, 1.0, 0.0) for n in names}

    def resolve(name):
        if name not in out:
            ref, mult, off = robot.joint(name).mimic
            leader, m2, o2 = resolve(ref)
            out[name] = (leader, mult * m2, mult * o2 + off)
        return out[name]

    for name in robot.mimic_joint_names:
        resolve(name)
    return out


def pinocchio_difference(system, xml, states, seed):
    """Max relative difference of M and of the bias forces against Pinocchio's at
    ``states`` random states (our configs and Pinocchio's joints matched by name).

    Mimic joints (reduced here) are independent joints of Pinocchio's model, set to
    q_m = multiplier q_leader + offset; its M and bias forces are reduced by the constant
    Jacobian N of that map (N^T M N, N^T b), exactly what the reduction is."""
    import pinocchio as pin
    robot = system.urdf
    model = pin.buildModelFromXML(xml)
    data = model.createData()
    names = robot.joint_names
    column = {n: k for k, n in enumerate(names)}
    mimic = _mimic_map(robot, names)
    # M and the bias forces are over the dynamic configs: a joint moving no mass is a
    # kinematic config (massless='kinematic'), compared where Pinocchio has it only
    dynamic = {c.name for c in system.dyn_configs}
    compared = np.array([k for k, n in enumerate(names) if n in dynamic], dtype=int)
    ours = np.array([system.get_config(names[k]).index for k in compared], dtype=int)
    every = np.array([system.get_config(n).index for n in names], dtype=int)
    joints = {n: model.joints[model.getJointId(n)] for n in mimic}
    N = np.zeros((model.nv, len(names)))
    for n, (leader, mult, _) in mimic.items():
        N[joints[n].idx_v, column[leader]] = mult
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(states):
        q = rng.uniform(-1.2, 1.2, len(names))
        v = rng.uniform(-2.0, 2.0, len(names))
        qp, vp = pin.neutral(model), N @ v
        for n, (leader, mult, off) in mimic.items():
            j, qj = joints[n], mult * q[column[leader]] + off
            if j.nq == 2:           # continuous joint: (cos, sin)
                qp[j.idx_q:j.idx_q + 2] = np.cos(qj), np.sin(qj)
            else:
                qp[j.idx_q] = qj
        qs, vs = np.array(system.q), np.array(system.dq)
        qs[every], vs[every] = q, v
        system.set_state(q=qs, dq=vs)
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        b = pin.rnea(model, data, qp, vp, np.zeros(model.nv))
        Nd = N[:, compared]
        Mp, bp = Nd.T @ M @ Nd, Nd.T @ b
        Mo = system.mass_matrix()[np.ix_(ours, ours)]
        bo = system.bias_forces()[ours]
        worst = max(worst, np.abs(Mo - Mp).max() / max(np.abs(Mp).max(), 1e-300),
                    np.abs(bo - bp).max() / max(np.abs(bp).max(), 1e-300))
    return worst


def ament_prefixes(folder):
    """Install prefixes under ``folder`` that hold an ament index (example-robot-data's
    wheel has one: its xacro files include ``package://example-robot-data/...``)."""
    out = []
    for here, dirs, _ in os.walk(folder):
        if os.path.isdir(os.path.join(here, 'share', 'ament_index')):
            out.append(here)
            dirs[:] = []
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('folder', nargs='?', default=os.environ.get('ROS_VI_PUBLIC_URDFS'),
                    help='folder holding the robot descriptions (searched recursively; '
                         'default $ROS_VI_PUBLIC_URDFS)')
    ap.add_argument('--states', type=int, default=3, help='random states compared (3)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--repeat', type=int, default=3,
                    help='imports timed per description; the median is shown (3)')
    args = ap.parse_args(argv)
    if not args.folder:
        print('skipped: no folder of robot descriptions given (see the usage at the top of '
              'benchmarks/bench_public_urdfs.py: pip download example-robot-data==6.0.0)')
        return []
    paths = descriptions(args.folder)
    if not paths:
        ap.error('no .urdf or .xacro file under %s' % args.folder)
    # package:// URIs of the set (its xacro includes) resolve through its own ament index
    prefixes = ament_prefixes(args.folder)
    os.environ['AMENT_PREFIX_PATH'] = os.pathsep.join(
        prefixes + [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p])
    # the importer logs each element it does not read (Gazebo tags, unknown attributes):
    # hundreds of lines over this set, not what is measured here
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():       # warm-up: numba kernels, lxml, parser tables
        warnings.simplefilter('ignore')
        import_urdf_file(os.path.join(ROOT, 'urdf', 'arm7.urdf'))
    rows = []
    common = os.path.commonpath([os.path.dirname(p) for p in paths])
    for path in paths:
        name = os.path.relpath(path, common)
        row = dict(name=name, ok=False, error='', ms=float('nan'), nq=0, diff=float('nan'))
        try:
            times = []
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    system = import_urdf_file(path)
                    times.append(time.perf_counter() - t0)
            row['ms'] = 1e3 * float(np.median(times))
        except Exception as err:            # what a user would see, first line
            row['error'] = '%s: %s' % (type(err).__name__,
                                       (str(err).splitlines() or [''])[0])
            rows.append(row)
            continue
        row['ok'], row['nq'] = True, system.nQ
        if not system.urdf.joint_names:
            row['error'] = 'imported; no moving joint to compare'
            rows.append(row)
            continue
        try:
            row['diff'] = pinocchio_difference(system, load_urdf_text(path), args.states,
                                               args.seed)
        except Exception as err:
            row['error'] = 'Pinocchio comparison: %s: %s' % (
                type(err).__name__, (str(err).splitlines() or [''])[0])
        rows.append(row)

    width = max(len(r['name']) for r in rows)
    print('%-*s %4s %9s %11s  %s' % (width, 'description', 'nQ', 'import ms',
                                     'vs Pinocchio', 'error'))
    for r in rows:
        print('%-*s %4s %9s %11s  %s' % (
            width, r['name'], r['nq'] if r['ok'] else '-',
            '%.1f' % r['ms'] if r['ok'] else '-',
            '%.1e' % r['diff'] if np.isfinite(r['diff']) else '-', r['error']))
    ok = [r for r in rows if r['ok']]
    times = np.array([r['ms'] for r in ok])
    diffs = [r for r in ok if np.isfinite(r['diff'])]
    print()
    print('%d of %d descriptions import' % (len(ok), len(rows)))
    if ok:
        print('import time: median %.1f ms, max %.1f ms (%s)' % (
            np.median(times), times.max(), ok[int(np.argmax(times))]['name']))
    if diffs:
        worst = max(diffs, key=lambda r: r['diff'])
        print('worst agreement with Pinocchio (M and bias forces, %d states): %.1e (%s)'
              % (args.states, worst['diff'], worst['name']))
    for r in rows:
        if not r['ok']:
            print('failed: %s: %s' % (r['name'], r['error']))
        elif r['error']:
            print('note: %s: %s' % (r['name'], r['error']))
    return rows


if __name__ == '__main__':
    main()
