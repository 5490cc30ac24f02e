"""URDF importer: exactness against Pinocchio, the tutorial pendulum, joint data, naming,
forces/constraints the importer creates, and refusal of bad input."""
import os
import threading
import time
import warnings

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import rx, tz
from ros_vi.urdf import (URDFError, URDFWarning, import_urdf, import_urdf_file, rpy_matrix,
                         axis_alignment)

import test_urdf_cases as cases

pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) is the oracle: '
                          'pip install -r requirements.txt')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, 'urdf')
TOL = 1e-9


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) if b.size else 0.0


# ---------------------------------------------------------------------- the oracle
class Oracle:
    """Pinocchio model of the same URDF, addressed by joint name."""

    def __init__(self, xml, mimic=False):
        self.model = pin.buildModelFromXML(xml, mimic=mimic)
        self.data = self.model.createData()

    def state(self, system, names):
        """Pinocchio (q, v) from ours; v-columns of ``names`` (non-mimic joints)."""
        model = self.model
        qp = pin.neutral(model)
        vp = np.zeros(model.nv)
        cols = []
        for n in names:
            jm = model.joints[model.getJointId(n)]
            c = system.get_config(n)
            if jm.nq == 2:      # continuous: (cos, sin)
                qp[jm.idx_q:jm.idx_q + 2] = np.cos(c.q), np.sin(c.q)
            else:
                qp[jm.idx_q] = c.q
            vp[jm.idx_v] = c.dq
            cols.append(jm.idx_v)
        return qp, vp, np.array(cols)

    def quantities(self, qp, vp):
        m, d = self.model, self.data
        M = pin.crba(m, d, qp)
        M = np.triu(M) + np.triu(M, 1).T
        g = pin.computeGeneralizedGravity(m, d, qp)
        b = pin.nonLinearEffects(m, d, qp, vp)
        T = pin.computeKineticEnergy(m, d, qp, vp)
        V = pin.computePotentialEnergy(m, d, qp)
        # Pinocchio leaves masses welded to the universe out of V: add them back
        I0 = m.inertias[0]
        V -= I0.mass * float(m.gravity.linear @ I0.lever)
        pin.framesForwardKinematics(m, d, qp)
        return M, g, b, T, V

    def link_pose(self, link):
        return self.data.oMf[self.model.getFrameId(link, pin.BODY)].homogeneous


