"""Watch a robot live in the browser: a simulation run in this process, a recording played
back, or (with ``--ros``) whatever a ROS graph publishes.

    ros-vi view pendulum --controller swingup            # open http://127.0.0.1:8080
    ros-vi view arm7 --port 8081 --initial joint_2=0.8
    ros-vi view run.mcap                                  # replay with a time slider
    ros-vi view --ros                                     # robot_description + /joint_states

A MODEL (URDF/xacro file or shipped name) is simulated by a physics thread paced by the
wall clock (times the real-time factor) while the page is redrawn RATE times a second.  The
GUI has play/pause, reset, the real-time factor, a slider per joint (while paused: it sets
the configuration, and play starts from there at rest), the controller on/off, a kick (each
driven joint's full effort limit for 0.2 s, alternating sign) and a plot of the energy and
the joint positions over the last 10 s.  A recording (.npz, .csv, .mcap) is drawn with its
own URDF (``--model`` for a CSV) with play/pause and a time slider.  The page is served by
viser from this machine only: it loads nothing from the internet.  Runs until Ctrl-C (or
``--duration`` wall seconds).
"""
import collections
import math
import os
import threading
import time

import numpy as np

from . import CommandError
from .simulate import CONTROLLERS, DEFAULT_DT, _controller, start_state
from .models import import_model, read_recording, resolve_model
from .options import add_floating_base_argument, add_ground_argument, add_limits_argument

HELP = 'a live 3D view of a robot in the browser (simulation, recording or ROS)'

RECORDING_TYPES = ('.npz', '.csv', '.mcap')
DEFAULT_RATE = 30.0      # [Hz] page redraws
KICK_TIME = 0.2          # [s] length of a kick
HISTORY = 10.0           # [s] shown by the live plot
GUI_PERIOD = 0.2         # [s] between plot and slider refreshes
MAX_LAG = 0.1            # [s] of wall time the physics may fall behind before it lets go


def add_arguments(parser):
    parser.add_argument('target', metavar='MODEL|RECORDING', nargs='?', default=None,
                        help='a URDF/xacro file or shipped model name to simulate, or a '
                             'recording (.npz, .csv, .mcap) to replay')
    parser.add_argument('--ros', action='store_true',
                        help='show robot_description and /joint_states of a ROS 2 graph '
                             '(needs rclpy)')
    parser.add_argument('--controller', choices=CONTROLLERS, default='none',
                        help='control law of the simulation (default none)')
    parser.add_argument('--initial', nargs='+', default=[], metavar='JOINT=VALUE',
                        help='initial joint positions [rad or m] (default: the shipped '
                             'swing-ups hang, other models start at zero)')
    parser.add_argument('--gravity', type=float, default=None,
                        help='|g| [m/s^2] along -z (default 9.81; the pendulum demo 9.8)')
    parser.add_argument('--dt', type=float, default=None,
                        help='physics time step [s] (default: the demo period, %g s '
                             'otherwise)' % DEFAULT_DT)
    parser.add_argument('--model', default=None, metavar='MODEL',
                        help='the robot of a recording (default: its own URDF; needed for '
                             'csv)')
    parser.add_argument('--port', type=int, default=8080, help='HTTP port (default 8080)')
    parser.add_argument('--host', default='127.0.0.1',
                        help='address to serve on (default 127.0.0.1: this machine only)')
    parser.add_argument('--rate', type=float, default=DEFAULT_RATE,
                        help='page redraws per second [Hz] (default %g)' % DEFAULT_RATE)
    parser.add_argument('--frames', action='store_true', help='draw every link\'s axes')
    parser.add_argument('--duration', type=float, default=None, metavar='S',
                        help='stop after S wall-clock seconds (default: run until Ctrl-C)')
    add_floating_base_argument(parser)
    add_limits_argument(parser)
    add_ground_argument(parser)


