"""trep compatibility details found by running trep's scripts against ros_vi:
DSystem second derivatives with a long adjoint, build_trajectory/build_input with a
component the system lacks, list returns of solve_tv_lqr/solve_tv_lq, MATLAB trajectory
files in trep's layout, and trep's module paths."""
import importlib
import warnings

import numpy as np
import pytest
import scipy.io

import ros_vi as trep
import ros_vi.discopt as discopt
import systems


def make_dsys(system, dt=0.05, N=6):
    return discopt.DSystem(trep.MidpointVI(system), np.arange(N) * dt)


def set_random(dsys, seed):
    s = dsys.system
    rng = np.random.RandomState(seed)
    Q = rng.uniform(-1.0, 1.0, s.nQ)
    X = dsys.build_state(Q, rng.uniform(-0.5, 0.5, s.nQd), rng.uniform(-0.5, 0.5, s.nQk))
    U = dsys.build_input(rng.uniform(-1.0, 1.0, s.nu),
                         Q[s.nQd:] + 0.02 * rng.uniform(-1.0, 1.0, s.nQk))
    dsys.set(X, U, 1)
    return rng


# ---------------------------------------------------------------------- fdxdx & co.
@pytest.mark.parametrize('make', [systems.double_pendulum, systems.kinematic_system])
def test_second_derivatives_ignore_entries_past_the_used_slices(make):
    dsys = make_dsys(make())
    rng = set_random(dsys, 0)
    s = dsys.system
    z = rng.normal(size=dsys.nX)
    longer = np.concatenate([z, rng.normal(size=4)])
    # trep reads z[:nQd] and z[nQ:nQ+nQd] only
    shortest = z[:s.nQ + s.nQd]
    for name in ('fdxdx', 'fdxdu', 'fdudu'):
        ref = getattr(dsys, name)(z)
        assert np.linalg.norm(ref) > 1e-6
        np.testing.assert_array_equal(getattr(dsys, name)(longer), ref)
        np.testing.assert_array_equal(getattr(dsys, name)(list(shortest)), ref)
        with pytest.raises(ValueError, match='at least'):
            getattr(dsys, name)(z[:s.nQ + s.nQd - 1])
        with pytest.raises(ValueError, match='1-D'):
            getattr(dsys, name)(z.reshape(1, -1))
    # the state itself as adjoint (trep's optimalSwitchingTimeSecondOrder tutorial)
    assert dsys.fdxdx(dsys.xk).shape == (dsys.nX, dsys.nX)


# ---------------------------------------------------------------------- build_* leniency
def test_build_trajectory_ignores_rho_without_kinematic_configs():
    dsys = make_dsys(systems.pendulum(), N=5)          # no kinematic configs: nU == nu
    assert dsys.system.nQk == 0
    Q = np.linspace(0, 1, 5).reshape(5, 1)
    X0, U0 = dsys.build_trajectory(Q)
    with pytest.warns(UserWarning, match='rho ignored') as record:
        X1, U1 = dsys.build_trajectory(Q, rho=np.ones((4, 1)))   # as trep's pend-optimization
    assert record[0].filename == __file__                       # points at the caller
    np.testing.assert_array_equal(X1, X0)
    np.testing.assert_array_equal(U1, U0)
    assert U1.shape == (4, dsys.nU)
    with warnings.catch_warnings():
        warnings.simplefilter('error')                 # empty rho: nothing to warn about
        X2, U2 = dsys.build_trajectory(Q, rho=np.zeros((4, 0)))
    np.testing.assert_array_equal(U2, U0)
    with pytest.raises(ValueError, match='rho'):       # the length is still checked
        dsys.build_trajectory(Q, rho=np.ones((3, 1)))
    with pytest.warns(UserWarning, match='rho ignored') as record:
        U = dsys.build_input(u=[0.5], rho=[2.0])
    assert record[0].filename == __file__
    np.testing.assert_array_equal(U, [0.5])


