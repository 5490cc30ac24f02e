"""DCost: quadratic tracking cost for discrete trajectory optimisation.

    h(xi) = sum_{k=0}^{kf-1} l(x(k), u(k), k) + m(x(kf))
    l(x, u, k) = 1/2 (x - xd[k])^T Q (x - xd[k]) + 1/2 (u - ud[k])^T R (u - ud[k])
    m(x)       = 1/2 (x - xd[kf])^T Qf (x - xd[kf])          (Qf = Q unless given)

(trep's documentation prints ``(x - u_d)`` in the input term; the input term is
``(u - u_d)^T R (u - u_d)`` as written here.)
"""
import numpy as np

__all__ = ['DCost']


class DCost:
    """Tracking cost.

    Parameters
    ----------
    xd : array (N, nX) desired states
    ud : array (N-1, nU) desired inputs
    Q : array (nX, nX) state weights
    R : array (nU, nU) input weights
    Qf : array (nX, nX), optional terminal weights (default Q)
    """

    def __init__(self, xd, ud, Q, R, Qf=None):
        self.Q = np.array(Q, dtype=float)
        self.R = np.array(R, dtype=float)
        nX, nU = self.Q.shape[0], self.R.shape[0]
        if self.Q.shape != (nX, nX):
            raise ValueError('DCost: Q must be square, got shape %r' % (self.Q.shape,))
        if self.R.shape != (nU, nU):
            raise ValueError('DCost: R must be square, got shape %r' % (self.R.shape,))
        self.Qf = self.Q.copy() if Qf is None else np.array(Qf, dtype=float)
        if self.Qf.shape != (nX, nX):
            raise ValueError('DCost: Qf must have shape (%d, %d), got %r'
                             % (nX, nX, self.Qf.shape))
        self.xd = np.array(xd, dtype=float)
        self.ud = np.array(ud, dtype=float)
        if self.xd.ndim != 2 or self.xd.shape[1] != nX:
            raise ValueError('DCost: xd must have shape (N, nX=%d), got %r'
                             % (nX, self.xd.shape))
        if self.ud.ndim != 2 or self.ud.shape != (self.xd.shape[0] - 1, nU):
            raise ValueError('DCost: ud must have shape (N-1=%d, nU=%d), got %r'
                             % (self.xd.shape[0] - 1, nU, self.ud.shape))
        self._S = np.zeros((nX, nU))

    def l(self, xk, uk, k):
        """Incremental cost l(xk (nX,), uk (nU,), k) (float)."""
        dx = np.asarray(xk, dtype=float) - self.xd[k]
        du = np.asarray(uk, dtype=float) - self.ud[k]
        return 0.5 * float(dx @ self.Q @ dx + du @ self.R @ du)

    def m(self, xkf):
        """Terminal cost m(xkf (nX,)) (float)."""
        dx = np.asarray(xkf, dtype=float) - self.xd[-1]
        return 0.5 * float(dx @ self.Qf @ dx)

    def l_dx(self, xk, uk, k):
        """dl/dx (nX,)."""
        # (Q + Q^T)/2 so a non-symmetric Q still gives the true gradient
        return 0.5 * (self.Q + self.Q.T) @ (np.asarray(xk, dtype=float) - self.xd[k])

    def l_du(self, xk, uk, k):
        """dl/du (nU,)."""
        return 0.5 * (self.R + self.R.T) @ (np.asarray(uk, dtype=float) - self.ud[k])

    def m_dx(self, xkf):
        """dm/dx (nX,)."""
        return 0.5 * (self.Qf + self.Qf.T) @ (np.asarray(xkf, dtype=float) - self.xd[-1])

    def l_dxdx(self, xk, uk, k):
        """d2l/dxdx (nX, nX) = Q (symmetrised)."""
        return 0.5 * (self.Q + self.Q.T)

    def l_dxdu(self, xk, uk, k):
        """d2l/dxdu (nX, nU) = 0."""
        return self._S.copy()

    l_dxdud = l_dxdu    # the name printed in trep's documentation

    def l_dudu(self, xk, uk, k):
        """d2l/dudu (nU, nU) = R (symmetrised)."""
        return 0.5 * (self.R + self.R.T)

    def m_dxdx(self, xkf):
        """d2m/dxdx (nX, nX) = Qf (symmetrised)."""
        return 0.5 * (self.Qf + self.Qf.T)
