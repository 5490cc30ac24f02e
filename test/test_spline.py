"""Tests for ros_vi.mechanics.spline.Spline (re-creation of trep.Spline).

Layout (as trep): x_points (N+2,) with one extrapolation knot each side,
coefficients (N+1, 6) highest power first; quadratic extrapolation.
"""
import math

import copy

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from ros_vi.mechanics.spline import Spline


def _random_points(rng, n, spec_prob=0.0):
    x = np.cumsum(rng.uniform(0.2, 1.5, size=n)) - 1.0
    y = rng.normal(size=n)
    pts = []
    for k in range(n):
        entry = [x[k], y[k]]
        if spec_prob:
            dy = rng.normal() if rng.random() < spec_prob else None
            ddy = rng.normal() if rng.random() < spec_prob else None
            entry += [dy, ddy]
        pts.append(entry)
    return pts


# A fixed mix of specification patterns (interior dy, interior ddy, both,
# clamped ends, both at ends, none).
SPEC_CASES = [
    [[0, 0], [1, 1], [2, 0], [3, 2]],
    [[0, 0], [1, 1, 0.5], [2, 0], [3, 2]],
    [[0, 0], [1, 1, None, -4.0], [2, 0], [3, 2]],
    [[0, 0, 1.0], [1, 1, 0.0, 2.0], [2.5, 0], [3, 2, None, 1.0]],
    [[0, 0, 1.0, 0.5], [0.5, 1.0, -2.0, 3.0], [2.0, -1.0, 0.0, 0.0]],
    [[-1, 2, None, None], [0, 1, 0.0], [1, 2, None, None]],
    [[0, 1, 2.0, -1.0], [1, 3, 0.0, 4.0]],           # single full quintic
    [[0, 1], [1, 3]],                                 # two free points: line
    [[0, 0], [0.1, 0.3, 1.0], [0.2, 0.1, None, 2.0], [5, 1], [5.01, 1.1, 0.0]],
]


def _cases():
    rng = np.random.default_rng(1234)
    cases = [c for c in SPEC_CASES]
    for n in (2, 3, 5, 9):
        for prob in (0.0, 0.3, 0.7, 1.0):
            cases.append(_random_points(rng, n, prob))
    return cases


CASES = _cases()


def _scale(sp):
    c = np.abs(sp.coefficients)
    return 1.0 + c.max()


def _spec(entry):
    dy = entry[2] if len(entry) > 2 else None
    ddy = entry[3] if len(entry) > 3 else None
    return dy, ddy


@pytest.mark.parametrize("pts", CASES)
def test_interpolates_points_and_honours_derivatives(pts):
    sp = Spline(pts)
    tol = 1e-11 * _scale(sp)
    for entry in pts:
        x, y = float(entry[0]), float(entry[1])
        assert abs(sp.y(x) - y) <= tol
        dy, ddy = _spec(entry)
        if dy is not None:
            assert abs(sp.dy(x) - dy) <= tol
        if ddy is not None:
            assert abs(sp.ddy(x) - ddy) <= tol


@pytest.mark.parametrize("pts", CASES)
def test_c0_c1_c2_continuity_at_knots(pts):
    sp = Spline(pts)
    xs = sp.x_points
    c = sp.coefficients
    tol = 1e-10 * _scale(sp)
    for k in range(1, len(xs) - 1):
        # left limit: piece k-1 evaluated at its right end (exact polynomial)
        h = xs[k] - xs[k - 1]
        left = np.polynomial.polynomial.Polynomial(c[k - 1][::-1])
        right = np.polynomial.polynomial.Polynomial(c[k][::-1])
        for order in range(3):
            lv = left.deriv(order)(h) if order else left(h)
            rv = right.deriv(order)(0.0) if order else right(0.0)
            assert abs(lv - rv) <= tol, (k, order, lv, rv)
        # and through the public evaluators, just either side of the knot
        eps = 1e-7 * h
        assert abs(sp.y(xs[k] - eps) - sp.y(xs[k] + eps)) < 1e-5 * _scale(sp)
        assert abs(sp.dy(xs[k] - eps) - sp.dy(xs[k] + eps)) < 1e-5 * _scale(sp)
        assert abs(sp.ddy(xs[k] - eps) - sp.ddy(xs[k] + eps)) < 1e-4 * _scale(sp)


