"""The robot descriptions of the MuJoCo/Pinocchio benchmark (benchmarks/robots.py) import
into ros_vi with the structure they are meant to have: DOF and mimic counts, both mimic
formulations, the four-bar's loop closed at its initial configuration.  Structure only; the
benchmark itself (and MuJoCo) is not needed here."""
import os
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ros_vi.mechanics import dynamics
from ros_vi.urdf import import_urdf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'benchmarks'))
import robots as R  # noqa: E402


def _reduced_mass_matrix(system, names, E, c, q_ind):
    """E^T M E (or M) in the independent coordinates, whichever form ``system`` has."""
    configs = {cfg.name for cfg in system.configs}
    full = all(n in configs for n in names)
    order = names if full else [n for n in names if n in configs]
    idx = [system.get_config(n).index for n in order]
    q = np.zeros(system.nQ)
    q[idx] = E @ q_ind + c if full else q_ind
    data = system.model.create_data()
    data.set(q, np.zeros(system.nQ))
    M = dynamics.mass_matrix(system.model, data)[np.ix_(idx, idx)]
    return E.T @ M @ E if full else M


def test_reduction_resolves_a_mimic_of_a_mimic():
    names = ['a', 'b', 'c', 'd']
    mimics = {'b': ('a', 2.0, 0.5), 'd': ('b', -1.0, 0.25)}
    independent, E, c = R.reduction(names, mimics)
    assert independent == ['a', 'c']
    q = E @ np.array([0.3, -0.7]) + c
    np.testing.assert_allclose(q, [0.3, 2.0 * 0.3 + 0.5, -0.7, -(2.0 * 0.3 + 0.5) + 0.25])


def test_reduction_refuses_a_mimic_cycle():
    with pytest.raises(ValueError, match='cycle'):
        R.reduction(['a', 'b'], {'a': ('b', 1.0, 0.0), 'b': ('a', 1.0, 0.0)})


def test_benchmark_urdf_removes_geometry_and_joint_dynamics():
    text = R.benchmark_urdf(R.shipped('arm7'))
    root = ET.fromstring(text)
    assert not [e for e in root.iter() if e.tag in ('visual', 'collision', 'dynamics')]
    system = import_urdf(text)
    assert system.nQ == 7
    assert 'damping' not in system.urdf.forces     # no <dynamics>: no Damping force
    # the bodies are untouched: same mass matrix as the original file
    original = import_urdf(R.shipped('arm7'))
    q = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(_reduced_mass_matrix(system, R.moving_joints(text), np.eye(7),
                                                    np.zeros(7), q),
                               _reduced_mass_matrix(original, R.moving_joints(text),
                                                    np.eye(7), np.zeros(7), q), atol=1e-14)


@pytest.mark.parametrize('make, n_moving, n_mimic', [(R.arm7_gripper, 9, 1),
                                                     (R.humanoid44, 44, 12)])
def test_mimic_robots_structure_in_both_formulations(make, n_moving, n_mimic):
    text = R.benchmark_urdf(make())
    names, mimics = R.moving_joints(text), R.mimic_table(text)
    assert len(names) == n_moving and len(mimics) == n_mimic
    # every mimic follows an independent joint (Pinocchio's mimic models need that)
    assert all(ref not in mimics for ref, _, _ in mimics.values())
    independent, E, c = R.reduction(names, mimics)
    n_ind = n_moving - n_mimic
    reduced = import_urdf(text, strict=True)                  # a clean description
    assert (reduced.nQ, reduced.nQd, reduced.nc) == (n_ind, n_ind, 0)
    assert [cfg.name for cfg in reduced.configs] == independent
    held = import_urdf(text, mimic='constraint')
    assert (held.nQ, held.nQd, held.nc) == (n_moving, n_moving, n_mimic)
    # the two formulations are the same mechanism: equal reduced mass matrices
    q = np.array([R.initial_configuration(text, seed=3, scale=1.0)[n] for n in independent])
    M_red = _reduced_mass_matrix(reduced, names, E, c, q)
    M_held = _reduced_mass_matrix(held, names, E, c, q)
    np.testing.assert_allclose(M_red, M_held, atol=1e-12 * np.abs(M_held).max())
    assert np.all(np.linalg.eigvalsh(M_red) > 0)


