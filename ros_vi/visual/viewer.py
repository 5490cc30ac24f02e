"""A live 3D view of a robot in the browser, served by viser (no rviz, no ROS, no internet).

* :func:`serve` -- a ``viser.ViserServer`` on ``host:port`` with the scene ros_vi draws
  around every robot: a ground grid on z = 0, the world frame's axes (x red, y green,
  z blue) and an arrow along gravity.  viser serves its own web client; the environment
  map (an HDRI downloaded from the internet by default) is switched off, so the page asks
  nothing of any host but the server.
* :class:`RobotView` -- one robot in that scene: one node per link, holding the triangles
  of the link's visual shapes (:func:`ros_vi.urdf.link_geometry`, gathered by
  :class:`~.render.RobotScene`: primitives and meshes in the link frame, a skeleton for a
  link with nothing drawable), posed from the robot's own forward kinematics
  (:func:`~.playback.link_pose_track`) at the joint positions it is given.
* :class:`LiveView` -- the simulator node's view: a RobotView redrawn at a bounded rate,
  with the touching contacts (:func:`contact_segments`: a point and a force line each,
  green sticking, orange sliding).

World z is up; lengths are in metres, angles in radians.
"""
import socket
import threading
import time

import numpy as np

from ..conventions import CONTACT_RGBA, rotations_to_quaternions
from ..errors import name_list
from .playback import link_pose_track, load_robot

__all__ = ['serve', 'add_link_meshes', 'RobotView', 'robot_view', 'LiveView', 'Playback',
           'fit_camera', 'contact_segments', 'ViewerError', 'DEFAULT_PORT']

DEFAULT_PORT = 8080
GRID_SIZE = 4.0         # [m] side of the ground grid
GRID_CELL = 0.1         # [m]
WORLD_AXES = 0.25       # [m] length of the world frame's axes
GRAVITY_ARROW = 0.3     # [m]
CONTACT_SCALE = 0.005   # [m/N] length of a contact force's line (as the rviz markers')
CONTACT_LINE = 0.006    # [m] its thickness
CONTACT_POINT = 0.02    # [m] size of a contact point


class ViewerError(ValueError):
    """The viewer cannot start (the port is taken, or not a port)."""


def _check_port(host, port):
    """ViewerError naming ``host:port`` when a server cannot listen there.  viser itself
    moves on to the next free port when its port is taken, which would serve the page
    where nobody looks for it."""
    if not (isinstance(port, int) and 1 <= port <= 65535):
        raise ViewerError('port %r: expected an integer in 1..65535' % (port,))
    probe = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET)
    try:
        # as the server will bind: SO_REUSEADDR, so only a listening socket is a conflict
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
    except OSError as err:
        raise ViewerError('port %d on %s is not available (%s): choose another with '
                          '--port' % (port, host, err.strerror or err)) from None
    finally:
        probe.close()


def serve(port=DEFAULT_PORT, host='127.0.0.1', gravity=(0.0, 0.0, -1.0)):
    """Start a viser server at ``http://host:port`` and draw the world around a robot: the
    ground grid (z = 0), the world axes and an arrow along ``gravity`` (any non-zero
    vector; only its direction is drawn).  Returns the ``viser.ViserServer`` (stop it with
    ``server.stop()``).  ViewerError naming the port when it is taken."""
    _check_port(host, port)
    import viser
    server = viser.ViserServer(host=host, port=port, verbose=False)
    if server.get_port() != port:     # taken between the check and viser's bind
        server.stop()
        raise ViewerError('port %d on %s is not available: choose another with --port'
                          % (port, host))
    scene = server.scene
    scene.configure_environment_map(hdri=None)
    scene.set_up_direction('+z')
    scene.add_grid('/ground', width=GRID_SIZE, height=GRID_SIZE, cell_size=GRID_CELL,
                   section_size=1.0, plane='xy')
    scene.add_frame('/world', axes_length=WORLD_AXES, axes_radius=WORLD_AXES / 40)
    g = np.asarray(gravity, float)
    if g.shape == (3,) and np.linalg.norm(g) > 0:
        # beside the robot, not through it: from 0.3 m up at a corner of the first cell
        start = np.array([-0.5, -0.5, GRAVITY_ARROW])
        end = start + GRAVITY_ARROW * g / np.linalg.norm(g)
        scene.add_arrows('/gravity', np.array([[start, end]]), (235, 150, 40),
                         shaft_radius=0.006, head_radius=0.018, head_length=0.05)
    return server