@pytest.mark.parametrize("pts", CASES)
def test_derivatives_match_finite_differences(pts):
    sp = Spline(pts)
    xs = sp.x_points
    rng = np.random.default_rng(7)
    h = 1e-5 * (xs[-1] - xs[0])
    # random points in the range and some outside (extrapolation)
    lo, hi = xs[0] - 0.5, xs[-1] + 0.5
    for x in rng.uniform(lo, hi, size=40):
        if np.min(np.abs(xs - x)) < 2 * h:
            continue  # keep the stencil inside a single piece
        fd1 = (sp.y(x + h) - sp.y(x - h)) / (2 * h)
        fd2 = (sp.dy(x + h) - sp.dy(x - h)) / (2 * h)
        assert fd1 == pytest.approx(sp.dy(x), rel=1e-6, abs=1e-6 * _scale(sp))
        assert fd2 == pytest.approx(sp.ddy(x), rel=1e-6, abs=1e-6 * _scale(sp))


def test_natural_cubic_matches_scipy():
    rng = np.random.default_rng(3)
    pts = _random_points(rng, 8)
    sp = Spline(pts)
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    ref = CubicSpline(x, y, bc_type="natural")
    xx = np.linspace(x[0], x[-1], 101)
    np.testing.assert_allclose(sp.y(xx), ref(xx), atol=1e-12)
    np.testing.assert_allclose(sp.dy(xx), ref(xx, 1), atol=1e-11)
    np.testing.assert_allclose(sp.ddy(xx), ref(xx, 2), atol=1e-10)
    # no derivatives given -> pieces are exactly cubic (t^5, t^4 terms removed)
    assert np.all(sp.coefficients[:, :2] == 0.0)
    assert sp.ddy(x[0]) == pytest.approx(0.0, abs=1e-12)
    assert sp.ddy(x[-1]) == pytest.approx(0.0, abs=1e-12)


def test_clamped_ends_match_scipy():
    x = np.array([0.0, 0.7, 1.5, 2.0, 3.2])
    y = np.array([1.0, -0.5, 0.3, 2.0, 1.0])
    pts = [[x[k], y[k]] for k in range(len(x))]
    pts[0].append(0.4)
    pts[-1].append(-1.3)
    sp = Spline(pts)
    ref = CubicSpline(x, y, bc_type=((1, 0.4), (1, -1.3)))
    xx = np.linspace(0, 3.2, 57)
    np.testing.assert_allclose(sp.y(xx), ref(xx), atol=1e-12)
    np.testing.assert_allclose(sp.ddy(xx), ref(xx, 2), atol=1e-10)
    assert np.all(sp.coefficients[:, :2] == 0.0)


@pytest.mark.parametrize("with_dy", [False, True])
def test_cubic_polynomial_reproduced(with_dy):
    def f(x):
        return 0.5 - 1.2 * x + 0.7 * x ** 2 - 0.3 * x ** 3

    def df(x):
        return -1.2 + 1.4 * x - 0.9 * x ** 2

    def ddf(x):
        return 1.4 - 1.8 * x

    xs = [-1.0, 0.2, 0.5, 1.7, 3.0]
    pts = [[x, f(x)] for x in xs]
    if with_dy:
        pts[0] += [df(xs[0])]
        pts[-1] += [df(xs[-1])]
    else:
        pts[0] += [None, ddf(xs[0])]
        pts[-1] += [None, ddf(xs[-1])]
    sp = Spline(pts)
    xx = np.linspace(-1.0, 3.0, 61)
    np.testing.assert_allclose(sp.y(xx), f(xx), atol=1e-11)
    np.testing.assert_allclose(sp.dy(xx), df(xx), atol=1e-11)
    np.testing.assert_allclose(sp.ddy(xx), ddf(xx), atol=1e-11)
    assert np.all(sp.coefficients[:, :2] == 0.0)
    # outside the points: the quadratic Taylor polynomial of the end
    for x0, dx in ((-1.0, -0.8), (3.0, 1.3)):
        taylor = f(x0) + df(x0) * dx + 0.5 * ddf(x0) * dx ** 2
        assert sp.y(x0 + dx) == pytest.approx(taylor, abs=1e-11)
        assert sp.ddy(x0 + dx) == pytest.approx(ddf(x0), abs=1e-11)


