"""Position and velocity drives inside the implicit VI step (JointDrives, Simulation).

Checked against finite differences (the force's and the step's derivatives), a closed-form
solution of the midpoint recurrence of a driven mass, the general path (the compiled step
with drives to machine precision), an explicit evaluation of the same PD law (which
diverges where the implicit one converges), an effort command of the saturated size, and
on the shipped arm7 (targets reached within the documented tolerance and time).
"""
import os

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import tx
from ros_vi.mechanics.forces import JointDrives
from ros_vi.simulation import COMMAND_INTERFACES, Simulation
from ros_vi.urdf import import_urdf

import systems
import test_urdf_cases as cases

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARM7 = os.path.join(ROOT, 'urdf', 'arm7.urdf')


def urdf(name):
    return os.path.join(ROOT, 'urdf', name + '.urdf')


def driven_double_pendulum(limit1=np.inf, limit2=1.0):
    """The test double pendulum (springs, damping, one input) with drives on both configs;
    the second drive saturates at ``limit2`` for the targets below."""
    s = systems.double_pendulum()
    drives = JointDrives(s)
    drives.set_drives([1, 1], [50.0, 30.0], [2.0, 1.0], [0.3, -0.2], [0.1, 0.0],
                      [0.1, 0.0], [limit1, limit2])
    return s, drives


def mass_on_rail(m=2.0):
    """A point mass m [kg] on a prismatic config 'x' (no gravity) with an input 'u'."""
    s = trep.System()
    s.import_frames([tx('x', mass=m)])
    trep.forces.ConfigForce(s, 'x', 'u')
    return s


# ---------------------------------------------------------------------- the force
def test_drive_force_derivatives_match_finite_differences():
    s, drives = driven_double_pendulum()
    s.q = [0.1, 0.4]
    s.dq = [0.3, -0.5]
    # drive 2 saturates here (30 (-0.2 - 0.4) + 1 (0 + 0.5) = -17.5 beyond 1): derivatives 0
    assert drives.f_array()[1] == -1.0
    assert drives.f_dq_array()[1, 1] == 0.0 and drives.f_ddq_array()[1, 1] == 0.0
    assert drives.f_dq_array()[0, 0] == -50.0 and drives.f_ddq_array()[0, 0] == -2.0
    assert drives.validate_f_dq(verbose=False)
    assert drives.validate_f_ddq(verbose=False)
    assert drives.validate_f_du(verbose=False)


def test_drive_table_refusals_name_the_config_and_change_nothing():
    s, drives = driven_double_pendulum()
    before, version = drives.table.copy(), drives.version
    with pytest.raises(ValueError, match=r"config 'theta2'.*kp = -1\.0"):
        drives.set_drives([1, 1], [1.0, -1.0], [0, 0], [0, 0], [0, 0], [0, 0], [1, 1])
    with pytest.raises(ValueError, match=r"config 'theta1'.*position = nan"):
        drives.set_drives([1, 1], [1.0, 1.0], [0, 0], [np.nan, 0], [0, 0], [0, 0], [1, 1])
    with pytest.raises(ValueError, match='limit needs 2 values'):
        drives.set_drives([1, 1], [1, 1], [0, 0], [0, 0], [0, 0], [0, 0], [1])
    np.testing.assert_array_equal(drives.table, before)
    assert drives.version == version
    with pytest.raises(ValueError):
        drives.table[0, 0] = 2.0              # read only


