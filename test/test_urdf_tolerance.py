"""The URDF tolerance policy (docs/urdf-import.md): each quirk imports with one warning
naming the element and what was done, the dynamics of what is kept equal Pinocchio's, and
strict=True refuses it.  Planar and floating joints against closed forms and Pinocchio."""
import warnings

import numpy as np
import pytest

import ros_vi as trep
from ros_vi.simulation import Simulation
from ros_vi.urdf import Quirk, URDFError, URDFWarning, import_urdf

import test_urdf_cases as cases

pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) is the oracle')

L, J, I = cases.link, cases.joint, cases.inertial
IA = (0.3, 0.01, -0.02, 0.25, 0.03, 0.2)
ARM = [L('base'),
       L('l1', I(1.5, (0.1, 0.2, 0.3), (0.3, -0.4, 0.5), IA)),
       J('j1', 'revolute', 'base', 'l1', (0.1, -0.2, 0.5), (0.4, 0.5, -0.6), (1, 2, -2),
         cases.LIM),
       L('l2', I(0.7, (0.0, 0.1, -0.2), (-0.2, 0.1, 0.7), IA)),
       J('j2', 'revolute', 'l1', 'l2', (0.3, 0, 0.1), (0, 0, 1.2), (0, 1, 0), cases.LIM)]


def _inertia_link(name, ixx, ixy, iyy, izz):
    return L(name, I(0.4, (0.05, 0, 0), (0.3, 0.2, 0.1), (ixx, ixy, 0, iyy, 0, izz)))


def quirks():
    return {
        'texture': (cases.robot('tex', ARM + [
            '<link name="deco"><visual><geometry><box size="1 1 1"/></geometry>'
            '<material name="paint"><texture/></material></visual></link>',
            J('f', 'fixed', 'l2', 'deco', (0, 0, 0.1))]),
            "link 'deco': <material 'paint'> has a <texture> without filename; ignored the "
            "texture"),
        'transmission': (cases.robot('tr', ARM + [
            '<transmission type="pr2_mechanism_model/WristTransmission" name="wrist_trans">'
            '<rightActuator name="r_motor"/><leftActuator name="l_motor"/>'
            '<flexJoint name="j1" mechanicalReduction="-60"/>'
            '<rollJoint name="j2" mechanicalReduction="60"/></transmission>']),
            "transmission 'wrist_trans': layout not readable by urdf_parser_py (older "
            "PR2-style, type 'pr2_mechanism_model/WristTransmission'"),
        'inertia_negative': (cases.robot('neg', ARM + [
            _inertia_link('antenna', -5e-11, 0.0, 1e-4, 1e-4),   # a thin rod, rounded
            J('ja', 'revolute', 'l2', 'antenna', (0, 0.1, 0), axis=(0, 0, 1),
              limit=cases.LIM)]),
            "link 'antenna': inertia is not a rigid body's by rounding (principal moments "
            "[-5e-11, 0.0001, 0.0001]: negative); repaired it to the nearest valid inertia "
            "(principal moments [0, 0.0001, 0.0001])"),
        'inertia_triangle': (cases.robot('tri', ARM + [
            _inertia_link('antenna', 1.5e-4, 0.5e-4, 1.5e-4, 0.9999999e-4),
            J('ja', 'revolute', 'l2', 'antenna', (0, 0.1, 0), axis=(0, 0, 1),
              limit=cases.LIM)]),
            "link 'antenna': inertia violates the triangle inequality (principal moments "
            "[9.999999e-05, 0.0001, 0.0002]: 0.0002 > 9.999999e-05 + 0.0001; no rigid body has "
            "these moments); imported it as written"),
        'massless': (cases.robot('hand', ARM + [
            L('finger1'), L('finger2'),
            J('f1', 'revolute', 'l2', 'finger1', (0, 0.1, 0), axis=(0, 0, 1),
              limit=cases.LIM),
            J('f2', 'fixed', 'finger1', 'finger2', (0, 0.05, 0))]),
            "joint 'f1': moves no mass (child link 'finger1' and the links below it are "
            "massless; the mass matrix would be singular); made it a kinematic config, held "
            "at its initial position"),
        'mimic_missing': (cases.robot('mim', ARM + [
            L('l3', I(0.3, (0, 0.1, 0))),
            J('j3', 'revolute', 'l2', 'l3', (0, 0.2, 0), axis=(1, 0, 0), limit=cases.LIM,
              mimic=('ghost', 2.0, 0.1))]),
            "joint 'j3': mimics the missing joint 'ghost'; ignored the <mimic>: 'j3' moves "
            "freely"),
    }


