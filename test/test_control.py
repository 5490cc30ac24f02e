"""Control laws designed on the MidpointVI step: LQR gains (trep's tutorial numbers, DARE,
spectral radius), equilibria, hand-over hysteresis, and the closed-loop swing-ups run in one
process at the controller's dt with saturation at the documented limits."""
import math

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import rx, tz
from ros_vi.control import (DEMOS, LQR, ControlOutput, Controller, SwingUpAndBalance,
                            cartpole_model, find_equilibrium)
from ros_vi.simulation import settle_time, simulate, summarize


def tutorial_pendulum():
    """trep's tutorial pendulum: rx('theta'), tz(-1) mass 1, g 9.8, Damping 1.0."""
    s = trep.System()
    s.import_frames([rx('theta'), [tz(-1.0, mass=1.0)]])
    trep.potentials.Gravity(s, (0, 0, -9.8))
    trep.forces.Damping(s, 1.0)
    trep.forces.ConfigForce(s, 'theta', 'theta-torque')
    return s


# ---------------------------------------------------------------------- LQR design
def test_trep_tutorial_finite_horizon_gain():
    lqr = LQR(tutorial_pendulum(), 0.1, {'theta': math.pi}, Q=np.eye(2), R=np.eye(1),
              horizon=50)
    assert np.round(lqr.K, 4).tolist() == [[15.3217, 4.1399]]


def test_finite_horizon_gain_equals_dsystem_calc_feedback_controller():
    s = tutorial_pendulum()
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_configs(0.0, [0.75 * math.pi], 0.1, [0.75 * math.pi])
    t = np.arange(0.0, 5.0 + 0.1, 0.1)
    dsys = trep.discopt.DSystem(mvi, t)
    X, U = dsys.build_trajectory(np.full((len(t), 1), math.pi))
    K_trep = dsys.calc_feedback_controller(X, U, lambda k: np.eye(2), lambda k: np.eye(1))[0]
    lqr = LQR(tutorial_pendulum(), 0.1, [math.pi], horizon=len(t) - 1)
    np.testing.assert_allclose(lqr.K, K_trep, rtol=1e-12, atol=1e-12)


def test_infinite_horizon_gain_solves_the_riccati_equation():
    lqr = LQR(tutorial_pendulum(), 0.1, [math.pi])
    A, B, P, Q, R, K = lqr.A, lqr.B, lqr.P, lqr.Q, lqr.R, lqr.K
    residual = A.T @ P @ A - P - A.T @ P @ B @ np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A) + Q
    assert np.abs(residual).max() < 1e-9 * np.abs(P).max()
    np.testing.assert_allclose(K, np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A))
    # the 50-step finite horizon has converged to it at 4 decimals
    np.testing.assert_allclose(K, [[15.3217, 4.1399]], atol=5e-5)


def test_linearisation_is_the_vi_step_derivative():
    """A, B against central differences of the VI step itself."""
    lqr = DEMOS['cartpole'].lqr(cartpole_model())
    e, s = lqr.equilibrium, lqr.system
    mvi = trep.MidpointVI(s)

    def step(x, u):
        mvi.initialize_from_state(0.0, x[:2], x[2:])
        mvi.step(lqr.dt, lqr.full_input(e.u + u))
        return np.concatenate([mvi.q2, mvi.p2])
    x0, h = np.concatenate([e.q, e.p]), 1e-6
    A = np.column_stack([(step(x0 + h * d, 0) - step(x0 - h * d, 0)) / (2 * h)
                         for d in np.eye(4)])
    B = (step(x0, h) - step(x0, -h))[:, None] / (2 * h)
    np.testing.assert_allclose(lqr.A, A, atol=1e-7)
    np.testing.assert_allclose(lqr.B, B, atol=1e-7)


