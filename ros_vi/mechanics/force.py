"""Force: base class for non-conservative generalized forces (trep's ``Force``)."""
import numpy as np

from ._derivcheck import abstract, check
from .config import Input


class Force:
    """A generalized force F(q, dq, u, t) on the configs (derive from it).

    Subclasses implement ``f(q)`` (the force on config ``q``) and its derivatives
    ``f_dq(q, q1)``, ``f_ddq(q, dq1)``, ``f_du(q, u1)`` and the second derivatives
    ``f_dqdq``, ``f_ddqdq``, ``f_ddqddq``, ``f_dudq``, ``f_duddq``, ``f_dudu``.
    The integrator uses the whole-array forms ``f_array()`` (nQ,), ``f_dq_array()``,
    ``f_ddq_array()`` (nQ, nQ) and ``f_du_array()`` (nQ, nu), indexed [output, input].
    """

    def __init__(self, system, name=None):
        self._system = system
        self.name = name
        system._add_force(self)

    def __repr__(self):
        return '<%s %r>' % (type(self).__name__, self.name)

    @property
    def system(self):
        """The :class:`System` that owns this force (read only)."""
        return self._system

    def _structure_updated(self):
        """Hook called after the system's structure changes."""

    def _create_input(self, name=None):
        """Create an :class:`Input` owned by this force."""
        return Input(self._system, name=name, force=self)

    def f(self, q):
        """Generalized force on config ``q`` [N or N m]."""
        raise abstract(self, 'f')

    def f_dq(self, q, q1):
        raise abstract(self, 'f_dq')

    def f_ddq(self, q, dq1):
        raise abstract(self, 'f_ddq')

    def f_du(self, q, u1):
        raise abstract(self, 'f_du')

    def f_dqdq(self, q, q1, q2):
        raise abstract(self, 'f_dqdq')

    def f_ddqdq(self, q, dq1, q2):
        raise abstract(self, 'f_ddqdq')

    def f_ddqddq(self, q, dq1, dq2):
        raise abstract(self, 'f_ddqddq')

    def f_dudq(self, q, u1, q2):
        raise abstract(self, 'f_dudq')

    def f_duddq(self, q, u1, dq2):
        raise abstract(self, 'f_duddq')

    def f_dudu(self, q, u1, u2):
        raise abstract(self, 'f_dudu')

    # whole-array forms
    def f_array(self):
        return np.array([self.f(c) for c in self._system.configs], dtype=float)

    def _matrix(self, method, cols):
        configs = self._system.configs
        return np.array([[method(a, b) for b in cols] for a in configs],
                        dtype=float).reshape(len(configs), len(cols))

    def f_dq_array(self):
        return self._matrix(self.f_dq, self._system.configs)

    def f_ddq_array(self):
        return self._matrix(self.f_ddq, self._system.configs)

    def f_du_array(self):
        return self._matrix(self.f_du, self._system.inputs)

    def _tensor(self, method, cols1, cols2):
        configs = self._system.configs
        return np.array([[[method(a, b, c) for c in cols2] for b in cols1] for a in configs],
                        dtype=float).reshape(len(configs), len(cols1), len(cols2))

    # second derivatives, (nQ, n1, n2) indexed [output, input1, input2]
    def f_dqdq_array(self):
        c = self._system.configs
        return self._tensor(self.f_dqdq, c, c)

    def f_ddqdq_array(self):
        c = self._system.configs
        return self._tensor(self.f_ddqdq, c, c)

    def f_ddqddq_array(self):
        c = self._system.configs
        return self._tensor(self.f_ddqddq, c, c)

    def f_dudq_array(self):
        s = self._system
        return self._tensor(self.f_dudq, s.inputs, s.configs)

    def f_duddq_array(self):
        s = self._system
        return self._tensor(self.f_duddq, s.inputs, s.configs)

    def f_dudu_array(self):
        s = self._system
        return self._tensor(self.f_dudu, s.inputs, s.inputs)

    # derivative checks
    def _all(self, method, *args):
        return [method(c, *args) for c in self._system.configs]

    def validate_f_dq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        return check(s, 'q', lambda: self._all(self.f), lambda q1: self._all(self.f_dq, q1),
                     s.configs, delta, tolerance, verbose, '%r.f_dq' % self)

    def validate_f_ddq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        return check(s, 'dq', lambda: self._all(self.f), lambda d1: self._all(self.f_ddq, d1),
                     s.configs, delta, tolerance, verbose, '%r.f_ddq' % self)

    def validate_f_du(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        return check(s, 'u', lambda: self._all(self.f), lambda u1: self._all(self.f_du, u1),
                     s.inputs, delta, tolerance, verbose, '%r.f_du' % self)

    def _validate2(self, attr, items_outer, items_inner, lower, exact, delta, tolerance,
                   verbose, label):
        s = self._system
        ok = True
        for a in items_outer:
            ok &= check(s, attr, lambda: self._all(lower, a),
                        lambda b: self._all(exact, a, b), items_inner, delta, tolerance,
                        verbose, '%r.%s' % (self, label))
        return ok

    def validate_f_dqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        c = self._system.configs
        return self._validate2('q', c, c, self.f_dq, self.f_dqdq, delta, tolerance,
                               verbose, 'f_dqdq')

    def validate_f_ddqdq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        c = self._system.configs
        return self._validate2('q', c, c, self.f_ddq, self.f_ddqdq, delta, tolerance,
                               verbose, 'f_ddqdq')

    def validate_f_ddqddq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        c = self._system.configs
        return self._validate2('dq', c, c, self.f_ddq, self.f_ddqddq, delta, tolerance,
                               verbose, 'f_ddqddq')

    def validate_f_dudq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        return self._validate2('q', s.inputs, s.configs, self.f_du, self.f_dudq, delta,
                               tolerance, verbose, 'f_dudq')

    def validate_f_duddq(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        return self._validate2('dq', s.inputs, s.configs, self.f_du, self.f_duddq, delta,
                               tolerance, verbose, 'f_duddq')

    def validate_f_dudu(self, delta=1e-6, tolerance=1e-6, verbose=False):
        s = self._system
        return self._validate2('u', s.inputs, s.inputs, self.f_du, self.f_dudu, delta,
                               tolerance, verbose, 'f_dudu')

    # trep's documented names for the same checks
    validate_h_dq = validate_f_dq
    validate_h_ddq = validate_f_ddq
    validate_h_du = validate_f_du
    validate_h_dqdq = validate_f_dqdq
    validate_h_ddqdq = validate_f_ddqdq
    validate_h_ddqddq = validate_f_ddqddq
    validate_h_dudq = validate_f_dudq
    validate_h_duddq = validate_f_duddq
    validate_h_dudu = validate_f_dudu


class AffineForce(Force):
    """Base for forces affine in (dq, u) with coefficients independent of q (Damping,
    ConfigForce), or piecewise affine in (q, dq) (JointDrives): every second derivative is
    zero, entry-wise and as whole arrays."""

    def f_dqdq(self, q, q1, q2):
        return 0.0

    def f_ddqdq(self, q, dq1, q2):
        return 0.0

    def f_ddqddq(self, q, dq1, dq2):
        return 0.0

    def f_dudq(self, q, u1, q2):
        return 0.0

    def f_duddq(self, q, u1, dq2):
        return 0.0

    def f_dudu(self, q, u1, u2):
        return 0.0

    def _zeros3(self, n1, n2):
        return np.zeros((self._system.nQ, n1, n2))

    def f_dqdq_array(self):
        n = self._system.nQ
        return self._zeros3(n, n)

    f_ddqdq_array = f_dqdq_array
    f_ddqddq_array = f_dqdq_array

    def f_dudq_array(self):
        return self._zeros3(self._system.nu, self._system.nQ)

    f_duddq_array = f_dudq_array

    def f_dudu_array(self):
        return self._zeros3(self._system.nu, self._system.nu)
