"""The compiled control laws of ros_vi.control.compiled against the controller objects.

Each compiled law is called through a small compiled wrapper that builds, as a rollout copy
does (ros_vi.batch.loop.run_copy), the controller model's views, its momentum
and energy at the state, and the kernel scratch the cart-pole and acrobot laws evaluate;
its efforts must equal ``controller.compute(q, v).u`` to 1e-10 relative, mode switching of
the hand-over included.  Closed-loop rollouts of the cart-pole and acrobot demos on the
compiled path must equal the general path (the objects called from Python).
"""
import math

import numpy as np
import pytest
from numba import njit

import ros_vi
from ros_vi.control import CartPoleSwingUp, SwingUpAndBalance
from ros_vi.control import compiled as laws
from ros_vi.control.presets import DEMOS, urdf_path
from ros_vi.integrators import packed
from ros_vi.integrators.fast_step import FastStepper
from ros_vi.integrators.node_state import momentum_energy
from ros_vi.urdf import import_urdf_file

RTOL = 1e-10


# Not cached on disk (no cache=True): numba would judge a cached copy fresh by this file's
# time alone, while it inlines ros_vi's packed layout and laws, which change under it (ros_vi's
# own kernels are stamped with the whole core: ros_vi.kernel_cache).
@njit
def _law_at(I, F, W, law_ints, row, balancing, q, v, u):
    """control_law at (q (n,), v (n,)) with the packed model (I, F) as its model: u (m,)
    written, returns the LQR cost-to-go (nan without an LQR)."""
    o = packed.layout(I)
    model = packed.model_views(I, F, o)
    ks = packed.kernel_scratch(I, W, o)
    nt, nd = I[packed.NT], I[packed.ND]
    qm, vm, zero = np.empty(nt), np.empty(nt), np.empty(nt)
    Md, Mc = np.empty((nd, nd)), np.empty((nd, nd))
    pc, scratch = np.empty(nd), np.empty(nd)
    T, V = momentum_energy(model, ks, qm, zero, Md, q, v, pc, scratch, Mc)
    dyn = (model, ks, qm, vm, zero, Md, Mc, np.empty((nd, 2)), np.empty((3, nd)))
    return laws.control_law(law_ints, row, balancing, q, v, pc, T + V, u,
                            np.empty(2 * nd), dyn)


@njit
def _collocated_at(I, F, W, q, v, c):
    """collocated_terms at (q, v) for config c: (f0_c, (M^-1)_cc)."""
    o = packed.layout(I)
    model = packed.model_views(I, F, o)
    ks = packed.kernel_scratch(I, W, o)
    nt, nd = I[packed.NT], I[packed.ND]
    dyn = (model, ks, np.empty(nt), np.empty(nt), np.empty(nt), np.empty((nd, nd)),
           np.empty((nd, nd)), np.empty((nd, 2)), np.empty((3, nd)))
    return laws.collocated_terms(dyn, q, v, c)


class Compiled:
    """One controller packed as a rollout packs it, callable like ``compute``."""

    def __init__(self, controller):
        st = FastStepper.for_system(controller.system)
        self.I, self.F, self.W = st.packed_structure(), st.packed_constants(), st.new_work()
        packed = laws.pack_controllers([controller], [st.damping()])
        assert packed is not None
        self.law_ints, table = packed
        self.row = table[0]
        self.balancing = np.zeros(1, dtype=np.int64)
        self.m = len(controller.input_names)

    def __call__(self, q, v):
        u = np.zeros(self.m)
        cost = _law_at(self.I, self.F, self.W, self.law_ints, self.row, self.balancing,
                       np.asarray(q, dtype=float), np.asarray(v, dtype=float), u)
        return u, cost

    def collocated(self, q, v, c):
        return _collocated_at(self.I, self.F, self.W, np.asarray(q, dtype=float),
                              np.asarray(v, dtype=float), c)


def _close(a, b, rtol=RTOL):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.all(np.abs(a - b) <= rtol * np.maximum(1.0, np.abs(b))))


def _controller(name, which):
    """A fresh controller of demo ``name``: 'handover' (the demo's), 'swingup' (its
    swing-up alone) or 'lqr'."""
    demo = DEMOS[name]
    system = demo.model()
    if which == 'lqr':
        return demo.lqr(system, dt=demo.dt)
    c = demo.controller(system, dt=demo.dt)
    return c.swingup if which == 'swingup' else c


