"""Derivatives of a frame's world pose and of its inverse, for every config at once.

With ``S_c`` the world-frame twist of joint coordinate ``c`` (``hat`` its 4x4 matrix, zero
unless ``c`` moves the frame), the derivatives of a frame's world pose ``g`` are ordered
products (shallowest coordinate leftmost, see :mod:`ros_vi.mechanics.frame`)::

    dg/dq_a               = S_a^ g
    d2g/dq_a dq_b         = S_o^ S_m^ g              (o shallower, m deeper)
    d3g/dq_a dq_b dq_c    = S_1^ S_2^ S_3^ g         (sorted shallow to deep)
    d(g^-1)/dq_a          = -g^-1 S_a^
    d2(g^-1)/dq_a dq_b    = g^-1 S_m^ S_o^

The columns of ``g`` are frame vectors -- the frame's three axes (directions ``R e_j``) and
its origin -- so the derivatives of ``g`` are those of four vectors, taken from their one
definition (:func:`ros_vi.mechanics.framevectors.vector_derivatives`) for the second and
third orders; the first is the product ``S_a^ g`` (the same formula in twist form: a user
force asks for it at every new state, and one (nQ, 4, 4) product costs a fifth of the kernel
call; test/test_mechanics_formulas.py holds it to the frame vectors to 1e-12); the inverse's
follow the products above.  :class:`PoseDerivatives` stacks them for every config, (nQ, 4, 4),
(nQ, nQ, 4, 4) and (nQ, nQ, nQ, 4, 4), once per state (over joint coordinates, then folded
onto the configs when the system has mimic frames).  The frame API (``Frame.g_dq`` ...),
the wrenches' higher derivatives and user forces read them.
"""
import numpy as np

from .framevectors import FrameVectorSet, vector_derivatives

#: the columns of a pose as frame vectors: the three axes, then the origin
_COLUMNS = FrameVectorSet((np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]),
                           np.array([0.0, 0.0, 1.0]), None))


def hat(twist):
    """4x4 matrix of a twist ``(wx, wy, wz, vx, vy, vz)``."""
    # Python numbers build the matrix faster than NumPy scalars
    w0, w1, w2, v0, v1, v2 = twist.tolist() if isinstance(twist, np.ndarray) else twist
    return np.array([[0.0, -w2, w1, v0],
                     [w2, 0.0, -w0, v1],
                     [-w1, w0, 0.0, v2],
                     [0.0, 0.0, 0.0, 0.0]])


def hats(twists):
    """(n, 4, 4) matrices of n twists (n, 6), each as :func:`hat`."""
    w, v = twists[:, :3], twists[:, 3:]
    out = np.zeros((len(twists), 4, 4))
    out[:, 0, 1], out[:, 0, 2] = -w[:, 2], w[:, 1]
    out[:, 1, 0], out[:, 1, 2] = w[:, 2], -w[:, 0]
    out[:, 2, 0], out[:, 2, 1] = -w[:, 1], w[:, 0]
    out[:, :3, 3] = v
    return out


class PoseDerivatives:
    """Stacked derivatives of one frame's world pose at the state its System evaluates.

    Attributes are computed lazily: ``g``, ``ginv`` (4, 4); ``G1``, ``GI1`` (nQ, 4, 4);
    ``G2``, ``GI2`` (nQ, nQ, 4, 4); ``G3`` (nQ, nQ, nQ, 4, 4).  ``G1[a] = dg/dq_a`` etc.
    """

    def __init__(self, frame):
        system = frame.system
        model = system.model
        self._kinematics = R, P, S = system._kinematics()
        i = frame.index
        g = np.eye(4)
        g[:3, :3] = R[i]
        g[:3, 3] = P[i]
        ginv = np.eye(4)
        ginv[:3, :3] = R[i].T
        ginv[:3, 3] = -R[i].T @ P[i]
        self.g = g
        self.ginv = ginv
        self._frame = i
        self._model = model
        nt = model.nt           # joint coordinates; folded onto configs (Model.fold)
        H = np.zeros((nt, 4, 4))
        chain = model.frame_chain(i)
        H[chain] = hats(S[chain])
        self._H = H
        self._G2 = self._GI2 = self._G3 = None
        self.G1 = model.fold(H @ g)
        self.GI1 = model.fold(-(ginv @ H))

    def _columns(self, order):
        """The ``order``-th derivative of g: its axes' and origin's (the last row is 0)."""
        ders = vector_derivatives(self._model, self._kinematics, self._frame, order,
                                  _COLUMNS)[order]              # (4, nQ, ..., 3)
        G = np.zeros(ders.shape[1:-1] + (4, 4))
        G[..., :3, :] = ders.transpose(tuple(range(1, ders.ndim)) + (0,))   # column last
        return G

    @property
    def G2(self):
        if self._G2 is None:
            self._G2 = self._columns(2)
        return self._G2

    @property
    def GI2(self):
        if self._GI2 is None:
            H = self._H
            raw = H[:, None] @ H[None, :]                   # raw[a, b] = H[a] H[b]
            d = self._model.cdepth
            shallow_first = (d[:, None] <= d[None, :])[:, :, None, None]
            # H[m] H[o]: the deeper coordinate's twist first
            deep_first = np.where(shallow_first, raw.transpose(1, 0, 2, 3), raw)
            self._GI2 = self._model.fold(self.ginv @ deep_first, (0, 1))
        return self._GI2

    @property
    def G3(self):
        if self._G3 is None:
            self._G3 = self._columns(3)
        return self._G3


def pose_derivatives(memo, frame):
    """The :class:`PoseDerivatives` of ``frame`` kept in ``memo`` (a dict for the current
    state, :class:`~ros_vi.mechanics.data.StateMemo`)."""
    key = ('pose', id(frame))
    out = memo.get(key)
    if out is None:
        out = memo[key] = PoseDerivatives(frame)
    return out
