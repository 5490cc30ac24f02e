"""Free joints: the chart, the moving-chart step, and rigid bodies against closed forms.

A free joint (ros_vi.mechanics.free) is a translation and three chart angles on a chart of
SO(3) that every step moves to its start.  Checked here: the chart's formulas against
finite differences; the compiled and general paths against each other; the torque-free
rigid body against Euler's closed-form solution (the intermediate-axis flip) and the
conservation laws the discrete Noether theorem promises (total linear and angular momentum
to rounding); a floating robot in zero gravity and a falling one.
"""
import numpy as np
import pytest
from scipy.special import ellipk

import ros_vi as trep
from ros_vi.integrators import general_step
from ros_vi.mechanics import FreeJoint
from ros_vi.mechanics.free import (body_rate_matrix, centre_partials,
                                   centre_partials_derivatives, xyz_angles, xyz_rotation)

INERTIA = np.diag([1.0, 2.0, 3.0])      # three distinct principal moments [kg m^2]


def rigid_body(inertia=INERTIA, mass=2.0):
    system = trep.System()
    joint = FreeJoint(system.world_frame, 'body')
    joint.body.set_inertia(mass, inertia)
    return system, joint


def floating_robot(gravity=None):
    """A free base with a two-link arm and an actuated wheel (inputs on the three joints)."""
    system = trep.System()
    joint = FreeJoint(system.world_frame, 'base')
    joint.body.set_inertia(3.0, np.diag([0.05, 0.08, 0.1]))
    shoulder = trep.Frame(joint.body, trep.RY, 'shoulder')
    upper = trep.Frame(shoulder, trep.CONST_SE3, _offset(0.2, 0.05, -0.1))
    upper.set_inertia(0.7, np.diag([0.01, 0.012, 0.004]))
    elbow = trep.Frame(upper, trep.RX, 'elbow')
    lower = trep.Frame(elbow, trep.CONST_SE3, _offset(0.0, 0.1, -0.25))
    lower.set_inertia(0.4, np.diag([0.006, 0.005, 0.002]))
    wheel_axis = trep.Frame(joint.body, trep.CONST_SE3, _offset(-0.1, 0.0, 0.05))
    wheel = trep.Frame(wheel_axis, trep.RZ, 'wheel')
    wheel.set_inertia(0.5, np.diag([0.002, 0.002, 0.004]))
    for name in ('shoulder', 'elbow', 'wheel'):
        trep.forces.ConfigForce(system, name, name)
    if gravity is not None:
        trep.potentials.Gravity(system, gravity)
    return system, joint


def _offset(x, y, z):
    g = np.eye(4)
    g[:3, 3] = (x, y, z)
    return g


def _rotation(rng):
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.linalg.det(q))


def world_momentum(vi, joint):
    """Total linear and angular momentum (about the world origin) in the world frame: the
    discrete momentum map ``(p_x, x × p_x + R_ref p_rot)`` at the chart's centre."""
    vi.recenter()
    idx = [c.index for c in joint.configs]
    p = vi.p2
    x = vi.q2[idx[:3]]
    R = joint.reference_attitude
    linear = p[idx[:3]]
    return linear, np.cross(x, linear) + R @ p[idx[3:]]


def centre_of_mass(system, q):
    system.q = q
    total = 0.0
    acc = np.zeros(3)
    for frame in system.masses:
        acc += frame.mass * frame.p()[:3]
        total += frame.mass
    return acc / total


# ---------------------------------------------------------------------------- the chart
def test_chart_inverse_and_body_rates_match_finite_differences():
    rng = np.random.default_rng(0)
    for _ in range(5):
        angles = rng.uniform(-1.2, 1.2, 3)
        R = xyz_rotation(angles)
        assert np.abs(R.T @ R - np.eye(3)).max() < 1e-15
        assert np.abs(xyz_angles(R) - angles).max() < 1e-14
        rates = rng.normal(size=3)
        h = 1e-6
        dR = (xyz_rotation(angles + h * rates) - xyz_rotation(angles - h * rates)) / (2 * h)
        W = R.T @ dR
        omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
        assert np.abs(omega - body_rate_matrix(angles) @ rates).max() < 1e-9
    assert abs(np.linalg.det(body_rate_matrix(np.array([0.3, 1.1, -0.7]))) - np.cos(1.1)) \
        < 1e-15


def _moved_midpoint(delta, c, dt):
    """The midpoint angles and rates in the unmoved chart of the step to the end attitude
    E(c) from a start turned by the body-fixed rotation ``delta`` (by rotations alone)."""
    start = xyz_rotation(delta)
    c_new = xyz_angles(start.T @ xyz_rotation(c))
    mid = xyz_angles(start @ xyz_rotation(0.5 * c_new))
    omega = body_rate_matrix(0.5 * c_new) @ c_new / dt
    return mid, np.linalg.solve(body_rate_matrix(mid), omega)


