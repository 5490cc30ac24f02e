"""Mimic joints as an exact reduction of coordinates (mimic frames).

A mimic frame follows a config, ``theta = multiplier * q_leader + offset``: no config, no
constraint.  Checked here against Pinocchio's own reduced mimic model, against the
constraint formulation (trep's ``Mimic``), against finite differences, and through the
compiled integrator, the Simulation's joint states and tf.
"""
import warnings

import numpy as np
import pinocchio as pin
import pytest

import ros_vi as trep
from ros_vi import mimic, rx, ry, rz, tx, ty, tz
from ros_vi.mechanics import dynamics
from ros_vi.simulation import Simulation
from ros_vi.urdf import URDFError, import_urdf

import test_urdf_cases as cases
from test_urdf import Oracle

TOL = 1e-12


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


def _damped_mimic_robot():
    """cases.mimic_robot with damping on a mimic joint and on its leader."""
    xml = cases.mimic_robot()
    xml = xml.replace('<mimic joint="jb" multiplier="-1.5"',
                      '<dynamics damping="0.3"/><mimic joint="jb" multiplier="-1.5"')
    assert 'damping="0.3"' in xml
    return xml


def _consistent(q_red):
    """Full (ja, jb, jc, jd) of cases.mimic_robot from reduced (ja, jb)."""
    qa, qb = q_red
    return np.array([qa, qb, -1.5 * qb + 0.2, 0.25 * qb - 0.05])


# ---------------------------------------------------------------------- structure
def test_reduced_import_has_no_mimic_configs_or_constraints():
    system = import_urdf(cases.mimic_robot())
    robot = system.urdf
    assert robot.joint_names == ['ja', 'jb']
    assert robot.mimic_joint_names == ['jc', 'jd']
    assert robot.fixed_joint_names == []
    assert robot.input_names == ['ja', 'jb']
    assert system.nQ == 2 and system.nc == 0 and system.model.nt == 4
    assert trep.MidpointVI(system).compiled
    frame = robot.link_frame('c')
    assert frame.config is None and frame.mimic.leader is system.get_config('jb')
    assert (frame.mimic.multiplier, frame.mimic.offset, frame.mimic.name) == (-1.5, 0.2, 'jc')
    system.q = [0.3, -0.4]
    assert frame.transform_value == pytest.approx(-1.5 * -0.4 + 0.2, abs=1e-15)


def test_reduced_mimic_matches_pinocchio_mimic_model():
    """Mass matrix, gravity, bias forces, energies, link poses and body velocities of the
    reduced model equal Pinocchio's (its mimic model is a reduction too)."""
    xml = cases.mimic_robot()
    system = import_urdf(xml)
    robot = system.urdf
    reduced = Oracle(xml, mimic=True)
    full = Oracle(xml)
    constrained = import_urdf(xml, mimic='constraint')
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v = rng.uniform(-1, 1, 2), rng.uniform(-1, 1, 2)
        system.q, system.dq = q, v
        m, d = reduced.model, reduced.data
        M = pin.crba(m, d, q)
        M = np.triu(M) + np.triu(M, 1).T
        assert _rel(system.mass_matrix(), M) < TOL
        assert _rel(system.gravity_forces(), pin.computeGeneralizedGravity(m, d, q)) < TOL
        b = pin.nonLinearEffects(m, d, q, v)
        assert _rel(system.bias_forces(), b) < TOL
        constrained.q, constrained.dq = _consistent(q), _consistent(v) - [0, 0, 0.2, -0.05]
        fq, fv, _ = full.state(constrained, ['ja', 'jb', 'jc', 'jd'])
        _, _, _, T, V = full.quantities(fq, fv)
        assert _rel(system.kinetic_energy(), T) < TOL
        assert _rel(system.potential_energy(), V) < TOL
        fm, fd = full.model, full.data
        pin.forwardKinematics(fm, fd, fq, fv)
        pin.updateFramePlacements(fm, fd)
        for link in robot.link_names:
            assert _rel(robot.link_pose(link), full.link_pose(link)) < TOL
            ref = pin.getFrameVelocity(fm, fd, fm.getFrameId(link, pin.BODY), pin.LOCAL)
            lin, ang = robot.link_body_velocity(link)
            assert _rel(lin, ref.linear) < TOL and _rel(ang, ref.angular) < TOL
        tau = rng.uniform(-1, 1, 2)
        system.u = tau
        assert _rel(system.f(), np.linalg.solve(M, tau - b)) < 1e-9


