"""Closed-form reference dynamics of the 3-DOF planar mobile manipulator.

Source: seed 002 ("Implementing Lagrangian Mechanics Three Ways"), the
"Method 1: Manual differentiation" code, re-typed by hand here in plain numpy.
This module shares no code with ``ros_vi``.

Generalized coordinates (in this order)
---------------------------------------
    q = [x1, theta2, theta3]

* ``x1``     -- base slider position along the world +x axis.
* ``theta2`` -- angle of link 2 (first arm link) measured from the world +x
  axis, counter-clockwise, i.e. a right-handed rotation about world +z.
* ``theta3`` -- angle of link 3 (second arm link) RELATIVE to link 2 (same
  sense); link 3's absolute angle is ``theta2 + theta3``.

Parameters (seed values)
------------------------
    M1 = 3, M2 = 2, M3 = 1          link masses
    LX = LY = 0.1                   shoulder offset from the base CoM
    L2 = 1, L3 = 0.5                arm link lengths
    G  = 9.8                        gravitational acceleration
    I2 = M2 * L2**2 / 12            link-2 inertia about ITS CoM (slender rod)
    I3 = M3 * L3**2 / 12            link-3 inertia about ITS CoM (slender rod)
    base (link 1) rotational inertia: 0 (it never rotates; seed G1 = diag(M1, M1, 0))

Geometry (motion in the world x-y plane, y is "up")
---------------------------------------------------
Writing c2 = cos(theta2), s2 = sin(theta2), c23 = cos(theta2+theta3), ...

* Base CoM (link 1):   p1 = (x1, 0)                      orientation 0
* Shoulder joint:      (x1 + LX, LY)
* Link-2 CoM:          p2 = (x1 + LX + L2/2 c2,  LY + L2/2 s2)        angle theta2
* Elbow joint:         (x1 + LX + L2 c2,  LY + L2 s2)
* Link-3 CoM:          p3 = elbow + (L3/2 c23, L3/2 s23)              angle theta2+theta3

Gravity acts along world -y: potential energy V = G * (M1 y1 + M2 y2 + M3 y3)
(seed: "P = g sum_i m_i y_i").  Equivalently a gravity acceleration vector
(0, -G, 0) in 3-D with the plane being world x-y and rotations about +z.

Kinetic energy:  T = sum_i 1/2 m_i |v_i|^2 + 1/2 I_i (d/dt angle_i)^2, with
link angles 0, theta2, theta2 + theta3 (so I3 couples theta2 and theta3).

Seed-text ambiguities (resolved by following the seed's CODE)
-------------------------------------------------------------
* The prose pose formulas call the arm lengths l1, l2 while the code calls
  them L2, L3; the code values (L2=1, L3=0.5) are used here.
* The prose eq. (7) writes Gamma_ijk = dM_ik/dq_j - 1/2 dM_ij/dq_k, which as
  written (with c_i = sum_jk Gamma_ijk qd_j qd_k) is NOT the correct Coriolis
  term.  The seed's code actually computes
      Gamma_ijk = dM_ij/dq_k - 1/2 dM_jk/dq_i,
      C_ik      = sum_j Gamma_ijk qd_j,
  which is the standard (correct) form; that is what is implemented here.
  Note C(q, qd) itself is not unique -- only C(q, qd) @ qd is physical.

What the dynamics must satisfy
------------------------------
    M(q) @ qdd + C(q, qdot) @ qdot + g(q) = tau      (see comment below)
"""
# The equations of motion (seed eq. 4), with tau the generalized forces
# (a force on x1, torques on theta2 and theta3):
#
#     M(q) @ qdd + C(q, qdot) @ qdot + g(q) = tau
#
# where g(q) = dV/dq is the gravity vector (NOT the gravity acceleration).
# Hence forward dynamics: qdd = solve(M(q), tau - C(q, qdot) @ qdot - g(q)).
# Also T = 1/2 qdot^T M(q) qdot, and M is symmetric positive definite.

import numpy as np

