"""trep.puppets: the marionette model (ros_vi.puppets.Puppet).

Structure and names are checked against trep's; geometry against closed forms; a
string-driven simulation against numbers printed by trep itself (MurpheyLab/trep commit
5bea7a8, built from source under Python 2.7, running the set-up of trep's
``examples/papers/tase2012/marionette.py``); energy against the variational integrator's
invariants (bounded energy error without damping, energy loss = damping work with it).
"""
import numpy as np
import pytest

import ros_vi as trep
from ros_vi.puppets import (DEFAULT_DIMENSIONS, DEFAULT_JOINTS, Puppet, PuppetVisual,
                            fill_dimensions, fill_joints)

DYN_CONFIGS = [          # trep's order
    'torso_tx', 'torso_ty', 'torso_tz', 'torso_rz', 'torso_ry', 'torso_rx',
    'lhip_rz', 'lhip_ry', 'lhip_rx', 'lknee_rx', 'rhip_rz', 'rhip_ry', 'rhip_rx', 'rknee_rx',
    'lshoulder_rz', 'lshoulder_ry', 'lshoulder_rx', 'lelbow_rx',
    'rshoulder_rz', 'rshoulder_ry', 'rshoulder_rx', 'relbow_rx']
STRINGS = ['upper_torso_string', 'lower_torso_string', 'left_arm_string',
           'right_arm_string', 'left_leg_string', 'right_leg_string']
MASS_FRAMES = ['head_center', 'lfemur_mass', 'lhumerus_mass', 'lradius_mass', 'ltibia_mass',
               'pelvis', 'rfemur_mass', 'rhumerus_mass', 'rradius_mass', 'rtibia_mass']
SIDE_FRAMES = ['hip', 'femur', 'femur_mass', 'femur_end', 'tibia', 'tibia_mass', 'tibia_end',
               'foot', 'foot_end', 'shoulder', 'humerus', 'humerus_mass', 'humerus_end',
               'radius', 'radius_mass', 'radius_end', 'hand', 'hand_end']
MARIONETTE_POSE = {   # trep's examples/papers/tase2012/marionette.py
    'torso_rx': -0.05, 'torso_tz': 0.0, 'lelbow_rx': 1.57, 'relbow_rx': 1.57,
    'lhip_rx': np.pi / 2 - 0.6, 'rhip_rx': np.pi / 2 - 0.6,
    'lknee_rx': -np.pi / 2 + 0.6, 'rknee_rx': -np.pi / 2 + 0.6}


def names(items):
    return [item.name for item in items]


def test_import_paths():
    import ros_vi.puppets
    assert trep.puppets is ros_vi.puppets
    assert trep.puppets.Puppet is Puppet
    assert issubclass(Puppet, trep.System)
    # drawn by ros_vi.visual (test_trep_visual.py): a VisualItem3D of the puppet
    assert issubclass(PuppetVisual, trep.visual.VisualItem3D)
    with pytest.raises(ValueError, match=r'q must be \(n, 22\)'):
        PuppetVisual(Puppet(), [0.0], [[0.0]])


def test_default_puppet_structure():
    p = Puppet()
    assert names(p.configs) == DYN_CONFIGS and names(p.dyn_configs) == DYN_CONFIGS
    assert p.nQk == 0 and p.nc == 0 and p.nu == 0
    assert len(p.frames) == 74
    named = {f.name for f in p.frames if f.name}
    expected = ({s + f for s in 'lr' for f in SIDE_FRAMES}
                | {'World', 'pelvis', 'spine_top', 'neck', 'neck_joint', 'head',
                   'head_center', 'head_end', 'string_plane'}
                | {s + '_hook' for s in STRINGS})
    assert named == expected
    assert sorted(names(p.masses)) == MASS_FRAMES
    total = sum(f.mass for f in p.masses)
    assert total == pytest.approx(10 + 0.75 + 2 * (1.5 + 1.5 + 0.5 + 0.5))
    assert [type(x).__name__ for x in p.potentials] == ['Gravity']
    assert [type(x).__name__ for x in p.forces] == ['Damping']
    assert p.string_hooks == {s: s + '_hook' for s in STRINGS}
    assert p.joint_forces == {} and p.string_forces == {} and p.string_constraints == {}
    assert p.string_plane is p.get_frame('string_plane')
    np.testing.assert_allclose(p.string_plane.p()[:3], [0, 0, 2])


