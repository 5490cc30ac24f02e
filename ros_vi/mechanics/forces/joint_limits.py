"""Compliant end stops: a stiff, C2-smooth spring-damper acting only beyond given positions.

A force a user adds for a stop that gives (a rubber bumper, a spring-loaded detent).  The
URDF importer's ``<limit lower upper>`` are hard: unilateral constraints of the step
(:meth:`System.set_joint_limit`, MidpointVI's ``limits``).
"""
import numpy as np

from ..force import Force


def _ramp(s, w):
    """C2 ramp r(s) and its derivatives r', r'', r''' (arrays, elementwise).

    r = 0 for s <= 0;  s^3/w^2 - s^4/(2 w^3) for 0 < s < w;  s - w/2 for s >= w.
    r, r' and r'' are continuous (r' rises smoothly from 0 to 1 over the width w).
    """
    s = np.asarray(s, dtype=float)
    r = np.zeros_like(s)
    r1 = np.zeros_like(s)
    r2 = np.zeros_like(s)
    r3 = np.zeros_like(s)
    mid = (s > 0) & (s < w)
    hi = s >= w
    x = s[mid]
    r[mid] = x ** 3 / w ** 2 - x ** 4 / (2 * w ** 3)
    r1[mid] = 3 * x ** 2 / w ** 2 - 2 * x ** 3 / w ** 3
    r2[mid] = 6 * x / w ** 2 - 6 * x ** 2 / w ** 3
    r3[mid] = 6 / w ** 2 - 12 * x / w ** 3
    r[hi] = s[hi] - 0.5 * w
    r1[hi] = 1.0
    return r, r1, r2, r3


class JointLimits(Force):
    """Spring-damper that pushes configs back inside ``[lower, upper]``.

    For each limited config, with penetrations ``s_u = q - upper`` and ``s_l = lower - q``::

        F = -k r(s_u) + k r(s_l) - c dq (r'(s_u) + r'(s_l))

    where ``r`` is the C2 ramp of :func:`_ramp` with transition width ``width``: zero inside
    the limits, cubic-quartic over the first ``width`` of penetration, then linear (a spring
    of stiffness ``k`` whose rest point sits ``width/2`` beyond the limit).  The spring part
    is C2 in q; the damping gate ``r'`` is C1 (its second q-derivative jumps at the two
    transition points, so finite-difference checks of ``f_dqdq`` must avoid them).
    Damping acts only while penetrating, in both directions of motion.

    Parameters
    ----------
    system : System
    limits : dict
        ``{config: (lower, upper)}`` [m or rad]; ``lower`` may be ``-inf``, ``upper`` ``inf``.
    stiffness : float
        ``k`` [N/m or N m/rad].
    damping : float
        ``c`` [N s/m or N m s/rad].
    width : float
        Transition width [m or rad] (> 0).
    """

    def __init__(self, system, limits, stiffness=1e4, damping=10.0, width=1e-3, name=None):
        self._k = float(stiffness)
        self._c = float(damping)
        self._w = float(width)
        for what, v in (('stiffness', self._k), ('damping', self._c)):
            if not (np.isfinite(v) and v >= 0):
                raise ValueError('JointLimits %r: %s must be finite and >= 0, got %r'
                                 % (name, what, v))
        if not (np.isfinite(self._w) and self._w > 0):
            raise ValueError('JointLimits %r: width must be finite and > 0, got %r'
                             % (name, width))
        self._limits = []
        for key, (lo, up) in limits.items():
            config = system.get_config(key)
            lo, up = float(lo), float(up)
            if np.isnan(lo) or np.isnan(up) or lo > up:
                raise ValueError('JointLimits %r: config %r needs lower <= upper, got (%r, %r)'
                                 % (name, config.name, lo, up))
            self._limits.append((config, lo, up))
        self._idx = np.zeros(0, dtype=int)
        Force.__init__(self, system, name)
        self._structure_updated()

    def _structure_updated(self):
        self._idx = np.array([c.index for c, _, _ in self._limits], dtype=int)
        self._lo = np.array([lo for _, lo, _ in self._limits], dtype=float)
        self._up = np.array([up for _, _, up in self._limits], dtype=float)

    @property
    def limits(self):
        """``{config name: (lower, upper)}``."""
        return {c.name: (lo, up) for c, lo, up in self._limits}

    def _terms(self):
        s = self._system
        q = s.data.q[self._idx]
        dq = s.data.dq[self._idx]
        with np.errstate(invalid='ignore'):
            su = np.where(np.isfinite(self._up), q - self._up, -1.0)
            sl = np.where(np.isfinite(self._lo), self._lo - q, -1.0)
        ru = _ramp(su, self._w)
        rl = _ramp(sl, self._w)
        k, c = self._k, self._c
        f = -k * ru[0] + k * rl[0] - c * dq * (ru[1] + rl[1])
        f_q = -k * ru[1] - k * rl[1] - c * dq * (ru[2] - rl[2])
        f_v = -c * (ru[1] + rl[1])
        f_qq = -k * ru[2] + k * rl[2] - c * dq * (ru[3] + rl[3])
        f_qv = -c * (ru[2] - rl[2])
        return f, f_q, f_v, f_qq, f_qv

    def _local(self, q):
        i = self._system.get_config(q).index
        hit = np.nonzero(self._idx == i)[0]
        return int(hit[0]) if hit.size else -1

    def _diag(self, which, q, *others):
        j = self._local(q)
        if j < 0:
            return 0.0
        i = self._idx[j]
        for o in others:
            if self._system.get_config(o).index != i:
                return 0.0
        return float(self._terms()[which][j])

    def f(self, q):
        return self._diag(0, q)

    def f_dq(self, q, q1):
        return self._diag(1, q, q1)

    def f_ddq(self, q, dq1):
        return self._diag(2, q, dq1)

    def f_du(self, q, u1):
        return 0.0

    def f_dqdq(self, q, q1, q2):
        return self._diag(3, q, q1, q2)

    def f_ddqdq(self, q, dq1, q2):
        return self._diag(4, q, dq1, q2)

    def f_ddqddq(self, q, dq1, dq2):
        return 0.0

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
        out = np.zeros((n, n))
        np.add.at(out, (self._idx, self._idx), self._terms()[1])
        return out

    def f_ddq_array(self):
        n = self._system.nQ
        out = np.zeros((n, n))
        np.add.at(out, (self._idx, self._idx), self._terms()[2])
        return out

    def f_du_array(self):
        return np.zeros((self._system.nQ, self._system.nu))