def test_centre_partials_match_finite_differences():
    rng = np.random.default_rng(1)
    dt = 0.05
    for c in (np.zeros(3), rng.normal(size=3) * 0.3, rng.normal(size=3) * 0.05):
        A, B = centre_partials(c, dt)
        h = 1e-6
        An, Bn = np.zeros((3, 3)), np.zeros((3, 3))
        for j in range(3):
            d = np.zeros(3)
            d[j] = h
            mp, vp = _moved_midpoint(d, c, dt)
            mm, vm = _moved_midpoint(-d, c, dt)
            An[:, j] = (mp - mm) / (2 * h)
            Bn[:, j] = (vp - vm) / (2 * h)
        assert np.abs(A - An).max() < 1e-8
        assert np.abs(B - Bn).max() < 1e-8 * max(1.0, np.abs(B).max())
        dA, dB = centre_partials_derivatives(c, dt)
        for k in range(3):
            e = np.zeros(3)
            e[k] = h
            Ap, Bp = centre_partials(c + e, dt)
            Am, Bm = centre_partials(c - e, dt)
            assert np.abs(dA[:, :, k] - (Ap - Am) / (2 * h)).max() < 1e-7
            assert np.abs(dB[:, :, k] - (Bp - Bm) / (2 * h)).max() < 1e-7 * np.abs(B).max()
    A, B = centre_partials(np.zeros(3), dt)
    assert np.abs(A - 0.5 * np.eye(3)).max() == 0.0
    assert np.abs(B + np.eye(3) / dt).max() < 1e-12


def test_newton_jacobian_of_the_moving_chart_matches_finite_differences():
    system, joint = floating_robot(gravity=(0.0, 0.0, -9.81))
    rng = np.random.default_rng(2)
    joint.set_pose(np.block([[_rotation(rng), rng.normal(size=(3, 1))],
                             [np.zeros((1, 3)), np.ones((1, 1))]]))
    step = general_step.GeneralStep(system)
    q1 = system.q
    q1[[c.index for c in joint.configs[:3]]] = rng.normal(size=3)
    q1[6:] = rng.normal(size=system.nQ - 6)
    p1 = rng.normal(size=system.nQ)
    dt = 0.05
    step.begin(0.0, dt, q1, p1, rng.normal(size=system.nu))
    delta = rng.normal(size=system.nQ) * 0.1
    J = None
    for _ in range(2):          # the Jacobian at delta, then finite differences around it
        step.residual(delta, np.zeros(0))
        J = general_step.newton_jacobian(system, dt, delta)
    h = 1e-6
    Jn = np.zeros_like(J)
    for j in range(system.nQ):
        d = np.zeros(system.nQ)
        d[j] = h
        Jn[:, j] = (step.residual(delta + d, np.zeros(0))
                    - step.residual(delta - d, np.zeros(0))) / (2 * h)
    assert np.abs(J - Jn).max() < 1e-7 * np.abs(J).max()


def test_recenter_changes_coordinates_not_the_state():
    system, joint = floating_robot()
    vi = trep.MidpointVI(system, min_iterations=1)
    rng = np.random.default_rng(3)
    vi.initialize_from_state(0.0, np.zeros(system.nQ), rng.normal(size=system.nQ))
    for k in range(3):
        vi.step(vi.t2 + 0.02, rng.normal(size=system.nu))
    q2, p2 = vi.q2, vi.p2
    assert np.abs(q2[3:6]).max() > 1e-3           # the chart angles moved in the step
    pose = joint.pose_at(q2)
    system.q = q2
    poses = [f.g() for f in system.masses]
    system.dq = np.zeros(system.nQ)
    system.dq = np.linalg.solve(system.mass_matrix(), p2)
    twist = joint.body_twist(q2, system.dq)
    vi.recenter()
    assert np.abs(vi.q2[3:6]).max() == 0.0
    assert np.abs(joint.pose_at(vi.q2) - pose).max() < 1e-15
    system.q = vi.q2
    assert max(np.abs(f.g() - g).max() for f, g in zip(system.masses, poses)) < 1e-15
    dq = np.linalg.solve(system.mass_matrix(), vi.p2)
    for new, old in zip(joint.body_twist(vi.q2, dq), twist):
        assert np.abs(new - old).max() < 1e-13
    assert np.abs(vi.q2[6:] - q2[6:]).max() == 0.0 and np.abs(vi.p2[6:] - p2[6:]).max() == 0.0


def test_compiled_and_general_paths_take_the_same_steps():
    runs = []
    for fast in (True, False):
        system, joint = floating_robot(gravity=(0.0, 0.0, -9.81))
        vi = trep.MidpointVI(system, tolerance=1e-12, fast=fast, min_iterations=1)
        assert vi.compiled == fast
        rng = np.random.default_rng(4)
        vi.initialize_from_state(0.0, np.zeros(system.nQ), rng.normal(size=system.nQ))
        for k in range(50):
            vi.step(vi.t2 + 0.01, np.sin(0.1 * k + np.arange(system.nu)))
        runs.append((vi.q2, vi.p2, joint.reference_attitude))
    for a, b in zip(*runs):
        assert np.abs(a - b).max() < 1e-10


