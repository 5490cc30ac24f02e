"""The shipped control laws compiled as functions of (state, time, parameters).

:func:`pack_controllers` turns :mod:`ros_vi.control` objects (:class:`~ros_vi.control.LQR`,
:class:`~ros_vi.control.PendulumSwingUp`, :class:`~ros_vi.control.CartPoleSwingUp`,
:class:`~ros_vi.control.AcrobotSwingUp`, :class:`~ros_vi.control.SwingUpAndBalance` of one
of the swing-ups and an LQR) into two arrays the compiled rollout reads: ``law_ints``
(structure: which law, sizes, input configs, angle mask, swing-up configs; shared by every
copy) and ``law_table (K, nL)`` (numbers: gains, goal, limits; one row per distinct
controller).  :func:`control_law` evaluates the law the object's ``compute`` evaluates, in
the same order of operations, so a compiled rollout and :func:`ros_vi.simulation.simulate`
with the object give the same efforts to rounding.

The energies, momenta and forces the laws need come from the controller's own model (its
packed constants ``Fc``, not the plant's): a rollout with a perturbed plant mass runs the
nominal controller, as a real controller would.  The cart-pole and acrobot laws evaluate
that model's kernel at the state (:func:`collocated_terms`: the collocated partial feedback
linearisation of :meth:`Controller._collocated_input`).

Other controllers (any other class, any Python callable) run on the slow path of
:func:`ros_vi.batch.rollout`.
"""
import math

import numpy as np
from numba import njit

from ..integrators.fast_step import FastStepper
from ..integrators.node_state import bias_terms, momentum_energy
from ..mechanics import kernel
from ..mechanics.inputs import input_configs
from .base import angle_mask
from .handover import SwingUpAndBalance
from .lqr import LQR
from .swingup import AcrobotSwingUp, CartPoleSwingUp, PendulumSwingUp

__all__ = ['pack_controllers', 'control_law', 'compiled_law_name', 'collocated_terms',
           'discrete_momentum']

# law_ints header: the swing-up law, whether there is an LQR and a hand-over, sizes, then
# the offsets of every parameter in a law_table row
SWING_NONE, SWING_PENDULUM, SWING_CARTPOLE, SWING_ACROBOT = 0, 1, 2, 3
# L_CFG_A / L_CFG_B: the cart and pole configs (cart-pole), the active and passive configs
# (acrobot).  O_KICK is the pendulum's kick torque [N m], the cart-pole's and acrobot's kick
# acceleration [m/s^2, rad/s^2].
(L_SWING, L_LQR, L_HANDOVER, L_N, L_M, L_CFG_A, L_CFG_B, O_UMAX, O_QBAR, O_PBAR, O_UBAR,
 O_K, O_P, O_CIN, O_COUT, O_GOAL, O_GOALE, O_KE, O_COMP, O_KICK, O_REST, O_DAMP, O_AMAX,
 O_KX, O_KV, O_COUP, O_KP, O_KD, O_DEN, L_END_F, L_HEADER) = range(31)
# after the header: input configs (m), then the angle mask (n)
_SWING_KIND = {PendulumSwingUp: SWING_PENDULUM, CartPoleSwingUp: SWING_CARTPOLE,
               AcrobotSwingUp: SWING_ACROBOT}
_SWING_NAME = {PendulumSwingUp: 'pendulum_swingup', CartPoleSwingUp: 'cartpole_swingup',
               AcrobotSwingUp: 'acrobot_swingup'}


