"""Handmade and randomly generated URDFs for the importer tests and benchmark."""
import numpy as np

HERE_MODELS = ('pendulum', 'cartpole', 'acrobot', 'arm7')


def _fmt(v):
    return ' '.join('%.17g' % x for x in v)


def inertial(mass, xyz=(0, 0, 0), rpy=(0, 0, 0), I=(0.1, 0, 0, 0.1, 0, 0.1)):
    return ('<inertial><origin xyz="%s" rpy="%s"/><mass value="%.17g"/>'
            '<inertia ixx="%.17g" ixy="%.17g" ixz="%.17g" iyy="%.17g" iyz="%.17g" izz="%.17g"/>'
            '</inertial>' % ((_fmt(xyz), _fmt(rpy), mass) + tuple(I)))


def link(name, body=''):
    return '<link name="%s">%s</link>' % (name, body)


def joint(name, jtype, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, limit=None,
          dynamics=None, mimic=None):
    parts = ['<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>'
             '<origin xyz="%s" rpy="%s"/>' % (name, jtype, parent, child, _fmt(xyz), _fmt(rpy))]
    if axis is not None:
        parts.append('<axis xyz="%s"/>' % _fmt(axis))
    if limit is not None:
        parts.append('<limit lower="%.17g" upper="%.17g" effort="%.17g" velocity="%.17g"/>'
                     % tuple(limit))
    if dynamics is not None:
        parts.append('<dynamics damping="%.17g" friction="%.17g"/>' % tuple(dynamics))
    if mimic is not None:
        parts.append('<mimic joint="%s" multiplier="%.17g" offset="%.17g"/>' % tuple(mimic))
    parts.append('</joint>')
    return ''.join(parts)


def robot(name, items):
    return '<?xml version="1.0"?>\n<robot name="%s">\n  %s\n</robot>\n' % (
        name, '\n  '.join(items))


LIM = (-2.0, 2.0, 10.0, 3.0)


def full_featured():
    """Every feature at once: rpy on joints and inertials, oblique/negative/non-unit axes,
    full inertia tensors, branches, fixed joints between moving links, prismatic and
    continuous joints, massless links, a root called world, package:// meshes."""
    Ia = (0.3, 0.01, -0.02, 0.25, 0.03, 0.2)
    Ib = (0.05, -0.002, 0.001, 0.04, 0.003, 0.03)
    items = [
        link('world'),
        link('base', inertial(2.0, (0.01, 0.02, 0.1), (0.1, -0.2, 0.3), Ia) +
             '<visual><geometry><mesh filename="package://demo/base.dae"/></geometry></visual>'),
        joint('to_base', 'fixed', 'world', 'base', (0.1, 0.2, 0.3), (0.05, -0.1, 0.2)),
        link('l1', inertial(1.5, (0.1, 0.2, 0.3), (0.3, -0.4, 0.5), Ia) +
             '<collision><geometry><mesh filename="file:///nonexistent/l1.stl"/></geometry>'
             '</collision>'),
        joint('j1', 'revolute', 'base', 'l1', (0.1, -0.2, 0.5), (0.4, 0.5, -0.6),
              (1, 2, -2), LIM, (0.3, 0.1)),
        link('l1_massless'),                               # massless link between movers
        joint('f1', 'fixed', 'l1', 'l1_massless', (0.0, 0.3, 0.0), (-0.3, 0.2, 0.1)),
        link('l2', inertial(0.7, (0.0, 0.1, -0.2), (-0.2, 0.1, 0.7), Ib)),
        joint('j2', 'prismatic', 'l1_massless', 'l2', (0.3, 0, 0.1), (0, 0, 1.2),
              (0, 0, -1), (-0.2, 0.4, 50.0, 1.0)),
        link('l3', inertial(0.4, I=(0.01, 0, 0, 0.02, 0, 0.02))),
        joint('j3', 'continuous', 'l1', 'l3', (-0.2, 0.1, 0.0), (1.1, 0.2, 0.3), (0, 1, 0)),
        link('l4', inertial(0.3, (0.05, 0, 0), (0.2, 0.3, -0.1), (0.02, 0.001, 0.0, 0.01, 0.0,
                                                                     0.015))),
        joint('j4', 'revolute', 'l2', 'l4', (0.1, 0.1, 0.1), (-0.7, 0.25, 2.0), (-1, 0, 0),
              LIM),
        link('l5', inertial(0.2, (0, 0, 0.05), (0, 0, 0), (0.001, 0, 0, 0.001, 0, 0.0005))),
        joint('j5', 'prismatic', 'l4', 'l5', (0, 0, 0.2), (0.3, 0.3, 0.3), (0.3, -0.4, 0.5),
              LIM),
        link('tip'),
        joint('tip_fixed', 'fixed', 'l5', 'tip', (0, 0, 0.1), (0.1, 0.2, 0.3)),
        link('l6', inertial(0.25, (0.02, -0.03, 0.04), (1.0, -1.0, 0.5),
                            (0.004, 0.0002, -0.0001, 0.003, 0.0003, 0.002))),
        joint('j6', 'revolute', 'tip', 'l6', (0.05, 0, 0), (0, 1.5707963267948966, 0),
              (0, 0, 3), LIM),
    ]
    return robot('full', items)


