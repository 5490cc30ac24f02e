"""Robot descriptions for the benchmark against MuJoCo and Pinocchio (bench_vs_mujoco.py).

Every robot here is described once and given to each engine in the form it reads:

* the shipped URDFs (``urdf/*.urdf``), read by :func:`shipped`;
* :func:`arm7_gripper`: ``urdf/arm7.urdf`` with a parallel-jaw gripper whose right jaw is a
  ``<mimic>`` of the left one (8 DOF, 1 mimic joint: 9 moving joints);
* :func:`humanoid44`: a fixed-pelvis humanoid tree of 44 moving joints, 12 of which are
  ``<mimic>`` finger joints (one grip joint drives the six other finger joints of each hand):
  32 independent DOF;
* :func:`chain_urdf`: a spatial serial chain of n revolute joints (the size sweep);
* the four-bar linkage, which URDF cannot express (a loop): :func:`fourbar_system` builds
  it as a ros_vi System (trep-style frames + a ``PointToPoint2D`` closing the loop in the
  x-z plane), :func:`fourbar_mjcf` as MJCF with an ``<equality><connect>`` between two
  sites, :func:`fourbar_pinocchio` as a Pinocchio model (+ the closing constraint model);
  ``closed=False`` gives the same open chain without the loop.

:func:`benchmark_urdf` removes what the comparison must not see (``<visual>``,
``<collision>``: mesh files, geometry-derived inertia in MuJoCo; ``<dynamics>``: damping
and friction are off), and :func:`mimic_table` reads the ``<mimic>`` tags, from which
:func:`reduction` builds the map E from independent to full joint coordinates
(``q_full = E q_ind + c``).

Units: SI (m, kg, kg m^2, rad).  Only NumPy and ros_vi are needed here; Pinocchio is
imported inside :func:`fourbar_pinocchio` (a benchmark-only extra).
"""
import os
import sys
import xml.etree.ElementTree as ET

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'test'))
from test_urdf_cases import inertial, joint, link, robot  # noqa: E402  (URDF text helpers)

SHIPPED = ('pendulum', 'cartpole', 'acrobot', 'arm7')
FLOATING = ('quadruped', 'humanoid')     # shipped floating-base robots (free root link)
GRAVITY = (0.0, 0.0, -9.81)


# ---------------------------------------------------------------------- URDF handling
def shipped(name):
    """Text of ``urdf/<name>.urdf``."""
    with open(os.path.join(ROOT, 'urdf', name + '.urdf'), encoding='utf-8') as fh:
        return fh.read()


def benchmark_urdf(text):
    """The URDF without ``<visual>``, ``<collision>`` and ``<dynamics>`` elements: the same
    rigid bodies for every engine, no damping or friction, no mesh file to resolve."""
    root = ET.fromstring(text)
    for parent in root.iter():
        for child in list(parent):
            if child.tag in ('visual', 'collision', 'dynamics'):
                parent.remove(child)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding='unicode')


def moving_joints(text):
    """Names of the moving (non-fixed) joints of a URDF, in file order."""
    root = ET.fromstring(text)
    return [j.get('name') for j in root.findall('joint') if j.get('type') != 'fixed']


def joint_types(text):
    """{joint name: URDF type} of the moving joints."""
    root = ET.fromstring(text)
    return {j.get('name'): j.get('type') for j in root.findall('joint')
            if j.get('type') != 'fixed'}


def joint_limits(text):
    """{joint name: (lower, upper)} of the moving joints (+-inf where absent or continuous)."""
    root = ET.fromstring(text)
    out = {}
    for j in root.findall('joint'):
        if j.get('type') == 'fixed':
            continue
        lim = j.find('limit')
        lo, up = -np.inf, np.inf
        if lim is not None and j.get('type') != 'continuous':
            lo = float(lim.get('lower', '-inf'))
            up = float(lim.get('upper', 'inf'))
        out[j.get('name')] = (lo, up)
    return out


def mimic_table(text):
    """{mimic joint: (reference joint, multiplier, offset)} from the ``<mimic>`` tags."""
    root = ET.fromstring(text)
    out = {}
    for j in root.findall('joint'):
        m = j.find('mimic')
        if m is not None:
            out[j.get('name')] = (m.get('joint'), float(m.get('multiplier', '1')),
                                  float(m.get('offset', '0')))
    return out


