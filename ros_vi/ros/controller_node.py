"""The ``lqr_controller`` and ``swingup_controller`` nodes: ros_vi's control laws over topics.

Run (ROS 2 workspace): ``ros2 run ros_vi swingup_controller --ros-args --params-file
config/pendulum_swingup.yaml``; pip environment: ``.venv/bin/swingup_controller ...``.
docs/controllers.md has the full parameter table.

Both nodes are thin adapters around :mod:`ros_vi.control` (no control law lives here):

Subscribes
    joint_states (sensor_msgs/JointState): the state, rebuilt in the model's config order;
    the law rebuilds the VI momentum p = M(q) v with the node's own model.
Publishes
    joint_commands (sensor_msgs/JointState, ``effort`` by joint name, stamped with the
    answered state's stamp, so a lockstep simulator accepts it) or, with
    ``command_topic: effort_controller/commands``, std_msgs/Float64MultiArray in the order of
    the controller's joints (ros2_control's effort controller format; unstamped);
    diagnostics (diagnostic_msgs/DiagnosticArray): mode, energy error, LQR cost-to-go,
    efforts, rejected states -- every ``diagnostics_period`` seconds of state time, at once
    when the mode changes, and when states are rejected or missing.

Every joint_states message is answered by exactly one command (event driven: the loop runs
at the rate the simulator publishes; ``rate`` says what that rate is, ``dt`` defaults to
1/rate and is the step the LQR is designed for).  A state that is malformed (NaN/inf,
missing or repeated joints, wrong lengths, no velocities) or stale (older than
``max_state_age``) is answered with zero torque and a throttled warning saying why.  When no
state arrives for ``state_timeout`` wall seconds (simulator missing or stopped) the node
publishes zero torque (stamped with its own clock) every ``state_timeout / 2`` s and warns.

``swingup_controller`` owns the switch between the swing-up law and the LQR catch
(:class:`ros_vi.control.SwingUpAndBalance`): one node, one publisher on the joints, so two
controllers never fight over one joint.  ``lqr_controller`` is the LQR alone, either always
active or (``active_region: region``) only inside the hand-over region, zero torque outside.
"""
import math
import re
import sys
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..control import (LQR, AcrobotSwingUp, CartPoleSwingUp, ControlOutput, Controller,
                       PendulumSwingUp, SwingUpAndBalance)
from . import conversions as conv
from . import parameters, qos
from .parameters import (ControllerParameters, LQRControllerParameters, ParameterError,
                         SwingUpControllerParameters)
from .node_main import run_node

# the parameters (names, defaults, descriptions, checks): the dataclasses of
# ros_vi/ros/parameters.py; {name: (default, description)} here for launch files and tests
COMMON_PARAMETERS = parameters.table(ControllerParameters)
LQR_PARAMETERS = {k: v for k, v in parameters.table(LQRControllerParameters).items()
                  if k not in COMMON_PARAMETERS}
SWINGUP_PARAMETERS = {k: v for k, v in parameters.table(SwingUpControllerParameters).items()
                      if k not in COMMON_PARAMETERS}


def _matrix(name, values, n):
    """None (identity), (n,) diagonal or (n, n) from a flat list (row-major)."""
    if not values:
        return None
    if len(values) == n:
        return np.array(values)
    if len(values) == n * n:
        W = np.array(values).reshape(n, n)
        if not np.allclose(W, W.T, rtol=0, atol=1e-12 * max(1.0, np.abs(W).max())):
            raise ParameterError('parameter %s: the %dx%d matrix is not symmetric' % (name, n, n))
        return W
    raise ParameterError('parameter %s: expected %d diagonal entries or %d (a %dx%d matrix, '
                         'row-major), got %d' % (name, n, n * n, n, n, len(values)))


class _Idle(Controller):
    """Zero efforts (mode 'idle'): the lqr_controller's law outside its region."""

    def _law(self, q, v):
        return ControlOutput(np.zeros(len(self.input_names)), 'idle')


