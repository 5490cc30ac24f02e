"""Compiled step for the common case: a frame tree with built-in terms only.

When a System has no constraints and its only potentials and forces are ``Gravity``,
``ConfigSpring``, ``Damping`` and ``ConfigForce``, a whole step runs in one numba call:
predictor, Newton iterations on the DEL with the exact Jacobian, p2 and the midpoint state.
Every other system uses the general path in :mod:`midpointvi`, which gives the same answer
(tests compare the two).

Why packed arrays: numba checks the type of every argument on each call (about 0.2 us per
argument), so the model, parameters and per-step state travel in three flat arrays
(ints ``I``, constants ``F``, step state/work ``W``) whose layout is fixed by the sizes in
the header of ``I``.  See :func:`_layout` for the layout; it is the only place that defines it.
"""
import numpy as np

from ..mechanics import kernel
from ..mechanics.forces.configforce import ConfigForce
from ..mechanics.forces.damping import Damping
from ..mechanics.kernel import first_order_into, njit, second_order_into
from ..mechanics.potentials.configspring import ConfigSpring
from ..mechanics.potentials.gravity import Gravity

OK, NOT_CONVERGED, NOT_FINITE, SINGULAR, BAD_INPUT = 0, 1, 2, 3, 4
HISTORY = 5          # stored past configurations for the order-4 predictor
ROUNDING = 64 * np.finfo(np.float64).eps   # residual floor relative to its terms' size
STALLED = 8 * np.finfo(np.float64).eps     # a Newton update this small (relative) changes
                                           # nothing: the iterate is converged to rounding
STALL_ACCEPT = np.sqrt(np.finfo(np.float64).eps)   # ... if the residual is this small
                                                   # relative to its terms' size
_H = 16              # header length of I

# header fields of I
_NF, _NQ, _ND, _NU, _NJ, _NM, _NSP, _MAXIT, _NHIST, _STATUS, _ITERS = range(11)


@njit(cache=True)
def _layout(I):
    """Offsets into I, F and W from the sizes in I's header (shared by pack and step)."""
    nf, nq, nd, nu, nj, nm, nsp = I[0], I[1], I[2], I[3], I[4], I[5], I[6]
    o = np.empty(64, dtype=np.int64)
    # I: parent, kind, fcfg, fjoint (nf each), cframe, cparent (nq), corder (nj),
    #    mass_frames (nm), anc (nq*nq), sp_idx (nsp), in_cfg (nu)
    o[0] = _H
    o[1] = o[0] + nf
    o[2] = o[1] + nf
    o[3] = o[2] + nf
    o[4] = o[3] + nf
    o[5] = o[4] + nq
    o[6] = o[5] + nq
    o[7] = o[6] + nj
    o[8] = o[7] + nm
    o[9] = o[8] + nq * nq
    o[10] = o[9] + nsp
    o[11] = o[10] + nu            # end of I
    # F: value, mass (nf), fixedR (9 nf), fixedp (3 nf), Ib (9 nf), gvec (3), damping (nq),
    #    sp_k, sp_q0 (nsp)
    o[12] = 0
    o[13] = nf
    o[14] = 2 * nf
    o[15] = 11 * nf
    o[16] = 14 * nf
    o[17] = 23 * nf
    o[18] = o[17] + 3
    o[19] = o[18] + nq
    o[20] = o[19] + nsp
    o[21] = o[20] + nsp           # end of F
    # W: dt, tol, rnorm, t2 | integrator state q1 (nq), p1 (nd), q2 (nq), p2 (nd), u1 (nu) |
    #    inputs u_in (nu), k_in (nq - nd) | hist (HISTORY nq, oldest first), hist_t (HISTORY) |
    #    work q2n (nq), p2n (nd), qm (nq), v (nq)
    o[22] = 4
    o[23] = o[22] + nq            # p1
    o[24] = o[23] + nd            # q2
    o[25] = o[24] + nq            # p2
    o[26] = o[25] + nd            # u1
    o[27] = o[26] + nu            # u_in
    o[28] = o[27] + nu            # k_in
    o[29] = o[28] + nq - nd       # hist
    o[30] = o[29] + HISTORY * nq  # hist_t
    o[31] = o[30] + HISTORY       # q2n
    o[32] = o[31] + nq            # p2n
    o[33] = o[32] + nd            # qm
    o[34] = o[33] + nq            # v
    # scratch for the kernels (so a step allocates nothing): R, P, S, V, Vp, Ic, h, G, Lq, Lv,
    # M, Lvq, Lqq, u, w, z, gk, tmp, J, r, force, dlt, vel, Md, zero
    sizes = (9 * nf, 3 * nf, 6 * nq, 6 * nq, 6 * nq, 36 * nq, 6 * nq, 36, nq, nq,
             nq * nq, nq * nq, nq * nq, 6 * nq, 6 * nq, 6 * nq, 6 * nq, 18, nd * nd, nd, nd,
             nq, nd, nd * nd, nq)
    o[35] = o[34] + nq
    for j in range(len(sizes)):
        o[36 + j] = o[35 + j] + sizes[j]
    return o                      # o[60]: end of W


