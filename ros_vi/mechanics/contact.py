"""Contacts: a sphere carried by a frame against a plane fixed in the world, with Coulomb
friction, held by the VI step as unilateral constraints (:class:`SphereOnPlane`).

A contact is declared on a :class:`System` (like a constraint) and every
:class:`~ros_vi.integrators.MidpointVI` on it then keeps the sphere on the plane's side:
at the end of each step the gap is non-negative, the normal impulse pushes and is zero
where the gap is open, and the friction impulse lies in the Coulomb cone ``|beta| <= mu
gamma`` (the exact, round cone), opposing the contact point's slip with all the cone
allows (maximum dissipation).  docs/contact.md has the conditions and the method.

:func:`contact_kinematics` evaluates every contact of a system at a configuration at once
(gaps, their gradients and the contact points' Jacobians) on the model's stacked arrays.
"""
from dataclasses import dataclass

import numpy as np

from . import kernel
from .frame import resolve_frame

__all__ = ['ContactForces', 'ContactSet', 'SphereOnPlane', 'contact_hessians',
           'contact_kinematics', 'plane_basis']


def plane_basis(normal):
    """``(n, t1, t2)``: the unit normal of ``normal`` (3,) and two unit tangents with
    ``t1 x t2 = n`` (t1 is the unit vector along the world axis most orthogonal to n,
    projected onto the plane)."""
    n = np.asarray(normal, dtype=float).reshape(3)
    n = n / np.linalg.norm(n)
    axis = np.zeros(3)
    axis[int(np.argmin(np.abs(n)))] = 1.0
    t1 = axis - (axis @ n) * n
    t1 /= np.linalg.norm(t1)
    return n, t1, np.cross(n, t1)


def _finite(value, n, what):
    try:
        v = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError('%s must be %d numbers, got %r' % (what, n, value)) from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ValueError('%s must be %d finite numbers, got %r' % (what, n, value))
    return v


class SphereOnPlane:
    """A sphere of ``radius`` [m] (0: a point) centred at ``offset`` (3,) [m] in ``frame``,
    that may not pass through the plane through ``plane_point`` (3,) [m, world] with normal
    ``plane_normal`` (3,) (world; the free side is where it points), with friction
    coefficient ``friction`` (>= 0; 0: frictionless) and coefficient of restitution
    ``restitution`` (in [0, 1]; 0, the default: impacts are inelastic; else the step in which
    the sphere strikes the plane ends with it leaving at ``restitution`` times the normal
    speed it came in with: docs/contact.md).

    The gap ``phi(q) = n . (c(q) - plane_point) - radius`` [m] (``c`` the sphere's centre);
    the contact point is ``c - radius n``, the point of the body there slips with
    ``T^T J_x dq`` (T the plane's tangents t1, t2: :func:`plane_basis`).  The step's
    impulses on it (after a step of :class:`MidpointVI`): :attr:`MidpointVI.contact_impulses`.
    """

    def __init__(self, system, frame, radius=0.0, offset=(0.0, 0.0, 0.0),
                 plane_point=(0.0, 0.0, 0.0), plane_normal=(0.0, 0.0, 1.0), friction=0.0,
                 name=None, restitution=0.0):
        self._system = system
        self._frame = resolve_frame(system, frame, 'SphereOnPlane frame')
        self.name = name
        r = float(radius)
        if not (np.isfinite(r) and r >= 0.0):
            raise ValueError('SphereOnPlane %r: radius must be finite and >= 0, got %r'
                             % (name, radius))
        self._radius = r
        self._offset = _finite(offset, 3, 'SphereOnPlane %r: offset' % name)
        self._point = _finite(plane_point, 3, 'SphereOnPlane %r: plane_point' % name)
        normal = _finite(plane_normal, 3, 'SphereOnPlane %r: plane_normal' % name)
        if not np.any(normal != 0.0):
            raise ValueError('SphereOnPlane %r: plane_normal must be non-zero' % name)
        self._basis = plane_basis(normal)
        self.friction = friction
        self.restitution = restitution
        system._add_contact(self)

    def __repr__(self):
        return '<SphereOnPlane %r frame=%r radius=%g mu=%g>' % (
            self.name, self._frame.name, self._radius, self._mu)

    @property
    def system(self):
        return self._system

    @property
    def frame(self):
        """The :class:`Frame` that carries the sphere."""
        return self._frame

    @property
    def radius(self):
        return self._radius

    @property
    def offset(self):
        """The sphere's centre (3,) [m] in :attr:`frame`."""
        return self._offset.copy()

    @property
    def plane(self):
        """``(point (3,), n, t1, t2)`` [m, world]: the plane and its unit normal and
        tangents."""
        return (self._point.copy(),) + tuple(b.copy() for b in self._basis)

    @property
    def friction(self):
        """The Coulomb friction coefficient mu (settable, >= 0)."""
        return self._mu

    @friction.setter
    def friction(self, value):
        self._mu = self._coefficient(value, 'friction', np.inf, 'finite and >= 0')

    @property
    def restitution(self):
        """The coefficient of restitution e in [0, 1] (settable; 0: inelastic)."""
        return self._e

    @restitution.setter
    def restitution(self, value):
        self._e = self._coefficient(value, 'restitution', 1.0, 'in [0, 1]')

    def _coefficient(self, value, what, high, rule):
        """``value`` as a float in [0, high] (high itself finite), or ValueError naming
        the contact, ``what`` and the ``rule``."""
        x = float(value)
        if not (0.0 <= x <= high and np.isfinite(x)):
            raise ValueError('SphereOnPlane %r: %s must be %s, got %r'
                             % (self.name, what, rule, value))
        return x


