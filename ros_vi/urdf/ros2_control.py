"""The ``<ros2_control>`` block of a URDF: which command and state interfaces each joint has.

ros2_control's hardware_interface reads every ``<ros2_control name=... type=...>`` child of
``<robot>``; this module reads the same elements into immutable records so the simulator can
offer the interfaces a robot declares (docs/urdf-import.md, "The ros2_control block"):

* :func:`read_ros2_control` -- the blocks as written (:class:`Ros2ControlBlock`: the
  ``<hardware>`` plugin and parameters, each ``<joint>``'s ``<command_interface>`` and
  ``<state_interface>`` elements with their ``min``/``max``/``initial_value`` parameters and
  the joint's own ``<param>`` elements; ``<sensor>`` and ``<gpio>`` elements are kept but
  not simulated);
* :func:`check_ros2_control` -- the blocks against the URDF's joints;
* :func:`joint_controls` -- the per-joint facts the simulator uses (:class:`JointControl`:
  the simulated command interfaces, their bounds, the initial position and velocity).

The importer runs the first two (``system.urdf.ros2_control``, ``system.urdf.joint_controls``).
Errors are :class:`~.errors.URDFError` naming the block, joint, interface and parameter;
what ros_vi can only ignore is a tolerated quirk (a :class:`~.tolerance.URDFWarning`; an
error with ``strict=True``).
"""
import math
from dataclasses import dataclass, field
from collections.abc import Mapping as _MappingABC
from typing import Mapping, Optional, Tuple

from ..errors import name_list
from .errors import URDFError

__all__ = ['InterfaceSpec', 'ComponentInterfaces', 'Ros2ControlBlock', 'JointControl',
           'read_ros2_control', 'check_ros2_control', 'joint_controls',
           'SIMULATED_INTERFACES', 'BLOCK_TYPES']

# the interfaces ros_vi simulates, for commands and for states (ros2_control's
# hardware_interface names them HW_IF_POSITION, HW_IF_VELOCITY, HW_IF_EFFORT)
SIMULATED_INTERFACES = ('position', 'velocity', 'effort')
BLOCK_TYPES = ('system', 'actuator', 'sensor')
# children of <ros2_control> that ros2_control reads; ros_vi uses <hardware> and <joint>
_BLOCK_CHILDREN = ('hardware', 'properties', 'joint', 'sensor', 'gpio', 'transmission')
_NUMERIC_PARAMS = ('min', 'max', 'initial_value')


class _FrozenMapping(_MappingABC):
    """A read-only mapping over its own dict.  Not ``types.MappingProxyType``: that one cannot
    be copied or pickled, and a System holding a URDF robot is deep-copied (a rollout's plant
    with other masses or damping) and sent to other processes (sweeps)."""
    __slots__ = ('_items',)

    def __init__(self, mapping=()):
        self._items = dict(mapping)

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return 'frozen(%r)' % (self._items,)


def _frozen(mapping=()):
    return _FrozenMapping(mapping)


@dataclass(frozen=True)
class InterfaceSpec:
    """One ``<command_interface>`` or ``<state_interface>`` as written.

    ``name``: the interface name (``'position'``, ``'velocity'``, ``'effort'``, or any other
    string); ``min``, ``max``: its ``<param name="min">``/``"max"`` in the interface's units
    (rad or m, rad/s or m/s, N m or N for the standard names; ``-inf``/``inf`` when absent);
    ``initial_value``: ``<param name="initial_value">`` (float, None when absent);
    ``params``: every other ``<param>``, name -> text (str, whitespace stripped).
    """
    name: str
    min: float = -math.inf
    max: float = math.inf
    initial_value: Optional[float] = None
    params: Mapping[str, str] = field(default_factory=_frozen)


@dataclass(frozen=True)
class ComponentInterfaces:
    """A ``<joint>``, ``<sensor>`` or ``<gpio>`` element of a block.

    ``name``: the element's ``name`` (a URDF joint name for a joint); ``command``,
    ``state``: interface name -> :class:`InterfaceSpec`, in file order; ``params``: the
    element's own ``<param>`` elements, name -> text; ``mimic``: a joint's ``mimic``
    attribute (True/False; None when absent or for sensors and gpios).
    """
    name: str
    command: Mapping[str, InterfaceSpec] = field(default_factory=_frozen)
    state: Mapping[str, InterfaceSpec] = field(default_factory=_frozen)
    params: Mapping[str, str] = field(default_factory=_frozen)
    mimic: Optional[bool] = None


