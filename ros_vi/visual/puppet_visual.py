"""The marionette drawn (trep's ``trep.puppets.PuppetVisual``): a :class:`~.items.VisualItem3D`
of a :class:`ros_vi.puppets.Puppet` whose bodies are rods and balls sized from the puppet's
``dimensions``, and whose strings are the lines of its string constraints.

Import it as trep's scripts do: ``from ros_vi.puppets import PuppetVisual``.
"""
import numpy as np

from ..urdf.geometry import axis_alignment
from ..urdf.shapes import Shape
from .items import VisualItem3D

__all__ = ['PuppetVisual', 'PUPPET_RGBA']

PUPPET_RGBA = (0.2, 0.2, 0.2, 1.0)      # trep's puppet colour


def _rod(a, b, radius, rgba=PUPPET_RGBA):
    """A capsule Shape from ``a`` to ``b`` (3,) [m] in its frame, of ``radius`` [m]."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    origin = np.eye(4)
    origin[:3, :3] = axis_alignment(b - a)
    origin[:3, 3] = (a + b) / 2
    return Shape('', 'capsule', origin, rgba, radius=radius,
                 length=float(np.linalg.norm(b - a)))


def _ball(radius, centre=(0.0, 0.0, 0.0), rgba=PUPPET_RGBA):
    origin = np.eye(4)
    origin[:3, 3] = centre
    return Shape('', 'sphere', origin, rgba, radius=radius)


class PuppetVisual(VisualItem3D):
    """A :class:`~ros_vi.puppets.Puppet` and its trajectory, drawn as trep draws it: the
    torso (a bar across the hips, the spine, a bar across the shoulders), limbs as rods
    along their segments, the head a ball, and the strings (its :class:`Distance`
    constraints) as lines from the hooks to the control points.  Seen from the puppet's
    front (trep turns it with ``setOrientation(forward=[0, -1, 0], up=[0, 0, 1])``).

    Arguments as :class:`~.items.VisualItem3D` (``system`` a Puppet; e.g.
    ``offset=[0, 1, 0]`` to draw a second trajectory beside the first).
    """

    def __init__(self, *args, **kwds):
        super().__init__(*args, **kwds)
        self.setOrientation(forward=[0, -1, 0], up=[0, 0, 1])
        self.color = PUPPET_RGBA
        dim = self.system.dimensions
        # limb radii: trep's proportions (0.9 / 16 of both femurs', both humeri's lengths)
        leg = (dim['lfemur_length'] + dim['rfemur_length']) / 16 * 0.9
        arm = (dim['lhumerus_length'] + dim['rhumerus_length']) / 16 * 0.9
        torso = dim['upper_torso_length']
        parts = {'pelvis': [
            _rod((-dim['lhip_width'], 0, 0), (dim['rhip_width'], 0, 0), leg),
            _rod((0, 0, 0), (0, 0, torso), 0.5 * (leg + arm)),
            _rod((-dim['lshoulder_width'], 0, torso), (dim['rshoulder_width'], 0, torso),
                 arm)],
            'head_center': [_ball(0.8 * dim['final_head_length'])],
            'neck_joint': [_ball(dim['neck_length'] / 2)]}
        for s in 'lr':
            parts[s + 'femur'] = [_rod((0, 0, 0), (0, 0, -dim[s + 'femur_length']), leg)]
            parts[s + 'tibia'] = [_rod((0, 0, 0), (0, 0, -dim[s + 'tibia_length']), leg)]
            parts[s + 'foot'] = [_rod((0, 0, 0), (0, dim[s + 'foot_length'], 0), 0.6 * leg)]
            parts[s + 'humerus'] = [_rod((0, 0, 0), (0, 0, -dim[s + 'humerus_length']),
                                         arm)]
            parts[s + 'radius'] = [_rod((0, 0, 0), (0, 0, -dim[s + 'radius_length']), arm)]
            parts[s + 'hand'] = [_rod((0, 0, 0), (0, 0, -dim[s + 'hand_length']), 0.8 * arm)]
        for frame, shapes in parts.items():
            for shape in shapes:
                self.attachDrawing(frame, shape)