# ---------------------------------------------------------------------- the step
@pytest.mark.parametrize('fast', [True, False])
def test_step_derivatives_with_drives_match_finite_differences(fast):
    """dq2/dq1, dq2/dp1, dp2/dq1, dp2/dp1 of a step with one linear and one saturated
    drive, against central differences of the step map."""
    s, drives = driven_double_pendulum()
    dt = 0.01
    q1, p1 = np.array([0.1, 0.4]), np.array([0.2, -0.1])
    mvi = trep.MidpointVI(s, fast=fast, tolerance=1e-13)
    assert mvi.compiled == fast

    def step(q, p):
        mvi.initialize_from_state(0.0, q, p)
        mvi.step(dt, np.zeros(s.nu))
        return mvi.q2.copy(), mvi.p2.copy()

    step(q1, p1)
    dq2 = np.hstack([mvi.q2_dq1(), mvi.q2_dp1()])
    dp2 = np.hstack([mvi.p2_dq1(), mvi.p2_dp1()])
    h = 1e-6
    fd_q, fd_p = np.zeros((2, 4)), np.zeros((2, 4))
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        qa, pa = step(q1 + e[:2], p1 + e[2:])
        qb, pb = step(q1 - e[:2], p1 - e[2:])
        fd_q[:, j] = (qa - qb) / (2 * h)
        fd_p[:, j] = (pa - pb) / (2 * h)
    np.testing.assert_allclose(dq2, fd_q, atol=1e-7)
    np.testing.assert_allclose(dp2, fd_p, atol=1e-7)


def test_newton_converges_quadratically_with_drives():
    """The exact Jacobian (drives included) takes a stiff-drive step from rest in a few
    Newton iterations; a Jacobian without the drive terms would need many."""
    s, drives = driven_double_pendulum(limit2=np.inf)
    drives.set_drives([1, 1], [5e4, 5e4], [100.0, 100.0], [0.3, -0.2], [0, 0], [0, 0],
                      [np.inf, np.inf])
    for fast in (True, False):
        mvi = trep.MidpointVI(s, fast=fast, tolerance=1e-12)
        mvi.initialize_from_state(0.0, [0.0, 0.0], [0.0, 0.0])
        assert mvi.step(0.01, np.zeros(s.nu)) <= 4


@pytest.mark.parametrize('build', ['double_pendulum', 'mimic', 'arm7'])
def test_compiled_step_with_drives_matches_the_general_path(build):
    if build == 'double_pendulum':
        s, drives = driven_double_pendulum()
        targets = None
    else:
        s = import_urdf(cases.mimic_robot() if build == 'mimic' else open(ARM7).read())
        drives = JointDrives(s)
        nd = s.nQd
        rng = np.random.default_rng(3)
        targets = rng.uniform(-0.5, 0.5, nd)
        # stiff gains; the first config saturates at 2 N m
        limits = np.full(nd, np.inf)
        limits[0] = 2.0
        drives.set_drives(np.ones(nd), np.full(nd, 400.0), np.full(nd, 5.0), targets,
                          np.zeros(nd), np.full(nd, 0.2), limits)
    runs = []
    for fast in (True, False):
        mvi = trep.MidpointVI(s, fast=fast)
        assert mvi.compiled == fast
        mvi.initialize_from_state(0.0, np.zeros(s.nQ), np.zeros(s.nQd))
        for k in range(1, 101):
            mvi.step(k * 0.005, np.zeros(s.nu))
        runs.append((mvi.q2.copy(), mvi.p2.copy()))
    (qa, pa), (qb, pb) = runs
    np.testing.assert_allclose(qa, qb, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pa, pb, rtol=0, atol=1e-11)
    assert np.abs(qa).max() > 0.05               # it moved


