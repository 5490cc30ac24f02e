"""ros_vi.simulation.Simulation: the ROS-free core of the simulator node (no rclpy here)."""
import math
import os
import sys

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import ConvergenceError, MidpointVI, rx, tz
from ros_vi.simulation import Simulation
from ros_vi.urdf import import_urdf_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDF = os.path.join(ROOT, 'urdf')


def urdf(name):
    return os.path.join(URDF, name + '.urdf')


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


# ---------------------------------------------------------------------- structure
def test_core_does_not_import_rclpy():
    import subprocess
    code = ('import sys, ros_vi.simulation, ros_vi.urdf; '
            'print(sorted(m for m in sys.modules if m.split(".")[0] in '
            '("rclpy", "sensor_msgs", "std_msgs", "tf2_msgs")))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == '[]'


def test_joints_inputs_and_command_joints():
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=500.0)
    assert sim.joint_names == ['shoulder', 'elbow']
    assert sim.actuated_joint_names == ['shoulder', 'elbow']
    np.testing.assert_array_equal(sim.effort_limits, [0.0, 20.0])
    # a zero effort limit makes the shoulder passive: not in the default command order
    assert sim.command_joints == ['elbow']
    sim = Simulation.from_urdf_file(urdf('cartpole'), rate=500.0)
    assert sim.command_joints == ['cart']
    sim = Simulation.from_urdf_file(urdf('arm7'), rate=500.0, prefix='left_')
    assert sim.joint_names == ['left_joint_%d' % i for i in range(1, 8)]
    assert sim.command_joints == sim.joint_names
    with pytest.raises(ValueError, match="command_joints: unknown joint name 'joint_1'"):
        Simulation.from_urdf_file(urdf('arm7'), prefix='left_', command_joints=['joint_1'])


@pytest.mark.parametrize('kwargs, match', [
    (dict(dt=0.0), 'dt must be finite and > 0'),
    (dict(dt=float('nan')), 'dt must be'),
    (dict(substeps=0), 'substeps must be an integer >= 1'),
    (dict(substeps=1.5), 'substeps must be an integer'),
    (dict(command_timeout=-1.0), 'command_timeout must be finite and >= 0'),
    (dict(command_decay=float('inf')), 'command_decay'),
    (dict(max_refinements=-1), 'max_refinements'),
    (dict(max_iterations=0), 'max_iterations'),
    (dict(effort_limits=[1.0, -1.0]), 'effort_limits'),
    (dict(effort_limits=[1.0]), 'effort_limits'),
    (dict(initial_positions={'nope': 1.0}), "initial_positions: unknown joint name 'nope'"),
    (dict(initial_positions=[1.0]), 'initial_positions: expected 2 values, got 1'),
    (dict(initial_velocities={'elbow': float('nan')}),
     "initial_velocities: non-finite value for joint 'elbow'"),
    (dict(command_joints=['shoulder', 'shoulder']), "joint 'shoulder' is named twice"),
])
def test_constructor_validation(kwargs, match):
    system = import_urdf_file(urdf('acrobot'))
    args = dict(dt=0.002)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        Simulation(system, **args)


# ---------------------------------------------------------------------- stepping
def test_tick_matches_direct_midpoint_vi_with_saturated_input():
    """A tick is `substeps` VI steps with the saturated command held over the tick."""
    q0 = {'shoulder': 0.4, 'elbow': -0.3}
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=250.0, substeps=3,
                                    initial_positions=q0, command_timeout=0.0)
    sim.set_commands({'elbow': 25.0})              # limit 20 N m
    ref_sys = import_urdf_file(urdf('acrobot'))
    mvi = MidpointVI(ref_sys)
    mvi.initialize_from_state(0.0, [0.4, -0.3], [0.0, 0.0])
    u = np.zeros(ref_sys.nu)
    u[ref_sys.get_input('elbow').index] = 20.0
    for k in range(1, 41):
        r = sim.tick()
        assert r.ok and r.substeps == 3 and r.retries == 0 and r.iterations >= 3
        for i in range(1, 4):
            mvi.step((k - 1) / 250.0 + i / 750.0 if i < 3 else k / 250.0, u)
    st = sim.state()
    np.testing.assert_allclose(st.positions, mvi.q2, rtol=0, atol=1e-12)
    assert st.t == pytest.approx(40 / 250.0, abs=1e-15)
    np.testing.assert_array_equal(st.efforts, [0.0, 20.0])
    np.testing.assert_array_equal(sim.applied_inputs()[ref_sys.get_input('elbow').index], 20.0)


