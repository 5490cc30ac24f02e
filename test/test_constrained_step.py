"""The compiled constrained step (ros_vi/integrators/constrained_step.py).

Every built-in constraint kind, alone and together, on a 3-D tree with springs, damping and
inputs (and a kinematic config), and the closed four-bar linkage: the compiled step must
reproduce the general NumPy path (``MidpointVI(system, fast=False)``) step after step
(q2, p2 and lambda1), keep the constraints to their tolerance, give first derivatives that
match central differences of compiled steps, follow parameter changes, fail without
touching the state, and allocate nothing per step.
"""
import tracemalloc

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import const_txyz, rx, ry, rz, tx, ty, tz
from ros_vi.integrators.midpointvi import ConvergenceError
from ros_vi.mechanics import dynamics
from systems import assert_close

LINK = [1.0, 0.0, 0.1, 0.0]


def fourbar():
    """Closed planar four-bar in the x-z plane (ground 1.5 m, links 1.0, 1.2, 1.0 m), the
    crank driven by input 'tau'."""
    s = trep.System()
    s.import_frames([
        ry('th1'), [tx(1.0, name='A', mass=LINK), [
            ry('th2'), [tx(1.2, name='B', mass=LINK), [
                ry('th3'), [tx(1.0, name='C', mass=LINK)]]]]],
        const_txyz([1.5, 0.0, 0.0], name='G'),
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.forces.ConfigForce(s, 'th1', 'tau')
    trep.constraints.PointToPoint2D(s, 'xz', 'C', 'G', name='close')
    s.q = [-1.2, 1.5, 1.5]
    s.satisfy_constraints()
    return s


def spatial_tree():
    """Three 3-D branches (the third hangs off a fixed anchor G); a kinematic slide 'k'
    carries the second; the first has a mimic frame (Cm follows config b), so Ct moves
    through a joint coordinate that is no config.  Gravity, a ConfigSpring, Damping and two
    ConfigForce inputs."""
    s = trep.System()
    s.import_frames([
        rz('a', name='A'), [tx(0.6), [ry('b', name='B'), [
            tz(-0.5, name='Bt', mass=[1.0, 0.1, 0.2, 0.1]), [
                rx('c', name='C'), [rz(trep.mimic('b', 0.5, 0.1), name='Cm'), [
                    ty(0.4, name='Ct', mass=[0.8, 0.05, 0.06, 0.07])]]]]]],
        tx('k', name='K', kinematic=True), [
            ty('e', name='E', mass=[0.7, 0.01, 0.01, 0.01]), [
                rx('f'), [tz(0.5, name='F', mass=[1.0, 0.2, 0.1, 0.3])]]],
        const_txyz([0.5, 0.5, -0.8], name='G'), [
            rx('g'), [tz(-0.7, name='Gt', mass=[0.6, 0.02, 0.03, 0.04]), [
                ry('h'), [tz('i', name='I'), [tx(0.5, name='H', mass=[0.5, 0.01, 0.01, 0.01])]]]]],
    ])
    trep.potentials.Gravity(s, (0.3, -0.2, -9.8))
    trep.potentials.ConfigSpring(s, 'b', k=3.0, q0=0.2)
    trep.forces.Damping(s, 0.1, {'c': 0.2})
    trep.forces.ConfigForce(s, 'a', 'ua')
    trep.forces.ConfigForce(s, 'f', 'uf')
    return s


KINDS = ['distance', 'distance_config', 'point1d', 'point2d', 'point3d', 'plane', 'mimic',
         'mixed']
MIXED = ['distance', 'distance_config', 'point2d_h', 'plane', 'mimic']


def constrained_tree(kind):
    """:func:`spatial_tree` with the constraints of ``kind``, at a configuration that
    satisfies them."""
    s = spatial_tree()
    assert s.model.nt == s.nQ + 1
    q0 = {'a': 0.3, 'b': -0.4, 'c': 0.8, 'e': 0.2, 'f': -0.6, 'k': 0.1}
    s.q = q0
    kinds = MIXED if kind == 'mixed' else [kind]
    for k in kinds:
        if k == 'distance':
            d = np.linalg.norm(s.get_frame('Ct').p()[:3] - s.get_frame('F').p()[:3])
            trep.constraints.Distance(s, 'Ct', 'F', d, name='rod')
        elif k == 'distance_config':
            trep.constraints.Distance(s, 'Bt', 'G', 'len', name='cable')
            s.get_config('len').q = np.linalg.norm(s.get_frame('Bt').p()[:3]
                                                   - s.get_frame('G').p()[:3])
        elif k == 'point1d':
            trep.constraints.PointToPoint1D(s, 'z', 'F', 'Ct', name='level')
        elif k == 'point2d':
            trep.constraints.PointToPoint2D(s, 'xy', 'Ct', 'G', name='pin2')
        elif k == 'point2d_h':
            trep.constraints.PointToPoint2D(s, 'xz', 'H', 'Ct', name='pin2h')
        elif k == 'point3d':
            trep.constraints.PointToPoint3D(s, 'F', 'Ct', name='ball')
        elif k == 'plane':
            trep.constraints.PointOnPlane(s, 'B', [0.2, 1.0, -0.3], 'F', name='slot')
        elif k == 'mimic':
            trep.constraints.Mimic(s, 'e', 'a', multiplier=-0.5, offset=0.1, name='gear')
    settle(s)
    return s


def settle(s):
    """Move the dynamic configs onto the constraints by Gauss-Newton (minimum-norm steps
    from the current configuration, kinematic configs kept)."""
    nd = s.nQd
    for _ in range(50):
        h = dynamics.constraint_values(s)
        if np.abs(h).max() <= 1e-13:
            return
        q = s.q
        q[:nd] += np.linalg.lstsq(dynamics.constraint_jacobian(s)[:, :nd], -h, rcond=None)[0]
        s.q = q
    raise AssertionError('the test configuration does not satisfy the constraints')


def consistent_momentum(s, seed):
    """p = M dq for a random dq tangent to the constraints (kinematic configs at rest)."""
    rng = np.random.default_rng(seed)
    nd = s.nQd
    Dh = dynamics.constraint_jacobian(s)[:, :nd]
    null = np.linalg.svd(Dh)[2][np.linalg.matrix_rank(Dh):]
    assert null.shape[0] > 0
    dq = np.zeros(s.nQ)
    dq[:nd] = rng.normal(size=null.shape[0]) @ null
    s.dq = dq
    return s.mass_matrix() @ s.dqd


def kinematic_path(s, t):
    """Kinematic inputs k2 (nQk,) at time t: smooth motions from their current values."""
    k0 = np.array([c.q for c in s.kin_configs])
    return k0 + 0.05 * np.sin(3.0 * t + np.arange(s.nQk))


def run(build, fast, steps, dt, seed=0, tolerance=1e-12):
    """(q2, p2, lambda1) after every step of a driven run, and the integrator.

    Both paths accept any iterate within tolerance of the root, so they are compared with
    the DEL and constraint tolerances well below the 1e-10 they must agree to."""
    s = build()
    for con in s.constraints:
        con.tolerance = tolerance
    p0 = consistent_momentum(s, seed)
    k_start = np.array([c.q for c in s.kin_configs])
    mvi = trep.MidpointVI(s, fast=fast, tolerance=tolerance)
    mvi.initialize_from_state(0.0, s.q, p0)
    out = []
    for k in range(steps):
        t2 = mvi.t2 + dt
        u = 0.5 * np.sin(2.0 * t2 + np.arange(s.nu))
        k2 = k_start + 0.05 * np.sin(3.0 * t2 + np.arange(s.nQk))
        mvi.step(t2, u, k2)
        out.append((mvi.q2, mvi.p2, mvi.lambda1))
    return mvi, [np.array(x) for x in zip(*out)]


def assert_paths_agree(build, steps, dt):
    fast, (q_f, p_f, l_f) = run(build, True, steps, dt)
    general, (q_g, p_g, l_g) = run(build, False, steps, dt)
    assert fast.compiled and not general.compiled
    assert_close(q_f, q_g, rel=0.0, abs_=1e-10, what='q2')
    assert_close(p_f, p_g, rel=1e-10, abs_=1e-10, what='p2')
    assert_close(l_f, l_g, rel=1e-10, abs_=1e-10, what='lambda1')
    # the run is not trivial: the system moved and the constraints pushed
    assert np.ptp(q_f[:, :fast.nd], axis=0).max() > 0.1
    assert np.abs(l_f).max() > 1e-4
    return fast


@pytest.mark.parametrize('kind', KINDS)
def test_compiled_constrained_step_matches_the_general_path(kind):
    mvi = assert_paths_agree(lambda: constrained_tree(kind), steps=400, dt=0.005)
    s = mvi.system
    s.data.set(mvi.q2, np.zeros(s.nQ))
    h = dynamics.constraint_values(s)
    assert np.all(np.abs(h) <= [c.tolerance for c in s.constraints])


def test_fourbar_compiled_matches_general_path():
    mvi = assert_paths_agree(fourbar, steps=2000, dt=0.001)
    assert mvi.nc == 2 and mvi.lambda1.shape == (2,)


def kinematic_rod():
    """A point mass on free x-z slides held at a kinematically driven distance from a
    pivot (the distance is the kinematic config 'r')."""
    s = trep.System()
    s.import_frames([tx('x'), [tz('z', name='M', mass=[1.0, 0.0, 0.0, 0.0])],
                     const_txyz([0.0, 0.0, 0.0], name='pivot')])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.forces.ConfigForce(s, 'x', 'fx')
    trep.constraints.Distance(s, 'M', 'pivot', 'r', name='rod')
    s.q = {'x': 0.6, 'z': -0.8, 'r': 1.0}
    return s


def test_kinematic_distance_config_on_the_compiled_path():
    mvi = assert_paths_agree(kinematic_rod, steps=500, dt=0.01)
    x, z, r = mvi.q2
    assert abs(x * x + z * z - r * r) <= 1e-10
    assert r != 1.0


# ---------------------------------------------------------------------- derivatives
DELTA = 1e-6


@pytest.mark.parametrize('build', [fourbar, lambda: constrained_tree('mixed'), kinematic_rod],
                         ids=['fourbar', 'tree_mixed', 'kinematic_rod'])
def test_derivatives_after_a_compiled_step_match_finite_differences(build):
    """First derivatives (general formulas, evaluated on the compiled step's state) against
    central differences of compiled steps from perturbed (q1, p1, u1, k2)."""
    s = build()
    for con in s.constraints:
        con.tolerance = 1e-13
    p1 = consistent_momentum(s, 3)
    q1 = s.q
    mvi = trep.MidpointVI(s, tolerance=1e-12)
    assert mvi.compiled
    t1, t2 = 0.2, 0.21
    u1 = 0.3 + 0.1 * np.arange(s.nu)
    k2 = q1[s.nQd:] + 0.01

    def step(q1_, p1_, u1_, k2_):
        mvi.initialize_from_state(t1, q1_, p1_)
        mvi.step(t2, u1_, k2_)
        return mvi.q2[:s.nQd], mvi.p2, mvi.lambda1

    step(q1, p1, u1, k2)
    exact = {name: getattr(mvi, name)() for name in (
        'q2_dq1', 'q2_dp1', 'q2_du1', 'q2_dk2', 'p2_dq1', 'p2_dp1', 'p2_du1', 'p2_dk2',
        'lambda1_dq1', 'lambda1_dp1', 'lambda1_du1', 'lambda1_dk2')}
    # the same derivatives from a general-path integrator at the same state
    general = trep.MidpointVI(s, tolerance=1e-12, fast=False)
    general.initialize_from_state(t1, q1, p1)
    general.step(t2, u1, k2)
    assert_close(exact['q2_dq1'], general.q2_dq1(), rel=1e-9, abs_=1e-12)
    assert_close(exact['lambda1_dp1'], general.lambda1_dp1(), rel=1e-9, abs_=1e-12)

    args = [np.array(q1, float), np.array(p1, float), u1, k2]
    for which, name in enumerate(('dq1', 'dp1', 'du1', 'dk2')):
        cols = []
        for i in range(args[which].shape[0]):
            outs = []
            for sign in (1, -1):
                a = [x.copy() for x in args]
                a[which][i] += sign * DELTA
                outs.append(step(*a))
            cols.append([(p - m) / (2 * DELTA) for p, m in zip(*outs)])
        if not cols:
            continue
        for k, (out, floor) in enumerate((('q2_', 1e-8), ('p2_', 1e-6), ('lambda1_', 1e-6))):
            approx = np.stack([c[k] for c in cols], axis=-1)
            assert_close(exact[out + name], approx, rel=1e-6, abs_=floor, what=out + name)
    assert mvi.compiled


# ---------------------------------------------------------------------- parameters, failures
def test_changed_constraint_parameters_reach_the_compiled_step():
    runs = []
    for fast in (True, False):
        s = constrained_tree('mixed')
        k2 = [c.q for c in s.kin_configs]
        mvi = trep.MidpointVI(s, fast=fast)
        mvi.initialize_from_state(0.0, s.q, consistent_momentum(s, 1))
        for k in range(20):
            mvi.step(mvi.t2 + 0.005, [0.1, -0.2], k2)
        rod = s.get_constraint('rod')
        rod.distance = rod.distance + 0.01          # pulled in over the next steps
        s.get_constraint('slot').normal = [0.25, 1.0, -0.3]
        s.get_constraint('gear').offset = 0.12
        for con in s.constraints:
            con.tolerance = 1e-12
        for k in range(40):
            mvi.step(mvi.t2 + 0.005, [0.1, -0.2], k2)
        s.data.set(mvi.q2, np.zeros(s.nQ))
        assert np.abs(dynamics.constraint_values(s)).max() <= 1e-12
        runs.append((mvi.q2, mvi.p2, mvi.lambda1))
    for a, b in zip(*runs):
        assert_close(a, b, rel=1e-9, abs_=1e-10)


def _state(mvi):
    return (mvi.t1, mvi.t2, mvi.q1, mvi.q2, mvi.p1, mvi.p2, mvi.u1, mvi.lambda1)


def test_failed_compiled_constrained_step_keeps_the_state():
    s = fourbar()
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_state(0.0, s.q, consistent_momentum(s, 0))
    for k in range(5):
        mvi.step(mvi.t2 + 0.01, [0.2])
    before = _state(mvi)
    with pytest.raises(ConvergenceError):
        mvi.step(mvi.t2 + 0.01, [0.2], max_iterations=0)
    with pytest.raises(ConvergenceError):
        mvi.step(mvi.t2 + 0.01, [0.2], max_iterations=0, lambda1_hint=[3.0, 4.0])
    with pytest.raises(ValueError, match='lambda1_hint'):
        mvi.step(mvi.t2 + 0.01, [0.2], lambda1_hint=[3.0])
    with pytest.raises(ValueError, match='u1'):
        mvi.step(mvi.t2 + 0.01, [np.nan])
    after = _state(mvi)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    mvi.step(mvi.t2 + 0.01, [0.2])                  # and it carries on


def test_lambda1_setter_and_hint_work_on_the_compiled_path():
    s = fourbar()
    q0, p0 = s.q, consistent_momentum(s, 0)
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_state(0.0, q0, p0, lambda1=[0.5, -0.5])
    np.testing.assert_array_equal(mvi.lambda1, [0.5, -0.5])
    mvi.lambda1 = [1.0, 2.0]
    np.testing.assert_array_equal(mvi.lambda1, [1.0, 2.0])
    with pytest.raises(ValueError, match='lambda1'):
        mvi.lambda1 = [1.0]
    # a lambda1 hint seeds the compiled step, a q2 hint runs the general path: both reach
    # the root of the unhinted step, and the compiled path carries on after them
    ref = trep.MidpointVI(fourbar())
    gen = trep.MidpointVI(fourbar())
    for vi in (mvi, ref, gen):
        vi.initialize_from_state(0.0, q0, p0)
        vi.step(0.01, [0.3])
    mvi.step(0.02, [0.3], lambda1_hint=mvi.lambda1 + 0.05)
    ref.step(0.02, [0.3])
    gen.step(0.02, [0.3], q2_hint=gen.q2)
    for vi in (mvi, gen):
        assert_close(vi.q2, ref.q2, rel=0.0, abs_=1e-10)
        assert_close(vi.lambda1, ref.lambda1, rel=1e-8, abs_=1e-10)
    for vi in (mvi, ref):
        vi.step(0.03, [0.3])
    assert_close(mvi.q2, ref.q2, rel=0.0, abs_=1e-10)
    assert_close(mvi.lambda1, ref.lambda1, rel=1e-8, abs_=1e-10)
    assert mvi.compiled and np.abs(mvi.lambda1).max() > 1e-3


def test_compiled_constrained_steps_allocate_nothing():
    """10^4 steps leave the traced Python memory where it was (no per-step objects kept, no
    growing buffers)."""
    s = fourbar()
    mvi = trep.MidpointVI(s)
    assert mvi.compiled
    mvi.initialize_from_state(0.0, s.q, consistent_momentum(s, 0))
    u = np.array([0.1])
    for k in range(100):
        mvi.step(mvi.t2 + 0.001, u)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for k in range(10000):
            mvi.step(mvi.t2 + 0.001, u)
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < 2048, 'traced memory grew by %d bytes over 10^4 steps' % grown
