"""Wrenches applied to a frame (trep's ``forces.BodyWrench``, ``HybridWrench`` and
``SpatialWrench``).

A wrench ``w = (fx, fy, fz, tx, ty, tz)`` (force [N] first, then torque [N m]) does the
virtual work ``<twist_i, w> dq_i`` along config ``i``, so the generalized force is::

    F_i = vee(T_i) . w

with ``vee([[what, v], [0, 0]]) = (v, w)`` (linear part first, matching the wrench order)
and the 4x4 twist ``T_i`` of the frame per unit ``dq_i``:

=============  ==============================  ==========================================
class          T_i                             wrench expressed in / applied at
=============  ==============================  ==========================================
BodyWrench     g^-1 dg/dq_i                    the frame's axes / the frame origin
HybridWrench   [[dR/dq_i R^T, dp/dq_i], 0]     world-aligned axes / the frame origin
SpatialWrench  dg/dq_i g^-1                    world axes / the world origin
=============  ==============================  ==========================================

Derivatives of ``T_i`` follow from the product rule on the stacked pose derivatives of
:mod:`ros_vi.mechanics.pose` (e.g. ``d(g^-1 g_i)/dq_a = g^-1_a g_i + g^-1 g_ia``).
Wrenches do not depend on the velocities.
"""
import numbers

import numpy as np

from .. import kernel
from .._derivcheck import abstract
from ..force import Force
from ..data import StateMemo
from ..frame import resolve_frame
from ..framevectors import batch_of
from ..pose import pose_derivatives


def _vee(T):
    """(..., 6) twist (v, w) of stacked 4x4 matrices whose rotation block is skew."""
    return np.concatenate((T[..., :3, 3],
                           0.5 * (T[..., 2:3, 1] - T[..., 1:2, 2]),
                           0.5 * (T[..., 0:1, 2] - T[..., 2:3, 0]),
                           0.5 * (T[..., 1:2, 0] - T[..., 0:1, 1])), axis=-1)


class _Wrench(Force):
    """Shared machinery; subclasses define ``_twists(pose, order)``."""

    _kind = 'Wrench'
    _stacked_kind = None      # kernel.wrench_twists kind of the class (None: not stacked)

    def __init__(self, system, frame, wrench=(), name=None):
        who = '%s %r' % (self._kind, name)
        frame = resolve_frame(system, frame, who)
        if isinstance(wrench, (str, bytes)):
            raise ValueError('%s: wrench must be a sequence of up to 6 numbers or input '
                             'names, got the string %r' % (who, wrench))
        try:
            entries = list(wrench)
        except TypeError:
            raise ValueError('%s: wrench must be a sequence of up to 6 numbers or input '
                             'names, got %r' % (who, wrench)) from None
        if len(entries) > 6:
            raise ValueError('%s: wrench has %d entries; expected 6 (fx, fy, fz, tx, ty, tz)'
                             % (who, len(entries)))
        entries += [0.0] * (6 - len(entries))
        constants = np.zeros(6)
        for k, item in enumerate(entries):
            if isinstance(item, str):
                continue
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Real):
                raise ValueError('%s: wrench[%d] must be a number or an input name, got %r'
                                 % (who, k, item))
            value = float(item)
            if not np.isfinite(value):
                raise ValueError('%s: wrench[%d] must be finite, got %r' % (who, k, item))
            constants[k] = value
        self._frame = frame
        self._constants = constants
        self._inputs = [None] * 6
        self._cache = StateMemo(system)
        Force.__init__(self, system, name)
        system.hold_structure_changes()
        try:
            for k, item in enumerate(entries):
                if isinstance(item, str):
                    self._inputs[k] = self._create_input(item)
        finally:
            system.resume_structure_changes()

    # ------------------------------------------------------------------ properties
    @property
    def frame(self):
        """The frame the wrench is applied to (read only)."""
        return self._frame

    @property
    def wrench(self):
        """Mixed tuple of 6: a float for a constant component, the :class:`Input` for a
        variable one (read only)."""
        return tuple(inp if inp is not None else float(c)
                     for inp, c in zip(self._inputs, self._constants))

    @property
    def wrench_val(self):
        """Current numeric wrench (fx, fy, fz, tx, ty, tz) [N, N m]; setting it sets the
        constants and the inputs' values (up to 6 entries)."""
        return tuple(float(v) for v in self._values())

    @wrench_val.setter
    def wrench_val(self, values):
        values = list(values)
        if len(values) > 6:
            raise ValueError('%r: wrench_val takes at most 6 values, got %d'
                             % (self, len(values)))
        for k, v in enumerate(values):
            v = float(v)
            if not np.isfinite(v):
                raise ValueError('%r: wrench_val[%d] must be finite, got %r' % (self, k, v))
            if self._inputs[k] is not None:
                self._inputs[k].u = v
            else:
                self._constants[k] = v
        self._system._parameters_changed()

    def _values(self):
        w = self._constants.copy()
        u = self._system.data.u
        for k, inp in enumerate(self._inputs):
            if inp is not None:
                w[k] = u[inp.index]
        return w

    # ------------------------------------------------------------------ twists
    def _tw(self, order):
        """Cached twists: order 0 (nQ, 6); 1 (nQ, nQ, 6) [i, a]; 2 (nQ, nQ, nQ, 6).

        Orders 0 and 1 of the built-in classes come from one compiled evaluation of all
        the System's wrenches of the class (:func:`_stacked_twists`)."""
        if order <= 1 and self._stacked_kind is not None:
            batch = batch_of(self._system, type(self))
            row = batch.row(self)
            if row is not None:
                return batch.get(order)[order][row]
        cache = self._cache.get()
        out = cache.get(order)
        if out is None:
            pose = pose_derivatives(cache, self._frame)
            out = cache[order] = _vee(self._twists(pose, order))
        return out

    def _twists(self, pose, order):
        raise abstract(self, '_twists')

    def _i(self, q):
        return self._system.get_config(q).index

    def _component(self, u1):
        inp = self._system.get_input(u1)
        for k, mine in enumerate(self._inputs):
            if mine is inp:
                return k
        return None

    # ------------------------------------------------------------------ per entry
    def f(self, q):
        """Generalized force on config ``q`` [N or N m]."""
        return float(self._tw(0)[self._i(q)] @ self._values())

    def f_dq(self, q, q1):
        return float(self._tw(1)[self._i(q), self._i(q1)] @ self._values())

    def f_ddq(self, q, dq1):
        self._i(q), self._i(dq1)
        return 0.0

    def f_du(self, q, u1):
        i, k = self._i(q), self._component(u1)
        return 0.0 if k is None else float(self._tw(0)[i, k])

    def f_dqdq(self, q, q1, q2):
        return float(self._tw(2)[self._i(q), self._i(q1), self._i(q2)] @ self._values())

    def f_ddqdq(self, q, dq1, q2):
        self._i(q), self._i(dq1), self._i(q2)
        return 0.0

    def f_ddqddq(self, q, dq1, dq2):
        self._i(q), self._i(dq1), self._i(dq2)
        return 0.0

    def f_dudq(self, q, u1, q2):
        i, k, a = self._i(q), self._component(u1), self._i(q2)
        return 0.0 if k is None else float(self._tw(1)[i, a, k])

    def f_duddq(self, q, u1, dq2):
        self._i(q), self._component(u1), self._i(dq2)
        return 0.0

    def f_dudu(self, q, u1, u2):
        self._i(q), self._component(u1), self._component(u2)
        return 0.0

    # ------------------------------------------------------------------ whole arrays
    def f_array(self):
        return self._tw(0) @ self._values()

    def f_dq_array(self):
        return self._tw(1) @ self._values()

    def f_ddq_array(self):
        n = self._system.nQ
        return np.zeros((n, n))

    def f_du_array(self):
        s = self._system
        out = np.zeros((s.nQ, s.nu))
        tw = None
        for k, inp in enumerate(self._inputs):
            if inp is not None:
                if tw is None:
                    tw = self._tw(0)
                out[:, inp.index] = tw[:, k]
        return out


