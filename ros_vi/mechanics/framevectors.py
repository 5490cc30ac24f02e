"""World vectors attached to frames, and the stacked evaluation of a System's components.

Constraints, springs, dampers, wrenches and the frame API need the world origin of some
frames (and some frame-fixed directions) with their config derivatives, and many of them
share frames.  The derivatives have one definition, the compiled kernel
:func:`ros_vi.mechanics.kernel.frame_vectors` (orders 0 to 2; :func:`vector_derivatives`
adds the third order from its second, nothing more): with ``S_a = (w_a, v_a)`` the world
twist of joint coordinate ``a`` and ``x`` a point (or a direction ``R n``) fixed in a frame,
for coordinates ``a, b, c`` that move the frame, ordered shallow to deep (``o <= m <= d``)::

    dx/dq_a            = w_a x x (+ v_a for a point)          =: D1_a
    d2x/dq_o dq_m      = w_o x D1_m
    d3x/dq_o dq_m dq_d = w_o x (w_m x D1_d)

and zero whenever a coordinate does not move the frame (all coordinates that move one frame
lie on its chain to the world, :meth:`~ros_vi.mechanics.model.Model.frame_chain`, so their
depths are distinct and the order is well defined).  The kernel runs on the joint
coordinates (the twists ``S`` have a row per coordinate; see :mod:`ros_vi.mechanics.model`)
and the derivatives are folded onto the configs when the System has mimic frames, so every
consumer sees configs only.

:func:`frame_vectors` gives, per System, one registry of those vectors: each component asks
once per structure for a slot (:meth:`FrameVectors.slot`), and the vectors of every slot are
computed together, once per state, by one kernel call.  :class:`ComponentBatch` evaluates
all the System's components of one built-in class at once from them.

What is kept where
------------------
The slot tables, the batches' members and parameter arrays and the grouping of the System's
components (:func:`term_groups`, :func:`constraint_groups`) depend on the structure and the
parameters only: they belong to the System (:class:`Stacking`, built on first use, under a
lock, so threads evaluating at once see one table).  Results for a state (the stacked
vectors, each batch's arrays) and the derivative order to compute next
(:class:`~ros_vi.mechanics.data.OrderHint`) are kept in the Data evaluated
(:func:`~ros_vi.mechanics.data.state_results`): two Data of one System evaluated on two
threads (each in its own :meth:`~ros_vi.mechanics.system.System.evaluate_at` block) share
no scratch.

Example
-------
>>> fv = frame_vectors(system)
>>> i = fv.slot(system.get_frame('tip'))            # the origin of frame 'tip'
>>> X, D1, D2 = fv.get(2)
>>> X[i], D1[i], D2[i]                              # (3,) [m], (nQ, 3), (nQ, nQ, 3)
"""
import threading

import numpy as np

from . import kernel
from .data import state_results


