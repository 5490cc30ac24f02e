"""A small software renderer: a robot at given link poses, drawn with Pillow.

Flat-shaded triangles sorted back to front (the painter's algorithm), on a ground grid with
the robot's shadow (straight down) and the world axes (x red, y green, z blue), seen through
a perspective camera placed by azimuth and elevation.  It needs no display and no GPU and
takes a few milliseconds per frame for robots like the shipped ones.

* :class:`RobotScene` -- what is drawn for each link: the triangles of its shapes
  (:func:`ros_vi.urdf.link_geometry`) in the link frame, and a *skeleton* where there is
  nothing else to see: a link without drawable geometry (no visual, or a mesh that was not
  found) is a bone from its parent link's origin to its own plus small axes, so the robot is
  always visible; a shape that floats away from its link's origin (the pendulum's bob) is
  joined to it by a thin rod.
* :func:`fit_view` -- a :class:`View`: the camera that frames a whole motion (every pose of
  an animation, so the camera stays still), the ground under it and its grid.
* :func:`draw` -- one frame, a ``PIL.Image``.

Conventions: world z is up; azimuth [deg] is measured from +x towards +y (0: the camera on
+x looking back at the target, -90: on -y, world x pointing right), elevation [deg] from
the horizontal (positive: looking down).
"""
import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..urdf.geometry import axis_alignment
from ..urdf.shapes import SEGMENTS, Shape

__all__ = ['RobotScene', 'View', 'fit_view', 'draw', 'auto_azimuth']

BACKGROUND_TOP = (236, 240, 245)
BACKGROUND_BOTTOM = (196, 204, 214)
GROUND = (222, 224, 219)
GRID = (184, 188, 182)
SHADOW = (176, 179, 174)
BONE_RGBA = (0.62, 0.66, 0.72, 1.0)
JOINT_RGBA = (0.26, 0.29, 0.34, 1.0)
AXIS_COLORS = ((214, 39, 40), (44, 160, 44), (31, 119, 180))
AMBIENT = 0.38          # fraction of a face's colour seen without direct light
NEAR = 1e-3             # [m] nothing closer to the camera is drawn


