"""Naive, slow, obviously-correct Lagrangian dynamics for trep-style frame trees.

Independent reference implementation for testing ``ros_vi``; it shares no
code with ``ros_vi`` and deliberately avoids spatial algebra (twists,
adjoints, composite inertias).  Everything is computed from plain 4x4
homogeneous matrices:

* World transforms are the ordered product of the local transforms along
  the chain world -> frame.
* Jacobians are computed EXACTLY by the product rule: d/dq_j of a product
  is the sum of the products in which one factor driven by q_j is replaced
  by its derivative (second derivatives: two factors, or one factor twice).
* Translational Jacobian   Jv[:, j] = d p / d q_j
  Body angular Jacobian    Jw[:, j] = vee(R^T dR/dq_j)
* M(q) = sum over masses of  m Jv^T Jv + Jw^T diag(Ixx, Iyy, Izz) Jw
* dM/dq from the exact second derivatives (or, alternatively, 4th-order
  central finite differences of M).
* Christoffel symbols  Gamma[i,j,k] = dM_ij/dq_k - 1/2 dM_jk/dq_i  and
  bias  b(q, qd) = sum_jk Gamma[i,j,k] qd_j qd_k + dV/dq.
* Kinetic energy is computed independently of M, by complex-step
  differentiation in time along q(t) = q + t qd of the world transforms
  (p_dot = Im p(q + i h qd)/h, R_dot likewise, h = 1e-20; exact to machine
  precision), omega_b = vee(R^T R_dot), T = sum 1/2 m |p_dot|^2
  + 1/2 omega_b^T I omega_b.

Equations of motion:   M(q) qdd + b(q, qd) = tau,   b = C(q, qd) qd + dV/dq.

Frame tree input format (mirrors trep's ``import_frames``)
---------------------------------------------------------
A list of frame tuples ``(kind, param)`` or ``(kind, param, opts)``; a list
IMMEDIATELY after a tuple holds that frame's children (recursively).  Top
level frames are children of the (fixed, identity) world frame.

* kind: 'rx', 'ry', 'rz' -- right-handed rotation by angle ``param`` about
  the PARENT's x/y/z axis; 'tx', 'ty', 'tz' -- translation by ``param``
  along the parent's x/y/z axis; 'const' (alias 'const_se3') -- fixed 4x4
  homogeneous transform ``param``.
* param: a number (constant) or a str (name of a generalized coordinate).
* opts: dict, optional keys 'name' (str), 'mass' (float m, or
  [m, Ixx, Iyy, Izz]) and 'kinematic' (ignored: treated as dynamic).
  trep convention: the mass sits at the frame origin and the inertia is
  diagonal in the frame's own axes, about its origin.

Example (simple pendulum):
    [('rx', 'theta', {'name': 'shoulder'}), [('tz', -1.0, {'mass': 1.0})]]

Shapes: q, qd, tau, bias, gravity_forces: (nq,); mass_matrix: (nq, nq);
mass_matrix_derivative: (nq, nq, nq) with D[k, i, j] = dM_ij/dq_k;
christoffel: (nq, nq, nq).  Frames are indexed 0.. in depth-first
(pre-)order of appearance in the description; the world frame is not
counted.
"""

import numpy as np

_AXIS = {'x': 0, 'y': 1, 'z': 2}


class _Frame(object):
    def __init__(self, index, parent, kind, param, opts):
        self.index = index
        self.parent = parent            # parent frame index, or None (= world)
        kind = kind.lower()
        if kind == 'const_se3':
            kind = 'const'
        if kind not in ('rx', 'ry', 'rz', 'tx', 'ty', 'tz', 'const'):
            raise ValueError('unknown frame kind %r' % (kind,))
        self.kind = kind
        if kind == 'const':
            param = np.array(param, dtype=float)
            if param.shape != (4, 4):
                raise ValueError('const frame needs a 4x4 matrix')
        elif not isinstance(param, str):
            param = float(param)
        self.param = param
        opts = dict(opts or {})
        self.name = opts.get('name')
        mass = opts.get('mass', 0.0)
        if np.ndim(mass) == 0:
            self.mass = float(mass)
            self.inertia = np.zeros(3)
        else:
            mass = [float(v) for v in mass]
            if len(mass) != 4:
                raise ValueError("mass must be a number or [m, Ixx, Iyy, Izz]")
            self.mass = mass[0]
            self.inertia = np.array(mass[1:])
        self.config = param if isinstance(param, str) else None