def compare_with_pinocchio(xml, seeds=(0, 1, 2), **options):
    """Max relative errors of M, g, b, T, V and every link pose over random states."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        system = import_urdf(xml, **options)
    robot = system.urdf
    oracle = Oracle(xml)
    names = robot.joint_names
    order = np.array([system.get_config(n).index for n in names], dtype=int)
    errs = dict(M=0.0, g=0.0, b=0.0, T=0.0, V=0.0, pose=0.0)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        system.q = rng.uniform(-1.5, 1.5, system.nQ)
        system.dq = rng.uniform(-2, 2, system.nQ)
        qp, vp, cols = oracle.state(system, names)
        M, g, b, T, V = oracle.quantities(qp, vp)
        assert M.shape == (len(names), len(names))      # every pinocchio dof compared
        errs['M'] = max(errs['M'], _rel(system.mass_matrix()[np.ix_(order, order)],
                                        M[np.ix_(cols, cols)]))
        errs['g'] = max(errs['g'], _rel(system.gravity_forces()[order], g[cols]))
        errs['b'] = max(errs['b'], _rel(system.bias_forces()[order], b[cols]))
        errs['T'] = max(errs['T'], _rel(system.kinetic_energy(), T))
        errs['V'] = max(errs['V'], _rel(system.potential_energy(), V))
        poses = robot.link_poses()
        assert sorted(poses) == sorted(robot.link_names)
        for link, G in poses.items():
            errs['pose'] = max(errs['pose'], _rel(G, oracle.link_pose(link)))
    return system, errs


MAX_ERRORS = {}


def _check(name, errs):
    MAX_ERRORS[name] = errs
    bad = {k: v for k, v in errs.items() if not v <= TOL}
    assert not bad, '%s: errors vs pinocchio above %g: %s' % (name, TOL, bad)


# ---------------------------------------------------------------------- exactness
def test_rpy_convention_is_fixed_axis_zyx():
    r, p, y = 0.3, -0.7, 1.1
    c, s = np.cos, np.sin
    Rx = np.array([[1, 0, 0], [0, c(r), -s(r)], [0, s(r), c(r)]])
    Ry = np.array([[c(p), 0, s(p)], [0, 1, 0], [-s(p), 0, c(p)]])
    Rz = np.array([[c(y), -s(y), 0], [s(y), c(y), 0], [0, 0, 1]])
    assert np.abs(rpy_matrix((r, p, y)) - Rz @ Ry @ Rx).max() < 1e-15


@pytest.mark.parametrize('axis', [(0, 0, 1), (0, 0, -1), (1, 0, 0), (-1, 0, 0), (0, -2, 0),
                                  (1, 2, -2), (1e-9, 0, 1), (0.3, -0.4, 0.5)])
def test_axis_alignment_takes_z_to_axis(axis):
    A = axis_alignment(axis)
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    assert np.abs(A @ [0, 0, 1] - a).max() < 1e-15
    assert np.abs(A.T @ A - np.eye(3)).max() < 1e-15
    assert abs(np.linalg.det(A) - 1) < 1e-15


def test_full_featured_urdf_matches_pinocchio():
    system, errs = compare_with_pinocchio(cases.full_featured())
    _check('full_featured', errs)
    robot = system.urdf
    assert robot.joint_names == ['j1', 'j2', 'j4', 'j5', 'j6', 'j3']   # depth first
    assert set(robot.link_names) == {'world', 'base', 'l1', 'l1_massless', 'l2', 'l3',
                                       'l4', 'l5', 'tip', 'l6'}


@pytest.mark.parametrize('seed', range(6))
def test_random_trees_match_pinocchio(seed):
    _, errs = compare_with_pinocchio(cases.random_robot(seed, n_links=9), seeds=(seed, 10))
    _check('random%d' % seed, errs)


@pytest.mark.parametrize('model', cases.HERE_MODELS)
def test_shipped_models_match_pinocchio(model):
    with open(os.path.join(MODELS, model + '.urdf')) as fh:
        xml = fh.read()
    _, errs = compare_with_pinocchio(xml)
    _check(model, errs)


def test_base_pose_option_matches_a_world_joint():
    """base_xyz/base_rpy place the root exactly like a fixed joint from a world link."""
    xml = open(os.path.join(MODELS, 'acrobot.urdf')).read()
    # a robot without a world link: drop it and its joint, then place the base
    body = xml.replace('<link name="world"/>', '')
    start = body.index('<joint name="base_fixed"')
    body = body[:start] + body[body.index('</joint>', start) + len('</joint>'):]
    xyz, rpy = (0.3, -0.2, 1.0), (0.2, -0.3, 0.4)
    placed = import_urdf(body, base_xyz=xyz, base_rpy=rpy)
    world = body.replace('<robot name="acrobot">', '<robot name="acrobot"><link name="w"/>'
                         '<joint name="wj" type="fixed"><parent link="w"/><child '
                         'link="base_link"/><origin xyz="0.3 -0.2 1.0" rpy="0.2 -0.3 0.4"/>'
                         '</joint>')
    _, errs = compare_with_pinocchio(world)
    _check('base_pose_ref', errs)
    oracle = Oracle(world)
    placed.q = [0.4, -0.9]
    placed.dq = [0.3, 1.1]
    qp, vp, cols = oracle.state(placed, placed.urdf.joint_names)
    M, g, b, T, V = oracle.quantities(qp, vp)
    assert _rel(placed.mass_matrix(), M[np.ix_(cols, cols)]) < TOL
    assert _rel(placed.bias_forces(), b[cols]) < TOL
    assert _rel(placed.potential_energy(), V) < TOL
    for link in placed.urdf.link_names:
        assert _rel(placed.urdf.link_pose(link), oracle.link_pose(link)) < TOL


def test_mimic_joints_match_pinocchio_mimic_model():
    """The Mimic constraint reproduces Pinocchio's exactly reduced mimic model."""
    xml = cases.mimic_robot()
    system = import_urdf(xml, mimic='constraint')
    robot = system.urdf
    assert robot.joint_names == ['ja', 'jb', 'jc', 'jd']
    assert robot.input_names == ['ja', 'jb']           # mimic joints are not actuated
    assert system.nc == 2
    assert abs(system.get_config('jc').q - 0.2) < 1e-15   # initial q satisfies the mimics
    assert abs(system.get_config('jd').q + 0.05) < 1e-15
    oracle = Oracle(xml, mimic=True)
    model = oracle.model
    assert model.nv == 2
    rng = np.random.default_rng(3)
    for _ in range(3):
        qa, qb, va, vb = rng.uniform(-1, 1, 4)
        system.q = {'ja': qa, 'jb': qb, 'jc': -1.5 * qb + 0.2, 'jd': 0.25 * qb - 0.05}
        system.dq = {'ja': va, 'jb': vb, 'jc': -1.5 * vb, 'jd': 0.25 * vb}
        assert np.abs([c.h() for c in system.constraints]).max() < 1e-15
        qp = np.array([qa, qb])
        vp = np.array([va, vb])
        m, d = model, oracle.data
        M = pin.crba(m, d, qp)
        M = np.triu(M) + np.triu(M, 1).T
        g = pin.computeGeneralizedGravity(m, d, qp)
        b = pin.nonLinearEffects(m, d, qp, vp)
        # energies and poses: Pinocchio's unreduced model at the consistent (q, dq)
        full = Oracle(xml)
        fq, fv, _ = full.state(system, robot.joint_names)
        _, _, _, T, V = full.quantities(fq, fv)
        # N maps reduced velocities (ja, jb) to ours; columns in config order
        N = np.zeros((4, 2))
        idx = {n: system.get_config(n).index for n in robot.joint_names}
        N[idx['ja'], 0] = 1.0
        N[idx['jb'], 1] = 1.0
        N[idx['jc'], 1] = -1.5
        N[idx['jd'], 1] = 0.25
        assert _rel(N.T @ system.mass_matrix() @ N, M) < TOL
        assert _rel(N.T @ system.gravity_forces(), g) < TOL
        assert _rel(N.T @ system.bias_forces(), b) < TOL
        assert _rel(system.kinetic_energy(), T) < TOL
        assert _rel(system.potential_energy(), V) < TOL
        for link in robot.link_names:
            assert _rel(robot.link_pose(link), full.link_pose(link)) < TOL
        # constrained accelerations = Pinocchio's reduced forward dynamics
        tau = rng.uniform(-1, 1, 2)
        system.u = {'ja': tau[0], 'jb': tau[1]}
        ddq = system.f()
        ref = np.linalg.solve(M, tau - b)
        assert _rel(ddq[[idx['ja'], idx['jb']]], ref) < 1e-8
        assert abs(ddq[idx['jc']] + 1.5 * ddq[idx['jb']]) < 1e-9


