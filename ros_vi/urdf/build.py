"""Build step: a validated :class:`Description` becomes frames, configs, forces and
constraints of a :class:`System`, with a :class:`URDFRobot` describing the result.

Geometry (exact URDF semantics)
-------------------------------
The frame model only has rotations about / translations along a parent axis and constant
SE(3) transforms.  A joint with origin ``T_o`` (xyz + fixed-axis rpy, ``R = Rz(yaw) Ry(pitch)
Rx(roll)``) and unit axis ``a`` (the URDF axis normalised; default x) becomes:

* axis exactly +x, +y or +z:  ``const_se3(T_o)`` -> ``rx|ry|rz|tx|ty|tz(q)`` (= child link)
  (the constant frame is omitted when ``T_o`` is the identity);
* any other axis (negative, oblique):  ``const_se3(T_o A)`` -> ``rz|tz(q)`` ->
  ``const_se3(A^T)`` (= child link), where ``A`` is the rotation taking z to ``a`` (about
  ``z x a``), so that ``A Rz(q) A^T`` is the rotation by ``q`` about ``a``.

The child link frame's pose is therefore exactly URDF's ``T_parent T_o exp(q a^)``.  ``q``
is an angle [rad] about the unit axis (revolute, continuous) or a distance [m] along it
(prismatic).  Fixed joints are one ``const_se3(T_o)`` frame.

A ``planar`` joint is ``const_se3(T_o A)`` -> ``tx(name_x)`` -> ``ty(name_y)`` ->
``rz(name_yaw)`` (-> ``const_se3(A^T)`` when the axis is not +z): a translation in the
plane normal to the axis, then a rotation about it (three configs).  A ``floating`` joint
(only with ``floating_base='euler'``) is ``const_se3(T_o)`` -> ``tx ty tz`` -> ``rz(yaw)
ry(pitch) rx(roll)`` (six configs ``name_x, name_y, name_z, name_yaw, name_pitch,
name_roll``; singular at pitch = +-90 deg).  Each part is a :class:`JointInfo` named like its
config (``urdf_joint``: the URDF joint).

Inertia: a link's ``<inertial>`` (mass, full 3x3 inertia about the centre of mass in the
inertial frame) is put on a constant frame at the inertial origin (xyz + rpy) with
:meth:`Frame.set_inertia`; when that origin is the identity the link frame itself carries it.
Links without ``<inertial>`` are massless.

Naming
------
With ``prefix`` p: link frames are named ``p + link``, configs ``p + joint``, actuation
inputs ``p + joint``.  Helper frames are named ``p + joint + '::origin'`` (joint origin,
including the axis alignment), ``p + joint + '::motion'`` (the moving frame of an oblique
axis) and ``p + link + '::inertial'``; a URDF whose own link names would collide with these
(or with frames/configs/inputs already in ``system``) is refused.  Every frame the importer
creates has an attribute ``urdf_role``: ``'link'`` or ``'helper'`` (link frames also carry
``urdf_link``, the URDF link name without prefix), so the ROS layer publishes only links.

Joint data
----------
* ``<dynamics damping>`` -> one :class:`forces.Damping` with per-config coefficients
  (created when any joint has damping > 0).
* ``<dynamics friction>`` -> optional :class:`forces.SmoothCoulombFriction`
  (``friction=True``; ``-f tanh(dq / friction_velocity)``), otherwise only reported.
* ``<limit effort velocity>`` -> :attr:`URDFRobot.effort_limits` / ``velocity_limits``
  (data: the simulator saturates inputs to them).
* ``<limit lower upper>`` -> :attr:`URDFRobot.position_limits`, declared on the system
  (:meth:`System.set_joint_limit`, unless ``enforce_limits=False``): every MidpointVI step
  holds the joint within them as a unilateral constraint.
* ``<mimic joint multiplier offset>`` with ``mimic='reduce'`` (default): an exact reduction
  of coordinates.  The mimic joint's frame follows its leader,
  ``q_m = multiplier q_ref + offset`` (:func:`~ros_vi.mechanics.frame.mimic`; a chain of
  mimics is composed onto the first non-mimic joint), so it has no config: its inertia
  enters the leader's column of the mass matrix, its ``<dynamics damping>`` c acts on the
  leader as ``multiplier^2 c`` (exact), and the compiled integrator runs on the reduced
  coordinates.  Joint states and tf still carry the mimic joint (``robot.mimic_joint_names``).
  With ``mimic='constraint'``: a holonomic :class:`constraints.Mimic` constraint
  ``q_m - multiplier q_ref - offset = 0`` (trep's formulation: the mimic joint keeps its own
  config, mass and damping; the constraint force is what a perfect coupling transmits; the
  initial q satisfies every constraint).  Both give the same motion.
* ``actuated='all'`` (default): every moving non-mimic joint gets a
  :class:`forces.ConfigForce` whose input is named like its config (``p + joint``), in
  config order; pass a list of joint names to choose, or ``None`` for no inputs.

Dynamic configs that move no mass (the mass matrix, reduced by the mimic constraints, has a
zero diagonal entry at a generic configuration), or that move mass only along directions
earlier joints already move, become kinematic configs (their trajectories are inputs; the
simulator holds them at their initial position) with a warning naming the joint
(``massless='kinematic'``, the default); ``massless='error'`` or ``strict=True`` raises a
:class:`URDFError` instead.  The mass matrix is never singular.
"""
import math
import warnings

