"""Distance queries by link name: ros_vi.collision against raw coal and a headless PyBullet.

The seed scenario of issue #16: the 7-DOF arm (urdf/arm7.urdf, its ``<collision>``
primitives), the ground (the half-space z <= 0) and three 1 m cubes at (1, 1, 0.5),
(-1, -1, 0.5), (1, -1, 0.5) (config/obstacles_seed.yaml); the pairs link_7 to each
obstacle; configurations q = pi (rand(7) - 0.5).  A second scene asks the same of every
moving link (link_1 ... link_7 to each obstacle: 28 pairs).

Per configuration, measured in one run:

* ``ros_vi distances``: ``CollisionDetector.compute_distances(q)``;
* ``ros_vi + Jacobians``: ``CollisionDetector.query(q, jacobian=True)`` (distances, closest
  points, normals and d distances / d q);
* ``raw coal``: the same coal calls (``coal.ComputeDistance`` per pair, one
  ``DistanceResult.clear()`` each, the same request and tolerance) on transforms computed
  beforehand: the collision library's own time; ``+ points`` also reads the closest points
  and the normal of each pair (what the Jacobian needs);
* ``PyBullet``: the seed's approach, a second engine in DIRECT mode loaded with the same
  URDF (visuals removed) and the same obstacles (a GEOM_PLANE, GEOM_BOXes):
  ``resetJointState`` for the 7 joints, then ``getClosestPoints(robot, obstacle, 10 m,
  link)`` per pair (the smallest contactDistance); ``+ Jacobians`` adds, per pair,
  ``getLinkState`` and ``calculateJacobian`` at the closest point on the link
  (contactNormalOnB . J).

Reported: µs per full query (the median over repeats of the mean over all configurations),
µs per pair, PyBullet's time over ros_vi's, ros_vi's overhead over raw coal, and the
agreement of the distances (ros_vi against raw coal: the same numbers; against PyBullet:
Bullet's own GJK) and of the gradients (against PyBullet's, and against central finite
differences of ros_vi's distances).

    python benchmarks/bench_collision.py [--configs 2000] [--repeats 5] [--seed 0]

PyBullet is a benchmark-only extra (requirements-bench.txt); without it its rows say
``not installed``.  Exit status 1 when ros_vi is not faster than PyBullet or its overhead
over raw coal is above 30 % for the seed's query.
"""
import argparse
import os
import re
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)                  # this checkout's ros_vi

from ros_vi.collision import CollisionDetector, load_obstacles  # noqa: E402
from ros_vi.collision.detector import coal_module  # noqa: E402
from ros_vi.mechanics import dynamics  # noqa: E402
from ros_vi.urdf import import_urdf_file, link_geometry  # noqa: E402

try:
    import pybullet
except ImportError:           # a benchmark-only extra
    pybullet = None

URDF = os.path.join(ROOT, 'urdf', 'arm7.urdf')
OBSTACLES = os.path.join(ROOT, 'config', 'obstacles_seed.yaml')
GJK_TOLERANCE, EPA_TOLERANCE = 1e-12, 1e-6     # the detector's defaults
OVERHEAD_TARGET = 0.30


def configurations(count, seed):
    rng = np.random.default_rng(seed)
    return [np.pi * (rng.random(7) - 0.5) for _ in range(count)]


