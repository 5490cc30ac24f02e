"""xacro -> URDF text (the one place that runs xacro), in a sandbox.

A ``.xacro`` file is refused before xacro sees it when it declares a DOCTYPE or entities
(xacro's parser would expand them).  xacro then runs in a child Python process
(``ros_vi/urdf/_xacro_sandbox.py``, whose docstring has the details) in which every file
open, directory listing and other audited operation goes through one audit hook: while xacro
runs, files may be read only under

* the model file's own directory tree,
* the root of a ROS package: ``<prefix>/share/<pkg>`` of a package in the ament index
  (``AMENT_PREFIX_PATH``, where ``$(find pkg)`` points; with ``colcon build
  --symlink-install`` also the directory its ``package.xml`` links to), or a package
  directory (holding ``package.xml``) under a ``ROS_PACKAGE_PATH`` entry,
* the directories the caller lists (``allowed_paths``),

checked on the real path (symlinks and ``..`` resolved).  Python modules (``.py``/``.pyc``
under ``sys.path``) stay importable.  The child may use :data:`MEMORY_LIMIT` bytes of
address space and :data:`TIMEOUT` seconds; beyond either it is stopped and the error says
which limit it hit.  Anything else -- another file (includes, ``load_yaml``,
``$(find ...)``, or a file object reached from a xacro expression through Python's object
graph), writing, processes, network -- is refused: :class:`URDFSecurityError` naming the
path, and no text is returned.  The text xacro produces is parsed by the hardened parser
like any URDF.
"""
import json
import os
import subprocess
import sys

from ..errors import shorten
from .errors import URDFError, URDFSecurityError
from .parse import MAX_DESCRIPTION_BYTES

__all__ = ['xacro_to_urdf']

#: seconds a xacro run may take before it is stopped
TIMEOUT = 120.0
#: bytes of address space the xacro child process may use
MEMORY_LIMIT = 1 << 30

_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '_xacro_sandbox.py')


def _refusal(filename, refused):
    """The message of a sandbox refusal (the first one, which the others follow from)."""
    path, real, what = refused[0]
    if path is None:
        where = what
    elif real and real != path:
        where = 'access to %r (resolves to %r): %s' % (path, real, what)
    else:
        where = 'access to %r: %s' % (path, what)
    more = '' if len(refused) == 1 else ' (and %d more)' % (len(refused) - 1)
    return ('xacro file %r: refused %s%s; while xacro runs, files may be read only under '
            "the model file's directory tree, the ROS packages (ament index, "
            'ROS_PACKAGE_PATH) and the allowed paths (allowed_paths, node parameter '
            'xacro_allowed_paths)' % (filename, where, more))


def xacro_to_urdf(filename, args=None, allowed_paths=()):
    """URDF XML text (str) of the ``.xacro`` file ``filename`` processed by xacro, in the
    sandbox of the module doc.

    ``args``: ``{name: value}`` for ``<xacro:arg>`` (values are passed as strings).
    ``allowed_paths``: directories (or files) xacro may read besides the model's directory
    tree and the ROS packages.
    Raises :class:`URDFError` (missing or unreadable file, a missing allowed path, xacro
    errors: the message has xacro's) or :class:`URDFSecurityError` (DOCTYPE/ENTITY
    declarations; any access outside the allowed directories: the message names the path).
    """
    filename = os.fspath(filename)
    if not os.path.isfile(filename):
        raise URDFError('xacro file %r: no such file' % filename)
    try:
        with open(filename, 'rb') as fh:
            raw = fh.read()
    except OSError as err:
        raise URDFError('xacro file %r: cannot read: %s' % (filename, err)) from None
    if b'<!DOCTYPE' in raw or b'<!ENTITY' in raw:
        raise URDFSecurityError('xacro file %r: DOCTYPE/ENTITY declarations are not '
                                'allowed (entity expansion and external entities are '
                                'refused)' % filename)
    if isinstance(allowed_paths, (str, bytes, os.PathLike)):
        allowed_paths = [allowed_paths]
    allowed = []
    for path in allowed_paths or ():
        path = os.fsdecode(os.fspath(path))
        if not path or not os.path.exists(path):
            raise URDFError('xacro file %r: allowed path %r: no such file or directory'
                            % (filename, path))
        allowed.append(os.path.abspath(path))
    request = {'file': os.path.abspath(filename),
               'args': {str(k): str(v) for k, v in (args or {}).items()},
               'allowed': allowed,
               'sys_path': [os.path.abspath(p) for p in sys.path if p],
               'memory': MEMORY_LIMIT}
    try:
        proc = subprocess.run([sys.executable, '-I', '-B', _WORKER],
                              input=json.dumps(request), capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise URDFError('xacro %r: stopped after %g s' % (filename, TIMEOUT)) from None
    except OSError as err:      # pragma: no cover - no interpreter to run
        raise URDFError('xacro %r: cannot run the xacro sandbox: %s' % (filename, err)
                        ) from None
    memory = 'xacro %r: exceeded the memory limit of %d MiB (MEMORY_LIMIT)' % (
        filename, MEMORY_LIMIT >> 20)
    try:
        answer = json.loads(proc.stdout)
    except ValueError:
        output = (proc.stderr.strip() or proc.stdout.strip())
        if 'MemoryError' in output or 'Cannot allocate memory' in output:
            raise URDFError(memory) from None
        if proc.returncode < 0:
            raise URDFError('xacro %r: killed by signal %d%s' % (
                filename, -proc.returncode, ' (SIGKILL: by the system, most likely out of '
                'memory)' if proc.returncode == -9 else '')) from None
        raise URDFError('xacro %r failed (exit code %s): %s' % (
            filename, proc.returncode, output[-2000:] or 'no output')) from None
    if len(answer.get('urdf', '')) > MAX_DESCRIPTION_BYTES:
        raise URDFError('xacro %r: produced %s characters of URDF, more than the %d MiB a '
                        'description may have (MAX_DESCRIPTION_BYTES)'
                        % (filename, format(len(answer['urdf']), ','),
                           MAX_DESCRIPTION_BYTES >> 20))
    if answer.get('refused'):
        raise URDFSecurityError(_refusal(filename, answer['refused']))
    if answer.get('memory'):
        raise URDFError(memory)
    if 'urdf' in answer:
        return answer['urdf']
    if answer.get('error', '').startswith('.xacro files need xacro'):
        raise ImportError(answer['error'])
    raise URDFError('xacro %r: %s' % (filename, shorten(answer.get('error') or 'failed',
                                                        limit=2000, quote=False)))
