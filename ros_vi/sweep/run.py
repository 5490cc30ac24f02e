"""Running a sweep: chunks in-process or as Dask tasks, each written to disk as it arrives,
then merged into ``results.npz`` and described in ``sweep.json``.

Files in ``out_dir``::

    spec.json                the normalised spec and its hash (written first; a rerun with
                             another spec is refused)
    chunks/chunk-00012.npz   one chunk's columns, written atomically (a temporary
                             ``.chunk-00012-*.tmp`` renamed by os.replace), so a chunk file
                             is whole or absent; a rerun skips the chunks on disk that pass
                             :func:`check_chunk` and computes the others again
    results.npz              every chunk joined in sample order
    sweep.json               spec, hash, versions, host, wall time, chunks, failures
"""
import glob
import json
import math
import os
import platform
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..bounded import load_npz
from ..errors import name_list
from .chunks import run_chunk
from .spec import load_spec

__all__ = ['run_sweep', 'SweepResult', 'load_results', 'check_chunk', 'CHUNK_PATTERN']

CHUNK_PATTERN = 'chunk-%05d.npz'
# mkstemp makes 0600 files; the results get the permissions any other new file would
_UMASK = os.umask(0)
os.umask(_UMASK)
CHUNK_GLOB = 'chunk-*.npz'


@dataclass
class SweepResult:
    """What :func:`run_sweep` returns.

    ``columns``: the merged results (``results.npz``): every axis (n,), ``sample`` (n,),
    ``chunk`` (n,) and the reductions of :func:`ros_vi.sweep.chunks.run_chunk`.
    ``computed`` / ``reused``: chunk indices run now / found on disk; ``damaged``
    [(index, reason)]: chunk files found on disk that did not pass :func:`check_chunk` and
    were computed again; ``failed_chunks`` [(index, message)]; ``wall_time`` [s] of this
    run; ``steps`` VI steps computed in this run (``steps_per_second`` = steps /
    wall_time).
    """
    out_dir: str
    spec: object
    columns: dict
    computed: list
    reused: list
    failed_chunks: list
    wall_time: float
    steps: int
    scheduler: str
    workers: int
    info: dict = field(default_factory=dict)
    damaged: list = field(default_factory=list)

    @property
    def samples(self):
        return int(self.columns['sample'].size)

    @property
    def successes(self):
        """Samples that ran to the end and, when the spec has a target, reached it."""
        ok = self.columns['ok']
        if self.spec.target is not None:
            ok = ok & np.isfinite(self.columns['time_to_target'])
        return int(np.count_nonzero(ok))

    @property
    def failures(self):
        """Samples that did not run to the end (``error`` says why)."""
        return int(np.count_nonzero(~self.columns['ok']))

    @property
    def steps_per_second(self):
        return self.steps / self.wall_time if self.wall_time > 0 else math.nan


def _write_npz(path, arrays):
    """``np.savez`` to a temporary file in the same folder, then os.replace: readers see the
    old file or the whole new one, never a partial file.  The temporary name starts with a
    dot and ends in ``.tmp`` so it never matches ``chunk-*.npz``."""
    folder, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix='.%s-' % name[:-4], suffix='.tmp', dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, 'wb') as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _write_json(path, data):
    folder, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix='.%s-' % name, suffix='.tmp', dir=folder)
    os.fchmod(fd, 0o666 & ~_UMASK)
    with os.fdopen(fd, 'w', encoding='utf-8') as fh:
        json.dump(data, fh, indent=2, sort_keys=False)
        fh.write('\n')
    os.replace(tmp, path)


def _prepare(out_dir, spec):
    """Create ``out_dir``; refuse one that holds another spec's sweep."""
    os.makedirs(os.path.join(out_dir, 'chunks'), exist_ok=True)
    path = os.path.join(out_dir, 'spec.json')
    if os.path.exists(path):
        try:
            with open(path, encoding='utf-8') as fh:
                old = json.load(fh)
        except (OSError, ValueError) as err:
            raise ValueError('out_dir %r: cannot read its spec.json (%s); use another '
                             'directory' % (out_dir, err)) from None
        if old.get('hash') != spec.hash:
            raise ValueError('out_dir %r holds the results of a different spec (hash %s, this '
                             'spec %s): use another directory, or delete it to start over'
                             % (out_dir, str(old.get('hash'))[:12], spec.hash[:12]))
    else:
        _write_json(path, {'hash': spec.hash, 'spec': spec.data})


def _chunk_path(out_dir, index):
    return os.path.join(out_dir, 'chunks', CHUNK_PATTERN % index)