def mimic_robot():
    I = (0.01, 0.0, 0.0, 0.02, 0.0, 0.02)
    return robot('mimic', [
        link('base'),
        link('a', inertial(1.0, (0.2, 0, 0.1), (0.1, 0.2, 0.3), (0.1, 0.01, 0, 0.2, 0, 0.15))),
        link('b', inertial(0.5, (0.1, 0.05, 0), I=I)),
        link('c', inertial(0.3, (0, 0.1, 0), I=I)),
        link('d', inertial(0.2, (0, 0.0, 0.1), I=I)),
        joint('ja', 'revolute', 'base', 'a', axis=(0, 0, 1), limit=LIM),
        joint('jb', 'revolute', 'a', 'b', (0.4, 0, 0), (0.3, 0, 0), (0, 1, 0), LIM),
        joint('jc', 'revolute', 'a', 'c', (0.4, 0.1, 0), (0, 0.2, 0), (0, 1, 0), LIM,
              mimic=('jb', -1.5, 0.2)),
        joint('jd', 'prismatic', 'a', 'd', (0.0, -0.1, 0), (0, 0.2, 0.4), (1, 1, 0), LIM,
              mimic=('jb', 0.25, -0.05)),
    ])


def random_robot(seed, n_links=8):
    """A random tree: random joint types (incl. fixed), axes, origins, inertias."""
    rng = np.random.default_rng(seed)
    items = [link('root_link', inertial(1.0, rng.uniform(-0.1, 0.1, 3), rng.uniform(-3, 3, 3),
                                        _rand_inertia(rng)))]
    names = ['root_link']
    types = ['revolute', 'continuous', 'prismatic', 'fixed']
    for i in range(n_links):
        parent = names[rng.integers(len(names))]
        child = 'r%d' % i
        jtype = types[rng.integers(len(types))] if i else 'revolute'
        axis_kind = rng.integers(3)
        if axis_kind == 0:
            axis = np.zeros(3)
            axis[rng.integers(3)] = rng.choice([-1.0, 1.0])
        else:
            axis = rng.normal(size=3) * rng.uniform(0.2, 3.0)
        body = inertial(rng.uniform(0.1, 2.0), rng.uniform(-0.3, 0.3, 3),
                        rng.uniform(-3, 3, 3), _rand_inertia(rng))
        items.append(link(child, body))
        lim = LIM if jtype in ('revolute', 'prismatic') else None
        items.append(joint('q%d' % i, jtype, parent, child, rng.uniform(-0.5, 0.5, 3),
                           rng.uniform(-3, 3, 3), axis if jtype != 'fixed' else None, lim))
        names.append(child)
    return robot('random%d' % seed, items)


def _rand_inertia(rng):
    # principal moments obeying the triangle inequality, rotated by a random rotation
    a, b = rng.uniform(0.01, 0.1, 2)
    c = rng.uniform(abs(a - b), a + b)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    I = Q @ np.diag([a, b, c]) @ Q.T
    return (I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])


def humanoid(seed=0):
    """A 40-DOF humanoid-like tree as real descriptions write it: a pelvis, legs (6 joints
    each), a 3-joint waist, arms (7 each), a 3-joint neck, hands with 4 finger joints each
    (revolute joints on +-x/y/z axes mostly, a few oblique), inertials with rpy origins,
    and fixed sensor/sole/tool links (an imu, cameras, feet soles, palm frames)."""
    rng = np.random.default_rng(seed)
    items = [link('pelvis', inertial(8.0, (0, 0, 0.05), (0, 0, 0), _rand_inertia(rng)))]
    axes = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, -1, 0), (0, 0, -1)]

    def body():
        return inertial(rng.uniform(0.1, 4.0), rng.uniform(-0.05, 0.05, 3),
                        rng.uniform(-0.5, 0.5, 3), _rand_inertia(rng))

    def chain(parent, prefix, n, offset, oblique=()):
        for k in range(n):
            child = '%s_link%d' % (prefix, k + 1)
            axis = rng.normal(size=3) if k in oblique else axes[rng.integers(6)]
            items.append(link(child, body()))
            items.append(joint('%s_joint%d' % (prefix, k + 1), 'revolute', parent, child,
                               offset if k == 0 else rng.uniform(-0.2, 0.2, 3),
                               rng.uniform(-0.3, 0.3, 3) if k % 3 == 0 else (0, 0, 0),
                               axis, LIM, (0.1, 0.0)))
            parent = child
        return parent

    def fixed(parent, name, xyz):
        items.append(link(name))
        items.append(joint(name + '_fixed', 'fixed', parent, name, xyz, (0, 0.2, 0)))

    fixed('pelvis', 'imu_link', (0, 0, 0.1))
    for side, y in (('l', 0.1), ('r', -0.1)):
        foot = chain('pelvis', side + '_leg', 6, (0, y, -0.1))
        fixed(foot, side + '_sole', (0.05, 0, -0.05))
    torso = chain('pelvis', 'waist', 3, (0, 0, 0.2), oblique=(2,))
    fixed(torso, 'chest_camera', (0.1, 0, 0.3))
    for side, y in (('l', 0.2), ('r', -0.2)):
        hand = chain(torso, side + '_arm', 7, (0, y, 0.4), oblique=(4,))
        fixed(hand, side + '_palm', (0, 0, -0.08))
        for finger in ('a', 'b'):
            chain(side + '_palm', '%s_finger_%s' % (side, finger), 2, (0.02, 0, -0.03))
    head = chain(torso, 'neck', 3, (0, 0, 0.5))
    fixed(head, 'head_camera', (0.08, 0, 0.05))
    return robot('humanoid40', items)


def chain(n, jtype='continuous', name='chain'):
    """A serial chain of ``n`` joints (each with an origin, axis y), a link of 1 kg below
    each: the deepest frame tree a description of n joints gives."""
    items = [link('l0')]
    for i in range(1, n + 1):
        items.append(link('l%d' % i, inertial(1.0)))
        items.append(joint('j%d' % i, jtype, 'l%d' % (i - 1), 'l%d' % i, xyz=(0, 0, 0.1),
                           axis=(0, 1, 0) if jtype != 'fixed' else None))
    return robot(name, items)
