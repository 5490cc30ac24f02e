"""System: a mechanical system in generalized coordinates (trep's ``System``)."""
import contextlib
import threading

import numpy as np
import scipy.linalg
import scipy.optimize

from ._derivcheck import check
from . import dynamics
from .config import Config, Input
from .data import Data
from .frame import WORLD, Frame
from .free import FreeJointCharts
from .framevectors import Stacking
from .model import Model


def resolve(identifier, kind, items, what):
    """The one lookup rule for every name/index/object argument (trep's): an index gives
    ``items[index]``, a name the item of that name, an object of ``kind`` itself.

    Raises IndexError, KeyError (listing the known names) or TypeError naming ``what``."""
    if isinstance(identifier, kind):
        return identifier
    if isinstance(identifier, (bool, np.bool_)):
        raise TypeError('%s identifier must be an index, a name or a %s, got %r'
                        % (what, kind.__name__, identifier))
    if isinstance(identifier, (int, np.integer)):
        try:
            return items[identifier]
        except IndexError:
            raise IndexError('%s index %d out of range (the system has %d)'
                             % (what, identifier, len(items))) from None
    if isinstance(identifier, str):
        for item in items:
            if item.name == identifier:
                return item
        names = [item.name for item in items if item.name is not None]
        raise KeyError('no %s named %r (known: %s)' % (what, identifier, ', '.join(names)))
    raise TypeError('%s identifier must be an index, a name or a %s, got %r'
                    % (what, kind.__name__, identifier))


