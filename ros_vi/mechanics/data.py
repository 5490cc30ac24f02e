"""Data: one state of a compiled :class:`~ros_vi.mechanics.model.Model` and its caches.

A :class:`Model` is the structure, built once; a :class:`Data` is what changes: the
configuration, velocity, acceleration, inputs and time, and the results computed for them.
Several Data objects of one Model can be used side by side (a linearisation next to a
running simulation, a batch of rollouts, two threads each evaluating its own state): nothing
in a Data refers to another, and everything computed for a state -- the kernel terms, the
stacked frame vectors and component batches, every component's memoised derivatives
(:class:`StateMemo`) -- is kept in the Data of that state, never in the components or in
module globals.

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
    components = None    # {owner: (tag, dict)}: results of components (state_results;
                         # a StateMemo keeps (version, generation, dict))


class Data:
    """State (nQ configs, nu inputs) and the cache of everything computed from it.

    Attributes
    ----------
    q, dq, ddq : (nQ,) float arrays [m, rad; m/s, rad/s; m/s^2, rad/s^2], config order
        (dynamic configs first, then kinematic).
    u : (nu,) float array of inputs [N, N m].
    t : float, time [s].
    cache : :class:`Cache`, replaced by :meth:`invalidate`.
    hints : dict, {owner: :class:`OrderHint`}: which derivative order the stacked
        evaluations compute at this Data's next states (kept across states).

    Writing into the arrays directly is allowed (it is what the hot path does), but must be
    followed by :meth:`invalidate`; :meth:`set` does both.
    """
    __slots__ = ('q', 'dq', 'ddq', 'u', 't', 'cache', 'hints')

    def __init__(self, nq, nu):
        self.q = np.zeros(nq)
        self.dq = np.zeros(nq)
        self.ddq = np.zeros(nq)
        self.u = np.zeros(nu)
        self.t = 0.0
        self.cache = Cache()
        self.hints = {}

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
        other.hints = {}
        return other

    def __getstate__(self):
        # a copy (deepcopy, pickle) has the state, not the results computed for it
        return self.q, self.dq, self.ddq, self.u, self.t

    def __setstate__(self, state):
        self.q, self.dq, self.ddq, self.u, self.t = state
        self.cache = Cache()
        self.hints = {}

    def order_hint(self, owner):
        """The :class:`OrderHint` of ``owner`` (a stacked evaluation) for this Data."""
        hint = self.hints.get(owner)
        if hint is None:
            hint = self.hints[owner] = OrderHint()
        return hint

    def __repr__(self):
        return '<Data t=%g q=%s dq=%s u=%s>' % (self.t, self.q, self.dq, self.u)


def _dead_reference():
    """Stands for a weak reference to nothing."""
    return None


#: :attr:`StateMemo._last` before any state: matches no Cache
_NO_STATE = (_dead_reference, None, None, None)


def state_results(data, owner, tag):
    """The dict in which ``owner`` keeps its results for the current state of ``data``.

    It lives in ``data.cache`` (so it is emptied by every change of the state, and two Data
    never share one) and is replaced when ``tag`` differs from the one it was made for
    (owners tag with the parameters they were computed for)."""
    cache = data.cache
    table = cache.components
    if table is None:
        table = cache.components = {}
    entry = table.get(owner)
    if entry is None or entry[0] != tag:
        entry = table[owner] = (tag, {})
    return entry[1]


class OrderHint:
    """The derivative order to compute at a new state: the highest asked at either of the
    two states before it.  The integrator asks for first derivatives at every Newton
    iterate and for second derivatives at all but the last, so at most states one pass
    computes both (a second pass costs more than the second order alone).  One per Data
    and stacked evaluation (:meth:`Data.order_hint`): it follows that Data's states."""

    __slots__ = ('_state', '_asked', '_before')

    def __init__(self):
        self._state = None
        self._asked = 0
        self._before = (0, 0)

    def order(self, state, order):
        """Note that ``order`` is asked at ``state`` (the owner's results dict for the
        current state, :func:`state_results`) and return the order to compute there (at
        least ``order``)."""
        if state is not self._state:
            self._before = (self._before[1], self._asked)
            self._state = state
            self._asked = 0
        if order > self._asked:
            self._asked = order
        return max(order, self._before[0], self._before[1])


class StateMemo:
    """A component's results at the state its System evaluates (``system.data``: its own
    Data, or the calling thread's :meth:`~ros_vi.mechanics.system.System.evaluate_at`
    Data), kept in that Data (:func:`state_results`): emptied whenever the state, the
    structure or a parameter changes.  For components that memoise derived quantities (tape
    measure lengths, frame poses, constraint derivatives) between calls at one state.
    """

    __slots__ = ('_system', '_generation', '_last')

    def __init__(self, system):
        self._system = system
        self._generation = 0
        self._last = _NO_STATE

    def get(self):
        """The dict for the current state (empty after any change)."""
        # the frame API calls this once per derivative entry (millions of times in a user
        # force's loop): the last state's dict is remembered (one attribute, read and
        # written whole, so threads on other Data only miss it), else state_results'
        # lookup, inlined without its tag tuple
        system = self._system
        cache = system.data.cache
        version = system.parameter_version
        last = self._last
        if last[0]() is cache and last[1] == version and last[2] == self._generation:
            return last[3]
        table = cache.components
        if table is None:
            table = cache.components = {}
        entry = table.get(self)
        if entry is None or entry[0] != version or entry[1] != self._generation:
            entry = table[self] = (version, self._generation, {})
        # a weak reference: the memo must not keep an old state's results alive
        self._last = (weakref.ref(cache), version, self._generation, entry[2])
        return entry[2]

    def clear(self):
        """Forget everything (e.g. after a parameter of the owner changed)."""
        self._generation += 1

    def __getstate__(self):
        # a copy (pickle, deepcopy) starts with nothing remembered: weak references do not
        # copy, and the results live in the Data anyway
        return self._system, self._generation

    def __setstate__(self, state):
        self._system, self._generation = state
        self._last = _NO_STATE
