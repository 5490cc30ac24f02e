"""The ``simulator`` node: steps a URDF robot with ros_vi's midpoint VI at a fixed rate.

Run: ``ros2 run ros_vi simulator --ros-args -p urdf_file:=/path/robot.urdf`` (or, in the pip
environment, ``.venv/bin/simulator --ros-args ...``).  docs/simulator.md has the full table.

Publishes (names relative to the node's namespace)
    joint_states (sensor_msgs/JointState), tf (tf2_msgs/TFMessage, moving joints:
    parent link -> child link; with ``floating_base``, ``odom_frame`` -> root link too),
    odom (nav_msgs/Odometry of a floating base, if publish_odometry), tf_static (fixed
    joints, latched), robot_description
    (std_msgs/String, latched), clock (rosgraph_msgs/Clock at clock_rate, if publish_clock),
    diagnostics (diagnostic_msgs/DiagnosticArray: rate, iterations, energy, faults),
    joint_trajectory_controller/controller_state (control_msgs/JointTrajectoryControllerState).
    With ``distance_pairs``: ~/distances (std_msgs/Float64MultiArray, signed distances in
    pair order) and ~/closest_points (visualization_msgs/MarkerArray) with each state.
    With contacts (``ground``, a world's ground): per link that carries one (or bears one,
    as a box another body rests on) ~/contact_wrench/<link> (geometry_msgs/WrenchStamped in
    the link's axes: the force and moment about its origin from its contacts over the last
    step) and ~/contact_markers
    (visualization_msgs/MarkerArray), with each state, if publish_contacts.
    With ``record:=run.mcap`` the published states also go to a ROS 2 MCAP file
    (:mod:`ros_vi.recording.mcap`), finished when the node is destroyed.
Subscribes
    joint_commands (sensor_msgs/JointState: position, velocity or effort by joint ``name``),
    {effort,position,velocity}_controller/commands (std_msgs/Float64MultiArray in
    ``command_joints`` order), joint_trajectory_controller/joint_trajectory
    (trajectory_msgs/JointTrajectory).
Action
    joint_trajectory_controller/follow_joint_trajectory (control_msgs FollowJointTrajectory).
A world (``world_file``) with robots: each robot's joints have their own joint trajectory
controller ``<robot>/joint_trajectory_controller/..`` (topic, action, state; in place of
the one above) and forward command topics ``<robot>/{effort,position,velocity}_controller/
commands`` (that robot's command joints, in order; the whole-world ones stay), and each
floating robot its ``<robot>/odom`` (frame ``world``).
Services (std_srvs/Trigger)
    ~/reset, ~/pause, ~/unpause, ~/step (``step_ticks`` ticks while paused).

All stamps are simulation time.  The node only speaks ROS: the robot is set up by
:func:`ros_vi.simulation.setup_robot` (as ``ros-vi simulate`` sets it up), the physics and
the command rules are :class:`ros_vi.simulation.Simulation`'s, the step thread is
:class:`~ros_vi.ros.step_loop.StepLoop` (paced by the monotonic clock times
``real_time_factor``), the diagnostics :class:`~ros_vi.ros.diagnostics.SimulatorDiagnostics`.
"""
import dataclasses
import functools
import math
import sys
import time
import warnings

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from .. import resources, urdf
from ..control.joint_trajectory import TrajectoryFollower
from ..simulation import OptionError, Simulation
from . import conversions as conv
from . import parameters, qos
from ..errors import shorten
from .diagnostics import MAX_TEXT, SimulatorDiagnostics
from .node_main import run_node
from .parameters import ParameterError, SimulatorParameters
from .recorder import NodeRecorder
from .step_loop import StepLoop
from .trajectory_interfaces import TrajectoryInterfaces

__all__ = ['SimulatorNode', 'PARAMETERS', 'ParameterError', 'main']

# the parameters (names, defaults, descriptions, checks): SimulatorParameters in
# ros_vi/ros/parameters.py; {name: (default, description)} here for launch files and tests
PARAMETERS = parameters.table(SimulatorParameters)

VIEW_RATE = 30.0          # Hz (wall) at most of the browser view's updates
#: the command topics (relative names) and whether their messages carry the stamp of the
#: state they answer (lockstep matches stamped answers to states)
COMMAND_TOPICS = (('joint_commands', True), ('effort_controller/commands', False),
                  ('position_controller/commands', False),
                  ('velocity_controller/commands', False))


