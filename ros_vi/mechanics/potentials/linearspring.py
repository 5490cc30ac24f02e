"""Linear spring between two frame origins (trep's ``potentials.LinearSpring``)."""
import numpy as np

from .. import kernel
from ..potential import Potential
from ..data import StateMemo
from ..frame import resolve_frame
from ..framevectors import batch_of, frame_vectors
from ..tapemeasure import TapeMeasure, ZERO_LENGTH


def _finite(value, what):
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError('LinearSpring: %s must be a number, got %r' % (what, value)) from None
    if not np.isfinite(out):
        raise ValueError('LinearSpring: %s must be finite, got %r' % (what, value))
    return out


class LinearSpring(Potential):
    """A spring between the origins of two frames: ``V = 1/2 k (x - x0)^2``, ``x = |p1 - p2|``.

    trep's documentation prints ``V = -k (x - x0)^2``, a typo: the implemented (physical)
    energy is ``1/2 k (x - x0)^2``, whose force pulls the distance towards ``x0``.

    Parameters
    ----------
    frame1, frame2 : Frame identifiers (object, name or index); must already exist
    k : float  stiffness [N/m]
    x0 : float  natural length [m]

    With ``x0 = 0`` the energy ``1/2 k |p1 - p2|^2`` is smooth everywhere and is evaluated
    in that form, so coincident origins are fine.  With ``x0 != 0`` the force direction is
    undefined when the origins coincide and the derivatives raise ValueError there.
    """

    def __init__(self, system, frame1, frame2, k, x0=0.0, name=None):
        self._frame1 = resolve_frame(system, frame1, 'LinearSpring frame1')
        self._frame2 = resolve_frame(system, frame2, 'LinearSpring frame2')
        self.k = k
        self.x0 = x0
        self._tape = TapeMeasure(system, (self._frame1, self._frame2))
        self._cache = StateMemo(system)
        Potential.__init__(self, system, name)

    @property
    def frame1(self):
        """The frame at one end of the spring (read only)."""
        return self._frame1

    @property
    def frame2(self):
        """The frame at the other end of the spring (read only)."""
        return self._frame2

    @property
    def k(self):
        """Stiffness [N/m]."""
        return self._k

    @k.setter
    def k(self, value):
        self._k = _finite(value, 'k')
        if hasattr(self, '_system'):
            self._system._parameters_changed()

    @property
    def x0(self):
        """Natural length [m]."""
        return self._x0

    @x0.setter
    def x0(self, value):
        self._x0 = _finite(value, 'x0')
        if hasattr(self, '_system'):
            self._system._parameters_changed()

    # ------------------------------------------------------------------ derivatives
    def _squared(self, order):
        """Derivatives of 1/2 |v|^2 (the x0 = 0 energy divided by k), smooth everywhere."""
        ((v, ders),) = self._tape._segments(order)
        out = [0.5 * float(v @ v)]
        if order >= 1:
            V1 = ders[0]
            out.append(V1 @ v)
        if order >= 2:
            V2 = ders[1]
            out.append(V2 @ v + V1 @ V1.T)
        if order >= 3:
            t = np.einsum('abi,ci->abc', V2, V1)
            out.append(ders[2] @ v + t + t.transpose(0, 2, 1) + t.transpose(2, 1, 0))
        return out

    def _derivs(self, order):
        """[V, V_q (nQ,), V_qq (nQ,nQ), V_qqq (nQ,nQ,nQ)][:order+1], cached per state.

        Up to second order, every LinearSpring of the System is evaluated at once
        (:func:`_all_springs`) and this spring reads its row."""
        if order <= 2:
            batch = batch_of(self._system, LinearSpring)
            row = batch.row(self)
            if row is not None:
                V, Vq, Vqq, degenerate = batch.get(max(order, 1))[:4]
                if order >= 1 and degenerate[row]:
                    self._tape._length_derivs(order)     # raises the precise error
                return [V[row], Vq[row], Vqq[row]][:order + 1]
        cache = self._cache.get()
        out = cache.get(order)
        if out is None:
            out = cache[order] = self._compute(order)
        return out

    def _compute(self, order):
        k = self._k
        if self._x0 == 0.0:
            return [k * d for d in self._squared(order)]
        x = self._tape._length_derivs(order)
        e = x[0] - self._x0
        out = [0.5 * k * e * e]
        if order >= 1:
            out.append(k * e * x[1])
        if order >= 2:
            out.append(k * (np.outer(x[1], x[1]) + e * x[2]))
        if order >= 3:
            t = np.einsum('ab,c->abc', x[2], x[1])
            out.append(k * (t + t.transpose(0, 2, 1) + t.transpose(2, 1, 0) + e * x[3]))
        return out

    @staticmethod
    def _stacked_compute(batch, order):
        """Energies and derivatives of every LinearSpring of a System (``batch.members``),
        from the stacked frame origins: ``(V (ns,), V_q (ns, nQ), V_qq (ns, nQ, nQ),
        degenerate (ns,), sum of V_q, sum of V_qq, any degenerate)`` (see
        :func:`ros_vi.mechanics.kernel.linear_springs`)."""
        system = batch.system
        springs = batch.members
        vectors = frame_vectors(system)
        if batch.slots is None:
            end1 = np.array([vectors.slot(s.frame1) for s in springs], dtype=np.int64)
            end2 = np.array([vectors.slot(s.frame2) for s in springs], dtype=np.int64)
            moving = [np.union1d(vectors.chain(a), vectors.chain(b)).astype(np.int64)
                      for a, b in zip(end1, end2)]
            ptr = np.zeros(len(moving) + 1, dtype=np.int64)
            ptr[1:] = np.cumsum([m.size for m in moving])
            batch.slots = (end1, end2, ptr, np.concatenate(moving),
                           np.array([s.k for s in springs]), np.array([s.x0 for s in springs]))
        X, D1, D2 = vectors.get(order)
        return kernel.linear_springs(X, D1, D2, *batch.slots, order, ZERO_LENGTH)

    @staticmethod
    def _stacked_sums(batch, part):
        """Sum over every LinearSpring of the System of V [J] (``part`` 'energy'), V_dq
        (nQ,) ('first') or V_dqdq (nQ, nQ) ('jacobian'); None for the derivatives if a
        spring is degenerate (each spring's own methods then raise the precise error)."""
        if part == 'energy':
            return float(batch.get(0)[0].sum())
        order = 1 if part == 'first' else 2
        out = batch.get(order)
        if out[6]:
            return None
        return out[4] if order == 1 else out[5]

    def _idx(self, q):
        return self._system.get_config(q).index

    def V(self):
        """Spring energy [J]."""
        return float(self._derivs(0)[0])

    def V_dq(self, q1):
        return float(self._derivs(1)[1][self._idx(q1)])

    def V_dqdq(self, q1, q2):
        return float(self._derivs(2)[2][self._idx(q1), self._idx(q2)])

    def V_dqdqdq(self, q1, q2, q3):
        return float(self._derivs(3)[3][self._idx(q1), self._idx(q2), self._idx(q3)])

    def V_dq_array(self):
        return self._derivs(1)[1].copy()

    def V_dqdq_array(self):
        return self._derivs(2)[2].copy()