class RobotScene:
    """The drawables of a robot, in its link frames.

    robot : URDFRobot
        ``system.urdf`` of the imported robot (link names, parent of each link).
    shapes : list of Shape
        From :func:`ros_vi.urdf.link_geometry` (shapes of links the robot does not have are
        an error).

    Attributes: ``links`` (the order of pose arrays: ``robot.link_names``); ``vertices``
    (nv, 3) [m] in the frame of their link ``vertex_link`` (nv,) (an index into ``links``);
    ``faces`` (nf, 3); ``face_rgb`` (nf, 3) in [0, 1]; ``face_cull`` (nf,): back faces
    hidden (closed primitives); ``drawn_links``: links with geometry of their own;
    ``skeleton``: the stand-in Shapes (``kind='skeleton'``); ``bare_links``: indices of the
    links drawn by the skeleton alone.
    """

    def __init__(self, robot, shapes):
        self.links = list(robot.link_names)
        index = {name: i for i, name in enumerate(self.links)}
        unknown = sorted({s.link for s in shapes} - set(index))
        if unknown:
            raise ValueError('shapes of links the robot has not: %s' % ', '.join(unknown))
        parent, offset = {}, {}
        for name in robot.joint_names + robot.mimic_joint_names + robot.fixed_joint_names:
            j = robot.joint(name)
            parent[j.child] = j.parent
            offset[j.child] = j.origin[:3, 3]
        self.parent = parent
        drawable = {s.link for s in shapes
                    if s.triangles() is not None and len(s.triangles()[1])}
        skeleton = _skeleton(self.links, parent, offset, drawable, shapes)
        self._gather([s for s in shapes if s.link in drawable], skeleton)
        # the root link needs no axes of its own: the world axes are drawn
        self.bare_links = [index[l] for l in self.links if l not in drawable and l in parent]
        self.knuckle = max([s.radius for s in skeleton if s.type == 'sphere'], default=0.0)

    @classmethod
    def of_bodies(cls, bodies, shapes):
        """A scene of rigid bodies that are not a URDF's links (``trep.visual``'s items
        draw a System's frames): ``bodies`` names them (the order of pose arrays),
        ``shapes`` (their ``link`` a body name) is all that is drawn, with no skeleton and
        no axes.  A body's pose may scale its frame (a string stretched between two
        points: a unit cylinder scaled along z)."""
        scene = cls.__new__(cls)
        scene.links = list(bodies)
        unknown = sorted({s.link for s in shapes} - set(scene.links))
        if unknown:
            raise ValueError('shapes of bodies the scene has not: %s' % ', '.join(unknown))
        scene.parent = {}
        scene._gather(shapes, [])
        scene.bare_links = []
        scene.knuckle = 0.0
        return scene

    def _gather(self, shapes, skeleton):
        """The triangles of ``shapes`` (drawn) and of the ``skeleton`` stand-ins, stacked
        (the arrays of the class doc) with each link's bounding points."""
        index = {name: i for i, name in enumerate(self.links)}
        verts, faces, colors, cull, owner = [], [], [], [], []
        drawn = set()
        count = 0
        for s in list(shapes) + skeleton:
            tri = s.triangles(12 if s.kind == 'skeleton' else SEGMENTS)
            if tri is None or not len(tri[1]):
                continue
            if s.kind != 'skeleton':
                drawn.add(s.link)
            v, f = tri
            verts.append(v)
            faces.append(f + count)
            count += len(v)
            owner.append(np.full(len(v), index[s.link]))
            colors.append(np.tile(np.asarray(s.rgba[:3], float), (len(f), 1)))
            # primitives are closed and wound outwards: their back faces are hidden; a
            # mesh file may be open or wound either way, so all of it is drawn
            cull.append(np.full(len(f), s.type != 'mesh'))
        self.vertices = np.vstack(verts) if verts else np.zeros((0, 3))
        self.faces = np.vstack(faces) if faces else np.zeros((0, 3), dtype=np.int64)
        self.vertex_link = np.concatenate(owner) if owner else np.zeros(0, dtype=np.int64)
        self.face_rgb = np.vstack(colors) if colors else np.zeros((0, 3))
        self.face_cull = np.concatenate(cull) if cull else np.zeros(0, dtype=bool)
        self.drawn_links = [l for l in self.links if l in drawn]
        self.skeleton = skeleton
        # points whose world positions bound the robot in any pose: each link's box of
        # vertices (8 corners) and its origin
        bound = [np.zeros((1, 3))] * len(self.links)
        for i in range(len(self.links)):
            mine = self.vertices[self.vertex_link == i]
            if len(mine):
                lo, hi = mine.min(axis=0), mine.max(axis=0)
                corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                                    for z in (lo[2], hi[2])])
                bound[i] = np.vstack([np.zeros((1, 3)), corners])
        self.bound_link = np.concatenate([np.full(len(b), i) for i, b in enumerate(bound)])
        self.bound_points = np.vstack(bound)

    def pose_array(self, poses):
        """(nlinks, 4, 4) array in :attr:`links` order from ``{link: (4, 4)}`` (or an
        array already in that order)."""
        if isinstance(poses, dict):
            missing = [l for l in self.links if l not in poses]
            if missing:
                raise ValueError('poses missing for links %s' % ', '.join(missing))
            return np.array([poses[l] for l in self.links], dtype=float)
        arr = np.asarray(poses, dtype=float)
        if arr.shape != (len(self.links), 4, 4):
            raise ValueError('poses: expected (%d, 4, 4), got %s'
                             % (len(self.links), arr.shape))
        return arr

    def world_points(self, poses):
        """World positions (n, 3) [m] of the bounding points at ``poses`` (nlinks, 4, 4)."""
        g = poses[self.bound_link]
        return np.einsum('nij,nj->ni', g[:, :3, :3], self.bound_points) + g[:, :3, 3]

    def world_vertices(self, poses):
        """World positions (nv, 3) [m] of all triangle vertices at ``poses``."""
        g = poses[self.vertex_link]
        return np.einsum('nij,nj->ni', g[:, :3, :3], self.vertices) + g[:, :3, 3]


