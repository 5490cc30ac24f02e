"""The inertia policy (docs/urdf-import.md, "Inertia"): each moving rigid body (links merged
across fixed joints) is judged by its composite inertia, never the body welded to the world.
Every fixture that imports is checked against Pinocchio (mass matrix and bias forces to
1e-12 relative); the warnings and refusals are asserted word for word where they matter."""

import numpy as np
import pytest

from ros_vi.urdf import URDFError, import_urdf

import test_urdf_cases as cases
from test_urdf_tolerance import _import

pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) is the oracle')

L, J, I = cases.link, cases.joint, cases.inertial
IA = (0.3, 0.01, -0.02, 0.25, 0.03, 0.2)
# a moving arm under a base welded to the world; the fixtures hang links on it
ARM = [L('l1', I(1.5, (0.1, 0.2, 0.3), (0.3, -0.4, 0.5), IA)),
       J('j1', 'revolute', 'base', 'l1', (0.1, -0.2, 0.5), (0.4, 0.5, -0.6), (1, 2, -2),
         cases.LIM),
       L('l2', I(0.7, (0.0, 0.1, -0.2), (-0.2, 0.1, 0.7), IA)),
       J('j2', 'revolute', 'l1', 'l2', (0.3, 0, 0.1), (0, 0, 1.2), (0, 1, 0), cases.LIM)]
BASE = L('base', I(3.0, (0, 0, 0.1)))
TRIANGLE = (0.1, 0.0, 0.0, 0.1, 0.0, 0.5)            # principal moments 0.1, 0.1, 0.5
NOT_PSD = (1e-3, 2e-3, 0.0, 1e-3, 0.0, 1e-3)         # principal moments -1e-3, 1e-3, 3e-3


def _robot(name, items, base=BASE):
    return cases.robot(name, [base] + ARM + items)


def pinocchio_error(system, xml, seeds=(0, 1, 2)):
    """max over random states of the relative differences (max |ours - Pinocchio's| /
    max |Pinocchio's|) of the mass matrix and of the bias forces C(q, v) v + g(q)."""
    model = pin.buildModelFromXML(xml)
    data = model.createData()
    names = system.urdf.joint_names
    cols = [model.joints[model.getJointId(n)].idx_v for n in names]
    ours = [system.get_config(n).index for n in names]
    err = 0.0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        q, v = rng.uniform(-1.2, 1.2, len(names)), rng.uniform(-2, 2, len(names))
        qp, vp = pin.neutral(model), np.zeros(model.nv)
        qp[cols], vp[cols] = q, v
        qs, vs = system.q, system.dq
        qs[ours], vs[ours] = q, v
        system.q, system.dq = qs, vs
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        b = pin.rnea(model, data, qp, vp, np.zeros(model.nv))
        Mo = system.mass_matrix()[np.ix_(ours, ours)]
        bo = system.bias_forces()[ours]
        err = max(err, np.abs(Mo - M[np.ix_(cols, cols)]).max() / np.abs(M).max(),
                  np.abs(bo - b[cols]).max() / np.abs(b[cols]).max())
    return err