def test_geometry_at_zero_configuration():
    """At q = 0 every segment hangs straight down (z up), feet point along +y."""
    d = DEFAULT_DIMENSIONS
    p = Puppet()
    pos = {f.name: f.p()[:3] for f in p.frames if f.name}
    top = d['upper_torso_length']
    np.testing.assert_allclose(pos['spine_top'], [0, 0, top])
    np.testing.assert_allclose(pos['head_center'], [
        0, 0, top + d['neck_length'] + d['lower_head_length'] + d['upper_head_length']])
    for side, sign in (('l', -1), ('r', 1)):
        hip = sign * d[side + 'hip_width']
        knee = -d[side + 'femur_length']
        ankle = knee - d[side + 'tibia_length']
        np.testing.assert_allclose(pos[side + 'femur_mass'], [hip, 0, knee / 2])
        np.testing.assert_allclose(pos[side + 'tibia_mass'], [hip, 0, (knee + ankle) / 2])
        np.testing.assert_allclose(pos[side + 'foot_end'],
                                   [hip, d[side + 'foot_length'], ankle])
        shoulder = sign * d[side + 'shoulder_width']
        elbow = top - d[side + 'humerus_length']
        wrist = elbow - d[side + 'radius_length']
        np.testing.assert_allclose(pos[side + 'radius_end'], [shoulder, 0, wrist])
        np.testing.assert_allclose(pos[side + 'hand_end'],
                                   [shoulder, 0, wrist - d[side + 'hand_length']])
    # hooks: the knot offsets of DEFAULT_DIMENSIONS['strings'] in their frames
    np.testing.assert_allclose(pos['upper_torso_string_hook'], [-0.1, 0, top])
    np.testing.assert_allclose(pos['left_arm_string_hook'],
                               pos['lradius_end'] + [0, 0.1, 0])
    np.testing.assert_allclose(pos['right_leg_string_hook'],
                               pos['rfemur_end'] + [0, 0.1, 0])
    # rotations: lhip_rx turns the left leg about x
    p.get_config('lhip_rx').q = 0.5
    L = d['lfemur_length']
    np.testing.assert_allclose(p.get_frame('lfemur_end').p()[:3],
                               [-d['lhip_width'], L * np.sin(0.5), -L * np.cos(0.5)],
                               atol=1e-15)


def test_string_constraints_structure():
    p = Puppet(string_constraints=True)
    assert names(p.dyn_configs) == DYN_CONFIGS
    assert names(p.kin_configs) == [s + suffix for s in STRINGS
                                    for suffix in ('-x', '-y', '-length')]
    assert len(p.frames) == 86
    assert names(p.constraints) == STRINGS
    for s in STRINGS:
        con = p.get_constraint(s)
        assert isinstance(con, trep.constraints.Distance)
        assert con.frame1 is p.get_frame(s + '_hook')
        assert con.frame2 is p.get_frame(s + '_control')
        assert con.config is p.get_config(s + '-length')
        assert p.get_frame(s + '_control').parent.parent is p.string_plane
        assert p.string_constraints[s] == {
            'name': s, 'x': s + '-x', 'y': s + '-y', 'length': s + '-length',
            'control_hook': s + '_control', 'hook': s + '_hook'}


def test_joint_and_string_forces():
    p = Puppet(joint_forces=True, string_forces=True)
    assert p.nQ == 22 and p.nc == 0
    expected_inputs = DYN_CONFIGS + [s + a for s in STRINGS for a in ('-x', '-y', '-z')]
    assert sorted(names(p.inputs)) == sorted(expected_inputs)
    assert sorted(p.joint_forces) == sorted(DYN_CONFIGS)
    for name, force in p.joint_forces.items():
        assert isinstance(force, trep.forces.ConfigForce)
        assert force.name == name and force.finput.name == name
        assert force.config is p.get_config(name)
    for s in STRINGS:
        assert p.string_forces[s] == {'name': s, 'x': s + '-x', 'y': s + '-y',
                                      'z': s + '-z', 'hook': s + '_hook'}
        wrench = p.get_force(s)
        assert isinstance(wrench, trep.forces.HybridWrench)
        assert wrench.frame is p.get_frame(s + '_hook')
    # a world force on a hook maps to the generalized forces J^T f
    p.q = {'torso_rx': 0.2, 'lshoulder_ry': -0.4, 'lelbow_rx': 0.9}
    p.u = {'left_arm_string-x': 1.5, 'left_arm_string-z': 5.0, 'lelbow_rx': -0.7}
    hook = p.get_frame('left_arm_string_hook')
    wrench = p.get_force('left_arm_string')
    for c in p.configs:
        expected = hook.p_dq(c)[:3] @ [1.5, 0.0, 5.0]
        assert wrench.f(c) == pytest.approx(expected, abs=1e-12)
        assert p.joint_forces[c.name].f(c) == (-0.7 if c.name == 'lelbow_rx' else 0.0)


