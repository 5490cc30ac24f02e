"""The compiled structure of a System: stacked arrays the kernels run on.

A :class:`Model` is rebuilt whenever the System's structure changes (frames, configs,
masses, gravity); it never holds state.  A state (q, dq, ddq, u, t) and the results
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
    cframe (nq,) int, cparent (nq,) int, corder (nj,) int (configs with frames, parents first),
    anc (nq, nq) bool: ``anc[a, b]`` a drives an ancestor-or-self frame of b's frame,
    frame_anc (nf, nq) bool: config c moves frame f, cdepth (nq,) int,
    gravity (3,) [m/s^2]: the gravity the kernel evaluates (sum of the Gravity potentials),
    nf, nq, nd (dynamic configs), nu (inputs).
    """

    def __init__(self, frames, configs, nd, nu, gravity):
        nf = len(frames)
        nq = len(configs)
        index = {id(f): i for i, f in enumerate(frames)}
        cindex = {id(c): i for i, c in enumerate(configs)}
        self.parent = np.full(nf, -1, dtype=np.int64)
        self.kind = np.zeros(nf, dtype=np.int64)
        self.value = np.zeros(nf)
        self.fcfg = np.full(nf, -1, dtype=np.int64)
        self.fixedR = np.tile(np.eye(3), (nf, 1, 1))
        self.fixedp = np.zeros((nf, 3))
        self.mass = np.zeros(nf)
        self.Ib = np.zeros((nf, 3, 3))
        self.fjoint = np.full(nf, -1, dtype=np.int64)
        self.cframe = np.full(nq, -1, dtype=np.int64)
        self.cparent = np.full(nq, -1, dtype=np.int64)
        self.frame_anc = np.zeros((nf, nq), dtype=np.bool_)
        self.cdepth = np.zeros(nq, dtype=np.int64)
        mass_frames = []
        corder = []
        for i, f in enumerate(frames):
            par = f.parent
            if par is not None:
                self.parent[i] = index[id(par)]
                self.frame_anc[i] = self.frame_anc[self.parent[i]]
                self.fjoint[i] = self.fjoint[self.parent[i]]
            self.kind[i] = TRANSFORM_KIND[f.transform_type]
            self._set_constant(i, f)
            if f.config is not None:
                c = cindex[id(f.config)]
                self.fcfg[i] = c
                self.cframe[c] = i
                self.cparent[c] = self.fjoint[i]
                self.cdepth[c] = int(self.frame_anc[i].sum())
                self.frame_anc[i, c] = True
                self.fjoint[i] = c
                corder.append(c)
            inertia = f.inertia
            if f.mass != 0.0 or np.any(inertia != 0.0):
                self.mass[i] = f.mass
                self.Ib[i] = inertia
                mass_frames.append(i)
        self.mass_frames = np.array(mass_frames, dtype=np.int64)
        self.corder = np.array(corder, dtype=np.int64)
        self.anc = np.zeros((nq, nq), dtype=np.bool_)
        for c in corder:
            self.anc[:, c] = self.frame_anc[self.cframe[c]]
        self.nf, self.nq, self.nd, self.nu = nf, nq, int(nd), int(nu)
        self.gravity = np.array(gravity, dtype=float)

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
        elif frame.transform_type != WORLD and frame.config is None:
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
        """World rotations (nf, 3, 3), origins (nf, 3) and config twists (nq, 6) at ``q``."""
        R, P = kernel.forward_kinematics(*self.tree_args(), q)
        S = kernel.joint_twists(self.kind, self.cframe, self.corder, R, P, self.nq)
        return R, P, S

    def lagrangian_terms(self, gvec, q, dq):
        """Kinetic-minus-gravity terms ``(Lq, Lv, M, Lvq, Lqq, T, Vg)`` at ``(q, dq)``."""
        args = self.dyn_args()
        return kernel.lagrangian_terms(*args, self.anc, gvec, q, dq)

    def first_order(self, gvec, q, dq, with_kinematics=False):
        """``(Lq, Lv, T, Vg)`` only (one O(n) pass); with ``with_kinematics`` also the
        ``(R, P, S)`` of :meth:`kinematics` that the pass computes on the way."""
        out = kernel.first_order(*self.dyn_args(), gvec, q, dq)
        if with_kinematics:
            return out[6], out[7], out[8], out[9], (out[0], out[1], out[2])
        return out[6], out[7], out[8], out[9]
