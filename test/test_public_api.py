"""Public functions of ros_vi.mechanics and ros_vi.integrators not covered elsewhere.

Grouped by module.  Derivatives are checked against central differences of the next lower
derivative (itself exact and tested elsewhere), values against closed forms or sums of
the components' own methods, and the compiled fast step against the general path.
"""
import numpy as np
import pytest

import ros_vi as trep
import systems
from systems import assert_close
from ros_vi import const_txyz, rx, ry, rz, tx, tz
from ros_vi.integrators.fast_step import FastStepper
from ros_vi.mechanics import dynamics
from ros_vi.mechanics._derivcheck import abstract
from ros_vi.mechanics.data import Data
from ros_vi.mechanics.force import AffineForce, Force
from ros_vi.mechanics.frame import hat
from ros_vi.mechanics.potential import Potential

DELTA = 1e-6


# ---------------------------------------------------------------------- helpers
def fd(s, attr, fn, delta=DELTA, indices=None):
    """Central differences of fn() in the entries of s.data.<attr>; derivative index last."""
    arr = getattr(s.data, attr)
    cols = []
    for i in (range(arr.shape[0]) if indices is None else indices):
        base = arr[i]
        arr[i] = base + delta
        s.data.invalidate()
        fp = np.array(fn(), dtype=float)
        arr[i] = base - delta
        s.data.invalidate()
        fm = np.array(fn(), dtype=float)
        arr[i] = base
        s.data.invalidate()
        cols.append((fp - fm) / (2 * delta))
    if not cols:
        return np.zeros(np.shape(fn()) + (0,))
    return np.stack(cols, axis=-1)


class InputForce(Force):
    """A force nonlinear in q, dq and its own input u, so every second derivative is
    non-zero (F_i = c_i cos(q_i) (u^2 + u dq_i) + e_i dq_i^2 sin(q_j), j = i + 1 mod n).
    Implements only the per-entry methods: the whole-array forms come from Force."""

    def __init__(self, system, c, e, name=None):
        self._c, self._e = np.asarray(c, float), np.asarray(e, float)
        Force.__init__(self, system, name)
        self.inp = self._create_input('w')

    def _v(self, q):
        s = self._system
        i = s.get_config(q).index
        n = s.nQ
        j = (i + 1) % n
        return i, j, s.data.q, s.data.dq, s.data.u[self.inp.index]

    def _idx(self, x):
        return self._system.get_config(x).index

    def f(self, q):
        i, j, Q, D, u = self._v(q)
        return (self._c[i] * np.cos(Q[i]) * (u * u + u * D[i])
                + self._e[i] * D[i] ** 2 * np.sin(Q[j]))

    def f_dq(self, q, q1):
        i, j, Q, D, u = self._v(q)
        k = self._idx(q1)
        return ((k == i) * -self._c[i] * np.sin(Q[i]) * (u * u + u * D[i])
                + (k == j) * self._e[i] * D[i] ** 2 * np.cos(Q[j]))

    def f_ddq(self, q, dq1):
        i, j, Q, D, u = self._v(q)
        k = self._idx(dq1)
        return (k == i) * (self._c[i] * np.cos(Q[i]) * u + 2 * self._e[i] * D[i] * np.sin(Q[j]))

    def f_du(self, q, u1):
        i, j, Q, D, u = self._v(q)
        if self._system.get_input(u1) is not self.inp:
            return 0.0
        return self._c[i] * np.cos(Q[i]) * (2 * u + D[i])

    def f_dqdq(self, q, q1, q2):
        i, j, Q, D, u = self._v(q)
        k, m = self._idx(q1), self._idx(q2)
        return ((k == i) * (m == i) * -self._c[i] * np.cos(Q[i]) * (u * u + u * D[i])
                - (k == j) * (m == j) * self._e[i] * D[i] ** 2 * np.sin(Q[j]))

    def f_ddqdq(self, q, dq1, q2):
        i, j, Q, D, u = self._v(q)
        k, m = self._idx(dq1), self._idx(q2)
        return (k == i) * (-(m == i) * self._c[i] * np.sin(Q[i]) * u
                           + (m == j) * 2 * self._e[i] * D[i] * np.cos(Q[j]))

    def f_ddqddq(self, q, dq1, dq2):
        i, j, Q, D, u = self._v(q)
        k, m = self._idx(dq1), self._idx(dq2)
        return (k == i) * (m == i) * 2 * self._e[i] * np.sin(Q[j])

    def f_dudq(self, q, u1, q2):
        i, j, Q, D, u = self._v(q)
        if self._system.get_input(u1) is not self.inp:
            return 0.0
        return (self._idx(q2) == i) * -self._c[i] * np.sin(Q[i]) * (2 * u + D[i])

    def f_duddq(self, q, u1, dq2):
        i, j, Q, D, u = self._v(q)
        if self._system.get_input(u1) is not self.inp:
            return 0.0
        return (self._idx(dq2) == i) * self._c[i] * np.cos(Q[i])

    def f_dudu(self, q, u1, u2):
        i, j, Q, D, u = self._v(q)
        s = self._system
        if s.get_input(u1) is not self.inp or s.get_input(u2) is not self.inp:
            return 0.0
        return 2 * self._c[i] * np.cos(Q[i])


def rich_pendulum(seed=0):
    """Double pendulum with springs, Damping, ConfigForce, plus a LinearSpring (a general
    potential with non-zero third derivatives), a LinearDamper, JointLimits, friction and
    the InputForce above."""
    s = systems.double_pendulum()
    world = s.world_frame
    trep.potentials.LinearSpring(s, world, 'mass2', k=3.0, x0=0.5)
    trep.forces.LinearDamper(s, world, 'mass2', 0.7)
    trep.forces.JointLimits(s, {'theta1': (-0.2, 0.2)}, stiffness=50.0, damping=2.0)
    trep.forces.SmoothCoulombFriction(s, {'theta2': 0.4}, velocity_scale=0.5)
    InputForce(s, c=[0.8, -0.6], e=[0.3, 0.5])
    rng = np.random.default_rng(seed)
    s.q = [0.5 + 0.2 * rng.random(), rng.uniform(-1, 1)]   # theta1 beyond its upper limit
    s.dq = rng.uniform(-1, 1, 2)
    s.u = rng.uniform(-1, 1, s.nu)
    return s