def test_equilibrium_under_gravity_holds_the_pendulum():
    """At 90 degrees the holding torque is m g l and the discrete momentum -dt/2 dV/dq."""
    s = tutorial_pendulum()
    dt = 0.05
    e = find_equilibrium(s, dt, [math.pi / 2], [0])
    assert e.u[0] == pytest.approx(9.8, rel=1e-9)
    assert e.p[0] == pytest.approx(-dt / 2 * 9.8, rel=1e-9)
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_state(0.0, e.q, e.p)
    for k in range(20):
        mvi.step((k + 1) * dt, e.u)
    np.testing.assert_allclose(mvi.q2, e.q, atol=1e-10)


def test_unholdable_goal_names_the_problem():
    s = cartpole_model()
    with pytest.raises(ValueError, match='not an equilibrium'):
        LQR(s, 0.01, {'cart': 0.0, 'pole': math.pi / 2})
    with pytest.raises(ValueError, match="missing \\['pole'\\]"):
        LQR(s, 0.01, {'cart': 0.0})


@pytest.mark.parametrize('name, offset', [('pendulum', 0.3), ('cartpole', 0.3),
                                          ('acrobot', 0.09), ('acrobot', -0.09)])
def test_lqr_alone_balances_from_off_upright(name, offset):
    """From ``offset`` rad off upright on the unactuated (pendulum: only) angle, at rest,
    under the effort limits.  The acrobot (Spong's parameters, 20 N m) cannot be recovered
    from 0.3 rad by a linear law: to bring the shoulder back the LQR swings the elbow ~17x
    the shoulder offset (0.09 rad -> 1.5 rad), and from 0.1 rad on it leaves the region where
    the linearisation holds and falls even with unlimited torque; 0.09 rad is the largest
    offset (0.01 rad steps) it recovers from."""
    demo = DEMOS[name]
    lqr = demo.lqr(demo.model())
    assert lqr.spectral_radius < 1
    assert max(abs(np.linalg.eigvals(lqr.A - lqr.B @ lqr.K))) == lqr.spectral_radius
    start = demo.goal.copy()
    start[-1 if name == 'cartpole' else 0] += offset
    r = simulate(lqr, demo.model(), 10.0, start)
    err = summarize(r, demo.goal)
    assert np.abs(err['final_error']).max() < 1e-3 and np.abs(err['final_velocity']).max() < 1e-2
    assert np.all(np.abs(r.u) <= lqr.u_max)


def test_angles_wrap_to_the_goal_branch():
    lqr = LQR(tutorial_pendulum(), 0.1, [math.pi])
    u1 = lqr.compute([math.pi + 0.1], [0.0]).u
    u2 = lqr.compute([-math.pi + 0.1 - 4 * math.pi], [0.0]).u
    np.testing.assert_allclose(u1, u2, atol=1e-9)


# ---------------------------------------------------------------------- interface
def test_bad_state_is_refused_naming_the_joint():
    c = DEMOS['cartpole'].controller(cartpole_model())
    with pytest.raises(ValueError, match="not finite for joints \\['pole'\\]"):
        c.compute([0.0, float('nan')], [0.0, 0.0])
    with pytest.raises(ValueError, match='expected 2 values'):
        c.compute([0.0], [0.0, 0.0])


def test_controller_drives_only_actuated_joints():
    c = DEMOS['cartpole'].controller(cartpole_model())
    assert c.joint_names == ['cart', 'pole'] and c.input_names == ['cart']
    assert c.u_max.tolist() == [30.0]
    out = c.compute([0.0, math.pi], [0.0, 0.0])
    assert isinstance(out, ControlOutput) and out.u.shape == (1,) and out.mode == 'kick'
    assert out.energy_error == pytest.approx(-2 * 0.1 * 9.81 * 0.5, rel=1e-6)


class _Scripted(Controller):
    def __init__(self, system, mode):
        Controller.__init__(self, system, 0.1)
        self.mode = mode

    def _law(self, q, v):
        return ControlOutput(np.zeros(1), self.mode, 0.0)