def compiled_law_name(controller):
    """The compiled law for ``controller`` ('lqr', 'pendulum_swingup', 'cartpole_swingup',
    'acrobot_swingup', or one of the swing-ups + '+lqr' for a :class:`SwingUpAndBalance`
    with an LQR) or None when it runs on the slow path.

    A hand-over whose swing-up and LQR have different models (not the same System and not
    equal packed constants) has no compiled law: the compiled law evaluates one model."""
    if type(controller) is LQR:
        return 'lqr'
    if type(controller) in _SWING_NAME:
        return _SWING_NAME[type(controller)]
    if type(controller) is SwingUpAndBalance and type(controller.balance) is LQR:
        inner = _SWING_NAME.get(type(controller.swingup))
        if inner is not None and _same_model(controller.swingup.system,
                                             controller.balance.system):
            return inner + '+lqr'
    return None


def _same_model(a, b):
    """True when Systems ``a`` and ``b`` pack to the same compiled model."""
    if a is b:
        return True
    sa = FastStepper.for_system(a)
    sb = FastStepper.for_system(b)
    if sa is None or sb is None:
        return False
    return bool(np.array_equal(sa.packed_structure(), sb.packed_structure())
                and np.array_equal(sa.packed_constants(), sb.packed_constants()))


def _parts(controller):
    """(swing-up object or None, LQR or None, hand-over object or None)."""
    if type(controller) is SwingUpAndBalance:
        return controller.swingup, controller.balance, controller
    if type(controller) is LQR:
        return None, controller, None
    return controller, None, None


def _layout(n, m, swing, lqr):
    """Offsets of the law_table row for n dynamic configs and m inputs; ``swing`` the
    SWING_* kind or None, ``lqr`` bool."""
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
    if swing is not None:
        take(O_GOAL, n)
        for name in (O_GOALE, O_KE, O_KICK, O_REST):
            take(name, 1)
        if swing == SWING_PENDULUM:
            take(O_COMP, 1)
            take(O_DAMP, n)
        elif swing == SWING_CARTPOLE:
            for name in (O_AMAX, O_KX, O_KV, O_COUP):
                take(name, 1)
        else:
            for name in (O_KP, O_KD, O_DEN):
                take(name, 1)
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
        row[off[O_REST]] = swing.rest_speed
        if type(swing) is PendulumSwingUp:
            row[off[O_KICK]] = swing.kick
            row[off[O_COMP]] = 1.0 if swing.compensate else 0.0
            row[off[O_DAMP]:off[O_DAMP] + n] = damping
        elif type(swing) is CartPoleSwingUp:
            row[off[O_KICK]] = swing.kick_accel
            row[off[O_AMAX]] = swing.a_max
            row[off[O_KX]] = swing.k_x
            row[off[O_KV]] = swing.k_v
            row[off[O_COUP]] = swing._coupling_up
        else:
            row[off[O_KICK]] = swing.kick_accel
            row[off[O_KP]] = swing.k_p
            row[off[O_KD]] = swing.k_d
            row[off[O_DEN]] = swing.den_min
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
        if _configs_of(c) != _configs_of(first):
            raise ValueError('controllers of one rollout must swing up with the same '
                             'configs: %s vs %s' % (_configs_of(first), _configs_of(c)))
    swing, lqr, handover = _parts(first)
    kind = _SWING_KIND[type(swing)] if swing is not None else None
    n, m = first.system.nQd, len(first.input_names)
    off, size = _layout(n, m, kind, lqr is not None)
    header = np.zeros(L_HEADER, dtype=np.int64)
    header[L_SWING] = kind if swing is not None else SWING_NONE
    header[L_CFG_A], header[L_CFG_B] = _configs_of(first)
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


