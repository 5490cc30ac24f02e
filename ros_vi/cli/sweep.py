"""Run a parameter sweep: a YAML spec of initial states, model and controller parameters,
many closed-loop rollouts on Dask (docs/sweeps.md).

    ros-vi sweep examples/sweeps/pendulum_basin.yaml --out basin --plot
    ros-vi sweep robustness.yaml --out mc --workers 2
    ros-vi sweep spec.yaml --out big --scheduler tcp://HOST:8786
    ros-vi sweep spec.yaml --out small --serial

Writes DIR/results.npz (every axis value and reduction per sample), DIR/sweep.json (spec,
versions, wall time, failures) and DIR/chunks/ (one file per chunk: a rerun with the same
spec only computes the chunks that are missing).  Exit status 0 when the sweep ran (samples
that failed are counted in the summary), 2 on a bad spec or an output directory holding
another spec's sweep.
"""
import sys

import numpy as np

from . import CommandError
from .options import add_progress_arguments, show_progress

HELP = 'run a parameter sweep (grid and Monte-Carlo) on Dask, results in one npz'


def add_arguments(parser):
    parser.add_argument('spec', metavar='SPEC.yaml', help='the sweep spec (docs/sweeps.md)')
    parser.add_argument('--out', required=True, metavar='DIR',
                        help='output directory (results.npz, sweep.json, chunks/)')
    where = parser.add_mutually_exclusive_group()
    where.add_argument('--scheduler', default=None, metavar='tcp://HOST:8786',
                       help='run on the workers of this Dask scheduler (default: a local '
                            'cluster of worker processes)')
    where.add_argument('--serial', action='store_true',
                       help='run the chunks one after the other in this process (no Dask)')
    parser.add_argument('--workers', type=int, default=None, metavar='N',
                        help='local worker processes (default: the cores); with --scheduler: '
                             'wait until N workers are connected')
    add_progress_arguments(parser)
    parser.add_argument('--plot', action='store_true',
                        help='also write DIR/basin.png (two grid axes) and/or '
                             'DIR/histograms.png (random part)')


def run(args):
    from ..sweep import load_spec, plot_sweep, run_sweep
    if args.workers is not None and args.workers < 1:
        raise CommandError('--workers must be >= 1, got %d' % args.workers)
    try:
        spec = load_spec(args.spec)
    except ValueError as err:
        raise CommandError(str(err)) from None
    scheduler = 'serial' if args.serial else args.scheduler
    print('ros-vi sweep: %s, controller %s, %d samples (%s) in %d chunks of %d, dt = %g s, '
          '%g s each' % (spec.model, spec.controller, spec.n_samples, _shape(spec),
                         spec.n_chunks, spec.chunk_size, spec.dt, spec.duration))
    try:
        # the bar goes to stdout with Dask, stderr when serial: on when that is a terminal
        stream = sys.stderr if args.serial else sys.stdout
        progress = show_progress(args, stream)
        result = run_sweep(spec, args.out, scheduler=scheduler, workers=args.workers,
                           progress=progress)
    except ValueError as err:
        raise CommandError(str(err)) from None
    except OSError as err:
        raise CommandError('%s: %s' % (err.filename or args.out, err.strerror or err)) \
            from None
    for index, reason in result.damaged:
        print('warning: %s; chunk %d computed again' % (reason, index), file=sys.stderr)
    _summary(result)
    if args.plot:
        for path in plot_sweep(args.out):
            print('plot: %s' % path)
    return 0


def _shape(spec):
    parts = ['x'.join(str(n) for n in spec.grid_shape) + ' grid'] if spec.grid else []
    if spec.random:
        parts.append('%d random draws%s' % (spec.samples, ' per point' if spec.grid else ''))
    return ', '.join(parts)


def _summary(result):
    c = result.columns
    print('summary:')
    print('  samples:     %d (%d chunks: %d computed, %d on disk already)'
          % (result.samples, result.spec.n_chunks, len(result.computed), len(result.reused)))
    what = 'reached the target' if result.spec.target is not None else 'ran to the end'
    print('  successes:   %d (%s)' % (result.successes, what))
    if result.spec.target is not None:
        settled_not = int(np.count_nonzero(c['ok'] & ~np.isfinite(c['time_to_target'])))
        print('  not settled: %d (ran to the end outside the target)' % settled_not)
    print('  failures:    %d (did not run to the end)' % result.failures)
    if result.failures:
        messages = result.info['failures']['messages']
        for message, count in list(messages.items())[:3]:
            print('    %d x %s' % (count, message))
    if result.failed_chunks:
        print('  failed chunks: %s' % ', '.join(str(i) for i, _ in result.failed_chunks))
    if result.computed:
        where = ('serial (this process)' if result.scheduler == 'serial' else
                 'on %s (%d worker%s)' % (result.scheduler, result.workers,
                                          '' if result.workers == 1 else 's'))
        print('  wall time:   %.3g s %s; %d steps, %.3g steps/s'
              % (result.wall_time, where, result.steps, result.steps_per_second))
    else:
        print('  wall time:   %.3g s (every chunk was on disk already)' % result.wall_time)
    print('results: %s' % result.out_dir.rstrip('/') + '/results.npz')
    sys.stdout.flush()
