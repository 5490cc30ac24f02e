"""A point on a plane (trep's ``constraints.PointOnPlane``)."""
import numpy as np

from ..constraint import Constraint
from ..frame import resolve_frame
from .point import FrameConstraint


class PointOnPlane(FrameConstraint):
    """Keep the origin of ``point_frame`` in a plane through the origin of ``plane_frame``.

    ``h(q) = (p_plane - p_point) . (R_plane n)``  [m times |n|]

    Parameters
    ----------
    system : System
    plane_frame : Frame or frame name
        The plane passes through its origin and moves with it.
    plane_normal : sequence of 3 floats
        Normal vector ``n`` in ``plane_frame`` coordinates (non-zero; used as given, not
        normalised, as in trep: h scales with |n|).
    point_frame : Frame or frame name
    name : str, optional

    Two such constraints with different normals keep a point on a line, three on a point.
    """

    def __init__(self, system, plane_frame, plane_normal, point_frame, name=None,
                 tolerance=1e-10):
        self._plane = resolve_frame(system, plane_frame, 'PointOnPlane plane_frame')
        self._pointf = resolve_frame(system, point_frame, 'PointOnPlane point_frame')
        self._normal = self._check_normal(plane_normal)
        self._setup_memo(system)
        Constraint.__init__(self, system, name, tolerance)
        # get_actual_distance of the base class measures frame1-frame2
        self._frame1, self._frame2 = self._plane, self._pointf

    @staticmethod
    def _check_normal(value):
        try:
            n = np.array(value, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError('PointOnPlane: plane_normal must be 3 numbers, got %r'
                            % (value,)) from None
        if n.shape != (3,) or not np.all(np.isfinite(n)):
            raise ValueError('PointOnPlane: plane_normal must be 3 finite numbers, got %r'
                             % (value,))
        if not np.any(n != 0.0):
            raise ValueError('PointOnPlane: plane_normal must be non-zero')
        return n

    @property
    def plane_frame(self):
        """The :class:`Frame` that carries the plane (read only)."""
        return self._plane

    @property
    def point_frame(self):
        """The :class:`Frame` whose origin is constrained (read only)."""
        return self._pointf

    @property
    def normal(self):
        """Plane normal (3,) in ``plane_frame`` coordinates (settable, non-zero)."""
        return self._normal.copy()

    @normal.setter
    def normal(self, value):
        self._normal = self._check_normal(value)
        self._system._parameters_changed()
        self._memo.clear()

    _stacked_constraint = True

    def _dot_terms(self, vectors):
        # h = (p_plane - p_point) . (R_plane n)
        return (vectors.slot(self._plane), vectors.slot(self._pointf),
                vectors.slot(self._plane, self._normal), -1, np.zeros(3))

    def get_actual_distance(self):
        """Signed distance [m] of the point from the plane along the unit normal:
        ``(p_point - p_plane) . R n / |n|``."""
        return -self.h() / float(np.linalg.norm(self._normal))
