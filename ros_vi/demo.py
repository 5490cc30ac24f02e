"""The main job: swing a pendulum up and balance it, with ROS 2 nodes talking over DDS.

The ``simulator`` node (the midpoint VI) and the ``swingup_controller`` node (energy-shaping
swing-up, then the LQR designed on the VI's own linearisation) run in this one process on
one executor -- the same node classes ``launch/<model>_swingup.launch.py`` starts, with the
parameters of ``config/<model>_swingup.yaml`` -- and talk over DDS in lockstep with
real_time_factor 0 (each tick waits for the controller's answer, as fast as the machine
allows, deterministic).  It prints progress about once per simulated second, a summary, and
writes a plot of q, p, u and E against time.

    python -m ros_vi.demo                                  # pendulum (trep's tutorial)
    python -m ros_vi.demo --model cartpole --duration 25 --output cartpole.png
    python -m ros_vi.demo --offline        # the same closed loop without ROS (ros-vi simulate)

Exit status 0 when the system ends up (and stays) upright, 1 when it does not (the message
says why), 2 on bad arguments or when the nodes cannot run.  The ROS environment is private
unless you set it: a random ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a
temporary ROS_LOG_DIR.
"""
import argparse
import math
import os
import random
import shutil
import sys
import tempfile
import time

import numpy as np

# what "upright" means for each demo (urdf/README.md conventions), and the default run length
CRITERIA = {
    # q tolerance(s), v tolerance(s), default duration [s], description
    'pendulum': (0.05, 0.1, 15.0, '|theta - pi| < 0.05 rad and |theta_dot| < 0.1 rad/s'),
    'cartpole': ([0.5, 0.05], math.inf, 25.0, '|x| < 0.5 m and |pole| < 0.05 rad'),
    'acrobot': (0.05, math.inf, 35.0, '|shoulder - pi| < 0.05 rad and |elbow| < 0.05 rad'),
}


def _isolate_ros_environment():
    """Private DDS unless the user chose otherwise; returns a temp dir to remove (or None)."""
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.SystemRandom().randint(1, 100)))
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    if 'ROS_LOG_DIR' not in os.environ:
        tmp = tempfile.mkdtemp(prefix='ros_vi_demo_log_')
        os.environ['ROS_LOG_DIR'] = tmp
        return tmp
    return None


def settle_time(run, goal, q_tol, v_tol):
    """First time after which every sample is within the tolerances (nan if the last is
    not); see ros_vi.simulation.settle_time."""
    from .simulation import settle_time as _settle
    return _settle(run, goal, q_tol, v_tol)


