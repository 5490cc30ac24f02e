"""Tests of the midpoint variational integrator (ros_vi/integrators/midpointvi.py and
its compiled fast path fast_step.py).

* the trep tutorial value of one pendulum step;
* first derivatives of a step (q2_*, p2_*) against central finite differences of
  re-solved steps, on several systems and on both solver paths;
* compiled fast path vs general Python path, and a user-written Potential (general
  path) against the equivalent built-in ConfigSpring (fast path);
* the DEL residual, the state left in the System, v2;
* bad input and solver failure (state unchanged, clear errors).
"""
import numpy as np
import pytest

import ros_vi as trep
from ros_vi import ConvergenceError, MidpointVI
from ros_vi import ry, rz, tx, tz

import systems


# ---------------------------------------------------------------------------- helpers
def mobile_manipulator_forced():
    """The seed's mobile manipulator plus inputs on every config and damping (so that the
    u1 derivatives and the force terms of the DEL are exercised)."""
    s = systems.mobile_manipulator()
    trep.forces.Damping(s, 0.3, {'theta3': 0.1})
    trep.forces.ConfigForce(s, 'x1', 'x1-force')
    trep.forces.ConfigForce(s, 'theta2', 'theta2-torque')
    trep.forces.ConfigForce(s, 'theta3', 'theta3-torque')
    return s


class PythonSpring(trep.Potential):
    """A user-written quadratic potential ``V = 1/2 k (q - q0)^2`` on one config, written
    with only the per-config trep methods (so the integrator must use its general path)."""

    def __init__(self, system, config, k, q0=0.0, name=None):
        self.cfg = system.get_config(config)
        self.k = float(k)
        self.q0 = float(q0)
        trep.Potential.__init__(self, system, name)

    def V(self):
        return 0.5 * self.k * (self.cfg.q - self.q0) ** 2

    def V_dq(self, q1):
        if self.system.get_config(q1) is not self.cfg:
            return 0.0
        return self.k * (self.cfg.q - self.q0)

    def V_dqdq(self, q1, q2):
        s = self.system
        if s.get_config(q1) is not self.cfg or s.get_config(q2) is not self.cfg:
            return 0.0
        return self.k

    def V_dqdqdq(self, q1, q2, q3):
        return 0.0


def double_pendulum_python_springs():
    """systems.double_pendulum's springs written as PythonSpring (general path)."""
    s = systems.double_pendulum(springs=False, dampers=True)
    PythonSpring(s, 'theta1', k=2.0, q0=0.2)
    PythonSpring(s, 'theta2', k=1.5, q0=-0.3)
    return s


DERIV_SYSTEMS = {
    'pendulum': systems.pendulum,
    'double_pendulum': lambda: systems.double_pendulum(springs=True, dampers=True),
    'chain_3d': systems.chain_3d,
    'kinematic_system': systems.kinematic_system,
    'mobile_manipulator': mobile_manipulator_forced,
    'double_pendulum_python_springs': double_pendulum_python_springs,
}


def make_mvi(system, general=False, tolerance=1e-10):
    mvi = MidpointVI(system, tolerance=tolerance)
    if general:
        mvi._fast = None
    return mvi


def random_step_data(system, seed):
    """Reproducible (t1, q1, p1, u1, k2, t2) for one step of ``system``."""
    rng = np.random.RandomState(seed)
    nq, nd, nk, nu = system.nQ, system.nQd, system.nQk, system.nu
    t1 = rng.uniform(-1.0, 1.0)
    dt = rng.uniform(0.01, 0.05)
    q1 = rng.uniform(-1.0, 1.0, nq)
    # a moderate momentum: M(q1) times a random velocity
    system.q = q1
    M = system.mass_matrix()             # dynamic block (nQd, nQd)
    p1 = M[:nd, :nd] @ rng.uniform(-1.0, 1.0, nd)
    u1 = rng.uniform(-2.0, 2.0, nu)
    k2 = q1[nd:] + dt * rng.uniform(-1.0, 1.0, nk)
    return t1, q1, p1, u1, k2, t1 + dt