def test_link_body_velocity_matches_pinocchio():
    xml = cases.full_featured()
    system = import_urdf(xml)
    robot = system.urdf
    oracle = Oracle(xml)
    rng = np.random.default_rng(5)
    system.q = rng.uniform(-1, 1, system.nQ)
    system.dq = rng.uniform(-1, 1, system.nQ)
    qp, vp, _ = oracle.state(system, robot.joint_names)
    m, d = oracle.model, oracle.data
    pin.forwardKinematics(m, d, qp, vp)
    pin.updateFramePlacements(m, d)
    for link in robot.link_names:
        v_ref = pin.getFrameVelocity(m, d, m.getFrameId(link, pin.BODY), pin.LOCAL)
        v, w = robot.link_body_velocity(link)
        assert _rel(v, v_ref.linear) < TOL and _rel(w, v_ref.angular) < TOL
        vb = robot.link_frame(link).vb()      # trep's body velocity agrees too
        assert np.abs(vb[:3, 3] - v).max() < 1e-12
        assert np.abs([vb[2, 1], vb[0, 2], vb[1, 0]] - w).max() < 1e-12


# ---------------------------------------------------------------------- tutorial pendulum
def _pendulum_by_frames():
    system = trep.System()
    system.import_frames([rx('theta'), [tz(-1.0, mass=1.0)]])
    trep.potentials.Gravity(system, (0, 0, -9.8))
    trep.forces.Damping(system, 1.0)
    trep.forces.ConfigForce(system, 'theta', 'theta')
    return system


def test_tutorial_pendulum_urdf_steps_like_frames():
    urdf_sys = import_urdf_file(os.path.join(MODELS, 'pendulum.urdf'), gravity=(0, 0, -9.8))
    frame_sys = _pendulum_by_frames()
    assert urdf_sys.urdf.damping_coefficients.tolist() == [1.0]
    results = []
    for system in (urdf_sys, frame_sys):
        mvi = trep.MidpointVI(system)
        mvi.initialize_from_state(0.0, [0.75 * np.pi], [0.0])
        qs = []
        for k in range(1, 101):
            mvi.step(0.01 * k, [0.1 * np.sin(0.3 * k)])
            qs.append(mvi.q2.copy())
        results.append(np.array(qs))
    assert np.abs(results[0] - results[1]).max() < 1e-12
    assert np.abs(results[0][0] - results[1][0]).max() < 1e-12


def test_imported_system_uses_the_fast_path_and_general_path_agrees():
    system = import_urdf_file(os.path.join(MODELS, 'arm7.urdf'))
    mvi = trep.MidpointVI(system)
    assert mvi._fast is not None          # gravity + damping + ConfigForce only
    q0 = np.linspace(-0.5, 0.5, 7)
    mvi.initialize_from_state(0.0, q0, np.zeros(7))
    u = np.linspace(-5, 5, 7)
    for k in range(1, 6):
        mvi.step(0.01 * k, u)
    fast = mvi.q2.copy()
    slow = trep.MidpointVI(system)
    slow._fast = None
    slow.initialize_from_state(0.0, q0, np.zeros(7))
    for k in range(1, 6):
        slow.step(0.01 * k, u)
    assert np.abs(slow.q2 - fast).max() < 1e-9


def test_mimic_system_integrates_on_the_constraint():
    system = import_urdf(cases.mimic_robot(), mimic='constraint')
    mvi = trep.MidpointVI(system)
    q0 = system.q
    mvi.initialize_from_state(0.0, q0, np.zeros(system.nQ))
    for k in range(1, 21):
        mvi.step(0.01 * k, [0.5, -0.3])
    system.q = mvi.q2
    assert np.abs([c.h() for c in system.constraints]).max() < 1e-9
    assert abs(mvi.q2[system.get_config('jb').index]) > 1e-3     # it moved


