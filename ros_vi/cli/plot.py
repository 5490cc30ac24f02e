"""Plot a recording: joint positions, velocities, efforts and energy against time.

    ros-vi plot run.npz                  # writes run.png
    ros-vi plot run.mcap --out run.svg   # any matplotlib format
    ros-vi plot run.csv --joints joint_1 joint_2
"""
import os

import numpy as np

from . import CommandError
from .options import check_output

HELP = 'plot q, v, effort and energy of a recording (npz, csv or MCAP)'


def add_arguments(parser):
    parser.add_argument('file', metavar='FILE', help='a recording: .npz, .csv or .mcap')
    parser.add_argument('--out', default=None,
                        help='image file (default FILE with the suffix .png)')
    parser.add_argument('--joints', nargs='+', default=None, metavar='JOINT',
                        help='only these joints (default all)')
    parser.add_argument('--title', default=None, help='figure title')


def image_types():
    """The image suffixes matplotlib writes (``.png``, ``.svg``, ``.pdf``, ...)."""
    from matplotlib.figure import Figure
    return tuple('.' + t for t in sorted(Figure().canvas.get_supported_filetypes()))


def check_plot_path(path, option):
    """CommandError unless ``path`` is an image matplotlib writes, in a writable folder."""
    check_output(path, option, image_types())


def plot_recording(rec, path, title=None, joints=None):
    """Write a figure of ``rec`` (a :class:`ros_vi.recording.Recording`) to ``path``:
    positions [rad or m], velocities [rad/s or m/s], efforts [N m or N] of ``joints``
    (default all) and the total energy [J] against time [s]."""
    from matplotlib.figure import Figure      # no pyplot: no global figure state, no GUI
    columns = [rec.column(j) for j in joints] if joints else range(len(rec.joint_names))
    has_energy = bool(np.isfinite(rec.energy).any())
    rows = 4 if has_energy else 3
    fig = Figure(figsize=(8, 2.2 * rows + 0.6))
    axes = fig.subplots(rows, 1, sharex=True)
    for i in columns:
        name = rec.joint_names[i]
        axes[0].plot(rec.t, rec.position[:, i], label=name)
        axes[1].plot(rec.t, rec.velocity[:, i], label=name)
        axes[2].step(rec.t, rec.effort[:, i], where='pre', label=name)
    axes[0].set_ylabel('position\n[rad, m]')
    axes[1].set_ylabel('velocity\n[rad/s, m/s]')
    axes[2].set_ylabel('effort\n[N m, N]')
    if has_energy:
        axes[3].plot(rec.t, rec.energy, color='k')
        axes[3].set_ylabel('energy [J]')
    axes[-1].set_xlabel('time [s]')
    if len(columns) <= 10:
        axes[0].legend(loc='upper right', fontsize='small', ncol=max(1, len(columns) // 4))
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title(title or _title(rec))
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _title(rec):
    meta = rec.metadata
    parts = [str(meta.get('model', 'recording'))]
    if meta.get('controller') not in (None, 'none'):
        parts.append(str(meta['controller']))
    if isinstance(meta.get('dt'), (int, float)):     # metadata of a file: any JSON value
        parts.append('dt = %g s' % meta['dt'])
    return ', '.join(parts)


def run(args):
    from .models import read_recording
    out = args.out or os.path.splitext(args.file)[0] + '.png'
    check_plot_path(out, '--out')
    rec = read_recording(args.file)
    if args.joints:
        try:
            [rec.column(j) for j in args.joints]
        except ValueError as err:
            raise CommandError(str(err)) from None
    try:
        plot_recording(rec, out, args.title, args.joints)
    except OSError as err:
        raise CommandError('cannot write %r: %s' % (out, err.strerror or err)) from None
    except ValueError as err:       # what the recording holds cannot be drawn
        raise CommandError('cannot plot %r: %s' % (args.file, err)) from None
    print('plot: %s (%d samples, %.4g s)' % (out, len(rec), rec.t[-1] - rec.t[0]))
    return 0