def _segment(link, a, b, radius, rgba):
    """A cylinder Shape from ``a`` to ``b`` (3,) [m, link frame]."""
    origin = np.eye(4)
    origin[:3, :3] = axis_alignment(b - a)
    origin[:3, 3] = (a + b) / 2
    return Shape(link, 'cylinder', origin, rgba, radius=radius,
                 length=float(np.linalg.norm(b - a)), kind='skeleton')


def _ball(link, centre, radius, rgba):
    origin = np.eye(4)
    origin[:3, 3] = centre
    return Shape(link, 'sphere', origin, rgba, radius=radius, kind='skeleton')


def _skeleton(links, parent, offset, drawable, shapes):
    """Shapes standing in for what the URDF does not draw.

    A link without drawable geometry: a bone (cylinder) in its parent's frame from the
    parent's origin to the joint, and a ball at its own origin.  A shape that does not
    contain its link's origin (a bob on a massless rod): a thin rod from the origin to the
    shape's centre and a ball at the origin (the pivot).  Bone radius: 6 % of the mean bone
    length (4 mm to 5 cm).
    """
    bones = [(parent[l], offset[l]) for l in links if l not in drawable and l in parent]
    lengths = [float(np.linalg.norm(o)) for _, o in bones if np.linalg.norm(o) > 1e-6]
    r = float(np.clip(0.06 * np.mean(lengths), 0.004, 0.05)) if lengths else 0.02
    out = []
    for l in links:
        if l in drawable or l not in parent:
            continue
        o = np.asarray(offset[l], float)
        if np.linalg.norm(o) > 1e-6:
            out.append(_segment(parent[l], np.zeros(3), o, r, BONE_RGBA))
        out.append(_ball(l, np.zeros(3), 1.6 * r, JOINT_RGBA))
    for s in shapes:
        if s.link not in drawable or s.contains(np.zeros(3)):
            continue
        centre = s.origin[:3, 3]
        v = s.triangles()[0]
        size = float(np.min(v.max(axis=0) - v.min(axis=0)))
        rod = min(0.1 * size, 0.006 * float(np.linalg.norm(centre)))
        out.append(_segment(s.link, np.zeros(3), centre, max(rod, 1e-4), BONE_RGBA))
        out.append(_ball(s.link, np.zeros(3), 2.0 * max(rod, 1e-4), JOINT_RGBA))
    return out


@dataclass
class View:
    """Where the camera is and what surrounds the robot (from :func:`fit_view`).

    azimuth, elevation [deg]; distance [m] from ``target`` (3,) [m, world]; fov: vertical
    field of view [deg]; size: (width, height) [px]; ground: z of the ground plane [m];
    grid: (x0, x1, y0, y1) [m] its extent; step: grid spacing [m]; axes: length of the world
    axes [m]; frames: draw every link's axes.
    """
    azimuth: float
    elevation: float
    distance: float
    target: np.ndarray
    fov: float
    size: tuple
    ground: float
    grid: tuple
    step: float
    axes: float
    frames: bool = False

    def basis(self):
        """Camera axes as rows (3, 3): right, up, back (from the target to the camera)."""
        az, el = math.radians(self.azimuth), math.radians(self.elevation)
        back = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az),
                         math.sin(el)])
        right = np.array([-math.sin(az), math.cos(az), 0.0])
        return np.array([right, np.cross(back, right), back])

    @property
    def position(self):
        """Camera position (3,) [m, world]."""
        return self.target + self.distance * self.basis()[2]

    @property
    def focal(self):
        """Focal length [px]."""
        return 0.5 * self.size[1] / math.tan(math.radians(self.fov) / 2)

    def project(self, points):
        """``(pixels (n, 2), depth (n,))`` of world points (n, 3) [m]: pixel x right, y
        down; depth [m] along the view direction (points with depth <= NEAR are behind
        the camera and their pixels meaningless)."""
        basis = self.basis()
        cam = (np.asarray(points, float) - self.position) @ basis.T
        depth = -cam[:, 2]
        safe = np.where(depth > NEAR, depth, NEAR)
        f = self.focal
        px = np.column_stack([0.5 * self.size[0] + f * cam[:, 0] / safe,
                              0.5 * self.size[1] - f * cam[:, 1] / safe])
        return px, depth


def _frame_axes_length(scene, view):
    """Length [m] of a link's axes: poking out of the joint balls of the skeleton."""
    return max(0.4 * view.axes, 2.5 * scene.knuckle)