def test_project_string_controls_and_lengths():
    p = Puppet(string_constraints=True)
    p.q = MARIONETTE_POSE
    p.project_string_controls()
    height = DEFAULT_DIMENSIONS['string_plane_height']
    for s in STRINGS:
        hook = p.get_frame(s + '_hook').p()[:3]
        control = p.get_frame(s + '_control').p()[:3]
        np.testing.assert_allclose(control, [hook[0], hook[1], height], atol=1e-15)
        assert p.get_config(s + '-length').q == pytest.approx(height - hook[2], abs=1e-14)
        assert abs(p.get_constraint(s).h()) < 1e-12
    # values printed by trep for this pose
    assert p.get_config('upper_torso_string-length').q == pytest.approx(1.509270730278674,
                                                                       abs=1e-12)
    assert p.get_config('left_leg_string-length').q == pytest.approx(2.1624661911323644,
                                                                    abs=1e-12)
    assert p.get_config('left_arm_string-y').q == pytest.approx(0.2744662534103201,
                                                               abs=1e-12)
    assert p.get_config('left_arm_string-x').q == pytest.approx(
        -DEFAULT_DIMENSIONS['lshoulder_width'], abs=1e-15)
    assert p.L() == pytest.approx(5.736151196817653, abs=1e-12)

    # only the named strings move; correct_string_lengths restores h = 0
    before = {c.name: c.q for c in p.kin_configs}
    p.get_config('lelbow_rx').q = 1.2
    p.project_string_controls(['left_arm_string'])
    changed = {c.name for c in p.kin_configs if c.q != before[c.name]}
    assert changed <= {'left_arm_string-x', 'left_arm_string-y', 'left_arm_string-length'}
    assert 'left_arm_string-y' in changed
    p.get_config('right_leg_string-x').q += 0.3
    assert abs(p.get_constraint('right_leg_string').h()) > 1e-3
    p.correct_string_lengths(['right_leg_string'])
    assert abs(p.get_constraint('right_leg_string').h()) < 1e-12
    p.correct_string_lengths()
    assert max(abs(c.h()) for c in p.constraints) < 1e-12
    with pytest.raises(KeyError):
        p.project_string_controls(['no_such_string'])


# trep's q2, p2 (dynamic configs) and lambda1 after k steps of the marionette run
TREP_STEPS = {
    10: {'q2': {'torso_tx': 1.624755140314655e-05, 'torso_tz': -0.00020151703375456464,
                'torso_rx': -0.04071327523777115, 'lelbow_rx': 1.4986762354411276,
                'rknee_rx': -0.9178055595495732, 'lhip_rx': 1.0062090567302766},
         'p2': {'torso_tz': -0.9454812062970208, 'torso_rx': 0.23099438778993073,
                'lhip_rx': 0.284246846769607},
         'lambda1': {'left_arm_string': 0.005369434601976963,
                     'left_leg_string': 0.044663174628715586,
                     'lower_torso_string': 0.2349511969637099,
                     'right_arm_string': 0.008512214232908304,
                     'right_leg_string': 0.040958321176788964,
                     'upper_torso_string': 0.23579428772247518}},
    100: {'q2': {'torso_tx': 0.0004124230676478515, 'torso_tz': -0.00044375125286318806,
                 'torso_rx': -0.018118896703957877, 'lelbow_rx': 1.232902443250834,
                 'rknee_rx': -0.6784040488400905, 'lhip_rx': 1.1843195215752802},
          'p2': {'torso_tz': -0.9598747223287629, 'torso_rx': 0.1982531735543479,
                 'lhip_rx': -0.069120237645855},
          'lambda1': {'left_arm_string': 0.006276573489188985,
                      'left_leg_string': 0.04458992315062191,
                      'lower_torso_string': 0.23659496742111397,
                      'right_arm_string': 0.007136112111707176,
                      'right_leg_string': 0.040921611770312616,
                      'upper_torso_string': 0.23428318437721057}},
}


def test_string_driven_simulation_matches_trep():
    """trep's marionette example: strings moved sinusoidally, dt = 0.01 s."""
    p = Puppet(string_constraints=True)
    p.q = MARIONETTE_POSE
    p.project_string_controls()
    q0, qk0, dt = p.q, p.qk, 0.01
    mvi = trep.MidpointVI(p)
    mvi.initialize_from_configs(0.0, q0, dt, q0)
    moves = {'left_leg_string-length': -0.1, 'right_leg_string-length': 0.1,
             'left_arm_string-length': 0.1, 'right_arm_string-length': -0.1}
    for k in range(1, 101):
        qk2 = np.array(qk0, dtype=float)
        for name, amplitude in moves.items():
            qk2[p.get_config(name).k_index] += amplitude * np.sin(0.6 * np.pi * mvi.t1)
        mvi.step(mvi.t2 + dt, (), qk2)
        p.q = mvi.q2
        assert max(abs(c.h()) for c in p.constraints) < 1e-9
        if k in TREP_STEPS:
            ref = TREP_STEPS[k]
            assert mvi.t2 == pytest.approx((k + 1) * dt)   # initialised at t1 = 0, t2 = dt
            for name, value in ref['q2'].items():
                assert mvi.q2[p.get_config(name).index] == pytest.approx(value, abs=1e-9)
            for name, value in ref['p2'].items():
                assert mvi.p2[p.get_config(name).index] == pytest.approx(value, abs=1e-8)
            for name, value in ref['lambda1'].items():
                assert mvi.lambda1[p.get_constraint(name).index] == pytest.approx(
                    value, abs=1e-9)


