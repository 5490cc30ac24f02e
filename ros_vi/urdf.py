"""URDF importer: a robot description becomes an exact ros_vi :class:`System`.

Entry points (trep's names): :func:`import_urdf` (a URDF string, e.g. ``robot_description``)
and :func:`import_urdf_file` (a ``.urdf`` file, or a ``.xacro`` file processed with xacro).
Both return an ordinary :class:`~ros_vi.mechanics.system.System`; the URDF data the nodes
need (joint order, limits, link frames) is attached as ``system.urdf`` (a :class:`URDFRobot`;
every import into the same system is also listed in ``system.urdf_robots``).

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
(prismatic).  Fixed joints are one ``const_se3(T_o)`` frame.  ``planar`` and ``floating``
joints are rejected with a :class:`URDFError` (no parameterisation is free of
singularities that the user would not expect; model them with explicit joints).

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
* ``<limit effort velocity>`` -> :meth:`URDFRobot.effort_limits` / ``velocity_limits``
  (data: the simulator saturates inputs to them).
* ``<limit lower upper>`` -> :meth:`URDFRobot.position_limits`; with
  ``enforce_limits=True`` a :class:`forces.JointLimits` spring-damper acts beyond them.
* ``<mimic joint multiplier offset>`` -> a holonomic :class:`constraints.Mimic` constraint
  ``q_m - multiplier q_ref - offset = 0`` (the mimic joint keeps its own config, its own
  mass and its own damping; the constraint force is what a perfect coupling transmits).
  Chosen over an exact reduction because the frame model cannot drive one transform by a
  linear function of another config.  Systems with mimic joints run on MidpointVI's
  general (constrained) path.  The initial q satisfies every mimic constraint.
* ``actuated='all'`` (default): every moving non-mimic joint gets a
  :class:`forces.ConfigForce` whose input is named like its config (``p + joint``), in
  config order; pass a list of joint names to choose, or ``None`` for no inputs.

Dynamic configs that move no mass (the mass matrix, reduced by the mimic constraints, has a
zero diagonal entry at a generic configuration) raise :class:`URDFError` naming the joint
and its child link, unless ``massless='warn'`` (keep them: the dynamics will be singular) or
``massless='kinematic'`` (make them kinematic configs, whose trajectories are inputs).

Safety: the XML is parsed with entity resolution, DTD loading and network access disabled;
documents with a DOCTYPE (entities) or XInclude elements are refused, so no file other than
the given one is read (xacro files may include other xacro files by design).  Mesh
filenames (``package://``, ``file://``) are kept as strings and never opened.
"""
import logging
import math
import os
import warnings

import numpy as np

from .mechanics import dynamics
from .mechanics.frame import Frame, CONST_SE3, RX, RY, RZ, TX, TY, TZ
from .mechanics.system import System

__all__ = ['import_urdf', 'import_urdf_file', 'URDFError', 'URDFParseError',
           'URDFSecurityError', 'URDFRobot', 'JointInfo', 'rpy_matrix', 'origin_matrix',
           'axis_alignment']

_log = logging.getLogger(__name__)

SUPPORTED_JOINTS = ('revolute', 'continuous', 'prismatic', 'fixed')
HELPER_SEP = '::'


class URDFError(ValueError):
    """A URDF (or xacro) that cannot be imported; the message names the culprit element."""


class URDFParseError(URDFError):
    """Malformed XML, or an element urdf_parser_py cannot read."""


class URDFSecurityError(URDFError):
    """A document that would make the parser read other files or expand entities."""


# ---------------------------------------------------------------------- geometry helpers
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


def _is_identity(g):
    return bool(np.array_equal(g, np.eye(4)))


# ---------------------------------------------------------------------- parsing
_XINCLUDE_NS = 'http://www.w3.org/2001/XInclude'