def test_driven_mass_follows_the_closed_form_midpoint_recurrence():
    """A mass m on a rail with drive F = kp (r - q) + kd (w - v) + f at the midpoint: the
    DEL is m (v_k - v_{k-1}) = dt F(q_{k-1} + dt v_k / 2, v_k) with v_k = (q_k -
    q_{k-1})/dt, the linear map x_k = A x_{k-1} + b on x = (q, v), solved in closed form
    x_k = A^k (x_0 - x*) + x* about its fixed point x* = (r + (f + kd w)/kp, 0)."""
    m, kp, kd, r, w, f, dt = 2.0, 800.0, 30.0, 0.4, 0.0, 1.5, 0.01
    s = mass_on_rail(m)
    sim = Simulation(s, dt, drive_gains={'x': (kp, kd)}, initial_positions=[0.1])
    sim.set_joint_targets(['x'], positions=[r], velocities=[w], efforts=[f])
    c = m + 0.5 * dt * dt * kp + dt * kd
    A = np.array([[1 - dt * dt * kp / c, dt * m / c], [-dt * kp / c, m / c]])
    xs = np.array([r + (f + kd * w) / kp, 0.0])
    x0 = np.array([0.1, 0.0])
    for k in range(1, 201):
        sim.tick()
        expected = np.linalg.matrix_power(A, k) @ (x0 - xs) + xs
        # the published velocity is M^-1 (p2 + J/2): D2Ld / m = v_k for this Lagrangian,
        # plus half the step's impulse J = dt F at the midpoint
        state = sim.state()
        q_mid = expected[0] - 0.5 * dt * expected[1]
        force = kp * (r - q_mid) + kd * (w - expected[1]) + f
        assert abs(state.positions[0] - expected[0]) <= 1e-12
        assert abs(state.velocities[0] - (expected[1] + 0.5 * dt * force / m)) <= 1e-11
    # the reported effort is the drive force at the last midpoint
    q_mid = expected[0] - 0.5 * dt * expected[1]
    assert state.efforts[0] == pytest.approx(kp * (r - q_mid) + kd * (w - expected[1]) + f,
                                             abs=1e-9)


def test_stiff_drive_is_stable_where_the_explicit_law_diverges():
    """kp dt^2 / m = 100: the drive inside the implicit step converges to the target; the
    same PD law evaluated at the published state and sent as an effort blows up."""
    m, dt = 1.0, 0.01
    kp = 100.0 * m / dt ** 2
    kd = 2.0 * m * np.sqrt(kp)
    implicit = Simulation(mass_on_rail(m), dt, drive_gains={'x': (kp, kd)})
    implicit.set_commands(['x'], [0.5], interface='position')
    peak = 0.0
    for _ in range(200):
        assert implicit.tick().ok
        peak = max(peak, abs(implicit.state().positions[0]))
    assert peak < 1.0
    assert abs(implicit.state().positions[0] - 0.5) < 1e-9
    explicit = Simulation(mass_on_rail(m), dt)
    for _ in range(20):
        st = explicit.state()
        explicit.set_commands(['x'], [kp * (0.5 - st.positions[0]) - kd * st.velocities[0]])
        explicit.tick()
    assert abs(explicit.state().positions[0]) > 1e6


def test_saturated_drive_is_an_effort_command_at_the_limit():
    """With a tiny effort limit the drive pushes with exactly the limit, and the motion is
    that of an effort command of that size."""
    sims = [Simulation.from_urdf_file(ARM7, rate=1000.0, effort_limits=np.full(7, 0.05))
            for _ in range(2)]
    driven, pushed = sims
    target = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    driven.set_commands(driven.joint_names, target, interface='position')
    pushed.set_commands(pushed.joint_names, 0.05 * np.sign(target))
    for _ in range(50):
        driven.tick()
        pushed.tick()
        np.testing.assert_array_equal(driven.state().efforts, 0.05 * np.sign(target))
        np.testing.assert_array_equal(driven.applied_inputs(), 0.05 * np.sign(target))
    np.testing.assert_allclose(driven.state().positions, pushed.state().positions,
                               rtol=0, atol=1e-13)


def test_drive_that_comes_back_inside_its_limit_is_linear_again():
    """A position step on a mass: saturated at first (force = limit), then inside the
    limit near the target, where it settles exactly on the target."""
    sim = Simulation(mass_on_rail(1.0), 0.001, effort_limits=[2.0],
                     drive_gains={'x': (400.0, 40.0)})
    sim.set_commands({'x': 1.0}, interface='position')
    efforts = []
    for _ in range(8000):
        sim.tick()
        efforts.append(sim.state().efforts[0])
    assert efforts[0] == 2.0 and max(np.abs(efforts)) == 2.0
    assert abs(efforts[-1]) < 1e-6
    assert abs(sim.state().positions[0] - 1.0) < 1e-8


