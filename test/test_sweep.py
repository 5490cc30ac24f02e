"""Parameter sweeps (ros_vi.sweep, ``ros-vi sweep``): the spec's checks, the sample table,
serial and Dask runs against ros_vi.rollout, a worker lost mid-sweep, failures, resume,
atomic chunk files, the command line and its pictures."""
import fnmatch
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ros_vi
from ros_vi.control.presets import DEMOS
from ros_vi.sweep import REDUCTIONS, load_spec, run_chunk, run_sweep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, 'examples', 'sweeps')


def pendulum(**fields):
    spec = {'model': 'pendulum', 'controller': 'swingup', 'dt': 0.01, 'duration': 1.0}
    spec.update(fields)
    return spec


# small but varied: 4 angles x 2 energy gains x 2 plant masses = 16 samples in 4 chunks
SMALL = pendulum(duration=2.0, chunk_size=5, grid={
    'q0.theta': {'from': -3.0, 'to': 3.0, 'num': 4},
    'controller.k_energy': {'values': [1.0, 3.0]},
    'mass_scale': {'values': [0.9, 1.1]}})

# a grid with random draws per point: 2 x 2 points x 3 draws = 12 samples in 3 chunks
MIXED = pendulum(duration=1.5, chunk_size=5, grid={
    'q0.theta': {'values': [-2.5, 1.0]}, 'dq0.theta': {'values': [0.0, 2.0]}},
    random={'samples': 3, 'seed': 7, 'mass_scale': {'uniform': [0.8, 1.2]},
            'delay': {'uniform': [0.0, 0.03]}})


def columns_equal(a, b, names):
    for name in names:
        x, y = np.asarray(a[name]), np.asarray(b[name])
        assert x.shape == y.shape, name
        if x.dtype.kind == 'f':
            assert np.array_equal(x, y, equal_nan=True), name
        else:
            assert np.array_equal(x, y), name


# ------------------------------------------------------------------ the spec

@pytest.mark.parametrize('change, message', [
    ({'grid': {'q0.thetta': {'values': [1.0]}}},
     "spec field grid.q0.thetta: unknown joint 'thetta' (joints: theta)"),
    ({'grid': {'damping.elbow': {'values': [1.0]}}},
     "spec field grid.damping.elbow: unknown joint 'elbow' (joints: theta)"),
    ({'grid': {'stiffness': {'values': [1.0]}}},
     "spec field grid.stiffness: unknown axis 'stiffness'"),
    ({'random': {'samples': 4, 'mass.bob': {'uniform': [0.5, 1.0]}}},
     "spec field random.mass.bob: unknown link 'bob' (links with mass: pendulum)"),
    ({'grid': {'controller.k_energi': {'values': [1.0]}}},
     "spec field grid.controller.k_energi: unknown controller parameter 'k_energi'"),
    ({'controller_params': {'gain': 2.0}, 'grid': {'q0.theta': {'values': [0.0]}}},
     "spec field controller_params.gain: unknown controller parameter 'gain'"),
    ({'controller': 'none', 'grid': {'controller.u_max': {'values': [1.0]}}},
     'spec field grid.controller.u_max: controller none has no parameters to vary'),
    ({'grid': {'q0.theta': {'values': []}}},
     'spec field grid.q0.theta.values: empty list'),
    ({'grid': {'q0.theta': {'from': 0.0, 'to': 1.0, 'num': 0}}},
     'spec field grid.q0.theta.num: must be >= 1, got 0'),
    ({'grid': {'q0.theta': {'from': 0.0, 'num': 3}}},
     'spec field grid.q0.theta: missing to'),
    ({'grid': {'damping.theta': {'values': [0.5, -1.0]}}},
     "spec field grid.damping.theta: parameter 'damping.theta' must be >= 0"),
    ({'duration': -1.0, 'grid': {'q0.theta': {'values': [0.0]}}},
     'spec field duration: must be > 0, got -1.0'),
    ({'dt': 0, 'grid': {'q0.theta': {'values': [0.0]}}},
     'spec field dt: must be > 0, got 0.0'),
    ({'random': {'samples': 4, 'mass_scale': {'gauss': [1.0, 0.1]}}},
     "spec field random.mass_scale: unknown distribution 'gauss'"),
    ({'random': {'samples': 4, 'mass_scale': {'normal': [1.0, -0.1]}}},
     'spec field random.mass_scale.normal: std must be >= 0, got -0.1'),
    ({'random': {'samples': 4, 'mass_scale': {'uniform': [1.2, 0.8]}}},
     'spec field random.mass_scale.uniform: low 1.2 must be <= high 0.8'),
    ({'random': {'samples': 0, 'mass_scale': {'uniform': [0.8, 1.2]}}},
     'spec field random.samples: must be >= 1, got 0'),
    ({'grid': {}}, 'spec field grid: no axis'),
    ({'gird': {'q0.theta': {'values': [0.0]}}}, 'spec field gird: unknown field'),
    ({'controller': 'pid', 'grid': {'q0.theta': {'values': [0.0]}}},
     "spec field controller: expected one of none, lqr, swingup, got 'pid'"),
    ({'target': {'goal': [1.0, 2.0]}, 'grid': {'q0.theta': {'values': [0.0]}}},
     'spec field target: target goal: expected 1 finite values'),
    ({'controller_params': {'u_max': -1.0}, 'grid': {'q0.theta': {'values': [0.0]}}},
     'spec field controller_params: the swingup controller cannot be designed: u_max must '
     'be > 0'),
])
def test_bad_specs_are_refused_naming_the_field(change, message):
    with pytest.raises(ValueError) as err:
        load_spec(pendulum(**change))
    assert str(err.value).startswith(message), str(err.value)


