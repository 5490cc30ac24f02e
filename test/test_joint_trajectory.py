"""ros_vi.control.joint_trajectory: the JTC's interpolation, start and hold rules, validation,
tolerances and result codes, without ROS."""
import threading

import numpy as np
import pytest

from ros_vi.control.joint_trajectory import (ErrorCode, JointTolerance, JointTrajectory,
                                             TrajectoryError, TrajectoryFollower)

NAMES = ('j1', 'j2')


def poly(coeffs, t):
    """value, first and second derivative of sum c_k t^k, coeffs (K, m)."""
    c = np.asarray(coeffs, float)
    k = np.arange(c.shape[0])[:, None]
    p = (c * t ** k).sum(0)
    v = (c[1:] * k[1:] * t ** (k[1:] - 1)).sum(0)
    a = (c[2:] * k[2:] * (k[2:] - 1) * t ** (k[2:] - 2)).sum(0)
    return p, v, a


QUINTIC = np.array([[0.3, -1.0], [0.5, 0.2], [-0.4, 0.7], [0.25, -0.3], [-0.05, 0.04],
                    [0.004, -0.002]])
CUBIC = QUINTIC[:4]


@pytest.mark.parametrize('coeffs,derivs', [(CUBIC, 1), (QUINTIC, 2)])
def test_spline_reproduces_polynomial_through_its_waypoints(coeffs, derivs):
    times = np.array([0.0, 0.4, 1.1, 1.5, 2.6])
    pts = [poly(coeffs, t) for t in times]
    tr = JointTrajectory(NAMES, times, [p for p, _, _ in pts], [v for _, v, _ in pts],
                         [a for _, _, a in pts] if derivs == 2 else None)
    for t in np.linspace(0.0, 2.6, 97)[:-1]:
        p, v, a = tr.sample(t)
        want = poly(coeffs, t)
        np.testing.assert_allclose(p, want[0], atol=1e-12, rtol=0)
        np.testing.assert_allclose(v, want[1], atol=1e-12, rtol=0)
        np.testing.assert_allclose(a, want[2], atol=1e-11, rtol=0)


def test_linear_segments_when_only_positions():
    tr = JointTrajectory(NAMES, [0.0, 1.0, 3.0], [[0, 0], [1, -2], [2, 0]])
    p, v, a = tr.sample(0.25)
    np.testing.assert_allclose(p, [0.25, -0.5])
    np.testing.assert_allclose(v, [1.0, -2.0])
    np.testing.assert_allclose(a, 0.0)
    p, v, _ = tr.sample(2.0)
    np.testing.assert_allclose(p, [1.5, -1.0])
    np.testing.assert_allclose(v, [0.5, 1.0])


def test_segment_degree_follows_each_pair_of_waypoints():
    # velocities on points 0 and 1 only: segment 0 cubic, segment 1 linear
    tr = JointTrajectory(NAMES, [0.0, 1.0, 2.0], [[0, 0], [1, 1], [3, 1]],
                         velocities=[[0, 0], [0, 0], None])
    p, v, a = tr.sample(0.5)
    np.testing.assert_allclose(p, [0.5, 0.5])       # 3s^2 - 2s^3 at s = 0.5
    np.testing.assert_allclose(v, [1.5, 1.5])
    p, v, a = tr.sample(1.5)
    np.testing.assert_allclose(p, [2.0, 1.0])
    np.testing.assert_allclose(v, [2.0, 0.0])
    np.testing.assert_allclose(a, 0.0)