def _local(kind, v, order):
    """order-th derivative w.r.t. v of the local 4x4 transform of `kind`.

    Works for complex v (used for the complex-step kinetic energy)."""
    dtype = np.result_type(v, float)
    T = np.zeros((4, 4), dtype=dtype)
    if kind[0] == 'r':
        a = _AXIS[kind[1]]
        b, c = (a + 1) % 3, (a + 2) % 3
        # derivatives of (cos, sin): order 0,1,2
        cs = [(np.cos(v), np.sin(v)), (-np.sin(v), np.cos(v)), (-np.cos(v), -np.sin(v))][order]
        co, si = cs
        # rotation about axis a acting on the (b, c) plane: right-handed
        T[b, b] = co
        T[b, c] = -si
        T[c, b] = si
        T[c, c] = co
        if order == 0:
            T[a, a] = 1.0
            T[3, 3] = 1.0
    else:
        a = _AXIS[kind[1]]
        if order == 0:
            T[:, :] = np.eye(4)
            T[a, 3] = v
        elif order == 1:
            T[a, 3] = 1.0
        # order 2: zero
    return T


def _vee(S):
    """(S32, S13, S21) of the antisymmetric part of a 3x3 matrix."""
    A = 0.5 * (S - S.T)
    return np.array([A[2, 1], A[0, 2], A[1, 0]])


