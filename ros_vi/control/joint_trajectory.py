"""Joint trajectories and their follower, with the semantics of ros2_controllers'
JointTrajectoryController (JTC) and of control_msgs/FollowJointTrajectory (no ROS here).

* :class:`JointTrajectory` -- waypoints of named joints (positions, optionally velocities and
  accelerations, at times from the trajectory's start) sampled by the JTC's spline rules: per
  segment, linear when either end has positions only, cubic Hermite when both ends have
  velocities, quintic when both also have accelerations; before the first waypoint, a segment
  from the state the trajectory started from (:meth:`JointTrajectory.starting_from`); after the
  last, the last point held (zero velocity and acceleration).
* :class:`TrajectoryFollower` -- one trajectory at a time for a fixed set of joints: validates
  what it is given (:class:`TrajectoryError` with the action's error code), starts it at its
  stamp from the measured state, samples targets on every :meth:`TrajectoryFollower.update`,
  checks path and goal tolerances as the action defines them, and ends each
  :class:`Execution` with an :class:`Outcome` (succeeded, aborted with an error code, canceled).

Units: positions rad (revolute, continuous) or m (prismatic), velocities rad/s or m/s,
accelerations rad/s^2 or m/s^2, times s (simulation time: the caller's clock).  Arrays are
per joint, ``(n,)`` in the order of the object's ``joint_names``.

Departures from the JTC (each for a precise error or a stated rule, see docs/trajectories.md):
a tolerance naming an unknown joint, or a negative tolerance other than -1, makes the goal
invalid (the JTC logs it and uses its defaults); a trajectory stamped in the future replaces
the running one at its stamp (the JTC drops the running one on receipt).
"""
import enum
import math
import threading
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from .base import MAX_COMMAND, wrap_angles

__all__ = ['ErrorCode', 'TrajectoryError', 'JointTolerance', 'TrajectoryPoint', 'Outcome',
           'TrackingSample', 'JointTrajectory', 'Execution', 'TrajectoryFollower']


class ErrorCode(enum.IntEnum):
    """control_msgs/action/FollowJointTrajectory's result codes (same values)."""
    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


class TrajectoryError(ValueError):
    """A trajectory or goal that cannot be executed; ``error_code`` is the action's code
    (:class:`ErrorCode`) and the message names the culprit."""

    def __init__(self, error_code, message):
        super().__init__(message)
        self.error_code = ErrorCode(error_code)


@dataclass(frozen=True)
class JointTolerance:
    """control_msgs/JointTolerance: bounds on |desired - actual| of one joint.

    0 means "the default" (in a goal) or "not checked" (as a default); -1 in a goal erases
    the default (not checked).  Units: rad or m, rad/s or m/s, rad/s^2 or m/s^2.
    """
    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


#: positions, velocities, accelerations: each (n,) [rad or m, /s, /s^2]
TrajectoryPoint = namedtuple('TrajectoryPoint', 'positions velocities accelerations')


@dataclass(frozen=True)
class Outcome:
    """How an execution ended: ``status`` is 'succeeded', 'aborted' or 'canceled';
    ``error_code`` an :class:`ErrorCode` (SUCCESSFUL when canceled, as the JTC reports it)."""
    status: str
    error_code: ErrorCode
    error_string: str


@dataclass(frozen=True)
class TrackingSample:
    """One update of the follower: the sample the action's feedback and the controller
    state carry.  ``time`` is the simulation time [s], ``time_from_start`` the time since
    the trajectory's start [s] (0 while holding); ``desired``, ``actual`` and ``error``
    (desired - actual, wrapped to [-pi, pi) for continuous joints) are
    :class:`TrajectoryPoint`\\ s in the follower's joint order (``actual.accelerations`` and
    ``error.accelerations`` are None when the caller gave no accelerations); ``targets`` is
    what ``update`` returned."""
    time: float
    time_from_start: float
    desired: TrajectoryPoint
    actual: TrajectoryPoint
    error: TrajectoryPoint
    targets: TrajectoryPoint


# ---------------------------------------------------------------------- trajectory
def _optional_rows(name, values, k, m):
    """(k, m) array and (k,) mask of the points that give ``name``: ``values`` is None, a
    (k, m) array, or k entries each None/empty (not given) or m numbers."""
    rows = np.zeros((k, m))
    given = np.zeros(k, dtype=bool)
    if values is None:
        return rows, given
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.shape == (k, m):
        return values.astype(float), np.ones(k, dtype=bool)     # every point gives them
    entries = list(values)
    if len(entries) != k:
        raise TrajectoryError(ErrorCode.INVALID_GOAL,
                              '%s: %d points given for %d waypoints' % (name, len(entries), k))
    for i, entry in enumerate(entries):
        if entry is None or len(entry) == 0:
            continue
        row = np.asarray(entry, dtype=float)
        if row.shape != (m,):
            raise TrajectoryError(
                ErrorCode.INVALID_GOAL,
                'point %d: %d %s for %d joints' % (i, row.size, name, m))
        rows[i] = row
        given[i] = True
    return rows, given


