"""Each formula of the mechanics once, and every result kept in the Data of its state.

The derivatives of a frame vector (a frame's origin, or a direction fixed in the frame) have
one definition, the kernel ``ros_vi.mechanics.kernel.frame_vectors`` (orders 0 to 2); the
built-in constraints (every order), the pose derivatives of the frame API, the tape measures
and the third derivatives are obtained from it.  Three second forms of a first derivative
remain, for the speed of the compiled step, of contact detection and of user forces, and are held here to
the first at random states of random trees (with mimic frames), to 1e-12:

* the compiled constraint kernel (h and Dh, the Jacobian paired with a wrench) against the
  general path's stacked constraints;
* the collision separation rates (also the wrench form) against the frame-vector D1;
* the first pose derivative of the frame API, dg/dq_a = S_a^ g (the twist form), against the
  frame vectors of the pose's axes and origin;

and the frame API's per-entry third pose derivative (products of twists, which also give the
fourth order and the body velocity's derivatives) against the stacked one.

The orders that NumPy adds on top of the kernel (the third derivatives of frame vectors,
poses, constraints and tape lengths, the fourth of the constraints) are checked against
central differences of the order below.

Then the state: two Data of one System evaluated on two threads side by side give exactly
what they give one after the other, an ``evaluate_at`` block concerns its own thread only,
and no module of the mechanics keeps a module-level mutable cache
(:func:`module_level_caches`, reusable for the rest of the core).
"""
import copy
import os
import pickle
import sys
import threading

import numpy as np
import pytest

import ros_vi as trep
from ros_vi.mechanics import constraint_kernel as ck
from ros_vi.mechanics import dynamics, kernel
from ros_vi.mechanics.framevectors import frame_vectors, vector_derivatives
from ros_vi.mechanics.pose import pose_derivatives
from ros_vi.urdf import import_urdf_file

from systems import assert_close, rotation, se3

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = (trep.RX, trep.RY, trep.RZ, trep.TX, trep.TY, trep.TZ, trep.CONST_SE3)
TIGHT = dict(rel=1e-12, abs_=1e-12)       # a second form against the first
DIFF = dict(rel=1e-6, abs_=1e-6)          # against central differences


# ---------------------------------------------------------------------- random systems
def random_tree(rng, njoints=7):
    """A random frame tree with every transform kind, mimic frames and kinematic configs:
    each joint frame hangs off a random earlier frame and carries a rigid offset (a random
    constant SE(3) child, so every joint has a lever arm); masses on every frame and
    gravity.  Returns (system, frames)."""
    while True:
        s = trep.System()
        frames = [s.world_frame]
        for i in range(njoints):
            parent = frames[rng.integers(len(frames))]
            kind = KINDS[rng.integers(len(KINDS) - 1)]
            mass = [rng.uniform(0.5, 2.0)] + list(rng.uniform(0.05, 0.2, 3))
            kinematic = False
            if rng.uniform() < 0.15:
                param = float(rng.normal())
            elif rng.uniform() < 0.25 and s.configs:
                leader = s.configs[rng.integers(len(s.configs))].name
                param = trep.mimic(leader, rng.uniform(-2.0, 2.0), rng.normal())
            else:
                param, kinematic = 'q%d' % i, rng.uniform() < 0.2
            joint = trep.Frame(parent, kind, param, name='j%d' % i, kinematic=kinematic,
                               mass=mass)
            offset = se3(rotation(rng.normal(size=3), rng.uniform(-2, 2)), rng.normal(size=3))
            frames += [joint, trep.Frame(joint, trep.CONST_SE3, offset, name='f%d' % i,
                                         mass=mass)]
        if s.nQ >= 3:
            trep.potentials.Gravity(s, (0.0, 0.0, -9.8))
            return s, frames


def pick_pair(rng, frames):
    a, b = rng.choice(len(frames), size=2, replace=False)
    return frames[a], frames[b]