def _import(xml, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        system = import_urdf(xml, **options)
    return system, [str(w.message) for w in caught if w.category is URDFWarning]


def oracle_errors(system, xml, seeds=(0, 1, 2)):
    """Max abs differences to Pinocchio (same URDF, every joint) of the mass matrix on the
    dynamic configs, gravity forces on them, kinetic and potential energy and link poses."""
    model = pin.buildModelFromXML(xml)
    data = model.createData()
    robot = system.urdf
    names = robot.joint_names
    err = 0.0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        system.q = rng.uniform(-1.2, 1.2, system.nQ)
        system.dq = rng.uniform(-2, 2, system.nQ)
        qp, vp = pin.neutral(model), np.zeros(model.nv)
        for n in names:
            jm = model.joints[model.getJointId(n)]
            c = system.get_config(n)
            qp[jm.idx_q], vp[jm.idx_v] = c.q, c.dq
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        g = pin.computeGeneralizedGravity(model, data, qp)
        T = pin.computeKineticEnergy(model, data, qp, vp)
        V = pin.computePotentialEnergy(model, data, qp)
        pin.framesForwardKinematics(model, data, qp)
        dyn = [n for n in names if not system.get_config(n).kinematic]
        ours = [system.get_config(n).index for n in dyn]
        cols = [model.joints[model.getJointId(n)].idx_v for n in dyn]
        err = max(err, np.abs(system.mass_matrix()[np.ix_(ours, ours)]
                              - M[np.ix_(cols, cols)]).max(),
                  np.abs(system.gravity_forces()[ours] - g[cols]).max(),
                  abs(system.kinetic_energy() - T), abs(system.potential_energy() - V))
        for link, G in robot.link_poses().items():
            ref = data.oMf[model.getFrameId(link, pin.BODY)].homogeneous
            err = max(err, np.abs(G - ref).max())
    return err


@pytest.mark.parametrize('case', sorted(quirks()))
def test_quirk_imports_with_one_warning_and_matches_the_oracle(case):
    xml, text = quirks()[case]
    system, caught = _import(xml)
    robot = system.urdf
    assert len(robot.warnings) == 1 and isinstance(robot.warnings[0], Quirk)
    quirk = robot.warnings[0]
    assert str(quirk).startswith(text), str(quirk)
    assert str(quirk) == '%s %r: %s; %s' % (quirk.element, quirk.name, quirk.problem,
                                           quirk.action)
    assert caught == ['URDF robot %r: %s' % (robot.name, quirk)]      # warned once
    # inertias repaired within rounding (1e-6 relative) agree with the oracle to that size
    tol = 1e-9 if not case.startswith('inertia') else 1e-9 + 1e-6 * 2e-4
    assert oracle_errors(system, xml) < tol


@pytest.mark.parametrize('case', sorted(quirks()))
def test_strict_refuses_each_quirk(case):
    xml, text = quirks()[case]
    head = text.split(';')[0]
    with pytest.raises(URDFError, match='strict'):
        import_urdf(xml, strict=True)
    try:
        import_urdf(xml, strict=True)
    except URDFError as err:
        assert head in str(err)


def test_balanced_inertia_is_a_rigid_body():
    xml, _ = quirks()['inertia_triangle']
    system, _ = _import(xml, inertia='balance')
    frame = system.get_frame('antenna::inertial')
    ev = np.linalg.eigvalsh(frame.inertia)
    assert ev.min() >= 0 and ev[0] + ev[1] >= ev[2] * (1 - 1e-15)


def test_inertia_beyond_rounding_is_refused_with_the_eigenvalues():
    xml = cases.robot('bad', ARM + [_inertia_link('antenna', 1e-4, 2e-4, 1e-4, 1e-4),
                                    J('ja', 'revolute', 'l2', 'antenna', axis=(0, 0, 1),
                                      limit=cases.LIM)])
    with pytest.raises(URDFError, match=r"link 'antenna': inertia is not positive "
                                        r"semi-definite beyond rounding \(principal moments "
                                        r"\[-0\.0001, 0\.0001, 0\.0003\]"):
        import_urdf(xml)


def test_massless_joint_is_held_by_the_simulation():
    xml, _ = quirks()['massless']
    system, _ = _import(xml)
    assert [c.name for c in system.kin_configs] == ['f1']
    assert system.urdf.input_names == ['j1', 'j2']
    assert np.linalg.eigvalsh(system.mass_matrix()).min() > 0
    sim = Simulation(system, 0.01, initial_positions={'f1': 0.3})
    sim.set_commands({'j1': 1.0})
    sim.step(20)
    q = sim.state().positions
    assert q[system.get_config('f1').index] == 0.3 and q[system.get_config('j1').index] != 0


def test_massless_error_option_and_dependent_joints():
    xml, _ = quirks()['massless']
    with pytest.raises(URDFError, match=r"'f1'.*'finger1'"):
        import_urdf(xml, massless='error')
    # two joints on one axis with a massless link between them: the second is dependent
    dup = cases.robot('dup', [L('a'), L('m'), L('b', I(1.0, (0.3, 0, 0))),
                              J('ja', 'continuous', 'a', 'm', axis=(0, 0, 1)),
                              J('jb', 'continuous', 'm', 'b', axis=(0, 0, 1))])
    system, caught = _import(dup)
    assert [c.name for c in system.kin_configs] == ['jb']
    assert "joint 'jb': moves mass only along directions that earlier joints" in caught[0]


def test_robot_without_moving_joints_simulates():
    xml = cases.robot('rigid', [L('a', I(1.0)), L('b', I(2.0)),
                                J('f', 'fixed', 'a', 'b', (0, 0, 1))])
    system, caught = _import(xml)
    assert system.nQ == 0 and caught == [] and system.urdf.warnings == ()
    mvi = trep.MidpointVI(system)
    mvi.initialize_from_state(0.0, [], [])
    mvi.step(0.01, [], [])
    assert mvi.t2 == 0.01
    sim = Simulation(system, 0.01)
    sim.step(5)
    state = sim.state()
    assert abs(state.t - 0.05) < 1e-15 and state.positions.shape == (0,)
    assert sim.link_transforms() == [] and len(sim.static_transforms()) == 1


def test_robot_without_name_is_still_refused():
    with pytest.raises(URDFError):
        import_urdf('<robot><link name="a"/></robot>')


# ---------------------------------------------------------------------- planar, floating
def _body(jtype, axis=(0, 0, 1), xyz=(0.1, 0.2, 0.3), rpy=(0.2, -0.1, 0.4)):
    return cases.robot('b', [L('ground'),
                             L('puck', I(2.0, (0.3, -0.2, 0.1), (0.1, 0.2, 0.3), IA)),
                             J('j', jtype, 'ground', 'puck', xyz, rpy, axis)])


def test_planar_joint_configs_and_closed_form_mass_matrix():
    m, cx, cy = 2.0, 0.3, -0.2
    Izz = 0.7
    xml = cases.robot('p', [L('ground'), L('puck', I(m, (cx, cy, 0), I=(0.5, 0, 0, 0.6, 0, Izz))),
                            J('j', 'planar', 'ground', 'puck', axis=(0, 0, 1))])
    system, caught = _import(xml, gravity=(0, 0, -9.81))
    assert [c.name for c in system.configs] == ['j_x', 'j_y', 'j_yaw'] and caught == []
    assert system.urdf.joint_names == ['j_x', 'j_y', 'j_yaw']
    for psi in (0.0, 0.7, -2.1):
        system.q = [0.4, -0.3, psi]
        s, c = np.sin(psi), np.cos(psi)
        M = np.array([[m, 0, -m * (s * cx + c * cy)], [0, m, m * (c * cx - s * cy)],
                      [0, 0, Izz + m * (cx ** 2 + cy ** 2)]])
        M[1:, 0], M[2, 1] = M[0, 1:], M[1, 2]
        assert np.abs(system.mass_matrix() - M).max() < 1e-14
        assert np.abs(system.gravity_forces()).max() < 1e-14        # motion in a level plane
    # free motion: the centre of mass moves in a straight line at constant speed
    system.q = [0, 0, 0]
    sim = Simulation(system, 0.001, initial_velocities={'j_x': 0.5, 'j_y': 0.2, 'j_yaw': 1.0})

    def com():
        x, y, psi = sim.state().positions
        return np.array([x + np.cos(psi) * cx - np.sin(psi) * cy,
                         y + np.sin(psi) * cx + np.cos(psi) * cy])
    c0 = com()
    sim.step(1000)
    c1 = com()
    v0 = np.array([0.5, 0.2]) + 1.0 * np.array([-cy, cx])
    assert np.abs(c1 - (c0 + v0 * 1.0)).max() < 1e-7     # O(dt^2) of the midpoint rule
    assert abs(sim.state().velocities[2] - 1.0) < 1e-7


@pytest.mark.parametrize('axis', [(0, 0, 1), (0, 1, 0), (1, -2, 0.5)])
def test_planar_joint_poses_and_energy_equal_pinocchio(axis):
    xml = _body('planar', axis)
    system, _ = _import(xml)
    model = pin.buildModelFromXML(xml)
    data = model.createData()
    rng = np.random.default_rng(3)
    for _ in range(3):
        x, y, psi = system.q = rng.uniform(-1, 1, 3)
        system.dq = rng.uniform(-1, 1, 3)
        if tuple(axis) != (0, 0, 1):
            continue        # Pinocchio's planar joint is always normal to z; poses below
        qp = np.array([x, y, np.cos(psi), np.sin(psi)])
        pin.framesForwardKinematics(model, data, qp)
        ref = data.oMf[model.getFrameId('puck', pin.BODY)].homogeneous
        assert np.abs(system.urdf.link_pose('puck') - ref).max() < 1e-14
        R = ref[:3, :3]
        Rz = np.array([[np.cos(psi), -np.sin(psi)], [np.sin(psi), np.cos(psi)]])
        v = np.concatenate([Rz.T @ system.dq[:2], [system.dq[2]]])   # body-frame velocity
        T = pin.computeKineticEnergy(model, data, qp, v)
        assert abs(system.kinetic_energy() - T) < 1e-13 and R.shape == (3, 3)
    # any axis: the child moves in the plane normal to the axis, rotating about it
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    system.q = [0, 0, 0]
    G0 = system.urdf.link_pose('puck')
    system.q = [0.3, -0.4, 0.9]
    G1 = system.urdf.link_pose('puck')
    R_joint = G0[:3, :3]
    assert abs((G1[:3, 3] - G0[:3, 3]) @ (R_joint @ a)) < 1e-14
    rel = R_joint.T @ G1[:3, :3] @ G0[:3, :3].T @ R_joint
    assert np.abs(rel @ a - a).max() < 1e-14


def test_floating_joint_is_a_free_joint_or_euler_and_matches_pinocchio():
    xml = _body('floating', None)
    model = pin.buildModelFromXML(xml)
    data = model.createData()
    # native: a free joint, imported without a warning, not actuated
    system, caught = _import(xml, strict=True)
    assert caught == []
    assert [c.name for c in system.configs] == ['j_x', 'j_y', 'j_z', 'j_rx', 'j_ry', 'j_rz']
    assert system.nu == 0 and len(system.free_joints) == 1
    joint = system.free_joints[0]
    rng = np.random.default_rng(4)
    for _ in range(3):
        R0 = pin.rpy.rpyToMatrix(*rng.uniform(-3, 3, 3))
        pose = np.eye(4)
        pose[:3, :3] = R0
        joint.set_pose(pose)
        q = system.q = np.concatenate([rng.uniform(-1, 1, 3), rng.uniform(-0.5, 0.5, 3)])
        R = R0 @ pin.rpy.rpyToMatrix(q[3], 0, 0) @ pin.rpy.rpyToMatrix(0, q[4], 0) \
            @ pin.rpy.rpyToMatrix(0, 0, q[5])
        qp = np.concatenate([q[:3], pin.Quaternion(R).coeffs()])
        pin.framesForwardKinematics(model, data, qp)
        ref = data.oMf[model.getFrameId('puck', pin.BODY)].homogeneous
        assert np.abs(system.urdf.link_pose('puck') - ref).max() < 1e-14
        assert np.abs(joint.body.g() - ref).max() < 1e-14
    system, caught = _import(xml, floating_base='euler')
    names = ['j_x', 'j_y', 'j_z', 'j_yaw', 'j_pitch', 'j_roll']
    assert [c.name for c in system.configs] == names
    assert len(caught) == 1 and 'singular at pitch = +-90 deg' in caught[0]
    import_urdf(xml, floating_base='euler', strict=True)     # asked for: not a quirk
    model = pin.buildModelFromXML(xml)
    data = model.createData()
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = system.q = rng.uniform(-1, 1, 6)
        R = pin.rpy.rpyToMatrix(q[5], q[4], q[3])
        qp = np.concatenate([q[:3], pin.Quaternion(R).coeffs()])
        pin.framesForwardKinematics(model, data, qp)
        ref = data.oMf[model.getFrameId('puck', pin.BODY)].homogeneous
        assert np.abs(system.urdf.link_pose('puck') - ref).max() < 1e-14
        assert abs(system.potential_energy() - pin.computePotentialEnergy(model, data, qp)) \
            < 1e-12