def _read_chunk(path, spec, index):
    """The columns of a chunk file, or ValueError naming the file and what is wrong with
    it (unreadable, or not what :func:`check_chunk` expects)."""
    where = 'chunk file %r' % path
    columns = load_npz(path, where)
    problem = check_chunk(columns, spec, index)
    if problem:
        raise ValueError('%s: %s' % (where, problem))
    return columns


_FLOAT = ('time_to_target', 't_end', 'energy', 'energy_error')
_PATHS = ('compiled', 'general', 'none')
_KINDS = {'i': 'integers', 'f': 'floats', 'b': 'booleans', 'U': 'text'}


def check_chunk(columns, spec, index):
    """What is wrong with the columns of chunk ``index`` of ``spec`` read from a file
    ('' when nothing): every column there with its dtype and one row per sample of the
    chunk, the samples and the axis values exactly the spec's table
    (:meth:`~ros_vi.sweep.Spec.chunk_table`), the chunk number, and values a run can give
    (``path`` one of compiled/general/none, ``t_end`` within the run, ``time_to_target`` at
    most ``t_end``, ``iterations`` >= 0).  A file that passes belongs to this spec; one
    that does not is computed again."""
    from .chunks import REDUCTIONS
    if 'spec_hash' in columns and columns['spec_hash'].shape == () and \
            str(columns['spec_hash']) != spec.hash:
        return 'it belongs to another spec (hash %s)' % str(columns['spec_hash'])[:12]
    table = spec.chunk_table(index)
    n, nq, nu = table['sample'].size, len(spec.joints), len(spec.inputs)
    expected = {'sample': ((n,), 'i'), 'ok': ((n,), 'b'), 'error': ((n,), 'U'),
                'q': ((n, nq), 'f'), 'v': ((n, nq), 'f'), 'max_effort': ((n, nu), 'f'),
                'iterations': ((n,), 'i'), 'balancing': ((n,), 'b'), 'path': ((n,), 'U'),
                'chunk_error': ((), 'U'), 'chunk_wall_time': ((), 'f'), 'worker': ((), 'U'),
                'spec_hash': ((), 'U'), 'chunk': ((), 'i')}
    expected.update({name: ((n,), 'f') for name in _FLOAT + tuple(spec.axes)})
    missing = [name for name in list(REDUCTIONS) + list(expected) if name not in columns]
    if missing:
        return 'no column %s' % name_list(dict.fromkeys(missing))
    for name, (shape, kind) in expected.items():
        array = columns[name]
        if array.shape != shape or array.dtype.kind != kind:
            return ('column %r is %s of shape %s, expected %s of shape %s (%d samples)'
                    % (name, array.dtype, array.shape, _KINDS[kind], shape, n))
    if int(columns['chunk']) != index:
        return 'it says it is chunk %d' % int(columns['chunk'])
    for name in ['sample'] + list(spec.axes):
        if not np.array_equal(columns[name], table[name]):
            return ('column %r differs from the spec\'s samples (first at row %d)'
                    % (name, int(np.flatnonzero(columns[name] != table[name])[0])))
    t_end, reached = columns['t_end'], columns['time_to_target']
    limit = spec.duration + spec.dt
    if not np.all(np.isnan(t_end) | ((t_end >= 0) & (t_end <= limit))):
        return 'column \'t_end\' holds times outside the run (0 to %g s)' % spec.duration
    if not np.all(np.isnan(reached) | ((reached >= 0) & (reached <= np.nan_to_num(
            t_end, nan=limit)))):
        return 'column \'time_to_target\' holds times after the end of the run'
    if np.any(columns['iterations'] < 0):
        return 'column \'iterations\' holds negative counts'
    unknown = sorted(set(columns['path'].tolist()) - set(_PATHS))
    if unknown:
        return 'column \'path\' holds %s (expected %s)' % (name_list(unknown),
                                                           ', '.join(_PATHS))
    return ''


def _done_chunks(out_dir, spec):
    """``({index}, [(index, reason)])``: the chunks on disk that belong to this spec and
    ran (a chunk that failed as a whole is run again), and the chunk files that did not
    pass :func:`check_chunk` (damaged, cut short, forged: computed again, never merged).
    ValueError for a chunk file of another spec."""
    done, damaged = set(), []
    for path in glob.glob(os.path.join(out_dir, 'chunks', CHUNK_GLOB)):
        name = os.path.basename(path)
        try:
            index = int(name[len('chunk-'):-len('.npz')])
        except ValueError:
            continue
        if not 0 <= index < spec.n_chunks:
            continue
        try:
            columns = load_npz(path, 'chunk file %r' % path)
        except (OSError, ValueError) as err:
            damaged.append((index, str(err)))
            continue
        problem = check_chunk(columns, spec, index)
        if problem.startswith('it belongs to another spec'):
            raise ValueError('chunk file %r belongs to another spec (hash %s): use another '
                             'directory' % (path, str(columns['spec_hash'])[:12]))
        if problem:
            damaged.append((index, 'chunk file %r: %s' % (path, problem)))
            continue
        if str(columns['chunk_error']):
            continue
        done.add(index)
    return done, sorted(damaged)


