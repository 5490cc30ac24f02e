"""Parse step: URDF XML -> a validated :class:`Description` (no System is touched).

:func:`parse_xml` is the hardened XML parse: entity resolution, DTD loading and network
access are disabled, and documents with a DOCTYPE (entities) or XInclude elements are
refused, so no file other than the given one is read.  :func:`read_description` reads the
parsed ``<robot>`` with urdf_parser_py and checks everything the build step relies on: one
tree of links, supported joint types, finite numbers, limits, inertias, mimic references.
Mesh filenames (``package://``, ``file://``) are kept as strings and never opened.
"""
import logging
import math

import numpy as np

from ..errors import name_list
from .errors import URDFError, URDFParseError, URDFSecurityError
from .geometry import origin_matrix
from .inertia import judge_inertias
from .ros2_control import check_ros2_control, read_ros2_control
from .tolerance import Tolerance

__all__ = ['parse_xml', 'read_description', 'Description', 'JointInfo', 'finite',
           'SUPPORTED_JOINTS', 'MAX_DESCRIPTION_BYTES', 'MAX_LINKS', 'MAX_CONFIGS']

_log = logging.getLogger('ros_vi.urdf')

SUPPORTED_JOINTS = ('revolute', 'continuous', 'prismatic', 'fixed', 'planar', 'floating')
# the configs of a multi-degree-of-freedom joint: suffixes of the joint name
PLANAR_PARTS = ('_x', '_y', '_yaw')
FLOATING_PARTS = ('_x', '_y', '_z', '_rx', '_ry', '_rz')       # a free joint's configs
EULER_PARTS = ('_x', '_y', '_z', '_yaw', '_pitch', '_roll')    # floating_base='euler'
ROOT_JOINT = 'root_joint'     # the free joint floating_base=True puts under the root link
_XINCLUDE_NS = 'http://www.w3.org/2001/XInclude'

# The largest description read (docs/urdf-import.md, "Limits"): bytes of XML, <link> (and
# <joint>) elements, configs of the moving joints (the mass matrix is configs x configs;
# 2,000 import in about 3 s and 0.6 GB).
MAX_DESCRIPTION_BYTES = 32 << 20
MAX_LINKS = 10_000
MAX_CONFIGS = 2_000


def parse_xml(text, where):
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
    if len(data) > MAX_DESCRIPTION_BYTES:
        raise URDFError('%s: %s bytes of XML, more than the %d MiB a description may have '
                        '(MAX_DESCRIPTION_BYTES)' % (where, format(len(data), ','),
                                                     MAX_DESCRIPTION_BYTES >> 20))
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
    for tag in ('link', 'joint'):
        count = sum(1 for el in root.iterchildren(tag))
        if count > MAX_LINKS:
            raise URDFError('%s: %s <%s> elements, more than the %s a description may have '
                            '(MAX_LINKS)' % (where, format(count, ','), tag,
                                             format(MAX_LINKS, ',')))
    return root