# ---------------------------------------------------------------------- data and naming
def test_joint_data_limits_damping_inputs():
    system = import_urdf_file(os.path.join(MODELS, 'cartpole.urdf'))
    robot = system.urdf
    assert robot.joint_names == ['cart', 'pole']
    lo, up = robot.position_limits
    assert lo.tolist() == [-2.4, -np.inf] and up.tolist() == [2.4, np.inf]
    assert robot.effort_limits.tolist() == [30.0, 0.0]
    assert robot.velocity_limits.tolist() == [5.0, 20.0]
    assert robot.damping_coefficients.tolist() == [0.1, 0.001]
    assert robot.friction_coefficients.tolist() == [0.05, 0.0]
    assert robot.input_names == ['cart', 'pole']
    assert [u.name for u in system.inputs] == ['cart', 'pole']
    assert robot.input_effort_limits.tolist() == [30.0, 0.0]
    damping = robot.forces['damping']
    assert damping.get_damping_coefficient('cart') == 0.1
    assert damping.get_damping_coefficient('pole') == 0.001
    assert 'friction' not in robot.forces and 'limits' not in robot.forces
    # an input torque is a generalized force on its joint
    system.u = {'cart': 2.0}
    system.q = 0.0
    system.dq = 0.0
    ddq = system.f()
    M = system.mass_matrix()
    assert np.abs(M @ ddq - ([2.0, 0] - system.bias_forces())).max() < 1e-12
    # the rail is 1 m up: poses reflect it
    assert np.abs(robot.link_pose('cart')[:3, 3] - [0, 0, 1.0]).max() < 1e-15


def test_frame_roles_and_helper_names():
    system = import_urdf(cases.full_featured(), prefix='r1/')
    robot = system.urdf
    links = [f for f in system.frames if getattr(f, 'urdf_role', None) == 'link']
    helpers = [f for f in system.frames if getattr(f, 'urdf_role', None) == 'helper']
    assert sorted(f.name for f in links) == sorted('r1/' + n for n in robot.link_names)
    assert all('::' in f.name for f in helpers) and helpers
    assert all(f.name.startswith('r1/') for f in links + helpers)
    assert {f.urdf_link for f in links} == set(robot.link_names)
    assert [c.name for c in system.configs] == ['r1/' + n for n in robot.joint_names]
    assert all(u.name.startswith('r1/') for u in system.inputs)


def test_two_prefixed_copies_in_one_system():
    xml = open(os.path.join(MODELS, 'acrobot.urdf')).read()
    system = import_urdf(xml, prefix='left/')
    n_pot = len(system.potentials)
    import_urdf(xml, system=system, prefix='right/', base_xyz=(0, 1, 0))
    assert len(system.potentials) == n_pot           # gravity not added twice
    assert [r.prefix for r in system.urdf_robots] == ['left/', 'right/']
    single = import_urdf(xml)
    q = np.array([0.3, -0.6])
    single.q = q
    system.q = np.concatenate([q, q])
    M = system.mass_matrix()
    assert np.abs(M[:2, :2] - single.mass_matrix()).max() < 1e-14
    assert np.abs(M[2:, 2:] - single.mass_matrix()).max() < 1e-14
    assert np.abs(M[:2, 2:]).max() == 0.0
    right = system.urdf_robots[1]
    assert np.abs(right.link_pose('upper_link')[:3, 3] - [0, 1, 2.5]).max() < 1e-15


def test_helper_name_collision_refused():
    xml = cases.robot('clash', [
        cases.link('a'), cases.link('j::origin'),
        cases.link('b', cases.inertial(1.0)),
        cases.joint('j', 'revolute', 'a', 'b', (0, 0, 1), axis=(0, 0, 1), limit=cases.LIM),
        cases.joint('f', 'fixed', 'a', 'j::origin')])
    with pytest.raises(URDFError, match="j::origin"):
        import_urdf(xml)


def test_existing_names_refused_and_system_untouched():
    xml = open(os.path.join(MODELS, 'acrobot.urdf')).read()
    system = import_urdf(xml)
    before = (len(system.frames), len(system.configs), len(system.inputs),
              len(system.forces), len(system.potentials))
    with pytest.raises(URDFError, match='already exist'):
        import_urdf(xml, system=system)
    bad = cases.robot('massless', [cases.link('a'), cases.link('b'), cases.joint(
        'jm', 'continuous', 'a', 'b', axis=(0, 0, 1))])
    with pytest.raises(URDFError, match="'jm'"):
        import_urdf(bad, system=system, prefix='x/', strict=True)
    after = (len(system.frames), len(system.configs), len(system.inputs),
             len(system.forces), len(system.potentials))
    assert before == after


