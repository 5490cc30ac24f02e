"""Frames: world poses, their derivatives, body velocities and the frame tree.

Every closed-form derivative is compared with central finite differences of the next
lower derivative at random states of the 3-D chain (all six transform types and a
rotated const_se3).
"""
import itertools

import numpy as np
import pytest

import ros_vi as trep
from ros_vi import const_se3, rx, ry, rz, tx, ty, tz

import systems

H = 1e-6          # finite-difference step
TOL = 2e-7        # absolute tolerance, scaled by (1 + |exact|)


def assert_fd(exact, approx, what, tol=TOL):
    exact = np.asarray(exact, dtype=float)
    approx = np.asarray(approx, dtype=float)
    assert exact.shape == approx.shape, what
    err = np.abs(exact - approx).max() if exact.size else 0.0
    scale = 1.0 + (np.abs(exact).max() if exact.size else 0.0)
    assert err <= tol * scale, '%s: error %.3g (exact %s, fd %s)' % (what, err, exact, approx)


def fd(system, attr, i, func, h=H):
    """Central difference of func() with respect to system.<attr>[i] (attr 'q' or 'dq')."""
    base = getattr(system, attr)
    plus, minus = base.copy(), base.copy()
    plus[i] += h
    minus[i] -= h
    setattr(system, attr, plus)
    fp = np.array(func(), dtype=float)
    setattr(system, attr, minus)
    fm = np.array(func(), dtype=float)
    setattr(system, attr, base)
    return (fp - fm) / (2 * h)


@pytest.fixture(params=[0, 1, 2])
def chain(request):
    system = systems.chain_3d()
    systems.random_state(system, 100 + request.param, q_scale=np.pi, dq_scale=2.0)
    return system


def _frames(system):
    return [f for f in system.frames if f is not system.world_frame] + [system.world_frame]


def _sample(rng, n, k, count):
    combos = list(itertools.product(range(n), repeat=k))
    if len(combos) <= count:
        return combos
    return [combos[i] for i in rng.choice(len(combos), count, replace=False)]


# ------------------------------------------------------------------------ poses
def test_g_is_rigid_and_g_inv_is_its_inverse(chain):
    for frame in _frames(chain):
        g = frame.g()
        assert g.shape == (4, 4)
        np.testing.assert_allclose(g[3], [0, 0, 0, 1], atol=0)
        R = g[:3, :3]
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-13)
        assert abs(np.linalg.det(R) - 1.0) < 1e-13
        np.testing.assert_allclose(frame.g_inv(), np.linalg.inv(g), atol=1e-12)
        p = frame.p()
        assert p.shape == (4,)
        np.testing.assert_allclose(p, g[:, 3], atol=0)


def test_g_is_product_of_local_transforms(chain):
    for frame in _frames(chain):
        expected = np.eye(4)
        node = frame
        while node is not None:
            expected = node.lg() @ expected
            node = node.parent
        np.testing.assert_allclose(frame.g(), expected, atol=1e-12)
    assert np.array_equal(chain.world_frame.g(), np.eye(4))


def test_g_first_derivatives(chain):
    n = chain.nQ
    for frame in _frames(chain):
        for i in range(n):
            assert_fd(frame.g_dq(i), fd(chain, 'q', i, frame.g), 'g_dq %s %d' % (frame.name, i))
            assert_fd(frame.p_dq(i), fd(chain, 'q', i, frame.p), 'p_dq %s %d' % (frame.name, i))
            assert_fd(frame.g_inv_dq(i), fd(chain, 'q', i, frame.g_inv),
                      'g_inv_dq %s %d' % (frame.name, i))


def test_g_second_derivatives(chain):
    n = chain.nQ
    for frame in _frames(chain):
        for i, j in itertools.product(range(n), repeat=2):
            assert_fd(frame.g_dqdq(i, j), fd(chain, 'q', j, lambda: frame.g_dq(i)),
                      'g_dqdq %s %d %d' % (frame.name, i, j))
            assert_fd(frame.p_dqdq(i, j), fd(chain, 'q', j, lambda: frame.p_dq(i)),
                      'p_dqdq %s %d %d' % (frame.name, i, j))
            assert_fd(frame.g_inv_dqdq(i, j), fd(chain, 'q', j, lambda: frame.g_inv_dq(i)),
                      'g_inv_dqdq %s %d %d' % (frame.name, i, j))
            # symmetry of mixed partials
            np.testing.assert_allclose(frame.g_dqdq(i, j), frame.g_dqdq(j, i), atol=1e-12)