def test_the_compiled_steps_reuse_of_the_chart_partials_changes_no_root():
    """The compiled step keeps the chart partials' derivatives (W_CHART) between steps
    while the increment stays within free.CHART_REUSE: emptying that cache before every
    step (so every step takes them afresh) must give the same roots, iteration for
    iteration, on a fast tumble with moving joints; and the cache is in use (taken at an
    earlier step's increment)."""
    from ros_vi.integrators import packed
    runs = []
    for fresh in (False, True):
        system, joint = floating_robot(gravity=(0.0, 0.0, -9.81))
        vi = trep.MidpointVI(system, tolerance=1e-12)
        rng = np.random.default_rng(5)
        dq = rng.normal(size=system.nQ)
        dq[3:6] = (4.0, -3.0, 5.0)                      # body rates [rad/s]
        system.dq = dq
        vi.initialize_from_state(0.0, np.zeros(system.nQ), system.mass_matrix() @ dq)
        _, (I, F, W) = vi.stepper.packed_call()
        o = packed.layout(I)
        cache = W[o[packed.W_CHART]:o[packed.W_END]]
        iterations, reused = [], 0
        for k in range(300):
            if fresh:
                cache[:] = 0.0
            before = cache.copy()
            iterations.append(vi.step(vi.t2 + 0.001, np.sin(0.1 * k + np.arange(system.nu))))
            reused += np.array_equal(before, cache) and before[3] != 0.0
        runs.append((vi.q2, vi.p2, joint.reference_attitude, iterations, reused))
    (q_a, p_a, R_a, it_a, reused_a), (q_b, p_b, R_b, it_b, reused_b) = runs
    assert reused_a > 50 and reused_b == 0
    assert it_a == it_b
    assert np.abs(q_a - q_b).max() < 1e-11 and np.abs(p_a - p_b).max() < 1e-10
    assert np.abs(R_a - R_b).max() < 1e-11


# ------------------------------------------------------------------ torque-free rigid body
def flip_half_period(inertia, omega):
    """Half the period of the body angular velocity of a torque-free rigid body (Euler's
    equations solved with Jacobi elliptic functions; Landau & Lifshitz, Mechanics, 37):
    the time between two flips of the intermediate axis."""
    I1, I2, I3 = np.diag(inertia)
    two_E = float(omega @ inertia @ omega)
    L2 = float(np.sum((inertia @ omega) ** 2))
    if L2 < two_E * I2:
        I1, I3 = I3, I1           # the other family: swap the roles of the outer axes
    rate = np.sqrt((I3 - I2) * (L2 - two_E * I1) / (I1 * I2 * I3))
    k2 = (I2 - I1) * (two_E * I3 - L2) / ((I3 - I2) * (L2 - two_E * I1))
    return 2.0 * ellipk(k2) / rate


def test_intermediate_axis_flips_with_the_closed_form_period():
    system, joint = rigid_body()
    omega0 = np.array([0.02, 1.0, 0.01])          # near the intermediate axis
    dt = 1e-3
    vi = trep.MidpointVI(system, tolerance=1e-12, min_iterations=1)
    vi.initialize_from_state(0.0, np.zeros(6), np.concatenate([np.zeros(3),
                                                               INERTIA @ omega0]))
    crossings = []
    last = omega0[1]
    while len(crossings) < 4:
        vi.step(vi.t2 + dt)
        vi.recenter()
        w2 = vi.p2[4] / INERTIA[1, 1]      # body angular velocity about the middle axis
        if np.sign(w2) != np.sign(last):
            crossings.append(vi.t2 - dt * w2 / (w2 - last))
        last = w2
        assert vi.t2 < 200.0
    expected = flip_half_period(INERTIA, omega0)
    spacing = np.diff(crossings)
    assert np.abs(spacing / expected - 1.0).max() < 1e-5, (spacing, expected)


def test_torque_free_body_conserves_momentum_to_rounding_over_1e5_steps():
    system, joint = rigid_body()
    rng = np.random.default_rng(5)
    pose = np.eye(4)
    pose[:3, :3] = _rotation(rng)
    joint.set_pose(pose)
    omega0 = np.array([0.5, 2.0, 0.3])
    # two Newton updates a step at least: the DEL solved to its rounding floor, so the
    # momenta move by rounding only (one update leaves ~1e-17 a step, which adds up)
    vi = trep.MidpointVI(system, tolerance=1e-12, min_iterations=2)
    assert vi.compiled
    vi.initialize_from_state(0.0, system.q, np.concatenate([np.zeros(3), INERTIA @ omega0]))
    P0, L0 = world_momentum(vi, joint)
    dt = 0.01
    pitch = []
    for k in range(100_000):
        vi.step(vi.t2 + dt)
        if k % 97 == 0:
            pitch.append(xyz_angles(joint.reference_attitude)[1])
    P, L = world_momentum(vi, joint)
    assert np.abs(L - L0).max() <= 1e-12 * np.linalg.norm(L0)
    assert np.abs(P - P0).max() == 0.0
    R = joint.reference_attitude
    assert np.abs(R.T @ R - np.eye(3)).max() < 1e-15
    # it tumbled through attitudes where three fixed angles would be singular
    assert max(np.abs(pitch)) > np.radians(85.0)


def test_energy_of_a_tumbling_body_does_not_drift():
    system, joint = rigid_body()
    omega0 = np.array([0.1, 3.0, 0.2])
    vi = trep.MidpointVI(system, tolerance=1e-12, min_iterations=1)
    vi.initialize_from_state(0.0, np.zeros(6), np.concatenate([np.zeros(3), INERTIA @ omega0]))
    inverse = np.linalg.inv(INERTIA)

    def energy():
        vi.recenter()
        p = vi.p2[3:]
        return 0.5 * p @ inverse @ p
    E0 = energy()
    deviation = []
    for block in range(10):         # 10 x 1e5 steps: 20,000 s, about 9,500 turns
        worst = 0.0
        for k in range(100_000):
            vi.step(vi.t2 + 0.02)
            if k % 500 == 0:
                worst = max(worst, abs(energy() - E0))
        deviation.append(worst / E0)
    # bounded (the midpoint rule's O(dt^2) oscillation), not growing block after block:
    # the last blocks' worst deviation is no larger than the first's
    assert max(deviation) < 5e-3
    assert max(deviation[-3:]) < 1.2 * deviation[0]