def test_massless_joint_policies():
    xml = cases.robot('m', [
        cases.link('a'), cases.link('b', cases.inertial(1.0, (0.3, 0, 0))),
        cases.link('sensor'),
        cases.joint('j', 'revolute', 'a', 'b', axis=(0, 0, 1), limit=cases.LIM),
        cases.joint('pan', 'revolute', 'b', 'sensor', axis=(0, 0, 1), limit=cases.LIM)])
    with pytest.raises(URDFError, match=r"'pan'.*'sensor'"):
        import_urdf(xml, massless='error')
    with pytest.raises(URDFError, match=r"joint 'pan': moves no mass .*strict"):
        import_urdf(xml, strict=True)
    with pytest.warns(UserWarning, match="'pan'"):
        s = import_urdf(xml, massless='warn')          # a synonym of the default
    assert s.nQd == 1
    with pytest.warns(URDFWarning, match="joint 'pan': moves no mass"):
        s = import_urdf(xml)
    assert [c.name for c in s.dyn_configs] == ['j'] and [c.name for c in s.kin_configs] == ['pan']
    assert s.urdf.input_names == ['j']
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_state(0.0, [0.1, 0.0], [0.0])
    mvi.step(0.01, [1.0], [0.02])
    assert mvi.q2[1] == 0.02


def test_inertia_checks():
    def one(inertia, mass=1.0):
        return cases.robot('i', [cases.link('a'), cases.link('b', cases.inertial(mass, I=inertia)),
                                 cases.joint('j', 'continuous', 'a', 'b', axis=(0, 0, 1))])
    with pytest.raises(URDFError, match="'b'.*negative mass"):
        import_urdf(one((0.1, 0, 0, 0.1, 0, 0.1), mass=-1.0))
    with pytest.raises(URDFError, match=r"'b'.*positive semi-definite beyond rounding "
                                        r"\(principal moments \[-0.4, "):
        import_urdf(one((0.1, 0.5, 0, 0.1, 0, 0.1)))
    with pytest.warns(URDFWarning, match="'b'.*triangle inequality.*imported it as written"):
        import_urdf(one((0.1, 0, 0, 0.1, 0, 0.5)))


def test_xacro_file_with_arguments(tmp_path):
    path = tmp_path / 'bot.urdf.xacro'
    path.write_text('''<?xml version="1.0"?>
<robot name="bot" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="mass" default="1.0"/>
  <xacro:arg name="length" default="0.5"/>
  <xacro:property name="L" value="$(arg length)"/>
  <xacro:macro name="bar" params="name m">
    <link name="${name}"><inertial><origin xyz="0 0 ${-L}"/><mass value="${m}"/>
      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  </xacro:macro>
  <link name="world"/>
  <xacro:bar name="bob" m="$(arg mass)"/>
  <joint name="theta" type="continuous"><parent link="world"/><child link="bob"/>
    <axis xyz="1 0 0"/></joint>
</robot>''')
    s = import_urdf_file(str(path), xacro_args={'mass': 2.0, 'length': 1.5})
    s.q = 0.0
    assert abs(s.mass_matrix()[0, 0] - 2.0 * 1.5 ** 2) < 1e-12
    s = import_urdf_file(str(path))
    assert abs(s.mass_matrix()[0, 0] - 0.25) < 1e-12


def test_mesh_references_do_not_break_import():
    s = import_urdf_file(os.path.join(MODELS, 'arm7.urdf'))
    assert s.nQ == 7 and len(s.urdf.link_names) == 11


def test_continuous_joint_ignores_position_limits_and_root_world_link():
    s = import_urdf_file(os.path.join(MODELS, 'pendulum.urdf'))
    lo, up = s.urdf.position_limits
    assert lo[0] == -np.inf and up[0] == np.inf
    assert s.get_frame('world').urdf_role == 'link'
    assert s.urdf.root_link == 'world'


# ---------------------------------------------------------------------- new forces
def _arm_with(**options):
    return import_urdf_file(os.path.join(MODELS, 'arm7.urdf'), **options)


def test_urdf_limits_are_declared_on_the_system_unless_switched_off():
    s = _arm_with()
    lo, up = s.urdf.position_limits
    assert s.joint_limits == {n: (lo[i], up[i]) for i, n in enumerate(s.urdf.config_names)}
    assert trep.MidpointVI(s).limits == s.joint_limits
    assert trep.MidpointVI(s, limits={}).limits == {}
    assert _arm_with(enforce_limits=False).joint_limits == {}
    # a second robot's limits join the first's, under its prefix
    import_urdf_file(os.path.join(MODELS, 'arm7.urdf'), system=s, prefix='b_')
    assert len(s.joint_limits) == 14 and s.joint_limits['b_joint_2'] == (lo[1], up[1])
    # removing one
    s.set_joint_limit('b_joint_2')
    assert 'b_joint_2' not in s.joint_limits
    with pytest.raises(ValueError, match="'joint_1' needs lower <= upper"):
        s.set_joint_limit('joint_1', 1.0, -1.0)