@dataclass
class ContactForces:
    """The contacts' forces over one step, each in the axes of the frame that carries it
    (:meth:`ContactSet.forces`).

    ``names`` (k,) the contacts, ``frames`` (k,) their frames' names (for an imported
    robot: the prefixed link names, tf's frames), ``modes`` (k,) 'open', 'stick' or
    'slide', ``points`` (k, 3) [m] where each sphere touches its plane and ``forces``
    (k, 3) [N] the force on the body there, both in the frame.
    """
    names: list
    frames: list
    modes: list
    points: np.ndarray
    forces: np.ndarray

    def wrenches(self):
        """Per frame that carries a contact, in the order first met: ``[(frame, force
        (3,) [N], torque (3,) [N m])]``, the sum of its contacts' forces and their moment
        about the frame's origin, in the frame's axes (zero where every contact is
        open).  The frame's own wrench from the ground, as a force-torque sensor at its
        origin measures it."""
        out = {}
        moments = np.cross(self.points, self.forces)
        for frame, f, m in zip(self.frames, self.forces, moments):
            if frame not in out:
                out[frame] = (np.zeros(3), np.zeros(3))
            out[frame][0][:] += f
            out[frame][1][:] += m
        return [(frame, f, m) for frame, (f, m) in out.items()]


class ContactSet:
    """The contacts of a system stacked for evaluation (built once per structure, as the
    Model: the step evaluates them on arrays, with no Python per contact):
    ``frame`` (k,) the carrying frames' indices, ``offset`` (k, 3) [m] the spheres'
    centres in them, ``radius`` (k,) [m], ``point`` (k, 3) [m] and ``basis`` (k, 3, 3)
    (rows n, t1, t2) the planes, ``moves`` (k, nt) 1.0 where a joint coordinate moves the
    contact's frame.  Friction is read from the contacts themselves (it may change)."""

    def __init__(self, system, contacts=None):
        self.system = system
        model = self.model = system.model
        self.contacts = list(system.contacts if contacts is None else contacts)
        k = len(self.contacts)
        index = {id(f): i for i, f in enumerate(system.frames)}
        self.frame = np.array([index[id(c.frame)] for c in self.contacts], dtype=np.int64)
        self.offset = np.array([c.offset for c in self.contacts]).reshape(k, 3)
        self.radius = np.array([c.radius for c in self.contacts], dtype=float)
        planes = [c.plane for c in self.contacts]
        self.point = np.array([p[0] for p in planes]).reshape(k, 3)
        self.basis = np.array([np.array(p[1:]) for p in planes]).reshape(k, 3, 3)
        self.moves = model.frame_anc[self.frame].astype(float)
        self.joint_map = model.joint_map

    def __len__(self):
        return len(self.contacts)

    def _poses(self, q):
        """World rotations and positions of every frame, and the joint coordinates' unit
        twists (nt, 6), at the configuration ``q`` (nQ,)."""
        model = self.model
        theta = model.joint_positions(np.asarray(q, dtype=float))
        R, P = kernel.forward_kinematics(model.parent, model.kind, model.value, model.fcfg,
                                         model.fixedR, model.fixedp, theta)
        S = kernel.joint_twists(model.kind, model.cframe, model.corder, R, P, model.nt)
        return R, P, S

    def kinematics(self, q):
        """``(gap (k,) [m], normal (k, nQ), slip (k, 2, nQ))`` at ``q`` (nQ,): as
        :func:`contact_kinematics`."""
        k, nq = len(self.contacts), self.model.nq
        if not k:
            return np.zeros(0), np.zeros((0, nq)), np.zeros((0, 2, nq))
        R, P, S = self._poses(q)
        f = self.frame
        centre = np.einsum('kij,kj->ki', R[f], self.offset) + P[f]
        n = self.basis[:, 0]
        gap = np.einsum('ki,ki->k', n, centre - self.point) - self.radius
        w, v = S[:, :3], S[:, 3:]
        # a coordinate with unit twist (w, v) moves a point p at w x p + v: the centre's
        # rates (k, nt, 3), and the material point at the contact point x = c - r n
        dc = np.cross(w[None, :, :], centre[:, None, :]) + v[None, :, :]
        dx = dc - self.radius[:, None, None] * np.cross(w[None, :, :], n[:, None, :])
        Jn = np.einsum('kti,ki->kt', dc, n) * self.moves
        Jt = np.einsum('kti,kai->kat', dx, self.basis[:, 1:]) * self.moves[:, None, :]
        E = self.joint_map
        return gap, Jn @ E, Jt @ E

    def forces(self, q, impulses, dt, modes):
        """The forces a step of ``dt`` [s] ending at ``q`` (nQ,) put on the bodies through
        the contacts, from its impulses ``impulses`` (k, 3) [N s] (gamma, beta1, beta2:
        :attr:`MidpointVI.contact_impulses`) and modes ``modes`` (k,) ('open', 'stick',
        'slide': :attr:`MidpointVI.contact_modes`): a :class:`ContactForces`.
        The force is the step's mean, impulse / dt, the contact's normal and tangent
        impulses combined (gamma n + beta1 t1 + beta2 t2)."""
        k = len(self.contacts)
        impulses = np.asarray(impulses, dtype=float).reshape(k, 3)
        model = self.model
        theta = model.joint_positions(np.asarray(q, dtype=float))
        R, _ = kernel.forward_kinematics(model.parent, model.kind, model.value, model.fcfg,
                                         model.fixedR, model.fixedp, theta)
        Rf = R[self.frame]                                      # (k, 3, 3) frame -> world
        world = np.einsum('ka,kai->ki', impulses, self.basis) / float(dt)
        # into the carrying frame's axes; the touching point is c - r n there too
        force = np.einsum('kji,kj->ki', Rf, world)
        normal = np.einsum('kji,kj->ki', Rf, self.basis[:, 0])
        point = self.offset - self.radius[:, None] * normal
        return ContactForces([c.name for c in self.contacts],
                             [self.system.frames[f].name for f in self.frame],
                             list(modes), point, force)

    def points(self, q):
        """Per contact at ``q`` (nQ,): ``(chain, w, v, centre, x, n, t1, t2)`` with
        ``chain`` the joint coordinates that move its frame (shallow to deep), ``w``,
        ``v`` (len(chain), 3) their unit spatial twists, the sphere's centre, the contact
        point x = centre - radius n and the plane's basis."""
        R, P, S = self._poses(q)
        for m, c in enumerate(self.contacts):
            f = self.frame[m]
            centre = R[f] @ self.offset[m] + P[f]
            n, t1, t2 = self.basis[m]
            chain = self.model.frame_chain(f)
            yield (chain, S[chain, :3], S[chain, 3:], centre, centre - self.radius[m] * n,
                   n, t1, t2)

    def hessians(self, q):
        """Second derivatives at ``q`` (nQ,): as :func:`contact_hessians`."""
        model = self.model
        k, nt = len(self.contacts), model.nt
        hess = np.zeros((k, model.nq, model.nq))
        dslip = np.zeros((k, 2, model.nq, model.nq))
        E = self.joint_map
        H = np.zeros((nt, nt))
        for m, (chain, w, v, centre, x, n, t1, t2) in enumerate(self.points(q)):
            r = self.radius[m]
            dc = np.cross(w, centre) + v                  # (len(chain), 3)
            dx = np.cross(w, x) + v
            # [i, j]: w_i x dc_j, the second derivative for i at or above j
            w_dc = np.cross(w[:, None, :], dc[None, :, :])
            above = np.triu(np.ones((len(chain), len(chain)), dtype=bool))
            Hc = np.where(above[:, :, None], w_dc, np.swapaxes(w_dc, 0, 1))
            # [i, j] for j above i (j < i): w_j x dx_i + r w_i x (w_j x n)
            w_n = np.cross(w, n)
            lower = (np.cross(w[None, :, :], dx[:, None, :])
                     + r * np.cross(w[:, None, :], w_n[None, :, :]))
            Dx = np.where(above[:, :, None], w_dc, lower)
            H[:] = 0.0
            H[np.ix_(chain, chain)] = Hc @ n
            hess[m] = E.T @ H @ E
            for a, t in enumerate((t1, t2)):
                H[np.ix_(chain, chain)] = Dx @ t
                dslip[m, a] = E.T @ H @ E
        return hess, dslip