M1 = 3.0
M2 = 2.0
M3 = 1.0
LX = 0.1
LY = 0.1
L2 = 1.0
L3 = 0.5
G = 9.8
I2 = M2 * L2 ** 2 / 12.0
I3 = M3 * L3 ** 2 / 12.0

CONFIG_NAMES = ('x1', 'theta2', 'theta3')
GRAVITY = (0.0, -G, 0.0)


def mass_matrix(q):
    """Mass matrix M(q), shape (3, 3)."""
    x1, t2, t3 = q
    t23 = t2 + t3
    m11 = M1 + M2 + M3
    m12 = -(0.5 * M2 + M3) * L2 * np.sin(t2) - 0.5 * M3 * L3 * np.sin(t23)
    m13 = -0.5 * M3 * L3 * np.sin(t23)
    m22 = ((0.25 * M2 + M3) * L2 ** 2 + 0.25 * M3 * L3 ** 2
           + M3 * L2 * L3 * np.cos(t3) + I2 + I3)
    m23 = 0.5 * M3 * L3 * (0.5 * L3 + L2 * np.cos(t3)) + I3
    m33 = 0.25 * M3 * L3 ** 2 + I3
    return np.array([[m11, m12, m13],
                     [m12, m22, m23],
                     [m13, m23, m33]])


def mass_matrix_derivative(q):
    """dM/dq as array D with D[k, i, j] = dM_ij / dq_k, shape (3, 3, 3)."""
    x1, t2, t3 = q
    t23 = t2 + t3
    D = np.zeros((3, 3, 3))
    # k = 0 (x1): M does not depend on x1.
    # k = 1 (theta2)
    d12 = -(0.5 * M2 + M3) * L2 * np.cos(t2) - 0.5 * M3 * L3 * np.cos(t23)
    d13 = -0.5 * M3 * L3 * np.cos(t23)
    D[1] = [[0.0, d12, d13],
            [d12, 0.0, 0.0],
            [d13, 0.0, 0.0]]
    # k = 2 (theta3)
    e12 = -0.5 * M3 * L3 * np.cos(t23)
    e13 = -0.5 * M3 * L3 * np.cos(t23)
    e22 = -M3 * L2 * L3 * np.sin(t3)
    e23 = -0.5 * M3 * L2 * L3 * np.sin(t3)
    D[2] = [[0.0, e12, e13],
            [e12, e22, e23],
            [e13, e23, 0.0]]
    return D


def christoffel(q):
    """Christoffel symbols (first kind), shape (3, 3, 3):

        Gamma[i, j, k] = dM_ij/dq_k - 1/2 dM_jk/dq_i

    (the seed code's convention), so that c_i = sum_jk Gamma[i,j,k] qd_j qd_k.
    """
    D = mass_matrix_derivative(q)          # D[k, i, j] = dM_ij/dq_k
    n = 3
    Gam = np.zeros((n, n, n))
    for i in range(n):
        for j in range(n):
            for k in range(n):
                Gam[i, j, k] = D[k, i, j] - 0.5 * D[i, j, k]
    return Gam


def coriolis_matrix(q, qdot):
    """Coriolis matrix C(q, qdot), shape (3, 3): C[i, k] = sum_j Gamma[i,j,k] qdot_j."""
    Gam = christoffel(q)
    qdot = np.asarray(qdot, dtype=float)
    return np.einsum('ijk,j->ik', Gam, qdot)


def gravity_vector(q):
    """g(q) = dV/dq, shape (3,), with V = G (M1 y1 + M2 y2 + M3 y3)."""
    x1, t2, t3 = q
    t23 = t2 + t3
    return np.array([
        0.0,
        (0.5 * M2 + M3) * G * L2 * np.cos(t2) + 0.5 * M3 * L3 * G * np.cos(t23),
        0.5 * M3 * L3 * G * np.cos(t23),
    ])