@njit(cache=True)
def _model_views(I, F, o):
    """The model arrays and built-in parameters as views into the packed I and F."""
    nf, nq = I[0], I[1]
    return (I[o[0]:o[1]], I[o[1]:o[2]], F[o[12]:o[13]], I[o[2]:o[3]],
            F[o[14]:o[15]].reshape((nf, 3, 3)), F[o[15]:o[16]].reshape((nf, 3)),
            F[o[13]:o[14]], F[o[16]:o[17]].reshape((nf, 3, 3)), I[o[7]:o[8]], I[o[3]:o[4]],
            I[o[4]:o[5]], I[o[5]:o[6]], I[o[6]:o[7]], I[o[8]:o[9]].reshape((nq, nq)),
            F[o[17]:o[18]], F[o[18]:o[19]], I[o[9]:o[10]], F[o[19]:o[20]], F[o[20]:o[21]],
            I[o[10]:o[11]])


@njit(cache=True)
def step_packed(I, F, W):
    """One VI step from the packed state; results in W (q2, p2, qm, v) and I's header."""
    o = _layout(I)
    nf, nq, nd, nu, nj, nm, nsp = I[0], I[1], I[2], I[3], I[4], I[5], I[6]
    max_iter = I[_MAXIT]
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg) = _model_views(I, F, o)
    dt, tol = W[0], W[1]
    # the step starts from the integrator's current state (q2, p2) ...
    q1 = W[o[24]:o[25]]
    p1 = W[o[25]:o[26]]
    u1 = W[o[27]:o[28]]
    k2 = W[o[28]:o[29]]
    hist = W[o[29]:o[30]].reshape((HISTORY, nq))
    hist_t = W[o[30]:o[31]]
    # ... and solves for the new one
    q2 = W[o[31]:o[32]]
    p2 = W[o[32]:o[33]]
    qm = W[o[33]:o[34]]
    v = W[o[34]:o[35]]
    R = W[o[35]:o[36]].reshape((nf, 3, 3))
    P = W[o[36]:o[37]].reshape((nf, 3))
    S = W[o[37]:o[38]].reshape((nq, 6))
    V = W[o[38]:o[39]].reshape((nq, 6))
    Vp = W[o[39]:o[40]].reshape((nq, 6))
    Ic = W[o[40]:o[41]].reshape((nq, 6, 6))
    h = W[o[41]:o[42]].reshape((nq, 6))
    G = W[o[42]:o[43]].reshape((6, 6))
    Lq = W[o[43]:o[44]]
    Lv = W[o[44]:o[45]]
    M = W[o[45]:o[46]].reshape((nq, nq))
    Lvq = W[o[46]:o[47]].reshape((nq, nq))
    Lqq = W[o[47]:o[48]].reshape((nq, nq))
    su = W[o[48]:o[49]].reshape((nq, 6))
    sw = W[o[49]:o[50]].reshape((nq, 6))
    sz = W[o[50]:o[51]].reshape((nq, 6))
    sg = W[o[51]:o[52]].reshape((nq, 6))
    tmp = W[o[52]:o[53]].reshape((3, 6))
    J = W[o[53]:o[54]].reshape((nd, nd))
    r = W[o[54]:o[55]]
    force = W[o[55]:o[56]]
    dlt = W[o[56]:o[57]]
    vel = W[o[57]:o[58]]
    Md = W[o[58]:o[59]].reshape((nd, nd))
    zero = W[o[59]:o[60]]
    for i in range(nd):
        q2[i] = q1[i]
    for i in range(nd, nq):
        q2[i] = k2[i - nd]

    # usable history: trailing configurations spaced dt apart, ending at (t1, q1)
    t1 = W[3] - dt
    eps = 1e-12 * max(1.0, abs(W[3]))
    nhist = min(I[_NHIST], HISTORY)
    if nhist > 0 and abs(hist_t[HISTORY - 1] - t1) > eps:
        nhist = 0
    if nhist == 0:
        hist_t[HISTORY - 1] = t1
        for i in range(nq):
            hist[HISTORY - 1, i] = q1[i]
        nhist = 1
    usable = 1
    for j in range(1, nhist):
        step_j = hist_t[HISTORY - j] - hist_t[HISTORY - 1 - j]
        if abs(step_j - dt) > eps:
            break
        usable += 1
    nhist = usable

    for j in range(nu):
        if not np.isfinite(u1[j]):
            I[_STATUS] = BAD_INPUT
            I[_ITERS] = 0
            return
    for i in range(nd, nq):
        if not np.isfinite(q2[i]):
            I[_STATUS] = BAD_INPUT
            I[_ITERS] = 0
            return

    # Predictor: extrapolate equally spaced past configurations (binomial weights);
    # with less history, a momentum step q1 + dt M(q1)^-1 p1.
    order = min(nhist - 1, HISTORY - 1)
    if order >= 2:
        for i in range(nd):
            acc = 0.0
            binom = 1.0
            for j in range(order + 1):
                # weight (-1)^j C(order+1, j+1) on the j-th most recent configuration
                binom = binom * (order + 1 - j) / (j + 1)
                w = binom if j % 2 == 0 else -binom
                acc += w * hist[HISTORY - 1 - j, i]
            q2[i] = acc
    elif nd > 0:
        for i in range(nq):
            zero[i] = 0.0
        first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames,
                         fjoint, cframe, cparent, corder, gvec, q1, zero, R, P, S, V, Vp, Ic,
                         h, G, Lq, Lv)
        second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, su, sw, sz, sg, tmp)
        ok = True
        for i in range(nd):
            vel[i] = p1[i]
            if not M[i, i] > 0.0:
                ok = False
            for j in range(nd):
                Md[i, j] = M[i, j]
        if ok and kernel.solve_in_place(Md, vel):
            for i in range(nd):
                q2[i] = q1[i] + dt * vel[i]
        else:
            for i in range(nd):
                q2[i] = q1[i]

    # Newton works on the increment dlt = q2 - q1: the velocity dlt/dt then carries no
    # cancellation error even when q is large (a free joint that has turned many times).
    for i in range(nq):
        dlt[i] = q2[i] - q1[i]
    it = 0
    status = NOT_CONVERGED
    rnorm = np.inf
    stalled = False
    while True:
        for i in range(nq):
            qm[i] = q1[i] + 0.5 * dlt[i]
            v[i] = dlt[i] / dt
        first_order_into(parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames,
                         fjoint, cframe, cparent, corder, gvec, qm, v, R, P, S, V, Vp, Ic, h, G,
                         Lq, Lv)
        for j in range(nsp):
            Lq[sp_idx[j]] -= sp_k[j] * (qm[sp_idx[j]] - sp_q0[j])
        acc = 0.0
        scale = 0.0
        for i in range(nd):
            f = -damping[i] * v[i]
            for j in range(nu):
                if in_cfg[j] == i:
                    f += u1[j]
            force[i] = f
            r[i] = p1[i] + 0.5 * dt * Lq[i] - Lv[i] + dt * f
            acc += r[i] * r[i]
            mag = abs(p1[i]) + abs(0.5 * dt * Lq[i]) + abs(Lv[i]) + abs(dt * f)
            scale += mag * mag
        rnorm = np.sqrt(acc)
        if not np.isfinite(rnorm):
            status = NOT_FINITE
            break
        # converged: within tolerance, or within rounding of the residual's own terms
        if (rnorm <= max(tol, ROUNDING * np.sqrt(scale))
                or (stalled and rnorm <= STALL_ACCEPT * np.sqrt(scale))):
            status = OK
            # p2 = D2Ld, written as p1 + D1Ld + D2Ld + f- (equal at the root): the
            # momentum update then does not inherit the solver residual, so momenta of
            # cyclic configs are conserved to rounding
            for i in range(nq):
                q2[i] = q1[i] + dlt[i]
            for i in range(nd):
                p2[i] = p1[i] + dt * (Lq[i] + force[i])
            # shift the history and append (t2, q2)
            for j in range(HISTORY - 1):
                hist_t[j] = hist_t[j + 1]
                for i in range(nq):
                    hist[j, i] = hist[j + 1, i]
            hist_t[HISTORY - 1] = W[3]
            for i in range(nq):
                hist[HISTORY - 1, i] = q2[i]
            I[_NHIST] = min(nhist + 1, HISTORY)
            # commit: (q1, p1) <- (q2, p2) <- new; u1 <- u_in
            for i in range(nq):
                W[o[22] + i] = q1[i]
                q1[i] = q2[i]
            for i in range(nd):
                W[o[23] + i] = p1[i]
                p1[i] = p2[i]
            for j in range(nu):
                W[o[26] + j] = u1[j]
            break
        if it >= max_iter:
            break
        second_order_into(S, Vp, Ic, h, gvec, anc, corder, M, Lvq, Lqq, su, sw, sz, sg, tmp)
        for j in range(nsp):
            Lqq[sp_idx[j], sp_idx[j]] -= sp_k[j]
        for a in range(nd):
            for b in range(nd):
                J[a, b] = (0.25 * dt * Lqq[a, b] + 0.5 * (Lvq[b, a] - Lvq[a, b])
                           - M[a, b] / dt)
            J[a, a] -= damping[a]
        singular = False
        for a in range(nd):
            if M[a, a] == 0.0:
                singular = True
        if singular or not kernel.solve_in_place(J, r):
            status = SINGULAR
            break
        big_step = 0.0
        big_x = 0.0
        for i in range(nd):
            big_step = max(big_step, abs(r[i]))
            big_x = max(big_x, abs(dlt[i]))
            dlt[i] -= r[i]
        stalled = big_step <= STALLED * big_x
        it += 1
    W[2] = rnorm
    I[_STATUS] = status
    I[_ITERS] = it


