"""Obstacles: shapes fixed in the world, and the YAML file that lists them.

Four shapes, each with its pose in the world frame (URDF conventions: ``xyz`` [m], fixed-axis
``rpy`` [rad], primitives centred on their origin):

* :class:`Box` ``(size, xyz, rpy)``: edge lengths along its x, y, z;
* :class:`Sphere` ``(radius, xyz)``;
* :class:`Cylinder` ``(radius, length, xyz, rpy)``: axis along its z;
* :class:`HalfSpace` ``(normal, offset)``: the solid ``{x : normal . x <= offset}``, e.g. the
  ground below z = 0 (``HalfSpace((0, 0, 1), 0.0)``).  Unlike a large thin box it has no
  far side: a link pushed through it is always penetrating, with the depth below the
  surface as its (negative) distance.

The obstacle file (:func:`load_obstacles`; ``ros-vi distances --obstacles``, the simulator
node's ``obstacles_file``) is YAML with one ``obstacles`` mapping, name -> shape::

    obstacles:
      ground: {halfspace: [0, 0, 1], offset: 0.0}
      cube1:  {box: [1, 1, 1], xyz: [1, 1, 0.5]}
      ball:   {sphere: 0.2, xyz: [0.5, 0, 1]}
      post:   {cylinder: [0.05, 1.0], xyz: [0, 0.6, 0.5], rpy: [0, 0, 0]}

Each entry names exactly one shape key (``box: [sx, sy, sz]``, ``sphere: radius``,
``cylinder: [radius, length]``, ``halfspace: [nx, ny, nz]``) and, for a half-space,
``offset`` (default 0), otherwise ``xyz``/``rpy`` (default 0; a sphere takes no ``rpy``).
"""
import math
import os
from dataclasses import dataclass

import numpy as np

from .. import resources
from ..bounded import load_yaml
from ..errors import name_list, shorten
from ..urdf.geometry import origin_matrix

__all__ = ['Box', 'Sphere', 'Cylinder', 'HalfSpace', 'OBSTACLE_TYPES', 'load_obstacles',
           'obstacles_from_dict']


def _vector(value, what, n=3):
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError('%s must be %d numbers, got %s' % (what, n, shorten(value))) \
            from None
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise ValueError('%s must be %d finite numbers, got %s' % (what, n, shorten(value)))
    return tuple(float(x) for x in arr)


def _length(value, what):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError('%s must be a number, got %s' % (what, shorten(value))) from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError('%s must be finite and > 0 [m], got %s' % (what, shorten(value)))
    return x


@dataclass(frozen=True)
class Box:
    """A box of edge lengths ``size`` (3,) [m] along its own x, y, z, centred at ``xyz``
    (3,) [m] and turned by URDF ``rpy`` (3,) [rad], in the world frame."""
    size: tuple
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)
    type = 'box'

    def __post_init__(self):
        size = _vector(self.size, 'Box size')
        for x in size:
            _length(x, 'Box size')
        object.__setattr__(self, 'size', size)
        object.__setattr__(self, 'xyz', _vector(self.xyz, 'Box xyz'))
        object.__setattr__(self, 'rpy', _vector(self.rpy, 'Box rpy'))

    @property
    def pose(self):
        """(4, 4) pose of the box's centre frame in the world."""
        return origin_matrix(self.xyz, self.rpy)


@dataclass(frozen=True)
class Sphere:
    """A sphere of ``radius`` [m] centred at ``xyz`` (3,) [m] in the world frame."""
    radius: float
    xyz: tuple = (0.0, 0.0, 0.0)
    type = 'sphere'

    def __post_init__(self):
        object.__setattr__(self, 'radius', _length(self.radius, 'Sphere radius'))
        object.__setattr__(self, 'xyz', _vector(self.xyz, 'Sphere xyz'))

    @property
    def pose(self):
        """(4, 4) pose of the sphere's centre in the world (no rotation)."""
        return origin_matrix(self.xyz, (0.0, 0.0, 0.0))


@dataclass(frozen=True)
class Cylinder:
    """A cylinder of ``radius`` and ``length`` [m] about its own z axis, centred at ``xyz``
    (3,) [m] and turned by URDF ``rpy`` (3,) [rad], in the world frame."""
    radius: float
    length: float
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)
    type = 'cylinder'

    def __post_init__(self):
        object.__setattr__(self, 'radius', _length(self.radius, 'Cylinder radius'))
        object.__setattr__(self, 'length', _length(self.length, 'Cylinder length'))
        object.__setattr__(self, 'xyz', _vector(self.xyz, 'Cylinder xyz'))
        object.__setattr__(self, 'rpy', _vector(self.rpy, 'Cylinder rpy'))

    @property
    def pose(self):
        """(4, 4) pose of the cylinder's centre frame in the world."""
        return origin_matrix(self.xyz, self.rpy)


