"""Where ros_vi's compiled (numba) kernels are cached: in the user's cache folder, never
beside the installed source.

numba caches a ``cache=True`` kernel next to its module (``__pycache__``) when it can write
there.  An installed package's folder is not the place: it may be read-only, shared by
users, or replaced by the next ``colcon build``.  ros_vi's kernels are cached under
:func:`cache_root` instead: ``$ROS_VI_CACHE_DIR``, else ``$XDG_CACHE_HOME/ros_vi/numba``,
else ``~/.cache/ros_vi/numba``, one subfolder per source folder (so two installs do not mix).
``NUMBA_CACHE_DIR``, when set, still wins, as numba documents.

Importing ros_vi registers the locator that does this (:func:`register`).  It answers only
for files inside the ros_vi package: numba caches every other kernel in the process as it
always does.
"""
import glob
import os

from numba.core import caching

__all__ = ['cache_root', 'register', 'is_cached']

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def cache_root():
    """The folder ros_vi's kernels are cached in (see the module doc)."""
    explicit = os.environ.get('ROS_VI_CACHE_DIR')
    if explicit:
        return explicit
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'ros_vi', 'numba')


class PackageCacheLocator(caching.UserProvidedCacheLocator):
    """numba's cache locator for the kernels of ros_vi's own modules: the user-provided
    locator's layout, under :func:`cache_root`."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_root(), self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.abspath(py_file).startswith(_PACKAGE):
            return None
        # the mixin checks that the source exists and the folder can be written
        return super(caching.UserProvidedCacheLocator, cls).from_function(py_func, py_file)


def register():
    """Put :class:`PackageCacheLocator` right after numba's user-provided locator (once)."""
    classes = caching.CacheImpl._locator_classes
    if PackageCacheLocator not in classes:
        at = classes.index(caching.UserProvidedCacheLocator) + 1 \
            if caching.UserProvidedCacheLocator in classes else 0
        classes.insert(at, PackageCacheLocator)


def is_cached(module):
    """True when the kernels of ``module`` (a ros_vi module object) have been compiled into
    the cache before (its index files are there): a process that imports it starts warm."""
    path = os.path.abspath(module.__file__)
    folder = os.environ.get('NUMBA_CACHE_DIR') or cache_root()
    stem = os.path.splitext(os.path.basename(path))[0]
    cached = os.path.join(folder, caching._CacheLocator.get_suitable_cache_subpath(path))
    return bool(glob.glob(os.path.join(cached, stem + '.*.nbi')))
