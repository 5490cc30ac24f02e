"""One-dimensional interpolating splines (re-creation of ``trep.Spline``).

A :class:`Spline` passes through a list of points ``(x_k, y_k)``,
``k = 0 .. N-1``, and can additionally be told the first derivative and/or
the second derivative at any of those points.  It is used, for example, by
``NonlinearConfigSpring`` to describe a force as a function of configuration
(only ``y``, ``dy`` and ``ddy`` are needed there).

Construction (what is solved, exactly)
--------------------------------------
The curve is made of ``N-1`` polynomial pieces.  Piece ``k`` lives on
``[x_k, x_{k+1}]`` and is stored as a quintic in the local variable
``t = x - x_k``::

    p_k(t) = c0 + c1 t + c2 t^2 + c3 t^3 + c4 t^4 + c5 t^5

Each piece is written in *quintic Hermite* form, i.e. it is fully determined
by the value, slope and curvature ``(y, y', y'')`` at its two end knots.
Because neighbouring pieces share the knot triple ``(y_k, d_k, s_k)``, the
spline is C2 (value, first and second derivative continuous) at every
interior knot by construction, and every specified value / derivative is
honoured exactly (it is inserted directly into the knot data).

The knot slopes ``d_k`` and curvatures ``s_k`` that were *not* given are
unknowns.  They are fixed as follows:

1. End conditions.  At an end knot where neither ``dy`` nor ``ddy`` was
   given, the *natural* condition ``y'' = 0`` is imposed.  If ``dy`` is
   given at an end but ``ddy`` is not, no extra condition is imposed there
   (the classical *clamped* spline).  A given ``ddy`` is of course used as is.
2. Smoothness.  The remaining unknowns minimise the "excess order" energy::

        E = integral over [x_0, x_{N-1}] of ( y''''(x) )^2 dx

   which is a positive-definite quadratic in the unknowns, so the minimiser
   is unique; it is found with one global linear least-squares solve.

``E`` is zero exactly when every piece is a cubic.  Consequences:

* With no derivatives given, the result is the ordinary natural C2 cubic
  spline.  Whenever the minimum of ``E`` is zero to round-off (relative size
  of all ``c4 h^4, c5 h^5`` below 1e-12), ``c4`` and ``c5`` are set to
  exactly 0, so ``coefficients[:, 4:]`` is exactly zero for cubic splines.
* With derivatives given only where a cubic spline can absorb them (e.g.
  ``dy`` or ``ddy`` at an end, or both ``ddy`` at the two ends), the result
  is the corresponding clamped / curvature-specified cubic spline.  In
  particular a cubic polynomial is reproduced exactly when its end
  derivatives are supplied.
* When more derivatives are specified than a cubic spline can honour (e.g.
  a slope at an interior knot), quartic/quintic terms appear -- as little of
  them as possible in the ``E`` sense, spread over neighbouring pieces rather
  than confined to a single piece.  (This is the "lowest order possible" of
  the trep documentation, interpreted as a global least-order criterion.)

Uniqueness of the minimiser: if the homogeneous problem (all ``y_k = 0``,
all given derivatives 0) had a nonzero zero-energy solution it would be a C2
cubic spline vanishing at every knot with ``y'' = 0`` or ``y' = 0`` at each
end, and such a spline is identically zero.  Hence the least-squares problem
always has full column rank.

Outside ``[x_0, x_{N-1}]`` the first / last polynomial piece is extrapolated.

Example
-------
>>> s = Spline([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]])
>>> round(s.y(1.0), 12), round(s.dy(1.0), 12), round(s.ddy(1.0), 12)
(1.0, 0.0, -3.0)
>>> s.coefficients.shape
(2, 6)
>>> t = Spline([[0.0, 0.0, 1.0], [1.0, 1.0, None, 0.0]])  # slope 1 at 0, y''=0 at 1
>>> round(t.y(0.5), 12)
0.5
"""

import math
import numbers

import numpy as np

__all__ = ["Spline"]

# relative size below which quartic/quintic terms are treated as round-off
_CUBIC_SNAP_RTOL = 1e-12


