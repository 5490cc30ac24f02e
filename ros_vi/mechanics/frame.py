"""Coordinate frames: the tree that defines a mechanical system's geometry and masses.

A frame's pose relative to its parent is one of six one-parameter transforms (rotation
about / translation along the parent's x, y or z axis), parameterised by a constant or by a
:class:`Config`, or a constant SE(3) transform.  Every pose derivative has a closed form:
with ``S_j`` the world-frame twist of config ``j`` (``hat`` its 4x4 matrix)::

    dg/dq_a          = S_a^ g                      (a drives an ancestor-or-self of the frame)
    d2g/dq_a dq_b    = S_o^ S_m^ g                 (o the shallower, m the deeper of a, b)
    d(g^-1)/dq_a...  = (-1)^n g^-1 S_m^ ... S_o^   (reverse order)

and body-velocity derivatives follow by the product rule on ``vb = g^-1 dg/dt``.  The first
and second derivatives of ``g`` and ``g^-1`` for every config at once come from
:mod:`ros_vi.mechanics.pose` (``g``'s from the frame vectors, the one definition of a frame
vector's derivatives); the per-entry products above give the third and fourth orders and
the body velocity's derivatives.
"""
import itertools

import numpy as np

from .config import Config
from .data import StateMemo
from .kernel import FIXED, ROT_X, ROT_Y, ROT_Z, TRANS_X, TRANS_Y, TRANS_Z
from .pose import hat, pose_derivatives

WORLD = 'world'
RX, RY, RZ = 'rx', 'ry', 'rz'
TX, TY, TZ = 'tx', 'ty', 'tz'
CONST_SE3 = 'const_se3'

#: The kernel's joint kind (ros_vi.mechanics.kernel constants) of each transform type.
TRANSFORM_KIND = {CONST_SE3: FIXED, WORLD: FIXED, RX: ROT_X, RY: ROT_Y, RZ: ROT_Z,
         TX: TRANS_X, TY: TRANS_Y, TZ: TRANS_Z}
_ONE_PARAM = (RX, RY, RZ, TX, TY, TZ)


def _local_twist(transform):
    """Unit twist of a one-parameter transform in the frame's own coordinates."""
    xi = np.zeros(6)
    k = TRANSFORM_KIND[transform]
    if ROT_X <= k <= ROT_Z:
        xi[k - ROT_X] = 1.0
    elif TRANS_X <= k <= TRANS_Z:
        xi[3 + k - TRANS_X] = 1.0
    return xi


def _local_transform(transform, value):
    g = np.eye(4)
    k = TRANSFORM_KIND[transform]
    if ROT_X <= k <= ROT_Z:
        a = k - ROT_X
        b, d = (a + 1) % 3, (a + 2) % 3
        c, s = np.cos(value), np.sin(value)
        g[b, b], g[b, d], g[d, b], g[d, d] = c, -s, s, c
    elif TRANS_X <= k <= TRANS_Z:
        g[k - TRANS_X, 3] = value
    return g


def _inverse(g):
    inv = np.eye(4)
    R = g[:3, :3]
    inv[:3, :3] = R.T
    inv[:3, 3] = -R.T @ g[:3, 3]
    return inv


class MimicMotion:
    """A transform parameter that follows a config linearly (URDF ``<mimic>``)::

        value = multiplier * q_leader + offset        [rad or m]

    The frame gets no config of its own: it is an exact reduction of coordinates (see
    :mod:`ros_vi.mechanics.model`), not a constraint.  ``leader`` is a :class:`Config` or a
    config name; a name may refer to a config created later while the structure is on hold
    (as the URDF importer does).  ``name`` names the coordinate (the mimic joint) in joint
    states; None: the frame's name.  Create one with :func:`mimic`.
    """

    __slots__ = ('leader', 'multiplier', 'offset', 'name')

    def __init__(self, leader, multiplier=1.0, offset=0.0, name=None):
        if not isinstance(leader, (str, Config)):
            raise TypeError('mimic: leader must be a config or a config name, got %r'
                            % (leader,))
        self.leader = leader
        self.multiplier = float(multiplier)
        self.offset = float(offset)
        self.name = name
        if not (np.isfinite(self.multiplier) and np.isfinite(self.offset)):
            raise ValueError('mimic of %r: multiplier and offset must be finite'
                             % (getattr(leader, 'name', leader),))

    def __repr__(self):
        extra = '' if self.name is None else ', name=%r' % (self.name,)
        return 'mimic(%r, %r, %r%s)' % (getattr(self.leader, 'name', self.leader),
                                        self.multiplier, self.offset, extra)


