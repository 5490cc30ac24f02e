"""The general path's stacked evaluations and caches.

Built-in components are evaluated for all members of a class at once (frame vectors,
springs, wrenches, constraints) and frames memoise their poses per state; these tests check
each stacked result against the component's own per-object computation (or finite
differences) and that every cache follows state, parameter and structure changes.  The
stacked kernels run on joint coordinates, so the comparisons run on a tree with mimic frames
as well (their derivatives must be folded onto the configs).
"""
import math

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import const_se3, mimic, rx, ry, rz, tx, ty, tz
from ros_vi.integrators.derivatives import midpoint_partials
from ros_vi.integrators.general_step import newton_jacobian
from ros_vi.mechanics import dynamics
from ros_vi.mechanics.framevectors import _chain_derivatives
from ros_vi.mechanics.framevectors import frame_vectors
from ros_vi.mechanics.pose import pose_derivatives

from systems import assert_close, rotation, se3


def tree(mimics=False):
    """A 3-D tree with every one-parameter transform, rotated constant offsets, a kinematic
    config and masses everywhere (11 configs).  With ``mimics``, the same configs and named
    frames with mimic frames inserted above 'tip' (a mimic of 'a', which also moves 'tip'
    itself, and below it a mimic of 'b': a mimic downstream of a mimic), above 'z2' (a mimic
    of 'e', on another branch) and above 'g' (a mimic of the kinematic config 'k')."""
    s = trep.System()
    T1 = se3(rotation([1, 1, 0], 0.7), [0.3, -0.2, 0.5])
    T2 = se3(rotation([0.2, -1, 0.4], 1.1), [0.1, 0.4, -0.3])
    body = [1.0, 0.1, 0.2, 0.3]
    tip = [const_se3(T2, name='tip', mass=body)]
    z2 = [rx('z2', name='z2', mass=body)]
    g = [tx('g', name='g', mass=body)]
    if mimics:
        tip = [rx(mimic('a', -0.8, 0.1), name='twin', mass=body), [
            rz(mimic('b', 1.3, -0.4), name='twin2'), tip]]
        z2 = [ry(mimic('e', 0.5, -0.2), name='zm'), z2]
        g = [tz(mimic('k', 2.0), name='follower', mass=body), g]
    s.import_frames([
        rz('a', mass=body), [
            const_se3(T1, name='off1'), [
                rx('b', mass=body), [
                    ty('c', mass=body, name='c'), [
                        ry('d'), tip,
                        tz('z', name='z', mass=body), z2]]]],
        tx('k', kinematic=True), [ry('e', mass=body), [tz(0.5, name='side', mass=body), [
            rz('f', name='f', mass=body), g]]],
        ty('y', name='y', mass=body),
    ])
    assert s.model.nt == s.nQ + (4 if mimics else 0)
    return s


def random_state(s, rng):
    s.q = rng.uniform(-1.2, 1.2, s.nQ)
    s.dq = rng.normal(size=s.nQ)
    if s.nu:
        s.u = rng.normal(size=s.nu)


def fd(s, fn, attr='q', h=1e-6):
    """Central differences of fn() in every component of s.<attr>, derivative index last."""
    base = np.array(getattr(s, attr))
    cols = []
    for i in range(base.size):
        x = base.copy()
        x[i] += h
        setattr(s, attr, x)
        fp = np.array(fn(), dtype=float)
        x[i] -= 2 * h
        setattr(s, attr, x)
        cols.append((fp - np.array(fn(), dtype=float)) / (2 * h))
    setattr(s, attr, base)
    return np.stack(cols, axis=-1)


# ---------------------------------------------------------------------- frame vectors
@pytest.mark.parametrize('mimics', [False, True])
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_stacked_frame_vectors_equal_the_chain_derivatives(seed, mimics):
    s = tree(mimics)
    rng = np.random.default_rng(seed)
    random_state(s, rng)
    fv = frame_vectors(s)
    items = []
    for name in ('tip', 'c', 'z2', 'side', 'g', 'y', 'World'):
        frame = s.get_frame(name)
        items.append((frame, None, fv.slot(frame)))
        n = rng.normal(size=3)
        items.append((frame, n, fv.slot(frame, n)))
    X, D1, D2 = fv.get(2)
    for frame, n, i in items:
        x, d1, d2 = _chain_derivatives(s, frame, 2, n)
        assert_close(x, X[i], rel=1e-14, abs_=1e-14, what=frame.name)
        assert_close(d1, D1[i], rel=1e-14, abs_=1e-14, what=frame.name)
        assert_close(d2, D2[i], rel=1e-14, abs_=1e-14, what=frame.name)
    # and against finite differences of the world vector itself
    frame, n, i = items[1]
    assert_close(D1[i].T, fd(s, lambda: frame.g()[:3, :3] @ n), what='D1 by differences')
    # every config that moves a vector is in its chain (and no other)
    for frame, n, i in items:
        moving = [c.index for c in s.configs if frame.uses_config(c)]
        assert sorted(fv.chain(i).tolist()) == moving, frame.name


