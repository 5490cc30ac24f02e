"""The JointTrajectoryController's ROS interfaces on a node, around a TrajectoryFollower.

On the given node (names relative to its namespace, as a JTC named
``joint_trajectory_controller`` has them):

    joint_trajectory_controller/joint_trajectory  (sub, trajectory_msgs/JointTrajectory)
    joint_trajectory_controller/follow_joint_trajectory
                                      (action server, control_msgs/action/FollowJointTrajectory)
    joint_trajectory_controller/controller_state
                                      (pub, control_msgs/msg/JointTrajectoryControllerState)

The plant (the node's stepping thread) calls ``follower.update`` before every tick and
applies the targets; this class only turns messages into follower calls and the follower's
outcomes and samples into results, feedback and state.  All times are simulation time [s]:
``now()`` gives it, and the node passes it to :meth:`TrajectoryInterfaces.publish_state`.

Executors: the action's execute callback is a coroutine that yields to the executor until
its execution ends, woken by a guard condition the follower's done callback triggers (and by
the feedback timer), so it never blocks a thread: it works on a SingleThreadedExecutor as on
a MultiThreadedExecutor.
"""
import array
import threading

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.clock import Clock, ClockType
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from ..control.joint_trajectory import (ErrorCode, JointTolerance, JointTrajectory,
                                        TrajectoryError)
from . import qos
from .tasks import NextPass
from .conversions import split_ns, stamp_to_ns, time_msg, time_to_ns

#: the most points a trajectory (topic or goal) may have: rclpy turns a message into Python
#: objects holding the interpreter lock (about 0.5 s per 100,000 points on a 2-core
#: machine), so a longer motion goes in pieces (each replaces the last at its stamp)
MAX_TRAJECTORY_POINTS = 100_000
#: the JTC's interface names under its controller name
TRAJECTORY_TOPIC = 'joint_trajectory'
ACTION = 'follow_joint_trajectory'
STATE_TOPIC = 'controller_state'


def duration_seconds(duration):
    """``builtin_interfaces/Duration`` -> seconds (sec may be negative, nanosec >= 0)."""
    return duration.sec + duration.nanosec * 1e-9


def trajectory_from_msg(msg):
    """``trajectory_msgs/JointTrajectory`` -> :class:`JointTrajectory` (stamp in seconds).

    Raises :class:`TrajectoryError` (INVALID_GOAL) for more than
    :data:`MAX_TRAJECTORY_POINTS` points, for effort fields (the follower commands
    positions with velocity feed-forward, not efforts) and as :class:`JointTrajectory` does.
    """
    points = msg.points
    if len(points) > MAX_TRAJECTORY_POINTS:
        raise TrajectoryError(ErrorCode.INVALID_GOAL, 'the trajectory has %d points, more '
                              'than the %d a trajectory may have: send it in pieces'
                              % (len(points), MAX_TRAJECTORY_POINTS))
    for i, point in enumerate(points):
        if len(point.effort):
            raise TrajectoryError(ErrorCode.INVALID_GOAL, 'point %d has effort values: '
                                  'effort trajectories are not supported (positions, '
                                  'velocities and accelerations are)' % i)
    return JointTrajectory(
        list(msg.joint_names),
        [duration_seconds(p.time_from_start) for p in points],
        _rows([p.positions for p in points], len(msg.joint_names)),
        _rows([p.velocities for p in points], len(msg.joint_names)),
        _rows([p.accelerations for p in points], len(msg.joint_names)),
        stamp=stamp_to_ns(msg.header.stamp) * 1e-9)


def _rows(fields, m):
    """One field of every point: a (k, m) array when every point gives m values (one
    conversion for the whole trajectory), else the fields as they are (JointTrajectory
    names the point that is off)."""
    if fields and all(len(f) == m for f in fields):
        if all(isinstance(f, array.array) and f.typecode == 'd' for f in fields):
            # a message's float64[] fields: their buffers joined, no per-number conversion
            return np.frombuffer(b''.join(fields), dtype=np.float64).reshape(len(fields), m)
        return np.array(fields, dtype=float).reshape(len(fields), m)
    return [list(f) for f in fields]