def _drop_unread_elements(root, where, tol):
    """Remove what urdfdom ignores or accepts but urdf_parser_py chokes on (quirks)."""
    from urdf_parser_py.xml_reflection import core as xmlr_core
    from lxml import etree
    # read by .ros2_control; urdf_parser_py would log each block as an unknown tag
    for block in [el for el in root if el.tag == 'ros2_control']:
        root.remove(block)
    for tex in root.iter('texture'):
        if tex.get('filename') is not None:
            continue
        mat = tex.getparent()
        owner = mat
        while owner is not None and owner.tag not in ('link', 'robot'):
            owner = owner.getparent()
        if owner is not None and owner.tag == 'link':
            element, name = 'link', owner.get('name')
        else:
            element, name = 'material', mat.get('name') if mat is not None else None
        tol.tolerate(element, name, '<material %r> has a <texture> without filename'
                     % (mat.get('name') if mat is not None else None,),
                     'ignored the texture')
        mat.remove(tex)
    transmissions = [el for el in root if el.tag == 'transmission']
    if not transmissions:
        return
    from urdf_parser_py import urdf as _urdfpy  # noqa: F401  (registers 'urdf.transmission')
    reader = xmlr_core.value_types['urdf.transmission']
    tree = etree.ElementTree(root)
    for el in transmissions:
        saved = xmlr_core.on_error
        xmlr_core.on_error = lambda msg: None
        try:
            reader.from_xml(el, xmlr_core.Path('transmission', tree=tree))
        except Exception as err:     # whatever urdf_parser_py raises on a layout it lacks
            detail = str(err).replace('\n', ' ').strip()
            cut = detail.rfind('Exception: ')
            if cut >= 0:
                detail = detail[cut + len('Exception: '):].strip()
            tol.tolerate('transmission', el.get('name'),
                         'layout not readable by urdf_parser_py (%s, type %r: %s)'
                         % ('older PR2-style' if el.get('type') else 'unknown',
                            el.get('type'), detail),
                         'ignored it (the importer does not use transmissions)')
        finally:
            xmlr_core.on_error = saved
        root.remove(el)


def _take_rate_limits(root, where):
    """``{joint: {'acceleration': a, 'jerk': j}}`` of URDF 1.2's ``<limit acceleration
    jerk>`` [rad/s^2, rad/s^3 or m/s^2, m/s^3], numbers >= 0, taken off the XML (urdfdom
    reads them; urdf_parser_py would log each as an unknown attribute)."""
    out = {}
    for el in root.iterchildren('joint'):
        limit = el.find('limit')
        if limit is None:
            continue
        for attr in RATE_LIMITS:
            text = limit.get(attr)
            if text is None:
                continue
            what = '%s: joint %r limit %s' % (where, el.get('name'), attr)
            try:
                value = float(text)
            except ValueError:
                raise URDFParseError('%s: not a number: %r' % (what, text)) from None
            value = float(finite([value], what)[0])
            if value < 0:
                raise URDFError('%s must be >= 0, got %g' % (what, value))
            out.setdefault(el.get('name'), {})[attr] = value
            del limit.attrib[attr]
    return out


def _path_copy(path):
    new = object.__new__(type(path))
    new.__dict__.update(path.__dict__)
    return new


RATE_LIMITS = ('acceleration', 'jerk')
GEOMETRY_TAGS = ('box', 'cylinder', 'sphere', 'mesh', 'capsule')


def _register_capsule(xmlr):
    """Teach urdf_parser_py URDF 1.2's ``<capsule radius length>`` (urdfdom reads it;
    urdf_parser_py knows the four older shapes only): a reflected ``Capsule`` in its
    geometry factory, registered once."""
    factory = xmlr.value_types['urdf.geometric'].factory
    if 'capsule' in factory.typeMap:
        return

    class Capsule(xmlr.Object):
        """URDF 1.2 capsule: a cylinder of ``radius`` [m] and ``length`` [m] (its cylindrical
        part, along z, centred) closed by two hemispheres."""
        def __init__(self, radius=0.0, length=0.0):
            self.radius = radius
            self.length = length

    xmlr.reflect(Capsule, tag='capsule', params=[xmlr.Attribute('radius', float),
                                                  xmlr.Attribute('length', float)])
    factory.typeMap['capsule'] = Capsule
    factory.nameMap[Capsule] = 'capsule'


def _unknown_geometry(root):
    """Where a ``<geometry>`` holds a shape URDF does not define, as a phrase (or None)."""
    for geometry in root.iter('geometry'):
        for shape in geometry:
            if isinstance(shape.tag, str) and shape.tag not in GEOMETRY_TAGS:
                element = geometry.getparent()
                link = element.getparent() if element is not None else None
                return ('link %r <%s> (line %s): unknown geometry <%s> (URDF defines %s)'
                        % (link.get('name') if link is not None else None,
                           element.tag if element is not None else '?', shape.sourceline,
                           shape.tag, ', '.join(GEOMETRY_TAGS)))
    return None


