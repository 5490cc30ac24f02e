"""Spline-defined spring on one config (trep's ``potentials.NonlinearConfigSpring``)."""
import numpy as np

from ..potential import Potential


def _finite(value, what):
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError('NonlinearConfigSpring: %s must be a number, got %r'
                         % (what, value)) from None
    if not np.isfinite(out):
        raise ValueError('NonlinearConfigSpring: %s must be finite, got %r' % (what, value))
    return out


def _spline_antiderivative(spline, x):
    """Exact integral of the spline from its first knot to ``x`` (outside the knot range
    the first / last piece is extrapolated, as :meth:`Spline.y` does)."""
    xs = spline.x_points
    # Spline rows are highest power first (trep layout); reverse to powers 0, 1, 2, ...
    coeffs = spline.coefficients[:, ::-1]          # (pieces, ncoef) in powers of (x - x_k)
    powers = np.arange(1, coeffs.shape[1] + 1)
    h = np.diff(xs)
    piece_integrals = (coeffs * h[:, None] ** powers / powers).sum(axis=1)
    starts = np.concatenate(([0.0], np.cumsum(piece_integrals)))
    k = int(np.clip(np.searchsorted(xs, x, side='right') - 1, 0, xs.size - 2))
    t = x - xs[k]
    return float(starts[k] + (coeffs[k] * t ** powers / powers).sum())


class NonlinearConfigSpring(Potential):
    """A spring on one config whose force is a spline: ``F_q = -f(m q + b)``.

    Parameters
    ----------
    config : Config identifier (index, name or object); must already exist
    spline : :class:`ros_vi.Spline` (or any object with ``y``, ``dy``, ``ddy``)
        ``f(s)``: the force [N or N m] as a function of the scaled config ``s = m q + b``.
    m : float  scale on the config [1/m or 1/rad per unit of the spline's x]
    b : float  offset on the scaled config

    Derivatives: ``V_dq = f(m q + b)``, ``V_dqdq = m f'(m q + b)``,
    ``V_dqdqdq = m^2 f''(m q + b)``.

    ``V()`` (not provided by trep) is the integral of ``V_dq`` from ``q = 0``, i.e. zero at
    ``q = 0``: ``V(q) = (F(m q + b) - F(b)) / m`` with ``F`` the antiderivative of the
    spline, computed exactly from the spline's piecewise-polynomial coefficients (with
    ``m = 0``: ``V = f(b) q``).  For a spline object without ``coefficients`` /
    ``x_points`` the integral is computed with ``scipy.integrate.quad`` (tolerance 1e-12).
    """

    def __init__(self, system, config, spline, m=1.0, b=0.0, name=None):
        self._config = system.get_config(config)
        self.spline = spline
        self.m = m
        self.b = b
        Potential.__init__(self, system, name)

    @property
    def config(self):
        """The config the spring depends and acts on (read only)."""
        return self._config

    def get_config(self):
        """The config the spring acts on (trep's accessor; same as :attr:`config`)."""
        return self._config

    @property
    def spline(self):
        """The spline relating the scaled config to the force."""
        return self._spline

    def get_spline(self):
        """The spline (trep's accessor; same as :attr:`spline`)."""
        return self._spline

    @spline.setter
    def spline(self, value):
        for attr in ('y', 'dy', 'ddy'):
            if not callable(getattr(value, attr, None)):
                raise TypeError('NonlinearConfigSpring: spline must be a Spline (an object '
                                'with y, dy and ddy methods), got %r' % (value,))
        self._spline = value
        self._touch()

    @property
    def m(self):
        """Linear scaling factor on the config."""
        return self._m

    @m.setter
    def m(self, value):
        self._m = _finite(value, 'm')
        self._touch()

    @property
    def b(self):
        """Offset added to the scaled config."""
        return self._b

    @b.setter
    def b(self, value):
        self._b = _finite(value, 'b')
        self._touch()

    def _touch(self):
        if hasattr(self, '_system'):
            self._system.data.invalidate()

    def _s(self):
        return self._m * self._config.q + self._b

    def _is(self, q):
        return self._system.get_config(q) is self._config

    def _integral(self, lo, hi):
        sp = self._spline
        if hasattr(sp, 'coefficients') and hasattr(sp, 'x_points'):
            return _spline_antiderivative(sp, hi) - _spline_antiderivative(sp, lo)
        from scipy.integrate import quad
        return quad(sp.y, lo, hi, epsabs=1e-12, epsrel=1e-12, limit=200)[0]

    def V(self):
        """Energy [J], zero at q = 0 (see the class docstring)."""
        q = self._config.q
        if self._m == 0.0:
            return float(self._spline.y(self._b) * q)
        return float(self._integral(self._b, self._s()) / self._m)

    def V_dq(self, q1):
        if not self._is(q1):
            return 0.0
        return float(self._spline.y(self._s()))

    def V_dqdq(self, q1, q2):
        if not (self._is(q1) and self._is(q2)):
            return 0.0
        return float(self._m * self._spline.dy(self._s()))

    def V_dqdqdq(self, q1, q2, q3):
        if not (self._is(q1) and self._is(q2) and self._is(q3)):
            return 0.0
        return float(self._m ** 2 * self._spline.ddy(self._s()))

    def V_dq_array(self):
        out = np.zeros(self._system.nQ)
        out[self._config.index] = self._spline.y(self._s())
        return out

    def V_dqdq_array(self):
        n = self._system.nQ
        out = np.zeros((n, n))
        i = self._config.index
        out[i, i] = self._m * self._spline.dy(self._s())
        return out