def contact_kinematics(system, q, contacts=None):
    """The contacts' geometry at the configuration ``q`` (nQ,) of ``system``:
    ``(gap (k,) [m], normal (k, nQ) = d gap / d q, slip (k, 2, nQ))`` with ``slip`` the
    tangential Jacobian ``T^T J_x`` [m/rad or m/m] of the body's material point at each
    contact point (its slip rate is ``slip @ dq``), for ``contacts`` (default: all of the
    system's, in order).  Mimic joints are folded onto their leaders.  (A step holds a
    :class:`ContactSet` and evaluates it directly.)"""
    return ContactSet(system, contacts).kinematics(q)


def contact_hessians(system, q, contacts=None):
    """Second derivatives of the contacts' geometry at ``q`` (nQ,) (as
    :func:`contact_kinematics`): ``(gap_hessian (k, nQ, nQ), slip_derivative (k, 2, nQ,
    nQ))`` with ``gap_hessian[m] = d2 gap / dq dq`` (symmetric) and
    ``slip_derivative[m, a, i, j] = d slip[m, a, i] / d q_j``.

    Exact, from the joints' twists: a coordinate j above coordinate i on the frame's chain
    turns i's twist, ``d S_i / d q_j = [S_j, S_i]`` (the Lie bracket), and every
    coordinate moves the sphere's centre c at ``dc_j = w_j x c + v_j``.  So the centre's
    second derivatives are ``w_a x dc_b`` (a the shallower of i, j, b the deeper); the
    material point at the contact point x = c - r n, whose velocity column is ``dx_i =
    w_i x x + v_i`` while x moves with c, has ``d dx_i / d q_j = w_j x dx_i + r w_i x (w_j
    x n)`` for j above i and ``w_i x dc_j`` otherwise."""
    return ContactSet(system, contacts).hessians(q)
