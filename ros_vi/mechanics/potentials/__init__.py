"""Built-in potential energies (trep.potentials)."""
from .gravity import Gravity
from .configspring import ConfigSpring

__all__ = ['Gravity', 'ConfigSpring']