def _parse_xml(text, where):
    """Hardened parse to an lxml element: no DTD, no entities, no network, no XInclude."""
    from lxml import etree
    if isinstance(text, str):
        data = text.encode('utf-8')
        # an XML declaration naming another encoding would now be wrong: drop it
        stripped = text.lstrip()
        if stripped.startswith('<?xml'):
            end = stripped.find('?>')
            if end > 0:
                data = stripped[end + 2:].encode('utf-8')
    elif isinstance(text, (bytes, bytearray)):
        data = bytes(text)
    else:
        raise TypeError('import_urdf: source must be the URDF XML as str or bytes, got %s '
                        '(use import_urdf_file for a file name)' % type(text).__name__)
    if b'<!DOCTYPE' in data or b'<!ENTITY' in data:
        raise URDFSecurityError('%s: DOCTYPE/ENTITY declarations are not allowed in a URDF '
                                '(entity expansion and external entities are refused)' % where)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             dtd_validation=False, huge_tree=False, remove_comments=True,
                             remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as err:
        raise URDFParseError('%s: malformed XML: %s' % (where, err)) from None
    if root.getroottree().docinfo.internalDTD is not None or \
            root.getroottree().docinfo.doctype:
        raise URDFSecurityError('%s: DOCTYPE declarations are not allowed in a URDF' % where)
    for el in root.iter():
        tag = el.tag
        if not isinstance(tag, str):
            if isinstance(el, etree._Entity):
                raise URDFSecurityError('%s: entity reference %s is not allowed' % (where, el))
            continue
        if tag.startswith('{%s}' % _XINCLUDE_NS):
            raise URDFSecurityError('%s: XInclude element <%s> (line %s) is not allowed; '
                                    'the importer reads no other file'
                                    % (where, tag, el.sourceline))
    if root.tag != 'robot':
        raise URDFParseError('%s: root element must be <robot>, got <%s>' % (where, root.tag))
    return root


def _to_urdf_model(root, where):
    """urdf_parser_py's model from a parsed element (its warnings go to our logger)."""
    try:
        from urdf_parser_py import urdf as urdfpy
        from urdf_parser_py.xml_reflection import core as xmlr_core
    except ImportError as err:    # pragma: no cover - dependency missing
        raise ImportError('ros_vi.urdf needs urdfdom-py (pip install urdfdom-py): %s' % err)
    from lxml import etree
    messages = []
    saved = xmlr_core.on_error
    xmlr_core.on_error = messages.append
    try:
        path = xmlr_core.Path('robot', tree=etree.ElementTree(root))
        model = urdfpy.Robot.from_xml(root, path)
    except xmlr_core.ParseError as err:
        raise URDFParseError('%s: %s' % (where, str(err).replace('\n', ' '))) from None
    except (AssertionError, ValueError, TypeError, KeyError, AttributeError,
            IndexError) as err:
        raise URDFParseError('%s: cannot read the URDF: %s: %s'
                             % (where, type(err).__name__, err)) from None
    finally:
        xmlr_core.on_error = saved
    for msg in messages:
        _log.warning('%s: %s', where, msg)
    return model


# ---------------------------------------------------------------------- validated plan
class JointInfo:
    """Validated data of one URDF joint (units: rad or m for positions).

    Attributes: name, type, parent, child (link names), origin (4, 4), axis (3,) unit,
    lower, upper (``-inf``/``inf`` when absent or continuous), effort, velocity (``inf`` when
    absent), damping, friction, mimic (None or ``(joint, multiplier, offset)``), config
    (the :class:`Config`, None for fixed joints), input (the actuation :class:`Input` or
    None).
    """

    def __init__(self, name, jtype, parent, child):
        self.name, self.type, self.parent, self.child = name, jtype, parent, child
        self.origin = np.eye(4)
        self.axis = np.array([1.0, 0.0, 0.0])
        self.lower, self.upper = -np.inf, np.inf
        self.effort, self.velocity = np.inf, np.inf
        self.damping, self.friction = 0.0, 0.0
        self.mimic = None
        self.config = None
        self.input = None

    @property
    def moving(self):
        return self.type != 'fixed'

    def __repr__(self):
        return '<JointInfo %r %s %s->%s>' % (self.name, self.type, self.parent, self.child)


class _Plan:
    """Everything the importer needs, validated, before any System is touched."""

    def __init__(self, name):
        self.name = name
        self.links = []            # link names, file order
        self.inertials = {}        # link -> (mass, (3,3) inertia, (4,4) origin)
        self.joints = []           # JointInfo, file order
        self.root = None
        self.children = {}         # link -> [JointInfo] (file order)


def _finite(values, what):
    arr = np.asarray(values, dtype=float).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise URDFError('%s: numbers must be finite, got [%s]'
                        % (what, ', '.join('%g' % x for x in arr)))
    return arr


def _pose(origin, what):
    if origin is None:
        return np.eye(4)
    xyz = _finite(origin.xyz if origin.xyz is not None else (0, 0, 0), what + ' origin xyz')
    rpy = _finite(origin.rpy if origin.rpy is not None else (0, 0, 0), what + ' origin rpy')
    if xyz.shape != (3,) or rpy.shape != (3,):
        raise URDFError('%s: origin xyz and rpy need 3 numbers each' % what)
    return origin_matrix(xyz, rpy)


