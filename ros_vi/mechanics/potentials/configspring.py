"""Linear spring on one config (trep's ``potentials.ConfigSpring``)."""
import numpy as np

from ..potential import Potential


class ConfigSpring(Potential):
    """``V = 1/2 k (q - q0)^2`` on one config, i.e. the force ``-k (q - q0)``.

    Parameters
    ----------
    config : Config identifier (index, name or object)
    k : float  stiffness [N/m or N m/rad]
    q0 : float  neutral value [m or rad]
    """

    def __init__(self, system, config, k, q0=0.0, name=None):
        self._config = system.get_config(config)
        self.k = k
        self.q0 = q0
        Potential.__init__(self, system, name)

    @property
    def config(self):
        """The config the spring acts on (read only)."""
        return self._config

    @property
    def k(self):
        return self._k

    @k.setter
    def k(self, value):
        value = float(value)
        if not np.isfinite(value):
            raise ValueError('ConfigSpring %r: k must be finite, got %r' % (self.name, value))
        self._k = value
        if hasattr(self, '_system'):
            self._system._parameters_changed()

    @property
    def q0(self):
        return self._q0

    @q0.setter
    def q0(self, value):
        value = float(value)
        if not np.isfinite(value):
            raise ValueError('ConfigSpring %r: q0 must be finite, got %r' % (self.name, value))
        self._q0 = value
        if hasattr(self, '_system'):
            self._system._parameters_changed()

    def V(self):
        return 0.5 * self._k * (self._config.q - self._q0) ** 2

    def V_dq(self, q1):
        if self._system.get_config(q1) is not self._config:
            return 0.0
        return self._k * (self._config.q - self._q0)

    def V_dqdq(self, q1, q2):
        s = self._system
        if s.get_config(q1) is not self._config or s.get_config(q2) is not self._config:
            return 0.0
        return self._k

    def V_dqdqdq(self, q1, q2, q3):
        return 0.0

    def V_dq_array(self):
        out = np.zeros(self._system.nQ)
        out[self._config.index] = self.V_dq(self._config)
        return out

    def V_dqdq_array(self):
        n = self._system.nQ
        out = np.zeros((n, n))
        i = self._config.index
        out[i, i] = self._k
        return out

    def V_dqdqdq_array(self):
        n = self._system.nQ
        return np.zeros((n, n, n))
