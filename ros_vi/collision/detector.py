"""Distances between named links and obstacles, with their gradient in q.

:class:`CollisionDetector` answers, for a configuration q of a System imported from a URDF,
how far each named pair of objects is apart (signed: negative when they overlap), where the
closest points are, and how each distance changes with q.  The geometry is computed by
coal (https://github.com/coal-library/coal); the detector supplies the poses from the
System's own kinematics and the gradient from its joint twists.

Objects: a *link* (its URDF ``<collision>`` shapes, attached to the link frame) or an
*obstacle* (:mod:`~ros_vi.collision.obstacles`, fixed in the world).

* A link with several ``<collision>`` elements is the union of its shapes: its distance is
  the minimum over the shapes (closest points of that minimum).
* A collision mesh collides as its **convex hull** (computed once, with trimesh): coal's
  signed distance needs convex shapes (a triangle soup, coal's BVH, gives unsigned
  distances and 0 in contact).  A mesh file that cannot be found is a URDFWarning from
  :func:`~ros_vi.urdf.link_geometry`, and the link collides without it.
* The gradient ``d distance / d q`` is ``n . (J_b(p_b) - J_a(p_a))``: ``p_a``, ``p_b`` the
  closest points (world) on the first and second object, ``n`` coal's unit normal from the
  first towards the second (``p_b - p_a = distance n``, so it also holds in penetration)
  and ``J_x(p)`` the (3, nQ) world Jacobian of the point p carried by the object's link
  (an obstacle: 0).  It is exact wherever the closest points are unique; where they jump
  (two shapes of a link equally close, parallel faces) the distance has a kink and the
  gradient is that of the pair coal returned.  Mimic joints are folded onto their leaders,
  like every derivative of ros_vi.
* Overlapping shapes without a closed form (a cylinder or a mesh against a box, ...) are
  measured by coal's EPA, less precisely than separated ones (see ``penetration_tolerance``);
  when EPA gives up (coal then answers -DBL_MAX: a few calls in 10^5 with tolerances below
  1e-8) the call is repeated with looser tolerances, and a RuntimeError names the pair if
  that fails too: a query never returns coal's failure value as a distance.

Speed: coal shapes, request/result objects and the pairs' distance functors are built once;
a query is one compiled kinematics call on the detector's own buffers (the System's state
is never read or moved) over the System's frame tree extended by one fixed frame per
collision shape (so the shapes' world poses come out of the same call), the moving shapes'
coal transforms updated in place, one coal call per shape pair, and for the gradient one
compiled call over the joint twists.  A detector is not thread-safe (one per thread).
"""
import math
import warnings
from collections import namedtuple

import numpy as np

from ..errors import name_list, shorten
from ..mechanics import kernel
from ..urdf import URDFWarning, link_geometry
from .obstacles import OBSTACLE_TYPES

__all__ = ['CollisionDetector', 'DistanceQuery', 'parse_pair', 'coal_module']

# coal's answer when EPA (the depth of overlapping shapes) gives up: -DBL_MAX
_FAILED = -1e300

DistanceQuery = namedtuple('DistanceQuery', 'distances points_a points_b normals jacobian')
DistanceQuery.__doc__ = """One query of a :class:`CollisionDetector` at a configuration q.

distances (npairs,) [m]: signed distance of each pair (negative: penetration depth).
points_a, points_b (npairs, 3) [m]: closest points on the pair's first and second object,
    world frame (in penetration: the deepest points, ``points_b - points_a = d n``).
normals (npairs, 3): unit normal from the first object towards the second, world frame.
jacobian (npairs, nQ) [m/rad, m/m]: d distances / d q (None unless asked for)."""


def coal_module():
    """The coal module (imported on first use: only collision queries need it)."""
    try:
        import coal
    except ImportError as err:        # pragma: no cover - coal is an install requirement
        raise ImportError('ros_vi.collision needs the coal collision library '
                          '(pip install coal): %s' % err) from None
    return coal


def parse_pair(text):
    """``'link_7:ground'`` -> ``('link_7', 'ground')`` (the form of the CLI's ``--pair`` and
    the simulator's ``distance_pairs``); ValueError naming the text otherwise."""
    parts = str(text).split(':')
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise ValueError("distance pair %r must be two object names joined by ':', e.g. "
                         "'link_7:ground'" % (text,))
    return parts[0].strip(), parts[1].strip()


class _Geometry:
    """One coal shape: the frame that carries it (0: the world), its pose in that frame and
    the coal transform of its world pose (updated per query when the frame moves)."""
    __slots__ = ('owner', 'frame', 'local', 'shape', 'transform', 'label')

    def __init__(self, owner, local, shape, label, transform):
        self.owner, self.local, self.shape, self.label = owner, local, shape, label
        self.frame = 0
        self.transform = transform


