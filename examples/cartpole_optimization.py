"""Pendulum-on-cart swing-up by discrete trajectory optimisation (trep.discopt.DOptimizer).

System: a cart (1 kg) sliding along y (dynamic config 'y' [m], force input 'y-force' [N],
damping 0.05 N s/m) carries a pendulum (rx 'theta' [rad], point mass 0.3 kg at 0.5 m, damping
0.01 N m s/rad); gravity (0, 0, -9.8) m/s^2.  theta = 0 hangs down, theta = pi is upright.
State X = [y, theta, p_y, p_theta] (m, rad, kg m/s, kg m^2/s), input U = [F] (N).

Problem (T = 4 s, dt = 0.04 s, 101 states): from rest hanging down, follow the swing-up of a
feedback controller as closely as possible with as little force as possible and end upright
at rest.  The desired states Xd come from a closed-loop simulation (same model, same
MidpointVI step) of ros_vi.control's Astrom-Furuta energy swing-up with an LQR catch (the
gains of ``ros_vi.control.presets.DEMOS['cartpole']``); the desired input is zero, so the
optimum is a cheaper open-loop swing-up than the controller's own (cost 9.79 against 14.63
for the controller's closed-loop trajectory):

    h = sum_k 1/2 [w_k (x_k - xd_k)^T Q (x_k - xd_k) + F_k^T R F_k] + 1/2 w_f e^T Qf e,
    Q = diag(1, 10, 0.1, 0.1), R = 0.01, Qf = diag(10, 100, 10, 10),  e = x_kf - xd_kf.

Initial guess: zero input (the pendulum just hangs).  A projection-operator optimiser cannot
jump from there to the swing-up in one go (the projection feedback is linearised about the
current trajectory and the line search stalls in a plateau where the pole is lifted but falls
back: 100 steps on the full problem from zero input leave the cost near 1200), so the tracking weight is switched on over a growing time window (continuation):
w_k = 1 for t_k <= t_w, 0 after, w_f = 0, with t_w = 1.2, 2.0, 3.0 s; each round starts from
the previous round's optimum.  The final round is the problem above (w_k = 1 everywhere,
w_f = 1) and ends with Newton steps (exact second derivatives of the variational
integrator) until |dcost| < descent_tolerance = 1e-6.

Run: python examples/cartpole_optimization.py [--plot] [--quiet]
"""
import sys
from math import pi

import numpy as np

import ros_vi as trep
import ros_vi.discopt as discopt
from ros_vi import rx, ty, tz
from ros_vi.simulation import closed_loop
from ros_vi.control.handover import SwingUpAndBalance
from ros_vi.control.lqr import LQR
from ros_vi.control.swingup import CartPoleSwingUp

T_FINAL = 4.0          # horizon [s]
DT = 0.04              # time step [s]
WINDOWS = (1.2, 2.0, 3.0)   # continuation rounds: tracking weight on for t <= t_w [s]
Q_WEIGHTS = (1.0, 10.0, 0.1, 0.1)
R_WEIGHT = 0.01
QF_WEIGHTS = (10.0, 100.0, 10.0, 10.0)
F_MAX = 30.0           # saturation of the reference controller [N]


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


def reference_swingup(dt=DT, duration=T_FINAL):
    """Closed-loop swing-up of build_system() from rest hanging down.

    Controller: CartPoleSwingUp (energy pumping through the cart, k_energy 30, a_max 10 m/s^2,
    k_x 1, k_v 2, kick 5 m/s^2) handing over to an LQR (Q = diag(10, 100, 1, 1), R = 0.1)
    about upright, |F| <= F_MAX.  Returns the ClosedLoopResult (q (N, 2), p (N, 2), u
    (N-1, 1), ...), N = duration/dt + 1."""
    goal = {'y': 0.0, 'theta': pi}
    ctl = build_system()
    swing = CartPoleSwingUp(ctl, dt, cart='y', pole='theta', goal=goal, k_energy=30.0,
                            a_max=10.0, k_x=1.0, k_v=2.0, kick_accel=5.0, u_max=F_MAX)
    lqr = LQR(ctl, dt, goal, Q=[10.0, 100.0, 1.0, 1.0], R=0.1, u_max=F_MAX)
    return closed_loop.simulate(SwingUpAndBalance(swing, lqr), build_system(), duration,
                                [0.0, 0.0], dt=dt)


class WindowedCost(discopt.DCost):
    """DCost whose state term is weighted per step: ``l = 1/2 [w_k dx^T Q dx + du^T R du]``,
    ``m = 1/2 w_f dx^T Qf dx`` (w_k, w_f >= 0).  ``set_window(n, terminal)`` sets w_k = 1
    for k < n, 0 after, and w_f = 1 if ``terminal`` else 0."""

    def __init__(self, xd, ud, Q, R, Qf=None):
        super().__init__(xd, ud, Q, R, Qf)
        self.set_window(len(self.xd), True)

    def set_window(self, n, terminal):
        n = int(n)
        if not 0 <= n <= len(self.xd):
            raise ValueError('WindowedCost.set_window: n = %d outside [0, %d]'
                             % (n, len(self.xd)))
        self.w = np.zeros(len(self.xd))
        self.w[:n] = 1.0
        self.wf = 1.0 if terminal else 0.0

    def l(self, xk, uk, k):
        dx = np.asarray(xk, dtype=float) - self.xd[k]
        du = np.asarray(uk, dtype=float) - self.ud[k]
        return 0.5 * float(self.w[k] * (dx @ self.Q @ dx) + du @ self.R @ du)

    def l_dx(self, xk, uk, k):
        return self.w[k] * super().l_dx(xk, uk, k)

    def l_dxdx(self, xk, uk, k):
        return self.w[k] * super().l_dxdx(xk, uk, k)

    def m(self, xkf):
        return self.wf * super().m(xkf)

    def m_dx(self, xkf):
        return self.wf * super().m_dx(xkf)

    def m_dxdx(self, xkf):
        return self.wf * super().m_dxdx(xkf)