def timed(function, qs, repeats):
    """µs per call: the median over ``repeats`` of the mean over ``qs``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for q in qs:
            function(q)
        times.append((time.perf_counter() - start) / len(qs))
    return 1e6 * float(np.median(times))


# ---------------------------------------------------------------------- raw coal
class RawCoal:
    """The detector's coal calls on transforms computed beforehand, built independently of
    the detector: coal shapes from the URDF's <collision> and the obstacle file, poses from
    ros_vi's kinematics."""

    def __init__(self, system, pairs, obstacles):
        coal = coal_module()
        self.coal = coal
        shapes = {s.link: s for s in link_geometry(system.urdf.description, 'collision')}
        self.request = coal.DistanceRequest()
        self.request.gjk_tolerance = GJK_TOLERANCE
        self.request.epa_tolerance = EPA_TOLERANCE
        self.system, self.pairs = system, pairs
        self.links = sorted({a for a, _ in pairs})
        self.shapes = {link: shapes[link] for link in self.links}
        geometry = {}
        for link, s in self.shapes.items():
            geometry[link] = (coal.Cylinder(s.radius, s.length) if s.type == 'cylinder'
                              else coal.Box(*s.size))
        self.obstacle_tf = {}
        for name, o in obstacles.items():
            if o.type == 'halfspace':
                geometry[name] = coal.Halfspace(np.array(o.normal), o.offset)
            else:
                geometry[name] = coal.Box(*o.size)
            pose = o.pose
            self.obstacle_tf[name] = coal.Transform3s(pose[:3, :3].copy(), pose[:3, 3].copy())
        # a functor keeps pointers to its shapes, not references: hold them
        self.geometry = geometry
        self.functors = [coal.ComputeDistance(geometry[a], geometry[b]) for a, b in pairs]
        self.results = [coal.DistanceResult() for _ in pairs]

    def transforms(self, q):
        """The coal transform of each pair's two shapes at q (computed outside the timing)."""
        data = self.system.model.create_data()
        data.set(q=q)
        R, P, _ = dynamics.kinematics(self.system.model, data)
        link_tf = {}
        for link, s in self.shapes.items():
            i = self.system.urdf.link_frame(link).index
            g = np.eye(4)
            g[:3, :3], g[:3, 3] = R[i], P[i]
            g = g @ s.origin
            link_tf[link] = self.coal.Transform3s(g[:3, :3].copy(), g[:3, 3].copy())
        return [(link_tf[a], self.obstacle_tf[b]) for a, b in self.pairs]

    def calls(self, with_points):
        request = self.request
        work = list(zip(self.functors, self.results))

        def distances(tfs):
            out = []
            for (functor, result), (ta, tb) in zip(work, tfs):
                result.clear()
                out.append(functor(ta, tb, request, result))
            return out

        def with_closest_points(tfs):
            out = []
            for (functor, result), (ta, tb) in zip(work, tfs):
                result.clear()
                out.append((functor(ta, tb, request, result), result.getNearestPoint1(),
                            result.getNearestPoint2(), result.normal))
            return out
        return with_closest_points if with_points else distances


