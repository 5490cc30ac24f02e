"""Built-in forces (trep.forces)."""
from .damping import Damping
from .configforce import ConfigForce
from .lineardamper import LinearDamper
from .wrenches import BodyWrench, HybridWrench, SpatialWrench
from .joint_limits import JointLimits
from .friction import SmoothCoulombFriction
from .drives import JointDrives

__all__ = ['Damping', 'ConfigForce', 'LinearDamper', 'BodyWrench', 'HybridWrench',
           'SpatialWrench', 'JointLimits', 'SmoothCoulombFriction', 'JointDrives']
