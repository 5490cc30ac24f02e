"""An input force on one config (trep's ``forces.ConfigForce``)."""
import numpy as np

from ..force import AffineForce


class ConfigForce(AffineForce):
    """``F_config = u`` where ``u`` is a new :class:`Input` named ``finput``.

    Example: ``ConfigForce(system, 'theta', 'theta-torque')`` (u in N m for a revolute config).
    """

    def __init__(self, system, config, finput, name=None):
        self._config = system.get_config(config)
        AffineForce.__init__(self, system, name)
        self._finput = self._create_input(finput)

    @property
    def config(self):
        """The config this force acts on (read only)."""
        return self._config

    @property
    def finput(self):
        """The :class:`Input` that sets the force (read only)."""
        return self._finput

    def f(self, q):
        if self._system.get_config(q) is not self._config:
            return 0.0
        return self._finput.u

    def f_dq(self, q, q1):
        return 0.0

    def f_ddq(self, q, dq1):
        return 0.0

    def f_du(self, q, u1):
        s = self._system
        if s.get_config(q) is self._config and s.get_input(u1) is self._finput:
            return 1.0
        return 0.0

    def f_array(self):
        out = np.zeros(self._system.nQ)
        out[self._config.index] = self._system.data.u[self._finput.index]
        return out

    def f_dq_array(self):
        n = self._system.nQ
        return np.zeros((n, n))

    f_ddq_array = f_dq_array

    def f_du_array(self):
        out = np.zeros((self._system.nQ, self._system.nu))
        out[self._config.index, self._finput.index] = 1.0
        return out
