"""Free joints: a rigid body's six degrees of freedom, with no attitude singularity.

A free joint moves its body relative to a parent frame (usually the world) by a translation
and a rotation.  It is built from frames the rest of the core already knows::

    parent -> TX(x) -> TY(y) -> TZ(z) -> CONST_SE3(R_ref) -> RX(a) -> RY(b) -> RZ(c) = body

so its configs are the body origin ``(x, y, z)`` [m] in the parent's axes and three
rotation angles ``(a, b, c)`` [rad] about the body's own x, y, z axes, measured from a
*reference attitude* ``R_ref``: the body's rotation in the parent frame is
``R = R_ref Rx(a) Ry(b) Rz(c)``.

The angles are a chart of SO(3) centred on ``R_ref``.  Three angles of any kind are singular
somewhere (here at ``b = +-pi/2``), so the chart is *moved*: before every step of the
integrator the reference is set to the body's current attitude, ``R_ref <- R_ref E(a, b,
c)``, the angles become 0 and the momenta and stored configurations are rewritten in the new
chart (:func:`recenter`).  A step therefore always starts at the centre of its chart, where
the angles' rates are the body's angular velocity and the chart is as far from its
singularity as it can be; a body can tumble through every attitude.

Why this keeps the momenta exact: a step solves the midpoint discrete Euler-Lagrange
equation in the chart centred on its start attitude ``R_k``, so its discrete Lagrangian is
a function of ``R_k^T R_{k+1}`` and of world-frame translations and velocity norms only.  It
is invariant under every rotation and translation of the world, and the step (a symplectic
map in the chart, followed by a change of chart, a cotangent lift) commutes with them; a
symplectic map that commutes with the group and fixes the states at rest conserves the
momentum map exactly (discrete Noether).  Total linear and angular momentum are therefore
conserved to the solver's tolerance, and the energy does not drift.  This is a Lie-group
variational integrator on SO(3) x R^3 in canonical coordinates of the second kind; the
midpoint rule inside the chart is the same step every other joint takes, so the compiled
step, its derivatives and every force element work on free joints unchanged.

Conventions (compare Pinocchio's free-flyer, which uses ``q = (p, quaternion)`` and the
body-frame twist ``v = (R^T pdot, omega_body)``): our velocities are ``(pdot, omega_body)``
-- the origin's velocity in the parent frame and the body angular velocity -- between
steps (the angles' rates equal ``omega_body`` at the chart's centre).
"""
import numpy as np
from numba import njit

from .frame import CONST_SE3, RX, RY, RZ, TX, TY, TZ, Frame


@njit(cache=True)
def xyz_rotation(angles):
    """``Rx(a) Ry(b) Rz(c)`` (3, 3) for ``angles = (a, b, c)`` [rad]: rotations about the
    body's x, then its new y, then its new z axis (real or complex angles)."""
    a, b, c = angles[0], angles[1], angles[2]
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    R = np.empty((3, 3), dtype=angles.dtype)
    R[0, 0], R[0, 1], R[0, 2] = cb * cc, -cb * sc, sb
    R[1, 0], R[1, 1], R[1, 2] = ca * sc + sa * sb * cc, ca * cc - sa * sb * sc, -sa * cb
    R[2, 0], R[2, 1], R[2, 2] = sa * sc - ca * sb * cc, sa * cc + ca * sb * sc, ca * cb
    return R


@njit(cache=True)
def xyz_angles(R):
    """The angles ``(a, b, c)`` (3,) [rad] with ``xyz_rotation(a, b, c) = R``, ``|b| <=
    pi/2`` (the chart's inverse; continuous away from ``b = +-pi/2``)."""
    out = np.empty(3)
    out[1] = np.arctan2(R[0, 2], np.hypot(R[1, 2], R[2, 2]))
    out[0] = np.arctan2(-R[1, 2], R[2, 2])
    out[2] = np.arctan2(-R[0, 1], R[0, 0])
    return out


@njit(cache=True)
def body_rate_matrix(angles):
    """``J`` (3, 3) with ``omega_body = J(a, b, c) (a', b', c')``: the body angular velocity
    [rad/s] of ``xyz_rotation`` for the angles' rates.  ``det J = cos b``; ``J(0) = I``
    (real or complex angles)."""
    b, c = angles[1], angles[2]
    cb, sb, cc, sc = np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    J = np.zeros((3, 3), dtype=angles.dtype)
    J[0, 0], J[0, 1] = cb * cc, sc
    J[1, 0], J[1, 1] = -cb * sc, cc
    J[2, 0], J[2, 2] = sb, 1.0
    return J


@njit(cache=True)
def _rate_matrix_partials(s, v):
    """``D`` (3, 3) with ``D[:, k] = (dJ/ds_k)(s) v``: how ``J(s) v`` changes with the
    angles."""
    b, c = s[1], s[2]
    cb, sb, cc, sc = np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    D = np.zeros((3, 3), dtype=s.dtype)
    D[0, 1], D[1, 1], D[2, 1] = -sb * cc * v[0], sb * sc * v[0], cb * v[0]
    D[0, 2], D[1, 2] = -cb * sc * v[0] + cc * v[1], -cb * cc * v[0] - sc * v[1]
    return D


