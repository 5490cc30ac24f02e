"""trep's visual API (``trep.visual``) on ros_vi's views: a System's trajectory played in the
browser (viser, as ``ros-vi view``) or written as a GIF/MP4 (as ``ros-vi animate``).

trep drew with OpenGL in a Qt window; its scripts build *items* and hand them to a player::

    import ros_vi as trep
    import ros_vi.visual as visual
    visual.visualize_3d([visual.VisualItem3D(system, t, q)])

* :class:`VisualItem3D` -- a System with a trajectory: times ``t`` (n,) [s] and
  configurations ``q`` (n, nQ) (every config, kinematic ones too), interpolated linearly
  and held at the ends (trep's ``interp1d``).  Drawn, as trep draws it, by default: a line
  from each frame's parent to it, a ball at each frame with mass (radius
  ``(3 m / (4 pi density))^(1/3)`` [m], ``density`` in kg/m^3), and a line for each
  constraint, potential or force between two frames (a marionette's strings).  With
  :meth:`~VisualItem.attachDrawing` it draws what is attached instead: an :class:`stlmodel`
  (its ``draw`` method, as trep's scripts pass it) or a
  :class:`~ros_vi.urdf.Shape` in a frame.  ``offset`` (3,) [m] moves the item in the world,
  ``setOrientation(forward, up)`` turns it (trep's conventions).
* :class:`VisualItem2D` -- the same, seen straight onto ``plane`` ('XY', 'XZ', 'YZ', ...):
  trep's 2-D view; balls of radius ``(3 m / (4 pi density))^(1/2)``, ``density`` 5.
* :func:`visualize_3d`, :func:`visualize_2d` -- play items: in the browser (``serve``) until
  Ctrl-C (trep's window blocked until closed), or into a GIF/MP4 (``output``), or not at
  all.  The environment variable ``ROS_VI_VISUAL`` decides for scripts that cannot be
  changed: ``off`` (tests and CI: the items are checked, nothing is shown, nothing blocks;
  the test suite sets it), a file name ending in ``.gif`` or ``.mp4`` (written), or unset
  (served at http://127.0.0.1:8080, blocking).
* :class:`PlayerScene` -- what is drawn, gathered once: rigid bodies (a frame's shapes) and
  segments (two frames' origins joined), with their world poses at any time.

trep's own OpenGL drawing functions (a script's ``draw`` methods calling ``glBegin``...)
cannot be drawn in a browser: attaching one warns (:class:`VisualWarning`) and the frame
keeps trep's default drawing.

World z is up; lengths in m, times in s, angles in rad.
"""
import abc
import dataclasses
import math
import os
import warnings

import numpy as np

from ..urdf.geometry import axis_alignment
from ..urdf.shapes import DEFAULT_RGBA, Shape

__all__ = ['VisualItem', 'VisualItem2D', 'VisualItem3D', 'stlmodel', 'PlayerScene',
           'ItemsView', 'fit_items_view', 'visualize_3d', 'visualize_2d', 'VisualWarning',
           'VISUAL_ENV']

#: environment variable choosing what visualize_3d/2d do when not told: 'off', a .gif or
#: .mp4 file name, or unset/'serve'
VISUAL_ENV = 'ROS_VI_VISUAL'
LINE_RGBA = (0.35, 0.38, 0.44, 1.0)      # trep's lines (frame tree, strings)
MASS_RGBA = (0.2, 0.2, 0.2, 1.0)         # balls at the masses
STRING_RGBA = (0.55, 0.35, 0.15, 1.0)
TREP_FOV = 60.0                          # [deg] vertical field of view of trep's window


class VisualWarning(UserWarning):
    """Something of a trep visual script that ros_vi cannot draw (an OpenGL function)."""


