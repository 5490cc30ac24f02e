"""trep.discopt for Python 3: discrete optimal control on the midpoint variational
integrator (time-varying LQR/LQ, DSystem, DCost, DOptimizer).

Physics-core layer: NumPy/SciPy only (matplotlib is imported lazily by
DOptimizer.descent_plot).  ``import ros_vi as trep; trep.discopt.DSystem`` and
``import ros_vi.discopt`` both work.
"""
from .dlqr import LQRSolution, LQSolution, solve_tv_lq, solve_tv_lqr
from .dsystem import (DerivativeError, DSystem, Feedback, Linearization, SplitInput,
                      SplitState, SplitTrajectory, TangentTrajectory, Trajectory)
from .dcost import DCost
from .doptimizer import (ArmijoResult, ArmijoSimulation, DCostCheck, DDCostCheck,
                         DescentDirection, DOptimizer, DOptimizerDefaultMonitor,
                         DOptimizerMonitor, DOptimizerVerboseMonitor, OptimizeResult,
                         StepResult)
from ..trajectory import load_trajectory, save_trajectory

__all__ = ['solve_tv_lqr', 'solve_tv_lq', 'DSystem', 'DCost', 'DOptimizer',
           'DOptimizerMonitor', 'DOptimizerDefaultMonitor', 'DOptimizerVerboseMonitor',
           'LQRSolution', 'LQSolution', 'Trajectory', 'TangentTrajectory', 'SplitState',
           'SplitInput', 'SplitTrajectory', 'Linearization', 'Feedback', 'DerivativeError',
           'DescentDirection', 'ArmijoResult', 'ArmijoSimulation', 'StepResult',
           'OptimizeResult', 'DCostCheck', 'DDCostCheck', 'save_trajectory',
           'load_trajectory']