def _check_inertia(link, mass, inertia, where):
    """Negative mass / non-PSD inertia: error; triangle inequality violated: warning."""
    if mass < 0:
        raise URDFError('%s: link %r has negative mass %g' % (where, link, mass))
    scale = max(np.abs(inertia).max(), 1e-300)
    ev = np.linalg.eigvalsh(inertia)
    if ev.min() < -1e-9 * scale:
        raise URDFError('%s: link %r: inertia is not positive semi-definite (eigenvalues %s)'
                        % (where, link, ev))
    a, b, c = ev
    if a + b < c - 1e-9 * scale:
        warnings.warn('%s: link %r: principal moments of inertia %s violate the triangle '
                      'inequality (no rigid body has them)' % (where, link, ev),
                      UserWarning, stacklevel=4)
    if mass == 0 and np.any(inertia != 0):
        warnings.warn('%s: link %r has zero mass but non-zero inertia' % (where, link),
                      UserWarning, stacklevel=4)


def _make_plan(model, where):
    plan = _Plan(getattr(model, 'name', None))
    seen = set()
    for link in model.links:
        name = link.name
        if not isinstance(name, str) or not name:
            raise URDFError('%s: a <link> has no name' % where)
        if name in seen:
            raise URDFError('%s: duplicate link name %r' % (where, name))
        seen.add(name)
        plan.links.append(name)
        plan.children[name] = []
        inertial = link.inertial
        if inertial is not None:
            what = '%s: link %r <inertial>' % (where, name)
            mass = float(_finite([inertial.mass if inertial.mass is not None else np.nan],
                                 what + ' mass')[0])
            I = inertial.inertia
            if I is None:
                Im = np.zeros((3, 3))
            else:
                vals = _finite([I.ixx, I.ixy, I.ixz, I.iyy, I.iyz, I.izz], what + ' inertia')
                ixx, ixy, ixz, iyy, iyz, izz = vals
                Im = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
            _check_inertia(name, mass, Im, where)
            plan.inertials[name] = (mass, Im, _pose(inertial.origin, what))
    jseen = {}
    parent_of = {}
    for j in model.joints:
        name = j.name
        if not isinstance(name, str) or not name:
            raise URDFError('%s: a <joint> has no name' % where)
        if name in jseen:
            raise URDFError('%s: duplicate joint name %r' % (where, name))
        jtype = j.type
        if jtype == 'planar':
            raise URDFError('%s: joint %r: type \'planar\' is not supported (the importer '
                            'maps each joint to one config; model the plane with two prismatic '
                            'joints and a revolute joint through massless links)'
                            % (where, name))
        if jtype == 'floating':
            raise URDFError('%s: joint %r: type \'floating\' is not supported (any '
                            'three-angle parameterisation of its rotation is singular; model a '
                            'free base explicitly, or fix the base with base_xyz/base_rpy)'
                            % (where, name))
        if jtype not in SUPPORTED_JOINTS:
            raise URDFError('%s: joint %r has unknown type %r (supported: %s)'
                            % (where, name, jtype, ', '.join(SUPPORTED_JOINTS)))
        for role, link in (('parent', j.parent), ('child', j.child)):
            if link is None:
                raise URDFError('%s: joint %r has no <%s link=...>' % (where, name, role))
            if link not in seen:
                raise URDFError('%s: joint %r names a missing %s link %r'
                                % (where, name, role, link))
        if j.child in parent_of:
            raise URDFError('%s: link %r is the child of two joints (%r and %r)'
                            % (where, j.child, parent_of[j.child].name, name))
        info = JointInfo(name, jtype, j.parent, j.child)
        what = '%s: joint %r' % (where, name)
        info.origin = _pose(j.origin, what)
        if jtype != 'fixed':
            axis = _finite(j.axis if j.axis is not None else (1.0, 0.0, 0.0), what + ' axis')
            if axis.shape != (3,):
                raise URDFError('%s: axis needs 3 numbers' % what)
            n = float(np.linalg.norm(axis))
            if not n > 1e-12:
                raise URDFError('%s: axis [%s] has zero length'
                            % (what, ', '.join('%g' % x for x in axis)))
            info.axis = axis / n
            lim = j.limit
            if lim is None and jtype in ('revolute', 'prismatic'):
                raise URDFError('%s: a %s joint needs a <limit effort velocity lower upper> '
                                'element' % (what, jtype))
            if lim is not None:
                eff = _finite([lim.effort], what + ' limit effort')[0]
                vel = _finite([lim.velocity], what + ' limit velocity')[0]
                if eff < 0 or vel < 0:
                    raise URDFError('%s: limit effort and velocity must be >= 0' % what)
                info.effort, info.velocity = float(eff), float(vel)
                if jtype != 'continuous':
                    lo = _finite([lim.lower if lim.lower is not None else 0.0],
                                 what + ' limit lower')[0]
                    up = _finite([lim.upper if lim.upper is not None else 0.0],
                                 what + ' limit upper')[0]
                    if lo > up:
                        raise URDFError('%s: limit lower %g > upper %g' % (what, lo, up))
                    info.lower, info.upper = float(lo), float(up)
            dyn = j.dynamics
            if dyn is not None:
                damping = dyn.damping if dyn.damping is not None else 0.0
                friction = dyn.friction if dyn.friction is not None else 0.0
                damping, friction = _finite([damping, friction], what + ' dynamics')
                if damping < 0 or friction < 0:
                    raise URDFError('%s: dynamics damping and friction must be >= 0' % what)
                info.damping, info.friction = float(damping), float(friction)
            if j.mimic is not None:
                m = j.mimic
                if not m.joint:
                    raise URDFError('%s: <mimic> needs joint=...' % what)
                mult = m.multiplier if m.multiplier is not None else 1.0
                off = m.offset if m.offset is not None else 0.0
                mult, off = _finite([mult, off], what + ' mimic')
                info.mimic = (m.joint, float(mult), float(off))
        jseen[name] = info
        parent_of[j.child] = info
        plan.joints.append(info)
        plan.children[j.parent].append(info)
    roots = [l for l in plan.links if l not in parent_of]
    if not plan.links:
        raise URDFError('%s: the robot has no links' % where)
    if len(roots) > 1:
        raise URDFError('%s: the robot has %d roots (links without a parent joint: %s); a '
                        'URDF must be one tree' % (where, len(roots), ', '.join(map(repr, roots))))
    if not roots:
        raise URDFError('%s: the joints form a cycle (every link has a parent joint: %s)'
                        % (where, ', '.join(repr(j.name) for j in plan.joints)))
    plan.root = roots[0]
    reached = set()
    stack = [plan.root]
    while stack:
        link = stack.pop()
        reached.add(link)
        stack.extend(j.child for j in plan.children[link])
    if len(reached) != len(plan.links):
        lost = [l for l in plan.links if l not in reached]
        cyc = [parent_of[l].name for l in lost]
        raise URDFError('%s: the joints form a cycle: links %s are not reachable from the '
                        'root %r (joints %s)' % (where, ', '.join(map(repr, lost)), plan.root,
                                                 ', '.join(map(repr, cyc))))
    for info in plan.joints:
        if info.mimic is None:
            continue
        ref = info.mimic[0]
        if ref not in jseen:
            raise URDFError('%s: joint %r mimics a missing joint %r' % (where, info.name, ref))
        if ref == info.name:
            raise URDFError('%s: joint %r mimics itself' % (where, info.name))
        if not jseen[ref].moving:
            raise URDFError('%s: joint %r mimics the fixed joint %r' % (where, info.name, ref))
        chain = [info.name]
        cur = jseen[ref]
        while cur.mimic is not None:
            if cur.name in chain:
                raise URDFError('%s: mimic joints form a cycle: %s'
                                % (where, ' -> '.join(map(repr, chain + [cur.name]))))
            chain.append(cur.name)
            cur = jseen[cur.mimic[0]]
    return plan