def reduction(names, mimics):
    """``(independent, E, c)``: the independent joints (``names`` without the mimic joints,
    same order), E (len(names), len(independent)) and c (len(names),) with
    ``q_full = E q_ind + c`` for ``q_full`` in the order of ``names``.  A mimic of a mimic
    joint is resolved through its reference."""
    independent = [n for n in names if n not in mimics]
    col = {n: k for k, n in enumerate(independent)}
    row = {n: k for k, n in enumerate(names)}
    E = np.zeros((len(names), len(independent)))
    c = np.zeros(len(names))

    def resolve(name, depth=0):
        if depth > len(names):
            raise ValueError('mimic joints form a cycle through %r' % name)
        if name not in mimics:
            e = np.zeros(len(independent))
            e[col[name]] = 1.0
            return e, 0.0
        ref, mult, off = mimics[name]
        e, c0 = resolve(ref, depth + 1)
        return mult * e, mult * c0 + off

    for n in names:
        E[row[n]], c[row[n]] = resolve(n)
    return independent, E, c


def initial_configuration(text, seed=0, scale=0.5):
    """A nonzero configuration of the independent joints (dict name -> value): revolute and
    continuous joints uniform in [-scale, scale] rad (inside their limits; about the limit
    nearest to 0 when the range excludes 0), prismatic
    joints at a random point of their range (or +-0.2 m when unlimited)."""
    rng = np.random.default_rng(seed)
    types, limits, mimics = joint_types(text), joint_limits(text), mimic_table(text)
    q = {}
    for name in moving_joints(text):
        if name in mimics:
            continue
        lo, up = limits[name]
        if types[name] == 'prismatic':
            lo, up = max(lo, -0.2), min(up, 0.2)
            val = lo + rng.uniform(0.2, 0.8) * (up - lo)
        else:
            # about 0, or about the limit nearest to 0 when the range excludes 0 (a knee)
            centre = min(max(0.0, lo), up)
            val = rng.uniform(max(lo, centre - scale), min(up, centre + scale))
        q[name] = float(val)
    return q


# ---------------------------------------------------------------------- generated robots
def _inertia(rng, mass, radius):
    """A random rotated inertia tensor of a body of ``mass`` [kg] and size ``radius`` [m]:
    principal moments ~ mass radius^2 obeying the triangle inequality."""
    a, b = rng.uniform(0.3, 1.0, 2) * mass * radius ** 2
    c = rng.uniform(abs(a - b) + 0.1 * min(a, b), a + b)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    I = Q @ np.diag([a, b, c]) @ Q.T
    return (I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])


def _body(rng, mass, radius, com=(0.0, 0.0, 0.0)):
    return inertial(mass, np.asarray(com) + rng.uniform(-0.01, 0.01, 3),
                    rng.uniform(-0.3, 0.3, 3), _inertia(rng, mass, radius))


def arm7_gripper():
    """``urdf/arm7.urdf`` + a parallel-jaw gripper on its tool link: a palm (fixed) and two
    jaws on revolute knuckles (0..0.6 rad about the palm's x axis, mirror images); the right
    knuckle is a ``<mimic>`` of the left one (multiplier 1): 8 independent DOF, 9 moving
    joints.  Revolute jaws stay bounded with the joint limits off (a prismatic finger would
    be flung out along its axis by the arm's swing)."""
    root = ET.fromstring(shipped('arm7'))
    root.set('name', 'arm7_gripper')
    jaw_I = (6e-5, 0.0, 0.0, 6e-5, 0.0, 5e-6)
    lim = (0.0, 0.6, 10.0, 2.0)
    items = [
        link('gripper_palm', inertial(0.4, (0, 0, 0.02), I=(4e-4, 0, 0, 3e-4, 0, 5e-4))),
        joint('palm_fixed', 'fixed', 'tool', 'gripper_palm', (0, 0, 0.06)),
        link('jaw_left', inertial(0.05, (0, -0.005, 0.04), I=jaw_I)),
        joint('jaw_left_joint', 'revolute', 'gripper_palm', 'jaw_left', (0, 0.02, 0.04),
              axis=(1, 0, 0), limit=lim),
        link('jaw_right', inertial(0.05, (0, 0.005, 0.04), I=jaw_I)),
        joint('jaw_right_joint', 'revolute', 'gripper_palm', 'jaw_right', (0, -0.02, 0.04),
              axis=(-1, 0, 0), limit=lim, mimic=('jaw_left_joint', 1.0, 0.0)),
    ]
    for item in items:
        root.append(ET.fromstring(item))
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding='unicode')


