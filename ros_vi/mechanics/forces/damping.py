"""Viscous damping on configs (trep's ``forces.Damping``)."""
import numpy as np

from ..force import AffineForce


class Damping(AffineForce):
    """``F_i = -c_i dq_i`` for every config, with a default coefficient and per-config ones.

    Example: ``Damping(system, 0.1, {'theta': 1.0})`` [N s/m or N m s/rad].
    """

    def __init__(self, system, default=0.0, coefficients=None, name=None):
        self._default = float(default)
        self._coefficients = {}
        self._c = np.zeros(0)
        self._ddq = np.zeros((0, 0))
        AffineForce.__init__(self, system, name)
        for key, value in (coefficients or {}).items():
            self.set_damping_coefficient(key, value)
        self._structure_updated()

    @property
    def default(self):
        """Default damping coefficient."""
        return self._default

    @default.setter
    def default(self, value):
        self._default = float(value)
        self._structure_updated()

    def get_damping_coefficient(self, config):
        """Coefficient of ``config`` (its own value or the default)."""
        config = self._system.get_config(config)
        return self._coefficients.get(id(config), (config, self._default))[1]

    def set_damping_coefficient(self, config, coeff):
        """Set the coefficient of ``config``; None restores the default."""
        config = self._system.get_config(config)
        if coeff is None:
            self._coefficients.pop(id(config), None)
        else:
            self._coefficients[id(config)] = (config, float(coeff))
        self._structure_updated()

    def _structure_updated(self):
        # keyed by identity: re-key from the stored configs, so a deep copy of the
        # System (whose configs are new objects) keeps its coefficients
        self._coefficients = {id(c): (c, value) for c, value in self._coefficients.values()}
        configs = self._system.configs
        self._c = np.array([self.get_damping_coefficient(c) for c in configs], dtype=float)
        if not np.all(np.isfinite(self._c)):
            raise ValueError('Damping %r: coefficients must be finite' % (self.name,))
        self._ddq = np.diag(-self._c)
        self._system._parameters_changed()

    def coefficient_vector(self):
        """Damping coefficient of every config, (nQ,)."""
        return self._c.copy()

    def f(self, q):
        i = self._system.get_config(q).index
        return float(-self._c[i] * self._system.data.dq[i])

    def f_dq(self, q, q1):
        return 0.0

    def f_ddq(self, q, dq1):
        s = self._system
        i, j = s.get_config(q).index, s.get_config(dq1).index
        return float(-self._c[i]) if i == j else 0.0

    def f_du(self, q, u1):
        return 0.0

    def f_array(self):
        return -self._c * self._system.data.dq

    def f_dq_array(self):
        n = self._system.nQ
        return np.zeros((n, n))

    def f_ddq_array(self):
        return self._ddq.copy()

    def f_du_array(self):
        return np.zeros((self._system.nQ, self._system.nu))