def mimic(leader, multiplier=1.0, offset=0.0, name=None):
    """Transform parameter ``multiplier * q_leader + offset`` for a frame that follows
    config ``leader`` (a mimic joint).

    Example
    -------
    >>> left = trep.Frame(hand, trep.TY, 'finger_left')
    >>> right = trep.Frame(hand, trep.TY, trep.mimic('finger_left', -1.0), name='finger_right')
    """
    return MimicMotion(leader, multiplier, offset, name)


class _FrameDef:
    """A frame definition for :meth:`Frame.import_frames` (see :func:`tx` ... :func:`const_se3`)."""

    def __init__(self, transform, param, name=None, kinematic=False, mass=0.0):
        self.transform = transform
        self.param = param
        self.name = name
        self.kinematic = kinematic
        self.mass = mass


def tx(param, name=None, kinematic=False, mass=0.0):
    """Translation along the parent's x axis by a constant [m] or a new config named ``param``."""
    return _FrameDef(TX, param, name, kinematic, mass)


def ty(param, name=None, kinematic=False, mass=0.0):
    """Translation along the parent's y axis (see :func:`tx`)."""
    return _FrameDef(TY, param, name, kinematic, mass)


def tz(param, name=None, kinematic=False, mass=0.0):
    """Translation along the parent's z axis (see :func:`tx`)."""
    return _FrameDef(TZ, param, name, kinematic, mass)


def rx(param, name=None, kinematic=False, mass=0.0):
    """Rotation about the parent's x axis by a constant [rad] or a new config named ``param``."""
    return _FrameDef(RX, param, name, kinematic, mass)


def ry(param, name=None, kinematic=False, mass=0.0):
    """Rotation about the parent's y axis (see :func:`rx`)."""
    return _FrameDef(RY, param, name, kinematic, mass)


def rz(param, name=None, kinematic=False, mass=0.0):
    """Rotation about the parent's z axis (see :func:`rx`)."""
    return _FrameDef(RZ, param, name, kinematic, mass)


def const_se3(se3, name=None, kinematic=False, mass=0.0):
    """Constant SE(3) transform from the parent, given as a 4x4 matrix."""
    return _FrameDef(CONST_SE3, se3, name, kinematic, mass)


def const_txyz(xyz, name=None, kinematic=False, mass=0.0):
    """Constant translation by ``xyz`` [m] (a :func:`const_se3` with identity rotation)."""
    g = np.eye(4)
    g[:3, 3] = np.asarray(xyz, dtype=float).reshape(3)
    return _FrameDef(CONST_SE3, g, name, kinematic, mass)


def resolve_frame(system, frame, who):
    """The Frame of ``system`` named by ``frame`` (a Frame, a name or an index), for the
    components that take frames as arguments; errors name ``who`` (the component)."""
    if isinstance(frame, Frame):
        if frame.system is not system:
            raise ValueError('%s: frame %r belongs to another system' % (who, frame.name))
        return frame
    if frame is None:
        raise TypeError('%s: expected a Frame, a frame name or an index, got None' % who)
    try:
        return system.get_frame(frame)
    except KeyError as exc:
        raise KeyError('%s: %s' % (who, exc.args[0])) from None
    except IndexError as exc:
        raise IndexError('%s: %s' % (who, exc.args[0])) from None


def _check_se3(value, where):
    g = np.array(value, dtype=float)
    if g.shape != (4, 4):
        raise ValueError('%s: a CONST_SE3 transform must be a 4x4 matrix, got shape %s'
                         % (where, g.shape))
    if not np.all(np.isfinite(g)):
        raise ValueError('%s: CONST_SE3 transform has non-finite entries' % where)
    R = g[:3, :3]
    if (np.abs(R.T @ R - np.eye(3)).max() > 1e-9 or abs(np.linalg.det(R) - 1.0) > 1e-9
            or np.abs(g[3] - [0, 0, 0, 1]).max() > 0):
        raise ValueError('%s: CONST_SE3 transform is not a rigid transform '
                         '(rotation must be orthonormal, last row [0, 0, 0, 1])' % where)
    return g


_END = object()          # import_frames: no definitions left at this level