# --------------------------------------------------------------- 1. the tutorial value
def test_tutorial_pendulum_step_value():
    s = systems.pendulum()
    mvi = MidpointVI(s)
    assert mvi._fast is not None
    mvi.initialize_from_state(0, [3 * np.pi / 4], [0])
    iterations = mvi.step(0.1, [0])
    assert iterations >= 1
    # trep's tutorial: the system is left at the midpoint, theta = 2.34019535
    assert abs(s.q[0] - 2.34019535) < 1e-8
    assert abs(0.5 * (mvi.q1[0] + mvi.q2[0]) - 2.34019535) < 1e-8


def test_tutorial_pendulum_step_value_general_path():
    s = systems.pendulum()
    mvi = make_mvi(s, general=True)
    mvi.initialize_from_state(0, [3 * np.pi / 4], [0])
    mvi.step(0.1, [0])
    assert abs(s.q[0] - 2.34019535) < 1e-8


def test_tutorial_initialize_from_configs_then_loop():
    s = systems.pendulum()
    mvi = MidpointVI(s)
    mvi.initialize_from_configs(0, [3 * np.pi / 4], 0.1, [3 * np.pi / 4])
    assert mvi.t1 == 0.0 and mvi.t2 == 0.1
    # p2 = D2 Ld of a motionless pair: dt/2 * L_q at q = 3pi/4 (gravity torque)
    expected_p2 = 0.5 * 0.1 * (-9.8 * np.sin(3 * np.pi / 4))
    assert abs(mvi.p2[0] - expected_p2) < 1e-12
    dt = 0.1
    t = mvi.t2
    q = [mvi.q2.copy()]
    for k in range(1, 101):
        iterations = mvi.step(0.1 + k * dt, [0.0])
        assert iterations >= 1
        q.append(mvi.q2.copy())
    q = np.array(q)
    assert np.all(np.isfinite(q))
    assert abs(mvi.t2 - (t + 100 * dt)) < 1e-9
    # damped pendulum: it swings down towards theta = 0 (mod 2 pi) and settles
    assert abs(np.remainder(q[-1, 0] + np.pi, 2 * np.pi) - np.pi) < 0.2
    assert abs(q[1, 0] - q[0, 0]) > 1e-3        # it actually moved


# ------------------------------------------------- 2. first derivatives vs central FD
DERIV_NAMES = ('q2_dq1', 'q2_dp1', 'q2_du1', 'q2_dk2', 'p2_dq1', 'p2_dp1', 'p2_du1',
               'p2_dk2')
EPS = 1e-6


def _solve_step(system, general, t1, q1, p1, u1, k2, t2, hint):
    mvi = make_mvi(system, general, tolerance=1e-13)
    mvi.initialize_from_state(t1, q1, p1)
    mvi.step(t2, u1, k2, q2_hint=hint)
    return mvi.q2[:system.nQd], mvi.p2


def finite_difference_derivatives(build, general, data):
    """Central differences of (q2_dyn, p2) w.r.t. q1, p1, u1, k2 from re-solved steps."""
    t1, q1, p1, u1, k2, t2 = data
    system = build()
    mvi = make_mvi(system, general, tolerance=1e-13)
    mvi.initialize_from_state(t1, q1, p1)
    mvi.step(t2, u1, k2)
    hint = mvi.q2
    inputs = {'q1': q1, 'p1': p1, 'u1': u1, 'k2': k2}
    fd = {}
    for name, base in inputs.items():
        nd = system.nQd
        dq2 = np.zeros((nd, base.size))
        dp2 = np.zeros((nd, base.size))
        for j in range(base.size):
            cols = []
            for sign in (1.0, -1.0):
                args = dict(inputs)
                pert = base.copy()
                pert[j] += sign * EPS
                args[name] = pert
                cols.append(_solve_step(system, general, t1, args['q1'], args['p1'],
                                        args['u1'], args['k2'], t2, hint))
            dq2[:, j] = (cols[0][0] - cols[1][0]) / (2 * EPS)
            dp2[:, j] = (cols[0][1] - cols[1][1]) / (2 * EPS)
        fd['q2_d' + name] = dq2
        fd['p2_d' + name] = dp2
    return fd


