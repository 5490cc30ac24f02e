"""World vectors attached to frames, stacked for all the built-in components of a System.

Constraints, springs, dampers and wrenches need the world origin of some frames (and some
frame-fixed directions) with their first and second config derivatives, and many of them
share frames.  :func:`frame_vectors` gives, per System, one registry of those vectors:
each component asks once per structure for a slot (:meth:`FrameVectors.slot`), and the
vectors of every slot are computed together, once per state, by one compiled kernel
(:func:`ros_vi.mechanics.kernel.frame_vectors`; the derivative formulas are those of
:mod:`ros_vi.mechanics.constraints.point`).  The kernel runs on the joint coordinates (the
twists ``S`` have a row per coordinate; see :mod:`ros_vi.mechanics.model`) and the
derivatives are folded onto the configs when the System has mimic frames, so every
consumer sees configs only.

Example
-------
>>> fv = frame_vectors(system)
>>> i = fv.slot(system.get_frame('tip'))            # the origin of frame 'tip'
>>> X, D1, D2 = fv.get(2)
>>> X[i], D1[i], D2[i]                              # (3,) [m], (nQ, 3), (nQ, nQ, 3)
"""
import weakref

import numpy as np

from . import kernel
from .data import StateMemo

_REGISTRIES = weakref.WeakKeyDictionary()


class OrderHint:
    """The derivative order to compute at a new state: the highest asked at either of the
    two states before it.  The integrator asks for first derivatives at every Newton
    iterate and for second derivatives at all but the last, so at most states one pass
    computes both (a second pass costs more than the second order alone)."""

    __slots__ = ('_state', '_asked', '_before')

    def __init__(self):
        self._state = None
        self._asked = 0
        self._before = (0, 0)

    def order(self, state, order):
        """Note that ``order`` is asked at ``state`` (the current StateMemo dict) and return
        the order to compute there (at least ``order``)."""
        if state is not self._state:
            self._before = (self._before[1], self._asked)
            self._state = state
            self._asked = 0
        if order > self._asked:
            self._asked = order
        return max(order, self._before[0], self._before[1])


def frame_vectors(system):
    """The :class:`FrameVectors` registry of ``system`` (one per System)."""
    registry = _REGISTRIES.get(system)
    if registry is None:
        registry = _REGISTRIES[system] = FrameVectors(system)
    return registry


class FrameVectors:
    """Registered frame origins / frame-fixed directions of one System and their stacked
    derivatives at its current state.

    Slots hold for one structure and one set of parameters (the registry empties itself
    when the Model is rebuilt or ``System.parameter_version`` changes, and components ask
    for their slots again); results hold for one state.
    """

    def __init__(self, system):
        self._system = system
        self._model = None
        self._version = None
        self._slots = {}
        self._items = []          # (frame index, direction (3,) or None)
        self._arrays = None       # kernel arguments for the current items
        self._memo = StateMemo(system)
        self._hint = OrderHint()

    def _current_model(self):
        system = self._system
        model = system.model
        if model is not self._model or system.parameter_version != self._version:
            # a new structure renumbers frames; new parameters may change directions
            # (plane normals): the components ask for their slots again
            self._model = model
            self._version = system.parameter_version
            self._slots = {}
            self._items = []
            self._arrays = None
            self._memo.clear()
        return model

    def slot(self, frame, direction=None):
        """Row of the origin of ``frame`` (``direction`` None) or of the frame-fixed
        ``direction`` (3,) in the arrays of :meth:`get`, for the current structure."""
        self._current_model()
        i = frame.index
        key = (i, None) if direction is None else (i, np.asarray(direction, float).tobytes())
        s = self._slots.get(key)
        if s is None:
            s = self._slots[key] = len(self._items)
            self._items.append((i, None if direction is None
                                else np.array(direction, dtype=float).reshape(3)))
            self._arrays = None
        return s

    def _kernel_arrays(self):
        if self._arrays is None:
            from .constraints.point import _chain      # the one rule for a frame's configs
            model = self._model
            chains = [_chain(model, i) for i, _ in self._items]
            ptr = np.zeros(len(chains) + 1, dtype=np.int64)
            ptr[1:] = np.cumsum([c.size for c in chains])
            cfg = (np.concatenate(chains).astype(np.int64) if chains
                   else np.zeros(0, dtype=np.int64))
            frames = np.array([i for i, _ in self._items], dtype=np.int64)
            dirs = np.array([np.zeros(3) if d is None else d for _, d in self._items],
                            dtype=float).reshape(-1, 3)
            point = np.array([d is None for _, d in self._items], dtype=np.bool_)
            self._arrays = (frames, dirs, point, ptr, cfg)
        return self._arrays

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
        self._current_model()
        memo = self._memo.get()
        want = self._hint.order(memo, order)
        have = memo.get('x')
        k = len(self._items)
        if have is None or have[0] < order or have[1] != k:
            R, P, S = self._system._kinematics()
            order = max(want, 1, 0 if have is None else have[0])
            order = min(order, 2)
            X, D1, D2 = kernel.frame_vectors(R, P, S, *self._kernel_arrays(), order)
            model = self._model
            if model.has_mimic:
                # the kernel runs on joint coordinates: fold onto the configs
                D1 = model.fold(D1, (1,))
                if order >= 2:
                    D2 = model.fold(D2, (1, 2))
            have = memo['x'] = (order, k, (X, D1, D2))
        return have[2]