def test_drives_are_not_in_the_energy():
    """A drive holding a mass away from its target stores no energy: E = T."""
    sim = Simulation(mass_on_rail(2.0), 0.01, drive_gains={'x': (100.0, 5.0)})
    sim.set_commands({'x': 0.3}, interface='position')
    for _ in range(30):
        sim.tick()
        st = sim.state()
        assert st.energy == pytest.approx(0.5 * 2.0 * st.velocities[0] ** 2, rel=1e-12,
                                          abs=1e-15)


# ---------------------------------------------------------------------- arm7
ARM7_TARGET = np.array([0.5, 0.6, -0.3, -0.8, 0.2, 0.5, -0.4])


def test_arm7_position_targets_reached_within_a_milliradian_in_2_s():
    sim = Simulation.from_urdf_file(ARM7, rate=1000.0)
    sim.set_commands(sim.joint_names, ARM7_TARGET, interface='position')
    for _ in range(1900):
        assert sim.tick().ok
    before = sim.state().positions.copy()
    for _ in range(100):
        sim.tick()
    after = sim.state().positions
    assert np.abs(after - ARM7_TARGET).max() < 1e-3
    assert np.abs(after - before).max() < 1e-4          # at rest, not passing through


def test_arm7_velocity_targets_reached_within_a_milliradian_per_second_in_2_s():
    sim = Simulation.from_urdf_file(ARM7, rate=1000.0)
    v = np.array([0.3, -0.2, 0.4, 0.1, -0.5, 0.6, 1.0])
    sim.set_commands(sim.joint_names, v, interface='velocity')
    for _ in range(2000):
        assert sim.tick().ok
    q0 = sim.state().positions.copy()
    sim.tick()
    # the rate of the configuration over a tick (the published v = M^-1 p differs from it by
    # dt/2 M^-1 times the forces that hold the arm against gravity)
    rate = (sim.state().positions - q0) / sim.dt
    assert np.abs(rate - v).max() < 1e-3


def test_velocity_command_timeout_stops_and_position_command_holds():
    sim = Simulation.from_urdf_file(ARM7, rate=1000.0, command_timeout=0.2)
    sim.set_commands(['joint_1'], [0.5], interface='velocity')
    # joints 3..7 held too: free, they would swing and shake the others
    sim.set_commands(sim.joint_names[1:], [0.3, 0, 0, 0, 0, 0], interface='position')
    for _ in range(1500):
        sim.tick()
    assert sim.timed_out() == sim.joint_names
    q = sim.state().positions.copy()
    for _ in range(100):
        sim.tick()
    after = sim.state().positions
    assert abs(after[0] - q[0]) < 1e-5              # stopped, and stays
    assert abs(q[0] - 0.1) < 2e-3                   # after 0.2 s at 0.5 rad/s
    assert abs(after[1] - 0.3) < 1e-3               # still held at the target


def test_position_targets_are_clipped_to_the_urdf_limits_and_command_bounds():
    sim = Simulation.from_urdf_file(ARM7, rate=1000.0, command_bounds={
        'joint_1': {'position': (-0.2, 0.2)}})
    # the other joints held at 0 (left alone they fall onto their limits, and the arm's
    # impacts there shake joint_1)
    names = ['joint_%d' % i for i in range(1, 8)]
    sim.set_commands(names, [1.0, 0, 0, 0, 0, 0, 5.0], interface='position')
    for _ in range(2000):
        sim.tick()
    q = sim.state().positions
    assert abs(q[0] - 0.2) < 1e-3
    upper = sim.robot.position_limits[1][6]
    assert q[6] <= upper and abs(q[6] - upper) < 1e-3


