"""DOptimizer: projection-operator trajectory optimisation of a DSystem for a DCost.

Each step linearizes the system about the current trajectory, builds an LQR projection
feedback ``Kproj`` (weights ``Qproj``, ``Rproj``), solves an LQ problem for the descent
direction with a steepest (Q=I, R=I, S=0), quasi-Newton (cost Hessian only) or Newton
(cost Hessian + adjoint-weighted second derivative of the dynamics) model, and performs an
Armijo line search on the projected trajectories.
"""
import datetime
import time
from collections import namedtuple

import numpy as np

from ..integrators import ConvergenceError
from .dlqr import solve_tv_lq

__all__ = ['DOptimizer', 'DOptimizerMonitor', 'DOptimizerDefaultMonitor',
           'DOptimizerVerboseMonitor', 'DescentDirection', 'ArmijoResult', 'StepResult',
           'OptimizeResult', 'ArmijoSimulation', 'DCostCheck', 'DDCostCheck']

DescentDirection = namedtuple('descent_direction', 'Kproj dX dU Q R S')
ArmijoResult = namedtuple('armijo_search', 'nX nU nCost')
ArmijoSimulation = namedtuple('armijo_simulate', 'result nX nU')
StepResult = namedtuple('step', 'done nX nU dcost0 cost1')
OptimizeResult = namedtuple('optimize', 'converged X U')
DCostCheck = namedtuple('check_dcost', 'result error cost1 cost0 approx_dcost exact_dcost')
DDCostCheck = namedtuple('check_ddcost',
                         'result error dcost1 dcost0 approx_ddcost exact_ddcost')

METHODS = ('steepest', 'quasi', 'newton')


class DOptimizerMonitor:
    """Base monitor: every hook does nothing (use it for silent optimisations)."""

    def optimize_begin(self, X, U):
        """Called when DOptimizer.optimize() starts with the initial trajectory."""

    def optimize_end(self, converged, X, U, cost):
        """Called before DOptimizer.optimize() returns."""

    def step_begin(self, iteration):
        """Called at the start of each DOptimizer.step() (again for fallback methods)."""

    def step_info(self, method, cost, dcost, X, U, dX, dU, Kproj):
        """Called after a descent direction has been calculated."""

    def step_method_failure(self, method, cost, dcost, fallback_method):
        """Called when a method gives a non-descent direction (dcost > 0)."""

    def step_termination(self, cost, dcost):
        """Called when |dcost| < descent_tolerance (local minimiser reached)."""

    def step_completed(self, method, cost, nX, nU):
        """Called at the end of a step with the improved trajectory."""

    def armijo_simulation_failure(self, armijo_iteration, nX, nU, bX, bU):
        """Called when projecting an Armijo trial trajectory fails (the search goes on)."""

    def armijo_search_failure(self, X, U, dX, dU, cost0, dcost0, Kproj):
        """Called when the Armijo search exhausts its iterations."""

    def armijo_evaluation(self, armijo_iteration, nX, nU, bX, bU, cost, max_cost):
        """Called after each successful Armijo evaluation."""


class DOptimizerDefaultMonitor(DOptimizerMonitor):
    """Prints progress to stdout and records ``cost_history`` and ``dcost_history``
    (dicts iteration -> value, reset at each optimize())."""

    def __init__(self):
        self.iteration = 0
        self.start_cost = 0.0
        self.start_dcost = 0.0
        self.method = ''
        self.armijo = 0
        self.start_time = None
        self.cost_history = {}
        self.dcost_history = {}

    def msg(self, text):
        if self.start_time is not None:
            elapsed = time.gmtime((datetime.datetime.now() - self.start_time).seconds)
            stamp = time.strftime('+[%H:%M:%S]', elapsed)
        else:
            stamp = datetime.datetime.now().strftime('[%H:%M:%S]')
        print('%s %3d: %s' % (stamp, self.iteration, text))

    def optimize_begin(self, X, U):
        self.cost_history = {}
        self.dcost_history = {}
        self.start_time = datetime.datetime.now()

    def optimize_end(self, converged, X, U, cost):
        print('')
        self.start_time = None

    def step_begin(self, iteration):
        self.iteration = iteration

    def step_info(self, method, cost, dcost, X, U, dX, dU, Kproj):
        self.start_cost = cost
        self.start_dcost = dcost
        self.method = method
        self.cost_history[self.iteration] = cost
        self.dcost_history[self.iteration] = dcost

    def step_method_failure(self, method, cost, dcost, fallback_method):
        self.msg('Descent method %r failed (dcost=%s), falling back to %s'
                 % (method, dcost, fallback_method))

    def step_termination(self, cost, dcost):
        self.msg('Optimization Terminated.  cost=%s   dcost=%s' % (cost, dcost))

    def step_completed(self, method, cost, nX, nU):
        self.msg('cost=(%s => %s)  dcost=%s method=%s  armijo=%d'
                 % (self.start_cost, cost, self.start_dcost, method, self.armijo))

    def armijo_simulation_failure(self, armijo_iteration, nX, nU, bX, bU):
        self.msg('  Armijo simulation (%d) failed after %d steps.'
                 % (armijo_iteration, len(nX)))

    def armijo_evaluation(self, armijo_iteration, nX, nU, bX, bU, cost, max_cost):
        self.armijo = armijo_iteration

    def get_costs(self):
        """Costs in iteration order (list)."""
        return [self.cost_history[i] for i in sorted(self.cost_history)]

    def get_dcosts(self):
        """Cost derivatives in iteration order (list)."""
        return [self.dcost_history[i] for i in sorted(self.dcost_history)]