# ---------------------------------------------------------------------- PyBullet
class PyBullet:
    """The seed's approach: a headless PyBullet loaded with the same arm and obstacles."""

    def __init__(self, system, pairs, obstacles):
        p = pybullet
        self.p = p
        self.client = p.connect(p.DIRECT)
        with open(URDF, encoding='utf-8') as fh:
            text = re.sub(r'<visual>.*?</visual>', '', fh.read(), flags=re.S)
        fd, path = tempfile.mkstemp(suffix='.urdf')
        with os.fdopen(fd, 'w') as fh:
            fh.write(text)
        try:
            self.robot = p.loadURDF(path, useFixedBase=True, physicsClientId=self.client)
        finally:
            os.unlink(path)
        info = [p.getJointInfo(self.robot, j, physicsClientId=self.client)
                for j in range(p.getNumJoints(self.robot, physicsClientId=self.client))]
        link_index = {i[12].decode(): i[0] for i in info}
        joint_index = {i[1].decode(): i[0] for i in info}
        self.joints = [joint_index[n] for n in system.urdf.joint_names]
        self.movable = [i[0] for i in info if i[2] != p.JOINT_FIXED]
        assert self.joints == self.movable, 'configs and PyBullet joints in the same order'
        bodies = {}
        for name, o in obstacles.items():
            if o.type == 'halfspace':
                shape = p.createCollisionShape(p.GEOM_PLANE, planeNormal=list(o.normal),
                                               physicsClientId=self.client)
                position = list(np.array(o.normal) * o.offset)
                orientation = [0, 0, 0, 1]
            else:
                shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=list(np.array(o.size) / 2),
                                               physicsClientId=self.client)
                position = list(o.xyz)
                orientation = p.getQuaternionFromEuler(list(o.rpy))
            bodies[name] = p.createMultiBody(0, shape, basePosition=position,
                                             baseOrientation=orientation,
                                             physicsClientId=self.client)
        self.pairs = [(link_index[a], bodies[b]) for a, b in pairs]
        self.zeros = [0.0] * len(self.movable)

    def _closest(self, q):
        p, robot, c = self.p, self.robot, self.client
        for j, x in zip(self.joints, q):
            p.resetJointState(robot, j, x, physicsClientId=c)
        out = []
        for link, body in self.pairs:
            points = p.getClosestPoints(robot, body, 10.0, link, -1, physicsClientId=c)
            out.append(min(points, key=lambda r: r[8]))
        return out

    def distances(self, q):
        return [r[8] for r in self._closest(q)]

    def with_jacobians(self, q):
        p, robot, c = self.p, self.robot, self.client
        closest = self._closest(q)
        q_list = [float(x) for x in q]
        rows = []
        for (link, _), r in zip(self.pairs, closest):
            state = p.getLinkState(robot, link, computeForwardKinematics=True,
                                   physicsClientId=c)
            # calculateJacobian takes the point in the URDF link frame (its documentation
            # says around the centre of mass; its results are for the link frame's origin
            # at [0, 0, 0], checked against ros_vi's kinematics)
            origin, orientation = np.array(state[4]), state[5]
            R = np.array(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
            local = R.T @ (np.array(r[5]) - origin)
            linear, _ = p.calculateJacobian(robot, link, list(local), q_list, self.zeros,
                                            self.zeros, physicsClientId=c)
            # contactNormalOnB points from the obstacle (B) to the link (A): moving the
            # link's point along it opens the distance
            rows.append(np.array(r[7]) @ np.array(linear))
        return [r[8] for r in closest], np.array(rows)


# ---------------------------------------------------------------------- scenes
def scene(system, obstacles, links, qs, repeats):
    pairs = [(link, name) for link in links for name in obstacles]
    det = CollisionDetector(system, pairs, obstacles=obstacles)
    raw = RawCoal(system, pairs, obstacles)
    transforms = [raw.transforms(q) for q in qs]
    rows = {}
    # interleaved repeats, so a change of load hits every row alike
    raw_d, raw_p = raw.calls(False), raw.calls(True)
    for name, function, inputs in [
            ('raw coal: distances', raw_d, transforms),
            ('raw coal: + closest points', raw_p, transforms),
            ('ros_vi: compute_distances', det.compute_distances, qs),
            ('ros_vi: query + Jacobians', lambda q: det.query(q, jacobian=True), qs)]:
        function(inputs[0])
        rows[name] = timed(function, inputs, repeats)
    checks = {}
    mine = np.array([det.compute_distances(q) for q in qs])
    checks['ros_vi - raw coal: max abs d [m]'] = float(np.max(np.abs(
        mine - np.array([raw_d(t) for t in transforms]))))
    # the gradient against central differences, apart (GJK) and overlapping (EPA)
    apart, overlapping = 0.0, 0.0
    for q in qs[:100]:
        d, J = det.compute_distances(q), det.distance_jacobian(q)
        h = 1e-6
        fd = np.array([(det.compute_distances(q + h * e) - det.compute_distances(q - h * e))
                       / (2 * h) for e in np.eye(len(q))]).T
        err = np.max(np.abs(J - fd), axis=1)
        apart = max(apart, float(np.max(err[d > 0], initial=0.0)))
        overlapping = max(overlapping, float(np.max(err[d < 0], initial=0.0)))
    checks['ros_vi Jacobian - finite differences, apart: max [m/rad]'] = apart
    checks['ros_vi Jacobian - finite differences, overlapping: max [m/rad]'] = overlapping
    if pybullet is not None:
        pb = PyBullet(system, pairs, obstacles)
        rows['PyBullet: getClosestPoints'] = timed(pb.distances, qs, repeats)
        rows['PyBullet: + calculateJacobian'] = timed(pb.with_jacobians, qs, repeats)
        theirs = np.array([pb.distances(q) for q in qs])
        checks['ros_vi - PyBullet: max abs d [m]'] = float(np.max(np.abs(mine - theirs)))
        grads = [np.max(np.abs(det.distance_jacobian(q) - pb.with_jacobians(q)[1]))
                 for q in qs[:200]]
        checks['ros_vi - PyBullet Jacobian: median of max [m/rad]'] = float(np.median(grads))
    else:
        rows['PyBullet: getClosestPoints'] = rows['PyBullet: + calculateJacobian'] = None
    return pairs, rows, checks


def print_scene(title, pairs, rows):
    n = len(pairs)
    print('\n## %s: %d pairs\n' % (title, n))
    print('| query | µs per query | µs per pair | PyBullet / this | over raw coal |')
    print('|---|---|---|---|---|')
    pb = {'distances': rows['PyBullet: getClosestPoints'],
          'jacobian': rows['PyBullet: + calculateJacobian']}
    raw = {'distances': rows['raw coal: distances'],
           'jacobian': rows['raw coal: + closest points']}
    kinds = {'raw coal: distances': 'distances', 'raw coal: + closest points': 'jacobian',
             'ros_vi: compute_distances': 'distances', 'ros_vi: query + Jacobians': 'jacobian',
             'PyBullet: getClosestPoints': 'distances',
             'PyBullet: + calculateJacobian': 'jacobian'}
    for name, us in rows.items():
        if us is None:
            print('| %s | not installed | | | |' % name)
            continue
        kind = kinds[name]
        ratio = '%.2f' % (pb[kind] / us) if pb[kind] is not None else ''
        over = '%+.0f %%' % (100 * (us / raw[kind] - 1)) if name.startswith('ros_vi') else ''
        print('| %s | %.2f | %.2f | %s | %s |' % (name, us, us / n, ratio, over))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--configs', type=int, default=2000,
                    help='random configurations per scene (default 2000)')
    ap.add_argument('--repeats', type=int, default=5,
                    help='timed passes over the configurations (median; default 5)')
    ap.add_argument('--seed', type=int, default=0)
    args = ap.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        system = import_urdf_file(URDF)
    obstacles = load_obstacles(OBSTACLES)
    qs = configurations(args.configs, args.seed)
    coal = coal_module()
    print('# Distance queries: ros_vi.collision, raw coal, PyBullet')
    print('arm7 (urdf/arm7.urdf collision primitives), obstacles %s; %d configurations '
          'q = pi (rand(7) - 0.5), median of %d passes; coal %s, PyBullet %s'
          % (', '.join(obstacles), len(qs), args.repeats, coal.__version__,
             'not installed' if pybullet is None else 'loaded'))
    seed = scene(system, obstacles, ['link_7'], qs, args.repeats)
    arm = scene(system, obstacles, ['link_%d' % i for i in range(1, 8)], qs, args.repeats)
    print_scene('The seed: link_7 to the ground and three cubes', *seed[:2])
    print_scene('Every moving link (link_1 ... link_7) to the four obstacles', *arm[:2])
    print('\n## Agreement\n')
    print('| check | seed | every link |')
    print('|---|---|---|')
    for key in seed[2]:
        print('| %s | %.2g | %.2g |' % (key, seed[2][key], arm[2].get(key, float('nan'))))
    rows = seed[1]
    overhead = rows['ros_vi: compute_distances'] / rows['raw coal: distances'] - 1
    status = 0
    print('\nseed query, distances: %.2f µs, %+.0f %% over raw coal (target <= %+.0f %%): %s'
          % (rows['ros_vi: compute_distances'], 100 * overhead, 100 * OVERHEAD_TARGET,
             'met' if overhead <= OVERHEAD_TARGET else 'MISSED'))
    status |= overhead > OVERHEAD_TARGET
    if rows['PyBullet: getClosestPoints'] is not None:
        for mine, theirs in (('ros_vi: compute_distances', 'PyBullet: getClosestPoints'),
                             ('ros_vi: query + Jacobians', 'PyBullet: + calculateJacobian')):
            faster = rows[theirs] / rows[mine]
            print('seed query, %s: %.2fx faster than %s (target > 1): %s'
                  % (mine, faster, theirs, 'met' if faster > 1 else 'MISSED'))
            status |= faster <= 1
    return int(status)


if __name__ == '__main__':
    sys.exit(main())