class SimulatorNode(Node):
    """ROS 2 node wrapping :class:`ros_vi.simulation.Simulation` (see the module doc).

    Constructible in-process with ``SimulatorNode(parameter_overrides=[Parameter(...)])``
    (e.g. next to controller nodes on one executor).  Raises :class:`ParameterError` or
    :class:`ros_vi.urdf.URDFError` (both ValueError) naming the bad parameter.

    Threads: once the node runs, only its step thread (:class:`StepLoop`) touches
    :attr:`sim`; callbacks post their work to it.  :meth:`destroy_node` stops it.
    """

    def __init__(self, node_name='simulator', **kwargs):
        super().__init__(node_name, **kwargs)
        parameters.declare(self, SimulatorParameters)
        cfg = parameters.read(self, SimulatorParameters)
        self.cfg = cfg
        self.setup = parameters.robot_setup(
            cfg, initial_joints=cfg.initial_joints, initial_positions=cfg.initial_positions,
            initial_velocities=cfg.initial_velocities, command_interfaces=cfg.interfaces,
            drive_gains=cfg.gains, trajectory_joints=cfg.trajectory_joints,
            floating_base=cfg.floating_base, initial_base_pose=cfg.initial_base_pose or None,
            initial_base_twist=cfg.initial_base_twist or None)
        self.sim = self._make_simulation(cfg)
        self.distances = self._make_distances(cfg)
        self.diagnostics = SimulatorDiagnostics(cfg.diagnostics_period)
        self._tf_batch = None

        # publishers
        self._pub_js = self.create_publisher(JointState, 'joint_states', qos.STATE_QOS)
        self._pub_tf = self.create_publisher(TFMessage, 'tf', qos.TF_QOS)
        self._pub_tf_static = self.create_publisher(TFMessage, 'tf_static', qos.LATCHED_QOS)
        # a floating base: its pose on tf (odom_frame -> root link) and on odom; a world's
        # floating robots: their odometry in the world frame (their tf is the tree's)
        base = self.sim.floating_base
        self._base_index = None if base is None else self.sim.bodies.joints.index(base)
        self._pub_odom = (self.create_publisher(Odometry, 'odom', qos.STATE_QOS)
                          if base is not None and cfg.publish_odometry else None)
        self._robot_odom = self._make_robot_odometry() if cfg.publish_odometry else []
        self._pub_desc = self.create_publisher(String, 'robot_description', qos.LATCHED_QOS)
        self._pub_clock = (self.create_publisher(ClockMsg, 'clock', qos.CLOCK_QOS)
                           if cfg.publish_clock else None)
        self._pub_diag = self.create_publisher(DiagnosticArray, 'diagnostics', qos.STATE_QOS)
        if self.distances is not None:
            self._pub_distances = self.create_publisher(Float64MultiArray, '~/distances',
                                                        qos.STATE_QOS)
            self._pub_closest = self.create_publisher(MarkerArray, '~/closest_points',
                                                      qos.STATE_QOS)
        self._contact_wrench = self._make_contact_publishers(cfg)
        # the step thread (started last) and the guard condition that wakes the executor
        # when it has answered a service
        self.loop = StepLoop(self, self.create_guard_condition(lambda: None))
        # subscriptions (one callback at a time: commands keep their order)
        self.create_subscription(JointState, 'joint_commands', self._on_joint_commands,
                                 qos.COMMAND_QOS)
        self.command_topics = list(COMMAND_TOPICS)
        for namespace, joints in self._command_groups():
            for interface in ('effort', 'position', 'velocity'):
                topic = namespace + '%s_controller/commands' % interface
                self.create_subscription(
                    Float64MultiArray, topic,
                    functools.partial(self._on_array_commands, topic, interface, joints),
                    qos.COMMAND_QOS)
                if namespace:
                    self.command_topics.append((topic, False))
        # the joint trajectory controllers' topics, actions and states (coroutine actions:
        # their own group, so they never wait on the command callbacks)
        self.followers = self._make_followers()
        self.trajectories = [
            TrajectoryInterfaces(self, follower, lambda: self.sim.t, controller_name=name,
                                 callback_group=ReentrantCallbackGroup())
            for name, follower in self.followers.items()]
        # services: coroutines that wait for the step thread, so a long ~/step holds up no
        # other callback, on any executor
        services = ReentrantCallbackGroup()
        for name, callback in (('~/reset', self._on_reset), ('~/pause', self._on_pause),
                               ('~/unpause', self._on_unpause), ('~/step', self._on_step)):
            self.create_service(Trigger, name, callback, qos_profile=qos.SERVICE_QOS,
                                callback_group=services)
        self.add_on_set_parameters_callback(self._on_set_parameters)

        self.view = self._open_view(cfg) if cfg.viewer_port else None
        # the recording (last of what can fail at start: a node that does not start leaves
        # no file behind)
        self.recorder = NodeRecorder(self) if cfg.record else None

        # latched topics and the initial state
        self._pub_desc.publish(String(data=self.setup.text))
        stamp = conv.time_msg(self.sim.t)
        self._pub_tf_static.publish(TFMessage(transforms=[
            conv.transform_stamped(p, c, g, stamp) for p, c, g in self.sim.static_transforms()]))
        if cfg.start_paused:
            self.sim.pause()
        self.publish_clock()
        if not cfg.lockstep:
            # in lockstep the first state waits for a controller to answer it
            self.publish_state()

        for quirk in self.setup.warnings:
            self.get_logger().warning('robot description: %s' % quirk)
        self.get_logger().info(
            'simulating %r: %d joints (%s), rate %g Hz x %d substeps, real_time_factor %g, '
            'publish_rate %g Hz, clock %s%s%s' % (
                self.sim.robot.name if self.sim.robot else 'system',
                len(self.sim.joint_state_names), ', '.join(self.sim.joint_state_names),
                cfg.rate, cfg.substeps, cfg.real_time_factor,
                cfg.publish_rate, '%g Hz' % cfg.clock_rate if cfg.publish_clock else 'off',
                ', lockstep' if cfg.lockstep else '', ', paused' if cfg.start_paused else ''))
        self.loop.start()

    # ------------------------------------------------------------------ set-up
    def _make_simulation(self, cfg):
        try:
            return Simulation.from_setup(
                self.setup, 1.0 / cfg.rate, substeps=cfg.substeps,
                command_timeout=cfg.command_timeout,
                command_decay=cfg.command_decay, command_joints=cfg.command_joints or None,
                max_refinements=cfg.max_refinements, max_iterations=cfg.max_iterations,
                max_subdivisions=cfg.max_subdivisions, tolerance=cfg.tolerance,
                drive_frequency=cfg.drive_frequency or None,
                drive_damping_ratio=cfg.drive_damping_ratio)
        except OptionError as err:
            raise ParameterError('parameter %s' % err) from None
        except ValueError as err:
            raise ParameterError(str(err)) from None

    def _robots(self, names):
        """[(robot name, its names among ``names``)] of a world's robots that have some;
        [] without a world."""
        world = self.sim.world
        if world is None:
            return []
        return [(robot, joints) for robot, joints in world.robot_joints(names).items()
                if joints]

    def _command_groups(self):
        """[(topic namespace, joints)] of the forward command topics: the whole robot's
        (``command_joints``) and, in a world, each robot's (its command joints)."""
        return [('', None)] + [(robot + '/', joints)
                               for robot, joints in self._robots(self.sim.command_joints)]

    def _make_followers(self):
        """{controller name: :class:`TrajectoryFollower`} of the set-up's trajectory joints
        (default: every joint with a position interface): ``joint_trajectory_controller``,
        or in a world one per robot, ``<robot>/joint_trajectory_controller``; {} when there
        are no trajectory joints."""
        joints = self.setup.trajectory_joints
        if not joints:
            return {}
        groups = self._robots(joints) if self.sim.world is not None else [('', joints)]
        # the URDF's <limit acceleration jerk> (URDF 1.2), per config name
        robot = self.setup.system.urdf
        rates = {label: dict(zip(robot.config_names, values))
                 for label, values in (('acceleration', robot.acceleration_limits),
                                       ('jerk', robot.jerk_limits))}
        followers, self._follow_index = {}, {}
        for name, group in groups:
            # targets sampled half a tick ahead: the drive acts at the step's midpoint
            follower = TrajectoryFollower(
                group, goal_time_tolerance=self.cfg.goal_time_tolerance,
                continuous_joints=[j for j in self.setup.continuous_joints if j in group],
                lookahead=0.5 / self.cfg.rate,
                acceleration_limits={j: v for j, v in rates['acceleration'].items()
                                     if j in group},
                jerk_limits={j: v for j, v in rates['jerk'].items() if j in group})
            controller = (name + '/' if name else '') + 'joint_trajectory_controller'
            followers[controller] = follower
            self._follow_index[controller] = np.array([self.sim.joint_names.index(j)
                                                       for j in group])
        return followers

    def _make_robot_odometry(self):
        """[(publisher of <robot>/odom, body index, pose (4, 4) of its free joint's parent
        frame in the world)] of a world's floating robots."""
        world = self.sim.world
        if world is None:
            return []
        # a floating robot's base: the first of the free bodies under its prefix (its root
        # link's joint to the world comes before any free joint of its own description)
        names = self.sim.bodies.names
        objects = {o.name for o in world.objects}
        owned = world.robot_joints([n for n in names if n not in objects])
        odometry = []
        for robot in world.robots:
            if robot.floating:
                index = names.index(owned[robot.name][0])
                # the joint hangs from the world at the robot's pose: a fixed frame
                parent = self.sim.system.get_frame(self.sim.bodies.parents[index]).g()
                odometry.append((self.create_publisher(Odometry, robot.name + '/odom',
                                                       qos.STATE_QOS), index, parent))
        return odometry

    def _make_distances(self, cfg):
        """The :class:`~ros_vi.collision.CollisionDetector` of ``distance_pairs`` (None when
        there are none); an obstacle file is read (and checked) even then."""
        from ..collision import CollisionDetector, load_obstacles
        obstacles = {}
        if cfg.obstacles_file:
            try:
                obstacles = load_obstacles(resources.resolve_uri(cfg.obstacles_file))
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

    def _on_set_parameters(self, params):
        reason = parameters.update(self.cfg, params)
        if reason is not None:
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ the step thread's
    def tick(self, force_publish=False):
        """One tick (step thread): the trajectory follower's targets, the physics, then what
        is due on the topics."""
        for controller, follower in self.followers.items():
            if follower.active is not None or follower.pending is not None:
                self._follow(controller)
        result = self.sim.tick()
        self.diagnostics.count_tick(result)
        ticks = self.sim.ticks
        publish = force_publish or self.cfg.lockstep or self._due(ticks, self.cfg.publish_rate)
        # the clock goes out before any state stamped with it
        if publish or self._due(ticks, min(self.cfg.clock_rate, self.cfg.rate)):
            self.publish_clock()
        if publish:
            self.publish_state()
            for trajectory in self.trajectories:
                trajectory.publish_state(self.sim.t)
        if not result.ok:
            self.get_logger().error(result.error, throttle_duration_sec=1.0)
            if self.diagnostics.since_last(time.monotonic()) > 0.2:
                self.publish_diagnostics()
        return result

    def _due(self, ticks, rate):
        """True when tick number ``ticks`` crosses a period of ``rate`` [Hz]."""
        ratio = rate / self.cfg.rate
        return math.floor(ticks * ratio + 1e-9) != math.floor((ticks - 1) * ratio + 1e-9)

    def following(self):
        """True when a joint trajectory controller has a trajectory to follow."""
        return any(f.active is not None or f.pending is not None
                   for f in self.followers.values())

    def housekeeping(self):
        """Diagnostics every ``diagnostics_period``; returns the wall seconds to the next."""
        now = time.monotonic()
        if self.diagnostics.due(now) <= 0:
            self.publish_diagnostics()
        return self.diagnostics.due(time.monotonic())

    def command_publishers(self, stamped=None):
        """{command topic: publishers}: all of them, or only those whose messages carry
        (``stamped=True``) or lack (False) the stamp of the state they answer."""
        return {topic: self.count_publishers(topic) for topic, has_stamp in self.command_topics
                if stamped is None or has_stamp == stamped}

    def state_subscribers(self):
        return self._pub_js.get_subscription_count()

    # ------------------------------------------------------------------ publishing
    def publish_clock(self):
        if self._pub_clock is not None:
            self._pub_clock.publish(ClockMsg(clock=conv.time_msg(self.sim.t)))

    def publish_state(self, joint_states_only=False):
        sim = self.sim
        ns = conv.time_to_ns(sim.t)
        stamp = conv.ns_to_time_msg(ns)
        state = sim.state()
        self._pub_js.publish(conv.joint_state_msg(state, stamp))
        if joint_states_only:
            return
        if self.distances is not None:
            self._publish_distances(state, stamp)
        contacts = (self.sim.contact_forces() if self._contact_wrench or self.view is not None
                    else None)
        if self._contact_wrench:
            self._publish_contacts(contacts, stamp)
        transforms = sim.link_transforms()
        if self._base_index is not None:
            base = state.bodies[self._base_index]
            transforms = [(self.cfg.odom_frame, base.name, base.pose)] + transforms
            if self._pub_odom is not None:
                self._pub_odom.publish(conv.odometry_msg(base, self.cfg.odom_frame, stamp))
        for publisher, index, parent in self._robot_odom:
            body = state.bodies[index]
            publisher.publish(conv.odometry_msg(
                dataclasses.replace(body, parent='world', pose=parent @ body.pose), 'world',
                stamp))
        if transforms:
            if self._tf_batch is None:
                self._tf_batch = conv.TransformBatch((p, c) for p, c, _ in transforms)
            self._pub_tf.publish(self._tf_batch.fill([g for _, _, g in transforms], stamp))
        if self.recorder is not None:
            self.recorder.record(state, transforms)
        if self.view is not None:
            self._draw_view(state, contacts)
        self.loop.state_published(ns)

    def _draw_view(self, state, contacts):
        """The browser view at the published state: a description with free joints (a
        world's objects and floating robots) is posed by every config in the charts'
        attitudes, one without by its joint_states (a floating base at its pose)."""
        sim = self.sim
        if len(self.view.positions) == sim.system.nQ and sim.system.free_charts is not None \
                and self._base_index is None:
            self.view.draw(state.positions, None, contacts,
                           sim.system.free_charts.attitudes(sim.system.model))
        else:
            self.view.draw(state.joint_states(mimic=False)[1], None if self._base_index is None
                           else state.bodies[self._base_index].pose, contacts)

    def _make_contact_publishers(self, cfg):
        """{frame: WrenchStamped publisher} for every frame that carries a contact or a
        contact's plane (a box another body's corners rest on), and the contact markers'
        publisher; {} without contacts or ``publish_contacts``."""
        forces = self.sim.contact_forces()
        if forces is None or not cfg.publish_contacts:
            return {}
        self._pub_contact_markers = self.create_publisher(MarkerArray, '~/contact_markers',
                                                          qos.STATE_QOS)
        return {frame: self.create_publisher(WrenchStamped, '~/contact_wrench/'
                                             + conv.contact_topic(frame), qos.STATE_QOS)
                for frame, _, _ in forces.wrenches()}

    def _publish_contacts(self, forces, stamp):
        """~/contact_wrench/<link> and ~/contact_markers of the last step's ``forces``."""
        for frame, force, torque in forces.wrenches():
            self._contact_wrench[frame].publish(conv.wrench_msg(frame, force, torque, stamp))
        self._pub_contact_markers.publish(conv.contact_markers(
            forces, self.cfg.contact_marker_scale, stamp))

    def _publish_distances(self, state, stamp):
        """~/distances and ~/closest_points at the published positions."""
        detector = self.distances
        result = detector.query(state.positions)
        names = detector.pair_names
        self._pub_distances.publish(conv.distances_msg(names, result.distances))
        self._pub_closest.publish(conv.distance_markers(result, names, detector.obstacles,
                                                        self._distance_frame, stamp))

    def publish_diagnostics(self):
        pacer = self.loop.pacer
        self.diagnostics.lockstep_timeouts = self.loop.lockstep_timeouts
        self._pub_diag.publish(self.diagnostics.message(self, {
            'trajectory': self._trajectory_status(),
            'trajectories_refused': str(sum(t.refused for t in self.trajectories)),
            'overruns': str(pacer.slips if pacer is not None else 0),
            'behind_real_time_s': '%.6f' % (pacer.slipped if pacer is not None else 0.0),
            'urdf_warnings': str(len(self.setup.warnings))}))

    def _trajectory_status(self):
        """'none', or each controller's 'running', 'pending', 'holding' or 'idle' (with a
        world's robots: ``<controller>: <status>`` joined by ``, ``)."""
        def status(follower):
            if follower.active is not None:
                return 'running'
            if follower.pending is not None:
                return 'pending'
            return 'holding' if follower.state() is not None else 'idle'
        if not self.followers:
            return 'none'
        if list(self.followers) == ['joint_trajectory_controller']:
            return status(self.followers['joint_trajectory_controller'])
        return ', '.join('%s: %s' % (name, status(f)) for name, f in self.followers.items())

    # ------------------------------------------------------------------ commands
    def _reject(self, problem):
        problem = shorten(problem, limit=MAX_TEXT, quote=False)
        self.diagnostics.reject(problem)
        self.get_logger().warning('rejected command: %s (previous command kept)' % problem,
                                  throttle_duration_sec=1.0)

    def _commanded(self, names, source):
        """A command from ``source`` was applied to ``names``: the trajectory follower lets
        go of its joints (as a controller switch would), and lockstep may tick."""
        for follower in self.followers.values():
            if follower.state() is not None and set(names) & set(follower.joint_names):
                follower.release('preempted by a command on %s' % source)
        self.loop.commanded()

    def _on_joint_commands(self, msg):
        fields = (list(msg.name), list(msg.position), list(msg.velocity), list(msg.effort))
        stamp_ns = conv.stamp_to_ns(msg.header.stamp)
        self.loop.post(lambda: self._apply_joint_commands(*fields, stamp_ns))

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
        if self.cfg.lockstep and stamp_ns is not None and stamp_ns != self.loop.last_state_ns:
            return        # a command for an older state: not for this tick
        try:
            self.sim.set_joint_targets(names, positions or None, velocities or None,
                                       efforts or None)
        except ValueError as err:
            self._reject('joint_commands: %s' % err)
            return
        self._commanded(names, 'joint_commands')

    def _on_array_commands(self, topic, interface, joints, msg):
        values = list(msg.data)
        self.loop.post(lambda: self._apply_array_commands(topic, interface, joints, values))

    def _apply_array_commands(self, topic, interface, joints, values):
        """forward_command_controller's command: one value per joint of ``joints`` (None:
        ``command_joints``)."""
        whole = joints is None
        joints = self.sim.command_joints if whole else joints
        try:
            if interface == 'effort' and whole:
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

    def _follow(self, controller):
        """Before a tick: the targets of a joint trajectory controller's follower for it,
        applied as position commands with velocity feed-forward."""
        state = self.sim.state()
        idx = self._follow_index[controller]
        follower = self.followers[controller]
        targets = follower.update(self.sim.t, state.positions[idx], state.velocities[idx])
        if targets is None:
            return
        try:
            self.sim.set_joint_targets(follower.joint_names, targets.positions,
                                       targets.velocities)
        except ValueError as err:            # e.g. a target beyond a command bound
            follower.release('the simulator refused the target: %s' % err)
            self._reject('%s: %s' % (controller, err))

    # ------------------------------------------------------------------ services
    async def _answer(self, response, fn):
        job = await self.loop.call(fn)
        response.success = job.error is None
        response.message = job.result if job.error is None else job.error
        return response

    async def _on_reset(self, request, response):
        def reset():
            self.sim.reset()
            self.loop.restart_pacing()
            self.publish_clock()
            self.publish_state()
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
            self.loop.restart_pacing()
            if self.cfg.lockstep and not self.loop.awaiting_controller:
                # give (late-joined) controllers the state to answer
                self.publish_state()
            return ('unpaused at t=%.6f s' if was else 'was running at t=%.6f s') % self.sim.t
        return await self._answer(response, unpause)

    async def _on_step(self, request, response):
        n = self.cfg.step_ticks

        def check():
            if not self.sim.paused:
                raise ValueError('not paused: call ~/pause first')
        job = await self.loop.call(check, n)
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

    # ------------------------------------------------------------------ browser view
    def _open_view(self, cfg):
        """The browser view of ``viewer_port`` (viser, imported only then)."""
        from ..visual.viewer import LiveView
        robot = self.sim.robot
        try:
            view = LiveView(cfg.viewer_port, self.setup.text,
                            lambda m: self.get_logger().warning('browser view: %s' % m),
                            base_dir=robot.base_dir if robot is not None else None,
                            rate=VIEW_RATE)
        except ValueError as err:
            raise ParameterError('parameter viewer_port: %s' % err) from None
        self.get_logger().info('browser view: %s' % view.url)
        return view

    def destroy_node(self):
        """Stop the step thread, finish the recording (if any), then destroy the node."""
        for follower in getattr(self, 'followers', {}).values():
            follower.release('the simulator is shutting down')
        loop = getattr(self, 'loop', None)
        if loop is not None:
            loop.stop()
        if getattr(self, 'recorder', None) is not None:
            self.recorder.close()
        if getattr(self, 'view', None) is not None:
            self.view.stop()
        return super().destroy_node()


def main(args=None):
    """Console script ``simulator``."""
    return run_node(SimulatorNode, 'simulator', args)


if __name__ == '__main__':
    sys.exit(main())