def test_model_field_is_checked(tmp_path):
    with pytest.raises(ValueError, match=r"spec field model: unknown model 'pendulumm'"):
        load_spec(pendulum(model='pendulumm', grid={'q0.theta': {'values': [0.0]}}))
    with pytest.raises(ValueError, match=r'spec field model: no such file'):
        load_spec(pendulum(model='no/such.urdf', grid={'q0.theta': {'values': [0.0]}}))
    with pytest.raises(ValueError, match=r'spec field controller: swingup is available'):
        load_spec({'model': 'arm7', 'controller': 'swingup', 'dt': 0.01, 'duration': 1.0,
                   'grid': {'q0.joint_1': {'values': [0.0]}}})
    with pytest.raises(ValueError, match=r'spec field dt: missing'):
        load_spec({'model': 'arm7', 'duration': 1.0, 'grid': {'q0.joint_1': {'values': [0]}}})
    bad = tmp_path / 'bad.yaml'
    bad.write_text('model: pendulum\ngrid: {q0.theta: {values: [1, 2]\n')
    with pytest.raises(ValueError, match=r'is not valid YAML'):
        load_spec(str(bad))


def test_example_specs_load_and_validate():
    basin = load_spec(os.path.join(EXAMPLES, 'pendulum_basin.yaml'))
    assert basin.axes == ['q0.theta', 'dq0.theta']
    assert basin.grid_shape == (200, 200) and basin.n_samples == 40000
    assert basin.grid[0][1][0] == pytest.approx(-np.pi) and basin.grid[1][1][-1] == 6.0
    assert basin.units == {'q0.theta': 'rad', 'dq0.theta': 'rad/s'}
    assert basin.controller == 'swingup' and basin.target['goal'] == [pytest.approx(np.pi)]
    mc = load_spec(os.path.join(EXAMPLES, 'pendulum_robustness.yaml'))
    assert mc.axes == ['mass_scale', 'damping.theta', 'delay'] and mc.n_samples == 2000
    assert mc.n_chunks == 8 and not mc.grid
    assert mc.units == {'mass_scale': '1', 'damping.theta': 'N m s/rad', 'delay': 's'}
    # the spec hash identifies the results: the same file gives the same hash
    assert load_spec(os.path.join(EXAMPLES, 'pendulum_robustness.yaml')).hash == mc.hash
    assert basin.hash != mc.hash


def test_urdf_file_model_with_lqr(tmp_path):
    path = os.path.join(ROOT, 'urdf', 'cartpole.urdf')
    spec = load_spec({'model': path, 'controller': 'lqr', 'dt': 0.01, 'duration': 3.0,
                      'target': {'goal': [0.0, 0.0], 'configs': ['pole']}, 'grid': {
                          'q0.pole': {'values': [-0.1, 0.1]},
                          'controller.R': {'values': [0.1, 1.0]}}})
    assert spec.joints == ['cart', 'pole'] and spec.demo is None
    with pytest.raises(ValueError, match=r"spec field target.configs: unknown joint 'pol'"):
        load_spec({'model': path, 'dt': 0.01, 'duration': 1.0, 'grid': {
            'q0.pole': {'values': [0.1]}}, 'target': {'goal': [0, 0], 'configs': ['pol']}})
    out = run_chunk(spec, 0)
    assert out['ok'].all() and np.isfinite(out['time_to_target']).all()
    # a larger effort weight R asks for less effort from the same start
    eff = out['max_effort'][:, 0].reshape(2, 2)
    assert np.all(eff[:, 1] < eff[:, 0])