def test_reduced_and_constraint_formulations_give_the_same_motion():
    """Same trajectory, inputs and damping on a mimic joint included (the reduced damping
    multiplier^2 c on the leader is exact)."""
    xml = _damped_mimic_robot()
    red = import_urdf(xml)
    con = import_urdf(xml, mimic='constraint')
    assert red.urdf.damping_coefficients.tolist() == [0.0, 0.0]     # URDF data per joint
    assert red.urdf.forces['damping'].coefficient_vector().tolist() == [0.0, 0.3 * 1.5 ** 2]
    a = trep.MidpointVI(red, tolerance=1e-13)
    b = trep.MidpointVI(con, tolerance=1e-13)
    assert a.compiled and b.compiled       # Mimic constraints are a built-in kind
    q0 = np.array([0.4, -0.7])
    a.initialize_from_state(0.0, q0, np.zeros(2))
    b.initialize_from_state(0.0, _consistent(q0), np.zeros(4))
    worst = 0.0
    for k in range(1, 301):
        u = [np.sin(0.05 * k), 0.5 * np.cos(0.03 * k)]
        a.step(0.01 * k, u)
        b.step(0.01 * k, u)
        worst = max(worst, np.abs(a.q2 - b.q2[:2]).max())
        assert np.abs(_consistent(a.q2) - b.q2).max() < 1e-9
    assert worst < 1e-9
    assert np.abs(a.q2 - q0).max() > 0.1       # it moved


def test_compiled_reduced_step_matches_general_path_and_finite_differences():
    system = import_urdf(_damped_mimic_robot())
    fast = trep.MidpointVI(system)
    slow = trep.MidpointVI(system, fast=False)
    assert fast.compiled and not slow.compiled
    for mvi in (fast, slow):
        mvi.initialize_from_state(0.0, [0.4, -0.7], [0.1, -0.2])
        for k in range(1, 51):
            mvi.step(0.01 * k, [0.3, -0.2])
    assert np.abs(fast.q2 - slow.q2).max() < 1e-10
    assert np.abs(fast.p2 - slow.p2).max() < 1e-10
    # first derivatives of the compiled step against central differences of step()
    q1, p1, t1 = fast.q2.copy(), fast.p2.copy(), fast.t2
    u = np.array([0.3, -0.2])
    fast.initialize_from_state(t1, q1, p1)
    fast.step(t1 + 0.01, u)
    Jq, Jp = fast.q2_dq1(), fast.q2_dp1()
    slow.initialize_from_state(t1, q1, p1)
    slow.step(t1 + 0.01, u)
    assert np.abs(Jq - slow.q2_dq1()).max() < 1e-9
    h = 1e-6
    for i in range(2):
        cols = []
        for arg in ('q', 'p'):
            out = []
            for sgn in (1, -1):
                dq = np.zeros(2)
                dq[i] = sgn * h
                fast.initialize_from_state(t1, q1 + (dq if arg == 'q' else 0),
                                           p1 + (dq if arg == 'p' else 0))
                fast.step(t1 + 0.01, u)
                out.append(fast.q2)
            cols.append((out[0] - out[1]) / (2 * h))
        assert np.abs(cols[0] - Jq[:, i]).max() < 1e-7
        assert np.abs(cols[1] - Jp[:, i]).max() < 1e-7


