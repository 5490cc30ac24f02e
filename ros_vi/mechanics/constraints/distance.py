"""Distance between two frame origins (trep's ``constraints.Distance``)."""
import numpy as np

from ..config import Config
from ..constraint import Constraint
from ..frame import resolve_frame
from .point import FrameConstraint


class Distance(FrameConstraint):
    """Keep the origins of ``frame1`` and ``frame2`` a distance ``d`` apart.

    ``h(q) = (p1 - p2) . (p1 - p2) - d^2``  [m^2]   (trep's ``d^2 = (p1 - p2)^T (p1 - p2)``)

    Parameters
    ----------
    system : System
    frame1, frame2 : Frame or frame name
    distance : float or str
        A fixed distance [m] (> 0), or the name of a new *kinematic* :class:`Config` (with
        no frame) whose value is the distance; then ``dh/dd = -2 d`` and the distance is an
        input of the dynamics (``ddqk``) and of the integrator (``k2``).
    name : str, optional

    The constraint is degenerate at ``d = 0`` (its gradient vanishes there); use
    ``PointToPoint3D`` to make two points coincide.
    """

    def __init__(self, system, frame1, frame2, distance, name=None, tolerance=1e-10):
        self._frame1 = resolve_frame(system, frame1, 'Distance frame1')
        self._frame2 = resolve_frame(system, frame2, 'Distance frame2')
        if self._frame1 is self._frame2:
            raise ValueError('Distance: frame1 and frame2 are the same frame %r'
                             % (self._frame1.name,))
        self._config = None
        self._fixed = 0.0
        if isinstance(distance, str):
            try:
                system.get_config(distance)
            except KeyError:
                pass
            else:
                raise ValueError('Distance: a config named %r already exists' % (distance,))
        else:
            self._fixed = self._check_fixed(distance)
        self._setup_memo(system)
        system.hold_structure_changes()
        try:
            if isinstance(distance, str):
                self._config = Config(system, distance, kinematic=True)
            Constraint.__init__(self, system, name, tolerance)
        finally:
            system.resume_structure_changes()

    @staticmethod
    def _check_fixed(value):
        try:
            d = float(value)
        except (TypeError, ValueError):
            raise TypeError('Distance: distance must be a number [m] or a config name, got %r'
                            % (value,)) from None
        if not np.isfinite(d) or d <= 0.0:
            raise ValueError('Distance: distance must be finite and positive, got %r (use '
                             'PointToPoint3D for coincident points)' % (value,))
        return d

    @property
    def config(self):
        """The kinematic :class:`Config` that sets the distance, or None (read only)."""
        return self._config

    @property
    def frame1(self):
        """First :class:`Frame` (read only)."""
        return self._frame1

    @property
    def frame2(self):
        """Second :class:`Frame` (read only)."""
        return self._frame2

    @property
    def distance(self):
        """Desired distance [m]: the fixed value or the config's current value."""
        if self._config is not None:
            return self._config.q
        return self._fixed

    @distance.setter
    def distance(self, value):
        if self._config is not None:
            self._config.q = value
        else:
            self._fixed = self._check_fixed(value)
            self._system._parameters_changed()

    _stacked_constraint = True

    def _dot_terms(self, vectors):
        # h = r . r - d^2 with r = p1 - p2 (the -d^2 term: _adjust_stacked)
        a, b = vectors.slot(self._frame1), vectors.slot(self._frame2)
        return (a, b, a, b, np.zeros(3))

    def _adjust_stacked(self, row, out, order):
        d = self.distance
        out[0][row] -= d * d
        if self._config is not None:
            k = self._config.index
            out[1][row, k] -= 2.0 * d
            if order >= 2:
                out[2][row, k, k] -= 2.0
