"""The closed loop in one process: a controller and a :class:`Simulation`, and how to read
the result (no ROS).

:func:`simulate` is the one closed loop of ros_vi (``ros-vi simulate``, the demo's offline
run, the tests): each tick the simulation's published state goes to the controller, whose
efforts are commanded for the next tick -- the ticks the simulator node runs in lockstep
with a controller node.  :class:`ClosedLoopResult` is what it returns; :func:`settle_time`
and :func:`summarize` read it (or anything with the same ``t``, ``q``, ``v``, ``u``,
``mode``, ``angles``, such as the ROS loop's ``LoopRun``).
"""
import math
import time
from dataclasses import dataclass

import numpy as np

from ..control.base import angle_mask, default_effort_limits, wrap_angles
from ..integrators import ConvergenceError
from .core import Simulation

__all__ = ['ClosedLoopResult', 'simulate', 'settle_time', 'summarize']


@dataclass
class ClosedLoopResult:
    """Trajectories of :func:`simulate` (N ticks).

    t (N+1,) [s]; q (N+1, nQ); p (N+1, nQd) discrete momentum; v (N+1, nQ) = M⁻¹ p;
    u (N, m) efforts applied over [t_k, t_k+1] (after saturation), for ``input_names``;
    E (N+1,) total energy [J] of the plant at (q, v); energy_error (N,) and cost (N,) as
    reported by the controller; mode (N,) list of str; joint_names, input_names;
    angles (nQ,) bool, the configs that are angles (wrapped when comparing to a goal);
    iterations (N,) Newton iterations of each tick; step_time [s] wall time spent in the
    simulation's ticks (the physics, without the controller).
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
    iterations: np.ndarray = None
    step_time: float = math.nan


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


def simulate(controller, plant, duration, q0, v0=None, dt=None, effort_limits=None, t0=0.0,
             observer=None, **options):
    """Closed loop of ``controller`` and a :class:`Simulation` of ``plant``, in one process.

    The one closed loop of ros_vi (also ``ros-vi simulate``): each tick k the
    simulation's published state -- positions q_k and velocities v_k = M(q_k)^-1 p_k --
    goes to ``controller.compute``, whose efforts are commanded,
    saturated at the effort limits and held over the tick to (t_{k+1}, q_{k+1}, p_{k+1}).
    The simulator node in lockstep with a controller node runs the same ticks, so their
    trajectories agree to rounding.

    Parameters
    ----------
    controller : Controller (its own System instance, not ``plant``), or None for a free
        run (no commands; ``dt`` required)
    plant : System with the same configs (in the same order) and the controller's inputs
    duration : float, simulated time [s] (rounded to whole ticks)
    q0, v0 : initial positions / velocities (nQ,) (v0 default zero)
    dt : tick [s]; default ``controller.dt``
    effort_limits : (m,) plant saturation for the controller's inputs; default
        ``controller.u_max``
    t0 : initial time [s]
    observer : callable ``observer(sim, state)``, optional
        Called with the :class:`Simulation` and its :class:`SimState` at every sample (t0,
        then after each tick): to record, draw or report progress.
    options : further :class:`Simulation` keywords (``substeps``, ``max_subdivisions``, ...)

    Returns a :class:`ClosedLoopResult`.  A tick that fails even after the
    simulation's refinements raises ConvergenceError naming the time; its ``result``
    attribute holds the ClosedLoopResult up to the last good sample.
    """
    if controller is not None and plant is controller.system:
        raise ValueError('give the plant its own System: the controller uses its system as '
                         'scratch space')
    names = [c.name for c in plant.configs]
    if controller is None:
        if dt is None:
            raise ValueError('simulate without a controller needs dt')
        input_names, u_max = [], np.zeros(0)
    else:
        if names != controller.joint_names:
            raise ValueError('plant configs %s differ from the controller joints %s'
                             % (names, controller.joint_names))
        input_names, u_max = list(controller.input_names), controller.u_max
    dt = controller.dt if dt is None else float(dt)
    ticks = int(round(duration / dt))
    idx = np.array([plant.get_input(n).index for n in input_names], dtype=int)
    limits = default_effort_limits(plant) if controller is None else np.full(plant.nu, np.inf)
    if controller is not None:
        limits[idx] = u_max if effort_limits is None else np.broadcast_to(
            np.asarray(effort_limits, dtype=float), u_max.shape)
    nq, m = plant.nQ, len(idx)
    sim = Simulation(plant, dt, effort_limits=limits, initial_positions=q0,
                     initial_velocities=np.zeros(nq) if v0 is None else v0, t0=t0, **options)

    T = np.zeros(ticks + 1)
    Q = np.zeros((ticks + 1, nq))
    P = np.zeros((ticks + 1, plant.nQd))
    V = np.zeros((ticks + 1, nq))
    E = np.zeros(ticks + 1)
    U = np.zeros((ticks, m))
    err, cost, modes = np.full(ticks, math.nan), np.full(ticks, math.nan), []
    iterations = np.zeros(ticks, dtype=int)
    command = np.zeros(plant.nu)
    step_time = 0.0
    if controller is not None:
        controller.reset()

    def result(n):
        """The first n ticks (n + 1 samples)."""
        return ClosedLoopResult(T[:n + 1], Q[:n + 1], P[:n + 1], V[:n + 1], U[:n], E[:n + 1],
                                err[:n], cost[:n], modes[:n], list(names), input_names,
                                angle_mask(plant), iterations[:n], step_time)

    for k in range(ticks + 1):
        state = sim.state()
        T[k], Q[k], P[k], V[k], E[k] = (state.t, state.positions, sim.mvi.p2,
                                        state.velocities, state.energy)
        if observer is not None:
            observer(sim, state)
        if k == ticks:
            break
        if controller is not None:
            # free joints: the plant's charts (moved to its bodies every step) go along
            attitudes = (plant.free_charts.attitudes(plant.model) if plant.free_joints
                         else None)
            out = controller.compute(state.positions, state.velocities, sim.input_forces(),
                                     attitudes)
            command[idx] = out.u
            sim.set_input_commands(command)
            err[k], cost[k] = out.energy_error, out.cost
            modes.append(out.mode)
        else:
            modes.append('none')
        start = time.perf_counter()
        tick = sim.tick()
        step_time += time.perf_counter() - start
        if not tick.ok:
            failure = ConvergenceError('tick %d (t = %.6g s -> %.6g s) failed: %s'
                                       % (k, state.t, state.t + dt, tick.error))
            failure.result = result(k)
            raise failure
        U[k] = sim.applied_inputs()[idx]
        iterations[k] = tick.iterations
    return result(ticks)