def test_a_urdf_with_a_ros2_control_block_runs_with_plant_parameters():
    # the plant with other damping is a deep copy of the imported System: its ros2_control
    # blocks (read-only mappings) must copy, and pickle for the Dask workers
    import copy
    import pickle
    spec = load_spec({'model': 'arm7', 'controller': 'lqr', 'dt': 0.005, 'duration': 0.2,
                      'grid': {'q0.joint_2': {'values': [0.0, 0.1]},
                               'damping.joint_2': {'values': [0.5, 2.0]}}})
    out = run_chunk(spec, 0)
    assert out['ok'].all(), out['error']
    assert (out['path'] == 'compiled').all()
    # the LQR (no target: designed about the start) holds q = 0; 0.1 rad away takes more
    assert np.all(out['max_effort'][2:, 1] > out['max_effort'][:2, 1])
    from ros_vi.sweep.spec import build_model, resolve_model
    system = build_model(*resolve_model('arm7', ROOT)[:3])
    for other in (copy.deepcopy(system), pickle.loads(pickle.dumps(system))):
        assert other.urdf.ros2_control == system.urdf.ros2_control
        assert other.urdf.joint_controls == system.urdf.joint_controls
        with pytest.raises(TypeError):
            other.urdf.ros2_control[0].joints['joint_1'] = None


# ------------------------------------------------------------------ the sample table

def test_grid_product_size_and_order():
    spec = load_spec(pendulum(grid={'q0.theta': {'values': [1.0, 2.0, 3.0]},
                                    'dq0.theta': {'from': -1.0, 'to': 1.0, 'num': 2}},
                              chunk_size=4))
    assert spec.n_samples == 6 and spec.n_chunks == 2
    table = spec.table()
    # first axis slowest (C order)
    assert table['q0.theta'].tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert table['dq0.theta'].tolist() == [-1.0, 1.0] * 3
    assert table['sample'].tolist() == list(range(6))
    assert spec.chunk_rows(1) == (4, 6)
    assert spec.chunk_table(1)['q0.theta'].tolist() == [3.0, 3.0]


def test_grid_with_random_draws_per_point():
    spec = load_spec(MIXED)
    assert spec.n_samples == 12 and spec.n_chunks == 3
    table = spec.table()
    assert table['q0.theta'].tolist() == [-2.5] * 6 + [1.0] * 6
    assert table['dq0.theta'].tolist() == ([0.0] * 3 + [2.0] * 3) * 2
    assert np.all((table['mass_scale'] >= 0.8) & (table['mass_scale'] <= 1.2))
    assert len(set(table['mass_scale'].tolist())) == 12


def test_random_draws_depend_on_seed_and_chunk_only():
    fields = pendulum(chunk_size=4, random={
        'samples': 10, 'seed': 3, 'mass_scale': {'uniform': [0.9, 1.1]},
        'gravity': {'normal': [9.8, 0.2]}})
    a, b = load_spec(fields), load_spec(fields)
    # chunk i's draws: default_rng([seed, i]), axis after axis, whatever else ran before
    for i in reversed(range(a.n_chunks)):
        first, stop = a.chunk_rows(i)
        rng = np.random.default_rng([3, i])
        mass, gravity = rng.uniform(0.9, 1.1, stop - first), rng.normal(9.8, 0.2, stop - first)
        t = b.chunk_table(i)
        assert np.array_equal(t['mass_scale'], mass) and np.array_equal(t['gravity'], gravity)
    assert np.array_equal(a.table()['mass_scale'], b.table()['mass_scale'])
    other = load_spec(dict(fields, random=dict(fields['random'], seed=4)))
    assert not np.array_equal(other.table()['mass_scale'], a.table()['mass_scale'])
    assert other.hash != a.hash
    # the chunking is part of the spec: another chunk size draws other values
    rechunked = load_spec(dict(fields, chunk_size=5))
    assert not np.array_equal(rechunked.table()['mass_scale'], a.table()['mass_scale'])