import numpy as np

from ..errors import name_list
from ..mechanics import constraints, dynamics, potentials
from ..mechanics import forces as mforces
from ..mechanics.frame import Frame, CONST_SE3, RX, RY, RZ, TX, TY, TZ, mimic
from ..mechanics.free import FreeJoint
from ..mechanics.system import System
from .errors import URDFError
from .geometry import axis_alignment, is_identity, origin_matrix
from .parse import EULER_PARTS, FLOATING_PARTS, PLANAR_PARTS, JointInfo, finite
from .robot import URDFRobot
from .tolerance import Tolerance

__all__ = ['build_system', 'HELPER_SEP']

HELPER_SEP = '::'

def _helper_names(plan, prefix):
    """Every frame name the import creates -> role, with collisions refused."""
    names = {}

    def add(name, what):
        if name in names:
            raise URDFError('frame name %r is used twice (%s and %s); rename the link or '
                            'joint' % (name, names[name], what))
        names[name] = what
    for link in plan.links:
        add(prefix + link, 'link %r' % link)
    for j in plan.joints:
        if j.moving:
            for part in ('origin', 'motion') + _HELPER_PARTS.get(_kind(j), ()):
                add(prefix + j.name + HELPER_SEP + part, 'helper frame of joint %r' % j.name)
    configs = {}
    for j in plan.joints:
        for c in config_names(j):
            if c in configs:
                raise URDFError('config name %r is used twice (joints %r and %r); rename a '
                                'joint' % (prefix + c, configs[c], j.name))
            configs[c] = j.name
    for link in plan.inertials:
        add(prefix + link + HELPER_SEP + 'inertial', 'inertial frame of link %r' % link)
    return names


def _check_target(system, plan, prefix, frame_names, actuated_joints):
    existing = {f.name for f in system.frames if f.name is not None}
    clash = sorted(n for n in frame_names if n in existing)
    if clash:
        raise URDFError('frames %s already exist in the system (use prefix=...)'
                        % name_list(clash))
    cfg = {c.name for c in system.configs if c.name is not None}
    clash = sorted(prefix + c for j in plan.joints for c in config_names(j)
                   if prefix + c in cfg)
    if clash:
        raise URDFError('configs %s already exist in the system (use prefix=...)'
                        % name_list(clash))
    inp = {u.name for u in system.inputs if u.name is not None}
    clash = sorted(prefix + n for n in actuated_joints if prefix + n in inp)
    if clash:
        raise URDFError('inputs %s already exist in the system (use prefix=...)'
                        % name_list(clash))


def _mark(frame, role, link=None, prefix=''):
    frame.urdf_role = role
    frame.urdf_prefix = prefix
    if link is not None:
        frame.urdf_link = link
    return frame