def add_link_meshes(server, scene, link, path):
    """Add the triangles of link (or body) index ``link`` of a :class:`~.render.RobotScene`
    under the scene node ``path``, in its frame: one mesh per colour (viser colours a mesh
    as a whole), ``path/visual_<k>``.  Returns their handles."""
    face_link = scene.vertex_link[scene.faces[:, 0]] if len(scene.faces) else \
        np.zeros(0, dtype=int)
    mine = np.flatnonzero(face_link == link)
    colours = scene.face_rgb[mine]
    handles = []
    for k, rgb in enumerate(np.unique(colours, axis=0)):
        faces = scene.faces[mine[np.all(colours == rgb, axis=1)]]
        used, local = np.unique(faces, return_inverse=True)
        handles.append(server.scene.add_mesh_simple(
            '%s/visual_%d' % (path, k), scene.vertices[used],
            local.reshape(faces.shape).astype(np.uint32),
            color=tuple(int(round(255 * c)) for c in rgb), side='double'))
    return handles


class RobotView:
    """A robot drawn in a viser scene, posed by joint positions.

    server : viser.ViserServer (from :func:`serve`)
    urdf_text : str
        The robot description (URDF XML); ``base_dir`` the folder its relative mesh paths
        start from (the current directory when None).
    name : str
        Scene path of the robot: link ``L`` is the node ``/name/L``.
    frames : bool
        Draw every link frame's axes.  A link with nothing to draw of its own (no visual,
        or a mesh that cannot be read: a URDFWarning says which) always shows its frame,
        and the skeleton (a bone from its parent) stands in for its shape.
    packages_only : bool
        Read only ``package://`` meshes of installed packages and name no file in the
        warnings (:func:`ros_vi.urdf.link_geometry`): for a description received from a ROS
        graph, whose sender may be anyone on the domain.

    Attributes: ``joint_names`` (the configs in joint_states order, mimic joints
    excluded: the order of :meth:`set_positions`); ``links`` (link names, the order of
    ``poses``); ``poses`` (nlinks, 4, 4) [m] the world poses last drawn; ``positions``
    (nq,) [rad or m] the joint positions they come from; ``system`` (the imported System
    giving the kinematics); ``nodes`` ({link: scene node}).
    """

    def __init__(self, server, urdf_text, base_dir=None, name='robot', frames=False,
                 packages_only=False, joint_names=None):
        self.server = server
        self.name = '/' + name.strip('/')
        # a mesh that cannot be read warns (URDFWarning) from the geometry reader and
        # leaves its link without triangles: the scene's skeleton stands in for it
        self.system, self.scene = load_robot(urdf_text, base_dir, packages_only, joint_names)
        bare = {self.scene.links[i] for i in self.scene.bare_links}
        self.joint_names = [c.name for c in self.system.configs]
        self.links = list(self.scene.links)
        self._index = {n: i for i, n in enumerate(self.joint_names)}
        self.nodes = {}
        self._meshes = []
        size = float(np.ptp(self.scene.vertices, axis=0).max()) \
            if len(self.scene.vertices) else 0.5
        axes = max(0.05, 0.15 * size)
        for i, link in enumerate(self.links):
            node = server.scene.add_frame(
                '%s/%s' % (self.name, link), show_axes=frames or link in bare,
                axes_length=axes, axes_radius=axes / 30)
            self.nodes[link] = node
            self._meshes += add_link_meshes(server, self.scene, i,
                                            '%s/%s' % (self.name, link))
        self.positions = np.asarray(self.system.q, float).copy()
        self.poses = None
        self.set_positions(self.positions)

    def set_positions(self, q, base_pose=None, bodies=None):
        """Pose every link at joint positions ``q`` (nq,) [rad or m] in
        :attr:`joint_names` order (mimic joints follow their leaders), with the root link at
        ``base_pose`` (4, 4) in the scene (a floating base's pose; default: where the
        description puts it).  ``bodies``: the free joints' bodies (a world's objects), as
        :func:`~.playback.link_pose_track` takes them: their poses (1, nfree, 4, 4) or the
        reference attitudes (nfree, 3, 3) of the charts ``q``'s angles are in."""
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (len(self.joint_names),):
            raise ValueError('set_positions: expected %d positions (%s), got %d'
                             % (len(self.joint_names), name_list(self.joint_names, quote=str),
                                q.size))
        if not np.all(np.isfinite(q)):
            raise ValueError('set_positions: positions must be finite, got %s' % q)
        poses = link_pose_track(self.system, self.scene, [q], bodies)[0]
        if base_pose is not None:
            poses = np.asarray(base_pose, dtype=float) @ poses
        quats = rotations_to_quaternions(poses[:, :3, :3])
        with self.server.atomic():
            for link, g, (x, y, z, w) in zip(self.links, poses, quats):
                node = self.nodes[link]
                node.wxyz = np.array([w, x, y, z])
                node.position = g[:3, 3].copy()
        self.positions, self.poses = q.copy(), poses

    def set_joint_positions(self, names, values, base_pose=None):
        """Set the joints ``names`` to ``values`` [rad or m] (a JointState's name/position)
        and redraw (the root link at ``base_pose``, as :meth:`set_positions`); joints not
        named keep their position, mimic joints and names the robot does not have are
        ignored (they follow their leaders, or are another robot's)."""
        names, values = list(names), np.asarray(values, dtype=float).reshape(-1)
        if len(names) != len(values):
            raise ValueError('set_joint_positions: %d names but %d values'
                             % (len(names), len(values)))
        q = self.positions.copy()
        for n, x in zip(names, values):
            i = self._index.get(n)
            if i is not None:
                q[i] = x
        self.set_positions(q, base_pose)

    def remove(self):
        """Take the robot out of the scene."""
        for handle in self._meshes + list(self.nodes.values()):
            handle.remove()
        self._meshes, self.nodes = [], {}


