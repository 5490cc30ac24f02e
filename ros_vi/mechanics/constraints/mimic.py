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
        self._multiplier = self._finite(multiplier, 'multiplier', name)
        self._offset = self._finite(offset, 'offset', name)
        Constraint.__init__(self, system, name, tolerance)

    @staticmethod
    def _finite(value, what, name):
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise TypeError('Mimic %r: %s must be a number, got %r' % (name, what, value)) \
                from None
        if not np.isfinite(x):
            raise ValueError('Mimic %r: multiplier and offset must be finite (%s = %r)'
                             % (name, what, value))
        return x

    @property
    def multiplier(self):
        """d q_mimic / d q_reference (settable)."""
        return self._multiplier

    @multiplier.setter
    def multiplier(self, value):
        self._multiplier = self._finite(value, 'multiplier', self.name)
        self._system._parameters_changed()

    @property
    def offset(self):
        """q_mimic at q_reference = 0 [rad or m] (settable)."""
        return self._offset

    @offset.setter
    def offset(self, value):
        self._offset = self._finite(value, 'offset', self.name)
        self._system._parameters_changed()

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
