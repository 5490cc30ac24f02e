"""Entry points: URDF text or file -> System, and URDF text of a file (for the ROS nodes)."""
import os

from .build import build_system
from .errors import URDFError
from .parse import parse_xml, read_description
from .tolerance import Tolerance
from .xacro import xacro_to_urdf

__all__ = ['import_urdf', 'import_urdf_file', 'load_urdf_text']


def _import(source, where, strict=False, floating_base=None, base_dir=None, inertia='check',
            **options):
    """Parse, validate and build; ``where`` None: named after the robot.  The tolerated
    quirks are on ``system.urdf.warnings`` and emitted once each as URDFWarning; the
    source and ``base_dir`` are kept on ``system.urdf`` (description, base_dir)."""
    if floating_base not in (None, False, True, 'euler'):
        raise ValueError("floating_base must be None, False, True or 'euler', got %r"
                         % (floating_base,))
    root = parse_xml(source, where or 'URDF')
    if where is None:
        name = root.get('name')
        where = 'URDF robot %r' % name if name else 'URDF'
    tol = Tolerance(where, strict)
    system = build_system(read_description(root, where, tol, floating_base, inertia), where,
                          tol=tol, **options)
    system.urdf._set_source(source, base_dir)
    tol.emit(stacklevel=4)
    return system


def import_urdf(source, system=None, prefix=None, gravity=(0.0, 0.0, -9.81), base_xyz=None,
                base_rpy=None, base_pose=None, actuated='all', friction=False,
                friction_velocity=1e-2, enforce_limits=True, massless='kinematic', strict=False,
                floating_base=None, mimic='reduce', base_dir=None, inertia='check'):
    """Build a :class:`System` from a URDF given as an XML string (``robot_description``).

    Parameters
    ----------
    source : str or bytes
        The URDF XML.
    system : System, optional
        Add the robot to this system (with a ``prefix`` for a second copy); a new System
        is created otherwise.  On any error the system is left untouched.
    prefix : str, optional
        Prepended to every frame, config, input, force and constraint name.
    gravity : (3,) or None
        Gravity [m/s^2] (added unless None or the system already has a Gravity).
    base_xyz, base_rpy / base_pose
        Pose of the root link in the world: xyz [m] + URDF rpy [rad], or a (4, 4) matrix.
        Default: the root link at the origin (a root link named ``world`` is the world).
    actuated : 'all', list of joint names, or None
        Joints that get a :class:`forces.ConfigForce` input named ``prefix + joint``.
    friction : bool
        Add ``<dynamics friction>`` as :class:`forces.SmoothCoulombFriction` with velocity
        scale ``friction_velocity`` [rad/s or m/s].
    enforce_limits : bool
        Declare each joint's ``<limit lower upper>`` on the system
        (:meth:`System.set_joint_limit`; default): every :class:`MidpointVI` step then holds
        the joint within them as a unilateral constraint (inelastic stop, no penetration
        beyond rounding).  False: the limits are only read (``system.urdf.position_limits``).
    massless : 'kinematic' | 'error'
        Moving joints that move no mass (or only mass other joints already move): make them
        kinematic configs held in place, with a warning (default; ``'warn'`` is a synonym),
        or raise.
    strict : bool
        Raise a :class:`URDFError` on the first quirk that would otherwise be tolerated
        with a warning (docs/urdf-import.md lists them).
    floating_base : None | False | True | 'euler'
        ``floating`` joints are free joints (:class:`~ros_vi.mechanics.FreeJoint`: six
        configs ``joint_x, _y, _z`` [m] and ``joint_rx, _ry, _rz`` [rad] on a moving chart
        of the rotation, no singularity anywhere; not actuated unless named in
        ``actuated``).  True also puts a free joint ``root_joint`` between the world and
        the root link (a floating base, as Pinocchio's free-flyer; its coordinates start
        at the base pose ``base_xyz``/``base_rpy``).  ``'euler'``: ``floating`` joints as
        six configs ``joint_x, _y, _z, _yaw, _pitch, _roll`` (rotation Rz(yaw) Ry(pitch)
        Rx(roll), singular at pitch = +-90 deg), with a warning.
    mimic : 'reduce' | 'constraint'
        ``<mimic>`` joints as an exact reduction of coordinates (default: the mimic joint
        follows its leader and has no config; fast compiled path) or as holonomic
        :class:`constraints.Mimic` constraints (trep's formulation; the mimic joint keeps a
        config).  Both give the same motion (docs/urdf-import.md).
    inertia : 'check' | 'balance' | 'repair'
        The inertia policy (docs/urdf-import.md, "Inertia"): each moving rigid body (links
        joined by fixed joints) is judged by its composite inertia, never the body welded
        to the world.  ``'check'`` (default): a triangle-inequality violation is imported
        as written with a warning, a tensor not positive semi-definite beyond rounding is
        refused; ``'balance'``: triangle violations get the mean of their principal
        moments, as MuJoCo's ``balanceinertia`` does (warned); ``'repair'``: any invalid
        inertia moves to the nearest valid one (warned).
    base_dir : str, optional
        Folder of the URDF file, against which relative mesh paths are taken later
        (collision queries, drawing); kept as ``system.urdf.base_dir`` beside the text
        (``system.urdf.description``).  None: the current directory.

    Returns
    -------
    System, with ``system.urdf`` the :class:`URDFRobot` of this import
    (``system.urdf.warnings``: the tolerated quirks, also emitted once each as
    :class:`URDFWarning`).

    Raises
    ------
    URDFError (a ValueError) naming the element at fault.
    """
    return _import(source, None, system=system, prefix=prefix, gravity=gravity,
                   base_xyz=base_xyz, base_rpy=base_rpy, base_pose=base_pose,
                   actuated=actuated, friction=friction, friction_velocity=friction_velocity,
                   enforce_limits=enforce_limits, massless=massless,
                   strict=strict, floating_base=floating_base, mimic=mimic,
                   base_dir=base_dir, inertia=inertia)



