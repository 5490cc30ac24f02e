"""trep.discopt: LQR/LQ solvers, DSystem (layout, dynamics, first and second derivatives),
DCost, DOptimizer derivative checks, trajectory files and name-based conversion.

Derivatives are compared with central differences (trep's three-point check_* methods);
this also validates the MidpointVI second derivatives the DSystem contracts.
"""
import numpy as np
import pytest
import scipy.linalg

import ros_vi as trep
import ros_vi.discopt as discopt
import systems
from test_constraints import fourbar


# ---------------------------------------------------------------------- helpers
def make_dsys(system, dt=0.05, N=6):
    return discopt.DSystem(trep.MidpointVI(system), np.arange(N) * dt)


def random_point(dsys, seed):
    """A random state/input; constrained systems get a config on the constraint manifold
    and the kinematic input a small move from the current kinematic configs."""
    s = dsys.system
    rng = np.random.RandomState(seed)
    if s.nc:
        s.q = s.q + 0.05 * rng.uniform(-1, 1, s.nQ)
        s.satisfy_constraints()
        Q = s.q
    else:
        Q = rng.uniform(-1.0, 1.0, s.nQ)
    X = dsys.build_state(Q, rng.uniform(-0.5, 0.5, s.nQd), rng.uniform(-0.5, 0.5, s.nQk))
    U = dsys.build_input(rng.uniform(-1.0, 1.0, s.nu),
                         Q[s.nQd:] + 0.02 * rng.uniform(-1.0, 1.0, s.nQk))
    return X, U


DERIV_SYSTEMS = {
    'pendulum': systems.pendulum,
    'double_pendulum': systems.double_pendulum,
    'chain_3d': systems.chain_3d,
    'kinematic_system': systems.kinematic_system,
    'fourbar': lambda: fourbar()[0],
}


def assert_check(result, what, rel=1e-6, abs_=2e-8):
    """FD error small relative to the derivative's size (abs_ covers the FD noise on
    derivatives that are themselves tiny)."""
    error, exact_norm, approx_norm = result
    assert np.isfinite(error), what
    assert error <= rel * max(exact_norm, approx_norm) + abs_, (
        '%s: error %.3e, |exact| %.3e, |approx| %.3e' % (what, error, exact_norm,
                                                         approx_norm))


# ---------------------------------------------------------------------- derivatives
@pytest.mark.parametrize('name', sorted(DERIV_SYSTEMS))
@pytest.mark.parametrize('seed', [0, 1])
def test_dsystem_derivatives_vs_central_differences(name, seed):
    system = DERIV_SYSTEMS[name]()
    dsys = make_dsys(system)
    X, U = random_point(dsys, seed)
    k = 2
    for what in ('fdx', 'fdu', 'fdxdx', 'fdxdu', 'fdudu'):
        res = getattr(dsys, 'check_' + what)(X, U, k)
        assert isinstance(res, discopt.DerivativeError)
        assert_check(res, '%s %s' % (name, what))
    # the first derivatives are not trivially zero (the check is meaningful)
    dsys.set(X, U, k)
    assert np.linalg.norm(dsys.fdx()) > 0.1
    z = np.random.RandomState(seed + 10).normal(size=dsys.nX)
    assert np.linalg.norm(dsys.fdxdx(z)) > 1e-3


def test_second_derivatives_are_contractions_of_symmetric_tensors():
    dsys = make_dsys(systems.kinematic_system())
    X, U = random_point(dsys, 3)
    dsys.set(X, U, 1)
    z = np.random.RandomState(0).normal(size=dsys.nX)
    H = dsys.fdxdx(z)
    assert np.allclose(H, H.T, atol=1e-10)
    G = dsys.fdudu(z)
    assert np.allclose(G, G.T, atol=1e-10)
    # linear in z
    z2 = np.random.RandomState(1).normal(size=dsys.nX)
    assert np.allclose(dsys.fdxdu(2 * z + z2), 2 * dsys.fdxdu(z) + dsys.fdxdu(z2),
                       atol=1e-10)
    # the v_k and q_k outputs are linear: their adjoint entries do not contribute
    s = dsys.system
    zlin = np.zeros(dsys.nX)
    zlin[s.nQd:s.nQ] = 1.0
    zlin[s.nQ + s.nQd:] = 1.0
    assert np.allclose(dsys.fdxdx(zlin), 0.0)


