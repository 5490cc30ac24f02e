"""Helpers for the DDS tests: a probe node spun in a background thread, simulator processes.

Every wait is a poll with a timeout (never a fixed sleep): discovery between processes
usually takes < 0.25 s but sometimes several seconds on a loaded machine.
"""
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ros_vi.ros import qos

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URDF_DIR = os.path.join(ROOT, 'urdf')
CONFIG_DIR = os.path.join(ROOT, 'config')
TIMEOUT = 20.0          # generous: a 2-core CI machine may be busy
_ids = itertools.count()
RUNNING = []            # every SimProcess started; conftest stops leftovers at session end


def urdf(name):
    return os.path.join(URDF_DIR, name + '.urdf')


def wait_until(predicate, timeout=TIMEOUT, what='condition', interval=0.01):
    """Poll ``predicate()`` until it returns a truthy value (returned) or fail."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError('timed out after %.1f s waiting for %s' % (timeout, what))
        time.sleep(interval)


class Recorder:
    """Messages of one subscription, with receive times (monotonic)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = []        # (receive time, msg)
        self.active = True

    def __call__(self, msg):
        with self.lock:
            self.items.append((time.monotonic(), msg))

    @property
    def msgs(self):
        with self.lock:
            return [m for _, m in self.items]

    def last(self):
        with self.lock:
            return self.items[-1][1] if self.items else None

    def clear(self):
        with self.lock:
            self.items.clear()

    def wait(self, predicate=lambda m: True, timeout=TIMEOUT, what='a message', start=0):
        """First message (index >= start) satisfying predicate."""
        def find():
            with self.lock:
                for _, m in self.items[start:]:
                    if predicate(m):
                        return (m,)
            return None
        return wait_until(find, timeout, what)[0]


class Probe:
    """A node in the test process, spun by a SingleThreadedExecutor in a thread."""

    def __init__(self):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('ros_vi_test_probe', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = False
        self._lock = threading.Lock()
        self._doomed = []
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        self._clients = {}

    def _spin(self):
        while not self._stop and self.context.ok():
            # entities are destroyed here, between waits, never under the executor's feet
            with self._lock:
                doomed, self._doomed = self._doomed, []
            for sub in doomed:
                self.node.destroy_subscription(sub)
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:
                if self._stop or not self.context.ok():
                    return
                raise

    def close(self):
        self._stop = True
        self._thread.join(timeout=5)
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)

    def subscribe(self, msg_type, topic, qos_profile=qos.STATE_QOS, callback=None):
        rec = Recorder()

        def cb(msg):
            if not rec.active:
                return
            rec(msg)
            if callback is not None:
                callback(msg)
        sub = self.node.create_subscription(msg_type, topic, cb, qos_profile)
        rec.subscription = sub
        return rec

    def unsubscribe(self, rec):
        """Stop recording; the subscription is destroyed by the spin thread."""
        rec.active = False
        with self._lock:
            self._doomed.append(rec.subscription)

    def publisher(self, msg_type, topic, qos_profile=qos.COMMAND_QOS, wait=True):
        pub = self.node.create_publisher(msg_type, topic, qos_profile)
        if wait:
            wait_until(lambda: pub.get_subscription_count() > 0,
                       what='a subscriber of %s' % topic)
        return pub

    def call(self, name, srv_type=Trigger, request=None, timeout=TIMEOUT):
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = self.node.create_client(srv_type, name)
        if not client.wait_for_service(timeout_sec=timeout):
            raise AssertionError('service %s not available within %g s' % (name, timeout))
        future = client.call_async(request if request is not None else srv_type.Request())
        wait_until(future.done, timeout, 'the response of %s' % name, interval=0.002)
        return future.result()


def _param_text(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_param_text(v) for v in value) + ']'
    if isinstance(value, float):
        return repr(value)
    return str(value)


