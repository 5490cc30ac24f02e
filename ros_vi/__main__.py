"""``python -m ros_vi``: the ``ros-vi`` command line."""
import sys

from .cli import main

sys.exit(main())