# ---------------------------------------------------------------------- LQR returns
def test_solve_tv_lqr_returns_lists_like_trep():
    # scalar, one step: P(1) = Q = 1, K(0) = B P A / (R + B P B) = 1/2,
    # P(0) = Q + A P A - (B P A) K = 1.5
    one = np.ones((1, 1))
    K, P = discopt.solve_tv_lqr([one], [one], lambda k: one, lambda k: one)
    assert type(K) is list and len(K) == 1 and K
    assert isinstance(K[0], np.ndarray) and K[0].shape == (1, 1)
    assert K[0][0, 0] == pytest.approx(0.5, abs=1e-15)
    assert isinstance(P, np.ndarray) and P.shape == (1, 1)
    assert P[0, 0] == pytest.approx(1.5, abs=1e-15)
    sol = discopt.solve_tv_lqr([one] * 3, [one] * 3, one, one)
    assert sol._fields == ('K', 'P') and len(sol.K) == 3


def test_solve_tv_lq_returns_lists_like_trep():
    # scalar, one step with linear terms q, r: C(0) = (B b(1) + r(0)) / (R + B P B)
    one = np.ones((1, 1))
    q = [np.array([0.3]), np.array([0.8])]
    r = [np.array([0.2])]
    K, C, P, b = discopt.solve_tv_lq([one], [one], q, r, lambda k: one,
                                     lambda k: np.zeros((1, 1)), lambda k: one)
    assert type(K) is list and type(C) is list
    assert K[0].shape == (1, 1) and C[0].shape == (1,)
    assert C[0][0] == pytest.approx((0.8 + 0.2) / 2.0, abs=1e-15)
    assert K[0][0, 0] == pytest.approx(0.5, abs=1e-15)
    # b(0) = q(0) - K^T r + (A - B K)^T b(1) = 0.3 - 0.1 + 0.5 * 0.8
    assert isinstance(b, np.ndarray) and b.shape == (1,)
    assert b[0] == pytest.approx(0.6, abs=1e-15)
    assert isinstance(P, np.ndarray) and P[0, 0] == pytest.approx(1.5, abs=1e-15)


def test_feedback_controller_is_a_list():
    dsys = make_dsys(systems.double_pendulum(), N=4)
    X, U = dsys.build_trajectory(np.zeros((4, dsys.system.nQ)))
    K = dsys.calc_feedback_controller(X, U)
    assert type(K) is list and len(K) == 3 and K[0].shape == (dsys.nU, dsys.nX)


# ---------------------------------------------------------------------- trajectory files
def kin_traj(N=5, seed=2):
    dsys = make_dsys(systems.kinematic_system(), N=N)
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(N, dsys.nX))
    U = rng.normal(size=(N - 1, dsys.nU))
    return dsys, X, U


def test_mat_file_is_matlab_in_trep_layout(tmp_path):
    dsys, X, U = kin_traj()
    s = dsys.system
    fn = str(tmp_path / 'traj.mat')
    dsys.save_state_trajectory(fn, X, U)
    with open(fn, 'rb') as fh:
        assert fh.read(10) == b'MATLAB 5.0'
    raw = scipy.io.loadmat(fn)
    Q, p, v, u, rho = dsys.split_trajectory(X, U)
    np.testing.assert_array_equal(raw['time'], dsys.time.reshape(1, -1))
    for key, arr, items in (('Q', Q, s.configs), ('p', p, s.dyn_configs),
                            ('v', v, s.kin_configs), ('u', u, s.inputs),
                            ('rho', rho, s.kin_configs)):
        np.testing.assert_array_equal(raw[key], arr)
        # trep reads names as [str(s[0]).strip() for s in data[key+'_index'].ravel()]
        names = [str(c[0]).strip() for c in raw[key + '_index'].ravel()]
        assert names == [item.name for item in items]
    other = make_dsys(systems.kinematic_system(), N=3)
    X2, U2 = other.load_state_trajectory(fn)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(U2, U)
    np.testing.assert_array_equal(other.time, dsys.time)


