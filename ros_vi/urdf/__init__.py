"""URDF importer: a robot description becomes an exact ros_vi :class:`System`.

Entry points (trep's names): :func:`import_urdf` (a URDF string, e.g. ``robot_description``)
and :func:`import_urdf_file` (a ``.urdf`` file, or a ``.xacro`` file processed with xacro).
Both return an ordinary :class:`~ros_vi.mechanics.system.System`; the URDF data the nodes
need (joint order, limits, link frames) is attached as ``system.urdf`` (a :class:`URDFRobot`;
every import into the same system is also listed in ``system.urdf_robots``).
:func:`xacro_to_urdf` turns a ``.xacro`` file into URDF text, :func:`load_urdf_text` reads
the URDF text of a ``.urdf`` or ``.xacro`` file.

One job per module:

* :mod:`.parse` -- hardened XML parse and validation into a :class:`~.parse.Description`
  (no DOCTYPE, entities or XInclude: no file other than the given one is read);
* :mod:`.build` -- frames, configs, forces and constraints from a description (the URDF
  semantics: geometry, naming, joint data, massless joints are documented there);
* :mod:`.robot` -- :class:`URDFRobot`, the description of an imported robot;
* :mod:`.ros2_control` -- the ``<ros2_control>`` blocks (:class:`Ros2ControlBlock`, on
  ``system.urdf.ros2_control``) and the per-joint command interfaces they declare
  (:class:`JointControl`, ``system.urdf.joint_controls``);
* :mod:`.tolerance` -- the tolerance policy: :class:`Quirk` records and :class:`URDFWarning`;
* :mod:`.inertia` -- the inertia policy: each moving rigid body (links merged across fixed
  joints) judged by its composite inertia (the ``inertia`` import option);
* :mod:`.xacro` -- :func:`xacro_to_urdf`;
* :mod:`.shapes` -- :func:`link_geometry`: the ``<visual>``/``<collision>`` shapes of the
  links (:class:`Shape`: primitives and meshes, colours, triangles), for drawing and
  geometric queries;
* :mod:`.importer` -- the entry points above;
* :mod:`.geometry`, :mod:`.errors` -- URDF rpy/origin/axis helpers and the exceptions.
"""
from .build import HELPER_SEP
from .errors import URDFError, URDFParseError, URDFSecurityError
from .geometry import axis_alignment, origin_matrix, rpy_matrix
from .importer import import_urdf, import_urdf_file, load_urdf_text
from .parse import SUPPORTED_JOINTS, JointInfo
from .robot import URDFRobot
from .ros2_control import (ComponentInterfaces, InterfaceSpec, JointControl,
                           Ros2ControlBlock)
from .shapes import Shape, link_geometry
from .contacts import body_contacts, disabled_collisions, ground_contacts, surface_friction
from .tolerance import Quirk, URDFWarning
from .xacro import xacro_to_urdf

__all__ = ['import_urdf', 'import_urdf_file', 'load_urdf_text', 'xacro_to_urdf',
           'URDFError', 'URDFParseError', 'URDFSecurityError', 'URDFRobot', 'JointInfo',
           'Quirk', 'URDFWarning', 'Shape', 'link_geometry', 'ground_contacts', 'body_contacts',
           'disabled_collisions',
           'surface_friction',
           'Ros2ControlBlock',
           'ComponentInterfaces', 'InterfaceSpec', 'JointControl',
           'rpy_matrix', 'origin_matrix', 'axis_alignment', 'SUPPORTED_JOINTS', 'HELPER_SEP']
