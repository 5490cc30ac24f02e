"""Run a controller against a MidpointVI plant in one process (no ROS).

Each period k: the plant state (t_k, q_k, p_k) is shown to the controller as the simulator
publishes it -- positions q_k and velocities v_k = M(q_k)⁻¹ p_k -- the controller returns u_k,
which is saturated at the plant's effort limits and held over one VI step of length dt to
(t_{k+1}, q_{k+1}, p_{k+1}).  This is the loop the ROS simulator and controller nodes run in
lockstep, so their trajectories can be compared against :func:`simulate`.
"""
import math
from dataclasses import dataclass

import numpy as np

from ..integrators import MidpointVI
from ..mechanics import dynamics
from .base import wrap_angles, angle_mask

__all__ = ['ClosedLoopResult', 'simulate', 'settle_time', 'summarize']


@dataclass
class ClosedLoopResult:
    """Trajectories of :func:`simulate` (N steps).

    t (N+1,) [s]; q (N+1, nQ); p (N+1, nQd) discrete momentum; v (N+1, nQ) = M⁻¹ p;
    u (N, m) efforts applied over [t_k, t_k+1] (after saturation), for ``input_names``;
    E (N+1,) total energy [J] of the plant at (q, v); energy_error (N,) and cost (N,) as
    reported by the controller; mode (N,) list of str; joint_names, input_names;
    angles (nQ,) bool, the configs that are angles (wrapped when comparing to a goal).
    """
    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    v: np.ndarray
    u: np.ndarray
    E: np.ndarray
    energy_error: np.ndarray
    cost: np.ndarray
    mode: list
    joint_names: list
    input_names: list
    angles: np.ndarray


def simulate(controller, plant, duration, q0, v0=None, dt=None, effort_limits=None, t0=0.0):
    """Closed loop of ``controller`` and a MidpointVI on ``plant`` (a System).

    Parameters
    ----------
    controller : Controller (its own System instance, not ``plant``)
    plant : System with the same configs (in the same order) and the controller's inputs
    duration : float, simulated time [s] (rounded to whole steps)
    q0, v0 : initial positions / velocities (nQ,) (v0 default zero)
    dt : step [s]; default ``controller.dt``
    effort_limits : (m,) plant saturation for the controller's inputs; default
        ``controller.u_max``
    """
    if plant is controller.system:
        raise ValueError('give the plant its own System: the controller uses its system as '
                         'scratch space')
    names = [c.name for c in plant.configs]
    if names != controller.joint_names:
        raise ValueError('plant configs %s differ from the controller joints %s'
                         % (names, controller.joint_names))
    dt = controller.dt if dt is None else float(dt)
    steps = int(round(duration / dt))
    limits = controller.u_max if effort_limits is None else np.broadcast_to(
        np.asarray(effort_limits, dtype=float), controller.u_max.shape)
    idx = np.array([plant.get_input(n).index for n in controller.input_names], dtype=int)
    nq, m = plant.nQ, len(idx)

    q0 = np.asarray(q0, dtype=float)
    v0 = np.zeros(nq) if v0 is None else np.asarray(v0, dtype=float)
    mvi = MidpointVI(plant)
    model, data = plant.model, plant.model.create_data()
    data.set(q0, v0)
    mvi.initialize_from_state(t0, q0, dynamics.momentum_from_velocity(model, data, v0))

    T = np.zeros(steps + 1)
    Q = np.zeros((steps + 1, nq))
    P = np.zeros((steps + 1, plant.nQd))
    V = np.zeros((steps + 1, nq))
    E = np.zeros(steps + 1)
    U = np.zeros((steps, m))
    err, cost, modes = np.zeros(steps), np.zeros(steps), []
    full = np.zeros(plant.nu)
    controller.reset()
    for k in range(steps + 1):
        q, p = mvi.q2, mvi.p2
        data.set(q, np.zeros(nq))
        v = dynamics.velocity_from_momentum(model, data, p)
        plant.data.set(q, v)
        T[k], Q[k], P[k], V[k], E[k] = mvi.t2, q, p, v, plant.total_energy()
        if k == steps:
            break
        out = controller.compute(q, v)
        U[k] = np.clip(out.u, -limits, limits)
        err[k], cost[k] = out.energy_error, out.cost
        modes.append(out.mode)
        full[idx] = U[k]
        mvi.step(t0 + (k + 1) * dt, full)
    return ClosedLoopResult(T, Q, P, V, U, E, err, cost, modes, list(names),
                            list(controller.input_names), angle_mask(plant))


def settle_time(result, goal, q_tol, v_tol, configs=None):
    """First time after which every later sample has |q_i - goal_i| < q_tol (angles wrapped)
    and |v_i| < v_tol for the selected configs (indices; default all).  ``q_tol``/``v_tol``
    are scalars or per-selected-config arrays.  Returns nan if the last sample is outside.
    """
    err = np.array([wrap_angles(q - goal, result.angles) for q in result.q])
    sel = slice(None) if configs is None else np.asarray(configs, dtype=int)
    inside = np.all(np.abs(err[:, sel]) < q_tol, axis=1) & \
        np.all(np.abs(result.v[:, sel]) < v_tol, axis=1)
    if not inside[-1]:
        return math.nan
    outside = np.nonzero(~inside)[0]
    k = 0 if outside.size == 0 else outside[-1] + 1
    return float(result.t[k])


def summarize(result, goal, q_tol=0.05, v_tol=0.1):
    """Dict: time_to_goal [s] (:func:`settle_time`, nan if not settled), final_error (nQ,)
    wrapped q - goal at the end, final_velocity (nQ,), max_effort (m,) max |u|,
    final_mode."""
    return {
        'time_to_goal': settle_time(result, goal, q_tol, v_tol),
        'final_error': wrap_angles(result.q[-1] - goal, result.angles),
        'final_velocity': result.v[-1].copy(),
        'max_effort': np.abs(result.u).max(axis=0) if len(result.u) else np.zeros(0),
        'final_mode': result.mode[-1] if result.mode else None,
    }