def constrained_tree(rng):
    """A random tree with constraints of every built-in kind (the random frames may make
    some constraints redundant: nothing here solves with them)."""
    s, frames = random_tree(rng)
    trep.constraints.Distance(s, *pick_pair(rng, frames), rng.uniform(0.5, 2.0))
    trep.constraints.Distance(s, *pick_pair(rng, frames), 'len')
    trep.constraints.PointToPoint1D(s, 'xyz'[rng.integers(3)], *pick_pair(rng, frames))
    trep.constraints.PointToPoint3D(s, *pick_pair(rng, frames))
    a, b = pick_pair(rng, frames)
    trep.constraints.PointOnPlane(s, a, rng.normal(size=3), b)
    c, r = rng.choice(s.nQ, size=2, replace=False)
    trep.constraints.Mimic(s, s.configs[c], s.configs[r], rng.normal(), rng.normal())
    return s, frames


def set_random_state(s, rng):
    s.q = rng.uniform(-1.5, 1.5, s.nQ)
    s.dq = rng.normal(size=s.nQ)
    if s.nu:
        s.u = rng.normal(size=s.nu)


def central(s, fn, h=1e-6):
    """Central differences of ``fn()`` in every config, the config index last."""
    q0 = s.q
    cols = []
    for i in range(s.nQ):
        q = q0.copy()
        q[i] += h
        s.q = q
        plus = np.array(fn(), dtype=float)
        q[i] -= 2 * h
        s.q = q
        cols.append((plus - np.array(fn(), dtype=float)) / (2 * h))
    s.q = q0
    return np.stack(cols, axis=-1)


def compiled_constraints(s, CI, CF):
    """h (nc,) and Dh (nc, nQ) of the packed constraints as the compiled step computes
    them (its own kinematics of the joint coordinates, not the Data's)."""
    m = s.model
    theta = np.empty(m.nt)
    kernel.expand_into(s.q, np.zeros(m.nq), m.mimic_leader, m.mimic_multiplier,
                       m.mimic_offset, theta, np.empty(m.nt))
    R, P = kernel.forward_kinematics(*m.tree_args(), theta)
    S = kernel.joint_twists(m.kind, m.cframe, m.corder, R, P, m.nt)
    h = np.full(len(CI), np.nan)
    Dh = np.full((len(CI), m.nt), np.nan)
    ck.constraint_values_into(CI, CF, R, P, theta, h)
    ck.constraint_jacobian_into(CI, CF, m.fjoint, m.cparent, m.mimic_leader,
                                m.mimic_multiplier, R, P, S, theta, Dh)
    return h, Dh[:, :m.nq]


# ---------------------------------------------------------------------- second forms
@pytest.mark.parametrize('seed', range(8))
def test_compiled_constraints_equal_the_stacked_ones(seed):
    """The compiled step's h and Dh (Dh as twists paired with wrenches) against the general
    path's (dot products of the stacked frame vectors): equal to 1e-12, and Dh is the
    derivative of h."""
    rng = np.random.default_rng(seed)
    s, _ = constrained_tree(rng)
    CI, CF = ck.pack_constraints(s)
    for _ in range(4):
        set_random_state(s, rng)
        h, Dh = compiled_constraints(s, CI, CF)
        assert_close(h, dynamics.constraint_values(s), what='h', **TIGHT)
        assert_close(Dh, dynamics.constraint_jacobian(s), what='Dh', **TIGHT)
        assert np.abs(Dh).max() > 0.1
    assert_close(Dh, central(s, lambda: compiled_constraints(s, CI, CF)[0]), what='Dh by '
                 'differences', **DIFF)


