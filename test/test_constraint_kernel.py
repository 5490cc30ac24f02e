"""The compiled constraint kernel (ros_vi.mechanics.constraint_kernel).

h and Dh from the packed constraints and the kernel's kinematics must equal what the
constraint objects compute (``dynamics.constraint_values`` / ``constraint_jacobian``, the
general path's own evaluation) on random configurations of random frame trees that use
every transform kind, kinematic configs, world-fixed frames and every built-in
constraint kind; the packer must refuse what it cannot compile.
"""
import numpy as np
import pytest

import ros_vi as trep
from ros_vi.mechanics import constraint_kernel as ck
from ros_vi.mechanics import dynamics, kernel
from systems import assert_close, rotation, se3

KINDS = (trep.RX, trep.RY, trep.RZ, trep.TX, trep.TY, trep.TZ, trep.CONST_SE3)


def random_tree(rng, nframes=12):
    """A random frame tree: each frame hangs off a random earlier frame (or the world),
    with a random transform kind; about a quarter of the one-parameter transforms are
    constants, some follow an earlier config (mimic frames) and some configs are
    kinematic."""
    s = trep.System()
    frames = [s.world_frame]
    for i in range(nframes):
        parent = frames[rng.integers(len(frames))]
        kind = KINDS[rng.integers(len(KINDS))]
        mass = [rng.uniform(0.5, 2.0)] + list(rng.uniform(0.05, 0.2, 3))
        if kind == trep.CONST_SE3:
            param = se3(rotation(rng.normal(size=3), rng.uniform(-2, 2)),
                        rng.normal(size=3))
            kinematic = False
        elif rng.uniform() < 0.25:
            param = float(rng.normal())
            kinematic = False
        elif rng.uniform() < 0.25 and s.configs:
            leader = s.configs[rng.integers(len(s.configs))].name
            param = trep.mimic(leader, rng.uniform(-2.0, 2.0), rng.normal())
            kinematic = False
        else:
            param = 'q%d' % i
            kinematic = rng.uniform() < 0.2
        frames.append(trep.Frame(parent, kind, param, name='f%d' % i, kinematic=kinematic,
                                 mass=mass))
    trep.potentials.Gravity(s, (0.0, 0.0, -9.8))
    return s, frames


def two_frames(rng, frames):
    """Two frames whose relative position changes along every world axis with q (so the
    pair's constraints have a non-zero Jacobian; either may be the world), or None."""
    model = frames[0].system.model
    q1, q2 = rng.uniform(-1.0, 1.0, (2, model.nq))
    P1, P2 = model.kinematics(q1)[1], model.kinematics(q2)[1]
    for _ in range(200):
        a, b = (frames[k] for k in rng.choice(len(frames), size=2, replace=False))
        i, j = a.index, b.index
        if np.abs((P1[i] - P1[j]) - (P2[i] - P2[j])).min() > 1e-3:
            return a, b
    return None


def constrained_tree(rng, kinds):
    """A random tree with one constraint (or group) of each requested kind between random
    frames (trees too planar for that are drawn again)."""
    while True:
        s, frames = random_tree(rng)
        if add_constraints(s, frames, rng, kinds):
            return s


def add_constraints(s, frames, rng, kinds):
    """Add the constraints; False when no suitable pair of frames was found."""
    for kind in kinds:
        pair = two_frames(rng, frames)
        if pair is None:
            return False
        a, b = pair
        if kind == 'distance':
            trep.constraints.Distance(s, a, b, rng.uniform(0.5, 2.0))
        elif kind == 'distance_config':
            trep.constraints.Distance(s, a, b, 'len%d' % len(s.constraints))
        elif kind == 'point1d':
            trep.constraints.PointToPoint1D(s, 'xyz'[rng.integers(3)], a, b)
        elif kind == 'point2d':
            trep.constraints.PointToPoint2D(s, ('xy', 'xz', 'yz')[rng.integers(3)], a, b)
        elif kind == 'point3d':
            trep.constraints.PointToPoint3D(s, a, b)
        elif kind == 'plane':
            trep.constraints.PointOnPlane(s, a, rng.normal(size=3), b)
        elif kind == 'mimic':
            if s.nQ >= 2:
                c, r = rng.choice(s.nQ, size=2, replace=False)
                trep.constraints.Mimic(s, s.configs[c], s.configs[r], rng.normal(),
                                       rng.normal())
    return True


def compiled_terms(s, CI, CF, q):
    """h and Dh through the compiled kernels only, on the joint coordinates as a compiled
    step runs them (kinematics from the kernel, not from Data)."""
    m = s.model
    theta = np.empty(m.nt)
    kernel.expand_into(q, np.zeros(m.nq), m.mimic_leader, m.mimic_multiplier,
                       m.mimic_offset, theta, np.empty(m.nt))
    R, P = kernel.forward_kinematics(*m.tree_args(), theta)
    S = kernel.joint_twists(m.kind, m.cframe, m.corder, R, P, m.nt)
    h = np.full(len(CI), np.nan)
    Dh = np.full((len(CI), m.nt), np.nan)      # the kernels must overwrite every entry
    ck.constraint_values_into(CI, CF, R, P, theta, h)
    ck.constraint_jacobian_into(CI, CF, m.fjoint, m.cparent, m.mimic_leader,
                                m.mimic_multiplier, R, P, S, theta, Dh)
    return h, Dh[:, :m.nq]


CASES = ['distance', 'distance_config', 'point1d', 'point2d', 'point3d', 'plane', 'mimic']