def test_g_third_and_fourth_derivatives(chain):
    n = chain.nQ
    rng = np.random.RandomState(7)
    for frame in (chain.get_frame('tip'), chain.get_frame('G_mass'), chain.get_frame('E')):
        for i, j, k in _sample(rng, n, 3, 120):
            assert_fd(frame.g_dqdqdq(i, j, k), fd(chain, 'q', k, lambda: frame.g_dqdq(i, j)),
                      'g_dqdqdq %s' % frame.name)
            assert_fd(frame.p_dqdqdq(i, j, k), fd(chain, 'q', k, lambda: frame.p_dqdq(i, j)),
                      'p_dqdqdq %s' % frame.name)
        for i, j, k, m in _sample(rng, n, 4, 120):
            assert_fd(frame.g_dqdqdqdq(i, j, k, m),
                      fd(chain, 'q', m, lambda: frame.g_dqdqdq(i, j, k)),
                      'g_dqdqdqdq %s' % frame.name)
            assert_fd(frame.p_dqdqdqdq(i, j, k, m),
                      fd(chain, 'q', m, lambda: frame.p_dqdqdq(i, j, k)),
                      'p_dqdqdqdq %s' % frame.name)
            perm = rng.permutation([i, j, k, m])
            np.testing.assert_allclose(frame.g_dqdqdqdq(i, j, k, m),
                                       frame.g_dqdqdqdq(*perm), atol=1e-12)


def test_config_arguments_accept_index_name_or_object(chain):
    tip = chain.get_frame('tip')
    for config in chain.configs:
        a = tip.g_dq(config.index)
        np.testing.assert_array_equal(a, tip.g_dq(config.name))
        np.testing.assert_array_equal(a, tip.g_dq(config))
        np.testing.assert_array_equal(tip.vb_ddq(config.name), tip.vb_ddq(config))
    with pytest.raises(KeyError, match='nope'):
        tip.g_dq('nope')
    with pytest.raises(IndexError):
        tip.g_dq(chain.nQ)


# ---------------------------------------------------------------- body velocity
def test_vb_is_finite_difference_of_g_along_the_motion(chain):
    q0, dq = chain.q, chain.dq
    h = 1e-6
    for frame in _frames(chain):
        chain.q = q0 + h * dq
        gp = frame.g()
        chain.q = q0 - h * dq
        gm = frame.g()
        chain.q = q0
        expected = frame.g_inv() @ (gp - gm) / (2 * h)
        vb = frame.vb()
        assert_fd(vb, expected, 'vb %s' % frame.name)
        # a twist: skew rotation block, zero last row
        np.testing.assert_allclose(vb[:3, :3], -vb[:3, :3].T, atol=1e-12)
        np.testing.assert_array_equal(vb[3], np.zeros(4))


def test_vb_derivatives(chain):
    n = chain.nQ
    rng = np.random.RandomState(3)
    for frame in _frames(chain):
        for i in range(n):
            assert_fd(frame.vb_dq(i), fd(chain, 'q', i, frame.vb), 'vb_dq %s' % frame.name)
            assert_fd(frame.vb_ddq(i), fd(chain, 'dq', i, frame.vb), 'vb_ddq %s' % frame.name)
            # vb is linear in dq
            np.testing.assert_allclose(
                frame.vb(), sum(chain.dq[c] * frame.vb_ddq(c) for c in range(n)), atol=1e-12)
    for frame in (chain.get_frame('tip'), chain.get_frame('G_mass'), chain.get_frame('C')):
        for i, j in itertools.product(range(n), repeat=2):
            assert_fd(frame.vb_dqdq(i, j), fd(chain, 'q', j, lambda: frame.vb_dq(i)),
                      'vb_dqdq %s' % frame.name)
            assert_fd(frame.vb_ddqdq(i, j), fd(chain, 'q', j, lambda: frame.vb_ddq(i)),
                      'vb_ddqdq %s' % frame.name)
        for i, j, k in _sample(rng, n, 3, 40):
            assert_fd(frame.vb_dqdqdq(i, j, k), fd(chain, 'q', k, lambda: frame.vb_dqdq(i, j)),
                      'vb_dqdqdq %s' % frame.name)
            assert_fd(frame.vb_ddqdqdq(i, j, k),
                      fd(chain, 'q', k, lambda: frame.vb_ddqdq(i, j)),
                      'vb_ddqdqdq %s' % frame.name)


