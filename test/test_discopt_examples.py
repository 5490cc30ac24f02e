"""The discopt examples (trep tutorials 10-12 and the cart-pole optimisation) reproduce
trep's published numbers."""
import contextlib
import importlib
import io
import os
import sys
from math import pi

import numpy as np

_EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples')
if _EXAMPLES not in sys.path:
    sys.path.insert(0, _EXAMPLES)


def run_main(module_name):
    module = importlib.import_module(module_name)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = module.main([])
    return result, out.getvalue()


def test_linear_feedback_controller_tutorial():
    result, text = run_main('linear_feedback_controller')
    K = result['K']
    assert K.shape == (1, 2)
    assert np.allclose(K[0], [15.321700787, 4.139947239], rtol=0, atol=1e-8)
    assert 'KStabilize = [15.321700787, 4.139947239]' in text
    # after dsys.set([3 pi/4, 0], [0], 0): xk = X(0), mvi.q1 = q0, system at the midpoint
    env = result['env']
    dsys, mvi = env['dsys'], env['mvi']
    dsys.set(np.array([3 * pi / 4, 0.]), np.array([0.]), 0)
    assert np.allclose(dsys.xk, [2.35619449, 0.0], atol=1e-8)
    assert np.isclose(mvi.q1[0], 2.35619449, atol=1e-8)
    assert np.isclose(dsys.system.q[0], 2.34019535, atol=1e-8)
    assert np.isclose(dsys.system.q[0], 0.5 * (mvi.q1[0] + mvi.q2[0]), atol=1e-14)
    # the closed loop stabilises the upright configuration
    assert abs(result['Q'][-1][0] - pi) < 1e-3


def test_energy_shaping_tutorial():
    result, text = run_main('energy_shaping_swingup')
    U = np.array([float(u[0]) for u in result['U']])
    theta = np.array([q[0] for q in result['Q']])
    assert np.isclose(result['eBar'], 9.8)            # m g l at the top
    assert np.max(np.abs(U)) <= 5.0 + 1e-12 and np.isclose(np.max(np.abs(U)), 5.0)
    assert U[0] == 5.0                                # the kick from rest
    # it swings up close to (but, because of damping, not exactly to) upright
    assert 2.5 < np.max(np.abs(theta)) < pi
    assert result['E'][-1] > 0.8 * result['eBar']


def test_optimal_switching_time_tutorial():
    result, text = run_main('optimal_switching_time')
    expected = """Optimization iteration: 1
Current switch time: 5.00
New switch time: 4.79
Current cost: 9680.81
Parital of cost to switch time: 1.70

Optimization iteration: 2
Current switch time: 4.79
New switch time: 4.63
Current cost: 9214.82
Parital of cost to switch time: 0.62

Optimization iteration: 3
Current switch time: 4.63
New switch time: 4.63
Current cost: 9204.84
Parital of cost to switch time: 0.00

Optimal switch time: 4.63
"""
    assert text.startswith(expected), text
    taus = ['%.2f' % h[0] for h in result['history']]
    assert taus == ['5.00', '4.79', '4.63']


def test_cartpole_optimization_converges_to_upright():
    """Swing-up from the zero-input trajectory: continuation rounds, then Newton steps reach
    descent_tolerance on the full problem and the projected trajectory ends upright."""
    result, text = run_main('cartpole_optimization')
    env, optimizer, monitor = result['env'], result['optimizer'], result['monitor']
    dsys = env['dsys']
    # the initial guess is zero input: the pendulum hangs at rest
    assert np.all(env['U0'] == 0.0)
    assert np.allclose(env['X0'], 0.0, atol=1e-12)
    assert len(monitor.rounds) == 4                   # three windows + the full problem
    assert result['converged']
    final = monitor.rounds[-1]
    methods = [m for _, m, _, _ in final]
    dcosts = [abs(d) for _, _, _, d in final]
    # Newton steps reach the tolerance: the last directions are Newton's, the terminating
    # |dcost| is below descent_tolerance, and the last steps converge fast (quadratically)
    assert methods[-3:] == ['newton'] * 3, methods
    assert dcosts[-1] < optimizer.descent_tolerance
    assert dcosts[-2] >= optimizer.descent_tolerance
    assert dcosts[-1] < 1e-2 * dcosts[-2] and dcosts[-2] < 1e-2 * dcosts[-3], dcosts
    assert monitor.get_dcosts()[-1] == final[-1][3]
    X, U = result['X'], result['U']
    cost = optimizer.calc_cost(X, U)
    assert cost < 0.01 * optimizer.calc_cost(env['X0'], env['U0'])
    assert cost < optimizer.calc_cost(env['Xref'], env['Uref'])   # beats the controller
    # (X, U) is a trajectory of the system (projection leaves it unchanged) ...
    K = dsys.calc_feedback_controller(X, U)
    assert np.allclose(dsys.project(X, U, K)[0], X, rtol=0, atol=1e-9)
    # ... and a local minimiser: along random input perturbations (projected with K) the
    # cost's central-difference slope vanishes and its curvature is positive
    rng = np.random.RandomState(0)
    eps = 1e-3
    for _ in range(2):
        d = rng.normal(size=U.shape)
        cp = optimizer.calc_cost(*dsys.project(X, U + eps * d, K))
        cm = optimizer.calc_cost(*dsys.project(X, U - eps * d, K))
        assert abs(cp - cm) / (2 * eps) < 1e-4
        assert (cp + cm - 2 * cost) / eps ** 2 > 1.0
    # the projected trajectory ends within 0.05 rad of upright
    theta = result['Xp'][-1, dsys.system.get_config('theta').index]
    assert abs(theta - pi) < 0.05
    assert 'converged: True' in text