# ------------------------------------------------------------------------ floating robots
def _zero_gravity_run(dt, duration=5.0):
    """A floating robot in zero gravity driving its joints from rest: (momentum at the
    start and end, largest centre-of-mass excursion [m], largest joint excursion [rad],
    largest momentum)."""
    system, joint = floating_robot()
    vi = trep.MidpointVI(system, tolerance=1e-12, min_iterations=2)
    assert vi.compiled
    vi.initialize_from_state(0.0, np.zeros(system.nQ), np.zeros(system.nQ))
    start = world_momentum(vi, joint)
    com0 = centre_of_mass(system, vi.q2)
    reach = drift = scale = 0.0
    for k in range(int(round(duration / dt))):
        t = vi.t2
        u = np.array([2.0 * np.sin(3 * t), 1.5 * np.cos(5 * t), 0.3 * np.sin(2 * t)])
        vi.step(t + dt, u)
        if k % 10 == 0:
            vi.recenter()
            drift = max(drift, np.abs(centre_of_mass(system, vi.q2) - com0).max())
            reach = max(reach, np.abs(vi.q2[6:]).max())
            scale = max(scale, np.abs(vi.p2).max())
    return start, world_momentum(vi, joint), drift, reach, scale


def test_floating_robot_in_zero_gravity_conserves_momentum_and_keeps_its_com():
    (P0, L0), (P, L), drift, reach, scale = _zero_gravity_run(1e-3)
    assert reach > 1.0                             # the arm and wheel really moved
    # internal torques: total linear and angular momentum stay zero to rounding
    assert np.abs(P - P0).max() <= 1e-12 * scale
    assert np.abs(L - L0).max() <= 1e-12 * scale
    # the centre of mass stays, up to the midpoint rule's O(dt^2) error on the internal
    # motion (the discrete momentum is exactly zero, the positions' midpoint average is not
    # exactly the centre of mass): a few micrometres at 1 ms, four times less at 0.5 ms
    assert drift < 5e-6
    drift_half = _zero_gravity_run(5e-4)[2]
    assert 3.0 < drift / drift_half < 5.0


def test_falling_robot_momentum_and_com_follow_free_fall():
    g = np.array([0.0, 0.0, -9.81])
    system, joint = floating_robot(gravity=g)
    mass = sum(f.mass for f in system.masses)
    vi = trep.MidpointVI(system, tolerance=1e-12, min_iterations=1)
    rng = np.random.default_rng(6)
    p0 = rng.normal(size=system.nQ) * 0.2
    vi.initialize_from_state(0.0, np.zeros(system.nQ), p0)
    P0, _ = world_momentum(vi, joint)
    com0 = centre_of_mass(system, vi.q2)
    dt = 1e-3
    for k in range(2000):
        vi.step(vi.t2 + dt, np.array([0.5 * np.sin(4 * vi.t2), 0.2, -0.1]))
    P, _ = world_momentum(vi, joint)
    t = vi.t2
    # linear momentum: exactly P0 + m g t (gravity is the only external force)
    assert np.abs(P - (P0 + mass * g * t)).max() < 1e-11 * np.abs(P).max()
    com = centre_of_mass(system, vi.q2)
    expected = com0 + P0 / mass * t + 0.5 * g * t * t
    assert np.abs(com - expected).max() < 1e-5


# ------------------------------------------------------------------------------ errors
def test_bad_free_joints_are_refused_clearly():
    system = trep.System()
    with pytest.raises(ValueError, match='non-empty name'):
        FreeJoint(system.world_frame, '')
    joint = FreeJoint(system.world_frame, 'box')
    joint.body.set_inertia(1.0, np.eye(3))
    with pytest.raises(ValueError, match="'box'.*4x4"):
        joint.set_pose(np.eye(3))
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(ValueError, match='rigid transform'):
        joint.set_pose(bad)
    vi = trep.MidpointVI(system)
    vi.initialize_from_state(0.0, np.zeros(6), np.ones(6))
    vi.step(0.01)
    assert vi.q2_dq1().shape == (6, 6)
    assert vi.q2_dq1dq1().shape == (6, 6, 6)
    from ros_vi.discopt import DSystem
    dsys = DSystem(vi, np.arange(0.0, 0.1, 0.01))
    with pytest.raises(ValueError, match=r'charts must have shape \(10, 1, 3, 3\)'):
        dsys.charts = np.eye(3)


# --------------------------------------------------------------------------- derivatives
def _step_from(system, joint, fast, R0, q0, p0, u, dt):
    """One step from (q0, p0) with the reference attitude R0: the result (q2, p2) and the
    reference attitude the step left."""
    vi = trep.MidpointVI(system, tolerance=1e-13, fast=fast, min_iterations=2)
    pose = np.eye(4)
    pose[:3, :3] = R0
    joint.reference_frame.transform_value = pose
    vi.initialize_from_state(0.0, q0, p0)
    vi.step(dt, u)
    return vi, vi.q2, vi.p2, joint.reference_attitude