def test_hand_over_hysteresis():
    s = tutorial_pendulum()
    lqr = LQR(s, 0.1, [math.pi], u_max=5.0)
    c = SwingUpAndBalance(_Scripted(s, 'swingup'), lqr, c_in=1.0, c_out=4.0)
    assert c.c_in < c.c_out

    def at_cost(V):          # a state on the ray theta - pi with cost V
        x = np.array([1.0, 0.0])
        scale = math.sqrt(V / (x @ lqr.P @ x))
        return [math.pi + scale], [0.0]
    modes = [c.compute(*at_cost(V)).mode for V in (8.0, 2.0, 0.5, 2.0, 3.9, 4.1, 2.0, 0.9)]
    assert modes == ['swingup', 'swingup', 'balance', 'balance', 'balance', 'swingup',
                     'swingup', 'balance']
    # default region: the largest cost level on which the LQR does not saturate
    d = SwingUpAndBalance(_Scripted(s, 'swingup'), lqr)
    x = np.linalg.solve(lqr.P, lqr.K[0])
    x *= math.sqrt(d.c_in / (x @ lqr.P @ x))           # the worst direction on the boundary
    assert abs(lqr.K[0] @ x) == pytest.approx(5.0, rel=1e-9)


# ---------------------------------------------------------------------- closed loops
def test_pendulum_swings_up_and_balances():
    """trep tutorial pendulum (m=1, l=1, g=9.8, damping 1.0), |u| <= 5 from rest hanging."""
    demo = DEMOS['pendulum']
    c = demo.controller(demo.model())
    r = simulate(c, demo.model(), 15.0, [0.0])
    assert np.abs(r.u).max() <= 5.0 + 1e-12
    t_up = settle_time(r, demo.goal, 0.05, 0.1)
    assert t_up <= 10.0 and r.t[-1] - t_up >= 5.0
    assert r.mode[0] == 'kick' and r.mode[-1] == 'balance'


def test_cartpole_swings_up_and_balances_near_the_origin():
    """Shipped cart-pole, force limit 30 N (URDF), from rest hanging."""
    demo = DEMOS['cartpole']
    c = demo.controller(demo.model())
    r = simulate(c, demo.model(), 25.0, demo.start)
    assert np.abs(r.u).max() <= 30.0 + 1e-12
    assert np.abs(r.q[:, 0]).max() < 2.4                   # stays on the rail
    up = settle_time(r, demo.goal, [0.5, 0.05], np.inf)    # |x| < 0.5, |pole| < 0.05
    assert up <= 20.0 and r.t[-1] - up >= 5.0


def test_acrobot_swings_up_and_balances():
    """Shipped acrobot (Spong's parameters, elbow torque limit 20 N m from the URDF), from rest
    hanging: Spong's energy-based PFL swing-up and the LQR catch put it within 0.05 rad of
    upright (per joint, wrapped) within 30 s and keep it there for at least 5 s."""
    demo = DEMOS['acrobot']
    c = demo.controller(demo.model())
    assert c.input_names == ['elbow'] and c.u_max.tolist() == [20.0]
    r = simulate(c, demo.model(), 35.0, demo.start)
    assert np.abs(r.u).max() <= 20.0 + 1e-12
    t_up = settle_time(r, demo.goal, 0.05, np.inf)
    assert t_up <= 30.0 and r.t[-1] - t_up >= 5.0
    assert r.mode[0] == 'kick' and 'swingup' in r.mode and r.mode[-1] == 'balance'
    # the swing-up really pumped: the energy error went from -(E_up - E_down) to ~0
    assert r.energy_error[0] == pytest.approx(-(c.swingup.goal_energy
                                                 - c.swingup.energy([0, 0], [0, 0])))
    assert abs(r.energy_error[-1]) < 1e-6


def test_acrobot_pfl_gives_the_commanded_elbow_acceleration():
    """The collocated PFL terms come from the model: with τ = M̄ y + h̄ the plant's elbow
    acceleration is y (no saturation), at a generic moving state."""
    demo = DEMOS['acrobot']
    swing = demo.controller(demo.model()).swingup
    plant = demo.model()
    q, v = np.array([0.7, -1.1]), np.array([1.3, -0.4])
    m_bar, h_bar = swing.pfl_terms(q, v)
    for y in (-3.0, 0.5, 7.0):
        plant.q, plant.dq = q, v
        plant.u = swing.full_input([m_bar * y + h_bar], plant)
        assert plant.f()[swing.active] == pytest.approx(y, rel=1e-10, abs=1e-10)