_ALIGNED = {0: (RX, TX), 1: (RY, TY), 2: (RZ, TZ)}
# helper frames between the configs of a multi-degree-of-freedom joint
_HELPER_PARTS = {'planar': ('x', 'y'), 'floating': ('x', 'y', 'z', 'attitude', 'rx', 'ry'),
                 'euler': ('x', 'y', 'z', 'yaw', 'pitch')}
_PART_KINDS = {'planar': (TX, TY, RZ), 'euler': (TX, TY, TZ, RZ, RY, RX)}
_PART_SUFFIXES = {'planar': PLANAR_PARTS, 'floating': FLOATING_PARTS, 'euler': EULER_PARTS}


def _kind(j):
    """The build kind of a joint: its URDF type, or 'euler' for a floating joint imported
    as an Euler-angle chain."""
    return 'euler' if j.euler else j.type


def is_free(j):
    """True for a joint imported as a free joint (a native ``floating`` joint)."""
    return j.type == 'floating' and not j.euler


def config_names(j):
    """Names (without prefix) of the configs of a joint: none for a fixed joint, the joint
    name for a one-axis joint, ``name + suffix`` for each part of a planar or floating
    joint."""
    if not j.moving:
        return []
    if _kind(j) in _PART_SUFFIXES:
        return [j.name + sfx for sfx in _PART_SUFFIXES[_kind(j)]]
    return [j.name]


def _copy_joint(old, **changes):
    new = JointInfo.__new__(JointInfo)
    new.__dict__.update(old.__dict__)
    new.config = None
    new.input = None
    new.__dict__.update(changes)
    return new


def _mimic_root(j, by_name):
    """``(leader joint, multiplier, offset)`` of a mimic joint, composed down a chain of
    mimics to the first joint that mimics nothing: q_j = multiplier q_leader + offset."""
    ref, mult, off = j.mimic
    lead = by_name[ref]
    while lead.mimic is not None:
        ref2, mult2, off2 = lead.mimic
        mult, off = mult * mult2, mult * off2 + off
        lead = by_name[ref2]
    return lead, mult, off


def _build(plan, system, prefix, base, kinematic, options):
    """Create frames, configs, forces and constraints in ``system``; returns URDFRobot."""
    joints, link_frames, forces, mimics = _build_held(plan, system, prefix, base, kinematic,
                                                      options)
    _initial_q(system, mimics)
    return URDFRobot(system, plan.name, prefix, plan.root, joints, link_frames, forces,
                     plan.ros2_control)


