"""Joint limits as unilateral constraints of the VI step (MidpointVI's ``limits``): a config
never passes its bound, stops there (inelastic), rests on it with the impulse statics
predict, and leaves it when nothing pushes it there."""
import os

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import rx, tz
from ros_vi.mechanics import dynamics
from ros_vi.urdf import import_urdf_file
from test_constrained_step import consistent_momentum, fourbar

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

G = 9.81
DT = 1e-3


def pendulum():
    """A point mass of 1 kg on a massless 1 m rod about x (theta = 0 hanging down):
    V = -m g l cos(theta)."""
    s = trep.System()
    s.import_frames([rx('theta', mass=0.0), [tz(-1.0, mass=1.0)]])
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    return s


def run(mvi, steps, nu=0):
    """q2 and the midpoint energy after each of ``steps`` steps of DT."""
    s, t0 = mvi.system, mvi.t2
    qs, energies, impulses = [], [], []
    for k in range(1, steps + 1):
        mvi.step(t0 + k * DT, np.zeros(nu))
        mvi.set_midpoint()
        qs.append(mvi.q2.copy())
        energies.append(s.total_energy())
        impulses.append(mvi.limit_impulse)
    return np.array(qs), np.array(energies), np.array(impulses)


def test_a_falling_pendulum_stops_at_its_limit_and_leaves_it_again():
    lower = -0.5
    mvi = trep.MidpointVI(pendulum(), limits={'theta': (lower, 2.0)})
    mvi.initialize_from_state(0.0, [1.0], [0.0])
    q, E, gamma = run(mvi, 1500)
    q = q[:, 0]
    assert q.min() >= lower                        # never past the bound, not by rounding
    hit = int(np.argmax(q == lower))
    assert hit > 0 and q[hit] == lower
    # before the impact the VI keeps the energy (its midpoint energy within O(dt^2))
    assert np.ptp(E[:hit - 1]) <= 1e-5
    # the impact (two steps: the one that reaches the bound and the one that stays on it)
    # removes the kinetic energy of the fall, g (cos(lower) - cos(1)) in closed form, and
    # the momentum sqrt(2 T) by impulses away from the bound (+)
    T_impact = G * (np.cos(lower) - np.cos(1.0))
    assert abs((E[hit - 2] - E[hit + 1]) - T_impact) <= 1e-4 * T_impact
    assert abs(E[hit + 1] - (-G * np.cos(lower))) <= 1e-12   # at rest on the bound
    assert np.all(np.diff(E[hit - 5:hit + 5]) <= 1e-8)       # never rising through it
    assert gamma[hit, 0] > 0.0 and gamma[hit + 1, 0] > 0.0
    assert abs(gamma[hit:hit + 2, 0].sum() - np.sqrt(2.0 * T_impact)) <= 2e-3 * np.sqrt(
        2.0 * T_impact)
    # gravity pulls it back towards 0: it leaves the bound (no impulse pulls it there)
    assert q[hit + 50:].max() > lower + 0.1
    assert np.all(gamma[:, 0] >= 0.0)


def test_a_pendulum_rests_on_its_limit_with_the_impulse_of_statics():
    """Held at an upper bound b < 0 that gravity pulls it against: q stays exactly b and
    the limit's impulse is dt m g l sin(b) (from the second step on: the first step's start
    momentum p1 = 0 carries only half a step of the potential's impulse)."""
    b = -0.3
    mvi = trep.MidpointVI(pendulum(), limits={'theta': (-np.pi, b)})
    mvi.initialize_from_state(0.0, [b], [0.0])
    q, E, gamma = run(mvi, 500)
    assert np.all(q[:, 0] == b)
    expected = DT * G * np.sin(b)
    assert abs(gamma[0, 0] - 0.5 * expected) <= 1e-12 * abs(expected)
    assert np.abs(gamma[1:, 0] - expected).max() <= 1e-12 * abs(expected)