def run(args):
    if args.ros:
        try:
            from ..ros import viewer_node
        except ImportError as err:
            raise CommandError('--ros needs ROS 2 (rclpy) installed and sourced: %s'
                               % err) from None
        print('ros-vi view: http://%s:%d (robot_description + joint_states; Ctrl-C to '
              'stop)' % (args.host, args.port), flush=True)
        try:
            return viewer_node.serve_graph(args.port, args.host, args.rate, args.frames,
                                           args.duration)
        except ValueError as err:           # the port in use
            raise CommandError(str(err)) from None
    if args.target is None:
        raise CommandError('give a MODEL or a RECORDING to view (or --ros)')
    if not (math.isfinite(args.rate) and 1.0 <= args.rate <= 120.0):
        raise CommandError('--rate must be between 1 and 120 Hz, got %r' % args.rate)
    for name in ('duration', 'dt'):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise CommandError('--%s must be finite and > 0, got %r' % (name, value))
    if os.path.splitext(args.target)[1].lower() in RECORDING_TYPES:
        return _replay(args)
    return _live(args)


def _serve(args, urdf, base_dir, gravity=(0.0, 0.0, -1.0), joint_names=None):
    """(server, RobotView); CommandError naming the port when it is taken.  ``joint_names``:
    a recording's, whose floating joints' configs choose how the model reads them
    (:func:`ros_vi.visual.playback.load_robot`)."""
    from ..urdf import URDFError
    from ..visual.viewer import RobotView, ViewerError, fit_camera, serve
    try:
        server = serve(args.port, args.host, gravity=gravity)
    except ViewerError as err:
        raise CommandError(str(err)) from None
    try:
        view = RobotView(server, urdf, base_dir=base_dir, frames=args.frames,
                         joint_names=joint_names)
    except (URDFError, ValueError) as err:
        server.stop()
        raise CommandError('cannot draw the robot: %s' % err) from None
    fit_camera(server, view)
    print('ros-vi view: http://%s:%d (Ctrl-C to stop)' % (args.host, args.port), flush=True)
    return server, view


def _wait(duration, step):
    """Call ``step()`` until ``duration`` wall seconds have passed (None: forever)."""
    end = math.inf if duration is None else time.monotonic() + duration
    while time.monotonic() < end:
        step()


# ---------------------------------------------------------------------------- live
class _Live:
    """The physics thread of a live view and what the GUI changes in it.  Everything the
    two threads share is read and written under ``lock``."""

    def __init__(self, plant, dt, q0, controller, limits, idx):
        self.plant, self.dt, self.controller, self.limits, self.idx = \
            plant, dt, controller, limits, idx
        self.lock = threading.Lock()
        self.playing = True
        self.rtf = 1.0
        self.control_on = controller is not None
        self.kick_until, self.kick_sign = -math.inf, 1.0
        self.error = None
        self.history = collections.deque()
        self.stopped = False
        self.start(q0)

    def start(self, q0):
        """A new run from ``q0`` (nq,) [rad or m] at rest."""
        from ..simulation import Simulation
        self.q0 = np.array(q0, float)
        self.sim = Simulation(self.plant, self.dt, effort_limits=self.limits,
                              initial_positions=self.q0)
        if self.controller is not None:
            self.controller.reset()
        self.state = self.sim.state()
        self.history.clear()
        self.kick_until = -math.inf
        self._anchor()

    def _anchor(self):
        self.wall0, self.sim0 = time.monotonic(), self.sim.t

    def set_rtf(self, rtf):
        with self.lock:
            self.rtf = float(rtf)
            self._anchor()

    def set_playing(self, playing):
        with self.lock:
            self.playing = bool(playing)
            self._anchor()

    def kick(self):
        with self.lock:
            self.kick_until = self.sim.t + KICK_TIME
            self.kick_sign = -self.kick_sign

    def _tick(self):
        state = self.state
        command = np.zeros(self.plant.nu)
        if self.controller is not None and self.control_on:
            command[self.idx] = self.controller.compute(state.positions, state.velocities,
                                                        state.efforts).u
        if state.t < self.kick_until:
            # the actuators' full effort: the simulation saturates at the limits anyway
            command += self.kick_sign * np.where(np.isfinite(self.limits), self.limits, 1.0)
        self.sim.set_input_commands(command)
        result = self.sim.tick()
        if not result.ok:
            self.playing = False
            self.error = 'the simulation failed at t = %.4g s: %s' % (state.t, result.error)
            return
        self.state = self.sim.state()
        h = self.history
        if not h or self.state.t - h[-1][0] >= 1.0 / 60:
            h.append((self.state.t, self.state.energy, self.state.positions.copy()))
            while h[-1][0] - h[0][0] > HISTORY:
                h.popleft()

    def loop(self):
        """Physics thread: tick while simulation time is behind RTF x wall time."""
        while not self.stopped:
            with self.lock:
                if self.playing:
                    now = time.monotonic()
                    target = self.sim0 + self.rtf * (now - self.wall0)
                    if target - self.sim.t > MAX_LAG * max(self.rtf, 1.0):
                        # slower than asked for: run as fast as it can, don't catch up
                        self.wall0, self.sim0 = now, self.sim.t
                        target = self.sim.t + self.dt
                    while self.playing and self.sim.t + 0.5 * self.dt < target:
                        self._tick()
                        if time.monotonic() - now > 0.02:    # let the GUI have the lock
                            break
            time.sleep(0.002)