def test_frame_vectors_follow_state_and_structure_changes():
    s = tree()
    fv = frame_vectors(s)
    tip = s.get_frame('tip')
    i = fv.slot(tip)
    s.q = 0.3
    first = fv.get(1)[0][i].copy()
    assert_close(tip.p()[:3], first, rel=1e-15, abs_=0.0)
    s.q = -0.4                                   # a new state
    assert fv.slot(tip) == i
    assert_close(tip.p()[:3], fv.get(1)[0][i], rel=1e-15, abs_=0.0)
    # a structure change renumbers frames and configs: slots are asked again
    s.get_frame('tip').import_frames([rx('extra'), [tz(0.3, name='beyond', mass=1.0)]])
    beyond = s.get_frame('beyond')
    j, i = fv.slot(beyond), fv.slot(tip)          # slots first, then the arrays
    s.q = np.linspace(-1, 1, s.nQ)
    X, D1, _ = fv.get(1)
    assert_close(beyond.p()[:3], X[j], rel=1e-15, abs_=0.0)
    assert_close(tip.p()[:3], X[i], rel=1e-15, abs_=0.0)
    assert_close(D1[j].T, fd(s, lambda: beyond.p()[:3]), what='new frame')
    # a constant transform is a parameter: same structure, new numbers
    s.get_frame('off1').transform_value = se3(rotation([0, 0, 1], 0.2), [1.0, 0.0, 0.0])
    j = fv.slot(beyond)
    assert_close(beyond.p()[:3], fv.get(1)[0][j], rel=1e-15, abs_=0.0)


@pytest.mark.parametrize('mimics', [False, True])
def test_a_higher_order_later_gives_the_same_first_derivatives(mimics):
    s = tree(mimics)
    random_state(s, np.random.default_rng(4))
    fv = frame_vectors(s)
    i = fv.slot(s.get_frame('g'))
    X1, D11, _ = (a.copy() for a in fv.get(1))
    X2, D12, D2 = fv.get(2)
    assert D2.shape == (X2.shape[0], s.nQ, s.nQ, 3)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(D11, D12)
    assert_close(D2[i], _chain_derivatives(s, s.get_frame('g'), 2)[2], rel=1e-14,
                 abs_=1e-14)


# ---------------------------------------------------------------------- frame memo
@pytest.mark.parametrize('mimics', [False, True])
def test_frame_pose_derivatives_follow_the_state_and_are_copies(mimics):
    s = tree(mimics)
    rng = np.random.default_rng(7)
    frame = s.get_frame('z2')
    for _ in range(2):
        random_state(s, rng)
        configs = s.configs
        G1 = np.array([frame.g_dq(c) for c in configs])
        assert_close(G1, fd(s, frame.g).transpose(2, 0, 1), what='g_dq')
        GI1 = np.array([frame.g_inv_dq(c) for c in configs])
        assert_close(GI1, fd(s, frame.g_inv).transpose(2, 0, 1), what='g_inv_dq')
        G2 = np.array([[frame.g_dqdq(a, b) for b in configs] for a in configs])
        assert_close(G2, fd(s, lambda: [frame.g_dq(c) for c in configs]).transpose(0, 3, 1, 2),
                     what='g_dqdq')
        GI2 = np.array([[frame.g_inv_dqdq(a, b) for b in configs] for a in configs])
        assert_close(GI2, fd(s, lambda: [frame.g_inv_dq(c) for c in configs])
                     .transpose(0, 3, 1, 2), what='g_inv_dqdq')
        P2 = np.array([[frame.p_dqdq(a, b) for b in configs] for a in configs])
        np.testing.assert_array_equal(P2, G2[..., :, 3])
        # by name and index as well as by object
        np.testing.assert_array_equal(frame.g_dqdq('b', 3), G2[1, 3])
    # the returned arrays are the caller's: writing into them changes nothing
    g = frame.g()
    g[:] = 0.0
    frame.g_dq('b')[:] = 0.0
    frame.g_inv()[:] = 0.0
    np.testing.assert_array_equal(frame.g(), s.get_frame('z2').g())
    assert np.abs(frame.g()).max() > 0.1 and np.abs(frame.g_dq('b')).max() > 0.1
    assert_close(frame.g_inv() @ frame.g(), np.eye(4), rel=0, abs_=1e-14)


