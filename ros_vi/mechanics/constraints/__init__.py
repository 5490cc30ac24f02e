"""Built-in holonomic constraints (trep.constraints).

- :class:`Distance`: ``|p1 - p2|^2 - d^2`` with a fixed or kinematic distance.
- :class:`PointToPoint3D`, :class:`PointToPoint2D`: make two frame origins coincide along 3
  or 2 world axes; each returns a :class:`PointToPointGroup` of one-axis
  :class:`PointToPoint` constraints.
- :class:`PointToPoint1D`: the same along one world axis; a :class:`PointToPoint` constraint
  itself (as in trep) that also reads as a one-element group.
- :class:`PointOnPlane`: a frame origin in a plane carried by another frame.
"""
from .distance import Distance
from .point import PointToPoint, PointToPoint1D, PointToPoint2D, PointToPoint3D, \
    PointToPointGroup
from .pointonplane import PointOnPlane
from .mimic import Mimic

__all__ = ['Distance', 'PointToPoint', 'PointToPoint1D', 'PointToPoint2D', 'PointToPoint3D',
           'PointToPointGroup', 'PointOnPlane', 'Mimic']
