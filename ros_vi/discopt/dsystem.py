"""DSystem: a MidpointVI seen as a first-order discrete system X(k+1) = f(X(k), U(k), k).

State and input (trep's layout)::

    X = [q_d (nQd), q_k (nQk), p (nQd), v_k (nQk)]      nX = nQ + nQd + nQk
    U = [u (nu), rho (nQk)]                             nU = nu + nQk

``q = [q_d, q_k]`` is the integrator's full configuration (system.configs order: dynamic then
kinematic), ``p`` the discrete momentum of the dynamic configs, ``v_k = (q_k(k) -
q_k(k-1)) / (t(k) - t(k-1))`` the kinematic velocity, ``u`` the force inputs and ``rho =
q_k(k+1)`` the kinematic inputs.  Units are those of the configs (rad or m), momenta
[kg m^2/s or kg m/s], time [s].
"""
import warnings
from collections import namedtuple

import numpy as np

from ..integrators import MidpointVI
from ..mechanics.free import express_jacobian, express_second_derivative, xyz_rotation
from .. import trajectory as _trajectory
from .dlqr import solve_tv_lqr

__all__ = ['DSystem', 'Trajectory', 'TangentTrajectory', 'SplitState', 'SplitInput',
           'SplitTrajectory', 'Linearization', 'Feedback', 'DerivativeError']

Trajectory = namedtuple('trajectory', 'X U')
TangentTrajectory = namedtuple('tangent_trajectory', 'dX dU')
SplitState = namedtuple('split_state', 'Q p v')
SplitInput = namedtuple('split_input', 'u rho')
SplitTrajectory = namedtuple('split_trajectory', 'Q p v u rho')
Linearization = namedtuple('linearization', 'A B')
Feedback = namedtuple('feedback', 'Kproj A B')
DerivativeError = namedtuple('errors', 'error exact_norm approx_norm')


