"""The ``simulator`` node: steps a URDF robot with ros_vi's midpoint VI at a fixed rate.

Run: ``ros2 run ros_vi simulator --ros-args -p urdf_file:=/path/robot.urdf`` (or, in the pip
environment, ``.venv/bin/simulator --ros-args ...``).  docs/simulator.md has the full table.

Publishes (names relative to the node's namespace)
    joint_states (sensor_msgs/JointState), tf (tf2_msgs/TFMessage, moving joints:
    parent link -> child link), tf_static (fixed joints, latched), robot_description
    (std_msgs/String, latched), clock (rosgraph_msgs/Clock at clock_rate, if publish_clock),
    diagnostics (diagnostic_msgs/DiagnosticArray: rate, iterations, energy, faults),
    joint_trajectory_controller/controller_state (control_msgs/JointTrajectoryControllerState).
    With ``distance_pairs``: ~/distances (std_msgs/Float64MultiArray, signed distances in
    pair order) and ~/closest_points (visualization_msgs/MarkerArray) with each state.
    With ``record:=run.mcap`` the published states also go to a ROS 2 MCAP file
    (:mod:`ros_vi.recording.mcap`), finished when the node is destroyed.
Subscribes
    joint_commands (sensor_msgs/JointState: position, velocity or effort by joint ``name``),
    {effort,position,velocity}_controller/commands (std_msgs/Float64MultiArray in
    ``command_joints`` order), joint_trajectory_controller/joint_trajectory
    (trajectory_msgs/JointTrajectory).
Action
    joint_trajectory_controller/follow_joint_trajectory (control_msgs FollowJointTrajectory).
Services (std_srvs/Trigger)
    ~/reset, ~/pause, ~/unpause, ~/step (``step_ticks`` ticks while paused).

All stamps are simulation time.  The simulation runs on a thread of its own paced by the
monotonic (wall) clock times ``real_time_factor``; the simulation core is
:class:`ros_vi.simulation.Simulation`.
"""
import collections
import functools
import math
import os
import sys
import threading
import time
import warnings

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from .. import resources, urdf
from ..control.joint_trajectory import TrajectoryFollower
from ..simulation import Simulation, default_command_interfaces
from ..urdf import URDFError
from . import conversions as conv
from . import parameters, qos, tasks
from .pacing import Pacer
from .parameters import ParameterError, SimulatorParameters
from .trajectory_interfaces import TrajectoryInterfaces


# the parameters (names, defaults, descriptions, checks): SimulatorParameters in
# ros_vi/ros/parameters.py; {name: (default, description)} here for launch files and tests
PARAMETERS = parameters.table(SimulatorParameters)

SLICE = 0.005             # wall s the step thread ticks before it looks at its inbox again
IDLE_WAIT = 0.5           # wall s between looks while paused (diagnostics come on time too)
REPUBLISH_PERIOD = 0.2    # lockstep: wall s between re-sends of a state not yet answered
VIEW_RATE = 30.0          # Hz (wall) at most of the browser view's updates
#: the command topics (relative names) and whether their messages carry the stamp of the
#: state they answer (lockstep matches stamped answers to states)
COMMAND_TOPICS = (('joint_commands', True), ('effort_controller/commands', False),
                  ('position_controller/commands', False),
                  ('velocity_controller/commands', False))


def resolve_uri(uri, name='urdf_file'):
    """:func:`ros_vi.resources.resolve_uri` for the ``urdf_file`` parameter (or ``name``)."""
    try:
        return resources.resolve_uri(uri)
    except resources.ResourceError as err:
        raise ParameterError('parameter %s: %s' % (name, err)) from None


def load_urdf_text(path, allowed_paths=()):
    """:func:`ros_vi.urdf.load_urdf_text` (``.urdf``, or ``.xacro`` processed by xacro in its
    sandbox, which may also read ``allowed_paths``) for the ``urdf_file`` parameter."""
    try:
        return urdf.load_urdf_text(path, allowed_paths=allowed_paths)
    except URDFError as err:
        raise ParameterError('parameter urdf_file: %s' % err) from None


class _Job:
    """A request run on the step thread; the caller (a service callback) waits for it."""

    def __init__(self, fn, ticks=0):
        self.fn = fn                  # run once on the step thread
        self.ticks = ticks            # ~/step: ticks still to run
        self.failed = 0               # ~/step: ticks that failed (state held)
        self.done = threading.Event()
        self.result = None
        self.error = None