def tolerances_from_msg(tolerances):
    """control_msgs/JointTolerance[] -> [:class:`JointTolerance`]."""
    return [JointTolerance(t.name, t.position, t.velocity, t.acceleration) for t in tolerances]


def point_msg(point, time_from_start=None):
    """:class:`TrajectoryPoint` -> ``trajectory_msgs/JointTrajectoryPoint`` (a field that is
    None stays empty)."""
    msg = JointTrajectoryPoint()
    if point.positions is not None:
        msg.positions = point.positions.tolist()
    if point.velocities is not None:
        msg.velocities = point.velocities.tolist()
    if point.accelerations is not None:
        msg.accelerations = point.accelerations.tolist()
    if time_from_start is not None:
        msg.time_from_start = _duration_msg(time_from_start)
    return msg


def _duration_msg(seconds):
    sec, nanosec = split_ns(time_to_ns(seconds))
    return Duration(sec=sec, nanosec=nanosec)


class TrajectoryInterfaces:
    """The JTC's topic, action and state topic for ``follower`` on ``node``.

    Parameters
    ----------
    node : rclpy Node
    follower : :class:`ros_vi.control.TrajectoryFollower`, updated by the node's plant
    now : callable returning the simulation time [s] (validation of stamped trajectories)
    callback_group : for the subscription, action server, timer and guard condition
    feedback_period : wall-clock period of the action's feedback [s]
    controller_name : the prefix of the interface names
    """

    def __init__(self, node, follower, now, callback_group=None, feedback_period=0.05,
                 controller_name='joint_trajectory_controller'):
        if not feedback_period > 0.0:
            raise ValueError('TrajectoryInterfaces: feedback_period must be > 0 s, got %r'
                             % (feedback_period,))
        self._node = node
        self.follower = follower
        self._now = now
        self._log = node.get_logger()
        self._lock = threading.Lock()
        self._goals = {}                  # Execution -> ServerGoalHandle, while running
        self._fed = {}                    # Execution -> time of the last feedback sent
        self.refused = 0                  # trajectories and goals refused so far
        self.last_refusal = ''
        prefix = controller_name + '/'
        self.topic = prefix + TRAJECTORY_TOPIC
        self.action_name = prefix + ACTION
        self.state_topic = prefix + STATE_TOPIC
        self._sub = node.create_subscription(JointTrajectoryMsg, self.topic, self._on_topic,
                                             qos.COMMAND_QOS, callback_group=callback_group)
        self._state_pub = node.create_publisher(JointTrajectoryControllerState,
                                                self.state_topic, qos.STATE_QOS)
        # triggered from the plant's thread when an execution ends: wakes the executor so
        # the goal's coroutine sees the outcome at once
        self._wake = node.create_guard_condition(lambda: None, callback_group=callback_group)
        self._timer = node.create_timer(feedback_period, self._send_feedback,
                                        callback_group=callback_group,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._timer.cancel()        # runs only while a goal does: an idle node stays idle
        self._server = ActionServer(
            node, FollowJointTrajectory, self.action_name, self._execute,
            callback_group=callback_group,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda goal_handle: CancelResponse.ACCEPT,
            # as deep as the node's services: a burst of goals or result requests is
            # answered, not dropped by a 10-deep default queue
            goal_service_qos_profile=qos.SERVICE_QOS,
            result_service_qos_profile=qos.SERVICE_QOS,
            cancel_service_qos_profile=qos.SERVICE_QOS)

    def destroy(self):
        """Remove every entity from the node (running goals are released first)."""
        self.follower.release('the trajectory interfaces were shut down')
        self._server.destroy()
        self._node.destroy_timer(self._timer)
        self._node.destroy_guard_condition(self._wake)
        self._node.destroy_subscription(self._sub)
        self._node.destroy_publisher(self._state_pub)

    # -------------------------------------------------------------- inputs
    def _refuse(self, what, error):
        self.refused += 1
        self.last_refusal = '%s refused (%s): %s' % (what, error.error_code.name, error)
        self._log.warning(self.last_refusal, throttle_duration_sec=1.0)

    def _on_topic(self, msg):
        try:
            self.follower.set_trajectory(trajectory_from_msg(msg), now=self._now(),
                                         origin='a trajectory on ' + self.topic)
        except TrajectoryError as error:
            self._refuse('trajectory on ' + self.topic, error)

    def _accept(self, goal):
        """The goal's execution on the follower (TrajectoryError if it is invalid)."""
        multi = goal.multi_dof_trajectory.joint_names
        if len(multi) or len(goal.component_path_tolerance) or \
                len(goal.component_goal_tolerance):
            raise TrajectoryError(ErrorCode.INVALID_JOINTS, 'multi-DOF joints are not '
                                  'supported (multi_dof_trajectory names %s)'
                                  % (', '.join(multi) or 'none, but component tolerances '
                                     'are given'))
        return self.follower.set_trajectory(
            trajectory_from_msg(goal.trajectory),
            path_tolerance=tolerances_from_msg(goal.path_tolerance),
            goal_tolerance=tolerances_from_msg(goal.goal_tolerance),
            goal_time_tolerance=duration_seconds(goal.goal_time_tolerance),
            now=self._now(), origin='a new action goal')

    async def _execute(self, goal_handle):
        # Invalid goals are accepted and aborted at once with the action's error code and a
        # message naming the culprit (the JTC rejects them, which tells the client nothing)
        result = FollowJointTrajectory.Result()
        try:
            execution = self._accept(goal_handle.request)
        except TrajectoryError as error:
            self._refuse('goal', error)
            result.error_code = int(error.error_code)
            result.error_string = str(error)
            goal_handle.abort()
            return result
        with self._lock:
            self._goals[execution] = goal_handle
            self._timer.reset()
        execution.add_done_callback(lambda _: self._wake.trigger())
        try:
            while execution.outcome is None:
                if goal_handle.is_cancel_requested:
                    self.follower.cancel(execution)
                    break
                await NextPass()
        finally:
            with self._lock:
                self._goals.pop(execution, None)
                self._fed.pop(execution, None)
                if not self._goals:
                    self._timer.cancel()
        outcome = execution.outcome
        if outcome is None:                 # cancel found it ended by the follower already
            outcome = execution.wait()
        self._send_feedback_for(execution, goal_handle)
        result.error_code = int(outcome.error_code)
        result.error_string = outcome.error_string
        if outcome.status == 'succeeded':
            goal_handle.succeed()
        elif outcome.status == 'canceled' and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        return result

    # -------------------------------------------------------------- outputs
    def _send_feedback(self):
        with self._lock:
            goals = list(self._goals.items())
        for execution, goal_handle in goals:
            self._send_feedback_for(execution, goal_handle)

    def _send_feedback_for(self, execution, goal_handle):
        sample = execution.feedback()
        if sample is None or not goal_handle.is_active:
            return
        with self._lock:
            if self._fed.get(execution) == sample.time:
                return                      # nothing new since the last feedback
            self._fed[execution] = sample.time
        feedback = FollowJointTrajectory.Feedback()
        feedback.header.stamp = time_msg(sample.time)
        feedback.joint_names = list(self.follower.joint_names)
        feedback.desired = point_msg(sample.desired, sample.time_from_start)
        feedback.actual = point_msg(sample.actual, sample.time_from_start)
        feedback.error = point_msg(sample.error, sample.time_from_start)
        goal_handle.publish_feedback(feedback)

    def publish_state(self, stamp):
        """Publish the follower's last sample on the controller state topic, stamped
        ``stamp`` (simulation time [s]); returns False (nothing sent) before the first
        trajectory."""
        sample = self.follower.state()
        if sample is None:
            return False
        msg = JointTrajectoryControllerState()
        msg.header.stamp = time_msg(stamp)
        msg.joint_names = list(self.follower.joint_names)
        msg.reference = point_msg(sample.desired, sample.time_from_start)
        msg.feedback = point_msg(sample.actual, sample.time_from_start)
        msg.error = point_msg(sample.error, sample.time_from_start)
        msg.output = point_msg(sample.targets)
        msg.speed_scaling_factor = 1.0
        self._state_pub.publish(msg)
        return True
