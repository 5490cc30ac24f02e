"""Pictures of robots: a software renderer (:mod:`.render`) and recordings played back as
GIF/MP4 animations or still frames (:mod:`.playback`; ``ros-vi animate``); trep's visual API
(``trep.visual``: :func:`visualize_3d`, :class:`VisualItem3D`, ...; :mod:`.items`) playing a
System's trajectory in the browser or into a GIF/MP4.

Plain Python on NumPy and Pillow (trimesh for mesh files, imageio-ffmpeg for MP4, viser for
the browser): no display, no GPU, no ROS.
"""
from .playback import Animation, animate, render_frame
from .render import RobotScene, View, draw, fit_view
from .items import (VisualItem, VisualItem2D, VisualItem3D, VisualWarning, stlmodel,
                    visualize_2d, visualize_3d)

__all__ = ['animate', 'render_frame', 'Animation', 'RobotScene', 'View', 'fit_view', 'draw',
           'VisualItem', 'VisualItem2D', 'VisualItem3D', 'VisualWarning', 'stlmodel',
           'visualize_2d', 'visualize_3d']