class SimulatorNode(Node):
    """ROS 2 node wrapping :class:`ros_vi.simulation.Simulation` (see the module doc).

    Constructible in-process with ``SimulatorNode(parameter_overrides=[Parameter(...)])``
    (e.g. next to controller nodes on one executor).  Raises :class:`ParameterError` or
    :class:`ros_vi.urdf.URDFError` (both ValueError) naming the bad parameter.

    Threads: the simulation is stepped, and its state published, by one dedicated thread
    paced by the monotonic clock (:class:`ros_vi.ros.pacing.Pacer`); it alone touches
    :attr:`sim` once the node runs.  Subscriptions and services (run by the executor) post
    their work to it and services wait for the answer, so a busy step loop never leaves a
    call unanswered and a slow call never stalls the loop.  :meth:`destroy_node` stops it.
    """

    def __init__(self, node_name='simulator', **kwargs):
        super().__init__(node_name, **kwargs)
        parameters.declare(self, SimulatorParameters)
        cfg = parameters.read(self, SimulatorParameters)
        self.cfg = cfg
        self.sim = self._make_simulation(cfg)
        self.distances = self._make_distances(cfg)

        # bookkeeping (step thread)
        self._rejected = 0
        self._last_rejection = ''
        self._lockstep_timeouts = 0
        self._lock_ready = False
        self._lock_wait_since = time.monotonic()
        self._lock_republished = 0.0
        self._awaiting_controller = cfg.lockstep
        self._controller_wait_since = None     # set when the loop first runs in lockstep
        self._last_state_ns = None
        self._pacer = None
        self._tf_batch = None
        self._diag_ticks = 0
        self._diag_iterations = 0
        self._diag_wall = time.monotonic()
        self._diag_last_failure = 0
        self._diag_slipped = 0.0
        self._diag_due = time.monotonic() + cfg.diagnostics_period
        # the step thread's inbox: callables and ~/step jobs, and its wake-up
        self._inbox = collections.deque()
        self._step_jobs = collections.deque()
        self._wake = threading.Condition()
        self._stopping = False

        # publishers
        self._pub_js = self.create_publisher(JointState, 'joint_states', qos.STATE_QOS)
        self._pub_tf = self.create_publisher(TFMessage, 'tf', qos.TF_QOS)
        self._pub_tf_static = self.create_publisher(TFMessage, 'tf_static', qos.LATCHED_QOS)
        self._pub_desc = self.create_publisher(String, 'robot_description', qos.LATCHED_QOS)
        self._pub_clock = (self.create_publisher(ClockMsg, 'clock', qos.CLOCK_QOS)
                           if cfg.publish_clock else None)
        self._pub_diag = self.create_publisher(DiagnosticArray, 'diagnostics', qos.STATE_QOS)
        if self.distances is not None:
            self._pub_distances = self.create_publisher(Float64MultiArray, '~/distances',
                                                        qos.STATE_QOS)
            self._pub_closest = self.create_publisher(MarkerArray, '~/closest_points',
                                                      qos.STATE_QOS)
        # subscriptions (one callback at a time: commands keep their order)
        self.create_subscription(JointState, 'joint_commands', self._on_joint_commands,
                                 qos.COMMAND_QOS)
        for interface in ('effort', 'position', 'velocity'):
            self.create_subscription(
                Float64MultiArray, '%s_controller/commands' % interface,
                functools.partial(self._on_array_commands, interface), qos.COMMAND_QOS)
        # the joint trajectory controller's topic, action and state (a coroutine action:
        # its own group, so it never waits on the command callbacks)
        self.follower = self._make_follower(cfg)
        self.trajectory = None
        if self.follower is not None:
            self.trajectory = TrajectoryInterfaces(self, self.follower, lambda: self.sim.t,
                                                   callback_group=ReentrantCallbackGroup())
        # services: coroutines that wait for the step thread (woken by _jobs_done), so a
        # long ~/step holds up no other callback, on any executor
        self._jobs_done = self.create_guard_condition(lambda: None)
        services = ReentrantCallbackGroup()
        for name, callback in (('~/reset', self._on_reset), ('~/pause', self._on_pause),
                               ('~/unpause', self._on_unpause), ('~/step', self._on_step)):
            self.create_service(Trigger, name, callback, qos_profile=qos.SERVICE_QOS,
                                callback_group=services)
        self.add_on_set_parameters_callback(self._on_set_parameters)

        self.view = self._open_view(cfg) if cfg.viewer_port else None
        self._view_drawn = 0.0
        # the recording (last of what can fail at start: a node that does not start leaves
        # no file behind)
        self._recorder = self._open_recording(cfg) if cfg.record else None
        self._recorded_state = None

        # latched topics and the initial state
        self._pub_desc.publish(String(data=self._urdf_text))
        stamp = conv.time_msg(self.sim.t)
        self._pub_tf_static.publish(TFMessage(transforms=[
            conv.transform_stamped(p, c, g, stamp) for p, c, g in self.sim.static_transforms()]))
        if cfg.start_paused:
            self.sim.pause()
        self._publish_clock()
        if not cfg.lockstep:
            # in lockstep the first state waits for a controller to answer it (_lockstep)
            self._publish_state()

        for quirk in self._urdf_warnings:
            self.get_logger().warning('robot description: %s' % quirk)
        rtf = cfg.real_time_factor
        self.get_logger().info(
            'simulating %r: %d joints (%s), rate %g Hz x %d substeps, real_time_factor %g, '
            'publish_rate %g Hz, clock %s%s%s' % (
                self.sim.robot.name if self.sim.robot else 'system', len(self.sim.joint_names),
                ', '.join(self.sim.joint_names), cfg.rate, cfg.substeps, rtf,
                cfg.publish_rate, '%g Hz' % cfg.clock_rate if cfg.publish_clock else 'off',
                ', lockstep' if cfg.lockstep else '', ', paused' if cfg.start_paused else ''))
        self._thread = threading.Thread(target=self._run, name='ros_vi step loop',
                                        daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ parameters
    def _make_simulation(self, cfg):
        self._urdf_text, system = import_robot(cfg)
        robot = getattr(system, 'urdf', None)
        self._urdf_warnings = robot.warnings if robot is not None else ()
        names = [c.name for c in system.configs]
        joints = cfg.initial_joints or names
        initial = {}
        for pname in ('initial_positions', 'initial_velocities'):
            values = getattr(cfg, pname)
            if not values:
                initial[pname] = None
                continue
            if len(values) != len(joints):
                raise ParameterError('parameter %s: %d values for %d joints (%s)' % (
                    pname, len(values), len(joints),
                    'initial_joints' if cfg.initial_joints else 'all joints: '
                    + ', '.join(names)))
            initial[pname] = dict(zip(joints, values))
        unknown = [j for j in cfg.initial_joints if j not in names]
        if unknown:
            raise ParameterError('parameter initial_joints: unknown joint%s %s (joints: %s)'
                                 % ('s' if len(unknown) > 1 else '', ', '.join(unknown),
                                    ', '.join(names)))
        interfaces, bounds = self._command_interfaces(cfg, system, names, initial)
        try:
            sim = Simulation(system, 1.0 / cfg.rate, substeps=cfg.substeps,
                             command_timeout=cfg.command_timeout,
                             command_decay=cfg.command_decay,
                             command_joints=cfg.command_joints or None,
                             initial_positions=initial['initial_positions'],
                             initial_velocities=initial['initial_velocities'],
                             max_refinements=cfg.max_refinements,
                             max_iterations=cfg.max_iterations,
                             max_subdivisions=cfg.max_subdivisions,
                             tolerance=cfg.tolerance, command_interfaces=interfaces,
                             command_bounds=bounds, drive_gains=cfg.gains or None,
                             drive_frequency=cfg.drive_frequency,
                             drive_damping_ratio=cfg.drive_damping_ratio)
        except ValueError as err:
            msg = str(err)
            for pname in ('command_joints', 'initial_positions', 'initial_velocities',
                          'command_interfaces', 'drive_gains'):
                if msg.startswith(pname):
                    raise ParameterError('parameter ' + msg) from None
            raise ParameterError(msg) from None
        return sim

    def _command_interfaces(self, cfg, system, names, initial):
        """The Simulation's ``command_interfaces`` and ``command_bounds``: the URDF's
        ``<ros2_control>`` block (which also gives initial positions and velocities not set
        by parameters, completing ``initial``) or the default, then ``command_interfaces``
        entries per joint."""
        robot = getattr(system, 'urdf', None)
        controls = robot.joint_controls if robot is not None else {}
        prefix = cfg.prefix
        interfaces = default_command_interfaces(system)
        bounds = {}
        if controls:
            interfaces = {j: () for j in interfaces}
            declared = {'initial_positions': {}, 'initial_velocities': {}}
            for joint, control in controls.items():
                name = prefix + joint
                if control.initial_position is not None:
                    declared['initial_positions'][name] = control.initial_position
                if control.initial_velocity is not None:
                    declared['initial_velocities'][name] = control.initial_velocity
                if name not in interfaces:
                    continue        # the importer warned: a passive or unactuated joint
                interfaces[name] = control.command_interfaces
                bounds[name] = {i: b for i, b in control.bounds.items()
                                if i in control.command_interfaces}
            for key, values in declared.items():      # the parameters take precedence
                if values and initial[key] is None:
                    initial[key] = values
        unknown = [j for j in list(cfg.interfaces) + list(cfg.gains) + cfg.trajectory_joints
                   if j not in names]
        if unknown:
            pname = ('command_interfaces' if unknown[0] in cfg.interfaces else 'drive_gains'
                     if unknown[0] in cfg.gains else 'trajectory_joints')
            raise ParameterError('parameter %s: unknown joint %r (joints: %s)'
                                 % (pname, unknown[0], ', '.join(names)))
        for joint, values in cfg.interfaces.items():
            interfaces[joint] = tuple(values)
            bounds.pop(joint, None)
        return interfaces, bounds

    def _make_follower(self, cfg):
        """The :class:`TrajectoryFollower` of ``trajectory_joints`` (default: every joint with
        a position interface), or None when no joint has one."""
        have = self.sim.command_interfaces
        joints = cfg.trajectory_joints or [j for j in self.sim.joint_names
                                           if 'position' in have.get(j, ())]
        lacking = [j for j in joints if 'position' not in have.get(j, ())]
        if lacking:
            raise ParameterError('parameter trajectory_joints: joint %r has no position '
                                 'command interface (it has: %s)' % (
                                     lacking[0], ', '.join(have.get(lacking[0], ())) or 'none'))
        if not joints:
            return None
        robot = self.sim.robot
        continuous = [j for j in joints if robot is not None and
                      robot.joint(j[len(cfg.prefix):]).type == 'continuous']
        self._follow_index = np.array([self.sim.joint_names.index(j) for j in joints])
        # targets sampled half a tick ahead: the drive acts at the step's midpoint
        return TrajectoryFollower(joints, goal_time_tolerance=cfg.goal_time_tolerance,
                                  continuous_joints=continuous, lookahead=0.5 / cfg.rate)

    def _make_distances(self, cfg):
        """The :class:`~ros_vi.collision.CollisionDetector` of ``distance_pairs`` (None when
        there are none); an obstacle file is read (and checked) even then."""
        from ..collision import CollisionDetector, load_obstacles
        obstacles = {}
        if cfg.obstacles_file:
            try:
                obstacles = load_obstacles(resolve_uri(cfg.obstacles_file, 'obstacles_file'))
            except (OSError, ValueError) as err:
                raise ParameterError('parameter obstacles_file: %s' % err) from None
        if not cfg.pairs:
            return None
        system = self.sim.system
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always', urdf.URDFWarning)
                detector = CollisionDetector(system, cfg.pairs, obstacles=obstacles)
        except ValueError as err:
            raise ParameterError('parameter distance_pairs: %s' % err) from None
        for w in caught:
            self.get_logger().warning('distance_pairs: %s' % w.message)
        robot = system.urdf
        self._distance_frame = robot.link_frame(robot.root_link).name
        return detector

    def _publish_distances(self, state, stamp):
        """~/distances and ~/closest_points at the published positions."""
        detector = self.distances
        result = detector.query(state.positions)
        names = detector.pair_names
        self._pub_distances.publish(conv.distances_msg(names, result.distances))
        self._pub_closest.publish(conv.distance_markers(result, names, detector.obstacles,
                                                        self._distance_frame, stamp))

    def _on_set_parameters(self, params):
        reason = parameters.update(self.cfg, params)
        if reason is not None:
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ publishing
    def _publish_clock(self):
        if self._pub_clock is not None:
            self._pub_clock.publish(ClockMsg(clock=conv.time_msg(self.sim.t)))

    def _publish_state(self, joint_states_only=False):
        sim = self.sim
        ns = conv.time_to_ns(sim.t)
        stamp = conv.ns_to_time_msg(ns)
        state = sim.state()
        self._pub_js.publish(conv.joint_state_msg(state, stamp))
        if joint_states_only:
            return
        if self.distances is not None:
            self._publish_distances(state, stamp)
        transforms = sim.link_transforms()
        if transforms:
            if self._tf_batch is None:
                self._tf_batch = conv.TransformBatch((p, c) for p, c, _ in transforms)
            self._pub_tf.publish(self._tf_batch.fill([g for _, _, g in transforms], stamp))
        self._record(state, transforms)
        if self.view is not None:
            self._draw_view(state)
        self._last_state_ns = ns
        self._lock_ready = False
        self._lock_wait_since = self._lock_republished = time.monotonic()

    # ------------------------------------------------------------------ browser view
    def _open_view(self, cfg):
        """The browser view of ``viewer_port`` (viser, imported only then)."""
        from ..visual.viewer import serve
        from .viewer_node import robot_view
        try:
            server = serve(port=cfg.viewer_port, host='127.0.0.1')
        except ValueError as err:
            raise ParameterError('parameter viewer_port: %s' % err) from None
        self._view_server = server
        robot = self.sim.robot
        view = robot_view(server, self._urdf_text, self.get_logger(),
                          base_dir=robot.base_dir if robot is not None else None)
        self.get_logger().info('browser view: http://127.0.0.1:%d' % cfg.viewer_port)
        return view

    def _draw_view(self, state):
        """Hand a published state to the browser view, at most VIEW_RATE times a second."""
        now = time.monotonic()
        if now - self._view_drawn >= 1.0 / VIEW_RATE:
            self._view_drawn = now
            self.view.set_positions(state.positions)

    # ------------------------------------------------------------------ recording
    def _open_recording(self, cfg):
        # imported here: a node that does not record needs no MCAP library
        from ..recording.mcap import McapWriter
        path = os.path.abspath(os.path.expanduser(cfg.record))
        namespace = self.get_namespace()
        robot = self.sim.robot
        metadata = {'source': 'ros_vi simulator node', 'node': self.get_fully_qualified_name(),
                    'model': robot.name if robot is not None else '', 'rate': cfg.rate,
                    'substeps': cfg.substeps, 'publish_rate': cfg.publish_rate,
                    'clock_rate': cfg.clock_rate, 'lockstep': cfg.lockstep,
                    'prefix': cfg.prefix, 'gravity': cfg.gravity, 'dt': self.sim.dt}
        try:
            writer = McapWriter(path, self._urdf_text, metadata,
                                namespace='' if namespace == '/' else namespace,
                                clock=cfg.publish_clock)
        except ValueError as err:
            raise ParameterError('parameter record: %s' % err) from None
        self.get_logger().info('recording to %s' % path)
        return writer

    def _record(self, state, transforms):
        """Append a newly published state to the recording (a state published again, as
        on unpause in lockstep, is recorded once)."""
        if self._recorder is None or state is self._recorded_state:
            return
        try:
            self._recorder.append(state, transforms, None if self._recorder.count
                                  else self.sim.static_transforms())
        except (OSError, ValueError) as err:
            # the simulation goes on; what was recorded is kept in a finished file
            self.get_logger().error('recording stopped at t=%.6f s: %s' % (state.t, err))
            self._close_recording()
            return
        self._recorded_state = state

    def _close_recording(self):
        recorder, self._recorder = getattr(self, '_recorder', None), None
        if recorder is None:
            return
        recorder.metadata.update({'end_time': self.sim.t, 'failures': self.sim.failures,
                                  'last_error': self.sim.last_error or ''})
        try:
            recorder.close()
        except (OSError, ValueError) as err:
            self.get_logger().error('recording %s: %s' % (recorder.path, err))

    def destroy_node(self):
        """Stop the step thread, finish the recording (if any), then destroy the node."""
        if getattr(self, 'follower', None) is not None:
            self.follower.release('the simulator is shutting down')
        thread = getattr(self, '_thread', None)
        if thread is not None:
            with self._wake:
                self._stopping = True
                self._wake.notify()
            thread.join(timeout=10.0)
            for job in list(self._step_jobs) + [j for j in self._inbox
                                               if isinstance(j, _Job)]:
                job.error = 'the node is shutting down'
                job.done.set()          # the executor is stopping: no wake-up needed
        self._close_recording()
        server = getattr(self, '_view_server', None)
        if server is not None:
            server.stop()
        return super().destroy_node()

    # ------------------------------------------------------------------ the step thread
    def _post(self, item):
        """Hand a callable (or a :class:`_Job`) to the step thread, which runs it before
        its next tick."""
        with self._wake:
            self._inbox.append(item)
            self._wake.notify()

    async def _call(self, fn, ticks=0):
        """Run ``fn()`` on the step thread (then, for ~/step, ``ticks`` ticks) and wait for
        it without holding the executor; returns the :class:`_Job` (``result``, ``error``)."""
        job = _Job(fn, ticks)
        self._post(job)
        done = await tasks.until(job.done.is_set,
                                 lambda: not self._thread.is_alive() or self._stopping)
        if not done:
            job.error = job.error or 'the step loop is not running'
        return job

    def _finish(self, job):
        """Answer a job: its waiting service task is woken through the guard condition."""
        job.done.set()
        self._jobs_done.trigger()

    def _drain(self):
        """Run what the callbacks posted, in arrival order."""
        inbox = self._inbox
        while inbox:
            item = inbox.popleft()
            if not isinstance(item, _Job):
                item()
                continue
            try:
                item.result = item.fn()
            except Exception as err:        # a service's work failing answers the call
                item.error = str(err)
            if item.ticks > 0 and item.error is None:
                self._step_jobs.append(item)
            else:
                self._finish(item)

    def _run(self):
        """The step thread: drain the inbox, run what is due, sleep until the next thing
        is due or a callback posts work."""
        while True:
            try:
                self._drain()
                if self._stopping:
                    return
                wait = self._advance()
                wait = min(wait, self._housekeeping())
            except Exception as err:            # never let the loop die silently
                self.get_logger().error('step loop: %s: %s' % (type(err).__name__, err),
                                        throttle_duration_sec=1.0)
                wait = 0.01
            if wait > 0:
                with self._wake:
                    if not self._inbox and not self._stopping:
                        self._wake.wait(wait)

    def _advance(self):
        """Run the ticks due now (at most one slice of wall time, so posted work waits no
        longer than that); returns the wall seconds until something is due again."""
        sim = self.sim
        if self._step_jobs:
            return self._run_step_jobs()
        if sim.paused:
            self._pacer = None
            return IDLE_WAIT
        if self.cfg.lockstep:
            return self._lockstep(time.monotonic())
        rtf = self.cfg.real_time_factor
        slice_end = time.monotonic() + SLICE
        if rtf == 0:
            while time.monotonic() < slice_end and not sim.paused and not self._inbox:
                self._tick()
            return 0.0
        now = time.monotonic()
        pacer = self._pacer
        if pacer is None:
            pacer = self._pacer = Pacer(1.0 / (self.cfg.rate * rtf), self.cfg.max_catch_up)
            pacer.start(now)
        slipped = pacer.slipped
        due = pacer.due(now)
        if pacer.slipped > slipped:
            self.get_logger().warning(
                'cannot hold %g Hz x %g: running behind real time (%.3f s dropped so far)'
                % (self.cfg.rate, rtf, pacer.slipped), throttle_duration_sec=5.0)
        while due > 0 and not sim.paused:
            self._tick()
            pacer.advance()
            due -= 1
            if self._inbox or time.monotonic() > slice_end:
                break
        return max(0.0, pacer.next_time() - time.monotonic())

    def _run_step_jobs(self):
        """~/step while paused: tick for the oldest job (a slice at a time), answer it when
        its ticks are done."""
        job = self._step_jobs[0]
        slice_end = time.monotonic() + SLICE
        while job.ticks > 0:
            result = self._tick(force_publish=(job.ticks == 1))
            job.ticks -= 1
            job.failed += not result.ok
            if self._inbox or time.monotonic() > slice_end:
                break
        if job.ticks == 0:
            self._step_jobs.popleft()
            job.result = self.sim.t
            self._finish(job)
        return 0.0

    def _command_publishers(self, stamped=None):
        """{command topic: publishers}: all of them, or only those whose messages carry
        (``stamped=True``) or lack (False) the stamp of the state they answer."""
        return {topic: self.count_publishers(topic) for topic, has_stamp in COMMAND_TOPICS
                if stamped is None or has_stamp == stamped}

    def _lockstep(self, now):
        """Lockstep: tick when the command answering the last state is in (or the wait
        timed out) and, with a real-time factor, when the tick is due by the wall clock."""
        cfg = self.cfg
        if self._awaiting_controller:
            if self._controller_wait_since is None:
                self._controller_wait_since = now
            publishers = self._command_publishers()
            if sum(publishers.values()) and self._pub_js.get_subscription_count():
                self._awaiting_controller = False
                self.get_logger().info('lockstep: a controller is connected (%s); starting'
                                       % ', '.join(t for t, n in publishers.items() if n))
                self._publish_clock()
                self._publish_state()
            elif now - self._controller_wait_since > cfg.controller_wait:
                self._awaiting_controller = False
                self.get_logger().warning(
                    'lockstep: no controller publishes commands after %g s; stepping with '
                    'the commands as they are' % cfg.controller_wait)
                self._publish_clock()
                self._publish_state()
                self._lock_ready = True
            else:
                return 0.02
        if not self._lock_ready and not self._following():
            waited = now - self._lock_wait_since
            # the very first command may come from a controller still starting up
            limit = cfg.controller_wait if self.sim.ticks == 0 else cfg.lockstep_timeout
            if waited > limit:
                self._lockstep_timeouts += 1
                self.get_logger().warning(
                    'lockstep: no command stamped %.9f s within %g s; stepping with the '
                    'previous command' % (self._last_state_ns * 1e-9, limit),
                    throttle_duration_sec=1.0)
            else:
                if now - self._lock_republished > REPUBLISH_PERIOD:
                    self._lock_republished = now
                    # a controller that joined after the state went out gets it again; only
                    # where answers are stamped: a second unstamped answer would unlock the
                    # tick after this one with this one's command
                    if not any(self._command_publishers(stamped=False).values()):
                        self._publish_state(joint_states_only=True)
                return min(limit - waited, REPUBLISH_PERIOD)
        rtf = cfg.real_time_factor
        if rtf > 0:
            pacer = self._pacer
            if pacer is None:
                pacer = self._pacer = Pacer(1.0 / (cfg.rate * rtf), cfg.max_catch_up)
                pacer.start(now - pacer.period)          # the first tick is due at once
            if not pacer.due(now):
                return pacer.next_time() - now
            pacer.advance()
        self._tick()
        return 0.0

    def _housekeeping(self):
        """Diagnostics every ``diagnostics_period``; returns the wall seconds to the next."""
        now = time.monotonic()
        if now >= self._diag_due:
            self._publish_diagnostics()
            self._diag_due = now + self.cfg.diagnostics_period
        return self._diag_due - now

    def _due(self, ticks, rate):
        """True when tick number ``ticks`` crosses a period of ``rate`` [Hz]."""
        ratio = rate / self.cfg.rate
        return math.floor(ticks * ratio + 1e-9) != math.floor((ticks - 1) * ratio + 1e-9)

    def _following(self):
        follower = self.follower
        return follower is not None and (follower.active is not None or
                                         follower.pending is not None)

    def _tick(self, force_publish=False):
        if self._following():
            self._follow()
        result = self.sim.tick()
        self._diag_ticks += 1
        self._diag_iterations += result.iterations
        ticks = self.sim.ticks
        publish = force_publish or self.cfg.lockstep or self._due(ticks, self.cfg.publish_rate)
        # the clock goes out before any state stamped with it
        if publish or self._due(ticks, min(self.cfg.clock_rate, self.cfg.rate)):
            self._publish_clock()
        if publish:
            self._publish_state()
            if self.trajectory is not None:
                self.trajectory.publish_state(self.sim.t)
        if not result.ok:
            self.get_logger().error(result.error, throttle_duration_sec=1.0)
            if time.monotonic() - self._diag_wall > 0.2:
                self._publish_diagnostics()
        return result

    # ------------------------------------------------------------------ commands
    def _reject(self, problem):
        self._rejected += 1
        self._last_rejection = problem
        self.get_logger().warning('rejected command: %s (previous command kept)' % problem,
                                  throttle_duration_sec=1.0)

    def _passive(self, names):
        """The first of ``names`` that cannot take any command (effort limit 0), or None."""
        have = self.sim.command_interfaces
        return next((n for n in names if n in have and not have[n]), None)

    def _commanded(self, names, source):
        """A command from ``source`` was applied to ``names``: the trajectory follower lets
        go of its joints (as a controller switch would), and lockstep may tick."""
        follower = self.follower
        if follower is not None and follower.state() is not None and \
                set(names) & set(follower.joint_names):
            follower.release('preempted by a command on %s' % source)
        self._lock_ready = True

    def _on_joint_commands(self, msg):
        fields = (list(msg.name), list(msg.position), list(msg.velocity), list(msg.effort))
        stamp_ns = conv.stamp_to_ns(msg.header.stamp)
        self._post(lambda: self._apply_joint_commands(*fields, stamp_ns))

    def _apply_joint_commands(self, names, positions, velocities, efforts, stamp_ns):
        """topic_based_ros2_control's command: per named joint a position (with velocity and
        effort feed-forward), else a velocity (with effort feed-forward), else an effort;
        an empty field is absent."""
        if not names:
            self._reject('joint_commands: no joint names')
            return
        given = {'position': positions, 'velocity': velocities, 'effort': efforts}
        for field, values in given.items():
            if values and len(values) != len(names):
                self._reject('joint_commands: %d names but %d %ss'
                             % (len(names), len(values), field))
                return
        if not any(given.values()):
            self._reject('joint_commands: no position, velocity or effort values')
            return
        if self.cfg.lockstep and stamp_ns is not None and stamp_ns != self._last_state_ns:
            return        # a command for an older state: not for this tick
        passive = self._passive(names)
        if passive is not None:
            self._reject('joint_commands: joint %r cannot take commands (effort limit 0)'
                         % passive)
            return
        try:
            self.sim.set_joint_targets(names, positions or None, velocities or None,
                                       efforts or None)
        except ValueError as err:
            self._reject('joint_commands: %s' % err)
            return
        self._commanded(names, 'joint_commands')

    def _on_array_commands(self, interface, msg):
        values = list(msg.data)
        self._post(lambda: self._apply_array_commands(interface, values))

    def _apply_array_commands(self, interface, values):
        """forward_command_controller's command: one value per ``command_joints`` joint."""
        topic = '%s_controller/commands' % interface
        joints = self.sim.command_joints
        passive = self._passive(joints)
        if passive is not None:
            self._reject('%s: joint %r cannot take commands (effort limit 0)'
                         % (topic, passive))
            return
        try:
            if interface == 'effort':
                self.sim.set_command_vector(values)
            elif len(values) != len(joints):
                raise ValueError('expected %d values for [%s], got %d'
                                 % (len(joints), ', '.join(joints), len(values)))
            else:
                self.sim.set_commands(joints, values, interface=interface)
        except ValueError as err:
            self._reject('%s: %s' % (topic, err))
            return
        self._commanded(joints, topic)

    def _follow(self):
        """Before a tick: the trajectory follower's targets for it, applied as position
        commands with velocity feed-forward."""
        state = self.sim.state()
        idx = self._follow_index
        follower = self.follower
        targets = follower.update(self.sim.t, state.positions[idx], state.velocities[idx])
        if targets is None:
            return
        try:
            self.sim.set_joint_targets(follower.joint_names, targets.positions,
                                       targets.velocities)
        except ValueError as err:            # e.g. a target beyond a command bound
            follower.release('the simulator refused the target: %s' % err)
            self._reject('joint_trajectory_controller: %s' % err)

    # ------------------------------------------------------------------ services
    async def _answer(self, response, fn):
        job = await self._call(fn)
        response.success = job.error is None
        response.message = job.result if job.error is None else job.error
        return response

    async def _on_reset(self, request, response):
        def reset():
            self.sim.reset()
            self._pacer = None
            self._publish_clock()
            self._publish_state()
            return 'reset to the initial state at t=%.6f s' % self.sim.t
        return await self._answer(response, reset)

    async def _on_pause(self, request, response):
        def pause():
            self.sim.pause()
            return 'paused at t=%.6f s' % self.sim.t
        return await self._answer(response, pause)

    async def _on_unpause(self, request, response):
        def unpause():
            was = self.sim.paused
            self.sim.unpause()
            self._pacer = None
            if self.cfg.lockstep and not self._awaiting_controller:
                # give (late-joined) controllers the state to answer
                self._publish_state()
            return ('unpaused at t=%.6f s' if was else 'was running at t=%.6f s') % self.sim.t
        return await self._answer(response, unpause)

    async def _on_step(self, request, response):
        n = self.cfg.step_ticks

        def check():
            if not self.sim.paused:
                raise ValueError('not paused: call ~/pause first')
        job = await self._call(check, n)
        failed = job.failed
        response.success = job.error is None and not failed
        if job.error is not None:
            response.message = job.error
            return response
        response.message = 'stepped %d tick%s to t=%.9f s%s' % (
            n, '' if n == 1 else 's', job.result,
            '' if not failed else '; %d failed (state held): %s' % (failed,
                                                                   self.sim.last_error))
        return response

    # ------------------------------------------------------------------ diagnostics
    def _trajectory_status(self):
        follower = self.follower
        if follower is None:
            return 'none'
        if follower.active is not None:
            return 'running'
        if follower.pending is not None:
            return 'pending'
        return 'holding' if follower.state() is not None else 'idle'

    def _publish_diagnostics(self):
        sim = self.sim
        now = time.monotonic()
        elapsed = max(now - self._diag_wall, 1e-9)
        rate = self._diag_ticks / elapsed
        mean_it = self._diag_iterations / self._diag_ticks if self._diag_ticks else 0.0
        state = sim.state()
        status = DiagnosticStatus()
        status.name = '%s: simulation' % self.get_fully_qualified_name()
        status.hardware_id = sim.robot.name if sim.robot is not None and sim.robot.name \
            else 'ros_vi'
        new_failures = sim.failures - self._diag_last_failure
        rtf = self.cfg.real_time_factor
        if not sim.last_result.ok:
            status.level, status.message = DiagnosticStatus.ERROR, \
                'VI step failed, state held: %s' % sim.last_error
        elif new_failures:
            status.level, status.message = DiagnosticStatus.WARN, \
                '%d ticks failed since the last report (state held)' % new_failures
        elif self._last_rejection:
            status.level, status.message = DiagnosticStatus.WARN, \
                'rejected command: %s' % self._last_rejection
        elif not sim.paused and not self.cfg.lockstep and rtf > 0 and \
                rate < 0.95 * self.cfg.rate * rtf and self._diag_ticks > 0:
            status.level, status.message = DiagnosticStatus.WARN, \
                'behind real time: %.1f Hz of %.1f Hz' % (rate, self.cfg.rate * rtf)
        else:
            status.level, status.message = DiagnosticStatus.OK, \
                'paused' if sim.paused else 'running'
        values = {
            'sim_time': '%.9f' % sim.t,
            'ticks': str(sim.ticks),
            'tick_rate_hz': '%.3f' % rate,
            'target_tick_rate_hz': '%.3f' % (self.cfg.rate * rtf) if rtf else 'max',
            'real_time_factor': '%.4f' % (rate / self.cfg.rate),
            'iterations_last': str(sim.last_result.iterations),
            'iterations_mean': '%.3f' % mean_it,
            'substeps_last': str(sim.last_result.substeps),
            'energy': '%.12g' % state.energy,
            'paused': str(sim.paused).lower(),
            'lockstep': str(self.cfg.lockstep).lower(),
            'failures': str(sim.failures),
            'retries': str(sim.retries),
            'last_error': sim.last_error or '',
            'rejected_commands': str(self._rejected),
            'last_rejection': self._last_rejection,
            'active_interfaces': ','.join('%s:%s' % ji for ji in
                                          sim.active_interfaces().items()),
            'trajectory': self._trajectory_status(),
            'trajectories_refused': str(self.trajectory.refused if self.trajectory else 0),
            'lockstep_timeouts': str(self._lockstep_timeouts),
            'overruns': str(self._pacer.slips if self._pacer is not None else 0),
            'behind_real_time_s': '%.6f' % (self._pacer.slipped if self._pacer is not None
                                            else 0.0),
            'timed_out_joints': ','.join(sim.timed_out()),
            'urdf_warnings': str(len(self._urdf_warnings)),
        }
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = conv.time_msg(sim.t)
        self._pub_diag.publish(msg)
        self._diag_wall = now
        self._diag_ticks = 0
        self._diag_iterations = 0
        self._diag_last_failure = sim.failures
        self._last_rejection = ''


def import_robot(cfg):
    """(URDF text, System) of a node's robot parameters (``robot_description`` or
    ``urdf_file``, ``prefix``, ``gravity``); errors name the parameter."""
    base_dir = None
    if cfg.robot_description.strip():
        text, where = cfg.robot_description, 'parameter robot_description'
    else:
        path = resolve_uri(cfg.urdf_file.strip())
        text = load_urdf_text(path, [resolve_uri(p, 'xacro_allowed_paths')
                                     for p in cfg.xacro_allowed_paths])
        where = 'parameter urdf_file (%s)' % cfg.urdf_file
        base_dir = os.path.dirname(os.path.abspath(path))      # relative mesh paths
    from ..urdf import import_urdf
    try:
        with warnings.catch_warnings():     # the nodes log robot.warnings themselves
            warnings.simplefilter('ignore', urdf.URDFWarning)
            return text, import_urdf(text, prefix=cfg.prefix or None, gravity=cfg.gravity,
                                     strict=cfg.strict_urdf, base_dir=base_dir)
    except URDFError as err:
        raise URDFError('%s: %s' % (where, err)) from None


def run_node(factory, name, args=None):
    """The console scripts' body (ros2/examples style): init, build the node, spin, shut down.

    Exit codes: 0 after a normal or signalled shutdown (also when the signal arrives while
    the node is still being built), 2 when a parameter or the model is invalid (the message
    names it).
    """
    rclpy.init(args=args)
    node = None
    executor = SingleThreadedExecutor()
    try:
        node = factory()
        executor.add_node(node)
        executor.spin()
    except ValueError as err:       # ParameterError, URDFError, while building the node
        if node is not None:
            raise
        rclpy.logging.get_logger(name).fatal(str(err))
        return 2
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        # a callback (or the node's constructor) racing the signal handler's shutdown
        if rclpy.ok():
            raise
    finally:
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


def main(args=None):
    """Console script ``simulator``."""
    return run_node(SimulatorNode, 'simulator', args)


if __name__ == '__main__':
    sys.exit(main())
