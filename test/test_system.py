"""System: API rules, state, structure changes, the Lagrangian and its derivatives,
continuous dynamics and their derivatives, bad input, equilibrium search."""
import numpy as np
import pytest
import scipy.optimize

import ros_vi as trep
from ros_vi import rx, ry, rz, tx, tz

import systems

H = 1e-6
TOL = 1e-6     # absolute, scaled by (1 + magnitude)

ALL = sorted(systems.STANDARD_SYSTEMS)
SEEDS = [11, 12]


def make(name, seed):
    system = systems.STANDARD_SYSTEMS[name]()
    systems.random_state(system, seed, q_scale=2.0, dq_scale=1.5)
    return system


def assert_fd(exact, approx, what, tol=TOL):
    exact = np.asarray(exact, dtype=float)
    approx = np.asarray(approx, dtype=float)
    assert exact.shape == approx.shape, '%s: shape %s vs %s' % (what, exact.shape,
                                                                approx.shape)
    if not exact.size:
        return
    err = np.abs(exact - approx).max()
    scale = 1.0 + max(np.abs(exact).max(), np.abs(approx).max())
    assert err <= tol * scale, '%s: error %.3g (exact %s, fd %s)' % (what, err, exact, approx)


def fd(system, attr, i, func, h=H):
    """Central difference of func() with respect to system.<attr>[i]."""
    base = getattr(system, attr)
    plus, minus = base.copy(), base.copy()
    plus[i] += h
    minus[i] -= h
    setattr(system, attr, plus)
    fp = np.array(func(), dtype=float)
    setattr(system, attr, minus)
    fm = np.array(func(), dtype=float)
    setattr(system, attr, base)
    return (fp - fm) / (2 * h)


def fd_matrix(system, attr, func, columns):
    """[output, input] matrix of central differences over ``columns`` of system.<attr>."""
    cols = [fd(system, attr, i, func) for i in columns]
    out = np.array(cols).T
    return out.reshape(np.asarray(func()).shape + (len(columns),))


# =========================================================================== API
def test_counts():
    s = systems.kinematic_system()
    assert (s.nQ, s.nQd, s.nQk, s.nu, s.nc) == (4, 2, 2, 1, 0)
    assert len(s.configs) == 4 and len(s.dyn_configs) == 2 and len(s.kin_configs) == 2
    assert len(s.inputs) == 1 and len(s.constraints) == 0
    assert len(s.potentials) == 1 and len(s.forces) == 2
    assert [f.name for f in s.masses] == ['cart_x', 'cart', 'bob', 'bob2']
    p = systems.pendulum()
    assert (p.nQ, p.nQd, p.nQk, p.nu, p.nc) == (1, 1, 0, 1, 0)
    c = systems.planar_chain(7)
    assert (c.nQ, c.nQd, c.nQk, c.nu) == (7, 7, 0, 0)
    assert len(c.masses) == 7


def test_config_ordering_dynamic_then_kinematic():
    s = systems.kinematic_system()
    assert [c.name for c in s.configs] == ['theta', 'phi', 'x', 'y']
    assert [c.name for c in s.dyn_configs] == ['theta', 'phi']
    assert [c.name for c in s.kin_configs] == ['x', 'y']
    assert [c.index for c in s.configs] == [0, 1, 2, 3]
    assert [c.k_index for c in s.configs] == [-1, -1, 0, 1]
    assert [c.kinematic for c in s.configs] == [False, False, True, True]
    assert s.get_config('x').frame is s.get_frame('cart_x')
    # adding a dynamic config later still puts it before the kinematic ones
    s.q = [0.1, 0.2, 0.3, 0.4]
    s.get_frame('bob2').import_frames([rx('late', mass=0.1)])
    assert [c.name for c in s.configs] == ['theta', 'phi', 'late', 'x', 'y']
    np.testing.assert_array_equal(s.q, [0.1, 0.2, 0.0, 0.3, 0.4])   # values follow configs


@pytest.mark.parametrize('getter,items', [
    ('get_config', 'configs'), ('get_frame', 'frames'), ('get_input', 'inputs'),
    ('get_potential', 'potentials'), ('get_force', 'forces'),
    ('get_constraint', 'constraints')])