def test_continuity_at_waypoints():
    rng = np.random.default_rng(3)
    times = np.cumsum(rng.uniform(0.2, 0.8, 6))
    p, v, a = rng.normal(size=(3, 6, 2))
    v[-1] = 0.0
    for velocities, accelerations, order in ((None, None, 0), (v, None, 1), (v, a, 2)):
        tr = JointTrajectory(NAMES, times, p, velocities, accelerations)
        for i, t in enumerate(times[1:-1], start=1):
            left, right = tr.sample(t - 1e-9), tr.sample(t)
            np.testing.assert_allclose(right.positions, p[i], atol=1e-12)
            np.testing.assert_allclose(left.positions, right.positions, atol=1e-7)
            if order >= 1:
                np.testing.assert_allclose(right.velocities, v[i], atol=1e-12)
                np.testing.assert_allclose(left.velocities, right.velocities, atol=1e-6)
            if order == 2:
                np.testing.assert_allclose(right.accelerations, a[i], atol=1e-10)
                np.testing.assert_allclose(left.accelerations, right.accelerations, atol=1e-5)


def test_hold_last_point_after_end_and_first_before_start():
    tr = JointTrajectory(NAMES, [0.5, 1.0], [[1, 2], [3, 4]], [[1, 1], [0, 0]])
    for t in (1.0, 1.7, 100.0):
        p, v, a = tr.sample(t)
        np.testing.assert_array_equal(p, [3, 4])
        np.testing.assert_array_equal(v, 0.0)
        np.testing.assert_array_equal(a, 0.0)
    np.testing.assert_array_equal(tr.sample(0.1).positions, [1, 2])


def test_starting_from_joins_the_state_to_the_first_waypoint():
    tr = JointTrajectory(NAMES, [2.0, 3.0], [[1.0, -1.0], [1.0, -1.0]], [[0, 0], [0, 0]])
    s = tr.starting_from(0.0, [0.0, 0.0], [0.5, -0.5])
    p, v, _ = s.sample(0.0)
    np.testing.assert_allclose(p, [0.0, 0.0])
    np.testing.assert_allclose(v, [0.5, -0.5])          # cubic: starts with the state's velocity
    p, v, _ = s.sample(2.0)
    np.testing.assert_allclose(p, [1.0, -1.0])
    np.testing.assert_allclose(v, 0.0, atol=1e-12)
    # positions only: a straight line from the state
    lin = JointTrajectory(NAMES, [2.0], [[1.0, -1.0]]).starting_from(0.0, [0, 0], [5, 5])
    np.testing.assert_allclose(lin.sample(1.0).positions, [0.5, -0.5])
    # a start at or after the first waypoint adds nothing
    np.testing.assert_allclose(tr.starting_from(2.5, [9, 9], [0, 0]).sample(2.5).positions,
                               [1.0, -1.0])


@pytest.mark.parametrize('kwargs,code,words', [
    (dict(joint_names=[]), ErrorCode.INVALID_JOINTS, 'no joints'),
    (dict(joint_names=['j1', 'j1']), ErrorCode.INVALID_JOINTS, 'repeated: j1'),
    (dict(time_from_start=[], positions=[]), ErrorCode.INVALID_GOAL, 'no points'),
    (dict(positions=[[0, 0]]), ErrorCode.INVALID_GOAL, '1 points given for 2'),
    (dict(positions=[[0, 0], [1, 2, 3]]), ErrorCode.INVALID_GOAL, 'point 1: 3 positions'),
    (dict(velocities=[[0, 0], [0]]), ErrorCode.INVALID_GOAL, 'point 1: 1 velocities'),
    (dict(positions=[[0, 0], [np.nan, 0]]), ErrorCode.INVALID_GOAL,
     "point 1: positions not finite (joint 'j1')"),
    (dict(accelerations=[[0, np.inf], [0, 0]]), ErrorCode.INVALID_GOAL,
     "point 0: accelerations not finite (joint 'j2')"),
    (dict(time_from_start=[1.0, 1.0]), ErrorCode.INVALID_GOAL, 'point 0 at 1 s, point 1 at 1 s'),
    (dict(time_from_start=[-1.0, 1.0]), ErrorCode.INVALID_GOAL, 'negative'),
])
def test_trajectory_validation_names_the_culprit(kwargs, code, words):
    args = dict(joint_names=NAMES, time_from_start=[0.5, 1.0], positions=[[0, 0], [1, 1]])
    args.update(kwargs)
    with pytest.raises(TrajectoryError) as err:
        JointTrajectory(**args)
    assert err.value.error_code == code
    assert words in str(err.value)