# ---------------------------------------------------------------------- result object
class URDFRobot:
    """What the importer knows about one imported robot (``system.urdf``).

    All per-joint arrays are in **config order** (the order of the robot's configs in
    ``system.configs``), which is the order of :meth:`joint_names`.
    """

    def __init__(self, system, plan, prefix, joints, link_frames, forces):
        self.system = system
        self.name = plan.name
        self.prefix = prefix
        self.root_link = plan.root
        self._joints = {j.name: j for j in joints}
        self._joint_list = joints
        self._link_frames = link_frames      # link name -> Frame (file order)
        self.forces = forces                 # dict: 'damping', 'friction', 'limits', 'gravity'
        self.mimic_constraints = forces.get('mimic', [])

    def __repr__(self):
        return '<URDFRobot %r prefix=%r: %d links, %d moving joints>' % (
            self.name, self.prefix, len(self._link_frames), len(self.joint_names()))

    # joints ----------------------------------------------------------------
    def _moving(self):
        js = [j for j in self._joint_list if j.config is not None]
        return sorted(js, key=lambda j: j.config.index)

    def joint(self, name):
        """:class:`JointInfo` of a joint (URDF name, without prefix)."""
        try:
            return self._joints[name]
        except KeyError:
            raise KeyError('robot %r has no joint %r' % (self.name, name)) from None

    def joint_names(self):
        """URDF names of the moving joints in config order (list of str)."""
        return [j.name for j in self._moving()]

    def config_names(self):
        """Config names (prefixed joint names) in config order."""
        return [j.config.name for j in self._moving()]

    def config_indices(self):
        """Indices of the robot's configs in ``system.configs`` (int array, config order)."""
        return np.array([j.config.index for j in self._moving()], dtype=int)

    def fixed_joint_names(self):
        return [j.name for j in self._joint_list if j.config is None]

    def position_limits(self):
        """``(lower, upper)`` arrays [rad or m] in config order (``-inf``/``inf`` if none)."""
        js = self._moving()
        return (np.array([j.lower for j in js]), np.array([j.upper for j in js]))

    def effort_limits(self):
        """``<limit effort>`` per joint in config order [N m or N] (``inf`` if none)."""
        return np.array([j.effort for j in self._moving()])

    def velocity_limits(self):
        """``<limit velocity>`` per joint in config order [rad/s or m/s] (``inf`` if none)."""
        return np.array([j.velocity for j in self._moving()])

    def damping_coefficients(self):
        return np.array([j.damping for j in self._moving()])

    def friction_coefficients(self):
        return np.array([j.friction for j in self._moving()])

    def input_names(self):
        """Names of the actuation inputs (in ``system.inputs`` order)."""
        js = [j for j in self._joint_list if j.input is not None]
        js.sort(key=lambda j: j.input.index)
        return [j.input.name for j in js]

    def input_joint_names(self):
        """URDF joint of each actuation input (same order as :meth:`input_names`)."""
        js = [j for j in self._joint_list if j.input is not None]
        js.sort(key=lambda j: j.input.index)
        return [j.name for j in js]

    def input_indices(self):
        js = [j for j in self._joint_list if j.input is not None]
        js.sort(key=lambda j: j.input.index)
        return np.array([j.input.index for j in js], dtype=int)

    def input_effort_limits(self):
        """Effort limit of each actuation input [N m or N] (same order as input_names)."""
        js = [j for j in self._joint_list if j.input is not None]
        js.sort(key=lambda j: j.input.index)
        return np.array([j.effort for j in js])

    # links -----------------------------------------------------------------
    def link_names(self):
        """URDF link names (file order)."""
        return list(self._link_frames)

    def link_frame(self, link):
        """The :class:`Frame` of a link (URDF name, without prefix)."""
        try:
            return self._link_frames[link]
        except KeyError:
            raise KeyError('robot %r has no link %r' % (self.name, link)) from None

    def link_pose(self, link):
        """(4, 4) world pose of a link frame at the system's current q."""
        return self.link_frame(link).g()

    def link_poses(self):
        """``{link: (4, 4) world pose}`` for every link, from one kinematics evaluation."""
        R, P, _ = dynamics.kinematics(self.system.model, self.system.data)
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
        model, data = self.system.model, self.system.data
        R, P, S = dynamics.kinematics(model, data)
        i = frame.index
        dq = data.dq
        cs = np.nonzero(model.frame_anc[i])[0]
        tw = S[cs].T @ dq[cs] if cs.size else np.zeros(6)   # world twist (w, v at origin)
        w_world = tw[:3]
        v_world = tw[3:] + np.cross(w_world, P[i])
        return R[i].T @ v_world, R[i].T @ w_world

    def link_body_velocities(self):
        """``{link: (v, w)}`` for every link (see :meth:`link_body_velocity`)."""
        return {name: self.link_body_velocity(name) for name in self._link_frames}


