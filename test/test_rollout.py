"""ros_vi.rollout: batched closed-loop runs against independent MidpointVI loops.

The reference here is written out in the test: a MidpointVI of the plant (one Newton
update a step at least, as the simulator's) stepped tick by tick with the controller
object's ``compute`` on the published state ``(q, v = M(q)^-1 p2_end, efforts of the last
tick)`` -- the loop of ``ros_vi.simulation.simulate`` -- so the batch loop, its compiled
laws, its parameters and its reductions are each checked against something they do not
share.
"""
import math

import numpy as np
import pytest

import ros_vi
from ros_vi import MidpointVI
from ros_vi.simulation import settle_time
from ros_vi.control.base import wrap_angles
from ros_vi.control.presets import DEMOS, urdf_path
from ros_vi.mechanics import dynamics
from ros_vi.urdf import import_urdf_file

DT = 0.01


def reference_run(plant, q0, v0, duration, dt, law=None, limits=None, delay=0,
                  tolerance=1e-10):
    """(t, q, v, u) of one copy: MidpointVI ticks, law(t, q, v, efforts) -> (nu,) efforts
    applied ``delay`` ticks later, clipped at ``limits``."""
    from ros_vi.mechanics.inputs import config_efforts
    n = int(round(duration / dt))
    data = plant.model.create_data()
    data.set(q0, np.zeros(plant.nQ))
    mvi = MidpointVI(plant, min_iterations=1, tolerance=tolerance)
    mvi.initialize_from_state(0.0, q0, dynamics.momentum_from_velocity(plant.model, data, v0))
    lim = np.full(plant.nu, np.inf) if limits is None else np.asarray(limits, dtype=float)
    Q, V, U, outputs = [], [], [], []
    for k in range(n + 1):
        q = mvi.q2.copy()
        data.set(q, np.zeros(plant.nQ))
        v = dynamics.velocity_from_momentum(plant.model, data, mvi.p2_end)
        Q.append(q)
        V.append(v)
        if k == n:
            break
        efforts = config_efforts(plant, U[-1] if U else np.zeros(plant.nu))
        outputs.append(np.zeros(plant.nu) if law is None else law(k * dt, q, v, efforts))
        u = outputs[k - delay] if k >= delay else np.zeros(plant.nu)
        u = np.clip(u, -lim, lim)
        U.append(u)
        mvi.step((k + 1) * dt, u)
    return np.arange(n + 1) * dt, np.array(Q), np.array(V), np.array(U)


def object_law(controller, plant):
    """The controller object as law(t, q, v) -> plant input vector."""
    controller.reset()

    def law(t, q, v, efforts):
        return controller.full_input(controller.compute(q, v, efforts).u, plant)
    return law


@pytest.fixture(scope='module')
def pendulum():
    demo = DEMOS['pendulum']
    return demo.model(), demo.controller(demo.model(), dt=DT)


def starts(B, seed=0, scale=1.0, n=1):
    rng = np.random.default_rng(seed)
    return rng.uniform(-scale, scale, (B, n)), rng.uniform(-scale, scale, (B, n))


def test_batch_equals_independent_midpointvi_runs(pendulum):
    plant, controller = pendulum
    q0, v0 = starts(6, scale=2.5)
    q0[0] = 0.0                       # hanging at rest: the kick starts it
    v0[0] = 0.0
    result = ros_vi.rollout(plant, q0, v0, controller, 8.0, DT, record_every=1)
    assert list(result.path) == ['compiled'] * 6 and result.ok.all()
    for b in range(6):
        t, Q, V, U = reference_run(fresh_pendulum(), q0[b], v0[b], 8.0, DT,
                                   object_law(controller, plant))
        # the compiled law and the object's compute differ by rounding (its energy and
        # momentum are summed in another order); the closed loop near the upright keeps
        # that at ~1e-12 over the run (a free run agrees to rounding: next test)
        np.testing.assert_allclose(result.t, t, rtol=0, atol=1e-12)
        np.testing.assert_allclose(result.q_traj[b], Q, rtol=0, atol=5e-12)
        np.testing.assert_allclose(result.v_traj[b], V, rtol=0, atol=5e-11)
        np.testing.assert_allclose(result.u_traj[b, :-1], U, rtol=0, atol=1e-9)
    # the swing-up does its job from rest, and the hand-over mode is reported
    assert result.balancing[0]
    assert abs(wrap_angles(result.q[0] - math.pi, [True])[0]) < 0.05


