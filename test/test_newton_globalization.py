"""The globalized Newton solve of MidpointVI.step: line search, acceptance rule for roots
(continuation of the trajectory only), retry and subdivision into substeps.

Each case below failed before these changes (ConvergenceError mid-run, or an accepted
spurious root whose energy then blew up by many orders of magnitude); the numbers in the
docstrings are from runs of this branch (``pytest -s`` prints them).  Energies are
evaluated with the System's own energy functions at states the integrator produced.
"""
import numpy as np
import pytest

import ros_vi as trep
from ros_vi import ConvergenceError, MidpointVI, const_txyz, ry, tx, tz
from ros_vi.control import DEMOS
from ros_vi.resources import shipped_model
from ros_vi.simulation import simulate
from ros_vi.urdf import import_urdf_file
from ros_vi.mechanics import dynamics

G = 9.8


def chain(n, length):
    """n-link planar pendulum: ry joints, links of ``length`` m, 1 kg point masses at the
    link ends, gravity 9.8 m/s^2.  Hanging at rest its energy is V_rest = -g m L n(n+1)/2."""
    system = trep.System()

    def links(k):
        if k == n:
            return []
        return [ry('q%d' % k), [tz(-length, mass=1.0), links(k + 1)]]
    system.import_frames(links(0))
    trep.potentials.Gravity(system, (0.0, 0.0, -G))
    return system


def node_energy(system, q, p):
    """H(q, p) = 1/2 p M(q)^-1 p + V(q) [J] (the energy of a VI node)."""
    system.q = q
    system.dq = np.linalg.solve(system.mass_matrix(), p)
    return system.total_energy()


def free_run(n, length, q0, p0, dt, duration, fast=True):
    """Unforced run; returns (max |H - H0|, H0 - V_rest, steps that were subdivided)."""
    system = chain(n, length)
    probe = chain(n, length)
    mvi = MidpointVI(system, fast=fast)
    mvi.initialize_from_state(0.0, q0, p0)
    e0 = node_energy(probe, q0, p0)
    worst, subdivided = 0.0, 0
    for k in range(1, int(round(duration / dt)) + 1):
        mvi.step(k * dt)
        assert np.all(np.isfinite(mvi.q2)) and np.all(np.isfinite(mvi.p2))
        subdivided += mvi.last_substeps > 1
        worst = max(worst, abs(node_energy(probe, mvi.q2, mvi.p2) - e0))
    v_rest = -G * length * n * (n + 1) / 2
    return worst, e0 - v_rest, subdivided


# Energetic starts (a few tens of rad/s at the link ends: up to ~1 rad per 10 ms step).
# Before: the 5-link run raised ConvergenceError at t = 1.75 s, the double pendulum at
# t = 0.93 s (after accepting spurious roots: |DEL| in the thousands).
FIVE_LINK = ([-0.6882669433586481, 1.8719738156357186, -0.750995395019955, 1.3399386785072585,
              0.7069702139275975],
             [-12.98481208246912, -12.011155488035266, -12.82491794740462, 9.669722789332148,
              -3.6060836889927])


def _double_start():
    """Start of the double pendulum case (the one seeded generator draw that produced it)."""
    rng = np.random.default_rng(21)
    for _ in range(7):
        q0 = rng.uniform(-np.pi, np.pi, 2)
        p0 = rng.normal(0.0, 3.0, 2)
    return q0, p0


@pytest.mark.parametrize('case', ['five_link', 'double'])
def test_10ms_steps_for_100s_do_not_fail_and_keep_the_energy_bounded(case):
    """dt = 10 ms, 100 s, no input, no damping: no exception, every state finite, and the
    node energy within half the energy of motion (H0 - V_rest) of its start.

    Why that bound: the motion turns the links by up to ~1 rad per step, so the VI's own
    energy error at this step is large (measured: 12 % of H0 - V_rest for the 5-link
    chain, 28 % for the double pendulum; at dt = 2.5 ms both stay below 1 %), while an
    accepted spurious root or a blow-up changes the energy by orders of magnitude (the
    runs before this change reached 1e9 x)."""
    if case == 'five_link':
        q0, p0 = FIVE_LINK
        worst, scale, subdivided = free_run(5, 1.0, q0, p0, 0.01, 100.0)
    else:
        q0, p0 = _double_start()
        worst, scale, subdivided = free_run(2, 0.5, q0, p0, 0.01, 100.0)
    print('\n%s: max |H - H0| = %.4g J = %.3f of H0 - V_rest (%.4g J); %d steps subdivided'
          % (case, worst, worst / scale, scale, subdivided))
    assert worst <= 0.5 * scale