def _coefficients(T, p0, v0, a0, p1, v1, a1, degree):
    """Polynomial pieces between knots, all at once: (k, 6, m) coefficients in normalised
    time s = (t - t0) / T, x_j = c_j T^j (so the values stay O(|positions|) for any T), for
    k pieces of lengths ``T`` (k,) [s] joining (p0, v0, a0) to (p1, v1, a1) (each (k, m)):
    linear where ``degree`` (k,) is 1, cubic Hermite where 3, quintic where 5."""
    k, m = p0.shape
    T = T[:, None]
    x = np.zeros((k, 6, m))
    x[:, 0] = p0
    lin, cub, qui = degree == 1, degree == 3, degree == 5
    x[lin, 1] = (p1 - p0)[lin]
    if cub.any():
        Tc = T[cub]
        x1 = v0[cub] * Tc
        h = p1[cub] - p0[cub] - x1                 # what the linear part misses at the end
        hv = (v1[cub] - v0[cub]) * Tc
        x[cub, 1] = x1
        x[cub, 2] = 3.0 * h - hv
        x[cub, 3] = hv - 2.0 * h
    if qui.any():
        Tq = T[qui]
        x1 = v0[qui] * Tq
        x2 = 0.5 * a0[qui] * Tq * Tq
        h = p1[qui] - p0[qui] - x1 - x2
        hv = (v1[qui] - v0[qui] - a0[qui] * Tq) * Tq
        ha = (a1[qui] - a0[qui]) * Tq * Tq
        x[qui, 1] = x1
        x[qui, 2] = x2
        x[qui, 3] = 10.0 * h - 4.0 * hv + 0.5 * ha
        x[qui, 4] = -15.0 * h + 7.0 * hv - ha
        x[qui, 5] = 6.0 * h - 3.0 * hv + 0.5 * ha
    return x


def _evaluate(x, t0, T, t):
    """(positions, velocities, accelerations) (m,) of one piece ``x`` (6, m) (knot t0,
    length T [s]) at time t [s] (clamped to the piece)."""
    s = min(max((t - t0) / T, 0.0), 1.0)
    p = x[5]
    v = 5.0 * x[5]
    a = 20.0 * x[5]
    for j in (4, 3, 2):
        p = p * s + x[j]
        v = v * s + j * x[j]
        a = a * s + j * (j - 1) * x[j]
    p = (p * s + x[1]) * s + x[0]
    v = v * s + x[1]
    return p, v / T, a / (T * T)


def _peak_rates(x, T):
    """Largest |acceleration| and |jerk| (each (k, m)) over each of k pieces ``x`` (k, 6, m)
    of lengths ``T`` (k,) [s]: exact, from the polynomials' values at the ends and at the
    interior roots of their derivatives (a linear piece has neither)."""
    x2, x3, x4, x5 = x[:, 2], x[:, 3], x[:, 4], x[:, 5]
    T = T[:, None]

    def acc(s):
        return np.abs(((20.0 * x5 * s + 12.0 * x4) * s + 6.0 * x3) * s + 2.0 * x2) / (T * T)

    def jerk(s):
        return np.abs((60.0 * x5 * s + 24.0 * x4) * s + 6.0 * x3) / (T * T * T)

    # jerk = 0: 60 x5 s^2 + 24 x4 s + 6 x3 = 0; snap = 0: s = -x4 / (5 x5)
    a, b, c = 60.0 * x5, 24.0 * x4, 6.0 * x3
    with np.errstate(divide='ignore', invalid='ignore'):
        root = np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0))
        quadratic = [(-b + root) / (2.0 * a), (-b - root) / (2.0 * a)]
        linear = -c / b
        stationary = [np.where(a != 0.0, r, np.where(b != 0.0, linear, 0.0))
                      for r in quadratic]
        snap_zero = np.where(x5 != 0.0, -x4 / (5.0 * x5), 0.0)
    ones, zeros = np.ones_like(x2), np.zeros_like(x2)
    peak_acc = np.max([acc(np.clip(np.nan_to_num(s), 0.0, 1.0))
                       for s in [zeros, ones] + stationary], axis=0)
    peak_jerk = np.max([jerk(np.clip(np.nan_to_num(s), 0.0, 1.0))
                        for s in (zeros, ones, snap_zero)], axis=0)
    return peak_acc, peak_jerk


def _degrees(has_v, has_a):
    """Degree (k-1,) of each piece between consecutive waypoints: linear where either end
    has positions only, cubic where both give velocities, quintic where both also give
    accelerations."""
    both_v = has_v[:-1] & has_v[1:]
    both_a = has_a[:-1] & has_a[1:]
    return np.where(both_v, np.where(both_a, 5, 3), 1)


