"""The compiled kernels (ros_vi.mechanics.kernel) and the Model that feeds them.

Every kernel output is checked against something computed another way: poses against
Frame.g(), joint twists against finite differences of those poses, the spatial inertia
against the kinetic energy and momenta of a rigid body written out by hand, first-order
terms against finite differences of the energies (and T against the frames' body
velocities), second-order terms against finite differences of the first-order ones, the
linear solvers against numpy.linalg.solve.  The ``*_into`` variants must equal the
allocating ones even when their output and scratch buffers start full of garbage.
"""
import os

import numpy as np
import pytest

import systems
from systems import assert_close
from ros_vi.mechanics import kernel

SYSTEMS = ['chain_3d', 'kinematic_system', 'mobile_manipulator', 'planar_chain_4']


def make(name, seed=0):
    s = systems.STANDARD_SYSTEMS[name]()
    systems.random_state(s, seed)
    return s


def state(s):
    return s.data.q.copy(), s.data.dq.copy()


def garbage(rng, *shape):
    return rng.normal(size=shape) * 1e3


def fd(fn, x, h=1e-6):
    """Central differences of fn(x) for every entry of x; derivative index last."""
    x = np.array(x, dtype=float)
    cols = []
    for i in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        cols.append((np.asarray(fn(xp), dtype=float) - np.asarray(fn(xm), dtype=float))
                    / (2 * h))
    return np.stack(cols, axis=-1)


def vee(Xi):
    """(angular, linear) 6-vector of a 4x4 twist matrix."""
    return np.array([Xi[2, 1], Xi[0, 2], Xi[1, 0], Xi[0, 3], Xi[1, 3], Xi[2, 3]])


# ------------------------------------------------------------------ linear solvers
def test_solve_in_place_and_solve_many_in_place_match_numpy():
    rng = np.random.default_rng(1)
    for n in (2, 3, 7):
        A = rng.normal(size=(n, n)) + n * np.eye(n)
        A[0, 0] = 0.0                       # forces a row exchange
        b = rng.normal(size=n)
        B = rng.normal(size=(n, 4))
        A1, x = A.copy(), b.copy()
        assert kernel.solve_in_place(A1, x)
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-12, atol=1e-12)
        A2, X = A.copy(), B.copy()
        assert kernel.solve_many_in_place(A2, X)
        np.testing.assert_allclose(X, np.linalg.solve(A, B), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(A @ X, B, atol=1e-10)


def test_solvers_report_singular_matrices():
    A = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])
    assert not kernel.solve_in_place(A.copy(), np.ones(3))
    assert not kernel.solve_many_in_place(A.copy(), np.ones((3, 2)))
    assert not kernel.solve_in_place(np.array([[np.nan]]), np.ones(1))


def _tree_matrix(rng, cparent, n):
    """A random (n, n) matrix with the tree's pattern (nonzero only between a config and
    its ancestors-or-self), dominated by a negative definite part like -M/dt."""
    nt = len(cparent)
    anc = np.eye(nt, dtype=bool)
    for c in range(nt):
        a = cparent[c]
        while a >= 0:
            anc[a, c] = anc[c, a] = True
            a = cparent[a]
    X = rng.normal(size=(nt, nt))
    A = -(X @ X.T + nt * np.eye(nt)) * anc + 0.3 * rng.normal(size=(nt, nt)) * anc
    return A[:n, :n]


def test_tree_solve_matches_numpy_on_random_trees_and_skips_kinematic_configs():
    rng = np.random.default_rng(7)
    for trial in range(40):
        nt = int(rng.integers(1, 16))
        order = rng.permutation(nt)               # config numbers unrelated to the tree
        cparent = np.full(nt, -1, dtype=np.int64)
        for k in range(1, nt):
            if rng.random() < 0.85:               # else a second root (a forest)
                cparent[order[k]] = order[rng.integers(0, k)]
        corder = order.astype(np.int64)           # parents first
        n = nt - int(rng.integers(0, min(3, nt)))  # the last configs kinematic
        A = _tree_matrix(rng, cparent, n)
        B = rng.normal(size=(n, 3))
        F, X = A.copy(), B.copy()
        assert kernel.tree_factor_in_place(F, cparent, corder)
        kernel.tree_substitute(F, X, cparent, corder)
        np.testing.assert_allclose(X, np.linalg.solve(A, B), rtol=1e-11, atol=1e-12)
        # the factors serve another right-hand side
        Y = B[:, ::-1].copy()
        kernel.tree_substitute(F, Y, cparent, corder)
        np.testing.assert_allclose(Y, X[:, ::-1], rtol=1e-13, atol=1e-14)