def test_double_pendulum_general_path_also_runs_through():
    """The general (NumPy) path with the same rule: the double pendulum case for 20 s."""
    q0, p0 = _double_start()
    worst, scale, _ = free_run(2, 0.5, q0, p0, 0.01, 20.0, fast=False)
    assert worst <= 0.5 * scale


def test_arm7_saturated_alternating_torques_energy_balance():
    """7-DOF arm (urdf/arm7.urdf) at 500 Hz, every joint at its effort limit, the sign
    flipping every 0.1 s, for 5 s: finite states, and at every step the energy balance

        |E(t) - E(0) - W(t)| <= 2 % of the accumulated |work|,

    with E = T + V at the step's midpoint (the VI's own energy: the node momentum p2 lags
    the velocity by dt M^-1 F / 2 under trep's forcing f- = dt F, which at 40 N m on the
    light wrist is tens of rad/s, so the node energy is no measure here) and W the discrete
    work of the non-conservative forces between midpoints: inputs and the URDF's joint
    damping, W += dt F_k . (v_{k-1} + v_k) / 2.  The balance is exact for a constant mass
    matrix; what remains is the VI's discretisation error, largest (1.6 %) right after the
    first reversal when little work has accumulated, 0.1-0.3 % later, and 0.1 % at 2 kHz.
    """
    # without joint limits (a stop's inelastic loss is not in W): the arm turns freely
    system = import_urdf_file(shipped_model('arm7'), enforce_limits=False)
    damping = [f for f in system.forces if type(f).__name__ == 'Damping'][0]
    c = damping.coefficient_vector()
    limits = system.urdf.effort_limits
    dt = 1.0 / 500.0
    mvi = MidpointVI(system)
    mvi.initialize_from_state(0.0, np.zeros(7), np.zeros(7))
    system.q, system.dq = np.zeros(7), np.zeros(7)
    e0 = system.total_energy()
    work = accumulated = worst = 0.0
    v_prev = np.zeros(7)
    for k in range(1, int(round(5.0 / dt)) + 1):
        u = limits if int(np.floor((k - 1) * dt / 0.1 + 1e-9)) % 2 == 0 else -limits
        q1 = mvi.q2
        mvi.step(k * dt, u)
        assert np.all(np.isfinite(mvi.q2)) and np.all(np.isfinite(mvi.p2))
        v = (mvi.q2 - q1) / dt
        work += dt * (u - c * v) @ (0.5 * (v_prev + v))
        accumulated += dt * np.abs((u - c * v) * 0.5 * (v_prev + v)).sum()
        v_prev = v
        mvi.set_midpoint()
        worst = max(worst, abs(system.total_energy() - e0 - work) / accumulated)
    print('\narm7: worst |E - E0 - W| / accumulated |work| = %.4f; final E - E0 = %.4g J, '
          'accumulated |work| = %.4g J' % (worst, system.total_energy() - e0, accumulated))
    assert worst <= 0.02


def test_acrobot_lqr_from_hanging_runs_to_the_end_with_bounded_energy():
    """`python -m ros_vi.demo --model acrobot --controller lqr --offset 3.14159 --duration 7`
    without ROS: the LQR alone from hanging, elbow torque saturated at 20 N m, 100 Hz.
    Before: at t = 4.95 s a spurious root sent the velocities from tens to 1e4 rad/s and
    E - E_goal reached 1e10 J (the simulation then failed at 5.15 s).  Now it runs to the
    end, and the energy never rises above its start by more than the work the saturated
    torque did (damping only removes energy)."""
    demo = DEMOS['acrobot']
    controller = demo.lqr(demo.model())
    q0 = demo.goal.copy()
    q0[0] += 3.14159
    run = simulate(controller, demo.model(), 7.0, q0)
    assert run.t[-1] == pytest.approx(7.0)
    assert np.all(np.isfinite(run.q)) and np.all(np.isfinite(run.v))
    elbow = run.joint_names.index('elbow')
    input_work = np.concatenate([[0.0], np.cumsum(np.abs(run.u[:, 0]
                                                         * np.diff(run.q[:, elbow])))])
    rise = run.E - run.E[0]
    print('\nacrobot: max E - E0 = %.4g J, input work %.4g J, max |v| = %.4g rad/s'
          % (rise.max(), input_work[-1], np.abs(run.v).max()))
    assert np.all(np.abs(run.u) <= 20.0 + 1e-12)
    # the published state's energy and the work summed at the steps' midpoints agree to
    # O(dt^2): up to 12 % apart over the first ticks of a saturated start from rest
    assert np.all(rise <= 1.2 * input_work + 1e-6 * abs(run.E[0]))