def _store(out_dir, spec, index, columns):
    arrays = dict(columns)
    arrays['spec_hash'] = np.array(spec.hash)
    arrays['chunk'] = np.array(index)
    _write_npz(_chunk_path(out_dir, index), arrays)


def _failed_task(spec, index, err):
    """Columns of a chunk whose task itself failed (a worker lost too often, ...)."""
    from .chunks import empty_chunk
    message = 'chunk %d failed: %s: %s' % (index, type(err).__name__, err)
    out = empty_chunk(spec, spec.chunk_table(index), message)
    out['error'] = np.asarray(out['error'], dtype=str)
    out['path'] = np.asarray(out['path'], dtype=str)
    out['chunk_error'] = np.array(message)
    out['chunk_wall_time'] = np.array(math.nan)
    out['worker'] = np.array(socket.gethostname())
    return out


def _steps(columns, dt):
    t = columns['t_end']
    return int(np.rint(t[np.isfinite(t)] / dt).sum())


class _SerialProgress:
    """``chunks k/n`` on stderr for the in-process run."""

    def __init__(self, total, enabled):
        self.total, self.enabled, self.done = total, enabled and total > 0, 0
        self.start = time.monotonic()

    def step(self):
        self.done += 1
        if self.enabled:
            frac = self.done / self.total
            sys.stderr.write('\r[%-40s] | %3d%% | chunk %d/%d | %.1f s'
                             % ('#' * int(40 * frac), 100 * frac, self.done, self.total,
                                time.monotonic() - self.start))
            if self.done == self.total:
                sys.stderr.write('\n')
            sys.stderr.flush()


def _run_serial(spec, todo, on_result, progress):
    bar = _SerialProgress(len(todo), progress)
    for index in todo:
        on_result(index, run_chunk(spec, index, threads=None))
        bar.step()


def _run_dask(spec, todo, client, on_result, progress):
    from dask.distributed import as_completed
    from dask.distributed import progress as dask_progress
    futures = {client.submit(run_chunk, spec, index, 1, pure=False,
                             key='ros-vi-sweep-%s-chunk-%05d' % (spec.hash[:8], index)): index
               for index in todo}
    bar = None
    if progress and futures:
        # dask's text bar blocks until the tasks finish: it runs beside the writer loop
        bar = threading.Thread(target=dask_progress, args=(list(futures),), daemon=True)
        bar.start()
    for future in as_completed(list(futures)):
        index = futures[future]
        try:
            columns = future.result()
        except Exception as err:       # the task itself failed (e.g. KilledWorker)
            columns = _failed_task(spec, index, err)
        on_result(index, columns)
        future.release()
    if bar is not None:
        bar.join(timeout=5.0)
        sys.stdout.write('\n')
        sys.stdout.flush()


