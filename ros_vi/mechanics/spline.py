"""One-dimensional interpolating splines (re-creation of ``trep.Spline``).

A :class:`Spline` passes through a list of points ``(x_k, y_k)``,
``k = 0 .. N-1``, and can additionally be told the first derivative ``dy``
and/or the second derivative ``ddy`` at any of those points.  It is used, for
example, by ``NonlinearConfigSpring`` to describe a force as a function of
configuration.  Units are those of the data: ``y`` in units of y, ``dy`` in
y/x, ``ddy`` in y/x^2.

Construction (trep's local scheme)
----------------------------------
Piece ``j`` (``j = 0 .. N-2``) lives on ``[x_j, x_{j+1}]`` and is a polynomial
of degree at most 5 in ``t = x - x_j`` with ``p_j(0) = y_j``::

    p_j(t) = a_j t^5 + b_j t^4 + c_j t^3 + d_j t^2 + e_j t + y_j

The ``5 (N-1)`` unknowns ``a_j .. e_j`` are fixed by one square linear system:

* ``p_j(h_j) = y_{j+1}`` (``h_j = x_{j+1} - x_j``), and slope and curvature
  continuity ``p_j'(h_j) = p_{j+1}'(0)``, ``p_j''(h_j) = p_{j+1}''(0)`` at
  every interior knot;
* every given ``dy`` / ``ddy`` is imposed at its knot;
* every derivative that was *not* given instead removes one high-order term:
  it "borrows" a piece next to its knot and sets that piece's ``t^5``
  coefficient to zero (first borrow of the piece) or its ``t^4`` coefficient
  (second borrow).  A knot ``i < N-1`` asks first for piece ``i-1``, then
  piece ``i`` if unborrowed, then ``i-1``, then ``i`` if borrowed once; the
  last knot asks piece ``N-2`` before ``N-3``.  If both candidates are
  already full, the nearest earlier piece with a free slot is used.  The
  slope of a knot is handled before its curvature, knots in increasing
  order.

Hence pieces are cubic where no extra derivative is given and rise to
degree 4 or 5 only next to knots with more derivatives than a cubic spline
can absorb ("the lowest order polynomials possible" of trep's documentation).
With no derivatives at all this is exactly the natural cubic spline; with
``dy`` at both ends the clamped cubic spline.

If fewer than two derivatives are given in total, ``ddy = 0`` is assumed at
the first point and then, if still fewer than two, at the last point (trep
prints a notice; we do this silently).  So one slope ``dy`` at ``x_0`` alone
gives ``y''(x_0) = 0`` as the second condition, not a clamped/natural mix.

Extrapolation: outside ``[x_0, x_{N-1}]`` the curve continues as the
quadratic Taylor polynomial (value, slope, curvature) at the nearest end.
trep stores these two quadratics as extra pieces, and so do we: with ``N``
points, :attr:`Spline.x_points` has ``N + 2`` entries (one extra knot before
``x_0`` and one after ``x_{N-1}``, each at a distance equal to the last
interval ``x_{N-1} - x_{N-2}``) and :attr:`Spline.coefficients` has shape
``(N + 1, 6)``: row ``r`` holds ``(a, b, c, d, e, f)`` of piece ``r``,
highest power first, in powers of ``x - x_points[r]``.

If the derivative conditions cannot be met with this scheme (too many
unspecified derivatives gathered on too few pieces, or a singular system),
``ValueError`` is raised (trep raises numpy's ``LinAlgError``, itself a
``ValueError``).

Example
-------
>>> s = Spline([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]])
>>> round(s.y(1.0), 12), round(s.dy(1.0), 12), round(s.ddy(1.0), 12)
(1.0, 0.0, -3.0)
>>> s.coefficients.shape
(4, 6)
>>> import math                          # force curve of trep's radial engine
>>> f = Spline([(0, 0, 0, 0), (math.pi / 4, 1), (3 * math.pi / 4, 1),
...             (math.pi, 0, 0, 0), (2 * math.pi, 0, 0, 0)])
>>> round(f.y(math.pi / 2) * 7, 12)      # exactly 13/7
13.0
"""

import bisect
import math
import numbers

import numpy as np

__all__ = ["Spline"]

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


# Rows of the linear map from (a, b, c, d, e) of a piece to its value, slope
# and curvature at local coordinate t (the constant term y_j is separate).
def _value_row(t):
    return np.array([t ** 5, t ** 4, t ** 3, t ** 2, t])


def _slope_row(t):
    return np.array([5 * t ** 4, 4 * t ** 3, 3 * t ** 2, 2 * t, 1.0])


def _curvature_row(t):
    return np.array([20 * t ** 3, 12 * t ** 2, 6 * t, 2.0, 0.0])