def test_fdx_fdu_structure_kinematic():
    """Layout X = [qd, qk, p, vk], U = [u, rho]; the kinematic rows are exact."""
    system = systems.kinematic_system()
    dsys = make_dsys(system, dt=0.05)
    s = system
    nd, nk, nQ = s.nQd, s.nQk, s.nQ
    assert dsys.nX == nQ + nd + nk and dsys.nU == s.nu + nk
    X, U = random_point(dsys, 5)
    dsys.set(X, U, 0)
    A, B = dsys.fdx(), dsys.fdu()
    dt = 0.05
    assert np.allclose(A[nd:nQ], 0.0)                       # q_k(k+1) = rho
    assert np.allclose(B[nd:nQ, s.nu:], np.eye(nk))
    assert np.allclose(A[nQ + nd:, nd:nQ], -np.eye(nk) / dt)   # v = (rho - qk)/dt
    assert np.allclose(B[nQ + nd:, s.nu:], np.eye(nk) / dt)
    f = dsys.f()
    assert np.allclose(f[nd:nQ], U[s.nu:])
    assert np.allclose(f[nQ + nd:], (U[s.nu:] - X[nd:nQ]) / dt)


# ---------------------------------------------------------------------- dynamics
def test_set_step_f_consistency():
    system = systems.double_pendulum()
    dsys = make_dsys(system, dt=0.02, N=10)
    X0 = dsys.build_state([0.4, -0.2], [0.1, 0.0])
    U = np.array([[0.3], [-0.2], [0.1]])
    dsys.set(X0, U[0], 0)
    x1 = dsys.f()
    dsys.step(U[1])
    assert dsys.k == 1 and np.allclose(dsys.xk, x1) and np.allclose(dsys.uk, U[1])
    x2 = dsys.f()
    # same as setting from x1
    dsys.set(x1, U[1], 1)
    assert np.allclose(dsys.f(), x2, atol=1e-12)
    # same as the raw integrator
    mvi = trep.MidpointVI(systems.double_pendulum())
    mvi.initialize_from_state(0.0, [0.4, -0.2], [0.1, 0.0])
    mvi.step(0.02, [0.3])
    mvi.step(0.04, [-0.2])
    assert np.allclose(mvi.q2, x2[:2], atol=1e-12) and np.allclose(mvi.p2, x2[2:4])
    assert dsys.kf() == 9
    with pytest.raises(IndexError):
        dsys.set(X0, U[0], 9)
    with pytest.raises(ValueError, match='xk'):
        dsys.set(np.zeros(3), U[0], 0)


def test_build_split_and_errors():
    dsys = make_dsys(systems.kinematic_system(), N=4)
    s = dsys.system
    X = dsys.build_state(Q=np.arange(s.nQ), p=[7, 8], v=[9, 10])
    Q, p, v = dsys.split_state(X)
    assert np.array_equal(Q, np.arange(s.nQ)) and np.array_equal(p, [7, 8])
    assert np.array_equal(v, [9, 10])
    Uv = dsys.build_input(u=[1.5], rho=[2, 3])
    assert np.array_equal(Uv, [1.5, 2, 3])
    u, rho = dsys.split_input(Uv)
    assert np.array_equal(rho, [2, 3])
    Xt, Ut = dsys.build_trajectory()
    assert Xt.shape == (4, dsys.nX) and Ut.shape == (3, dsys.nU)
    parts = dsys.split_trajectory(Xt, Ut)
    assert parts.Q.shape == (4, 4) and parts.rho.shape == (3, 2)
    with pytest.raises(ValueError, match='Q'):
        dsys.build_trajectory(Q=np.zeros((3, 4)))
    with pytest.raises(ValueError, match='rho'):
        dsys.build_input(rho=[1.0])
    with pytest.raises(TypeError):
        discopt.DSystem(s, [0, 1])
    with pytest.raises(ValueError, match='increasing'):
        discopt.DSystem(trep.MidpointVI(systems.pendulum()), [0.0, 0.2, 0.1])


