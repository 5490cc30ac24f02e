"""Writes the two floating-base robots shipped in urdf/: ``quadruped.urdf`` and
``humanoid.urdf`` (benchmark and test models, not runtime code).

Both are made of simple solids: each link's mass is spread over a box, cylinder or sphere
whose inertia tensor about its centre of mass follows from the solid's formula (so it is
positive definite and obeys the triangle inequality by construction); the same solid,
at the same origin, is the link's ``<visual>`` and ``<collision>``.  A few links carry a
centre of mass off the solid's centre and small products of inertia (a full tensor from a
slightly turned principal frame), as measured robots do.  Neither robot is welded to a
``world`` link: ``import_urdf(text, floating_base=True)`` (or Pinocchio's free-flyer) makes
the root link a free body.

* ``quadruped``: a 0.38 x 0.20 x 0.11 m trunk (5.2 kg) and four legs of three revolute
  joints (hip abduction about x, thigh and calf about y), 12.9 kg in all, joint limits,
  efforts and speeds of a 12 kg-class electric quadruped; a sphere foot (fixed) per leg.
* ``humanoid``: pelvis, a 3-joint waist (yaw, roll, pitch) under the torso, a 2-joint neck
  and a head, two 7-joint arms and two 6-joint legs: 31 revolute joints, 62.4 kg.

    python benchmarks/make_floating_robots.py        # rewrites urdf/quadruped.urdf, humanoid.urdf

Units: SI (m, kg, kg m^2, rad, N m, rad/s).
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)                  # this checkout's ros_vi
from ros_vi.urdf import rpy_matrix  # noqa: E402
X, Y, Z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
HALF_PI = 1.5707963267948966


def _num(x):
    """A number as the URDF writes it: up to 6 significant digits, no '-0'."""
    s = '%.6g' % x
    return '0' if s in ('-0', '0') else s


def _vec(v):
    return ' '.join(_num(x) for x in v)


# ---------------------------------------------------------------------- solids
class Solid:
    """A homogeneous solid: ``shape`` ('box' with size (3,), 'cylinder' with (radius,
    length) along its z axis, 'sphere' with (radius,)), ``mass`` [kg], placed at ``xyz``
    with orientation ``rpy`` in the link frame.  ``com`` shifts the centre of mass from the
    solid's centre (link axes) and ``tilt`` (rpy) turns the principal axes of the inertia
    away from the solid's (the products of inertia of a real, non-uniform part)."""

    def __init__(self, shape, size, mass, xyz=(0, 0, 0), rpy=(0, 0, 0), com=(0, 0, 0),
                 tilt=None):
        self.shape, self.size, self.mass = shape, tuple(size), float(mass)
        self.xyz, self.rpy, self.com, self.tilt = tuple(xyz), tuple(rpy), tuple(com), tilt

    def principal_moments(self):
        """Moments [kg m^2] about the centre, in the solid's own axes."""
        m = self.mass
        if self.shape == 'box':
            a, b, c = self.size
            return m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
        if self.shape == 'cylinder':
            r, h = self.size
            side = m * (3 * r * r + h * h) / 12.0
            return np.array([side, side, 0.5 * m * r * r])
        if self.shape == 'sphere':
            (r,) = self.size
            return np.full(3, 0.4 * m * r * r)
        raise ValueError('unknown solid %r' % self.shape)

    def geometry(self):
        if self.shape == 'box':
            return '<box size="%s"/>' % _vec(self.size)
        if self.shape == 'cylinder':
            return '<cylinder radius="%s" length="%s"/>' % tuple(_num(x) for x in self.size)
        return '<sphere radius="%s"/>' % _num(self.size[0])

    def inertial(self):
        """The ``<inertial>`` element: the inertia in the solid's axes (origin rpy), or, with
        a tilt, the full tensor in the link axes (origin rpy 0)."""
        moments = self.principal_moments()
        xyz = np.add(self.xyz, self.com)
        if self.tilt is None:
            rpy, I = self.rpy, np.diag(moments)
        else:
            R = rpy_matrix(self.rpy) @ rpy_matrix(self.tilt)
            rpy, I = (0, 0, 0), R @ np.diag(moments) @ R.T
        check_inertia(I)
        return ('<inertial>\n        <origin xyz="%s" rpy="%s"/>\n        <mass value="%s"/>\n'
                '        <inertia ixx="%s" ixy="%s" ixz="%s" iyy="%s" iyz="%s" izz="%s"/>\n'
                '      </inertial>' % ((_vec(xyz), _vec(rpy), _num(self.mass))
                                      + tuple(_num(I[i, j]) for i, j in
                                              ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))))

    def shapes(self):
        origin = '<origin xyz="%s" rpy="%s"/>' % (_vec(self.xyz), _vec(self.rpy))
        return ''.join('\n      <%s>\n        %s\n        <geometry>%s</geometry>\n      </%s>'
                       % (tag, origin, self.geometry(), tag) for tag in ('visual', 'collision'))


