"""Pictures of robots: a software renderer (:mod:`.render`) and recordings played back as
GIF/MP4 animations or still frames (:mod:`.playback`; ``ros-vi animate``).

Plain Python on NumPy and Pillow (trimesh for mesh files, imageio-ffmpeg for MP4): no
display, no GPU, no ROS.
"""
from .playback import Animation, animate, render_frame
from .render import RobotScene, View, draw, fit_view

__all__ = ['animate', 'render_frame', 'Animation', 'RobotScene', 'View', 'fit_view', 'draw']