def test_convert_trajectory_by_names():
    full = make_dsys(systems.kinematic_system(), N=5)
    # a system with a subset of the configs, in a different creation order
    s2 = trep.System()
    s2.import_frames([
        trep.tx('x', kinematic=True, name='cart_x', mass=2.0), [
            trep.rx('theta', name='pivot'), [trep.tz(-1.0, mass=1.0)]]])
    trep.forces.ConfigForce(s2, 'theta', 'theta-torque')
    small = make_dsys(s2, N=5)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(5, full.nX))
    U = rng.normal(size=(4, full.nU))
    nX, nU = small.convert_trajectory(full, X, U)
    fQ, fp, fv, fu, frho = full.split_trajectory(X, U)
    sQ, sp, sv, su, srho = small.split_trajectory(nX, nU)
    fs, ss = full.system, small.system
    for c in ss.configs:
        assert np.array_equal(sQ[:, c.index], fQ[:, fs.get_config(c.name).index])
    assert np.array_equal(sp[:, 0], fp[:, fs.get_config('theta').index])
    assert np.array_equal(sv[:, 0], fv[:, fs.get_config('x').k_index])
    assert np.array_equal(srho[:, 0], frho[:, fs.get_config('x').k_index])
    assert np.all(su == 0.0)              # 'theta-torque' is not an input of `full`
    # and back: the missing configs are zero
    bX, bU = full.convert_trajectory(small, nX, nU)
    assert np.all(full.split_trajectory(bX, bU).Q[:, fs.get_config('y').index] == 0.0)
    assert np.array_equal(full.split_trajectory(bX, bU).Q[:, fs.get_config('theta').index],
                          fQ[:, fs.get_config('theta').index])


def test_save_load_round_trip(tmp_path):
    dsys = make_dsys(systems.kinematic_system(), N=5)
    rng = np.random.RandomState(2)
    X = rng.normal(size=(5, dsys.nX))
    U = rng.normal(size=(4, dsys.nU))
    fn = str(tmp_path / 'traj.npz')
    dsys.save_state_trajectory(fn, X, U)
    other = make_dsys(systems.kinematic_system(), N=3)      # time is read from the file
    X2, U2 = other.load_state_trajectory(fn)
    assert np.array_equal(X2, X) and np.array_equal(U2, U)
    assert np.array_equal(other.time, dsys.time)
    raw = np.load(fn, allow_pickle=False)
    assert list(raw['Q_names']) == [c.name for c in dsys.system.configs]
    # module-level functions, and loading into a different system by name
    s = dsys.system
    pend = systems.pendulum()              # shares only the config name 'theta'
    t, Q, p, v, u, rho = trep.load_trajectory(fn, pend)
    assert Q.shape == (5, 1) and np.array_equal(Q[:, 0], X[:, s.get_config('theta').index])
    assert u.shape == (4, 1) and np.all(u == 0.0)            # 'theta-torque' not stored
    t, Q, p, v, u, rho = trep.load_trajectory(fn, s)
    assert np.array_equal(Q, X[:, :s.nQ])
    # missing U is saved as zeros
    dsys.save_state_trajectory(fn, X)
    assert np.all(other.load_state_trajectory(fn).U == 0.0)
    with pytest.raises(ValueError, match='save_trajectory'):
        trep.save_trajectory(fn, s, dsys.time, Q=np.zeros((5, 3)))


# ---------------------------------------------------------------------- LQR / LQ
def test_solve_tv_lqr_matches_dare_for_long_horizon():
    rng = np.random.RandomState(4)
    nX, nU, N = 4, 2, 400
    A = rng.normal(size=(nX, nX)) * 0.5 + np.eye(nX) * 0.6
    B = rng.normal(size=(nX, nU))
    Q = np.diag([1.0, 2.0, 0.5, 1.5])
    R = np.diag([0.3, 0.7])
    K, P = discopt.solve_tv_lqr([A] * N, [B] * N, lambda k: Q, lambda k: R)
    Pinf = scipy.linalg.solve_discrete_are(A, B, Q, R)
    Kinf = np.linalg.solve(R + B.T @ Pinf @ B, B.T @ Pinf @ A)
    assert np.allclose(P, Pinf, rtol=1e-9, atol=1e-9)
    assert np.allclose(K[0], Kinf, rtol=1e-9, atol=1e-9)
    assert type(K) is list and len(K) == N and all(k.shape == (nU, nX) for k in K)
    # the last gain only sees the terminal weight Q(N)
    assert np.allclose(K[-1], np.linalg.solve(R + B.T @ Q @ B, B.T @ Q @ A))