class NaiveSystem(object):
    """Slow reference Lagrangian system built from a trep-style frame tree.

    Parameters
    ----------
    frames : nested list (see module docstring)
    config_names : sequence of str, order of the generalized coordinates;
        None -> order of first appearance in the tree.
    gravity : gravity acceleration vector (3,), default (0, 0, -9.8).
    """

    def __init__(self, frames, config_names=None, gravity=(0.0, 0.0, -9.8)):
        self.frames = []
        self._parse(frames, None)
        used = []
        for f in self.frames:
            if f.config is not None and f.config not in used:
                used.append(f.config)
        if config_names is None:
            config_names = used
        self.config_names = list(config_names)
        for c in used:
            if c not in self.config_names:
                raise ValueError('config %r not listed in config_names' % c)
        self.nq = len(self.config_names)
        self._cidx = dict((c, i) for i, c in enumerate(self.config_names))
        self.gravity = np.array(gravity, dtype=float)
        # chains: list of frame indices from the top-level ancestor to the frame
        self._chains = []
        for f in self.frames:
            chain = []
            g = f
            while g is not None:
                chain.append(g.index)
                g = None if g.parent is None else self.frames[g.parent]
            self._chains.append(chain[::-1])
        self.mass_frames = [f.index for f in self.frames
                            if f.mass != 0.0 or np.any(f.inertia != 0.0)]

    # ------------------------------------------------------------------ parse
    def _parse(self, items, parent):
        items = list(items)
        i = 0
        while i < len(items):
            item = items[i]
            if not isinstance(item, tuple):
                raise ValueError('expected a frame tuple, got %r' % (item,))
            kind, param = item[0], item[1]
            opts = item[2] if len(item) > 2 else {}
            f = _Frame(len(self.frames), parent, kind, param, opts)
            self.frames.append(f)
            i += 1
            if i < len(items) and isinstance(items[i], list):
                self._parse(items[i], f.index)
                i += 1

    # ------------------------------------------------------------- kinematics
    def _value(self, f, q):
        if f.config is not None:
            return q[self._cidx[f.config]]
        return f.param

    def _factor(self, fi, q, order):
        f = self.frames[fi]
        if f.kind == 'const':
            if order == 0:
                return f.param
            return np.zeros((4, 4))
        return _local(f.kind, self._value(f, q), order)

    def _product(self, chain, q, orders):
        """Product of the chain's local transforms; orders: {frame index: deriv order}."""
        W = np.eye(4, dtype=np.result_type(np.asarray(q), float))
        for fi in chain:
            W = W @ self._factor(fi, q, orders.get(fi, 0))
        return W

    def _driven_by(self, chain, j):
        name = self.config_names[j]
        return [fi for fi in chain if self.frames[fi].config == name]

    def _transform(self, fi, q):
        return self._product(self._chains[fi], q, {})

    def _dtransform(self, fi, q, j):
        """d W_fi / d q_j (4x4)."""
        chain = self._chains[fi]
        out = np.zeros((4, 4))
        for a in self._driven_by(chain, j):
            out = out + self._product(chain, q, {a: 1})
        return out

    def _ddtransform(self, fi, q, j, k):
        """d^2 W_fi / d q_j d q_k (4x4)."""
        chain = self._chains[fi]
        out = np.zeros((4, 4))
        for a in self._driven_by(chain, j):
            for b in self._driven_by(chain, k):
                orders = {a: 2} if a == b else {a: 1, b: 1}
                out = out + self._product(chain, q, orders)
        return out

    def world_transforms(self, q):
        """dict: frame index -> 4x4 world transform; named frames also keyed by name."""
        q = np.asarray(q)
        out = {}
        for f in self.frames:
            W = self._transform(f.index, q)
            out[f.index] = W
            if f.name is not None:
                out[f.name] = W
        return out

    def jacobians(self, fi, q):
        """(Jv, Jw) of frame fi, each (3, nq): p_dot = Jv qd, body omega = Jw qd."""
        q = np.asarray(q, dtype=float)
        W = self._transform(fi, q)
        R = W[:3, :3]
        Jv = np.zeros((3, self.nq))
        Jw = np.zeros((3, self.nq))
        for j in range(self.nq):
            dW = self._dtransform(fi, q, j)
            Jv[:, j] = dW[:3, 3]
            Jw[:, j] = _vee(R.T @ dW[:3, :3])
        return Jv, Jw

    def jacobian_derivatives(self, fi, q):
        """(dJv, dJw), each (nq, 3, nq): dJv[k] = d Jv / d q_k."""
        q = np.asarray(q, dtype=float)
        W = self._transform(fi, q)
        R = W[:3, :3]
        dR = [self._dtransform(fi, q, j)[:3, :3] for j in range(self.nq)]
        dJv = np.zeros((self.nq, 3, self.nq))
        dJw = np.zeros((self.nq, 3, self.nq))
        for k in range(self.nq):
            for j in range(self.nq):
                ddW = self._ddtransform(fi, q, j, k)
                dJv[k][:, j] = ddW[:3, 3]
                # d/dq_k of vee(R^T dR_j); the sum is skew-symmetric
                dJw[k][:, j] = _vee(dR[k].T @ dR[j] + R.T @ ddW[:3, :3])
        return dJv, dJw

    # --------------------------------------------------------------- energies
    def kinetic_energy(self, q, qd, h=1e-20):
        """T(q, qd) by complex-step time differentiation of the world transforms."""
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        qc = q + 1j * h * qd
        T = 0.0
        for fi in self.mass_frames:
            f = self.frames[fi]
            W = self._transform(fi, q)
            Wc = self._transform(fi, qc)
            Wdot = Wc.imag / h
            pdot = Wdot[:3, 3]
            w = _vee(W[:3, :3].T @ Wdot[:3, :3])
            T += 0.5 * f.mass * pdot @ pdot + 0.5 * w @ (f.inertia * w)
        return T

    def kinetic_energy_fd(self, q, qd, h=1e-3):
        """T(q, qd) by Richardson-extrapolated central differences in time
        (a second, cruder independent check; ~1e-10 relative accuracy)."""
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)

        def cd(fi, hh):
            return (self._transform(fi, q + hh * qd) - self._transform(fi, q - hh * qd)) / (2 * hh)
        T = 0.0
        for fi in self.mass_frames:
            f = self.frames[fi]
            W = self._transform(fi, q)
            Wdot = (4.0 * cd(fi, h / 2) - cd(fi, h)) / 3.0
            pdot = Wdot[:3, 3]
            w = _vee(W[:3, :3].T @ Wdot[:3, :3])
            T += 0.5 * f.mass * pdot @ pdot + 0.5 * w @ (f.inertia * w)
        return T

    def potential_energy(self, q):
        """V(q) = -sum_i m_i gravity . p_i."""
        V = 0.0
        for fi in self.mass_frames:
            p = self._transform(fi, np.asarray(q, dtype=float))[:3, 3]
            V -= self.frames[fi].mass * self.gravity @ p
        return V

    def lagrangian(self, q, qd):
        return self.kinetic_energy(q, qd) - self.potential_energy(q)

    # --------------------------------------------------------------- dynamics
    def mass_matrix(self, q):
        """M(q), (nq, nq), from exact Jacobians."""
        M = np.zeros((self.nq, self.nq))
        for fi in self.mass_frames:
            f = self.frames[fi]
            Jv, Jw = self.jacobians(fi, q)
            M += f.mass * Jv.T @ Jv + Jw.T @ np.diag(f.inertia) @ Jw
        return M

    def mass_matrix_derivative(self, q, method='exact', h=1e-3):
        """D[k, i, j] = dM_ij/dq_k, (nq, nq, nq).

        method='exact': product-rule second derivatives of the transforms.
        method='fd': 4th-order central differences of mass_matrix with step h.
        """
        q = np.asarray(q, dtype=float)
        n = self.nq
        D = np.zeros((n, n, n))
        if method == 'fd':
            for k in range(n):
                e = np.zeros(n)
                e[k] = h
                D[k] = (-self.mass_matrix(q + 2 * e) + 8 * self.mass_matrix(q + e)
                        - 8 * self.mass_matrix(q - e) + self.mass_matrix(q - 2 * e)) / (12 * h)
            return D
        if method != 'exact':
            raise ValueError(method)
        for fi in self.mass_frames:
            f = self.frames[fi]
            I = np.diag(f.inertia)
            Jv, Jw = self.jacobians(fi, q)
            dJv, dJw = self.jacobian_derivatives(fi, q)
            for k in range(n):
                D[k] += f.mass * (dJv[k].T @ Jv + Jv.T @ dJv[k])
                D[k] += dJw[k].T @ I @ Jw + Jw.T @ I @ dJw[k]
        return D

    def christoffel(self, q, method='exact'):
        """Gamma[i, j, k] = dM_ij/dq_k - 1/2 dM_jk/dq_i, (nq, nq, nq)."""
        D = self.mass_matrix_derivative(q, method=method)
        n = self.nq
        Gam = np.zeros((n, n, n))
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    Gam[i, j, k] = D[k, i, j] - 0.5 * D[i, j, k]
        return Gam

    def coriolis_matrix(self, q, qd, method='exact'):
        """C[i, k] = sum_j Gamma[i, j, k] qd_j, (nq, nq)."""
        return np.einsum('ijk,j->ik', self.christoffel(q, method), np.asarray(qd, dtype=float))

    def gravity_forces(self, q):
        """dV/dq, (nq,), from exact Jacobians: -sum_i m_i Jv_i^T gravity."""
        out = np.zeros(self.nq)
        for fi in self.mass_frames:
            Jv, _ = self.jacobians(fi, q)
            out -= self.frames[fi].mass * Jv.T @ self.gravity
        return out

    def bias_forces(self, q, qd, method='exact'):
        """C(q, qd) qd + dV/dq, (nq,).  method: 'exact' or 'fd' (for dM/dq)."""
        qd = np.asarray(qd, dtype=float)
        return self.coriolis_matrix(q, qd, method) @ qd + self.gravity_forces(q)

    def forward_dynamics(self, q, qd, tau=None, method='exact'):
        """qdd = M^{-1} (tau - bias), (nq,)."""
        tau = np.zeros(self.nq) if tau is None else np.asarray(tau, dtype=float)
        return np.linalg.solve(self.mass_matrix(q), tau - self.bias_forces(q, qd, method))

    def inverse_dynamics(self, q, qd, qdd, method='exact'):
        """tau = M qdd + bias, (nq,)."""
        return self.mass_matrix(q) @ np.asarray(qdd, dtype=float) + self.bias_forces(q, qd, method)