# ---------------------------------------------------------------------- ROS-free factory
def build_controller(kind, cfg, system):
    """The :mod:`ros_vi.control` object a node runs, from its checked parameters ``cfg``
    (a :class:`~ros_vi.ros.parameters.ControllerParameters`).

    kind: 'lqr' or 'swingup'.  Raises ParameterError naming the parameter at fault.
    Returns (controller, lqr): the object called every state and its LQR part."""
    names = [c.name for c in system.configs]
    n = system.nQd
    try:
        probe = _Idle(system, cfg.dt)
    except ValueError as err:
        raise ParameterError('parameter dt: %s' % err) from None
    inputs = probe.input_names
    if not inputs:
        raise ParameterError('parameter robot_description/urdf_file: the robot has no '
                             'actuated joint with a non-zero effort limit')
    u_max = None
    if cfg.effort_limits:
        if len(cfg.effort_limits) != len(inputs):
            raise ParameterError('parameter effort_limits: %d values for the %d controlled '
                                 'joints (%s)' % (len(cfg.effort_limits), len(inputs),
                                                  ', '.join(inputs)))
        if any(v <= 0 for v in cfg.effort_limits):
            raise ParameterError('parameter effort_limits: must be > 0, got %r'
                                 % cfg.effort_limits)
        u_max = cfg.effort_limits

    goal = None
    if cfg.goal_positions:
        joints = cfg.goal_joints or names
        if len(cfg.goal_positions) != len(joints):
            raise ParameterError('parameter goal_positions: %d values for %d joints (%s)'
                                 % (len(cfg.goal_positions), len(joints), ', '.join(joints)))
        unknown = [j for j in joints if j not in names]
        if unknown:
            raise ParameterError('parameter goal_joints: unknown joint(s) %s (joints: %s)'
                                 % (', '.join(unknown), ', '.join(names)))
        if set(joints) != set(names) or len(joints) != len(names):
            raise ParameterError('parameter goal_joints: must name every joint once (%s), '
                                 'got %s' % (', '.join(names), ', '.join(joints)))
        goal = dict(zip(joints, cfg.goal_positions))
    elif cfg.goal_joints:
        raise ParameterError('parameter goal_positions: empty but goal_joints is given')

    Q = _matrix('Q', cfg.Q, 2 * n)
    R = _matrix('R', cfg.R, len(inputs))
    horizon = cfg.horizon or None

    swing = None
    if kind == 'swingup':
        law, g = cfg.law, cfg.gains
        try:
            if law == 'pendulum':
                swing = PendulumSwingUp(system, cfg.dt, goal=goal, k_energy=g['k_energy'],
                                        compensate=g['compensate'], kick=g['kick'] or None,
                                        u_max=u_max)
            elif law == 'cartpole':
                swing = CartPoleSwingUp(system, cfg.dt, cart=g['cart'], pole=g['pole'],
                                        goal=goal, k_energy=g['k_energy'], a_max=g['a_max'],
                                        k_x=g['k_x'], k_v=g['k_v'],
                                        kick_accel=g['kick_accel'], u_max=u_max)
            else:
                swing = AcrobotSwingUp(system, cfg.dt, passive=g['passive'],
                                       active=g['active'], goal=goal, k_p=g['k_p'],
                                       k_d=g['k_d'], k_energy=g['k_energy'], den_min=g['den_min'],
                                       kick_accel=g['kick_accel'], u_max=u_max)
        except ValueError as err:
            raise ParameterError('parameters law=%s / %s.*: %s' % (law, law, err)) from None
        goal = swing.goal
    elif goal is None:
        raise ParameterError('parameter goal_positions: the lqr_controller needs a goal '
                             '(goal_joints and goal_positions)')
    try:
        lqr = LQR(system, cfg.dt, goal, Q=Q, R=R, u_max=u_max, horizon=horizon)
    except ValueError as err:
        raise ParameterError('parameters goal_positions/Q/R/effort_limits: LQR design '
                             'failed: %s' % err) from None
    c_in = cfg.handover_c_in or None
    c_out = cfg.handover_c_out or None
    if kind == 'lqr' and cfg.active_region == 'always':
        return lqr, lqr
    if swing is None:
        swing = _Idle(system, cfg.dt, u_max=lqr.u_max)
    try:
        return SwingUpAndBalance(swing, lqr, c_in, c_out), lqr
    except ValueError as err:
        raise ParameterError('parameters handover_c_in/handover_c_out: %s' % err) from None