# ---------------------------------------------------------------------- follower
def run(follower, plant, t_end, dt=0.01, t0=0.0):
    """Step ``plant(q, v, targets, dt) -> q, v`` with the follower; returns the times, the
    targets and the states."""
    q = np.zeros(len(follower.joint_names))
    v = np.zeros_like(q)
    out = []
    for t in np.arange(t0, t_end, dt):
        targets = follower.update(t, q, v)
        out.append((t, targets, q.copy()))
        if targets is not None:
            q, v = plant(q, v, targets, dt)
    return out


def exact(q, v, targets, dt):
    return targets.positions.copy(), targets.velocities.copy()


def lag(rate):
    def plant(q, v, targets, dt):
        qn = q + (targets.positions - q) * (1.0 - np.exp(-rate * dt))
        return qn, (qn - q) / dt
    return plant


def test_idle_follower_returns_none_and_validates_against_its_joints():
    f = TrajectoryFollower(NAMES)
    assert f.update(0.0, [0, 0], [0, 0]) is None
    tr = JointTrajectory(['j1', 'x'], [1.0], [[0, 0]])
    with pytest.raises(TrajectoryError) as err:
        f.set_trajectory(tr)
    assert err.value.error_code == ErrorCode.INVALID_JOINTS and "x" in str(err.value)
    with pytest.raises(TrajectoryError) as err:
        f.set_trajectory(JointTrajectory(['j2'], [1.0], [[0]]))
    assert err.value.error_code == ErrorCode.INVALID_JOINTS
    assert 'missing from the trajectory: j1' in str(err.value)
    with pytest.raises(TrajectoryError) as err:
        f.set_trajectory(JointTrajectory(NAMES, [1.0], [[0, 0]], [[0, 0.5]]))
    assert err.value.error_code == ErrorCode.INVALID_GOAL and "'j2'" in str(err.value)
    assert f.pending is None and f.active is None


def test_follow_succeeds_and_holds_last_point():
    f = TrajectoryFollower(NAMES, goal_tolerance=[JointTolerance('j1', 1e-6),
                                                  JointTolerance('j2', 1e-6)])
    tr = JointTrajectory(NAMES, [1.0, 2.0], [[0.5, -0.5], [1.0, 0.2]], [[0.3, 0], [0, 0]])
    ex = f.set_trajectory(tr)
    out = run(f, exact, 3.0)
    assert ex.outcome.status == 'succeeded' and ex.outcome.error_code == ErrorCode.SUCCESSFUL
    t, targets, q = out[-1]
    np.testing.assert_allclose(targets.positions, [1.0, 0.2])
    np.testing.assert_array_equal(targets.velocities, 0.0)
    # the follower's started-from-zero trajectory passes the waypoints on time
    by_time = {round(t, 6): targets for t, targets, _ in out}
    np.testing.assert_allclose(by_time[1.0].positions, [0.5, -0.5], atol=1e-12)
    np.testing.assert_allclose(by_time[1.0].velocities, [0.3, 0.0], atol=1e-12)
    assert f.active is None and f.state().desired.positions.tolist() == [1.0, 0.2]


def test_starts_from_the_measured_state_at_acceptance():
    f = TrajectoryFollower(NAMES)
    tr = JointTrajectory(NAMES, [1.0], [[1.0, 1.0]])
    f.update(5.0, [0.2, -0.4], [0, 0])
    f.set_trajectory(tr)
    targets = f.update(5.0, [0.2, -0.4], [0.0, 0.0])
    np.testing.assert_allclose(targets.positions, [0.2, -0.4])
    np.testing.assert_allclose(f.update(5.5, [0.2, -0.4], [0, 0]).positions, [0.6, 0.3])