# ------------------------------------------------------------------ no solution at all
def constrained_pendulum():
    """Double pendulum whose tip keeps the kinematic distance 'reach' [m] from the world
    origin (a Distance constraint: compiled unless ``fast=False``)."""
    system = trep.System()
    system.import_frames([
        ry('a'), [tz(-1.0, mass=1.0), [ry('b'), [tz(-1.0, name='tip', mass=1.0)]]]])
    trep.potentials.Gravity(system, (0.0, 0.0, -G))
    trep.constraints.Distance(system, 'tip', system.world_frame, 'reach')
    return system


@pytest.mark.parametrize('fast', [True, False])
def test_unsatisfiable_constraint_raises_with_the_residual_and_keeps_the_state(fast):
    system = constrained_pendulum()
    mvi = MidpointVI(system, fast=fast)
    assert mvi.compiled == fast
    # reach 1.5 m: a = 0.3, b chosen so that |tip| = 1.5
    b = np.arccos((1.5 ** 2 - 2.0) / 2.0)
    mvi.initialize_from_state(0.0, [0.3, b, 1.5], [0.0, 0.0])
    for k in range(1, 4):
        mvi.step(0.01 * k, (), [1.5])
    state = (mvi.t1, mvi.t2, mvi.q1, mvi.q2, mvi.p1, mvi.p2, mvi.lambda1)
    # the tip cannot be 5 m from the origin (the links reach 2 m)
    with pytest.raises(ConvergenceError) as err:
        mvi.step(0.04, (), [5.0])
    message = str(err.value)
    assert '|DEL| = ' in message and 'step to t=0.04' in message
    if fast:
        # the compiled step also says how far the constraints are from being met
        violation = float(message.split('max |h| = ')[1].rstrip(')'))
        assert violation > system.constraints[0].tolerance
    print('\n' + message)
    after = (mvi.t1, mvi.t2, mvi.q1, mvi.q2, mvi.p1, mvi.p2, mvi.lambda1)
    for before, now in zip(state, after):
        np.testing.assert_array_equal(before, now)
    # ... and it goes on from there
    mvi.step(0.04, (), [1.5])
    assert mvi.t2 == 0.04


# ------------------------------------------------------------------ spurious roots
# A 5-link chain of 0.2 m links (point masses) at t = 0.11 s of a 10 ms run: the
# integrator before this change took the next step to a root of the DEL with an increment
# of thousands of radians (then failed two steps later).
SPURIOUS_STATE = (
    np.array([2.312831423580186, -2.395032672106579, 1.0874847598417612, 5.622542364402672,
              1.2655293783194015]),
    np.array([-0.0920331571068162, -0.06637458876503502, -0.0397263604355953,
              1.392815879666569, -0.3188802693162198]))
SPURIOUS_INCREMENT = np.array([-2375.833570039168, 1657.2710215845364, 487.92490253409466,
                               230.96567756481562, -100.20388695039405])


@pytest.mark.parametrize('tolerance', [1e-10])
def test_a_hint_at_a_spurious_root_is_rejected_and_the_continuation_taken(tolerance):
    """Seeded exactly at that spurious root, Newton stops there at once; the acceptance
    rule must refuse it (it lies thousands of radians from the linearised step, and its
    kinetic energy is ~1e9 J) and the step end at the continuation of the trajectory, the
    same as without a hint."""
    q1, p1 = SPURIOUS_STATE
    t1, t2 = 0.11, 0.12
    mvi = MidpointVI(chain(5, 0.2), fast=False, tolerance=tolerance)
    # it is a root of this step's DEL (the residual is at the rounding level of its terms)
    mvi.initialize_from_state(t1, q1, p1)
    mvi.t2, mvi.q2 = t2, q1 + SPURIOUS_INCREMENT
    residual = np.linalg.norm(mvi.calc_f())
    mvi.initialize_from_state(t1, q1, p1)
    mvi.step(t2)
    continuation = mvi.q2.copy()
    assert np.abs(continuation - q1).max() < 2.0
    mvi.initialize_from_state(t1, q1, p1)
    iterations = mvi.step(t2, q2_hint=q1 + SPURIOUS_INCREMENT)
    print('\nspurious root: |DEL| = %.3g there; hinted step ended %.3g rad from the '
          'continuation after %d iterations (%d substeps)'
          % (residual, np.abs(mvi.q2 - continuation).max(), iterations, mvi.last_substeps))
    assert residual < 1e-6 * np.abs(SPURIOUS_INCREMENT).max()
    np.testing.assert_allclose(mvi.q2, continuation, atol=1e-8)


