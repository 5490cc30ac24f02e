"""The compiled structure of a System: stacked arrays the kernels run on.

A :class:`Model` is rebuilt whenever the System's structure changes (frames, configs,
masses, gravity); it never holds state.

Joint coordinates and configs
-----------------------------
Every moving frame has one *joint coordinate* theta: a config's frame has the config's value,
and a *mimic frame* (URDF ``<mimic>``, :func:`~ros_vi.mechanics.frame.mimic`) follows a
config linearly, ``theta = multiplier * q_leader + offset``.  The kernels run on the
``nt = nq + n_mimic`` joint coordinates (configs first, then the mimic frames in frame order)
and every result is folded back onto the configs with the constant map ``theta = E q + b``
(``E`` (nt, nq), :attr:`Model.joint_map`): the Lagrangian's gradient becomes ``E^T grad``, its
second derivatives ``E^T H E``.  This is an exact reduction of coordinates: a mimic joint adds
no config, no constraint and no Newton unknown; its inertia enters its leader's column.  A state (q, dq, ddq, u, t) and the results
computed for it live in a :class:`~ros_vi.mechanics.data.Data` (``model.create_data()``);
the functions of :mod:`ros_vi.mechanics.dynamics` take ``(model, data)``.
"""
import numpy as np

from . import kernel
from .data import Data
from .frame import CONST_SE3, WORLD, TRANSFORM_KIND