# grip joint -> (mimic joint, multiplier, offset) of each hand (the proximal joint of the
# first finger is the grip joint; thumb closes the other way)
HAND_MIMICS = (('f1_distal', 0.8, 0.0), ('f2_proximal', 1.0, 0.0), ('f2_distal', 0.8, 0.0),
               ('f3_proximal', 1.1, 0.05), ('f3_distal', 0.9, 0.0), ('thumb', -0.7, 0.0))


def humanoid44(seed=0):
    """A fixed-pelvis humanoid: legs (6 joints each), a 2-joint waist, arms (7 each), a
    2-joint neck (30 body joints) and two hands of 7 finger joints each: a grip joint and 6
    ``<mimic>`` joints of it (HAND_MIMICS).  44 moving joints, 12 mimic, 32 independent DOF.
    Realistic masses (kg: pelvis 8, thigh 5, shank 3, torso 15, upper arm 2, finger
    phalanges 0.02-0.04) with random rotated inertias, inertial and joint origins with rpy,
    fixed sensor links (imu, soles, cameras, palms)."""
    rng = np.random.default_rng(seed)
    x, y, z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
    lim = (-2.5, 2.5, 100.0, 5.0)
    items = [link('pelvis', _body(rng, 8.0, 0.15))]

    def chain(parent, prefix, segments):
        """segments: (joint suffix, axis, origin xyz, mass, size, com) per joint."""
        for k, (suffix, axis, xyz, mass, radius, com) in enumerate(segments):
            child = '%s_%s_link' % (prefix, suffix)
            items.append(link(child, _body(rng, mass, radius, com)))
            rpy = rng.uniform(-0.2, 0.2, 3) if k % 3 == 0 else (0, 0, 0)
            items.append(joint('%s_%s' % (prefix, suffix), 'revolute', parent, child, xyz, rpy,
                               axis, lim))
            parent = child
        return parent

    def fixed(parent, name, xyz):
        items.append(link(name))
        items.append(joint(name + '_fixed', 'fixed', parent, name, xyz, (0, 0.1, 0)))

    fixed('pelvis', 'imu_link', (0, 0, 0.1))
    for side, s in (('l', 1.0), ('r', -1.0)):
        foot = chain('pelvis', side + '_leg', [
            ('hip_yaw', z, (0, s * 0.1, -0.1), 1.0, 0.06, (0, 0, -0.03)),
            ('hip_roll', x, (0, 0, -0.05), 1.0, 0.06, (0, 0, -0.03)),
            ('hip_pitch', y, (0, 0, -0.05), 5.0, 0.12, (0, 0, -0.2)),
            ('knee', y, (0, 0, -0.4), 3.0, 0.1, (0, 0, -0.2)),
            ('ankle_pitch', y, (0, 0, -0.4), 0.5, 0.04, (0, 0, -0.02)),
            ('ankle_roll', x, (0, 0, -0.04), 1.0, 0.08, (0.04, 0, -0.03))])
        fixed(foot, side + '_sole', (0.05, 0, -0.06))
    torso = chain('pelvis', 'waist', [('yaw', z, (0, 0, 0.15), 2.0, 0.1, (0, 0, 0.05)),
                                      ('pitch', y, (0, 0, 0.1), 15.0, 0.2, (0, 0, 0.25))])
    fixed(torso, 'chest_camera', (0.1, 0, 0.4))
    for side, s in (('l', 1.0), ('r', -1.0)):
        hand = chain(torso, side + '_arm', [
            ('shoulder_pitch', y, (0, s * 0.2, 0.45), 0.8, 0.05, (0, s * 0.03, 0)),
            ('shoulder_roll', x, (0, s * 0.05, 0), 0.8, 0.05, (0, 0, -0.03)),
            ('shoulder_yaw', z, (0, 0, -0.05), 2.0, 0.08, (0, 0, -0.12)),
            ('elbow', y, (0, 0, -0.25), 1.5, 0.07, (0, 0, -0.12)),
            ('wrist_yaw', z, (0, 0, -0.25), 0.3, 0.03, (0, 0, -0.02)),
            ('wrist_pitch', y, (0, 0, -0.03), 0.3, 0.03, (0, 0, -0.02)),
            ('wrist_roll', x, (0, 0, -0.03), 0.5, 0.05, (0, 0, -0.04))])
        palm = side + '_palm'
        fixed(hand, palm, (0, 0, -0.08))
        hand_joints = []
        for f, dx in (('f1', 0.02), ('f2', 0.0), ('f3', -0.02)):
            chain(palm, '%s_hand_%s' % (side, f), [
                ('proximal', y, (dx, 0, -0.03), 0.04, 0.012, (0, 0, -0.02)),
                ('distal', y, (0, 0, -0.04), 0.02, 0.01, (0, 0, -0.015))])
            hand_joints += ['%s_hand_%s_proximal' % (side, f), '%s_hand_%s_distal' % (side, f)]
        chain(palm, '%s_hand' % side, [('thumb', x, (0.03, s * 0.02, -0.01), 0.03, 0.012,
                                        (0, s * 0.015, -0.015))])
    head = chain(torso, 'neck', [('yaw', z, (0, 0, 0.55), 0.5, 0.04, (0, 0, 0.03)),
                                 ('pitch', y, (0, 0, 0.05), 3.0, 0.1, (0, 0, 0.1))])
    fixed(head, 'head_camera', (0.08, 0, 0.1))
    text = robot('humanoid44', items)
    # the <mimic> tags: inserted into the finger joints of each hand
    root = ET.fromstring(text)
    by_name = {j.get('name'): j for j in root.findall('joint')}
    for side in ('l', 'r'):
        grip = '%s_hand_f1_proximal' % side
        for name, mult, off in HAND_MIMICS:
            ET.SubElement(by_name['%s_hand_%s' % (side, name)], 'mimic',
                          joint=grip, multiplier=repr(mult), offset=repr(off))
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding='unicode')


