"""Linear damper between two frame origins (trep's ``forces.LinearDamper``)."""
import numpy as np

from ..force import Force
from ..data import StateMemo
from ..frame import resolve_frame
from ..tapemeasure import TapeMeasure


class LinearDamper(Force):
    """A damper between the origins of two frames.

    ``x = |p1 - p2|`` [m], damper force ``f = -c xdot`` [N] along the line, mapped to the
    configs by virtual work: ``F_i = -c xdot dx/dq_i`` with ``xdot = sum_j dx/dq_j dq_j``.

    Parameters
    ----------
    frame1, frame2 : Frame identifiers (object, name or index); must already exist
    c : float  damping coefficient [N s/m]

    The force is undefined (ValueError) when the two origins coincide.
    """

    def __init__(self, system, frame1, frame2, c, name=None):
        self._frame1 = resolve_frame(system, frame1, 'LinearDamper frame1')
        self._frame2 = resolve_frame(system, frame2, 'LinearDamper frame2')
        self.c = c
        self._tape = TapeMeasure(system, (self._frame1, self._frame2))
        self._cache = StateMemo(system)
        Force.__init__(self, system, name)

    @property
    def frame1(self):
        """The frame at one end of the damper (read only)."""
        return self._frame1

    @property
    def frame2(self):
        """The frame at the other end of the damper (read only)."""
        return self._frame2

    @property
    def c(self):
        """Damping coefficient [N s/m]."""
        return self._c

    @c.setter
    def c(self, value):
        try:
            c = float(value)
        except (TypeError, ValueError):
            raise ValueError('LinearDamper: c must be a number, got %r' % (value,)) from None
        if not np.isfinite(c):
            raise ValueError('LinearDamper: c must be finite, got %r' % (value,))
        self._c = c
        if hasattr(self, '_system'):
            self._system.data.invalidate()

    # ------------------------------------------------------------------ arrays
    def _arrays(self, order):
        """Cached [F (nQ,), F_q (nQ,nQ), F_dq (nQ,nQ), F_qq (nQ,nQ,nQ), F_dqq (nQ,nQ,nQ)].

        ``order`` 1 gives F, F_q, F_dq; ``order`` 2 adds F_qq and F_dqq (indexed
        [output, velocity, q]).
        """
        cache = self._cache.get()
        out = cache.get(order)
        if out is not None:
            return out
        c = self._c
        dq = self._system.data.dq
        x = self._tape._length_derivs(order + 1)
        x1, x2 = x[1], x[2]
        xdot = x1 @ dq
        w = x2 @ dq                           # d xdot / dq
        F = -c * xdot * x1
        F_q = -c * (np.outer(x1, w) + xdot * x2)
        F_dq = -c * np.outer(x1, x1)
        out = [F, F_q, F_dq]
        if order >= 2:
            x3 = x[3]
            W = x3 @ dq                       # d^2 xdot / dq dq
            t = np.einsum('ia,b->iab', x2, w)
            F_qq = -c * (np.einsum('i,ab->iab', x1, W) + t + t.transpose(0, 2, 1)
                         + xdot * x3)
            # d/dq_b of -c x_a x_i, indexed [i, a, b]
            s = np.einsum('ab,i->iab', x2, x1)
            F_dqq = -c * (s + np.einsum('a,ib->iab', x1, x2))
            out += [F_qq, F_dqq]
        cache[order] = out
        return out

    def _i(self, q):
        return self._system.get_config(q).index

    def _u(self, u):
        self._system.get_input(u)   # validates the identifier; no input dependence
        return 0.0

    # ------------------------------------------------------------------ per entry
    def f(self, q):
        return float(self._arrays(1)[0][self._i(q)])

    def f_dq(self, q, q1):
        return float(self._arrays(1)[1][self._i(q), self._i(q1)])

    def f_ddq(self, q, dq1):
        return float(self._arrays(1)[2][self._i(q), self._i(dq1)])

    def f_du(self, q, u1):
        self._i(q)
        return self._u(u1)

    def f_dqdq(self, q, q1, q2):
        return float(self._arrays(2)[3][self._i(q), self._i(q1), self._i(q2)])

    def f_ddqdq(self, q, dq1, q2):
        return float(self._arrays(2)[4][self._i(q), self._i(dq1), self._i(q2)])

    def f_ddqddq(self, q, dq1, dq2):
        self._i(q), self._i(dq1), self._i(dq2)
        return 0.0

    def f_dudq(self, q, u1, q2):
        self._i(q), self._i(q2)
        return self._u(u1)

    def f_duddq(self, q, u1, dq2):
        self._i(q), self._i(dq2)
        return self._u(u1)

    def f_dudu(self, q, u1, u2):
        self._i(q), self._u(u2)
        return self._u(u1)

    # ------------------------------------------------------------------ whole arrays
    def f_array(self):
        return self._arrays(1)[0].copy()

    def f_dq_array(self):
        return self._arrays(1)[1].copy()

    def f_ddq_array(self):
        return self._arrays(1)[2].copy()

    def f_du_array(self):
        return np.zeros((self._system.nQ, self._system.nu))
