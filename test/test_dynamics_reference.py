"""ros_vi's dynamics against independent references (test/reference/).

* The seed's closed-form 3-DOF mobile manipulator: M(q), C(q, qd) qd and g(q) at 100
  random states to 1e-12 (absolute + relative, scaled by the magnitude of the reference).
* The naive Lagrangian (plain 4x4 products, exact Jacobians, complex-step kinetic
  energy) on the 3-D chain and on a branching tree with a kinematic config: M, gravity
  forces, bias forces, energies and world poses of every mass frame to 1e-9 relative.
"""
import numpy as np
import pytest

import systems
from reference import mobile_manipulator as mm
from reference.naive_lagrangian import NaiveSystem

MM_TOL = 1e-12
NAIVE_TOL = 1e-9

# largest scaled errors seen, printed by test_report_errors (run with -s to see them)
MAX_ERRORS = {}


def _record(key, err):
    MAX_ERRORS[key] = max(MAX_ERRORS.get(key, 0.0), float(err))


def scaled_error(actual, expected):
    """max |actual - expected| / (1 + max |expected|)  (absolute + relative)."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape
    return float(np.abs(actual - expected).max() / (1.0 + np.abs(expected).max()))


def assert_scaled(actual, expected, tol, key):
    err = scaled_error(actual, expected)
    _record(key, err)
    assert err <= tol, '%s: scaled error %.3g > %.1g\nactual %s\nexpected %s' % (
        key, err, tol, actual, expected)


# ========================================================== mobile manipulator
def _mm_states(n=100, seed=2024):
    rng = np.random.RandomState(seed)
    for _ in range(n):
        q = np.array([rng.uniform(-3, 3), rng.uniform(-np.pi, np.pi),
                      rng.uniform(-np.pi, np.pi)])
        qd = rng.uniform(-3, 3, 3)
        yield q, qd


@pytest.fixture(scope='module')
def manipulator():
    s = systems.mobile_manipulator()
    assert [c.name for c in s.configs] == list(mm.CONFIG_NAMES)
    return s


def test_mobile_manipulator_mass_matrix(manipulator):
    s = manipulator
    for q, qd in _mm_states():
        s.q, s.dq = q, qd
        assert_scaled(s.mass_matrix(), mm.mass_matrix(q), MM_TOL, 'mm mass matrix')


def test_mobile_manipulator_gravity_vector(manipulator):
    s = manipulator
    for q, qd in _mm_states():
        s.q, s.dq = q, qd
        assert_scaled(s.gravity_forces(), mm.gravity_vector(q), MM_TOL, 'mm gravity')


def test_mobile_manipulator_coriolis(manipulator):
    s = manipulator
    for q, qd in _mm_states():
        s.q, s.dq = q, qd
        Cqd = s.bias_forces() - s.gravity_forces()
        assert_scaled(Cqd, mm.coriolis_matrix(q, qd) @ qd, MM_TOL, 'mm C(q,qd) qd')
        assert_scaled(s.bias_forces(), mm.bias_forces(q, qd), MM_TOL, 'mm bias')


def test_mobile_manipulator_energies_poses_and_dynamics(manipulator):
    s = manipulator
    for q, qd in _mm_states(30, seed=7):
        s.q, s.dq = q, qd
        assert_scaled(s.kinetic_energy(), mm.kinetic_energy(q, qd), MM_TOL, 'mm T')
        assert_scaled(s.potential_energy(), mm.potential_energy(q), MM_TOL, 'mm V')
        for name, p in zip(('base', 'link2', 'link3'), mm.com_positions(q)):
            np.testing.assert_allclose(s.get_frame(name).p()[:3], [p[0], p[1], 0.0],
                                       rtol=0, atol=1e-14)
        # the forward dynamics are a linear solve away from the above; checked looser
        assert_scaled(s.f(), mm.forward_dynamics(q, qd), 1e-10, 'mm forward dynamics')


# ============================================================ naive Lagrangian
def branching_tree_description():
    """Several branches at the world and inside the tree, rotated const_se3 frames,
    masses with inertia only, a config-driven frame carrying mass itself, and one
    kinematic config."""
    G1 = systems.se3(systems.rotation((0.3, -1.0, 0.4), 1.2), (0.0, 0.2, -0.1))
    G2 = systems.se3(systems.rotation((1.0, 0.0, 1.0), -0.8), (0.3, 0.0, 0.0))
    return [
        ('tx', 'slide', {'name': 'carriage', 'kinematic': True, 'mass': 2.0}), [
            ('rz', 'yaw', {'name': 'turret', 'mass': [0.0, 0.1, 0.2, 0.3]}), [
                ('const_se3', G1, {'name': 'mount'}), [
                    ('ry', 'pitch', {'name': 'arm1'}), [
                        ('tz', -0.7, {'name': 'arm1_com', 'mass': [1.1, 0.05, 0.07, 0.02]}),
                        ('tz', -1.4, {'name': 'elbow'}), [
                            ('rx', 'roll', {'name': 'forearm',
                                            'mass': [0.3, 0.01, 0.02, 0.03]}), [
                                ('ty', 0.5, {'name': 'hand', 'mass': [0.6, 0.02, 0.02,
                                                                      0.01]}),
                            ],
                            ('rz', 'wrist', {'name': 'wrist'}), [
                                ('tx', 0.4, {'name': 'tool', 'mass': [0.25, 0.0, 0.0,
                                                                      0.004]}),
                            ],
                        ],
                    ],
                ],
                ('ty', -0.3, {'name': 'counter'}), [
                    ('rx', 'swing', {'name': 'swing'}), [
                        ('tz', 'ext', {'name': 'ext', 'mass': [0.9, 0.03, 0.03, 0.01]}),
                    ],
                ],
            ],
        ],
        ('const_se3', G2, {'name': 'side_base'}), [
            ('ry', 'side', {'name': 'side'}), [
                ('tx', 0.8, {'name': 'side_mass', 'mass': [0.5, 0.02, 0.01, 0.015]}),
            ],
        ],
    ]


CASES = {
    'chain_3d': (systems.chain_3d_description, systems.CHAIN_3D_GRAVITY),
    'branching_tree': (branching_tree_description, (-0.7, 1.9, -9.6)),
}


def _pair(case):
    desc, gravity = CASES[case]
    s = systems.system_from_description(desc(), gravity)
    naive = NaiveSystem(desc(), [c.name for c in s.configs], gravity=gravity)
    return s, naive


def _naive_states(n, nq, seed):
    rng = np.random.RandomState(seed)
    for _ in range(n):
        yield rng.uniform(-np.pi, np.pi, nq), rng.uniform(-2.0, 2.0, nq)


def test_branching_tree_has_a_kinematic_config():
    s, _ = _pair('branching_tree')
    assert [c.name for c in s.kin_configs] == ['slide']
    assert s.configs[-1].name == 'slide'
    assert s.nQd == s.nQ - 1


@pytest.mark.parametrize('case', sorted(CASES))
def test_against_naive_lagrangian(case):
    s, naive = _pair(case)
    n, nd = s.nQ, s.nQd
    for q, qd in _naive_states(15, n, seed=5 + sorted(CASES).index(case)):
        s.q, s.dq = q, qd
        s.ddqk = 0.0
        key = 'naive %s ' % case
        M_ref = naive.mass_matrix(q)
        Mfull = np.array([[s.L_ddqddq(a, b) for b in range(n)] for a in range(n)])
        assert_scaled(Mfull, M_ref, NAIVE_TOL, key + 'M (all configs)')
        assert_scaled(s.mass_matrix(), M_ref[:nd, :nd], NAIVE_TOL, key + 'mass_matrix')
        assert_scaled(s.gravity_forces(), naive.gravity_forces(q)[:nd], NAIVE_TOL,
                      key + 'gravity_forces')
        assert_scaled(s.bias_forces(), naive.bias_forces(q, qd)[:nd], NAIVE_TOL,
                      key + 'bias_forces')
        assert_scaled(s.kinetic_energy(), naive.kinetic_energy(q, qd), NAIVE_TOL,
                      key + 'kinetic energy')
        assert_scaled(s.potential_energy(), naive.potential_energy(q), NAIVE_TOL,
                      key + 'potential energy')
        W = naive.world_transforms(q)
        masses = s.masses
        assert sorted(f.name for f in masses) == sorted(
            naive.frames[i].name for i in naive.mass_frames)
        for frame in masses:
            assert_scaled(frame.g(), W[frame.name], NAIVE_TOL, key + 'mass frame poses')
        for frame in s.frames[1:]:
            np.testing.assert_allclose(frame.g(), W[frame.name], rtol=0, atol=1e-12)
        # d/dq of the mass matrix (third derivative of L) against the exact reference
        D = naive.mass_matrix_derivative(q)
        mine = np.array([[[s.L_ddqddqdq(i, j, k) for j in range(n)] for i in range(n)]
                         for k in range(n)])
        assert_scaled(mine, D, NAIVE_TOL, key + 'dM/dq')


@pytest.mark.parametrize('case', sorted(CASES))
def test_forward_dynamics_against_naive(case):
    """With no forces and zero kinematic acceleration, f() is the naive forward dynamics
    of the dynamic block, with the kinematic velocity's Coriolis terms included."""
    s, naive = _pair(case)
    assert not s.forces
    n, nd = s.nQ, s.nQd
    for q, qd in _naive_states(5, n, seed=99):
        s.q, s.dq = q, qd
        s.ddqk = 0.0
        M = naive.mass_matrix(q)
        b = naive.bias_forces(q, qd)
        expected = np.linalg.solve(M[:nd, :nd], -b[:nd])
        assert_scaled(s.f(), expected, 1e-8, 'naive %s forward dynamics' % case)


def test_report_errors():
    """Prints the largest scaled errors measured above (pytest -s)."""
    for key in sorted(MAX_ERRORS):
        print('max scaled error %-45s %.3g' % (key, MAX_ERRORS[key]))
