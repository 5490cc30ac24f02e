"""The ``ros-vi`` command line (also ``python -m ros_vi``): ask a model quick questions,
simulate it offline, look at the result.

    ros-vi --help
    ros-vi COMMAND --help

Each command is a module of this package with ``HELP`` (one line), ``add_arguments(parser)``
and ``run(args) -> exit status``.  Exit status: 0 success, 1 the command ran and failed (a
simulation that did not converge, a goal not reached), 2 bad usage or input (argparse's
convention).  Shell completion comes from argcomplete when it is installed
(``eval "$(register-python-argcomplete ros-vi)"``).
"""
import argparse
import importlib
import sys
import warnings

__all__ = ['main', 'COMMANDS', 'CommandError']

# the subcommands, in the order ``ros-vi --help`` lists them
COMMANDS = ('info', 'simulate', 'sweep', 'plot', 'animate', 'view', 'distances', 'bench')


class CommandError(Exception):
    """Bad input found by a command after parsing (a model or file that cannot be used):
    printed as ``ros-vi COMMAND: error: message`` with exit status 2."""


def build_parser():
    parser = argparse.ArgumentParser(
        prog='ros-vi', description=__doc__.splitlines()[0],
        epilog="'ros-vi COMMAND --help' describes each command.")
    from .. import __version__
    parser.add_argument('--version', action='version', version='ros_vi ' + __version__)
    sub = parser.add_subparsers(dest='command', metavar='COMMAND', required=True)
    for name in COMMANDS:
        module = importlib.import_module('.' + name, __name__)
        p = sub.add_parser(name, help=module.HELP, description=module.__doc__)
        module.add_arguments(p)
        p.set_defaults(command_function=module.run)
    return parser


def main(argv=None):
    """Entry point of ``ros-vi``; returns the exit status."""
    parser = build_parser()
    try:
        import argcomplete
        argcomplete.autocomplete(parser)
    except ImportError:
        pass
    args = parser.parse_args(argv)
    import numpy as np
    try:
        # what a hostile file does to the numbers (an overflow, a nan) is reported by the
        # checks that follow, in one line: numpy's own warnings are not shown
        with np.errstate(all='ignore'), warnings.catch_warnings():
            warnings.filterwarnings('ignore', category=RuntimeWarning, module=r'numpy\b')
            return int(args.command_function(args) or 0)
    except CommandError as err:
        print('ros-vi %s: error: %s' % (args.command, err), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print('ros-vi %s: interrupted' % args.command, file=sys.stderr)
        return 130


if __name__ == '__main__':
    sys.exit(main())