@dataclass(frozen=True)
class Ros2ControlBlock:
    """One ``<ros2_control name=... type=...>`` element.

    ``name``; ``type``: ``'system'``, ``'actuator'`` or ``'sensor'``; ``plugin``: the
    ``<hardware><plugin>`` text (None when absent; ros_vi loads no plugin, the simulator is
    the hardware); ``hardware_params``: the ``<hardware>``'s ``<param>`` elements, name ->
    text; ``joints``, ``sensors``, ``gpios``: name -> :class:`ComponentInterfaces`, in file
    order (sensors and gpios are read and kept, not simulated).
    """
    name: str
    type: str
    plugin: Optional[str] = None
    hardware_params: Mapping[str, str] = field(default_factory=_frozen)
    joints: Mapping[str, ComponentInterfaces] = field(default_factory=_frozen)
    sensors: Mapping[str, ComponentInterfaces] = field(default_factory=_frozen)
    gpios: Mapping[str, ComponentInterfaces] = field(default_factory=_frozen)


@dataclass(frozen=True)
class JointControl:
    """What the blocks say about one simulated joint (see :func:`joint_controls`).

    ``joint``: the URDF joint name; ``block``: the name of the block that declares it;
    ``command_interfaces``: the simulated command interfaces it declares (a tuple of
    ``'position'``, ``'velocity'``, ``'effort'``, in file order; empty for a block of type
    ``sensor``); ``bounds``: interface -> ``(min, max)`` as declared (rad or m, rad/s or
    m/s, N m or N; ``-inf``/``inf`` when absent; ros2_control intersects them with the
    URDF ``<limit>``, so does the simulator); ``initial_position`` [rad or m],
    ``initial_velocity`` [rad/s or m/s]: the ``initial_value`` of the ``position`` and
    ``velocity`` state interfaces, clipped to the URDF limits (None when not given).
    """
    joint: str
    block: str
    command_interfaces: Tuple[str, ...] = ()
    bounds: Mapping[str, Tuple[float, float]] = field(default_factory=_frozen)
    initial_position: Optional[float] = None
    initial_velocity: Optional[float] = None


# ------------------------------------------------------------------------- reading
def _attribute(el, attr, what):
    value = el.get(attr)
    if value is None or not value.strip():
        raise URDFError('%s: <%s> (line %s) has no %s attribute' % (what, el.tag, el.sourceline,
                                                                    attr))
    return value.strip()


def _children(el, tag):
    return [c for c in el if isinstance(c.tag, str) and c.tag == tag]


def _params(el, what):
    """The ``<param name=...>text</param>`` children of ``el``, name -> stripped text (a
    repeated name keeps its last value, as ros2_control's map does)."""
    out = {}
    for p in _children(el, 'param'):
        out[_attribute(p, 'name', what)] = (p.text or '').strip()
    return out