def _nice_step(extent):
    """A grid spacing of 1, 2 or 5 x 10^k [m] giving about ten squares over ``extent``."""
    raw = max(extent, 1e-3) / 10
    k = math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * 10 ** k >= raw:
            return m * 10 ** k
    return 10 ** (k + 1)        # pragma: no cover


def auto_azimuth(points):
    """Azimuth [deg] facing the plane the points (n, 3) spread in (the plane of a planar
    motion), turned 25 deg so that depth shows; -60 when they spread along a line, in all
    three directions alike or in a horizontal plane."""
    p = np.asarray(points, float)
    centered = p - p.mean(axis=0)
    w, vecs = np.linalg.eigh(centered.T @ centered)
    normal = vecs[:, 0]
    # no plane (points along a line, or spread in 3-D), or a horizontal one: a 3/4 view
    if w[-1] <= 1e-12 or w[1] < 4 * w[0] or abs(normal[2]) > 0.8:
        return -60.0
    az = math.degrees(math.atan2(normal[1], normal[0]))
    # of the two sides of the plane, the one where world x (or y) points right
    if not -135.0 < az <= 45.0:
        az = az - 180.0 if az > 45.0 else az + 180.0
    return az - 25.0


def fit_view(scene, pose_sequence, size=(640, 480), azimuth=None, elevation=20.0,
             distance=None, target=None, fov=30.0, frames=False, margin=1.08):
    """The :class:`View` that keeps the robot in the picture in every pose of
    ``pose_sequence`` (iterable of ``{link: (4, 4)}`` or (nlinks, 4, 4) arrays).

    azimuth, elevation [deg]: the camera direction (azimuth None: :func:`auto_azimuth` of the
    motion); distance [m] and target (3,) [m]: given, or fitted (the target at the centre of
    the motion's bounding box, the distance the closest that shows it all with ``margin``).
    The ground is at z = 0, or under the lowest point of the motion when it goes below.
    """
    width, height = (int(x) for x in size)
    if not (-90.0 <= float(elevation) <= 90.0):
        raise ValueError('elevation must be in [-90, 90] deg, got %r' % (elevation,))
    if azimuth is not None and not math.isfinite(azimuth):
        raise ValueError('azimuth must be finite, got %r' % (azimuth,))
    if distance is not None and not (math.isfinite(distance) and distance > 0):
        raise ValueError('distance must be finite and > 0 m, got %r' % (distance,))
    if not 0.0 < float(fov) < 180.0:
        raise ValueError('fov must be in (0, 180) deg, got %r' % (fov,))
    if target is not None and (np.shape(target) != (3,)
                               or not np.all(np.isfinite(np.asarray(target, float)))):
        raise ValueError('target must be 3 finite numbers [m], got %r' % (target,))
    poses = [scene.pose_array(p) for p in pose_sequence]
    pts = np.vstack([scene.world_points(g) for g in poses] + [np.zeros((1, 3))])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    extent = float(max(np.max(hi - lo), 0.2))
    # a little below the lowest point, so that nothing seems to rest on it
    ground = min(0.0, float(lo[2]) - 0.05 * extent)
    step = _nice_step(extent)
    pad = max(0.25 * extent, step)
    grid = (math.floor((lo[0] - pad) / step) * step, math.ceil((hi[0] + pad) / step) * step,
            math.floor((lo[1] - pad) / step) * step, math.ceil((hi[1] + pad) / step) * step)
    if azimuth is None:
        azimuth = auto_azimuth(pts)
    view = View(float(azimuth), float(elevation), 1.0,
                (lo + hi) / 2 if target is None else np.asarray(target, float).copy(),
                float(fov), (width, height), ground, grid, step, 0.15 * extent, bool(frames))
    # what must be in the picture: the motion, the ground right under it, the axes drawn
    floor = np.array([[x, y, ground] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])])
    tips = [view.axes * np.eye(3)]
    axed = range(len(scene.links)) if frames else scene.bare_links
    length = _frame_axes_length(scene, view)
    for g in poses:
        tips += [g[i][:3, 3] + length * g[i][:3, :3].T for i in axed]
    frame_pts = np.vstack([pts, floor] + tips)
    if distance is not None:
        view.distance = float(distance)
        return view
    ty = math.tan(math.radians(fov) / 2)
    tx = ty * width / height
    basis = view.basis()

    def fit_distance():
        rel = (frame_pts - view.target) @ basis.T
        view.distance = float(max(np.max(rel[:, 2] + margin * np.abs(rel[:, 0]) / tx),
                                  np.max(rel[:, 2] + margin * np.abs(rel[:, 1]) / ty),
                                  1e-2))
        return rel

    for _ in range(3 if target is None else 0):
        rel = fit_distance()
        # centre the picture: move the target by the offset of the projected extents
        depth = view.distance - rel[:, 2]
        sx, sy = rel[:, 0] / depth, rel[:, 1] / depth
        view.target = view.target + view.distance * (
            basis[0] * (sx.max() + sx.min()) / 2 + basis[1] * (sy.max() + sy.min()) / 2)
    fit_distance()
    return view