def _states(name, rng, count):
    """(q, v) pairs of demo ``name``: far from the goal, near it (where the LQR takes
    over), and at rest (where the swing-ups kick)."""
    demo = DEMOS[name]
    n = len(demo.goal)
    out = []
    for k in range(count):
        if k % 3 == 0:
            q, v = demo.goal + rng.normal(0.0, 0.02, n), rng.normal(0.0, 0.05, n)
        else:
            q, v = rng.uniform(-3.0, 3.0, n), rng.uniform(-5.0, 5.0, n)
        if k % 7 == 0:
            v = np.zeros(n)
        if k % 11 == 0:
            q = demo.start.copy()
        out.append((q, v))
    return out


@pytest.mark.parametrize('name', ['cartpole', 'acrobot'])
def test_collocated_input_formula_matches_the_controller(name):
    """With one input on config c, u = (a - f0_c) / (M^-1)_cc gives c the acceleration a:
    the same input Controller._collocated_input solves for with the full M^-1 S."""
    swing = _controller(name, 'swingup')
    c = swing.cart if name == 'cartpole' else swing.active
    law = Compiled(swing)
    rng = np.random.default_rng(3)
    for _ in range(50):
        q, v, a = rng.uniform(-3, 3, 2), rng.uniform(-5, 5, 2), rng.uniform(-20, 20)
        f0, minv = law.collocated(q, v, c)
        ref = swing._collocated_input(q, v, [c], [a])
        assert _close((a - f0) / minv, ref), (q, v, a)
        # and that input does give config c the acceleration a in the model's dynamics
        swing.system.data.set(q, v, swing.full_input(ref))
        assert abs(swing.system.f()[c] - a) <= 1e-9 * max(1.0, abs(a))


CASES = [('pendulum', 'lqr', 'lqr'), ('cartpole', 'lqr', 'lqr'), ('acrobot', 'lqr', 'lqr'),
         ('pendulum', 'swingup', 'pendulum_swingup'),
         ('cartpole', 'swingup', 'cartpole_swingup'),
         ('acrobot', 'swingup', 'acrobot_swingup'),
         ('pendulum', 'handover', 'pendulum_swingup+lqr'),
         ('cartpole', 'handover', 'cartpole_swingup+lqr'),
         ('acrobot', 'handover', 'acrobot_swingup+lqr')]


@pytest.mark.parametrize('name,which,law_name', CASES)
def test_compiled_law_equals_the_object(name, which, law_name):
    controller = _controller(name, which)
    assert laws.compiled_law_name(controller) == law_name
    law = Compiled(controller)
    rng = np.random.default_rng(7)
    modes = set()
    for q, v in _states(name, rng, 120):
        u, cost = law(q, v)
        out = controller.compute(q, v)
        modes.add(out.mode)
        assert _close(u, out.u), (q, v, u, out.u, out.mode)
        if which == 'handover':
            assert (law.balancing[0] != 0) == controller.balancing, (q, v, cost)
            assert _close(cost, out.cost)
    expected = {'lqr': {'lqr'}, 'swingup': {'swingup', 'kick'},
                'handover': {'balance', 'swingup', 'kick'}}[which]
    assert modes == expected


@pytest.mark.parametrize('name', ['cartpole', 'acrobot'])
def test_handover_switches_modes_like_the_object(name):
    """Inside {V < c_in} the hand-over balances (the LQR's efforts), outside {V > c_out}
    it swings up (the swing-up's), and in between it keeps its mode."""
    controller = _controller(name, 'handover')
    law = Compiled(controller)
    demo = DEMOS[name]
    n = len(demo.goal)
    lqr, swing = controller.balance, controller.swingup
    inside = (demo.goal + 1e-3, np.zeros(n))
    outside = (demo.start + 0.1, np.full(n, 0.5))
    assert lqr.cost_to_go(*inside) < controller.c_in
    assert lqr.cost_to_go(*outside) > controller.c_out
    # a state in the band: scale the goal offset until V lands between c_in and c_out
    d = np.zeros(n)
    d[0] = 1e-3
    while lqr.cost_to_go(demo.goal + d, np.zeros(n)) < controller.c_in:
        d *= 1.05
    band = (demo.goal + d, np.zeros(n))
    assert controller.c_in <= lqr.cost_to_go(*band) <= controller.c_out
    for state, balancing, reference in ((outside, False, swing), (band, False, swing),
                                        (inside, True, lqr), (band, True, lqr),
                                        (outside, False, swing)):
        u, _ = law(*state)
        out = controller.compute(*state)
        assert controller.balancing is balancing
        assert bool(law.balancing[0]) is balancing
        assert _close(u, out.u)
        assert _close(u, reference.compute(*state).u)