class stlmodel:
    """An STL mesh to attach to a frame (trep's ``trep.visual.stlmodel``)::

        item.attachDrawing('pelvis', visual.stlmodel('torso.stl').draw)

    filename : str
        The STL file (read at once, through trimesh; an error names a file that is missing
        or has no triangles).
    color : (r, g, b) or (r, g, b, a) in [0, 1], optional
        Its colour (default grey).
    scale : (3,)
        Scale along the mesh's x, y, z.
    wireframe, normals : accepted for trep's signature; the mesh is drawn solid.

    Attributes: ``shape`` (the :class:`~ros_vi.urdf.Shape` drawn, in the frame it is
    attached to).
    """

    def __init__(self, filename, wireframe=False, normals=False, color=None,
                 scale=(1.0, 1.0, 1.0)):
        filename = os.fspath(filename)
        if not os.path.isfile(filename):
            raise FileNotFoundError('stlmodel: no such file %r' % filename)
        rgba = DEFAULT_RGBA if color is None else tuple(float(c) for c in color)
        if len(rgba) == 3:
            rgba += (1.0,)
        self.filename, self.wireframe, self.color = filename, wireframe, color
        self.scale = tuple(float(s) for s in scale)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            self.shape = Shape('', 'mesh', np.eye(4), rgba, filename=filename,
                               path=os.path.abspath(filename), scale=np.array(self.scale))
            triangles = self.shape.triangles()
        if triangles is None or not len(triangles[1]):
            raise ValueError('stlmodel: %r has no triangles to draw%s' % (
                filename, ': ' + str(caught[0].message) if caught else ''))

    def draw(self):
        """trep drew the mesh into the current OpenGL context here; ros_vi's players draw
        ``shape`` themselves, so this does nothing (attach the method or the model)."""


def _frame(system, frame):
    """A Frame of ``system`` from a Frame or a name (None: the world)."""
    if frame is None:
        return None
    if isinstance(frame, str):
        return system.get_frame(frame)
    return frame


class VisualItem(abc.ABC):
    """A System and its trajectory (trep's ``VisualItem``; use :class:`VisualItem3D` or
    :class:`VisualItem2D`).

    system : ros_vi.System
    time : (n,) [s], increasing; q : (n, nQ) configurations (every config, in
        ``system.configs`` order); u : (n, nU) inputs, kept for trep's API (not drawn).
        Empty or None: the system is drawn still, in its current configuration.
    """

    def __init__(self, system, time=None, q=None, u=None):
        self._system = system
        self._time = np.asarray([] if time is None else time, dtype=float).reshape(-1)
        q = np.asarray([] if q is None else q, dtype=float)
        if q.size == 0:
            q = np.zeros((0, system.nQ))
        if q.ndim == 1 and system.nQ == 1:
            q = q.reshape(-1, 1)
        if q.ndim != 2 or q.shape[1] != system.nQ:
            raise ValueError('%s: q must be (n, %d) (one configuration of every config per '
                             'time), got shape %s' % (type(self).__name__, system.nQ,
                                                      np.shape(q)))
        if len(q) != len(self._time):
            raise ValueError('%s: %d times but %d configurations'
                             % (type(self).__name__, len(self._time), len(q)))
        if len(self._time) > 1 and np.any(np.diff(self._time) < 0):
            raise ValueError('%s: times must be increasing' % type(self).__name__)
        if not (np.all(np.isfinite(self._time)) and np.all(np.isfinite(q))):
            raise ValueError('%s: times and configurations must be finite'
                             % type(self).__name__)
        self._q = q
        self._u = np.asarray([] if u is None else u, dtype=float)
        self._drawings = []          # (Frame or None, Shape)

    @property
    def system(self):
        return self._system

    def attachDrawing(self, frame, func):
        """Draw ``func`` in ``frame`` (a name or Frame; None: the world frame) instead of
        the default drawing: an :class:`stlmodel` or its ``draw`` method, or a
        :class:`~ros_vi.urdf.Shape` (its origin in the frame).  Any other callable is an
        OpenGL function trep would have called: a :class:`VisualWarning`, and nothing is
        attached."""
        frame = _frame(self._system, frame)
        owner = getattr(func, '__self__', func)
        if isinstance(owner, stlmodel):
            self._drawings.append((frame, owner.shape))
        elif isinstance(func, Shape):
            self._drawings.append((frame, func))
        else:
            warnings.warn('%s.attachDrawing(%r, %r): an OpenGL drawing function cannot be '
                          'drawn in the browser (attach an stlmodel or a Shape); the frame '
                          'keeps the default drawing' % (
                              type(self).__name__, getattr(frame, 'name', None), func),
                          VisualWarning, stacklevel=2)

    def getTimeRange(self):
        """(first time, last time, times) [s], or None without a trajectory."""
        if not len(self._time):
            return None
        return self._time.min(), self._time.max(), self._time

    def configuration(self, t):
        """The configuration (nQ,) at time ``t`` [s]: linear between samples, held
        outside them; the system's own without a trajectory."""
        if not len(self._time):
            return np.array(self._system.q, dtype=float)
        if len(self._time) == 1:
            return self._q[0].copy()
        return np.array([np.interp(t, self._time, self._q[:, j])
                         for j in range(self._q.shape[1])])

    def setTime(self, t):
        """Put the system in its configuration at time ``t`` [s] (trep's ``setTime``; the
        players do not move the system, they evaluate it on a state of their own)."""
        if len(self._time):
            self._system.t = float(np.clip(t, self._time.min(), self._time.max()))
            self._system.q = self.configuration(t)

    # ------------------------------------------------------------- what is drawn
    def world_transform(self):
        """(4, 4) placement of the item's drawing in the world."""
        return np.eye(4)

    @abc.abstractmethod
    def ball_radius(self, mass):
        """Radius [m] of the ball drawn for a frame of ``mass`` [kg] (a 3-D item: a sphere
        of its density; a 2-D item: a disc)."""

    def drawings(self):
        """``(bodies, segments)``: bodies ``[(frame or None, Shape)]`` in frame
        coordinates, segments ``[(frame a, frame b, rgba, radius [m])]`` between frame
        origins.  The attached drawings and the strings when something is attached; trep's
        default drawing otherwise."""
        system = self._system
        segments = []
        for part in list(system.constraints) + list(system.potentials) + list(system.forces):
            a, b = getattr(part, 'frame1', None), getattr(part, 'frame2', None)
            if a is not None and b is not None and a is not b:
                segments.append((a, b, STRING_RGBA, self._line_radius()))
        if self._drawings:
            return list(self._drawings), segments
        bodies = []
        for frame in system.frames:
            if frame.parent is not None:
                segments.append((frame.parent, frame, LINE_RGBA, self._line_radius()))
            if frame.mass:
                origin = np.eye(4)
                bodies.append((frame, Shape('', 'sphere', origin, MASS_RGBA,
                                            radius=self.ball_radius(frame.mass))))
        return bodies, segments

    def _line_radius(self):
        return 0.004