def test_the_rejection_is_reported_when_nothing_else_is_allowed():
    """With no retry possible (a constrained system has no momentum guess, and
    max_subdivisions=0), a hint at another root ends in ConvergenceError saying why: the
    mirror configuration (elbow bent the other way) keeps the tip on the same circle and
    the DEL has a root near it, radians from the trajectory."""
    system = constrained_pendulum()
    mvi = MidpointVI(system, max_subdivisions=0)
    b = np.arccos((1.5 ** 2 - 2.0) / 2.0)
    q1 = np.array([0.3, b, 1.5])
    mvi.initialize_from_state(0.0, q1, [0.0, 0.0])
    mvi.step(0.05, (), [1.5])
    good = mvi.q2.copy()
    mirror = np.array([0.3 + b, -b, 1.5])
    mvi.initialize_from_state(0.0, q1, [0.0, 0.0])
    with pytest.raises(ConvergenceError, match=r'root rejected \(\|DEL\| = .*linearised step'):
        mvi.step(0.05, (), [1.5], q2_hint=mirror)
    np.testing.assert_array_equal(mvi.q2, q1)        # the state is kept
    assert mvi.t2 == 0.0
    # the same step without the hint is the continuation
    mvi.step(0.05, (), [1.5])
    np.testing.assert_allclose(mvi.q2, good, atol=1e-12)


# ------------------------------------------------------------------ subdivided steps
def _subdivided_case():
    """5-link chain, 10 ms: the first step from this start is taken as 4 substeps."""
    q0 = np.array([1.303733099997845, -3.134054819303767, 0.021136418940642887,
                   -0.3979326472303102, -1.8645174200721792])
    p0 = np.array([-3.961903304730927, -10.91328901695709, -13.552087462047396,
                   2.2478573245989315, -11.093499378913661])
    return q0, p0


