"""Floating-base robots against Pinocchio's free-flyer model: the mass matrix, the bias forces
(Coriolis + gravity), the kinetic energy and every link's pose of the shipped quadruped (12
joints) and humanoid (31 joints), imported with ``floating_base=True``, at random states.

The two models use different velocities for the base.  Ours (``ros_vi.mechanics.free``)
are the rates of the configs: ``v_o = (xdot, sdot, qdot)`` with ``xdot`` the base origin's
velocity in the world frame and ``sdot`` the rates of the chart angles ``s = (a, b, c)``
(base rotation ``R = R_ref Rx(a) Ry(b) Rz(c)``).  Pinocchio's are the base twist in base
axes: ``v_p = (R^T xdot, omega_body, qdot)`` with ``omega_body = J(s) sdot``.  So

    v_p = T v_o,   T = blockdiag(R^T, J(s), I)   (rows: Pinocchio's v, columns: our configs)

and, the generalised forces being dual (``tau_o . v_o = tau_p . v_p``: ``tau_o = T^T
tau_p``), Pinocchio's equations ``M_p vdot_p + b_p = tau_p`` with ``vdot_p = T vdot_o + Tdot
v_o`` give ours:

    M_o = T^T M_p T,     b_o = T^T (b_p + M_p Tdot v_o),
    Tdot v_o = (d/dt(R^T) xdot, Jdot sdot, 0) = (-omega_body x (R^T xdot), Jdot sdot, 0).

``J`` and ``Jdot sdot`` are written here from the definition of the chart (not taken from
ros_vi): ``R^T Rdot = [omega]`` gives ``omega = Rz(c)^T Ry(b)^T e_x a' + Rz(c)^T e_y b' +
e_z c'``, and ``Jdot sdot`` is the derivative of ``J(s) sdot`` along ``sdot``, by complex
step (exact to rounding).  At the chart's centre (s = 0, where every integrator step starts)
J = I but Jdot is not 0: the term is checked to matter there.
"""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ros_vi.mechanics.free import body_rate_matrix, xyz_rotation
from ros_vi.urdf import import_urdf

pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) is the oracle: '
                          'pip install -r requirements.txt')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROBOTS = ('quadruped', 'humanoid')
TOL = 1e-12          # relative to the largest entry of the reference
POSE_TOL = 1e-13     # [m] and rotation entries (positions within ~3 m of the origin)


def _text(name):
    with open(os.path.join(ROOT, 'urdf', name + '.urdf'), encoding='utf-8') as fh:
        return fh.read()


def _rel(ours, ref):
    ours, ref = np.asarray(ours, float), np.asarray(ref, float)
    return float(np.abs(ours - ref).max() / np.abs(ref).max())


# ---------------------------------------------------------------------- the chart
def _axis_rotation(axis, angle):
    """Rotation (3, 3) by ``angle`` (real or complex) about the coordinate axis 0, 1 or 2."""
    c, s = np.cos(angle), np.sin(angle)
    i, j = (axis + 1) % 3, (axis + 2) % 3           # cyclic: e_i x e_j = e_axis
    R = np.zeros((3, 3), dtype=np.result_type(angle, float))
    R[axis, axis] = 1.0
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def chart_rotation(s):
    """``Rx(a) Ry(b) Rz(c)`` for ``s = (a, b, c)``."""
    return _axis_rotation(0, s[0]) @ _axis_rotation(1, s[1]) @ _axis_rotation(2, s[2])


def chart_rate_matrix(s):
    """``J(s)`` (3, 3): omega_body = J sdot (module docstring)."""
    Ry, Rz = _axis_rotation(1, s[1]), _axis_rotation(2, s[2])
    J = np.zeros((3, 3), dtype=np.result_type(s[0], s[1], s[2], float))
    J[:, 0] = Rz.T @ Ry.T @ [1.0, 0.0, 0.0]
    J[:, 1] = Rz.T @ [0.0, 1.0, 0.0]
    J[:, 2] = [0.0, 0.0, 1.0]
    return J


def chart_rate_derivative(s, sdot, h=1e-30):
    """``Jdot sdot`` = d/dt (J(s(t))) sdot along s' = sdot, by complex step."""
    return (chart_rate_matrix(np.asarray(s) + 1j * h * np.asarray(sdot)).imag / h) @ sdot