# ---------------------------------------------------------------------- building
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
            add(prefix + j.name + HELPER_SEP + 'origin', 'helper frame of joint %r' % j.name)
            add(prefix + j.name + HELPER_SEP + 'motion', 'helper frame of joint %r' % j.name)
    for link in plan.inertials:
        add(prefix + link + HELPER_SEP + 'inertial', 'inertial frame of link %r' % link)
    return names


def _check_target(system, plan, prefix, frame_names, actuated_joints):
    existing = {f.name for f in system.frames if f.name is not None}
    clash = sorted(n for n in frame_names if n in existing)
    if clash:
        raise URDFError('frames %s already exist in the system (use prefix=...)'
                        % ', '.join(map(repr, clash)))
    cfg = {c.name for c in system.configs if c.name is not None}
    clash = sorted(prefix + j.name for j in plan.joints if j.moving and prefix + j.name in cfg)
    if clash:
        raise URDFError('configs %s already exist in the system (use prefix=...)'
                        % ', '.join(map(repr, clash)))
    inp = {u.name for u in system.inputs if u.name is not None}
    clash = sorted(prefix + n for n in actuated_joints if prefix + n in inp)
    if clash:
        raise URDFError('inputs %s already exist in the system (use prefix=...)'
                        % ', '.join(map(repr, clash)))