def brute_force_lq(A, B, q, r, Q, S, R, x0):
    """Minimise the LQ cost over the stacked inputs by least squares/linear solve."""
    N, nX, nU = len(A), A[0].shape[0], B[0].shape[1]
    # x(k) = Phi_k x0 + sum_j G_kj u_j
    Phi = [np.eye(nX)]
    G = [np.zeros((nX, N * nU))]
    for k in range(N):
        Phi.append(A[k] @ Phi[k])
        Gk = A[k] @ G[k]
        Gk[:, k * nU:(k + 1) * nU] += B[k]
        G.append(Gk)
    H = np.zeros((N * nU, N * nU))
    g = np.zeros(N * nU)
    const = 0.0
    for k in range(N + 1):
        Qk = Q(k)
        H += G[k].T @ Qk @ G[k]
        g += G[k].T @ (Qk @ Phi[k] @ x0 + q[k])
        const += x0 @ Phi[k].T @ Qk @ Phi[k] @ x0 + 2 * q[k] @ Phi[k] @ x0
        if k < N:
            E = np.zeros((nU, N * nU))
            E[:, k * nU:(k + 1) * nU] = np.eye(nU)
            H += E.T @ R(k) @ E + G[k].T @ S(k) @ E + E.T @ S(k).T @ G[k]
            g += E.T @ (S(k).T @ Phi[k] @ x0 + r[k])
            const += 0.0
    u = np.linalg.solve(H, -g)
    cost = u @ H @ u + 2 * g @ u + const
    return u.reshape(N, nU), cost


def test_solve_tv_lq_matches_brute_force():
    rng = np.random.RandomState(7)
    nX, nU, N = 3, 2, 5
    A = [np.eye(nX) + 0.3 * rng.normal(size=(nX, nX)) for _ in range(N)]
    B = [rng.normal(size=(nX, nU)) for _ in range(N)]
    q = rng.normal(size=(N + 1, nX))
    r = rng.normal(size=(N, nU))
    Qs = []
    for _ in range(N + 1):
        M = rng.normal(size=(nX, nX))
        Qs.append(M @ M.T + 0.5 * np.eye(nX))
    Rs = [np.diag(rng.uniform(1.0, 2.0, nU)) for _ in range(N)]
    Ss = [0.1 * rng.normal(size=(nX, nU)) for _ in range(N)]
    K, C, P, b = discopt.solve_tv_lq(A, B, q, r, Qs.__getitem__, Ss.__getitem__,
                                     Rs.__getitem__)
    x0 = rng.normal(size=nX)
    u_bf, cost_bf = brute_force_lq(A, B, q, r, Qs.__getitem__, Ss.__getitem__,
                                   Rs.__getitem__, x0)
    x = x0.copy()
    for k in range(N):
        u = -K[k] @ x - C[k]
        assert np.allclose(u, u_bf[k], atol=1e-10)
        x = A[k] @ x + B[k] @ u
    # V*(x0) = x0^T P x0 + 2 b^T x0 + c(0); compare the x0-dependent part
    x1 = rng.normal(size=nX)
    _, cost1 = brute_force_lq(A, B, q, r, Qs.__getitem__, Ss.__getitem__, Rs.__getitem__,
                              x1)
    _, cost0 = brute_force_lq(A, B, q, r, Qs.__getitem__, Ss.__getitem__, Rs.__getitem__,
                              np.zeros(nX))
    assert np.isclose(cost1 - cost0, x1 @ P @ x1 + 2 * b @ x1, rtol=1e-10, atol=1e-10)
    assert np.isclose(cost_bf - cost0, x0 @ P @ x0 + 2 * b @ x0, rtol=1e-10, atol=1e-10)