def _build_held(plan, system, prefix, base, kinematic, options):
    """Frames, forces, constraints (structure updates batched); returns (joints,
    link_frames, forces, mimics)."""
    top = [_copy_joint(old) for old in plan.joints]
    joints = []            # the robot's joints: parts of planar/floating joints expanded
    for j in top:
        if j.type in _PART_SUFFIXES:
            j.parts = [_copy_joint(j, name=n, urdf_joint=j.name, lower=-np.inf,
                                   upper=np.inf, mimic=None)
                       for n in config_names(j)]
            joints.extend(j.parts)
        else:
            joints.append(j)
    by_name = {j.name: j for j in top}
    children = {l: [] for l in plan.links}
    for j in top:
        if j.parent is not None:        # not the root joint of floating_base=True
            children[j.parent].append(j)
    link_frames = {}
    forces = {}
    system.hold_structure_changes()
    try:
        root_joint = next((j for j in top if j.parent is None), None)

        def add_inertial(link, frame):
            if link not in plan.inertials:
                return
            mass, I, g = plan.inertials[link]
            if is_identity(g):
                frame.set_inertia(mass, I)
            else:
                h = Frame(frame, CONST_SE3, g, name=prefix + link + HELPER_SEP + 'inertial')
                _mark(h, 'helper', prefix=prefix)
                h.set_inertia(mass, I)

        def free(frame, j):
            """floating: origin -> a free joint (ros_vi.mechanics.free) whose body is the
            child link."""
            if not is_identity(j.origin):
                frame = _mark(Frame(frame, CONST_SE3, j.origin,
                                    name=prefix + j.name + HELPER_SEP + 'origin'),
                              'helper', prefix=prefix)
            joint = FreeJoint(frame, prefix + j.child, configs=prefix + j.name,
                              helpers=prefix + j.name + HELPER_SEP)
            for helper in joint.helper_frames:
                _mark(helper, 'helper', prefix=prefix)
            for part, config in zip(j.parts, joint.configs):
                part.config = config
            j.free_joint = joint
            return joint.body

        def multi_dof(frame, j):
            """planar: origin (z -> axis) -> tx -> ty -> rz; floating with Euler angles:
            origin -> tx -> ty -> tz -> rz -> ry -> rx; the last moving frame (or a constant
            frame undoing the axis alignment) is the child link."""
            if is_free(j):
                return free(frame, j)
            T = j.origin
            A = np.eye(4)
            if j.type == 'planar':
                A[:3, :3] = axis_alignment(j.axis)
                T = T @ A
            parent = frame
            if not is_identity(T):
                parent = _mark(Frame(frame, CONST_SE3, T,
                                     name=prefix + j.name + HELPER_SEP + 'origin'),
                               'helper', prefix=prefix)
            kinds = _PART_KINDS[_kind(j)]
            helpers = _HELPER_PARTS[_kind(j)]
            aligned = is_identity(A)
            for n, (kind, part) in enumerate(zip(kinds, j.parts)):
                last = n == len(kinds) - 1
                if not last:
                    fname = prefix + j.name + HELPER_SEP + helpers[n]
                elif aligned:
                    fname = prefix + j.child
                else:
                    fname = prefix + j.name + HELPER_SEP + 'motion'
                parent = Frame(parent, kind, prefix + part.name, name=fname,
                               kinematic=part.name in kinematic)
                part.config = parent.config
                if not last or not aligned:
                    _mark(parent, 'helper', prefix=prefix)
            if aligned:
                return parent
            Ainv = np.eye(4)
            Ainv[:3, :3] = A[:3, :3].T
            return Frame(parent, CONST_SE3, Ainv, name=prefix + j.child)

        def attach(j, frame):
            """The child link frame of joint ``j`` under its parent link's ``frame``."""
            if not j.moving:
                return Frame(frame, CONST_SE3, j.origin, name=prefix + j.child)
            if j.type in _PART_SUFFIXES:
                return multi_dof(frame, j)
            rot = j.type in ('revolute', 'continuous')
            kin = j.name in kinematic
            param = prefix + j.name
            if j.mimic is not None and options['mimic'] == 'reduce':
                lead, mult, off = _mimic_root(j, by_name)
                param = mimic(prefix + lead.name, mult, off, name=prefix + j.name)
            k = [i for i in range(3) if j.axis[i] == 1.0]
            if k:                          # exactly +x, +y or +z
                parent = frame
                if not is_identity(j.origin):
                    parent = _mark(Frame(frame, CONST_SE3, j.origin,
                                         name=prefix + j.name + HELPER_SEP + 'origin'),
                                   'helper', prefix=prefix)
                kind = _ALIGNED[k[0]][0 if rot else 1]
                child = Frame(parent, kind, param, name=prefix + j.child, kinematic=kin)
                j.motion_frame = child
            else:
                A = np.eye(4)
                A[:3, :3] = axis_alignment(j.axis)
                pre = _mark(Frame(frame, CONST_SE3, j.origin @ A,
                                  name=prefix + j.name + HELPER_SEP + 'origin'),
                            'helper', prefix=prefix)
                mid = _mark(Frame(pre, RZ if rot else TZ, param,
                                  name=prefix + j.name + HELPER_SEP + 'motion',
                                  kinematic=kin), 'helper', prefix=prefix)
                j.motion_frame = mid
                Ainv = np.eye(4)
                Ainv[:3, :3] = A[:3, :3].T
                child = Frame(mid, CONST_SE3, Ainv, name=prefix + j.child)
                j.config = mid.config
            if j.config is None:
                j.config = child.config
            return child

        # depth first in file order, as a stack (a chain may be deeper than Python's
        # recursion limit): a joint's child frame, its link's inertia, then the joints
        # below it, before the joint's next sibling -- the frame (and config) order of the
        # description
        if root_joint is None:
            root_frame = Frame(system.world_frame, CONST_SE3, base, name=prefix + plan.root)
        else:
            # floating_base=True: the base pose is where the free joint starts
            root_joint.origin = base
            root_frame = multi_dof(system.world_frame, root_joint)
        _mark(root_frame, 'link', plan.root, prefix)
        link_frames[plan.root] = root_frame
        add_inertial(plan.root, root_frame)
        todo = list(reversed(children[plan.root]))
        while todo:
            j = todo.pop()
            child = attach(j, link_frames[j.parent])
            _mark(child, 'link', j.child, prefix)
            link_frames[j.child] = child
            add_inertial(j.child, child)
            todo.extend(reversed(children[j.child]))
        _add_gravity(system, prefix, options['gravity'], forces)
    finally:
        system.resume_structure_changes()       # one structure update: frames and gravity
    # link frames in file order
    link_frames = {l: link_frames[l] for l in plan.links}
    return _add_forces(system, prefix, joints, by_name, kinematic, options, link_frames,
                       forces)