# ------------------------------------------------------------ local transforms
def test_local_transforms_and_twist_hat(chain):
    for frame in _frames(chain):
        lg = frame.lg()
        np.testing.assert_allclose(frame.lg_inv(), np.linalg.inv(lg), atol=1e-12)
        config = frame.config
        if config is None:
            for name in ('lg_dq', 'lg_dqdq', 'lg_dqdqdq', 'lg_dqdqdqdq', 'lg_inv_dq',
                         'lg_inv_dqdq', 'lg_inv_dqdqdq', 'lg_inv_dqdqdqdq', 'twist_hat'):
                assert np.array_equal(getattr(frame, name)(), np.zeros((4, 4))), name
            continue
        i = config.index
        chain_of = [frame.lg, frame.lg_dq, frame.lg_dqdq, frame.lg_dqdqdq, frame.lg_dqdqdqdq]
        for low, high in zip(chain_of[:-1], chain_of[1:]):
            assert_fd(high(), fd(chain, 'q', i, low), '%s %s' % (high.__name__, frame.name))
        chain_inv = [frame.lg_inv, frame.lg_inv_dq, frame.lg_inv_dqdq, frame.lg_inv_dqdqdq,
                     frame.lg_inv_dqdqdqdq]
        for low, high in zip(chain_inv[:-1], chain_inv[1:]):
            assert_fd(high(), fd(chain, 'q', i, low), '%s %s' % (high.__name__, frame.name))
        # twist_hat = lg^-1 d lg/dq: constant unit twist along the frame's own axis
        th = frame.twist_hat()
        np.testing.assert_allclose(th, frame.lg_inv() @ frame.lg_dq(), atol=1e-12)
        axis = 'xyz'.index(frame.transform_type[1])
        if frame.transform_type[0] == 'r':
            w = np.array([th[2, 1], th[0, 2], th[1, 0]])
            np.testing.assert_array_equal(w, np.eye(3)[axis])
            np.testing.assert_array_equal(th[:3, 3], 0)
        else:
            np.testing.assert_array_equal(th[:3, :3], 0)
            np.testing.assert_array_equal(th[:3, 3], np.eye(3)[axis])