# ------------------------------------------------------------------ runs

@pytest.fixture(scope='module')
def small_serial(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('small') / 'serial')
    return run_sweep(SMALL, out, scheduler='serial', progress=False)


def test_serial_equals_rollout_called_directly(small_serial):
    spec = small_serial.spec
    table = spec.table()
    demo = DEMOS['pendulum']
    n = spec.n_samples
    designs = {k: demo.controller(demo.model(), dt=spec.dt, k_energy=k) for k in (1.0, 3.0)}
    direct = ros_vi.rollout(
        demo.model(), table['q0.theta'][:, None], np.zeros((n, 1)),
        [designs[k] for k in table['controller.k_energy']], spec.duration, spec.dt,
        {'mass_scale': table['mass_scale']},
        target=ros_vi.Target(goal=[np.pi], q_tol=0.05, v_tol=0.1))
    c = small_serial.columns
    assert small_serial.samples == 16 and small_serial.computed == [0, 1, 2, 3]
    assert c['ok'].all() and (c['error'] == '').all()
    for name in REDUCTIONS:
        if name == 'error':
            continue
        expected = getattr(direct, name)
        got = c[name]
        if got.dtype.kind == 'f':
            assert np.array_equal(got, expected, equal_nan=True), name
        else:
            assert np.array_equal(got, np.asarray(expected)), name
    for name in spec.axes:
        assert np.array_equal(c[name], table[name])
    # the sweep's files: every column in results.npz, the run described in sweep.json
    with np.load(os.path.join(small_serial.out_dir, 'results.npz')) as z:
        assert set(spec.axes + list(REDUCTIONS) + ['sample', 'chunk']) <= set(z.files)
        assert z['error'].dtype.kind == 'U'
        assert z['axes'].tolist() == spec.axes and z['joints'].tolist() == ['theta']
    with open(os.path.join(small_serial.out_dir, 'sweep.json')) as fh:
        info = json.load(fh)
    assert info['spec_hash'] == spec.hash and info['spec'] == spec.data
    assert info['samples'] == 16 and info['failures']['samples'] == 0
    assert info['chunks']['computed'] == [0, 1, 2, 3]
    for key in ('ros_vi', 'numpy', 'numba', 'dask', 'python'):
        assert info['versions'][key]
    assert info['host'] and info['wall_time'] > 0


def test_dask_local_cluster_equals_serial(tmp_path):
    serial = run_sweep(MIXED, str(tmp_path / 'serial'), scheduler='serial', progress=False)
    dask = run_sweep(MIXED, str(tmp_path / 'dask'), scheduler=None, workers=2,
                     progress=False)
    assert dask.scheduler == 'LocalCluster' and dask.workers == 2
    assert dask.computed == [0, 1, 2]
    names = ['sample'] + serial.spec.axes + list(REDUCTIONS) + ['chunk']
    columns_equal(serial.columns, dask.columns, names)
    assert serial.columns['ok'].all()
    # the chunks ran in the worker processes, not here
    assert str(os.getpid()) not in ' '.join(dask.info['chunks']['workers'])


def test_a_worker_killed_mid_sweep_is_replaced_and_the_results_are_complete(tmp_path):
    from dask.distributed import Client, LocalCluster
    # chunks of 8 samples x 5000 steps: long enough to kill a worker while it works
    spec = load_spec(pendulum(dt=0.001, duration=5.0, chunk_size=8, grid={
        'q0.theta': {'from': -3.0, 'to': 3.0, 'num': 6},
        'damping.theta': {'values': [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]}}))
    assert spec.n_chunks == 6
    serial = run_sweep(spec, str(tmp_path / 'serial'), scheduler='serial', progress=False)
    out = str(tmp_path / 'dask')
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=':0') as cluster, Client(cluster) as client:
        before = client.run(os.getpid)
        box = {}

        def sweep():
            try:
                box['result'] = run_sweep(spec, out, scheduler=cluster.scheduler_address,
                                          progress=False)
            except BaseException as err:        # reported below
                box['error'] = err
        runner = threading.Thread(target=sweep)
        runner.start()
        victim = None
        deadline = time.monotonic() + 600
        while victim is None and runner.is_alive() and time.monotonic() < deadline:
            if glob.glob(os.path.join(out, 'chunks', 'chunk-*.npz')):
                busy = [w for w, keys in client.processing().items() if keys]
                if busy:
                    victim = busy[0]
                    os.kill(before[victim], signal.SIGKILL)
                    on_disk = len(glob.glob(os.path.join(out, 'chunks', 'chunk-*.npz')))
            time.sleep(0.02)
        runner.join(600)
        assert victim is not None, 'no worker was busy after the first chunk arrived'
        assert on_disk < spec.n_chunks
        assert 'error' not in box, box.get('error')
        # the nanny started a new worker process in place of the killed one
        client.wait_for_workers(2, timeout=120)
        after = set(client.run(os.getpid).values())
        assert before[victim] not in after
    result = box['result']
    assert result.failed_chunks == [] and result.failures == 0
    assert sorted(result.computed) == list(range(spec.n_chunks))
    columns_equal(serial.columns, result.columns,
                  ['sample'] + spec.axes + list(REDUCTIONS) + ['chunk'])