class JointTrajectory:
    """Waypoints of named joints, as trajectory_msgs/JointTrajectory carries them.

    Parameters
    ----------
    joint_names : sequence of str, (m,) distinct names
    time_from_start : (k,) times of the waypoints from the trajectory's start [s], >= 0 and
        strictly increasing
    positions : (k, m) [rad or m]
    velocities, accelerations : None (no waypoint gives them), a (k, m) array, or k entries
        each None / empty (that waypoint does not give them) or m values [/s, /s^2]
    stamp : the trajectory's start in simulation time [s]; 0 means "when it is started"

    Raises
    ------
    TrajectoryError
        INVALID_JOINTS for no, empty or duplicate joint names; INVALID_GOAL for no
        waypoints, rows of the wrong length, non-finite values, negative or non-increasing
        times or a non-finite stamp.  The message names the joint or the point.
    """

    def __init__(self, joint_names, time_from_start, positions, velocities=None,
                 accelerations=None, stamp=0.0):
        names = tuple(str(n) for n in joint_names)
        if not names:
            raise TrajectoryError(ErrorCode.INVALID_JOINTS, 'the trajectory names no joints')
        for i, n in enumerate(names):
            if not n:
                raise TrajectoryError(ErrorCode.INVALID_JOINTS, 'joint name %d is empty' % i)
        seen = set()
        duplicates = [n for n in names if n in seen or seen.add(n)]
        if duplicates:
            raise TrajectoryError(ErrorCode.INVALID_JOINTS,
                                  'joint names repeated: %s' % ', '.join(sorted(set(duplicates))))
        times = np.asarray(time_from_start, dtype=float).reshape(-1)
        k, m = times.size, len(names)
        if k == 0:
            raise TrajectoryError(ErrorCode.INVALID_GOAL, 'the trajectory has no points')
        pos_rows = list(positions)
        if len(pos_rows) != k:
            raise TrajectoryError(ErrorCode.INVALID_GOAL, 'positions: %d points given for %d '
                                  'waypoints' % (len(pos_rows), k))
        p, given = _optional_rows('positions', pos_rows, k, m)
        if not given.all():
            raise TrajectoryError(ErrorCode.INVALID_GOAL, 'point %d has no positions'
                                  % int(np.flatnonzero(~given)[0]))
        v, has_v = _optional_rows('velocities', velocities, k, m)
        a, has_a = _optional_rows('accelerations', accelerations, k, m)
        for label, values in (('time_from_start', times), ('positions', p),
                              ('velocities', v), ('accelerations', a)):
            bad = ~np.isfinite(values)
            if bad.any():
                where = np.argwhere(bad)[0]
                raise TrajectoryError(
                    ErrorCode.INVALID_GOAL, 'point %d: %s not finite%s' % (
                        where[0], label, '' if values.ndim == 1 else
                        ' (joint %r)' % names[where[1]]))
        for label, values in (('positions', p), ('velocities', v)):
            big = np.abs(values) > MAX_COMMAND      # drive targets the drives cannot take
            if big.any():
                where = np.argwhere(big)[0]
                raise TrajectoryError(
                    ErrorCode.INVALID_GOAL, 'point %d: %s %.6g of joint %r beyond +-%g, the '
                    'largest drive target accepted' % (where[0], label, values[tuple(where)],
                                                       names[where[1]], MAX_COMMAND))
        if times[0] < 0.0:
            raise TrajectoryError(ErrorCode.INVALID_GOAL,
                                  'point 0: time_from_start %g s is negative' % times[0])
        steps = np.flatnonzero(np.diff(times) <= 0.0)
        if steps.size:
            i = int(steps[0])
            raise TrajectoryError(
                ErrorCode.INVALID_GOAL,
                'time_from_start not strictly increasing: point %d at %g s, point %d at %g s'
                % (i, times[i], i + 1, times[i + 1]))
        stamp = float(stamp)
        if not math.isfinite(stamp):
            raise TrajectoryError(ErrorCode.INVALID_GOAL, 'stamp %r is not finite' % stamp)
        self.joint_names = names
        self.time_from_start = times
        self.positions = p
        self.velocities = v
        self.accelerations = a
        self.has_velocities = has_v
        self.has_accelerations = has_a
        self.stamp = stamp
        self.start = None          # (t, positions, velocities) the trajectory started from
        self._build()

    @classmethod
    def _from_arrays(cls, joint_names, times, p, v, a, has_v, has_a, stamp):
        """A trajectory of arrays already checked (no validation: internal)."""
        self = cls.__new__(cls)
        self.joint_names = tuple(joint_names)
        self.time_from_start = times
        self.positions, self.velocities, self.accelerations = p, v, a
        self.has_velocities, self.has_accelerations = has_v, has_a
        self.stamp = stamp
        self.start = None
        self._build()
        return self

    def holding(self, columns, positions):
        """This trajectory with the joints ``columns`` (indices) held at ``positions``
        [rad or m] throughout (zero velocity and acceleration), without rebuilding it: a
        partial goal's missing joints, filled in when it starts."""
        other = JointTrajectory.__new__(JointTrajectory)
        other.__dict__.update(self.__dict__)
        other.positions = self.positions.copy()
        other.positions[:, columns] = positions
        other._x = self._x.copy()
        other._x[:, :, columns] = 0.0
        other._x[:, 0, columns] = positions
        return other

    @property
    def duration(self):
        """time_from_start of the last waypoint [s]."""
        return float(self.time_from_start[-1])

    def starting_from(self, time, positions, velocities):
        """This trajectory, starting at ``time`` (from the trajectory's start, [s]) from the
        state ``positions``, ``velocities`` (m,): the segment before the first waypoint
        joins that state to it (when ``time`` is before the first waypoint's time); the
        state counts as having accelerations (zero) when the first waypoint has them.  The
        pieces between waypoints are shared, not rebuilt."""
        other = JointTrajectory.__new__(JointTrajectory)
        other.__dict__.update(self.__dict__)
        other.start = (float(time), np.array(positions, dtype=float).reshape(-1),
                       np.array(velocities, dtype=float).reshape(-1))
        for label, arr in (('positions', other.start[1]), ('velocities', other.start[2])):
            if arr.shape != (len(self.joint_names),):
                raise ValueError('start %s: %d values for %d joints'
                                 % (label, arr.size, len(self.joint_names)))
        t0, p0, v0 = other.start
        t, hv, ha = self.time_from_start, self.has_velocities, self.has_accelerations
        other._lead = None
        if t0 < t[0]:
            degree = 1 if not hv[0] else (5 if ha[0] else 3)
            x = _coefficients(np.array([t[0] - t0]), p0[None], v0[None],
                              np.zeros_like(p0)[None], self.positions[:1],
                              self.velocities[:1], self.accelerations[:1],
                              np.array([degree]))
            other._lead = (x[0], t0, t[0] - t0)
        return other

    def _build(self):
        """The pieces between waypoints, stacked (built once per trajectory: a long
        trajectory costs a few vectorised operations, on the thread that accepts it)."""
        t, p, v, a = self.time_from_start, self.positions, self.velocities, self.accelerations
        self._knots = t[:-1]
        self._x = _coefficients(np.diff(t), p[:-1], v[:-1], a[:-1], p[1:], v[1:], a[1:],
                                _degrees(self.has_velocities, self.has_accelerations))
        self._lead = None          # the piece from the start state (starting_from)

    def peak_rates(self):
        """``(acceleration, jerk)``, each (k-1, m): the largest |acceleration| [rad/s^2 or
        m/s^2] and |jerk| [/s^3] of each joint on each piece between waypoints (a linear
        piece, between points without velocities, has neither: its velocity steps at the
        waypoints)."""
        return _peak_rates(self._x, np.diff(self.time_from_start))

    def sample(self, t):
        """Desired :class:`TrajectoryPoint` at ``t`` [s from the trajectory's start]:
        positions, velocities, accelerations, each (m,).  Before the start (or, without
        one, before the first waypoint) the first point of the trajectory with zero
        derivatives when it has no start state; after the last waypoint its positions with
        zero velocity and acceleration."""
        t = float(t)
        m = len(self.joint_names)
        times = self.time_from_start
        if t >= times[-1]:
            return TrajectoryPoint(self.positions[-1].copy(), np.zeros(m), np.zeros(m))
        lead = self._lead
        if t < times[0]:
            if lead is not None:
                return TrajectoryPoint(*_evaluate(lead[0], lead[1], lead[2],
                                                  max(t, lead[1])))
            return TrajectoryPoint(self.positions[0].copy(), np.zeros(m), np.zeros(m))
        i = int(np.searchsorted(self._knots, t, side='right')) - 1
        return TrajectoryPoint(*_evaluate(self._x[i], self._knots[i],
                                          times[i + 1] - times[i], t))

    def __repr__(self):
        return 'JointTrajectory(%d joints, %d points, %g s, stamp %g)' % (
            len(self.joint_names), self.time_from_start.size, self.duration, self.stamp)