@pytest.mark.parametrize('general', [False, True], ids=['fast', 'general'])
@pytest.mark.parametrize('name', sorted(DERIV_SYSTEMS))
def test_first_derivatives_vs_finite_differences(name, general):
    build = DERIV_SYSTEMS[name]
    probe = build()
    if name == 'double_pendulum_python_springs':
        assert MidpointVI(probe)._fast is None        # always the general path
    elif not general:
        assert MidpointVI(probe)._fast is not None
    nq, nd, nk, nu = probe.nQ, probe.nQd, probe.nQk, probe.nu
    shapes = {'q1': nq, 'p1': nd, 'u1': nu, 'k2': nk}
    for seed in (1, 2):
        data = random_step_data(probe, seed)
        t1, q1, p1, u1, k2, t2 = data
        system = build()
        mvi = make_mvi(system, general, tolerance=1e-13)
        mvi.initialize_from_state(t1, q1, p1)
        mvi.step(t2, u1, k2)
        analytic = {d: getattr(mvi, d)() for d in DERIV_NAMES}
        fd = finite_difference_derivatives(build, general, data)
        for d in DERIV_NAMES:
            assert analytic[d].shape == (nd, shapes[d[-2:]]), (d, analytic[d].shape)
            scale = np.max(np.abs(fd[d])) if fd[d].size else 0.0
            err = np.max(np.abs(analytic[d] - fd[d])) if fd[d].size else 0.0
            # relative agreement ~1e-6 (plus a floor for all-zero blocks, e.g. dk2
            # of a system whose k2 is empty, or structurally zero entries)
            assert err <= 1e-6 * scale + 1e-9, (
                '%s on %s (seed %d, %s path): max |analytic - FD| = %.3g (scale %.3g)\n'
                'analytic=\n%s\nFD=\n%s' % (d, name, seed, 'general' if general else 'fast',
                                           err, scale, analytic[d], fd[d]))


def test_kinematic_system_has_nonzero_dk2():
    """Guard that the dk2 derivatives compared above are not trivially zero."""
    s = systems.kinematic_system()
    mvi = MidpointVI(s)
    t1, q1, p1, u1, k2, t2 = random_step_data(s, 3)
    mvi.initialize_from_state(t1, q1, p1)
    mvi.step(t2, u1, k2)
    assert mvi.q2_dk2().shape == (2, 2)
    assert np.max(np.abs(mvi.q2_dk2())) > 1e-2
    assert np.max(np.abs(mvi.p2_dk2())) > 1e-2


def test_derivative_identifier_selection():
    s = systems.kinematic_system()
    mvi = MidpointVI(s)
    t1, q1, p1, u1, k2, t2 = random_step_data(s, 4)
    mvi.initialize_from_state(t1, q1, p1)
    mvi.step(t2, u1, k2)
    theta, phi = s.get_config('theta'), s.get_config('phi')
    x, y = s.get_config('x'), s.get_config('y')
    assert (theta.index, phi.index) == (0, 1)
    full = {d: getattr(mvi, d)() for d in DERIV_NAMES}
    # rows by dynamic config (name, index or Config object); columns by the input's kind
    for d in DERIV_NAMES:
        out_kw = d[0]                  # 'q' or 'p'
        in_kw = d[-2:]                 # 'q1', 'p1', 'u1', 'k2'
        col_ids = {'q1': [(phi, 1), ('theta', 0), (y.index, y.index), ('x', x.index)],
                   'p1': [('phi', 1), (theta, 0)],
                   'u1': [('phi-torque', 0), (0, 0)],
                   'k2': [('x', x.k_index), (y, y.k_index)]}[in_kw]
        f = getattr(mvi, d)
        for row_id, i in (('theta', 0), (phi, 1), (1, 1)):
            row = f(**{out_kw: row_id})
            np.testing.assert_array_equal(row, full[d][i])
            for col_id, j in col_ids:
                col = f(**{in_kw: col_id})
                np.testing.assert_array_equal(col, full[d][:, j])
                entry = f(**{out_kw: row_id, in_kw: col_id})
                assert isinstance(entry, float)
                assert entry == full[d][i, j]
    assert {x.k_index, y.k_index} == {0, 1}
    assert {x.index, y.index} == {2, 3}
    # a kinematic config is not a valid output row; a dynamic one is not a k2 column
    with pytest.raises(ValueError, match='x'):
        mvi.q2_dq1(q='x')
    with pytest.raises(ValueError, match='theta'):
        mvi.q2_dk2(k2='theta')


