"""One chunk of a sweep: its samples as one :func:`ros_vi.rollout` call, and the per-sample
reductions it returns (what a Dask task computes; plain numpy arrays, no Systems)."""
import os
import socket
import time

import numpy as np

__all__ = ['run_chunk', 'REDUCTIONS', 'empty_chunk']

# the per-sample columns of a chunk (besides the axes): name -> (kind, per joint / input)
REDUCTIONS = ('ok', 'error', 'time_to_target', 't_end', 'q', 'v', 'max_effort', 'energy',
              'energy_error', 'iterations', 'balancing', 'path')

def empty_chunk(spec, table, message=''):
    """The columns of chunk ``table`` with every sample failed (``error`` = ``message``):
    what is filled in before the run and kept for a chunk that could not run."""
    n, nq, nu = table['sample'].size, len(spec.joints), len(spec.inputs)
    out = {'sample': table['sample']}
    for name in spec.axes:
        out[name] = table[name]
    out.update(ok=np.zeros(n, dtype=bool), error=np.array([message] * n, dtype=object),
               time_to_target=np.full(n, np.nan), t_end=np.full(n, np.nan),
               q=np.full((n, nq), np.nan), v=np.full((n, nq), np.nan),
               max_effort=np.full((n, nu), np.nan), energy=np.full(n, np.nan),
               energy_error=np.full(n, np.nan), iterations=np.zeros(n, dtype=np.int64),
               balancing=np.zeros(n, dtype=bool), path=np.array(['none'] * n, dtype=object))
    return out


def _finish(out, chunk_error, started):
    out['error'] = np.asarray(out['error'], dtype=str)
    out['path'] = np.asarray(out['path'], dtype=str)
    out['chunk_error'] = np.array(chunk_error)
    out['chunk_wall_time'] = np.array(time.perf_counter() - started)
    out['worker'] = np.array('%s:%d' % (socket.gethostname(), os.getpid()))
    return out


def _parameter_failures(system, params, rows):
    """{row: message} for the samples whose parameters ros_vi.batch refuses (a random draw
    of a damping below zero, ...): checked with the batch's own rule, one sample at a time
    only when the whole chunk is refused."""
    from ..batch.parameters import check_parameters
    try:
        check_parameters(system, params, rows)
        return {}
    except ValueError:
        pass
    bad = {}
    for r in range(rows):
        for name, values in params.items():
            try:
                check_parameters(system, {name: values[r:r + 1]}, 1)
            except ValueError as err:
                bad.setdefault(r, str(err))
    return bad


def run_chunk(spec, index, threads=1):
    """The reductions of chunk ``index`` of ``spec`` (:class:`~ros_vi.sweep.Spec`):
    ``{'sample': (n,), axis: (n,), 'ok': (n,) bool, 'error': (n,) str ('' when fine),
    'time_to_target' [s], 't_end' [s], 'energy' [J], 'energy_error' [J] (n,),
    'q', 'v' (n, nQ) [rad, m, rad/s, m/s], 'max_effort' (n, nu) [N m, N], 'iterations' (n,),
    'balancing' (n,), 'path' (n,) str, 'chunk_error' str}``.

    Samples whose parameters are refused or whose controller cannot be designed are failed
    one by one with the reason; the others run in one :func:`ros_vi.rollout` call on
    ``threads`` cores.  If that call raises, every sample of the chunk is failed with the
    message (``chunk_error``) and nothing is raised.
    """
    from ..batch import Target, rollout
    from .spec import build_model, controller_factory
    started = time.perf_counter()
    table = spec.chunk_table(index)
    out = empty_chunk(spec, table)
    n = table['sample'].size
    try:
        # built per chunk (milliseconds, against seconds of rolling out): nothing is kept
        # in the worker process between chunks
        system = build_model(spec.demo, spec.urdf_text, spec.base_dir)
        names = spec.joints
        q0 = np.tile(spec.start, (n, 1))
        dq0 = np.zeros((n, len(names)))
        params, ctrl_axes = {}, []
        for name in spec.axes:
            head, _, rest = name.partition('.')
            if head == 'q0':
                q0[:, names.index(rest)] = table[name]
            elif head == 'dq0':
                dq0[:, names.index(rest)] = table[name]
            elif head == 'controller':
                ctrl_axes.append((rest, table[name]))
            else:
                params[name] = table[name]
        failed = _parameter_failures(system, params, n)
        if 'delay' in params:
            # a drawn delay beyond the run never arrives (spec.py refuses fixed ones)
            for r in np.flatnonzero(~(params['delay'] <= spec.duration)):
                failed.setdefault(int(r), 'delay %g s is longer than the run (duration %g s)'
                                  % (params['delay'][r], spec.duration))

        target = Target(**spec.target) if spec.target is not None else None
        factory = controller_factory(spec.demo, spec.controller)
        goal = np.array(spec.target['goal']) if spec.target is not None else spec.start
        per_row = [None] * n
        if factory is not None:
            designs = {}
            for r in range(n):
                if r in failed:
                    continue
                key = tuple(float(values[r]) for _, values in ctrl_axes)
                if key not in designs:
                    kwargs = dict(spec.controller_params)
                    kwargs.update({k: v for (k, _), v in zip(ctrl_axes, key)})
                    try:
                        # the controller works on its own instance of the model
                        designs[key] = factory(build_model(spec.demo, spec.urdf_text,
                                                           spec.base_dir),
                                               spec.dt, goal, **kwargs)
                    except Exception as err:          # a design the values do not allow
                        designs[key] = 'controller design failed (%s): %s: %s' % (
                            ', '.join('controller.%s = %g' % (k, v)
                                      for (k, _), v in zip(ctrl_axes, key)),
                            type(err).__name__, err)
                if isinstance(designs[key], str):
                    failed[r] = designs[key]
                else:
                    per_row[r] = designs[key]
        for r, message in failed.items():
            out['error'][r] = message
        run = np.array([r for r in range(n) if r not in failed], dtype=np.int64)
        if run.size == 0:
            return _finish(out, '', started)
        if factory is None:
            controller = None
        else:
            chosen = [per_row[r] for r in run]
            controller = chosen[0] if all(c is chosen[0] for c in chosen) else chosen
        result = rollout(system, q0[run], dq0[run], controller, spec.duration, spec.dt,
                         {k: v[run] for k, v in params.items()}, target=target,
                         threads=threads)
    except Exception as err:
        message = 'chunk %d failed: %s: %s' % (index, type(err).__name__, err)
        return _finish(empty_chunk(spec, table, message), message, started)
    out['ok'][run] = result.ok
    for i, r in enumerate(run):
        out['error'][r] = result.error[i] or ''
    for name in ('time_to_target', 't_end', 'q', 'v', 'max_effort', 'energy',
                 'energy_error', 'iterations', 'balancing', 'path'):
        out[name][run] = getattr(result, name)
    return _finish(out, '', started)