@pytest.mark.parametrize('fast', [True, False])
def test_a_subdivided_step_is_one_step_with_composite_derivatives(fast):
    q0, p0 = _subdivided_case()
    dt = 0.01

    def step(q, p):
        mvi = MidpointVI(chain(5, 1.0), fast=fast, tolerance=1e-12)
        mvi.initialize_from_state(0.0, q, p)
        mvi.step(dt)
        return mvi

    mvi = step(q0, p0)
    n = mvi.last_substeps
    assert n > 1
    # one step from t1 to t2 as the caller sees it
    assert (mvi.t1, mvi.t2) == (0.0, dt)
    np.testing.assert_array_equal(mvi.q1, q0)
    np.testing.assert_array_equal(mvi.p1, p0)
    # the same as n plain steps of dt / n
    ref = MidpointVI(chain(5, 1.0), fast=fast, tolerance=1e-12)
    ref.initialize_from_state(0.0, q0, p0)
    for j in range(1, n + 1):
        ref.step(j * dt / n)
    np.testing.assert_allclose(mvi.q2, ref.q2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mvi.p2, ref.p2, rtol=1e-10, atol=1e-12)
    # first derivatives of the composite map, against central differences
    exact = np.vstack([np.hstack([mvi.q2_dq1(), mvi.q2_dp1()]),
                       np.hstack([mvi.p2_dq1(), mvi.p2_dp1()])])
    x0 = np.concatenate([q0, p0])
    eps = 1e-6
    cols = []
    for i in range(10):
        e = np.zeros(10)
        e[i] = eps
        plus, minus = step(*np.split(x0 + e, 2)), step(*np.split(x0 - e, 2))
        assert plus.last_substeps == minus.last_substeps == n
        cols.append((np.concatenate([plus.q2, plus.p2])
                     - np.concatenate([minus.q2, minus.p2])) / (2 * eps))
    fd = np.array(cols).T
    np.testing.assert_allclose(exact, fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())
    # the System stays at the step's average midpoint
    np.testing.assert_allclose(mvi.system.q, 0.5 * (mvi.q1 + mvi.q2), rtol=0, atol=1e-15)
    # second derivatives of the composite map, against central differences of the first
    def firsts(m):
        return np.stack([np.hstack([m.q2_dq1(), m.q2_dp1()]),
                         np.hstack([m.p2_dq1(), m.p2_dp1()])])      # (2, 5, 10)
    def hessian(qq, qp, pp):
        """[x_i, x_j, out] over x = (q1, p1) from the three blocks."""
        top = np.concatenate([qq, qp], axis=1)
        bottom = np.concatenate([qp.transpose(1, 0, 2), pp], axis=1)
        return np.concatenate([top, bottom], axis=0)
    second = {'q2': hessian(mvi.q2_dq1dq1(), mvi.q2_dq1dp1(), mvi.q2_dp1dp1()),
              'p2': hessian(mvi.p2_dq1dq1(), mvi.p2_dq1dp1(), mvi.p2_dp1dp1())}
    eps = 1e-5
    for i in range(10):
        e = np.zeros(10)
        e[i] = eps
        plus, minus = step(*np.split(x0 + e, 2)), step(*np.split(x0 - e, 2))
        assert plus.last_substeps == minus.last_substeps == n
        fd = (firsts(plus) - firsts(minus)) / (2 * eps)               # d/dx_i of (out, x_j)
        for k, name in enumerate(('q2', 'p2')):
            exact_i = second[name][i].T                               # (out, x_j)
            np.testing.assert_allclose(exact_i, fd[k], rtol=1e-4,
                                       atol=1e-5 * np.abs(fd[k]).max())
    # the next step is an ordinary one again
    mvi.step(2 * dt)
    assert mvi.last_substeps == 1


def test_max_subdivisions_is_validated():
    with pytest.raises(ValueError, match='max_subdivisions'):
        MidpointVI(chain(2, 1.0), max_subdivisions=-1)
    with pytest.raises(ValueError, match='max_subdivisions'):
        MidpointVI(chain(2, 1.0), max_subdivisions=1.5)


# ------------------------------------------------------------------ constrained systems
def level_chain(n):
    """:func:`chain` of 1 m links whose tip is held at the height of a fixed point 1.5 m
    below the pivot (a PointToPoint1D along z): n - 1 degrees of freedom, compiled unless
    ``fast=False``."""
    system = trep.System()

    def links(k):
        if k == n:
            return []
        return [ry('q%d' % k), [tz(-1.0, mass=1.0, name='m%d' % k), links(k + 1)]]
    system.import_frames(links(0) + [const_txyz([0.0, 0.0, -1.5], name='anchor')])
    trep.potentials.Gravity(system, (0.0, 0.0, -G))
    trep.constraints.PointToPoint1D(system, 'z', 'm%d' % (n - 1), 'anchor', name='level')
    return system


def midpoint_energy(mvi):
    """E = T + V [J] at the midpoint of the integrator's last step."""
    mvi.set_midpoint()
    return mvi.system.total_energy()


# 4 links, on the constraint, velocities up to 15 rad/s (T0 = 265 J).
LEVEL_START = ([-0.7285059102333558, -0.604970259256053, 0.49917191703528285,
                -0.8900568795431002],
               [-68.67342453445875, -27.853856389116572, -9.144833719984078,
                0.880924130700425])


