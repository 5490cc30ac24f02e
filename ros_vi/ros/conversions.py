"""Conversions between ros_vi's numpy state and ROS messages (no node logic here).

Times: simulation time t [s] <-> integer nanoseconds <-> ``builtin_interfaces/Time``.
Poses: (4, 4) homogeneous matrices <-> ``geometry_msgs/Transform`` (quaternion x, y, z, w).
A free body's state (:class:`ros_vi.simulation.FreeBodyState`) -> ``nav_msgs/Odometry``.
Distances (:mod:`ros_vi.collision`) -> ``std_msgs/Float64MultiArray`` and
``visualization_msgs/MarkerArray``.  Contact forces
(:class:`ros_vi.mechanics.contact.ContactForces`) -> ``geometry_msgs/WrenchStamped`` per
frame and ``visualization_msgs/MarkerArray``.
The arithmetic is in :mod:`ros_vi.conventions` (no ROS import), shared with the recordings.
"""
import re

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, TransformStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA, Float64MultiArray, MultiArrayDimension
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

# the ROS-free halves (also used by the recordings); time_to_ns and the quaternion
# conversions are part of this module's interface too
from ..conventions import (CONTACT_RGBA, join_ns, matrix_to_pose, pose_to_matrix,  # noqa: F401
                           quaternion_to_rotation, rotation_to_quaternion,
                           rotations_to_quaternions, split_ns, time_to_ns)
from ..urdf import axis_alignment


def ns_to_time_msg(ns):
    """Integer nanoseconds -> ``builtin_interfaces/Time`` (sec, nanosec)."""
    sec, nanosec = split_ns(ns)
    return Time(sec=sec, nanosec=nanosec)


def time_msg(t):
    """Simulation time t [s] -> ``builtin_interfaces/Time``."""
    return ns_to_time_msg(time_to_ns(t))


def stamp_to_ns(stamp):
    """``builtin_interfaces/Time`` -> integer nanoseconds."""
    return join_ns(stamp.sec, stamp.nanosec)


def transform_stamped(parent, child, g, stamp):
    """``geometry_msgs/TransformStamped`` of pose g (4, 4) of ``child`` in ``parent``."""
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = parent
    msg.child_frame_id = child
    translation, (x, y, z, w) = matrix_to_pose(g)
    tr = msg.transform.translation
    tr.x, tr.y, tr.z = (float(v) for v in translation)
    rot = msg.transform.rotation
    rot.x, rot.y, rot.z, rot.w = float(x), float(y), float(z), float(w)
    return msg


class TransformBatch:
    """A ``tf2_msgs/TFMessage`` for a fixed list of frame pairs, refilled in place.

    Building messages is most of what publishing costs in Python; a simulator publishes the
    same joints at every state, so the messages are made once and only their stamps and
    poses change (rclpy serialises on publish, so reusing them is safe).

    >>> batch = TransformBatch([('world', 'link_1'), ('link_1', 'link_2')])
    >>> publisher.publish(batch.fill(poses, stamp))      # poses (2, 4, 4)
    """

    def __init__(self, frames):
        self.frames = list(frames)
        self.msg = TFMessage(transforms=[
            TransformStamped(child_frame_id=child) for _, child in self.frames])
        for t, (parent, _) in zip(self.msg.transforms, self.frames):
            t.header.frame_id = parent

    def fill(self, poses, stamp):
        """The message with ``poses`` (k, 4, 4) (child in parent) stamped ``stamp``."""
        poses = np.asarray(poses, dtype=float)
        quats = rotations_to_quaternions(poses[:, :3, :3]).tolist()
        trans = poses[:, :3, 3].tolist()
        for t, (x, y, z), (qx, qy, qz, qw) in zip(self.msg.transforms, trans, quats):
            t.header.stamp = stamp
            tr, rot = t.transform.translation, t.transform.rotation
            tr.x, tr.y, tr.z = x, y, z
            rot.x, rot.y, rot.z, rot.w = qx, qy, qz, qw
        return self.msg


def transform_to_matrix(transform):
    """``geometry_msgs/Transform`` -> (4, 4) homogeneous matrix."""
    t, r = transform.translation, transform.rotation
    return pose_to_matrix((t.x, t.y, t.z), (r.x, r.y, r.z, r.w))


