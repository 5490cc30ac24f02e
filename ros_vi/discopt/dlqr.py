"""Time-varying discrete LQR and LQ problems (trep.discopt.solve_tv_lqr / solve_tv_lq).

Plain NumPy/SciPy.  Shapes: nX states, nU inputs, N steps (k = 0 .. N-1), terminal k = N.

LQR: minimise  sum_k [x^T Q(k) x + u^T R(k) u] + x(N)^T Q(N) x(N)  subject to
``x(k+1) = A(k) x(k) + B(k) u(k)``.  The optimal input is ``u(k) = -K(k) x(k)``.

LQ: as LQR plus linear terms ``2 q(k)^T x + 2 r(k)^T u`` (and ``2 q(N)^T x(N)``) and a cross
term ``2 x^T S(k) u``; the optimal input is ``u(k) = -K(k) x(k) - C(k)``.
"""
from collections import namedtuple

import numpy as np

__all__ = ['solve_tv_lqr', 'solve_tv_lq', 'LQRSolution', 'LQSolution']

#: Return of :func:`solve_tv_lqr`: K, a list of N (nU, nX) gain arrays (a list, as trep),
#: and P (nX, nX), the Riccati solution P(0).
LQRSolution = namedtuple('solve_tv_lqr', 'K P')
#: Return of :func:`solve_tv_lq`: K, a list of N (nU, nX) arrays; C, a list of N (nU,)
#: arrays; P (nX, nX) = P(0); b (nX,) = b(0).
LQSolution = namedtuple('solve_tv_lq', 'K C P b')


def _as_function(M, name):
    """Accept trep's ``M(k)`` callables, or a constant matrix used for every k."""
    if callable(M):
        return M
    arr = np.asarray(M, dtype=float)
    if arr.ndim != 2:
        raise ValueError('%s must be a function of k or a 2-D array, got shape %r'
                         % (name, arr.shape))
    return lambda k: arr


def _matrix(M, k, shape, name):
    arr = np.asarray(M(k), dtype=float)
    if arr.shape != shape:
        raise ValueError('%s(%d) has shape %r, expected %r' % (name, k, arr.shape, shape))
    return arr


def _check_dynamics(A, B):
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    if A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise ValueError('A must be a sequence of N square (nX, nX) matrices, got shape %r'
                         % (A.shape,))
    if B.ndim != 3 or B.shape[0] != A.shape[0] or B.shape[1] != A.shape[1]:
        raise ValueError('B must be a sequence of N (nX, nU) matrices matching A %r, got '
                         'shape %r' % (A.shape, B.shape))
    return A, B


def solve_tv_lqr(A, B, Q, R):
    """Solve the time-varying discrete LQR problem by the backward Riccati recursion.

    Parameters
    ----------
    A : sequence of N arrays (nX, nX)
    B : sequence of N arrays (nX, nU)
    Q : function k -> (nX, nX) state weight, called for k = 0 .. N (or a constant array)
    R : function k -> (nU, nU) input weight, called for k = 0 .. N-1 (or a constant array)

    Returns
    -------
    LQRSolution(K, P): K is a Python list of N arrays (nU, nX) with ``u(k) = -K[k] x(k)``
    (a list, as in trep, so ``if K:`` and ``K.append`` work); P (nX, nX) = P(0), so the
    optimal cost from x(0) is ``x(0)^T P x(0)``.
    """
    A, B = _check_dynamics(A, B)
    Q = _as_function(Q, 'Q')
    R = _as_function(R, 'R')
    N, nX, nU = B.shape
    K = [None] * N
    P = _matrix(Q, N, (nX, nX), 'Q')
    for k in range(N - 1, -1, -1):
        Bk, Ak = B[k], A[k]
        PB = P @ Bk
        gamma = _matrix(R, k, (nU, nU), 'R') + Bk.T @ PB
        K_part = PB.T @ Ak                        # B^T P A
        K[k] = np.linalg.solve(gamma, K_part)
        P = _matrix(Q, k, (nX, nX), 'Q') + Ak.T @ P @ Ak - K_part.T @ K[k]
        P = 0.5 * (P + P.T)                       # keep P symmetric against round-off
    return LQRSolution(K, P)


def solve_tv_lq(A, B, q, r, Q, S, R):
    """Solve the time-varying discrete LQ problem (linear + quadratic costs).

    Parameters
    ----------
    A : sequence of N arrays (nX, nX)
    B : sequence of N arrays (nX, nU)
    q : sequence of N+1 arrays (nX,) -- linear state cost, q[N] is the terminal term
    r : sequence of N arrays (nU,) (extra entries are ignored) -- linear input cost
    Q : function k -> (nX, nX), k = 0 .. N (or constant array)
    S : function k -> (nX, nU) cross term, k = 0 .. N-1 (or constant array)
    R : function k -> (nU, nU), k = 0 .. N-1 (or constant array)

    Returns
    -------
    LQSolution(K, C, P, b): ``u(k) = -K[k] x(k) - C[k]``; K is a list of N arrays
    (nU, nX) and C a list of N arrays (nU,) (lists, as in trep); P (nX, nX) = P(0) and
    b (nX,) = b(0), so the optimal cost is ``x0^T P x0 + 2 b^T x0 + c(0)``.
    """
    A, B = _check_dynamics(A, B)
    Q = _as_function(Q, 'Q')
    S = _as_function(S, 'S')
    R = _as_function(R, 'R')
    N, nX, nU = B.shape
    q = np.asarray(q, dtype=float)
    r = np.asarray(r, dtype=float)
    if q.ndim != 2 or q.shape[0] < N + 1 or q.shape[1] != nX:
        raise ValueError('q must be N+1 = %d vectors of size nX = %d, got shape %r'
                         % (N + 1, nX, q.shape))
    if r.ndim != 2 or r.shape[0] < N or r.shape[1] != nU:
        raise ValueError('r must be N = %d vectors of size nU = %d, got shape %r'
                         % (N, nU, r.shape))
    K = [None] * N
    C = [None] * N
    P = _matrix(Q, N, (nX, nX), 'Q')
    b = q[N].copy()
    for k in range(N - 1, -1, -1):
        Ak, Bk = A[k], B[k]
        PB = P @ Bk
        gamma = _matrix(R, k, (nU, nU), 'R') + Bk.T @ PB
        # K_part = B^T P A + S^T;  P update uses K_part^T K (= K^T Gamma K) for stability
        K_part = PB.T @ Ak + _matrix(S, k, (nX, nU), 'S').T
        sol = np.linalg.solve(gamma, np.column_stack([K_part, Bk.T @ b + r[k]]))
        K[k] = sol[:, :nX].copy()
        C[k] = sol[:, nX].copy()
        b = q[k] - K[k].T @ r[k] + (Ak.T - K[k].T @ Bk.T) @ b
        P = _matrix(Q, k, (nX, nX), 'Q') + Ak.T @ P @ Ak - K_part.T @ K[k]
        P = 0.5 * (P + P.T)
    return LQSolution(K, C, P, b)
