"""Distances from a robot's last link to obstacles, by name, without a second engine.

The seed scenario of issue #16, where a headless PyBullet was loaded only to answer "how
far is link 7 from the ground and from each cube?" (a KUKA iiwa, plane.urdf at the origin,
three 1 m cubes at (1, 1, 0.5), (-1, -1, 0.5), (1, -1, 0.5); ``compute_distances(q)`` and
``in_collision(q)`` for random q = pi (rand(7) - 0.5)).  Here the model itself answers:
the shipped 7-DOF arm (urdf/arm7.urdf, iiwa-like, with primitive <collision> shapes), the
ground as the half-space z <= 0, and ros_vi.collision.CollisionDetector, which also gives
the closest points and d distance / d q (checked here against finite differences).

The same obstacles are in config/obstacles_seed.yaml, for ``ros-vi distances`` and the
simulator node's ``distance_pairs`` (docs/collision.md).

Run: python examples/collision_distances.py [--configs 5] [--seed 0]
"""
import argparse

import numpy as np

from ros_vi.collision import Box, CollisionDetector, HalfSpace
from ros_vi.resources import shipped_model
from ros_vi.urdf import import_urdf_file

OBSTACLES = {
    'ground': HalfSpace(normal=(0, 0, 1), offset=0.0),
    'cube1': Box((1, 1, 1), xyz=(1, 1, 0.5)),
    'cube2': Box((1, 1, 1), xyz=(-1, -1, 0.5)),
    'cube3': Box((1, 1, 1), xyz=(1, -1, 0.5)),
}
PAIRS = [('link_7', name) for name in OBSTACLES]


def build():
    """The arm and its detector for the four pairs."""
    system = import_urdf_file(shipped_model('arm7'))
    return system, CollisionDetector(system, PAIRS, obstacles=OBSTACLES)


def finite_differences(detector, q, h=1e-6):
    """Central differences of the distances (npairs, nQ)."""
    return np.array([(detector.compute_distances(q + h * e)
                      - detector.compute_distances(q - h * e)) / (2 * h)
                     for e in np.eye(len(q))]).T


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--configs', type=int, default=5, help='random configurations')
    ap.add_argument('--seed', type=int, default=0)
    args = ap.parse_args(argv)
    system, detector = build()
    rng = np.random.default_rng(args.seed)
    qs = [np.pi * (rng.random(7) - 0.5) for _ in range(args.configs)]
    print('distances from link_7 [m] (negative: overlapping)')
    print('   ' + ''.join('%14s' % name for name in OBSTACLES) + '  in collision')
    distances, collisions = [], []
    for k, q in enumerate(qs):
        d = detector.compute_distances(q)
        hit = detector.in_collision(q)
        distances.append(d)
        collisions.append(hit)
        print('%2d ' % k + ''.join('%14.6f' % x for x in d) + '  %s' % ('yes' if hit else 'no'))
    q = qs[0]
    result = detector.query(q, jacobian=True)
    nearest = int(np.argmin(result.distances))
    print('\nat configuration 0 the nearest obstacle is %s, %.4f m away:'
          % (PAIRS[nearest][1], result.distances[nearest]))
    print('  closest point on link_7  %s' % np.round(result.points_a[nearest], 4))
    print('  closest point on %-7s %s' % (PAIRS[nearest][1],
                                          np.round(result.points_b[nearest], 4)))
    print('  d distance / d q         %s' % np.round(result.jacobian[nearest], 4))
    error = float(np.max(np.abs(result.jacobian - finite_differences(detector, q))))
    print('  largest difference to central finite differences: %.1e m/rad' % error)
    return dict(system=system, detector=detector, qs=qs, distances=np.array(distances),
                in_collision=collisions, query=result, fd_error=error)


if __name__ == '__main__':
    main()
