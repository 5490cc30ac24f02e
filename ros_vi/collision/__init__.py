"""Distance and collision queries between named links and obstacles, with derivatives.

A robot model knows every link's pose and its derivatives, so it can answer "how far is
link_7 from that obstacle, in which direction, and how does that change with q?" directly,
by name, without a second physics engine::

    from ros_vi.collision import Box, CollisionDetector, HalfSpace

    detector = CollisionDetector(system, [('link_7', 'ground'), ('link_7', 'cube1')],
                                 obstacles={'ground': HalfSpace((0, 0, 1), 0.0),
                                            'cube1': Box((1, 1, 1), xyz=(1, 1, 0.5))})
    d = detector.compute_distances(q)          # (npairs,) [m], negative when penetrating
    J = detector.distance_jacobian(q)          # (npairs, nQ): d d / d q
    detector.in_collision(q, margin=0.05)      # any pair within 5 cm?

The links' shapes are their URDF ``<collision>`` elements (read from the text the System
was imported from, ``system.urdf.description``); obstacles are :class:`Box`,
:class:`Sphere`, :class:`Cylinder` and :class:`HalfSpace` in the world, or an obstacle YAML
file (:func:`load_obstacles`).  The geometry is done by coal; see
:mod:`~ros_vi.collision.detector` for the rules (several shapes per link, meshes as convex
hulls, the gradient) and docs/collision.md for the whole story.

Plain Python, NumPy and coal (imported when a detector is made): no ROS.
"""
from .detector import CollisionDetector, DistanceQuery, parse_pair
from .obstacles import (OBSTACLE_TYPES, Box, Cylinder, HalfSpace, Sphere, load_obstacles,
                        obstacles_from_dict)

__all__ = ['CollisionDetector', 'DistanceQuery', 'parse_pair', 'Box', 'Sphere', 'Cylinder',
           'HalfSpace', 'OBSTACLE_TYPES', 'load_obstacles', 'obstacles_from_dict']
