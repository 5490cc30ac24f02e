"""Linear coupling of two configs (URDF ``<mimic>`` joints)."""
import numpy as np

from ..constraint import Constraint


class Mimic(Constraint):
    """``h = q_mimic - multiplier * q_reference - offset = 0``.

    Units follow the configs: for revolute joints ``offset`` is in rad, for prismatic in m
    (a revolute mimicking a prismatic joint gets a multiplier in rad/m).  The constraint is
    linear, so every second and higher derivative is zero.
    """

    def __init__(self, system, config, reference, multiplier=1.0, offset=0.0, name=None,
                 tolerance=1e-10):
        self._config = system.get_config(config)
        self._reference = system.get_config(reference)
        if self._config is self._reference:
            raise ValueError('Mimic %r: a config cannot mimic itself (%r)'
                             % (name, self._config.name))
        self.multiplier = float(multiplier)
        self.offset = float(offset)
        if not (np.isfinite(self.multiplier) and np.isfinite(self.offset)):
            raise ValueError('Mimic %r: multiplier and offset must be finite' % (name,))
        Constraint.__init__(self, system, name, tolerance)

    @property
    def config(self):
        """The driven (mimicking) config."""
        return self._config

    @property
    def reference(self):
        """The config that is mimicked."""
        return self._reference

    def h(self):
        return self._config.q - self.multiplier * self._reference.q - self.offset

    def h_dq(self, q1):
        c = self._system.get_config(q1)
        if c is self._config:
            return 1.0
        if c is self._reference:
            return -self.multiplier
        return 0.0

    def h_dqdq(self, q1, q2):
        return 0.0

    def h_dqdqdq(self, q1, q2, q3):
        return 0.0

    def h_dqdqdqdq(self, q1, q2, q3, q4):
        return 0.0

    def h_dq_array(self):
        out = np.zeros(self._system.nQ)
        out[self._config.index] = 1.0
        out[self._reference.index] -= self.multiplier
        return out

    def h_dqdq_array(self):
        n = self._system.nQ
        return np.zeros((n, n))

    def h_dqdqdq_array(self):
        n = self._system.nQ
        return np.zeros((n, n, n))
