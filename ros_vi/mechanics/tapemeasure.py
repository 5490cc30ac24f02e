"""TapeMeasure: length of the polyline through frame origins, and its derivatives
(trep's ``TapeMeasure``).

The derivatives of the frame origins come from the System's frame-vector registry
(:mod:`ros_vi.mechanics.framevectors`, the one definition of a frame vector's derivatives),
computed once per state.
"""
import numpy as np

from ._derivcheck import check
from .data import StateMemo
from .frame import resolve_frame
from .framevectors import frame_vectors

#: segments shorter than this [m] have no defined direction: derivatives raise ValueError
ZERO_LENGTH = 1e-12


class TapeMeasure:
    """Length of the polyline through the origins of ``frames`` and its derivatives.

    ``x = sum_k |p_{k+1} - p_k|`` [m] with ``p_k`` the world origin of ``frames[k]``, and
    the rate ``xdot = sum_i dx/dq_i dq_i`` [m/s].

    Parameters
    ----------
    system : System
    frames : sequence of Frame objects, names or indices (at least 2)

    Config arguments (``q1``, ``dq1``, ...) accept an index, a name or a Config.  The
    per-entry methods return floats; the ``*_vector`` / ``*_matrix`` / ``*_tensor`` forms
    return whole arrays indexed by ``System.configs`` (nQ,), (nQ, nQ), (nQ, nQ, nQ).
    Everything is computed once per system state and cached.

    Derivatives do not exist where a segment has zero length (its direction is undefined);
    unlike trep (which returns NaN there), a ValueError naming the segment is raised when a
    derivative is requested and a segment is shorter than ``ZERO_LENGTH`` = 1e-12 m.
    ``length()`` itself is always defined.

    Each derivative of a segment length ``x_k = |v_k|`` follows from the chain rule
    (Faa di Bruno for sqrt(v . v)) with ``u = v / x``::

        x_a   = u . v_a
        x_ab  = (v . v_ab + v_a . v_b - x_a x_b) / x
        x_abc = (v . v_abc + v_ab . v_c + v_ac . v_b + v_a . v_bc
                 - x_ab x_c - x_ac x_b - x_a x_bc) / x
    """

    def __init__(self, system, frames):
        frames = list(frames)
        if len(frames) < 2:
            raise ValueError('TapeMeasure needs at least 2 frames, got %d' % len(frames))
        self._system = system
        self._frames = tuple(resolve_frame(system, f, 'TapeMeasure') for f in frames)
        self._cache = StateMemo(system)

    def __repr__(self):
        return '<TapeMeasure %s>' % ' -> '.join(repr(f.name) for f in self._frames)

    @property
    def system(self):
        """The :class:`System` the frames belong to (read only)."""
        return self._system

    @property
    def frames(self):
        """Tuple of the measured :class:`Frame` objects (read only)."""
        return self._frames

    # ------------------------------------------------------------------ internals
    def _segments(self, order):
        """Per-segment (v (3,), [V1 (nQ,3), V2 (nQ,nQ,3), V3 (nQ,nQ,nQ,3)][:order])."""
        cache = self._cache.get()
        key = ('segments', order)
        if key in cache:
            return cache[key]
        vectors = frame_vectors(self._system)
        slots = [vectors.slot(f) for f in self._frames]       # all slots before the arrays
        points = [vectors.vector(i, order) for i in slots]
        out = []
        for a, b in zip(points[:-1], points[1:]):
            v = b[0] - a[0]
            out.append((v, [y - x for x, y in zip(a[1:], b[1:])]))
        cache[key] = out
        return out

    def _check_segment(self, k, x):
        if not x > ZERO_LENGTH:
            raise ValueError('TapeMeasure: segment %d (frame %r to frame %r) has zero length '
                             '(%g m); the derivatives of its length are undefined'
                             % (k, self._frames[k].name, self._frames[k + 1].name, x))

    def _length_derivs(self, order):
        """(x, x1 (nQ,), x2 (nQ,nQ), x3 (nQ,nQ,nQ))[:order+1], summed over segments."""
        cache = self._cache.get()
        key = ('length', order)
        if key in cache:
            return cache[key]
        nq = self._system.nQ
        total = [0.0, np.zeros(nq), np.zeros((nq, nq)), np.zeros((nq, nq, nq))][:order + 1]
        for k, (v, ders) in enumerate(self._segments(order)):
            x = float(np.sqrt(v @ v))
            total[0] += x
            if order == 0:
                continue
            self._check_segment(k, x)
            V1 = ders[0]
            x1 = V1 @ v / x
            total[1] += x1
            if order >= 2:
                V2 = ders[1]
                x2 = (V2 @ v + V1 @ V1.T - np.outer(x1, x1)) / x
                total[2] += x2
            if order >= 3:
                V3 = ders[2]
                t = np.einsum('abi,ci->abc', V2, V1)   # v_ab . v_c
                x3 = (V3 @ v + t + t.transpose(0, 2, 1) + t.transpose(2, 1, 0)
                      - np.einsum('ab,c->abc', x2, x1) - np.einsum('ac,b->abc', x2, x1)
                      - np.einsum('a,bc->abc', x1, x2)) / x
                total[3] += x3
        out = tuple(total)
        cache[key] = out
        return out

    def _index(self, q):
        return self._system.get_config(q).index

    # ------------------------------------------------------------------ length
    def length(self):
        """Total length x [m] at the current configuration."""
        return float(self._length_derivs(0)[0])

    def length_dq(self, q1):
        """dx/dq1."""
        return float(self._length_derivs(1)[1][self._index(q1)])

    def length_dqdq(self, q1, q2):
        """d^2x / dq1 dq2."""
        return float(self._length_derivs(2)[2][self._index(q1), self._index(q2)])

    def length_dqdqdq(self, q1, q2, q3):
        """d^3x / dq1 dq2 dq3."""
        return float(self._length_derivs(3)[3][self._index(q1), self._index(q2),
                                               self._index(q3)])

    def length_dq_vector(self):
        """dx/dq for every config, (nQ,)."""
        return self._length_derivs(1)[1].copy()

    def length_dqdq_matrix(self):
        """d^2x/dq dq, (nQ, nQ) (symmetric)."""
        return self._length_derivs(2)[2].copy()

    def length_dqdqdq_tensor(self):
        """d^3x/dq dq dq, (nQ, nQ, nQ) (symmetric)."""
        return self._length_derivs(3)[3].copy()

    # ------------------------------------------------------------------ velocity
    def velocity(self):
        """Rate of change of the length, xdot = sum_i dx/dq_i dq_i [m/s]."""
        return float(self._length_derivs(1)[1] @ self._system.data.dq)

    def velocity_dq(self, q1):
        """d xdot / dq1 = sum_j d^2x/dq_j dq1 dq_j."""
        return float(self.velocity_dq_vector()[self._index(q1)])

    def velocity_ddq(self, dq1):
        """d xdot / d dq1 = dx/dq1."""
        return self.length_dq(dq1)

    def velocity_dqdq(self, q1, q2):
        """d^2 xdot / dq1 dq2 = sum_j d^3x/dq_j dq1 dq2 dq_j."""
        return float(self.velocity_dqdq_matrix()[self._index(q1), self._index(q2)])

    def velocity_ddqdq(self, dq1, q2):
        """d^2 xdot / d dq1 dq2 = d^2x/dq1 dq2."""
        return self.length_dqdq(dq1, q2)

    velocity_dddqdq = velocity_ddqdq   # the name printed in trep's documentation

    def velocity_ddqddq(self, dq1, dq2):
        """d^2 xdot / d dq1 d dq2 = 0 (xdot is linear in the velocities)."""
        self._index(dq1)
        self._index(dq2)
        return 0.0

    def velocity_dq_vector(self):
        """d xdot / dq, (nQ,)."""
        return self._length_derivs(2)[2] @ self._system.data.dq

    def velocity_ddq_vector(self):
        """d xdot / d dq = dx/dq, (nQ,)."""
        return self.length_dq_vector()

    def velocity_dqdq_matrix(self):
        """d^2 xdot / dq dq, (nQ, nQ)."""
        return self._length_derivs(3)[3] @ self._system.data.dq

    def velocity_ddqdq_matrix(self):
        """d^2 xdot / d dq dq = d^2x/dq dq, (nQ, nQ) indexed [dq, q]."""
        return self.length_dqdq_matrix()

    # ------------------------------------------------------------------ checks
    def validate_length_dq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check length_dq against central differences of length(); True if all pass."""
        s = self._system
        return check(s, 'q', self.length, self.length_dq, s.configs, delta, tolerance,
                     verbose, '%r.length_dq' % self)

    def validate_length_dqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check length_dqdq against central differences of length_dq."""
        s = self._system
        c = s.configs
        return check(s, 'q', lambda: [self.length_dq(a) for a in c],
                     lambda b: [self.length_dqdq(a, b) for a in c], c, delta, tolerance,
                     verbose, '%r.length_dqdq' % self)

    def validate_length_dqdqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check length_dqdqdq against central differences of length_dqdq."""
        s = self._system
        c = s.configs
        return check(s, 'q', lambda: [[self.length_dqdq(a, b) for b in c] for a in c],
                     lambda d: [[self.length_dqdqdq(a, b, d) for b in c] for a in c], c,
                     delta, tolerance, verbose, '%r.length_dqdqdq' % self)

    validate_length_dqdqddq = validate_length_dqdqdq   # name in trep's documentation

    def validate_velocity_dq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check velocity_dq against central differences of velocity() in q."""
        s = self._system
        return check(s, 'q', self.velocity, self.velocity_dq, s.configs, delta, tolerance,
                     verbose, '%r.velocity_dq' % self)

    def validate_velocity_ddq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check velocity_ddq against central differences of velocity() in dq."""
        s = self._system
        return check(s, 'dq', self.velocity, self.velocity_ddq, s.configs, delta, tolerance,
                     verbose, '%r.velocity_ddq' % self)

    def validate_velocity_dqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check velocity_dqdq against central differences of velocity_dq in q."""
        s = self._system
        c = s.configs
        return check(s, 'q', lambda: [self.velocity_dq(a) for a in c],
                     lambda b: [self.velocity_dqdq(a, b) for a in c], c, delta, tolerance,
                     verbose, '%r.velocity_dqdq' % self)

    def validate_velocity_ddqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check velocity_ddqdq against central differences of velocity_ddq in q."""
        s = self._system
        c = s.configs
        return check(s, 'q', lambda: [self.velocity_ddq(a) for a in c],
                     lambda b: [self.velocity_ddqdq(a, b) for a in c], c, delta, tolerance,
                     verbose, '%r.velocity_ddqdq' % self)
