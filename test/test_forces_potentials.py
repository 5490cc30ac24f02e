"""LinearSpring, NonlinearConfigSpring, LinearDamper and the Body/Hybrid/Spatial wrenches.

Every derivative is checked with the built-in validate_* methods and with independent
central differences through the public API; the values themselves are checked against
independent formulas (frame positions, finite-difference twists of Frame.g()), physical
equivalences and simulations.
"""
import numpy as np
import pytest

import ros_vi as trep
from ros_vi import const_se3, const_txyz, rx, ry, rz, tx, ty, tz


# ---------------------------------------------------------------------------- helpers
def rot(axis, angle):
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def se3(R, p):
    g = np.eye(4)
    g[:3, :3] = R
    g[:3, 3] = p
    return g


def two_pendulums(gravity=False):
    s = trep.System()
    s.import_frames([
        ry('theta1'), [tz(2, mass=1, name='pend1')],
        tx(1), [ry('theta2'), [tz(2, mass=1, name='pend2')]],
    ])
    if gravity:
        trep.potentials.Gravity(s, (0, 0, -9.8))
    return s, ('pend1', 'pend2')


def chain3d():
    s = trep.System()
    T1 = se3(rot([1, 1, 0], 0.7), [0.3, -0.2, 0.5])
    T2 = se3(rot([0.2, -1, 0.4], 1.1), [0.1, 0.4, -0.3])
    s.import_frames([
        rz('a'), [
            const_se3(T1, name='off1'), [
                rx('b'), [
                    ty('c', mass=0.5), [
                        ry('d'), [const_se3(T2, name='tip', mass=[1, 0.1, 0.2, 0.3])]]]]],
        tx('k', kinematic=True), [ry('e'), [tz(0.5, name='side', mass=1)]],
    ])
    return s, ('tip', 'side')


SYSTEMS = [two_pendulums, chain3d]


def random_state(s, rng):
    s.q = rng.uniform(-1.2, 1.2, s.nQ)
    s.dq = rng.normal(size=s.nQ)
    if s.nu:
        s.u = rng.normal(size=s.nu)


def fd(s, fn, attr='q', h=1e-6):
    """Central differences of fn() in every component of s.<attr>; derivative index last."""
    base = np.array(getattr(s, attr))
    cols = []
    for i in range(base.size):
        x = base.copy()
        x[i] += h
        setattr(s, attr, x)
        fp = np.asarray(fn(), dtype=float)
        x[i] -= 2 * h
        setattr(s, attr, x)
        fm = np.asarray(fn(), dtype=float)
        cols.append((fp - fm) / (2 * h))
    setattr(s, attr, base)
    if not cols:
        return np.zeros(np.asarray(fn()).shape + (0,))
    return np.stack(cols, axis=-1)


def table(f, *groups):
    """Array of f(*items) over the cartesian product of item groups."""
    if len(groups) == 1:
        return np.array([f(a) for a in groups[0]], dtype=float)
    return np.array([table(lambda *rest, a=a: f(a, *rest), *groups[1:]) for a in groups[0]],
                    dtype=float).reshape([len(g) for g in groups])


def check_potential(pot, s):
    c = s.configs
    assert pot.validate_V_dq(verbose=True)
    assert pot.validate_V_dqdq(verbose=True)
    assert pot.validate_V_dqdqdq(verbose=True)
    V1 = table(pot.V_dq, c)
    V2 = table(pot.V_dqdq, c, c)
    V3 = table(pot.V_dqdqdq, c, c, c)
    np.testing.assert_allclose(V1, fd(s, pot.V), atol=2e-6)
    np.testing.assert_allclose(V2, fd(s, pot.V_dq_array), atol=2e-5)
    np.testing.assert_allclose(V3, fd(s, pot.V_dqdq_array), atol=2e-4)
    np.testing.assert_allclose(pot.V_dq_array(), V1, atol=1e-14)
    np.testing.assert_allclose(pot.V_dqdq_array(), V2, atol=1e-14)
    np.testing.assert_allclose(V2, V2.T, atol=1e-10)


