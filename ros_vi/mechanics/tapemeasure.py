"""TapeMeasure: length of the polyline through frame origins, and its derivatives
(trep's ``TapeMeasure``), plus the stacked pose-derivative helper the distance springs,
dampers and wrenches are built on.

Pose derivatives
----------------
With ``S_c`` the world-frame twist of config ``c`` (``hat`` its 4x4 matrix, zero unless
``c`` moves the frame), the derivatives of a frame's world pose ``g`` are ordered products
(shallowest config leftmost, see :mod:`ros_vi.mechanics.frame`)::

    dg/dq_a               = S_a^ g
    d2g/dq_a dq_b         = S_o^ S_m^ g              (o shallower, m deeper)
    d3g/dq_a dq_b dq_c    = S_1^ S_2^ S_3^ g         (sorted shallow to deep)
    d(g^-1)/dq_a          = -g^-1 S_a^
    d2(g^-1)/dq_a dq_b    = g^-1 S_m^ S_o^

:class:`_PoseDerivatives` stacks these for every config at once, (nQ, 4, 4),
(nQ, nQ, 4, 4) and (nQ, nQ, nQ, 4, 4), computed once per system state (over joint
coordinates, then folded onto the configs when the system has mimic frames).
"""
import numpy as np

from ._derivcheck import check
from .data import StateMemo
from .frame import Frame, hat, resolve_frame

#: segments shorter than this [m] have no defined direction: derivatives raise ValueError
ZERO_LENGTH = 1e-12


class _PoseDerivatives:
    """Stacked derivatives of one frame's world pose at the current state.

    Attributes are computed lazily: ``g``, ``ginv`` (4, 4); ``G1``, ``GI1`` (nQ, 4, 4);
    ``G2``, ``GI2`` (nQ, nQ, 4, 4); ``G3`` (nQ, nQ, nQ, 4, 4).  ``G1[a] = dg/dq_a`` etc.
    """

    def __init__(self, frame):
        system = frame._system
        model = system.model
        R, P, S = system._kinematics()
        i = frame.index
        g = np.eye(4)
        g[:3, :3] = R[i]
        g[:3, 3] = P[i]
        ginv = np.eye(4)
        ginv[:3, :3] = R[i].T
        ginv[:3, 3] = -R[i].T @ P[i]
        self.g = g
        self.ginv = ginv
        nq = model.nt           # joint coordinates; folded onto configs (Model.fold)
        mask = model.frame_anc[i]
        H = np.zeros((nq, 4, 4))
        for c in np.nonzero(mask)[0]:
            H[c] = hat(S[c])
        self._H = H
        self._model = model
        self._depth = model.cdepth
        self._nq = nq
        self._G2 = self._GI2 = self._G3 = self._HH = None
        self.G1 = model.fold(H @ g)
        self.GI1 = model.fold(-(ginv @ H))

    def _ordered_pairs(self):
        """(ordered, reversed, raw): ``H[o] H[m]``, ``H[m] H[o]`` and ``H[a] H[b]`` for
        every pair (a, b), o the shallower and m the deeper of a, b."""
        if self._HH is None:
            H = self._H
            raw = H[:, None] @ H[None, :]                   # raw[a, b] = H[a] H[b]
            d = self._depth
            shallow_first = (d[:, None] <= d[None, :])[:, :, None, None]
            swapped = raw.transpose(1, 0, 2, 3)
            self._HH = (np.where(shallow_first, raw, swapped),
                        np.where(shallow_first, swapped, raw), raw)
        return self._HH

    @property
    def G2(self):
        if self._G2 is None:
            self._G2 = self._model.fold(self._ordered_pairs()[0] @ self.g, (0, 1))
        return self._G2

    @property
    def GI2(self):
        if self._GI2 is None:
            self._GI2 = self._model.fold(self.ginv @ self._ordered_pairs()[1], (0, 1))
        return self._GI2

    @property
    def G3(self):
        if self._G3 is None:
            nq = self._nq
            H = self._H
            HHH = self._ordered_pairs()[2][:, :, None] @ H[None, None, :]
            idx = np.stack(np.meshgrid(np.arange(nq), np.arange(nq), np.arange(nq),
                                       indexing='ij'))
            order = np.argsort(self._depth[idx], axis=0, kind='stable')
            s = np.take_along_axis(idx, order, axis=0)
            self._G3 = self._model.fold(HHH[s[0], s[1], s[2]] @ self.g, (0, 1, 2))
        return self._G3


def pose_derivatives(cache, frame):
    """Cached :class:`_PoseDerivatives` of ``frame`` in a :class:`StateMemo` dict."""
    key = ('pose', id(frame))
    out = cache.get(key)
    if out is None:
        out = cache[key] = _PoseDerivatives(frame)
    return out


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
        poses = [pose_derivatives(cache, f) for f in self._frames]
        out = []
        for k in range(len(poses) - 1):
            a, b = poses[k], poses[k + 1]
            v = b.g[:3, 3] - a.g[:3, 3]
            ders = []
            if order >= 1:
                ders.append(b.G1[:, :3, 3] - a.G1[:, :3, 3])
            if order >= 2:
                ders.append(b.G2[..., :3, 3] - a.G2[..., :3, 3])
            if order >= 3:
                ders.append(b.G3[..., :3, 3] - a.G3[..., :3, 3])
            out.append((v, ders))
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