class Model:
    """Frame tree and config tree as arrays (frames topologically ordered, world = 0).

    Attributes (nf frames, nq configs)
    ----------------------------------
    parent (nf,) int, kind (nf,) int, value (nf,) float, fcfg (nf,) int (-1: no config),
    fixedR (nf, 3, 3), fixedp (nf, 3): constant local transforms,
    mass (nf,), Ib (nf, 3, 3): inertia at each frame origin, mass_frames (nm,) int,
    fjoint (nf,) int: nearest config driving the frame or an ancestor (-1: world-fixed),
    Arrays indexed by joint coordinate (nt = nq + n_mimic; see the module docstring) ---
    fcfg (nf,): joint coordinate of each frame (-1: none),
    cframe (nt,) int, cparent (nt,) int, corder (nj,) int (coordinates with frames, parents
    first), anc (nt, nt) bool: ``anc[a, b]`` a drives an ancestor-or-self frame of b's frame,
    frame_anc (nf, nt) bool: coordinate c moves frame f, cdepth (nt,) int,
    :meth:`frame_chain` (f): the coordinates that move frame f, shallow to deep,
    mimic_frames (n_mimic,) int, mimic_leader (n_mimic,) int (a config),
    mimic_multiplier, mimic_offset (n_mimic,): theta[nq + k] = multiplier q[leader] + offset,
    gravity (3,) [m/s^2]: the gravity the kernel evaluates (sum of the Gravity potentials),
    nf, nq (configs), nt (joint coordinates), nd (dynamic configs), nu (inputs).
    """

    def __init__(self, frames, configs, nd, nu, gravity):
        nf = len(frames)
        nq = len(configs)
        index = {id(f): i for i, f in enumerate(frames)}
        cindex = {id(c): i for i, c in enumerate(configs)}
        mimics = [f for f in frames if f.mimic is not None]
        mindex = {id(f): nq + k for k, f in enumerate(mimics)}
        self.mimic_frames = np.array([index[id(f)] for f in mimics], dtype=np.int64)
        self.mimic_leader = np.array([cindex[id(f.mimic.leader)] for f in mimics],
                                     dtype=np.int64)
        self.mimic_multiplier = np.array([f.mimic.multiplier for f in mimics], dtype=float)
        self.mimic_offset = np.array([f.mimic.offset for f in mimics], dtype=float)
        nt = nq + len(mimics)
        self.parent = np.full(nf, -1, dtype=np.int64)
        self.kind = np.zeros(nf, dtype=np.int64)
        self.value = np.zeros(nf)
        self.fcfg = np.full(nf, -1, dtype=np.int64)
        self.fixedR = np.tile(np.eye(3), (nf, 1, 1))
        self.fixedp = np.zeros((nf, 3))
        self.mass = np.zeros(nf)
        self.Ib = np.zeros((nf, 3, 3))
        self.fjoint = np.full(nf, -1, dtype=np.int64)
        self.cframe = np.full(nt, -1, dtype=np.int64)
        self.cparent = np.full(nt, -1, dtype=np.int64)
        self.frame_anc = np.zeros((nf, nt), dtype=np.bool_)
        self.cdepth = np.zeros(nt, dtype=np.int64)
        mass_frames = []
        corder = []
        chains = [()] * nf
        for i, f in enumerate(frames):
            par = f.parent
            if par is not None:
                self.parent[i] = index[id(par)]
                self.frame_anc[i] = self.frame_anc[self.parent[i]]
                self.fjoint[i] = self.fjoint[self.parent[i]]
                chains[i] = chains[self.parent[i]]
            self.kind[i] = TRANSFORM_KIND[f.transform_type]
            self._set_constant(i, f)
            if f.config is not None or f.mimic is not None:
                c = cindex[id(f.config)] if f.config is not None else mindex[id(f)]
                self.fcfg[i] = c
                self.cframe[c] = i
                self.cparent[c] = self.fjoint[i]
                self.cdepth[c] = int(self.frame_anc[i].sum())
                self.frame_anc[i, c] = True
                self.fjoint[i] = c
                chains[i] = chains[i] + (c,)
                corder.append(c)
            inertia = f.inertia
            if f.mass != 0.0 or np.any(inertia != 0.0):
                self.mass[i] = f.mass
                self.Ib[i] = inertia
                mass_frames.append(i)
        self.mass_frames = np.array(mass_frames, dtype=np.int64)
        # a frame's chain is its parent's and its own coordinate below: shallow to deep
        self._chains = [np.array(c, dtype=np.int64) for c in chains]
        for c in self._chains:
            c.flags.writeable = False
        self.corder = np.array(corder, dtype=np.int64)
        self.anc = np.zeros((nt, nt), dtype=np.bool_)
        for c in corder:
            self.anc[:, c] = self.frame_anc[self.cframe[c]]
        self.nf, self.nq, self.nt, self.nd, self.nu = nf, nq, nt, int(nd), int(nu)
        self.gravity = np.array(gravity, dtype=float)
        E = np.zeros((nt, nq))
        E[np.arange(nq), np.arange(nq)] = 1.0
        E[nq + np.arange(len(mimics)), self.mimic_leader] = self.mimic_multiplier
        self._joint_map = E
        self._coordinates = [[(1.0, c)] for c in range(nq)]
        for k, lead in enumerate(self.mimic_leader):
            self._coordinates[lead].append((float(self.mimic_multiplier[k]), nq + k))

    def frame_chain(self, f):
        """The joint coordinates that move frame ``f`` (int array, read only), ordered shallow
        to deep (each deeper one's frame lies below the shallower one's); every derivative of
        the frame's pose in another coordinate is zero."""
        return self._chains[f]

    def config_coordinates(self, c):
        """``[(rate, theta)]``: the joint coordinates config ``c`` drives and d theta/d q_c
        (itself with rate 1, then every mimic frame that follows it)."""
        return self._coordinates[c]

    def config_moves_frame(self, c, f):
        """True if config ``c`` moves frame ``f`` (through its own frame or a mimic)."""
        return any(self.frame_anc[f, t] for _, t in self._coordinates[c])

    @property
    def has_mimic(self):
        """True if some frame follows a config (nt > nq)."""
        return self.nt > self.nq

    @property
    def joint_map(self):
        """``E`` (nt, nq): d theta / d q, the constant map from configs to joint coordinates
        (identity on the configs; ``multiplier`` at (mimic, leader))."""
        return self._joint_map.copy()

    def joint_positions(self, q, dq=None):
        """Joint coordinates theta (nt,) at configs ``q`` (nq,), and their rates if ``dq`` is
        given: ``(theta, dtheta)``.  Without mimic frames theta is q itself (not a copy)."""
        if not self.has_mimic:
            return q if dq is None else (q, dq)
        theta = np.empty(self.nt, dtype=np.result_type(q, float))
        dtheta = np.empty(self.nt, dtype=theta.dtype)
        kernel.expand_into(np.asarray(q, dtype=theta.dtype),
                           np.zeros(self.nq, dtype=theta.dtype) if dq is None
                           else np.asarray(dq, dtype=theta.dtype), self.mimic_leader,
                           self.mimic_multiplier, self.mimic_offset, theta, dtheta)
        return theta if dq is None else (theta, dtheta)

    def fold(self, array, axes=(0,)):
        """Derivatives over joint coordinates folded onto configs: ``E^T`` applied along each
        of ``axes`` of ``array`` (each of length nt, made nq), as a new C-contiguous array
        (compiled, O(n_mimic) per line of the array).  Returned as is without mimic
        frames."""
        if not self.has_mimic:
            return array
        out = np.array(array, dtype=np.result_type(array, float), order='C')
        shape = out.shape
        keep = [slice(None)] * out.ndim
        for ax in axes:
            ax %= out.ndim
            # E^T along one axis is a fold of the (before, nt, after) view; folding the axes
            # one after the other over their full length gives E^T ... E on every pair
            kernel.fold_axis(out.reshape(int(np.prod(shape[:ax])), shape[ax],
                                         int(np.prod(shape[ax + 1:]))),
                             self.nq, self.mimic_leader, self.mimic_multiplier)
            keep[ax] = slice(0, self.nq)
        return np.ascontiguousarray(out[tuple(keep)])

    def create_data(self):
        """A new :class:`Data` (zero state) sized for this model."""
        return Data(self.nq, self.nu)

    def _set_constant(self, i, frame):
        """Frame i's constant transform: the CONST_SE3 pose, or the parameter of a
        one-parameter transform without a config."""
        if frame.transform_type == CONST_SE3:
            se3 = frame.transform_value
            self.fixedR[i] = se3[:3, :3]
            self.fixedp[i] = se3[:3, 3]
        elif (frame.transform_type != WORLD and frame.config is None
              and frame.mimic is None):
            self.value[i] = frame.transform_value

    def update_constants(self, frames):
        """Refresh constant transform parameters in place (no structural change)."""
        for i, f in enumerate(frames):
            self._set_constant(i, f)

    # Argument tuples for the kernels, in their positional order.
    def tree_args(self):
        return (self.parent, self.kind, self.value, self.fcfg, self.fixedR, self.fixedp)

    def dyn_args(self):
        return (self.parent, self.kind, self.value, self.fcfg, self.fixedR, self.fixedp,
                self.mass, self.Ib, self.mass_frames, self.fjoint, self.cframe,
                self.cparent, self.corder)

    def kinematics(self, q):
        """World rotations (nf, 3, 3), origins (nf, 3) and joint-coordinate twists (nt, 6)
        at configs ``q`` (nq,)."""
        theta = self.joint_positions(q)
        R, P = kernel.forward_kinematics(*self.tree_args(), theta)
        S = kernel.joint_twists(self.kind, self.cframe, self.corder, R, P, self.nt)
        return R, P, S

    def lagrangian_terms(self, gvec, q, dq):
        """Kinetic-minus-gravity terms ``(Lq, Lv, M, Lvq, Lqq, T, Vg)`` at ``(q, dq)``, all
        over configs (nq,) / (nq, nq)."""
        args = self.dyn_args()
        if not self.has_mimic:
            return kernel.lagrangian_terms(*args, self.anc, gvec, q, dq)
        theta, dtheta = self.joint_positions(q, dq)
        Lq, Lv, M, Lvq, Lqq, T, Vg = kernel.lagrangian_terms(*args, self.anc, gvec, theta,
                                                              dtheta)
        nq, lead, mult = self.nq, self.mimic_leader, self.mimic_multiplier
        for x in (Lq, Lv):
            kernel.fold_vector(x, nq, lead, mult)
        for A in (M, Lvq, Lqq):
            kernel.fold_matrix(A, nq, lead, mult)
        return (Lq[:nq].copy(), Lv[:nq].copy(), M[:nq, :nq].copy(), Lvq[:nq, :nq].copy(),
                Lqq[:nq, :nq].copy(), T, Vg)

    def first_order(self, gvec, q, dq, with_kinematics=False):
        """``(Lq, Lv, T, Vg)`` only (one O(n) pass), over configs; with ``with_kinematics``
        also the ``(R, P, S)`` of :meth:`kinematics` that the pass computes on the way
        (``S`` over joint coordinates, (nt, 6))."""
        if not self.has_mimic:
            out = kernel.first_order(*self.dyn_args(), gvec, q, dq)
            Lq, Lv = out[6], out[7]
        else:
            theta, dtheta = self.joint_positions(q, dq)
            out = kernel.first_order(*self.dyn_args(), gvec, theta, dtheta)
            Lq, Lv = out[6], out[7]
            for x in (Lq, Lv):
                kernel.fold_vector(x, self.nq, self.mimic_leader, self.mimic_multiplier)
            Lq, Lv = Lq[:self.nq].copy(), Lv[:self.nq].copy()
        if with_kinematics:
            return Lq, Lv, out[8], out[9], (out[0], out[1], out[2])
        return Lq, Lv, out[8], out[9]