# --------------------------------------------------------------------------- drawing
def _background(size):
    """The sky gradient of a picture size (a millisecond: made for each picture, so two
    threads drawing never share it)."""
    w, h = size
    s = np.linspace(0.0, 1.0, h)[:, None]
    rows = (1 - s) * np.array(BACKGROUND_TOP) + s * np.array(BACKGROUND_BOTTOM)
    return Image.fromarray(np.repeat(rows[:, None, :], w, axis=1).astype(np.uint8))


def _clip_segments(a, b, da, db):
    """Segments (n, 3) world endpoints with depths, cut at the near plane; returns the kept
    (a, b) pairs."""
    keep = (da > NEAR) | (db > NEAR)
    a, b, da, db = a[keep], b[keep], da[keep], db[keep]
    t = np.clip((NEAR - da) / np.where(db != da, db - da, 1.0), 0.0, 1.0)[:, None]
    a = np.where((da <= NEAR)[:, None], a + t * (b - a), a)
    t = np.clip((NEAR - db) / np.where(da != db, da - db, 1.0), 0.0, 1.0)[:, None]
    b = np.where((db <= NEAR)[:, None], b + t * (a - b), b)
    return a, b


def _clip_polygon(points, view):
    """The part of a convex world polygon (n, 3) in front of the near plane."""
    _, depth = view.project(points)
    out = []
    n = len(points)
    for k in range(n):
        p, q = points[k], points[(k + 1) % n]
        dp, dq = depth[k], depth[(k + 1) % n]
        if dp > NEAR:
            out.append(p)
        if (dp > NEAR) != (dq > NEAR):
            out.append(p + (NEAR - dp) / (dq - dp) * (q - p))
    return np.array(out) if out else np.zeros((0, 3))


def _axes_segments(origins, rotations, length):
    """(a, b, colour index) of xyz axes at each origin."""
    a, b, c = [], [], []
    for o, R in zip(origins, rotations):
        for k in range(3):
            a.append(o)
            b.append(o + length * R[:, k])
            c.append(k)
    return np.array(a).reshape(-1, 3), np.array(b).reshape(-1, 3), c