def chain_urdf(n, seed=0):
    """A spatial serial chain of n revolute joints (the size sweep): each joint's axis is a
    random principal axis, each link 0.1 m long with a random rotated inertia (1 kg)."""
    rng = np.random.default_rng(seed)
    axes = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
    items = [link('base')]
    parent = 'base'
    for k in range(n):
        child = 'l%d' % (k + 1)
        items.append(link(child, _body(rng, 1.0, 0.05, (0, 0, -0.05))))
        items.append(joint('j%d' % (k + 1), 'revolute', parent, child,
                           (0, 0, -0.1) if k else (0, 0, 0), rng.uniform(-0.3, 0.3, 3),
                           axes[rng.integers(3)] if k else (0, 1, 0), (-3, 3, 10, 5)))
        parent = child
    return robot('chain%d' % n, items)


# ---------------------------------------------------------------------- the four-bar
# A Grashof crank-rocker in the x-z plane (hinges about y): ground pivots at the origin
# and at (GROUND, 0, 0); links (length [m], mass [kg]) crank, coupler, rocker.  Each link is
# a uniform rod along its x axis (I = m L^2/12 about y and z, 1e-4 m about its own axis).
FOURBAR_GROUND = 1.0
FOURBAR_LINKS = (('crank', 0.4, 0.4), ('coupler', 1.0, 1.0), ('rocker', 0.8, 0.8))
FOURBAR_Q0_GUESS = (-1.2, 1.9, 1.6)     # near the closed configuration the solver finds


def _rod_inertia(length, mass):
    return (1e-4 * mass, mass * length ** 2 / 12.0, mass * length ** 2 / 12.0)


def _fourbar_frames(closed):
    import ros_vi as trep
    from ros_vi import const_txyz, ry, tx

    def rod(k):
        name, length, mass = FOURBAR_LINKS[k]
        parts = [tx(0.5 * length, name=name + '_com', mass=(mass,) + _rod_inertia(length, mass))]
        if k + 1 < len(FOURBAR_LINKS):
            parts += [tx(length, name=name + '_tip'), [ry(FOURBAR_LINKS[k + 1][0]), rod(k + 1)]]
        else:
            parts.append(tx(length, name=name + '_tip'))
        return parts

    system = trep.System()
    system.import_frames([ry(FOURBAR_LINKS[0][0]), rod(0),
                          const_txyz([FOURBAR_GROUND, 0.0, 0.0], name='ground_pivot')])
    trep.potentials.Gravity(system, GRAVITY)
    if closed:
        trep.constraints.PointToPoint2D(system, 'xz', 'rocker_tip', 'ground_pivot',
                                        name='loop')
    return system