def test_quintic_reproduced_when_fully_specified():
    c = np.array([0.3, -1.0, 0.5, 2.0, -0.7, 0.25])
    p = np.polynomial.polynomial.Polynomial(c)
    xs = [0.0, 0.4, 1.1, 2.0]
    pts = [[x, p(x), p.deriv(1)(x), p.deriv(2)(x)] for x in xs]
    sp = Spline(pts)
    xx = np.linspace(0.0, 2.0, 31)
    np.testing.assert_allclose(sp.y(xx), p(xx), atol=1e-10)
    np.testing.assert_allclose(sp.coefficients[1][::-1], c, atol=1e-10)


def test_single_interior_slope_gives_cubic_with_natural_start():
    # One derivative only: trep adds y''(x_0) = 0 and leaves the last end
    # free; the 12 conditions are met by a C2 cubic spline.
    sp = Spline([[0, 0], [1, 1, 0.5], [2, 0], [3, 2]])
    assert np.all(sp.coefficients[:, :2] == 0.0)
    assert sp.dy(1.0) == pytest.approx(0.5, abs=1e-12)
    assert sp.ddy(0.0) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("pts", CASES[:6] + CASES[-4:])
def test_vectorised_matches_scalar(pts):
    sp = Spline(pts)
    xs = sp.x_points
    xx = np.concatenate([np.linspace(xs[0] - 1, xs[-1] + 1, 37), xs])
    for name in ("y", "dy", "ddy"):
        f = getattr(sp, name)
        vec = f(xx)
        assert isinstance(vec, np.ndarray) and vec.shape == xx.shape
        scal = np.array([f(float(v)) for v in xx])
        np.testing.assert_allclose(vec, scal, rtol=0, atol=1e-14 * _scale(sp))
        grid = f(xx[:36].reshape(6, 6))
        assert grid.shape == (6, 6)
        np.testing.assert_allclose(grid.ravel(), scal[:36], rtol=0, atol=1e-14 * _scale(sp))


def test_scalar_returns_float():
    sp = Spline([[0, 0], [1, 1], [2, 0]])
    for f in (sp.y, sp.dy, sp.ddy):
        assert type(f(0.3)) is float
        assert type(f(np.float64(0.3))) is float
        assert type(f(1)) is float
    assert sp.y(1.0) == pytest.approx(1.0)
    assert sp.dy(1.0) == pytest.approx(0.0, abs=1e-12)
    assert sp.ddy(1.0) == pytest.approx(-3.0)