def test_closed_loop_matches_the_simulation_core():
    """The same loop through ros_vi.simulation.Simulation (what the nodes run in lockstep)
    gives the same trajectory."""
    from ros_vi.simulation import Simulation
    demo = DEMOS['pendulum']
    c = demo.controller(demo.model())
    ref = simulate(c, demo.model(), 3.0, [0.0])
    sim = Simulation(demo.model(), demo.dt, effort_limits=[5.0],
                     initial_positions={'theta': 0.0})
    c.reset()
    qs = []
    for k in range(len(ref.t)):
        st = sim.state()
        qs.append(st.positions.copy())
        if k < len(ref.t) - 1:
            sim.set_command_vector(c.compute(st.positions, st.velocities, st.efforts).u)
            sim.tick()
    # simulate runs on Simulation itself: the hand-written loop is reproduced exactly
    np.testing.assert_array_equal(np.array(qs), ref.q)


def test_simulate_reports_a_failed_tick(monkeypatch):
    """A tick that fails even after the simulation's refinements stops the closed loop
    with ConvergenceError naming the time (the state would only be held); the error carries
    the result up to the last good sample."""
    from ros_vi import ConvergenceError, MidpointVI
    demo = DEMOS['pendulum']
    controller = demo.controller(demo.model())        # designed with the real VI
    real_step, calls = MidpointVI.step, []

    def breaks_at_t_0_5(self, t2, *args, **kwargs):
        if t2 > 0.5 + 1e-9:
            raise ConvergenceError('solver broke')
        calls.append(t2)
        return real_step(self, t2, *args, **kwargs)
    monkeypatch.setattr(MidpointVI, 'step', breaks_at_t_0_5)
    with pytest.raises(ConvergenceError, match=r'tick 25 \(t = 0.5 s -> 0.52 s\) failed: '
                       r'.*state held: solver broke') as info:
        simulate(controller, demo.model(), 1.0, [0.0])
    partial = info.value.result
    assert len(partial.t) == 26 and partial.t[-1] == pytest.approx(0.5)
    assert partial.u.shape == (25, 1) and len(partial.mode) == 25
    monkeypatch.setattr(MidpointVI, 'step', real_step)
    full = simulate(controller, demo.model(), 0.5, [0.0])
    np.testing.assert_array_equal(partial.q, full.q)
    np.testing.assert_array_equal(partial.u, full.u)


def test_simulate_without_a_controller_is_the_free_vi_run():
    """controller None: no commands; the samples are the VI's own steps, and the observer
    sees every published state."""
    from ros_vi import MidpointVI
    plant = DEMOS['pendulum'].model()
    seen = []
    run = simulate(None, plant, 1.0, [2.0], dt=0.01,
                   observer=lambda sim, state: seen.append((state.t, state.positions.copy())))
    reference = DEMOS['pendulum'].model()
    mvi = MidpointVI(reference)
    mvi.initialize_from_state(0.0, [2.0], [0.0])
    q = [mvi.q2.copy()]
    for k in range(1, 101):
        mvi.step(0.01 * k, np.zeros(reference.nu))
        q.append(mvi.q2.copy())
    np.testing.assert_allclose(run.q, q, rtol=0, atol=1e-12)
    assert run.u.shape == (100, 0) and run.iterations.shape == (100,)
    assert run.iterations.min() >= 1 and run.step_time > 0
    assert [t for t, _ in seen] == pytest.approx(run.t)
    np.testing.assert_array_equal([p for _, p in seen], run.q)
    with pytest.raises(ValueError, match='needs dt'):
        simulate(None, plant, 1.0, [0.0])


def test_the_closed_loop_has_one_home():
    """simulate lives with the Simulation it runs on; the control laws know nothing of it
    (no import cycle between control and simulation)."""
    import ros_vi.control
    import ros_vi.simulation
    from ros_vi.simulation import closed_loop
    assert ros_vi.simulation.simulate is closed_loop.simulate
    with pytest.raises(AttributeError):
        ros_vi.control.simulate