@pytest.mark.parametrize('seed', range(4))
def test_separation_rates_equal_the_frame_vector_derivatives(seed):
    """The collision kernel's n . d(x_b - x_a)/dq (wrench form) against the frame vectors'
    first derivatives, for the frame origins of random pairs of frames."""
    rng = np.random.default_rng(seed)
    s, frames = random_tree(rng)
    set_random_state(s, rng)
    m = s.model
    pairs = [pick_pair(rng, frames) for _ in range(6)]
    fv = frame_vectors(s)
    slots = [(fv.slot(a), fv.slot(b)) for a, b in pairs]
    X, D1, _ = fv.get(1)
    n = rng.normal(size=(len(pairs), 3))
    n /= np.linalg.norm(n, axis=1)[:, None]
    R, P, S = s._kinematics()
    fa = np.array([a.index for a, _ in pairs], dtype=np.int64)
    fb = np.array([b.index for _, b in pairs], dtype=np.int64)
    out = np.zeros((len(pairs), m.nt))
    kernel.separation_rates_into(S, m.frame_anc, fa, fb, P[fa], P[fb], n, out)
    expected = np.array([(D1[b] - D1[a]) @ nk for (a, b), nk in zip(slots, n)])
    assert_close(m.fold(out, (1,)), expected, **TIGHT)


# ---------------------------------------------------------------------- higher orders
@pytest.mark.parametrize('seed', range(4))
def test_frame_vector_derivatives_against_differences(seed):
    """The kernel's orders 1 and 2 and the third order added to them, for the origin and
    a direction of every frame, each against central differences of the order below."""
    rng = np.random.default_rng(seed)
    s, frames = random_tree(rng)
    set_random_state(s, rng)
    directions = (None, rng.normal(size=3))

    def at_state(order):
        return [vector_derivatives(s.model, s._kinematics(), f.index, order, directions)
                for f in frames]
    now = at_state(3)
    for k in range(3):
        assert_close(np.array([d[k + 1] for d in now]),
                     np.moveaxis(central(s, lambda: [d[k] for d in at_state(k)]), -1, -2),
                     what='order %d' % (k + 1), **DIFF)
    # the registry's rows are the same vectors, to the bit
    fv = frame_vectors(s)
    i = fv.slot(frames[-1], directions[1])
    X, D1, D2 = fv.get(2)
    for a, b in zip((X[i], D1[i], D2[i]), now[-1]):
        np.testing.assert_array_equal(a, b[1])


@pytest.mark.parametrize('seed', range(3))
def test_pose_derivatives_are_the_frame_vectors_and_their_differences(seed):
    """A pose's derivatives are those of its axes and origin (the second order the same
    arrays as the frame vectors', the first their twist form to 1e-12); the inverse pose's
    and the third order against differences."""
    rng = np.random.default_rng(seed)
    s, frames = random_tree(rng)
    set_random_state(s, rng)
    frame = frames[-1]
    pose = pose_derivatives({}, frame)
    fv = frame_vectors(s)
    origin, ex = fv.slot(frame), fv.slot(frame, [1.0, 0.0, 0.0])
    axes = [fv.slot(frame, e) for e in np.eye(3)]
    X, D1, D2 = fv.get(2)
    assert_close(pose.G1[:, :3, 3], D1[origin], **TIGHT)        # the twist form
    for j, slot in enumerate(axes):
        assert_close(pose.G1[:, :3, j], D1[slot], **TIGHT)
    assert not pose.G1[:, 3].any()
    np.testing.assert_array_equal(pose.G2[..., :3, 0], D2[ex])
    assert_close(pose.G1, np.moveaxis(central(s, frame.g), -1, 0), **DIFF)
    assert_close(pose.GI1, np.moveaxis(central(s, frame.g_inv), -1, 0), **DIFF)
    assert_close(pose.GI2, np.moveaxis(central(s, lambda: pose_derivatives({}, frame).GI1),
                                       -1, 1), **DIFF)
    assert_close(pose.G3, np.moveaxis(central(s, lambda: pose_derivatives({}, frame).G2),
                                      -1, 2), **DIFF)
    # the frame API's per-entry third derivative (products of twists, the form that also
    # gives the fourth order and the body velocity's derivatives) is the same tensor
    n = s.nQ
    per_entry = np.array([[[frame.g_dqdqdq(a, b, c) for c in range(n)] for b in range(n)]
                          for a in range(n)])
    assert_close(per_entry, pose.G3, **TIGHT)


