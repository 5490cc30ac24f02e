"""The swing-up demos over DDS in one process: simulator + controller node on one executor.

:func:`run_loop` starts the same node classes the launch files start
(:class:`~ros_vi.ros.simulator_node.SimulatorNode` and a controller node of
:mod:`ros_vi.ros.controller_node`) with the parameters of ``config/<model>_swingup.yaml``,
in a private rclpy context and a namespace of their own, switched to lockstep with
``real_time_factor`` 0: every state goes out on ``joint_states``, the controller answers on
``joint_commands`` with the state's stamp, and only then does the simulator tick.  So the run
is as fast as the machine allows and deterministic (it equals the in-process loop
:func:`ros_vi.simulation.simulate` to rounding).  A third node records ``joint_states`` and the
controller's ``diagnostics`` (progress) and unpauses the simulator once everyone is matched.

The caller sets the ROS environment (``ROS_DOMAIN_ID``, ``ROS_AUTOMATIC_DISCOVERY_RANGE``,
``ROS_LOG_DIR``) before calling, as ros_vi.demo does.
"""
import itertools
import os
import time
from dataclasses import dataclass, field

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from .. import resources
from ..bounded import load_yaml
from ..control.base import angle_mask
from . import conversions as conv
from . import qos
from .controller_node import LQRControllerNode, SwingUpControllerNode
from .simulator_node import SimulatorNode

MODELS = ('pendulum', 'cartpole', 'acrobot')
_ids = itertools.count()


def config_file(model):
    """``config/<model>_swingup.yaml`` of the installed share folder (the checkout's in a
    development install), found by :func:`ros_vi.resources.share_directory`."""
    path = os.path.join(resources.share_directory(), 'config', model + '_swingup.yaml')
    if not os.path.isfile(path):
        raise FileNotFoundError('no parameter file for model %r (%s)' % (model, path))
    return path


def demo_parameters(path, controller_name):
    """(simulator parameters, controller parameters) of the parameter file ``path``, with
    their ``urdf_file`` resolved by :func:`ros_vi.resources.resolve_uri` (``package://`` from
    any install)."""
    out = []
    for node_name in ('simulator', controller_name):
        params = node_parameters(path, node_name)
        if params.get('urdf_file'):
            params['urdf_file'] = resources.resolve_uri(params['urdf_file'])
        out.append(params)
    return tuple(out)


def _flatten(d, prefix=''):
    out = {}
    for key, value in d.items():
        name = prefix + str(key)
        if isinstance(value, dict):
            out.update(_flatten(value, name + '.'))
        else:
            out[name] = value
    return out


def node_parameters(path, node_name):
    """Parameters a node named ``node_name`` gets from a ROS 2 parameter file: the ``/**``
    section, then its own section (``name`` or ``/name``); nested keys joined with dots."""
    doc = load_yaml(path, 'parameter file %r' % path) or {}
    params = {}
    for key in ('/**', node_name, '/' + node_name):
        section = doc.get(key)
        if section:
            params.update(_flatten(section.get('ros__parameters', {})))
    return params


@dataclass
class LoopRun:
    """What :func:`run_loop` recorded over the topics (N ticks of dt).

    t (N+1,) [s]; q, v (N+1, nQ) from joint_states; p (N+1, nQd) the VI's discrete momentum
    as the controller rebuilds it (:meth:`ros_vi.control.Controller.momentum` of q, v and the
    published efforts, with the controller's model); u (N, m) efforts applied over [t_k, t_k+1] (the simulator's
    joint_states effort of the next state) for ``input_names``; E (N+1,) model energy [J]
    and ``goal_energy``; progress: the controller's diagnostics as dicts (state_time, mode,
    energy_error, ...); wall_time [s] of the loop; joint_names, input_names, angles (bool
    (nQ,)); dt; controller: the controller node's ros_vi.control object (after the run).
    """
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    p: np.ndarray
    u: np.ndarray
    E: np.ndarray
    goal_energy: float
    joint_names: list
    input_names: list
    angles: np.ndarray
    dt: float
    wall_time: float
    controller: object = None
    lqr: object = None
    progress: list = field(default_factory=list)