@njit(cache=True)
def _mm3(X, Y):
    """``X @ Y`` for 3x3 matrices (explicit loops: a BLAS call costs more at this size)."""
    out = np.empty((3, 3), dtype=X.dtype)
    for i in range(3):
        for j in range(3):
            out[i, j] = X[i, 0] * Y[0, j] + X[i, 1] * Y[1, j] + X[i, 2] * Y[2, j]
    return out


@njit(cache=True)
def _solve3(J, B):
    """``J^-1 B`` for a 3x3 J (Cramer's rule: real or complex, no pivoting needed near
    the chart's centre where J ~ I)."""
    d = (J[0, 0] * (J[1, 1] * J[2, 2] - J[1, 2] * J[2, 1])
         - J[0, 1] * (J[1, 0] * J[2, 2] - J[1, 2] * J[2, 0])
         + J[0, 2] * (J[1, 0] * J[2, 1] - J[1, 1] * J[2, 0]))
    inv = np.empty((3, 3), dtype=J.dtype)
    inv[0, 0] = J[1, 1] * J[2, 2] - J[1, 2] * J[2, 1]
    inv[0, 1] = J[0, 2] * J[2, 1] - J[0, 1] * J[2, 2]
    inv[0, 2] = J[0, 1] * J[1, 2] - J[0, 2] * J[1, 1]
    inv[1, 0] = J[1, 2] * J[2, 0] - J[1, 0] * J[2, 2]
    inv[1, 1] = J[0, 0] * J[2, 2] - J[0, 2] * J[2, 0]
    inv[1, 2] = J[0, 2] * J[1, 0] - J[0, 0] * J[1, 2]
    inv[2, 0] = J[1, 0] * J[2, 1] - J[1, 1] * J[2, 0]
    inv[2, 1] = J[0, 1] * J[2, 0] - J[0, 0] * J[2, 1]
    inv[2, 2] = J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0]
    return _mm3(inv / d, B)


# 3x3 matrices as 9-tuples (row major) of real or complex scalars: the chart's partials run
# inside every Newton iteration, and small arrays there cost an allocation each
@njit(cache=True, inline='always')
def _t_rotation(a, b, c):
    """:func:`xyz_rotation` as a 9-tuple."""
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    return (cb * cc, -cb * sc, sb,
            ca * sc + sa * sb * cc, ca * cc - sa * sb * sc, -sa * cb,
            sa * sc - ca * sb * cc, sa * cc + ca * sb * sc, ca * cb)


@njit(cache=True, inline='always')
def _t_rate(b, c):
    """:func:`body_rate_matrix` as a 9-tuple (it does not depend on the first angle)."""
    cb, sb, cc, sc = np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    zero = 0.0 * cb
    return (cb * cc, sc, zero, -cb * sc, cc, zero, sb, zero, zero + 1.0)


@njit(cache=True, inline='always')
def _t_rate_partials(b, c, v0, v1):
    """:func:`_rate_matrix_partials` (column k = dJ/ds_k v) as a 9-tuple."""
    cb, sb, cc, sc = np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    zero = 0.0 * cb
    return (zero, -sb * cc * v0, -cb * sc * v0 + cc * v1,
            zero, sb * sc * v0, -cb * cc * v0 - sc * v1,
            zero, cb * v0, zero)


@njit(cache=True, inline='always')
def _t_mm(X, Y):
    """X Y for 9-tuples."""
    return (X[0] * Y[0] + X[1] * Y[3] + X[2] * Y[6], X[0] * Y[1] + X[1] * Y[4] + X[2] * Y[7],
            X[0] * Y[2] + X[1] * Y[5] + X[2] * Y[8],
            X[3] * Y[0] + X[4] * Y[3] + X[5] * Y[6], X[3] * Y[1] + X[4] * Y[4] + X[5] * Y[7],
            X[3] * Y[2] + X[4] * Y[5] + X[5] * Y[8],
            X[6] * Y[0] + X[7] * Y[3] + X[8] * Y[6], X[6] * Y[1] + X[7] * Y[4] + X[8] * Y[7],
            X[6] * Y[2] + X[7] * Y[5] + X[8] * Y[8])


@njit(cache=True, inline='always')
def _t_transpose(X):
    return (X[0], X[3], X[6], X[1], X[4], X[7], X[2], X[5], X[8])


@njit(cache=True, inline='always')
def _t_combine(x, X, y, Y):
    """x X + y Y for 9-tuples X, Y and scalars x, y."""
    return (x * X[0] + y * Y[0], x * X[1] + y * Y[1], x * X[2] + y * Y[2],
            x * X[3] + y * Y[3], x * X[4] + y * Y[4], x * X[5] + y * Y[5],
            x * X[6] + y * Y[6], x * X[7] + y * Y[7], x * X[8] + y * Y[8])


@njit(cache=True, inline='always')
def _t_inverse(J):
    """J^-1 for a 9-tuple (Cramer's rule, as :func:`_solve3`)."""
    i0 = J[4] * J[8] - J[5] * J[7]
    i1 = J[2] * J[7] - J[1] * J[8]
    i2 = J[1] * J[5] - J[2] * J[4]
    i3 = J[5] * J[6] - J[3] * J[8]
    i4 = J[0] * J[8] - J[2] * J[6]
    i5 = J[2] * J[3] - J[0] * J[5]
    i6 = J[3] * J[7] - J[4] * J[6]
    i7 = J[1] * J[6] - J[0] * J[7]
    i8 = J[0] * J[4] - J[1] * J[3]
    d = J[0] * i0 + J[1] * i3 + J[2] * i6
    return (i0 / d, i1 / d, i2 / d, i3 / d, i4 / d, i5 / d, i6 / d, i7 / d, i8 / d)


