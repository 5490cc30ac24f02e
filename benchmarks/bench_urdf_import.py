"""Import time of URDF robots (ros_vi.urdf), printed as a table.

    .venv/bin/python benchmarks/bench_urdf_import.py [--repeat N]

For each URDF: parse + validate + build (frames, forces, the scratch build and the
massless-joint check), best and median of N imports, plus the size of the result.
The 7-DOF arm (urdf/arm7.urdf) must import in well under 100 ms, the 40-DOF humanoid in
30 ms (median).
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'test'))

from ros_vi.urdf import import_urdf  # noqa: E402
import test_urdf_cases as cases      # noqa: E402


def sources():
    out = []
    for name in cases.HERE_MODELS:
        with open(os.path.join(ROOT, 'urdf', name + '.urdf')) as fh:
            out.append(('urdf/%s.urdf' % name, fh.read(), {}))
    out.append(('handmade: full_featured', cases.full_featured(), {}))
    out.append(('handmade: mimic', cases.mimic_robot(), {}))
    out.append(('random tree, 9 links', cases.random_robot(0, 9), {}))
    out.append(('random tree, 40 links', cases.random_robot(1, 40), {}))
    out.append(('humanoid, 40 DOF', cases.humanoid(), {}))
    arm = out[3][1]
    out.append(('arm7 + limits + friction', arm,
                dict(enforce_limits=True, friction=True)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--repeat', type=int, default=20)
    args = ap.parse_args()
    import_urdf(cases.full_featured())        # warm-up: numba kernels, lxml, parser tables
    rows = []
    for name, xml, opts in sources():
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                s = import_urdf(xml, **opts)
            times.append(time.perf_counter() - t0)
        rows.append((name, len(s.urdf.link_names), s.nQ, len(s.frames),
                     1e3 * min(times), 1e3 * float(np.median(times))))
    print('%-28s %6s %5s %7s %10s %10s' % ('URDF', 'links', 'nQ', 'frames', 'best ms',
                                           'median ms'))
    for r in rows:
        print('%-28s %6d %5d %7d %10.2f %10.2f' % r)
    arm = [r for r in rows if r[0] == 'urdf/arm7.urdf'][0]
    verdict = 'OK' if arm[5] < 100.0 else 'TOO SLOW'
    print('\n7-DOF arm median import: %.2f ms (target: well under 100 ms) -> %s'
          % (arm[5], verdict))
    hum = [r for r in rows if r[0] == 'humanoid, 40 DOF'][0]
    print('40-DOF humanoid median import: %.2f ms (target: 30 ms) -> %s'
          % (hum[5], 'OK' if hum[5] <= 30.0 else 'TOO SLOW'))
    return 0 if arm[5] < 100.0 and hum[5] <= 30.0 else 1


if __name__ == '__main__':
    sys.exit(main())