def test_derivatives_invalidated_by_new_step():
    s = systems.double_pendulum()
    mvi = MidpointVI(s)
    mvi.initialize_from_state(0.0, [0.3, -0.2], [0.1, 0.0])
    mvi.step(0.05, [0.5])
    d1 = mvi.q2_dq1()
    mvi.step(0.10, [0.5])
    d2 = mvi.q2_dq1()
    assert np.max(np.abs(d1 - d2)) > 1e-6
    # fresh integrator at the same state gives the same (non-cached) answer
    s2 = systems.double_pendulum()
    m2 = MidpointVI(s2)
    m2.initialize_from_state(mvi.t1, mvi.q1, mvi.p1)
    m2.step(mvi.t2, [0.5])
    np.testing.assert_allclose(m2.q2_dq1(), d2, rtol=1e-8, atol=1e-10)


# ------------------------------------------------------- 3. fast path vs general path
FAST_SYSTEMS = ('pendulum', 'double_pendulum', 'chain_3d', 'kinematic_system',
                'mobile_manipulator')


def _run(build, general, nsteps=200, dt=0.01, seed=7):
    s = build()
    mvi = make_mvi(s, general)
    rng = np.random.RandomState(seed)
    t1, q1, p1, _, _, _ = random_step_data(s, seed)
    mvi.initialize_from_state(t1, q1, p1)
    k0 = q1[s.nQd:]
    q2s, p2s = [], []
    for k in range(1, nsteps + 1):
        t = t1 + k * dt
        u = 0.5 * np.sin(3 * t + np.arange(s.nu))
        kin = k0 + 0.3 * np.sin(2 * t + np.arange(s.nQk))
        mvi.step(t, u, kin)
        q2s.append(mvi.q2)
        p2s.append(mvi.p2)
    return np.array(q2s), np.array(p2s)


@pytest.mark.parametrize('name', FAST_SYSTEMS)
def test_fast_path_matches_general_path(name):
    build = DERIV_SYSTEMS[name]
    assert MidpointVI(build())._fast is not None
    qf, pf = _run(build, general=False)
    qg, pg = _run(build, general=True)
    assert np.all(np.isfinite(qf))
    dq = np.max(np.abs(qf - qg))
    dp = np.max(np.abs(pf - pg))
    assert dq <= 1e-11 and dp <= 1e-11, (name, dq, dp)


def test_user_potential_uses_general_path_and_matches_configspring():
    s_builtin = systems.double_pendulum(springs=True, dampers=True)
    s_python = double_pendulum_python_springs()
    assert MidpointVI(s_builtin)._fast is not None
    assert MidpointVI(s_python)._fast is None
    qa, pa = _run(lambda: systems.double_pendulum(springs=True, dampers=True), False)
    qb, pb = _run(double_pendulum_python_springs, False)   # general path regardless
    assert np.max(np.abs(qa - qb)) <= 1e-10, np.max(np.abs(qa - qb))
    assert np.max(np.abs(pa - pb)) <= 1e-10, np.max(np.abs(pa - pb))
    # and the springs matter (the comparison is not vacuous)
    qc, _ = _run(lambda: systems.double_pendulum(springs=False, dampers=True), False)
    assert np.max(np.abs(qa - qc)) > 1e-3


def test_structure_change_reselects_path():
    s = systems.pendulum()
    mvi = MidpointVI(s)
    assert mvi._fast is not None
    PythonSpring(s, 'theta', 1.0)
    assert mvi._fast is None


# ------------------------------------- 4. residual, state left in the system, v2
@pytest.mark.parametrize('general', [False, True], ids=['fast', 'general'])
@pytest.mark.parametrize('name', ['double_pendulum', 'kinematic_system',
                                  'mobile_manipulator', 'double_pendulum_python_springs'])