class Frame:
    """A coordinate frame in a :class:`System`'s tree.

    Parameters
    ----------
    parent : Frame
        Parent frame (``system.world_frame`` for the first level).
    transform : str
        One of ``RX, RY, RZ, TX, TY, TZ, CONST_SE3``.
    param : float, str, MimicMotion or (4, 4) array
        Constant value [rad or m], the name of a new :class:`Config` that drives the
        transform, :func:`mimic` of an existing config (the frame follows it linearly), or
        the 4x4 matrix of a ``CONST_SE3`` frame.
    name : str, optional
    kinematic : bool
        Make the new config kinematic.
    mass : float or sequence
        ``m`` or ``[m, Ixx, Iyy, Izz]``: mass [kg] at the frame origin and principal
        moments of inertia [kg m^2] about the frame's own axes.

    Example
    -------
    >>> import ros_vi as trep
    >>> system = trep.System()
    >>> arm = trep.Frame(system.world_frame, trep.RX, 'theta')
    >>> bob = trep.Frame(arm, trep.TZ, -1.0, mass=4.0)
    """

    def __init__(self, parent, transform, param=None, name=None, kinematic=False, mass=0.0):
        if transform == WORLD:
            # Only System creates the world frame.
            self._system = parent
            self._parent = None
        else:
            if not isinstance(parent, Frame):
                raise TypeError('Frame parent must be a Frame, got %r' % (parent,))
            self._system = parent._system
            self._parent = parent
        if transform not in TRANSFORM_KIND:
            raise ValueError('unknown frame transform %r (expected one of %s)'
                             % (transform, ', '.join(sorted(TRANSFORM_KIND))))
        self._transform = transform
        self.name = name
        self._children = []
        self._config = None
        self._mimic = None
        self._value = 0.0
        self._se3 = np.eye(4)
        self._mass = 0.0
        self._inertia = np.zeros((3, 3))
        self._index = -1
        # this frame's poses and pose derivatives at the current state (user forces ask
        # for the same ones for every config pair; trep caches them per state as well)
        self._results = StateMemo(self._system)
        self._uses = (None, {})
        where = 'frame %r' % (name,)
        if name is None and isinstance(param, str):
            where = 'unnamed %s frame of config %r' % (transform, param)
        system = self._system
        system.hold_structure_changes()
        try:
            try:
                if not (isinstance(mass, float) and mass == 0.0):   # zero: already set
                    self._set_mass_value(mass)  # validate before creating a Config
            except ValueError as err:
                if name is None:
                    raise ValueError(str(err).replace('frame None', where, 1)) from None
                raise
            if transform == CONST_SE3:
                self._se3 = _check_se3(param, where)
            elif transform != WORLD:
                if isinstance(param, str):
                    self._config = Config(system, name=param, kinematic=kinematic)
                    self._config._frame = self
                elif isinstance(param, MimicMotion):
                    if kinematic:
                        raise ValueError('%s: a mimic frame has no config of its own, so '
                                         'it cannot be kinematic' % where)
                    self._mimic = MimicMotion(param.leader, param.multiplier, param.offset,
                                              param.name if param.name is not None else name)
                    if system._hold <= 1:       # leader must exist unless building on hold
                        self._resolve_mimic()
                elif isinstance(param, Config):
                    raise TypeError('%s: pass a config *name* to create its config' % where)
                else:
                    value = float(param)
                    if not np.isfinite(value):
                        raise ValueError('%s: transform value must be finite, got %r'
                                         % (where, param))
                    self._value = value
            if self._parent is not None:
                self._parent._children.append(self)
            system._add_frame(self)
        finally:
            system.resume_structure_changes()

    def __repr__(self):
        return '<Frame %r %s>' % (self.name, self._transform)

    # ------------------------------------------------------------------ structure
    @property
    def system(self):
        """The :class:`System` that owns this frame (read only)."""
        return self._system

    @property
    def config(self):
        """The :class:`Config` that drives this frame's transform, or None (read only)."""
        return self._config

    @property
    def mimic(self):
        """The :class:`MimicMotion` this frame follows (``leader`` a :class:`Config`), or
        None for frames that are not mimic frames (read only)."""
        if self._mimic is None:
            return None
        return self._resolve_mimic()

    def _resolve_mimic(self):
        spec = self._mimic
        if isinstance(spec.leader, str):
            found = [c for c in self._system._configs_list if c.name == spec.leader]
            if not found:
                raise KeyError('frame %r mimics config %r, which does not exist'
                               % (self.name, spec.leader))
            spec.leader = found[0]
        elif spec.leader.system is not self._system:
            raise ValueError('frame %r mimics config %r of another system'
                             % (self.name, spec.leader.name))
        return spec

    @property
    def parent(self):
        """Parent frame; None for the world frame (read only)."""
        return self._parent

    @property
    def children(self):
        """Child frames (read only tuple)."""
        return tuple(self._children)

    @property
    def index(self):
        """Position in ``System.frames``."""
        self._system._ensure_structure()
        return self._index

    @property
    def transform_type(self):
        """One of ``WORLD, RX, RY, RZ, TX, TY, TZ, CONST_SE3`` (read only)."""
        return self._transform

    @property
    def transform_value(self):
        """The constant parameter, the config's current value, or the 4x4 CONST_SE3 matrix."""
        if self._transform == CONST_SE3:
            return self._se3.copy()
        return self._local_value()

    @transform_value.setter
    def transform_value(self, value):
        if self._transform == CONST_SE3:
            self._se3 = _check_se3(value, 'frame %r' % (self.name,))
        elif self._config is not None:
            self._config.q = value
            return
        elif self._mimic is not None:
            raise ValueError('frame %r follows config %r (mimic): set the leader instead'
                             % (self.name, self.mimic.leader.name))
        else:
            value = float(value)
            if not np.isfinite(value):
                raise ValueError('frame %r: transform value must be finite' % (self.name,))
            self._value = value
        self._system._geometry_changed()

    def set_SE3(self, Rx=(1, 0, 0), Ry=(0, 1, 0), Rz=(0, 0, 1), p=(0, 0, 0)):
        """Set a CONST_SE3 frame's transform from its axes (columns of R) and origin."""
        if self._transform != CONST_SE3:
            raise TypeError('set_SE3 only applies to CONST_SE3 frames (frame %r is %s)'
                            % (self.name, self._transform))
        g = np.eye(4)
        g[:3, 0], g[:3, 1], g[:3, 2], g[:3, 3] = Rx, Ry, Rz, p
        self.transform_value = g

    def uses_config(self, q):
        """True if this frame's pose depends on config ``q`` (identifier or object)."""
        config = self._system.get_config(q)
        model = self._system._model           # as built (this works on hold as well)
        known, answers = self._uses
        if known is not model:                 # the answers hold for one structure
            answers = {}
            self._uses = (model, answers)
        answer = answers.get(config)
        if answer is None:
            answer = answers[config] = self._reaches_config(config)
        return answer

    def _reaches_config(self, config):
        """True if ``config`` drives a frame on this frame's chain to the world, as its own
        config or as the leader of a mimic frame: the frames' own links, so that frames
        and configs added while the structure is on hold are answered as well (the same
        answer as a non-empty :meth:`_coordinate_terms` once the Model is built)."""
        node = self
        while node is not None:
            if node._config is config:
                return True
            spec = node._mimic
            if spec is not None and (spec.leader is config or spec.leader == config.name):
                return True
            node = node._parent
        return False

    def flatten_tree(self):
        """This frame and all its descendants (depth first, creation order).  Iterative: a
        chain of any depth (a URDF of thousands of links) needs no recursion."""
        out = []
        stack = [self]
        while stack:
            frame = stack.pop()
            out.append(frame)
            stack.extend(reversed(frame._children))
        return out

    def _tree_line(self):
        if self._transform == CONST_SE3:
            param = 'const_se3'
        elif self._config is not None:
            param = '%s(%r)' % (self._transform, self._config.name)
        elif self._mimic is not None:
            param = '%s(%r)' % (self._transform, self._mimic)
        elif self._transform == WORLD:
            param = 'world'
        else:
            param = '%s(%g)' % (self._transform, self._value)
        extra = ''
        if self._has_mass():
            extra = ' mass=%g I=(%g, %g, %g)' % (self._mass, self.Ixx, self.Iyy, self.Izz)
        return '<%s> %s%s' % (self.name, param, extra)

    def tree_view(self, indent=0):
        """A text drawing of this frame and its descendants."""
        lines = []
        stack = [(self, indent)]
        while stack:
            frame, depth = stack.pop()
            lines.append(' ' * depth + frame._tree_line())
            stack.extend((child, depth + 4) for child in reversed(frame._children))
        return '\n'.join(lines)

    def import_frames(self, children):
        """Add a tree of frame definitions (``[tx(...), [children...], rx(...), ...]``)."""
        system = self._system
        system.hold_structure_changes()
        try:
            # (parent, its definitions still to add, the last frame added under it)
            stack = [[self, iter(children), None]]
            while stack:
                entry = stack[-1]
                item = next(entry[1], _END)
                if item is _END:
                    stack.pop()
                elif isinstance(item, _FrameDef):
                    entry[2] = Frame(entry[0], item.transform, item.param, name=item.name,
                                     kinematic=item.kinematic, mass=item.mass)
                elif isinstance(item, (list, tuple)):
                    if entry[2] is None:
                        raise ValueError('import_frames: a list of children must follow a '
                                         'frame definition')
                    stack.append([entry[2], iter(item), None])
                else:
                    raise TypeError('import_frames: expected frame definitions (tx, rx, '
                                    'const_se3, ...) or lists, got %r' % (item,))
        finally:
            system.resume_structure_changes()

    def _export_def(self):
        args = []
        if self._transform == CONST_SE3:
            args.append('np.array(%r)' % (self._se3.tolist(),))
        elif self._config is not None:
            args.append(repr(self._config.name))
            if self._config.kinematic:
                args.append('kinematic=True')
        elif self._mimic is not None:
            args.append(repr(self._mimic))
        else:
            args.append(repr(self._value))
        if self.name is not None:
            args.append('name=%r' % (self.name,))
        if self._has_mass():
            args.append('mass=%r' % ([self._mass, self.Ixx, self.Iyy, self.Izz],))
        return '%s(%s)' % (self._transform, ', '.join(args))

    def export_frames(self, tabs=0, tab_size=4):
        """Python source (a frame definition list) that recreates this frame's children."""
        lines = []
        # a frame to write at a depth, or a closing bracket (None) at a depth
        stack = [(child, tabs) for child in reversed(self._children)]
        while stack:
            child, depth = stack.pop()
            pad = ' ' * (depth * tab_size)
            if child is None:
                lines.append('%s],' % pad)
            elif child._children:
                lines.append('%s%s, [' % (pad, child._export_def()))
                stack.append((None, depth))
                stack.extend((c, depth + 1) for c in reversed(child._children))
            else:
                lines.append('%s%s,' % (pad, child._export_def()))
        return '\n'.join(lines)

    # ------------------------------------------------------------------ inertia
    def _set_mass_value(self, mass):
        if np.isscalar(mass):
            values = [float(mass), 0.0, 0.0, 0.0]
        else:
            values = [float(v) for v in mass]
            if len(values) != 4:
                raise ValueError('frame %r: mass must be a number or [m, Ixx, Iyy, Izz]'
                                 % (self.name,))
        self.set_mass(*values)

    def set_mass(self, mass, Ixx=0.0, Iyy=0.0, Izz=0.0):
        """Set mass [kg] at the origin and principal inertias [kg m^2] about the frame axes."""
        self.set_inertia(mass, np.diag([Ixx, Iyy, Izz]))

    def set_inertia(self, mass, inertia):
        """Set mass [kg] and a full symmetric 3x3 inertia [kg m^2] about the origin, frame axes.

        (An extension of trep, used by the URDF importer for non-principal inertias.)
        """
        mass = float(mass)
        inertia = np.array(inertia, dtype=float).reshape(3, 3)
        if not (np.isfinite(mass) and np.all(np.isfinite(inertia))):
            raise ValueError('frame %r: mass and inertia must be finite' % (self.name,))
        if mass < 0:
            raise ValueError('frame %r: negative mass %g' % (self.name, mass))
        if np.abs(inertia - inertia.T).max() > 1e-12 * max(1.0, np.abs(inertia).max()):
            raise ValueError('frame %r: inertia matrix is not symmetric' % (self.name,))
        if np.linalg.eigvalsh(inertia).min() < -1e-12 * max(1.0, np.abs(inertia).max()):
            raise ValueError('frame %r: inertia matrix is not positive semi-definite'
                             % (self.name,))
        self._mass = mass
        self._inertia = 0.5 * (inertia + inertia.T)
        self._system._structure_changed()

    def _has_mass(self):
        return self._mass != 0.0 or np.any(self._inertia != 0.0)

    @property
    def mass(self):
        """Mass [kg] located at the frame origin."""
        return self._mass

    @mass.setter
    def mass(self, value):
        self.set_inertia(value, self._inertia)

    @property
    def Ixx(self):
        """Moment of inertia about the frame's x axis [kg m^2]."""
        return float(self._inertia[0, 0])

    @Ixx.setter
    def Ixx(self, value):
        inertia = self._inertia.copy()
        inertia[0, 0] = value
        self.set_inertia(self._mass, inertia)

    @property
    def Iyy(self):
        """Moment of inertia about the frame's y axis [kg m^2]."""
        return float(self._inertia[1, 1])

    @Iyy.setter
    def Iyy(self, value):
        inertia = self._inertia.copy()
        inertia[1, 1] = value
        self.set_inertia(self._mass, inertia)

    @property
    def Izz(self):
        """Moment of inertia about the frame's z axis [kg m^2]."""
        return float(self._inertia[2, 2])

    @Izz.setter
    def Izz(self, value):
        inertia = self._inertia.copy()
        inertia[2, 2] = value
        self.set_inertia(self._mass, inertia)

    @property
    def inertia(self):
        """Full (3, 3) inertia about the origin in frame axes [kg m^2] (copy)."""
        return self._inertia.copy()

    # ------------------------------------------------------------------ local transform
    def _local_value(self):
        if self._config is not None:
            return self._config.q
        if self._mimic is not None:
            m = self.mimic
            return m.multiplier * m.leader.q + m.offset
        return self._value

    def _own_rate(self):
        """d(transform parameter)/d(q of the driving config): 1, a mimic's multiplier, or
        None for a frame no config drives."""
        if self._config is not None:
            return 1.0
        if self._mimic is not None:
            return self._mimic.multiplier
        return None

    def _xi_hat(self):
        return hat(_local_twist(self._transform))

    def lg(self):
        """(4, 4) transform from the parent to this frame at the current configuration."""
        if self._transform in (CONST_SE3,):
            return self._se3.copy()
        if self._transform == WORLD:
            return np.eye(4)
        return _local_transform(self._transform, self._local_value())

    def _lg_d(self, n):
        rate = self._own_rate()
        if rate is None:
            return np.zeros((4, 4))
        return rate ** n * np.linalg.matrix_power(self._xi_hat(), n) @ self.lg()

    def lg_dq(self):
        """d lg / d q for this frame's own config, or its leader's for a mimic frame (zero
        for fixed frames)."""
        return self._lg_d(1)

    def lg_dqdq(self):
        """Second derivative of :meth:`lg`."""
        return self._lg_d(2)

    def lg_dqdqdq(self):
        """Third derivative of :meth:`lg`."""
        return self._lg_d(3)

    def lg_dqdqdqdq(self):
        """Fourth derivative of :meth:`lg`."""
        return self._lg_d(4)

    def lg_inv(self):
        """(4, 4) transform from this frame to its parent."""
        return _inverse(self.lg())

    def _lg_inv_d(self, n):
        rate = self._own_rate()
        if rate is None:
            return np.zeros((4, 4))
        return rate ** n * np.linalg.matrix_power(-self._xi_hat(), n) @ self.lg_inv()

    def lg_inv_dq(self):
        """Derivative of :meth:`lg_inv`."""
        return self._lg_inv_d(1)

    def lg_inv_dqdq(self):
        """Second derivative of :meth:`lg_inv`."""
        return self._lg_inv_d(2)

    def lg_inv_dqdqdq(self):
        """Third derivative of :meth:`lg_inv`."""
        return self._lg_inv_d(3)

    def lg_inv_dqdqdqdq(self):
        """Fourth derivative of :meth:`lg_inv`."""
        return self._lg_inv_d(4)

    def twist_hat(self):
        """(4, 4) unit twist of this frame's own transform in its own coordinates."""
        if self._own_rate() is None:
            return np.zeros((4, 4))
        return self._xi_hat()

    # ------------------------------------------------------------------ global transform
    def _kin(self):
        return self._system._kinematics()

    def _memoised(self, kind, configs, compute):
        """``compute(configs)`` memoised for the current state under ``kind`` and the
        config indices (sorted: mixed partials commute).  The result is shared: callers
        copy before handing it out."""
        get = self._system.get_config
        if len(configs) == 1:
            key = (kind, get(configs[0]).index)
        else:
            key = (kind,) + tuple(sorted([get(c).index for c in configs]))
        memo = self._results.get()
        out = memo.get(key)
        if out is None:
            out = memo[key] = compute(configs)
        return out

    def _stacked_pose(self):
        """This frame's stacked pose derivatives at the current state
        (:class:`~ros_vi.mechanics.pose.PoseDerivatives`, every config at once: one
        evaluation serves the whole config-by-config loop of a user force)."""
        return pose_derivatives(self._results.get(), self)

    def _index_of(self, q):
        return self._system.get_config(q).index

    def _pose(self):
        memo = self._results.get()
        g = memo.get('g')
        if g is None:
            R, P, _ = self._kin()
            i = self.index
            g = np.eye(4)
            g[:3, :3] = R[i]
            g[:3, 3] = P[i]
            memo['g'] = g
        return g

    def _pose_inverse(self):
        memo = self._results.get()
        g = memo.get('g_inv')
        if g is None:
            g = memo['g_inv'] = _inverse(self._pose())
        return g

    def g(self):
        """(4, 4) world pose of this frame: maps frame coordinates to world coordinates."""
        return self._pose().copy()

    def _coordinate_terms(self, configs):
        """A derivative with respect to ``configs`` as a sum over joint coordinates.

        Returns ``[(weight, thetas)]``: each ``thetas`` a list of joint coordinates (one per
        config, each moving this frame) sorted shallow to deep, ``weight`` the product of
        their rates (1 for a config's own frame, the multiplier for a mimic frame).  Empty
        when some config moves nothing on this frame's chain (the derivative is zero).
        """
        model = self._system.model
        moving = model.frame_anc[self.index]
        options = []
        for c in configs:
            ci = c if isinstance(c, (int, np.integer)) else self._system.get_config(c).index
            opts = [(w, t) for w, t in model.config_coordinates(int(ci)) if moving[t]]
            if not opts:
                return []
            options.append(opts)
        depth = model.cdepth
        terms = []
        for combo in itertools.product(*options):
            weight = 1.0
            for w, _ in combo:
                weight *= w
            terms.append((weight, sorted((t for _, t in combo), key=lambda t: depth[t])))
        return terms

    def _g_theta(self, thetas):
        """d^n g / d theta_1 .. d theta_n for sorted joint coordinates on this chain."""
        _, _, S = self._kin()
        out = self.g()
        for t in reversed(thetas):
            out = hat(S[t]) @ out
        return out

    def _g_inv_theta(self, thetas):
        _, _, S = self._kin()
        out = self.g_inv()
        for t in reversed(thetas):
            out = out @ (-hat(S[t]))
        return out

    def _g_d(self, configs):
        out = np.zeros((4, 4))
        for w, thetas in self._coordinate_terms(configs):
            out += w * self._g_theta(thetas)
        return out

    def _g_inv_d(self, configs):
        out = np.zeros((4, 4))
        for w, thetas in self._coordinate_terms(configs):
            out += w * self._g_inv_theta(thetas)
        return out

    def g_dq(self, q1):
        """d g / d q1, (4, 4)."""
        return self._stacked_pose().G1[self._index_of(q1)].copy()

    def g_dqdq(self, q1, q2):
        """d^2 g / d q1 d q2, (4, 4)."""
        return self._stacked_pose().G2[self._index_of(q1), self._index_of(q2)].copy()

    def g_dqdqdq(self, q1, q2, q3):
        """Third derivative of :meth:`g`."""
        return self._memoised('g', (q1, q2, q3), self._g_d).copy()

    def g_dqdqdqdq(self, q1, q2, q3, q4):
        """Fourth derivative of :meth:`g`."""
        return self._memoised('g', (q1, q2, q3, q4), self._g_d).copy()

    def g_inv(self):
        """(4, 4) inverse world pose (world coordinates to frame coordinates)."""
        return self._pose_inverse().copy()

    def g_inv_dq(self, q1):
        """d g^-1 / d q1, (4, 4)."""
        return self._stacked_pose().GI1[self._index_of(q1)].copy()

    def g_inv_dqdq(self, q1, q2):
        """d^2 g^-1 / d q1 d q2, (4, 4)."""
        return self._stacked_pose().GI2[self._index_of(q1), self._index_of(q2)].copy()

    def p(self):
        """World position of the origin, homogeneous (4,) = [x, y, z, 1] [m]."""
        return self._pose()[:, 3].copy()

    def p_dq(self, q1):
        """d p / d q1, homogeneous (4,) with last entry 0."""
        return self._stacked_pose().G1[self._index_of(q1), :, 3].copy()

    def p_dqdq(self, q1, q2):
        """Second derivative of :meth:`p`, (4,)."""
        return self._stacked_pose().G2[self._index_of(q1), self._index_of(q2), :, 3].copy()

    def p_dqdqdq(self, q1, q2, q3):
        """Third derivative of :meth:`p`, (4,)."""
        return self._memoised('g', (q1, q2, q3), self._g_d)[:, 3].copy()

    def p_dqdqdqdq(self, q1, q2, q3, q4):
        """Fourth derivative of :meth:`p`, (4,)."""
        return self._memoised('g', (q1, q2, q3, q4), self._g_d)[:, 3].copy()

    # ------------------------------------------------------------------ body velocity
    def _vb_term_theta(self, vel, thetas):
        """d^n (g^-1 dg/d theta_vel) / d theta_1..n: Leibniz over the split of the
        coordinate derivatives (``vel`` and ``thetas`` joint coordinates on this chain)."""
        depth = self._system.model.cdepth
        n = len(thetas)
        out = np.zeros((4, 4))
        for mask in itertools.product((0, 1), repeat=n):
            left = sorted((t for t, m in zip(thetas, mask) if m == 0), key=lambda t: depth[t])
            right = sorted([t for t, m in zip(thetas, mask) if m == 1] + [vel],
                           key=lambda t: depth[t])
            out += self._g_inv_theta(left) @ self._g_theta(right)
        return out

    def _vb_term(self, vel_config, q_configs):
        """d^n (g^-1 dg/dq_vel) / dq_{a1..an} over configs."""
        out = np.zeros((4, 4))
        terms = self._coordinate_terms([vel_config])
        if not terms:
            return out
        rest = self._coordinate_terms(list(q_configs)) if q_configs else [(1.0, [])]
        for wv, (vel,) in terms:
            for wq, thetas in rest:
                out += wv * wq * self._vb_term_theta(vel, thetas)
        return out

    def _vb_d(self, q_configs):
        system = self._system
        model = system.model
        out = np.zeros((4, 4))
        i = self.index
        _, dtheta = model.joint_positions(system.data.q, system.data.dq)
        rest = self._coordinate_terms(list(q_configs)) if q_configs else [(1.0, [])]
        for t in np.nonzero(model.frame_anc[i])[0]:
            if dtheta[t] != 0.0:
                for wq, thetas in rest:
                    out += dtheta[t] * wq * self._vb_term_theta(int(t), thetas)
        return out

    def vb(self):
        """(4, 4) body velocity g^-1 dg/dt (twist in this frame's coordinates)."""
        memo = self._results.get()
        out = memo.get('vb')
        if out is None:
            out = memo['vb'] = self._vb_d(())
        return out.copy()

    def vb_dq(self, q1):
        """d vb / d q1, (4, 4)."""
        return self._memoised('vb', (q1,), self._vb_d).copy()

    def vb_dqdq(self, q1, q2):
        """d^2 vb / d q1 d q2, (4, 4)."""
        return self._memoised('vb', (q1, q2), self._vb_d).copy()

    def vb_dqdqdq(self, q1, q2, q3):
        """Third q-derivative of :meth:`vb`, (4, 4)."""
        return self._vb_d((q1, q2, q3))

    def vb_ddq(self, dq1):
        """d vb / d dq1 (derivative with respect to a velocity), (4, 4)."""
        return self._memoised('vb_ddq', (dq1,),
                              lambda configs: self._vb_term(configs[0], [])).copy()

    def vb_ddqdq(self, dq1, q2):
        """d^2 vb / d dq1 d q2, (4, 4)."""
        return self._vb_term(dq1, [q2])

    def vb_ddqdqdq(self, dq1, q2, q3):
        """d^3 vb / d dq1 d q2 d q3, (4, 4)."""
        return self._vb_term(dq1, [q2, q3])

    def vb_ddqdqdqdq(self, dq1, q2, q3, q4):
        """d^4 vb / d dq1 d q2 d q3 d q4, (4, 4)."""
        return self._vb_term(dq1, [q2, q3, q4])
