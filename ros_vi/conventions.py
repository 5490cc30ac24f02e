"""ROS conventions for times and poses, with no ROS import.

Shared by the ROS adapter (``ros_vi/ros/conversions.py``, which builds the messages) and the
recordings (``ros_vi/recording/mcap.py``, which serialises plain dicts), so a bag and the live
topics carry the same numbers.

Times: simulation time t [s] <-> integer nanoseconds <-> (sec, nanosec) as in
``builtin_interfaces/Time`` (nanosec in [0, 1e9)).
Rotations: (3, 3) rotation matrices <-> unit quaternions (x, y, z, w), ROS's order; poses:
(4, 4) homogeneous matrices <-> (translation, quaternion) as in ``geometry_msgs/Transform``.
"""
import math

import numpy as np

__all__ = ['time_to_ns', 'split_ns', 'join_ns', 'rotation_to_quaternion',
           'quaternion_to_rotation', 'matrix_to_pose', 'pose_to_matrix']


def time_to_ns(t):
    """Simulation time t [s] -> integer nanoseconds (rounded to the nearest ns)."""
    return int(round(float(t) * 1e9))


def split_ns(ns):
    """Integer nanoseconds -> (sec, nanosec) with 0 <= nanosec < 1e9 (floor division, so a
    negative time has a negative sec and a positive nanosec, as ROS writes it)."""
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return int(sec), int(nanosec)


def join_ns(sec, nanosec):
    """(sec, nanosec) -> integer nanoseconds."""
    return int(sec) * 1_000_000_000 + int(nanosec)


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


def matrix_to_pose(g):
    """(4, 4) homogeneous pose -> (translation (3,) [m], quaternion (x, y, z, w))."""
    g = np.asarray(g, dtype=float)
    return g[:3, 3].copy(), rotation_to_quaternion(g[:3, :3])


def pose_to_matrix(translation, quaternion):
    """(translation (3,) [m], quaternion (x, y, z, w)) -> (4, 4) homogeneous pose."""
    g = np.eye(4)
    g[:3, :3] = quaternion_to_rotation(quaternion)
    g[:3, 3] = translation
    return g