def _to_urdf_model(root, where, tol):
    """urdf_parser_py's model from a parsed element (its warnings go to our logger)."""
    try:
        from urdf_parser_py import urdf as urdfpy
        from urdf_parser_py.xml_reflection import core as xmlr_core
    except ImportError as err:    # pragma: no cover - dependency missing
        raise ImportError('ros_vi.urdf needs urdfdom-py (pip install urdfdom-py): %s' % err)
    from lxml import etree
    _register_capsule(xmlr_core)
    if '__copy__' not in vars(xmlr_core.Path):
        # urdf_parser_py copies a Path (for error messages) per attribute read with
        # copy.copy's generic protocol: the same shallow copy, several times faster
        xmlr_core.Path.__copy__ = _path_copy
    _drop_unread_elements(root, where, tol)
    rate_limits = _take_rate_limits(root, where)
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
    except Exception as err:
        if type(err) is not Exception:
            raise
        # urdf_parser_py reports some malformed content (an unknown <geometry> shape) with
        # a bare Exception that names no element
        raise URDFParseError('%s: %s' % (where, _unknown_geometry(root) or
                                         'cannot read the URDF: %s' % err)) from None
    finally:
        xmlr_core.on_error = saved
    for msg in messages:
        _log.warning('%s: %s', where, msg)
    model.rate_limits = rate_limits          # read by _validate
    return model


class JointInfo:
    """Validated data of one URDF joint (units: rad or m for positions).

    Attributes: name, type, parent, child (link names; parent None for the root joint that
    ``floating_base=True`` adds), origin (4, 4), axis (3,) unit,
    lower, upper (``-inf``/``inf`` when absent or continuous), effort, velocity (``inf`` when
    absent), acceleration [rad/s^2 or m/s^2] and jerk [rad/s^3 or m/s^3] (URDF 1.2 ``<limit
    acceleration jerk>``; ``inf`` when absent), damping, friction, mimic (None or ``(joint, multiplier, offset)``), config
    (the :class:`Config`, None for fixed joints), input (the actuation :class:`Input` or
    None).
    """

    def __init__(self, name, jtype, parent, child):
        self.name, self.type, self.parent, self.child = name, jtype, parent, child
        self.origin = np.eye(4)
        self.axis = np.array([1.0, 0.0, 0.0])
        self.lower, self.upper = -np.inf, np.inf
        self.effort, self.velocity = np.inf, np.inf
        self.acceleration, self.jerk = np.inf, np.inf
        self.damping, self.friction = 0.0, 0.0
        self.mimic = None
        self.config = None
        self.input = None
        self.euler = False      # a floating joint imported as an Euler-angle chain

    @property
    def moving(self):
        return self.type != 'fixed'

    def __repr__(self):
        return '<JointInfo %r %s %s->%s>' % (self.name, self.type, self.parent, self.child)


class Description:
    """A validated robot description: everything the build step needs."""

    def __init__(self, name):
        self.name = name
        self.links = []            # link names, file order
        self.inertials = {}        # link -> (mass, (3,3) inertia, (4,4) origin)
        self.joints = []           # JointInfo, file order
        self.root = None
        self.children = {}         # link -> [JointInfo] (file order)
        self.ros2_control = ()     # Ros2ControlBlock, file order


def finite(values, what):
    arr = np.asarray(values, dtype=float).reshape(-1)
    if not all(map(math.isfinite, arr.tolist())):
        raise URDFError('%s: numbers must be finite, got [%s]'
                        % (what, ', '.join('%g' % x for x in arr)))
    return arr