def test_identifier_lookup_rules(getter, items):
    s = systems.kinematic_system()
    s.get_force(0).name = 'damping'
    s.get_force(1).name = 'torque'
    s.get_potential(0).name = 'gravity'
    get = getattr(s, getter)
    seq = getattr(s, items)
    for i, item in enumerate(seq):
        assert get(i) is item
        assert get(item) is item
        if item.name is not None:
            assert get(item.name) is item
    if seq:
        assert get(-1) is seq[-1]
        assert get(np.int64(0)) is seq[0]
    with pytest.raises(IndexError, match=str(len(seq))):
        get(len(seq))
    with pytest.raises(IndexError):
        get(len(seq) + 10)
    with pytest.raises(KeyError, match='no_such_thing'):
        get('no_such_thing')
    for bad in (1.5, None, True, [0], object()):
        with pytest.raises(TypeError):
            get(bad)


def test_lookups_do_not_cross_kinds():
    s = systems.pendulum()
    with pytest.raises(TypeError):
        s.get_config(s.get_frame(1))
    with pytest.raises(TypeError):
        s.get_input(s.get_config(0))


# ------------------------------------------------------------------------- state
def test_state_setters_forms():
    s = systems.kinematic_system()
    s.q = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(s.q, [1, 2, 3, 4])
    np.testing.assert_array_equal(s.qd, [1, 2])
    np.testing.assert_array_equal(s.qk, [3, 4])
    # shorter array: only the leading entries change
    s.q = [9.0, 8.0]
    np.testing.assert_array_equal(s.q, [9, 8, 3, 4])
    # longer array: the extra entries are ignored
    s.q = np.arange(10.0)
    np.testing.assert_array_equal(s.q, [0, 1, 2, 3])
    # scalar: every entry
    s.q = 0.5
    np.testing.assert_array_equal(s.q, [0.5] * 4)
    # dict by name, index or object
    s.q = {'x': -1.0, 1: -2.0, s.get_config('theta'): -3.0}
    np.testing.assert_array_equal(s.q, [-3.0, -2.0, -1.0, 0.5])
    # the partial views write only their part
    s.qd = [7.0, 6.0]
    s.qk = 5.0
    np.testing.assert_array_equal(s.q, [7, 6, 5, 5])
    s.qk = {'y': 1.0}
    np.testing.assert_array_equal(s.qk, [5, 1])
    s.qk = [2.0]
    np.testing.assert_array_equal(s.q, [7, 6, 2, 1])
    with pytest.raises(KeyError, match='theta'):
        s.qk = {'theta': 0.0}
    with pytest.raises(KeyError, match='x'):
        s.qd = {'x': 0.0}
    # velocities and accelerations
    s.dq = [0.1, 0.2, 0.3, 0.4]
    np.testing.assert_array_equal(s.dqd, [0.1, 0.2])
    np.testing.assert_array_equal(s.dqk, [0.3, 0.4])
    s.dqk = [1.0, 2.0]
    np.testing.assert_array_equal(s.dq, [0.1, 0.2, 1.0, 2.0])
    s.ddqk = [3.0, 4.0]
    np.testing.assert_array_equal(s.ddqk, [3.0, 4.0])
    np.testing.assert_array_equal(s.ddq[2:], [3.0, 4.0])
    # per-config access is the same storage
    assert s.get_config('y').q == 1.0 and s.get_config('y').dq == 2.0
    s.get_config('phi').dq = -9.0
    assert s.dq[1] == -9.0
    # the views are copies
    view = s.q
    view[0] = 1e6
    assert s.q[0] == 7.0
    # inputs
    s.u = 2.5
    np.testing.assert_array_equal(s.u, [2.5])
    s.u = {'phi-torque': -1.0}
    assert s.get_input('phi-torque').u == -1.0
    s.set_state(q=0.0, dq=1.0, u=0.0, ddqk=0.5, t=3.0)
    np.testing.assert_array_equal(s.q, 0.0)
    np.testing.assert_array_equal(s.dq, 1.0)
    np.testing.assert_array_equal(s.ddqk, 0.5)
    assert s.t == 3.0