def _cores():
    """The cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:
        return os.cpu_count() or 1


def _versions():
    import numba
    from .. import __version__
    out = {'ros_vi': __version__, 'numpy': np.__version__, 'numba': numba.__version__,
           'python': platform.python_version()}
    try:
        import dask
        import distributed
        out['dask'] = dask.__version__
        out['distributed'] = distributed.__version__
    except ImportError:
        out['dask'] = out['distributed'] = None
    return out


def _merge(out_dir, spec):
    """Join the chunk files (every chunk must be there) into ``results.npz``."""
    parts = []
    for index in range(spec.n_chunks):
        path = _chunk_path(out_dir, index)
        if not os.path.exists(path):
            raise RuntimeError('chunk %d is missing from %s' % (index, out_dir))
        parts.append(_read_chunk(path, spec, index))
    columns = {}
    for name in ['sample'] + spec.axes + list(_reduction_names()):
        columns[name] = np.concatenate([p[name] for p in parts])
    columns['chunk'] = np.concatenate([np.full(p['sample'].size, int(p['chunk']))
                                       for p in parts])
    meta = {'axes': np.array(spec.axes, dtype=str), 'joints': np.array(spec.joints, dtype=str),
            'inputs': np.array(spec.inputs, dtype=str), 'spec_hash': np.array(spec.hash)}
    _write_npz(os.path.join(out_dir, 'results.npz'), {**columns, **meta})
    return columns, parts


def _reduction_names():
    from .chunks import REDUCTIONS
    return REDUCTIONS


def load_results(out_dir):
    """``(columns, info)``: ``results.npz`` of a finished sweep as {name: array} and its
    ``sweep.json`` as a dict."""
    path = os.path.join(out_dir, 'results.npz')
    columns = load_npz(path, 'sweep results %r' % path)
    with open(os.path.join(out_dir, 'sweep.json'), encoding='utf-8') as fh:
        info = json.load(fh)
    return columns, info


def run_sweep(spec, out_dir, scheduler=None, workers=None, progress=True):
    """Run the sweep ``spec`` (a :class:`~ros_vi.sweep.Spec`, a YAML path or a dict) into
    ``out_dir``; returns a :class:`SweepResult`.

    ``scheduler``: None starts a ``dask.distributed.LocalCluster`` (worker processes,
    ``workers`` of them, default the cores, one thread each) and closes it at the end;
    ``'serial'`` runs the chunks one after the other in this process (no Dask; the rollout
    uses every core); ``'tcp://host:8786'`` sends them to that Dask scheduler's workers
    (waiting for ``workers`` of them when given).  Chunks already in ``out_dir`` (same spec)
    are not run again; another spec's ``out_dir`` is refused with a ValueError.
    """
    spec = load_spec(spec)
    out_dir = os.fspath(out_dir)
    if workers is not None and (int(workers) != workers or workers < 1):
        raise ValueError('workers must be an integer >= 1, got %r' % (workers,))
    if scheduler is not None and scheduler != 'serial' and '://' not in str(scheduler):
        raise ValueError("scheduler must be None, 'serial' or an address like "
                         "'tcp://host:8786', got %r" % (scheduler,))
    _prepare(out_dir, spec)
    started = time.perf_counter()
    started_at = time.strftime('%Y-%m-%dT%H:%M:%S%z')
    done, damaged = _done_chunks(out_dir, spec)
    todo = [i for i in range(spec.n_chunks) if i not in done]
    computed, failed, steps = [], [], [0]

    def on_result(index, columns):
        _store(out_dir, spec, index, columns)
        computed.append(index)
        if str(columns['chunk_error']):
            failed.append((index, str(columns['chunk_error'])))
        steps[0] += _steps(columns, spec.dt)

    n_workers = 1
    where = 'serial'
    if scheduler == 'serial':
        _run_serial(spec, todo, on_result, progress)
    elif not todo:
        where = 'nothing to run (every chunk on disk)'
        n_workers = 0
    else:
        from dask.distributed import Client, LocalCluster
        cluster = None
        if scheduler is None:
            n = int(workers or _cores())
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                   dashboard_address=':0')
            client = Client(cluster)
            where = 'LocalCluster'
        else:
            client = Client(scheduler)
            where = str(scheduler)
            n = int(workers or 0)
        try:
            if n:
                client.wait_for_workers(n)
            n_workers = len(client.scheduler_info(n_workers=-1)['workers'])
            _run_dask(spec, todo, client, on_result, progress)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    columns, parts = _merge(out_dir, spec)
    wall = time.perf_counter() - started
    messages = {}
    for e in columns['error'][~columns['ok']]:
        messages[str(e)] = messages.get(str(e), 0) + 1
    result = SweepResult(out_dir=out_dir, spec=spec, columns=columns, computed=sorted(computed),
                         reused=sorted(done), failed_chunks=sorted(failed), wall_time=wall,
                         steps=steps[0], scheduler=where, workers=n_workers,
                         damaged=damaged)
    info = {
        'spec': spec.data, 'spec_hash': spec.hash, 'source': spec.source,
        'versions': _versions(), 'host': socket.gethostname(),
        'platform': platform.platform(), 'started': started_at,
        'wall_time': wall, 'scheduler': where, 'workers': n_workers,
        'samples': result.samples, 'successes': result.successes,
        'failures': {'samples': result.failures,
                     'messages': dict(sorted(messages.items(), key=lambda kv: -kv[1])[:20]),
                     'chunks': [{'chunk': i, 'message': m} for i, m in sorted(failed)]},
        'chunks': {'total': spec.n_chunks, 'size': spec.chunk_size,
                   'computed': sorted(computed), 'reused': sorted(done),
                   'damaged': [{'chunk': i, 'reason': r} for i, r in damaged],
                   'workers': sorted({str(p['worker']) for p in parts})},
        'steps': steps[0],
        'steps_per_second': (result.steps_per_second
                             if math.isfinite(result.steps_per_second) else None),
        'units': spec.units, 'effort_units': spec.effort_units, 'grid_shape': list(spec.grid_shape),
        'random_samples': spec.samples if spec.random else 0,
        'files': {'results': 'results.npz', 'chunks': 'chunks/' + CHUNK_GLOB},
    }
    _write_json(os.path.join(out_dir, 'sweep.json'), info)
    result.info = info
    return result
