"""Point-to-point constraints (trep's ``constraints.PointToPoint1D/2D/3D``).

Also holds the vectorised world-vector derivative machinery shared by every built-in
constraint (``Distance``, ``PointOnPlane``).

Derivatives of frame-attached world vectors
-------------------------------------------
With ``S_a = (w_a, v_a)`` the world twist of config ``a`` (``System._kinematics()``), a point
``p`` fixed in a frame and a direction ``n`` fixed in a frame (world value ``x = R n``) obey,
for configs ``a, b, c`` that move the frame, ordered shallow to deep (``o <= m <= d``)::

    dx/dq_a            = w_a x x (+ v_a for a point)          =: D1_a
    d2x/dq_o dq_m      = w_o x D1_m
    d3x/dq_o dq_m dq_d = w_o x (w_m x D1_d)

and zero whenever a config does not move the frame.  All configs that move one frame lie
on its chain to the world, so their depths are distinct and the order is well defined.
With mimic frames these formulas run over joint coordinates (``S`` has one row per joint
coordinate) and are then folded onto the configs (``Model.fold``).
"""
import itertools
import weakref

import numpy as np

from .._derivcheck import abstract
from ..constraint import Constraint
from ..data import StateMemo
from ..frame import Frame, resolve_frame
from .. import kernel
from ..framevectors import batch_of, frame_vectors

_AXES = {'x': 0, 'y': 1, 'z': 2}
_PLANES = {'xy': (0, 1), 'xz': (0, 2), 'yz': (1, 2)}