def draw(scene, poses, view, label=None, supersample=2):
    """One frame: the robot of ``scene`` at ``poses`` (``{link: (4, 4)}`` or (nlinks, 4, 4)
    world poses [m]) seen from ``view``; a ``PIL.Image`` (RGB) of ``view.size``.

    ``label``: text drawn in the top left corner (e.g. the time); ``supersample``: drawn
    at this many times the size and reduced (smooth edges)."""
    g = scene.pose_array(poses)
    ss = max(1, int(supersample))
    width, height = view.size
    big = dataclasses.replace(view, size=(width * ss, height * ss))
    img = _background(big.size)
    pen = ImageDraw.Draw(img)
    eye = big.position
    light = big.basis().T @ np.array([-0.35, 0.75, 0.56])      # from upper left, in front

    # ground, grid, shadows: under everything
    x0, x1, y0, y1 = view.grid
    z = view.ground
    quad = _clip_polygon(np.array([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]]), big)
    above = eye[2] > z
    if above and len(quad) >= 3:
        pen.polygon(big.project(quad)[0].ravel().tolist(), fill=GROUND)
        xs = np.arange(x0, x1 + view.step / 2, view.step)
        ys = np.arange(y0, y1 + view.step / 2, view.step)
        a = np.vstack([np.column_stack([xs, np.full_like(xs, y0), np.full_like(xs, z)]),
                       np.column_stack([np.full_like(ys, x0), ys, np.full_like(ys, z)])])
        b = np.vstack([np.column_stack([xs, np.full_like(xs, y1), np.full_like(xs, z)]),
                       np.column_stack([np.full_like(ys, x1), ys, np.full_like(ys, z)])])
        a, b = _clip_segments(a, b, big.project(a)[1], big.project(b)[1])
        pa, pb = big.project(a)[0], big.project(b)[0]
        for seg in np.hstack([pa, pb]).tolist():
            pen.line(seg, fill=GRID, width=ss)

    verts = scene.world_vertices(g)
    px, depth = big.project(verts)
    f = scene.faces
    if above:
        shadow_px = big.project(np.column_stack([verts[:, :2], np.full(len(verts), z)]))[0]
        # a closed shape's shadow is that of its faces turned down
        n = np.cross(verts[f[:, 1]] - verts[f[:, 0]], verts[f[:, 2]] - verts[f[:, 0]])
        cast = ~scene.face_cull | (n[:, 2] < 0)
        for tri in shadow_px[f[cast]].reshape(-1, 6).tolist():
            pen.polygon(tri, fill=SHADOW)

    # what is sorted back to front: items (kind 0 triangle, 1 line; pixels; style) and
    # their depths [m] in keys
    keys, items = [], []
    if len(f):
        a, b, c = verts[f[:, 0]], verts[f[:, 1]], verts[f[:, 2]]
        n = np.cross(b - a, c - a)
        norm = np.linalg.norm(n, axis=1)
        n = n / np.where(norm > 0, norm, 1.0)[:, None]
        centre = (a + b + c) / 3
        facing = np.einsum('ij,ij->i', n, eye - centre)
        front = (depth[f] > NEAR).all(axis=1) & (norm > 0) & (~scene.face_cull | (facing > 0))
        # a mesh face seen from behind is lit like its front
        n = np.where((facing < 0)[:, None], -n, n)
        shade = AMBIENT + (1 - AMBIENT) * np.clip(n @ light, 0.0, 1.0)
        rgb = np.clip(scene.face_rgb * shade[:, None] * 255, 0, 255).astype(np.uint8)
        idx = np.nonzero(front)[0]
        tri_px = px[f[idx]].reshape(-1, 6).tolist()
        tri_rgb = [tuple(x) for x in rgb[idx].tolist()]
        keys.append(depth[f[idx]].mean(axis=1))
        items += [(0, p, c) for p, c in zip(tri_px, tri_rgb)]

    # lines: the world axes, and the axes of the links only the skeleton draws (or all)
    a, b, k = _axes_segments([np.zeros(3)], [np.eye(3)], view.axes)
    widths = [3] * len(a)
    framed = list(range(len(scene.links)) if view.frames else scene.bare_links)
    if framed:
        fa, fb, fk = _axes_segments([g[i][:3, 3] for i in framed],
                                    [g[i][:3, :3] for i in framed],
                                    _frame_axes_length(scene, view))
        a, b, k, widths = np.vstack([a, fa]), np.vstack([b, fb]), k + fk, \
            widths + [2] * len(fa)
    pa, da = big.project(a)
    pb, db = big.project(b)
    ok = (da > NEAR) & (db > NEAR)
    keys.append(((da + db) / 2)[ok])
    items += [(1, xy, (AXIS_COLORS[c], w * ss)) for xy, c, w, keep in
              zip(np.hstack([pa, pb]).tolist(), k, widths, ok) if keep]
    if items:
        order = np.argsort(-np.concatenate(keys), kind='stable')
        polygon, line = pen.polygon, pen.line
        for i in order.tolist():
            kind, xy, style = items[i]
            if kind == 0:
                polygon(xy, fill=style, outline=style)
            else:
                line(xy, fill=style[0], width=style[1])
    if ss > 1:
        img = img.reduce(ss)
    if label:
        d = ImageDraw.Draw(img)
        font = ImageFont.load_default(size=max(10, height // 28))
        d.text((max(6, width // 60), max(4, height // 60)), label, fill=(40, 44, 52),
               font=font)
    return img