def test_properties_shapes_and_read_only():
    pts = [[0, 0], [1, 1, 0.5], [2, 0], [3, 2, None, 1.0]]
    sp = Spline(pts)
    assert sp.x_points.shape == (6,)
    assert sp.y_points.shape == (6,)
    assert sp.coefficients.shape == (5, 6)
    # one extra knot each side, at the distance of the last interval
    np.testing.assert_array_equal(sp.x_points, [-1, 0, 1, 2, 3, 4])
    np.testing.assert_array_equal(sp.y_points[1:-1], [0, 1, 0, 2])
    assert sp.y_points[0] == pytest.approx(sp.y(-1.0), abs=1e-14)
    assert sp.y_points[-1] == pytest.approx(sp.y(4.0), abs=1e-14)
    # coefficient layout: powers of (x - x_points[r]), highest order first
    c = sp.coefficients
    for r, x in enumerate(sp.x_points[:-1]):
        np.testing.assert_allclose(c[r, 5], sp.y(float(x)), atol=1e-13)
        np.testing.assert_allclose(c[r, 4], sp.dy(float(x)), atol=1e-13)
        np.testing.assert_allclose(2 * c[r, 3], sp.ddy(float(x)), atol=1e-13)
    # extrapolation rows are quadratics
    assert np.all(c[[0, -1], :3] == 0.0)
    # mutating returned arrays does not change the spline
    before = sp.y(0.5)
    sp.x_points[:] = 99
    sp.y_points[:] = 99
    sp.coefficients[:] = 99
    assert sp.y(0.5) == before
    for attr in ("x_points", "y_points", "coefficients"):
        with pytest.raises(AttributeError):
            setattr(sp, attr, np.zeros(3))


def test_copy_is_independent():
    sp = Spline([[0, 0], [1, 1, 0.5], [2, 0], [3, 2]])
    cp = sp.copy()
    assert isinstance(cp, Spline) and cp is not sp
    xx = np.linspace(-1, 4, 23)
    np.testing.assert_array_equal(cp.y(xx), sp.y(xx))
    np.testing.assert_array_equal(cp.coefficients, sp.coefficients)
    # poke the private storage of the copy: the original must not change
    cp._coeffs[:] = 0.0
    cp._x[:] += 10.0
    assert np.all(cp.y(xx) == 0.0)
    assert sp.y(1.0) == pytest.approx(1.0)
    np.testing.assert_array_equal(sp.x_points, [-1, 0, 1, 2, 3, 4])
    dc = copy.deepcopy(sp)
    np.testing.assert_array_equal(dc.y(xx), sp.y(xx))


def test_input_not_mutated_and_sequences_accepted():
    pts = [[0, 0], [1, 1, None, 2.0], (2, 0)]
    snapshot = copy.deepcopy(pts)
    sp1 = Spline(pts)
    assert pts == snapshot
    sp2 = Spline(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]))
    sp3 = Spline([[0, 0], [1, 1], [2, 0]])
    np.testing.assert_array_equal(sp2.coefficients, sp3.coefficients)
    assert sp1.ddy(1.0) == pytest.approx(2.0, abs=1e-12)


@pytest.mark.parametrize("pts, match", [
    ([[0, 0], [1, 1], [1, 2]], r"points\[2\]"),
    ([[0, 0], [2, 1], [1, 2]], r"points\[2\]"),
    ([[1, 0], [0, 1]], r"points\[1\]"),
    ([[0, 0]], "at least 2"),
    ([], "at least 2"),
    ([[0, 0], [1, float("nan")]], r"points\[1\] y"),
    ([[0, 0], [float("nan"), 1]], r"points\[1\] x"),
    ([[0, 0], [1, 1, float("inf")]], r"points\[1\] dy"),
    ([[0, 0, None, float("nan")], [1, 1]], r"points\[0\] ddy"),
    ([[0, 0], [1]], r"points\[1\]"),
    ([[0, 0], [1, 1, 0, 0, 0]], r"points\[1\]"),
    ([[0, None], [1, 1]], r"points\[0\] y"),
    ([[0, 0], [1, "a"]], r"points\[1\] y"),
    ([[0, 0], 5], r"points\[1\]"),
    (None, "sequence"),
])
def test_bad_input_raises_value_error(pts, match):
    with pytest.raises(ValueError, match=match):
        Spline(pts)


# ------------------------------------------------------------ trep's scheme
RADIAL_FORCE_CURVE = [          # trep examples/radial.py, combustion force
    (0.0 * math.pi, 0.0, 0, 0),
    (0.25 * math.pi, 1.0),
    (0.75 * math.pi, 1.0),
    (1.0 * math.pi, 0.0, 0, 0),
    (2.0 * math.pi, 0.0, 0, 0),
]