# ---------------------------------------------------------------------- shared helpers
def _cross(a, b):
    """Cross product over the last axis with broadcasting (np.cross is slow for small arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


_CHAINS = weakref.WeakKeyDictionary()


def _chain(model, i):
    """Joint coordinates that move frame ``i``, shallow to deep (cached per Model)."""
    chains = _CHAINS.get(model)
    if chains is None:
        chains = _CHAINS[model] = {}
    chain = chains.get(i)
    if chain is None:
        anc = np.nonzero(model.frame_anc[i])[0]
        chain = chains[i] = anc[np.argsort(model.cdepth[anc], kind='stable')]
    return chain


def _chain_derivatives(system, frame, order, direction=None):
    """World vector attached to ``frame`` and its q-derivatives up to ``order`` (<= 3).

    ``direction`` None: the frame origin p (3,) [m]; else the (3,) direction given in frame
    coordinates, mapped to world coordinates R n.  Returns a list ``[x (3,), D1 (nQ, 3),
    D2 (nQ, nQ, 3), D3 (nQ, nQ, nQ, 3)]`` truncated after ``order``.
    """
    R, P, S = system._kinematics()
    model = system.model
    nq = model.nt           # over joint coordinates; folded onto configs at the end
    i = frame.index
    if direction is None:
        x = P[i].copy()
    else:
        x = R[i] @ direction
    out = [x]
    if order < 1:
        return out
    chain = _chain(model, i)
    k = chain.size
    W = S[chain, :3]
    d1c = _cross(W, x)
    if direction is None:
        d1c = d1c + S[chain, 3:]
    D1 = np.zeros((nq, 3))
    D1[chain] = d1c
    out.append(model.fold(D1))
    if order < 2:
        return out
    # C[a, b] = w_a x D1_b  (chain positions); D2[a, b] = C[min, max]
    C = _cross(W[:, None, :], d1c[None, :, :]) if k else np.zeros((0, 0, 3))
    upper = np.triu(np.ones((k, k), dtype=bool))
    d2c = np.where(upper[:, :, None], C, C.transpose(1, 0, 2))
    D2 = np.zeros((nq, nq, 3))
    D2[np.ix_(chain, chain)] = d2c
    out.append(model.fold(D2, (0, 1)))
    if order < 3:
        return out
    # T[a, b, c] = w_a x C[b, c]; D3[a, b, c] = T[sorted(a, b, c)]
    D3 = np.zeros((nq, nq, nq, 3))
    if k:
        T = _cross(W[:, None, None, :], C[None, :, :, :])
        grid = np.stack(np.meshgrid(np.arange(k), np.arange(k), np.arange(k),
                                    indexing='ij'), axis=-1)
        srt = np.sort(grid, axis=-1)
        d3c = T[srt[..., 0], srt[..., 1], srt[..., 2]]
        D3[np.ix_(chain, chain, chain)] = d3c
    out.append(model.fold(D3, (0, 1, 2)))
    return out


def _fourth(frame, configs, direction=None):
    """d^4 x / dq_a dq_b dq_c dq_d (3,) for the origin (or a frame-fixed direction)."""
    g4 = frame.g_dqdqdqdq(*configs)
    if direction is None:
        return g4[:3, 3].copy()
    return g4[:3, :3] @ direction


class _VectorQuantity:
    """Derivative memo (one state at a time).

    Results live in a :class:`StateMemo` (emptied on every state or structure change), so
    they are computed once per state.
    One memo per System holds frame-vector derivatives shared by all its constraints (two
    PointToPoint axes of the same frames compute the frame derivatives once); each
    constraint keeps its own memo for its h derivatives.
    """

    def __init__(self, system):
        self.state = StateMemo(system)

    def get(self, tag, order, compute):
        memo = self.state.get()
        have = memo.get(tag)
        if have is None or len(have) <= order:
            have = memo[tag] = compute(order)
        return have


def bilinear(f, g, order):
    """Derivatives of the scalar f . g from derivative lists of f and g (see
    :func:`_chain_derivatives`), returned as ``[h, h_dq (nQ,), h_dqdq (nQ, nQ),
    h_dqdqdq (nQ, nQ, nQ)]`` up to ``order``."""
    out = [float(f[0] @ g[0])]
    if order >= 1:
        out.append(f[1] @ g[0] + g[1] @ f[0])
    if order >= 2:
        cross = f[1] @ g[1].T
        out.append(f[2] @ g[0] + g[2] @ f[0] + cross + cross.T)
    if order >= 3:
        # f_ab.g_c + f_ac.g_b + f_bc.g_a and the same with f <-> g:
        # pair[a, b, c] = f_ab.g_c + g_ab.f_c, summed over the three choices of the single
        pair = np.einsum('abi,ci->abc', f[2], g[1]) + np.einsum('abi,ci->abc', g[2], f[1])
        t = (f[3] @ g[0] + g[3] @ f[0] + pair + pair.transpose(0, 2, 1)
             + pair.transpose(2, 0, 1))
        out.append(t)
    return out


def bilinear_fourth(fd, gd, idx):
    """d^4 (f . g) / dq_idx[0..3] from callables ``fd(subset)``, ``gd(subset)`` that return
    the (3,) derivative of f, g along a tuple of config indices (Leibniz over subsets)."""
    total = 0.0
    n = len(idx)
    for mask in itertools.product((0, 1), repeat=n):
        left = tuple(idx[j] for j in range(n) if mask[j] == 0)
        right = tuple(idx[j] for j in range(n) if mask[j] == 1)
        total += float(fd(left) @ gd(right))
    return total


_SHARED = weakref.WeakKeyDictionary()


def _shared_memo(system):
    memo = _SHARED.get(system)
    if memo is None:
        memo = _SHARED[system] = _VectorQuantity(system)
    return memo


class FrameConstraint(Constraint):
    """Shared plumbing: memoised vector derivative tensors and the per-config API."""

    def _setup_memo(self, system):
        self._memo = _VectorQuantity(system)
        self._vmemo = _shared_memo(system)

    def _direction(self, frame, order, direction):
        """Derivatives of the frame-fixed direction ``direction`` (world R n), memoised."""
        if order <= 2:
            return self._stacked(frame, order, direction)
        tag = ('n', frame.index, direction.tobytes())
        return self._vmemo.get(tag, order, lambda m: _chain_derivatives(
            self._system, frame, m, direction))

    #: True in the namespace of a class whose members are evaluated together up to second
    #: order (``_dot_terms``; :func:`stacked_constraint_values`); subclasses opt in anew.
    _stacked_constraint = False

    def _derivs(self, order):
        """``[h, h_dq, h_dqdq, h_dqdqdq]`` up to ``order`` at the current state (memoised;
        h alone is computed with its gradient, which the integrator asks for next)."""
        order = max(order, 1)
        if order <= 2 and type(self).__dict__.get('_stacked_constraint'):
            batch = batch_of(self._system, type(self))
            h, h1, h2 = batch.get(order)
            row = batch.row(self)
            return [h[row], h1[row], h2[row]][:order + 1]
        return self._memo.get('h', order, self._compute)

    def _dot_terms(self, vectors):
        """This constraint as ``h = f . g`` over the frame vectors of the registry
        ``vectors``: ``(fa, fb, ga, gb, e)`` as in :func:`ros_vi.mechanics.kernel.frame_dots`
        (slots, -1 for none; ``e`` (3,) the constant g when ``ga`` is -1)."""
        raise abstract(self, '_dot_terms')

    def _adjust_stacked(self, row, out, order):
        """Add what ``h = f . g`` leaves out to this member's rows of the stacked ``out``
        ``[h (M,), h_q (M, nQ), h_qq (M, nQ, nQ)]`` (nothing by default)."""

    @staticmethod
    def _stacked_compute(batch, order):
        """``[h (M,), h_q (M, nQ), h_qq (M, nQ, nQ)]`` of every member of a constraint
        batch at the current state, from the System's frame vectors in one kernel call."""
        system = batch.system
        members = batch.members
        vectors = frame_vectors(system)
        if batch.slots is None:
            specs = [c._dot_terms(vectors) for c in members]
            slots = [np.array([sp[k] for sp in specs], dtype=np.int64) for k in range(4)]
            e = np.array([sp[4] for sp in specs], dtype=float).reshape(-1, 3)
            moving = [np.unique(np.concatenate(
                [vectors.chain(i) for i in sp[:4] if i >= 0] + [np.zeros(0, np.int64)]))
                for sp in specs]
            ptr = np.zeros(len(moving) + 1, dtype=np.int64)
            ptr[1:] = np.cumsum([m.size for m in moving])
            batch.slots = tuple(slots) + (e, ptr, np.concatenate(moving).astype(np.int64))
        X, D1, D2 = vectors.get(order)
        out = list(kernel.frame_dots(X, D1, D2, *batch.slots, order))
        if type(members[0])._adjust_stacked is not FrameConstraint._adjust_stacked:
            for row, c in enumerate(members):
                c._adjust_stacked(row, out, order)
        return out

    def _compute(self, order):
        raise abstract(self, '_compute')

    def _point(self, frame, order):
        if order <= 2:
            return self._stacked(frame, order)
        return self._vmemo.get(('p', frame.index), order,
                              lambda n: _chain_derivatives(self._system, frame, n))

    def _stacked(self, frame, order, direction=None):
        """``[x, D1, D2][:order + 1]`` from the System's stacked frame vectors (shared
        arrays: read only)."""
        vectors = frame_vectors(self._system)
        i = vectors.slot(frame, direction)
        X, D1, D2 = vectors.get(order)
        return [X[i], D1[i], D2[i]][:order + 1]

    def h(self):
        return float(self._derivs(0)[0])

    def h_dq(self, q1):
        return float(self._derivs(1)[1][self._system.get_config(q1).index])

    def h_dqdq(self, q1, q2):
        s = self._system
        return float(self._derivs(2)[2][s.get_config(q1).index, s.get_config(q2).index])

    def h_dqdqdq(self, q1, q2, q3):
        s = self._system
        i, j, k = (s.get_config(c).index for c in (q1, q2, q3))
        return float(self._derivs(3)[3][i, j, k])

    def h_dq_array(self):
        return self._derivs(1)[1].copy()

    def h_dqdq_array(self):
        return self._derivs(2)[2].copy()

    def h_dqdqdq_array(self):
        return self._derivs(3)[3].copy()

    def get_actual_distance(self):
        """|p1 - p2| [m]: the current distance between the two frame origins."""
        return float(np.linalg.norm(self._frame1.p()[:3] - self._frame2.p()[:3]))

    # fourth derivatives of frame vectors by config-index subsets
    def _vec_sub(self, frame, subset, direction=None):
        """(3,) derivative of a frame vector along a tuple of config indices (len <= 4)."""
        n = len(subset)
        if n == 4:
            configs = self._system.configs
            return _fourth(frame, [configs[c] for c in subset], direction)
        if direction is None:
            d = self._point(frame, n)[n]
        else:
            d = self._direction(frame, n, direction)[n]
        return d[subset] if n else d