def _mark(frame, role, link=None, prefix=''):
    frame.urdf_role = role
    frame.urdf_prefix = prefix
    if link is not None:
        frame.urdf_link = link
    return frame


_ALIGNED = {0: (RX, TX), 1: (RY, TY), 2: (RZ, TZ)}


def _build(plan, system, prefix, base, kinematic, options):
    """Create frames, configs, forces and constraints in ``system``; returns URDFRobot."""
    joints = [JointInfo.__new__(JointInfo) for _ in plan.joints]
    for new, old in zip(joints, plan.joints):
        new.__dict__.update(old.__dict__)
        new.config = None
        new.input = None
    by_name = {j.name: j for j in joints}
    children = {l: [] for l in plan.links}
    for j in joints:
        children[j.parent].append(j)
    link_frames = {}
    forces = {}
    system.hold_structure_changes()
    try:
        root_frame = Frame(system.world_frame, CONST_SE3, base, name=prefix + plan.root)
        _mark(root_frame, 'link', plan.root, prefix)
        link_frames[plan.root] = root_frame

        def add_inertial(link, frame):
            if link not in plan.inertials:
                return
            mass, I, g = plan.inertials[link]
            if _is_identity(g):
                frame.set_inertia(mass, I)
            else:
                h = Frame(frame, CONST_SE3, g, name=prefix + link + HELPER_SEP + 'inertial')
                _mark(h, 'helper', prefix=prefix)
                h.set_inertia(mass, I)

        def grow(link, frame):
            add_inertial(link, frame)
            for j in children[link]:
                if not j.moving:
                    child = Frame(frame, CONST_SE3, j.origin, name=prefix + j.child)
                else:
                    rot = j.type in ('revolute', 'continuous')
                    kin = j.name in kinematic
                    k = [i for i in range(3) if j.axis[i] == 1.0]
                    if k:                          # exactly +x, +y or +z
                        parent = frame
                        if not _is_identity(j.origin):
                            parent = _mark(Frame(frame, CONST_SE3, j.origin,
                                                 name=prefix + j.name + HELPER_SEP + 'origin'),
                                           'helper', prefix=prefix)
                        kind = _ALIGNED[k[0]][0 if rot else 1]
                        child = Frame(parent, kind, prefix + j.name, name=prefix + j.child,
                                      kinematic=kin)
                    else:
                        A = np.eye(4)
                        A[:3, :3] = axis_alignment(j.axis)
                        pre = _mark(Frame(frame, CONST_SE3, j.origin @ A,
                                          name=prefix + j.name + HELPER_SEP + 'origin'),
                                    'helper', prefix=prefix)
                        mid = _mark(Frame(pre, RZ if rot else TZ, prefix + j.name,
                                          name=prefix + j.name + HELPER_SEP + 'motion',
                                          kinematic=kin), 'helper', prefix=prefix)
                        Ainv = np.eye(4)
                        Ainv[:3, :3] = A[:3, :3].T
                        child = Frame(mid, CONST_SE3, Ainv, name=prefix + j.child)
                        j.config = mid.config
                    if j.config is None:
                        j.config = child.config
                _mark(child, 'link', j.child, prefix)
                link_frames[j.child] = child
                grow(j.child, child)

        grow(plan.root, root_frame)
    finally:
        system.resume_structure_changes()
    # link frames in file order
    link_frames = {l: link_frames[l] for l in plan.links}
    if True:
        from .mechanics import potentials as _pot, forces as _frc, constraints as _con
        gravity = options['gravity']
        if gravity is not None:
            existing = [p for p in system.potentials if isinstance(p, _pot.Gravity)]
            if existing:
                if not np.allclose(existing[0].gravity, gravity):
                    warnings.warn('the system already has gravity %s; not adding %s'
                                  % (existing[0].gravity, list(gravity)), UserWarning,
                                  stacklevel=3)
                forces['gravity'] = existing[0]
            else:
                forces['gravity'] = _pot.Gravity(system, gravity, name=prefix + 'gravity')
        moving = [j for j in joints if j.moving]
        damp = {j.config: j.damping for j in moving if j.damping > 0}
        if damp:
            forces['damping'] = _frc.Damping(system, 0.0, damp, name=prefix + 'damping')
        if options['friction']:
            fr = {j.config: j.friction for j in moving if j.friction > 0}
            if fr:
                forces['friction'] = _frc.SmoothCoulombFriction(
                    system, fr, options['friction_velocity'], name=prefix + 'friction')
        if options['enforce_limits']:
            lim = {j.config: (j.lower, j.upper) for j in moving
                   if j.mimic is None and (np.isfinite(j.lower) or np.isfinite(j.upper))}
            if lim:
                forces['limits'] = _frc.JointLimits(
                    system, lim, options['limit_stiffness'], options['limit_damping'],
                    options['limit_width'], name=prefix + 'limits')
        mimics = []
        system.hold_structure_changes()     # one structure update for all inputs/constraints
        try:
            for j in joints:
                if j.name in options['actuated_set'] and j.name not in kinematic:
                    cf = _frc.ConfigForce(system, j.config, prefix + j.name,
                                          name=prefix + j.name)
                    j.input = cf.finput
            for j in joints:
                if j.mimic is not None:
                    ref, mult, off = j.mimic
                    mimics.append(_con.Mimic(system, j.config, by_name[ref].config, mult, off,
                                             name=prefix + j.name + HELPER_SEP + 'mimic'))
        finally:
            system.resume_structure_changes()
        forces['mimic'] = mimics
    # initial configuration: zeros, mimic joints consistent (in dependency order)
    q = system.data.q
    for _ in range(len(mimics) + 1):
        for con in mimics:
            q[con.config.index] = con.multiplier * q[con.reference.index] + con.offset
    system.data.invalidate()
    return URDFRobot(system, plan, prefix, joints, link_frames, forces)


