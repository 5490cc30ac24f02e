"""trep API members: ``trep.potentials.Potential``, ``NonlinearConfigSpring.get_config`` /
``get_spline``, ``SpatialWrench.get_frame`` (and its get/set accessors), and
``PointToPoint1D`` as a constraint of its own (h and derivatives, index, tolerance).

Derivatives are compared with central differences taken through the public state setters
(``Config.q``); returned values with closed forms.
"""
import itertools

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import rx, ry, rz, tx, ty, tz

DELTA = 1e-6


def central(system, config, func, delta=DELTA):
    """d func() / d config.q by central differences (state restored afterwards)."""
    base = config.q
    config.q = base + delta
    fp = np.asarray(func(), dtype=float)
    config.q = base - delta
    fm = np.asarray(func(), dtype=float)
    config.q = base
    return (fp - fm) / (2 * delta)


# ---------------------------------------------------------------------- Potential
def test_potential_base_class_reachable_as_in_trep():
    from ros_vi.potentials import Potential
    assert Potential is trep.Potential is trep.potentials.Potential
    assert Potential is trep.mechanics.potential.Potential
    assert 'Potential' in trep.potentials.__all__
    for cls in (trep.potentials.Gravity, trep.potentials.ConfigSpring,
                trep.potentials.LinearSpring, trep.potentials.NonlinearConfigSpring):
        assert issubclass(cls, Potential)


class QuarticWell(trep.potentials.Potential):
    """User potential V = k/4 (q - q0)^4 derived from trep.potentials.Potential."""

    def __init__(self, system, config, k, q0, name=None):
        self.config = system.get_config(config)
        self.k, self.q0 = k, q0
        trep.potentials.Potential.__init__(self, system, name)

    def _on(self, *qs):
        return all(self.system.get_config(q) is self.config for q in qs)

    def V(self):
        return 0.25 * self.k * (self.config.q - self.q0) ** 4

    def V_dq(self, q1):
        return self.k * (self.config.q - self.q0) ** 3 if self._on(q1) else 0.0

    def V_dqdq(self, q1, q2):
        return 3 * self.k * (self.config.q - self.q0) ** 2 if self._on(q1, q2) else 0.0

    def V_dqdqdq(self, q1, q2, q3):
        return 6 * self.k * (self.config.q - self.q0) if self._on(q1, q2, q3) else 0.0


def test_user_potential_from_trep_potentials_drives_the_dynamics():
    s = trep.System()
    s.import_frames([tx('x', mass=2.0)])
    well = QuarticWell(s, 'x', k=3.0, q0=0.2, name='well')
    assert s.get_potential('well') is well and list(s.potentials) == [well]
    s.q = [0.7]
    s.dq = [0.0]
    # m ddx = -k (x - q0)^3
    np.testing.assert_allclose(s.f(), [-3.0 * 0.5 ** 3 / 2.0], rtol=1e-12)
    assert well.validate_V_dq() and well.validate_V_dqdq() and well.validate_V_dqdqdq()
    # the midpoint VI conserves its energy to O(dt^2) with no drift
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_state(0.0, [0.7], [0.0])
    energies = []
    for _ in range(400):
        mvi.step(mvi.t2 + 0.01)
        s.set_state(q=0.5 * (mvi.q1 + mvi.q2), dq=(mvi.q2 - mvi.q1) / 0.01)
        energies.append(s.total_energy())
    e0 = 0.25 * 3.0 * 0.5 ** 4
    assert max(abs(e - e0) for e in energies) < 1e-3 * e0


