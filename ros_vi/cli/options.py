"""Command-line options several ``ros-vi`` subcommands share, and the check of an output
path that every command makes before it starts working."""
import argparse
import os

from . import CommandError


def add_progress_arguments(parser):
    """``--progress`` / ``--no-progress``; neither: a bar only on a terminal
    (:func:`show_progress`)."""
    parser.add_argument('--progress', dest='progress', action='store_true', default=None,
                        help='show the progress bar even when not on a terminal')
    parser.add_argument('--no-progress', dest='progress', action='store_false',
                        help='no progress bar')


def add_floating_base_argument(parser):
    """``--floating-base``: the model's root link on a free joint (floating-base robots)."""
    parser.add_argument('--floating-base', action='store_true',
                        help='put the root link on a free joint root_joint (a floating '
                             'base: legged robots, drones); its configs root_joint_x .. _rz '
                             'are the pose\'s chart coordinates (docs/free-bodies.md)')


class _GroundAction(argparse.Action):
    """``--ground HEIGHT MU [E]``: two or three numbers, else the parser's usage error."""

    def __call__(self, parser, namespace, values, option_string=None):
        if len(values) not in (2, 3):
            parser.error('argument --ground: expected HEIGHT MU [E] (2 or 3 numbers), got %d'
                         % len(values))
        setattr(namespace, self.dest, tuple(values))


def add_ground_argument(parser):
    """``--ground HEIGHT MU [E]``: a contact ground plane under the model."""
    parser.add_argument('--ground', nargs='+', type=float, metavar='HEIGHT MU [E]',
                        action=_GroundAction, default=None,
                        help='a ground plane z = HEIGHT [m] with Coulomb friction MU on which '
                             'the collision shapes rest, and the '
                             'coefficient of restitution E of their impacts (default 0: '
                             'inelastic); a world file gives its own')
    parser.add_argument('--self-collision', action='store_true',
                        help='with a contact ground: the robot\'s own links touch one '
                             'another too (but for adjacent links and pairs within 1 cm '
                             'at the start); off by default')


def add_limits_argument(parser):
    """``--no-limits``: the URDF's joint limits not enforced (they are by default)."""
    parser.add_argument('--no-limits', dest='limits', action='store_false',
                        help='do not hold the joints within their URDF <limit lower upper> '
                             '(by default each is a unilateral constraint of the step: an '
                             'inelastic stop)')


def show_progress(args, stream):
    """Whether to draw a progress bar on ``stream`` for the parsed ``args``."""
    return stream.isatty() if args.progress is None else args.progress


def check_output(path, option, types=None):
    """CommandError ``cannot write PATH (OPTION): why`` when a file cannot be written at
    ``path``: its folder does not exist or is not writable, it is a folder, or its suffix is
    not one of ``types`` (e.g. ``('.png', '.svg')``; None: any).  Called before any work, so
    a long run never ends in a file it cannot write."""
    path = os.fspath(path)
    where = 'cannot write %r (%s)' % (path, option)
    suffix = os.path.splitext(path)[1].lower()
    if types is not None and suffix not in types:
        raise CommandError('%s: unknown file type %r (use %s)'
                           % (where, suffix, ', '.join(types)))
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CommandError('%s: it is a directory' % where)
    if not os.path.isdir(folder):
        raise CommandError('%s: no such directory %r' % (where, folder))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CommandError('%s: directory %r is not writable' % (where, folder))
