"""Simulate a model offline (no ROS): the closed loop of the simulator node, in one process.

    ros-vi simulate pendulum --controller swingup --out run.npz --plot run.png
    ros-vi simulate acrobot --controller swingup --animate swingup.gif
    ros-vi simulate arm7 --duration 2 --dt 0.001 --initial joint_2=0.5 --out run.mcap
    ros-vi simulate robot.urdf --gravity 0 --velocity joint_1=1.0

The controllers are the shipped laws: ``swingup`` (energy-shaping swing-up handing over to
the LQR; pendulum, cartpole and acrobot), ``lqr`` (the discrete LQR designed on the VI's own
linearisation: about the upright goal for those three, about the initial configuration --
held against gravity -- for any other model), ``none`` (a free run).  Exit status 0 when
the run completes, 1 when the simulation fails (the recordings keep what was computed up
to the failure and are closed properly), 2 on bad input.  Output paths and the run's size
(at most MAX_STEPS steps) are checked before the model is simulated; a recording that
cannot be written on (a full disk) ends with what it has, the run goes on, and the exit
status is 1.
"""
import math
import os
import sys
import time

import numpy as np

from . import CommandError
from .models import import_model, resolve_model, setup_model
from .options import (add_floating_base_argument, add_ground_argument, add_limits_argument,
                      add_progress_arguments, check_output, show_progress)

HELP = 'simulate a model offline, record it (npz, csv, MCAP), plot it'

CONTROLLERS = ('none', 'lqr', 'swingup')
DEFAULT_DT = 0.001          # [s] models without a demo
DEFAULT_DURATION = 5.0      # [s] models without a demo
#: steps of one run (the results and recordings are kept in memory: about 3 kB a step
#: for a 7-joint arm recorded and plotted)
MAX_STEPS = 1_000_000


def add_arguments(parser):
    parser.add_argument('model', metavar='MODEL',
                        help='a URDF or xacro file, or a shipped model name')
    parser.add_argument('--duration', type=float, default=None,
                        help='simulated time [s] (default: the demo length for the shipped '
                             'swing-ups with a controller, %g s otherwise)' % DEFAULT_DURATION)
    parser.add_argument('--dt', type=float, default=None,
                        help='time step [s] (default: the demo period for the shipped '
                             'swing-ups, %g s otherwise)' % DEFAULT_DT)
    parser.add_argument('--controller', choices=CONTROLLERS, default='none',
                        help='control law (default none)')
    parser.add_argument('--initial', nargs='+', default=[], metavar='JOINT=VALUE',
                        help='initial joint positions [rad or m] (default: hanging for the '
                             'shipped swing-ups, zero otherwise)')
    parser.add_argument('--velocity', nargs='+', default=[], metavar='JOINT=VALUE',
                        help='initial joint velocities [rad/s or m/s] (default zero)')
    parser.add_argument('--gravity', type=float, default=None,
                        help='|g| [m/s^2] along -z (default 9.81; the pendulum demo 9.8)')
    parser.add_argument('--out', nargs='+', default=[], metavar='FILE',
                        help='record to these files (.npz, .csv, .mcap)')
    parser.add_argument('--plot', default=None, metavar='FILE',
                        help='image of q, v, effort and energy against time (e.g. run.png)')
    parser.add_argument('--animate', default=None, metavar='FILE',
                        help='animation of the robot (.gif or .mp4; ros-vi animate with its '
                             'defaults)')
    add_floating_base_argument(parser)
    add_limits_argument(parser)
    add_ground_argument(parser)
    add_progress_arguments(parser)


def start_state(spec, gravity, dt, initial, velocity=(), floating_base=False, limits=True,
                ground=None, self_collision=False):
    """What ``simulate`` and ``view`` start from: (source, setup, demo or None, dt [s], q0
    (nQ,), v0 (nQ,)): the model of ``spec`` set up as the simulator node sets it up
    (:class:`ros_vi.simulation.RobotSetup`; its importer quirks printed as warnings), a
    shipped demo's time step and start state, else the ``<ros2_control>`` block's initial
    values, unless ``dt``, ``initial`` or ``velocity`` (['joint=value', ...]) say
    otherwise; ``floating_base``: the root link on a free joint (:func:`resolve_model`);
    ``limits``: the URDF's joint limits enforced (a joint whose limits exclude its URDF zero
    then starts on the nearest bound); ``ground`` ``(height, friction)``: a contact ground
    (and the robot's own links touching: ``self_collision``)."""
    from ..control import DEMOS         # numba kernels: loaded once a model is asked for
    source = resolve_model(spec, floating_base)
    setup = setup_model(source, gravity, ground=ground, self_collision=self_collision,
                        enforce_limits=limits)
    plant = setup.system
    for q in setup.warnings:
        print('warning: %s' % q, file=sys.stderr)
    demo = DEMOS.get(source.name) if source.is_demo else None
    dt = dt or (demo.dt if demo is not None else DEFAULT_DT)
    names = [c.name for c in plant.configs]
    q0 = np.array(demo.start if demo is not None else plant.q, dtype=float)
    for name, (lo, up) in plant.joint_limits.items():
        i = names.index(name)
        q0[i] = min(max(q0[i], lo), up)
    v0 = np.zeros(plant.nQ)
    if demo is None:
        for i, x in setup.initial_positions.items():
            q0[names.index(i)] = x
        for i, x in setup.initial_velocities.items():
            v0[names.index(i)] = x
    for i, x in _assignments(initial, names, '--initial').items():
        q0[i] = x
    for i, x in _assignments(velocity, names, '--velocity').items():
        v0[i] = x
    return source, setup, demo, dt, q0, v0


