"""ROS conventions for times and poses, with no ROS import.

Shared by the ROS adapter (``ros_vi/ros/conversions.py``, which builds the messages) and the
recordings (``ros_vi/recording/mcap.py``, which serialises plain dicts), so a bag and the live
topics carry the same numbers.

Times: simulation time t [s] <-> integer nanoseconds <-> (sec, nanosec) as in
``builtin_interfaces/Time`` (nanosec in [0, 1e9)).
Rotations: (3, 3) rotation matrices <-> unit quaternions (x, y, z, w), ROS's order; poses:
(4, 4) homogeneous matrices <-> (translation, quaternion) as in ``geometry_msgs/Transform``.
Colours: a contact's by its mode (:data:`CONTACT_RGBA`), the same in rviz's markers and the
browser view.
"""
import math

import numpy as np

__all__ = ['time_to_ns', 'split_ns', 'join_ns', 'rotation_to_quaternion',
           'rotations_to_quaternions',
           'quaternion_to_rotation', 'matrix_to_pose', 'pose_to_matrix', 'CONTACT_RGBA']

#: RGBA of a touching contact by its mode: sticking green, sliding orange
CONTACT_RGBA = {'stick': (0.1, 0.8, 0.2, 1.0), 'slide': (1.0, 0.55, 0.0, 1.0)}


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
    """(3, 3) rotation matrix -> unit quaternion (x, y, z, w) with w >= 0
    (:func:`rotations_to_quaternions` of one matrix)."""
    return rotations_to_quaternions(np.asarray(R, dtype=float)[None])[0]


def rotations_to_quaternions(R):
    """Stacked rotation matrices (k, 3, 3) -> unit quaternions (k, 4) as (x, y, z, w),
    each with w >= 0.

    Shepperd's method: per matrix, branch on the largest of (trace, R00, R11, R22) so the
    square root is taken of the largest quantity (no loss of precision near 180 degree
    rotations).  The arithmetic runs on Python floats: for the handful of matrices of a
    robot's transforms that is several times faster than NumPy's per-call overhead.
    """
    out = []
    for (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) in \
            np.asarray(R, dtype=float).tolist():
        tr = r00 + r11 + r22
        if tr >= r00 and tr >= r11 and tr >= r22:
            s = 2.0 * math.sqrt(max(1.0 + tr, 0.0))
            q = ((r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s, 0.25 * s)
        elif r00 >= r11 and r00 >= r22:
            s = 2.0 * math.sqrt(max(1.0 + r00 - r11 - r22, 0.0))
            q = (0.25 * s, (r01 + r10) / s, (r02 + r20) / s, (r21 - r12) / s)
        elif r11 >= r22:
            s = 2.0 * math.sqrt(max(1.0 - r00 + r11 - r22, 0.0))
            q = ((r01 + r10) / s, 0.25 * s, (r12 + r21) / s, (r02 - r20) / s)
        else:
            s = 2.0 * math.sqrt(max(1.0 - r00 - r11 + r22, 0.0))
            q = ((r02 + r20) / s, (r12 + r21) / s, 0.25 * s, (r10 - r01) / s)
        norm = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
        if q[3] < 0:
            norm = -norm
        out.append((q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm))
    return np.array(out, dtype=float).reshape(-1, 4)


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