# ---------------------------------------------------------------------- frame tree API
def _hand():
    """A python-built system: a chain, a mimic of a dynamic config, a mimic downstream of
    a mimic (following another config), a mimic of a kinematic config."""
    s = trep.System()
    s.import_frames([
        rz('base'), [
            tx(0.3), [
                ry('finger', mass=[0.2, 0.01, 0.02, 0.03]), [
                    tz(0.1, mass=[0.1, 0.001, 0.002, 0.003]),
                ],
                ry(mimic('finger', -0.8, 0.1), name='twin'), [
                    tz(0.12, mass=[0.15, 0.002, 0.001, 0.003]), [
                        rx(mimic('base', 0.5, -0.2), name='tip'), [
                            ty(0.05, name='tip_end', mass=[0.05, 1e-4, 1e-4, 1e-4]),
                        ],
                    ],
                ],
                tx(mimic('slide', 2.0), name='follower'), [
                    tz(0.02, name='follower_end', mass=0.05),
                ],
            ],
            tx('slide', kinematic=True), [tz(0.0, mass=0.01)],
        ],
    ])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    return s


def _fd(fun, q, h=1e-6):
    """Central differences of fun(q) (any shape) w.r.t. each entry of q: (nq, ...)."""
    out = []
    for i in range(q.size):
        dq = np.zeros(q.size)
        dq[i] = h
        out.append((fun(q + dq) - fun(q - dq)) / (2 * h))
    return np.array(out)


def test_frame_pose_and_velocity_derivatives_through_mimic_frames():
    s = _hand()
    assert s.model.nt == s.nQ + 3
    rng = np.random.default_rng(7)
    q = rng.uniform(-1, 1, s.nQ)
    dq = rng.uniform(-1, 1, s.nQ)

    def at(q, attr, *args):
        s.q = q
        s.dq = dq
        return getattr(tip, attr)(*args)
    for name in ('tip_end', 'follower_end'):
        tip = s.get_frame(name)
        for c in s.configs:
            k = c.index
            g1 = _fd(lambda x: at(x, 'g'), q)
            s.q, s.dq = q, dq
            assert np.abs(tip.g_dq(c) - g1[k]).max() < 1e-8
            for c2 in s.configs:
                g2 = _fd(lambda x: at(x, 'g_dq', c2), q)
                s.q, s.dq = q, dq
                assert np.abs(tip.g_dqdq(c, c2) - g2[k]).max() < 1e-8
                vb2 = _fd(lambda x: at(x, 'vb_ddq', c2), q)
                s.q, s.dq = q, dq
                assert np.abs(tip.vb_ddqdq(c2, c) - vb2[k]).max() < 1e-8
            vb1 = _fd(lambda x: at(x, 'vb'), q)
            s.q, s.dq = q, dq
            assert np.abs(tip.vb_dq(c) - vb1[k]).max() < 1e-8
            s.q, s.dq = q, dq
            assert tip.uses_config(c) == bool(np.abs(g1[k]).max() > 0)
        # vb = sum_c vb_ddq(c) dq_c (linear in the velocities)
        s.q, s.dq = q, dq
        total = sum(tip.vb_ddq(c) * dq[c.index] for c in s.configs)
        assert np.abs(tip.vb() - total).max() < 1e-12
    assert not s.get_frame('follower_end').uses_config('finger')


def test_constraints_and_springs_on_mimic_frames_have_exact_derivatives():
    s = _hand()
    trep.constraints.PointToPoint3D(s, 'tip_end', 'World')
    trep.constraints.Distance(s, 'tip_end', 'follower_end', 0.3)
    trep.potentials.LinearSpring(s, 'tip_end', 'World', k=3.0, x0=0.1)
    s.q = np.random.default_rng(2).uniform(-1, 1, s.nQ)
    for con in s.constraints:
        for check in ('validate_h_dq', 'validate_h_dqdq', 'validate_h_dqdqdq'):
            assert getattr(con, check)(), (con, check)
    for pot in s.potentials:
        for check in ('validate_V_dq', 'validate_V_dqdq', 'validate_V_dqdqdq'):
            assert getattr(pot, check)(), (pot, check)


