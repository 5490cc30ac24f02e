"""Built-in potential energies (trep.potentials).

``Potential``, the base class, is re-exported here as in trep (``trep.potentials.Potential``).
"""
from ..potential import Potential
from .gravity import Gravity
from .configspring import ConfigSpring
from .linearspring import LinearSpring
from .nonlinear_config_spring import NonlinearConfigSpring

__all__ = ['Potential', 'Gravity', 'ConfigSpring', 'LinearSpring', 'NonlinearConfigSpring']
