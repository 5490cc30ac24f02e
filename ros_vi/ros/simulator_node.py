"""The ``simulator`` node: steps a URDF robot with ros_vi's midpoint VI at a fixed rate.

Run: ``ros2 run ros_vi simulator --ros-args -p urdf_file:=/path/robot.urdf`` (or, in the pip
environment, ``.venv/bin/simulator --ros-args ...``).  docs/simulator.md has the full table.

Publishes (names relative to the node's namespace)
    joint_states (sensor_msgs/JointState), tf (tf2_msgs/TFMessage, moving joints:
    parent link -> child link), tf_static (fixed joints, latched), robot_description
    (std_msgs/String, latched), clock (rosgraph_msgs/Clock, every tick, if publish_clock),
    diagnostics (diagnostic_msgs/DiagnosticArray: rate, iterations, energy, faults).
    With ``distance_pairs``: ~/distances (std_msgs/Float64MultiArray, signed distances in
    pair order) and ~/closest_points (visualization_msgs/MarkerArray) with each state.
    With ``record:=run.mcap`` the published states also go to a ROS 2 MCAP file
    (:mod:`ros_vi.recording.mcap`), finished when the node is destroyed.
Subscribes
    joint_commands (sensor_msgs/JointState: ``effort`` by joint ``name``),
    effort_controller/commands (std_msgs/Float64MultiArray in ``command_joints`` order).
Services (std_srvs/Trigger)
    ~/reset, ~/pause, ~/unpause, ~/step (``step_ticks`` ticks while paused).

All stamps are simulation time.  The step loop is paced by the steady (wall) clock times
``real_time_factor``; the simulation core is :class:`ros_vi.simulation.Simulation`.
"""
import math
import os
import sys
import time
import warnings

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from .. import resources, urdf
from ..simulation import Simulation
from ..urdf import URDFError
from . import conversions as conv
from . import parameters, qos
from .parameters import ParameterError, SimulatorParameters


# the parameters (names, defaults, descriptions, checks): SimulatorParameters in
# ros_vi/ros/parameters.py; {name: (default, description)} here for launch files and tests
PARAMETERS = parameters.table(SimulatorParameters)


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


