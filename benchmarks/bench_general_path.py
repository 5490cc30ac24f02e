"""The general path against trep on trep's own examples (user forces, constraints, springs).

Runs the radial engine and the extensor-tendon model of ``general_path_examples.py`` (trep's
``examples/radial.py`` and ``examples/extensor-tendon-model.py``: a combustion force written
in Python over the Frame API, PointOnPlane constraints, LinearSprings, HybridWrenches,
Damping) under ros_vi, and under trep itself when a trep build is given, and prints per
example: the steps, ros_vi's and trep's seconds for the stepping loop (CPU time of the
process, which the load of other processes does not inflate much, and wall time), the ratio
ros_vi / trep (CPU) and the largest deviation of ros_vi's trajectory from trep's (both start
from trep's initial configuration, mapped by config name).

trep (Python 2.7 and its C extension) runs in a subprocess::

    python benchmarks/bench_general_path.py --trep-python /path/to/python2.7 \\
        --trep-path /path/to/trep-checkout-built-in-place [--only radial] [--repeat 3]

(``--trep-pythonpath`` adds directories holding numpy/scipy for that interpreter; trep 1.0.3
builds in place for Python 2.7 with numpy 1.16 and scipy 1.2 by ``python setup.py
build_ext --inplace`` in its checkout.)  Without
``--trep-python`` the trep column shows seconds measured once on a 2-core x86-64 machine,
marked ``recorded``, and no trajectory is compared.  ros_vi is warmed up first (its compiled
kernels load from numba's cache once per process, ~1 s, not counted).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

import ros_vi

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import general_path_examples as examples   # noqa: E402  (next to this script)

# trep 1.0.3 built for Python 2.7 (numpy 1.16, one BLAS thread) on a 2-core x86-64 machine:
# CPU and wall seconds of the stepping loop.
RECORDED_TREP = {'radial': (15.3, 15.3), 'tendon': (0.294, 0.294)}


def run_trep(args, name):
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1',
               MKL_NUM_THREADS='1')
    if args.trep_pythonpath:
        env['PYTHONPATH'] = args.trep_pythonpath
    out = subprocess.run([args.trep_python, os.path.join(HERE, 'general_path_examples.py'),
                          '--trep-path', args.trep_path, '--only', name],
                         env=env, check=True, stdout=subprocess.PIPE)
    return json.loads(out.stdout.decode())[name]


def deviation(ours, theirs):
    """Largest |q_ours - q_trep| over the common steps, configs matched by name."""
    order = [ours['configs'].index(c) for c in theirs['configs']]
    a = np.array(ours['trajectory'])[:, order]
    b = np.array(theirs['trajectory'])
    n = min(len(a), len(b))
    return float(np.abs(a[:n] - b[:n]).max())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trep-python', help='Python interpreter that can import trep')
    parser.add_argument('--trep-path', help='directory holding the built trep package')
    parser.add_argument('--trep-pythonpath', help='PYTHONPATH for the trep interpreter')
    parser.add_argument('--only', choices=sorted(examples.EXAMPLES), action='append')
    parser.add_argument('--repeat', type=int, default=1,
                        help='runs per example and library; the fastest (CPU) is shown')
    args = parser.parse_args(argv)
    if bool(args.trep_python) != bool(args.trep_path):
        parser.error('--trep-python and --trep-path go together')
    names = args.only or sorted(examples.EXAMPLES)

    for name in names:                   # warm-up: load the compiled kernels
        tf, dt = examples.EXAMPLES[name]
        examples.EXAMPLES[name] = (5 * dt, dt)
        examples.run(ros_vi, name)
        examples.EXAMPLES[name] = (tf, dt)

    print('%-8s %6s %10s %10s %10s %10s %7s %12s' % (
        'example', 'steps', 'ros_vi cpu', 'ros_vi wall', 'trep cpu', 'trep wall',
        'ratio', 'max |dq|'))
    for name in names:
        theirs = None
        if args.trep_python:
            theirs = min((run_trep(args, name) for _ in range(args.repeat)),
                         key=lambda r: r['cpu'])
            if theirs['error']:
                print('%s: trep failed: %s' % (name, theirs['error']))
        q0 = None if theirs is None else dict(zip(theirs['configs'], theirs['q0']))
        ours = min((examples.run(ros_vi, name, q0) for _ in range(args.repeat)),
                   key=lambda r: r['cpu'])
        if ours['error']:
            print('%s: ros_vi failed: %s' % (name, ours['error']))
        if theirs is None:
            cpu, wall = RECORDED_TREP[name]
            trep_cols = ('%10.3f %10.3f' % (cpu, wall), 'recorded')
        else:
            cpu, wall = theirs['cpu'], theirs['wall']
            trep_cols = ('%10.3f %10.3f' % (cpu, wall), '%12.2e' % deviation(ours, theirs))
        print('%-8s %6d %10.3f %10.3f %s %7.2f %12s' % (
            name, ours['steps'], ours['cpu'], ours['wall'], trep_cols[0], ours['cpu'] / cpu,
            trep_cols[1]))


if __name__ == '__main__':
    main()