def test_future_stamp_starts_then_and_old_header_is_refused():
    f = TrajectoryFollower(NAMES)
    first = f.set_trajectory(JointTrajectory(NAMES, [0.0], [[0.1, 0.1]]))
    f.update(1.0, [0.1, 0.1], [0, 0])
    assert first.outcome.status == 'succeeded'
    later = f.set_trajectory(JointTrajectory(NAMES, [1.0], [[1.1, 1.1]], stamp=3.0))
    for t in (1.5, 2.9):
        np.testing.assert_allclose(f.update(t, [0.1, 0.1], [0, 0]).positions, [0.1, 0.1])
    assert later.started_at is None and f.pending is later
    np.testing.assert_allclose(f.update(3.0, [0.1, 0.1], [0, 0]).positions, [0.1, 0.1])
    np.testing.assert_allclose(f.update(3.5, [0.1, 0.1], [0, 0]).positions, [0.6, 0.6])
    assert later.started_at == 3.0
    with pytest.raises(TrajectoryError) as err:
        f.set_trajectory(JointTrajectory(NAMES, [0.5], [[0, 0]], stamp=2.0))
    assert err.value.error_code == ErrorCode.OLD_HEADER_TIMESTAMP
    assert f.active is later            # refused: nothing changed


def test_new_trajectory_preempts_the_running_one():
    f = TrajectoryFollower(NAMES)
    a = f.set_trajectory(JointTrajectory(NAMES, [2.0], [[1.0, 1.0]]))
    f.update(0.0, [0, 0], [0, 0])
    b = f.set_trajectory(JointTrajectory(NAMES, [2.0], [[-1.0, -1.0]]), origin='the topic')
    assert a.outcome is None            # replaced at b's start: the next update
    f.update(0.5, [0.1, 0.1], [0, 0])
    assert a.outcome.status == 'aborted' and a.outcome.error_code == ErrorCode.INVALID_GOAL
    assert 'preempted by the topic' in a.outcome.error_string
    assert f.active is b and b.outcome is None


def test_cancel_holds_the_measured_position():
    f = TrajectoryFollower(NAMES)
    ex = f.set_trajectory(JointTrajectory(NAMES, [2.0], [[1.0, 1.0]]))
    f.update(0.0, [0, 0], [0, 0])
    f.update(1.0, [0.4, 0.5], [0.7, 0.7])
    assert f.cancel(ex)
    assert ex.outcome.status == 'canceled'
    assert not f.cancel(ex)
    for t in (1.1, 5.0):
        held = f.update(t, [0.41, 0.5], [0.1, 0])
        np.testing.assert_allclose(held.positions, [0.4, 0.5])
        np.testing.assert_array_equal(held.velocities, 0.0)


def test_path_tolerance_aborts_a_lagging_plant():
    f = TrajectoryFollower(NAMES)
    ex = f.set_trajectory(JointTrajectory(NAMES, [1.0], [[1.0, 0.0]]),
                          path_tolerance=[JointTolerance('j1', position=0.05)])
    out = run(f, lag(5.0), 2.0)
    assert ex.outcome.error_code == ErrorCode.PATH_TOLERANCE_VIOLATED
    assert "joint 'j1' position error" in ex.outcome.error_string
    assert 'exceeds tolerance 0.05' in ex.outcome.error_string
    # aborted where the error first exceeded 0.05; then the joints hold
    ts = [t for t, targets, q in out if targets is not None]
    violated = next(t for t, targets, q in out if abs(min(t, 1.0) - q[0]) > 0.05 + 1e-12)
    holds = [targets.positions for t, targets, q in out if t > violated + 1e-9]
    assert holds and all(np.array_equal(h, holds[0]) for h in holds) and len(ts) == len(out)
    # the same goal with the tolerance erased (-1) succeeds
    g = TrajectoryFollower(NAMES, path_tolerance=[JointTolerance('j1', position=0.05)])
    ex = g.set_trajectory(JointTrajectory(NAMES, [1.0], [[1.0, 0.0]]),
                          path_tolerance=[JointTolerance('j1', position=-1.0)],
                          goal_tolerance=[JointTolerance('j1', position=0.01)])
    run(g, lag(5.0), 3.0)
    assert ex.outcome.error_code == ErrorCode.SUCCESSFUL