def _configs_of(controller):
    """(L_CFG_A, L_CFG_B) of a controller: (cart, pole), (active, passive) or (0, 0)."""
    swing = _parts(controller)[0]
    if type(swing) is CartPoleSwingUp:
        return int(swing.cart), int(swing.pole)
    if type(swing) is AcrobotSwingUp:
        return int(swing.active), int(swing.passive)
    return 0, 0


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
def collocated_terms(dyn, q, v, c):
    """The collocated partial feedback linearisation of config ``c`` at ``(q, v)`` with the
    controller model of ``dyn`` (:func:`control_law`): ``(f0_c, minv_cc)`` where ``f0 =
    M(q)^-1 (-bias)`` is the acceleration at zero input (bias from
    :func:`ros_vi.integrators.node_state.bias_terms`) and ``minv_cc = (M^-1)_cc``.  With
    one input on config c, the input [N m or N] giving c the acceleration ``a`` is
    ``(a - f0_c) / minv_cc`` -- exactly what :meth:`Controller._collocated_input` solves
    for.  nan when M is singular.  Overwrites the kernel scratch and dyn's Md, rhs, wk[0]."""
    (model, ks, qm, vm, zero, Md, Mw, rhs, wk) = dyn
    nd = v.shape[0]
    bias = wk[0]
    bias_terms(model, ks, qm, vm, q, v, Md, bias)
    for i in range(nd):
        rhs[i, 0] = -bias[i]
        rhs[i, 1] = 1.0 if i == c else 0.0
    # one factorisation for both right-hand sides
    if not kernel.solve_many_in_place(Md, rhs):
        return math.nan, math.nan
    return rhs[c, 0], rhs[c, 1]


# The two laws below evaluate the model's kernel (twice for the cart-pole).  They are
# separate compiled functions, not inlined into the rollout's parallel loop: inlined, they
# added ~23 s of CPU to a cold compile of the rollout (88 s without them), as calls ~11 s,
# and the call costs nothing measurable per tick (~8 us per cart-pole copy-tick either way).

@njit(cache=True)
def cartpole_input(law_ints, row, rest, q, v, dyn):
    """:class:`~ros_vi.control.CartPoleSwingUp`'s cart force [N] (not saturated) at
    ``(q, v)``, ``rest`` whether every |v_i| <= rest_speed; ``dyn`` as in
    :func:`control_law`."""
    (model, ks, qm, vm, zero, Md, Mw, rhs, wk) = dyn
    n = v.shape[0]
    cart, pole = law_ints[L_CFG_A], law_ints[L_CFG_B]
    # the pole's energy: the model's energy with the cart at rest
    vz, pz, sc = wk[0], wk[1], wk[2]
    for i in range(n):
        vz[i] = v[i]
    vz[cart] = 0.0
    Tp, Vp = momentum_energy(model, ks, qm, zero, Md, q, vz, pz, sc, Mw)
    err = (Tp + Vp) - row[law_ints[O_GOALE]]
    if rest and err < 0:
        accel = row[law_ints[O_KICK]]
    else:
        c = Mw[cart, pole] / row[law_ints[O_COUP]]
        pump = row[law_ints[O_KE]] * err * v[pole] * c
        a_max = row[law_ints[O_AMAX]]
        accel = (min(max(pump, -a_max), a_max)
                 - row[law_ints[O_KX]] * (q[cart] - row[law_ints[O_GOAL] + cart])
                 - row[law_ints[O_KV]] * v[cart])
    f0, minv = collocated_terms(dyn, q, v, cart)
    return (accel - f0) / minv


@njit(cache=True)
def acrobot_input(law_ints, row, rest, q, v, energy, dyn):
    """:class:`~ros_vi.control.AcrobotSwingUp`'s torque [N m] (not saturated) at ``(q,
    v)`` with the model's energy ``energy`` [J] there; ``rest`` and ``dyn`` as in
    :func:`cartpole_input`."""
    m = law_ints[L_M]
    act = law_ints[L_CFG_A]
    err = energy - row[law_ints[O_GOALE]]
    f0, minv = collocated_terms(dyn, q, v, act)
    if rest and err < 0:
        return (row[law_ints[O_KICK]] - f0) / minv
    # AcrobotSwingUp.pfl_terms: the torques for y = 0 and y = 1, then their difference
    h_bar = (0.0 - f0) / minv
    m_bar = (1.0 - f0) / minv - h_bar
    angles = law_ints[L_HEADER + m:]
    q_err = _wrapped(q[act] - row[law_ints[O_GOAL] + act], angles[act] != 0)
    k_e = row[law_ints[O_KE]]
    den = max(1.0 + k_e * err * m_bar, row[law_ints[O_DEN]])
    y = -(row[law_ints[O_KD]] * v[act] + row[law_ints[O_KP]] * q_err
          + k_e * err * h_bar) / den
    return m_bar * y + h_bar