def test_joint_limit_force_derivatives_and_behaviour():
    # the compliant end stop (a force a user adds; the importer's limits are hard)
    s = _arm_with(enforce_limits=False)
    lo, up = s.urdf.position_limits
    lim = trep.forces.JointLimits(
        s, {n: (lo[i], up[i]) for i, n in enumerate(s.urdf.config_names)}, 500.0, 3.0, 0.05)
    rng = np.random.default_rng(0)
    # states inside the transition band, beyond it, and inside the limits
    q = np.array([up[0] + 0.02, lo[1] - 0.1, 0.0, up[3] + 0.2, lo[4] - 0.03, 0.1, up[6] + 0.01])
    s.q = q
    s.dq = rng.uniform(-1, 1, 7)
    for check in ('validate_f_dq', 'validate_f_ddq', 'validate_f_dqdq', 'validate_f_ddqdq',
                  'validate_f_ddqddq', 'validate_f_du'):
        # values reach 1e4 (stiff): 1e-3 absolute is 1e-7 relative
        assert getattr(lim, check)(delta=1e-7, tolerance=1e-3, verbose=True), check
    f = lim.f_array()
    assert f[0] < 0 and f[1] > 0 and f[3] < 0 and f[4] > 0
    s.dq = 0.0
    f = lim.f_array()
    assert f[2] == 0 and f[5] == 0                         # no force inside the limits
    # far beyond the band: a linear spring of stiffness k, rest point width/2 out
    assert abs(f[3] + 500.0 * (0.2 - 0.025)) < 1e-9
    assert lim.limits['joint_1'] == (lo[0], up[0])


def test_joint_limit_force_is_C2_at_the_band_edges():
    from ros_vi.mechanics.forces.joint_limits import _ramp
    w = 0.1
    for s0 in (0.0, w):
        lo = _ramp(np.array([s0 - 1e-9]), w)
        hi = _ramp(np.array([s0 + 1e-9]), w)
        for k in range(3):
            assert abs(lo[k][0] - hi[k][0]) < 1e-6


def test_friction_force_derivatives():
    s = _arm_with(friction=True, friction_velocity=0.05)
    fr = s.urdf.forces['friction']
    assert fr.coefficients['joint_3'] == 0.1
    rng = np.random.default_rng(1)
    s.q = rng.uniform(-1, 1, 7)
    s.dq = rng.uniform(-0.2, 0.2, 7)
    for check in ('validate_f_dq', 'validate_f_ddq', 'validate_f_dqdq', 'validate_f_ddqdq',
                  'validate_f_ddqddq', 'validate_f_du'):
        assert getattr(fr, check)(delta=1e-7, tolerance=1e-5, verbose=True), check
    s.dq = 10.0
    assert np.abs(fr.f_array() + 0.1).max() < 1e-12        # Coulomb level at speed
    mvi = trep.MidpointVI(s)                                  # general path integrates it
    mvi.initialize_from_state(0.0, np.zeros(7), np.full(7, 0.1))
    mvi.step(0.01, np.zeros(7))


def test_mimic_constraint_derivatives():
    s = import_urdf(cases.mimic_robot(), mimic='constraint')
    s.q = np.random.default_rng(2).uniform(-1, 1, s.nQ)
    for con in s.constraints:
        for check in ('validate_h_dq', 'validate_h_dqdq', 'validate_h_dqdqdq'):
            assert getattr(con, check)(verbose=True), check


# ---------------------------------------------------------------------- bad input
GOOD = cases.robot('ok', [cases.link('a'), cases.link('b', cases.inertial(1.0, (0, 0, -1))),
                          cases.joint('j', 'continuous', 'a', 'b', axis=(1, 0, 0))])


def _bad_cases():
    L, J, I = cases.link, cases.joint, cases.inertial
    b = L('b', I(1.0, (0, 0, -1)))
    return {
        'malformed': ('<robot name="x"><link name="a"></robot>', 'malformed XML'),
        'missing_link': (cases.robot('x', [L('a'), J('j', 'fixed', 'a', 'nope')]),
                         "'j'.*missing child link 'nope'"),
        'two_roots': (cases.robot('x', [L('a'), L('c'), b, J('j', 'continuous', 'a', 'b')]),
                      r"2 roots.*'a'.*'c'"),
        'cycle': (cases.robot('x', [L('a'), b, L('c', I(1.0)),
                                    J('j1', 'continuous', 'b', 'c'),
                                    J('j2', 'continuous', 'c', 'b')]), 'cycle'),
        'cycle_no_root': (cases.robot('x', [b, L('c', I(1.0)), J('j1', 'continuous', 'b', 'c'),
                                            J('j2', 'continuous', 'c', 'b')]), 'cycle'),
        'unknown_type': (cases.robot('x', [L('a'), b, J('j', 'hinge', 'a', 'b')]),
                         "hinge"),
        'zero_axis': (cases.robot('x', [L('a'), b, J('jz', 'continuous', 'a', 'b',
                                                      axis=(0, 0, 0))]), "'jz'.*zero length"),
        'nan_origin': (cases.robot('x', [L('a'), b]) .replace(
            '</robot>', '<joint name="jn" type="fixed"><parent link="a"/><child link="b"/>'
            '<origin xyz="0 nan 0"/></joint></robot>'), "'jn'.*finite"),
        'inf_mass': (cases.robot('x', [L('a'), L('b', '<inertial><mass value="inf"/><inertia '
                                                   'ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" '
                                                   'izz="1"/></inertial>'),
                                       J('j', 'continuous', 'a', 'b')]), "'b'.*finite"),
        'nan_limit': (cases.robot('x', [L('a'), b, J('jl', 'revolute', 'a', 'b',
                                                      limit=(0, float('nan'), 1, 1))]),
                      "'jl'.*finite"),
        'revolute_without_limit': (cases.robot('x', [L('a'), b, J('jr', 'revolute', 'a',
                                                                   'b')]), "'jr'.*limit"),
        'bad_number': (GOOD.replace('xyz="0 0 -1"', 'xyz="0 zero -1"'), 'ParseError|cannot'),
        'duplicate_link': (cases.robot('x', [L('a'), L('a')]), "duplicate link name 'a'"),
        'no_robot_name': ('<robot><link name="a"/></robot>', 'ParseError|name'),
        'not_robot': ('<sdf version="1.6"/>', 'root element must be <robot>'),
    }