def _stacked_twists(batch, order):
    """``(T0 (nw, nQ, 6), T1 (nw, nQ, nQ, 6), F (nQ,), F_dq (nQ, nQ))`` of every wrench
    of one class in a System (``batch.members``) at the current state and inputs, see
    :func:`ros_vi.mechanics.kernel.wrench_twists` (over joint coordinates, folded onto the
    configs)."""
    system = batch.system
    wrenches = batch.members
    if batch.slots is None:
        model = system.model
        chains = [model.frame_chain(w.frame.index) for w in wrenches]
        ptr = np.zeros(len(chains) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([c.size for c in chains])
        inputs = [(r, k, inp.index) for r, w in enumerate(wrenches)
                  for k, inp in enumerate(w._inputs) if inp is not None]
        batch.slots = ((np.array([w.frame.index for w in wrenches], dtype=np.int64),
                        np.array([w._stacked_kind for w in wrenches], dtype=np.int64),
                        ptr, np.concatenate(chains).astype(np.int64)),
                       tuple(np.array(col, dtype=np.int64) for col in zip(*inputs))
                       if inputs else None,
                       np.array([w._constants for w in wrenches]))
    W = batch.slots[2]
    driven = batch.slots[1]
    if driven is not None:
        W = W.copy()
        W[driven[0], driven[1]] = system.data.u[driven[2]]
    R, P, S = system._kinematics()
    T0, T1, F, F_q = kernel.wrench_twists(R, P, S, *batch.slots[0], W, order)
    model = system.model
    if model.has_mimic:
        # the kernel runs on joint coordinates: fold every config axis onto the configs
        T0, F = model.fold(T0, (1,)), model.fold(F)
        if order >= 1:
            T1, F_q = model.fold(T1, (1, 2)), model.fold(F_q, (0, 1))
    return T0, T1, F, F_q


def _stacked_wrench_sums(batch, part):
    """Sum over every wrench of one class in a System: F (nQ,) for ``part`` 'first',
    (F_dq (nQ, nQ), None) for 'jacobian' (wrenches do not depend on dq); None for
    'energy' (a force has none)."""
    if part == 'first':
        return batch.get(0)[2]
    if part == 'jacobian':
        return batch.get(1)[3], None
    return None


class BodyWrench(_Wrench):
    """A wrench expressed in the frame's own coordinates, applied at its origin:
    ``F_i = vee(g^-1 dg/dq_i) . w``.

    ``wrench``: up to 6 entries (fx, fy, fz, tx, ty, tz) [N, N m], each a number
    (constant) or a string (a new :class:`Input` of that name controls the component);
    missing trailing entries are 0 (as in trep), more than 6 is a ValueError.

    Example: ``BodyWrench(system, 'link', (0, 0, 0, 0, 0, 'tau'))``.
    """

    _kind = 'BodyWrench'
    _stacked_kind = kernel.BODY_WRENCH
    _stacked_compute = staticmethod(_stacked_twists)
    _stacked_sums = staticmethod(_stacked_wrench_sums)

    def _twists(self, p, order):
        gi, GI1, G1 = p.ginv, p.GI1, p.G1
        if order == 0:
            return gi @ G1
        G2 = p.G2
        if order == 1:
            # [i, a] = ginv_a g_i + ginv g_ia
            return np.einsum('axy,iyz->iaxz', GI1, G1) + gi @ G2
        t = np.einsum('axy,ibyz->iabxz', GI1, G2)          # ginv_a g_ib
        return (np.einsum('abxy,iyz->iabxz', p.GI2, G1) + t + t.transpose(0, 2, 1, 3, 4)
                + gi @ p.G3)


class HybridWrench(_Wrench):
    """A wrench with world-aligned axes applied at the frame origin:
    ``F_i = (dp/dq_i, vee(dR/dq_i R^T)) . w``.

    ``wrench`` as for :class:`BodyWrench`.
    """

    _kind = 'HybridWrench'
    _stacked_kind = kernel.HYBRID_WRENCH
    _stacked_compute = staticmethod(_stacked_twists)
    _stacked_sums = staticmethod(_stacked_wrench_sums)

    def _twists(self, p, order):
        Rt = p.g[:3, :3].T
        G1 = p.G1
        if order == 0:
            T = np.zeros_like(G1)
            T[..., :3, :3] = G1[..., :3, :3] @ Rt
            T[..., :3, 3] = G1[..., :3, 3]
            return T
        G2 = p.G2
        R1t = G1[:, :3, :3].transpose(0, 2, 1)               # (dR/dq_a)^T
        if order == 1:
            T = np.zeros_like(G2)
            T[..., :3, :3] = (G2[..., :3, :3] @ Rt
                              + np.einsum('ixy,ayz->iaxz', G1[:, :3, :3], R1t))
            T[..., :3, 3] = G2[..., :3, 3]
            return T
        G3 = p.G3
        R2t = G2[..., :3, :3].transpose(0, 1, 3, 2)           # (d2R/dq_a dq_b)^T
        t = np.einsum('iaxy,byz->iabxz', G2[..., :3, :3], R1t)   # R_ia R_b^T
        T = np.zeros_like(G3)
        T[..., :3, :3] = (G3[..., :3, :3] @ Rt + t + t.transpose(0, 2, 1, 3, 4)
                          + np.einsum('ixy,abyz->iabxz', G1[:, :3, :3], R2t))
        T[..., :3, 3] = G3[..., :3, 3]
        return T


class SpatialWrench(_Wrench):
    """A wrench in world coordinates applied at the world origin (as if the frame were
    extended rigidly to it): ``F_i = vee(dg/dq_i g^-1) . w``.

    ``wrench`` as for :class:`BodyWrench`.
    """

    _kind = 'SpatialWrench'
    _stacked_kind = kernel.SPATIAL_WRENCH
    _stacked_compute = staticmethod(_stacked_twists)
    _stacked_sums = staticmethod(_stacked_wrench_sums)

    # trep's accessor methods of SpatialWrench (the properties frame, wrench and wrench_val
    # are the same values)
    def get_frame(self):
        """The frame the wrench is applied to (same as :attr:`frame`)."""
        return self._frame

    def get_wrench(self):
        """Same as :attr:`wrench`, as a list of 6."""
        return list(self.wrench)

    def get_wrench_val(self):
        """Same as :attr:`wrench_val`, as a list of 6 [N, N m]."""
        return list(self.wrench_val)

    def set_wrench_val(self, wrench):
        """Same as setting :attr:`wrench_val`."""
        self.wrench_val = wrench

    def _twists(self, p, order):
        gi, GI1, G1 = p.ginv, p.GI1, p.G1
        if order == 0:
            return G1 @ gi
        G2 = p.G2
        if order == 1:
            # [i, a] = g_ia ginv + g_i ginv_a
            return G2 @ gi + np.einsum('ixy,ayz->iaxz', G1, GI1)
        t = np.einsum('iaxy,byz->iabxz', G2, GI1)           # g_ia ginv_b
        return (p.G3 @ gi + t + t.transpose(0, 2, 1, 3, 4)
                + np.einsum('ixy,abyz->iabxz', G1, p.GI2))


__all__ = ['BodyWrench', 'HybridWrench', 'SpatialWrench']