@njit(cache=True, inline='always')
def discrete_momentum(in_cfg, applied, damping, v, dt, p):
    """``p (n,) <- p - dt/2 (efforts + F(v))``: from ``p = M_c(q) v`` the VI's discrete
    momentum a law sees, as :meth:`Controller.momentum` rebuilds it -- the efforts on the
    configs of the inputs ``applied (nu,)`` over the last tick (``in_cfg (nu,)`` each
    input's config, -1: none), ``F = -c v`` the model's Damping (``damping (n,)``), ``dt``
    [s] the tick."""
    n = p.shape[0]
    for i in range(n):
        effort = 0.0
        for j in range(in_cfg.shape[0]):
            if in_cfg[j] == i:
                effort += applied[j]
        p[i] -= 0.5 * dt * (effort + -damping[i] * v[i])


@njit(cache=True, inline='always')
def control_law(law_ints, row, balancing, q, v, p, energy, u, x, dyn):
    """The controller's efforts ``u (m,)`` [N m or N], saturated at its u_max, for the
    state ``q (n,)``, ``v (n,)`` with the controller model's momentum ``p = M_c(q) v`` and
    energy ``energy`` [J].  ``balancing (1,)`` int: the hand-over's mode, updated in place
    (1 balancing, 0 swinging up), as :class:`~ros_vi.control.SwingUpAndBalance` keeps it.
    ``x (2n,)`` is scratch.  Returns the LQR cost-to-go (nan without an LQR).

    ``dyn = (model_c, ks, qm, vm, zero, Md, Mw, rhs, wk)``: what the cart-pole and acrobot
    laws need to evaluate the controller's model at the state -- its packed views
    (``ros_vi.integrators.packed.model_views`` of the controller's constants), the kernel
    scratch (``packed.kernel_scratch``), scratch ``qm, vm, zero (nt,)``, ``Md, Mw (n, n)``,
    ``rhs (n, 2)``, ``wk (3, n)``; all overwritten.  The other laws do not touch it."""
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
    swing = law_ints[L_SWING]
    rest = True
    if swing != SWING_NONE:
        for i in range(n):
            if not abs(v[i]) <= row[law_ints[O_REST]]:
                rest = False
    if use_lqr:
        ub, K = law_ints[O_UBAR], law_ints[O_K]
        for a in range(m):
            acc = row[ub + a]
            for j in range(2 * n):
                acc -= row[K + 2 * n * a + j] * x[j]
            u[a] = acc
    elif swing == SWING_PENDULUM:
        err = energy - row[law_ints[O_GOALE]]
        if rest and err < 0:
            u[0] = row[law_ints[O_KICK]]
        else:
            w = -row[law_ints[O_KE]] * v[0] * err
            if row[law_ints[O_COMP]] != 0.0:
                # cancel the model's dissipative force -c v (Damping), so the pump works
                # against gravity alone
                w -= -row[law_ints[O_DAMP]] * v[0]
            u[0] = w
    elif swing == SWING_CARTPOLE:
        u[0] = cartpole_input(law_ints, row, rest, q, v, dyn)
    elif swing == SWING_ACROBOT:
        u[0] = acrobot_input(law_ints, row, rest, q, v, energy, dyn)
    else:
        for a in range(m):
            u[a] = 0.0
    um = law_ints[O_UMAX]
    for a in range(m):
        u[a] = min(max(u[a], -row[um + a]), row[um + a])
    return cost

