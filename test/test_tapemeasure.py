"""TapeMeasure: length of a polyline through frame origins and its derivatives.

Checked against (a) the built-in validate_* methods, (b) independent central differences
through the public API (System.q / System.dq setters), (c) lengths computed directly from
Frame.p(), and (d) the time derivative of the length along the velocity.
"""
import numpy as np
import pytest

import ros_vi as trep
from ros_vi import const_se3, const_txyz, rx, ry, rz, tx, ty, tz


def rot(axis, angle):
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def se3(R, p):
    g = np.eye(4)
    g[:3, :3] = R
    g[:3, 3] = p
    return g


def two_pendulums():
    s = trep.System()
    s.import_frames([
        ry('theta1'), [tz(2, mass=1, name='pend1')],
        tx(1), [ry('theta2'), [tz(2, mass=1, name='pend2')]],
    ])
    return s, ['pend1', 'pend2']


def chain3d():
    """A 3-D chain with constant SE(3) offsets, a kinematic config and a side branch."""
    s = trep.System()
    T1 = se3(rot([1, 1, 0], 0.7), [0.3, -0.2, 0.5])
    T2 = se3(rot([0.2, -1, 0.4], 1.1), [0.1, 0.4, -0.3])
    s.import_frames([
        rz('a'), [
            const_se3(T1, name='off1'), [
                rx('b'), [
                    ty('c', mass=0.5), [
                        ry('d'), [const_se3(T2, name='tip', mass=[1, 0.1, 0.2, 0.3])]]]]],
        tx('k', kinematic=True), [ry('e'), [tz(0.5, name='side', mass=1)]],
        const_txyz([0.2, 0.9, -0.4], name='anchor'),
    ])
    return s, ['tip', 'side', 'anchor', 'off1']


SYSTEMS = [two_pendulums, chain3d]


def random_state(s, rng):
    s.q = rng.uniform(-1.2, 1.2, s.nQ)
    s.dq = rng.normal(size=s.nQ)


def fd(s, fn, attr='q', h=1e-6):
    """Central differences of fn() in every component of s.<attr>; derivative index last."""
    base = np.array(getattr(s, attr))
    cols = []
    for i in range(base.size):
        x = base.copy()
        x[i] += h
        setattr(s, attr, x)
        fp = np.asarray(fn(), dtype=float)
        x[i] -= 2 * h
        setattr(s, attr, x)
        fm = np.asarray(fn(), dtype=float)
        cols.append((fp - fm) / (2 * h))
    setattr(s, attr, base)
    return np.stack(cols, axis=-1)


def all_entries(tm, s, name, nargs):
    c = s.configs
    f = getattr(tm, name)
    if nargs == 1:
        return np.array([f(a) for a in c])
    if nargs == 2:
        return np.array([[f(a, b) for b in c] for a in c])
    return np.array([[[f(a, b, d) for d in c] for b in c] for a in c])


@pytest.mark.parametrize('build', SYSTEMS)
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_validate_methods(build, seed):
    s, names = build()
    rng = np.random.default_rng(seed)
    random_state(s, rng)
    tm = trep.TapeMeasure(s, names)
    assert tm.validate_length_dq(verbose=True)
    assert tm.validate_length_dqdq(verbose=True)
    assert tm.validate_length_dqdqdq(verbose=True)
    assert tm.validate_length_dqdqddq()      # trep's documented (misspelt) name
    assert tm.validate_velocity_dq(verbose=True)
    assert tm.validate_velocity_ddq(verbose=True)
    assert tm.validate_velocity_dqdq(verbose=True)
    assert tm.validate_velocity_ddqdq(verbose=True)


