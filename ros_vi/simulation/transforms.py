"""Link transforms for tf: each URDF joint's child link pose in its parent link's frame.

tf wants, per URDF joint, the pose of the child link in the parent link (``/tf`` for the
moving joints, ``/tf_static`` for the fixed ones), not world poses.  :class:`LinkTransforms`
finds the (parent, child) frame pairs of an imported robot once, and turns the world poses
of a kinematics pass into those relative poses, all joints at once.

Frame names are the prefixed link names (``robot.link_frame(name).name``).
"""
import numpy as np

from ..mechanics import dynamics

__all__ = ['LinkTransforms']


class LinkTransforms:
    """The tf transforms of one imported robot (``system.urdf``; a system without one has
    none).

    >>> tf = LinkTransforms(system)
    >>> tf.moving(data)        # [(parent frame, child frame, (4, 4) pose of child in parent)]
    """

    def __init__(self, system):
        self.model = system.model
        self.robot = getattr(system, 'urdf', None)
        self._pairs = {True: self._joint_links(True), False: self._joint_links(False)}

    def _joint_links(self, moving):
        """The moving (or fixed) URDF joints' frames: ([(parent frame name, child frame
        name)], parent frame indices (k,), child frame indices (k,)); one per link pair (a
        planar or floating joint's chain of configs gives one transform)."""
        robot = self.robot
        if robot is None:
            return [], np.zeros(0, dtype=int), np.zeros(0, dtype=int)
        names = (robot.joint_names + robot.mimic_joint_names if moving
                 else robot.fixed_joint_names)
        frames, ip, ic = [], [], []
        seen = set()
        for name in names:
            j = robot.joint(name)
            if j.parent is None:
                # the floating base's free joint: its pose is in the world (odom) frame, not
                # a link's (Simulation.floating_base, SimState.bodies)
                continue
            if (j.parent, j.child) in seen:
                continue
            seen.add((j.parent, j.child))
            parent, child = robot.link_frame(j.parent), robot.link_frame(j.child)
            frames.append((parent.name, child.name))
            ip.append(parent.index)
            ic.append(child.index)
        return frames, np.array(ip, dtype=int), np.array(ic, dtype=int)

    def _at(self, moving, data):
        frames, ip, ic = self._pairs[moving]
        if not frames:
            return []
        R, P, _ = dynamics.kinematics(self.model, data)
        # child pose in the parent frame, all joints at once: R_p^T R_c, R_p^T (P_c - P_p)
        g = np.zeros((len(frames), 4, 4))
        g[:, :3, :3] = np.einsum('kji,kjl->kil', R[ip], R[ic])
        g[:, :3, 3] = np.einsum('kji,kj->ki', R[ip], P[ic] - P[ip])
        g[:, 3, 3] = 1.0
        return [(pname, cname, g[k]) for k, (pname, cname) in enumerate(frames)]

    def moving(self, data):
        """``[(parent frame, child frame, (4, 4) pose of child in parent)]`` for every moving
        URDF joint (mimic joints included) at the configuration of ``data``."""
        return self._at(True, data)

    def fixed(self, data):
        """The same for the fixed joints (their poses do not depend on the configuration)."""
        return self._at(False, data)

    def link_names(self):
        """Link frame names (prefixed) for tf, or [] for non-URDF systems."""
        if self.robot is None:
            return []
        return [self.robot.link_frame(n).name for n in self.robot.link_names]