def test_state_change_invalidates_cached_results():
    s = systems.pendulum()
    s.q = 0.3
    v1 = s.potential_energy()
    s.q = 0.6
    assert s.potential_energy() != v1
    s.get_config('theta').q = 0.3
    assert s.potential_energy() == v1
    s.dq = 1.0
    f1 = s.f()
    s.u = 2.0
    np.testing.assert_allclose(s.f() - f1, [2.0], atol=1e-12)   # M = 1


@pytest.mark.parametrize('bad', [np.nan, np.inf, -np.inf])
def test_non_finite_state_rejected(bad):
    s = systems.kinematic_system()
    s.q = [0.1, 0.2, 0.3, 0.4]
    with pytest.raises(ValueError, match='phi'):
        s.q = [0.0, bad, 0.0, 0.0]
    with pytest.raises(ValueError, match='phi'):
        s.q = {'phi': bad}
    with pytest.raises(ValueError, match='phi'):
        s.get_config('phi').q = bad
    with pytest.raises(ValueError, match='y'):
        s.dqk = [0.0, bad]
    with pytest.raises(ValueError, match='theta'):
        s.dq = {'theta': bad}
    with pytest.raises(ValueError, match='x'):
        s.get_config('x').ddq = bad
    with pytest.raises(ValueError, match='phi-torque'):
        s.u = [bad]
    with pytest.raises(ValueError, match='phi-torque'):
        s.get_input(0).u = bad
    with pytest.raises(ValueError, match='q'):
        s.q = bad
    # nothing was written
    np.testing.assert_array_equal(s.q, [0.1, 0.2, 0.3, 0.4])
    assert np.all(np.isfinite(s.dq)) and np.all(np.isfinite(s.u))


def test_hold_and_resume_structure_changes():
    s = trep.System()
    calls = []
    s.add_structure_changed_func(lambda: calls.append(len(s.frames)))
    s.hold_structure_changes()
    s.hold_structure_changes()
    arm = trep.Frame(s.world_frame, trep.RX, 'a')
    trep.Frame(arm, trep.TZ, -1.0, mass=1.0)
    assert calls == []
    with pytest.raises(RuntimeError, match='hold'):
        s.configs
    s.resume_structure_changes()
    assert calls == []                     # still one hold left
    s.resume_structure_changes()
    assert calls == [3]                    # one update for the whole batch
    assert [c.name for c in s.configs] == ['a']
    with pytest.raises(RuntimeError, match='resume_structure_changes'):
        s.resume_structure_changes()
    # every later structural change calls the function again
    trep.potentials.Gravity(s)
    assert len(calls) == 2
    s.import_frames([tx('b', kinematic=True)])     # one import: one update
    assert len(calls) == 3
    s.get_frame(2).mass = 2.0
    assert len(calls) == 4
    trep.forces.ConfigForce(s, 'a', 'torque')       # a force and its input
    assert len(calls) >= 5
    # a pure state change is not a structure change
    n = len(calls)
    s.q = 0.3
    s.dq = 0.1
    s.f()
    assert len(calls) == n