class DOptimizerVerboseMonitor(DOptimizerDefaultMonitor):
    """Default monitor that also reports every descent direction and Armijo rejection."""

    def step_info(self, method, cost, dcost, X, U, dX, dU, Kproj):
        self.msg('Current Trajectory cost: %f, dcost: %f, method=%s' % (cost, dcost, method))
        super().step_info(method, cost, dcost, X, U, dX, dU, Kproj)

    def armijo_evaluation(self, armijo_iteration, nX, nU, bX, bU, cost, max_cost):
        if cost >= max_cost:
            self.msg('  Armijo evaluation (%d) is too expensive (%f >= %f)'
                     % (armijo_iteration, cost, max_cost))
        super().armijo_evaluation(armijo_iteration, nX, nU, bX, bU, cost, max_cost)


def _constant(M):
    return lambda k: M


class DOptimizer:
    """Discrete trajectory optimiser.

    Parameters
    ----------
    dsys : DSystem (or any object with its interface: nX, nU, set, step, f, fdx, fdu,
        fdxdx, fdxdu, fdudu, project, dproject, linearize_trajectory,
        calc_feedback_controller)
    cost : DCost (l, m and their first/second derivatives)
    first_method_iterations : int, number of ``first_method`` steps before switching to
        ``second_method`` (see :meth:`select_method`)
    monitor : DOptimizerMonitor, default a new DOptimizerDefaultMonitor (prints)

    Attributes: ``optimize_ic`` (False), ``Qproj``/``Rproj`` (functions of k, identity),
    ``armijo_beta`` (0.7), ``armijo_alpha`` (1e-5), ``armijo_max_iterations`` (30),
    ``descent_tolerance`` (1e-6), ``first_method`` ('quasi'), ``second_method`` ('newton').
    """

    def __init__(self, dsys, cost, first_method_iterations=10, monitor=None):
        self.dsys = dsys
        self.cost = cost
        self.optimize_ic = False
        self.monitor = DOptimizerDefaultMonitor() if monitor is None else monitor
        self.Qproj = _constant(np.eye(dsys.nX))
        self.Rproj = _constant(np.eye(dsys.nU))
        self.armijo_beta = 0.7
        self.armijo_alpha = 0.00001
        self.armijo_max_iterations = 30
        self.descent_tolerance = 1e-6
        self.first_method_iterations = first_method_iterations
        self.first_method = 'quasi'
        self.second_method = 'newton'

    # ------------------------------------------------------------------ costs
    def calc_cost(self, X, U):
        """Cost h of the trajectory X (N, nX), U (N-1, nU) (float)."""
        c = self.cost
        total = 0.0
        for k in range(len(X) - 1):
            total += c.l(X[k], U[k], k)
        return total + c.m(X[-1])

    def calc_dcost(self, X, U, dX, dU):
        """Derivative of the cost at (X, U) along the tangent trajectory (dX, dU)."""
        c = self.cost
        total = 0.0
        for k in range(len(X) - 1):
            total += c.l_dx(X[k], U[k], k) @ dX[k] + c.l_du(X[k], U[k], k) @ dU[k]
        return float(total + c.m_dx(X[-1]) @ dX[-1])

    def calc_ddcost(self, X, U, dX, dU, Q, R, S):
        """Second derivative of the (projected) cost along (dX, dU) for the second-order
        model Q(k), R(k), S(k) (functions of k; Q(-1) is the terminal weight)."""
        total = 0.0
        for k in range(len(X) - 1):
            total += (dX[k] @ Q(k) @ dX[k] + 2.0 * dX[k] @ S(k) @ dU[k]
                      + dU[k] @ R(k) @ dU[k])
        return float(total + dX[-1] @ Q(-1) @ dX[-1])

    # ------------------------------------------------------------------ quadratic models
    def calc_steepest_model(self):
        """(Q, R, S) = (I, I, 0) as functions of k."""
        nX, nU = self.dsys.nX, self.dsys.nU
        return (_constant(np.eye(nX)), _constant(np.eye(nU)),
                _constant(np.zeros((nX, nU))))

    def calc_quasi_model(self, X, U):
        """(Q, R, S) from the cost's own second derivatives (no dynamics terms)."""
        c = self.cost
        n = len(X) - 1
        Q = [c.l_dxdx(X[k], U[k], k) for k in range(n)] + [c.m_dxdx(X[-1])]
        R = [c.l_dudu(X[k], U[k], k) for k in range(n)]
        S = [c.l_dxdu(X[k], U[k], k) for k in range(n)]
        return (Q.__getitem__, R.__getitem__, S.__getitem__)

    def calc_newton_model(self, X, U, A, B, K):
        """(Q, R, S): the true second derivative of the projected cost.  The adjoint
        ``z(kf) = Dm^T``, ``z(k) = l_x^T - K^T l_u^T + (A - B K)^T z(k+1)`` weights the
        dynamics' second derivatives."""
        c, dsys = self.cost, self.dsys
        n = len(X) - 1
        Q = [None] * (n + 1)
        S = [None] * n
        R = [None] * n
        z = c.m_dx(X[-1])
        Q[n] = c.m_dxdx(X[-1])
        for k in range(n - 1, -1, -1):
            dsys.set(X[k], U[k], k, xk_hint=X[k + 1])
            Q[k] = c.l_dxdx(X[k], U[k], k) + dsys.fdxdx(z)
            S[k] = c.l_dxdu(X[k], U[k], k) + dsys.fdxdu(z)
            R[k] = c.l_dudu(X[k], U[k], k) + dsys.fdudu(z)
            lu = c.l_du(X[k], U[k], k)
            z = c.l_dx(X[k], U[k], k) - lu @ K[k] + z @ (A[k] - B[k] @ K[k])
        return (Q.__getitem__, R.__getitem__, S.__getitem__)

    def calc_descent_direction(self, X, U, method='steepest'):
        """DescentDirection(Kproj, dX, dU, Q, R, S) at (X, U) for ``method`` in
        'steepest', 'quasi', 'newton'."""
        if method not in METHODS:
            raise ValueError('invalid descent direction method %r (use one of %s)'
                             % (method, ', '.join(METHODS)))
        X = np.asarray(X, dtype=float)
        U = np.asarray(U, dtype=float)
        Kproj, A, B = self.dsys.calc_feedback_controller(X, U, self.Qproj, self.Rproj, True)
        c = self.cost
        n = len(X) - 1
        q = np.zeros(X.shape)
        r = np.zeros(U.shape)
        for k in range(n):
            q[k] = c.l_dx(X[k], U[k], k)
            r[k] = c.l_du(X[k], U[k], k)
        q[-1] = c.m_dx(X[-1])
        if method == 'steepest':
            Q, R, S = self.calc_steepest_model()
        elif method == 'quasi':
            Q, R, S = self.calc_quasi_model(X, U)
        else:
            Q, R, S = self.calc_newton_model(X, U, A, B, Kproj)
        K, C, P, b = solve_tv_lq(A, B, q, r, Q, S, R)
        dX = np.zeros(X.shape)
        dU = np.zeros(U.shape)
        if self.optimize_ic:
            # best initial perturbation of the LQ problem (not valid with constraints)
            dX[0] = -np.linalg.solve(P, b)
        for k in range(n):
            dU[k] = -K[k] @ dX[k] - C[k]
            dX[k + 1] = A[k] @ dX[k] + B[k] @ dU[k]
        return DescentDirection(Kproj, dX, dU, Q, R, S)

    # ------------------------------------------------------------------ line search
    def armijo_simulate(self, bX, bU, Kproj):
        """Project (bX, bU) like DSystem.project, but return ArmijoSimulation(False,
        partial nX, partial nU) instead of raising when the simulation fails."""
        dsys = self.dsys
        nX = np.zeros(bX.shape)
        nU = np.zeros(bU.shape)
        nX[0] = bX[0]
        k = 0
        try:
            for k in range(len(bX) - 1):
                nU[k] = bU[k] - Kproj[k] @ (nX[k] - bX[k])
                if k == 0:
                    dsys.set(nX[k], nU[k], k)
                else:
                    dsys.step(nU[k])
                nX[k + 1] = dsys.f()
                if not np.all(np.isfinite(nX[k + 1])):
                    raise ConvergenceError('non-finite state at k=%d' % (k + 1))
        except (ConvergenceError, FloatingPointError):
            return ArmijoSimulation(False, nX[:k + 1], nU[:k])
        return ArmijoSimulation(True, nX, nU)

    def armijo_search(self, X, U, Kproj, dX, dU):
        """Armijo search from (X, U) along (dX, dU): trial step beta^m, accepted when
        ``cost < cost0 + alpha beta^m dcost0``.  Returns ArmijoResult(nX, nU, nCost);
        raises ConvergenceError after ``armijo_max_iterations`` trials."""
        cost0 = self.calc_cost(X, U)
        dcost0 = self.calc_dcost(X, U, dX, dU)
        for m in range(self.armijo_max_iterations):
            lam = self.armijo_beta ** m
            max_cost = cost0 + self.armijo_alpha * lam * dcost0
            bX = X + lam * dX
            bU = U + lam * dU
            ok, nX, nU = self.armijo_simulate(bX, bU, Kproj)
            if not ok:
                self.monitor.armijo_simulation_failure(m, nX, nU, bX, bU)
                continue
            cost1 = self.calc_cost(nX, nU)
            self.monitor.armijo_evaluation(m, nX, nU, bX, bU, cost1, max_cost)
            if cost1 < max_cost:
                return ArmijoResult(nX, nU, cost1)
        self.monitor.armijo_search_failure(X, U, dX, dU, cost0, dcost0, Kproj)
        raise ConvergenceError('Armijo search failed to find a sufficient decrease in %d '
                               'iterations (cost0=%g, dcost0=%g)'
                               % (self.armijo_max_iterations, cost0, dcost0))

    # ------------------------------------------------------------------ optimisation
    def step(self, iteration, X, U, method='steepest'):
        """One optimisation step; returns StepResult(done, nX, nU, dcost0, cost1).

        ``done`` is True when |dcost0| < descent_tolerance (X, U returned unchanged, cost1
        is their cost).  A method giving dcost0 > 0 is retried with
        :meth:`select_fallback_method`."""
        X = np.asarray(X, dtype=float)
        U = np.asarray(U, dtype=float)
        self.monitor.step_begin(iteration)
        Kproj, dX, dU, Q, R, S = self.calc_descent_direction(X, U, method)
        cost0 = self.calc_cost(X, U)
        dcost0 = self.calc_dcost(X, U, dX, dU)
        self.monitor.step_info(method, cost0, dcost0, X, U, dX, dU, Kproj)
        if dcost0 > 0:
            fallback = self.select_fallback_method(iteration, method)
            self.monitor.step_method_failure(method, cost0, dcost0, fallback)
            return self.step(iteration, X, U, fallback)
        if abs(dcost0) < self.descent_tolerance:
            self.monitor.step_termination(cost0, dcost0)
            return StepResult(True, X, U, dcost0, cost0)
        nX, nU, cost1 = self.armijo_search(X, U, Kproj, dX, dU)
        self.monitor.step_completed(method, cost1, nX, nU)
        return StepResult(False, nX, nU, dcost0, cost1)

    def select_method(self, iteration):
        """``first_method`` for the first ``first_method_iterations`` iterations, then
        ``second_method``.  Override to customise."""
        return self.first_method if iteration < self.first_method_iterations \
            else self.second_method

    def select_fallback_method(self, iteration, current_method):
        """Method to try after ``current_method`` gave a non-descent direction:
        newton -> quasi -> steepest.  Steepest descent cannot fail (dcost0 = -|grad|^2);
        if it does, the derivatives are inconsistent and ConvergenceError is raised."""
        if current_method == 'newton':
            return 'quasi'
        if current_method == 'quasi':
            return 'steepest'
        raise ConvergenceError('the cost derivative is positive for steepest descent: the '
                               'linearization or cost derivatives are inconsistent')

    def optimize(self, X, U, max_steps=50):
        """Optimise (X, U) until a local minimiser (|dcost| < descent_tolerance) or
        ``max_steps`` steps; returns OptimizeResult(converged, X, U)."""
        X = np.array(X, dtype=float)
        U = np.array(U, dtype=float)
        self.monitor.optimize_begin(X, U)
        converged = False
        cost = self.calc_cost(X, U)
        for i in range(max_steps):
            method = self.select_method(i)
            converged, X, U, dcost0, cost = self.step(i, X, U, method)
            if converged:
                break
        self.monitor.optimize_end(converged, X, U, cost)
        return OptimizeResult(converged, X, U)

    # ------------------------------------------------------------------ debugging
    def descent_plot(self, X, U, method='steepest', points=40, legend=True):
        """Plot (matplotlib, imported here) the true projected cost, the quadratic model,
        the sufficient-decrease line and the Armijo points along the descent direction."""
        try:
            import matplotlib.pyplot as pyplot
        except ImportError as exc:
            raise ImportError('descent_plot needs matplotlib') from exc
        X = np.asarray(X, dtype=float)
        U = np.asarray(U, dtype=float)
        Kproj, dX, dU, Q, R, S = self.calc_descent_direction(X, U, method)

        def true_cost(zi):
            return self.calc_cost(*self.dsys.project(X + zi * dX, U + zi * dU, Kproj))

        armijo_z = np.array(sorted(self.armijo_beta ** m for m in range(20)))
        z = np.sort(np.concatenate((np.linspace(-0.1, 1.01, points), armijo_z)))
        cost = self.calc_cost(X, U)
        dcost = self.calc_dcost(X, U, dX, dU)
        ddcost = self.calc_ddcost(X, U, dX, dU, Q, R, S)
        true = np.array([true_cost(zi) for zi in z])
        model = cost + dcost * z + 0.5 * ddcost * z * z
        armijo_cost = np.array([true_cost(zi) for zi in armijo_z])
        armijo_max = cost + self.armijo_alpha * z * dcost
        pyplot.plot(z, model - cost, '-,', linewidth=2.0, color='blue', label='Modeled Cost')
        pyplot.plot(z, true - cost, '.-', linewidth=1.0, color='black', label='True Cost')
        pyplot.plot(armijo_z, armijo_cost - cost, 'o', color='gray',
                    label='Armijo Evaluations')
        pyplot.plot(z, armijo_max - cost, '-.', color='black',
                    label='Required Cost Improvement')
        if legend:
            pyplot.legend(loc=0)
        pyplot.title('Cost along descent direction for method: "%s".' % method)
        pyplot.xlabel('z')
        pyplot.ylabel(r'$\Delta$ cost')

    def check_dcost(self, X, U, method='steepest', delta=1e-6, tolerance=1e-5):
        """Compare calc_dcost along the descent direction with the central difference of
        the projected cost.  Returns DCostCheck(result, error, cost1, cost0, approx_dcost,
        exact_dcost); result is |error| <= tolerance."""
        X = np.asarray(X, dtype=float)
        U = np.asarray(U, dtype=float)
        Kproj, dX, dU, Q, R, S = self.calc_descent_direction(X, U, method)
        exact = self.calc_dcost(X, U, dX, dU)
        cost0 = self.calc_cost(*self.dsys.project(X - delta * dX, U - delta * dU, Kproj))
        cost1 = self.calc_cost(*self.dsys.project(X + delta * dX, U + delta * dU, Kproj))
        approx = (cost1 - cost0) / (2.0 * delta)
        error = approx - exact
        return DCostCheck(bool(abs(error) <= tolerance), error, cost1, cost0, approx, exact)

    def check_ddcost(self, X, U, method='steepest', delta=1e-6, tolerance=1e-5):
        """Compare calc_ddcost (Newton model) along the descent direction with the central
        difference of the projected cost derivative.  Returns DDCostCheck(result, error,
        dcost1, dcost0, approx_ddcost, exact_ddcost)."""
        X = np.asarray(X, dtype=float)
        U = np.asarray(U, dtype=float)
        Kproj, dX, dU, Q, R, S = self.calc_descent_direction(X, U, method)
        if method != 'newton':
            Q, R, S = self.calc_descent_direction(X, U, 'newton')[-3:]
        exact = self.calc_ddcost(X, U, dX, dU, Q, R, S)
        dcosts = []
        for sign in (-1.0, 1.0):
            nX, nU = self.dsys.project(X + sign * delta * dX, U + sign * delta * dU, Kproj)
            A, B = self.dsys.linearize_trajectory(nX, nU)
            ndX, ndU = self.dsys.dproject(A, B, dX, dU, Kproj)
            dcosts.append(self.calc_dcost(nX, nU, ndX, ndU))
        approx = (dcosts[1] - dcosts[0]) / (2.0 * delta)
        error = approx - exact
        return DDCostCheck(bool(abs(error) <= tolerance), error, dcosts[1], dcosts[0],
                           approx, exact)