@njit(cache=True)
def derivatives_packed(I, F, W, t1, t2, Zq, Zp):
    """First derivatives of (q2_d, p2) w.r.t. x = (q1, p1, u1, k2) at the integrator's
    current step (q1, q2 from the state in W), written into ``Zq``, ``Zp`` (nd, nX).

    Same formulas as the general path (``MidpointVI._calc_deriv1``): with J2, J1 the
    partials of D1Ld + f- and P2, P1 those of D2Ld w.r.t. q2 and q1 at the midpoint,
    ``dq2 = -J2_dd^-1 [J1, I, Fu, J2_dk]`` and ``dp2 = P2_dd dq2 + [P1, 0, 0, P2_dk]``.
    Returns False if J2_dd is singular.
    """
    o = _layout(I)
    nf, nq, nd, nu = I[0], I[1], I[2], I[3]
    nk = nq - nd
    (parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
     cparent, corder, anc, gvec, damping, sp_idx, sp_k, sp_q0, in_cfg) = _model_views(I, F, o)
    q1 = W[o[22]:o[23]]
    q2 = W[o[24]:o[25]]
    dt = t2 - t1
    qm = np.empty(nq)
    v = np.empty(nq)
    for i in range(nq):
        d = q2[i] - q1[i]
        qm[i] = q1[i] + 0.5 * d
        v[i] = d / dt
    R, P, S, Vp, Ic, h, Lq, Lv, T, Vg = kernel.first_order(
        parent, kind, value, fcfg, fixedR, fixedp, mass, Ib, mass_frames, fjoint, cframe,
        cparent, corder, gvec, qm, v)
    M, Lvq, Lqq = kernel.second_order(S, Vp, Ic, h, gvec, anc, corder)
    for j in range(sp_idx.shape[0]):
        Lqq[sp_idx[j], sp_idx[j]] -= sp_k[j]
    nX = nq + nd + nu + nk
    K = nq + nd + nu                      # first k2 column
    A = np.empty((nd, nd))
    P2d = np.empty((nd, nd))
    B = np.zeros((nd, nX))                # right-hand sides, then dq2/dx
    for a in range(nd):
        for b in range(nX):
            Zp[a, b] = 0.0                # direct part of dp2/dx first
        for b in range(nq):
            lqq = 0.25 * dt * Lqq[a, b]
            skew = 0.5 * (Lvq[b, a] - Lvq[a, b])
            sym = 0.5 * (Lvq[b, a] + Lvq[a, b])
            fv = -damping[a] if a == b else 0.0
            j2 = lqq + skew - M[a, b] / dt + fv
            j1 = lqq - sym + M[a, b] / dt - fv
            p2 = lqq + sym + M[a, b] / dt
            p1 = lqq - 0.5 * Lvq[b, a] + 0.5 * Lvq[a, b] - M[a, b] / dt
            B[a, b] = -j1
            Zp[a, b] = p1
            if b < nd:
                A[a, b] = j2
                P2d[a, b] = p2
            else:
                B[a, K + b - nd] = -j2
                Zp[a, K + b - nd] = p2
        B[a, nq + a] = -1.0
    for j in range(nu):
        c = in_cfg[j]
        if 0 <= c < nd:
            B[c, nq + nd + j] = -dt
    if not kernel.solve_many_in_place(A, B):
        return False
    for a in range(nd):
        for b in range(nX):
            Zq[a, b] = B[a, b]
            acc = Zp[a, b]
            for c in range(nd):
                acc += P2d[a, c] * B[c, b]
            Zp[a, b] = acc
    return True