# ==================================================================== Lagrangian
@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('name', ALL)
def test_lagrangian_first_and_second_derivatives(name, seed):
    s = make(name, seed)
    cs = s.configs
    n = s.nQ

    def L_dq():
        return [s.L_dq(c) for c in cs]

    def L_ddq():
        return [s.L_ddq(c) for c in cs]

    def L_dqdq():
        return [[s.L_dqdq(a, b) for b in cs] for a in cs]

    def L_ddqdq():
        return [[s.L_ddqdq(a, b) for b in cs] for a in cs]

    def L_ddqddq():
        return [[s.L_ddqddq(a, b) for b in cs] for a in cs]

    for i in range(n):
        assert_fd(L_dq()[i], fd(s, 'q', i, s.L), 'L_dq %d' % i)
        assert_fd(L_ddq()[i], fd(s, 'dq', i, s.L), 'L_ddq %d' % i)
    assert_fd(L_dqdq(), fd_matrix(s, 'q', L_dq, range(n)), 'L_dqdq')
    assert_fd(L_ddqdq(), fd_matrix(s, 'q', L_ddq, range(n)), 'L_ddqdq')
    assert_fd(L_ddqddq(), fd_matrix(s, 'dq', L_ddq, range(n)), 'L_ddqddq')
    assert_fd(np.array(L_ddqdq()).T, fd_matrix(s, 'dq', L_dq, range(n)), 'L_dqddq')
    np.testing.assert_allclose(L_dqdq(), np.array(L_dqdq()).T, atol=1e-10)
    np.testing.assert_allclose(L_ddqddq(), np.array(L_ddqddq()).T, atol=1e-12)

    # the same checks through the System's own derivative tester
    assert s.test_derivative_dq(s.L, s.L_dq, tolerance=1e-6, test_name='L_dq')
    assert s.test_derivative_ddq(s.L, s.L_ddq, tolerance=1e-6, test_name='L_ddq')
    assert s.test_derivative_dq(lambda: np.array(L_ddq()),
                                lambda c: [s.L_ddqdq(a, c) for a in cs], tolerance=1e-6)
    assert s.test_derivative_ddq(lambda: np.array(L_dq()),
                                 lambda c: [s.L_ddqdq(c, a) for a in cs], tolerance=1e-6)
    # a wrong derivative is caught
    assert not s.test_derivative_dq(s.L, lambda c: s.L_dq(c) + 1e-3)


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('name', ALL)
def test_lagrangian_third_derivatives(name, seed):
    s = make(name, seed)
    cs = s.configs
    n = s.nQ
    for k in range(n):
        exact = [[s.L_dqdqdq(a, b, cs[k]) for b in cs] for a in cs]
        approx = fd(s, 'q', k, lambda: [[s.L_dqdq(a, b) for b in cs] for a in cs])
        assert_fd(exact, approx, 'L_dqdqdq wrt %s' % cs[k].name)
        exact = [[s.L_ddqdqdq(a, b, cs[k]) for b in cs] for a in cs]
        approx = fd(s, 'q', k, lambda: [[s.L_ddqdq(a, b) for b in cs] for a in cs])
        assert_fd(exact, approx, 'L_ddqdqdq wrt %s' % cs[k].name)
        exact = [[s.L_ddqddqdq(a, b, cs[k]) for b in cs] for a in cs]
        approx = fd(s, 'q', k, lambda: [[s.L_ddqddq(a, b) for b in cs] for a in cs])
        assert_fd(exact, approx, 'L_ddqddqdq wrt %s' % cs[k].name)
    assert s.test_derivative_dq(lambda: s.L_ddqddq(0, n - 1),
                                lambda c: s.L_ddqddqdq(0, n - 1, c), tolerance=1e-6)


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('name', ALL)
def test_energies(name, seed):
    s = make(name, seed)
    n = s.nQ
    Mfull = np.array([[s.L_ddqddq(a, b) for b in range(n)] for a in range(n)])
    dq = s.dq
    T = s.kinetic_energy()
    V = s.potential_energy()
    assert abs(T - 0.5 * dq @ Mfull @ dq) <= 1e-12 * (1 + abs(T))
    assert abs(s.total_energy() - (T + V)) <= 1e-12 * (1 + abs(T) + abs(V))
    assert abs(s.L() - (T - V)) <= 1e-12 * (1 + abs(T) + abs(V))
    assert V == pytest.approx(sum(p.V() for p in s.potentials), abs=1e-12)
    # generalized momentum is M dq
    np.testing.assert_allclose([s.L_ddq(c) for c in s.configs], Mfull @ dq, atol=1e-11)
    # mass_matrix is the dynamic block; symmetric positive definite
    nd = s.nQd
    M = s.mass_matrix()
    np.testing.assert_array_equal(M, Mfull[:nd, :nd])
    assert np.linalg.eigvalsh(M).min() > 0
    # gravity_forces is dV/dq of all potentials (dynamic configs)
    gf = s.gravity_forces()
    for i in range(nd):
        assert_fd(gf[i], fd(s, 'q', i, s.potential_energy), 'gravity_forces %d' % i)
    assert T >= 0