def com_positions(q):
    """CoM positions (x, y) of links 1, 2, 3 as a (3, 2) array."""
    x1, t2, t3 = q
    t23 = t2 + t3
    p1 = np.array([x1, 0.0])
    p2 = p1 + np.array([LX + 0.5 * L2 * np.cos(t2), LY + 0.5 * L2 * np.sin(t2)])
    p3 = p2 + np.array([0.5 * L2 * np.cos(t2) + 0.5 * L3 * np.cos(t23),
                        0.5 * L2 * np.sin(t2) + 0.5 * L3 * np.sin(t23)])
    return np.array([p1, p2, p3])


def potential_energy(q):
    """V(q) = G * sum_i m_i y_i (gravity along -y)."""
    p = com_positions(q)
    return G * (M1 * p[0, 1] + M2 * p[1, 1] + M3 * p[2, 1])


def kinetic_energy(q, qdot):
    """T = 1/2 qdot^T M(q) qdot."""
    qdot = np.asarray(qdot, dtype=float)
    return 0.5 * qdot @ mass_matrix(q) @ qdot


def bias_forces(q, qdot):
    """C(q, qdot) @ qdot + g(q), shape (3,)."""
    return coriolis_matrix(q, qdot) @ np.asarray(qdot, dtype=float) + gravity_vector(q)


def forward_dynamics(q, qdot, tau=None):
    """qdd = M^{-1} (tau - C qdot - g), shape (3,)."""
    tau = np.zeros(3) if tau is None else np.asarray(tau, dtype=float)
    return np.linalg.solve(mass_matrix(q), tau - bias_forces(q, qdot))


def frames_description():
    """Plain-data trep frame tree reproducing this robot in 3-D.

    Format (mirrors trep's ``Frame.import_frames``): a list whose items are
    frame tuples ``(kind, param, opts)``; a list placed IMMEDIATELY after a
    tuple is that frame's children (same format, recursively).

    * ``kind``  -- one of 'tx', 'ty', 'tz' (translate along the PARENT's
      x/y/z axis), 'rx', 'ry', 'rz' (right-handed rotation about the PARENT's
      x/y/z axis), or 'const' (param is a fixed 4x4 homogeneous matrix).
    * ``param`` -- a float (fixed offset/angle) or a str (name of the
      configuration variable driving the transform).
    * ``opts``  -- dict with optional 'name' (str) and 'mass' (a float, or
      ``[m, Ixx, Iyy, Izz]``: mass at the frame origin, principal inertia about
      the frame origin along the frame's own axes), trep convention.

    Use with gravity acceleration ``GRAVITY = (0, -G, 0)`` and configuration
    order ``CONFIG_NAMES = ('x1', 'theta2', 'theta3')``.  The robot lives in
    the world x-y plane; all rotations are about z.

    Frame tree (positions in world coordinates):

        base     tx 'x1'         origin (x1, 0, 0)        mass M1, no inertia
          tx LX                  (x1+LX, 0, 0)
            ty LY                shoulder (x1+LX, LY, 0)
              rz 'theta2'        link-2 frame, x axis along link 2
                link2  tx L2/2   link-2 CoM, mass [M2, 0, I2, I2]
                tx L2            elbow
                  rz 'theta3'    link-3 frame
                    link3 tx L3/2   link-3 CoM, mass [M3, 0, I3, I3]

    The links are slender rods along their local x axis, so Ixx = 0 and
    Iyy = Izz = I; only Izz affects the planar dynamics.
    """
    return [
        ('tx', 'x1', {'name': 'base', 'mass': [M1, 0.0, 0.0, 0.0]}), [
            ('tx', LX, {}), [
                ('ty', LY, {'name': 'shoulder'}), [
                    ('rz', 'theta2', {'name': 'theta2'}), [
                        ('tx', 0.5 * L2, {'name': 'link2', 'mass': [M2, 0.0, I2, I2]}),
                        ('tx', L2, {'name': 'elbow'}), [
                            ('rz', 'theta3', {'name': 'theta3'}), [
                                ('tx', 0.5 * L3, {'name': 'link3',
                                                  'mass': [M3, 0.0, I3, I3]}),
                            ],
                        ],
                    ],
                ],
            ],
        ],
    ]