def _add_gravity(system, prefix, gravity, forces):
    if gravity is not None:
        existing = [p for p in system.potentials if isinstance(p, potentials.Gravity)]
        if existing:
            if not np.allclose(existing[0].gravity, gravity):
                warnings.warn('the system already has gravity %s; not adding %s'
                              % (existing[0].gravity, list(gravity)), UserWarning,
                              stacklevel=5)
            forces['gravity'] = existing[0]
        else:
            forces['gravity'] = potentials.Gravity(system, gravity, name=prefix + 'gravity')


def _add_forces(system, prefix, joints, by_name, kinematic, options, link_frames, forces):
    """Damping, friction, limits (these need the structure), inputs and mimics."""
    moving = [j for j in joints if j.config is not None]
    damp = {j.config: j.damping for j in moving if j.damping > 0}
    for j in joints:
        if j.moving and j.config is None and j.damping > 0:
            # a reduced mimic joint: its damping torque -c dq_m, dq_m = a dq_lead, does
            # virtual work a (-c a dq_lead) on the leader
            lead, mult, _ = _mimic_root(j, by_name)
            damp[lead.config] = damp.get(lead.config, 0.0) + mult * mult * j.damping
    if damp:
        forces['damping'] = mforces.Damping(system, 0.0, damp, name=prefix + 'damping')
    if options['friction']:
        fr = {j.config: j.friction for j in moving if j.friction > 0}
        if fr:
            forces['friction'] = mforces.SmoothCoulombFriction(
                system, fr, options['friction_velocity'], name=prefix + 'friction')
    mimics = []
    system.hold_structure_changes()     # one structure update for all inputs/constraints
    try:
        if options['enforce_limits']:
            # <limit lower upper> as unilateral constraints of every MidpointVI step (a
            # mimic joint follows its leader, whose limits hold it)
            for j in moving:
                if j.mimic is None and (np.isfinite(j.lower) or np.isfinite(j.upper)):
                    system.set_joint_limit(j.config, j.lower, j.upper)
        for j in joints:
            if j.name in options['actuated_set'] and j.name not in kinematic:
                cf = mforces.ConfigForce(system, j.config, prefix + j.name,
                                         name=prefix + j.name)
                j.input = cf.finput
        for j in joints:
            if j.mimic is not None and j.config is not None:
                ref, mult, off = j.mimic
                mimics.append(constraints.Mimic(
                    system, j.config, by_name[ref].config, mult, off,
                    name=prefix + j.name + HELPER_SEP + 'mimic'))
    finally:
        system.resume_structure_changes()
    forces['mimic'] = mimics
    return joints, link_frames, forces, mimics


def _initial_q(system, mimics):
    """Initial configuration: zeros, mimic joints consistent (in dependency order)."""
    q = system.data.q
    for _ in range(len(mimics) + 1):
        for con in mimics:
            q[con.config.index] = con.multiplier * q[con.reference.index] + con.offset
    system.data.invalidate()


def _moving(robot):
    """JointInfo of the robot's moving joints in config order."""
    return [robot.joint(name) for name in robot.joint_names]