def odometry_msg(body, frame_id, stamp):
    """``nav_msgs/Odometry`` of a free body (a :class:`ros_vi.simulation.FreeBodyState`):
    ``header.frame_id`` = ``frame_id`` (the frame its pose is in, e.g. ``odom``),
    ``child_frame_id`` = the body frame; pose = the body's pose in ``frame_id``; twist = its
    linear [m/s] and angular [rad/s] velocity in the body frame (REP 105); covariances zero
    (the simulation knows its state exactly)."""
    msg = Odometry()
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.child_frame_id = body.name
    translation, (x, y, z, w) = matrix_to_pose(body.pose)
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z = (float(v) for v in translation)
    o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(w)
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    lin.x, lin.y, lin.z = (float(v) for v in body.linear)
    ang.x, ang.y, ang.z = (float(v) for v in body.angular)
    return msg


def joint_state_msg(state, stamp):
    """``sensor_msgs/JointState`` from a :class:`ros_vi.simulation.SimState`."""
    msg = JointState()
    msg.header.stamp = stamp
    # the joints (no free joint's configs), then the mimic joints with effort 0
    names, position, velocity, effort = state.joint_states()
    msg.name = names
    # ndarray.tolist gives Python floats in one call (a message field takes no numpy scalars)
    msg.position = np.asarray(position, dtype=float).tolist()
    msg.velocity = np.asarray(velocity, dtype=float).tolist()
    msg.effort = np.asarray(effort, dtype=float).tolist()
    return msg


# ---------------------------------------------------------------------- distances
APART_RGBA = (0.1, 0.8, 0.2, 1.0)         # a pair apart: green
TOUCHING_RGBA = (0.9, 0.1, 0.1, 1.0)      # a pair touching or overlapping: red
OBSTACLE_RGBA = (0.6, 0.6, 0.65, 0.5)
ARROW_SHAFT, ARROW_HEAD = 0.005, 0.015    # [m] diameters of the closest-point arrows
CONTACT_POINT = 0.02                      # [m] diameter of a contact point's sphere
HALFSPACE_SIDE = 4.0                      # [m] side of the square drawn for a half-space
HALFSPACE_THICKNESS = 0.002               # [m]


def distances_msg(pair_names, distances):
    """``std_msgs/Float64MultiArray`` of the pairs' signed distances [m], in pair order;
    one layout dimension whose label is the pair names joined by commas
    (``'link_7:ground,link_7:cube1'``)."""
    msg = Float64MultiArray()
    n = len(pair_names)
    msg.layout.dim = [MultiArrayDimension(label=','.join(pair_names), size=n, stride=n)]
    msg.data = [float(d) for d in distances]
    return msg


def _color(rgba):
    return ColorRGBA(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))


def _pose_into(marker, g):
    translation, (x, y, z, w) = matrix_to_pose(g)
    p, o = marker.pose.position, marker.pose.orientation
    p.x, p.y, p.z = (float(v) for v in translation)
    o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(w)


def obstacle_marker(obstacle, frame_id, stamp, marker_id):
    """``visualization_msgs/Marker`` drawing an obstacle of :mod:`ros_vi.collision` (a
    half-space as a thin square of side :data:`HALFSPACE_SIDE` on its boundary)."""
    m = Marker(ns='obstacles', id=marker_id, action=Marker.ADD, color=_color(OBSTACLE_RGBA))
    m.header.frame_id, m.header.stamp = frame_id, stamp
    g = obstacle.pose
    if obstacle.type == 'box':
        m.type = Marker.CUBE
        m.scale.x, m.scale.y, m.scale.z = obstacle.size
    elif obstacle.type == 'sphere':
        m.type = Marker.SPHERE
        m.scale.x = m.scale.y = m.scale.z = 2 * obstacle.radius
    elif obstacle.type == 'cylinder':
        m.type = Marker.CYLINDER
        m.scale.x = m.scale.y = 2 * obstacle.radius
        m.scale.z = obstacle.length
    else:
        m.type = Marker.CUBE
        m.scale.x = m.scale.y = HALFSPACE_SIDE
        m.scale.z = HALFSPACE_THICKNESS
        n = np.array(obstacle.normal)
        g = np.eye(4)
        g[:3, :3] = axis_alignment(n)
        g[:3, 3] = (obstacle.offset - HALFSPACE_THICKNESS / 2) * n
    _pose_into(m, g)
    return m