def test_failing_samples_are_reported_and_the_others_run(tmp_path):
    spec = pendulum(duration=1.0, chunk_size=6, grid={
        'q0.theta': {'values': [-1.0, 0.5, 2.0]},
        'controller.u_max': {'values': [5.0, -1.0]}},
        random={'samples': 2, 'seed': 0, 'damping.theta': {'normal': [0.2, 0.3]}})
    result = run_sweep(spec, str(tmp_path), scheduler='serial', progress=False)
    c = result.columns
    bad_design = c['controller.u_max'] < 0
    bad_damping = c['damping.theta'] < 0
    assert (bad_damping & ~bad_design).any() and (bad_design & ~bad_damping).any()
    assert (~bad_damping & ~bad_design).any()
    for i in range(result.samples):
        if bad_damping[i]:        # checked first: the parameters, then the design
            assert not c['ok'][i]
            assert "parameter 'damping.theta' must be >= 0" in c['error'][i]
        elif bad_design[i]:
            assert not c['ok'][i]
            assert c['error'][i].startswith('controller design failed (controller.u_max = '
                                            '-1)'), c['error'][i]
            assert 'u_max must be > 0' in c['error'][i]
        else:
            assert c['ok'][i] and c['error'][i] == '' and c['path'][i] == 'compiled'
            assert np.isfinite(c['energy_error'][i])
    assert result.failures == int(np.count_nonzero(bad_design | bad_damping))
    assert result.failed_chunks == []
    assert np.isnan(c['time_to_target'][~c['ok']]).all()
    assert result.info['failures']['samples'] == result.failures


def test_a_chunk_whose_rollout_raises_is_failed_as_a_whole_and_rerun_later(tmp_path,
                                                                          monkeypatch):
    import ros_vi.batch
    real = ros_vi.batch.rollout

    def flaky(system, q0, *args, **kwargs):
        if np.any(q0[:, 0] == 2.0):
            raise RuntimeError('simulated crash')
        return real(system, q0, *args, **kwargs)
    monkeypatch.setattr(ros_vi.batch, 'rollout', flaky)
    spec = pendulum(chunk_size=2, grid={'q0.theta': {'values': [0.0, 1.0, 2.0, 3.0]}})
    out = str(tmp_path)
    first = run_sweep(spec, out, scheduler='serial', progress=False)
    c = first.columns
    assert first.failed_chunks == [(1, 'chunk 1 failed: RuntimeError: simulated crash')]
    assert c['ok'].tolist() == [True, True, False, False]
    assert c['error'][2] == 'chunk 1 failed: RuntimeError: simulated crash'
    assert first.info['failures']['chunks'] == [
        {'chunk': 1, 'message': 'chunk 1 failed: RuntimeError: simulated crash'}]
    # a rerun computes the failed chunk again, and only it
    monkeypatch.setattr(ros_vi.batch, 'rollout', real)
    second = run_sweep(spec, out, scheduler='serial', progress=False)
    assert second.computed == [1] and second.reused == [0]
    assert second.columns['ok'].all()