@pytest.mark.parametrize('kind', CASES + ['all'])
@pytest.mark.parametrize('seed', range(6))
def test_compiled_h_and_Dh_equal_the_constraint_objects(kind, seed):
    rng = np.random.default_rng(100 * seed + CASES.index(kind) if kind in CASES else seed)
    s = constrained_tree(rng, CASES if kind == 'all' else [kind] * 2)
    packed = ck.pack_constraints(s)
    assert packed is not None
    CI, CF = packed
    assert CI.shape == (s.nc, ck.NCI) and CF.shape == (s.nc, ck.NCF)
    for _ in range(5):
        q = rng.uniform(-2.0, 2.0, s.nQ)
        h, Dh = compiled_terms(s, CI, CF, q)
        s.data.set(q, np.zeros(s.nQ))
        h_ref = dynamics.constraint_values(s)
        Dh_ref = dynamics.constraint_jacobian(s)
        assert_close(h, h_ref, rel=1e-10, abs_=1e-10, what='h')
        assert_close(Dh, Dh_ref, rel=1e-10, abs_=1e-10, what='Dh')
        assert np.abs(Dh_ref).max() > 0.0     # the case exercises a non-trivial Jacobian


def test_constraints_on_the_world_frame_and_a_config_driven_distance():
    """Frames without configs (world, a constant offset) contribute no Jacobian column;
    the distance config's column is -2 d."""
    s = trep.System()
    s.import_frames([trep.rz('a'), [trep.tx(0.8, name='A', mass=1.0), [
        trep.ry('b'), [trep.tz(-0.5, name='B', mass=1.0)]]],
        trep.const_txyz([0.3, 0.2, 0.1], name='G')])
    trep.constraints.PointToPoint3D(s, 'B', 'World')
    trep.constraints.Distance(s, 'G', 'A', 'len')
    trep.constraints.PointOnPlane(s, 'G', [0.0, 0.0, 1.0], 'B')
    CI, CF = ck.pack_constraints(s)
    q = np.array([0.4, -0.7, 1.3])
    h, Dh = compiled_terms(s, CI, CF, q)
    s.data.set(q, np.zeros(3))
    assert_close(h, dynamics.constraint_values(s), rel=1e-12, abs_=1e-12)
    assert_close(Dh, dynamics.constraint_jacobian(s), rel=1e-12, abs_=1e-12)
    k = s.get_config('len').index
    assert Dh[3, k] == -2.0 * q[k]
    assert np.all(Dh[:3, k] == 0.0) and Dh[4, k] == 0.0


def test_constraints_on_frames_that_follow_mimic_frames():
    """A frame moved through a mimic frame: its Jacobian column goes to the leader,
    scaled by the multiplier (folded from the joint coordinates)."""
    s = trep.System()
    s.import_frames([trep.rz('a'), [trep.tx(0.8, name='A', mass=1.0), [
        trep.ry(trep.mimic('a', -0.5, 0.1), name='M'), [
            trep.tz(-0.5, name='Mt', mass=1.0), [trep.rx('c'), [
                trep.ty(0.3, name='Ct', mass=1.0)]]]]]])
    assert s.model.nt == s.nQ + 1
    trep.constraints.PointToPoint3D(s, 'Ct', 'World')
    trep.constraints.PointOnPlane(s, 'Mt', [0.3, 0.4, 1.0], 'A')
    trep.constraints.Distance(s, 'Mt', 'World', 'len')
    CI, CF = ck.pack_constraints(s)
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = rng.uniform(-2.0, 2.0, s.nQ)
        h, Dh = compiled_terms(s, CI, CF, q)
        s.data.set(q, np.zeros(s.nQ))
        assert_close(h, dynamics.constraint_values(s), rel=1e-12, abs_=1e-12)
        assert_close(Dh, dynamics.constraint_jacobian(s), rel=1e-12, abs_=1e-12)
        assert np.abs(Dh[:3, s.get_config('a').index]).max() > 0.0


def test_refresh_follows_changed_parameters():
    s = trep.System()
    s.import_frames([trep.rx('a'), [trep.tz(-1.0, name='M', mass=1.0)],
                     trep.ty('y'), [trep.tz(0.5, name='N', mass=1.0)]])
    dist = trep.constraints.Distance(s, 'M', 'N', 1.0)
    plane = trep.constraints.PointOnPlane(s, 'N', [0.0, 1.0, 0.0], 'M')
    mimic = trep.constraints.Mimic(s, 'y', 'a', 2.0, 0.1)
    CI, CF = ck.pack_constraints(s)
    dist.distance = 1.7
    plane.normal = [0.0, 0.6, 0.8]
    mimic.multiplier, mimic.offset = -0.5, 0.3
    dist.tolerance = 1e-7
    ck.refresh_constraint_parameters(s, CF)
    q = np.array([0.3, -0.4])
    h, Dh = compiled_terms(s, CI, CF, q)
    s.data.set(q, np.zeros(2))
    assert_close(h, dynamics.constraint_values(s), rel=1e-12, abs_=1e-12)
    assert_close(Dh, dynamics.constraint_jacobian(s), rel=1e-12, abs_=1e-12)
    assert CF[0, ck.CF_TOL] == 1e-7 and CF[1, ck.CF_TOL] == 1e-10


class ScaledPoint(trep.constraints.PointToPoint):
    """A subclass of a built-in constraint that redefines h: must not be compiled."""

    def h(self):
        return 2.0 * super().h()


def test_packer_refuses_user_constraints():
    s = trep.System()
    s.import_frames([trep.rx('a'), [trep.tz(-1.0, name='M', mass=1.0)]])
    trep.constraints.PointToPoint1D(s, 'y', 'M', 'World')
    assert ck.pack_constraints(s) is not None
    ScaledPoint(s, 'z', 'M', 'World')
    assert ck.pack_constraints(s) is None
    assert ck.pack_constraints(trep.System())[0].shape == (0, ck.NCI)