def fourbar_system(closed=True):
    """``(system, q0)``: the four-bar as a ros_vi System (configs 'crank', 'coupler',
    'rocker' [rad], gravity GRAVITY) and a configuration q0 (3,) that closes the loop
    (|h| <= 1e-13 m); with ``closed=False`` the same open chain without the closing
    constraint, at the same q0."""
    system = _fourbar_frames(True)
    system.q = FOURBAR_Q0_GUESS
    q0 = np.array(system.satisfy_constraints(tolerance=1e-13), dtype=float)
    if not closed:
        system = _fourbar_frames(False)
    system.q = q0
    return system, q0


def fourbar_mjcf(closed=True, timestep=1e-3):
    """MJCF of the four-bar (joints named like the ros_vi configs; hinge angles have the
    same sign and zero as the ros_vi ``ry`` configs); the loop is an ``<equality><connect>``
    of the site at the rocker's tip to the site at the ground pivot (3 equations, of which
    the y one is redundant for this planar linkage)."""
    def body(k):
        name, length, mass = FOURBAR_LINKS[k]
        Ixx, Iyy, Izz = _rod_inertia(length, mass)
        pos = '0 0 0' if k == 0 else '%.17g 0 0' % FOURBAR_LINKS[k - 1][1]
        inner = body(k + 1) if k + 1 < len(FOURBAR_LINKS) else (
            '<site name="rocker_tip" pos="%.17g 0 0"/>' % length)
        return ('<body name="%s" pos="%s"><joint name="%s" type="hinge" axis="0 1 0"/>'
                '<inertial pos="%.17g 0 0" mass="%.17g" diaginertia="%.17g %.17g %.17g"/>'
                '%s</body>' % (name, pos, name, 0.5 * length, mass, Ixx, Iyy, Izz, inner))
    equality = ('<equality><connect site1="rocker_tip" site2="ground_pivot"/></equality>'
                if closed else '')
    return ('<mujoco model="fourbar">'
            '<option timestep="%.17g" gravity="%.17g %.17g %.17g"/>'
            '<worldbody><site name="ground_pivot" pos="%.17g 0 0"/>%s</worldbody>%s'
            '</mujoco>' % ((timestep,) + tuple(GRAVITY) + (FOURBAR_GROUND, body(0), equality)))


def fourbar_pinocchio(closed=True):
    """``(model, constraint_models)``: the four-bar as a Pinocchio model (joints named like
    the ros_vi configs, JointModelRY) and, when closed, a list with one 3-D
    ``RigidConstraintModel`` joining the rocker's tip to the ground pivot (empty when open).
    Needs Pinocchio (a benchmark-only extra)."""
    import pinocchio as pin
    model = pin.Model()
    model.gravity.linear = np.array(GRAVITY)
    parent = 0
    offset = np.zeros(3)
    for name, length, mass in FOURBAR_LINKS:
        jid = model.addJoint(parent, pin.JointModelRY(), pin.SE3(np.eye(3), offset), name)
        inertia = pin.Inertia(mass, np.array([0.5 * length, 0.0, 0.0]),
                              np.diag(_rod_inertia(length, mass)))
        model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        parent, offset = jid, np.array([length, 0.0, 0.0])
    constraints = []
    if closed:
        tip = pin.SE3(np.eye(3), offset)
        pivot = pin.SE3(np.eye(3), np.array([FOURBAR_GROUND, 0.0, 0.0]))
        constraints.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model,
                                                    parent, tip, 0, pivot,
                                                    pin.ReferenceFrame.LOCAL))
    return model, constraints


def fourbar_loop_residual(q):
    """Distance [m] between the rocker's tip and the ground pivot at configuration q =
    (crank, coupler, rocker) [rad]: a rotation q about y turns x into (cos q, 0, -sin q)."""
    angle = np.cumsum(np.asarray(q, dtype=float))
    lengths = np.array([length for _, length, _ in FOURBAR_LINKS])
    tip_x = float(lengths @ np.cos(angle))
    tip_z = float(-lengths @ np.sin(angle))
    return float(np.hypot(tip_x - FOURBAR_GROUND, tip_z))
