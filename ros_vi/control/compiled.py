"""The shipped control laws compiled as functions of (state, time, parameters).

:func:`pack_controllers` turns :mod:`ros_vi.control` objects (:class:`~ros_vi.control.LQR`,
:class:`~ros_vi.control.PendulumSwingUp`, :class:`~ros_vi.control.SwingUpAndBalance` of
those) into two arrays the compiled rollout reads: ``law_ints`` (structure: which law, sizes,
input configs, angle mask; shared by every copy) and ``law_table (K, nL)`` (numbers: gains,
goal, limits; one row per distinct controller).  :func:`control_law` evaluates the law the
object's ``compute`` evaluates, in the same order of operations, so a compiled rollout and
:func:`ros_vi.simulation.simulate` with the object give the same efforts to rounding.

The energies, momenta and forces the laws need come from the controller's own model (its
packed constants ``Fc``, not the plant's): a rollout with a perturbed plant mass runs the
nominal controller, as a real controller would.

Other controllers (cart-pole and acrobot swing-ups, any Python callable) run on the slow
path of :func:`ros_vi.batch.rollout`.
"""
import math

import numpy as np
from numba import njit

from ..mechanics.inputs import input_configs
from .base import angle_mask
from .handover import SwingUpAndBalance
from .lqr import LQR
from .swingup import PendulumSwingUp

__all__ = ['pack_controllers', 'control_law', 'compiled_law_name']

# law_ints header: the swing-up law, whether there is an LQR and a hand-over, sizes, then
# the offsets of every parameter in a law_table row
SWING_NONE, SWING_PENDULUM = 0, 1
(L_SWING, L_LQR, L_HANDOVER, L_N, L_M, O_UMAX, O_QBAR, O_PBAR, O_UBAR, O_K, O_P, O_CIN,
 O_COUT, O_GOAL, O_GOALE, O_KE, O_COMP, O_KICK, O_REST, O_DAMP, L_END_F, L_HEADER) = range(22)
# after the header: input configs (m), then the angle mask (n)


def compiled_law_name(controller):
    """The compiled law for ``controller`` ('lqr', 'pendulum_swingup', 'pendulum_swingup+lqr')
    or None when it runs on the slow path."""
    if type(controller) is LQR:
        return 'lqr'
    if type(controller) is PendulumSwingUp:
        return 'pendulum_swingup'
    if type(controller) is SwingUpAndBalance and type(controller.balance) is LQR:
        inner = compiled_law_name(controller.swingup)
        if inner == 'pendulum_swingup':
            return inner + '+lqr'
    return None


def _parts(controller):
    """(swing-up object or None, LQR or None, hand-over object or None)."""
    if type(controller) is SwingUpAndBalance:
        return controller.swingup, controller.balance, controller
    if type(controller) is LQR:
        return None, controller, None
    return controller, None, None


def _layout(n, m, swing, lqr):
    """Offsets of the law_table row for n dynamic configs and m inputs."""
    off = {}
    pos = 0

    def take(name, size):
        nonlocal pos
        off[name] = pos
        pos += size
    take(O_UMAX, m)
    if lqr:
        take(O_QBAR, n)
        take(O_PBAR, n)
        take(O_UBAR, m)
        take(O_K, m * 2 * n)
        take(O_P, 4 * n * n)
        take(O_CIN, 1)
        take(O_COUT, 1)
    if swing:
        take(O_GOAL, n)
        for name in (O_GOALE, O_KE, O_COMP, O_KICK, O_REST):
            take(name, 1)
        take(O_DAMP, n)
    return off, pos


def _row(controller, off, size, damping):
    swing, lqr, handover = _parts(controller)
    row = np.zeros(size)
    row[off[O_UMAX]:off[O_UMAX] + len(controller.u_max)] = controller.u_max
    if lqr is not None:
        e = lqr.equilibrium
        n = len(e.q)
        row[off[O_QBAR]:off[O_QBAR] + n] = e.q
        row[off[O_PBAR]:off[O_PBAR] + n] = e.p
        row[off[O_UBAR]:off[O_UBAR] + len(e.u)] = e.u
        row[off[O_K]:off[O_K] + lqr.K.size] = lqr.K.ravel()
        row[off[O_P]:off[O_P] + lqr.P.size] = lqr.P.ravel()
        row[off[O_CIN]] = handover.c_in if handover is not None else math.inf
        row[off[O_COUT]] = handover.c_out if handover is not None else math.inf
    if swing is not None:
        n = len(swing.goal)
        row[off[O_GOAL]:off[O_GOAL] + n] = swing.goal
        row[off[O_GOALE]] = swing.goal_energy
        row[off[O_KE]] = swing.k_energy
        row[off[O_COMP]] = 1.0 if swing.compensate else 0.0
        row[off[O_KICK]] = swing.kick
        row[off[O_REST]] = swing.rest_speed
        row[off[O_DAMP]:off[O_DAMP] + n] = damping
    return row