class _Slots(object):
    """Book-keeping of which high-order terms the unspecified derivatives remove.

    ``taken[j]`` counts how often piece ``j`` has been borrowed: the first
    borrow zeroes its t^5 term (column 0 of the piece), the second its t^4
    term (column 1).  A third borrow of one piece means the conditions cannot
    be met by this scheme.
    """

    def __init__(self, pieces):
        self.taken = [0] * pieces

    def _pick(self, first, second):
        t = self.taken
        for count in (0, 1):
            for j in (first, second):
                if j is not None and t[j] == count:
                    return j
        j = max(c for c in (first, second) if c is not None)
        while j > 0 and t[j] >= 2:
            j -= 1
        return j

    def take(self, knot, last):
        """Piece and column (0: t^5, 1: t^4) to zero for a missing derivative."""
        if last:
            j = self._pick(knot - 1, knot - 2 if knot >= 2 else None)
        else:
            j = self._pick(knot - 1 if knot >= 1 else None, knot)
        if self.taken[j] >= 2:
            raise ValueError(
                "spline: too many unspecified derivatives near points[%d] for "
                "polynomials of degree <= 5; specify more derivatives there"
                % knot)
        self.taken[j] += 1
        return j, self.taken[j] - 1


def _solve(x, y, d, s):
    """Coefficients (N-1, 5) of a..e of every piece (see the module docstring)."""
    n = x.size
    m = n - 1                       # number of pieces
    d = d.copy()
    s = s.copy()
    given = int(np.count_nonzero(~np.isnan(d)) + np.count_nonzero(~np.isnan(s)))
    for end in (0, n - 1):
        if given < 2 and np.isnan(s[end]):
            s[end] = 0.0
            given += 1

    h = np.diff(x)
    A = np.zeros((5 * m, 5 * m))
    rhs = np.zeros(5 * m)
    slots = _Slots(m)
    killed = []                     # flat indices 5*piece + col of removed terms
    row = 0

    def put(piece, coeffs, value):
        nonlocal row
        A[row, 5 * piece:5 * piece + 5] += coeffs
        rhs[row] = value
        row += 1

    for j in range(m):
        put(j, _value_row(h[j]), y[j + 1] - y[j])
        if j + 1 < m:
            # continuity of slope and curvature with piece j+1 at t = 0
            A[row, 5 * (j + 1):5 * (j + 1) + 5] = -_slope_row(0.0)
            put(j, _slope_row(h[j]), 0.0)
            A[row, 5 * (j + 1):5 * (j + 1) + 5] = -_curvature_row(0.0)
            put(j, _curvature_row(h[j]), 0.0)
        # conditions at knot j, the left end of piece j
        for given_value, local_row in ((d[j], _slope_row(0.0)), (s[j], _curvature_row(0.0))):
            if np.isnan(given_value):
                piece, col = slots.take(j, last=False)
                killed.append(5 * piece + col)
            else:
                put(j, local_row, given_value)
    # conditions at the last knot, the right end of piece m-1
    for given_value, local_row in ((d[m], _slope_row(h[-1])), (s[m], _curvature_row(h[-1]))):
        if np.isnan(given_value):
            piece, col = slots.take(m, last=True)
            killed.append(5 * piece + col)
        else:
            put(m - 1, local_row, given_value)
    # The removed terms are exactly zero: drop their columns (the system
    # stays square, one row per remaining unknown).
    keep = np.setdiff1d(np.arange(5 * m), killed)
    assert row == keep.size == 5 * m - len(killed)
    sol = np.zeros(5 * m)
    try:
        sol[keep] = np.linalg.solve(A[:row][:, keep], rhs[:row])
    except np.linalg.LinAlgError:
        raise ValueError("spline: the given points and derivatives lead to a "
                         "singular system; specify the derivatives differently")
    return sol.reshape(m, 5)


def _with_extrapolation(x, y, high):
    """trep's stored layout: add quadratic pieces before x_0 and after x_{N-1}.

    Returns x_points (N+2,), y_points (N+2,) and coefficients (N+1, 6), rows
    ``(a, b, c, d, e, f)`` highest power first.
    """
    n = x.size
    coeffs = np.zeros((n + 1, 6))
    coeffs[1:n, :5] = high
    coeffs[1:n, 5] = y[:-1]
    last = x[-1] - x[-2]
    # value, slope and curvature at both ends
    y0, dy0, ddy0 = y[0], high[0, 4], 2.0 * high[0, 3]
    yN = y[-1]
    dyN = float(_slope_row(last) @ high[-1])
    ddyN = float(_curvature_row(last) @ high[-1])
    # quadratic through the Taylor data at x_0, written around x_0 - last
    coeffs[0, 3:] = (0.5 * ddy0, dy0 - ddy0 * last,
                     y0 - dy0 * last + 0.5 * ddy0 * last ** 2)
    coeffs[n, 3:] = (0.5 * ddyN, dyN, yN)
    x_points = np.concatenate(([x[0] - last], x, [x[-1] + last]))
    y_points = np.concatenate(([coeffs[0, 5]], y,
                               [yN + dyN * last + 0.5 * ddyN * last ** 2]))
    return x_points, y_points, coeffs