# ---------------------------------------------------------------------- NonlinearConfigSpring
def test_nonlinear_config_spring_accessors_and_derivatives():
    s = trep.System()
    s.import_frames([rx('theta'), [tz(-1.0, mass=1.0)], tx('x', mass=1.0)])
    spline = trep.Spline([(-1.0, -2.0, 0.0), (0.0, 0.0, 3.0), (1.0, 1.0, 0.0), (2.0, 5.0)])
    spring = trep.potentials.NonlinearConfigSpring(s, 'theta', spline, m=1.5, b=0.1,
                                                   name='nl')
    assert spring.get_config() is spring.config is s.get_config('theta')
    assert spring.get_spline() is spring.spline is spline
    theta, x = s.get_config('theta'), s.get_config('x')
    for value in (-0.5, 0.2, 0.55):    # spline arguments off the knots (C2 only between them)
        s.q = {'theta': value, 'x': 0.3}
        arg = 1.5 * value + 0.1
        # closed forms: V_dq = f(m q + b), V_dqdq = m f'(m q + b)
        assert spring.V_dq(theta) == pytest.approx(spline.y(arg), abs=1e-14)
        assert spring.V_dq(x) == 0.0
        assert spring.V_dqdq(theta, theta) == pytest.approx(1.5 * spline.dy(arg), abs=1e-13)
        # and each derivative against differences of the one below (V from the integral)
        assert spring.V_dq(theta) == pytest.approx(central(s, theta, spring.V), rel=1e-7)
        assert spring.V_dqdq(theta, theta) == pytest.approx(
            central(s, theta, lambda: spring.V_dq(theta)), rel=1e-6, abs=1e-8)
        assert spring.V_dqdqdq(theta, theta, theta) == pytest.approx(
            central(s, theta, lambda: spring.V_dqdq(theta, theta)), rel=1e-5, abs=1e-6)


# ---------------------------------------------------------------------- SpatialWrench
def wrench_system():
    """Cart x, then a pendulum th about an x axis offset 0.5 m along y, bob 1 m below."""
    s = trep.System()
    s.import_frames([tx('x', mass=1.0), [ty(0.5), [
        rx('th'), [tz(-1.0, name='bob', mass=1.0), [
            rz('psi', name='tip', mass=[0.1, 0.1, 0.1, 0.1])]]]]])
    return s


def test_spatial_wrench_get_frame_and_accessors():
    s = wrench_system()
    w = trep.forces.SpatialWrench(s, 'bob', (1.0, 'fy', 'fz', 'tx', 0.0, 0.0), name='sw')
    assert w.get_frame() is w.frame is s.get_frame('bob')
    got = w.get_wrench()
    assert got[0] == 1.0 and got[4] == 0.0 and got[5] == 0.0
    assert [g.name for g in got[1:4]] == ['fy', 'fz', 'tx']
    w.set_wrench_val([2.0, 3.0, -4.0, 0.7, 0.0, 0.25])
    assert w.get_wrench_val() == [2.0, 3.0, -4.0, 0.7, 0.0, 0.25]
    assert list(w.wrench_val) == w.get_wrench_val()
    assert s.get_input('fz').u == -4.0


def test_spatial_wrench_generalized_forces_closed_form():
    """World wrench (f, tau) at the world origin: F_x = f_x (translation along x);
    F_th = tau_x - 0.5 f_z (rotation about the world line through (x, 0.5, 0) along x,
    spatial twist (v, w) = ((0, 0, -0.5), (1, 0, 0)), independent of x and th)."""
    s = wrench_system()
    w = trep.forces.SpatialWrench(s, 'bob', ('fx', 'fy', 'fz', 'tx', 'ty', 'tz'))
    rng = np.random.default_rng(4)
    x, th = s.get_config('x'), s.get_config('th')
    for _ in range(3):
        s.q = rng.uniform(-1, 1, s.nQ)
        s.u = rng.uniform(-2, 2, s.nu)
        fx, fy, fz, tx_, ty_, tz_ = s.u
        assert w.f(x) == pytest.approx(fx, abs=1e-13)
        assert w.f(th) == pytest.approx(tx_ - 0.5 * fz, abs=1e-13)
        assert w.f_dq(th, x) == pytest.approx(0.0, abs=1e-13)
        assert w.f_dq(th, th) == pytest.approx(0.0, abs=1e-13)
        for q in s.configs:
            for q1 in s.configs:
                assert w.f_dq(q, q1) == pytest.approx(
                    central(s, q1, lambda: w.f(q)), abs=1e-8)
        assert w.validate_f_dq() and w.validate_f_dqdq() and w.validate_f_du()