def test_an_arm_falling_under_gravity_stays_within_its_urdf_limits():
    """The shipped 7-DOF arm, released from a pose that makes it fall through several of its
    joint limits: without limits it passes them by more than a radian; with them (the
    import's default, or given explicitly) no joint passes its bound at any step, and the
    arm lies on some of them.  The compiled step takes the steps where no limit acts."""
    s = import_urdf_file(ROOT + '/urdf/arm7.urdf')
    lower, upper = s.urdf.position_limits
    limits = dict(zip(s.urdf.config_names, zip(lower, upper)))
    q0 = np.array([0.3, 1.2, -0.4, -1.5, 0.8, 1.0, 0.2])
    excess = {}
    for key, lim in (('free', {}), ('declared', None), ('given', limits)):
        mvi = trep.MidpointVI(s, limits=lim)
        mvi.initialize_from_state(0.0, q0, np.zeros(s.nQd))
        q, E, gamma = run(mvi, 1000, s.nu)
        excess[key] = max(np.max(lower - q), np.max(q - upper))
        assert mvi.compiled
        if lim != {}:
            held = np.count_nonzero(gamma, axis=1)
            assert held.max() >= 1
            # the energy only falls at the impacts (no torques, no damping)
            assert E[-1] <= E[0] + 1e-6
    assert excess['free'] > 1.0
    assert excess['declared'] <= 0.0 and excess['given'] <= 0.0


def test_bad_limits_are_refused_with_the_config_named():
    s = pendulum()
    with pytest.raises(ValueError, match="'theta' needs lower <= upper"):
        trep.MidpointVI(s, limits={'theta': (1.0, -1.0)})
    with pytest.raises(Exception, match='nope'):
        trep.MidpointVI(s, limits={'nope': (-1.0, 1.0)})
    mvi = trep.MidpointVI(s, limits={'theta': (-0.5, 0.5)})
    with pytest.raises(ValueError, match="q1 puts config 'theta' at 0.7, outside its limits"):
        mvi.initialize_from_state(0.0, [0.7], [0.0])


def test_derivatives_of_a_step_that_holds_a_config_match_finite_differences():
    """A double pendulum whose first joint rests on its upper limit while the second swings:
    the step's first derivatives (implicit function theorem with the held config fixed)
    against central differences of steps from perturbed starts that keep it held."""
    s = trep.System()
    s.import_frames([rx('a', mass=0.0), [tz(-1.0, mass=1.0), [
        rx('b', mass=0.0), [tz(-0.7, mass=0.4)]]]])
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    limits = {'a': (-np.pi, -0.3)}
    mvi = trep.MidpointVI(s, limits=limits)
    mvi.initialize_from_state(0.0, [-0.3, 0.8], [0.0, 0.0])
    run(mvi, 20)
    a = s.get_config('a').index
    assert mvi.held_configs.tolist() == [a] and mvi.q2[a] == -0.3
    t1, t2, q1, p1 = mvi.t1, mvi.t2, mvi.q1.copy(), mvi.p1.copy()
    exact = {'q2_dq1': mvi.q2_dq1(), 'q2_dp1': mvi.q2_dp1(), 'p2_dq1': mvi.p2_dq1(),
             'p2_dp1': mvi.p2_dp1()}
    assert np.all(exact['q2_dq1'][a] == 0.0) and np.all(exact['q2_dp1'][a] == 0.0)

    def step_from(q, p):
        other = trep.MidpointVI(s, limits=limits)
        other.initialize_from_state(t1, q, p)
        other.step(t2)
        assert other.held_configs.tolist() == [a]        # the same contact mode
        return other.q2.copy(), other.p2.copy()

    h = 1e-6
    b = s.get_config('b').index
    # q1 of the free config, p1 of both (q1 of the held one would leave the bound)
    for what, j in (('q1', b), ('p1', a), ('p1', b)):
        e = np.zeros(2)
        e[j] = h
        if what == 'q1':
            (qp, pp), (qm, pm) = step_from(q1 + e, p1), step_from(q1 - e, p1)
        else:
            (qp, pp), (qm, pm) = step_from(q1, p1 + e), step_from(q1, p1 - e)
        for name, plus, minus in (('q2', qp, qm), ('p2', pp, pm)):
            fd = (plus - minus) / (2 * h)
            analytic = exact['%s_d%s' % (name, what)][:, j]
            assert np.abs(fd - analytic).max() <= 1e-6 * max(1.0, np.abs(analytic).max()), (
                name, what, j, fd, analytic)
    # second derivatives: against central differences of the first ones in p1
    second = {'q2_dp1dp1': mvi.q2_dp1dp1(), 'p2_dp1dp1': mvi.p2_dp1dp1(),
              'q2_dq1dp1': mvi.q2_dq1dp1(), 'p2_dq1dp1': mvi.p2_dq1dp1()}
    assert np.all(second['q2_dp1dp1'][:, :, a] == 0.0)
    assert np.all(second['q2_dq1dp1'][:, :, a] == 0.0)

    def first_from(p):
        other = trep.MidpointVI(s, limits=limits)
        other.initialize_from_state(t1, q1, p)
        other.step(t2)
        assert other.held_configs.tolist() == [a]
        return {'q2_dp1': other.q2_dp1(), 'p2_dp1': other.p2_dp1(),
                'q2_dq1': other.q2_dq1(), 'p2_dq1': other.p2_dq1()}

    h = 1e-5
    for k in (a, b):
        e = np.zeros(2)
        e[k] = h
        plus, minus = first_from(p1 + e), first_from(p1 - e)
        for name, first in (('q2_dp1dp1', 'q2_dp1'), ('p2_dp1dp1', 'p2_dp1'),
                            ('q2_dq1dp1', 'q2_dq1'), ('p2_dq1dp1', 'p2_dq1')):
            fd = (plus[first] - minus[first]) / (2 * h)       # [output, input j]
            analytic = second[name][:, k, :].T                   # [output, input j]
            assert np.abs(fd - analytic).max() <= 1e-6 * max(1.0, np.abs(analytic).max()), (
                name, k, fd, analytic)