def _as_real(value, what):
    """Convert one user number to a finite float or raise ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (numbers.Real, np.integer, np.floating)):
        raise ValueError("%s must be a real number, got %r" % (what, value))
    out = float(value)
    if not math.isfinite(out):
        raise ValueError("%s must be finite, got %r" % (what, value))
    return out


def _parse_points(points):
    """Validate ``points``; return arrays x, y, d, s (d/s use NaN = unset)."""
    if isinstance(points, (str, bytes)):
        raise ValueError("points must be a sequence of [x, y(, dy(, ddy))] entries")
    try:
        entries = list(points)
    except TypeError:
        raise ValueError("points must be a sequence of [x, y(, dy(, ddy))] entries")
    n = len(entries)
    if n < 2:
        raise ValueError("a Spline needs at least 2 points, got %d" % n)

    x = np.empty(n)
    y = np.empty(n)
    d = np.full(n, np.nan)
    s = np.full(n, np.nan)
    for k, entry in enumerate(entries):
        if isinstance(entry, (str, bytes)):
            raise ValueError("points[%d] must be a sequence of 2-4 numbers" % k)
        try:
            entry = list(entry)
        except TypeError:
            raise ValueError("points[%d] must be a sequence of 2-4 numbers, got %r"
                             % (k, entry))
        if not 2 <= len(entry) <= 4:
            raise ValueError("points[%d] must have 2, 3 or 4 entries "
                             "[x, y, dy, ddy], got %d" % (k, len(entry)))
        x[k] = _as_real(entry[0], "points[%d] x" % k)
        y[k] = _as_real(entry[1], "points[%d] y" % k)
        if len(entry) >= 3 and entry[2] is not None:
            d[k] = _as_real(entry[2], "points[%d] dy" % k)
        if len(entry) >= 4 and entry[3] is not None:
            s[k] = _as_real(entry[3], "points[%d] ddy" % k)

    for k in range(1, n):
        if not x[k] > x[k - 1]:
            raise ValueError(
                "x values must be strictly increasing: points[%d] x=%r is not "
                "greater than points[%d] x=%r" % (k, x[k], k - 1, x[k - 1]))
    return x, y, d, s


def _piece_high_coeffs(h):
    """Linear maps giving (c3, c4, c5) of a quintic Hermite piece.

    For a piece of width ``h`` with knot data
    ``z = (y0, d0, s0, y1, d1, s1)`` the returned array ``G`` of shape (3, 6)
    satisfies ``(c3, c4, c5) = G @ z``.  (``c0, c1, c2 = y0, d0, s0/2``.)
    """
    # A = y1 - y0 - d0 h - s0 h^2/2,  B = d1 - d0 - s0 h,  C = s1 - s0
    A = np.array([-1.0, -h, -0.5 * h * h, 1.0, 0.0, 0.0])
    B = np.array([0.0, -1.0, -h, 0.0, 1.0, 0.0])
    C = np.array([0.0, 0.0, -1.0, 0.0, 0.0, 1.0])
    c3 = (20.0 * A - 8.0 * h * B + h * h * C) / (2.0 * h ** 3)
    c4 = (-15.0 * A + 7.0 * h * B - h * h * C) / h ** 4
    c5 = (6.0 * A - 3.0 * h * B + 0.5 * h * h * C) / h ** 5
    return np.vstack([c3, c4, c5])


def _solve(x, y, d, s):
    """Fill in the unspecified knot slopes/curvatures; return (N-1, 6) coeffs."""
    n = x.size
    d = d.copy()
    s = s.copy()
    # 1. natural end conditions where the end is completely free
    for e in (0, n - 1):
        if np.isnan(d[e]) and np.isnan(s[e]):
            s[e] = 0.0

    # knot data vector z = [y0, d0, s0, y1, d1, s1, ...]
    z = np.column_stack([y, d, s]).reshape(-1)
    unknown = np.flatnonzero(np.isnan(z))
    hs = np.diff(x)
    G = [_piece_high_coeffs(h) for h in hs]

    if unknown.size:
        # 2. residuals whose squared norm is E = sum_k int (y'''')^2
        #    on piece k: y'''' = a + b t, a = 24 c4, b = 120 c5,
        #    int_0^h (a + b t)^2 dt = h (a + b h/2)^2 + (h^3/12) b^2
        M = np.zeros((2 * (n - 1), 3 * n))
        for k, h in enumerate(hs):
            a = 24.0 * G[k][1]
            b = 120.0 * G[k][2]
            M[2 * k, 3 * k:3 * k + 6] = math.sqrt(h) * (a + 0.5 * h * b)
            M[2 * k + 1, 3 * k:3 * k + 6] = math.sqrt(h ** 3 / 12.0) * b
        known = np.where(np.isnan(z), 0.0, z)
        # column scaling by the local knot spacing for conditioning
        local_h = np.empty(n)
        local_h[0], local_h[-1] = hs[0], hs[-1]
        local_h[1:-1] = 0.5 * (hs[:-1] + hs[1:])
        order = unknown % 3                       # 1 -> slope, 2 -> curvature
        scale = local_h[unknown // 3] ** order
        Mu = M[:, unknown] * scale
        rhs = -M @ known
        sol, _, rank, _ = np.linalg.lstsq(Mu, rhs, rcond=None)
        if rank < unknown.size:  # cannot happen for valid input (see module doc)
            raise ValueError("spline conditions are degenerate")
        z = known
        z[unknown] = sol * scale

    coeffs = np.zeros((n - 1, 6))
    for k in range(n - 1):
        zk = z[3 * k:3 * k + 6]
        coeffs[k, 0] = zk[0]
        coeffs[k, 1] = zk[1]
        coeffs[k, 2] = 0.5 * zk[2]
        coeffs[k, 3:] = G[k] @ zk

    # If the minimum energy is zero (a C2 cubic spline honours every
    # condition), the quartic/quintic coefficients are pure round-off: make
    # the pieces exactly cubic, with c3 chosen so each piece still hits y_{k+1}.
    powers = hs[:, None] ** np.arange(6)
    scaled = np.abs(coeffs) * powers
    size = max(np.max(scaled[:, :4]), np.finfo(float).tiny)
    if np.max(scaled[:, 4:]) <= _CUBIC_SNAP_RTOL * size:
        coeffs[:, 4:] = 0.0
        zz = z.reshape(n, 3)
        coeffs[:, 3] = (zz[1:, 0] - coeffs[:, 0] - coeffs[:, 1] * hs
                        - coeffs[:, 2] * hs ** 2) / hs ** 3
    return coeffs, z.reshape(n, 3)


class Spline(object):
    """Piecewise-polynomial C2 interpolating spline.

    Parameters
    ----------
    points : sequence of N >= 2 entries
        Each entry is ``[x, y]``, ``[x, y, dy]`` or ``[x, y, dy, ddy]``;
        ``dy`` / ``ddy`` may be ``None`` (unspecified).  ``x`` must be
        strictly increasing; all given numbers must be finite.

    Attributes (read-only, each call returns a fresh copy)
    ----------
    x_points : ndarray, shape (N,)
    y_points : ndarray, shape (N,)
    coefficients : ndarray, shape (N-1, 6)
        Row ``k`` holds ``c0..c5`` of piece ``k`` in powers of
        ``(x - x_points[k])``, lowest order first.

    See the module docstring for exactly how unspecified derivatives and end
    conditions are chosen.

    Example
    -------
    >>> sp = Spline([[0, 0], [1, 2, None, 0.0], [3, 1]])
    >>> float(sp.y(1.0))
    2.0
    >>> abs(sp.ddy(1.0)) < 1e-12
    True
    """

    def __init__(self, points):
        x, y, d, s = _parse_points(points)
        self._x = x
        self._y = y
        self._dy_spec = d
        self._ddy_spec = s
        self._coeffs, self._knot_data = _solve(x, y, d, s)

    # ----------------------------------------------------------- properties
    @property
    def x_points(self):
        """ndarray (N,): x values of the defining points (read-only copy)."""
        return self._x.copy()

    @property
    def y_points(self):
        """ndarray (N,): y values of the defining points (read-only copy)."""
        return self._y.copy()

    @property
    def coefficients(self):
        """ndarray (N-1, 6): piece coefficients in powers of (x - x_k)."""
        return self._coeffs.copy()

    @property
    def points(self):
        """The defining points as a list of [x, y, dy, ddy] (None = unset)."""
        out = []
        for k in range(self._x.size):
            d = self._dy_spec[k]
            s = self._ddy_spec[k]
            out.append([float(self._x[k]), float(self._y[k]),
                        None if np.isnan(d) else float(d),
                        None if np.isnan(s) else float(s)])
        return out

    def __len__(self):
        return int(self._x.size)

    def __repr__(self):
        return "Spline(%r)" % (self.points,)

    def copy(self):
        """Return an independent copy of this spline."""
        new = Spline.__new__(Spline)
        new._x = self._x.copy()
        new._y = self._y.copy()
        new._dy_spec = self._dy_spec.copy()
        new._ddy_spec = self._ddy_spec.copy()
        new._coeffs = self._coeffs.copy()
        new._knot_data = self._knot_data.copy()
        return new

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    # ----------------------------------------------------------- evaluation
    def _eval(self, x, order):
        xa = np.asarray(x, dtype=float)
        k = np.searchsorted(self._x, xa, side="right") - 1
        k = np.clip(k, 0, self._x.size - 2)
        t = xa - self._x[k]
        c = self._coeffs[k]                  # shape xa.shape + (6,)
        if order == 0:
            w = (c[..., 0], c[..., 1], c[..., 2], c[..., 3], c[..., 4], c[..., 5])
        elif order == 1:
            w = (c[..., 1], 2.0 * c[..., 2], 3.0 * c[..., 3],
                 4.0 * c[..., 4], 5.0 * c[..., 5])
        else:
            w = (2.0 * c[..., 2], 6.0 * c[..., 3], 12.0 * c[..., 4],
                 20.0 * c[..., 5])
        acc = w[-1]
        for coef in w[-2::-1]:               # Horner
            acc = acc * t + coef
        if np.ndim(x) == 0:
            return float(acc)
        return np.asarray(acc, dtype=float)

    def y(self, x):
        """Spline value at ``x`` (float -> float, array -> array of same shape)."""
        return self._eval(x, 0)

    def dy(self, x):
        """First derivative dy/dx at ``x`` (float or array)."""
        return self._eval(x, 1)

    def ddy(self, x):
        """Second derivative d2y/dx2 at ``x`` (float or array)."""
        return self._eval(x, 2)