def _assignments(items, names, what):
    """{config index: value} from 'JOINT=VALUE' strings; CommandError naming the culprit."""
    out = {}
    for item in items:
        name, sep, value = item.partition('=')
        if not sep:
            raise CommandError('%s %r: expected JOINT=VALUE' % (what, item))
        if name not in names:
            raise CommandError('%s: unknown joint %r (joints: %s)'
                               % (what, name, ', '.join(names)))
        try:
            x = float(value)
        except ValueError:
            raise CommandError('%s %r: %r is not a number' % (what, item, value)) from None
        if not math.isfinite(x):
            raise CommandError('%s %r: the value must be finite' % (what, item))
        out[names.index(name)] = x
    return out


def _positive(value, what):
    if value is not None and not (math.isfinite(value) and value > 0):
        raise CommandError('%s must be finite and > 0, got %r' % (what, value))
    return value


class Progress:
    """One status line on stderr: simulated time, steps/s, ETA (redrawn at most 10 times a
    second; nothing when disabled)."""

    def __init__(self, duration, dt, enabled, stream=sys.stderr):
        self.duration, self.dt, self.enabled, self.stream = duration, dt, enabled, stream
        self.start = time.monotonic()
        self.last = -1.0

    def update(self, t, t0, final=False):
        if not self.enabled:
            return
        now = time.monotonic()
        if not final and now - self.last < 0.1:
            return
        self.last = now
        done = min(max((t - t0) / self.duration, 0.0), 1.0) if self.duration > 0 else 1.0
        wall = now - self.start
        rate = (t - t0) / self.dt / wall if wall > 0 else 0.0
        eta = wall * (1 - done) / done if done > 0 else math.inf
        bar = '#' * int(round(24 * done))
        self.stream.write('\r  t = %8.3f / %.3f s [%-24s] %3d%%  %9.0f steps/s  ETA %s   '
                          % (t - t0, self.duration, bar, 100 * done, rate,
                             '%.0f s' % eta if math.isfinite(eta) else '?'))
        if final:
            self.stream.write('\n')
        self.stream.flush()


def _controller(kind, source, system_factory, dt, q0):
    """(controller or None, demo or None) for ``kind``; CommandError when not available."""
    from ..control import DEMOS, LQR
    demo = DEMOS.get(source.name) if source.is_demo else None
    if kind == 'none':
        return None, demo
    if kind == 'swingup':
        if demo is None:
            raise CommandError('--controller swingup is available for the shipped %s; use '
                               'lqr or none for %r' % (', '.join(sorted(DEMOS)), source.name))
        return demo.controller(system_factory(), dt=dt), demo
    if demo is not None:
        return demo.lqr(system_factory(), dt=dt), demo
    try:
        return LQR(system_factory(), dt, goal=q0), None
    except ValueError as err:
        raise CommandError('--controller lqr: %s' % err) from None