class VisualItem3D(VisualItem):
    """A System and its trajectory drawn in 3-D (trep's ``VisualItem3D``).

    ``density`` [kg/m^3] sizes the default balls; ``offset`` (3,) [m] moves the whole
    item (two trajectories side by side).  See :class:`VisualItem` for the rest."""

    def __init__(self, system, time=None, q=None, u=None, density=50, offset=None):
        super().__init__(system, time, q, u)
        if not (math.isfinite(density) and density > 0):
            raise ValueError('VisualItem3D: density must be > 0 kg/m^3, got %r' % (density,))
        self.density = float(density)
        self.offset = None if offset is None else np.asarray(offset, dtype=float).reshape(3)
        self.setOrientation(forward=[1, 0, 0], up=[0, 0, 1])

    def setOrientation(self, forward, up):
        """Turn the item so that its ``forward`` (3,) and ``up`` (3,) directions are the
        world's x and z (trep's convention: its scripts turn a model built with another
        up axis)."""
        up, forward = np.asarray(up, float), np.asarray(forward, float)
        right = np.cross(up, forward)
        forward = np.cross(right, up)
        basis = np.column_stack([v / np.linalg.norm(v) for v in (forward, right, up)])
        self._orientation = np.eye(4)
        self._orientation[:3, :3] = basis.T

    def orientation(self):
        """(4, 4) rotation applied to the item's frames."""
        return self._orientation

    def world_transform(self):
        placed = self._orientation.copy()
        if self.offset is not None:
            placed[:3, 3] = self.offset
        return placed

    def ball_radius(self, mass):
        return (3.0 / 4.0 * mass / (self.density * math.pi)) ** (1.0 / 3.0)