def test_the_chart_written_here_is_the_cores():
    """The chart and its rate matrix above equal ros_vi's (so a disagreement below is not a
    convention), and J is the body angular velocity: R^T Rdot = [J sdot]."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        s, sdot = rng.uniform(-1.2, 1.2, 3), rng.uniform(-2, 2, 3)
        assert np.abs(chart_rotation(s) - xyz_rotation(s)).max() < 1e-15
        assert np.abs(chart_rate_matrix(s) - body_rate_matrix(s)).max() < 1e-15
        h = 1e-30
        Rdot = chart_rotation(s + 1j * h * sdot).imag / h
        W = chart_rotation(s).T @ Rdot
        omega = chart_rate_matrix(s) @ sdot
        assert np.abs(W + W.T).max() < 1e-14
        assert np.abs([W[2, 1], W[0, 2], W[1, 0]] - omega).max() < 1e-14


# ---------------------------------------------------------------------- both models
class FloatingPair:
    """A floating robot in ros_vi (``import_urdf(..., floating_base=True)``) and in
    Pinocchio (``buildModelFromXML(..., JointModelFreeFlyer())``), addressed by joint name."""

    def __init__(self, name):
        self.text = _text(name)
        self.system = import_urdf(self.text, floating_base=True)
        (self.free,) = self.system.free_joints
        self.model = pin.buildModelFromXML(self.text, pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        model = self.model
        assert model.names[1] == 'root_joint' and model.joints[1].nv == 6
        assert model.nv == self.system.nQ
        # our config index of each Pinocchio joint (by name), and its limits
        self.base = [c.index for c in self.free.configs]        # x, y, z, rx, ry, rz
        self.joints = []                                         # (pin idx_q, idx_v, ours)
        for jid in range(2, model.njoints):
            jm = model.joints[jid]
            assert jm.nq == 1 and jm.nv == 1
            self.joints.append((jm.idx_q, jm.idx_v,
                                self.system.get_config(model.names[jid]).index))
        assert sorted([j[2] for j in self.joints] + self.base) == list(range(model.nv))

    def random_state(self, rng, angle=0.5):
        """Random reference attitude (set_pose), chart angles within ``angle`` [rad], joint
        positions within their limits, velocities: ``(q, dq)`` (nQ,) in our configs."""
        system = self.system
        quat = rng.normal(size=4)
        pose = np.eye(4)
        pose[:3, :3] = pin.Quaternion(*(quat / np.linalg.norm(quat))).matrix()
        pose[:3, 3] = rng.uniform(-1, 1, 3)
        self.free.set_pose(pose)
        q = np.array(system.q, float)
        q[self.base[3:]] = rng.uniform(-angle, angle, 3)
        lower, upper = self.model.lowerPositionLimit, self.model.upperPositionLimit
        for iq, _, ours in self.joints:
            q[ours] = rng.uniform(lower[iq], upper[iq])
        dq = np.empty(system.nQ)
        dq[self.base[:3]] = rng.uniform(-1, 1, 3)           # m/s
        dq[self.base[3:]] = rng.uniform(-2, 2, 3)           # rad/s
        for _, _, ours in self.joints:
            dq[ours] = rng.uniform(-3, 3)                    # rad/s
        return q, dq

    def mapping(self, q, dq):
        """``(q_p, v_p, T, Tdot_v)``: Pinocchio's configuration and velocity of our (q, dq),
        T (nv, nQ) with v_p = T dq, and Tdot dq (nv,) (module docstring)."""
        x, s = q[self.base[:3]], q[self.base[3:]]
        xdot, sdot = dq[self.base[:3]], dq[self.base[3:]]
        R = self.free.reference_attitude @ chart_rotation(s)
        J = chart_rate_matrix(s)
        nv = self.model.nv
        T = np.zeros((nv, nv))
        T[np.ix_(range(3), self.base[:3])] = R.T
        T[np.ix_(range(3, 6), self.base[3:])] = J
        q_p = np.empty(self.model.nq)
        q_p[:3] = x
        q_p[3:7] = pin.Quaternion(R).coeffs()               # (x, y, z, w)
        for iq, iv, ours in self.joints:
            T[iv, ours] = 1.0
            q_p[iq] = q[ours]
        omega = J @ sdot
        Tdot_v = np.zeros(nv)
        Tdot_v[:3] = -np.cross(omega, R.T @ xdot)          # d/dt(R^T) = -[omega] R^T
        Tdot_v[3:6] = chart_rate_derivative(s, sdot)
        return q_p, T @ dq, T, Tdot_v

    def pinocchio(self, q_p, v_p):
        """Pinocchio's (M_p, b_p, kinetic energy) at (q_p, v_p)."""
        m, d = self.model, self.data
        M = pin.crba(m, d, q_p)
        M = np.triu(M) + np.triu(M, 1).T
        b = pin.nonLinearEffects(m, d, q_p, v_p)
        return M, b, float(pin.computeKineticEnergy(m, d, q_p, v_p))

    def ours(self, q, dq):
        system = self.system
        system.q, system.dq = q, dq
        return system.mass_matrix(), system.bias_forces(), system.kinetic_energy()


@pytest.fixture(scope='module', params=ROBOTS)
def pair(request):
    return FloatingPair(request.param)


