"""Uniform gravity (trep's ``potentials.Gravity``)."""
import numpy as np

from ..potential import Potential


class Gravity(Potential):
    """Uniform gravity: ``V = -sum_i m_i g . p_i`` over all frames with mass.

    Parameters
    ----------
    system : System
    gravity : sequence of 3 floats
        Gravitational acceleration in world coordinates [m/s^2] (default (0, 0, -9.8)).

    Gravity is evaluated inside the compiled tree kernel (as a base acceleration on the
    composite inertias), so it adds no per-step Python work.
    """

    def __init__(self, system, gravity=(0.0, 0.0, -9.8), name=None):
        self._g = self._check(gravity)
        Potential.__init__(self, system, name)

    @staticmethod
    def _check(gravity):
        g = np.array(gravity, dtype=float).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError('gravity must be three finite numbers, got %r' % (gravity,))
        return g

    def __repr__(self):
        return '<Gravity %f %f %f>' % tuple(self._g)

    @property
    def gravity(self):
        """Gravity vector (3,) [m/s^2]."""
        return self._g.copy()

    @gravity.setter
    def gravity(self, value):
        self._g = self._check(value)
        self._system._structure_changed()

    @property
    def kernel_gravity(self):
        """Gravity is evaluated by the compiled kernel: its vector (3,) [m/s^2]."""
        return self._g

    def V(self):
        R, P, _ = self._system._kinematics()
        model = self._system.model
        mf = model.mass_frames
        return float(-(model.mass[mf] * (P[mf] @ self._g)).sum())

    def _sum_p(self, method, *configs):
        total = 0.0
        g = self._g
        for frame in self._system.masses:
            total -= frame.mass * (g @ getattr(frame, method)(*configs)[:3])
        return float(total)

    def V_dq(self, q1):
        return self._sum_p('p_dq', q1)

    def V_dqdq(self, q1, q2):
        return self._sum_p('p_dqdq', q1, q2)

    def V_dqdqdq(self, q1, q2, q3):
        return self._sum_p('p_dqdqdq', q1, q2, q3)