@pytest.mark.parametrize('fast', [True, False])
def test_step_derivatives_with_free_joints_match_finite_differences(fast):
    system, joint = floating_robot(gravity=(0.0, 0.0, -9.81))
    rng = np.random.default_rng(7)
    R0 = _rotation(rng)
    q0 = rng.normal(size=system.nQ) * 0.3          # angles off the chart's centre too
    p0 = rng.normal(size=system.nQ)
    u = rng.normal(size=system.nu)
    dt = 0.02
    vi, q2, p2, R2 = _step_from(system, joint, fast, R0, q0, p0, u, dt)
    assert vi.compiled == fast
    _check_first_derivatives(vi, system, joint, fast, R0, q0, p0, u, dt, R2.copy())


def _check_first_derivatives(vi, system, joint, fast, R0, q0, p0, u, dt, R2):
    """``vi``'s first derivatives of its step from (q0, p0, u) against central differences
    of the step retaken from perturbed starts (each result in the nominal step's charts
    ``R2``; as many substeps as the nominal step took)."""
    exact = {name: getattr(vi, name)() for name in
             ('q2_dq1', 'q2_dp1', 'q2_du1', 'p2_dq1', 'p2_dp1', 'p2_du1')}
    substeps = vi.last_substeps
    h = 1e-6

    def run(dq=0.0, dp=0.0, du=0.0):
        v, q, p, R = _step_from(system, joint, fast, R0, q0 + dq, p0 + dp, u + du, dt)
        assert v.last_substeps == substeps
        q, p = q.copy(), p.copy()
        # the perturbed step's result in the nominal step's charts
        system.free_charts.express(R[None], R2[None], q, p)
        return q, p
    for block, n in (('dq1', system.nQ), ('dp1', system.nQ), ('du1', system.nu)):
        numeric_q = np.zeros((system.nQ, n))
        numeric_p = np.zeros((system.nQ, n))
        for j in range(n):
            e = np.zeros(n)
            e[j] = h
            key = {'dq1': 'dq', 'dp1': 'dp', 'du1': 'du'}[block]
            qp, pp = run(**{key: e})
            qm, pm = run(**{key: -e})
            numeric_q[:, j] = (qp - qm) / (2 * h)
            numeric_p[:, j] = (pp - pm) / (2 * h)
        for out, numeric in (('q2', numeric_q), ('p2', numeric_p)):
            A = exact[out + '_' + block]
            assert np.abs(A - numeric).max() < 1e-6 * max(1.0, np.abs(A).max()), (out, block)


@pytest.mark.parametrize('fast', [True, False])
def test_second_step_derivatives_with_free_joints_match_second_differences(fast):
    """All second derivatives of a step of the floating robot (its start off the chart's
    centre, so the charts move) against second differences of the step's result in the
    nominal step's charts, and symmetric in their two inputs."""
    system, joint = floating_robot(gravity=(0.0, 0.0, -9.81))
    charts = system.free_charts
    rng = np.random.default_rng(11)
    R0 = _rotation(rng)
    q0 = rng.normal(size=system.nQ) * 0.3
    p0 = rng.normal(size=system.nQ)
    u = rng.normal(size=system.nu)
    dt = 0.02
    vi, q2, p2, R2 = _step_from(system, joint, fast, R0, q0, p0, u, dt)
    R2 = R2.copy()
    x0 = np.concatenate([q0, p0, u])
    nq, nd = system.nQ, system.nQd
    exact = {}
    for out in ('q2', 'p2'):
        for a, b in (('q1', 'q1'), ('q1', 'p1'), ('q1', 'u1'), ('p1', 'p1'), ('p1', 'u1'),
                     ('u1', 'u1')):
            exact[out, a, b] = getattr(vi, '%s_d%sd%s' % (out, a, b))()
    assert exact['q2', 'q1', 'q1'].shape == (nq, nq, nd)
    # symmetric in the two inputs (central differences of exact first derivatives)
    for out in ('q2', 'p2'):
        for a in ('q1', 'p1', 'u1'):
            Z = exact[out, a, a]
            assert np.abs(Z - Z.transpose(1, 0, 2)).max() < 1e-8 * max(1.0, np.abs(Z).max())

    def result(x):
        _, q, p, R = _step_from(system, joint, fast, R0, x[:nq], x[nq:nq + nd],
                                x[nq + nd:], dt)
        q, p = q.copy(), p.copy()
        charts.express(R[None], R2[None], q, p)
        return np.concatenate([q[:nd], p])
    h = 1e-4
    picks = rng.choice(x0.size, size=(40, 2))       # 40 random entries of the full table
    worst = 0.0
    for i, j in picks:
        ei, ej = np.zeros(x0.size), np.zeros(x0.size)
        ei[i], ej[j] = h, h
        second = (result(x0 + ei + ej) - result(x0 + ei - ej) - result(x0 - ei + ej)
                  + result(x0 - ei - ej)) / (4 * h * h)
        (a, ia), (b, jb) = _block_of(i, nq, nd), _block_of(j, nq, nd)
        if (a, b) not in {(k[1], k[2]) for k in exact}:
            (a, ia), (b, jb) = (b, jb), (a, ia)
        for k, out in enumerate(('q2', 'p2')):
            want = exact[out, a, b][ia, jb]
            got = second[k * nd:(k + 1) * nd]
            scale = max(1.0, np.abs(exact[out, a, b]).max())
            worst = max(worst, np.abs(want - got).max() / scale)
    assert worst < 1e-5, worst