def test_resume_recomputes_only_missing_chunks_and_refuses_another_spec(small_serial,
                                                                         tmp_path):
    import shutil
    out = str(tmp_path / 'copy')
    shutil.copytree(small_serial.out_dir, out)
    chunks = sorted(glob.glob(os.path.join(out, 'chunks', 'chunk-*.npz')))
    assert len(chunks) == 4
    os.remove(chunks[2])
    stamps = {p: os.stat(p).st_mtime_ns for p in chunks if p != chunks[2]}
    again = run_sweep(SMALL, out, scheduler='serial', progress=False)
    assert again.computed == [2] and again.reused == [0, 1, 3]
    assert {p: os.stat(p).st_mtime_ns for p in stamps} == stamps
    assert os.path.exists(chunks[2])
    columns_equal(small_serial.columns, again.columns,
                  ['sample'] + again.spec.axes + list(REDUCTIONS) + ['chunk'])
    with open(os.path.join(out, 'sweep.json')) as fh:
        assert json.load(fh)['chunks']['reused'] == [0, 1, 3]
    other = dict(SMALL, duration=1.0)
    with pytest.raises(ValueError, match=r'holds the results of a different spec'):
        run_sweep(other, out, scheduler='serial', progress=False)
    assert {p: os.stat(p).st_mtime_ns for p in stamps} == stamps


def test_chunk_files_are_written_atomically(tmp_path, monkeypatch):
    out = str(tmp_path)
    chunk_dir = os.path.join(out, 'chunks')
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        # at the rename the temporary file is whole, in the same folder, and invisible to
        # the chunk glob
        if os.path.dirname(dst) == chunk_dir:
            name = os.path.basename(src)
            assert os.path.dirname(src) == chunk_dir
            assert not fnmatch.fnmatch(name, 'chunk-*.npz')
            assert src not in glob.glob(os.path.join(chunk_dir, 'chunk-*.npz'))
            with np.load(src) as z:
                assert z['sample'].size > 0
            seen.append((name, os.path.basename(dst)))
        return real_replace(src, dst)
    monkeypatch.setattr(os, 'replace', spy)
    spec = pendulum(chunk_size=2, grid={'q0.theta': {'values': [0.0, 1.0, 2.0]}})
    run_sweep(spec, out, scheduler='serial', progress=False)
    assert [d for _, d in seen] == ['chunk-00000.npz', 'chunk-00001.npz']
    assert sorted(os.listdir(chunk_dir)) == ['chunk-00000.npz', 'chunk-00001.npz']

    # a write that dies half-way leaves neither a chunk file nor the temporary one
    import ros_vi.sweep.run as sweep_run
    os.remove(os.path.join(chunk_dir, 'chunk-00001.npz'))

    def dying_savez(fh, **arrays):
        fh.write(b'PK\x03\x04 partial')
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(sweep_run.np, 'savez', dying_savez)
    with pytest.raises(OSError):
        run_sweep(spec, out, scheduler='serial', progress=False)
    assert sorted(os.listdir(chunk_dir)) == ['chunk-00000.npz']


# ------------------------------------------------------------------ command line