def test_local_transform_values():
    system = trep.System()
    system.import_frames([rx('a'), ry('b'), rz('c'), tx('d'), ty('e'), tz('f'),
                          tx(0.5, name='fixed')])
    system.q = [0.3, 0.4, 0.5, 1.0, 2.0, 3.0]
    c, s = np.cos(0.3), np.sin(0.3)
    np.testing.assert_allclose(system.get_config('a').frame.lg()[:3, :3],
                               [[1, 0, 0], [0, c, -s], [0, s, c]], atol=1e-15)
    c, s = np.cos(0.4), np.sin(0.4)
    np.testing.assert_allclose(system.get_config('b').frame.lg()[:3, :3],
                               [[c, 0, s], [0, 1, 0], [-s, 0, c]], atol=1e-15)
    c, s = np.cos(0.5), np.sin(0.5)
    np.testing.assert_allclose(system.get_config('c').frame.lg()[:3, :3],
                               [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-15)
    for name, axis, value in (('d', 0, 1.0), ('e', 1, 2.0), ('f', 2, 3.0)):
        expected = np.eye(4)
        expected[axis, 3] = value
        np.testing.assert_array_equal(system.get_config(name).frame.lg(), expected)
    expected = np.eye(4)
    expected[0, 3] = 0.5
    np.testing.assert_array_equal(system.get_frame('fixed').lg(), expected)


# ------------------------------------------------------------------ tree
def test_uses_config_matches_finite_differences(chain):
    for frame in _frames(chain):
        for config in chain.configs:
            moved = np.abs(fd(chain, 'q', config.index, frame.g)).max() > 1e-6
            assert frame.uses_config(config) == moved, (frame.name, config.name)
            assert frame.uses_config(config.name) == moved
            assert frame.uses_config(config.index) == moved
    tip = chain.get_frame('tip')
    assert tip.uses_config('a') and tip.uses_config('f') and not tip.uses_config('g')
    assert not chain.world_frame.uses_config('a')
    with pytest.raises(KeyError, match='zz'):
        tip.uses_config('zz')


def _preorder_names(description):
    out = []
    for item in description:
        if isinstance(item, list):
            out.extend(_preorder_names(item))
        else:
            out.append(item[2].get('name') if len(item) > 2 else None)
    return out


def test_flatten_tree_is_depth_first():
    system = systems.chain_3d()
    expected = ['World'] + _preorder_names(systems.chain_3d_description())
    assert [f.name for f in system.world_frame.flatten_tree()] == expected
    assert [f.name for f in system.frames] == expected
    assert [f.index for f in system.frames] == list(range(len(expected)))
    B = system.get_frame('B')
    sub = [f.name for f in B.flatten_tree()]
    assert sub[0] == 'B'
    assert sub == expected[expected.index('B'):]
    assert [f.name for f in system.get_frame('tip').flatten_tree()] == ['tip']
    for frame in system.frames[1:]:
        assert frame in frame.parent.children


def test_tree_view_mentions_names():
    system = systems.chain_3d()
    text = system.world_frame.tree_view()
    for frame in system.frames:
        assert frame.name in text
    for config in system.configs:
        assert repr(config.name) in text
    # children are indented deeper than their parents
    lines = text.splitlines()
    depth = {line.strip().split('>')[0].lstrip('<'): len(line) - len(line.lstrip())
             for line in lines}
    assert depth['tip'] > depth['F_rot'] > depth['B'] > depth['World']


def _roundtrip(system):
    source = system.export_frames()
    new = trep.System()
    namespace = {'system': new}
    exec(compile(source, '<export_frames>', 'exec'), namespace)
    return new


@pytest.mark.parametrize('builder', [systems.chain_3d, systems.kinematic_system,
                                     systems.mobile_manipulator, lambda: systems.planar_chain(3)])
def test_export_import_round_trip(builder):
    system = builder()
    new = _roundtrip(system)
    assert [f.name for f in new.frames] == [f.name for f in system.frames]
    assert [(c.name, c.kinematic) for c in new.configs] == \
        [(c.name, c.kinematic) for c in system.configs]
    for a, b in zip(system.frames, new.frames):
        assert a.transform_type == b.transform_type
        assert a.mass == b.mass
        np.testing.assert_array_equal(a.inertia, b.inertia)
    rng = np.random.RandomState(5)
    for _ in range(5):
        q = rng.uniform(-3, 3, system.nQ)
        system.q = q
        new.q = q
        for a, b in zip(system.frames, new.frames):
            np.testing.assert_allclose(b.g(), a.g(), rtol=0, atol=1e-14)


# ----------------------------------------------------------- const_se3 and masses
@pytest.mark.parametrize('bad', [
    np.diag([2.0, 1.0, 1.0, 1.0]),                                  # scaling
    np.diag([1.0, 1.0, -1.0, 1.0]),                                 # reflection
    np.array([[1, 0.2, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]),  # shear
    np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0.1, 0, 0, 1.0]]),  # bottom row
    np.eye(3),                                                      # wrong shape
    np.full((4, 4), np.nan),                                        # not finite
])
def test_const_se3_rejects_non_rigid(bad):
    system = trep.System()
    with pytest.raises(ValueError, match='badframe'):
        system.import_frames([const_se3(bad, name='badframe')])
    with pytest.raises(ValueError, match='CONST_SE3'):
        trep.Frame(system.world_frame, trep.CONST_SE3, bad, name='badframe')
    good = trep.Frame(system.world_frame, trep.CONST_SE3, np.eye(4), name='good')
    with pytest.raises(ValueError, match='good'):
        good.transform_value = bad
    np.testing.assert_array_equal(good.g(), np.eye(4))


