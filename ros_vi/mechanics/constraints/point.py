"""Point-to-point constraints (trep's ``constraints.PointToPoint1D/2D/3D``), and the
evaluation shared by every built-in frame constraint (``Distance``, ``PointOnPlane``).

Each built-in frame constraint is a dot product of frame vectors, ``h = f . g`` (minus a
term of the configs for ``Distance``), described once by its ``_dot_terms``: ``f`` and ``g``
are differences of rows of the System's frame-vector registry
(:mod:`ros_vi.mechanics.framevectors`, whose kernel is the one definition of a frame
vector's derivatives) or a constant.  Every derivative follows from that description:

* orders 0 to 2 for all the System's constraints of one class at once, by the compiled
  :func:`ros_vi.mechanics.kernel.frame_dots` (the per-object methods ``h()``,
  ``h_dq(q1)``, ``h_dqdq_array()`` ... read their row; a subclass is evaluated the same way
  by a batch of its own);
* the third order by :func:`bilinear_third` from the vectors' third derivatives, the fourth
  by :func:`bilinear_fourth` (Leibniz over the frames' fourth pose derivatives).

The compiled step evaluates orders 0 and 1 of the same constraints by
:mod:`ros_vi.mechanics.constraint_kernel` (the form of the Jacobian it can afford per
Newton iterate); ``test/test_mechanics_formulas.py`` compares the two.
"""
import itertools

import numpy as np

from .._derivcheck import abstract
from ..constraint import Constraint
from ..data import StateMemo
from ..frame import resolve_frame
from .. import kernel
from ..framevectors import batch_of, frame_vectors

_AXES = {'x': 0, 'y': 1, 'z': 2}
_PLANES = {'xy': (0, 1), 'xz': (0, 2), 'yz': (1, 2)}


# ---------------------------------------------------------------------- shared helpers
def _fourth(frame, configs, direction=None):
    """d^4 x / dq_a dq_b dq_c dq_d (3,) for the origin (or a frame-fixed direction)."""
    g4 = frame.g_dqdqdqdq(*configs)
    if direction is None:
        return g4[:3, 3].copy()
    return g4[:3, :3] @ direction


def bilinear_third(f, g):
    """d3 (f . g)/dq3 (nQ, nQ, nQ) from the derivative lists ``[x, D1, D2, D3]`` of two
    vectors (:meth:`~ros_vi.mechanics.framevectors.FrameVectors.vector`)."""
    # f_ab.g_c + f_ac.g_b + f_bc.g_a and the same with f <-> g:
    # pair[a, b, c] = f_ab.g_c + g_ab.f_c, summed over the three choices of the single
    pair = np.einsum('abi,ci->abc', f[2], g[1]) + np.einsum('abi,ci->abc', g[2], f[1])
    return (f[3] @ g[0] + g[3] @ f[0] + pair + pair.transpose(0, 2, 1)
            + pair.transpose(2, 0, 1))


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