class Spline(object):
    """Piecewise-polynomial C2 interpolating spline (trep's algorithm).

    Parameters
    ----------
    points : sequence of N >= 2 entries
        Each entry is ``[x, y]``, ``[x, y, dy]`` or ``[x, y, dy, ddy]``;
        ``dy`` / ``ddy`` may be ``None`` (unspecified).  ``x`` must be
        strictly increasing; all given numbers must be finite.

    Attributes (read-only, each call returns a fresh copy)
    ----------
    x_points : ndarray, shape (N+2,)
        The knots, with one extra knot before and after (see module doc).
    y_points : ndarray, shape (N+2,)
        Spline values at ``x_points``.
    coefficients : ndarray, shape (N+1, 6)
        Row ``r`` holds ``(a, b, c, d, e, f)`` of piece ``r`` in powers of
        ``(x - x_points[r])``, highest power first.  Rows 0 and N are the
        quadratic extrapolation pieces.

    See the module docstring for how unspecified derivatives are chosen.

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
        self._dy_spec = d
        self._ddy_spec = s
        self._points_x = x
        self._x, self._y, self._coeffs = _with_extrapolation(x, y, _solve(x, y, d, s))

    # ----------------------------------------------------------- properties
    @property
    def x_points(self):
        """ndarray (N+2,): knots incl. the two extrapolation knots (copy)."""
        return self._x.copy()

    @property
    def y_points(self):
        """ndarray (N+2,): spline values at :attr:`x_points` (copy)."""
        return self._y.copy()

    @property
    def coefficients(self):
        """ndarray (N+1, 6): piece coefficients, highest power first (copy)."""
        return self._coeffs.copy()

    @property
    def points(self):
        """The defining points as a list of [x, y, dy, ddy] (None = unset)."""
        out = []
        for k in range(self._points_x.size):
            d = self._dy_spec[k]
            s = self._ddy_spec[k]
            out.append([float(self._points_x[k]), float(self._y[k + 1]),
                        None if np.isnan(d) else float(d),
                        None if np.isnan(s) else float(s)])
        return out

    def __len__(self):
        """Number of defining points N."""
        return int(self._points_x.size)

    def __repr__(self):
        return "Spline(%r)" % (self.points,)

    def copy(self):
        """Return an independent copy of this spline."""
        new = Spline.__new__(Spline)
        for attr in ("_x", "_y", "_coeffs", "_dy_spec", "_ddy_spec", "_points_x"):
            setattr(new, attr, getattr(self, attr).copy())
        return new

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    # ----------------------------------------------------------- evaluation
    def _scalar_pieces(self):
        """Knots and per-order Horner coefficients as Python lists (built once): a scalar
        evaluation by ``bisect`` and float arithmetic is ~20x faster than through NumPy
        and performs exactly the same operations."""
        pieces = getattr(self, '_pieces', None)
        if pieces is None:
            rows = self._coeffs.tolist()
            pieces = self._pieces = (
                self._x.tolist(),
                ([r for r in rows],
                 [[(5 - i) * r[i] for i in range(5)] for r in rows],
                 [[(5 - i) * (4 - i) * r[i] for i in range(4)] for r in rows]))
        return pieces

    def _eval(self, x, order):
        if isinstance(x, (float, int)):
            knots, coeffs = self._scalar_pieces()
            k = min(max(bisect.bisect_right(knots, x) - 1, 0), len(knots) - 2)
            t = x - knots[k]
            w = coeffs[order][k]
            acc = w[0]
            for coef in w[1:]:               # Horner
                acc = acc * t + coef
            return float(acc)
        xa = np.asarray(x, dtype=float)
        k = np.searchsorted(self._x, xa, side="right") - 1
        k = np.clip(k, 0, self._x.size - 2)
        t = xa - self._x[k]
        c = self._coeffs[k]                  # shape xa.shape + (6,), highest first
        if order == 0:
            w = [c[..., i] for i in range(6)]
        elif order == 1:
            w = [(5 - i) * c[..., i] for i in range(5)]
        else:
            w = [(5 - i) * (4 - i) * c[..., i] for i in range(4)]
        acc = w[0]
        for coef in w[1:]:                   # Horner
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