@njit(cache=True, inline='always')
def _t_solve(J, B):
    """J^-1 B for 9-tuples."""
    return _t_mm(_t_inverse(J), B)


@njit(cache=True, inline='always')
def _t_matvec(X, v0, v1, v2):
    """X v (3-tuple) for a 9-tuple X."""
    return (X[0] * v0 + X[1] * v1 + X[2] * v2, X[3] * v0 + X[4] * v1 + X[5] * v2,
            X[6] * v0 + X[7] * v1 + X[8] * v2)


@njit(cache=True, inline='always')
def _t_angles(R):
    """:func:`xyz_angles` of a 9-tuple."""
    return (np.arctan2(-R[5], R[8]), np.arctan2(R[2], np.hypot(R[5], R[8])),
            np.arctan2(-R[1], R[0]))


@njit(cache=True, inline='always')
def _t_change_chart(step_T, a0, a1, a2):
    """The angles (3-tuple) in the new chart (centred ``step`` from the old centre; its
    transpose given) of the point with old angles ``a``, and the map of tangent vectors
    there, ``T = J(new)^-1 J(old)`` (9-tuple; a covector maps by ``T^-T``)."""
    n0, n1, n2 = _t_angles(_t_mm(step_T, _t_rotation(a0, a1, a2)))
    return (n0, n1, n2), _t_solve(_t_rate(n1, n2), _t_rate(a1, a2))


@njit(cache=True)
def _centre_partials_t(c0, c1, c2, dt):
    """:func:`centre_partials` as two 9-tuples ``(A, B)`` (real or complex angles)."""
    s0, s1, s2 = 0.5 * c0, 0.5 * c1, 0.5 * c2
    Js = _t_rate(s1, s2)
    dc = _t_solve(_t_rate(c1, c2), _t_transpose(_t_rotation(c0, c1, c2)))
    dc = _t_combine(-1.0, dc, 0.0, dc)                      # d c / d delta
    A = _t_solve(Js, _t_combine(1.0, _t_transpose(_t_rotation(s0, s1, s2)), 0.5,
                                _t_mm(Js, dc)))
    # omega = J(c/2) c/dt in the moving chart; theta_m' = J(theta_m)^-1 omega in the fixed
    d_omega = _t_combine(0.5, _t_mm(_t_rate_partials(s1, s2, c0, c1), dc), 1.0,
                         _t_mm(Js, dc))
    d_omega = _t_combine(1.0 / dt, d_omega, 0.0, d_omega)
    B = _t_solve(Js, _t_combine(1.0, d_omega, -1.0,
                                _t_mm(_t_rate_partials(s1, s2, c0 / dt, c1 / dt), A)))
    return A, B


@njit(cache=True)
def centre_partials(c, dt):
    """How the midpoint of a step moves when its chart's centre turns.

    A step from the chart's centre to angles ``c`` (3,) [rad] in ``dt`` [s] evaluates the
    Lagrangian at the chart point ``c/2`` with rates ``c/dt``.  Turning the start attitude
    (the chart's centre) by a small body-fixed rotation ``delta`` while the end attitude
    stays (the chart moves with the start) moves that midpoint; returns ``[A, B]`` (2, 3, 3)
    (one array: numba returns a tuple of arrays unreliably to Python) with ``d theta_m = A
    delta`` and ``d theta_m' = B delta`` in the unmoved chart.  The moving-chart discrete
    Lagrangian's first slot derivative over the body rotation is then ``dt (A^T L_q + B^T
    L_v)`` (at c = 0: A = I/2, B = -I/dt, the midpoint rule's own).  Real or complex c (the
    Newton Jacobian differentiates it by complex step).
    """
    A, B = _centre_partials_t(c[0], c[1], c[2], dt)
    out = np.empty((2, 3, 3), dtype=c.dtype)
    for i in range(3):
        for j in range(3):
            out[0, i, j] = A[3 * i + j]
            out[1, i, j] = B[3 * i + j]
    return out