def test_pendulum_closed_form():
    s = systems.pendulum()
    s.q, s.dq = 0.7, -1.3
    assert s.kinetic_energy() == pytest.approx(0.5 * 1.3 ** 2, abs=1e-14)
    assert s.potential_energy() == pytest.approx(-9.8 * np.cos(0.7), abs=1e-14)
    np.testing.assert_allclose(s.gravity_forces(), [9.8 * np.sin(0.7)], atol=1e-14)
    np.testing.assert_allclose(s.bias_forces(), [9.8 * np.sin(0.7)], atol=1e-14)
    s.u = 0.4
    np.testing.assert_allclose(s.f(), [-9.8 * np.sin(0.7) - 1.0 * (-1.3) + 0.4], atol=1e-13)


# ====================================================================== dynamics
def _applied_forces(s):
    """Generalized forces of every Force (per-config API), (nQ,)."""
    return np.array([sum(f.f(c) for f in s.forces) for c in s.configs])


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('name', ALL)
def test_f_solves_the_equations_of_motion(name, seed):
    s = make(name, seed)
    nd, n = s.nQd, s.nQ
    ddqd = s.f()
    assert ddqd.shape == (nd,)
    ddq = np.concatenate([ddqd, s.ddqk])
    F = _applied_forces(s)
    Mfull = np.array([[s.L_ddqddq(a, b) for b in range(n)] for a in range(n)])
    # M_dd f = -bias - M_dk ddqk + F
    rhs = -s.bias_forces() - Mfull[:nd, nd:] @ s.ddqk + F[:nd]
    np.testing.assert_allclose(s.mass_matrix() @ ddqd, rhs,
                               atol=1e-10 * (1 + np.abs(rhs).max()))
    # Lagrange's equations from the (separately verified) L derivatives:
    # d/dt dL/d(dq) - dL/dq = F on the dynamic configs
    Lddqdq = np.array([[s.L_ddqdq(a, b) for b in range(n)] for a in range(n)])
    Ldq = np.array([s.L_dq(a) for a in range(n)])
    residual = (Mfull @ ddq + Lddqdq @ s.dq - Ldq - F)[:nd]
    assert np.abs(residual).max() <= 1e-10 * (1 + np.abs(F).max() + np.abs(Ldq).max())
    # results are written to Config.ddq; f(q) for one config
    np.testing.assert_array_equal(s.ddqd, ddqd)
    for c in s.dyn_configs:
        assert c.ddq == ddqd[c.index]
        assert s.f(c) == ddqd[c.index]
        assert s.f(c.name) == ddqd[c.index]
        assert s.f(c.index) == ddqd[c.index]


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('name', ALL)
def test_dynamics_derivatives(name, seed):
    s = make(name, seed)
    n, nd, nk, nu = s.nQ, s.nQd, s.nQk, s.nu
    f_dq, f_ddq, f_dddq, f_du = s.f_dq(), s.f_ddq(), s.f_dddq(), s.f_du()
    assert f_dq.shape == (nd, n) and f_ddq.shape == (nd, n)
    assert f_dddq.shape == (nd, nk) and f_du.shape == (nd, nu)
    assert_fd(f_dq, fd_matrix(s, 'q', s.f, range(n)), 'f_dq')
    assert_fd(f_ddq, fd_matrix(s, 'dq', s.f, range(n)), 'f_ddq')
    if nk:
        cols = [fd(s, 'ddq', nd + k, s.f) for k in range(nk)]
        assert_fd(f_dddq, np.array(cols).T, 'f_dddq')
    if nu:
        assert_fd(f_du, fd_matrix(s, 'u', s.f, range(nu)), 'f_du')
    # single entries / rows / columns by identifier
    for c in s.dyn_configs:
        np.testing.assert_array_equal(s.f_dq(c.name), f_dq[c.index])
        np.testing.assert_array_equal(s.f_ddq(c), f_ddq[c.index])
        for c1 in s.configs:
            assert s.f_dq(c, c1.name) == f_dq[c.index, c1.index]
            assert s.f_ddq(c.index, c1) == f_ddq[c.index, c1.index]
        for k in s.kin_configs:
            assert s.f_dddq(c, k) == f_dddq[c.index, k.k_index]
        for u in s.inputs:
            assert s.f_du(c, u.name) == f_du[c.index, u.index]
    for c1 in s.configs:
        np.testing.assert_array_equal(s.f_dq(q1=c1), f_dq[:, c1.index])
    # the system's own derivative tester agrees
    assert s.test_derivative_dq(s.f, lambda c: s.f_dq(q1=c), tolerance=1e-5)
    assert s.test_derivative_ddq(s.f, lambda c: s.f_ddq(dq1=c), tolerance=1e-5)
    if nu:
        assert s.test_derivative_du(s.f, lambda u: s.f_du(u1=u), tolerance=1e-5)