class VisualItem2D(VisualItem):
    """A System and its trajectory seen straight onto a plane (trep's ``VisualItem2D``):
    ``plane`` names the two world axes drawn across and up the picture ('XY': seen from
    above, 'XZ': from -y, 'YZ': from +x, ...).  See :class:`VisualItem` for the rest."""

    def __init__(self, system, time=None, q=None, u=None, plane='XY', density=5):
        super().__init__(system, time, q, u)
        plane = str(plane).upper()
        if len(plane) != 2 or set(plane) - set('XYZ') or plane[0] == plane[1]:
            raise ValueError("VisualItem2D: plane must be two of 'X', 'Y', 'Z' (e.g. 'XZ'), "
                             "got %r" % (plane,))
        self.plane = plane
        self.density = float(density)

    def ball_radius(self, mass):
        return (3.0 / 4.0 * mass / (self.density * math.pi)) ** 0.5

    def camera_direction(self):
        """(azimuth, elevation) [deg] of a camera looking straight onto the plane, its first
        axis to the right and its second up."""
        a, b = ('XYZ'.index(c) for c in self.plane)
        right, up = np.eye(3)[a], np.eye(3)[b]
        towards_camera = np.cross(right, up)
        azimuth = math.degrees(math.atan2(towards_camera[1], towards_camera[0])) \
            if np.linalg.norm(towards_camera[:2]) > 0.5 else -90.0
        elevation = math.degrees(math.asin(np.clip(towards_camera[2], -1, 1)))
        return azimuth, elevation


class PlayerScene:
    """What a set of items draws, gathered once: bodies (shapes in a frame) and segments
    (a line between two frame origins), with their world poses at any time.

    Attributes: ``scene`` (a :class:`~.render.RobotScene` of the bodies and of a unit
    cylinder per segment, for the software renderer), ``body_names``, ``segment_names``
    (its bodies in that order), ``t0``, ``t1`` (the time span of the items [s]; 0, 0 when
    none has a trajectory), ``segment_rgba``, ``segment_radius``.
    """

    def __init__(self, items):
        from .render import RobotScene
        items = list(items)
        if not items:
            raise ValueError('nothing to visualize: give a list of VisualItem3D or '
                             'VisualItem2D')
        for item in items:
            if not isinstance(item, VisualItem):
                raise TypeError('visualize: %r is not a VisualItem (VisualItem3D, '
                                'VisualItem2D, PuppetVisual)' % (item,))
        self.items = items
        shapes = []
        self._bodies, self._segments = [], []     # (item, frame), (item, frame a, frame b)
        self.body_names, self.segment_names = [], []
        self.segment_rgba, self.segment_radius = [], []
        for k, item in enumerate(items):
            bodies, segments = item.drawings()
            for j, (frame, shape) in enumerate(bodies):
                name = 'item%d/%s_%d' % (k, getattr(frame, 'name', None) or 'world', j)
                self.body_names.append(name)
                self._bodies.append((item, frame))
                shapes.append(_relinked(shape, name))
            for j, (a, b, rgba, radius) in enumerate(segments):
                name = 'item%d/segment_%d' % (k, j)
                self.segment_names.append(name)
                self._segments.append((item, a, b))
                self.segment_rgba.append(rgba)
                self.segment_radius.append(radius)
                unit = np.eye(4)
                unit[2, 3] = 0.5
                shapes.append(Shape(name, 'cylinder', unit, rgba, radius=radius, length=1.0))
        self.scene = RobotScene.of_bodies(self.body_names + self.segment_names, shapes)
        spans = [item.getTimeRange() for item in items]
        spans = [s for s in spans if s is not None]
        self.t0 = min((s[0] for s in spans), default=0.0)
        self.t1 = max((s[1] for s in spans), default=0.0)
        self._data = {id(item): item.system.model.create_data() for item in items}

    def frame_poses(self, t):
        """``(body poses (nbodies, 4, 4), segment ends (nsegments, 2, 3))`` in the world
        [m] at time ``t`` [s].  Each item is evaluated on a state of its own (the
        systems are not moved)."""
        bodies = np.empty((len(self._bodies), 4, 4))
        ends = np.empty((len(self._segments), 2, 3))
        for item in self.items:
            data = self._data[id(item)]
            system = item.system
            data.set(q=item.configuration(t))
            place = item.world_transform()
            with system.evaluate_at(data):
                for i, (owner, frame) in enumerate(self._bodies):
                    if owner is item:
                        bodies[i] = place @ (np.eye(4) if frame is None else frame.g())
                for i, (owner, a, b) in enumerate(self._segments):
                    if owner is item:
                        ends[i, 0] = place[:3, :3] @ a.p()[:3] + place[:3, 3]
                        ends[i, 1] = place[:3, :3] @ b.p()[:3] + place[:3, 3]
        return bodies, ends

    def poses(self, t):
        """(nbodies + nsegments, 4, 4) poses of :attr:`scene`'s bodies at time ``t`` [s]:
        a segment's unit cylinder stretched from one end to the other."""
        bodies, ends = self.frame_poses(t)
        out = np.empty((len(bodies) + len(ends), 4, 4))
        out[:len(bodies)] = bodies
        for i, (a, b) in enumerate(ends):
            g = np.eye(4)
            length = float(np.linalg.norm(b - a))
            rotation = axis_alignment(b - a) if length > 0 else np.eye(3)
            g[:3, :3] = rotation @ np.diag([1.0, 1.0, length])
            g[:3, 3] = a
            out[len(bodies) + i] = g
        return out