def fit_camera(server, view, samples=24, seed=0):
    """Aim the camera of pages opened from now on at ``view``'s robot and lay the ground
    grid under it: the software renderer's fit (:func:`ros_vi.visual.fit_view`) of the
    robot at its current positions and at ``samples`` random configurations within its
    joint limits (+-pi where a joint has none), so a motion stays in the picture and
    nothing swings through the floor."""
    from .render import fit_view
    n = len(view.joint_names)
    lo, hi = view.system.urdf.position_limits
    lo = np.where(np.isfinite(lo), lo, -np.pi)
    hi = np.where(np.isfinite(hi), hi, np.pi)
    rng = np.random.default_rng(seed)
    qs = [view.positions] + [lo + (hi - lo) * rng.random(n) for _ in range(samples)]
    track = link_pose_track(view.system, view.scene, qs)
    # viser's camera: 75 deg vertical field of view
    fit = fit_view(view.scene, track, azimuth=None, elevation=20.0, fov=75.0)
    server.scene.add_grid('/ground', width=GRID_SIZE, height=GRID_SIZE, cell_size=GRID_CELL,
                          section_size=1.0, plane='xy', position=(0.0, 0.0, fit.ground))
    server.initial_camera.look_at = tuple(fit.target)
    server.initial_camera.position = tuple(fit.position)
    server.initial_camera.up = (0.0, 0.0, 1.0)
    return fit


def robot_view(server, urdf_text, warn, base_dir=None, frames=False, name='robot',
               packages_only=False):
    """A :class:`RobotView` (scene path ``/name``) whose geometry warnings (a mesh that
    cannot be read is drawn as its frame) go to ``warn(message)`` once each (a node's
    logger), at most :data:`~ros_vi.errors.MAX_NAMES` of them, not to stderr: what the
    simulator node's and the viewer node's views are built with.  ``packages_only``: a
    description from the graph, whose meshes may only be ``package://`` files of installed
    packages (:func:`ros_vi.urdf.link_geometry`)."""
    import warnings
    from ..errors import MAX_NAMES, shorten
    from ..urdf import URDFWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', URDFWarning)
        view = RobotView(server, urdf_text, base_dir=base_dir, frames=frames, name=name,
                         packages_only=packages_only)
    messages = list(dict.fromkeys(str(w.message) for w in caught))
    for message in messages[:MAX_NAMES]:
        warn(shorten(message, limit=1000, quote=False))
    if len(messages) > MAX_NAMES:
        warn('and %d more warnings like these' % (len(messages) - MAX_NAMES))
    return view


def contact_segments(view, contacts, scale=CONTACT_SCALE):
    """The touching contacts of ``contacts`` (a
    :class:`~ros_vi.mechanics.contact.ContactForces`) in the world of the RobotView
    ``view`` as last drawn: ``(points (n, 3) [m], segments (n, 2, 3) [m] from each point
    along its force, ``scale`` [m/N] long, rgb (n, 3) in [0, 1] by mode)``; a contact on a
    frame the view has no link of is left out."""
    index = {link: i for i, link in enumerate(view.links)}
    rows = [k for k, (mode, frame) in enumerate(zip(contacts.modes, contacts.frames))
            if mode != 'open' and frame in index]
    if not rows:
        return np.zeros((0, 3)), np.zeros((0, 2, 3)), np.zeros((0, 3))
    g = view.poses[[index[contacts.frames[k]] for k in rows]]          # (n, 4, 4)
    points = np.einsum('kij,kj->ki', g[:, :3, :3], contacts.points[rows]) + g[:, :3, 3]
    forces = np.einsum('kij,kj->ki', g[:, :3, :3], contacts.forces[rows])
    segments = np.stack([points, points + scale * forces], axis=1)
    rgb = np.array([CONTACT_RGBA[contacts.modes[k]][:3] for k in rows])
    return points, segments, rgb