def _number(text, what, allow_infinite):
    """A parameter's text as a float; ros2_control parses these with std::stod after
    xacro, so only plain decimal numbers (and ``inf`` for bounds) are accepted."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or math.isnan(value) or (math.isinf(value) and not allow_infinite):
        raise URDFError('%s is %r, not a %snumber' % (what, text,
                                                      '' if allow_infinite else 'finite '))
    return value


def _interface(el, what):
    name = _attribute(el, 'name', what)
    what = '%s %s %r' % (what, el.tag, name)
    params = _params(el, what)
    numbers = {}
    for key in _NUMERIC_PARAMS:
        if key in params:
            numbers[key] = _number(params.pop(key), '%s: <param name="%s">' % (what, key),
                                   allow_infinite=key != 'initial_value')
    lo, hi = numbers.get('min', -math.inf), numbers.get('max', math.inf)
    if lo > hi:
        raise URDFError('%s: min %g > max %g' % (what, lo, hi))
    return InterfaceSpec(name, lo, hi, numbers.get('initial_value'), _frozen(params))


def _component(el, what, joint):
    name = _attribute(el, 'name', what)
    what = '%s %s %r' % (what, el.tag, name)
    mimic = None
    if joint and el.get('mimic') is not None:
        text = el.get('mimic').strip().lower()
        if text not in ('true', 'false'):
            raise URDFError('%s: mimic=%r (ros2_control reads "true" or "false")'
                            % (what, el.get('mimic')))
        mimic = text == 'true'
    kinds = {}
    for kind in ('command_interface', 'state_interface'):
        specs = {}
        for child in _children(el, kind):
            spec = _interface(child, what)
            if spec.name in specs:
                raise URDFError('%s: declares the %s %r twice' % (what, kind, spec.name))
            specs[spec.name] = spec
        kinds[kind] = _frozen(specs)
    return ComponentInterfaces(name, kinds['command_interface'], kinds['state_interface'],
                               _frozen(_params(el, what)), mimic)


def read_ros2_control(root, where, tol):
    """The ``<ros2_control>`` children of a parsed ``<robot>`` element (tuple of
    :class:`Ros2ControlBlock`, file order; empty when there is none).

    ``where`` prefixes the error messages, ``tol`` (a :class:`~.tolerance.Tolerance`)
    collects the quirks.  Raises :class:`URDFError` for what ros2_control's parser refuses
    and a simulation cannot use: a missing ``name`` or ``type``, a type other than
    system/actuator/sensor, a ``<param>`` without name, a non-numeric ``min``, ``max`` or
    ``initial_value`` (``inf`` is allowed for bounds), ``min > max``, an interface declared
    twice in one component, a joint listed twice in the block or in two blocks, a ``mimic``
    attribute other than true/false.  Tolerated: an unknown child element, a
    ``<hardware>`` without ``<plugin>``, interface names ros_vi does not simulate (all
    ignored, with a warning).
    """
    blocks = []
    owner = {}
    for el in _children(root, 'ros2_control'):
        name = _attribute(el, 'name', '%s: a <ros2_control>' % where)
        what = '%s: <ros2_control name=%r>' % (where, name)
        btype = _attribute(el, 'type', what)
        if btype not in BLOCK_TYPES:
            raise URDFError('%s: type %r is not one of %s' % (what, btype,
                                                              ', '.join(BLOCK_TYPES)))
        plugin, hardware_params = None, {}
        parts = {'joint': {}, 'sensor': {}, 'gpio': {}}
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag not in _BLOCK_CHILDREN:
                tol.tolerate('ros2_control', name, 'unknown element <%s> (line %s; '
                             'ros2_control reads %s)' % (child.tag, child.sourceline,
                                                         ', '.join(_BLOCK_CHILDREN)),
                             'ignored it')
            elif child.tag == 'hardware':
                plugins = _children(child, 'plugin')
                if plugins:
                    plugin = (plugins[0].text or '').strip() or None
                else:
                    tol.tolerate('ros2_control', name, '<hardware> has no <plugin> '
                                 '(ros2_control refuses this)', 'read the rest of the block')
                hardware_params.update(_params(child, what + ' <hardware>'))
            elif child.tag in parts:
                component = _component(child, what, child.tag == 'joint')
                if component.name in parts[child.tag]:
                    raise URDFError('%s: lists the %s %r twice' % (what, child.tag,
                                                                   component.name))
                if child.tag == 'joint':
                    if component.name in owner:
                        raise URDFError('%s: joint %r is already in <ros2_control name=%r> '
                                        '(a joint belongs to one block)'
                                        % (what, component.name, owner[component.name]))
                    owner[component.name] = name
                    _warn_unsimulated(component, name, tol)
                parts[child.tag][component.name] = component
        block = Ros2ControlBlock(name, btype, plugin, _frozen(hardware_params),
                                 _frozen(parts['joint']), _frozen(parts['sensor']),
                                 _frozen(parts['gpio']))
        if btype == 'sensor' and any(j.command for j in block.joints.values()):
            tol.tolerate('ros2_control', name, 'a block of type sensor declares command '
                         'interfaces (joints %s; a sensor takes no commands)'
                         % name_list(j.name for j in block.joints.values() if j.command),
                         'ignored them')
        blocks.append(block)
    return tuple(blocks)


def _warn_unsimulated(joint, block, tol):
    for kind, specs in (('command', joint.command), ('state', joint.state)):
        others = [n for n in specs if n not in SIMULATED_INTERFACES]
        if others:
            tol.tolerate('joint', joint.name, '<ros2_control name=%r> declares the %s '
                         'interface%s %s, which ros_vi does not simulate (it simulates %s)'
                         % (block, kind, 's' if len(others) > 1 else '',
                            name_list(others), ', '.join(SIMULATED_INTERFACES)),
                         'ignored %s' % ('them' if len(others) > 1 else 'it'))


# ------------------------------------------------------------------------- checking
def _initial_range(info, interface):
    """The URDF's range for a state interface's initial value: [lower, upper] for
    position, +-velocity limit for velocity (None for other interfaces)."""
    if interface == 'position':
        return info.lower, info.upper
    if interface == 'velocity':
        return -info.velocity, info.velocity
    return None


def _initial(info, spec):
    """A state interface's initial value, clipped to the joint's URDF range."""
    if spec is None or spec.initial_value is None:
        return None
    lo, hi = _initial_range(info, spec.name)
    return min(max(spec.initial_value, lo), hi)


def check_ros2_control(blocks, joints, where, tol):
    """Check the blocks against the URDF's joints (``joints``: name -> validated
    :class:`~.parse.JointInfo`).

    Raises :class:`URDFError`, naming the block and joint, for a joint that is not in the
    URDF, a fixed joint with command interfaces, ``mimic="true"`` on a joint without
    ``<mimic>``, a mimic joint with command interfaces whose ``mimic`` attribute is not
    ``false`` (ros2_control refuses all of these).  Tolerated with a warning: a fixed joint
    with state interfaces only (ignored), command interfaces of a mimic joint marked
    ``mimic="false"`` and initial values of a mimic joint (ignored: it follows its leader),
    interfaces of a planar or floating joint (ignored: several configs, one name), command
    interfaces on a joint whose ``<limit effort>`` is 0 (commands to it are refused), an
    initial position outside [lower, upper] or an initial velocity beyond the velocity
    limit (clipped).
    """
    for block in blocks:
        what = '%s: <ros2_control name=%r>' % (where, block.name)
        for comp in block.joints.values():
            info = joints.get(comp.name)
            if info is None:
                raise URDFError('%s: joint %r is not in the URDF (its joints: %s)'
                                % (what, comp.name, name_list(joints)))
            name = comp.name
            where_ = '<ros2_control name=%r>' % block.name
            if not info.moving:
                if comp.command:
                    raise URDFError('%s: joint %r is fixed but declares command interfaces '
                                    '%s' % (what, name, name_list(comp.command)))
                tol.tolerate('joint', name, 'a fixed joint listed in %s (ros2_control '
                             'refuses fixed joints)' % where_, 'ignored it')
                continue
            if comp.mimic and info.mimic is None:
                raise URDFError('%s: joint %r has mimic="true" but no <mimic> in the URDF'
                                % (what, name))
            if info.mimic is not None:
                if comp.command and comp.mimic is not False:
                    raise URDFError('%s: joint %r mimics %r and declares command interfaces '
                                    '%s (ros2_control refuses this unless mimic="false")'
                                    % (what, name, info.mimic[0],
                                       name_list(comp.command)))
                if comp.command:
                    tol.tolerate('joint', name, 'declares command interfaces in %s but '
                                 'follows %r (<mimic>)' % (where_, info.mimic[0]),
                                 'ignored them: the joint moves with its leader')
                if any(s.initial_value is not None for s in comp.state.values()):
                    tol.tolerate('joint', name, 'has state initial values in %s but follows '
                                 '%r (<mimic>)' % (where_, info.mimic[0]),
                                 'ignored them: the joint starts where its leader puts it')
                continue
            if info.type in ('planar', 'floating'):
                tol.tolerate('joint', name, 'a %s joint listed in %s (it has several '
                             'configs, an interface names one value)' % (info.type, where_),
                             'ignored its interfaces')
                continue
            simulated = [n for n in comp.command if n in SIMULATED_INTERFACES]
            if simulated and block.type != 'sensor' and info.effort == 0.0:
                tol.tolerate('joint', name, 'declares command interfaces %s in %s but its '
                             '<limit effort> is 0 (a passive joint)'
                             % (name_list(simulated), where_),
                             'kept them: commands to it are refused')
            for key in ('position', 'velocity'):
                spec = comp.state.get(key)
                clipped = _initial(info, spec)
                if clipped is not None and clipped != spec.initial_value:
                    lo, hi = _initial_range(info, key)
                    tol.tolerate('joint', name, '%s state initial_value %g in %s is outside '
                                 'the URDF limits [%g, %g]' % (key, spec.initial_value, where_,
                                                              lo, hi),
                                 'clipped it to %g' % clipped)


# ------------------------------------------------------------------------- merging
def joint_controls(blocks, joints):
    """The per-joint facts of the blocks for the joints a simulation commands.

    ``blocks``: :class:`Ros2ControlBlock` records (checked by :func:`check_ros2_control`);
    ``joints``: the :class:`~.parse.JointInfo` of the joints with one config each, mimic
    joints excluded, in the order wanted (e.g. config order).  Returns
    ``{joint name: JointControl}`` for those of them a block lists, in that order;
    unsimulated interface names are left out, initial values clipped to the URDF limits.
    """
    declared = {}
    for block in blocks:
        for comp in block.joints.values():
            declared[comp.name] = (block, comp)
    out = {}
    for info in joints:
        if info.name not in declared:
            continue
        block, comp = declared[info.name]
        commands = () if block.type == 'sensor' else tuple(
            n for n in comp.command if n in SIMULATED_INTERFACES)
        out[info.name] = JointControl(
            info.name, block.name, commands,
            _frozen((n, (comp.command[n].min, comp.command[n].max)) for n in commands),
            _initial(info, comp.state.get('position')),
            _initial(info, comp.state.get('velocity')))
    return out
