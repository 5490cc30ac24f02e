"""Pendulum-on-cart swing-up by discrete trajectory optimisation (trep.discopt.DOptimizer).

System: a cart (1 kg) sliding along y (dynamic config 'y', force input 'y-force' [N],
damping 0.05) carries a pendulum (rx 'theta', point mass 0.5 kg at 0.6 m, damping 0.01);
gravity (0, 0, -9.8) m/s^2.  theta = 0 hangs down, theta = pi is upright.

Problem: from rest hanging down, reach the upright state at y = 0 at T = 3 s (dt = 0.03 s,
101 states) with little effort: desired state upright everywhere, running weights
Q = diag(0.1, 0.1, 0.01, 0.01) (a weak pull), R = 0.01, terminal Qf = diag(10, 1000, 10, 10).
State X = [y, theta, p_y, p_theta], input U = [F].

STATUS: with these parameters the optimiser reaches the upright end state (|theta - pi| <
0.05 after ~40 steps) but, in 200 steps, does not reach descent_tolerance = 1e-6: Newton
directions are intermittently non-descent (indefinite model) and progress crawls.

The initial guess is the zero-input trajectory (the pendulum just hangs); the optimiser
takes quasi-Newton steps first, then Newton steps (exact second derivatives of the
variational integrator) until |dcost| < descent_tolerance.

Run: python examples/cartpole_optimization.py [--plot] [--verbose]
"""
import sys
from math import pi

import numpy as np

import ros_vi as trep
import ros_vi.discopt as discopt
from ros_vi import rx, ty, tz

T_FINAL = 3.0
DT = 0.03


def build_system(cart_mass=1.0, pend_mass=0.3, length=0.5):
    """The cart-pole System (configs 'y', 'theta'; input 'y-force')."""
    system = trep.System()
    system.import_frames([
        ty('y', name='cart', mass=cart_mass), [
            rx('theta', name='pivot'), [
                tz(-length, name='bob', mass=pend_mass)]]])
    trep.potentials.Gravity(system, (0, 0, -9.8))
    trep.forces.Damping(system, 0.05, {'theta': 0.01})
    trep.forces.ConfigForce(system, 'y', 'y-force')
    return system


def desired_trajectory(dsys):
    """(Xd, Ud): upright (theta = pi) at y = 0, at rest, zero input."""
    Q = np.zeros((len(dsys.time), dsys.system.nQ))
    Q[:, dsys.system.get_config('theta').index] = pi
    return dsys.build_trajectory(Q)


def setup():
    """System, integrator, DSystem, cost and initial (zero-input) trajectory."""
    system = build_system()
    mvi = trep.MidpointVI(system)
    t = np.linspace(0.0, T_FINAL, int(round(T_FINAL / DT)) + 1)
    dsys = discopt.DSystem(mvi, t)
    Xd, Ud = desired_trajectory(dsys)
    Q = np.diag([0.1, 0.1, 0.01, 0.01])
    R = 0.01 * np.eye(dsys.nU)
    cost = discopt.DCost(Xd, Ud, Q, R, Qf=np.diag([10.0, 1000.0, 10.0, 10.0]))
    # zero-input initial guess: simulate from rest, hanging down
    X0 = np.zeros((len(t), dsys.nX))
    U0 = np.zeros((len(t) - 1, dsys.nU))
    X0, U0 = dsys.project(X0, U0, np.zeros((len(t) - 1, dsys.nU, dsys.nX)))
    return dict(system=system, mvi=mvi, dsys=dsys, cost=cost, X0=X0, U0=U0, Xd=Xd, Ud=Ud)


def optimize(env, monitor=None, max_steps=200):
    """Run DOptimizer.optimize; returns (optimizer, converged, X, U)."""
    optimizer = discopt.DOptimizer(env['dsys'], env['cost'], first_method_iterations=5,
                                   monitor=monitor)
    converged, X, U = optimizer.optimize(env['X0'], env['U0'], max_steps=max_steps)
    return optimizer, converged, X, U


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    env = setup()
    monitor = (discopt.DOptimizerVerboseMonitor() if '--verbose' in argv
               else discopt.DOptimizerDefaultMonitor())
    optimizer, converged, X, U = optimize(env, monitor)
    dsys = env['dsys']
    Xp, Up = dsys.project(X, U, dsys.calc_feedback_controller(X, U))
    theta = Xp[:, dsys.system.get_config('theta').index]
    costs = monitor.get_costs()
    print('converged: %s after %d steps; cost %.4f -> %.4f; last |dcost| = %.2e'
          % (converged, len(costs), costs[0], optimizer.calc_cost(X, U),
             abs(monitor.get_dcosts()[-1])))
    print('final theta = %.5f rad (upright pi = %.5f, error %.2e), final y = %.4f m, '
          'max |F| = %.2f N' % (theta[-1], pi, abs(theta[-1] - pi), Xp[-1, 0],
                                np.max(np.abs(Up))))
    if '--plot' in argv:
        import matplotlib.pyplot as pyplot
        t = dsys.time
        pyplot.subplot(211)
        pyplot.plot(t, Xp[:, :2], t, env['Xd'][:, :2], '--')
        pyplot.legend(['y', 'theta', 'y desired', 'theta desired'])
        pyplot.subplot(212)
        pyplot.plot(t[:-1], Up)
        pyplot.ylabel('F [N]')
        pyplot.show()
    return dict(converged=converged, X=X, U=U, Xp=Xp, Up=Up, monitor=monitor,
                optimizer=optimizer, env=env)


if __name__ == '__main__':
    main()
