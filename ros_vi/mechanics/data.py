"""Data: one state of a compiled :class:`~ros_vi.mechanics.model.Model` and its caches.

A :class:`Model` is the structure, built once; a :class:`Data` is what changes: the
configuration, velocity, acceleration, inputs and time, and the results computed for them.
Several Data objects of one Model can be used side by side (a linearisation next to a
running simulation, a batch of rollouts): nothing in a Data refers to another.

Example
-------
>>> data = system.model.create_data()           # a second, independent state
>>> data.set(q=[0.3], dq=[0.0])
>>> from ros_vi.mechanics import dynamics
>>> M = dynamics.mass_matrix(system.model, data)  # (nQd, nQd) at q = 0.3
"""
import weakref

import numpy as np


class Cache:
    """Results computed for one state; a fresh (empty) one replaces it on any change.

    Holding a reference and comparing identity (``data.cache is saved``) tells whether the
    state changed since.  Class attributes are the empty defaults, so creating one costs
    no ``__init__``.
    """
    kinematics = None    # (R (nf, 3, 3), P (nf, 3), S (nQ, 6))
    lagrangian = None    # LagrangianTerms
    applied_forces = None   # AppliedForces: their first-order part alone
    applied_jacobians = None   # AppliedJacobians: its q and dq derivatives
    applied = None       # AppliedTerms of the non-kernel potentials and all forces
    dynamics = None      # (ddq_d (nQd,), lambda (nc,))
    dynamics1 = None     # first derivatives of the dynamics
    third = None         # third partials of L
    force2 = None        # second derivatives of the forces
    dynamics2 = None     # second derivatives of the dynamics


class Data:
    """State (nQ configs, nu inputs) and the cache of everything computed from it.

    Attributes
    ----------
    q, dq, ddq : (nQ,) float arrays [m, rad; m/s, rad/s; m/s^2, rad/s^2], config order
        (dynamic configs first, then kinematic).
    u : (nu,) float array of inputs [N, N m].
    t : float, time [s].
    cache : :class:`Cache`, replaced by :meth:`invalidate`.

    Writing into the arrays directly is allowed (it is what the hot path does), but must be
    followed by :meth:`invalidate`; :meth:`set` does both.
    """
    __slots__ = ('q', 'dq', 'ddq', 'u', 't', 'cache')

    def __init__(self, nq, nu):
        self.q = np.zeros(nq)
        self.dq = np.zeros(nq)
        self.ddq = np.zeros(nq)
        self.u = np.zeros(nu)
        self.t = 0.0
        self.cache = Cache()

    def invalidate(self):
        """Forget every cached result (call after writing into the arrays)."""
        self.cache = Cache()

    def set(self, q=None, dq=None, u=None, t=None):
        """Copy the given arrays in (trusted: right sizes, finite; no checks) and forget
        the cached results.  ``q``, ``dq`` (nQ,), ``u`` (nu,), ``t`` [s]."""
        if q is not None:
            self.q[:] = q
        if dq is not None:
            self.dq[:] = dq
        if u is not None:
            self.u[:] = u
        if t is not None:
            self.t = t
        self.cache = Cache()

    def share(self, q, dq, u):
        """Use the given (nQ,), (nQ,), (nu,) arrays as q, dq and u from now on (their
        current values are copied in first).  A compiled integrator shares its output
        buffers this way, so putting the System at a step's midpoint copies nothing."""
        q[:], dq[:], u[:] = self.q, self.dq, self.u
        self.q, self.dq, self.u = q, dq, u
        self.cache = Cache()

    def copy(self):
        """An independent Data with the same state (the cache is not copied)."""
        other = Data.__new__(Data)
        other.q, other.dq, other.ddq = self.q.copy(), self.dq.copy(), self.ddq.copy()
        other.u, other.t = self.u.copy(), self.t
        other.cache = Cache()
        return other

    def __repr__(self):
        return '<Data t=%g q=%s dq=%s u=%s>' % (self.t, self.q, self.dq, self.u)


class StateMemo:
    """A dict of results for a System's current state that empties itself whenever the
    state or the structure changes (it compares the identity of ``system.data.cache``, which
    is replaced on every change).  For components that memoise derived quantities (tape
    measure lengths, frame poses, constraint derivatives) between calls at one state.
    """

    def __init__(self, system):
        self._system = system
        self._key = _dead
        self._memo = {}

    def get(self):
        """The dict for the current state (empty after any change)."""
        cache = self._system.data.cache
        # a weak reference: a memo must not keep an old state's results alive (and a dead
        # reference never matches, so a new Cache at a recycled address is not mistaken
        # for the old one)
        if self._key() is not cache:
            self._key = weakref.ref(cache)
            self._memo = {}
        return self._memo

    def clear(self):
        """Forget everything (e.g. after a parameter of the owner changed)."""
        self._key = _dead
        self._memo = {}


def _dead():
    """Stands for a dead weak reference."""
    return None
