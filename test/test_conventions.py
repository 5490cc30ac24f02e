"""ros_vi.conventions: ROS time stamps and quaternions without ROS."""
import numpy as np
import pytest

from ros_vi.conventions import (join_ns, matrix_to_pose, pose_to_matrix, quaternion_to_rotation,
                                rotation_to_quaternion, rotations_to_quaternions, split_ns,
                                time_to_ns)


def _axis_angle(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


@pytest.mark.parametrize('axis, angle', [
    ((1, 0, 0), 0.0), ((1, 0, 0), np.pi), ((0, 1, 0), np.pi), ((0, 0, 1), np.pi),
    ((1, 1, 1), np.pi), ((1, -2, 0.5), np.pi - 1e-9), ((0.3, 0.2, -1), 2.0),
    ((1, 0, 0), np.pi / 2), ((0, 0, 1), -0.7)])
def test_quaternion_round_trip_and_sign(axis, angle):
    R = _axis_angle(axis, angle)
    q = rotation_to_quaternion(R)
    assert abs(np.linalg.norm(q) - 1) < 1e-15 and q[3] >= 0
    np.testing.assert_allclose(quaternion_to_rotation(q), R, rtol=0, atol=2e-15)
    # (x, y, z) is sin(angle / 2) times the axis, up to the sign that makes w >= 0
    unit = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    expected = np.append(np.sin(angle / 2) * unit, np.cos(angle / 2))
    expected *= 1 if expected[3] >= 0 else -1
    if abs(expected[3]) > 1e-6:
        np.testing.assert_allclose(q, expected, rtol=0, atol=1e-12)


def test_stacked_quaternions_match_scipy_in_every_branch():
    from scipy.spatial.transform import Rotation
    rots = Rotation.random(500, random_state=3).as_matrix()
    # each of Shepperd's four branches, the identity and half turns about each axis
    special = [_axis_angle(a, np.pi) for a in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0))]
    R = np.concatenate([rots, np.array(special), np.eye(3)[None]])
    q = rotations_to_quaternions(R)
    ref = Rotation.from_matrix(R).as_quat()
    ref[ref[:, 3] < 0] *= -1
    # a half turn (w = 0) has two valid signs
    err = np.minimum(np.abs(q - ref).max(axis=1), np.abs(q + ref).max(axis=1))
    assert err.max() < 1e-14 and np.all(q[:, 3] >= 0)
    np.testing.assert_array_equal(q[7], rotation_to_quaternion(R[7]))


def test_pose_round_trip():
    g = np.eye(4)
    g[:3, :3] = _axis_angle((0.2, -1, 0.4), 1.3)
    g[:3, 3] = (0.1, -2.0, 3.5)
    t, q = matrix_to_pose(g)
    np.testing.assert_array_equal(t, g[:3, 3])
    np.testing.assert_allclose(pose_to_matrix(t, q), g, rtol=0, atol=2e-15)


def test_nanoseconds():
    assert time_to_ns(0.015) == 15_000_000 and time_to_ns(1.0000000004) == 1_000_000_000
    assert split_ns(1_500_000_001) == (1, 500_000_001)
    # ROS writes -1.7 s as sec -2, nanosec 3e8
    assert split_ns(time_to_ns(-1.7)) == (-2, 300_000_000)
    assert join_ns(-2, 300_000_000) == -1_700_000_000
    assert all(join_ns(*split_ns(n)) == n for n in (0, 1, -1, 10**18 + 7))