class DSystem:
    """Discrete system wrapper for a :class:`MidpointVI` on the time grid ``t``.

    Parameters
    ----------
    varint : MidpointVI
    t : array (N,) of strictly increasing times [s]; step k goes from t[k] to t[k+1].

    Attributes: ``nX``, ``nU``, ``varint``, ``system``, ``time``, ``xk`` (nX,), ``uk`` (nU,),
    ``k`` (current discrete time index; None until :meth:`set` is called).

    Example
    -------
    >>> dsys = DSystem(mvi, np.arange(0.0, 5.0 + 0.1, 0.1))
    >>> dsys.set(dsys.build_state([3 * np.pi / 4]), dsys.build_input([0.0]), 0)
    >>> x1 = dsys.f(); A = dsys.fdx(); B = dsys.fdu()
    """

    def __init__(self, varint, t):
        if not isinstance(varint, MidpointVI):
            raise TypeError('DSystem needs a MidpointVI, got %r' % type(varint).__name__)
        self.varint = varint
        # free joints: the charts each time index's state is written in (charts property)
        self._free = varint.system.free_charts
        self._charts = None
        self._chart_change_k = None     # the current step's change of chart, linearised
        self.time = t
        self._xk = None
        self._uk = None
        self._k = None
        s = self.system
        self._nQ, self._nd, self._nk, self._nu = s.nQ, s.nQd, s.nQk, s.nu
        nQ, nd, nk, nu = self._nQ, self._nd, self._nk, self._nu
        self._nX = nQ + nd + nk
        self._nU = nu + nk
        self._sQ = slice(0, nQ)
        self._sQd = slice(0, nd)
        self._sQk = slice(nd, nQ)
        self._sp = slice(nQ, nQ + nd)
        self._sv = slice(nQ + nd, self._nX)
        self._su = slice(0, nu)
        self._srho = slice(nu, self._nU)

    def __repr__(self):
        return '<DSystem nX=%d nU=%d N=%d k=%r>' % (self._nX, self._nU, len(self._time),
                                                    self._k)

    # ------------------------------------------------------------------ properties
    @property
    def nX(self):
        """Number of states (int): nQ + nQd + nQk."""
        return self._nX

    @property
    def nU(self):
        """Number of inputs (int): nu + nQk."""
        return self._nU

    @property
    def system(self):
        """The mechanical System modelled by the integrator."""
        return self.varint.system

    @property
    def time(self):
        """Times of the discrete steps, array (N,) [s]."""
        return self._time

    @time.setter
    def time(self, t):
        t = np.array(t, dtype=float).squeeze()
        if t.ndim != 1 or t.shape[0] < 2:
            raise ValueError('DSystem time must be a 1-D array of at least 2 times, got '
                             'shape %r' % (t.shape,))
        if not np.all(np.diff(t) > 0):
            raise ValueError('DSystem time must be strictly increasing')
        self._time = t
        if self._free is not None and (self._charts is None
                                       or self._charts.shape[0] != t.shape[0]):
            self._charts = np.repeat(self._current_attitudes()[None], t.shape[0], axis=0)
            self._chart_change_k = None

    @property
    def charts(self):
        """The free joints' charts at every time index, (N, nfree, 3, 3) (a copy; None
        without free joints).

        X(k)'s three rotation configs of free joint j are angles in the chart centred on
        ``charts[k, j]`` (a reference attitude: the rotation from the joint's body axes at
        angles 0 to its parent's axes, as ``FreeJoint.reference_attitude``), and X(k)'s
        momenta of those configs are the matching ones (ros_vi.mechanics.free).  A state
        near its chart's centre is a tangent vector at the chart's attitude, so
        linearisations, LQR and trajectory optimisation work in the tangent spaces of a
        nominal trajectory, with no attitude singularity as long as each state stays
        within a quarter turn of its chart.  Default: the System's reference attitudes at
        the DSystem's creation (or when the time base changed length), at every k;
        :meth:`centre_charts` moves them onto a trajectory."""
        return None if self._charts is None else self._charts.copy()

    @charts.setter
    def charts(self, value):
        if self._free is None:
            raise ValueError('DSystem.charts: the system has no free joints')
        R = np.array(value, dtype=float)
        shape = (len(self._time), len(self._free), 3, 3)
        if R.shape != shape:
            raise ValueError('DSystem.charts must have shape %r (time base, free joints, '
                             '3, 3), got %r' % (shape, R.shape))
        bad = ~np.isfinite(R).all(axis=(2, 3))
        bad |= np.abs(R @ np.swapaxes(R, 2, 3) - np.eye(3)).max(axis=(2, 3)) > 1e-9
        bad |= np.linalg.det(R) < 0
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ValueError('DSystem.charts[%d, %d] (free joint %r) is not a rotation '
                             'matrix' % (k, j, self._free.joints[j].name))
        self._charts = R
        self._chart_change_k = None

    def centre_charts(self, X):
        """Move the charts onto the trajectory X (N, nX): every chart becomes the
        attitude of its state, and X is returned in the new charts (its free joints'
        angles 0, momenta rewritten; the motion is the same).  For keeping an optimised
        trajectory's states at their charts' centres."""
        X = np.array(X, dtype=float)
        if X.ndim != 2 or X.shape != (len(self._time), self._nX):
            raise ValueError('X must have shape (N=%d, nX=%d), got %r'
                             % (len(self._time), self._nX, X.shape))
        if self._free is None:
            return X
        new = self._charts.copy()
        for k in range(X.shape[0]):
            for j, rot in enumerate(self._free.rotation):
                new[k, j] = self._charts[k, j] @ xyz_rotation(X[k, rot])
            self._free.express(self._charts[k], new[k], X[k, self._sQ], X[k, self._sp])
            X[k, self._free.rotation.ravel()] = 0.0      # the centres (not rounding's)
        self._charts = new
        self._chart_change_k = None
        return X

    def _current_attitudes(self):
        return self._free.attitudes(self.system.model)

    @property
    def xk(self):
        """Current state X(k), copy (nX,)."""
        return None if self._xk is None else self._xk.copy()

    @property
    def uk(self):
        """Current input U(k), copy (nU,)."""
        return None if self._uk is None else self._uk.copy()

    @property
    def k(self):
        """Current discrete time index (int)."""
        return self._k

    def kf(self):
        """Last state index the system can be set to: ``len(time) - 1``."""
        return len(self._time) - 1

    # ------------------------------------------------------------------ building/splitting
    def _vec(self, value, n, what):
        arr = np.asarray(value, dtype=float).reshape(-1) if np.ndim(value) <= 1 else None
        if arr is None or arr.shape[0] != n:
            raise ValueError('%s must have %d entries, got shape %r'
                             % (what, n, np.shape(value)))
        return arr

    def build_state(self, Q=None, p=None, v=None):
        """State vector (nX,) from Q (nQ,), p (nQd,), v (nQk,); missing parts are zero."""
        X = np.zeros(self._nX)
        if Q is not None:
            X[self._sQ] = self._vec(Q, self._nQ, 'Q')
        if p is not None:
            X[self._sp] = self._vec(p, self._nd, 'p')
        if v is not None:
            X[self._sv] = self._vec(v, self._nk, 'v')
        return X

    def build_input(self, u=None, rho=None):
        """Input vector (nU,) from u (nu,) and rho (nQk,); missing parts are zero.

        As in trep, a component the system does not have (no inputs / no kinematic
        configs) is ignored, with a ``UserWarning`` if it holds any values.
        """
        U = np.zeros(self._nU)
        if u is not None:
            U[self._su] = (self._absent(u, 'u', stacklevel=3) if self._nu == 0
                           else self._vec(u, self._nu, 'u'))
        if rho is not None:
            U[self._srho] = (self._absent(rho, 'rho', stacklevel=3) if self._nk == 0
                             else self._vec(rho, self._nk, 'rho'))
        return U

    @staticmethod
    def _absent(value, what, rows=None, stacklevel=4):
        """Value given for a component of width 0: ignored (trep assigns it to an empty
        slice).  Returns an empty block; warns when ``value`` is not itself empty."""
        arr = np.asarray(value, dtype=float)
        if arr.size:
            warnings.warn('DSystem: %s ignored, the system has no %s entries'
                          % (what, {'u': 'input', 'rho': 'kinematic'}.get(what, what)),
                          UserWarning, stacklevel=stacklevel)
        return np.zeros(0) if rows is None else np.zeros((rows, 0))

    def _traj(self, value, rows, cols, what):
        arr = np.asarray(value, dtype=float)
        if cols == 0 and arr.ndim >= 1 and arr.shape[0] == rows:
            return self._absent(arr, what, rows)
        if arr.ndim == 1 and cols == 1:
            arr = arr.reshape(-1, 1)
        if arr.ndim != 2 or arr.shape != (rows, cols):
            raise ValueError('%s must have shape (%d, %d) (time base of %d steps), got %r'
                             % (what, rows, cols, len(self._time), arr.shape))
        return arr

    def build_trajectory(self, Q=None, p=None, v=None, u=None, rho=None):
        """Trajectory(X (N, nX), U (N-1, nU)) from Q (N, nQ), p (N, nQd), v (N, nQk),
        u (N-1, nu), rho (N-1, nQk); unspecified components are zero.

        A component the system does not have (e.g. ``rho`` without kinematic configs) is
        ignored when it has the right length, as trep does; a ``UserWarning`` says so if
        it holds values."""
        N = len(self._time)
        X = np.zeros((N, self._nX))
        U = np.zeros((N - 1, self._nU))
        if Q is not None:
            X[:, self._sQ] = self._traj(Q, N, self._nQ, 'Q')
        if p is not None:
            X[:, self._sp] = self._traj(p, N, self._nd, 'p')
        if v is not None:
            X[:, self._sv] = self._traj(v, N, self._nk, 'v')
        if u is not None:
            U[:, self._su] = self._traj(u, N - 1, self._nu, 'u')
        if rho is not None:
            U[:, self._srho] = self._traj(rho, N - 1, self._nk, 'rho')
        return Trajectory(X, U)

    def split_state(self, X=None):
        """SplitState(Q (nQ,), p (nQd,), v (nQk,)) of a state (zeros if X is None)."""
        X = np.zeros(self._nX) if X is None else self._vec(X, self._nX, 'X')
        return SplitState(X[self._sQ], X[self._sp], X[self._sv])

    def split_input(self, U=None):
        """SplitInput(u (nu,), rho (nQk,)) of an input (zeros if U is None)."""
        U = np.zeros(self._nU) if U is None else self._vec(U, self._nU, 'U')
        return SplitInput(U[self._su], U[self._srho])

    def split_trajectory(self, X=None, U=None):
        """SplitTrajectory(Q, p, v, u, rho) of a trajectory; a missing X or U is zeros."""
        N = len(self._time)
        if X is None and U is None:
            X, U = np.zeros((N, self._nX)), np.zeros((N - 1, self._nU))
        elif X is None:
            U = np.asarray(U, dtype=float)
            X = np.zeros((U.shape[0] + 1, self._nX))
        elif U is None:
            X = np.asarray(X, dtype=float)
            U = np.zeros((X.shape[0] - 1, self._nU))
        X = np.asarray(X, dtype=float)
        U = np.asarray(U, dtype=float)
        if X.ndim != 2 or X.shape[1] != self._nX:
            raise ValueError('X must have shape (N, nX=%d), got %r' % (self._nX, X.shape))
        if U.ndim != 2 or U.shape[1] != self._nU:
            raise ValueError('U must have shape (N-1, nU=%d), got %r' % (self._nU, U.shape))
        return SplitTrajectory(X[:, self._sQ], X[:, self._sp], X[:, self._sv],
                               U[:, self._su], U[:, self._srho])

    def convert_trajectory(self, dsys_a, X, U):
        """Trajectory for this system from (X, U) of ``dsys_a``, matched by config and
        input names.  Components this system lacks are dropped; those ``dsys_a`` lacks are
        zero.  (Only a reordering: the result need not satisfy this system's dynamics.
        Free joints' angles are copied as they are: give both systems the same charts.)"""
        X = np.asarray(X, dtype=float)
        U = np.asarray(U, dtype=float)
        qa, pa, va, ua, rhoa = dsys_a.split_trajectory(X, U)
        nX = np.zeros((X.shape[0], self._nX))
        nU = np.zeros((U.shape[0], self._nU))
        qb, pb, vb, ub, rhob = self.split_trajectory(nX, nU)   # views into nX, nU
        sa, sb = dsys_a.system, self.system

        def copy(items_a, items_b, pairs):
            names_a = [item.name for item in items_a]
            for j, item in enumerate(items_b):
                if item.name in names_a:
                    i = names_a.index(item.name)
                    for dst, src in pairs:
                        dst[:, j] = src[:, i]

        copy(sa.configs, sb.configs, [(qb, qa)])
        copy(sa.dyn_configs, sb.dyn_configs, [(pb, pa)])
        copy(sa.kin_configs, sb.kin_configs, [(vb, va), (rhob, rhoa)])
        copy(sa.inputs, sb.inputs, [(ub, ua)])
        return Trajectory(nX, nU)

    def save_state_trajectory(self, filename, X=None, U=None):
        """Save (X, U) with :func:`ros_vi.save_trajectory` (npz by variable name, see
        ros_vi/trajectory.py); a missing X or U is saved as zeros."""
        Q, p, v, u, rho = self.split_trajectory(X, U)
        _trajectory.save_trajectory(filename, self.system, self._time, Q, p, v, u, rho,
                                    charts=self._charts)

    def load_state_trajectory(self, filename):
        """Load a trajectory saved by :meth:`save_state_trajectory` or
        :func:`ros_vi.save_trajectory`; sets ``time`` from the file and returns
        Trajectory(X, U) (components absent from the file are zero)."""
        t, Q, p, v, u, rho = _trajectory.load_trajectory(filename, self.system)
        if self._free is not None:
            # the free joints' angles mean nothing without the charts they were taken in
            data = _trajectory.load_trajectory(filename)
            names = list(data.get('charts_names', []))
            missing = [j.name for j in self._free.joints if j.name not in names]
            if missing:
                raise ValueError('load_state_trajectory: %r has no charts for the free '
                                 'joints %s' % (filename, ', '.join(map(repr, missing))))
            self.time = t
            self.charts = data['charts'][:, [names.index(j.name) for j in self._free.joints]]
        else:
            self.time = t
        return self.build_trajectory(Q, p, v, u, rho)

    # ------------------------------------------------------------------ dynamics
    def _q2_hint(self, xk_hint):
        # The compiled fast path predicts q2 itself (a hint would force the general path).
        if xk_hint is None or self.varint.compiled:
            return None
        return self._vec(xk_hint, self._nX, 'xk_hint')[self._sQ].copy()

    def _check_k(self, k):
        if not 0 <= k < len(self._time) - 1:
            raise IndexError('discrete time k = %r out of range 0..%d (time has %d entries)'
                             % (k, len(self._time) - 2, len(self._time)))

    def set(self, xk, uk, k, xk_hint=None, lambda_hint=None):
        """Set state X(k) = xk (nX,), input U(k) = uk (nU,) and time index k, and take the
        integrator's step t[k] -> t[k+1] (so :meth:`f` and the derivatives are ready).

        ``xk_hint`` (a guess of X(k+1)) and ``lambda_hint`` (nc,) seed the root solver.
        Raises ConvergenceError if the step fails.
        """
        k = int(k)
        self._check_k(k)
        xk = self._vec(xk, self._nX, 'xk').copy()
        uk = self._vec(uk, self._nU, 'uk').copy()
        mvi = self.varint
        self._chart_change_k = None
        if self._free is not None:
            self._free.set_attitudes(self._charts[k])
        mvi.initialize_from_state(self._time[k], xk[self._sQ], xk[self._sp])
        mvi.step(self._time[k + 1], uk[self._su], uk[self._srho],
                 lambda1_hint=lambda_hint, q2_hint=self._q2_hint(xk_hint))
        self._k, self._xk, self._uk = k, xk, uk

    def step(self, uk, xk_hint=None, lambda_hint=None):
        """Advance to k+1 with input uk (nU,): same as ``set(f(), uk, k+1)`` but continues
        the integrator (no re-initialisation)."""
        if self._k is None:
            raise RuntimeError('DSystem.step: call set() first')
        k = self._k + 1
        self._check_k(k)
        if self._free is not None:
            # a step's derivatives are taken in the charts of its start: begin there
            self.set(self.f(), uk, k, xk_hint, lambda_hint)
            return
        uk = self._vec(uk, self._nU, 'uk').copy()
        xk = self.f()
        self.varint.step(self._time[k + 1], uk[self._su], uk[self._srho],
                         lambda1_hint=lambda_hint, q2_hint=self._q2_hint(xk_hint))
        self._k, self._xk, self._uk = k, xk, uk

    def f(self):
        """Next state X(k+1) (nX,)."""
        mvi = self.varint
        X = np.empty(self._nX)
        X[self._sQ] = mvi.q2
        X[self._sp] = mvi.p2
        if self._nk:
            X[self._sv] = mvi.v2
        if self._free is not None:
            # from the charts the step moved to into those of time k + 1
            self._free.express(self._current_attitudes(), self._charts[self._k + 1],
                               X[self._sQ], X[self._sp])
        return X

    def _chart_change(self):
        """f's change of chart at the current step, linearised: ``(E (nX, nX), parts)``
        with ``f = Phi(y)``, y the integrator's (q2, p2) in the charts the step moved to
        and E = dPhi/dy (identity except for the free joints' rotation rows); ``parts``
        lists per free joint ``(indices (6,), A (3, 3), angles, momentum)``
        (:func:`~ros_vi.mechanics.free.express_jacobian`'s arguments)."""
        if self._chart_change_k is not None:
            return self._chart_change_k          # fdx, fdu and the adjoints share it
        mvi, nQ = self.varint, self._nQ
        E = np.eye(self._nX)
        parts = []
        now, target = self._current_attitudes(), self._charts[self._k + 1]
        q2, p2 = mvi.q2, mvi.p2
        for j, rot in enumerate(self._free.rotation):
            A = target[j].T @ now[j]
            Tq, Tp, Tpq = express_jacobian(A, q2[rot], p2[rot])
            E[np.ix_(rot, rot)] = Tq
            E[np.ix_(nQ + rot, nQ + rot)] = Tp
            E[np.ix_(nQ + rot, rot)] = Tpq
            parts.append((np.concatenate([rot, nQ + rot]), A, q2[rot], p2[rot]))
        self._chart_change_k = (E, parts)
        return E, parts

    def _adjoint(self, z):
        """The adjoint the integrator's second derivatives take, and f's change of chart's
        own second-order term: ``(z', G)`` with z' = E^T z (nX,) and ``G (nX, nX)`` the
        Hessian of ``z . Phi`` over y (None without free joints)."""
        zq, zp = self._z(z)
        if self._free is None:
            return z, None
        full = np.zeros(self._nX)
        full[self._sQd], full[self._sp] = zq, zp
        E, parts = self._chart_change()
        G = np.zeros((self._nX, self._nX))
        for idx, A, angles, momentum in parts:
            G[np.ix_(idx, idx)] = express_second_derivative(A, angles, momentum,
                                                            full[idx[:3]], full[idx[3:]])
        return E.T @ full, G

    def _dt(self):
        return self._time[self._k + 1] - self._time[self._k]

    def fdx(self):
        """df/dX (nX, nX), derivatives across the rows (row = output, column = input)."""
        A = self._fdx_step()
        return A if self._free is None else self._chart_change()[0] @ A

    def fdu(self):
        """df/dU (nX, nU)."""
        B = self._fdu_step()
        return B if self._free is None else self._chart_change()[0] @ B

    def _fdx_step(self):
        """d y / dX of the integrator's step (y: its state in the charts it moved to)."""
        mvi = self.varint
        nX = self._nX
        A = np.zeros((nX, nX))
        A[self._sQd, self._sQ] = mvi.q2_dq1()
        A[self._sQd, self._sp] = mvi.q2_dp1()
        A[self._sp, self._sQ] = mvi.p2_dq1()
        A[self._sp, self._sp] = mvi.p2_dp1()
        if self._nk:
            A[self._sv, self._sQk] = -np.eye(self._nk) / self._dt()
        return A

    def _fdu_step(self):
        """d y / dU of the integrator's step."""
        mvi = self.varint
        B = np.zeros((self._nX, self._nU))
        B[self._sQd, self._su] = mvi.q2_du1()
        B[self._sp, self._su] = mvi.p2_du1()
        if self._nk:
            B[self._sQd, self._srho] = mvi.q2_dk2()
            B[self._sp, self._srho] = mvi.p2_dk2()
            B[self._sQk, self._srho] = np.eye(self._nk)
            B[self._sv, self._srho] = np.eye(self._nk) / self._dt()
        return B

    def _z(self, z):
        """Adjoint parts used by the second derivatives: z[:nQd] and z[nQ:nQ+nQd].

        As trep, only these slices are read: entries after them (the v part, or anything
        beyond nX) are ignored, so a z longer than the state is accepted.
        """
        arr = np.asarray(z, dtype=float)
        need = self._nQ + self._nd
        if arr.ndim != 1 or arr.shape[0] < need:
            raise ValueError('z must be a 1-D adjoint vector with at least nQ + nQd = %d '
                             'entries (nX = %d; later entries are ignored), got shape %r'
                             % (need, self._nX, np.shape(z)))
        # the q_k and v_k outputs are linear in (X, U): only q_d and p rows contribute
        return arr[self._sQd], arr[self._sp]

    def fdxdx(self, z):
        """z^T d2f/dXdX (nX, nX) for an adjoint z (nX,) (longer z: extra entries ignored)."""
        z, G = self._adjoint(z)
        zq, zp = self._z(z)
        mvi = self.varint
        H = np.zeros((self._nX, self._nX))
        sQ, sp = self._sQ, self._sp
        H[sQ, sQ] = mvi.q2_dq1dq1() @ zq + mvi.p2_dq1dq1() @ zp
        H[sQ, sp] = mvi.q2_dq1dp1() @ zq + mvi.p2_dq1dp1() @ zp
        H[sp, sQ] = H[sQ, sp].T
        H[sp, sp] = mvi.q2_dp1dp1() @ zq + mvi.p2_dp1dp1() @ zp
        if G is not None:
            Y = self._fdx_step()
            H += Y.T @ G @ Y
        return H

    def fdxdu(self, z):
        """z^T d2f/dXdU (nX, nU) for an adjoint z (nX,) (longer z: extra entries ignored)."""
        z, G = self._adjoint(z)
        zq, zp = self._z(z)
        mvi = self.varint
        H = np.zeros((self._nX, self._nU))
        sQ, sp, su, srho = self._sQ, self._sp, self._su, self._srho
        H[sQ, su] = mvi.q2_dq1du1() @ zq + mvi.p2_dq1du1() @ zp
        H[sp, su] = mvi.q2_dp1du1() @ zq + mvi.p2_dp1du1() @ zp
        if self._nk:
            H[sQ, srho] = mvi.q2_dq1dk2() @ zq + mvi.p2_dq1dk2() @ zp
            H[sp, srho] = mvi.q2_dp1dk2() @ zq + mvi.p2_dp1dk2() @ zp
        if G is not None:
            H += self._fdx_step().T @ G @ self._fdu_step()
        return H

    def fdudu(self, z):
        """z^T d2f/dUdU (nU, nU) for an adjoint z (nX,) (longer z: extra entries ignored)."""
        z, G = self._adjoint(z)
        zq, zp = self._z(z)
        mvi = self.varint
        H = np.zeros((self._nU, self._nU))
        su, srho = self._su, self._srho
        H[su, su] = mvi.q2_du1du1() @ zq + mvi.p2_du1du1() @ zp
        if self._nk:
            H[su, srho] = mvi.q2_du1dk2() @ zq + mvi.p2_du1dk2() @ zp
            H[srho, su] = H[su, srho].T
            H[srho, srho] = mvi.q2_dk2dk2() @ zq + mvi.p2_dk2dk2() @ zp
        if G is not None:
            Y = self._fdu_step()
            H += Y.T @ G @ Y
        return H

    # ------------------------------------------------------------------ trajectories
    def _trajectory_pair(self, X, U):
        X = np.asarray(X, dtype=float)
        U = np.asarray(U, dtype=float)
        if X.ndim != 2 or X.shape[1] != self._nX:
            raise ValueError('X must have shape (N, nX=%d), got %r' % (self._nX, X.shape))
        if U.ndim != 2 or U.shape != (X.shape[0] - 1, self._nU):
            raise ValueError('U must have shape (N-1=%d, nU=%d), got %r'
                             % (X.shape[0] - 1, self._nU, U.shape))
        if X.shape[0] > len(self._time):
            raise ValueError('trajectory has %d states but the time base only %d'
                             % (X.shape[0], len(self._time)))
        return X, U

    def linearize_trajectory(self, X, U):
        """Linearization(A (N-1, nX, nX), B (N-1, nX, nU)) about X (N, nX), U (N-1, nU).

        Each step is set from X[k] (X, U need not be an exact trajectory)."""
        X, U = self._trajectory_pair(X, U)
        n = X.shape[0] - 1
        A = np.zeros((n, self._nX, self._nX))
        B = np.zeros((n, self._nX, self._nU))
        for k in range(n):
            self.set(X[k], U[k], k, xk_hint=X[k + 1])
            A[k] = self.fdx()
            B[k] = self.fdu()
        return Linearization(A, B)

    def project(self, bX, bU, Kproj=None):
        """Trajectory(X, U) of the system near (bX, bU) under the feedback law::

            X[0] = bX[0];  U[k] = bU[k] - Kproj[k] (X[k] - bX[k]);  X[k+1] = f(X[k], U[k], k)

        Without Kproj an LQR controller about (bX, bU) is computed (only sensible when
        (bX, bU) is close to a trajectory)."""
        bX, bU = self._trajectory_pair(bX, bU)
        if Kproj is None:
            Kproj = self.calc_feedback_controller(bX, bU)
        nX = np.zeros(bX.shape)
        nU = np.zeros(bU.shape)
        nX[0] = bX[0]
        for k in range(bX.shape[0] - 1):
            nU[k] = bU[k] - Kproj[k] @ (nX[k] - bX[k])
            if k == 0:
                self.set(nX[k], nU[k], k, xk_hint=bX[k + 1])
            else:
                self.step(nU[k], xk_hint=bX[k + 1])
            nX[k + 1] = self.f()
        return Trajectory(nX, nU)

    def dproject(self, A, B, bdX, bdU, K):
        """TangentTrajectory(dX, dU): project (bdX, bdU) onto the tangent space of the
        linearization (A, B) with the stabilising feedback K (N-1 arrays (nU, nX))."""
        bdX = np.asarray(bdX, dtype=float)
        bdU = np.asarray(bdU, dtype=float)
        dX = np.zeros(bdX.shape)
        dU = np.zeros(bdU.shape)
        dX[0] = bdX[0]
        for k in range(bdX.shape[0] - 1):
            dU[k] = bdU[k] - K[k] @ (dX[k] - bdX[k])
            dX[k + 1] = A[k] @ dX[k] + B[k] @ dU[k]
        return TangentTrajectory(dX, dU)

    def calc_feedback_controller(self, X, U, Q=None, R=None, return_linearization=False):
        """LQR feedback gains K (a list of N-1 arrays (nU, nX), as trep) about (X, U) for
        the weights Q(k) (nX, nX) and R(k) (nU, nU) (functions of k or constant arrays;
        default identity).  With
        ``return_linearization`` returns Feedback(Kproj, A, B)."""
        A, B = self.linearize_trajectory(X, U)
        if Q is None:
            Q = np.eye(self._nX)
        if R is None:
            R = np.eye(self._nU)
        K = solve_tv_lqr(A, B, Q, R).K
        if return_linearization:
            return Feedback(K, A, B)
        return K

    # ------------------------------------------------------------------ derivative checks
    def _inputs(self, xk, uk):
        return (self._vec(xk, self._nX, 'xk').copy(), self._vec(uk, self._nU, 'uk').copy())

    @staticmethod
    def _result(exact, approx):
        return DerivativeError(float(np.linalg.norm(exact - approx)),
                               float(np.linalg.norm(exact)), float(np.linalg.norm(approx)))

    def _central(self, xk, uk, k, wrt, func, delta):
        """Central differences of func() (evaluated after set) w.r.t. X or U entries;
        returns array (..., n) with the perturbed index last."""
        base = xk if wrt == 'x' else uk
        if base.shape[0] == 0:
            self.set(xk, uk, k)
            return np.zeros(np.shape(func()) + (0,))
        cols = []
        for i in range(base.shape[0]):
            vals = []
            for sign in (1.0, -1.0):
                pert = base.copy()
                pert[i] += sign * delta
                if wrt == 'x':
                    self.set(pert, uk, k)
                else:
                    self.set(xk, pert, k)
                vals.append(func())
            cols.append((vals[0] - vals[1]) / (2.0 * delta))
        return np.stack(cols, axis=-1)

    def check_fdx(self, xk, uk, k, delta=1e-5):
        """(error, exact_norm, approx_norm) of fdx() against central differences of f()."""
        xk, uk = self._inputs(xk, uk)
        self.set(xk, uk, k)
        exact = self.fdx()
        return self._result(exact, self._central(xk, uk, k, 'x', self.f, delta))

    def check_fdu(self, xk, uk, k, delta=1e-5):
        """(error, exact_norm, approx_norm) of fdu() against central differences of f()."""
        xk, uk = self._inputs(xk, uk)
        self.set(xk, uk, k)
        exact = self.fdu()
        return self._result(exact, self._central(xk, uk, k, 'u', self.f, delta))

    def _exact2(self, func):
        eye = np.eye(self._nX)
        return np.stack([func(eye[i]) for i in range(self._nX)])

    def check_fdxdx(self, xk, uk, k, delta=1e-5):
        """(error, exact_norm, approx_norm) of fdxdx() (all nX adjoint unit vectors)
        against central differences of fdx()."""
        xk, uk = self._inputs(xk, uk)
        self.set(xk, uk, k)
        exact = self._exact2(self.fdxdx)
        return self._result(exact, self._central(xk, uk, k, 'x', self.fdx, delta))

    def check_fdxdu(self, xk, uk, k, delta=1e-5):
        """(error, exact_norm, approx_norm) of fdxdu() against central differences of
        fdx() with respect to U."""
        xk, uk = self._inputs(xk, uk)
        self.set(xk, uk, k)
        exact = self._exact2(self.fdxdu)
        return self._result(exact, self._central(xk, uk, k, 'u', self.fdx, delta))

    def check_fdudu(self, xk, uk, k, delta=1e-5):
        """(error, exact_norm, approx_norm) of fdudu() against central differences of
        fdu() with respect to U."""
        xk, uk = self._inputs(xk, uk)
        self.set(xk, uk, k)
        exact = self._exact2(self.fdudu)
        return self._result(exact, self._central(xk, uk, k, 'u', self.fdu, delta))