class SimulatorNode(Node):
    """ROS 2 node wrapping :class:`ros_vi.simulation.Simulation` (see the module doc).

    Constructible in-process with ``SimulatorNode(parameter_overrides=[Parameter(...)])``
    (e.g. next to controller nodes on one executor).  Raises :class:`ParameterError` or
    :class:`ros_vi.urdf.URDFError` (both ValueError) naming the bad parameter.
    """

    def __init__(self, node_name='simulator', **kwargs):
        super().__init__(node_name, **kwargs)
        parameters.declare(self, SimulatorParameters)
        cfg = parameters.read(self, SimulatorParameters)
        self.cfg = cfg
        self.sim = self._make_simulation(cfg)
        self.distances = self._make_distances(cfg)

        # bookkeeping
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._wall_anchor = None        # (wall time, ticks) the real-time pacing counts from
        self._rejected = 0
        self._last_rejection = ''
        self._lockstep_timeouts = 0
        self._overruns = 0
        self._lock_ready = False
        self._lock_wait_since = None
        self._last_state_ns = None
        self._diag_ticks = 0
        self._diag_iterations = 0
        self._diag_wall = time.monotonic()
        self._diag_last_failure = 0
        self._last_diag_publish = 0.0

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
        # subscriptions
        self.create_subscription(JointState, 'joint_commands', self._on_joint_commands,
                                 qos.COMMAND_QOS)
        self.create_subscription(Float64MultiArray, 'effort_controller/commands',
                                 self._on_array_commands, qos.COMMAND_QOS)
        # services
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_service(Trigger, '~/pause', self._on_pause)
        self.create_service(Trigger, '~/unpause', self._on_unpause)
        self.create_service(Trigger, '~/step', self._on_step)
        self.add_on_set_parameters_callback(self._on_set_parameters)

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
        self._publish_state()

        rtf = cfg.real_time_factor
        if rtf > 0:
            period = max(0.001, 1.0 / (cfg.rate * rtf))
        elif cfg.lockstep:
            # ticks run in the command callbacks; the timer only watches for timeouts
            period = min(0.05, cfg.lockstep_timeout / 4.0)
        else:
            period = 0.001
        # the step loop is paced by the steady clock (never by /clock, which it drives);
        # it is cancelled while paused so an idle simulator costs no CPU
        self._timer = self.create_timer(period, self._on_timer, clock=self._steady,
                                        autostart=not cfg.start_paused)
        self._diag_timer = self.create_timer(cfg.diagnostics_period,
                                             self._publish_diagnostics, clock=self._steady)
        for quirk in self._urdf_warnings:
            self.get_logger().warning('robot description: %s' % quirk)
        self.get_logger().info(
            'simulating %r: %d joints (%s), rate %g Hz x %d substeps, real_time_factor %g, '
            'publish_rate %g Hz%s%s' % (
                self.sim.robot.name if self.sim.robot else 'system', len(self.sim.joint_names),
                ', '.join(self.sim.joint_names), cfg.rate, cfg.substeps, rtf,
                cfg.publish_rate, ', lockstep' if cfg.lockstep else '',
                ', paused' if cfg.start_paused else ''))

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
                             tolerance=cfg.tolerance)
        except ValueError as err:
            msg = str(err)
            for pname in ('command_joints', 'initial_positions', 'initial_velocities'):
                if msg.startswith(pname):
                    raise ParameterError('parameter ' + msg) from None
            raise ParameterError(msg) from None
        return sim

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

    def _publish_state(self):
        sim = self.sim
        ns = conv.time_to_ns(sim.t)
        stamp = conv.ns_to_time_msg(ns)
        state = sim.state()
        self._pub_js.publish(conv.joint_state_msg(state, stamp))
        if self.distances is not None:
            self._publish_distances(state, stamp)
        transforms = sim.link_transforms()
        if transforms:
            self._pub_tf.publish(TFMessage(transforms=[
                conv.transform_stamped(p, c, g, stamp) for p, c, g in transforms]))
        self._record(state, transforms)
        self._last_state_ns = ns
        self._lock_ready = False
        self._lock_wait_since = time.monotonic()

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
                    'lockstep': cfg.lockstep, 'prefix': cfg.prefix, 'gravity': cfg.gravity,
                    'dt': self.sim.dt}
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
        """Finish the recording (if any), then destroy the node."""
        self._close_recording()
        return super().destroy_node()

    def _publish_due(self, ticks):
        """True when tick number ``ticks`` crosses a publish_rate period."""
        ratio = self.cfg.publish_rate / self.cfg.rate
        return math.floor(ticks * ratio + 1e-9) != math.floor((ticks - 1) * ratio + 1e-9)

    # ------------------------------------------------------------------ ticking
    def _tick(self, force_publish=False):
        result = self.sim.tick()
        self._diag_ticks += 1
        self._diag_iterations += result.iterations
        self._publish_clock()
        if force_publish or self.cfg.lockstep or self._publish_due(self.sim.ticks):
            self._publish_state()
        if not result.ok:
            self.get_logger().error(result.error, throttle_duration_sec=1.0)
            if time.monotonic() - self._last_diag_publish > 0.2:
                self._publish_diagnostics()
        return result

    def _on_timer(self):
        if self.sim.paused:
            self._wall_anchor = None
            return
        if self.cfg.lockstep:
            self._lockstep_poll()
            return
        rtf = self.cfg.real_time_factor
        now = time.monotonic()
        if rtf == 0:
            # as fast as possible, in slices of ~5 ms so callbacks and services run
            end = now + 0.005
            while time.monotonic() < end and not self.sim.paused:
                self._tick()
            return
        if self._wall_anchor is None:
            self._wall_anchor = (now, self.sim.ticks)
            return
        wall0, ticks0 = self._wall_anchor
        due = int((now - wall0) * self.cfg.rate * rtf + 1e-9) - (self.sim.ticks - ticks0)
        max_catch_up = max(10, int(0.25 * self.cfg.rate * rtf))
        if due > max_catch_up:
            # fell behind by more than 0.25 s (a stalled machine): drop the backlog rather
            # than spiral; shorter stalls are caught up so the average rate holds
            self._overruns += due - max_catch_up
            self._wall_anchor = (now - max_catch_up / (self.cfg.rate * rtf),
                                 self.sim.ticks)
            due = max_catch_up
        for _ in range(max(due, 0)):
            self._tick()

    def _lockstep_poll(self):
        now = time.monotonic()
        if not self._lock_ready:
            if self._lock_wait_since is not None and \
                    now - self._lock_wait_since > self.cfg.lockstep_timeout:
                self._lockstep_timeouts += 1
                self.get_logger().warning(
                    'lockstep: no command stamped %.9f s within %g s; stepping with the '
                    'previous command' % (self._last_state_ns * 1e-9,
                                          self.cfg.lockstep_timeout),
                    throttle_duration_sec=1.0)
            else:
                return
        rtf = self.cfg.real_time_factor
        if rtf > 0:
            if self._wall_anchor is not None and \
                    now - self._wall_anchor[0] < 1.0 / (self.cfg.rate * rtf) - 1e-4:
                return
            self._wall_anchor = (now, self.sim.ticks)
        self._tick()

    # ------------------------------------------------------------------ commands
    def _reject(self, problem):
        self._rejected += 1
        self._last_rejection = problem
        self.get_logger().warning('rejected command: %s (previous command kept)' % problem,
                                  throttle_duration_sec=1.0)

    def _lockstep_accept(self, stamp_ns):
        """In lockstep, whether a command for state time ``stamp_ns`` unlocks the next tick."""
        return stamp_ns is None or stamp_ns == self._last_state_ns

    def _on_joint_commands(self, msg):
        names, efforts = list(msg.name), list(msg.effort)
        if not names:
            self._reject('joint_commands: no joint names')
            return
        if len(efforts) != len(names):
            self._reject('joint_commands: %d names but %d efforts' % (len(names), len(efforts)))
            return
        stamp_ns = conv.stamp_to_ns(msg.header.stamp)
        if self.cfg.lockstep and not self._lockstep_accept(stamp_ns):
            return        # a command for an older state: not for this tick
        try:
            self.sim.set_commands(names, efforts)
        except ValueError as err:
            self._reject('joint_commands: %s' % err)
            return
        self._command_received()

    def _on_array_commands(self, msg):
        try:
            self.sim.set_command_vector(list(msg.data))
        except ValueError as err:
            self._reject('effort_controller/commands: %s' % err)
            return
        self._command_received()

    def _command_received(self):
        if not self.cfg.lockstep:
            return
        self._lock_ready = True
        if self.cfg.real_time_factor == 0 and not self.sim.paused:
            self._tick()

    # ------------------------------------------------------------------ services
    def _on_reset(self, request, response):
        self.sim.reset()
        self._wall_anchor = None
        self._publish_clock()
        self._publish_state()
        response.success = True
        response.message = 'reset to the initial state at t=%.6f s' % self.sim.t
        return response

    def _on_pause(self, request, response):
        self.sim.pause()
        self._timer.cancel()
        response.success = True
        response.message = 'paused at t=%.6f s' % self.sim.t
        return response

    def _on_unpause(self, request, response):
        was = self.sim.paused
        self.sim.unpause()
        self._wall_anchor = None
        self._timer.reset()
        if self.cfg.lockstep:
            # give (late-joined) controllers the state to answer
            self._publish_state()
        response.success = True
        response.message = ('unpaused at t=%.6f s' if was else 'was running at t=%.6f s') \
            % self.sim.t
        return response

    def _on_step(self, request, response):
        if not self.sim.paused:
            response.success = False
            response.message = 'not paused: call ~/pause first'
            return response
        n = self.cfg.step_ticks
        failed = 0
        for k in range(n):
            failed += not self._tick(force_publish=(k == n - 1)).ok
        response.success = failed == 0
        response.message = 'stepped %d tick%s to t=%.9f s%s' % (
            n, '' if n == 1 else 's', self.sim.t,
            '' if not failed else '; %d failed (state held): %s' % (failed,
                                                                   self.sim.last_error))
        return response

    # ------------------------------------------------------------------ diagnostics
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
            'lockstep_timeouts': str(self._lockstep_timeouts),
            'overruns': str(self._overruns),
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
        self._last_diag_publish = now


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
    try:
        node = factory()
        rclpy.spin(node)
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