def _cross(a, b):
    """Cross product over the last axis with broadcasting (np.cross is slow for small
    arrays); the same arithmetic as :func:`ros_vi.mechanics.kernel.cross`."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


class FrameVectorSet:
    """k vectors fixed in one frame, described once (their arrays are what the kernel
    takes, so a caller evaluating the same set at many states builds them once).

    ``directions``: per vector, None for the frame origin [m] or a (3,) direction in frame
    coordinates (world value ``R n``).  Attributes: ``count`` k; ``directions`` (k, 3)
    (zero rows for origins); ``origin`` (k,) bool."""

    __slots__ = ('count', 'directions', 'origin')

    def __init__(self, directions):
        directions = tuple(directions)
        self.count = len(directions)
        self.directions = np.array([np.zeros(3) if d is None else d for d in directions],
                                   dtype=float).reshape(self.count, 3)
        self.origin = np.array([d is None for d in directions], dtype=np.bool_)


def vector_derivatives(model, kinematics, frame, order, directions=(None,)):
    """World vectors fixed in frame ``frame`` (an index) and their config derivatives up to
    ``order`` (0 to 3).

    ``kinematics``: ``(R, P, S)`` of the state (:func:`ros_vi.mechanics.dynamics.kinematics`);
    ``directions``: a :class:`FrameVectorSet`, or per vector None for the frame origin [m]
    or a (3,) direction in frame coordinates (world value ``R n``).  Returns ``[X (k, 3),
    D1 (k, nQ, 3), D2 (k, nQ, nQ, 3), D3 (k, nQ, nQ, nQ, 3)]`` truncated after ``order`` (k
    vectors, derivatives over configs).  Orders 0 to 2 are the kernel's
    (:func:`ros_vi.mechanics.kernel.frame_vectors`); the third is ``w_o x`` the second (the
    module docstring).
    """
    R, P, S = kinematics
    vectors = directions if isinstance(directions, FrameVectorSet) else \
        FrameVectorSet(directions)
    chain = model.frame_chain(frame)
    k, n = vectors.count, chain.size
    chains = np.empty((k, n), dtype=np.int64)
    chains[:] = chain                       # every vector moves with the same chain
    X, D1, D2 = kernel.frame_vectors(
        R, P, S, np.full(k, frame, dtype=np.int64), vectors.directions, vectors.origin,
        np.arange(0, (k + 1) * n, n, dtype=np.int64) if n else np.zeros(k + 1, np.int64),
        chains.reshape(-1), 2 if order >= 2 else 1)
    out = [X, model.fold(D1, (1,))]
    if order >= 2:
        out.append(model.fold(D2, (1, 2)))
    if order >= 3:
        nt = S.shape[0]
        D3 = np.zeros((k, nt, nt, nt, 3))
        if n:
            # T[a, b, c] = w_a x D2[b, c] on the chain; D3[a, b, c] = T[sorted(a, b, c)]
            T = _cross(S[chain, :3][None, :, None, None, :],
                       D2[:, chain][:, :, chain][:, None, :, :, :])
            grid = np.stack(np.meshgrid(np.arange(n), np.arange(n), np.arange(n),
                                        indexing='ij'), axis=-1)
            srt = np.sort(grid, axis=-1)
            D3[np.ix_(np.arange(k), chain, chain, chain)] = T[:, srt[..., 0], srt[..., 1],
                                                              srt[..., 2]]
        out.append(model.fold(D3, (1, 2, 3)))
    return out[:order + 1]


def _chain_derivatives(system, frame, order, direction=None):
    """World vector attached to ``frame`` at the System's state and its derivatives up to
    ``order`` (<= 3): ``[x (3,), D1 (nQ, 3), D2 (nQ, nQ, 3), D3 (nQ, nQ, nQ, 3)]``
    truncated after ``order``; ``direction`` None for the origin, else (3,) in frame
    coordinates (:func:`vector_derivatives` for one vector)."""
    return [a[0] for a in vector_derivatives(system.model, system._kinematics(), frame.index,
                                             order, (direction,))]


class Stacking:
    """The System's structure for stacked evaluation: its :class:`FrameVectors` registry,
    one :class:`ComponentBatch` per built-in class and the grouping of its components.
    One per System (``System._stacking``); its tables are rebuilt after a structure or
    parameter change, on first use, under ``lock``."""

    def __init__(self, system):
        self.lock = threading.RLock()
        self.vectors = FrameVectors(system, self.lock)
        self._system = system
        self._batches = {}
        self._groups = None       # (model, potentials, forces, constraints)

    def batch(self, cls):
        """The :class:`ComponentBatch` of the components of exactly type ``cls``."""
        batch = self._batches.get(cls)
        if batch is None:
            with self.lock:
                batch = self._batches.get(cls)
                if batch is None:
                    batch = self._batches[cls] = ComponentBatch(self._system, cls, self.lock)
        return batch

    def groups(self):
        """``(potentials, forces, constraints)`` for the current structure, see
        :func:`term_groups` and :func:`constraint_groups`."""
        system = self._system
        model = system.model
        have = self._groups
        if have is None or have[0] is not model:
            groups = []
            for items in (system.general_potentials, system.forces):
                out, seen = [], set()
                for obj in items:
                    cls = type(obj)
                    if cls.__dict__.get('_stacked_sums') is None:
                        out.append(obj)         # a subclass keeps per-object evaluation
                    elif cls not in seen:
                        seen.add(cls)
                        out.append(self.batch(cls))
                groups.append(out)
            constraints, rows = [], {}
            for i, con in enumerate(system.constraints):
                cls = type(con)
                if cls.__dict__.get('_stacked_constraint'):
                    if cls not in rows:
                        rows[cls] = []
                        constraints.append((self.batch(cls), rows[cls]))
                    rows[cls].append(i)
                else:
                    constraints.append((con, i))
            constraints = [(e, np.array(r, dtype=np.int64) if isinstance(r, list) else r)
                           for e, r in constraints]
            have = self._groups = (model, groups[0], groups[1], constraints)
        return have[1:]


def frame_vectors(system):
    """The :class:`FrameVectors` registry of ``system`` (one per System)."""
    return system._stacking.vectors


def batch_of(system, cls):
    """The :class:`ComponentBatch` of the components of exactly type ``cls`` (subclasses
    keep their own per-object methods) in ``system`` (one per System and class)."""
    return system._stacking.batch(cls)


def term_groups(system):
    """``(potentials, forces)`` for the current structure: each a list whose entries are a
    :class:`ComponentBatch` (all the System's members of one built-in class, summed at
    once) or a single component evaluated by its own array methods, in System order
    (potentials: the general ones, ``system.general_potentials``)."""
    return system._stacking.groups()[:2]


def constraint_groups(system):
    """``[(entry, rows)]`` covering every constraint once, an entry being a
    :class:`ComponentBatch` of a built-in class evaluated together (``rows`` int array of
    its members' indices) or a single constraint (``rows`` its index)."""
    return system._stacking.groups()[2]


class FrameVectors:
    """Registered frame origins / frame-fixed directions of one System and their stacked
    derivatives at the state it evaluates.

    Slots hold for one structure and one set of parameters (the registry empties itself
    when the Model is rebuilt or ``System.parameter_version`` changes, and components ask
    for their slots again); results hold for one state and are kept in its Data.
    """

    def __init__(self, system, lock):
        self._system = system
        self._lock = lock
        self._model = None
        self._version = None
        self._slots = {}
        self._items = []          # (frame index, direction (3,) or None)
        self._arrays = None       # kernel arguments for the current items

    def _current_model(self):
        system = self._system
        model = system.model
        if model is not self._model or system.parameter_version != self._version:
            with self._lock:
                version = system.parameter_version
                if model is not self._model or version != self._version:
                    # a new structure renumbers frames; new parameters may change
                    # directions (plane normals): the components ask for their slots again
                    self._slots = {}
                    self._items = []
                    self._arrays = None
                    self._version = version
                    self._model = model
        return model

    def slot(self, frame, direction=None):
        """Row of the origin of ``frame`` (``direction`` None) or of the frame-fixed
        ``direction`` (3,) in the arrays of :meth:`get`, for the current structure."""
        self._current_model()
        i = frame.index
        key = (i, None) if direction is None else (i, np.asarray(direction, float).tobytes())
        s = self._slots.get(key)
        if s is None:
            with self._lock:
                s = self._slots.get(key)
                if s is None:
                    s = len(self._items)
                    self._items.append((i, None if direction is None
                                        else np.array(direction, dtype=float).reshape(3)))
                    self._slots[key] = s
                    self._arrays = None
        return s

    def _kernel_arrays(self):
        """The kernel's item arguments for the slots registered so far (a snapshot: a
        registration afterwards makes a new one)."""
        arrays = self._arrays
        if arrays is None:
            with self._lock:
                arrays = self._arrays
                if arrays is None:
                    model = self._model
                    chains = [model.frame_chain(i) for i, _ in self._items]
                    ptr = np.zeros(len(chains) + 1, dtype=np.int64)
                    ptr[1:] = np.cumsum([c.size for c in chains])
                    cfg = (np.concatenate(chains).astype(np.int64) if chains
                           else np.zeros(0, dtype=np.int64))
                    frames = np.array([i for i, _ in self._items], dtype=np.int64)
                    dirs = np.array([np.zeros(3) if d is None else d for _, d in self._items],
                                    dtype=float).reshape(-1, 3)
                    point = np.array([d is None for _, d in self._items], dtype=np.bool_)
                    arrays = self._arrays = (frames, dirs, point, ptr, cfg)
        return arrays

    def item(self, slot):
        """``(frame index, direction (3,) or None)``: the vector of ``slot``."""
        self._current_model()
        return self._items[slot]

    def chain(self, slot):
        """The configs (int array, each once) that move the vector of ``slot``; its
        derivatives in every other config are zero."""
        model = self._current_model()
        _, _, _, ptr, cfg = self._kernel_arrays()
        thetas = cfg[ptr[slot]:ptr[slot + 1]]
        if not model.has_mimic:
            return thetas                     # joint coordinates are the configs
        # a mimic frame's coordinate is moved by its leader
        nq = model.nq
        return np.unique(np.where(thetas < nq, thetas,
                                  model.mimic_leader[np.maximum(thetas - nq, 0)]))

    def get(self, order):
        """``(X (k, 3), D1 (k, nQ, 3), D2 (k, nQ, nQ, 3))`` of every slot at the current
        state, computed to at least ``order`` (D2 is empty below order 2).  The arrays are
        shared: read them, never write into them."""
        model = self._current_model()
        arrays = self._kernel_arrays()
        system = self._system
        data = system.data
        memo = state_results(data, self, self._version)
        want = data.order_hint(self).order(memo, order)
        have = memo.get('x')
        if have is None or have[0] < order or have[1] is not arrays:
            R, P, S = system._kinematics()
            order = max(want, 1, 0 if have is None or have[1] is not arrays else have[0])
            order = min(order, 2)
            X, D1, D2 = kernel.frame_vectors(R, P, S, *arrays, order)
            if model.has_mimic:
                # the kernel runs on joint coordinates: fold onto the configs
                D1 = model.fold(D1, (1,))
                if order >= 2:
                    D2 = model.fold(D2, (1, 2))
            have = memo['x'] = (order, arrays, (X, D1, D2))
        return have[2]

    def vector(self, slot, order):
        """``[x (3,), D1 (nQ, 3), D2 (nQ, nQ, 3), D3 (nQ, nQ, nQ, 3)][:order + 1]`` of one
        slot at the current state: rows of :meth:`get` up to order 2, the third order from
        :func:`vector_derivatives` (computed once per state and slot).  Shared arrays:
        read only."""
        if order <= 2:
            X, D1, D2 = self.get(order)
            return [X[slot], D1[slot], D2[slot]][:order + 1]
        model = self._current_model()
        system = self._system
        memo = state_results(system.data, self, self._version)
        key = ('third', slot)
        have = memo.get(key)
        if have is None:
            frame, direction = self._items[slot]
            have = memo[key] = [a[0] for a in vector_derivatives(
                model, system._kinematics(), frame, order, (direction,))]
        return have


class ComponentBatch:
    """All built-in components of one class in a System, evaluated together.

    The class provides ``_stacked_compute(batch, order)`` (every member's arrays at the
    current state, to at least ``order``) and ``_stacked_sums(batch, part)`` (their sum
    for ``part`` 'energy', 'first' or 'jacobian', or None to fall back to per-object
    evaluation).
    ``members`` (the System's components of exactly that class, in System order:
    potentials, forces, then constraints; brought up to date by ``get`` and ``row``) and
    ``row(component)`` hold for one structure; ``get(order)`` is computed once per state
    (again when a higher order is asked) and kept in the state's Data.  ``slots`` is free
    for the class to keep arrays fixed by the structure and the parameters (emptied when
    either changes, so frame-vector slots and parameter values are asked for again).
    """

    def __init__(self, system, cls, lock):
        self._system = system
        self._cls = cls
        self._lock = lock
        self._model = None
        self._version = None
        self.members = ()
        self.slots = None
        self._rows = {}

    @property
    def system(self):
        """The System the members belong to (read only)."""
        return self._system

    def _structure(self):
        system = self._system
        model = system.model
        version = system.parameter_version
        if model is self._model and version == self._version:
            return
        with self._lock:
            if version != self._version:
                self.slots = None
            if model is not self._model:
                self.members = tuple(c for c in system.potentials + system.forces
                                     + system.constraints if type(c) is self._cls)
                self._rows = {id(c): r for r, c in enumerate(self.members)}
                self.slots = None
                self._model = model
            self._version = version

    def row(self, component):
        """Index of ``component`` in ``members`` (None if it is not a member)."""
        self._structure()
        return self._rows.get(id(component))

    def get(self, order):
        """``_stacked_compute(self, order')`` at the current state, ``order' >= order``."""
        self._structure()
        data = self._system.data
        memo = state_results(data, self, self._version)
        have = memo.get('out')
        hint = data.order_hint(self)
        if have is None or have[0] < order:
            order = hint.order(memo, order)
            have = memo['out'] = (order, self._cls._stacked_compute(self, order))
        else:
            hint.order(memo, order)
        return have[1]

    def sums(self, part):
        """The members' summed values for ``part`` ('energy', 'first' or 'jacobian'), or
        None."""
        return self._cls._stacked_sums(self, part)