# ---------------------------------------------------------------------- execution
_SUCCEEDED = 'succeeded'
_ABORTED = 'aborted'
_CANCELED = 'canceled'


class Execution:
    """One trajectory given to a :class:`TrajectoryFollower`, from acceptance to its
    :class:`Outcome`.  Thread-safe: the follower ends it from whichever thread calls
    ``update``/``cancel``/``set_trajectory``; others wait on it."""

    def __init__(self, trajectory, tolerances, origin, ordered=None):
        self.trajectory = trajectory          # as given (its own joint order)
        # in the follower's joint order (built where it is accepted, not where it starts):
        # (JointTrajectory, indices of the followed joints it does not name)
        self.ordered = ordered
        self.origin = origin
        self.path_tolerance, self.goal_tolerance, self.goal_time_tolerance = tolerances
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._outcome = None
        self._callbacks = []
        self._sample = None
        self.started_at = None                # simulation time it became active [s]

    @property
    def outcome(self):
        """The :class:`Outcome`, or None while pending or running."""
        return self._outcome

    def done(self):
        return self._done.is_set()

    def wait(self, timeout=None):
        """Block up to ``timeout`` s (wall clock) for the outcome; None if still running."""
        self._done.wait(timeout)
        return self._outcome

    def feedback(self):
        """The latest :class:`TrackingSample` while this execution ran (None before its
        first update)."""
        return self._sample

    def add_done_callback(self, callback):
        """Call ``callback(execution)`` when it ends (at once if it has), from the thread
        that ends it: keep it short and do not call back into the follower's lock."""
        with self._lock:
            if self._outcome is None:
                self._callbacks.append(callback)
                return
        callback(self)

    def _finish(self, status, code, text):
        """Set the outcome (first one wins); returns the callbacks to run, outside locks."""
        with self._lock:
            if self._outcome is not None:
                return []
            self._outcome = Outcome(status, ErrorCode(code), text)
            callbacks, self._callbacks = self._callbacks, []
        self._done.set()
        return [lambda cb=cb: cb(self) for cb in callbacks]