def _generic_q(robot):
    """A deterministic, generic configuration inside the limits (mimics consistent)."""
    system = robot.system
    q = system.q
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    for n, j in enumerate(_moving(robot)):
        frac = (0.37 + golden * (n + 1)) % 1.0
        lo, up = j.lower, j.upper
        if np.isfinite(lo) and np.isfinite(up):
            val = lo + frac * (up - lo)
        else:
            val = 2.0 * frac - 1.0
            if np.isfinite(lo):
                val = lo + frac
            elif np.isfinite(up):
                val = up - frac
        q[j.config.index] = val
    for _ in range(len(robot.mimic_constraints) + 1):
        for con in robot.mimic_constraints:
            q[con.config.index] = con.multiplier * q[con.reference.index] + con.offset
    return q


def _massless_joints(robot):
    """Moving dynamic joints of ``robot`` whose (mimic-reduced) mass-matrix diagonal is 0."""
    system = robot.system
    nd = system.nQd
    data = system.model.create_data()
    data.set(q=_generic_q(robot))
    M = dynamics.mass_matrix(system.model, data)
    if not np.all(np.isfinite(M)):
        raise URDFError('the mass matrix is not finite at a generic configuration: the '
                        'masses, inertias or lengths are too large for floating point')
    mine = [j for j in _moving(robot) if not j.config.kinematic]
    if nd == 0 or not mine:
        return [], []
    # null space of the mimic constraints: q_m = k q_ref (+ off) -> columns of N
    nmap = np.eye(nd)
    for _ in range(len(robot.mimic_constraints) + 1):
        for con in robot.mimic_constraints:
            ci, ri = con.config.index, con.reference.index
            if ci < nd and ri < nd:
                nmap[:, ci] = 0.0
                nmap[ci] = con.multiplier * nmap[ri]
    keep = [j for j in mine if j.mimic is None]
    N = nmap[:, [j.config.index for j in keep]]
    Mr = N.T @ M @ N
    scale = max(float(np.abs(M).max()), 1e-300)
    diag = np.diag(Mr)
    bad = [j for j, d in zip(keep, diag) if not d > 1e-12 * scale]
    good = [i for i, d in enumerate(diag) if d > 1e-12 * scale]
    dependent = []
    if good and np.linalg.eigvalsh(Mr[np.ix_(good, good)]).min() <= 1e-13 * scale:
        # greedy in config order: a joint whose inertia the earlier kept joints already
        # span (Schur complement ~ 0) is dependent
        kept = []
        for i in good:
            d = diag[i]
            if kept:
                K = np.array(kept)
                d = d - Mr[i, K] @ np.linalg.solve(Mr[np.ix_(K, K)], Mr[K, i])
            if d <= 1e-9 * diag[i] or d <= 1e-13 * scale:
                dependent.append(keep[i])
            else:
                kept.append(i)
    return bad, dependent


