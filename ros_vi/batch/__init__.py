"""Many simulations at once: batched closed-loop rollouts of one model (no ROS).

``ros_vi.rollout`` (:func:`runner.rollout`) runs B copies of a System under a controller,
with per-copy initial states and parameters, in compiled code parallel over the cores, and
returns reductions (final state, time to a target set, largest effort, energy balance) or
sampled trajectories.  :mod:`ros_vi.sweep` builds parameter sweeps on it.
"""
from .parameters import LOOP_PARAMETERS, MODEL_PARAMETERS, parameter_names
from .runner import RolloutResult, Target, rollout

__all__ = ['rollout', 'Target', 'RolloutResult', 'parameter_names', 'MODEL_PARAMETERS',
           'LOOP_PARAMETERS']
