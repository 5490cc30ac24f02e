"""Built-in potential energies (trep.potentials)."""
from .gravity import Gravity
from .configspring import ConfigSpring
from .linearspring import LinearSpring
from .nonlinear_config_spring import NonlinearConfigSpring

__all__ = ['Gravity', 'ConfigSpring', 'LinearSpring', 'NonlinearConfigSpring']