def _pose(origin, what):
    if origin is None:
        return np.eye(4)
    xyz = finite(origin.xyz if origin.xyz is not None else (0, 0, 0), what + ' origin xyz')
    rpy = finite(origin.rpy if origin.rpy is not None else (0, 0, 0), what + ' origin rpy')
    if xyz.shape != (3,) or rpy.shape != (3,):
        raise URDFError('%s: origin xyz and rpy need 3 numbers each' % what)
    return origin_matrix(xyz, rpy)


def _check_mass(link, mass, inertia, where, tol):
    """A link's own mass [kg] is checked here; its inertia is judged with the rigid body it
    belongs to (:mod:`.inertia`, once the joints are known)."""
    if mass < 0:
        raise URDFError('%s: link %r has negative mass %g' % (where, link, mass))
    if mass == 0 and np.any(inertia != 0):
        tol.tolerate('link', link, 'zero mass but non-zero inertia',
                     'kept the inertia (the link has rotational inertia only)')


def _validate(model, where, tol, floating_base=None):
    plan = Description(getattr(model, 'name', None))
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
            mass = float(finite([inertial.mass if inertial.mass is not None else np.nan],
                                 what + ' mass')[0])
            I = inertial.inertia
            if I is None:
                Im = np.zeros((3, 3))
            else:
                vals = finite([I.ixx, I.ixy, I.ixz, I.iyy, I.iyz, I.izz], what + ' inertia')
                ixx, ixy, ixz, iyy, iyz, izz = vals
                Im = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
            _check_mass(name, mass, Im, where, tol)
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
        for attr, value in model.rate_limits.get(name, {}).items():
            setattr(info, attr, value)
        if jtype == 'floating' and floating_base == 'euler':
            info.euler = True
            tol.tolerate('joint', name, 'floating joint imported with Euler angles '
                         '(floating_base="euler")',
                         'made six configs %s (translation along the parent joint frame '
                         'x, y, z, then rotation Rz(yaw) Ry(pitch) Rx(roll)); the angles are '
                         'singular at pitch = +-90 deg' % ', '.join(
                             repr(name + p) for p in EULER_PARTS), asked=True)
        if jtype == 'planar' and j.limit is not None and j.limit.effort is not None:
            info.effort = float(finite([j.limit.effort], what + ' limit effort')[0])
        if jtype not in ('fixed', 'floating'):
            axis = finite(j.axis if j.axis is not None else (1.0, 0.0, 0.0), what + ' axis')
            if axis.shape != (3,):
                raise URDFError('%s: axis needs 3 numbers' % what)
            n = float(np.linalg.norm(axis))
            if not n > 1e-12:
                raise URDFError('%s: axis [%s] has zero length'
                            % (what, ', '.join('%g' % x for x in axis)))
            info.axis = axis / n
        if jtype not in ('fixed', 'floating'):
            lim = j.limit if jtype != 'planar' else None
            if lim is None and jtype in ('revolute', 'prismatic'):
                raise URDFError('%s: a %s joint needs a <limit effort velocity lower upper> '
                                'element' % (what, jtype))
            if lim is not None:
                eff = finite([lim.effort], what + ' limit effort')[0]
                vel = finite([lim.velocity], what + ' limit velocity')[0]
                if eff < 0 or vel < 0:
                    raise URDFError('%s: limit effort and velocity must be >= 0' % what)
                info.effort, info.velocity = float(eff), float(vel)
                if jtype != 'continuous':
                    lo = finite([lim.lower if lim.lower is not None else 0.0],
                                 what + ' limit lower')[0]
                    up = finite([lim.upper if lim.upper is not None else 0.0],
                                 what + ' limit upper')[0]
                    if lo > up:
                        raise URDFError('%s: limit lower %g > upper %g' % (what, lo, up))
                    info.lower, info.upper = float(lo), float(up)
            dyn = j.dynamics
            if dyn is not None:
                damping = dyn.damping if dyn.damping is not None else 0.0
                friction = dyn.friction if dyn.friction is not None else 0.0
                damping, friction = finite([damping, friction], what + ' dynamics')
                if damping < 0 or friction < 0:
                    raise URDFError('%s: dynamics damping and friction must be >= 0' % what)
                info.damping, info.friction = float(damping), float(friction)
            if j.mimic is not None:
                m = j.mimic
                if not m.joint:
                    raise URDFError('%s: <mimic> needs joint=...' % what)
                mult = m.multiplier if m.multiplier is not None else 1.0
                off = m.offset if m.offset is not None else 0.0
                mult, off = finite([mult, off], what + ' mimic')
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
                        'URDF must be one tree' % (where, len(roots), name_list(roots)))
    if not roots:
        raise URDFError('%s: the joints form a cycle (every link has a parent joint: %s)'
                        % (where, name_list(j.name for j in plan.joints)))
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
                        'root %r (joints %s)' % (where, name_list(lost), plan.root,
                                                 name_list(cyc)))
    for info in plan.joints:
        if info.mimic is not None and info.mimic[0] not in jseen:
            tol.tolerate('joint', info.name, 'mimics the missing joint %r' % info.mimic[0],
                         'ignored the <mimic>: %r moves freely' % info.name)
            info.mimic = None
    for info in plan.joints:
        if info.mimic is None:
            continue
        ref = info.mimic[0]
        if jseen[ref].type in ('planar', 'floating') or info.type in ('planar', 'floating'):
            raise URDFError('%s: joint %r: <mimic> of or by a %s joint is not defined'
                            % (where, info.name, 'planar or floating'))
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