def test_writing_kinematic_ddq_drives_the_dynamics():
    s = make('kinematic_system', 3)
    x = s.get_config('x')
    f0 = s.f()
    x.ddq = x.ddq + 0.5
    assert s.ddqk[x.k_index] == x.ddq
    f1 = s.f()
    np.testing.assert_allclose(f1 - f0, 0.5 * s.f_dddq(k1='x'), atol=1e-10)
    s.ddqk = {'y': 2.0}
    assert s.get_config('y').ddq == 2.0
    # rows ddq of dynamic configs are outputs: writing them does not change f
    s.get_config('theta').ddq = 123.0
    f2 = s.f()
    assert s.get_config('theta').ddq == f2[0] != 123.0


def test_kinematic_config_is_not_an_output():
    s = make('kinematic_system', 4)
    with pytest.raises(ValueError, match="'x'"):
        s.f('x')
    with pytest.raises(ValueError, match="'y'"):
        s.f_dq('y')
    with pytest.raises(ValueError, match="'x'"):
        s.f_ddq('x', 'theta')
    with pytest.raises(ValueError, match="'theta'"):
        s.f_dddq('phi', 'theta')          # theta is not kinematic


def test_cart_pendulum_closed_form():
    """A cart (kinematic x) carrying a point pendulum: theta'' = -(g sin + xdd cos)/l."""
    s = trep.System()
    s.import_frames([tx('x', kinematic=True), [ry('theta'), [tz(-2.0, mass=3.0)]]])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    s.q = {'theta': 0.4}
    s.dq = {'theta': 0.7, 'x': 1.1}
    s.ddqk = [1.7]
    # ry by theta moves the bob (at z=-l) to x = -l sin(theta): x_bob = x - l sin(theta)
    # l theta'' = -g sin(theta) + xdd cos(theta)
    expected = (-9.8 * np.sin(0.4) + 1.7 * np.cos(0.4)) / 2.0
    np.testing.assert_allclose(s.f(), [expected], atol=1e-12)
    np.testing.assert_allclose(s.f_dddq(), [[np.cos(0.4) / 2.0]], atol=1e-12)


# ====================================================================== bad input
def test_config_moving_no_mass_is_reported():
    s = trep.System()
    s.import_frames([rx('a', name='A'), ry('b'), [tz(-1.0, mass=1.0)]])
    trep.potentials.Gravity(s)
    s.q = [0.1, 0.2]
    M = s.mass_matrix()
    np.testing.assert_array_equal(M[0], [0.0, 0.0])
    np.testing.assert_array_equal(M[:, 0], [0.0, 0.0])
    assert M[1, 1] > 0
    with pytest.raises(ValueError, match="'a'"):
        s.f()
    with pytest.raises(ValueError, match="'a'"):
        s.f_dq()
    # a rotation about an axis through a point mass with no inertia moves no mass either
    s2 = trep.System()
    s2.import_frames([ry('b'), [tz(-1.0, mass=1.0), [rz('spin')]], rx('c', mass=2.0)])
    with pytest.raises(ValueError) as info:
        s2.f()
    assert "'spin'" in str(info.value) and "'c'" in str(info.value)
    assert "'b'" not in str(info.value)
    # making the idle config kinematic fixes the problem
    s3 = trep.System()
    s3.import_frames([rx('a', kinematic=True), ry('b'), [tz(-1.0, mass=1.0)]])
    trep.potentials.Gravity(s3)
    s3.q = [0.3, 0.0]
    np.testing.assert_allclose(s3.f(), [-9.8 * np.sin(0.3)], atol=1e-12)