def test_loads_a_file_written_the_way_trep_writes_it(tmp_path):
    # trep.save_trajectory: savemat with 'time', the components and the *_index cell
    # arrays (object arrays of names); here for a pendulum-like system of 2 configs.
    s = systems.double_pendulum()
    names = [c.name for c in s.configs]
    t = np.linspace(0.0, 0.3, 4)
    # columns in reversed name order, plus one the system does not have
    Q_file = np.arange(12.0).reshape(4, 3)
    fn = str(tmp_path / 'from_trep.mat')
    scipy.io.savemat(fn, {
        'time': t, 'Q': Q_file,
        'Q_index': np.array(names[::-1] + ['not-in-system'], dtype=object),
        'p_index': np.array(names, dtype=object), 'v_index': np.array([], dtype=object),
        'u_index': np.array([i.name for i in s.inputs], dtype=object),
        'rho_index': np.array([], dtype=object)})
    t2, Q, p, v, u, rho = trep.load_trajectory(fn, s)
    np.testing.assert_array_equal(t2, t)
    np.testing.assert_array_equal(Q, Q_file[:, 1::-1])    # mapped back by name
    assert p.shape == (4, s.nQd) and np.all(p == 0.0)     # absent component: zeros
    assert u.shape == (3, s.nu)
    raw = trep.load_trajectory(fn)                        # no system: dict of arrays
    assert list(raw['Q_names']) == names[::-1] + ['not-in-system']


def test_npz_still_works_and_old_npz_named_mat_loads(tmp_path):
    dsys, X, U = kin_traj()
    fn = str(tmp_path / 'traj.npz')
    dsys.save_state_trajectory(fn, X, U)
    with open(fn, 'rb') as fh:
        content = fh.read()
    assert content[:2] == b'PK'
    old = tmp_path / 'old.mat'                 # earlier ros_vi wrote npz under any name
    old.write_bytes(content)
    for name in (fn, str(old)):
        X2, U2 = dsys.load_state_trajectory(name)
        np.testing.assert_array_equal(X2, X)
        np.testing.assert_array_equal(U2, U)


def test_trajectory_file_errors(tmp_path):
    dsys, X, U = kin_traj()
    s = dsys.system
    for bad in ('traj.txt', 'traj', 'traj.json'):
        with pytest.raises(ValueError, match=r'unknown file type.*\.mat.*\.npz'):
            trep.save_trajectory(str(tmp_path / bad), s, dsys.time)
    garbage = tmp_path / 'garbage.mat'
    garbage.write_bytes(b'this is not a MATLAB file at all' * 10)
    with pytest.raises(ValueError, match='not a readable MATLAB'):
        trep.load_trajectory(str(garbage), s)
    fn = str(tmp_path / 'good.npz')
    dsys.save_state_trajectory(fn, X, U)
    truncated = tmp_path / 'truncated.npz'
    with open(fn, 'rb') as fh:
        truncated.write_bytes(fh.read()[:60])
    with pytest.raises(ValueError, match='truncated.npz'):
        trep.load_trajectory(str(truncated), s)
    no_time = str(tmp_path / 'other.mat')
    scipy.io.savemat(no_time, {'x': np.ones(3)})
    with pytest.raises(ValueError, match="no 'time'"):
        trep.load_trajectory(no_time, s)
    with pytest.raises(ValueError, match='cannot read'):
        trep.load_trajectory(str(tmp_path / 'missing.mat'), s)


# ---------------------------------------------------------------------- module paths
@pytest.mark.parametrize('path, attr, target', [
    ('system', 'System', 'System'),
    ('system', 'save_trajectory', 'save_trajectory'),
    ('system', 'load_trajectory', 'load_trajectory'),
    ('frame', 'tx', 'tx'),
    ('frame', 'Frame', 'Frame'),
    ('config', 'Config', 'Config'),
    ('finput', 'Input', 'Input'),
    ('force', 'Force', 'Force'),
    ('constraint', 'Constraint', 'Constraint'),
    ('potential', 'Potential', 'Potential'),
    ('spline', 'Spline', 'Spline'),
    ('tapemeasure', 'TapeMeasure', 'TapeMeasure'),
    ('midpointvi', 'MidpointVI', 'MidpointVI'),
    ('potentials', 'Gravity', None),
    ('forces', 'Damping', None),
    ('constraints', 'Distance', None),
    ('discopt', 'DSystem', None),
    ('discopt.dlqr', 'solve_tv_lqr', None),
    ('discopt.dsystem', 'DSystem', None),
    ('discopt.dcost', 'DCost', None),
    ('discopt.doptimizer', 'DOptimizer', None),
])
def test_trep_module_paths_import(path, attr, target):
    module = importlib.import_module('ros_vi.' + path)
    obj = getattr(module, attr)
    if target is not None:
        assert obj is getattr(trep, target)
    # also reachable as an attribute chain, as trep scripts write it
    parent = trep
    for part in path.split('.'):
        parent = getattr(parent, part)
    assert parent is module