def check_force(force, s):
    for name in ('dq', 'ddq', 'du', 'dqdq', 'ddqdq', 'ddqddq', 'dudq', 'duddq', 'dudu'):
        assert getattr(force, 'validate_f_' + name)(verbose=True), name
    c, u = s.configs, s.inputs
    F = table(force.f, c)
    F_q = table(force.f_dq, c, c)
    F_dq = table(force.f_ddq, c, c)
    F_u = table(force.f_du, c, u) if u else np.zeros((len(c), 0))
    # whole-array hooks equal the per-entry methods
    np.testing.assert_allclose(force.f_array(), F, atol=1e-13)
    np.testing.assert_allclose(force.f_dq_array(), F_q, atol=1e-13)
    np.testing.assert_allclose(force.f_ddq_array(), F_dq, atol=1e-13)
    np.testing.assert_allclose(force.f_du_array(), F_u, atol=1e-13)
    # independent central differences, [output, input] indexing
    np.testing.assert_allclose(F_q, fd(s, force.f_array), atol=2e-6)
    np.testing.assert_allclose(F_dq, fd(s, force.f_array, 'dq'), atol=2e-6)
    np.testing.assert_allclose(F_u, fd(s, force.f_array, 'u'), atol=2e-6)
    np.testing.assert_allclose(table(force.f_dqdq, c, c, c), fd(s, force.f_dq_array),
                               atol=2e-5)
    np.testing.assert_allclose(table(force.f_ddqdq, c, c, c), fd(s, force.f_ddq_array),
                               atol=2e-5)
    np.testing.assert_allclose(table(force.f_ddqddq, c, c, c),
                               fd(s, force.f_ddq_array, 'dq'), atol=2e-5)
    if u:
        np.testing.assert_allclose(table(force.f_dudq, c, u, c), fd(s, force.f_du_array),
                                   atol=2e-5)
        np.testing.assert_allclose(table(force.f_duddq, c, u, c),
                                   fd(s, force.f_du_array, 'dq'), atol=2e-5)
        np.testing.assert_allclose(table(force.f_dudu, c, u, u),
                                   fd(s, force.f_du_array, 'u'), atol=2e-5)
    return F


# ---------------------------------------------------------------------------- LinearSpring
@pytest.mark.parametrize('build', SYSTEMS)
@pytest.mark.parametrize('x0', [0.0, 0.7])
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_linear_spring_derivatives(build, x0, seed):
    s, (f1, f2) = build()
    rng = np.random.default_rng(seed)
    spring = trep.potentials.LinearSpring(s, f1, f2, k=13.0, x0=x0)
    random_state(s, rng)
    d = np.linalg.norm(s.get_frame(f1).p()[:3] - s.get_frame(f2).p()[:3])
    assert spring.V() == pytest.approx(0.5 * 13.0 * (d - x0) ** 2, rel=1e-12, abs=1e-14)
    check_potential(spring, s)


def test_linear_spring_properties():
    s, (f1, f2) = two_pendulums()
    spring = trep.potentials.LinearSpring(s, f1, f2, k=20, x0=0.9, name='spr')
    assert spring.frame1 is s.get_frame('pend1') and spring.frame2 is s.get_frame('pend2')
    with pytest.raises(AttributeError):
        spring.frame1 = s.get_frame('pend2')
    assert spring.k == 20.0 and spring.x0 == 0.9
    assert s.get_potential('spr') is spring
    s.q = [0.1, -0.2]
    e0 = s.potential_energy()
    spring.k = 40
    assert s.potential_energy() == pytest.approx(2 * e0)