def test_const_se3_accepts_rotations_and_updates_poses():
    system = trep.System()
    G = systems.se3(systems.rotation((1, 1, 1), 1.1), (0.5, -0.2, 0.3))
    system.import_frames([rz('a'), [const_se3(G, name='c', mass=1.0)]])
    system.q = 0.4
    c = system.get_frame('c')
    np.testing.assert_allclose(c.g(), system.get_config('a').frame.lg() @ G, atol=1e-14)
    G2 = systems.se3(systems.rotation((0, 1, 0), -0.3), (1, 2, 3))
    c.transform_value = G2
    np.testing.assert_allclose(c.g(), system.get_config('a').frame.lg() @ G2, atol=1e-14)
    c.set_SE3(Rx=(0, 1, 0), Ry=(-1, 0, 0), Rz=(0, 0, 1), p=(1, 0, 0))
    np.testing.assert_allclose(c.lg(), [[0, -1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 0],
                                        [0, 0, 0, 1]], atol=0)


def test_set_mass_and_inertia_setters():
    system = systems.pendulum()
    bob = system.masses[0]
    assert bob.mass == 1.0 and (bob.Ixx, bob.Iyy, bob.Izz) == (0.0, 0.0, 0.0)
    system.q = 0.3
    np.testing.assert_allclose(system.mass_matrix(), [[1.0]], atol=1e-14)
    bob.set_mass(2.0, 0.1, 0.2, 0.3)
    assert (bob.mass, bob.Ixx, bob.Iyy, bob.Izz) == (2.0, 0.1, 0.2, 0.3)
    # rotation about x: M = m l^2 + Ixx
    np.testing.assert_allclose(system.mass_matrix(), [[2.0 + 0.1]], atol=1e-14)
    bob.Ixx = 0.5
    np.testing.assert_allclose(system.mass_matrix(), [[2.5]], atol=1e-14)
    bob.mass = 3.0
    np.testing.assert_allclose(system.mass_matrix(), [[3.5]], atol=1e-14)
    bob.Iyy = 0.7
    bob.Izz = 0.9
    np.testing.assert_array_equal(bob.inertia, np.diag([0.5, 0.7, 0.9]))
    np.testing.assert_allclose(system.mass_matrix(), [[3.5]], atol=1e-14)
    # gravity torque follows the mass
    np.testing.assert_allclose(system.gravity_forces(), [3.0 * 9.8 * np.sin(0.3)], atol=1e-12)
    with pytest.raises(ValueError, match='negative'):
        bob.mass = -1.0
    with pytest.raises(ValueError, match='finite'):
        bob.Ixx = np.nan
    with pytest.raises(ValueError):
        bob.set_mass(1.0, -1.0, 0.0, 0.0)
    assert bob.mass == 3.0 and bob.Ixx == 0.5


def test_giving_mass_to_a_massless_frame_updates_masses():
    system = trep.System()
    system.import_frames([rx('a', name='arm'), [tz(-1.0, name='bob')]])
    assert system.masses == ()
    system.get_frame('bob').mass = 2.0
    assert system.masses == (system.get_frame('bob'),)
    np.testing.assert_allclose(system.mass_matrix(), [[2.0]], atol=1e-14)
    system.get_frame('bob').mass = 0.0
    assert system.masses == ()


def test_mass_argument_forms():
    system = trep.System()
    system.import_frames([tx(0.0, name='m1', mass=2.0),
                          tx(0.0, name='m2', mass=[1.0, 0.1, 0.2, 0.3])])
    m1, m2 = system.get_frame('m1'), system.get_frame('m2')
    assert (m1.mass, m1.Ixx) == (2.0, 0.0)
    assert (m2.mass, m2.Ixx, m2.Iyy, m2.Izz) == (1.0, 0.1, 0.2, 0.3)
    with pytest.raises(ValueError, match='bad'):
        system.import_frames([tx(0.0, name='bad', mass=[1.0, 2.0])])


@pytest.mark.parametrize('mass', [[1.0, 2.0], -1.0, np.nan, [1.0, -0.1, 0.0, 0.0]])
def test_rejected_mass_leaves_no_orphan_config(mass):
    system = systems.pendulum()
    with pytest.raises(ValueError, match="'phi'"):
        system.get_frame(1).import_frames([ry('phi', mass=mass)])
    assert [c.name for c in system.configs] == ['theta']
    assert len(system.frames) == 3
    system.q, system.dq = 0.3, 0.1
    assert system.f().shape == (1,)