def test_joint_targets_select_the_interface_and_active_interfaces_follow():
    sim = Simulation.from_urdf_file(ARM7, rate=1000.0)
    assert set(sim.active_interfaces().values()) == {'effort'}
    assert sim.command_interfaces['joint_3'] == COMMAND_INTERFACES
    sim.set_joint_targets(['joint_1'], positions=[0.1], velocities=[0.0], efforts=[1.0])
    sim.set_joint_targets(['joint_2'], velocities=[0.2])
    sim.set_joint_targets(['joint_3'], efforts=[1.0])
    active = sim.active_interfaces()
    assert (active['joint_1'], active['joint_2'], active['joint_3']) == (
        'position', 'velocity', 'effort')
    sim.set_commands({'joint_1': 2.0})                   # an effort command switches back
    assert sim.active_interfaces()['joint_1'] == 'effort'
    sim.reset()
    assert set(sim.active_interfaces().values()) == {'effort'}


def test_default_gains_come_from_the_reflected_inertia():
    sim = Simulation.from_urdf_file(ARM7, rate=1000.0, drive_frequency=20.0,
                                    drive_damping_ratio=0.5, drive_gains={'joint_7': (3, 4)})
    from ros_vi.mechanics import dynamics
    data = sim.system.model.create_data()
    data.set(sim.system.q, np.zeros(7))
    m = np.diag(dynamics.mass_matrix(sim.system.model, data))
    gains = sim.drive_gains()
    for i, j in enumerate(sim.joint_names[:6]):
        assert gains[j] == pytest.approx((m[i] * 400.0, 2 * 0.5 * m[i] * 20.0), rel=1e-14)
    assert gains['joint_7'] == (3.0, 4.0)


# ---------------------------------------------------------------------- refusals
def _commands(sim):
    return (sim.commanded(), sim.active_interfaces(), sim.drive_gains())


def _same(a, b):
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1:] == b[1:]


def test_refusals_name_the_joint_and_change_nothing():
    sim = Simulation.from_urdf_file(ARM7, rate=1000.0, command_interfaces={
        'joint_1': ['effort', 'position'], 'joint_2': ['velocity']})
    sim.set_commands({'joint_1': 0.2}, interface='position')
    before = _commands(sim)
    cases_ = [
        (lambda: sim.set_commands({'joint_2': 0.1, 'joint_1': 0.3}, interface='velocity'),
         r"joint 'joint_1' has no velocity interface \(it has: effort, position\)"),
        (lambda: sim.set_commands({'joint_3': 0.1}, interface='position'),
         r"joint 'joint_3' has no position interface \(it has: none\)"),
        (lambda: sim.set_commands({'joint_1': np.inf}, interface='position'),
         r"non-finite position for joint 'joint_1'"),
        (lambda: sim.set_commands(['joint_1', 'joint_2'], [0.1], interface='position'),
         '2 joint names but 1 positions'),
        (lambda: sim.set_commands({'joint_9': 0.1}, interface='position'),
         "unknown joint name 'joint_9'"),
        (lambda: sim.set_commands({'joint_1': 0.1}, interface='torque'),
         "unknown interface 'torque'"),
        (lambda: sim.set_joint_targets(['joint_1'], positions=[0.1], velocities=[1, 2]),
         '1 joint names but 2 velocities'),
        (lambda: sim.set_drive_gains({'joint_3': (1.0, 1.0)}),
         "joint 'joint_3' has no position or velocity interface"),
        (lambda: sim.set_drive_gains({'joint_1': (-1.0, 1.0)}),
         "joint 'joint_1': kp and kd must be finite and >= 0"),
    ]
    for call, match in cases_:
        with pytest.raises(ValueError, match=match):
            call()
        _same(_commands(sim), before)


def test_a_joint_with_effort_limit_0_takes_no_drive_command():
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=500.0)     # shoulder: limit 0
    assert sim.command_interfaces['shoulder'] == ()
    before = _commands(sim)
    with pytest.raises(ValueError, match="joint 'shoulder' has effort limit 0: it cannot "
                                         "take any command"):
        sim.set_commands({'elbow': 0.1, 'shoulder': 0.1}, interface='position')
    _same(_commands(sim), before)
    with pytest.raises(ValueError, match="joint 'shoulder' has effort limit 0"):
        Simulation.from_urdf_file(urdf('acrobot'), command_interfaces={'shoulder': ['effort']})