class LiveView:
    """A robot served at ``http://host:port`` and redrawn at most ``rate`` times a second (of
    wall time) however often it is given a state: the simulator node's browser view.

    ``warn(message)`` receives the geometry warnings (:func:`robot_view`); ``base_dir`` as
    for :class:`RobotView`.  ViewerError naming the port when it is taken.
    """

    def __init__(self, port, urdf_text, warn, base_dir=None, host='127.0.0.1', rate=30.0):
        self.server = serve(port=port, host=host)
        try:
            self.view = robot_view(self.server, urdf_text, warn, base_dir=base_dir)
        except Exception:
            self.server.stop()
            raise
        self.url = 'http://%s:%d' % (host, port)
        self.period = 1.0 / rate
        self._drawn = -float('inf')
        self._contacts = []          # the scene handles of the contacts drawn

    @property
    def positions(self):
        """The joint positions (nq,) last drawn."""
        return self.view.positions

    def draw(self, positions, base_pose=None, contacts=None, bodies=None):
        """Pose the robot at ``positions`` (nq,) [rad or m] (and its root link at
        ``base_pose`` (4, 4), a floating base's; its free joints' bodies by ``bodies``, as
        :meth:`RobotView.set_positions` takes them) and draw the touching ``contacts`` (a
        :class:`~ros_vi.mechanics.contact.ContactForces`, in the robot's link frames) unless
        the last drawing is less than a period old."""
        now = time.monotonic()
        if now - self._drawn >= self.period:
            self._drawn = now
            self.view.set_positions(positions, base_pose, bodies)
            if contacts is not None:
                self._draw_contacts(*contact_segments(self.view, contacts))

    def _draw_contacts(self, points, segments, rgb):
        scene = self.server.scene
        with self.server.atomic():
            for handle in self._contacts:
                handle.remove()
            self._contacts = [] if not len(points) else [
                scene.add_point_cloud('/contacts/points', points, rgb,
                                      point_size=CONTACT_POINT, point_shape='circle'),
                scene.add_line_segments('/contacts/forces', segments,
                                        np.repeat(rgb[:, None, :], 2, axis=1),
                                        thickness=CONTACT_LINE)]

    def stop(self):
        self.server.stop()


class Playback:
    """A recorded motion played in a page: *Pause / Play*, *Speed* (0.1 to 2) and a *Time*
    slider (scrub while paused) in the GUI panel of ``server``; playing loops from ``t1``
    [s] back to ``t0`` [s].  Call :meth:`step` from one thread at the page's redraw rate:
    it advances the time by the wall time since the last call times the speed and calls
    ``show(t)`` when the time shown changes.  ``playing``: start playing (True) or paused.
    """

    def __init__(self, server, t0, t1, show, playing=True):
        gui = server.gui
        self.t0, self.t1 = float(t0), float(t1)
        self._show = show
        self._lock = threading.Lock()
        self._state = {'playing': bool(playing), 'wall': time.monotonic(), 't': self.t0}
        self._shown = None
        self.play_button = gui.add_button('Pause' if playing else 'Play')
        self.speed = gui.add_slider('Speed', min=0.1, max=2.0, step=0.05, initial_value=1.0)
        self.slider = gui.add_slider('Time [s]', min=self.t0, max=max(self.t1, self.t0 + 1e-6),
                                     step=max((self.t1 - self.t0) / 1000, 1e-6),
                                     initial_value=self.t0)
        self.play_button.on_click(self._toggle)
        self.slider.on_update(self._scrub)

    @property
    def playing(self):
        return self._state['playing']

    @property
    def t(self):
        """The time [s] shown last."""
        return self._state['t']

    def _toggle(self, _):
        with self._lock:
            self._state['playing'] = not self._state['playing']
            self._state['wall'] = time.monotonic()
        self.play_button.label = 'Pause' if self._state['playing'] else 'Play'

    def _scrub(self, _):
        with self._lock:
            if not self._state['playing']:
                self._state['t'] = float(self.slider.value)

    def step(self):
        """Advance (when playing) and draw the time reached; returns it [s]."""
        state, t0, t1 = self._state, self.t0, self.t1
        with self._lock:
            now = time.monotonic()
            if state['playing']:
                t = state['t'] + self.speed.value * (now - state['wall'])
                # loop back to the start at the end of the recording
                state['t'] = t0 + (t - t0) % (t1 - t0) if t1 > t0 else t0
            state['wall'] = now
            t, playing = state['t'], state['playing']
        if playing:
            # outside the lock: viser calls _scrub() from this assignment
            self.slider.value = t
        if t != self._shown:
            self._show(t)
            self._shown = t
        return t