def _inertia_urdf(xml, link, tensor):
    """``xml`` with the <inertia> of ``link`` replaced by the symmetric ``tensor`` (3, 3)."""
    from lxml import etree
    root = etree.fromstring(xml.encode())
    el = root.find("link[@name='%s']/inertial/inertia" % link)
    for key, (i, k) in zip(('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'),
                           ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
        el.set(key, '%.17g' % tensor[i, k])
    return etree.tostring(root).decode()


def test_odd_links_welded_to_the_world_import_silently():
    # a rod-like placeholder on the root (moments 0, 0, 3e-6) and a non-PSD antenna fixed
    # to it: neither ever enters the mass matrix
    base = L('base', I(3.0, (0, 0, 0.1), I=(0, 0, 0, 0, 0, 3e-6)))
    xml = _robot('welded', [L('antenna', I(0.01, (0, 0, 0.2), I=(-3.5e-8, 0, 0, 9.1e-8, 0,
                                                                 9.1e-8))),
                            J('mount', 'fixed', 'base', 'antenna', (0.1, 0, 0.3))], base=base)
    system, caught = _import(xml)
    assert caught == [] and system.urdf.warnings == ()
    assert pinocchio_error(system, xml) <= 1e-12
    # strict has nothing to refuse either
    import_urdf(xml, strict=True)


def test_a_floating_base_root_body_is_judged():
    # the same odd root on a free joint (floating_base=True) moves: its triangle violation
    # (0, 0, 3e-6) is reported, as any moving body's
    base = L('base', I(3.0, (0, 0, 0.1), I=(0, 0, 0, 0, 0, 3e-6)))
    xml = _robot('floating', [], base=base)
    system, caught = _import(xml, floating_base=True)
    assert len(caught) == 1 and "link 'base'" in caught[0] and 'triangle' in caught[0]
    with pytest.raises(URDFError, match="link 'base'"):
        import_urdf(xml, floating_base=True, strict=True)


def test_odd_link_merged_into_a_normal_body_imports():
    # a camera whose own inertia is not positive semi-definite and a rod breaking the
    # triangle inequality, both bolted to l2: the composite body is a rigid body's
    xml = _robot('merged', [
        L('camera', I(0.05, (0.02, 0, 0), (0.3, 0.1, 0), (-3.5e-8, 0, 0, 9.1e-8, 0, 9.1e-8))),
        J('cam_mount', 'fixed', 'l2', 'camera', (0.1, 0.05, 0), (0.2, 0, 0.4)),
        L('rod', I(0.02, I=(0, 0, 0, 0, 0, 3e-6))),
        J('rod_mount', 'fixed', 'camera', 'rod', (0, 0.1, 0))])
    system, caught = _import(xml)
    assert caught == [] and system.urdf.warnings == ()
    assert pinocchio_error(system, xml) <= 1e-12
    # the body's root link carries the composite: the camera's own tensor cannot be a frame's
    assert system.get_frame('l2::inertial').mass == pytest.approx(0.77, rel=1e-15)
    assert [f.name for f in system.frames if f.name in ('camera::inertial', 'rod::inertial')] \
        == []
    import_urdf(xml, strict=True)


def test_zero_and_rounding_noise_inertias_are_fine():
    # a point mass (zero inertia) and a head whose moments are (-2.4e-35, 0, 2.4e-35)
    xml = _robot('zero', [
        L('bob', I(0.5, (0, 0, -0.3), I=(0, 0, 0, 0, 0, 0))),
        J('j3', 'revolute', 'l2', 'bob', (0, 0.2, 0), axis=(1, 0, 0), limit=cases.LIM),
        L('head', I(0.8, (0, 0.1, 0), I=(0, 2.4e-35, 0, 0, 0, 0))),
        J('neck', 'revolute', 'l2', 'head', (0.1, 0, 0), axis=(0, 0, 1), limit=cases.LIM)])
    system, caught = _import(xml, strict=True)
    assert caught == [] and system.urdf.warnings == ()
    assert pinocchio_error(system, xml) <= 1e-12
    head = system.get_frame('head::inertial').inertia
    assert head[0, 1] == pytest.approx(2.4e-35, rel=1e-15)          # as written


TRIANGLE_WARNING = (
    "URDF robot 'tri': link 'l3': inertia violates the triangle inequality (principal moments "
    "[0.1, 0.1, 0.5]: 0.5 > 0.1 + 0.1; no rigid body has these moments); imported it as "
    "written (as urdfdom, Pinocchio and Gazebo do; inertia='balance' evens the moments out as "
    "MuJoCo's balanceinertia does)")


def _triangle():
    return _robot('tri', [L('l3', I(0.6, (0, 0, 0.1), (0.3, 0, 0.2), TRIANGLE)),
                          J('j3', 'revolute', 'l2', 'l3', (0, 0.2, 0), axis=(1, 0, 0),
                            limit=cases.LIM)])


def test_triangle_violation_imports_as_written_with_one_warning():
    xml = _triangle()
    system, caught = _import(xml)
    assert caught == [TRIANGLE_WARNING]
    assert len(system.urdf.warnings) == 1
    np.testing.assert_array_equal(system.get_frame('l3::inertial').inertia,
                                  np.diag([0.1, 0.1, 0.5]))
    assert pinocchio_error(system, xml) <= 1e-12
    with pytest.raises(URDFError, match=r"link 'l3': inertia violates the triangle "
                                        r"inequality .*refused: strict import"):
        import_urdf(xml, strict=True)


def test_balance_sets_the_moments_to_their_mean_as_mujoco():
    xml = _triangle()
    system, caught = _import(xml, inertia='balance')
    assert len(caught) == 1 and caught[0].startswith(TRIANGLE_WARNING.split('; imported')[0])
    assert caught[0].endswith("balanced it as MuJoCo's balanceinertia does "
                              "(inertia='balance'): the principal moments set to their mean "
                              "0.233333333")
    balanced = system.get_frame('l3::inertial').inertia
    np.testing.assert_allclose(balanced, np.eye(3) * 0.7 / 3, rtol=1e-15, atol=1e-16)
    assert pinocchio_error(system, _inertia_urdf(xml, 'l3', balanced)) <= 1e-12
    with pytest.raises(URDFError, match='strict'):
        import_urdf(xml, strict=True, inertia='balance')


def test_composite_triangle_violation_balanced_onto_the_root_link():
    flat = (0.0, 0, 0, 0.0, 0, 2e-3)                 # moments 0, 0, 2e-3: a flat disc edge-on
    xml = _robot('discs', [L('d1', I(0.5, (0, 0, 0.05), I=flat)),
                           J('j3', 'revolute', 'l2', 'd1', (0, 0.2, 0), axis=(1, 0, 0),
                             limit=cases.LIM),
                           L('d2', I(0.5, (0, 0, 0.05), I=flat)),
                           J('weld', 'fixed', 'd1', 'd2', (0, 0, 0))])
    system, caught = _import(xml)
    assert caught == [
        "URDF robot 'discs': link 'd1': one rigid body with 'd2' fixed to it, its inertia "
        "violates the triangle inequality (principal moments [0, 0, 0.004]: 0.004 > 0 + 0; no "
        "rigid body has these moments); imported it as written (as urdfdom, Pinocchio and "
        "Gazebo do; inertia='balance' evens the moments out as MuJoCo's balanceinertia does)"]
    assert pinocchio_error(system, xml) <= 1e-12
    system, caught = _import(xml, inertia='balance')
    assert len(caught) == 1 and "mean 0.00133333333" in caught[0]
    lumped = system.get_frame('d1::inertial')
    assert lumped.mass == 1.0 and 'd2::inertial' not in [f.name for f in system.frames]
    np.testing.assert_allclose(lumped.inertia, np.eye(3) * 4e-3 / 3, rtol=1e-14)
    np.testing.assert_allclose(system.get_frame('d1::inertial').p()[:3],
                               system.get_frame('d1').p()[:3] +
                               system.get_frame('d1').g()[:3, :3] @ [0, 0, 0.05], atol=1e-15)


def _not_psd():
    return _robot('neg', [L('l3', I(0.6, (0, 0, 0.1), (0.3, 0, 0.2), NOT_PSD)),
                          J('j3', 'revolute', 'l2', 'l3', (0, 0.2, 0), axis=(1, 0, 0),
                            limit=cases.LIM)])


def test_non_psd_moving_link_is_refused_naming_it_and_its_moments():
    with pytest.raises(URDFError) as err:
        import_urdf(_not_psd())
    assert str(err.value) == (
        "URDF robot 'neg': link 'l3': inertia is not positive semi-definite beyond rounding "
        "(principal moments [-0.001, 0.001, 0.003] about its centre of mass [kg m^2]; negative "
        "moments up to 1e-06 of the largest are clipped); fix the description, or import with "
        "inertia='repair' to move it to the nearest valid inertia")
    with pytest.raises(URDFError, match='not positive semi-definite beyond rounding'):
        import_urdf(_not_psd(), inertia='balance')


def test_repair_moves_a_non_psd_inertia_to_the_nearest_valid_one():
    xml = _not_psd()
    system, caught = _import(xml, inertia='repair')
    # clipped to (0, 1e-3, 3e-3), then projected onto a + b >= c: (2, 5, 7) 1e-3 / 3
    assert caught == [
        "URDF robot 'neg': link 'l3': inertia is not positive semi-definite (principal moments "
        "[-0.001, 0.001, 0.003]); repaired it to the nearest valid inertia (principal moments "
        "[0.000666666667, 0.00166666667, 0.00233333333])"]
    repaired = system.get_frame('l3::inertial').inertia
    ev = np.linalg.eigvalsh(repaired)
    np.testing.assert_allclose(ev, np.array([2, 5, 7]) * 1e-3 / 3, rtol=1e-12)
    assert ev[0] + ev[1] >= ev[2] * (1 - 1e-14)
    # the eigenvectors are kept: the repaired tensor is diagonal in the same axes
    _, vecs = np.linalg.eigh(np.array([[1e-3, 2e-3, 0], [2e-3, 1e-3, 0], [0, 0, 1e-3]]))
    np.testing.assert_allclose(vecs.T @ repaired @ vecs, np.diag(ev), atol=1e-17)
    assert pinocchio_error(system, _inertia_urdf(xml, 'l3', repaired)) <= 1e-12
    with pytest.raises(URDFError, match='strict'):
        import_urdf(xml, strict=True, inertia='repair')


def test_repair_also_makes_a_triangle_violation_the_nearest_valid_inertia():
    system, caught = _import(_triangle(), inertia='repair')
    assert len(caught) == 1 and caught[0].endswith(
        'repaired it to the nearest valid inertia (principal moments [0.2, 0.2, 0.4])')
    np.testing.assert_allclose(np.linalg.eigvalsh(system.get_frame('l3::inertial').inertia),
                               [0.2, 0.2, 0.4], rtol=1e-15)


def test_unknown_inertia_policy_is_refused():
    with pytest.raises(ValueError, match="inertia must be one of 'check', 'balance', 'repair'"):
        import_urdf(_triangle(), inertia='mujoco')


def _hung(tensor):
    """The moving joint's child l3 is massless; the mass hangs on a link fixed below it."""
    return _robot('hung', [L('l3'), J('j3', 'revolute', 'l2', 'l3', (0, 0.2, 0), axis=(1, 0, 0),
                                      limit=cases.LIM),
                           L('weight', I(0.6, (0, 0, 0.1), (0.3, 0, 0.2), tensor)),
                           J('hang', 'fixed', 'l3', 'weight', (0, 0, -0.3))])


def test_a_body_with_one_massive_link_is_named_after_it():
    xml = _hung(TRIANGLE)
    system, caught = _import(xml)
    assert caught == [TRIANGLE_WARNING.replace("'tri'", "'hung'").replace("'l3'", "'weight'")]
    assert pinocchio_error(system, xml) <= 1e-12
    with pytest.raises(URDFError, match=r"'hung': link 'weight': inertia is not positive "):
        import_urdf(_hung(NOT_PSD))