def pack_controllers(controllers, damping):
    """``(law_ints, law_table (K, nL))`` for a list of K controllers of one compiled law
    (the same type, joints and inputs; gains may differ), or None if any of them has no
    compiled law.  ``damping (K, n)``: each controller model's damping coefficients (its
    ``FastStepper.damping()``; the pendulum law cancels them)."""
    names = {compiled_law_name(c) for c in controllers}
    if None in names or len(names) != 1:
        return None
    first = controllers[0]
    for c in controllers[1:]:
        if c.joint_names != first.joint_names or c.input_names != first.input_names:
            raise ValueError('controllers of one rollout must drive the same joints and '
                             'inputs: %s %s vs %s %s' % (first.joint_names, first.input_names,
                                                         c.joint_names, c.input_names))
    swing, lqr, handover = _parts(first)
    n, m = first.system.nQd, len(first.input_names)
    off, size = _layout(n, m, swing is not None, lqr is not None)
    header = np.zeros(L_HEADER, dtype=np.int64)
    header[L_SWING] = SWING_PENDULUM if swing is not None else SWING_NONE
    header[L_LQR] = 1 if lqr is not None else 0
    header[L_HANDOVER] = 1 if handover is not None else 0
    header[L_N], header[L_M] = n, m
    for key, value in off.items():
        header[key] = value
    header[L_END_F] = size
    input_cfg = input_configs(first.system)[first.input_indices]
    law_ints = np.concatenate([header, np.asarray(input_cfg, dtype=np.int64),
                               angle_mask(first.system)[:n].astype(np.int64)])
    table = np.array([_row(c, off, size, d) for c, d in zip(controllers, damping)])
    return law_ints, table.reshape(len(controllers), size)


@njit(cache=True, inline='always')
def _wrapped(x, is_angle):
    if is_angle:
        return (x + math.pi) % (2.0 * math.pi) - math.pi
    return x


@njit(cache=True, inline='always')
def lqr_cost(law_ints, row, q, p, x):
    """``x (2n,) <- [q - q_bar (angles wrapped), p - p_bar]``; returns x^T P x."""
    n = law_ints[L_N]
    angles = law_ints[L_HEADER + law_ints[L_M]:]
    qb, pb, Po = law_ints[O_QBAR], law_ints[O_PBAR], law_ints[O_P]
    for i in range(n):
        x[i] = _wrapped(q[i] - row[qb + i], angles[i] != 0)
        x[n + i] = p[i] - row[pb + i]
    cost = 0.0
    for i in range(2 * n):
        acc = 0.0
        for j in range(2 * n):
            acc += row[Po + 2 * n * i + j] * x[j]
        cost += x[i] * acc
    return cost


@njit(cache=True, inline='always')
def control_law(law_ints, row, balancing, q, v, p, energy, u, x):
    """The controller's efforts ``u (m,)`` [N m or N], saturated at its u_max, for the
    state ``q (n,)``, ``v (n,)`` with the controller model's momentum ``p = M_c(q) v`` and
    energy ``energy`` [J].  ``balancing (1,)`` int: the hand-over's mode, updated in place
    (1 balancing, 0 swinging up), as :class:`~ros_vi.control.SwingUpAndBalance` keeps it.
    ``x (2n,)`` is scratch.  Returns the LQR cost-to-go (nan without an LQR)."""
    n, m = law_ints[L_N], law_ints[L_M]
    cost = math.nan
    use_lqr = law_ints[L_LQR] != 0
    if use_lqr:
        cost = lqr_cost(law_ints, row, q, p, x)
        if law_ints[L_HANDOVER] != 0:
            if balancing[0] != 0 and cost > row[law_ints[O_COUT]]:
                balancing[0] = 0
            elif balancing[0] == 0 and cost < row[law_ints[O_CIN]]:
                balancing[0] = 1
            use_lqr = balancing[0] != 0
    if use_lqr:
        ub, K = law_ints[O_UBAR], law_ints[O_K]
        for a in range(m):
            acc = row[ub + a]
            for j in range(2 * n):
                acc -= row[K + 2 * n * a + j] * x[j]
            u[a] = acc
    elif law_ints[L_SWING] == SWING_PENDULUM:
        err = energy - row[law_ints[O_GOALE]]
        rest = True
        for i in range(n):
            if not abs(v[i]) <= row[law_ints[O_REST]]:
                rest = False
        if rest and err < 0:
            u[0] = row[law_ints[O_KICK]]
        else:
            w = -row[law_ints[O_KE]] * v[0] * err
            if row[law_ints[O_COMP]] != 0.0:
                # cancel the model's dissipative force -c v (Damping), so the pump works
                # against gravity alone
                w -= -row[law_ints[O_DAMP]] * v[0]
            u[0] = w
    else:
        for a in range(m):
            u[a] = 0.0
    um = law_ints[O_UMAX]
    for a in range(m):
        u[a] = min(max(u[a], -row[um + a]), row[um + a])
    return cost