def test_frame_memo_follows_parameters_structure_and_other_states():
    s = tree()
    tip = s.get_frame('tip')
    s.q = 0.2
    before = tip.g_dq('a')
    s.get_frame('off1').transform_value = se3(rotation([1, 0, 0], 0.5), [0.0, 1.0, 0.0])
    after = tip.g_dq('a')
    assert np.abs(after - before).max() > 1e-3
    assert_close(after, fd(s, tip.g)[..., 0], what='after a parameter change')
    # another state through evaluate_at, then back
    data = s.model.create_data()
    data.set(q=np.full(s.nQ, -0.7))
    with s.evaluate_at(data):
        other = tip.g_dq('a')
        assert_close(other, fd(s, tip.g)[..., 0], what='other state')
    np.testing.assert_array_equal(tip.g_dq('a'), after)
    # a structure change: the new config moves the frames below it
    assert tip.uses_config('a') and not tip.uses_config('e')   # answers before the change
    assert not s.get_frame('y').uses_config('b')
    s.get_frame('y').import_frames([rx('w'), [tz(1.0, name='w-end', mass=1.0)]])
    end = s.get_frame('w-end')
    assert end.uses_config('w') and end.uses_config('y') and not end.uses_config('a')
    assert not tip.uses_config('w') and tip.uses_config('d')
    s.q = 0.1
    assert_close(end.g_dq('w'), fd(s, end.g)[..., s.get_config('w').index], what='new')
    # the answers need no structure update: they work while changes are on hold, mimic
    # frames included (of a config built before, and of one built on hold, by name)
    w, a, b = s.get_config('w'), s.get_config('a'), s.get_config('b')
    s.hold_structure_changes()
    try:
        more = trep.Frame(end, trep.RY, 'v', name='v-frame')
        assert more.uses_config(more.config) and more.uses_config(w)
        assert not end.uses_config(more.config)
        twin = trep.Frame(more, trep.RX, mimic('a', 2.0), name='v-twin')
        later = trep.Frame(end, trep.TX, 'u', name='u-frame')
        follower = trep.Frame(end, trep.TZ, mimic('u', -1.0), name='u-follower')
        assert twin.uses_config(a) and twin.uses_config(more.config) and twin.uses_config(w)
        assert not more.uses_config(a) and not twin.uses_config(b)
        assert follower.uses_config(later.config) and not follower.uses_config(more.config)
    finally:
        s.resume_structure_changes()
    # once built, the same answers as the joint coordinates of the Model
    for frame in (twin, follower, more, end, tip):
        for c in s.configs:
            assert frame.uses_config(c) == bool(frame._coordinate_terms((c,))), (frame, c)


@pytest.mark.parametrize('mimics', [False, True])
def test_body_velocity_memo_follows_the_velocity(mimics):
    s = tree(mimics)
    rng = np.random.default_rng(9)
    frame = s.get_frame('g')
    for _ in range(2):
        random_state(s, rng)
        configs = s.configs
        expected = sum(dq * frame.g_inv() @ frame.g_dq(c) for dq, c in zip(s.dq, configs))
        assert_close(frame.vb(), expected, rel=1e-13, abs_=1e-13, what='vb')
        assert_close(np.array([frame.vb_dq(c) for c in configs]),
                     fd(s, frame.vb).transpose(2, 0, 1), what='vb_dq')
        assert_close(np.array([frame.vb_ddq(c) for c in configs]),
                     fd(s, frame.vb, 'dq').transpose(2, 0, 1), what='vb_ddq')
        assert_close(np.array([[frame.vb_dqdq(a, b) for b in configs] for a in configs]),
                     fd(s, lambda: [frame.vb_dq(c) for c in configs]).transpose(0, 3, 1, 2),
                     what='vb_dqdq')
    s.dq = 0.0
    np.testing.assert_array_equal(frame.vb(), np.zeros((4, 4)))


