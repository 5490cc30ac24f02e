"""PD drives on configs: how position and velocity commands act inside the VI step.

A drive is an actuator that follows a target instead of applying a commanded torque.  On
the midpoint VI it is a force like any other, evaluated where the VI evaluates forces (the
midpoint q = (q1 + q2)/2, dq = (q2 - q1)/dt), so its stiffness enters the step's Newton
Jacobian and a stiff drive stays stable (the step is implicit in it).  It is not a potential:
the system's energy does not include it, and its work is counted with the other applied
forces (the integrator's energy acceptance test, docs/integrator.md).

Example
-------
>>> drives = JointDrives(system)
>>> drives.set_drives(active=[1, 0], kp=[100.0, 0], kd=[20.0, 0], positions=[0.5, 0],
...                   velocities=[0, 0], efforts=[0, 0], limits=[5.0, 0])
"""
import numpy as np
from numba import njit

from ..force import AffineForce

#: Rows of :attr:`JointDrives.table` (one column per dynamic config): 1.0 where the config
#: is driven, the gains kp [N m/rad or N/m] and kd [N m s/rad or N s/m], the targets
#: q_ref [rad or m] and v_ref [rad/s or m/s], the effort feed-forward [N m or N] and the
#: effort limit [N m or N, inf for none].
FIELDS = ('active', 'kp', 'kd', 'position', 'velocity', 'effort', 'limit')
ACTIVE, KP, KD, POSITION, VELOCITY, EFFORT, LIMIT = range(len(FIELDS))

_versions = iter(range(1, 1 << 62))      # table versions unique across all JointDrives


@njit(cache=True, inline='always')
def drive_law(table, i, q, v):
    """``(force, linear)`` of the drive of dynamic config i (column i of a drive
    ``table``, rows :data:`FIELDS`) at position q [rad or m] and rate v [rad/s or m/s]: the
    PD law plus feed-forward clipped at the effort limit, and whether it is inside the
    limit (then its derivatives are -kp, -kd; a saturated drive is a constant force).
    ``(0.0, False)`` for a config without a drive.  The one definition of the law: the
    compiled VI step evaluates it too."""
    if table[ACTIVE, i] == 0.0:
        return 0.0, False
    tau = (table[KP, i] * (table[POSITION, i] - q) + table[KD, i] * (table[VELOCITY, i] - v)
           + table[EFFORT, i])
    limit = table[LIMIT, i]
    if tau > limit:
        return limit, False
    if tau < -limit:
        return -limit, False
    return tau, True


@njit(cache=True)
def _forces_into(table, q, dq, out, slopes):
    """:func:`drive_law` for every column: forces into ``out``, 1.0 into ``slopes`` where
    the drive is linear (0.0 elsewhere)."""
    for i in range(table.shape[1]):
        f, linear = drive_law(table, i, q[i], dq[i])
        out[i] = f
        slopes[i] = 1.0 if linear else 0.0


