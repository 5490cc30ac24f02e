"""Command-line options several ``ros-vi`` subcommands share."""


def add_progress_arguments(parser):
    """``--progress`` / ``--no-progress``; neither: a bar only on a terminal
    (:func:`show_progress`)."""
    parser.add_argument('--progress', dest='progress', action='store_true', default=None,
                        help='show the progress bar even when not on a terminal')
    parser.add_argument('--no-progress', dest='progress', action='store_false',
                        help='no progress bar')


def show_progress(args, stream):
    """Whether to draw a progress bar on ``stream`` for the parsed ``args``."""
    return stream.isatty() if args.progress is None else args.progress