# ---------------------------------------------------------------------- PointToPoint
class PointToPoint(FrameConstraint):
    """One axis of a point-to-point constraint: ``h = (p1 - p2)[i]`` [m].

    ``p1``, ``p2`` are the world origins of ``frame1`` and ``frame2``; ``axis`` is 'x', 'y'
    or 'z' (or 0, 1, 2).  Usually created through :class:`PointToPoint3D`,
    :class:`PointToPoint2D` or :class:`PointToPoint1D`.
    """

    def __init__(self, system, axis, frame1, frame2, name=None, tolerance=1e-10):
        if isinstance(axis, str) and axis in _AXES:
            self._axis = _AXES[axis]
        elif (not isinstance(axis, (bool, np.bool_)) and isinstance(axis, (int, np.integer))
              and 0 <= axis <= 2):
            self._axis = int(axis)
        else:
            raise ValueError("PointToPoint: axis must be 'x', 'y' or 'z', got %r" % (axis,))
        self._frame1 = resolve_frame(system, frame1, 'PointToPoint frame1')
        self._frame2 = resolve_frame(system, frame2, 'PointToPoint frame2')
        if self._frame1 is self._frame2:
            raise ValueError('PointToPoint: frame1 and frame2 are the same frame %r'
                             % (self._frame1.name,))
        self._setup_memo(system)
        Constraint.__init__(self, system, name, tolerance)

    @property
    def frame1(self):
        """First constrained :class:`Frame` (read only)."""
        return self._frame1

    @property
    def frame2(self):
        """Second constrained :class:`Frame` (read only)."""
        return self._frame2

    @property
    def axis(self):
        """World axis index 0, 1 or 2 (x, y, z) of this component (read only)."""
        return self._axis

    _stacked_constraint = True

    def _dot_terms(self, vectors):
        return (vectors.slot(self._frame1), vectors.slot(self._frame2), -1, -1,
                np.eye(3)[self._axis])

    def _compute(self, order):
        a = self._point(self._frame1, order)
        b = self._point(self._frame2, order)
        i = self._axis
        return [a[0][i] - b[0][i]] + [a[n][..., i] - b[n][..., i] for n in range(1, order + 1)]

    def h_dqdqdqdq(self, q1, q2, q3, q4):
        idx = tuple(self._system.get_config(c).index for c in (q1, q2, q3, q4))
        d = self._vec_sub(self._frame1, idx) - self._vec_sub(self._frame2, idx)
        return float(d[self._axis])