def test_velocity_is_legendre_transform_of_momentum():
    """v2 = M(q2)^-1 p2_end, the momentum at the tick's end: p2 + J/2 with J the step's
    impulse of the applied forces (here the joint damping); for trep's pendulum M = m l^2 =
    1 (point mass, 1 m)."""
    sim = Simulation.from_urdf_file(urdf('pendulum'), rate=100.0,
                                    initial_positions=[0.75 * math.pi],
                                    initial_velocities=[0.5])
    st = sim.state()
    assert st.velocities[0] == pytest.approx(0.5, abs=1e-14)
    for _ in range(37):
        sim.tick()
    st = sim.state()
    p_end = sim.mvi.p2 + 0.5 * sim.mvi.impulse
    assert sim.mvi.impulse[0] != 0.0          # the URDF's damping acts
    assert st.velocities[0] == pytest.approx(p_end[0] / 1.0, rel=1e-12)
    # and it approximates the finite-difference velocity to O(dt^2)
    q1, q2 = sim.mvi.q1, sim.mvi.q2
    assert st.velocities[0] == pytest.approx((q2 - q1)[0] / 0.01, abs=0.05)
    # energy: T + V of the published state, V = m g z = -9.81 cos(theta) (z = -cos)
    th, v = st.positions[0], st.velocities[0]
    assert st.energy == pytest.approx(0.5 * v * v - 9.81 * math.cos(th), rel=1e-12)


def test_initial_state_dict_and_array_and_momentum():
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=500.0,
                                    initial_positions={'elbow': 0.5},
                                    initial_velocities=[0.1, -0.2])
    st = sim.state()
    np.testing.assert_array_equal(st.positions, [0.0, 0.5])
    np.testing.assert_allclose(st.velocities, [0.1, -0.2], atol=1e-14)
    sim.system.q = [0.0, 0.5]
    np.testing.assert_allclose(sim.mvi.p2, sim.system.mass_matrix() @ [0.1, -0.2], atol=1e-15)


# ---------------------------------------------------------------------- commands
def test_command_validation_keeps_previous_command():
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=500.0)
    sim.set_commands({'elbow': 2.0})
    bad = [
        (lambda: sim.set_commands({'elbow': float('nan')}), "non-finite effort for joint 'elbow'"),
        (lambda: sim.set_commands({'elbow': float('inf')}), "non-finite effort for joint 'elbow'"),
        (lambda: sim.set_commands({'wrist': 1.0}), "unknown joint name 'wrist'"),
        (lambda: sim.set_commands({'elbow': 1.0, 'wrist': 1.0, 'hip': 2.0}),
         "unknown joint names 'wrist', 'hip'"),
        (lambda: sim.set_commands(['elbow'], [1.0, 2.0]), '1 joint names but 2 efforts'),
        (lambda: sim.set_commands(['elbow', 'elbow'], [1.0, 2.0]), "'elbow' is named twice"),
        (lambda: sim.set_commands({'elbow': 'x'}), 'efforts must be numbers'),
        (lambda: sim.set_command_vector([1.0, 2.0]), r'expected 1 efforts for joints \[elbow\], got 2'),
        (lambda: sim.set_command_vector([]), 'expected 1 efforts'),
        (lambda: sim.set_command_vector([float('-inf')]), "non-finite effort for joint 'elbow'"),
    ]
    for call, match in bad:
        with pytest.raises(ValueError, match=match):
            call()
        np.testing.assert_array_equal(sim.effective_command(),
                                      [0.0, 2.0])
    sim.set_command_vector([3.0])
    np.testing.assert_array_equal(sim.effective_command(), [0.0, 3.0])