def run(args):
    from .. import ConvergenceError
    from ..recording import FORMATS, RecordingWriter, open_writer
    from ..simulation import simulate
    _positive(args.duration, '--duration')
    _positive(args.dt, '--dt')
    for path in args.out:
        if os.path.splitext(path)[1].lower() not in FORMATS:
            raise CommandError('--out %r: unknown file type (use %s)' % (path, ', '.join(FORMATS)))
    if args.animate and os.path.splitext(args.animate)[1].lower() not in ('.gif', '.mp4'):
        raise CommandError('--animate %r: unknown file type (use .gif or .mp4)' % args.animate)
    from .plot import check_plot_path
    for path in args.out:
        check_output(path, '--out')
    if args.plot:
        check_plot_path(args.plot, '--plot')
    if args.animate:
        check_output(args.animate, '--animate')
    source, setup, demo, dt, q0, v0 = start_state(args.model, args.gravity, args.dt,
                                                  args.initial, args.velocity,
                                                  args.floating_base, args.limits,
                                                  args.ground, args.self_collision)
    plant = setup.system
    with_demo = demo is not None and args.controller != 'none'
    duration = args.duration or (demo.duration if with_demo else DEFAULT_DURATION)
    if not duration / dt <= MAX_STEPS:
        raise CommandError('%g s at dt = %g s is %s steps, more than the %s a run may take '
                           '(MAX_STEPS): use a longer --dt or a shorter --duration'
                           % (duration, dt, format(duration / dt, '.3g'),
                              format(MAX_STEPS, ',')))
    controller, _ = _controller(args.controller, source,
                                lambda: import_model(source, args.gravity)[0], dt, q0)

    metadata = {'model': source.name, 'controller': args.controller, 'dt': dt,
                'duration': duration, 'gravity': source.default_gravity
                if args.gravity is None else args.gravity}
    try:
        writers = [open_writer(path, source.text, metadata) for path in args.out]
    except (OSError, ValueError) as err:
        raise CommandError(str(err)) from None
    memory = RecordingWriter(None, source.text, metadata)       # what --plot draws
    progress = Progress(duration, dt, show_progress(args, sys.stderr))
    status, failure, wall = 0, None, time.perf_counter()
    stopped = {}        # writer -> why it stopped (a full disk): it keeps what it has

    def observe(sim, state):
        for w in writers:
            if w in stopped:
                continue
            try:
                if w.path.lower().endswith('.mcap'):
                    static = sim.static_transforms() if w.count == 0 else None
                    w.append(state, sim.link_transforms(), static)
                else:
                    w.append(state)
            except ValueError as err:
                stopped[w] = str(err)
        if args.plot or args.animate:
            memory.append(state)
        progress.update(state.t, 0.0)

    print('ros-vi simulate: %s, controller %s, dt = %g s, %g s (%d steps)'
          % (source.name, args.controller, dt, duration, int(round(duration / dt))))
    try:
        result = simulate(controller, plant, duration, q0, v0, dt=dt, observer=observe,
                          command_interfaces=setup.command_interfaces,
                          command_bounds=setup.command_bounds,
                          drive_gains=setup.drive_gains or None)
    except ConvergenceError as err:
        result, failure, status = err.result, err, 1
    except (ValueError, FloatingPointError) as err:
        raise CommandError(str(err)) from None      # the writers are closed below
    finally:
        for w in writers:
            try:
                w.close()
            except ValueError as err:
                stopped.setdefault(w, str(err))
    wall = time.perf_counter() - wall
    progress.update(result.t[-1], 0.0, final=True)
    _summary(result, wall, failure)
    for w in writers:
        if w in stopped:
            print('ros-vi simulate: recording stopped: %s' % stopped[w], file=sys.stderr)
            status = 1
        else:
            print('recorded: %s (%d samples)' % (w.path, w.count))
    if args.plot:
        from .plot import plot_recording
        plot_recording(memory.recording(), args.plot)
        print('plot: %s' % args.plot)
    if args.animate:
        import warnings
        from ..visual import animate
        printed = {str(q) for q in plant.urdf.warnings}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            movie = animate(memory.recording(), args.animate,
                            base_dir=os.path.dirname(os.path.abspath(source.path)))
        for message in dict.fromkeys(str(w.message) for w in caught):
            if message not in printed:           # the importer's were printed already
                print('warning: %s' % message, file=sys.stderr)
        print('animation: %s (%d frames)' % (args.animate, movie.frames))
    return status


def _summary(result, wall, failure):
    n = len(result.t) - 1
    E = result.E
    print('summary:')
    if failure is not None:
        print('  FAILED at t = %.6g s: %s' % (result.t[-1], failure))
    print('  simulated:   %.6g s, %d steps in %.3g s wall (%.3g x real time)'
          % (result.t[-1] - result.t[0], n, wall, (result.t[-1] - result.t[0]) / wall
             if wall > 0 else math.inf))
    if n:
        print('  per step:    %.1f us physics (%.1f us with control and recording), '
              '%.2f Newton iterations' % (1e6 * result.step_time / n, 1e6 * wall / n,
                                          result.iterations.mean()))
    print('  energy:      %.6g J -> %.6g J (max |E - E0| = %.3g J)'
          % (E[0], E[-1], np.abs(E - E[0]).max()))
    print('  final q:     %s' % ', '.join('%s %+.6g' % (j, x)
                                          for j, x in zip(result.joint_names, result.q[-1])))
    print('  final v:     %s' % ', '.join('%s %+.6g' % (j, x)
                                          for j, x in zip(result.joint_names, result.v[-1])))
    if result.u.size:
        print('  max |u|:     %s' % ', '.join('%s %.4g' % (j, x) for j, x in zip(
            result.input_names, np.abs(result.u).max(axis=0))))