class _Active:
    """The follower's running trajectory: the execution, the trajectory in the follower's
    joint order with its start state, and the absolute time of its start."""
    __slots__ = ('execution', 'trajectory', 'origin', 'end', 'sampled')

    def __init__(self, execution, trajectory, origin):
        self.execution = execution
        self.trajectory = trajectory
        self.origin = origin
        self.end = origin + trajectory.duration
        self.sampled = False


class TrajectoryFollower:
    """Follows one :class:`JointTrajectory` at a time for the joints ``joint_names``.

    The plant calls :meth:`update` before every simulation tick with the measured state and
    applies what it returns as position targets with velocity (and acceleration)
    feed-forward; other threads call :meth:`set_trajectory` and :meth:`cancel` (all methods
    are thread-safe).

    Parameters (the JTC's defaults)
    -------------------------------
    joint_names : sequence of str, the joints followed, (n,)
    path_tolerance, goal_tolerance : sequences of :class:`JointTolerance`, the defaults a goal
        refines (JTC ``constraints.<joint>.trajectory`` / ``.goal``); values >= 0, 0 = not
        checked; unnamed joints are not checked
    goal_time_tolerance : default time after the trajectory's end by which the goal tolerance
        must hold [s]; 0 = no limit (the follower waits until it holds)
    stopped_velocity_tolerance : default goal velocity tolerance [rad/s or m/s] (the joints
        must have stopped); 0 = not checked
    allow_partial_joints_goal : accept trajectories naming only some joints (the others hold
        their position); otherwise they are refused with INVALID_JOINTS
    allow_nonzero_velocity_at_trajectory_end : accept a last waypoint with velocities
        (refused with INVALID_GOAL otherwise; the hold after it has zero velocity either way)
    continuous_joints : names of joints whose angle wraps: errors are taken modulo 2 pi and a
        trajectory starts from the measured angle shifted to the turn nearest its first point
    lookahead : targets are sampled this long after the update time [s] (the JTC samples one
        controller period ahead); tolerances are checked at the update time
    acceleration_limits, jerk_limits : {joint: limit} [rad/s^2 or m/s^2, /s^3] (e.g. URDF
        1.2's ``<limit acceleration jerk>``): a trajectory whose pieces between waypoints
        exceed one is refused with INVALID_GOAL; ``inf`` or 0: no limit
    """

    def __init__(self, joint_names, *, path_tolerance=(), goal_tolerance=(),
                 goal_time_tolerance=0.0, stopped_velocity_tolerance=0.01,
                 allow_partial_joints_goal=False,
                 allow_nonzero_velocity_at_trajectory_end=False, continuous_joints=(),
                 lookahead=0.0, acceleration_limits=None, jerk_limits=None):
        names = tuple(str(n) for n in joint_names)
        if not names:
            raise ValueError('TrajectoryFollower: no joints')
        seen = set()
        dup = sorted({n for n in names if n in seen or seen.add(n)})
        if dup:
            raise ValueError('TrajectoryFollower: joint names repeated: %s' % ', '.join(dup))
        self.joint_names = names
        self._index = {n: i for i, n in enumerate(names)}
        n = len(names)
        self._default_path = self._default_table('path_tolerance', path_tolerance, n)
        self._default_goal = self._default_table('goal_tolerance', goal_tolerance, n)
        svt = self._nonnegative('stopped_velocity_tolerance', stopped_velocity_tolerance)
        unset = self._default_goal[:, 1] == 0.0
        self._default_goal[unset, 1] = svt
        self._default_goal_time = self._nonnegative('goal_time_tolerance', goal_time_tolerance)
        self.allow_partial_joints_goal = bool(allow_partial_joints_goal)
        self.allow_nonzero_velocity_at_trajectory_end = bool(
            allow_nonzero_velocity_at_trajectory_end)
        unknown = [c for c in continuous_joints if c not in self._index]
        if unknown:
            raise ValueError('TrajectoryFollower: continuous_joints not followed: %s'
                             % ', '.join(map(str, unknown)))
        self._wraps = np.zeros(n, dtype=bool)
        self._wraps[[self._index[c] for c in continuous_joints]] = True
        self.lookahead = self._nonnegative('lookahead', lookahead)
        self._rate_limits = {}      # 'acceleration' / 'jerk' -> {joint: limit > 0, finite}
        for label, given in (('acceleration', acceleration_limits), ('jerk', jerk_limits)):
            table = {}
            for joint, value in dict(given or {}).items():
                if joint not in self._index:
                    raise ValueError('TrajectoryFollower: %s_limits names %r, not a followed '
                                     'joint (%s)' % (label, joint, ', '.join(names)))
                value = float(value)
                if not value >= 0.0:
                    raise ValueError('TrajectoryFollower: %s limit of %r must be >= 0, got %r'
                                     % (label, joint, value))
                if 0.0 < value < math.inf:
                    table[joint] = value
            self._rate_limits[label] = table
        self._lock = threading.Lock()
        self._pending = None        # Execution waiting for its stamp / the next update
        self._active = None         # _Active
        self._hold = None           # (n,) positions held when not executing
        self._time = None           # simulation time of the last update [s]
        self._measured = None       # positions at the last update
        self._targets = None        # TrajectoryPoint returned by the last update
        self._sample = None         # TrackingSample of the last update

    # -------------------------------------------------------------- configuration
    @staticmethod
    def _nonnegative(label, value):
        value = float(value)
        if not (math.isfinite(value) and value >= 0.0):
            raise ValueError('TrajectoryFollower: %s must be finite and >= 0, got %r'
                             % (label, value))
        return value

    def _default_table(self, label, tolerances, n):
        table = np.zeros((n, 3))
        for tol in tolerances:
            if tol.name not in self._index:
                raise ValueError('TrajectoryFollower: %s names %r, not a followed joint (%s)'
                                 % (label, tol.name, ', '.join(self.joint_names)))
            values = (tol.position, tol.velocity, tol.acceleration)
            for field, value in zip(('position', 'velocity', 'acceleration'), values):
                self._nonnegative('%s %s %s' % (label, tol.name, field), value)
            table[self._index[tol.name]] = values
        return table

    def _resolve(self, label, defaults, tolerances):
        """A goal's JointTolerance list over the defaults (0 keeps, -1 erases, > 0 sets)."""
        table = defaults.copy()
        seen = set()
        for tol in tolerances:
            if tol.name not in self._index:
                raise TrajectoryError(
                    ErrorCode.INVALID_JOINTS, '%s names joint %r, which is not followed (%s)'
                    % (label, tol.name, ', '.join(self.joint_names)))
            if tol.name in seen:
                raise TrajectoryError(ErrorCode.INVALID_GOAL,
                                      '%s names joint %r twice' % (label, tol.name))
            seen.add(tol.name)
            i = self._index[tol.name]
            for j, field in enumerate(('position', 'velocity', 'acceleration')):
                table[i, j] = _resolve_value('%s of %r: %s' % (label, tol.name, field),
                                             table[i, j], getattr(tol, field))
        return table

    # -------------------------------------------------------------- commands
    def validate(self, trajectory, path_tolerance=(), goal_tolerance=(),
                 goal_time_tolerance=0.0, now=None):
        """Check ``trajectory`` and a goal's tolerances against this follower, as
        :meth:`set_trajectory` does, without changing anything.  Returns the resolved
        (path (n, 3), goal (n, 3), goal time [s]) tolerances (columns position, velocity,
        acceleration; 0 = not checked).

        Raises
        ------
        TrajectoryError
            INVALID_JOINTS: a joint that is not followed, or followed joints missing (unless
            partial goals are allowed), or a tolerance naming an unknown joint;
            INVALID_GOAL: a last waypoint with velocities (unless allowed), a piece beyond
            an acceleration or jerk limit, an illegal tolerance; OLD_HEADER_TIMESTAMP: stamped, and ending before ``now`` (default: the
            last update's time).
        """
        unknown = [n for n in trajectory.joint_names if n not in self._index]
        if unknown:
            raise TrajectoryError(
                ErrorCode.INVALID_JOINTS, 'joints not followed by this controller: %s '
                '(it follows %s)' % (', '.join(unknown), ', '.join(self.joint_names)))
        if not self.allow_partial_joints_goal:
            missing = [n for n in self.joint_names if n not in trajectory.joint_names]
            if missing:
                raise TrajectoryError(
                    ErrorCode.INVALID_JOINTS, 'joints missing from the trajectory: %s (partial '
                    'goals are not allowed)' % ', '.join(missing))
        if not self.allow_nonzero_velocity_at_trajectory_end and trajectory.has_velocities[-1]:
            last = trajectory.velocities[-1]
            moving = np.flatnonzero(np.abs(last) > np.finfo(np.float32).eps)
            if moving.size:
                j = int(moving[0])
                raise TrajectoryError(
                    ErrorCode.INVALID_GOAL, 'velocity of the last point of joint %r is not '
                    'zero: %.15g' % (trajectory.joint_names[j], last[j]))
        self._check_rates(trajectory)
        if now is None:
            now = self._time
        if trajectory.stamp != 0.0 and now is not None:
            end = trajectory.stamp + trajectory.duration
            if end < now:
                raise TrajectoryError(
                    ErrorCode.OLD_HEADER_TIMESTAMP, 'the trajectory stamped %.9g s ends at '
                    '%.9g s, before now (%.9g s)' % (trajectory.stamp, end, now))
        path = self._resolve('path_tolerance', self._default_path, path_tolerance)
        goal = self._resolve('goal_tolerance', self._default_goal, goal_tolerance)
        goal_time = _resolve_value('goal_time_tolerance', self._default_goal_time,
                                   goal_time_tolerance)
        return path, goal, goal_time

    def _check_rates(self, trajectory):
        """INVALID_GOAL when a piece of ``trajectory`` exceeds an acceleration or jerk
        limit, naming the joint, the piece and both values."""
        if not any(self._rate_limits.values()) or trajectory.time_from_start.size < 2:
            return
        peaks = dict(zip(('acceleration', 'jerk'), trajectory.peak_rates()))
        units = {'acceleration': '/s^2', 'jerk': '/s^3'}
        t = trajectory.time_from_start
        for label, table in self._rate_limits.items():
            for col, joint in enumerate(trajectory.joint_names):
                limit = table.get(joint)
                if limit is None:
                    continue
                over = np.flatnonzero(peaks[label][:, col] > limit)
                if over.size:
                    i = int(over[0])
                    raise TrajectoryError(
                        ErrorCode.INVALID_GOAL, 'joint %r: the piece from point %d (%.9g s) to '
                        'point %d (%.9g s) reaches %s %.6g%s, beyond its limit %.6g'
                        % (joint, i, t[i], i + 1, t[i + 1], label,
                           peaks[label][i, col], units[label], limit))

    def set_trajectory(self, trajectory, *, path_tolerance=(), goal_tolerance=(),
                       goal_time_tolerance=0.0, now=None, origin='a new trajectory'):
        """Accept ``trajectory`` (a :class:`JointTrajectory`) with a goal's tolerances
        (control_msgs semantics: sequences of :class:`JointTolerance`, 0 = the default,
        -1 = not checked; ``goal_time_tolerance`` [s], 0 = the default, -1 = no limit).

        It starts at the first update at or after its stamp (stamp 0: the next update),
        from the measured state, and replaces the running trajectory then; a trajectory
        accepted earlier and not yet started is replaced at once.  A replaced execution is
        aborted with INVALID_GOAL ("preempted by ``origin``").  Returns its
        :class:`Execution`.  Raises :class:`TrajectoryError` as :meth:`validate` and
        changes nothing then.
        """
        with self._lock:
            tolerances = self.validate(trajectory, path_tolerance, goal_tolerance,
                                       goal_time_tolerance, now)
        # the heavy part (a long trajectory in joint order) on the caller's thread, outside
        # the lock the plant's update takes
        execution = Execution(trajectory, tolerances, origin, self._in_joint_order(trajectory))
        with self._lock:
            replaced, self._pending = self._pending, execution
            run = []
            if replaced is not None:
                run = replaced._finish(_ABORTED, ErrorCode.INVALID_GOAL,
                                       'Current goal preempted by %s before it started' % origin)
        _run(run)
        return execution

    def cancel(self, execution):
        """End ``execution`` as canceled if it is pending or running; a running one stops
        and the joints hold the positions measured at the last update.  Returns whether it
        was canceled (False if it had already ended)."""
        with self._lock:
            run, canceled = [], False
            if self._pending is execution:
                self._pending = None
                canceled = True
                run = execution._finish(_CANCELED, ErrorCode.SUCCESSFUL, 'Canceled before it '
                                        'started')
            elif self._active is not None and self._active.execution is execution:
                self._stop_active(self._measured)
                canceled = True
                run = execution._finish(_CANCELED, ErrorCode.SUCCESSFUL,
                                        'Canceled: holding position')
        _run(run)
        return canceled

    def release(self, reason):
        """Stop following: a pending or running execution is aborted with INVALID_GOAL and
        ``reason``, and :meth:`update` returns None until the next trajectory (the plant's
        other commands take over the joints)."""
        with self._lock:
            run = []
            for execution in (self._pending,
                              self._active.execution if self._active else None):
                if execution is not None:
                    run += execution._finish(_ABORTED, ErrorCode.INVALID_GOAL, reason)
            self._pending = self._active = self._hold = None
            self._targets = self._sample = None
        _run(run)

    @property
    def active(self):
        """The running :class:`Execution` (None when holding or idle)."""
        active = self._active
        return active.execution if active is not None else None

    @property
    def pending(self):
        """The accepted :class:`Execution` waiting for its start (None if none)."""
        return self._pending

    def state(self):
        """The :class:`TrackingSample` of the last update (None before the first trajectory
        or after :meth:`release`)."""
        return self._sample

    # -------------------------------------------------------------- the plant's call
    def update(self, t, positions, velocities, accelerations=None):
        """Targets for the tick starting at simulation time ``t`` [s], given the measured
        ``positions``, ``velocities`` (and optionally ``accelerations``), each (n,) in
        ``joint_names`` order.

        Returns a :class:`TrajectoryPoint` (positions, velocities, accelerations, (n,)):
        the trajectory's sample at ``t + lookahead`` while one runs, the held positions
        with zero velocity after one ended; None before any trajectory (and after
        :meth:`release`): the plant's other commands apply.
        """
        t = float(t)
        n = len(self.joint_names)
        q = np.array(positions, dtype=float).reshape(-1)
        v = np.array(velocities, dtype=float).reshape(-1)
        acc = None if accelerations is None else np.array(accelerations, float).reshape(-1)
        for label, arr in (('positions', q), ('velocities', v), ('accelerations', acc)):
            if arr is not None and arr.shape != (n,):
                raise ValueError('TrajectoryFollower.update: %d %s for %d joints (%s)'
                                 % (arr.size, label, n, ', '.join(self.joint_names)))
        run = []
        with self._lock:
            self._time = t
            self._measured = q
            pending = self._pending
            if pending is not None and (pending.trajectory.stamp == 0.0
                                        or t >= pending.trajectory.stamp):
                self._pending = None
                run += self._start(pending, t, q, v)
            if self._active is None:
                if self._hold is None:
                    return None
                zero = np.zeros(n)
                desired = TrajectoryPoint(self._hold.copy(), zero, zero.copy())
                targets = desired
                self._record(t, 0.0, desired, q, v, acc, targets, None)
            else:
                targets, more = self._follow(t, q, v, acc)
                run += more
            self._targets = targets
        _run(run)
        return targets

    # -------------------------------------------------------------- internals (locked)
    def _start(self, execution, t, q, v):
        run = []
        if self._active is not None:
            run += self._active.execution._finish(
                _ABORTED, ErrorCode.INVALID_GOAL,
                'Current goal preempted by %s' % execution.origin)
        given = execution.trajectory
        origin = given.stamp if given.stamp != 0.0 else t
        full, missing = execution.ordered
        if missing.size:
            hold = self._targets.positions if self._targets is not None else q
            full = full.holding(missing, hold[missing])
        start_q = q.copy()
        if self._wraps.any():
            first = full.positions[0]
            nearest = first - wrap_angles(first - q, self._wraps)
            start_q[self._wraps] = nearest[self._wraps]
        full = full.starting_from(t - origin, start_q, v)
        self._active = _Active(execution, full, origin)
        self._hold = None
        execution.started_at = t
        return run

    def _in_joint_order(self, given):
        """``(trajectory, missing)``: ``given`` over every followed joint, and the indices
        (int array) of the followed joints it does not name (held when it starts: their
        columns are zero here, with zero velocity and acceleration where given)."""
        n, k = len(self.joint_names), given.time_from_start.size
        cols = [self._index[name] for name in given.joint_names]
        p = np.zeros((k, n))
        vel = np.zeros((k, n))
        acc = np.zeros((k, n))
        p[:, cols] = given.positions
        vel[:, cols] = given.velocities
        acc[:, cols] = given.accelerations
        missing = np.setdiff1d(np.arange(n), cols)
        return (JointTrajectory._from_arrays(self.joint_names, given.time_from_start, p, vel,
                                             acc, given.has_velocities,
                                             given.has_accelerations, given.stamp), missing)

    def _stop_active(self, hold):
        self._active = None
        self._hold = None if hold is None else np.array(hold, dtype=float)

    def _record(self, t, since, desired, q, v, acc, targets, execution):
        err_p = wrap_angles(desired.positions - q, self._wraps)
        err = TrajectoryPoint(err_p, desired.velocities - v,
                              None if acc is None else desired.accelerations - acc)
        sample = TrackingSample(t, since, desired, TrajectoryPoint(q, v, acc), err, targets)
        self._sample = sample
        if execution is not None:
            execution._sample = sample
        return sample

    def _follow(self, t, q, v, acc):
        active = self._active
        execution = active.execution
        since = t - active.origin
        desired = active.trajectory.sample(since)
        targets = desired if self.lookahead == 0.0 else active.trajectory.sample(
            since + self.lookahead)
        sample = self._record(t, since, desired, q, v, acc, targets, execution)
        before_end = t < active.end
        first = not active.sampled
        active.sampled = True
        error = sample.error
        if before_end or first:
            violations = _violations(self.joint_names, error, execution.path_tolerance)
            if violations:
                self._stop_active(q)
                hold = self._hold_point()
                return hold, execution._finish(
                    _ABORTED, ErrorCode.PATH_TOLERANCE_VIOLATED,
                    'Aborted due to path tolerance violation at %.6g s from the start: %s'
                    % (since, '; '.join(violations)))
        if not before_end:
            violations = _violations(self.joint_names, error, execution.goal_tolerance)
            if not violations:
                self._stop_active(active.trajectory.positions[-1])
                return self._hold_point(), execution._finish(
                    _SUCCEEDED, ErrorCode.SUCCESSFUL, 'Goal successfully reached!')
            late = t - active.end
            if execution.goal_time_tolerance > 0.0 and late > execution.goal_time_tolerance:
                self._stop_active(q)
                return self._hold_point(), execution._finish(
                    _ABORTED, ErrorCode.GOAL_TOLERANCE_VIOLATED,
                    'Aborted due to goal_time_tolerance exceeding by %.6g seconds: %s'
                    % (late - execution.goal_time_tolerance, '; '.join(violations)))
        return targets, []

    def _hold_point(self):
        n = len(self.joint_names)
        return TrajectoryPoint(self._hold.copy(), np.zeros(n), np.zeros(n))


def _resolve_value(label, default, value):
    value = float(value)
    if not math.isfinite(value):
        raise TrajectoryError(ErrorCode.INVALID_GOAL, '%s is not finite' % label)
    if value > 0.0:
        return value
    if abs(value + 1.0) < np.finfo(np.float32).eps:     # -1 erases the default
        return 0.0
    if value < 0.0:
        raise TrajectoryError(ErrorCode.INVALID_GOAL, '%s is %g: a tolerance is > 0, 0 '
                              '(the default) or -1 (not checked)' % (label, value))
    return default


def _violations(names, error, table):
    """['joint 'a' position error 0.1 exceeds tolerance 0.05', ...] (0 = not checked)."""
    found = []
    for j, (field, values) in enumerate((('position', error.positions),
                                          ('velocity', error.velocities),
                                          ('acceleration', error.accelerations))):
        if values is None:
            continue
        bad = (table[:, j] > 0.0) & (np.abs(values) > table[:, j])
        for i in np.flatnonzero(bad):
            found.append('joint %r %s error %.6g exceeds tolerance %.6g'
                         % (names[i], field, values[i], table[i, j]))
    return found


def _run(callbacks):
    for callback in callbacks:
        callback()