# ---------------------------------------------------------------------- PointToPoint1D
def p2p_system():
    s = trep.System()
    s.import_frames([
        rz('a', name='A'), [tx(0.7), [ry('b', name='B', mass=[1.0, 0.1, 0.2, 0.1]), [
            tz(-0.5, name='Bt', mass=1.0), [rx('c'), [ty(0.4, name='D', mass=0.5)]]]]],
        tx('e', name='E', mass=0.5), [rx('f'), [tz(0.3, name='F', mass=0.4)]],
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    return s


def test_point_to_point_1d_is_a_constraint_with_trep_members():
    s = p2p_system()
    d = trep.constraints.Distance(s, 'D', 'F', 0.9, name='dist')
    pz = trep.constraints.PointToPoint1D(s, 'z', 'D', 'F', name='pz')
    px = trep.constraints.PointToPoint1D(s, 'X', 'Bt', 'E')
    assert isinstance(pz, trep.Constraint)
    assert list(s.constraints) == [d, pz, px]
    assert (d.index, pz.index, px.index) == (0, 1, 2)
    assert s.get_constraint('pz') is pz and pz.name == 'pz'
    assert pz.axis == 2 and px.axis == 0
    assert pz.frame1 is s.get_frame('D') and pz.frame2 is s.get_frame('F')
    assert pz.tolerance == 1e-10
    pz.tolerance = 1e-6
    assert pz.tolerance == 1e-6
    # also reads as a one-element group, like PointToPoint2D/3D's results
    assert len(pz) == 1 and list(pz) == [pz] and pz[0] is pz and pz.constraints == (pz,)
    with pytest.raises(ValueError, match='axis'):
        trep.constraints.PointToPoint1D(s, 'w', 'D', 'F')


def test_point_to_point_1d_h_and_derivatives():
    s = p2p_system()
    pz = trep.constraints.PointToPoint1D(s, 'z', 'D', 'F', name='pz')
    D, F = s.get_frame('D'), s.get_frame('F')
    rng = np.random.default_rng(11)
    configs = s.configs
    for _ in range(2):
        s.q = rng.uniform(-1.2, 1.2, s.nQ)
        assert pz.h() == pytest.approx(D.p()[2] - F.p()[2], abs=1e-14)
        assert pz.get_actual_distance() == pytest.approx(
            np.linalg.norm(D.p()[:3] - F.p()[:3]), abs=1e-14)
        for a in configs:
            assert pz.h_dq(a) == pytest.approx(central(s, a, pz.h), abs=1e-8)
            # closed form: the z component of dp/dq
            assert pz.h_dq(a) == pytest.approx(D.p_dq(a)[2] - F.p_dq(a)[2], abs=1e-13)
        for a, b in itertools.product(configs, repeat=2):
            assert pz.h_dqdq(a, b) == pytest.approx(
                central(s, b, lambda: pz.h_dq(a)), abs=1e-7)
        for a, b, c in itertools.product(configs, repeat=3):
            assert pz.h_dqdqdq(a, b, c) == pytest.approx(
                central(s, c, lambda: pz.h_dqdq(a, b)), abs=1e-7)
        for a, b, c, e in itertools.product(configs, repeat=4):
            assert pz.h_dqdqdqdq(a, b, c, e) == pytest.approx(
                central(s, e, lambda: pz.h_dqdqdq(a, b, c)), abs=1e-6)
        assert pz.validate_h_dq() and pz.validate_h_dqdq() and pz.validate_h_dqdqdq()
        assert pz.validate_h_dqdqdqdq()


def test_point_to_point_1d_holds_under_the_integrator():
    s = p2p_system()
    pz = trep.constraints.PointToPoint1D(s, 'z', 'D', 'F', name='pz')
    s.q = [0.3, 0.2, -0.4, 0.1, 0.5]
    s.satisfy_constraints()
    assert abs(pz.h()) < pz.tolerance
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_configs(0.0, s.q, 0.01, s.q)
    for _ in range(100):
        mvi.step(mvi.t2 + 0.01)
        s.q = mvi.q2
        assert abs(pz.h()) < 1e-9
    assert mvi.lambda1.shape == (1,)