def test_goal_time_tolerance():
    tr = JointTrajectory(NAMES, [1.0], [[1.0, 0.0]])
    goal = [JointTolerance('j1', position=1e-3)]
    # the lag (0.2 at the end) decays below 1e-3 about 1.1 s after the end: 0.5 s is too
    # little, 2 s enough
    f = TrajectoryFollower(NAMES)
    ex = f.set_trajectory(tr, goal_tolerance=goal, goal_time_tolerance=0.5)
    out = run(f, lag(5.0), 3.0)
    assert ex.outcome.error_code == ErrorCode.GOAL_TOLERANCE_VIOLATED
    assert 'goal_time_tolerance' in ex.outcome.error_string and "'j1'" in ex.outcome.error_string
    f = TrajectoryFollower(NAMES)
    ex = f.set_trajectory(tr, goal_tolerance=goal, goal_time_tolerance=2.0)
    run(f, lag(5.0), 3.0)
    assert ex.outcome.error_code == ErrorCode.SUCCESSFUL
    # 0 = the follower's default, here none: it waits as long as it takes
    f = TrajectoryFollower(NAMES)
    ex = f.set_trajectory(tr, goal_tolerance=goal)
    run(f, lag(5.0), 1.5)
    assert ex.outcome is None


def test_default_goal_requires_stopped_joints():
    f = TrajectoryFollower(NAMES, stopped_velocity_tolerance=0.01)
    ex = f.set_trajectory(JointTrajectory(NAMES, [0.5], [[0.2, 0.2]]))
    f.update(0.0, [0, 0], [0, 0])
    f.update(0.6, [0.2, 0.2], [0.0, 0.05])        # j2 still moving
    assert ex.outcome is None
    f.update(0.7, [0.2, 0.2], [0.0, 0.005])
    assert ex.outcome.error_code == ErrorCode.SUCCESSFUL


@pytest.mark.parametrize('kwargs,code,words', [
    (dict(path_tolerance=[JointTolerance('nope', 0.1)]), ErrorCode.INVALID_JOINTS, "'nope'"),
    (dict(goal_tolerance=[JointTolerance('j1', velocity=-2.0)]), ErrorCode.INVALID_GOAL,
     "goal_tolerance of 'j1': velocity is -2"),
    (dict(goal_time_tolerance=-0.5), ErrorCode.INVALID_GOAL, 'goal_time_tolerance is -0.5'),
])
def test_illegal_goal_tolerances_are_refused(kwargs, code, words):
    f = TrajectoryFollower(NAMES)
    with pytest.raises(TrajectoryError) as err:
        f.set_trajectory(JointTrajectory(NAMES, [1.0], [[0, 0]]), **kwargs)
    assert err.value.error_code == code and words in str(err.value)


def test_partial_goal_holds_the_other_joints():
    f = TrajectoryFollower(NAMES, allow_partial_joints_goal=True)
    f.set_trajectory(JointTrajectory(['j2'], [1.0], [[1.0]]))
    f.update(0.0, [0.3, 0.0], [0, 0])
    targets = f.update(0.5, [0.3, 0.5], [0, 0])
    np.testing.assert_allclose(targets.positions, [0.3, 0.5])


def test_continuous_joint_takes_the_short_way():
    f = TrajectoryFollower(NAMES, continuous_joints=['j1'])
    f.set_trajectory(JointTrajectory(NAMES, [1.0], [[np.pi - 0.1, 0.0]]))
    f.update(0.0, [-np.pi + 0.1, 0.0], [0, 0])
    mid = f.update(0.5, [-np.pi + 0.1, 0.0], [0, 0]).positions[0]
    assert abs(abs(mid) - np.pi) < 1e-12          # through +-pi, not through 0
    assert abs(f.state().error.positions[0]) < 0.2 + 1e-12