def check_inertia(I):
    """Raise if the 3x3 tensor ``I`` is not the inertia of a body: symmetric, positive
    definite, principal moments obeying the triangle inequality."""
    I = np.asarray(I, float)
    if np.abs(I - I.T).max() > 1e-15:
        raise ValueError('inertia not symmetric: %s' % I)
    m = np.linalg.eigvalsh(I)
    if not (m[0] > 0 and m[2] <= m[0] + m[1]):
        raise ValueError('not a physical inertia (principal moments %s)' % m)


# ---------------------------------------------------------------------- a URDF writer
class Writer:
    def __init__(self, name):
        self.name = name
        self.items = []
        self.mass = 0.0
        self.revolute = 0

    def link(self, name, solid=None):
        if solid is None:
            self.items.append('<link name="%s"/>' % name)
            return name
        self.mass += solid.mass
        self.items.append('<link name="%s">\n      %s%s\n    </link>'
                          % (name, solid.inertial(), solid.shapes()))
        return name

    def joint(self, name, jtype, parent, child, xyz, rpy=(0, 0, 0), axis=None, limit=None):
        parts = ['<joint name="%s" type="%s">' % (name, jtype),
                 '<parent link="%s"/>' % parent, '<child link="%s"/>' % child,
                 '<origin xyz="%s" rpy="%s"/>' % (_vec(xyz), _vec(rpy))]
        if axis is not None:
            parts.append('<axis xyz="%s"/>' % _vec(axis))
        if limit is not None:
            parts.append('<limit lower="%s" upper="%s" effort="%s" velocity="%s"/>'
                         % tuple(_num(x) for x in limit))
        if jtype == 'revolute':
            self.revolute += 1
        self.items.append('\n      '.join(parts) + '\n    </joint>')

    def text(self, comment):
        return ('<?xml version="1.0"?>\n<!-- %s -->\n<robot name="%s">\n    %s\n</robot>\n'
                % (comment, self.name, '\n    '.join(self.items)))