def _relinked(shape, name):
    """A copy of ``shape`` in the body ``name`` (its triangles computed afresh)."""
    return dataclasses.replace(shape, link=name)


# --------------------------------------------------------------------------- players
def _mode(serve, output):
    """'off', 'serve' or an output file, from the arguments, then ``ROS_VI_VISUAL``."""
    if output is not None:
        return os.fspath(output)
    if serve is not None:
        return 'serve' if serve else 'off'
    chosen = os.environ.get(VISUAL_ENV, '').strip()
    if chosen in ('', 'serve'):
        return 'serve'
    if chosen.lower() in ('off', '0', 'none', 'no'):
        return 'off'
    if os.path.splitext(chosen)[1].lower() in ('.gif', '.mp4'):
        return chosen
    raise ValueError('%s=%r: expected off, serve, or a file name ending in .gif or .mp4'
                     % (VISUAL_ENV, chosen))


def _trep_camera(camera_pos, camera_ang, target):
    """(position, point looked at) of trep's camera: at ``camera_pos`` (3,) [m], looking
    along its x axis turned by yaw, pitch, roll ``camera_ang`` [rad] (z, y, x); the point
    looked at is on that line, as far as ``target`` (3,) is along it."""
    yaw, pitch = float(camera_ang[0]), float(camera_ang[1])
    direction = np.array([math.cos(pitch) * math.cos(yaw), math.cos(pitch) * math.sin(yaw),
                          -math.sin(pitch)])
    position = np.asarray(camera_pos, dtype=float).reshape(3)
    depth = max(float((np.asarray(target, float) - position) @ direction), 0.5)
    return position, position + depth * direction


def _film(scene, path, fps, size, camera, speed=1.0):
    """Write ``scene`` played from t0 to t1 as a GIF or MP4 (``ros-vi animate``'s writers
    and renderer); returns a :class:`~.playback.Animation`."""
    from .playback import OUTPUT_TYPES, check_size, frame_times, write_animation
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in OUTPUT_TYPES:
        raise ValueError('output %r: unknown file type %r (use %s)'
                         % (path, suffix, ' or '.join(OUTPUT_TYPES)))
    size = check_size(size, suffix)
    times = frame_times([scene.t0, scene.t1], fps, speed)
    track = np.array([scene.poses(t) for t in times])
    view = fit_items_view(scene, track, camera, size)
    return write_animation(path, scene.scene, times, track, view, fps, speed)