def plot(run, path, title):
    """PNG of q, p, u and E - E_goal against time."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
    for i, name in enumerate(run.joint_names):
        axes[0].plot(run.t, run.q[:, i], label=name)
        axes[1].plot(run.t, run.p[:, i], label=name)
    for i, name in enumerate(run.input_names):
        axes[2].step(run.t[:-1], run.u[:, i], where='post', label=name)
    axes[3].plot(run.t, run.E - run.goal_energy)
    axes[0].set_ylabel('q [rad, m]')
    axes[1].set_ylabel('p (VI momentum)')
    axes[2].set_ylabel('u [N m, N]')
    axes[3].set_ylabel('E - E_goal [J]')
    axes[3].set_xlabel('simulated time [s]')
    for ax in axes[:3]:
        ax.legend(loc='upper right', fontsize='small')
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog='python -m ros_vi.demo', description=__doc__.splitlines()[0])
    parser.add_argument('--model', choices=sorted(CRITERIA), default='pendulum',
                        help='which system to swing up (default pendulum)')
    parser.add_argument('--duration', type=float, default=None,
                        help='simulated seconds (default: pendulum 15, cartpole 25, '
                             'acrobot 35)')
    parser.add_argument('--output', default=None,
                        help='PNG file for the plot (default <model>_swingup.png in the '
                             'current directory)')
    parser.add_argument('--controller', choices=('swingup', 'lqr'), default='swingup',
                        help='swingup_controller (default) or lqr_controller alone')
    parser.add_argument('--offset', type=float, default=None,
                        help='with --controller lqr: start this many rad off upright '
                             '(default 0.3; acrobot 0.09, the edge of its LQR basin)')
    parser.add_argument('--offline', action='store_true',
                        help='the same closed loop in one process without ROS '
                             '(ros-vi simulate MODEL --controller ... --plot ...)')
    args = parser.parse_args(argv)
    q_tol, v_tol, default_duration, criterion = CRITERIA[args.model]
    duration = default_duration if args.duration is None else args.duration
    if not (math.isfinite(duration) and duration > 0):
        parser.error('--duration must be > 0, got %r' % duration)
    output = os.path.abspath(args.output or '%s_swingup.png' % args.model)
    if args.offline:
        return _run_offline(args, duration, output)

    log_dir = _isolate_ros_environment()
    try:
        return _run(args, duration, output, q_tol, v_tol, criterion)
    finally:
        if log_dir:
            shutil.rmtree(log_dir, ignore_errors=True)


# default start offset [rad] from upright for --controller lqr: 0.3 rad where the LQR
# recovers from it; the acrobot's LQR basin ends near 0.09 rad (urdf/README.md)
LQR_OFFSET = {'pendulum': 0.3, 'cartpole': 0.3, 'acrobot': 0.09}


def _run_offline(args, duration, output):
    from .cli import main as ros_vi
    if args.offset is not None:
        print('python -m ros_vi.demo: --offset is for the ROS run; ros-vi simulate takes '
              '--initial JOINT=VALUE', file=sys.stderr)
        return 2
    return ros_vi(['simulate', args.model, '--controller', args.controller, '--duration',
                   repr(duration), '--plot', output])


def _run(args, duration, output, q_tol, v_tol, criterion):
    from .control import DEMOS
    from .ros.demo_loop import run_loop
    demo = DEMOS[args.model]
    start = None
    if args.controller == 'lqr':
        start = demo.goal.copy()
        start[np.nonzero(demo.goal != demo.start)[0][-1]] += \
            LQR_OFFSET[args.model] if args.offset is None else args.offset
    print('ros_vi demo: %s %s over ROS 2 (simulator + %s_controller nodes, DDS domain %s, '
          'lockstep), %g s of simulated time'
          % (args.model, 'swing-up and balance' if args.controller == 'swingup'
             else 'LQR balance', args.controller, os.environ.get('ROS_DOMAIN_ID'), duration),
          flush=True)

    def progress(d):
        if d.get('message', '').startswith('mode') or d.get('mode_changed') == 'true':
            print('  t = %6.2f s   mode %-8s  E - E_goal = %+10.4f J%s'
                  % (float(d['state_time']), d['mode'], float(d['energy_error']),
                     '   (mode change)' if d.get('mode_changed') == 'true' else ''),
                  flush=True)
        else:
            print('  warning from the controller: %s' % d.get('message'), flush=True)

    wall0 = time.monotonic()
    try:
        run = run_loop(args.model, duration, controller=args.controller,
                       initial_positions=start, on_progress=progress)
    except (RuntimeError, ValueError) as err:
        print('ros_vi demo: FAILED to run the nodes: %s' % err, file=sys.stderr)
        return 2
    wall = time.monotonic() - wall0
    t_up = settle_time(run, demo.goal, q_tol, v_tol)
    from .control import wrap_angles
    err = wrap_angles(run.q[-1] - demo.goal, run.angles)
    plot(run, output, '%s %s over ROS 2 (lockstep)' % (args.model, args.controller))
    print('summary:')
    print('  upright (%s): %s' % (criterion, 'from t = %.2f s' % t_up if math.isfinite(t_up)
                                  else 'NOT reached'))
    print('  final error:  %s   final velocity: %s' % (
        ', '.join('%s %+.3e' % (n, e) for n, e in zip(run.joint_names, err)),
        ', '.join('%s %+.3e' % (n, e) for n, e in zip(run.joint_names, run.v[-1]))))
    print('  max |u|:      %s' % ', '.join('%s %.4g' % (n, m) for n, m in zip(
        run.input_names, np.abs(run.u).max(axis=0))))
    print('  final mode:   %s' % (run.progress[-1]['mode'] if run.progress else '?'))
    print('  wall time:    %.2f s (loop %.2f s, %d lockstep ticks, %.2f ms per tick)'
          % (wall, run.wall_time, len(run.t) - 1, 1e3 * run.wall_time / max(len(run.t) - 1, 1)))
    print('  plot:         %s' % output)
    if not math.isfinite(t_up):
        print('ros_vi demo: FAILED: the %s did not end up upright within %g s (%s); final '
              'error %s' % (args.model, duration, criterion, np.array2string(err, precision=4)),
              file=sys.stderr)
        return 1
    print('ros_vi demo: OK (upright %.2f s after the start, held for the last %.2f s)'
          % (t_up, run.t[-1] - t_up))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