def test_lq_lqr_errors():
    with pytest.raises(ValueError, match='B'):
        discopt.solve_tv_lqr(np.zeros((3, 2, 2)), np.zeros((2, 2, 1)), np.eye(2), np.eye(1))
    with pytest.raises(ValueError, match='R'):
        discopt.solve_tv_lqr(np.zeros((3, 2, 2)), np.zeros((3, 2, 1)), np.eye(2), np.eye(2))
    with pytest.raises(ValueError, match='q'):
        discopt.solve_tv_lq(np.zeros((3, 2, 2)), np.zeros((3, 2, 1)), np.zeros((3, 2)),
                            np.zeros((3, 1)), np.eye(2), np.zeros((2, 1)), np.eye(1))


# ---------------------------------------------------------------------- DCost
def test_dcost_values_and_derivatives_vs_fd():
    rng = np.random.RandomState(3)
    N, nX, nU = 4, 3, 2
    xd, ud = rng.normal(size=(N, nX)), rng.normal(size=(N - 1, nU))
    M = rng.normal(size=(nX, nX))
    Q = M @ M.T + np.eye(nX)
    R = np.diag([0.5, 2.0])
    Qf = 3.0 * Q
    c = discopt.DCost(xd, ud, Q, R, Qf=Qf)
    x, u, k = rng.normal(size=nX), rng.normal(size=nU), 1
    assert np.isclose(c.l(x, u, k), 0.5 * ((x - xd[k]) @ Q @ (x - xd[k])
                                           + (u - ud[k]) @ R @ (u - ud[k])))
    assert np.isclose(c.m(x), 0.5 * (x - xd[-1]) @ Qf @ (x - xd[-1]))
    h = 1e-6
    E = np.eye(nX)
    fd = np.array([(c.l(x + h * E[i], u, k) - c.l(x - h * E[i], u, k)) / (2 * h)
                   for i in range(nX)])
    assert np.allclose(c.l_dx(x, u, k), fd, atol=1e-8)
    fd = np.array([(c.l(x, u + h * np.eye(nU)[i], k) - c.l(x, u - h * np.eye(nU)[i], k))
                   / (2 * h) for i in range(nU)])
    assert np.allclose(c.l_du(x, u, k), fd, atol=1e-8)
    fd = np.array([(c.m(x + h * E[i]) - c.m(x - h * E[i])) / (2 * h) for i in range(nX)])
    assert np.allclose(c.m_dx(x), fd, atol=1e-7)
    fd = np.array([(c.l_dx(x + h * E[i], u, k) - c.l_dx(x - h * E[i], u, k)) / (2 * h)
                   for i in range(nX)]).T
    assert np.allclose(c.l_dxdx(x, u, k), fd, atol=1e-7)
    fd = np.array([(c.l_du(x, u + h * np.eye(nU)[i], k) - c.l_du(x, u - h * np.eye(nU)[i],
                                                                 k)) / (2 * h)
                   for i in range(nU)]).T
    assert np.allclose(c.l_dudu(x, u, k), fd, atol=1e-7)
    fd = np.array([(c.l_dx(x, u + h * np.eye(nU)[i], k) - c.l_dx(x, u - h * np.eye(nU)[i],
                                                                 k)) / (2 * h)
                   for i in range(nU)]).T
    assert np.allclose(c.l_dxdu(x, u, k), fd, atol=1e-8) and c.l_dxdu(x, u, k).shape == (3, 2)
    fd = np.array([(c.m_dx(x + h * E[i]) - c.m_dx(x - h * E[i])) / (2 * h)
                   for i in range(nX)]).T
    assert np.allclose(c.m_dxdx(x), fd, atol=1e-6)
    # default Qf = Q
    assert np.array_equal(discopt.DCost(xd, ud, Q, R).m_dxdx(x), Q)
    with pytest.raises(ValueError, match='ud'):
        discopt.DCost(xd, ud[:2], Q, R)
    with pytest.raises(ValueError, match='xd'):
        discopt.DCost(xd[:, :2], ud, Q, R)


# ---------------------------------------------------------------------- DOptimizer
def small_problem(N=26, dt=0.04):
    """Double pendulum tracking problem (nonlinear, with springs and damping)."""
    dsys = make_dsys(systems.double_pendulum(), dt=dt, N=N)
    t = dsys.time
    Qd = np.column_stack([0.6 * np.sin(2.0 * t), -0.4 * np.sin(3.0 * t)])
    Xd, Ud = dsys.build_trajectory(Qd)
    cost = discopt.DCost(Xd, Ud, np.diag([10.0, 10.0, 0.1, 0.1]), 0.1 * np.eye(dsys.nU))
    X0, U0 = dsys.project(*dsys.build_trajectory(Q=np.tile([0.3, -0.1], (N, 1))),
                          Kproj=np.zeros((N - 1, dsys.nU, dsys.nX)))
    return dsys, cost, X0, U0