def test_unactuated_joint_rejected():
    system = trep.System()
    system.import_frames([rx('a'), [tz(-1.0, mass=1.0), rx('b'), [tz(-1.0, mass=1.0)]]])
    trep.potentials.Gravity(system, (0, 0, -9.8))
    trep.forces.ConfigForce(system, 'b', 'b-torque')
    sim = Simulation(system, 0.01)
    assert sim.joint_names == ['a', 'b'] and sim.actuated_joint_names == ['b']
    with pytest.raises(ValueError, match="joint 'a' is not actuated"):
        sim.set_commands({'a': 1.0})
    sim.set_commands({'b': 1.0})
    sim.tick()
    np.testing.assert_array_equal(sim.state().efforts, [0.0, 1.0])
    assert sim.link_transforms() == [] and sim.static_transforms() == []



def test_input_configs_and_efforts_of_mixed_inputs():
    """One input -> config map for the simulation and the controllers: ConfigForce inputs
    map to their config, a wrench input to -1 (commandable as an input, not as a joint)."""
    from ros_vi.mechanics.inputs import config_efforts, input_configs
    system = trep.System()
    system.import_frames([rx('a'), [tz(-1.0, mass=1.0), rx('b'), [tz(-1.0, mass=1.0)]]])
    trep.potentials.Gravity(system, (0, 0, -9.8))
    trep.forces.ConfigForce(system, 'b', 'b-torque')
    trep.forces.BodyWrench(system, system.frames[-1], ('push',))
    trep.forces.ConfigForce(system, 'a', 'a-torque')
    names = [i.name for i in system.inputs]
    configs = dict(zip(names, input_configs(system)))
    assert configs == {'b-torque': 1, 'push': -1, 'a-torque': 0}
    u = np.array([{'b-torque': 2.0, 'push': 7.0, 'a-torque': -3.0}[n] for n in names])
    np.testing.assert_array_equal(config_efforts(system, u), [-3.0, 2.0])
    sim = Simulation(system, 0.01)
    assert sim.actuated_joint_names == ['a', 'b'] and sim.command_joints == ['a', 'b']
    # every input, the wrench too, can be commanded in input order
    sim.set_input_commands(u)
    np.testing.assert_array_equal(sim.effective_command(), u)
    sim.tick()
    np.testing.assert_array_equal(sim.applied_inputs(), u)
    np.testing.assert_array_equal(sim.state().efforts, [-3.0, 2.0])
    with pytest.raises(ValueError, match=r"expected 3 efforts for inputs \[b-torque"):
        sim.set_input_commands([1.0])
    with pytest.raises(ValueError, match="non-finite effort for input 'push'"):
        sim.set_input_commands([0.0 if n != 'push' else math.nan for n in names])
    np.testing.assert_array_equal(sim.commanded(), u)        # all-or-nothing


def test_passive_joint_rule_is_shared_with_the_controllers():
    """A zero effort limit marks a passive joint, for the simulation's default command
    joints and the controllers' default inputs alike (control.actuated_inputs)."""
    from ros_vi.control import actuated_inputs, default_effort_limits
    system = import_urdf_file(urdf('acrobot'))
    np.testing.assert_array_equal(default_effort_limits(system), [0.0, 20.0])
    names, limits = actuated_inputs(system)
    assert names == ['elbow'] and limits.tolist() == [20.0]
    assert Simulation(system, 0.01).command_joints == names
    # limits in force decide, not the URDF: make the elbow passive, the shoulder driven
    names, limits = actuated_inputs(system, [3.0, 0.0])
    assert names == ['shoulder'] and limits.tolist() == [3.0]
    assert Simulation(system, 0.01, effort_limits=[3.0, 0.0]).command_joints == ['shoulder']

def test_joints_not_named_keep_their_command():
    sim = Simulation.from_urdf_file(urdf('arm7'), rate=500.0, command_timeout=0.0)
    sim.set_commands({'joint_1': 1.0, 'joint_2': 2.0})
    sim.set_commands({'joint_2': -5.0})
    np.testing.assert_array_equal(sim.effective_command()[:3], [1.0, -5.0, 0.0])