class RecordingMonitor(discopt.DOptimizerDefaultMonitor):
    """Default monitor (prints unless ``quiet``) that also keeps, for every optimize() call,
    the list of steps ``(iteration, method, cost, dcost)`` in ``rounds`` (the method is the
    one that gave the direction, after any fallback)."""

    def __init__(self, quiet=False):
        super().__init__()
        self.quiet = quiet
        self.rounds = []

    def msg(self, text):
        if not self.quiet:
            super().msg(text)

    def optimize_begin(self, X, U):
        super().optimize_begin(X, U)
        self.rounds.append([])

    def optimize_end(self, converged, X, U, cost):
        if not self.quiet:
            print('')
        self.start_time = None

    def step_info(self, method, cost, dcost, X, U, dX, dU, Kproj):
        super().step_info(method, cost, dcost, X, U, dX, dU, Kproj)
        steps = self.rounds[-1]
        if steps and steps[-1][0] == self.iteration:    # a fallback replaces the entry
            steps.pop()
        steps.append((self.iteration, method, cost, dcost))


def setup():
    """System, integrator, DSystem, reference, cost and initial (zero-input) trajectory."""
    system = build_system()
    mvi = trep.MidpointVI(system)
    t = DT * np.arange(int(round(T_FINAL / DT)) + 1)
    dsys = discopt.DSystem(mvi, t)
    ref = reference_swingup(DT, T_FINAL)
    Xref, Uref = dsys.build_trajectory(ref.q, ref.p, None, ref.u)   # feasible, closed loop
    Xd, Ud = dsys.build_trajectory(ref.q, ref.p)                    # desired: zero input
    cost = WindowedCost(Xd, Ud, np.diag(Q_WEIGHTS), R_WEIGHT * np.eye(dsys.nU),
                        Qf=np.diag(QF_WEIGHTS))
    # zero-input initial guess: simulate from rest, hanging down
    X0 = np.zeros((len(t), dsys.nX))
    U0 = np.zeros((len(t) - 1, dsys.nU))
    X0, U0 = dsys.project(X0, U0, np.zeros((len(t) - 1, dsys.nU, dsys.nX)))
    return dict(system=system, mvi=mvi, dsys=dsys, cost=cost, X0=X0, U0=U0, Xd=Xd, Ud=Ud,
                Xref=Xref, Uref=Uref)


def optimize(env, monitor=None, max_steps=50, window_steps=20):
    """Continuation rounds over WINDOWS (at most ``window_steps`` steps each, 5 quasi-Newton
    first) then the full problem (at most ``max_steps`` steps, 1 quasi-Newton step then
    Newton).  Returns (optimizer, converged, X, U) of the final round."""
    dsys, cost = env['dsys'], env['cost']
    optimizer = discopt.DOptimizer(dsys, cost, monitor=monitor)
    X, U = env['X0'], env['U0']
    for t_w in WINDOWS:
        cost.set_window(int(round(t_w / DT)) + 1, terminal=False)
        optimizer.first_method_iterations = 5
        converged, X, U = optimizer.optimize(X, U, max_steps=window_steps)
    cost.set_window(len(dsys.time), terminal=True)
    optimizer.first_method_iterations = 1
    converged, X, U = optimizer.optimize(X, U, max_steps=max_steps)
    return optimizer, converged, X, U


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    env = setup()
    monitor = RecordingMonitor(quiet='--quiet' in argv)
    optimizer, converged, X, U = optimize(env, monitor)
    dsys, cost = env['dsys'], env['cost']
    Xp, Up = dsys.project(X, U, dsys.calc_feedback_controller(X, U))
    theta = Xp[:, dsys.system.get_config('theta').index]
    final = monitor.rounds[-1]
    print('rounds: %s steps (windows %s s, then the full problem)'
          % ([len(r) for r in monitor.rounds], ', '.join('%.1f' % w for w in WINDOWS)))
    print('final round methods: %s' % ' '.join(m for _, m, _, _ in final))
    print('converged: %s; cost %.4f (zero input) -> %.6f (controller trajectory %.4f); '
          'last |dcost| = %.2e (%s)'
          % (converged, optimizer.calc_cost(env['X0'], env['U0']),
             optimizer.calc_cost(X, U), optimizer.calc_cost(env['Xref'], env['Uref']),
             abs(final[-1][3]), final[-1][1]))
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
        pyplot.plot(t[:-1], Up, t[:-1], env['Uref'], '--')
        pyplot.legend(['F optimal', 'F controller'])
        pyplot.ylabel('F [N]')
        pyplot.show()
    return dict(converged=converged, X=X, U=U, Xp=Xp, Up=Up, monitor=monitor,
                optimizer=optimizer, env=env)


if __name__ == '__main__':
    main()