def test_mimic_frames_export_and_reimport():
    s = _hand()
    code = s.export_frames()
    assert "mimic('finger', -0.8, 0.1, name='twin')" in code
    env = {'trep': trep, 'np': np, 'system': None}
    exec('from ros_vi import *\nfrom ros_vi import mimic\nimport numpy as np\n'
         'system = trep.System()\n' + code, env)
    copy = env['system']
    trep.potentials.Gravity(copy, (0, 0, -9.8))
    q = np.random.default_rng(0).uniform(-1, 1, s.nQ)
    s.q = q
    copy.q = q
    assert np.abs(s.mass_matrix() - copy.mass_matrix()).max() < 1e-15
    assert 'mimic(' in s.get_frame('twin').tree_view()


def test_mimic_frames_refuse_bad_use():
    s = trep.System()
    with pytest.raises(KeyError, match="mimics config 'nope'"):
        s.import_frames([rz(mimic('nope'))])
    s = trep.System()
    s.import_frames([rz('a'), [tz(1.0, mass=1.0)]])
    with pytest.raises(ValueError, match='cannot be kinematic'):
        trep.Frame(s.world_frame, trep.RX, mimic('a'), kinematic=True)
    f = trep.Frame(s.world_frame, trep.RX, mimic('a', 2.0), name='m')
    with pytest.raises(ValueError, match="follows config 'a'"):
        f.transform_value = 1.0
    with pytest.raises(ValueError, match='finite'):
        mimic('a', np.nan)
    with pytest.raises(TypeError):
        mimic(3)
    with pytest.raises(URDFError, match="'jc' is a mimic joint"):
        import_urdf(cases.mimic_robot(), actuated=['ja', 'jc'])
    assert import_urdf(cases.mimic_robot(), mimic='constraint',
                       actuated=['ja', 'jc']).urdf.input_names == ['ja', 'jc']
    with pytest.raises(ValueError, match="mimic must be"):
        import_urdf(cases.mimic_robot(), mimic='soft')


def test_friction_on_a_reduced_mimic_joint_is_reported():
    xml = cases.mimic_robot().replace(
        '<mimic joint="jb" multiplier="-1.5"',
        '<dynamics friction="0.2"/><mimic joint="jb" multiplier="-1.5"')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot = import_urdf(xml, friction=True).urdf
    assert any(w.name == 'jc' and 'friction' in w.problem for w in robot.warnings)
    assert not import_urdf(xml).urdf.warnings          # friction not asked for: nothing lost


def test_simulation_publishes_mimic_joints_in_states_and_tf():
    system = import_urdf(cases.mimic_robot())
    sim = Simulation(system, dt=0.01, initial_positions={'ja': 0.2, 'jb': -0.6},
                     initial_velocities={'jb': 0.5})
    sim.set_commands({'ja': 0.1})
    for _ in range(5):
        sim.tick()
    state = sim.state()
    assert state.joint_names == ['ja', 'jb']
    assert state.mimic_names == ['jc', 'jd']
    qb, vb = state.positions[1], state.velocities[1]
    assert np.abs(state.mimic_positions - [-1.5 * qb + 0.2, 0.25 * qb - 0.05]).max() < 1e-15
    assert np.abs(state.mimic_velocities - [-1.5 * vb, 0.25 * vb]).max() < 1e-15
    moving = {child: g for _, child, g in sim.link_transforms()}
    assert {'a', 'b', 'c', 'd'} <= set(moving)
    robot = system.urdf
    with system.evaluate_at(sim.output_data()):
        a, c = robot.link_pose('a'), robot.link_pose('c')
    assert np.abs(np.linalg.inv(a) @ c - moving['c']).max() < 1e-12
