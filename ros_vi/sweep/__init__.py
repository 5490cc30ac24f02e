"""Parameter sweeps on :func:`ros_vi.rollout`: a YAML spec expanded into a table of samples,
split into chunks run in-process or as Dask tasks, results merged into ``results.npz``.

>>> from ros_vi.sweep import load_spec, run_sweep
>>> spec = load_spec('examples/sweeps/pendulum_basin.yaml')        # doctest: +SKIP
>>> result = run_sweep(spec, 'basin-out', scheduler='serial')      # doctest: +SKIP
>>> result.successes, result.failures                              # doctest: +SKIP

``ros-vi sweep SPEC.yaml --out DIR`` is the command line; docs/sweeps.md the spec format and
how to run on several machines.  Plain Python (no rclpy); Dask only for the parallel runs.
"""
from .chunks import REDUCTIONS, run_chunk
from .plot import plot_sweep
from .run import SweepResult, check_chunk, load_results, run_sweep
from .spec import Spec, SpecError, load_spec

__all__ = ['load_spec', 'run_sweep', 'Spec', 'SpecError', 'SweepResult', 'load_results',
           'plot_sweep', 'run_chunk', 'check_chunk', 'REDUCTIONS']
