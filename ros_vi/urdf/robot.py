"""The robot description object: what the importer knows about one imported robot."""
import numpy as np

from ..mechanics import dynamics
from .ros2_control import joint_controls

__all__ = ['URDFRobot']


class URDFRobot:
    """What the importer knows about one imported robot (``system.urdf``).

    Access follows one rule: facts of the description that take no argument are read-only
    properties (``robot.joint_names``, ``robot.effort_limits``, ``robot.root_link``); lookups
    by name are methods (``robot.joint('elbow')``, ``robot.link_frame('base')``), and so are
    evaluations at the system's current state (``robot.link_poses()``,
    ``robot.link_body_velocities()``).

    All per-joint arrays are in **config order** (the order of the robot's configs in
    ``system.configs``), which is the order of :attr:`joint_names`.  Array properties return
    a new array on each access.
    """

    def __init__(self, system, name, prefix, root_link, joints, link_frames, forces,
                 ros2_control=()):
        self._system = system
        self._name = name
        self._prefix = prefix
        self._root_link = root_link
        self._joints = {j.name: j for j in joints}
        self._joint_list = joints
        self._link_frames = link_frames      # link name -> Frame (file order)
        self._forces = forces                # 'damping', 'friction', 'limits', 'gravity', 'mimic'
        self._ros2_control = tuple(ros2_control)
        self._warnings = ()
        self._description = None
        self._base_dir = None

    def _set_warnings(self, quirks):
        self._warnings = tuple(quirks)

    def _set_source(self, description, base_dir):
        self._description = description
        self._base_dir = None if base_dir is None else str(base_dir)

    def __repr__(self):
        return '<URDFRobot %r prefix=%r: %d links, %d moving joints, %d mimic>' % (
            self._name, self._prefix, len(self._link_frames), len(self._moving()),
            len(self._mimic_joints()))

    # identity ----------------------------------------------------------------
    @property
    def system(self):
        """The :class:`System` the robot was imported into."""
        return self._system

    @property
    def name(self):
        """``<robot name>`` (None if absent)."""
        return self._name

    @property
    def prefix(self):
        """The import prefix of frame, config and input names ('' for none)."""
        return self._prefix

    @property
    def root_link(self):
        """URDF name of the root link."""
        return self._root_link

    @property
    def description(self):
        """The URDF XML the robot was imported from (str or bytes, as given to the importer;
        a ``.xacro`` file's processed text); None for a robot built from a parsed description
        directly.  Read again by what needs more than the dynamics: the collision geometry
        (:mod:`ros_vi.collision`), the shapes to draw (:func:`~ros_vi.urdf.link_geometry`)."""
        return self._description

    @property
    def base_dir(self):
        """Folder against which relative mesh paths of :attr:`description` are taken: the
        URDF file's folder for :func:`~ros_vi.urdf.import_urdf_file`, the ``base_dir`` given
        to :func:`~ros_vi.urdf.import_urdf` (None: the current directory)."""
        return self._base_dir

    @property
    def warnings(self):
        """The quirks the import tolerated (tuple of :class:`~ros_vi.urdf.Quirk`: ``element``,
        ``name``, ``problem``, ``action``; ``str()`` reads as a sentence); empty for a clean
        description.  See docs/urdf-import.md."""
        return self._warnings

    @property
    def forces(self):
        """``{'gravity', 'damping', 'friction', 'limits': force or potential,
        'mimic': [constraints]}`` (only the keys the import created)."""
        return dict(self._forces)

    @property
    def mimic_constraints(self):
        """The :class:`constraints.Mimic` of the mimic joints (list; empty unless imported
        with ``mimic='constraint'``)."""
        return list(self._forces.get('mimic', []))

    @property
    def mimic_joint_names(self):
        """URDF names of the reduced mimic joints (``mimic='reduce'``, the default): joints
        with no config whose motion follows a leader (file order)."""
        return [j.name for j in self._mimic_joints()]

    def _mimic_joints(self):
        return [j for j in self._joint_list if j.moving and j.config is None]

    # joints ----------------------------------------------------------------
    def _moving(self):
        js = [j for j in self._joint_list if j.config is not None]
        return sorted(js, key=lambda j: j.config.index)

    def _actuated(self):
        js = [j for j in self._joint_list if j.input is not None]
        return sorted(js, key=lambda j: j.input.index)

    def joint(self, name):
        """:class:`JointInfo` of a joint (URDF name, without prefix)."""
        try:
            return self._joints[name]
        except KeyError:
            raise KeyError('robot %r has no joint %r' % (self._name, name)) from None

    @property
    def joint_names(self):
        """URDF names of the moving joints in config order (list of str)."""
        return [j.name for j in self._moving()]

    @property
    def config_names(self):
        """Config names (prefixed joint names) in config order."""
        return [j.config.name for j in self._moving()]

    @property
    def config_indices(self):
        """Indices of the robot's configs in ``system.configs`` (int array, config order)."""
        return np.array([j.config.index for j in self._moving()], dtype=int)

    @property
    def fixed_joint_names(self):
        """URDF names of the fixed joints (file order)."""
        return [j.name for j in self._joint_list if not j.moving]

    @property
    def position_limits(self):
        """``(lower, upper)`` arrays [rad or m] in config order (``-inf``/``inf`` if none)."""
        js = self._moving()
        return (np.array([j.lower for j in js]), np.array([j.upper for j in js]))

    @property
    def effort_limits(self):
        """``<limit effort>`` per joint in config order [N m or N] (``inf`` if none)."""
        return np.array([j.effort for j in self._moving()])

    @property
    def velocity_limits(self):
        """``<limit velocity>`` per joint in config order [rad/s or m/s] (``inf`` if none)."""
        return np.array([j.velocity for j in self._moving()])

    @property
    def acceleration_limits(self):
        """URDF 1.2 ``<limit acceleration>`` per joint in config order [rad/s^2 or m/s^2]
        (``inf`` if none)."""
        return np.array([j.acceleration for j in self._moving()])

    @property
    def jerk_limits(self):
        """URDF 1.2 ``<limit jerk>`` per joint in config order [rad/s^3 or m/s^3] (``inf``
        if none)."""
        return np.array([j.jerk for j in self._moving()])

    @property
    def damping_coefficients(self):
        """``<dynamics damping>`` per joint in config order [N m s/rad or N s/m]."""
        return np.array([j.damping for j in self._moving()])

    @property
    def friction_coefficients(self):
        """``<dynamics friction>`` per joint in config order [N m or N]."""
        return np.array([j.friction for j in self._moving()])

    # actuation inputs --------------------------------------------------------
    @property
    def input_names(self):
        """Names of the actuation inputs (in ``system.inputs`` order)."""
        return [j.input.name for j in self._actuated()]

    @property
    def input_joint_names(self):
        """URDF joint of each actuation input (same order as :attr:`input_names`)."""
        return [j.name for j in self._actuated()]

    @property
    def input_indices(self):
        """Indices of the actuation inputs in ``system.inputs`` (int array)."""
        return np.array([j.input.index for j in self._actuated()], dtype=int)

    @property
    def input_effort_limits(self):
        """Effort limit of each actuation input [N m or N] (same order as input_names)."""
        return np.array([j.effort for j in self._actuated()])

    # ros2_control --------------------------------------------------------------
    @property
    def ros2_control(self):
        """The ``<ros2_control>`` blocks of the description as written (tuple of
        :class:`~ros_vi.urdf.Ros2ControlBlock`, file order; empty when there is none).
        Joint names in them are URDF names (no prefix)."""
        return self._ros2_control

    @property
    def joint_controls(self):
        """``{joint: JointControl}`` for the joints with a config that a ``<ros2_control>``
        block lists, in config order: the simulated command interfaces each declares
        (position, velocity, effort), their declared bounds and the initial position and
        velocity from the state interfaces' ``initial_value`` (clipped to the URDF limits).
        Mimic joints are left out (they follow their leader), and so are the parts of planar
        and floating joints (ros2_control names one value per joint).  Empty without a
        block.  See :func:`ros_vi.urdf.ros2_control.joint_controls`."""
        if not self._ros2_control:
            return {}
        # parts of planar/floating joints carry the URDF joint's name as urdf_joint
        single = [j for j in self._moving()
                  if j.mimic is None and getattr(j, 'urdf_joint', None) is None]
        return joint_controls(self._ros2_control, single)

    # links -----------------------------------------------------------------
    @property
    def link_names(self):
        """URDF link names (file order)."""
        return list(self._link_frames)

    def link_frame(self, link):
        """The :class:`Frame` of a link (URDF name, without prefix)."""
        try:
            return self._link_frames[link]
        except KeyError:
            raise KeyError('robot %r has no link %r' % (self._name, link)) from None

    def link_pose(self, link):
        """(4, 4) world pose of a link frame at the system's current q."""
        return self.link_frame(link).g()

    def link_poses(self):
        """``{link: (4, 4) world pose}`` for every link, from one kinematics evaluation."""
        R, P, _ = dynamics.kinematics(self._system.model, self._system.data)
        out = {}
        for name, frame in self._link_frames.items():
            g = np.eye(4)
            i = frame.index
            g[:3, :3] = R[i]
            g[:3, 3] = P[i]
            out[name] = g
        return out

    def link_body_velocity(self, link):
        """Body velocity of a link at the current (q, dq): ``(v (3,), w (3,))``.

        ``v`` [m/s] is the velocity of the link origin and ``w`` [rad/s] its angular velocity,
        both in the link's own axes (a ROS ``Twist`` in the link frame).
        """
        frame = self.link_frame(link)
        model, data = self._system.model, self._system.data
        R, P, S = dynamics.kinematics(model, data)
        i = frame.index
        _, dtheta = model.joint_positions(data.q, data.dq)
        cs = np.nonzero(model.frame_anc[i])[0]
        tw = S[cs].T @ dtheta[cs] if cs.size else np.zeros(6)   # world twist (w, v at 0)
        w_world = tw[:3]
        v_world = tw[3:] + np.cross(w_world, P[i])
        return R[i].T @ v_world, R[i].T @ w_world

    def link_body_velocities(self):
        """``{link: (v, w)}`` for every link (see :meth:`link_body_velocity`)."""
        return {name: self.link_body_velocity(name) for name in self._link_frames}