@njit(cache=True)
def _centre_partials_derivatives_into(c0, c1, c2, dt, out):
    """``out`` (2, 3, 3, 3) = [dA/dc_k, dB/dc_k] (last index k) by complex step."""
    eps = 1e-20
    h = 1j * eps
    zero = 0.0j
    for k in range(3):
        A, B = _centre_partials_t(c0 + (h if k == 0 else zero), c1 + (h if k == 1 else zero),
                                  c2 + (h if k == 2 else zero), dt)
        for i in range(9):
            out[0, i // 3, i % 3, k] = A[i].imag / eps
            out[1, i // 3, i % 3, k] = B[i].imag / eps


@njit(cache=True)
def centre_partials_derivatives(c, dt):
    """``[dA/dc_k, dB/dc_k]`` (2, 3, 3, 3), last index k, of :func:`centre_partials` (by
    complex step: exact to rounding)."""
    out = np.empty((2, 3, 3, 3))
    _centre_partials_derivatives_into(c[0], c[1], c[2], dt, out)
    return out


@njit(cache=True, inline='always')
def _t_orthonormalize(R):
    """The rotation nearest to the 9-tuple ``R`` that is within rounding of one (two Newton
    steps of the polar decomposition, ``R <- (R + R^-T)/2``): removes the rounding a
    product of many rotations accumulates."""
    for _ in range(2):
        R = _t_combine(0.5, R, 0.5, _t_transpose(_t_inverse(R)))
    return R


class FreeJoint:
    """Six degrees of freedom between ``parent`` and a new body frame (module docstring).

    Parameters
    ----------
    parent : Frame
        The frame the body moves in (the world frame for a loose object or a floating base).
    name : str
        Name of the body frame.
    pose : (4, 4) array, optional
        Initial pose of the body in the parent frame (default: the identity).
    configs : str, optional
        Base name of the configs (default ``name``): ``configs + '_x'``, ``'_y'``, ``'_z'``
        [m] and ``'_rx'``, ``'_ry'``, ``'_rz'`` [rad].
    helpers : str, optional
        Prefix of the five frames between parent and body (default ``name + '_'``):
        ``helpers + 'x'``, ``'y'``, ``'z'``, ``'attitude'`` (the reference), ``'rx'``,
        ``'ry'``.

    Attributes
    ----------
    body : Frame
        The body frame: attach the body's mass, inertia and children here.
    """

    def __init__(self, parent, name, pose=None, configs=None, helpers=None):
        if not isinstance(name, str) or not name:
            raise ValueError('a free joint needs a non-empty name, got %r' % (name,))
        self._name = name
        configs = name if configs is None else configs
        helpers = name + '_' if helpers is None else helpers
        system = parent.system
        system.hold_structure_changes()
        try:
            frame = parent
            for kind, part in ((TX, 'x'), (TY, 'y'), (TZ, 'z')):
                frame = Frame(frame, kind, configs + '_' + part, name=helpers + part)
            self._reference = Frame(frame, CONST_SE3, np.eye(4), name=helpers + 'attitude')
            frame = self._reference
            for kind, part in ((RX, 'rx'), (RY, 'ry')):
                frame = Frame(frame, kind, configs + '_' + part, name=helpers + part)
            self._body = Frame(frame, RZ, configs + '_rz', name=name)
            chain = self._body.parent.parent
            self._rotation = (chain.config, self._body.parent.config, self._body.config)
            t = self._reference.parent
            self._translation = (t.parent.parent.config, t.parent.config, t.config)
            self._helpers = (t.parent.parent, t.parent, t, self._reference, chain,
                             self._body.parent)
            system._add_free_joint(self)
        finally:
            system.resume_structure_changes()
        self._system = system
        if pose is not None:
            self.set_pose(pose)

    def __repr__(self):
        return '<FreeJoint %r>' % (self._name,)

    @property
    def name(self):
        return self._name

    @property
    def body(self):
        """The body frame (read only)."""
        return self._body

    @property
    def helper_frames(self):
        """The frames between the parent and the body, parent side first (read only)."""
        return self._helpers

    @property
    def reference_frame(self):
        """The CONST_SE3 frame holding the chart's reference attitude (read only)."""
        return self._reference

    @property
    def translation_configs(self):
        """The configs ``(x, y, z)`` [m] of the body origin in the parent frame."""
        return self._translation

    @property
    def rotation_configs(self):
        """The chart angles ``(a, b, c)`` [rad] about the body axes from ``R_ref``."""
        return self._rotation

    @property
    def configs(self):
        """All six configs: translation then rotation."""
        return self._translation + self._rotation

    @property
    def reference_attitude(self):
        """``R_ref`` (3, 3): the chart's centre, rotation from the body at zero angles to
        the parent frame."""
        return self._reference.transform_value[:3, :3]

    @property
    def position(self):
        """Body origin (3,) [m] in the parent frame at the System's configuration."""
        return np.array([c.q for c in self._translation])

    @property
    def rotation(self):
        """Body rotation (3, 3) in the parent frame at the System's configuration."""
        return self.reference_attitude @ xyz_rotation(np.array([c.q for c in self._rotation]))

    @property
    def pose(self):
        """Body pose (4, 4) in the parent frame at the System's configuration."""
        g = np.eye(4)
        g[:3, :3] = self.rotation
        g[:3, 3] = self.position
        return g

    def pose_at(self, q):
        """Body pose (4, 4) in the parent frame at configuration ``q`` (nQ,) of the
        System (in the current charts)."""
        idx = [c.index for c in self.configs]
        g = np.eye(4)
        g[:3, :3] = self.reference_attitude @ xyz_rotation(np.asarray(q, float)[idx[3:]])
        g[:3, 3] = np.asarray(q, float)[idx[:3]]
        return g

    def body_twist(self, q, dq):
        """The body's twist at configuration ``q`` and rates ``dq`` (nQ,) of the System:
        ``(v, w)``, both (3,) in the body's own axes: the origin's velocity [m/s] and the
        angular velocity [rad/s] (a ROS ``Twist`` in the body frame, as
        ``nav_msgs/Odometry`` carries it)."""
        idx = [c.index for c in self.configs]
        q = np.asarray(q, float)
        dq = np.asarray(dq, float)
        angles = q[idx[3:]]
        R = self.reference_attitude @ xyz_rotation(angles)
        return R.T @ dq[idx[:3]], body_rate_matrix(angles) @ dq[idx[3:]]

    def set_pose(self, pose):
        """Put the body at ``pose`` (4, 4) in the parent frame: the reference attitude
        becomes its rotation and the chart angles 0 (sets the System's configs; an
        integrator must be initialised afterwards)."""
        g = np.asarray(pose, dtype=float)
        if g.shape != (4, 4):
            raise ValueError('free joint %r: a pose is a 4x4 matrix, got shape %s'
                             % (self._name, g.shape))
        ref = np.eye(4)
        ref[:3, :3] = g[:3, :3]
        self._reference.transform_value = ref      # checks it is a rotation
        for c, value in zip(self._translation, g[:3, 3]):
            c.q = float(value)
        for c in self._rotation:
            c.q = 0.0


class FreeJointCharts:
    """The compiled index table of a System's free joints, and the change of chart.

    Attributes: ``reference`` (n,) frame index of each joint's reference frame, ``rotation``
    (n, 3) and ``translation`` (n, 3) config indices.
    """

    def __init__(self, joints):
        self.joints = tuple(joints)
        self.reference = np.array([j.reference_frame._index for j in joints], dtype=np.int64)
        self.rotation = np.array([[c._index for c in j.rotation_configs] for j in joints],
                                 dtype=np.int64).reshape(-1, 3)
        self.translation = np.array([[c._index for c in j.translation_configs]
                                     for j in joints], dtype=np.int64).reshape(-1, 3)
        self._frames = [(j.reference_frame, int(i)) for j, i in zip(joints, self.reference)]
        self._invalidate = joints[0].body.system._invalidate_results if joints else None

    def __len__(self):
        return len(self.joints)

    def attitudes(self, model):
        """Copy of the reference attitudes (n, 3, 3)."""
        return model.fixedR[self.reference].copy()

    def set_attitudes(self, attitudes):
        """Put back reference attitudes (n, 3, 3) from :meth:`attitudes` (e.g. to reset a
        simulation or undo a failed step): a change of the frames' constants, which the
        System's Model and every compiled stepper pick up (parameter version)."""
        for k, joint in enumerate(self.joints):
            joint.reference_frame._se3[:3, :3] = attitudes[k]
        self.joints[0].body.system._geometry_changed()

    def express(self, attitudes, targets, q, p=None, v=None):
        """Rewrite in place a configuration ``q`` (nq,), a momentum or generalized force
        ``p`` (nd,) and a velocity ``v`` (nq,) given in the charts centred on ``attitudes``
        (n, 3, 3) in the charts centred on ``targets`` (n, 3, 3) (e.g. a plant's state in
        the charts of a controller's goal attitudes, or ``self.attitudes(model)`` for the
        current ones).  The translation entries do not depend on the chart; the angle rates
        map by ``T = J(new)^-1 J(old)`` (J: :func:`body_rate_matrix`, the body angular
        velocity is the same in both), the momentum entries by ``T^-T``."""
        for k in range(len(self.joints)):
            rot = self.rotation[k]
            old = q[rot].copy()
            R = _mm3(_mm3(np.ascontiguousarray(targets[k].T), attitudes[k]),
                     xyz_rotation(old))
            new = xyz_angles(R)
            if p is not None or v is not None:
                T = _solve3(body_rate_matrix(new), body_rate_matrix(old))
            if p is not None:
                p[rot] = np.linalg.solve(T.T, p[rot])
            if v is not None:
                v[rot] = T @ v[rot]
            q[rot] = new

    def recenter(self, model, q2, q1, history, p2, p1, impulse, va=None, va_at_node=True,
                 fixedR=None):
        """Move every chart's centre to the attitude at ``q2`` (nq,) (:func:`recenter_state`
        on the integrator's arrays, in place): the reference attitudes (the frames,
        ``model.fixedR`` and the packed copy ``fixedR`` (nf, 3, 3) if given), q2's angles
        (0), q1 (nq,) and the ``history`` configurations (k, nq) in the new charts, the
        momenta ``p2``, ``impulse`` (at q2) and ``p1`` (at q1) (nd,), and the energy
        anchor's velocity ``va`` (nd,) (at q2 if ``va_at_node``, else at the last step's
        midpoint)."""
        if va is None:
            va = np.zeros(0)
        packed = model.fixedR if fixedR is None else fixedR
        if recenter_state(self.rotation, self.reference, q2, q1, history, p2, p1, impulse,
                          va, va_at_node, model.fixedR, packed):
            self.sync_frames(model)

    def sync_frames(self, model):
        """After the Model's reference attitudes moved (``model.fixedR``): the reference
        frames take them, and the System's cached results (computed in the old charts) are
        dropped."""
        fixedR = model.fixedR
        for frame, i in self._frames:
            frame._se3[:3, :3] = fixedR[i]
        self._invalidate()


@njit(cache=True)
def recenter_state(free, reference, q2, q1, history, p2, p1, impulse, va, va_at_node,
                   fixedR, packed):
    """The change of chart of :meth:`FreeJointCharts.recenter` on arrays (in place).

    ``free`` (n, 3) rotation configs and ``reference`` (n,) reference frames of the free
    joints.  With ``omega = J(theta) theta' = J(theta_new) theta_new'`` a tangent vector
    maps by ``T = J(theta_new)^-1 J(theta)`` and a momentum by ``T^-T`` (the cotangent lift
    of the change of chart); configurations map through the rotations themselves.  Returns
    whether any chart moved.
    """
    moved = False
    for k in range(free.shape[0]):
        rot = free[k]
        r0, r1, r2 = rot[0], rot[1], rot[2]
        c0, c1, c2 = q2[r0], q2[r1], q2[r2]
        if c0 == 0.0 and c1 == 0.0 and c2 == 0.0:
            continue                # already at the chart's centre
        moved = True
        b0, b1, b2 = q1[r0], q1[r1], q1[r2]
        step = _t_rotation(c0, c1, c2)
        step_T = _t_transpose(step)
        # momenta: at q2 (p2 and the impulse; the new angles are 0, J(0) = I) and at q1
        _, Tc = _t_change_chart(step_T, c0, c1, c2)
        _, T1 = _t_change_chart(step_T, b0, b1, b2)
        for vec, T in ((p2, Tc), (impulse, Tc), (p1, T1)):
            n0, n1, n2 = _t_matvec(_t_inverse(_t_transpose(T)), vec[r0], vec[r1], vec[r2])
            vec[r0], vec[r1], vec[r2] = n0, n1, n2
        if va.shape[0]:
            if va_at_node:
                Ta = Tc
            else:
                _, Ta = _t_change_chart(step_T, 0.5 * (b0 + c0), 0.5 * (b1 + c1),
                                        0.5 * (b2 + c2))
            n0, n1, n2 = _t_matvec(Ta, va[r0], va[r1], va[r2])
            va[r0], va[r1], va[r2] = n0, n1, n2
        new, _ = _t_change_chart(step_T, b0, b1, b2)
        q1[r0], q1[r1], q1[r2] = new[0], new[1], new[2]
        for row in range(history.shape[0]):
            new, _ = _t_change_chart(step_T, history[row, r0], history[row, r1],
                                     history[row, r2])
            history[row, r0], history[row, r1], history[row, r2] = new[0], new[1], new[2]
        old = fixedR[reference[k]]
        R = _t_orthonormalize(_t_mm((old[0, 0], old[0, 1], old[0, 2], old[1, 0], old[1, 1],
                                     old[1, 2], old[2, 0], old[2, 1], old[2, 2]), step))
        for i in range(3):
            for j in range(3):
                fixedR[reference[k], i, j] = R[3 * i + j]
                packed[reference[k], i, j] = R[3 * i + j]
        q2[r0], q2[r1], q2[r2] = 0.0, 0.0, 0.0
    return moved


@njit(cache=True)
def chart_first_slot_change(free, dlt, dt, Lq, Lv, out):
    """Add to ``out`` (nd,) the change of the DEL's first-slot term on every free joint's
    rotation rows when the chart moves with the step's start: ``D1 = dt (A^T L_q + B^T
    L_v)`` (:func:`centre_partials`) in place of the midpoint rule's ``dt (L_q/2 - L_v/dt)``.
    ``free`` (nfree, 3): rotation configs; ``dlt`` (nq,): the step's increment q2 - q1;
    ``Lq``, ``Lv``: the conservative partials at the midpoint.  Applied to the residual
    and to p2 (= p1 + D1 + D2 + f-) alike."""
    for k in range(free.shape[0]):
        A, B = _centre_partials_t(dlt[free[k, 0]], dlt[free[k, 1]], dlt[free[k, 2]], dt)
        for j in range(3):
            a = free[k, j]
            d1 = 0.0
            for i in range(3):
                b = free[k, i]
                d1 += (A[3 * i + j] - (0.5 if i == j else 0.0)) * Lq[b] + (
                    B[3 * i + j] + (1.0 / dt if i == j else 0.0)) * Lv[b]
            out[a] += dt * d1


#: a step's first Newton matrix reuses the chart partials' derivatives (cache of
#: :func:`chart_jacobian_change`) taken at an increment within this of its own [rad]
CHART_REUSE = 1e-4


@njit(cache=True)
def chart_jacobian_change(free, dlt, dt, Lq, Lv, Lqq, Lvq, M, J, cache, fresh):
    """Add to the Newton matrix ``J`` (nd, nd) = d r / d q2 the change of the rotation
    rows of :func:`chart_first_slot_change`.  ``Lqq``, ``Lvq``, ``M`` are the midpoint
    second partials (``Lvq[i, j] = d L_v_i / d q_j``).

    ``cache`` (nfree, 58) holds per free joint the increment (3) and dt it was taken at and
    the partials of A and B (:func:`centre_partials_derivatives`, 27 each).  The first
    Newton matrix of a step (``fresh``) recomputes them (by complex step, the costliest
    part of the free joint's Newton matrix) unless they were taken at the same dt and an
    increment within :data:`CHART_REUSE` of this one: a smooth motion's increments change
    by about (angular acceleration) dt^2 a step, so they are taken again every few steps.
    Later iterations of a step reuse them too.  The term they enter is about
    |omega| dt of the matrix, so an increment off by CHART_REUSE changes the matrix by
    ~1e-4 |omega| dt relative: Newton still converges (to the same root: the residual
    itself is always exact).  A cache of zeros (dt 0) is empty."""
    nd = J.shape[0]
    for k in range(free.shape[0]):
        c0, c1, c2 = dlt[free[k, 0]], dlt[free[k, 1]], dlt[free[k, 2]]
        A, B = _centre_partials_t(c0, c1, c2, dt)
        entry = cache[k]
        if fresh and not (entry[3] == dt and abs(entry[0] - c0) <= CHART_REUSE
                          and abs(entry[1] - c1) <= CHART_REUSE
                          and abs(entry[2] - c2) <= CHART_REUSE):
            _centre_partials_derivatives_into(c0, c1, c2, dt,
                                              entry[4:].reshape((2, 3, 3, 3)))
            entry[0], entry[1], entry[2], entry[3] = c0, c1, c2, dt
        dAB = entry[4:].reshape((2, 3, 3, 3))
        dA, dB = dAB[0], dAB[1]
        for j in range(3):
            a = free[k, j]
            for col in range(nd):
                acc = 0.0
                for i in range(3):
                    b = free[k, i]
                    # d L_q_b / d q2_col and d L_v_b / d q2_col at the midpoint
                    dLc = 0.5 * Lqq[b, col] + Lvq[col, b] / dt
                    dLv = 0.5 * Lvq[b, col] + M[b, col] / dt
                    acc += (A[3 * i + j] - (0.5 if i == j else 0.0)) * dLc + (
                        B[3 * i + j] + (1.0 / dt if i == j else 0.0)) * dLv
                J[a, col] += dt * acc
            for m in range(3):
                acc = 0.0
                for i in range(3):
                    b = free[k, i]
                    acc += dA[i, j, m] * Lq[b] + dB[i, j, m] * Lv[b]
                J[a, free[k, m]] += dt * acc


# ------------------------------------------------------------------ a step's derivatives
# (NumPy, not the hot path: complex steps through the compiled chart functions)
def _angles_any(R):
    """:func:`xyz_angles` for real or complex R (complex step).  arctan of the ratio, put
    on arctan2's branch by the real parts' signs (a constant shift: the derivative carried
    by the imaginary part is the same), so |a| and |c| may exceed pi/2."""
    a = np.arctan(-R[1, 2] / R[2, 2])
    if R[2, 2].real < 0.0:
        a = a + (np.pi if a.real <= 0.0 else -np.pi)
    c = np.arctan(-R[0, 1] / R[0, 0])
    if R[0, 0].real < 0.0:
        c = c + (np.pi if c.real <= 0.0 else -np.pi)
    return np.array([a, np.arcsin(R[0, 2]), c])


def start_turn_partials(c, eps=1e-20):
    """How a step's increment ``c`` (3,) [rad] (the end's angles in the chart centred on the
    step's start) and the body rates it stands for change as the start turns to
    ``xyz_rotation(s)`` (the end fixed): ``(dc, D)`` (3, 3) with ``dc[:, k] = d c / d s_k``
    (complex step: exact to rounding; ``-I`` at c = 0) and ``D[:, k] = (dJ/ds_k)(0) c``
    for J :func:`body_rate_matrix` (dJ/da = 0, dJ/db = e2 e0^T, dJ/dc = e0 e1^T - e1
    e0^T at the centre).  A row ``g . c`` over the step's rotation whose ``g`` maps body
    rates (a slip Jacobian's rotation columns, J(0) = I) then changes by ``g (dc - D)``
    besides g's own change."""
    c = np.asarray(c, dtype=float)
    end = xyz_rotation(c.astype(complex))
    dc = np.zeros((3, 3))
    for k in range(3):
        turn = np.zeros(3, dtype=complex)
        turn[k] = 1j * eps
        dc[:, k] = _angles_any(xyz_rotation(turn).T @ end).imag / eps
    D = np.zeros((3, 3))
    D[2, 1] = c[0]
    D[0, 2], D[1, 2] = c[1], -c[0]
    return dc, D


def _moving_midpoint(start, end, dt):
    """Midpoint angles and rates (3,), (3,), in a fixed chart, of the step from angles
    ``start`` to ``end`` of that chart when the step's own chart is centred on its start
    (real or complex arguments)."""
    E1 = xyz_rotation(start)
    c = _angles_any(_mm3(E1.T.copy(), xyz_rotation(end)))
    mid = _angles_any(_mm3(E1, xyz_rotation(0.5 * c)))
    omega = _mm3(body_rate_matrix(0.5 * c), (c / dt).reshape(3, 1).copy())
    return mid, _solve3(body_rate_matrix(mid), omega)[:, 0]


def _start_partials(start, end, dt, eps=1e-20):
    """d(midpoint angles, rates)/d(start) (3, 3) each, by complex step."""
    A = np.empty((3, 3))
    B = np.empty((3, 3))
    for k in range(3):
        s = start.astype(complex)
        s[k] += 1j * eps
        mid, rates = _moving_midpoint(s, end.astype(complex), dt)
        A[:, k], B[:, k] = mid.imag / eps, rates.imag / eps
    return A, B


def start_second_partials(c, dt, h=1e-3):
    """Second derivatives of the moving-chart midpoint over the start angles at the chart's
    centre: ``(d2 theta_m, d2 theta_m')`` (3, 3, 3), indexed [i, j, k] = d2 m_i / d s_j d s_k
    for the step to angles ``c`` (3,) in ``dt`` [s]: fourth-order central differences
    (h^4 truncation) of exact first derivatives (complex steps), ~1e-13 relative, so that
    differences of a step's first derivatives (its second derivatives) stay accurate."""
    c = np.asarray(c, dtype=float)
    d2m = np.zeros((3, 3, 3))
    d2v = np.zeros((3, 3, 3))
    for k in range(3):
        for offset, weight in ((-2.0, 1.0), (-1.0, -8.0), (1.0, 8.0), (2.0, -1.0)):
            e = np.zeros(3)
            e[k] = offset * h
            A, B = _start_partials(e, c, dt)
            d2m[:, :, k] += weight * A / (12.0 * h)
            d2v[:, :, k] += weight * B / (12.0 * h)
    return d2m, d2v


def _expressed(A, angles, momentum):
    """Angles and momentum (3,) of a point with ``angles`` and ``momentum`` in a chart
    whose centre is turned by ``A`` (3, 3) from the new one's (the attitude A Rxyz(angles));
    complex-safe (A complex too)."""
    new = _angles_any(_mm3(A, xyz_rotation(angles)))
    T = _solve3(body_rate_matrix(new), body_rate_matrix(angles))
    return new, _solve3(T.T.copy(), momentum.reshape(3, 1).copy())[:, 0]


def express_jacobian(A, angles, momentum, eps=1e-20):
    """:meth:`FreeJointCharts.express` for one joint, linearised: a point at ``angles``
    (3,) [rad] with momentum ``momentum`` (3,) (its rotation entries) in a chart whose
    centre is ``A`` (3, 3) in the new chart's; returns ``(Tq, Tp, Tpq)`` (3, 3) with ``d
    theta_new = Tq d theta``, ``d p_new = Tp d p + Tpq d theta`` (complex step: exact to
    rounding)."""
    A = np.asarray(A, dtype=complex)
    angles = np.asarray(angles, dtype=float)
    momentum = np.asarray(momentum, dtype=float).astype(complex)
    Tq = np.empty((3, 3))
    Tpq = np.empty((3, 3))
    for k in range(3):
        a = angles.astype(complex)
        a[k] += 1j * eps
        new, p = _expressed(A, a, momentum)
        Tq[:, k], Tpq[:, k] = new.imag / eps, p.imag / eps
    # d p_new / d p = T^-T = J(new)^T J(angles)^-T
    new = _expressed(A, angles.astype(complex), momentum)[0].real.copy()
    Tp = body_rate_matrix(new).T @ np.linalg.inv(body_rate_matrix(angles)).T
    return Tq, Tp, Tpq


def express_second_derivative(A, angles, momentum, z_angles, z_momentum, h=1e-3):
    """Second derivative of :meth:`FreeJointCharts.express` for one joint, contracted with
    an adjoint: the Hessian (6, 6) of ``z_angles . theta_new + z_momentum . p_new`` over
    ``(theta, p)`` (the point's angles and momentum, (3,) each, in a chart whose centre is
    ``A`` (3, 3) in the new chart's, as :func:`express_jacobian`).  The momentum enters
    linearly, so its block is zero and its cross terms are the angles' derivatives of the
    momentum rows; the angle derivatives are fourth-order central differences (step
    ``h`` [rad]) of :func:`express_jacobian`, itself exact: about 1e-11 relative."""
    angles = np.asarray(angles, dtype=float)
    z_angles = np.asarray(z_angles, dtype=float)
    z_momentum = np.asarray(z_momentum, dtype=float)

    def gradient(a):
        Tq, Tp, Tpq = express_jacobian(A, a, momentum)
        return np.concatenate([z_angles @ Tq + z_momentum @ Tpq, z_momentum @ Tp])

    D = np.zeros((6, 3))
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        D[:, k] = (8.0 * (gradient(angles + e) - gradient(angles - e))
                   - (gradient(angles + 2 * e) - gradient(angles - 2 * e))) / (12.0 * h)
    H = np.zeros((6, 6))
    H[:3, :3] = 0.5 * (D[:3] + D[:3].T)
    H[3:, :3] = D[3:]
    H[:3, 3:] = D[3:].T
    return H


def recentre_jacobian(angles, momentum, eps=1e-20):
    """The change of chart :meth:`MidpointVI.recenter` makes, linearised: for a point at
    ``angles`` (3,) [rad] with momentum ``momentum`` (3,) (its rotation entries), returns
    ``(Tq, Tp, Tpq)`` (3, 3) with ``d theta_new = Tq d theta``, ``d p_new = Tp d p + Tpq d
    theta`` in the chart centred on the point (:func:`express_jacobian` with the new
    centre at ``angles``)."""
    angles = np.asarray(angles, dtype=float)
    return express_jacobian(xyz_rotation(np.ascontiguousarray(angles)).T, angles, momentum,
                            eps)