class FastStepper:
    """Packs a System for :func:`step_packed` (``for_system`` returns None when the system
    needs the general path)."""

    _ALLOWED_POTENTIALS = (Gravity, ConfigSpring)
    _ALLOWED_FORCES = (Damping, ConfigForce)

    @classmethod
    def for_system(cls, system):
        if system.nc:
            return None
        if any(type(p) not in cls._ALLOWED_POTENTIALS for p in system.potentials):
            return None
        if any(type(f) not in cls._ALLOWED_FORCES for f in system.forces):
            return None
        return cls(system)

    def __init__(self, system):
        self._system = system
        model = system.model
        nf, nq, nd, nu = model.nf, model.nq, system.nQd, system.nu
        self._springs = [p for p in system.potentials if type(p) is ConfigSpring]
        self._dampers = [f for f in system.forces if type(f) is Damping]
        nsp = len(self._springs)
        sizes = np.zeros(_H, dtype=np.int64)
        sizes[:7] = (nf, nq, nd, nu, len(model.corder), len(model.mass_frames), nsp)
        o = _layout(sizes)
        I = np.zeros(o[11], dtype=np.int64)
        I[:_H] = sizes
        I[o[0]:o[1]] = model.parent
        I[o[1]:o[2]] = model.kind
        I[o[2]:o[3]] = model.fcfg
        I[o[3]:o[4]] = model.fjoint
        I[o[4]:o[5]] = model.cframe
        I[o[5]:o[6]] = model.cparent
        I[o[6]:o[7]] = model.corder
        I[o[7]:o[8]] = model.mass_frames
        I[o[8]:o[9]] = model.anc.astype(np.int64).ravel()
        I[o[9]:o[10]] = [p.config.index for p in self._springs]
        in_cfg = np.full(nu, -1, dtype=np.int64)
        for f in system.forces:
            if type(f) is ConfigForce:
                in_cfg[f.finput.index] = f.config.index
        I[o[10]:o[11]] = in_cfg
        self._I, self._o = I, o
        self._F = np.zeros(o[21])
        self._W = np.zeros(o[60])
        self._nd, self._nq, self._nu = nd, nq, nu
        self._version = -1
        W = self._W
        self.u_in = W[o[27]:o[28]]
        self.k_in = W[o[28]:o[29]]
        self._hist = W[o[29]:o[30]].reshape(HISTORY, nq)
        self._hist_t = W[o[30]:o[31]]
        self.qm = W[o[33]:o[34]]       # midpoint configuration of the last step (nQ,)
        self.v = W[o[34]:o[35]]        # midpoint velocity (q2 - q1)/dt of the last step

    def state_views(self):
        """Views (q1, p1, q2, p2, u1) into the packed state: the integrator keeps its state
        here so a step needs no copies in Python."""
        o, W = self._o, self._W
        return (W[o[22]:o[23]], W[o[23]:o[24]], W[o[24]:o[25]], W[o[25]:o[26]],
                W[o[26]:o[27]])

    def _refresh_constants(self):
        """Copy the model constants and built-in parameters into F (cheap; every step,
        so that changed spring constants, damping or gravity take effect)."""
        self._version = self._system.parameter_version
        model, o, F = self._system.model, self._o, self._F
        nf = model.nf
        F[o[12]:o[13]] = model.value
        F[o[13]:o[14]] = model.mass
        F[o[14]:o[15]] = model.fixedR.reshape(9 * nf)
        F[o[15]:o[16]] = model.fixedp.reshape(3 * nf)
        F[o[16]:o[17]] = model.Ib.reshape(9 * nf)
        F[o[17]:o[18]] = model.gravity
        d = F[o[18]:o[19]]
        d[:] = 0.0
        for damper in self._dampers:
            d += damper.coefficient_vector()
        for j, spring in enumerate(self._springs):
            F[o[19] + j] = spring.k
            F[o[20] + j] = spring.q0

    def reset_history(self, times=(), configs=()):
        """Forget the predictor history, optionally seeding it with known (t, q) pairs
        (oldest first)."""
        n = len(times)
        self._I[_NHIST] = n
        if n:
            self._hist_t[HISTORY - n:] = times
            self._hist[HISTORY - n:] = configs

    def step(self, t1, t2, tolerance, max_iterations):
        """Step from time t1 to t2 with the inputs already in ``u_in``/``k_in``.

        Returns ``(status, iterations, rnorm)``.  On OK the state views hold the new state
        and the history has advanced; otherwise nothing changed.
        """
        if self._version != self._system.parameter_version:
            self._refresh_constants()
        W, I = self._W, self._I
        W[0] = t2 - t1
        W[1] = tolerance
        W[3] = t2
        I[_MAXIT] = max_iterations
        step_packed(I, self._F, W)
        return I.item(_STATUS), I.item(_ITERS), W.item(2)

    def derivatives(self, t1, t2):
        """dq2/dx and dp2/dx (nd, nX) for x = (q1, p1, u1, k2) at the current state, or
        None if the DEL Jacobian is singular."""
        if self._version != self._system.parameter_version:
            self._refresh_constants()
        nd, nq, nu = self._nd, self._nq, self._nu
        nX = 2 * nq + nu
        Zq = np.empty((nd, nX))
        Zp = np.empty((nd, nX))
        if not derivatives_packed(self._I, self._F, self._W, t1, t2, Zq, Zp):
            return None
        return Zq, Zp
