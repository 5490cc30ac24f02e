"""Animate a recording: the robot drawn from its link frames and its URDF's visual geometry,
written as a GIF or an MP4.

    ros-vi animate run.npz                          # writes run.gif
    ros-vi animate run.mcap --out run.mp4 --fps 30 --size 1280x720
    ros-vi animate run.csv --model cartpole --view=-90,10 --speed 0.5
    ros-vi animate run.npz --start 2 --end 4 --frames
    ros-vi animate run.npz --out still.png --start 4.2      # one still picture at t = 4.2 s

The robot comes from the recording's URDF (npz and MCAP keep it) or ``--model`` (needed for
a CSV recording; also to draw a recording with another description of the same robot).
Frame k shows the recording at START + k * SPEED / FPS (positions interpolated), so a
recording of D seconds gives floor(D * FPS / SPEED) frames.  The camera looks at the whole
motion from AZIMUTH (deg, from +x towards +y; default: facing the plane of the motion) and
ELEVATION (deg above the horizontal, default 20).  Links whose meshes are not found are
drawn as a skeleton, with a warning.
"""
import math
import os
import sys
import warnings

from . import CommandError
from .options import check_output

HELP = 'draw a recording as a GIF or MP4 animation of the robot'


def add_arguments(parser):
    parser.add_argument('file', metavar='FILE', help='a recording: .npz, .csv or .mcap')
    parser.add_argument('--out', default=None,
                        help='.gif or .mp4 (default FILE with the suffix .gif); .png: one '
                             'still picture at --start')
    parser.add_argument('--model', default=None, metavar='MODEL',
                        help='URDF/xacro file or shipped model name (default: the recording\'s '
                             'own URDF; needed for csv)')
    parser.add_argument('--fps', type=float, default=25.0,
                        help='frames per second (default 25)')
    parser.add_argument('--speed', type=float, default=1.0,
                        help='recording seconds per second of playback (default 1)')
    parser.add_argument('--size', default='640x480', metavar='WIDTHxHEIGHT',
                        help='picture size in pixels (default 640x480)')
    parser.add_argument('--view', default=None, metavar='AZIMUTH,ELEVATION',
                        help='camera direction [deg] (default: facing the motion, 20 deg '
                             'above the horizontal)')
    parser.add_argument('--frames', action='store_true', help='draw every link\'s axes')
    parser.add_argument('--start', type=float, default=None, metavar='T',
                        help='first recording time shown [s] (default: the first sample)')
    parser.add_argument('--end', type=float, default=None, metavar='T',
                        help='last recording time shown [s] (default: the last sample)')


def _size(text):
    parts = text.lower().split('x')
    try:
        w, h = (int(p) for p in parts)
    except ValueError:
        raise CommandError('--size %r: expected WIDTHxHEIGHT in pixels, e.g. 640x480'
                           % text) from None
    return w, h


def _view(text):
    if text is None:
        return None, 20.0
    try:
        az, el = (float(p) for p in text.split(','))
    except ValueError:
        raise CommandError('--view %r: expected AZIMUTH,ELEVATION in degrees, e.g. -60,20'
                           % text) from None
    if not math.isfinite(az):
        raise CommandError('--view %r: azimuth must be finite' % text)
    if not -90.0 <= el <= 90.0:
        raise CommandError('--view %r: elevation must be in [-90, 90] deg' % text)
    return az, el


def run(args):
    from ..urdf import URDFError
    from ..visual import animate
    from ..visual.playback import OUTPUT_TYPES
    from .models import read_recording, resolve_model
    out = args.out or os.path.splitext(args.file)[0] + '.gif'
    suffix = os.path.splitext(out)[1].lower()
    if suffix not in OUTPUT_TYPES + ('.png',):
        raise CommandError('--out %r: unknown file type %r (use %s or .png)'
                           % (out, suffix, ', '.join(OUTPUT_TYPES)))
    size = _size(args.size)
    azimuth, elevation = _view(args.view)
    for name in ('fps', 'speed'):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            raise CommandError('--%s must be finite and > 0, got %r' % (name, value))
    check_output(out, '--out')
    rec = read_recording(args.file)
    urdf, base_dir = None, None
    if args.model is not None:
        source = resolve_model(args.model)
        urdf, base_dir = source.text, os.path.dirname(os.path.abspath(source.path))
    elif not rec.robot_description:
        raise CommandError('recording %r has no robot description (a CSV keeps none): give '
                           'the model with --model' % args.file)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            if suffix == '.png':
                return _still(rec, out, urdf, base_dir, args, size, azimuth, elevation, caught)
            result = animate(rec, out, urdf=urdf, base_dir=base_dir, fps=args.fps,
                             speed=args.speed, size=size, azimuth=azimuth,
                             elevation=elevation, frames=args.frames, start=args.start,
                             end=args.end)
        except URDFError as err:
            raise CommandError('%s: %s' % ('--model %s' % args.model if args.model
                                           else 'the recording\'s URDF', err)) from None
        except ValueError as err:
            raise CommandError(str(err)) from None
        except OSError as err:
            raise CommandError('cannot write %r: %s' % (out, err.strerror or err)) from None
    for w in caught:
        print('warning: %s' % w.message, file=sys.stderr)
    print('animation: %s (%d frames at %g fps, %.4g s; recording %.4g to %.4g s at %gx)'
          % (out, result.frames, result.fps, result.duration, result.start, result.end,
             args.speed))
    return 0


def _still(rec, out, urdf, base_dir, args, size, azimuth, elevation, caught):
    """--out X.png: the recording at --start (default its first sample) as one picture."""
    from ..visual import render_frame
    render_frame(rec, out, t=args.start, urdf=urdf, base_dir=base_dir, size=size,
                 azimuth=azimuth, elevation=elevation, frames=args.frames)
    for w in caught:
        print('warning: %s' % w.message, file=sys.stderr)
    print('still: %s (t = %.4g s)' % (out, rec.t[0] if args.start is None else args.start))
    return 0