def test_calc_f_and_midpoint_state(name, general):
    s = DERIV_SYSTEMS[name]()
    mvi = make_mvi(s, general)
    t1, q1, p1, u1, k2, t2 = random_step_data(s, 11)
    mvi.initialize_from_state(t1, q1, p1)
    assert mvi.v2 is None
    mvi.step(t2, u1, k2)
    q1, q2 = mvi.q1, mvi.q2
    np.testing.assert_array_equal(q2[s.nQd:], k2)
    # the system is left at the midpoint of the step
    np.testing.assert_allclose(s.q, 0.5 * (q1 + q2), rtol=0, atol=1e-14)
    np.testing.assert_allclose(s.dq, (q2 - q1) / (t2 - t1), rtol=1e-12, atol=1e-12)
    assert abs(s.t - 0.5 * (t1 + t2)) < 1e-14
    np.testing.assert_array_equal(s.u, u1)
    # residual of the solved step
    f = mvi.calc_f()
    assert f.shape == (s.nQd + s.nc,)
    assert np.linalg.norm(f) <= mvi.tolerance, np.linalg.norm(f)
    # kinematic velocity
    if s.nQk:
        np.testing.assert_allclose(mvi.v2, (k2 - q1[s.nQd:]) / (t2 - t1), rtol=1e-12)
    else:
        assert mvi.v2.shape == (0,)
    # an inconsistent state gives a non-zero residual
    bad = mvi.q2
    bad[0] += 0.05
    mvi.q2 = bad
    assert np.linalg.norm(mvi.calc_f()) > 1e-4
    mvi.q2 = q2
    mvi.p1 = mvi.p1 + 0.1
    assert np.linalg.norm(mvi.calc_f()) > 1e-3


def test_p2_is_D2Ld_at_the_solution():
    """p2 equals D2 Ld(q1, q2) recomputed by initialize_from_configs (no force term)."""
    s = systems.double_pendulum()
    mvi = MidpointVI(s)
    mvi.initialize_from_state(0.0, [0.4, -0.1], [0.2, 0.1])
    mvi.step(0.03, [0.7])
    s2 = systems.double_pendulum()
    m2 = MidpointVI(s2)
    m2.initialize_from_configs(mvi.t1, mvi.q1, mvi.t2, mvi.q2)
    np.testing.assert_allclose(m2.p2, mvi.p2, rtol=1e-12, atol=1e-13)


# --------------------------------------------------------------------- 5. bad input
def _state(mvi):
    return (mvi.t1, mvi.t2, mvi.q1, mvi.q2, mvi.p1, mvi.p2, mvi.u1, mvi.lambda1)