@pytest.mark.parametrize('case', sorted(_bad_cases()))
def test_bad_input_raises_clear_urdf_error(case):
    xml, pattern = _bad_cases()[case]
    with pytest.raises(URDFError, match=pattern):
        import_urdf(xml)


def test_good_baseline_imports():
    s = import_urdf(GOOD)
    assert s.nQ == 1


def test_missing_file():
    with pytest.raises(URDFError, match='no_such.urdf.*no such file'):
        import_urdf_file('/nonexistent/dir/no_such.urdf')


def test_undefined_xacro_argument(tmp_path):
    path = tmp_path / 'bad.xacro'
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                    '<link name="$(arg undefined_thing)"/></robot>')
    with pytest.raises(URDFError, match='undefined_thing'):
        import_urdf_file(str(path))


def _run_with_timeout(func, timeout=10.0):
    out = {}

    def target():
        try:
            func()
        except BaseException as err:      # noqa: B902 - reported to the test
            out['err'] = err
    th = threading.Thread(target=target, daemon=True)
    start = time.perf_counter()
    th.start()
    th.join(timeout)
    assert not th.is_alive(), 'import blocked: it tried to read another file'
    return out.get('err'), time.perf_counter() - start


def test_entity_expansion_bomb_refused_quickly():
    lol = ['<!ENTITY lol0 "lol">'] + ['<!ENTITY lol%d "%s">' % (i, ('&lol%d;' % (i - 1)) * 10)
                                      for i in range(1, 10)]
    xml = ('<?xml version="1.0"?><!DOCTYPE robot [%s]><robot name="&lol9;"><link name="a"/>'
           '</robot>' % ''.join(lol))
    err, dt = _run_with_timeout(lambda: import_urdf(xml))
    assert isinstance(err, URDFError) and 'ENTITY' in str(err)
    assert dt < 1.0


@pytest.mark.parametrize('kind', ['external_entity', 'parameter_entity', 'xinclude'])
@pytest.mark.parametrize('target', ['fifo', '/etc/passwd'])
def test_no_other_file_is_read(tmp_path, kind, target):
    """A FIFO blocks whoever opens it: the import must return without touching it."""
    if target == 'fifo':
        path = str(tmp_path / 'secret')
        os.mkfifo(path)
    else:
        path = target
    if kind == 'external_entity':
        xml = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY ext SYSTEM "file://%s">]>'
               '<robot name="r"><link name="&ext;"/></robot>' % path)
    elif kind == 'parameter_entity':
        xml = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY %% p SYSTEM "%s"> %%p;]>'
               '<robot name="r"><link name="a"/></robot>' % path)
    else:
        xml = ('<robot name="r" xmlns:xi="http://www.w3.org/2001/XInclude"><link name="a"/>'
               '<xi:include href="%s" parse="text"/></robot>' % path)
    for source in (xml, xml.encode()):
        err, _ = _run_with_timeout(lambda: import_urdf(source))
        assert isinstance(err, URDFError), err
        assert 'root:' not in str(err)
    # the same through a file
    f = tmp_path / 'robot.urdf'
    f.write_text(xml)
    err, _ = _run_with_timeout(lambda: import_urdf_file(str(f)))
    assert isinstance(err, URDFError)


@pytest.mark.parametrize('where', ['attribute', 'content'])
def test_xacro_external_entity_refused(tmp_path, where):
    fifo = str(tmp_path / 'secret')
    os.mkfifo(fifo)
    body = ('<link name="&ext;"/>' if where == 'attribute' else '<link name="a">&ext;</link>')
    path = tmp_path / 'x.urdf.xacro'
    path.write_text('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY ext SYSTEM "file://%s">]>'
                    '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">%s</robot>'
                    % (fifo, body))
    err, _ = _run_with_timeout(lambda: import_urdf_file(str(path)))
    assert isinstance(err, URDFError) and 'ENTITY' in str(err)


def test_report_max_errors(capsys):
    """Runs last in this module: prints the max errors vs pinocchio seen above (run alone,
    it makes its own comparison on the full-featured robot)."""
    if not MAX_ERRORS:
        _check('full_featured', compare_with_pinocchio(cases.full_featured())[1])
    worst = {k: max(e[k] for e in MAX_ERRORS.values()) for k in next(iter(MAX_ERRORS.values()))}
    with capsys.disabled():
        print('\nURDF vs pinocchio, max relative errors over %d robots: %s'
              % (len(MAX_ERRORS), ', '.join('%s %.1e' % kv for kv in worst.items())))
    assert max(worst.values()) <= TOL