# ---------------------------------------------------------------------- springs
def springs_system(mimics=False):
    s = tree(mimics)
    pairs = [('World', 'tip', 0.0), ('tip', 'side', 0.8), ('c', 'g', 1.3), ('z2', 'y', 0.0),
             ('side', 'g', 0.4)]
    springs = [trep.potentials.LinearSpring(s, a, b, k=3.0 + i, x0=x0)
               for i, (a, b, x0) in enumerate(pairs)]
    return s, springs


@pytest.mark.parametrize('mimics', [False, True])
@pytest.mark.parametrize('seed', [0, 1])
def test_stacked_springs_equal_each_springs_own_derivatives(seed, mimics):
    s, springs = springs_system(mimics)
    random_state(s, np.random.default_rng(seed))
    own = [sp._compute(2) for sp in springs]      # the per-object path (tape measure)
    for sp, (V, Vq, Vqq) in zip(springs, own):
        assert sp.V() == pytest.approx(V, rel=1e-13)
        assert_close(sp.V_dq_array(), Vq, rel=1e-12, abs_=1e-12)
        assert_close(sp.V_dqdq_array(), Vqq, rel=1e-12, abs_=1e-12)
    e = dynamics.applied_terms(s)
    assert_close(e.V_dq, sum(o[1] for o in own), rel=1e-12, abs_=1e-12)
    assert_close(e.V_dqdq, sum(o[2] for o in own), rel=1e-12, abs_=1e-12)
    assert_close(e.V_dqdq, fd(s, lambda: dynamics.applied_forces(s).V_dq), what='V_dqdq')


def test_spring_parameters_and_new_springs_reach_the_sums():
    s, springs = springs_system()
    random_state(s, np.random.default_rng(3))
    V_dq = dynamics.applied_forces(s).V_dq.copy()
    springs[2].k = 10.0
    springs[1].x0 = 0.1
    expected = sum(sp._compute(1)[1] for sp in springs)
    assert np.abs(expected - V_dq).max() > 1e-3
    assert_close(dynamics.applied_forces(s).V_dq, expected, rel=1e-12, abs_=1e-12)
    extra = trep.potentials.LinearSpring(s, 'c', 'side', k=2.0, x0=0.3)
    expected = expected + extra._compute(1)[1]
    assert_close(dynamics.applied_forces(s).V_dq, expected, rel=1e-12, abs_=1e-12)


def test_a_spring_subclass_keeps_its_own_methods():
    class Doubled(trep.potentials.LinearSpring):
        def V_dq_array(self):
            return 2.0 * super().V_dq_array()

    s, springs = springs_system()
    doubled = Doubled(s, 'c', 'side', k=2.0, x0=0.3)
    random_state(s, np.random.default_rng(5))
    expected = sum(sp.V_dq_array() for sp in springs) + 2.0 * doubled._compute(1)[1]
    assert_close(dynamics.applied_forces(s).V_dq, expected, rel=1e-12, abs_=1e-12)


@pytest.mark.parametrize('mimics', [False, True])
def test_general_potential_energy_sums_the_stacked_springs_and_the_others(mimics):
    """dynamics.general_potential_energy (the integrator's acceptance test reads it): the
    stacked springs' energies and a subclass's own V(), against each one's per-object
    value, at two states (the batch memo must follow the state)."""
    class Doubled(trep.potentials.LinearSpring):
        def V(self):
            return 2.0 * super().V()

    s, springs = springs_system(mimics)
    doubled = Doubled(s, 'c', 'side', k=2.0, x0=0.3)
    rng = np.random.default_rng(7)
    for _ in range(2):
        random_state(s, rng)
        expected = (sum(sp._compute(0)[0] for sp in springs)
                    + 2.0 * doubled._compute(0)[0])
        assert dynamics.general_potential_energy(s) == pytest.approx(expected, rel=1e-13)


def test_a_degenerate_spring_fails_the_sum_with_its_own_error():
    s = trep.System()
    s.import_frames([tx('x', mass=1, name='block'), ty('y', mass=1, name='other')])
    trep.potentials.LinearSpring(s, 'block', 'other', k=5.0, x0=0.0)
    trep.potentials.LinearSpring(s, 'block', 'other', k=5.0, x0=0.5)
    s.q = 0.0
    with pytest.raises(ValueError, match='zero length'):
        dynamics.applied_forces(s)
    # its energy exists there: 1/2 5 0.5^2 (the other spring has zero length and x0 = 0)
    assert dynamics.general_potential_energy(s) == pytest.approx(0.625, rel=1e-15)
    s.q = [0.1, 0.2]
    assert np.isfinite(dynamics.applied_forces(s).V_dq).all()