_BATCHES = weakref.WeakKeyDictionary()


def batch_of(system, cls):
    """The :class:`ComponentBatch` of the components of exactly type ``cls`` (subclasses
    keep their own per-object methods) in ``system`` (one per System and class)."""
    batches = _BATCHES.get(system)
    if batches is None:
        batches = _BATCHES[system] = {}
    batch = batches.get(cls)
    if batch is None:
        batch = batches[cls] = ComponentBatch(system, cls)
    return batch


class ComponentBatch:
    """All built-in components of one class in a System, evaluated together.

    The class provides ``_stacked_compute(batch, order)`` (every member's arrays at the
    current state, to at least ``order``) and ``_stacked_sums(batch, part)`` (their sum
    for ``part`` 'energy', 'first' or 'jacobian', or None to fall back to per-object
    evaluation).
    ``members`` (the System's components of exactly that class, in System order:
    potentials, forces, then constraints; brought up to date by ``get`` and ``row``) and
    ``row(component)`` hold for one structure; ``get(order)`` is computed once per state
    (again when a higher order is asked).  ``slots`` is free for the class to keep arrays
    fixed by the structure and the parameters (emptied when either changes, so frame-vector
    slots and parameter values are asked for again).
    """

    def __init__(self, system, cls):
        self._system = system
        self._cls = cls
        self._model = None
        self._version = None
        self.members = ()
        self.slots = None
        self._rows = {}
        self._memo = StateMemo(system)
        self._hint = OrderHint()

    @property
    def system(self):
        """The System the members belong to (read only)."""
        return self._system

    def _structure(self):
        system = self._system
        model = system.model
        if system.parameter_version != self._version:
            self._version = system.parameter_version
            self.slots = None
            self._memo.clear()
        if model is not self._model:
            self._model = model
            self.members = tuple(c for c in system.potentials + system.forces
                                 + system.constraints if type(c) is self._cls)
            self._rows = {id(c): r for r, c in enumerate(self.members)}
            self.slots = None
            self._memo.clear()

    def row(self, component):
        """Index of ``component`` in ``members`` (None if it is not a member)."""
        self._structure()
        return self._rows.get(id(component))

    def get(self, order):
        """``_stacked_compute(self, order')`` at the current state, ``order' >= order``."""
        # a state memo that is still valid implies an unchanged structure (every structure
        # change replaces the state's cache)
        memo = self._memo.get()
        have = memo.get('out')
        if have is None or have[0] < order:
            system = self._system
            if system.model is not self._model or system.parameter_version != self._version:
                self._structure()
                memo = self._memo.get()
            order = self._hint.order(memo, order)
            have = memo['out'] = (order, self._cls._stacked_compute(self, order))
        else:
            self._hint.order(memo, order)
        return have[1]

    def sums(self, part):
        """The members' summed values for ``part`` ('energy', 'first' or 'jacobian'), or
        None."""
        return self._cls._stacked_sums(self, part)