def run_loop(model='pendulum', duration=None, controller='swingup', initial_positions=None,
             params_file=None, simulator_overrides=None, controller_overrides=None,
             on_progress=None, timeout=None):
    """Run simulator + controller node over DDS in lockstep for ``duration`` s of sim time.

    model: 'pendulum', 'cartpole' or 'acrobot' (``config/<model>_swingup.yaml``, unless
    ``params_file``); controller: 'swingup' (swingup_controller) or 'lqr' (lqr_controller);
    initial_positions: (nQ,) start, default the file's; ``*_overrides``: dicts of extra
    parameters; on_progress(dict): called for each controller diagnostics message (about
    once per simulated second); timeout: wall seconds allowed (default 60 + 20 x duration).
    Raises RuntimeError when the loop stalls or the nodes do not connect.
    """
    path = params_file or config_file(model)
    node_cls = {'swingup': SwingUpControllerNode, 'lqr': LQRControllerNode}[controller]
    ctrl_name = controller + '_controller'
    sim_params, ctrl_params = demo_parameters(path, ctrl_name)
    rate = float(sim_params.get('rate', 500.0))
    sim_params.update({'lockstep': True, 'real_time_factor': 0.0, 'start_paused': True,
                       'publish_rate': rate, 'publish_clock': False,
                       'lockstep_timeout': 5.0})
    if initial_positions is not None:
        sim_params.pop('initial_joints', None)
        sim_params['initial_positions'] = [float(x) for x in initial_positions]
    sim_params.update(simulator_overrides or {})
    ctrl_params.update({'diagnostics_period': 1.0})
    ctrl_params.update(controller_overrides or {})
    if duration is None:
        duration = 15.0
    ticks = int(round(duration * rate))
    final_ns = conv.time_to_ns(ticks / rate)
    timeout = 60.0 + 20.0 * duration if timeout is None else timeout

    context = rclpy.Context()
    rclpy.init(context=context, args=[])
    namespace = '/ros_vi_demo_%d_%d' % (os.getpid(), next(_ids))
    nodes = []
    executor = SingleThreadedExecutor(context=context)
    try:
        sim = SimulatorNode(context=context, namespace=namespace, start_parameter_services=False,
                           parameter_overrides=[
            Parameter(k, value=v) for k, v in sim_params.items()])
        nodes.append(sim)
        ctrl = node_cls(context=context, namespace=namespace, start_parameter_services=False,
                        parameter_overrides=[
            Parameter(k, value=v) for k, v in ctrl_params.items()])
        nodes.append(ctrl)
        rec = rclpy.create_node('demo_recorder', namespace=namespace, context=context,
                                start_parameter_services=False)
        nodes.append(rec)
        states = {}
        progress = []

        def on_state(msg):
            states[conv.stamp_to_ns(msg.header.stamp)] = (
                list(msg.name), list(msg.position), list(msg.velocity), list(msg.effort))

        def on_diag(msg):
            for status in msg.status:
                if status.name.endswith(': controller'):
                    values = {kv.key: kv.value for kv in status.values}
                    values['level'] = int.from_bytes(status.level, 'little') \
                        if isinstance(status.level, bytes) else int(status.level)
                    values['message'] = status.message
                    progress.append(values)
                    if on_progress is not None:
                        on_progress(values)
        rec.create_subscription(JointState, 'joint_states', on_state, qos.STATE_QOS)
        rec.create_subscription(DiagnosticArray, 'diagnostics', on_diag, qos.STATE_QOS)
        client = rec.create_client(Trigger, 'simulator/unpause')
        for node in nodes:
            executor.add_node(node)

        def spin_until(predicate, limit, what):
            deadline = time.monotonic() + limit
            while not predicate():
                if time.monotonic() > deadline:
                    raise RuntimeError('timed out after %.0f s waiting for %s' % (limit, what))
                executor.spin_once(timeout_sec=0.001)

        spin_until(lambda: sim._pub_js.get_subscription_count() >= 2
                   and ctrl._pub_cmd.get_subscription_count() >= 1
                   and ctrl._pub_diag.get_subscription_count() >= 1
                   and client.service_is_ready(), 20.0,
                   'the simulator, controller and recorder to discover each other')
        wall0 = time.monotonic()
        future = client.call_async(Trigger.Request())
        spin_until(future.done, 20.0, 'the simulator to unpause')
        spin_until(lambda: final_ns in states, timeout,
                   '%d lockstep ticks (%g s of simulated time)' % (ticks, duration))
        wall = time.monotonic() - wall0
        controller_obj, lqr = ctrl.controller, ctrl.lqr
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
        rclpy.shutdown(context=context)

    stamps = [conv.time_to_ns(k / rate) for k in range(ticks + 1)]
    missing = [s for s in stamps if s not in states]
    if missing:
        raise RuntimeError('joint_states missing for %d ticks (first at t=%.6f s)'
                           % (len(missing), missing[0] * 1e-9))
    names = states[stamps[0]][0]
    if names != controller_obj.joint_names:
        raise RuntimeError('joint_states names %s differ from the controller joints %s'
                           % (names, controller_obj.joint_names))
    q = np.array([states[s][1] for s in stamps])
    v = np.array([states[s][2] for s in stamps])
    eff = np.array([states[s][3] for s in stamps])
    cols = [names.index(j) for j in controller_obj.input_names]
    u = eff[1:, cols]
    # the VI's momentum as the controller rebuilds it from what it was sent: (q, v) and the
    # efforts applied over the tick that led there
    p = np.array([controller_obj.momentum(a, b, e) for a, b, e in zip(q, v, eff)])
    E = np.array([controller_obj.energy(a, b) for a, b in zip(q, v)])
    return LoopRun(np.array(stamps) * 1e-9, q, v, p, u, E, lqr.goal_energy, list(names),
                   list(controller_obj.input_names), angle_mask(controller_obj.system),
                   1.0 / rate, wall, controller_obj, lqr, progress)