@pytest.mark.parametrize('method', ['steepest', 'quasi', 'newton'])
def test_doptimizer_check_dcost_and_ddcost(method):
    dsys, cost, X, U = small_problem()
    opt = discopt.DOptimizer(dsys, cost, monitor=discopt.DOptimizerMonitor())
    _, X, U, _, _ = opt.step(0, X, U, 'quasi')     # a generic (non-rest) trajectory
    r = opt.check_dcost(X, U, method, delta=1e-5)
    assert isinstance(r, discopt.DCostCheck)
    assert r.exact_dcost < 0
    assert abs(r.error) <= 1e-6 * abs(r.exact_dcost) + 1e-7, r
    r = opt.check_ddcost(X, U, method, delta=1e-5)
    assert abs(r.error) <= 1e-6 * abs(r.exact_ddcost) + 1e-6, r


def test_doptimizer_converges_with_newton_and_monitor_histories():
    dsys, cost, X0, U0 = small_problem()

    class Recorder(discopt.DOptimizerDefaultMonitor):
        def __init__(self):
            super().__init__()
            self.completed = []

        def step_completed(self, method, cost, nX, nU):
            self.completed.append(method)
            super().step_completed(method, cost, nX, nU)

    mon = Recorder()
    opt = discopt.DOptimizer(dsys, cost, first_method_iterations=3, monitor=mon)
    assert (opt.armijo_beta, opt.armijo_alpha, opt.armijo_max_iterations) == (0.7, 1e-5, 30)
    assert opt.descent_tolerance == 1e-6 and opt.optimize_ic is False
    assert [opt.select_method(i) for i in (0, 2, 3)] == ['quasi', 'quasi', 'newton']
    assert opt.select_fallback_method(5, 'newton') == 'quasi'
    assert opt.select_fallback_method(5, 'quasi') == 'steepest'
    with pytest.raises(trep.ConvergenceError):
        opt.select_fallback_method(5, 'steepest')
    opt.first_method_iterations = 1
    converged, X, U = opt.optimize(X0, U0, max_steps=30)
    assert converged
    assert mon.completed[0] == 'quasi' and 'newton' in mon.completed[1:]
    costs, dcosts = mon.get_costs(), mon.get_dcosts()
    assert all(c1 <= c0 for c0, c1 in zip(costs, costs[1:]))
    assert abs(dcosts[-1]) < opt.descent_tolerance
    # it is a trajectory of the system
    Xp, Up = dsys.project(X, U, np.zeros((len(X) - 1, dsys.nU, dsys.nX)))
    assert np.allclose(Xp, X, atol=1e-8)
    # Newton's local quadratic convergence: |dcost| collapses in the last step
    assert abs(dcosts[-1]) < 1e-2 * abs(dcosts[-2])


def test_armijo_failure_raises_convergence_error():
    dsys, cost, X, U = small_problem()
    opt = discopt.DOptimizer(dsys, cost, monitor=discopt.DOptimizerMonitor())
    Kproj, dX, dU, Q, R, S = opt.calc_descent_direction(X, U, 'steepest')
    opt.armijo_max_iterations = 2
    with pytest.raises(trep.ConvergenceError, match='Armijo'):
        opt.armijo_search(X, U, Kproj, -dX * 1e3, -dU * 1e3)   # an ascent direction
    with pytest.raises(ValueError, match='method'):
        opt.calc_descent_direction(X, U, 'bogus')


def test_descent_plot_or_clear_import_error():
    dsys, cost, X, U = small_problem(N=8)
    opt = discopt.DOptimizer(dsys, cost, monitor=discopt.DOptimizerMonitor())
    try:
        import matplotlib
    except ImportError:
        with pytest.raises(ImportError, match='matplotlib'):
            opt.descent_plot(X, U, 'quasi', points=5)
        return
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    opt.descent_plot(X, U, 'quasi', points=5)
    assert len(plt.gca().lines) == 4
    plt.close('all')