def test_a_mimic_joint_takes_no_command_of_its_own():
    system = import_urdf(cases.mimic_robot())
    sim = Simulation(system, 0.01)
    before = _commands(sim)
    with pytest.raises(ValueError, match="joint 'jc' is a mimic joint: it follows 'jb'"):
        sim.set_commands({'jb': 0.1, 'jc': 0.1}, interface='position')
    _same(_commands(sim), before)
    with pytest.raises(ValueError, match="joint 'jd' is a mimic joint"):
        Simulation(import_urdf(cases.mimic_robot()), 0.01, command_interfaces={'jd': []})
    # the leader's drive moves the follower with it
    sim.set_commands({'jb': 0.2}, interface='position')
    for _ in range(300):
        sim.tick()
    st = sim.state()
    assert abs(st.positions[1] - 0.2) < 1e-3
    assert st.mimic_positions[0] == pytest.approx(-1.5 * st.positions[1] + 0.2, abs=1e-12)


# ---------------------------------------------------------------------- limits (#25)
def test_a_huge_velocity_command_moves_at_the_velocity_limit_and_stops_at_the_position_limit():
    """[1e6, 0, ...] on velocity_controller/commands drove joint 1 through its +-2.967 rad
    limit at 150 rad/s: the target is clipped to the URDF velocity limit (1.48 rad/s) and the
    drive stops pushing where its reference meets the position limit."""
    sim = Simulation.from_urdf_file(ARM7, rate=500.0, gravity=(0.0, 0.0, 0.0))
    sim.set_commands(sim.command_joints, [1e6] + [0.0] * 6, interface='velocity')
    q, speed = [], []
    for _ in range(1500):                       # 3 s: the limit is reached after 2 s
        assert sim.tick().ok
        q.append(sim.state().positions[0])
        speed.append(sim.state().velocities[0])
    upper, limit = 2.96706, 1.48353
    # the target is the limit: after the critically damped drive's start-up transient
    # (a velocity step overshoots by at most e^-2 = 14 %) the joint moves at it
    assert max(speed) < limit * (1 + np.exp(-2.0))
    np.testing.assert_allclose(speed[100:900], limit, rtol=1e-3)
    # where the reference stops at the limit the joint coasts in by at most v / w e^-1 (the
    # drive's bandwidth w = 300 rad/s), then the drive holds it at the limit
    assert max(q) < upper + limit / 300.0 * np.exp(-1.0)
    assert abs(q[-1] - upper) < 1e-6 and abs(speed[-1]) < 1e-6


def test_drive_targets_too_large_for_the_drive_law_are_refused():
    """position -1e308 / velocity 1e308 overflowed the drive law to NaN (275 failed ticks):
    refused now, naming the joint and the bound; the commands in force stay."""
    sim = Simulation.from_urdf_file(urdf('pendulum'), rate=500.0)     # continuous: no limits
    before = _commands(sim)
    with pytest.raises(ValueError, match=r"position -1e\+308 for joint 'theta' is beyond "
                                         r"\+-1e\+09, the largest drive target accepted"):
        sim.set_commands({'theta': -1e308}, interface='position')
    with pytest.raises(ValueError, match=r"velocity 1e\+308 for joint 'theta' is beyond"):
        sim.set_joint_targets(['theta'], velocities=[1e308])
    _same(_commands(sim), before)
    for _ in range(50):
        assert sim.tick().ok
    assert np.isfinite(sim.state().positions).all()
    # within the bound: a position target is taken, a velocity one clipped to 20 rad/s
    sim.set_commands({'theta': 1e6}, interface='velocity')
    sim.tick()
    assert abs(sim.state().velocities[0]) <= 20.0 + 1e-9
