"""The shapes of a robot description: one :class:`Shape` per ``<visual>`` or ``<collision>``
element, for drawing (``ros_vi.visual``) and for geometric queries.

:func:`link_geometry` reads the URDF through the importer's hardened parse
(:func:`~.parse.parse_xml`, then urdf_parser_py as :func:`~.parse.read_description` does), so
a description is read the same way whether it is simulated or drawn.  The rules
(docs/urdf-import.md, "Visual and collision geometry"):

* a shape's ``origin`` is its ``<origin>`` in the link frame; primitives are centred there
  (a cylinder along its z axis), as in URDF; URDF 1.2's ``<capsule radius length>`` is a
  cylinder of that radius and length along z closed by two hemispheres (its extent along z
  is ``length + 2 radius``);
* a visual's colour follows urdfdom: a ``<material name>`` declared at robot level gives its
  colour (it wins over a colour repeated in the visual); otherwise the visual's own
  ``<color>``, whose name later visuals may then use; a material with a texture only, no
  material, and a collision shape are :data:`DEFAULT_RGBA` grey; a name defined nowhere is
  a :class:`~.tolerance.URDFWarning` and grey;
* mesh filenames resolve like every other URI of ros_vi (:func:`ros_vi.resources.resolve_uri`:
  ``package://`` through the ament index, ``file://``), a relative path against ``base_dir``
  (the URDF file's folder; the current directory when None).  A mesh that cannot be found
  is a :class:`~.tolerance.URDFWarning` naming the link and the file (once per file), and its
  Shape is kept with ``path`` None: a missing mesh never stops a drawing.  A mesh file larger
  than :data:`MAX_MESH_BYTES` is not read (a warning says so).
* ``packages_only=True`` (descriptions received from a ROS graph, whose sender may be anyone
  on the domain): only ``package://`` meshes of installed packages are read, inside their
  package; ``file://`` URIs, absolute and relative paths are refused, and the warnings name
  the URIs as written, never a file found for them (so no reply says which files exist).
"""
import functools
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import resources
from ..errors import name_list, shorten
from .errors import URDFError
from .parse import _to_urdf_model, finite, parse_xml
from .geometry import origin_matrix
from .tolerance import Tolerance, URDFWarning

__all__ = ['Shape', 'link_geometry', 'resolve_mesh', 'DEFAULT_RGBA', 'SHAPE_TYPES',
           'MAX_MESH_BYTES']

DEFAULT_RGBA = (0.7, 0.7, 0.7, 1.0)
SHAPE_TYPES = ('box', 'cylinder', 'sphere', 'mesh', 'capsule')
KINDS = ('visual', 'collision')

# segments around a cylinder or a sphere's equator: a multiple of 4 puts vertices on the
# +-x and +-y axes, so a tessellated primitive spans exactly its nominal extents
SEGMENTS = 24

#: bytes of a mesh file that is read; a larger one is drawn without (a warning says so)
MAX_MESH_BYTES = 128 << 20