def distance_markers(query, pair_names, obstacles, frame_id, stamp):
    """``visualization_msgs/MarkerArray``: per pair an ARROW (namespace ``distances``, id =
    pair index) from the closest point on its first object to the one on its second, green
    apart and red touching or overlapping; then every obstacle (namespace ``obstacles``, id
    = its index).  ``query``: a :class:`ros_vi.collision.DistanceQuery` (world frame =
    ``frame_id``)."""
    markers = []
    for k, name in enumerate(pair_names):
        m = Marker(ns='distances', id=k, type=Marker.ARROW, action=Marker.ADD, text=name)
        m.header.frame_id, m.header.stamp = frame_id, stamp
        m.pose.orientation.w = 1.0
        m.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
                    for p in (query.points_a[k], query.points_b[k])]
        m.scale.x, m.scale.y = ARROW_SHAFT, ARROW_HEAD
        m.color = _color(APART_RGBA if query.distances[k] > 0 else TOUCHING_RGBA)
        markers.append(m)
    for j, obstacle in enumerate(obstacles.values()):
        markers.append(obstacle_marker(obstacle, frame_id, stamp, j))
    return MarkerArray(markers=markers)


def contact_topic(frame):
    """The topic name token(s) for a contact wrench of the frame ``frame`` (a prefixed link
    name, ``/`` kept as a namespace separator): characters a topic name cannot hold become
    ``_``, and a token that starts with a digit gets a leading ``_``."""
    tokens = [re.sub(r'[^A-Za-z0-9_]', '_', t) for t in frame.split('/') if t]
    return '/'.join('_' + t if t[0].isdigit() else t for t in tokens) or '_'


def wrench_msg(frame, force, torque, stamp):
    """``geometry_msgs/WrenchStamped`` of ``force`` (3,) [N] and ``torque`` (3,) [N m] in
    ``frame``'s axes (header.frame_id = frame)."""
    msg = WrenchStamped()
    msg.header.frame_id, msg.header.stamp = frame, stamp
    f, m = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z = (float(v) for v in force)
    m.x, m.y, m.z = (float(v) for v in torque)
    return msg


def contact_markers(forces, scale, stamp):
    """``visualization_msgs/MarkerArray`` of the active contacts of a
    :class:`~ros_vi.mechanics.contact.ContactForces`, each in its frame: a DELETEALL first
    (a contact that opened disappears), then per active contact ``k`` a SPHERE at the
    touching point (namespace ``contact_points``, id k) and an ARROW from it along the force
    (``contact_forces``, id k), ``scale`` [m/N] long; green sticking, orange sliding."""
    markers = [Marker(action=Marker.DELETEALL)]
    for k, mode in enumerate(forces.modes):
        if mode == 'open':
            continue
        color = _color(CONTACT_RGBA[mode])
        point, force = forces.points[k], forces.forces[k]
        tip = point + scale * force
        dot = Marker(ns='contact_points', id=k, type=Marker.SPHERE, action=Marker.ADD,
                     color=color, text=forces.names[k])
        dot.scale.x = dot.scale.y = dot.scale.z = CONTACT_POINT
        dot.pose.position = Point(x=float(point[0]), y=float(point[1]), z=float(point[2]))
        dot.pose.orientation.w = 1.0
        arrow = Marker(ns='contact_forces', id=k, type=Marker.ARROW, action=Marker.ADD,
                       color=color, text=forces.names[k])
        arrow.pose.orientation.w = 1.0
        arrow.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
                        for p in (point, tip)]
        arrow.scale.x, arrow.scale.y = ARROW_SHAFT, ARROW_HEAD
        for m in (dot, arrow):
            m.header.frame_id, m.header.stamp = forces.frames[k], stamp
        markers += [dot, arrow]
    return MarkerArray(markers=markers)
