"""Where ros_vi's resource files are: the one locator for models, configs, launch files.

:func:`share_directory` is the installed ``share/ros_vi`` folder (``urdf/``, ``config/``,
``launch/``, ``rviz/``, ``package.xml``), found, in this order:

1. the ament index (``ament_index_python``, ``AMENT_PREFIX_PATH``), when importable and
   ros_vi is indexed: a colcon install or a sourced ROS 2 workspace;
2. the data files of a (non-editable) pip install: ``<sys.prefix>/share/ros_vi``, or where
   the installed distribution's RECORD put ``share/ros_vi/package.xml``;
3. an editable (development) install: the project directory recorded in the installed
   distribution's metadata (``direct_url.json`` with ``dir_info.editable``), or the project
   directory holding setuptools' in-tree ``ros_vi.egg-info`` metadata (which Python finds
   first when the project directory is the current directory).

:func:`resolve_uri` turns ``package://pkg/rel`` (any package through the ament index, ros_vi
through :func:`share_directory`), ``file://path`` and plain paths into paths;
:func:`shipped_model` is the path of ``urdf/<name>.urdf``.  Errors are
:class:`ResourceError` and name what was tried.  No ROS import is needed (ament_index_python
is optional).
"""
import json
import os
import sys
from urllib.parse import unquote, urlparse

__all__ = ['PACKAGE', 'ResourceError', 'share_directory', 'resolve_uri', 'shipped_model',
           'package_installed']

PACKAGE = 'ros_vi'


class ResourceError(FileNotFoundError):
    """A resource (package, share folder, shipped model) that cannot be found."""


def _ament_share(package):
    """``(share directory or None, what was tried)`` from the ament index."""
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:
        return None, 'ament index: ament_index_python is not installed'
    try:
        return get_package_share_directory(package), None
    except (LookupError, ValueError, OSError) as err:    # PackageNotFoundError is a KeyError
        return None, ('ament index: package %r not found (AMENT_PREFIX_PATH=%r: %s)'
                      % (package, os.environ.get('AMENT_PREFIX_PATH', ''),
                         str(err).strip("'\"") or type(err).__name__))


def package_installed(package):
    """Whether the ament index (``AMENT_PREFIX_PATH``) has ``package``, e.g. ``'rviz2'``:
    what a launch file asks before starting a node that a ros-base install or a container
    does not have."""
    return _ament_share(package)[0] is not None


def _distributions():
    """Every installed distribution named ros_vi, in sys.path order (a project directory
    on sys.path contributes its in-tree egg-info metadata before the venv's dist-info)."""
    from importlib import metadata
    return [d for d in metadata.distributions(name=PACKAGE)]


def _is_share(folder):
    return os.path.isfile(os.path.join(folder, 'package.xml'))


def _installed_share(dist):
    """``(folder or None, what was tried)`` for the data files of a pip install."""
    tried = [os.path.join(sys.prefix, 'share', PACKAGE)]
    for entry in (dist.files or []) if dist is not None else []:
        parts = entry.parts
        if parts[-3:] == ('share', PACKAGE, 'package.xml'):
            tried.append(os.path.dirname(os.path.normpath(str(dist.locate_file(entry)))))
    for folder in tried:
        if _is_share(folder):
            return folder, None
    return None, 'installed data files: no package.xml in %s' % ', '.join(tried)


def _editable_project(dist):
    """``(folder or None, what was tried)`` for an editable install's project directory."""
    if dist is None:
        return None, 'editable install: no installed distribution %r' % PACKAGE
    text = dist.read_text('direct_url.json')
    if not text:
        # setuptools' in-tree metadata (<project>/ros_vi.egg-info): its folder is the project
        folder = os.path.abspath(str(dist.locate_file('')))
        if os.path.isdir(os.path.join(folder, PACKAGE + '.egg-info')) and _is_share(folder):
            return folder, None
        return None, 'editable install: distribution %r has no direct_url.json' % PACKAGE
    try:
        info = json.loads(text)
    except ValueError:
        return None, 'editable install: direct_url.json of %r is not JSON' % PACKAGE
    url = info.get('url', '')
    if not (info.get('dir_info') or {}).get('editable') or not url.startswith('file://'):
        return None, 'editable install: %r is not an editable install of a local directory' \
            % PACKAGE
    folder = unquote(urlparse(url).path)
    if _is_share(folder):
        return folder, None
    return None, 'editable install: no package.xml in the project directory %s' % folder


def share_directory():
    """Path of ros_vi's ``share`` folder (see the module doc for the order of the lookup).

    Raises :class:`ResourceError` listing every place tried.
    """
    tried = []
    folder, note = _ament_share(PACKAGE)
    if folder is not None:
        return folder
    tried.append(note)
    for lookup in (_installed_share, _editable_project):
        for dist in _distributions() or [None]:
            folder, note = lookup(dist)
            if folder is not None:
                return folder
            tried.append(note)
    raise ResourceError('cannot find the share folder of %s (tried: %s)'
                        % (PACKAGE, '; '.join(tried)))


def resolve_uri(uri):
    """Path of a ``package://pkg/rel``, ``file://path`` or plain path (str).

    ``package://ros_vi/...`` resolves through :func:`share_directory`, other packages
    through the ament index.  The path is not checked for existence.  Raises
    :class:`ResourceError` (message ``cannot resolve '<uri>': ...``).
    """
    uri = os.fspath(uri)
    if uri.startswith('file://'):
        return uri[len('file://'):]
    if not uri.startswith('package://'):
        return uri
    package, _, rel = uri[len('package://'):].partition('/')
    if not package or not rel:
        raise ResourceError('cannot resolve %r: expected package://<package>/<path>' % uri)
    if package == PACKAGE:
        try:
            return os.path.join(share_directory(), rel)
        except ResourceError as err:
            raise ResourceError('cannot resolve %r: %s' % (uri, err)) from None
    folder, note = _ament_share(package)
    if folder is None:
        raise ResourceError('cannot resolve %r: %s' % (uri, note))
    return os.path.join(folder, rel)


def shipped_model(name):
    """Path of the shipped model ``urdf/<name>.urdf`` (e.g. ``'acrobot'``).

    Raises :class:`ResourceError` naming the path tried and the models that are there.
    """
    folder = os.path.join(share_directory(), 'urdf')
    path = os.path.join(folder, name + '.urdf')
    if not os.path.isfile(path):
        try:
            there = sorted(f[:-5] for f in os.listdir(folder) if f.endswith('.urdf'))
        except OSError:
            there = []
        raise ResourceError('shipped model %r not found: no file %s (shipped models: %s)'
                            % (name, path, ', '.join(there) or 'none'))
    return path