def _assert_state_equal(a, b):
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_wrong_input_lengths():
    s = systems.kinematic_system()     # nu = 1, nQk = 2
    mvi = MidpointVI(s)
    mvi.initialize_from_state(0.0, [0.3, -0.2, 0.0, 0.0], [0.1, 0.2])
    before = _state(mvi)
    with pytest.raises(ValueError, match=r'u1.*1.*3'):
        mvi.step(0.1, [0.0, 1.0, 2.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r'k2.*2.*1'):
        mvi.step(0.1, [0.0], [0.0])
    with pytest.raises(ValueError, match='u1'):
        mvi.step(0.1, [np.nan], [0.0, 0.0])
    with pytest.raises(ValueError, match='k2'):
        mvi.step(0.1, [0.0], [np.inf, 0.0])
    with pytest.raises(ValueError, match='t2'):
        mvi.step(0.0, [0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match='t2'):
        mvi.step(-0.1, [0.0], [0.0, 0.0])
    _assert_state_equal(before, _state(mvi))
    with pytest.raises(ValueError, match=r'q1.*4.*3'):
        mvi.initialize_from_state(0.0, np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match=r'p1.*2.*3'):
        mvi.initialize_from_state(0.0, np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match='t1'):
        mvi.initialize_from_configs(0.1, np.zeros(4), 0.1, np.zeros(4))
    # a step after a refused one works
    assert mvi.step(0.1, [0.0], [0.0, 0.0]) >= 1


def test_step_not_later_than_current_time():
    s = systems.pendulum()
    mvi = MidpointVI(s)
    mvi.initialize_from_state(0.0, [0.5], [0.0])
    mvi.step(0.1, [0.0])
    with pytest.raises(ValueError, match='t2'):
        mvi.step(0.1, [0.0])
    with pytest.raises(ValueError, match='t2'):
        mvi.step(0.05, [0.0])


@pytest.mark.parametrize('general', [False, True], ids=['fast', 'general'])
def test_convergence_failure_leaves_state_unchanged(general):
    s = systems.double_pendulum()
    mvi = make_mvi(s, general)
    mvi.initialize_from_state(0.0, [1.0, -0.5], [0.3, 0.2])
    mvi.step(0.01, [0.2])
    mvi.step(0.02, [0.2])
    before = _state(mvi)
    # no iterations allowed on a step that needs some
    with pytest.raises(ConvergenceError):
        mvi.step(0.03, [5.0], max_iterations=0)
    _assert_state_equal(before, _state(mvi))
    # a huge step with few iterations
    with pytest.raises(ConvergenceError):
        mvi.step(50.0, [0.0], max_iterations=3)
    _assert_state_equal(before, _state(mvi))
    # the next normal step works and equals the one a fresh integrator takes
    assert mvi.step(0.03, [5.0]) >= 1
    ref = make_mvi(systems.double_pendulum(), general)
    ref.initialize_from_state(before[1], before[3], before[5])
    ref.step(0.03, [5.0])
    np.testing.assert_allclose(mvi.q2, ref.q2, rtol=0, atol=1e-9)
    np.testing.assert_allclose(mvi.q1, before[3], rtol=0, atol=0)
    assert mvi.t1 == before[1]


# ----------------------------------------------- cyclic coordinate far from the origin
def spinning_pendulum():
    """rz('psi') body (cyclic: the Lagrangian does not depend on psi) carrying an
    off-axis pendulum ry('phi'); gravity (0, 0, -9.8)."""
    s = trep.System()
    s.import_frames([
        rz('psi', mass=[2.0, 0.3, 0.3, 0.5]), [
            tx(0.5, mass=0.5), [
                ry('phi'), [
                    tz(-1.0, mass=[1.0, 0.02, 0.02, 0.01])]]]])
    trep.potentials.Gravity(s, (0.0, 0.0, -9.8))
    return s


@pytest.mark.parametrize('general', [False, True], ids=['fast', 'general'])
@pytest.mark.parametrize('psi0', [1e3, 1e4, 1e5])
def test_large_cyclic_angle_keeps_converging(psi0, general):
    """A body that has spun many turns (psi = psi0 rad) must still be integrable with the
    default tolerance, and the motion is invariant under the shift of psi."""
    runs = []
    for offset in (0.0, psi0):
        s = spinning_pendulum()
        mvi = make_mvi(s, general)
        mvi.initialize_from_state(0.0, [offset, 1.0], [1.7, 0.4])
        q = []
        for k in range(1, 201):
            mvi.step(0.01 * k)
            q.append(mvi.q2 - [offset, 0.0])
        runs.append(np.array(q))
    assert np.max(np.abs(runs[0] - runs[1])) < 1e-6


# ---------------------------------------------------------------------------- trep's helpers
@pytest.mark.parametrize('fast', [True, False])
def test_set_midpoint_calc_p2_and_discrete_fm2(fast):
    """trep's MidpointVI.set_midpoint / calc_p2 / discrete_fm2 on a damped, forced system:
    the midpoint state, p2 = D2Ld (equal to the solved p2 to the solver's tolerance), and
    f- = dt F(qm, v, u1) in closed form for Damping + ConfigForce."""
    s = mobile_manipulator_forced()
    trep.potentials.Gravity(s, (0, 0, -9.8))
    mvi = MidpointVI(s, fast=fast)
    assert mvi.compiled == fast
    mvi.initialize_from_state(0.0, [0.1, 0.4, -0.3], [0.2, 0.0, 0.1])
    u = [1.0, -0.5, 0.25]
    mvi.step(0.05, u)
    q1, q2, dt = mvi.q1, mvi.q2, mvi.t2 - mvi.t1
    s.q = 0.0                               # move the system away, then back
    mvi.set_midpoint()
    np.testing.assert_allclose(s.q, 0.5 * (q1 + q2), rtol=0, atol=1e-15)
    np.testing.assert_allclose(s.dq, (q2 - q1) / dt, rtol=1e-14)
    np.testing.assert_allclose(s.u, u)
    assert s.t == pytest.approx(0.025)

    c = np.array([0.3, 0.3, 0.1])           # Damping(0.3, {'theta3': 0.1})
    np.testing.assert_allclose(mvi.discrete_fm2(), -c * (q2 - q1) + dt * np.array(u),
                               rtol=1e-13, atol=1e-15)

    solved = mvi.p2
    mvi.p2 = np.zeros(3)
    mvi.calc_p2()
    np.testing.assert_allclose(mvi.p2, solved, rtol=0, atol=1e-9)
    # initialize_from_configs computes p2 the same way
    other = MidpointVI(s, fast=fast)
    other.initialize_from_configs(mvi.t1, q1, mvi.t2, q2)
    np.testing.assert_array_equal(other.p2, mvi.p2)


def test_singular_newton_matrix_is_a_convergence_error_and_keeps_the_state():
    """A dynamic config that moves no mass makes the DEL Jacobian singular: the general
    path reports a ConvergenceError (as trep does, so optimisers' line searches treat it as
    a failed simulation), not numpy's LinAlgError, and the state is unchanged."""
    s = trep.System()
    s.import_frames([tx('x'), rz('theta'), [tx(1.0, mass=1.0)]])   # x moves nothing
    trep.potentials.Gravity(s, (0.0, -9.8, 0.0))
    mvi = MidpointVI(s, fast=False)
    mvi.initialize_from_state(0.0, [0.0, 0.5], [0.0, 0.0])
    with pytest.raises(ConvergenceError, match='singular'):
        mvi.step(0.01)
    assert mvi.t2 == 0.0
    np.testing.assert_array_equal(mvi.q2, [0.0, 0.5])


def test_system_state_is_the_step_midpoint_with_shared_buffers():
    """The compiled integrator shares its midpoint buffers with the System's Data: after a
    step the System is at that step's midpoint, after a failed step at the midpoint of the
    step before (never at a failed iterate), and a second integrator of the same System
    still leaves the System at its own midpoint."""
    from ros_vi.resources import shipped_model
    from ros_vi.urdf import import_urdf_file
    system = import_urdf_file(shipped_model('arm7'))
    a = trep.MidpointVI(system)
    b = trep.MidpointVI(system)          # shares the buffers now; a copies instead
    q0 = np.linspace(-0.5, 0.5, 7)
    u = np.linspace(-1.0, 1.0, 7)
    for mvi in (a, b):
        mvi.initialize_from_state(0.0, q0, np.zeros(7))
        for k in range(1, 4):
            mvi.step(0.01 * k, u)
            np.testing.assert_allclose(system.q, 0.5 * (mvi.q1 + mvi.q2), rtol=0, atol=1e-15)
            np.testing.assert_allclose(system.dq, (mvi.q2 - mvi.q1) / 0.01, rtol=0,
                                       atol=1e-12)
            np.testing.assert_array_equal(system.u, u)
            assert system.t == pytest.approx(0.01 * k - 0.005)
    midpoint = system.q.copy()
    with pytest.raises(trep.ConvergenceError):
        b.step(b.t2 + 0.01, u, max_iterations=0)
    np.testing.assert_allclose(system.q, midpoint, rtol=0, atol=1e-15)    # (rounding)
    with pytest.raises(ValueError, match='u1'):
        b.step(b.t2 + 0.01, [np.nan] * 7)
    np.testing.assert_allclose(system.q, midpoint, rtol=0, atol=1e-15)
    system.q = q0                        # trep's API still moves the System's state
    np.testing.assert_array_equal(system.q, q0)
    b.step(b.t2 + 0.01, u)
    np.testing.assert_allclose(system.q, 0.5 * (b.q1 + b.q2), rtol=0, atol=1e-15)