class FrameConstraint(Constraint):
    """A constraint ``h = f . g`` over frame vectors (see the module docstring): the
    evaluation of every order and the per-config API.  Subclasses define
    :meth:`_dot_terms` (and :meth:`_adjust_stacked` for a term of the configs)."""

    def _setup_memo(self, system):
        self._memo = StateMemo(system)

    #: True in the namespace of a built-in class: the System evaluates all its members
    #: together (:func:`~ros_vi.mechanics.framevectors.constraint_groups`); a subclass,
    #: which may redefine ``h``, is evaluated through its own methods.
    _stacked_constraint = False

    def _compute(self, order):
        """``[h, h_dq (nQ,), h_dqdq (nQ, nQ), h_dqdqdq (nQ, nQ, nQ)][:order + 1]`` at the
        current state (shared arrays: read only).  Orders up to 2 are the rows of this
        constraint in its class's batch (h alone is computed with its gradient, which the
        integrator asks for next); the third is computed once per state."""
        batch = batch_of(self._system, type(self))
        h, h1, h2 = batch.get(min(max(order, 1), 2))
        row = batch.row(self)
        out = [h[row], h1[row], h2[row]][:order + 1]
        if order >= 3:
            memo = self._memo.get()
            third = memo.get('third')
            if third is None:
                third = memo['third'] = bilinear_third(*self._factors(3))
            out.append(third)
        return out

    def _dot_terms(self, vectors):
        """This constraint as ``h = f . g`` over the frame vectors of the registry
        ``vectors``: ``(fa, fb, ga, gb, e)`` as in :func:`ros_vi.mechanics.kernel.frame_dots`
        (slots, -1 for none; ``e`` (3,) the constant g when ``ga`` is -1)."""
        raise abstract(self, '_dot_terms')

    def _adjust_stacked(self, row, out, order):
        """Add what ``h = f . g`` leaves out to this member's rows of the stacked ``out``
        ``[h (M,), h_q (M, nQ), h_qq (M, nQ, nQ)]`` (nothing by default; it must have no
        third or fourth derivative)."""

    def _factors(self, order):
        """The derivative lists ``[x, D1, ...][:order + 1]`` of f and of g."""
        vectors = frame_vectors(self._system)
        fa, fb, ga, gb, e = self._dot_terms(vectors)

        def difference(a, b):
            x = vectors.vector(a, order)
            return x if b < 0 else [u - v for u, v in zip(x, vectors.vector(b, order))]
        f = difference(fa, fb)
        if ga >= 0:
            return f, difference(ga, gb)
        return f, [e] + [np.zeros(d.shape) for d in f[1:]]

    def _vector_along(self, vectors, slot, subset):
        """(3,) derivative of the registry vector ``slot`` along a tuple of config indices
        (length <= 4)."""
        n = len(subset)
        if n == 4:
            frame, direction = vectors.item(slot)
            configs = self._system.configs
            return _fourth(self._system.frames[frame], [configs[c] for c in subset],
                           direction)
        d = vectors.vector(slot, n)[n]
        return d[subset] if n else d

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

    def h(self):
        return float(self._compute(0)[0])

    def h_dq(self, q1):
        return float(self._compute(1)[1][self._system.get_config(q1).index])

    def h_dqdq(self, q1, q2):
        s = self._system
        return float(self._compute(2)[2][s.get_config(q1).index, s.get_config(q2).index])

    def h_dqdqdq(self, q1, q2, q3):
        s = self._system
        i, j, k = (s.get_config(c).index for c in (q1, q2, q3))
        return float(self._compute(3)[3][i, j, k])

    def h_dqdqdqdq(self, q1, q2, q3, q4):
        idx = tuple(self._system.get_config(c).index for c in (q1, q2, q3, q4))
        vectors = frame_vectors(self._system)
        fa, fb, ga, gb, e = self._dot_terms(vectors)

        def along(a, b):
            if a < 0:
                return lambda sub: np.zeros(3) if sub else e
            if b < 0:
                return lambda sub: self._vector_along(vectors, a, sub)
            return lambda sub: (self._vector_along(vectors, a, sub)
                                - self._vector_along(vectors, b, sub))
        return bilinear_fourth(along(fa, fb), along(ga, gb), idx)

    def h_dq_array(self):
        return self._compute(1)[1].copy()

    def h_dqdq_array(self):
        return self._compute(2)[2].copy()

    def h_dqdqdq_array(self):
        return self._compute(3)[3].copy()

    def get_actual_distance(self):
        """|p1 - p2| [m]: the current distance between the two frame origins."""
        return float(np.linalg.norm(self._frame1.p()[:3] - self._frame2.p()[:3]))


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
        # h = (p1 - p2) . e_axis
        return (vectors.slot(self._frame1), vectors.slot(self._frame2), -1, -1,
                np.eye(3)[self._axis])


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