@pytest.mark.parametrize('build', SYSTEMS)
@pytest.mark.parametrize('seed', [3, 4])
def test_independent_differences(build, seed):
    s, names = build()
    rng = np.random.default_rng(seed)
    random_state(s, rng)
    tm = trep.TapeMeasure(s, names)
    frames = [s.get_frame(n) for n in names]

    def direct_length():
        p = [f.p()[:3] for f in frames]
        return sum(np.linalg.norm(p[k + 1] - p[k]) for k in range(len(p) - 1))

    assert tm.length() == pytest.approx(direct_length(), rel=1e-12)
    x1 = all_entries(tm, s, 'length_dq', 1)
    x2 = all_entries(tm, s, 'length_dqdq', 2)
    x3 = all_entries(tm, s, 'length_dqdqdq', 3)
    np.testing.assert_allclose(x1, fd(s, direct_length), atol=1e-7)
    np.testing.assert_allclose(x2, fd(s, tm.length_dq_vector), atol=1e-6)
    np.testing.assert_allclose(x3, fd(s, tm.length_dqdq_matrix), atol=1e-5)
    # symmetry of the higher derivatives
    np.testing.assert_allclose(x2, x2.T, atol=1e-12)
    np.testing.assert_allclose(x3, x3.transpose(1, 0, 2), atol=1e-12)
    np.testing.assert_allclose(x3, x3.transpose(2, 1, 0), atol=1e-12)
    # whole-array helpers equal the per-entry methods
    np.testing.assert_allclose(tm.length_dq_vector(), x1, atol=0)
    np.testing.assert_allclose(tm.length_dqdq_matrix(), x2, atol=0)
    np.testing.assert_allclose(tm.length_dqdqdq_tensor(), x3, atol=0)

    # velocity: the time derivative of the length along dq
    q, dq = s.q, s.dq
    h = 1e-6
    s.q = q + h * dq
    lp = direct_length()
    s.q = q - h * dq
    lm = direct_length()
    s.q = q
    assert tm.velocity() == pytest.approx((lp - lm) / (2 * h), abs=1e-7)
    v_dq = all_entries(tm, s, 'velocity_dq', 1)
    v_ddq = all_entries(tm, s, 'velocity_ddq', 1)
    v_dqdq = all_entries(tm, s, 'velocity_dqdq', 2)
    v_ddqdq = all_entries(tm, s, 'velocity_ddqdq', 2)
    np.testing.assert_allclose(v_dq, fd(s, tm.velocity), atol=1e-6)
    np.testing.assert_allclose(v_ddq, fd(s, tm.velocity, 'dq'), atol=1e-7)
    np.testing.assert_allclose(v_dqdq, fd(s, tm.velocity_dq_vector), atol=1e-5)
    # [dq1, q2]: d/dq2 of d xdot / d dq1
    np.testing.assert_allclose(v_ddqdq, fd(s, tm.velocity_ddq_vector), atol=1e-6)
    np.testing.assert_allclose(fd(s, tm.velocity_dq_vector, 'dq'), v_ddqdq.T, atol=1e-6)
    np.testing.assert_allclose(tm.velocity_dqdq_matrix(), v_dqdq, atol=0)
    np.testing.assert_allclose(tm.velocity_ddqdq_matrix(), v_ddqdq, atol=0)
    assert tm.velocity_dddqdq(0, 1) == tm.velocity_ddqdq(0, 1)
    assert tm.velocity_ddqddq(0, 1) == 0.0


def test_properties_and_identifiers():
    s, names = two_pendulums()
    frames = [s.get_frame(n) for n in names]
    tm = trep.TapeMeasure(s, [frames[0], 'pend2'])
    assert tm.frames == tuple(frames)
    assert tm.system is s
    s.q = [0.2, -0.3]
    c = s.get_config('theta2')
    assert tm.length_dq('theta2') == tm.length_dq(c) == tm.length_dq(c.index)


def test_cache_follows_state_changes():
    s, names = two_pendulums()
    tm = trep.TapeMeasure(s, names)
    s.q = [0.1, 0.2]
    a = tm.length_dq_vector()
    s.get_config('theta1').q = 0.9
    b = tm.length_dq_vector()
    assert not np.allclose(a, b)
    s.q = [0.1, 0.2]
    np.testing.assert_allclose(tm.length_dq_vector(), a, atol=0)


def test_structure_change_after_creation():
    s, names = two_pendulums()
    tm = trep.TapeMeasure(s, names)
    s.q = [0.3, 0.1]
    before = tm.length()
    # adding a new config elsewhere changes nQ; the tape measure must follow
    trep.Frame(s.world_frame, trep.TZ, 'z_extra', name='extra')
    assert s.nQ == 3
    assert tm.length() == pytest.approx(before, rel=1e-14)
    assert tm.length_dq_vector().shape == (3,)
    assert tm.length_dq('z_extra') == 0.0
    assert tm.validate_length_dqdq()


def test_polyline_through_world():
    s, _ = two_pendulums()
    tm = trep.TapeMeasure(s, ['pend1', 'World', 'pend2'])
    s.q = [0.0, 0.0]
    # pend1 at (0, 0, 2), world origin, pend2 at (1, 0, 2)
    assert tm.length() == pytest.approx(2.0 + np.sqrt(5.0), rel=1e-14)


def test_zero_length_segment():
    s = trep.System()
    s.import_frames([tx('x', mass=1, name='block')])
    tm = trep.TapeMeasure(s, ['World', 'block'])
    s.q = 0.0
    assert tm.length() == 0.0
    for call in (lambda: tm.length_dq('x'), lambda: tm.length_dqdq('x', 'x'),
                 lambda: tm.velocity(), lambda: tm.velocity_dq('x')):
        with pytest.raises(ValueError, match='zero length'):
            call()
    s.q = -0.5
    assert tm.length() == pytest.approx(0.5)
    assert tm.length_dq('x') == pytest.approx(-1.0)


def test_bad_frames():
    s, _ = two_pendulums()
    with pytest.raises(KeyError, match='nonexistent'):
        trep.TapeMeasure(s, ['pend1', 'nonexistent'])
    with pytest.raises(ValueError, match='at least 2'):
        trep.TapeMeasure(s, ['pend1'])
    other, _ = two_pendulums()
    with pytest.raises(ValueError, match='another system'):
        trep.TapeMeasure(s, ['pend1', other.get_frame('pend2')])
