"""Free bodies in a simulation: their published pose and twist, and their initial state.

A free joint (:class:`~ros_vi.mechanics.free.FreeJoint`: a floating base, a loose object)
has six configs that are *chart coordinates*, not joints: the body origin ``(x, y, z)`` [m]
in the parent frame and three angles from a reference attitude that the integrator moves
before every step.  They are not published as joint states, take no joint command and are
not set by joint names; a free body is given and published as a pose and a twist instead:

* :class:`FreeBodyState` -- the pose (4, 4) of the body in its joint's parent frame (the
  ``odom`` frame of a floating base) and its twist in the body's own axes;
* :class:`FreeBodies` -- a System's free joints by body name: which configs are theirs, the
  initial pose and twist put into a state (the twist through the chart's rate matrix, so
  that ``M(q) v`` gives the momentum consistently), the published states.

Units: m, rad, m/s, rad/s.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import name_list
from ..mechanics.free import body_rate_matrix, xyz_rotation
from .commands import OptionError

__all__ = ['FreeBodyState', 'FreeBodies', 'pose_matrix']


@dataclass
class FreeBodyState:
    """A free body at one instant.

    name: the body frame (for a URDF: the prefixed link name); parent: the frame its pose
    is given in (its free joint's parent: the world frame for a floating base);
    pose (4, 4): the body frame in ``parent`` [m]; linear (3,) [m/s]: the velocity of the
    body origin, angular (3,) [rad/s]: the angular velocity, both in the body's own axes (a
    ROS ``Twist`` in the body frame, as ``nav_msgs/Odometry`` carries it).
    """
    name: str
    parent: str
    pose: np.ndarray
    linear: np.ndarray
    angular: np.ndarray


def pose_matrix(value, what):
    """A pose (4, 4) from ``value``: a (4, 4) matrix or six numbers ``x, y, z`` [m], ``roll,
    pitch, yaw`` [rad] (URDF's fixed-axis rpy: R = Rz(yaw) Ry(pitch) Rx(roll)).
    :class:`OptionError` named ``what`` for anything else."""
    from ..urdf.geometry import origin_matrix
    g = np.array(value, dtype=float)
    if g.shape == (6,):
        if not np.all(np.isfinite(g)):
            raise OptionError(what, 'a pose needs finite numbers, got %s' % g.tolist())
        return origin_matrix(g[:3], g[3:])
    if g.shape != (4, 4) or not np.all(np.isfinite(g)):
        raise OptionError(what, 'a pose is x, y, z, roll, pitch, yaw or a finite 4x4 matrix, '
                          'got shape %s' % (g.shape,))
    return g


class FreeBodies:
    """The free joints of ``system`` (``system.free_joints``) by body name.

    Attributes: ``joints`` (tuple of FreeJoint, creation order), ``names`` (their body
    frame names), ``parents`` (the names of the frames their poses are given in),
    ``config_columns`` (int array: the indices of their configs in
    ``system.configs``).
    """

    def __init__(self, system):
        self.joints = tuple(system.free_joints)
        self.names = [j.body.name for j in self.joints]
        self._by_name = dict(zip(self.names, self.joints))
        self.config_columns = np.array(sorted(c.index for j in self.joints
                                              for c in j.configs), dtype=int)
        self.parents = [j.helper_frames[0].parent.name for j in self.joints]
        self._idx = [np.array([c.index for c in j.configs], dtype=int) for j in self.joints]

    def __len__(self):
        return len(self.joints)

    def joint(self, name, what):
        """The free joint of body ``name``; :class:`OptionError` named ``what`` listing the
        free bodies when there is none."""
        try:
            return self._by_name[name]
        except (KeyError, TypeError):
            raise OptionError(what, 'no free body %r (free bodies: %s)' % (
                name, name_list(self.names, quote=str) if self.names else 'none')) from None

    def set_initial(self, q, v, poses=None, twists=None):
        """Write initial poses and twists into ``q`` and ``v`` (nQ,), in place.

        ``poses`` {body: pose (:func:`pose_matrix`)} in the joint's parent frame: the
        reference attitude becomes the pose's rotation (the System's frame constant is set)
        and the chart angles 0.  ``twists`` {body: (6,) ``(vx, vy, vz, wx, wy, wz)``} in the
        body's axes [m/s, rad/s]: the translation rates ``R v`` and the angle rates
        ``J(angles)^-1 w`` at the (new) configuration.  :class:`OptionError` naming
        ``initial_body_poses`` or ``initial_body_twists``."""
        for name, value in (poses or {}).items():
            joint = self.joint(name, 'initial_body_poses')
            g = pose_matrix(value, 'initial_body_poses')
            ref = np.eye(4)
            ref[:3, :3] = g[:3, :3]
            try:
                joint.reference_frame.transform_value = ref
            except ValueError as err:
                raise OptionError('initial_body_poses', 'body %r: %s' % (name, err)) from None
            idx = self._idx[self.joints.index(joint)]
            q[idx[:3]] = g[:3, 3]
            q[idx[3:]] = 0.0
        for name, value in (twists or {}).items():
            joint = self.joint(name, 'initial_body_twists')
            twist = np.array(value, dtype=float).reshape(-1)
            if twist.shape != (6,) or not np.all(np.isfinite(twist)):
                raise OptionError('initial_body_twists', 'body %r: a twist is six finite '
                                  'numbers vx, vy, vz, wx, wy, wz, got %s'
                                  % (name, np.asarray(value).tolist()))
            idx = self._idx[self.joints.index(joint)]
            angles = np.ascontiguousarray(q[idx[3:]], dtype=float)
            R = joint.reference_attitude @ xyz_rotation(angles)
            v[idx[:3]] = R @ twist[:3]
            v[idx[3:]] = np.linalg.solve(body_rate_matrix(angles), twist[3:])

    def states(self, q, v):
        """[:class:`FreeBodyState`] at configuration ``q`` and velocity ``v`` (nQ,) of the
        System (in the current charts), creation order."""
        return [FreeBodyState(name, parent, joint.pose_at(q), *joint.body_twist(q, v))
                for name, parent, joint in zip(self.names, self.parents, self.joints)]