# ---------------------------------------------------------------------- the robots
def quadruped():
    """URDF text of the 12-joint quadruped (module docstring)."""
    w = Writer('quadruped')
    w.link('trunk', Solid('box', (0.38, 0.20, 0.11), 5.2, com=(0.008, 0.002, -0.004),
                          tilt=(0.01, -0.02, 0.015)))
    w.link('imu_link')
    w.joint('imu_joint', 'fixed', 'trunk', 'imu_link', (-0.02, 0, 0.03))
    hip = (-0.86, 0.86, 23.7, 30.0)
    thigh = (-0.69, 4.5, 23.7, 30.0)
    calf = (-2.82, -0.89, 35.5, 20.0)
    for leg, sx, sy in (('FL', 1, 1), ('FR', 1, -1), ('RL', -1, 1), ('RR', -1, -1)):
        w.link(leg + '_hip', Solid('cylinder', (0.046, 0.04), 0.68, rpy=(HALF_PI, 0, 0),
                                   com=(-0.005 * sx, 0.002 * sy, 0)))
        w.joint(leg + '_hip_joint', 'revolute', 'trunk', leg + '_hip',
                (0.1881 * sx, 0.04675 * sy, 0), axis=X, limit=hip)
        w.link(leg + '_thigh', Solid('box', (0.034, 0.043, 0.213), 1.0, xyz=(0, 0, -0.1065),
                                     com=(-0.004, -0.015 * sy, 0.07), tilt=(0.02 * sy, 0.03, 0)))
        w.joint(leg + '_thigh_joint', 'revolute', leg + '_hip', leg + '_thigh',
                (0, 0.08 * sy, 0), axis=Y, limit=thigh)
        w.link(leg + '_calf', Solid('cylinder', (0.012, 0.213), 0.19, xyz=(0, 0, -0.1065),
                                    com=(0.005, 0, 0.015)))
        w.joint(leg + '_calf_joint', 'revolute', leg + '_thigh', leg + '_calf', (0, 0, -0.213),
                axis=Y, limit=calf)
        w.link(leg + '_foot', Solid('sphere', (0.02,), 0.06))
        w.joint(leg + '_foot_fixed', 'fixed', leg + '_calf', leg + '_foot', (0, 0, -0.213))
    assert w.revolute == 12
    return w.text('12-joint quadruped, %.4g kg; written by benchmarks/make_floating_robots.py'
                  % w.mass), w.mass