# ---------------------------------------------------------------------- wrenches
def vee(T):
    return np.concatenate([T[..., :3, 3], np.stack([T[..., 2, 1], T[..., 0, 2], T[..., 1, 0]],
                                                   axis=-1)], axis=-1)


@pytest.mark.parametrize('mimics', [False, True])
@pytest.mark.parametrize('kind', [trep.forces.BodyWrench, trep.forces.HybridWrench,
                                  trep.forces.SpatialWrench])
def test_stacked_wrench_twists_equal_the_pose_derivative_twists(kind, mimics):
    s = tree(mimics)
    wrenches = [kind(s, name, (0.7, 'fy%d' % i, -1.3, 'tx%d' % i, 0.4, 0.2))
                for i, name in enumerate(('tip', 'g', 'z2'))]
    rng = np.random.default_rng(11)
    random_state(s, rng)
    for w in wrenches:
        pose = pose_derivatives({}, w.frame)
        for order in (0, 1):
            assert_close(w._tw(order), vee(w._twists(pose, order)), rel=1e-13, abs_=1e-13,
                         what='%s order %d' % (kind.__name__, order))
    F = sum(w._tw(0) @ w._values() for w in wrenches)
    F_dq = sum(w._tw(1) @ w._values() for w in wrenches)
    e = dynamics.applied_terms(s)
    assert_close(e.F, F, rel=1e-13, abs_=1e-13)
    assert_close(e.F_dq, F_dq, rel=1e-13, abs_=1e-13)
    assert_close(e.F_dq, fd(s, lambda: dynamics.applied_forces(s).F), what='F_dq')
    # inputs and constants are read at every state
    s.u = rng.normal(size=s.nu)
    wrenches[1].wrench_val = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    F = sum(w._tw(0) @ w._values() for w in wrenches)
    assert_close(dynamics.applied_forces(s).F, F, rel=1e-13, abs_=1e-13)
    assert_close(dynamics.applied_terms(s).F_du,
                 fd(s, lambda: dynamics.applied_forces(s).F, 'u'), what='F_du')


# ---------------------------------------------------------------------- constraints
def constrained_system(mimics=False):
    s = tree(mimics)
    cons = [trep.constraints.PointOnPlane(s, 'tip', (0.3, 1.0, -0.2), 'g'),
            trep.constraints.PointOnPlane(s, 'side', (1.0, 0.0, 0.0), 'z2')]
    cons += list(trep.constraints.PointToPoint3D(s, 'c', 'y'))
    cons.append(trep.constraints.PointToPoint1D(s, 'x', 'g', 'World'))
    cons.append(trep.constraints.Distance(s, 'tip', 'side', 1.5))
    cons.append(trep.constraints.Distance(s, 'z2', 'g', 'len'))
    cons.append(trep.constraints.Mimic(s, 'e', 'a', 0.5))
    return s, cons


@pytest.mark.parametrize('mimics', [False, True])
@pytest.mark.parametrize('seed', [0, 1])
def test_stacked_constraints_equal_each_constraints_own_derivatives(seed, mimics):
    s, cons = constrained_system(mimics)
    random_state(s, np.random.default_rng(seed))
    h = dynamics.constraint_values(s)
    Dh = dynamics.constraint_jacobian(s)
    H = dynamics.constraint_hessians(s)
    for i, con in enumerate(cons):
        assert con.index == i
        if isinstance(con, trep.constraints.Mimic):
            own = [con.h(), con.h_dq_array(), con.h_dqdq_array()]
        else:
            # the per-object path; at third order its frame vectors are the chain
            # derivatives, not the stacked ones
            own = con._compute(3)[:3]
        assert h[i] == pytest.approx(own[0], rel=1e-13, abs=1e-13)
        assert_close(Dh[i], own[1], rel=1e-13, abs_=1e-13, what=repr(con))
        assert_close(H[i], own[2], rel=1e-13, abs_=1e-13, what=repr(con))
        assert con.h() == h[i] and np.array_equal(con.h_dq_array(), Dh[i])
    assert_close(Dh.T, fd(s, lambda: dynamics.constraint_values(s)).T, what='Dh')
    assert_close(H, fd(s, lambda: dynamics.constraint_jacobian(s)), what='H')


