"""Marionettes: a humanoid puppet hung from strings (trep's ``trep.puppets``).

The model is the marionette of the trep papers (Johnson and Murphey, "Scalable variational
integrators for constrained mechanical systems in generalized coordinates", T-RO 2009, and
the later marionette papers): a pelvis with six free degrees of freedom, two legs and two
arms with ball joints at hips and shoulders and hinges at knees and elbows, a head on the
spine, all hanging under gravity from strings whose tops move in a horizontal plane.

Build it with :class:`Puppet`::

    import ros_vi as trep
    puppet = trep.puppets.Puppet(string_constraints=True)
    puppet.q = {'torso_rx': 0.1}
    puppet.project_string_controls()          # strings vertical, lengths consistent
    mvi = trep.MidpointVI(puppet)

Units: lengths [m], masses [kg], rotational inertias [kg m^2], angles [rad], damping
[N s/m or N m s/rad], gravity 9.8 m/s^2 along -z.

Names (scripts refer to them, so they are trep's):

- configs of the skeleton: ``torso_tx ty tz rz ry rx``, ``lhip_rz ry rx``, ``lknee_rx``,
  ``rhip_*``, ``rknee_rx``, ``lshoulder_rz ry rx``, ``lelbow_rx``, ``rshoulder_*``,
  ``relbow_rx`` (22 dynamic configs with :data:`DEFAULT_JOINTS`); feet, hands and neck are
  fixed unless ``joints`` names configs for them;
- frames: ``pelvis``, ``spine_top``, ``neck``, ``neck_joint``, ``head``, ``head_center``,
  ``head_end``, and per side ``s`` in ``l``/``r``: ``ship``, ``sfemur``, ``sfemur_mass``,
  ``sfemur_end``, ``stibia``, ``stibia_mass``, ``stibia_end``, ``sfoot``, ``sfoot_end``,
  ``sshoulder``, ``shumerus``, ``shumerus_mass``, ``shumerus_end``, ``sradius``,
  ``sradius_mass``, ``sradius_end``, ``shand``, ``shand_end``; ``string_plane``; per string
  ``<string>_hook`` (on the puppet) and, with string constraints, ``<string>_control``;
- per string ``<string>``: with ``string_constraints`` the kinematic configs
  ``<string>-x``, ``<string>-y`` (the control point in the string plane) and
  ``<string>-length``, and a :class:`~ros_vi.constraints.Distance` constraint named
  ``<string>``; with ``string_forces`` a :class:`~ros_vi.forces.HybridWrench` named
  ``<string>`` with inputs ``<string>-x``, ``-y``, ``-z`` [N]; with ``joint_forces`` a
  :class:`~ros_vi.forces.ConfigForce` per dynamic config, force and input both named after
  the config [N or N m].

The default strings are ``upper_torso_string``, ``lower_torso_string``,
``left_arm_string``, ``right_arm_string``, ``left_leg_string`` and ``right_leg_string``
(in that order, which sets the order of their configs and constraints).

Differences from trep:

- ``PuppetVisual`` (trep drew it with OpenGL) is drawn by ros_vi's players: in the browser
  or into a GIF/MP4 (:mod:`ros_vi.visual.items`, :mod:`ros_vi.visual.puppet_visual`);
- trep drives the neck's x rotation with ``joints['neck_rz']`` (a slip: both default to the
  fixed value 0, so the default puppet is the same); here ``joints['neck_rx']`` drives it;
- trep takes strings in Python 2 dict order; here they follow the ``strings`` dict's order.
"""
import copy

from .mechanics import System, const_txyz, rx, ry, rz, tx, ty, tz
from .mechanics import constraints as _constraints
from .mechanics import forces as _forces
from .mechanics import potentials as _potentials

