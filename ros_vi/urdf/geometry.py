"""URDF geometry: fixed-axis roll-pitch-yaw, ``<origin>`` transforms, axis alignment."""
import math

import numpy as np

__all__ = ['rpy_matrix', 'origin_matrix', 'axis_alignment', 'is_identity']


def rpy_matrix(rpy):
    """URDF fixed-axis roll-pitch-yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``, (3, 3)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr = math.cos(r), math.sin(r)
    cp, sp = math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def origin_matrix(xyz, rpy):
    """(4, 4) transform of a URDF ``<origin xyz rpy>``."""
    g = np.eye(4)
    g[:3, :3] = rpy_matrix(rpy)
    g[:3, 3] = np.asarray(xyz, dtype=float)
    return g


def axis_alignment(axis):
    """Rotation A (3, 3) with ``A @ [0, 0, 1] = axis / |axis|`` (a rotation about z x axis)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    v = np.array([-a[1], a[0], 0.0])        # z x a
    s2 = float(v @ v)
    c = float(a[2])
    if s2 < 1e-30:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    K = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return np.eye(3) + K + K @ K * ((1.0 - c) / s2)


def is_identity(g):
    return bool(np.array_equal(g, np.eye(4)))