def test_tree_solve_of_a_floating_robots_mass_matrix_and_its_refusals():
    from ros_vi.urdf import import_urdf_file
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    system = import_urdf_file(os.path.join(root, 'urdf', 'humanoid.urdf'),
                              floating_base=True)
    q = np.random.default_rng(8).normal(size=system.nQ)
    system.q = q
    M = system.mass_matrix()
    assert np.count_nonzero(M) < 0.6 * M.size          # branches: a sparse pattern
    m = system.model
    b = np.arange(1.0, len(M) + 1)
    A, x = M.copy(), b.copy().reshape(-1, 1)
    assert kernel.tree_factor_in_place(A, m.cparent, m.corder)
    kernel.tree_substitute(A, x, m.cparent, m.corder)
    np.testing.assert_allclose(M @ x[:, 0], b, rtol=1e-11, atol=1e-11)
    # a zero pivot (no pivoting here) and a non-finite one are refused, not divided by
    chain = np.array([-1, 0], dtype=np.int64)
    order = np.array([0, 1], dtype=np.int64)
    assert not kernel.tree_factor_in_place(np.array([[1.0, 1.0], [1.0, 0.0]]), chain, order)
    assert not kernel.tree_factor_in_place(np.array([[1.0, 0.0], [0.0, np.nan]]), chain,
                                           order)
    # the dense pivoted solve handles the first one
    assert kernel.solve_in_place(np.array([[1.0, 1.0], [1.0, 0.0]]), np.ones(2))


# ------------------------------------------------------------------ kinematics
@pytest.mark.parametrize('name', SYSTEMS)
def test_forward_kinematics_matches_frame_poses(name):
    s = make(name, 3)
    model = s.model
    q, _ = state(s)
    R, P = kernel.forward_kinematics(*model.tree_args(), q)
    assert R.shape == (model.nf, 3, 3) and P.shape == (model.nf, 3)
    for frame in s.frames:
        g = frame.g()
        np.testing.assert_allclose(R[frame.index], g[:3, :3], atol=1e-12, err_msg=frame.name)
        np.testing.assert_allclose(P[frame.index], g[:3, 3], atol=1e-12, err_msg=frame.name)
    rng = np.random.default_rng(0)
    R2, P2 = garbage(rng, model.nf, 3, 3), garbage(rng, model.nf, 3)
    kernel.forward_kinematics_into(*model.tree_args(), q, R2, P2)
    np.testing.assert_array_equal(R2, R)
    np.testing.assert_array_equal(P2, P)
    # Model.kinematics is the same computation
    Rm, Pm, _ = model.kinematics(q)
    np.testing.assert_array_equal(Rm, R)


@pytest.mark.parametrize('name', SYSTEMS)
def test_joint_twists_are_the_spatial_velocities_of_the_config_frames(name):
    s = make(name, 4)
    model = s.model
    q, _ = state(s)
    R, P = kernel.forward_kinematics(*model.tree_args(), q)
    S = kernel.joint_twists(model.kind, model.cframe, model.corder, R, P, model.nq)
    assert S.shape == (model.nq, 6)

    def pose(frame_index, qq):
        R_, P_ = kernel.forward_kinematics(*model.tree_args(), qq)
        g = np.eye(4)
        g[:3, :3], g[:3, 3] = R_[frame_index], P_[frame_index]
        return g

    for c in range(model.nq):
        f = model.cframe[c]
        g = pose(f, q)
        # spatial twist: (dg/dq_c) g^-1, by central differences of the pose
        e = np.zeros(model.nq)
        e[c] = 1e-6
        dg = (pose(f, q + e) - pose(f, q - e)) / 2e-6
        np.testing.assert_allclose(S[c], vee(dg @ np.linalg.inv(g)), atol=1e-8)
    rng = np.random.default_rng(1)
    S2 = garbage(rng, model.nq, 6)
    kernel.joint_twists_into(model.kind, model.cframe, model.corder, R, P, S2)
    np.testing.assert_array_equal(S2, S)