class SimProcess:
    """``python -m ros_vi.ros.simulator_node`` in its own namespace, output to a file."""

    def __init__(self, params=None, params_file=None, namespace=None, args=()):
        self.namespace = namespace or '/sim%d_%d' % (os.getpid() % 10000, next(_ids))
        cmd = [sys.executable, '-m', 'ros_vi.ros.simulator_node', '--ros-args',
               '-r', '__ns:=' + self.namespace, '-r', '__node:=simulator']
        if params_file:
            cmd += ['--params-file', params_file]
        for key, value in (params or {}).items():
            cmd += ['-p', '%s:=%s' % (key, _param_text(value))]
        cmd += list(args)
        self.cmd = cmd
        self.log = tempfile.NamedTemporaryFile(prefix='ros_vi_sim_', suffix='.log',
                                               delete=False)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=ROOT)
        RUNNING.append(self)

    def topic(self, name):
        return self.namespace + '/' + name

    def service(self, name):
        return self.namespace + '/simulator/' + name

    def output(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log.name, 'r', errors='replace') as fh:
            return fh.read()

    def wait_started(self, timeout=60.0):
        """Wait for the node's start-up log line (imports and URDF import done)."""
        def started():
            if self.proc.poll() is not None:
                raise AssertionError('simulator exited with %s:\n%s'
                                     % (self.proc.returncode, self.output()))
            return 'simulating' in self.output()
        wait_until(started, timeout, 'the simulator %s to start' % self.namespace, 0.05)

    def alive(self):
        return self.proc.poll() is None

    def stop_cleanly(self):
        """:meth:`stop`, asserting a clean exit (:func:`assert_clean_exit`); the output."""
        code, out = self.stop()
        assert_clean_exit(code, out)
        return out

    def stop(self, timeout=30.0):
        # (30 s: in full runs on a loaded 2-core machine a paused node has twice taken over
        # 10 s to exit after SIGINT; alone it exits at once)
        if self in RUNNING:
            RUNNING.remove(self)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        out = self.output()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass
        return self.proc.returncode, out


def assert_clean_exit(code, out, name='the simulator'):
    """A node process ended by SIGINT exits 0 and logs no traceback."""
    assert code == 0, '%s exited with %s:\n%s' % (name, code, out)
    assert 'Traceback' not in out, out


def stop_all(procs):
    """Stop every process (even if some stop() fails); {index or key: (code, output)}."""
    items = procs.items() if isinstance(procs, dict) else enumerate(procs)
    out, error = {}, None
    for key, p in items:
        try:
            out[key] = p.stop()
        except Exception as err:      # keep stopping the others
            error = error or err
    if error is not None:
        raise error
    return out


def kv(diag_msg):
    """{key: value} of the first status of a DiagnosticArray."""
    return {v.key: v.value for v in diag_msg.status[0].values}


def duration(seconds):
    return Duration(sec=int(seconds), nanosec=int(round((seconds % 1) * 1e9)))


def trajectory(points, names):
    """points: [(time_from_start, positions, velocities or None)]."""
    msg = JointTrajectory()
    msg.joint_names = list(names)
    for t, p, v in points:
        pt = JointTrajectoryPoint(positions=list(p), time_from_start=duration(t))
        if v is not None:
            pt.velocities = list(v)
        msg.points.append(pt)
    return msg


class ActionGoalClient:
    """An action client on the probe node; calls block the test thread, never the probe."""

    def __init__(self, probe, name):
        self.client = ActionClient(probe.node, FollowJointTrajectory, name)
        assert self.client.wait_for_server(timeout_sec=TIMEOUT)
        self.feedback = []

    def send(self, goal):
        # DDS services have a discovery race: a request sent before the server has matched
        # this client's response reader is answered into the void.  Re-send such a goal
        # (the ROS 2 service limitation, not the server's behaviour, is what this covers).
        for attempt in range(3):
            future = self.client.send_goal_async(goal,
                                                 feedback_callback=self.feedback.append)
            try:
                wait_until(future.done, what='the goal response', timeout=TIMEOUT / 3)
                break
            except AssertionError:
                if attempt == 2:
                    raise
        handle = future.result()
        assert handle.accepted
        return handle

    def result(self, handle):
        future = handle.get_result_async()
        wait_until(future.done, what='the result')
        return future.result()

    def destroy(self):
        self.client.destroy()