def test_saturation_both_signs():
    sim = Simulation.from_urdf_file(urdf('cartpole'), rate=500.0)
    # the pole is passive (effort limit 0): a command naming it is refused, as the node does
    with pytest.raises(ValueError, match="joint 'pole' has effort limit 0: it cannot take any "
                                         "command"):
        sim.set_commands({'cart': 1e6, 'pole': 3.0})
    sim.set_commands({'cart': 1e6})
    sim.tick()
    np.testing.assert_array_equal(sim.state().efforts, [30.0, 0.0])
    sim.set_commands({'cart': -45.0})
    sim.tick()
    np.testing.assert_array_equal(sim.state().efforts, [-30.0, 0.0])
    assert sim.commanded()[0] == -45.0


def test_command_timeout_drops_to_zero():
    sim = Simulation.from_urdf_file(urdf('pendulum'), rate=100.0, command_timeout=0.05)
    sim.set_commands({'theta': 1.0})               # at t = 0
    efforts = []
    for _ in range(8):
        sim.tick()
        efforts.append(sim.state().efforts[0])
    # ticks start at t = 0, 0.01, ..., 0.07: the command is applied while its age <= 0.05
    assert efforts == [1.0] * 6 + [0.0] * 2
    assert sim.timed_out() == ['theta']
    sim.set_commands({'theta': 2.0})
    assert sim.timed_out() == []
    sim.tick()
    assert sim.state().efforts[0] == 2.0


def test_command_timeout_linear_decay():
    sim = Simulation.from_urdf_file(urdf('pendulum'), rate=100.0, command_timeout=0.02,
                                    command_decay=0.04)
    sim.set_commands({'theta': 4.0})
    efforts = []
    for _ in range(8):
        sim.tick()
        efforts.append(sim.state().efforts[0])
    np.testing.assert_allclose(efforts, [4, 4, 4, 3, 2, 1, 0, 0], atol=1e-12)


@pytest.mark.parametrize('decay', [0.0, 0.03])
def test_reused_inputs_equal_the_timeout_law_at_every_tick(decay):
    """The inputs a tick reuses (unchanged commands, nothing crossing its timeout) are the
    ones the timeout law gives at that tick: staggered commands on the arm's joints, ticks
    through their timeouts and ramps, each compared with the law evaluated afresh."""
    sim = Simulation.from_urdf_file(urdf('arm7'), rate=100.0, command_timeout=0.05,
                                    command_decay=decay)
    rng = np.random.default_rng(4)
    names = sim.command_joints
    limits = sim.effort_limits

    def law(t):
        over = (t - sim.commands.command_times()) - 0.05
        scale = np.clip(1.0 - over / decay, 0.0, 1.0) if decay else (over <= 1e-12)
        return np.clip(sim.commanded(), -limits, limits) * scale

    for k in range(60):
        if k % 7 in (0, 3):
            joint = names[rng.integers(len(names))]
            sim.set_commands({joint: float(rng.normal(0.0, 30.0))})
        t = sim.t
        np.testing.assert_array_equal(sim.effective_command(), law(t))
        sim.tick()
        np.testing.assert_array_equal(sim.applied_inputs(), law(t))


def test_timeout_zero_never_expires():
    sim = Simulation.from_urdf_file(urdf('pendulum'), rate=100.0, command_timeout=0.0)
    sim.set_commands({'theta': 1.0})
    sim.step(300)
    assert sim.state().efforts[0] == 1.0


def test_never_commanded_is_zero_and_clear():
    sim = Simulation.from_urdf_file(urdf('pendulum'), rate=100.0, command_timeout=0.0)
    np.testing.assert_array_equal(sim.effective_command(), [0.0])
    sim.set_commands({'theta': 1.0})
    sim.clear_commands()
    np.testing.assert_array_equal(sim.effective_command(), [0.0])