# Dimensions of the default puppet (trep's values, which come from motion-capture data).
# Lengths in m; mass entries are [M kg, Ixx, Iyy, Izz kg m^2] about the
# named frame's axes.
DEFAULT_DIMENSIONS = {
    # legs: hip centre -> knee axis (femur), knee axis -> ankle axis (tibia), foot length
    'lfemur_length': 0.4000000143639284,
    'rfemur_length': 0.4000000149386187,
    'ltibia_length': 0.4000000081268073,
    'rtibia_length': 0.40000001048670952,
    'lfoot_length': 0.20298699715253277,
    'rfoot_length': 0.20000000361419676,
    # pelvis centre -> hip joint centre, sideways
    'lhip_width': 0.10000000633343277,
    'rhip_width': 0.10000000072551045,
    # pelvis centre -> shoulder centre, up
    'upper_torso_length': 0.49134332092915983,
    # shoulder centre -> shoulder joint, sideways
    'lshoulder_width': 0.15811387592769632,
    'rshoulder_width': 0.15811388178161004,
    # arms: shoulder joint -> elbow axis (humerus), elbow axis -> wrist axis (radius), hand
    'lhumerus_length': 0.24999999610023391,
    'rhumerus_length': 0.2500000129383001,
    'lradius_length': 0.25765900905806788,
    'rradius_length': 0.25765900577819512,
    'lhand_length': 0.090000006491074078,
    'rhand_length': 0.089999998759819969,
    # head: shoulder centre -> neck joint, neck joint -> base of head, base -> centre of
    # mass, centre of mass -> top
    'neck_length': 0.04500002226970809,
    'lower_head_length': 0.044999991144167348,
    'upper_head_length': 0.090000011865579349,
    'final_head_length': 0.079999981957211988,
    # [M, Ixx, Iyy, Izz] of each body
    'pelvis_mass': [10, 1, 1, 1],
    'head_mass': [0.75, 0.08, 0.08, 0.08],
    'femur_mass': [1.5, 0.3, 0.3, 0.1],
    'tibia_mass': [1.5, 0.3, 0.3, 0.1],
    'humerus_mass': [0.5, 0.05, 0.05, 0.01],
    'radius_mass': [0.5, 0.05, 0.05, 0.01],
    # viscous damping on every dynamic config
    'damping': 0.2,
    # height of the plane the string tops move in [m]
    'string_plane_height': 2,
    # string name -> (frame it is tied to, (x, y, z) offset of the knot in that frame [m])
    'strings': {
        'upper_torso_string': ('spine_top', (-0.1, 0, 0)),
        'lower_torso_string': ('spine_top', (0.1, 0, 0)),
        'left_arm_string': ('lradius_end', (0, 0.1, 0)),
        'right_arm_string': ('rradius_end', (0, 0.1, 0)),
        'left_leg_string': ('lfemur_end', (0, 0.1, 0)),
        'right_leg_string': ('rfemur_end', (0, 0.1, 0)),
    },
}


def _ball(prefix):
    return {prefix + '_rz': prefix + '_rz', prefix + '_ry': prefix + '_ry',
            prefix + '_rx': prefix + '_rx'}


def _fixed_ball(prefix):
    return {prefix + '_rz': 0.0, prefix + '_ry': 0.0, prefix + '_rx': 0.0}


# Joint parameters: a string is the name of the config that moves the joint, a number a
# fixed value [m or rad].  Feet, hands and neck are fixed by default.
DEFAULT_JOINTS = {
    'torso_tx': 'torso_tx', 'torso_ty': 'torso_ty', 'torso_tz': 'torso_tz',
    **_ball('torso'),
    **_ball('lhip'), 'lknee_rx': 'lknee_rx', **_fixed_ball('lfoot'),
    **_ball('rhip'), 'rknee_rx': 'rknee_rx', **_fixed_ball('rfoot'),
    **_fixed_ball('neck'),
    **_ball('lshoulder'), 'lelbow_rx': 'lelbow_rx', **_fixed_ball('lhand'),
    **_ball('rshoulder'), 'relbow_rx': 'relbow_rx', **_fixed_ball('rhand'),
}


def fill_dimensions(dimensions=None):
    """A copy of ``dimensions`` completed with :data:`DEFAULT_DIMENSIONS` for missing keys."""
    filled = copy.deepcopy(DEFAULT_DIMENSIONS)
    filled.update(dimensions or {})
    return filled


def fill_joints(joints=None):
    """A copy of ``joints`` completed with :data:`DEFAULT_JOINTS` for missing keys."""
    filled = dict(DEFAULT_JOINTS)
    filled.update(joints or {})
    return filled


def _rotations(joints, joint, name, children):
    """The z-y-x rotation chain of a ball joint; the last (x) frame is called ``name``."""
    return [rz(joints[joint + '_rz']), [
        ry(joints[joint + '_ry']), [
            rx(joints[joint + '_rx'], name=name), children]]]