def test_a_closed_loop_driven_into_a_limit_stops_there_with_the_loop_closed():
    """A four-bar (three joints, a loop constraint: one degree of freedom) driven by a
    constant torque into a limit on its first joint: held there, the whole loop locks; no
    step passes the bound and the loop stays closed to its constraints' tolerance."""
    s = fourbar()
    first = s.configs[0]
    b = first.q + 0.2
    mvi = trep.MidpointVI(s, limits={first.name: (first.q - 0.2, b)})
    mvi.initialize_from_state(0.0, s.q, consistent_momentum(s, 0))
    held = 0
    for k in range(1, 1001):
        mvi.step(k * DT, [2.0])
        assert mvi.q2[first.index] <= b
        held += first.index in mvi.held_configs.tolist()
        s.data.set(mvi.q2, np.zeros(s.nQ))
        assert np.abs(dynamics.constraint_values(s)).max() <= 1e-10
    assert held > 100 and mvi.q2[first.index] == b


def test_derivatives_of_a_subdivided_step_with_a_held_config_match_finite_differences():
    """A step of 50 ms with one Newton iteration allowed is taken as 32 substeps, each
    holding the first joint on its limit: the composite map's derivatives (chain rule over
    the substeps, each with its own held set) against central differences."""
    s = trep.System()
    s.import_frames([rx('a', mass=0.0), [tz(-1.0, mass=1.0), [
        rx('b', mass=0.0), [tz(-0.7, mass=0.4)]]]])
    trep.potentials.Gravity(s, (0.0, 0.0, -G))
    limits = {'a': (-np.pi, -0.3)}
    q1, p1, dt = np.array([-0.3, 0.8]), np.zeros(2), 0.05

    def step_from(p):
        mvi = trep.MidpointVI(s, limits=limits)
        mvi.initialize_from_state(0.0, q1, p)
        mvi.step(dt, max_iterations=1)
        assert mvi.held_configs.tolist() == [0]
        return mvi

    mvi = step_from(p1)
    assert mvi.q2[0] == -0.3
    # the step was subdivided: one whole step of dt lands elsewhere (the VI's O(dt^3))
    whole = trep.MidpointVI(s, limits=limits)
    whole.initialize_from_state(0.0, q1, p1)
    whole.step(dt)
    assert abs(whole.q2[1] - mvi.q2[1]) > 1e-7
    exact = {'q2': mvi.q2_dp1(), 'p2': mvi.p2_dp1()}
    second = mvi.q2_dp1dp1()
    assert np.all(exact['q2'][0] == 0.0) and np.all(second[:, :, 0] == 0.0)
    h = 1e-6
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        plus, minus = step_from(p1 + e), step_from(p1 - e)
        for name in ('q2', 'p2'):
            fd = (getattr(plus, name) - getattr(minus, name)) / (2 * h)
            assert np.abs(fd - exact[name][:, k]).max() <= 1e-6 * max(
                1.0, np.abs(exact[name]).max()), (name, k, fd, exact[name][:, k])