def test_unknown_names_raise_key_error_naming_them():
    s = systems.double_pendulum()
    for call in (lambda: s.get_config('ghost'),
                 lambda: s.get_frame('ghost'),
                 lambda: s.get_input('ghost'),
                 lambda: setattr(s, 'q', {'ghost': 1.0}),
                 lambda: setattr(s, 'u', {'ghost': 1.0}),
                 lambda: s.L_dq('ghost'),
                 lambda: s.L_ddqddq('theta1', 'ghost'),
                 lambda: s.f('ghost'),
                 lambda: s.f_dq('theta1', 'ghost'),
                 lambda: s.f_du('theta1', 'ghost'),
                 lambda: s.get_frame('mass1').g_dq('ghost'),
                 lambda: trep.potentials.ConfigSpring(s, 'ghost', k=1.0),
                 lambda: trep.forces.ConfigForce(s, 'ghost', 'u2'),
                 lambda: trep.forces.Damping(s, 0.1, {'ghost': 1.0})):
        with pytest.raises(KeyError, match='ghost'):
            call()


def test_bad_frame_definitions():
    s = trep.System()
    with pytest.raises(ValueError, match='transform'):
        trep.Frame(s.world_frame, 'bogus', 1.0)
    with pytest.raises(TypeError):
        trep.Frame('not a frame', trep.TX, 1.0)
    with pytest.raises(ValueError, match='finite'):
        s.import_frames([tx(np.nan, name='nanframe')])
    with pytest.raises(TypeError):
        s.import_frames([3.0])
    with pytest.raises(ValueError):
        s.import_frames([[tx(1.0)]])
    with pytest.raises(ValueError, match='gravity'):
        trep.potentials.Gravity(s, (0, 0))


# ================================================================ equilibria
def test_minimize_potential_energy_pendulum_with_spring():
    s = systems.pendulum()
    k, q0 = 20.0, 0.5
    trep.potentials.ConfigSpring(s, 'theta', k=k, q0=q0)
    s.q, s.dq = 2.0, 3.0
    q = s.minimize_potential_energy()
    # independent equilibrium: k (theta - q0) + m g l sin(theta) = 0
    expected = scipy.optimize.brentq(lambda t: k * (t - q0) + 9.8 * np.sin(t), -1.0, 1.0)
    np.testing.assert_allclose(q, [expected], atol=1e-10)
    np.testing.assert_allclose(s.q, [expected], atol=1e-10)
    np.testing.assert_array_equal(s.dq, [0.0])
    assert abs(s.gravity_forces()[0]) <= 1e-10      # the default tolerance
    assert s.L_dqdq(0, 0) < 0          # a minimum of V


def test_minimize_potential_energy_double_pendulum():
    s = systems.double_pendulum()
    s.q = [1.0, -1.0]
    s.dq = [0.5, 0.5]
    s.minimize_potential_energy()
    assert np.abs(s.gravity_forces()).max() <= 1e-10
    H = -np.array([[s.L_dqdq(a, b) for b in range(2)] for a in range(2)])
    assert np.linalg.eigvalsh(H).min() > 0
    np.testing.assert_array_equal(s.dq, [0.0, 0.0])
    # holding one config constant: only the other moves, to its conditional minimum
    s.q = [0.7, 2.0]
    s.minimize_potential_energy(constant_q_list=['theta1'])
    assert s.q[0] == 0.7
    assert abs(s.gravity_forces()[1]) <= 1e-10
    s.q = [0.7, 2.0]
    s.minimize_potential_energy(tolerance=1e-4, constant_q_list=['theta1'])
    assert abs(s.gravity_forces()[1]) <= 1e-4


def test_minimize_potential_energy_keeps_kinematic_configs():
    s = systems.kinematic_system()
    s.q = [0.3, -0.2, 1.5, -0.5]
    s.minimize_potential_energy(keep_kinematic=True)
    np.testing.assert_array_equal(s.qk, [1.5, -0.5])
    assert np.abs(s.gravity_forces()).max() <= 1e-10
    np.testing.assert_allclose(s.qd, [0.0, 0.0], atol=1e-10)   # hangs straight down


def test_satisfy_constraints_without_constraints_changes_nothing():
    s = make('chain_3d', 1)
    q, dq = s.q, s.dq
    out = s.satisfy_constraints()
    np.testing.assert_allclose(out, q, atol=1e-12)
    np.testing.assert_allclose(s.q, q, atol=1e-12)
    np.testing.assert_array_equal(s.dq, dq)
