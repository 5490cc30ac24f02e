"""Smooth Coulomb (dry) joint friction."""
import numpy as np

from ..force import Force


class SmoothCoulombFriction(Force):
    """``F_i = -f_i tanh(dq_i / v_s)``: Coulomb friction smoothed over the velocity scale ``v_s``.

    ``tanh`` makes the force analytic in dq (a true Coulomb law is discontinuous at dq = 0,
    which a Newton-solved integrator cannot handle); for ``|dq| >> v_s`` it is the Coulomb
    force ``-f sign(dq)``, near rest a stiff viscous damper of coefficient ``f / v_s``.  It
    cannot hold a joint exactly at rest against a load (no stiction): a loaded joint creeps
    at about ``v_s * atanh(load / f)``.

    Parameters
    ----------
    system : System
    coefficients : dict
        ``{config: f}``: friction force/torque magnitude [N or N m], >= 0.
    velocity_scale : float
        ``v_s`` [m/s or rad/s] (> 0).
    """

    def __init__(self, system, coefficients, velocity_scale=1e-2, name=None):
        self._vs = float(velocity_scale)
        if not (np.isfinite(self._vs) and self._vs > 0):
            raise ValueError('SmoothCoulombFriction %r: velocity_scale must be finite and > 0, '
                             'got %r' % (name, velocity_scale))
        self._items = []
        for key, value in coefficients.items():
            config = system.get_config(key)
            value = float(value)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError('SmoothCoulombFriction %r: coefficient of %r must be finite '
                                 'and >= 0, got %r' % (name, config.name, value))
            self._items.append((config, value))
        self._idx = np.zeros(0, dtype=int)
        Force.__init__(self, system, name)
        self._structure_updated()

    def _structure_updated(self):
        self._idx = np.array([c.index for c, _ in self._items], dtype=int)
        self._f = np.array([v for _, v in self._items], dtype=float)

    @property
    def velocity_scale(self):
        return self._vs

    @property
    def coefficients(self):
        """``{config name: f}``."""
        return {c.name: v for c, v in self._items}

    def _terms(self):
        x = self._system.data.dq[self._idx] / self._vs
        t = np.tanh(x)
        sech2 = 1.0 - t * t
        f = -self._f * t
        f_v = -self._f / self._vs * sech2
        f_vv = 2.0 * self._f / self._vs ** 2 * sech2 * t
        return f, f_v, f_vv

    def _diag(self, which, q, *others):
        s = self._system
        i = s.get_config(q).index
        hit = np.nonzero(self._idx == i)[0]
        if not hit.size:
            return 0.0
        for o in others:
            if s.get_config(o).index != i:
                return 0.0
        return float(self._terms()[which][hit[0]])

    def f(self, q):
        return self._diag(0, q)

    def f_dq(self, q, q1):
        return 0.0

    def f_ddq(self, q, dq1):
        return self._diag(1, q, dq1)

    def f_du(self, q, u1):
        return 0.0

    def f_dqdq(self, q, q1, q2):
        return 0.0

    def f_ddqdq(self, q, dq1, q2):
        return 0.0

    def f_ddqddq(self, q, dq1, dq2):
        return self._diag(2, q, dq1, dq2)

    def f_dudq(self, q, u1, q2):
        return 0.0

    def f_duddq(self, q, u1, dq2):
        return 0.0

    def f_dudu(self, q, u1, u2):
        return 0.0

    def f_array(self):
        out = np.zeros(self._system.nQ)
        np.add.at(out, self._idx, self._terms()[0])
        return out

    def f_dq_array(self):
        n = self._system.nQ
        return np.zeros((n, n))

    def f_ddq_array(self):
        n = self._system.nQ
        out = np.zeros((n, n))
        np.add.at(out, (self._idx, self._idx), self._terms()[1])
        return out

    def f_du_array(self):
        return np.zeros((self._system.nQ, self._system.nu))