@pytest.mark.parametrize('fast', [True, False])
def test_constrained_chain_at_10ms_runs_through_with_bounded_energy(fast):
    """4-link level chain, dt = 10 ms, 20 s, no input: no exception, the constraint held to
    its tolerance, and the midpoint energy within T0 / 2 of the first step's.

    Before, the compiled constrained step accepted a spurious root at t = 11.34 s (the
    midpoint energy then reached 4e5 J from 217 J).  The VI's own energy error at ~0.5 rad
    per step is what remains, and the motion is chaotic: starting momenta changed by 1e-14
    (relative) gave maxima from 17 to 75 J (T0 = 265 J) on either path, with 1 to 5 steps
    subdivided, so the bound is T0 / 2, far below a spurious root's."""
    q0, p0 = LEVEL_START
    system = level_chain(4)
    mvi = MidpointVI(system, fast=fast)
    assert mvi.compiled == fast
    mvi.initialize_from_state(0.0, q0, p0)
    system.q, system.dq = q0, np.linalg.solve(system.mass_matrix(), p0)
    t0 = system.kinetic_energy()
    mvi.step(0.01)
    e0 = midpoint_energy(mvi)
    worst = violation = 0.0
    subdivided = 0
    for k in range(2, 2001):
        mvi.step(0.01 * k)
        subdivided += mvi.last_substeps > 1
        worst = max(worst, abs(midpoint_energy(mvi) - e0))
        system.q = mvi.q2
        violation = max(violation, np.abs(dynamics.constraint_values(system)).max())
    print('\nlevel chain (%s): max |E - E0| = %.4g J (T0 = %.4g J), %d steps subdivided, '
          'max |h| = %.3g' % ('compiled' if fast else 'general', worst, t0, subdivided,
                              violation))
    assert worst <= 0.5 * t0
    assert violation <= system.constraints[0].tolerance


# 3 links, dt = 0.1 s: Newton on the whole step stagnates on both paths; two substeps work.
SUBDIVIDED_LEVEL = ([-1.0737529958014942, 0.5304459279673518, -0.8595331566087014],
                    [-23.69939425751346, -10.132958544349474, -0.5734608365792013])


def test_a_subdivided_constrained_step_is_one_step_on_both_paths():
    q0, p0 = (np.array(x) for x in SUBDIVIDED_LEVEL)
    dt = 0.1

    def step(q, p, fast=True):
        system = level_chain(3)
        system.constraints[0].tolerance = 1e-13
        mvi = MidpointVI(system, fast=fast, tolerance=1e-12)
        mvi.initialize_from_state(0.0, q, p)
        mvi.step(dt)
        return mvi

    mvi, general = step(q0, p0), step(q0, p0, fast=False)
    assert mvi.compiled and not general.compiled
    n = mvi.last_substeps
    assert n == general.last_substeps > 1
    assert (mvi.t1, mvi.t2) == (0.0, dt)
    np.testing.assert_array_equal(mvi.q1, q0)
    np.testing.assert_array_equal(mvi.p1, p0)
    # the same as n plain compiled steps of dt / n; lambda1 their time average
    system = level_chain(3)
    system.constraints[0].tolerance = 1e-13
    ref = MidpointVI(system, tolerance=1e-12)
    ref.initialize_from_state(0.0, q0, p0)
    lambdas = []
    for j in range(1, n + 1):
        ref.step(j * dt / n)
        lambdas.append(ref.lambda1)
    np.testing.assert_allclose(mvi.q2, ref.q2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mvi.p2, ref.p2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mvi.lambda1, np.mean(lambdas, axis=0), rtol=1e-10)
    # ... and the general path's composite step
    np.testing.assert_allclose(mvi.q2, general.q2, rtol=0.0, atol=1e-10)
    np.testing.assert_allclose(mvi.p2, general.p2, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(mvi.lambda1, general.lambda1, rtol=1e-10, atol=1e-10)
    # first derivatives of the composite map (lambda1's too), against central differences
    names = [w + '_d' + x for w in ('q2', 'p2', 'lambda1') for x in ('q1', 'p1')]
    exact = {name: getattr(mvi, name)() for name in names}
    x0 = np.concatenate([q0, p0])
    eps = 1e-6
    cols = []
    for i in range(6):
        e = np.zeros(6)
        e[i] = eps
        plus, minus = step(*np.split(x0 + e, 2)), step(*np.split(x0 - e, 2))
        assert plus.last_substeps == minus.last_substeps == n
        cols.append([(getattr(plus, w) - getattr(minus, w)) / (2 * eps)
                     for w in ('q2', 'p2', 'lambda1')])
    for k, w in enumerate(('q2', 'p2', 'lambda1')):
        fd = np.array([c[k] for c in cols]).T
        got = np.hstack([exact[w + '_dq1'], exact[w + '_dp1']])
        np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max(),
                                   err_msg=w)
    # the System stays at the step's average midpoint
    np.testing.assert_allclose(mvi.system.q, 0.5 * (mvi.q1 + mvi.q2), rtol=0, atol=1e-15)
    # second derivatives of the composite map (lambda1's too): central differences of the
    # first derivatives
    def firsts(m):
        return [np.hstack([getattr(m, w + '_dq1')(), getattr(m, w + '_dp1')()])
                for w in ('q2', 'p2', 'lambda1')]
    blocks = {w: [getattr(mvi, w + '_d' + a + 'd' + b)() for a, b in
                  (('q1', 'q1'), ('q1', 'p1'), ('p1', 'p1'))] for w in ('q2', 'p2', 'lambda1')}
    hessians = {}
    for w, (qq, qp, pp) in blocks.items():
        top = np.concatenate([qq, qp], axis=1)
        bottom = np.concatenate([qp.transpose(1, 0, 2), pp], axis=1)
        hessians[w] = np.concatenate([top, bottom], axis=0)          # [x_i, x_j, out]
    eps = 1e-5
    for i in range(6):
        e = np.zeros(6)
        e[i] = eps
        plus, minus = step(*np.split(x0 + e, 2)), step(*np.split(x0 - e, 2))
        for k, w in enumerate(('q2', 'p2', 'lambda1')):
            fd = (firsts(plus)[k] - firsts(minus)[k]) / (2 * eps)
            np.testing.assert_allclose(hessians[w][i].T, fd, rtol=1e-4,
                                       atol=1e-5 * np.abs(fd).max(), err_msg=w)
    mvi.step(dt + 0.01)
    assert mvi.last_substeps == 1