# ------------------------------------------------------------------ limits (issue #25)
def test_a_chain_deeper_than_the_recursion_limit_imports_and_steps(tmp_path, capsys):
    """A chain deeper than Python's recursion limit (1,200 joints) was a RecursionError in
    the importer (and in ros-vi info, the simulator and the viewers): the frame tree is
    built and walked without recursion; the size limits are MAX_LINKS and MAX_CONFIGS."""
    from ros_vi import MidpointVI
    from ros_vi.cli import main
    deep = cases.chain(1200)
    system = import_urdf(deep)
    assert [c.name for c in system.configs] == ['j%d' % i for i in range(1, 1201)]
    assert len(system.frames[-1].flatten_tree()) == 1
    mvi = MidpointVI(system)
    mvi.initialize_from_state(0.0, np.full(1200, 0.01), np.zeros(1200))
    mvi.step(1e-4, np.zeros(system.nu))
    assert np.isfinite(mvi.q2).all()
    path = tmp_path / 'deep.urdf'
    path.write_text(deep)
    assert main(['info', str(path)]) == 0
    out = capsys.readouterr().out
    assert '1200 DOF' in out and 'j1200 [continuous] -> l1200' in out


def test_descriptions_beyond_the_size_limits_are_refused_naming_the_limit():
    from ros_vi.urdf.parse import MAX_CONFIGS, MAX_LINKS
    items = [cases.link('base')] + [
        item for i in range(MAX_CONFIGS + 1) for item in (
            cases.link('l%d' % i, cases.inertial(1.0)),
            cases.joint('j%d' % i, 'continuous', 'base', 'l%d' % i, axis=(0, 0, 1)))]
    with pytest.raises(URDFError, match=r'the moving joints have 2,001 configs, more than '
                                        r'the 2,000 the importer takes \(MAX_CONFIGS\)'):
        import_urdf(cases.robot('wide', items))
    many = cases.robot('many', [cases.link('l%d' % i) for i in range(MAX_LINKS + 1)])
    with pytest.raises(URDFError, match=r'10,001 <link> elements, more than the 10,000 a '
                                        r'description may have \(MAX_LINKS\)'):
        import_urdf(many)


def test_an_error_naming_thousands_of_links_lists_a_few_and_counts_the_rest():
    """5,000 links without a joint: five thousand roots, named in a line of bounded length."""
    text = cases.robot('loose', [cases.link('l%d' % i) for i in range(5000)])
    with pytest.raises(URDFError) as err:
        import_urdf(text)
    message = str(err.value)
    assert "has 5000 roots (links without a parent joint: 'l0', 'l1'" in message
    assert 'and 4,980 more' in message and len(message) < 600


def test_masses_and_lengths_that_overflow_are_refused_without_numpy_warnings():
    """Values near the largest float made the mass matrix inf: the joint was taken for
    massless (and numpy warned); now the description is refused naming the cause."""
    big = cases.robot('big', [cases.link('a'), cases.link('b', cases.inertial(
        1e200, xyz=(1e200, 0, 0), I=(1e200, 0, 0, 1e200, 0, 1e200))),
        cases.joint('j', 'revolute', 'a', 'b', xyz=(0, 0, 1e200), axis=(0, 1, 0),
                    limit=(-1, 1, 1, 1))])
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with pytest.raises(URDFError, match='the mass matrix is not finite at a generic '
                                            'configuration'):
            import_urdf(big)


def test_urdf_1_2_limit_acceleration_and_jerk(caplog):
    def one(limit):
        return cases.robot('r', [cases.link('a'), cases.link('b', cases.inertial(1.0)),
                                 '<joint name="j" type="revolute"><parent link="a"/>'
                                 '<child link="b"/><limit lower="-1" upper="1" effort="2" '
                                 'velocity="3" %s/></joint>' % limit,
                                 cases.link('c', cases.inertial(1.0)),
                                 cases.joint('k', 'continuous', 'b', 'c', axis=(0, 1, 0))])
    with caplog.at_level('WARNING', logger='ros_vi.urdf'):
        robot = import_urdf(one('acceleration="4.5" jerk="60"'), strict=True).urdf
    assert caplog.records == []                  # not an unknown attribute to us
    np.testing.assert_array_equal(robot.acceleration_limits, [4.5, np.inf])
    np.testing.assert_array_equal(robot.jerk_limits, [60.0, np.inf])
    np.testing.assert_array_equal(robot.velocity_limits, [3.0, np.inf])
    for limit, culprit in (('acceleration="-1"', "joint 'j' limit acceleration must be >= 0"),
                           ('jerk="fast"', "joint 'j' limit jerk: not a number: 'fast'"),
                           ('jerk="nan"', "joint 'j' limit jerk: numbers must be finite")):
        with pytest.raises(URDFError, match=culprit):
            import_urdf(one(limit))
