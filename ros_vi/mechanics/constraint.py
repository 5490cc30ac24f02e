"""Constraint: base class for holonomic constraints h(q) = 0 (trep's ``Constraint``)."""
import numpy as np

from ._derivcheck import abstract, check


class Constraint:
    """A scalar holonomic constraint h(q) = 0 (derive from it).

    Subclasses implement ``h()``, ``h_dq(q1)``, ``h_dqdq(q1, q2)``, ``h_dqdqdq(q1, q2, q3)``
    (and optionally ``h_dqdqdqdq``).  Whole-array forms ``h_dq_array()`` (nQ,),
    ``h_dqdq_array()`` (nQ, nQ) and ``h_dqdqdq_array()`` (nQ, nQ, nQ) are built from them.

    ``tolerance``: the constraint counts as satisfied when ``|h| <= tolerance`` (in h's
    units; the integrator's convergence test).
    """

    def __init__(self, system, name=None, tolerance=1e-10):
        self._system = system
        self.name = name
        self.tolerance = tolerance
        self._index = -1
        system._add_constraint(self)

    @property
    def tolerance(self):
        """|h| at most this counts as satisfied (finite, > 0; in h's units)."""
        return self._tolerance

    @tolerance.setter
    def tolerance(self, value):
        try:
            tol = float(value)
        except (TypeError, ValueError):
            raise TypeError('%r: tolerance must be a number, got %r' % (self, value)) from None
        if not (np.isfinite(tol) and tol > 0.0):
            raise ValueError('%r: tolerance must be finite and positive, got %r'
                             % (self, value))
        self._tolerance = tol
        # compiled steppers copy the tolerances
        self._system._parameters_changed()

    def __repr__(self):
        return '<%s %r>' % (type(self).__name__, self.name)

    @property
    def system(self):
        return self._system

    @property
    def index(self):
        """Index in ``System.constraints`` (and in every lambda vector)."""
        self._system._ensure_structure()
        return self._index

    def _structure_updated(self):
        """Hook called after the system's structure changes."""

    def h(self):
        raise abstract(self, 'h')

    def h_dq(self, q1):
        raise abstract(self, 'h_dq')

    def h_dqdq(self, q1, q2):
        raise abstract(self, 'h_dqdq')

    def h_dqdqdq(self, q1, q2, q3):
        raise abstract(self, 'h_dqdqdq')

    def h_dqdqdqdq(self, q1, q2, q3, q4):
        raise abstract(self, 'h_dqdqdqdq')

    def h_dq_array(self):
        return np.array([self.h_dq(c) for c in self._system.configs], dtype=float)

    def h_dqdq_array(self):
        c = self._system.configs
        return np.array([[self.h_dqdq(a, b) for b in c] for a in c],
                        dtype=float).reshape(len(c), len(c))

    def h_dqdqdq_array(self):
        c = self._system.configs
        n = len(c)
        return np.array([[[self.h_dqdqdq(a, b, d) for d in c] for b in c] for a in c],
                        dtype=float).reshape(n, n, n)

    def validate_h_dq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        return check(s, 'q', self.h, self.h_dq, s.configs, delta, tolerance, verbose,
                     '%r.h_dq' % self)

    def validate_h_dqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        c = s.configs
        return check(s, 'q', lambda: [self.h_dq(a) for a in c],
                     lambda q2: [self.h_dqdq(a, q2) for a in c], c, delta, tolerance, verbose,
                     '%r.h_dqdq' % self)

    def validate_h_dqdqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        c = s.configs
        return check(s, 'q', lambda: [[self.h_dqdq(a, b) for b in c] for a in c],
                     lambda q3: [[self.h_dqdqdq(a, b, q3) for b in c] for a in c], c, delta,
                     tolerance, verbose, '%r.h_dqdqdq' % self)

    def validate_h_dqdqdqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        c = s.configs
        return check(s, 'q', lambda: [[[self.h_dqdqdq(a, b, d) for d in c] for b in c]
                                       for a in c],
                     lambda q4: [[[self.h_dqdqdqdq(a, b, d, q4) for d in c] for b in c]
                                 for a in c], c, delta, tolerance, verbose,
                     '%r.h_dqdqdqdq' % self)