@pytest.mark.parametrize('seed', range(4))
def test_constraint_third_and_fourth_derivatives_against_differences(seed):
    """The orders added to the stacked ones: d3h/dq3 against differences of the stacked
    Hessians, fourth derivatives (a few entries) against differences of the third."""
    rng = np.random.default_rng(seed)
    s, _ = constrained_tree(rng)
    set_random_state(s, rng)
    H3 = dynamics.constraint_third_derivatives(s)
    assert_close(H3, central(s, lambda: dynamics.constraint_hessians(s)), **DIFF)
    assert np.abs(H3).max() > 0.1
    for con in s.constraints:
        for _ in range(2):
            a, b, c, d = rng.integers(s.nQ, size=4)
            fd = central(s, lambda: con.h_dqdqdq_array()[a, b, c])[d]
            assert con.h_dqdqdqdq(a, b, c, d) == pytest.approx(fd, rel=1e-5, abs=1e-5), con


def test_a_subclass_is_evaluated_by_the_same_definition():
    """A subclass of a built-in constraint (not compiled, not stacked with its base class)
    gets exactly the base class's values: the same kernel, on a batch of its own."""
    class Rope(trep.constraints.Distance):
        pass

    rng = np.random.default_rng(3)
    s, frames = random_tree(rng)
    a, b = pick_pair(rng, frames)
    base = trep.constraints.Distance(s, a, b, 1.2)
    sub = Rope(s, a, b, 1.2)
    assert ck.pack_constraints(s) is None
    set_random_state(s, rng)
    for x, y in zip(base._compute(3), sub._compute(3)):
        np.testing.assert_array_equal(x, y)
    Dh = dynamics.constraint_jacobian(s)
    np.testing.assert_array_equal(Dh[0], Dh[1])


def test_tape_measure_reads_the_frame_vectors():
    rng = np.random.default_rng(5)
    s, frames = random_tree(rng)
    set_random_state(s, rng)
    path = [frames[3], frames[0], frames[-1]]
    tape = trep.TapeMeasure(s, path)
    fv = frame_vectors(s)
    slots = [fv.slot(f) for f in path]
    X, D1, _ = fv.get(1)
    v = [X[j] - X[i] for i, j in zip(slots[:-1], slots[1:])]
    d = [D1[j] - D1[i] for i, j in zip(slots[:-1], slots[1:])]
    expected = sum(dk @ vk / np.linalg.norm(vk) for vk, dk in zip(v, d))
    np.testing.assert_array_equal(tape.length_dq_vector(), expected)
    assert_close(tape.length_dqdqdq_tensor(), central(s, tape.length_dqdq_matrix), **DIFF)