# ------------------------------------------------------------------ spatial inertia
def test_spatial_inertia_gives_the_rigid_body_energy_and_momenta():
    rng = np.random.default_rng(2)
    R = systems.rotation((0.3, -1.0, 0.5), 1.1)
    p = np.array([0.4, -0.7, 1.2])
    m = 2.5
    A = rng.normal(size=(3, 3))
    Ib = A @ A.T + np.eye(3)                     # full inertia about the body origin
    G = garbage(rng, 6, 6)
    kernel.spatial_inertia(R, p, m, Ib, G)
    np.testing.assert_allclose(G, G.T, atol=1e-12)
    for _ in range(3):
        w, v = rng.normal(size=3), rng.normal(size=3)
        V = np.concatenate([w, v])                # spatial twist (world frame)
        pdot = v + np.cross(w, p)                 # velocity of the body origin (mass point)
        Iw = R @ Ib @ R.T
        T = 0.5 * m * pdot @ pdot + 0.5 * w @ Iw @ w
        assert 0.5 * V @ G @ V == pytest.approx(T, rel=1e-12)
        linear = m * pdot
        angular = np.cross(p, linear) + Iw @ w    # about the world origin
        np.testing.assert_allclose(G @ V, np.concatenate([angular, linear]), atol=1e-12)


# ------------------------------------------------------------------ first order
def _first(model, q, dq):
    return kernel.first_order(*model.dyn_args(), model.gravity, q, dq)


@pytest.mark.parametrize('name', SYSTEMS)
def test_first_order_partials_are_derivatives_of_the_energies(name):
    s = make(name, 5)
    model = s.model
    q, dq = state(s)
    R, P, S, Vp, Ic, h, Lq, Lv, T, Vg = _first(model, q, dq)
    # Lq = d(T - Vg)/dq, Lv = dT/d(dq)
    assert_close(Lq, fd(lambda x: _first(model, x, dq)[8] - _first(model, x, dq)[9], q),
                 what='Lq')
    assert_close(Lv, fd(lambda x: _first(model, q, x)[8], dq), what='Lv')
    # T from the frames' body velocities (independent Python path), Vg from the positions
    T_ref = 0.0
    Vg_ref = 0.0
    for frame in s.masses:
        vb = frame.vb()
        wb, vlin = np.array([vb[2, 1], vb[0, 2], vb[1, 0]]), vb[:3, 3]
        T_ref += 0.5 * frame.mass * vlin @ vlin + 0.5 * wb @ frame.inertia @ wb
        Vg_ref -= frame.mass * model.gravity @ frame.g()[:3, 3]
    assert T == pytest.approx(T_ref, rel=1e-12, abs=1e-12)
    assert Vg == pytest.approx(Vg_ref, rel=1e-12, abs=1e-12)
    # the in-place form with garbage buffers gives the same results
    rng = np.random.default_rng(3)
    nf, nq = model.nf, model.nq
    bufs = dict(R=garbage(rng, nf, 3, 3), P=garbage(rng, nf, 3), S=garbage(rng, nq, 6),
                V=garbage(rng, nq, 6), Vp=garbage(rng, nq, 6), Ic=garbage(rng, nq, 6, 6),
                h=garbage(rng, nq, 6), G=garbage(rng, 6, 6), Lq=garbage(rng, nq),
                Lv=garbage(rng, nq))
    T2, Vg2 = kernel.first_order_into(*model.dyn_args(), model.gravity, q, dq, *bufs.values())
    assert (T2, Vg2) == (T, Vg)
    for key, ref in (('R', R), ('P', P), ('S', S), ('Vp', Vp), ('Ic', Ic), ('h', h),
                     ('Lq', Lq), ('Lv', Lv)):
        np.testing.assert_array_equal(bufs[key], ref, err_msg=key)


# ------------------------------------------------------------------ second order
@pytest.mark.parametrize('name', SYSTEMS)
def test_second_order_terms_are_derivatives_of_the_first_order_ones(name):
    s = make(name, 6)
    model = s.model
    q, dq = state(s)
    R, P, S, Vp, Ic, h, Lq, Lv, T, Vg = _first(model, q, dq)
    M, Lvq, Lqq = kernel.second_order(S, Vp, Ic, h, model.gravity, model.anc, model.corder)
    assert_close(M, fd(lambda x: _first(model, q, x)[7], dq), what='M = dLv/ddq')
    assert_close(Lvq, fd(lambda x: _first(model, x, dq)[7], q), what='Lvq = dLv/dq')
    assert_close(Lqq, fd(lambda x: _first(model, x, dq)[6], q), what='Lqq = dLq/dq')
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.linalg.eigvalsh(M[:model.nd, :model.nd]).min() > 0
    assert T == pytest.approx(0.5 * dq @ M @ dq, rel=1e-12)
    # in-place form with garbage outputs and scratch
    rng = np.random.default_rng(4)
    nq = model.nq
    out = [garbage(rng, nq, nq) for _ in range(3)]
    scratch = [garbage(rng, nq, 6) for _ in range(4)] + [garbage(rng, 3, 6)]
    kernel.second_order_into(S, Vp, Ic, h, model.gravity, model.anc, model.corder, *out,
                             *scratch)
    for a, b in zip(out, (M, Lvq, Lqq)):
        np.testing.assert_array_equal(a, b)
    # lagrangian_terms is first_order + second_order in one call
    terms = kernel.lagrangian_terms(*model.dyn_args(), model.anc, model.gravity, q, dq)
    for a, b in zip(terms, (Lq, Lv, M, Lvq, Lqq, T, Vg)):
        np.testing.assert_array_equal(a, b)