# ---------------------------------------------------------------------- faults
def test_retry_with_smaller_substeps(monkeypatch):
    """Steps longer than dt/3 'fail': the tick succeeds at 4 substeps (two refinements)
    and equals a simulation run with 4 substeps from the start."""
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=100.0,
                                    initial_positions=[0.5, 0.2])
    ref = Simulation.from_urdf_file(urdf('acrobot'), rate=100.0, substeps=4,
                                    initial_positions=[0.5, 0.2])
    real_step = sim.mvi.step

    def fussy_step(t2, *args, **kwargs):
        if t2 - sim.mvi.t2 > 0.01 / 3:
            raise ConvergenceError('too long a step')
        return real_step(t2, *args, **kwargs)
    monkeypatch.setattr(sim.mvi, 'step', fussy_step)
    for _ in range(5):
        r = sim.tick()
        ref.tick()
        assert r.ok and r.substeps == 4 and r.retries == 2 and r.error is None
    assert sim.retries == 5 and sim.failures == 0
    np.testing.assert_allclose(sim.state().positions, ref.state().positions, atol=1e-12)
    np.testing.assert_allclose(sim.state().velocities, ref.state().velocities, atol=1e-11)


def test_failed_tick_holds_state_without_nan(monkeypatch):
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=100.0,
                                    initial_positions=[0.5, 0.2], max_refinements=2)
    sim.step(3)
    before = sim.state()
    q, p, t = sim.mvi.q2, sim.mvi.p2, sim.t
    real_step = sim.mvi.step
    calls = []

    def broken(t2, *args, **kwargs):
        calls.append(t2)
        raise ConvergenceError('solver broke')
    monkeypatch.setattr(sim.mvi, 'step', broken)
    sim.set_commands({'elbow': 1.0})
    r = sim.tick()
    assert not r.ok and r.retries == 2 and r.substeps == 4
    assert len(calls) == 3                         # 1, 2 and 4 substeps each failed at once
    assert 'state held' in r.error and 'solver broke' in r.error
    assert sim.last_error == r.error and sim.failures == 1
    after = sim.state()
    np.testing.assert_array_equal(after.positions, before.positions)
    np.testing.assert_array_equal(sim.mvi.p2, p)
    assert sim.t == pytest.approx(t + 0.01, abs=1e-15)
    assert np.all(np.isfinite(after.velocities)) and not after.ok
    np.testing.assert_array_equal(after.efforts, [0.0, 0.0])   # nothing was applied
    # the solver recovers: the next tick works again and clears the error
    monkeypatch.setattr(sim.mvi, 'step', real_step)
    assert sim.tick().ok and sim.last_error is None


def test_a_failed_tick_restarts_where_it_began_without_rechecking_it(monkeypatch):
    """A retry restarts at the tick's start as the integrator accepted it: a start a fresh
    check would refuse (here a ball 1e-9 m into the ground, within a solver's tolerance of
    it) is held, not turned into a ValueError escaping the tick."""
    sim = Simulation.from_world('ground: {height: 0.0, friction: 0.5}\n'
                                'objects:\n'
                                '  - {name: ball, shape: {sphere: 0.1}, mass: 1.0,\n'
                                '     pose: {xyz: [0, 0, 0.1]}}\n', rate=100.0)
    q = sim.mvi.q2.copy()
    q[2] -= 1e-9
    with pytest.raises(ValueError, match="ball_ground_0"):
        sim.mvi.initialize_from_state(sim.t, q, np.zeros(6))
    sim.mvi.initialize_from_state(sim.t, q, np.zeros(6), check=False)

    def broken(t2, *args, **kwargs):
        raise ConvergenceError('solver broke')
    monkeypatch.setattr(sim.mvi, 'step', broken)
    r = sim.tick()
    assert not r.ok and 'state held' in r.error and 'solver broke' in r.error
    np.testing.assert_array_equal(sim.mvi.q2, q)
    assert sim.t == pytest.approx(0.01, abs=1e-15)