def test_handover_on_two_models_is_compiled_only_when_they_agree():
    """The compiled hand-over evaluates one model; a swing-up on another System is
    accepted when it packs to the same constants and left to the general path otherwise."""
    demo = DEMOS['cartpole']
    lqr = demo.lqr(demo.model(), dt=demo.dt)
    same = CartPoleSwingUp(demo.model(), demo.dt)
    assert laws.compiled_law_name(SwingUpAndBalance(same, lqr)) == 'cartpole_swingup+lqr'
    weaker_gravity = import_urdf_file(urdf_path('cartpole'), gravity=(0.0, 0.0, -9.0))
    other = CartPoleSwingUp(weaker_gravity, demo.dt)
    assert laws.compiled_law_name(SwingUpAndBalance(other, lqr)) is None


def test_per_copy_gains_give_one_row_each():
    demo = DEMOS['acrobot']
    a = demo.controller(demo.model(), dt=demo.dt)
    b = demo.controller(demo.model(), dt=demo.dt)
    b.swingup.k_p = 7.0
    law_ints, table = laws.pack_controllers([a, b], [np.zeros(2), np.zeros(2)])
    assert table.shape[0] == 2
    assert table[0, law_ints[laws.O_KP]] == a.swingup.k_p == 6.0
    assert table[1, law_ints[laws.O_KP]] == 7.0
    assert list(law_ints[[laws.L_CFG_A, laws.L_CFG_B]]) == [a.swingup.active,
                                                             a.swingup.passive]


@pytest.mark.parametrize('name', ['cartpole', 'acrobot'])
def test_closed_loop_rollout_compiled_equals_general(name):
    """B = 3 copies of the demo from near the hanging start, dt 0.01, 3 s: the compiled
    path gives the general path's trajectories and efforts.  The cart-pole plants differ
    in mass from the controller's nominal model (the law then evaluates its own model)."""
    demo = DEMOS[name]
    # the acrobot with its gentler earlier gains: the shipped k_energy = 4 makes the swing
    # chaotic enough that the two paths' rounding (1e-16) grows to 1e-5 within the 3 s
    gains = {'k_energy': 0.5, 'k_p': 5.0, 'k_d': 5.0} if name == 'acrobot' else {}
    controller = demo.controller(demo.model(), dt=0.01, **gains)
    plant = demo.model()
    rng = np.random.default_rng(11)
    n = len(demo.start)
    q0 = demo.start + rng.normal(0.0, 0.1, (3, n))
    dq0 = rng.normal(0.0, 0.1, (3, n))
    q0[0], dq0[0] = demo.start, 0.0
    params = {'mass_scale': [1.0, 1.05, 0.95]} if name == 'cartpole' else None
    runs = [ros_vi.rollout(plant, q0, dq0, controller, 3.0, 0.01, params, record_every=1,
                           compiled=compiled) for compiled in (True, False)]
    fast, slow = runs
    assert list(fast.path) == ['compiled'] * 3
    assert list(slow.path) == ['general'] * 3
    assert fast.ok.all() and slow.ok.all()
    assert np.abs(fast.q_traj - slow.q_traj).max() <= 1e-9
    # the laws' velocity is a solve of their momentum on each path (compiled / LAPACK):
    # during the acrobot's swing the law's floored denominator amplifies that rounding
    assert np.abs(fast.v_traj - slow.v_traj).max() <= (1e-8 if name == 'acrobot' else 1e-9)
    # the last sample has no effort after it (nan on both paths)
    np.testing.assert_array_equal(np.isnan(fast.u_traj), np.isnan(slow.u_traj))
    # each compiled effort is the object's at the compiled run's own state (hand-over mode
    # carried from sample to sample as in the run)
    col = plant.get_input(controller.input_names[0]).index
    for b in range(3):
        controller.reset()
        efforts = np.zeros(n)               # applied over the tick before: none at first
        for k in range(fast.t.shape[0] - 1):
            u = controller.compute(fast.q_traj[b, k], fast.v_traj[b, k], efforts).u
            assert _close(fast.u_traj[b, k, col], u[0]), (b, k)
            efforts = np.zeros(n)
            efforts[controller._input_config_index] = fast.u_traj[b, k, col]
    # between the paths the efforts differ by more than the states: during the acrobot's
    # swing the law's denominator is floored at den_min = 0.1, which amplifies the paths'
    # 1e-10 velocity differences to ~2e-8 N m
    u_scale = max(1.0, np.nanmax(np.abs(slow.u_traj)))
    assert np.nanmax(np.abs(fast.u_traj - slow.u_traj)) <= 1e-7 * u_scale
    # the swing-up did work (not just a constant kick)
    assert np.nanmax(slow.u_traj) - np.nanmin(slow.u_traj) > 1.0
    assert math.isfinite(fast.energy_error.max())