def _limb(dim, joints, side, root, root_offset, upper, lower, hinge_joint, end, end_tip):
    """Frame definitions of one arm or leg.

    ``root``: the frame at the shoulder/hip joint centre, ``root_offset`` [m] along the
    parent's x axis; a ball joint ``root`` -> segment ``upper`` (mass at its middle) ->
    hinge ``hinge_joint`` (x axis) -> segment ``lower`` -> ball joint ``end`` whose x frame
    is the hand/foot frame ``end``, carrying its tip ``end_tip`` (a frame definition).
    ``side`` ('l' or 'r') prefixes every name.
    """
    s = side
    upper_len = dim[s + upper + '_length']
    lower_len = dim[s + lower + '_length']
    return [tx(root_offset, name=s + root), _rotations(joints, s + root, s + upper, [
        tz(-upper_len / 2, name=s + upper + '_mass', mass=dim[upper + '_mass']),
        tz(-upper_len, name=s + upper + '_end'), [
            rx(joints[s + hinge_joint + '_rx'], name=s + lower), [
                tz(-lower_len / 2, name=s + lower + '_mass', mass=dim[lower + '_mass']),
                tz(-lower_len, name=s + lower + '_end'),
                _rotations(joints, s + end, s + end, [end_tip])]]])]


def make_skeleton(dimensions=None, joints=None):
    """Frame definitions (for :meth:`System.import_frames`) of the puppet's body.

    ``dimensions`` and ``joints`` are completed with :data:`DEFAULT_DIMENSIONS` and
    :data:`DEFAULT_JOINTS`.  The pelvis hangs from the world through ``torso_tx``,
    ``torso_ty``, ``torso_tz`` then ``torso_rz``, ``torso_ry``, ``torso_rx``; z is up.
    """
    dim = fill_dimensions(dimensions)
    j = fill_joints(joints)

    def leg(side, sign):
        return _limb(dim, j, side, 'hip', sign * dim[side + 'hip_width'], 'femur', 'tibia',
                     'knee', 'foot',
                     ty(dim[side + 'foot_length'], name=side + 'foot_end'))

    def arm(side, sign):
        return _limb(dim, j, side, 'shoulder', sign * dim[side + 'shoulder_width'],
                     'humerus', 'radius', 'elbow', 'hand',
                     tz(-dim[side + 'hand_length'], name=side + 'hand_end'))

    head = [tz(dim['neck_length'], name='neck'), _rotations(j, 'neck', 'neck_joint', [
        tz(dim['lower_head_length'], name='head'), [
            tz(dim['upper_head_length'], name='head_center', mass=dim['head_mass']), [
                tz(dim['final_head_length'], name='head_end')]]])]
    upper_body = [tz(dim['upper_torso_length'], name='spine_top'),
                  head + arm('l', -1) + arm('r', +1)]
    pelvis = [rx(j['torso_rx'], name='pelvis', mass=dim['pelvis_mass']),
              leg('l', -1) + leg('r', +1) + upper_body]
    return [tx(j['torso_tx']), [ty(j['torso_ty']), [tz(j['torso_tz']), [
        rz(j['torso_rz']), [ry(j['torso_ry']), pelvis]]]]]


