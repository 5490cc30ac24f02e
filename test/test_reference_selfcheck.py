"""Self-consistency checks of the independent reference implementations in
test/reference/ (closed-form mobile manipulator and naive Lagrangian)."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from reference import mobile_manipulator as mm  # noqa: E402
from reference.naive_lagrangian import NaiveSystem  # noqa: E402


def _rand_states(n, nq, seed):
    rng = np.random.RandomState(seed)
    for _ in range(n):
        yield rng.uniform(-np.pi, np.pi, nq), rng.uniform(-2, 2, nq)


@pytest.fixture(scope='module')
def mm_naive():
    return NaiveSystem(mm.frames_description(), mm.CONFIG_NAMES, gravity=mm.GRAVITY)


# --------------------------------------------------------- mobile manipulator
def test_mobile_manipulator_closed_form_vs_naive(mm_naive):
    for q, qd in _rand_states(20, 3, 0):
        M_ref = mm.mass_matrix(q)
        np.testing.assert_allclose(mm_naive.mass_matrix(q), M_ref, rtol=0, atol=1e-10)
        np.testing.assert_allclose(mm_naive.gravity_forces(q), mm.gravity_vector(q),
                                   rtol=0, atol=1e-10)
        b_ref = mm.coriolis_matrix(q, qd) @ qd + mm.gravity_vector(q)
        np.testing.assert_allclose(mm_naive.bias_forces(q, qd), b_ref, rtol=0, atol=1e-8)
        np.testing.assert_allclose(mm_naive.bias_forces(q, qd, method='fd'), b_ref,
                                   rtol=0, atol=1e-8)
        np.testing.assert_allclose(mm_naive.coriolis_matrix(q, qd) @ qd,
                                   mm.coriolis_matrix(q, qd) @ qd, rtol=0, atol=1e-8)
        np.testing.assert_allclose(mm_naive.mass_matrix_derivative(q),
                                   mm.mass_matrix_derivative(q), rtol=0, atol=1e-10)
        assert abs(mm_naive.kinetic_energy(q, qd) - mm.kinetic_energy(q, qd)) < 1e-10
        assert abs(mm_naive.potential_energy(q) - mm.potential_energy(q)) < 1e-10
        tau = np.array([1.0, -0.5, 0.25])
        np.testing.assert_allclose(mm_naive.forward_dynamics(q, qd, tau),
                                   mm.forward_dynamics(q, qd, tau), rtol=0, atol=1e-8)


def test_mobile_manipulator_com_positions(mm_naive):
    for q, _ in _rand_states(5, 3, 1):
        W = mm_naive.world_transforms(q)
        coms = mm.com_positions(q)
        for name, p in zip(('base', 'link2', 'link3'), coms):
            np.testing.assert_allclose(W[name][:3, 3], [p[0], p[1], 0.0], atol=1e-14)
        # link 3 absolute angle is theta2 + theta3 about +z
        a = q[1] + q[2]
        np.testing.assert_allclose(W['link3'][:3, :3],
                                   [[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0],
                                    [0, 0, 1]], atol=1e-14)


def test_mobile_manipulator_closed_form_internal():
    """Closed-form dM/dq vs finite differences, g vs dV/dq, M symmetric PD."""
    h = 1e-6
    for q, _ in _rand_states(5, 3, 2):
        M = mm.mass_matrix(q)
        np.testing.assert_allclose(M, M.T, atol=0)
        assert np.all(np.linalg.eigvalsh(M) > 0)
        D = mm.mass_matrix_derivative(q)
        for k in range(3):
            e = np.zeros(3)
            e[k] = h
            np.testing.assert_allclose((mm.mass_matrix(q + e) - mm.mass_matrix(q - e)) / (2 * h),
                                       D[k], atol=1e-8)
            dV = (mm.potential_energy(q + e) - mm.potential_energy(q - e)) / (2 * h)
            assert abs(dV - mm.gravity_vector(q)[k]) < 1e-7


# ----------------------------------------------------------------- pendulum
def test_pendulum():
    # rx(theta) then tz(-1): p = Rx(theta) (0,0,-1) = (0, sin th, -cos th)
    # V = -m g.p = -(1)(-9.8)(-cos th) = -9.8 cos th ; dV/dth = +9.8 sin th
    sys_ = NaiveSystem([('rx', 'theta', {'name': 'shoulder'}),
                        [('tz', -1.0, {'name': 'bob', 'mass': 1.0})]],
                       ['theta'], gravity=(0, 0, -9.8))
    for th in np.linspace(-3, 3, 13):
        q = np.array([th])
        np.testing.assert_allclose(sys_.world_transforms(q)['bob'][:3, 3],
                                   [0, np.sin(th), -np.cos(th)], atol=1e-15)
        np.testing.assert_allclose(sys_.mass_matrix(q), [[1.0]], atol=1e-15)
        assert abs(sys_.potential_energy(q) + 9.8 * np.cos(th)) < 1e-13
        np.testing.assert_allclose(sys_.gravity_forces(q), [9.8 * np.sin(th)], atol=1e-13)
        np.testing.assert_allclose(sys_.bias_forces(q, [0.7]), [9.8 * np.sin(th)], atol=1e-12)
        np.testing.assert_allclose(sys_.forward_dynamics(q, [0.7]), [-9.8 * np.sin(th)],
                                   atol=1e-12)
        assert abs(sys_.kinetic_energy(q, [0.7]) - 0.5 * 0.49) < 1e-14


# ------------------------------------------------- a generic 3-D tree, all kinds
_C = np.array([[0.0, -1.0, 0.0, 0.3],
               [1.0, 0.0, 0.0, -0.2],
               [0.0, 0.0, 1.0, 0.5],
               [0.0, 0.0, 0.0, 1.0]])
TREE = [
    ('tx', 'a', {'name': 'cart', 'mass': [2.0, 0.1, 0.2, 0.3]}), [
        ('rz', 'b', {}), [
            ('ry', 'c', {'name': 'A', 'mass': [1.0, 0.3, 0.5, 0.7]}), [
                ('tz', -1.0, {}), [
                    ('rx', 'd', {'name': 'B', 'mass': [0.5, 0.05, 0.06, 0.02]}), [
                        ('ty', 0.4, {'mass': 0.3})]]],
            ('const', _C, {}), [
                ('ty', 'e', {}), [
                    ('rx', 0.3, {}), [
                        ('tz', 'f', {'name': 'C', 'mass': [0.8, 0.2, 0.1, 0.15]})]]]]],
    ('ry', 0.2, {}), [
        ('rz', 'g', {'kinematic': False}), [
            ('tx', 0.5, {'mass': [1.5, 0.4, 0.4, 0.1]})]],
]
TREE_CONFIGS = ['a', 'b', 'c', 'd', 'e', 'f', 'g']


@pytest.fixture(scope='module')
def tree():
    return NaiveSystem(TREE, TREE_CONFIGS, gravity=(0.3, -1.0, -9.8))


def test_kinetic_energy_is_quadratic_form(tree, mm_naive):
    for sys_, n, seed in ((tree, 7, 3), (mm_naive, 3, 4)):
        for q, qd in _rand_states(10, n, seed):
            T = sys_.kinetic_energy(q, qd)
            M = sys_.mass_matrix(q)
            assert abs(T - 0.5 * qd @ M @ qd) <= 1e-12 * max(1.0, abs(T))
            assert abs(sys_.kinetic_energy_fd(q, qd) - T) <= 1e-8 * max(1.0, abs(T))
            np.testing.assert_allclose(M, M.T, atol=1e-13)
            assert np.all(np.linalg.eigvalsh(M) > 0)


def test_tree_exact_derivatives_vs_fd(tree):
    h = 1e-5
    for q, qd in _rand_states(5, 7, 5):
        np.testing.assert_allclose(tree.mass_matrix_derivative(q),
                                   tree.mass_matrix_derivative(q, method='fd'),
                                   rtol=0, atol=1e-9)
        g = tree.gravity_forces(q)
        for k in range(7):
            e = np.zeros(7)
            e[k] = h
            dV = (tree.potential_energy(q + e) - tree.potential_energy(q - e)) / (2 * h)
            assert abs(dV - g[k]) < 1e-8


def test_tree_euler_lagrange_from_energy_only(tree):
    """bias == d/dt(dT/dqd) - dT/dq + dV/dq (qdd = 0), with every derivative
    taken numerically from kinetic_energy / potential_energy only (no
    Jacobians, no mass_matrix)."""
    n = 7
    E = np.eye(n)

    def M_from_T(q):
        # polarization of the quadratic form T(q, .)
        Tq = [tree.kinetic_energy(q, E[i]) for i in range(n)]
        M = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                M[i, j] = (tree.kinetic_energy(q, E[i] + E[j]) - Tq[i] - Tq[j]) if i != j \
                    else 2 * Tq[i]
        return M

    h = 1e-4
    for q, qd in _rand_states(3, n, 6):
        # d/dt (M qd) along q + t qd, central 4th order
        def p(t):
            return M_from_T(q + t * qd) @ qd
        dpdt = (-p(2 * h) + 8 * p(h) - 8 * p(-h) + p(-2 * h)) / (12 * h)
        dTdq = np.zeros(n)
        for k in range(n):
            def T(s):
                return tree.kinetic_energy(q + s * E[k], qd)
            dTdq[k] = (-T(2 * h) + 8 * T(h) - 8 * T(-h) + T(-2 * h)) / (12 * h)
        bias_el = dpdt - dTdq + tree.gravity_forces(q)
        np.testing.assert_allclose(tree.bias_forces(q, qd), bias_el, rtol=0, atol=1e-7)