def constrained_system(seed=0):
    """3-D chain with a kinematic distance config, three constraints and InputForce."""
    s = trep.System()
    s.import_frames([
        rz('a', name='A'), [tx(0.7), [ry('b', name='B'), [
            tz(-0.5, name='Bt', mass=[1.0, 0.1, 0.2, 0.1]), [
                rx('c'), [trep.ty('d', name='D', mass=[1.0, 0.1, 0.2, 0.3])]]]]],
        tx('e', name='E', mass=0.5), [
            rx('f'), [const_txyz([0.1, 0.2, 0.3], name='F', mass=[1.0, 0.2, 0.1, 0.3])]],
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.forces.Damping(s, 0.3)
    trep.forces.ConfigForce(s, 'b', 'ub')
    trep.constraints.Distance(s, 'D', 'F', 'len', name='dist')
    trep.constraints.PointOnPlane(s, 'B', [0.3, -1.0, 2.0], 'D', name='plane')
    trep.constraints.PointToPoint1D(s, 'z', 'Bt', 'F', name='pz')
    InputForce(s, c=[0.5, -0.4, 0.3, 0.6, -0.2, 0.7, 0.0], e=[0.2, 0.1, -0.3, 0.2, 0.4, -0.1, 0.0])
    rng = np.random.default_rng(seed)
    s.q = rng.uniform(-1.2, 1.2, s.nQ)
    s.dq = rng.uniform(-1.0, 1.0, s.nQ)
    s.u = rng.uniform(-1, 1, s.nu)
    s.ddqk = [0.4]
    return s


# ====================================================================== dynamics.py
@pytest.mark.parametrize('name', ['chain_3d', 'kinematic_system'])
def test_dynamics_lagrangian_terms_match_the_system(name):
    s = systems.STANDARD_SYSTEMS[name]()
    systems.random_state(s, 1)
    model = s.model
    data = model.create_data()
    data.set(q=s.q, dq=s.dq)
    t = dynamics.lagrangian_terms(model, data)
    assert dynamics.lagrangian_terms(model, data) is t          # cached
    cs = s.configs
    np.testing.assert_allclose(t.M[:s.nQd, :s.nQd], s.mass_matrix(), rtol=1e-12)
    np.testing.assert_allclose(t.M, [[s.L_ddqddq(a, b) for b in cs] for a in cs], rtol=1e-12)
    np.testing.assert_allclose(t.Lqq, [[s.L_dqdq(a, b) for b in cs] for a in cs],
                               rtol=1e-12, atol=1e-12)
    # Lvq[v-row, q-column]
    np.testing.assert_allclose(t.Lvq, [[s.L_ddqdq(a, b) for b in cs] for a in cs],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t.Lq, [s.L_dq(c) for c in cs], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t.Lv, [s.L_ddq(c) for c in cs], rtol=1e-12, atol=1e-12)
    assert t.T == pytest.approx(s.kinetic_energy(), rel=1e-12)
    assert t.T - t.Vg == pytest.approx(s.L(), rel=1e-12)
    # first_order_terms: the O(n) subset, equal to the full terms
    f = dynamics.first_order_terms(model, data)
    for key in ('Lq', 'Lv', 'T', 'Vg'):
        np.testing.assert_allclose(getattr(f, key), getattr(t, key), rtol=1e-14, atol=1e-14)
    # a new state gives new terms
    data.set(q=s.q + 0.1)
    t2 = dynamics.lagrangian_terms(model, data)
    assert t2 is not t and not np.allclose(t2.M, t.M)


@pytest.mark.parametrize('name', ['double_pendulum', 'kinematic_system', 'chain_3d'])
def test_momentum_and_velocity_are_inverse_legendre_maps(name):
    s = systems.STANDARD_SYSTEMS[name]()
    systems.random_state(s, 2)
    model = s.model
    data = model.create_data()
    data.set(q=s.q)
    nd = model.nd
    M = dynamics.mass_matrix(model, data)
    rng = np.random.default_rng(0)
    v = rng.normal(size=model.nq)              # kinematic entries must be ignored
    p = dynamics.momentum_from_velocity(model, data, v)
    np.testing.assert_allclose(p, M @ v[:nd], rtol=1e-13)
    np.testing.assert_allclose(dynamics.momentum_from_velocity(model, data, v[:nd]), p)
    back = dynamics.velocity_from_momentum(model, data, p)
    np.testing.assert_allclose(back, v[:nd], rtol=1e-10, atol=1e-12)
    p2 = rng.normal(size=nd)
    np.testing.assert_allclose(dynamics.velocity_from_momentum(model, data, p2),
                               np.linalg.solve(M, p2), rtol=1e-12)
    # p = dL/dv of the dynamic configs when the kinematic velocities are zero
    v[nd:] = 0.0
    data.set(dq=v)
    np.testing.assert_allclose(p, dynamics.lagrangian_terms(model, data).Lv[:nd], rtol=1e-12)


def test_velocity_from_momentum_without_dynamic_configs():
    s = trep.System()
    s.import_frames([tx('x', kinematic=True, mass=1.0)])
    data = s.model.create_data()
    assert dynamics.velocity_from_momentum(s.model, data, []).shape == (0,)


def test_applied_terms_sum_the_components():
    s = rich_pendulum(1)
    e = dynamics.applied_terms(s)
    assert dynamics.applied_terms(s) is e                     # cached
    general = s.general_potentials
    assert len(general) == 3                                   # 2 ConfigSprings + LinearSpring
    np.testing.assert_allclose(e.V_dq, sum(p.V_dq_array() for p in general), rtol=1e-14)
    np.testing.assert_allclose(e.V_dqdq, sum(p.V_dqdq_array() for p in general), rtol=1e-14)
    for key, method in (('F', 'f_array'), ('F_dq', 'f_dq_array'), ('F_ddq', 'f_ddq_array'),
                        ('F_du', 'f_du_array')):
        ref = sum(getattr(f, method)() for f in s.forces)
        np.testing.assert_allclose(getattr(e, key), ref, rtol=1e-14, atol=1e-14, err_msg=key)
    # derivatives of the sums by central differences
    assert_close(e.F_dq, fd(s, 'q', lambda: dynamics.applied_terms(s).F), what='F_dq')
    assert_close(e.F_ddq, fd(s, 'dq', lambda: dynamics.applied_terms(s).F), what='F_ddq')
    assert_close(e.F_du, fd(s, 'u', lambda: dynamics.applied_terms(s).F), what='F_du')
    assert_close(e.V_dqdq, fd(s, 'q', lambda: dynamics.applied_terms(s).V_dq), what='V_dqdq')
    # V_dq is the gradient of the non-gravity potential energy
    Vgen = lambda: sum(p.V() for p in s.general_potentials)  # noqa: E731
    assert_close(e.V_dq, fd(s, 'q', Vgen), what='V_dq')


def fourbar():
    s = trep.System()
    link = [1.0, 0.0, 0.1, 0.0]
    s.import_frames([
        ry('th1'), [tx(1.0, name='A', mass=link), [
            ry('th2'), [tx(1.2, name='B', mass=link), [
                ry('th3'), [tx(1.0, name='C', mass=link)]]]]],
        const_txyz([1.5, 0.0, 0.0], name='G'),
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.constraints.PointToPoint2D(s, 'xz', 'C', 'G', name='close')
    trep.constraints.Distance(s, 'B', 'G', 1.1, name='dist')
    s.q = [-1.2, 1.5, 1.4]
    return s


def test_constraint_hessians_and_third_derivatives():
    s = fourbar()
    H = dynamics.constraint_hessians(s)
    H3 = dynamics.constraint_third_derivatives(s)
    assert H.shape == (3, 3, 3) and H3.shape == (3, 3, 3, 3)
    assert_close(H, fd(s, 'q', lambda: dynamics.constraint_jacobian(s)), what='hessians')
    assert_close(H3, fd(s, 'q', lambda: dynamics.constraint_hessians(s)), what='third')
    np.testing.assert_allclose(H, H.transpose(0, 2, 1), atol=1e-12)
    assert np.abs(H).max() > 0.1 and np.abs(H3).max() > 0.1
    # the Jacobian itself is the derivative of the values
    assert_close(dynamics.constraint_jacobian(s),
                 fd(s, 'q', lambda: dynamics.constraint_values(s)), what='jacobian')


def test_lagrangian_third_matches_differences_of_the_second_partials():
    s = rich_pendulum(2)
    Lqqq, Lqqv, Lqvv = dynamics.lagrangian_third(s)
    assert dynamics.lagrangian_third(s)[0] is Lqqq             # cached
    model = s.model

    def second():
        t = dynamics.lagrangian_terms(model, s.data)
        Vqq = sum(p.V_dqdq_array() for p in s.general_potentials)
        return np.stack([t.Lqq - Vqq, t.Lvq.T, t.M])

    d_q = fd(s, 'q', second)                    # [which, a, b, c] = d second[a, b] / dq_c
    assert_close(Lqqq, d_q[0], what='Lqqq')
    # Lqqv[a, b, c] = d3L/dq_a dq_b dv_c = d Lvq[c, a] / dq_b
    assert_close(Lqqv, d_q[1].transpose(0, 2, 1), what='Lqqv')
    # Lqvv[a, b, c] = d M[b, c] / dq_a
    assert_close(Lqvv, d_q[2].transpose(2, 0, 1), what='Lqvv')
    # the general potential's third derivative is included: it is not zero here
    V3 = sum(p.V_dqdqdq_array() for p in s.general_potentials)
    assert np.abs(V3).max() > 0.1


def test_force_second_matches_differences_of_the_force_jacobians():
    s = rich_pendulum(3)
    f2 = dynamics.force_second(s)
    assert dynamics.force_second(s) is f2                      # cached
    n, nu = s.nQ, s.nu
    assert f2.qq.shape == (n, n, n) and f2.uq.shape == (n, nu, n) and f2.uu.shape == (n, nu, nu)

    def total(method):
        return lambda: sum(getattr(f, method)() for f in s.forces)

    assert_close(f2.qq, fd(s, 'q', total('f_dq_array')), what='qq')
    assert_close(f2.vq, fd(s, 'q', total('f_ddq_array')), what='vq')
    assert_close(f2.vv, fd(s, 'dq', total('f_ddq_array')), what='vv')
    assert_close(f2.uq, fd(s, 'q', total('f_du_array')), what='uq')
    assert_close(f2.uv, fd(s, 'dq', total('f_du_array')), what='uv')
    assert_close(f2.uu, fd(s, 'u', total('f_du_array')), what='uu')
    for key in f2._fields:                      # every block carries something here
        assert np.abs(getattr(f2, key)).max() > 1e-3, key


# ====================================================================== data.py
def test_two_data_of_one_model_are_independent():
    s = systems.chain_3d()
    model = s.model
    own = s.data.q.copy()
    rng = np.random.default_rng(5)
    d1, d2 = model.create_data(), model.create_data()
    q1, q2 = rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nq)
    d1.set(q=q1, dq=np.ones(model.nq))
    d2.set(q=q2, dq=-np.ones(model.nq))
    M1 = dynamics.mass_matrix(model, d1)
    M2 = dynamics.mass_matrix(model, d2)
    T2 = dynamics.kinetic_energy(model, d2)
    # interleaved evaluation changes nothing
    np.testing.assert_array_equal(dynamics.mass_matrix(model, d1), M1)
    assert not np.allclose(M1, M2)
    s.q = q1
    np.testing.assert_allclose(s.mass_matrix(), M1, rtol=1e-13)
    s.q, s.dq = q2, -np.ones(model.nq)
    assert s.kinetic_energy() == pytest.approx(T2, rel=1e-13)
    s.q = own
    np.testing.assert_array_equal(d1.q, q1)      # the System never wrote into them


def test_data_invalidate_and_copy():
    s = systems.double_pendulum()
    model = s.model
    data = model.create_data()
    data.set(q=[0.3, -0.2], dq=[0.1, 0.4], u=[0.5], t=1.5)
    M = dynamics.mass_matrix(model, data)
    cache = data.cache
    data.q[1] = 1.0                               # direct write: the cache is now stale
    assert data.cache is cache
    np.testing.assert_array_equal(dynamics.mass_matrix(model, data), M)
    data.invalidate()
    assert data.cache is not cache and data.cache.lagrangian is None
    M_new = dynamics.mass_matrix(model, data)
    ref = model.create_data()
    ref.set(q=[0.3, 1.0])
    np.testing.assert_allclose(M_new, dynamics.mass_matrix(model, ref), rtol=1e-14)
    assert not np.allclose(M_new, M)
    # copy: same state, own arrays, empty cache
    c = data.copy()
    assert isinstance(c, Data)
    for attr in ('q', 'dq', 'ddq', 'u'):
        np.testing.assert_array_equal(getattr(c, attr), getattr(data, attr))
        assert not np.shares_memory(getattr(c, attr), getattr(data, attr))
    assert c.t == 1.5 and c.cache.lagrangian is None and c.cache is not data.cache
    c.q[0] = 9.0
    assert data.q[0] == 0.3


# ====================================================================== system.py
def test_evaluate_at_reads_the_given_data_and_leaves_the_system_alone():
    s = systems.double_pendulum()
    s.q, s.dq, s.u = [0.1, 0.2], [0.3, -0.1], [0.2]
    own = s.data
    q_own, E_own = own.q.copy(), s.total_energy()
    data = s.model.create_data()
    data.set(q=[1.0, -0.5], dq=[0.2, 0.7], u=[-1.0])
    with s.evaluate_at(data) as d:
        assert d is data and s.data is data
        E = s.total_energy()
        ddq = s.f()
        np.testing.assert_array_equal(s.q, [1.0, -0.5])
    assert s.data is own
    np.testing.assert_array_equal(own.q, q_own)
    assert s.total_energy() == E_own
    s.q, s.dq, s.u = [1.0, -0.5], [0.2, 0.7], [-1.0]
    assert E == pytest.approx(s.total_energy(), rel=1e-14)
    np.testing.assert_allclose(ddq, s.f(), rtol=1e-13)
    # restored on an exception too
    with pytest.raises(RuntimeError):
        with s.evaluate_at(data):
            raise RuntimeError('inside')
    assert s.data is own


def test_evaluate_at_rejects_data_of_another_model_naming_sizes():
    s = systems.double_pendulum()                 # 2 configs, 1 input
    other = systems.chain_3d().model.create_data()  # 7 configs, 1 input
    with pytest.raises(ValueError, match=r'7 configs and 1 inputs.*2 and 1'):
        with s.evaluate_at(other):
            pass
    with pytest.raises(ValueError, match=r'2 configs and 0 inputs.*2 and 1'):
        with s.evaluate_at(Data(2, 0)):
            pass


def test_parameter_version_counts_parameter_changes_only():
    s = systems.double_pendulum()
    damping = [f for f in s.forces if isinstance(f, trep.forces.Damping)][0]
    spring = [p for p in s.potentials if isinstance(p, trep.potentials.ConfigSpring)][0]
    gravity = [p for p in s.potentials if isinstance(p, trep.potentials.Gravity)][0]
    v = s.parameter_version
    s.q, s.dq, s.u = [0.3, 0.1], [1.0, 2.0], [0.5]   # state changes are not parameters
    s.f()
    assert s.parameter_version == v
    changes = [lambda: damping.set_damping_coefficient('theta1', 0.9),
               lambda: setattr(damping, 'default', 0.2),
               lambda: setattr(spring, 'k', 7.0),
               lambda: setattr(spring, 'q0', 0.1),
               lambda: setattr(gravity, 'gravity', (0.0, 0.0, -3.0)),
               lambda: setattr(s.get_frame('mass1'), 'transform_value', -1.3)]
    for change in changes:
        before = s.parameter_version
        change()
        assert s.parameter_version > before
    # and the changed parameters are in effect
    assert s.model.gravity[2] == -3.0


def test_general_potentials_are_those_outside_the_kernel():
    s = systems.double_pendulum()
    g2 = trep.potentials.Gravity(s, (1.0, 0.0, 0.0))
    ls = trep.potentials.LinearSpring(s, s.world_frame, 'mass2', k=2.0)
    general = s.general_potentials
    assert isinstance(general, tuple)
    assert ls in general and g2 not in general
    assert all(p.kernel_gravity is None for p in general)
    assert len(general) == len(s.potentials) - 2
    # total potential energy = kernel gravity + the general ones
    s.q = [0.4, -0.8]
    Vg = dynamics.lagrangian_terms(s.model, s.data).Vg
    assert s.potential_energy() == pytest.approx(Vg + sum(p.V() for p in general), rel=1e-13)


def test_second_derivatives_of_constrained_dynamics():
    """f_dddkdq and lambda_* second derivatives against central differences of the exact
    first derivatives (tested against differences of f and lambda_ elsewhere)."""
    s = constrained_system(0)
    nd, nk = s.nQd, s.nQk
    assert nk == 1 and s.nc == 3 and s.nu == 2

    def kin_fd(fn):
        return fd(s, 'ddq', fn, indices=range(nd, nd + nk))

    first = {'l_dq': s.lambda_dq, 'l_ddq': s.lambda_ddq, 'l_du': s.lambda_du,
             'l_dddq': s.lambda_dddq, 'f_dddq': s.f_dddq}
    # exact second derivatives are [in1, in2, out]; differences give [out, in1, in2]
    checks = [
        (s.lambda_dqdq(), fd(s, 'q', first['l_dq']), 'lambda_dqdq'),
        (s.lambda_ddqdq(), fd(s, 'q', first['l_ddq']), 'lambda_ddqdq'),
        (s.lambda_ddqddq(), fd(s, 'dq', first['l_ddq']), 'lambda_ddqddq'),
        (s.lambda_dddkdq(), fd(s, 'q', first['l_dddq']), 'lambda_dddkdq'),
        (s.lambda_dudq(), fd(s, 'q', first['l_du']), 'lambda_dudq'),
        (s.lambda_duddq(), fd(s, 'dq', first['l_du']), 'lambda_duddq'),
        (s.lambda_dudu(), fd(s, 'u', first['l_du']), 'lambda_dudu'),
        (s.f_dddkdq(), fd(s, 'q', first['f_dddq']), 'f_dddkdq'),
    ]
    for exact, approx, what in checks:
        assert_close(exact, approx.transpose(1, 2, 0), rel=1e-5, abs_=1e-7, what=what)
        assert np.abs(exact).max() > 1e-3, what
    # the derivative in ddq_k of a q-derivative is also the q-derivative of f_dddq:
    # check the symmetric route once (d/d ddqk of f_dq)
    assert_close(s.f_dddkdq().transpose(2, 1, 0), kin_fd(s.f_dq), rel=1e-5, abs_=1e-7,
                 what='f_dddkdq via f_dq')
    # entry access by identifiers
    c, a, k, u = s.get_constraint('plane'), s.get_config('b'), s.get_config('len'), s.inputs[1]
    full = s.lambda_dqdq()
    assert s.lambda_dqdq(c, a, 'c') == full[a.index, s.get_config('c').index, c.index]
    assert s.lambda_dudu('dist', u, u) == s.lambda_dudu()[u.index, u.index, 0]
    assert s.lambda_dddkdq(c, k, a) == s.lambda_dddkdq()[0, a.index, c.index]
    assert s.f_dddkdq(a, k, 'c') == s.f_dddkdq()[0, s.get_config('c').index, a.index]
    np.testing.assert_array_equal(s.lambda_duddq(c), s.lambda_duddq()[..., c.index])
    np.testing.assert_array_equal(s.lambda_ddqddq(None, a), s.lambda_ddqddq()[a.index])
    np.testing.assert_array_equal(s.lambda_ddqdq(None, None, a), s.lambda_ddqdq()[:, a.index])
    np.testing.assert_array_equal(s.lambda_dudq(c, u), s.lambda_dudq()[u.index, :, c.index])
    with pytest.raises(ValueError):
        s.lambda_dddkdq(c, a, a)              # 'b' is not kinematic


def test_second_derivatives_leave_the_state_as_it_was():
    """After a second derivative the System's state, including the accelerations that
    f() wrote to system.ddq / Config.ddq, is what it was before."""
    s = constrained_system(1)
    ddq = s.f()
    lam = s.lambda_()
    np.testing.assert_array_equal(s.ddq[:s.nQd], ddq)
    state = [arr.copy() for arr in (s.data.q, s.data.dq, s.data.ddq, s.data.u)]
    s.lambda_dudu()
    np.testing.assert_array_equal(s.f(), ddq)
    np.testing.assert_array_equal(s.lambda_(), lam)
    for name, before, after in zip(('q', 'dq', 'ddq', 'u'), state,
                                   (s.data.q, s.data.dq, s.data.ddq, s.data.u)):
        np.testing.assert_array_equal(after, before, err_msg=name)
    np.testing.assert_array_equal([c.ddq for c in s.dyn_configs], ddq)


# ====================================================================== frame.py
def test_hat_is_the_twist_matrix():
    rng = np.random.default_rng(6)
    xi = rng.normal(size=6)
    X = hat(xi)
    w, v = xi[:3], xi[3:]
    np.testing.assert_array_equal(X[3], np.zeros(4))
    np.testing.assert_array_equal(X[:3, :3], -X[:3, :3].T)
    p = rng.normal(size=3)
    np.testing.assert_allclose(X @ np.append(p, 1.0), np.append(np.cross(w, p) + v, 0.0),
                               atol=1e-14)
    # the frames' own twist_hat is hat of the unit local twist
    s = systems.chain_3d()
    np.testing.assert_array_equal(s.get_frame('B').twist_hat(), hat([0, 1, 0, 0, 0, 0]))
    np.testing.assert_array_equal(s.get_frame('E').twist_hat(), hat([0, 0, 0, 0, 1, 0]))


def _body():
    s = trep.System()
    s.import_frames([rz('a'), [ry('b'), [rx('c'), [const_txyz([0.2, -0.1, 0.3], name='B')]]]])
    return s, s.get_frame('B')


def test_set_inertia_full_tensor_enters_the_kinetic_energy():
    s, body = _body()
    inertia = np.array([[0.5, 0.1, -0.05], [0.1, 0.4, 0.08], [-0.05, 0.08, 0.3]])
    body.set_inertia(2.0, inertia)
    assert body.mass == 2.0
    np.testing.assert_array_equal(body.inertia, inertia)
    assert (body.Ixx, body.Iyy, body.Izz) == (0.5, 0.4, 0.3)
    rng = np.random.default_rng(7)
    for _ in range(3):
        s.q, s.dq = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        vb = body.vb()
        wb, vlin = np.array([vb[2, 1], vb[0, 2], vb[1, 0]]), vb[:3, 3]
        T = 0.5 * 2.0 * vlin @ vlin + 0.5 * wb @ inertia @ wb
        assert s.kinetic_energy() == pytest.approx(T, rel=1e-12)
    # the off-diagonal products matter: the diagonal alone gives another energy
    body.set_inertia(2.0, np.diag(np.diag(inertia)))
    assert s.kinetic_energy() != pytest.approx(T, rel=1e-6)


@pytest.mark.parametrize('mass, inertia, match', [
    (-1.0, np.eye(3), 'negative mass'),
    (1.0, [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], 'not symmetric'),
    (1.0, np.diag([1.0, -0.5, 1.0]), 'positive semi-definite'),
    (np.nan, np.eye(3), 'finite'),
    (1.0, np.diag([1.0, np.inf, 1.0]), 'finite'),
])
def test_set_inertia_rejects_bad_values(mass, inertia, match):
    s, body = _body()
    body.set_inertia(1.0, np.eye(3))
    with pytest.raises(ValueError, match=match):
        body.set_inertia(mass, inertia)
    assert body.mass == 1.0
    np.testing.assert_array_equal(body.inertia, np.eye(3))


def test_vb_ddqdqdqdq_is_the_derivative_of_vb_ddqdqdq():
    s = systems.chain_3d()
    systems.random_state(s, 8)
    rng = np.random.default_rng(8)
    frame = s.get_frame('tip')
    n = s.nQ
    # tuples where the derivative is not zero (the velocity twist of config i seen from
    # the tip depends only on the configs between them), plus a few random ones
    tuples = [(0, 1, 1, 1), (0, 1, 1, 2), (0, 1, 1, 3), (0, 1, 1, 4), (0, 1, 1, 5),
              (0, 1, 2, 3), (0, 3, 1, 3), (0, 1, 3, 4), (0, 5, 3, 1), (0, 2, 3, 3),
              (0, 3, 3, 3), (0, 3, 4, 3), (1, 2, 3, 3), (1, 3, 3, 3), (1, 3, 5, 3)]
    tuples += [tuple(rng.integers(0, n, 4)) for _ in range(4)]
    for i, j, k, m in tuples:
        exact = frame.vb_ddqdqdqdq(i, j, k, m)
        approx = fd(s, 'q', lambda: frame.vb_ddqdqdq(i, j, k), indices=[m])[..., 0]
        assert_close(exact, approx, what='vb_ddqdqdqdq(%d, %d, %d, %d)' % (i, j, k, m))
    assert all(np.abs(frame.vb_ddqdqdqdq(*c)).max() > 1e-3 for c in tuples[:15])
    # symmetric in the q-derivatives
    np.testing.assert_allclose(frame.vb_ddqdqdqdq(0, 1, 3, 5), frame.vb_ddqdqdqdq(0, 5, 1, 3),
                               atol=1e-12)


# ====================================================================== force.py
def test_force_base_arrays_from_the_entry_methods():
    s = rich_pendulum(4)
    force = [f for f in s.forces if isinstance(f, InputForce)][0]
    c, u = s.configs, s.inputs
    n, nu = len(c), len(u)
    table = {
        'f_dqdq_array': [[[force.f_dqdq(a, b, d) for d in c] for b in c] for a in c],
        'f_ddqdq_array': [[[force.f_ddqdq(a, b, d) for d in c] for b in c] for a in c],
        'f_ddqddq_array': [[[force.f_ddqddq(a, b, d) for d in c] for b in c] for a in c],
        'f_dudq_array': [[[force.f_dudq(a, b, d) for d in c] for b in u] for a in c],
        'f_duddq_array': [[[force.f_duddq(a, b, d) for d in c] for b in u] for a in c],
        'f_dudu_array': [[[force.f_dudu(a, b, d) for d in u] for b in u] for a in c],
    }
    shapes = {'f_dqdq_array': (n, n, n), 'f_ddqdq_array': (n, n, n),
              'f_ddqddq_array': (n, n, n), 'f_dudq_array': (n, nu, n),
              'f_duddq_array': (n, nu, n), 'f_dudu_array': (n, nu, nu)}
    for name, ref in table.items():
        arr = getattr(force, name)()
        assert arr.shape == shapes[name], name
        np.testing.assert_array_equal(arr, ref, err_msg=name)
    # and they are the derivatives of the first-order arrays
    assert_close(force.f_dqdq_array(), fd(s, 'q', force.f_dq_array), what='f_dqdq_array')
    assert_close(force.f_ddqdq_array(), fd(s, 'q', force.f_ddq_array), what='f_ddqdq_array')
    assert_close(force.f_ddqddq_array(), fd(s, 'dq', force.f_ddq_array), what='f_ddqddq')
    assert_close(force.f_dudq_array(), fd(s, 'q', force.f_du_array), what='f_dudq_array')
    assert_close(force.f_duddq_array(), fd(s, 'dq', force.f_du_array), what='f_duddq_array')
    assert_close(force.f_dudu_array(), fd(s, 'u', force.f_du_array), what='f_dudu_array')


class _WrongDudq(InputForce):
    def f_dudq(self, q, u1, q2):
        return 1.1 * InputForce.f_dudq(self, q, u1, q2)


class _WrongDuddq(InputForce):
    def f_duddq(self, q, u1, dq2):
        return InputForce.f_duddq(self, q, u1, dq2) + 0.01


class _WrongDudu(InputForce):
    def f_dudu(self, q, u1, u2):
        return -InputForce.f_dudu(self, q, u1, u2)


@pytest.mark.parametrize('check, wrong', [('validate_f_dudq', _WrongDudq),
                                          ('validate_f_duddq', _WrongDuddq),
                                          ('validate_f_dudu', _WrongDudu)])
def test_validate_second_input_derivatives(check, wrong, capsys):
    s = rich_pendulum(5)
    good = [f for f in s.forces if isinstance(f, InputForce)][0]
    bad = wrong(s, c=[0.8, -0.6], e=[0.3, 0.5])
    s.u = np.full(s.nu, 0.7)
    q = s.data.q.copy()
    assert getattr(good, check)(verbose=True)
    assert capsys.readouterr().out == ''
    assert not getattr(bad, check)(verbose=True)
    assert 'error' in capsys.readouterr().out
    np.testing.assert_array_equal(s.data.q, q)        # the check restores the state
    # trep's alias
    assert getattr(good, check.replace('_f_', '_h_'))()


def test_affine_force_second_derivative_arrays_are_zero():
    s = systems.double_pendulum()
    systems.random_state(s, 9)
    n, nu = s.nQ, s.nu
    for force in s.forces:
        assert isinstance(force, AffineForce)
        for name, shape, attr, first in (('f_dqdq_array', (n, n, n), 'q', 'f_dq_array'),
                                         ('f_ddqdq_array', (n, n, n), 'q', 'f_ddq_array'),
                                         ('f_ddqddq_array', (n, n, n), 'dq', 'f_ddq_array'),
                                         ('f_dudq_array', (n, nu, n), 'q', 'f_du_array'),
                                         ('f_duddq_array', (n, nu, n), 'dq', 'f_du_array'),
                                         ('f_dudu_array', (n, nu, nu), 'u', 'f_du_array')):
            arr = getattr(force, name)()
            assert arr.shape == shape and not arr.any(), name
            np.testing.assert_allclose(arr, fd(s, attr, getattr(force, first)), atol=1e-9)
        # the arrays are fresh: writing into one does not change the next
        a = force.f_dqdq_array()
        a[...] = 1.0
        assert not force.f_dqdq_array().any()


def test_base_classes_name_missing_methods():
    class OnlyF(Force):
        def f(self, q):
            return 0.0

    class OnlyV(Potential):
        def V(self):
            return 0.0

    s = systems.double_pendulum()
    force, pot = OnlyF(s, name='of'), OnlyV(s, name='ov')
    with pytest.raises(NotImplementedError, match=r'OnlyF does not implement f_dqdq\(\)'):
        force.f_dqdq_array()
    with pytest.raises(NotImplementedError, match=r'OnlyF does not implement f_dudu\(\)'):
        force.f_dudu(0, 0, 0)
    with pytest.raises(NotImplementedError, match=r'OnlyV does not implement V_dqdqdq\(\)'):
        pot.V_dqdqdq_array()
    # the helper that builds these errors (ros_vi.mechanics._derivcheck.abstract)
    err = abstract(force, 'f_ddq')
    assert isinstance(err, NotImplementedError)
    assert str(err) == 'OnlyF does not implement f_ddq()'


# ====================================================================== potential.py
class CubicPotential(Potential):
    """V = a sin(q0) q1^2 + b q0^3 through the per-entry methods only."""

    def __init__(self, system, a, b):
        self.a, self.b = a, b
        Potential.__init__(self, system)

    def V(self):
        q = self._system.data.q
        return self.a * np.sin(q[0]) * q[1] ** 2 + self.b * q[0] ** 3

    def _ij(self, *cs):
        return sorted(self._system.get_config(c).index for c in cs)

    def V_dq(self, q1):
        q = self._system.data.q
        i, = self._ij(q1)
        return (self.a * np.cos(q[0]) * q[1] ** 2 + 3 * self.b * q[0] ** 2 if i == 0
                else 2 * self.a * np.sin(q[0]) * q[1])

    def V_dqdq(self, q1, q2):
        q = self._system.data.q
        ij = self._ij(q1, q2)
        if ij == [0, 0]:
            return -self.a * np.sin(q[0]) * q[1] ** 2 + 6 * self.b * q[0]
        if ij == [0, 1]:
            return 2 * self.a * np.cos(q[0]) * q[1]
        return 2 * self.a * np.sin(q[0])

    def V_dqdqdq(self, q1, q2, q3):
        q = self._system.data.q
        ijk = self._ij(q1, q2, q3)
        if ijk == [0, 0, 0]:
            return -self.a * np.cos(q[0]) * q[1] ** 2 + 6 * self.b
        if ijk == [0, 0, 1]:
            return -2 * self.a * np.sin(q[0]) * q[1]
        if ijk == [0, 1, 1]:
            return 2 * self.a * np.cos(q[0])
        return 0.0


def test_potential_V_dqdqdq_array_from_the_entry_methods():
    s = systems.double_pendulum(springs=False)
    pot = CubicPotential(s, a=1.3, b=-0.7)
    s.q = [0.6, -1.1]
    V3 = pot.V_dqdqdq_array()
    assert V3.shape == (2, 2, 2)
    assert_close(V3, fd(s, 'q', pot.V_dqdq_array), what='V_dqdqdq_array')
    # closed form of one entry, and full symmetry
    assert V3[0, 1, 1] == pytest.approx(2 * 1.3 * np.cos(0.6), rel=1e-14)
    for perm in ((1, 0, 2), (2, 1, 0), (0, 2, 1)):
        np.testing.assert_array_equal(V3, V3.transpose(perm))
    assert pot.validate_V_dqdqdq()


def test_config_spring_third_derivative_array_is_zero():
    s = systems.double_pendulum()
    s.q = [0.4, -0.2]
    for spring in [p for p in s.potentials if isinstance(p, trep.potentials.ConfigSpring)]:
        V3 = spring.V_dqdqdq_array()
        assert V3.shape == (2, 2, 2) and not V3.any()
        np.testing.assert_allclose(V3, fd(s, 'q', spring.V_dqdq_array), atol=1e-9)
        # and V_dqdq_array is k at its config: V is the quadratic 1/2 k (q - q0)^2
        i = spring.config.index
        assert spring.V_dqdq_array()[i, i] == spring.k


# ====================================================================== forces, potentials
def test_config_force_finput():
    s = systems.double_pendulum()
    cf = [f for f in s.forces if isinstance(f, trep.forces.ConfigForce)][0]
    inp = cf.finput
    assert isinstance(inp, trep.Input)
    assert inp.name == 'torque1' and inp is s.get_input('torque1') and inp.force is cf
    s.u = [2.5]
    assert inp.u == 2.5
    F = cf.f_array()
    np.testing.assert_array_equal(F, np.eye(2)[cf.config.index] * 2.5)
    Fu = cf.f_du_array()
    assert Fu[cf.config.index, inp.index] == 1.0 and Fu.sum() == 1.0
    assert cf.f(cf.config) == 2.5 and cf.f('theta2') == 0.0
    with pytest.raises(AttributeError):
        cf.finput = None


def test_damping_set_coefficient_and_coefficient_vector():
    s = systems.double_pendulum()                       # default 0.1, theta2 0.3
    damping = [f for f in s.forces if isinstance(f, trep.forces.Damping)][0]
    np.testing.assert_array_equal(damping.coefficient_vector(), [0.1, 0.3])
    s.dq = [0.5, -2.0]
    v = s.parameter_version
    damping.set_damping_coefficient('theta1', 0.7)
    assert s.parameter_version > v
    c = damping.coefficient_vector()
    np.testing.assert_array_equal(c, [0.7, 0.3])
    np.testing.assert_array_equal(damping.f_array(), -c * s.dq)
    np.testing.assert_array_equal(damping.f_ddq_array(), np.diag(-c))
    assert damping.get_damping_coefficient(s.get_config('theta1')) == 0.7
    c[:] = 5.0                                           # a copy
    np.testing.assert_array_equal(damping.coefficient_vector(), [0.7, 0.3])
    damping.set_damping_coefficient(1, None)             # back to the default
    np.testing.assert_array_equal(damping.coefficient_vector(), [0.7, 0.1])
    with pytest.raises(ValueError, match='finite'):
        damping.set_damping_coefficient('theta2', np.inf)


def test_changed_damping_reaches_the_compiled_step():
    """A coefficient changed after the integrator was built is used by the fast path
    exactly as by the general path."""
    results = []
    for fast in (True, False):
        s = systems.double_pendulum()
        damping = [f for f in s.forces if isinstance(f, trep.forces.Damping)][0]
        mvi = trep.MidpointVI(s, tolerance=1e-12, fast=fast)
        assert mvi.compiled == fast
        mvi.initialize_from_state(0.0, [0.4, -0.2], [0.0, 0.1])
        mvi.step(0.01, [0.2])
        damping.set_damping_coefficient('theta1', 3.0)
        for k in range(2, 6):
            mvi.step(0.01 * k, [0.2])
        results.append(np.concatenate([mvi.q2, mvi.p2]))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)
    # and it made a difference
    s = systems.double_pendulum()
    mvi = trep.MidpointVI(s, tolerance=1e-12)
    mvi.initialize_from_state(0.0, [0.4, -0.2], [0.0, 0.1])
    for k in range(1, 6):
        mvi.step(0.01 * k, [0.2])
    assert not np.allclose(results[0], np.concatenate([mvi.q2, mvi.p2]), atol=1e-8)


def test_smooth_coulomb_friction_velocity_scale():
    s = systems.double_pendulum(dampers=False)
    fr = trep.forces.SmoothCoulombFriction(s, {'theta1': 2.0}, velocity_scale=0.05)
    assert fr.velocity_scale == 0.05
    s.dq = [0.05, 1.0]                         # dq = v_s on theta1
    np.testing.assert_allclose(fr.f_array(), [-2.0 * np.tanh(1.0), 0.0], rtol=1e-14)
    s.dq = [0.0, 0.0]                          # near rest: viscous with c = f / v_s
    assert fr.f_ddq('theta1', 'theta1') == pytest.approx(-2.0 / 0.05, rel=1e-14)
    s.dq = [10.0, 0.0]                         # |dq| >> v_s: Coulomb
    assert fr.f('theta1') == pytest.approx(-2.0, rel=1e-12)
    with pytest.raises(AttributeError):
        fr.velocity_scale = 1.0
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match='velocity_scale'):
            trep.forces.SmoothCoulombFriction(s, {'theta1': 1.0}, velocity_scale=bad)


def test_gravity_kernel_gravity_is_what_the_kernel_evaluates():
    s = systems.double_pendulum()
    g1 = [p for p in s.potentials if isinstance(p, trep.potentials.Gravity)][0]
    np.testing.assert_array_equal(g1.kernel_gravity, [0.0, 0.0, -9.8])
    g2 = trep.potentials.Gravity(s, (0.5, -1.0, 0.0))
    np.testing.assert_array_equal(s.model.gravity, [0.5, -1.0, -9.8])   # the sum
    for p in s.potentials:
        if not isinstance(p, trep.potentials.Gravity):
            assert p.kernel_gravity is None
    s.q = [0.7, -0.4]
    assert s.potential_energy() == pytest.approx(
        g1.V() + g2.V() + sum(p.V() for p in s.general_potentials), rel=1e-13)
    g2.gravity = (0.0, 2.0, 0.0)
    np.testing.assert_array_equal(g2.kernel_gravity, [0.0, 2.0, 0.0])
    np.testing.assert_array_equal(s.model.gravity, [0.0, 2.0, -9.8])


# ====================================================================== fast_step.py
def test_fast_stepper_for_system_only_for_built_in_terms():
    assert isinstance(FastStepper.for_system(systems.kinematic_system()), FastStepper)
    assert isinstance(FastStepper.for_system(systems.double_pendulum()), FastStepper)
    s = systems.double_pendulum()
    trep.potentials.LinearSpring(s, s.world_frame, 'mass2', k=1.0)
    assert FastStepper.for_system(s) is None
    s = systems.double_pendulum()
    trep.forces.LinearDamper(s, s.world_frame, 'mass2', 1.0)
    assert FastStepper.for_system(s) is None
    # built-in constraints are compiled; a user-written one is not
    s = systems.double_pendulum()
    trep.constraints.Distance(s, 'mass2', s.world_frame, 1.5)
    stepper = FastStepper.for_system(s)
    assert isinstance(stepper, FastStepper) and stepper.constrained
    assert not FastStepper.for_system(systems.double_pendulum()).constrained
    HeightLimit(s, 'theta1')
    assert FastStepper.for_system(s) is None


class HeightLimit(trep.Constraint):
    """A user-written constraint h = q_c - 0.1 (not a built-in kind)."""

    def __init__(self, system, config):
        self._c = system.get_config(config)
        trep.Constraint.__init__(self, system, 'height')

    def h(self):
        return self._c.q - 0.1

    def h_dq(self, q1):
        return 1.0 if self.system.get_config(q1) is self._c else 0.0

    def h_dqdq(self, q1, q2):
        return 0.0


def _general(s, q0, p0, steps):
    mvi = trep.MidpointVI(s, tolerance=1e-12, fast=False)
    mvi.initialize_from_state(0.0, q0, p0)
    for t2, u, k in steps:
        mvi.step(t2, u, k)
    return mvi


def test_fast_stepper_step_and_state_views_match_the_general_path():
    """FastStepper.step (step_packed) against MidpointVI's general path."""
    s = systems.kinematic_system()
    st = FastStepper(s)
    q1, p1, q2, p2, u1 = st.state_views()
    for a, b in zip(st.state_views(), (q1, p1, q2, p2, u1)):   # the same buffers each call
        assert np.shares_memory(a, b)
    q0, p0 = np.array([0.4, -0.3, 0.1, 0.2]), np.array([0.05, -0.1])
    q2[:], p2[:] = q0, p0
    st.reset_history([0.0], [q0])
    steps = [(0.01, [0.3], [0.12, 0.21]), (0.02, [-0.2], [0.15, 0.23])]
    t1 = 0.0
    for t2, u, k in steps:
        st.u_in[:], st.k_in[:] = u, k
        q_prev, p_prev = q2.copy(), p2.copy()
        status, iterations, rnorm = st.step(t1, t2, 1e-12, 50)
        assert status == 0 and iterations >= 1 and rnorm <= 1e-12
        # the old current state became the previous one
        np.testing.assert_array_equal(q1, q_prev)
        np.testing.assert_array_equal(p1, p_prev)
        np.testing.assert_array_equal(u1, u)
        np.testing.assert_array_equal(q2[s.nQd:], k)
        np.testing.assert_allclose(st.qm, 0.5 * (q1 + q2), rtol=1e-14)
        np.testing.assert_allclose(st.v, (q2 - q1) / (t2 - t1), rtol=1e-9)
        t1 = t2
    ref = _general(systems.kinematic_system(), q0, p0, steps)
    np.testing.assert_allclose(q2, ref.q2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(p2, ref.p2, rtol=1e-10, atol=1e-12)
    # derivatives (derivatives_packed) at the last step, against the general path's
    Zq, Zp = st.derivatives(0.01, 0.02)
    np.testing.assert_allclose(Zq, np.hstack([ref.q2_dq1(), ref.q2_dp1(), ref.q2_du1(),
                                              ref.q2_dk2()]), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(Zp, np.hstack([ref.p2_dq1(), ref.p2_dp1(), ref.p2_du1(),
                                              ref.p2_dk2()]), rtol=1e-8, atol=1e-10)


def test_fast_stepper_derivatives_by_finite_differences():
    s = systems.double_pendulum()
    st = FastStepper(s)
    q1, p1, q2, p2, u1 = st.state_views()
    x0 = np.array([0.4, -0.3, 0.2, -0.1, 0.5])           # (q1, p1, u1); nk = 0

    def step(x):
        st.reset_history()
        q2[:], p2[:] = x[:2], x[2:4]
        st.u_in[:] = x[4:]
        status = st.step(0.0, 0.05, 1e-13, 50)[0]
        assert status == 0
        return np.concatenate([q2, p2])

    step(x0)
    Zq, Zp = st.derivatives(0.0, 0.05)
    cols = []
    for i in range(x0.size):
        e = np.zeros(x0.size)
        e[i] = 1e-6
        cols.append((step(x0 + e) - step(x0 - e)) / 2e-6)
    approx = np.array(cols).T
    assert_close(np.vstack([Zq, Zp]), approx, rel=1e-6, what='fast derivatives')


def test_fast_stepper_reset_history_seeds_the_predictor():
    """A history of the true trajectory makes the predictor's guess better (fewer Newton
    iterations) without changing the converged result."""
    s = systems.double_pendulum(springs=False, dampers=False)
    dt = 0.01
    run = FastStepper(s)
    q1, p1, q2, p2, u1 = run.state_views()
    q2[:], p2[:] = [1.2, -0.8], [0.0, 0.0]
    run.reset_history([0.0], [q2.copy()])
    times, configs = [0.0], [q2.copy()]
    for k in range(1, 5):
        run.step((k - 1) * dt, k * dt, 1e-12, 50)
        times.append(k * dt)
        configs.append(q2.copy())
    state = q2.copy(), p2.copy()
    result = {}
    for name, hist in (('none', ([], [])), ('seeded', (times, configs))):
        st = FastStepper(s)
        a1, b1, a2, b2, c1 = st.state_views()
        a2[:], b2[:] = state
        st.reset_history(*hist)
        status, iterations, _ = st.step(4 * dt, 5 * dt, 1e-12, 50)
        assert status == 0
        result[name] = (iterations, a2.copy())
    assert result['seeded'][0] < result['none'][0]
    np.testing.assert_allclose(result['seeded'][1], result['none'][1], atol=1e-11)