# ---------------------------------------------------------------------- the nodes
class ControllerNode(Node):
    """Base of both controller nodes (``kind`` 'lqr' or 'swingup'); see the module doc.

    Constructible in-process with ``parameter_overrides=[Parameter(...)]``; raises
    ParameterError / URDFError (ValueErrors) naming the parameter at fault.

    Attributes for in-process users: ``controller`` (the ros_vi.control object), ``lqr``,
    ``last_output`` (ControlOutput of the last answered state), ``answered``, ``rejected``.
    """

    KIND = None
    PARAMETERS = ControllerParameters

    def __init__(self, node_name, **kwargs):
        super().__init__(node_name, **kwargs)
        parameters.declare(self, self.PARAMETERS)
        self.cfg = cfg = parameters.read(self, self.PARAMETERS)
        self.system = self._make_system(cfg)
        self.controller, self.lqr = build_controller(self.KIND, cfg, self.system)
        self.joint_names = list(self.controller.joint_names)
        self.command_joints = list(self.controller.input_names)
        self._zero = np.zeros(len(self.command_joints))

        self.answered = 0
        self.rejected = 0
        self.last_rejection = ''
        self.last_output = None
        self._last_stamp_ns = None
        self._last_state = None
        self._last_u = None
        self._mode = None
        self._last_state_wall = time.monotonic()
        self._started_wall = self._last_state_wall
        self._missing = False
        self._diag_next_ns = None
        self._warned = {}
        self._interval_warned = False

        if cfg.command_topic == 'joint_commands':
            self._pub_cmd = self.create_publisher(JointState, 'joint_commands',
                                                  qos.COMMAND_QOS)
        else:
            self._pub_cmd = self.create_publisher(Float64MultiArray,
                                                  'effort_controller/commands',
                                                  qos.COMMAND_QOS)
        self._pub_diag = self.create_publisher(DiagnosticArray, 'diagnostics', qos.STATE_QOS)
        self.create_subscription(JointState, 'joint_states', self._on_state, qos.STATE_QOS)
        # steady clock: with use_sim_time a vanished simulator also stops /clock
        self._watchdog = self.create_timer(cfg.state_timeout / 2.0, self._on_watchdog,
                                           clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(self._describe())

    # ------------------------------------------------------------------ parameters
    def _make_system(self, cfg):
        """The controller's model of the robot; the importer's tolerated quirks are logged
        once each, as the simulator node logs them."""
        setup = parameters.robot_setup(cfg)
        for quirk in setup.warnings:
            self.get_logger().warning('robot description: %s' % quirk)
        return setup.system

    def _describe(self):
        c, lqr = self.controller, self.lqr
        text = ('%s: joints %s, driving %s (|u| <= %s) at dt %g s, publishing on %s; LQR '
                'goal %s, spectral radius of A-BK %.4f' % (
                    self.KIND, ', '.join(self.joint_names), ', '.join(self.command_joints),
                    np.array2string(c.u_max, precision=4), c.dt, self.cfg.command_topic,
                    np.array2string(lqr.equilibrium.q, precision=4), lqr.spectral_radius))
        if isinstance(c, SwingUpAndBalance):
            text += '; hand-over V < %.6g (leave above %.6g)' % (c.c_in, c.c_out)
        return text

    # ------------------------------------------------------------------ state in
    def _state_from(self, msg):
        """(q, v, efforts) in config order from a JointState (efforts None when the message
        carries none), or raise ValueError saying why."""
        names = list(msg.name)
        if not names:
            raise ValueError('no joint names')
        if len(set(names)) != len(names):
            raise ValueError('joint names repeated: %s' % names)
        missing = [j for j in self.joint_names if j not in names]
        if missing:
            raise ValueError('missing joint%s %s (got %s)' % (
                's' if len(missing) > 1 else '', ', '.join(missing), ', '.join(names)))
        if len(msg.position) != len(names):
            raise ValueError('%d names but %d positions' % (len(names), len(msg.position)))
        if len(msg.velocity) != len(names):
            raise ValueError('%d names but %d velocities' % (len(names), len(msg.velocity)))
        idx = [names.index(j) for j in self.joint_names]
        q = np.array([msg.position[i] for i in idx], dtype=float)
        v = np.array([msg.velocity[i] for i in idx], dtype=float)
        # the efforts applied over the tick (the simulator publishes them): the law rebuilds
        # the VI's momentum with them (Controller.momentum)
        efforts = None
        if len(msg.effort) == len(names):
            efforts = np.array([msg.effort[i] for i in idx], dtype=float)
        elif len(msg.effort):
            raise ValueError('%d names but %d efforts' % (len(names), len(msg.effort)))
        for what, arr in (('position', q), ('velocity', v), ('effort', efforts)):
            if arr is None:
                continue
            bad = [j for j, x in zip(self.joint_names, arr) if not math.isfinite(x)]
            if bad:
                raise ValueError('non-finite %s for %s' % (what, ', '.join(bad)))
        return q, v, efforts

    def _on_state(self, msg):
        self._last_state_wall = time.monotonic()
        self._missing = False
        stamp_ns = conv.stamp_to_ns(msg.header.stamp)
        try:
            q, v, efforts = self._state_from(msg)
            age = self.cfg.max_state_age
            if age > 0:
                now_ns = self.get_clock().now().nanoseconds
                if now_ns - stamp_ns > age * 1e9:
                    raise ValueError('stale: stamp %.6f s is %.3f s older than the clock '
                                     '(max_state_age %g s)' % (stamp_ns * 1e-9,
                                                               (now_ns - stamp_ns) * 1e-9, age))
        except ValueError as err:
            self._reject(str(err), msg.header.stamp)
            return
        if self._last_stamp_ns is not None:
            if stamp_ns < self._last_stamp_ns:
                # e.g. a restarted simulator: start over rather than refuse it forever
                self._warn('time', 'joint_states went back in time (%.6f s after %.6f s): '
                           'controller reset' % (stamp_ns * 1e-9, self._last_stamp_ns * 1e-9))
                self.controller.reset()
                self._diag_next_ns = None
            elif stamp_ns == self._last_stamp_ns and self._last_state is not None and \
                    np.array_equal(q, self._last_state[0]) and \
                    np.array_equal(v, self._last_state[1]):
                # the same state again (a lockstep simulator re-publishing it): same answer
                self._publish(self._last_u, msg.header.stamp)
                return
            elif not self._interval_warned and stamp_ns > self._last_stamp_ns:
                interval = (stamp_ns - self._last_stamp_ns) * 1e-9
                if abs(interval - self.controller.dt) > 1e-6 * max(1.0, self.controller.dt) \
                        and interval < 10 * self.controller.dt:
                    self._interval_warned = True
                    self.get_logger().warning(
                        'joint_states arrive every %.6g s but the controller is designed for '
                        'dt = %.6g s: set rate (or dt) to the simulator\'s publish rate'
                        % (interval, self.controller.dt))
        try:
            out = self.controller.compute(q, v, efforts)
        except Exception as err:     # never let a law's failure kill the node
            self._reject('control law failed: %s' % err, msg.header.stamp)
            return
        self.last_output = out
        self.answered += 1
        self._last_stamp_ns = stamp_ns
        self._last_state = (q, v)
        self._last_u = out.u
        self._publish(out.u, msg.header.stamp)
        changed = out.mode != self._mode
        if changed and self._mode is not None:
            self.get_logger().info('t = %.3f s: mode %s -> %s (E - E_goal = %.4g J, V = %.4g)'
                                   % (stamp_ns * 1e-9, self._mode, out.mode,
                                      out.energy_error, out.cost))
        self._mode = out.mode
        period = self.cfg.diagnostics_period
        due = self._diag_next_ns is None or stamp_ns >= self._diag_next_ns
        if changed or due:
            if due:
                period_ns = int(round(period * 1e9)) if period > 0 else 0
                self._diag_next_ns = stamp_ns + period_ns if period_ns == 0 else \
                    (stamp_ns // period_ns + 1) * period_ns
            self._publish_diagnostics(stamp_ns, out, changed)

    # ------------------------------------------------------------------ commands out
    def _publish(self, u, stamp):
        u = [float(x) for x in u]
        if self.cfg.command_topic == 'joint_commands':
            msg = JointState(name=list(self.command_joints), effort=u)
            msg.header.stamp = stamp
        else:
            msg = Float64MultiArray(data=u)
        self._pub_cmd.publish(msg)

    def _warn(self, key, text, period=1.0):
        """Warning throttled per kind of problem (so one problem cannot hide another)."""
        now = time.monotonic()
        if now - self._warned.get(key, -math.inf) >= period:
            self._warned[key] = now
            self.get_logger().warning(text)

    def _reject(self, why, stamp):
        self.rejected += 1
        self.last_rejection = why
        self._publish(self._zero, stamp)
        key = re.sub(r'[0-9.]+', '#', ' '.join(why.split()[:2]))    # the kind of problem
        self._warn('reject:' + key, 'rejected joint_states (%s): publishing zero torque' % why)
        if self._warned.get('diag-reject', -math.inf) < time.monotonic() - 1.0:
            self._warned['diag-reject'] = time.monotonic()
            self._publish_diagnostics(conv.stamp_to_ns(stamp), None, False,
                                      DiagnosticStatus.WARN, 'rejected joint_states: ' + why)

    def _on_watchdog(self):
        silent = time.monotonic() - self._last_state_wall
        if silent < self.cfg.state_timeout:
            return
        self._missing = True
        why = ('no joint_states for %.1f s (simulator missing or stopped): publishing zero '
               'torque' % silent)
        self._publish(self._zero, self.get_clock().now().to_msg())
        self._warn('missing', why, period=max(1.0, self.cfg.state_timeout))
        if self._warned.get('diag-missing', -math.inf) < time.monotonic() - 1.0:
            self._warned['diag-missing'] = time.monotonic()
            self._publish_diagnostics(self.get_clock().now().nanoseconds, None, False,
                                      DiagnosticStatus.WARN, why)

    # ------------------------------------------------------------------ diagnostics
    def _publish_diagnostics(self, stamp_ns, out, changed, level=None, message=None):
        status = DiagnosticStatus()
        status.name = '%s: controller' % self.get_fully_qualified_name()
        status.hardware_id = getattr(self.system.urdf, 'name', '') or 'ros_vi'
        if level is None:
            level, message = DiagnosticStatus.OK, 'mode %s' % out.mode
        status.level, status.message = level, message
        values = {
            'kind': self.KIND,
            'state_time': '%.9f' % (stamp_ns * 1e-9),
            'mode': out.mode if out is not None else (self._mode or ''),
            'mode_changed': str(bool(changed)).lower(),
            'energy_error': '%.12g' % (out.energy_error if out is not None else math.nan),
            'cost_to_go': '%.12g' % (out.cost if out is not None else math.nan),
            'efforts': ','.join('%.9g' % x for x in (out.u if out is not None else self._zero)),
            'command_joints': ','.join(self.command_joints),
            'answered': str(self.answered),
            'rejected': str(self.rejected),
            'last_rejection': self.last_rejection,
            'state_missing': str(self._missing).lower(),
        }
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = conv.ns_to_time_msg(max(stamp_ns, 0))
        self._pub_diag.publish(msg)


class LQRControllerNode(ControllerNode):
    """``lqr_controller``: the VI-linearised LQR about ``goal_positions``."""

    KIND = 'lqr'
    PARAMETERS = LQRControllerParameters

    def __init__(self, node_name='lqr_controller', **kwargs):
        super().__init__(node_name, **kwargs)


class SwingUpControllerNode(ControllerNode):
    """``swingup_controller``: energy-shaping swing-up with the LQR catch in one node."""

    KIND = 'swingup'
    PARAMETERS = SwingUpControllerParameters

    def __init__(self, node_name='swingup_controller', **kwargs):
        super().__init__(node_name, **kwargs)


NODES = {'lqr_controller': LQRControllerNode, 'swingup_controller': SwingUpControllerNode}


def _main(cls, args=None):
    return run_node(cls, cls.__init__.__defaults__[0], args)


def main_lqr(args=None):
    """Console script ``lqr_controller``."""
    return _main(LQRControllerNode, args)


def main_swingup(args=None):
    """Console script ``swingup_controller``."""
    return _main(SwingUpControllerNode, args)


if __name__ == '__main__':
    # python -m ros_vi.ros.controller_node {lqr_controller|swingup_controller} --ros-args ...
    if len(sys.argv) < 2 or sys.argv[1] not in NODES:
        sys.stderr.write('usage: python -m ros_vi.ros.controller_node '
                         '{lqr_controller|swingup_controller} [--ros-args ...]\n')
        sys.exit(2)
    kind = sys.argv.pop(1)
    sys.exit(_main(NODES[kind]))