def _generic_q(robot):
    """A deterministic, generic configuration inside the limits (mimics consistent)."""
    system = robot.system
    q = system.q
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    for n, j in enumerate(robot._moving()):
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
    mine = [j for j in robot._moving() if not j.config.kinematic]
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
    bad = [j for j, d in zip(keep, np.diag(Mr)) if not d > 1e-12 * scale]
    if not bad and len(keep):
        ev = np.linalg.eigvalsh(Mr)
        if ev.min() <= 1e-13 * scale:
            return [], True
    return bad, False


def _import(model_root, where, system, prefix, gravity, base_xyz, base_rpy, base_pose,
            actuated, friction, friction_velocity, enforce_limits,
            limit_stiffness, limit_damping, limit_width, massless):
    model = _to_urdf_model(model_root, where)
    plan = _make_plan(model, where)
    prefix = '' if prefix is None else str(prefix)
    if massless not in ('error', 'warn', 'kinematic'):
        raise ValueError("massless must be 'error', 'warn' or 'kinematic', got %r"
                         % (massless,))
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
        xyz = _finite(base_xyz if base_xyz is not None else (0, 0, 0), 'base_xyz')
        rpy = _finite(base_rpy if base_rpy is not None else (0, 0, 0), 'base_rpy')
        base = origin_matrix(xyz, rpy)
    moving = [j.name for j in plan.joints if j.moving]
    if actuated == 'all':
        act = [j.name for j in plan.joints if j.moving and j.mimic is None]
    elif actuated is None:
        act = []
    else:
        act = list(actuated)
        for n in act:
            if n not in moving:
                raise URDFError('%s: actuated joint %r is not a moving joint of the robot '
                                '(moving joints: %s)' % (where, n, ', '.join(moving)))
    options = dict(gravity=gravity, friction=bool(friction),
                   friction_velocity=float(friction_velocity),
                   enforce_limits=bool(enforce_limits), limit_stiffness=limit_stiffness,
                   limit_damping=limit_damping, limit_width=limit_width,
                   actuated_set=set(act))
    frame_names = _helper_names(plan, prefix)
    if system is not None:
        _check_target(system, plan, prefix, frame_names, act)
    # build once in a scratch system to validate the dynamics (nothing half-imported)
    scratch = System()
    try:
        robot = _build(plan, scratch, prefix, base, set(), options)
    except ValueError as err:
        raise URDFError('%s: %s' % (where, err)) from None
    bad, singular = _massless_joints(robot)
    kinematic = set()
    if bad or singular:
        if singular:
            msg = ('%s: the mass matrix is singular at a generic configuration (some joints '
                   'move mass only along the same directions as others)' % where)
        else:
            msg = ('%s: dynamic joint(s) %s move no mass (child links %s and below are '
                   'massless); add <inertial> or import with massless="kinematic"'
                   % (where, ', '.join(repr(j.name) for j in bad),
                      ', '.join(repr(j.child) for j in bad)))
        if massless == 'error':
            raise URDFError(msg)
        if massless == 'warn' or singular:
            warnings.warn(msg, UserWarning, stacklevel=3)
        else:
            kinematic = {j.name for j in bad}
    if system is None and not kinematic:
        result = scratch
    else:
        result = System() if system is None else system
        robot = _build(plan, result, prefix, base, kinematic, options)
    if not hasattr(result, 'urdf_robots'):
        result.urdf_robots = []
    result.urdf_robots.append(robot)
    result.urdf = robot
    return result


