"""Holonomic constraints (trep.constraints): derivatives, constrained dynamics, integration.

Every derivative is checked against central finite differences; the constrained dynamics
against the acceleration-level constraint and an independent naive Lagrangian; the
four-bar linkage run is the issue's acceptance test (|h| <= 1e-10 for 10^4 VI steps).
"""
import time

import numpy as np
import pytest

import ros_vi as trep
from ros_vi.mechanics import dynamics
from ros_vi import const_txyz, rx, ry, rz, tx, ty, tz
from reference.naive_lagrangian import NaiveSystem

DELTA = 1e-6


# ---------------------------------------------------------------------- systems
def spatial_system():
    """A 3-D tree with two branches, a kinematic distance config and every constraint type."""
    s = trep.System()
    s.import_frames([
        rz('a', name='A'), [
            tx(0.7), [ry('b', name='B'), [
                tz(-0.5, name='Bt', mass=[1.0, 0.1, 0.2, 0.1]), [
                    rx('c'), [ty('d', name='D', mass=[1.0, 0.1, 0.2, 0.3])]]]]],
        tx('e', name='E', mass=0.5), [
            rx('f'), [const_txyz([0.1, 0.2, 0.3], name='F', mass=[1.0, 0.2, 0.1, 0.3])]],
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    cons = {
        'dist_k': trep.constraints.Distance(s, 'D', 'F', 'len', name='dist_k'),
        'dist_f': trep.constraints.Distance(s, s.get_frame('Bt'), 'E', 0.8, name='dist_f'),
        'p3': trep.constraints.PointToPoint3D(s, 'Bt', 'F', name='pp3'),
        'p2': trep.constraints.PointToPoint2D(s, 'yz', 'D', 'E', name='pp2'),
        'p1': trep.constraints.PointToPoint1D(s, 'x', 'A', 'D'),
        'plane': trep.constraints.PointOnPlane(s, 'B', [0.3, -1.0, 2.0], 'D', name='pl'),
    }
    return s, cons


def random_state(s, seed):
    rng = np.random.default_rng(seed)
    s.q = rng.uniform(-1.2, 1.2, s.nQ)
    s.dq = rng.uniform(-1.0, 1.0, s.nQ)
    return rng


def fd(system, attr, func, delta=DELTA):
    """Central differences of func() with respect to every entry of system.<attr>:
    result[..., i] = d func / d x_i."""
    arr = getattr(system, attr)
    cols = []
    for i in range(arr.shape[0]):
        base = arr[i]
        arr[i] = base + delta
        system._invalidate()
        fp = np.array(func(), dtype=float)
        arr[i] = base - delta
        system._invalidate()
        fm = np.array(func(), dtype=float)
        arr[i] = base
        system._invalidate()
        cols.append((fp - fm) / (2 * delta))
    return np.stack(cols, axis=-1)


def assert_close(exact, approx, rel=1e-6, abs_=1e-8, what=''):
    """max |exact - approx| <= abs_ + rel * max |approx| (relative to the array's size, so
    small derivatives such as dq2/du1 ~ dt^2 are checked as strictly as large ones)."""
    exact = np.asarray(exact, dtype=float)
    approx = np.asarray(approx, dtype=float)
    assert exact.shape == approx.shape, (what, exact.shape, approx.shape)
    scale = float(np.abs(approx).max()) if approx.size else 0.0
    err = float(np.abs(exact - approx).max()) if exact.size else 0.0
    assert err <= abs_ + rel * scale, '%s: max error %.3g (scale %.3g)' % (what, err, scale)


LINK = [1.0, 0.0, 0.1, 0.0]     # point mass 1 kg + Iyy 0.1 kg m^2 at each link end


def fourbar(with_force=True):
    """Closed planar four-bar in the x-z plane: ground 1.5 m, links 1.0, 1.2, 1.0 m."""
    s = trep.System()
    s.import_frames([
        ry('th1'), [tx(1.0, name='A', mass=LINK), [
            ry('th2'), [tx(1.2, name='B', mass=LINK), [
                ry('th3'), [tx(1.0, name='C', mass=LINK)]]]]],
        const_txyz([1.5, 0.0, 0.0], name='G'),
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    if with_force:
        trep.forces.ConfigForce(s, 'th1', 'tau')
    group = trep.constraints.PointToPoint2D(s, 'xz', 'C', 'G', name='close')
    s.q = [-1.2, 1.5, 1.5]
    s.satisfy_constraints()
    return s, group


def naive_fourbar():
    m = {'mass': LINK}
    return NaiveSystem([('ry', 'th1'), [('tx', 1.0, m), [('ry', 'th2'), [
        ('tx', 1.2, m), [('ry', 'th3'), [('tx', 1.0, m)]]]]]], gravity=(0, 0, -9.8))


def consistent_momentum(s, speed):
    """Discrete-momentum guess p = M dq with dq tangent to the constraint manifold."""
    Dh = s.constraint_jacobian()
    null = np.linalg.svd(Dh[:, :s.nQd])[2][-1]
    s.dq = speed * null
    return s.mass_matrix() @ s.dqd


def state_energy(s, q, p):
    """Energy of the state (q, p): dq tangent to the constraints with M dq = p + Dh^T mu."""
    nd, nc = s.nQd, s.nc
    s.q = q
    s.dq = 0.0
    M = s.mass_matrix()
    Dh = s.constraint_jacobian()[:, :nd]
    A = np.block([[M, Dh.T], [Dh, np.zeros((nc, nc))]])
    dq = np.linalg.solve(A, np.concatenate([p, np.zeros(nc)]))[:nd]
    return 0.5 * dq @ M @ dq + s.potential_energy()


# ---------------------------------------------------------------------- construction / API
def test_constructors_names_and_groups():
    from ros_vi.constraints import PointToPoint2D   # trep's submodule path works
    assert PointToPoint2D is trep.constraints.PointToPoint2D
    s, c = spatial_system()
    # PointToPoint constructors return groups; each axis is its own Constraint
    assert isinstance(c['p3'], trep.constraints.PointToPointGroup)
    assert [k.name for k in c['p3']] == ['pp3_x', 'pp3_y', 'pp3_z']
    assert [k.name for k in c['p2']] == ['pp2_y', 'pp2_z']
    assert [k.axis for k in c['p2']] == [1, 2]
    assert len(c['p1']) == 1 and c['p1'][0].name is None and c['p1'][0].axis == 0
    assert s.nc == 2 + 3 + 2 + 1 + 1
    for group in (c['p3'], c['p2'], c['p1']):
        for k in group:
            assert isinstance(k, trep.Constraint)
            assert s.constraints[k.index] is k
    assert s.get_constraint('pp3_y') is c['p3'][1]
    # distance configs: kinematic, frameless, created by the constraint
    d = c['dist_k']
    assert d.config is s.get_config('len') and d.config.kinematic and d.config.frame is None
    assert s.kin_configs == (d.config,)
    assert c['dist_f'].config is None
    assert d.frame1 is s.get_frame('D') and d.frame2 is s.get_frame('F')
    pl = c['plane']
    assert pl.plane_frame is s.get_frame('B') and pl.point_frame is s.get_frame('D')
    np.testing.assert_array_equal(pl.normal, [0.3, -1.0, 2.0])


def test_values_match_direct_geometry():
    s, c = spatial_system()
    for seed in range(3):
        random_state(s, seed)
        P = {n: s.get_frame(n).p()[:3] for n in ('A', 'B', 'Bt', 'D', 'E', 'F')}
        r = P['D'] - P['F']
        dk = s.get_config('len').q
        assert c['dist_k'].h() == pytest.approx(r @ r - dk ** 2, abs=1e-13)
        assert c['dist_k'].distance == dk
        assert c['dist_k'].get_actual_distance() == pytest.approx(np.linalg.norm(r))
        r2 = P['Bt'] - P['E']
        assert c['dist_f'].h() == pytest.approx(r2 @ r2 - 0.64, abs=1e-13)
        for k, i in zip(c['p3'], range(3)):
            assert k.h() == pytest.approx((P['Bt'] - P['F'])[i], abs=1e-14)
        assert c['p3'].get_actual_distance() == pytest.approx(np.linalg.norm(P['Bt'] - P['F']))
        assert c['p3'][0].get_actual_distance() == pytest.approx(
            np.linalg.norm(P['Bt'] - P['F']))
        assert [k.h() for k in c['p2']] == pytest.approx(list((P['D'] - P['E'])[1:]),
                                                          abs=1e-14)
        gB = s.get_frame('B').g()
        n_w = gB[:3, :3] @ np.array([0.3, -1.0, 2.0])
        assert c['plane'].h() == pytest.approx((P['B'] - P['D']) @ n_w, abs=1e-13)
        assert c['plane'].get_actual_distance() == pytest.approx(
            (P['D'] - P['B']) @ n_w / np.linalg.norm(n_w))


def test_distance_property_get_set():
    s, c = spatial_system()
    d = c['dist_k']
    d.distance = 0.9
    assert s.get_config('len').q == 0.9 and d.distance == 0.9
    s.get_config('len').q = 1.1
    assert d.distance == 1.1
    f = c['dist_f']
    h_before = f.h()
    f.distance = 0.5
    assert f.distance == 0.5
    assert f.h() == pytest.approx(h_before + 0.64 - 0.25)     # cached h was invalidated
    random_state(s, 4)
    f.distance = f.get_actual_distance()
    assert abs(f.h()) < 1e-12
    # a geometry change (constant transform) is seen by the memoised values
    # (F hangs below tx('e') and rx('f'), so its local x offset is the world x direction)
    f_frame = s.get_frame('F')
    h_before = c['p3'][0].h()
    g = f_frame.transform_value
    g[0, 3] += 0.25
    f_frame.transform_value = g
    assert c['p3'][0].h() == pytest.approx(h_before - 0.25, abs=1e-13)
    pl = c['plane']
    h1 = pl.h()
    pl.normal = 2.0 * pl.normal
    assert pl.h() == pytest.approx(2.0 * h1)


def test_bad_input_errors():
    s, _ = spatial_system()
    C = trep.constraints
    with pytest.raises(KeyError, match='nope'):
        C.Distance(s, 'nope', 'D', 1.0)
    with pytest.raises(KeyError, match='ghost'):
        C.PointToPoint3D(s, 'D', 'ghost')
    with pytest.raises(KeyError, match='missing'):
        C.PointOnPlane(s, 'missing', [0, 0, 1], 'D')
    with pytest.raises(ValueError, match='plane'):
        C.PointToPoint2D(s, 'xw', 'D', 'E')
    with pytest.raises(ValueError, match='axis'):
        C.PointToPoint1D(s, 'w', 'D', 'E')
    with pytest.raises(ValueError, match='non-zero'):
        C.PointOnPlane(s, 'B', [0, 0, 0], 'D')
    with pytest.raises(ValueError, match='plane_normal'):
        C.PointOnPlane(s, 'B', [0, 1], 'D')
    with pytest.raises(ValueError, match='positive'):
        C.Distance(s, 'D', 'E', 0.0)
    with pytest.raises(ValueError, match='same frame'):
        C.Distance(s, 'D', 'D', 1.0)
    with pytest.raises(ValueError, match='already exists'):
        C.Distance(s, 'D', 'E', 'len')
    pl = s.get_constraint('pl')
    with pytest.raises(ValueError, match='non-zero'):
        pl.normal = [0, 0, 0]
    other = trep.System()
    other.import_frames([tx('x', name='X', mass=1.0)])
    with pytest.raises(ValueError, match='another system'):
        C.Distance(s, other.get_frame('X'), 'D', 1.0)
    # failed constructions added nothing
    assert s.nc == 9 and s.nQ == 7


# ---------------------------------------------------------------------- derivatives
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_validate_h_all_orders(seed):
    s, _ = spatial_system()
    random_state(s, seed)
    for con in s.constraints:
        assert con.validate_h_dq(verbose=True), con
        assert con.validate_h_dqdq(verbose=True), con
        assert con.validate_h_dqdqdq(verbose=True), con
        assert con.validate_h_dqdqdqdq(verbose=True), con


@pytest.mark.parametrize('seed', [3, 4])
def test_vector_hooks_vs_central_differences(seed):
    s, _ = spatial_system()
    random_state(s, seed)
    n = s.nQ
    configs = s.configs
    for con in s.constraints:
        g = con.h_dq_array()
        H = con.h_dqdq_array()
        T = con.h_dqdqdq_array()
        assert g.shape == (n,) and H.shape == (n, n) and T.shape == (n, n, n)
        assert_close(g, fd(s, '_q', con.h), what='%r h_dq' % con)
        assert_close(H, fd(s, '_q', con.h_dq_array), what='%r h_dqdq' % con)
        assert_close(T, fd(s, '_q', con.h_dqdq_array), what='%r h_dqdqdq' % con)
        # second derivative straight from h (second-order central differences)
        e = 1e-4
        H2 = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                vals = []
                for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                    s._q[i] += si * e
                    s._q[j] += sj * e
                    s._invalidate()
                    vals.append(con.h())
                    s._q[i] -= si * e
                    s._q[j] -= sj * e
                s._invalidate()
                H2[i, j] = (vals[0] - vals[1] - vals[2] + vals[3]) / (4 * e * e)
        assert_close(H, H2, rel=1e-5, abs_=1e-5, what='%r h_dqdq from h' % con)
        # symmetric, and the scalar API agrees with the hooks
        np.testing.assert_allclose(H, H.T, atol=1e-14)
        np.testing.assert_allclose(T, T.transpose(1, 0, 2), atol=1e-14)
        np.testing.assert_allclose(T, T.transpose(0, 2, 1), atol=1e-14)
        i, j, k = 0, 3, 5
        assert con.h_dq(configs[j]) == g[j]
        assert con.h_dqdq(configs[i], configs[j]) == H[i, j]
        assert con.h_dqdqdq(configs[i], configs[j], configs[k]) == T[i, j, k]
        # fourth derivative vs central differences of the third
        idx = [(0, 1, 2), (1, 2, 3), (3, 4, 5), (2, 2, 3)]
        for (a, b, c) in idx:
            approx = fd(s, '_q', lambda: con.h_dqdqdq_array()[a, b, c])
            exact = [con.h_dqdqdqdq(configs[a], configs[b], configs[c], q4) for q4 in configs]
            assert_close(exact, approx, what='%r h_dqdqdqdq' % con)


def test_distance_config_derivatives():
    s, c = spatial_system()
    random_state(s, 7)
    d = c['dist_k']
    k = s.get_config('len')
    assert d.h_dq(k) == pytest.approx(-2.0 * k.q)
    assert d.h_dqdq(k, k) == -2.0
    assert d.h_dqdq(k, 'a') == 0.0
    assert c['dist_f'].h_dq(k) == 0.0


# ---------------------------------------------------------------------- continuous dynamics
def small_constrained_system():
    """3-D chain + kinematic distance + plane constraint: 6 dynamic DOF, 3 constraints."""
    s = trep.System()
    s.import_frames([
        rz('a', name='A'), [tx(0.7), [ry('b', name='B'), [
            tz(-0.5, name='Bt', mass=[1.0, 0.1, 0.2, 0.1]), [
                rx('c'), [ty('d', name='D', mass=[1.0, 0.1, 0.2, 0.3])]]]]],
        tx('e', name='E', mass=0.5), [
            rx('f'), [const_txyz([0.1, 0.2, 0.3], name='F', mass=[1.0, 0.2, 0.1, 0.3])]],
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.forces.Damping(s, 0.3)
    trep.forces.ConfigForce(s, 'b', 'ub')
    trep.forces.ConfigForce(s, 'e', 'ue')
    trep.constraints.Distance(s, 'D', 'F', 'len', name='dist')
    trep.constraints.PointOnPlane(s, 'B', [0.3, -1.0, 2.0], 'D', name='plane')
    trep.constraints.PointToPoint1D(s, 'z', 'Bt', 'F', name='pz')
    return s


@pytest.mark.parametrize('seed', [0, 1])
def test_continuous_dynamics_acceleration_constraint(seed):
    s = small_constrained_system()
    rng = random_state(s, seed)
    s.u = rng.uniform(-1, 1, s.nu)
    s.ddqk = [0.7]
    ddq = np.concatenate([s.f(), s.ddqk])
    lam = s.lambda_()
    assert lam.shape == (3,)
    Dh = s.constraint_jacobian()
    acc = Dh @ ddq + np.array([s.dq @ con.h_dqdq_array() @ s.dq for con in s.constraints])
    np.testing.assert_allclose(acc, 0.0, atol=1e-10)
    # the constraint value's second time derivative along q(t) is zero too
    e = 1e-4
    dq = s.dq
    hvals = []
    q0 = s.q
    for t in (-e, 0.0, e):
        s.q = q0 + t * dq + 0.5 * t * t * ddq
        hvals.append(np.array([con.h() for con in s.constraints]))
    s.q = q0
    np.testing.assert_allclose((hvals[0] - 2 * hvals[1] + hvals[2]) / e ** 2, 0.0, atol=1e-5)
    # f() written to Config.ddq
    assert s.get_config('a').ddq == pytest.approx(ddq[0])


@pytest.mark.parametrize('seed', [0, 1])
def test_continuous_dynamics_derivatives_vs_fd(seed):
    s = small_constrained_system()
    rng = random_state(s, seed)
    s.u = rng.uniform(-1, 1, s.nu)
    s.ddqk = [0.4]
    f_dq, f_ddq, f_dddq, f_du = s.f_dq(), s.f_ddq(), s.f_dddq(), s.f_du()
    l_dq, l_ddq, l_dddq, l_du = s.lambda_dq(), s.lambda_ddq(), s.lambda_dddq(), s.lambda_du()
    assert_close(f_dq, fd(s, '_q', s.f), what='f_dq')
    assert_close(f_ddq, fd(s, '_dq', s.f), what='f_ddq')
    assert_close(f_du, fd(s, '_u', s.f), what='f_du')
    assert_close(l_dq, fd(s, '_q', s.lambda_), what='lambda_dq')
    assert_close(l_ddq, fd(s, '_dq', s.lambda_), what='lambda_ddq')
    assert_close(l_du, fd(s, '_u', s.lambda_), what='lambda_du')
    # kinematic acceleration input: perturb ddqk (kinematic part of _ddq)
    nd = s.nQd

    kcols_f, kcols_l = [], []
    for k in range(s.nQk):
        base = s._ddq[nd + k]
        out = []
        for sign in (1, -1):
            s._ddq[nd + k] = base + sign * DELTA
            s._invalidate()
            out.append((s.f(), s.lambda_()))
        s._ddq[nd + k] = base
        s._invalidate()
        kcols_f.append((out[0][0] - out[1][0]) / (2 * DELTA))
        kcols_l.append((out[0][1] - out[1][1]) / (2 * DELTA))
    assert_close(f_dddq, np.stack(kcols_f, -1), what='f_dddq')
    assert_close(l_dddq, np.stack(kcols_l, -1), what='lambda_dddq')


def test_constrained_dynamics_match_naive_reference():
    """M ddq + b = tau - Dh^T lambda with M, b from the independent naive Lagrangian."""
    s, group = fourbar()
    naive = naive_fourbar()
    for seed in range(3):
        rng = np.random.default_rng(seed)
        s.q = s.q + rng.normal(0, 0.3, 3)
        s.satisfy_constraints()
        s.dq = rng.uniform(-1, 1, 3)
        s.u = [rng.uniform(-2, 2)]
        ddq, lam = s.f(), s.lambda_()
        Dh = s.constraint_jacobian()
        lhs = naive.inverse_dynamics(s.q, s.dq, ddq)
        np.testing.assert_allclose(lhs, np.array([s.u[0], 0, 0]) - Dh.T @ lam, atol=1e-9)


# ---------------------------------------------------------------------- four-bar linkage
def test_fourbar_satisfy_constraints_from_perturbed():
    s, group = fourbar()
    rng = np.random.default_rng(11)
    for _ in range(3):
        q0 = s.q + rng.normal(0, 0.2, 3)
        s.q = q0
        assert np.abs([c.h() for c in s.constraints]).max() > 1e-3
        q = s.satisfy_constraints()
        np.testing.assert_allclose(q, s.q)
        assert np.abs([c.h() for c in s.constraints]).max() <= 1e-10
        assert group.get_actual_distance() <= 1e-10
        assert np.linalg.norm(q - q0) < 1.0


def test_fourbar_midpointvi_acceptance():
    """Issue acceptance: 10^4 MidpointVI steps at dt = 0.01 keep |h(q)| <= 1e-10."""
    s, group = fourbar()
    p0 = consistent_momentum(s, 2.0)
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_state(0.0, s.q, p0)
    max_h, energies = 0.0, []
    t_start = time.perf_counter()
    for k in range(10000):
        mvi.step(mvi.t2 + 0.01, [0.0])
        q2 = mvi.q2
        s.data.set(q2, np.zeros(s.nQ))
        max_h = max(max_h, float(np.abs(dynamics.constraint_values(s)).max()))
        if k % 100 == 0:
            energies.append(state_energy(s, q2, mvi.p2))
    runtime = time.perf_counter() - t_start
    print('\nfour-bar MidpointVI: 10^4 steps, max |h(q)| = %.3e, run time %.2f s'
          % (max_h, runtime))
    assert max_h <= 1e-10
    assert abs(mvi.t2 - 100.0) < 1e-9
    # the linkage kept moving and its energy stayed bounded (symplectic integrator)
    energies = np.array(energies)
    print('energy range %.4g .. %.4g J' % (energies.min(), energies.max()))
    assert np.ptp(energies) < 0.01 * abs(energies).max()


def _vi_fd_check(make, u1, k2=(), extra_inputs=False):
    """Compare MidpointVI first derivatives with central differences of re-run steps."""
    s, mvi, t1, q1, p1 = make()
    for con in s.constraints:
        con.tolerance = 1e-13
    mvi.tolerance = 1e-12     # DEL residual 2-norm; rounding floor here is ~1e-13
    t2 = t1 + 0.01
    mvi.initialize_from_state(t1, q1, p1)
    mvi.step(t2, u1, k2)
    q2b, lamb = mvi.q2, mvi.lambda1
    exact = {name: getattr(mvi, name)() for name in (
        'q2_dq1', 'q2_dp1', 'q2_du1', 'q2_dk2', 'p2_dq1', 'p2_dp1', 'p2_du1', 'p2_dk2',
        'lambda1_dq1', 'lambda1_dp1', 'lambda1_du1', 'lambda1_dk2')}
    nd = s.nQd

    def run(q1_, p1_, u1_, k2_):
        mvi.initialize_from_state(t1, q1_, p1_)
        mvi.step(t2, u1_, k2_, q2_hint=q2b, lambda1_hint=lamb)
        return mvi.q2[:nd], mvi.p2, mvi.lambda1

    def column(which, i):
        args = [np.array(q1, float), np.array(p1, float), np.array(u1, float),
                np.array(k2, float)]
        outs = []
        for sign in (1, -1):
            a = [x.copy() for x in args]
            a[which][i] += sign * DELTA
            outs.append(run(*a))
        return [(p - m) / (2 * DELTA) for p, m in zip(*outs)]

    sizes = [s.nQ, nd, s.nu, s.nQk]
    names = ['dq1', 'dp1', 'du1', 'dk2']
    for which, (size, nm) in enumerate(zip(sizes, names)):
        if size == 0:
            continue
        cols = [column(which, i) for i in range(size)]
        # absolute floors: the finite-difference noise of each output (p2 and lambda1 are
        # ~M/dt times q2 differences, so their rounding noise is ~100x that of q2)
        for out_i, (out, floor) in enumerate((('q2_', 1e-9), ('p2_', 2e-7),
                                              ('lambda1_', 2e-7))):
            approx = np.stack([c[out_i] for c in cols], axis=-1)
            assert_close(exact[out + nm], approx, rel=1e-6, abs_=floor, what=out + nm)
    return exact


def test_fourbar_vi_first_derivatives_vs_fd():
    def make():
        s, _ = fourbar()
        p0 = consistent_momentum(s, 1.5)
        return s, trep.MidpointVI(s), 0.3, s.q, p0
    exact = _vi_fd_check(make, [0.7])
    assert exact['q2_du1'].shape == (3, 1) and exact['lambda1_dq1'].shape == (2, 3)


# ---------------------------------------------------------------------- kinematic distance
def kinematic_pendulum():
    """A point mass on free x-z slides, held at a kinematically driven distance from a pivot."""
    s = trep.System()
    s.import_frames([tx('x'), [tz('z', name='M', mass=[1.0, 0.0, 0.0, 0.0])],
                     const_txyz([0.0, 0.0, 0.0], name='pivot')])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.forces.ConfigForce(s, 'x', 'fx')
    d = trep.constraints.Distance(s, 'M', 'pivot', 'r', name='rod')
    return s, d


def test_distance_kinematic_config_with_midpointvi():
    s, d = kinematic_pendulum()
    assert s.nQd == 2 and s.nQk == 1 and s.nc == 1
    s.q = {'x': 0.6, 'z': -0.8, 'r': 1.0}
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_state(0.0, s.q, [0.0, 0.0])
    max_h = 0.0
    for k in range(300):
        t2 = mvi.t2 + 0.01
        r2 = 1.0 + 0.3 * np.sin(2.0 * t2)          # the rod length is the kinematic input
        mvi.step(t2, [0.0], [r2])
        x, z, r = mvi.q2
        assert r == r2
        max_h = max(max_h, abs(x * x + z * z - r2 * r2))
    assert max_h <= 1e-10

    def make():
        s, d = kinematic_pendulum()
        s.q = {'x': 0.6, 'z': -0.8, 'r': 1.0}
        return s, trep.MidpointVI(s), 0.0, s.q, np.array([0.3, -0.1])
    exact = _vi_fd_check(make, [0.5], [1.02])
    assert exact['q2_dk2'].shape == (2, 1)
    assert np.abs(exact['q2_dk2']).max() > 0.1      # the input really moves the mass


# ---------------------------------------------------------------------- optimisations
def test_satisfy_constraints_keeps_kinematic_and_constant_configs():
    s, d = kinematic_pendulum()
    s.q = {'x': 0.5, 'z': -0.5, 'r': 1.3}
    s.satisfy_constraints(keep_kinematic=True)
    assert s.get_config('r').q == 1.3
    assert abs(d.h()) <= 1e-10 and d.get_actual_distance() == pytest.approx(1.3)
    # without keep_kinematic the distance may move too (nearest point of the manifold)
    s.q = {'x': 0.5, 'z': -0.5, 'r': 1.3}
    s.satisfy_constraints()
    assert abs(d.h()) <= 1e-10 and s.get_config('r').q != 1.3
    # constant_q_list holds a dynamic config too
    s.q = {'x': 0.5, 'z': -0.5, 'r': 1.3}
    s.satisfy_constraints(keep_kinematic=True, constant_q_list=['x'])
    assert s.get_config('x').q == 0.5 and s.get_config('r').q == 1.3
    assert s.get_config('z').q == pytest.approx(-np.sqrt(1.3 ** 2 - 0.25))
    assert abs(d.h()) <= 1e-10


def test_minimize_potential_energy_constrained_pendulum():
    s, d = kinematic_pendulum()
    s.q = {'x': 0.5, 'z': -0.5, 'r': 1.2}
    s.dq = [0.3, 0.1, 0.0]
    s.minimize_potential_energy(keep_kinematic=True)
    np.testing.assert_allclose(s.q, [0.0, -1.2, 1.2], atol=1e-6)
    np.testing.assert_array_equal(s.dq, 0.0)
    assert abs(d.h()) <= 1e-10
    # and the four-bar settles into a static equilibrium: zero accelerations there
    fb, _ = fourbar(with_force=False)
    fb.minimize_potential_energy()
    assert np.abs([c.h() for c in fb.constraints]).max() <= 1e-10
    np.testing.assert_allclose(fb.f(), 0.0, atol=1e-5)