def test_arm7_gripper_right_jaw_mirrors_the_left():
    text = R.arm7_gripper()
    assert R.mimic_table(text) == {'jaw_right_joint': ('jaw_left_joint', 1.0, 0.0)}
    assert R.moving_joints(text)[:7] == ['joint_%d' % k for k in range(1, 8)]
    # mirror images: the jaws' centres of mass stay symmetric about the palm's x-z plane
    system = import_urdf(R.benchmark_urdf(text))
    system.get_config('jaw_left_joint').q = 0.4
    left, right = (system.get_frame(n + '::inertial').p()[:3] for n in ('jaw_left', 'jaw_right'))
    palm = system.get_frame('gripper_palm')
    to_palm = np.linalg.inv(palm.g())
    l_local, r_local = (to_palm @ np.append(p, 1.0) for p in (left, right))
    np.testing.assert_allclose(l_local[[0, 2]], r_local[[0, 2]], atol=1e-12)
    assert l_local[1] == pytest.approx(-r_local[1], abs=1e-12)


def test_humanoid44_hands():
    mimics = R.mimic_table(R.humanoid44())
    leaders = sorted({ref for ref, _, _ in mimics.values()})
    assert leaders == ['l_hand_f1_proximal', 'r_hand_f1_proximal']
    for leader in leaders:
        assert sum(ref == leader for ref, _, _ in mimics.values()) == len(R.HAND_MIMICS)


def test_initial_configuration_is_nonzero_and_inside_the_limits():
    text = R.benchmark_urdf(R.arm7_gripper())
    q = R.initial_configuration(text, seed=0)
    limits = R.joint_limits(text)
    assert set(q) == set(R.moving_joints(text)) - set(R.mimic_table(text))
    for name, value in q.items():
        lo, up = limits[name]
        assert lo <= value <= up and value != 0.0


@pytest.mark.parametrize('n', [2, 16, 64])
def test_chain_has_n_revolute_joints(n):
    system = import_urdf(R.chain_urdf(n), strict=True)
    assert system.nQ == system.nQd == n


def test_fourbar_loop_is_closed_at_the_initial_configuration():
    system, q0 = R.fourbar_system(closed=True)
    assert (system.nQ, system.nc) == (3, 2)
    np.testing.assert_allclose(system.q, q0)
    assert max(abs(con.h()) for con in system.constraints) <= 1e-12
    # the analytic gap used by the benchmark agrees: closed at q0, open elsewhere
    assert R.fourbar_loop_residual(q0) <= 1e-12
    assert R.fourbar_loop_residual(q0 + [0.1, 0.0, 0.0]) > 1e-2
    system.q = q0 + [0.1, 0.0, 0.0]
    gap = np.hypot(*[con.h() for con in system.constraints])
    assert gap == pytest.approx(R.fourbar_loop_residual(system.q), rel=1e-12)


def test_fourbar_open_chain_is_the_same_chain_without_the_loop():
    closed, q0 = R.fourbar_system(closed=True)
    open_, q_open = R.fourbar_system(closed=False)
    assert open_.nc == 0 and open_.nQ == 3
    np.testing.assert_array_equal(q_open, q0)
    for system in (closed, open_):
        system.q = q0
        system.dq = [0.3, -0.2, 0.1]
    assert open_.total_energy() == pytest.approx(closed.total_energy(), rel=1e-14)
    np.testing.assert_allclose(open_.mass_matrix(), closed.mass_matrix(), rtol=1e-14)


def test_fourbar_mjcf_describes_the_same_linkage():
    for closed in (True, False):
        root = ET.fromstring(R.fourbar_mjcf(closed))
        joints = [j.get('name') for j in root.iter('joint')]
        assert joints == [name for name, _, _ in R.FOURBAR_LINKS]
        masses = [float(i.get('mass')) for i in root.iter('inertial')]
        assert masses == [mass for _, _, mass in R.FOURBAR_LINKS]
        connects = list(root.iter('connect'))
        assert len(connects) == (1 if closed else 0)
    (connect,) = ET.fromstring(R.fourbar_mjcf(True)).iter('connect')
    sites = {s.get('name'): s.get('pos') for s in ET.fromstring(R.fourbar_mjcf(True)).iter('site')}
    assert {connect.get('site1'), connect.get('site2')} == set(sites)