def _falling_arm(fast, steps=600):
    s = import_urdf_file(ROOT + '/urdf/arm7.urdf')
    mvi = trep.MidpointVI(s, fast=fast, min_iterations=1)
    mvi.initialize_from_state(0.0, np.array([0.3, 1.2, -0.4, -1.5, 0.8, 1.0, 0.2]),
                              np.zeros(s.nQd))
    q, _, gamma = run(mvi, steps, s.nu)
    return q, gamma


def test_the_compiled_step_and_the_general_path_agree_through_impacts():
    """The compiled step reports a root past a limit and the general path takes that step
    (and every step while a config is held): the same trajectory as the general path
    alone, impacts and resting on the bounds included."""
    q_fast, g_fast = _falling_arm(True)
    q_gen, g_gen = _falling_arm(False)
    assert np.count_nonzero(g_gen.any(axis=1)) > 100          # it lies on its limits
    assert np.array_equal(g_fast != 0, g_gen != 0)            # held at the same steps
    assert np.abs(q_fast - q_gen).max() <= 1e-9
    assert np.abs(g_fast - g_gen).max() <= 1e-9 * np.abs(g_gen).max()


def test_a_rollout_holds_the_limits_as_midpointvi_does():
    """A batch of falling arms: the compiled loop hands a copy whose step would pass a
    limit to the general path, which ends where MidpointVI ends."""
    s = import_urdf_file(ROOT + '/urdf/arm7.urdf')
    lower, upper = s.urdf.position_limits
    q0 = np.array([[0.3, 1.2, -0.4, -1.5, 0.8, 1.0, 0.2], [0.0, 0.1, 0.0, -0.2, 0.0, 0.1, 0.0]])
    result = trep.rollout(s, q0, np.zeros((2, 7)), None, 0.6, DT, record_every=1)
    assert result.ok.all()
    assert result.path[0] == 'general'
    assert np.all(result.q_traj >= lower) and np.all(result.q_traj <= upper)
    q_alone, _ = _falling_arm(True)
    assert np.abs(result.q[0] - q_alone[-1]).max() <= 1e-9


LIMITED_PENDULUM = """<robot name="limited">
  <link name="world"/>
  <link name="rod">
    <inertial><origin xyz="0 0 -1"/><mass value="1"/>
      <inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="revolute"><parent link="world"/><child link="rod"/>
    <axis xyz="1 0 0"/><limit lower="0.2" upper="1.0" effort="10" velocity="5"/></joint>
</robot>"""


def test_the_simulation_starts_on_a_bound_and_publishes_rest_on_it():
    """A joint whose limits exclude its URDF zero starts on the nearest bound; one named in
    initial_positions outside them is refused with the joint named.  The falling arm at
    the simulator's tick: never past a bound, and a joint lying on one publishes velocity 0
    exactly (it does not move; the others' velocities from their own rows)."""
    from ros_vi.simulation import OptionError, Simulation
    from ros_vi.urdf import import_urdf
    sim = Simulation(import_urdf(LIMITED_PENDULUM), 0.002)
    assert sim.state().positions[0] == 0.2
    sim.step(200)                  # gravity pulls it down onto the lower bound: it rests
    assert sim.state().positions[0] == 0.2 and sim.state().velocities[0] == 0.0
    with pytest.raises(OptionError, match="initial_positions: joint 'hinge' at 1.5 is outside "
                                          r"its limits \[0.2, 1\]"):
        Simulation(import_urdf(LIMITED_PENDULUM), 0.002, initial_positions={'hinge': 1.5})
    # switched off at the import: the URDF zero and beyond are allowed
    free = Simulation(import_urdf(LIMITED_PENDULUM, enforce_limits=False), 0.002,
                      initial_positions={'hinge': 1.5})
    swing = []
    for _ in range(1000):
        free.tick()
        swing.append(free.state().positions[0])
    assert min(swing) < -1.0           # through the hanging position, to about -1.5

    s = import_urdf_file(ROOT + '/urdf/arm7.urdf')
    lower, upper = s.urdf.position_limits
    sim = Simulation(s, 0.002, initial_positions={'joint_2': 0.4, 'joint_4': -0.8})
    on_bound = 0
    for _ in range(1500):
        sim.tick()
        st = sim.state()
        assert np.all(st.positions >= lower) and np.all(st.positions <= upper)
        held = sim.mvi.held_configs
        assert np.all(st.velocities[held] == 0.0)
        on_bound += held.shape[0] > 0
    assert on_bound > 1000
    assert st.positions[1] == upper[1]          # joint_2 lies on its upper bound