def _play(items, camera, output, serve, block, port, host, fps, size, duration):
    scene = PlayerScene(items)
    mode = _mode(serve, output)
    if mode == 'off':
        scene.poses(scene.t0)             # everything a drawing needs is evaluated once
        return 0
    if mode != 'serve':
        return _film(scene, mode, fps, size, camera)
    from .viewer import serve as start_server
    server = start_server(port=port, host=host)
    try:
        view = ItemsView(server, scene, camera)
    except Exception:
        server.stop()
        raise
    print('trep.visual: http://%s:%d (Ctrl-C to stop)' % (host, port), flush=True)
    if not block:
        view.start()
        return view
    try:
        view.run(duration)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def visualize_3d(items, argv=(), camera_pos=None, camera_ang=None, *, output=None,
                 serve=None, block=True, port=8080, host='127.0.0.1', fps=25.0,
                 size=(640, 480), duration=None):
    """Play ``items`` (:class:`VisualItem3D`, :class:`PuppetVisual
    <ros_vi.puppets.PuppetVisual>`) from their first to their last time (trep's
    ``visualize_3d``).

    camera_pos (3,) [m], camera_ang (yaw, pitch, roll) [rad]: trep's camera (its x axis is
    the view direction); default: fitted to the whole motion.
    output : str, optional
        ``.gif`` or ``.mp4``: write the motion there (``fps`` frames per second, ``size``
        (width, height) [px]) and return the :class:`~.playback.Animation`.
    serve : bool, optional
        True: serve the page at ``http://host:port`` (time slider, play/pause, speed);
        False: check the items and show nothing.  None (default): as ``ROS_VI_VISUAL``
        says (see the module doc; unset: serve).
    block : bool
        While serving: return only after Ctrl-C (or ``duration`` wall seconds), 0, as
        trep's window did; False: return the :class:`ItemsView` playing in a thread
        of its own at once (``view.stop()`` ends it).
    ``argv`` is accepted for trep's signature (Qt's arguments) and not used.
    """
    camera = {}
    if camera_pos is not None:
        camera['trep'] = (camera_pos, (0.0, 0.0, 0.0) if camera_ang is None else camera_ang)
    return _play(items, _camera_options(items, camera), output, serve, block, port, host,
                 fps, size, duration)


def visualize_2d(items, argv=(), center=None, scale=None, *, output=None, serve=None,
                 block=True, port=8080, host='127.0.0.1', fps=25.0, size=(640, 480),
                 duration=None):
    """Play :class:`VisualItem2D` items, seen straight onto the first item's plane (trep's
    ``visualize_2d``).  ``center`` (2,) [m] in the plane: the point in the middle of the
    picture (default: the middle of the motion); ``scale`` is accepted for trep's
    signature (the picture is fitted to the motion).  Other arguments as
    :func:`visualize_3d`."""
    camera = {}
    if center is not None:
        camera['center'] = center
    return _play(items, _camera_options(items, camera), output, serve, block, port, host,
                 fps, size, duration)


def _camera_options(items, given):
    """Keyword arguments of :func:`~.render.fit_view` for the items: a 2-D item's view
    straight onto its plane; trep's camera pose or a 2-D centre, resolved when the scene's
    extent is known (``trep``/``center`` keys, kept for the players)."""
    items = list(items)
    out = dict(given)
    flat = [i for i in items if isinstance(i, VisualItem2D)]
    if flat:
        out['azimuth'], out['elevation'] = flat[0].camera_direction()
        out['plane'] = flat[0].plane
    return out


def fit_items_view(scene, track, camera, size=(640, 480), fov=30.0):
    """The :class:`~.render.View` of a :class:`PlayerScene` over the poses ``track``
    (nframes, nbodies, 4, 4): fitted to the whole motion (:func:`~.render.fit_view`), from
    ``camera``'s ``azimuth``/``elevation`` [deg] when given (a 2-D item's plane), then
    placed as trep's camera (``trep``: (camera_pos, camera_ang)) or centred on a point
    of a 2-D item's plane (``center``: (2,) [m] along the plane's two axes)."""
    from .render import fit_view
    angles = {k: camera[k] for k in ('azimuth', 'elevation') if k in camera}
    view = fit_view(scene.scene, track, size, fov=fov, **angles)
    if 'trep' in camera:
        fov = max(fov, TREP_FOV)        # what trep's window showed from there, at least
        position, target = _trep_camera(*camera['trep'], view.target)
        d = target - position
        distance = float(np.linalg.norm(d))
        azimuth = math.degrees(math.atan2(-d[1], -d[0]))
        elevation = math.degrees(math.asin(float(np.clip(-d[2] / distance, -1, 1))))
        view = fit_view(scene.scene, track, size, azimuth, elevation, distance, target,
                        fov=fov)
    elif 'center' in camera:
        target = np.array(view.target, dtype=float)
        for axis, value in zip(camera['plane'], np.asarray(camera['center'], float)):
            target['XYZ'.index(axis)] = value
        view = fit_view(scene.scene, track, size, fov=fov, target=target, **angles)
    return view