RATE_LIMITS = ('acceleration', 'jerk')


def read_description(root, where, tol=None, floating_base=None, inertia='check'):
    """The validated :class:`Description` of a ``<robot>`` element from :func:`parse_xml`
    (its ``<ros2_control>`` blocks read and checked by :mod:`.ros2_control`).

    ``where`` prefixes every error message (e.g. ``"URDF file 'x.urdf'"``); ``tol``: the
    :class:`~.tolerance.Tolerance` collecting the quirks (a fresh non-strict one if None);
    ``floating_base``: None or False (``floating`` joints are free joints), True (also a
    free joint ``root_joint`` between the world and the root link, as Pinocchio's
    free-flyer) or ``'euler'`` (``floating`` joints as six Euler-angle configs);
    ``inertia``: the inertia policy, ``'check'``, ``'balance'`` or ``'repair'``
    (:mod:`.inertia`).
    """
    if floating_base not in (None, False, True, 'euler'):
        raise ValueError("floating_base must be None, False, True or 'euler', got %r"
                         % (floating_base,))
    if tol is None:
        tol = Tolerance(where)
    blocks = read_ros2_control(root, where, tol)
    plan = _validate(_to_urdf_model(root, where, tol), where, tol, floating_base)
    if floating_base is True:
        if plan.root == 'world':
            raise URDFError("%s: floating_base=True puts a free joint under the root link, but "
                            "the root link is 'world' (the robot is welded to the world by "
                            "its own joints); remove the 'world' link or import without "
                            "floating_base" % where)
        if any(j.name == ROOT_JOINT for j in plan.joints):
            raise URDFError('%s: floating_base=True adds the joint %r, but the description '
                            'already has a joint of that name' % (where, ROOT_JOINT))
        plan.joints.insert(0, JointInfo(ROOT_JOINT, 'floating', None, plan.root))
    configs = sum(len(PLANAR_PARTS) if j.type == 'planar' else
                  len(FLOATING_PARTS) if j.type == 'floating' else 1
                  for j in plan.joints if j.moving)
    if configs > MAX_CONFIGS:
        raise URDFError('%s: the moving joints have %s configs, more than the %s the importer '
                        'takes (MAX_CONFIGS)' % (where, format(configs, ','),
                                                 format(MAX_CONFIGS, ',')))
    judge_inertias(plan, where, tol, inertia)
    check_ros2_control(blocks, {j.name: j for j in plan.joints}, where, tol)
    plan.ros2_control = blocks
    return plan