class Puppet(System):
    """A marionette (a :class:`ros_vi.System`): the skeleton of :func:`make_skeleton`,
    gravity (0, 0, -9.8) m/s^2, viscous damping ``dimensions['damping']`` on every dynamic
    config, the string plane and one hook frame per string.

    Parameters
    ----------
    dimensions : dict, optional
        Overrides of :data:`DEFAULT_DIMENSIONS` (lengths, masses, damping, string plane
        height, ``strings``: name -> (frame name, (x, y, z) offset [m])).
    joints : dict, optional
        Overrides of :data:`DEFAULT_JOINTS`: a config name or a fixed value per joint.
    joint_forces : bool
        Add a :class:`ConfigForce` on every dynamic config (input named like the config).
    string_forces : bool
        Pull each hook with a :class:`HybridWrench` whose (fx, fy, fz) [N] are the inputs
        ``<string>-x``, ``-y``, ``-z``.
    string_constraints : bool
        Hang each hook from a control point in the string plane moved by the kinematic
        configs ``<string>-x``, ``-y`` [m], at the kinematic distance ``<string>-length``
        [m] (a :class:`Distance` constraint named ``<string>``).

    Attributes
    ----------
    dimensions, joints : dict
        The completed parameters.
    string_plane : Frame
        The frame ``string_plane``, ``string_plane_height`` above the world origin.
    string_hooks : dict
        String name -> name of its hook frame on the puppet.
    joint_forces : dict
        Config name -> :class:`ConfigForce` (empty unless ``joint_forces``).
    string_forces : dict
        String name -> dict with keys ``name``, ``x``, ``y``, ``z`` (input names) and
        ``hook`` (frame name) (empty unless ``string_forces``).
    string_constraints : dict
        String name -> dict with keys ``name`` (constraint), ``x``, ``y``, ``length``
        (kinematic config names), ``control_hook`` and ``hook`` (frame names) (empty unless
        ``string_constraints``).

    Drawn by :class:`PuppetVisual` (``ros_vi.visual.puppet_visual``).
    """

    def __init__(self, dimensions={}, joints={}, joint_forces=False, string_forces=False,
                 string_constraints=False):
        System.__init__(self)
        self.string_plane = None
        self.string_hooks = {}
        self.joint_forces = {}
        self.string_forces = {}
        self.string_constraints = {}
        self.dimensions = fill_dimensions(dimensions)
        self.joints = fill_joints(joints)

        self.import_frames(make_skeleton(self.dimensions, self.joints))
        self.make_string_frames()
        if joint_forces:
            self.make_joint_forces()
        if string_forces:
            self.make_string_forces()
        if string_constraints:
            self.make_string_constraints()
        _potentials.Gravity(self, (0, 0, -9.8))
        _forces.Damping(self, self.dimensions['damping'])

    # ------------------------------------------------------------------ construction
    def make_string_frames(self):
        """Add the frame ``string_plane`` and a hook frame ``<string>_hook`` per string,
        fixed to its frame at its offset (called by the constructor)."""
        self.world_frame.import_frames([
            tz(self.dimensions['string_plane_height'], name='string_plane')])
        self.string_plane = self.get_frame('string_plane')
        self.string_hooks = {}
        for string, (frame, offset) in self.dimensions['strings'].items():
            hook = string + '_hook'
            self.get_frame(frame).import_frames([const_txyz(offset, name=hook)])
            self.string_hooks[string] = hook

    def make_joint_forces(self):
        """A :class:`ConfigForce` on every dynamic config; force and input take the config's
        name."""
        for config in self.dyn_configs:
            self.joint_forces[config.name] = _forces.ConfigForce(
                self, config, config.name, config.name)

    def make_string_forces(self):
        """A :class:`HybridWrench` on every hook: world-aligned force (``<string>-x``,
        ``-y``, ``-z``) [N] at the hook, no torque."""
        for string, hook in self.string_hooks.items():
            info = {'name': string, 'x': string + '-x', 'y': string + '-y',
                    'z': string + '-z', 'hook': hook}
            _forces.HybridWrench(self, hook, (info['x'], info['y'], info['z'], 0, 0, 0),
                                 name=string)
            self.string_forces[string] = info

    def make_string_constraints(self):
        """For every string: a control point ``<string>_control`` in the string plane moved
        by kinematic translations ``<string>-x`` then ``<string>-y``, and a
        :class:`Distance` constraint ``<string>`` between it and the hook, of kinematic
        length ``<string>-length``."""
        for string, hook in self.string_hooks.items():
            info = {'name': string, 'x': string + '-x', 'y': string + '-y',
                    'length': string + '-length', 'control_hook': string + '_control',
                    'hook': hook}
            self.string_plane.import_frames([
                tx(info['x'], kinematic=True), [
                    ty(info['y'], kinematic=True, name=info['control_hook'])]])
            _constraints.Distance(self, hook, info['control_hook'], info['length'],
                                  name=string)
            self.string_constraints[string] = info

    # ------------------------------------------------------------------ string set-up
    def _string_infos(self, strings):
        if strings is None:
            return list(self.string_constraints.values())
        return [self.string_constraints[name] for name in strings]

    def project_string_controls(self, strings=None):
        """Put each string's control point straight above its hook (control x, y = hook's
        world x, y) in the current configuration, then set the string lengths with
        :meth:`correct_string_lengths`.

        ``strings``: names of the strings to move; all of them by default.  Requires
        ``string_constraints``.
        """
        for info in self._string_infos(strings):
            x, y = self.get_frame(info['hook']).p()[:2]
            self.get_config(info['x']).q = x
            self.get_config(info['y']).q = y
        self.correct_string_lengths(strings)

    def correct_string_lengths(self, strings=None):
        """Set each ``<string>-length`` to the current hook-to-control distance [m], so the
        string constraints hold (h = 0).  ``strings`` as in
        :meth:`project_string_controls`."""
        for info in self._string_infos(strings):
            distance = self.get_constraint(info['name']).get_actual_distance()
            self.get_config(info['length']).q = distance


def __getattr__(name):
    # the drawing of a puppet (ros_vi.visual: Pillow, the URDF shapes) is loaded when asked
    # for, so that importing ros_vi stays light
    if name == 'PuppetVisual':
        from .visual.puppet_visual import PuppetVisual
        return PuppetVisual
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


__all__ = ['DEFAULT_DIMENSIONS', 'DEFAULT_JOINTS', 'fill_dimensions', 'fill_joints',
           'make_skeleton', 'Puppet', 'PuppetVisual']
