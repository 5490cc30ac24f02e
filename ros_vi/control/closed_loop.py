"""Closed-loop results and how to read them (no ROS).

:class:`ClosedLoopResult` is what :func:`simulate` returns; :func:`settle_time` and
:func:`summarize` read it (or anything with the same ``t``, ``q``, ``v``, ``u``, ``mode``,
``angles``, such as the ROS loop's ``LoopRun``).

:func:`simulate` itself lives in :mod:`ros_vi.simulation` (the closed loop runs on
:class:`ros_vi.simulation.Simulation`, the loop of the simulator node); it is importable from
here and from :mod:`ros_vi.control` (loaded on first use, since the simulation imports this
package).
"""
import math
from dataclasses import dataclass

import numpy as np

from .base import wrap_angles

__all__ = ['ClosedLoopResult', 'simulate', 'settle_time', 'summarize']


def __getattr__(name):
    if name == 'simulate':
        from ..simulation import simulate
        return simulate
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


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