def _block_of(k, nq, nd):
    """(block name, index in it) of entry ``k`` of x = (q1 (nq,), p1 (nd,), u1)."""
    if k < nq:
        return 'q1', k
    if k < nq + nd:
        return 'p1', k - nq
    return 'u1', k - nq - nd


def quadrotor():
    """A 1 kg rigid body with four rotors pushing along its z axis at 0.2 m and a yaw
    torque: five inputs (BodyWrench; the general path)."""
    system = trep.System()
    joint = FreeJoint(system.world_frame, 'drone')
    joint.body.set_inertia(1.0, np.diag([0.01, 0.01, 0.02]))
    for k, (x, y) in enumerate(((0.2, 0.0), (-0.2, 0.0), (0.0, 0.2), (0.0, -0.2))):
        rotor = trep.Frame(joint.body, trep.CONST_SE3, _offset(x, y, 0.0), name='rotor%d' % k)
        trep.forces.BodyWrench(system, rotor, (0, 0, 'thrust%d' % k))
    trep.forces.BodyWrench(system, joint.body, (0, 0, 0, 0, 0, 'yaw'))
    trep.potentials.Gravity(system, (0.0, 0.0, -9.81))
    return system, joint


def test_lqr_hover_of_a_quadrotor_recovers_from_half_a_metre_and_30_degrees():
    from ros_vi.control.lqr import find_equilibrium, linearize, lqr_gain
    system, joint = quadrotor()
    charts = system.free_charts
    dt = 0.01
    inputs = list(range(system.nu))
    hover = find_equilibrium(system, dt, np.zeros(6), inputs)
    assert abs(hover.u[:4].sum() - 9.81) < 1e-9        # the rotors carry the weight
    A, B = linearize(system, dt, hover, inputs)
    K, _ = lqr_gain(A, B, np.diag([10.0] * 6 + [1.0] * 6), np.eye(system.nu))
    goal = np.eye(3)[None]

    # start 0.5 m away, turned 30 degrees about a horizontal axis, at rest
    axis = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    angle = np.radians(30.0)
    W = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    pose = np.eye(4)
    pose[:3, :3] = np.eye(3) + np.sin(angle) * W + (1 - np.cos(angle)) * W @ W
    pose[:3, 3] = (0.3, 0.0, -0.4)                # 0.5 m off, below the goal
    joint.set_pose(pose)
    plant = trep.MidpointVI(system, min_iterations=1)
    plant.initialize_from_state(0.0, system.q, np.zeros(6))
    for k in range(600):
        # the plant's state in the goal's chart: the law's error coordinates
        q, p = plant.q2.copy(), plant.p2.copy()
        charts.express(charts.attitudes(system.model), goal, q, p)
        u = hover.u - K @ np.concatenate([q - hover.q, p - hover.p])
        plant.step(plant.t2 + dt, u)
    q, p = plant.q2.copy(), plant.p2.copy()
    charts.express(charts.attitudes(system.model), goal, q, p)
    assert np.abs(q).max() < 1e-3                 # back over the origin, level
    assert np.abs(p - hover.p).max() < 1e-3


def test_the_lqr_class_hovers_a_quadrotor_in_the_closed_loop_from_any_heading():
    """The LQR class about a hover whose attitude is yawed 120 degrees
    (the goal given as chart angles): the design system's charts move to the goal, the
    plant's state comes in with its own charts' attitudes (the plant recentres every step),
    and the loop brings the drone back from 0.5 m and 30 degrees off."""
    from ros_vi.control import LQR
    from ros_vi.simulation import simulate
    design, _ = quadrotor()
    inputs = [i.name for i in design.inputs]
    goal = np.array([1.0, -2.0, 3.0, 0.0, 0.0, np.radians(120.0)])
    law = LQR(design, 0.01, goal, Q=[10.0] * 6 + [1.0] * 6, inputs=inputs, u_max=100.0)
    assert law.spectral_radius < 1.0
    goal_pose = _chart_pose(goal)
    plant, joint = quadrotor()
    off = goal_pose.copy()
    axis = np.array([1.0, -1.0, 0.0]) / np.sqrt(2.0)
    off[:3, :3] = goal_pose[:3, :3] @ _axis_angle(axis, np.radians(30.0))
    off[:3, 3] += (0.3, 0.0, -0.4)
    joint.set_pose(off)
    result = simulate(law, plant, 6.0, plant.q.copy(), np.zeros(6))
    plant.q = result.q[-1]
    pose = joint.body.g()
    assert np.abs(pose[:3, 3] - goal[:3]).max() < 1e-3
    assert np.abs(pose[:3, :3] - goal_pose[:3, :3]).max() < 1e-3
    assert np.abs(result.v[-1]).max() < 1e-3


def _chart_pose(q):
    """The pose (4, 4) of chart coordinates ``q`` (6,) about the identity attitude."""
    g = np.eye(4)
    g[:3, :3] = xyz_rotation(np.ascontiguousarray(q[3:]))
    g[:3, 3] = q[:3]
    return g


def _axis_angle(axis, angle):
    W = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * W + (1 - np.cos(angle)) * W @ W


