"""TrajectoryInterfaces over DDS: a small plant node (its own context, a SingleThreadedExecutor,
and a stepping thread that advances simulated time and moves the joints to the follower's
targets, exactly or through a first-order lag) driven by an action client and a publisher on
the probe node."""
import threading
import time

import numpy as np
import pytest
import rclpy
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from rclpy.executors import SingleThreadedExecutor
from trajectory_msgs.msg import JointTrajectory

from ros_vi.control import TrajectoryFollower
from ros_vi.ros.trajectory_interfaces import TrajectoryInterfaces

from .harness import ActionGoalClient as Client
from .harness import duration, trajectory, wait_until

JOINTS = ['shoulder', 'elbow']
DT = 0.01


class Plant:
    """Simulated time advancing DT per DT of wall time; q follows the targets exactly
    (``lag=None``: q(t + DT) = the target sampled at t + DT) or as a first-order lag with
    rate ``lag`` [1/s]."""

    def __init__(self, lag=None):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('trajectory_plant', context=self.context)
        self.follower = TrajectoryFollower(JOINTS, lookahead=DT if lag is None else 0.0)
        self.lag = lag
        self.lock = threading.Lock()
        self.t = 0.0
        self.q = np.zeros(2)
        self.history = []                     # (t, q)
        self.interfaces = TrajectoryInterfaces(self.node, self.follower, lambda: self.t,
                                               feedback_period=0.02)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = False
        self._threads = [threading.Thread(target=self._spin, daemon=True),
                         threading.Thread(target=self._step, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _spin(self):
        while not self._stop:
            self.executor.spin_once(timeout_sec=0.05)

    def _step(self):
        v = np.zeros(2)
        while not self._stop:
            with self.lock:
                targets = self.follower.update(self.t, self.q, v)
                if targets is not None:
                    if self.lag is None:
                        q = targets.positions
                    else:
                        q = self.q + (targets.positions - self.q) * (1 - np.exp(-self.lag * DT))
                    v = (q - self.q) / DT
                    self.q = q
                self.t += DT
                self.history.append((self.t, self.q.copy()))
                self.interfaces.publish_state(self.t)
            time.sleep(DT)

    def positions_over(self, seconds):
        """q over the next ``seconds`` of simulated time."""
        with self.lock:
            start = len(self.history)
        wait_until(lambda: len(self.history) > start + seconds / DT, what='plant ticks')
        with self.lock:
            return np.array([q for _, q in self.history[start:]])

    def close(self):
        self._stop = True
        for thread in self._threads:
            thread.join(timeout=5)
        self.interfaces.destroy()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def plant():
    p = Plant()
    yield p
    p.close()


@pytest.fixture
def lagging_plant():
    p = Plant(lag=4.0)
    yield p
    p.close()


@pytest.fixture
def client(probe, plant):
    c = Client(probe, plant.interfaces.action_name)
    yield c
    c.destroy()


def goal(points, **kwargs):
    g = FollowJointTrajectory.Goal(trajectory=trajectory(points, JOINTS))
    for key, value in kwargs.items():
        setattr(g, key, value)
    return g


def test_goal_succeeds_with_feedback_and_reaches_its_end(plant, client):
    target = [0.8, -0.5]
    handle = client.send(goal([(0.5, [0.4, -0.2], None), (1.0, target, [0.0, 0.0])],
                              goal_tolerance=[JointTolerance(name=n, position=1e-3)
                                              for n in JOINTS]))
    response = client.result(handle)
    assert response.status == GoalStatus.STATUS_SUCCEEDED
    assert response.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert response.result.error_string == 'Goal successfully reached!'
    assert client.feedback
    fb = client.feedback[-1].feedback
    assert list(fb.joint_names) == JOINTS
    assert len(fb.desired.positions) == len(fb.actual.positions) == len(fb.error.positions) == 2
    np.testing.assert_allclose(fb.desired.positions, target, atol=1e-9)
    held = plant.positions_over(0.2)
    np.testing.assert_allclose(held, np.tile(target, (len(held), 1)), atol=1e-9)


def test_impossible_path_tolerance_against_a_lagging_plant_aborts(probe, lagging_plant):
    client = Client(probe, lagging_plant.interfaces.action_name)
    try:
        handle = client.send(goal([(1.0, [1.0, 0.0], None)], path_tolerance=[
            JointTolerance(name='shoulder', position=0.01)]))
        response = client.result(handle)
    finally:
        client.destroy()
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    assert "joint 'shoulder' position error" in response.result.error_string
    held = lagging_plant.positions_over(0.3)
    assert np.ptp(held[-10:], axis=0).max() < 1e-3          # holding, not following
    assert held[-1][0] < 0.5


def test_goal_with_unknown_joints_is_aborted_with_invalid_joints(plant, client):
    g = FollowJointTrajectory.Goal(trajectory=trajectory([(1.0, [0.1, 0.2], None)],
                                                         names=['shoulder', 'wrist']))
    response = client.result(client.send(g))
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS
    assert 'wrist' in response.result.error_string
    assert plant.interfaces.refused == 1
    np.testing.assert_array_equal(plant.positions_over(0.1)[-1], [0.0, 0.0])


def test_cancel_stops_the_motion_and_holds(plant, client):
    handle = client.send(goal([(5.0, [2.0, 2.0], None)]))
    wait_until(lambda: plant.q[0] > 0.1, what='the motion to start')
    at_cancel = plant.q.copy()
    cancel = handle.cancel_goal_async()
    wait_until(cancel.done, what='the cancel response')
    response = client.result(handle)
    assert response.status == GoalStatus.STATUS_CANCELED
    held = plant.positions_over(0.5)
    assert np.ptp(held, axis=0).max() == 0.0
    np.testing.assert_allclose(held[-1], at_cancel, atol=0.05)    # stopped where it was


def test_new_goal_preempts_the_running_one(plant, client):
    first = client.send(goal([(5.0, [2.0, 2.0], None)]))
    wait_until(lambda: plant.q[0] > 0.05, what='the motion to start')
    second = client.send(goal([(0.3, [0.0, 0.0], None)]))
    response = client.result(first)
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert 'preempted by a new action goal' in response.result.error_string
    assert client.result(second).status == GoalStatus.STATUS_SUCCEEDED


def test_topic_trajectory_is_followed_at_its_waypoints(probe, plant):
    states = probe.subscribe(JointTrajectoryControllerState, plant.interfaces.state_topic)
    pub = probe.publisher(JointTrajectory, plant.interfaces.topic)
    waypoints = [(0.5, [0.3, -0.3], [0.5, -0.2]), (1.0, [0.6, 0.1], [0.2, 0.4]),
                 (1.5, [0.5, 0.4], [0.0, 0.0])]
    pub.publish(trajectory(waypoints, JOINTS))
    seconds = lambda d: d.sec + d.nanosec * 1e-9
    done = states.wait(lambda m: seconds(m.reference.time_from_start) >= 1.5 - 1e-6,
                       what='the end of the trajectory')
    assert list(done.joint_names) == JOINTS
    msgs = states.msgs
    for t, p, v in waypoints:
        m = min(msgs, key=lambda m: abs(seconds(m.reference.time_from_start) - t))
        tfs = seconds(m.reference.time_from_start)
        assert abs(tfs - t) < 0.6 * DT
        np.testing.assert_allclose(m.feedback.positions, p, atol=2e-3)
        np.testing.assert_allclose(m.error.positions, 0.0, atol=1e-9)
    probe.unsubscribe(states)


def test_a_burst_of_goals_from_many_clients_is_answered(plant):
    """The action server kept 10 requests (the services keep 100): 30 clients sending a goal
    at once got 10-14 answers and the others waited forever.  Every goal and every result
    request is taken and answered now (all goals but the last are preempted).

    The clients ask for deep response queues too: the replies of one action's goal service
    reach every client of it (each keeps its own), so a client with the default depth of 10
    can lose its own reply in a burst of 30.  They run on a node of their own, spun only
    after the burst is sent (rclpy files a request's future after sending it: a reply
    handled in between on a spinning executor would find no future)."""
    from rclpy.action import ActionClient
    from rclpy.qos import QoSProfile
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('burst_clients', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    deep = QoSProfile(depth=100)

    def spin_until(futures, what):
        deadline = time.monotonic() + 30.0
        while not all(f.done() for f in futures):
            assert time.monotonic() < deadline, '%d of %d %s' % (
                sum(f.done() for f in futures), len(futures), what)
            executor.spin_once(timeout_sec=0.05)

    try:
        clients = [ActionClient(node, FollowJointTrajectory, plant.interfaces.action_name,
                                goal_service_qos_profile=deep,
                                result_service_qos_profile=deep) for _ in range(30)]
        for c in clients:
            assert c.wait_for_server(timeout_sec=20.0)
        sent = [c.send_goal_async(goal([(0.2 + 0.01 * i, [0.1, 0.1], None)]))
                for i, c in enumerate(clients)]
        spin_until(sent, 'goal responses')
        handles = [f.result() for f in sent]
        assert all(h.accepted for h in handles)
        results = [h.get_result_async() for h in handles]
        spin_until(results, 'results')
        statuses = [f.result().status for f in results]
        assert statuses.count(GoalStatus.STATUS_SUCCEEDED) >= 1
        assert set(statuses) <= {GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED}
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_a_trajectory_longer_than_the_bound_is_refused_naming_it():
    from trajectory_msgs.msg import JointTrajectoryPoint
    from ros_vi.control.joint_trajectory import TrajectoryError
    from ros_vi.ros.trajectory_interfaces import MAX_TRAJECTORY_POINTS, trajectory_from_msg
    msg = JointTrajectory(joint_names=JOINTS)
    point = JointTrajectoryPoint(positions=[0.0, 0.0])
    msg.points = [point] * (MAX_TRAJECTORY_POINTS + 1)
    with pytest.raises(TrajectoryError, match='has 100001 points, more than the 100000 a '
                                              'trajectory may have'):
        trajectory_from_msg(msg)


def test_message_fields_convert_to_the_same_arrays_as_lists():
    """The buffers of a message's float64[] fields are joined without a per-number
    conversion: the same trajectory as from plain lists."""
    from ros_vi.control.joint_trajectory import JointTrajectory as Trajectory
    from ros_vi.ros.trajectory_interfaces import trajectory_from_msg
    waypoints = [(0.1 * (k + 1), [0.01 * k, -0.02 * k], [0.1, 0.2 * (k % 3)])
                 for k in range(50)]
    tr = trajectory_from_msg(trajectory(waypoints, JOINTS))
    want = Trajectory(JOINTS, [w[0] for w in waypoints], [w[1] for w in waypoints],
                      [w[2] for w in waypoints])
    np.testing.assert_array_equal(tr.positions, want.positions)
    np.testing.assert_array_equal(tr.velocities, want.velocities)
    assert tr.has_velocities.all() and not tr.has_accelerations.any()
