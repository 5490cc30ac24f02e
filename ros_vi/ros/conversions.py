"""Conversions between ros_vi's numpy state and ROS messages (no node logic here).

Times: simulation time t [s] <-> integer nanoseconds <-> ``builtin_interfaces/Time``.
Poses: (4, 4) homogeneous matrices <-> ``geometry_msgs/Transform`` (quaternion x, y, z, w).
"""
import math

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from sensor_msgs.msg import JointState


def time_to_ns(t):
    """Simulation time t [s] -> integer nanoseconds (rounded to the nearest ns)."""
    return int(round(float(t) * 1e9))


def ns_to_time_msg(ns):
    """Integer nanoseconds -> ``builtin_interfaces/Time`` (sec, nanosec)."""
    ns = int(ns)
    sec, nanosec = divmod(ns, 1_000_000_000)
    return Time(sec=int(sec), nanosec=int(nanosec))


def time_msg(t):
    """Simulation time t [s] -> ``builtin_interfaces/Time``."""
    return ns_to_time_msg(time_to_ns(t))


def stamp_to_ns(stamp):
    """``builtin_interfaces/Time`` -> integer nanoseconds."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def rotation_to_quaternion(R):
    """(3, 3) rotation matrix -> unit quaternion (x, y, z, w) with w >= 0.

    Shepperd's method: branch on the largest of (trace, R00, R11, R22) so the square root
    is taken of the largest quantity (no loss of precision near 180 degree rotations).
    """
    R = np.asarray(R, dtype=float)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr >= max(R[0, 0], R[1, 1], R[2, 2]):
        s = 2.0 * math.sqrt(max(1.0 + tr, 0.0))
        w = 0.25 * s
        x = (R[2, 1] - R[1, 2]) / s
        y = (R[0, 2] - R[2, 0]) / s
        z = (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * math.sqrt(max(1.0 + R[0, 0] - R[1, 1] - R[2, 2], 0.0))
        w = (R[2, 1] - R[1, 2]) / s
        x = 0.25 * s
        y = (R[0, 1] + R[1, 0]) / s
        z = (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] >= R[2, 2]:
        s = 2.0 * math.sqrt(max(1.0 - R[0, 0] + R[1, 1] - R[2, 2], 0.0))
        w = (R[0, 2] - R[2, 0]) / s
        x = (R[0, 1] + R[1, 0]) / s
        y = 0.25 * s
        z = (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(max(1.0 - R[0, 0] - R[1, 1] + R[2, 2], 0.0))
        w = (R[1, 0] - R[0, 1]) / s
        x = (R[0, 2] + R[2, 0]) / s
        y = (R[1, 2] + R[2, 1]) / s
        z = 0.25 * s
    q = np.array([x, y, z, w])
    q /= np.linalg.norm(q)
    if q[3] < 0:
        q = -q
    return q


def quaternion_to_rotation(q):
    """Quaternion (x, y, z, w) -> (3, 3) rotation matrix."""
    x, y, z, w = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def transform_stamped(parent, child, g, stamp):
    """``geometry_msgs/TransformStamped`` of pose g (4, 4) of ``child`` in ``parent``."""
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = parent
    msg.child_frame_id = child
    tr = msg.transform.translation
    tr.x, tr.y, tr.z = (float(v) for v in g[:3, 3])
    x, y, z, w = rotation_to_quaternion(g[:3, :3])
    rot = msg.transform.rotation
    rot.x, rot.y, rot.z, rot.w = float(x), float(y), float(z), float(w)
    return msg


def transform_to_matrix(transform):
    """``geometry_msgs/Transform`` -> (4, 4) homogeneous matrix."""
    g = np.eye(4)
    r = transform.rotation
    g[:3, :3] = quaternion_to_rotation([r.x, r.y, r.z, r.w])
    t = transform.translation
    g[:3, 3] = (t.x, t.y, t.z)
    return g


def joint_state_msg(state, stamp):
    """``sensor_msgs/JointState`` from a :class:`ros_vi.simulation.SimState`."""
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(state.joint_names) + list(state.mimic_names)
    msg.position = [float(v) for v in state.positions] + [float(v) for v in
                                                          state.mimic_positions]
    msg.velocity = [float(v) for v in state.velocities] + [float(v) for v in
                                                           state.mimic_velocities]
    # mimic joints carry no actuator: effort 0
    msg.effort = [float(v) for v in state.efforts] + [0.0] * len(state.mimic_names)
    return msg