@dataclass(eq=False)
class Shape:
    """One ``<visual>`` or ``<collision>`` element of a link.

    link : str
        URDF name of the link the shape is attached to.
    type : str
        ``'box'``, ``'cylinder'``, ``'sphere'``, ``'capsule'`` or ``'mesh'``.
    origin : (4, 4) ndarray
        Pose of the shape in the link frame (its ``<origin>``) [m].
    rgba : tuple of 4 floats in [0, 1]
        Colour (visuals: the material's, see the module doc; collisions: grey).
    size : (3,) ndarray or None
        Box edge lengths along the shape's x, y, z [m].
    radius, length : float or None
        Cylinder and capsule (about the shape's z axis, centred) and sphere radius [m];
        cylinder length and the length of a capsule's cylindrical part [m].
    filename : str or None
        Mesh filename as written in the URDF.
    path : str or None
        The mesh file found for ``filename``; None when it could not be found.
    scale : (3,) ndarray or None
        Mesh scale along the mesh's x, y, z (1 when absent).
    material : str or None
        Name of the visual's material.
    kind : str
        ``'visual'`` or ``'collision'`` (the renderer's stand-ins for missing geometry:
        ``'skeleton'``).
    problem : str or None
        Why a mesh has no triangles (not found, too large, unreadable), once that is known
        (its URDFWarning says the same).
    show_paths : bool
        Whether messages about the mesh name the file found for it (False for a
        description from a ROS graph: ``link_geometry(..., packages_only=True)``).
    """
    link: str
    type: str
    origin: np.ndarray
    rgba: tuple = DEFAULT_RGBA
    size: np.ndarray = None
    radius: float = None
    length: float = None
    filename: str = None
    path: str = None
    scale: np.ndarray = None
    material: str = None
    kind: str = 'visual'
    problem: str = None
    show_paths: bool = True
    _triangles: dict = field(default=None, init=False, repr=False)

    def triangles(self, segments=SEGMENTS):
        """``(vertices (nv, 3) [m], faces (nf, 3) int)`` of the shape in the LINK frame
        (``origin`` applied, meshes scaled), faces wound counter-clockwise seen from
        outside; None for a mesh without a file (or one that cannot be read: a
        URDFWarning says why, once).  ``segments``: vertices around a cylinder or a
        sphere's equator (a multiple of 4).  Computed once per Shape and ``segments``."""
        if self.type == 'mesh':
            segments = None
        elif segments < 4 or segments % 4:
            raise ValueError('segments must be a multiple of 4, got %r' % (segments,))
        if self._triangles is None:
            self._triangles = {}
        if segments not in self._triangles:
            if self.type != 'mesh':
                v, f = _PRIMITIVES[self.type](self, segments)
            else:
                mesh = _mesh_triangles(self) if self.path is not None else None
                if mesh is None:
                    self._triangles[segments] = None      # warned once; not tried again
                    return None
                v, f = mesh
                v = v * self.scale
            v = v @ self.origin[:3, :3].T + self.origin[:3, 3]
            self._triangles[segments] = (v, f)
        return self._triangles[segments]

    def contains(self, point, margin=1e-9):
        """True if ``point`` (3,) [m, link frame] is inside the shape (a mesh: inside the
        bounding box of its triangles; an unresolved mesh: never)."""
        local = self.origin[:3, :3].T @ (np.asarray(point, float) - self.origin[:3, 3])
        if self.type == 'box':
            return bool(np.all(np.abs(local) <= self.size / 2 + margin))
        if self.type == 'cylinder':
            return bool(np.hypot(local[0], local[1]) <= self.radius + margin
                        and abs(local[2]) <= self.length / 2 + margin)
        if self.type == 'sphere':
            return bool(np.linalg.norm(local) <= self.radius + margin)
        if self.type == 'capsule':                  # distance to its axis segment
            h = self.length / 2
            axis = np.array([0.0, 0.0, min(max(local[2], -h), h)])
            return bool(np.linalg.norm(local - axis) <= self.radius + margin)
        tri = self.triangles()
        if tri is None or not len(tri[0]):
            return False
        v = tri[0]
        p = np.asarray(point, float)
        return bool(np.all(p >= v.min(axis=0) - margin) and np.all(p <= v.max(axis=0) + margin))