class System:
    """A mechanical system: frames, configs, inputs, potentials, forces and constraints.

    The order of ``configs`` (``dyn_configs + kin_configs``), ``inputs`` and
    ``constraints`` defines the order of every vector and matrix in ros_vi.

    Example
    -------
    >>> import ros_vi as trep
    >>> from ros_vi import rx, tz
    >>> system = trep.System()
    >>> system.import_frames([rx('theta'), [tz(-1.0, mass=1.0)]])
    >>> g = trep.potentials.Gravity(system, (0, 0, -9.8))
    >>> system.q = 0.5
    >>> float(system.mass_matrix()[0, 0])
    1.0
    """

    def __init__(self):
        self._frames_list = []
        self._configs_list = []
        self._inputs_list = []
        self._potentials = []
        self._forces = []
        self._constraints = []
        self._contacts = []
        self._free_joints = []
        self._free_charts = None
        self._joint_limits = {}     # Config -> (lower, upper): see set_joint_limit
        self._structure_funcs = []
        self._hold = 0
        self._dirty = True
        self._model = None
        self._own_data = Data(0, 0)
        self._evaluating = {}       # thread ident -> the Data of its evaluate_at block
        self._stacking = Stacking(self)
        self._param_version = 0   # bumped when built-in parameters or constants change
        self._hold = 1
        self._world = Frame(self, WORLD, name='World')
        self._hold = 0
        self._update_structure()

    # ------------------------------------------------------------------ structure
    def _add_frame(self, frame):
        self._frames_list.append(frame)
        self._structure_changed()

    def _add_config(self, config):
        self._configs_list.append(config)
        self._structure_changed()

    def _add_input(self, inp):
        self._inputs_list.append(inp)
        self._structure_changed()

    def _add_potential(self, potential):
        self._potentials.append(potential)
        self._structure_changed()

    def _add_force(self, force):
        self._forces.append(force)
        self._structure_changed()

    def _add_contact(self, contact):
        self._contacts.append(contact)
        self._structure_changed()

    def _add_constraint(self, constraint):
        self._constraints.append(constraint)
        self._structure_changed()

    def _add_free_joint(self, joint):
        self._free_joints.append(joint)
        self._structure_changed()

    def add_structure_changed_func(self, function):
        """Call ``function()`` after every structure update."""
        self._structure_funcs.append(function)

    def hold_structure_changes(self):
        """Defer structure updates until a matching :meth:`resume_structure_changes`."""
        self._hold += 1

    def resume_structure_changes(self):
        """Undo one :meth:`hold_structure_changes`; update once the last hold is gone."""
        if self._hold <= 0:
            raise RuntimeError('resume_structure_changes without a matching hold')
        self._hold -= 1
        if self._hold == 0 and self._dirty:
            self._update_structure()

    def _parameters_changed(self):
        """A built-in parameter (spring constant, damping, ...) changed."""
        self._param_version += 1
        self._invalidate_results()

    def _invalidate_results(self):
        """Forget the results computed for the System's own state and for the state this
        thread evaluates (results kept in other Data are tagged with the parameter version
        they were computed for)."""
        self._own_data.invalidate()
        data = self._data
        if data is not self._own_data:
            data.invalidate()

    @property
    def parameter_version(self):
        """A counter bumped whenever a built-in parameter (spring constant, damping,
        gravity, a constant transform) or the structure changes: compiled steppers that
        copy parameters compare it to know when to copy again."""
        return self._param_version

    def _structure_changed(self):
        self._param_version += 1
        self._dirty = True
        self._invalidate_results()
        if self._hold == 0:
            self._update_structure()

    def _geometry_changed(self):
        """A constant transform changed: same structure, new numbers."""
        if self._model is not None and not self._dirty:
            self._model.update_constants(self._frames_list)
        self._parameters_changed()

    def _ensure_structure(self):
        if self._dirty:
            if self._hold:
                raise RuntimeError('the system structure is on hold '
                                   '(call resume_structure_changes() first)')
            self._update_structure()

    def _update_structure(self):
        self._dirty = False
        frames = self._world.flatten_tree()
        self._frames_list = frames
        dyn = [c for c in self._configs_list if not c._kinematic]
        kin = [c for c in self._configs_list if c._kinematic]
        configs = dyn + kin
        # carry state values across the reordering
        def carry(arr, n, items, index_of):
            new = np.zeros(n)
            for i, item in enumerate(items):
                j = index_of(item)
                if 0 <= j < arr.shape[0]:
                    new[i] = arr[j]
            return new
        old = self._own_data
        data = Data(len(configs), len(self._inputs_list))
        prev = {id(c): c._index for c in self._configs_list}
        data.q = carry(old.q, len(configs), configs, lambda c: prev[id(c)])
        data.dq = carry(old.dq, len(configs), configs, lambda c: prev[id(c)])
        data.ddq = carry(old.ddq, len(configs), configs, lambda c: prev[id(c)])
        prev_u = {id(u): u._index for u in self._inputs_list}
        data.u = carry(old.u, len(self._inputs_list), self._inputs_list,
                       lambda u: prev_u[id(u)])
        data.t = old.t
        self._own_data = data
        for i, c in enumerate(configs):
            c._index = i
            c._k_index = i - len(dyn) if c._kinematic else -1
        for i, u in enumerate(self._inputs_list):
            u._index = i
        for i, f in enumerate(frames):
            f._index = i
        for i, con in enumerate(self._constraints):
            con._index = i
        self._configs_list = configs
        self._dyn = tuple(dyn)
        self._kin = tuple(kin)
        gravity = np.zeros(3)
        for pot in self._potentials:
            if pot.kernel_gravity is not None:
                gravity = gravity + pot.kernel_gravity
        self._model = Model(frames, configs, len(dyn), len(self._inputs_list), gravity)
        for joint in self._free_joints:
            for c in joint.configs:
                if c._kinematic:
                    raise ValueError('free joint %r: its config %r is kinematic; a free '
                                     'joint moves by its dynamics' % (joint.name, c.name))
        self._free_charts = (FreeJointCharts(self._free_joints) if self._free_joints
                             else None)
        for func in list(self._structure_funcs):
            func()
        for obj in self._potentials + self._forces + self._constraints:
            obj._structure_updated()

    # ------------------------------------------------------------------ components
    @property
    def free_joints(self):
        """The free joints (:class:`~ros_vi.mechanics.free.FreeJoint`), in creation order."""
        return tuple(self._free_joints)

    @property
    def free_charts(self):
        """The compiled table of the free joints' charts
        (:class:`~ros_vi.mechanics.free.FreeJointCharts`), or None without free joints."""
        self._ensure_structure()
        return self._free_charts

    @property
    def world_frame(self):
        """The fixed root frame (read only)."""
        return self._world

    @property
    def frames(self):
        """All frames, depth first from the world frame (read only tuple)."""
        self._ensure_structure()
        return tuple(self._frames_list)

    @property
    def configs(self):
        """All configs: ``dyn_configs + kin_configs`` (read only tuple)."""
        self._ensure_structure()
        return tuple(self._configs_list)

    @property
    def dyn_configs(self):
        """Dynamic configs (read only tuple)."""
        self._ensure_structure()
        return self._dyn

    @property
    def kin_configs(self):
        """Kinematic configs (read only tuple)."""
        self._ensure_structure()
        return self._kin

    @property
    def potentials(self):
        return tuple(self._potentials)

    @property
    def forces(self):
        return tuple(self._forces)

    @property
    def inputs(self):
        self._ensure_structure()
        return tuple(self._inputs_list)

    @property
    def constraints(self):
        return tuple(self._constraints)

    def remove_contacts(self, contacts):
        """Take ``contacts`` (an iterable of this system's contacts, :mod:`ros_vi.contact`)
        out of it: the steps no longer hold them."""
        gone = {id(c) for c in contacts}
        if gone:
            self._contacts = [c for c in self._contacts if id(c) not in gone]
            self._structure_changed()

    @property
    def contacts(self):
        """The contacts (:mod:`ros_vi.contact`), in the order they were added (read only
        tuple): every MidpointVI on the system holds them as unilateral constraints."""
        return tuple(self._contacts)

    @property
    def masses(self):
        """Frames with non-zero mass or inertia (read only tuple)."""
        return tuple(f for f in self.frames if f._has_mass())

    @property
    def nQ(self):
        return len(self._configs_list)

    @property
    def nQd(self):
        self._ensure_structure()
        return len(self._dyn)

    @property
    def nQk(self):
        self._ensure_structure()
        return len(self._kin)

    @property
    def nu(self):
        return len(self._inputs_list)

    @property
    def nc(self):
        return len(self._constraints)

    def get_frame(self, identifier):
        """Frame by index, name or object (IndexError / KeyError / TypeError)."""
        return resolve(identifier, Frame, self.frames, 'frame')

    def get_config(self, identifier):
        """Config by index, name or object (IndexError / KeyError / TypeError)."""
        if isinstance(identifier, Config):      # no structure update needed (works on hold)
            return identifier
        return resolve(identifier, Config, self.configs, 'config')

    def set_joint_limit(self, config, lower=-np.inf, upper=np.inf):
        """Declare the joint limits ``lower <= q <= upper`` [rad or m] of a config (name,
        index or Config; ``-inf``/``inf`` for a side without one, both to remove them).

        Every :class:`~ros_vi.integrators.MidpointVI` on this system then holds the config
        within them as a unilateral constraint of its step (unless made with its own
        ``limits``); the URDF importer declares each joint's ``<limit lower upper>``.  A
        config that is or becomes kinematic is not held (its motion is given)."""
        config = self.get_config(config)
        lo, up = float(lower), float(upper)
        if np.isnan(lo) or np.isnan(up) or not lo <= up:
            raise ValueError('set_joint_limit: config %r needs lower <= upper, got (%r, %r)'
                             % (config.name, lower, upper))
        if lo == -np.inf and up == np.inf:
            self._joint_limits.pop(config, None)
        else:
            self._joint_limits[config] = (lo, up)
        self._structure_changed()

    @property
    def joint_limits(self):
        """The declared joint limits (:meth:`set_joint_limit`): ``{config name (its index if
        unnamed): (lower, upper)}`` [rad or m], in config order."""
        limited = sorted(self._joint_limits, key=lambda c: c.index)
        return {c.name if c.name is not None else c.index: self._joint_limits[c]
                for c in limited}

    def get_input(self, identifier):
        """Input by index, name or object (IndexError / KeyError / TypeError)."""
        return resolve(identifier, Input, self.inputs, 'input')

    def get_potential(self, identifier):
        from .potential import Potential
        return resolve(identifier, Potential, self.potentials, 'potential')

    def get_force(self, identifier):
        from .force import Force
        return resolve(identifier, Force, self.forces, 'force')

    def get_constraint(self, identifier):
        from .constraint import Constraint
        return resolve(identifier, Constraint, self.constraints, 'constraint')

    def import_frames(self, children):
        """Add a frame definition tree to the world frame (see :meth:`Frame.import_frames`)."""
        self._world.import_frames(children)

    def export_frames(self, system_name='system', frames_name='frames', tab_size=4):
        """Python source that recreates this system's frames."""
        body = self._world.export_frames(1, tab_size)
        return ('import numpy as np\nfrom ros_vi import tx, ty, tz, rx, ry, rz, const_se3\n'
                '%s = [\n%s\n]\n%s.import_frames(%s)\n'
                % (frames_name, body, system_name, frames_name))

    # ------------------------------------------------------------------ state
    def _invalidate(self):
        self._data.invalidate()

    def __getstate__(self):
        # a copy (deepcopy, pickle) has the structure and the state; the stacking tables
        # (with their lock) are rebuilt on first use and no evaluate_at block carries over
        state = self.__dict__.copy()
        del state['_stacking'], state['_evaluating']
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._evaluating = {}
        self._stacking = Stacking(self)

    def _set_component(self, attr, index, value, who):
        value = float(value)
        if not np.isfinite(value):
            raise ValueError('%s: value must be finite, got %r' % (who.name, value))
        getattr(self, attr)[index] = value
        self._invalidate()

    def _set_vector(self, attr, value, items, offset=0, what='q'):
        arr = getattr(self, attr)
        if isinstance(value, dict):
            for key, v in value.items():
                item = (self.get_input(key) if attr == '_u' else self.get_config(key))
                i = item.index
                if not (offset <= i < offset + len(items)) or items[i - offset] is not item:
                    raise KeyError('%s is not one of the variables of %s' % (item.name, what))
                v = float(v)
                if not np.isfinite(v):
                    raise ValueError('%s[%r] must be finite, got %r' % (what, item.name, v))
                arr[i] = v
        elif np.isscalar(value):
            v = float(value)
            if not np.isfinite(v):
                raise ValueError('%s must be finite, got %r' % (what, value))
            arr[offset:offset + len(items)] = v
        else:
            vals = np.asarray(value, dtype=float).ravel()
            n = min(len(vals), len(items))
            if not np.all(np.isfinite(vals[:n])):
                bad = [items[i].name for i in range(n) if not np.isfinite(vals[i])]
                raise ValueError('%s has non-finite values for %s' % (what, ', '.join(
                    str(b) for b in bad)))
            arr[offset:offset + n] = vals[:n]
        self._invalidate()

    @property
    def t(self):
        """Current time [s]."""
        return self._data.t

    @t.setter
    def t(self, value):
        self._data.t = float(value)
        self._invalidate()

    def _vec_prop(attr, part, doc):
        def getter(self):
            self._ensure_structure()
            n, nd = len(self._configs_list), len(self._dyn)
            lo, hi = {'all': (0, n), 'd': (0, nd), 'k': (nd, n)}[part]
            return getattr(self, attr)[lo:hi].copy()

        def setter(self, value):
            self._ensure_structure()
            items = {'all': self._configs_list, 'd': list(self._dyn), 'k': list(self._kin)}[part]
            offset = len(self._dyn) if part == 'k' else 0
            self._set_vector(attr, value, items, offset, attr.strip('_') + {
                'all': '', 'd': 'd', 'k': 'k'}[part])
        return property(getter, setter, doc=doc)

    q = _vec_prop('_q', 'all', 'Configuration (nQ,) [m, rad]; set with an array, dict or scalar.')
    dq = _vec_prop('_dq', 'all', 'Velocity (nQ,).')
    ddq = _vec_prop('_ddq', 'all', 'Acceleration (nQ,).')
    qd = _vec_prop('_q', 'd', 'Dynamic configuration (nQd,).')
    dqd = _vec_prop('_dq', 'd', 'Dynamic velocity (nQd,).')
    ddqd = _vec_prop('_ddq', 'd', 'Dynamic acceleration (nQd,).')
    qk = _vec_prop('_q', 'k', 'Kinematic configuration (nQk,).')
    dqk = _vec_prop('_dq', 'k', 'Kinematic velocity (nQk,).')
    ddqk = _vec_prop('_ddq', 'k', 'Kinematic acceleration (nQk,).')
    del _vec_prop

    @property
    def u(self):
        """Inputs (nu,); set with an array, dict or scalar."""
        self._ensure_structure()
        return self._u.copy()

    @u.setter
    def u(self, value):
        self._ensure_structure()
        self._set_vector('_u', value, self._inputs_list, 0, 'u')

    def set_state(self, q=None, dq=None, u=None, ddqk=None, t=None):
        """Set any of q, dq, u, ddqk and t (same value forms as the attributes)."""
        if q is not None:
            self.q = q
        if dq is not None:
            self.dq = dq
        if u is not None:
            self.u = u
        if ddqk is not None:
            self.ddqk = ddqk
        if t is not None:
            self.t = t

    # ------------------------------------------------------------------ model and data
    @property
    def model(self):
        """The compiled :class:`~ros_vi.mechanics.model.Model` (rebuilt when the structure
        changes; read only)."""
        self._ensure_structure()
        return self._model

    @property
    def data(self):
        """The :class:`~ros_vi.mechanics.data.Data` the System evaluates: its own -- the
        state that ``q``, ``dq``, ``u``, ``t``, the Config attributes and every trep method
        read and write -- or, inside an :meth:`evaluate_at` block, that block's Data (for
        the thread that opened the block).

        The rule for who moves the System's own Data: trep's authoring API (setters,
        ``f()``, ``satisfy_constraints``...) and the System's own :class:`MidpointVI` do;
        after a ``step`` it holds the midpoint of that step, as trep leaves it (q = (q1 +
        q2)/2, dq = (q2 - q1)/dt, u = u1, t = (t1 + t2)/2).  Anything else (a controller, a
        linearisation, a simulation's outputs, a rollout) evaluates on its own
        ``model.create_data()`` and never moves this one."""
        if self._dirty:
            self._ensure_structure()
        evaluating = self._evaluating       # as _data, inlined: called per derivative entry
        if evaluating:
            data = evaluating.get(threading.get_ident())
            if data is not None:
                return data
        return self._own_data

    @contextlib.contextmanager
    def evaluate_at(self, data):
        """Within the block, every method of the System and its components called from this
        thread reads ``data`` (a Data of this System's model) instead of the System's own
        state, which is left untouched.  For users of the full trep API (energies with all
        potentials, ``f()``, constraints) on a state of their own::

            data = system.model.create_data()
            data.set(q, v)
            with system.evaluate_at(data):
                E = system.total_energy()

        The block applies to the calling thread only: other threads keep evaluating the
        System's own state (a stepping thread is not disturbed) or their own blocks' Data.
        Everything computed is kept in ``data``, so two threads, each evaluating its own
        Data, share no results (blocks nest; each Data is for one thread at a time).
        """
        model = self.model
        if data.q.shape != (model.nq,) or data.u.shape != (model.nu,):
            raise ValueError('evaluate_at: data has %d configs and %d inputs, the system %d '
                             'and %d' % (data.q.shape[0], data.u.shape[0], model.nq, model.nu))
        thread = threading.get_ident()
        outer = self._evaluating.get(thread)
        self._evaluating[thread] = data
        try:
            yield data
        finally:
            if outer is None:
                del self._evaluating[thread]
            else:
                self._evaluating[thread] = outer

    @property
    def _data(self):
        """The Data this thread evaluates (see :attr:`data`), without a structure update."""
        evaluating = self._evaluating
        if evaluating:
            data = evaluating.get(threading.get_ident())
            if data is not None:
                return data
        return self._own_data

    # state arrays of the System's Data, for the System's own components
    _q = property(lambda self: self._data.q)
    _dq = property(lambda self: self._data.dq)
    _ddq = property(lambda self: self._data.ddq)
    _u = property(lambda self: self._data.u)
    _cache = property(lambda self: self._data.cache)

    @property
    def general_potentials(self):
        """Potentials evaluated by their own methods, not by the compiled kernel (tuple)."""
        return tuple(p for p in self._potentials if p.kernel_gravity is None)

    def _kinematics(self):
        return dynamics.kinematics(self.model, self._data)

    def _terms(self):
        return dynamics.lagrangian_terms(self.model, self._data)

    # ------------------------------------------------------------------ energies and L
    def kinetic_energy(self):
        """Kinetic energy T = 1/2 dq^T M(q) dq [J] at the current state."""
        return float(self._terms().T)

    def potential_energy(self):
        """Total potential energy V [J] of every potential at the current configuration."""
        return float(sum(p.V() for p in self._potentials))

    def total_energy(self):
        """T + V [J] at the current state."""
        return self.kinetic_energy() + self.potential_energy()

    def L(self):
        """Lagrangian T - V [J] at the current state."""
        return self.kinetic_energy() - self.potential_energy()

    def _L_dq_vector(self):
        return self._terms().Lq - dynamics.applied_forces(self).V_dq

    def _L_dqdq_matrix(self):
        return self._terms().Lqq - dynamics.applied_terms(self).V_dqdq

    def L_dq(self, q1):
        """dL/dq1 at the current state."""
        return float(self._L_dq_vector()[self.get_config(q1).index])

    def L_ddq(self, dq1):
        """dL/d(dq1): the generalized momentum conjugate to ``dq1``."""
        return float(self._terms().Lv[self.get_config(dq1).index])

    def L_dqdq(self, q1, q2):
        """d^2L / dq1 dq2."""
        return float(self._L_dqdq_matrix()[self.get_config(q1).index,
                                           self.get_config(q2).index])

    def L_ddqdq(self, dq1, q2):
        """d^2L / d(dq1) dq2."""
        return float(self._terms().Lvq[self.get_config(dq1).index, self.get_config(q2).index])

    def L_ddqddq(self, dq1, dq2):
        """d^2L / d(dq1) d(dq2): an entry of the mass matrix."""
        return float(self._terms().M[self.get_config(dq1).index, self.get_config(dq2).index])

    def _third(self, which, direction_q, index):
        """Complex-step derivative of a kernel second-order term along config ``index``.

        ``which``: 'M', 'Lvq' or 'Lqq'; ``direction_q`` True for d/dq, False for d/d(dq).
        Exact to rounding (no subtraction, so no truncation/cancellation trade-off).
        """
        h = 1e-30
        q = self._q.astype(complex)
        dq = self._dq.astype(complex)
        if direction_q:
            q[index] += 1j * h
        else:
            dq[index] += 1j * h
        out = dynamics.LagrangianTerms(
            *self.model.lagrangian_terms(self.model.gravity.astype(complex), q, dq))
        return getattr(out, which).imag / h

    def L_dqdqdq(self, q1, q2, q3):
        """d^3L / dq1 dq2 dq3."""
        i, j, k = (self.get_config(x).index for x in (q1, q2, q3))
        kin = self._third('Lqq', True, k)[i, j]
        pot = sum(p.V_dqdqdq(self.configs[i], self.configs[j], self.configs[k])
                  for p in self.general_potentials)
        return float(kin - pot)

    def L_ddqdqdq(self, dq1, q2, q3):
        """d^3L / d(dq1) dq2 dq3."""
        i, j, k = (self.get_config(x).index for x in (dq1, q2, q3))
        return float(self._third('Lvq', True, k)[i, j])

    def L_ddqddqdq(self, dq1, dq2, q3):
        """d^3L / d(dq1) d(dq2) dq3 (a derivative of the mass matrix)."""
        i, j, k = (self.get_config(x).index for x in (dq1, dq2, q3))
        return float(self._third('M', True, k)[i, j])

    # ------------------------------------------------------------------ whole-array views
    def mass_matrix(self):
        """Mass matrix M(q) of the dynamic configs, (nQd, nQd) [kg, kg m, kg m^2]."""
        nd = self.nQd
        return self._terms().M[:nd, :nd].copy()

    def gravity_forces(self):
        """dV/dq of all potentials (gravity, springs, ...) for the dynamic configs, (nQd,)."""
        return dynamics.gravity_forces(self)

    def bias_forces(self):
        """Coriolis, centrifugal and potential forces, (nQd,).

        ``M(q) ddq_d = u_forces - bias`` for an unconstrained system with zero kinematic
        acceleration, where ``bias = C(q, dq) dq + dV/dq``.
        """
        return dynamics.bias_forces(self)

    def constraint_jacobian(self):
        """Dh(q), (nc, nQ)."""
        return dynamics.constraint_jacobian(self)

    # ------------------------------------------------------------------ dynamics
    def f(self, q=None):
        """Continuous dynamics: accelerations of the dynamic configs, (nQd,).

        Solves ``M ddq = dL/dq - d/dt(dL/d dq) + F - Dh^T lambda`` with ``Dh ddq + dDh dq = 0``
        at the current state (kinematic accelerations from ``ddqk``); results are also
        written to ``Config.ddq``.  With ``q`` given, returns that config's acceleration.
        """
        ddqd, _ = dynamics.continuous_dynamics(self)
        if q is None:
            return ddqd.copy()
        config = self.get_config(q)
        if config.kinematic:
            raise ValueError('f(q): %r is kinematic; its acceleration is an input' % config.name)
        return float(ddqd[config.index])

    def lambda_(self, constraint=None):
        """Constraint forces lambda, (nc,), or one of them."""
        _, lam = dynamics.continuous_dynamics(self)
        if constraint is None:
            return lam.copy()
        return float(lam[self.get_constraint(constraint).index])

    def _dyn_row(self, q):
        config = self.get_config(q)
        if config.kinematic:
            raise ValueError('%r is kinematic: the dynamics only give dynamic accelerations'
                             % config.name)
        return config.index

    def _kin_col(self, k):
        config = self.get_config(k)
        if not config.kinematic:
            raise ValueError('%r is not a kinematic config' % config.name)
        return config.k_index

    def _pick(self, arr, row, col):
        if row is not None and col is not None:
            return float(arr[row, col])
        if row is not None:
            return arr[row].copy()
        if col is not None:
            return arr[:, col].copy()
        return arr.copy()

    def f_dq(self, q=None, q1=None):
        """d f / d q, (nQd, nQ) indexed [output, input]."""
        d = dynamics.continuous_dynamics_derivatives(self)['dq'][:self.nQd]
        return self._pick(d, None if q is None else self._dyn_row(q),
                          None if q1 is None else self.get_config(q1).index)

    def f_ddq(self, q=None, dq1=None):
        """d f / d dq, (nQd, nQ)."""
        d = dynamics.continuous_dynamics_derivatives(self)['ddq'][:self.nQd]
        return self._pick(d, None if q is None else self._dyn_row(q),
                          None if dq1 is None else self.get_config(dq1).index)

    def f_dddq(self, q=None, k1=None):
        """d f / d ddq_k, (nQd, nQk)."""
        d = dynamics.continuous_dynamics_derivatives(self)['dddk'][:self.nQd]
        return self._pick(d, None if q is None else self._dyn_row(q),
                          None if k1 is None else self._kin_col(k1))

    def f_du(self, q=None, u1=None):
        """d f / d u, (nQd, nu)."""
        d = dynamics.continuous_dynamics_derivatives(self)['du'][:self.nQd]
        return self._pick(d, None if q is None else self._dyn_row(q),
                          None if u1 is None else self.get_input(u1).index)

    def _lam_row(self, constraint):
        return None if constraint is None else self.get_constraint(constraint).index

    def lambda_dq(self, constraint=None, q1=None):
        """d lambda / d q, (nc, nQ)."""
        d = dynamics.continuous_dynamics_derivatives(self)['dq'][self.nQd:]
        return self._pick(d, self._lam_row(constraint),
                          None if q1 is None else self.get_config(q1).index)

    def lambda_ddq(self, constraint=None, dq1=None):
        """d lambda / d dq, (nc, nQ)."""
        d = dynamics.continuous_dynamics_derivatives(self)['ddq'][self.nQd:]
        return self._pick(d, self._lam_row(constraint),
                          None if dq1 is None else self.get_config(dq1).index)

    def lambda_dddq(self, constraint=None, k1=None):
        """d lambda / d ddq_k, (nc, nQk)."""
        d = dynamics.continuous_dynamics_derivatives(self)['dddk'][self.nQd:]
        return self._pick(d, self._lam_row(constraint),
                          None if k1 is None else self._kin_col(k1))

    def lambda_du(self, constraint=None, u1=None):
        """d lambda / d u, (nc, nu)."""
        d = dynamics.continuous_dynamics_derivatives(self)['du'][self.nQd:]
        return self._pick(d, self._lam_row(constraint),
                          None if u1 is None else self.get_input(u1).index)

    # ------------------------------------------------------------------ second derivatives
    def _pick3(self, key, out_lambda, out, id1, kind1, id2, kind2):
        arr = dynamics.continuous_dynamics_second(self)[key]
        nd = self.nQd
        arr = arr[..., nd:] if out_lambda else arr[..., :nd]

        def index(ident, kind):
            if ident is None:
                return None
            if kind == 'config':
                return self.get_config(ident).index
            if kind == 'kin':
                return self._kin_col(ident)
            return self.get_input(ident).index
        if out is not None:
            arr = arr[..., self._lam_row(out) if out_lambda else self._dyn_row(out)]
        i, j = index(id1, kind1), index(id2, kind2)
        if i is not None and j is not None:
            res = arr[i, j]
        elif i is not None:
            res = arr[i]
        elif j is not None:
            res = arr[:, j]
        else:
            res = arr
        return float(res) if np.ndim(res) == 0 else np.array(res)

    def f_dqdq(self, q=None, q1=None, q2=None):
        """d2 f / dq1 dq2, (nQ, nQ, nQd) indexed [q1, q2, output]."""
        return self._pick3('dqdq', False, q, q1, 'config', q2, 'config')

    def f_ddqdq(self, q=None, dq1=None, q2=None):
        """d2 f / d(dq1) dq2, (nQ, nQ, nQd)."""
        return self._pick3('ddqdq', False, q, dq1, 'config', q2, 'config')

    def f_ddqddq(self, q=None, dq1=None, dq2=None):
        """d2 f / d(dq1) d(dq2), (nQ, nQ, nQd)."""
        return self._pick3('ddqddq', False, q, dq1, 'config', dq2, 'config')

    def f_dddkdq(self, q=None, k1=None, q2=None):
        """d2 f / d(ddq_k1) dq2, (nQk, nQ, nQd)."""
        return self._pick3('dddkdq', False, q, k1, 'kin', q2, 'config')

    def f_dudq(self, q=None, u1=None, q2=None):
        """d2 f / du1 dq2, (nu, nQ, nQd)."""
        return self._pick3('dudq', False, q, u1, 'input', q2, 'config')

    def f_duddq(self, q=None, u1=None, dq2=None):
        """d2 f / du1 d(dq2), (nu, nQ, nQd)."""
        return self._pick3('duddq', False, q, u1, 'input', dq2, 'config')

    def f_dudu(self, q=None, u1=None, u2=None):
        """d2 f / du1 du2, (nu, nu, nQd)."""
        return self._pick3('dudu', False, q, u1, 'input', u2, 'input')

    def lambda_dqdq(self, constraint=None, q1=None, q2=None):
        """d2 lambda / dq1 dq2, (nQ, nQ, nc)."""
        return self._pick3('dqdq', True, constraint, q1, 'config', q2, 'config')

    def lambda_ddqdq(self, constraint=None, dq1=None, q2=None):
        """d2 lambda / d(dq1) dq2, (nQ, nQ, nc)."""
        return self._pick3('ddqdq', True, constraint, dq1, 'config', q2, 'config')

    def lambda_ddqddq(self, constraint=None, dq1=None, dq2=None):
        """d2 lambda / d(dq1) d(dq2), (nQ, nQ, nc)."""
        return self._pick3('ddqddq', True, constraint, dq1, 'config', dq2, 'config')

    def lambda_dddkdq(self, constraint=None, k1=None, q2=None):
        """d2 lambda / d(ddq_k1) dq2, (nQk, nQ, nc)."""
        return self._pick3('dddkdq', True, constraint, k1, 'kin', q2, 'config')

    def lambda_dudq(self, constraint=None, u1=None, q2=None):
        """d2 lambda / du1 dq2, (nu, nQ, nc)."""
        return self._pick3('dudq', True, constraint, u1, 'input', q2, 'config')

    def lambda_duddq(self, constraint=None, u1=None, dq2=None):
        """d2 lambda / du1 d(dq2), (nu, nQ, nc)."""
        return self._pick3('duddq', True, constraint, u1, 'input', dq2, 'config')

    def lambda_dudu(self, constraint=None, u1=None, u2=None):
        """d2 lambda / du1 du2, (nu, nu, nc)."""
        return self._pick3('dudu', True, constraint, u1, 'input', u2, 'input')

    # ------------------------------------------------------------------ constraints
    def _optimize_configs(self, objective, tolerance, verbose, keep_kinematic, constant_q_list,
                          what, hessian=None):
        self._ensure_structure()
        fixed = set()
        if keep_kinematic:
            fixed.update(c.index for c in self._kin)
        for ident in (constant_q_list or ()):
            fixed.add(self.get_config(ident).index)
        free = np.array([i for i in range(self.nQ) if i not in fixed], dtype=int)
        q0 = self._q.copy()
        if free.size == 0:
            return q0

        def set_free(x):
            q = q0.copy()
            q[free] = x
            self._q[:] = q
            self._invalidate()

        def fun(x):
            set_free(x)
            val, grad = objective()
            return val, grad[free]

        def cons(x):
            set_free(x)
            return dynamics.constraint_values(self)

        def cons_jac(x):
            set_free(x)
            return self.constraint_jacobian()[:, free]

        constraints = ([{'type': 'eq', 'fun': cons, 'jac': cons_jac}] if self.nc else [])
        res = scipy.optimize.minimize(fun, q0[free], jac=True, method='SLSQP',
                                      constraints=constraints,
                                      options={'ftol': tolerance * 1e-2, 'maxiter': 500,
                                               'disp': bool(verbose)})
        set_free(res.x)
        if hessian is not None and not self.nc:
            # SLSQP stops on the change of the objective, which leaves q only ~sqrt(ftol)
            # accurate: polish with Newton steps until max |gradient| <= tolerance
            for _ in range(20):
                val, grad = objective()
                grad = grad[free]
                if np.abs(grad).max() <= tolerance:
                    break
                try:
                    cho = scipy.linalg.cho_factor(hessian()[np.ix_(free, free)])
                except np.linalg.LinAlgError:
                    break                   # not at a strict minimum: keep the SLSQP result
                x = self._q[free].copy()
                set_free(x - scipy.linalg.cho_solve(cho, grad))
                if objective()[0] > val + 1e-12 * (1.0 + abs(val)):
                    set_free(x)
                    break
        if self.nc:
            # polish onto the constraint manifold with Gauss-Newton (minimum-norm steps)
            for _ in range(50):
                h = dynamics.constraint_values(self)
                if np.abs(h).max() <= tolerance:
                    break
                J = self.constraint_jacobian()[:, free]
                step = np.linalg.lstsq(J, -h, rcond=None)[0]
                set_free(self._q[free] + step)
        if self.nc and np.abs(dynamics.constraint_values(self)).max() > max(tolerance, 1e-9):
            self._q[:] = q0
            self._invalidate()
            raise RuntimeError('%s failed: constraints not satisfied (|h| = %g; %s)'
                               % (what, np.abs(dynamics.constraint_values(self)).max(), res.message))
        return self.q

    def satisfy_constraints(self, tolerance=1e-10, verbose=False, keep_kinematic=False,
                            constant_q_list=None):
        """Move q to the nearest configuration with h(q) = 0 (min |q - q0|^2); returns q."""
        q0 = self._q.copy()

        def objective():
            d = self._q - q0
            return float(d @ d), 2.0 * d
        return self._optimize_configs(objective, tolerance, verbose, keep_kinematic,
                                      constant_q_list, 'satisfy_constraints')

    def minimize_potential_energy(self, tolerance=1e-10, verbose=False, keep_kinematic=False,
                                  constant_q_list=None):
        """Set dq = 0 and move q to a constrained minimum of V (a nearby equilibrium)."""
        self.dq = 0.0

        def objective():
            return self.potential_energy(), -self._L_dq_vector()
        return self._optimize_configs(objective, tolerance, verbose, keep_kinematic,
                                      constant_q_list, 'minimize_potential_energy',
                                      hessian=lambda: -self._L_dqdq_matrix())

    # ------------------------------------------------------------------ derivative tests
    def test_derivative_dq(self, func, func_dq, delta=1e-6, tolerance=1e-7, verbose=False,
                           test_name='<unnamed>'):
        """Compare ``func_dq(config)`` with central differences of ``func()`` for every config."""
        return check(self, 'q', func, func_dq, self.configs, delta, tolerance, verbose,
                     test_name)

    def test_derivative_ddq(self, func, func_ddq, delta=1e-6, tolerance=1e-7, verbose=False,
                            test_name='<unnamed>'):
        """Compare ``func_ddq(config)`` with central differences in each velocity."""
        return check(self, 'dq', func, func_ddq, self.configs, delta, tolerance, verbose,
                     test_name)

    def test_derivative_du(self, func, func_du, delta=1e-6, tolerance=1e-7, verbose=False,
                           test_name='<unnamed>'):
        """Compare ``func_du(input)`` with central differences in each input."""
        return check(self, 'u', func, func_du, self.inputs, delta, tolerance, verbose,
                     test_name)