def test_a_state_expressed_in_other_charts_is_the_same_motion():
    """``express`` moves q, p and v to charts about other attitudes: the body's pose and
    twist are unchanged, and p = M(q) v holds in the new charts as in the old."""
    system, joint = rigid_body()
    charts = system.free_charts
    rng = np.random.default_rng(3)
    old, new = _rotation(rng)[None], _rotation(rng)[None]
    q, v = rng.normal(size=6) * 0.4, rng.normal(size=6)

    def motion(attitudes, q, v):
        charts.set_attitudes(attitudes)
        system.q, system.dq = q, v
        return joint.body.g().copy(), joint.body.vb().copy(), system.mass_matrix() @ v
    pose, twist, p = motion(old, q, v)
    q2, v2, p2 = q.copy(), v.copy(), p.copy()
    charts.express(old, new, q2, p2, v2)
    pose2, twist2, p_new = motion(new, q2, v2)
    assert np.abs(pose2 - pose).max() < 1e-14
    assert np.abs(twist2 - twist).max() < 1e-13
    assert np.abs(p_new - p2).max() < 1e-13


def test_a_subdivided_step_keeps_the_momentum_and_its_charts():
    system, joint = rigid_body()
    omega0 = np.array([0.3, 20.0, 0.5])           # 4 rad in one 0.2 s step: too coarse
    vi = trep.MidpointVI(system, tolerance=1e-12, min_iterations=2)
    vi.initialize_from_state(0.0, np.zeros(6), np.concatenate([np.zeros(3), INERTIA @ omega0]))
    P0, L0 = world_momentum(vi, joint)
    substeps = []
    for k in range(20):
        vi.step(vi.t2 + 0.2)
        substeps.append(vi.last_substeps)
        R = joint.reference_attitude
        assert np.abs(R.T @ R - np.eye(3)).max() < 1e-14
    assert max(substeps) > 1
    P, L = world_momentum(vi, joint)
    assert np.abs(L - L0).max() < 1e-12 * np.linalg.norm(L0)


@pytest.mark.parametrize('fast', [True, False])
def test_derivatives_of_a_subdivided_step_with_free_joints_match_finite_differences(fast):
    """A step too coarse for one Newton solve is taken as substeps, each in its own charts:
    its derivatives chain the substeps' (from the step's start before its charts moved to
    the last substep's result), against central differences of the whole step; its second
    derivatives are symmetric."""
    system, joint = floating_robot(gravity=(0.0, 0.0, -9.81))
    rng = np.random.default_rng(13)
    R0 = _rotation(rng)
    q0 = rng.normal(size=system.nQ) * 0.3
    p0 = rng.normal(size=system.nQ)
    p0[3:6] = (0.2, 2.0, 0.3)                      # spinning: a 0.2 s step is too coarse
    u = rng.normal(size=system.nu)
    dt = 0.2
    vi, q2, p2, R2 = _step_from(system, joint, fast, R0, q0, p0, u, dt)
    assert vi.last_substeps > 1
    Zq = vi.q2_dq1dq1()
    assert np.abs(Zq - Zq.transpose(1, 0, 2)).max() < 1e-7 * max(1.0, np.abs(Zq).max())
    _check_first_derivatives(vi, system, joint, fast, R0, q0, p0, u, dt, R2.copy())


# ------------------------------------------------------------------ DSystem and DOptimizer
def _floating_dsystem(fast, seed=3):
    """The floating robot under gravity as a DSystem on 11 steps of 20 ms, every time
    index with its own random chart."""
    from ros_vi import discopt
    system, joint = floating_robot(gravity=(0.0, 0.0, -9.81))
    dsys = discopt.DSystem(trep.MidpointVI(system, tolerance=1e-12, fast=fast),
                           np.linspace(0.0, 0.2, 11))
    rng = np.random.default_rng(seed)
    charts = dsys.charts
    assert charts.shape == (11, 1, 3, 3)
    for k in range(len(charts)):
        charts[k, 0] = _rotation(rng)
    dsys.charts = charts
    return dsys, system, joint, rng


@pytest.mark.parametrize('fast', [True, False])
def test_dsystem_derivatives_with_free_joints_match_finite_differences(fast):
    """f = the step, from X(k) in the chart of time k to X(k+1) in the chart of time k+1
    (charts far apart, angles off their centres): all its first and second derivatives
    against central differences."""
    dsys, system, joint, rng = _floating_dsystem(fast)
    X = rng.normal(size=dsys.nX) * 0.3
    U = rng.normal(size=dsys.nU)
    for name, bound in (('check_fdx', 1e-8), ('check_fdu', 1e-8), ('check_fdxdx', 1e-6),
                        ('check_fdxdu', 1e-5), ('check_fdudu', 1e-5)):
        r = getattr(dsys, name)(X, U, 4)
        assert r.exact_norm > 0.0
        assert r.error < bound * r.exact_norm, (name, r)