class PointToPointGroup:
    """The constraints created by one ``PointToPoint1D/2D/3D`` call.

    These constructors return a group object rather than a :class:`Constraint`: each axis is
    its own :class:`PointToPoint` constraint (listed in ``System.constraints``, one entry of
    lambda each).  The group is a read-only sequence of them (``len``, iteration, indexing)
    and offers ``get_actual_distance()``.
    """

    def __init__(self, system, axes, frame1, frame2, name):
        system.hold_structure_changes()
        try:
            f1 = resolve_frame(system, frame1, '%s frame1' % type(self).__name__)
            f2 = resolve_frame(system, frame2, '%s frame2' % type(self).__name__)
            labels = 'xyz'
            self._constraints = tuple(
                PointToPoint(system, a, f1, f2,
                             None if name is None else '%s_%s' % (name, labels[a]))
                for a in axes)
        finally:
            system.resume_structure_changes()
        self.name = name
        self._system = system
        self._frame1, self._frame2 = f1, f2

    def __repr__(self):
        return '<%s %r>' % (type(self).__name__, self.name)

    def __len__(self):
        return len(self._constraints)

    def __iter__(self):
        return iter(self._constraints)

    def __getitem__(self, i):
        return self._constraints[i]

    @property
    def system(self):
        return self._system

    @property
    def constraints(self):
        """The created :class:`PointToPoint` constraints, one per axis (read only tuple)."""
        return self._constraints

    @property
    def frame1(self):
        return self._frame1

    @property
    def frame2(self):
        return self._frame2

    def get_actual_distance(self):
        """|p1 - p2| [m] (zero when the constraints are satisfied)."""
        return float(np.linalg.norm(self._frame1.p()[:3] - self._frame2.p()[:3]))