def import_urdf(source, system=None, prefix=None, gravity=(0.0, 0.0, -9.81), base_xyz=None,
                base_rpy=None, base_pose=None, actuated='all', friction=False,
                friction_velocity=1e-2, enforce_limits=False, limit_stiffness=1e4,
                limit_damping=10.0, limit_width=1e-3, massless='error', _where=None):
    """Build a :class:`System` from a URDF given as an XML string (``robot_description``).

    Parameters
    ----------
    source : str or bytes
        The URDF XML.
    system : System, optional
        Add the robot to this system (with a ``prefix`` for a second copy); a new System
        is created otherwise.  On any error the system is left untouched.
    prefix : str, optional
        Prepended to every frame, config, input, force and constraint name.
    gravity : (3,) or None
        Gravity [m/s^2] (added unless None or the system already has a Gravity).
    base_xyz, base_rpy / base_pose
        Pose of the root link in the world: xyz [m] + URDF rpy [rad], or a (4, 4) matrix.
        Default: the root link at the origin (a root link named ``world`` is the world).
    actuated : 'all', list of joint names, or None
        Joints that get a :class:`forces.ConfigForce` input named ``prefix + joint``.
    friction : bool
        Add ``<dynamics friction>`` as :class:`forces.SmoothCoulombFriction` with velocity
        scale ``friction_velocity`` [rad/s or m/s].
    enforce_limits : bool
        Add a :class:`forces.JointLimits` spring-damper (``limit_stiffness`` [N m/rad],
        ``limit_damping`` [N m s/rad], ``limit_width`` [rad]) beyond ``<limit lower upper>``.
    massless : 'error' | 'warn' | 'kinematic'
        What to do with moving joints that move no mass (see the module docstring).

    Returns
    -------
    System, with ``system.urdf`` the :class:`URDFRobot` of this import.

    Raises
    ------
    URDFError (a ValueError) naming the element at fault.
    """
    where = _where or 'URDF'
    root = _parse_xml(source, where)
    name = root.get('name')
    if _where is None and name:
        where = 'URDF robot %r' % name
    return _import(root, where, system, prefix, gravity, base_xyz, base_rpy, base_pose,
                   actuated, friction, friction_velocity, enforce_limits,
                   limit_stiffness, limit_damping, limit_width, massless)


def _run_xacro(filename, args):
    try:
        import xacro
    except ImportError as err:    # pragma: no cover
        raise ImportError('.xacro files need xacro (pip install xacro): %s' % err)
    mappings = {str(k): str(v) for k, v in (args or {}).items()}
    import io
    import contextlib
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            doc = xacro.process_file(filename, mappings=mappings)
        return doc.toxml()
    except SystemExit:
        raise URDFError('xacro %r failed: %s' % (filename, buf.getvalue().strip())) from None
    except Exception as err:      # xacro raises XacroException, expat errors, NameError, ...
        msg = str(err) or type(err).__name__
        extra = buf.getvalue().strip()
        raise URDFError('xacro %r: %s%s' % (filename, msg, (' (%s)' % extra) if extra else '')
                        ) from None


def import_urdf_file(filename, system=None, prefix=None, xacro_args=None, **options):
    """Build a System from a ``.urdf`` file, or a ``.xacro`` file with ``xacro_args``.

    ``xacro_args``: ``{name: value}`` for ``<xacro:arg>`` (a ``.xacro`` suffix or any
    ``xacro_args`` selects xacro processing).  Other keywords: see :func:`import_urdf`.
    """
    filename = os.fspath(filename)
    where = 'URDF file %r' % filename
    if not os.path.isfile(filename):
        raise URDFError('%s: no such file' % where)
    if filename.endswith('.xacro') or xacro_args is not None:
        try:
            with open(filename, 'rb') as fh:
                raw = fh.read()
        except OSError as err:
            raise URDFError('%s: cannot read: %s' % (where, err)) from None
        if b'<!DOCTYPE' in raw or b'<!ENTITY' in raw:
            raise URDFSecurityError('xacro file %r: DOCTYPE/ENTITY declarations are not '
                                    'allowed (entity expansion and external entities are '
                                    'refused)' % filename)
        text = _run_xacro(filename, xacro_args)
        where = 'xacro file %r' % filename
    else:
        try:
            with open(filename, 'rb') as fh:
                text = fh.read()
        except OSError as err:
            raise URDFError('%s: cannot read: %s' % (where, err)) from None
    return import_urdf(text, system=system, prefix=prefix, _where=where, **options)