class CollisionDetector:
    """Signed distances, closest points and distance gradients between named pairs of
    links and obstacles of a System imported from a URDF.

    Parameters
    ----------
    system : System
        The model; ``system.urdf`` (or ``robot``) names the links.  Queries take q
        explicitly and never read or move ``system.data``.
    pairs : sequence of (str, str)
        Object names, a link (URDF name, without prefix) or an obstacle, e.g.
        ``[('link_7', 'ground'), ('link_7', 'cube1')]``.  Results are in this order; each
        pair's normal points from its first object towards its second.
    obstacles : dict, optional
        ``{name: Box | Sphere | Cylinder | HalfSpace}`` fixed in the world
        (:func:`~ros_vi.collision.load_obstacles` reads them from YAML).
    robot : URDFRobot, optional
        Which imported robot names the links (default ``system.urdf``, the last import).
    urdf : str or bytes, optional
        URDF XML to take the ``<collision>`` elements from instead of
        ``robot.description`` (the text the robot was imported from); ``base_dir``: the
        folder for its relative mesh paths (default ``robot.base_dir``).
    tolerance : float
        Relative convergence tolerance of coal's GJK, the iteration that finds the closest
        points of separated shapes without a closed form (a cylinder or a mesh against a
        box, ...): distances come out to about ``tolerance`` times their size, closest
        points and normals (so the gradient) to about its square root.
    penetration_tolerance : float
        The same for coal's EPA, which measures the depth of overlapping shapes without a
        closed form; coal's default (1e-6): depths to about 1e-6 m, normals (and the
        gradient) to about 1e-3 for curved shapes.  Smaller values make EPA fail now and
        then (a failed call is repeated with a looser tolerance; see the module doc).
        Spheres, boxes and half-spaces against each other are exact to rounding either way.

    Raises
    ------
    ValueError naming the culprit: an unknown object (listing the robot's links and the
    obstacles), a link without usable collision geometry (listing the links that have
    some), an obstacle named like a link, a pair of one object with itself, a bad obstacle
    or tolerance.
    """

    def __init__(self, system, pairs, obstacles=None, robot=None, urdf=None, base_dir=None,
                 tolerance=1e-12, penetration_tolerance=1e-6):
        self._coal = coal_module()
        for name, value in (('tolerance', tolerance),
                            ('penetration_tolerance', penetration_tolerance)):
            try:
                ok = math.isfinite(float(value)) and float(value) > 0
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError('%s must be a finite number > 0, got %r' % (name, value))
        robot = system.urdf if robot is None else robot
        if robot is None:
            raise ValueError('CollisionDetector needs a System imported from a URDF '
                             '(system.urdf is None)')
        self._system = system
        self._robot = robot
        text = robot.description if urdf is None else urdf
        if text is None:
            raise ValueError('robot %r has no URDF text to read <collision> from; pass '
                             'urdf=...' % robot.name)
        if base_dir is None and urdf is None:
            base_dir = robot.base_dir
        self._obstacles = dict(obstacles or {})
        for name, obstacle in self._obstacles.items():
            if type(obstacle) not in OBSTACLE_TYPES.values():
                raise ValueError('obstacle %r must be a Box, Sphere, Cylinder or HalfSpace '
                                 '(ros_vi.collision), got %r' % (name, obstacle))
        links = robot.link_names
        clash = [n for n in self._obstacles if n in links]
        if clash:
            raise ValueError('obstacle name%s %s %s also the name of a link of robot %r; '
                             'rename the obstacle' % ('s' if len(clash) > 1 else '',
                                                       name_list(clash),
                                                       'are' if len(clash) > 1 else 'is',
                                                       robot.name))
        self._pairs = [self._check_pair(p, k) for k, p in enumerate(pairs)]
        if not self._pairs:
            raise ValueError('CollisionDetector needs at least one pair of object names')
        named = {n for pair in self._pairs for n in pair}
        shapes = self._link_shapes(text, base_dir, [n for n in links if n in named])
        self._geometries = {}              # object name -> [_Geometry]
        for name in sorted(named, key=lambda n: (n not in links, n)):
            if name in self._obstacles:
                self._geometries[name] = [self._obstacle_geometry(name)]
            else:
                self._geometries[name] = shapes[name]
        coal = self._coal
        self._request = coal.DistanceRequest()
        # coal's default (1e-6) leaves normals between separated curved shapes off by
        # ~1e-3, and the gradient with them; 1e-12 costs a few more iterations only.  EPA
        # breaks down well before that, so penetration keeps its own tolerance.
        self._request.gjk_tolerance = float(tolerance)
        self._request.epa_tolerance = float(penetration_tolerance)
        self._fallbacks = []
        for epa in (1e-6, 1e-4):
            if epa > float(penetration_tolerance):
                request = coal.DistanceRequest()
                request.gjk_tolerance = max(float(tolerance), 1e-9)
                request.epa_tolerance = epa
                self._fallbacks.append(request)
        # pairs of every shape of the first object with every shape of the second; a
        # functor per shape pair keeps coal's solver set up between queries
        self._calls, self._pair_calls = [], []
        for a, b in self._pairs:
            start = len(self._calls)
            for ga in self._geometries[a]:
                for gb in self._geometries[b]:
                    self._calls.append((coal.ComputeDistance(ga.shape, gb.shape),
                                        ga.transform, gb.transform, coal.DistanceResult()))
            self._pair_calls.append(list(range(start, len(self._calls))))
        self._one_each = len(self._calls) == len(self._pairs)
        self._call_of_pair = list(range(len(self._pairs)))
        self._values = [0.0] * len(self._calls)
        n = len(self._pairs)
        self._points_a = np.zeros((n, 3))
        self._points_b = np.zeros((n, 3))
        self._normals = np.zeros((n, 3))
        self._version = None
        self._compile()

    # ------------------------------------------------------------------ set-up
    def _check_pair(self, pair, k):
        try:
            a, b = pair
        except (TypeError, ValueError):
            raise ValueError('pair %d must be two object names, got %r' % (k, pair)) from None
        names = set(self._robot.link_names) | set(self._obstacles)
        for name in (a, b):
            if not isinstance(name, str) or name not in names:
                raise ValueError('pair %d %r: unknown object %r (%s)'
                                 % (k, (a, b), name, self._valid_names()))
        if a == b:
            raise ValueError('pair %d %r names the same object twice' % (k, (a, b)))
        return a, b

    def _valid_names(self):
        links = name_list(self._robot.link_names, quote=str)
        obstacles = name_list(self._obstacles, quote=str)
        return 'links of robot %r: %s; obstacles: %s' % (self._robot.name, links, obstacles)

    def _link_shapes(self, text, base_dir, links):
        """``{link: [_Geometry]}`` for the named links; ValueError for a link without usable
        collision geometry."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always', URDFWarning)
            shapes = link_geometry(text, 'collision', base_dir=base_dir)
        for w in caught:              # the mesh warnings, once each, from the caller's line
            warnings.warn(w.message, w.category, stacklevel=3)
        with_geometry = list(dict.fromkeys(s.link for s in shapes))     # file order
        out, unusable = {}, {}
        for link in links:
            geoms = []
            for k, shape in enumerate(s for s in shapes if s.link == link):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter('always', URDFWarning)
                    g = self._shape_geometry(shape, '%s <collision> %d' % (link, k + 1))
                for w in caught:          # an unreadable mesh, a mesh without volume
                    warnings.warn(w.message, w.category, stacklevel=3)
                if g is None:
                    # why, in the error itself: the warnings may never be shown
                    why = shape.problem or '; '.join(str(w.message) for w in caught)
                    unusable.setdefault(link, []).append((shape.filename, why))
                else:
                    geoms.append(g)
            if not geoms:
                if link in unusable:
                    files, reasons = zip(*unusable[link])
                    why = 'its collision mesh%s %s cannot be used (%s)' % (
                        'es' if len(files) > 1 else '', name_list(files),
                        shorten('; '.join(r for r in reasons if r), limit=600, quote=False))
                else:
                    why = 'it has no <collision> element'
                raise ValueError('link %r has no collision geometry: %s (links with '
                                 'collision geometry: %s)'
                                 % (link, why, name_list(with_geometry, quote=str)))
            out[link] = geoms
        return out

    def _shape_geometry(self, shape, label):
        coal = self._coal
        if shape.type == 'mesh':
            tri = shape.triangles()      # link frame, origin and scale applied; None: warned
            if tri is None:
                return None
            hull = _convex_hull(*tri, label)
            if hull is None:
                return None
            points = coal.StdVec_Vec3s()
            for v in hull[0]:
                points.append(v)
            faces = coal.StdVec_Triangle()
            for a, b, c in hull[1]:
                faces.append(coal.Triangle(int(a), int(b), int(c)))
            return _Geometry(shape.link, np.eye(4), coal.Convex(points, faces), label,
                             coal.Transform3s())
        return _Geometry(shape.link, shape.origin, _primitive(coal, shape), label,
                         coal.Transform3s())

    def _obstacle_geometry(self, name):
        obstacle = self._obstacles[name]
        coal = self._coal
        if obstacle.type == 'halfspace':
            shape = coal.Halfspace(np.array(obstacle.normal), obstacle.offset)
        else:
            shape = _primitive(coal, obstacle)
        return _Geometry(None, obstacle.pose, shape, name, coal.Transform3s())

    def _compile(self):
        """The extended frame tree and the coal transforms for the current Model (again
        whenever the System's structure or a constant transform changes)."""
        system = self._system
        model = system.model
        geoms = [g for gs in self._geometries.values() for g in gs]
        for g in geoms:
            g.frame = self._robot.link_frame(g.owner).index if g.owner is not None else 0
        nf, ng = model.nf, len(geoms)
        local = np.array([g.local for g in geoms]).reshape(ng, 4, 4)
        # each shape a FIXED child of its frame: the kinematics gives its world pose too
        self._tree = (np.concatenate([model.parent, [g.frame for g in geoms]]).astype(np.int64),
                      np.concatenate([model.kind, np.full(ng, kernel.FIXED)]).astype(np.int64),
                      np.concatenate([model.value, np.zeros(ng)]),
                      np.concatenate([model.fcfg, np.full(ng, -1)]).astype(np.int64),
                      np.concatenate([model.fixedR, local[:, :3, :3]]),
                      np.concatenate([model.fixedp, local[:, :3, 3]]))
        self._R = np.zeros((nf + ng, 3, 3))
        self._P = np.zeros((nf + ng, 3))
        self._S = np.zeros((model.nt, 6))
        self._rates = np.zeros((len(self._pairs), model.nt))
        kernel.forward_kinematics_into(*self._tree, model.joint_positions(np.zeros(model.nq)),
                                       self._R, self._P)
        self._moving = []
        for k, g in enumerate(geoms):
            # views into the pose buffers: the kinematics call refreshes them in place
            R, p = self._R[nf + k], self._P[nf + k]
            g.transform.setRotation(R)
            g.transform.setTranslation(p)
            if model.frame_anc[g.frame].any():
                self._moving.append((g.transform, R, p))
        self._frame_a = np.array([self._geometries[a][0].frame for a, _ in self._pairs],
                                 dtype=np.int64)
        self._frame_b = np.array([self._geometries[b][0].frame for _, b in self._pairs],
                                 dtype=np.int64)
        self._model = model
        self._version = system.parameter_version

    # ------------------------------------------------------------------ facts
    @property
    def system(self):
        """The System whose configuration the queries take."""
        return self._system

    @property
    def pairs(self):
        """The pairs ``[(first, second)]`` in result order."""
        return list(self._pairs)

    @property
    def pair_names(self):
        """``'first:second'`` per pair, in result order."""
        return ['%s:%s' % p for p in self._pairs]

    @property
    def obstacles(self):
        """``{name: obstacle}`` given at construction."""
        return dict(self._obstacles)

    @property
    def links(self):
        """The links named in the pairs (sorted)."""
        return sorted(n for n in self._geometries if n not in self._obstacles)

    # ------------------------------------------------------------------ queries
    def query(self, q, jacobian=False):
        """:class:`DistanceQuery` at configuration ``q`` (nQ,) (``system.configs`` order):
        distances, closest points, normals and, with ``jacobian``, d distances / d q
        (npairs, nQ)."""
        distances = self._evaluate(q, True)
        J = None
        if jacobian:
            model = self._model
            kernel.joint_twists_into(model.kind, model.cframe, model.corder, self._R,
                                     self._P, self._S)
            kernel.separation_rates_into(self._S, model.frame_anc, self._frame_a,
                                         self._frame_b, self._points_a, self._points_b,
                                         self._normals, self._rates)
            J = model.fold(self._rates, axes=(1,))
            if J is self._rates:
                J = J.copy()
        return DistanceQuery(distances, self._points_a.copy(), self._points_b.copy(),
                             self._normals.copy(), J)

    def compute_distances(self, q):
        """Signed distance of each pair (npairs,) [m] at ``q`` (nQ,): positive apart,
        negative overlapping (minus the penetration depth)."""
        return self._evaluate(q, False)

    def closest_points(self, q):
        """``(points_a, points_b)``, each (npairs, 3) [m, world frame]: the closest points
        on each pair's first and second object at ``q`` (nQ,) (in penetration the deepest
        points)."""
        result = self.query(q)
        return result.points_a, result.points_b

    def in_collision(self, q, margin=0.0):
        """True if any pair is within ``margin`` [m] at ``q`` (distance <= margin; with the
        default 0 touching counts as collision)."""
        margin = float(margin)
        if not math.isfinite(margin):
            raise ValueError('margin must be a finite number [m], got %r' % (margin,))
        return bool(np.any(self.compute_distances(q) <= margin))

    def distance_jacobian(self, q):
        """d distances / d q (npairs, nQ) [m/rad, m/m] at ``q`` (nQ,); see the module doc
        for the formula and where it holds."""
        return self.query(q, jacobian=True).jacobian

    # ------------------------------------------------------------------ the hot path
    def _configuration(self, q):
        nq = self._model.nq
        if not (type(q) is np.ndarray and q.dtype == np.float64 and q.shape == (nq,)):
            q = np.asarray(q, dtype=float)
            if q.shape != (nq,):
                raise ValueError('q must have one value per config of the System (%d: %s), '
                                 'got shape %s' % (nq, name_list(
                                     (c.name for c in self._system.configs), quote=str),
                                                   q.shape))
        # coal answers garbage, not NaN, for a NaN pose; a sum of Python floats is the
        # cheapest test (a finite sum that overflows is told apart below)
        if not math.isfinite(sum(q.tolist())) and not np.all(np.isfinite(q)):
            bad = [c.name for c, x in zip(self._system.configs, q) if not math.isfinite(x)]
            raise ValueError('q must be finite; not finite: %s' % name_list(bad, quote=str))
        return q

    def _evaluate(self, q, points):
        """Distances (npairs,) at q, a new array; with ``points`` the closest points and
        normals are left in the detector's buffers."""
        if self._system.parameter_version != self._version:
            self._compile()
        q = self._configuration(q)
        kernel.forward_kinematics_into(*self._tree, self._model.joint_positions(q),
                                       self._R, self._P)
        for transform, R, p in self._moving:
            transform.setRotation(R)
            transform.setTranslation(p)
        request, values = self._request, self._values
        i = 0
        for functor, ta, tb, result in self._calls:
            # a result keeps the smallest distance it has seen: start afresh
            result.clear()
            d = functor(ta, tb, request, result)
            if not d > _FAILED:
                d = self._again(i, q)
            values[i] = d
            i += 1
        if self._one_each:
            best = self._call_of_pair
            distances = np.array(values)
        else:
            best = [min(calls, key=values.__getitem__) for calls in self._pair_calls]
            distances = np.array([values[i] for i in best])
        if points:
            pa, pb, normals, calls = self._points_a, self._points_b, self._normals, self._calls
            for k, i in enumerate(best):
                result = calls[i][3]
                pa[k] = result.getNearestPoint1()
                pb[k] = result.getNearestPoint2()
                normals[k] = result.normal
        return distances


    def _again(self, i, q):
        """Call ``i`` again with looser EPA tolerances (coal's default 1e-6, then 1e-4)
        after coal's EPA gave up (it answers -DBL_MAX then); RuntimeError naming the pair
        and q if every one fails too."""
        functor, ta, tb, result = self._calls[i]
        for request in self._fallbacks:
            result.clear()
            d = functor(ta, tb, request, result)
            if d > _FAILED:
                return d
        k = next(k for k, calls in enumerate(self._pair_calls) if i in calls)
        raise RuntimeError('coal could not measure the overlap of %s at q = %s'
                           % ('%s:%s' % self._pairs[k], list(q)))


def _primitive(coal, shape):
    """coal shape of a box, cylinder, capsule or sphere (a urdf Shape or an obstacle)."""
    if shape.type == 'box':
        return coal.Box(*(float(x) for x in shape.size))
    if shape.type == 'cylinder':
        return coal.Cylinder(float(shape.radius), float(shape.length))
    if shape.type == 'capsule':         # coal's lz: the cylindrical part, as URDF's length
        return coal.Capsule(float(shape.radius), float(shape.length))
    return coal.Sphere(float(shape.radius))


def _convex_hull(vertices, faces, label):
    """``(vertices, faces)`` of the convex hull of a mesh, or None (a URDFWarning) for a
    mesh without volume."""
    import trimesh
    try:
        hull = trimesh.Trimesh(vertices=vertices, faces=faces, process=False).convex_hull
    except Exception as err:    # noqa: BLE001 - qhull refuses flat or degenerate meshes
        warnings.warn('%s: no convex hull of the mesh (%s: %s); the link collides without '
                      'it' % (label, type(err).__name__, err), URDFWarning, stacklevel=5)
        return None
    return np.asarray(hull.vertices, dtype=float), np.asarray(hull.faces, dtype=np.int64)