def test_kernels_are_dtype_generic_complex_step_gives_the_mass_matrix():
    s = make('chain_3d', 7)
    model = s.model
    q, dq = state(s)
    M = kernel.lagrangian_terms(*model.dyn_args(), model.anc, model.gravity, q, dq)[2]
    hstep = 1e-30
    for k in range(model.nq):
        dqc = dq.astype(complex)
        dqc[k] += 1j * hstep
        Lv = kernel.first_order(*model.dyn_args(), model.gravity.astype(complex),
                                q.astype(complex), dqc)[7]
        np.testing.assert_allclose(Lv.imag / hstep, M[:, k], rtol=1e-13, atol=1e-13)


# ------------------------------------------------------------------ Model
def test_model_argument_tuples_and_methods():
    s = make('kinematic_system', 8)
    model = s.model
    q, dq = state(s)
    tree, dyn = model.tree_args(), model.dyn_args()
    assert len(tree) == 6 and len(dyn) == 13
    for a, b in zip(tree, dyn):              # the tree arguments lead the dynamics ones
        assert a is b
    assert dyn[6] is model.mass and dyn[-1] is model.corder
    Lq, Lv, M, Lvq, Lqq, T, Vg = model.lagrangian_terms(model.gravity, q, dq)
    fo = model.first_order(model.gravity, q, dq)
    assert len(fo) == 4
    for a, b in zip(fo, (Lq, Lv, T, Vg)):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)
    # gravity is an argument: without it Lq is the kinetic part only
    Lq0 = model.first_order(np.zeros(3), q, dq)[0]
    assert_close(Lq - Lq0, fd(lambda x: -model.first_order(model.gravity, x, dq)[3], q),
                 what='gravity part of Lq')
    # and the System's own Lagrangian (all potentials are Gravity here) agrees
    assert s.L() == pytest.approx(T - Vg, rel=1e-12)
    np.testing.assert_allclose(s.mass_matrix(), M[:s.nQd, :s.nQd], rtol=1e-12)


def test_model_create_data_is_a_fresh_zero_state():
    s = make('chain_3d', 9)
    model = s.model
    before = s.data.q.copy()
    data = model.create_data()
    assert data is not s.data
    assert data.q.shape == (model.nq,) and data.u.shape == (model.nu,)
    assert not data.q.any() and not data.dq.any() and not data.u.any() and data.t == 0.0
    data.q[:] = 1.0
    assert not np.shares_memory(data.q, s.data.q)
    np.testing.assert_array_equal(s.data.q, before)
    assert model.create_data() is not data


def test_model_update_constants_follows_constant_transforms():
    s = make('chain_3d', 10)
    model = s.model
    side = s.get_frame('B_side')         # ty(0.25), no config
    const = s.get_frame('C_const')       # const_se3
    side.transform_value = -0.4
    G = systems.se3(systems.rotation((0.0, 1.0, 1.0), -0.3), (0.5, 0.1, -0.2))
    const.transform_value = G
    assert s.model is model              # same structure: updated in place, not rebuilt
    assert model.value[side.index] == -0.4
    np.testing.assert_array_equal(model.fixedR[const.index], G[:3, :3])
    np.testing.assert_array_equal(model.fixedp[const.index], G[:3, 3])
    R, P = kernel.forward_kinematics(*model.tree_args(), s.data.q)
    for frame in s.frames:
        np.testing.assert_allclose(P[frame.index], frame.g()[:3, 3], atol=1e-12)
    # update_constants on its own re-reads the frames' values
    model.value[side.index] = 99.0
    model.fixedp[const.index] = 99.0
    model.update_constants(s.frames)
    assert model.value[side.index] == -0.4
    np.testing.assert_array_equal(model.fixedp[const.index], G[:3, 3])