def _live(args):
    from ..control import default_effort_limits
    source, setup, demo, dt, q0, _ = start_state(args.target, args.gravity, args.dt,
                                                 args.initial,
                                                 floating_base=args.floating_base,
                                                 limits=args.limits, ground=args.ground,
                                                 self_collision=args.self_collision)
    plant = setup.system
    names = [c.name for c in plant.configs]
    controller, _ = _controller(args.controller, source,
                                lambda: import_model(source, args.gravity)[0], dt, q0)
    # saturation as `ros-vi simulate` has it: the controller's u_max on its inputs
    limits = default_effort_limits(plant)
    idx = np.zeros(0, dtype=int)
    if controller is not None:
        idx = np.array([plant.get_input(n).index for n in controller.input_names], dtype=int)
        limits = np.full(plant.nu, np.inf)
        limits[idx] = controller.u_max
    try:
        live = _Live(plant, dt, q0, controller, limits, idx)
    except ValueError as err:
        raise CommandError(str(err)) from None
    g = source.default_gravity if args.gravity is None else args.gravity
    server, view = _serve(args, source.text, os.path.dirname(os.path.abspath(source.path)),
                          gravity=(0.0, 0.0, -1.0 if g >= 0 else 1.0) if g else None)
    view.set_positions(q0)
    gui = _LiveGui(server, view, live, names, controller is not None)
    thread = threading.Thread(target=live.loop, name='ros-vi view physics', daemon=True)
    thread.start()
    period = 1.0 / args.rate
    try:
        _wait(args.duration, lambda: (gui.redraw(), time.sleep(period)))
    finally:
        live.stopped = True
        thread.join(1.0)
        server.stop()
    return 0