# ---------------------------------------------------------------------- state in Data
def arm_with_constraints():
    """urdf/arm7.urdf with a LinearSpring, wrenches and built-in constraints on it."""
    s = import_urdf_file(os.path.join(ROOT, 'urdf', 'arm7.urdf'))
    frames = [f for f in s.frames if f.name]
    tip, mid, base = frames[-1], frames[len(frames) // 2], frames[2]
    trep.potentials.LinearSpring(s, base, tip, 4.0, 0.3)
    trep.forces.HybridWrench(s, tip, (0.2, -0.1, 'pull', 0.0, 0.05, 0.0))
    trep.forces.BodyWrench(s, mid, (0.0, 0.3, 0.0, 0.1, 0.0, 0.0))
    trep.constraints.Distance(s, base, tip, 0.7)
    trep.constraints.PointOnPlane(s, mid, (0.2, 1.0, 0.1), tip)
    trep.constraints.PointToPoint3D(s, tip, 'World')
    return s


def evaluations(system, data, states):
    """Everything one Data gives at each state: mass matrix, constraint values, Jacobian and
    Hessians, applied forces and their Jacobians, frame vectors, a tape length's gradient
    and a pose derivative (copies)."""
    model = system.model
    frames = [f for f in system.frames if f.name][-3:]
    out = []
    with system.evaluate_at(data):
        fv = frame_vectors(system)
        slots = [fv.slot(f) for f in frames]
        tape = trep.TapeMeasure(system, frames)
        for q, dq, u in states:
            data.set(q, dq, u)
            row = [dynamics.mass_matrix(model, data),
                   dynamics.lagrangian_terms(model, data).Lqq.copy()]
            if system.nc:
                row += [dynamics.constraint_values(system), dynamics.constraint_jacobian(system),
                        dynamics.constraint_hessians(system)]
            row += [a.copy() for a in dynamics.applied_forces(system)]
            row += [a.copy() for a in dynamics.applied_jacobians(system)]
            X, D1, D2 = fv.get(2)
            row += [X[slots].copy(), D1[slots].copy(), D2[slots].copy(),
                    tape.length_dq_vector(), frames[-1].g_dq(0)]
            out.append(row)
    return out


@pytest.mark.parametrize('build', [arm_with_constraints,
                                   lambda: import_urdf_file(os.path.join(ROOT, 'urdf',
                                                                         'arm7.urdf'))])
def test_two_data_on_two_threads_give_what_they_give_one_after_the_other(build):
    system = build()
    model = system.model
    rng = np.random.default_rng(0)
    own = system.q.copy()
    runs = []
    for _ in range(2):
        states = [(rng.uniform(-1.5, 1.5, model.nq), rng.normal(size=model.nq),
                   rng.normal(size=model.nu)) for _ in range(120)]
        runs.append(states)
    one_after_the_other = [evaluations(system, model.create_data(), states)
                           for states in runs]

    results = [None, None]
    start = threading.Barrier(2)

    def work(k):
        start.wait()
        results[k] = evaluations(system, model.create_data(), runs[k])

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)           # interleave the two threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    for k in range(2):
        assert results[k] is not None, 'thread %d failed' % k
        for i, (a_row, b_row) in enumerate(zip(one_after_the_other[k], results[k])):
            for a, b in zip(a_row, b_row):
                np.testing.assert_array_equal(a, b, err_msg='thread %d, state %d' % (k, i))
    np.testing.assert_array_equal(system.q, own)     # the System's own state is untouched


def test_an_evaluate_at_block_concerns_its_own_thread():
    system = arm_with_constraints()
    system.q = 0.1
    own_h = dynamics.constraint_values(system).copy()
    data = system.model.create_data()
    data.set(np.full(system.nQ, -0.4), np.zeros(system.nQ))
    inside, go_on = threading.Event(), threading.Event()
    seen = {}

    def other():
        with system.evaluate_at(data):
            seen['q'] = system.q
            inside.set()
            go_on.wait(10)
            seen['h'] = dynamics.constraint_values(system).copy()

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    try:
        # while the other thread is inside its block, this one still sees the own state
        assert system.data is not data
        np.testing.assert_array_equal(system.q, np.full(system.nQ, 0.1))
        np.testing.assert_array_equal(dynamics.constraint_values(system), own_h)
    finally:
        go_on.set()
        t.join()
    np.testing.assert_array_equal(seen['q'], data.q)
    with system.evaluate_at(data):
        np.testing.assert_array_equal(dynamics.constraint_values(system), seen['h'])
    assert np.abs(seen['h'] - own_h).max() > 1e-3


def test_copies_of_an_evaluated_system_evaluate_alike():
    """A deep copy or a pickle of a System whose Data holds results (and whose stacking
    tables are built) evaluates to the same values (it rebuilds its tables)."""
    system = arm_with_constraints()
    system.q = 0.2
    system.u = 0.5
    before = evaluations(system, system.model.create_data(), [(system.q, system.dq, system.u)])
    dynamics.constraint_hessians(system)          # fill the System's own Data as well
    for other in (copy.deepcopy(system), pickle.loads(pickle.dumps(system))):
        np.testing.assert_array_equal(dynamics.constraint_jacobian(other),
                                      dynamics.constraint_jacobian(system))
        after = evaluations(other, other.model.create_data(),
                            [(system.q, system.dq, system.u)])
        for a, b in zip(before[0], after[0]):
            np.testing.assert_array_equal(a, b)