def fourbar():
    """Closed planar four-bar in the x-z plane (ground 1.5 m, links 1.0, 1.2, 1.0 m of
    1 kg), the crank driven by input 'tau'."""
    link = [1.0, 0.0, 0.1, 0.0]
    system = trep.System()
    system.import_frames([
        ry('th1'), [tx(1.0, name='A', mass=link), [
            ry('th2'), [tx(1.2, name='B', mass=link), [
                ry('th3'), [tx(1.0, name='C', mass=link)]]]]],
        const_txyz([1.5, 0.0, 0.0], name='G'),
    ])
    trep.potentials.Gravity(system, (0.0, 0.0, -G))
    trep.forces.ConfigForce(system, 'th1', 'tau')
    trep.constraints.PointToPoint2D(system, 'xz', 'C', 'G', name='close')
    system.q = [-1.2, 1.5, 1.5]
    system.satisfy_constraints()
    return system


@pytest.mark.parametrize('fast', [True, False])
def test_the_energy_test_of_a_constrained_step_counts_the_constraint_impulse(fast):
    """Four-bar under a crank torque, 10 ms steps: every step's energy defect (``last_check``)
    is the one computed here from the System's own energies at the two midpoints and the
    step's generalized impulse dt F - Dh(q1)^T lambda1,

        D = E_k - E_(k-1) - impulse_k . (v_(k-1) + v_k) / 2,

    within its bound.  The constraint's share of that work is small (an ideal constraint
    does no work; the discrete one does O(dt^2)) but far above the agreement asked for here,
    so a defect without it would not match."""
    system = fourbar()
    probe = fourbar()
    mvi = MidpointVI(system, fast=fast)
    assert mvi.compiled == fast
    mvi.initialize_from_state(0.0, system.q, np.zeros(3))
    dt = 0.01
    previous = None
    constraint_work = []
    for k in range(1, 201):
        u = [10.0 * np.sin(4.0 * k * dt)]
        q1 = mvi.q2
        mvi.step(k * dt, u)
        v = (mvi.q2 - q1) / dt
        probe.q, probe.dq = 0.5 * (q1 + mvi.q2), v
        energy = probe.total_energy()
        probe.q = q1
        constraint_impulse = -dynamics.constraint_jacobian(probe).T @ mvi.lambda1
        impulse = dt * np.array([u[0], 0.0, 0.0]) + constraint_impulse
        check = mvi.last_check
        if previous is not None:
            e_prev, v_prev = previous
            vbar = 0.5 * (v_prev + v)
            defect = energy - e_prev - impulse @ vbar
            assert check['energy_checked']
            agree = 1e-11 * max(1.0, abs(energy))
            assert abs(check['defect'] - defect) <= agree
            assert abs(check['defect']) <= check['defect_bound']
            constraint_work.append(abs(constraint_impulse @ vbar) / agree)
        previous = energy, v
    print('\nfour-bar (%s): constraint work / agreement asked: median %.3g, max %.3g'
          % ('compiled' if fast else 'general', np.median(constraint_work),
             np.max(constraint_work)))
    assert np.median(constraint_work) > 1e3