def test_free_arm_equals_midpointvi():
    plant = import_urdf_file(urdf_path('arm7'))
    q0, v0 = starts(3, seed=1, scale=0.5, n=plant.nQ)
    # both at a tolerance below the comparison's: the copies' initial momenta are M(q0) v0
    # from two computations (1e-15 apart), and the step's chord updates stop just inside
    # the tolerance, so at the default 1e-10 the runs agree to ~5e-12 only
    result = ros_vi.rollout(plant, q0, v0, None, 0.3, 0.001, record_every=50,
                            tolerance=1e-12)
    assert result.ok.all() and set(result.path) == {'compiled'}
    for b in range(3):
        t, Q, V, _ = reference_run(import_urdf_file(urdf_path('arm7')), q0[b], v0[b], 0.3, 0.001,
                                   tolerance=1e-12)
        np.testing.assert_allclose(result.q_traj[b], Q[::50], rtol=0, atol=1e-12)
        np.testing.assert_allclose(result.q[b], Q[-1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(result.v[b], V[-1], rtol=0, atol=1e-12)


def test_general_path_gives_the_same_copies(pendulum):
    plant, controller = pendulum
    q0, v0 = starts(3, seed=2, scale=2.0)
    fast = ros_vi.rollout(plant, q0, v0, controller, 2.0, DT, record_every=10)
    slow = ros_vi.rollout(plant, q0, v0, controller, 2.0, DT, record_every=10, compiled=False)
    assert set(slow.path) == {'general'}
    np.testing.assert_allclose(fast.q_traj, slow.q_traj, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.energy_error, slow.energy_error, rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(fast.balancing, slow.balancing)


def test_threads_do_not_change_results(pendulum):
    plant, controller = pendulum
    q0, v0 = starts(16, seed=3, scale=3.0)
    one = ros_vi.rollout(plant, q0, v0, controller, 1.0, DT, threads=1)
    two = ros_vi.rollout(plant, q0, v0, controller, 1.0, DT, threads=2)
    np.testing.assert_array_equal(one.q, two.q)
    np.testing.assert_array_equal(one.iterations, two.iterations)


def fresh_pendulum():
    return DEMOS['pendulum'].model()


def scaled_copy(scale):
    other = fresh_pendulum()
    for f in other.frames:
        if f.mass > 0:
            f.set_inertia(f.mass * scale, f.inertia * scale)
    return other


def test_per_copy_model_parameters_take_effect(pendulum):
    plant, controller = pendulum
    q0 = np.full((4, 1), 0.8)
    v0 = np.zeros((4, 1))
    params = {'mass_scale': [1.0, 1.3, 1.0, 1.0], 'damping.theta': [1.0, 1.0, 0.2, 1.0],
              'gravity': [9.8, 9.8, 9.8, 3.0]}
    result = ros_vi.rollout(plant, q0, v0, controller, 1.5, DT, params, record_every=1)
    assert set(result.path) == {'compiled'}
    heavy = scaled_copy(1.3)
    light_damping = fresh_pendulum()
    light_damping.forces[0].set_damping_coefficient('theta', 0.2)
    moon = fresh_pendulum()
    moon.potentials[0].gravity = (0.0, 0.0, -3.0)
    for b, p in enumerate([fresh_pendulum(), heavy, light_damping, moon]):
        # the controller keeps its own nominal model; only the plant changes
        _, Q, _, _ = reference_run(p, q0[b], v0[b], 1.5, DT, object_law(controller, plant))
        np.testing.assert_allclose(result.q_traj[b], Q, rtol=0, atol=1e-11)
    assert np.abs(result.q[1] - result.q[0]).max() > 1e-3
    assert np.abs(result.q[3] - result.q[0]).max() > 1e-3


def test_link_mass_parameter_scales_that_link_only():
    plant = DEMOS['cartpole'].model()
    names = ros_vi.batch.parameter_names(plant)
    assert 'mass.pole' in names and 'mass.cart' in names
    q0 = np.array([[0.0, 0.5], [0.0, 0.5]])
    result = ros_vi.rollout(plant, q0, np.zeros((2, 2)), None, 0.5, DT,
                            {'mass.pole': [0.1, 0.25]})
    other = DEMOS['cartpole'].model()
    f = other.get_frame('pole::inertial')
    f.set_inertia(0.25, f.inertia * 2.5)
    _, Q, _, _ = reference_run(other, q0[1], np.zeros(2), 0.5, DT)
    np.testing.assert_allclose(result.q[1], Q[-1], rtol=0, atol=1e-12)
    _, Q0, _, _ = reference_run(DEMOS['cartpole'].model(), q0[0], np.zeros(2), 0.5, DT)
    np.testing.assert_allclose(result.q[0], Q0[-1], rtol=0, atol=1e-12)


def test_effort_limit_and_delay(pendulum):
    plant, controller = pendulum
    q0 = np.full((3, 1), 0.3)
    v0 = np.zeros((3, 1))
    params = {'effort_limit.theta': [5.0, 1.5, 5.0], 'delay': [0.0, 0.0, 0.05]}
    result = ros_vi.rollout(plant, q0, v0, controller, 2.0, DT, params, record_every=1)
    assert result.max_effort[1, 0] == pytest.approx(1.5)
    assert np.nanmax(np.abs(result.u_traj[1])) == pytest.approx(1.5)
    law = object_law(controller, plant)
    _, Q, _, U = reference_run(fresh_pendulum(), q0[1], v0[1], 2.0, DT, law, [1.5])
    np.testing.assert_allclose(result.q_traj[1], Q, rtol=0, atol=1e-11)
    law = object_law(controller, plant)
    _, Q, _, U = reference_run(fresh_pendulum(), q0[2], v0[2], 2.0, DT, law, [5.0],
                               delay=5)
    np.testing.assert_allclose(result.q_traj[2], Q, rtol=0, atol=1e-11)
    assert np.all(result.u_traj[2, :5] == 0.0) and result.u_traj[2, 5, 0] != 0.0


def test_per_copy_controllers(pendulum):
    plant, _ = pendulum
    demo = DEMOS['pendulum']
    gentle = ros_vi.control.PendulumSwingUp(demo.model(), DT, k_energy=0.5, u_max=5.0)
    strong = ros_vi.control.PendulumSwingUp(demo.model(), DT, k_energy=4.0, u_max=5.0)
    q0 = np.full((2, 1), 0.5)
    result = ros_vi.rollout(plant, q0, np.zeros((2, 1)), [gentle, strong], 1.0, DT)
    assert set(result.path) == {'compiled'}
    for b, c in enumerate((gentle, strong)):
        _, Q, _, _ = reference_run(fresh_pendulum(), q0[b], np.zeros(1), 1.0, DT,
                                   object_law(c, plant), [5.0])
        np.testing.assert_allclose(result.q[b], Q[-1], rtol=0, atol=1e-12)
    assert abs(result.q[0, 0] - result.q[1, 0]) > 1e-3


def test_reductions_match_the_trajectory(pendulum):
    plant, controller = pendulum
    q0, v0 = starts(4, seed=5, scale=3.0)
    target = ros_vi.Target(goal=[math.pi], q_tol=0.05, v_tol=0.1)
    result = ros_vi.rollout(plant, q0, v0, controller, 8.0, DT, target=target,
                            record_every=1)

    class Run:      # what settle_time reads
        pass
    for b in range(4):
        run = Run()
        run.t, run.q, run.v, run.angles = result.t, result.q_traj[b], result.v_traj[b], \
            np.array([True])
        expected = settle_time(run, np.array([math.pi]), 0.05, 0.1)
        assert result.time_to_target[b] == pytest.approx(expected, abs=1e-12) or (
            math.isnan(expected) and math.isnan(result.time_to_target[b]))
        assert result.max_effort[b, 0] == pytest.approx(np.nanmax(np.abs(result.u_traj[b])))
    assert np.isfinite(result.time_to_target).sum() >= 2


def test_energy_balance_of_a_free_undamped_arm():
    # without joint limits: an inelastic stop's loss is not counted as work
    plant = import_urdf_file(urdf_path('arm7'), enforce_limits=False)
    for f in plant.forces:
        if isinstance(f, ros_vi.forces.Damping):
            f.default = 0.0
            for c in plant.configs:
                f.set_damping_coefficient(c, None)
    q0, v0 = starts(2, seed=6, scale=0.5, n=plant.nQ)
    result = ros_vi.rollout(plant, q0, v0, None, 0.5, 0.001)
    E = np.array([r for r in result.energy])
    assert np.all(result.energy_error < 1e-3 * np.maximum(1.0, np.abs(E)))
    # with damping on, the balance still closes: the dissipated work is counted
    damped = import_urdf_file(urdf_path('arm7'))
    r2 = ros_vi.rollout(damped, q0, v0, None, 0.5, 0.001, {'damping.joint_1': 2.0})
    assert np.all(r2.energy_error < 1e-3 * np.maximum(1.0, np.abs(r2.energy)))


def test_python_callable_runs_on_the_general_path_and_failures_are_per_copy(pendulum):
    plant, _ = pendulum
    calls = []

    def law(t, q, v):
        calls.append(t)
        if q[0] > 1.0:
            raise RuntimeError('out of range at q=%.3f' % q[0])
        return np.array([-2.0 * q[0] - 0.5 * v[0]])
    q0 = np.array([[0.5], [0.2], [1.5]])
    result = ros_vi.rollout(plant, q0, np.zeros((3, 1)), law, 1.0, DT)
    assert set(result.path) == {'general'}
    assert list(result.ok) == [True, True, False]
    assert 'out of range' in result.error[2] and result.error[0] is None
    _, Q, _, _ = reference_run(fresh_pendulum(), q0[0], np.zeros(1), 1.0, DT,
                               lambda t, q, v, e: np.array([-2.0 * q[0] - 0.5 * v[0]]),
                               [10.0])
    np.testing.assert_allclose(result.q[0], Q[-1], rtol=0, atol=1e-12)
    assert result.t_end[2] == 0.0 and math.isnan(result.time_to_target[2])

    def bad(t, q, v):
        return np.array([np.nan])
    result = ros_vi.rollout(plant, q0[:1], np.zeros((1, 1)), bad, 0.1, DT)
    assert not result.ok[0] and 'finite' in result.error[0]


def test_a_failing_compiled_copy_goes_to_the_general_path():
    """A step the compiled loop cannot take (no root within max_iterations) is finished on
    MidpointVI, which subdivides it; the other copies stay compiled."""
    plant = DEMOS['pendulum'].model()
    q0 = np.array([[0.1], [0.3]])
    v0 = np.array([[0.0], [30.0]])
    result = ros_vi.rollout(plant, q0, v0, None, 0.6, 0.2, max_iterations=2)
    assert result.path[0] == 'compiled' and result.path[1] == 'general'
    mvi = MidpointVI(fresh_pendulum())
    data = plant.model.create_data()
    data.set(q0[1], np.zeros(1))
    mvi.initialize_from_state(0.0, q0[1], dynamics.momentum_from_velocity(
        plant.model, data, v0[1]))
    for k in range(3):
        mvi.step(0.2 * (k + 1), [0.0], max_iterations=2)
    assert result.ok[1]
    np.testing.assert_allclose(result.q[1], mvi.q2, rtol=0, atol=1e-9)


@pytest.mark.parametrize('kwargs, message', [
    (dict(params={'mass_scal': 1.0}), "unknown parameter 'mass_scal'"),
    (dict(params={'damping.elbow': 1.0}), "unknown parameter 'damping.elbow'"),
    (dict(params={'mass_scale': [1.0, 2.0, 3.0]}), "parameter 'mass_scale': expected one"),
    (dict(params={'mass_scale': -1.0}), "parameter 'mass_scale' must be > 0"),
    (dict(params={'delay': -0.1}), "parameter 'delay' must be >= 0"),
    (dict(params={'gravity': np.nan}), "parameter 'gravity' is not finite"),
    (dict(duration=-1.0), 'duration must be finite and > 0'),
    (dict(dt=0.0), 'dt must be finite and > 0'),
    (dict(q0=np.zeros((2, 2))), 'q0: expected shape (B, 1)'),
    (dict(q0=np.zeros((0, 1)), dq0=np.zeros((0, 1))), 'empty batch'),
    (dict(dq0=np.zeros((3, 1))), 'dq0: expected shape (2, 1)'),
    (dict(q0=np.array([[0.0], [np.nan]])), 'q0 is not finite for copies [1]'),
    (dict(target=ros_vi.Target(goal=[0.0, 1.0])), 'target goal: expected 1'),
    (dict(record_every=-2), 'record_every must be >= 0'),
])
def test_bad_arguments_are_refused_naming_them(pendulum, kwargs, message):
    plant, controller = pendulum
    args = dict(q0=np.zeros((2, 1)), dq0=np.zeros((2, 1)), duration=0.1, dt=DT)
    args.update(kwargs)
    with pytest.raises(ValueError) as err:
        ros_vi.rollout(plant, args.pop('q0'), args.pop('dq0'), controller, **args)
    assert message in str(err.value)


def test_controller_arguments_are_checked(pendulum):
    plant, controller = pendulum
    with pytest.raises(ValueError, match='one controller per copy'):
        ros_vi.rollout(plant, np.zeros((2, 1)), np.zeros((2, 1)), [controller], 0.1, DT)
    with pytest.raises(ValueError, match='its own System'):
        ros_vi.rollout(controller.system, np.zeros((1, 1)), np.zeros((1, 1)), controller,
                       0.1, DT)
    with pytest.raises(ValueError, match='designed for dt = 0.01 s, the rollout steps dt = '
                                         '0.001 s'):
        ros_vi.rollout(plant, np.zeros((1, 1)), np.zeros((1, 1)), controller, 0.1, 0.001)
    with pytest.raises(ValueError, match='controller must be None'):
        ros_vi.rollout(plant, np.zeros((1, 1)), np.zeros((1, 1)), 3.0, 0.1, DT)


def test_the_plant_is_left_as_it_was():
    plant = DEMOS['cartpole'].model()
    before = (plant.mass_matrix().copy(), plant.forces[0].coefficient_vector(),
              plant.potentials[0].gravity)
    q0 = np.array([[0.0, 0.5], [0.0, 0.4]])
    params = {'mass_scale': [1.2, 0.8], 'damping.pole': [0.3, 0.0], 'gravity': [5.0, 9.0]}
    ros_vi.rollout(plant, q0, np.zeros((2, 2)), None, 0.05, DT, params)
    ros_vi.rollout(plant, q0, np.zeros((2, 2)), None, 0.05, DT, params, compiled=False)
    np.testing.assert_array_equal(plant.mass_matrix(), before[0])
    np.testing.assert_array_equal(plant.forces[0].coefficient_vector(), before[1])
    np.testing.assert_array_equal(plant.potentials[0].gravity, before[2])