def test_real_nonconvergence_is_held():
    """One Newton iteration is not enough for a falling 7-DOF arm: with the VI's own
    subdivision switched off (it would find the step in 2**k substeps) every refinement of
    the tick fails, the state is held (no NaN) and time advances."""
    sim = Simulation.from_urdf_file(urdf('arm7'), rate=100.0, max_iterations=1,
                                    max_subdivisions=0)
    sim.set_commands({'joint_2': 300.0})
    results = sim.step(3)
    assert [r.ok for r in results] == [False] * 3
    st = sim.state()
    assert np.all(np.isfinite(st.positions)) and np.all(np.isfinite(st.velocities))
    np.testing.assert_array_equal(st.positions, np.zeros(7))
    assert sim.t == pytest.approx(0.03) and sim.failures == 3
    assert 'failed to converge' in sim.last_error or 'iterations' in sim.last_error


# ---------------------------------------------------------------------- reset / pause / step
def test_reset_pause_step():
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=200.0,
                                    initial_positions=[0.3, 0.1], initial_velocities=[1, 0])
    st0 = sim.state()
    sim.set_commands({'elbow': 5.0})
    sim.step(20)
    assert sim.ticks == 20
    assert not np.allclose(sim.state().positions, st0.positions)
    t = sim.t
    sim.reset()
    st = sim.state()
    np.testing.assert_array_equal(st.positions, st0.positions)
    np.testing.assert_allclose(st.velocities, st0.velocities, atol=1e-14)
    np.testing.assert_array_equal(sim.effective_command(), [0.0, 0.0])
    assert sim.t == t                       # time keeps running (monotonic stamps)
    sim.reset(keep_time=False)
    assert sim.t == 0.0 and sim.ticks == 0
    sim.pause()
    assert sim.paused
    res = sim.step(5)
    assert len(res) == 5 and sim.ticks == 5 and sim.t == pytest.approx(5 / 200.0, abs=1e-15)
    sim.unpause()
    assert not sim.paused
    with pytest.raises(ValueError, match='step: n must be an integer >= 0'):
        sim.step(-1)


def test_reset_reproduces_trajectory():
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=200.0, initial_positions=[0.3, 0.1])
    sim.set_commands({'elbow': 1.0})
    sim.step(30)
    first = sim.state().positions.copy()
    sim.reset(keep_time=False)
    sim.set_commands({'elbow': 1.0})
    sim.step(30)
    np.testing.assert_array_equal(sim.state().positions, first)


def test_tick_times_do_not_drift():
    sim = Simulation.from_urdf_file(urdf('pendulum'), rate=300.0)
    sim.step(3000)
    assert sim.t == 3000 / 300.0


# ---------------------------------------------------------------------- transforms
def test_link_transforms_pendulum_analytic():
    sim = Simulation.from_urdf_file(urdf('pendulum'), rate=100.0, initial_positions=[0.3],
                                    initial_velocities=[2.0])
    sim.step(7)
    th = sim.state().positions[0]
    (parent, child, g), = sim.link_transforms()
    assert (parent, child) == ('world', 'pendulum')
    np.testing.assert_allclose(g[:3, :3], rot_x(th), atol=1e-14)
    np.testing.assert_allclose(g[:3, 3], 0.0, atol=1e-15)


def test_link_transforms_acrobot_and_static():
    sim = Simulation.from_urdf_file(urdf('acrobot'), rate=100.0, initial_positions=[0.4, -1.1])
    names = [(p, c) for p, c, _ in sim.link_transforms()]
    assert names == [('base_link', 'upper_link'), ('upper_link', 'lower_link')]
    (_, _, g1), (_, _, g2) = sim.link_transforms()
    np.testing.assert_allclose(g1[:3, :3], rot_y(0.4), atol=1e-14)
    np.testing.assert_allclose(g2[:3, :3], rot_y(-1.1), atol=1e-14)
    np.testing.assert_allclose(g2[:3, 3], [0, 0, -1.0], atol=1e-14)
    (p, c, gs), = sim.static_transforms()
    assert (p, c) == ('world', 'base_link')
    np.testing.assert_allclose(gs, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 2.5], [0, 0, 0, 1]])