def test_at_the_chart_centre_the_bias_needs_the_rate_matrix_derivative(pair):
    """s = 0 (every step starts there): J = I, so M_o is M_p with the translation rows
    turned by R, but Jdot sdot != 0 contributes M_p Tdot v to the bias: with it the bias
    agrees to rounding, without it it is far off."""
    rng = np.random.default_rng(7)
    q, dq = pair.random_state(rng, angle=0.0)
    assert not q[pair.base[3:]].any()
    q_p, v_p, T, Tdot_v = pair.mapping(q, dq)
    assert np.abs(T[3:6][:, pair.base[3:]] - np.eye(3)).max() == 0.0
    assert np.abs(Tdot_v[3:6]).max() > 0.1
    M_p, b_p, _ = pair.pinocchio(q_p, v_p)
    M_o, b_o, _ = pair.ours(q, dq)
    assert _rel(M_o, T.T @ M_p @ T) <= TOL
    assert _rel(b_o, T.T @ (b_p + M_p @ Tdot_v)) <= TOL
    naive = T.T @ b_p
    assert _rel(b_o, naive) > 1e-3


@pytest.mark.parametrize('seed', range(4))
def test_mass_matrix_bias_and_energy_match_pinocchio_free_flyer(pair, seed):
    rng = np.random.default_rng(100 + seed)
    q, dq = pair.random_state(rng)
    q_p, v_p, T, Tdot_v = pair.mapping(q, dq)
    M_p, b_p, T_p = pair.pinocchio(q_p, v_p)
    M_o, b_o, T_o = pair.ours(q, dq)
    errors = dict(M=_rel(M_o, T.T @ M_p @ T), b=_rel(b_o, T.T @ (b_p + M_p @ Tdot_v)),
                  T=_rel(T_o, T_p))
    assert max(errors.values()) <= TOL, errors
    # gravity alone (at rest): the same map with Tdot v = 0
    g_p = pin.computeGeneralizedGravity(pair.model, pair.data, q_p)
    pair.system.dq = np.zeros(pair.system.nQ)
    assert _rel(pair.system.bias_forces(), T.T @ g_p) <= TOL


@pytest.mark.parametrize('seed', range(3))
def test_every_link_pose_matches_pinocchio(pair, seed):
    rng = np.random.default_rng(200 + seed)
    q, dq = pair.random_state(rng)
    q_p, _, _, _ = pair.mapping(q, dq)
    pair.system.q = q
    poses = pair.system.urdf.link_poses()
    m, d = pair.model, pair.data
    pin.framesForwardKinematics(m, d, q_p)
    links = [f.name for f in m.frames if f.type == pin.FrameType.BODY]
    assert sorted(poses) == sorted(links)
    worst = max(np.abs(poses[link] - d.oMf[m.getFrameId(link, pin.BODY)].homogeneous).max()
                for link in links)
    assert worst <= POSE_TOL, worst
    # the base link is the free joint's body
    assert np.abs(poses[pair.free.body.name] - pair.free.pose).max() <= POSE_TOL


# ---------------------------------------------------------------------- the URDFs
EXPECTED = {'quadruped': dict(revolute=12, mass=(10.0, 15.0)),
            'humanoid': dict(revolute=31, mass=(55.0, 70.0))}


@pytest.mark.parametrize('name', ROBOTS)
def test_shipped_floating_robots_are_physical(name):
    """Joint count, total mass, limits with effort and speed on every joint, a visual and
    a collision on every link with mass, and every inertia a body's: positive definite,
    principal moments obeying the triangle inequality; no link welded to a world."""
    root = ET.fromstring(_text(name))
    joints = root.findall('joint')
    revolute = [j for j in joints if j.get('type') == 'revolute']
    assert len(revolute) == EXPECTED[name]['revolute']
    assert {j.get('type') for j in joints} == {'revolute', 'fixed'}
    for j in revolute:
        lim = j.find('limit')
        lo, up = float(lim.get('lower')), float(lim.get('upper'))
        assert lo < up and float(lim.get('effort')) > 0 and float(lim.get('velocity')) > 0
    mass = 0.0
    for link in root.findall('link'):
        assert link.get('name') != 'world'
        inertial = link.find('inertial')
        if inertial is None:
            continue
        m = float(inertial.find('mass').get('value'))
        I = inertial.find('inertia')
        Ixx, Ixy, Ixz, Iyy, Iyz, Izz = (float(I.get(k)) for k in
                                        ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'))
        moments = np.linalg.eigvalsh([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
        assert m > 0 and moments[0] > 0, link.get('name')
        assert moments[2] <= moments[0] + moments[1], (link.get('name'), moments)
        assert link.find('visual') is not None and link.find('collision') is not None
        mass += m
    lo, up = EXPECTED[name]['mass']
    assert lo <= mass <= up