def test_dsystem_states_are_the_integrators_motion_in_their_charts():
    """X(k+1) = f() in the chart of time k+1 is the integrator's own step: the same pose
    and body twist; step() continues from it; centre_charts moves every chart onto its
    state (angles 0) without changing the motion."""
    dsys, system, joint, rng = _floating_dsystem(True, seed=4)
    X0 = rng.normal(size=dsys.nX) * 0.3
    U = rng.normal(size=(10, dsys.nU))
    dsys.set(X0, U[0], 0)
    vi = dsys.varint
    pose, twist = _pose_and_twist(system, joint, vi.q2, vi.p2)
    X1 = dsys.f()
    joint.reference_frame.transform_value = _se3_of(dsys.charts[1, 0])
    pose1, twist1 = _pose_and_twist(system, joint, X1[:system.nQ], X1[system.nQ:])
    assert np.abs(pose1 - pose).max() < 1e-13
    assert max(np.abs(a - b).max() for a, b in zip(twist1, twist)) < 1e-12
    X, _ = dsys.project(np.tile(X0, (11, 1)), U, Kproj=np.zeros((10, dsys.nU, dsys.nX)))
    assert np.abs(X[1] - X1).max() == 0.0
    charts = dsys.charts
    centred = dsys.centre_charts(X)
    rot = [c.index for c in joint.rotation_configs]
    assert np.abs(centred[:, rot]).max() == 0.0
    for k in (0, 5, 10):
        poses = []
        for chart, x in ((charts[k], X[k]), (dsys.charts[k], centred[k])):
            joint.reference_frame.transform_value = _se3_of(chart[0])
            poses.append(_pose_and_twist(system, joint, x[:system.nQ], x[system.nQ:]))
        assert np.abs(poses[0][0] - poses[1][0]).max() < 1e-13
        assert max(np.abs(a - b).max() for a, b in zip(poses[0][1], poses[1][1])) < 1e-12
    with pytest.raises(ValueError, match=r'charts\[2, 0\].*not a rotation'):
        bad = dsys.charts
        bad[2, 0] *= 2.0
        dsys.charts = bad


def _se3_of(R):
    g = np.eye(4)
    g[:3, :3] = R
    return g


def _pose_and_twist(system, joint, q, p):
    """The base's pose (4, 4) and body twist at (q, p) in the System's current charts."""
    system.q = q
    system.dq = np.zeros(system.nQ)
    dq = np.linalg.solve(system.mass_matrix(), p)
    return joint.pose_at(q), joint.body_twist(q, dq)


def test_doptimizer_slews_a_satellite_through_ninety_degrees_of_pitch(tmp_path):
    """Trajectory optimisation on SO(3): a rigid body with three body torques turns 120
    degrees about its y axis in 1.5 s, through the pitch of 90 degrees where the angles of
    any single chart are singular, each time index in its own chart along the turn.  From
    a guess 30 % short of the torque (and biased), DOptimizer finds the exact slew: the
    trajectory the desired torques produce.  The charts travel with a saved trajectory."""
    from ros_vi import discopt
    system, joint = rigid_body()
    for c in joint.rotation_configs:
        trep.forces.ConfigForce(system, c.name, 'tau_' + c.name)
    dt, T = 0.1, 1.5
    t = np.arange(0.0, T + dt / 2, dt)
    N = len(t)
    dsys = discopt.DSystem(trep.MidpointVI(system, tolerance=1e-12), t)
    turn = np.radians(120.0) * (3 * (t / T) ** 2 - 2 * (t / T) ** 3)
    charts = dsys.charts
    for k in range(N):
        charts[k, 0] = xyz_rotation(np.array([0.0, turn[k], 0.0]))
    dsys.charts = charts
    # the rest-to-rest slew about the principal axis y (I_yy = 2 kg m^2): tau = I theta''
    tm = t[:-1] + dt / 2
    U = np.zeros((N - 1, dsys.nU))
    U[:, 1] = 2.0 * np.radians(120.0) * (6 - 12 * tm / T) / T ** 2
    open_loop = np.zeros((N - 1, dsys.nU, dsys.nX))
    Xd, Ud = dsys.project(np.zeros((N, dsys.nX)), U, Kproj=open_loop)
    rot = [c.index for c in joint.rotation_configs]
    assert np.abs(Xd[:, rot]).max() < 0.15          # the slew stays near its charts
    R_end = charts[-1, 0] @ xyz_rotation(Xd[-1, rot])
    assert np.degrees(np.arccos(R_end[0, 0])) > 110.0  # the body has turned past 90
    cost = discopt.DCost(Xd, Ud, np.diag([1.0] * 6 + [0.1] * 6), 0.01 * np.eye(dsys.nU),
                         Qf=100.0 * np.eye(dsys.nX))
    Xg, Ug = dsys.project(np.zeros((N, dsys.nX)), 0.7 * U + 0.05, Kproj=open_loop)
    assert np.abs(Xg - Xd).max() > 0.5
    opt = discopt.DOptimizer(dsys, cost, monitor=discopt.DOptimizerMonitor())
    converged, X, Uo = opt.optimize(Xg, Ug, max_steps=40)
    assert converged
    assert np.abs(X - Xd).max() < 1e-3 and np.abs(Uo - Ud).max() < 1e-3
    Xp, _ = dsys.project(X, Uo, Kproj=open_loop)     # a trajectory of the system
    assert np.abs(Xp - X).max() < 1e-8
    for name in ('slew.npz', 'slew.mat'):
        path = str(tmp_path / name)
        dsys.save_state_trajectory(path, X, Uo)
        other = discopt.DSystem(trep.MidpointVI(system), t[:3])
        Xl, Ul = other.load_state_trajectory(path)
        assert np.array_equal(other.charts, dsys.charts)
        assert np.abs(Xl - X).max() == 0.0 and np.abs(Ul - Uo).max() == 0.0
    trep.save_trajectory(str(tmp_path / 'bare.npz'), system, t, X[:, :6])
    with pytest.raises(ValueError, match="no charts for the free joints 'body'"):
        dsys.load_state_trajectory(str(tmp_path / 'bare.npz'))
