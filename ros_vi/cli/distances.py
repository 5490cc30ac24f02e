"""Signed distances between named links and obstacles at given or random configurations
(ros_vi.collision): how far each pair is apart, negative when overlapping, and with
--jacobian how each distance changes with the joints.

    ros-vi distances arm7 --obstacles package://ros_vi/config/obstacles_seed.yaml \\
        --pair link_7:ground link_7:cube1 link_7:cube2 link_7:cube3 --random 5
    ros-vi distances arm7 --pair link_7:link_1 --q joint_2=1.2 joint_4=2.0 --jacobian

A pair names two objects, each a link of the model (its URDF <collision> shapes) or an
obstacle of the --obstacles file (YAML: docs/collision.md).  --random N draws the seed
scenario's configurations q = pi (rand(nQ) - 0.5); --q sets joints (the others 0).
"""
import json
import math
import sys
import warnings

import numpy as np

from ..errors import name_list
from . import CommandError
from .models import import_model, resolve_model

HELP = 'signed distances (and their gradient) between named links and obstacles'
#: configurations --random may ask for
MAX_RANDOM = 100_000


def add_arguments(parser):
    parser.add_argument('model', metavar='MODEL',
                        help='a URDF or xacro file, or a shipped model name')
    parser.add_argument('--pair', nargs='+', action='extend', default=[], metavar='A:B',
                        help='pairs of object names (links or obstacles), e.g. link_7:ground')
    parser.add_argument('--obstacles', metavar='FILE',
                        help='obstacle YAML file (a path, file:// or package:// URI)')
    parser.add_argument('--random', type=int, metavar='N',
                        help='N random configurations q = pi (rand(nQ) - 0.5), at most %s'
                             % format(MAX_RANDOM, ','))
    parser.add_argument('--seed', type=int, default=0,
                        help='random seed for --random (default 0)')
    parser.add_argument('--q', nargs='+', default=[], metavar='JOINT=VALUE',
                        help='one configuration: these joints [rad or m], the others 0')
    parser.add_argument('--jacobian', action='store_true',
                        help='also print d distance / d q of each pair')
    parser.add_argument('--margin', type=float, default=0.0,
                        help='in collision: a distance <= margin [m] (default 0)')
    parser.add_argument('--json', action='store_true', help='print the results as JSON')


def _detector(args, system):
    from ..collision import CollisionDetector, load_obstacles, parse_pair
    if not args.pair:
        raise CommandError('give at least one --pair A:B (links of the model: %s)'
                           % name_list(system.urdf.link_names, quote=str))
    caught = []
    try:
        pairs = [parse_pair(p) for p in args.pair]
        obstacles = load_obstacles(args.obstacles) if args.obstacles else {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            detector = CollisionDetector(system, pairs, obstacles=obstacles)
    except (ValueError, OSError) as err:
        raise CommandError(str(err)) from None
    finally:        # also when the detector is refused: the warnings say about the meshes
        for message in dict.fromkeys(str(w.message) for w in caught):
            print('warning: %s' % message, file=sys.stderr)
    return detector


def _configurations(args, system):
    from .simulate import _assignments
    names = [c.name for c in system.configs]
    if args.random is not None and args.q:
        raise CommandError('give --random or --q, not both')
    if args.random is not None:
        if not 1 <= args.random <= MAX_RANDOM:
            raise CommandError('--random must be 1 to %s (MAX_RANDOM), got %s'
                               % (format(MAX_RANDOM, ','), format(args.random, ',')))
        rng = np.random.default_rng(args.seed)
        return [np.pi * (rng.random(system.nQ) - 0.5) for _ in range(args.random)]
    q = np.zeros(system.nQ)
    for i, x in _assignments(args.q, names, '--q').items():
        q[i] = x
    return [q]


def run(args):
    if not math.isfinite(args.margin):
        raise CommandError('--margin must be finite, got %r' % args.margin)
    source = resolve_model(args.model)
    system, quirks = import_model(source)
    for q in quirks:
        print('warning: %s' % q, file=sys.stderr)
    detector = _detector(args, system)
    names = [c.name for c in system.configs]
    pair_names = detector.pair_names
    results = []
    for q in _configurations(args, system):
        r = detector.query(q, jacobian=args.jacobian)
        results.append((q, r, bool(np.any(r.distances <= args.margin))))
    if args.json:
        print(json.dumps([{
            'q': dict(zip(names, q.tolist())),
            'distances': dict(zip(pair_names, r.distances.tolist())),
            'points_a': dict(zip(pair_names, r.points_a.tolist())),
            'points_b': dict(zip(pair_names, r.points_b.tolist())),
            'normals': dict(zip(pair_names, r.normals.tolist())),
            'in_collision': hit,
            'jacobian': (dict(zip(pair_names, [dict(zip(names, row)) for row in
                                               r.jacobian.tolist()]))
                         if r.jacobian is not None else None)}
            for q, r, hit in results], indent=1))
        return 0
    print('ros-vi distances: %s, %d pair%s, signed distances [m] (negative: overlapping); '
          'in collision: distance <= %g m' % (source.name, len(pair_names),
                                               's' if len(pair_names) > 1 else '', args.margin))
    header = ['#'] + pair_names + ['in collision']
    rows = [[str(k)] + ['%.6f' % d for d in r.distances] + ['yes' if hit else 'no']
            for k, (q, r, hit) in enumerate(results)]
    _table(header, rows)
    if args.jacobian:
        for k, (q, r, _) in enumerate(results):
            print('\nconfiguration %d: q = [%s]' % (k, ', '.join('%.6g' % x for x in q)))
            print('d distance / d q [m/rad or m/m]:')
            _table(['pair'] + names, [[p] + ['%.6g' % x for x in row]
                                      for p, row in zip(pair_names, r.jacobian)])
    return 0


def _table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print('  ' + '  '.join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