@dataclass(frozen=True)
class HalfSpace:
    """The solid ``{x : normal . x <= offset}`` (world frame; ``normal`` (3,) is normalised,
    ``offset`` [m] is the signed distance of its boundary plane from the world origin)."""
    normal: tuple = (0.0, 0.0, 1.0)
    offset: float = 0.0
    type = 'halfspace'

    def __post_init__(self):
        n = np.array(_vector(self.normal, 'HalfSpace normal'))
        with np.errstate(over='ignore'):
            norm = float(np.linalg.norm(n))
        if not math.isfinite(norm):
            # the length of a normal near the largest float overflows (and n / inf would be a
            # zero normal): scaled by its largest component first
            n = n / np.abs(n).max()
            norm = float(np.linalg.norm(n))
        elif norm < 1e-12:
            raise ValueError('HalfSpace normal must not be zero, got %s' % shorten(self.normal))
        object.__setattr__(self, 'normal', tuple(float(x) for x in n / norm))
        try:
            offset = float(self.offset)
        except (TypeError, ValueError):
            offset = math.nan
        if not math.isfinite(offset):
            raise ValueError('HalfSpace offset must be a finite number [m], got %s'
                             % shorten(self.offset))
        object.__setattr__(self, 'offset', offset)

    @property
    def pose(self):
        """(4, 4) identity: a half-space is given in world coordinates."""
        return np.eye(4)


OBSTACLE_TYPES = {'box': Box, 'sphere': Sphere, 'cylinder': Cylinder, 'halfspace': HalfSpace}
_POSE_KEYS = {'box': ('xyz', 'rpy'), 'sphere': ('xyz',), 'cylinder': ('xyz', 'rpy'),
              'halfspace': ('offset',)}


def _obstacle(name, spec, where):
    what = '%s: obstacle %s' % (where, shorten(name))
    if not isinstance(spec, dict):
        raise ValueError('%s must be a mapping like {box: [1, 1, 1], xyz: [0, 0, 0.5]}, '
                         'got %s' % (what, shorten(spec)))
    kinds = [k for k in spec if k in OBSTACLE_TYPES]
    if len(kinds) != 1:
        raise ValueError('%s must name exactly one shape (%s), got %s'
                         % (what, ', '.join(OBSTACLE_TYPES),
                            name_list(kinds)))
    kind = kinds[0]
    extra = [k for k in spec if k != kind and k not in _POSE_KEYS[kind]]
    if extra:
        raise ValueError('%s: unknown key%s %s for a %s (valid: %s)'
                         % (what, 's' if len(extra) > 1 else '', name_list(extra),
                            kind, ', '.join((kind,) + _POSE_KEYS[kind])))
    value = spec[kind]
    options = {k: spec[k] for k in _POSE_KEYS[kind] if k in spec}
    try:
        if kind == 'box':
            return Box(value, **options)
        if kind == 'sphere':
            return Sphere(value, **options)
        if kind == 'cylinder':
            if not isinstance(value, (list, tuple)) or len(value) != 2:
                raise ValueError('cylinder must be [radius, length], got %s' % shorten(value))
            return Cylinder(value[0], value[1], **options)
        return HalfSpace(value, **options)
    except ValueError as err:
        raise ValueError('%s: %s' % (what, err)) from None


def obstacles_from_dict(mapping, where='obstacles'):
    """``{name: obstacle}`` (file order) from the ``obstacles`` mapping of an obstacle file
    (see the module doc); ``where`` starts every error message.  ValueError naming the bad
    entry."""
    if not isinstance(mapping, dict):
        raise ValueError('%s: obstacles must be a mapping name -> shape, got %s'
                         % (where, shorten(mapping)))
    out = {}
    for name, spec in mapping.items():
        if not isinstance(name, str) or not name:
            raise ValueError('%s: obstacle names must be non-empty strings, got %s'
                             % (where, shorten(name)))
        out[name] = _obstacle(name, spec, where)
    return out


def load_obstacles(path):
    """``{name: obstacle}`` (file order) from an obstacle YAML file (see the module doc):
    a path, ``file://`` or ``package://`` URI (:func:`ros_vi.resources.resolve_uri`), read
    by the bounded YAML loader (:func:`ros_vi.bounded.load_yaml`: size, aliases and
    duplicate keys are limited).

    Raises FileNotFoundError for a file that is not there, ValueError naming the file and
    the bad entry for anything else."""
    filename = resources.resolve_uri(os.fspath(path))
    where = 'obstacle file %r' % os.fspath(path)
    try:
        doc = load_yaml(filename, where, invalid='is not YAML')
    except FileNotFoundError:
        raise FileNotFoundError('%s: no such file' % where) from None
    except OSError as err:
        raise ValueError('%s: cannot read it: %s' % (where, err.strerror or err)) from None
    if not isinstance(doc, dict) or 'obstacles' not in doc:
        raise ValueError('%s must hold a mapping with an "obstacles" key, got %s'
                         % (where, shorten(doc)))
    unknown = [k for k in doc if k != 'obstacles']
    if unknown:
        raise ValueError('%s: unknown top-level key%s %s (only "obstacles")'
                         % (where, 's' if len(unknown) > 1 else '', name_list(unknown)))
    return obstacles_from_dict(doc['obstacles'], where)
