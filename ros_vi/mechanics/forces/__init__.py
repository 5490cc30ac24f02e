"""Built-in forces (trep.forces)."""
from .damping import Damping
from .configforce import ConfigForce

__all__ = ['Damping', 'ConfigForce']
