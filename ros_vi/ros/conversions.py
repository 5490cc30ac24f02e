"""Conversions between ros_vi's numpy state and ROS messages (no node logic here).

Times: simulation time t [s] <-> integer nanoseconds <-> ``builtin_interfaces/Time``.
Poses: (4, 4) homogeneous matrices <-> ``geometry_msgs/Transform`` (quaternion x, y, z, w).
The arithmetic is in :mod:`ros_vi.conventions` (no ROS import), shared with the recordings.
"""
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from sensor_msgs.msg import JointState

# the ROS-free halves (also used by the recordings); time_to_ns and the quaternion
# conversions are part of this module's interface too
from ..conventions import (join_ns, matrix_to_pose, pose_to_matrix,  # noqa: F401
                           quaternion_to_rotation, rotation_to_quaternion, split_ns, time_to_ns)


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


def transform_to_matrix(transform):
    """``geometry_msgs/Transform`` -> (4, 4) homogeneous matrix."""
    t, r = transform.translation, transform.rotation
    return pose_to_matrix((t.x, t.y, t.z), (r.x, r.y, r.z, r.w))


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