def swing(damping, steps=300, dt=0.01):
    """Release the puppet tilted (torso_rx = torso_ry = 0.1) with the strings held still.
    Returns (energies [J] at the step midpoints, damping work [J] per step, kinetic
    energies [J])."""
    p = Puppet(dimensions={'damping': damping}, string_constraints=True)
    p.q = {'torso_rx': 0.1, 'torso_ry': 0.1}
    p.project_string_controls()
    q0, qk = p.q, p.qk
    mvi = trep.MidpointVI(p)
    mvi.initialize_from_configs(0.0, q0, dt, q0)
    energy, work, kinetic = [], [], []
    for _ in range(steps):
        mvi.step(mvi.t2 + dt, (), qk)
        v = (mvi.q2 - mvi.q1) / dt
        p.set_state(q=0.5 * (mvi.q1 + mvi.q2), dq=v)
        energy.append(p.total_energy())
        kinetic.append(p.kinetic_energy())
        work.append(damping * (v[:p.nQd] @ v[:p.nQd]) * dt)
        p.q = mvi.q2
        assert max(abs(c.h()) for c in p.constraints) < 1e-9
        np.testing.assert_array_equal(p.qk, qk)
    return np.array(energy), np.array(work), np.array(kinetic)


def test_energy_bounded_without_damping():
    energy, _, kinetic = swing(0.0)
    assert kinetic.max() > 0.1                  # the puppet really swings
    assert np.abs(energy - energy[0]).max() < 2e-3
    # no drift: the error over the last 50 steps is no larger than over the first 100
    assert (np.abs(energy[-50:] - energy[0]).max()
            <= np.abs(energy[:100] - energy[0]).max() + 1e-4)


def test_damping_work_equals_energy_loss():
    energy, work, _ = swing(DEFAULT_DIMENSIONS['damping'])
    loss = energy[0] - energy[-1]
    assert loss > 0.2
    assert loss == pytest.approx(work[1:].sum(), rel=1e-2)
    assert np.all(np.diff(energy) < 1e-4)       # never gains energy beyond the O(dt^2) ripple


def test_custom_dimensions_and_joints():
    dims = {'string_plane_height': 3.0, 'damping': 0.5,
            'strings': {'head_string': ('head_end', (0, 0, 0.05))}}
    joints = {'neck_rx': 'neck_rx', 'lfoot_rx': 0.3, 'relbow_rx': 0.2}
    p = Puppet(dimensions=dims, joints=joints, string_constraints=True)
    assert p.dimensions['string_plane_height'] == 3.0 and p.dimensions['damping'] == 0.5
    assert p.dimensions['pelvis_mass'] == DEFAULT_DIMENSIONS['pelvis_mass']
    assert 'neck_rx' in names(p.dyn_configs) and 'relbow_rx' not in names(p.configs)
    assert p.nQd == 22 and names(p.kin_configs) == ['head_string-x', 'head_string-y',
                                                    'head_string-length']
    np.testing.assert_allclose(p.string_plane.p()[:3], [0, 0, 3.0])
    assert p.get_config('neck_rx').frame is p.get_frame('neck_joint')
    # a fixed joint angle: the left foot is turned 0.3 rad about x
    R = p.get_frame('lfoot').g()[:3, :3]
    c, s = np.cos(0.3), np.sin(0.3)
    np.testing.assert_allclose(R, [[1, 0, 0], [0, c, -s], [0, s, c]], atol=1e-15)
    p.project_string_controls()
    assert p.get_config('head_string-length').q == pytest.approx(
        3.0 - p.get_frame('head_end').p()[2] - 0.05)
    # the defaults are untouched
    assert DEFAULT_JOINTS['neck_rx'] == 0.0 and DEFAULT_JOINTS['relbow_rx'] == 'relbow_rx'
    assert DEFAULT_DIMENSIONS['string_plane_height'] == 2
    assert set(DEFAULT_DIMENSIONS['strings']) == set(STRINGS)
    assert fill_dimensions({'damping': 1.0})['damping'] == 1.0
    assert fill_joints() == DEFAULT_JOINTS and fill_joints() is not DEFAULT_JOINTS