def test_radial_force_curve_closed_form():
    # The missing derivatives at knots 1 and 2 remove t^5 of pieces 0, 1, 2
    # and t^4 of piece 1: quartic - cubic - quartic - quintic.  By symmetry
    # the middle piece is 1 + K (1 - s^2/h^2), s = x - pi/2, h = pi/4, and the
    # first piece c3 t^3 + c4 t^4; matching value/slope/curvature at pi/4
    # gives c3 h^3 = 8K/3, c4 h^4 = -3K/2, K = 6/7.  trep prints 1.857 at pi/2.
    sp = Spline(RADIAL_FORCE_CURVE)
    h = math.pi / 4
    assert sp.coefficients.shape == (6, 6)
    assert sp.x_points.shape == (7,)
    assert sp.y(math.pi / 2) == pytest.approx(13.0 / 7.0, rel=1e-13)
    c = sp.coefficients
    np.testing.assert_allclose(c[1], [0, -9.0 / 7.0 / h ** 4, 16.0 / 7.0 / h ** 3, 0, 0, 0],
                               atol=1e-12)
    # middle piece, around x = pi/4: 1 + K (1 - (t - h)^2 / h^2)
    K = 6.0 / 7.0
    np.testing.assert_allclose(c[2], [0, 0, 0, -K / h ** 2, 2 * K / h, 1.0], atol=1e-12)
    # last real piece is identically zero, and so is the extrapolation
    np.testing.assert_allclose(c[4:], 0.0, atol=1e-12)
    for x in (-1.0, 0.0, 4.0, 2 * math.pi, 7.0):
        assert sp.y(x) == pytest.approx(0.0, abs=1e-12)
    xx = np.linspace(0, math.pi / 4, 9)
    np.testing.assert_allclose(sp.y(xx), 16 / 7 * (xx / h) ** 3 - 9 / 7 * (xx / h) ** 4,
                               atol=1e-12)


def test_one_slope_only_adds_zero_curvature_at_start():
    # trep: "Not enough constraints - Assuming initial second derivative is
    # zero" -> y = y0 + d t + c3 t^3 with c3 = (y1 - y0 - d h) / h^3.
    sp = Spline([[0.0, 0.0, 1.0], [2.0, 4.0]])
    c3 = (4.0 - 2.0) / 8.0
    for x in (0.0, 0.5, 1.3, 2.0):
        assert sp.y(x) == pytest.approx(x + c3 * x ** 3, abs=1e-13)
        assert sp.ddy(x) == pytest.approx(6 * c3 * x, abs=1e-13)
    # one curvature only at the start -> curvature 0 at the end
    sp = Spline([[0.0, 0.0, None, 3.0], [1.0, 1.0]])
    # cubic with y''(0) = 3, y''(1) = 0: y = 1.5 t^2 - 0.5 t^3 + e t, e = 0
    for x in (0.0, 0.25, 0.9):
        assert sp.y(x) == pytest.approx(1.5 * x ** 2 - 0.5 * x ** 3, abs=1e-13)


def test_two_points_fully_specified_is_quintic_hermite():
    # Closed form of the quintic through (0; 0, 0, 0) and (1; 1, 0, 0):
    # 10 t^3 - 15 t^4 + 6 t^5 (smoothstep).
    sp = Spline([[0, 0, 0, 0], [1, 1, 0, 0]])
    np.testing.assert_allclose(sp.coefficients[1], [6, -15, 10, 0, 0, 0], atol=1e-12)
    assert sp.y(0.3) == pytest.approx(10 * 0.027 - 15 * 0.0081 + 6 * 0.00243, abs=1e-14)


def test_unsatisfiable_conditions_raise_value_error():
    # Piece 0 fully pinned at both ends while the free end borrows its t^5
    # term: trep's linear system is singular (numpy LinAlgError).
    with pytest.raises(ValueError, match="singular"):
        Spline([[0, 0, 0.3, -0.2], [1, 1, 0.3, -0.2], [2, 0]])