def _read(filename, xacro_args, allowed_paths=()):
    """``(text, where)`` of a ``.urdf`` file, or of a ``.xacro`` file (or any file with
    ``xacro_args``) processed by xacro in its sandbox (``allowed_paths``: see
    :func:`xacro_to_urdf`)."""
    filename = os.fspath(filename)
    where = 'URDF file %r' % filename
    if not os.path.isfile(filename):
        raise URDFError('%s: no such file' % where)
    if filename.endswith('.xacro') or xacro_args is not None:
        return (xacro_to_urdf(filename, xacro_args, allowed_paths=allowed_paths),
                'xacro file %r' % filename)
    try:
        with open(filename, 'rb') as fh:
            return fh.read(), where
    except OSError as err:
        raise URDFError('%s: cannot read: %s' % (where, err)) from None


def import_urdf_file(filename, system=None, prefix=None, xacro_args=None, allowed_paths=(),
                     **options):
    """Build a System from a ``.urdf`` file, or a ``.xacro`` file with ``xacro_args``.

    ``xacro_args``: ``{name: value}`` for ``<xacro:arg>`` (a ``.xacro`` suffix or any
    ``xacro_args`` selects xacro processing).  ``allowed_paths``: directories xacro may
    read besides the model's directory tree and the ROS packages (see
    :func:`xacro_to_urdf`; anything else is refused with :class:`URDFSecurityError`).
    Other keywords: see :func:`import_urdf`; ``base_dir`` is the file's folder.
    """
    text, where = _read(filename, xacro_args, allowed_paths)
    options.setdefault('base_dir', os.path.dirname(os.path.abspath(os.fspath(filename))))
    return _import(text, where, system=system, prefix=prefix, **options)


def load_urdf_text(filename, xacro_args=None, allowed_paths=()):
    """URDF XML text (str) of a ``.urdf`` file, or of a ``.xacro`` file processed by xacro
    in its sandbox (:func:`xacro_to_urdf`, ``allowed_paths`` likewise); e.g. for a
    ``robot_description``.

    The text is not validated here (:func:`import_urdf` does that).  Raises
    :class:`URDFError`: ``no such file ...``, unreadable file, xacro errors;
    :class:`URDFSecurityError`: xacro reading outside the allowed directories.
    """
    filename = os.fspath(filename)
    if not os.path.isfile(filename):
        raise URDFError('no such file %r' % filename)
    text, _ = _read(filename, xacro_args, allowed_paths)
    if isinstance(text, bytes):
        text = text.decode('utf-8')
    return text