class ItemsView:
    """A :class:`PlayerScene` played in a viser page (``server`` from
    :func:`~.viewer.serve`): a scene node per body (``/items/<body>``) holding its
    triangles, the segments as lines (``/items/segments``), the camera of
    :func:`fit_items_view` (viser's 75 deg field of view), and the
    :class:`~.viewer.Playback` controls (play/pause, speed, time slider).

    Attributes: ``server``, ``scene``, ``playback``, ``nodes`` ({body: scene node}),
    ``t`` (the time drawn last [s]), ``poses`` (nbodies, 4, 4) and ``ends``
    (nsegments, 2, 3) [m] drawn last.
    """

    RATE = 30.0            # [Hz] page redraws while running

    def __init__(self, server, scene, camera):
        from ..conventions import rotations_to_quaternions
        from .viewer import GRID_CELL, GRID_SIZE, Playback, add_link_meshes
        self._quaternions = rotations_to_quaternions
        self.server, self.scene = server, scene
        sc = scene.scene
        times = np.linspace(scene.t0, scene.t1, 40 if scene.t1 > scene.t0 else 1)
        track = np.array([scene.poses(t) for t in times])
        view = fit_items_view(scene, track, camera, fov=75.0)
        server.scene.add_grid('/ground', width=GRID_SIZE, height=GRID_SIZE,
                              cell_size=GRID_CELL, section_size=1.0, plane='xy',
                              position=(0.0, 0.0, view.ground))
        server.initial_camera.look_at = tuple(view.target)
        server.initial_camera.position = tuple(view.position)
        server.initial_camera.up = (0.0, 0.0, 1.0)
        self.nodes = {}
        for i, body in enumerate(scene.body_names):
            self.nodes[body] = server.scene.add_frame('/items/' + body, show_axes=False)
            add_link_meshes(server, sc, i, '/items/' + body)
        self._colours = np.array([[int(round(255 * c)) for c in rgba[:3]]
                                  for rgba in scene.segment_rgba], dtype=np.uint8)
        self.t, self.poses, self.ends = None, None, None
        import threading
        self._stopped, self._thread = threading.Event(), None
        self.playback = Playback(server, scene.t0, scene.t1, self.show)
        self.show(scene.t0)

    def show(self, t):
        """Draw the items at time ``t`` [s]."""
        poses, ends = self.scene.frame_poses(t)
        quats = self._quaternions(poses[:, :3, :3]) if len(poses) else np.zeros((0, 4))
        with self.server.atomic():
            for body, g, (x, y, z, w) in zip(self.scene.body_names, poses, quats):
                node = self.nodes[body]
                node.wxyz = np.array([w, x, y, z])
                node.position = g[:3, 3].copy()
            if len(ends):
                # viser's line segments cannot be moved point by point: drawn anew
                self.server.scene.add_line_segments(
                    '/items/segments', ends, np.repeat(self._colours[:, None], 2, axis=1),
                    thickness=2 * max(self.scene.segment_radius))
        self.t, self.poses, self.ends = t, poses, ends

    def run(self, duration=None):
        """Play until ``duration`` wall seconds have passed (None: until Ctrl-C or
        :meth:`stop`)."""
        import time
        end = math.inf if duration is None else time.monotonic() + duration
        while time.monotonic() < end and not self._stopped.is_set():
            self.playback.step()
            self._stopped.wait(1.0 / self.RATE)

    def start(self):
        """Play in a thread of its own (``visualize_3d(..., block=False)``)."""
        import threading
        self._thread = threading.Thread(target=self.run, name='trep.visual player',
                                        daemon=True)
        self._thread.start()

    def stop(self):
        """Stop playing and the server."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self.server.stop()
