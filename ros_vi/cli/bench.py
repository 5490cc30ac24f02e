"""Run the project's benchmarks and print their tables (µs per step, steps/s, ratios to
MuJoCo, trep and Pinocchio measured in the same run).

    ros-vi bench --list
    ros-vi bench                 # every benchmark, short settings (a few minutes)
    ros-vi bench vs_mujoco vi    # these two
    ros-vi bench vi --full       # the script's own defaults (the README's tables)

The benchmark scripts live in ``benchmarks/`` of a source checkout (they are not installed
with the package); the MuJoCo and PyBullet comparisons need ``requirements-bench.txt``
(``bash scripts/run_benchmarks.sh`` installs it).  Exit status 1 when a benchmark fails or
reports a missed target.
"""
import os
import subprocess
import sys

from . import CommandError

HELP = "run the project's benchmark tables"

# short settings per benchmark (each script's own flags): a few minutes in all
SHORT = {
    'vi': ['--steps', '500', '--general-steps', '100'],
    'constrained': ['--steps', '1000', '--general-steps', '100'],
    'discopt': ['--repeats', '50'],
    'urdf_import': ['--repeat', '5'],
    'simulator': ['--seconds', '2'],
    'drives': ['--seconds', '1'],
    'vs_mujoco': ['--seconds', '2', '--sweep-steps', '150', '--floor-calls', '1000'],
    'collision': ['--configs', '300', '--repeats', '3'],
    'contact': ['--seconds', '1'],
    'rollout': ['--horizon', '0.1', '--repeats', '1', '--closed-horizon', '0.2',
                '--basin', 'slice', '--basin-rows', '4'],
}


def add_arguments(parser):
    parser.add_argument('names', nargs='*', metavar='NAME',
                        help='benchmarks to run (default all; see --list)')
    parser.add_argument('--list', action='store_true', help='list the benchmarks and exit')
    parser.add_argument('--full', action='store_true',
                        help="each script's own (longer) defaults instead of short settings")


def benchmark_folder():
    """The ``benchmarks/`` folder of the source checkout this package runs from, or None."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    folder = os.path.join(here, 'benchmarks')
    return folder if os.path.isdir(folder) else None


def available(folder):
    """{name: script path} of ``benchmarks/bench_<name>.py``."""
    return {f[len('bench_'):-3]: os.path.join(folder, f) for f in sorted(os.listdir(folder))
            if f.startswith('bench_') and f.endswith('.py')}


def _summary_line(path):
    with open(path, encoding='utf-8') as fh:
        text = fh.read()
    start = text.find('"""')
    return text[start + 3:text.find('\n', start)].strip() if start >= 0 else ''


def run(args):
    folder = benchmark_folder()
    if folder is None:
        raise CommandError('the benchmarks ship with the source repository (benchmarks/ beside '
                           'the ros_vi package); run ros-vi bench from a checkout')
    scripts = available(folder)
    if args.list:
        for name, path in scripts.items():
            print('%-12s %s' % (name, _summary_line(path)))
        return 0
    unknown = [n for n in args.names if n not in scripts]
    if unknown:
        raise CommandError('unknown benchmark %s (available: %s)'
                           % (', '.join(map(repr, unknown)), ', '.join(scripts)))
    failed = []
    for name in args.names or list(scripts):
        extra = [] if args.full else SHORT.get(name, [])
        print('\n=== %s %s' % (name, ' '.join(extra)), flush=True)
        if subprocess.call([sys.executable, scripts[name]] + extra) != 0:
            failed.append(name)
    if failed:
        print('\nros-vi bench: failed or missed a target: %s' % ', '.join(failed))
        return 1
    return 0