def test_constraint_parameters_reach_the_stacked_values():
    s, cons = constrained_system()
    random_state(s, np.random.default_rng(2))
    h = dynamics.constraint_values(s).copy()
    cons[0].normal = (0.0, 0.0, 1.0)
    cons[-3].distance = 0.5
    s.get_config('len').q = 2.0
    new = dynamics.constraint_values(s)
    for i in (0, len(cons) - 3, len(cons) - 2):
        assert abs(new[i] - h[i]) > 1e-6
        assert new[i] == pytest.approx(cons[i]._compute(1)[0], rel=1e-13, abs=1e-13)
    assert_close(dynamics.constraint_jacobian(s)[0], cons[0]._compute(1)[1], rel=1e-13,
                 abs_=1e-13)
    # a normal that changes at every step registers no new frame vectors
    registered = len(frame_vectors(s)._items)
    for angle in np.linspace(0.0, 3.0, 20):
        cons[0].normal = (np.cos(angle), np.sin(angle), 0.0)
        assert dynamics.constraint_values(s)[0] == pytest.approx(cons[0]._compute(0)[0],
                                                                 rel=1e-13, abs=1e-13)
    assert len(frame_vectors(s)._items) == registered


# ---------------------------------------------------------------------- the integrator
def test_newton_jacobian_is_the_dynamic_block_of_the_midpoint_partials():
    s, _ = springs_system()
    trep.forces.HybridWrench(s, 'g', (1.0, -2.0, 0.5, 0.3, 0.0, 0.1))
    trep.forces.Damping(s, 0.3)
    random_state(s, np.random.default_rng(8))
    mvi = trep.MidpointVI(s)
    mvi.initialize_from_configs(0.0, s.q, 0.01, s.q + 0.001)
    mvi.set_midpoint()
    nd = s.nQd
    dt = mvi.t2 - mvi.t1
    np.testing.assert_array_equal(newton_jacobian(s, dt), midpoint_partials(s, dt)[0][:, :nd])


def test_the_step_is_the_same_with_and_without_the_stacked_classes():
    """A subclass opts out of the stacked evaluation: the same system built from trivial
    subclasses integrates to the same trajectory through the per-object methods."""
    class Spring(trep.potentials.LinearSpring):
        pass

    class Wrench(trep.forces.HybridWrench):
        pass

    def build(spring, wrench):
        s = trep.System()
        s.import_frames([rx('t1'), [tz('x1', name='A', mass=1), [
            rx('t2'), [tz('x2', name='B', mass=1), [
                ry(mimic('t1', 0.5)), [tx(0.2, name='C', mass=0.3)]]]]]])
        spring(s, 'World', 'A', 10.0, 1.0)
        spring(s, 'A', 'B', 10.0, 1.0)
        trep.forces.Damping(s, 0.5)
        wrench(s, 'B', (0, 1, -1))
        spring(s, 'World', 'C', 5.0, 0.5)         # moved through the mimic frame
        wrench(s, 'C', (0.5, 0, 0.2))
        s.q = [0.5, -1.0, 0.2, -1.0]
        return s

    out = []
    for classes in ((trep.potentials.LinearSpring, trep.forces.HybridWrench), (Spring, Wrench)):
        s = build(*classes)
        mvi = trep.MidpointVI(s)
        mvi.initialize_from_configs(0.0, s.q, 0.01, s.q)
        for _ in range(50):
            mvi.step(mvi.t2 + 0.01)
        out.append(mvi.q2)
    assert_close(out[0], out[1], rel=1e-12, abs_=1e-12)


# ---------------------------------------------------------------------- spline
def test_spline_scalar_evaluation_equals_the_array_evaluation():
    curve = trep.Spline([(0.0, 0.0, 0, 0), (0.25 * math.pi, 1.0), (0.75 * math.pi, 1.0),
                         (math.pi, 0.0, 0, 0), (2 * math.pi, 0.0, 0, 0)])
    xs = np.random.default_rng(0).uniform(-3.0, 10.0, 500)
    for method in (curve.y, curve.dy, curve.ddy):
        array = method(xs)
        scalar = np.array([method(float(x)) for x in xs])
        np.testing.assert_array_equal(scalar, array)
        assert isinstance(method(1.0), float) and isinstance(method(np.float64(1.0)), float)
        assert method(2) == method(2.0)