class _LiveGui:
    """The controls of a live view, and the redraw of the robot, the plot and the sliders."""

    def __init__(self, server, view, live, names, with_controller):
        import viser.uplot as uplot
        self.view, self.live, self.names = view, live, names
        gui = server.gui
        self.play = gui.add_button('Pause')
        self.play.on_click(lambda _: self._toggle())
        gui.add_button('Reset').on_click(lambda _: self._reset())
        self.rtf = gui.add_slider('Real-time factor', min=0.1, max=2.0, step=0.05,
                                  initial_value=1.0)
        self.rtf.on_update(lambda _: live.set_rtf(self.rtf.value))
        self.control = gui.add_checkbox('Controller on', initial_value=with_controller,
                                        disabled=not with_controller)
        self.control.on_update(lambda _: setattr(live, 'control_on', self.control.value))
        gui.add_button('Kick').on_click(lambda _: live.kick())
        self.status = gui.add_markdown('')
        lo, hi = view.system.urdf.position_limits
        self.sliders = []
        with gui.add_folder('Joints (while paused)'):
            for i, name in enumerate(names):
                a = lo[i] if math.isfinite(lo[i]) else -math.pi
                b = hi[i] if math.isfinite(hi[i]) else math.pi
                s = gui.add_slider(name, min=float(a), max=float(b), step=(b - a) / 1000,
                                   initial_value=float(np.clip(live.q0[i], a, b)),
                                   disabled=True)
                s.on_update(lambda _: self._slid())
                self.sliders.append(s)
        t = np.zeros(2)
        seconds = {'x': {'time': False}}     # uPlot reads x as dates by default
        self.energy = gui.add_uplot((t, t), (uplot.Series(label='t [s]'),
                                             uplot.Series(label='energy [J]', stroke='black')),
                                    title='Energy [J]', aspect=2.0, scales=seconds)
        colours = ('#d62728', '#2ca02c', '#1f77b4', '#ff7f0e', '#9467bd', '#8c564b',
                   '#e377c2', '#7f7f7f')
        self.joints = gui.add_uplot(
            (t,) + (t,) * len(names),
            (uplot.Series(label='t [s]'),) + tuple(
                uplot.Series(label=n, stroke=colours[i % len(colours)])
                for i, n in enumerate(names)),
            title='Joint positions [rad or m]', aspect=2.0, scales=seconds)
        self.pending = None         # a configuration set with the sliders while paused
        self.shown = None
        self.next_gui = 0.0

    def _toggle(self):
        live = self.live
        if live.playing:
            live.set_playing(False)
        else:
            with live.lock:
                if self.pending is not None:
                    live.start(self.pending)
                    self.pending = None
                live.error = None
            live.set_playing(True)
        self.play.label = 'Pause' if live.playing else 'Play'
        for s in self.sliders:
            s.disabled = live.playing
        self.next_gui = 0.0

    def _reset(self):
        with self.live.lock:
            self.live.start(self.live.q0)
            self.pending = None
            self.live.error = None

    def _slid(self):
        if self.live.playing:
            return               # the redraw moved the sliders to follow the motion
        self.pending = np.array([s.value for s in self.sliders])

    def redraw(self):
        live = self.live
        with live.lock:
            q = live.state.positions.copy() if self.pending is None else self.pending
            playing, error = live.playing, live.error
            # free joints: their angles are in the plant's charts (ros_vi.mechanics.free)
            charts = live.plant.free_charts
            attitudes = None if charts is None else charts.attitudes(live.plant.model)
            due = time.monotonic() >= self.next_gui
            if due:
                history = list(live.history)
        if self.shown is None or not np.array_equal(q, self.shown) or attitudes is not None:
            self.view.set_positions(q, bodies=attitudes)
            self.shown = q
        if not due:
            return
        self.next_gui = time.monotonic() + GUI_PERIOD
        if error:
            self.status.content = '**Stopped:** %s' % error
            self.play.label = 'Play'
        else:
            self.status.content = 't = %.2f s' % live.state.t
        if playing:
            for s, x in zip(self.sliders, q):
                s.value = float(np.clip(x, s.min, s.max))
        if len(history) >= 2:
            t = np.array([h[0] for h in history])
            self.energy.data = (t, np.array([h[1] for h in history]))
            Q = np.array([h[2] for h in history])
            self.joints.data = (t,) + tuple(Q[:, i] for i in range(Q.shape[1]))


# --------------------------------------------------------------------------- replay
def _replay(args):
    from ..visual.playback import base_poses, config_positions, free_body_poses
    from ..visual.viewer import Playback
    rec = read_recording(args.target)
    if args.model is not None:
        source = resolve_model(args.model)
        urdf, base_dir = source.text, os.path.dirname(os.path.abspath(source.path))
    elif rec.robot_description:
        urdf, base_dir = rec.robot_description, os.path.dirname(os.path.abspath(args.target))
    else:
        raise CommandError('recording %r has no robot description (a CSV keeps none): give '
                           'the model with --model' % args.target)
    server, view = _serve(args, urdf, base_dir, joint_names=rec.joint_names)
    t0, t1 = float(rec.t[0]), float(rec.t[-1])
    try:
        config_positions(view.system, rec, [t0])
        free_body_poses(view.system, rec, [t0])
    except ValueError as err:
        server.stop()
        raise CommandError('%s: %s' % (args.target, err)) from None
    period = 1.0 / args.rate

    def show(t):
        base = base_poses(view.system, rec, [t])      # a floating base's, or None
        view.set_positions(config_positions(view.system, rec, [t])[0],
                           None if base is None else base[0],
                           free_body_poses(view.system, rec, [t]))
    playback = Playback(server, t0, t1, show)

    def step():
        playback.step()
        time.sleep(period)

    print('replaying %s: %d samples, %.4g to %.4g s' % (args.target, len(rec), t0, t1))
    try:
        _wait(args.duration, step)
    finally:
        server.stop()
    return 0
