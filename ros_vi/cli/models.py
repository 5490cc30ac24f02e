"""What the commands share: a MODEL argument (a URDF/xacro path or a shipped model's name)
turned into URDF text and a System."""
import math
import os
import warnings

from .. import resources
from . import CommandError

__all__ = ['ModelSource', 'shipped_names', 'resolve_model', 'setup_model', 'import_model',
           'SHIPPED_GRAVITY', 'read_recording']

# gravity [m/s^2] of the shipped models as the demos use them (trep's tutorial pendulum: 9.8)
SHIPPED_GRAVITY = {'pendulum': 9.8}
DEFAULT_GRAVITY = 9.81


class ModelSource:
    """A resolved MODEL: ``name`` (shipped name or file stem), ``path``, ``text`` (URDF XML),
    ``shipped`` (bool), ``world`` (the :class:`~ros_vi.simulation.world.World` of a world
    file, whose description ``text`` is; None for a URDF), ``floating_base`` (bool: the
    root link on a free joint ``root_joint``, as ``import_urdf(..., floating_base=True)``)."""

    def __init__(self, name, path, text, shipped, world=None, floating_base=False):
        self.name, self.path, self.text, self.shipped = name, path, text, shipped
        self.world = world
        self.floating_base = floating_base

    @property
    def is_demo(self):
        """True for a shipped model set up as its demo has it (fixed base): the demo's time
        step, start state and controllers apply."""
        return self.shipped and not self.floating_base

    @property
    def default_gravity(self):
        """|g| [m/s^2]: the demos' value for shipped models, 9.81 otherwise."""
        return SHIPPED_GRAVITY.get(self.name, DEFAULT_GRAVITY) if self.shipped \
            else DEFAULT_GRAVITY


def shipped_names():
    """Names of the models in the installed ``urdf/`` folder (sorted)."""
    try:
        folder = os.path.join(resources.share_directory(), 'urdf')
        return sorted(f[:-5] for f in os.listdir(folder) if f.endswith('.urdf'))
    except (OSError, resources.ResourceError):
        return []


def resolve_model(spec, floating_base=False):
    """:class:`ModelSource` of a path (``.urdf``, ``.xacro``, ``package://``, ``file://``, a
    world file ``.yaml``/``.yml``) or a shipped model name; CommandError naming the file, or
    listing the shipped models.  ``floating_base``: the robot's root on a free joint (a URDF
    only: a world file says ``floating`` per robot)."""
    source = _resolve(spec)
    if floating_base:
        if source.world is not None:
            raise CommandError('--floating-base is for a URDF model: in a world file each '
                               'robot says floating: true or false (%s)' % spec)
        source.floating_base = True
    return source


def _resolve(spec):
    from ..urdf import URDFError, load_urdf_text
    if spec.endswith(('.yaml', '.yml')):
        from ..simulation.world import WorldError, load_world
        if not os.path.isfile(spec):
            raise CommandError('world file %r: no such file' % spec)
        try:
            world = load_world(spec)
            text = world.urdf()
        except (WorldError, URDFError) as err:
            raise CommandError(str(err)) from None
        return ModelSource(os.path.basename(spec).split('.')[0], spec, text, False, world)
    looks_like_path = (os.sep in spec or spec.endswith(('.urdf', '.xacro', '.xml'))
                       or spec.startswith(('package://', 'file://')))
    if looks_like_path:
        try:
            path = resources.resolve_uri(spec)
        except resources.ResourceError as err:
            raise CommandError(str(err)) from None
        if not os.path.isfile(path):
            raise CommandError('model file %r: no such file' % spec)
        try:
            text = load_urdf_text(path)
        except URDFError as err:
            raise CommandError(str(err)) from None
        name = os.path.basename(path).split('.')[0]
        return ModelSource(name, path, text if isinstance(text, str) else text.decode(), False)
    names = shipped_names()
    if spec not in names:
        raise CommandError('unknown model %r: give a URDF/xacro file or one of the shipped '
                           'models: %s' % (spec, ', '.join(names) or 'none found'))
    path = resources.shipped_model(spec)
    with open(path, encoding='utf-8') as fh:
        return ModelSource(spec, path, fh.read(), True)


def setup_model(source, gravity=None, ground=None, self_collision=False, **options):
    """The :class:`ros_vi.simulation.RobotSetup` of ``source``, as the simulator node sets a
    robot up (the ``<ros2_control>`` block's interfaces, bounds and initial state): gravity
    |g| [m/s^2] along -z (default :attr:`ModelSource.default_gravity`), ``ground`` ``(height
    [m], friction)`` a contact ground (a world file's own wins; with it the robot's own links
    touch where ``self_collision`` or the world file says so), relative mesh paths
    against the file's folder, ``options`` for :func:`ros_vi.urdf.import_urdf`.
    CommandError on a URDF the importer refuses."""
    from ..simulation import setup_robot
    from ..urdf import URDFError
    g = source.default_gravity if gravity is None else float(gravity)
    if not math.isfinite(g):
        raise CommandError('gravity must be finite, got %r' % gravity)
    vector = (0.0, 0.0, -g)
    initial = {}
    world = source.world
    if world is not None:
        # a world file: its gravity (unless --gravity), joint positions and twists
        vector = tuple(world.gravity) if gravity is None else vector
        initial = world.setup_options()
    initial['self_collision'] = initial.get('self_collision', False) or self_collision
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')          # the quirks are reported from robot.warnings
        try:
            return setup_robot(source.text, gravity=vector,
                               base_dir=os.path.dirname(os.path.abspath(source.path)),
                               import_options=options, floating_base=source.floating_base,
                               ground=world.contact_ground() if world is not None else ground,
                               **initial)
        except (URDFError, ValueError) as err:
            raise CommandError('%s: %s' % (source.path, err)) from None


def import_model(source, gravity=None, **options):
    """``(system, warnings)`` of :func:`setup_model`: the System and the importer's tolerated
    quirks as strings."""
    setup = setup_model(source, gravity, **options)
    return setup.system, [str(q) for q in setup.warnings]


def read_recording(path):
    """The :class:`ros_vi.recording.Recording` in ``path``; CommandError naming the file when it
    cannot be read or holds no samples."""
    from ..recording import load_recording
    try:
        rec = load_recording(path)
    except ValueError as err:
        raise CommandError(str(err)) from None
    if len(rec) == 0:
        raise CommandError('recording %r holds no samples' % path)
    return rec