class JointDrives(AffineForce):
    """PD drives with saturation on the dynamic configs of a System.

    For every driven config i (``active``), at the state (q, dq)::

        F_i = clip(kp_i (q_ref_i - q_i) + kd_i (v_ref_i - dq_i) + effort_i,
                   -limit_i, limit_i)

    and F_i = 0 for the others.  The force is piecewise linear in (q, dq): its q and dq
    derivatives are -kp_i and -kd_i on the diagonal while the drive is inside its limit and
    zero once it saturates (a saturated drive is a constant torque at the limit); every
    second derivative is zero.  Inside a VI step this makes the step's equation piecewise
    smooth: Newton's method then works with the saturation state of its current iterate
    (an active set updated at every iterate), so a converged step is consistent: every
    drive the root saturates pushes with exactly its limit, every other one is linear.

    The gains and targets change without a structure change (:meth:`set_drives`, e.g.
    once per simulation tick); the compiled step copies them when :attr:`version` changes.
    A System has at most one JointDrives for the compiled step (more run on the general
    path).  Drives act on configs: a joint that follows another (a mimic frame) is driven
    through its leader.
    """

    def __init__(self, system, name=None):
        self._table = np.zeros((len(FIELDS), 0))
        self._version = next(_versions)
        AffineForce.__init__(self, system, name)
        self._structure_updated()

    def _structure_updated(self):
        nd = self._system.nQd
        if self._table.shape[1] != nd:
            # config order changed size: every drive is switched off
            self._table = np.zeros((len(FIELDS), nd))
            self._table[LIMIT] = np.inf
            self._version = next(_versions)

    @property
    def version(self):
        """A number that changes whenever :attr:`table` changes."""
        return self._version

    @property
    def table(self):
        """The drives as a read-only (len(FIELDS), nQd) array, rows :data:`FIELDS`,
        columns the dynamic configs in config order."""
        view = self._table.view()
        view.flags.writeable = False
        return view

    def set_drives(self, active, kp, kd, positions, velocities, efforts, limits):
        """Set every drive at once; each argument (nQd,) in config order.

        ``active``: true where the config is driven; ``kp`` >= 0 [N m/rad or N/m], ``kd``
        >= 0 [N m s/rad or N s/m]; ``positions`` q_ref [rad or m], ``velocities`` v_ref
        [rad/s or m/s], ``efforts`` feed-forward [N m or N] (finite); ``limits`` >= 0 [N m
        or N] (inf: none).  All-or-nothing: ValueError naming the config and the field, and
        nothing changes.
        """
        nd = self._table.shape[1]
        values = (active, kp, kd, positions, velocities, efforts, limits)
        try:
            new = np.array(values, dtype=float)
        except (TypeError, ValueError):
            new = None
        if new is None or new.shape != self._table.shape:
            for row, value in enumerate(values):
                arr = np.asarray(value, dtype=float)
                if arr.shape != (nd,):
                    raise ValueError('JointDrives %r: %s needs %d values (the dynamic '
                                     'configs), got shape %s'
                                     % (self.name, FIELDS[row], nd, arr.shape))
        new[ACTIVE] = new[ACTIVE] != 0.0
        # one test for the common case (all valid); the culprit is looked for only then
        if not (np.isfinite(new[:LIMIT]).all() and new[KP:POSITION].min(initial=0.0) >= 0.0
                and new[LIMIT].min(initial=0.0) >= 0.0):
            bad = (~np.isfinite(new[:LIMIT]).all(axis=0) | (new[KP] < 0) | (new[KD] < 0)
                   | ~(new[LIMIT] >= 0))
            i = int(np.nonzero(bad)[0][0])
            raise ValueError('JointDrives %r: drive of config %r: %s' % (
                self.name, self._system.dyn_configs[i].name, ', '.join(
                    '%s = %r' % (FIELDS[r], float(new[r, i])) for r in range(len(FIELDS)))
                + ' (gains and limit must be >= 0, targets and effort finite)'))
        self._table = new
        self._version = next(_versions)

    def torque(self, q, dq):
        """Drive forces (nQ,) [N m or N] at configs ``q`` (nQ,) and rates ``dq`` (nQ,)
        (zero on the configs without a drive)."""
        out = np.zeros(self._system.nQ)
        _forces_into(self._table, np.asarray(q, dtype=float), np.asarray(dq, dtype=float),
                     out, np.empty(self._table.shape[1]))
        return out

    def _linear(self):
        """(nQd,) bool: the drives that are on and inside their limit at the System's
        state (those whose force has the derivatives -kp, -kd)."""
        data = self._system.data
        slopes = np.empty(self._table.shape[1])
        _forces_into(self._table, data.q, data.dq, np.empty(data.q.shape[0]), slopes)
        return slopes == 1.0

    def _diagonal(self, row):
        n = self._system.nQ
        nd = self._table.shape[1]
        out = np.zeros((n, n))
        idx = np.arange(nd)
        out[idx, idx] = np.where(self._linear(), -self._table[row], 0.0)
        return out

    def f(self, q):
        return float(self.f_array()[self._system.get_config(q).index])

    def f_dq(self, q, q1):
        s = self._system
        return float(self.f_dq_array()[s.get_config(q).index, s.get_config(q1).index])

    def f_ddq(self, q, dq1):
        s = self._system
        return float(self.f_ddq_array()[s.get_config(q).index, s.get_config(dq1).index])

    def f_du(self, q, u1):
        return 0.0

    def f_array(self):
        data = self._system.data
        return self.torque(data.q, data.dq)

    def f_dq_array(self):
        return self._diagonal(KP)

    def f_ddq_array(self):
        return self._diagonal(KD)

    def f_du_array(self):
        return np.zeros((self._system.nQ, self._system.nu))
