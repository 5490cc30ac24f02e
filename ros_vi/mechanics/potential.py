"""Potential: base class for conservative forces (trep's ``Potential``)."""
import numpy as np

from ._derivcheck import abstract, check


class Potential:
    """A potential energy V(q) [J] in a :class:`System` (derive from it; never use it directly).

    Subclasses implement ``V()``, ``V_dq(q1)``, ``V_dqdq(q1, q2)`` and ``V_dqdqdq(q1, q2, q3)``
    at the system's current state.  The integrator uses the whole-vector forms
    ``V_dq_array()`` (nQ,) and ``V_dqdq_array()`` (nQ, nQ); built-in potentials override
    them with vectorised code, user potentials get them from the per-config methods.
    """

    #: Uniform gravity (3,) [m/s^2] that this potential adds to the compiled kernel, or None
    #: for a potential evaluated by its own methods (all but :class:`Gravity`).
    kernel_gravity = None

    def __init__(self, system, name=None):
        self._system = system
        self.name = name
        system._add_potential(self)

    def __repr__(self):
        return '<%s %r>' % (type(self).__name__, self.name)

    @property
    def system(self):
        """The :class:`System` that owns this potential (read only)."""
        return self._system

    def _structure_updated(self):
        """Hook called after the system's structure changes."""

    def V(self):
        """Potential energy [J] at the current configuration."""
        raise abstract(self, 'V')

    def V_dq(self, q1):
        """dV/dq1."""
        raise abstract(self, 'V_dq')

    def V_dqdq(self, q1, q2):
        """d^2V / dq1 dq2."""
        raise abstract(self, 'V_dqdq')

    def V_dqdqdq(self, q1, q2, q3):
        """d^3V / dq1 dq2 dq3."""
        raise abstract(self, 'V_dqdqdq')

    def V_dq_array(self):
        return np.array([self.V_dq(c) for c in self._system.configs], dtype=float)

    def V_dqdq_array(self):
        configs = self._system.configs
        return np.array([[self.V_dqdq(a, b) for b in configs] for a in configs],
                        dtype=float).reshape(len(configs), len(configs))

    def V_dqdqdq_array(self):
        """Third derivatives (nQ, nQ, nQ); used by the integrator's second derivatives."""
        c = self._system.configs
        n = len(c)
        return np.array([[[self.V_dqdqdq(a, b, d) for d in c] for b in c] for a in c],
                        dtype=float).reshape(n, n, n)

    def validate_V_dq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check V_dq against central differences of V; True if all pass."""
        s = self._system
        return check(s, 'q', self.V, self.V_dq, s.configs, delta, tolerance, verbose,
                     '%r.V_dq' % self)

    def validate_V_dqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check V_dqdq against central differences of V_dq."""
        s = self._system
        configs = s.configs
        return check(s, 'q', lambda: [self.V_dq(c) for c in configs],
                     lambda q2: [self.V_dqdq(c, q2) for c in configs], configs, delta,
                     tolerance, verbose, '%r.V_dqdq' % self)

    def validate_V_dqdqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        """Check V_dqdqdq against central differences of V_dqdq."""
        s = self._system
        configs = s.configs
        return check(s, 'q', lambda: [[self.V_dqdq(a, b) for b in configs] for a in configs],
                     lambda q3: [[self.V_dqdqdq(a, b, q3) for b in configs] for a in configs],
                     configs, delta, tolerance, verbose, '%r.V_dqdqdq' % self)