def build_system(plan, where, system=None, prefix=None, gravity=(0.0, 0.0, -9.81),
                 base_xyz=None, base_rpy=None, base_pose=None, actuated='all', friction=False,
                 friction_velocity=1e-2, enforce_limits=True, massless='kinematic', tol=None,
                 mimic='reduce'):
    """Add the robot of a :class:`Description` to ``system`` (a new System if None).

    The robot is first built in a scratch system to check its dynamics, so on any error
    ``system`` is left untouched.  Returns the System, with ``system.urdf`` the
    :class:`URDFRobot` of this import (also appended to ``system.urdf_robots``).  Keywords:
    see :func:`ros_vi.urdf.import_urdf`; errors are :class:`URDFError` prefixed by ``where``.
    ``tol``: the :class:`~.tolerance.Tolerance` of this import (its quirks become
    ``robot.warnings``).
    """
    if tol is None:
        tol = Tolerance(where)
    prefix = '' if prefix is None else str(prefix)
    if mimic not in ('reduce', 'constraint'):
        raise ValueError("mimic must be 'reduce' (default) or 'constraint', got %r" % (mimic,))
    if massless not in ('error', 'warn', 'kinematic'):
        raise ValueError("massless must be 'kinematic' (default), 'error' or 'warn' (the "
                         "same as 'kinematic'), got %r" % (massless,))
    if gravity is not None:
        gravity = np.asarray(gravity, dtype=float).reshape(-1)
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ValueError('gravity must be three finite numbers or None, got %r'
                             % (gravity,))
    if base_pose is not None:
        base = np.array(base_pose, dtype=float)
        if base.shape != (4, 4):
            raise ValueError('base_pose must be a 4x4 matrix')
    else:
        xyz = finite(base_xyz if base_xyz is not None else (0, 0, 0), 'base_xyz')
        rpy = finite(base_rpy if base_rpy is not None else (0, 0, 0), 'base_rpy')
        base = origin_matrix(xyz, rpy)
    moving = [c for j in plan.joints for c in config_names(j)]
    mimicking = {j.name for j in plan.joints if j.mimic is not None}
    if actuated == 'all':
        # every joint with a motor: not a mimic joint, not a free joint (a floating base
        # or a loose body has none; name it in ``actuated`` to push it anyway)
        act = [c for j in plan.joints if j.mimic is None and not is_free(j)
               for c in config_names(j)]
    elif actuated is None:
        act = []
    else:
        parts = {j.name: config_names(j) for j in plan.joints if j.moving}
        act = []
        for n in actuated:
            if n in parts and n not in moving:          # a planar/floating joint: all parts
                act.extend(parts[n])
            elif n in moving:
                if mimic == 'reduce' and n in mimicking:
                    raise URDFError("%s: actuated joint %r is a mimic joint: it follows its "
                                    "leader and has no input of its own (import with "
                                    "mimic='constraint' to keep it as a config)" % (where, n))
                act.append(n)
            else:
                raise URDFError('%s: actuated joint %r is not a moving joint of the robot '
                                '(moving joints: %s)' % (where, n, name_list(moving, quote=str)))
    options = dict(gravity=gravity, friction=bool(friction),
                   friction_velocity=float(friction_velocity),
                   enforce_limits=bool(enforce_limits), actuated_set=set(act), mimic=mimic)
    if friction and mimic == 'reduce':
        for j in plan.joints:
            if j.mimic is not None and j.friction > 0:
                tol.tolerate('joint', j.name, 'has <dynamics friction> but is a mimic joint '
                             'reduced onto its leader', "friction not modelled (import with "
                             "mimic='constraint' to keep it)")
    try:
        frame_names = _helper_names(plan, prefix)
    except URDFError as err:
        raise URDFError('%s: %s' % (where, err)) from None
    if system is not None:
        _check_target(system, plan, prefix, frame_names, act)
    # build once in a scratch system to validate the dynamics (nothing half-imported)
    scratch = System()
    try:
        robot = _build(plan, scratch, prefix, base, set(), options)
    except ValueError as err:
        raise URDFError('%s: %s' % (where, err)) from None
    try:
        bad, dependent = _massless_joints(robot)
    except URDFError as err:
        raise URDFError('%s: %s' % (where, err)) from None
    if bad and massless == 'error':
        raise URDFError('%s: dynamic joint(s) %s move no mass (child links %s and below are '
                        'massless); add <inertial>, or import with massless="kinematic" '
                        '(the default) to make them kinematic configs'
                        % (where, name_list(j.name for j in bad),
                           name_list(j.child for j in bad)))
    if dependent and massless == 'error':
        raise URDFError('%s: the mass matrix is singular at a generic configuration: joint(s) '
                        '%s move mass only along directions earlier joints already move'
                        % (where, name_list(j.name for j in dependent)))
    held = 'made it a kinematic config, held at its initial position (not an effort input)'
    for j in bad:
        tol.tolerate('joint', j.name, 'moves no mass (child link %r and the links below it '
                     'are massless; the mass matrix would be singular)' % j.child, held)
    for j in dependent:
        tol.tolerate('joint', j.name, 'moves mass only along directions that earlier joints '
                     'already move (the mass matrix would be singular)', held)
    kinematic = {j.name for j in bad + dependent}
    if system is None and not kinematic:
        result = scratch
    else:
        result = System() if system is None else system
        robot = _build(plan, result, prefix, base, kinematic, options)
    robot._set_warnings(tol.quirks)
    if not hasattr(result, 'urdf_robots'):
        result.urdf_robots = []
    result.urdf_robots.append(robot)
    result.urdf = robot
    return result