def humanoid():
    """URDF text of the 31-joint humanoid (module docstring)."""
    w = Writer('humanoid')
    leg_lim = (-2.0, 2.0, 200.0, 10.0)
    knee_lim = (0.0, 2.4, 300.0, 10.0)
    arm_lim = (-2.6, 2.6, 80.0, 8.0)
    small_lim = (-1.5, 1.5, 20.0, 6.0)
    waist_lim = (-0.8, 0.8, 150.0, 6.0)
    w.link('pelvis', Solid('box', (0.16, 0.26, 0.14), 8.0, com=(-0.01, 0, 0.01),
                           tilt=(0.02, 0.05, -0.01)))
    w.link('imu_link')
    w.joint('imu_joint', 'fixed', 'pelvis', 'imu_link', (0, 0, 0.05))

    def chain(parent, prefix, segments):
        """segments: (joint suffix, axis, origin xyz, origin rpy, limit, solid) per joint."""
        for suffix, axis, xyz, rpy, limit, solid in segments:
            child = w.link('%s_%s_link' % (prefix, suffix), solid)
            w.joint('%s_%s_joint' % (prefix, suffix), 'revolute', parent, child, xyz, rpy,
                    axis, limit)
            parent = child
        return parent

    for side, s in (('left', 1.0), ('right', -1.0)):
        foot = chain('pelvis', side + '_leg', [
            ('hip_yaw', Z, (0, 0.09 * s, -0.07), (0, 0, 0), leg_lim,
             Solid('cylinder', (0.05, 0.06), 1.0, xyz=(0, 0, -0.03))),
            ('hip_roll', X, (0, 0, -0.06), (0, 0, 0), leg_lim,
             Solid('box', (0.08, 0.08, 0.08), 1.0)),
            ('hip_pitch', Y, (0, 0, 0), (0, 0, 0), leg_lim,
             Solid('cylinder', (0.065, 0.40), 5.0, xyz=(0, 0, -0.2), com=(0.01, 0, 0.05),
                   tilt=(0.03 * s, 0.02, 0))),
            ('knee', Y, (0, 0, -0.40), (0, 0, 0), knee_lim,
             Solid('cylinder', (0.05, 0.40), 3.0, xyz=(0, 0, -0.2), com=(0, 0, 0.04))),
            ('ankle_pitch', Y, (0, 0, -0.40), (0, 0, 0), small_lim,
             Solid('sphere', (0.03,), 0.4)),
            ('ankle_roll', X, (0, 0, 0), (0, 0, 0), small_lim,
             Solid('box', (0.22, 0.10, 0.05), 1.2, xyz=(0.04, 0, -0.05)))])
        w.link(side + '_sole')
        w.joint(side + '_sole_fixed', 'fixed', foot, side + '_sole', (0.04, 0, -0.075))
    torso = chain('pelvis', 'waist', [
        ('yaw', Z, (0, 0, 0.09), (0, 0, 0), waist_lim,
         Solid('cylinder', (0.06, 0.06), 1.5, xyz=(0, 0, 0.03))),
        ('roll', X, (0, 0, 0.06), (0, 0, 0), waist_lim, Solid('sphere', (0.05,), 1.0)),
        ('pitch', Y, (0, 0, 0), (0, 0, 0), waist_lim,
         Solid('box', (0.20, 0.32, 0.40), 12.0, xyz=(0, 0, 0.2), com=(-0.02, 0, 0.03),
               tilt=(0.01, -0.04, 0.02)))])
    head = chain(torso, 'neck', [
        ('yaw', Z, (0, 0, 0.42), (0, 0, 0), small_lim,
         Solid('cylinder', (0.04, 0.06), 0.5, xyz=(0, 0, 0.03))),
        ('pitch', Y, (0, 0, 0.06), (0, 0, 0), small_lim,
         Solid('sphere', (0.1,), 4.0, xyz=(0.01, 0, 0.1)))])
    w.link('head_camera')
    w.joint('head_camera_fixed', 'fixed', head, 'head_camera', (0.1, 0, 0.12), (0, 0.2, 0))
    for side, s in (('left', 1.0), ('right', -1.0)):
        hand = chain(torso, side + '_arm', [
            # the shoulder turned slightly forward (a realistic mounting)
            ('shoulder_pitch', Y, (0, 0.20 * s, 0.34), (0.1 * s, 0, 0), arm_lim,
             Solid('cylinder', (0.05, 0.06), 0.9, xyz=(0, 0.03 * s, 0), rpy=(HALF_PI, 0, 0))),
            ('shoulder_roll', X, (0, 0.06 * s, 0), (0, 0, 0), arm_lim,
             Solid('box', (0.07, 0.07, 0.07), 0.8)),
            ('shoulder_yaw', Z, (0, 0, -0.05), (0, 0, 0), arm_lim,
             Solid('cylinder', (0.045, 0.26), 2.1, xyz=(0, 0, -0.13), com=(0, 0.005 * s, 0.02),
                   tilt=(0.02, 0, 0.03))),
            ('elbow', Y, (0, 0, -0.28), (0, 0, 0), arm_lim,
             Solid('cylinder', (0.04, 0.24), 1.3, xyz=(0, 0, -0.12), com=(0, 0, 0.02))),
            ('wrist_yaw', Z, (0, 0, -0.25), (0, 0, 0), small_lim,
             Solid('cylinder', (0.03, 0.03), 0.3)),
            ('wrist_pitch', Y, (0, 0, -0.03), (0, 0, 0), small_lim,
             Solid('sphere', (0.025,), 0.2)),
            ('wrist_roll', X, (0, 0, -0.03), (0, 0, 0), small_lim,
             Solid('box', (0.03, 0.08, 0.16), 0.5, xyz=(0, 0, -0.08)))])
        w.link(side + '_palm')
        w.joint(side + '_palm_fixed', 'fixed', hand, side + '_palm', (0, 0, -0.1))
    assert w.revolute == 31
    return w.text('31-joint humanoid, %.4g kg; written by benchmarks/make_floating_robots.py'
                  % w.mass), w.mass


def main():
    for make in (quadruped, humanoid):
        text, mass = make()
        path = os.path.join(ROOT, 'urdf', make.__name__ + '.urdf')
        with open(path, 'w', encoding='utf-8') as fh:
            fh.write(text)
        print('%s: %.2f kg' % (path, mass))


if __name__ == '__main__':
    main()