def ros_vi_cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    proc = subprocess.run([sys.executable, '-m', 'ros_vi', 'sweep'] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=900, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def write_yaml(path, text):
    path.write_text(text)
    return str(path)


def test_cli_runs_a_sweep_and_draws_its_pictures(tmp_path):
    from PIL import Image
    # 6 x 5 grid x 2 draws; some damping draws are negative: failed samples
    spec = write_yaml(tmp_path / 'tiny.yaml', """
model: pendulum
controller: swingup
dt: 0.01
duration: 2.0
grid:
  q0.theta: {from: -3.0, to: 3.0, num: 6}
  dq0.theta: {from: -4.0, to: 4.0, num: 5}
random:
  samples: 2
  seed: 5
  damping.theta: {normal: [0.4, 0.5]}
chunk_size: 16
""")
    out = tmp_path / 'out'
    status, stdout, stderr = ros_vi_cli(spec, '--out', out, '--serial', '--no-progress',
                                        '--plot')
    assert status == 0, stderr + stdout
    columns = np.load(out / 'results.npz')
    failed = int(np.count_nonzero(~columns['ok']))
    assert 0 < failed < 60
    assert 'samples:     60 (4 chunks: 4 computed, 0 on disk already)' in stdout
    assert 'failures:    %d (did not run to the end)' % failed in stdout
    assert "parameter 'damping.theta' must be >= 0" in stdout
    assert 'steps/s' in stdout and 'serial (this process)' in stdout
    for name in ('sweep.json', 'spec.json', 'basin.png', 'histograms.png'):
        assert (out / name).stat().st_size > 0, name
    assert 'plot: %s' % (out / 'basin.png') in stdout
    for name in ('basin.png', 'histograms.png'):
        pixels = np.asarray(Image.open(out / name).convert('RGB'), dtype=float)
        assert pixels.shape[0] > 300 and pixels.shape[1] > 500
        assert pixels.std() > 20, name          # a picture, not a blank canvas
    basin = np.asarray(Image.open(out / 'basin.png').convert('RGB')).astype(int)
    # a grid cell whose two draws both failed is drawn in the failure colour
    both_failed = (~columns['ok']).reshape(6, 5, 2).all(axis=2).any()
    red = np.all(np.abs(basin - [214, 39, 40]) < 4, axis=2).sum()
    assert (red > 50) == bool(both_failed)

    # rerun: everything on disk already, no cluster to start
    status, stdout, _ = ros_vi_cli(spec, '--out', out, '--no-progress')
    assert status == 0 and '0 computed, 4 on disk already' in stdout
    assert 'every chunk was on disk already' in stdout
    assert 'failures:    %d (did not run to the end)' % failed in stdout


def test_cli_refuses_a_bad_spec_and_another_specs_directory(tmp_path):
    bad = write_yaml(tmp_path / 'bad.yaml', """
model: pendulum
controller: swingup
grid:
  q0.thetta: {from: -1, to: 1, num: 3}
""")
    status, stdout, stderr = ros_vi_cli(bad, '--out', tmp_path / 'o', '--serial')
    assert status == 2
    assert ("ros-vi sweep: error: spec field grid.q0.thetta: unknown joint 'thetta' "
            "(joints: theta)") in stderr
    assert not (tmp_path / 'o').exists()
    one = write_yaml(tmp_path / 'one.yaml', """
model: pendulum
controller: lqr
duration: 0.2
dt: 0.01
grid: {q0.theta: {values: [3.0, 3.2]}}
""")
    status, stdout, stderr = ros_vi_cli(one, '--out', tmp_path / 'o', '--serial',
                                        '--no-progress')
    assert status == 0, stderr
    assert 'successes:' in stdout
    two = write_yaml(tmp_path / 'two.yaml', open(one).read().replace('0.2', '0.3'))
    status, _, stderr = ros_vi_cli(two, '--out', tmp_path / 'o', '--serial')
    assert status == 2 and 'holds the results of a different spec' in stderr


# ------------------------------------------------------------- hostile specs (issue #25)
@pytest.mark.parametrize('change, message', [
    ({'grid': {'q0.theta': {'from': 0, 'to': 1, 'num': 10 ** 6},
               'dq0.theta': {'from': 0, 'to': 1, 'num': 10 ** 6}}},
     'spec field grid: 1,000,000,000,000 grid points (1000000 x 1000000), more than the '
     '10,000,000 samples a sweep may have (MAX_SAMPLES)'),
    ({'grid': {'q0.theta': {'from': 0, 'to': 1, 'num': 1e12}}},
     'spec field grid.q0.theta.num: 1,000,000,000,000 is more than the 10,000,000 a sweep '
     'may have (MAX_SAMPLES)'),
    ({'random': {'samples': 1e15, 'mass_scale': {'uniform': [0.9, 1.1]}}},
     'spec field random.samples: 1,000,000,000,000,000 is more than the 10,000,000 a sweep '
     'may have (MAX_SAMPLES)'),
    ({'grid': {'q0.theta': {'values': [0.0] * 10}},
      'random': {'samples': 2_000_000, 'mass_scale': {'uniform': [0.9, 1.1]}}},
     'spec field random.samples: 2,000,000 draws per grid point x 10 grid points is '
     '20,000,000 samples'),
    ({'dt': 1e-300, 'duration': 1e300, 'grid': {'q0.theta': {'values': [0.0]}}},
     'spec field duration: 1e+300 s at dt = 1e-300 s is inf steps, more than the 10,000,000 '
     'a sample may take (MAX_STEPS)'),
    ({'grid': {'delay': {'values': [0.0, 1e300]}}},
     'spec field grid.delay: a delay of 1e+300 s is longer than the run (duration 1 s)'),
    ({'random': {'samples': 2, 'delay': {'uniform': [0.0, 5.0]}}},
     'spec field random.delay: a delay of 5 s is longer than the run (duration 1 s)'),
    ({'chunk_size': float('inf'), 'grid': {'q0.theta': {'values': [0.0]}}},
     'spec field chunk_size: expected an integer, got inf'),
])
def test_a_spec_too_large_to_run_is_refused_when_loaded(change, message):
    """A 1e6 x 1e6 grid, num 1e12 and samples 1e15 died with MemoryError tracebacks, dt
    1e-300 with duration 1e300 with OverflowError, a delay of 1e300 s with a numba
    SystemError: each is refused when the spec is loaded, naming the field and the limit,
    before anything is allocated."""
    with pytest.raises(ValueError) as err:
        load_spec(pendulum(**change))
    assert message in str(err.value) and '\n' not in str(err.value)


def test_a_spec_file_with_an_alias_bomb_or_a_duplicate_key_is_refused(tmp_path):
    """YAML aliases expanding a few hundred bytes into millions of nodes (in the
    description or the controller parameters) are stopped by the bounded loader; a second
    ``grid:`` silently replaced the first (8 samples became 1)."""
    laughs = ['l0: &l0 [%s]' % ', '.join(['lol'] * 9)] + [
        'l%d: &l%d [%s]' % (k, k, ', '.join(['*l%d' % (k - 1)] * 9)) for k in range(1, 7)]
    for where in ('description: *l6', 'controller_params: {Q: *l6}'):
        path = write_yaml(tmp_path / 'bomb.yaml', '\n'.join(
            ['model: pendulum', 'controller: swingup'] + laughs + [where]) + '\n')
        with pytest.raises(ValueError, match=r"spec file '.*bomb\.yaml': line \d+: the "
                                             r"document has more than 1,000,000 nodes") as e:
            load_spec(path)
        assert len(str(e.value)) < 300
    path = write_yaml(tmp_path / 'twice.yaml', """
model: pendulum
grid:
  q0.theta: {from: -3, to: 3, num: 8}
grid:
  q0.theta: {values: [1.0]}
""")
    with pytest.raises(ValueError, match=r"line 5: key 'grid' is given twice in one mapping "
                                         r"\(first at line 3\)"):
        load_spec(path)


def _damage(path, how, spec, index):
    """Rewrite the chunk file ``path`` damaged in one of the ways a resume met."""
    if how == 'truncated':
        data = open(path, 'rb').read()
        open(path, 'wb').write(data[:len(data) // 2])
        return
    with np.load(path, allow_pickle=False) as z:
        columns = {k: z[k] for k in z.files}
    if how == 'short columns':
        columns = {k: (v[:-1] if v.ndim and len(v) > 1 else v) for k, v in columns.items()}
    elif how == 'missing key':
        del columns['time_to_target']
    elif how == 'forged axis':
        columns['q0.theta'] = columns['q0.theta'] + 0.25
    elif how == 'forged result':
        columns['t_end'] = np.full_like(columns['t_end'], 1e9)
    np.savez(path, **columns)


@pytest.mark.parametrize('how', ['truncated', 'short columns', 'missing key', 'forged axis',
                                 'forged result'])
def test_a_damaged_chunk_on_disk_is_computed_again_never_merged(small_serial, tmp_path,
                                                                 how):
    """Resume trusted a chunk file whose spec hash matched: a truncated one gave BadZipFile,
    short columns overwrote results.npz with columns of different lengths, a missing key
    gave KeyError, forged values were merged.  Now the chunk is checked, named, computed
    again, and the results equal the undamaged run's."""
    import shutil
    out = str(tmp_path / 'copy')
    shutil.copytree(small_serial.out_dir, out)
    chunks = sorted(glob.glob(os.path.join(out, 'chunks', 'chunk-*.npz')))
    _damage(chunks[1], how, small_serial.spec, 1)
    again = run_sweep(SMALL, out, scheduler='serial', progress=False)
    assert again.computed == [1] and again.reused == [0, 2, 3]
    ((index, reason),) = again.damaged
    assert index == 1 and reason.startswith("chunk file '%s'" % chunks[1])
    columns_equal(small_serial.columns, again.columns,
                  ['sample'] + again.spec.axes + list(REDUCTIONS) + ['chunk'])
    with open(os.path.join(out, 'sweep.json')) as fh:
        assert json.load(fh)['chunks']['damaged'] == [{'chunk': 1, 'reason': reason}]
