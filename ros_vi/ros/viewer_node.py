"""The ``viewer`` node: shows a running robot in the browser (``ros-vi view --ros``).

Whatever publishes ``robot_description`` (latched std_msgs/String) and ``joint_states``
(sensor_msgs/JointState) -- the ros_vi simulator, a real robot's robot_state_publisher setup,
a bag being played -- is drawn by :class:`ros_vi.visual.viewer.RobotView` in a page served on
``port`` (no rviz2, no ROS desktop install).  A new description replaces the robot; joint
states are drawn at ``display_rate`` (the newest one each time, so a fast publisher costs the
browser nothing extra).  A floating base's ``odom`` (nav_msgs/Odometry, as the simulator
publishes it with ``floating_base``) places the root link: the robot is drawn at the newest
base pose received (in the odom frame).

Parameters: ``port`` (8080), ``host`` (127.0.0.1; 0.0.0.0 to serve other machines),
``display_rate`` (30 Hz), ``frames`` (false: draw each link's frame).

A description from the graph may come from anyone on the domain: its meshes are read only
from ``package://`` URIs of installed packages (never ``file://``, absolute or relative
paths), within the importer's size limits, and what is logged about them names no file.
"""
import sys
import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ..errors import name_list, shorten
from . import conversions as conv
from . import qos
from .node_main import run_node

__all__ = ['ViewerNode', 'serve_graph', 'main']


class ViewerNode(Node):
    """Draws ``robot_description`` + ``joint_states`` in a browser page (see the module
    doc).  Raises :class:`ros_vi.visual.viewer.ViewerError` (a ValueError) when the port
    cannot be served."""

    def __init__(self, node_name='viewer', **kwargs):
        super().__init__(node_name, **kwargs)
        self.declare_parameter('port', 8080)
        self.declare_parameter('host', '127.0.0.1')
        self.declare_parameter('display_rate', 30.0)
        self.declare_parameter('frames', False)
        port = self.get_parameter('port').value
        host = self.get_parameter('host').value
        rate = float(self.get_parameter('display_rate').value)
        if not rate > 0:
            raise ValueError('parameter display_rate: must be > 0, got %r' % rate)
        self._frames = bool(self.get_parameter('frames').value)

        from ..visual.viewer import serve     # viser is imported only by a viewer
        self.server = serve(port=port, host=host)
        self.view = None
        self._descriptions = 0                # received so far: each drawn under its own path
        self._lock = threading.Lock()
        self._latest = None                   # (names, positions) not yet drawn
        self._base = None                     # newest floating base pose (4, 4), if any
        self.drawn = 0                        # joint states drawn so far
        self.create_subscription(String, 'robot_description', self._on_description,
                                 qos.LATCHED_QOS)
        self.create_subscription(JointState, 'joint_states', self._on_joint_states,
                                 qos.STATE_QOS)
        self.create_subscription(Odometry, 'odom', self._on_odometry, qos.STATE_QOS)
        self.create_timer(1.0 / rate, self._draw)
        self.get_logger().info('viewer: http://%s:%d (robot_description + joint_states)'
                               % (host, port))

    def _on_description(self, msg):
        from ..visual.viewer import robot_view
        self._descriptions += 1
        try:
            # drawn beside the robot it replaces (a scene path of its own: viser would
            # otherwise replace the old nodes one by one and warn when they are removed)
            view = robot_view(self.server, msg.data,
                              lambda m: self.get_logger().warning('browser view: %s' % m),
                              frames=self._frames, name='robot_%d' % self._descriptions,
                              packages_only=True)
        except (ValueError, RecursionError, MemoryError) as err:
            # a malformed or hostile description (from anyone on the domain): one line, and
            # the robot drawn so far stays
            self.get_logger().error('robot_description refused: %s'
                                    % shorten(str(err), limit=2000, quote=False))
            return
        with self._lock:
            if self.view is not None:
                self.view.remove()
            self.view = view
        self.get_logger().info('viewer: drawing %d joints (%s)'
                               % (len(view.joint_names), name_list(view.joint_names,
                                                                   quote=str)))

    def _on_joint_states(self, msg):
        names = list(msg.name)
        positions = list(msg.position)
        if len(positions) != len(names):
            self.get_logger().warning('joint_states: %d names but %d positions (ignored)'
                                      % (len(names), len(positions)),
                                      throttle_duration_sec=5.0)
            return
        with self._lock:
            self._latest = (names, positions)

    def _on_odometry(self, msg):
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        base = conv.pose_to_matrix((p.x, p.y, p.z), (o.x, o.y, o.z, o.w))
        with self._lock:
            self._base = base

    def _draw(self):
        with self._lock:
            view, latest, self._latest, base = self.view, self._latest, None, self._base
        if view is None or latest is None:
            return
        try:
            view.set_joint_positions(*latest, base_pose=base)
        except ValueError as err:         # NaN in a joint state: keep the last drawing
            self.get_logger().warning('joint_states not drawn: %s' % err,
                                      throttle_duration_sec=5.0)
            return
        self.drawn += 1

    def destroy_node(self):
        server = getattr(self, 'server', None)
        if server is not None:
            server.stop()
        return super().destroy_node()


def serve_graph(port=8080, host='127.0.0.1', rate=30.0, frames=False, duration=None):
    """``ros-vi view --ros``: a :class:`ViewerNode` in the current ROS 2 graph
    (``ROS_DOMAIN_ID`` etc. from the environment), spun until Ctrl-C or ``duration`` wall
    seconds.  Returns 0; raises ValueError naming the problem (a port in use)."""
    context = rclpy.Context()
    rclpy.init(args=[], context=context)
    node = None
    executor = SingleThreadedExecutor(context=context)
    try:
        node = ViewerNode(context=context, parameter_overrides=[
            Parameter('port', value=int(port)), Parameter('host', value=str(host)),
            Parameter('display_rate', value=float(rate)), Parameter('frames', value=bool(frames))])
        executor.add_node(node)
        end = None if duration is None else time.monotonic() + duration
        while context.ok() and (end is None or time.monotonic() < end):
            executor.spin_once(timeout_sec=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        if context.ok():
            rclpy.shutdown(context=context)
    return 0


def main(args=None):
    """Console entry ``python -m ros_vi.ros.viewer_node --ros-args -p port:=8081``."""
    return run_node(ViewerNode, 'viewer', args)


if __name__ == '__main__':
    sys.exit(main())