def test_linear_spring_harmonic_oscillator():
    """trep's 1-D example: a block on tx('x') tied to the world origin."""
    s = trep.System()
    s.import_frames([tx('x', mass=1, name='block')])
    k, x0, m = 20.0, 1.0, 1.0
    trep.potentials.LinearSpring(s, 'World', 'block', k=k, x0=x0)
    for x in (0.5, 1.0, 1.7, 3.0, -0.4, -2.5):
        s.q = x
        s.dq = 0.3
        expected = -k * (abs(x) - x0) * np.sign(x) / m
        assert s.f()[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert s.potential_energy() == pytest.approx(0.5 * k * (abs(x) - x0) ** 2)


def test_linear_spring_coincident_points():
    s = trep.System()
    s.import_frames([tx('x', mass=1, name='block'), ty('y', mass=1, name='other')])
    s.q = 0.0
    smooth = trep.potentials.LinearSpring(s, 'block', 'other', k=5.0, x0=0.0)
    # x0 = 0: 1/2 k |p1 - p2|^2 is smooth and has a well-defined zero force there
    assert smooth.V() == 0.0
    np.testing.assert_allclose(smooth.V_dq_array(), 0.0)
    np.testing.assert_allclose(smooth.V_dqdq_array(), 5.0 * np.eye(2))
    check_potential(smooth, s)
    bad = trep.potentials.LinearSpring(s, 'block', 'other', k=5.0, x0=0.5)
    assert bad.V() == pytest.approx(0.625)
    with pytest.raises(ValueError, match='zero length'):
        bad.V_dq('x')


def test_linear_spring_bad_input():
    s, _ = two_pendulums()
    with pytest.raises(KeyError, match='nosuchframe'):
        trep.potentials.LinearSpring(s, 'pend1', 'nosuchframe', k=1.0)
    with pytest.raises(KeyError, match='missing1'):
        trep.potentials.LinearSpring(s, 'missing1', 'pend1', k=1.0)
    for bad in (np.inf, np.nan, -np.inf):
        with pytest.raises(ValueError, match='k must be finite'):
            trep.potentials.LinearSpring(s, 'pend1', 'pend2', k=bad)
    with pytest.raises(ValueError, match='x0'):
        trep.potentials.LinearSpring(s, 'pend1', 'pend2', k=1.0, x0=np.nan)
    spring = trep.potentials.LinearSpring(s, 'pend1', 'pend2', k=1.0)
    with pytest.raises(ValueError, match='k must be finite'):
        spring.k = float('inf')
    assert len(s.potentials) == 1   # failed constructions added nothing


# ---------------------------------------------------------------------- NonlinearConfigSpring
def test_nonlinear_spring_linear_spline_matches_config_spring():
    k, m, b = 7.0, 1.5, -0.6
    spline = trep.Spline([[-10.0, -10.0 * k], [0.0, 0.0], [10.0, 10.0 * k]])
    # F = -k (m q + b) = -(k m) (q - q0) with q0 = -b / m
    s1 = trep.System()
    s1.import_frames([rx('theta'), [tz(-1.0, mass=2.0)]])
    trep.potentials.Gravity(s1)
    nl = trep.potentials.NonlinearConfigSpring(s1, 'theta', spline, m=m, b=b)
    s2 = trep.System()
    s2.import_frames([rx('theta'), [tz(-1.0, mass=2.0)]])
    trep.potentials.Gravity(s2)
    cs = trep.potentials.ConfigSpring(s2, 'theta', k * m, q0=-b / m)
    for q in (-0.8, 0.0, 0.3, 1.4):
        s1.q = s2.q = q
        s1.dq = s2.dq = 0.4
        assert nl.V_dq('theta') == pytest.approx(cs.V_dq('theta'), rel=1e-12, abs=1e-12)
        assert nl.V_dqdq('theta', 'theta') == pytest.approx(k * m, rel=1e-12)
        assert nl.V_dqdqdq('theta', 'theta', 'theta') == pytest.approx(0.0, abs=1e-9)
        np.testing.assert_allclose(s1.f(), s2.f(), rtol=1e-12, atol=1e-12)
        # V is measured from q = 0
        s2.q = 0.0
        v0 = cs.V()
        s2.q = q
        assert nl.V() == pytest.approx(cs.V() - v0, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize('m, b', [(1.0, 0.0), (2.5, 0.3), (-0.7, 1.1), (0.0, 0.4)])
def test_nonlinear_spring_derivatives_and_energy(m, b):
    from scipy.integrate import quad
    s, _ = chain3d()
    spline = trep.Spline([[-2.0, 1.0], [-0.5, -0.3], [0.0, 0.2, 1.0], [0.8, 2.0],
                          [1.5, 0.5]])
    nl = trep.potentials.NonlinearConfigSpring(s, 'b', spline, m=m, b=b, name='nl')
    assert nl.config is s.get_config('b') and nl.spline is spline
    assert (nl.m, nl.b) == (m, b)
    rng = np.random.default_rng(5)
    for q in (-2.0, -0.3, 0.4, 2.2):        # includes extrapolation beyond the knots
        random_state(s, rng)
        s.get_config('b').q = q
        check_potential(nl, s)
        sval = m * q + b
        assert nl.V_dq('b') == pytest.approx(spline.y(sval), rel=1e-14)
        assert nl.V_dq('c') == 0.0 and nl.V_dqdq('b', 'c') == 0.0
        ref = quad(lambda t: spline.y(m * t + b), 0.0, q, epsabs=1e-13, epsrel=1e-13)[0]
        assert nl.V() == pytest.approx(ref, rel=1e-10, abs=1e-12)


def test_nonlinear_spring_bad_input():
    s, _ = two_pendulums()
    spline = trep.Spline([[0, 0], [1, 1]])
    with pytest.raises(KeyError, match='nope'):
        trep.potentials.NonlinearConfigSpring(s, 'nope', spline)
    with pytest.raises(TypeError, match='Spline'):
        trep.potentials.NonlinearConfigSpring(s, 'theta1', [[0, 0], [1, 1]])
    with pytest.raises(ValueError, match='m must be finite'):
        trep.potentials.NonlinearConfigSpring(s, 'theta1', spline, m=np.inf)


# ---------------------------------------------------------------------- LinearDamper
@pytest.mark.parametrize('build', SYSTEMS)
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_linear_damper(build, seed):
    s, (f1, f2) = build()
    damper = trep.forces.LinearDamper(s, f1, f2, c=0.8)
    trep.forces.ConfigForce(s, s.configs[0], 'u0')   # an input the damper ignores
    rng = np.random.default_rng(seed)
    random_state(s, rng)
    F = check_force(damper, s)
    # independent: F_i = -c xdot dx/dq_i from positions only
    p1, p2 = s.get_frame(f1), s.get_frame(f2)

    def dist():
        return np.linalg.norm(p1.p()[:3] - p2.p()[:3])
    dx = fd(s, dist)
    xdot = dx @ s.dq
    np.testing.assert_allclose(F, -0.8 * xdot * dx, atol=1e-7)
    # a damper only dissipates: power F . dq = -c xdot^2
    assert F @ s.dq == pytest.approx(-0.8 * xdot ** 2, rel=1e-6)
    assert damper.frame1 is p1 and damper.frame2 is p2 and damper.c == 0.8


def test_linear_damper_bad_input():
    s, _ = two_pendulums()
    with pytest.raises(KeyError, match='ghost'):
        trep.forces.LinearDamper(s, 'ghost', 'pend2', c=1.0)
    with pytest.raises(ValueError, match='c must be finite'):
        trep.forces.LinearDamper(s, 'pend1', 'pend2', c=np.nan)
    assert s.forces == ()


# ---------------------------------------------------------------------- wrenches
WRENCHES = [trep.forces.BodyWrench, trep.forces.HybridWrench, trep.forces.SpatialWrench]


def vee(T):
    """(v, w) of a 4x4 twist matrix, read from the upper blocks."""
    return np.array([T[0, 3], T[1, 3], T[2, 3], T[2, 1], T[0, 2], T[1, 0]])


def fd_twists(s, frame, kind, h=1e-6):
    """Twist of ``frame`` per unit dq_i for every config, from differences of Frame.g()."""
    g = frame.g()
    ginv = np.linalg.inv(g)
    out = []
    q = s.q
    for i in range(s.nQ):
        x = q.copy()
        x[i] += h
        s.q = x
        gp = frame.g()
        x[i] -= 2 * h
        s.q = x
        gm = frame.g()
        dg = (gp - gm) / (2 * h)
        if kind is trep.forces.BodyWrench:
            T = ginv @ dg
        elif kind is trep.forces.SpatialWrench:
            T = dg @ ginv
        else:
            T = np.zeros((4, 4))
            T[:3, :3] = dg[:3, :3] @ g[:3, :3].T
            T[:3, 3] = dg[:3, 3]
        out.append(vee(T))
    s.q = q
    return np.array(out)


@pytest.mark.parametrize('kind', WRENCHES)
@pytest.mark.parametrize('build', SYSTEMS)
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_wrench_derivatives_and_values(kind, build, seed):
    s, (frame, _) = build()
    wrench = kind(s, frame, (0.7, 'fy', -1.3, 'tx', 0.4, 'tz'), name='w')
    assert [type(x) for x in wrench.wrench] == [float, trep.Input, float, trep.Input, float,
                                                trep.Input]
    assert [i.name for i in s.inputs] == ['fy', 'tx', 'tz']
    assert all(i.force is wrench for i in s.inputs)
    rng = np.random.default_rng(seed)
    random_state(s, rng)
    F = check_force(wrench, s)
    w = np.array(wrench.wrench_val)
    assert w[1] == s.get_input('fy').u and w[5] == s.get_input('tz').u and w[2] == -1.3
    np.testing.assert_allclose(F, fd_twists(s, s.get_frame(frame), kind) @ w, atol=1e-7)


def test_wrench_consistency_between_frames():
    """One physical wrench expressed three ways gives the same generalized force."""
    s, (frame_name, _) = chain3d()
    rng = np.random.default_rng(11)
    random_state(s, rng)
    frame = s.get_frame(frame_name)
    g = frame.g()
    R, p = g[:3, :3], g[:3, 3]
    assert np.abs(R - np.eye(3)).max() > 0.3          # the frame's axes really are rotated
    fb, tb = np.array([0.4, -1.2, 0.9]), np.array([0.3, 0.5, -0.7])
    fh, th = R @ fb, R @ tb                            # world axes, at the frame origin
    fs, ts = fh, th + np.cross(p, fh)                  # world axes, about the world origin
    body = trep.forces.BodyWrench(s, frame, tuple(fb) + tuple(tb))
    hybrid = trep.forces.HybridWrench(s, frame, tuple(fh) + tuple(th))
    spatial = trep.forces.SpatialWrench(s, frame, tuple(fs) + tuple(ts))
    Fb = body.f_array()
    assert np.abs(Fb).max() > 0.1
    np.testing.assert_allclose(hybrid.f_array(), Fb, atol=1e-12)
    np.testing.assert_allclose(spatial.f_array(), Fb, atol=1e-12)


def test_pendulum_torque_configforce_vs_bodywrench():
    def pendulum():
        s = trep.System()
        s.import_frames([rx('theta'), [tz(-1.0, mass=1.0, name='bob')]])
        trep.potentials.Gravity(s)
        return s
    s1, s2 = pendulum(), pendulum()
    trep.forces.ConfigForce(s1, 'theta', 'torque')
    # a torque about the bob frame's x axis (parallel to the joint axis)
    trep.forces.BodyWrench(s2, 'bob', (0, 0, 0, 'torque', 0, 0))
    for q, dq, u in ((0.3, 0.0, 1.5), (-1.2, 0.7, -0.4), (2.5, -2.0, 3.0)):
        for s in (s1, s2):
            s.q, s.dq, s.u = q, dq, u
        np.testing.assert_allclose(s2.f(), s1.f(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(s2.f_du(), s1.f_du(), rtol=1e-10)
    # a constant body force along the bob's y axis acts with lever arm 1
    s3 = pendulum()
    trep.forces.BodyWrench(s3, 'bob', (0, 2.0, 0))
    s3.q, s3.dq = 0.8, 0.0
    s1.q, s1.dq, s1.u = 0.8, 0.0, 2.0
    np.testing.assert_allclose(s3.f(), s1.f(), rtol=1e-12)


def test_wrench_val_and_properties():
    s, _ = two_pendulums()
    w = trep.forces.HybridWrench(s, 'pend2', (1.0, 'fy'))
    assert w.frame is s.get_frame('pend2')
    assert w.wrench_val == (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    w.wrench_val = (2.0, 3.0, 0.0, 0.0, 0.5)
    assert s.get_input('fy').u == 3.0
    assert w.wrench_val == (2.0, 3.0, 0.0, 0.0, 0.5, 0.0)
    with pytest.raises(AttributeError):
        w.wrench = (0,) * 6
    default = trep.forces.SpatialWrench(s, 'pend1')
    s.q = [0.3, 0.2]
    np.testing.assert_allclose(default.f_array(), 0.0)


def test_wrench_bad_input():
    s, _ = two_pendulums()
    with pytest.raises(ValueError, match='7 entries'):
        trep.forces.BodyWrench(s, 'pend1', (0,) * 7)
    with pytest.raises(KeyError, match='nowhere'):
        trep.forces.HybridWrench(s, 'nowhere', (0,) * 6)
    with pytest.raises(ValueError, match=r'wrench\[2\]'):
        trep.forces.SpatialWrench(s, 'pend1', (0, 0, np.nan, 0, 0, 0))
    with pytest.raises(ValueError, match=r'wrench\[1\]'):
        trep.forces.BodyWrench(s, 'pend1', (0, [1], 0, 0, 0, 0))
    with pytest.raises(ValueError, match='string'):
        trep.forces.BodyWrench(s, 'pend1', 'fx')
    assert s.forces == () and s.inputs == ()


# ---------------------------------------------------------------------- simulation
def simulate(with_damper, steps=2000, dt=0.01):
    """Two hanging pendulums 3 m apart coupled by a spring (and optionally a damper)."""
    s = trep.System()
    s.import_frames([
        ry('theta1'), [tz(-2, mass=1, name='pend1')],
        tx(3), [ry('theta2'), [tz(-2, mass=1, name='pend2')]],
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.potentials.LinearSpring(s, 'pend1', 'pend2', k=5.0, x0=2.5)
    if with_damper:
        trep.forces.LinearDamper(s, 'pend1', 'pend2', c=0.5)
    s.q = [0.4, -0.3]
    s.dq = [0.0, 0.5]
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_state(0.0, s.q, s.mass_matrix() @ s.dq)

    def energy_now():
        # continuous energy at q2 with the velocity of the discrete momentum p2
        s.q = mvi.q2
        s.dq = np.linalg.solve(s.mass_matrix(), mvi.p2)
        return s.total_energy()
    energy = [energy_now()]
    for k in range(steps):
        mvi.step(mvi.t2 + dt)
        energy.append(energy_now())
    return np.array(energy), mvi


def test_simulation_energy_conserved_without_damper():
    energy, mvi = simulate(False)
    assert mvi._fast is None        # the general path (spring not in the compiled kernel)
    scale = np.abs(energy).max()
    assert np.abs(energy - energy[0]).max() <= 1e-4 * scale


def test_simulation_energy_decreases_with_damper():
    energy, _ = simulate(True)
    dissipated = energy[0] - energy[-1]
    assert dissipated > 5.0         # most of the ~11 J of oscillation energy is gone
    # monotone decrease: strictly over every 0.05 s window, and step to step up to the
    # midpoint rule's O(dt^2) energy oscillation (< 1e-6 of the dissipated energy)
    assert np.diff(energy[::5]).max() < 0.0
    assert np.diff(energy).max() <= 1e-6 * dissipated


def test_damping_coefficients_survive_a_deep_copy_and_a_structure_change():
    import copy
    system = trep.System()
    system.import_frames([rx('a', mass=[1.0, 0.1, 0.1, 0.1]), [
        tz(-1.0), [ry('b', mass=[1.0, 0.1, 0.1, 0.1])]]])
    damping = trep.forces.Damping(system, 0.1, {'b': 2.5})
    other = copy.deepcopy(system)
    other.get_config('b').frame.set_inertia(2.0, np.diag([0.2, 0.2, 0.2]))   # a new model
    np.testing.assert_array_equal(other.forces[0].coefficient_vector(), [0.1, 2.5])
    assert other.forces[0].get_damping_coefficient('b') == 2.5
    np.testing.assert_array_equal(damping.coefficient_vector(), [0.1, 2.5])