def test_set_trajectory_from_another_thread_while_updating():
    f = TrajectoryFollower(NAMES)
    stop = threading.Event()
    errors = []

    def plant():
        q = np.zeros(2)
        t = 0.0
        while not stop.is_set():
            try:
                targets = f.update(t, q, np.zeros(2))
                if targets is not None:
                    q = targets.positions
            except Exception as e:          # pragma: no cover - reported below
                errors.append(e)
                return
            t += 0.001
    thread = threading.Thread(target=plant)
    thread.start()
    executions = [f.set_trajectory(JointTrajectory(NAMES, [0.05], [[i, -i]]))
                  for i in range(200)]
    last = executions[-1]
    assert last.wait(10.0) is not None
    stop.set()
    thread.join()
    assert not errors
    assert last.outcome.error_code == ErrorCode.SUCCESSFUL
    assert all(e.outcome is not None for e in executions)


def test_a_drive_target_beyond_the_bound_is_an_invalid_goal():
    """positions of 1e308 reached the drives and overflowed them; refused when given."""
    with pytest.raises(TrajectoryError, match=r"point 1: positions -1e\+308 of joint 'j2' "
                                              r"beyond \+-1e\+09") as err:
        JointTrajectory(NAMES, [0.5, 1.0], [[0.0, 0.0], [0.1, -1e308]])
    assert err.value.error_code == ErrorCode.INVALID_GOAL
    with pytest.raises(TrajectoryError, match='point 0: velocities 1e\\+12 of joint'):
        JointTrajectory(NAMES, [0.5], [[0.0, 0.0]], [[1e12, 0.0]])


def test_a_long_trajectory_is_built_where_it_is_accepted_not_where_it_starts():
    """A 100,000-point trajectory cost the step thread 2 s when it started (its pieces were
    built then, one Python object each): the pieces are stacked arrays built once, when the
    trajectory is accepted, and starting it shares them."""
    k = 100_000
    times = 0.001 * np.arange(1, k + 1)
    positions = np.column_stack([np.sin(times), np.cos(times)])
    velocities = np.column_stack([np.cos(times), -np.sin(times)])
    velocities[-1] = 0.0                    # it ends at rest
    tr = JointTrajectory(NAMES, times, positions, velocities)
    follower = TrajectoryFollower(NAMES)
    execution = follower.set_trajectory(tr, now=0.0)
    ordered, missing = execution.ordered
    assert missing.size == 0 and ordered._x.shape == (k - 1, 6, 2)
    follower.update(0.0, [0.0, 1.0], [0.0, 0.0])
    active = follower._active.trajectory
    assert active._x is ordered._x                  # shared, not rebuilt
    p, v, _ = active.sample(50.0005)
    np.testing.assert_allclose(p, [np.sin(50.0005), np.cos(50.0005)], atol=1e-9)
    np.testing.assert_allclose(v, [np.cos(50.0005), -np.sin(50.0005)], atol=1e-6)


def test_a_partial_goal_holds_the_missing_joints_where_they_were_commanded():
    follower = TrajectoryFollower(NAMES, allow_partial_joints_goal=True)
    follower.update(0.0, [0.3, -0.4], [0.0, 0.0])         # nothing to follow yet
    follower.set_trajectory(JointTrajectory(['j2'], [1.0, 2.0], [[0.5], [0.6]],
                                            [[0.0], [0.0]]), now=0.0)
    targets = follower.update(0.0, [0.3, -0.4], [0.0, 0.0])
    for t in np.linspace(0.0, 2.5, 11):
        targets = follower.update(t, targets.positions, targets.velocities)
        assert targets.positions[0] == 0.3 and targets.velocities[0] == 0.0
    assert targets.positions[1] == 0.6


