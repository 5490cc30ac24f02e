"""Integrators: the midpoint variational integrator and its compiled fast path."""
from .midpointvi import ConvergenceError, MidpointVI

__all__ = ['ConvergenceError', 'MidpointVI']