class PointToPoint3D(PointToPointGroup):
    """Three constraints forcing the origin of ``frame1`` onto the origin of ``frame2``.

    ``PointToPoint3D(system, frame1, frame2, name=None)``; constraint names are
    ``name + '_x'``, ``'_y'``, ``'_z'`` when ``name`` is given.  Returns a
    :class:`PointToPointGroup`.
    """

    def __init__(self, system, frame1, frame2, name=None):
        PointToPointGroup.__init__(self, system, (0, 1, 2), frame1, frame2, name)


class PointToPoint2D(PointToPointGroup):
    """Two constraints for planar systems: ``plane`` is 'xy', 'xz' or 'yz'.

    ``PointToPoint2D(system, plane, frame1, frame2, name=None)``.
    """

    def __init__(self, system, plane, frame1, frame2, name=None):
        if not isinstance(plane, str) or plane not in _PLANES:
            raise ValueError("PointToPoint2D: plane must be 'xy', 'xz' or 'yz', got %r"
                             % (plane,))
        PointToPointGroup.__init__(self, system, _PLANES[plane], frame1, frame2, name)


class PointToPoint1D(PointToPoint):
    """One constraint along world ``axis``: ``h = (p1 - p2)[axis]`` [m].

    ``PointToPoint1D(system, axis, frame1, frame2, name=None, tolerance=1e-10)`` with
    ``axis`` 'x', 'y' or 'z' (or 'X', 'Y', 'Z').  As in trep, the object is itself the
    :class:`Constraint` (listed in ``System.constraints`` under ``name``) with ``h``,
    ``h_dq`` ... ``h_dqdqdqdq``, ``index`` and ``tolerance``; ``axis`` is the axis index 0,
    1 or 2 (trep keeps the letter).  It also behaves as a one-element
    :class:`PointToPointGroup` (``len``, iteration and ``[0]`` give the constraint itself,
    ``constraints`` is ``(self,)``), like the objects ``PointToPoint2D/3D`` return.
    """

    def __init__(self, system, axis, frame1, frame2, name=None, tolerance=1e-10):
        if not isinstance(axis, str) or axis.lower() not in _AXES:
            raise ValueError("PointToPoint1D: axis must be 'x', 'y' or 'z', got %r" % (axis,))
        PointToPoint.__init__(self, system, axis.lower(), frame1, frame2, name, tolerance)

    _stacked_constraint = True

    @property
    def constraints(self):
        """``(self,)``: the group view of this single constraint."""
        return (self,)

    def __len__(self):
        return 1

    def __iter__(self):
        return iter((self,))

    def __getitem__(self, i):
        return (self,)[i]