@pytest.mark.parametrize('accelerations', [False, True])
def test_peak_rates_are_the_pieces_largest_acceleration_and_jerk(accelerations):
    times = np.array([0.0, 0.4, 1.1, 1.5, 2.6])
    pts = [poly(QUINTIC if accelerations else CUBIC, t) for t in times]
    rng = np.random.default_rng(3)
    tr = JointTrajectory(NAMES, times, [p for p, _, _ in pts],
                         [v + rng.normal(0, 0.3, 2) for _, v, _ in pts],
                         [a + rng.normal(0, 0.5, 2) for _, _, a in pts] if accelerations
                         else None)
    acc, jerk = tr.peak_rates()
    assert acc.shape == jerk.shape == (4, 2)
    h = 1e-6
    for i in range(4):
        t = np.linspace(times[i], times[i + 1], 20001)
        t[-1] = np.nextafter(t[-1], -np.inf)            # the piece's own end
        a = np.array([tr.sample(x).accelerations for x in t])
        # the sampled maximum approaches the exact one from below
        assert np.all(acc[i] >= np.abs(a).max(axis=0) - 1e-12)
        np.testing.assert_allclose(acc[i], np.abs(a).max(axis=0), rtol=1e-6)
        j = (np.array([tr.sample(x + h).accelerations for x in t[1:-1]]) -
             np.array([tr.sample(x - h).accelerations for x in t[1:-1]])) / (2 * h)
        # (central differences stop one sample, 2e-5 s, short of the piece's ends)
        assert np.all(jerk[i] >= np.abs(j).max(axis=0) * (1 - 1e-7))
        np.testing.assert_allclose(jerk[i], np.abs(j).max(axis=0), rtol=1e-3)
    linear = JointTrajectory(NAMES, [0.0, 1.0], [[0, 0], [1, 2]])
    assert [r.tolist() for r in linear.peak_rates()] == [[[0.0, 0.0]], [[0.0, 0.0]]]


def test_acceleration_and_jerk_limits_refuse_a_goal_beyond_them():
    # a rest-to-rest cubic over 1 rad in 1 s: peak acceleration 6 rad/s^2, jerk 12 rad/s^3
    tr = JointTrajectory(NAMES, [0.0, 1.0], [[0, 0], [1, 0]], [[0, 0], [0, 0]])
    acc, jerk = tr.peak_rates()
    np.testing.assert_allclose(acc[0], [6.0, 0.0], rtol=1e-14)
    np.testing.assert_allclose(jerk[0], [12.0, 0.0], rtol=1e-14)
    TrajectoryFollower(NAMES, acceleration_limits={'j1': 6.0 + 1e-9},
                       jerk_limits={'j1': 12.0 + 1e-9}).validate(tr)
    with pytest.raises(TrajectoryError) as err:
        TrajectoryFollower(NAMES, acceleration_limits={'j1': 5.0}).validate(tr)
    assert err.value.error_code == ErrorCode.INVALID_GOAL
    assert str(err.value).endswith("joint 'j1': the piece from point 0 (0 s) to point 1 (1 s) "
                                   "reaches acceleration 6/s^2, beyond its limit 5")
    with pytest.raises(TrajectoryError, match=r"reaches jerk 12/s\^3, beyond its limit 10"):
        TrajectoryFollower(NAMES, jerk_limits={'j1': 10.0, 'j2': 1.0}).set_trajectory(tr)
    # 0 and inf are no limit; a joint that is not followed or a negative limit is refused
    TrajectoryFollower(NAMES, acceleration_limits={'j1': 0.0, 'j2': np.inf}).validate(tr)
    with pytest.raises(ValueError, match="acceleration_limits names 'j3'"):
        TrajectoryFollower(NAMES, acceleration_limits={'j3': 1.0})
    with pytest.raises(ValueError, match="jerk limit of 'j1' must be >= 0"):
        TrajectoryFollower(NAMES, jerk_limits={'j1': -1.0})