def test_link_transforms_compose_to_world_poses():
    """Chaining parent->child transforms from the root reproduces every link's world pose
    from the importer's forward kinematics."""
    sim = Simulation.from_urdf_file(urdf('arm7'), rate=100.0, prefix='r_',
                                    initial_positions=np.linspace(-1, 1, 7))
    sim.step(5)
    edges = {c: (p, g) for p, c, g in sim.link_transforms() + sim.static_transforms()}
    robot = sim.robot
    robot.system.q = sim.state().positions    # the published configuration q2
    poses = robot.link_poses()
    root = robot.link_frame(robot.root_link).name
    for link in robot.link_names:
        name = robot.link_frame(link).name
        g = np.eye(4)
        while name != root:
            parent, rel = edges[name]
            g = rel @ g
            name = parent
        np.testing.assert_allclose(poses[link], poses[robot.root_link] @ g, atol=1e-12)
    assert set(sim.link_names()) == {'r_' + n for n in robot.link_names}


def test_an_error_naming_many_unknown_joints_stays_short():
    """100,000 unknown joint names in one command made a 1.6 MB diagnostics value and log
    line: the refusal names the first few and counts the rest."""
    sim = Simulation.from_urdf_file(urdf('arm7'), rate=500.0)
    names = ['no_such_joint_%d' % i for i in range(100_000)]
    with pytest.raises(ValueError) as err:
        sim.set_joint_targets(names, efforts=np.zeros(len(names)))
    text = str(err.value)
    assert len(text) < 2000
    assert "unknown joint names 'no_such_joint_0', 'no_such_joint_1'" in text
    assert 'and 99,980 more' in text and '(joints: joint_1, joint_2' in text


# ---------------------------------------------------------------------- the published velocity
@pytest.mark.parametrize('rate', [100.0, 500.0, 1000.0])
@pytest.mark.parametrize('model, held', [('pendulum', {'theta': 0.5}),
                                         ('arm7', {'joint_2': 0.6, 'joint_4': -1.0,
                                                   'joint_6': 0.8})])
def test_a_robot_held_still_publishes_rest(model, held, rate):
    """The arm held by its position drives under gravity published 0.036 rad/s at 500 Hz
    (0.018 at 1 kHz) while standing still: the VI's discrete momentum lags the momentum at
    the step's end by half the step's impulse.  Published now: M^-1 (p2 + J/2), with the
    root solved to rounding at rest -- |v| <= 1e-12 once the drives have settled."""
    sim = Simulation.from_urdf_file(urdf(model), rate=rate, initial_positions=held)
    start = sim.state().positions.copy()
    sim.set_commands(sim.command_joints, start, interface='position')
    worst = 0.0
    for k in range(int(4 * rate)):
        assert sim.tick().ok
        if k >= 3 * rate:                        # the last second, settled
            worst = max(worst, float(np.abs(sim.state().velocities).max()))
    assert worst <= 1e-12
    # it is held against gravity: the discrete momentum itself is not zero
    assert np.abs(sim.mvi.p2).max() > 1e-3


def test_the_published_velocity_on_a_free_swing_is_as_accurate_as_before():
    """A free swing with no force acting has no impulse: the velocity is M^-1 p2 exactly, as
    before.  With the URDF pendulum's damping acting it is closer to a fine reference than
    M^-1 p2 was (trep's forcing puts the whole impulse into the step's first term, so the
    trajectory itself is first order in dt under a force: both errors halve with dt)."""
    free = trep.System()
    free.import_frames([trep.rx('theta'), [trep.tz(-1.0, mass=1.0)]])
    trep.potentials.Gravity(free, (0, 0, -9.8))
    trep.forces.ConfigForce(free, 'theta', 'theta-torque')
    sim = Simulation(free, 0.01, initial_positions=[2.0])
    sim.step(100)
    assert not sim.mvi.impulse.any()
    assert sim.state().velocities[0] == pytest.approx(sim.mvi.p2[0], rel=1e-15)   # M = 1

    def run(rate):
        sim = Simulation.from_urdf_file(urdf('pendulum'), rate=rate,
                                        initial_positions=[2.0])
        sim.step(int(round(1.0 * rate)))
        return sim.state().velocities[0], sim.mvi.p2[0]        # M = 1 for this pendulum
    reference = run(16000.0)[0]
    for rate in (200.0, 400.0):
        published, discrete = (abs(x - reference) for x in run(rate))
        assert published < 0.7 * discrete