# ------------------------------------------------------------------------- tessellation
def _box(shape, n=None):
    hx, hy, hz = np.asarray(shape.size, float) / 2
    v = np.array([[sx * hx, sy * hy, sz * hz]
                  for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    # vertex index = 4 * (x > 0) + 2 * (y > 0) + (z > 0)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5),      # -x, +x
             (0, 4, 5, 1), (2, 3, 7, 6),      # -y, +y
             (0, 2, 6, 4), (1, 5, 7, 3)]      # -z, +z
    f = [tri for a, b, c, d in quads for tri in ((a, b, c), (a, c, d))]
    return v, np.array(f, dtype=np.int64)


def _cylinder(shape, n):
    r, h = float(shape.radius), float(shape.length) / 2
    a = 2 * np.pi * np.arange(n) / n
    ring = np.column_stack([r * np.cos(a), r * np.sin(a)])
    v = np.vstack([np.column_stack([ring, np.full(n, -h)]),
                   np.column_stack([ring, np.full(n, h)]),
                   [[0.0, 0.0, -h], [0.0, 0.0, h]]])
    i = np.arange(n)
    j = (i + 1) % n
    bottom, top = 2 * n, 2 * n + 1
    f = np.vstack([np.column_stack([i, j, n + j]), np.column_stack([i, n + j, n + i]),
                   np.column_stack([np.full(n, bottom), j, i]),
                   np.column_stack([np.full(n, top), n + i, n + j])])
    return v, f.astype(np.int64)


def _sphere(shape, n, half_length=0.0):
    """A sphere of ``shape.radius``; with ``half_length`` h > 0 a capsule: the southern
    hemisphere moved down by h, the northern up by h, the equator ring doubled (one ring
    each side of the cylindrical part)."""
    r = float(shape.radius)
    rings = n // 2                      # latitude bands; even: a ring on the equator
    lat = np.pi * np.arange(1, rings) / rings - np.pi / 2
    if half_length > 0.0:
        lat = np.insert(lat, rings // 2, 0.0)
    lon = 2 * np.pi * np.arange(n) / n
    body = np.stack([np.outer(np.cos(lat), np.cos(lon)), np.outer(np.cos(lat), np.sin(lon)),
                     np.outer(np.sin(lat), np.ones(n))], axis=-1).reshape(-1, 3)
    v = r * np.vstack([body, [[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]]])
    if half_length > 0.0:
        north_half = np.zeros(len(v), dtype=bool)
        north_half[(rings // 2) * n:len(body)] = True
        north_half[-1] = True
        v[:, 2] += np.where(north_half, half_length, -half_length)
    south, north = len(body), len(body) + 1
    faces = []
    i = np.arange(n)
    j = (i + 1) % n
    for k in range(len(lat) - 1):
        a, b = k * n, (k + 1) * n
        faces += [np.column_stack([a + i, a + j, b + j]), np.column_stack([a + i, b + j, b + i])]
    top = (len(lat) - 1) * n
    faces += [np.column_stack([np.full(n, south), j, i]),
              np.column_stack([np.full(n, north), top + i, top + j])]
    return v, np.vstack(faces).astype(np.int64)


def _capsule(shape, n):
    return _sphere(shape, n, float(shape.length) / 2)


_PRIMITIVES = {'box': _box, 'cylinder': _cylinder, 'sphere': _sphere, 'capsule': _capsule}


@functools.lru_cache(maxsize=64)
def _load_mesh(path, mtime_ns, size):
    """``(vertices, faces)`` of a mesh file (trimesh; a scene is merged into one mesh with
    its node transforms).  Keyed by modification time and size: an edited file is read
    again."""
    import trimesh
    mesh = trimesh.load(path, force='mesh')
    v = np.asarray(mesh.vertices, dtype=float)
    f = np.asarray(mesh.faces, dtype=np.int64).reshape(-1, 3)
    v.setflags(write=False)
    f.setflags(write=False)
    return v, f


def _mesh_triangles(shape):
    """``(vertices, faces)`` of a mesh Shape's file, or None with a URDFWarning saying why
    (also kept as ``shape.problem``)."""
    where = 'link %r: mesh %s' % (shape.link, shorten(shape.filename))
    if shape.show_paths:
        where += ' (%s)' % shape.path

    def refuse(why):
        shape.problem = why
        warnings.warn('%s %s; drawn without it' % (where, why), URDFWarning, stacklevel=5)

    try:
        st = os.stat(shape.path)
    except OSError as err:
        return refuse('cannot be read: %s' % err.strerror if shape.show_paths else
                      'cannot be read')
    if st.st_size > MAX_MESH_BYTES:
        return refuse('is %.0f MiB, more than the %d MiB a mesh file may have '
                      '(MAX_MESH_BYTES)' % (st.st_size / 2 ** 20, MAX_MESH_BYTES >> 20))
    try:
        mesh = _load_mesh(shape.path, st.st_mtime_ns, st.st_size)
        if len(mesh[1]):
            return mesh
        return refuse('cannot be read: no triangles in it')
    except ImportError:
        return refuse('cannot be read: trimesh is not installed (pip install trimesh)')
    except MemoryError:
        return refuse('cannot be read: out of memory')
    except Exception as err:    # noqa: BLE001 - any failure of a third-party file reader
        return refuse('cannot be read: %s: %s'
                      % (type(err).__name__, shorten(str(err), quote=False))
                      if shape.show_paths else 'cannot be read: %s' % type(err).__name__)


# -------------------------------------------------------------------------- reading
def resolve_mesh(filename, base_dir=None, packages_only=False):
    """``(path or None, reason)``: the file a mesh ``filename`` names, or why there is none.

    ``package://`` and ``file://`` through :func:`ros_vi.resources.resolve_uri`; other URI
    schemes are not supported; a relative path is taken against ``base_dir`` (the current
    directory when None).  ``packages_only``: only a ``package://`` URI of an installed
    package, inside the package (no ``..`` out of it); the reason then names no file.
    ``path`` is an existing file; ``reason`` is '' when found."""
    if '://' in filename and not filename.startswith(('package://', 'file://')):
        return None, 'unsupported URI scheme %r' % filename.split('://')[0]
    if packages_only:
        if not filename.startswith('package://'):
            return None, ('a description from the ROS graph may name package:// meshes of '
                          'installed packages only')
        package, _, rel = filename[len('package://'):].partition('/')
        if not rel or os.path.isabs(rel) or \
                os.path.normpath(rel).split(os.sep)[0] in ('..', '') or '\0' in rel:
            return None, 'not a file inside package %s' % shorten(package)
    try:
        path = resources.resolve_uri(filename)
    except resources.ResourceError as err:
        if packages_only:
            return None, 'package %s is not installed' % shorten(package)
        return None, str(err)
    if not os.path.isabs(path):
        path = os.path.join(base_dir if base_dir is not None else os.getcwd(), path)
    path = os.path.normpath(path)
    if not os.path.isfile(path):
        return None, 'no such file in package %s' % shorten(package) if packages_only \
            else 'no such file %s' % path
    return path, ''


def _positive(values, what):
    arr = finite(values, what)
    if np.any(arr < 0):
        raise URDFError('%s must be >= 0, got [%s]' % (what, ', '.join('%g' % x for x in arr)))
    return arr


def _rgba(color, what):
    rgba = finite(color.rgba, what + ' color rgba')
    if rgba.shape != (4,) or np.any(rgba < 0) or np.any(rgba > 1):
        raise URDFError('%s color rgba must be 4 numbers in [0, 1], got [%s]'
                        % (what, ', '.join('%g' % x for x in rgba)))
    return tuple(float(x) for x in rgba)


class _Materials:
    """urdfdom's material table: robot-level materials, then names defined in visuals."""

    def __init__(self, model, where):
        self.where = where
        self.colors = {}
        for m in model.materials:
            what = '%s: <material %r>' % (where, m.name)
            self.colors[m.name] = _rgba(m.color, what) if m.color is not None else None
        self.undefined = set()

    def rgba(self, material, what):
        if material is None:
            return DEFAULT_RGBA
        name = material.name
        if name and name in self.colors:
            rgba = self.colors[name]
        elif material.color is not None:
            rgba = _rgba(material.color, '%s <material %r>' % (what, name))
            if name:
                self.colors[name] = rgba
        elif name and material.texture is None:
            if name not in self.undefined:
                self.undefined.add(name)
                warnings.warn('%s: material %r is not defined (no <material name=%r> with a '
                              'color at robot level or in an earlier visual); drawn grey'
                              % (what, name, name), URDFWarning, stacklevel=4)
            rgba = None
        else:
            rgba = None
        return DEFAULT_RGBA if rgba is None else rgba


def link_geometry(urdf_text, kind='visual', base_dir=None, packages_only=False):
    """The shapes of a robot: one :class:`Shape` per ``<visual>`` (``kind='visual'``) or
    ``<collision>`` (``kind='collision'``) element, links in file order, elements in file
    order within a link.

    urdf_text : str or bytes
        The URDF XML (read with the importer's hardened parse).
    base_dir : str, optional
        Folder against which relative mesh paths are taken: the URDF file's folder (the
        current directory when None).
    packages_only : bool
        Read only ``package://`` meshes of installed packages, and name no file in the
        warnings (a description received from a ROS graph; see the module doc).

    Raises :class:`URDFError` naming the link for malformed geometry (negative or
    non-finite sizes, a colour outside [0, 1], a missing ``<geometry>``); a mesh that cannot
    be found is a :class:`URDFWarning` (once per file) and a Shape with ``path`` None.
    """
    if kind not in KINDS:
        raise ValueError("kind must be 'visual' or 'collision', got %r" % (kind,))
    root = parse_xml(urdf_text, 'URDF')
    name = root.get('name')
    where = 'URDF robot %r' % name if name else 'URDF'
    model = _to_urdf_model(root, where, Tolerance(where))
    materials = _Materials(model, where)
    shapes, missing = [], {}
    for link in model.links:
        elements = link.visuals if kind == 'visual' else link.collisions
        for n, element in enumerate(elements, 1):
            what = '%s: link %r <%s> %d' % (where, link.name, kind, n)
            shape = _shape(link.name, element, kind, what, base_dir, missing, packages_only)
            if kind == 'visual':
                shape.material = element.material.name if element.material is not None \
                    else None
                shape.rgba = materials.rgba(element.material, what)
            shapes.append(shape)
    for filename, (links, reason) in missing.items():
        warnings.warn('%s: mesh %s of link%s %s not found (%s); the link is drawn without it'
                      % (where, shorten(filename), 's' if len(links) > 1 else '',
                         name_list(links), reason), URDFWarning, stacklevel=2)
    return shapes


def _shape(link, element, kind, what, base_dir, missing, packages_only=False):
    g = element.geometry
    if g is None:
        raise URDFError('%s has no <geometry>' % what)
    o = element.origin
    origin = origin_matrix(finite(o.xyz if o is not None and o.xyz is not None else (0, 0, 0),
                                  what + ' origin xyz'),
                           finite(o.rpy if o is not None and o.rpy is not None else (0, 0, 0),
                                  what + ' origin rpy'))
    gtype = type(g).__name__.lower()
    shape = Shape(link, gtype, origin, kind=kind, show_paths=not packages_only)
    if gtype == 'box':
        shape.size = _positive(g.size, what + ' box size')
    elif gtype == 'cylinder':
        shape.radius, shape.length = (float(x) for x in _positive(
            [g.radius, g.length], what + ' cylinder radius, length'))
    elif gtype == 'sphere':
        shape.radius = float(_positive([g.radius], what + ' sphere radius')[0])
    elif gtype == 'capsule':
        shape.radius, shape.length = (float(x) for x in _positive(
            [g.radius, g.length], what + ' capsule radius, length'))
    elif gtype == 'mesh':
        shape.filename = g.filename
        shape.scale = _positive(g.scale if g.scale is not None else (1.0, 1.0, 1.0),
                                what + ' mesh scale')
        shape.path, reason = resolve_mesh(g.filename, base_dir, packages_only)
        if shape.path is None:
            shape.problem = 'not found: %s' % reason
            links = missing.setdefault(g.filename, ([], reason))[0]
            if link not in links:
                links.append(link)
    else:       # pragma: no cover - the parse knows these five only
        raise URDFError('%s: unsupported geometry <%s>' % (what, gtype))
    return shape
