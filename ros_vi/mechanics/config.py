"""Configuration and input variables (trep's ``Config`` and ``Input``)."""


class Config:
    """One generalized coordinate q_i of a :class:`System`.

    Created by :class:`Frame` (a joint) or by a constraint that needs a kinematic variable;
    create one directly only when writing a new constraint type.

    Parameters
    ----------
    system : System
    name : str, optional
        Unique name used by ``System.get_config``.
    kinematic : bool
        Kinematic configs are perfectly controllable: their trajectory is an input
        (``ddq`` for continuous dynamics, the next value ``k2`` for the integrator).
    """

    def __init__(self, system, name=None, kinematic=False):
        self._system = system
        self.name = name
        self._kinematic = bool(kinematic)
        self._frame = None
        self._index = -1
        self._k_index = -1
        system._add_config(self)

    def __repr__(self):
        kind = 'kinematic' if self._kinematic else 'dynamic'
        return '<Config %r (%s) q=%g>' % (self.name, kind, self.q)

    @property
    def system(self):
        """The owning :class:`System` (read only)."""
        return self._system

    @property
    def kinematic(self):
        """True for a kinematic configuration variable (read only)."""
        return self._kinematic

    @property
    def frame(self):
        """The :class:`Frame` whose transform this config drives, or None (read only)."""
        return self._frame

    @property
    def index(self):
        """Index in ``System.configs`` (equal to the index in ``dyn_configs`` when dynamic)."""
        self._system._ensure_structure()
        return self._index

    @property
    def k_index(self):
        """Index in ``System.kin_configs`` for a kinematic config, else -1."""
        self._system._ensure_structure()
        return self._k_index

    @property
    def masses(self):
        """Frames with mass whose pose depends on this config (read only)."""
        frame = self._frame
        if frame is None:
            return ()
        return tuple(f for f in frame.flatten_tree() if f._has_mass())

    # State, stored in the System's arrays so that whole-vector access is free.
    @property
    def q(self):
        """Current value [m or rad]."""
        return float(self._system.data.q[self.index])

    @q.setter
    def q(self, value):
        self._system._set_component('_q', self.index, value, self)

    @property
    def dq(self):
        """Current velocity [m/s or rad/s]."""
        return float(self._system.data.dq[self.index])

    @dq.setter
    def dq(self, value):
        self._system._set_component('_dq', self.index, value, self)

    @property
    def ddq(self):
        """Current acceleration [m/s^2 or rad/s^2]."""
        return float(self._system.data.ddq[self.index])

    @ddq.setter
    def ddq(self, value):
        self._system._set_component('_ddq', self.index, value, self)


class Input:
    """One input variable u_i, created by the :class:`Force` that uses it."""

    def __init__(self, system, name=None, force=None):
        self._system = system
        self.name = name
        self._force = force
        self._index = -1
        system._add_input(self)

    def __repr__(self):
        return '<Input %r u=%g>' % (self.name, self.u)

    @property
    def system(self):
        """The owning :class:`System` (read only)."""
        return self._system

    @property
    def force(self):
        """The :class:`Force` that uses this input (read only)."""
        return self._force

    @property
    def index(self):
        """Index in ``System.inputs``."""
        self._system._ensure_structure()
        return self._index

    @property
    def u(self):
        """Current value (units of the force that uses it: N, N m, ...)."""
        return float(self._system.data.u[self.index])

    @u.setter
    def u(self, value):
        self._system._set_component('_u', self.index, value, self)
